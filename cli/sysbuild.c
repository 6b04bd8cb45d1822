/* cli/sysbuild.c - shared options and topo -> coll_system. */
#include "sysbuild.h"

#include <stdio.h>

/* Host-side cost of launching one GPU's NCCL kernel (cudaLaunchKernel plus
 * NCCL's enqueue), us. An estimate to be replaced by calibration
 * (calibrate/ measures kernel-launch latency); see docs/collectives.md. */
#define DEFAULT_LAUNCH_US 2.5

GOptionGroup *sys_opts_group(sys_opts *o)
{
    GOptionEntry e[] = {
        {"topo", 't', 0, G_OPTION_ARG_STRING, &o->topo, "shipped system name or topology file", "T"},
        {"nodes", 'N', 0, G_OPTION_ARG_INT, &o->nodes, "servers joined by the scale-out fabric [1]", "N"},
        {"gpus", 0, 0, G_OPTION_ARG_INT, &o->gpus, "use the first G GPUs of each server [all]", "G"},
        {"fabric", 0, 0, G_OPTION_ARG_STRING, &o->fabric, "scale-out fabric (ib-hdr, ib-ndr, ...)", "F"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->sets, "override a topology parameter (repeatable)", "KEY=VALUE"},
        {"launch-us", 0, 0, G_OPTION_ARG_DOUBLE, &o->launch_us, "host launch cost per GPU kernel, us [2.5]", "US"},
        {0},
    };
    o->launch_us = DEFAULT_LAUNCH_US;
    GOptionGroup *g = g_option_group_new("system", "System options", "Show system options", NULL, NULL);
    g_option_group_add_entries(g, e);
    return g;
}

topo *sys_opts_load(const sys_opts *o, GError **err)
{
    if (!o->topo) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, "--topo is required (see 'conveyor topo list')");
        return NULL;
    }
    if (o->nodes < 0 || o->nodes > 100000 || o->gpus < 0 || o->gpus > 1024) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, "--nodes must be in 1..100000 and --gpus in 1..1024");
        return NULL;
    }
    if (o->launch_us < 0 || o->launch_us > 1e6) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, "--launch-us must be in 0..1e6");
        return NULL;
    }
    topo_opts to = {.nodes = o->nodes, .gpus = o->gpus, .fabric = o->fabric, .sets = (const char *const *)o->sets};
    return topo_load(o->topo, &to, err);
}

void sys_opts_clear(sys_opts *o)
{
    g_free(o->topo);
    g_free(o->fabric);
    g_strfreev(o->sets);
}

static fab_node_id find_nvswitch(const fabric *f, fab_node_id gpu)
{
    const fab_link_id *out;
    uint32_t n;
    fabric_node_links(f, gpu, &out, &n);
    for (uint32_t i = 0; i < n; i++) {
        fab_node_id d = fabric_link_dst(f, out[i]);
        if (fabric_node(f, d)->kind == FAB_NVSWITCH)
            return d;
    }
    return FAB_NONE;
}

static double server_net_Bps(const fabric *f, int server)
{
    double sum = 0;
    for (fab_node_id i = 0; i < fabric_node_count(f); i++) {
        const fab_node_desc *d = fabric_node(f, i);
        if (d->kind != FAB_NIC || d->server != server)
            continue;
        const fab_link_id *out;
        uint32_t n;
        fabric_node_links(f, i, &out, &n);
        for (uint32_t k = 0; k < n; k++) {
            const fab_link_desc *l = fabric_link(f, out[k]);
            if (l->kind == LINK_NET)
                sum += l->bw_Bps * l->eff;
        }
    }
    return sum;
}

void sys_from_topo(coll_system *s, const topo *t, const sys_opts *o)
{
    *s = (coll_system){
        .fab = t->fab,
        .nranks = t->nranks,
        .nnodes = t->nodes,
        .ppn = t->gpus_per_node,
        .gpu = t->gpu_of_rank,
        .gpu_sm = t->gpu_sm,
        .hbm_Bps = t->gpu_hbm_Bps,
        .cpu_vendor = (int)t->cpu_vendor,
        .launch_us = o->launch_us,
        .gpus_per_thread = o->gpus_per_thread > 0 ? o->gpus_per_thread : 1,
    };
    for (int r = 0; t->nic_of_rank && r < t->nranks; r++)
        if (t->nic_of_rank[r] != FAB_NONE) /* each GPU leaves its server through its rail's NIC */
            fabric_gpu_set_nic(t->fab, t->gpu_of_rank[r], t->nic_of_rank[r]);
    s->nvswitch = t->nranks > 0 ? find_nvswitch(t->fab, t->gpu_of_rank[0]) : FAB_NONE;
    s->nvls = t->nvls && s->nvswitch != FAB_NONE && fabric_node(t->fab, s->nvswitch)->nvls;
    s->net_Bps = t->nodes > 1 ? server_net_Bps(t->fab, 0) : 0;
}

/* cli/cmd_topo.c - `conveyor topo`: list, show, dot and import topologies.
 *
 *   topo list                      shipped systems: name, GPUs per server, description
 *   topo show T [--nodes N] [--gpus G] [--fabric F] [--set k=v ...]
 *                                  nodes, links (GB/s, eff, latency), GPU-pair routes by kind
 *   topo dot T [same options]      Graphviz text
 *   topo import FILE [-o out]      NCCL_TOPO_DUMP_FILE XML or nvidia-smi topo -m -> topology JSON
 * Bad input exits 2 with "file:line:col: ..." on stderr.
 */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sysbuild.h"
#include "commands.h"
#include "topologies/topo.h"
#include "traces/tracefile.h"

static const char *const node_kind_name[FAB_NODE_KINDS] = {
    [FAB_GPU] = "gpu", [FAB_PCIE_SWITCH] = "pcie_switch", [FAB_CPU] = "cpu",
    [FAB_HOSTMEM] = "hostmem", [FAB_NVSWITCH] = "nvswitch", [FAB_NIC] = "nic",
    [FAB_NET_LEAF] = "leaf", [FAB_NET_SPINE] = "spine",
};
static const char *const link_kind_name[LINK_KINDS] = {
    [LINK_PCIE] = "pcie", [LINK_NVLINK] = "nvlink", [LINK_XSOCKET] = "xsocket",
    [LINK_MEM] = "mem", [LINK_NET] = "net", [LINK_SERVER] = "server",
};

enum { R_NVLINK, R_SWITCH, R_ROOT, R_XSOCKET, R_STAGED, R_NETWORK, R_KINDS };
static const char *const route_kind_name[R_KINDS] = {"nvlink", "pcie-switch", "root-complex",
                                                     "cross-socket", "staged", "network"};

static int route_kind(fabric *f, const fab_route *r)
{
    bool nv = false, root = false, xs = false;
    if (fabric_route_staged(f, r))
        return R_STAGED;
    for (uint32_t h = 0; h < r->nhops; h++) {
        const fab_link_desc *d = fabric_link(f, r->hop[h]);
        if (d->kind == LINK_NET)
            return R_NETWORK;
        nv |= d->kind == LINK_NVLINK;
        xs |= d->kind == LINK_XSOCKET;
        root |= d->kind != LINK_SERVER && fabric_node(f, fabric_link_dst(f, r->hop[h]))->kind == FAB_CPU;
    }
    return nv ? R_NVLINK : xs ? R_XSOCKET : root ? R_ROOT : R_SWITCH;
}

/* Count GPU pairs (a < b) by the kind of their route; limited to 512 GPUs. */
static int print_routes(topo *t)
{
    const GArray *g = fabric_gpus(t->fab);
    unsigned n = MIN(g->len, 512u), count[R_KINDS] = {0};
    double minbw[R_KINDS] = {0};
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++) {
            GError *e = NULL;
            const fab_route *r = fabric_route(t->fab, g_array_index(g, fab_node_id, i),
                                              g_array_index(g, fab_node_id, j), 0, &e);
            if (!r) {
                fprintf(stderr, "conveyor topo: %s\n", e->message);
                g_error_free(e);
                return EXIT_INTERNAL;
            }
            int k = route_kind(t->fab, r);
            double bw = fabric_route_bw(t->fab, r);
            minbw[k] = count[k]++ ? MIN(minbw[k], bw) : bw;
        }
    printf("routes (GPU pairs%s):\n", n < g->len ? ", first 512 GPUs" : "");
    for (int k = 0; k < R_KINDS; k++)
        if (count[k])
            printf("  %-13s %6u pairs, slowest %.1f GB/s\n", route_kind_name[k], count[k],
                   minbw[k] / 1e9);
    return EXIT_OK;
}

static void print_header(const topo *t)
{
    printf("%s: %s\n", t->name, t->description);
    printf("  %d node(s) x %d GPU(s) = %d ranks; GPU %s (sm%d, %.0f GB/s memory)\n", t->nodes,
           t->gpus_per_node, t->nranks, t->gpu_model, t->gpu_sm, t->gpu_hbm_Bps / 1e9);
    if (t->nvlink_links)
        printf("  NVLink: %d links x %.1f GB/s per direction, eff %.3f; NVSwitch %s, NVLS %s, "
               "domain of %d server(s)\n",
               t->nvlink_links, t->nvlink_link_Bps / 1e9, t->nvlink_eff, t->nvswitch ? "yes" : "no",
               t->nvls ? "yes" : "no", t->nvl_domain_nodes);
    if (t->calibration)
        printf("  calibration: %s\n", t->calibration);
    printf("  p2p %s; scale-out %s, %d NIC(s) x %.0f Gb/s per server", t->p2p ? "on" : "off",
           t->fabric_name ? t->fabric_name : "none", t->nics_per_node, t->nic_Bps * 8 / 1e9);
    if (t->nic_raw_Bps > t->nic_Bps) /* a NIC faster than the switch port trains down to it */
        printf(" (%.0f Gb/s NICs at the %s ports' rate)", t->nic_raw_Bps * 8 / 1e9, t->fabric_name);
    if (t->nic_devices > 1) /* what NCCL's tuner sees (nics.net_devices) */
        printf(", each %d network devices of %.0f Gb/s to NCCL", t->nic_devices, t->nic_Bps * 8 / 1e9 / t->nic_devices);
    printf("\n");
    GList *keys = g_list_sort(g_hash_table_get_keys(t->params), (GCompareFunc)strcmp);
    printf("  params:");
    for (GList *k = keys; k; k = k->next)
        printf(" %s=%s", (char *)k->data, (char *)g_hash_table_lookup(t->params, k->data));
    printf("%s\n", keys ? "" : " none");
    g_list_free(keys);
}

static void print_graph(const topo *t)
{
    const fabric *f = t->fab;
    printf("nodes (%u):\n", fabric_node_count(f));
    for (fab_node_id n = 0; n < fabric_node_count(f); n++) {
        const fab_node_desc *d = fabric_node(f, n);
        printf("  %-16s %-11s socket %2d  domain %2d%s", d->name, node_kind_name[d->kind], d->socket,
               d->domain, d->nvls ? "  nvls" : "");
        if (d->transit_Bps > 0)
            printf("  transit %.1f GB/s", d->transit_Bps / 1e9);
        printf("\n");
    }
    printf("links (full duplex; GB/s per direction, raw):\n");
    for (fab_link_id l = 0; l < fabric_link_count(f); l += 2) {
        const fab_link_desc *d = fabric_link(f, l);
        if (d->kind == LINK_SERVER || fabric_link_src(f, l) == fabric_link_dst(f, l))
            continue;
        printf("  %-16s -- %-16s %-7s x%-3d %7.1f GB/s  eff %.3f  lat %6.0f ns\n",
               fabric_node(f, fabric_link_src(f, l))->name, fabric_node(f, fabric_link_dst(f, l))->name,
               link_kind_name[d->kind], d->count, d->bw_Bps / 1e9, d->eff, d->lat_ps / 1e3);
    }
}

static int cmd_list(void)
{
    GError *e = NULL;
    GPtrArray *l = topo_list(&e);
    if (!l)
        return cli_fail(e);
    printf("%-26s %5s  %s\n", "name", "GPUs", "description");
    for (guint i = 0; i < l->len; i++) {
        const topo_entry *en = g_ptr_array_index(l, i);
        printf("%-26s %5d  %s\n", en->name, en->gpus, en->description);
    }
    g_ptr_array_unref(l);
    return EXIT_OK;
}

static int cmd_show_dot(const char *sub, int argc, char **argv)
{
    gint nodes = CLI_UNSET, gpus = CLI_UNSET;
    char *fabric = NULL;
    char **sets = NULL;
    GOptionEntry entries[] = {
        {"nodes", 'n', 0, G_OPTION_ARG_INT, &nodes, "servers to build [1]", "N"},
        {"gpus", 'g', 0, G_OPTION_ARG_INT, &gpus, "GPUs per server to use (the first G) [all]", "G"},
        {"fabric", 'f', 0, G_OPTION_ARG_STRING, &fabric, "scale-out fabric (topologies/fabrics/F.json)", "F"},
        {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "override a parameter (repeatable)", "KEY=VALUE"},
        {0},
    };
    char *summary = g_strdup_printf("TOPOLOGY - %s a topology", !strcmp(sub, "dot") ? "Graphviz text of" : "describe");
    GOptionContext *ctx = g_option_context_new(summary);
    g_free(summary);
    g_option_context_add_main_entries(ctx, entries, NULL);
    int rc = EXIT_BADINPUT;
    char *name = g_strdup_printf("topo %s", sub);
    if (!cli_parse(ctx, name, &argc, &argv))
        goto out;
    bool counts_bad = (nodes != CLI_UNSET && nodes < 1) || (gpus != CLI_UNSET && gpus < 1);
    nodes = nodes == CLI_UNSET ? 0 : nodes; /* 0: the topology's */
    gpus = gpus == CLI_UNSET ? 0 : gpus;
    if (argc != 2 || counts_bad) {
        fprintf(stderr, "conveyor topo %s: expected one topology name or file and --nodes/--gpus >= 1 "
                        "(see 'conveyor topo %s --help')\n", sub, sub);
        goto out;
    }
    GError *e = NULL;
    topo_opts o = {.nodes = nodes, .gpus = gpus, .fabric = fabric, .sets = (const char *const *)sets};
    topo *t = topo_load(argv[1], &o, &e);
    if (!t) {
        rc = cli_fail(e);
        goto out;
    }
    if (!strcmp(sub, "dot")) {
        char *d = topo_dot(t);
        fputs(d, stdout);
        g_free(d);
        rc = EXIT_OK;
    } else {
        /* NCCL_P2P_DISABLE / NCCL_P2P_LEVEL: the routes NCCL's commands would
         * take (collective, replay, ...), so the pairs they stage show here */
        coll_nccl_env env;
        if (!coll_nccl_env_read(&env, &e) || !sys_check_p2p_env(&env, t, &e)) {
            rc = cli_fail(e);
            topo_free(t);
            goto out;
        }
        coll_nccl_env_apply(&env, t->fab);
        print_header(t);
        if (env.p2p_set)
            printf("  NCCL P2P level %s (environment): GPU pairs beyond it go through host memory\n",
                   coll_p2p_level_name(env.p2p_level));
        print_graph(t);
        rc = print_routes(t);
        coll_system sys; /* a mesh: the NVLink rings the collectives run on (models/ring_search.h) */
        topo_coll_system(&sys, t, COLL_LAUNCH_US, 1);
        if (rc == EXIT_OK && sys.rings.n > 0) {
            printf("rings (NVLink mesh, NCCL's search): %d at %.1f GB/s each; channel c runs ring c mod %d\n",
                   sys.rings.n, sys.rings.speed_GBps, sys.rings.n);
            for (int r = 0; r < sys.rings.n; r++) {
                printf("  ring %d:", r);
                for (int i = 0; i < sys.rings.ppn; i++)
                    printf(" %d", sys.rings.order[r][i]);
                printf("\n");
            }
        }
    }
    topo_free(t);
out:
    g_free(name);
    g_free(fabric);
    g_strfreev(sets);
    g_option_context_free(ctx);
    return rc;
}

static int cmd_import(int argc, char **argv)
{
    char *out = NULL, *gpu = NULL, *cpu = NULL;
    double nic_gbps = -DBL_MAX; /* not given */
    int nvl_domain = CLI_UNSET;
    GOptionEntry entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "write the JSON here [stdout]", "FILE"},
        {"gpu", 0, 0, G_OPTION_ARG_STRING, &gpu,
         "the GPU kind (H100, H200, A100, B200, GB200, V100, L40S, RTX 4090, ...): neither file names it", "NAME"},
        {"nic-gbps", 0, 0, G_OPTION_ARG_DOUBLE, &nic_gbps,
         "NIC line rate, Gb/s [the dump's; for nvidia-smi output 400 Hopper+, 200 Ampere, 100 older]", "N"},
        {"cpu", 0, 0, G_OPTION_ARG_STRING, &cpu, "intel, amd or arm [the dump's; intel for nvidia-smi output]", "VENDOR"},
        {"nvl-domain", 0, 0, G_OPTION_ARG_INT, &nvl_domain,
         "servers sharing one NVLink domain through their NVSwitch (GB200 NVL72 trays: 18) [1]", "N"},
        {0},
    };
    GOptionContext *ctx = g_option_context_new(
        "FILE - convert an NCCL_TOPO_DUMP_FILE (XML) or `nvidia-smi topo -m` output to topology JSON");
    g_option_context_add_main_entries(ctx, entries, NULL);
    int rc = EXIT_BADINPUT;
    if (!cli_parse(ctx, "topo import", &argc, &argv))
        goto done;
    if (!cli_dash_output("topo import", (const char *[]){out}, 1))
        goto done;
    if (argc != 2) {
        fprintf(stderr, "conveyor topo import: expected one file (an NCCL XML dump or nvidia-smi topo -m output)\n");
        goto done;
    }
    if (nic_gbps != -DBL_MAX && !(nic_gbps >= 0.008 && nic_gbps <= TOPO_MAX_NIC_GBPS)) { /* (NaN: not given) */
        fprintf(stderr, "conveyor topo import: --nic-gbps %g: expected 0.008 .. %d Gb/s\n", nic_gbps,
                TOPO_MAX_NIC_GBPS);
        goto done;
    }
    nic_gbps = nic_gbps == -DBL_MAX ? 0 : nic_gbps; /* 0: assumed */
    if (cpu && strcmp(cpu, "intel") && strcmp(cpu, "amd") && strcmp(cpu, "arm")) {
        fprintf(stderr, "conveyor topo import: --cpu %s: expected intel, amd or arm\n", cpu);
        goto done;
    }
    GError *e = NULL;
    char *note = NULL;
    if (nvl_domain != CLI_UNSET && (nvl_domain < 1 || nvl_domain > TOPO_MAX_NVL_DOMAIN)) {
        fprintf(stderr, "conveyor topo import: --nvl-domain %d: expected 1..%d servers\n", nvl_domain,
                TOPO_MAX_NVL_DOMAIN);
        goto done;
    }
    nvl_domain = nvl_domain == CLI_UNSET ? 0 : nvl_domain; /* 0: from the dump */
    topo_import_opts o = {.gpu = gpu, .nic_gbps = nic_gbps, .cpu = cpu, .nvl_domain = nvl_domain};
    char *json = topo_import(argv[1], &o, &note, &e);
    if (!json) {
        rc = cli_fail(e);
        goto done;
    }
    if (note)
        fprintf(stderr, "%s\n", note);
    g_free(note);
    if (out) {
        if (!tracefile_set_contents(out, json, -1, &e)) {
            fprintf(stderr, "conveyor topo import: %s\n", e->message);
            g_error_free(e);
            rc = EXIT_BADINPUT; /* (the -o path) */
        } else {
            rc = EXIT_OK;
        }
    } else {
        printf("%s\n", json);
        rc = EXIT_OK;
    }
    g_free(json);
done:
    g_free(out);
    g_free(gpu);
    g_free(cpu);
    g_option_context_free(ctx);
    return rc;
}

int cmd_topo(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: conveyor topo list\n"
                "       conveyor topo show T [--nodes N] [--gpus G] [--fabric F] [--set k=v ...]\n"
                "       conveyor topo dot T [same options]\n"
                "       conveyor topo import FILE [--gpu NAME] [--nic-gbps N] [--cpu V] [--nvl-domain N] [-o OUT.json]\n"
                "         FILE: an NCCL_TOPO_DUMP_FILE (XML) or the output of `nvidia-smi topo -m`\n");
        return argc < 2 ? EXIT_BADINPUT : EXIT_OK;
    }
    if (!strcmp(argv[1], "list"))
        return argc == 2 ? cmd_list() : (fprintf(stderr, "conveyor topo list: no arguments\n"), EXIT_BADINPUT);
    if (!strcmp(argv[1], "show") || !strcmp(argv[1], "dot"))
        return cmd_show_dot(argv[1], argc - 1, argv + 1);
    if (!strcmp(argv[1], "import"))
        return cmd_import(argc - 1, argv + 1);
    fprintf(stderr, "conveyor topo: unknown subcommand '%s' (list, show, dot, import)\n", argv[1]);
    return EXIT_BADINPUT;
}

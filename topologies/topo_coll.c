/* topologies/topo_coll.c - a loaded topology as the collective layer sees it
 * (coll_system): ranks, their GPUs and rail NICs, the NVLS switch, the
 * servers' NIC bandwidth. */
#include "topo.h"

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

/* NIC bandwidth (payload) the ranks of server 0 can use: the distinct NICs
 * they are bound to (a server's unused NICs do not count), or all of the
 * server's NICs when no binding is known. */
static double server_net_Bps(const topo *t)
{
    const fabric *f = t->fab;
    double sum = 0;
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (fab_node_id i = 0; i < fabric_node_count(f); i++) {
        const fab_node_desc *d = fabric_node(f, i);
        if (d->kind != FAB_NIC || d->server != 0)
            continue;
        bool used = !t->nic_of_rank;
        for (int r = 0; !used && r < t->gpus_per_node && r < t->nranks; r++)
            used = t->nic_of_rank[r] == i;
        if (!used || g_hash_table_contains(seen, GUINT_TO_POINTER(i + 1)))
            continue;
        g_hash_table_add(seen, GUINT_TO_POINTER(i + 1));
        const fab_link_id *out;
        uint32_t n;
        fabric_node_links(f, i, &out, &n);
        for (uint32_t k = 0; k < n; k++) {
            const fab_link_desc *l = fabric_link(f, out[k]);
            if (l->kind == LINK_NET)
                sum += l->bw_Bps * l->eff;
        }
    }
    g_hash_table_destroy(seen);
    return sum;
}

/* Whether channels cross servers on rails the topology names: several
 * servers, each its own NVLink domain (ppn its GPUs, not a multi-node NVLink
 * domain's), every rank's NIC known. */
static bool rails_known(const coll_system *s, const topo *t)
{
    return s->nnodes >= 2 && t->nic_of_rank && s->ppn == t->gpus_per_node && s->ppn <= COLL_RING_MAX_PPN;
}

/* NCCL's ring search across servers (search.cc): a ring enters a server
 * through a NIC, to the GPU beside it, and must leave through the same NIC
 * (crossNic 0, tried before crossing NICs), so it ends at a GPU that
 * reaches that NIC through PCIe switches (or relays through PXN when none
 * does). A ring entering at local e runs up to e-1 or down to e+1,
 * whichever of the two is beside e's NIC (up when both or neither). */
static void ring_directions(coll_system *s, const topo *t)
{
    if (!rails_known(s, t) || s->rings.n > 0)
        return;
    for (int e = 0; e < s->ppn; e++) {
        fab_node_id nic = t->nic_of_rank[e];
        if (nic == FAB_NONE)
            continue;
        int up = (e + s->ppn - 1) % s->ppn, down = (e + 1) % s->ppn;
        s->ring_down[e] =
            !fabric_nic_beside(t->fab, t->gpu_of_rank[up], nic) && fabric_nic_beside(t->fab, t->gpu_of_rank[down], nic);
    }
}

/* NCCL's search gives channel c the NIC c mod (the server's NICs) (search.cc
 * tries nets[(nChannels + i) % netCount] first), enters the server at a GPU
 * beside it and leaves from one beside it too where the GPUs' links allow
 * (crossNic 0). ring_entry: the entry GPU for c mod ppn, the NICs in the
 * order of the GPUs that use them and, under a NIC shared by several GPUs,
 * those GPUs in turn; mesh_entry: on an NVLink mesh (s->rings), where in
 * ring i to enter for NIC k, a place whose ring predecessor (the last GPU
 * the ring visits) is beside that NIC if ring i has one. */
static void ring_entries(coll_system *s, const topo *t)
{
    if (!rails_known(s, t))
        return;
    fab_node_id nics[COLL_RING_MAX_PPN];
    int nn = 0, of[COLL_RING_MAX_PPN]; /* local GPU -> its NIC's index */
    for (int e = 0; e < s->ppn; e++) {
        fab_node_id nic = t->nic_of_rank[e];
        of[e] = -1;
        if (nic == FAB_NONE)
            continue;
        int k = 0;
        while (k < nn && nics[k] != nic)
            k++;
        if (k == nn)
            nics[nn++] = nic;
        of[e] = k;
    }
    if (nn == 0)
        return;
    for (int c = 0; c < s->ppn; c++) {
        int k = c % nn, j = (c / nn), n = 0, e = 0;
        for (int g = 0; g < s->ppn; g++)
            n += of[g] == k;
        j %= n;
        for (int g = 0; g < s->ppn; g++)
            if (of[g] == k && j-- == 0)
                e = g;
        s->ring_entry[c] = (uint8_t)e;
    }
    for (int i = 0; i < s->rings.n; i++)
        for (int k = 0; k < COLL_RING_MAX_PPN; k++) {
            s->mesh_entry[i][k] = 0xff;
            if (k >= nn)
                continue;
            const uint8_t *o = s->rings.order[i];
            for (int p = 0; p < s->ppn; p++) {
                fab_node_id last = t->gpu_of_rank[o[(p + s->ppn - 1) % s->ppn]];
                if (of[o[p]] != k)
                    continue;
                if (fabric_nic_beside(t->fab, last, nics[k])) {
                    s->mesh_entry[i][k] = (uint8_t)p;
                    break;
                }
                if (s->mesh_entry[i][k] == 0xff)
                    s->mesh_entry[i][k] = (uint8_t)p;
            }
        }
    s->ring_nics = nn;
}

void topo_coll_system(coll_system *s, const topo *t, double launch_us, int gpus_per_thread)
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
        .launch_us = launch_us,
        .launch_ch_us = COLL_LAUNCH_CH_US,
        .gpus_per_thread = gpus_per_thread > 0 ? gpus_per_thread : 1,
    };
    for (int r = 0; t->nic_of_rank && r < t->nranks; r++)
        if (t->nic_of_rank[r] != FAB_NONE) /* each GPU leaves its server through its rail's NIC */
            fabric_gpu_set_nic(t->fab, t->gpu_of_rank[r], t->nic_of_rank[r]);
    /* NCCL treats an NVLink domain spanning trays (multi-node NVLink, e.g.
     * GB200 NVL72) as one node: NVLS and intra-node rings cover it all */
    if (t->nvl_domain_nodes > 1) {
        int d = t->nvl_domain_nodes < t->nodes ? t->nvl_domain_nodes : t->nodes;
        s->nnodes = (t->nodes + d - 1) / d;
        s->ppn = t->gpus_per_node * d;
    }
    s->nvswitch = t->nranks > 0 ? find_nvswitch(t->fab, t->gpu_of_rank[0]) : FAB_NONE;
    s->nvls = t->nvls && s->nvswitch != FAB_NONE && fabric_node(t->fab, s->nvswitch)->nvls;
    s->net_Bps = t->nodes > 1 ? server_net_Bps(t) : 0;
    s->net_dev_Bps = t->nodes > 1 && t->nic_devices > 0 ? t->nic_Bps / t->nic_devices : 0;
    s->sharp = t->sharp && s->nnodes > 1;
    if (t->nranks >= s->ppn) /* the first server's GPUs (servers are alike) */
        coll_ring_search(t->fab, t->gpu_of_rank, s->ppn, &s->rings);
    ring_directions(s, t);
    ring_entries(s, t);
}

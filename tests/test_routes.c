/* Routing on the shipped systems: the path each kind of GPU pair takes
 * (same PCIe switch, through the root complex, across sockets, staged
 * through host memory without P2P, NVLink vs PCIe fallback, NVSwitch, rail
 * alignment across nodes, multi-node NVLink), table-driven; and the cached
 * fast path against a recomputation without caches, hop by hop. */
#include <string.h>

#include "testutil.h"
#include "topologies/topo.h"

typedef struct {
    const char *topo;
    int nodes;
    const char *sets[3];
    int src, dst;            /* ranks */
    const char *want;        /* node kinds passed, in order, excluding the endpoints */
    bool staged;
    bool has_xsocket;
    bool p2p;                /* fabric_route_p2p (NCCL's send/receive, PXN) */
} route_case;

static const char kind_letter[FAB_NODE_KINDS] = {
    [FAB_GPU] = 'G', [FAB_PCIE_SWITCH] = 'S', [FAB_CPU] = 'C', [FAB_HOSTMEM] = 'M',
    [FAB_NVSWITCH] = 'V', [FAB_NIC] = 'N', [FAB_NET_LEAF] = 'L', [FAB_NET_SPINE] = 'P',
};

/* Kinds of the intermediate nodes of r ("SCS"), servers skipped. */
static void path_kinds(const fabric *f, const fab_route *r, char *out, size_t n)
{
    size_t k = 0;
    for (uint32_t i = 0; i + 1 < r->nhops && k + 1 < n; i++) {
        fab_node_id d = fabric_link_dst(f, r->hop[i]);
        if (d == FAB_NONE)
            continue;
        out[k++] = kind_letter[fabric_node(f, d)->kind];
    }
    out[k] = 0;
}

static const route_case cases[] = {
    /* PCIe: same switch, root ports, sockets, staging */
    {"pcie-gen3-2gpu", 1, {"p2p=on"}, 0, 1, "S", false, false, false},
    {"pcie-gen3-2gpu", 1, {NULL}, 0, 1, "SCMCS", true, false, false},
    {"pcie-gen4-4gpu", 1, {"p2p=on"}, 0, 3, "C", false, false, false},
    {"pcie-gen4-8gpu-2socket", 1, {"p2p=on"}, 0, 1, "C", false, false, false},
    {"pcie-gen4-8gpu-2socket", 1, {"p2p=on"}, 0, 4, "CC", false, true, false},
    {"pcie-gen4-8gpu-2socket", 1, {"p2p=on", "p2p_xsocket=off"}, 0, 4, "CMCC", true, true, false},
    /* DGX-1: NVLink where wired, PCIe/QPI fallback otherwise (staged: no cross-socket P2P) */
    {"dgx1-v100", 1, {NULL}, 0, 3, "", false, false, false},
    {"dgx1-v100", 1, {NULL}, 0, 5, "SCMCCS", true, true, false},
    /* NVSwitch */
    {"dgx-h100", 1, {NULL}, 0, 5, "V", false, false, false},
    {"dgx-a100", 1, {NULL}, 2, 7, "V", false, false, false},
    /* across nodes: same rail stays on its leaf, another rail crosses a spine */
    {"dgx-h100", 2, {NULL}, 3, 11, "SNLNS", false, false, false},
    {"dgx-h100", 2, {NULL}, 3, 12, "SNLPLNS", false, false, false},
    /* GB200: two trays of one NVL72 rack share the NVSwitch: no network */
    {"gb200-nvl72", 2, {NULL}, 0, 5, "V", false, false, false},
    /* send/receive (PXN): to another rail through the local GPU on that rail
     * over NVLink and its NIC, no spine (ring hops between servers too); the same rail, or inside a server,
     * as any route; pxn=off as any route */
    {"dgx-h100", 2, {NULL}, 3, 12, "VGSNLNS", false, false, true},
    /* a GPU under that NIC's own PCIe switch (GPU 5 beside GPU 4's NIC)
     * sends through it directly: NCCL relays only where the GPU's own path
     * to the NIC is worse than PXB */
    {"dgx-h100", 2, {NULL}, 5, 12, "SNLNS", false, false, true},
    {"dgx-a100", 2, {NULL}, 0, 9, "SNLNS", false, false, true},
    {"dgx-h100", 2, {"pxn=off"}, 3, 12, "SNLPLNS", false, false, true},
    {"dgx-h100", 2, {NULL}, 3, 11, "SNLNS", false, false, true},
    {"dgx-h100", 1, {NULL}, 0, 5, "V", false, false, true},
    {"gb200-nvl72", 2, {NULL}, 0, 5, "V", false, false, true},
};

static void test_routes_shipped_systems(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const route_case *c = &cases[i];
        GError *err = NULL;
        topo *t = topo_load(c->topo, &(topo_opts){.nodes = c->nodes, .sets = c->sets[0] ? c->sets : NULL}, &err);
        CU_ASSERT_PTR_NOT_NULL(t);
        if (!t) {
            fprintf(stderr, "case %zu: %s\n", i, err ? err->message : "?");
            g_clear_error(&err);
            continue;
        }
        coll_system sys; /* binds GPUs to their rail NICs as the CLI does */
        topo_coll_system(&sys, t, 0, 1);
        const fab_route *r = (c->p2p ? fabric_route_p2p : fabric_route)(t->fab, t->gpu_of_rank[c->src],
                                                                        t->gpu_of_rank[c->dst], 0, &err);
        CU_ASSERT_PTR_NOT_NULL(r);
        if (r) {
            char kinds[32];
            path_kinds(t->fab, r, kinds, sizeof kinds);
            bool xs = false;
            for (uint32_t h = 0; h < r->nhops; h++)
                xs |= fabric_link(t->fab, r->hop[h])->kind == LINK_XSOCKET;
            if (strcmp(kinds, c->want) || fabric_route_staged(t->fab, r) != c->staged || xs != c->has_xsocket)
                fprintf(stderr, "case %zu (%s %d->%d): path %s staged %d xsocket %d\n", i, c->topo, c->src, c->dst,
                        kinds, fabric_route_staged(t->fab, r), xs);
            CU_ASSERT_STRING_EQUAL(kinds, c->want);
            CU_ASSERT_EQUAL(fabric_route_staged(t->fab, r), c->staged);
            CU_ASSERT_EQUAL(xs, c->has_xsocket);
        }
        g_clear_error(&err);
        topo_free(t);
    }
}

static void test_routes_nvlink_pairs_use_nvlink(void)
{
    GError *err = NULL;
    topo *t = topo_load("dgx1-v100", &(topo_opts){0}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* every pair with an NVLink bundle routes over it in one hop */
    int direct = 0;
    for (int a = 0; a < t->nranks; a++)
        for (int b = 0; b < t->nranks; b++) {
            if (a == b)
                continue;
            const fab_route *r = fabric_route(t->fab, t->gpu_of_rank[a], t->gpu_of_rank[b], 0, NULL);
            CU_ASSERT_PTR_NOT_NULL_FATAL(r);
            bool nv = r->nhops == 1 && fabric_link(t->fab, r->hop[0])->kind == LINK_NVLINK;
            direct += nv;
        }
    /* measured file 11: each GPU reaches 4 peers over NVLink (two with 2 links,
     * two with 1: 6 links), the other 3 over PCIe/QPI */
    CU_ASSERT_EQUAL(direct, 8 * 4);
    topo_free(t);
}

/* NCCL_P2P_LEVEL (fabric_set_p2p_level): a pair whose NCCL path type is
 * beyond the level is staged through host memory. 8x RTX 4090 on two
 * sockets with P2P (one GPU per root port): GPU 0-1 is PHB, GPU 0-4 SYS;
 * DGX H100: every pair NVL, staged only at LOC (NCCL_P2P_DISABLE=1). */
static bool staged(topo *t, int a, int b)
{
    const fab_route *r = fabric_route(t->fab, t->gpu_of_rank[a], t->gpu_of_rank[b], 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    return fabric_route_staged(t->fab, r);
}

static void test_routes_p2p_level(void)
{
    GError *err = NULL;
    const char *const on[] = {"p2p=on", NULL};
    topo *t = topo_load("pcie-gen4-8gpu-2socket", &(topo_opts){.sets = on}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_FALSE(staged(t, 0, 1));
    CU_ASSERT_FALSE(staged(t, 0, 4)); /* the topology's policy: P2P across sockets (AMD) */
    const struct {
        int level;
        bool s01, s04;
    } want[] = {{FAB_PATH_SYS, false, false}, {FAB_PATH_PHB, false, true}, {FAB_PATH_PXB, true, true},
                {FAB_PATH_NVL, true, true},   {FAB_PATH_LOC, true, true}};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        fabric_set_p2p_level(t->fab, want[i].level);
        CU_ASSERT_EQUAL(staged(t, 0, 1), want[i].s01);
        CU_ASSERT_EQUAL(staged(t, 0, 4), want[i].s04);
    }
    fabric_set_p2p(t->fab, false); /* no hardware P2P: no level brings it back */
    fabric_set_p2p_level(t->fab, FAB_PATH_SYS);
    CU_ASSERT_TRUE(staged(t, 0, 1));
    topo_free(t);
    t = topo_load("dgx-h100", &(topo_opts){0}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    fabric_set_p2p_level(t->fab, FAB_PATH_NVL);
    CU_ASSERT_FALSE(staged(t, 0, 7));
    fabric_set_p2p_level(t->fab, FAB_PATH_LOC);
    CU_ASSERT_TRUE(staged(t, 0, 7));
    topo_free(t);
    /* DGX-1: GPUs 0 and 5 share no NVLink and sit on different sockets, where
     * the machine has no P2P (p2p_xsocket off, measured file 11): SYS does
     * not bring it back */
    t = topo_load("dgx1-v100", &(topo_opts){0}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(staged(t, 0, 5));
    fabric_set_p2p_level(t->fab, FAB_PATH_SYS);
    CU_ASSERT_TRUE(staged(t, 0, 5));
    CU_ASSERT_FALSE(staged(t, 0, 1)); /* an NVLink pair */
    topo_free(t);
}

/* A system (--nodes, --set), its GPUs bound to their rail NICs as the CLI
 * does when bind; fails the test when it does not load. */
static topo *load_bound(const char *name, int nodes, const char *const *sets, bool bind)
{
    GError *err = NULL;
    topo *t = topo_load(name, &(topo_opts){.nodes = nodes, .sets = sets}, &err);
    if (!t)
        fprintf(stderr, "%s --nodes %d: %s\n", name, nodes, err ? err->message : "?");
    g_clear_error(&err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    if (bind) {
        coll_system sys;
        topo_coll_system(&sys, t, 0, 1);
    }
    return t;
}

/* fabric_route (cached legs, spine lists, arena) against fabric_route_uncached
 * (the plain searches, no cache) for random (src, dst, flow) triples over GPUs
 * and NICs, hop by hop; each triple is asked twice (the second time from the
 * route cache). bind: GPUs bound to their rail NICs as the CLI does, else
 * the nearest NIC. */
static void check_cached_equals_uncached(const char *name, int nodes, const char *const *sets, bool bind, int n)
{
    topo *t = load_bound(name, nodes, sets, bind);
    fabric *f = t->fab;
    GArray *ends = g_array_new(FALSE, FALSE, sizeof(fab_node_id));
    for (fab_node_id i = 0; i < fabric_node_count(f); i++)
        if (fabric_node(f, i)->kind == FAB_GPU || fabric_node(f, i)->kind == FAB_NIC)
            g_array_append_val(ends, i);
    GRand *rng = g_rand_new_with_seed(20240611);
    int bad = 0, crossed = 0;
    for (int k = 0; k < 2 * n; k++) {
        if (k == n)
            g_rand_set_seed(rng, 20240611); /* the same triples again, from the cache */
        fab_node_id a = g_array_index(ends, fab_node_id, g_rand_int_range(rng, 0, (gint32)ends->len));
        fab_node_id b = g_array_index(ends, fab_node_id, g_rand_int_range(rng, 0, (gint32)ends->len));
        uint32_t flow = g_rand_boolean(rng) ? (uint32_t)g_rand_int_range(rng, 0, 64) : g_rand_int(rng);
        const fab_route *r = fabric_route(f, a, b, flow, NULL);
        fab_route *want = fabric_route_uncached(f, a, b, flow);
        bool same = (r == NULL) == (want == NULL);
        if (same && r) {
            same = r->nhops == want->nhops;
            for (uint32_t h = 0; same && h < r->nhops; h++)
                same = r->hop[h] == want->hop[h];
            for (uint32_t h = 0; h < r->nhops; h++)
                crossed += k < n && fabric_link(f, r->hop[h])->kind == LINK_NET;
        }
        if (!same && bad++ < 5)
            fprintf(stderr, "%s: route %s -> %s flow %u: %u hops, uncached %u\n", name, fabric_node(f, a)->name,
                    fabric_node(f, b)->name, flow, r ? r->nhops : 0, want ? want->nhops : 0);
        g_free(want);
    }
    CU_ASSERT_EQUAL(bad, 0);
    if (t->fabric_name && nodes > 1)
        CU_ASSERT(crossed > 0); /* the network part was exercised */
    g_rand_free(rng);
    g_array_free(ends, TRUE);
    topo_free(t);
}

static void test_routes_cached_equal_uncached(void)
{
    static const char *const p2p_on[] = {"p2p=on", NULL};
    static const char *const no_xsocket[] = {"p2p=on", "p2p_xsocket=off", NULL};
    check_cached_equals_uncached("dgx-h100", 4, NULL, true, 4000);
    check_cached_equals_uncached("dgx-h100", 4, NULL, false, 2000);
    check_cached_equals_uncached("dgx1-v100", 2, NULL, true, 2000);
    check_cached_equals_uncached("dgx1-v100", 2, NULL, false, 1000);
    check_cached_equals_uncached("pcie-gen4-8gpu-2socket", 1, NULL, true, 1000);
    check_cached_equals_uncached("pcie-gen4-8gpu-2socket", 1, p2p_on, true, 1000);
    check_cached_equals_uncached("pcie-gen4-8gpu-2socket", 1, no_xsocket, false, 1000);
    check_cached_equals_uncached("pcie-gen3-2gpu", 1, NULL, false, 200);
    check_cached_equals_uncached("gb200-nvl72", 36, NULL, true, 4000);
}

/* fabric_route_p2p (PXN routes spliced from cached parts) against
 * fabric_route_p2p_uncached (the whole path by the plain searches) for every
 * ordered GPU pair and a few flows, asked twice (the second time from the
 * route cache). Counts the PXN routes that took a spine. */
static void check_p2p_equals_uncached(const char *name, int nodes, const char *const *sets, bool bind, int flows,
                                      int *spined)
{
    topo *t = load_bound(name, nodes, sets, bind);
    fabric *f = t->fab;
    const GArray *gpus = fabric_gpus(f);
    int bad = 0;
    *spined = 0;
    for (int pass = 0; pass < 2; pass++)
        for (guint i = 0; i < gpus->len; i++)
            for (guint j = 0; j < gpus->len; j++)
                for (uint32_t flow = i; flow < i + (uint32_t)flows * 977; flow += 977) {
                    fab_node_id a = g_array_index(gpus, fab_node_id, i), b = g_array_index(gpus, fab_node_id, j);
                    const fab_route *r = fabric_route_p2p(f, a, b, flow, NULL);
                    fab_route *want = fabric_route_p2p_uncached(f, a, b, flow);
                    bool same = (r == NULL) == (want == NULL), nvl = false, spine = false;
                    for (uint32_t h = 0; same && r && h < r->nhops; h++) {
                        same = h < want->nhops && r->hop[h] == want->hop[h];
                        nvl |= fabric_link(f, r->hop[h])->kind == LINK_NVLINK;
                        fab_node_id d = fabric_link_dst(f, r->hop[h]);
                        spine |= d != FAB_NONE && fabric_node(f, d)->kind == FAB_NET_SPINE;
                    }
                    same = same && (!r || r->nhops == want->nhops);
                    *spined += pass == 0 && same && r && nvl && spine;
                    if (!same && bad++ < 5)
                        fprintf(stderr, "%s: p2p route %s -> %s flow %u: %u hops, uncached %u\n", name,
                                fabric_node(f, a)->name, fabric_node(f, b)->name, flow, r ? r->nhops : 0,
                                want ? want->nhops : 0);
                    g_free(want);
                }
    CU_ASSERT_EQUAL(bad, 0);
    topo_free(t);
}

static void test_routes_p2p_equal_uncached(void)
{
    static const char *const pcie_nic[] = {"p2p=on", NULL};
    int spined;
    check_p2p_equals_uncached("dgx-h100", 34, NULL, true, 1, &spined); /* 32 servers per rail leaf */
    CU_ASSERT(spined > 0); /* PXN routes over NVLink and a spine were compared */
    check_p2p_equals_uncached("dgx-h100", 3, NULL, false, 3, &spined);
    check_p2p_equals_uncached("aws-p5", 2, NULL, true, 3, &spined);
    check_p2p_equals_uncached("dgx1-v100", 2, NULL, true, 3, &spined);
    check_p2p_equals_uncached("pcie-gen5-8gpu-2socket", 2, pcie_nic, true, 3, &spined);
}

int main(void)
{
    static const test_case tc[] = {
        {"/routes/shipped-systems", test_routes_shipped_systems},
        {"/routes/dgx1-nvlink-pairs", test_routes_nvlink_pairs_use_nvlink},
        {"/routes/p2p-level", test_routes_p2p_level},
        {"/routes/cached-equal-uncached", test_routes_cached_equal_uncached},
        {"/routes/p2p-equal-uncached", test_routes_p2p_equal_uncached},
        {0},
    };
    return test_main("routes", tc);
}

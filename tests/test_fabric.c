/* Tests of models/fabric: closed forms on idle paths, fair sharing of a
 * contended link, conservation of bytes, utilisation <= 100%, routing rules
 * (NVLink before PCIe, staging without P2P, cross-socket, ECMP). */
#include <math.h>

#include "models/fabric.h"
#include "testutil.h"

static fab_node_id add(fabric *f, fab_node_kind k, const char *name, int server, int socket)
{
    fab_node_desc d = {.kind = k, .name = name, .server = server, .local = 0, .socket = socket, .domain = -1};
    return fabric_node_add(f, &d);
}

static fab_link_desc lk(fab_link_kind k, double GBps, double eff, double lat_ns)
{
    return (fab_link_desc){.kind = k, .bw_Bps = GBps * 1e9, .eff = eff, .lat_ps = (int64_t)(lat_ns * 1000), .count = 1};
}

/* gpu0, gpu1 under sw0 (socket 0); gpu2 under sw1 (socket 1); cpu0-cpu1 xsocket;
 * hostmem per socket; gpu0-gpu1 also NVLink. */
typedef struct {
    fabric *f;
    fab_node_id g[3], sw[2], cpu[2], mem[2];
} box;

static box make_box(void)
{
    box b;
    b.f = fabric_new();
    b.cpu[0] = add(b.f, FAB_CPU, "cpu0", 0, 0);
    b.cpu[1] = add(b.f, FAB_CPU, "cpu1", 0, 1);
    b.mem[0] = add(b.f, FAB_HOSTMEM, "mem0", 0, 0);
    b.mem[1] = add(b.f, FAB_HOSTMEM, "mem1", 0, 1);
    b.sw[0] = add(b.f, FAB_PCIE_SWITCH, "sw0", 0, 0);
    b.sw[1] = add(b.f, FAB_PCIE_SWITCH, "sw1", 0, 1);
    b.g[0] = add(b.f, FAB_GPU, "gpu0", 0, 0);
    b.g[1] = add(b.f, FAB_GPU, "gpu1", 0, 0);
    b.g[2] = add(b.f, FAB_GPU, "gpu2", 0, 1);
    fab_link_desc pcie = lk(LINK_PCIE, 16, 0.875, 100);
    fabric_link_add(b.f, b.g[0], b.sw[0], &pcie);
    fabric_link_add(b.f, b.g[1], b.sw[0], &pcie);
    fabric_link_add(b.f, b.g[2], b.sw[1], &pcie);
    fabric_link_add(b.f, b.sw[0], b.cpu[0], &pcie);
    fabric_link_add(b.f, b.sw[1], b.cpu[1], &pcie);
    fab_link_desc x = lk(LINK_XSOCKET, 20, 1, 200), m = lk(LINK_MEM, 50, 1, 80), nv = lk(LINK_NVLINK, 50, 0.8, 50);
    fabric_link_add(b.f, b.cpu[0], b.cpu[1], &x);
    fabric_link_add(b.f, b.cpu[0], b.mem[0], &m);
    fabric_link_add(b.f, b.cpu[1], b.mem[1], &m);
    fabric_link_add(b.f, b.g[0], b.g[1], &nv);
    return b;
}

static void on_done(sim_engine *e, void *ctx, uint64_t arg)
{
    ((sim_time *)ctx)[arg] = sim_engine_now(e);
}

static void test_fabric_idle_path_closed_form(void)
{
    /* a 2-hop PCIe path (gpu0 -> sw0 -> ... no: use gpu2 -> sw1 -> cpu1) */
    box b = make_box();
    const fab_route *r = fabric_route(b.f, b.g[2], b.cpu[1], 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->nhops, 2);
    sim_engine *e = sim_engine_new(1);
    fabric_attach(b.f, e);
    sim_time t[1] = {0};
    uint64_t S = 64 << 20, c = 1 << 20;
    fabric_transfer_start(b.f, r, FAB_NONE, S, c, 0, 0, on_done, t, 0);
    sim_engine_run(e);
    /* pipelined store-and-forward: (S + c*(hops-1)) / (bw*eff) + sum(lat) */
    double bw = 16e9 * 0.875;
    double want = ((double)S + (double)c) / bw * 1e12 + 2 * 100e3;
    ASSERT_REL(t[0], want, 1e-6);
    sim_engine_free(e);
    fabric_free(b.f);
}

static void test_fabric_two_transfers_share_link_fairly(void)
{
    /* gpu0->cpu0 and gpu1->cpu0 share sw0->cpu0: chunks stored and
     * forwarded (256 KiB, 4 in flight), then cut-through pieces (1 MiB, 2) */
    for (int cut = 0; cut < 2; cut++) {
        box b = make_box();
        const fab_route *r0 = fabric_route(b.f, b.g[0], b.cpu[0], 0, NULL);
        const fab_route *r1 = fabric_route(b.f, b.g[1], b.cpu[0], 0, NULL);
        sim_engine *e = sim_engine_new(1);
        fabric_attach(b.f, e);
        sim_time t[2] = {0, 0};
        uint64_t S = 32 << 20;
        for (int i = 0; i < 2; i++) {
            const fab_route *r = i ? r1 : r0;
            if (cut)
                fabric_transfer_start_cut(b.f, r, S, 1 << 20, 2, 0, on_done, t, (uint64_t)i);
            else
                fabric_transfer_start(b.f, r, FAB_NONE, S, 256 << 10, 4, 0, on_done, t, (uint64_t)i);
        }
        sim_engine_run(e);
        double alone = (double)S / (16e9 * 0.875) * 1e12;
        /* each got half the shared link: both finish near 2x the solo time */
        ASSERT_REL(t[0], 2 * alone, cut ? 0.04 : 0.02);
        ASSERT_REL(t[1], 2 * alone, 0.02);
        /* conservation and utilisation on every link */
        uint64_t in, out;
        fabric_totals(b.f, &in, &out);
        CU_ASSERT_EQUAL(in, 2 * S);
        CU_ASSERT_EQUAL(out, 2 * S);
        sim_time end = sim_engine_now(e);
        for (fab_link_id l = 0; l < fabric_link_count(b.f); l++)
            CU_ASSERT(fabric_link_stats(b.f, l)->busy_ps <= end);
        for (uint32_t i = 0; i < r0->nhops; i++)
            CU_ASSERT(fabric_link_stats(b.f, r0->hop[i])->bytes >= S);
        CU_ASSERT_EQUAL(fabric_link_stats(b.f, r0->hop[r0->nhops - 1])->bytes, 2 * S);
        sim_engine_free(e);
        fabric_free(b.f);
    }
}

static bool route_has(fabric *f, const fab_route *r, fab_link_kind k)
{
    for (uint32_t i = 0; i < r->nhops; i++)
        if (fabric_link(f, r->hop[i])->kind == k)
            return true;
    return false;
}

static void test_fabric_route_prefers_nvlink_then_stages_without_p2p(void)
{
    box b = make_box();
    const fab_route *r = fabric_route(b.f, b.g[0], b.g[1], 0, NULL);
    CU_ASSERT_EQUAL(r->nhops, 1);
    CU_ASSERT(route_has(b.f, r, LINK_NVLINK));
    /* cross-socket with P2P: over the inter-socket link, not through memory */
    r = fabric_route(b.f, b.g[0], b.g[2], 0, NULL);
    CU_ASSERT(route_has(b.f, r, LINK_XSOCKET));
    CU_ASSERT_FALSE(fabric_route_staged(b.f, r));
    fabric_free(b.f);

    b = make_box();
    fabric_set_p2p(b.f, false);
    r = fabric_route(b.f, b.g[0], b.g[1], 0, NULL); /* NVLink still works */
    CU_ASSERT_EQUAL(r->nhops, 1);
    r = fabric_route(b.f, b.g[0], b.g[2], 0, NULL);
    CU_ASSERT(fabric_route_staged(b.f, r));
    /* staged through the source socket's memory: gpu0 sw0 cpu0 mem0 cpu0 cpu1 sw1 gpu2 */
    CU_ASSERT_EQUAL(fabric_link_dst(b.f, r->hop[2]), b.mem[0]);
    CU_ASSERT_EQUAL(r->nhops, 7);
    fabric_free(b.f);

    b = make_box();
    fabric_set_p2p_xsocket(b.f, false);
    r = fabric_route(b.f, b.g[0], b.g[2], 0, NULL);
    CU_ASSERT(fabric_route_staged(b.f, r));
    fabric_free(b.f);
}

static void test_fabric_unreachable_is_an_error(void)
{
    fabric *f = fabric_new();
    fab_node_id a = add(f, FAB_GPU, "a", 0, 0), c = add(f, FAB_GPU, "c", 0, 0);
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(fabric_route(f, a, c, 0, &err));
    CU_ASSERT(err && err->code == FABRIC_ERROR_UNREACHABLE);
    g_clear_error(&err);
    fabric_free(f);
}

/* 2 servers x (gpu - sw - nic), leaves leaf0/leaf1, spines sp[0..1] with
 * leaf-spine links of spine_GBps. */
static fabric *two_servers(double spine_GBps, fab_node_id g[2], fab_node_id leaf[2], fab_node_id sp[2])
{
    fabric *f = fabric_new();
    fab_node_id nic[2];
    fab_link_desc pcie = lk(LINK_PCIE, 32, 0.9, 100), net = lk(LINK_NET, 50, 0.96, 500);
    fab_link_desc up = lk(LINK_NET, spine_GBps, 0.96, 500);
    for (int s = 0; s < 2; s++) {
        char nm[32];
        g_snprintf(nm, sizeof nm, "n%d.gpu0", s);
        g[s] = add(f, FAB_GPU, nm, s, 0);
        g_snprintf(nm, sizeof nm, "n%d.sw", s);
        fab_node_id sw = add(f, FAB_PCIE_SWITCH, nm, s, 0);
        g_snprintf(nm, sizeof nm, "n%d.nic0", s);
        nic[s] = add(f, FAB_NIC, nm, s, 0);
        fabric_link_add(f, g[s], sw, &pcie);
        fabric_link_add(f, sw, nic[s], &pcie);
        g_snprintf(nm, sizeof nm, "leaf%d", s);
        leaf[s] = add(f, FAB_NET_LEAF, nm, -1, -1);
        fabric_link_add(f, nic[s], leaf[s], &net);
    }
    for (int s = 0; s < 2; s++) {
        char nm[32];
        g_snprintf(nm, sizeof nm, "spine%d", s);
        sp[s] = add(f, FAB_NET_SPINE, nm, -1, -1);
        fabric_link_add(f, leaf[0], sp[s], &up);
        fabric_link_add(f, leaf[1], sp[s], &up);
    }
    return f;
}

static void test_fabric_cross_server_rail_and_ecmp(void)
{
    fab_node_id g[2], leaf[2], sp[2];
    fabric *f = two_servers(50, g, leaf, sp);
    const fab_route *r = fabric_route(f, g[0], g[1], 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->nhops, 8); /* gpu sw nic leaf spine leaf nic sw gpu */
    CU_ASSERT_EQUAL(fabric_link_dst(f, r->hop[2]), leaf[0]);
    /* ECMP: different flows spread over both spines, deterministically */
    int used[2] = {0, 0};
    for (uint32_t flow = 0; flow < 16; flow++) {
        const fab_route *x = fabric_route(f, g[0], g[1], flow, NULL);
        fab_node_id s = fabric_link_dst(f, x->hop[3]);
        used[s == sp[1]]++;
        CU_ASSERT_PTR_EQUAL(x, fabric_route(f, g[0], g[1], flow, NULL));
    }
    CU_ASSERT(used[0] > 0 && used[1] > 0);
    fabric_free(f);
}

/* A NIC's endpoint limits apply where a route passes it (a NIC is never the
 * end of a route between GPUs): tx where the route leaves for the network,
 * rx where it comes in; the same with the GPUs' rails bound (the route from
 * PXN's cached parts) and without (the nearest NIC). */
static void test_fabric_nic_limits_cap_traffic_through_it(void)
{
    for (int bound = 0; bound < 2; bound++) {
        fab_node_id g[2], leaf[2], sp[2], nic[2];
        fabric *f = two_servers(50, g, leaf, sp);
        for (fab_node_id n = 0; n < fabric_node_count(f); n++)
            if (fabric_node(f, n)->kind == FAB_NIC)
                nic[fabric_node(f, n)->server] = n;
        fabric_node_set_endpoint(f, nic[0], 10e9, 0);
        fabric_node_set_endpoint(f, nic[1], 0, 4e9);
        if (bound) {
            fabric_gpu_set_nic(f, g[0], nic[0]);
            fabric_gpu_set_nic(f, g[1], nic[1]);
        }
        /* gpu sw nic [n0.nic0.tx] leaf spine leaf nic [n1.nic0.rx] sw gpu */
        const fab_route *r = fabric_route(f, g[0], g[1], 0, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL_FATAL(r->nhops, 10);
        CU_ASSERT_STRING_EQUAL(fabric_link_name(f, r->hop[2]), "n0.nic0.tx");
        CU_ASSERT_STRING_EQUAL(fabric_link_name(f, r->hop[7]), "n1.nic0.rx");
        ASSERT_REL(fabric_route_bw(f, r), 4e9, 1e-12);
        /* the other way neither NIC is limited: PCIe's 32 x 0.9 GB/s */
        const fab_route *back = fabric_route(f, g[1], g[0], 0, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(back);
        CU_ASSERT_EQUAL(back->nhops, 8);
        ASSERT_REL(fabric_route_bw(f, back), 32e9 * 0.9, 1e-12);
        /* pipelined store and forward on an idle path: the bytes at the
         * receiving NIC's 4 GB/s, one chunk at every other hop, the latencies */
        uint64_t S = 64 << 20, c = 1 << 20;
        double want = (double)S / 4e9 * 1e12 - (double)c / 4e9 * 1e12;
        for (uint32_t h = 0; h < r->nhops; h++) {
            const fab_link_desc *d = fabric_link(f, r->hop[h]);
            want += (double)c / (d->bw_Bps * d->eff) * 1e12 + (double)d->lat_ps;
        }
        sim_engine *e = sim_engine_new(1);
        fabric_attach(f, e);
        sim_time t[1] = {0};
        fabric_transfer_start(f, r, FAB_NONE, S, c, 0, 0, on_done, t, 0);
        sim_engine_run(e);
        ASSERT_REL(t[0], want, 1e-6);
        sim_engine_free(e);
        fabric_free(f);
    }
}

static void test_fabric_private_server_caps_rate(void)
{
    box b = make_box();
    fab_link_id cap = fabric_server_add(b.f, "chan", 5e9, 0);
    const fab_route *r = fabric_route(b.f, b.g[0], b.g[1], 0, NULL);
    sim_engine *e = sim_engine_new(1);
    fabric_attach(b.f, e);
    sim_time t[1];
    uint64_t S = 16 << 20, c = 64 << 10;
    fabric_transfer_start(b.f, r, cap, S, c, 8, 0, on_done, t, 0);
    sim_engine_run(e);
    ASSERT_REL(t[0], (double)S / 5e9 * 1e12, 0.01); /* the 5 GB/s cap, not NVLink's 40 */
    sim_engine_free(e);
    fabric_free(b.f);
}

static void test_fabric_paced_equals_private_server(void)
{
    /* pacing a transfer at R is the same as a private FIFO server of rate R in front */
    sim_time t[2];
    uint64_t S = 16 << 20, c = 64 << 10;
    for (int paced = 0; paced < 2; paced++) {
        box b = make_box();
        fab_link_id cap = paced ? FAB_NONE : fabric_server_add(b.f, "chan", 5e9, 0);
        const fab_route *r = fabric_route(b.f, b.g[0], b.g[2], 0, NULL);
        sim_engine *e = sim_engine_new(1);
        fabric_attach(b.f, e);
        fab_pacer pacer = {.Bps = 5e9}; /* must outlive the transfer */
        if (paced)
            fabric_transfer_start_paced(b.f, r, &pacer, S, c, 8, 0, on_done, t, 1);
        else
            fabric_transfer_start(b.f, r, cap, S, c, 8, 0, on_done, t, 0);
        sim_engine_run(e);
        sim_engine_free(e);
        fabric_free(b.f);
    }
    ASSERT_REL(t[1], t[0], 1e-6);
    ASSERT_REL(t[1], (double)S / 5e9 * 1e12, 0.02);
}

static void test_fabric_adaptive_routing_avoids_ecmp_collision(void)
{
    /* two flows whose ECMP hash picks the same spine; spines are the
     * bottleneck (10 GB/s each way per spine, NICs 48) */
    sim_time t[2][2];
    for (int adaptive = 0; adaptive < 2; adaptive++) {
        fab_node_id g[2], leaf[2], sp[2];
        fabric *f = two_servers(10, g, leaf, sp);
        fabric_set_adaptive(f, adaptive);
        uint32_t a = 0, b = 1;
        fab_node_id s0 = fabric_link_dst(f, fabric_route(f, g[0], g[1], a, NULL)->hop[3]);
        while (fabric_link_dst(f, fabric_route(f, g[0], g[1], b, NULL)->hop[3]) != s0)
            b++;
        sim_engine *e = sim_engine_new(1);
        fabric_attach(f, e);
        uint64_t S = 64 << 20, c = 256 << 10;
        fabric_transfer_start(f, fabric_route(f, g[0], g[1], a, NULL), FAB_NONE, S, c, 8, 0, on_done, t[adaptive], 0);
        fabric_transfer_start(f, fabric_route(f, g[0], g[1], b, NULL), FAB_NONE, S, c, 8, 0, on_done, t[adaptive], 1);
        sim_engine_run(e);
        uint64_t in, out;
        fabric_totals(f, &in, &out);
        CU_ASSERT_EQUAL(in, out);
        sim_engine_free(e);
        fabric_free(f);
    }
    double spine = 10e9 * 0.96, S = 64 << 20;
    /* ECMP: both flows share one spine: 2S over it */
    ASSERT_REL(t[0][1], 2 * S / spine * 1e12, 0.03);
    /* adaptive: the leaf spreads chunks over both spines: about S over each */
    ASSERT_REL(t[1][1], S / spine * 1e12, 0.05);
}

/* gpu0 -> sw0 -> cpu0 -> cpu1: PCIe 14 GB/s, PCIe 14 GB/s, cross-socket 20 GB/s */
static const fab_route *three_hops(box *b)
{
    const fab_route *r = fabric_route(b->f, b->g[0], b->cpu[1], 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL_FATAL(r->nhops, 3);
    return r;
}

static void test_fabric_cut_through_closed_form(void)
{
    /* cut-through pieces alone on a path: the path's latency plus the bytes
     * at the bottleneck, however they are cut (no per-hop store and forward) */
    double bw = 16e9 * 0.875, lat = (100 + 100 + 200) * 1e3;
    uint64_t sizes[2][2] = {{4 << 20, 4 << 20}, {64 << 20, 4 << 20}}; /* bytes, piece */
    for (int i = 0; i < 2; i++) {
        box b = make_box();
        const fab_route *r = three_hops(&b);
        sim_engine *e = sim_engine_new(1);
        fabric_attach(b.f, e);
        sim_time t[1] = {0};
        uint64_t S = sizes[i][0];
        fabric_transfer_start_cut(b.f, r, S, sizes[i][1], 2, 0, on_done, t, 0);
        sim_engine_run(e);
        ASSERT_REL(t[0], (double)S / bw * 1e12 + lat, 1e-6);
        /* busy time is serialisation at each link's own rate, not occupancy */
        ASSERT_REL(fabric_link_stats(b.f, r->hop[2])->busy_ps, (double)S / 20e9 * 1e12, 1e-6);
        for (uint32_t h = 0; h < r->nhops; h++)
            CU_ASSERT_EQUAL(fabric_link_stats(b.f, r->hop[h])->bytes, S);
        sim_engine_free(e);
        fabric_free(b.f);
    }
    /* store and forward of the same 4 MiB piece waits for it at every hop */
    box b = make_box();
    const fab_route *r = three_hops(&b);
    sim_engine *e = sim_engine_new(1);
    fabric_attach(b.f, e);
    sim_time t[1] = {0};
    uint64_t S = 4 << 20;
    fabric_transfer_start(b.f, r, FAB_NONE, S, S, 2, 0, on_done, t, 0);
    sim_engine_run(e);
    ASSERT_REL(t[0], ((double)S / bw * 2 + (double)S / 20e9) * 1e12 + lat, 1e-6);
    sim_engine_free(e);
    fabric_free(b.f);
}

int main(void)
{
    static const test_case cases[] = {
        {"/fabric/idle-path/closed-form", test_fabric_idle_path_closed_form},
        {"/fabric/contention/two-share-a-link-fairly", test_fabric_two_transfers_share_link_fairly},
        {"/fabric/route/nvlink-then-staging", test_fabric_route_prefers_nvlink_then_stages_without_p2p},
        {"/fabric/route/unreachable-is-error", test_fabric_unreachable_is_an_error},
        {"/fabric/route/cross-server-rail-ecmp", test_fabric_cross_server_rail_and_ecmp},
        {"/fabric/route/adaptive-avoids-ecmp-collision", test_fabric_adaptive_routing_avoids_ecmp_collision},
        {"/fabric/server/caps-rate", test_fabric_private_server_caps_rate},
        {"/fabric/server/nic-limits-through-it", test_fabric_nic_limits_cap_traffic_through_it},
        {"/fabric/pacing/equals-private-server", test_fabric_paced_equals_private_server},
        {"/fabric/cut-through/closed-form", test_fabric_cut_through_closed_form},
        {0},
    };
    return test_main("fabric", cases);
}

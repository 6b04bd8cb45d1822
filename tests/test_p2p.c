/* Tests of models/p2psim (conveyor p2p): simulated p2pBandwidthLatencyTest on
 * a hand-built fabric. tests link only libconveyor.a (no cli/ objects), so
 * the core is compiled in here. */
#include <math.h>

#include "models/p2psim.h"
#include "traces/p2pmatrix.h"
#include "testutil.h"

static fab_node_id add(fabric *f, fab_node_kind k, const char *name, int socket)
{
    fab_node_desc d = {.kind = k, .name = name, .server = 0, .local = 0, .socket = socket, .domain = -1};
    return fabric_node_add(f, &d);
}

static fab_link_desc lk(fab_link_kind k, double GBps, double eff, double lat_ns)
{
    return (fab_link_desc){.kind = k, .bw_Bps = GBps * 1e9, .eff = eff, .lat_ps = (int64_t)(lat_ns * 1000), .count = 1};
}

/* gpu0, gpu1 under sw0; NVLink gpu0-gpu1; gpu2 under sw1; one socket; host
 * memory link 10 GB/s (the staging bottleneck). */
typedef struct {
    fabric *f;
    fab_node_id g[3];
} box;

static box make_box(double mem_GBps)
{
    box b;
    b.f = fabric_new();
    fab_node_id cpu = add(b.f, FAB_CPU, "cpu0", 0), mem = add(b.f, FAB_HOSTMEM, "mem0", 0);
    fab_node_id sw0 = add(b.f, FAB_PCIE_SWITCH, "sw0", 0), sw1 = add(b.f, FAB_PCIE_SWITCH, "sw1", 0);
    b.g[0] = add(b.f, FAB_GPU, "gpu0", 0);
    b.g[1] = add(b.f, FAB_GPU, "gpu1", 0);
    b.g[2] = add(b.f, FAB_GPU, "gpu2", 0);
    fab_link_desc pcie = lk(LINK_PCIE, 16, 0.875, 100), m = lk(LINK_MEM, mem_GBps, 1, 80);
    fab_link_desc nv = lk(LINK_NVLINK, 50, 0.8, 50);
    fabric_link_add(b.f, b.g[0], sw0, &pcie);
    fabric_link_add(b.f, b.g[1], sw0, &pcie);
    fabric_link_add(b.f, b.g[2], sw1, &pcie);
    fabric_link_add(b.f, sw0, cpu, &pcie);
    fabric_link_add(b.f, sw1, cpu, &pcie);
    fabric_link_add(b.f, cpu, mem, &m);
    fabric_link_add(b.f, b.g[0], b.g[1], &nv);
    return b;
}

static void test_p2p_uni_equals_bottleneck(void)
{
    box b = make_box(50);
    p2psim_params p;
    p2psim_defaults(&p);
    for (int k = 1; k <= 2; k++) {
        const fab_route *r = fabric_route(b.f, b.g[0], b.g[k], 0, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        double want = fabric_route_bw(b.f, r) / 1e9;
        ASSERT_REL(p2psim_uni_GBps(b.f, b.g[0], b.g[k], &p, NULL), want, 0.02);
    }
    fabric_free(b.f);
}

static void test_p2p_bidir_twice_uni(void)
{
    box b = make_box(50);
    p2psim_params p;
    p2psim_defaults(&p);
    /* NVLink and the PCIe path are full duplex: directions share no link */
    for (int k = 1; k <= 2; k++) {
        double uni = p2psim_uni_GBps(b.f, b.g[0], b.g[k], &p, NULL);
        ASSERT_REL(p2psim_bi_GBps(b.f, b.g[0], b.g[k], &p, NULL), 2 * uni, 0.02);
    }
    fabric_free(b.f);
}

static void test_p2p_staged_slower_and_mem_limited(void)
{
    box on = make_box(10), off = make_box(10);
    fabric_set_p2p(off.f, false);
    p2psim_params p;
    p2psim_defaults(&p);
    double direct = p2psim_uni_GBps(on.f, on.g[0], on.g[2], &p, NULL);
    double staged = p2psim_uni_GBps(off.f, off.g[0], off.g[2], &p, NULL);
    CU_ASSERT(staged < direct);
    /* two serial legs per staging chunk, each through the 10 GB/s host
     * memory: at most 1 / (1/10 + 1/10) = 5 GB/s, less only by the legs'
     * pipeline fill and latencies */
    CU_ASSERT(staged <= 10.0 / 2 * 1.001);
    CU_ASSERT(staged >= 10.0 / 2 * 0.85);
    /* both directions at once: the copies move in step, so their legs meet
     * on the half-duplex memory and the sum stays at one copy's rate */
    ASSERT_REL(p2psim_bi_GBps(off.f, off.g[0], off.g[2], &p, NULL), staged, 0.05);
    /* forced staging (P2P=Disabled) also stages the NVLink pair */
    p.force_staged = true;
    CU_ASSERT(p2psim_uni_GBps(on.f, on.g[0], on.g[1], &p, NULL) <= 10.0 / 2 * 1.001);
    /* staged latency pays two copy overheads */
    CU_ASSERT(p2psim_lat_us(off.f, off.g[0], off.g[2], &p, NULL) > 2 * P2PSIM_COPY_OVERHEAD_US);
    fabric_free(on.f);
    fabric_free(off.f);
}

/* The shape of measured file 22 (two GPUs under one switch, host memory not
 * the limit): a staged copy's legs cross the switch uplink up, then down,
 * one after the other: 1 / (2 / 14) = 7 GB/s one way. Two opposite copies
 * move in step, so both write up the uplink together and read down it
 * together: each leg at half the link, the two copies together 7 GB/s, not
 * twice that (file 22: 5.7 one way, 6.1 both ways). */
static void test_p2p_staged_opposite_copies_in_step(void)
{
    box b = make_box(1000);
    p2psim_params p;
    p2psim_defaults(&p);
    p.force_staged = true;
    double uni = p2psim_uni_GBps(b.f, b.g[0], b.g[1], &p, NULL);
    CU_ASSERT(uni <= 14.0 / 2 * 1.001);
    CU_ASSERT(uni >= 14.0 / 2 * 0.85);
    ASSERT_REL(p2psim_bi_GBps(b.f, b.g[0], b.g[1], &p, NULL), uni, 0.05);
    fabric_free(b.f);
}

static void test_p2p_fill_matrices(void)
{
    box b = make_box(10);
    p2psim_params p;
    p2psim_defaults(&p);
    p2pmatrix_set *s = p2pmatrix_new(3);
    CU_ASSERT_TRUE(p2psim_fill(b.f, b.g, 3, 900e9, true, &p, p2pmatrix_ensure(s, P2PMATRIX_UNI_BW_ENABLED),
                               p2pmatrix_ensure(s, P2PMATRIX_BI_BW_ENABLED),
                               p2pmatrix_ensure(s, P2PMATRIX_LAT_GPU_ENABLED),
                               p2pmatrix_ensure(s, P2PMATRIX_CONNECTIVITY), NULL));
    /* the diagonal: a local copy's HBM traffic (read and write, as the sample counts it) */
    CU_ASSERT_DOUBLE_EQUAL(p2pmatrix_get(s, P2PMATRIX_UNI_BW_ENABLED, 1, 1), 900 * COMPUTE_COPY_HBM_EFF, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(p2pmatrix_get(s, P2PMATRIX_CONNECTIVITY, 0, 2), 1.0, 1e-9);
    CU_ASSERT(p2pmatrix_get(s, P2PMATRIX_UNI_BW_ENABLED, 0, 1) > p2pmatrix_get(s, P2PMATRIX_UNI_BW_ENABLED, 0, 2));
    CU_ASSERT_DOUBLE_EQUAL(p2pmatrix_get(s, P2PMATRIX_BI_BW_ENABLED, 0, 2),
                           p2pmatrix_get(s, P2PMATRIX_BI_BW_ENABLED, 2, 0), 1e-9);
    CU_ASSERT_TRUE(p2psim_fill(b.f, b.g, 3, 900e9, false, &p, p2pmatrix_ensure(s, P2PMATRIX_UNI_BW_DISABLED),
                               p2pmatrix_ensure(s, P2PMATRIX_BI_BW_DISABLED),
                               p2pmatrix_ensure(s, P2PMATRIX_LAT_GPU_DISABLED), NULL, NULL));
    CU_ASSERT(p2pmatrix_get(s, P2PMATRIX_UNI_BW_DISABLED, 0, 1) < p2pmatrix_get(s, P2PMATRIX_UNI_BW_ENABLED, 0, 1));
    CU_ASSERT(p2pmatrix_get(s, P2PMATRIX_LAT_GPU_DISABLED, 0, 1) > p2pmatrix_get(s, P2PMATRIX_LAT_GPU_ENABLED, 0, 1));
    p2pmatrix_free(s);
    fabric_free(b.f);
}

int main(void)
{
    static const test_case cases[] = {
        {"uni bandwidth = route bottleneck bw x eff", test_p2p_uni_equals_bottleneck},
        {"bidirectional = 2 x unidirectional on full-duplex links", test_p2p_bidir_twice_uni},
        {"staged copy slower, limited by host memory", test_p2p_staged_slower_and_mem_limited},
        {"staged copies: serial legs, opposite copies in step", test_p2p_staged_opposite_copies_in_step},
        {"fill: diagonal, connectivity, symmetry", test_p2p_fill_matrices},
        {0},
    };
    return test_main("p2p", cases);
}

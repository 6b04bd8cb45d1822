/* Tests of models/coll: closed forms on an idle uniform ring, conservation,
 * NVLS against Ring by the physical factor, the tuner's choices on 8x H100
 * (NCCL: LL below ~1 MB, NVLS above), NCCL_ALGO parsing. */
#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/coll.h"
#include "models/compute.h"
#include "testutil.h"
#include "topologies/topo.h"
#include "traces/timeline.h"

enum { N = 4 };
#define BW 100e9

/* N GPUs on one NVLS switch, NVLink 100 GB/s, eff 1, no wire latency. */
static coll_system star(fabric **fo, fab_node_id *gpus)
{
    fabric *f = fabric_new();
    fab_node_desc sw = {.kind = FAB_NVSWITCH, .name = "sw", .server = 0, .socket = -1, .domain = 0, .nvls = true};
    fab_node_id s = fabric_node_add(f, &sw);
    for (int i = 0; i < N; i++) {
        char nm[16];
        g_snprintf(nm, sizeof nm, "gpu%d", i);
        fab_node_desc g = {.kind = FAB_GPU, .name = nm, .server = 0, .local = i, .socket = 0, .domain = 0};
        gpus[i] = fabric_node_add(f, &g);
        fab_link_desc l = {.kind = LINK_NVLINK, .bw_Bps = BW, .eff = 1, .lat_ps = 0, .count = 4};
        fabric_link_add(f, gpus[i], s, &l);
    }
    *fo = f;
    return (coll_system){.fab = f, .nranks = N, .nnodes = 1, .ppn = N, .gpu = gpus, .gpu_sm = 90,
                         .hbm_Bps = 3e12, .nvls = true, .nvswitch = s, .launch_us = 0, .gpus_per_thread = 1};
}

static double run(const coll_system *sys, coll_kind k, coll_algo_id a, uint64_t bytes, int nch)
{
    coll_request req = {.kind = k, .bytes = bytes, .algo = a, .proto = PROTO_SIMPLE, .nchannels = nch};
    coll_result res;
    GError *err = NULL;
    bool ok = coll_run(sys, &req, &res, &err);
    CU_ASSERT_TRUE(ok);
    if (!ok) {
        fprintf(stderr, "%s\n", err->message);
        g_error_free(err);
        return 0;
    }
    return res.time_us;
}

/* A shipped system built with o, as a collective system with no launch cost. */
static topo *shipped(const char *name, topo_opts o, coll_system *sys)
{
    GError *err = NULL;
    topo *t = topo_load(name, &o, &err);
    if (!t)
        fprintf(stderr, "%s: %s\n", name, err->message);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    topo_coll_system(sys, t, 0, 1);
    return t;
}

/* req on sys as simulated by default (folded rings, cut-through pieces) and
 * with sys->exact (every rank, every chunk stored and forwarded). */
static void run_fast_and_exact(coll_system *sys, const coll_request *req, coll_result *fast, coll_result *exact)
{
    GError *err = NULL;
    sys->exact = false;
    CU_ASSERT_TRUE_FATAL(coll_run(sys, req, fast, &err));
    sys->exact = true;
    CU_ASSERT_TRUE_FATAL(coll_run(sys, req, exact, &err));
}

/* One channel, one chunk per step (S/N = 1 MiB <= 2 MiB), two slices a step,
 * each copied at beta (the link or one thread block's copy rate: on a 100
 * GB/s link the block binds, 38.7 GB/s on Hopper, 24 on Ampere) after NCCL's
 * per-step latency alpha (NVLink Simple ring, 3.4 us). Where the block
 * writes to its peer (Hopper), alpha is the receiver's: the block copies
 * its second slice while the first one's flag travels, so a step takes
 * max(2c, c + alpha) and the last one's alpha shows once. Where it reads
 * (sm 8.0 over NVLink: it asks, then waits) every slice pays alpha first:
 * 2(n-1) steps of 2 (alpha + c). */
static void test_coll_ring_allreduce_matches_alpha_beta(void)
{
    fabric *f;
    fab_node_id g[N];
    coll_system sys = star(&f, g);
    uint64_t S = 4 << 20;
    double alpha = 3.4, steps = 2 * (N - 1), base = 8.4;
    for (int sm = 90; sm >= 80; sm -= 10) {
        sys.gpu_sm = sm;
        double t = run(&sys, COLL_ALL_REDUCE, ALGO_RING, S, 1);
        double beta = fmin(BW, coll_block_simple_GBps(sm) * 1e9);
        double c = (double)S / N / 2 / beta * 1e6;
        double ideal = sm == 90 ? base + steps * fmax(2 * c, c + alpha) + alpha : base + steps * 2 * (alpha + c);
        /* chunking effect: each slice is store-and-forwarded over 2 hops in quarters */
        double fill = steps * 2 * ((double)S / N / 2 / BW * 1e6) / 4;
        CU_ASSERT(t >= ideal * 0.999);
        CU_ASSERT(t <= (ideal + fill) * 1.001);
    }
    fabric_free(f);
}

/* Broadcast and Reduce as NCCL runs them: a chain along the ring, one 512 KiB
 * step per chunk and per slice (BROADCAST_/REDUCE_CHUNKSTEPS and SLICESTEPS
 * 1), each slice forwarded once all of it has arrived. One channel, k = 8
 * slices, slice copy c at beta. Writing (Hopper): the first slice crosses
 * the N-1 hops at c + alpha each, the rest follow one per c: base + (N-1)
 * (c + alpha) + (k-1) c. Reading (sm 8.0): every slice pays alpha first:
 * base + (N-1+k-1)(alpha + c). */
static void test_coll_ring_chain_closed_form(void)
{
    fabric *f;
    fab_node_id g[N];
    coll_system sys = star(&f, g);
    const int k = 8;
    uint64_t S = (uint64_t)k << 19;
    double alpha = 3.4, base = 8.4;
    for (coll_kind kind = COLL_BROADCAST; kind <= COLL_REDUCE; kind++)
        for (int sm = 90; sm >= 80; sm -= 10) {
            sys.gpu_sm = sm;
            double t = run(&sys, kind, ALGO_RING, S, 1);
            double beta = fmin(BW, coll_block_simple_GBps(sm) * 1e9);
            double c = 524288.0 / beta * 1e6;
            double ideal = sm == 90 ? base + (N - 1) * (c + alpha) + (k - 1) * c : base + (N - 1 + k - 1) * (alpha + c);
            /* the pieces' store-and-forward over the 2 hops of each send */
            double fill = (N - 1 + k) * (524288.0 / BW * 1e6) / 4;
            CU_ASSERT(t >= ideal * 0.999);
            CU_ASSERT(t <= (ideal + fill) * 1.001);
            if (t < ideal * 0.999 || t > (ideal + fill) * 1.001)
                fprintf(stderr, "chain kind %d sm %d: %.3f us, closed form %.3f-%.3f\n", kind, sm, t, ideal, ideal + fill);
        }
    fabric_free(f);
}

/* Channels share links: 8 channels on one 100 GB/s link each copy at 12.5
 * GB/s (NVLink and PCIe interleave them packet by packet). Where blocks read
 * (Ampere) they also wait for their per-step latency together, so the ring
 * takes the one-channel closed form at 1/8 of the bandwidth; where they
 * write (Hopper), a channel's second slice covers its first one's latency
 * and the ring moves at the link's rate, the latency showing once. Not the
 * link's rate with every latency hidden behind other channels' chunks,
 * which whole-chunk FIFO queues would give. */
static void test_coll_ring_channels_share_links(void)
{
    fabric *f;
    fab_node_id g[N];
    coll_system sys = star(&f, g);
    uint64_t S = 8 << 20; /* per channel and rank 256 KiB: one chunk, two 128 KiB slices */
    double slice_us = (double)S / N / 8 / 2 / (BW / 8) * 1e6, steps = 2 * (N - 1);
    double exposed = 8.4 + steps * 2 * (3.4 + slice_us), hidden = 8.4 + steps * 2 * slice_us + 3.4;
    sys.gpu_sm = 80;
    double t = run(&sys, COLL_ALL_REDUCE, ALGO_RING, S, 8);
    CU_ASSERT(t >= exposed * 0.999);
    CU_ASSERT(t <= exposed * 1.01); /* the share sets it, not the pieces' store-and-forward */
    sys.gpu_sm = 90;
    t = run(&sys, COLL_ALL_REDUCE, ALGO_RING, S, 8);
    CU_ASSERT(t >= hidden * 0.999);
    CU_ASSERT(t <= hidden * 1.01);
    fabric_free(f);
}

/* Rings through host memory (no P2P, NCCL's SHM transport) move in passes:
 * a block writes a slice to host memory, the next rank's block reads it
 * back, reading and writing in one pass where it forwards. Two RTX 2080 Tis
 * under one switch (pcie-gen3-2gpu), two channels: all four blocks write up
 * the switch uplink together, then read down it together, each at a
 * quarter of the link R. All_gather alternates write and read passes: busbw
 * R/4. All_reduce per slice writes, reads and writes at once, reads: three
 * passes for two sends, busbw R/3. A pipelined route would give both the
 * same rate (measured files 23/24: 4.00 and 3.2-3.4 GB/s). */
static void test_coll_ring_shm_passes(void)
{
    coll_system sys;
    topo *t = shipped("pcie-gen3-2gpu", (topo_opts){0}, &sys);
    const fab_route *r = fabric_route(sys.fab, sys.gpu[0], sys.gpu[1], 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_TRUE(fabric_route_staged(sys.fab, r));
    double R = fabric_route_bw(sys.fab, r); /* the PCIe links; host memory is faster */
    uint64_t S = 256ull << 20;
    double ag = (double)S / (run(&sys, COLL_ALL_GATHER, ALGO_RING, S, 2) * 1e-6) / 2;
    double ar = (double)S / (run(&sys, COLL_ALL_REDUCE, ALGO_RING, S, 2) * 1e-6);
    ASSERT_REL(ag, R / 4, 0.03);
    ASSERT_REL(ar, R / 3, 0.03);
    topo_free(t);
}

static void test_coll_allgather_n_minus_1_steps(void)
{
    fabric *f;
    fab_node_id g[N];
    coll_system sys = star(&f, g);
    uint64_t S = 4 << 20; /* total output; each rank's block S/N */
    double t_ag = run(&sys, COLL_ALL_GATHER, ALGO_RING, S, 1);
    double t_ar = run(&sys, COLL_ALL_REDUCE, ALGO_RING, S, 1);
    /* same block per step, half the steps (the last step's latency, after
     * its copy where blocks write, shows once in both) */
    ASSERT_REL(t_ag - 8.4 - 3.4, (t_ar - 8.4 - 3.4) / 2, 0.01);
    fabric_free(f);
}

static void test_coll_bytes_conserved_and_links_at_most_full(void)
{
    fabric *f;
    fab_node_id g[N];
    coll_system sys = star(&f, g);
    coll_request req = {.kind = COLL_ALL_REDUCE, .bytes = 64 << 20, .algo = ALGO_RING, .proto = PROTO_SIMPLE, .nchannels = 4};
    coll_result res;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    /* ring all-reduce: every rank sends 2(n-1)/n of the buffer, over 2 hops */
    uint64_t want = (uint64_t)(2.0 * (N - 1) / N * (64 << 20)) * N;
    ASSERT_REL(res.wire_bytes, want, 1e-6);
    uint64_t in, out;
    fabric_totals(f, &in, &out);
    CU_ASSERT_EQUAL(in, out);
    CU_ASSERT(res.busiest_util <= 1.0 + 1e-9);
    CU_ASSERT(res.busiest_util > 0.8); /* large message: the GPU's link is nearly always busy */
    fabric_free(f);
}

static void test_coll_nvls_beats_ring_by_physical_factor(void)
{
    fabric *f;
    fab_node_id g[N];
    coll_system sys = star(&f, g);
    uint64_t S = 1ull << 30;
    double ring = run(&sys, COLL_ALL_REDUCE, ALGO_RING, S, 8);
    double nvls = run(&sys, COLL_ALL_REDUCE, ALGO_NVLS, S, 8);
    /* ring moves 2(n-1)/n S each way at link rate; NVLS S(1+1/n) at 0.85 of it */
    double factor = (2.0 * (N - 1) / N) / ((1.0 + 1.0 / N) / 0.85);
    /* the ring's 8 channels share each link (1/8 of it each) and all pay
     * the per-step latency (3.4 us) between their 1 MiB slices */
    double slice_us = 1048576 / (BW / 8) * 1e6;
    ASSERT_REL(ring / nvls, factor * (slice_us + 3.4) / slice_us, 0.05);
    fabric_free(f);
}

/* NVLS steps: a GPU's block copies each chunk up at its share of the links
 * (the GPU's NVLinks over the channels) and flags it (NCCL's NVLink LL
 * latency, 0.6 us), one chunk after another. Where that is slower than both
 * the links (S(1+1/n) up per GPU) and the slots (8 chunks per 25 us), it sets
 * the rate: 2 GB200 trays (8 GPUs, 24 channels), 1 GiB in 64 KiB chunks. The
 * grouped grain agrees with every chunk simulated (--exact). */
static void test_coll_nvls_flag_per_chunk(void)
{
    coll_system sys;
    topo *t = shipped("gb200-nvl72", (topo_opts){.nodes = 2}, &sys);
    const uint64_t S = 1ull << 30, chunk = 65536;
    const int nch = 24, n = 8;
    coll_request req = {.kind = COLL_ALL_REDUCE, .bytes = S, .algo = ALGO_NVLS, .proto = PROTO_SIMPLE, .nchannels = nch};
    coll_result res;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    const fab_route *up = fabric_route(sys.fab, sys.gpu[0], sys.nvswitch, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(up);
    double share = fabric_route_bw(sys.fab, up) / nch, eff = 0.74; /* Blackwell nvlsEfficiency */
    double copy = chunk / eff / share * 1e6, wire = fabric_route_lat_ps(sys.fab, up) / 1e6;
    double per = 0.6 + wire + copy, link = copy * (1.0 + 1.0 / n), slots = 25.0 / 8;
    CU_ASSERT(per > link && per > slots);
    double nchunks = (double)S / nch / chunk;
    ASSERT_REL(res.time_us, 25 + nchunks * per, 0.03);
    CU_ASSERT(res.time_us > 25 + nchunks * link * 1.04);
    /* the simulated grain (pieces of 2 or 4 chunks holding their chunks'
     * flags) against every chunk (exact): 256 MiB and 1 GiB within 2% */
    const uint64_t sizes[2] = {256ull << 20, S};
    for (int i = 0; i < 2; i++) {
        coll_request r2 = req;
        r2.bytes = sizes[i];
        coll_result fast, exact;
        run_fast_and_exact(&sys, &r2, &fast, &exact);
        ASSERT_REL(fast.time_us, exact.time_us, 0.02);
        CU_ASSERT(fast.events < exact.events);
    }
    sys.exact = false;
    topo_free(t);
}

/* NVLS all_gather / reduce_scatter on one NVLS switch (algo_nvls_rsag.c):
 * an all_gather's downlinks and a reduce_scatter's uplinks carry S per GPU
 * at nvlsEff (0.85 on Hopper), so S / (BW x 0.85) plus NCCL's NVLS latency
 * (25 us, once) plus a flag (0.6 us) per chunk a block sends (one a step for
 * all_gather, one per owner for reduce_scatter: 128 steps of 128 KiB per
 * channel here) within 3%; every transfer delivered: (n + 1) S / 0.85 wire
 * bytes for both. */
static void test_coll_nvls_allgather_reducescatter(void)
{
    fabric *f;
    fab_node_id g[N];
    coll_system sys = star(&f, g);
    const uint64_t S = 1ull << 30;
    const coll_kind kinds[2] = {COLL_ALL_GATHER, COLL_REDUCE_SCATTER};
    for (int i = 0; i < 2; i++) {
        coll_request req = {.kind = kinds[i], .bytes = S, .algo = ALGO_NVLS, .proto = PROTO_SIMPLE, .nchannels = 8};
        coll_result res;
        GError *err = NULL;
        CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, &err));
        double steps = (double)S / N / 8 / 131072, flags = kinds[i] == COLL_ALL_GATHER ? 1 : N;
        double want = (double)S / (BW * 0.85) * 1e6 + 25 + steps * flags * 0.6;
        ASSERT_REL(res.time_us, want, 0.03);
        ASSERT_REL((double)res.wire_bytes, (N + 1) * (double)S / 0.85, 1e-3);
        CU_ASSERT(res.busiest_util <= 1.0 + 1e-9);
    }
    fabric_free(f);
    /* NCCL's tuner: on 8 H100s the ring is faster at every size (NVLS's 25 us
     * against the ring's 7 short steps); across 32 GB200s of one NVLink
     * domain NVLS wins the small and middle sizes (the ring's 31 steps); past
     * 32 local ranks NCCL runs NVLS for all_reduce only (enqueue.cc) */
    coll_system h, b, b72;
    topo *th = shipped("dgx-h100", (topo_opts){0}, &h), *tb = shipped("gb200-nvl72", (topo_opts){.nodes = 8}, &b),
         *t72 = shipped("gb200-nvl72", (topo_opts){.nodes = 18}, &b72);
    coll_request req;
    CU_ASSERT_EQUAL(b.nranks, 32);
    CU_ASSERT_EQUAL(b72.nranks, 72);
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_TRUE(coll_tune(&h, kinds[i], 1u << 20, 0, 0, &req, NULL));
        CU_ASSERT_EQUAL(req.algo, ALGO_RING);
        CU_ASSERT_TRUE(coll_tune(&b, kinds[i], 1u << 20, 0, 0, &req, NULL));
        CU_ASSERT_EQUAL(req.algo, ALGO_NVLS);
        CU_ASSERT_TRUE(coll_tune(&b, kinds[i], 2ull << 30, 0, 0, &req, NULL));
        CU_ASSERT_EQUAL(req.algo, ALGO_RING);
        CU_ASSERT_TRUE(coll_tune(&b72, kinds[i], 1u << 20, 0, 0, &req, NULL));
        CU_ASSERT_NOT_EQUAL(req.algo, ALGO_NVLS);
        CU_ASSERT_FALSE(coll_tune(&b72, kinds[i], 1u << 20, 1u << ALGO_NVLS, 0, &req, NULL));
    }
    CU_ASSERT_TRUE(coll_tune(&b72, COLL_ALL_REDUCE, 2ull << 30, 0, 0, &req, NULL));
    CU_ASSERT_EQUAL(req.algo, ALGO_NVLS);
    /* NVLSTree does not run them (NCCL: NVLS across nodes needs CollNet) */
    coll_system h2;
    topo *t2 = shipped("dgx-h100", (topo_opts){.nodes = 2}, &h2);
    CU_ASSERT_TRUE(coll_tune(&h2, COLL_ALL_GATHER, 1u << 20, 0, 0, &req, NULL));
    CU_ASSERT_NOT_EQUAL(req.algo, ALGO_NVLS);
    CU_ASSERT_FALSE(coll_tune(&h2, COLL_ALL_GATHER, 1u << 20, 1u << ALGO_NVLS_TREE, 0, &req, NULL));
    topo_free(th);
    topo_free(tb);
    topo_free(t72);
    topo_free(t2);
}

/* NCCL turns NVLS on only with more than 2 of the communicator's GPUs on a
 * node (ncclNvlsInit): 2 GPUs of a DGX H100, alone or on each of 2 servers,
 * never get NVLS or NVLSTree from the tuner, its table has no such cell and
 * the algorithms refuse them; 3 GPUs have them. */
static void test_coll_tuner_nvls_needs_three_gpus(void)
{
    coll_request req;
    for (int g = 2; g <= 3; g++)
        for (int nodes = 1; nodes <= 2; nodes++) {
            coll_system sys;
            topo *t = shipped("dgx-h100", (topo_opts){.nodes = nodes, .gpus = g}, &sys);
            coll_algo_id nv = nodes == 1 ? ALGO_NVLS : ALGO_NVLS_TREE;
            CU_ASSERT_TRUE(coll_tune(&sys, COLL_ALL_REDUCE, 1ull << 30, 0, 0, &req, NULL));
            if (g == 2) /* with 3 it is offered; NCCL's model then prefers the ring at 1 GiB (NVLS's (n-1)/n) */
                CU_ASSERT_NOT_EQUAL(req.algo, nv);
            coll_request force = {.kind = COLL_ALL_REDUCE, .bytes = 1 << 20, .algo = nv, .proto = PROTO_SIMPLE,
                                  .nchannels = 16};
            coll_result res;
            GError *err = NULL;
            CU_ASSERT_EQUAL(coll_run(&sys, &force, &res, &err), g == 3);
            g_clear_error(&err);
            double lat, bw;
            CU_ASSERT_EQUAL(coll_tune_table(&sys, COLL_ALL_REDUCE, nv, PROTO_SIMPLE, &lat, &bw), g == 3);
            topo_free(t);
        }
}

static void test_coll_tuner_h100_ll_small_nvls_large(void)
{
    coll_system sys;
    topo *t = shipped("dgx-h100", (topo_opts){0}, &sys);
    CU_ASSERT_TRUE(sys.nvls);
    coll_request req;
    CU_ASSERT_TRUE(coll_tune(&sys, COLL_ALL_REDUCE, 65536, 0, 0, &req, NULL));
    CU_ASSERT_EQUAL(req.algo, ALGO_RING);
    CU_ASSERT_EQUAL(req.proto, PROTO_LL);
    CU_ASSERT_TRUE(coll_tune(&sys, COLL_ALL_REDUCE, 256 << 20, 0, 0, &req, NULL));
    CU_ASSERT_EQUAL(req.algo, ALGO_NVLS);
    CU_ASSERT_EQUAL(req.proto, PROTO_SIMPLE);
    CU_ASSERT_EQUAL(req.nchannels, 16);
    /* all_gather: NVLS's latency and rate lose to the ring here (NCCL's model) */
    CU_ASSERT_TRUE(coll_tune(&sys, COLL_ALL_GATHER, 256 << 20, 0, 0, &req, NULL));
    CU_ASSERT_EQUAL(req.algo, ALGO_RING);
    /* the maintainers' figures: NVLS ~480 busbw, Ring ~370 at large sizes */
    coll_result res;
    req = (coll_request){.kind = COLL_ALL_REDUCE, .bytes = 1ull << 30, .algo = ALGO_NVLS, .proto = PROTO_SIMPLE, .nchannels = 16};
    CU_ASSERT_TRUE(coll_run(&sys, &req, &res, NULL));
    double busbw = (1ull << 30) / res.time_us / 1e3 * 2 * 7 / 8;
    ASSERT_REL(busbw, 480, 0.05);
    req.algo = ALGO_RING;
    req.nchannels = coll_channels(&sys, ALGO_RING);
    CU_ASSERT_TRUE(coll_run(&sys, &req, &res, NULL));
    busbw = (1ull << 30) / res.time_us / 1e3 * 2 * 7 / 8;
    /* 24 channels share the 370.8 GB/s of NVLink (15.45 GB/s each); Hopper's
     * blocks write, so a slice's 3.4 us step latency runs while the block
     * copies the next one (docs/collectives.md, "Channels share links"):
     * the link's rate, and the maintainers' ~370 */
    ASSERT_REL(busbw, 370.8, 0.01);
    ASSERT_REL(busbw, 370, 0.02);
    /* "about 370 GB/s effective busbw for Ring and non-AllReduce collectives"
     * (nccl-model.md, nccl-tests#212): Broadcast/Reduce chains on the rings
     * write over NVLink too, their step latency the receiver's; 4 GiB, busbw
     * = algbw, the link's rate less the chain's fill */
    for (coll_kind k = COLL_BROADCAST; k <= COLL_REDUCE; k++) {
        req = (coll_request){.kind = k, .bytes = 4ull << 30, .algo = ALGO_RING, .proto = PROTO_SIMPLE,
                             .nchannels = coll_channels(&sys, ALGO_RING)};
        CU_ASSERT_TRUE(coll_run(&sys, &req, &res, NULL));
        ASSERT_REL((4ull << 30) / res.time_us / 1e3, 370.8, 0.03);
    }
    topo_free(t);
}

/* NVLS on 2 GB200 trays (8 GPUs, 24 channels, 8 heads): NCCL's chunk is 32 KiB below
 * 8 x 192 x 64 KiB = 96 MiB, and with NCCL_STEPS chunks in flight per channel, a slot back
 * NVLS's 25 us after its chunk left, 64 MiB moves at 24 x 8 x 32 KiB / 25 us = 251.7 GB/s
 * after the latency; at 2 GiB (128 KiB chunks, 1,007 GB/s of window) the links bind */
static void test_coll_nvls_chunk_window(void)
{
    coll_system sys;
    topo *t = shipped("gb200-nvl72", (topo_opts){.nodes = 2}, &sys);
    coll_request req = {.kind = COLL_ALL_REDUCE, .bytes = 64ull << 20, .algo = ALGO_NVLS, .proto = PROTO_SIMPLE,
                        .nchannels = coll_channels(&sys, ALGO_NVLS)};
    CU_ASSERT_EQUAL(req.nchannels, 24);
    coll_result res;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    double lat = coll_hw_lat_us(0, ALGO_NVLS, PROTO_SIMPLE);
    double window = 24 * 8 * 32768.0 / (lat * 1e3); /* GB/s */
    ASSERT_REL(res.time_us - lat, (double)req.bytes / window / 1e3, 0.03);
    req.bytes = 2ull << 30;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    double algbw = (double)req.bytes / res.time_us / 1e3;
    CU_ASSERT(algbw < 24 * 8 * 131072.0 / (lat * 1e3) * 0.6);
    topo_free(t);
}

static void test_coll_nvlstree_two_nodes_physical_limit(void)
{
    coll_system sys;
    topo *t = shipped("dgx-h100", (topo_opts){.nodes = 2}, &sys);
    coll_request req;
    CU_ASSERT_TRUE(coll_tune(&sys, COLL_ALL_REDUCE, 1ull << 30, 0, 0, &req, NULL));
    CU_ASSERT_EQUAL(req.algo, ALGO_NVLS_TREE);
    coll_result res;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    double t1 = res.time_us;
    req.bytes = 4ull << 30;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    double t4 = res.time_us;
    /* algbw <= min(NVLink 18 x 25 GB/s x 0.824 x nvlsEff / (1 + 1/8) = 280 GB/s, node NICs 8 x 50
     * GB/s x eff), and each of the 16 channels starts one step of 8 heads x 128 KiB per slot round
     * trip (NVLSTree's latency, NVLink 25 + 2 x NET 20.9 us): 16 x 8 x 128 KiB / 66.8 us = 251 GB/s
     * binds (docs/collectives.md, "NVLSTree steps") */
    double algbw = (double)(4ull << 30) / t4 / 1e3;
    double rtt_us = coll_hw_lat_us(0, ALGO_NVLS_TREE, PROTO_SIMPLE) + 2 * coll_hw_lat_us(2, ALGO_NVLS_TREE, PROTO_SIMPLE);
    double window = 16 * 8 * 131072.0 / (rtt_us * 1e3);
    ASSERT_REL(algbw, window, 0.03);
    CU_ASSERT(window < 18 * 25 * 0.824 * 0.85 / 1.125);
    CU_ASSERT(sys.net_Bps / 1e9 > algbw);
    /* steps are stored and forwarded: the fixed part of t = a + S/B (from 1 and 4 GiB) holds the
     * latency and at least two stages of a step's copy at a channel's share of the GPU's NVLink
     * (1 MiB / nvlsEff at 18 x 25 x 0.824 / 16 GB/s = 53.2 us), and less than six round trips */
    double a = t4 - (t4 - t1) * 4.0 / 3.0;
    double step_copy_us = 1048576.0 / 0.85 / (18 * 25 * 0.824 / 16 * 1e3);
    CU_ASSERT(a >= rtt_us + 2 * step_copy_us);
    CU_ASSERT(a <= 6 * rtt_us);
    req.bytes = 1ull << 30;
    /* a ring is bounded by the node's NIC bandwidth instead */
    req.algo = ALGO_RING;
    req.nchannels = coll_channels(&sys, ALGO_RING);
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    double ring_bus = (double)(1ull << 30) / res.time_us / 1e3 * 2 * 15 / 16;
    CU_ASSERT(ring_bus <= sys.net_Bps / 1e9 * 1.001);
    topo_free(t);
}

/* a deeper tree delays the first step, not the rate of the rest: every hop keeps its own slots
 * (docs/collectives.md, "Depth"). On 16 DGX H100 an NVLSTree all_reduce of 1 GiB keeps at least
 * 90% of the 4-node rate, and no more than the two-node slot rule allows per channel; before, a
 * slot's round trip grew with log2(nodes) and 16 nodes ran at 0.58 of 4 */
static void test_coll_nvlstree_depth_keeps_rate(void)
{
    double algbw[2];
    int nodes[2] = {4, 16};
    for (int i = 0; i < 2; i++) {
        coll_system sys;
        topo *t = shipped("dgx-h100", (topo_opts){.nodes = nodes[i]}, &sys);
        coll_request req;
        CU_ASSERT_TRUE(coll_tune(&sys, COLL_ALL_REDUCE, 1ull << 30, 0, 0, &req, NULL));
        CU_ASSERT_EQUAL(req.algo, ALGO_NVLS_TREE);
        coll_result res;
        CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
        algbw[i] = (double)(1ull << 30) / res.time_us / 1e3;
        double rtt_us = coll_hw_lat_us(0, ALGO_NVLS_TREE, PROTO_SIMPLE) +
                        2 * coll_hw_lat_us(2, ALGO_NVLS_TREE, PROTO_SIMPLE);
        CU_ASSERT(algbw[i] <= req.nchannels * 8 * 131072.0 / (rtt_us * 1e3));
        topo_free(t);
    }
    CU_ASSERT(algbw[1] >= 0.9 * algbw[0]);
}

static void test_coll_tree_four_nodes_network_bound(void)
{
    coll_system sys;
    topo *t = shipped("dgx-a100", (topo_opts){.nodes = 4}, &sys);
    uint64_t S = 1ull << 30;
    coll_request req = {.kind = COLL_ALL_REDUCE, .bytes = S, .algo = ALGO_TREE, .proto = PROTO_SIMPLE,
                        .nchannels = coll_channels(&sys, ALGO_TREE)};
    coll_result res;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    /* NCCL's double binary tree over 4 nodes (0 <- 2 <- {1, 3}, mirrored 3 <- 1 <- {2, 0}): a channel's
     * head sends its S/nch up to its parent node and once to each child node, through the NIC of its
     * rail (local GPU c mod 8); the busiest NIC's bytes at a NIC's rate bound the time */
    int nch = req.nchannels, ppn = sys.ppn;
    double sent[4][8] = {{0}}, busiest = 0;
    for (int c = 0; c < nch; c++)
        for (int node = 0; node < 4; node++) {
            int head = node * ppn + c % ppn, up, down[3], out = 0;
            coll_tree_links(&sys, c, nch, head, &up, down);
            out += up >= 0 && up / ppn != node;
            for (int k = 0; k < 3; k++)
                out += down[k] >= 0 && down[k] / ppn != node;
            sent[node][c % ppn] += out * (double)S / nch;
            busiest = fmax(busiest, sent[node][c % ppn]);
        }
    CU_ASSERT_DOUBLE_EQUAL(sent[2][0], 7.0 * S / 24, 1); /* interior in tree 0 on channels 0 and 8, a leaf on 16 */
    double bound_us = busiest / (sys.net_Bps / 8) * 1e6;
    CU_ASSERT(res.time_us >= bound_us);
    CU_ASSERT(res.time_us <= 1.5 * bound_us);
    CU_ASSERT(res.busiest_util <= 1.0 + 1e-9);
    /* and the tuner uses it for mid sizes across nodes, where its log-depth latency wins */
    CU_ASSERT_TRUE(coll_tune(&sys, COLL_ALL_REDUCE, 1 << 20, 0, 0, &req, NULL));
    CU_ASSERT_EQUAL(req.algo, ALGO_TREE);
    topo_free(t);
}

/* A multi-node ring's network sends go through the proxy one after another,
 * NCCL's netOvh apart (2 us on AMD hosts, 1 us otherwise, x3 for Simple):
 * an all_gather's node-boundary rank sends n-1 steps, so a small one over 4
 * DGX A100s (32 ranks) lasts at least 31 of them; the same ring inside one
 * node has no network step and no such floor. */
/* One rank: NCCL launches no kernel (ncclLaunchOneRank) but copies the
 * buffer device to device when it is out of place, reading and writing it in
 * HBM: launch + 2 B / (hbm x copy efficiency). 1 GiB on one H100: 2.5 us +
 * 2^31 / (3.35e12 x 0.882) s = 729.3 us. An empty call takes nothing. */
static void test_coll_one_rank_is_a_copy(void)
{
    coll_system sys;
    topo *t = shipped("dgx-h100", (topo_opts){.gpus = 1}, &sys);
    CU_ASSERT_EQUAL_FATAL(sys.nranks, 1);
    sys.launch_us = COLL_LAUNCH_US;
    for (int k = 0; k < 3; k++) {
        coll_kind kind = k == 0 ? COLL_ALL_REDUCE : k == 1 ? COLL_ALL_GATHER : COLL_BROADCAST;
        coll_request req = {.kind = kind, .bytes = 1ull << 30};
        CU_ASSERT_TRUE_FATAL(coll_tune(&sys, kind, req.bytes, 0, 0, &req, NULL));
        coll_result res;
        CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
        ASSERT_REL(res.time_us, sys.launch_us + 2.0 * 1073741824 / (sys.hbm_Bps * COMPUTE_COPY_HBM_EFF) * 1e6, 1e-6);
        ASSERT_REL(res.time_us, 729.3, 1e-3);
        req.bytes = 0;
        CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
        CU_ASSERT_EQUAL(res.time_us, 0);
    }
    topo_free(t);
}

static void test_coll_ring_net_overhead_per_step(void)
{
    coll_system sys, one;
    topo *t = shipped("dgx-a100", (topo_opts){.nodes = 4}, &sys), *t1 = shipped("dgx-a100", (topo_opts){0}, &one);
    CU_ASSERT_EQUAL(sys.cpu_vendor, 1);
    coll_request req = {.kind = COLL_ALL_GATHER, .bytes = 8192, .algo = ALGO_RING, .proto = PROTO_LL, .nchannels = 1};
    coll_result amd, intel, node;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &amd, NULL));
    sys.cpu_vendor = 0;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &intel, NULL));
    req.proto = PROTO_SIMPLE;
    coll_result simple;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &simple, NULL));
    req.proto = PROTO_LL;
    CU_ASSERT_TRUE_FATAL(coll_run(&one, &req, &node, NULL));
    CU_ASSERT(amd.time_us >= 31 * 2.0);
    CU_ASSERT(intel.time_us >= 31 * 1.0);
    CU_ASSERT(simple.time_us >= 31 * 3.0);
    /* the proxy paces the ring: one more microsecond per step on AMD */
    ASSERT_REL(amd.time_us - intel.time_us, 31 * 1.0, 0.15);
    CU_ASSERT(node.time_us < 31 * 1.0);
    topo_free(t);
    topo_free(t1);
}

/* With one GPU per node a Tree head is also its chain's tail: it must keep
 * up to NCCL_STEPS chunks with the proxy, not one (it did until 2026-11-30:
 * each chunk waited for the previous one to cross the network). 512 KiB on
 * one channel between two DGX H100 GPUs, 4 chunks of 128 KiB: the time over
 * the 8-byte one stays within 3 x the bytes at NCCL's per-channel Tree
 * ceiling (41.4 GB/s), where one chunk at a time took 2.4 x more. */
static void test_coll_tree_one_gpu_per_node_pipelines(void)
{
    coll_system sys;
    topo *t = shipped("dgx-h100", (topo_opts){.nodes = 2, .gpus = 1}, &sys);
    coll_request req = {.kind = COLL_ALL_REDUCE, .bytes = 8, .algo = ALGO_TREE, .proto = PROTO_SIMPLE, .nchannels = 1};
    coll_result small, big;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &small, NULL));
    req.bytes = 512 << 10;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &big, NULL));
    double bytes_us = (double)req.bytes / (coll_tree_perch_GBps(sys.gpu_sm, 2, PROTO_SIMPLE) * 1e9) * 1e6;
    CU_ASSERT(big.time_us > small.time_us + bytes_us);
    CU_ASSERT(big.time_us < small.time_us + 3 * bytes_us);
    topo_free(t);
}

/* Tree channels share links too: on one DGX A100's NVLink (240 GB/s), 24
 * channels each send their chain's chunks up and down at once, so a chain
 * send moves at 240/48 GB/s and a channel's S/24 takes at least that long,
 * however idle the link looks between the chunks. */
static void test_coll_tree_chains_share_links(void)
{
    coll_system sys;
    topo *t = shipped("dgx-a100", (topo_opts){.nodes = 4}, &sys);
    uint64_t S = 64ull << 20;
    int nch = coll_channels(&sys, ALGO_TREE);
    coll_request req = {.kind = COLL_ALL_REDUCE, .bytes = S, .algo = ALGO_TREE, .proto = PROTO_SIMPLE, .nchannels = nch};
    coll_result res;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    double share = 240e9 / (2.0 * nch);
    CU_ASSERT(res.time_us >= (double)S / nch / share * 1e6 * 0.99);
    topo_free(t);
}

/* A chain rank that writes its chunk to the next GPU over NVLink is free once
 * the chunk has landed; the step latency (Tree Simple on NVLink, 4 us) is
 * the flag's way to the receiver. Where it reads (Simple between sm 8.0
 * GPUs) it waits for the latency and the request's wire trip before each
 * copy. On 2x DGX A100 (24 channels) the writing ranks (sm 8.6) are never
 * slower, and at 256 MiB, where the chains' copies at their share (64 KiB at
 * 5 GB/s, 13 us) come closest to binding, 10% faster (the network and the
 * per-channel ceiling set the rest). */
static void test_coll_tree_chain_writes_hide_latency(void)
{
    coll_system sys;
    topo *t = shipped("dgx-a100", (topo_opts){.nodes = 2}, &sys);
    int nch = coll_channels(&sys, ALGO_TREE);
    for (uint64_t S = 1 << 20; S <= (1ull << 30); S *= 4) {
        coll_request req = {.kind = COLL_ALL_REDUCE, .bytes = S, .algo = ALGO_TREE, .proto = PROTO_SIMPLE, .nchannels = nch};
        coll_result rd, wr;
        sys.gpu_sm = 80;
        CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &rd, NULL));
        sys.gpu_sm = 86;
        CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &wr, NULL));
        CU_ASSERT(wr.time_us < rd.time_us);
        if (S == 256ull << 20)
            CU_ASSERT(wr.time_us < 0.9 * rd.time_us);
    }
    topo_free(t);
}

/* Tree on one node is NCCL's chain (tuning.cc keeps it on one node): on 8x
 * H100 every channel's chain starts at another GPU (its head), so per
 * channel a GPU sends S/nCh up and down except at the ends; over the 8
 * heads a GPU sends 1.75 S in all, and the busiest NVLink direction (18 x
 * 25 GB/s x 0.824 = 370.8 GB/s) bounds busbw at 370.8 (algbw x 2(n-1)/n).
 * At 4 GiB the chain reaches 90% of it; the tuner never takes it there
 * (NCCL's table: Tree/Simple 170.6 GB/s algbw against the ring's 211.9). */
static void test_coll_tree_one_node_chain(void)
{
    coll_system sys;
    topo *t = shipped("dgx-h100", (topo_opts){0}, &sys);
    uint64_t S = 4ull << 30;
    coll_request req = {.kind = COLL_ALL_REDUCE, .bytes = S, .algo = ALGO_TREE, .proto = PROTO_SIMPLE,
                        .nchannels = coll_channels(&sys, ALGO_TREE)};
    coll_result res;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    double busbw = (double)S / (res.time_us * 1e3) * 14 / 8;
    CU_ASSERT(busbw <= 370.8 * 1.001);
    CU_ASSERT(busbw >= 0.9 * 370.8);
    for (uint64_t b = 1 << 10; b <= S; b *= 4) {
        CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, b, 0, 0, &req, NULL));
        CU_ASSERT_NOT_EQUAL(req.algo, ALGO_TREE);
    }
    topo_free(t);
}

/* A group cut across servers (36 ranks of 5 DGX H100: 8, 8, 8, 8 and 4):
 * Ring runs it in rank order, never past its last rank (it used to read
 * ranks 36-39 of a 5 x 8 layout and abort), and the algorithms that assume
 * ppn ranks per server are refused with the reason; the tuner picks Ring. */
static void test_coll_uneven_group_runs_ring(void)
{
    coll_system sys;
    topo *t = shipped("dgx-h100", (topo_opts){.nodes = 5}, &sys);
    sys.nranks = 36;
    sys.nnodes = 5;
    sys.uneven = true;
    coll_request req;
    CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, 64 << 20, 0, 0, &req, NULL));
    CU_ASSERT_EQUAL(req.algo, ALGO_RING);
    coll_result res;
    GError *err = NULL;
    CU_ASSERT_TRUE(coll_run(&sys, &req, &res, &err));
    CU_ASSERT(res.time_us > 0);
    req.algo = ALGO_TREE;
    CU_ASSERT_FALSE(coll_run(&sys, &req, &res, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "different numbers of the ranks"));
    g_error_free(err);
    topo_free(t);
}

static void test_coll_pat_log_steps_one_gpu_per_node(void)
{
    GError *err = NULL;
    coll_system sys;
    topo *t = shipped("dgx-h100", (topo_opts){.nodes = 8, .gpus = 1}, &sys);
    CU_ASSERT_EQUAL(sys.ppn, 1);
    coll_request req = {.kind = COLL_ALL_GATHER, .bytes = 64 << 10, .algo = ALGO_PAT, .proto = PROTO_SIMPLE,
                        .nchannels = 1};
    coll_result pat, ring;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &pat, NULL));
    req.algo = ALGO_RING;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &ring, NULL));
    /* small: 3 exchanges (log2 8) beat the ring's 7 steps */
    CU_ASSERT(pat.time_us < ring.time_us);
    /* large: every rank sends (n-1)/n of the output once through its NIC */
    uint64_t S = 1ull << 30;
    req = (coll_request){.kind = COLL_ALL_GATHER, .bytes = S, .algo = ALGO_PAT, .proto = PROTO_SIMPLE, .nchannels = 8};
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &pat, NULL));
    double bound_us = 7.0 / 8 * (double)S / sys.net_Bps * 1e6;
    CU_ASSERT(pat.time_us >= bound_us);
    CU_ASSERT(pat.time_us <= 1.25 * bound_us);
    /* and PAT is refused with more than one GPU per node */
    topo *t2 = topo_load("dgx-h100", &(topo_opts){.nodes = 2}, &err);
    coll_system s2;
    topo_coll_system(&s2, t2, 0, 1);
    CU_ASSERT_FALSE(coll_run(&s2, &req, &pat, &err));
    CU_ASSERT(err && err->code == COLL_ERROR_UNSUPPORTED);
    g_clear_error(&err);
    topo_free(t2);
    topo_free(t);
}

static void test_coll_collnet_sharp_reduces_in_network(void)
{
    GError *err = NULL;
    coll_system sys;
    topo *t = shipped("dgx-a100", (topo_opts){.nodes = 4}, &sys); /* ib-hdr: SHARPv2 */
    CU_ASSERT_TRUE(sys.sharp);
    uint64_t S = 1ull << 30;
    coll_request req = {.kind = COLL_ALL_REDUCE, .bytes = S, .algo = ALGO_COLLNET_DIRECT, .proto = PROTO_SIMPLE,
                        .nchannels = coll_channels(&sys, ALGO_RING)};
    coll_result res;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    /* NVLink carries 2 S (ppn-1)/ppn per GPU (reduce-scatter + all-gather): 12 x 25 GB/s x 0.8 */
    double nvl = 12 * 25e9 * 0.8, want = fmin(nvl * 8 / 14.0, sys.net_Bps);
    ASSERT_REL((double)S / res.time_us / 1e-6, want, 0.05);
    /* and beats a ring, which is bound by the NICs at 2(n-1)/n S per node */
    req.algo = ALGO_RING;
    coll_result ring;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &ring, NULL));
    CU_ASSERT(res.time_us < ring.time_us);
    /* NCCL leaves CollNet off unless asked for */
    coll_request tuned;
    CU_ASSERT_TRUE(coll_tune(&sys, COLL_ALL_REDUCE, S, 0, 0, &tuned, NULL));
    CU_ASSERT(tuned.algo != ALGO_COLLNET_DIRECT);
    CU_ASSERT_TRUE(coll_tune(&sys, COLL_ALL_REDUCE, S, 1u << ALGO_COLLNET_DIRECT, 0, &tuned, NULL));
    CU_ASSERT_EQUAL(tuned.algo, ALGO_COLLNET_DIRECT);
    /* a negated list (NCCL_ALGO=^nvls) allows CollNet but does not turn it on
     * (meta-coll review: it did, as did a reduction NVLS cannot do, -d int8 or
     * -o prod, whose mask is every algorithm but NVLS) */
    uint32_t m;
    CU_ASSERT_TRUE_FATAL(coll_tune_parse_mask("^nvls", COLL_ALL_REDUCE, true, &m, NULL));
    CU_ASSERT(m & (1u << ALGO_COLLNET_DIRECT));
    for (uint64_t b = 1u << 20; b <= S; b <<= 5) {
        coll_request plain, neg;
        CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, b, 0, 0, &plain, NULL));
        CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, b, m, 0, &neg, NULL));
        CU_ASSERT_EQUAL(neg.algo, plain.algo);
        CU_ASSERT(neg.algo != ALGO_COLLNET_DIRECT && neg.algo != ALGO_COLLNET_CHAIN);
        CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, b, COLL_ALGO_MASK_ALL | COLL_ALGO_MASK_UNNAMED, 0,
                                       &neg, NULL));
        CU_ASSERT_EQUAL(neg.algo, plain.algo);
    }
    /* with NCCL_COLLNET_ENABLE=1 the negated list lets the tuner take it */
    g_setenv("NCCL_COLLNET_ENABLE", "1", TRUE);
    CU_ASSERT_TRUE(coll_tune(&sys, COLL_ALL_REDUCE, 1u << 20, m, 0, &tuned, NULL));
    CU_ASSERT_EQUAL(tuned.algo, ALGO_COLLNET_DIRECT);
    g_unsetenv("NCCL_COLLNET_ENABLE");
    /* a list leaving only CollNet, unnamed, leaves nothing that runs */
    CU_ASSERT_TRUE_FATAL(coll_tune_parse_mask("^ring,tree,nvls,nvlstree,pat", COLL_ALL_REDUCE, true, &m, NULL));
    CU_ASSERT_FALSE(coll_tune(&sys, COLL_ALL_REDUCE, 1u << 20, m, 0, &tuned, NULL));
    CU_ASSERT_FALSE(coll_tune_parse_mask("^ring,tree,nvls,nvlstree,pat,collnetdirect,collnetchain", COLL_ALL_REDUCE,
                                         true, &m, NULL));
    topo_free(t);
    /* no SHARP on RoCE */
    t = shipped("hgx-h200", (topo_opts){.nodes = 2}, &sys);
    CU_ASSERT_FALSE(sys.sharp);
    req.algo = ALGO_COLLNET_DIRECT;
    CU_ASSERT_FALSE(coll_run(&sys, &req, &res, &err));
    CU_ASSERT(err && err->code == COLL_ERROR_UNSUPPORTED);
    g_clear_error(&err);
    topo_free(t);
}

/* CollNet Chain: each chunk up a chain of the node's GPUs, through the
 * head's NIC to the switch and back. On 4 DGX A100 (ib-hdr, SHARP) the heads
 * rotate over the channels, so every GPU sends 2 S (ppn-1)/ppn over NVLink:
 * algbw -> 12 x 25 GB/s x 0.8 x 8/14 = 137 GB/s, as Direct; with one GPU
 * per node the chain is just the head and moves what Direct moves. Without
 * an NVSwitch NCCL runs Chain only. */
static void test_coll_collnet_chain(void)
{
    GError *err = NULL;
    coll_system sys;
    topo *t = shipped("dgx-a100", (topo_opts){.nodes = 4}, &sys);
    uint64_t S = 1ull << 30;
    coll_request req = {.kind = COLL_ALL_REDUCE, .bytes = S, .algo = ALGO_COLLNET_CHAIN, .proto = PROTO_SIMPLE,
                        .nchannels = coll_channels(&sys, ALGO_RING)};
    coll_result chain, direct;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &chain, NULL));
    double want = fmin(12 * 25e9 * 0.8 * 8 / 14.0, sys.net_Bps);
    ASSERT_REL((double)S / chain.time_us / 1e-6, want, 0.05);
    req.algo = ALGO_COLLNET_DIRECT;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &direct, NULL));
    ASSERT_REL(chain.time_us, direct.time_us, 0.05);
    /* small: the chain's 2 (ppn-1) hops of latency make it slower */
    req.bytes = 64 << 10;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &direct, NULL));
    req.algo = ALGO_COLLNET_CHAIN;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &chain, NULL));
    CU_ASSERT(chain.time_us > direct.time_us);
    topo_free(t);
    /* one GPU per node: the same traffic as Direct */
    t = shipped("dgx-a100", (topo_opts){.nodes = 4, .gpus = 1}, &sys);
    CU_ASSERT_EQUAL(sys.ppn, 1);
    req = (coll_request){.kind = COLL_ALL_REDUCE, .bytes = 256u << 20, .algo = ALGO_COLLNET_CHAIN,
                         .proto = PROTO_SIMPLE, .nchannels = 2};
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &chain, NULL));
    req.algo = ALGO_COLLNET_DIRECT;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &direct, NULL));
    ASSERT_REL(chain.time_us, direct.time_us, 0.05);
    topo_free(t);
    /* PCIe servers on a SHARP fabric: Direct refused, Chain runs and is tuned */
    t = shipped("pcie-gen5-8gpu-2socket", (topo_opts){.nodes = 2, .fabric = "ib-ndr"}, &sys);
    CU_ASSERT_TRUE(sys.sharp);
    req = (coll_request){.kind = COLL_ALL_REDUCE, .bytes = 64u << 20, .algo = ALGO_COLLNET_DIRECT,
                         .proto = PROTO_SIMPLE, .nchannels = 2};
    CU_ASSERT_FALSE(coll_run(&sys, &req, &direct, &err));
    CU_ASSERT(err && err->code == COLL_ERROR_UNSUPPORTED);
    g_clear_error(&err);
    req.algo = ALGO_COLLNET_CHAIN;
    CU_ASSERT_TRUE(coll_run(&sys, &req, &chain, NULL));
    coll_request tuned;
    CU_ASSERT_TRUE(coll_tune(&sys, COLL_ALL_REDUCE, 2u << 20, 1u << ALGO_COLLNET_CHAIN, 0, &tuned, NULL));
    CU_ASSERT_EQUAL(tuned.algo, ALGO_COLLNET_CHAIN);
    topo_free(t);
}

/* Channels of a communicator with one GPU per server follow NCCL's search
 * over the GPU -> NIC path: A100 + HDR (24 GB/s in NCCL's units) 1 channel,
 * 2 after connectRings; H100 + NDR (48): 1, duplicated to 2, then 4; whole
 * servers keep the NVLink count (24). */
static void test_coll_channels_one_gpu_per_server(void)
{
    static const struct {
        const char *name;
        int gpus, want;
    } cases[] = {{"dgx-a100", 1, 2}, {"dgx-h100", 1, 4}, {"dgx-a100", 0, 24}, {"dgx-h100", 0, 24}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        coll_system sys;
        topo *t = shipped(cases[i].name, (topo_opts){.nodes = 4, .gpus = cases[i].gpus}, &sys);
        CU_ASSERT_EQUAL(coll_channels(&sys, ALGO_RING), cases[i].want);
        topo_free(t);
    }
}

/* NCCL's channel knobs (nccl_env.c, connect.cc's rule): max first, then min
 * copies channels up to it, at most 64; NVLS keeps its own count, clamped
 * by the CTA limits only; point-to-point channels are not touched. */
static void test_coll_channel_knobs(void)
{
    coll_system a100, h100;
    topo *ta = shipped("dgx-a100", (topo_opts){0}, &a100), *th = shipped("dgx-h100", (topo_opts){0}, &h100);
    static const struct {
        coll_nccl_env e;
        int ring, nvls;
    } cases[] = {
        {{0}, 24, 16},
        {{.max_nch = 8}, 8, 16},
        {{.min_nch = 32}, 32, 16},
        {{.max_nch = 4, .min_nch = 8}, 8, 16}, /* max, then min */
        {{.min_nch = 64, .max_ctas = 2}, 64, 2},
        {{.max_ctas = 6}, 6, 6},
        {{.min_ctas = 20}, 24, 20},
        {{.max_nch = 12, .max_ctas = 3}, 3, 3},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        a100.nccl = h100.nccl = cases[i].e;
        CU_ASSERT_EQUAL(coll_run_channels(&a100, ALGO_RING), cases[i].ring);
        CU_ASSERT_EQUAL(coll_run_channels(&a100, ALGO_TREE), cases[i].ring);
        CU_ASSERT_EQUAL(coll_run_channels(&h100, ALGO_NVLS), cases[i].nvls);
        CU_ASSERT_EQUAL(coll_run_channels(&a100, ALGO_DIRECT), coll_channels(&a100, ALGO_DIRECT));
        /* the tuner runs what the knobs leave (large sizes: no small-size drop) */
        coll_request req;
        CU_ASSERT_TRUE_FATAL(coll_tune(&a100, COLL_ALL_REDUCE, 1u << 30, 1u << ALGO_RING, 0, &req, NULL));
        CU_ASSERT_EQUAL(req.nchannels, cases[i].ring);
    }
    /* NCCL_NVLS_ENABLE=0: H100's large all_reduce goes to the ring */
    h100.nccl = (coll_nccl_env){0};
    coll_request req;
    CU_ASSERT_TRUE_FATAL(coll_tune(&h100, COLL_ALL_REDUCE, 1u << 30, 0, 0, &req, NULL));
    CU_ASSERT_EQUAL(req.algo, ALGO_NVLS);
    h100.nccl.nvls_off = true;
    CU_ASSERT_TRUE_FATAL(coll_tune(&h100, COLL_ALL_REDUCE, 1u << 30, 0, 0, &req, NULL));
    CU_ASSERT_EQUAL(req.algo, ALGO_RING);
    CU_ASSERT_FALSE(coll_tune(&h100, COLL_ALL_REDUCE, 1u << 30, 1u << ALGO_NVLS, 0, &req, NULL));
    topo_free(ta);
    topo_free(th);
}

/* The environment read as NCCL names it; bad values are errors. */
static void test_coll_channel_knobs_from_env(void)
{
    static const char *const vars[] = {"NCCL_MIN_NRINGS", "NCCL_MAX_NRINGS",  "NCCL_MIN_NCHANNELS",
                                       "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS", "NCCL_MAX_CTAS",
                                       "NCCL_NVLS_ENABLE", "NCCL_BUFFSIZE"};
    for (size_t i = 0; i < G_N_ELEMENTS(vars); i++)
        g_unsetenv(vars[i]);
    coll_nccl_env e;
    GError *err = NULL;
    CU_ASSERT_TRUE(coll_nccl_env_read(&e, &err));
    CU_ASSERT_TRUE(!e.min_nch && !e.max_nch && !e.min_ctas && !e.max_ctas && !e.nvls_off);
    g_setenv("NCCL_MAX_NRINGS", "6", TRUE); /* the old name, when the new one is unset */
    g_setenv("NCCL_MIN_NCHANNELS", " 100", TRUE); /* NCCL: at most MAXCHANNELS */
    g_setenv("NCCL_MAX_CTAS", "0", TRUE);         /* <= 0: not set */
    g_setenv("NCCL_NVLS_ENABLE", "0", TRUE);
    CU_ASSERT_TRUE(coll_nccl_env_read(&e, &err));
    CU_ASSERT_EQUAL(e.max_nch, 6);
    CU_ASSERT_EQUAL(e.min_nch, 64);
    CU_ASSERT_EQUAL(e.max_ctas, 0);
    CU_ASSERT_TRUE(e.nvls_off);
    g_setenv("NCCL_MAX_NCHANNELS", "4", TRUE);
    g_setenv("NCCL_BUFFSIZE", "8388608", TRUE);
    CU_ASSERT_TRUE(coll_nccl_env_read(&e, &err));
    CU_ASSERT_EQUAL(e.max_nch, 4);
    CU_ASSERT_EQUAL(e.buffsize, 8u << 20);
    g_unsetenv("NCCL_BUFFSIZE");
    static const char *const bad[][2] = {{"NCCL_MAX_NCHANNELS", "abc"}, {"NCCL_MIN_CTAS", "-3"},
                                         {"NCCL_MAX_CTAS", "12x"},      {"NCCL_NVLS_ENABLE", "yes"},
                                         {"NCCL_BUFFSIZE", "4M"},       {"NCCL_BUFFSIZE", "1000"},
                                         {"NCCL_BUFFSIZE", "-4194304"}};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *old = g_strdup(g_getenv(bad[i][0]));
        g_setenv(bad[i][0], bad[i][1], TRUE);
        CU_ASSERT_FALSE(coll_nccl_env_read(&e, &err));
        CU_ASSERT_PTR_NOT_NULL_FATAL(err);
        CU_ASSERT_PTR_NOT_NULL(strstr(err->message, bad[i][0]));
        g_clear_error(&err);
        if (old)
            g_setenv(bad[i][0], old, TRUE);
        else
            g_unsetenv(bad[i][0]);
        g_free(old);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(vars); i++)
        g_unsetenv(vars[i]);
}

/* One Simple ring channel on DGX A100 moves at one thread block's rate
 * (24 GB/s, NCCL's Simple per-channel ceiling), not the GPU's 240 GB/s of
 * NVLink: 1 GiB all_reduce busbw = 24 GB/s x slice / (slice + the step
 * latency at 24 GB/s) within 2%; two channels twice that; 24 channels are
 * link-bound as before (the cap does not bind); NCCL_BUFFSIZE sets the
 * slice. */
static void test_coll_ring_one_block_rate(void)
{
    coll_system sys;
    topo *t = shipped("dgx-a100", (topo_opts){0}, &sys);
    const uint64_t S = 1u << 30;
    const double blk = coll_block_simple_GBps(sys.gpu_sm) * 1e9, lat = coll_hw_lat_us(0, ALGO_RING, PROTO_SIMPLE);
    const double slice = 1 << 20; /* Simple: 2 steps of 512 KiB */
    double bus[3];
    const int nch[3] = {1, 2, 24};
    for (int i = 0; i < 3; i++) {
        double us = run(&sys, COLL_ALL_REDUCE, ALGO_RING, S, nch[i]);
        bus[i] = (double)S / (us * 1e-6) * 2 * 7 / 8 / 1e9;
    }
    double want1 = blk / 1e9 * slice / (slice + lat * 1e-6 * blk);
    ASSERT_REL(bus[0], want1, 0.02);
    ASSERT_REL(bus[1], 2 * want1, 0.02);
    CU_ASSERT(bus[2] > 200 && bus[2] < 240); /* the links bind, not the blocks */
    /* NCCL_BUFFSIZE=16 MiB: 2 MiB steps, 4 MiB slices, a quarter of the step
     * latencies */
    sys.nccl.buffsize = 16u << 20;
    double us = run(&sys, COLL_ALL_REDUCE, ALGO_RING, S, 1);
    double big = 4.0 * slice;
    ASSERT_REL((double)S / (us * 1e-6) * 2 * 7 / 8 / 1e9, blk / 1e9 * big / (big + lat * 1e-6 * blk), 0.02);
    topo_free(t);
}

static void test_coll_algo_spec_parsing(void)
{
    uint32_t m;
    GError *err = NULL;
    CU_ASSERT_TRUE(coll_tune_parse_mask("ring", COLL_ALL_REDUCE, true, &m, NULL));
    CU_ASSERT(m & (1u << ALGO_RING));
    CU_ASSERT_FALSE(m & (1u << ALGO_NVLS));
    CU_ASSERT_TRUE(coll_tune_parse_mask("^nvls", COLL_ALL_REDUCE, true, &m, NULL));
    CU_ASSERT_FALSE(m & (1u << ALGO_NVLS));
    CU_ASSERT(m & (1u << ALGO_RING));
    CU_ASSERT_TRUE(coll_tune_parse_mask("allreduce:nvls;allgather:ring", COLL_ALL_GATHER, true, &m, NULL));
    CU_ASSERT(m & (1u << ALGO_RING));
    CU_ASSERT_FALSE(coll_tune_parse_mask("warp", COLL_ALL_REDUCE, true, &m, &err));
    CU_ASSERT_PTR_NOT_NULL(err);
    g_clear_error(&err);
    CU_ASSERT_TRUE(coll_tune_parse_mask("LL128,simple", COLL_ALL_REDUCE, false, &m, NULL));
    CU_ASSERT_EQUAL(m, (1u << PROTO_LL128) | (1u << PROTO_SIMPLE));
}

/* A ring over 16 identical nodes simulated on 2 of them (folded) against
 * every rank: the same time within 0.5%, with far fewer events; on a
 * static-ECMP fabric, with the full ring's spine collisions. */
static void test_coll_ring_fold_matches_full(void)
{
    GError *err = NULL;
    topo *t = topo_load("dgx-h100", &(topo_opts){.nodes = 16}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    coll_system sys;
    topo_coll_system(&sys, t, 2.5, 1);
    const coll_kind kinds[] = {COLL_ALL_REDUCE, COLL_ALL_GATHER, COLL_REDUCE_SCATTER};
    const uint64_t sizes[] = {1u << 20, 16u << 20, 128u << 20};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) {
            coll_request req = {.kind = kinds[k], .bytes = sizes[i], .algo = ALGO_RING, .proto = PROTO_SIMPLE,
                                .nchannels = coll_channels(&sys, ALGO_RING)};
            coll_result fold, full;
            run_fast_and_exact(&sys, &req, &fold, &full);
            ASSERT_REL(fold.time_us, full.time_us, 5e-3);
            CU_ASSERT_TRUE(fold.events * 4 < full.events);
        }
    /* a chain (broadcast) is never folded: its depth is the whole ring */
    coll_request b = {.kind = COLL_BROADCAST, .bytes = 8u << 20, .algo = ALGO_RING, .proto = PROTO_SIMPLE,
                      .nchannels = coll_channels(&sys, ALGO_RING)};
    coll_result x, y;
    run_fast_and_exact(&sys, &b, &x, &y);
    CU_ASSERT_EQUAL(x.time_us, y.time_us);
    CU_ASSERT_EQUAL(x.events, y.events);
    topo_free(t);
    /* rings leave a server on the NIC they entered it by (NCCL's crossNic 0,
     * through PXN): on static ECMP (ib-hdr) the same all_gather on 36 nodes
     * (two leaf groups) as fast as on 12 (one) */
    const char *pxn_off[] = {"pxn=off", NULL};
    double rail[2];
    for (int j = 0; j < 2; j++) {
        t = topo_load("dgx-a100", &(topo_opts){.nodes = j ? 36 : 12}, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        topo_coll_system(&sys, t, 2.5, 1);
        coll_request r = {.kind = COLL_ALL_GATHER, .bytes = 1u << 30, .algo = ALGO_RING, .proto = PROTO_LL128,
                          .nchannels = coll_channels(&sys, ALGO_RING)};
        coll_result res;
        CU_ASSERT_TRUE_FATAL(coll_run(&sys, &r, &res, &err));
        rail[j] = res.time_us;
        topo_free(t);
    }
    ASSERT_REL(rail[1], rail[0], 0.02);
    /* without PXN a ring's hop between servers leaves on its own GPU's rail
     * and enters on another's, through a spine: collisions grow with the
     * ring; folded, its inter-node hops are paced at the full ring's fluid
     * rates: 12 nodes within 1%, and the collisions of 36 (the same
     * all_gather 20% slower than on 12) kept within 1% at 1 GiB */
    t = topo_load("dgx-a100", &(topo_opts){.nodes = 12, .sets = pxn_off}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    topo_coll_system(&sys, t, 2.5, 1);
    coll_request ag = {.kind = COLL_ALL_GATHER, .bytes = 1u << 30, .algo = ALGO_RING, .proto = PROTO_LL128,
                       .nchannels = coll_channels(&sys, ALGO_RING)};
    run_fast_and_exact(&sys, &ag, &x, &y);
    ASSERT_REL(x.time_us, y.time_us, 1e-2);
    CU_ASSERT_TRUE(x.events * 4 < y.events);
    double t12 = y.time_us;
    topo_free(t);
    t = topo_load("dgx-a100", &(topo_opts){.nodes = 36, .sets = pxn_off}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    topo_coll_system(&sys, t, 2.5, 1);
    ag.nchannels = coll_channels(&sys, ALGO_RING);
    run_fast_and_exact(&sys, &ag, &x, &y);
    ASSERT_REL(x.time_us, y.time_us, 1e-2);
    CU_ASSERT_TRUE(x.time_us > 1.15 * t12);
    CU_ASSERT_TRUE(x.events * 10 < y.events);
    /* a latency-bound ring (Simple, 64 MiB: small slices, each held for the
     * per-step latency) barely loads the spines; its channels ask for no more
     * than that pace, and the fold keeps the full ring's time */
    ag.bytes = 64u << 20;
    ag.proto = PROTO_SIMPLE;
    run_fast_and_exact(&sys, &ag, &x, &y);
    ASSERT_REL(x.time_us, y.time_us, 1e-2);
    topo_free(t);
}

/* alltoall (Direct): every rank sends S/n to each peer at once, so on the
 * idle star each GPU's uplink carries (n-1)/n of S; sendrecv moves S over
 * one link. Alltoall's cut-through pieces (default) against every chunk
 * stored and forwarded (exact) on two DGX H100s over NDR (adaptive routing):
 * the same time within 2.5% at large sizes, the network-bound floor
 * respected, fewer events; on DGX A100s over HDR (static ECMP) chunks. */
/* An uneven alltoall (an MoE dispatch whose busiest rank receives F x the mean, the others (N - F) /
 * (N - 1) each): rank i sends S/N x w[j] to j, so the busiest rank's ingress carries S/N x F x (N - 1),
 * F x the even split's, and sets the time (its N - 1 senders fill its link from the start); the reverse
 * (a combine: senders weighted) the same through its egress. The weights' mean is 1, so an even list
 * gives the even split's time. */
static void test_coll_alltoall_uneven(void)
{
    fabric *f;
    fab_node_id g[N];
    coll_system sys = star(&f, g);
    uint64_t S = 64 << 20;
    double floor_us = (double)S * (N - 1) / N / BW * 1e6, F = 2.5, w[N], even[N];
    for (int j = 0; j < N; j++)
        w[j] = j == 1 ? F : (N - F) / (N - 1), even[j] = 1;
    for (int send = 0; send < 2; send++) {
        coll_request req = {.kind = COLL_ALLTOALL, .bytes = S, .algo = ALGO_DIRECT, .proto = PROTO_SIMPLE,
                            .nchannels = 1, .a2a_w = w, .a2a_send = send};
        coll_result res;
        CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
        ASSERT_REL(res.time_us, F * floor_us + 8.4 + 3.4, 1e-3);
        req.a2a_w = even;
        CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
        ASSERT_REL(res.time_us, floor_us + 8.4 + 3.4, 1e-5);
    }
    /* a whole matrix (a traced all_to_all_single's split sizes): rank 0 sends 4 units to each peer,
     * the others 1 to each other, nothing to rank 0 (units of S/N; shares 18 units over 16 pairs,
     * so the mean-1 shares are units / 1.125): rank 0's egress carries 12 / 1.125 units, its three
     * pairs fill it from the start, and sets the time; each receiver's ingress carries only 6 / 1.125.
     * Transposed (a2a_send) the busiest link is rank 0's ingress: the same time. An all-ones matrix
     * is the even split. */
    double m[N * N] = {0, 4, 4, 4, 0, 0, 1, 1, 0, 1, 0, 1, 0, 1, 1, 0}, ones[N * N];
    for (int e = 0; e < N * N; e++)
        m[e] /= 1.125, ones[e] = 1;
    for (int send = 0; send < 2; send++) {
        coll_request req = {.kind = COLL_ALLTOALL, .bytes = S, .algo = ALGO_DIRECT, .proto = PROTO_SIMPLE,
                            .nchannels = 1, .a2a_w = m, .a2a_send = send, .a2a_matrix = true};
        coll_result res;
        CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
        ASSERT_REL(res.time_us, 12 / 1.125 / (N - 1) * floor_us + 8.4 + 3.4, 1e-3);
        req.a2a_w = ones;
        CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
        ASSERT_REL(res.time_us, floor_us + 8.4 + 3.4, 1e-5);
    }
    fabric_free(f);
}

static void test_coll_alltoall_direct(void)
{
    fabric *f;
    fab_node_id g[N];
    coll_system sys = star(&f, g);
    uint64_t S = 64 << 20;
    double floor_us = (double)S * (N - 1) / N / BW * 1e6;
    double t = run(&sys, COLL_ALLTOALL, ALGO_DIRECT, S, 1);
    CU_ASSERT(t >= floor_us);
    /* + NCCL's Simple base latency and one NVLink step (8.4 + 3.4 us): the
     * pieces cut through the switch, so no per-hop fill */
    ASSERT_REL(t, floor_us + 8.4 + 3.4, 1e-5);
    /* sendrecv moves 512 KiB NVLink chunks stored and forwarded at the switch:
     * one chunk's time more */
    t = run(&sys, COLL_SENDRECV, ALGO_DIRECT, S, 1);
    ASSERT_REL(t, (double)(S + (512 << 10)) / BW * 1e6 + 8.4 + 3.4, 1e-5);
    fabric_free(f);

    coll_system two;
    topo *tp = shipped("dgx-h100", (topo_opts){.nodes = 2}, &two);
    const uint64_t sizes[] = {64u << 20, 1u << 30};
    for (int i = 0; i < 2; i++) {
        coll_request req = {.kind = COLL_ALLTOALL, .bytes = sizes[i], .algo = ALGO_DIRECT, .proto = PROTO_SIMPLE,
                            .nchannels = 1};
        coll_result cut, exact;
        run_fast_and_exact(&two, &req, &cut, &exact);
        ASSERT_REL(cut.time_us, exact.time_us, 0.025); /* 64 MiB: 1.7%, the chunks' per-hop fill */
        CU_ASSERT(cut.events * 3 < exact.events);
        /* half of each GPU's bytes leave the server through its 400G NIC */
        CU_ASSERT(cut.time_us >= (double)sizes[i] / 2 / 50e9 * 1e6);
    }
    topo_free(tp);
    tp = shipped("dgx-a100", (topo_opts){.nodes = 2}, &two);
    coll_request req = {.kind = COLL_ALLTOALL, .bytes = 64u << 20, .algo = ALGO_DIRECT, .proto = PROTO_SIMPLE,
                        .nchannels = 1};
    coll_result a, b;
    run_fast_and_exact(&two, &req, &a, &b);
    CU_ASSERT_EQUAL(a.time_us, b.time_us);
    topo_free(tp);
}

/* Gather and scatter: N-1 blocks of S/N into (out of) the root, in 512 KiB
 * NVLink chunks stored and forwarded at the switch: the root's link carries
 * (N-1)/N x S, plus one chunk's fill before it and NCCL's Simple base
 * latency and NVLink step (8.4 + 3.4 us); on the symmetric star both take the
 * same time whichever rank is the root. On 2 DGX H100s a gather's remote
 * blocks all reach the root through its own NIC (50 GB/s), a scatter's leave
 * by PXN through the receivers' rails: gather at least the 8 remote blocks at
 * 50 GB/s, scatter under half of that. */
static void test_coll_gather_scatter_direct(void)
{
    fabric *f;
    fab_node_id g[N];
    coll_system sys = star(&f, g);
    uint64_t S = 64 << 20;
    double floor_us = (double)S * (N - 1) / N / BW * 1e6, chunk_us = (double)(512 << 10) / BW * 1e6;
    double tg = run(&sys, COLL_GATHER, ALGO_DIRECT, S, 1), ts = run(&sys, COLL_SCATTER, ALGO_DIRECT, S, 1);
    CU_ASSERT(tg >= floor_us + 8.4 + 3.4);
    CU_ASSERT(tg <= floor_us + chunk_us + 8.4 + 3.4 + 0.01);
    ASSERT_REL(ts, tg, 1e-6);
    coll_request req = {.kind = COLL_GATHER, .bytes = S, .algo = ALGO_DIRECT, .proto = PROTO_SIMPLE, .nchannels = 1,
                        .root = N - 1};
    coll_result res;
    GError *err = NULL;
    CU_ASSERT_FATAL(coll_run(&sys, &req, &res, &err));
    ASSERT_REL(res.time_us, tg, 1e-6);
    /* the tuner: Direct, LL while a block is at most NCCL_P2P_LL_THRESHOLD */
    coll_request t = {0};
    CU_ASSERT(coll_tune(&sys, COLL_SCATTER, (uint64_t)N * 16384, 0, 0, &t, NULL) && t.algo == ALGO_DIRECT &&
              t.proto == PROTO_LL);
    CU_ASSERT(coll_tune(&sys, COLL_SCATTER, (uint64_t)N * 16384 + N, 0, 0, &t, NULL) && t.proto == PROTO_SIMPLE);
    fabric_free(f);

    coll_system two;
    topo *tp = shipped("dgx-h100", (topo_opts){.nodes = 2}, &two);
    uint64_t B = 256u << 20;
    double remote_us = (double)B / 2 / 50e9 * 1e6;
    tg = run(&two, COLL_GATHER, ALGO_DIRECT, B, 1);
    ts = run(&two, COLL_SCATTER, ALGO_DIRECT, B, 1);
    CU_ASSERT(tg >= remote_us);
    CU_ASSERT(ts < remote_us / 2);
    topo_free(tp);
}

/* PXN: sendrecv's cross-server pairs (rank 8k+7 -> 8k+8: rail 7 -> rail 0)
 * leave through the receiver's rail via NVLink, so on 16 DGX H100s whose
 * leaves are 4:1 oversubscribed they never climb to a spine: twice the
 * bandwidth of the same run with pxn=off, which crosses the spines. */
static void test_coll_sendrecv_pxn_stays_on_rails(void)
{
    double t[2];
    for (int off = 0; off < 2; off++) {
        const char *sets[] = {"oversubscription=4", off ? "pxn=off" : "pxn=on", NULL};
        coll_system sys;
        topo *tp = shipped("dgx-h100", (topo_opts){.nodes = 16, .sets = sets}, &sys);
        t[off] = run(&sys, COLL_SENDRECV, ALGO_DIRECT, 256u << 20, 1);
        topo_free(tp);
    }
    CU_ASSERT(t[1] > 1.8 * t[0]);
    CU_ASSERT(t[1] < 2.2 * t[0]);
}

/* collective --timeline: recording does not change the run; the span is
 * setup then transfers up to the collective's time; a link track's slices
 * never overlap, and GPU 0's uplink served the ring's 2(n-1)/n S. */
static void test_coll_timeline_records_the_run(void)
{
    fabric *f;
    fab_node_id g[N];
    coll_system sys = star(&f, g);
    sys.launch_us = 2.5;
    uint64_t S = 4 << 20;
    coll_request req = {.kind = COLL_ALL_REDUCE, .bytes = S, .algo = ALGO_RING, .proto = PROTO_SIMPLE, .nchannels = 2};
    coll_result plain, rec;
    GError *err = NULL;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &plain, &err));
    fabric_set_recording(f, true);
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &rec, &err));
    CU_ASSERT_EQUAL(rec.time_us, plain.time_us);
    CU_ASSERT_EQUAL(rec.events, plain.events);
    char *out = NULL; /* a name of this run's own (another test run may be writing beside it) */
    close(g_file_open_tmp("conveyor-test-coll-timeline-XXXXXX.json", &out, NULL));
    double setup = coll_setup_us(&sys, &req);
    CU_ASSERT_DOUBLE_EQUAL(setup, 2.5 + 8.4, 1e-9); /* launch + Ring/Simple base latency */
    CU_ASSERT_TRUE_FATAL(timeline_write_coll(out, "all_reduce 4 MiB", setup, NULL, rec.time_us, f, 8, &err));
    fabric_set_recording(f, false);
    char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(out, &text, NULL, NULL));
    cJSON *root = cJSON_Parse(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    double span_end = 0, last_end[64] = {0};
    int overlaps = 0, uplink = -1;
    uint64_t up_bytes = 0;
    cJSON *ev = cJSON_GetObjectItem(root, "traceEvents");
    for (cJSON *e = ev ? ev->child : NULL; e; e = e->next) {
        const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
        int pid = cJSON_GetObjectItem(e, "pid")->valueint;
        cJSON *tid = cJSON_GetObjectItem(e, "tid"), *args = cJSON_GetObjectItem(e, "args");
        if (!strcmp(ph, "M") && pid == 1 && tid && !strcmp(cJSON_GetObjectItem(args, "name")->valuestring, "gpu0->sw"))
            uplink = tid->valueint;
        if (strcmp(ph, "X"))
            continue;
        double ts = cJSON_GetObjectItem(e, "ts")->valuedouble, dur = cJSON_GetObjectItem(e, "dur")->valuedouble;
        if (pid == 0) {
            if (ts + dur > span_end)
                span_end = ts + dur;
            continue;
        }
        int t = tid->valueint;
        CU_ASSERT_FATAL(t >= 0 && t < 64);
        overlaps += ts < last_end[t] - 1e-6;
        last_end[t] = ts + dur;
        if (t == uplink)
            up_bytes += (uint64_t)cJSON_GetObjectItem(args, "bytes")->valuedouble;
    }
    CU_ASSERT_DOUBLE_EQUAL(span_end, rec.time_us, 1e-6);
    CU_ASSERT(uplink >= 0);
    CU_ASSERT_EQUAL(overlaps, 0);
    CU_ASSERT_EQUAL(up_bytes, 2 * (N - 1) * S / N);
    cJSON_Delete(root);
    g_free(text);
    remove(out);
    g_free(out);
    fabric_free(f);
}


/* The host launch: one thread prepares each of its GPUs' kernels, each
 * channel's work included, one after another (docs/collectives.md,
 * "Launch"). The transfers do not change: only the setup grows, by
 * g x channels x launch_ch_us. */
static void test_coll_launch_per_channel(void)
{
    coll_system sys;
    topo *t = shipped("dgx-a100", (topo_opts){0}, &sys);
    CU_ASSERT_DOUBLE_EQUAL(sys.launch_ch_us, COLL_LAUNCH_CH_US, 1e-12);
    sys.launch_us = 2.5;
    sys.launch_ch_us = 0.1;
    sys.gpus_per_thread = 8;
    coll_request req = {.kind = COLL_ALL_GATHER, .bytes = 1u << 20, .algo = ALGO_RING, .proto = PROTO_LL, .nchannels = 24};
    /* 8 x (2.5 + 24 x 0.1) + Ring/LL base latency 6.6 */
    CU_ASSERT_DOUBLE_EQUAL(coll_setup_us(&sys, &req), 8 * (2.5 + 2.4) + 6.6, 1e-9);
    coll_result with, without;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &with, NULL));
    sys.launch_ch_us = 0;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &without, NULL));
    CU_ASSERT_DOUBLE_EQUAL(with.time_us - without.time_us, 8 * 24 * 0.1, 1e-6);
    CU_ASSERT_EQUAL(with.events, without.events);
    /* one GPU per thread (one process per GPU): 24 x 0.1 us once */
    sys.launch_ch_us = 0.1;
    sys.gpus_per_thread = 1;
    CU_ASSERT_DOUBLE_EQUAL(coll_setup_us(&sys, &req), 2.5 + 2.4 + 6.6, 1e-9);
    topo_free(t);
}

/* enqueue.cc's small-size channel drop applies to Tree as to Ring
 * ("Ring/Tree channel tuning": nBytes < nc x nthreads x threshold), with
 * the threshold x nRanks only for Ring/LL. */
static void test_coll_tuner_small_tree_channels(void)
{
    coll_system sys;
    topo *t = shipped("dgx-a100", (topo_opts){.nodes = 2}, &sys);
    coll_request req;
    uint32_t tree = 1u << ALGO_TREE, ring = 1u << ALGO_RING;
    CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, 1024, tree, 1u << PROTO_LL, &req, NULL));
    CU_ASSERT_EQUAL(req.nchannels, 1);
    CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, 65536, tree, 1u << PROTO_LL, &req, NULL));
    CU_ASSERT_EQUAL(req.nchannels, 16); /* 65536 / (512 threads x 8 B) */
    CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, 65536, tree, 1u << PROTO_LL128, &req, NULL));
    CU_ASSERT_EQUAL(req.nchannels, 12); /* 65536 / (640 x 8) = 12.8 */
    CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, 65536, tree, 1u << PROTO_SIMPLE, &req, NULL));
    CU_ASSERT_EQUAL(req.nchannels, 2); /* 65536 / (512 x 64) */
    CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, 1u << 30, tree, 1u << PROTO_SIMPLE, &req, NULL));
    CU_ASSERT_EQUAL(req.nchannels, coll_channels(&sys, ALGO_TREE));
    /* Ring/LL: the threshold is x 16 ranks */
    CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, 65536, ring, 1u << PROTO_LL, &req, NULL));
    CU_ASSERT_EQUAL(req.nchannels, 1);
    topo_free(t);
}


/* The "Latency/AlgBw" table (NCCL_DEBUG_SUBSYS=TUNING) holds what the tuner
 * decides with: a call's modelled time is latency + bytes / algbw where no
 * per-call term applies (NVLS), the ring's algbw is busBw x n / nsteps for
 * every collective (all_gather 7 steps, all_reduce 14 on 8 GPUs), NVLS
 * carries NCCL's 25 us hwLat, Tree's caps compose as tuning.cc's (0.92 for
 * every protocol, then LL's and LL128's), and pairs the tuner never
 * considers (NVLSTree on one node; Direct, not one of NCCL's algorithms)
 * are 0/0. */
static void test_coll_tuner_table(void)
{
    coll_system sys;
    topo *t = shipped("dgx-h100", (topo_opts){0}, &sys);
    double lat, bw, lat2, bw2, model;
    coll_request req;
    CU_ASSERT_TRUE_FATAL(coll_tune_table(&sys, COLL_ALL_REDUCE, ALGO_NVLS, PROTO_SIMPLE, &lat, &bw));
    CU_ASSERT_DOUBLE_EQUAL(lat, 25.0, 1e-9);
    CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, 1ull << 30, 1u << ALGO_NVLS, 0, &req, &model));
    CU_ASSERT_DOUBLE_EQUAL(model, lat + (double)(1ull << 30) / (1000.0 * bw), 1e-6);
    CU_ASSERT_TRUE_FATAL(coll_tune_table(&sys, COLL_ALL_REDUCE, ALGO_RING, PROTO_SIMPLE, &lat, &bw));
    CU_ASSERT_TRUE_FATAL(coll_tune_table(&sys, COLL_ALL_GATHER, ALGO_RING, PROTO_SIMPLE, &lat2, &bw2));
    CU_ASSERT_DOUBLE_EQUAL(bw2, 2 * bw, 1e-9);
    CU_ASSERT(lat2 < lat); /* 7 steps against 14 */
    /* Tree on one node (a chain; tuning.cc disables only NVLSTree there):
     * busBw = min(0.92 x the ring's busBw, nCh x 38.7) for every protocol,
     * then LL / 3.8 and LL128 x 7/9 (one node), algbw = busBw / 2 */
    double ring_bus = bw * 14 / 8, tl, ts, tll, tl128;
    CU_ASSERT_TRUE_FATAL(coll_tune_table(&sys, COLL_ALL_REDUCE, ALGO_TREE, PROTO_SIMPLE, &tl, &ts));
    CU_ASSERT_DOUBLE_EQUAL(ts, 0.5 * 0.92 * ring_bus, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(tl, coll_base_lat_us(ALGO_TREE, PROTO_SIMPLE) +
                                   2 * 7 * coll_hw_lat_us(0, ALGO_TREE, PROTO_SIMPLE), 1e-9);
    CU_ASSERT_TRUE_FATAL(coll_tune_table(&sys, COLL_ALL_REDUCE, ALGO_TREE, PROTO_LL, &lat2, &tll));
    CU_ASSERT_DOUBLE_EQUAL(tll, ts / 3.8, 1e-6);
    CU_ASSERT_TRUE_FATAL(coll_tune_table(&sys, COLL_ALL_REDUCE, ALGO_TREE, PROTO_LL128, &lat2, &tl128));
    CU_ASSERT_DOUBLE_EQUAL(tl128, ts * 7 / 9, 1e-6);
    CU_ASSERT_FALSE(coll_tune_table(&sys, COLL_ALL_REDUCE, ALGO_NVLS_TREE, PROTO_SIMPLE, &lat, &bw));
    CU_ASSERT_EQUAL(lat, 0);
    CU_ASSERT_EQUAL(bw, 0);
    CU_ASSERT_FALSE(coll_tune_table(&sys, COLL_ALLTOALL, ALGO_DIRECT, PROTO_SIMPLE, &lat, &bw));
    topo_free(t);
    /* NVLSTree across 2 nodes: per channel min(NVLS side, 2 x one network
     * device's speed, perChMaxNVLSTreeBw 57.7), x channels x n/nsteps. On
     * p5 NCCL sees 100G EFA devices (12.5 GB/s): 16 x 25 x 16/30 = 213.3
     * GB/s; DGX H100's 400G NICs leave the NVLS side (as on one node) */
    coll_system p5, h2;
    topo *tp = shipped("aws-p5", (topo_opts){.nodes = 2}, &p5), *th = shipped("dgx-h100", (topo_opts){.nodes = 2}, &h2);
    CU_ASSERT_DOUBLE_EQUAL(p5.net_dev_Bps, 12.5e9, 1);
    CU_ASSERT_EQUAL(coll_channels(&p5, ALGO_NVLS_TREE), 16);
    CU_ASSERT_TRUE_FATAL(coll_tune_table(&p5, COLL_ALL_REDUCE, ALGO_NVLS_TREE, PROTO_SIMPLE, &lat, &bw));
    CU_ASSERT_DOUBLE_EQUAL(bw, 16 * 25.0 * 16 / 30, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(lat, 25 + 2 * 20.9, 1e-9);
    CU_ASSERT_TRUE_FATAL(coll_tune_table(&h2, COLL_ALL_REDUCE, ALGO_NVLS_TREE, PROTO_SIMPLE, &lat, &bw2));
    CU_ASSERT(bw2 > bw * 1.2);
    topo_free(tp);
    topo_free(th);
}

/* NCCL reads from the peer in the Simple protocol between sm 8.0 GPUs over
 * NVLink (paths.cc): each step first sends the read request across the
 * route, one wire latency more than a write. */
static void test_coll_p2p_read_ampere(void)
{
    coll_system sys;
    topo *t = shipped("dgx-a100", (topo_opts){0}, &sys);
    const fab_route *r = fabric_route(sys.fab, sys.gpu[0], sys.gpu[1], 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_TRUE(coll_p2p_reads(&sys, sys.fab, r, PROTO_SIMPLE));
    CU_ASSERT_FALSE(coll_p2p_reads(&sys, sys.fab, r, PROTO_LL));
    CU_ASSERT_FALSE(coll_p2p_reads(&sys, sys.fab, r, PROTO_LL128));
    int64_t wire = fabric_route_lat_ps(sys.fab, r);
    CU_ASSERT(wire > 0);
    /* one channel, one chunk: the 14 steps of an 8-rank ring are in
     * sequence, each sent as 2 slices (Simple: SLICESTEPS 2 of CHUNKSTEPS
     * 4), each slice paying the step latency and the request's wire trip
     * before its copy (24 GB/s, the block's rate); a (writing) sm 8.6
     * pays neither in its block */
    coll_request req = {.kind = COLL_ALL_REDUCE, .bytes = 8 * 65536, .algo = ALGO_RING, .proto = PROTO_SIMPLE, .nchannels = 1};
    coll_result rd, wr;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &rd, NULL));
    sys.gpu_sm = 86;
    CU_ASSERT_FALSE(coll_p2p_reads(&sys, sys.fab, r, PROTO_SIMPLE));
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &wr, NULL));
    double c = 32768 / (coll_block_simple_GBps(80) * 1e9) * 1e6;
    CU_ASSERT(rd.time_us >= 8.4 + 28 * (3.4 + wire / 1e6 + c));
    CU_ASSERT(rd.time_us - wr.time_us >= 28 * wire / 1e6);
    topo_free(t);
    /* Hopper writes; PCIe paths write */
    topo *th = shipped("dgx-h100", (topo_opts){0}, &sys);
    r = fabric_route(sys.fab, sys.gpu[0], sys.gpu[1], 0, NULL);
    CU_ASSERT_FALSE(coll_p2p_reads(&sys, sys.fab, r, PROTO_SIMPLE));
    topo_free(th);
}


/* NCCL's rings on an NVLink mesh (the DGX-1's hybrid cube mesh): every hop
 * a direct NVLink, no pair carrying more rings one way than it has links,
 * one ring per NVLink a GPU has; NVSwitch and PCIe systems keep GPU order.
 * Rank order sent two of the eight hops through host memory (13.8 GB/s
 * busbw at 1 GiB); on the rings the links bind. */
/* NCCL's double binary tree (coll_dtree) against the pictures in NCCL's
 * trees.cc (14 ranks; the mirrored tree of 12, the shifted one of 13), and
 * its properties for 1..300 nodes: one root, parents and children agree,
 * no cycle, and no node but node 0 is an inner node of both trees. */
static void test_coll_dtree(void)
{
    int up, kid[2];
    coll_dtree(14, 0, 0, &up, kid);
    CU_ASSERT(up == -1 && kid[0] == -1 && kid[1] == 8); /* the root has one child */
    coll_dtree(14, 8, 0, &up, kid);
    CU_ASSERT(up == 0 && kid[0] == 4 && kid[1] == 12);
    coll_dtree(14, 12, 0, &up, kid);
    CU_ASSERT(up == 8 && kid[0] == 10 && kid[1] == 13); /* 12 + 2 is past the end: 12 + 1 */
    coll_dtree(14, 13, 0, &up, kid);
    CU_ASSERT(up == 12 && kid[0] == -1 && kid[1] == -1);
    coll_dtree(14, 6, 0, &up, kid);
    CU_ASSERT(up == 4 && kid[0] == 5 && kid[1] == 7);
    coll_dtree(12, 11, 1, &up, kid); /* even: mirrored, root 11 */
    CU_ASSERT(up == -1 && kid[1] == 3);
    coll_dtree(12, 7, 1, &up, kid);
    CU_ASSERT(up == 3 && kid[0] == 9 && kid[1] == 5);
    coll_dtree(13, 1, 1, &up, kid); /* odd: shifted by one, root 1 */
    CU_ASSERT(up == -1 && kid[1] == 9);
    coll_dtree(13, 9, 1, &up, kid);
    CU_ASSERT(up == 1 && kid[0] == 5 && kid[1] == 0);
    coll_dtree(1, 0, 1, &up, kid);
    CU_ASSERT(up == -1 && kid[0] == -1 && kid[1] == -1);
    for (int n = 1; n <= 300; n++) {
        int inner[300] = {0};
        for (int w = 0; w < 2; w++) {
            int roots = 0;
            for (int i = 0; i < n; i++) {
                int pu, pk[2];
                coll_dtree(n, i, w, &up, kid);
                roots += up < 0;
                if (up >= 0) {
                    CU_ASSERT_TRUE_FATAL(up < n);
                    coll_dtree(n, up, w, &pu, pk);
                    CU_ASSERT(pk[0] == i || pk[1] == i);
                }
                for (int j = 0; j < 2; j++)
                    if (kid[j] >= 0) {
                        CU_ASSERT_TRUE_FATAL(kid[j] < n);
                        coll_dtree(n, kid[j], w, &pu, pk);
                        CU_ASSERT_EQUAL(pu, i);
                        inner[i] |= 1 << w;
                    }
                int at = i, hops = 0;
                while (at >= 0 && hops <= n) {
                    coll_dtree(n, at, w, &at, pk);
                    hops++;
                }
                CU_ASSERT(hops <= n);
            }
            CU_ASSERT_EQUAL(roots, 1);
        }
        for (int i = 1; i < n; i++)
            CU_ASSERT(inner[i] != 3);
    }
}

/* The graph NCCL's init log shows (cli/nccl_log.c) is the one simulated:
 * every channel's ring holds every rank once; each channel's tree has one
 * root, every other rank's parent lists it among its children, and every
 * rank reaches the root (no cycle); the transports follow the routes. */
static void check_graph(coll_system *sys)
{
    int n = sys->nranks, nch = coll_channels(sys, ALGO_RING);
    for (int c = 0; c < nch; c++) {
        int *seen = g_new0(int, n), roots = 0;
        for (int i = 0; i < n; i++) {
            int r = coll_ring_rank(sys, c, i);
            CU_ASSERT_TRUE_FATAL(r >= 0 && r < n);
            seen[r]++;
        }
        for (int r = 0; r < n; r++) {
            CU_ASSERT_EQUAL(seen[r], 1);
            int up, down[3], pu, pd[3];
            coll_tree_links(sys, c, nch, r, &up, down);
            roots += up < 0;
            if (up >= 0) {
                coll_tree_links(sys, c, nch, up, &pu, pd);
                CU_ASSERT_TRUE(pd[0] == r || pd[1] == r || pd[2] == r);
            }
            for (int k = 0; k < 3; k++)
                if (down[k] >= 0) {
                    coll_tree_links(sys, c, nch, down[k], &pu, pd);
                    CU_ASSERT_EQUAL(pu, r);
                }
            int hops = 0, at = r; /* up to the root in fewer than n hops */
            while (at >= 0 && hops <= n) {
                coll_tree_links(sys, c, nch, at, &pu, pd);
                at = pu;
                hops++;
            }
            CU_ASSERT_TRUE(hops <= n);
        }
        CU_ASSERT_EQUAL(roots, 1);
        g_free(seen);
    }
}

static void test_coll_init_graph(void)
{
    coll_system sys;
    coll_conn k;
    GError *err = NULL;
    topo *t = shipped("dgx-h100", (topo_opts){.nodes = 4}, &sys);
    check_graph(&sys);
    /* channel c enters a server at local GPU c mod 8 and leaves it from the GPU beside that NIC:
     * the hop between servers goes by NIC c mod 8 on both sides, GPUDirect, no relay */
    for (int c = 0; c < 8; c++) {
        int i = 0;
        while (coll_ring_rank(&sys, c, i) / 8 == coll_ring_rank(&sys, c, i + 1) / 8)
            i++;
        int a = coll_ring_rank(&sys, c, i), b = coll_ring_rank(&sys, c, i + 1);
        CU_ASSERT_EQUAL(b, 8 + c);
        CU_ASSERT_TRUE_FATAL(coll_conn_of(&sys, a, b, (uint32_t)c, true, &k, &err));
        CU_ASSERT_EQUAL(k.kind, COLL_CONN_NET);
        CU_ASSERT_EQUAL(k.net_dev, c);
        CU_ASSERT_EQUAL(k.recv_dev, c);
        CU_ASSERT_EQUAL(k.proxy, -1);
        CU_ASSERT_TRUE(k.gdr && k.recv_gdr);
    }
    /* PXN: GPU 0 to GPU 3 of the next server relays through local GPU 3 and its NIC */
    CU_ASSERT_TRUE_FATAL(coll_conn_of(&sys, 0, 11, 0, true, &k, &err));
    CU_ASSERT_EQUAL(k.kind, COLL_CONN_NET);
    CU_ASSERT_EQUAL(k.proxy, 3);
    CU_ASSERT_EQUAL(k.net_dev, 3);
    CU_ASSERT_TRUE_FATAL(coll_conn_of(&sys, 0, 1, 0, true, &k, &err));
    CU_ASSERT_EQUAL(k.kind, COLL_CONN_P2P);
    CU_ASSERT_FALSE(k.read); /* Hopper writes */
    topo_free(t);
    t = shipped("dgx-a100", (topo_opts){0}, &sys);
    check_graph(&sys);
    CU_ASSERT_TRUE_FATAL(coll_conn_of(&sys, 0, 1, 0, true, &k, &err));
    CU_ASSERT_TRUE(k.kind == COLL_CONN_P2P && k.read); /* Ampere over NVLink reads */
    topo_free(t);
    t = shipped("pcie-gen3-2gpu", (topo_opts){0}, &sys); /* no P2P: through host memory */
    check_graph(&sys);
    CU_ASSERT_TRUE_FATAL(coll_conn_of(&sys, 0, 1, 0, true, &k, &err));
    CU_ASSERT_EQUAL(k.kind, COLL_CONN_SHM);
    topo_free(t);
    t = shipped("dgx1-v100", (topo_opts){.nodes = 3}, &sys); /* a mesh's NVLink rings, 3 servers: a tree with an inner node */
    check_graph(&sys);
    topo_free(t);
}

static void test_coll_ring_mesh_search(void)
{
    coll_system sys;
    topo *t = shipped("dgx1-v100", (topo_opts){0}, &sys);
    CU_ASSERT_EQUAL_FATAL(sys.rings.n, 6);
    CU_ASSERT_EQUAL(sys.rings.ppn, 8);
    CU_ASSERT_DOUBLE_EQUAL(sys.rings.speed_GBps, 20.0, 1e-9); /* 25 GB/s x 0.8 */
    int use[8][8] = {{0}};
    for (int r = 0; r < sys.rings.n; r++) {
        int seen = 0;
        for (int i = 0; i < 8; i++) {
            int a = sys.rings.order[r][i], b = sys.rings.order[r][(i + 1) % 8];
            seen |= 1 << a;
            const fab_route *rt = fabric_route(sys.fab, sys.gpu[a], sys.gpu[b], 0, NULL);
            CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
            CU_ASSERT_EQUAL(rt->nhops, 1);
            CU_ASSERT_EQUAL(fabric_link(sys.fab, rt->hop[0])->kind, LINK_NVLINK);
            CU_ASSERT(++use[a][b] <= fabric_link(sys.fab, rt->hop[0])->count);
        }
        CU_ASSERT_EQUAL(seen, 0xff); /* a permutation */
    }
    coll_request req;
    CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, 1u << 30, 1u << ALGO_RING, 1u << PROTO_SIMPLE, &req, NULL));
    CU_ASSERT_EQUAL(req.nchannels, 12); /* 2 x 6 NVLinks */
    coll_result res;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    double busbw = (1ull << 30) / res.time_us / 1e3 * 2 * 7 / 8;
    CU_ASSERT(busbw > 100 && busbw <= 120); /* at most 6 rings x 20 GB/s */
    CU_ASSERT_EQUAL(fabric_link(sys.fab, res.busiest)->kind, LINK_NVLINK);
    /* a chain from any root follows a ring too */
    req = (coll_request){.kind = COLL_BROADCAST, .bytes = 1u << 30, .root = 5, .algo = ALGO_RING,
                         .proto = PROTO_SIMPLE, .nchannels = 12};
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    CU_ASSERT_EQUAL(fabric_link(sys.fab, res.busiest)->kind, LINK_NVLINK);
    CU_ASSERT((1ull << 30) / res.time_us / 1e3 > 90);
    topo_free(t);
    static const char *const alike[] = {"dgx-a100", "dgx-h100", "pcie-gen4-8gpu-2socket", "hgx-b200"};
    for (size_t i = 0; i < G_N_ELEMENTS(alike); i++) {
        topo *ta = shipped(alike[i], (topo_opts){0}, &sys);
        CU_ASSERT_EQUAL(sys.rings.n, 0);
        topo_free(ta);
    }
    /* a uniform full mesh (4 GPUs, 2 links per pair) is a mesh too: all 3! = 6 cycles from GPU 0 fit,
     * one per NVLink a GPU has (rank order alone used one ring: 39.6 GB/s) */
    topo *tf = shipped("tests/data/topo/full-mesh-4gpu.json", (topo_opts){0}, &sys);
    CU_ASSERT_EQUAL(sys.rings.n, 6);
    CU_ASSERT_TRUE(coll_rings_usable(&sys.rings, sys.fab, sys.gpu, sys.ppn));
    coll_request fr;
    CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, 1u << 30, 1u << ALGO_RING, 1u << PROTO_SIMPLE, &fr, NULL));
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &fr, &res, NULL));
    CU_ASSERT((1ull << 30) / res.time_us / 1e3 * 2 * 3 / 4 > 100);
    topo_free(tf);
    /* NCCL_P2P_DISABLE: the NVLinks carry nothing, the rings are not used (nor their bandwidth by the tuner) */
    topo *td = shipped("dgx1-v100", (topo_opts){0}, &sys);
    coll_nccl_env off = {.p2p_set = true, .p2p_level = FAB_PATH_LOC};
    coll_nccl_env_apply(&off, sys.fab);
    CU_ASSERT_EQUAL(sys.rings.n, 6);
    CU_ASSERT_FALSE(coll_rings_usable(&sys.rings, sys.fab, sys.gpu, sys.ppn));
    topo_free(td);
}

/* Across servers NCCL's search gives channel c the NIC c mod (the server's
 * NICs) and ends the ring beside it where the GPUs' links allow (search.cc,
 * ncclTopoSearchRecNet): on a DGX-1 (4 NICs, each beside 2 GPUs; 6 NVLink
 * rings) the 12 channels enter each server 3 per NIC, and the rings that
 * have two GPUs of one NIC next to each other leave from the second of them;
 * the ring is then bound by the NICs, not by one of them (two channels more
 * on NICs 0 and 1 before: 35.7 GB/s busbw at 1 GiB). On a DGX-2 (16 GPUs, 8
 * NICs) the channels cycle over the 8 NICs before a NIC's second GPU. */
static void test_coll_ring_nics_cycle(void)
{
    coll_system sys;
    topo *t = shipped("dgx1-v100", (topo_opts){.nodes = 2}, &sys);
    CU_ASSERT_EQUAL_FATAL(sys.ring_nics, 4);
    check_graph(&sys);
    coll_request req;
    CU_ASSERT_TRUE_FATAL(coll_tune(&sys, COLL_ALL_REDUCE, 1u << 30, 1u << ALGO_RING, 1u << PROTO_SIMPLE, &req, NULL));
    int per_nic[4] = {0}, beside = 0;
    for (int c = 0; c < req.nchannels; c++) {
        int i = 0;
        while (coll_ring_rank(&sys, c, i) / 8 == coll_ring_rank(&sys, c, i + 1) / 8)
            i++;
        int last = coll_ring_rank(&sys, c, i), entry = coll_ring_rank(&sys, c, i + 1) - 8;
        CU_ASSERT_EQUAL(entry / 2, c % 4); /* GPUs 2k and 2k+1 sit beside NIC k */
        per_nic[entry / 2]++;
        beside += last / 2 == entry / 2;
    }
    for (int k = 0; k < 4; k++)
        CU_ASSERT_EQUAL(per_nic[k], req.nchannels / 4);
    CU_ASSERT(beside >= req.nchannels / 2); /* rings 0, 5 at every NIC, 3, 4 at NICs 1, 2 */
    coll_result res;
    CU_ASSERT_TRUE_FATAL(coll_run(&sys, &req, &res, NULL));
    double busbw = (1ull << 30) / res.time_us / 1e3 * 2 * 15 / 16;
    CU_ASSERT(busbw > 0.9 * sys.net_Bps / 1e9 && busbw <= sys.net_Bps / 1e9);
    topo_free(t);
    t = shipped("dgx2-v100", (topo_opts){.nodes = 2}, &sys);
    CU_ASSERT_EQUAL_FATAL(sys.ring_nics, 8);
    check_graph(&sys);
    for (int c = 0; c < 16; c++)
        CU_ASSERT_EQUAL(sys.ring_entry[c], 2 * (c % 8) + c / 8);
    topo_free(t);
}

int main(void)
{
    static const test_case cases[] = {
        {"/coll/ring/fold-matches-full", test_coll_ring_fold_matches_full},
        {"/coll/ring/nics-cycle", test_coll_ring_nics_cycle},
        {"/coll/channels/one-gpu-per-server", test_coll_channels_one_gpu_per_server},
        {"/coll/ring/allreduce-alpha-beta", test_coll_ring_allreduce_matches_alpha_beta},
        {"/coll/ring/chain-closed-form", test_coll_ring_chain_closed_form},
        {"/coll/ring/channels-share-links", test_coll_ring_channels_share_links},
        {"/coll/timeline/records-the-run", test_coll_timeline_records_the_run},
        {"/coll/ring/shm-passes", test_coll_ring_shm_passes},
        {"/coll/ring/net-overhead-per-step", test_coll_ring_net_overhead_per_step},
        {"/coll/one-rank-is-a-copy", test_coll_one_rank_is_a_copy},
        {"/coll/tree/one-gpu-per-node-pipelines", test_coll_tree_one_gpu_per_node_pipelines},
        {"/coll/tree/chain-writes-hide-latency", test_coll_tree_chain_writes_hide_latency},
        {"/coll/tree/chains-share-links", test_coll_tree_chains_share_links},
        {"/coll/tree/one-node-chain", test_coll_tree_one_node_chain},
        {"/coll/uneven-group-runs-ring", test_coll_uneven_group_runs_ring},
        {"/coll/ring/allgather-half-the-steps", test_coll_allgather_n_minus_1_steps},
        {"/coll/invariants/bytes-and-utilisation", test_coll_bytes_conserved_and_links_at_most_full},
        {"/coll/nvls/beats-ring-by-physical-factor", test_coll_nvls_beats_ring_by_physical_factor},
        {"/coll/tuner/h100-ll-small-nvls-large", test_coll_tuner_h100_ll_small_nvls_large},
        {"/coll/tuner/nvls-needs-three-gpus", test_coll_tuner_nvls_needs_three_gpus},
        {"/coll/nvls/chunk-window", test_coll_nvls_chunk_window},
        {"/coll/nvls/allgather-reducescatter", test_coll_nvls_allgather_reducescatter},
        {"/coll/nvlstree/two-nodes-physical-limit", test_coll_nvlstree_two_nodes_physical_limit},
        {"/coll/nvlstree/depth-keeps-rate", test_coll_nvlstree_depth_keeps_rate},
        {"/coll/tree/four-nodes-network-bound", test_coll_tree_four_nodes_network_bound},
        {"/coll/pat/log-steps-one-gpu-per-node", test_coll_pat_log_steps_one_gpu_per_node},
        {"/coll/collnet/sharp-reduces-in-network", test_coll_collnet_sharp_reduces_in_network},
        {"/coll/collnet/chain", test_coll_collnet_chain},
        {"/coll/tuner/algo-spec-parsing", test_coll_algo_spec_parsing},
        {"/coll/channels/nccl-knobs", test_coll_channel_knobs},
        {"/coll/channels/nccl-knobs-from-env", test_coll_channel_knobs_from_env},
        {"/coll/ring/one-block-rate", test_coll_ring_one_block_rate},
        {"/coll/alltoall/direct", test_coll_alltoall_direct},
        {"/coll/alltoall/uneven", test_coll_alltoall_uneven},
        {"/coll/gather-scatter/direct", test_coll_gather_scatter_direct},
        {"/coll/sendrecv/pxn-stays-on-rails", test_coll_sendrecv_pxn_stays_on_rails},
        {"/coll/launch/per-channel", test_coll_launch_per_channel},
        {"/coll/tuner/small-tree-channels", test_coll_tuner_small_tree_channels},
        {"/coll/tuner/table", test_coll_tuner_table},
        {"/coll/nvls/flag-per-chunk", test_coll_nvls_flag_per_chunk},
        {"/coll/ring/p2p-read-ampere", test_coll_p2p_read_ampere},
        {"/coll/ring/mesh-search", test_coll_ring_mesh_search},
        {"/coll/init-graph", test_coll_init_graph},
        {"/coll/tree/dtree", test_coll_dtree},
        {0},
    };
    return test_main("coll", cases);
}

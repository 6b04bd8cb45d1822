/* Tests of models/replay and the native trace format: closed forms
 * (compute then all_reduce on an idle system), overlap of compute and
 * communication on two streams, dependency chains, a send/recv pipeline,
 * and the errors for mismatched, unmatched and deadlocking traces. */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "models/replay.h"
#include "testutil.h"
#include "topologies/topo.h"
#include "traces/native.h"
#include "traces/timeline.h"

#include <cjson/cJSON.h>

static topo *two_gpus(coll_system *sys, int gpus)
{
    GError *err = NULL;
    topo *t = topo_load("dgx-h100", &(topo_opts){.gpus = gpus}, &err);
    CU_ASSERT_PTR_NOT_NULL(t);
    topo_coll_system(sys, t, 0, 1);
    return t;
}

static trace *parse(const char *json, GError **err)
{
    char *path = g_strdup("/tmp/conveyor-test-trace-XXXXXX.json");
    int fd = g_mkstemp(path);
    g_assert(fd >= 0);
    g_assert(write(fd, json, strlen(json)) == (ssize_t)strlen(json));
    close(fd);
    const char *p = path;
    trace *t = trace_native_load(&p, 1, err);
    remove(path);
    g_free(path);
    return t;
}

/* the simulated duration of one all_reduce on this system, alone */
static double coll_alone_us(const coll_system *sys, uint64_t bytes)
{
    coll_request req;
    CU_ASSERT_TRUE(coll_tune(sys, COLL_ALL_REDUCE, bytes, 0, 0, &req, NULL));
    coll_result res;
    CU_ASSERT_TRUE(coll_run(sys, &req, &res, NULL));
    return res.time_us;
}

static trace *spmd_trace(int nranks, ...) G_GNUC_NULL_TERMINATED;

/* The trace of an SPMD program, written once for every rank: each of nranks
 * ranks runs the ops that follow (to a NULL), in order. An op is its JSON
 * object less the rank, as a printf format given the rank's peer (the next
 * rank round a ring), which most leave unused. */
static trace *spmd_trace(int nranks, ...)
{
    GString *json = g_string_new("{\"ops\": [");
    const char *sep = "";
    for (int r = 0; r < nranks; r++) {
        va_list ap;
        va_start(ap, nranks);
        for (const char *op; (op = va_arg(ap, const char *)); sep = ",") {
            g_string_append_printf(json, "%s{\"rank\":%d,", sep, r);
            g_string_append_printf(json, op, (r + 1) % nranks);
            g_string_append_c(json, '}');
        }
        va_end(ap);
    }
    g_string_append(json, "]}");
    trace *t = parse(json->str, NULL);
    g_string_free(json, TRUE);
    return t;
}

/* A trace replayed on one server's GPUs, compute at its traced speed: what
 * most tests set up, run (tuning o first), check and tear down. */
typedef struct {
    coll_system sys;
    topo *tp;
    trace *t;
    replay_opts o;
    replay_result res;
    GError *err;
} rig;

/* t is taken over; one that failed to load (NULL) fails the test. */
static void rig_open(rig *g, int gpus, trace *t)
{
    *g = (rig){.t = t};
    g->tp = two_gpus(&g->sys, gpus);
    g->o = (replay_opts){.sys = &g->sys, .compute_scale = 1};
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
}

static void rig_close(rig *g)
{
    g_clear_error(&g->err);
    replay_result_clear(&g->res);
    trace_free(g->t);
    topo_free(g->tp);
}

/* Two ranks, each: forward, backward 1, its all_reduce on stream 1 beside
 * backward 2, backward 2's all_reduce, then the optimizer. */
static trace *overlap_example(void)
{
    const char *p = "docs/examples/two-rank-overlap.json";
    return trace_native_load(&p, 1, NULL);
}

/* Collectives launched in one NCCL group (a fused op follows a collective of
 * its group on its stream): one kernel, so the second pays NCCL's base
 * latency but no host launch of its own. Back to back on an idle server,
 * the step is shorter by exactly that launch; where one member launched it
 * alone, the collective pays it. The native writer keeps the flag (and a
 * broadcast's root). */
static void test_replay_fused_group_one_launch(void)
{
    const char *ar = "\"kind\":\"all_reduce\",\"bytes\":\"64K\",\"group\":[0,1]";
    char fused[256];
    g_snprintf(fused, sizeof fused, "%s,\"fused\":true", ar);
    rig a, b;
    rig_open(&a, 2, spmd_trace(2, ar, ar, NULL));
    rig_open(&b, 2, spmd_trace(2, ar, fused, NULL));
    a.sys.launch_us = b.sys.launch_us = COLL_LAUNCH_US; /* (the rig launches for free) */
    coll_request req;
    CU_ASSERT_TRUE(coll_tune(&a.sys, COLL_ALL_REDUCE, 64 << 10, 0, 0, &req, NULL));
    double host = coll_setup_host_us(&a.sys, &req);
    CU_ASSERT_TRUE(host > 2);
    CU_ASSERT_TRUE_FATAL(replay_run(a.t, &a.o, &a.res, &a.err));
    CU_ASSERT_TRUE_FATAL(replay_run(b.t, &b.o, &b.res, &b.err));
    ASSERT_REL((a.res.end_ps - b.res.end_ps) / 1e6, host, 1e-6);
    CU_ASSERT_FALSE(g_array_index(b.res.colls, replay_coll, 0).fused);
    CU_ASSERT_TRUE(g_array_index(b.res.colls, replay_coll, 1).fused);
    /* the same with reuse of isolated runs: the fused one is its own shape */
    coll_system iso = a.sys;
    topo *itp = topo_load("dgx-h100", &(topo_opts){.gpus = 2}, NULL);
    topo_coll_system(&iso, itp, COLL_LAUNCH_US, 1);
    replay_result_clear(&b.res);
    b.o.iso = &iso;
    CU_ASSERT_TRUE_FATAL(replay_run(b.t, &b.o, &b.res, &b.err));
    ASSERT_REL((a.res.end_ps - b.res.end_ps) / 1e6, host, 1e-6);
    CU_ASSERT_EQUAL(b.res.memo_runs, 2);
    topo_free(itp);
    rig_close(&b);
    /* only rank 0 launched it with the one before: rank 1's launch is paid */
    char one[512];
    g_snprintf(one, sizeof one, "{\"ops\": [{\"rank\":0,%s},{\"rank\":0,%s},{\"rank\":1,%s},{\"rank\":1,%s}]}",
               ar, fused, ar, ar);
    rig_open(&b, 2, parse(one, NULL));
    b.sys.launch_us = COLL_LAUNCH_US;
    CU_ASSERT_TRUE_FATAL(replay_run(b.t, &b.o, &b.res, &b.err));
    CU_ASSERT_EQUAL(b.res.end_ps, a.res.end_ps);
    CU_ASSERT_FALSE(g_array_index(b.res.colls, replay_coll, 1).fused);
    /* written and read back: fused and a broadcast's root survive */
    rig_close(&b);
    trace *t = spmd_trace(2, ar, fused, "\"kind\":\"broadcast\",\"bytes\":\"1K\",\"group\":[0,1],\"root\":1", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    char *path = g_strdup("/tmp/conveyor-test-fused-XXXXXX.json");
    int fd = g_mkstemp(path);
    close(fd);
    CU_ASSERT_TRUE(trace_native_write_json(t, path, NULL));
    const char *pp = path;
    trace *u = trace_native_load(&pp, 1, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(u);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_FALSE(g_array_index(u->ranks[r].ops, trace_op, 0).fused);
        CU_ASSERT_TRUE(g_array_index(u->ranks[r].ops, trace_op, 1).fused);
        CU_ASSERT_EQUAL(g_array_index(u->ranks[r].ops, trace_op, 2).root, 1);
    }
    remove(path);
    g_free(path);
    trace_free(u);
    trace_free(t);
    rig_close(&a);
}

static void test_replay_compute_then_allreduce_closed_form(void)
{
    rig g;
    rig_open(&g, 2,
             spmd_trace(2, "\"id\":\"c\",\"kind\":\"compute\",\"dur_us\":100",
                        "\"kind\":\"all_reduce\",\"bytes\":\"64M\",\"stream\":0", NULL));
    double ar = coll_alone_us(&g.sys, 64 << 20);
    CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
    ASSERT_REL(g.res.end_ps / 1e6, 100 + ar, 1e-6);
    CU_ASSERT_EQUAL(g.res.ranks[0].compute_ps, 100 * SIM_US);
    ASSERT_REL(g.res.ranks[0].exposed_comm_ps / 1e6, ar, 1e-6);
    CU_ASSERT_EQUAL(g.res.colls->len, 1);
    /* compute twice as fast: 50 us less */
    replay_result_clear(&g.res);
    g.o.compute_scale = 0.5;
    CU_ASSERT_TRUE(replay_run(g.t, &g.o, &g.res, &g.err));
    ASSERT_REL(g.res.end_ps / 1e6, 50 + ar, 1e-6);
    rig_close(&g);
}

/* A collective of 0 bytes: NCCL discards it ("Empty collectives can be
 * discarded", taskAppend), so no rank waits at it for the others. Rank 0
 * computes 100 us before it and 10 after, rank 1 100 after: the step is
 * 110 us, not the 200 a rendezvous would make it; the sweep's 0-byte call
 * takes no time either. */
static void test_replay_empty_collective_waits_for_nobody(void)
{
    rig g;
    rig_open(&g, 2,
             parse("{\"ops\": [{\"rank\": 0, \"kind\": \"compute\", \"dur_us\": 100},"
                   "{\"rank\": 0, \"kind\": \"all_reduce\", \"bytes\": 0},"
                   "{\"rank\": 0, \"kind\": \"compute\", \"dur_us\": 10},"
                   "{\"rank\": 1, \"kind\": \"all_reduce\", \"bytes\": 0},"
                   "{\"rank\": 1, \"kind\": \"compute\", \"dur_us\": 100}]}",
                   NULL));
    CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
    CU_ASSERT_EQUAL(g.res.end_ps, 110 * SIM_US);
    CU_ASSERT_EQUAL(g.res.empty_colls, 2);
    CU_ASSERT_EQUAL(g.res.colls->len, 0);
    CU_ASSERT_EQUAL(g.res.ranks[0].wait_peers_ps, 0);
    coll_request req;
    CU_ASSERT_TRUE_FATAL(coll_tune(&g.sys, COLL_ALL_REDUCE, 0, 0, 0, &req, NULL));
    coll_result res;
    CU_ASSERT_TRUE_FATAL(coll_run(&g.sys, &req, &res, NULL));
    CU_ASSERT_EQUAL(res.time_us, 0);
    rig_close(&g);
    /* a group that starts with an empty call: the discarded call launched no kernel, so the
     * 64 KiB one "fused" after it pays the host launch, as the same call alone does */
    int64_t end[2];
    for (int k = 0; k < 2; k++) {
        rig_open(&g, 2,
                 spmd_trace(2, k ? "\"kind\":\"all_reduce\",\"bytes\":0" : "\"kind\":\"compute\",\"dur_us\":0",
                            k ? "\"kind\":\"all_reduce\",\"bytes\":\"64K\",\"fused\":true"
                              : "\"kind\":\"all_reduce\",\"bytes\":\"64K\"",
                            NULL));
        CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
        end[k] = g.res.end_ps;
        rig_close(&g);
    }
    CU_ASSERT_EQUAL(end[0], end[1]);
    /* one rank: PyTorch's all_reduce is in place (no time), its all_gather copies its output
     * (coll_one_rank_us: 2 x 1 GiB through an H100's HBM at the copy efficiency) */
    for (int k = 0; k < 2; k++) {
        rig_open(&g, 1, spmd_trace(1, k ? "\"kind\":\"all_gather\",\"bytes\":\"1G\"" : "\"kind\":\"all_reduce\",\"bytes\":\"1G\"",
                                   NULL));
        CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
        coll_request one = {.kind = COLL_ALL_GATHER, .bytes = 1ull << 30};
        CU_ASSERT_EQUAL(g.res.end_ps, k ? sim_time_from_us(coll_one_rank_us(&g.sys, &one)) : 0);
        CU_ASSERT(k == 0 || g.res.end_ps > 700 * SIM_US);
        rig_close(&g);
    }
}

/* Compute beside a collective (opts.gpu_sms): an op that starts while its
 * rank's all_reduce is in flight runs S / (S - C) x (1 + penalty) longer,
 * C the collective's channels; one that starts alone does not. Rank r:
 * stream 0 the all_reduce, stream 1 a 1 us op then a 1,000 us op (it starts
 * under the collective), stream 2 a 1,000 us op that waits for the
 * all_reduce (not slowed). */
static void test_replay_compute_beside_collective_slows(void)
{
    rig g;
    rig_open(&g, 2,
             spmd_trace(2, "\"id\":\"ar\",\"kind\":\"all_reduce\",\"bytes\":\"256M\",\"stream\":0",
                        "\"kind\":\"compute\",\"dur_us\":1,\"stream\":1",
                        "\"kind\":\"compute\",\"dur_us\":1000,\"stream\":1",
                        "\"kind\":\"compute\",\"dur_us\":1000,\"stream\":2,\"deps\":[\"ar\"]", NULL));
    coll_request req;
    CU_ASSERT_TRUE_FATAL(coll_tune(&g.sys, COLL_ALL_REDUCE, 256u << 20, 0, 0, &req, NULL));
    CU_ASSERT_TRUE(coll_alone_us(&g.sys, 256u << 20) > 1); /* the 1 us op ends under it */
    const int S = 132;
    const double pen = 0.064, C = req.nchannels;
    g.o.gpu_sms = S;
    g.o.sm_penalty = pen;
    CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
    double want = 1000 * SIM_US * ((double)S / (S - C) * (1 + pen) - 1);
    /* both ranks' 1 us ops start at the instant the all_reduce launches (its last member arrives
     * then), so both run beside it: slowed alike. Until 2026-12-02 rank 0's, handled before rank 1
     * arrived at that same instant, was not (the ranks' events at one time run in turn) */
    ASSERT_REL((double)g.res.ranks[0].slowed_ps, want * 1.001, 1e-8); /* ps rounding */
    ASSERT_REL((double)g.res.ranks[1].slowed_ps, want * 1.001, 1e-8);
    replay_result_clear(&g.res);
    /* NCCL_MAX_CTAS=2: the collective holds 2 SMs, and compute beside it
     * slows by S / (S - 2) instead */
    g.sys.nccl.max_ctas = 2;
    CU_ASSERT_TRUE_FATAL(coll_tune(&g.sys, COLL_ALL_REDUCE, 256u << 20, 0, 0, &req, NULL));
    CU_ASSERT_EQUAL(req.nchannels, 2);
    CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
    ASSERT_REL((double)g.res.ranks[0].slowed_ps, 1001 * SIM_US * ((double)S / (S - 2) * (1 + pen) - 1), 1e-8);
    replay_result_clear(&g.res);
    g.sys.nccl.max_ctas = 0;
    g.o.gpu_sms = 0; /* off: nothing slowed */
    CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
    CU_ASSERT_EQUAL(g.res.ranks[0].slowed_ps, 0);
    rig_close(&g);
    /* a collective another library runs ("sms": 16, userbuffers' num_sm) holds that many, whatever
     * NCCL's tuner would give it */
    rig_open(&g, 2,
             spmd_trace(2, "\"id\":\"ar\",\"kind\":\"all_reduce\",\"bytes\":\"256M\",\"stream\":0,\"sms\":16",
                        "\"kind\":\"compute\",\"dur_us\":1,\"stream\":1",
                        "\"kind\":\"compute\",\"dur_us\":1000,\"stream\":1", NULL));
    g.o.gpu_sms = S;
    g.o.sm_penalty = pen;
    CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
    ASSERT_REL((double)g.res.ranks[0].slowed_ps, 1001 * SIM_US * ((double)S / (S - 16) * (1 + pen) - 1), 1e-8);
    rig_close(&g);
}

static void test_replay_overlap_on_two_streams(void)
{
    rig g;
    rig_open(&g, 2, overlap_example());
    double ar = coll_alone_us(&g.sys, 64 << 20);
    CU_ASSERT(ar < 300); /* the first all_reduce hides under bwd2 */
    CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
    /* fwd 500, bwd1 300, bwd2 300 (ar1 overlaps it), ar2 exposed, opt 100 */
    ASSERT_REL(g.res.end_ps / 1e6, 500 + 300 + 300 + ar + 100, 1e-6);
    ASSERT_REL(g.res.ranks[1].comm_ps / 1e6, 2 * ar, 1e-6);
    ASSERT_REL(g.res.ranks[1].exposed_comm_ps / 1e6, ar, 1e-6);
    CU_ASSERT_EQUAL(g.res.ranks[1].idle_ps, 0);
    rig_close(&g);
}

static void test_replay_dependency_chain_across_streams(void)
{
    rig g;
    rig_open(&g, 1,
             spmd_trace(1, "\"id\":\"a\",\"kind\":\"compute\",\"dur_us\":10,\"stream\":0",
                        "\"id\":\"b\",\"kind\":\"compute\",\"dur_us\":20,\"stream\":1,\"deps\":[\"a\"]",
                        "\"id\":\"c\",\"kind\":\"compute\",\"dur_us\":30,\"stream\":2,\"deps\":[\"b\"]",
                        "\"id\":\"d\",\"kind\":\"compute\",\"dur_us\":5,\"stream\":3", NULL));
    CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
    CU_ASSERT_EQUAL(g.res.end_ps, 60 * SIM_US); /* a, b, c in turn; d alongside */
    CU_ASSERT_EQUAL(g.res.ranks[0].compute_ps, 60 * SIM_US);
    replay_result_clear(&g.res);
    /* by name: a and d share the 5 us they run together, so the names add up to the 60 us */
    g.o.by_name = true;
    CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
    const int64_t want[4] = {7500000, 20 * SIM_US, 30 * SIM_US, 2500000}; /* a b c d, ps */
    CU_ASSERT_EQUAL_FATAL(g.res.compute_by_name->len, 4);
    for (guint i = 0; i < 4; i++) {
        const replay_exposed *x = &g_array_index(g.res.compute_by_name, replay_exposed, i);
        CU_ASSERT_EQUAL(x->ps, want[x->name[0] - 'a']);
        CU_ASSERT_EQUAL(x->net_ps, 0);
    }
    CU_ASSERT_STRING_EQUAL(g_array_index(g.res.compute_by_name, replay_exposed, 0).name, "c"); /* largest first */
    CU_ASSERT_EQUAL(g.res.exposed_by_name->len, 0);
    rig_close(&g);
}

/* Three ranks in a pipeline: 100 us of compute each, 8 MiB sent on
 * between them (copy: as copies, trace_op.copy). */
static trace *pipeline3(bool copy)
{
    const char *c = copy ? ",\"copy\":true" : "";
    char *json = g_strdup_printf("{\"ops\": ["
                                 "{\"rank\":0,\"kind\":\"compute\",\"dur_us\":100},"
                                 "{\"rank\":0,\"kind\":\"send\",\"peer\":1,\"bytes\":\"8M\",\"stream\":0%s},"
                                 "{\"rank\":1,\"kind\":\"recv\",\"peer\":0,\"bytes\":\"8M\",\"stream\":0%s},"
                                 "{\"rank\":1,\"kind\":\"compute\",\"dur_us\":100},"
                                 "{\"rank\":1,\"kind\":\"send\",\"peer\":2,\"bytes\":\"8M\",\"stream\":0%s},"
                                 "{\"rank\":2,\"kind\":\"recv\",\"peer\":1,\"bytes\":\"8M\",\"stream\":0%s},"
                                 "{\"rank\":2,\"kind\":\"compute\",\"dur_us\":100}]}",
                                 c, c, c, c);
    trace *t = parse(json, NULL);
    g_free(json);
    return t;
}

static void test_replay_send_recv_pipeline(void)
{
    rig g;
    rig_open(&g, 3, pipeline3(false));
    CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
    /* each hop: NCCL's launch of the send/receive (host launch + base latency,
     * as a sendrecv of 8 MiB) and its step latency, then 8 MiB over
     * GPU->NVSwitch->GPU in 512 KiB chunks, 8 in flight */
    fabric *f = g.sys.fab;
    const fab_route *r = fabric_route(f, g.sys.gpu[0], g.sys.gpu[1], 0, NULL);
    coll_request req = {0};
    CU_ASSERT_TRUE_FATAL(coll_tune(&g.sys, COLL_SENDRECV, 8 << 20, 0, 0, &req, NULL));
    double setup_us = coll_setup_us(&g.sys, &req);
    CU_ASSERT(setup_us > 8.4); /* Simple's base latency and a launch */
    /* NCCL's step latency over NVLink (Simple: 3.4 us, the wire's share in it) */
    double step_us = coll_route_step_lat_ps(&g.sys, f, r, ALGO_RING, PROTO_SIMPLE) / 1e6;
    ASSERT_REL(step_us + fabric_route_lat_ps(f, r) / 1e6, 3.4, 1e-9);
    double bw = fabric_route_bw(f, r), hop_us = ((8 << 20) + 524288.0) / bw * 1e6 + fabric_route_lat_ps(f, r) / 1e6;
    ASSERT_REL(g.res.end_ps / 1e6, 300 + 2 * (setup_us + step_us + hop_us), 0.01);
    rig_close(&g);
}

static void expect_error(const char *json, int code, const char *needle)
{
    GError *err = NULL;
    trace *t = parse(json, &err);
    CU_ASSERT_PTR_NULL(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    if (err->code != code || !strstr(err->message, needle))
        fprintf(stderr, "want code %d '%s', got %d: %s\n", code, needle, err->code, err->message);
    CU_ASSERT_EQUAL(err->code, code);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, needle));
    g_error_free(err);
    trace_free(t);
}

static void test_trace_errors_name_ranks_and_ops(void)
{
    /* sizes disagree */
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"all_reduce\",\"bytes\":1024},"
                 "{\"rank\":1,\"kind\":\"all_reduce\",\"bytes\":2048}]}",
                 TRACE_ERROR_MISMATCH, "rank 1 op 0 is all_reduce of 2048");
    /* a rank never reaches the collective */
    expect_error("{\"ranks\":3,\"ops\": [{\"rank\":0,\"kind\":\"all_gather\",\"bytes\":1024},"
                 "{\"rank\":1,\"kind\":\"all_gather\",\"bytes\":1024},{\"rank\":2,\"kind\":\"compute\",\"dur_us\":1}]}",
                 TRACE_ERROR_UNMATCHED, "rank 2 never calls all_gather #0");
    /* send without receive */
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"send\",\"peer\":1,\"bytes\":8},"
                 "{\"rank\":1,\"kind\":\"compute\",\"dur_us\":1}]}",
                 TRACE_ERROR_UNMATCHED, "rank 0 op 0 sends to rank 1, which never receives");
    /* cyclic dependencies */
    expect_error("{\"ops\": [{\"rank\":0,\"id\":\"a\",\"kind\":\"compute\",\"dur_us\":1,\"deps\":[\"b\"]},"
                 "{\"rank\":0,\"id\":\"b\",\"kind\":\"compute\",\"dur_us\":1,\"stream\":1,\"deps\":[\"a\"]}]}",
                 TRACE_ERROR_CYCLE, "cycle");
    /* dangling dependency, with its position */
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"compute\",\"dur_us\":1,\"deps\":[\"nope\"]}]}",
                 TRACE_ERROR_REF, "$.ops[0]: depends on \"nope\"");
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"compute\",\"dur_us\":-1}]}", TRACE_ERROR_VALUE, "$.ops[0]: \"dur_us\"");
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"all_reduce\",\"bytes\":\"12Q\"}]}", TRACE_ERROR_VALUE, "\"bytes\"");
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"warp\"}]}", TRACE_ERROR_VALUE, "\"kind\"");
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"compute\",\"dur_us\":1,\"colour\":1}]}", TRACE_ERROR_SCHEMA,
                 "unknown key \"colour\"");
    expect_error("{\"ops\": [\n{\"rank\":0,", TRACE_ERROR_PARSE, ":2:");
}

/* trace_op_add borrows the name (the trace keeps an interned copy: equal
 * names share one string, and the caller's buffer may go); sends of one
 * (src, dst, tag) meet their receives in order, and every unmatched side is
 * named. */
static void test_trace_names_interned_and_p2p_matched_in_order(void)
{
    trace *t = trace_new(2, "unit");
    char *buf = g_strdup("step");
    trace_op a = {.kind = TOP_COMPUTE, .name = buf, .dur_ps = SIM_US, .seq = -1, .ts_ps = -1};
    trace_op b = {.kind = TOP_COMPUTE, .name = "step", .dur_ps = SIM_US, .seq = -1, .ts_ps = -1};
    uint32_t ia = trace_op_add(t, 0, &a), ib = trace_op_add(t, 1, &b);
    g_free(buf);
    const trace_op *oa = &g_array_index(t->ranks[0].ops, trace_op, ia);
    const trace_op *ob = &g_array_index(t->ranks[1].ops, trace_op, ib);
    CU_ASSERT_STRING_EQUAL(oa->name, "step");
    CU_ASSERT_PTR_EQUAL(oa->name, ob->name);
    /* two sends 0 -> 1 with one tag, 8 then 16 bytes; receives in that order */
    for (int k = 0; k < 2; k++) {
        trace_op s = {.kind = TOP_SEND, .name = "send", .peer = 1, .tag = 7, .bytes = 8u << k, .seq = -1, .ts_ps = -1};
        trace_op r = {.kind = TOP_RECV, .name = "recv", .peer = 0, .tag = 7, .bytes = 8u << k, .seq = -1, .ts_ps = -1};
        trace_op_add(t, 0, &s);
        trace_op_add(t, 1, &r);
    }
    GError *err = NULL;
    CU_ASSERT_TRUE(trace_validate(t, &err));
    g_clear_error(&err);
    trace_free(t);
    /* the same receives in the other order: the first meets the 8-byte send */
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"send\",\"peer\":1,\"bytes\":8},"
                 "{\"rank\":0,\"kind\":\"send\",\"peer\":1,\"bytes\":16},"
                 "{\"rank\":1,\"kind\":\"recv\",\"peer\":0,\"bytes\":16},"
                 "{\"rank\":1,\"kind\":\"recv\",\"peer\":0,\"bytes\":8}]}",
                 TRACE_ERROR_MISMATCH, "rank 0 op 0 sends 8 bytes to rank 1 but its receive (op 0) expects 16");
    /* a receive with no send */
    expect_error("{\"ops\": [{\"rank\":1,\"kind\":\"recv\",\"peer\":0,\"bytes\":8},"
                 "{\"rank\":0,\"kind\":\"compute\",\"dur_us\":1}]}",
                 TRACE_ERROR_UNMATCHED, "rank 1 op 0 receives 8 bytes from rank 0");
}

/* The timeline is valid JSON and slices on one track never overlap. */
/* The exposed-communication track never shares a stream's track: 9999
 * unless a stream is numbered 9999 or more, then one past the largest. */
static void test_replay_timeline_exposed_tid(void)
{
    replay_result res = {0};
    res.intervals = g_array_new(FALSE, TRUE, sizeof(replay_interval));
    CU_ASSERT_EQUAL(timeline_exposed_tid(&res), TIMELINE_EXPOSED_TID);
    replay_interval iv = {.rank = 0, .stream = 7};
    g_array_append_val(res.intervals, iv);
    CU_ASSERT_EQUAL(timeline_exposed_tid(&res), 9999);
    iv.stream = 9999;
    g_array_append_val(res.intervals, iv);
    CU_ASSERT_EQUAL(timeline_exposed_tid(&res), 10000);
    iv.stream = 123456;
    g_array_append_val(res.intervals, iv);
    CU_ASSERT_EQUAL(timeline_exposed_tid(&res), 123457);
    g_array_free(res.intervals, TRUE);
}

static void test_replay_timeline_valid_and_nested(void)
{
    rig g;
    rig_open(&g, 2, overlap_example());
    g.o.record = true;
    CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
    char *out = NULL; /* a name of this run's own (another test run may be writing beside it) */
    close(g_file_open_tmp("conveyor-test-timeline-XXXXXX.json", &out, NULL));
    CU_ASSERT_TRUE(timeline_write(out, g.t, &g.res, g.sys.fab, 8, &g.err));
    char *text = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(out, &text, NULL, NULL));
    cJSON *root = cJSON_Parse(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    cJSON *ev = cJSON_GetObjectItem(root, "traceEvents");
    GHashTable *last_end = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    int slices = 0, overlaps = 0, gpu_slices = 0;
    double exposed_us[2] = {0, 0};
    for (cJSON *e = ev ? ev->child : NULL; e; e = e->next) {
        if (strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "X"))
            continue;
        int pid = cJSON_GetObjectItem(e, "pid")->valueint, tid = cJSON_GetObjectItem(e, "tid")->valueint;
        double ts = cJSON_GetObjectItem(e, "ts")->valuedouble, dur = cJSON_GetObjectItem(e, "dur")->valuedouble;
        char *key = g_strdup_printf("%d/%d", pid, tid);
        double *le = g_hash_table_lookup(last_end, key);
        if (le && ts < *le - 1e-6) /* events are written in completion order per track: sort-free check */
            overlaps++;
        double *ne = g_new(double, 1);
        *ne = ts + dur;
        if (!le || *ne > *le)
            g_hash_table_replace(last_end, key, ne);
        else {
            g_free(key);
            g_free(ne);
        }
        slices++;
        if (tid == timeline_exposed_tid(&g.res)) {
            CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(e, "name")->valuestring, "exposed: inside the server");
            if (pid >= 0 && pid < 2)
                exposed_us[pid] += dur;
        } else {
            gpu_slices += pid < g.t->nranks;
        }
    }
    CU_ASSERT_EQUAL(gpu_slices, 12); /* every op of the two ranks */
    /* the exposed track adds up to each rank's exposed communication (two GPUs of one server) */
    for (int r = 0; r < 2; r++)
        ASSERT_REL(exposed_us[r], g.res.ranks[r].exposed_comm_ps / 1e6, 1e-6);
    CU_ASSERT(slices > gpu_slices);  /* and link transfers */
    CU_ASSERT_EQUAL(overlaps, 0);
    g_hash_table_destroy(last_end);
    cJSON_Delete(root);
    g_free(text);
    remove(out);
    g_free(out);
    rig_close(&g);
}

static void test_replay_deadlock_is_reported_not_hung(void)
{
    rig g;
    /* both ranks receive before they send, on one stream: matched, but stuck */
    rig_open(&g, 2,
             spmd_trace(2, "\"kind\":\"recv\",\"peer\":%d,\"bytes\":8,\"stream\":0",
                        "\"kind\":\"send\",\"peer\":%d,\"bytes\":8,\"stream\":0", NULL));
    CU_ASSERT_FALSE(replay_run(g.t, &g.o, &g.res, &g.err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(g.err);
    CU_ASSERT_EQUAL(g.err->code, TRACE_ERROR_DEADLOCK);
    CU_ASSERT_PTR_NOT_NULL(strstr(g.err->message, "rank 0 op 0: recv from rank 1"));
    rig_close(&g);
}

/* A data-parallel trace built in code: per step a forward, then per bucket a
 * backward and its gradient all_reduce over all ranks on stream 1. */
static trace *dp_trace(int nranks, int steps, const uint64_t *bucket, int nb)
{
    trace *t = trace_new(nranks, "test:data-parallel");
    int world = trace_group_world(t);
    for (int r = 0; r < nranks; r++)
        for (int s = 0; s < steps; s++) {
            trace_op fwd = {.kind = TOP_COMPUTE, .name = "fwd", .dur_ps = 2 * SIM_MS, .seq = -1, .ts_ps = -1};
            trace_op_add(t, r, &fwd);
            for (int b = 0; b < nb; b++) {
                trace_op bwd = {.kind = TOP_COMPUTE, .name = "bwd", .dur_ps = SIM_MS, .seq = -1,
                                .ts_ps = -1};
                uint32_t bi = trace_op_add(t, r, &bwd);
                trace_op ar = {.kind = TOP_COLL, .stream = 1, .name = "ar", .coll = COLL_ALL_REDUCE,
                               .bytes = bucket[b], .group = world, .seq = -1, .dur_ps = -1, .ts_ps = -1};
                trace_op_dep(t, r, trace_op_add(t, r, &ar), bi);
            }
        }
    CU_ASSERT_TRUE(trace_validate(t, NULL));
    return t;
}

static uint64_t fabric_bytes(const fabric *f)
{
    uint64_t b = 0;
    for (fab_link_id l = 0; l < fabric_link_count(f); l++)
        if (fabric_link(f, l)->kind != LINK_SERVER)
            b += fabric_link_stats(f, l)->bytes;
    return b;
}

static uint64_t fabric_bytes_off_spine(const fabric *f)
{
    uint64_t b = 0;
    for (fab_link_id l = 0; l < fabric_link_count(f); l++)
        if (fabric_link(f, l)->kind != LINK_SERVER &&
            fabric_node(f, fabric_link_src(f, l))->kind != FAB_NET_SPINE &&
            fabric_node(f, fabric_link_dst(f, l))->kind != FAB_NET_SPINE)
            b += fabric_link_stats(f, l)->bytes;
    return b;
}

/* A cluster built twice (replay_opts.iso needs a second copy). */
typedef struct {
    topo *ta, *tb;
    coll_system sys, iso;
} twin;

static void twin_load(twin *w, topo_opts o)
{
    GError *err = NULL;
    w->ta = topo_load("dgx-h100", &o, &err);
    w->tb = topo_load("dgx-h100", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->ta);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->tb);
    topo_coll_system(&w->sys, w->ta, 2.5, 1);
    topo_coll_system(&w->iso, w->tb, 2.5, 1);
}

/* The trace simulated in full, then with reuse; *full_bytes: the bytes on
 * graph links after the full run (off spines if off_spine). */
static void run_both(const trace *t, twin *w, replay_result *full, replay_result *reuse, uint64_t *full_bytes,
                     uint64_t (*bytes)(const fabric *))
{
    GError *err = NULL;
    replay_opts o = {.sys = &w->sys, .compute_scale = 1};
    CU_ASSERT_TRUE_FATAL(replay_run(t, &o, full, &err));
    if (full_bytes)
        *full_bytes = bytes(w->sys.fab);
    o.iso = &w->iso;
    CU_ASSERT_TRUE_FATAL(replay_run(t, &o, reuse, &err));
}

static void twin_free(twin *w, trace *t, replay_result *full, replay_result *reuse)
{
    replay_result_clear(full);
    replay_result_clear(reuse);
    trace_free(t);
    topo_free(w->ta);
    topo_free(w->tb);
}

/* Collectives that never meet other traffic: reusing the isolated run gives
 * the full simulation's answer exactly, and charges the links the same. */
static void test_replay_reuse_matches_full_simulation(void)
{
    twin w;
    twin_load(&w, (topo_opts){.nodes = 2});
    const uint64_t buckets[] = {8u << 20, 32u << 20, 8u << 20};
    trace *t = dp_trace(16, 3, buckets, 3);
    replay_result full, reuse;
    uint64_t full_bytes;
    run_both(t, &w, &full, &reuse, &full_bytes, fabric_bytes);
    CU_ASSERT_EQUAL(reuse.end_ps, full.end_ps);
    CU_ASSERT_EQUAL(reuse.colls->len, 9);
    CU_ASSERT_EQUAL(reuse.memo_runs, 2); /* 8 MiB and 32 MiB */
    CU_ASSERT_EQUAL(reuse.memo_hits, 9);
    CU_ASSERT_EQUAL(reuse.memo_overlaps, 0);
    CU_ASSERT_EQUAL(full.memo_runs, 0);
    for (guint i = 0; i < full.colls->len; i++) {
        CU_ASSERT_EQUAL(g_array_index(reuse.colls, replay_coll, i).sim_ps, g_array_index(full.colls, replay_coll, i).sim_ps);
        CU_ASSERT_TRUE(g_array_index(reuse.colls, replay_coll, i).reused);
    }
    CU_ASSERT_EQUAL(reuse.ranks[3].exposed_comm_ps, full.ranks[3].exposed_comm_ps);
    CU_ASSERT_EQUAL(fabric_bytes(w.sys.fab), full_bytes); /* reused traffic charged to the links */
    CU_ASSERT_TRUE(reuse.events < full.events);
    twin_free(&w, t, &full, &reuse);
}

/* Sends and receives that never meet other traffic (a ping-pong between
 * GPU 0 of two servers, 3 rounds of 32 MiB): each takes the time of one
 * simulated alone (the two directions have the same route parameters: one
 * isolated run), and the answer and the link bytes are the full
 * simulation's. */
static void test_replay_reuse_p2p_matches_full_simulation(void)
{
    twin w;
    twin_load(&w, (topo_opts){.nodes = 2});
    trace *t = trace_new(16, "test:ping-pong");
    for (int j = 0; j < 3; j++)
        for (int d = 0; d < 2; d++) {
            int src = d ? 8 : 0, dst = d ? 0 : 8;
            trace_op s = {.kind = TOP_SEND, .stream = 1, .name = "send", .peer = dst, .tag = j,
                          .bytes = 32u << 20, .group = -1, .seq = -1, .dur_ps = -1, .ts_ps = -1};
            trace_op r = {.kind = TOP_RECV, .stream = 1, .name = "recv", .peer = src, .tag = j,
                          .bytes = 32u << 20, .group = -1, .seq = -1, .dur_ps = -1, .ts_ps = -1};
            trace_op_add(t, src, &s);
            trace_op_add(t, dst, &r);
        }
    GError *err = NULL;
    CU_ASSERT_TRUE_FATAL(trace_validate(t, &err));
    replay_result full, reuse;
    uint64_t full_bytes;
    run_both(t, &w, &full, &reuse, &full_bytes, fabric_bytes);
    CU_ASSERT_EQUAL(reuse.p2p_memo_runs, 1);
    CU_ASSERT_EQUAL(reuse.p2p_memo_hits, 6);
    CU_ASSERT_EQUAL(full.p2p_memo_hits, 0);
    CU_ASSERT_EQUAL(reuse.end_ps, full.end_ps);
    CU_ASSERT_EQUAL(fabric_bytes(w.sys.fab), full_bytes);
    CU_ASSERT_TRUE(reuse.events < full.events);
    twin_free(&w, t, &full, &reuse);
}

/* Two all_reduces over the same ranks at once on two streams: both reused,
 * sharing their links as a fluid (each at 1 / the links' summed busy shares:
 * replay.c fluid_retime), so they end together, nearer the full simulation's
 * 559.9 us than waiting did (until 2026-12-03 the second waited for the first
 * to end: 581.1 us; until 2026-12-02 it ran on the fabric at full speed beside
 * the first, whose traffic the fabric does not carry). */
static void test_replay_reuse_shares_busy_links(void)
{
    twin w;
    twin_load(&w, (topo_opts){.gpus = 4});
    trace *t = trace_new(4, "test:two-streams");
    int world = trace_group_world(t);
    for (int r = 0; r < 4; r++)
        for (int s = 1; s <= 2; s++) {
            trace_op ar = {.kind = TOP_COLL, .stream = s, .name = "ar", .coll = COLL_ALL_REDUCE,
                           .bytes = 64u << 20, .group = world, .seq = -1, .dur_ps = -1, .ts_ps = -1};
            trace_op_add(t, r, &ar);
        }
    CU_ASSERT_TRUE_FATAL(trace_validate(t, NULL));
    replay_result full, reuse;
    run_both(t, &w, &full, &reuse, NULL, NULL);
    CU_ASSERT_EQUAL(reuse.memo_runs, 1);
    CU_ASSERT_EQUAL(reuse.memo_hits, 2);
    CU_ASSERT_EQUAL(reuse.memo_overlaps, 1);
    const replay_coll *a = &g_array_index(reuse.colls, replay_coll, 0), *b = &g_array_index(reuse.colls, replay_coll, 1);
    CU_ASSERT_TRUE(a->reused);
    CU_ASSERT_TRUE(b->reused);
    /* launched together, sharing every link: they end together (543.0 us against 559.9) */
    CU_ASSERT_EQUAL(b->start_ps + b->sim_ps, a->start_ps + a->sim_ps);
    ASSERT_REL((double)reuse.end_ps, (double)full.end_ps, 0.05);
    twin_free(&w, t, &full, &reuse);
}

/* Groups of the same shape share one isolated run: the tensor-parallel
 * groups of two servers, the data-parallel pairs of two rails; a group of
 * another shape gets its own. Times equal the full simulation's. */
static void test_replay_reuse_shared_by_shape(void)
{
    twin w;
    twin_load(&w, (topo_opts){.nodes = 2});
    trace *t = trace_new(16, "test:shapes");
    int tp0[8], tp1[8], dp0[2] = {0, 8}, dp1[2] = {1, 9}, odd[2] = {2, 3};
    for (int k = 0; k < 8; k++) {
        tp0[k] = k;
        tp1[k] = 8 + k;
    }
    int g_tp0 = trace_group_add(t, "tp0", tp0, 8), g_tp1 = trace_group_add(t, "tp1", tp1, 8);
    int g_dp0 = trace_group_add(t, "dp0", dp0, 2), g_dp1 = trace_group_add(t, "dp1", dp1, 2);
    int g_odd = trace_group_add(t, "odd", odd, 2);
    /* one after another on stream 0: TP, then DP, then the odd pair */
    for (int r = 0; r < 16; r++) {
        trace_op tpo = {.kind = TOP_COLL, .name = "tp", .coll = COLL_ALL_REDUCE, .bytes = 16u << 20,
                        .group = r < 8 ? g_tp0 : g_tp1, .seq = -1, .dur_ps = -1, .ts_ps = -1};
        trace_op_add(t, r, &tpo);
        if (r % 8 < 2) {
            trace_op dpo = {.kind = TOP_COLL, .name = "dp", .coll = COLL_ALL_REDUCE, .bytes = 8u << 20,
                            .group = r % 8 == 0 ? g_dp0 : g_dp1, .seq = -1, .dur_ps = -1, .ts_ps = -1};
            trace_op_add(t, r, &dpo);
        }
        if (r == 2 || r == 3) {
            trace_op o = {.kind = TOP_COLL, .name = "odd", .coll = COLL_ALL_REDUCE, .bytes = 8u << 20,
                          .group = g_odd, .seq = -1, .dur_ps = -1, .ts_ps = -1};
            trace_op_add(t, r, &o);
        }
    }
    CU_ASSERT_TRUE_FATAL(trace_validate(t, NULL));
    replay_result full, reuse;
    uint64_t full_bytes;
    run_both(t, &w, &full, &reuse, &full_bytes, fabric_bytes_off_spine);
    CU_ASSERT_EQUAL(reuse.colls->len, 5);
    CU_ASSERT_EQUAL(reuse.memo_runs, 3); /* TP (both servers), DP (both rails), the odd pair */
    CU_ASSERT_EQUAL(reuse.memo_hits, 5);
    for (guint i = 0; i < full.colls->len; i++)
        CU_ASSERT_EQUAL(g_array_index(reuse.colls, replay_coll, i).sim_ps, g_array_index(full.colls, replay_coll, i).sim_ps);
    CU_ASSERT_EQUAL(reuse.end_ps, full.end_ps);
    /* each reuse charged its traffic to the right links (spine links carry
     * no label in the shape, so they are left out of the comparison) */
    CU_ASSERT_EQUAL(fabric_bytes_off_spine(w.sys.fab), full_bytes);
    twin_free(&w, t, &full, &reuse);
}

/* Exposed communication by fabric: on two servers of two GPUs, each rank
 * computes for 10 ms (stream 0) beside an all_reduce over all four ranks
 * (stream 1, hidden), then runs an all_reduce inside its server, one over
 * all four, and a send or receive to the other server (stream 0, exposed).
 * What is exposed on the network is the second four-rank all_reduce and
 * the transfer; the rest of the exposed time is the server pair's
 * all_reduce; the hidden one counts in neither. */
/* A copy between peers ("copy": true: a copy engine's, or a library's own kernel as Transformer
 * Engine's userbuffers) pays no NCCL launch, base latency or step latency: 8 MiB over
 * GPU->NVSwitch->GPU at the route's rate, its wire latency once, so the three-hop pipeline of the
 * test above costs 300 us of compute and the two hops' bytes. Both sides must say so; between
 * servers a copy is refused (exit 2 in the CLI), as peer memory is NVLink's. */
static void test_replay_copy_transfers(void)
{
    rig g;
    rig_open(&g, 3, pipeline3(true));
    CU_ASSERT_TRUE_FATAL(replay_run(g.t, &g.o, &g.res, &g.err));
    fabric *f = g.sys.fab;
    const fab_route *r = fabric_route(f, g.sys.gpu[0], g.sys.gpu[1], 0, NULL);
    double bw = fabric_route_bw(f, r), hop_us = ((8 << 20) + 524288.0) / bw * 1e6 + fabric_route_lat_ps(f, r) / 1e6;
    ASSERT_REL(g.res.end_ps / 1e6, 300 + 2 * hop_us, 0.01);
    rig_close(&g);
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"send\",\"peer\":1,\"bytes\":8,\"copy\":true},"
                 "{\"rank\":1,\"kind\":\"recv\",\"peer\":0,\"bytes\":8}]}",
                 TRACE_ERROR_MISMATCH, "sends to rank 1 as a copy but its receive (op 0) is NCCL's");
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"compute\",\"dur_us\":1,\"copy\":true}]}", TRACE_ERROR_SCHEMA,
                 "only a send or a recv is a copy");
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"send\",\"peer\":1,\"bytes\":8,\"copy\":1}]}", TRACE_ERROR_SCHEMA,
                 "\"copy\": expected true or false");
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"compute\",\"dur_us\":1,\"sms\":4}]}", TRACE_ERROR_SCHEMA,
                 "only a collective holds SMs");
    expect_error("{\"ops\": [{\"rank\":0,\"kind\":\"all_reduce\",\"bytes\":8,\"sms\":2000}]}", TRACE_ERROR_VALUE,
                 "\"sms\"");
    /* across servers: refused when it runs */
    GError *err = NULL;
    topo *tp = topo_load("dgx-h100", &(topo_opts){.nodes = 2, .gpus = 1}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tp);
    coll_system sys;
    topo_coll_system(&sys, tp, 0, 1);
    trace *t = parse("{\"ops\": [{\"rank\":0,\"kind\":\"send\",\"peer\":1,\"bytes\":\"1M\",\"copy\":true},"
                     "{\"rank\":1,\"kind\":\"recv\",\"peer\":0,\"bytes\":\"1M\",\"copy\":true}]}", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    replay_opts o = {.sys = &sys, .compute_scale = 1};
    replay_result res;
    CU_ASSERT_FALSE(replay_run(t, &o, &res, &err));
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, "in another server (NVLink domain)") : NULL);
    g_clear_error(&err);
    trace_free(t);
    topo_free(tp);
}

static void test_replay_exposed_by_fabric(void)
{
    GError *err = NULL;
    topo *tp = topo_load("dgx-h100", &(topo_opts){.nodes = 2, .gpus = 2}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tp);
    coll_system sys;
    topo_coll_system(&sys, tp, 0, 1);
    CU_ASSERT_EQUAL_FATAL(sys.ppn, 2);
    trace *t = trace_new(4, "test:fabrics");
    int s0[2] = {0, 1}, s1[2] = {2, 3}, all[4] = {0, 1, 2, 3};
    int g0 = trace_group_add(t, "server0", s0, 2), g1 = trace_group_add(t, "server1", s1, 2);
    int gw = trace_group_add(t, "world", all, 4);
    for (int r = 0; r < 4; r++) {
        trace_op ops[] = {
            {.kind = TOP_COMPUTE, .name = "compute", .dur_ps = 10 * SIM_MS, .ts_ps = -1},
            {.kind = TOP_COLL, .name = "hidden", .stream = 1, .coll = COLL_ALL_REDUCE, .bytes = 1u << 20,
             .group = gw, .seq = -1, .dur_ps = -1, .ts_ps = -1},
            {.kind = TOP_COLL, .name = "local", .coll = COLL_ALL_REDUCE, .bytes = 16u << 20,
             .group = r < 2 ? g0 : g1, .seq = -1, .dur_ps = -1, .ts_ps = -1},
            {.kind = TOP_COLL, .name = "world", .coll = COLL_ALL_REDUCE, .bytes = 16u << 20, .group = gw,
             .seq = -1, .dur_ps = -1, .ts_ps = -1},
            {.kind = r < 2 ? TOP_SEND : TOP_RECV, .name = "p2p", .bytes = 4u << 20, .peer = (r + 2) % 4,
             .seq = -1, .dur_ps = -1, .ts_ps = -1},
        };
        for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
            trace_op_add(t, r, &ops[i]);
    }
    CU_ASSERT_TRUE_FATAL(trace_validate(t, NULL));
    replay_opts o = {.sys = &sys, .compute_scale = 1};
    replay_result res;
    CU_ASSERT_TRUE_FATAL(replay_run(t, &o, &res, &err));
    int64_t hidden = -1, loc = -1, world = -1;
    for (guint i = 0; i < res.colls->len; i++) {
        const replay_coll *c = &g_array_index(res.colls, replay_coll, i);
        if (c->group_nodes == 1)
            loc = c->sim_ps;
        else if (c->bytes == 16u << 20)
            world = c->sim_ps;
        else
            hidden = c->sim_ps;
    }
    CU_ASSERT_FATAL(hidden > 0 && loc > 0 && world > 0);
    CU_ASSERT(hidden < 10 * SIM_MS);
    for (int r = 0; r < 4; r++) {
        const replay_rank *rr = &res.ranks[r];
        int64_t p2p = rr->end_ps - 10 * SIM_MS - loc - world; /* the transfer, last on stream 0 */
        CU_ASSERT(p2p > 0);
        CU_ASSERT_EQUAL(rr->exposed_comm_ps, loc + world + p2p);
        CU_ASSERT_EQUAL(rr->exposed_net_ps, world + p2p);
        CU_ASSERT_EQUAL(rr->comm_ps, hidden + loc + world + p2p);
    }
    replay_result_clear(&res);
    /* by name: the exposed time is the named ops', all of it; the hidden one has none;
     * recorded, the exposed stretches add up to the same, network and not */
    o.by_name = true;
    o.record = true;
    CU_ASSERT_TRUE_FATAL(replay_run(t, &o, &res, &err));
    int64_t span_net[4] = {0}, span_loc[4] = {0};
    for (guint i = 0; i < res.exposed_spans->len; i++) {
        const replay_exposed_span *x = &g_array_index(res.exposed_spans, replay_exposed_span, i);
        CU_ASSERT(x->end_ps > x->start_ps);
        if (i > 0 && g_array_index(res.exposed_spans, replay_exposed_span, i - 1).rank == x->rank)
            CU_ASSERT(g_array_index(res.exposed_spans, replay_exposed_span, i - 1).end_ps <= x->start_ps);
        *(x->net ? &span_net[x->rank] : &span_loc[x->rank]) += x->end_ps - x->start_ps;
    }
    for (int r = 0; r < 4; r++) {
        CU_ASSERT_EQUAL(span_net[r], res.ranks[r].exposed_net_ps);
        CU_ASSERT_EQUAL(span_loc[r], res.ranks[r].exposed_comm_ps - res.ranks[r].exposed_net_ps);
        CU_ASSERT_EQUAL(span_loc[r], loc);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(res.exposed_by_name);
    int64_t sum = 0, want = 0;
    for (int r = 0; r < 4; r++)
        want += res.ranks[r].exposed_comm_ps;
    for (guint i = 0; i < res.exposed_by_name->len; i++) {
        const replay_exposed *x = &g_array_index(res.exposed_by_name, replay_exposed, i);
        sum += x->ps;
        if (!strcmp(x->name, "local")) {
            CU_ASSERT_EQUAL(x->ps, 4 * loc);
            CU_ASSERT_EQUAL(x->net_ps, 0);
        } else if (!strcmp(x->name, "world")) {
            CU_ASSERT_EQUAL(x->ps, 4 * world);
            CU_ASSERT_EQUAL(x->net_ps, x->ps);
        } else {
            CU_ASSERT_STRING_EQUAL(x->name, "p2p");
            CU_ASSERT_EQUAL(x->net_ps, x->ps);
        }
        if (i > 0) /* largest first */
            CU_ASSERT(g_array_index(res.exposed_by_name, replay_exposed, i - 1).ps >= x->ps);
    }
    CU_ASSERT_EQUAL(res.exposed_by_name->len, 3);
    CU_ASSERT_EQUAL(sum, want);
    /* the compute by name: the one compute op, all of every rank's compute time */
    CU_ASSERT_PTR_NOT_NULL_FATAL(res.compute_by_name);
    CU_ASSERT_EQUAL_FATAL(res.compute_by_name->len, 1);
    CU_ASSERT_STRING_EQUAL(g_array_index(res.compute_by_name, replay_exposed, 0).name, "compute");
    CU_ASSERT_EQUAL(g_array_index(res.compute_by_name, replay_exposed, 0).ps, 4 * 10 * SIM_MS);
    replay_result_clear(&res);
    g_clear_error(&err);
    trace_free(t);
    topo_free(tp);
}

int main(void)
{
    static const test_case cases[] = {
        {"/replay/compute-beside-collective-slows", test_replay_compute_beside_collective_slows},
        {"/replay/reuse/p2p-matches-full-simulation", test_replay_reuse_p2p_matches_full_simulation},
        {"/replay/closed-form/compute-then-allreduce", test_replay_compute_then_allreduce_closed_form},
        {"/replay/fused-group-one-launch", test_replay_fused_group_one_launch},
        {"/replay/empty-collective-waits-for-nobody", test_replay_empty_collective_waits_for_nobody},
        {"/replay/overlap/two-streams", test_replay_overlap_on_two_streams},
        {"/replay/deps/chain-across-streams", test_replay_dependency_chain_across_streams},
        {"/replay/p2p/pipeline", test_replay_send_recv_pipeline},
        {"/replay/p2p/copy", test_replay_copy_transfers},
        {"/trace/errors/name-ranks-and-ops", test_trace_errors_name_ranks_and_ops},
        {"/trace/names-interned-p2p-in-order", test_trace_names_interned_and_p2p_matched_in_order},
        {"/replay/deadlock/reported", test_replay_deadlock_is_reported_not_hung},
        {"/replay/timeline/valid-and-nested", test_replay_timeline_valid_and_nested},
        {"/replay/timeline/exposed-tid", test_replay_timeline_exposed_tid},
        {"/replay/reuse/matches-full-simulation", test_replay_reuse_matches_full_simulation},
        {"/replay/reuse/shares-busy-links", test_replay_reuse_shares_busy_links},
        {"/replay/reuse/shared-by-shape", test_replay_reuse_shared_by_shape},
        {"/replay/exposed-by-fabric", test_replay_exposed_by_fabric},
        {0},
    };
    return test_main("replay", cases);
}

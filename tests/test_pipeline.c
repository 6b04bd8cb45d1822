/* Tests of traces/workload's pipeline schedules: the interleaved-1F1B
 * bubble, op and send/receive counts, layer placement, replays, errors and
 * memory; uneven pipeline stages (Llama 3's rule, traces, memory, errors,
 * layer fusion). */
#include <math.h>
#include <string.h>

#include "models/replay.h"
#include "testutil.h"
#include "topologies/topo.h"
#include "traces/workload.h"
#include "workload_util.h"

/* A uniform custom GPT of `layers` layers on tp 1 x pp x dp 1 (vocab 16:
 * embedding and LM head negligible), m microbatches of one sequence. */
static workload_spec pipe_spec(int layers, int hidden, int pp, int m, int vpp)
{
    workload_spec w = {.m = {.name = "custom", .layers = layers, .hidden = hidden, .heads = 16, .vocab = 16},
                       .tp = 1, .pp = pp, .dp = 1, .gpus = pp, .global_batch = m, .seq = 1024, .vpp = vpp};
    workload_spec_defaults(&w);
    return w;
}

/* Replay t on `gpus` GPUs of DGX H100s (part of one, or whole ones); false
 * (with a test failure) if the replay fails (a deadlock, for one). */
static bool replay_on(const trace *t, int gpus, replay_result *res)
{
    GError *err = NULL;
    topo *tp = topo_load("dgx-h100", &(topo_opts){.nodes = gpus > 8 ? gpus / 8 : 1, .gpus = gpus < 8 ? gpus : 0}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tp);
    coll_system sys;
    topo_coll_system(&sys, tp, 2.5, 1);
    replay_opts o = {.sys = &sys, .compute_scale = 1};
    bool ok = replay_run(t, &o, res, &err);
    CU_ASSERT_TRUE(ok);
    if (!ok) {
        fprintf(stderr, "replay: %s\n", err->message);
        g_clear_error(&err);
    }
    topo_free(tp);
    return ok;
}

/* Sum of the durations of rank r's compute ops whose name starts with
 * `prefix` (NULL: all) or, with `except`, of those whose name does not. */
static double compute_ps(const trace *t, int r, const char *prefix, bool except)
{
    double ps = 0;
    for (guint i = 0; i < t->ranks[r].ops->len; i++) {
        const trace_op *o = &g_array_index(t->ranks[r].ops, trace_op, i);
        if (o->kind == TOP_COMPUTE && (!prefix || g_str_has_prefix(o->name, prefix) != except))
            ps += (double)o->dur_ps;
    }
    return ps;
}

/* Step time of the pipeline over its ideal: the step minus the optimizer
 * (it runs after the last backward, outside the bubble) over a middle
 * stage's forward and backward compute, m (t_f + t_b). */
static double pipe_ratio(int pp, int m, int vpp)
{
    workload_spec w = pipe_spec(16, 8192, pp, m, vpp);
    gpu_model g = gpu("H100");
    trace *t = workload_generate(&w, &g, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    replay_result res;
    double ratio = 0;
    if (replay_on(t, pp, &res)) {
        double ideal = compute_ps(t, 1, "optimizer", true), opt = compute_ps(t, 0, "optimizer", false);
        ratio = ((double)res.end_ps - opt) / ideal;
        replay_result_clear(&res);
    }
    trace_free(t);
    return ratio;
}

/* Narayanan et al. SC'21 sec. 2.2: the 1F1B bubble is (p-1)/m of the ideal
 * step, the interleaved schedule's (p-1)/(V m). p 4, m 8, 16 layers of
 * hidden 8192: a layer's compute (ms) dwarfs its activations' transfer
 * (16 MiB over NVLink, tens of us), so the pipeline is compute-only up to
 * well under 1% of the step. */
static void test_workload_interleaved_bubble(void)
{
    double p = 4, m = 8;
    double plain = pipe_ratio(4, 8, 1) - 1, v2 = pipe_ratio(4, 8, 2) - 1, v4 = pipe_ratio(4, 8, 4) - 1;
    CU_ASSERT(fabs(plain - (p - 1) / m) <= 0.01);    /* 0.375 of the ideal step */
    CU_ASSERT(fabs(v2 - (p - 1) / (2 * m)) <= 0.01); /* 0.1875 */
    CU_ASSERT(fabs(v4 - (p - 1) / (4 * m)) <= 0.01); /* 0.09375 */
    /* the bubble shrinks by V (each hop's transfer, V times as many, is what is left) */
    ASSERT_REL(v2 / plain, 0.5, 0.1);
    ASSERT_REL(v4 / plain, 0.25, 0.1);
}

/* Forward passes of rank r before its first backward, in chunk-microbatches
 * (layers per chunk lpc). */
static int fwd_before_bwd(const trace *t, int r, int lpc)
{
    int n = 0;
    for (guint i = 0; i < t->ranks[r].ops->len; i++) {
        const trace_op *o = &g_array_index(t->ranks[r].ops, trace_op, i);
        if (o->kind != TOP_COMPUTE)
            continue;
        if (!strcmp(o->name, "attn_bwd"))
            break;
        n += !strcmp(o->name, "attn_fwd");
    }
    return n / lpc;
}

/* sends (or receives) of rank r to (from) rank peer */
static int p2p_count(const trace *t, int r, trace_op_kind k, int peer)
{
    int n = 0;
    for (guint i = 0; i < t->ranks[r].ops->len; i++) {
        const trace_op *o = &g_array_index(t->ranks[r].ops, trace_op, i);
        n += o->kind == k && o->peer == peer;
    }
    return n;
}

/* pp 4, V 2, m 8, 8 layers (one per chunk). Hand counts: every rank runs
 * m V = 16 forwards and backwards. Rank 0 (chunks 0, 1 = virtual stages 0,
 * 4) sends activations of both chunks to rank 1 (16) and gradients of chunk
 * 1 to rank 3 (8); it receives chunk 1's input from rank 3 (8) and the
 * gradients of both chunks from rank 1 (16). Middle ranks send and receive
 * 2 m V = 32, rank 3 like rank 0 mirrored: 24 each. 2 m (p V - 1) = 112
 * transfers in all. Warm-up (Megatron): 2(p - r - 1) + (V-1) p = 10, 8, 6, 4
 * forwards, then the steady state starts with one more. */
static void test_workload_interleaved_counts(void)
{
    workload_spec w = pipe_spec(8, 1024, 4, 8, 2);
    gpu_model g = gpu("H100");
    trace *t = workload_generate(&w, &g, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int sends = 0;
    for (int r = 0; r < 4; r++) {
        CU_ASSERT_EQUAL(count(t, r, TOP_COMPUTE, -1, "attn_fwd", NULL), 16);
        CU_ASSERT_EQUAL(count(t, r, TOP_COMPUTE, -1, "attn_bwd", NULL), 16);
        CU_ASSERT_EQUAL(count(t, r, TOP_COMPUTE, -1, "embedding_fwd", NULL), r == 0 ? 8 : 0);
        CU_ASSERT_EQUAL(count(t, r, TOP_COMPUTE, -1, "lm_head_bwd", NULL), r == 3 ? 8 : 0);
        CU_ASSERT_EQUAL(fwd_before_bwd(t, r, 1), 2 * (4 - r - 1) + 4 + 1);
        int want = r == 0 || r == 3 ? 24 : 32;
        double bytes;
        CU_ASSERT_EQUAL(count(t, r, TOP_SEND, -1, NULL, &bytes), want);
        ASSERT_REL(bytes, want * 1024 * 1024 * 2.0, 1e-12); /* b s h in bf16 */
        CU_ASSERT_EQUAL(count(t, r, TOP_RECV, -1, NULL, NULL), want);
        sends += count(t, r, TOP_SEND, -1, NULL, NULL);
    }
    CU_ASSERT_EQUAL(sends, 2 * 8 * (4 * 2 - 1));
    CU_ASSERT_EQUAL(p2p_count(t, 0, TOP_SEND, 1), 16);
    CU_ASSERT_EQUAL(p2p_count(t, 0, TOP_SEND, 3), 8); /* gradients of chunk 1 back to chunk 0 of rank 3 */
    CU_ASSERT_EQUAL(p2p_count(t, 0, TOP_RECV, 3), 8); /* chunk 0's output of rank 3 into chunk 1 */
    CU_ASSERT_EQUAL(p2p_count(t, 3, TOP_SEND, 0), 8);
    CU_ASSERT_EQUAL(p2p_count(t, 3, TOP_RECV, 0), 8);
    CU_ASSERT_EQUAL(p2p_count(t, 1, TOP_SEND, 3), 0);
    /* the same model FLOPs as plain 1F1B, each rank's too (its layers are all equal) */
    workload_spec w1 = pipe_spec(8, 1024, 4, 8, 1);
    trace *t1 = workload_generate(&w1, &g, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t1);
    for (int r = 0; r < 4; r++)
        ASSERT_REL(rank_flops(t, r), rank_flops(t1, r), 1e-12);
    trace_free(t1);
    trace_free(t);
    /* m = p: warm-up 2(p - r - 1) + (V-1) p >= m V = 8 on ranks 0 and 1 (capped: all forwards
     * first), 6 and 4 forwards on ranks 2 and 3 */
    w = pipe_spec(8, 1024, 4, 4, 2);
    t = workload_generate(&w, &g, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int want_first[4] = {8, 8, 7, 5};
    for (int r = 0; r < 4; r++) {
        CU_ASSERT_EQUAL(fwd_before_bwd(t, r, 1), want_first[r]);
        CU_ASSERT_EQUAL(count(t, r, TOP_COMPUTE, -1, "attn_bwd", NULL), 8);
    }
    trace_free(t);
}

/* An interleaved MoE step under ZeRO-1 (8 layers, the first 3 dense; pp 2
 * with 2 chunks a rank; dp 8, ep 4; 1 MiB buckets). */
static workload_spec moe_interleaved_zero1(void)
{
    workload_spec w = {.m = {.name = "moe", .layers = 8, .hidden = 1024, .heads = 16, .vocab = 1024, .gated = true,
                             .experts = 4, .topk = 2, .expert_ffn = 1024, .dense_layers = 3},
                       .tp = 1, .pp = 2, .dp = 8, .ep = 4, .gpus = 16, .global_batch = 32, .seq = 256, .vpp = 2,
                       .zero = 1, .bucket_bytes = 1 << 20};
    workload_spec_defaults(&w);
    return w;
}

/* Chunk c of rank r holds layers (c p + r) L/(p V) ...: an MoE model whose
 * first 3 of 8 layers are dense puts MoE layers 4, 5 on rank 0 (chunks hold
 * layers 0-1 and 4-5) and 3, 6, 7 on rank 1 (2-3, 6-7); plain 1F1B would
 * give rank 0 layers 0-3 (one MoE layer). The weights each rank reduces over
 * DP (ZeRO-1 reduce-scatters, then gathers the updated weights back) are
 * its four layers' and, on rank 0, the embedding. */
static void test_workload_interleaved_layer_placement(void)
{
    workload_spec w = moe_interleaved_zero1();
    gpu_model g = gpu("H100");
    GError *err = NULL;
    trace *t = workload_generate(&w, &g, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int m = 4, r1 = 8; /* rank of pp stage 1 at dp 0 (tp 1, dp 8) */
    CU_ASSERT_EQUAL(count(t, 0, TOP_COMPUTE, -1, "moe_router_fwd", NULL), 2 * m);
    CU_ASSERT_EQUAL(count(t, r1, TOP_COMPUTE, -1, "moe_router_fwd", NULL), 3 * m);
    CU_ASSERT_EQUAL(count(t, 0, TOP_COMPUTE, -1, "mlp_fwd", NULL), 2 * m);
    for (int r = 0; r < 16; r += r1) {
        double dense = r == 0 ? 1024.0 * 1024 : 0, expert = 0; /* untied: embedding on rank 0 only */
        if (r == r1)
            dense += 1024.0 * 1024; /* the LM head */
        int layers[2][4] = {{0, 1, 4, 5}, {2, 3, 6, 7}};
        for (int k = 0; k < 4; k++) {
            int l = layers[r / r1][k];
            double e, all = workload_layer_params(&w.m, workload_layer_is_moe(&w.m, l), &e);
            dense += all - e;
            expert += e;
        }
        double rs, ag, ers, eag;
        count(t, r, TOP_COLL, COLL_REDUCE_SCATTER, "dp_grad", &rs);
        count(t, r, TOP_COLL, COLL_ALL_GATHER, "zero_param_ag", &ag);
        count(t, r, TOP_COLL, COLL_REDUCE_SCATTER, "dp_grad_expert", &ers);
        count(t, r, TOP_COLL, COLL_ALL_GATHER, "zero_param_ag_expert", &eag);
        ASSERT_REL(rs - ers, dense * 2, 1e-3);    /* bf16 gradients, once per step */
        ASSERT_REL(ag - eag, dense * 2, 1e-3);    /* every chunk's buckets gathered back */
        ASSERT_REL(ers, expert / 4 * 2, 1e-3);     /* experts split over ep 4, bf16 */
        ASSERT_REL(eag, expert / 4 * 2, 1e-3);     /* and gathered back over expert DP (2 ranks) */
    }
    CU_ASSERT_TRUE(trace_validate(t, &err));
    replay_result res;
    if (replay_on(t, 16, &res))
        replay_result_clear(&res);
    trace_free(t);
}

/* --overlap-param-gather: the same buckets gathered (dense over DP, experts
 * over expert DP), none after the optimizer, each before the first forward of
 * the weights it holds, and every layer's first forward waits for one; the
 * step no slower than with the gathers after the optimizer. Interleaved, so
 * each model chunk's buckets are its own; MoE, so both kinds of bucket. */
static void test_workload_overlap_param_gather(void)
{
    workload_spec w = moe_interleaved_zero1();
    gpu_model g = gpu("H100");
    GError *err = NULL;
    trace *t0 = workload_generate(&w, &g, &err);
    w.overlap_param_gather = true;
    trace *t1 = workload_generate(&w, &g, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t1);
    for (int r = 0; r < 16; r += 8) {
        double a0, a1, e0, e1;
        int n0 = count(t0, r, TOP_COLL, COLL_ALL_GATHER, "zero_param_ag", &a0);
        int n1 = count(t1, r, TOP_COLL, COLL_ALL_GATHER, "zero_param_ag", &a1);
        count(t0, r, TOP_COLL, COLL_ALL_GATHER, "zero_param_ag_expert", &e0);
        count(t1, r, TOP_COLL, COLL_ALL_GATHER, "zero_param_ag_expert", &e1);
        CU_ASSERT_EQUAL(n0, n1);
        CU_ASSERT_TRUE(n1 >= 4 && e1 > 0); /* 1 MiB buckets: several, of both kinds */
        ASSERT_REL(a1, a0, 1e-9);
        ASSERT_REL(e1, e0, 1e-9);
        /* in op order: every gather before the optimizer; the layer forwards that depend on a
         * gather are the 4 of microbatch 0 (2 chunks of 2 layers), no others */
        const GArray *ops = t1->ranks[r].ops;
        int opt = -1, waited = 0;
        for (guint i = 0; i < ops->len; i++) {
            const trace_op *o = &g_array_index(ops, trace_op, i);
            if (!strcmp(o->name, "optimizer_adam"))
                opt = (int)i;
            if (o->kind == TOP_COLL && g_str_has_prefix(o->name, "zero_param_ag"))
                CU_ASSERT_EQUAL(opt, -1);
            if (o->kind == TOP_COMPUTE && !strcmp(o->name, "attn_fwd")) {
                for (guint d = 0; o->deps && d < o->deps->len; d++) {
                    const trace_op *p = &g_array_index(ops, trace_op, g_array_index(o->deps, uint32_t, d));
                    if (p->kind == TOP_COLL && g_str_has_prefix(p->name, "zero_param_ag")) {
                        waited++;
                        break;
                    }
                }
            }
        }
        CU_ASSERT_TRUE(opt >= 0);
        CU_ASSERT_EQUAL(waited, 4);
    }
    CU_ASSERT_TRUE(trace_validate(t1, &err));
    replay_result r0, r1;
    if (replay_on(t0, 16, &r0)) {
        if (replay_on(t1, 16, &r1)) {
            CU_ASSERT_TRUE(r1.end_ps <= r0.end_ps);
            replay_result_clear(&r1);
        }
        replay_result_clear(&r0);
    }
    trace_free(t0);
    trace_free(t1);
    /* only with the distributed optimizer */
    w.zero = 0;
    CU_ASSERT_FALSE(workload_spec_check(&w, &err));
    CU_ASSERT_PTR_NOT_NULL(err);
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, "needs --zero 1 or 2") : NULL);
    g_clear_error(&err);
}

/* The generated traces validate and replay to the end (no deadlock) with
 * pp 2 (both neighbours are the same rank), TP, DP, SP, ZeRO-1 and 2,
 * recomputation, m = p (all forwards first on the early ranks) and up to 4
 * chunks, on one and two DGX H100. gpt-1.7b has 24 layers, llama2-7b 32. */
static void test_workload_interleaved_replays(void)
{
    static const struct {
        const char *model;
        int tp, pp, dp, gb, vpp, zero;
        bool sp, recompute;
    } cases[] = {
        {"gpt-1.7b", 2, 2, 2, 8, 2, 0, false, false},  /* m 4 */
        {"gpt-1.7b", 1, 2, 2, 4, 3, 2, false, true},   /* m 2 = p */
        {"gpt-1.7b", 2, 4, 2, 16, 3, 1, true, false},  /* m 8, 16 GPUs */
        {"llama2-7b", 2, 4, 1, 4, 4, 0, true, false},  /* m 4 = p, one layer per chunk */
        {"llama2-7b", 2, 4, 2, 24, 2, 1, false, false}, /* m 12 */
    };
    gpu_model g = gpu("H100");
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        workload_spec w = spec(cases[i].model, cases[i].tp, cases[i].pp, cases[i].dp, cases[i].gb, 256);
        w.vpp = cases[i].vpp;
        w.zero = cases[i].zero;
        w.sp = cases[i].sp;
        w.recompute = cases[i].recompute;
        GError *err = NULL;
        trace *t = workload_generate(&w, &g, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_TRUE(trace_validate(t, &err));
        g_clear_error(&err);
        int m = w.global_batch / (w.micro_batch * w.dp);
        for (int r = 0; r < t->nranks; r++)
            CU_ASSERT_EQUAL(count(t, r, TOP_COMPUTE, -1, "attn_bwd", NULL), m * w.m.layers / w.pp);
        replay_result res;
        if (replay_on(t, w.gpus, &res)) {
            for (int r = 0; r < t->nranks; r++)
                CU_ASSERT(res.end_ps >= res.ranks[r].compute_ps);
            replay_result_clear(&res);
        }
        trace_free(t);
    }
}

static void expect_schedule_error(const char *s, const char *needle)
{
    GError *err = NULL;
    int v = 7;
    CU_ASSERT_FALSE(workload_schedule_parse(s, &v, &err));
    CU_ASSERT_EQUAL(v, 7);
    CU_ASSERT_TRUE(g_error_matches(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE));
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, needle) : NULL);
    g_clear_error(&err);
}

static void expect_layout_error(const workload_spec *w, const char *needle)
{
    GError *err = NULL;
    CU_ASSERT_FALSE(workload_spec_check(w, &err));
    CU_ASSERT_TRUE(g_error_matches(err, WORKLOAD_ERROR, WORKLOAD_ERROR_LAYOUT));
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, needle) : NULL);
    g_clear_error(&err);
}

static void test_workload_interleaved_errors(void)
{
    int v = 0;
    CU_ASSERT_TRUE(workload_schedule_parse(NULL, &v, NULL));
    CU_ASSERT_EQUAL(v, 1);
    CU_ASSERT_TRUE(workload_schedule_parse("1F1B", &v, NULL));
    CU_ASSERT_EQUAL(v, 1);
    CU_ASSERT_TRUE(workload_schedule_parse("interleaved:4", &v, NULL));
    CU_ASSERT_EQUAL(v, 4);
    expect_schedule_error("interleaved:1", "V >= 2");
    expect_schedule_error("interleaved:0", "V >= 2");
    expect_schedule_error("interleaved:-2", "integer >= 2");
    expect_schedule_error("interleaved:x", "integer >= 2");
    expect_schedule_error("interleaved:2x", "integer >= 2");
    expect_schedule_error("interleaved:", "integer >= 2");
    expect_schedule_error("interleaved:99999999999999999999", "at most 1000");
    expect_schedule_error("gpipe", "expected 1f1b or interleaved:V");
    /* llama2-7b: 32 layers */
    workload_spec w = spec("llama2-7b", 1, 4, 1, 6, 256);
    w.vpp = 2;
    expect_layout_error(&w, "microbatches per step (6 = global batch 6 / (micro-batch 1 * dp 1)) must be a "
                            "multiple of pp (4)");
    w = spec("llama2-7b", 1, 4, 1, 8, 256);
    w.vpp = 9;
    expect_layout_error(&w, "layers (32) must be at least pp*V = 4*9");
    w = spec("llama2-7b", 2, 1, 1, 8, 256);
    w.vpp = 2;
    expect_layout_error(&w, "needs pp >= 2");
    w = spec("llama2-7b", 1, 4, 1, 8, 256);
    w.vpp = 2;
    w.layer_fuse = 33; /* more than the model has */
    expect_layout_error(&w, "layer fuse (33) must be in 1..layers (32)");
    w.layer_fuse = 8; /* 4 layers per chunk: one group of 4 */
    CU_ASSERT_TRUE(workload_spec_check(&w, NULL));
}

/* Korthikanti et al. 2022: with interleaving stage 0 holds activations of
 * p (1 + (p-1)/(p V)) microbatches instead of p: with full recomputation
 * (2 s b h per layer) the difference is 2 s b h (L/p) (p-1)/V. */
static void test_workload_interleaved_memory(void)
{
    workload_spec w = spec("llama2-7b", 1, 4, 1, 16, 2048);
    w.recompute = true;
    double plain = workload_memory_bytes(&w);
    w.vpp = 2;
    double inter = workload_memory_bytes(&w);
    ASSERT_REL(inter - plain, 2.0 * 2048 * 1 * 4096 * (32 / 4) * 3 / 2, 1e-9);
}

/* ---- uneven pipeline stages (layers not divisible by pp) ---- */

/* The ranks' FLOPs add up to the model's, and the step replays on 8 GPUs
 * with every rank's compute inside the step. */
static void check_flops_and_replay(const trace *t, const workload_spec *w)
{
    double total = 0;
    for (int r = 0; r < t->nranks; r++)
        total += rank_flops(t, r);
    ASSERT_REL(total, step_flops_run(w), 1e-9);
    replay_result res;
    if (replay_on(t, 8, &res)) {
        for (int r = 0; r < t->nranks; r++)
            CU_ASSERT(res.end_ps >= res.ranks[r].compute_ps);
        replay_result_clear(&res);
    }
}

/* Stage layer counts by hand from the rule (c = ceil(L/p), r = pc - L:
 * the first ceil(r/2) and last floor(r/2) stages hold c - 1). 126 on 16 is
 * Llama 3 405B's split (arXiv:2407.21783 sec. 3.3.2: one layer fewer on
 * the first and the last stage). */
static void test_workload_stage_layers_rule(void)
{
    static const struct {
        int layers, pp;
        const char *want;
    } cases[] = {
        {126, 16, "7,8,8,8,8,8,8,8,8,8,8,8,8,8,8,7"},
        {10, 4, "2,3,3,2"},                   /* r 2: Llama's rule */
        {32, 3, "10,11,11"},                  /* r 1: the first stage alone */
        {7, 2, "3,4"},
        {32, 4, "8,8,8,8"},                   /* divisible: unchanged */
        {126, 20, "6,6,6,6,6,6,6,7,7,7,7,7,7,6,6,6,6,6,6,6"}, /* r 14: spread, the long stages in the middle */
        {11, 8, "1,1,1,2,2,2,1,1"},
        {5, 5, "1,1,1,1,1"},
        {1, 1, "1"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        workload_spec w = {.m = {.layers = cases[i].layers}, .pp = cases[i].pp, .vpp = 1};
        GString *got = g_string_new(NULL);
        for (int s = 0; s < w.pp; s++)
            g_string_append_printf(got, "%s%d", s ? "," : "", workload_stage_layers(&w, s, NULL));
        CU_ASSERT_STRING_EQUAL(got->str, cases[i].want);
        g_string_free(got, TRUE);
    }
    /* invariants over every L <= 64 and p <= L: the stages tile the layers in order, differ by at
     * most 1, none is empty, pp dividing L gives L/p each, and no end stage is longer than a middle one */
    for (int L = 1; L <= 64; L++)
        for (int p = 1; p <= L; p++) {
            workload_spec w = {.m = {.layers = L}, .pp = p, .vpp = 1};
            int next = 0, lo = L, hi = 0, mid = 0;
            for (int s = 0; s < p; s++) {
                int first, n = workload_stage_layers(&w, s, &first);
                CU_ASSERT_EQUAL(first, next);
                next += n;
                lo = MIN(lo, n);
                hi = MAX(hi, n);
                if (s > 0 && s < p - 1)
                    mid = MAX(mid, n);
            }
            CU_ASSERT_EQUAL(next, L);
            CU_ASSERT(lo >= 1 && hi - lo <= 1);
            if (L % p == 0)
                CU_ASSERT(lo == L / p && hi == L / p);
            if (p > 2)
                CU_ASSERT(workload_stage_layers(&w, 0, NULL) <= mid && workload_stage_layers(&w, p - 1, NULL) <= mid);
        }
    /* interleaved (pp*V divides L): the rank's L/p layers, first layer of its chunk 0 */
    workload_spec v = {.m = {.layers = 16}, .pp = 4, .vpp = 2};
    int first;
    CU_ASSERT_EQUAL(workload_stage_layers(&v, 3, &first), 4);
    CU_ASSERT_EQUAL(first, 6);
}

/* A custom MoE model of 10 layers (the first 3 dense) on pp 4: stages of
 * 2, 3, 3, 2 layers = layers 0-1, 2-4, 5-7, 8-9, so 0, 2, 3, 2 MoE layers.
 * Every rank runs each of its layers once per microbatch forward and
 * backward, at the same cost per layer; the model FLOPs are unchanged; the
 * gradients each rank reduces over DP are its own layers' (and, on the
 * ends, the embedding / LM head); the step replays. */
static void test_workload_uneven_stages_trace(void)
{
    workload_spec w = {.m = {.name = "moe", .layers = 10, .hidden = 1024, .heads = 16, .vocab = 1024, .gated = true,
                             .experts = 4, .topk = 2, .expert_ffn = 1024, .dense_layers = 3},
                       .tp = 1, .pp = 4, .dp = 2, .gpus = 8, .global_batch = 16, .seq = 256};
    workload_spec_defaults(&w);
    gpu_model g = gpu("H100");
    GError *err = NULL;
    trace *t = workload_generate(&w, &g, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int m = 8, layers[4] = {2, 3, 3, 2}, moe[4] = {0, 2, 3, 2}, first[4] = {0, 2, 5, 8};
    for (int s = 0; s < 4; s++) {
        int r = 2 * s; /* dp 0 of stage s */
        CU_ASSERT_EQUAL(count(t, r, TOP_COMPUTE, -1, "attn_fwd", NULL), m * layers[s]);
        CU_ASSERT_EQUAL(count(t, r, TOP_COMPUTE, -1, "attn_bwd", NULL), m * layers[s]);
        CU_ASSERT_EQUAL(count(t, r, TOP_COMPUTE, -1, "moe_router_fwd", NULL), m * moe[s]);
        CU_ASSERT_EQUAL(count(t, r, TOP_COMPUTE, -1, "mlp_fwd", NULL), m * (layers[s] - moe[s]));
        ASSERT_REL(compute_ps(t, r, "attn_", false), compute_ps(t, 2, "attn_", false) * layers[s] / 3, 1e-12);
        double dense = s == 0 || s == 3 ? 1024.0 * 1024 : 0, expert = 0, e; /* untied */
        for (int l = first[s]; l < first[s] + layers[s]; l++) {
            double all = workload_layer_params(&w.m, workload_layer_is_moe(&w.m, l), &e);
            dense += all - e;
            expert += e;
        }
        double ar, ear;
        count(t, r, TOP_COLL, COLL_ALL_REDUCE, "dp_grad", &ar);
        count(t, r, TOP_COLL, COLL_ALL_REDUCE, "dp_grad_expert", &ear);
        ASSERT_REL(ar - ear, dense * 2, 1e-3);
        ASSERT_REL(ear, expert * 2, 1e-3); /* ep 1: the experts reduce over dp like the rest */
    }
    check_flops_and_replay(t, &w);
    trace_free(t);
}

/* Uneven model chunks under interleaving (workload_chunk_layers): the pp*V
 * virtual stages split the layers as stages do. Llama 3 405B's 126 layers
 * on pp 16 x 2 chunks: virtual stages 0 (rank 0, chunk 0) and 31 (rank 15,
 * chunk 1) hold 3, the 30 others 4, so ranks 0 and 15 hold 7 and the
 * others 8 (the paper's rule: one layer fewer on the first and the last
 * stage); the chunks tile the layers in virtual-stage order. 10 layers on
 * pp 4 x 2: virtual stages of 1,1,1,2 | 2,1,1,1 (r = 6: three short at
 * each end). */
static void test_workload_chunk_layers_rule(void)
{
    workload_spec w = {.m = {.layers = 126}, .pp = 16, .vpp = 2};
    int next = 0;
    for (int c = 0; c < 2; c++)
        for (int s = 0; s < 16; s++) {
            int first, n = workload_chunk_layers(&w, s, c, &first);
            CU_ASSERT_EQUAL(first, next);
            CU_ASSERT_EQUAL(n, (c == 0 && s == 0) || (c == 1 && s == 15) ? 3 : 4);
            next = first + n;
        }
    CU_ASSERT_EQUAL(next, 126);
    for (int s = 0; s < 16; s++)
        CU_ASSERT_EQUAL(workload_stage_layers(&w, s, NULL), s == 0 || s == 15 ? 7 : 8);
    workload_spec v = {.m = {.layers = 10}, .pp = 4, .vpp = 2};
    static const int want[2][4] = {{1, 1, 1, 2}, {2, 1, 1, 1}};
    for (int c = 0; c < 2; c++)
        for (int s = 0; s < 4; s++)
            CU_ASSERT_EQUAL(workload_chunk_layers(&v, s, c, NULL), want[c][s]);
    /* 1F1B: the one chunk is the stage */
    workload_spec o = {.m = {.layers = 126}, .pp = 16, .vpp = 1};
    for (int s = 0; s < 16; s++) {
        int f1, f2;
        CU_ASSERT_EQUAL(workload_chunk_layers(&o, s, 0, &f1), workload_stage_layers(&o, s, &f2));
        CU_ASSERT_EQUAL(f1, f2);
    }
}

/* An interleaved step with uneven chunks (10 layers, pp 4 x 2 chunks of
 * 1,1,1,2 | 2,1,1,1): every rank runs each of its layers once per
 * microbatch forward and backward, the model FLOPs are unchanged and the
 * step replays (no deadlock in the virtual pipeline's sends). */
static void test_workload_uneven_chunks_trace(void)
{
    workload_spec w = pipe_spec(10, 1024, 4, 8, 2);
    w.dp = 2;
    w.gpus = 8;
    w.global_batch = 16;
    gpu_model g = gpu("H100");
    GError *err = NULL;
    trace *t = workload_generate(&w, &g, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    static const int layers[4] = {3, 2, 2, 3}; /* 1+2, 1+1, 1+1, 2+1 */
    for (int s = 0; s < 4; s++) {
        int r = 2 * s; /* dp 0 of stage s */
        CU_ASSERT_EQUAL(count(t, r, TOP_COMPUTE, -1, "attn_fwd", NULL), 8 * layers[s]);
        CU_ASSERT_EQUAL(count(t, r, TOP_COMPUTE, -1, "attn_bwd", NULL), 8 * layers[s]);
    }
    check_flops_and_replay(t, &w);
    trace_free(t);
}

/* --decoder-first/last-pipeline-num-layers (Megatron-LM's): the given
 * stages hold their counts, the middle ones the rest evenly (10 layers on
 * pp 4 with the last holding 1: 3, 3, 3, 1; with the first 4 and last 2:
 * 4, 2, 2, 2); every rank's trace runs its stage's layers, the FLOPs are the
 * model's and the step replays, with the interleaved schedule too (a stage's
 * layers split over its chunks); counts that do not split evenly, over the
 * middle stages or a stage's chunks, are refused. */
static void test_workload_stage_counts(void)
{
    workload_spec w = pipe_spec(10, 1024, 4, 8, 1);
    w.last_stage_layers = 1;
    static const int want[2][4] = {{3, 3, 3, 1}, {4, 2, 2, 2}};
    for (int k = 0; k < 2; k++) {
        if (k == 1)
            w.first_stage_layers = 4, w.last_stage_layers = 2;
        CU_ASSERT_TRUE(workload_spec_check(&w, NULL));
        int next = 0;
        for (int s = 0; s < 4; s++) {
            int first, n = workload_stage_layers(&w, s, &first);
            CU_ASSERT_EQUAL(n, want[k][s]);
            CU_ASSERT_EQUAL(first, next);
            next = first + n;
        }
        CU_ASSERT_EQUAL(next, 10);
    }
    gpu_model g = gpu("H100");
    w.dp = 2, w.gpus = 8, w.global_batch = 16; /* 8 ranks, as check_flops_and_replay replays */
    trace *t = workload_generate(&w, &g, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int s = 0; s < 4; s++) /* dp 0 of stage s */
        CU_ASSERT_EQUAL(count(t, 2 * s, TOP_COMPUTE, -1, "attn_fwd", NULL), 8 * want[1][s]);
    check_flops_and_replay(t, &w);
    trace_free(t);
    GError *err = NULL;
    w.first_stage_layers = 3; /* 10 - 3 - 2 = 5 over 2 middle stages */
    CU_ASSERT_FALSE(workload_spec_check(&w, &err));
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, "must split evenly over the 2 middle stages") : NULL);
    g_clear_error(&err);
    /* interleaved: a stage's layers over its chunks, in virtual-stage order (chunk c of stage s is
     * virtual stage c pp + s): 4, 2, 2, 2 in 2 chunks are layers 0-1, 2, 3, 4 | 5-6, 7, 8, 9 */
    w.first_stage_layers = 4;
    w.vpp = 2;
    CU_ASSERT_TRUE(workload_spec_check(&w, NULL));
    static const int first[2][4] = {{0, 2, 3, 4}, {5, 7, 8, 9}};
    for (int c = 0; c < 2; c++)
        for (int s = 0; s < 4; s++) {
            int f, n = workload_chunk_layers(&w, s, c, &f);
            CU_ASSERT_EQUAL(n, s == 0 ? 2 : 1);
            CU_ASSERT_EQUAL(f, first[c][s]);
        }
    t = workload_generate(&w, &g, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    check_flops_and_replay(t, &w);
    trace_free(t);
    w.first_stage_layers = 3, w.last_stage_layers = 1; /* 3 layers in 2 chunks */
    CU_ASSERT_FALSE(workload_spec_check(&w, &err));
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, "over its 2 model chunks") : NULL);
    g_clear_error(&err);
    /* pp 2 with both given: no middle stage, the two counts the layers */
    w = pipe_spec(10, 1024, 2, 4, 1);
    w.first_stage_layers = 6, w.last_stage_layers = 4;
    CU_ASSERT_TRUE(workload_spec_check(&w, NULL));
    CU_ASSERT_EQUAL(workload_stage_layers(&w, 1, NULL), 4);
    w.last_stage_layers = 3;
    CU_ASSERT_FALSE(workload_spec_check(&w, NULL));
}

/* Memory of the busiest stage: stage s holds min(p - s, m) microbatches.
 * With full recomputation (2 s b h bytes per layer and microbatch) and a
 * 16-token vocabulary, 10 layers on pp 4 keep 2x4, 3x3, 3x2, 2x1
 * layer-microbatches: stage 1 (3 layers, 16 bytes per parameter under DDP)
 * is the busiest. Divisible layers: stage 0, as before. */
static void test_workload_uneven_stages_memory(void)
{
    workload_spec w = pipe_spec(10, 1024, 4, 8, 1);
    w.recompute = true;
    double act = 2.0 * 1024 * 1 * 1024, layer = workload_layer_params(&w.m, false, NULL);
    ASSERT_REL(workload_memory_bytes(&w), 16 * 3 * layer + act * 9, 1e-12);
    w = pipe_spec(8, 1024, 4, 8, 1);
    w.recompute = true;
    ASSERT_REL(workload_memory_bytes(&w), 16 * (2 * layer + 16.0 * 1024) + act * 8, 1e-12);
    /* no global batch yet (`scale` choosing a layout): a full pipeline, the
     * same as any batch of at least pp microbatches - never no activations */
    double full = workload_memory_bytes(&w);
    w.global_batch = 0;
    ASSERT_REL(workload_memory_bytes(&w), full, 1e-12);
}

/* Interleaving needs a layer per model chunk (pp*V at most the layers); pp
 * at most the layers. */
static void test_workload_uneven_stages_errors(void)
{
    workload_spec w = pipe_spec(12, 1024, 4, 8, 1);
    w.layer_fuse = 3;
    CU_ASSERT_TRUE(workload_spec_check(&w, NULL));
    w = pipe_spec(10, 1024, 4, 8, 2);
    CU_ASSERT_TRUE(workload_spec_check(&w, NULL)); /* chunks of 1,1,1,2 | 2,1,1,1 */
    w = pipe_spec(10, 1024, 4, 8, 3);
    expect_layout_error(&w, "layers (10) must be at least pp*V = 4*3");
    w = pipe_spec(10, 1024, 11, 11, 1);
    expect_layout_error(&w, "pp (11) must be at most the layers (10)");
}

/* Fused layer groups need not divide a stage: the last group of a stage
 * takes the rest. 10 layers on pp 4 (stages 2, 3, 3, 2) fused by 2 make
 * groups 2 | 2+1 | 2+1 | 2: every rank keeps its FLOPs, the 3-layer stages
 * issue fewer ops, and the pipeline still replays. */
static void test_workload_uneven_stages_fused(void)
{
    workload_spec w = pipe_spec(10, 1024, 4, 8, 1);
    gpu_model g = gpu("H100");
    trace *a = workload_generate(&w, &g, NULL);
    w.layer_fuse = 2;
    CU_ASSERT_TRUE(workload_spec_check(&w, NULL));
    trace *b = workload_generate(&w, &g, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (int r = 0; r < 4; r++) {
        ASSERT_REL(rank_flops(b, r), rank_flops(a, r), 1e-9);
        CU_ASSERT(b->ranks[r].ops->len < a->ranks[r].ops->len);
    }
    replay_result res;
    if (replay_on(b, 4, &res))
        replay_result_clear(&res);
    trace_free(a);
    trace_free(b);
}

int main(void)
{
    static const test_case cases[] = {
        {"/workload/uneven-stages/fused", test_workload_uneven_stages_fused},
        {"/workload/interleaved/bubble", test_workload_interleaved_bubble},
        {"/workload/interleaved/counts", test_workload_interleaved_counts},
        {"/workload/interleaved/layer-placement", test_workload_interleaved_layer_placement},
        {"/workload/overlap-param-gather", test_workload_overlap_param_gather},
        {"/workload/interleaved/replays", test_workload_interleaved_replays},
        {"/workload/interleaved/errors", test_workload_interleaved_errors},
        {"/workload/interleaved/memory", test_workload_interleaved_memory},
        {"/workload/uneven-stages/rule", test_workload_stage_layers_rule},
        {"/workload/uneven-stages/trace", test_workload_uneven_stages_trace},
        {"/workload/uneven-stages/memory", test_workload_uneven_stages_memory},
        {"/workload/uneven-stages/errors", test_workload_uneven_stages_errors},
        {"/workload/uneven-chunks/rule", test_workload_chunk_layers_rule},
        {"/workload/stage-counts", test_workload_stage_counts},
        {"/workload/uneven-chunks/trace", test_workload_uneven_chunks_trace},
        {NULL, NULL},
    };
    return test_main("pipeline", cases);
}

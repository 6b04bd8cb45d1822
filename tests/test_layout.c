/* Tests of Megatron-LM's --pipeline-model-parallel-layout (traces/
 * workload_layout.c and its use in workload.c / workload_gen.c): the
 * grammar against Megatron-LM's parse_str_to_list, its refusals with their
 * positions, the layout rules, a layout equal to the split rule giving the
 * same trace, stages without decoder layers, and a standalone MTP stage. */
#include <math.h>
#include <string.h>

#include "models/replay.h"
#include "testutil.h"
#include "topologies/topo.h"
#include "traces/workload.h"
#include "workload_util.h"

/* A custom GPT of `layers` layers on tp 1 x pp x dp 1, m microbatches. */
static workload_spec lay_spec(int layers, int pp, int m, const char *layout, int mtp, bool tied)
{
    workload_spec w = {.m = {.name = "custom", .layers = layers, .hidden = 1024, .heads = 16, .vocab = 32000,
                             .gated = !tied, .tied = tied},
                       .tp = 1, .pp = pp, .dp = 1, .gpus = pp, .global_batch = m, .seq = 1024, .mtp = mtp,
                       .pp_layout = layout ? g_intern_string(layout) : NULL};
    workload_spec_defaults(&w);
    return w;
}

static void test_layout_parse(void)
{
    /* Megatron-LM's docstring example: [[E,t,t,t]] + [[t,t]] * 29 + [[m], [L]] */
    const workload_layout *L = workload_layout_get("Ettt|(tt|)*29,m|L", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(L);
    CU_ASSERT_EQUAL(L->n, 32);
    CU_ASSERT_EQUAL(L->dec[0], 3);
    for (int j = 1; j <= 29; j++) {
        CU_ASSERT_EQUAL(L->dec[j], 2);
        CU_ASSERT_EQUAL(L->first[j], 3 + 2 * (j - 1));
    }
    CU_ASSERT_EQUAL(L->dec[30], 0);
    CU_ASSERT_EQUAL(L->dec[31], 0);
    CU_ASSERT_EQUAL(L->first[30], 61);
    CU_ASSERT_EQUAL(L->ndec, 61);
    CU_ASSERT_EQUAL(L->nmtp, 1);
    CU_ASSERT_EQUAL(L->mtp_vs, 30);
    CU_ASSERT_TRUE(L->emb_opens && L->loss_closes && !L->dec_after_mtp);
    CU_ASSERT_EQUAL(L->nemb, 1);
    CU_ASSERT_EQUAL(L->nloss, 1);
    /* the same with t*3 and without the cosmetic comma; the cached result for a repeated string */
    const workload_layout *L2 = workload_layout_get("Et*3|(tt|)*29m|L", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(L2);
    CU_ASSERT_EQUAL(L2->n, 32);
    CU_ASSERT_EQUAL(memcmp(L2->dec, L->dec, 32 * sizeof(int)), 0);
    CU_ASSERT_PTR_EQUAL(workload_layout_get("Ettt|(tt|)*29,m|L", NULL), L);
    /* the unroll examples of Megatron-LM's comments: (|ab)*2,cd -> |ab|abcd; X*N of a separator */
    L = workload_layout_get("(|tt)*2,tm", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(L);
    CU_ASSERT_EQUAL(L->n, 3);
    CU_ASSERT_EQUAL(L->dec[0], 0);
    CU_ASSERT_EQUAL(L->dec[1], 2);
    CU_ASSERT_EQUAL(L->dec[2], 3);
    CU_ASSERT_TRUE(!L->emb_opens && !L->loss_closes);
    L = workload_layout_get("E|*2t|L", NULL); /* E | | t | L */
    CU_ASSERT_PTR_NOT_NULL_FATAL(L);
    CU_ASSERT_EQUAL(L->n, 4);
    CU_ASSERT_EQUAL(L->dec[2], 1);
    /* repeats inside a group, a zero count; m's in two stages; a t after an m */
    L = workload_layout_get("E(t*2|)*3t*0L", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(L);
    CU_ASSERT_EQUAL(L->n, 4);
    CU_ASSERT_EQUAL(L->ndec, 6);
    CU_ASSERT_EQUAL(L->dec[3], 0);
    L = workload_layout_get("Etm|mtL", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(L);
    CU_ASSERT_EQUAL(L->mtp_vs, -2);
    CU_ASSERT_TRUE(L->dec_after_mtp);
}

static void expect_parse_error(const char *s, const char *needle)
{
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(workload_layout_get(s, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, WORKLOAD_ERROR_VALUE);
    if (!strstr(err->message, needle)) {
        fprintf(stderr, "\n'%s': got '%s', expected '%s'\n", s, err->message, needle);
        CU_FAIL("error message");
    }
    g_clear_error(&err);
}

static void test_layout_parse_errors(void)
{
    expect_parse_error("", "empty");
    expect_parse_error("Ext|L", "unknown character 'x' at character 2");
    expect_parse_error("Et t|L", "unknown character ' ' at character 3");
    expect_parse_error("Et*|L", "'*' at character 3 needs a count");
    expect_parse_error("E*|L", "'*' at character 2 needs a count");
    expect_parse_error("*3E|L", "'*' at character 1 repeats nothing");
    expect_parse_error("E(t|L", "'(' at character 2 is not closed");
    expect_parse_error("E((t)*2|)*2L", "'(' at character 3 inside another");
    expect_parse_error("E()*2|L", "empty '()' at character 2");
    expect_parse_error("E(tt)|L", "closed at character 5 needs '*N'");
    expect_parse_error("Et)|L", "')' at character 3 without its '('");
    expect_parse_error("E3t|L", "a number at character 2 outside");
    expect_parse_error("E(t*)*2|L", "'*' at character 4 needs a count");
    expect_parse_error("Et*2*3|L", "'*' at character 5 repeats nothing");
    expect_parse_error("E,,t*2000000|L", "the count at character 6 is above 1000000");
    expect_parse_error("E(t*1000000|)*1000L", "unrolls to more than");
}

static void expect_check_error(const workload_spec *w, const char *needle)
{
    GError *err = NULL;
    CU_ASSERT_FALSE(workload_spec_check(w, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    if (!strstr(err->message, needle)) {
        fprintf(stderr, "\ngot '%s', expected '%s'\n", err->message, needle);
        CU_FAIL("error message");
    }
    g_clear_error(&err);
}

static void expect_apply_error(workload_spec w, const char *needle)
{
    GError *err = NULL;
    CU_ASSERT_FALSE(workload_layout_apply(&w, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    if (!strstr(err->message, needle)) {
        fprintf(stderr, "\ngot '%s', expected '%s'\n", err->message, needle);
        CU_FAIL("error message");
    }
    g_clear_error(&err);
}

/* The rules of Megatron-LM's validate_layer_layout, and ours. */
static void test_layout_rules(void)
{
    workload_spec w = lay_spec(8, 4, 8, "Et*2|t*2|t*2|t*2L", 0, true);
    CU_ASSERT_TRUE(workload_layout_apply(&w, NULL));
    CU_ASSERT_EQUAL(w.vpp, 1);
    CU_ASSERT_TRUE(workload_spec_check(&w, NULL));
    /* virtual stages over pp: 8 over pp 4 are two chunks each; 6 over 4 do not divide */
    w = lay_spec(8, 4, 8, "Et|(t|)*6tL", 0, true);
    CU_ASSERT_TRUE(workload_layout_apply(&w, NULL));
    CU_ASSERT_EQUAL(w.vpp, 2);
    CU_ASSERT_TRUE(workload_spec_check(&w, NULL));
    expect_apply_error(lay_spec(8, 4, 8, "Et*2|t*2|t*2|t|t|L", 0, true), "6 virtual stages, not a multiple of pp 4");
    w = lay_spec(8, 4, 8, "Et|(t|)*6tL", 0, true);
    w.vpp = 4; /* --schedule interleaved:4 */
    expect_apply_error(w, "gives 2 model chunks per pp rank");
    /* the counts: layers, MTP layers, one E, one L, E first, L last */
    expect_apply_error(lay_spec(9, 4, 8, "Et*2|t*2|t*2|t*2L", 0, true), "places 8 decoder layers (t), the model has 9");
    expect_apply_error(lay_spec(8, 4, 8, "Et*2|t*2|t*2|t*2L", 1, true), "places 0 MTP layers (m), --mtp-num-layers is 1");
    expect_apply_error(lay_spec(8, 4, 8, "Et*2|t*2|Et*2|t*2L", 0, true), "must each appear once (got 2 and 1)");
    expect_apply_error(lay_spec(8, 4, 8, "Et*2|t*2|t*2|t*2", 0, true), "must each appear once (got 1 and 0)");
    expect_apply_error(lay_spec(8, 4, 8, "|Et*2|t*4|t*2L", 0, true), "E must open the first virtual stage");
    expect_apply_error(lay_spec(8, 4, 8, "Et*2|t*2|t*2|t*2L|", 0, true), "not a multiple of pp 4");
    expect_apply_error(lay_spec(8, 5, 8, "Et*2|t*2|t*2|t*2L|", 0, true), "L close the last");
    /* MTP: after every decoder layer, in one virtual stage, a rank's last chunk, not the first rank */
    expect_apply_error(lay_spec(8, 4, 8, "Et*2|t*2|t*2m|t*2L", 1, true), "decoder layers must come before the MTP");
    expect_apply_error(lay_spec(8, 4, 8, "Et*2|t*2|t*4m|mL", 2, true), "must all be in one virtual stage");
    expect_apply_error(lay_spec(8, 2, 8, "Et*4|t*4m|E|L", 1, true), "must each appear once");
    expect_apply_error(lay_spec(8, 2, 8, "Et*4|t*4m||L", 1, true), "in their pp rank's last model chunk (they are in "
                                                                     "chunk 0 of 2 of rank 1)");
    expect_apply_error(lay_spec(8, 2, 8, "Et*4|t*4|m|L", 1, true), "cannot be on the first pp rank");
    /* with --decoder-first/last-pipeline-num-layers */
    w = lay_spec(8, 4, 8, "Et*2|t*2|t*2|t*2L", 0, true);
    w.first_stage_layers = 2;
    expect_check_error(&w, "the layout places every layer");
    /* pp above the layers: allowed where the layout says which stages hold none */
    w = lay_spec(2, 4, 8, "E|t|t|L", 0, true);
    CU_ASSERT_TRUE(workload_layout_apply(&w, NULL) && workload_spec_check(&w, NULL));
    w.pp_layout = NULL;
    expect_check_error(&w, "must be at most the layers");
}

/* Whether two traces hold the same ops, rank by rank. */
static bool traces_equal(const trace *a, const trace *b)
{
    if (a->nranks != b->nranks || a->groups->len != b->groups->len)
        return false;
    for (int r = 0; r < a->nranks; r++) {
        if (a->ranks[r].ops->len != b->ranks[r].ops->len)
            return false;
        for (guint i = 0; i < a->ranks[r].ops->len; i++) {
            const trace_op *x = &g_array_index(a->ranks[r].ops, trace_op, i);
            const trace_op *y = &g_array_index(b->ranks[r].ops, trace_op, i);
            if (x->kind != y->kind || x->name != y->name || x->dur_ps != y->dur_ps || x->bytes != y->bytes ||
                x->peer != y->peer || x->stream != y->stream || x->flops != y->flops || x->group != y->group)
                return false;
        }
    }
    return true;
}

static double total_flops(const trace *t)
{
    double f = 0;
    for (int r = 0; r < t->nranks; r++)
        f += rank_flops(t, r);
    return f;
}

/* A layout that says what the split rule (or the stage counts) does gives
 * the same trace and memory estimate. */
static void test_layout_same_as_rule(void)
{
    gpu_model g = gpu("H100");
    struct {
        int layers, pp, vpp, first, last, mtp;
        const char *layout;
    } cases[] = {
        {8, 4, 1, 0, 0, 0, "Et*2|t*2|t*2|t*2L"},
        {10, 4, 1, 0, 0, 0, "Et*2|t*3|t*3|t*2L"},     /* Llama 3's rule: one fewer on the first and last */
        {16, 4, 2, 0, 0, 0, "Ett|(tt|)*6ttL"},        /* interleaved:2, 2 layers a chunk */
        {11, 4, 1, 4, 1, 1, "Et*4|t*3|t*3|tmL"},      /* stage counts with MTP on the last stage */
        {6, 2, 2, 4, 2, 1, "Ett|t|tt|tmL"},           /* stage counts over 2 chunks: 4 -> 2 + 2, 2 -> 1 + 1 */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        workload_spec a = lay_spec(cases[i].layers, cases[i].pp, 8, NULL, cases[i].mtp, false);
        a.vpp = cases[i].vpp;
        a.first_stage_layers = cases[i].first;
        a.last_stage_layers = cases[i].last;
        CU_ASSERT_TRUE_FATAL(workload_spec_check(&a, NULL));
        workload_spec b = lay_spec(cases[i].layers, cases[i].pp, 8, cases[i].layout, cases[i].mtp, false);
        GError *err = NULL;
        CU_ASSERT_TRUE_FATAL(workload_layout_apply(&b, &err) && workload_spec_check(&b, NULL));
        CU_ASSERT_EQUAL(b.vpp, a.vpp);
        for (int s = 0; s < a.pp; s++)
            for (int c = 0; c < a.vpp; c++) {
                int fa, fb, na = workload_chunk_layers(&a, s, c, &fa), nb = workload_chunk_layers(&b, s, c, &fb);
                CU_ASSERT_EQUAL(na, nb);
                CU_ASSERT_EQUAL(fa, fb);
            }
        CU_ASSERT_DOUBLE_EQUAL(workload_memory_bytes(&a), workload_memory_bytes(&b), 0);
        trace *ta = workload_generate(&a, &g, NULL), *tb = workload_generate(&b, &g, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ta);
        CU_ASSERT_PTR_NOT_NULL_FATAL(tb);
        CU_ASSERT_TRUE(traces_equal(ta, tb));
        trace_free(ta);
        trace_free(tb);
    }
    /* what the stage counts cannot say (4 and 1 leave 5 layers for 2 middle stages), a layout can */
    workload_spec a = lay_spec(10, 4, 8, NULL, 1, false);
    a.first_stage_layers = 4, a.last_stage_layers = 1;
    CU_ASSERT_FALSE(workload_spec_check(&a, NULL));
    workload_spec b = lay_spec(10, 4, 8, "Et*4|t*2|t*3|tmL", 1, false);
    CU_ASSERT_TRUE(workload_layout_apply(&b, NULL) && workload_spec_check(&b, NULL));
}

static bool replays(const trace *t, int gpus, double *step_ps)
{
    GError *err = NULL;
    topo *tp = topo_load("dgx-h100", &(topo_opts){.gpus = gpus}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tp);
    coll_system sys;
    topo_coll_system(&sys, tp, 2.5, 1);
    replay_opts o = {.sys = &sys, .compute_scale = 1};
    replay_result res;
    bool ok = replay_run(t, &o, &res, &err);
    CU_ASSERT_TRUE(ok);
    if (ok) {
        *step_ps = (double)res.end_ps;
        replay_result_clear(&res);
    } else {
        fprintf(stderr, "replay: %s\n", err->message);
        g_clear_error(&err);
    }
    topo_free(tp);
    return ok;
}

/* Stages without decoder layers (the embedding alone on the first, the
 * loss alone on the last): their ranks run only those, pass the
 * activations on, and the step does the same work as the split rule's. */
static void test_layout_empty_stages(void)
{
    gpu_model g = gpu("H100");
    workload_spec w = lay_spec(8, 4, 8, "E|t*4|t*4|L", 0, false), rule = lay_spec(8, 4, 8, NULL, 0, false);
    w.m.vocab = rule.m.vocab = 16; /* the embedding and LM head negligible beside a layer */
    CU_ASSERT_TRUE_FATAL(workload_layout_apply(&w, NULL) && workload_spec_check(&w, NULL));
    trace *t = workload_generate(&w, &g, NULL), *tr = workload_generate(&rule, &g, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tr);
    CU_ASSERT_EQUAL(count(t, 0, TOP_COMPUTE, -1, "attn_fwd", NULL), 0);
    CU_ASSERT_EQUAL(count(t, 0, TOP_COMPUTE, -1, "embedding_fwd", NULL), 8);
    CU_ASSERT_EQUAL(count(t, 1, TOP_COMPUTE, -1, "attn_fwd", NULL), 8 * 4);
    CU_ASSERT_EQUAL(count(t, 3, TOP_COMPUTE, -1, "attn_fwd", NULL), 0);
    CU_ASSERT_EQUAL(count(t, 3, TOP_COMPUTE, -1, "lm_head_fwd", NULL), 8);
    CU_ASSERT_EQUAL(count(t, 0, TOP_SEND, -1, NULL, NULL), 8); /* the embedding's output, forward */
    ASSERT_REL(total_flops(t), total_flops(tr), 1e-12);
    double step, step_rule;
    CU_ASSERT_TRUE(replays(t, 4, &step) && replays(tr, 4, &step_rule));
    /* the same layers on two of the four stages: a pipeline of two stages of 4 layers, (m + 1) x 4
     * layer-times forward and backward, against four of 2, (m + p - 1) x 2: 36 / 22 */
    ASSERT_REL(step / step_rule, 36.0 / 22, 0.05);
    trace_free(t);
    trace_free(tr);
}

/* ops named `name` (exactly) on rank r */
static int named(const trace *t, int r, const char *name)
{
    int n = 0;
    for (guint i = 0; i < t->ranks[r].ops->len; i++)
        n += !strcmp(g_array_index(t->ranks[r].ops, trace_op, i).name, name);
    return n;
}

/* sends of rank r to rank peer, and their bytes in *bytes when they are all alike (else -1) */
static int sends(const trace *t, int r, int peer, double *bytes)
{
    int n = 0;
    *bytes = 0;
    for (guint i = 0; i < t->ranks[r].ops->len; i++) {
        const trace_op *o = &g_array_index(t->ranks[r].ops, trace_op, i);
        if (o->kind != TOP_SEND || o->peer != peer)
            continue;
        *bytes = n && *bytes != (double)o->bytes ? -1 : (double)o->bytes;
        n++;
    }
    return n;
}

/* The group of the embedding's gradient all-reduce on rank r, or NULL. */
static const trace_group *emb_group(const trace *t, int r)
{
    for (guint i = 0; i < t->ranks[r].ops->len; i++) {
        const trace_op *o = &g_array_index(t->ranks[r].ops, trace_op, i);
        if (o->kind == TOP_COLL && !strcmp(o->name, "embedding_grad_ar"))
            return g_ptr_array_index(t->groups, o->group);
    }
    return NULL;
}

/* An MTP layer on a stage of its own before the loss's (Megatron-LM's
 * standalone MTP): its layers and the copy of the embedding they look the
 * shifted tokens up in on that stage, its outputs with the hidden states to
 * the loss's stage, which runs the LM head on both. */
static void test_layout_standalone_mtp(void)
{
    gpu_model g = gpu("H100");
    for (int tied = 0; tied < 2; tied++) {
        workload_spec w = lay_spec(6, 4, 8, "Et*2|t*2|t*2m|L", 1, tied);
        workload_spec last = lay_spec(6, 4, 8, "Et*2|t*2|t*2|mL", 1, tied);
        CU_ASSERT_TRUE_FATAL(workload_layout_apply(&w, NULL) && workload_spec_check(&w, NULL));
        CU_ASSERT_TRUE_FATAL(workload_layout_apply(&last, NULL) && workload_spec_check(&last, NULL));
        CU_ASSERT_EQUAL(workload_mtp_stage(&w), 2);
        CU_ASSERT_EQUAL(workload_mtp_stage(&last), 3);
        trace *t = workload_generate(&w, &g, NULL), *tl = workload_generate(&last, &g, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(tl);
        double b, b1, b2;
        CU_ASSERT(named(t, 2, "mtp_fwd") > 0);
        CU_ASSERT_EQUAL(named(t, 3, "mtp_fwd"), 0);
        CU_ASSERT_EQUAL(named(t, 3, "mtp_lm_head_fwd"), 8);
        CU_ASSERT_EQUAL(named(t, 2, "mtp_lm_head_fwd"), 0);
        /* hops: stage 1 -> 2 the hidden states (1,024 tokens x 1,024 x 2 bytes), 2 -> 3 those and the
         * MTP layer's output; their gradients back the same */
        CU_ASSERT_EQUAL(sends(t, 1, 2, &b1), 8);
        CU_ASSERT_EQUAL(sends(t, 2, 3, &b2), 8);
        CU_ASSERT_DOUBLE_EQUAL(b1, 1024.0 * 1024 * 2, 0);
        CU_ASSERT_DOUBLE_EQUAL(b2, 2 * b1, 0);
        CU_ASSERT_EQUAL(sends(t, 3, 2, &b), 8);
        CU_ASSERT_DOUBLE_EQUAL(b, 2 * b1, 0);
        CU_ASSERT_EQUAL(sends(t, 2, 1, &b), 8);
        CU_ASSERT_DOUBLE_EQUAL(b, b1, 0);
        CU_ASSERT_EQUAL(sends(tl, 2, 3, &b), 8);
        CU_ASSERT_DOUBLE_EQUAL(b, b1, 0);
        /* the embedding's copies: the first stage's, the MTP stage's, and a tied LM head's */
        const trace_group *ge = emb_group(t, 2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ge);
        CU_ASSERT_EQUAL(ge->size, tied ? 3 : 2);
        CU_ASSERT_EQUAL(ge->ranks[0], 0);
        CU_ASSERT_EQUAL(ge->ranks[1], 2);
        CU_ASSERT_TRUE(tied ? emb_group(t, 3) != NULL : emb_group(t, 3) == NULL);
        CU_ASSERT_EQUAL(workload_emb_matrices(&w, false, false, true), 1);
        CU_ASSERT_EQUAL(workload_emb_matrices(&w, false, true, false), 1);
        CU_ASSERT_EQUAL(workload_emb_matrices(&last, false, true, true), tied ? 1 : 2);
        /* the same work as the MTP layer on the last stage, plus the second hop's doubled bytes */
        ASSERT_REL(total_flops(t), total_flops(tl), 1e-12);
        double s1, s2;
        CU_ASSERT_TRUE(replays(t, 4, &s1) && replays(tl, 4, &s2));
        trace_free(t);
        trace_free(tl);
    }
}

/* --account-for-embedding/loss-in-pipeline-split as layouts: Megatron-LM's
 * even split of the layers with the embedding and the loss counted as a
 * layer each (Qwen3-235B-A22B's 94 layers on PP 16: 5, 6 x 14, 5). */
static void test_layout_split(void)
{
    struct {
        int layers, pp, vpp, mtp;
        bool emb, loss;
        const char *want;
    } cases[] = {
        {94, 16, 1, 0, true, true, "Et*5|(t*6|)*14t*5L"},
        {62, 8, 4, 1, true, true, "Et|(t*2|)*30tmL"},
        {11, 4, 1, 0, false, true, "Et*3|(t*3|)*2t*2L"},
        {7, 2, 1, 0, true, false, "Et*3|t*4L"},
        {3, 1, 1, 2, true, true, "Et*3m*2L"},
        {1, 2, 1, 0, true, false, "E|tL"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *s = workload_layout_split(cases[i].layers, cases[i].pp, cases[i].vpp, cases[i].mtp,
                                                   cases[i].emb, cases[i].loss, NULL);
        CU_ASSERT_STRING_EQUAL(s ? s : "(null)", cases[i].want);
        /* the layout places the layers as Megatron-LM's offsets do: every virtual stage k = (L + e + l) / n
         * layers less the embedding's and the loss's */
        workload_spec w = lay_spec(cases[i].layers, cases[i].pp, 8 * cases[i].pp, s, cases[i].mtp, true);
        CU_ASSERT_TRUE(workload_layout_apply(&w, NULL) && workload_spec_check(&w, NULL));
        int n = cases[i].pp * cases[i].vpp, k = (cases[i].layers + cases[i].emb + cases[i].loss) / n;
        for (int j = 0; j < n && n > 1; j++)
            CU_ASSERT_EQUAL(workload_chunk_layers(&w, j % cases[i].pp, j / cases[i].pp, NULL),
                            k - (j == 0 ? cases[i].emb : 0) - (j == n - 1 ? cases[i].loss : 0));
    }
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(workload_layout_split(10, 4, 1, 0, false, true, &err));
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, "the 10 layers + the loss (11) must split evenly over pp x V "
                                                       "= 4 x 1") : NULL);
    g_clear_error(&err);
}

int main(void)
{
    static const test_case cases[] = {
        {"/layout/parse", test_layout_parse},
        {"/layout/parse-errors", test_layout_parse_errors},
        {"/layout/rules", test_layout_rules},
        {"/layout/same-as-rule", test_layout_same_as_rule},
        {"/layout/empty-stages", test_layout_empty_stages},
        {"/layout/standalone-mtp", test_layout_standalone_mtp},
        {"/layout/split", test_layout_split},
        {NULL, NULL},
    };
    return test_main("layout", cases);
}

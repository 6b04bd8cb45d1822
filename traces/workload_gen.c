/* traces/workload_gen.c - builds the trace of one training step from a
 * workload_spec (workload.h): per rank, per microbatch (and model chunk),
 * the 1F1B or interleaved-1F1B order of forward and backward passes (with
 * --overlap-moe-expert-parallel-comm their steady state paired, pair_step), each
 * layer's compute ops (timed by models/compute) with its TP / CP / EP
 * collectives on the compute stream, PP sends and receives on their own
 * streams, DP gradient buckets (or ZeRO-3 gathers and reduce-scatters) on
 * communication streams overlapped with backward, then the optimizer step.
 * docs/workloads.md has the formulas.
 */
#include "traces/workload.h"

#include "models/coll.h"
#include "sim/simtime.h"

#include <math.h>
#include <string.h>

/* streams: one per independent queue, so no channel blocks another */
enum { S_MAIN, S_RECV_PREV, S_RECV_NEXT, S_SEND_NEXT, S_SEND_PREV, S_DP, S_GATHER, S_TP_ASYNC, S_CP_SEND, S_CP_RECV,
       S_TP_SEND, S_TP_RECV, S_SHARED, S_EP_NET, S_A2A, S_A2A_NET };

/* Tag of the context-parallel ring's transfers (K, V chunks, their
 * gradients): the k-th send of (src, dst, tag) matches the k-th receive,
 * and every rank of a CP group posts its ring's transfers in one order.
 * Traces hold tags up to INT32_MAX; the pipeline's (pp_tag) stay far below,
 * and no CP or TP neighbour is a pipeline neighbour anyway. */
#define CP_TAG_KV ((int64_t)INT32_MAX - 1)
/* Tag of --tp-comm-overlap's ring-exchange transfers */
#define TP_TAG_RING ((int64_t)INT32_MAX - 2)

/* Adam with fp32 master weights: read weight, m, v, grad (4 x 4 bytes),
 * write weight, m, v (12) and the bf16 copy (2). */
#define ADAM_BYTES_PER_PARAM 30.0
#define NONE UINT32_MAX
/* --tp-comm-overlap: Transformer Engine's "pipeline" GEMM + reduce-scatter
 * splits (initialize_ub's add_ub, num_splits = 4) */
#define TP_SPLITS 4
/* ... and the SMs its "pipeline" and "bulk" communication kernels take
 * (initialize_ub's default num_sm = 16; the GEMM beside them runs on the
 * rest, set_sm_margin) */
#define UB_SMS 16
/* SMs DeepEP's dispatch and combine kernels take (Megatron-LM's moe_deepep_num_sms default) */
#define DEEPEP_SMS 20

typedef struct {
    int64_t ps;
    double flops, bytes;
} cost;

/* One GEMM's three kernels: forward, input (data) gradient, weight gradient. */
typedef struct {
    cost f, dg, wg;
} gemm3;

/* An element-wise piece's forward and backward. */
typedef struct {
    cost f, b;
} fb;

typedef struct {
    cost attn_f, attn_b, mlp_f, mlp_b, moe_pre_f, moe_pre_b, moe_exp_f, moe_exp_b, moe_sh_f, moe_sh_b, emb_f, emb_b,
        head_f, head_b;
    /* the dense layer's pieces, attn_f/attn_b and mlp_f/mlp_b their sums: layer norm, QKV, attention,
     * output projection, dropout + residual; layer norm, MLP-in (FC1), activation, MLP-out (FC2),
     * dropout + residual */
    fb attn_norm, attn_drop, mlp_norm, mlp_act, mlp_drop;
    gemm3 qkv, proj, fc1, fc2;
    /* multi-latent attention: its down projections (whole on every TP rank), the latents' norms, RoPE
     * and the assembly of whole-head queries and keys (qkv: its up projections, the TP-split ones) */
    gemm3 down;
    fb lat_norm, rope;
    /* an MTP layer's input: the shifted tokens' embedding lookup and the two norms (mtp_in), the
     * 2h -> h projection (mtp_proj) */
    fb mtp_in;
    gemm3 mtp_proj;
    /* an MoE layer's pre-MLP norm and its experts' activation (selective recomputation's pieces) */
    fb moe_norm, moe_act;
    /* the routed experts' kernels (combined 1F1B runs them as kernels): MLP-in, MLP-out (FLOPs as the
     * model's, over the capacity's tokens), the tokens' permutation and its reverse */
    gemm3 moe_fc1, moe_fc2;
    fb moe_perm;
    /* --tp-comm-overlap: the GEMMs over 1/tp of the tokens (a ring step) and 1/4 (a pipeline split) */
    gemm3 qkv_t, proj_t, fc1_t, fc2_t, proj_4, fc2_4;
    /* --moe-shared-expert-overlap: the shared expert (moe_sh_f/moe_sh_b) in halves, MLP-in and the
     * activation (f1; backward b2 of MLP-in), MLP-out (f2; backward b1 with the activation's) */
    cost sh_f1, sh_f2, sh_b1, sh_b2;
    gemm3 sh_in, sh_out; /* ... and its GEMMs apart (--delay-wgrad-compute holds their weight gradients) */
    fb sh_act;
    /* context parallelism other than allgather: attn_f, attn_b in three parts, the attention (flash)
     * kernel between the layer norm + QKV (pre) and the output projection + dropout (post); under p2p
     * the attention runs as cp kernels of one K, V chunk each (step_f, step_b); under a2a+p2p as cp/A
     * kernels, each of A x the tokens at 1/A of the heads (hstep_f, hstep_b) */
    cost pre_f, core_f, post_f, pre_b, core_b, post_b, step_f, step_b, hstep_f, hstep_b;
    /* --dtype fp8: the casts of the output projection and MLP-out alone (fp8_linear; --tp-comm-overlap
     * runs their GEMMs split, without them) */
    gemm3 proj_c, fc2_c;
} costs;

typedef struct {
    const workload_spec *w;
    const gpu_model *g;
    trace *t;
    int mbs, f, V;         /* microbatches, layers per op, model chunks per rank */
    double T, act;         /* tokens of a microbatch on one rank (b*s/cp); bytes of T x hidden */
    double act_in;         /* bytes of T x the attention's column-parallel input width (workload_attn's in):
                            * act but for MLA, whose latents SP gathers */
    workload_attn at;      /* the attention's widths */
    costs cs[2];           /* a layer's costs with full attention, and (a model with a sliding window) windowed */
    const costs *c;        /* those of the layers being generated (use_costs) */
    /* the rank being generated */
    int r, tp_i, cp_i, dp_i, pp_i;
    int chunk;             /* the model chunk being generated (0 under plain 1F1B) */
    int *clen, *cfirst;    /* each of this rank's chunks' layers and first layer (workload_chunk_layers) */
    int mtp_stage;         /* the PP rank of the MTP layers (workload_mtp_stage), -1 without */
    int mtp_vs;            /* a standalone MTP stage's virtual stage (one before the loss's), else -1 */
    bool keep_buckets;     /* record the dense buckets (the step's last reduction of this chunk) */
    int g_tp, g_cp, g_ep, g_etp, g_dpc, g_edp, g_emb, g_amax; /* trace groups, -1 if of size 1 */
    int g_cpa;             /* a2a+p2p: the all-to-all level's group (cp_a2a adjacent CP ranks), else -1 */
    int g_epl, g_epn;      /* flex: the EP ranks in this rank's NVLink domain; those at its place in each
                            * domain the EP group spans (-1 if of size 1) */
    int ep_dom, ep_ndom;   /* flex: EP ranks a domain, domains the EP group spans */
    double p_gpu, p_dom;   /* flex: chance a token has an expert on a given EP rank, in a given domain */
    GArray *wait;          /* deps for the next op on the main stream */
    GArray *dp_ops;        /* DP collectives the optimizer waits for */
    GArray *buckets;       /* weight bytes of each dense bucket (ZeRO-1/2 gather them back) */
    GArray *ebuckets;      /* weight bytes of each expert bucket (gathered back over expert DP) */
    double pend, pend_e, pend_params, pend_e_params; /* gradient bytes, weight bytes of the open buckets */
    uint32_t last, prev_first;
    uint32_t sync_prev, rs_last; /* ZeRO-3 per parameter: the last gather's copies, reduce-scatter */
    bool kernels;          /* emit the attention, the MLPs and the experts as their kernels, not one op a
                            * part (combined 1F1B's nodes, whose kernels interleave with the other
                            * microbatch's all-to-alls) */
    bool delay;            /* ... and hold their weight-gradient GEMMs back (--delay-wgrad-compute) */
    GArray *dwq;           /* the held ones (held_k), run by dw_flush */
    /* --moe-load-imbalance: this rank's place in its EP group; per place of the layer's busiest rank, the
     * dispatch's weights (trace root; NULL balanced); for the MoE block being generated this rank's
     * expert work over the balanced one's (load), its share of the tokens dispatched (recv, mean 1) and
     * the dispatch's root (moe_load) */
    int ep_pos, *a2a_roots, a2a_root;
    double load, recv;
    GArray *pg;            /* --overlap-param-gather: per item of the chunk's forward (embedding, layer
                            * groups, LM head), the gathers it waits for (dense, expert: 2 per item) */
} gen;

static int rank_of(const workload_spec *w, int tp_i, int cp_i, int dp_i, int pp_i)
{
    return tp_i + w->tp * (cp_i + w->cp * (dp_i + w->dp * pp_i));
}

/* ---- costs ---- */

static void kern(cost *c, const gen *G, compute_kclass k, double flops, double bytes)
{
    c->ps = sim_time_sat_add(c->ps, compute_kernel_ps(G->g, k, COMPUTE_BF16, flops, bytes));
    if (k != KC_ELEM)
        c->flops += flops;
    c->bytes += bytes;
}

/* `groups` products of m x k by k x n in one kernel (a grouped GEMM: the
 * local experts, each over its own tokens and its own weights): one kernel's
 * fixed cost and groups times the rest (groups 1: a plain GEMM). */
static void gemm_kern(cost *c, const gen *G, compute_dtype dt, double groups, double m, double n, double k)
{
    double one = (double)compute_gemm_ps(G->g, dt, m, n, k);
    c->ps = sim_time_sat_add(c->ps, groups == 1 ? (int64_t)one : sim_time_from_ps(groups * (one - G->g->kernel_ps) + G->g->kernel_ps));
    c->flops += groups * 2 * m * n * k;
    c->bytes += groups * compute_gemm_bytes(dt, m, n, k);
}

static void cost_add(cost *to, const cost *c)
{
    to->ps = sim_time_sat_add(to->ps, c->ps);
    to->flops += c->flops;
    to->bytes += c->bytes;
}

static cost cost_sum(const cost *a, const cost *b)
{
    cost c = *a;
    cost_add(&c, b);
    return c;
}

static cost cost_sum3(const cost *a, const cost *b, const cost *c)
{
    cost d = cost_sum(a, b);
    cost_add(&d, c);
    return d;
}

/* *d = a - b (b a part of a) */
static void cost_sub(cost *d, const cost *a, const cost *b)
{
    *d = (cost){.ps = a->ps - b->ps, .flops = a->flops - b->flops, .bytes = a->bytes - b->bytes};
}

/* A GEMM of m x k by k x n in dt (bf16, or fp8 operands): forward one
 * kernel, backward two of the same FLOPs, each with its own reduction length
 * (the shape term of compute_gemm_ps): data gradient dX(m x k) = dY(m x n)
 * W^T reduces over n, weight gradient dW(k x n) = X^T dY over the m tokens.
 * The two backward kernels also alone in *dg, *wg when not NULL
 * (--tp-async-bwd runs them as ops of their own). */
static void gemm_groups(cost *f, cost *b, const gen *G, compute_dtype dt, double groups, double m, double k, double n,
                        gemm3 *out)
{
    gemm3 g = {.f = {0}};
    gemm_kern(&g.f, G, dt, groups, m, n, k);
    gemm_kern(&g.dg, G, dt, groups, m, k, n);
    gemm_kern(&g.wg, G, dt, groups, k, n, m);
    cost_add(f, &g.f);
    cost_add(b, &g.dg);
    cost_add(b, &g.wg);
    if (out)
        *out = g;
}

/* A GEMM outside Transformer Engine's linear layers (the router, the LM
 * head: Megatron-LM runs them in bf16 whatever --dtype says). */
static void gemm(cost *f, cost *b, const gen *G, double m, double k, double n)
{
    gemm_groups(f, b, G, COMPUTE_BF16, 1, m, k, n, NULL);
}

/* The three kernels of a linear layer's GEMM alone (added to nothing),
 * without fp8 casts (--tp-comm-overlap's splits). */
static gemm3 gemm_alone(const gen *G, double m, double k, double n)
{
    cost f = {0}, b = {0};
    gemm3 g;
    gemm_groups(&f, &b, G, G->w->dtype, 1, m, k, n, &g);
    return g;
}

static bool fp8(const gen *G) { return G->w->dtype == COMPUTE_FP8; }

/* How a linear layer meets tensor parallelism, for its fp8 casts: after
 * its layer norm, which writes fp8 (Transformer Engine's LayerNormLinear:
 * QKV, the dense MLP-in); column-parallel (input all-gathered under SP);
 * row-parallel (output gradient all-gathered under SP); local (experts:
 * their tokens come from the dispatcher, gathered in bf16 if at all). */
enum { LIN_LN, LIN_COL, LIN_ROW, LIN_LOCAL };

/* The recipe's scales are per block (mxfp8, blockwise): rowwise and
 * columnwise copies quantized apart, no transposes, no amax state. */
static bool fp8_blocks(const gen *G) { return G->w->fp8_recipe >= WL_FP8_MXFP8; }

/* A per-tensor recipe's columnwise copy is a transpose (Hopper, Ada). */
static bool fp8_tr(const gen *G) { return !fp8_blocks(G) && workload_fp8_transposes(G->g->spec.sm_cc); }

/* --fp8-param-gather with a per-tensor recipe: the linear layers' weights
 * are gathered in fp8 (mxfp8's are gathered in bf16 and cast as Megatron-LM
 * copies them out of the buffer: fp8_weight_cast). */
static bool fpg_in_fp8(const gen *G) { return G->w->fp8_param_gather && G->w->fp8_recipe != WL_FP8_MXFP8; }

/* Bytes a block scale adds an element: mxfp8 one E8M0 byte per 32,
 * blockwise one fp32 per 128 (1-D blocks): 1/32 either way. */
#define FP8_SCALE_B (1.0 / 32)

/* Bytes an element of a bf16 tensor costs to cast (read 2, write 1 a copy):
 * both copies (rowwise for one GEMM, columnwise for the other), or the
 * rowwise one alone (`both` false: a shard to be gathered, transposed after
 * under per-tensor recipes). tensorwise reads the tensor once more first,
 * for its amax (Float8CurrentScalingQuantizer: nvte_compute_amax, then the
 * cast); block recipes always write both copies with their scales, in one
 * kernel (their columnwise copy cannot come from the rowwise one). */
static double fp8_cast_b(const gen *G, bool both)
{
    if (fp8_blocks(G))
        return 2 + 2 * (1 + FP8_SCALE_B);
    return 3 + (both && fp8_tr(G) ? 1 : 0) + (G->w->fp8_recipe == WL_FP8_TENSORWISE ? 2 : 0);
}

/* Transformer Engine's fp8 casts around a linear layer of `in` input and
 * `dy` output-gradient elements (all its groups), added to *c's forward,
 * input-gradient and weight-gradient parts; nothing under bf16. From
 * Transformer Engine (module/linear.py, layernorm_linear.py, base.py
 * grad_output_preprocess; docs "Handling transposes"): a cast writes the
 * fp8 copy and, where a GEMM reads it columnwise, its transpose on Hopper
 * (fp8_cast_b); a transpose of an fp8 tensor reads and writes a byte.
 * Forward: the input cast (both copies: the columnwise one feeds the
 * weight gradient); under SP the rank's 1/tp of a column-parallel layer's
 * input is cast and gathered in fp8, and a per-tensor recipe on Hopper
 * transposes it whole before the weight gradient; after a layer norm the
 * norm writes the copies (costs_init), so only that transpose. Backward:
 * the output gradient cast (both); under SP a row-parallel layer's 1/tp
 * cast, gathered in fp8, transposed whole on Hopper. The weights' casts
 * are once a step (fp8_weight_cast). */
static void fp8_linear(gemm3 *c, const gen *G, int kind, double in, double dy)
{
    if (!fp8(G))
        return;
    bool sp = G->w->sp && G->w->tp > 1;
    double t = G->w->tp, tr = fp8_tr(G) ? 2 : 0;
    if (kind == LIN_LN || (kind == LIN_COL && sp)) {
        if (kind == LIN_COL)
            kern(&c->f, G, KC_ELEM, 0, fp8_cast_b(G, fp8_blocks(G)) * in / t);
        kern(&c->wg, G, KC_ELEM, 0, tr * in);
    } else {
        kern(&c->f, G, KC_ELEM, 0, fp8_cast_b(G, true) * in);
    }
    if (kind == LIN_ROW && sp) {
        kern(&c->dg, G, KC_ELEM, 0, fp8_cast_b(G, fp8_blocks(G)) * dy / t);
        kern(&c->wg, G, KC_ELEM, 0, tr * dy);
    } else {
        kern(&c->dg, G, KC_ELEM, 0, fp8_cast_b(G, true) * dy);
    }
}

/* A linear layer (Transformer Engine's, --dtype's precision): `groups`
 * GEMMs of m x k by k x n (gemm_groups) with their fp8 casts (fp8_linear),
 * the kernels alone in *out and the casts alone in *casts when not NULL. */
static void linear(cost *f, cost *b, const gen *G, int kind, double groups, double m, double k, double n, gemm3 *out,
                   gemm3 *casts)
{
    gemm3 g = {.f = {0}}, c = {.f = {0}};
    cost gf = {0}, gb = {0};
    gemm_groups(&gf, &gb, G, G->w->dtype, groups, m, k, n, &g);
    fp8_linear(&c, G, kind, groups * m * k, groups * m * n);
    cost_add(&g.f, &c.f);
    cost_add(&g.dg, &c.dg);
    cost_add(&g.wg, &c.wg);
    cost_add(f, &g.f);
    cost_add(b, &g.dg);
    cost_add(b, &g.wg);
    if (out)
        *out = g;
    if (casts)
        *casts = c;
}

/* An element-wise piece: forward `fwd` bytes, backward `bwd`. */
static void elem2(cost *f, cost *b, const gen *G, double fwd, double bwd)
{
    kern(f, G, KC_ELEM, 0, fwd);
    kern(b, G, KC_ELEM, 0, bwd);
}

static void elem(cost *f, cost *b, const gen *G, double bytes)
{
    elem2(f, b, G, bytes, 2 * bytes);
}

/* An element-wise piece of `bytes` (backward twice that; forward `fwd_bytes`
 * when > 0) added to f, b, and alone in *out when not NULL. */
static void elem_part(cost *f, cost *b, const gen *G, double bytes, double fwd_bytes, fb *out)
{
    fb e = {.f = {0}};
    elem2(&e.f, &e.b, G, fwd_bytes > 0 ? fwd_bytes : bytes, 2 * bytes);
    cost_add(f, &e.f);
    cost_add(b, &e.b);
    if (out)
        *out = e;
}

/* An MLP over `tokens` tokens; with groups > 1, that many MLPs (experts)
 * of tokens / groups tokens each, their GEMMs grouped; kind: MLP-in's
 * (LIN_LN, LIN_COL or LIN_LOCAL; MLP-out is row-parallel, or local with
 * it); *in, *act, *out (when not NULL): MLP-in's kernels, the
 * activation's, MLP-out's (*out_casts: MLP-out's fp8 casts alone). */
static void mlp_costs(cost *f, cost *b, const gen *G, int kind, double groups, double tokens, double ffn, double tp,
                      gemm3 *in, fb *act, gemm3 *out, gemm3 *out_casts)
{
    double h = G->w->m.hidden, up = G->w->m.gated ? 2 : 1, te = tokens / groups;
    linear(f, b, G, kind, groups, te, h, up * ffn / tp, in, NULL);
    elem_part(f, b, G, 2 * tokens * ffn / tp * (up + 1), 0, act);
    linear(f, b, G, kind == LIN_LOCAL ? LIN_LOCAL : LIN_ROW, groups, te, ffn / tp, h, out, out_casts);
}

/* The costs of the layers about to be generated: those of full attention, or of the sliding window
 * (or chunks). */
static void use_costs(gen *G, bool swa)
{
    G->c = &G->cs[swa && (G->w->m.window > 0 || G->w->m.chunk > 0)];
}

static void costs_init(gen *G, costs *c, bool swa)
{
    const workload_spec *w = G->w;
    const workload_model *m = &w->m;
    memset(c, 0, sizeof *c);
    const workload_attn *A = &G->at;
    double t = w->tp, T = G->T, h = m->hidden, s = w->seq, b = w->micro_batch;
    double Tn = w->sp ? T / t : T; /* tokens the norms, dropout and residuals touch */
    /* layer norm: 4 bytes an element; under --dtype fp8 with its output's cast: delayed scaling's
     * norm writes fp8 itself (3 bytes, not 4); tensorwise's writes bf16 and its amax, then the cast
     * (quantize_with_amax); the block recipes' norm writes bf16, then their cast (TE's
     * normalization.cpp: FULLY_FUSED, FUSED_NORM_AMAX_FP8, UNFUSED) */
    double norm_b = !fp8(G) ? 4 : w->fp8_recipe == WL_FP8_DELAYED ? 3 : 4 + (fp8_blocks(G) ? fp8_cast_b(G, true) : 3);
    double norm_f = norm_b * Tn * h;
    if (m->kv_lora <= 0) {
        elem_part(&c->attn_f, &c->attn_b, G, 4 * Tn * h, norm_f, &c->attn_norm);
        linear(&c->attn_f, &c->attn_b, G, LIN_LN, 1, T, h, A->col / h / t, &c->qkv, NULL); /* QKV */
    } else { /* MLA as Megatron-LM's MLASelfAttention runs it (the norm alone: the down projections are
              * plain TELinear; the latents' norms fused into the up projections, TELayerNormColumnParallel-
              * Linear, with --qk-layernorm as DeepSeek's configs set it) */
        double ql = m->q_lora, lat = ql + m->kv_lora;
        gemm3 qu, kvu;
        cost df = {0}, db = {0};
        elem_part(&c->attn_f, &c->attn_b, G, 4 * Tn * h, 0, &c->attn_norm);
        linear(&df, &db, G, LIN_LOCAL, 1, Tn, h, A->down, &c->down, NULL);
        if (!w->sp) { /* every TP rank projects all T tokens; their FLOPs counted once over the group, as the
                       * model's (Megatron-LM's count), the time in full */
            df.flops /= t, db.flops /= t;
            c->down.f.flops /= t, c->down.dg.flops /= t, c->down.wg.flops /= t;
        }
        cost_add(&c->attn_f, &df);
        cost_add(&c->attn_b, &db);
        elem_part(&c->attn_f, &c->attn_b, G, 4 * Tn * lat, norm_b * Tn * lat, &c->lat_norm);
        linear(&c->attn_f, &c->attn_b, G, ql > 0 ? LIN_LN : LIN_COL, 1, T, ql > 0 ? ql : h, A->q / t, &qu, NULL);
        linear(&c->attn_f, &c->attn_b, G, LIN_LN, 1, T, m->kv_lora, m->heads * ((double)m->qk_dim + m->v_dim) / t, &kvu,
               NULL);
        c->qkv = (gemm3){cost_sum(&qu.f, &kvu.f), cost_sum(&qu.dg, &kvu.dg), cost_sum(&qu.wg, &kvu.wg)};
        /* RoPE on the position parts, then whole-head queries and keys assembled (torch.cat): each read
         * and written once */
        elem_part(&c->attn_f, &c->attn_b, G, 4 * T * (A->q + A->k) / t, 0, &c->rope);
    }
    /* the product's FLOPs (Megatron's count) times the share the backend computes: flash skips the
     * tiles the causal mask hides (workload_attn_work_frac); its backward recomputes the scores
     * before their four gradient products, 2.5 x the forward's (FlashAttention's own count), where
     * the unfused backward's four products are 2 x */
    double af = 2 * T * s * (A->q + A->o) / t * (swa ? workload_attn_window_frac(w) : workload_attn_work_frac(w)),
           bk = workload_attn_bwd_factor(w);
    double ab = 2 * (T * A->q / t + b * s * (A->k + A->v) / t + T * A->o / t);
    kern(&c->core_f, G, KC_ATTN, af, ab);                             /* flash attention */
    kern(&c->core_b, G, KC_ATTN, bk * af, 2.5 * ab);
    cost_add(&c->attn_f, &c->core_f);
    cost_add(&c->attn_b, &c->core_b);
    linear(&c->attn_f, &c->attn_b, G, LIN_ROW, 1, T, A->o / t, h, &c->proj, &c->proj_c); /* output projection */
    elem_part(&c->attn_f, &c->attn_b, G, 10 * Tn * h, 0, &c->attn_drop); /* dropout + residual */
    /* the parts around the attention: layer norm + QKV (MLA: its down projections, latent norms, up
     * projections, RoPE), projection + dropout */
    c->pre_f = cost_sum(&c->attn_norm.f, &c->qkv.f);
    c->pre_b = cost_sum3(&c->attn_norm.b, &c->qkv.dg, &c->qkv.wg);
    if (m->kv_lora > 0) {
        cost mf = cost_sum3(&c->down.f, &c->lat_norm.f, &c->rope.f);
        cost mb = cost_sum3(&c->down.dg, &c->down.wg, &c->lat_norm.b);
        cost_add(&c->pre_f, &mf);
        cost_add(&c->pre_b, &mb);
        cost_add(&c->pre_b, &c->rope.b);
    }
    c->post_f = cost_sum(&c->proj.f, &c->attn_drop.f);
    c->post_b = cost_sum3(&c->proj.dg, &c->proj.wg, &c->attn_drop.b);
    if (w->cp > 1) { /* one step of the ring: the rank's queries against one CP rank's s/cp keys (with flash
                      * each step computes the same share: the diagonal's extra tiles spread over them) */
        double sc = s / w->cp, abs = 2 * (T * A->q / t + b * sc * (A->k + A->v) / t + T * A->o / t);
        kern(&c->step_f, G, KC_ATTN, af / w->cp, abs);
        kern(&c->step_b, G, KC_ATTN, bk * af / w->cp, 2.5 * abs);
        if (w->cp_comm == WL_CP_A2A_P2P) { /* the same bytes a step: A x the queries, K, V of 1/A of the heads */
            double ring = (double)w->cp / w->cp_a2a;
            kern(&c->hstep_f, G, KC_ATTN, af / ring, abs);
            kern(&c->hstep_b, G, KC_ATTN, bk * af / ring, 2.5 * abs);
        }
    }
    elem_part(&c->mlp_f, &c->mlp_b, G, 4 * Tn * h, norm_f, &c->mlp_norm);
    mlp_costs(&c->mlp_f, &c->mlp_b, G, LIN_LN, 1, T, m->ffn, t, &c->fc1, &c->mlp_act, &c->fc2, &c->fc2_c);
    elem_part(&c->mlp_f, &c->mlp_b, G, 10 * Tn * h, 0, &c->mlp_drop);
    if (w->tp_comm_overlap && t > 1) { /* the GEMMs as TE's overlap splits them (over tokens) */
        double up = m->gated ? 2 : 1;
        c->qkv_t = gemm_alone(G, T / t, h, A->col / h / t); /* (no MLA here: workload_spec_check) */
        c->proj_t = gemm_alone(G, T / t, A->o / t, h);
        c->proj_4 = gemm_alone(G, T / TP_SPLITS, A->o / t, h);
        c->fc1_t = gemm_alone(G, T / t, h, up * m->ffn / t);
        c->fc2_t = gemm_alone(G, T / t, m->ffn / t, h);
        c->fc2_4 = gemm_alone(G, T / TP_SPLITS, m->ffn / t, h);
    }
    if (m->experts) {
        double Tm = T / t;
        elem_part(&c->moe_pre_f, &c->moe_pre_b, G, 4 * Tn * h, 0, &c->moe_norm);
        gemm(&c->moe_pre_f, &c->moe_pre_b, G, Tm, h, m->experts);     /* router */
        elem(&c->moe_pre_f, &c->moe_pre_b, G, 2 * Tm * m->experts * 3); /* softmax + top-k */
        /* the shared expert(s) split by TP as the dense MLP is (Megatron-LM's SharedExpertMLP follows
         * the attention's parallelism): all T tokens, FFN / t (until 2026-12-02 the rank's T/t tokens
         * through the whole FFN: the same FLOPs, without its TP communication) */
        if (m->shared_ffn) {
            gemm3 in, out;
            fb act;
            mlp_costs(&c->moe_sh_f, &c->moe_sh_b, G, LIN_COL, 1, T, m->shared_ffn, t, &in, &act, &out, NULL);
            c->sh_in = in, c->sh_out = out, c->sh_act = act;
            c->sh_f1 = cost_sum(&in.f, &act.f);
            c->sh_f2 = out.f;
            c->sh_b1 = cost_sum3(&out.dg, &out.wg, &act.b);
            c->sh_b2 = cost_sum(&in.dg, &in.wg);
        }
        /* the rank's experts/ep experts, each over its share of the Tm x topk tokens routed to
         * the rank (balanced routing): a weight gradient reduces over one expert's tokens, and
         * every local expert's weights are read (until 2026-12-02 one GEMM over all the tokens
         * with one expert's weights); with expert tensor parallelism the etp ranks of a group
         * gather their tokens and each runs 1/etp of every expert's FFN over all of them */
        /* with --moe-expert-capacity-factor C the experts' inputs are C x that padded, min(C, 1) x dropped
         * (workload_moe_capacity_scale); their FLOPs counted as the model's (Megatron-LM's count: topk) */
        double cap = workload_moe_capacity_scale(w);
        mlp_costs(&c->moe_exp_f, &c->moe_exp_b, G, LIN_LOCAL, (double)m->experts / w->ep, Tm * m->topk * w->etp * cap,
                  m->expert_ffn, w->etp, &c->moe_fc1, &c->moe_act, &c->moe_fc2, NULL);
        c->moe_exp_f.flops /= cap;
        c->moe_exp_b.flops /= cap;
        gemm3 *eg[2] = {&c->moe_fc1, &c->moe_fc2};
        for (int k = 0; k < 2; k++)
            eg[k]->f.flops /= cap, eg[k]->dg.flops /= cap, eg[k]->wg.flops /= cap;
        elem_part(&c->moe_exp_f, &c->moe_exp_b, G, 10 * Tm * h, 0, &c->moe_perm);
    }
    elem(&c->emb_f, &c->emb_b, G, 4 * T * h);
    if (w->mtp > 0) { /* the lookup as the embedding's, the norms as the layers' (bf16: TENorm alone) */
        cost mf = {0}, mb = {0}; /* (the pieces alone in c) */
        elem_part(&mf, &mb, G, 4 * T * h + 2 * 4 * Tn * h, 0, &c->mtp_in);
        linear(&mf, &mb, G, LIN_COL, 1, T, 2 * h, h / t, &c->mtp_proj, NULL);
    }
    elem(&c->head_f, &c->head_b, G, 4 * Tn * h);                     /* final norm */
    gemm(&c->head_f, &c->head_b, G, T, h, (double)m->vocab / t);
    elem(&c->head_f, &c->head_b, G, 3 * 4 * T * m->vocab / t);        /* fp32 softmax cross-entropy */
}

/* ---- emitting ops ---- */

static uint32_t add(gen *G, trace_op *o, uint32_t dep)
{
    o->ts_ps = -1;
    o->src_index = -1;
    uint32_t i = trace_op_add(G->t, G->r, o);
    if (dep != NONE)
        trace_op_dep(G->t, G->r, i, dep);
    if (o->stream == S_MAIN) {
        for (guint k = 0; k < G->wait->len; k++)
            trace_op_dep(G->t, G->r, i, g_array_index(G->wait, uint32_t, k));
        g_array_set_size(G->wait, 0);
        G->last = i;
    }
    return i;
}

/* A compute op of c x mult on `stream` (after dep when not NONE). */
static uint32_t compute_on(gen *G, int stream, const char *name, const cost *c, double mult, uint32_t dep)
{
    trace_op o = {.kind = TOP_COMPUTE, .stream = stream, .name = name,
                  .dur_ps = sim_time_from_ps((double)c->ps * mult), .flops = c->flops * mult,
                  .mem_bytes = c->bytes * mult, .seq = -1};
    return add(G, &o, dep);
}

static void compute(gen *G, const char *name, const cost *c, double mult)
{
    compute_on(G, S_MAIN, name, c, mult, NONE);
}

/* A weight-gradient GEMM: run now, or held until dw_flush under --delay-wgrad-compute (G->delay). */
typedef struct {
    const char *name;
    cost c;
    double mult;
} held_k;

static void wgrad(gen *G, const char *name, const cost *c, double mult)
{
    if (!G->delay) {
        compute(G, name, c, mult);
        return;
    }
    held_k h = {name, *c, mult};
    g_array_append_val(G->dwq, h);
}

/* One of a node's kernels: its cost, and whether it is a weight gradient (wgrad's). */
typedef struct {
    const cost *c;
    bool wg;
} kpart;

/* A node's kernels in order, an op each (combined 1F1B's nodes, G->kernels). */
static void kernels(gen *G, const char *name, const kpart *k, size_t n, double mult)
{
    for (size_t i = 0; i < n; i++)
        (k[i].wg ? wgrad : compute)(G, name, k[i].c, mult);
}

static void dw_flush(gen *G)
{
    for (guint i = 0; i < G->dwq->len; i++) {
        const held_k *h = &g_array_index(G->dwq, held_k, i);
        compute(G, h->name, &h->c, h->mult);
    }
    g_array_set_size(G->dwq, 0);
}

/* A collective of `bytes` (nccl-tests size) over group g; nothing if g < 0. */
static uint32_t coll(gen *G, int stream, coll_kind k, double bytes, int g, const char *name, uint32_t dep)
{
    if (g < 0)
        return NONE;
    const trace_group *tg = g_ptr_array_index(G->t->groups, g);
    uint64_t unit = 16 * (uint64_t)tg->size, b = (uint64_t)ceil(bytes);
    b = (b + unit - 1) / unit * unit;
    trace_op o = {.kind = TOP_COLL, .stream = stream, .name = name, .dur_ps = -1, .coll = k,
                  .bytes = b, .group = g, .seq = -1};
    return add(G, &o, dep);
}

/* A collective run by another library than NCCL, holding `sms` SMs (trace_op.sms). */
static uint32_t coll_sms(gen *G, int stream, coll_kind k, double bytes, int g, const char *name, uint32_t dep,
                         int sms)
{
    uint32_t i = coll(G, stream, k, bytes, g, name, dep);
    if (i != NONE)
        g_array_index(G->t->ranks[G->r].ops, trace_op, i).sms = sms;
    return i;
}

/* A send or receive (copy: a copy between peers, not NCCL's: trace_op.copy). */
static uint32_t p2p_named(gen *G, int stream, bool send, int peer, double bytes, int64_t tag, uint32_t dep,
                          const char *name, bool copy)
{
    trace_op o = {.kind = send ? TOP_SEND : TOP_RECV, .stream = stream, .name = name, .dur_ps = -1,
                  .bytes = (uint64_t)ceil(bytes), .peer = peer, .tag = tag, .seq = -1, .copy = copy};
    return add(G, &o, dep);
}

/* A collective run by Transformer Engine's userbuffers rather than NCCL:
 * the same bytes (timed as NCCL's), holding UB_SMS SMs (trace_op.sms). */
static uint32_t coll_ub(gen *G, int stream, coll_kind k, double bytes, int g, const char *name, uint32_t dep)
{
    return coll_sms(G, stream, k, bytes, g, name, dep, UB_SMS);
}

static uint32_t p2p(gen *G, int stream, bool send, int peer, double bytes, int64_t tag, uint32_t dep)
{
    return p2p_named(G, stream, send, peer, bytes, tag, dep, send ? "pp_send" : "pp_recv", false);
}

static void wait_on(gen *G, uint32_t i)
{
    if (i != NONE)
        g_array_append_val(G->wait, i);
}

/* ---- one layer group (f layers; the last of a stage may have fewer) ---- */

/* Layers of the current model chunk (workload_chunk_layers), its layer
 * groups, and the layers of group k. Under full recomputation's block
 * method the chunk's first r layers (workload_recomputed_layers) and the
 * rest are grouped apart, so that a group is either rerun or not. */
static int chunk_len(const gen *G) { return G->clen[G->chunk]; }
static int chunk_split(const gen *G, int n) /* the first run's layers */
{
    int r = workload_recomputed_layers(G->w, n);
    return r > 0 && r < n ? r : n;
}
static int group_count(const gen *G)
{
    int n = chunk_len(G), s = chunk_split(G, n);
    return (s + G->f - 1) / G->f + (n - s + G->f - 1) / G->f;
}
static int group_start(const gen *G, int k) /* group k's first layer within the chunk */
{
    int n = chunk_len(G), s = chunk_split(G, n), g1 = (s + G->f - 1) / G->f;
    return k < g1 ? k * G->f : s + (k - g1) * G->f;
}
static int group_size(const gen *G, int k)
{
    int n = chunk_len(G), s = chunk_split(G, n), g1 = (s + G->f - 1) / G->f;
    return k < g1 ? MIN(G->f, s - k * G->f) : MIN(G->f, n - s - (k - g1) * G->f);
}
/* Whether full recomputation reruns group k's forward before its backward. */
static bool group_recomputed(const gen *G, int k)
{
    return group_start(G, k) < workload_recomputed_layers(G->w, chunk_len(G));
}

/* ---- context parallelism (--cp-comm) ---- */

/* The CP ranks d places after (d < 0: before) this one in its group (the
 * ring's order; under a2a+p2p d is in steps of cp_a2a). */
static int cp_peer(const gen *G, int d)
{
    const workload_spec *w = G->w;
    return rank_of(w, G->tp_i, ((G->cp_i + d) % w->cp + w->cp) % w->cp, G->dp_i, G->pp_i);
}

/* The ring's steps, and its neighbours' distance: cp and 1, or under a2a+p2p
 * cp / cp_a2a and cp_a2a. */
static int cp_ring_len(const gen *G) { return G->w->cp_comm == WL_CP_A2A_P2P ? G->w->cp / G->w->cp_a2a : G->w->cp; }
static int cp_ring_hop(const gen *G) { return G->w->cp_comm == WL_CP_A2A_P2P ? G->w->cp_a2a : 1; }
static const cost *cp_step(const gen *G, bool bwd)
{
    bool h = G->w->cp_comm == WL_CP_A2A_P2P;
    return bwd ? (h ? &G->c->hstep_b : &G->c->step_b) : (h ? &G->c->hstep_f : &G->c->step_f);
}

/* Bytes of the K and V of s/cp tokens (one CP rank's chunk) of f layers. */
static double cp_kv_chunk(const gen *G, double f)
{
    const workload_spec *w = G->w;
    return 2.0 * w->micro_batch * w->seq / w->cp * (G->at.k + G->at.v) / w->tp * f;
}

/* Q, K, V (qkv) or the attention's output of the rank's T tokens, f layers:
 * what a2a's all-to-alls trade (each rank keeps 1/cp of it). */
static double cp_a2a_bytes(const gen *G, bool qkv, double f)
{
    const workload_attn *a = &G->at;
    return 2.0 * G->T * (qkv ? a->q + a->k + a->v : a->o) / G->w->tp * f;
}

/* A ring of `steps` compute steps (`step`, x f) over a group whose ring
 * neighbours are `next` and `prev`: while step i runs, the chunk of `bytes`
 * this rank holds goes to `next` and the one for step i+1 comes from `prev`
 * (steps-1 transfers on the streams ss, sr); step i+1 waits for its receive,
 * each send for the receive that brought its chunk (the first for the op
 * before the ring). Transformer Engine's CP attention over p2p and its
 * ring-exchange all-gather + GEMM both run so. */
static void ring_steps(gen *G, const char *name, const cost *step, double f, int steps, int next, int prev,
                       double bytes, int64_t tag, int ss, int sr, const char *sname, const char *rname, bool copy)
{
    uint32_t have = G->last; /* the op that made the chunk this rank holds */
    for (int i = 0; i < steps; i++) {
        uint32_t rcv = NONE;
        if (i < steps - 1) {
            p2p_named(G, ss, true, next, bytes, tag, have, sname, copy);
            rcv = p2p_named(G, sr, false, prev, bytes, tag, NONE, rname, copy);
        }
        compute(G, name, step, f);
        wait_on(G, rcv);
        have = rcv;
    }
}

/* The forward's CP ring (Transformer Engine's attention with CP over p2p,
 * Megatron-LM's default): cp steps, step i the rank's queries against the
 * K, V chunk of the rank i before it (with Megatron's load-balanced causal
 * split every step is one cp-th of the work). */
static void cp_ring_fwd(gen *G, const char *name, double f)
{
    int hop = cp_ring_hop(G);
    ring_steps(G, name, cp_step(G, false), f, cp_ring_len(G), cp_peer(G, hop), cp_peer(G, -hop), cp_kv_chunk(G, f),
               CP_TAG_KV, S_CP_SEND, S_CP_RECV, "cp_send_kv", "cp_recv_kv", false);
}

/* The backward's ring (Transformer Engine's, the forward's steps in reverse,
 * ending on the rank's own chunk): the K, V chunks go round again and the
 * gradients of each chunk's K, V follow one step behind, summed as they
 * pass, in one message a step: iteration i sends the K, V it holds (i <
 * cp-1) with the K, V gradients summed so far for the chunk of step i-1 (i
 * > 0) and receives the same from the previous rank; step i+1 waits for
 * that receive, each send for the step and the receive before it. The last
 * receive brings the rank its own chunk's sums. Per rank 2 (cp-1) chunks in
 * cp messages. */
static void cp_ring_bwd(gen *G, const char *name, double f)
{
    double kvb = cp_kv_chunk(G, f);
    int n = cp_ring_len(G), hop = cp_ring_hop(G);
    uint32_t rcv = NONE;
    for (int i = 0; i < n; i++) {
        double bytes = (i < n - 1 ? kvb : 0) + (i > 0 ? kvb : 0);
        uint32_t s = p2p_named(G, S_CP_SEND, true, cp_peer(G, hop), bytes, CP_TAG_KV, G->last, "cp_send_bwd", false);
        if (rcv != NONE)
            trace_op_dep(G->t, G->r, s, rcv);
        rcv = p2p_named(G, S_CP_RECV, false, cp_peer(G, -hop), bytes, CP_TAG_KV, NONE, "cp_recv_bwd", false);
        compute(G, name, cp_step(G, true), f);
        wait_on(G, rcv);
    }
}

/* --tp-comm-overlap applies: the flag, and a TP group. */
static bool tp_overlap(const gen *G) { return G->w->tp_comm_overlap && G->g_tp >= 0; }

/* Bytes of a TP all-gather under SP of A bytes in bf16: Transformer Engine
 * gathers the fp8 casts under --dtype fp8 (fp8_linear), half of them; the
 * block recipes gather their scales too, and both copies where both are
 * needed after it (the columnwise copy cannot be made from the rowwise
 * one): an output gradient's (dy), a forward input's when the backward
 * does not gather it again (without tp_async_bwd or --tp-comm-overlap
 * the gathered input is kept). */
enum { AG_IN, AG_DY, AG_IN_BWD };
static double ag_use(const gen *G, double A, int use)
{
    if (!fp8(G))
        return A;
    if (!fp8_blocks(G))
        return A / 2;
    bool both = use == AG_DY || (use == AG_IN && !(G->w->tp_async_bwd || G->w->tp_comm_overlap));
    return A / 2 * (1 + FP8_SCALE_B) * (both ? 2 : 1);
}

/* tensorwise (current scaling) under SP: the amax of the rank's shard of a
 * column-parallel layer's input (forward) or a row-parallel layer's output
 * gradient (backward) all-reduced (max) over TP before its cast and gather,
 * on the stream of the gather (TE's input and grad-output quantizers with
 * with_amax_reduction over tp_group: linear.py, layernorm_linear.py). */
static void cs_amax(gen *G, int stream, uint32_t dep)
{
    if (fp8(G) && G->w->fp8_recipe == WL_FP8_TENSORWISE && G->w->sp && G->g_tp >= 0)
        coll(G, stream, COLL_ALL_REDUCE, 4, G->g_tp, "fp8_amax_tp", dep);
}

/* A TP all-gather under SP of A bytes in bf16 for `use` (ag_use), on
 * `stream` after dep, tensorwise's amax reduction first (cs_amax). */
static uint32_t tp_gather(gen *G, int stream, double A, int use, const char *name, uint32_t dep)
{
    cs_amax(G, stream, dep);
    return coll(G, stream, COLL_ALL_GATHER, ag_use(G, A, use), G->g_tp, name, dep);
}

/* The TP ranks after (d 1) and before (d -1) this one in its group. */
static int tp_peer(const gen *G, int d)
{
    const workload_spec *w = G->w;
    return rank_of(w, (G->tp_i + d + w->tp) % w->tp, G->cp_i, G->dp_i, G->pp_i);
}

/* Transformer Engine's ring-exchange all-gather + GEMM (userbuffers,
 * --tp-comm-overlap): the GEMM over the sequence-parallel input (or output
 * gradient) in tp steps of 1/tp of the tokens, `step` each, while the
 * chunks of A/tp bytes pass round the TP group (tp-1 transfers). */
static void tp_ring_ag(gen *G, const char *name, const cost *step, double f, double A, int use)
{
    cs_amax(G, S_MAIN, NONE);
    ring_steps(G, name, step, f, G->w->tp, tp_peer(G, 1), tp_peer(G, -1), ag_use(G, A, use) / G->w->tp, TP_TAG_RING,
               S_TP_SEND, S_TP_RECV, "tp_ring_send", "tp_ring_recv", true);
}

/* --tp-comm-overlap under fp8: a row-parallel layer's casts, which its split
 * GEMMs leave out (before them: the input's forward, the gradient's backward). */
static void fp8_casts(gen *G, const char *name, const cost *c, double f)
{
    if (fp8(G))
        compute(G, name, c, f);
}

/* Its "pipeline" GEMM + reduce-scatter: the GEMM in TP_SPLITS splits of the
 * tokens, `split` each, each split's output reduce-scattered over TP while
 * the next split computes; the op after waits for all of them. */
static void tp_pipeline_rs(gen *G, const char *name, const cost *split, double f, double A)
{
    uint32_t rs[TP_SPLITS];
    for (int i = 0; i < TP_SPLITS; i++) {
        compute(G, name, split, f);
        rs[i] = coll_ub(G, S_TP_ASYNC, COLL_REDUCE_SCATTER, A / TP_SPLITS, G->g_tp, "tp_rs", G->last);
    }
    for (int i = 0; i < TP_SPLITS; i++)
        wait_on(G, rs[i]);
}

/* A column-parallel layer's backward GEMMs with their TP collectives on
 * their own stream: with SP the input all-gathered again beside the
 * input-gradient GEMM dg (the weight gradient needs it), and the input
 * gradient's reduce-scatter (all-reduce without SP) beside the weight-
 * gradient GEMM wg; the next op waits for both. --tp-async-bwd runs it so
 * (NCCL's collectives), and --tp-comm-overlap (TE's "bulk" overlaps, ub). */
static void column_async(gen *G, const char *name, const cost *dg, const cost *wg, double f, double A, bool ub)
{
    bool sp = G->w->sp;
    uint32_t (*cl)(gen *, int, coll_kind, double, int, const char *, uint32_t) = ub ? coll_ub : coll;
    uint32_t ag = sp ? cl(G, S_TP_ASYNC, COLL_ALL_GATHER, ag_use(G, A, AG_IN_BWD), G->g_tp, "tp_ag_input_bwd", G->last) : NONE;
    compute(G, name, dg, f);
    uint32_t red = cl(G, S_TP_ASYNC, sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, A, G->g_tp, sp ? "tp_rs" : "tp_ar",
                      G->last);
    wait_on(G, ag);
    compute(G, name, wg, f);
    wait_on(G, red);
}

/* The attention itself with its CP exchange, forward (bwd false) or
 * backward: allgather gathers the whole sequence's K, V before the kernel
 * (Llama 3's form) and reduce-scatters their gradients after its backward;
 * a2a trades the rank's tokens of every head for the whole sequence of 1/cp
 * of the heads before the kernel and back after it (DeepSpeed-Ulysses), in
 * backward the output's gradient first; p2p the ring. */
static void attn_core(gen *G, const char *name, double f, bool bwd)
{
    const workload_spec *w = G->w;
    const cost *k = bwd ? &G->c->core_b : &G->c->core_f;
    if (G->g_cp >= 0 && w->cp_comm == WL_CP_P2P) {
        (bwd ? cp_ring_bwd : cp_ring_fwd)(G, name, f);
    } else if (G->g_cp >= 0 && w->cp_comm == WL_CP_A2A_P2P) { /* Ulysses among A ranks, the ring over their groups */
        coll(G, S_MAIN, COLL_ALLTOALL, cp_a2a_bytes(G, !bwd, f), G->g_cpa, bwd ? "cp_a2a_dout" : "cp_a2a_qkv", NONE);
        (bwd ? cp_ring_bwd : cp_ring_fwd)(G, name, f);
        coll(G, S_MAIN, COLL_ALLTOALL, cp_a2a_bytes(G, bwd, f), G->g_cpa, bwd ? "cp_a2a_dqkv" : "cp_a2a_out", NONE);
    } else if (G->g_cp >= 0 && w->cp_comm == WL_CP_A2A) {
        coll(G, S_MAIN, COLL_ALLTOALL, cp_a2a_bytes(G, !bwd, f), G->g_cp, bwd ? "cp_a2a_dout" : "cp_a2a_qkv", NONE);
        compute(G, name, k, f);
        coll(G, S_MAIN, COLL_ALLTOALL, cp_a2a_bytes(G, bwd, f), G->g_cp, bwd ? "cp_a2a_dqkv" : "cp_a2a_out", NONE);
    } else {
        if (G->g_cp >= 0 && !bwd)
            coll(G, S_MAIN, COLL_ALL_GATHER, cp_kv_chunk(G, f) * w->cp, G->g_cp, "cp_ag_kv", NONE);
        compute(G, name, k, f);
        if (G->g_cp >= 0 && bwd)
            coll(G, S_MAIN, COLL_REDUCE_SCATTER, cp_kv_chunk(G, f) * w->cp, G->g_cp, "cp_rs_dkv", NONE);
    }
}

/* The attention block's forward (layer norm, QKV, attention, output
 * projection, dropout) of f layers, A bytes of activations: one op around
 * the CP exchange where nothing splits it (allgather gathers before it),
 * else its parts around the exchange; with --tp-comm-overlap the QKV GEMM
 * as the ring-exchange gather and the projection as the pipelined
 * reduce-scatter. */
static void attn_fwd(gen *G, const char *name, double f, double A)
{
    const workload_spec *w = G->w;
    bool tpo = tp_overlap(G);
    if (!tpo && (G->g_cp < 0 || w->cp_comm == WL_CP_ALLGATHER) && !G->kernels) {
        if (G->g_cp >= 0)
            coll(G, S_MAIN, COLL_ALL_GATHER, cp_kv_chunk(G, f) * w->cp, G->g_cp, "cp_ag_kv", NONE);
        compute(G, name, &G->c->attn_f, f);
        return;
    }
    if (tpo) {
        compute(G, name, &G->c->attn_norm.f, f);
        tp_ring_ag(G, name, &G->c->qkv_t.f, f, A, AG_IN);
    } else {
        compute(G, name, &G->c->pre_f, f);
    }
    attn_core(G, name, f, false);
    if (tpo) {
        fp8_casts(G, name, &G->c->proj_c.f, f);
        tp_pipeline_rs(G, name, &G->c->proj_4.f, f, A);
        compute(G, name, &G->c->attn_drop.f, f);
    } else {
        compute(G, name, &G->c->post_f, f);
    }
}

/* The attention block's backward up to its QKV GEMMs' part, `body` (all of
 * attn_b, or without the two QKV GEMMs under --tp-async-bwd), with the CP
 * exchange mirrored: allgather reduce-scatters the K, V gradients after it;
 * a2a and p2p run the output projection's backward, the exchange around the
 * attention's, then the rest. */
static void attn_bwd_body(gen *G, const char *name, const cost *body, double f)
{
    const workload_spec *w = G->w;
    if ((G->g_cp < 0 || w->cp_comm == WL_CP_ALLGATHER) && !G->kernels) {
        compute(G, name, body, f);
        if (G->g_cp >= 0) /* the reduce-scatter of dK, dV (the whole sequence's) */
            coll(G, S_MAIN, COLL_REDUCE_SCATTER, cp_kv_chunk(G, f) * w->cp, G->g_cp, "cp_rs_dkv", NONE);
        return;
    }
    cost rest, tmp;
    cost_sub(&tmp, body, &G->c->post_b);
    cost_sub(&rest, &tmp, &G->c->core_b);
    compute(G, name, &G->c->post_b, f);
    attn_core(G, name, f, true);
    compute(G, name, &rest, f);
}

/* --tp-comm-overlap's attention backward (TE): dropout; the output
 * projection's input gradient as the ring-exchange gather of the output
 * gradient, then its weight gradient; the attention with its CP exchange;
 * QKV's GEMMs with the "bulk" overlaps (column_async); the layer norm. */
static void attn_bwd_tpo(gen *G, double f, double A)
{
    const char *n = "attn_bwd";
    compute(G, n, &G->c->attn_drop.b, f);
    fp8_casts(G, n, &G->c->proj_c.dg, f);
    tp_ring_ag(G, n, &G->c->proj_t.dg, f, A, AG_DY);
    compute(G, n, &G->c->proj.wg, f);
    attn_core(G, n, f, true);
    column_async(G, n, &G->c->qkv.dg, &G->c->qkv.wg, f, A, true);
    compute(G, n, &G->c->attn_norm.b, f);
}

/* --tp-comm-overlap's dense MLP, forward and backward, as the attention's. */
static void mlp_fwd_tpo(gen *G, const char *name, double f, double A)
{
    compute(G, name, &G->c->mlp_norm.f, f);
    tp_ring_ag(G, name, &G->c->fc1_t.f, f, A, AG_IN);
    compute(G, name, &G->c->mlp_act.f, f);
    fp8_casts(G, name, &G->c->fc2_c.f, f);
    tp_pipeline_rs(G, name, &G->c->fc2_4.f, f, A);
    compute(G, name, &G->c->mlp_drop.f, f);
}

static void mlp_bwd_tpo(gen *G, double f, double A)
{
    const char *n = "mlp_bwd";
    compute(G, n, &G->c->mlp_drop.b, f);
    fp8_casts(G, n, &G->c->fc2_c.dg, f);
    tp_ring_ag(G, n, &G->c->fc2_t.dg, f, A, AG_DY);
    compute(G, n, &G->c->fc2.wg, f);
    compute(G, n, &G->c->mlp_act.b, f);
    column_async(G, n, &G->c->fc1.dg, &G->c->fc1.wg, f, A, true);
    compute(G, n, &G->c->mlp_norm.b, f);
}

/* An MoE layer group's token exchange (the dispatch, the combine, their
 * backward). alltoall: one NCCL all-to-all over EP of a copy of each of the
 * rank's tokens per chosen expert (`a2a` bytes). flex (DeepEP's normal
 * kernels): a token crosses to each NVLink domain holding one of its
 * experts once, to the EP rank at its own place there (`net`: an all-to-all
 * over those ranks, its tokens x P(domain hit) to each), and inside a domain
 * every rank sends each GPU holding one of a token's experts one copy, of
 * its own tokens and of those it received from the other domains (`nvl`:
 * ep_ndom x its tokens x P(GPU hit) to each); one kernel runs both parts
 * pipelined, so they run side by side, each holding half of its SMs. The
 * combine and the backward move the same bytes the other way. */
/* The all-to-all bytes of f MoE layers' dispatch (or combine) on one rank (alltoall's): a copy of each
 * token per chosen expert, scaled by the capacity (workload_moe_capacity_scale). */
static double moe_a2a_bytes(const gen *G, double f)
{
    const workload_spec *w = G->w;
    double b = G->T / w->tp * w->m.topk * w->m.hidden * 2 * f * workload_moe_capacity_scale(w);
    if (G->a2a_roots) /* uneven: the tokens the capacity drops at the busiest rank not sent */
        b *= workload_moe_load_mean(w) / workload_moe_capacity_scale(w);
    return b;
}

/* --moe-load-imbalance: the loads of an MoE block whose first layer is `layer` (its busiest EP rank at
 * place layer mod ep); balanced without the flag. */
static void moe_load(gen *G, int layer)
{
    const workload_spec *w = G->w;
    if (!G->a2a_roots)
        return;
    int h = layer % w->ep;
    double mine = workload_moe_rank_load(w, G->ep_pos == h);
    G->load = mine / workload_moe_capacity_scale(w);
    G->recv = mine / workload_moe_load_mean(w);
    G->a2a_root = G->a2a_roots[h];
}

/* An EP all-to-all op made uneven: weighted by its receivers (dir > 0: toward the experts) or its
 * senders (dir < 0: back from them). */
static void a2a_weigh(gen *G, uint32_t i, int dir)
{
    if (G->a2a_root && i != NONE)
        g_array_index(G->t->ranks[G->r].ops, trace_op, i).root = dir > 0 ? G->a2a_root : -G->a2a_root;
}

/* flex's two parts (below) for f layers: the bytes between domains and inside one, the SMs each holds. */
static int flex_parts(const gen *G, double f, double *net, double *nvl)
{
    const workload_spec *w = G->w;
    double tok = G->T / w->tp * w->m.hidden * 2 * f;
    *net = G->ep_ndom * tok * G->p_dom;
    *nvl = G->ep_dom * G->ep_ndom * tok * G->p_gpu;
    return G->g_epl >= 0 && G->g_epn >= 0 ? DEEPEP_SMS / 2 : DEEPEP_SMS;
}

static void ep_exchange(gen *G, double f, double a2a, const char *name, const char *nvl, const char *net, int dir)
{
    const workload_spec *w = G->w;
    if (w->moe_dispatcher != WL_MOE_FLEX) {
        a2a_weigh(G, coll(G, S_MAIN, COLL_ALLTOALL, a2a, G->g_ep, name, NONE), dir);
        return;
    }
    double bnet, bnvl;
    int sms = flex_parts(G, f, &bnet, &bnvl);
    uint32_t x = coll_sms(G, S_EP_NET, COLL_ALLTOALL, bnet, G->g_epn, net, G->last, sms);
    for (guint k = 0; x != NONE && k < G->wait->len; k++) /* and after what the main stream's next op waits for */
        trace_op_dep(G->t, G->r, x, g_array_index(G->wait, uint32_t, k));
    coll_sms(G, S_MAIN, COLL_ALLTOALL, bnvl, G->g_epl, nvl, NONE, sms);
    wait_on(G, x);
}

/* The shared expert of f MoE layers (if the model has one) on the main
 * stream: column- then row-parallel over TP like the dense MLP. */
static void shared_fwd(gen *G, double f, const char *tag)
{
    const workload_spec *w = G->w;
    double A = G->act * f;
    bool sp = w->sp;
    char n[64];
    if (!w->m.shared_ffn)
        return;
    if (sp)
        tp_gather(G, S_MAIN, A, AG_IN, "tp_ag_shared", NONE);
    g_snprintf(n, sizeof n, "%smoe_shared_fwd", tag);
    if (G->kernels) { /* MLP-in and the activation, MLP-out */
        compute(G, n, &G->c->sh_f1, f);
        compute(G, n, &G->c->sh_f2, f);
    } else {
        compute(G, n, &G->c->moe_sh_f, f);
    }
    coll(G, S_MAIN, sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, A, G->g_tp, sp ? "tp_rs_shared" : "tp_ar_shared", NONE);
}

/* Its backward (the output's gradient gathered under SP, the input's
 * reduced over TP). */
static void shared_bwd(gen *G, double f)
{
    const workload_spec *w = G->w;
    double A = G->act * f;
    bool sp = w->sp;
    if (!w->m.shared_ffn)
        return;
    if (sp)
        tp_gather(G, S_MAIN, A, AG_DY, "tp_ag_shared_bwd", NONE);
    if (G->delay) { /* MLP-out's input gradient, the activation's, MLP-in's; the weight gradients held */
        const kpart k[] = {{.c = &G->c->sh_out.dg}, {.c = &G->c->sh_out.wg, .wg = true}, {.c = &G->c->sh_act.b},
                           {.c = &G->c->sh_in.dg}, {.c = &G->c->sh_in.wg, .wg = true}};
        kernels(G, "moe_shared_bwd", k, G_N_ELEMENTS(k), f);
    } else if (G->kernels) {
        compute(G, "moe_shared_bwd", &G->c->sh_b1, f);
        compute(G, "moe_shared_bwd", &G->c->sh_b2, f);
    } else {
        compute(G, "moe_shared_bwd", &G->c->moe_sh_b, f);
    }
    coll(G, S_MAIN, sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, A, G->g_tp,
         sp ? "tp_rs_shared_bwd" : "tp_ar_shared_bwd", NONE);
}

/* An MoE layer's MLP side for f layers: the router (pre: its cost, with the
 * pre-MLP norm or, rerun by selective recomputation, without), the
 * dispatch, the experts, the combine and the shared expert, each with its
 * EP, ETP and TP traffic. */
static void moe_fwd(gen *G, double f, const char *tag, const cost *pre)
{
    const workload_spec *w = G->w;
    double A = G->act * f;
    bool sp = w->sp;
    char n[64];
    double a2a = moe_a2a_bytes(G, f);
    bool sho = w->moe_shared_overlap && w->m.shared_ffn;
    char sn[64];
    g_snprintf(sn, sizeof sn, "%smoe_shared_fwd", tag);
    g_snprintf(n, sizeof n, "%smoe_router_fwd", tag);
    compute(G, n, pre, f);
    uint32_t fc1 = NONE;
    if (sho) { /* the shared expert's input gathered and its first half run beside the dispatch */
        uint32_t ag = sp ? tp_gather(G, S_SHARED, A, AG_IN, "tp_ag_shared", G->last) : NONE;
        fc1 = compute_on(G, S_SHARED, sn, &G->c->sh_f1, f, ag == NONE ? G->last : NONE);
    }
    ep_exchange(G, f, a2a, "ep_dispatch", "ep_dispatch_nvl", "ep_dispatch_net", 1);
    /* expert tensor parallelism (Megatron's MoEAlltoAllTokenDispatcher with tp_size > 1): the etp
     * ranks all-gather the tokens dispatched to them, and reduce-scatter the experts' partial sums */
    coll(G, S_MAIN, COLL_ALL_GATHER, a2a * w->etp * G->recv, G->g_etp, "etp_ag", NONE);
    g_snprintf(n, sizeof n, "%smoe_experts_fwd", tag);
    wait_on(G, fc1);
    compute(G, n, &G->c->moe_exp_f, f * G->load);
    uint32_t fc2 = sho ? compute_on(G, S_SHARED, sn, &G->c->sh_f2, f, G->last) : NONE; /* beside the combine */
    coll(G, S_MAIN, COLL_REDUCE_SCATTER, a2a * w->etp * G->recv, G->g_etp, "etp_rs", NONE);
    ep_exchange(G, f, a2a, "ep_combine", "ep_combine_nvl", "ep_combine_net", -1);
    if (!sp)
        coll(G, S_MAIN, COLL_ALL_GATHER, A, G->g_tp, "tp_ag_tokens", NONE);
    if (sho) { /* its output reduced once both halves meet */
        wait_on(G, fc2);
        coll(G, S_MAIN, sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, A, G->g_tp, sp ? "tp_rs_shared" : "tp_ar_shared",
             NONE);
        return;
    }
    /* Megatron-LM's MoELayer without --moe-shared-expert-overlap: the shared expert after the routed
     * ones */
    shared_fwd(G, f, tag);
}

/* The attention block of f layers with its TP traffic (the first op on the main stream). */
static void attn_block_fwd(gen *G, double f, const char *tag)
{
    const workload_spec *w = G->w;
    double A = G->act * f, Ain = G->act_in * f;
    bool sp = w->sp, tpo = tp_overlap(G);
    char n[64];
    if (sp && !tpo) /* the attention's input (MLA: its latents, the down projections run on the rank's tokens) */
        tp_gather(G, S_MAIN, Ain, AG_IN, "tp_ag", NONE);
    g_snprintf(n, sizeof n, "%sattn_fwd", tag);
    attn_fwd(G, n, f, A);
    if (!tpo)
        coll(G, S_MAIN, sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, A, G->g_tp, sp ? "tp_rs" : "tp_ar", NONE);
}

/* The dense MLP block of f layers with its TP traffic. */
static void dense_mlp_fwd(gen *G, double f, const char *tag)
{
    const workload_spec *w = G->w;
    double A = G->act * f;
    bool sp = w->sp;
    char n[64];
    g_snprintf(n, sizeof n, "%smlp_fwd", tag);
    if (tp_overlap(G)) {
        mlp_fwd_tpo(G, n, f, A);
        return;
    }
    if (sp)
        tp_gather(G, S_MAIN, A, AG_IN, "tp_ag", NONE);
    if (G->kernels) { /* the norm, MLP-in, the activation, MLP-out, dropout + residual */
        const kpart k[] = {{.c = &G->c->mlp_norm.f}, {.c = &G->c->fc1.f}, {.c = &G->c->mlp_act.f}, {.c = &G->c->fc2.f},
                           {.c = &G->c->mlp_drop.f}};
        kernels(G, n, k, G_N_ELEMENTS(k), f);
    } else {
        compute(G, n, &G->c->mlp_f, f);
    }
    coll(G, S_MAIN, sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, A, G->g_tp, sp ? "tp_rs" : "tp_ar", NONE);
}

/* The forward of f layers (a layer group; an MTP layer) of one kind. */
static void block_fwd(gen *G, double f, bool moe, const char *tag)
{
    attn_block_fwd(G, f, tag);
    if (!moe)
        dense_mlp_fwd(G, f, tag);
    else
        moe_fwd(G, f, tag, &G->c->moe_pre_f);
}

/* The backward of a part ending in a column-parallel layer (QKV, or the MLP
 * from its output back to MLP-in) whose compute is `all`, with that layer's
 * input- and weight-gradient GEMMs dg, wg inside it; then its input
 * gradient's reduce-scatter (all-reduce without SP) over TP. With
 * --tp-async-bwd (Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication
 * since 2021, Transformer Engine's linear layers) the layer's backward runs
 * as they do: with SP its input (not kept gathered) is all-gathered again
 * beside the input-gradient GEMM, the weight gradient needing it; the input
 * gradient's collective is launched asynchronously and runs beside the
 * weight-gradient GEMM, the next op waiting for both. Without it (Megatron-LM
 * of 2020-21, the validation rows) one op and a blocking collective. attn:
 * the attention block's, whose CP exchange runs inside (attn_bwd_body). */
static void column_bwd(gen *G, const char *name, const cost *all, const cost *dg, const cost *wg, double f, double A,
                       bool attn)
{
    const workload_spec *w = G->w;
    bool sp = w->sp;
    if (!w->tp_async_bwd || G->g_tp < 0) {
        if (attn)
            attn_bwd_body(G, name, all, f);
        else
            compute(G, name, all, f);
        coll(G, S_MAIN, sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, A, G->g_tp, sp ? "tp_rs" : "tp_ar", NONE);
        return;
    }
    cost rest = *all;
    rest.ps -= dg->ps + wg->ps;
    rest.flops -= dg->flops + wg->flops;
    rest.bytes -= dg->bytes + wg->bytes;
    if (attn) /* the attention's backward and its CP exchange, before QKV's GEMMs */
        attn_bwd_body(G, name, &rest, f);
    else
        compute(G, name, &rest, f);
    column_async(G, name, dg, wg, f, A, false);
}

/* A TP block's backward begins: under --tp-comm-overlap all of it is `tpo`'s (true: done); else its
 * output gradient all-gathered under SP. */
static bool tp_bwd_begin(gen *G, double f, void (*tpo)(gen *, double, double))
{
    double A = G->act * f;
    if (tp_overlap(G)) {
        tpo(G, f, A);
        return true;
    }
    if (G->w->sp)
        tp_gather(G, S_MAIN, A, AG_DY, "tp_ag", NONE);
    return false;
}

/* The attention block's backward of f layers with its TP traffic. */
static void attn_block_bwd(gen *G, double f)
{
    bool sp = G->w->sp;
    if (tp_bwd_begin(G, f, attn_bwd_tpo))
        return;
    if (G->delay) { /* dropout and the projection's input gradient, the attention, the rest: the projection's,
                     * QKV's (MLA: the up and down projections') weight gradients held */
        cost post, pre, tmp;
        cost_sub(&post, &G->c->post_b, &G->c->proj.wg);
        cost_sub(&tmp, &G->c->pre_b, &G->c->qkv.wg);
        cost_sub(&pre, &tmp, &G->c->down.wg);
        compute(G, "attn_bwd", &post, f);
        wgrad(G, "attn_bwd", &G->c->proj.wg, f);
        attn_core(G, "attn_bwd", f, true);
        compute(G, "attn_bwd", &pre, f);
        wgrad(G, "attn_bwd", &G->c->qkv.wg, f);
        if (G->w->m.kv_lora > 0)
            wgrad(G, "attn_bwd", &G->c->down.wg, f);
        coll(G, S_MAIN, sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, G->act_in * f, G->g_tp, sp ? "tp_rs" : "tp_ar",
             NONE);
        return;
    }
    column_bwd(G, "attn_bwd", &G->c->attn_b, &G->c->qkv.dg, &G->c->qkv.wg, f, G->act_in * f, true);
}

/* The dense MLP block's backward of f layers with its TP traffic. */
static void dense_mlp_bwd(gen *G, double f)
{
    double A = G->act * f;
    bool sp = G->w->sp;
    if (tp_bwd_begin(G, f, mlp_bwd_tpo))
        return;
    if (G->delay) { /* its kernels, the GEMMs' weight gradients held */
        const kpart k[] = {{.c = &G->c->mlp_drop.b}, {.c = &G->c->fc2.dg}, {.c = &G->c->fc2.wg, .wg = true},
                           {.c = &G->c->mlp_act.b}, {.c = &G->c->fc1.dg}, {.c = &G->c->fc1.wg, .wg = true},
                           {.c = &G->c->mlp_norm.b}};
        kernels(G, "mlp_bwd", k, G_N_ELEMENTS(k), f);
        coll(G, S_MAIN, sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, A, G->g_tp, sp ? "tp_rs" : "tp_ar", NONE);
        return;
    }
    column_bwd(G, "mlp_bwd", &G->c->mlp_b, &G->c->fc1.dg, &G->c->fc1.wg, f, A, false);
}

static void block_bwd(gen *G, double f, bool moe)
{
    const workload_spec *w = G->w;
    double A = G->act * f;
    bool sp = w->sp;
    if (!moe) {
        dense_mlp_bwd(G, f);
    } else {
        double a2a = moe_a2a_bytes(G, f);
        bool sho = w->moe_shared_overlap && w->m.shared_ffn;
        uint32_t p1 = NONE;
        if (sho) { /* --moe-shared-expert-overlap: its second half's backward beside the combine's */
            uint32_t ag = sp ? tp_gather(G, S_SHARED, A, AG_DY, "tp_ag_shared_bwd", G->last)
                             : NONE;
            p1 = compute_on(G, S_SHARED, "moe_shared_bwd", &G->c->sh_b1, f, ag == NONE ? G->last : NONE);
        } else { /* the shared expert ran last: its backward first */
            shared_bwd(G, f);
        }
        if (!sp)
            coll(G, S_MAIN, COLL_REDUCE_SCATTER, A, G->g_tp, "tp_rs_tokens", NONE);
        ep_exchange(G, f, a2a, "ep_combine_bwd", "ep_combine_bwd_nvl", "ep_combine_bwd_net", 1);
        coll(G, S_MAIN, COLL_ALL_GATHER, a2a * w->etp * G->recv, G->g_etp, "etp_ag_bwd", NONE);
        wait_on(G, p1);
        compute(G, "moe_experts_bwd", &G->c->moe_exp_b, f * G->load);
        /* its first half's backward beside the dispatch's */
        uint32_t p2 = sho ? compute_on(G, S_SHARED, "moe_shared_bwd", &G->c->sh_b2, f, G->last) : NONE;
        coll(G, S_MAIN, COLL_REDUCE_SCATTER, a2a * w->etp * G->recv, G->g_etp, "etp_rs_bwd", NONE);
        ep_exchange(G, f, a2a, "ep_dispatch_bwd", "ep_dispatch_bwd_nvl", "ep_dispatch_bwd_net", -1);
        if (sho) {
            wait_on(G, p2);
            coll(G, S_MAIN, sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, A, G->g_tp,
                 sp ? "tp_rs_shared_bwd" : "tp_ar_shared_bwd", NONE);
        }
        compute(G, "moe_router_bwd", &G->c->moe_pre_b, f);
    }
    attn_block_bwd(G, f);
}

/* Selective recomputation (--recompute-modules, Megatron-LM's): before f
 * layers' backward, the forward of the modules it reran: the norms that are
 * modules of their own (MLA's input norm, an MoE layer's pre-MLP norm), MLA's
 * up projections with RoPE, the attention kernel (its CP exchange not
 * rerun), the experts' activation (one op); the whole MoE layer (`moe`:
 * router, dispatch, experts, combine, shared expert, with their EP, ETP and
 * TP traffic, as its forward runs them); the dense MLP and the shared
 * expert with their TP gather and reduction. Modules inside `moe` (moe_act,
 * shared_experts) are rerun again at their backward, as Megatron-LM's
 * nested checkpoints do. */
static void recompute_sel(gen *G, double f, bool moe)
{
    const workload_spec *w = G->w;
    unsigned rc = w->recompute_modules;
    bool mla = w->m.kv_lora > 0, sp = w->sp;
    double A = G->act * f;
    if (!rc || w->recompute)
        return;
    cost c = {0};
    if ((rc & WL_RC_LAYERNORM) && mla)
        cost_add(&c, &G->c->attn_norm.f);
    if ((rc & WL_RC_LAYERNORM) && moe)
        cost_add(&c, &G->c->moe_norm.f);
    if ((rc & WL_RC_MLA_UP_PROJ) && mla) {
        cost_add(&c, &G->c->qkv.f);
        cost_add(&c, &G->c->rope.f);
    }
    if (rc & WL_RC_CORE_ATTN)
        cost_add(&c, &G->c->core_f);
    if ((rc & WL_RC_MOE_ACT) && moe) { /* over the tokens the rank's experts got */
        cost a = G->c->moe_act.f;
        a.ps = (int64_t)llround((double)a.ps * G->load), a.flops *= G->load, a.bytes *= G->load;
        cost_add(&c, &a);
    }
    if (c.ps > 0)
        compute(G, "recompute_modules", &c, f);
    if ((rc & WL_RC_MOE) && moe) { /* the whole MoE layer from the norm's output: the router on */
        cost pre;
        cost_sub(&pre, &G->c->moe_pre_f, &G->c->moe_norm.f);
        moe_fwd(G, f, "recompute_", &pre);
    }
    const cost *mod = (rc & WL_RC_MLP) && !moe ? &G->c->mlp_f
                    : (rc & WL_RC_SHARED_EXPERTS) && moe && w->m.shared_ffn ? &G->c->moe_sh_f
                    : NULL;
    if (mod) {
        if (sp)
            tp_gather(G, S_MAIN, A, AG_IN, "tp_ag_recompute", NONE);
        compute(G, moe ? "recompute_shared_experts" : "recompute_mlp", mod, f);
        coll(G, S_MAIN, sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, A, G->g_tp, sp ? "tp_rs_recompute" : "tp_ar_recompute",
             NONE);
    }
}

/* A multi-token prediction layer's forward (Megatron-LM's
 * MultiTokenPredictionLayer, read 2026-12-03): the shifted tokens' embedding
 * and the hidden state, each normed, concatenated and projected 2h -> h by a
 * column-parallel layer (its 2h-wide input all-gathered under SP), the
 * output all-gathered over TP (gather_from_tensor_model_parallel_region;
 * under SP then split by sequence again, no traffic), then a transformer
 * layer of the model's last kind. Its final norm, the LM head and the loss
 * are the head's (mtp_lm_head ops). */
static void mtp_fwd(gen *G, const char *tag)
{
    const workload_spec *w = G->w;
    char n[64];
    g_snprintf(n, sizeof n, "%smtp_fwd", tag);
    compute(G, n, &G->c->mtp_in.f, 1);
    if (w->sp)
        tp_gather(G, S_MAIN, 2 * G->act, AG_IN, "tp_ag_mtp", NONE);
    compute(G, n, &G->c->mtp_proj.f, 1);
    coll(G, S_MAIN, COLL_ALL_GATHER, G->act, G->g_tp, "tp_ag_mtp_out", NONE);
    use_costs(G, workload_layer_is_swa(&w->m, w->m.layers - 1));
    moe_load(G, w->m.layers);
    block_fwd(G, 1, workload_layer_is_moe(&w->m, w->m.layers - 1), tag);
}

/* Its backward: the layer's; under SP the output gradient gathered by
 * sequence (the split's backward); the projection's, its input gradient
 * reduce-scattered (all-reduced without SP) as a column-parallel layer's
 * (column_bwd); the norms' and the lookup's with them. */
static void mtp_bwd(gen *G)
{
    const workload_spec *w = G->w;
    use_costs(G, workload_layer_is_swa(&w->m, w->m.layers - 1));
    moe_load(G, w->m.layers);
    recompute_sel(G, 1, workload_layer_is_moe(&w->m, w->m.layers - 1));
    block_bwd(G, 1, workload_layer_is_moe(&w->m, w->m.layers - 1));
    if (w->sp)
        tp_gather(G, S_MAIN, G->act, AG_DY, "tp_ag_mtp_bwd", NONE);
    cost all = cost_sum3(&G->c->mtp_proj.dg, &G->c->mtp_proj.wg, &G->c->mtp_in.b);
    column_bwd(G, "mtp_bwd", &all, &G->c->mtp_proj.dg, &G->c->mtp_proj.wg, 1, 2 * G->act, false);
}

/* ---- gradients ---- */

/* First layer of layer group k of the current model chunk: chunk c of PP
 * rank r is virtual stage c*pp + r (Megatron's interleaved assignment;
 * workload_chunk_layers); with one chunk, stage r of workload_stage_layers. */
static int group_layer(const gen *G, int k)
{
    return G->cfirst[G->chunk] + group_start(G, k);
}

/* A block: layers of one kind (MoE or dense, windowed attention or full) run as one op each part. */
typedef struct {
    int k, n;                /* layer group, layers */
    int layer;               /* its first layer (global index) */
    bool moe, swa;           /* its kind */
    bool gfirst, glast;      /* the group's first block (its gradients follow its backward), last (full
                              * recomputation reruns the group before its backward) */
} blk;

/* Layer group k as fused blocks of one kind each, in forward order: a group of several kinds
 * (--layer-fuse over layers that alternate or follow a list) runs a block of each kind, in the order
 * its layers first show them (until 2026-12-03 the whole group took its first layer's kind). Fills
 * out[] (at most 4: MoE or dense, windowed or not); returns the blocks. */
static int group_blocks(const gen *G, int k, blk out[4])
{
    const workload_model *m = &G->w->m;
    int l0 = group_layer(G, k), len = group_size(G, k), nb = 0;
    for (int i = 0; i < len; i++) {
        bool moe = workload_layer_is_moe(m, l0 + i), swa = workload_layer_is_swa(m, l0 + i);
        int j = 0;
        while (j < nb && (out[j].moe != moe || out[j].swa != swa))
            j++;
        if (j == nb)
            out[nb++] = (blk){.k = k, .layer = l0 + i, .moe = moe, .swa = swa};
        out[j].n++;
    }
    out[0].gfirst = out[nb - 1].glast = true;
    return nb;
}

/* The current chunk holds the embedding (first virtual stage) / the LM
 * head and loss (last virtual stage). */
static bool chunk_first(const gen *G)
{
    return G->pp_i == 0 && G->chunk == 0;
}

static bool chunk_last(const gen *G)
{
    return G->pp_i == G->w->pp - 1 && G->chunk == G->V - 1;
}

/* The current chunk holds the MTP layers: the last chunk of their stage
 * (workload_mtp_stage: the last, or a layout's). */
static bool chunk_mtp(const gen *G)
{
    return G->pp_i == G->mtp_stage && G->chunk == G->V - 1;
}

/* The MTP layers' stage holds its own copy of the word embedding (their
 * input's lookup): not the first stage's, nor a tied last stage's LM head
 * (workload_emb_matrices). */
static bool mtp_emb_copy(const gen *G)
{
    const workload_spec *w = G->w;
    return G->mtp_stage > 0 && !(G->mtp_stage == w->pp - 1 && w->m.tied);
}

/* Bytes of the pipeline's activation (or its gradient) between virtual
 * stage j and j + 1: a microbatch's hidden states, split by TP; after a
 * standalone MTP stage (a layout's MTP layers before the loss's stage) the
 * MTP layers' outputs with them, 1 + mtp times that (Megatron-LM's MTP block
 * concatenates them along the sequence for the stage with the loss). */
static double hop_bytes(const gen *G, int j)
{
    double a = G->act / G->w->tp;
    return G->mtp_vs >= 0 && j >= G->mtp_vs ? a * (1 + G->w->mtp) : a;
}

/* The current chunk's virtual stage. */
static int chunk_vs(const gen *G)
{
    return G->chunk * G->w->pp + G->pp_i;
}

/* The MTP layers' weights on this rank (dense, expert, replicated, linear as
 * group_params'), zero but on their pipeline stage. */
static void mtp_params(const gen *G, double *dense, double *expert, double *replicated, double *linear)
{
    const workload_spec *w = G->w;
    double r = 0;
    *dense = *expert = 0;
    if (w->mtp > 0 && G->pp_i == G->mtp_stage)
        *dense = workload_mtp_rank_params(w, expert, &r);
    if (replicated)
        *replicated = r;
    if (linear)
        *linear = *dense > 0 ? *dense - r + w->mtp * workload_layer_tp_replicated_linear(&w->m) : 0;
}

/* Dense and expert weights one rank holds for layer group k of its current
 * chunk; *replicated (when not NULL): the part of *dense every TP rank holds
 * whole (workload_layer_tp_replicated); *linear (when not NULL): the linear
 * layers' part of *dense (all but the norms, routers and biases there). */
static void group_params(const gen *G, int k, double *dense, double *expert, double *replicated, double *linear)
{
    double r = 0, lin = 0;
    *dense = *expert = 0;
    for (int l = 0; l < group_size(G, k); l++) {
        double e, rl, d = workload_layer_rank_params(G->w, group_layer(G, k) + l, &e, &rl);
        *dense += d;
        *expert += e;
        r += rl;
        lin += d - rl + workload_layer_tp_replicated_linear(&G->w->m);
    }
    if (replicated)
        *replicated = r;
    if (linear)
        *linear = lin;
}

static void bucket_flush(gen *G, bool expert)
{
    double *p = expert ? &G->pend_e : &G->pend;
    if (*p <= 0)
        return;
    coll_kind k = G->w->zero >= 1 ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE;
    uint32_t i = coll(G, S_DP, k, *p, expert ? G->g_edp : G->g_dpc, expert ? "dp_grad_expert" : "dp_grad", G->last);
    if (i != NONE)
        g_array_append_val(G->dp_ops, i);
    double *params = expert ? &G->pend_e_params : &G->pend_params;
    if (G->keep_buckets)
        g_array_append_val(expert ? G->ebuckets : G->buckets, *params);
    *params = 0;
    *p = 0;
}

/* The bucket rule (DDP's and Megatron's): `add` more gradients join the
 * open bucket (*bytes of gradients pending); whether it is now full. The
 * bucket's weights are `wbytes` more bytes to gather back (*params: ZeRO-1/2
 * gather the bucket after the optimizer step). */
static bool bucket_add(const gen *G, double *bytes, double *params, double add, double wbytes)
{
    *bytes += add * G->w->grad_bytes;
    *params += wbytes;
    /* --no-overlap-grad-reduce: one bucket a chunk, reduced when its backward is done (Megatron-LM's
     * DDP keeps a single bucket when it does not overlap, and starts its reduction in
     * finalize_model_grads) */
    return !G->w->grad_reduce_after && *bytes >= (double)G->w->bucket_bytes;
}

/* Bytes of `params` weights of which `linear` are linear layers' (all of
 * an expert's): 2 a weight, 1 for linear ones under --fp8-param-gather
 * with a per-tensor recipe (Megatron-LM keeps them in fp8 and gathers them
 * so; mxfp8's are gathered in bf16). */
static double weight_bytes(const gen *G, double params, double linear)
{
    return 2 * params - (fpg_in_fp8(G) ? linear : 0);
}

/* Gradients of `dense` (`linear` of them linear layers') and `expert`
 * weights are ready after the last main op. */
static void grads_ready(gen *G, double dense, double linear, double expert)
{
    if (bucket_add(G, &G->pend, &G->pend_params, dense, weight_bytes(G, dense, linear)))
        bucket_flush(G, false);
    if (bucket_add(G, &G->pend_e, &G->pend_e_params, expert, weight_bytes(G, expert, expert)))
        bucket_flush(G, true);
}

static double emb_params(const gen *G)
{
    return (double)G->w->m.vocab * G->w->m.hidden / G->w->tp;
}

/* ---- passes ---- */

/* ZeRO-3 as DeepSpeed of 2021 ran it (zero3_param_sync; deepspeed/runtime/
 * zero/partition_parameters.py, _allgather_param and _reduce_scatter_gradient
 * of v0.3.13-0.4): a parameter is gathered on its own, right after
 * torch.cuda.synchronize(), so the gather starts when everything issued
 * before it on this GPU is done (compute, the previous gather, the last
 * reduce-scatter), into torch.distributed.all_gather's list of one tensor
 * per rank, which PyTorch's ProcessGroupNCCL fills from a flat buffer with
 * one copy kernel per rank. */
/* The copies are launched one by one from a host loop, so each takes at
 * least a kernel launch on the host: the replay's collective launch cost
 * (COLL_LAUNCH_US, 2.5 us; 5.07 us measured on an H200 VM, docs/calibration.md). */
#define HOST_LAUNCH_PS (COLL_LAUNCH_US * 1e6)

static int64_t rank_copies_ps(const gen *G, double bytes)
{
    double part = bytes / G->w->dp; /* one rank's partition */
    int64_t k = compute_kernel_ps(G->g, KC_ELEM, COMPUTE_BF16, 0, 2 * part);
    return (int64_t)G->w->dp * (k > (int64_t)HOST_LAUNCH_PS ? k : (int64_t)HOST_LAUNCH_PS);
}

/* DeepSpeed builds those lists in Python, one narrow() view per rank; a
 * PyTorch eager call on a tensor costs about 2.3 us on the host (PyTorch's
 * operator micro-benchmark, split on CUDA tensors: 2.26 us per call once
 * pytorch#32194 of January 2020 had cut the __torch_function__ overhead). */
#define TORCH_EAGER_CALL_PS 2.3e6

/* calls: eager tensor calls per rank (_allgather_param: flat_tensor.narrow;
 * _reduce_scatter_gradient: param.grad.view(-1).narrow, two) */
static uint32_t rank_list_host(gen *G, int stream, uint32_t dep, int calls)
{
    trace_op o = {.kind = TOP_COMPUTE, .stream = stream, .name = "zero3_rank_list_host",
                  .dur_ps = (int64_t)(G->w->dp * calls * TORCH_EAGER_CALL_PS), .seq = -1};
    return add(G, &o, dep);
}

static void sync_gather(gen *G, double numel, const char *name)
{
    if (G->g_dpc < 0)
        return;
    uint32_t h = rank_list_host(G, S_GATHER, G->last, 1);
    if (G->sync_prev != NONE)
        trace_op_dep(G->t, G->r, h, G->sync_prev);
    if (G->rs_last != NONE)
        trace_op_dep(G->t, G->r, h, G->rs_last);
    uint32_t i = coll(G, S_GATHER, COLL_ALL_GATHER, numel * 2, G->g_dpc, name, h);
    trace_op o = {.kind = TOP_COMPUTE, .stream = S_GATHER, .name = "zero3_ag_rank_copies",
                  .dur_ps = rank_copies_ps(G, numel * 2), .mem_bytes = 2 * numel * 2, .seq = -1};
    G->sync_prev = add(G, &o, i);
    wait_on(G, G->sync_prev);
}

/* The tensors of layer group k (and the embedding, which group 0 and, untied,
 * the last group use), each gathered alone; refetch: after the recomputed
 * forward, the ones DeepSpeed freed. */
static void zero3_gather_params(gen *G, int k, bool last_group, bool refetch)
{
    const workload_spec *w = G->w;
    double t[16];
    const char *name = refetch ? "zero3_param_refetch_ag" : "zero3_param_ag";
    int n = workload_layer_tensors(&w->m, w->tp, w->reuse_distance, refetch, t, 16);
    if (!refetch && k == 0)
        sync_gather(G, emb_params(G), name);
    for (int l = 0; l < group_size(G, k); l++)
        for (int i = 0; i < n && i < 16; i++)
            sync_gather(G, t[i], name);
    if (!refetch && last_group && !w->m.tied)
        sync_gather(G, emb_params(G), name);
}

/* One tensor's gradient reduce-scattered: DeepSpeed builds the Python list
 * input with param.grad.view(-1).narrow(...) per rank (two eager calls),
 * PyTorch flattens it with one copy per rank on the compute stream, then the
 * reduce-scatter runs on the communication stream. */
static void rs_tensor(gen *G, double numel)
{
    double bytes = numel * G->w->grad_bytes;
    rank_list_host(G, S_MAIN, NONE, 2);
    trace_op o = {.kind = TOP_COMPUTE, .stream = S_MAIN, .name = "zero3_rs_rank_copies",
                  .dur_ps = rank_copies_ps(G, bytes), .mem_bytes = 2 * bytes, .seq = -1};
    add(G, &o, NONE);
    uint32_t r = coll(G, S_DP, COLL_REDUCE_SCATTER, bytes, G->g_dpc, "zero3_grad_rs", G->last);
    if (r != NONE) {
        g_array_append_val(G->dp_ops, r);
        G->rs_last = r;
    }
}

/* Gradients of layer group k per tensor, in the order backward makes them
 * (the layers from their end; the untied LM head first, the embedding last). */
static void zero3_rs_params(gen *G, int k, bool last_group)
{
    const workload_spec *w = G->w;
    double t[16];
    int n = workload_layer_tensors(&w->m, w->tp, w->reuse_distance, false, t, 16);
    if (last_group && !w->m.tied)
        rs_tensor(G, emb_params(G));
    for (int l = 0; l < group_size(G, k); l++)
        for (int i = (n < 16 ? n : 16) - 1; i >= 0; i--)
            rs_tensor(G, t[i]);
    if (k == 0)
        rs_tensor(G, emb_params(G));
}

/* Gather group k's parameters (bf16) before its forward or backward;
 * refetch: only what DeepSpeed freed after the recomputed forward. */
static uint32_t zero3_gather(gen *G, int k, bool last_group, bool refetch)
{
    if (G->w->zero3_param_sync) {
        zero3_gather_params(G, k, last_group, refetch);
        return NONE;
    }
    double d = 0, e = 0;
    if (refetch) { /* what was freed of each kind's layers (its share of them) */
        const workload_spec *w = G->w;
        double dk[2] = {0, 0}, ek[2] = {0, 0};
        for (int l = 0; l < group_size(G, k); l++) {
            int layer = group_layer(G, k) + l, km = workload_layer_is_moe(&w->m, layer);
            double le, ld = workload_layer_rank_params(w, layer, &le, NULL);
            dk[km] += ld;
            ek[km] += le;
        }
        for (int km = 0; km < 2; km++) {
            double f = workload_layer_refetch_frac(&w->m, km, w->tp, w->ep * w->etp, w->reuse_distance);
            if (f > 0 && dk[km] + ek[km] > 0)
                d += f * dk[km], e += f * ek[km];
        }
        if (d + e <= 0)
            return NONE;
    } else {
        group_params(G, k, &d, &e, NULL, NULL);
        if (k == 0)
            d += emb_params(G);
        if (last_group && !G->w->m.tied)
            d += emb_params(G);
    }
    uint32_t i = coll(G, S_GATHER, COLL_ALL_GATHER, (d + e) * 2, G->g_dpc,
                      refetch ? "zero3_param_refetch_ag" : "zero3_param_ag", G->prev_first);
    wait_on(G, i);
    G->prev_first = G->t->ranks[G->r].ops->len;
    return i;
}

/* ZeRO-3 / FSDP: one MTP layer's weights gathered before its forward (with
 * an untied model's input embedding, which its lookup reads again) or its
 * backward (and its recomputation), as a layer group's (zero3_gather); after
 * its backward its gradients reduce-scattered. */
static void zero3_mtp(gen *G, bool fwd, bool grads)
{
    const workload_spec *w = G->w;
    double d, e;
    mtp_params(G, &d, &e, NULL, NULL);
    d /= w->mtp, e /= w->mtp;
    if (grads) {
        uint32_t i = coll(G, S_DP, COLL_REDUCE_SCATTER, (d + e) * w->grad_bytes, G->g_dpc, "zero3_grad_rs", G->last);
        if (i != NONE)
            g_array_append_val(G->dp_ops, i);
        return;
    }
    if (fwd && !w->m.tied)
        d += emb_params(G);
    uint32_t i = coll(G, S_GATHER, COLL_ALL_GATHER, (d + e) * 2, G->g_dpc, "zero3_param_ag", G->prev_first);
    wait_on(G, i);
    G->prev_first = G->t->ranks[G->r].ops->len;
}

/* PP neighbours on the ring of pipeline ranks: the interleaved schedule's
 * last rank feeds rank 0's next chunk (with one chunk the ends are unused). */
static int pp_prev(const gen *G)
{
    const workload_spec *w = G->w;
    return rank_of(w, G->tp_i, G->cp_i, G->dp_i, (G->pp_i + w->pp - 1) % w->pp);
}

static int pp_next(const gen *G)
{
    const workload_spec *w = G->w;
    return rank_of(w, G->tp_i, G->cp_i, G->dp_i, (G->pp_i + 1) % w->pp);
}

/* Tag of microbatch mb's activations (grad false) or their gradients (grad
 * true) on the hop into model chunk `into` (the chunk on the later side of
 * the hop): 2 (into m + mb) + grad, so 2 mb and 2 mb + 1 under plain 1F1B.
 * Unique per (hop, microbatch, direction): with pp 2 both neighbours are
 * the same rank and the tag alone tells the hops apart. */
static int64_t pp_tag(const gen *G, int mb, int into, bool grad)
{
    return 2 * ((int64_t)into * G->mbs + mb) + (grad ? 1 : 0);
}

/* The chunk after the current one's hop forward (the next rank's same chunk,
 * or rank 0's next chunk from the last rank). */
static int chunk_after(const gen *G)
{
    return G->pp_i == G->w->pp - 1 ? G->chunk + 1 : G->chunk;
}

/* --overlap-param-gather (Megatron-LM's DDP with the distributed optimizer,
 * param_and_grad_buffer.py): the previous step's updated weights come back
 * bucket by bucket while the first forward runs, each module's forward
 * pre-hook waiting for its bucket's all-gather. The host dispatches them far
 * ahead of the GPU (the hook's wait is a stream wait), so they run back to
 * back on the data-parallel stream from the step's start in the order the
 * forward needs them, and compute waits only where it outruns them. The
 * buckets are the ones backward fills (grads_ready, bucket_flush: the LM
 * head first, the layers from the last, the embedding last), replayed here
 * before the chunk's first forward; G->pg gets each forward item's gathers. */
static void pg_plan(gen *G)
{
    const workload_spec *w = G->w;
    bool first = chunk_first(G), lastst = chunk_last(G);
    int ng = group_count(G), items = ng + 2; /* item 0 the embedding, 1..ng the groups, ng+1 the head */
    int *bidx = g_new(int, 2 * items);       /* the backward bucket of each item's dense, expert weights */
    GArray *size[2] = {g_array_new(FALSE, FALSE, sizeof(double)), g_array_new(FALSE, FALSE, sizeof(double))};
    double pend[2] = {0, 0}, bytes[2] = {0, 0};
    for (int i = 0; i < 2 * items; i++)
        bidx[i] = -1;
    for (int j = items - 1; j >= 0; j--) { /* backward order: head, groups from the last, embedding */
        double p[2] = {0, 0}, lin = 0;
        if (j == items - 1) { /* the LM head, the MTP layers and their copy of the embedding */
            if (chunk_mtp(G)) {
                mtp_params(G, &p[0], &p[1], NULL, &lin);
                p[0] += mtp_emb_copy(G) ? emb_params(G) : 0;
            }
            if (lastst)
                p[0] += !(w->m.tied && w->pp == 1) ? emb_params(G) : 0;
        } else if (j == 0)
            p[0] = first ? emb_params(G) : 0;
        else
            group_params(G, j - 1, &p[0], &p[1], NULL, &lin);
        bool layer = j > 0;
        double wb[2] = {weight_bytes(G, p[0], layer ? lin : 0), weight_bytes(G, p[1], p[1])};
        for (int c = 0; c < 2; c++) {
            if (p[c] <= 0)
                continue;
            bidx[2 * j + c] = (int)size[c]->len;
            if (bucket_add(G, &bytes[c], &pend[c], p[c], wb[c]) || j == 0) {
                g_array_append_val(size[c], pend[c]);
                pend[c] = bytes[c] = 0;
            }
        }
        if (j == 0)
            for (int c = 0; c < 2; c++)
                if (pend[c] > 0)
                    g_array_append_val(size[c], pend[c]);
    }
    /* dispatch in forward order, each bucket when the first item needing it comes */
    int group[2] = {G->g_dpc, G->g_edp};
    const char *name[2] = {"zero_param_ag", "zero_param_ag_expert"};
    uint32_t *op[2] = {g_new(uint32_t, size[0]->len + 1), g_new(uint32_t, size[1]->len + 1)};
    int next[2] = {(int)size[0]->len - 1, (int)size[1]->len - 1}; /* forward order: the last filled first */
    g_array_set_size(G->pg, 2 * items);
    for (int j = 0; j < items; j++)
        for (int c = 0; c < 2; c++) {
            uint32_t *slot = &g_array_index(G->pg, uint32_t, 2 * j + c);
            *slot = NONE;
            int b = bidx[2 * j + c];
            if (b < 0)
                continue;
            for (; next[c] >= b; next[c]--)
                op[c][next[c]] = coll(G, S_DP, COLL_ALL_GATHER, g_array_index(size[c], double, next[c]), group[c],
                                      name[c], NONE);
            *slot = op[c][b];
        }
    for (int c = 0; c < 2; c++) {
        g_free(op[c]);
        g_array_free(size[c], TRUE);
    }
    g_free(bidx);
}

/* Before forward item j (0 the embedding, 1.. the groups, then the head):
 * its buckets' gathers, under --overlap-param-gather on the first forward. */
static void pg_wait(gen *G, int j, int mb)
{
    if (!G->w->overlap_param_gather || mb != 0 || (guint)(2 * j + 1) >= G->pg->len)
        return;
    wait_on(G, g_array_index(G->pg, uint32_t, 2 * j));
    wait_on(G, g_array_index(G->pg, uint32_t, 2 * j + 1));
}

/* ---- Transformer Engine's fp8 state (--dtype fp8) ---- */

/* The current chunk's linear layers (Transformer Engine's GEMMs: QKV,
 * projection, MLP-in, MLP-out; in an MoE layer two per local expert and
 * per shared expert instead of the MLP's) and their weights on this rank;
 * the routed experts' of them in *expert when not NULL. */
static double fp8_chunk_linears(const gen *G, double *weights, double *expert)
{
    const workload_spec *w = G->w;
    int first = G->cfirst[G->chunk], n = G->clen[G->chunk];
    double gemms = 0, ex = 0;
    *weights = 0;
    for (int l = first; l < first + n; l++) {
        double e, r, d = workload_layer_rank_params(w, l, &e, &r);
        *weights += d - r + e;
        bool moe = workload_layer_is_moe(&w->m, l);
        ex += moe ? 2.0 * w->m.experts / w->ep : 0;
        gemms += moe ? 2 + 2.0 * w->m.experts / w->ep + (w->m.shared_ffn ? 2 : 0) : 4;
    }
    if (expert)
        *expert = ex;
    return gemms;
}

/* The linear layers' weight tensors of all of this rank's chunks: the
 * dense ones (attention's, the MLP's or the shared expert's) in *dense, the
 * routed experts' in *expert. */
static void fp8_rank_tensors(gen *G, double *dense, double *expert)
{
    int keep = G->chunk;
    *dense = *expert = 0;
    for (G->chunk = 0; G->chunk < G->V; G->chunk++) {
        double weights, ex, gemms = fp8_chunk_linears(G, &weights, &ex);
        *dense += gemms - ex;
        *expert += ex;
    }
    G->chunk = keep;
}

/* The weights cast to fp8 with their columnwise copies, once a step
 * (Transformer Engine keeps them from the first microbatch on,
 * is_first_microbatch; under ZeRO-3 they are gathered again, so every
 * microbatch): fp8_cast_b's both copies, 4 bytes a weight on Hopper (3
 * with a per-tensor recipe on Blackwell, whose GEMMs read the one copy
 * both ways; 2 more under tensorwise, which reads each weight for its amax
 * first; mxfp8's scales counted, blockwise's 128 x 128 ones left out).
 * Under --fp8-param-gather a per-tensor recipe's weights are fp8 already:
 * their transposes only, 2 bytes a weight, nothing where no transpose is
 * needed. mxfp8's arrive in bf16 and are cast to both copies as Megatron-LM
 * copies them out of the gather's buffer into the weights (after the
 * gathers, or per bucket before its first forward with
 * --overlap-param-gather): the same bytes as the cast without it, at the
 * same place in a steady step (`fp8_param_cast`). */
static void fp8_weight_cast(gen *G, int mb)
{
    if (!fp8(G) || (mb > 0 && G->w->zero != 3))
        return;
    bool fpg = fpg_in_fp8(G);
    if (fpg && !fp8_tr(G))
        return;
    double weights;
    fp8_chunk_linears(G, &weights, NULL);
    cost c = {0};
    double per = fpg ? 2 : G->w->fp8_recipe == WL_FP8_BLOCKWISE ? 4 : fp8_cast_b(G, true);
    kern(&c, G, KC_ELEM, 0, per * weights);
    compute(G, fpg ? "fp8_weight_transpose" : G->w->fp8_param_gather ? "fp8_param_cast" : "fp8_weight_cast", &c, 1);
}

/* Delayed scaling's amax reduction when the chunk's forward leaves its
 * fp8_autocast (3 per GEMM: input, weight, output) and when the backward of
 * its first layer ends (2: the gradients), a float each, all-reduced (max)
 * over the stage's TP x CP x DP ranks (Megatron-LM's amax reduction group,
 * get_amax_reduction_group(with_context_parallel=True)) before the stream
 * goes on; a recomputed forward reduces none. */
static void fp8_amax(gen *G, bool bwd)
{
    if (!fp8(G) || G->w->fp8_recipe != WL_FP8_DELAYED)
        return;
    double weights, gemms = fp8_chunk_linears(G, &weights, NULL);
    coll(G, S_MAIN, COLL_ALL_REDUCE, 4 * gemms * (bwd ? 2 : 3), G->g_amax, bwd ? "fp8_amax_bwd" : "fp8_amax_fwd",
         NONE);
}

/* Layer group k's forward: a block of each kind it holds (group_blocks). */
static void group_fwd(gen *G, int k, const char *tag)
{
    blk b[4];
    int nb = group_blocks(G, k, b);
    for (int i = 0; i < nb; i++) {
        use_costs(G, b[i].swa);
        moe_load(G, b[i].layer);
        block_fwd(G, b[i].n, b[i].moe, tag);
    }
}

/* Forward of microbatch mb through the current chunk: receive its input
 * (posted on its own stream, the first layer waits for it), the layers,
 * send the output (after the last layer, on its own stream). In three
 * parts, which combined 1F1B (pair_step) runs around its own layers. */
static void forward_begin(gen *G, int mb)
{
    const workload_spec *w = G->w;
    bool first = chunk_first(G);
    int ng = group_count(G);
    if (w->overlap_param_gather && mb == 0)
        pg_plan(G);
    if (!first)
        wait_on(G, p2p(G, S_RECV_PREV, false, pp_prev(G), hop_bytes(G, chunk_vs(G) - 1),
                       pp_tag(G, mb, G->chunk, false), NONE));
    if (w->zero == 3)
        zero3_gather(G, 0, ng == 1, false);
    fp8_weight_cast(G, mb);
    if (first) {
        pg_wait(G, 0, mb);
        compute(G, "embedding_fwd", &G->c->emb_f, 1);
    }
}

/* After the layers: the LM head (MTP layers) or the output's send, after
 * the main stream's last op, or `out` (the layers' last op) where this
 * emits none on it; returns the send (NONE if none). */
static uint32_t forward_end(gen *G, int mb, uint32_t out)
{
    const workload_spec *w = G->w;
    bool lastst = chunk_last(G);
    int ng = group_count(G);
    uint32_t before = G->last;
    fp8_amax(G, false);
    if (lastst || chunk_mtp(G))
        pg_wait(G, ng + 1, mb);
    if (chunk_mtp(G))
        for (int j = 0; j < w->mtp; j++) {
            if (w->zero == 3)
                zero3_mtp(G, true, false);
            mtp_fwd(G, "");
        }
    if (lastst) {
        compute(G, "lm_head_fwd", &G->c->head_f, 1);
        for (int j = 0; j < w->mtp; j++) /* each MTP layer's output through the final norm, LM head and loss */
            compute(G, "mtp_lm_head_fwd", &G->c->head_f, 1);
        return NONE;
    }
    return p2p(G, S_SEND_NEXT, true, pp_next(G), hop_bytes(G, chunk_vs(G)), pp_tag(G, mb, chunk_after(G), false),
               out != NONE && G->last == before ? out : G->last);
}

static void forward(gen *G, int mb)
{
    const workload_spec *w = G->w;
    int ng = group_count(G);
    forward_begin(G, mb);
    for (int k = 0; k < ng; k++) {
        if (w->zero == 3 && k > 0)
            zero3_gather(G, k, k == ng - 1, false);
        pg_wait(G, k + 1, mb);
        group_fwd(G, k, "");
    }
    forward_end(G, mb, NONE);
}

/* Backward of microbatch mb through the current chunk; reduce: this is the
 * chunk's last backward of the step (or ZeRO-2), its gradients go to DP.
 * In three parts, as the forward. */
static void backward_begin(gen *G, int mb, bool reduce)
{
    const workload_spec *w = G->w;
    bool lastst = chunk_last(G);
    G->keep_buckets = mb == G->mbs - 1;
    if (!lastst)
        wait_on(G, p2p(G, S_RECV_NEXT, false, pp_next(G), hop_bytes(G, chunk_vs(G)), pp_tag(G, mb, chunk_after(G), true),
                       NONE));
    else {
        compute(G, "lm_head_bwd", &G->c->head_b, 1);
        for (int j = 0; j < w->mtp; j++)
            compute(G, "mtp_lm_head_bwd", &G->c->head_b, 1);
        if (reduce && !(w->m.tied && w->pp == 1))
            grads_ready(G, emb_params(G), 0, 0);
    }
    if (chunk_mtp(G)) {
        for (int j = w->mtp - 1; j >= 0; j--) {
            if (w->zero == 3)
                zero3_mtp(G, false, false);
            if (w->recompute) /* Megatron-LM checkpoints each MTP layer (its projection and layer) */
                mtp_fwd(G, "recompute_");
            mtp_bwd(G);
            if (w->zero == 3)
                zero3_mtp(G, false, true);
        }
        if (reduce && w->zero != 3) {
            double d, e, lin;
            mtp_params(G, &d, &e, NULL, &lin);
            grads_ready(G, d, lin, e);
            if (mtp_emb_copy(G)) /* the MTP layers' copy of the word embedding */
                grads_ready(G, emb_params(G), 0, 0);
        }
    }
}

/* Layer group k's gradients, its backward done: into the DP buckets (when
 * reduce), or ZeRO-3's reduce-scatter. */
static void group_grads(gen *G, int k, bool reduce)
{
    const workload_spec *w = G->w;
    int ng = group_count(G);
    double d, e, lin;
    group_params(G, k, &d, &e, NULL, &lin);
    if (w->zero == 3 && w->zero3_param_sync) {
        zero3_rs_params(G, k, k == ng - 1);
    } else if (w->zero == 3) {
        if (k == 0)
            d += emb_params(G);
        if (k == ng - 1 && !w->m.tied)
            d += emb_params(G);
        uint32_t i = coll(G, S_DP, COLL_REDUCE_SCATTER, (d + e) * w->grad_bytes, G->g_dpc, "zero3_grad_rs", G->last);
        if (i != NONE)
            g_array_append_val(G->dp_ops, i);
    } else if (reduce) {
        grads_ready(G, d, lin, e);
    }
}

/* After the layers: the embedding's backward or the input gradient's send,
 * after `out` (NONE: the main stream's last op); then (backward_flush) the
 * buckets flushed. */
static void backward_send(gen *G, int mb, bool reduce, uint32_t out)
{
    const workload_spec *w = G->w;
    bool first = chunk_first(G);
    fp8_amax(G, true);
    if (first) {
        compute(G, "embedding_bwd", &G->c->emb_b, 1);
        if (reduce && w->zero != 3)
            grads_ready(G, emb_params(G), 0, 0);
    } else {
        p2p(G, S_SEND_PREV, true, pp_prev(G), hop_bytes(G, chunk_vs(G) - 1), pp_tag(G, mb, G->chunk, true),
            out != NONE ? out : G->last);
    }
}

static void backward_flush(gen *G, bool reduce)
{
    if (reduce && G->w->zero != 3) {
        bucket_flush(G, false);
        bucket_flush(G, true);
    }
}

static void backward_end(gen *G, int mb, bool reduce, uint32_t out)
{
    backward_send(G, mb, reduce, out);
    backward_flush(G, reduce);
}

static void backward(gen *G, int mb, bool reduce)
{
    const workload_spec *w = G->w;
    int ng = group_count(G);
    backward_begin(G, mb, reduce);
    for (int k = ng - 1; k >= 0; k--) {
        blk b[4];
        int nb = group_blocks(G, k, b);
        if (w->zero == 3)
            zero3_gather(G, k, k == ng - 1, false);
        bool rerun = group_recomputed(G, k);
        if (rerun)
            group_fwd(G, k, "recompute_");
        if (w->zero == 3 && rerun && !w->fsdp) /* DeepSpeed freed them after the recompute */
            zero3_gather(G, k, k == ng - 1, true);
        for (int i = nb - 1; i >= 0; i--) { /* the blocks in reverse */
            use_costs(G, b[i].swa);
            moe_load(G, b[i].layer);
            recompute_sel(G, b[i].n, b[i].moe);
            block_bwd(G, b[i].n, b[i].moe);
        }
        group_grads(G, k, reduce);
    }
    backward_end(G, mb, reduce, NONE);
}

/* ---- combined 1F1B (--overlap-moe-expert-parallel-comm) ----
 *
 * Megatron-LM's combined 1F1B (docs/user-guide/features/moe_a2a_overlap.md;
 * megatron/core/models/gpt/fine_grained_callables.py) runs each steady-state
 * step's forward (microbatch i+1) and backward (microbatch i) together,
 * layer by layer: forward layer j beside backward layer L-1-j. Each layer is
 * four nodes: attn (attention, its TP traffic, the pre-MLP norm, the shared
 * expert, the router) and mlp (the routed experts) on the compute stream,
 * dispatch (the EP all-to-all, expert TP's gather) and combine (expert TP's
 * reduce-scatter, the EP all-to-all) on a communication stream; a dense
 * layer's attention and MLP are its attn and mlp nodes. A pair is issued
 *   F.attn, B.combine, F.dispatch, B.mlp, B.dispatch, F.mlp, F.combine, B.attn
 * each node waiting (a CUDA event) for the node before it of its own
 * microbatch, so one microbatch's all-to-alls run beside the other's
 * compute. Here the compute nodes go on the main stream, the all-to-alls on
 * S_A2A (flex's network half on S_A2A_NET), and a `chain` carries each
 * microbatch's dependencies from node to node. */

typedef struct {
    uint32_t dep[16]; /* what the microbatch's next node waits for (its last communication node's ops) */
    int n;
    uint32_t lastc;  /* its last compute node's last op, NONE before the first */
} chain;

static void chain_add(chain *ch, uint32_t i)
{
    if (i != NONE && ch->n < (int)G_N_ELEMENTS(ch->dep))
        ch->dep[ch->n++] = i;
}

/* The main stream's next op waits for the chain's pending ops. */
static void chain_wait(gen *G, chain *ch)
{
    for (int i = 0; i < ch->n; i++)
        wait_on(G, ch->dep[i]);
    ch->n = 0;
}

/* Moves what the main stream's next op waits for into the chain, as much as it holds (the rest stays for
 * the main stream's next op: a stricter order, never a dependency lost; a communication node adds at
 * most 4). */
static void chain_take(gen *G, chain *ch)
{
    guint k = 0;
    for (; k < G->wait->len && ch->n < (int)G_N_ELEMENTS(ch->dep); k++)
        chain_add(ch, g_array_index(G->wait, uint32_t, k));
    g_array_remove_range(G->wait, 0, k);
}

/* A collective of a communication node on `stream` after the chain's last
 * compute op and pending ops (`in`); its id joins `out`. */
static uint32_t node_coll(gen *G, int stream, coll_kind k, double bytes, int grp, const char *name, const chain *in,
                          chain *out, int sms)
{
    uint32_t i = sms ? coll_sms(G, stream, k, bytes, grp, name, in->lastc, sms)
                     : coll(G, stream, k, bytes, grp, name, in->lastc);
    if (i == NONE)
        return i;
    for (int d = 0; d < in->n; d++)
        trace_op_dep(G->t, G->r, i, in->dep[d]);
    chain_add(out, i);
    return i;
}

/* The EP exchange of a communication node (ep_exchange's, on S_A2A and S_A2A_NET). */
static void node_ep(gen *G, double f, double a2a, const char *name, const char *nvl, const char *net, const chain *in,
                    chain *out, int dir)
{
    const workload_spec *w = G->w;
    if (w->moe_dispatcher != WL_MOE_FLEX) {
        a2a_weigh(G, node_coll(G, S_A2A, COLL_ALLTOALL, a2a, G->g_ep, name, in, out, 0), dir);
        return;
    }
    double bnet, bnvl;
    int sms = flex_parts(G, f, &bnet, &bnvl);
    node_coll(G, S_A2A_NET, COLL_ALLTOALL, bnet, G->g_epn, net, in, out, sms);
    node_coll(G, S_A2A, COLL_ALLTOALL, bnvl, G->g_epl, nvl, in, out, sms);
}

/* The four communication nodes: the forward's dispatch and combine, the backward's combine and dispatch
 * (in that order through the layer). */
enum { N_DISPATCH, N_COMBINE, N_COMBINE_BWD, N_DISPATCH_BWD };
static void comm_node(gen *G, const blk *b, chain *ch, int which)
{
    const workload_spec *w = G->w;
    moe_load(G, b->layer);
    double f = b->n, a2a = moe_a2a_bytes(G, f), A = G->act * f, e = a2a * w->etp * G->recv;
    chain in = *ch;
    ch->n = 0;
    switch (which) {
    case N_DISPATCH:
        node_ep(G, f, a2a, "ep_dispatch", "ep_dispatch_nvl", "ep_dispatch_net", &in, ch, 1);
        node_coll(G, S_A2A, COLL_ALL_GATHER, e, G->g_etp, "etp_ag", &in, ch, 0);
        break;
    case N_COMBINE:
        node_coll(G, S_A2A, COLL_REDUCE_SCATTER, e, G->g_etp, "etp_rs", &in, ch, 0);
        node_ep(G, f, a2a, "ep_combine", "ep_combine_nvl", "ep_combine_net", &in, ch, -1);
        if (!w->sp)
            node_coll(G, S_A2A, COLL_ALL_GATHER, A, G->g_tp, "tp_ag_tokens", &in, ch, 0);
        break;
    case N_COMBINE_BWD:
        if (!w->sp)
            node_coll(G, S_A2A, COLL_REDUCE_SCATTER, A, G->g_tp, "tp_rs_tokens", &in, ch, 0);
        node_ep(G, f, a2a, "ep_combine_bwd", "ep_combine_bwd_nvl", "ep_combine_bwd_net", &in, ch, 1);
        node_coll(G, S_A2A, COLL_ALL_GATHER, e, G->g_etp, "etp_ag_bwd", &in, ch, 0);
        break;
    default:
        node_coll(G, S_A2A, COLL_REDUCE_SCATTER, e, G->g_etp, "etp_rs_bwd", &in, ch, 0);
        node_ep(G, f, a2a, "ep_dispatch_bwd", "ep_dispatch_bwd_nvl", "ep_dispatch_bwd_net", &in, ch, -1);
        break;
    }
}

/* The forward's attn node (the attention block; an MoE block's shared expert and router with it) and
 * mlp node (the routed experts; a dense block's MLP). */
static void fwd_attn_node(gen *G, const blk *b, chain *ch, const char *tag)
{
    char n[64];
    use_costs(G, b->swa);
    chain_wait(G, ch);
    attn_block_fwd(G, b->n, tag);
    if (b->moe) {
        shared_fwd(G, b->n, tag);
        g_snprintf(n, sizeof n, "%smoe_router_fwd", tag);
        compute(G, n, &G->c->moe_pre_f, b->n);
    }
    ch->lastc = G->last;
}

static void fwd_mlp_node(gen *G, const blk *b, chain *ch, const char *tag)
{
    const kpart k[] = {{.c = &G->c->moe_perm.f}, {.c = &G->c->moe_fc1.f}, {.c = &G->c->moe_act.f},
                       {.c = &G->c->moe_fc2.f}};
    char n[64];
    moe_load(G, b->layer);
    chain_wait(G, ch);
    g_snprintf(n, sizeof n, "%smoe_experts_fwd", tag);
    if (b->moe)
        kernels(G, n, k, G_N_ELEMENTS(k), b->n * G->load);
    else
        dense_mlp_fwd(G, b->n, tag);
    ch->lastc = G->last;
}

/* Full recomputation's rerun of the backward's layer group k through the forward's nodes (Megatron-LM
 * replays the segment at the start of the pair, before the backward's combine); the backward waits for
 * it. b: the group's last block (in the chunk's array of blocks). */
static void recompute_nodes(gen *G, const blk *b, chain *B)
{
    chain R = {.lastc = NONE};
    const blk *x = b;
    while (!x->gfirst)
        x--;
    for (; x <= b; x++) {
        fwd_attn_node(G, x, &R, "recompute_");
        if (x->moe)
            comm_node(G, x, &R, N_DISPATCH);
        fwd_mlp_node(G, x, &R, "recompute_");
        if (x->moe)
            comm_node(G, x, &R, N_COMBINE);
    }
    for (int i = 0; i < R.n; i++)
        chain_add(B, R.dep[i]);
    chain_add(B, R.lastc);
}

/* The backward's mlp node (selective recomputation's reruns first; the experts' or the dense MLP's
 * backward) and attn node (the router's, the shared expert's and the attention's backward). */
static void bwd_mlp_node(gen *G, const blk *b, chain *ch)
{
    use_costs(G, b->swa);
    moe_load(G, b->layer);
    recompute_sel(G, b->n, b->moe);
    chain_wait(G, ch);
    if (!b->moe) {
        dense_mlp_bwd(G, b->n);
    } else { /* the experts' weight gradients through wgrad (held under --delay-wgrad-compute) */
        const kpart k[] = {{.c = &G->c->moe_fc2.dg}, {.c = &G->c->moe_fc2.wg, .wg = true}, {.c = &G->c->moe_act.b},
                           {.c = &G->c->moe_fc1.dg}, {.c = &G->c->moe_fc1.wg, .wg = true}, {.c = &G->c->moe_perm.b}};
        kernels(G, "moe_experts_bwd", k, G_N_ELEMENTS(k), b->n * G->load);
    }
    ch->lastc = G->last;
}

static void bwd_attn_node(gen *G, const blk *b, chain *ch)
{
    use_costs(G, b->swa);
    chain_wait(G, ch);
    if (b->moe) {
        compute(G, "moe_router_bwd", &G->c->moe_pre_b, b->n);
        shared_bwd(G, b->n);
    }
    attn_block_bwd(G, b->n);
    ch->lastc = G->last;
}

/* The current chunk's blocks in forward order (group_blocks of each group); returns their count. */
static int chunk_blocks(const gen *G, blk *out)
{
    int nb = 0;
    for (int k = 0; k < group_count(G); k++)
        nb += group_blocks(G, k, out + nb);
    return nb;
}

/* A combined step: the forward of microbatch fmb through chunk fc beside
 * the backward of bmb through chunk bc (reduce as backward's), each
 * microbatch's begin and end as forward's and backward's (their pipeline
 * transfers, embedding, LM head), the layers paired, forward j with
 * backward n-1-j; where one chunk has more blocks, its extra ones run alone
 * through the same nodes. Full recomputation reruns a backward layer group's
 * forward through the nodes at the start of the pair that reaches it
 * (recompute_nodes). */
static void pair_step(gen *G, int fmb, int fc, int bmb, int bc, bool reduce)
{
    chain F = {.lastc = NONE}, B = {.lastc = NONE};
    uint32_t before;
    G->chunk = fc;
    before = G->last;
    forward_begin(G, fmb);
    chain_take(G, &F); /* (with what the step before left) */
    if (G->last != before)
        F.lastc = G->last;
    G->chunk = bc;
    before = G->last;
    backward_begin(G, bmb, reduce);
    chain_take(G, &B);
    if (G->last != before)
        B.lastc = G->last;
    G->chunk = fc;
    int ngf = group_count(G);
    blk *fb = g_new(blk, 4 * ngf);
    int nf = chunk_blocks(G, fb);
    G->chunk = bc;
    blk *bb = g_new(blk, 4 * group_count(G));
    int nb = chunk_blocks(G, bb);
    G->kernels = true;
    G->delay = G->w->delay_wgrad;
    bool late = false; /* --delay-wgrad-compute: the backward's last attention weight gradients wait for its end */
    for (int i = 0; i < MAX(nf, nb); i++) {
        const blk *f = i < nf ? &fb[i] : NULL, *b = i < nb ? &bb[nb - 1 - i] : NULL;
        G->chunk = fc;
        G->chunk = bc;
        if (b && b->glast && group_recomputed(G, b->k))
            recompute_nodes(G, b, &B);
        G->chunk = fc;
        if (f) {
            if (f->gfirst)
                pg_wait(G, f->k + 1, fmb);
            fwd_attn_node(G, f, &F, "");
        }
        G->chunk = bc;
        if (b && b->moe)
            comm_node(G, b, &B, N_COMBINE_BWD);
        G->chunk = fc;
        if (f && f->moe)
            comm_node(G, f, &F, N_DISPATCH);
        G->chunk = bc;
        if (b) {
            bwd_mlp_node(G, b, &B);
            if (b->moe)
                comm_node(G, b, &B, N_DISPATCH_BWD);
            dw_flush(G); /* the MLP's held weight gradients, beside the dispatch's backward */
        }
        G->chunk = fc;
        if (f) {
            fwd_mlp_node(G, f, &F, "");
            if (f->moe)
                comm_node(G, f, &F, N_COMBINE);
        }
        G->chunk = bc;
        if (b) {
            bwd_attn_node(G, b, &B);
            late = G->delay && b == &bb[0];
            if (!late)
                dw_flush(G);
            if (b->gfirst && !late)
                group_grads(G, b->k, reduce);
        }
    }
    G->kernels = false;
    g_free(fb);
    g_free(bb);
    /* the forward's end after its last node (its output's send beside the backward's last attn node) */
    G->chunk = fc;
    chain last = F;
    chain_wait(G, &F);
    uint32_t send = forward_end(G, fmb, last.lastc);
    for (int d = 0; send != NONE && d < last.n; d++)
        trace_op_dep(G->t, G->r, send, last.dep[d]);
    g_array_set_size(G->wait, 0); /* not left for the backward's ops */
    G->chunk = bc;
    backward_send(G, bmb, reduce, B.lastc);
    if (late) { /* beside the input gradient's send */
        dw_flush(G);
        group_grads(G, 0, reduce);
    }
    G->delay = false;
    backward_flush(G, reduce);
}

/* ---- the step ---- */

static int group_of(gen *G, const char *name, int *ranks, int n)
{
    return n > 1 ? trace_group_add(G->t, name, ranks, n) : -1;
}

static void rank_groups(gen *G, int *buf)
{
    const workload_spec *w = G->w;
    int n = 0;
    for (int i = 0; i < w->tp; i++)
        buf[n++] = rank_of(w, i, G->cp_i, G->dp_i, G->pp_i);
    G->g_tp = group_of(G, NULL, buf, n);
    n = 0;
    for (int i = 0; i < w->cp; i++)
        buf[n++] = rank_of(w, G->tp_i, i, G->dp_i, G->pp_i);
    G->g_cp = group_of(G, NULL, buf, n);
    G->g_cpa = -1;
    if (w->cp_comm == WL_CP_A2A_P2P && w->cp > 1) { /* adjacent CP ranks (Megatron-LM's first level) */
        n = 0;
        for (int i = G->cp_i / w->cp_a2a * w->cp_a2a; i < (G->cp_i / w->cp_a2a + 1) * w->cp_a2a; i++)
            buf[n++] = rank_of(w, G->tp_i, i, G->dp_i, G->pp_i);
        G->g_cpa = group_of(G, NULL, buf, n);
    }
    /* Experts are laid out as Megatron-LM's expert rank generator does (megatron/core/
     * parallel_state.py, expert_decoder_rank_generator: etp, ep, edp, pp with cp folded in): within
     * a PP stage, whose ranks are stage x tp*cp*dp + x, x = etp_i + etp (ep_i + ep edp_i). An ETP
     * group is etp consecutive x, an EP group the ep ranks etp apart at one etp_i and edp_i (ep
     * consecutive x at etp 1: inside a server when tp x cp x dp allows), and the ranks with the same
     * x mod etp*ep hold the same expert shards (expert data parallel, tp*cp*dp/(ep*etp) of them).
     * Until 2026-12-02 an EP group was ep DP ranks at one TP rank, tp apart: Mixtral at TP 8, EP 8
     * on 64 GPUs ran its all-to-alls across 8 servers. */
    int stage = w->tp * w->cp * w->dp, x = rank_of(w, G->tp_i, G->cp_i, G->dp_i, 0), eg = w->ep * w->etp;
    n = 0;
    for (int i = 0; i < w->ep; i++)
        buf[n++] = G->pp_i * stage + x / eg * eg + x % w->etp + i * w->etp;
    G->g_ep = group_of(G, NULL, buf, n);
    G->ep_pos = x % eg / w->etp;
    G->g_epl = G->g_epn = -1;
    if (w->moe_dispatcher == WL_MOE_FLEX && n > 1) { /* its EP ranks in this rank's domain, at its place in each */
        int D = w->domain_gpus, nl = 0, nn = 0, *l = buf + n, *e = l + n;
        for (int i = 0; i < n; i++) {
            if (buf[i] / D == G->r / D)
                l[nl++] = buf[i];
            if (buf[i] % D == G->r % D)
                e[nn++] = buf[i];
        }
        G->g_epl = group_of(G, NULL, l, nl);
        G->g_epn = group_of(G, NULL, e, nn);
    }
    n = 0;
    for (int i = x / w->etp * w->etp; i < (x / w->etp + 1) * w->etp; i++)
        buf[n++] = G->pp_i * stage + i;
    G->g_etp = group_of(G, NULL, buf, n);
    n = 0;
    for (int d = 0; d < w->dp; d++)
        for (int c = 0; c < w->cp; c++)
            buf[n++] = rank_of(w, G->tp_i, c, d, G->pp_i);
    G->g_dpc = group_of(G, NULL, buf, n);
    n = 0;
    for (int i = x % eg; i < stage; i += eg)
        buf[n++] = G->pp_i * stage + i;
    G->g_edp = w->m.experts ? group_of(G, NULL, buf, n) : -1;
    n = 0;
    for (int i = 0; i < stage; i++)
        buf[n++] = G->pp_i * stage + i;
    G->g_amax = fp8(G) ? group_of(G, NULL, buf, n) : -1;
    G->g_emb = -1;
    /* the word embedding's copies: the first stage's, a tied LM head's on the last, the MTP layers'
     * on theirs (mtp_emb_copy) */
    if (w->pp > 1) {
        int st[3], ns = 0;
        st[ns++] = 0;
        if (mtp_emb_copy(G) && G->mtp_stage != w->pp - 1)
            st[ns++] = G->mtp_stage;
        if (w->m.tied || (mtp_emb_copy(G) && G->mtp_stage == w->pp - 1))
            st[ns++] = w->pp - 1;
        bool in = false;
        for (int i = 0; i < ns; i++) {
            in |= st[i] == G->pp_i;
            st[i] = rank_of(w, G->tp_i, G->cp_i, G->dp_i, st[i]);
        }
        if (in && ns > 1)
            G->g_emb = group_of(G, NULL, st, ns);
    }
}

/* Optimizer step and what follows it (tied-embedding sync before it,
 * ZeRO-1/2 parameter all-gather after it). */
static void finish(gen *G)
{
    const workload_spec *w = G->w;
    if (G->g_emb >= 0) {
        uint32_t i = coll(G, S_DP, COLL_ALL_REDUCE, emb_params(G) * w->grad_bytes, G->g_emb, "embedding_grad_ar",
                          G->last);
        g_array_append_val(G->dp_ops, i);
    }
    double dense = 0, expert = 0, replicated = 0, linear = 0; /* linear: the dense linear layers' weights */
    for (G->chunk = 0; G->chunk < G->V; G->chunk++)
        for (int k = 0; k < group_count(G); k++) {
            double d, e, r, l;
            group_params(G, k, &d, &e, &r, &l);
            dense += d;
            expert += e;
            replicated += r;
            linear += l;
        }
    double md, me, mr, ml;
    mtp_params(G, &md, &me, &mr, &ml);
    dense += md, expert += me, replicated += mr, linear += ml;
    /* With sequence parallelism each TP rank's norms (and router, row-parallel biases) saw its own
     * tokens: Megatron-LM's finalize_model_grads all-reduces their gradients over TP in one call
     * (_allreduce_layernorm_grads, after the data-parallel reduction) */
    if (w->sp && G->g_tp >= 0) {
        uint32_t i = coll(G, S_DP, COLL_ALL_REDUCE, replicated * w->grad_bytes, G->g_tp, "tp_grad_ar_sp", G->last);
        g_array_append_val(G->dp_ops, i);
    }
    dense += workload_emb_matrices(w, G->pp_i == 0, G->pp_i == w->pp - 1, G->pp_i == G->mtp_stage) * emb_params(G);
    const trace_group *gd = G->g_dpc >= 0 ? g_ptr_array_index(G->t->groups, G->g_dpc) : NULL;
    const trace_group *ge = G->g_edp >= 0 ? g_ptr_array_index(G->t->groups, G->g_edp) : NULL;
    if (w->zero >= 1) {
        dense /= gd ? gd->size : 1;
        linear /= gd ? gd->size : 1;
        expert /= ge ? ge->size : 1;
    }
    for (guint k = 0; k < G->dp_ops->len; k++)
        wait_on(G, g_array_index(G->dp_ops, uint32_t, k));
    cost c = {0};
    /* under --fp8-param-gather (per-tensor) the linear layers' updated weights are written in fp8, a
     * byte less; mxfp8's in bf16, as without it */
    kern(&c, G, KC_ELEM, 0, (dense + expert) * ADAM_BYTES_PER_PARAM - (fpg_in_fp8(G) ? linear + expert : 0));
    /* tensorwise first reads each fp32 master shard of them for its amax (tex.compute_amax) */
    if (w->fp8_param_gather && w->fp8_recipe == WL_FP8_TENSORWISE)
        kern(&c, G, KC_ELEM, 0, 4 * (linear + expert));
    compute(G, "optimizer_adam", &c, 1);
    /* --fp8-param-gather: Transformer Engine's cast of the updated master weights to fp8 all-reduces
     * their amaxes (max), one float a weight tensor packed in one call per buffer, over the buffer's
     * data-parallel group before the weights are gathered (cast_master_weights_to_fp8_delayed_scaling,
     * _current_scaling) */
    if (fpg_in_fp8(G)) { /* mxfp8 has no amax: a scale per 32 elements, computed in the cast */
        double td, te;
        fp8_rank_tensors(G, &td, &te);
        if (td > 0)
            coll(G, S_MAIN, COLL_ALL_REDUCE, 4 * td, G->g_dpc, "fp8_amax_params", NONE);
        if (te > 0)
            coll(G, S_MAIN, COLL_ALL_REDUCE, 4 * te, G->g_edp, "fp8_amax_params_expert", NONE);
    }
    /* the distributed optimizer gathers the updated bf16 weights back, bucket by bucket: the dense
     * ones over DP x CP, the experts' over expert DP (until 2026-12-02 the experts' were left out) */
    if ((w->zero == 1 || w->zero == 2) && !w->overlap_param_gather) { /* else the next step's, pg_plan */
        for (guint k = 0; k < G->buckets->len; k++)
            coll(G, S_DP, COLL_ALL_GATHER, g_array_index(G->buckets, double, k), G->g_dpc, "zero_param_ag",
                 G->last);
        for (guint k = 0; k < G->ebuckets->len; k++)
            coll(G, S_DP, COLL_ALL_GATHER, g_array_index(G->ebuckets, double, k), G->g_edp,
                 "zero_param_ag_expert", G->last);
    }
}

/* 1F1B (PipeDream-Flush): pp-1-stage warm-up forwards, then one forward
 * and one backward alternately, then the remaining backwards. */
static void rank_step(gen *G)
{
    const workload_spec *w = G->w;
    int warm = w->pp - G->pp_i - 1;
    if (warm > G->mbs)
        warm = G->mbs;
    bool every = w->zero == 2;
    if (w->moe_ep_overlap && w->pp == 1 && G->mbs > 1) { /* combined 1F1B: F0, F1+B0, ..., B(m-1) */
        forward(G, 0);
        for (int j = 1; j < G->mbs; j++)
            pair_step(G, j, 0, j - 1, 0, every);
        backward(G, G->mbs - 1, true);
        finish(G);
        return;
    }
    for (int j = 0; j < warm; j++)
        forward(G, j);
    for (int j = 0; j < G->mbs - warm; j++) {
        forward(G, warm + j);
        backward(G, j, every || j == G->mbs - 1);
    }
    for (int j = G->mbs - warm; j < G->mbs; j++)
        backward(G, j, every || j == G->mbs - 1);
    finish(G);
}

/* Megatron's get_model_chunk_id and microbatch id of virtual microbatch k
 * (groups of pp microbatches run through chunk 0, 1, ..., V-1 in turn;
 * backward visits the chunks in reverse). Sets G->chunk, returns the
 * microbatch. */
static int virtual_mb(gen *G, int k, bool fwd)
{
    int p = G->w->pp, in_group = k % (p * G->V);
    G->chunk = fwd ? in_group / p : G->V - 1 - in_group / p;
    return k / (p * G->V) * p + k % p;
}

/* Interleaved 1F1B (Megatron-LM forward_backward_pipelining_with_interleaving,
 * megatron/core/pipeline_parallel/schedules.py): m*V virtual microbatches;
 * warm-up 2(pp - rank - 1) + (V-1) pp forwards (all m*V when that is not
 * less), then one forward and one backward alternately, then the remaining
 * backwards. A chunk reduces its gradients after its backward of the last
 * microbatch (ZeRO-2: after every one). */
static void rank_step_interleaved(gen *G)
{
    const workload_spec *w = G->w;
    /* combined 1F1B (--overlap-moe-expert-parallel-comm) warms up one more, so that a step's forward and
     * backward are independent even on the last stage, and runs them paired (pair_step) */
    int total = G->mbs * G->V, warm = 2 * (w->pp - G->pp_i - 1) + (G->V - 1) * w->pp + (w->moe_ep_overlap ? 1 : 0);
    if (warm > total)
        warm = total;
    bool every = w->zero == 2;
    for (int k = 0; k < warm; k++)
        forward(G, virtual_mb(G, k, true));
    for (int k = 0; k < total - warm; k++) {
        int fmb = virtual_mb(G, warm + k, true), fc = G->chunk;
        int mb = virtual_mb(G, k, false);
        if (w->moe_ep_overlap) {
            pair_step(G, fmb, fc, mb, G->chunk, every || mb == G->mbs - 1);
            continue;
        }
        G->chunk = fc;
        forward(G, fmb);
        mb = virtual_mb(G, k, false);
        backward(G, mb, every || mb == G->mbs - 1);
    }
    for (int k = total - warm; k < total; k++) {
        int mb = virtual_mb(G, k, false);
        backward(G, mb, every || mb == G->mbs - 1);
    }
    finish(G);
}

/* flex: how the EP groups sit on the NVLink domains (the same for every
 * group: whole domains, or inside one) and the chances a token reaches a
 * given EP rank and domain; false with *err where they do not, or where
 * the router groups do not nest with a rank's or a domain's experts. */
static bool flex_plan(gen *G, GError **err)
{
    const workload_spec *w = G->w;
    int D = w->domain_gpus, ep = w->ep, stage = w->tp * w->cp * w->dp;
    if (D <= 0) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE,
                    "--moe-token-dispatcher-type flex needs the system's NVLink domain (give --topo)");
        return false;
    }
    if (!((ep <= D && D % ep == 0) || (ep % D == 0 && (w->pp == 1 || stage % D == 0)))) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_LAYOUT,
                    "--moe-token-dispatcher-type flex: each EP group (%d ranks) must fill whole NVLink domains of %d "
                    "GPUs or sit inside one, as DeepEP pairs the ranks at one place in each domain (an ep dividing "
                    "%d, or a multiple of it)",
                    ep, D, D);
        return false;
    }
    G->ep_dom = MIN(ep, D);
    G->ep_ndom = ep / G->ep_dom;
    int per = w->m.experts / ep;
    G->p_gpu = workload_moe_hit(w, per);
    G->p_dom = workload_moe_hit(w, per * G->ep_dom);
    if (G->p_gpu < 0 || G->p_dom < 0) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE,
                    "--moe-router-num-groups %d: a group of %d experts and an EP rank's %d or a domain's %d "
                    "experts must nest (one a whole number of the other)",
                    w->router_groups, w->m.experts / MAX(w->router_groups, 1), per, per * G->ep_dom);
        return false;
    }
    return true;
}

trace *workload_generate(const workload_spec *w, const gpu_model *g, GError **err)
{
    if (!workload_spec_check(w, err))
        return NULL;
    if (w->dtype == COMPUTE_FP8 && !(g->spec.peak_flops[COMPUTE_FP8] > 0)) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE,
                    "--dtype fp8: the %s has no fp8 tensor cores (Transformer Engine's fp8 needs compute capability "
                    "8.9 or later); bf16 or fp16 on it",
                    g->spec.name);
        return NULL;
    }
    const char *why = w->dtype == COMPUTE_FP8 ? workload_fp8_recipe_unsupported(w->fp8_recipe, g->spec.sm_cc) : NULL;
    if (why) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, "--fp8-recipe %s on the %s: %s",
                    workload_fp8_recipe_name(w->fp8_recipe), g->spec.name, why);
        return NULL;
    }
    gen G = {.w = w, .g = g, .f = w->layer_fuse, .V = w->vpp > 1 ? w->vpp : 1,
             .mbs = w->global_batch / (w->micro_batch * w->dp), .mtp_stage = workload_mtp_stage(w), .mtp_vs = -1};
    if (G.mtp_stage >= 0 && G.mtp_stage != w->pp - 1)
        G.mtp_vs = (G.V - 1) * w->pp + G.mtp_stage;
    if (w->moe_dispatcher == WL_MOE_FLEX && !flex_plan(&G, err))
        return NULL;
    G.T = (double)w->micro_batch * w->seq / w->cp;
    G.act = G.T * w->m.hidden * 2;
    workload_attn_shape(&w->m, &G.at);
    G.act_in = G.T * G.at.in * 2;
    G.load = G.recv = 1;
    costs_init(&G, &G.cs[0], false);
    if (w->m.window > 0 || w->m.chunk > 0)
        costs_init(&G, &G.cs[1], true);
    G.c = &G.cs[0];
    g_autofree char *src = g_strdup_printf("workload:%s", w->m.name ? w->m.name : "custom");
    G.t = trace_new(w->gpus, src);
    if (w->moe_imbalance > 1 && w->ep > 1 && w->m.experts) { /* the dispatch's weights for each busiest place */
        double *wt = g_new(double, w->ep);
        G.a2a_roots = g_new(int, w->ep);
        for (int h = 0; h < w->ep; h++) {
            for (int j = 0; j < w->ep; j++)
                wt[j] = workload_moe_rank_load(w, j == h);
            G.a2a_roots[h] = trace_a2a_weights_add(G.t, wt, w->ep);
        }
        g_free(wt);
    }
    G.t->steps = 1;
    G.wait = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    G.dp_ops = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    G.buckets = g_array_new(FALSE, FALSE, sizeof(double));
    G.ebuckets = g_array_new(FALSE, FALSE, sizeof(double));
    G.pg = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    G.dwq = g_array_new(FALSE, FALSE, sizeof(held_k));
    int *buf = g_new(int, 3 * w->gpus);
    G.clen = g_new(int, G.V);
    G.cfirst = g_new(int, G.V);
    for (int r = 0; r < w->gpus; r++) {
        G.r = r;
        G.tp_i = r % w->tp;
        G.cp_i = r / w->tp % w->cp;
        G.dp_i = r / (w->tp * w->cp) % w->dp;
        G.pp_i = r / (w->tp * w->cp * w->dp);
        G.pend = G.pend_e = G.pend_params = G.pend_e_params = 0;
        G.prev_first = NONE;
        G.last = G.sync_prev = G.rs_last = NONE;
        G.chunk = 0;
        for (int c = 0; c < G.V; c++) /* the rank's chunks, looked up once (per group, they were per call) */
            G.clen[c] = workload_chunk_layers(w, G.pp_i, c, &G.cfirst[c]);
        g_array_set_size(G.wait, 0);
        g_array_set_size(G.dp_ops, 0);
        g_array_set_size(G.buckets, 0);
        g_array_set_size(G.ebuckets, 0);
        rank_groups(&G, buf);
        if (G.V > 1)
            rank_step_interleaved(&G);
        else
            rank_step(&G);
    }
    g_free(buf);
    g_free(G.clen);
    g_free(G.a2a_roots);
    g_free(G.cfirst);
    g_array_free(G.wait, TRUE);
    g_array_free(G.dp_ops, TRUE);
    g_array_free(G.buckets, TRUE);
    g_array_free(G.ebuckets, TRUE);
    g_array_free(G.pg, TRUE);
    g_array_free(G.dwq, TRUE);
    if (!trace_validate(G.t, err)) {
        trace_free(G.t);
        return NULL;
    }
    return G.t;
}

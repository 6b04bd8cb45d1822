/* traces/workload.h - the workload generator: one training step of a
 * transformer as Megatron-LM / DeepSpeed / PyTorch FSDP execute it, as a
 * trace (per rank: compute kernels timed by models/compute, TP/CP/EP/DP
 * collectives, PP send/recv under 1F1B or Megatron's interleaved 1F1B) that
 * models/replay.c runs.
 *
 * Ranks are laid out as Megatron does: TP innermost, then CP, then DP, PP
 * outermost; EP groups are consecutive ranks of a stage (Megatron's expert
 * layout with expert-tensor-parallel 1). docs/workloads.md has the
 * FLOP and byte formulas, the schedule and the presets' sources.
 */
#ifndef TRACES_WORKLOAD_H
#define TRACES_WORKLOAD_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "models/compute.h"
#include "traces/trace.h"

typedef struct {
    const char *name;     /* preset name ("llama2-7b"), or "custom" */
    int layers, hidden, heads, kv_heads, ffn, vocab;
    bool gated;           /* SwiGLU MLP (3 matrices) instead of GELU (2) */
    bool tied;            /* input embedding and LM head share weights */
    int experts, topk;    /* MoE: routed experts and experts per token (0 = dense) */
    int expert_ffn;       /* FFN width of one routed expert */
    int shared_ffn;       /* FFN width of the shared expert(s), 0 = none */
    int dense_layers;     /* first layers that stay dense in an MoE model */
    const char *source;   /* where the shape is published */
    int router_groups, router_group_topk; /* MoE: the model's group-limited routing (DeepSeek-V3's
                                   * node-limited: 4 of 8 groups), the spec's default; 0 = none */
    /* multi-latent attention (DeepSeek-V2/V3's MLA, Megatron-LM's --multi-latent-attention), when
     * kv_lora > 0: keys and values come up from a kv_lora-wide latent, queries from a q_lora-wide one
     * (0: straight from the hidden state); per head qk_dim + rope_dim wide queries and keys (the
     * second part carries RoPE; the key's is one per token, shared by the heads) and v_dim wide
     * values. 0 everywhere: multi-head / grouped-query attention of hidden/heads per head. */
    int q_lora, kv_lora, qk_dim, rope_dim, v_dim;
    int moe_freq;         /* MoE: every moe_freq-th layer is an MoE layer (Megatron-LM's --moe-layer-freq:
                           * layer i when i % moe_freq == 0), past the dense_layers; 0 or 1: every one */
    const char *moe_pattern; /* MoE: each layer's kind, '1' MoE, '0' dense, one a layer (Megatron-LM's
                           * --moe-layer-freq as a list, workload_moe_pattern_parse; an interned
                           * string), instead of dense_layers and moe_freq; NULL: those */
    int moe_pattern_len;  /* its length (layers it describes) */
    int head_dim;         /* the width of one attention head's query, key and value (Megatron-LM's
                           * --kv-channels; Qwen3-235B-A22B: 128 at hidden 4,096 and 64 heads);
                           * 0: hidden / heads */
    /* sliding-window attention (Megatron-LM's --window-size W,0; Mistral 7B's 4,096, gpt-oss's 128): a
     * query of a windowed layer sees itself and the `window` tokens before it; 0: every layer attends
     * to the whole causal prefix */
    int window;
    int chunk;            /* chunked attention (Llama 4's attention_chunk_size, conveyor's
                           * --attention-chunk-size): a query of such a layer sees the tokens of its own
                           * chunk of `chunk` up to itself; 0 none (not with a window) */
    int window_freq;      /* which layers are windowed or chunked (Megatron-LM's --window-attn-skip-freq N):
                           * all but layers N, 2N, ... counted from 1, which attend fully; 0: all */
    const char *window_pattern; /* ... or each layer's, '1' windowed, '0' full (the flag's list form,
                           * workload_layer_pattern_parse; an interned string); NULL: window_freq */
    int window_pattern_len; /* its length (layers it describes) */
} workload_model;

/* The attention's widths (elements per token, all heads; workload_attn_shape):
 * what its kernel reads and writes, and the weights around it. */
typedef struct {
    double q, k, v, o; /* queries, keys, values the kernel reads; its output, the projection's input */
    double col;        /* TP-split weights before it (QKV; MLA's up projections) */
    double in;         /* the width those GEMMs read, all-gathered over TP under SP (h; MLA's latents) */
    double down;       /* MLA: its down projections' output width (latents and the RoPE key), 0 else */
    double dup;        /* weights every TP rank holds whole (MLA's down projections and latent norms) */
} workload_attn;

/* Multi-head / grouped-query attention: q = o = h, k = v = h x kv_heads /
 * heads, col = h (h + 2 kv), in = h. MLA (Megatron-LM's MLASelfAttention):
 * q = k = heads (qk_dim + rope_dim), v = o = heads v_dim; the up projections
 * (q_lora x q, kv_lora x heads (qk_dim + v_dim); the query's from h when
 * q_lora is 0) split over TP; the down projections (h x down, down =
 * q_lora + kv_lora + rope_dim, or kv_lora + rope_dim) duplicated on every TP
 * rank, each over its own tokens under SP, so the latents (in = down, plus h
 * for a query from the hidden state) are what SP gathers. */
void workload_attn_shape(const workload_model *m, workload_attn *a);

typedef enum { ZERO_NONE = 0, ZERO_1 = 1, ZERO_2 = 2, ZERO_3 = 3 } workload_zero;

/* How context-parallel ranks exchange attention's inputs (Megatron-LM's
 * --cp-comm-type, Transformer Engine's attention with CP): a ring of K, V
 * chunks passed beside the attention's steps (p2p, Megatron-LM's default),
 * an all-gather of the whole sequence's K, V (allgather, Llama 3's form),
 * all-to-alls that trade sequence for heads around attention (a2a, Ulysses),
 * or both (a2a+p2p: all-to-alls among cp_a2a adjacent CP ranks, the ring
 * over the cp / cp_a2a groups of them). */
typedef enum { WL_CP_P2P = 0, WL_CP_ALLGATHER = 1, WL_CP_A2A = 2, WL_CP_A2A_P2P = 3 } workload_cp_comm;

/* Transformer Engine's fp8 recipes, by Megatron-LM's --fp8-recipe names: delayed (one scale a
 * tensor from an amax history, amaxes all-reduced once per fp8_autocast), tensorwise (current
 * scaling: each tensor's amax taken before its cast, all-reduced over TP where sequence
 * parallelism gathers it), mxfp8 (a power-of-two scale per 32 elements; Blackwell), blockwise
 * (an fp32 scale per 128 elements, per 128 x 128 for weights; DeepSeek-V3's; Hopper on) */
typedef enum { WL_FP8_DELAYED = 0, WL_FP8_TENSORWISE = 1, WL_FP8_MXFP8 = 2, WL_FP8_BLOCKWISE = 3 } workload_fp8_recipe;

/* How an MoE layer's tokens reach their experts (Megatron-LM's --moe-token-dispatcher-type):
 * alltoall, a copy of a token per chosen expert in NCCL all-to-alls over EP; flex, DeepEP's
 * kernels: a token crosses to each NVLink domain holding one of its experts once (to the
 * GPU at its own place there) and is forwarded inside the domain to each GPU holding one. */
typedef enum { WL_MOE_ALLTOALL = 0, WL_MOE_FLEX = 1 } workload_moe_dispatcher;

/* How the attention's s x s product runs (Megatron-LM's --attention-backend): flash, a fused kernel
 * that skips the key tiles a causal mask hides (FlashAttention-2, cuDNN's fused attention: flash,
 * fused and auto), or the full product with the mask applied after it (Megatron-LM's own
 * DotProductAttention, baddbmm + fused scale-mask-softmax + bmm, as Megatron-LM and DeepSpeed ran it
 * in 2020-21: unfused and local). */
typedef enum { WL_ATTN_FLASH = 0, WL_ATTN_UNFUSED = 1 } workload_attn_backend;
/* Query rows a FlashAttention-2 tile holds (kBlockM of its forward kernel for head dim 128 on
 * sm80/sm90, Flash_fwd_kernel_traits<128, 128, 64, ...> in csrc/flash_attn/src/
 * flash_fwd_launch_template.h): a causal tile computes keys up to its last row. */
#define WL_FLASH_TILE_ROWS 128
/* Keys a FlashAttention-2 tile takes at a time (kBlockN of the same kernel, 64): a sliding window's
 * first key block starts at the block holding the tile's first row's first key. */
#define WL_FLASH_TILE_COLS 64

/* The modules Megatron-LM's selective recomputation reruns before their backward (--recompute-modules):
 * the attention kernel, the norms that are modules of their own (MLA's input norm, an MoE layer's
 * pre-MLP norm), MLA's up projections, the experts' activation, the dense MLP, the shared expert, the
 * whole MoE layer (router, dispatch, experts, combine, shared expert). */
enum { WL_RC_CORE_ATTN = 1, WL_RC_LAYERNORM = 2, WL_RC_MLA_UP_PROJ = 4, WL_RC_MOE_ACT = 8, WL_RC_MLP = 16,
       WL_RC_SHARED_EXPERTS = 32, WL_RC_MOE = 64 };
/* Full recomputation's methods (Megatron-LM's --recompute-method). */
enum { WL_RC_UNIFORM = 0, WL_RC_BLOCK = 1 };

/* "core_attn,mla_up_proj" (commas or spaces) -> *out bits; false with *err for an unknown or unmodelled name. */
bool workload_recompute_modules_parse(const char *s, unsigned *out, GError **err);
/* "core_attn, mla_up_proj" for the bits set (buf of n bytes). */
const char *workload_recompute_modules_label(unsigned bits, char *buf, size_t n);

typedef struct {
    workload_model m;
    int gpus, tp, pp, dp, cp, ep; /* tp*pp*dp*cp == gpus; ep divides the experts and tp*cp*dp */
    int etp;                      /* expert tensor parallel (Megatron's --expert-tensor-parallel-size):
                                   * each routed expert's FFN split over etp ranks; ep*etp divides
                                   * tp*cp*dp (1: experts whole) */
    bool sp;                      /* sequence parallelism (RS + AG instead of AR) */
    int cp_comm;                  /* workload_cp_comm (with cp > 1) */
    int cp_a2a;                   /* a2a+p2p: the all-to-all level's size (Megatron-LM's
                                   * --hierarchical-context-parallel-sizes A B: A), the ring's
                                   * cp / cp_a2a; 0 otherwise */
    int zero;                     /* 0 DDP, 1/2 ZeRO (distributed optimizer), 3 ZeRO-3 / FSDP */
    bool fsdp;                    /* ZeRO-3 as PyTorch FSDP (full shard) rather than DeepSpeed */
    double reuse_distance;        /* DeepSpeed stage3_max_reuse_distance, parameters (1e9) */
    bool zero3_param_sync;        /* ZeRO-3 as DeepSpeed of 2021 ran it: each parameter gathered
                                   * alone after torch.cuda.synchronize(), list all_gather (a copy
                                   * per rank), gradients reduce-scattered per parameter (docs/
                                   * workloads.md, "ZeRO-3 as DeepSpeed ran it in 2021") */
    int micro_batch, global_batch, seq;
    compute_dtype dtype;
    bool recompute;               /* full activation recomputation */
    int recompute_method;         /* with it, Megatron-LM's --recompute-method: WL_RC_UNIFORM (every layer,
                                   * a checkpoint each recompute_layers layers) or WL_RC_BLOCK (the first
                                   * recompute_layers layers of each model chunk, the rest not) */
    int recompute_layers;         /* --recompute-num-layers; 0: 1 (uniform) */
    unsigned recompute_modules;   /* selective recomputation (Megatron-LM's --recompute-granularity
                                   * selective --recompute-modules): WL_RC_* bits; 0: none */
    bool tp_async_bwd;            /* column-parallel layers' input-gradient collective beside their
                                   * weight-gradient GEMM (Megatron-LM since 2021, TE) */
    bool tp_comm_overlap;         /* Megatron-LM's --tp-comm-overlap (Transformer Engine's userbuffers,
                                   * needs sp): TP gathers as rings beside the GEMMs' steps, the
                                   * reduce-scatters pipelined with the GEMMs' splits, the column-
                                   * parallel backward as tp_async_bwd's */
    bool moe_shared_overlap;      /* Megatron-LM's --moe-shared-expert-overlap: the shared expert's
                                   * halves on their own stream beside the dispatch and combine */
    bool moe_ep_overlap;          /* Megatron-LM's --overlap-moe-expert-parallel-comm ("combined 1F1B"):
                                   * each steady-state step runs one microbatch's forward and another's
                                   * backward layer by layer, their all-to-alls on a stream of their
                                   * own beside the other's compute (workload_gen.c, docs/workloads.md) */
    bool delay_wgrad;             /* Megatron-LM's --delay-wgrad-compute (with moe_ep_overlap): the paired
                                   * backward's weight-gradient GEMMs run after its dispatch's all-to-all
                                   * is issued (the MLP's) or after its attention (the attention's) */
    bool grad_reduce_after;       /* DP gradients reduced once a model chunk's backward is done, in one
                                   * bucket (Megatron-LM without --overlap-grad-reduce, its default);
                                   * false: in buckets beside the backward (PyTorch DDP, Megatron-LM with it) */
    bool overlap_param_gather;    /* ZeRO-1/2: the updated weights' gathers overlap the next step's
                                   * first forward (Megatron-LM's --overlap-param-gather) instead of
                                   * following the optimizer step */
    bool fp8_param_gather;        /* Megatron-LM's --fp8-param-gather (with dtype fp8 and ZeRO-1/2): the
                                   * linear layers' weights kept in fp8; per-tensor recipes gather them
                                   * in fp8, mxfp8 in bf16 and casts them while copying them out */
    bool mxfp8_grad_buf;          /* Megatron-LM's --reuse-grad-buf-for-mxfp8-param-ag (with mxfp8 and
                                   * --fp8-param-gather): the bf16 weights are gathered into the
                                   * gradient buffer, so no bf16 copy of the mxfp8 weights is kept */
    int fp8_recipe;               /* workload_fp8_recipe (with dtype fp8) */
    int gpu_cc;                   /* the GPU's compute capability x 10, for fp8's layouts (transposed
                                   * copies below 10.0 and on 12.x; the memory estimate); 0: unknown,
                                   * taken as Hopper's (the generator reads its gpu_model's) */
    int grad_bytes;               /* bytes per gradient element reduced over DP (2 bf16, 4 fp32) */
    uint64_t bucket_bytes;        /* DP gradient bucket (25 MiB: PyTorch DDP bucket_cap_mb) */
    int layer_fuse;               /* layers merged into one op (1 = exact; > 1 coarsens, see docs) */
    int moe_dispatcher;           /* workload_moe_dispatcher */
    int attn_backend;             /* workload_attn_backend (WL_ATTN_FLASH: causal tiles skipped) */
    int router_groups, router_group_topk; /* group-limited routing (Megatron-LM's --moe-router-num-groups,
                                   * --moe-router-group-topk): each token picks its topk experts
                                   * among those of group_topk of router_groups equal groups; 0: off */
    int domain_gpus;              /* GPUs of one NVLink domain (a server; a GB200 NVL72 rack) as the
                                   * system gives them, for flex's split of its traffic; 0: unknown */
    int vpp;                      /* model chunks per PP rank: 1 = 1F1B, >= 2 = interleaved 1F1B
                                   * (Megatron's virtual pipeline size; chunk c of rank r holds
                                   * virtual stage c*pp + r) */
    int mtp;                      /* multi-token prediction layers (Megatron-LM's --mtp-num-layers,
                                   * DeepSeek-V3's MTP: 1), on the last pipeline stage; 0: none */
    double capacity_factor;       /* MoE: Megatron-LM's --moe-expert-capacity-factor, an expert's
                                   * capacity over its balanced share of the routed tokens; 0: none */
    bool pad_to_capacity;         /* --moe-pad-expert-input-to-capacity: every expert's input padded
                                   * to its capacity */
    double moe_imbalance;         /* MoE: the routed tokens the busiest EP rank of a layer receives over
                                   * the mean (--moe-load-imbalance, 1..ep); the others share the rest
                                   * evenly; the busiest of MoE layer l is EP rank l mod ep; 0 or 1:
                                   * balanced routing */
    int first_stage_layers, last_stage_layers; /* Megatron-LM's --decoder-first-pipeline-num-layers,
                                   * --decoder-last-pipeline-num-layers: the first / last stage's
                                   * layers, the middle stages' the rest evenly; 0: the split rule
                                   * (workload_chunk_layers) */
    const char *pp_layout;        /* Megatron-LM's --pipeline-model-parallel-layout ("Et*3|(tt|)*29,m|L"),
                                   * an interned string (g_intern_string), NULL: none; its pp*vpp virtual
                                   * stages hold the layers (workload_layout_get) */
} workload_spec;

/* "p2p", "allgather" or "a2a" (Megatron-LM's names) -> *out; false with
 * *err (WORKLOAD_ERROR_VALUE) otherwise. */
bool workload_cp_comm_parse(const char *s, int *out, GError **err);
const char *workload_cp_comm_name(int c);
/* Its name for a header: the name, with a2a+p2p's sizes ("a2a+p2p 8x2"), in buf (n bytes). */
const char *workload_cp_comm_label(const workload_spec *w, char *buf, size_t n);

/* What --fp8-param-gather does, for a header (", weights gathered in fp8", mxfp8's
 * ", weights kept in mxfp8, gathered in bf16[ into the gradient buffer]"); "" without it. */
const char *workload_fp8_param_gather_label(const workload_spec *w);

/* "alltoall" or "flex" -> *out; false with *err otherwise ("allgather", Megatron-LM's third, is
 * not modelled). */
bool workload_moe_dispatcher_parse(const char *s, int *out, GError **err);
const char *workload_moe_dispatcher_name(int d);
/* Megatron-LM's --attention-backend names: flash, fused, auto -> WL_ATTN_FLASH; unfused, local ->
 * WL_ATTN_UNFUSED; false with *err otherwise. */
bool workload_attn_backend_parse(const char *s, int *out, GError **err);
const char *workload_attn_backend_name(int b); /* "flash" or "unfused" */
/* The share of the full s x s attention product (Megatron's count, 4 b s^2 h a layer forward) a rank's
 * attention kernels compute, over its CP ranks' exchange: 1 unfused; with flash, a causal square of
 * L tokens computes rows x keys up to each tile's last row (L + 128) / 2L of it for L a multiple of
 * 128 tokens, and under CP with Megatron-LM's load-balanced split (a rank holding chunks r and
 * 2G-1-r of 2G, G the ring's ranks) its 4G chunk pairs hold 2G - 1 whole ones and two causal squares. */
double workload_attn_work_frac(const workload_spec *w);
/* The same for a sliding-window layer (m.window > 0): flash computes, per tile of 128 query rows, the
 * key blocks of WL_FLASH_TILE_COLS from the one holding its first row's first key (that row less the
 * window) to its last row, of the whole sequence (the CP forms a window allows, a2a and allgather,
 * split it evenly); a chunked layer (m.chunk > 0) from its first row's chunk's start; unfused
 * computes the full product (1). */
double workload_attn_window_frac(const workload_spec *w);
/* Layer l (0-based) attends through the model's sliding window or chunks (Megatron-LM's
 * is_layer_window_attention: with --window-attn-skip-freq N all but layers N, 2N, ... counted from
 * 1; with its list, the layers marked 1). */
bool workload_layer_is_swa(const workload_model *m, int l);
/* The keys a query of layer l attends to in Megatron's count: the sequence s, or in a windowed layer
 * min(window + 1, s) (Megatron-Bridge's FLOPs count, swa_context), in a chunked one min(chunk, s)
 * (the chunk's square, as a full layer's is the sequence's). */
double workload_layer_ctx(const workload_model *m, int l, double s);
/* The attention backward's FLOPs over its forward's: 2.5 with flash (FlashAttention's backward
 * recomputes the scores, then takes dV, dP, dQ and dK: five products of the forward's two;
 * benchmark_flash_attention.py counts it so), 2 unfused (the four gradient products). */
double workload_attn_bwd_factor(const workload_spec *w);
/* For a header: ", flex dispatcher (DeepEP)", ", experts from M of G groups", the capacity, ", busiest EP rank Fx the
 * mean tokens" (--moe-load-imbalance), those that apply; "" for none. */
const char *workload_moe_label(const workload_spec *w, char *buf, size_t n);
/* " (MLA, latents q 1536 / kv 512)" for a model with multi-latent attention (" (MLA, latent kv 512)"
 * without a query latent), " (sliding window 128 in 18 of 36 layers)" (" (sliding window 4096)" in
 * all) for one with a window, both joined by ", ", "" otherwise: the headers' words for the attention. */
const char *workload_attn_label(const workload_model *m, char *buf, size_t n);
/* The chance that a token's topk experts include one of an aligned run of s consecutive experts
 * (a GPU's, a domain's), every expert equally likely (balanced routing) within the router groups
 * the token may use (router_groups: group_topk of them, equally likely); -1 when such a run and
 * the groups do not nest (neither holds a whole number of the other). */
double workload_moe_hit(const workload_spec *w, int s);
/* The tokens an expert receives over its balanced share (routing balanced, as everywhere here): the
 * capacity factor C with padding to capacity, min(C, 1) with dropping beyond it, 1 without C. */
double workload_moe_capacity_scale(const workload_spec *w);
/* The routed tokens an EP rank receives over its balanced share under --moe-load-imbalance F: the
 * busiest (hot) rank F, each other (ep - F) / (ep - 1), each capped at the capacity factor C when
 * tokens beyond it are dropped, all C when padded to it; the capacity scale for F = 1. */
double workload_moe_rank_load(const workload_spec *w, bool hot);
/* Their mean over the EP ranks (1 without drops): the dispatch's bytes over balanced routing's. */
double workload_moe_load_mean(const workload_spec *w);

/* "delayed", "tensorwise", "mxfp8" or "blockwise" -> *out; false with *err otherwise. */
bool workload_fp8_recipe_parse(const char *s, int *out, GError **err);
const char *workload_fp8_recipe_name(int r);
/* Whether the recipe needs fp8 GEMMs of scaled blocks (mxfp8, blockwise): compute capability
 * 10.0 / 10.3 for mxfp8, 9.0 on for blockwise; NULL if cc allows it (cc 0: unknown, allowed),
 * else why not. */
const char *workload_fp8_recipe_unsupported(int recipe, int cc);
/* Whether the GPU of compute capability cc (x 10) runs per-tensor fp8 GEMMs only as TN, so the
 * columnwise copies of fp8 tensors are transposes (Hopper, Ada; Transformer Engine's
 * nvte_is_non_tn_fp8_gemm_supported is false below 10.0 and on 12.x). cc 0: true. */
bool workload_fp8_transposes(int cc);

/* Presets with published shapes (static table of n entries). */
const workload_model *workload_presets(int *n);
/* The preset named `name`, or NULL with *err (WORKLOAD_ERROR_MODEL). */
const workload_model *workload_preset_find(const char *name, GError **err);

/* Defaults for the fields a user may leave 0: dp from gpus/(tp*pp*cp),
 * cp = ep = etp = 1, micro_batch 1, global_batch = dp*micro_batch*pp*? (see .c),
 * seq 2048, grad_bytes 2, bucket 25 MiB, layer_fuse 1, vpp 1, kv_heads = heads. */
void workload_spec_defaults(workload_spec *w);

/* Bounds of the shapes and sizes workload_spec_check accepts. */
#define WL_MAX_LAYERS 100000
#define WL_MAX_HIDDEN 1000000
#define WL_MAX_MICRO_BATCH 1000000
#define WL_MAX_ACT_ELEMS 34359738368.0 /* 2^35: micro-batch x seq / cp x hidden */
#define WL_MAX_SEQ 10000000 /* --seq, and a sliding window */

/* Check the parallel layout and shapes (tp*pp*dp*cp == gpus, heads % tp,
 * kv_heads % tp, pp <= layers, global_batch % (micro_batch*dp), seq % cp,
 * experts % ep, expert FFN % etp, (tp*cp*dp) % (ep*etp), layer_fuse dividing every stage's layers, ...;
 * interleaved: pp >= 2, layers % (pp*vpp), microbatches % pp). false with
 * *err (WORKLOAD_ERROR_LAYOUT or _VALUE) naming the rule. */
bool workload_spec_check(const workload_spec *w, GError **err);

/* Layers of pipeline stage `stage` (0 <= stage < pp; needs 1 <= pp <=
 * layers, else it asserts), and the index of its first layer in
 * *first_layer when not NULL. 1F1B: layers/pp each when pp divides the
 * layers; otherwise, with c = ceil(layers/pp) and r = pp*c - layers, the
 * first ceil(r/2) and the last floor(r/2) stages hold c - 1 layers and the
 * others c (counts differ by at most 1; r <= 2 is Llama 3's rule: one
 * layer fewer on the first and the last stage). Interleaved (vpp > 1): the
 * sum of the rank's chunks (workload_chunk_layers), and the first layer of
 * its chunk 0. */
int workload_stage_layers(const workload_spec *w, int stage, int *first_layer);

/* Layers of model chunk `chunk` of PP rank `stage` (0 <= chunk < vpp; 1F1B
 * has the one chunk 0) and its first layer in *first_layer when not NULL.
 * Chunk c of rank s is virtual stage j = c*pp + s of the pp*vpp virtual
 * stages (Megatron's interleaved assignment), which split the layers as
 * workload_stage_layers splits them over stages: with c = ceil(L/(pp*vpp))
 * and r = pp*vpp*c - L, the first ceil(r/2) and the last floor(r/2)
 * virtual stages hold c - 1 (Llama 3's 126 layers on pp 16 x 2 chunks: the
 * first chunk of rank 0 and the last of rank 15 hold 3, the others 4).
 * Needs pp*vpp <= layers (asserts). */
int workload_chunk_layers(const workload_spec *w, int stage, int chunk, int *first_layer);

/* A pipeline layout (Megatron-LM's --pipeline-model-parallel-layout, read
 * in megatron/core/transformer/pipeline_parallel_layer_layout.py): the
 * virtual stages in order (virtual stage j = chunk c of PP rank s for
 * j = c*pp + s) separated by '|', each a run of E (the embedding), t (a
 * decoder layer), m (an MTP layer), L (the LM head and loss); commas are
 * cosmetic, "X*N" repeats the character X and "(...)*N" the text inside.
 * Parsed once per string and kept for the process (the strings are
 * interned). */
typedef struct {
    int n;             /* virtual stages */
    const int *dec;    /* decoder layers of each virtual stage */
    const int *first;  /* the index of the first of them */
    int ndec, nmtp, nemb, nloss; /* counts of t, m, E, L */
    int mtp_vs;        /* the virtual stage holding the m's: -1 none, -2 several */
    bool emb_opens;    /* E is the first item of virtual stage 0 */
    bool loss_closes;  /* L is the last item of the last virtual stage */
    bool dec_after_mtp; /* a t comes after an m */
} workload_layout;

/* The parsed layout of s, or NULL with *err (WORKLOAD_ERROR_VALUE) naming
 * the character at fault (1-based). Thread-safe; the result lives as long
 * as the process. */
const workload_layout *workload_layout_get(const char *s, GError **err);
/* The layers of a model chunk of n that full recomputation reruns: all of
 * them, or under the block method the first recompute_layers; 0 without
 * full recomputation. */
int workload_recomputed_layers(const workload_spec *w, int n);

/* Megatron-LM's --account-for-embedding-in-pipeline-split (emb) and
 * --account-for-loss-in-pipeline-split (loss) as a layout (g_free it): the
 * embedding and the loss counted as a layer each, layers + emb + loss split
 * evenly over the pp x vpp virtual stages, the first holding emb fewer
 * decoder layers and the last loss fewer (get_num_layers_to_build,
 * get_transformer_layer_offset), the MTP layers with the loss. NULL with *err
 * (WORKLOAD_ERROR_LAYOUT) where they do not split evenly, as Megatron-LM
 * asserts. */
char *workload_layout_split(int layers, int pp, int vpp, int mtp, bool emb, bool loss, GError **err);
/* With w->pp_layout: set w->vpp to its virtual stages over w->pp (false with
 * *err where they do not divide, or contradict an interleaved:V schedule);
 * true without a layout. Call once pp is known. */
bool workload_layout_apply(workload_spec *w, GError **err);
/* The pipeline stage holding the MTP layers (in its last model chunk): the
 * layout's, else the last; -1 without MTP. */
int workload_mtp_stage(const workload_spec *w);

/* Parse a pipeline schedule: NULL or "1f1b" gives *vpp = 1, "interleaved:V"
 * (V an integer in 2..1000) gives *vpp = V. false with *err
 * (WORKLOAD_ERROR_VALUE) saying what is expected; *vpp is then unchanged. */
bool workload_schedule_parse(const char *s, int *vpp, GError **err);

/* Parameters of the whole model (all stages, unsharded). */
double workload_params(const workload_model *m);

/* Weights of one layer (biases, norms and, for an MoE layer, all experts:
 * their share is also written to *expert_params when not NULL). */
double workload_layer_params(const workload_model *m, bool moe, double *expert_params);
/* Weights of one layer that every tensor-parallel rank holds whole (Megatron-LM:
 * norms, the biases of the row-parallel projection and dense MLP out, the MoE
 * router); the rest of workload_layer_params but the experts is split by tp. */
double workload_layer_tp_replicated(const workload_model *m, bool moe);
/* The linear layers' share of that (MLA's down projections, h x down; 0
 * otherwise): weights Transformer Engine casts to fp8 like the split ones. */
double workload_layer_tp_replicated_linear(const workload_model *m);
/* Layer `layer`'s weights one rank holds: the dense part (returned; split by tp
 * but for workload_layer_tp_replicated, whose share goes to *replicated when
 * not NULL) and the routed experts' (*expert: split by ep x etp). */
double workload_layer_rank_params(const workload_spec *w, int layer, double *expert, double *replicated);
/* Whether layer l (0-based) is an MoE layer. */
bool workload_layer_is_moe(const workload_model *m, int layer);
/* Megatron-LM's --moe-layer-freq list expression ("([0]*3+[1]*58)", "([0]+[1])*24": [0]/[1] lists
 * joined by +, repeated by *N, in parentheses at most WL_MOE_PATTERN_DEPTH deep, at most
 * WL_MAX_LAYERS layers) -> an interned string of '0' (dense) and '1' (MoE), one a layer; NULL with
 * *err (WORKLOAD_ERROR_VALUE, the character's position) when it is not one or holds no MoE layer
 * (traces/moe_pattern.c). */
#define WL_MOE_PATTERN_DEPTH 64
const char *workload_moe_pattern_parse(const char *s, GError **err);
/* The same list expression for another per-layer flag: `flag` names it in errors, `one` says what a 1
 * is and `zero` a 0 ("MoE", "dense"); with need_one, a list without a 1 is refused. */
const char *workload_layer_pattern_parse(const char *flag, const char *zero, const char *one, bool need_one,
                                         const char *s, GError **err);
/* DeepSpeed ZeRO-3 with activation recomputation: the fraction of a layer's
 * parameters (as one rank holds them, tp and ep shards) gathered again for
 * the backward after the recomputed forward. DeepSpeed frees a parameter
 * after its module ran unless it is used again within `reuse` parameters
 * (stage3_max_reuse_distance); between a module's recomputed forward and its
 * backward run the modules after it in the layer, twice (their recomputed
 * forward and their backward). Modules: QKV, attention projection, MLP in,
 * MLP out (the last is always kept). */
double workload_layer_refetch_frac(const workload_model *m, bool moe, int tp, int ep, double reuse);
/* The weight tensors of one dense layer as one rank holds them (tp shards),
 * in the order the layer uses them: norm, QKV, projection, norm, MLP in
 * (gate and up with a SwiGLU MLP), MLP out, each weight followed by its
 * bias where the model has biases (GPT). With refetch, only the tensors
 * DeepSpeed gathers again after the recomputed forward (the modules
 * workload_layer_refetch_frac counts, and the norm before each). Writes at
 * most max element counts to numel; returns how many tensors there are. */
int workload_layer_tensors(const workload_model *m, int tp, double reuse, bool refetch, double *numel, int max);
/* Forward matmul FLOPs of one layer over `tokens` tokens attending over
 * `ctx` keys: 2*tokens*(weights touched) + 4*tokens*ctx*hidden. */
double workload_layer_fwd_flops(const workload_model *m, bool moe, double tokens, double ctx);

/* Model FLOPs of one step (no recomputation), summed over all GPUs:
 * 3 x forward matmul FLOPs (Megatron's counting, attention scores and LM
 * head included). */
double workload_step_flops(const workload_spec *w);

/* Weights of one multi-token prediction layer (Megatron-LM's
 * MultiTokenPredictionLayer): the norms of the embedding and of the hidden
 * state, the 2h -> h projection (eh_proj), one transformer layer as the
 * model's last, and the final norm; the embedding and the LM head are the
 * model's, shared. Per rank as workload_layer_rank_params: the dense part
 * returned, the routed experts' in *expert, the part every TP rank holds
 * whole in *replicated (when not NULL). */
double workload_mtp_rank_params(const workload_spec *w, double *expert, double *replicated);
/* All weights of one MTP layer (DeepSeek-V3's: 11.6 B, its 14B MTP module without the embedding and
 * head its checkpoint stores again). */
double workload_mtp_params(const workload_model *m);

/* Estimated device memory of the busiest rank, bytes: weights, gradients,
 * Adam state (sharded as ZeRO says) and activations (Korthikanti et al.
 * 2022: s*b*h*(34 + 5*a*s/h) per layer, /tp with SP; with recompute
 * 2*s*b*h per layer) of the stage's layers (workload_stage_layers), plus
 * the embedding on the first and last stage, x in-flight microbatches:
 * 1F1B, the largest over stages s of min(pp - s, m) microbatches (stage 0
 * when the stages are equal); interleaved, stage 0's warm-up + 1
 * chunk-microbatches of layers/(pp*vpp) layers. Needs 1 <= pp <= layers. */
double workload_memory_bytes(const workload_spec *w);

/* Embedding-sized matrices a stage (or model chunk) holds: the input
 * embedding on the first, the LM head on the last; one matrix for both when
 * they are tied and on one stage (pp 1), two when untied (Llama). A tied
 * model's last stage with pp > 1 holds its own copy (Megatron's embedding
 * group), and so does the stage of the MTP layers (mtp) unless the first or
 * a tied last one. The memory estimate and the optimizer step count these. */
int workload_emb_matrices(const workload_spec *w, bool first, bool last, bool mtp);

/* Generate one step. Returns a validated trace owned by the caller, or NULL
 * with *err (bad spec). g times the compute ops. */
trace *workload_generate(const workload_spec *w, const gpu_model *g, GError **err);

/* Rough operation count of the trace, to warn before building huge ones
 * (a generated op and its replay state take about 300 bytes). */
double workload_op_estimate(const workload_spec *w);

#define WORKLOAD_ERROR (workload_error_quark())
GQuark workload_error_quark(void);
enum { WORKLOAD_ERROR_MODEL = 1, WORKLOAD_ERROR_LAYOUT, WORKLOAD_ERROR_VALUE };

#endif

/* cli/wlopts.c - shared options of `workload` and `scale` (wlopts.h). */
#include "wlopts.h"
#include "sysbuild.h"

#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "models/replay.h"
#include "traces/timeline.h"

/* --megatron-args FILE is expanded before option parsing (megatron_args_expand); here for --help */
static gboolean megatron_args_arg(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)value, (void)data;
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "%s: give it as a separate argument", name);
    return FALSE;
}

gboolean wl_opts_fits_memory(const workload_spec *w, double bytes_per_op, const char *use, GError **err)
{
    double ops = workload_op_estimate(w), need = ops * bytes_per_op;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double have = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    if (have > 0 && need > 0.75 * have) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE,
                    "the trace of this step would hold about %.0f M ops (%.1f GB to build and %s), more than "
                    "3/4 of this machine's %.1f GB: fewer GPUs, or %s",
                    ops / 1e6, need / 1e9, use, have / 1e9,
                    w->zero3_param_sync ? "ZeRO-3 without --zero3-per-param (its gathers are per tensor, never fused)"
                                        : "a coarser --layer-fuse");
        return FALSE;
    }
    return TRUE;
}

/* The integer options: whole numbers >= 1 (0 used to read as "not given",
 * so --tp 0 ran with the default). */
static const struct {
    const char *opt;
    size_t off;
} int_opts[] = {
    {"--gpus", offsetof(wl_opts, gpus)},           {"--tp", offsetof(wl_opts, tp)},
    {"--pp", offsetof(wl_opts, pp)},               {"--dp", offsetof(wl_opts, dp)},
    {"--cp", offsetof(wl_opts, cp)},               {"--ep", offsetof(wl_opts, ep)},
    {"--etp", offsetof(wl_opts, etp)},
    {"--micro-batch", offsetof(wl_opts, micro_batch)}, {"--global-batch", offsetof(wl_opts, global_batch)},
    {"--seq", offsetof(wl_opts, seq)},             {"--layer-fuse", offsetof(wl_opts, layer_fuse)},
    {"--layers", offsetof(wl_opts, layers)},       {"--hidden", offsetof(wl_opts, hidden)},
    {"--heads", offsetof(wl_opts, heads)},         {"--kv-heads", offsetof(wl_opts, kv_heads)},
    {"--ffn", offsetof(wl_opts, ffn)},             {"--vocab", offsetof(wl_opts, vocab)},
    {"--experts", offsetof(wl_opts, experts)},     {"--topk", offsetof(wl_opts, topk)},
    {"--expert-ffn", offsetof(wl_opts, expert_ffn)}, {"--shared-ffn", offsetof(wl_opts, shared_ffn)},
    {"--dense-layers", offsetof(wl_opts, dense_layers)},
    {"--kv-channels", offsetof(wl_opts, kv_channels)},
    {"--attention-chunk-size", offsetof(wl_opts, chunk)},
    {"--moe-layer-freq", offsetof(wl_opts, moe_freq)},
    {"--q-lora-rank", offsetof(wl_opts, q_lora)},   {"--kv-lora-rank", offsetof(wl_opts, kv_lora)},
    {"--qk-head-dim", offsetof(wl_opts, qk_dim)},   {"--qk-pos-emb-head-dim", offsetof(wl_opts, rope_dim)},
    {"--v-head-dim", offsetof(wl_opts, v_dim)},     {"--mtp-num-layers", offsetof(wl_opts, mtp)},
    {"--decoder-first-pipeline-num-layers", offsetof(wl_opts, first_stage_layers)},
    {"--decoder-last-pipeline-num-layers", offsetof(wl_opts, last_stage_layers)},
    {"--moe-router-num-groups", offsetof(wl_opts, router_groups)},
    {"--recompute-num-layers", offsetof(wl_opts, rc_layers)},
    {"--num-virtual-stages-per-pipeline-rank", offsetof(wl_opts, vstages)},
    {"--num-layers-per-virtual-pipeline-stage", offsetof(wl_opts, vstage_layers)},
    {"--moe-router-group-topk", offsetof(wl_opts, router_group_topk)},
};

gint *wl_opts_int_field(wl_opts *o, const char *key)
{
    char opt[64];
    if (g_snprintf(opt, sizeof opt, "--%s", key) >= (int)sizeof opt)
        return NULL;
    for (char *c = opt + 2; *c; c++)
        if (*c == '_')
            *c = '-';
    for (size_t i = 0; i < G_N_ELEMENTS(int_opts); i++)
        if (!strcmp(opt, int_opts[i].opt))
            return (gint *)((char *)o + int_opts[i].off);
    return NULL;
}

static gboolean int_arg(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    for (size_t i = 0; i < G_N_ELEMENTS(int_opts); i++)
        if (!strcmp(name, int_opts[i].opt))
            return cli_int_arg(name, value, 1, 1 << 30, (int *)((char *)data + int_opts[i].off), error);
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION, "%s: not an integer option", name);
    return FALSE;
}

/* A per-layer flag of Megatron-LM's that is an integer N or a list of 0s and 1s (its moe_freq_type):
 * the one set, the other cleared. */
static gboolean freq_or_list(const char *flag, const char *zero, const char *one, bool need_one, const char *value,
                             int *freq, const char **pattern, GError **err)
{
    if (value && *value && strspn(value, "0123456789") == strlen(value)) {
        *pattern = NULL;
        return cli_int_arg(flag, value, 1, 1 << 30, freq, err);
    }
    const char *p = workload_layer_pattern_parse(flag, zero, one, need_one, value, err);
    if (!p)
        return FALSE;
    *pattern = p;
    *freq = 0;
    return TRUE;
}

gboolean wl_opts_set_moe_freq(wl_opts *o, const char *value, GError **err)
{
    return freq_or_list("--moe-layer-freq", "dense", "MoE", true, value, &o->moe_freq, &o->moe_pattern, err);
}

static gboolean moe_freq_arg(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)name;
    return wl_opts_set_moe_freq(data, value, error);
}

gboolean wl_opts_set_window(wl_opts *o, const char *value, GError **err)
{
    g_autofree char *v = g_strdup(value ? value : "");
    char *comma = strchr(v, ',');
    if (comma) { /* Megatron-LM's (left, right): a decoder's causal mask leaves only right 0 */
        const char *right = g_strstrip(comma + 1);
        if (strcmp(right, "0")) {
            g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE,
                        "--window-size '%s': the right extent must be 0 (the models here are causal decoders: a query "
                        "sees no token after it)", value);
            return FALSE;
        }
        *comma = 0;
    }
    g_strstrip(v);
    if (!strcmp(v, "-1")) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE,
                    "--window-size '%s': -1 is Megatron-LM's unbounded window, full attention: leave the flag out",
                    value);
        return FALSE;
    }
    return cli_int_arg("--window-size", v, 1, WL_MAX_SEQ, &o->window, err);
}

gboolean wl_opts_set_window_freq(wl_opts *o, const char *value, GError **err)
{
    return freq_or_list("--window-attn-skip-freq", "full attention", "sliding window", false, value, &o->window_freq,
                        &o->window_pattern, err);
}

static gboolean window_arg(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)name;
    return wl_opts_set_window(data, value, error);
}

static gboolean window_freq_arg(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)name;
    return wl_opts_set_window_freq(data, value, error);
}

GOptionGroup *wl_opts_group(wl_opts *o, gboolean with_layout)
{
    GOptionEntry layout[] = {
        {"gpus", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "GPUs in the job (tp*pp*dp*cp)", "N"},
        {"tp", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "tensor-parallel size [1]", "T"},
        {"pp", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "pipeline-parallel size [1]", "P"},
        {"dp", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "data-parallel size [gpus/(tp*pp*cp)]", "D"},
        {"topo", 't', 0, G_OPTION_ARG_STRING, &o->topo, "system (gives the GPU kind)", "T"},
        {0},
    };
    GOptionEntry e[] = {
        {"model", 'm', 0, G_OPTION_ARG_STRING, &o->model, "preset (llama3-8b, gpt3-175b, ...; list: print them) or custom", "M"},
        {"megatron-args", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)megatron_args_arg,
         "a file of Megatron-LM pretrain_gpt.py arguments (a launch script's): the model, parallelism, schedule, "
         "recomputation and precision they set, as these options (those after it override it; with --model custom)",
         "FILE"},
        {"cp", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "context-parallel size [1]", "C"},
        {"cp-comm", 0, 0, G_OPTION_ARG_STRING, &o->cp_comm,
         "how CP ranks exchange K, V: p2p (a ring beside attention's steps), allgather, a2a, a2a+p2p "
         "(Megatron-LM's --cp-comm-type) [p2p]",
         "T"},
        {"hierarchical-context-parallel-sizes", 0, 0, G_OPTION_ARG_STRING, &o->hier_cp,
         "--cp-comm a2a+p2p: all-to-alls among A adjacent CP ranks, a ring over B groups of them (A x B = cp; "
         "Megatron-LM's flag)",
         "A,B"},
        {"ep", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "expert-parallel size (MoE; divides the experts and tp*cp*dp) [1]", "E"},
        {"attention-backend", 0, 0, G_OPTION_ARG_STRING, &o->attn_backend,
         "the attention kernel: flash (FlashAttention / cuDNN: the tiles a causal mask hides skipped; also fused, "
         "auto) or unfused (the full s x s product, masked after; as Megatron-LM ran it in 2020-21; also local) "
         "(Megatron-LM's flag) [flash]",
         "B"},
        {"moe-token-dispatcher-type", 0, 0, G_OPTION_ARG_STRING, &o->moe_dispatcher,
         "MoE: alltoall (NCCL all-to-alls, a copy per chosen expert) or flex (DeepEP: once per NVLink domain, "
         "forwarded inside it; Megatron-LM's flag) [alltoall]",
         "T"},
        {"decoder-first-pipeline-num-layers", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "layers of the first pipeline stage, the middle stages' the rest evenly (Megatron-LM's flag) [the split "
         "rule]", "N"},
        {"decoder-last-pipeline-num-layers", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "layers of the last pipeline stage (Megatron-LM's flag) [the split rule]", "N"},
        {"pipeline-model-parallel-layout", 0, 0, G_OPTION_ARG_STRING, &o->pp_layout,
         "what each virtual stage holds, '|' between them: E embedding, t decoder layer, m MTP layer, L loss; "
         "X*N, (...)*N repeat (\"Et*3|(tt|)*29,m|L\"; Megatron-LM's flag; its stages over --pp set the model chunks) "
         "[the split rule]",
         "S"},
        {"account-for-embedding-in-pipeline-split", 0, 0, G_OPTION_ARG_NONE, &o->acct_emb,
         "count the embedding as a layer of the first pipeline stage when splitting the layers (Megatron-LM's flag)",
         NULL},
        {"account-for-loss-in-pipeline-split", 0, 0, G_OPTION_ARG_NONE, &o->acct_loss,
         "count the LM head and loss as a layer of the last pipeline stage (Megatron-LM's flag)", NULL},
        {"moe-expert-capacity-factor", 0, 0, G_OPTION_ARG_STRING, &o->capacity,
         "MoE: an expert's capacity over its balanced share of the tokens; beyond it tokens are dropped "
         "(Megatron-LM's flag) [none: dropless]",
         "C"},
        {"moe-pad-expert-input-to-capacity", 0, 0, G_OPTION_ARG_NONE, &o->pad_capacity,
         "MoE: pad every expert's input to its capacity (Megatron-LM's flag; needs the capacity factor)", NULL},
        {"moe-load-imbalance", 0, 0, G_OPTION_ARG_STRING, &o->imbalance,
         "MoE: the routed tokens the busiest EP rank of each layer receives over the mean, 1..ep (the others share "
         "the rest; the all-to-alls uneven, the busiest rank's experts longer) [1: balanced routing]", "F"},
        {"mtp-num-layers", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "multi-token prediction layers, on the last pipeline stage or where the layout puts them (DeepSeek-V3's MTP: "
         "1; Megatron-LM's flag) [0]",
         "N"},
        {"moe-router-num-groups", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "MoE: group-limited routing, the experts in G equal groups (with --moe-router-group-topk; Megatron-LM's)", "G"},
        {"moe-router-group-topk", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "MoE: a token's experts from M of the groups (node-limited routing: G = the EP group's domains)", "M"},
        {"etp", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "expert-tensor-parallel size: each expert's FFN split over ETP ranks (MoE; ep*etp divides tp*cp*dp) [1]", "ETP"},
        {"sp", 0, 0, G_OPTION_ARG_NONE, &o->sp, "sequence parallelism (reduce_scatter + all_gather)", NULL},
        {"zero", 0, 0, G_OPTION_ARG_STRING, &o->zero_s, "ZeRO stage 0, 1, 2 or 3 [0 = DDP]", "Z"},
        {"fsdp", 0, 0, G_OPTION_ARG_NONE, &o->fsdp, "PyTorch FSDP (full shard) = ZeRO-3", NULL},
        {"zero3-per-param", 0, 0, G_OPTION_ARG_NONE, &o->zero3_per_param,
         "ZeRO-3 as DeepSpeed of 2021 ran it: each parameter gathered alone after a device sync, a copy per rank, "
         "per-parameter reduce-scatter",
         NULL},
        {"reuse-distance", 0, 0, G_OPTION_ARG_STRING, &o->reuse,
         "DeepSpeed ZeRO-3 stage3_max_reuse_distance, parameters (1e9, 500M, ...) [1e9]", "N"},
        {"micro-batch", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "sequences per microbatch [1]", "b"},
        {"global-batch", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "sequences per step [dp*b, x2pp with pp]", "B"},
        {"seq", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "sequence length [2048]", "S"},
        {"schedule", 0, 0, G_OPTION_ARG_STRING, &o->schedule,
         "pipeline schedule: 1f1b, or interleaved:V (Megatron's interleaved 1F1B, V model chunks per pp rank) [1f1b]",
         "S"},
        {"num-virtual-stages-per-pipeline-rank", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "model chunks per pp rank: the interleaved schedule with V chunks (Megatron-LM's flag; = --schedule "
         "interleaved:V)", "V"},
        {"num-layers-per-virtual-pipeline-stage", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "layers per model chunk: interleaved with layers / (pp x N) chunks per pp rank (Megatron-LM's older flag)",
         "N"},
        {"dtype", 0, 0, G_OPTION_ARG_STRING, &o->dtype, "GEMM precision: bf16, fp16, fp8 [bf16]", "T"},
        {"fp8-recipe", 0, 0, G_OPTION_ARG_STRING, &o->fp8_recipe,
         "with --dtype fp8: delayed, tensorwise (current scaling), mxfp8 (Blackwell), blockwise "
         "(Megatron-LM's flag) [delayed]",
         "R"},
        {"fp8-param-gather", 0, 0, G_OPTION_ARG_NONE, &o->fp8_param_gather,
         "with --dtype fp8 and --zero 1/2: weights kept in fp8 and gathered in fp8 after the optimizer step "
         "(mxfp8: gathered in bf16, cast as they are copied out; Megatron-LM's flag)",
         NULL},
        {"reuse-grad-buf-for-mxfp8-param-ag", 0, 0, G_OPTION_ARG_NONE, &o->mxfp8_grad_buf,
         "with mxfp8 and --fp8-param-gather: gather the bf16 weights into the gradient buffer, keeping no bf16 copy "
         "of the mxfp8 weights (Megatron-LM's flag)",
         NULL},
        {"recompute", 0, 0, G_OPTION_ARG_NONE, &o->recompute, "full activation recomputation", NULL},
        {"recompute-granularity", 0, 0, G_OPTION_ARG_STRING, &o->rc_gran,
         "full (= --recompute) or selective (the modules of --recompute-modules; Megatron-LM's flag)", "G"},
        {"recompute-method", 0, 0, G_OPTION_ARG_STRING, &o->rc_method,
         "full recomputation: uniform (every layer, a checkpoint each --recompute-num-layers layers) or block "
         "(the first --recompute-num-layers layers of each model chunk, the rest kept; Megatron-LM's flag) "
         "[uniform]",
         "M"},
        {"recompute-num-layers", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "full recomputation: layers a checkpoint (uniform) or rerun a model chunk (block) (Megatron-LM's flag) [1]",
         "N"},
        {"recompute-modules", 0, 0, G_OPTION_ARG_STRING, &o->rc_modules,
         "selective recomputation's modules: core_attn, layernorm, mla_up_proj, moe_act, mlp, shared_experts, moe "
         "(Megatron-LM's flag) [core_attn]",
         "M,M"},
        {"tp-async-bwd", 0, 0, G_OPTION_ARG_NONE, &o->tp_async_bwd,
         "TP: column-parallel layers' input-gradient all-reduce/reduce-scatter beside their weight-gradient GEMM "
         "(Megatron-LM since 2021)",
         NULL},
        {"tp-comm-overlap", 0, 0, G_OPTION_ARG_NONE, &o->tp_comm_overlap,
         "TP with --sp: gathers as rings beside the GEMMs' steps, reduce-scatters pipelined with their splits "
         "(Megatron-LM's flag, Transformer Engine's userbuffers)",
         NULL},
        {"moe-shared-expert-overlap", 0, 0, G_OPTION_ARG_NONE, &o->moe_shared_overlap,
         "MoE: the shared expert beside the dispatch and combine all-to-alls, on its own stream (Megatron-LM's flag)",
         NULL},
        {"overlap-moe-expert-parallel-comm", 0, 0, G_OPTION_ARG_NONE, &o->moe_ep_overlap,
         "MoE with EP: combined 1F1B, each step's forward and backward run layer by layer together, one's "
         "all-to-alls beside the other's compute (Megatron-LM's flag; pp > 1 needs --schedule interleaved:V)",
         NULL},
        {"delay-wgrad-compute", 0, 0, G_OPTION_ARG_NONE, &o->delay_wgrad,
         "with --overlap-moe-expert-parallel-comm: the paired backward's weight-gradient GEMMs after its dispatch "
         "all-to-all is issued (the MLP's) and after its attention (Megatron-LM's flag)",
         NULL},
        {"no-overlap-grad-reduce", 0, 0, G_OPTION_ARG_NONE, &o->no_overlap_grad,
         "DP: reduce a model chunk's gradients in one bucket after its backward, not in buckets beside it "
         "(Megatron-LM's default without --overlap-grad-reduce)", NULL},
        {"overlap-param-gather", 0, 0, G_OPTION_ARG_NONE, &o->overlap_param_gather,
         "ZeRO-1/2: gather the updated weights during the next forward, not after the optimizer (Megatron-LM's flag)",
         NULL},
        {"grad-fp32", 0, 0, G_OPTION_ARG_NONE, &o->grad_fp32, "reduce gradients in fp32 (4 bytes)", NULL},
        {"bucket", 0, 0, G_OPTION_ARG_STRING, &o->bucket, "DP gradient bucket [25M, DDP's default]", "BYTES"},
        {"layer-fuse", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "layers per trace op (coarser, faster) [1]", "K"},
        {"layers", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "custom: transformer layers", "L"},
        {"hidden", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "custom: hidden size", "H"},
        {"heads", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "custom: attention heads", "A"},
        {"kv-heads", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "custom: KV heads [heads]", "K"},
        {"ffn", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "custom: FFN size [4*hidden]", "F"},
        {"vocab", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "custom: vocabulary [51200]", "V"},
        {"gated", 0, 0, G_OPTION_ARG_NONE, &o->gated, "custom: SwiGLU MLP, untied embeddings (Llama style)", NULL},
        {"kv-lora-rank", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "custom: multi-latent attention (DeepSeek's MLA), keys and values from a latent this wide "
         "(Megatron-LM's flag)", "R"},
        {"q-lora-rank", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "custom MLA: queries from a latent this wide [none: from the hidden state]", "R"},
        {"qk-head-dim", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "custom MLA: a head's query and key width without RoPE [128]", "D"},
        {"qk-pos-emb-head-dim", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "custom MLA: a head's query and key width with RoPE [64]", "D"},
        {"v-head-dim", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "custom MLA: a head's value width [128]", "D"},
        {"experts", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "custom MoE: routed experts per MoE layer", "E"},
        {"topk", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "custom MoE: experts per token [2]", "K"},
        {"expert-ffn", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg, "custom MoE: FFN size of one expert [ffn]", "F"},
        {"shared-ffn", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "custom MoE: FFN size of the shared expert(s), all of them together [none]", "F"},
        {"moe-layer-freq", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)moe_freq_arg,
         "custom MoE: every N-th layer an MoE layer, the others dense with FFN --ffn, or Megatron-LM's list of each "
         "layer's kind, 1 MoE, 0 dense (\"([0]+[1])*24\") (Megatron-LM's flag) [1]",
         "N|LIST"},
        {"kv-channels", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "custom: the width of one attention head's query, key and value (Megatron-LM's flag) [hidden/heads]", "D"},
        {"dense-layers", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "custom MoE: first layers that stay dense (FFN --ffn) [0]", "D"},
        {"window-size", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)window_arg,
         "custom: sliding-window attention, a query seeing itself and the W tokens before it (Megatron-LM's flag, "
         "\"W,0\" also read) [none]", "W"},
        {"attention-chunk-size", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)int_arg,
         "custom: chunked attention, a query seeing the tokens of its own chunk of C up to itself (Llama 4's "
         "attention_chunk_size; with --window-attn-skip-freq, the layers) [none]", "C"},
        {"window-attn-skip-freq", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)window_freq_arg,
         "custom: with --window-size (or --attention-chunk-size), every N-th layer (from 1) attends fully, or Megatron-LM's list of each "
         "layer's, 1 windowed, 0 full (\"([1]*3+[0])*8\") (Megatron-LM's flag) [every layer windowed]", "N|LIST"},
        {"fabric", 0, 0, G_OPTION_ARG_STRING, &o->fabric, "scale-out fabric override", "F"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->sets, "gpu.gemm_eff=0.6 etc., or a topology parameter", "K=V"},
        {0},
    };
    GOptionGroup *g = g_option_group_new("workload", "Workload options", "Show workload options", o, NULL);
    if (with_layout)
        g_option_group_add_entries(g, layout);
    g_option_group_add_entries(g, e);
    return g;
}

gboolean wl_opts_list_models(const wl_opts *o, FILE *out)
{
    if (!o->model || strcmp(o->model, "list"))
        return FALSE;
    int n;
    const workload_model *m = workload_presets(&n);
    fprintf(out, "%-18s %6s %6s %6s %4s %6s %7s %9s %8s  %s\n", "model", "layers", "hidden", "heads", "kv", "ffn",
            "vocab", "experts", "params_B", "source");
    for (int i = 0; i < n; i++) {
        char ex[24] = "-";
        if (m[i].experts > 0)
            g_snprintf(ex, sizeof ex, "%d top-%d", m[i].experts, m[i].topk);
        fprintf(out, "%-18s %6d %6d %6d %4d %6d %7d %9s %8.1f  %s\n", m[i].name, m[i].layers, m[i].hidden, m[i].heads,
                m[i].kv_heads, m[i].ffn, m[i].vocab, ex, workload_params(&m[i]) / 1e9, m[i].source);
    }
    return TRUE;
}

void wl_opts_clear(wl_opts *o)
{
    g_free(o->model);
    g_free(o->schedule);
    g_free(o->dtype);
    g_free(o->zero_s);
    g_free(o->bucket);
    g_free(o->reuse);
    g_free(o->topo);
    g_free(o->fabric);
    g_free(o->cp_comm);
    g_free(o->hier_cp);
    g_free(o->fp8_recipe);
    g_free(o->moe_dispatcher);
    g_free(o->attn_backend);
    g_free(o->capacity);
    g_free(o->imbalance);
    g_free(o->rc_gran);
    g_free(o->rc_modules);
    g_free(o->pp_layout);
    g_free(o->rc_method);
    g_strfreev(o->sets);
}

#define BAD(...) (g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, __VA_ARGS__), FALSE)

gboolean wl_opts_spec(const wl_opts *o, workload_spec *w, GError **err)
{
    *w = (workload_spec){0};
    if (!o->model)
        return BAD("--model is required (a preset, or custom with --layers --hidden --heads)");
    if (!strcmp(o->model, "custom")) {
        if (o->layers <= 0 || o->hidden <= 0 || o->heads <= 0)
            return BAD("--model custom needs --layers, --hidden and --heads (> 0)");
        w->m = (workload_model){.name = "custom", .layers = o->layers, .hidden = o->hidden, .heads = o->heads,
                                .kv_heads = o->kv_heads, .ffn = o->ffn, .vocab = o->vocab, .gated = o->gated,
                                .tied = !o->gated, .head_dim = o->kv_channels, .window = o->window, .chunk = o->chunk,
                                .window_freq = o->window_freq, .window_pattern = o->window_pattern,
                                .window_pattern_len = o->window_pattern ? (int)strlen(o->window_pattern) : 0,
                                .source = "command line"};
        if (o->experts > 0) { /* an MoE model: workload_spec_defaults fills ffn, then the expert FFN from it */
            w->m.experts = o->experts;
            w->m.topk = o->topk > 0 ? o->topk : 2;
            w->m.expert_ffn = o->expert_ffn;
            w->m.shared_ffn = o->shared_ffn;
            w->m.dense_layers = o->dense_layers;
            w->m.moe_freq = o->moe_freq;
            w->m.moe_pattern = o->moe_pattern;
            w->m.moe_pattern_len = o->moe_pattern ? (int)strlen(o->moe_pattern) : 0;
        } else if (o->topk || o->expert_ffn || o->shared_ffn || o->dense_layers || o->moe_freq || o->moe_pattern) {
            return BAD("--topk, --expert-ffn, --shared-ffn, --dense-layers and --moe-layer-freq describe an MoE model: "
                       "give --experts");
        }
        if (o->kv_lora > 0) { /* multi-latent attention, Megatron-LM's MLATransformerConfig defaults */
            w->m.kv_lora = o->kv_lora;
            w->m.q_lora = o->q_lora;
            w->m.qk_dim = o->qk_dim > 0 ? o->qk_dim : 128;
            w->m.rope_dim = o->rope_dim > 0 ? o->rope_dim : 64;
            w->m.v_dim = o->v_dim > 0 ? o->v_dim : 128;
        } else if (o->q_lora || o->qk_dim || o->rope_dim || o->v_dim) {
            return BAD("--q-lora-rank, --qk-head-dim, --qk-pos-emb-head-dim and --v-head-dim describe multi-latent "
                       "attention: give --kv-lora-rank");
        }
    } else {
        if (o->layers || o->hidden || o->heads || o->kv_heads || o->ffn || o->vocab || o->gated || o->kv_channels || o->experts ||
            o->topk || o->expert_ffn || o->shared_ffn || o->dense_layers || o->moe_freq || o->moe_pattern || o->q_lora ||
            o->kv_lora ||
            o->qk_dim || o->rope_dim || o->v_dim || o->window || o->chunk || o->window_freq || o->window_pattern)
            return BAD("--layers, --hidden, --heads, --kv-heads, --kv-channels, --ffn, --vocab, --gated, --window-size, "
                       "--attention-chunk-size and --window-attn-skip-freq describe --model custom; "
                       "'%s' is a preset with its own shape (--model list); --experts, --topk, --expert-ffn, "
                       "--shared-ffn, --dense-layers and --moe-layer-freq describe a custom MoE model, --kv-lora-rank "
                       "and its companions a custom model's multi-latent attention", o->model);
        const workload_model *m = workload_preset_find(o->model, err);
        if (!m)
            return FALSE;
        w->m = *m;
    }
    if (o->layers < 0 || o->hidden < 0 || o->heads < 0 || o->kv_heads < 0 || o->ffn < 0 || o->vocab < 0 ||
        o->gpus < 0 || o->tp < 0 || o->pp < 0 || o->dp < 0 || o->cp < 0 || o->ep < 0 || o->etp < 0 || o->micro_batch < 0 ||
        o->global_batch < 0 || o->seq < 0 || o->layer_fuse < 0)
        return BAD("sizes and counts must be positive");
    if (!workload_schedule_parse(o->schedule, &w->vpp, err))
        return FALSE;
    if (o->vstages > 0 || o->vstage_layers > 0) { /* Megatron-LM's ways of saying interleaved:V */
        int v = o->vstages, pp = o->pp > 0 ? o->pp : 1;
        if (o->vstages > 0 && o->vstage_layers > 0)
            return BAD("--num-virtual-stages-per-pipeline-rank and --num-layers-per-virtual-pipeline-stage: one or "
                       "the other (Megatron-LM refuses both)");
        if (o->vstage_layers > 0) { /* Megatron-LM: (layers / pp) / N, both divisions exact */
            if (w->m.layers % pp)
                return BAD("--num-layers-per-virtual-pipeline-stage: the %d layers do not split evenly over pp %d "
                           "(Megatron-LM asserts)", w->m.layers, pp);
            if ((w->m.layers / pp) % o->vstage_layers)
                return BAD("--num-layers-per-virtual-pipeline-stage %d: a stage's %d layers do not split into chunks "
                           "of %d (Megatron-LM asserts)", o->vstage_layers, w->m.layers / pp, o->vstage_layers);
            v = w->m.layers / pp / o->vstage_layers;
        }
        if (o->schedule && w->vpp != v)
            return BAD("--schedule %s with %d model chunks per pp rank from Megatron-LM's flag: one or the other",
                       o->schedule, v);
        w->vpp = v;
    }
    w->dtype = COMPUTE_BF16;
    if (o->dtype) {
        int d = compute_dtype_parse(o->dtype);
        if (d < 0 || d == COMPUTE_FP32)
            return BAD("--dtype '%s': expected bf16, fp16 or fp8", o->dtype);
        w->dtype = (compute_dtype)d;
    }
    if (o->zero_s) {
        if (strlen(o->zero_s) != 1 || o->zero_s[0] < '0' || o->zero_s[0] > '3')
            return BAD("--zero '%s': expected 0, 1, 2 or 3", o->zero_s);
        w->zero = o->zero_s[0] - '0';
    }
    if (o->fsdp) {
        if (o->zero_s && w->zero != 3)
            return BAD("--fsdp is ZeRO-3; it contradicts --zero %d", w->zero);
        w->zero = 3;
        w->fsdp = true;
    }
    if (o->bucket) {
        uint64_t b;
        if (!cli_parse_bytes(o->bucket, &b, err))
            return FALSE;
        w->bucket_bytes = b;
        if (b < 1024)
            return BAD("--bucket must be >= 1K");
    }
    if (o->reuse) {
        char *end;
        double v = g_ascii_strtod(o->reuse, &end);
        if (end == o->reuse)
            return BAD("--reuse-distance '%s': expected a number of parameters", o->reuse);
        if (*end == 'K' || *end == 'M' || *end == 'G' || *end == 'B')
            v *= *end == 'K' ? 1e3 : *end == 'M' ? 1e6 : 1e9, end++;
        if (*end || !(v >= 1) || v > 1e15)
            return BAD("--reuse-distance '%s': expected 1 to 1e15 parameters (1e9, 500M, 2G)", o->reuse);
        w->reuse_distance = v;
        if (w->zero != 3 || w->fsdp)
            return BAD("--reuse-distance is DeepSpeed ZeRO-3's (--zero 3)");
    }
    if (o->cp_comm && !workload_cp_comm_parse(o->cp_comm, &w->cp_comm, err))
        return FALSE;
    if (o->fp8_recipe && !workload_fp8_recipe_parse(o->fp8_recipe, &w->fp8_recipe, err))
        return FALSE;
    if (o->attn_backend && !workload_attn_backend_parse(o->attn_backend, &w->attn_backend, err))
        return FALSE;
    if (o->moe_dispatcher && !workload_moe_dispatcher_parse(o->moe_dispatcher, &w->moe_dispatcher, err))
        return FALSE;
    w->router_groups = o->router_groups;
    w->router_group_topk = o->router_group_topk;
    int ha = 0, hb = 0; /* --hierarchical-context-parallel-sizes "A,B" (or Megatron-LM's "A B"): A x B = cp */
    if (o->hier_cp) {
        int n = 0;
        if (sscanf(o->hier_cp, "%d%*[, ]%d%n", &ha, &hb, &n) != 2 || o->hier_cp[n] || ha < 2 || hb < 2 ||
            ha > 1 << 15 || hb > 1 << 15)
            return BAD("--hierarchical-context-parallel-sizes '%s': expected A,B, two sizes of at least 2", o->hier_cp);
        if (o->cp > 0 && ha * hb != o->cp)
            return BAD("--hierarchical-context-parallel-sizes %d,%d: A x B = %d, not --cp %d", ha, hb, ha * hb, o->cp);
        w->cp_a2a = ha;
    }
    w->gpus = o->gpus;
    w->tp = o->tp;
    w->pp = o->pp;
    w->dp = o->dp;
    w->cp = o->cp > 0 ? o->cp : ha * hb; /* the sizes give cp when --cp does not */
    w->ep = o->ep;
    w->etp = o->etp;
    w->sp = o->sp;
    w->zero3_param_sync = o->zero3_per_param;
    w->micro_batch = o->micro_batch;
    w->global_batch = o->global_batch;
    w->seq = o->seq;
    bool sel = o->rc_gran && !strcmp(o->rc_gran, "selective");
    if (o->rc_gran && !sel && strcmp(o->rc_gran, "full"))
        return BAD("--recompute-granularity '%s': expected full or selective", o->rc_gran);
    if (o->recompute && sel)
        return BAD("--recompute is --recompute-granularity full; it contradicts selective");
    if (o->rc_modules && !sel)
        return BAD("--recompute-modules needs --recompute-granularity selective");
    w->recompute = o->recompute || (o->rc_gran && !sel);
    if (o->rc_method) {
        if (strcmp(o->rc_method, "uniform") && strcmp(o->rc_method, "block"))
            return BAD("--recompute-method '%s': expected uniform or block", o->rc_method);
        w->recompute_method = strcmp(o->rc_method, "block") ? WL_RC_UNIFORM : WL_RC_BLOCK;
        if (w->recompute_method == WL_RC_BLOCK && o->rc_layers <= 0)
            return BAD("--recompute-method block needs --recompute-num-layers (the layers a model chunk reruns)");
    }
    w->recompute_layers = o->rc_layers;
    if ((o->rc_method || o->rc_layers) && !w->recompute)
        return BAD("--recompute-method and --recompute-num-layers are full recomputation's: give --recompute or "
                   "--recompute-granularity full (Megatron-LM refuses them with selective)");
    if (sel && !workload_recompute_modules_parse(o->rc_modules ? o->rc_modules : "core_attn", &w->recompute_modules,
                                                 err))
        return FALSE;
    w->overlap_param_gather = o->overlap_param_gather;
    w->grad_reduce_after = o->no_overlap_grad;
    w->tp_async_bwd = o->tp_async_bwd;
    w->tp_comm_overlap = o->tp_comm_overlap;
    w->fp8_param_gather = o->fp8_param_gather;
    w->mxfp8_grad_buf = o->mxfp8_grad_buf;
    w->moe_shared_overlap = o->moe_shared_overlap;
    w->moe_ep_overlap = o->moe_ep_overlap;
    w->delay_wgrad = o->delay_wgrad;
    w->mtp = o->mtp;
    if (o->capacity) {
        char *end;
        double c = g_ascii_strtod(o->capacity, &end);
        if (end == o->capacity || *end || !(c > 0) || c > 1000)
            return BAD("--moe-expert-capacity-factor '%s': expected a number above 0, at most 1000 (1.0, 1.25)",
                       o->capacity);
        w->capacity_factor = c;
    }
    w->pad_to_capacity = o->pad_capacity;
    if (o->imbalance) {
        char *end;
        double f = g_ascii_strtod(o->imbalance, &end);
        if (end == o->imbalance || *end || !(f >= 1) || f > 1e6)
            return BAD("--moe-load-imbalance '%s': expected a number from 1 (balanced) up to the EP size (1.2, 2)",
                       o->imbalance);
        w->moe_imbalance = f;
    }
    w->first_stage_layers = o->first_stage_layers;
    w->last_stage_layers = o->last_stage_layers;
    w->grad_bytes = o->grad_fp32 ? 4 : 2;
    w->layer_fuse = o->layer_fuse;
    if (o->pp_layout)
        w->pp_layout = g_intern_string(o->pp_layout);
    workload_spec_defaults(w);
    if (o->acct_emb || o->acct_loss) { /* Megatron-LM's even split with them, as a layout */
        if (o->pp_layout || o->first_stage_layers || o->last_stage_layers)
            return BAD("--account-for-embedding/loss-in-pipeline-split with %s: one way of splitting the layers "
                       "(Megatron-LM refuses both)", o->pp_layout ? "--pipeline-model-parallel-layout"
                                                                   : "--decoder-first/last-pipeline-num-layers");
        g_autofree char *s = workload_layout_split(w->m.layers, w->pp, w->vpp, w->mtp, o->acct_emb, o->acct_loss, err);
        if (!s)
            return FALSE;
        w->pp_layout = g_intern_string(s);
    }
    return workload_layout_apply(w, err); /* the layout's model chunks over pp */
}

char **wl_opts_topo_sets(const wl_opts *o)
{
    GPtrArray *a = g_ptr_array_new();
    for (char **s = o->sets; s && *s; s++)
        if (strncmp(*s, "gpu.", 4))
            g_ptr_array_add(a, g_strdup(*s));
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

void wl_opts_system(const topo *t, const gpu_model *g, workload_spec *w)
{
    w->gpu_cc = g->spec.sm_cc;
    int d = t->gpus_per_node * MAX(t->nvl_domain_nodes, 1);
    w->domain_gpus = w->gpus > 0 ? MIN(d, w->gpus) : d;
}

gboolean wl_opts_gpu(const wl_opts *o, const topo *t, gpu_model *g, GError **err)
{
    const gpu_spec *spec = compute_gpu_find(t->gpu_model, t->gpu_sm, err);
    if (!spec)
        return FALSE;
    compute_model_init(g, spec);
    if (t->gpu_hbm_Bps > 0) /* the topology's number for its exact SKU */
        g->spec.hbm_Bps = t->gpu_hbm_Bps;
    /* the topology's calibration (docs/calibration.md "What a topology takes"):
     * measured rates as fractions of the datasheet; --set gpu.* still wins */
    double ge = t->calib_gemm_Fps / g->spec.peak_flops[COMPUTE_BF16], he = 2 * t->calib_hbm_copy_Bps / g->spec.hbm_Bps;
    /* under 1% (a GEMM at 1e-300 FLOP/s): kernel times overflowed the picosecond clock */
    bool gbad = ge > 1.02 || (ge > 0 && ge < 0.01), hbad = he > 1.02 || (he > 0 && he < 0.01);
    if (gbad || hbad) {
        /* t->calibration is "params-path (device): ...": name the params file too */
        const char *cal = t->calibration ? t->calibration : "", *par = strstr(cal, " (");
        g_set_error(err, COMPUTE_ERROR, COMPUTE_ERROR_SET,
                    "%s: $.calibration: %.*s%scalibration %s %.1f %s %s %s's datasheet %.1f (a calibration of another GPU?)",
                    t->path ? t->path : t->name, (int)(par ? par - cal : 0), cal, par ? ": " : "",
                    gbad ? "GEMM bf16" : "HBM traffic",
                    gbad ? t->calib_gemm_Fps / 1e12 : 2 * t->calib_hbm_copy_Bps / 1e9, gbad ? "TFLOP/s" : "GB/s",
                    (gbad ? ge : he) > 1.02 ? "exceeds" : "is under 1% of", g->spec.name,
                    gbad ? g->spec.peak_flops[COMPUTE_BF16] / 1e12 : g->spec.hbm_Bps / 1e9);
        return FALSE;
    }
    if (ge > 0)
        g->eff_flops[KC_GEMM] = MIN(ge, 1), g->gemm_k0 = t->calib_gemm_k0;
    for (int k = 0; he > 0 && k < KC_KINDS; k++)
        g->eff_bytes[k] = MIN(he, 1);
    for (char **s = o->sets; s && *s; s++)
        if (!strncmp(*s, "gpu.", 4) && !compute_model_set(g, *s, err))
            return FALSE;
    return TRUE;
}

gboolean wl_step_run(const wl_opts *o, const char *system, const char *fabric, const workload_spec *w, gboolean exact,
                     wl_step *out, GError **err)
{
    memset(out, 0, sizeof *out);
    if (o->timeline)
        exact = TRUE; /* a timeline needs every chunk on the shared fabric (docs/traces.md) */
    g_auto(GStrv) sets = wl_opts_topo_sets(o);
    topo_opts to = {.fabric = fabric ? fabric : o->fabric, .sets = (const char *const *)sets};
    topo *probe = topo_load(system, &to, err);
    if (!probe)
        return FALSE;
    int gpn = probe->gpus_per_node;
    topo_free(probe);
    if (w->gpus <= 0 || (w->gpus > gpn && w->gpus % gpn)) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_LAYOUT, "%s: %d GPUs is not a whole number of %d-GPU servers",
                    system, w->gpus, gpn);
        return FALSE;
    }
    to.nodes = w->gpus > gpn ? w->gpus / gpn : 1;
    to.gpus = w->gpus < gpn ? w->gpus : 0;
    topo *t = topo_load(system, &to, err), *ti = NULL;
    if (!t)
        return FALSE;
    gpu_model g;
    trace *tr = NULL;
    workload_spec ws = *w; /* with what the system gives it (wl_opts_system) */
    gboolean ok = wl_opts_gpu(o, t, &g, err);
    if (ok)
        wl_opts_system(t, &g, &ws);
    ok = ok && wl_opts_fits_memory(&ws, WL_BYTES_PER_OP_REPLAY, "replay", err) &&
         (tr = workload_generate(&ws, &g, err)) != NULL && (exact || (ti = topo_load(system, &to, err)) != NULL);
    if (ok) {
        g_strlcpy(out->gpu, g.spec.name, sizeof out->gpu);
        out->mem_bytes = workload_memory_bytes(&ws);
        coll_system sys, iso;
        topo_coll_system(&sys, t, COLL_LAUNCH_US, 1);
        sys.exact = exact;
        ok = coll_nccl_env_read(&sys.nccl, err) && sys_check_p2p_env(&sys.nccl, t, err); /* NCCL_MAX_NCHANNELS etc. */
        if (ok)
            coll_nccl_env_apply(&sys.nccl, t->fab);
        if (ti) {
            topo_coll_system(&iso, ti, COLL_LAUNCH_US, 1);
            iso.nccl = sys.nccl;
            if (ok)
                coll_nccl_env_apply(&iso.nccl, ti->fab);
        }
        replay_opts ro = {.sys = &sys, .compute_scale = 1, .iso = ti ? &iso : NULL, .by_name = o->by_name,
                          .record = o->timeline != NULL,
                          .gpu_sms = g.sm_share ? g.spec.sms : 0, .sm_penalty = g.comm_penalty};
        /* NCCL_ALGO / NCCL_PROTO limit the tuner as in NCCL (all_reduce's entry of a per-collective list) */
        ok = ok && coll_tune_parse_mask(g_getenv("NCCL_ALGO"), COLL_ALL_REDUCE, true, &ro.algo_mask, err) &&
             coll_tune_parse_mask(g_getenv("NCCL_PROTO"), COLL_ALL_REDUCE, false, &ro.proto_mask, err);
        replay_result res;
        if (ok && (ok = replay_run(tr, &ro, &res, err))) {
            double hw = 0, exp = 0, exo = 0, cmp = 0, idle = 0;
            for (int r = 0; r < tr->nranks; r++) {
                for (guint i = 0; i < tr->ranks[r].ops->len; i++)
                    hw += g_array_index(tr->ranks[r].ops, trace_op, i).flops;
                exp += (double)res.ranks[r].exposed_comm_ps;
                exo += (double)res.ranks[r].exposed_net_ps;
                cmp += (double)res.ranks[r].compute_ps;
                idle += (double)res.ranks[r].idle_ps;
            }
            out->step_s = res.end_ps * 1e-12;
            out->tokens_s = (double)w->global_batch * w->seq / out->step_s;
            out->tflops = hw / out->step_s / w->gpus / 1e12;
            out->mfu = workload_step_flops(w) / out->step_s / w->gpus / compute_peak(&g, w->dtype);
            out->exposed = exp / tr->nranks / (double)res.end_ps;
            out->exposed_net = exo / tr->nranks / (double)res.end_ps;
            out->compute = cmp / tr->nranks / (double)res.end_ps;
            out->idle = idle / tr->nranks / (double)res.end_ps;
            g_strlcpy(out->server_fabric, t->nvswitch || t->nvlink_links > 0 ? "NVLink" : "PCIe",
                      sizeof out->server_fabric);
            g_strlcpy(out->net_fabric, sys.nnodes > 1 && t->fabric_name ? t->fabric_name : "", sizeof out->net_fabric);
            out->wall_s = res.wall_s;
            out->events = res.events + res.memo_events;
            out->dp = w->dp;
            out->nranks = tr->nranks;
            out->by_name = res.exposed_by_name; /* taken over */
            res.exposed_by_name = NULL;
            out->compute_by_name = res.compute_by_name;
            res.compute_by_name = NULL;
            if (o->timeline && (ok = timeline_write(o->timeline, tr, &res, sys.fab, 64, err)) &&
                fabric_records_dropped(sys.fab))
                fprintf(stderr, "conveyor: %s holds the links' first %u chunks; %" G_GUINT64_FORMAT
                                " later ones are not in it\n",
                        o->timeline, FABRIC_MAX_RECORDS, fabric_records_dropped(sys.fab));
            if (!ok)
                wl_step_clear(out);
            replay_result_clear(&res);
        }
    }
    trace_free(tr);
    topo_free(ti);
    topo_free(t);
    return ok;
}

void wl_step_clear(wl_step *s)
{
    if (s->by_name)
        g_array_free(s->by_name, TRUE);
    if (s->compute_by_name)
        g_array_free(s->compute_by_name, TRUE);
    s->by_name = s->compute_by_name = NULL;
}

bool wl_opts_megatron_note(const char *cmd, const workload_spec *w)
{
    if (w->tp <= 1 || w->ep <= 1 || w->sp)
        return false;
    fprintf(stderr, "conveyor %s: note: Megatron-LM requires --sp with tp > 1 and ep > 1 (its TransformerConfig "
                    "refuses the layout); generated without it, each MoE layer's tokens all-gathered back over TP "
                    "after the combine\n", cmd);
    return true;
}

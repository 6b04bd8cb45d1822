/* traces/workload.c - the model presets (published shapes with sources),
 * the spec's defaults and checks, and the closed forms the generator and
 * its tests share: parameters, step FLOPs, memory. The trace itself is
 * built in traces/workload_gen.c.
 */
#include "traces/workload.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(conveyor-workload-error-quark, workload_error)

#define MEGATRON_SC21 "Narayanan et al. SC'21 (arXiv:2104.04473) Table 1; vocab 51200, FFN 4h"
#define MEGATRON_2020 "NVIDIA/Megatron-LM README (Sep 2020) scaling table; vocab 51200, FFN 4h"
#define GPT(n, l, h, a, src)                                                                                        \
    {.name = n, .layers = l, .hidden = h, .heads = a, .kv_heads = a, .ffn = 4 * (h), .vocab = 51200, .tied = true,   \
     .source = src}
/* Llama-style: SwiGLU MLP, untied embeddings */
#define LLAMA(n, l, h, a, kv, f, v, src)                                                                            \
    .name = n, .layers = l, .hidden = h, .heads = a, .kv_heads = kv, .ffn = f, .vocab = v, .gated = true, .source = src

static const workload_model presets[] = {
    {.name = "gpt3-175b", .layers = 96, .hidden = 12288, .heads = 96, .kv_heads = 96, .ffn = 49152, .vocab = 50257,
     .tied = true,
     .source = "Brown et al. 2020 (arXiv:2005.14165) Table 2.1: 96 layers, d_model 12288, 96 heads, d_ff 4 d_model; "
               "GPT-2 BPE vocab 50257"},
    {LLAMA("llama2-7b", 32, 4096, 32, 32, 11008, 32000,
           "Touvron et al. 2023 (arXiv:2307.09288) and meta-llama/Llama-2-7b-hf config.json")},
    {LLAMA("llama2-13b", 40, 5120, 40, 40, 13824, 32000, "Touvron et al. 2023 and meta-llama/Llama-2-13b-hf config.json")},
    {LLAMA("llama2-70b", 80, 8192, 64, 8, 28672, 32000,
           "Touvron et al. 2023 (GQA, 8 KV heads) and meta-llama/Llama-2-70b-hf config.json")},
    {LLAMA("llama3-8b", 32, 4096, 32, 8, 14336, 128256,
           "Llama 3 herd paper (arXiv:2407.21783) Table 3 and meta-llama/Meta-Llama-3-8B config.json")},
    {LLAMA("llama3-70b", 80, 8192, 64, 8, 28672, 128256, "Llama 3 herd paper (arXiv:2407.21783) Table 3")},
    {LLAMA("llama3-405b", 126, 16384, 128, 8, 53248, 128256, "Llama 3 herd paper (arXiv:2407.21783) Table 3")},
    {LLAMA("mistral-7b", 32, 4096, 32, 8, 14336, 32000,
           "Jiang et al. 2023 (arXiv:2310.06825) Table 1: 32 layers, dim 4096, 32 heads of 128, 8 KV heads, hidden "
           "14336, window 4096 (a token attends to itself and the 4096 before it, every layer), vocab 32000"),
     .window = 4096},
    {LLAMA("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000,
           "Jiang et al. 2024 (arXiv:2401.04088) Table 1: 32 layers, dim 4096, 32 heads, 8 KV heads, hidden 14336, "
           "8 experts, top-2, vocab 32000"),
     .experts = 8, .topk = 2, .expert_ffn = 14336},
    {LLAMA("deepseek-v3-like", 61, 7168, 128, 128, 18432, 129280,
           "DeepSeek-V3 report (arXiv:2412.19437) and its config.json: 61 layers (first 3 dense, FFN 18432), hidden "
           "7168, 128 heads of MLA (q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, "
           "v_head_dim 128), 256 routed experts (FFN 2048) top-8 + 1 shared, vocab 129280; its MTP layer with "
           "--mtp-num-layers 1 (off by default, as in Megatron-LM); "
           "node-limited routing, 4 of 8 groups (n_group, topk_group; Megatron-Bridge's DeepSeekV3 config: "
           "moe_router_num_groups 8, moe_router_group_topk 4)"),
     .experts = 256, .topk = 8, .expert_ffn = 2048, .shared_ffn = 2048, .dense_layers = 3, .router_groups = 8,
     .router_group_topk = 4, .q_lora = 1536, .kv_lora = 512, .qk_dim = 128, .rope_dim = 64, .v_dim = 128},
    {LLAMA("kimi-k2", 61, 7168, 64, 64, 18432, 163840,
           "Kimi K2 (moonshotai/Kimi-K2-Instruct config.json; Megatron-Bridge's KimiK2Provider): DeepSeek-V3's "
           "layout with 64 heads of MLA (q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128, "
           "qk_rope_head_dim 64, v_head_dim 128), first layer dense (FFN 18432), 384 routed experts (FFN 2048) "
           "top-8 + 1 shared, one expert group, vocab 163840; 1 T parameters in its model card (1.026 T counted here)"),
     .experts = 384, .topk = 8, .expert_ffn = 2048, .shared_ffn = 2048, .dense_layers = 1, .q_lora = 1536,
     .kv_lora = 512, .qk_dim = 128, .rope_dim = 64, .v_dim = 128},
    {LLAMA("llama4-scout", 48, 5120, 40, 8, 16384, 202048,
           "meta-llama/Llama-4-Scout-17B-16E config.json (text_config): 48 layers, hidden 5120, 40 heads of 128, 8 "
           "KV heads, 16 experts (FFN 8192) top-1 + a shared expert (8192) in every layer (interleave_moe_layer_step "
           "1), vocab 202048, untied; chunked attention of 8192 in the RoPE layers, full attention in every 4th "
           "(no_rope_layers); 109 B parameters in its card with the vision encoder"),
     .experts = 16, .topk = 1, .expert_ffn = 8192, .shared_ffn = 8192, .chunk = 8192, .window_freq = 4},
    {LLAMA("llama4-maverick", 48, 5120, 40, 8, 16384, 202048,
           "meta-llama/Llama-4-Maverick-17B-128E config.json (text_config): as Scout with 128 experts (FFN 8192) "
           "top-1 + a shared expert (8192) in the odd layers (interleave_moe_layer_step 2: layers 1, 3, ... from 0), "
           "dense FFN 16384 (intermediate_size_mlp) in the others; about 400 B parameters in its card"),
     .experts = 128, .topk = 1, .expert_ffn = 8192, .shared_ffn = 8192, .chunk = 8192, .window_freq = 4,
     .moe_pattern = "010101010101010101010101010101010101010101010101", .moe_pattern_len = 48},
    {LLAMA("qwen3-30b-a3b", 48, 2048, 32, 4, 6144, 151936,
           "Qwen/Qwen3-30B-A3B config.json: 48 layers, hidden 2048, 32 heads of 128 (head_dim), 4 KV heads, 128 "
           "experts (moe_intermediate_size 768) top-8 in every layer (intermediate_size unused), no shared expert, "
           "vocab 151936, untied"),
     .experts = 128, .topk = 8, .expert_ffn = 768, .head_dim = 128},
    {LLAMA("qwen3-235b-a22b", 94, 4096, 64, 4, 12288, 151936,
           "Qwen/Qwen3-235B-A22B config.json: 94 layers, hidden 4096, 64 heads of 128 (head_dim), 4 KV heads, 128 "
           "experts (moe_intermediate_size 1536) top-8 in every layer (intermediate_size unused), no shared "
           "expert, vocab 151936, untied; 235 B parameters in its model card"),
     .experts = 128, .topk = 8, .expert_ffn = 1536, .head_dim = 128},
    {LLAMA("gpt-oss-20b", 24, 2880, 64, 8, 2880, 201088,
           "openai/gpt-oss-20b config.json and the gpt-oss model card (arXiv:2508.10925): 24 layers, hidden 2880, "
           "64 heads of 64 (head_dim), 8 KV heads, 32 experts (FFN 2880, SwiGLU) top-4 in every layer, vocab "
           "201088, untied; sliding window 128 on alternate layers from the first (layer_types; Megatron-LM: "
           "--window-size 128,0 --window-attn-skip-freq 2); the biases and attention sinks not counted"),
     .experts = 32, .topk = 4, .expert_ffn = 2880, .head_dim = 64, .window = 128, .window_freq = 2},
    {LLAMA("gpt-oss-120b", 36, 2880, 64, 8, 2880, 201088,
           "openai/gpt-oss-120b config.json and the gpt-oss model card (arXiv:2508.10925): 36 layers, hidden 2880, "
           "64 heads of 64 (head_dim), 8 KV heads, 128 experts (FFN 2880, SwiGLU) top-4 in every layer, vocab "
           "201088, untied; sliding window 128 on alternate layers from the first (layer_types; Megatron-LM: "
           "--window-size 128,0 --window-attn-skip-freq 2); the biases and attention sinks not counted"),
     .experts = 128, .topk = 4, .expert_ffn = 2880, .head_dim = 64, .window = 128, .window_freq = 2},
    GPT("gpt-1.7b", 24, 2304, 24, MEGATRON_SC21),
    GPT("gpt-3.6b", 30, 3072, 32, MEGATRON_SC21),
    GPT("gpt-7.5b", 36, 4096, 32, MEGATRON_SC21),
    GPT("gpt-18b", 40, 6144, 48, MEGATRON_SC21),
    GPT("gpt-39b", 48, 8192, 64, MEGATRON_SC21),
    GPT("gpt-76b", 60, 10240, 80, MEGATRON_SC21),
    GPT("gpt-145b", 80, 12288, 96, MEGATRON_SC21),
    GPT("gpt-310b", 96, 16384, 128, MEGATRON_SC21),
    GPT("gpt-530b", 105, 20480, 128, MEGATRON_SC21),
    GPT("gpt-1t", 128, 25600, 160, MEGATRON_SC21),
    GPT("megatron2020-1.2b", 24, 1920, 15, MEGATRON_2020),
    GPT("megatron2020-2.5b", 30, 2304, 18, MEGATRON_2020),
    GPT("megatron2020-4.2b", 36, 3072, 24, MEGATRON_2020),
    GPT("megatron2020-8.3b", 42, 4096, 32, MEGATRON_2020),
};

const workload_model *workload_presets(int *n)
{
    *n = (int)G_N_ELEMENTS(presets);
    return presets;
}

const workload_model *workload_preset_find(const char *name, GError **err)
{
    for (size_t i = 0; i < G_N_ELEMENTS(presets); i++)
        if (name && !g_ascii_strcasecmp(name, presets[i].name))
            return &presets[i];
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(presets); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", presets[i].name);
    g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_MODEL, "unknown model '%s' (presets: %s; or custom)",
                name ? name : "", s->str);
    g_string_free(s, TRUE);
    return NULL;
}

void workload_spec_defaults(workload_spec *w)
{
    if (w->router_groups == 0 && w->router_group_topk == 0) { /* the model's routing unless given */
        w->router_groups = w->m.router_groups;
        w->router_group_topk = w->m.router_group_topk;
    }
    if (w->cp <= 0)
        w->cp = 1;
    if (w->ep <= 0)
        w->ep = 1;
    if (w->etp <= 0)
        w->etp = 1;
    if (w->tp <= 0)
        w->tp = 1;
    if (w->pp <= 0)
        w->pp = 1;
    int64_t rep = (int64_t)w->tp * w->pp * w->cp; /* GPUs of one data-parallel replica */
    if (w->dp <= 0 && w->gpus > 0 && w->gpus % rep == 0)
        w->dp = (int)(w->gpus / rep);
    if (w->gpus <= 0) { /* no --gpus: one replica, or --dp of them */
        if (w->dp <= 0)
            w->dp = 1;
        int64_t n = rep * w->dp;
        w->gpus = n <= G_MAXINT ? (int)n : 0; /* 0: workload_spec_check says so */
    }
    if (w->micro_batch <= 0)
        w->micro_batch = 1;
    if (w->seq <= 0)
        w->seq = 2048;
    if (w->global_batch <= 0 && w->dp > 0) { /* enough microbatches to fill the pipeline twice */
        int64_t gb = (int64_t)w->micro_batch * w->dp * (w->pp > 1 ? 2 * (int64_t)w->pp : 1);
        w->global_batch = gb <= G_MAXINT ? (int)gb : 0; /* 0: workload_spec_check says why */
    }
    if (w->grad_bytes <= 0)
        w->grad_bytes = 2;
    if (w->bucket_bytes == 0)
        w->bucket_bytes = 25u << 20;
    if (w->layer_fuse <= 0)
        w->layer_fuse = 1;
    if (w->reuse_distance <= 0)
        w->reuse_distance = 1e9;
    if (w->vpp <= 0)
        w->vpp = 1;
    if (w->m.kv_heads <= 0)
        w->m.kv_heads = w->m.heads;
    if (w->m.ffn <= 0 && w->m.hidden <= WL_MAX_HIDDEN) /* a larger hidden fails the shape check */
        w->m.ffn = 4 * w->m.hidden;
    if (w->m.vocab <= 0)
        w->m.vocab = 51200;
    if (w->m.experts > 0 && w->m.expert_ffn <= 0)
        w->m.expert_ffn = w->m.ffn;
}

#define LAYOUT(...) (g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_LAYOUT, __VA_ARGS__), false)
#define VALUE(...) (g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, __VA_ARGS__), false)

bool workload_schedule_parse(const char *s, int *vpp, GError **err)
{
    if (!s || !g_ascii_strcasecmp(s, "1f1b")) {
        *vpp = 1;
        return true;
    }
    static const char pre[] = "interleaved:";
    if (g_ascii_strncasecmp(s, pre, sizeof pre - 1))
        return VALUE("--schedule '%s': expected 1f1b or interleaved:V (V model chunks per pipeline rank)", s);
    const char *v = s + sizeof pre - 1;
    char *end = NULL;
    gint64 n = g_ascii_strtoll(v, &end, 10);
    if (!g_ascii_isdigit(*v) || *end)
        return VALUE("--schedule '%s': V must be an integer >= 2 (interleaved:2, interleaved:4, ...)", s);
    if (n < 2)
        return VALUE("--schedule '%s': interleaving needs V >= 2 model chunks per pipeline rank "
                     "(one chunk is plain 1f1b)", s);
    if (n > 1000)
        return VALUE("--schedule '%s': V must be at most 1000", s);
    *vpp = (int)n;
    return true;
}

/* The index of s (case aside) among n names, or -1; and the name of i. */
static int name_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (!g_ascii_strcasecmp(s, names[i]))
            return i;
    return -1;
}

static const char *name_of(const char *const *names, int n, int i)
{
    return i >= 0 && i < n ? names[i] : "?";
}

/* Option `opt`'s value s, one of n names, -> *out; false with *err naming what was expected. */
static bool name_parse(const char *opt, const char *const *names, int n, const char *s, int *out, const char *expected,
                       GError **err)
{
    int i = name_index(names, n, s);
    if (i < 0)
        return VALUE("--%s '%s': expected %s", opt, s ? s : "", expected);
    *out = i;
    return true;
}

static const char *const cp_comm_names[] = {[WL_CP_P2P] = "p2p", [WL_CP_ALLGATHER] = "allgather", [WL_CP_A2A] = "a2a",
                                            [WL_CP_A2A_P2P] = "a2a+p2p"};

bool workload_cp_comm_parse(const char *s, int *out, GError **err)
{
    return name_parse("cp-comm", cp_comm_names, G_N_ELEMENTS(cp_comm_names), s, out,
                      "p2p (a ring of K, V beside attention), allgather, a2a or a2a+p2p", err);
}

const char *workload_cp_comm_name(int c)
{
    return name_of(cp_comm_names, G_N_ELEMENTS(cp_comm_names), c);
}

const char *workload_cp_comm_label(const workload_spec *w, char *buf, size_t n)
{
    if (w->cp_comm == WL_CP_A2A_P2P && w->cp_a2a > 0)
        g_snprintf(buf, n, "a2a+p2p %dx%d", w->cp_a2a, w->cp / w->cp_a2a);
    else
        g_strlcpy(buf, workload_cp_comm_name(w->cp_comm), n);
    return buf;
}

const char *workload_fp8_param_gather_label(const workload_spec *w)
{
    if (!w->fp8_param_gather)
        return "";
    if (w->fp8_recipe != WL_FP8_MXFP8)
        return ", weights gathered in fp8";
    return w->mxfp8_grad_buf ? ", weights kept in mxfp8, gathered in bf16 into the gradient buffer"
                             : ", weights kept in mxfp8, gathered in bf16";
}

static const char *const moe_dispatcher_names[] = {[WL_MOE_ALLTOALL] = "alltoall", [WL_MOE_FLEX] = "flex"};

bool workload_moe_dispatcher_parse(const char *s, int *out, GError **err)
{
    if (s && !g_ascii_strcasecmp(s, "allgather"))
        return VALUE("--moe-token-dispatcher-type allgather (Megatron-LM's gather of every token to every EP "
                     "rank) is not modelled: alltoall or flex");
    return name_parse("moe-token-dispatcher-type", moe_dispatcher_names, G_N_ELEMENTS(moe_dispatcher_names), s, out,
                      "alltoall or flex (Megatron-LM's names; flex runs DeepEP)", err);
}

const char *workload_moe_dispatcher_name(int d)
{
    return name_of(moe_dispatcher_names, G_N_ELEMENTS(moe_dispatcher_names), d);
}

static const char *const attn_backend_names[] = {"flash", "fused", "auto", "unfused", "local"};

bool workload_attn_backend_parse(const char *s, int *out, GError **err)
{
    int i;
    if (!name_parse("attention-backend", attn_backend_names, G_N_ELEMENTS(attn_backend_names), s, &i,
                    "flash, fused or auto (causal tiles skipped), unfused or local (the full s x s product)", err))
        return false;
    *out = i <= 2 ? WL_ATTN_FLASH : WL_ATTN_UNFUSED;
    return true;
}

const char *workload_attn_backend_name(int b)
{
    return b == WL_ATTN_UNFUSED ? "unfused" : "flash";
}

/* The share of an L x L causal square a flash kernel computes: row tile m (WL_FLASH_TILE_ROWS rows,
 * the last one short) against the keys up to its last row. */
static double causal_square_frac(double L)
{
    double rows = WL_FLASH_TILE_ROWS, work = 0;
    if (L <= rows)
        return 1;
    for (double r0 = 0; r0 < L; r0 += rows)
        work += MIN(rows, L - r0) * MIN(L, r0 + rows);
    return work / (L * L);
}

/* The share of an L x L causal square a flash kernel computes when a query sees itself and the W keys
 * before it: row tile [r0, r1) takes the key blocks of WL_FLASH_TILE_COLS from the one holding key
 * r0 - W to its last row (FlashAttention-2's n_block_min, n_block_max for a window (W, 0)). */
static double band_square_frac(double L, double W)
{
    double rows = WL_FLASH_TILE_ROWS, cols = WL_FLASH_TILE_COLS, work = 0;
    for (double r0 = 0; r0 < L; r0 += rows) {
        double k0 = r0 > W ? floor((r0 - W) / cols) * cols : 0;
        work += MIN(rows, L - r0) * (MIN(L, r0 + rows) - k0);
    }
    return work / (L * L);
}

/* ... and when a query sees the tokens of its chunk of C up to itself: row tile [r0, r1) takes the key
 * blocks from its first row's chunk's start (a tile spanning two chunks counted from the first's) */
static double chunk_square_frac(double L, double C)
{
    double rows = WL_FLASH_TILE_ROWS, work = 0;
    for (double r0 = 0; r0 < L; r0 += rows)
        work += MIN(rows, L - r0) * (MIN(L, r0 + rows) - floor(r0 / C) * C);
    return work / (L * L);
}

double workload_attn_window_frac(const workload_spec *w)
{
    if (w->attn_backend == WL_ATTN_UNFUSED)
        return 1;
    if (w->m.chunk > 0)
        return chunk_square_frac(w->seq, w->m.chunk);
    return band_square_frac(w->seq, w->m.window > 0 ? w->m.window : w->seq);
}

bool workload_layer_is_swa(const workload_model *m, int l)
{
    if (m->window <= 0 && m->chunk <= 0)
        return false;
    if (m->window_pattern)
        return l >= 0 && l < m->window_pattern_len && m->window_pattern[l] == '1';
    return m->window_freq <= 0 || (l + 1) % m->window_freq != 0;
}

double workload_layer_ctx(const workload_model *m, int l, double s)
{
    if (!workload_layer_is_swa(m, l))
        return s;
    return m->chunk > 0 ? MIN((double)m->chunk, s) : MIN(m->window + 1.0, s);
}

double workload_attn_bwd_factor(const workload_spec *w)
{
    return w->attn_backend == WL_ATTN_UNFUSED ? 2 : 2.5;
}

double workload_attn_work_frac(const workload_spec *w)
{
    if (w->attn_backend == WL_ATTN_UNFUSED)
        return 1;
    /* ranks of the ring the sequence is split over: a2a gives each rank the whole sequence (for
     * 1/cp of the heads), a2a+p2p rings over cp / cp_a2a groups */
    int g = w->cp <= 1 || w->cp_comm == WL_CP_A2A ? 1 : w->cp_comm == WL_CP_A2A_P2P && w->cp_a2a > 0 ? w->cp / w->cp_a2a : w->cp;
    if (g <= 1)
        return causal_square_frac(w->seq);
    return (2 * causal_square_frac((double)w->seq / (2 * g)) + 2.0 * g - 1) / (4.0 * g);
}

const char *workload_moe_label(const workload_spec *w, char *buf, size_t n)
{
    char grp[64] = "", cap[64] = "", imb[64] = "";
    if (w->router_groups > 0)
        g_snprintf(grp, sizeof grp, ", experts from %d of %d groups", w->router_group_topk, w->router_groups);
    if (w->capacity_factor > 0)
        g_snprintf(cap, sizeof cap, ", expert capacity %g%s", w->capacity_factor,
                   w->pad_to_capacity ? " (padded)" : "");
    if (w->moe_imbalance > 1)
        g_snprintf(imb, sizeof imb, ", busiest EP rank %gx the mean tokens", w->moe_imbalance);
    g_snprintf(buf, n, "%s%s%s%s", w->moe_dispatcher == WL_MOE_FLEX ? ", flex dispatcher (DeepEP)" : "", grp, cap, imb);
    return buf;
}

double workload_moe_capacity_scale(const workload_spec *w)
{
    if (!(w->capacity_factor > 0))
        return 1;
    return w->pad_to_capacity ? w->capacity_factor : MIN(w->capacity_factor, 1);
}

double workload_moe_rank_load(const workload_spec *w, bool hot)
{
    double F = w->moe_imbalance > 1 ? w->moe_imbalance : 1, n = w->ep;
    if (F <= 1 || n <= 1)
        return workload_moe_capacity_scale(w);
    if (w->capacity_factor > 0 && w->pad_to_capacity)
        return w->capacity_factor;
    double l = hot ? F : (n - F) / (n - 1);
    return w->capacity_factor > 0 ? MIN(l, w->capacity_factor) : l;
}

double workload_moe_load_mean(const workload_spec *w)
{
    double n = w->ep > 1 ? w->ep : 1;
    return (workload_moe_rank_load(w, true) + (n - 1) * workload_moe_rank_load(w, false)) / n;
}

static const char *const rc_names[] = {"core_attn", "layernorm", "mla_up_proj", "moe_act", "mlp", "shared_experts",
                                       "moe"};

bool workload_recompute_modules_parse(const char *s, unsigned *out, GError **err)
{
    *out = 0;
    char **v = g_strsplit_set(s ? s : "", ", ", -1);
    bool ok = true;
    for (int i = 0; ok && v[i]; i++) {
        if (!*v[i])
            continue;
        size_t k = 0;
        while (k < G_N_ELEMENTS(rc_names) && strcmp(v[i], rc_names[k]))
            k++;
        if (k < G_N_ELEMENTS(rc_names))
            *out |= 1u << k;
        else
            ok = VALUE("--recompute-modules: '%s' is not one of them (core_attn, layernorm, mla_up_proj, moe_act, "
                       "mlp, shared_experts, moe)", v[i]);
    }
    g_strfreev(v);
    if (ok && !*out)
        ok = VALUE("--recompute-modules '%s': no module named", s ? s : "");
    return ok;
}

const char *workload_recompute_modules_label(unsigned bits, char *buf, size_t n)
{
    GString *g = g_string_new(NULL);
    for (size_t k = 0; k < G_N_ELEMENTS(rc_names); k++)
        if (bits & (1u << k))
            g_string_append_printf(g, "%s%s", g->len ? ", " : "", rc_names[k]);
    g_strlcpy(buf, g->str, n);
    g_string_free(g, TRUE);
    return buf;
}

const char *workload_attn_label(const workload_model *m, char *buf, size_t n)
{
    char mla[48] = "", win[64] = "";
    if (m->kv_lora > 0 && m->q_lora > 0)
        g_snprintf(mla, sizeof mla, "MLA, latents q %d / kv %d", m->q_lora, m->kv_lora);
    else if (m->kv_lora > 0)
        g_snprintf(mla, sizeof mla, "MLA, latent kv %d", m->kv_lora);
    if (m->window > 0 || m->chunk > 0) {
        int k = 0;
        for (int l = 0; l < m->layers; l++)
            k += workload_layer_is_swa(m, l);
        const char *what = m->chunk > 0 ? "chunked attention" : "sliding window";
        int size = m->chunk > 0 ? m->chunk : m->window;
        if (k == m->layers)
            g_snprintf(win, sizeof win, "%s %d", what, size);
        else
            g_snprintf(win, sizeof win, "%s %d in %d of %d layers", what, size, k, m->layers);
    }
    if (!*mla && !*win)
        g_strlcpy(buf, "", n);
    else
        g_snprintf(buf, n, " (%s%s%s)", mla, *mla && *win ? ", " : "", win);
    return buf;
}

/* log C(n, k); -INFINITY when n < k */
static double log_choose(double n, double k)
{
    return n < k ? -INFINITY : lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}

/* C(a, k) / C(b, k) for 0 <= a <= b */
static double choose_ratio(double a, double b, int k)
{
    return exp(log_choose(a, k) - log_choose(b, k));
}

static double log_add(double a, double b)
{
    if (a == -INFINITY)
        return b;
    if (b == -INFINITY)
        return a;
    return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

/* log of the number of k-sets of experts over M groups, the first offering q1 of its experts and
 * the others q, that leave no group empty: group by group, each taking 1..its experts (terms all
 * positive, summed in logs: no cancellation, no overflow); -INFINITY if there is none. */
static double log_spread_sets(int M, int q, int q1, int k)
{
    double *a = g_new(double, k + 1), *b = g_new(double, k + 1);
    for (int c = 0; c <= k; c++)
        a[c] = c == 0 ? 0 : -INFINITY;
    for (int j = 0; j < M; j++) {
        int qj = j == 0 ? q1 : q;
        for (int c = 0; c <= k; c++) {
            b[c] = -INFINITY;
            for (int t = 1; t <= MIN(qj, c); t++)
                if (a[c - t] != -INFINITY)
                    b[c] = log_add(b[c], log_choose(qj, t) + a[c - t]);
        }
        double *x = a;
        a = b;
        b = x;
    }
    double r = a[k];
    g_free(a);
    g_free(b);
    return r;
}

double workload_moe_hit(const workload_spec *w, int s)
{
    int K = w->m.experts, k = w->m.topk;
    int G = w->router_groups > 0 ? w->router_groups : 1, M = w->router_groups > 0 ? w->router_group_topk : 1;
    if (K <= 0 || k <= 0 || s <= 0 || K % G)
        return -1;
    int q = K / G;        /* experts a group */
    double pool = (double)M * q; /* experts a token chooses among */
    if (M < 1 || M > G || pool < k)
        return -1;
    /* the groups are chosen for their experts' scores (DeepSeek-V3: the sum of each group's best two),
     * so where some are left out and a token has at least as many experts as chosen groups, each
     * chosen group holds one or more of them; the k are otherwise spread evenly over the pool */
    bool each = M < G && k >= M && (double)M * k * MIN(q, k) <= 5e7; /* else the even spread: bounded work */
    if (s <= q && q % s == 0) { /* inside one group: that group chosen, then one of its s among the pool */
        if (each) {
            double miss = log_spread_sets(M, q, q - s, k) - log_spread_sets(M, q, q, k);
            return (double)M / G * (1 - (miss == -INFINITY ? 0 : exp(miss)));
        }
        return (double)M / G * (1 - choose_ratio(pool - s, pool, k));
    }
    if (s > q && s % q == 0 && each) /* s/q whole groups: reached when one of them is chosen */
        return 1 - choose_ratio(G - s / q, G, M);
    if (s > q && s % q == 0) { /* s/q whole groups: h of them chosen (hypergeometric), then none of h q */
        int n = s / q;
        double miss = 0;
        for (int h = MAX(0, M - (G - n)); h <= MIN(M, n); h++) {
            double p = exp(log_choose(n, h) + log_choose(G - n, M - h) - log_choose(G, M));
            miss += p * choose_ratio(pool - (double)h * q, pool, k);
        }
        return 1 - miss;
    }
    return -1;
}

static const char *const fp8_recipe_names[] = {[WL_FP8_DELAYED] = "delayed", [WL_FP8_TENSORWISE] = "tensorwise",
                                               [WL_FP8_MXFP8] = "mxfp8", [WL_FP8_BLOCKWISE] = "blockwise"};

bool workload_fp8_recipe_parse(const char *s, int *out, GError **err)
{
    return name_parse("fp8-recipe", fp8_recipe_names, G_N_ELEMENTS(fp8_recipe_names), s, out,
                      "delayed, tensorwise, mxfp8 or blockwise (Megatron-LM's names)", err);
}

const char *workload_fp8_recipe_name(int r)
{
    return name_of(fp8_recipe_names, G_N_ELEMENTS(fp8_recipe_names), r);
}

const char *workload_fp8_recipe_unsupported(int recipe, int cc)
{
    if (cc <= 0)
        return NULL;
    if (recipe == WL_FP8_MXFP8 && cc != 100 && cc != 103)
        return "mxfp8 needs Blackwell's block-scaled tensor cores (compute capability 10.0 or 10.3: B200, GB200, "
               "B300); blockwise or the per-tensor recipes (delayed, tensorwise) elsewhere";
    if (recipe == WL_FP8_BLOCKWISE && cc < 90)
        return "blockwise needs compute capability 9.0 or later (Transformer Engine's Float8BlockScaling: Hopper, "
               "emulated with mxfp8 on Blackwell); delayed or tensorwise on Ada";
    return NULL;
}

bool workload_fp8_transposes(int cc)
{
    return cc < 100 || cc / 10 == 12;
}

/* The interleaved schedule's rules: at least a layer per model chunk (the
 * pp*V chunks split the layers as stages do: workload_chunk_layers) and
 * microbatches a multiple of pp (Megatron-LM's; its
 * microbatch_group_size_per_vp_stage = pp default), and pp >= 2 (Megatron
 * asks for pp > 2 unless overlap_p2p_comm is on, because of its batched
 * p2p calls; here each direction has its own streams, so 2 suffices).
 * Called once the layout and batch are known to be consistent. */
static bool interleaved_check(const workload_spec *w, GError **err)
{
    int v = w->vpp, mbs = w->global_batch / (w->micro_batch * w->dp);
    if (w->pp < 2)
        return LAYOUT("the interleaved schedule (interleaved:%d) needs pp >= 2, got pp %d", v, w->pp);
    if (w->m.layers < w->pp * v && !w->pp_layout) /* a layout's chunks may be empty */
        return LAYOUT("layers (%d) must be at least pp*V = %d*%d with interleaved:%d (a layer per model chunk)",
                      w->m.layers, w->pp, v, v);
    if (mbs % w->pp)
        return LAYOUT("microbatches per step (%d = global batch %d / (micro-batch %d * dp %d)) must be a multiple of "
                      "pp (%d) with interleaved:%d", mbs, w->global_batch, w->micro_batch, w->dp, w->pp, v);
    return true;
}

/* Uneven stages (docs/workloads.md, "Stage sizes"): the layers of stage j
 * of P (pipeline stages, or the pp*V virtual stages of the interleaved
 * schedule). With L = Pc - r layers (c = ceil(L/P), 0 <= r < P) the r
 * outermost hold c - 1, the first ceil(r/2) and the last floor(r/2); the
 * others c. With r <= 2 this is Llama 3's rule (arXiv:2407.21783 sec.
 * 3.3.2: 126 layers on 16 stages, one layer fewer on the first and on the
 * last stage). */
static int split_layers(int L, int P, int j, int *first_layer)
{
    int c = (L + P - 1) / P, r = P * c - L, lo = (r + 1) / 2, hi = P - r / 2; /* short: [0, lo) and [hi, P) */
    if (first_layer)
        *first_layer = j * c - MIN(j, lo) - MAX(0, j - hi);
    return j < lo || j >= hi ? c - 1 : c;
}

/* --decoder-first/last-pipeline-num-layers as Megatron-LM takes them
 * (get_num_layers_to_build, get_transformer_layer_offset): the first (last)
 * stage holds that many layers and the middle stages (those without a
 * count) the rest evenly; with V model chunks a stage's layers split evenly
 * over its chunks. False where they do not apply (not given, pp < 2) or do
 * not fit (the rest not splitting evenly into at least a layer a middle
 * stage, a stage's layers not splitting into V chunks of at least one):
 * workload_spec_check says which. */
static bool stage_counts(const workload_spec *w, int *mid)
{
    int f = w->first_stage_layers, l = w->last_stage_layers, nmid = w->pp - (f > 0) - (l > 0);
    int v = w->vpp > 1 ? w->vpp : 1;
    int64_t rest = (int64_t)w->m.layers - f - l;
    if ((f <= 0 && l <= 0) || f < 0 || l < 0 || w->pp < 2 || rest < 0 || f % v || l % v)
        return false;
    if (nmid == 0)
        return *mid = 0, rest == 0;
    if (rest < (int64_t)nmid * v || rest % ((int64_t)nmid * v))
        return false;
    *mid = (int)(rest / nmid);
    return true;
}

/* Layers of stage s under stage_counts (mid: a middle stage's). */
static int counted_stage(const workload_spec *w, int s, int mid)
{
    if (s == 0 && w->first_stage_layers > 0)
        return w->first_stage_layers;
    if (s == w->pp - 1 && w->last_stage_layers > 0)
        return w->last_stage_layers;
    return mid;
}

int workload_chunk_layers(const workload_spec *w, int stage, int chunk, int *first_layer)
{
    int p = w->pp, v = w->vpp > 1 ? w->vpp : 1, mid;
    if (w->pp_layout) { /* virtual stage chunk*p + stage of the layout (checked by workload_spec_check) */
        const workload_layout *L = workload_layout_get(w->pp_layout, NULL);
        g_assert(L && L->n == p * v && stage >= 0 && stage < p && chunk >= 0 && chunk < v);
        if (first_layer)
            *first_layer = L->first[chunk * p + stage];
        return L->dec[chunk * p + stage];
    }
    if (stage_counts(w, &mid) && stage >= 0 && stage < p && chunk >= 0 && chunk < v) {
        /* virtual stage chunk*p + stage: after every stage's earlier chunks and this chunk's earlier stages */
        int64_t before = 0;
        for (int s = 0; s < p; s++)
            before += counted_stage(w, s, mid) / v * (chunk + (s < stage ? 1 : 0));
        if (first_layer)
            *first_layer = (int)before;
        return counted_stage(w, stage, mid) / v;
    }
    g_assert(p >= 1 && p * v <= w->m.layers && stage >= 0 && stage < p && chunk >= 0 && chunk < v);
    return split_layers(w->m.layers, p * v, chunk * p + stage, first_layer);
}

int workload_stage_layers(const workload_spec *w, int stage, int *first_layer)
{
    int v = w->vpp > 1 ? w->vpp : 1, n = 0;
    for (int c = 0; c < v; c++)
        n += workload_chunk_layers(w, stage, c, c == 0 ? first_layer : NULL);
    return n;
}

/* A --pipeline-model-parallel-layout's rules (Megatron-LM's
 * PipelineParallelLayerLayout.__init__ and validate_layer_layout), and ours:
 * the embedding opens the first virtual stage and the loss closes the last
 * (Megatron-LM runs empty stages before or after them as identities; not
 * modelled). */
static bool layout_check(const workload_spec *w, GError **err)
{
    const workload_layout *L = workload_layout_get(w->pp_layout, err);
    const char *s = w->pp_layout;
    if (!L) {
        g_prefix_error(err, "--pipeline-model-parallel-layout '%s': ", s);
        return false;
    }
    int v = w->vpp > 1 ? w->vpp : 1;
    if (L->n != w->pp * v)
        return LAYOUT("--pipeline-model-parallel-layout '%s' has %d virtual stages, not pp x V = %d x %d", s, L->n,
                      w->pp, v);
    if (w->first_stage_layers || w->last_stage_layers)
        return LAYOUT("--pipeline-model-parallel-layout with --decoder-first/last-pipeline-num-layers: the layout "
                      "places every layer (Megatron-LM refuses both)");
    if (L->nemb != 1 || L->nloss != 1)
        return VALUE("--pipeline-model-parallel-layout '%s': E (the embedding) and L (the loss) must each appear once "
                     "(got %d and %d)", s, L->nemb, L->nloss);
    if (!L->emb_opens || !L->loss_closes)
        return VALUE("--pipeline-model-parallel-layout '%s': E must open the first virtual stage and L close the last "
                     "(empty stages before E or after L are not modelled)", s);
    if (L->ndec != w->m.layers)
        return VALUE("--pipeline-model-parallel-layout '%s' places %d decoder layers (t), the model has %d", s,
                     L->ndec, w->m.layers);
    if (L->nmtp != w->mtp)
        return VALUE("--pipeline-model-parallel-layout '%s' places %d MTP layers (m), --mtp-num-layers is %d", s,
                     L->nmtp, w->mtp);
    if (L->dec_after_mtp)
        return VALUE("--pipeline-model-parallel-layout '%s': decoder layers must come before the MTP layers", s);
    if (L->nmtp > 0) {
        int st = L->mtp_vs >= 0 ? L->mtp_vs % w->pp : -1, c = L->mtp_vs >= 0 ? L->mtp_vs / w->pp : -1;
        if (L->mtp_vs < 0)
            return VALUE("--pipeline-model-parallel-layout '%s': the MTP layers must all be in one virtual stage", s);
        if (c != v - 1)
            return VALUE("--pipeline-model-parallel-layout '%s': the MTP layers must be in their pp rank's last model "
                         "chunk (they are in chunk %d of %d of rank %d)", s, c, v, st);
        if (st == 0 && w->pp > 1)
            return VALUE("--pipeline-model-parallel-layout '%s': the MTP layers cannot be on the first pp rank", s);
    }
    return true;
}

bool workload_layout_apply(workload_spec *w, GError **err)
{
    if (!w->pp_layout)
        return true;
    const workload_layout *L = workload_layout_get(w->pp_layout, err);
    if (!L) {
        g_prefix_error(err, "--pipeline-model-parallel-layout '%s': ", w->pp_layout);
        return false;
    }
    if (w->pp < 1 || L->n % w->pp) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_LAYOUT,
                    "--pipeline-model-parallel-layout '%s' has %d virtual stages, not a multiple of pp %d "
                    "(Megatron-LM asserts)", w->pp_layout, L->n, w->pp);
        return false;
    }
    int v = L->n / w->pp;
    if (w->vpp > 1 && w->vpp != v) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_LAYOUT,
                    "--pipeline-model-parallel-layout '%s' gives %d model chunk%s per pp rank (%d virtual stages over "
                    "pp %d), but %d were given (--schedule interleaved:%d, or Megatron-LM's virtual-stage flags); the "
                    "layout alone sets them",
                    w->pp_layout, v, v > 1 ? "s" : "", L->n, w->pp, w->vpp, w->vpp);
        return false;
    }
    w->vpp = v;
    return layout_check(w, err);
}

bool workload_spec_check(const workload_spec *w, GError **err)
{
    const workload_model *m = &w->m;
    if (m->layers < 1 || m->layers > WL_MAX_LAYERS || m->hidden < 1 || m->hidden > WL_MAX_HIDDEN || m->heads < 1 ||
        (m->head_dim <= 0 && m->hidden % m->heads) || m->kv_heads < 1 || m->heads % m->kv_heads || m->ffn < 1 ||
        m->ffn > 4 * WL_MAX_HIDDEN || m->vocab < 1 || m->vocab > 10000000)
        return VALUE("model shape: need layers in 1..%d, hidden in 1..%d divisible by heads (or --kv-channels), heads divisible by "
                     "kv-heads, ffn in 1..%d, vocab in 1..1e7 (got layers %d hidden %d heads %d kv-heads %d ffn %d "
                     "vocab %d)", WL_MAX_LAYERS, WL_MAX_HIDDEN, 4 * WL_MAX_HIDDEN, m->layers, m->hidden, m->heads,
                     m->kv_heads, m->ffn, m->vocab);
    if (m->experts < 0 || m->experts > 100000 ||
        (m->experts > 0 && (m->topk < 1 || m->topk > m->experts || m->expert_ffn < 1 || m->expert_ffn > m->ffn * 4 ||
                            m->shared_ffn < 0 || m->shared_ffn > 4 * m->ffn || m->dense_layers < 0 ||
                            m->dense_layers >= m->layers)))
        return VALUE("MoE shape: need experts in 1..100000, topk in 1..experts (%d), expert FFN in 1..4 x ffn (%d), "
                     "shared FFN in 0..4 x ffn, dense layers below the layers (%d) (got experts %d topk %d expert FFN "
                     "%d shared FFN %d dense layers %d)", m->experts, m->ffn, m->layers, m->experts, m->topk,
                     m->expert_ffn, m->shared_ffn, m->dense_layers);
    if (m->q_lora < 0 || m->kv_lora < 0 || m->qk_dim < 0 || m->rope_dim < 0 || m->v_dim < 0 ||
        m->q_lora > WL_MAX_HIDDEN || m->kv_lora > WL_MAX_HIDDEN || m->qk_dim > WL_MAX_HIDDEN ||
        m->rope_dim > WL_MAX_HIDDEN || m->v_dim > WL_MAX_HIDDEN)
        return VALUE("multi-latent attention: --q-lora-rank, --kv-lora-rank, --qk-head-dim, --qk-pos-emb-head-dim and "
                     "--v-head-dim must be in 0..%d", WL_MAX_HIDDEN);
    if (m->head_dim < 0 || m->head_dim > WL_MAX_HIDDEN || (double)m->heads * m->head_dim > 4.0 * WL_MAX_HIDDEN)
        return VALUE("--kv-channels must be in 1..%d, and heads x kv-channels at most %d (got %d x %d)", WL_MAX_HIDDEN,
                     4 * WL_MAX_HIDDEN, m->heads, m->head_dim);
    if (m->head_dim > 0 && m->kv_lora > 0)
        return VALUE("--kv-channels with multi-latent attention: MLA's heads take --qk-head-dim, "
                     "--qk-pos-emb-head-dim and --v-head-dim");
    if (m->kv_lora == 0 && (m->q_lora || m->qk_dim || m->rope_dim || m->v_dim))
        return VALUE("--q-lora-rank, --qk-head-dim, --qk-pos-emb-head-dim and --v-head-dim describe multi-latent "
                     "attention: give --kv-lora-rank too");
    if (m->kv_lora > 0 && (m->qk_dim < 1 || m->v_dim < 1))
        return VALUE("multi-latent attention needs --qk-head-dim and --v-head-dim >= 1 (got %d, %d)", m->qk_dim,
                     m->v_dim);
    if (m->kv_lora > 0 && m->kv_heads != m->heads)
        return VALUE("multi-latent attention has no grouped-query form: kv-heads (%d) must equal heads (%d), as "
                     "Megatron-LM asserts", m->kv_heads, m->heads);
    if (m->kv_lora > 0 && w->tp_comm_overlap)
        return VALUE("--tp-comm-overlap with multi-latent attention: Transformer Engine's userbuffers overlap only "
                     "the qkv, proj, fc1 and fc2 GEMMs, and Megatron-LM turns the overlap off for other linear "
                     "layers (MLA's q_up_proj, kv_up_proj), so it is not modelled");
    if (m->moe_freq < 0 || m->moe_freq > m->layers || (m->moe_freq > 1 && !m->experts))
        return VALUE("--moe-layer-freq must be in 1..layers (%d) and needs an MoE model (got %d)", m->layers,
                     m->moe_freq);
    if (m->moe_pattern) { /* Megatron-LM asserts the list's length */
        size_t n = strlen(m->moe_pattern);
        if (n != (size_t)m->moe_pattern_len)
            return VALUE("the MoE pattern's length field (%d) is not its length (%zu)", m->moe_pattern_len, n);
        if (!m->experts || m->dense_layers > 0 || m->moe_freq > 1)
            return VALUE("a --moe-layer-freq pattern gives every layer's kind: it needs an MoE model and takes no "
                         "--dense-layers or integer --moe-layer-freq");
        if (n != (size_t)m->layers)
            return VALUE("--moe-layer-freq's pattern has %zu layers, the model %d (Megatron-LM asserts they agree)", n,
                         m->layers);
        if (strspn(m->moe_pattern, "01") != n || !strchr(m->moe_pattern, '1'))
            return VALUE("the MoE pattern must be 0s and 1s with at least one 1 (an MoE layer)");
    } else if (m->experts > 0) { /* at least one MoE layer */
        int l = m->dense_layers;
        while (l < m->layers && !workload_layer_is_moe(m, l))
            l++;
        if (l == m->layers)
            return VALUE("--moe-layer-freq %d with %d dense layers leaves none of the %d layers an MoE layer",
                         m->moe_freq, m->dense_layers, m->layers);
    }
    if (m->window < 0 || m->window > WL_MAX_SEQ || m->chunk < 0 || m->chunk > WL_MAX_SEQ || m->window_freq < 0 ||
        m->window_freq > m->layers)
        return VALUE("--window-size and --attention-chunk-size must be in 1..%d tokens and --window-attn-skip-freq in "
                     "1..layers (%d) (got %d, %d, %d)", WL_MAX_SEQ, m->layers, m->window, m->chunk, m->window_freq);
    if (m->window > 0 && m->chunk > 0)
        return VALUE("--window-size and --attention-chunk-size: a layer's attention is one or the other");
    if (m->window <= 0 && m->chunk <= 0 && (m->window_freq || m->window_pattern))
        return VALUE("--window-attn-skip-freq picks the layers of a sliding window or chunks: give --window-size or "
                     "--attention-chunk-size too");
    if (m->window_pattern) {
        size_t n = strlen(m->window_pattern);
        if (n != (size_t)m->window_pattern_len || strspn(m->window_pattern, "01") != n)
            return VALUE("the window pattern must be 0s and 1s, its length field (%d) its length (%zu)",
                         m->window_pattern_len, n);
        if (m->window_freq)
            return VALUE("--window-attn-skip-freq is an integer or a list, not both");
        if (n != (size_t)m->layers)
            return VALUE("--window-attn-skip-freq's pattern has %zu layers, the model %d (Megatron-LM indexes it by "
                         "layer)", n, m->layers);
    }
    if ((m->window > 0 || m->chunk > 0) && w->cp > 1 && (w->cp_comm == WL_CP_P2P || w->cp_comm == WL_CP_A2A_P2P)) {
        int l = 0;
        while (l < m->layers && !workload_layer_is_swa(m, l))
            l++;
        if (l < m->layers && m->window > 0)
            return VALUE("a sliding window (--window-size %d) with context parallelism needs --cp-comm a2a or allgather: "
                         "Transformer Engine's attention refuses a window with the p2p ring and a2a+p2p (layer %d is "
                         "windowed)", m->window, l + 1);
        if (l < m->layers)
            return VALUE("chunked attention (--attention-chunk-size %d) with context parallelism needs --cp-comm a2a or "
                         "allgather: the p2p ring and a2a+p2p pass every rank's keys to every other, not modelled for "
                         "chunks (layer %d is chunked)", m->chunk, l + 1);
    }
    if (w->dp < 1 && w->tp >= 1 && w->pp >= 1 && w->cp >= 1 && w->gpus % ((int64_t)w->tp * w->pp * w->cp))
        return LAYOUT("--gpus %d is not a multiple of tp*pp*cp = %d*%d*%d", w->gpus, w->tp, w->pp, w->cp);
    if (w->gpus < 1 && w->tp >= 1 && w->pp >= 1 && w->cp >= 1 && w->dp >= 1) /* workload_spec_defaults' 0 */
        return LAYOUT("tp*pp*cp*dp = %d*%d*%d*%d is more GPUs than an int holds", w->tp, w->pp, w->cp, w->dp);
    if (w->tp < 1 || w->pp < 1 || w->dp < 1 || w->cp < 1 || w->ep < 1 || w->etp < 1 || w->gpus < 1)
        return LAYOUT("--tp, --pp, --dp, --cp, --ep, --etp and --gpus must be >= 1");
    if ((int64_t)w->tp * w->pp * w->dp * w->cp != w->gpus)
        return LAYOUT("tp*pp*dp*cp = %d*%d*%d*%d = %" G_GINT64_FORMAT " but --gpus is %d", w->tp, w->pp, w->dp,
                      w->cp, (int64_t)w->tp * w->pp * w->dp * w->cp, w->gpus);
    if (m->heads % w->tp || m->kv_heads % w->tp)
        return LAYOUT("heads (%d) and kv-heads (%d) must be divisible by tp (%d)", m->heads, m->kv_heads, w->tp);
    if (m->ffn % w->tp)
        return LAYOUT("ffn (%d) must be divisible by tp (%d)", m->ffn, w->tp);
    if (w->pp > m->layers && !w->pp_layout)
        return LAYOUT("pp (%d) must be at most the layers (%d): every pipeline stage needs a layer (or a "
                      "--pipeline-model-parallel-layout that says which stages hold none)", w->pp, m->layers);
    if (w->micro_batch < 1 || w->micro_batch > WL_MAX_MICRO_BATCH || w->seq < 1 || w->seq > 10000000)
        return VALUE("--micro-batch must be in 1..%d and --seq in 1..1e7", WL_MAX_MICRO_BATCH);
    /* one activation tensor per micro-batch and GPU: beyond any GPU's memory, and its collectives would take
     * the replay hours */
    if ((double)w->micro_batch * w->seq / w->cp * m->hidden > WL_MAX_ACT_ELEMS)
        return VALUE("micro-batch x seq / cp x hidden = %d x %d / %d x %d = %.3g activation elements per GPU: "
                     "at most 2^35 (64 GiB in bf16, more than any GPU holds)", w->micro_batch, w->seq, w->cp,
                     m->hidden, (double)w->micro_batch * w->seq / w->cp * m->hidden);
    if (w->cp > 1 && w->cp_comm == WL_CP_A2A && (m->heads % ((int64_t)w->tp * w->cp) || m->kv_heads % ((int64_t)w->tp * w->cp)))
        return LAYOUT("--cp-comm a2a gives each CP rank heads/(tp*cp) heads: heads (%d) and kv-heads (%d) must be "
                      "divisible by tp*cp (%d*%d); p2p or allgather have no such rule", m->heads, m->kv_heads, w->tp,
                      w->cp);
    if (w->pp_layout && !layout_check(w, err))
        return false;
    int mid;
    if ((w->first_stage_layers || w->last_stage_layers) && !stage_counts(w, &mid)) {
        int f = w->first_stage_layers, l = w->last_stage_layers, v = w->vpp > 1 ? w->vpp : 1;
        if (f < 0 || l < 0 || w->pp < 2)
            return LAYOUT("--decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers need pp >= 2, "
                          "got pp %d", w->pp);
        int nmid = w->pp - (f > 0) - (l > 0);
        return LAYOUT("--decoder-first/last-pipeline-num-layers (%d, %d): the other %" G_GINT64_FORMAT
                      " of the %d layers must split evenly over the %d middle stages, and every stage's layers "
                      "over its %d model chunk%s, at least one each (Megatron-LM asserts)", f, l,
                      (int64_t)m->layers - f - l, m->layers, nmid, v, v > 1 ? "s" : "");
    }
    unsigned rc = w->recompute_modules;
    if (rc && w->recompute)
        return VALUE("--recompute is full recomputation, --recompute-modules selective: one or the other");
    if ((w->recompute_method || w->recompute_layers) && !w->recompute)
        return VALUE("--recompute-method and --recompute-num-layers are full recomputation's (--recompute or "
                     "--recompute-granularity full; Megatron-LM refuses them with selective)");
    if (w->recompute_method < WL_RC_UNIFORM || w->recompute_method > WL_RC_BLOCK || w->recompute_layers < 0 ||
        w->recompute_layers > m->layers)
        return VALUE("--recompute-method must be uniform or block and --recompute-num-layers in 1..layers (%d)",
                     m->layers);
    if ((rc & WL_RC_MLA_UP_PROJ) && m->kv_lora <= 0)
        return VALUE("--recompute-modules mla_up_proj needs multi-latent attention (Megatron-LM raises otherwise)");
    if ((rc & (WL_RC_MOE_ACT | WL_RC_MOE)) && !m->experts)
        return VALUE("--recompute-modules %s needs an MoE model", rc & WL_RC_MOE ? "moe" : "moe_act");
    if ((rc & WL_RC_SHARED_EXPERTS) && !m->shared_ffn)
        return VALUE("--recompute-modules shared_experts needs a shared expert");
    if ((rc & WL_RC_SHARED_EXPERTS) && w->moe_shared_overlap)
        return VALUE("--recompute-modules shared_experts with --moe-shared-expert-overlap: Megatron-LM raises");
    if ((rc & (WL_RC_MOE_ACT | WL_RC_LAYERNORM)) && w->dtype == COMPUTE_FP8 && w->fp8_recipe == WL_FP8_DELAYED)
        return VALUE("--recompute-modules moe_act or layernorm under fp8's delayed scaling: Megatron-LM raises "
                     "(\"Delayed scaling does not support moe_act and layernorm recompute\")");
    if (w->mtp < 0 || w->mtp > 16)
        return VALUE("--mtp-num-layers must be in 1..16 (got %d)", w->mtp);
    if (w->mtp > 0 && w->zero3_param_sync)
        return VALUE("--mtp-num-layers with --zero3-per-param (DeepSpeed's ZeRO-3 of 2021, gathered per tensor): "
                     "not modelled");
    if (w->mtp > 0 && w->tp_comm_overlap)
        return VALUE("--tp-comm-overlap with --mtp-num-layers: Megatron-LM turns Transformer Engine's overlap off "
                     "for the MTP projection (its buffer mtp_eh_proj is not one of qkv, proj, fc1, fc2), so it "
                     "is not modelled");
    if (w->moe_shared_overlap && !m->shared_ffn)
        return VALUE("--moe-shared-expert-overlap needs an MoE model with a shared expert (--shared-ffn; "
                     "deepseek-v3-like has one)");
    if (w->tp_comm_overlap && !w->sp)
        return LAYOUT("--tp-comm-overlap needs --sp: its gathers and reduce-scatters are sequence parallelism's "
                      "(Megatron-LM asserts it)");
    if (w->fp8_param_gather && (w->dtype != COMPUTE_FP8 || (w->zero != 1 && w->zero != 2)))
        return VALUE("--fp8-param-gather needs --dtype fp8 and the distributed optimizer (--zero 1 or 2): it keeps "
                     "the weights in fp8 and gathers them so after the optimizer step");
    if (w->fp8_recipe < WL_FP8_DELAYED || w->fp8_recipe > WL_FP8_BLOCKWISE)
        return VALUE("fp8_recipe must be delayed, tensorwise, mxfp8 or blockwise");
    if (w->fp8_recipe != WL_FP8_DELAYED && w->dtype != COMPUTE_FP8)
        return VALUE("--fp8-recipe %s needs --dtype fp8", workload_fp8_recipe_name(w->fp8_recipe));
    if (w->fp8_param_gather && w->fp8_recipe == WL_FP8_BLOCKWISE)
        return VALUE("--fp8-param-gather is modelled for delayed, tensorwise and mxfp8, not blockwise: "
                     "Megatron-LM gathers blockwise weights only under its layer-wise optimizer");
    if (w->mxfp8_grad_buf && (!w->fp8_param_gather || w->fp8_recipe != WL_FP8_MXFP8))
        return VALUE("--reuse-grad-buf-for-mxfp8-param-ag needs --fp8-recipe mxfp8 and --fp8-param-gather "
                     "(Megatron-LM's rule): it gathers mxfp8's bf16 weights into the gradient buffer");
    if (w->dtype == COMPUTE_FP8 && workload_fp8_recipe_unsupported(w->fp8_recipe, w->gpu_cc))
        return VALUE("--fp8-recipe %s: %s", workload_fp8_recipe_name(w->fp8_recipe),
                     workload_fp8_recipe_unsupported(w->fp8_recipe, w->gpu_cc));
    if (w->attn_backend != WL_ATTN_FLASH && w->attn_backend != WL_ATTN_UNFUSED)
        return VALUE("attn_backend must be flash or unfused");
    if (w->attn_backend == WL_ATTN_UNFUSED && w->cp > 1)
        return VALUE("--attention-backend unfused with --cp %d: Megatron-LM runs context parallelism only in "
                     "Transformer Engine's attention (its unfused DotProductAttention asserts cp 1)", w->cp);
    if (w->cp_comm < WL_CP_P2P || w->cp_comm > WL_CP_A2A_P2P)
        return VALUE("cp_comm must be p2p, allgather, a2a or a2a+p2p");
    if (w->cp_comm == WL_CP_A2A_P2P) {
        int a = w->cp_a2a;
        if (a < 2 || w->cp % a || w->cp / a < 2)
            return LAYOUT("--cp-comm a2a+p2p needs --hierarchical-context-parallel-sizes A,B with A, B >= 2 and A x B "
                          "= cp (%d): all-to-alls among A adjacent CP ranks, a ring over B groups of them%s",
                          w->cp, a > 0 ? "" : " (none given)");
        if (m->heads % ((int64_t)w->tp * a) || m->kv_heads % ((int64_t)w->tp * a))
            return LAYOUT("--cp-comm a2a+p2p gives each rank of an all-to-all group heads/(tp*A) heads: heads (%d) "
                          "and kv-heads (%d) must be divisible by tp*A (%d*%d)", m->heads, m->kv_heads, w->tp, a);
    } else if (w->cp_a2a > 0) {
        return VALUE("--hierarchical-context-parallel-sizes is --cp-comm a2a+p2p's");
    }
    if (w->seq % (w->cp * (w->sp ? w->tp : 1)))
        return LAYOUT("seq (%d) must be divisible by cp%s (%d)", w->seq, w->sp ? "*tp with --sp" : "",
                      w->cp * (w->sp ? w->tp : 1));
    if (w->global_batch < 1 || w->global_batch % ((int64_t)w->micro_batch * w->dp))
        return LAYOUT("global batch (%d) must be a multiple of micro-batch*dp = %d*%d", w->global_batch,
                      w->micro_batch, w->dp);
    /* Megatron-LM's MoE parallel folding: the experts' etp x ep groups tile a stage's tp*cp*dp ranks,
     * so EP and ETP may span TP and CP ranks as well as DP (workload_gen.c rank_groups) */
    if (w->ep > 1 && (!m->experts || m->experts % w->ep || ((int64_t)w->tp * w->cp * w->dp) % w->ep))
        return LAYOUT("ep (%d) needs an MoE model whose experts (%d) and tp*cp*dp (%d*%d*%d) it divides", w->ep,
                      m->experts, w->tp, w->cp, w->dp);
    if (w->etp > 1 && (!m->experts || m->expert_ffn % w->etp ||
                       ((int64_t)w->tp * w->cp * w->dp) % ((int64_t)w->ep * w->etp)))
        return LAYOUT("etp (%d) needs an MoE model whose expert FFN (%d) it divides, and ep*etp (%d*%d) dividing "
                      "tp*cp*dp (%d*%d*%d)", w->etp, m->expert_ffn, w->ep, w->etp, w->tp, w->cp, w->dp);
    if (w->moe_dispatcher < WL_MOE_ALLTOALL || w->moe_dispatcher > WL_MOE_FLEX)
        return VALUE("moe_dispatcher must be alltoall or flex");
    if (w->moe_dispatcher == WL_MOE_FLEX && (!m->experts || w->ep * w->etp < 2))
        return LAYOUT("--moe-token-dispatcher-type flex needs an MoE model and ep x etp > 1 (Megatron-LM asserts "
                      "TPxEP > 1 for its expert group)");
    if (w->moe_dispatcher == WL_MOE_FLEX && w->etp > 1)
        return LAYOUT("--moe-token-dispatcher-type flex is modelled with --etp 1: DeepEP's group is then the EP "
                      "group (Megatron-LM folds expert TP into it, sending each token to every ETP rank)");
    if (w->delay_wgrad && !w->moe_ep_overlap)
        return VALUE("--delay-wgrad-compute needs --overlap-moe-expert-parallel-comm (Megatron-LM's rule: it "
                     "moves the weight gradients within that schedule)");
    if (w->delay_wgrad && w->tp_comm_overlap)
        return VALUE("--delay-wgrad-compute with --tp-comm-overlap: not modelled (Transformer Engine's overlapped "
                     "GEMMs are not split into their input and weight gradients here)");
    if (w->moe_ep_overlap) { /* Megatron-LM's own rules (docs/workloads.md lists them), then what is not modelled */
        if (!m->experts || w->ep < 2)
            return LAYOUT("--overlap-moe-expert-parallel-comm needs an MoE model and --ep above 1: it hides the "
                          "expert-parallel all-to-alls (Megatron-LM asserts EP > 1)");
        if (w->pp > 1 && w->vpp < 2)
            return LAYOUT("--overlap-moe-expert-parallel-comm with --pp %d needs the interleaved schedule "
                          "(--schedule interleaved:V): Megatron-LM's combined 1F1B extends interleaved 1F1B and "
                          "asserts virtual pipeline stages", w->pp);
        if (w->moe_shared_overlap)
            return VALUE("--overlap-moe-expert-parallel-comm with --moe-shared-expert-overlap: Megatron-LM asserts "
                         "the shared expert's overlap off (the combined schedule runs it in the attention's node)");
        if (rc & WL_RC_MOE)
            return VALUE("--overlap-moe-expert-parallel-comm with --recompute-modules moe: Megatron-LM refuses it "
                         "(the schedule already splits the MoE layer)");
        if (w->mtp > 1)
            return VALUE("--overlap-moe-expert-parallel-comm with --mtp-num-layers %d: Megatron-LM's schedule "
                         "takes at most one MTP layer", w->mtp);
        if (w->recompute && w->dtype == COMPUTE_FP8 && w->fp8_recipe == WL_FP8_DELAYED)
            return VALUE("--overlap-moe-expert-parallel-comm with full recomputation under fp8's delayed scaling: "
                         "Megatron-LM refuses it (the replay would update the amax history twice)");
        if (w->zero == 3)
            return VALUE("--overlap-moe-expert-parallel-comm with %s: not modelled (Megatron-FSDP's gathers "
                         "inside the combined schedule)", w->fsdp ? "--fsdp" : "--zero 3");
    }
    if (w->moe_dispatcher == WL_MOE_FLEX && w->moe_shared_overlap)
        return VALUE("--moe-shared-expert-overlap with --moe-token-dispatcher-type flex: Megatron-LM's flex "
                     "dispatcher raises NotImplementedError for the shared expert's overlap");
    if (!(w->capacity_factor >= 0) || w->capacity_factor > 1000)
        return VALUE("--moe-expert-capacity-factor must be in 0..1000 (got %g)", w->capacity_factor);
    if (w->capacity_factor > 0 && !m->experts)
        return VALUE("--moe-expert-capacity-factor needs an MoE model");
    if (w->pad_to_capacity && !(w->capacity_factor > 0))
        return VALUE("--moe-pad-expert-input-to-capacity needs --moe-expert-capacity-factor (Megatron-LM raises "
                     "otherwise)");
    if (w->pad_to_capacity && w->moe_dispatcher == WL_MOE_FLEX)
        return VALUE("--moe-pad-expert-input-to-capacity with --moe-token-dispatcher-type flex: Megatron-LM's flex "
                     "dispatcher does not take it");
    /* (at EP 1 every rank holds every expert: nothing between ranks to be uneven, so no effect) */
    if (!(w->moe_imbalance >= 0) || (w->moe_imbalance > 1 && !m->experts) ||
        (w->ep > 1 && w->moe_imbalance > w->ep) || (w->moe_imbalance > 0 && w->moe_imbalance < 1))
        return VALUE("--moe-load-imbalance must be in 1..ep (%d) and needs an MoE model: the busiest EP rank holds at "
                     "most all the tokens (got %g)", w->ep, w->moe_imbalance);
    if (w->moe_imbalance > 1 && w->moe_dispatcher == WL_MOE_FLEX)
        return VALUE("--moe-load-imbalance with --moe-token-dispatcher-type flex: DeepEP's uneven traffic (per "
                     "domain, then per GPU) is not modelled; the alltoall dispatcher takes it");
    if (w->capacity_factor > 0 && w->capacity_factor < 1 && w->moe_dispatcher == WL_MOE_FLEX)
        return VALUE("--moe-expert-capacity-factor %g below 1 with flex: the tokens dropped change which domains a "
                     "token reaches, not modelled (at 1 or above balanced routing drops nothing)", w->capacity_factor);
    if ((w->router_groups > 0) != (w->router_group_topk > 0) || w->router_groups < 0 || w->router_group_topk < 0)
        return VALUE("--moe-router-num-groups and --moe-router-group-topk go together, both >= 1");
    if (w->router_groups > 0 &&
        (!m->experts || m->experts % w->router_groups || w->router_group_topk > w->router_groups ||
         (int64_t)w->router_group_topk * (m->experts / w->router_groups) < m->topk))
        return VALUE("--moe-router-num-groups %d --moe-router-group-topk %d: the groups must divide the experts (%d), "
                     "group_topk be at most the groups, and the chosen groups hold at least topk (%d) experts",
                     w->router_groups, w->router_group_topk, m->experts, m->topk);
    if (w->zero < 0 || w->zero > 3)
        return VALUE("--zero must be 0, 1, 2 or 3");
    if (w->zero == 3 && w->pp > 1)
        return LAYOUT("ZeRO-3/FSDP with pp > 1 is not supported (DeepSpeed and FSDP do not combine them)");
    if (w->zero3_param_sync && (w->zero != 3 || w->fsdp || m->experts))
        return VALUE("per-parameter ZeRO-3 fetching (DeepSpeed of 2021) needs --zero 3, not FSDP, and a dense model");
    if (w->overlap_param_gather && w->zero != 1 && w->zero != 2)
        return VALUE("--overlap-param-gather overlaps the distributed optimizer's gathers: it needs --zero 1 or 2");
    if (w->grad_reduce_after && w->overlap_param_gather)
        return VALUE("--no-overlap-grad-reduce with --overlap-param-gather: Megatron-LM asserts --overlap-grad-reduce "
                     "is on when the parameter gathers overlap");
    if (w->grad_reduce_after && w->zero == 3)
        return VALUE("--no-overlap-grad-reduce with %s: its gradients are reduce-scattered layer by layer, not in "
                     "DDP's buckets", w->fsdp ? "--fsdp" : "--zero 3");
    if (w->vpp < 1 || w->vpp > 1000)
        return VALUE("model chunks per pipeline rank (%d) must be in 1..1000", w->vpp);
    if (w->vpp > 1 && !interleaved_check(w, err))
        return false;
    if (w->layer_fuse < 1 || w->layer_fuse > m->layers)
        return LAYOUT("layer fuse (%d) must be in 1..layers (%d)", w->layer_fuse, m->layers);
    if (w->grad_bytes != 2 && w->grad_bytes != 4)
        return VALUE("gradient element size must be 2 or 4 bytes");
    if (w->bucket_bytes < 1024)
        return VALUE("bucket must be >= 1 KiB");
    if (w->global_batch / ((int64_t)w->micro_batch * w->dp) > 100000)
        return VALUE("more than 100000 microbatches per step");
    return true;
}

void workload_attn_shape(const workload_model *m, workload_attn *a)
{
    double h = m->hidden;
    if (m->kv_lora <= 0 && m->head_dim > 0) { /* heads of their own width: q and o need not be h */
        double q = (double)m->heads * m->head_dim, kv = (double)m->kv_heads * m->head_dim;
        *a = (workload_attn){.q = q, .k = kv, .v = kv, .o = q, .col = h * (q + 2 * kv), .in = h};
        return;
    }
    if (m->kv_lora <= 0) {
        double kv = h / m->heads * m->kv_heads;
        *a = (workload_attn){.q = h, .k = kv, .v = kv, .o = h, .col = h * (h + 2 * kv), .in = h};
        return;
    }
    double n = m->heads, qk = (double)m->qk_dim + m->rope_dim, ql = m->q_lora;
    a->q = a->k = n * qk;
    a->v = a->o = n * m->v_dim;
    a->col = (ql > 0 ? ql : h) * n * qk + (double)m->kv_lora * n * (m->qk_dim + m->v_dim);
    a->down = ql + m->kv_lora + m->rope_dim;
    a->in = (ql > 0 ? 0 : h) + a->down;
    a->dup = h * a->down + ql + m->kv_lora; /* the down projections and the two latents' norms */
}

/* Weights of one transformer layer (biases and norms included). */
double workload_layer_params(const workload_model *m, bool moe, double *expert_out)
{
    workload_attn a;
    workload_attn_shape(m, &a);
    double h = m->hidden, mats = m->gated ? 3 : 2;
    double attn = a.col + a.o * h + a.dup, norms = m->gated ? 2 * h : 4 * h;
    if (!m->gated) /* GPT: biases of QKV (MLA's projections have none), projection and the two MLP matrices */
        attn += (m->kv_lora > 0 ? 0 : a.q + a.k + a.v) + h;
    double mlp, expert = 0;
    if (moe) {
        expert = m->experts * mats * h * m->expert_ffn;
        mlp = h * m->experts + mats * h * m->shared_ffn;
    } else {
        mlp = mats * h * m->ffn + (m->gated ? 0 : m->ffn + h);
    }
    if (expert_out)
        *expert_out = expert;
    return attn + norms + mlp + expert;
}

double workload_layer_rank_params(const workload_spec *w, int layer, double *expert, double *replicated)
{
    const workload_model *m = &w->m;
    bool moe = workload_layer_is_moe(m, layer);
    double e, all = workload_layer_params(m, moe, &e), r = workload_layer_tp_replicated(m, moe);
    *expert = e / ((double)w->ep * w->etp);
    if (replicated)
        *replicated = r;
    return (all - e - r) / w->tp + r;
}

double workload_layer_tp_replicated_linear(const workload_model *m)
{
    workload_attn a;
    workload_attn_shape(m, &a);
    return m->hidden * a.down;
}

double workload_layer_tp_replicated(const workload_model *m, bool moe)
{
    double h = m->hidden, r = m->gated ? 2 * h : 4 * h; /* norms */
    if (!m->gated)                                        /* row-parallel biases: projection, dense MLP out */
        r += moe ? h : 2 * h;
    if (moe)
        r += h * m->experts; /* router */
    workload_attn a;
    workload_attn_shape(m, &a);
    return r + a.dup; /* MLA's down projections (TELinear, parallel_mode "duplicated") */
}

/* The four modules DeepSpeed frees and fetches (QKV, projection, MLP in, MLP
 * out; weights one rank holds), and whether module i is gathered again
 * after the recomputed forward: the modules after it run twice (their
 * recomputed forward and their backward) before its backward, and it is
 * kept only when that is within `reuse` parameters. */
static void layer_modules(const workload_model *m, bool moe, int tp, int ep, double mod[4])
{
    workload_attn a;
    workload_attn_shape(m, &a);
    double h = m->hidden, in = m->gated ? 2 : 1;
    double ffn = moe ? (double)m->experts * m->expert_ffn / ep + (double)m->shared_ffn / tp : (double)m->ffn / tp;
    mod[0] = a.col / tp + a.dup; /* QKV (MLA: its down and up projections, the latents' norms) */
    mod[1] = a.o * h / tp;
    mod[2] = in * h * ffn;
    mod[3] = h * ffn;
}

static bool refetched(const double mod[4], int i, double reuse)
{
    double after = 0;
    for (int j = i + 1; j < 4; j++)
        after += mod[j];
    return 2 * after > reuse;
}

double workload_layer_refetch_frac(const workload_model *m, bool moe, int tp, int ep, double reuse)
{
    double mod[4], all = 0, again = 0;
    layer_modules(m, moe, tp, ep, mod);
    for (int i = 0; i < 4; i++) {
        all += mod[i];
        if (refetched(mod, i, reuse))
            again += mod[i];
    }
    return all > 0 ? again / all : 0;
}

int workload_layer_tensors(const workload_model *m, int tp, double reuse, bool refetch, double *numel, int max)
{
    workload_attn a;
    workload_attn_shape(m, &a);
    double h = m->hidden, f = m->ffn, mod[4], n_qk = m->heads * ((double)m->qk_dim + m->rope_dim);
    bool bias = !m->gated, mla = m->kv_lora > 0;
    layer_modules(m, false, tp, 1, mod);
    struct {
        double n;
        int mod; /* the module whose fate it shares (a norm: the one after it) */
    } t[16];
    int n = 0;
#define T(numel_, mod_) (t[n].n = (numel_), t[n].mod = (mod_), n++)
    T(h, 0);
    if (bias)
        T(h, 0);
    if (mla) { /* down projections and latent norms (whole on every rank), up projections (split) */
        if (m->q_lora > 0) {
            T(h * m->q_lora, 0);
            T(m->q_lora, 0);
            T(m->q_lora * n_qk / tp, 0);
        } else {
            T(h * n_qk / tp, 0);
        }
        T(h * ((double)m->kv_lora + m->rope_dim), 0);
        T(m->kv_lora, 0);
        T((double)m->kv_lora * m->heads * ((double)m->qk_dim + m->v_dim) / tp, 0);
    } else {
        T(mod[0], 0);
    }
    if (bias && !mla)
        T((a.q + a.k + a.v) / tp, 0);
    T(mod[1], 1);
    if (bias)
        T(h, 1);
    T(h, 2);
    if (bias)
        T(h, 2);
    if (m->gated) {
        T(h * f / tp, 2);
        T(h * f / tp, 2);
    } else {
        T(mod[2], 2);
        T(f / tp, 2);
    }
    T(mod[3], 3);
    if (bias)
        T(h, 3);
#undef T
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (refetch && !refetched(mod, t[i].mod, reuse))
            continue;
        if (k < max)
            numel[k] = t[i].n;
        k++;
    }
    return k;
}

bool workload_layer_is_moe(const workload_model *m, int layer)
{
    if (m->moe_pattern)
        return m->experts > 0 && layer >= 0 && layer < m->moe_pattern_len && m->moe_pattern[layer] == '1';
    return m->experts > 0 && layer >= m->dense_layers && (m->moe_freq <= 1 || layer % m->moe_freq == 0);
}

double workload_params(const workload_model *m)
{
    double n = 0;
    for (int l = 0; l < m->layers; l++)
        n += workload_layer_params(m, workload_layer_is_moe(m, l), NULL);
    double emb = (double)m->vocab * m->hidden;
    return n + emb * (m->tied ? 1 : 2) + (m->gated ? 1 : 2) * (double)m->hidden;
}

/* Forward matmul FLOPs of one layer for `tokens` tokens whose attention
 * spans `ctx` keys (Megatron's counting: QKV, scores, AV, projection, MLP). */
double workload_layer_fwd_flops(const workload_model *m, bool moe, double tokens, double ctx)
{
    workload_attn a;
    workload_attn_shape(m, &a);
    double h = m->hidden, mats = m->gated ? 3 : 2;
    double f = 2 * tokens * (a.col + h * a.down + a.o * h) + 2 * tokens * ctx * (a.q + a.o);
    if (moe)
        f += 2 * tokens * (h * m->experts + mats * h * ((double)m->topk * m->expert_ffn + m->shared_ffn));
    else
        f += 2 * tokens * mats * h * m->ffn;
    return f;
}

double workload_step_flops(const workload_spec *w)
{
    const workload_model *m = &w->m;
    double tokens = (double)w->global_batch * w->seq, f = 0, h = m->hidden;
    for (int l = 0; l < m->layers; l++)
        f += workload_layer_fwd_flops(m, workload_layer_is_moe(m, l), tokens, workload_layer_ctx(m, l, w->seq));
    f += 2 * tokens * h * m->vocab;
    /* MTP: per layer its projection, its transformer layer (the model's last kind, windowed or not) and
     * the LM head again */
    int last = m->layers - 1;
    f += w->mtp * (2 * tokens * 2 * h * h + workload_layer_fwd_flops(m, workload_layer_is_moe(m, last), tokens,
                                                                      workload_layer_ctx(m, last, w->seq)) +
                   2 * tokens * h * m->vocab);
    return 3 * f;
}

double workload_mtp_params(const workload_model *m)
{
    double h = m->hidden;
    return workload_layer_params(m, workload_layer_is_moe(m, m->layers - 1), NULL) + 2 * h * h + 3 * h;
}

double workload_mtp_rank_params(const workload_spec *w, double *expert, double *replicated)
{
    double h = w->m.hidden, e, r;
    /* of the last layer's kind (Megatron-LM builds the MTP layer from the decoder's last layer spec) */
    double d = workload_layer_rank_params(w, w->m.layers - 1, &e, &r) + 2 * h * h / w->tp + 3 * h;
    *expert = w->mtp * e;
    if (replicated)
        *replicated = w->mtp * (r + 3 * h);
    return w->mtp * d;
}

/* Weights, gradients and Adam state of `layers` layers from `first` (and
 * emb embedding-sized matrices: the input embedding, the LM head), bytes,
 * sharded as ZeRO says. */
/* bf16 weights 2 + grads grad_bytes + fp32 master, m, v 12 (Rajbhandari et al. 2020: 16 bytes/param)
 * of p parameters whose ZeRO states shard over `shards` ranks */
static double param_state_bytes(const workload_spec *w, double p, double shards)
{
    return p * (w->zero >= 3 ? 2 / shards : 2) + p * (w->zero >= 2 ? w->grad_bytes / shards : w->grad_bytes) +
           p * (w->zero >= 1 ? 12 / shards : 12);
}

/* (until 2026-12-02 a pp-1 untied model's LM head was left out: 7.8 GiB of Llama 3 8B's states
 * under DDP, and its Adam update) */
int workload_emb_matrices(const workload_spec *w, bool first, bool last, bool mtp)
{
    /* MTP: the MTP layers' stage holds the word embedding too (Megatron-LM builds the embedding where
     * mtp_process is set and all-reduces its gradients with the first stage's, as it ties an LM head),
     * unless that stage is the first, or the last of a tied model (whose LM head is that matrix) */
    return (first ? 1 : 0) + (last ? 1 : 0) - (first && last && w->m.tied ? 1 : 0) +
           (w->mtp > 0 && mtp && !first && !(last && w->m.tied) ? 1 : 0);
}

int workload_mtp_stage(const workload_spec *w)
{
    if (w->mtp <= 0)
        return -1;
    const workload_layout *L = w->pp_layout ? workload_layout_get(w->pp_layout, NULL) : NULL;
    return L && L->mtp_vs >= 0 ? L->mtp_vs % w->pp : w->pp - 1;
}

/* A rank's weights and states: dense parameters split by tp (norms, row-parallel
 * biases and the router whole on every tp rank), their ZeRO
 * states over the dp x cp group; routed experts split by ep x etp, not by tp
 * (expert-tensor-parallel etp, as the trace holds them), so their states shard
 * over the expert-data-parallel group tp x dp x cp / (ep x etp), the group the trace reduces
 * their gradients over (until 2026-12-02 it was dp x cp / ep: Mixtral on 16 GPUs at
 * tp 2, dp 8, ep 8 with ZeRO-1, SP and recompute was 88.4 GiB, not 56.9). */
static double states_bytes(const workload_spec *w, int first, int layers, int emb, bool mtp)
{
    const workload_model *m = &w->m;
    double p = 0, pe = 0, rep = 0; /* rep: the weights whole on every TP rank but linear layers' */
    for (int l = first; l < first + layers; l++) {
        double e, r;
        p += workload_layer_rank_params(w, l, &e, &r);
        pe += e;
        rep += r - workload_layer_tp_replicated_linear(m);
    }
    if (mtp && w->mtp > 0) { /* the MTP layers (the last stage's, or the layout's stage's) */
        double e, r;
        p += workload_mtp_rank_params(w, &e, &r);
        pe += e;
        rep += r - w->mtp * workload_layer_tp_replicated_linear(m);
    }
    /* --dtype fp8: Transformer Engine keeps each linear layer's fp8 weight and its columnwise copy
     * from the first microbatch on, 2 bytes a weight (a transpose on Hopper; mxfp8's and blockwise's
     * own quantization; per-tensor recipes on Blackwell read the one copy both ways: 1 byte; under
     * ZeRO-3 only a layer's at a time: not counted; under --fp8-param-gather the fp8 weight and its
     * transpose are the weights' 2 bytes; mxfp8's gathers its bf16 weights into a bf16 buffer beside
     * them unless that buffer is the gradients' (--reuse-grad-buf-for-mxfp8-param-ag: Megatron-LM maps
     * only the gradients of mxfp8 weights to its buffers), so its 2 bytes stay without that flag) */
    double per = w->fp8_recipe >= WL_FP8_MXFP8 || workload_fp8_transposes(w->gpu_cc) ? 2 : 1;
    bool kept_once = w->fp8_param_gather && (w->fp8_recipe != WL_FP8_MXFP8 || w->mxfp8_grad_buf);
    double cache = w->dtype == COMPUTE_FP8 && w->zero < 3 && !kept_once ? per * (p - rep + pe) : 0;
    p += emb * (double)m->vocab * m->hidden / w->tp;
    double dpc = (double)w->dp * w->cp;
    return param_state_bytes(w, p, dpc) + param_state_bytes(w, pe, dpc * w->tp / ((double)w->ep * w->etp)) + cache;
}

/* Activation bytes one micro-batch leaves on a rank for layer l until its
 * backward. Full recompute keeps the layer's input, 2sbh, split by tp under
 * SP (Korthikanti et al. 2022 Table 2: 2sbhL/t; until 2026-12-02 SP did not
 * split it here). Otherwise their 34 s b h without the 5 a s^2 b of attention
 * scores, softmax and its dropout mask (FlashAttention, the attention kernel
 * timed here, keeps none of them): 10 sbh of norms, inputs and dropout masks
 * split by tp only under SP, 8 sbh of attention and the MLP's 16 sbh by tp.
 * The attention's 8 are Q, K, V and the output, 2 sbh each; with grouped-query
 * attention K and V are kv_heads/heads of that (Llama 3 70B: 4.5); with
 * MLA they are the widths the kernel reads, 2 (q + k + v + o) / h (DeepSeek-V3:
 * 22.9), and the latents' norm inputs and outputs and the RoPE key are kept too.
 * Those 16 are the GELU MLP's (F = 4h) GELU input and fc2 input, 4F/h; a
 * SwiGLU MLP keeps fc1's output (2F) and the SwiGLU output (F), 6F/h; an MoE
 * layer instead keeps, for each of a token's topk routes, the permuted input
 * (2 sbh) and its expert's activations (6 or 4 F_e/h), and the shared expert's
 * (ETP splits no tokens here: the etp gather brings etp x the tokens through
 * 1/etp of each FFN). Until 2026-12-02 every layer counted 16, so Llama's
 * (F = 3.5h, SwiGLU: 21) and Mixtral's MoE layers (2 x (2 + 21) = 46) were
 * undercounted, and attention 8 whatever its KV heads. */
static double layer_act_bytes(const workload_spec *w, int l, bool hot)
{
    const workload_model *m = &w->m;
    double s = (double)w->seq / w->cp, b = w->micro_batch, h = m->hidden, t = w->tp, sbh = s * b * h;
    double per_f = m->gated ? 6 : 4, mlp;
    unsigned rc = w->recompute_modules;
    bool moe = workload_layer_is_moe(m, l), mla = m->kv_lora > 0;
    if (moe) { /* the routed tokens as the capacity factor leaves them */
        double routes = m->topk * workload_moe_rank_load(w, hot); /* as many as the rank receives */
        mlp = routes * (2 + per_f * m->expert_ffn / h) + per_f * m->shared_ffn / h;
        if (rc & WL_RC_MOE_ACT) /* each route's activation output (fc2's input), 2 F_e / h */
            mlp -= routes * 2 * m->expert_ffn / h;
        if (rc & WL_RC_SHARED_EXPERTS)
            mlp -= per_f * m->shared_ffn / h;
        if (rc & WL_RC_MOE) /* the layer rerun from its input (the pre-MLP norm's output, among the norms') */
            mlp = 0;
    } else {
        mlp = rc & WL_RC_MLP ? 0 : per_f * m->ffn / h;
    }
    workload_attn a;
    workload_attn_shape(m, &a);
    double attn = 2 * ((rc & WL_RC_MLA_UP_PROJ) && mla ? 0 : a.q + a.k + a.v) / h + 2 * a.o / h;
    /* MLA: the two latents' norm inputs and outputs and the RoPE key, split like the norms; selective
     * layernorm recomputation drops the outputs of the norms that are modules of their own (MLA's input
     * norm, an MoE layer's pre-MLP norm), 2 s b h each */
    double lat = 2 * (2 * ((double)m->q_lora + m->kv_lora) + m->rope_dim) / h * mla;
    double norms = 10 + lat - (rc & WL_RC_LAYERNORM ? 2.0 * mla + 2.0 * moe : 0);
    /* the unfused attention keeps its scores' softmax (2 bytes), dropout mask (1) and dropout output (2)
     * for its backward, 5 a s^2 b over TP (Korthikanti et al. 2022); selective core_attn reruns it
     * instead; flash keeps none (its backward recomputes them). (No CP: Megatron-LM's unfused attention
     * asserts cp 1.) */
    double scores = w->attn_backend == WL_ATTN_UNFUSED && !(rc & WL_RC_CORE_ATTN)
                        ? 5.0 * m->heads * (double)w->seq * w->seq * b / t
                        : 0;
    return sbh * ((w->sp ? norms / t : norms) + (attn + mlp) / t) + scores;
}

int workload_recomputed_layers(const workload_spec *w, int n)
{
    if (!w->recompute)
        return 0;
    return w->recompute_method == WL_RC_BLOCK ? MIN(n, MAX(w->recompute_layers, 0)) : n;
}

/* The activations of layers first .. first+n-1 (a model chunk, Megatron-LM's
 * TransformerBlock) for one micro-batch (and of the MTP layers where mtp).
 * Full recomputation keeps a checkpoint's input, 2 s b h (split by tp under
 * SP): one a layer (uniform, the default), one each N layers (uniform with
 * --recompute-num-layers N, the last checkpoint taking the rest), or one a
 * layer for the first N layers and all of the others' (block); each MTP
 * layer is a checkpoint of its own. The rerun layers' activations live only
 * during their backward (not counted). */
static double act_bytes(const workload_spec *w, int first, int n, bool mtp)
{
    double s = (double)w->seq / w->cp, ckpt = 2 * (s * w->micro_batch * w->m.hidden) / (w->sp ? w->tp : 1), a = 0;
    int r = workload_recomputed_layers(w, n), per = MAX(w->recompute_layers, 1);
    int ckpts = w->recompute && w->recompute_method != WL_RC_BLOCK ? (n + per - 1) / per : r;
    for (int i = 0; i < ckpts; i++)
        a += ckpt;
    /* under --moe-load-imbalance the EP rank at place e receives the busiest share in MoE layer l when
     * l mod ep = e (an MTP layer: layers mod ep): the most of it over the places */
    int places = w->moe_imbalance > 1 && w->ep > 1 ? w->ep : 1;
    double most = 0;
    for (int e = 0; e < places; e++) {
        double x = places > 1 ? 0 : a; /* (balanced: summed onto the checkpoints, as always) */
        for (int l = first + r; l < first + n; l++)
            x += layer_act_bytes(w, l, l % places == e);
        if (mtp) /* the MTP layers, each a layer of the last kind */
            x += w->mtp * (w->recompute ? ckpt : layer_act_bytes(w, w->m.layers - 1, w->m.layers % places == e));
        most = MAX(most, x);
    }
    return places > 1 ? a + most : most;
}

/* --tp-comm-overlap's userbuffers: Transformer Engine's initialize_ub, as Megatron-LM calls it, makes one
 * buffer of the rank's (seq / cp x micro-batch) tokens x hidden for each of its ten overlapped GEMMs
 * (qkv/fc1 fprop and proj/fc2 dgrad ring exchanges, proj/fc2 fprop pipelines, qkv/fc1 dgrad and wgrad
 * bulk overlaps), registered for peers to write, so held for the whole run: 2 bytes an element, 1 in
 * the four all-gather rings' under fp8 (their fp8_buf). */
static double ub_bytes(const workload_spec *w)
{
    if (!w->tp_comm_overlap || w->tp < 2)
        return 0;
    double elems = (double)w->seq / w->cp * w->micro_batch * w->m.hidden;
    return elems * (6 * 2 + 4 * (w->dtype == COMPUTE_FP8 ? 1 : 2));
}

double workload_memory_bytes(const workload_spec *w)
{
    /* no global batch yet (a layout being chosen): assume a full pipeline */
    int64_t mb = w->global_batch > 0 ? w->global_batch / ((int64_t)w->micro_batch * w->dp) : G_MAXINT;
    if (w->vpp > 1) {
        /* interleaved: stage s holds its warm-up + 1 chunk-microbatches, 2(p-s-1) + (V-1)p + 1
         * (at most mV), of its chunks' layers: for stage 0 with equal chunks p (1 + (p-1)/(pV))
         * microbatches' worth (Korthikanti et al. 2022); with uneven chunks each counted at its
         * longest chunk (an upper bound). The busiest stage. Combined 1F1B (moe_ep_overlap) warms
         * up one more. */
        int v = w->vpp;
        double most = 0;
        int ms = workload_mtp_stage(w);
        for (int st = 0; st < w->pp; st++) {
            int64_t chunks = 2 * (w->pp - st - 1) + (int64_t)(v - 1) * w->pp + 1 + (w->moe_ep_overlap ? 1 : 0);
            if (chunks > mb * v)
                chunks = mb * v;
            double states = 0, longest = 0;
            for (int c = 0; c < v; c++) {
                int first, n = workload_chunk_layers(w, st, c, &first);
                bool mtp = st == ms && c == v - 1;
                states += states_bytes(w, first, n,
                                       workload_emb_matrices(w, st == 0 && c == 0, st == w->pp - 1 && c == v - 1, mtp),
                                       mtp);
                longest = MAX(longest, act_bytes(w, first, n, mtp));
            }
            most = MAX(most, states + longest * (double)chunks);
        }
        return most + ub_bytes(w);
    }
    /* 1F1B: stage s holds min(pp - s, m) microbatches; the busiest stage (stage 0 when the
     * stages are equal; with uneven stages a longer stage behind it can be busier). Combined 1F1B
     * (moe_ep_overlap, pp 1) holds two: the next microbatch's forward is done before the last one's
     * backward. */
    double most = 0;
    int ms = workload_mtp_stage(w);
    for (int st = 0; st < w->pp; st++) {
        int first, n = workload_stage_layers(w, st, &first);
        int inflight = (int)MIN(w->pp - st + (w->moe_ep_overlap ? 1 : 0), mb);
        double bytes = states_bytes(w, first, n, workload_emb_matrices(w, st == 0, st == w->pp - 1, st == ms), st == ms) +
                       act_bytes(w, first, n, st == ms) * inflight;
        most = MAX(most, bytes);
    }
    return most + ub_bytes(w);
}

double workload_op_estimate(const workload_spec *w)
{
    double mb = (double)(w->global_batch / ((int64_t)w->micro_batch * w->dp));
    double per_layer = (w->recompute ? 3 : 2) *
                       (w->m.experts ? 12 + (w->m.shared_ffn ? 3 : 0) + (w->etp > 1 ? 2 : 0) : 8);
    if (w->cp > 1 && w->cp_comm == WL_CP_P2P) /* a forward's cp steps and 2 (cp-1) transfers, a backward's 3 cp */
        per_layer += (w->recompute ? 3 : 2) * 3.0 * w->cp;
    else if (w->cp > 1 && w->cp_comm == WL_CP_A2A)
        per_layer += (w->recompute ? 3 : 2) * 4;
    else if (w->cp > 1 && w->cp_comm == WL_CP_A2A_P2P && w->cp_a2a > 0) /* the ring's over cp / A, and 4 a2a */
        per_layer += (w->recompute ? 3 : 2) * (3.0 * w->cp / w->cp_a2a + 4);
    if (w->tp_comm_overlap && w->tp > 1) /* two rings of tp steps and 2 (tp-1) transfers, 4 splits, forward and back */
        per_layer += (w->recompute ? 3 : 2) * (6.0 * w->tp + 16 + (w->dtype == COMPUTE_FP8 ? 4 : 0));
    /* layer groups of a stage: at most layer_fuse layers each */
    double longest = ceil((double)w->m.layers / w->pp / w->vpp); /* the longest chunk's layers */
    int mid;
    if (stage_counts(w, &mid))
        longest = (double)MAX(MAX(mid, w->first_stage_layers), w->last_stage_layers) / w->vpp;
    const workload_layout *L = w->pp_layout ? workload_layout_get(w->pp_layout, NULL) : NULL;
    for (int j = 0; L && j < L->n; j++)
        longest = j ? MAX(longest, L->dec[j]) : L->dec[j];
    double groups = ceil(longest / w->layer_fuse) * w->vpp;
    double ops = (double)w->gpus * mb * groups * per_layer;
    ops += (double)w->gpus / w->pp * mb * w->mtp * (per_layer + 10); /* the last stage's MTP layers, their heads */
    if (w->dtype == COMPUTE_FP8) /* a microbatch's two amax reductions per chunk, the weights' cast */
        ops += (double)w->gpus * (mb * 2 + 1) * w->vpp;
    if (w->zero3_param_sync) { /* per tensor, not fused: host op, collective, copies */
        double t[16];
        int n = workload_layer_tensors(&w->m, w->tp, w->reuse_distance, false, t, 16);
        int again = w->recompute ? workload_layer_tensors(&w->m, w->tp, w->reuse_distance, true, t, 16) : 0;
        ops += (double)w->gpus * mb * ceil((double)w->m.layers / w->pp) * 3 * (3 * n + again);
    }
    return ops;
}

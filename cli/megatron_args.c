/* cli/megatron_args.c - reads a file of Megatron-LM's pretrain_gpt.py
 * arguments (as a launch script holds them: several a line, '\' line
 * continuations, # comments, a bash array's "NAME=(" and ")" around them)
 * and says them as conveyor's workload options (megatron_args.h). The
 * arguments that set what a step runs are translated; those that do not
 * (learning rate, data, logging, checkpoints, kernels' choices) are listed
 * as ignored; those that change a step in a way not modelled here are named
 * in a note. */
#include "megatron_args.h"

#include "traces/workload.h"
#include "wlopts.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEG_ERROR (g_quark_from_static_string("megatron-args"))

typedef enum {
    M_VALUE,   /* one value, passed on */
    M_FLAG,    /* no value */
    M_LIST,    /* one or more values, joined with commas */
    M_SPECIAL, /* no value, handled in translate_one */
    M_SPECIAL_VALUE, /* one or more values, handled in translate_one */
} meg_kind;

static const struct {
    const char *meg, *ours;
    meg_kind kind;
} table[] = {
    {"--tensor-model-parallel-size", "--tp", M_VALUE},
    {"--pipeline-model-parallel-size", "--pp", M_VALUE},
    {"--context-parallel-size", "--cp", M_VALUE},
    {"--expert-model-parallel-size", "--ep", M_VALUE},
    {"--expert-tensor-parallel-size", "--etp", M_VALUE},
    {"--sequence-parallel", "--sp", M_FLAG},
    {"--micro-batch-size", "--micro-batch", M_VALUE},
    {"--global-batch-size", "--global-batch", M_VALUE},
    {"--seq-length", "--seq", M_VALUE},
    {"--num-layers", "--layers", M_VALUE},
    {"--hidden-size", "--hidden", M_VALUE},
    {"--num-attention-heads", "--heads", M_VALUE},
    {"--ffn-hidden-size", "--ffn", M_VALUE},
    {"--swiglu", "--gated", M_FLAG},
    {"--padded-vocab-size", "--vocab", M_VALUE},
    {"--vocab-size", "--vocab", M_VALUE},
    {"--num-experts", "--experts", M_VALUE},
    {"--moe-router-topk", "--topk", M_VALUE},
    {"--moe-ffn-hidden-size", "--expert-ffn", M_VALUE},
    {"--moe-shared-expert-intermediate-size", "--shared-ffn", M_VALUE},
    {"--moe-token-dispatcher-type", "--moe-token-dispatcher-type", M_VALUE},
    {"--moe-router-num-groups", "--moe-router-num-groups", M_VALUE},
    {"--moe-router-group-topk", "--moe-router-group-topk", M_VALUE},
    {"--moe-expert-capacity-factor", "--moe-expert-capacity-factor", M_VALUE},
    {"--moe-pad-expert-input-to-capacity", "--moe-pad-expert-input-to-capacity", M_FLAG},
    {"--moe-shared-expert-overlap", "--moe-shared-expert-overlap", M_FLAG},
    {"--overlap-moe-expert-parallel-comm", "--overlap-moe-expert-parallel-comm", M_FLAG},
    {"--delay-wgrad-compute", "--delay-wgrad-compute", M_FLAG},
    {"--q-lora-rank", "--q-lora-rank", M_VALUE},
    {"--kv-lora-rank", "--kv-lora-rank", M_VALUE},
    {"--qk-head-dim", "--qk-head-dim", M_VALUE},
    {"--qk-pos-emb-head-dim", "--qk-pos-emb-head-dim", M_VALUE},
    {"--v-head-dim", "--v-head-dim", M_VALUE},
    {"--mtp-num-layers", "--mtp-num-layers", M_VALUE},
    {"--decoder-first-pipeline-num-layers", "--decoder-first-pipeline-num-layers", M_VALUE},
    {"--decoder-last-pipeline-num-layers", "--decoder-last-pipeline-num-layers", M_VALUE},
    {"--pipeline-model-parallel-layout", "--pipeline-model-parallel-layout", M_VALUE},
    {"--account-for-embedding-in-pipeline-split", "--account-for-embedding-in-pipeline-split", M_FLAG},
    {"--account-for-loss-in-pipeline-split", "--account-for-loss-in-pipeline-split", M_FLAG},
    {"--num-layers-per-virtual-pipeline-stage", "--num-layers-per-virtual-pipeline-stage", M_VALUE},
    {"--num-virtual-stages-per-pipeline-rank", "--num-virtual-stages-per-pipeline-rank", M_VALUE},
    {"--recompute-granularity", "--recompute-granularity", M_VALUE},
    {"--recompute-method", "--recompute-method", M_VALUE},
    {"--recompute-num-layers", "--recompute-num-layers", M_VALUE},
    {"--recompute-modules", "--recompute-modules", M_LIST},
    {"--tp-comm-overlap", "--tp-comm-overlap", M_FLAG},
    {"--overlap-param-gather", "--overlap-param-gather", M_FLAG},
    {"--cp-comm-type", "--cp-comm", M_SPECIAL_VALUE},
    {"--hierarchical-context-parallel-sizes", "--hierarchical-context-parallel-sizes", M_LIST},
    {"--fp8-recipe", "--fp8-recipe", M_VALUE},
    {"--fp8-param-gather", "--fp8-param-gather", M_FLAG},
    {"--reuse-grad-buf-for-mxfp8-param-ag", "--reuse-grad-buf-for-mxfp8-param-ag", M_FLAG},
    {"--attention-backend", "--attention-backend", M_VALUE},
    /* the special ones */
    {"--use-flash-attn", NULL, M_SPECIAL},
    {"--use-distributed-optimizer", NULL, M_SPECIAL},
    {"--use-torch-fsdp2", NULL, M_SPECIAL},
    {"--use-megatron-fsdp", NULL, M_SPECIAL},
    {"--num-query-groups", NULL, M_SPECIAL_VALUE},
    {"--group-query-attention", NULL, M_SPECIAL},
    {"--untie-embeddings-and-output-weights", NULL, M_SPECIAL},
    {"--moe-layer-freq", NULL, M_SPECIAL_VALUE},
    {"--moe-enable-deepep", NULL, M_SPECIAL},
    {"--multi-latent-attention", NULL, M_SPECIAL},
    {"--recompute-activations", NULL, M_SPECIAL},
    {"--fp8-format", NULL, M_SPECIAL_VALUE},
    {"--fp16", NULL, M_SPECIAL},
    {"--bf16", NULL, M_SPECIAL},
    {"--grad-reduce-in-bf16", NULL, M_SPECIAL},
    {"--accumulate-allreduce-grads-in-fp32", NULL, M_SPECIAL},
    {"--kv-channels", NULL, M_SPECIAL_VALUE},
    {"--window-size", NULL, M_SPECIAL_VALUE},
    {"--window-attn-skip-freq", NULL, M_SPECIAL_VALUE},
    {"--overlap-grad-reduce", NULL, M_SPECIAL},
};

/* Arguments that change a step in ways conveyor does not model: named in a note. */
static const char *const unmodelled[] = {
    "--cpu-offloading", "--moe-router-load-balancing-type", "--moe-aux-loss-coeff", "--distribute-saved-activations",
    "--fine-grained-activation-offloading", "--offload-modules",
    "--moe-router-padding-for-fp8", "--fp8-param", "--use-precision-aware-optimizer",
    "--optimizer-cpu-offload", "--moe-paged-stash",
};

/* one argument: its name, values and the line it began on */
typedef struct {
    char *name;
    GPtrArray *vals; /* char* */
    int line;
} meg_arg;

typedef struct {
    const char *path;
    GPtrArray *out, *ignored, *notes;
    bool bf16, fp16, fp32_grads, bf16_grads, gqa, untie, swiglu, mla, overlap_grad, fsdp;
    char *kv_groups; /* --num-query-groups, taken with --group-query-attention */
    int kv_groups_line;
    int kv_channels, hidden, heads, kv_channels_line;
    int layers, pattern_layers, pattern_line; /* --num-layers; a --moe-layer-freq pattern's length */
    int window_layers, window_line; /* a --window-attn-skip-freq pattern's length */
} meg_state;

static void emit(meg_state *s, const char *opt, const char *val)
{
    g_ptr_array_add(s->out, g_strdup(opt));
    if (val)
        g_ptr_array_add(s->out, g_strdup(val));
}

static gboolean fail(meg_state *s, int line, GError **err, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static gboolean fail(meg_state *s, int line, GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, MEG_ERROR, 1, "%s: line %d: %s", s->path, line, msg);
    return FALSE;
}

/* Megatron-LM's --moe-layer-freq: an integer N (layer i MoE when i % N = 0,
 * conveyor's --moe-layer-freq), or a pattern of the layers' kinds
 * (workload_moe_pattern_parse), given as --dense-layers D --moe-layer-freq N
 * where it is D dense layers and then every N-th an MoE layer (DeepSeek-V3's
 * "([0]*3+[1]*58)" is D 3, N 1), as the pattern itself otherwise (Llama 4's
 * "([0]+[1])*24", odd layers MoE). */
static gboolean moe_freq(meg_state *s, const meg_arg *a, const char *v, GError **err)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (end != v && !*end && n >= 1) {
        emit(s, "--moe-layer-freq", v);
        return TRUE;
    }
    GError *e = NULL;
    const char *k = workload_moe_pattern_parse(v, &e);
    if (!k) {
        gboolean r = fail(s, a->line, err, "%s", e->message);
        g_error_free(e);
        return r;
    }
    /* the one candidate: D = the first MoE layer, N = the gap to the next (or, with one MoE layer, the
     * first's index, or the layers where it is layer 0); then every layer checked */
    int L = (int)strlen(k), first = -1, second = -1;
    for (int l = 0; l < L && second < 0; l++)
        if (k[l] == '1')
            *(first < 0 ? &first : &second) = l;
    int f = second >= 0 ? second - first : first > 0 ? first : L;
    bool same = first % f == 0;
    for (int l = 0; same && l < L; l++)
        same = (k[l] == '1') == (l >= first && l % f == 0);
    s->pattern_layers = L;
    s->pattern_line = a->line;
    if (!same) {
        emit(s, "--moe-layer-freq", v);
        return TRUE;
    }
    char buf[16];
    if (first > 0) {
        g_snprintf(buf, sizeof buf, "%d", first);
        emit(s, "--dense-layers", buf);
    }
    if (f > 1) {
        g_snprintf(buf, sizeof buf, "%d", f);
        emit(s, "--moe-layer-freq", buf);
    }
    return TRUE;
}

/* conveyor's options that take a whole number (>= 1) */
static const char *const int_opts[] = {
    "--tp", "--pp", "--cp", "--ep", "--etp", "--micro-batch", "--global-batch", "--seq", "--layers", "--hidden",
    "--heads", "--ffn", "--vocab", "--experts", "--topk", "--expert-ffn", "--shared-ffn", "--moe-router-num-groups",
    "--moe-router-group-topk", "--q-lora-rank", "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim",
    "--v-head-dim", "--mtp-num-layers", "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
    "--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank", "--recompute-num-layers",
};

/* A whole number from 1, checked where the file's line is known. */
static gboolean whole_number(meg_state *s, const meg_arg *a, const char *v, GError **err)
{
    guint64 n;
    if (!g_ascii_string_to_unsigned(v, 10, 1, 1u << 30, &n, NULL))
        return fail(s, a->line, err, "%s '%s': expected a whole number from 1", a->name, v);
    return TRUE;
}

/* Check a value here, where the file's line is known, that the option's parser would refuse later. */
static gboolean check_value(meg_state *s, const meg_arg *a, const char *ours, const char *v, GError **err)
{
    GError *e = NULL;
    int i;
    unsigned u;
    for (size_t k = 0; k < G_N_ELEMENTS(int_opts); k++)
        if (!strcmp(int_opts[k], ours))
            return whole_number(s, a, v, err);
    bool ok = true;
    if (!strcmp(ours, "--moe-token-dispatcher-type"))
        ok = workload_moe_dispatcher_parse(v, &i, &e);
    else if (!strcmp(ours, "--cp-comm"))
        ok = workload_cp_comm_parse(v, &i, &e);
    else if (!strcmp(ours, "--fp8-recipe"))
        ok = workload_fp8_recipe_parse(v, &i, &e);
    else if (!strcmp(ours, "--attention-backend"))
        ok = workload_attn_backend_parse(v, &i, &e);
    else if (!strcmp(ours, "--recompute-modules"))
        ok = workload_recompute_modules_parse(v, &u, &e);
    else if (!strcmp(ours, "--pipeline-model-parallel-layout"))
        ok = workload_layout_get(v, &e) != NULL;
    else if (!strcmp(ours, "--recompute-granularity") && strcmp(v, "full") && strcmp(v, "selective"))
        return fail(s, a->line, err, "%s '%s': expected full or selective", a->name, v);
    else if (!strcmp(ours, "--recompute-method") && strcmp(v, "uniform") && strcmp(v, "block"))
        return fail(s, a->line, err, "%s '%s': expected uniform or block", a->name, v);
    if (!ok) { /* the parsers' messages name the option, but the layout's */
        gboolean r = g_str_has_prefix(e->message, "--") ? fail(s, a->line, err, "%s", e->message)
                                                         : fail(s, a->line, err, "%s: %s", a->name, e->message);
        g_error_free(e);
        return r;
    }
    return TRUE;
}

static gboolean translate_one(meg_state *s, const meg_arg *a, GError **err)
{
    size_t k = 0;
    while (k < G_N_ELEMENTS(table) && strcmp(table[k].meg, a->name))
        k++;
    if (k == G_N_ELEMENTS(table)) {
        for (size_t u = 0; u < G_N_ELEMENTS(unmodelled); u++)
            if (!strcmp(unmodelled[u], a->name)) {
                g_ptr_array_add(s->notes, g_strdup_printf("%s (line %d) changes the step in a way not modelled here",
                                                          a->name, a->line));
                return TRUE;
            }
        g_ptr_array_add(s->ignored, g_strdup(a->name));
        return TRUE;
    }
    guint nv = a->vals->len;
    const char *v = nv ? g_ptr_array_index(a->vals, 0) : NULL;
    bool wants_value = table[k].kind == M_VALUE || table[k].kind == M_LIST || table[k].kind == M_SPECIAL_VALUE;
    if (wants_value && !nv)
        return fail(s, a->line, err, "%s needs a value", a->name);
    if (!wants_value && nv)
        return fail(s, a->line, err, "%s takes no value (got '%s')", a->name, v);
    if (table[k].kind == M_VALUE && nv > 1)
        return fail(s, a->line, err, "%s takes one value (got %u)", a->name, nv);
    for (guint i = 0; i < nv; i++)
        if (((const char *)g_ptr_array_index(a->vals, i))[0] == '$')
            return fail(s, a->line, err, "%s %s: a shell variable; write the value itself", a->name,
                        (const char *)g_ptr_array_index(a->vals, i));
    switch (table[k].kind) {
    case M_VALUE:
        if (!check_value(s, a, table[k].ours, v, err))
            return FALSE;
        if (!strcmp(table[k].ours, "--hidden"))
            s->hidden = atoi(v);
        if (!strcmp(table[k].ours, "--heads"))
            s->heads = atoi(v);
        if (!strcmp(table[k].ours, "--layers"))
            s->layers = atoi(v);
        emit(s, table[k].ours, v);
        return TRUE;
    case M_FLAG:
        emit(s, table[k].ours, NULL);
        if (!strcmp(a->name, "--swiglu"))
            s->swiglu = true;
        return TRUE;
    case M_LIST: {
        GString *j = g_string_new(NULL);
        for (guint i = 0; i < nv; i++)
            g_string_append_printf(j, "%s%s", i ? "," : "", (const char *)g_ptr_array_index(a->vals, i));
        gboolean ok = check_value(s, a, table[k].ours, j->str, err);
        if (ok)
            emit(s, table[k].ours, j->str);
        g_string_free(j, TRUE);
        return ok;
    }
    case M_SPECIAL:
    case M_SPECIAL_VALUE:
        break;
    }
    const char *n = a->name;
    if (!strcmp(n, "--cp-comm-type")) { /* one type, or one a layer: conveyor takes one for all */
        for (guint i = 1; i < nv; i++)
            if (strcmp(g_ptr_array_index(a->vals, i), v))
                return fail(s, a->line, err, "--cp-comm-type: one type a layer (%s, %s, ...) is not modelled; give one",
                            v, (const char *)g_ptr_array_index(a->vals, i));
        if (!check_value(s, a, "--cp-comm", v, err))
            return FALSE;
        emit(s, "--cp-comm", v);
    } else if (!strcmp(n, "--use-distributed-optimizer")) {
        emit(s, "--zero", "1");
    } else if (!strcmp(n, "--use-torch-fsdp2") || !strcmp(n, "--use-megatron-fsdp")) {
        s->fsdp = true;
        emit(s, "--fsdp", NULL);
    } else if (!strcmp(n, "--overlap-grad-reduce")) {
        s->overlap_grad = true;
    } else if (!strcmp(n, "--num-query-groups")) {
        if (!whole_number(s, a, v, err))
            return FALSE;
        g_free(s->kv_groups);
        s->kv_groups = g_strdup(v);
        s->kv_groups_line = a->line;
    } else if (!strcmp(n, "--group-query-attention")) {
        s->gqa = true;
    } else if (!strcmp(n, "--untie-embeddings-and-output-weights")) {
        s->untie = true;
    } else if (!strcmp(n, "--moe-layer-freq")) {
        return moe_freq(s, a, v, err);
    } else if (!strcmp(n, "--use-flash-attn")) { /* Megatron-LM's older flag: FlashAttention */
        emit(s, "--attention-backend", "flash");
    } else if (!strcmp(n, "--moe-enable-deepep")) {
        emit(s, "--moe-token-dispatcher-type", "flex");
    } else if (!strcmp(n, "--multi-latent-attention")) {
        s->mla = true;
    } else if (!strcmp(n, "--recompute-activations")) { /* Megatron-LM: selective, core_attn */
        emit(s, "--recompute-granularity", "selective");
    } else if (!strcmp(n, "--fp8-format")) {
        emit(s, "--dtype", "fp8");
    } else if (!strcmp(n, "--fp16")) {
        s->fp16 = true;
        emit(s, "--dtype", "fp16");
    } else if (!strcmp(n, "--bf16")) {
        s->bf16 = true;
    } else if (!strcmp(n, "--grad-reduce-in-bf16")) {
        s->bf16_grads = true;
    } else if (!strcmp(n, "--accumulate-allreduce-grads-in-fp32")) {
        s->fp32_grads = true;
    } else if (!strcmp(n, "--window-size") || !strcmp(n, "--window-attn-skip-freq")) {
        /* read as conveyor's options read them, here to name the line where one is wrong */
        wl_opts o = {0};
        GError *e = NULL;
        bool size = !strcmp(n, "--window-size");
        if (!(size ? wl_opts_set_window(&o, v, &e) : wl_opts_set_window_freq(&o, v, &e))) {
            gboolean r = fail(s, a->line, err, "%s", e->message);
            g_error_free(e);
            return r;
        }
        if (o.window_pattern) {
            s->window_layers = (int)strlen(o.window_pattern);
            s->window_line = a->line;
        }
        emit(s, n, v);
    } else if (!strcmp(n, "--kv-channels")) {
        if (!whole_number(s, a, v, err))
            return FALSE;
        s->kv_channels = atoi(v);
        s->kv_channels_line = a->line;
    }
    return TRUE;
}

/* The arguments of text: each "--name[=value]" with the values after it. */
static gboolean split_args(const char *path, const char *text, GPtrArray *args, GError **err)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    GString *logical = g_string_new(NULL);
    int start = 0;
    meg_arg *cur = NULL;
    for (int i = 0; lines[i]; i++) {
        char *l = g_strstrip(lines[i]);
        if (!logical->len)
            start = i + 1;
        if (l[0] == '#' && !logical->len)
            continue;
        size_t n = strlen(l);
        bool cont = n > 0 && l[n - 1] == '\\';
        if (cont)
            l[n - 1] = ' ';
        g_string_append(logical, l);
        g_string_append_c(logical, ' ');
        if (cont && lines[i + 1])
            continue;
        char *line = g_strstrip(logical->str);
        if (*line) {
            int argc;
            char **argv;
            GError *e = NULL;
            if (!g_shell_parse_argv(line, &argc, &argv, &e)) {
                g_set_error(err, MEG_ERROR, 1, "%s: line %d: %s", path, start, e->message);
                g_error_free(e);
                g_string_free(logical, TRUE);
                return FALSE;
            }
            for (int t = 0; t < argc; t++) {
                const char *tok = argv[t];
                if (tok[0] == '#') /* a comment to the line's end */
                    break;
                if (g_str_has_prefix(tok, "--") && tok[2]) {
                    cur = g_new0(meg_arg, 1);
                    cur->vals = g_ptr_array_new_with_free_func(g_free);
                    cur->line = start;
                    const char *eq = strchr(tok, '=');
                    cur->name = eq ? g_strndup(tok, (gsize)(eq - tok)) : g_strdup(tok);
                    if (eq)
                        g_ptr_array_add(cur->vals, g_strdup(eq + 1));
                    g_ptr_array_add(args, cur);
                } else if (cur && strcmp(tok, ")") && strcmp(tok, "(") && !g_str_has_suffix(tok, "=(")) {
                    g_ptr_array_add(cur->vals, g_strdup(tok));
                } else {
                    cur = NULL; /* "NAME=(", ")", a command: not an argument's value */
                }
            }
            g_strfreev(argv);
        }
        g_string_truncate(logical, 0);
    }
    g_string_free(logical, TRUE);
    return TRUE;
}

static void meg_arg_free(gpointer p)
{
    meg_arg *a = p;
    g_free(a->name);
    g_ptr_array_free(a->vals, TRUE);
    g_free(a);
}

gboolean megatron_args_translate(const char *path, const char *text, GPtrArray *out, GPtrArray *ignored,
                                 GPtrArray *notes, GError **err)
{
    g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(meg_arg_free);
    if (!split_args(path, text, args, err))
        return FALSE;
    meg_state s = {.path = path, .out = out, .ignored = ignored, .notes = notes};
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < args->len; i++)
        ok = translate_one(&s, g_ptr_array_index(args, i), err);
    if (ok && s.pattern_layers && s.layers && s.pattern_layers != s.layers) /* Megatron-LM asserts */
        ok = fail(&s, s.pattern_line, err, "--moe-layer-freq's pattern has %d layers, --num-layers %d",
                  s.pattern_layers, s.layers);
    if (ok && s.window_layers && s.layers && s.window_layers != s.layers)
        ok = fail(&s, s.window_line, err, "--window-attn-skip-freq's pattern has %d layers, --num-layers %d",
                  s.window_layers, s.layers);
    if (ok && s.gqa && s.kv_groups) /* Megatron-LM takes the groups only with --group-query-attention */
        emit(&s, "--kv-heads", s.kv_groups);
    else if (ok && s.kv_groups)
        g_ptr_array_add(notes, g_strdup_printf("--num-query-groups (line %d) without --group-query-attention: "
                                               "Megatron-LM ignores it, and so does conveyor", s.kv_groups_line));
    /* gradients: bf16 training reduces them in fp32 unless --grad-reduce-in-bf16 (Megatron-LM's
     * validate_args); fp16 in fp16 unless --accumulate-allreduce-grads-in-fp32 */
    if (ok && ((s.bf16 && !s.bf16_grads) || (s.fp32_grads && !s.bf16_grads)))
        emit(&s, "--grad-fp32", NULL);
    /* Megatron-LM's DDP reduces the gradients after the backward unless --overlap-grad-reduce */
    if (ok && !s.overlap_grad && !s.fsdp)
        emit(&s, "--no-overlap-grad-reduce", NULL);
    if (ok && s.swiglu != s.untie)
        g_ptr_array_add(notes, g_strdup_printf("%s without %s: conveyor's custom model unties the embedding and "
                                               "the LM head exactly when the MLP is SwiGLU (--gated)",
                                               s.swiglu ? "--swiglu" : "--untie-embeddings-and-output-weights",
                                               s.swiglu ? "--untie-embeddings-and-output-weights" : "--swiglu"));
    if (ok && s.kv_channels > 0 && !s.mla && (s.heads <= 0 || (long)s.kv_channels * s.heads != s.hidden)) {
        char buf[16]; /* heads of another width than hidden / heads (Qwen3's); MLA's take their own widths */
        g_snprintf(buf, sizeof buf, "%d", s.kv_channels);
        emit(&s, "--kv-channels", buf);
    }
    g_free(s.kv_groups);
    return ok;
}

static gboolean expand(const char *cmd, int *argc, char ***argv, GPtrArray **owned, GError **err)
{
    *owned = NULL;
    int n = *argc;
    bool any = false;
    for (int i = 1; i < n; i++)
        any |= !strcmp((*argv)[i], "--megatron-args") || g_str_has_prefix((*argv)[i], "--megatron-args=");
    if (!any)
        return TRUE;
    GPtrArray *v = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(v, g_strdup((*argv)[0]));
    for (int i = 1; i < n; i++) {
        const char *a = (*argv)[i], *path = NULL;
        if (!strcmp(a, "--megatron-args")) {
            if (i + 1 >= n) {
                g_set_error(err, MEG_ERROR, 1, "--megatron-args needs a file");
                g_ptr_array_free(v, TRUE);
                return FALSE;
            }
            path = (*argv)[++i];
        } else if (g_str_has_prefix(a, "--megatron-args=")) {
            path = a + strlen("--megatron-args=");
        } else {
            g_ptr_array_add(v, g_strdup(a));
            continue;
        }
        g_autofree char *text = NULL;
        if (!g_file_get_contents(path, &text, NULL, err)) {
            g_ptr_array_free(v, TRUE);
            return FALSE;
        }
        g_autoptr(GPtrArray) ignored = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
        g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);
        if (!megatron_args_translate(path, text, out, ignored, notes, err)) {
            g_ptr_array_free(v, TRUE);
            return FALSE;
        }
        for (guint k = 0; k < out->len; k++)
            g_ptr_array_add(v, g_strdup(g_ptr_array_index(out, k)));
        for (guint k = 0; k < notes->len; k++)
            fprintf(stderr, "conveyor %s: %s: note: %s\n", cmd, path, (const char *)g_ptr_array_index(notes, k));
        if (ignored->len) {
            GString *g = g_string_new(NULL);
            for (guint k = 0; k < ignored->len; k++)
                g_string_append_printf(g, "%s%s", k ? " " : "", (const char *)g_ptr_array_index(ignored, k));
            fprintf(stderr, "conveyor %s: %s: ignored %u argument%s that conveyor does not model or that do not "
                            "change a step here: %s\n", cmd, path, ignored->len, ignored->len > 1 ? "s" : "", g->str);
            g_string_free(g, TRUE);
        }
    }
    *argc = (int)v->len;
    g_ptr_array_add(v, NULL);
    /* the vector option parsing rearranges: a copy of the pointers, the strings owned by v */
    char **vec = g_new(char *, v->len);
    memcpy(vec, v->pdata, v->len * sizeof(char *));
    g_ptr_array_add(v, vec); /* freed with v */
    *argv = vec;
    *owned = v;
    return TRUE;
}

gboolean megatron_args_expand(const char *cmd, int *argc, char ***argv, GPtrArray **owned)
{
    GError *err = NULL;
    if (expand(cmd, argc, argv, owned, &err))
        return TRUE;
    fprintf(stderr, "conveyor %s: %s\n", cmd, err->message);
    g_error_free(err);
    return FALSE;
}

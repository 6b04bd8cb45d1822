/* tests/workload_util.h - helpers shared by the workload test programs:
 * a GPU's compute model, a preset spec, and counting a rank's trace ops. */
#ifndef WORKLOAD_UTIL_H
#define WORKLOAD_UTIL_H

#include <string.h>

#include "traces/workload.h"

static inline gpu_model gpu(const char *name)
{
    gpu_model g;
    const gpu_spec *s = compute_gpu_find(name, 0, NULL);
    g_assert(s);
    compute_model_init(&g, s);
    return g;
}

static inline workload_spec spec(const char *model, int tp, int pp, int dp, int gb, int seq)
{
    workload_spec w = {.m = *workload_preset_find(model, NULL), .tp = tp, .pp = pp, .dp = dp, .gpus = tp * pp * dp,
                       .global_batch = gb, .seq = seq};
    workload_spec_defaults(&w);
    return w;
}

/* The step's FLOPs as its trace runs them: the model's count (workload_step_flops, no recomputation,
 * with the attention product over each layer's keys: 2 s ctx (q + o) FLOPs a sequence and layer
 * forward, q and o the query and value widths of all heads, ctx the sequence, or the sliding window's
 * min(W + 1, s) (workload_layer_ctx), twice that backward; MTP layers, of the last layer's kind,
 * included) with the product's three passes replaced by the share of the s x s square the kernel
 * computes (workload_attn_work_frac, or in a windowed layer workload_attn_window_frac) of the
 * forward's, the backward's (workload_attn_bwd_factor) and, where selective recomputation's core_attn
 * reruns it, the rerun's. (Full recomputation's rerun of the whole forward is not counted here.) */
static inline double step_flops_run(const workload_spec *w)
{
    workload_attn a;
    workload_attn_shape(&w->m, &a);
    double rerun = !w->recompute && (w->recompute_modules & WL_RC_CORE_ATTN) ? 1 : 0, s = w->seq;
    double f = workload_step_flops(w);
    for (int i = 0; i < w->m.layers + w->mtp; i++) {
        int l = i < w->m.layers ? i : w->m.layers - 1;
        bool swa = workload_layer_is_swa(&w->m, l);
        double per = (double)w->global_batch * 2.0 * s * (a.q + a.o);
        double frac = swa ? workload_attn_window_frac(w) : workload_attn_work_frac(w);
        f += frac * (1 + workload_attn_bwd_factor(w) + rerun) * per * s - 3 * per * workload_layer_ctx(&w->m, l, s);
    }
    return f;
}

static inline double rank_flops(const trace *t, int r)
{
    double f = 0;
    for (guint i = 0; i < t->ranks[r].ops->len; i++)
        f += g_array_index(t->ranks[r].ops, trace_op, i).flops;
    return f;
}

/* ops of rank r with this kind (and collective kind / name prefix when given) */
static inline int count(const trace *t, int r, trace_op_kind k, int coll, const char *prefix, double *bytes)
{
    int n = 0;
    if (bytes)
        *bytes = 0;
    for (guint i = 0; i < t->ranks[r].ops->len; i++) {
        const trace_op *o = &g_array_index(t->ranks[r].ops, trace_op, i);
        if (o->kind != k || (coll >= 0 && (int)o->coll != coll) || (prefix && !g_str_has_prefix(o->name, prefix)))
            continue;
        n++;
        if (bytes)
            *bytes += (double)o->bytes;
    }
    return n;
}

#endif

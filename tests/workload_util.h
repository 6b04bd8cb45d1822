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

/* bench/bench_replay.c - replaying a data-parallel training trace at chunk
 * level: each step is forward compute, backward in 4 buckets whose 25 MiB
 * gradient all_reduce (over all ranks, comm stream) overlaps the next
 * bucket's backward, then the optimizer; steps chain through stream order.
 * dgx-h100 nodes on ib-ndr. */
#include <glib.h>
#include <stdio.h>

#include "bench.h"
#include "models/replay.h"
#include "topologies/topo.h"

typedef struct {
    int nodes, steps;
    bool reuse; /* simulate each distinct collective once (replay_opts.iso) */
} rp_arg;

static trace *dp_trace(int nranks, int steps)
{
    trace *t = trace_new(nranks, "bench:data-parallel");
    int world = trace_group_world(t);
    for (int r = 0; r < nranks; r++) {
        for (int s = 0; s < steps; s++) {
            trace_op fwd = {.kind = TOP_COMPUTE, .name = "forward", .dur_ps = 30 * SIM_MS,
                            .seq = -1, .ts_ps = -1};
            trace_op_add(t, r, &fwd);
            uint32_t last_ar = UINT32_MAX;
            for (int b = 0; b < 4; b++) {
                trace_op bwd = {.kind = TOP_COMPUTE, .name = "backward", .dur_ps = 15 * SIM_MS,
                                .seq = -1, .ts_ps = -1};
                uint32_t bi = trace_op_add(t, r, &bwd);
                trace_op ar = {.kind = TOP_COLL, .stream = 1, .name = "grad all_reduce",
                               .coll = COLL_ALL_REDUCE, .bytes = 25u << 20, .group = world, .seq = -1, .dur_ps = -1,
                               .ts_ps = -1};
                last_ar = trace_op_add(t, r, &ar);
                trace_op_dep(t, r, last_ar, bi);
            }
            trace_op opt = {.kind = TOP_COMPUTE, .name = "optimizer", .dur_ps = 2 * SIM_MS, .seq = -1,
                            .ts_ps = -1};
            uint32_t oi = trace_op_add(t, r, &opt);
            trace_op_dep(t, r, oi, last_ar);
        }
    }
    return t;
}

static int replay_bench(const void *arg, bench_result *out)
{
    const rp_arg *a = arg;
    GError *err = NULL;
    topo *tp = topo_load("dgx-h100", &(topo_opts){.nodes = a->nodes}, &err);
    if (!tp) {
        fprintf(stderr, "%s\n", err->message);
        g_error_free(err);
        return 1;
    }
    coll_system sys, iso;
    topo_coll_system(&sys, tp, 2.5, 1);
    topo *tpi = a->reuse ? topo_load("dgx-h100", &(topo_opts){.nodes = a->nodes}, &err) : NULL;
    if (tpi)
        topo_coll_system(&iso, tpi, 2.5, 1);
    gint64 tb = g_get_monotonic_time();
    trace *t = dp_trace(tp->nranks, a->steps);
    if (!trace_validate(t, &err)) {
        fprintf(stderr, "%s\n", err->message);
        g_error_free(err);
        return 1;
    }
    double build_s = (double)(g_get_monotonic_time() - tb) * 1e-6;
    replay_opts o = {.sys = &sys, .compute_scale = 1, .iso = tpi ? &iso : NULL};
    replay_result res;
    gint64 t0 = g_get_monotonic_time();
    if (!replay_run(t, &o, &res, &err)) {
        fprintf(stderr, "%s\n", err->message);
        g_error_free(err);
        return 1;
    }
    out->wall_s = (double)(g_get_monotonic_time() - t0) * 1e-6;
    out->events = res.events + res.memo_events;
    out->sim_s = res.end_ps * 1e-12;
    const replay_coll *c = &g_array_index(res.colls, replay_coll, 0);
    g_snprintf(out->note, sizeof out->note,
               "%d ranks x %d steps: step %.4f ms, exposed comm %.4f ms/step; %s/%s; %s: %" G_GUINT64_FORMAT
               " collectives simulated alone, %" G_GUINT64_FORMAT " reused, %" G_GUINT64_FORMAT
               " overlaps; trace build %.2f s (not in wall)",
               tp->nranks, a->steps, res.end_ps * 1e-9 / a->steps, res.ranks[0].exposed_comm_ps * 1e-9 / a->steps,
               coll_algo_name(c->algo), coll_proto_name(c->proto), a->reuse ? "reuse" : "full", res.memo_runs,
               res.memo_hits, res.memo_overlaps, build_s);
    replay_result_clear(&res);
    trace_free(t);
    topo_free(tp);
    topo_free(tpi);
    return 0;
}

static const rp_arg dp_1024x1000 = {.nodes = 128, .steps = 1000, .reuse = true}, dp_1024x100 = {.nodes = 128, .steps = 100, .reuse = true},
                    dp_128x10_full = {.nodes = 16, .steps = 10},
                    dp_128x10_reuse = {.nodes = 16, .steps = 10, .reuse = true};

const bench_case bench_replay_cases[] = {
    {"replay.data_parallel", "{\"ranks\": 1024, \"steps\": 1000, \"reuse\": true}", replay_bench, &dp_1024x1000},
    {"replay.data_parallel_small", "{\"ranks\": 1024, \"steps\": 100, \"reuse\": true}", replay_bench, &dp_1024x100},
    {"replay.data_parallel", "{\"ranks\": 128, \"steps\": 10, \"reuse\": false}", replay_bench, &dp_128x10_full},
    {"replay.data_parallel", "{\"ranks\": 128, \"steps\": 10, \"reuse\": true}", replay_bench, &dp_128x10_reuse},
    {0},
};

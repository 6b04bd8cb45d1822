/* bench/bench_coll.c - whole collectives through coll_run.
 *
 * collective.ring_allreduce: 1,024 GPUs (dgx-h100, 128 nodes, ib-ndr),
 *   all_reduce of 1 GiB, Ring / Simple, channels from coll_channels().
 * collective.alltoall: the same system, alltoall of 1 GiB, Direct / Simple.
 * collective.nvl72_sweep: gb200-nvl72, 18 trays (72 GPUs), all_reduce from
 *   8 B to 8 GiB in x2 steps, each size tuned by coll_tune; events summed.
 *
 * wall_s is the time inside coll_run (which includes its route lookups and
 * fabric attach, not only the engine run); topology build is in the note.
 * sim_s is the simulated time of one collective (the sweep: the sum). */
#include <glib.h>

#include "bench.h"
#include "models/coll.h"
#include "topologies/topo.h"

typedef struct {
    const char *topo;
    int nodes;
    coll_kind kind;
    coll_algo_id algo;
} coll_arg;

static topo *load(const char *name, int nodes, double *build_s)
{
    GError *err = NULL;
    gint64 t0 = g_get_monotonic_time();
    topo *t = topo_load(name, &(topo_opts){.nodes = nodes}, &err);
    *build_s = (g_get_monotonic_time() - t0) / 1e3;
    if (!t) {
        g_printerr("%s: %s\n", name, err->message);
        g_error_free(err);
    }
    return t;
}

static int one_run(const void *arg, bench_result *out)
{
    const coll_arg *a = arg;
    double build_s; /* ms */
    topo *t = load(a->topo, a->nodes, &build_s);
    if (!t)
        return 1;
    coll_system sys;
    topo_coll_system(&sys, t, 2.5, 1);
    coll_request req = {.kind = a->kind, .bytes = 1ull << 30, .algo = a->algo, .proto = PROTO_SIMPLE,
                        .nchannels = coll_channels(&sys, a->algo)};
    coll_result res;
    GError *err = NULL;
    gint64 t0 = g_get_monotonic_time();
    bool ok = coll_run(&sys, &req, &res, &err);
    out->wall_s = (g_get_monotonic_time() - t0) / 1e6;
    if (!ok) {
        g_printerr("%s: %s\n", coll_kind_name(a->kind), err->message);
        g_error_free(err);
        topo_free(t);
        return 1;
    }
    out->events = res.events;
    out->sim_s = res.time_us / 1e6;
    g_snprintf(out->note, sizeof out->note, "%d GPUs, %s/%s %dch: %.1f us simulated, busbw %.1f GB/s; build %.0fms",
               sys.nranks, coll_algo_name(req.algo), coll_proto_name(req.proto), req.nchannels, res.time_us,
               (double)req.bytes * coll_busbw_factor(req.kind, sys.nranks) / (res.time_us * 1e3), build_s);
    topo_free(t);
    return 0;
}

static int sweep_run(const void *arg, bench_result *out)
{
    (void)arg;
    double build_s; /* ms */
    topo *t = load("gb200-nvl72", 18, &build_s);
    if (!t)
        return 1;
    coll_system sys;
    topo_coll_system(&sys, t, 2.5, 1);
    int sizes = 0;
    double wall = 0, sim = 0;
    uint64_t events = 0;
    double worst_wall = 0;
    uint64_t worst_bytes = 0;
    for (uint64_t bytes = 8; bytes <= (8ull << 30); bytes *= 2) {
        coll_request req;
        GError *err = NULL;
        if (!coll_tune(&sys, COLL_ALL_REDUCE, bytes, 0, 0, &req, NULL)) {
            g_printerr("nvl72_sweep: no algorithm for %llu B\n", (unsigned long long)bytes);
            topo_free(t);
            return 1;
        }
        coll_result res;
        gint64 t0 = g_get_monotonic_time();
        bool ok = coll_run(&sys, &req, &res, &err);
        double w = (g_get_monotonic_time() - t0) / 1e6;
        if (!ok) {
            g_printerr("nvl72_sweep %llu B: %s\n", (unsigned long long)bytes, err->message);
            g_error_free(err);
            topo_free(t);
            return 1;
        }
        if (w > worst_wall) {
            worst_wall = w;
            worst_bytes = bytes;
        }
        wall += w;
        sim += res.time_us / 1e6;
        events += res.events;
        sizes++;
    }
    out->events = events;
    out->wall_s = wall;
    out->sim_s = sim;
    g_snprintf(out->note, sizeof out->note, "%d GPUs, %d sizes 8 B..8 GiB tuned; slowest %llu B %.3fs; build %.0fms",
               sys.nranks, sizes, (unsigned long long)worst_bytes, worst_wall, build_s);
    topo_free(t);
    return 0;
}

static const coll_arg ring_1024 = {"dgx-h100", 128, COLL_ALL_REDUCE, ALGO_RING};
static const coll_arg a2a_1024 = {"dgx-h100", 128, COLL_ALLTOALL, ALGO_DIRECT};

const bench_case bench_coll_cases[] = {
    {"collective.ring_allreduce", "{\"gpus\": 1024, \"bytes\": 1073741824}", one_run, &ring_1024},
    {"collective.alltoall", "{\"gpus\": 1024, \"bytes\": 1073741824}", one_run, &a2a_1024},
    {"collective.nvl72_sweep", "{\"gpus\": 72, \"max_bytes\": 8589934592}", sweep_run, NULL},
    {0},
};

/* bench/bench_fabric.c - the fabric under all-to-all load: every GPU of a
 * rail-optimised DGX H100 cluster (ib-ndr fat-tree, as topologies/ builds it)
 * sends 64 MiB to one peer at once. The peers form a random permutation with
 * no fixed points (Sattolo's algorithm: one cycle through all GPUs, seeded,
 * deterministic). Each transfer moves 1 MiB chunks with at most 8 in flight
 * (window 8).
 *
 * wall_s is the engine run only (the transfers are started by one event at
 * t = 0, so their first injections are inside it); topology build and route
 * computation are timed separately and reported in the note. */
#include <glib.h>
#include <stdio.h>

#include "bench.h"
#include "models/fabric.h"
#include "sim/engine.h"
#include "topologies/topo.h"

typedef struct {
    int nodes;
} fabric_perm_arg;

enum { PERM_WINDOW = 8 };
#define PERM_BYTES (64ull << 20)
#define PERM_CHUNK (1ull << 20)

typedef struct {
    fabric *fab;
    const fab_route **route;
    int n;
    uint64_t done;
} perm_state;

static void on_perm_done(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    ((perm_state *)ctx)->done++;
}

static void perm_kick(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    perm_state *s = ctx;
    for (int i = 0; i < s->n; i++)
        fabric_transfer_start(s->fab, s->route[i], FAB_NONE, PERM_BYTES, PERM_CHUNK, PERM_WINDOW, 0,
                              on_perm_done, s, (uint64_t)i);
}

static int perm_run(const void *arg, bench_result *out)
{
    const fabric_perm_arg *a = arg;
    GError *err = NULL;
    gint64 t0 = g_get_monotonic_time();
    topo *t = topo_load("dgx-h100", &(topo_opts){.nodes = a->nodes}, &err);
    if (!t) {
        g_printerr("fabric.random_permutation: %s\n", err->message);
        g_error_free(err);
        return 1;
    }
    gint64 t1 = g_get_monotonic_time();
    int n = t->nranks;
    /* Sattolo: a uniformly random n-cycle, so perm[i] != i for all i. */
    int *perm = g_new(int, n);
    for (int i = 0; i < n; i++)
        perm[i] = i;
    sim_rng rng;
    sim_rng_seed(&rng, 12345);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)sim_rng_below(&rng, (uint64_t)i);
        int tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    perm_state s = {.fab = t->fab, .route = g_new(const fab_route *, n), .n = n};
    uint64_t hops = 0;
    for (int i = 0; i < n; i++) {
        g_assert(perm[i] != i);
        s.route[i] = fabric_route(t->fab, t->gpu_of_rank[i], t->gpu_of_rank[perm[i]], 0, &err);
        if (!s.route[i]) {
            g_printerr("fabric.random_permutation: %s\n", err->message);
            g_error_free(err);
            return 1;
        }
        hops += s.route[i]->nhops;
    }
    gint64 t2 = g_get_monotonic_time();
    sim_engine *e = sim_engine_new(1);
    fabric_attach(t->fab, e);
    sim_engine_at(e, 0, perm_kick, &s, 0);
    int rc = sim_engine_run(e);
    if (rc != SIM_OK || s.done != (uint64_t)n) {
        g_printerr("fabric.random_permutation: engine %d, %llu of %d transfers done\n", rc,
                   (unsigned long long)s.done, n);
        return 1;
    }
    const sim_stats *st = sim_engine_stats(e);
    out->events = st->events;
    out->wall_s = st->wall_s;
    out->sim_s = sim_time_to_s(sim_engine_now(e));
    double total = (double)PERM_BYTES * n;
    g_snprintf(out->note, sizeof out->note,
               "%d GPUs x 64 MiB, 1 MiB chunks, win 8: %.0f GB/s agg, %.1f hops/route; build %.0fms routes %.0fms",
               n, total / out->sim_s / 1e9, (double)hops / n, (t1 - t0) / 1e3, (t2 - t1) / 1e3);
    sim_engine_free(e);
    g_free(s.route);
    g_free(perm);
    topo_free(t);
    return 0;
}

static const fabric_perm_arg perm_128 = {128}, perm_1024 = {1024};

/* Load a 100,000-GPU cluster (12,500 DGX H100 on ib-ndr) and route 10,000
 * random GPU pairs: wall time of both, nodes and links built (the peak RSS
 * column gives the memory; docs/performance.md divides it per GPU/link). */
static int big_run(const void *arg, bench_result *out)
{
    int nodes = *(const int *)arg;
    GError *err = NULL;
    gint64 t0 = g_get_monotonic_time();
    topo *t = topo_load("dgx-h100", &(topo_opts){.nodes = nodes}, &err);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        g_error_free(err);
        return 1;
    }
    gint64 t1 = g_get_monotonic_time();
    sim_rng r;
    sim_rng_seed(&r, 7);
    uint64_t hops = 0;
    for (int i = 0; i < 10000; i++) {
        int a = (int)sim_rng_below(&r, (uint64_t)t->nranks), b = (int)sim_rng_below(&r, (uint64_t)t->nranks);
        const fab_route *rt = fabric_route(t->fab, t->gpu_of_rank[a], t->gpu_of_rank[b], 0, NULL);
        hops += rt ? rt->nhops : 0;
    }
    gint64 t2 = g_get_monotonic_time();
    out->events = 10000;
    out->wall_s = (double)(t2 - t0) * 1e-6;
    g_snprintf(out->note, sizeof out->note, "%d GPUs, %u nodes, %u directed links; build %.2f s, 10k routes %.3f s (%.1f hops)",
               t->nranks, fabric_node_count(t->fab), fabric_link_count(t->fab), (double)(t1 - t0) * 1e-6,
               (double)(t2 - t1) * 1e-6, (double)hops / 10000);
    topo_free(t);
    return 0;
}

static const int big_12500 = 12500;

const bench_case bench_fabric_cases[] = {
    {"topology.load_and_route", "{\"gpus\": 100000}", big_run, &big_12500},
    {"fabric.random_permutation", "{\"gpus\": 1024}", perm_run, &perm_128},
    {"fabric.random_permutation", "{\"gpus\": 8192}", perm_run, &perm_1024},
    {0},
};

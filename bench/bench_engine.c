/* bench/bench_engine.c - the classic hold benchmark of the event queue:
 * N pending events; each event, when it runs, schedules one more at an
 * exponentially distributed later time. Measures the whole engine path
 * (pool, queue, dispatch), not the queue alone.
 *
 * engine.hold draws each increment live (sim_rng_exp: xoshiro + log1p, about
 * 16 ns, which is close to half the cost of an event at n = 1e5).
 * engine.hold_table takes the increments cyclically from a table of 4096
 * exponential draws made up front with the same RNG, so it measures the
 * engine without the log1p; see docs/performance.md. */
#include <glib.h>

#include "bench.h"
#include "sim/engine.h"

enum { INC_TABLE = 4096 }; /* power of two */

typedef struct {
    uint64_t left;
    double mean_ps;
    sim_time *inc; /* NULL: draw live */
    uint32_t k;
} hold_state;

static void on_hold_table(sim_engine *e, void *ctx, uint64_t arg)
{
    hold_state *h = ctx;
    if (h->left == 0)
        return;
    h->left--;
    sim_engine_after(e, h->inc[h->k++ & (INC_TABLE - 1)], on_hold_table, h, arg);
}

static void on_hold(sim_engine *e, void *ctx, uint64_t arg)
{
    hold_state *h = ctx;
    if (h->left == 0)
        return;
    h->left--;
    sim_engine_after(e, (sim_time)sim_rng_exp(sim_engine_rng(e), h->mean_ps) + 1, on_hold, h, arg);
}

static int hold_common(const void *arg, bench_result *out, bool table)
{
    uint64_t n = *(const uint64_t *)arg;
    uint64_t ops = 10000000;
    sim_engine *e = sim_engine_new(42);
    hold_state h = {.left = ops, .mean_ps = 1e6};
    sim_rng *r = sim_engine_rng(e);
    if (table) {
        h.inc = g_new(sim_time, INC_TABLE);
        for (int i = 0; i < INC_TABLE; i++)
            h.inc[i] = (sim_time)sim_rng_exp(r, h.mean_ps) + 1;
    }
    for (uint64_t i = 0; i < n; i++)
        sim_engine_at(e, (sim_time)sim_rng_exp(r, h.mean_ps), table ? on_hold_table : on_hold, &h, i);
    /* warm the pool and heap, then measure */
    sim_engine_run(e);
    const sim_stats *st = sim_engine_stats(e);
    out->events = st->events;
    out->wall_s = st->wall_s;
    out->sim_s = sim_time_to_s(sim_engine_now(e));
    g_snprintf(out->note, sizeof out->note, "hold: %llu pending, exp(1 us) increments%s",
               (unsigned long long)n, table ? " (4096-entry table)" : "");
    g_free(h.inc);
    sim_engine_free(e);
    return 0;
}

static int hold_run(const void *arg, bench_result *out) { return hold_common(arg, out, false); }
static int hold_table_run(const void *arg, bench_result *out) { return hold_common(arg, out, true); }

static const uint64_t n_1e3 = 1000, n_1e5 = 100000, n_1e6 = 1000000;

const bench_case bench_engine_cases[] = {
    {"engine.hold", "{\"n\": 1000}", hold_run, &n_1e3},
    {"engine.hold", "{\"n\": 100000}", hold_run, &n_1e5},
    {"engine.hold", "{\"n\": 1000000}", hold_run, &n_1e6},
    {"engine.hold_table", "{\"n\": 1000}", hold_table_run, &n_1e3},
    {"engine.hold_table", "{\"n\": 100000}", hold_table_run, &n_1e5},
    {"engine.hold_table", "{\"n\": 1000000}", hold_table_run, &n_1e6},
    {0},
};

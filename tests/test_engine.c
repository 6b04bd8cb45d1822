/* Tests of sim/engine: run-until, stop, determinism, overflow, cancel. */
#include <glib.h>
#include <math.h>

#include "sim/engine.h"
#include "testutil.h"

typedef struct {
    GArray *log; /* of sim_time,arg pairs */
    int remaining;
} chain;

static void on_tick(sim_engine *e, void *ctx, uint64_t arg)
{
    chain *c = ctx;
    sim_time now = sim_engine_now(e);
    g_array_append_val(c->log, now);
    g_array_append_val(c->log, arg);
    if (--c->remaining > 0)
        sim_engine_after(e, (sim_time)sim_rng_below(sim_engine_rng(e), 1000), on_tick, c, arg + 1);
}

static GArray *run_chain(uint64_t seed)
{
    sim_engine *e = sim_engine_new(seed);
    chain c = {.log = g_array_new(FALSE, FALSE, sizeof(int64_t)), .remaining = 5000};
    for (int i = 0; i < 4; i++)
        sim_engine_at(e, 0, on_tick, &c, (uint64_t)i * 100000);
    CU_ASSERT_EQUAL(sim_engine_run(e), SIM_OK);
    sim_engine_free(e);
    return c.log;
}

static void test_engine_same_seed_same_trace(void)
{
    GArray *a = run_chain(99), *b = run_chain(99), *c = run_chain(100);
    CU_ASSERT_EQUAL(a->len, b->len);
    CU_ASSERT(a->len > 1000);
    CU_ASSERT_EQUAL(memcmp(a->data, b->data, a->len * sizeof(int64_t)), 0);
    CU_ASSERT(a->len != c->len || memcmp(a->data, c->data, a->len * sizeof(int64_t)) != 0);
    g_array_free(a, TRUE);
    g_array_free(b, TRUE);
    g_array_free(c, TRUE);
}

static void on_count(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    (*(int *)ctx)++;
}

static void test_engine_run_until_stops_at_time(void)
{
    sim_engine *e = sim_engine_new(1);
    int n = 0;
    for (int i = 1; i <= 10; i++)
        sim_engine_at(e, i * SIM_US, on_count, &n, 0);
    sim_engine_run_until(e, 5 * SIM_US);
    CU_ASSERT_EQUAL(n, 5); /* the event exactly at T runs */
    CU_ASSERT_EQUAL(sim_engine_now(e), 5 * SIM_US);
    sim_engine_run_until(e, 5 * SIM_US + 500 * SIM_NS);
    CU_ASSERT_EQUAL(n, 5);
    CU_ASSERT_EQUAL(sim_engine_now(e), 5 * SIM_US + 500 * SIM_NS);
    sim_engine_run(e);
    CU_ASSERT_EQUAL(n, 10);
    CU_ASSERT_EQUAL(sim_engine_stats(e)->events, 10);
    sim_engine_free(e);
}

static void on_stop(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)arg;
    (*(int *)ctx)++;
    sim_engine_stop(e);
}

static void test_engine_stop_request_returns_after_event(void)
{
    sim_engine *e = sim_engine_new(1);
    int n = 0;
    sim_engine_at(e, 10, on_stop, &n, 0);
    sim_engine_at(e, 20, on_stop, &n, 0);
    sim_engine_run(e);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(sim_engine_pending(e), 1);
    sim_engine_run(e);
    CU_ASSERT_EQUAL(n, 2);
    sim_engine_free(e);
}

static void test_engine_overflow_is_reported_not_wrapped(void)
{
    sim_engine *e = sim_engine_new(1);
    int n = 0;
    sim_engine_at(e, SIM_TIME_LIMIT - 5, on_count, &n, 0);
    sim_engine_run(e);
    CU_ASSERT_EQUAL(n, 1);
    sim_event ev = sim_engine_after(e, 10, on_count, &n, 0);
    CU_ASSERT_EQUAL(ev.seq, UINT64_MAX);
    CU_ASSERT_EQUAL(sim_engine_error(e), SIM_ETIME_OVERFLOW);
    CU_ASSERT_EQUAL(sim_engine_pending(e), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(sim_engine_strerror(sim_engine_error(e)), "clock's range"));
    sim_engine_free(e);
    /* a time that saturated (SIM_TIME_MAX from a sum) is refused too */
    e = sim_engine_new(1);
    ev = sim_engine_at(e, sim_time_sat_add(SIM_TIME_MAX - 5, 10), on_count, &n, 0);
    CU_ASSERT_EQUAL(ev.seq, UINT64_MAX);
    CU_ASSERT_EQUAL(sim_engine_error(e), SIM_ETIME_OVERFLOW);
    sim_engine_free(e);
    CU_ASSERT_EQUAL(sim_time_sat_add(SIM_TIME_MAX - 5, 10), SIM_TIME_MAX);
    CU_ASSERT_EQUAL(sim_time_sat_add(SIM_S, SIM_S), 2 * SIM_S);

    sim_time out;
    CU_ASSERT_FALSE(sim_time_add(SIM_TIME_MAX, 1, &out));
    CU_ASSERT_TRUE(sim_time_add(SIM_S, SIM_S, &out));
    CU_ASSERT_EQUAL(out, 2 * SIM_S);
}

static void test_engine_past_time_is_an_error(void)
{
    sim_engine *e = sim_engine_new(1);
    int n = 0;
    sim_engine_at(e, 100, on_count, &n, 0);
    sim_engine_run(e);
    sim_engine_at(e, 50, on_count, &n, 0);
    CU_ASSERT_EQUAL(sim_engine_error(e), SIM_EPAST);
    sim_engine_free(e);
}

static void test_engine_cancel_skips_event(void)
{
    sim_engine *e = sim_engine_new(1);
    int n = 0;
    sim_event a = sim_engine_at(e, 10, on_count, &n, 0);
    sim_engine_at(e, 20, on_count, &n, 0);
    CU_ASSERT_TRUE(sim_engine_cancel(e, a));
    CU_ASSERT_FALSE(sim_engine_cancel(e, a));
    sim_engine_run(e);
    CU_ASSERT_EQUAL(n, 1);
    sim_engine_free(e);
}

static void test_time_conversions_round_trip(void)
{
    CU_ASSERT_EQUAL(sim_time_from_us(1.5), 1500000);
    CU_ASSERT_EQUAL(sim_time_for_bytes(1e9, 1e9), SIM_S);
    CU_ASSERT_EQUAL(sim_time_for_bytes(1, 3e12), 1); /* rounds up, never 0 */
    ASSERT_REL(sim_time_to_us(123456789), 123.456789, 1e-12);
    CU_ASSERT_EQUAL(sim_time_from_s(1e30), SIM_TIME_LIMIT);
    CU_ASSERT_EQUAL(sim_time_for_bytes(1e30, 1), SIM_TIME_LIMIT); /* saturates: sums of a few stay in int64 */
}

static void test_rng_exponential_moments_and_tail(void)
{
    sim_rng r;
    sim_rng_seed(&r, 12345);
    enum { N = 2000000 };
    double sum = 0, sum2 = 0;
    int tail3 = 0, tail8 = 0;
    for (int i = 0; i < N; i++) {
        double x = sim_rng_exp(&r, 2.0);
        CU_ASSERT(x >= 0);
        sum += x;
        sum2 += x * x;
        tail3 += x > 6.0;
        tail8 += x > 16.0;
    }
    double mean = sum / N, var = sum2 / N - mean * mean;
    ASSERT_REL(mean, 2.0, 0.005);  /* standard error of the mean: 0.07% */
    ASSERT_REL(var, 4.0, 0.02);
    ASSERT_REL((double)tail3 / N, exp(-3.0), 0.02);
    ASSERT_REL((double)tail8 / N, exp(-8.0), 0.2); /* ~671 draws beyond the ziggurat's base layer */
}

static void tick_chain(sim_engine *e, void *ctx, uint64_t left)
{
    (void)ctx;
    if (left)
        sim_engine_after(e, 1, tick_chain, NULL, left - 1);
}

static void count_progress(sim_engine *e, void *ctx)
{
    uint64_t *calls = ctx;
    CU_ASSERT_EQUAL(sim_engine_stats(e)->events % SIM_PROGRESS_EVENTS, 0);
    (*calls)++;
}

static void test_engine_progress_every_n_events(void)
{
    /* 3.5 x SIM_PROGRESS_EVENTS events: three calls, at multiples of it */
    sim_engine *e = sim_engine_new(1);
    uint64_t calls = 0;
    sim_engine_set_progress(e, count_progress, &calls);
    sim_engine_at(e, 0, tick_chain, NULL, SIM_PROGRESS_EVENTS * 7 / 2 - 1);
    CU_ASSERT_EQUAL(sim_engine_run(e), SIM_OK);
    CU_ASSERT_EQUAL(sim_engine_stats(e)->events, SIM_PROGRESS_EVENTS * 7 / 2);
    CU_ASSERT_EQUAL(calls, 3);
    sim_engine_free(e);
}

int main(void)
{
    static const test_case cases[] = {
        {"/engine/determinism/same-seed-same-trace", test_engine_same_seed_same_trace},
        {"/engine/run-until/stops-at-time", test_engine_run_until_stops_at_time},
        {"/engine/stop/returns-after-event", test_engine_stop_request_returns_after_event},
        {"/engine/overflow/reported-not-wrapped", test_engine_overflow_is_reported_not_wrapped},
        {"/engine/schedule/past-is-error", test_engine_past_time_is_an_error},
        {"/engine/cancel/skips-event", test_engine_cancel_skips_event},
        {"/engine/progress/every-n-events", test_engine_progress_every_n_events},
        {"/time/conversions", test_time_conversions_round_trip},
        {"/rng/exponential/moments-and-tail", test_rng_exponential_moments_and_tail},
        {0},
    };
    return test_main("engine", cases);
}

/* Tests of sim/queue: FIFO on ties, order against a reference sort, cancel,
 * growth, time never decreasing on a long random sequence, and the ladder
 * tiers under random push/pop/cancel against a brute-force reference. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>

#include "sim/queue.h"
#include "sim/rng.h"
#include "testutil.h"

static void test_queue_equal_times_pop_fifo(void)
{
    sim_queue *q = sim_queue_new(4);
    for (uint32_t i = 0; i < 100; i++)
        sim_queue_push(q, 42, i);
    for (uint32_t i = 0; i < 100; i++) {
        uint32_t p;
        sim_time t;
        CU_ASSERT_TRUE(sim_queue_pop(q, &t, &p));
        CU_ASSERT_EQUAL(p, i);
        CU_ASSERT_EQUAL(t, 42);
    }
    CU_ASSERT_FALSE(sim_queue_pop(q, NULL, NULL));
    sim_queue_free(q);
}

typedef struct {
    sim_time t;
    uint32_t id;
} ref;

static int ref_cmp(const void *a, const void *b)
{
    const ref *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static void test_queue_random_matches_reference_sort(void)
{
    sim_rng r;
    sim_rng_seed(&r, 7);
    enum { N = 20000 };
    ref *refs = g_new(ref, N);
    sim_queue *q = sim_queue_new(8); /* grows past the initial capacity */
    for (uint32_t i = 0; i < N; i++) {
        refs[i] = (ref){.t = (sim_time)sim_rng_below(&r, 500), .id = i};
        sim_queue_push(q, refs[i].t, i);
    }
    CU_ASSERT_EQUAL(sim_queue_len(q), N);
    qsort(refs, N, sizeof *refs, ref_cmp);
    int bad = 0;
    for (uint32_t i = 0; i < N; i++) {
        sim_time t;
        uint32_t p;
        sim_queue_pop(q, &t, &p);
        bad += (t != refs[i].t || p != refs[i].id);
    }
    CU_ASSERT_EQUAL(bad, 0);
    g_free(refs);
    sim_queue_free(q);
}

static void test_queue_cancel_removes_only_that_entry(void)
{
    sim_queue *q = sim_queue_new(2);
    uint64_t seqs[10];
    for (uint32_t i = 0; i < 10; i++)
        seqs[i] = sim_queue_push(q, 100 - i, i);
    uint32_t p;
    CU_ASSERT_TRUE(sim_queue_cancel(q, seqs[3], &p));
    CU_ASSERT_EQUAL(p, 3);
    CU_ASSERT_FALSE(sim_queue_cancel(q, seqs[3], &p));
    CU_ASSERT_EQUAL(sim_queue_len(q), 9);
    sim_time prev = -1;
    uint32_t n = 0;
    sim_time t;
    while (sim_queue_pop(q, &t, &p)) {
        CU_ASSERT(p != 3);
        CU_ASSERT(t >= prev);
        prev = t;
        n++;
    }
    CU_ASSERT_EQUAL(n, 9);
    sim_queue_free(q);
}

static void test_queue_time_never_decreases_hold(void)
{
    /* 1e6 hold operations: pop the minimum, push at a later random time. */
    sim_rng r;
    sim_rng_seed(&r, 1);
    sim_queue *q = sim_queue_new(16);
    for (uint32_t i = 0; i < 1000; i++)
        sim_queue_push(q, (sim_time)sim_rng_exp(&r, 1000.0), i);
    sim_time now = 0;
    int backwards = 0;
    for (int i = 0; i < 1000000; i++) {
        sim_time t;
        uint32_t p;
        sim_queue_pop(q, &t, &p);
        backwards += t < now;
        now = t;
        sim_queue_push(q, now + (sim_time)sim_rng_exp(&r, 1000.0), p);
    }
    CU_ASSERT_EQUAL(backwards, 0);
    CU_ASSERT_EQUAL(sim_queue_len(q), 1000);
    sim_queue_free(q);
}

/* Ladder-queue tiers: interleaved pushes/pops/cancels with many equal times,
 * sizes that cross the top-sampling, rung-split and bucket boundaries,
 * checked against a brute-force reference (min by (time, id)). */
static void test_queue_ladder_random_ops_match_reference(void)
{
    sim_rng r;
    sim_rng_seed(&r, 11);
    enum { MAXN = 30000 };
    ref *live = g_new(ref, MAXN);
    uint64_t *seqs = g_new(uint64_t, MAXN);
    size_t n = 0;
    sim_queue *q = sim_queue_new(4);
    sim_time now = 0;
    uint32_t id = 0;
    int bad = 0;
    for (int round = 0; round < 6; round++) {
        /* bulk fill: wide spread, clustered, and all-equal times */
        size_t fill = round % 2 ? 20000 : 5000;
        for (size_t i = 0; i < fill && n < MAXN; i++) {
            sim_time t = now + (round == 2 ? 7 : (sim_time)sim_rng_below(&r, round == 4 ? 50 : 1000000));
            live[n] = (ref){.t = t, .id = id};
            seqs[n++] = sim_queue_push(q, t, id++);
        }
        for (int step = 0; step < 40000 && n > 0; step++) {
            uint64_t op = sim_rng_below(&r, 10);
            if (op < 5) { /* pop: must equal the reference minimum */
                size_t m = 0;
                for (size_t i = 1; i < n; i++)
                    if (ref_cmp(&live[i], &live[m]) < 0)
                        m = i;
                sim_time t;
                uint32_t p;
                if (!sim_queue_pop(q, &t, &p)) {
                    bad++;
                    break;
                }
                bad += (t != live[m].t || p != live[m].id);
                now = live[m].t;
                live[m] = live[--n];
                seqs[m] = seqs[n];
            } else if (op < 9 && n < MAXN) { /* push at or after now, ties likely */
                sim_time t = now + (sim_time)(op == 5 ? 0 : sim_rng_below(&r, op == 6 ? 3 : 2000000));
                live[n] = (ref){.t = t, .id = id};
                seqs[n++] = sim_queue_push(q, t, id++);
            } else { /* cancel a random pending entry, then again (must fail) */
                size_t k = sim_rng_below(&r, n);
                uint32_t p;
                bad += !sim_queue_cancel(q, seqs[k], &p) || p != live[k].id;
                bad += sim_queue_cancel(q, seqs[k], &p);
                live[k] = live[--n];
                seqs[k] = seqs[n];
            }
            bad += sim_queue_len(q) != n;
        }
    }
    /* drain: the rest in reference order */
    qsort(live, n, sizeof *live, ref_cmp);
    for (size_t i = 0; i < n; i++) {
        sim_time t;
        uint32_t p;
        CU_ASSERT_TRUE(sim_queue_pop(q, &t, &p));
        bad += (t != live[i].t || p != live[i].id);
    }
    CU_ASSERT_FALSE(sim_queue_peek(q, NULL, NULL));
    CU_ASSERT_EQUAL(bad, 0);
    g_free(live);
    g_free(seqs);
    sim_queue_free(q);
}

/* Rung buckets many picoseconds wide that hold hundreds of entries at one
 * time (a symmetric model finishing chunks together), with more ties pushed
 * while they drain: pops in (time, insertion) order, against a reference. */
static void test_queue_ladder_tied_buckets_match_reference(void)
{
    sim_rng r;
    sim_rng_seed(&r, 13);
    enum { MAXN = 16000 };
    ref *live = g_new(ref, MAXN);
    size_t n = 0;
    uint32_t id = 0;
    sim_queue *q = sim_queue_new(4);
    static const sim_time tied[] = {600000, 800000, 800001};
    for (int i = 0; i < 9100; i++) {
        sim_time t = i % 9 < 6 ? (sim_time)sim_rng_below(&r, 400000) : tied[sim_rng_below(&r, 3)];
        live[n++] = (ref){.t = t, .id = id};
        sim_queue_push(q, t, id++);
    }
    int bad = 0;
    while (n > 0) {
        size_t m = 0;
        for (size_t i = 1; i < n; i++)
            if (ref_cmp(&live[i], &live[m]) < 0)
                m = i;
        sim_time t;
        uint32_t p;
        if (!sim_queue_pop(q, &t, &p)) {
            bad++;
            break;
        }
        bad += (t != live[m].t || p != live[m].id);
        sim_time now = live[m].t;
        live[m] = live[--n];
        uint64_t op = sim_rng_below(&r, 4);
        if (op < 2 && n < MAXN && id < 13000) { /* a tie with now, or just after */
            sim_time u = now + (sim_time)(op == 0 ? 0 : sim_rng_below(&r, 3));
            live[n++] = (ref){.t = u, .id = id};
            sim_queue_push(q, u, id++);
        }
    }
    CU_ASSERT_FALSE(sim_queue_pop(q, NULL, NULL));
    CU_ASSERT_EQUAL(bad, 0);
    g_free(live);
    sim_queue_free(q);
}

/* A bottom of thousands of equal times (never split), then events due
 * before them pushed while it drains (the side heap, aux), with pops,
 * pop_until, peeks and cancels: (time, insertion) order, against a
 * reference. */
static void test_queue_deep_bottom_inserts_match_reference(void)
{
    sim_rng r;
    sim_rng_seed(&r, 17);
    enum { MAXN = 12000 };
    ref *live = g_new(ref, MAXN);
    uint64_t *seqs = g_new(uint64_t, MAXN);
    size_t n = 0;
    uint32_t id = 0;
    sim_queue *q = sim_queue_new(4);
    const sim_time T = 1000000;
    for (int i = 0; i < 5000; i++) {
        live[n] = (ref){.t = T, .id = id};
        seqs[n++] = sim_queue_push(q, T, id++);
    }
    int bad = 0;
    sim_time now = 0;
    while (n > 0) {
        size_t m = 0;
        for (size_t i = 1; i < n; i++)
            if (ref_cmp(&live[i], &live[m]) < 0)
                m = i;
        sim_time t, pt;
        uint32_t p, pp;
        uint64_t op = sim_rng_below(&r, 8);
        if (op == 7 && n > 1) { /* cancel a random pending entry */
            size_t k = sim_rng_below(&r, n);
            bad += !sim_queue_cancel(q, seqs[k], &p) || p != live[k].id;
            live[k] = live[--n];
            seqs[k] = seqs[n];
            continue;
        }
        bad += !sim_queue_peek(q, &pt, &pp) || pt != live[m].t || pp != live[m].id;
        if (op == 6) /* a limit just before the head: nothing comes out */
            bad += sim_queue_pop_until(q, live[m].t - 1, &t, &p);
        if (!(op == 5 ? sim_queue_pop_until(q, live[m].t, &t, &p) : sim_queue_pop(q, &t, &p))) {
            bad++;
            break;
        }
        bad += (t != live[m].t || p != live[m].id);
        now = live[m].t;
        live[m] = live[--n];
        seqs[m] = seqs[n];
        for (int j = 0; j < 2 && n < MAXN && id < 11000; j++) { /* before the tied block, or in it */
            sim_time u = op < 4 && now < T ? now + (sim_time)sim_rng_below(&r, (uint64_t)(T - now)) : T;
            live[n] = (ref){.t = u, .id = id};
            seqs[n++] = sim_queue_push(q, u, id++);
        }
        bad += sim_queue_len(q) != n;
    }
    CU_ASSERT_FALSE(sim_queue_pop(q, NULL, NULL));
    CU_ASSERT_EQUAL(bad, 0);
    g_free(live);
    g_free(seqs);
    sim_queue_free(q);
}

int main(void)
{
    static const test_case cases[] = {
        {"/queue/equal-times/pop-fifo", test_queue_equal_times_pop_fifo},
        {"/queue/random/matches-reference-sort", test_queue_random_matches_reference_sort},
        {"/queue/cancel/removes-only-that-entry", test_queue_cancel_removes_only_that_entry},
        {"/queue/hold/time-never-decreases", test_queue_time_never_decreases_hold},
        {"/queue/ladder/random-ops-match-reference", test_queue_ladder_random_ops_match_reference},
        {"/queue/ladder/tied-buckets-match-reference", test_queue_ladder_tied_buckets_match_reference},
        {"/queue/bottom/deep-inserts-match-reference", test_queue_deep_bottom_inserts_match_reference},
        {0},
    };
    return test_main("queue", cases);
}

/* Tests of sim/queue: FIFO on ties, order against a reference sort, cancel,
 * growth, and time never decreasing on a long random sequence. */
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

int main(void)
{
    static const test_case cases[] = {
        {"/queue/equal-times/pop-fifo", test_queue_equal_times_pop_fifo},
        {"/queue/random/matches-reference-sort", test_queue_random_matches_reference_sort},
        {"/queue/cancel/removes-only-that-entry", test_queue_cancel_removes_only_that_entry},
        {"/queue/hold/time-never-decreases", test_queue_time_never_decreases_hold},
        {0},
    };
    return test_main("queue", cases);
}

/* Tests of sim/queue: FIFO on ties, order against a reference sort, cancel,
 * growth, time never decreasing on a long random sequence, and the ladder
 * tiers under random push/pop/cancel against a brute-force reference. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>

#include "sim/mem.h"
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

/* A queue with a brute-force reference beside it: the pending entries
 * (live), their sequence numbers, and the next id. */
typedef struct {
    sim_queue *q;
    ref *live;
    uint64_t *seqs;
    size_t n, cap;
    uint32_t id;
} refq;

static refq refq_new(size_t cap)
{
    return (refq){.q = sim_queue_new(4), .live = g_new(ref, cap), .seqs = g_new(uint64_t, cap), .cap = cap};
}

static void refq_free(refq *rq)
{
    sim_queue_free(rq->q);
    g_free(rq->live);
    g_free(rq->seqs);
}

static void refq_push(refq *rq, sim_time t)
{
    rq->live[rq->n] = (ref){.t = t, .id = rq->id};
    rq->seqs[rq->n++] = sim_queue_push(rq->q, t, rq->id++);
}

/* index of the reference's earliest entry (n > 0) */
static size_t refq_min(const refq *rq)
{
    size_t m = 0;
    for (size_t i = 1; i < rq->n; i++)
        if (ref_cmp(&rq->live[i], &rq->live[m]) < 0)
            m = i;
    return m;
}

static void refq_drop(refq *rq, size_t k)
{
    rq->live[k] = rq->live[--rq->n];
    rq->seqs[k] = rq->seqs[rq->n];
}

/* Pop (or pop_until limit when until) and compare with the reference's
 * earliest entry, which is dropped; *now is its time. Returns the
 * mismatches; -1 if the queue gave nothing. */
static int refq_pop_check(refq *rq, bool until, sim_time limit, sim_time *now)
{
    size_t m = refq_min(rq);
    sim_time t;
    uint32_t p;
    if (!(until ? sim_queue_pop_until(rq->q, limit, &t, &p) : sim_queue_pop(rq->q, &t, &p)))
        return -1;
    int bad = t != rq->live[m].t || p != rq->live[m].id;
    *now = rq->live[m].t;
    refq_drop(rq, m);
    return bad;
}

/* Cancel pending entry k (which must succeed, with its payload), then again
 * (which must fail). Returns the mismatches. */
static int refq_cancel_check(refq *rq, size_t k)
{
    uint32_t p;
    int bad = !sim_queue_cancel(rq->q, rq->seqs[k], &p) || p != rq->live[k].id;
    bad += sim_queue_cancel(rq->q, rq->seqs[k], &p);
    refq_drop(rq, k);
    return bad;
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
    refq rq = refq_new(30000);
    sim_time now = 0;
    int bad = 0;
    for (int round = 0; round < 6; round++) {
        /* bulk fill: wide spread, clustered, and all-equal times */
        size_t fill = round % 2 ? 20000 : 5000;
        for (size_t i = 0; i < fill && rq.n < rq.cap; i++)
            refq_push(&rq, now + (round == 2 ? 7 : (sim_time)sim_rng_below(&r, round == 4 ? 50 : 1000000)));
        for (int step = 0; step < 40000 && rq.n > 0; step++) {
            uint64_t op = sim_rng_below(&r, 10);
            if (op < 5) { /* pop: must equal the reference minimum */
                int b = refq_pop_check(&rq, false, 0, &now);
                if (b < 0) {
                    bad++;
                    break;
                }
                bad += b;
            } else if (op < 9 && rq.n < rq.cap) { /* push at or after now, ties likely */
                refq_push(&rq, now + (sim_time)(op == 5 ? 0 : sim_rng_below(&r, op == 6 ? 3 : 2000000)));
            } else { /* cancel a random pending entry, then again (must fail) */
                bad += refq_cancel_check(&rq, sim_rng_below(&r, rq.n));
            }
            bad += sim_queue_len(rq.q) != rq.n;
        }
    }
    /* drain: the rest in reference order */
    qsort(rq.live, rq.n, sizeof *rq.live, ref_cmp);
    for (size_t i = 0; i < rq.n; i++) {
        sim_time t;
        uint32_t p;
        CU_ASSERT_TRUE(sim_queue_pop(rq.q, &t, &p));
        bad += (t != rq.live[i].t || p != rq.live[i].id);
    }
    CU_ASSERT_FALSE(sim_queue_peek(rq.q, NULL, NULL));
    CU_ASSERT_EQUAL(bad, 0);
    refq_free(&rq);
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
    refq rq = refq_new(12000);
    const sim_time T = 1000000;
    for (int i = 0; i < 5000; i++)
        refq_push(&rq, T);
    int bad = 0;
    sim_time now = 0;
    while (rq.n > 0) {
        uint64_t op = sim_rng_below(&r, 8);
        if (op == 7 && rq.n > 1) { /* cancel a random pending entry */
            bad += refq_cancel_check(&rq, sim_rng_below(&r, rq.n));
            continue;
        }
        const ref *m = &rq.live[refq_min(&rq)];
        sim_time pt;
        uint32_t pp;
        bad += !sim_queue_peek(rq.q, &pt, &pp) || pt != m->t || pp != m->id;
        if (op == 6) /* a limit just before the head: nothing comes out */
            bad += sim_queue_pop_until(rq.q, m->t - 1, &pt, &pp);
        int b = refq_pop_check(&rq, op == 5, m->t, &now);
        if (b < 0) {
            bad++;
            break;
        }
        bad += b;
        for (int j = 0; j < 2 && rq.n < rq.cap && rq.id < 11000; j++) /* before the tied block, or in it */
            refq_push(&rq, op < 4 && now < T ? now + (sim_time)sim_rng_below(&r, (uint64_t)(T - now)) : T);
        bad += sim_queue_len(rq.q) != rq.n;
    }
    CU_ASSERT_FALSE(sim_queue_pop(rq.q, NULL, NULL));
    CU_ASSERT_EQUAL(bad, 0);
    refq_free(&rq);
}

/* sim/mem: pool blocks double from the first size up to two huge pages and
 * stay there; a large block starts on a huge page boundary and is usable
 * to its last byte; a renewed array keeps its contents. */
static void test_mem_blocks_grow_align_and_keep(void)
{
    gsize n = 0, sizes[8];
    for (int i = 0; i < 8; i++)
        sizes[i] = n = sim_mem_next(n, 4096, 64);
    CU_ASSERT_EQUAL(sizes[0], 4096);
    CU_ASSERT_EQUAL(sizes[1], 8192);
    CU_ASSERT_EQUAL(sizes[4], 2 * SIM_MEM_HUGE / 64);
    CU_ASSERT_EQUAL(sizes[7], 2 * SIM_MEM_HUGE / 64);
    CU_ASSERT_EQUAL(sim_mem_next(0, 1u << 20, 96), 2 * SIM_MEM_HUGE / 96); /* a first block over the cap */
    unsigned char *b = sim_mem_block(3 * SIM_MEM_HUGE + 5);
    CU_ASSERT_EQUAL((uintptr_t)b % SIM_MEM_HUGE, 0);
    b[0] = 1;
    b[3 * SIM_MEM_HUGE + 4] = 2;
    CU_ASSERT_EQUAL(b[0] + b[3 * SIM_MEM_HUGE + 4], 3);
    g_aligned_free(b);
    unsigned char *small = sim_mem_block(100); /* a small pool block: a cache line apart */
    CU_ASSERT_EQUAL((uintptr_t)small % 64, 0);
    g_aligned_free(small);
    unsigned char *s = g_malloc(100); /* an array grown with sim_mem_renew */
    s[99] = 7;
    s = sim_mem_renew(s, 5 * SIM_MEM_HUGE);
    CU_ASSERT_EQUAL(s[99], 7);
    s[5 * SIM_MEM_HUGE - 1] = 1;
    g_free(s);
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
        {"/mem/blocks/grow-align-and-keep", test_mem_blocks_grow_align_and_keep},
        {0},
    };
    return test_main("queue", cases);
}

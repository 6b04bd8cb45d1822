/* Tests of the ladder queue behind sim/queue: random push/pop/cancel against
 * a brute-force reference, with many equal times. */
#include <glib.h>
#include <stdlib.h>

#include "sim/queue.h"
#include "sim/rng.h"
#include "testutil.h"

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

int main(void)
{
    static const test_case cases[] = {
        {"/queue/ladder/random-ops-match-reference", test_queue_ladder_random_ops_match_reference},
        {0},
    };
    return test_main("queue-ladder", cases);
}

/* sim/queue.c - 4-ary min-heap keyed by (time, seq).
 *
 * A 4-ary heap halves the depth of a binary one and keeps the four children
 * of a node in one or two cache lines, which is what the hold benchmark
 * rewards. Entries are 24 bytes and stored by value.
 */
#include "queue.h"

#include <glib.h>

typedef struct {
    sim_time t;
    uint64_t seq;
    uint32_t payload;
} entry;

struct sim_queue {
    entry *heap;
    size_t len;
    size_t cap;
    uint64_t next_seq;
};

static inline bool before(const entry *a, const entry *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

sim_queue *sim_queue_new(size_t capacity)
{
    sim_queue *q = g_new0(sim_queue, 1);
    q->cap = capacity ? capacity : 16;
    q->heap = g_new(entry, q->cap);
    return q;
}

void sim_queue_free(sim_queue *q)
{
    if (!q)
        return;
    g_free(q->heap);
    g_free(q);
}

static void sift_up(entry *h, size_t i)
{
    entry e = h[i];
    while (i > 0) {
        size_t p = (i - 1) / 4;
        if (!before(&e, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static void sift_down(entry *h, size_t n, size_t i)
{
    entry e = h[i];
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t best = c;
        size_t end = c + 4 < n ? c + 4 : n;
        for (size_t k = c + 1; k < end; k++)
            if (before(&h[k], &h[best]))
                best = k;
        if (!before(&h[best], &e))
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = e;
}

uint64_t sim_queue_push(sim_queue *q, sim_time t, uint32_t payload)
{
    if (q->len == q->cap) {
        q->cap *= 2;
        q->heap = g_renew(entry, q->heap, q->cap);
    }
    uint64_t seq = q->next_seq++;
    q->heap[q->len] = (entry){.t = t, .seq = seq, .payload = payload};
    sift_up(q->heap, q->len);
    q->len++;
    return seq;
}

bool sim_queue_peek(const sim_queue *q, sim_time *t, uint32_t *payload)
{
    if (q->len == 0)
        return false;
    if (t)
        *t = q->heap[0].t;
    if (payload)
        *payload = q->heap[0].payload;
    return true;
}

bool sim_queue_pop(sim_queue *q, sim_time *t, uint32_t *payload)
{
    if (!sim_queue_peek(q, t, payload))
        return false;
    q->len--;
    if (q->len > 0) {
        q->heap[0] = q->heap[q->len];
        sift_down(q->heap, q->len, 0);
    }
    return true;
}

size_t sim_queue_len(const sim_queue *q) { return q->len; }

bool sim_queue_cancel(sim_queue *q, uint64_t seq, uint32_t *payload)
{
    for (size_t i = 0; i < q->len; i++) {
        if (q->heap[i].seq != seq)
            continue;
        if (payload)
            *payload = q->heap[i].payload;
        q->len--;
        if (i < q->len) {
            q->heap[i] = q->heap[q->len];
            sift_up(q->heap, i);
            sift_down(q->heap, q->len, i);
        }
        return true;
    }
    return false;
}

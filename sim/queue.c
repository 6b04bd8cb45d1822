/* sim/queue.c - a ladder queue (Tang, Goh & Thng 2005) keyed by (time, seq).
 *
 * Three tiers, each holding a contiguous range of times:
 *
 *   bottom  a small sorted run ordered by (time, seq), popped from the
 *           front (new entries due before every rung are inserted): every entry with
 *           time < `bottom_end`; pops come from here only;
 *   rungs   up to MAX_RUNGS arrays of buckets; rung k's buckets are
 *           2^shift picoseconds wide and cover [cur_start, end), where end is
 *           the start of the bucket of rung k-1 it was spawned from;
 *   top     an unsorted array of every entry with time >= top_start.
 *
 * Push appends to top or to one rung bucket (O(1)), or inserts into
 * bottom when the time falls before the current bucket: at or near its end
 * in place, deeper into a large bottom into a binary heap beside it (`aux`,
 * O(log n); a bottom of many equal times, which is never split, would
 * otherwise cost a scan and a move of the whole run per push); pops take the
 * earlier of the two heads. When bottom runs dry
 * the next non-empty bucket of the innermost rung is sorted into bottom,
 * or split into a finer rung if it is large; when all rungs are empty the top
 * is spread into a fresh rung 0 (~BUCKET_MEAN entries per bucket). Each entry
 * is moved a small number of times, so hold is O(1) amortised instead of
 * O(log n), and the moves are sequential copies rather than a heap walk.
 *
 * FIFO on equal times: equal times always share a bucket (buckets partition
 * the time axis), and bottom orders by (time, seq), so ties pop in insertion
 * order regardless of the order inside a bucket. A bucket whose width is one
 * picosecond, or whose entries all share one time, is not split and goes to
 * bottom whatever its size.
 */
#include "mem.h"
#include "queue.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

/* 16 bytes: the insertion sequence number in the high 40 bits of `sp`, the
 * payload in the low 24, so (t, sp) orders by (time, insertion). */
typedef struct {
    sim_time t;
    uint64_t sp;
} entry;

#define PAYLOAD_BITS 24
#define E_SEQ(e) ((e).sp >> PAYLOAD_BITS)
#define E_PAYLOAD(e) ((uint32_t)((e).sp & ((UINT64_C(1) << PAYLOAD_BITS) - 1)))

typedef struct {
    entry *v;
    uint32_t n, cap;
} vec;

typedef struct {
    uint64_t start;     /* time of bucket 0, as unsigned offset space */
    unsigned shift;     /* bucket width = 2^shift ps */
    size_t nb, cur;     /* buckets, index of current (first unread) */
    size_t count;       /* entries in buckets cur..nb-1 */
    vec *b;             /* nb buckets (capacity nb_cap) */
    size_t nb_cap;
} rung;

#ifndef QUEUE_BUCKET_MEAN
#define QUEUE_BUCKET_MEAN 8
#endif
#ifndef QUEUE_SPLIT_AT
#define QUEUE_SPLIT_AT 32
#endif
enum {
    MAX_RUNGS = 8,
    BUCKET_MEAN = QUEUE_BUCKET_MEAN, /* target entries per bucket of rung 0 */
    SPLIT_AT = QUEUE_SPLIT_AT,       /* larger buckets become a finer rung */
    KEEP_CAP = 16,                   /* bucket storage kept after draining */
    TOP_FRAC = 4,                    /* rung 0 takes ~1/TOP_FRAC of the top */
    SAMPLES = 256,                   /* top sample used to place the cut */
    SAMPLE_MIN = 4096,               /* smaller tops are spread whole */
};

/* The k-th smallest of v[0..n) (quickselect; reorders v). Replaces a qsort
 * of the whole sample: the value is the same. */
static uint64_t u64_select(uint64_t *v, long n, long k)
{
    long lo = 0, hi = n - 1;
    while (lo < hi) { /* v[lo..hi] holds the k-th smallest */
        uint64_t pivot = v[lo + (hi - lo) / 2];
        long i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                uint64_t t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j) /* v[lo..j] <= pivot <= v[i..hi], and what lies between equals it */
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

struct sim_queue {
    /* bottom: entries heap[hpos..hlen) sorted by (time, seq), and aux[0..alen),
     * a binary min-heap of bottom entries that would land deep in it */
    entry *heap;
    size_t hpos, hlen, hcap;
    entry *aux;
    size_t alen, acap;
    /* rungs 0..nr-1, 0 outermost */
    rung r[MAX_RUNGS];
    unsigned nr;
    /* top */
    vec top;
    sim_time top_start, top_min, top_max;
    size_t len;
    uint64_t next_seq;
    /* optional: payload-indexed array the caller reads after each pop */
    const char *pf_base;
    size_t pf_stride;
};

/* Times are mapped to uint64 by flipping the sign bit, so that the full
 * int64 axis (negative times included) orders correctly as unsigned. */
static inline uint64_t ukey(sim_time t) { return (uint64_t)t ^ (UINT64_C(1) << 63); }

static inline bool before(const entry *a, const entry *b)
{
    return a->t < b->t || (a->t == b->t && a->sp < b->sp);
}

static inline void vec_push(vec *v, entry e)
{
    if (G_UNLIKELY(v->n == v->cap)) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->v = sim_mem_renew(v->v, v->cap * sizeof(entry));
    }
    v->v[v->n++] = e;
}

/* An emptied bucket keeps small storage for reuse but gives back a large
 * one, so a transient burst does not pin memory in every bucket. */
static inline void vec_drained(vec *v)
{
    v->n = 0;
    if (v->cap > KEEP_CAP) {
        g_free(v->v);
        v->v = NULL;
        v->cap = 0;
    }
}

sim_queue *sim_queue_new(size_t capacity)
{
    sim_queue *q = g_new0(sim_queue, 1);
    q->hcap = 64;
    q->heap = g_new(entry, q->hcap);
    q->top_start = INT64_MIN;
    (void)capacity; /* every tier grows on demand */
    return q;
}

void sim_queue_free(sim_queue *q)
{
    if (!q)
        return;
    for (unsigned k = 0; k < MAX_RUNGS; k++) {
        for (size_t i = 0; i < q->r[k].nb_cap; i++)
            g_free(q->r[k].b[i].v);
        g_free(q->r[k].b);
    }
    g_free(q->top.v);
    g_free(q->heap);
    g_free(q->aux);
    g_free(q);
}

/* ---- bottom: a sorted run popped from the front ---- */

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return before(x, y) ? -1 : before(y, x) ? 1 : 0;
}

static void heap_reserve(sim_queue *q, size_t n)
{
    if (q->hpos > 0 && n > q->hcap) { /* compact before growing */
        memmove(q->heap, q->heap + q->hpos, (q->hlen - q->hpos) * sizeof(entry));
        q->hlen -= q->hpos;
        n -= q->hpos;
        q->hpos = 0;
    }
    if (n > q->hcap) {
        while (q->hcap < n)
            q->hcap *= 2;
        q->heap = sim_mem_renew(q->heap, q->hcap * sizeof(entry));
    }
}

enum { DEEP = 32 }; /* a bottom insertion this far from the end goes to aux */

static void aux_up(entry *h, size_t i)
{
    entry e = h[i];
    while (i > 0 && before(&e, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static void aux_down(entry *h, size_t n, size_t i)
{
    entry e = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&h[c + 1], &h[c]))
            c++;
        if (!before(&h[c], &e))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

/* Remove aux[i] (the heap stays a heap). */
static void aux_remove(sim_queue *q, size_t i)
{
    q->aux[i] = q->aux[--q->alen];
    if (i < q->alen) {
        aux_up(q->aux, i);
        aux_down(q->aux, q->alen, i);
    }
}

/* An event due before every rung: insert it into the sorted bottom (it is
 * usually near the end: scan from there), or into aux if that scan would be
 * long. */
static inline void heap_push(sim_queue *q, entry e)
{
    size_t i = q->hlen;
    while (i > q->hpos && q->hlen - i < DEEP && before(&e, &q->heap[i - 1]))
        i--;
    if (i > q->hpos && before(&e, &q->heap[i - 1])) {
        if (q->alen == q->acap) {
            q->acap = q->acap ? 2 * q->acap : 64;
            q->aux = sim_mem_renew(q->aux, q->acap * sizeof(entry));
        }
        q->aux[q->alen++] = e;
        aux_up(q->aux, q->alen - 1);
        return;
    }
    size_t back = q->hlen - i;     /* entries after e's place: compaction keeps it */
    heap_reserve(q, q->hlen + 1);
    i = q->hlen - back;
    memmove(q->heap + i + 1, q->heap + i, (q->hlen - i) * sizeof(entry));
    q->heap[i] = e;
    q->hlen++;
}

/* The earliest bottom entry (sorted run or aux), or NULL when both are
 * empty; *from_aux says which. */
static inline const entry *bottom_head(const sim_queue *q, bool *from_aux)
{
    bool h = q->hpos < q->hlen, a = q->alen > 0;
    *from_aux = a && (!h || before(&q->aux[0], &q->heap[q->hpos]));
    return *from_aux ? &q->aux[0] : h ? &q->heap[q->hpos] : NULL;
}

/* Move a bucket (or the top) into the empty bottom and sort it. Buckets are
 * small and mostly in order (equal times arrive in seq order): insertion
 * sort; large batches use qsort. */
static void heap_fill(sim_queue *q, vec *v)
{
    q->hpos = q->hlen = 0;
    heap_reserve(q, v->n);
    entry *h = q->heap;
    memcpy(h, v->v, v->n * sizeof(entry));
    q->hlen = v->n;
    vec_drained(v);
    if (q->pf_base)
        for (size_t i = 0; i < q->hlen; i++)
            __builtin_prefetch(q->pf_base + (size_t)E_PAYLOAD(h[i]) * q->pf_stride);
    size_t i = 1;
    while (i < q->hlen && !before(&h[i], &h[i - 1]))
        i++;
    if (i >= q->hlen) /* already in order: the common case for equal times */
        return;
    if (q->hlen > 48) {
        qsort(h, q->hlen, sizeof(entry), entry_cmp);
        return;
    }
    for (size_t i = 1; i < q->hlen; i++) {
        entry e = h[i];
        size_t j = i;
        while (j > 0 && before(&e, &h[j - 1])) {
            h[j] = h[j - 1];
            j--;
        }
        h[j] = e;
    }
}

/* ---- rungs ---- */

static inline uint64_t rung_cur_start(const rung *g) { return g->start + ((uint64_t)g->cur << g->shift); }

/* Set up rung k to cover [start, start + nb<<shift) with empty buckets. */
static rung *rung_open(sim_queue *q, unsigned k, uint64_t start, unsigned shift, size_t nb)
{
    rung *g = &q->r[k];
    if (nb > g->nb_cap) {
        g->b = g_renew(vec, g->b, nb);
        memset(g->b + g->nb_cap, 0, (nb - g->nb_cap) * sizeof(vec));
        g->nb_cap = nb;
    }
    g->start = start;
    g->shift = shift;
    g->nb = nb;
    g->cur = 0;
    g->count = 0;
    return g;
}

static inline unsigned ceil_log2(uint64_t x) { return x <= 1 ? 0 : 64 - (unsigned)__builtin_clzll(x - 1); }

static void spread(rung *g, vec *src)
{
    for (uint32_t i = 0; i < src->n; i++) {
        entry e = src->v[i];
        vec_push(&g->b[(ukey(e.t) - g->start) >> g->shift], e);
    }
    g->count += src->n;
    vec_drained(src);
}

/* All entries at one time: no finer rung can separate them (symmetric
 * models finish many chunks at the same picosecond). */
static bool same_time(const vec *b)
{
    for (uint32_t i = 1; i < b->n; i++)
        if (b->v[i].t != b->v[0].t)
            return false;
    return true;
}

/* Refill the empty bottom from the rungs or the top. Returns false when
 * the queue is empty. */
static bool refill(sim_queue *q)
{
    for (;;) {
        while (q->nr > 0) {
            unsigned k = q->nr - 1;
            rung *g = &q->r[k];
            if (g->count == 0) {
                q->nr--;
                continue;
            }
            while (g->b[g->cur].n == 0)
                g->cur++;
            vec *b = &g->b[g->cur];
            if (b->n > SPLIT_AT && g->shift > 0 && k + 1 < MAX_RUNGS && !same_time(b)) {
                /* split into a finer rung covering exactly this bucket */
                unsigned d = ceil_log2(b->n / (BUCKET_MEAN / 4));
                if (d > g->shift)
                    d = g->shift;
                if (d < 1)
                    d = 1;
                uint64_t bstart = rung_cur_start(g);
                g->count -= b->n;
                g->cur++;
                rung *c = rung_open(q, k + 1, bstart, g->shift - d, (size_t)1 << d);
                q->nr++;
                g = &q->r[k];
                spread(c, &g->b[g->cur - 1]);
                continue;
            }
            g->count -= b->n;
            g->cur++;
            heap_fill(q, b);
            return true;
        }
        if (q->top.n == 0)
            return false;
        /* spread the top into a new rung 0 */
        uint64_t lo = ukey(q->top_min), hi = ukey(q->top_max);
        if (q->top.n <= SPLIT_AT || lo == hi) {
            q->top_start = q->top_max == INT64_MAX ? INT64_MAX : q->top_max + 1;
            heap_fill(q, &q->top);
            return true;
        }
        /* Rung 0 takes only the earliest ~1/TOP_FRAC of a large top (cut
         * estimated from a fixed sample), the rest stays in the top: pushes
         * far in the future then append sequentially to the top instead of
         * landing in a random bucket, and the spread is one tight loop. */
        uint64_t cut = hi;
        size_t share = q->top.n;
        if (q->top.n >= SAMPLE_MIN) {
            uint64_t smp[SAMPLES];
            for (size_t j = 0; j < SAMPLES; j++)
                smp[j] = ukey(q->top.v[j * q->top.n / SAMPLES].t);
            cut = u64_select(smp, SAMPLES, SAMPLES / TOP_FRAC);
            if (cut <= lo)
                cut = hi;
            else
                share = q->top.n / TOP_FRAC;
        }
        uint64_t range = cut - lo; /* > 0 */
        size_t want = share / BUCKET_MEAN + 1;
        unsigned shift = 0;
        while ((range >> shift) >= want)
            shift++;
        size_t nb = (size_t)(range >> shift) + 1; /* <= want */
        uint64_t end = lo + ((uint64_t)nb << shift); /* > cut, may wrap to 0 */
        bool wraps = end == 0 || end < lo;
        if (!wraps && end <= hi) {
            rung *g = rung_open(q, 0, lo, shift, nb);
            q->nr = 1;
            q->top_start = (sim_time)(end ^ (UINT64_C(1) << 63));
            uint32_t k = 0;
            uint64_t mn = UINT64_MAX;
            vec *tp = &q->top;
            for (uint32_t i = 0; i < tp->n; i++) {
                entry e = tp->v[i];
                uint64_t u = ukey(e.t);
                if (u < end) {
                    vec_push(&g->b[(u - lo) >> shift], e);
                    g->count++;
                } else {
                    tp->v[k++] = e;
                    mn = u < mn ? u : mn;
                }
            }
            tp->n = k;
            q->top_min = (sim_time)(mn ^ (UINT64_C(1) << 63));
            continue;
        }
        q->top_start = wraps ? INT64_MAX : (sim_time)(end ^ (UINT64_C(1) << 63));
        if (q->top_start == INT64_MAX && q->top_max == INT64_MAX) {
            /* the last bucket would hold INT64_MAX entries that push now sends
             * to the top: keep it simple and sort everything into bottom */
            heap_fill(q, &q->top);
            return true;
        }
        rung *g = rung_open(q, 0, lo, shift, nb);
        q->nr = 1;
        spread(g, &q->top);
    }
}

/* ---- interface ---- */

uint64_t sim_queue_push(sim_queue *q, sim_time t, uint32_t payload)
{
    g_assert(payload < SIM_QUEUE_MAX_PAYLOAD && q->next_seq < (UINT64_C(1) << (64 - PAYLOAD_BITS)));
    uint64_t seq = q->next_seq++;
    entry e = {.t = t, .sp = seq << PAYLOAD_BITS | payload};
    q->len++;
    if (t >= q->top_start) {
        if (q->top.n == 0 || t < q->top_min)
            q->top_min = t;
        if (q->top.n == 0 || t > q->top_max)
            q->top_max = t;
        vec_push(&q->top, e);
        return seq;
    }
    uint64_t u = ukey(t);
    for (unsigned k = 0; k < q->nr; k++) {
        rung *g = &q->r[k];
        if (u >= rung_cur_start(g)) {
            vec_push(&g->b[(u - g->start) >> g->shift], e);
            g->count++;
            return seq;
        }
    }
    heap_push(q, e);
    return seq;
}

/* The earliest entry (refilling the bottom from the rungs or the top when
 * it and aux are empty), or NULL when the queue is empty. */
static inline const entry *head(sim_queue *q, bool *from_aux)
{
    const entry *e = bottom_head(q, from_aux);
    if (!e && refill(q))
        e = bottom_head(q, from_aux);
    return e;
}

bool sim_queue_peek(const sim_queue *cq, sim_time *t, uint32_t *payload)
{
    /* Peek may refill the bottom tier: a logically-const operation on a
     * queue that is never itself defined const (it comes from malloc). */
    bool aux;
    const entry *e = head((sim_queue *)cq, &aux);
    if (!e)
        return false;
    if (t)
        *t = e->t;
    if (payload)
        *payload = E_PAYLOAD(*e);
    return true;
}

static bool pop_head(sim_queue *q, const entry *e, bool aux, sim_time *t, uint32_t *payload)
{
    if (t)
        *t = e->t;
    if (payload)
        *payload = E_PAYLOAD(*e);
    if (aux)
        aux_remove(q, 0);
    else
        q->hpos++;
    q->len--;
    return true;
}

bool sim_queue_pop(sim_queue *q, sim_time *t, uint32_t *payload)
{
    bool aux;
    const entry *e = head(q, &aux);
    return e && pop_head(q, e, aux, t, payload);
}

bool sim_queue_pop_until(sim_queue *q, sim_time limit, sim_time *t, uint32_t *payload)
{
    bool aux;
    const entry *e = head(q, &aux);
    return e && e->t <= limit && pop_head(q, e, aux, t, payload);
}

size_t sim_queue_len(const sim_queue *q) { return q->len; }

void sim_queue_set_prefetch(sim_queue *q, const void *base, size_t stride)
{
    q->pf_base = base;
    q->pf_stride = stride;
}

static bool vec_cancel(vec *v, uint64_t seq, uint32_t *payload)
{
    for (uint32_t i = 0; i < v->n; i++) {
        if (E_SEQ(v->v[i]) != seq)
            continue;
        if (payload)
            *payload = E_PAYLOAD(v->v[i]);
        v->v[i] = v->v[--v->n]; /* order inside a bucket or the top is free */
        return true;
    }
    return false;
}

bool sim_queue_cancel(sim_queue *q, uint64_t seq, uint32_t *payload)
{
    if (seq >= q->next_seq)
        return false;
    for (size_t i = 0; i < q->alen; i++) {
        if (E_SEQ(q->aux[i]) != seq)
            continue;
        if (payload)
            *payload = E_PAYLOAD(q->aux[i]);
        aux_remove(q, i);
        q->len--;
        return true;
    }
    for (size_t i = q->hpos; i < q->hlen; i++) {
        if (E_SEQ(q->heap[i]) != seq)
            continue;
        if (payload)
            *payload = E_PAYLOAD(q->heap[i]);
        memmove(q->heap + i, q->heap + i + 1, (q->hlen - i - 1) * sizeof(entry));
        q->hlen--;
        q->len--;
        return true;
    }
    for (unsigned k = 0; k < q->nr; k++) {
        rung *g = &q->r[k];
        for (size_t i = g->cur; i < g->nb && g->count > 0; i++) {
            if (vec_cancel(&g->b[i], seq, payload)) {
                g->count--;
                q->len--;
                return true;
            }
        }
    }
    if (vec_cancel(&q->top, seq, payload)) {
        q->len--;
        /* top_min/top_max stay valid bounds; only their tightness suffers */
        return true;
    }
    return false;
}

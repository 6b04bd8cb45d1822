/* models/fabric_run.c - moving chunks: every directed link is a FIFO server.
 *
 * A chunk waits in a link's FIFO until the link is free and the chunk has
 * arrived (ready time), then occupies the link for bytes * ps_per_byte; when
 * it leaves, it is handed to the next link with ready = now + the link's
 * latency, or delivered. Each link has at most one pending engine event (its
 * chunk in service); transfers get one completion event. Chunks come from a
 * free list allocated in blocks (no malloc per chunk).
 *
 * The chunks a transfer injects at once (its window) queue back to back on
 * its first link, so they wait there as one entry (a batch) that gives up a
 * chunk each time the link takes the next one: the same FIFO order, ready
 * times and statistics, without a chunk record per waiting chunk (an
 * alltoall queues most of its chunks at the first link). A chunk carries its
 * route, and the link prefetches what its next completion will read.
 *
 * Cut-through pieces (fabric_transfer_start_cut): a piece stands for several
 * back-to-back chunks of one connection, so it does not wait to be whole
 * before the next link starts on it. Its head reaches link k+1 when link k
 * started it plus k's latency; link k+1 starts it then (or when it frees)
 * and is free again once it has sent the bytes (start + bytes/rate), but the
 * piece has left it only when its tail has (link k's finish plus the
 * latency), and that finish time travels with it to the next link: a slow
 * link upstream delays the piece, not the other traffic of a faster link.
 * A piece may start in the past when the link has been idle since before its
 * head arrived (the link's free time is kept); it frees the link no earlier
 * than now.
 */
#include "fabric_priv.h"
#include "sim/mem.h"

#include <string.h>

typedef struct fab_xfer fab_xfer;
struct fab_xfer {
    union {
        fabric *fab;
        fab_xfer *next_free; /* while on the free list */
    };
    const fab_route *route;
    uint64_t bytes, chunk_bytes, injected, delivered;
    fab_pacer *pacer;        /* NULL: not paced */
    fab_done_fn done;
    void *ctx;
    uint64_t arg;
    fab_link_id pre;
    uint32_t window, inflight;
    bool cut; /* cut-through pieces */
};

struct fab_chunk {
    fab_chunk *next;
    fab_xfer *x;
    const fab_route *route; /* x->route */
    uint64_t bytes;         /* a batch: of all its chunks */
    sim_time ready;  /* cut-through: when its head arrives */
    sim_time tail;   /* cut-through: when its tail arrives (0 at the first hop) */
    bool cut;
    int16_t hop;     /* -1: on the pre server; else index into route->hop */
    int16_t alt_hop; /* adaptive routing: hop replaced by `alt`; ALT_NONE; ALT_BATCH */
    fab_link_id alt;
};

enum { ALT_NONE = -2, ALT_BATCH = -3 }; /* ALT_BATCH: bytes / x->chunk_bytes chunks (rounded up) */

#define CHUNK_BLOCK 4096 /* records in the first block; then doubling (sim_mem_next) */
#define XFER_BLOCK 1024

/* The run state of links added since attach: room, and copies of what
 * moving a chunk reads. */
void fabric_run_grow(fabric *f)
{
    if (!f->run)
        return;
    if (f->links->len > f->run_cap) {
        uint32_t cap = f->run_cap;
        while (cap < f->links->len)
            cap *= 2;
        f->run = g_renew(fab_lrun, f->run, cap);
        memset(f->run + f->run_cap, 0, (cap - f->run_cap) * sizeof(fab_lrun));
        f->run_cap = cap;
    }
    for (uint32_t l = f->run_init; l < f->links->len; l++) {
        const fab_link *lk = LINK(f, l);
        fab_lrun *r = &f->run[l];
        r->ps_per_byte = lk->ps_per_byte;
        r->lat_ps = lk->d.lat_ps;
        r->server = fabric_link_queue(f, l);
        r->leaf_up = lk->d.kind != LINK_SERVER && NODE(f, lk->src)->d.kind == FAB_NET_LEAF &&
                     NODE(f, lk->dst)->d.kind == FAB_NET_SPINE;
    }
    f->run_init = f->links->len;
}

void fabric_run_free(fabric *f)
{
    g_free(f->run);
    f->run = NULL;
    if (f->chunk_blocks)
        g_ptr_array_unref(f->chunk_blocks);
    f->chunk_blocks = NULL;
    f->free_chunks = NULL;
    if (f->recs)
        g_array_free(f->recs, TRUE);
    f->recs = NULL;
    if (f->xfer_allocs)
        g_ptr_array_unref(f->xfer_allocs);
    f->xfer_allocs = NULL;
    f->free_xfers = NULL;
    f->xfer_next = NULL;
    f->xfer_left = f->xfer_block_n = 0;
    f->chunk_block_n = 0;
}

void fabric_attach(fabric *f, sim_engine *e)
{
    fabric_run_free(f);
    f->eng = e;
    f->run_cap = f->links->len > 16 ? f->links->len : 16;
    f->run = g_new0(fab_lrun, f->run_cap);
    f->run_init = 0;
    fabric_run_grow(f);
    f->chunk_blocks = g_ptr_array_new_with_free_func(g_aligned_free); /* sim_mem_block */
    f->xfer_allocs = g_ptr_array_new_with_free_func(g_aligned_free);
    if (f->recording)
        f->recs = g_array_new(FALSE, FALSE, sizeof(fab_service_rec));
    f->recs_dropped = 0;
    f->injected = f->delivered = 0;
}

static fab_chunk *chunk_new(fabric *f)
{
    if (!f->free_chunks) {
        gsize n = f->chunk_block_n = sim_mem_next(f->chunk_block_n, CHUNK_BLOCK, sizeof(fab_chunk));
        fab_chunk *b = sim_mem_block(n * sizeof(fab_chunk));
        g_ptr_array_add(f->chunk_blocks, b);
        for (gsize i = 0; i + 1 < n; i++)
            b[i].next = &b[i + 1];
        b[n - 1].next = NULL;
        f->free_chunks = b;
    }
    fab_chunk *c = f->free_chunks;
    f->free_chunks = c->next;
    return c;
}

static void chunk_free(fabric *f, fab_chunk *c)
{
    c->next = f->free_chunks;
    f->free_chunks = c;
}

static void on_link_done(sim_engine *e, void *ctx, uint64_t arg);

/* The server a directed link's chunks queue on: its own, except host memory
 * (both directions share one queue, fabric_run_grow). */
static inline fab_link_id server_of(const fabric *f, fab_link_id l)
{
    return f->run[l].server;
}

/* A batch's first chunk leaves it: the rest of the batch, or NULL. */
static fab_chunk *batch_split(fabric *f, fab_chunk *c)
{
    if (c->alt_hop != ALT_BATCH)
        return NULL;
    uint64_t cb = c->x->chunk_bytes;
    fab_chunk *rest = chunk_new(f);
    *rest = *c;
    rest->bytes = c->bytes - cb;
    rest->alt_hop = rest->bytes > cb ? ALT_BATCH : ALT_NONE;
    c->bytes = cb;
    c->alt_hop = ALT_NONE;
    return rest;
}

/* Serve c on link l, which has been free since r->free_at. */
static void start_service(fabric *f, fab_link_id l, fab_chunk *c)
{
    fab_lrun *r = &f->run[l];
    /* read when c leaves: its route's next hop; then the next chunk here */
    __builtin_prefetch(c->route);
    __builtin_prefetch(&c->route->hop[c->hop + 1]);
    if (r->head)
        __builtin_prefetch(r->head);
    sim_time now = sim_engine_now(f->eng);
    /* store-and-forward chunks are ready no earlier than now; a cut-through
     * piece may have been ready since before: the link idled from free_at */
    sim_time from = c->cut ? r->free_at : now;
    sim_time start = c->ready > from ? c->ready : from;
    double ps = (double)c->bytes * r->ps_per_byte;
    sim_time ser = SIM_TIME_LIMIT; /* past the axis: the engine's overflow error */
    if (ps < (double)SIM_TIME_LIMIT) {
        ser = (sim_time)ps;
        ser += (double)ser < ps; /* round up: a non-empty chunk takes >= 1 ps */
    }
    /* the link is free when it has sent the bytes; a piece whose tail comes
     * later, from a slower link upstream, moves on with that tail time
     * (on_link_done), and the next link cannot finish it before */
    sim_time end = sim_time_sat_add(start, ser); /* past SIM_TIME_LIMIT: the engine's overflow error */
    end = end > now ? end : now;
    r->cur = c;
    /* sums over chunks: saturate (a queue of long waits passes 2^63 ps before the clock does) */
    r->st.qdelay_ps = sim_time_sat_add(r->st.qdelay_ps, start - c->ready > 0 ? start - c->ready : 0);
    c->ready = start; /* a cut-through piece's head leaves now */
    r->st.busy_ps = sim_time_sat_add(r->st.busy_ps, ser);
    r->st.bytes += c->bytes;
    r->st.chunks++;
    if (f->recs) {
        fab_service_rec rec = {.link = l, .start_ps = start, .end_ps = end, .bytes = c->bytes};
        if (f->recs->len < FABRIC_MAX_RECORDS)
            g_array_append_val(f->recs, rec);
        else
            f->recs_dropped++;
    }
    sim_engine_at(f->eng, end, on_link_done, f, l);
}

/* Queue c (n chunks: a batch, or 1) on link l, or serve its first chunk
 * now when l is free; the rest waits as if queued one by one. */
static void link_enqueue(fabric *f, fab_link_id l, fab_chunk *c, uint32_t n)
{
    l = server_of(f, l);
    fab_lrun *r = &f->run[l];
    if (!r->cur) {
        fab_chunk *rest = batch_split(f, c);
        start_service(f, l, c);
        if (!rest)
            return;
        c = rest;
        n--;
    }
    c->next = NULL;
    if (r->tail)
        r->tail->next = c;
    else
        r->head = c;
    r->tail = c;
    r->qlen += n;
    if (r->qlen > r->st.peak_queue)
        r->st.peak_queue = r->qlen;
}

static void on_xfer_done(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)arg;
    fab_xfer *x = ctx;
    fab_done_fn done = x->done;
    void *dctx = x->ctx;
    uint64_t darg = x->arg;
    fabric *f = x->fab;
    x->next_free = f->free_xfers;
    f->free_xfers = x;
    if (done)
        done(e, dctx, darg);
}

static fab_link_id hop_link(const fab_xfer *x, int32_t hop)
{
    return hop < 0 ? x->pre : x->route->hop[hop];
}

static void inject(fabric *f, fab_xfer *x, sim_time ready)
{
    bool paced = x->pacer && x->pacer->Bps > 0;
    while (x->injected < x->bytes && (x->window == 0 || x->inflight < x->window)) {
        fab_chunk *c = chunk_new(f);
        uint64_t left = x->bytes - x->injected, cb = x->chunk_bytes;
        uint32_t n = 1;
        c->x = x;
        c->route = x->route;
        c->bytes = left < cb ? left : cb;
        c->hop = x->pre != FAB_NONE ? -1 : 0;
        c->alt_hop = ALT_NONE;
        c->ready = ready;
        c->tail = 0;
        c->cut = x->cut;
        if (paced) {
            sim_time from = ready > x->pacer->t_ps ? ready : x->pacer->t_ps;
            c->ready = x->pacer->t_ps = sim_time_sat_add(from, sim_time_for_bytes((double)c->bytes, x->pacer->Bps));
        } else if (left > cb) {
            /* every chunk the window admits now, as one batch */
            uint64_t chunks = left / cb + (left % cb != 0), room = x->window ? x->window - x->inflight : chunks;
            uint64_t take = chunks < room ? chunks : room;
            if (take > (1u << 30))
                take = 1u << 30;
            n = (uint32_t)take;
            c->bytes = take == chunks ? left : take * cb;
            c->alt_hop = n > 1 ? ALT_BATCH : ALT_NONE;
        }
        x->injected += c->bytes;
        x->inflight += n;
        f->injected += c->bytes;
        link_enqueue(f, hop_link(x, c->hop), c, n);
    }
}

static void deliver(fabric *f, fab_chunk *c, sim_time at)
{
    fab_xfer *x = c->x;
    x->delivered += c->bytes;
    x->inflight--;
    f->delivered += c->bytes;
    chunk_free(f, c);
    if (x->delivered == x->bytes)
        sim_engine_at(f->eng, at, on_xfer_done, x, 0);
    else
        inject(f, x, at);
}

static uint32_t link_load(const fabric *f, fab_link_id l)
{
    l = server_of(f, l);
    return f->run[l].qlen + (f->run[l].cur != NULL);
}

/* Adaptive routing at a leaf: of the uplinks to spines that reach the
 * chunk's destination leaf, take the one with the fewest chunks waiting or
 * in service (the route's own ECMP choice wins ties); the spine's downlink
 * follows. Returns the link for hop `h`. */
static fab_link_id adaptive_pick(fabric *f, fab_chunk *c, int32_t h)
{
    const fab_route *rt = c->route;
    fab_link_id up = rt->hop[h];
    if (h + 1 >= (int32_t)rt->nhops || !f->run[up].leaf_up)
        return up;
    const fab_link *lk = LINK(f, up);
    fab_node_id dst_leaf = LINK(f, rt->hop[h + 1])->dst;
    fab_link_id best = up, best_down = rt->hop[h + 1];
    uint32_t best_load = link_load(f, up);
    if (best_load == 0)
        return up;
    /* the least-loaded uplink first; every spine usually reaches every leaf */
    uint32_t nsp;
    const fab_link_id *ups = fabric_spine_ups(f, lk->src, &nsp);
    for (int pass = 0; pass < 2 && best == up; pass++) {
        fab_link_id cand = FAB_NONE;
        uint32_t cand_load = best_load;
        for (uint32_t i = 0; i < nsp; i++) {
            fab_link_id l = ups[i];
            if (link_load(f, l) >= cand_load)
                continue;
            if (pass == 1 && fabric_link_between(f, LINK(f, l)->dst, dst_leaf) == FAB_NONE)
                continue;
            cand = l;
            cand_load = link_load(f, l);
        }
        if (cand == FAB_NONE)
            break;
        fab_link_id down = fabric_link_between(f, LINK(f, cand)->dst, dst_leaf);
        if (down != FAB_NONE) {
            best = cand;
            best_down = down;
        }
    }
    if (best != up) {
        c->alt_hop = h + 1;
        c->alt = best_down;
    }
    return best;
}

static fab_link_id next_link(fabric *f, fab_chunk *c)
{
    if (c->alt_hop == c->hop)
        return c->alt;
    if (f->adaptive)
        return adaptive_pick(f, c, c->hop);
    return c->route->hop[c->hop];
}

static void on_link_done(sim_engine *e, void *ctx, uint64_t arg)
{
    fabric *f = ctx;
    fab_link_id l = (fab_link_id)arg;
    fab_lrun *r = &f->run[l];
    fab_chunk *c = r->cur;
    r->cur = NULL;
    r->free_at = sim_engine_now(e);
    /* c has left l: all of it now, or a cut-through piece when its tail,
     * still coming from a slower link upstream, has passed (c->tail) */
    sim_time done = c->cut && c->tail > r->free_at ? c->tail : r->free_at;
    int64_t lat = r->lat_ps;
    sim_time at = sim_time_sat_add(done, lat);
    int32_t nhops = (int32_t)c->route->nhops;
    if (c->hop + 1 < nhops) {
        c->hop++;
        if (c->cut) { /* its head started here at c->ready */
            c->ready += lat;
            c->tail = at;
        } else {
            c->ready = at;
        }
        if (c->hop + 1 == nhops)
            __builtin_prefetch(c->x); /* read when it is delivered */
        link_enqueue(f, next_link(f, c), c, 1);
    } else {
        deliver(f, c, at);
    }
    if (!r->cur && r->head) {
        fab_chunk *n = r->head, *rest = batch_split(f, n);
        if (rest) { /* the batch's other chunks stay first in line */
            r->head = rest;
            if (r->tail == n)
                r->tail = rest;
        } else {
            r->head = n->next;
            if (!r->head)
                r->tail = NULL;
        }
        r->qlen--;
        start_service(f, l, n);
    }
}

/* A paced transfer (a collective's block sending a step) that may not leave
 * yet enters its first link's queue when it may: queued early, its chunk
 * would hold the link idle for the delay while other traffic waits behind
 * it. (Unpaced transfers still queue at once, in the order they were
 * issued: an alltoall's thousand flows per GPU, all issued together.) */
static void on_xfer_ready(sim_engine *e, void *ctx, uint64_t arg)
{
    fab_xfer *x = ctx;
    (void)arg;
    inject(x->fab, x, sim_engine_now(e));
}

static void xfer_start(fabric *f, const fab_route *route, fab_link_id pre, fab_pacer *pacer, bool cut,
                       uint64_t bytes, uint64_t chunk_bytes, uint32_t window, int64_t delay_ps, fab_done_fn done,
                       void *ctx, uint64_t arg)
{
    g_assert(f->eng && route && delay_ps >= 0 && route->nhops < INT16_MAX);
    fab_xfer *x = f->free_xfers;
    if (x) {
        f->free_xfers = x->next_free;
    } else {
        if (f->xfer_left == 0) {
            f->xfer_left = f->xfer_block_n = sim_mem_next(f->xfer_block_n, XFER_BLOCK, sizeof(fab_xfer));
            f->xfer_next = sim_mem_block(f->xfer_left * sizeof(fab_xfer));
            g_ptr_array_add(f->xfer_allocs, f->xfer_next);
        }
        x = f->xfer_next++;
        f->xfer_left--;
    }
    *x = (fab_xfer){.fab = f, .route = route, .pre = pre, .bytes = bytes, .chunk_bytes = chunk_bytes ? chunk_bytes : bytes,
                    .window = window, .done = done, .ctx = ctx, .arg = arg, .pacer = pacer, .cut = cut};
    sim_time at = sim_engine_now(f->eng) + delay_ps;
    if (bytes == 0 || (route->nhops == 0 && pre == FAB_NONE)) {
        f->injected += bytes;
        f->delivered += bytes;
        sim_engine_at(f->eng, at, on_xfer_done, x, 0);
        return;
    }
    if (delay_ps > 0 && pacer) {
        sim_engine_at(f->eng, at, on_xfer_ready, x, 0);
        return;
    }
    inject(f, x, at);
}

void fabric_transfer_start(fabric *f, const fab_route *route, fab_link_id pre, uint64_t bytes,
                           uint64_t chunk_bytes, uint32_t window, int64_t delay_ps, fab_done_fn done,
                           void *ctx, uint64_t arg)
{
    xfer_start(f, route, pre, NULL, false, bytes, chunk_bytes, window, delay_ps, done, ctx, arg);
}

void fabric_transfer_start_cut(fabric *f, const fab_route *route, uint64_t bytes, uint64_t piece_bytes,
                               uint32_t window, int64_t delay_ps, fab_done_fn done, void *ctx, uint64_t arg)
{
    xfer_start(f, route, FAB_NONE, NULL, true, bytes, piece_bytes, window, delay_ps, done, ctx, arg);
}

void fabric_transfer_start_paced(fabric *f, const fab_route *route, fab_pacer *pacer, uint64_t bytes,
                                 uint64_t chunk_bytes, uint32_t window, int64_t delay_ps, fab_done_fn done,
                                 void *ctx, uint64_t arg)
{
    xfer_start(f, route, FAB_NONE, pacer, false, bytes, chunk_bytes, window, delay_ps, done, ctx, arg);
}

const fab_link_stats *fabric_link_stats(const fabric *f, fab_link_id l)
{
    static const fab_link_stats none;
    return f->run && l < f->run_cap ? &f->run[server_of(f, l)].st : &none;
}

void fabric_link_account(fabric *f, fab_link_id l, const fab_link_stats *add)
{
    if (!f->run || l >= f->run_cap)
        return;
    fab_link_stats *st = &f->run[server_of(f, l)].st;
    st->bytes += add->bytes;
    st->chunks += add->chunks;
    st->busy_ps = sim_time_sat_add(st->busy_ps, add->busy_ps);
    st->qdelay_ps = sim_time_sat_add(st->qdelay_ps, add->qdelay_ps);
    if (add->peak_queue > st->peak_queue)
        st->peak_queue = add->peak_queue;
}

void fabric_totals(const fabric *f, uint64_t *injected, uint64_t *delivered)
{
    if (injected)
        *injected = f->injected;
    if (delivered)
        *delivered = f->delivered;
}

fab_link_id fabric_busiest_link(const fabric *f)
{
    fab_link_id best = FAB_NONE;
    int64_t b = 0;
    for (uint32_t l = 0; f->run && l < f->links->len; l++) {
        if (LINK(f, l)->d.kind == LINK_SERVER)
            continue;
        if (f->run[l].st.busy_ps > b) {
            b = f->run[l].st.busy_ps;
            best = l;
        }
    }
    return best;
}

void fabric_set_recording(fabric *f, bool on)
{
    f->recording = on;
    if (on && f->run && !f->recs)
        f->recs = g_array_new(FALSE, FALSE, sizeof(fab_service_rec));
}

const GArray *fabric_records(const fabric *f) { return f->recs; }
uint64_t fabric_records_dropped(const fabric *f) { return f->recs_dropped; }

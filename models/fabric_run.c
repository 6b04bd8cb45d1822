/* models/fabric_run.c - moving chunks: every directed link is a FIFO server.
 *
 * A chunk waits in a link's FIFO until the link is free and the chunk has
 * arrived (ready time), then occupies the link for bytes * ps_per_byte; when
 * it leaves, it is handed to the next link with ready = now + the link's
 * latency, or delivered. Each link has at most one pending engine event (its
 * chunk in service); transfers get one completion event. Chunks come from a
 * free list allocated in blocks (no malloc per chunk).
 */
#include "fabric_priv.h"

#include <string.h>

typedef struct fab_xfer fab_xfer;
struct fab_xfer {
    fab_xfer *next_free;
    fabric *fab;
    const fab_route *route;
    fab_link_id pre;
    uint64_t bytes, chunk_bytes, injected, delivered;
    uint32_t window, inflight;
    sim_time start;
    fab_pacer *pacer;        /* NULL: not paced */
    fab_done_fn done;
    void *ctx;
    uint64_t arg;
};

struct fab_chunk {
    fab_chunk *next;
    fab_xfer *x;
    uint64_t bytes;
    int32_t hop; /* -1: on the pre server; else index into route->hop */
    int32_t alt_hop; /* adaptive routing: hop replaced by `alt`, or -2 */
    fab_link_id alt;
    sim_time ready;
};

#define CHUNK_BLOCK 4096

void fabric_run_grow(fabric *f)
{
    if (!f->run || f->links->len <= f->run_cap)
        return;
    uint32_t cap = f->run_cap;
    while (cap < f->links->len)
        cap *= 2;
    f->run = g_renew(fab_lrun, f->run, cap);
    memset(f->run + f->run_cap, 0, (cap - f->run_cap) * sizeof(fab_lrun));
    f->run_cap = cap;
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
}

void fabric_attach(fabric *f, sim_engine *e)
{
    fabric_run_free(f);
    f->eng = e;
    f->run_cap = f->links->len > 16 ? f->links->len : 16;
    f->run = g_new0(fab_lrun, f->run_cap);
    f->chunk_blocks = g_ptr_array_new_with_free_func(g_free);
    f->xfer_allocs = g_ptr_array_new_with_free_func(g_free);
    if (f->recording)
        f->recs = g_array_new(FALSE, FALSE, sizeof(fab_service_rec));
    f->injected = f->delivered = 0;
}

static fab_chunk *chunk_new(fabric *f)
{
    if (!f->free_chunks) {
        fab_chunk *b = g_new(fab_chunk, CHUNK_BLOCK);
        g_ptr_array_add(f->chunk_blocks, b);
        for (int i = 0; i < CHUNK_BLOCK - 1; i++)
            b[i].next = &b[i + 1];
        b[CHUNK_BLOCK - 1].next = NULL;
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
 * (LINK_MEM), which is half duplex: DRAM serves reads and writes from one
 * pool, so both directions share the even link's queue. */
static inline fab_link_id server_of(const fabric *f, fab_link_id l)
{
    return LINK(f, l)->d.kind == LINK_MEM ? (l & ~1u) : l;
}

static void start_service(fabric *f, fab_link_id l, fab_chunk *c)
{
    fab_lrun *r = &f->run[l];
    fab_link *lk = LINK(f, l);
    sim_time now = sim_engine_now(f->eng);
    sim_time start = c->ready > now ? c->ready : now;
    double ps = (double)c->bytes * lk->ps_per_byte;
    sim_time ser = (sim_time)ps;
    ser += (double)ser < ps; /* round up: a non-empty chunk takes >= 1 ps */
    r->cur = c;
    r->st.qdelay_ps += start - c->ready > 0 ? start - c->ready : 0;
    r->st.busy_ps += ser;
    r->st.bytes += c->bytes;
    r->st.chunks++;
    if (f->recs) {
        fab_service_rec rec = {.link = l, .start_ps = start, .end_ps = start + ser, .bytes = c->bytes};
        g_array_append_val(f->recs, rec);
    }
    sim_engine_at(f->eng, start + ser, on_link_done, f, l);
}

static void link_enqueue(fabric *f, fab_link_id l, fab_chunk *c)
{
    l = server_of(f, l);
    fab_lrun *r = &f->run[l];
    if (!r->cur) {
        start_service(f, l, c);
        return;
    }
    c->next = NULL;
    if (r->tail)
        r->tail->next = c;
    else
        r->head = c;
    r->tail = c;
    if (++r->qlen > r->st.peak_queue)
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
    while (x->injected < x->bytes && (x->window == 0 || x->inflight < x->window)) {
        fab_chunk *c = chunk_new(f);
        uint64_t left = x->bytes - x->injected;
        c->x = x;
        c->bytes = left < x->chunk_bytes ? left : x->chunk_bytes;
        c->hop = x->pre != FAB_NONE ? -1 : 0;
        c->alt_hop = -2;
        c->ready = ready;
        if (x->pacer && x->pacer->Bps > 0) {
            sim_time from = ready > x->pacer->t_ps ? ready : x->pacer->t_ps;
            c->ready = x->pacer->t_ps = from + sim_time_for_bytes((double)c->bytes, x->pacer->Bps);
        }
        x->injected += c->bytes;
        x->inflight++;
        f->injected += c->bytes;
        link_enqueue(f, hop_link(x, c->hop), c);
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
    const fab_route *rt = c->x->route;
    fab_link_id up = rt->hop[h];
    if (h + 1 >= (int32_t)rt->nhops)
        return up;
    const fab_link *lk = LINK(f, up);
    if (NODE(f, lk->src)->d.kind != FAB_NET_LEAF || NODE(f, lk->dst)->d.kind != FAB_NET_SPINE)
        return up;
    fab_node_id dst_leaf = LINK(f, rt->hop[h + 1])->dst;
    fab_link_id best = up, best_down = rt->hop[h + 1];
    uint32_t best_load = link_load(f, up);
    if (best_load == 0)
        return up;
    /* the least-loaded uplink first; every spine usually reaches every leaf */
    GArray *o = NODE(f, lk->src)->out;
    for (int pass = 0; pass < 2 && best == up; pass++) {
        fab_link_id cand = FAB_NONE;
        uint32_t cand_load = best_load;
        for (guint i = 0; i < o->len; i++) {
            fab_link_id l = g_array_index(o, fab_link_id, i);
            if (NODE(f, LINK(f, l)->dst)->d.kind != FAB_NET_SPINE || link_load(f, l) >= cand_load)
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
    return c->x->route->hop[c->hop];
}

static void on_link_done(sim_engine *e, void *ctx, uint64_t arg)
{
    fabric *f = ctx;
    fab_link_id l = (fab_link_id)arg;
    fab_lrun *r = &f->run[l];
    fab_chunk *c = r->cur;
    r->cur = NULL;
    sim_time at = sim_engine_now(e) + LINK(f, l)->d.lat_ps;
    fab_xfer *x = c->x;
    if (c->hop + 1 < (int32_t)x->route->nhops) {
        c->hop++;
        c->ready = at;
        link_enqueue(f, next_link(f, c), c);
    } else {
        deliver(f, c, at);
    }
    if (!r->cur && r->head) {
        fab_chunk *n = r->head;
        r->head = n->next;
        if (!r->head)
            r->tail = NULL;
        r->qlen--;
        start_service(f, l, n);
    }
}

static void xfer_start(fabric *f, const fab_route *route, fab_link_id pre, fab_pacer *pacer, uint64_t bytes,
                       uint64_t chunk_bytes, uint32_t window, int64_t delay_ps, fab_done_fn done, void *ctx,
                       uint64_t arg)
{
    g_assert(f->eng && route && delay_ps >= 0);
    fab_xfer *x = f->free_xfers;
    if (x)
        f->free_xfers = x->next_free;
    else
    {
        x = g_new(fab_xfer, 1);
        g_ptr_array_add(f->xfer_allocs, x);
    }
    *x = (fab_xfer){.fab = f, .route = route, .pre = pre, .bytes = bytes, .chunk_bytes = chunk_bytes ? chunk_bytes : bytes,
                    .window = window, .done = done, .ctx = ctx, .arg = arg, .pacer = pacer};
    sim_time at = sim_engine_now(f->eng) + delay_ps;
    if (bytes == 0 || (route->nhops == 0 && pre == FAB_NONE)) {
        f->injected += bytes;
        f->delivered += bytes;
        sim_engine_at(f->eng, at, on_xfer_done, x, 0);
        return;
    }
    x->start = at;
    inject(f, x, at);
}

void fabric_transfer_start(fabric *f, const fab_route *route, fab_link_id pre, uint64_t bytes,
                           uint64_t chunk_bytes, uint32_t window, int64_t delay_ps, fab_done_fn done,
                           void *ctx, uint64_t arg)
{
    xfer_start(f, route, pre, NULL, bytes, chunk_bytes, window, delay_ps, done, ctx, arg);
}

void fabric_transfer_start_paced(fabric *f, const fab_route *route, fab_pacer *pacer, uint64_t bytes,
                                 uint64_t chunk_bytes, uint32_t window, int64_t delay_ps, fab_done_fn done,
                                 void *ctx, uint64_t arg)
{
    xfer_start(f, route, FAB_NONE, pacer, bytes, chunk_bytes, window, delay_ps, done, ctx, arg);
}

const fab_link_stats *fabric_link_stats(const fabric *f, fab_link_id l)
{
    static const fab_link_stats none;
    return f->run && l < f->run_cap ? &f->run[server_of(f, l)].st : &none;
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

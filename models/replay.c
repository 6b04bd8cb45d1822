/* models/replay.c - the trace replay: streams (layer 2), the collective
 * rendezvous per (group, seq) (layer 1) and the fabric (layer 3) on one
 * engine. See replay.h. */
#include "replay.h"
#include "sim/hash.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rp rp;

typedef struct {
    uint32_t npred;        /* unfinished predecessors (deps + stream order) */
    uint32_t stream_prev;  /* the op before it on its stream, or UINT32_MAX */
    uint32_t succ0, nsucc; /* its successors: succ[rank][succ0 .. succ0+nsucc) */
    int64_t issue_ps;      /* when it started waiting/ran (-1: not yet) */
    int64_t deps_done_ps;  /* when its explicit deps were all done */
    int64_t start_ps, end_ps;
    bool done;
} op_state;

typedef struct {
    int group;
    int64_t seq;
    int arrived;
    int fused;      /* members whose op is fused (launched with the collective before it) */
    int64_t first_arrival_ps;
    int *who;       /* ranks arrived, in order */
    uint32_t *idx;  /* their op indices */
} rendezvous;

/* A distinct collective (opts.iso): its isolated duration and footprint. */
typedef struct {
    int group; /* canonical group (same ranks = same group) */
    int kind, algo, proto, nch, root;
    int fused; /* no host launch (coll_request.fused) */
    uint64_t bytes;
} memo_key;

typedef struct {
    memo_key k;
    int64_t dur_ps;
    fab_link_id *links;   /* footprint: the graph links its routes cross */
    float *util;          /* busy share of each footprint link over dur_ps */
    float *wq;            /* bytes it kept in each footprint link's queue and service, on average */
    const void *src;      /* a view (memo_view): the canonical entry it maps */
    guint nlinks;
    fab_link_id *slink;   /* the links (servers) that carried its traffic, and how */
    fab_link_stats *stat;
    guint nstat;
} memo_ent;

/* A reused collective's or transfer's progress through its isolated run,
 * shared with the other reused ones on its links (fluid_retime). */
typedef struct {
    const fab_link_id *links; /* the links it holds */
    const float *util;        /* its busy share of each in the isolated run */
    const float *wq;          /* the bytes it kept at each in the isolated run (fifo_share) */
    guint nlinks;
    double rem_ps;            /* isolated time still to run at t0_ps */
    double rate;              /* isolated picoseconds run per picosecond now (1 / its stretch) */
    int64_t t0_ps;
    sim_event ev;             /* its end, when ev_set */
    bool ev_set;
    uint32_t mark;            /* fluid_touch's pass that last retimed it */
    sim_handler done;         /* run at its end with ctx */
    void *ctx;
} fluid;

typedef struct {
    rp *p;
    rendezvous *rv;
    int64_t launch_ps;
    int traced_rank;
    uint32_t traced_idx;
    const memo_ent *held; /* simulated: links counted active while it runs, or NULL */
    const memo_ent *reuse; /* reused: links held while its window lasts, or NULL */
    int nch;               /* channels (thread blocks) it holds on each member's GPU */
    coll_request req;      /* as tuned */
    fluid fl;              /* reused: its progress */
} coll_ctx;

/* A distinct send/receive (opts.iso): its isolated duration and what it
 * did to each hop of its route.  Keyed by the route's link parameters
 * (rate, efficiency, latency, kind of every hop), the size and the chunk:
 * the same key over other links of the same kinds takes the same time
 * alone.  reusable: the isolated run kept to the route's hops (adaptive
 * routing did not spread it). */
typedef struct {
    int64_t dur_ps;
    guint nhops;
    bool reusable;
    float *util;          /* busy share of each hop over dur_ps */
    float *wq;            /* bytes it kept at each hop, on average */
    fab_link_stats *stat; /* per hop */
} p2p_memo;

typedef struct {
    rp *p;
    int src, dst;
    uint32_t sidx, ridx;
    const fab_route *rt;
    const p2p_memo *reuse; /* reused: hops held while its window lasts, or NULL */
    const p2p_memo *memo;  /* its isolated run while its launch is pending (counted in pending_n), or NULL */
    coll_proto_id proto;   /* the protocol a sendrecv of its bytes takes (its step latency) */
    uint64_t wire, chunk;  /* bytes on the wire in that protocol; the route's chunk */
    int64_t lat;           /* the route's step latency in that protocol */
    fluid fl;              /* reused: its progress */
} p2p_ctx;

struct rp {
    const trace *t;
    const replay_opts *o;
    sim_engine *eng;
    op_state **st;             /* [rank][op] */
    uint32_t **succ;           /* [rank][]: successor lists, op by op (CSR) */
    GHashTable *rvs;           /* (group<<40|seq) -> rendezvous* */
    GHashTable *p2p_q;         /* "s>d#tag" -> GQueue of posted (rank<<32|idx), sign per side */
    coll_system *gsys;         /* per group */
    int **gsys_gpu;
    /* repeated collectives (opts.iso) */
    coll_system *gsys_iso;     /* per group, on the iso fabric */
    int *gcanon;               /* group -> first group of the same shape */
    GHashTable **gmap;         /* per group whose canonical is another: its link -> this group's */
    GHashTable *memo;          /* memo_key -> memo_ent */
    GHashTable *views;         /* memo_view's cache */
    GHashTable *p2p_memo;      /* GBytes (route parameters, size, chunk) -> p2p_memo */
    GHashTable *by_name;       /* op name -> replay_exposed (opts.by_name) */
    GHashTable *compute_by_name; /* op name -> replay_exposed, compute time (opts.by_name) */
    int32_t *active;           /* per link: simulated collectives holding it */
    int32_t *active_p2p;       /* per link: sends/receives in flight on it */
    double *held_util;         /* per link: busy share of the reused collectives holding it */
    GArray **holders;          /* per link: the reused collectives and transfers holding it (holder), or NULL */
    uint32_t mark;             /* fluid_touch's passes */
    uint32_t nlinks;           /* of holders */
    int32_t *pending_n;        /* per link: matched sends/receives still in their launch */
    int32_t *pending_src, *pending_dst; /* per rank: those it sends, those it receives */
    GPtrArray *go_batch;       /* p2p_ctx whose launch ends now, started together (p2p_flush) */
    GHashTable *p2p_tune;      /* bytes -> p2p_launch: a send/receive's launch and protocol by size */
    bool go_flush;             /* a p2p_flush is scheduled for now */
    int32_t *ch_active;        /* per rank: channels of its collectives in flight (opts.gpu_sms) */
    replay_result *out;
    GError *err;
    GPtrArray *garbage;
    uint64_t ops_done, ops_total; /* for o->progress */
};

static void issue(rp *p, int r, uint32_t i);

/* Whether reused collectives or transfers hold link l now. */
static bool held(const rp *p, fab_link_id l)
{
    return p->holders[l] && p->holders[l]->len > 0;
}

static op_state *ST(rp *p, int r, uint32_t i) { return &p->st[r][i]; }
static const trace_op *OPR(rp *p, int r, uint32_t i) { return &g_array_index(p->t->ranks[r].ops, trace_op, i); }

static void fail(rp *p, GError *e)
{
    if (!p->err)
        p->err = e;
    else
        g_error_free(e);
    sim_engine_stop(p->eng);
}

static void on_progress(sim_engine *e, void *ctx)
{
    rp *p = ctx;
    double frac = p->ops_total ? (double)p->ops_done / (double)p->ops_total : 0;
    p->o->progress(p->o->progress_ctx, frac, sim_engine_now(e), sim_engine_stats(e)->events);
}

static void complete(rp *p, int r, uint32_t i)
{
    op_state *s = ST(p, r, i);
    s->done = true;
    p->ops_done++;
    s->end_ps = sim_engine_now(p->eng);
    if (p->o->record) {
        const trace_op *o = OPR(p, r, i);
        replay_interval iv = {.rank = r, .stream = o->stream, .kind = o->kind, .name = o->name,
                              .start_ps = s->start_ps, .end_ps = s->end_ps};
        g_array_append_val(p->out->intervals, iv);
    }
    const uint32_t *succ = p->succ[r] + s->succ0;
    for (uint32_t k = 0; k < s->nsucc; k++) {
        uint32_t j = succ[k];
        op_state *sj = ST(p, r, j);
        if (sj->stream_prev != i && s->end_ps > sj->deps_done_ps)
            sj->deps_done_ps = s->end_ps; /* an explicit dependency finished */
        if (--sj->npred == 0)
            issue(p, r, j);
    }
}

static void on_compute_done(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    complete(ctx, (int)(arg >> 32), (uint32_t)arg);
}

/* ---- collectives ---- */

static const coll_system *group_sys(rp *p, int g)
{
    return &p->gsys[g];
}

/* Links of a collective or transfer simulated on the main fabric: count it
 * active on them; note when it starts under a reused collective's window. */
static void hold_links(rp *p, int32_t *count, const fab_link_id *l, guint n, int d)
{
    bool under = false;
    for (guint i = 0; i < n; i++) {
        count[l[i]] += d;
        under |= held(p, l[i]);
    }
    if (d > 0 && under)
        p->out->memo_overlaps++;
}

static void on_coll_done(sim_engine *e, void *ctx, const coll_result *res)
{
    (void)res;
    coll_ctx *c = ctx;
    rp *p = c->p;
    rendezvous *rv = c->rv;
    if (c->held)
        hold_links(p, p->active, c->held->links, c->held->nlinks, -1);
    for (int k = 0; c->nch && k < rv->arrived; k++)
        p->ch_active[rv->who[k]] -= c->nch;
    replay_coll *rc = &g_array_index(p->out->colls, replay_coll, (guint)c->traced_idx);
    rc->sim_ps = sim_engine_now(e) - c->launch_ps;
    for (int k = 0; k < rv->arrived; k++)
        complete(p, rv->who[k], rv->idx[k]);
}

static void fluid_hold(rp *p, fluid *f, int d);

static void on_memo_done(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)arg;
    coll_ctx *c = ctx;
    fluid_hold(c->p, &c->fl, -1);
    coll_result none = {0};
    on_coll_done(e, ctx, &none);
}

static void on_one_rank_done(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)arg;
    coll_result none = {0};
    on_coll_done(e, ctx, &none);
}

/* The bytes a run kept at a link on average over dur_ps: its chunks in
 * service or queue (Little's law: their summed sojourn over the duration)
 * times their mean size. */
static double link_window(const fab_link_stats *st, int64_t dur_ps)
{
    if (dur_ps <= 0 || st->chunks == 0)
        return 0;
    return (double)(st->busy_ps + st->qdelay_ps) / (double)dur_ps * ((double)st->bytes / (double)st->chunks);
}

static gint link_cmp(gconstpointer a, gconstpointer b)
{
    fab_link_id x = *(const fab_link_id *)a, y = *(const fab_link_id *)b;
    return (x > y) - (x < y);
}

static guint memo_hash(gconstpointer v)
{
    const memo_key *k = v;
    guint h = (guint)k->group * 2654435761u;
    h ^= (guint)(k->kind | k->algo << 4 | k->proto << 8 | k->nch << 12) * 40503u;
    h ^= (guint)(k->bytes ^ k->bytes >> 32) * 2246822519u;
    return h ^ (guint)k->root ^ (guint)k->fused << 31;
}

static gboolean memo_equal(gconstpointer a, gconstpointer b)
{
    const memo_key *x = a, *y = b;
    return x->group == y->group && x->kind == y->kind && x->algo == y->algo && x->proto == y->proto &&
           x->nch == y->nch && x->root == y->root && x->fused == y->fused && x->bytes == y->bytes;
}

/* views: by (canonical entry, group) */
static guint view_hash(gconstpointer v)
{
    const memo_ent *m = v;
    return g_direct_hash(m->src) ^ ((guint)m->k.group * 2654435761u);
}

static gboolean view_equal(gconstpointer a, gconstpointer b)
{
    const memo_ent *x = a, *y = b;
    return x->src == y->src && x->k.group == y->k.group;
}

static void memo_free(gpointer v)
{
    memo_ent *m = v;
    g_free(m->links);
    g_free(m->util);
    g_free(m->wq);
    g_free(m->slink);
    g_free(m->stat);
    g_free(m);
}

/* The collective's isolated duration and footprint: simulated once on the
 * iso fabric. NULL after a failure (reported through fail()). */
static const memo_ent *memo_get(rp *p, int g, const coll_request *req)
{
    memo_key k = {.group = p->gcanon[g], .kind = req->kind, .algo = req->algo, .proto = req->proto,
                  .nch = req->nchannels, .root = req->root, .fused = req->fused, .bytes = req->bytes};
    memo_ent *m = g_hash_table_lookup(p->memo, &k);
    if (m)
        return m;
    GArray *links = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    coll_result res;
    GError *e = NULL;
    if (!coll_run_footprint(&p->gsys_iso[k.group], req, &res, links, &e)) {
        g_array_free(links, TRUE);
        fail(p, e);
        return NULL;
    }
    m = g_new0(memo_ent, 1);
    m->k = k;
    m->dur_ps = (int64_t)llround(res.time_us * 1e6);
    /* what it did to each link (servers too), charged to the main fabric at
     * every reuse; every graph link that carried a chunk (adaptive routing
     * strays from the routes) joins the footprint */
    fabric *fi = p->o->iso->fab;
    GArray *sl = g_array_new(FALSE, FALSE, sizeof(fab_link_id)), *ss = g_array_new(FALSE, FALSE, sizeof(fab_link_stats));
    guint nroute = links->len;
    for (fab_link_id l = 0; l < fabric_link_count(fi); l++) {
        const fab_link_stats *st = fabric_link_stats(fi, l);
        if (st->chunks == 0)
            continue;
        bool mem = fabric_link(fi, l)->kind == LINK_MEM;
        if (fabric_link(fi, l)->kind != LINK_SERVER)
            g_array_append_val(links, l);
        if (mem && (l & 1))
            continue; /* both directions share one server: charged once */
        g_array_append_val(sl, l);
        g_array_append_val(ss, *st);
    }
    if (links->len > nroute) { /* merge: sort and drop repeats */
        g_array_sort(links, link_cmp);
        guint u = 0;
        for (guint i = 0; i < links->len; i++)
            if (u == 0 || g_array_index(links, fab_link_id, i) != g_array_index(links, fab_link_id, u - 1))
                g_array_index(links, fab_link_id, u++) = g_array_index(links, fab_link_id, i);
        g_array_set_size(links, u);
    }
    m->nlinks = links->len;
    m->links = (fab_link_id *)g_array_free(links, FALSE);
    m->util = g_new(float, m->nlinks ? m->nlinks : 1);
    m->wq = g_new(float, m->nlinks ? m->nlinks : 1);
    for (guint i = 0; i < m->nlinks; i++) {
        const fab_link_stats *st = fabric_link_stats(fi, m->links[i]);
        m->util[i] = m->dur_ps > 0 ? (float)((double)st->busy_ps / (double)m->dur_ps) : 0;
        m->wq[i] = (float)link_window(st, m->dur_ps);
    }
    m->nstat = sl->len;
    m->slink = (fab_link_id *)g_array_free(sl, FALSE);
    m->stat = (fab_link_stats *)g_array_free(ss, FALSE);
    g_hash_table_insert(p->memo, &m->k, m);
    p->out->memo_runs++;
    p->out->memo_events += res.events;
    if (getenv("CONVEYOR_DEBUG_REUSE"))
        fprintf(stderr, "iso: %s %s/%s ch %d %" G_GUINT64_FORMAT " B over %d ranks (%d nodes): %.1f us, %" G_GUINT64_FORMAT
                " events\n", coll_kind_name(req->kind), coll_algo_name(req->algo), coll_proto_name(req->proto),
                req->nchannels, req->bytes, p->gsys_iso[k.group].nranks, p->gsys_iso[k.group].nnodes, res.time_us,
                res.events);
    return m;
}

/* The entry as group g sees it: its footprint and link statistics carried
 * over to g's links through the shape's labels (links off the probed
 * routes, e.g. spines adaptive routing chose, have no image and are left
 * out). Cached per (entry, group). */
static const memo_ent *memo_view(rp *p, const memo_ent *m, int g)
{
    if (!p->gmap[g])
        return m;
    GHashTable *mp = p->gmap[g];
    memo_ent probe = {.k = m->k, .src = m};
    probe.k.group = g;
    memo_ent *v = g_hash_table_lookup(p->views, &probe);
    if (v)
        return v;
    v = g_new0(memo_ent, 1);
    v->k = probe.k;
    v->src = m;
    v->dur_ps = m->dur_ps;
    v->links = g_new(fab_link_id, m->nlinks ? m->nlinks : 1);
    v->util = g_new(float, m->nlinks ? m->nlinks : 1);
    v->wq = g_new(float, m->nlinks ? m->nlinks : 1);
    v->slink = g_new(fab_link_id, m->nstat ? m->nstat : 1);
    v->stat = g_new(fab_link_stats, m->nstat ? m->nstat : 1);
    for (guint i = 0; i < m->nlinks; i++) {
        gpointer to = g_hash_table_lookup(mp, GUINT_TO_POINTER(m->links[i] + 1));
        if (to) {
            v->links[v->nlinks] = GPOINTER_TO_UINT(to) - 1;
            v->wq[v->nlinks] = m->wq[i];
            v->util[v->nlinks++] = m->util[i];
        }
    }
    for (guint i = 0; i < m->nstat; i++) {
        gpointer to = g_hash_table_lookup(mp, GUINT_TO_POINTER(m->slink[i] + 1));
        if (to) {
            v->slink[v->nstat] = GPOINTER_TO_UINT(to) - 1;
            v->stat[v->nstat++] = m->stat[i];
        }
    }
    g_hash_table_add(p->views, v);
    return v;
}

/* May this instance take the isolated run? LINKS_SIM when a simulated
 * collective runs on one of its links (it then runs on the fabric beside
 * it); else LINKS_FREE, with *shared when reused collectives or sends /
 * receives in flight are on one of its links: it shares them (fluid_retime). */
enum { LINKS_FREE, LINKS_SIM };

static int links_free(const rp *p, const memo_ent *m, bool *shared)
{
    bool sh = false;
    for (guint i = 0; i < m->nlinks; i++) {
        fab_link_id l = m->links[i];
        if (p->active[l] > 0)
            return LINKS_SIM;
        sh |= p->active_p2p[l] > 0 || held(p, l);
    }
    *shared = sh;
    return LINKS_FREE;
}

/* Reused collectives and transfers share their links as a fluid. Where the
 * busy shares (busy time / duration of the isolated runs) of the reused
 * ones holding a link sum past 1, the link is divided as a FIFO divides it
 * among window-limited flows: in proportion to the bytes each keeps there
 * (its chunks in service or queue, from its isolated run: link_window), none
 * getting more than its own busy share (the rest goes to the others); each
 * progresses through its isolated run at its share / its busy share on its
 * most constrained link. So two equal all-reduces that each keep a link 90%
 * busy both take 1.8 times as long, together; a tensor-parallel gather
 * beside a data-parallel all-reduce that keeps far more bytes queued at the
 * same NVLink port gets less than its busy share of it. Every start and end
 * re-times the holders of the links whose demand was or is past 1. Until
 * 2026-12-03 a collective that found no room waited for the holders to end
 * instead, and a transfer ran on the fabric at full speed (the fabric carries
 * none of the reused traffic): a GB200 NVL72 step 13.0% longer than
 * --exact's. A transfer's step latency is run at the same pace (a small
 * overcharge where it is stretched). */
typedef struct {
    fluid *f;
    float u, w; /* its busy share and bytes kept at this link */
} holder;

/* f's share of a link (its capacity 1) among its holders h (f among them),
 * by water-filling in proportion to their bytes kept, each capped at its
 * busy share; u, w: f's own there. */
static double fifo_share(const GArray *h, const fluid *f, double u, double w)
{
    double cap = 1, wsum = 0;
    for (guint k = 0; k < h->len; k++)
        wsum += MAX(g_array_index(h, holder, k).w, 1e-9);
    /* those whose busy share is below their proportional share keep it and leave the rest, until none is */
    guint8 capped[h->len ? h->len : 1];
    memset(capped, 0, sizeof capped);
    for (bool moved = true; moved && wsum > 0;) {
        moved = false;
        for (guint k = 0; k < h->len; k++) {
            const holder *x = &g_array_index(h, holder, k);
            double wx = MAX(x->w, 1e-9);
            if (!capped[k] && x->u <= cap * wx / wsum) {
                capped[k] = 1;
                cap -= x->u;
                wsum -= wx;
                moved = true;
            }
        }
    }
    for (guint k = 0; k < h->len; k++)
        if (g_array_index(h, holder, k).f == f && capped[k])
            return u;
    w = MAX(w, 1e-9);
    return wsum > 0 ? MIN(u, MAX(cap, 0) * w / wsum) : u;
}

static double fluid_stretch(const rp *p, const fluid *f)
{
    double st = 1;
    for (guint i = 0; i < f->nlinks; i++) {
        fab_link_id l = f->links[i];
        if (p->held_util[l] <= 1 + 1e-4 || f->util[i] <= 0)
            continue;
        double s = fifo_share(p->holders[l], f, f->util[i], f->wq[i]);
        st = MAX(st, s > 0 ? f->util[i] / s : 1e6);
    }
    return st;
}

/* Bring f's progress to now and schedule its end at its present rate. */
static void fluid_retime(rp *p, fluid *f)
{
    int64_t now = sim_engine_now(p->eng);
    f->rem_ps = MAX(0, f->rem_ps - (double)(now - f->t0_ps) * f->rate);
    f->t0_ps = now;
    double rate = 1 / fluid_stretch(p, f);
    if (rate == f->rate && f->ev_set)
        return;
    f->rate = rate;
    if (f->ev_set)
        sim_engine_cancel(p->eng, f->ev);
    f->ev = sim_engine_after(p->eng, (int64_t)llround(f->rem_ps / rate), f->done, f->ctx, 0);
    f->ev_set = true;
}

/* Links of f whose demand was or is past 1, before and after f's busy shares
 * joined (d 1) or left (d -1): retime their other holders, once each. */
static void fluid_touch(rp *p, const fluid *f, int d)
{
    uint32_t mark = ++p->mark;
    for (guint i = 0; i < f->nlinks; i++) {
        fab_link_id l = f->links[i];
        double now = p->held_util[l], before = now - d * f->util[i];
        GArray *h = p->holders[l];
        if (!h || MAX(now, before) <= 1 + 1e-4)
            continue;
        for (guint k = 0; k < h->len; k++) {
            fluid *x = g_array_index(h, holder, k).f;
            if (x != f && x->mark != mark) {
                x->mark = mark;
                fluid_retime(p, x);
            }
        }
    }
}

/* f takes (d 1) or gives back (d -1) its links. */
static void fluid_hold(rp *p, fluid *f, int d)
{
    for (guint i = 0; i < f->nlinks; i++) {
        fab_link_id l = f->links[i];
        p->held_util[l] += d * f->util[i];
        if (!p->holders[l])
            p->holders[l] = g_array_new(FALSE, FALSE, sizeof(holder));
        GArray *h = p->holders[l];
        if (d > 0) {
            holder e = {.f = f, .u = f->util[i], .w = f->wq[i]};
            g_array_append_val(h, e);
        } else {
            for (guint k = 0; k < h->len; k++)
                if (g_array_index(h, holder, k).f == f) {
                    g_array_remove_index(h, k); /* keeps the order: the same inputs, the same run */
                    break;
                }
        }
    }
    fluid_touch(p, f, d);
}

/* Start f, `dur_ps` of isolated run over links/util, now. */
static void fluid_start(rp *p, fluid *f, const fab_link_id *links, const float *util, const float *wq, guint n,
                        double dur_ps, sim_handler done, void *ctx)
{
    *f = (fluid){.links = links, .util = util, .wq = wq, .nlinks = n, .rem_ps = dur_ps,
                 .t0_ps = sim_engine_now(p->eng), .done = done, .ctx = ctx};
    fluid_hold(p, f, +1);
    fluid_retime(p, f);
}

/* Start instance c (tuned to c->req, its isolated run m) now: reused, at
 * the pace its links allow (fluid_retime), unless a simulated collective
 * runs there (then on the fabric). */
static void start_iso(rp *p, coll_ctx *c, const memo_ent *m)
{
    bool shared = false;
    int why = links_free(p, m, &shared);
    replay_coll *rc = &g_array_index(p->out->colls, replay_coll, (guint)c->traced_idx);
    if (why == LINKS_FREE) {
        if (shared)
            p->out->memo_overlaps++;
        c->reuse = m;
        fluid_start(p, &c->fl, m->links, m->util, m->wq, m->nlinks, (double)m->dur_ps, on_memo_done, c);
        for (guint i = 0; i < m->nstat; i++)
            fabric_link_account(p->o->sys->fab, m->slink[i], &m->stat[i]);
        rc->reused = true;
        p->out->memo_hits++;
        return;
    }
    c->held = m;
    hold_links(p, p->active, m->links, m->nlinks, +1);
    GError *e = NULL;
    if (!coll_launch(group_sys(p, c->rv->group), &c->req, p->eng, on_coll_done, c, &p->err, &e))
        fail(p, e);
}

static void launch_coll(rp *p, rendezvous *rv)
{
    const trace_op *o = OPR(p, rv->who[0], rv->idx[0]);
    const coll_system *gs = group_sys(p, rv->group);
    int64_t now = sim_engine_now(p->eng);
    for (int k = 0; k < rv->arrived; k++) {
        op_state *s = ST(p, rv->who[k], rv->idx[k]);
        p->out->ranks[rv->who[k]].wait_peers_ps += now - s->issue_ps;
        s->start_ps = now;
    }
    replay_coll rc = {.op = o->coll, .bytes = o->bytes, .group_size = gs->nranks, .group_nodes = gs->nnodes,
                      .group = rv->group, .start_ps = now,
                      .traced_ps = o->dur_ps};
    coll_ctx *c = g_new0(coll_ctx, 1);
    g_ptr_array_add(p->garbage, c);
    *c = (coll_ctx){.p = p, .rv = rv, .launch_ps = now, .traced_idx = p->out->colls->len};
    if (gs->nranks == 1) {
        /* one rank: no NCCL kernel (ncclLaunchOneRank); PyTorch's all_reduce, broadcast and reduce
         * are in place (nothing to do), its all_gather, reduce_scatter, all_to_all, gather and
         * scatter write another tensor: a device-to-device copy (coll_one_rank_us) */
        g_array_append_val(p->out->colls, rc);
        bool in_place = o->coll == COLL_ALL_REDUCE || o->coll == COLL_BROADCAST || o->coll == COLL_REDUCE;
        coll_request one = {.kind = o->coll, .bytes = o->bytes, .fused = rv->fused == rv->arrived};
        sim_engine_after(p->eng, in_place ? 0 : sim_time_from_us(coll_one_rank_us(gs, &one)), on_one_rank_done, c, 0);
        return;
    }
    coll_request req = {.root = o->root};
    GError *e = NULL;
    if (!coll_tune(gs, o->coll, o->bytes, p->o->algo_mask, p->o->proto_mask, &req, NULL)) {
        fail(p, g_error_new(TRACE_ERROR, TRACE_ERROR_VALUE, "%s: no algorithm can run %s of %" G_GUINT64_FORMAT
                            " bytes over %d ranks here (check --algo/--proto)", p->t->source,
                            coll_kind_name(o->coll), o->bytes, gs->nranks));
        return;
    }
    req.root = o->root;
    if (o->coll == COLL_ALLTOALL && o->root) { /* uneven (trace_validate checked the list's length) */
        int nw;
        req.a2a_w = trace_a2a_weights(p->t, o->root, &nw);
        req.a2a_send = o->root < 0;
        req.a2a_matrix = nw > 1 && nw == gs->nranks * gs->nranks;
        rc.uneven = true;
    }
    /* launched in one kernel with the collective before it when every
     * member did so (NCCL launches each rank's group as one kernel) */
    req.fused = rv->fused == rv->arrived;
    rc.fused = req.fused;
    rc.algo = req.algo;
    rc.proto = req.proto;
    rc.nchannels = req.nchannels;
    if (p->ch_active) { /* its thread blocks occupy SMs on every member until it ends (as many as
                         * the trace says where another library runs it: trace_op.sms) */
        c->nch = o->sms > 0 ? o->sms : req.nchannels > 0 ? req.nchannels : 1;
        for (int k = 0; k < rv->arrived; k++)
            p->ch_active[rv->who[k]] += c->nch;
    }
    if (p->o->iso) {
        const memo_ent *m = memo_get(p, rv->group, &req);
        if (!m)
            return;
        m = memo_view(p, m, rv->group);
        g_array_append_val(p->out->colls, rc);
        c->req = req;
        start_iso(p, c, m);
        return;
    }
    g_array_append_val(p->out->colls, rc);
    if (!coll_launch(gs, &req, p->eng, on_coll_done, c, &p->err, &e))
        fail(p, e);
}

/* Whether op i (a collective) is launched in the kernel of a collective before
 * it: fused, after one that launched one. A call NCCL discarded (0 bytes,
 * coll_empty_is_noop) launched nothing, so look past it: behind a group that
 * starts with an empty call, the first real one pays the host launch. */
static bool rides_a_kernel(rp *p, int r, uint32_t i)
{
    for (const trace_op *o = OPR(p, r, i); o->fused;) {
        uint32_t j = ST(p, r, i)->stream_prev;
        if (j == UINT32_MAX || OPR(p, r, j)->kind != TOP_COLL)
            return false;
        const trace_op *q = OPR(p, r, j);
        if (!(q->bytes == 0 && coll_empty_is_noop(q->coll)))
            return true;
        i = j, o = q;
    }
    return false;
}

static void arrive_coll(rp *p, int r, uint32_t i)
{
    const trace_op *o = OPR(p, r, i);
    gint64 key = trace_coll_key(o->group, o->seq);
    rendezvous *rv = g_hash_table_lookup(p->rvs, &key);
    const trace_group *g = g_ptr_array_index(p->t->groups, o->group);
    if (!rv) {
        rv = g_new0(rendezvous, 1);
        rv->group = o->group;
        rv->seq = o->seq;
        rv->who = g_new(int, g->size);
        rv->idx = g_new(uint32_t, g->size);
        rv->first_arrival_ps = sim_engine_now(p->eng);
        g_hash_table_insert(p->rvs, g_memdup2(&key, sizeof key), rv);
    }
    rv->who[rv->arrived] = r;
    rv->idx[rv->arrived] = i;
    rv->fused += rides_a_kernel(p, r, i);
    if (++rv->arrived == g->size)
        launch_coll(p, rv);
}

/* ---- send / receive ---- */

static void on_p2p_done(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    p2p_ctx *c = ctx;
    if (c->reuse) {
        fluid_hold(c->p, &c->fl, -1);
    } else if (c->p->active_p2p) {
        hold_links(c->p, c->p->active_p2p, c->rt->hop, c->rt->nhops, -1);
    }
    complete(c->p, c->src, c->sidx);
    complete(c->p, c->dst, c->ridx);
}

static void p2p_memo_free(gpointer v)
{
    p2p_memo *m = v;
    g_free(m->util);
    g_free(m->wq);
    g_free(m->stat);
    g_free(m);
}

static void on_iso_p2p_done(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)arg;
    *(int64_t *)ctx = sim_engine_now(e);
}

/* The send/receive of `bytes` in `chunk`s from GPU node a to b alone on the
 * iso fabric (same build, so the same node and link ids as the main one),
 * looked up by its route's parameters.  NULL after a failure (fail()). */
static const p2p_memo *p2p_memo_get(rp *p, const fab_route *rt, fab_node_id a, fab_node_id b, uint64_t bytes,
                                    uint64_t chunk)
{
    fabric *fm = p->o->sys->fab, *fi = p->o->iso->fab;
    GByteArray *k = g_byte_array_sized_new(16 + 32 * rt->nhops);
    g_byte_array_append(k, (const guint8 *)&bytes, sizeof bytes);
    g_byte_array_append(k, (const guint8 *)&chunk, sizeof chunk);
    for (uint32_t h = 0; h < rt->nhops; h++) {
        const fab_link_desc *d = fabric_link(fm, rt->hop[h]);
        struct {
            double bw, eff;
            int64_t lat;
            int32_t kind, pad;
        } hp = {d->bw_Bps, d->eff, d->lat_ps, d->kind, 0};
        g_byte_array_append(k, (const guint8 *)&hp, sizeof hp);
    }
    GBytes *key = g_byte_array_free_to_bytes(k);
    p2p_memo *m = g_hash_table_lookup(p->p2p_memo, key);
    if (m) {
        g_bytes_unref(key);
        return m;
    }
    GError *e = NULL;
    const fab_route *ri = fabric_route_p2p(fi, a, b, 0, &e);
    if (!ri) {
        g_bytes_unref(key);
        fail(p, e);
        return NULL;
    }
    sim_engine *eng = sim_engine_new(1);
    fabric_attach(fi, eng);
    int64_t end = -1;
    fabric_transfer_start(fi, ri, FAB_NONE, bytes, chunk, COLL_P2P_WINDOW, 0, on_iso_p2p_done, &end, 0);
    int rc = sim_engine_run(eng);
    m = g_new0(p2p_memo, 1);
    m->nhops = ri->nhops;
    m->dur_ps = end;
    m->reusable = rc == SIM_OK && end >= 0 && ri->nhops == rt->nhops && !fabric_route_staged(fi, ri);
    m->util = g_new0(float, ri->nhops ? ri->nhops : 1);
    m->wq = g_new0(float, ri->nhops ? ri->nhops : 1);
    m->stat = g_new0(fab_link_stats, ri->nhops ? ri->nhops : 1);
    uint64_t carried = 0; /* links that carried a chunk: the route's hops only, or it strayed */
    for (fab_link_id l = 0; m->reusable && l < fabric_link_count(fi); l++)
        carried += fabric_link_stats(fi, l)->chunks > 0;
    m->reusable = m->reusable && carried == ri->nhops;
    for (uint32_t h = 0; m->reusable && h < ri->nhops; h++) {
        const fab_link_stats *st = fabric_link_stats(fi, ri->hop[h]);
        m->reusable = st->chunks > 0;
        m->stat[h] = *st;
        m->util[h] = end > 0 ? (float)((double)st->busy_ps / (double)end) : 0;
        m->wq[h] = (float)link_window(st, end);
    }
    p->out->memo_events += sim_engine_stats(eng)->events;
    sim_engine_free(eng);
    p->out->p2p_memo_runs++;
    g_hash_table_insert(p->p2p_memo, key, m);
    return m;
}

/* Reuse m for a transfer over rt now (done lat + its isolated duration
 * later): no simulated collective or transfer on its hops, and the reused
 * ones' busy shares there fit with its own. */
static bool p2p_reuse(rp *p, p2p_ctx *c, const p2p_memo *m, int64_t lat)
{
    const fab_route *rt = c->rt;
    bool shared = false;
    for (uint32_t h = 0; h < rt->nhops; h++) {
        fab_link_id l = rt->hop[h];
        /* a rank's sends (or receives) launched at the same moment - a
         * group's, a gather's blocks at its root - move their bytes at the
         * same moment, so on a link they share they queue behind each other
         * whatever their busy shares (the counts include this one) */
        if (p->active[l] > 0 || p->active_p2p[l] > 0 ||
            (p->pending_n[l] > 1 && (p->pending_src[c->src] > 1 || p->pending_dst[c->dst] > 1)))
            return false;
        shared |= held(p, l);
    }
    if (shared)
        p->out->memo_overlaps++;
    for (uint32_t h = 0; h < rt->nhops; h++)
        fabric_link_account(p->o->sys->fab, rt->hop[h], &m->stat[h]);
    c->reuse = m;
    p->out->p2p_memo_hits++;
    fluid_start(p, &c->fl, rt->hop, m->util, m->wq, rt->nhops, (double)(lat + m->dur_ps), on_p2p_done, c);
    return true;
}

static void p2p_go(sim_engine *eng, void *ctx, uint64_t arg);
static bool op_on_net(const rp *p, int r, const trace_op *op);

/* What NCCL's launch of a send/receive of some bytes costs and which
 * protocol it takes (the tuner's answer for a sendrecv of those bytes),
 * looked up once per size. */
typedef struct {
    uint64_t bytes; /* the key */
    int64_t setup_ps;
    coll_proto_id proto;
} p2p_launch;

static const p2p_launch *p2p_launch_of(rp *p, uint64_t bytes)
{
    p2p_launch *l = g_hash_table_lookup(p->p2p_tune, &bytes);
    if (!l) {
        coll_request req = {0};
        l = g_new0(p2p_launch, 1);
        l->bytes = bytes;
        l->setup_ps = coll_tune(p->o->sys, COLL_SENDRECV, bytes, 0, 0, &req, NULL)
                          ? sim_time_from_us(coll_setup_us(p->o->sys, &req)) : 0;
        l->proto = l->setup_ps ? req.proto : PROTO_SIMPLE;
        g_hash_table_insert(p->p2p_tune, &l->bytes, l);
    }
    return l;
}

static void post_p2p(rp *p, int r, uint32_t i)
{
    const trace_op *o = OPR(p, r, i);
    bool is_send = o->kind == TOP_SEND;
    int src = is_send ? r : o->peer, dst = is_send ? o->peer : r;
    char key[64];
    g_snprintf(key, sizeof key, "%d>%d#%" G_GINT64_FORMAT "%c", src, dst, o->tag, is_send ? 'r' : 's');
    /* a posted counterpart waits under the key with the other side's letter */
    GQueue *q = g_hash_table_lookup(p->p2p_q, key);
    if (!q || g_queue_is_empty(q)) {
        key[strlen(key) - 1] = is_send ? 's' : 'r';
        q = g_hash_table_lookup(p->p2p_q, key);
        if (!q) {
            q = g_queue_new();
            g_hash_table_insert(p->p2p_q, g_strdup(key), q);
        }
        g_queue_push_tail(q, GUINT_TO_POINTER(i + 1));
        return;
    }
    uint32_t other = GPOINTER_TO_UINT(g_queue_pop_head(q)) - 1;
    p2p_ctx *c = g_new0(p2p_ctx, 1);
    g_ptr_array_add(p->garbage, c);
    *c = (p2p_ctx){.p = p, .src = src, .dst = dst, .sidx = is_send ? i : other, .ridx = is_send ? other : i};
    int64_t now = sim_engine_now(p->eng);
    ST(p, src, c->sidx)->start_ps = ST(p, dst, c->ridx)->start_ps = now;
    /* NCCL launches a send/receive as a kernel (one per group: the group's
     * sends and receives pay it side by side): the host launch and the base
     * latency the collective layer charges a sendrecv of these bytes. A copy
     * (copy engine, userbuffers) pays neither: it starts when both sides are
     * posted and moves its bytes over the route as they are */
    int64_t setup = 0;
    c->proto = PROTO_SIMPLE;
    if (!o->copy) {
        const p2p_launch *launch = p2p_launch_of(p, o->bytes);
        setup = launch->setup_ps;
        c->proto = launch->proto;
    } else if (op_on_net(p, r, o)) {
        fail(p, g_error_new(TRACE_ERROR, TRACE_ERROR_VALUE,
                            "%s: rank %d op %u (%s) copies %s rank %d, in another server (NVLink domain): a copy "
                            "needs the peer's memory mapped over NVLink (--tp-comm-overlap: keep each TP group in "
                            "one NVLink domain; in a trace, send it through NCCL instead)",
                            p->t->source, r, i, o->name ? o->name : "?", is_send ? "to" : "from", o->peer));
        return;
    }
    GError *e = NULL;
    /* NCCL's p2p transport: PXN across servers (fabric_route_p2p) */
    const fab_route *rt = fabric_route_p2p(p->o->sys->fab, p->o->sys->gpu[src], p->o->sys->gpu[dst], 0, &e);
    if (!rt) {
        fail(p, e);
        return;
    }
    c->rt = rt;
    c->chunk = coll_p2p_chunk(p->o->sys->fab, rt);
    /* NCCL's per-step latency of the route's class in the protocol a
     * sendrecv of these bytes takes, as algo_p2p.c charges its pairs
     * (Simple: NVLink 3.4, network 14 us; LL 0.6 and 2.7; less the wire's),
     * and that protocol's bytes on the wire (LL: a flag beside every 4 bytes
     * of data), as algo_p2p.c sends them */
    c->lat = rt->nhops && !o->copy ? coll_route_step_lat_ps(p->o->sys, p->o->sys->fab, rt, ALGO_RING, c->proto) : 0;
    const trace_op *so = OPR(p, src, c->sidx);
    c->wire = (uint64_t)((double)so->bytes / coll_proto_get(c->proto)->wire_eff + 0.5);
    if (p->o->iso && rt->nhops > 0) {
        c->memo = p2p_memo_get(p, rt, p->o->sys->gpu[src], p->o->sys->gpu[dst], c->wire, c->chunk);
        if (!c->memo)
            return;
        for (uint32_t h = 0; c->memo->reusable && h < rt->nhops; h++)
            p->pending_n[rt->hop[h]]++;
        p->pending_src[src]++;
        p->pending_dst[dst]++;
    }
    sim_engine_after(p->eng, setup, p2p_go, c, 0);
}

/* The transfer of a matched send/receive, after its launch: the isolated
 * run's time where its links allow (p2p_reuse), else simulated. */
static void p2p_start(p2p_ctx *c)
{
    rp *p = c->p;
    const fab_route *rt = c->rt;
    const p2p_memo *m = c->memo;
    bool reused = m && m->reusable && p2p_reuse(p, c, m, c->lat);
    for (uint32_t h = 0; m && m->reusable && h < rt->nhops; h++)
        p->pending_n[rt->hop[h]]--;
    if (m) {
        p->pending_src[c->src]--;
        p->pending_dst[c->dst]--;
    }
    if (reused)
        return;
    if (p->active_p2p)
        hold_links(p, p->active_p2p, rt->hop, rt->nhops, +1);
    fabric_transfer_start(p->o->sys->fab, rt, FAB_NONE, c->wire, c->chunk, COLL_P2P_WINDOW, c->lat, on_p2p_done, c, 0);
}

/* NCCL's p2p schedule: a group's sends and receives go round by round, in
 * round i a rank sending to rank + i and receiving from rank - i (enqueue.cc,
 * the peers rotated so that no rank is every sender's first peer at once):
 * the transfers whose launch ends at one moment start in that order, by
 * (dst - src) mod ranks, then source. (Started in the order their sides were
 * posted instead, every rank's flows came in bursts to one peer at a time: a
 * 64-rank all-to-all of 64 MiB as grouped sends took 3.95 ms against the
 * collective's 2.54 ms, its NICs 62% busy.) */
static gint go_order(gconstpointer a, gconstpointer b)
{
    const p2p_ctx *x = *(p2p_ctx *const *)a, *y = *(p2p_ctx *const *)b;
    int n = x->p->t->nranks, dx = ((x->dst - x->src) % n + n) % n, dy = ((y->dst - y->src) % n + n) % n;
    if (dx != dy)
        return dx < dy ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return (x->sidx > y->sidx) - (x->sidx < y->sidx);
}

static void p2p_flush(sim_engine *eng, void *ctx, uint64_t arg)
{
    (void)eng;
    (void)arg;
    rp *p = ctx;
    p->go_flush = false;
    GPtrArray *b = p->go_batch; /* (p2p_start schedules events, adds to no batch) */
    g_ptr_array_sort(b, go_order);
    for (guint i = 0; i < b->len; i++)
        p2p_start(g_ptr_array_index(b, i));
    g_ptr_array_set_size(b, 0);
}

/* A matched send/receive's launch has ended: it starts with the others
 * whose launch ends now, once all of them are known (p2p_flush, scheduled
 * after every event already due now). */
static void p2p_go(sim_engine *eng, void *ctx, uint64_t arg)
{
    (void)arg;
    p2p_ctx *c = ctx;
    rp *p = c->p;
    g_ptr_array_add(p->go_batch, c);
    if (!p->go_flush) {
        p->go_flush = true;
        sim_engine_after(eng, 0, p2p_flush, p, 0);
    }
}

/* ---- issue ---- */

/* A compute op starts: slowed by the collectives of its rank in flight
 * (compute beside communication, docs/traces.md). Called one event after
 * its issue when that is charged, so that a collective whose last member
 * arrives at the same instant (the ranks' events at one time run in turn)
 * counts on every member alike, not only on those handled after it. */
static void on_compute_start(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    rp *p = ctx;
    int r = (int)(arg >> 32);
    uint32_t i = (uint32_t)arg;
    const trace_op *o = OPR(p, r, i);
    double d = (double)(o->dur_ps > 0 ? o->dur_ps : 0) * p->o->compute_scale;
    if (p->ch_active && p->ch_active[r] > 0) {
        int S = p->o->gpu_sms, C = MIN(p->ch_active[r], S - 1);
        double slow = d * ((double)S / (S - C) * (1 + p->o->sm_penalty) - 1);
        p->out->ranks[r].slowed_ps += (int64_t)(slow + 0.5);
        d += slow;
    }
    sim_engine_after(p->eng, (int64_t)(d + 0.5), on_compute_done, p, arg);
}

static void issue(rp *p, int r, uint32_t i)
{
    op_state *s = ST(p, r, i);
    const trace_op *o = OPR(p, r, i);
    int64_t now = sim_engine_now(p->eng);
    s->issue_ps = now;
    if (s->deps_done_ps >= 0 && now > s->deps_done_ps)
        p->out->ranks[r].wait_stream_ps += now - s->deps_done_ps;
    switch (o->kind) {
    case TOP_COMPUTE:
        s->start_ps = now;
        if (p->ch_active) /* after this instant's other events: a collective launched now runs beside it */
            sim_engine_after(p->eng, 0, on_compute_start, p, ((uint64_t)(uint32_t)r << 32) | i);
        else
            on_compute_start(p->eng, p, ((uint64_t)(uint32_t)r << 32) | i);
        break;
    case TOP_COLL:
        if (o->bytes == 0 && coll_empty_is_noop(o->coll)) { /* NCCL discards it: it waits for no peer */
            s->start_ps = now;
            p->out->empty_colls++;
            sim_engine_after(p->eng, 0, on_compute_done, p, ((uint64_t)(uint32_t)r << 32) | i);
        } else {
            arrive_coll(p, r, i);
        }
        break;
    case TOP_SEND:
    case TOP_RECV:
        post_p2p(p, r, i);
        break;
    default:
        g_assert_not_reached();
    }
}

/* ---- set-up ---- */

/* The op before op i on its stream, for every op: stream ids are looked up
 * in a small table (a rank has few streams). */
static void stream_prevs(const trace_rank *tr, uint32_t *prev)
{
    enum { MAXS = 64 };
    int ids[MAXS];
    uint32_t last[MAXS];
    int n = 0;
    GHashTable *more = NULL; /* beyond MAXS streams */
    for (guint i = 0; i < tr->ops->len; i++) {
        int sid = g_array_index(tr->ops, trace_op, i).stream;
        prev[i] = UINT32_MAX;
        int k = 0;
        while (k < n && ids[k] != sid)
            k++;
        if (k < n) {
            prev[i] = last[k];
            last[k] = i;
        } else if (n < MAXS) {
            ids[n] = sid;
            last[n++] = i;
        } else {
            if (!more)
                more = g_hash_table_new(g_direct_hash, g_direct_equal);
            gpointer pv;
            if (g_hash_table_lookup_extended(more, GINT_TO_POINTER(sid), NULL, &pv))
                prev[i] = GPOINTER_TO_UINT(pv);
            g_hash_table_insert(more, GINT_TO_POINTER(sid), GUINT_TO_POINTER(i));
        }
    }
    if (more)
        g_hash_table_destroy(more);
}

/* Per rank: op states with their predecessor counts, and successor lists in
 * one array (count, prefix sums, fill). */
static void build_states(rp *p)
{
    const trace *t = p->t;
    p->st = g_new0(op_state *, t->nranks);
    p->succ = g_new0(uint32_t *, t->nranks);
    if (p->o->gpu_sms > 1)
        p->ch_active = g_new0(int32_t, t->nranks);
    for (int r = 0; r < t->nranks; r++) {
        guint n = t->ranks[r].ops->len;
        op_state *st = p->st[r] = g_new0(op_state, n ? n : 1);
        uint32_t *prev = g_new(uint32_t, n ? n : 1);
        stream_prevs(&t->ranks[r], prev);
        uint64_t edges = 0;
        for (guint i = 0; i < n; i++) {
            const trace_op *o = OPR(p, r, i);
            op_state *s = &st[i];
            s->issue_ps = s->deps_done_ps = s->start_ps = s->end_ps = -1;
            s->stream_prev = prev[i];
            s->succ0 = s->nsucc = 0;
            if (prev[i] != UINT32_MAX) {
                st[prev[i]].nsucc++;
                s->npred++;
                edges++;
            }
            for (guint k = 0; o->deps && k < o->deps->len; k++) {
                uint32_t d = g_array_index(o->deps, uint32_t, k);
                if (d == prev[i])
                    continue;
                st[d].nsucc++;
                s->npred++;
                edges++;
            }
        }
        uint32_t *succ = p->succ[r] = g_new(uint32_t, edges ? edges : 1);
        uint32_t at = 0;
        for (guint i = 0; i < n; i++) {
            st[i].succ0 = at;
            at += st[i].nsucc;
            st[i].nsucc = 0;
        }
        for (guint i = 0; i < n; i++) {
            const trace_op *o = OPR(p, r, i);
            if (prev[i] != UINT32_MAX) {
                op_state *ps = &st[prev[i]];
                succ[ps->succ0 + ps->nsucc++] = i;
            }
            for (guint k = 0; o->deps && k < o->deps->len; k++) {
                uint32_t d = g_array_index(o->deps, uint32_t, k);
                if (d == prev[i])
                    continue;
                succ[st[d].succ0 + st[d].nsucc++] = i;
            }
        }
        g_free(prev);
    }
}

/* A group's shape: the routes between its members (consecutive ranks both
 * ways, and rank 0 to every rank both ways, ECMP flow 0) with every link
 * relabelled by first appearance and described by kind, bandwidth and
 * latency; links to and from spines are described but not labelled. Two groups of the same shape cross isomorphic paths: the same
 * kinds of links, shared in the same pattern (two DP groups on different
 * rails, the TP groups of different servers). Appends each label's link to
 * *labels; NULL if a route is missing. */
static GBytes *group_shape(fabric *f, const coll_system *gs, GArray *labels)
{
    GByteArray *sig = g_byte_array_new();
    GHashTable *lab = g_hash_table_new(g_direct_hash, g_direct_equal);
    int n = gs->nranks;
    int32_t hdr[3] = {n, gs->nnodes, gs->ppn};
    g_byte_array_append(sig, (const guint8 *)hdr, sizeof hdr);
    bool ok = true;
    for (int k = 1; k < n && ok; k++)
        for (int pass = 0; pass < 4 && ok; pass++) {
            int a = pass == 0 ? k - 1 : pass == 1 ? k : pass == 2 ? 0 : k;
            int b = pass == 0 ? k : pass == 1 ? k - 1 : pass == 2 ? k : 0;
            if (pass >= 2 && k == 1)
                continue; /* the same pair as passes 0 and 1 */
            const fab_route *r = fabric_route(f, gs->gpu[a], gs->gpu[b], 0, NULL);
            if (!r) {
                ok = false;
                break;
            }
            uint32_t sep = UINT32_MAX;
            g_byte_array_append(sig, (const guint8 *)&sep, sizeof sep);
            for (uint32_t h = 0; h < r->nhops; h++) {
                fab_link_id l = r->hop[h];
                gpointer v = g_hash_table_lookup(lab, GUINT_TO_POINTER(l + 1));
                uint32_t label;
                const fab_link_desc *d = fabric_link(f, l);
                /* a server (endpoint limit, root-complex transit) has no end nodes (FAB_NONE) */
                if (d->kind != LINK_SERVER && (fabric_node(f, fabric_link_src(f, l))->kind == FAB_NET_SPINE ||
                                               fabric_node(f, fabric_link_dst(f, l))->kind == FAB_NET_SPINE)) {
                    /* which spine ECMP picked for this probe is not part of
                     * the shape (adaptive routing spreads over all of them) */
                    label = UINT32_MAX;
                } else if (v) {
                    label = GPOINTER_TO_UINT(v) - 1;
                } else {
                    label = labels->len;
                    g_array_append_val(labels, l);
                    g_hash_table_insert(lab, GUINT_TO_POINTER(l + 1), GUINT_TO_POINTER(label + 1));
                }
                struct {
                    uint32_t label, kind;
                    double bw;
                    int64_t lat;
                } e = {label, (uint32_t)d->kind, d->bw_Bps * d->eff, d->lat_ps};
                g_byte_array_append(sig, (const guint8 *)&e, sizeof e);
            }
        }
    g_hash_table_destroy(lab);
    if (!ok) {
        g_byte_array_free(sig, TRUE);
        return NULL;
    }
    return g_byte_array_free_to_bytes(sig);
}

/* The collective layer's view of a group: its GPUs; nodes as the cluster's
 * (rank / ppn); NVLS only when the group sits in one node. */
static void build_groups(rp *p)
{
    const coll_system *sys = p->o->sys;
    guint ng = p->t->groups->len;
    p->gsys = g_new0(coll_system, ng ? ng : 1);
    p->gsys_gpu = g_new0(int *, ng ? ng : 1);
    for (guint g = 0; g < ng; g++) {
        const trace_group *tg = g_ptr_array_index(p->t->groups, g);
        fab_node_id *gpu = g_new(fab_node_id, tg->size);
        /* nodes: runs of consecutive ranks on one server; uneven when the runs differ */
        int nodes = 0, last = -1, run = 0, first_run = -1;
        bool uneven = false;
        for (int k = 0; k < tg->size; k++) {
            gpu[k] = sys->gpu[tg->ranks[k]];
            int node = tg->ranks[k] / sys->ppn;
            if (node != last) {
                if (nodes > 0 && first_run < 0)
                    first_run = run;
                else if (nodes > 0 && run != first_run)
                    uneven = true;
                nodes++;
                run = 0;
            }
            run++;
            last = node;
        }
        if (first_run >= 0 && run != first_run)
            uneven = true;
        coll_system *gs = &p->gsys[g];
        *gs = *sys;
        gs->gpu = gpu;
        gs->nranks = tg->size;
        gs->nnodes = nodes;
        gs->ppn = (tg->size + nodes - 1) / nodes;
        gs->uneven = uneven || gs->ppn * nodes != tg->size;
        gs->nvls = sys->nvls; /* NVLS on one server, NVLSTree across several (supports() and the tuner decide) */
        p->gsys_gpu[g] = (int *)gpu;
    }
    if (!p->o->iso)
        return;
    /* the iso copies, and one canonical group per shape (group_shape) */
    const coll_system *iso = p->o->iso;
    p->gsys_iso = g_new0(coll_system, ng ? ng : 1);
    p->gcanon = g_new0(int, ng ? ng : 1);
    p->gmap = g_new0(GHashTable *, ng ? ng : 1);
    GArray **labels = g_new0(GArray *, ng ? ng : 1);
    GHashTable *seen = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
    for (guint g = 0; g < ng; g++) {
        const trace_group *tg = g_ptr_array_index(p->t->groups, g);
        coll_system *gi = &p->gsys_iso[g];
        *gi = p->gsys[g];
        gi->fab = iso->fab;
        fab_node_id *gpu = g_new(fab_node_id, tg->size);
        for (int k = 0; k < tg->size; k++)
            gpu[k] = iso->gpu[tg->ranks[k]];
        gi->gpu = gpu;
        g_ptr_array_add(p->garbage, gpu);
        labels[g] = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
        GBytes *key = group_shape(iso->fab, gi, labels[g]);
        if (!key) { /* a member unreachable: its own group (the launch reports the error) */
            p->gcanon[g] = (int)g;
            continue;
        }
        gpointer first;
        if (g_hash_table_lookup_extended(seen, key, NULL, &first)) {
            int c = GPOINTER_TO_INT(first);
            p->gcanon[g] = c;
            g_bytes_unref(key);
            /* canonical link -> this group's link, label by label */
            p->gmap[g] = g_hash_table_new(g_direct_hash, g_direct_equal);
            for (guint i = 0; i < labels[g]->len; i++)
                g_hash_table_insert(p->gmap[g], GUINT_TO_POINTER(g_array_index(labels[c], fab_link_id, i) + 1),
                                    GUINT_TO_POINTER(g_array_index(labels[g], fab_link_id, i) + 1));
        } else {
            p->gcanon[g] = (int)g;
            g_hash_table_insert(seen, key, GINT_TO_POINTER(g));
        }
    }
    for (guint g = 0; g < ng; g++)
        if (labels[g])
            g_array_free(labels[g], TRUE);
    g_free(labels);
    g_hash_table_destroy(seen);
    uint32_t nl = fabric_link_count(sys->fab);
    p->active = g_new0(int32_t, nl ? nl : 1);
    p->active_p2p = g_new0(int32_t, nl ? nl : 1);
    p->held_util = g_new0(double, nl ? nl : 1);
    p->holders = g_new0(GArray *, nl ? nl : 1);
    p->nlinks = nl;
    p->pending_n = g_new0(int32_t, nl ? nl : 1);
    p->pending_src = g_new0(int32_t, p->t->nranks);
    p->pending_dst = g_new0(int32_t, p->t->nranks);
    p->memo = g_hash_table_new_full(memo_hash, memo_equal, NULL, memo_free);
    p->views = g_hash_table_new_full(view_hash, view_equal, memo_free, NULL);
    p->p2p_memo = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, p2p_memo_free);
}

static void rv_free(gpointer v)
{
    rendezvous *rv = v;
    g_free(rv->who);
    g_free(rv->idx);
    g_free(rv);
}

/* ---- results ---- */

typedef struct {
    int64_t a, b;
} span;

static int span_cmp(const void *x, const void *y)
{
    const span *p = x, *q = y;
    return (p->a > q->a) - (p->a < q->a);
}

/* Sort and merge into disjoint spans (in place); returns the new count. */
static guint span_union(GArray *v)
{
    if (v->len == 0)
        return 0;
    g_array_sort(v, span_cmp);
    guint k = 0;
    for (guint i = 1; i < v->len; i++) {
        span *cur = &g_array_index(v, span, k), *nx = &g_array_index(v, span, i);
        if (nx->a <= cur->b) {
            if (nx->b > cur->b)
                cur->b = nx->b;
        } else {
            g_array_index(v, span, ++k) = *nx;
        }
    }
    g_array_set_size(v, k + 1);
    return k + 1;
}

static int64_t span_len(const GArray *v)
{
    int64_t s = 0;
    for (guint i = 0; i < v->len; i++)
        s += g_array_index(v, span, i).b - g_array_index(v, span, i).a;
    return s;
}

static int64_t span_overlap(const GArray *x, const GArray *y)
{
    int64_t s = 0;
    guint i = 0, j = 0;
    while (i < x->len && j < y->len) {
        const span *p = &g_array_index(x, span, i), *q = &g_array_index(y, span, j);
        int64_t a = p->a > q->a ? p->a : q->a, b = p->b < q->b ? p->b : q->b;
        if (b > a)
            s += b - a;
        if (p->b < q->b)
            i++;
        else
            j++;
    }
    return s;
}

/* a minus b (both sorted and disjoint) into out, sorted and disjoint */
static void span_minus(const GArray *a, const GArray *b, GArray *out)
{
    guint j = 0;
    for (guint i = 0; i < a->len; i++) {
        span cur = g_array_index(a, span, i);
        while (j < b->len && g_array_index(b, span, j).b <= cur.a)
            j++;
        for (guint k = j; k < b->len && g_array_index(b, span, k).a < cur.b; k++) {
            const span *q = &g_array_index(b, span, k);
            if (q->a > cur.a) {
                span piece = {cur.a, q->a};
                g_array_append_val(out, piece);
            }
            if (q->b > cur.a)
                cur.a = q->b;
        }
        if (cur.b > cur.a)
            g_array_append_val(out, cur);
    }
}

/* Rank r's exposed stretches into the result (opts.record): comm minus
 * compute, split by whether an op between servers was in flight. */
static void rank_exposed_spans(rp *p, int r, const GArray *comp, const GArray *comm, const GArray *out)
{
    GArray *all = g_array_new(FALSE, FALSE, sizeof(span)), *net = g_array_new(FALSE, FALSE, sizeof(span)),
           *loc = g_array_new(FALSE, FALSE, sizeof(span));
    span_minus(comm, comp, all);
    span_minus(out, comp, net);
    span_minus(all, net, loc);
    guint i = 0, j = 0; /* merge the two by time */
    while (i < net->len || j < loc->len) {
        bool take_net = j >= loc->len || (i < net->len && g_array_index(net, span, i).a < g_array_index(loc, span, j).a);
        const span *s = take_net ? &g_array_index(net, span, i++) : &g_array_index(loc, span, j++);
        replay_exposed_span e = {.rank = r, .net = take_net, .start_ps = s->a, .end_ps = s->b};
        g_array_append_val(p->out->exposed_spans, e);
    }
    g_array_free(all, TRUE);
    g_array_free(net, TRUE);
    g_array_free(loc, TRUE);
}

/* Whether rank r's communication op leaves its server (its NVLink domain,
 * sys->ppn GPUs: an NVL72 rack is one): a collective whose group spans
 * several, a send or receive whose peer is on another. */
static bool op_on_net(const rp *p, int r, const trace_op *op)
{
    int ppn = p->o->sys->ppn > 0 ? p->o->sys->ppn : 1;
    if (op->kind == TOP_COLL)
        return p->gsys[op->group].nnodes > 1;
    return (op->kind == TOP_SEND || op->kind == TOP_RECV) && op->peer / ppn != r / ppn;
}

/* A boundary of rank r's timeline for by_name_rank: compute starting or
 * ending, or communication op `op` doing so. */
typedef struct {
    int64_t t;
    uint32_t op; /* EDGE_COMPUTE: the compute spans */
    int d;       /* +1 start, -1 end */
} edge;
#define EDGE_COMPUTE UINT32_MAX

/* by time, then ends before starts, then op: a total order, so the ops in
 * flight keep one order (and the remainders of a shared stretch one owner)
 * whatever the sort */
static int edge_cmp(const void *x, const void *y)
{
    const edge *a = x, *b = y;
    if (a->t != b->t)
        return (a->t > b->t) - (a->t < b->t);
    if (a->d != b->d)
        return a->d - b->d;
    return (a->op > b->op) - (a->op < b->op);
}

/* op e->op joins (starts) or leaves (ends) the ops in flight */
static void edge_apply(GArray *live, const edge *e)
{
    if (e->d > 0) {
        g_array_append_val(live, e->op);
        return;
    }
    for (guint j = 0; j < live->len; j++)
        if (g_array_index(live, uint32_t, j) == e->op) {
            g_array_remove_index_fast(live, j);
            break;
        }
}

/* dt of rank r's time, shared equally among the ops in `live` (whole ps,
 * the remainder to the first ones, so the total stays exact), into table
 * (name -> replay_exposed); net: count it as the network's too. */
static void share_stretch(rp *p, int r, GHashTable *table, const GArray *live, int64_t dt, bool net)
{
    for (guint j = 0; j < live->len; j++) {
        int64_t share = dt / live->len + ((int64_t)j < dt % (int64_t)live->len);
        const char *name = OPR(p, r, g_array_index(live, uint32_t, j))->name;
        replay_exposed *x = g_hash_table_lookup(table, name);
        if (!x) {
            x = g_new0(replay_exposed, 1);
            x->name = name;
            g_hash_table_insert(table, (gpointer)name, x);
        }
        x->ps += share;
        if (net)
            x->net_ps += share;
    }
}

/* Share each stretch of rank r's exposed time (no compute, communication in
 * flight) equally among the ops in flight then, into p->by_name. comp: the
 * rank's compute spans, merged. */
static void by_name_rank(rp *p, int r, const GArray *comp)
{
    GArray *ev = g_array_new(FALSE, FALSE, sizeof(edge));
    for (guint i = 0; i < comp->len; i++) {
        const span *c = &g_array_index(comp, span, i);
        edge a = {c->a, EDGE_COMPUTE, +1}, b = {c->b, EDGE_COMPUTE, -1};
        g_array_append_val(ev, a);
        g_array_append_val(ev, b);
    }
    for (guint i = 0; i < p->t->ranks[r].ops->len; i++) {
        const op_state *s = ST(p, r, i);
        if (!s->done || OPR(p, r, i)->kind == TOP_COMPUTE || s->end_ps <= s->start_ps)
            continue;
        edge a = {s->start_ps, i, +1}, b = {s->end_ps, i, -1};
        g_array_append_val(ev, a);
        g_array_append_val(ev, b);
    }
    g_array_sort(ev, edge_cmp);
    GArray *live = g_array_new(FALSE, FALSE, sizeof(uint32_t)); /* comm ops in flight */
    int computing = 0;
    for (guint k = 0; k < ev->len;) {
        int64_t t = g_array_index(ev, edge, k).t;
        for (; k < ev->len && g_array_index(ev, edge, k).t == t; k++) {
            const edge *e = &g_array_index(ev, edge, k);
            if (e->op == EDGE_COMPUTE)
                computing += e->d;
            else
                edge_apply(live, e);
        }
        if (k == ev->len || computing > 0 || live->len == 0)
            continue;
        int64_t dt = g_array_index(ev, edge, k).t - t;
        bool net = false;
        for (guint j = 0; j < live->len && !net; j++)
            net = op_on_net(p, r, OPR(p, r, g_array_index(live, uint32_t, j)));
        share_stretch(p, r, p->by_name, live, dt, net);
    }
    g_array_free(live, TRUE);
    g_array_free(ev, TRUE);
}

/* Share each stretch of rank r's compute time equally among the compute
 * ops running then, into p->compute_by_name: a rank's names add up to its
 * compute_ps (the union of its compute spans). */
static void compute_by_name_rank(rp *p, int r)
{
    GArray *ev = g_array_new(FALSE, FALSE, sizeof(edge));
    for (guint i = 0; i < p->t->ranks[r].ops->len; i++) {
        const op_state *s = ST(p, r, i);
        if (!s->done || OPR(p, r, i)->kind != TOP_COMPUTE || s->end_ps <= s->start_ps)
            continue;
        edge a = {s->start_ps, i, +1}, b = {s->end_ps, i, -1};
        g_array_append_val(ev, a);
        g_array_append_val(ev, b);
    }
    g_array_sort(ev, edge_cmp);
    GArray *live = g_array_new(FALSE, FALSE, sizeof(uint32_t)); /* compute ops running */
    for (guint k = 0; k < ev->len;) {
        int64_t t = g_array_index(ev, edge, k).t;
        for (; k < ev->len && g_array_index(ev, edge, k).t == t; k++)
            edge_apply(live, &g_array_index(ev, edge, k));
        if (k < ev->len && live->len > 0)
            share_stretch(p, r, p->compute_by_name, live, g_array_index(ev, edge, k).t - t, false);
    }
    g_array_free(live, TRUE);
    g_array_free(ev, TRUE);
}

static int exposed_cmp(const void *x, const void *y)
{
    const replay_exposed *a = x, *b = y;
    if (a->ps != b->ps)
        return (a->ps < b->ps) - (a->ps > b->ps);
    return g_strcmp0(a->name, b->name);
}

/* A name -> replay_exposed table as an array, largest first; the table is freed. */
static GArray *named_times(GHashTable *table)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(replay_exposed));
    GHashTableIter it;
    gpointer v;
    g_hash_table_iter_init(&it, table);
    while (g_hash_table_iter_next(&it, NULL, &v))
        g_array_append_val(a, *(replay_exposed *)v);
    g_array_sort(a, exposed_cmp);
    g_hash_table_destroy(table);
    return a;
}

static void rank_stats(rp *p, int r, int64_t makespan)
{
    GArray *comp = g_array_new(FALSE, FALSE, sizeof(span)), *comm = g_array_new(FALSE, FALSE, sizeof(span)),
           *out = g_array_new(FALSE, FALSE, sizeof(span));
    replay_rank *rr = &p->out->ranks[r];
    for (guint i = 0; i < p->t->ranks[r].ops->len; i++) {
        const op_state *s = ST(p, r, i);
        if (!s->done)
            continue;
        const trace_op *op = OPR(p, r, i);
        span sp = {s->start_ps, s->end_ps};
        g_array_append_val(op->kind == TOP_COMPUTE ? comp : comm, sp);
        if (op->kind != TOP_COMPUTE && op_on_net(p, r, op))
            g_array_append_val(out, sp);
        if (s->end_ps > rr->end_ps)
            rr->end_ps = s->end_ps;
    }
    span_union(comp);
    span_union(comm);
    span_union(out);
    int64_t c = span_len(comp), m = span_len(comm), both = span_overlap(comp, comm);
    rr->compute_ps = c;
    rr->comm_ps = m;
    rr->exposed_comm_ps = m - both;
    rr->exposed_net_ps = span_len(out) - span_overlap(comp, out);
    rr->idle_ps = makespan - (c + m - both);
    if (p->by_name) {
        by_name_rank(p, r, comp);
        compute_by_name_rank(p, r);
    }
    if (p->o->record)
        rank_exposed_spans(p, r, comp, comm, out);
    g_array_free(comp, TRUE);
    g_array_free(comm, TRUE);
    g_array_free(out, TRUE);
}

/* Ranks left waiting: name each one's blocking operation. */
static GError *deadlock_error(rp *p)
{
    GString *msg = g_string_new(NULL);
    g_string_printf(msg, "%s: replay stopped with operations that can never run (a deadlock in the trace):",
                    p->t->source);
    int shown = 0;
    for (int r = 0; r < p->t->nranks && shown < 8; r++) {
        for (guint i = 0; i < p->t->ranks[r].ops->len; i++) {
            const op_state *s = ST(p, r, i);
            if (s->done || s->issue_ps < 0)
                continue;
            const trace_op *o = OPR(p, r, i);
            if (o->kind == TOP_COLL) {
                const trace_group *g = g_ptr_array_index(p->t->groups, o->group);
                gint64 key = trace_coll_key(o->group, o->seq);
                rendezvous *rv = g_hash_table_lookup(p->rvs, &key);
                g_string_append_printf(msg, "\n  rank %d op %u: %s #%" G_GINT64_FORMAT " of group '%s' waits for "
                                       "%d of its %d ranks, which never reach it", r, i, coll_kind_name(o->coll),
                                       o->seq, g->name, g->size - (rv ? rv->arrived : 0), g->size);
            } else if (o->kind == TOP_SEND || o->kind == TOP_RECV) {
                g_string_append_printf(msg, "\n  rank %d op %u: %s %s rank %d (tag %" G_GINT64_FORMAT
                                       ") waits for a matching %s that rank %d never posts",
                                       r, i, trace_op_kind_name(o->kind), o->kind == TOP_SEND ? "to" : "from",
                                       o->peer, o->tag, o->kind == TOP_SEND ? "receive" : "send", o->peer);
            } else {
                continue;
            }
            shown++;
            break;
        }
    }
    if (!shown)
        g_string_append(msg, "\n  (no operation is waiting on a peer: check the dependencies)");
    GError *e = g_error_new_literal(TRACE_ERROR, TRACE_ERROR_DEADLOCK, msg->str);
    g_string_free(msg, TRUE);
    return e;
}

static void on_start(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    rp *p = ctx;
    for (int r = 0; r < p->t->nranks; r++)
        for (guint i = 0; i < p->t->ranks[r].ops->len; i++)
            if (ST(p, r, i)->npred == 0 && ST(p, r, i)->issue_ps < 0)
                issue(p, r, i);
}

static void rp_free(rp *p)
{
    for (int r = 0; p->st && r < p->t->nranks; r++) {
        g_free(p->st[r]);
        g_free(p->succ[r]);
    }
    g_free(p->st);
    g_free(p->succ);
    for (guint g = 0; p->gsys_gpu && g < p->t->groups->len; g++)
        g_free(p->gsys_gpu[g]);
    g_free(p->gsys_gpu);
    g_free(p->gsys);
    g_free(p->gsys_iso);
    g_free(p->gcanon);
    for (guint g = 0; p->gmap && g < p->t->groups->len; g++)
        if (p->gmap[g])
            g_hash_table_destroy(p->gmap[g]);
    g_free(p->gmap);
    g_free(p->active);
    g_free(p->active_p2p);
    g_free(p->held_util);
    for (uint32_t l = 0; p->holders && l < p->nlinks; l++)
        if (p->holders[l])
            g_array_free(p->holders[l], TRUE);
    g_free(p->holders);
    g_free(p->pending_n);
    g_free(p->pending_src);
    g_free(p->pending_dst);
    if (p->go_batch)
        g_ptr_array_unref(p->go_batch);
    if (p->p2p_tune)
        g_hash_table_destroy(p->p2p_tune);
    g_free(p->ch_active);
    if (p->memo)
        g_hash_table_destroy(p->memo);
    if (p->views)
        g_hash_table_destroy(p->views);
    if (p->p2p_memo)
        g_hash_table_destroy(p->p2p_memo);
    if (p->rvs)
        g_hash_table_destroy(p->rvs);
    if (p->p2p_q)
        g_hash_table_destroy(p->p2p_q);
    g_ptr_array_unref(p->garbage);
}

bool replay_run(const trace *t, const replay_opts *o, replay_result *out, GError **err)
{
    const coll_system *sys = o->sys;
    memset(out, 0, sizeof *out);
    if (o->iso && (o->iso->nranks != sys->nranks ||
                   fabric_link_count(o->iso->fab) != fabric_link_count(sys->fab))) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE, "%s: the isolated copy of the cluster differs from it",
                    t->source);
        return false;
    }
    if (t->nranks != sys->nranks) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE,
                    "%s: the trace has %d ranks but the system has %d GPUs (use --nodes/--gpus, or --ranks to "
                    "replicate a one-rank trace)", t->source, t->nranks, sys->nranks);
        return false;
    }
    /* a rank's trace of a larger job keeps the job's groups (Kineto's
     * world_size): without --ranks they name ranks the system lacks (an
     * assertion in the router aborted on the shipped one-rank samples) */
    if (!trace_check_whole(t, err))
        return false;
    for (int r = 0; r < t->nranks; r++) /* the rendezvous keys on a collective's sequence number */
        for (guint i = 0; i < t->ranks[r].ops->len; i++) {
            const trace_op *op = &g_array_index(t->ranks[r].ops, trace_op, i);
            if (op->kind == TOP_COLL && op->seq < 0) {
                g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE,
                            "%s: rank %d op %u: a collective without a sequence number (the trace was not "
                            "validated: trace_validate)", t->source, r, i);
                return false;
            }
        }
    out->nranks = t->nranks;
    out->ranks = g_new0(replay_rank, t->nranks);
    out->colls = g_array_new(FALSE, FALSE, sizeof(replay_coll));
    out->intervals = g_array_new(FALSE, FALSE, sizeof(replay_interval));
    out->exposed_spans = g_array_new(FALSE, FALSE, sizeof(replay_exposed_span));
    rp p = {.t = t, .o = o, .out = out, .garbage = g_ptr_array_new_with_free_func(g_free),
            .go_batch = g_ptr_array_new(),
            .p2p_tune = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free)};
    p.rvs = g_hash_table_new_full(sim_int64_hash, g_int64_equal, g_free, rv_free);
    p.p2p_q = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_queue_free);
    build_states(&p);
    build_groups(&p);
    p.eng = sim_engine_new(1);
    if (o->progress) {
        for (int r = 0; r < t->nranks; r++)
            p.ops_total += t->ranks[r].ops->len;
        sim_engine_set_progress(p.eng, on_progress, &p);
    }
    fabric_set_recording(sys->fab, o->record);
    fabric_attach(sys->fab, p.eng);
    sim_engine_at(p.eng, 0, on_start, &p, 0);
    int rc = sim_engine_run(p.eng);
    out->events = sim_engine_stats(p.eng)->events;
    out->wall_s = sim_engine_stats(p.eng)->wall_s;
    bool ok = true;
    if (p.err) {
        g_propagate_error(err, p.err);
        ok = false;
    } else if (rc != SIM_OK) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE, "%s: the simulation stopped: %s", t->source,
                    sim_engine_strerror(rc));
        ok = false;
    } else {
        for (int r = 0; r < t->nranks && ok; r++)
            for (guint i = 0; i < t->ranks[r].ops->len && ok; i++)
                if (!ST(&p, r, i)->done) {
                    g_propagate_error(err, deadlock_error(&p));
                    ok = false;
                }
    }
    if (ok) {
        out->end_ps = sim_engine_now(p.eng);
        if (o->by_name) {
            p.by_name = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
            p.compute_by_name = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        }
        for (int r = 0; r < t->nranks; r++)
            rank_stats(&p, r, out->end_ps);
        if (p.by_name) {
            out->exposed_by_name = named_times(p.by_name);
            out->compute_by_name = named_times(p.compute_by_name);
            p.by_name = p.compute_by_name = NULL;
        }
        for (fab_link_id l = 0; l < fabric_link_count(sys->fab); l++)
            if (fabric_link(sys->fab, l)->kind != LINK_SERVER)
                out->link_qdelay_ps = sim_time_sat_add(out->link_qdelay_ps, fabric_link_stats(sys->fab, l)->qdelay_ps);
    }
    if (getenv("CONVEYOR_DEBUG_REUSE"))
        fprintf(stderr, "reuse: runs %" G_GUINT64_FORMAT " events %" G_GUINT64_FORMAT " hits %" G_GUINT64_FORMAT
                " overlaps %" G_GUINT64_FORMAT " colls %u p2p runs %" G_GUINT64_FORMAT " hits %" G_GUINT64_FORMAT
                " main events %" G_GUINT64_FORMAT "\n", out->memo_runs, out->memo_events, out->memo_hits,
                out->memo_overlaps, out->colls->len, out->p2p_memo_runs, out->p2p_memo_hits, out->events);
    sim_engine_free(p.eng);
    rp_free(&p);
    if (!ok)
        replay_result_clear(out);
    return ok;
}

void replay_result_clear(replay_result *r)
{
    g_free(r->ranks);
    if (r->colls)
        g_array_free(r->colls, TRUE);
    if (r->intervals)
        g_array_free(r->intervals, TRUE);
    if (r->exposed_spans)
        g_array_free(r->exposed_spans, TRUE);
    if (r->exposed_by_name)
        g_array_free(r->exposed_by_name, TRUE);
    if (r->compute_by_name)
        g_array_free(r->compute_by_name, TRUE);
    memset(r, 0, sizeof *r);
}

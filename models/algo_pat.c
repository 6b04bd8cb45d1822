/* models/algo_pat.c - PAT (Parallel Aggregated Trees): all_gather and
 * reduce_scatter in log2(n) steps, for one GPU per node (NCCL enables it
 * only then).
 *
 * All_gather is Bruck-style: at step k (distance d = 2^k) every rank sends
 * the min(d, n - d) blocks it holds to rank r - d and receives as many from
 * r + d; after ceil(log2 n) steps everyone has all n blocks, having sent
 * n - 1 blocks in total (bandwidth-optimal) in log steps (latency-optimal).
 * Reduce_scatter runs the steps in the opposite order (PAT's reversed
 * dimensions): the large exchanges first, partial sums shrinking. A step
 * starts when the previous step's data has arrived; each channel runs the
 * schedule on its share; each send pays PAT's per-step hwLat.
 * Time ~ ceil(log2 n) x latency + (n-1)/n x S / link rate.
 */
#include "coll_priv.h"

#include <math.h>

typedef struct pat_chan pat_chan;

typedef struct {
    pat_chan *c;
    int rank;
    int step;          /* next step to send */
    int recvd;         /* steps whose data arrived from the partner */
    bool busy, done;
} pat_unit;

struct pat_chan {
    coll_exec *x;
    int n, nsteps;
    uint64_t block;    /* bytes of one rank's block on this channel */
    pat_unit *u;
};

/* distance of step s in sending order */
static int dist_of(const pat_chan *c, int s)
{
    int k = c->x->req->kind == COLL_REDUCE_SCATTER ? c->nsteps - 1 - s : s;
    return 1 << k;
}

static uint64_t step_bytes(const pat_chan *c, int s)
{
    int d = dist_of(c, s), blocks = d < c->n - d ? d : c->n - d;
    return (uint64_t)blocks * c->block;
}

static void pat_try(pat_unit *u);

static void check_done(pat_unit *u)
{
    if (!u->done && u->step == u->c->nsteps && !u->busy && u->recvd == u->c->nsteps) {
        u->done = true;
        coll_exec_unit_done(u->c->x);
    }
}

static void on_sent(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    pat_unit *u = ctx, *v = &u->c->u[((u->rank - dist_of(u->c, u->step - 1)) % u->c->n + u->c->n) % u->c->n];
    u->busy = false;
    v->recvd++;
    pat_try(v);
    pat_try(u);
    check_done(v);
    check_done(u);
}

static void pat_try(pat_unit *u)
{
    pat_chan *c = u->c;
    coll_exec *x = c->x;
    /* step s needs the data of step s-1 (what it forwards or reduces) */
    if (u->busy || u->step >= c->nsteps || u->recvd < u->step)
        return;
    int s = u->step++, to = ((u->rank - dist_of(c, s)) % c->n + c->n) % c->n;
    const fab_route *r = coll_exec_route(x, x->sys->gpu[u->rank], x->sys->gpu[to], (uint32_t)s);
    if (!r)
        return;
    u->busy = true;
    uint64_t wire = (uint64_t)((double)step_bytes(c, s) / x->proto->wire_eff + 0.5);
    sim_time now = sim_engine_now(x->eng);
    int64_t delay = coll_exec_step_lat_ps(x, r, ALGO_PAT) + (now < x->start ? x->start - now : 0);
    fabric_transfer_start(x->fab, r, FAB_NONE, wire, coll_exec_fabric_chunk(wire), 8, delay, on_sent, u, 0);
}

static bool pat_supports(const coll_system *sys, coll_kind kind, const char **why)
{
    if (sys->uneven) {
        *why = "servers hold different numbers of the ranks (Ring runs those)";
        return false;
    }
    if (kind != COLL_ALL_GATHER && kind != COLL_REDUCE_SCATTER) {
        *why = "PAT runs all_gather and reduce_scatter";
        return false;
    }
    if (sys->ppn != 1) {
        *why = "NCCL enables PAT only with one GPU per node";
        return false;
    }
    return true;
}

static void pat_start(coll_exec *x)
{
    const coll_system *sys = x->sys;
    int n = sys->nranks, nch = x->req->nchannels > 0 ? x->req->nchannels : 1;
    uint64_t per_rank = (x->req->bytes + (uint64_t)n - 1) / (uint64_t)n; /* one rank's block */
    for (int ci = 0; ci < nch; ci++) {
        pat_chan *c = g_new0(pat_chan, 1);
        g_ptr_array_add(x->garbage, c);
        c->x = x;
        c->n = n;
        c->nsteps = (int)ceil(log2((double)n));
        c->block = coll_share(per_rank, nch, ci, x->proto->grain);
        if (!c->block)
            continue;
        c->u = g_new0(pat_unit, n);
        g_ptr_array_add(x->garbage, c->u);
        for (int r = 0; r < n; r++) {
            c->u[r] = (pat_unit){.c = c, .rank = r};
            x->units_left++;
        }
        for (int r = 0; r < n; r++)
            pat_try(&c->u[r]);
    }
}

const coll_algo coll_algo_pat = {
    .name = "pat",
    .summary = "all_gather/reduce_scatter in ceil(log2 n) exchanges at distances 2^k (reversed for "
               "reduce_scatter), n-1 blocks sent per rank; one GPU per node",
    .supports = pat_supports,
    .start = pat_start,
};

/* models/algo_collnet.c - CollNet Direct all-reduce: the network switches
 * reduce (InfiniBand SHARP), NVLink inside the nodes.
 *
 * Every local GPU is a head for 1/ppn of each chunk (its rail). Per channel
 * and chunk: each GPU sends the other heads their slices over NVLink
 * (reduce-scatter inside the node); a head with all ppn contributions sends
 * its node's partial slice up through its NIC to the rail's aggregation
 * switch (the common leaf of the rail, else a spine: fabric_sharp_root),
 * which reduces the slices of all nodes and multicasts the sum back down to
 * every node's head of that rail; each head then sends the result to the
 * other GPUs of its node (all-gather). Per GPU: 2 S(ppn-1)/ppn over NVLink
 * and S/ppn each way over its NIC, so the network carries each byte once
 * instead of the ring's 2(n-1)/n. NCCL's CollNetDirect latency
 * 2 (min(1, ppn-1) intraLat + 0.4 (ppn-1)) + interLat is paid once.
 */
#include "coll_priv.h"

#define CN_CHUNK (128 * 1024)
#define CN_SLOTS 8 /* NCCL_STEPS per pipeline stage */

typedef struct cn_chan cn_chan;

typedef struct {
    cn_chan *c;
    int rank;
    uint32_t started, done_chunks;
    bool done;
} cn_unit;

struct cn_chan {
    coll_exec *x;
    int N, ppn, n;
    uint64_t bytes;
    uint32_t nchunks, window;
    fab_node_id *root;   /* per rail: the aggregation switch */
    uint8_t *rs;         /* [rank][k] contributions received for its slice */
    uint8_t *ag;         /* [rank][k] result slices received (own included) */
    uint32_t *up;        /* [rail][k] node partials at the switch */
    cn_unit *u;
};

static size_t at(const cn_chan *c, int who, uint32_t k) { return (size_t)who * c->nchunks + k; }
static uint64_t chunk_of(const cn_chan *c, uint32_t k)
{
    uint64_t off = (uint64_t)k * CN_CHUNK;
    return c->bytes - off < CN_CHUNK ? c->bytes - off : CN_CHUNK;
}
static uint64_t slice_of(const cn_chan *c, uint32_t k, int l) { return coll_share(chunk_of(c, k), c->ppn, l, 16); }
static uint64_t key(int who, uint32_t k) { return ((uint64_t)(uint32_t)who << 32) | k; }

static void go(cn_chan *c, const fab_route *r, uint64_t bytes, fab_done_fn fn, uint64_t arg)
{
    coll_exec *x = c->x;
    sim_time now = sim_engine_now(x->eng);
    fabric_transfer_start(x->fab, r, FAB_NONE, bytes, coll_exec_fabric_chunk(bytes), 0,
                          now < x->start ? x->start - now : 0, fn, c, arg);
}

static void start_chunks(cn_unit *u);

static void chunk_done(cn_chan *c, int r, uint32_t k)
{
    (void)k;
    cn_unit *u = &c->u[r];
    u->done_chunks++;
    if (u->done_chunks == c->nchunks && !u->done) {
        u->done = true;
        coll_exec_unit_done(c->x);
    }
    start_chunks(u);
}

static void on_ag(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    cn_chan *c = ctx;
    int r = (int)(arg >> 32);
    uint32_t k = (uint32_t)arg;
    if (++c->ag[at(c, r, k)] == c->ppn)
        chunk_done(c, r, k);
}

/* the global sum of slice l of chunk k reached head r: share it in the node */
static void on_down(sim_engine *e, void *ctx, uint64_t arg)
{
    cn_chan *c = ctx;
    int r = (int)(arg >> 32), node = r / c->ppn, l = r % c->ppn;
    uint32_t k = (uint32_t)arg;
    for (int m = 0; m < c->ppn; m++) {
        if (m == l)
            continue;
        int to = node * c->ppn + m;
        const fab_route *rt = coll_exec_route(c->x, c->x->sys->gpu[r], c->x->sys->gpu[to], (uint32_t)l);
        if (rt)
            go(c, rt, slice_of(c, k, l), on_ag, key(to, k));
    }
    on_ag(e, c, arg); /* its own slice */
}

static void on_up(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    cn_chan *c = ctx;
    int l = (int)(arg >> 32);
    uint32_t k = (uint32_t)arg;
    if (++c->up[at(c, l, k)] < (uint32_t)c->N)
        return;
    /* the switch has every node's partial: multicast the sum down the rail */
    for (int node = 0; node < c->N; node++) {
        int head = node * c->ppn + l;
        GError *err = NULL;
        const fab_route *rt = fabric_route_switch(c->x->fab, c->x->sys->gpu[head], c->root[l], false, &err);
        if (!rt) {
            g_error_free(err);
            continue;
        }
        coll_exec_note_route(c->x, rt);
        go(c, rt, slice_of(c, k, l), on_down, key(head, k));
    }
}

static void on_rs(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    cn_chan *c = ctx;
    int r = (int)(arg >> 32), l = r % c->ppn;
    uint32_t k = (uint32_t)arg;
    if (++c->rs[at(c, r, k)] < c->ppn)
        return;
    GError *err = NULL;
    const fab_route *rt = fabric_route_switch(c->x->fab, c->x->sys->gpu[r], c->root[l], true, &err);
    if (!rt) {
        g_error_free(err);
        return;
    }
    coll_exec_note_route(c->x, rt);
    go(c, rt, slice_of(c, k, l), on_up, key(l, k));
}

static void start_chunks(cn_unit *u)
{
    cn_chan *c = u->c;
    int node = u->rank / c->ppn, l = u->rank % c->ppn;
    while (u->started < c->nchunks && u->started - u->done_chunks < c->window) {
        uint32_t k = u->started++;
        for (int m = 0; m < c->ppn; m++) {
            if (m == l)
                continue;
            int to = node * c->ppn + m;
            const fab_route *rt = coll_exec_route(c->x, c->x->sys->gpu[u->rank], c->x->sys->gpu[to], (uint32_t)m);
            if (rt)
                go(c, rt, slice_of(c, k, m), on_rs, key(to, k));
        }
        on_rs(c->x->eng, c, key(u->rank, k)); /* its own contribution */
    }
}

bool coll_collnet_common(const coll_system *sys, coll_kind kind, const char **why)
{
    if (sys->uneven) {
        *why = "servers hold different numbers of the ranks (Ring runs those)";
        return false;
    }
    if (!sys->sharp || sys->nnodes < 2) {
        *why = "needs several nodes on a fabric whose switches reduce (SHARP: ib-hdr, ib-ndr, ib-xdr)";
        return false;
    }
    if (kind != COLL_ALL_REDUCE) {
        *why = "modelled for all_reduce";
        return false;
    }
    if (sys->ppn > 8) {
        *why = "NCCL disables CollNet with more than 8 GPUs per node";
        return false;
    }
    return true;
}

static bool cn_supports(const coll_system *sys, coll_kind kind, const char **why)
{
    if (!coll_collnet_common(sys, kind, why))
        return false;
    if (sys->ppn > 1 && sys->nvswitch == FAB_NONE) {
        *why = "NCCL runs CollNet Direct only where an NVSwitch joins the node's GPUs (use CollNet Chain)";
        return false;
    }
    return true;
}

fab_node_id *coll_collnet_roots(coll_exec *x)
{
    const coll_system *sys = x->sys;
    int ppn = sys->ppn, N = sys->nnodes;
    fab_node_id *roots = g_new(fab_node_id, ppn), *rail = g_new(fab_node_id, N);
    g_ptr_array_add(x->garbage, roots);
    for (int l = 0; l < ppn; l++) {
        for (int i = 0; i < N; i++)
            rail[i] = sys->gpu[i * ppn + l];
        roots[l] = fabric_sharp_root(x->fab, rail, N, (uint32_t)l);
        if (roots[l] == FAB_NONE && !x->err)
            x->err = g_error_new(COLL_ERROR, COLL_ERROR_ROUTE, "CollNet: rail %d's NICs share no switch", l);
    }
    g_free(rail);
    return x->err ? NULL : roots;
}

static void cn_start(coll_exec *x)
{
    const coll_system *sys = x->sys;
    int nch = x->req->nchannels > 0 ? x->req->nchannels : 1, ppn = sys->ppn, N = sys->nnodes;
    double intra = coll_hw_lat_us(sys->nvswitch != FAB_NONE ? 0 : 1, ALGO_COLLNET_DIRECT, PROTO_SIMPLE);
    x->start += sim_time_from_us(2 * ((ppn > 1 ? 1 : 0) * intra + 0.4 * (ppn - 1)) +
                                 coll_hw_lat_us(2, ALGO_COLLNET_DIRECT, PROTO_SIMPLE));
    fab_node_id *roots = coll_collnet_roots(x);
    if (!roots)
        return;
    for (int ci = 0; ci < nch; ci++) {
        cn_chan *c = g_new0(cn_chan, 1);
        g_ptr_array_add(x->garbage, c);
        *c = (cn_chan){.x = x, .N = N, .ppn = ppn, .n = sys->nranks, .root = roots, .window = CN_SLOTS * 3};
        c->bytes = coll_share(x->req->bytes, nch, ci, 512);
        if (!c->bytes)
            continue;
        c->nchunks = (uint32_t)((c->bytes + CN_CHUNK - 1) / CN_CHUNK);
        c->rs = g_new0(uint8_t, (size_t)c->n * c->nchunks);
        c->ag = g_new0(uint8_t, (size_t)c->n * c->nchunks);
        c->up = g_new0(uint32_t, (size_t)ppn * c->nchunks);
        c->u = g_new0(cn_unit, c->n);
        g_ptr_array_add(x->garbage, c->rs);
        g_ptr_array_add(x->garbage, c->ag);
        g_ptr_array_add(x->garbage, c->up);
        g_ptr_array_add(x->garbage, c->u);
        for (int r = 0; r < c->n; r++) {
            c->u[r] = (cn_unit){.c = c, .rank = r};
            x->units_left++;
        }
        for (int r = 0; r < c->n; r++)
            start_chunks(&c->u[r]);
    }
}

const coll_algo coll_algo_collnet = {
    .name = "collnetdirect",
    .summary = "NVLink reduce-scatter to per-rail heads, in-network (SHARP) reduction of S/ppn per head, "
               "NVLink all-gather; algbw = min(NVLink bw x ppn / (2(ppn-1)), node NIC bw)",
    .supports = cn_supports,
    .start = cn_start,
};

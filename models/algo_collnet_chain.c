/* models/algo_collnet_chain.c - CollNet Chain all-reduce: a chain of the
 * node's GPUs into the network's in-switch reduction (InfiniBand SHARP).
 *
 * Per channel c the node's GPUs form a chain whose top, the head, is local
 * GPU c mod ppn (so the channels' heads, and their rail NICs, rotate over
 * the node). Per chunk: the chain's tail sends it to the next GPU up, which
 * adds its own and passes the sum on, up to the head; the head sends the
 * node's partial through its NIC to its rail's aggregation switch
 * (fabric_sharp_root, as CollNet Direct), which waits for every node's
 * partial, reduces, and multicasts the sum back down to every node's head;
 * the result then flows down the chain to the tail. In one channel a
 * middle GPU sends its share up and down over NVLink, the head only down
 * (and through its NIC each way), the tail only up; the heads rotate, so
 * per GPU 2 S (ppn-1)/ppn leaves over NVLink, as with Direct, and a node's
 * NICs carry S each way. What differs from Direct is the path: each chunk
 * crosses the node's GPUs one after another (2 (ppn-1) intra-node hops of
 * latency), where Direct sends it to every head at once.
 * The tail keeps at most NCCL_STEPS (8) chunks between sending one up and
 * receiving its sum. NCCL's CollNetChain latency 2 (ppn-1) intraLat +
 * interLat is paid once (nccl-model.md); Simple protocol only.
 */
#include "coll_priv.h"

#define CC_SLOTS 8 /* NCCL_STEPS */

typedef struct cc_chan cc_chan;

typedef struct {
    cc_chan *c;
    int rank;
    uint32_t done;
    bool finished;
} cc_unit;

struct cc_chan {
    coll_exec *x;
    int N, ppn, head;  /* nodes, GPUs per node, local index of the chain's top */
    uint64_t bytes, chunk;
    uint32_t nchunks, started;
    fab_node_id root;  /* the head's rail's aggregation switch */
    uint32_t *at_root; /* [k] node partials the switch has */
    cc_unit *u;        /* per rank */
};

/* chain position p (0 = head, ppn-1 = tail) of node i: its rank */
static int rank_at(const cc_chan *c, int node, int p) { return node * c->ppn + (c->head + p) % c->ppn; }
static uint64_t key(int node, int p, uint32_t k) { return ((uint64_t)node << 40) | ((uint64_t)p << 32) | k; }
static uint64_t bytes_of(const cc_chan *c, uint32_t k)
{
    uint64_t off = (uint64_t)k * c->chunk;
    return c->bytes - off < c->chunk ? c->bytes - off : c->chunk;
}

static void go(cc_chan *c, const fab_route *r, uint64_t bytes, fab_done_fn fn, uint64_t arg)
{
    coll_exec *x = c->x;
    sim_time now = sim_engine_now(x->eng);
    fabric_transfer_start(x->fab, r, FAB_NONE, bytes, coll_exec_fabric_chunk(bytes), 0,
                          now < x->start ? x->start - now : 0, fn, c, arg);
}

static void send_gpu(cc_chan *c, int from, int to, uint32_t k, fab_done_fn fn, uint64_t arg)
{
    const fab_route *r = coll_exec_route(c->x, c->x->sys->gpu[from], c->x->sys->gpu[to], (uint32_t)c->head);
    if (r)
        go(c, r, bytes_of(c, k), fn, arg);
}

static void start_chunks(cc_chan *c);

static void unit_chunk_done(cc_chan *c, int r)
{
    cc_unit *u = &c->u[r];
    if (++u->done == c->nchunks && !u->finished) {
        u->finished = true;
        coll_exec_unit_done(c->x);
    }
}

/* the sum of chunk k reached chain position p of node: pass it down */
static void on_down(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    cc_chan *c = ctx;
    int node = (int)(arg >> 40), p = (int)((arg >> 32) & 0xff);
    uint32_t k = (uint32_t)arg;
    unit_chunk_done(c, rank_at(c, node, p));
    if (p + 1 < c->ppn)
        send_gpu(c, rank_at(c, node, p), rank_at(c, node, p + 1), k, on_down, key(node, p + 1, k));
    else
        start_chunks(c); /* the tail has a slot again */
}

/* a node's partial of chunk k reached the switch */
static void on_root(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    cc_chan *c = ctx;
    uint32_t k = (uint32_t)arg;
    if (++c->at_root[k] < (uint32_t)c->N)
        return;
    for (int node = 0; node < c->N; node++) {
        int h = rank_at(c, node, 0);
        GError *err = NULL;
        const fab_route *r = fabric_route_switch(c->x->fab, c->x->sys->gpu[h], c->root, false, &err);
        if (!r) {
            g_error_free(err);
            continue;
        }
        coll_exec_note_route(c->x, r);
        go(c, r, bytes_of(c, k), on_down, key(node, 0, k));
    }
}

/* the partial of chunk k (the positions below p summed) reached position
 * p of node: add its own and send it on up */
static void on_up(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    cc_chan *c = ctx;
    int node = (int)(arg >> 40), p = (int)((arg >> 32) & 0xff);
    uint32_t k = (uint32_t)arg;
    if (p > 0) {
        send_gpu(c, rank_at(c, node, p), rank_at(c, node, p - 1), k, on_up, key(node, p - 1, k));
        return;
    }
    GError *err = NULL;
    const fab_route *r = fabric_route_switch(c->x->fab, c->x->sys->gpu[rank_at(c, node, 0)], c->root, true, &err);
    if (!r) {
        g_error_free(err);
        return;
    }
    coll_exec_note_route(c->x, r);
    go(c, r, bytes_of(c, k), on_root, k);
}

/* every node's tail starts chunks while fewer than CC_SLOTS are between its
 * send up and its sum coming back (all tails move in step: one counter) */
static void start_chunks(cc_chan *c)
{
    int tail = c->ppn - 1;
    while (c->started < c->nchunks && c->started - c->u[rank_at(c, 0, tail)].done < CC_SLOTS) {
        uint32_t k = c->started++;
        for (int node = 0; node < c->N; node++)
            on_up(c->x->eng, c, key(node, tail, k));
    }
}


/* NCCL's CollNetChain chunk: up to 256 KiB, halved (not below 32 KiB) while
 * the channel has fewer chunks than the chain is deep, so the chain still
 * pipelines (the reference sheet: "CollNetChain <= 256 KiB halving to 32
 * KiB"; the depth rule is ours). */
static uint64_t chain_chunk(uint64_t bytes, int depth)
{
    uint64_t ch = 256 * 1024;
    while (ch > 32 * 1024 && bytes / ch < (uint64_t)(depth > 1 ? depth : 2))
        ch /= 2;
    return ch;
}

static void cc_start(coll_exec *x)
{
    const coll_system *sys = x->sys;
    int nch = x->req->nchannels > 0 ? x->req->nchannels : 1, ppn = sys->ppn, N = sys->nnodes;
    double intra = coll_hw_lat_us(sys->nvswitch != FAB_NONE ? 0 : 1, ALGO_COLLNET_CHAIN, PROTO_SIMPLE);
    x->start += sim_time_from_us(2 * (ppn - 1) * intra + coll_hw_lat_us(2, ALGO_COLLNET_CHAIN, PROTO_SIMPLE));
    fab_node_id *roots = coll_collnet_roots(x);
    for (int ci = 0; roots && ci < nch; ci++) {
        cc_chan *c = g_new0(cc_chan, 1);
        g_ptr_array_add(x->garbage, c);
        *c = (cc_chan){.x = x, .N = N, .ppn = ppn, .head = ci % ppn, .root = roots[ci % ppn]};
        c->bytes = coll_share(x->req->bytes, nch, ci, 512);
        if (!c->bytes)
            continue;
        c->chunk = chain_chunk(c->bytes, ppn);
        c->nchunks = (uint32_t)((c->bytes + c->chunk - 1) / c->chunk);
        c->at_root = g_new0(uint32_t, c->nchunks);
        c->u = g_new0(cc_unit, sys->nranks);
        g_ptr_array_add(x->garbage, c->at_root);
        g_ptr_array_add(x->garbage, c->u);
        for (int r = 0; r < sys->nranks; r++) {
            c->u[r] = (cc_unit){.c = c, .rank = r};
            x->units_left++;
        }
        start_chunks(c);
    }
}

const coll_algo coll_algo_collnet_chain = {
    .name = "collnetchain",
    .summary = "a chain of the node's GPUs up to a head, in-network (SHARP) reduction of the node's partial, "
               "the sum back down the chain; algbw = min(NVLink bw x ppn / (2(ppn-1)), node NIC bw)",
    .supports = coll_collnet_common, /* no NVSwitch needed: on PCIe servers NCCL's only CollNet */
    .start = cc_start,
};

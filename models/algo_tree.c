/* models/algo_tree.c - NCCL's Tree all-reduce: a chain inside each node and
 * a double binary tree between nodes, pipelined by chunk (on one node the
 * chain alone, its head the root).
 *
 * Channel c picks a head GPU (coll_channel_entry: across servers one beside
 * NIC c mod the NICs, so channels use different rail NICs; local index c mod
 * ppn where every GPU has its own) and orders the node's GPUs as a chain starting at the
 * head. Reduce: the chain's tail sends chunk k to its predecessor, which adds
 * its own data and passes it on, up to the head; the head waits for the
 * partials of its child nodes (NCCL's binary tree over nodes; the second half
 * of the channels its other tree: the double binary tree, coll_dtree), adds them and sends to its
 * parent node's head. The root head holds the result, which flows back down
 * the tree and along every chain. Each hop pays the Tree per-step latency
 * (hwLat; where the block writes over NVLink, after the copy, at the
 * receiver) and moves payload / protocol efficiency; a channel's thread block
 * is paced at NCCL's per-channel Tree ceiling (perChMaxTreeBws and the LL /
 * LL128 limits, tuning.cc). A chain send lands no earlier than its bytes at
 * its share of the links (every channel sends up and down at once:
 * coll_link_shares, docs/collectives.md "Channels share links"). Every
 * pipeline stage has NCCL_STEPS slots.
 */
#include "coll_priv.h"

#include <math.h>

#define TREE_SLOTS 8

/* A rank's thread block copies one chunk at a time to a GPU peer (it is
 * busy until the copy lands); toward another node it only hands the chunk
 * to the network proxy, which keeps up to NCCL_STEPS sends in flight. */
typedef struct {
    uint32_t up_next, down_next; /* next chunk to send up / down, in order */
    uint32_t results;            /* chunks whose result this rank holds */
    int up_inflight;             /* up sends not yet delivered */
    int down_pending;            /* chain delivery outstanding of the current down step */
    int down_net;                /* down sends to child nodes not yet delivered */
    fab_pacer block;             /* the rank's thread block for this channel */
    coll_held up, down;          /* its chain sends at their shares of their links (share 0: none) */
    int64_t lat[3];              /* per-step latency before a send up, down the chain, to the child nodes */
    int64_t vis[2];              /* chain sends up, down it writes over NVLink: the latency at the receiver */
    const fab_route *rt[4];      /* routes up, down the chain, to child node q (2 + q), from share_links;
                                  * NULL: looked up per send (saves a route lookup per chunk: 96 M of 3,178 M
                                  * instructions on a 500-node DGX A100 Tree all_reduce, callgrind) */
    bool done;
} tree_rank;

typedef struct {
    coll_exec *x;
    int head, tree, N, ppn;
    const uint8_t *ord; /* a mesh: the chain follows this NVLink ring (ring_search.h); NULL: GPU order */
    uint8_t inv[COLL_RING_MAX_PPN]; /* local GPU -> its place in ord */
    uint64_t bytes, chunk;
    uint32_t nchunks, window;
    double pace_Bps;   /* per-channel thread block ceiling, wire bytes/s */
    uint8_t *got_up;   /* [rank][k] partial received from the chain successor */
    uint8_t *has_res;  /* [rank][k] result received */
    uint8_t *kids_in;  /* [node][k] partials received from child nodes */
    tree_rank *rk;     /* per rank */
} tree_chan;

static uint64_t payload(const tree_chan *c, uint32_t k)
{
    uint64_t off = (uint64_t)k * c->chunk;
    return c->bytes - off < c->chunk ? c->bytes - off : c->chunk;
}

/* chain position p of a node: from the channel's head along GPU order, or
 * along its NVLink ring on a mesh */
static int rank_at(const tree_chan *c, int node, int p)
{
    int k = (c->head + p) % c->ppn;
    return node * c->ppn + (c->ord ? c->ord[k] : k);
}
static int pos_of(const tree_chan *c, int r)
{
    int k = c->ord ? c->inv[r % c->ppn] : r % c->ppn;
    return (k - c->head + c->ppn) % c->ppn;
}
/* a node's parent in the channel's tree over nodes (-1: the root), and its
 * children, packed: NCCL's double binary tree (coll_dtree) */
static int node_up(const tree_chan *c, int node)
{
    int up, kid[2];
    coll_dtree(c->N, node, c->tree, &up, kid);
    return up;
}
static int node_kids(const tree_chan *c, int node, int kid[2])
{
    int up;
    return coll_dtree_packed(c->N, node, c->tree, &up, kid);
}
static int nkids(const tree_chan *c, int node)
{
    int kid[2];
    return node_kids(c, node, kid);
}
/* where rank r sends up: its chain predecessor, or (the head) its parent node's head */
static int up_to(const tree_chan *c, int r)
{
    int node = r / c->ppn, p = pos_of(c, r);
    return p > 0 ? rank_at(c, node, p - 1) : rank_at(c, node_up(c, node), 0);
}
static size_t at(const tree_chan *c, int who, uint32_t k) { return (size_t)who * c->nchunks + k; }
/* callback argument: the rank (or node) concerned and the chunk */
static uint64_t key(int who, uint32_t k) { return ((uint64_t)(uint32_t)who << 32) | k; }

/* where a rank sends: up (its chain predecessor or parent node's head), down
 * its chain, to a child node's head */
enum { UP, DOWN, KIDS };

/* `slot`: which of ra's routes (tree_rank.rt) leads to rb */
static void send(tree_chan *c, int ra, int rb, int dir, int slot, uint32_t k, fab_done_fn fn, uint64_t arg)
{
    coll_exec *x = c->x;
    tree_rank *t = &c->rk[ra];
    const fab_route *r = t->rt[slot];
    if (!r)
        r = coll_exec_route(x, x->sys->gpu[ra], x->sys->gpu[rb], (uint32_t)c->head);
    if (!r)
        return;
    uint64_t wire = (uint64_t)((double)payload(c, k) / x->proto->wire_eff + 0.5);
    sim_time now = sim_engine_now(x->eng);
    /* written over NVLink, the step latency is the receiver's (vis) */
    int64_t lat = t->lat[dir] - (dir == KIDS ? 0 : t->vis[dir]);
    if (ra / c->ppn == rb / c->ppn) /* a chain send: the block copies it */
        coll_held_issue(dir == UP ? &t->up : &t->down, x, wire, lat);
    int64_t delay = lat + (now < x->start ? x->start - now : 0);
    fabric_transfer_start_paced(x->fab, r, &c->rk[ra].block, wire, coll_exec_fabric_chunk(wire), 0, delay, fn, c,
                                arg);
}

static void up_try(tree_chan *c, int r);
static void down_try(tree_chan *c, int r);

static void got_result(tree_chan *c, int r, uint32_t k)
{
    c->has_res[at(c, r, k)] = 1;
    c->rk[r].results++;
    if (pos_of(c, r) == c->ppn - 1)
        up_try(c, r); /* the chain tail's window moved */
    down_try(c, r);
}

static void on_up_arrived(sim_engine *e, void *ctx, uint64_t arg);

/* Up: a rank's thread block forwards chunks toward the root one at a time:
 * tail -> ... -> head (adding its own data) -> parent node's head. */
static void up_try(tree_chan *c, int r)
{
    tree_rank *t = &c->rk[r];
    int node = r / c->ppn, p = pos_of(c, r);
    bool root = p == 0 && node_up(c, node) < 0;
    bool tail = p == c->ppn - 1; /* starts from its own data, within the window */
    for (;;) { /* a head keeps up to NCCL_STEPS chunks with the proxy */
        uint32_t k = t->up_next;
        if (t->up_inflight >= (p == 0 ? TREE_SLOTS : 1) || k >= c->nchunks)
            return;
        if (tail && k - t->results >= c->window)
            return;
        if (!tail && !c->got_up[at(c, r, k)])
            return;
        if (p == 0 && c->kids_in[at(c, node, k)] < nkids(c, node))
            return;
        t->up_next++;
        if (root) { /* the root holds the sum */
            got_result(c, r, k);
            continue;
        }
        t->up_inflight++;
        send(c, r, up_to(c, r), UP, UP, k, on_up_arrived, key(r, k));
    }
}

/* a chain send up is there for its receiver to use */
static void on_up_visible(sim_engine *e, void *ctx, uint64_t arg)
{
    tree_chan *c = ctx;
    int to = (int)(arg >> 32);
    (void)e;
    c->got_up[at(c, to, (uint32_t)arg)] = 1;
    up_try(c, to);
}

static void on_up_arrived(sim_engine *e, void *ctx, uint64_t arg)
{
    tree_chan *c = ctx;
    int r = (int)(arg >> 32), node = r / c->ppn, p = pos_of(c, r);
    uint32_t k = (uint32_t)arg;
    (void)e;
    if (p > 0 && coll_held_wait(&c->rk[r].up, c->x, on_up_arrived, c, arg))
        return; /* still copying at its share */
    c->rk[r].up_inflight--;
    if (p > 0) {
        int to = rank_at(c, node, p - 1);
        if (c->rk[r].vis[UP]) {
            sim_engine_after(c->x->eng, (sim_time)c->rk[r].vis[UP], on_up_visible, c, key(to, k));
        } else {
            c->got_up[at(c, to, k)] = 1;
            up_try(c, to);
        }
    } else {
        int parent = node_up(c, node);
        c->kids_in[at(c, parent, k)]++;
        up_try(c, rank_at(c, parent, 0));
    }
    up_try(c, r);
}

static void check_done(tree_chan *c, int r)
{
    tree_rank *t = &c->rk[r];
    if (!t->done && t->down_next == c->nchunks && t->up_next == c->nchunks && t->up_inflight == 0 &&
        t->down_net == 0) {
        t->done = true;
        coll_exec_unit_done(c->x);
    }
}

/* a chain send down is there for its receiver to use */
static void on_down_visible(sim_engine *e, void *ctx, uint64_t arg)
{
    tree_chan *c = ctx;
    (void)e;
    got_result(c, (int)(arg >> 32), (uint32_t)arg);
}

/* the result of chunk k reached chain rank `to` from its predecessor */
static void on_down_arrived(sim_engine *e, void *ctx, uint64_t arg)
{
    tree_chan *c = ctx;
    int to = (int)(arg >> 32), from = rank_at(c, to / c->ppn, pos_of(c, to) - 1);
    (void)e;
    if (coll_held_wait(&c->rk[from].down, c->x, on_down_arrived, c, arg))
        return; /* still copying at its share */
    if (c->rk[from].vis[DOWN])
        sim_engine_after(c->x->eng, (sim_time)c->rk[from].vis[DOWN], on_down_visible, c, arg);
    else
        got_result(c, to, (uint32_t)arg);
    c->rk[from].down_pending = 0;
    c->rk[from].down_next++;
    down_try(c, from);
    check_done(c, from);
}

/* the result of chunk k reached child node head `to` from its parent head */
static void on_down_net_arrived(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    tree_chan *c = ctx;
    int to = (int)(arg >> 32), node = to / c->ppn;
    int from = rank_at(c, node_up(c, node), 0);
    got_result(c, to, (uint32_t)arg);
    c->rk[from].down_net--;
    down_try(c, from);
    check_done(c, from);
}

/* Down: the result goes to the child nodes' heads (from a head, through the
 * proxy) and along the chain, in chunk order. */
static void down_try(tree_chan *c, int r)
{
    tree_rank *t = &c->rk[r];
    for (;;) {
        uint32_t k = t->down_next;
        int node = r / c->ppn, p = pos_of(c, r), kids[2], nk = p == 0 ? node_kids(c, node, kids) : 0;
        if (t->down_pending || k >= c->nchunks || !c->has_res[at(c, r, k)] || (nk && t->down_net >= TREE_SLOTS))
            return;
        for (int q = 0; q < nk; q++) {
            int kid = rank_at(c, kids[q], 0);
            t->down_net++;
            send(c, r, kid, KIDS, 2 + q, k, on_down_net_arrived, key(kid, k));
        }
        if (p + 1 < c->ppn) {
            t->down_pending = 1;
            send(c, r, rank_at(c, node, p + 1), DOWN, DOWN, k, on_down_arrived, key(rank_at(c, node, p + 1), k));
            return;
        }
        t->down_next++;
        check_done(c, r);
    }
}

static bool tree_supports(const coll_system *sys, coll_kind kind, const char **why)
{
    if (sys->uneven) {
        *why = "servers hold different numbers of the ranks (Ring runs those)";
        return false;
    }
    if (kind != COLL_ALL_REDUCE) {
        *why = "Tree is an all_reduce algorithm";
        return false;
    }
    return true;
}

static double tree_pace(const coll_exec *x)
{
    double gbps = coll_tree_perch_GBps(x->sys->gpu_sm, x->sys->nnodes, x->req->proto);
    if (x->req->proto == PROTO_LL)
        gbps = coll_ll_max_GBps(x->sys->gpu_sm, x->sys->nnodes, x->sys->cpu_vendor) / x->req->nchannels;
    return gbps * 1e9 / x->proto->wire_eff;
}

/* NCCL's chunk size for Tree (enqueue.cc calcCollChunking, ref s3): halve
 * the protocol chunk while there are too few chunks per channel to fill the
 * pipeline of `depth` hops (Simple: below 8/4/1 x depth chunks, down to
 * 128/64/32 KiB; LL128: below nstepsLL128 x 64/ppn and x 16/ppn chunks,
 * nstepsLL128 = 1 + log2(nNodes) + 0.1 ppn, down to 128/32 KiB). */
static uint64_t tree_chunk(const coll_exec *x, int nch, int depth)
{
    const coll_system *sys = x->sys;
    uint64_t chunk = x->proto->chunk_bytes_pipe, per = x->req->bytes / (uint64_t)nch;
    if (x->req->proto == PROTO_SIMPLE) {
        while (per / chunk < (uint64_t)depth * 8 && chunk > 131072)
            chunk /= 2;
        while (per / chunk < (uint64_t)depth * 4 && chunk > 65536)
            chunk /= 2;
        while (per / chunk < (uint64_t)depth && chunk > 32768)
            chunk /= 2;
    } else if (x->req->proto == PROTO_LL128) {
        double steps = 1 + floor(log2((double)sys->nnodes)) + 0.1 * sys->ppn;
        while ((double)(per / chunk) < steps * 64 / sys->ppn && chunk > 131072)
            chunk /= 2;
        while ((double)(per / chunk) < steps * 16 / sys->ppn && chunk > 32768)
            chunk /= 2;
    }
    return chunk;
}

/* Channels share links (docs/collectives.md): every channel's chain sends
 * up and down at once; each chain send's share of its route's links. Each
 * rank's per-step latencies (and what of them an NVLink write leaves to
 * the receiver) are its routes', set here once. */
static void share_links(coll_exec *x, GPtrArray *chans)
{
    const coll_system *sys = x->sys;
    size_t cap = chans->len * (size_t)sys->nranks * 4, n = 0;
    coll_block_routes *b = g_new0(coll_block_routes, cap);
    coll_held **dst = g_new(coll_held *, cap);
    const fab_route **rts = g_new(const fab_route *, cap);
    for (guint i = 0; i < chans->len; i++) {
        tree_chan *c = chans->pdata[i];
        for (int r = 0; r < sys->nranks; r++) {
            int node = r / c->ppn, p = pos_of(c, r), kids[2], nk = node_kids(c, node, kids);
            int to[4], dir[4], slot[4], nt = 0;
            coll_held *where[4];
            tree_rank *t = &c->rk[r];
            if (p > 0 || node_up(c, node) >= 0)
                to[nt] = up_to(c, r), dir[nt] = UP, slot[nt] = UP, where[nt++] = p > 0 ? &t->up : NULL;
            if (p + 1 < c->ppn)
                to[nt] = rank_at(c, node, p + 1), dir[nt] = DOWN, slot[nt] = DOWN, where[nt++] = &t->down;
            for (int q = 0; p == 0 && q < nk; q++)
                to[nt] = rank_at(c, kids[q], 0), dir[nt] = KIDS, slot[nt] = 2 + q, where[nt++] = NULL;
            for (int j = 0; j < nt; j++) {
                const fab_route *rt = coll_exec_route(x, sys->gpu[r], sys->gpu[to[j]], (uint32_t)c->head);
                if (!rt)
                    continue;
                t->rt[slot[j]] = rt;
                t->lat[dir[j]] = coll_exec_step_lat_ps(x, rt, ALGO_TREE);
                if (dir[j] != KIDS && where[j] && coll_nvlink_write(x, rt))
                    t->vis[dir[j]] = t->lat[dir[j]];
                dst[n] = where[j];
                rts[n] = rt;
                b[n++] = (coll_block_routes){.route = {rt}, .nroutes = 1};
            }
        }
    }
    double *share = g_new(double, n ? n : 1);
    coll_link_shares(x, b, n, share);
    for (size_t i = 0; i < n; i++)
        if (dst[i])
            *dst[i] = (coll_held){.share_Bps = share[i], .wire_lat = fabric_route_lat_ps(x->fab, rts[i])};
    g_free(share);
    g_free(rts);
    g_free(dst);
    g_free(b);
}

void coll_tree_links(const coll_system *sys, int ci, int nch, int r, int *up, int down[3])
{
    tree_chan c = {.head = coll_channel_entry(sys, ci), .tree = 2 * ci >= nch, .N = sys->nnodes, .ppn = sys->ppn};
    if (coll_rings_usable(&sys->rings, sys->fab, sys->gpu, sys->ppn)) {
        c.ord = sys->rings.order[ci % sys->rings.n];
        for (int k = 0; k < sys->ppn; k++)
            c.inv[c.ord[k]] = (uint8_t)k;
    }
    int node = r / c.ppn, p = pos_of(&c, r), kids[2], nk = node_kids(&c, node, kids), nd = 0;
    down[0] = down[1] = down[2] = -1;
    *up = p > 0 || node_up(&c, node) >= 0 ? up_to(&c, r) : -1;
    if (p + 1 < c.ppn) /* NCCL's tree.down[0]: the chain's next, then the child nodes' heads */
        down[nd++] = rank_at(&c, node, p + 1);
    for (int q = 0; p == 0 && q < nk; q++)
        down[nd++] = rank_at(&c, kids[q], 0);
}

static void tree_start(coll_exec *x)
{
    const coll_system *sys = x->sys;
    int nch = x->req->nchannels > 0 ? x->req->nchannels : 1;
    int depth = (int)ceil(log2((double)sys->nnodes + 1)) - 1;
    GPtrArray *chans = g_ptr_array_new();
    for (int ci = 0; ci < nch; ci++) {
        tree_chan *c = g_new0(tree_chan, 1);
        g_ptr_array_add(x->garbage, c);
        *c = (tree_chan){.x = x, .head = coll_channel_entry(sys, ci), .tree = 2 * ci >= nch, .N = sys->nnodes, .ppn = sys->ppn,
                         .chunk = tree_chunk(x, nch, sys->ppn - 1 + depth + 1), .pace_Bps = tree_pace(x)};
        if (coll_rings_usable(&sys->rings, sys->fab, sys->gpu, sys->ppn)) {
            c->ord = sys->rings.order[ci % sys->rings.n];
            for (int k = 0; k < sys->ppn; k++)
                c->inv[c->ord[k]] = (uint8_t)k;
        }
        c->bytes = coll_share(x->req->bytes, nch, ci, x->proto->grain);
        if (!c->bytes)
            continue;
        c->nchunks = (uint32_t)((c->bytes + c->chunk - 1) / c->chunk);
        c->window = TREE_SLOTS * (uint32_t)(2 * (sys->ppn - 1) + 2 * depth + 1);
        c->got_up = g_new0(uint8_t, (size_t)sys->nranks * c->nchunks);
        c->has_res = g_new0(uint8_t, (size_t)sys->nranks * c->nchunks);
        c->kids_in = g_new0(uint8_t, (size_t)sys->nnodes * c->nchunks);
        c->rk = g_new0(tree_rank, sys->nranks);
        for (int r = 0; r < sys->nranks; r++)
            c->rk[r].block.Bps = c->pace_Bps;
        g_ptr_array_add(x->garbage, c->got_up);
        g_ptr_array_add(x->garbage, c->has_res);
        g_ptr_array_add(x->garbage, c->kids_in);
        g_ptr_array_add(x->garbage, c->rk);
        x->units_left += sys->nranks;
        g_ptr_array_add(chans, c);
    }
    share_links(x, chans);
    for (guint i = 0; i < chans->len; i++)
        for (int r = 0; r < sys->nranks; r++)
            up_try(chans->pdata[i], r);
    g_ptr_array_unref(chans);
}

const coll_algo coll_algo_tree = {
    .name = "tree",
    .summary = "chain inside each node + double binary tree across nodes, pipelined by chunk; "
               "each node sends and receives about 2S over the network; busbw <= nCh x perChMaxTreeBw",
    .supports = tree_supports,
    .start = tree_start,
};

/* models/algo_nvls.c - NVLink SHARP all-reduce: NVLS inside a node, and
 * NVLSTree (NVLS inside each node + a tree between nodes).
 *
 * Per channel, chunk k: every GPU of a node sends it up to the node's
 * NVSwitch once; when the node's contributions are in, the switch reduces
 * them (multimem load-reduce) and hands the node's sum to the channel's head
 * GPU (one head per channel, rotating over the node's GPUs, so over its rail
 * NICs). With several nodes, the heads of a channel form NCCL's binary tree
 * over the nodes (the second half of the channels its other tree: NCCL's
 * double binary tree, coll_dtree): a head waits for its children's partials, adds its own and sends
 * up; the root has the result and it flows back down the tree. Each head
 * then stores the result to its switch (multimem store), which multicasts
 * it to every GPU of the node. One node is NCCL's NVLS: the head is its own
 * root. Per GPU this moves about S(1+1/ppn) up and down over NVLink - the
 * head's load-reduce result and store are the 1/ppn - at NCCL's
 * nvlsEfficiency (0.85 Hopper, 0.74 Blackwell, tuning.cc) and, on two nodes,
 * S/ppn each way over its NIC. NCCL's latency (intraLat + 2 log2(nNodes)
 * interLat, NVLS/NVLSTree hwLat) is paid once by the first chunk, and is the
 * round trip of a chunk's slot: a GPU keeps at most NCCL_STEPS chunks of a
 * channel between sending one up and its slot's return, which is that
 * latency after the chunk left and not before its result is back. Chunks
 * are NCCL's (nvls_chunk), so small operations move at 8 x chunk / latency
 * per channel (docs/collectives.md, "Chunks and slots"). On several nodes
 * the grain is NCCL's step, one chunk per head (ppn chunks, each stage
 * taking a step whole), and a GPU starts a channel's next step heads / 8
 * round trips after the last one left (the same 8 chunks per round trip),
 * once that one is at the switch (not when its result is back through the
 * tree): docs/collectives.md, "NVLSTree steps".
 * A GPU's block
 * sends its chunks up one after another, each held for its copy at the
 * block's share of the GPU's links plus one flag (NCCL's NVLink LL hwLat,
 * 0.6 us; coll_held), so a channel moves at most chunk / (flag + copy)
 * (docs/collectives.md, "NVLS steps").
 * Ideal one-node busbw = link bw x nvlsEff x 2(n-1)/n / (1 + 1/n).
 */
#include "coll_priv.h"

#include <math.h>

#define NT_CHUNK (128 * 1024) /* NCCL_NVLS_CHUNKSIZE */
#define NT_SLOTS 8             /* NCCL_STEPS: chunks of a channel a GPU has in flight */

typedef struct nt_chan nt_chan;

typedef struct {
    nt_chan *ch;
    int rank;
    uint32_t k_up, up_done, down_done;
    coll_slots slots; /* its NT_SLOTS chunks in flight (coll.c) */
    coll_held held;   /* its block copies each chunk up at its share of the links */
    bool busy, done;
} nt_unit;

struct nt_chan {
    coll_exec *x;
    int head;          /* local index of this channel's head GPU */
    int tree;          /* which of NCCL's double binary trees (coll_dtree) */
    uint64_t bytes;
    uint32_t nchunks;
    double scale;      /* NVLink wire bytes per payload byte (1 / nvlsEff) */
    uint8_t *arrived;  /* [node][k] contributions at the node's switch */
    uint8_t *kids_in;  /* [node][k] children partials received by the head */
    uint8_t *partial;  /* [node][k] the node's own partial is at its head */
    nt_unit *u;        /* per rank */
    uint32_t window;   /* chunks a GPU may have between its send up and their slot's return */
    uint64_t chunk;    /* payload bytes per simulated piece: NCCL's chunk, or several (below) */
    uint64_t nccl_chunk; /* NCCL's chunk (coll_nvls_chunk) */
    int64_t flag_ps;     /* a block's flag per NCCL chunk sent (coll_nvls_flag_ps) */
    sim_time rtt;      /* a slot's round trip: NCCL's NVLS/NVLSTree latency */
    /* routes, looked up once (the hot path sends millions of chunks over them) */
    fab_node_id *sw;           /* [node] its NVSwitch */
    const fab_route **r_up;    /* [rank] GPU -> its switch */
    const fab_route **r_down;  /* [rank] node's switch -> GPU */
    const fab_route **r_store; /* [node] head -> node's switch */
};

static int nodes_of(const nt_chan *c) { return c->x->sys->nnodes; }
static int ppn_of(const nt_chan *c) { return c->x->sys->ppn; }

/* a node's parent in the channel's tree over nodes (-1: the root) and its
 * children, packed: NCCL's double binary tree (coll_dtree) */
static int node_kids(const nt_chan *c, int node, int *up, int kid[2])
{
    return coll_dtree_packed(nodes_of(c), node, c->tree, up, kid);
}

static uint64_t payload(const nt_chan *c, uint32_t k)
{
    uint64_t off = (uint64_t)k * c->chunk;
    return c->bytes - off < c->chunk ? c->bytes - off : c->chunk;
}

fab_node_id coll_nvls_switch_of(const coll_exec *x, fab_node_id gpu)
{
    const fab_link_id *out;
    uint32_t n;
    fabric_node_links(x->fab, gpu, &out, &n);
    for (uint32_t i = 0; i < n; i++)
        if (fabric_node(x->fab, fabric_link_dst(x->fab, out[i]))->kind == FAB_NVSWITCH)
            return fabric_link_dst(x->fab, out[i]);
    return FAB_NONE;
}

/* one hop (GPU <-> switch): nothing to pipeline across hops, one piece */
static void send_on(nt_chan *c, const fab_route *r, uint64_t wire, fab_done_fn fn, void *ctx, uint64_t arg)
{
    coll_exec_send_hop(c->x, r, wire, fn, ctx, arg);
}

static void send(nt_chan *c, fab_node_id a, fab_node_id b, uint64_t wire, fab_done_fn fn, void *ctx, uint64_t arg)
{
    send_on(c, coll_exec_route(c->x, a, b, (uint32_t)c->head), wire, fn, ctx, arg);
}

/* *slot, or the route a -> b looked up into it (NULL on error: the exec's
 * error path has it, and the next call tries again) */
static const fab_route *cached(nt_chan *c, const fab_route **slot, fab_node_id a, fab_node_id b)
{
    if (!*slot)
        *slot = coll_exec_route(c->x, a, b, (uint32_t)c->head);
    return *slot;
}

static fab_node_id gpu(const nt_chan *c, int node, int local) { return c->x->sys->gpu[node * ppn_of(c) + local]; }
static uint64_t nvl_wire(const nt_chan *c, uint32_t k) { return (uint64_t)((double)payload(c, k) * c->scale + 0.5); }
static uint64_t key(int node, uint32_t k) { return ((uint64_t)(uint32_t)node << 32) | k; }
static size_t idx(const nt_chan *c, int node, uint32_t k) { return (size_t)node * c->nchunks + k; }

static fab_node_id node_switch(nt_chan *c, int node);
static void up_try(nt_unit *u);
static void tree_step(nt_chan *c, int node, uint32_t k);

static void unit_check(nt_unit *u)
{
    if (!u->done && u->up_done == u->ch->nchunks && u->down_done == u->ch->nchunks) {
        u->done = true;
        coll_exec_unit_done(u->ch->x);
    }
}

/* the GPU waited for a slot to come back (only while it has chunks to send,
 * so the unit is not done before this fires) */
static void on_wake(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    nt_unit *u = ctx;
    u->slots.wake = false;
    up_try(u);
}

/* the result of chunk k reached this GPU; its slot comes back a round trip
 * after the chunk was sent */
static void on_down(sim_engine *e, void *ctx, uint64_t k)
{
    (void)e;
    nt_unit *u = ctx;
    u->down_done++;
    if (nodes_of(u->ch) == 1) /* one node: the head's result is the slot's release */
        coll_slots_landed(&u->slots, u->ch->x, (uint32_t)k, u->ch->rtt);
    up_try(u);
    unit_check(u);
}

/* the head's result reached the switch: multicast to the node's GPUs */
static void on_store(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    nt_chan *c = ctx;
    int node = (int)(arg >> 32);
    uint32_t k = (uint32_t)arg;
    fab_node_id sw = node_switch(c, node);
    for (int l = 0, r = node * ppn_of(c); l < ppn_of(c); l++, r++)
        send_on(c, cached(c, &c->r_down[r], sw, gpu(c, node, l)), nvl_wire(c, k), on_down, &c->u[r], k);
}

/* the global result for chunk k is at node's head: pass it down the tree
 * and store it to the node's switch */
static void on_result(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    nt_chan *c = ctx;
    int node = (int)(arg >> 32), up, kid[2], nk = node_kids(c, node, &up, kid);
    uint32_t k = (uint32_t)arg;
    for (int q = 0; q < nk; q++)
        send(c, gpu(c, node, c->head), gpu(c, kid[q], c->head), payload(c, k), on_result, c, key(kid[q], k));
    send_on(c, cached(c, &c->r_store[node], gpu(c, node, c->head), node_switch(c, node)), nvl_wire(c, k), on_store, c,
            key(node, k));
}

static void on_kid(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    nt_chan *c = ctx;
    int node = (int)(arg >> 32);
    uint32_t k = (uint32_t)arg;
    c->kids_in[idx(c, node, k)]++;
    tree_step(c, node, k);
}

static void tree_step(nt_chan *c, int node, uint32_t k)
{
    size_t i = idx(c, node, k);
    int parent, kid[2];
    if (!c->partial[i] || c->kids_in[i] < node_kids(c, node, &parent, kid))
        return;
    if (parent < 0) {
        on_result(c->x->eng, c, key(node, k));
        return;
    }
    send(c, gpu(c, node, c->head), gpu(c, parent, c->head), payload(c, k), on_kid, c, key(parent, k));
}

static void on_partial(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    nt_chan *c = ctx;
    int node = (int)(arg >> 32);
    uint32_t k = (uint32_t)arg;
    c->partial[idx(c, node, k)] = 1;
    tree_step(c, node, k);
}

static void on_up(sim_engine *e, void *ctx, uint64_t k)
{
    (void)e;
    nt_unit *u = ctx;
    nt_chan *c = u->ch;
    if (coll_held_wait(&u->held, c->x, on_up, u, k))
        return; /* at the switch, but its block is still copying and flagging */
    int node = u->rank / ppn_of(c);
    u->busy = false;
    u->up_done++;
    /* several nodes: the next step may start once this one is at the switch
     * and a round trip after it left, not when its result is back through
     * the tree (docs/collectives.md, "NVLSTree steps") */
    if (nodes_of(c) > 1)
        coll_slots_landed(&u->slots, c->x, (uint32_t)k, c->rtt);
    if (++c->arrived[idx(c, node, (uint32_t)k)] == ppn_of(c)) {
        int h = node * ppn_of(c) + c->head;
        send_on(c, cached(c, &c->r_down[h], node_switch(c, node), gpu(c, node, c->head)), nvl_wire(c, (uint32_t)k),
                on_partial, c, key(node, (uint32_t)k));
    }
    up_try(u);
    unit_check(u);
}

static const fab_route *up_route(nt_chan *c, int rank)
{
    fab_node_id g = c->x->sys->gpu[rank];
    if (!c->r_up[rank])
        c->r_up[rank] = coll_exec_route(c->x, g, coll_nvls_switch_of(c->x, g), (uint32_t)c->head);
    return c->r_up[rank];
}

static void up_try(nt_unit *u)
{
    nt_chan *c = u->ch;
    /* the slot of chunk k_up - window must be back (on_down retries) */
    if (u->busy || u->k_up >= c->nchunks || !coll_slots_free(&u->slots, c->x, u->k_up, c->window, on_wake, u))
        return;
    uint32_t k = u->k_up++;
    u->busy = true;
    coll_slots_sent(&u->slots, c->x, k);
    uint64_t p = payload(c, k), w = nvl_wire(c, k);
    coll_held_issue(&u->held, c->x, w, (int64_t)((p + c->nccl_chunk - 1) / c->nccl_chunk) * c->flag_ps);
    send_on(c, up_route(c, u->rank), w, on_up, u, k);
}

static fab_node_id node_switch(nt_chan *c, int node)
{
    if (c->sw[node] == FAB_NONE)
        c->sw[node] = coll_nvls_switch_of(c->x, gpu(c, node, 0));
    return c->sw[node];
}

double coll_nvls_eff(int sm) { return sm >= 100 ? 0.74 : 0.85; }

static bool nvls_common(const coll_system *sys, coll_kind kind, const char **why)
{
    if (!sys->nvls || sys->nvswitch == FAB_NONE) {
        *why = "no NVLS-capable NVSwitch joins the ranks of a node";
        return false;
    }
    if (!coll_nvls_on(sys)) {
        *why = "NCCL turns NVLS on only with more than 2 of the communicator's GPUs on a node (or NVLink clique)";
        return false;
    }
    if (kind != COLL_ALL_REDUCE && (sys->nnodes > 1 || (kind != COLL_ALL_GATHER && kind != COLL_REDUCE_SCATTER))) {
        *why = "modelled for all_reduce, and for all_gather/reduce_scatter inside one node";
        return false;
    }
    if (kind != COLL_ALL_REDUCE && sys->ppn > COLL_NVLS_MAX_ARITY) {
        *why = "NCCL runs NVLS all_gather/reduce_scatter on at most 32 local ranks (NCCL_MAX_NVLS_ARITY)";
        return false;
    }
    if (sys->nnodes > 255 || sys->ppn > 255) {
        *why = "modelled up to 255 nodes of up to 255 GPUs";
        return false;
    }
    return true;
}

static bool nvls_supports(const coll_system *sys, coll_kind kind, const char **why)
{
    if (sys->uneven) {
        *why = "servers hold different numbers of the ranks (Ring runs those)";
        return false;
    }
    if (sys->nnodes > 1) {
        *why = "multi-node NVLS needs CollNet (NVLS+SHARP), not modelled; use NVLSTree or Ring";
        return false;
    }
    return nvls_common(sys, kind, why);
}

static bool nt_supports(const coll_system *sys, coll_kind kind, const char **why)
{
    if (sys->uneven) {
        *why = "servers hold different numbers of the ranks (Ring runs those)";
        return false;
    }
    if (sys->nnodes < 2) {
        *why = "NVLSTree joins several nodes (one node: NVLS)";
        return false;
    }
    return nvls_common(sys, kind, why);
}

/* NCCL's NVLS / NVLSTree chunk (enqueue.cc calcCollChunking): 128 KiB
 * (NCCL_NVLS_CHUNKSIZE), smaller while the operation is small against
 * nChannels x nHeads chunks in flight; each test uses the chunk as already
 * reduced. */
uint64_t coll_nvls_chunk(const coll_exec *x, int nch, int nnodes)
{
    uint64_t chunk = NT_CHUNK, ops = (uint64_t)nch * (uint64_t)x->sys->ppn, b = x->req->bytes;
    if (nnodes == 1) {
        if (b < 64 * ops * chunk && chunk > 65536)
            chunk = 65536;
        if (b < 8 * ops * chunk && chunk > 32768)
            chunk = 32768;
        if (b < 2 * ops * chunk && chunk > 16384)
            chunk = 16384;
    } else {
        if (b < 4 * ops * chunk && chunk > 65536)
            chunk = 65536;
        if (b < ops * chunk && chunk > 32768)
            chunk = 32768;
    }
    return chunk;
}

static void nt_start(coll_exec *x)
{
    const coll_system *sys = x->sys;
    int nch = x->req->nchannels > 0 ? x->req->nchannels : 1, N = sys->nnodes;
    if (x->req->kind != COLL_ALL_REDUCE) { /* all_gather, reduce_scatter (one node) */
        coll_nvls_rsag_start(x);
        return;
    }
    double eff = coll_nvls_eff(sys->gpu_sm);
    double intra = coll_hw_lat_us(0, ALGO_NVLS_TREE, PROTO_SIMPLE), inter = coll_hw_lat_us(2, ALGO_NVLS_TREE, PROTO_SIMPLE);
    double lat = intra + 2 * log2((double)N) * inter;
    x->start += sim_time_from_us(lat);
    /* a slot's round trip is one hop's (at most one network hop each way), whatever the tree's
     * depth: every hop of a pipelined tree keeps its own slots, so depth delays the first step
     * (lat, above), not the rate of the rest (docs/collectives.md, "Depth") */
    double slot_lat = intra + 2 * fmin(log2((double)N), 1.0) * inter;
    uint64_t chunk = coll_nvls_chunk(x, nch, N);
    GPtrArray *chans = g_ptr_array_new();
    for (int ci = 0; ci < nch; ci++) {
        nt_chan *c = g_new0(nt_chan, 1);
        g_ptr_array_add(x->garbage, c);
        *c = (nt_chan){.x = x, .head = ci % sys->ppn, .tree = 2 * ci >= nch, .scale = 1.0 / eff};
        c->bytes = coll_share(x->req->bytes, nch, ci, 512);
        if (!c->bytes)
            continue;
        g_ptr_array_add(chans, c);
        /* the simulated grain: NCCL's chunk; on a long operation (64 or more
         * chunks per channel) pieces of several chunks whose slots come back
         * together, the window holding the same bytes (NT_SLOTS chunks), so
         * the same rate in fewer events: 128 KiB, or 256 KiB (2 in flight)
         * of 64 KiB chunks from 512 per channel */
        c->chunk = c->nccl_chunk = chunk;
        c->flag_ps = coll_nvls_flag_ps();
        c->window = NT_SLOTS;
        if (N > 1) {
            /* NVLSTree moves a channel's data in steps of nHeads chunks,
             * one to each head (docs/collectives.md, "NVLSTree steps") */
            int heads = sys->ppn < COLL_NVLS_MAX_ARITY ? sys->ppn : COLL_NVLS_MAX_ARITY;
            c->chunk = chunk * (uint64_t)heads;
            c->window = 1;
        } else if (!sys->exact && chunk < NT_CHUNK && c->bytes / chunk >= 64) {
            c->chunk = chunk >= 65536 && c->bytes / chunk >= 512 ? 2 * NT_CHUNK : NT_CHUNK;
            c->window = (uint32_t)(NT_SLOTS * chunk / c->chunk);
        }
        c->nchunks = (uint32_t)((c->bytes + c->chunk - 1) / c->chunk);
        /* NT_SLOTS of NCCL's chunks per round trip: a window holding more
         * (a step of more than 8 heads) returns after proportionally more */
        double held = (double)c->window * (double)c->chunk / (double)c->nccl_chunk;
        c->rtt = sim_time_from_us(slot_lat * held / NT_SLOTS);
        size_t cells = (size_t)N * c->nchunks;
        c->arrived = g_new0(uint8_t, cells);
        c->kids_in = g_new0(uint8_t, cells);
        c->partial = g_new0(uint8_t, cells);
        c->u = g_new0(nt_unit, sys->nranks);
        c->sw = g_new(fab_node_id, N);
        for (int i = 0; i < N; i++)
            c->sw[i] = FAB_NONE;
        c->r_up = g_new0(const fab_route *, sys->nranks);
        c->r_down = g_new0(const fab_route *, sys->nranks);
        c->r_store = g_new0(const fab_route *, N);
        g_ptr_array_add(x->garbage, c->sw);
        g_ptr_array_add(x->garbage, c->r_up);
        g_ptr_array_add(x->garbage, c->r_down);
        g_ptr_array_add(x->garbage, c->r_store);
        g_ptr_array_add(x->garbage, c->arrived);
        g_ptr_array_add(x->garbage, c->kids_in);
        g_ptr_array_add(x->garbage, c->partial);
        g_ptr_array_add(x->garbage, c->u);
        for (int r = 0; r < sys->nranks; r++) {
            c->u[r] = (nt_unit){.ch = c, .rank = r};
            x->units_left++;
        }
    }
    /* every channel's block of a GPU copies its chunks up at its share of
     * the GPU's links, a flag per chunk (coll_held) */
    size_t n = (size_t)chans->len * (size_t)sys->nranks, i = 0;
    coll_held **held = g_new(coll_held *, n ? n : 1);
    const fab_route **up = g_new(const fab_route *, n ? n : 1);
    for (guint j = 0; j < chans->len; j++) {
        nt_chan *c = chans->pdata[j];
        for (int r = 0; r < sys->nranks; r++, i++) {
            held[i] = &c->u[r].held;
            up[i] = up_route(c, r);
        }
    }
    coll_held_init(x, held, up, n);
    g_free(held);
    g_free(up);
    for (guint j = 0; j < chans->len; j++)
        for (int r = 0; r < sys->nranks; r++)
            up_try(&((nt_chan *)chans->pdata[j])->u[r]);
    g_ptr_array_unref(chans);
}

const coll_algo coll_algo_nvls = {
    .name = "nvls",
    .summary = "all_reduce: each rank sends S up once, the switch reduces, the head stores S/n and the switch "
               "multicasts S down; busbw = bw x nvlsEff x 2(n-1)/n / (1+1/n); all_gather/reduce_scatter: S "
               "down/up per GPU, busbw = bw x nvlsEff x (n-1)/n",
    .supports = nvls_supports,
    .start = nt_start,
};

const coll_algo coll_algo_nvls_tree = {
    .name = "nvlstree",
    .summary = "NVLS reduce inside each node, binary tree of channel heads across nodes, NVLS multicast back; "
               "busbw -> min(NVLS rate, node NIC rate x (2 nodes: 1, more: 1/2)) x 2(n-1)/n",
    .supports = nt_supports,
    .start = nt_start,
};

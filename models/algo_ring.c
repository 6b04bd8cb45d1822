/* models/algo_ring.c - NCCL's Ring, per channel and rank a state machine.
 *
 * AllReduce is reduce-scatter then all-gather on one ring: for every chunk
 * (one block of each rank's 1/n of the channel's data) 2(n-1) steps, each a
 * send to the next rank of what was received at the previous step (step 0
 * sends own data). AllGather/ReduceScatter: n-1 steps. Broadcast/Reduce: a
 * pipelined chain from (to) the root, chunk by chunk. A step's data is cut
 * into slices (Simple: 2 per chunk); a rank's channel sends one slice at a
 * time (one thread block), after the slice it depends on has arrived, and
 * only while the receiver has a free slot (NCCL_STEPS FIFO, returned when
 * the receiver has forwarded or consumed the slice). Each send pays the
 * protocol's per-step latency, then crosses the fabric as wire bytes
 * (payload / protocol efficiency), optionally through a per-channel cap.
 * Ideal time on an idle uniform ring: steps x (latency + slice/bw) per chunk.
 * Where the block writes to its peer over NVLink (not A100's Simple reads)
 * the latency comes after the copy instead, as the receiver's (vis_lat): the
 * block copies its next slice meanwhile. Across the network the proxy takes
 * the sends one after another, netOvh apart (proxy_ovh).
 *
 * Rings staged through host memory (no P2P: NCCL's SHM transport) move in
 * passes instead: the sender's block writes a slice into host memory, the
 * receiver's block reads it back when its program gets there, reading and
 * writing in one pass where it forwards (docs/collectives.md, "Rings
 * through host memory").
 */
#include "coll_priv.h"

#include <math.h>

#define FOLD_NODES 2
#define CHAIN_SLOTS 8 /* NCCL_STEPS / BROADCAST_SLICESTEPS: a chain connection's slices in flight */

typedef enum { PAT_RING, PAT_CHAIN } pattern;

typedef struct ring_chan ring_chan;

typedef struct ring_unit {
    ring_chan *ch;
    coll_exec *x;
    struct ring_unit *next, *prev;
    const fab_route *route;
    int64_t step_lat;
    fab_pacer block;       /* the channel's thread block on this rank: its copy rate cap */
    int pos;               /* position along the ring/chain */
    uint32_t k_send, sends_done, n_send;
    uint32_t recv_done, n_recv;
    int credits;
    int inflight;          /* sends not yet delivered */
    uint64_t arrived;      /* bit j: send sends_done + j is there, waiting for an earlier one */
    int max_inflight;      /* 1 to a GPU peer (the block copies); NCCL_STEPS across the network (proxy) */
    int64_t proxy_ovh;     /* across the network: the proxy's work per send (NCCL's netOvh), ps */
    int64_t vis_lat;       /* a write to a GPU peer: the step latency comes after the copy, at the
                            * receiver (0: before it, in the sender's block) */
    sim_time proxy_free;   /* when the proxy can take the next send */
    coll_held held;        /* its copy to a GPU peer at its share of the links (share 0: none) */
    /* SHM (every hop of the channel staged through host memory): */
    const fab_route *wleg, *rleg; /* to host memory; from it to the next rank */
    fab_pacer rblock;      /* the block's reads (same cap as its writes) */
    uint32_t pass, n_pass; /* passes finished / in the program */
    int pass_parts;        /* transfers of the pass in flight */
    bool done;
} ring_unit;

struct ring_chan {
    pattern pat;
    int nsteps;        /* ring: steps per chunk; chain: unused */
    int nslices;       /* slices per chunk */
    uint32_t nchunks;  /* chunks (loops) on this channel */
    uint64_t block;    /* ring: bytes of one rank's block on this channel; chain: channel bytes */
    uint64_t chunk;    /* payload bytes per chunk */
};

/* payload bytes of send/recv index k */
static uint64_t slice_bytes(const ring_chan *c, uint32_t k)
{
    uint32_t per_chunk = (uint32_t)(c->pat == PAT_RING ? c->nsteps * c->nslices : c->nslices);
    uint32_t loop = k / per_chunk, s = k % (uint32_t)c->nslices;
    uint64_t done = (uint64_t)loop * c->chunk;
    uint64_t this_chunk = c->block - done < c->chunk ? c->block - done : c->chunk;
    return coll_share(this_chunk, c->nslices, (int)s, 16);
}

/* index of the received slice send k depends on, or -1 */
static int64_t dep_of(const ring_unit *u, uint32_t k)
{
    const ring_chan *c = u->ch;
    if (c->pat == PAT_CHAIN)
        return u->pos == 0 ? -1 : (int64_t)k;
    uint32_t j = (k / (uint32_t)c->nslices) % (uint32_t)c->nsteps;
    return j == 0 ? -1 : (int64_t)k - c->nslices;
}

/* is received slice m freed on arrival (nothing forwards it)? */
static bool consumed_on_arrival(const ring_unit *u, uint32_t m)
{
    const ring_chan *c = u->ch;
    if (c->pat == PAT_CHAIN)
        return u->n_send == 0;
    uint32_t j = (m / (uint32_t)c->nslices) % (uint32_t)c->nsteps;
    return j + 1 == (uint32_t)c->nsteps;
}

static void try_send(ring_unit *u);
static bool send_next(ring_unit *u);

/* Slice k's bytes on the wire (payload / protocol efficiency). */
static uint64_t slice_wire(const ring_unit *u, uint32_t k)
{
    return (uint64_t)((double)slice_bytes(u->ch, k) / u->x->proto->wire_eff + 0.5);
}

/* A send a block copies to a GPU peer lands no earlier than this after it
 * is issued: the per-step latency and its copy ("Channels share links"). */
static int64_t hold_ps(const ring_unit *u, double wire) { return u->step_lat + coll_held_copy_ps(&u->held, wire); }

static void check_done(ring_unit *u)
{
    if (!u->done && u->sends_done == u->n_send && u->recv_done == u->n_recv && u->pass == u->n_pass) {
        u->done = true;
        coll_exec_unit_done(u->x);
    }
}

/* u delivered (or finished a pass): it, its neighbours may go on. */
static void wake(ring_unit *u)
{
    try_send(u->next);
    try_send(u->prev);
    try_send(u);
    check_done(u->next);
    check_done(u);
}

/* slice m of u's sends is there for u->next to use */
static void visible(ring_unit *u, uint32_t m)
{
    u->next->recv_done++;
    if (consumed_on_arrival(u->next, m))
        u->credits++;
}

static void on_visible(sim_engine *e, void *ctx, uint64_t m)
{
    ring_unit *u = ctx;
    (void)e;
    visible(u, (uint32_t)m);
    wake(u);
}

/* A connection delivers in order (NCCL's FIFO): a slice that overtook an
 * earlier one (a shorter or empty slice, another spine under adaptive
 * routing) waits for it. */
static void on_sent(sim_engine *e, void *ctx, uint64_t k)
{
    ring_unit *u = ctx;
    (void)e;
    if (coll_held_wait(&u->held, u->x, on_sent, u, k))
        return; /* still copying at its share */
    g_assert(k >= u->sends_done && k - u->sends_done < 64);
    u->arrived |= 1ull << (k - u->sends_done);
    while (u->arrived & 1) {
        u->arrived >>= 1;
        uint32_t m = u->sends_done;
        u->inflight--;
        u->sends_done++;
        /* our forwarded slice frees the slot it came from */
        if (dep_of(u, m) >= 0)
            u->prev->credits++;
        if (u->vis_lat)
            sim_engine_after(u->x->eng, (sim_time)u->vis_lat, on_visible, u, m);
        else
            visible(u, m);
    }
    wake(u);
}

static void shm_try(ring_unit *u);

static void try_send(ring_unit *u)
{
    if (u->wleg) {
        shm_try(u);
        return;
    }
    while (u->inflight < u->max_inflight && u->k_send < u->n_send && u->credits > 0)
        if (!send_next(u))
            return;
}

/* Issue send k_send if the slice it forwards has arrived; false if not. */
static bool send_next(ring_unit *u)
{
    uint32_t k = u->k_send;
    int64_t d = dep_of(u, k);
    if (d >= 0 && (int64_t)u->recv_done <= d)
        return false;
    coll_exec *x = u->x;
    u->inflight++;
    u->credits--;
    u->k_send++;
    uint64_t wire = slice_wire(u, k);
    sim_time now = sim_engine_now(x->eng);
    sim_time t = now < x->start ? x->start : now; /* when it may leave */
    if (u->proxy_ovh) { /* one send after another through the proxy */
        if (u->proxy_free > t)
            t = u->proxy_free;
        u->proxy_free = t + (sim_time)u->proxy_ovh;
    }
    int64_t lead = u->vis_lat ? 0 : u->step_lat, delay = lead + (int64_t)(t - now);
    coll_held_issue(&u->held, x, wire, lead);
    fabric_transfer_start_paced(x->fab, u->route, &u->block, wire, coll_exec_fabric_chunk(wire), 0, delay,
                                on_sent, u, k);
    return true;
}

/* SHM passes. A block's program, per chunk and slice in NCCL's order: step
 * 0 writes its own slice to host memory, steps 1..nsteps-1 read the slice
 * the previous rank wrote and write the result (one pass, both at once),
 * then a last pass reads the final slice. A pass starts when what it reads
 * is in host memory and the next rank has a free slot; it ends when both
 * transfers have landed. Reading a slice frees its slot. */
static void shm_decode(const ring_unit *u, uint32_t p, int64_t *k, int64_t *m)
{
    const ring_chan *c = u->ch;
    uint32_t ns = (uint32_t)c->nslices, per = (uint32_t)(c->nsteps + 1) * ns;
    uint32_t loop = p / per, j = p % per / ns, s = p % ns;
    uint64_t base = (uint64_t)loop * (uint32_t)c->nsteps * ns;
    if (j < (uint32_t)c->nsteps) {
        *k = (int64_t)(base + (uint64_t)j * ns + s);
        *m = j > 0 ? *k - (int64_t)ns : -1;
    } else {
        *k = -1;
        *m = (int64_t)(base + (uint64_t)(j - 1) * ns + s);
    }
}

static void on_pass_part(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)arg;
    ring_unit *u = ctx, *v = u->next;
    if (u->pass_parts > 1) {
        u->pass_parts--;
        return;
    }
    (void)e;
    if (coll_held_wait(&u->held, u->x, on_pass_part, u, 0))
        return; /* still moving at its share */
    u->pass_parts = 0;
    int64_t k, m;
    shm_decode(u, u->pass, &k, &m);
    u->pass++;
    if (k >= 0) {
        u->sends_done++;
        v->recv_done++;
    }
    if (m >= 0)
        u->prev->credits++;
    wake(u);
}

static void shm_try(ring_unit *u)
{
    if (u->pass_parts > 0 || u->pass == u->n_pass)
        return;
    int64_t k, m;
    shm_decode(u, u->pass, &k, &m);
    if ((m >= 0 && (int64_t)u->recv_done <= m) || (k >= 0 && u->credits <= 0))
        return;
    coll_exec *x = u->x;
    sim_time now = sim_engine_now(x->eng);
    /* the per-step latency is NCCL's per send (a ring step); a read-only pass pays its wire latency */
    int64_t lat = k >= 0 ? u->step_lat : 0, delay = lat + (now < x->start ? x->start - now : 0);
    u->pass_parts = (k >= 0) + (m >= 0);
    uint64_t wk = k < 0 ? 0 : slice_wire(u, (uint32_t)k), wm = m < 0 ? 0 : slice_wire(u, (uint32_t)m);
    coll_held_issue(&u->held, x, wk > wm ? wk : wm, lat);
    if (k >= 0) {
        u->credits--;
        fabric_transfer_start_paced(x->fab, u->wleg, &u->block, wk, coll_exec_fabric_chunk(wk), 0, delay,
                                    on_pass_part, u, 0);
    }
    if (m >= 0)
        fabric_transfer_start_paced(x->fab, u->prev->rleg, &u->rblock, wm, coll_exec_fabric_chunk(wm), 0, delay,
                                    on_pass_part, u, 0);
}

/* A unit whose route is staged through host memory gets its two legs: to
 * the memory of its GPU's socket, and from it to the next rank. */
static bool shm_unit_legs(coll_exec *x, ring_unit *w, fab_node_id src, fab_node_id dst)
{
    fab_node_id mem = fabric_socket_mem(x->fab, src);
    if (mem == FAB_NONE)
        return true;
    w->wleg = coll_exec_route(x, src, mem, 0);
    w->rleg = w->wleg ? coll_exec_route(x, mem, dst, 0) : NULL;
    return w->rleg != NULL;
}

/* SHM passes when every hop of the channel is staged; otherwise the staged
 * hops stay one transfer each through host memory. */
static void shm_channel(ring_unit *u, int m)
{
    bool all = true;
    for (int i = 0; i < m; i++)
        all &= u[i].wleg != NULL;
    for (int i = 0; i < m; i++) {
        if (!all) {
            u[i].wleg = u[i].rleg = NULL;
            continue;
        }
        u[i].rblock.Bps = u[i].block.Bps;
        u[i].n_pass = u[i].ch->nchunks * (uint32_t)(u[i].ch->nsteps + 1) * (uint32_t)u[i].ch->nslices;
    }
    for (int i = 0; all && i < m; i++) { /* a pass's legs: its write and the previous rank's read leg */
        int64_t lw = fabric_route_lat_ps(u[i].x->fab, u[i].wleg), lr = fabric_route_lat_ps(u[i].x->fab, u[i].prev->rleg);
        u[i].held.wire_lat = lw > lr ? lw : lr;
    }
}

static bool ring_supports(const coll_system *sys, coll_kind kind, const char **why)
{
    (void)sys;
    if (coll_is_p2p(kind)) {
        *why = "alltoall, sendrecv, gather and scatter are point-to-point (algorithm Direct)";
        return false;
    }
    return true;
}

/* Whether rings leave a server on the NIC they came in by (NCCL's crossNic 0
 * and 2, the default): the hop between servers then takes the receiver's
 * rail, as a PXN send (fabric_route_p2p), and ring_down orders the server's
 * GPUs so that the last one sits beside that NIC. NCCL_CROSS_NIC=1: the hop
 * leaves on the sender's own rail (fabric_route). */
static bool ring_rails(const coll_system *sys) { return !sys->nccl.cross_nic; }

/* Where channel c enters each server, across servers: a local GPU, or on a
 * mesh a place on c's NVLink ring. Channels cycle over the NICs as NCCL's
 * search does (ring_entry, mesh_entry; c mod ppn where the NICs are not
 * known); a mesh ring follows its NVLink order from there. rails: the
 * ring leaves a server on the NIC it came in by (ring_rails), so a mesh
 * ring enters where it can also leave beside that NIC. */
static int entry_of(const coll_system *sys, bool mesh, int c)
{
    if (sys->ring_nics == 0)
        return c % sys->ppn;
    if (!mesh)
        return sys->ring_entry[c % sys->ppn];
    int p = ring_rails(sys) ? sys->mesh_entry[c % sys->rings.n][c % sys->ring_nics] : 0xff;
    return p != 0xff ? p : c % sys->ppn;
}

int coll_channel_entry(const coll_system *sys, int c)
{
    bool mesh = sys->rings.n > 0 && coll_rings_usable(&sys->rings, sys->fab, sys->gpu, sys->ppn);
    return sys->nnodes > 1 ? entry_of(sys, mesh, c) : c % sys->ppn;
}

/* Ring order of channel c: nodes in order; across servers channel c enters
 * each at entry_of (a GPU beside NIC c mod the NICs) and runs up from there,
 * or down where ring_down says the GPU after it is the one beside its NIC
 * (ring_rails). On a mesh it follows c's NVLink ring. */
static int ring_rank(const coll_system *sys, int c, int i)
{
    if (sys->uneven) /* servers hold different numbers of the ranks: rank order */
        return i;
    int node = i / sys->ppn, local = i % sys->ppn;
    bool mesh = sys->rings.n > 0 && coll_rings_usable(&sys->rings, sys->fab, sys->gpu, sys->ppn);
    if (sys->nnodes > 1) { /* channels enter each server at different GPUs (rails), and leave it
                            * from a GPU beside the NIC they came in by (ring_down) */
        int e = entry_of(sys, mesh, c);
        local = sys->ring_down[e] && ring_rails(sys) ? (e - local + sys->ppn) % sys->ppn : (local + e) % sys->ppn;
    }
    if (mesh) /* a mesh: along c's NVLink ring */
        local = sys->rings.order[c % sys->rings.n][local];
    return node * sys->ppn + local;
}

int coll_ring_rank(const coll_system *sys, int c, int i) { return ring_rank(sys, c, i); }

/* Where rank r sits on channel c's ring (ring_rank's inverse). */
static int ring_pos(const coll_system *sys, int c, int r)
{
    for (int i = 0; i < sys->nranks; i++)
        if (ring_rank(sys, c, i) == r)
            return i;
    return r;
}

static double per_channel_cap(const coll_exec *x, int nch)
{
    /* NCCL's ceilings (tuning.cc): LL128 per channel; LL shared by the channels */
    const coll_system *sys = x->sys;
    if (x->req->proto == PROTO_LL128)
        return coll_ring_ll128_perch_GBps(sys->gpu_sm) * 1e9;
    if (x->req->proto == PROTO_LL)
        return coll_ll_max_GBps(sys->gpu_sm, sys->nnodes, sys->cpu_vendor) * 1e9 / nch;
    return 0;
}

/* Nodes a ring all_reduce/all_gather/reduce_scatter needs to simulate.
 *
 * The ring visits nodes in order and every node does the same thing at the
 * same time: rank i's sends depend only on what rank i-1 sent it, on the
 * slots rank i+1 returns, and on the links they share. On a cluster of
 * identical nodes whose ring hops are alike, the timeline repeats node by
 * node, so a ring over the first FOLD_NODES nodes, closed from the last of
 * them back to the first, with the full ring's step count and block size,
 * gives each rank the timeline it has in the full ring (docs/collectives.md,
 * "Folded rings", says how this was checked). Returns sys->nnodes when the
 * ring is not folded: small rings, sys->exact, or nodes that are not alike. */
#define FOLD_MIN_NODES 8

/* *collide: without adaptive routing the full ring's inter-node hops hash
 * onto spine links (static ECMP), where they may collide; fold_collisions
 * finds out whether they do and tells the folded ring (docs/collectives.md,
 * "Folded rings"). */
static int fold_nodes(const coll_system *sys, bool *collide)
{
    int k = FOLD_NODES;
    *collide = false;
    if (sys->exact || sys->uneven || sys->nnodes <= FOLD_MIN_NODES || sys->nnodes <= k ||
        sys->nranks != sys->nnodes * sys->ppn)
        return sys->nnodes;
    if (!coll_nodes_alike(sys))
        return sys->nnodes;
    *collide = !fabric_adaptive(sys->fab);
    return k;
}

/* Max-min fair rates, wire bytes/s, of the nch channels of a ring over the
 * ranks at positions 0..m-1, closed from m-1 back to 0. A pipelined ring
 * moves at one pace on all its hops, so channel c is one flow that crosses
 * a link as many times as its hops do; a link carries the sum. Rates rise
 * together until a link fills, the channels crossing it stop there, the
 * others go on (progressive filling); channel c asks for no more than
 * demand[c]. The steady state of the ring. */
static void ring_fluid_rates(const coll_system *sys, int nch, int m, const double *demand, double *rate)
{
    const fabric *f = sys->fab;
    GHashTable *index = g_hash_table_new(g_direct_hash, g_direct_equal); /* queue + 1 -> index + 1 */
    GArray *cap = g_array_new(FALSE, FALSE, sizeof(double));
    GArray *use = g_array_new(FALSE, TRUE, sizeof(uint32_t)); /* [link][channel] hops */
    for (int c = 0; c < nch; c++)
        for (int i = 0; i < m; i++) {
            int a = ring_rank(sys, c, i), b = ring_rank(sys, c, (i + 1) % m);
            const fab_route *r = (ring_rails(sys) ? fabric_route_p2p : fabric_route)(sys->fab, sys->gpu[a],
                                                                                         sys->gpu[b], (uint32_t)c, NULL);
            for (uint32_t h = 0; r && h < r->nhops; h++) {
                fab_link_id q = fabric_link_queue(f, r->hop[h]);
                guint li = GPOINTER_TO_UINT(g_hash_table_lookup(index, GUINT_TO_POINTER(q + 1)));
                if (!li) {
                    const fab_link_desc *d = fabric_link(f, q);
                    double bps = d->bw_Bps * d->eff;
                    g_array_append_val(cap, bps);
                    g_array_set_size(use, cap->len * (guint)nch);
                    li = cap->len;
                    g_hash_table_insert(index, GUINT_TO_POINTER(q + 1), GUINT_TO_POINTER(li));
                }
                g_array_index(use, uint32_t, (li - 1) * (guint)nch + (guint)c)++;
            }
        }
    guint nl = cap->len;
    double *fixed = g_new0(double, nl);
    bool *done = g_new0(bool, (gsize)(guint)nch);
    int left = nch;
    for (int c = 0; c < nch; c++)
        rate[c] = 0;
    while (left > 0) {
        double best = INFINITY;
        guint bl = nl;
        int bc = -1; /* or the channel whose demand comes first */
        for (int c = 0; c < nch; c++)
            if (!done[c] && demand[c] < best)
                best = demand[c], bc = c;
        for (guint l = 0; l < nl; l++) {
            double n = 0;
            for (int c = 0; c < nch; c++)
                if (!done[c])
                    n += g_array_index(use, uint32_t, l * (guint)nch + (guint)c);
            if (n > 0 && (g_array_index(cap, double, l) - fixed[l]) / n < best)
                best = (g_array_index(cap, double, l) - fixed[l]) / n, bl = l, bc = -1;
        }
        for (int c = 0; c < nch; c++) {
            if (done[c] || (bc >= 0 && c != bc) ||
                (bc < 0 && bl < nl && !g_array_index(use, uint32_t, bl * (guint)nch + (guint)c)))
                continue;
            rate[c] = best, done[c] = true, left--;
            for (guint l = 0; l < nl; l++)
                fixed[l] += best * g_array_index(use, uint32_t, l * (guint)nch + (guint)c);
        }
    }
    g_free(done);
    g_free(fixed);
    g_array_free(use, TRUE);
    g_array_free(cap, TRUE);
    g_hash_table_unref(index);
}

/* A folded ring's nodes share their hops' leaves, so its inter-node hops
 * never meet on a spine; the full ring's, hashed onto spine links by static
 * ECMP, do. A channel asks for no more than its ring's pace: the channel
 * ceiling, and its held hops to GPU peers, each a slice at its share of the
 * links plus the per-step latency (a latency-bound ring barely loads the
 * spines). Where the full ring's steady rate of a channel (ring_fluid_rates
 * over all its ranks) is below the folded ring's, the folded channel's
 * inter-node sends are paced at the full ring's rate. */
static void fold_collisions(coll_exec *x, GPtrArray *units, int m, double chan_cap)
{
    const coll_system *sys = x->sys;
    int nch = (int)units->len;
    double *full = g_new(double, nch), *fold = g_new(double, nch), *demand = g_new(double, nch);
    for (int c = 0; c < nch; c++) {
        ring_unit *u = units->pdata[c];
        demand[c] = chan_cap > 0 ? chan_cap : INFINITY;
        for (int i = 0; i < m; i++) {
            if (!u[i].route || u[i].held.share_Bps <= 0 || u[i].n_send == 0)
                continue;
            double wire = (double)slice_wire(&u[i], 0);
            double t = (double)hold_ps(&u[i], wire) * 1e-12;
            if (t > 0 && wire / t < demand[c])
                demand[c] = wire / t;
        }
    }
    ring_fluid_rates(sys, nch, sys->nranks, demand, full);
    ring_fluid_rates(sys, nch, m, demand, fold);
    for (int c = 0; c < nch; c++) {
        if (!(full[c] < fold[c] * (1 - 1e-9)))
            continue;
        ring_unit *u = units->pdata[c];
        for (int i = 0; i < m; i++)
            if (u[i].route && u[i].max_inflight > 1 && (u[i].block.Bps <= 0 || full[c] < u[i].block.Bps))
                u[i].block.Bps = full[c];
    }
    g_free(demand);
    g_free(fold);
    g_free(full);
}

/* Channels share links. The thread blocks of a collective's channels start
 * together, do the same work and meet their links packet by packet, so
 * while they copy, each moves at its share of every link on its route (the
 * link's rate over the number of this collective's channel routes crossing
 * it), and they all stall together for their per-step latency. Links that
 * serve whole fabric chunks first come, first served would instead let one
 * channel's chunks take the link while the others wait for their flags,
 * hiding a latency the real channels pay (docs/collectives.md, "Channels
 * share links"). So a slice a block copies to a GPU peer (the block waits
 * for it to land) lands no earlier than its bytes at that share after the
 * per-step latency; its bytes still cross the links' queues, where other
 * traffic meets them. Sends handed to the network proxy (NCCL_STEPS in
 * flight) are not held. */
static void share_links(coll_exec *x, GPtrArray *units, int m)
{
    size_t cap = units->len * (size_t)m, n = 0;
    coll_block_routes *b = g_new0(coll_block_routes, cap);
    ring_unit **who = g_new(ring_unit *, cap);
    double *share = g_new(double, cap);
    for (guint c = 0; c < units->len; c++)
        for (int i = 0; i < m; i++) {
            ring_unit *w = &((ring_unit *)units->pdata[c])[i];
            if (!w->route)
                continue;
            who[n] = w;
            b[n++] = w->wleg ? (coll_block_routes){.route = {w->wleg, w->prev->rleg}, .nroutes = 2}
                             : (coll_block_routes){.route = {w->route}, .nroutes = 1};
        }
    coll_link_shares(x, b, n, share);
    /* a Simple block copies no faster than one thread block can
     * (coll_block_simple_GBps): binds only when few channels share the
     * links (NCCL_MAX_NCHANNELS); held, not paced, so the slice streams */
    double blk = x->req->proto == PROTO_SIMPLE ? coll_block_simple_GBps(x->sys->gpu_sm) * 1e9 : 0;
    for (size_t i = 0; i < n; i++)
        if (who[i]->max_inflight == 1)
            who[i]->held.share_Bps = blk > 0 && blk < share[i] ? blk : share[i];
    g_free(share);
    g_free(who);
    g_free(b);
}

static void ring_start(coll_exec *x)
{
    const coll_system *sys = x->sys;
    const coll_request *req = x->req;
    int n = sys->nranks, nch = req->nchannels > 0 ? req->nchannels : 1;
    bool chain = req->kind == COLL_BROADCAST || req->kind == COLL_REDUCE;
    uint64_t block_total = chain ? req->bytes
                         : (req->bytes + (uint64_t)n - 1) / (uint64_t)n; /* one rank's 1/n */
    double cap = per_channel_cap(x, nch);
    bool collide = false;
    int fold = chain ? sys->nnodes : fold_nodes(sys, &collide);
    int m = fold < sys->nnodes ? fold * sys->ppn : n; /* ranks simulated */
    GPtrArray *units = g_ptr_array_new();
    for (int c = 0; c < nch; c++) {
        ring_chan *ch = g_new0(ring_chan, 1);
        g_ptr_array_add(x->garbage, ch);
        ch->pat = chain ? PAT_CHAIN : PAT_RING;
        ch->nsteps = req->kind == COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
        /* Broadcast/Reduce: one step per chunk and per slice (NCCL's BROADCAST_/REDUCE_CHUNKSTEPS and
         * SLICESTEPS 1, src/include/collectives.h), so NCCL_STEPS slices in flight */
        ch->nslices = chain ? 1 : x->proto->slices_per_chunk;
        ch->block = coll_share(block_total, nch, c, x->proto->grain);
        ch->chunk = chain ? x->proto->chunk_bytes_pipe : x->proto->chunk_bytes;
        if (ch->block == 0)
            continue;
        ch->nchunks = (uint32_t)((ch->block + ch->chunk - 1) / ch->chunk);
        ring_unit *u = g_new0(ring_unit, m);
        g_ptr_array_add(x->garbage, u);
        uint32_t per = ch->nchunks * (uint32_t)(chain ? ch->nslices : ch->nsteps * ch->nslices);
        /* a chain follows channel c's ring (NCCL's broadcast/reduce run on the rings): from the root
         * for broadcast, from the root's successor for reduce (it ends at the root) */
        int start = chain ? (ring_pos(sys, c, req->root) + (req->kind == COLL_REDUCE)) % n : 0;
        for (int i = 0; i < m; i++) {
            int r = chain ? ring_rank(sys, c, (start + i) % n) : ring_rank(sys, c, i);
            ring_unit *w = &u[i];
            w->ch = ch;
            w->x = x;
            w->pos = i;
            w->next = &u[(i + 1) % m];
            w->prev = &u[(i + m - 1) % m];
            w->credits = chain ? CHAIN_SLOTS : x->proto->slots;
            /* the channel's thread block on this rank moves at most `cap` payload/s */
            w->block.Bps = cap > 0 ? cap / x->proto->wire_eff : 0;
            w->n_send = chain && i == n - 1 ? 0 : per;
            w->n_recv = chain && i == 0 ? 0 : per;
            int nr = chain ? ring_rank(sys, c, (start + i + 1) % n) : ring_rank(sys, c, (i + 1) % m);
            if (w->n_send) {
                w->route = (ring_rails(sys) ? coll_exec_route_p2p : coll_exec_route)(x, sys->gpu[r], sys->gpu[nr],
                                                                                                  (uint32_t)c);
                if (!w->route) {
                    g_ptr_array_unref(units);
                    return;
                }
                if (!chain && fabric_route_staged(x->fab, w->route) &&
                    !shm_unit_legs(x, w, sys->gpu[r], sys->gpu[nr])) {
                    g_ptr_array_unref(units);
                    return;
                }
                w->step_lat = coll_exec_step_lat_ps(x, w->route, ALGO_RING);
                w->held.wire_lat = fabric_route_lat_ps(x->fab, w->route);
                bool net = coll_route_crosses_net(x->fab, w->route);
                w->max_inflight = net ? 8 : 1;
                if (coll_nvlink_write(x, w->route))
                    w->vis_lat = w->step_lat; /* the step's latency is the receiver's */
                if (net && !chain) /* the proxy's serial work per network step */
                    w->proxy_ovh = (int64_t)(coll_net_ovh_us(sys, x->req->proto) * 1e6);
            }
            x->units_left++;
        }
        shm_channel(u, m);
        g_ptr_array_add(units, u);
    }
    share_links(x, units, m);
    if (collide && (int)units->len == nch) /* (a channel without data: too small to matter) */
        fold_collisions(x, units, m, cap > 0 ? cap / x->proto->wire_eff : 0);
    for (guint c = 0; c < units->len; c++)
        for (int i = 0; i < m; i++)
            try_send(&((ring_unit *)units->pdata[c])[i]);
    g_ptr_array_unref(units);
}

const coll_algo coll_algo_ring = {
    .name = "ring",
    .summary = "2(n-1) steps of S/n per chunk (n-1 for all_gather/reduce_scatter) over a ring per "
               "channel; busbw -> min(link bw x protocol efficiency, channels x channel cap)",
    .supports = ring_supports,
    .start = ring_start,
};

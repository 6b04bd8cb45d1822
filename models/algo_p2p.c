/* models/algo_p2p.c - point-to-point collectives: alltoall as direct
 * pairwise transfers (every rank sends S/n to each peer at once, peers in
 * rotated order, as NCCL's p2p schedule does), sendrecv as nccl-tests'
 * ring-neighbour exchange (rank r sends S to r+1 while receiving from r-1),
 * gather as every rank's S/n to the root and scatter as the root's S/n to
 * every rank (NCCL 2.28's taskAppend makes them these sends and receives).
 * An uneven alltoall (coll_request.a2a_w: an MoE dispatch whose experts'
 * ranks receive unequal shares, or its combine) sends bytes/n x w[j] to j;
 * a traced one (PyTorch's all_to_all_single with split sizes) its matrix's
 * bytes/n x w[i n + j] from i to j.
 * Transfers are chunked at NCCL's P2P chunk size (512 KiB over NVLink, 128
 * KiB over PCIe or the network) with NCCL_STEPS slots in flight; they share
 * links with each other, so an alltoall's time is set by the most loaded
 * link (the NIC or the spine when it crosses servers). Across servers the
 * pairs take NCCL's PXN routes (fabric_route_p2p): out through the NIC on
 * the receiver's rail, via the local GPU on that rail over NVLink.
 *
 * An alltoall's pairs cross the fabric as cut-through pieces (a piece starts
 * on the next link when its head arrives, fabric_transfer_start_cut): the
 * message as one piece when it fits NCCL's 8-chunk window, else pieces of 4
 * chunks, 2 in flight. Thousands of flows share every link, so the coarser
 * grain averages out, and no chunk is stored whole at every hop. Chunks
 * store-and-forward instead for sendrecv, staged routes, static-ECMP network
 * routes and sys->exact (docs/collectives.md, "Cut-through pieces").
 */
#include "coll_priv.h"

typedef struct {
    coll_exec *x;
    int pending;
} p2p_rank;

static void on_pair_done(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    p2p_rank *p = ctx;
    if (--p->pending == 0)
        coll_exec_unit_done(p->x);
}

static bool direct_supports(const coll_system *sys, coll_kind kind, const char **why)
{
    (void)sys;
    if (!coll_is_p2p(kind)) {
        *why = "Direct implements alltoall, sendrecv, gather and scatter";
        return false;
    }
    return true;
}

/* the kinds of link r crosses, a bit per fab_link_kind */
static unsigned route_kinds(const fabric *f, const fab_route *r)
{
    unsigned m = 0;
    for (uint32_t i = 0; i < r->nhops; i++)
        m |= 1u << fabric_link(f, r->hop[i])->kind;
    return m;
}

uint64_t coll_p2p_chunk(const fabric *f, const fab_route *r)
{
    unsigned m = route_kinds(f, r);
    return (m & 1u << LINK_NVLINK) && !(m & 1u << LINK_NET) ? 524288 : 131072;
}

static void send_pair(coll_exec *x, p2p_rank *dst, int a, int b, uint64_t bytes)
{
    const coll_system *sys = x->sys;
    const fab_route *r = coll_exec_route_p2p(x, sys->gpu[a], sys->gpu[b], (uint32_t)a);
    if (!r)
        return;
    unsigned kinds = route_kinds(x->fab, r);
    bool net = kinds & 1u << LINK_NET, staged = kinds & 1u << LINK_MEM;
    uint64_t chunk = coll_p2p_chunk(x->fab, r);
    uint64_t wire = (uint64_t)((double)bytes / x->proto->wire_eff + 0.5);
    int64_t delay = (x->start - sim_engine_now(x->eng)) + coll_exec_step_lat_ps(x, r, ALGO_RING);
    dst->pending++;
    /* in chunks, as with --exact: sendrecv (a few flows: where two collide on
     * a spine they share it packet by packet, and whole pieces would queue
     * behind each other; adaptive routing spreads chunks, not one piece),
     * routes staged through host memory (NCCL's SHM transport reads a slot
     * while the next is written; a piece is written whole before it is read)
     * and network routes under static ECMP (collisions, as above) */
    if (x->sys->exact || x->req->kind != COLL_ALLTOALL || staged || (net && !fabric_adaptive(x->fab)))
        fabric_transfer_start(x->fab, r, FAB_NONE, wire, chunk, COLL_P2P_WINDOW, delay, on_pair_done, dst, 0);
    else
        fabric_transfer_start_cut(x->fab, r, wire, wire <= COLL_P2P_WINDOW * chunk ? COLL_P2P_WINDOW * chunk : 4 * chunk,
                                  2, delay, on_pair_done, dst, 0);
}

static void direct_start(coll_exec *x)
{
    const coll_system *sys = x->sys;
    int n = sys->nranks;
    p2p_rank *pr = g_new0(p2p_rank, n);
    g_ptr_array_add(x->garbage, pr);
    for (int r = 0; r < n; r++) {
        pr[r].x = x;
        x->units_left++;
    }
    if (x->req->kind == COLL_SENDRECV) {
        for (int r = 0; r < n; r++)
            send_pair(x, &pr[(r + 1) % n], r, (r + 1) % n, x->req->bytes);
        return;
    }
    uint64_t per_peer = x->req->bytes / (uint64_t)n;
    int root = x->req->root >= 0 && x->req->root < n ? x->req->root : 0;
    if (x->req->kind == COLL_GATHER || x->req->kind == COLL_SCATTER) {
        /* NCCL's taskAppend: every rank sends its block to the root, which
         * receives one from each (scatter: the mirror); the root's own block
         * a local copy. A pair is done when its receiver has it. */
        for (int r = 0; r < n; r++)
            if (r != root) {
                bool g = x->req->kind == COLL_GATHER;
                send_pair(x, &pr[g ? root : r], g ? r : root, g ? root : r, per_peer);
            }
    } else if (x->req->a2a_w) { /* uneven: a share per receiver (a dispatch), or per sender (its combine) */
        const double *w = x->req->a2a_w;
        for (int i = 1; i < n; i++)
            for (int r = 0; r < n; r++) {
                int d = (r + i) % n;
                double b = (double)x->req->bytes / n *
                           (x->req->a2a_matrix ? w[x->req->a2a_send ? d * n + r : r * n + d] : w[x->req->a2a_send ? r : d]);
                send_pair(x, &pr[d], r, d, (uint64_t)(b + 0.5));
            }
    } else {
        for (int i = 1; i < n; i++)
            for (int r = 0; r < n; r++)
                send_pair(x, &pr[(r + i) % n], r, (r + i) % n, per_peer);
    }
    for (int r = 0; r < n; r++) /* a rank whose peers had nothing to send */
        if (pr[r].pending == 0) {
            pr[r].pending = 1;
            on_pair_done(x->eng, &pr[r], 0);
        }
}

const coll_algo coll_algo_direct = {
    .name = "direct",
    .summary = "alltoall: n-1 concurrent transfers of S/n per rank; sendrecv: S to the next rank; "
               "time set by the most loaded link",
    .supports = direct_supports,
    .start = direct_start,
};

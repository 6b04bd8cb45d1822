/* models/algo_nvls_rsag.c - NVLS all_gather and reduce_scatter inside one
 * NVLink domain (NCCL 2.30, src/device/all_gather.h and reduce_scatter.h,
 * the oneNode paths).
 *
 * all_gather: each rank's thread block stores its own part of the output
 * to the multicast address (multimem store, NCCL's "Bcast through NVLS"),
 * one chunk at a time per channel; the switch writes it into every rank's
 * copy of the buffer, and each rank's gather warps copy what lands into the
 * user buffer (local, not simulated). Per GPU: S/n up, S down.
 *
 * reduce_scatter: each rank's scatter warps copy its input into its own
 * copy of the buffer (local), then for every chunk of rank r's shard the
 * switch reads that chunk from all n ranks, reduces, and hands the sum to r
 * (multimem load-reduce by r's block). Per GPU: S up (its part of every
 * shard, its own included), S/n down. Simulated per step k of a channel:
 * each rank sends its n parts up as one transfer, and when all n ranks'
 * step k is at the switch every owner gets its sum; the step is done for
 * all once every owner has it.
 *
 * Both run at NCCL's nvlsEfficiency (0.85 Hopper, 0.74 Blackwell) and keep
 * NCCL_STEPS chunks (steps) of a channel in flight per rank, a step's slot
 * coming back when its data has landed and no earlier than NCCL's NVLS
 * latency after it was sent (the round trip of algo_nvls.c). Chunks are
 * NCCL's (coll_nvls_chunk, on the whole operation's bytes as NCCL's
 * calcCollChunking counts them for these collectives). Ideal busbw:
 * all_gather = link x nvlsEff x (n-1)/n (the downlink carries S);
 * reduce_scatter the same bound on the uplink (docs/collectives.md,
 * "NVLS all_gather and reduce_scatter").
 */
#include "coll_priv.h"

typedef struct rs_chan rs_chan;

typedef struct {
    rs_chan *ch;
    int rank;
    uint32_t k_up, done;   /* steps sent; steps whose slot came back for good */
    uint32_t *landed;      /* [k] all_gather: ranks this owner's chunk k reached */
    coll_slots slots;      /* its NCCL_STEPS steps in flight (coll.c) */
    coll_held held;        /* its block copies each step up at its share of the links */
    bool busy, finished;
    const fab_route *up;   /* GPU -> switch */
    const fab_route *down; /* switch -> GPU */
} rs_unit;

struct rs_chan {
    coll_exec *x;
    int c;
    bool gather;        /* all_gather (else reduce_scatter) */
    uint64_t bytes;     /* payload per rank's part on this channel */
    uint64_t chunk;
    uint32_t nchunks;
    double scale;       /* wire bytes per payload byte (1 / nvlsEff) */
    sim_time rtt;
    int64_t flag_ps;    /* a block's flag per chunk sent (coll_nvls_flag_ps) */
    uint32_t *arrived;  /* [k] reduce_scatter: ranks whose step k is at the switch, then owners served */
    rs_unit *u;         /* per rank */
    fab_node_id sw;
};

static uint64_t payload(const rs_chan *c, uint32_t k)
{
    uint64_t off = (uint64_t)k * c->chunk;
    return c->bytes - off < c->chunk ? c->bytes - off : c->chunk;
}

static uint64_t wire(const rs_chan *c, uint64_t bytes) { return (uint64_t)((double)bytes * c->scale + 0.5); }

static void try_up(rs_unit *u);

static void unit_check(rs_unit *u)
{
    if (!u->finished && u->done == u->ch->nchunks) {
        u->finished = true;
        coll_exec_unit_done(u->ch->x);
    }
}

static void on_wake(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    rs_unit *u = ctx;
    u->slots.wake = false;
    try_up(u);
}

/* step k of u has landed where it goes: its slot comes back a round trip
 * after it was sent, and not before now */
static void step_landed(rs_unit *u, uint32_t k)
{
    coll_slots_landed(&u->slots, u->ch->x, k, u->ch->rtt);
    u->done++;
    try_up(u);
    unit_check(u);
}

/* all_gather: one rank's copy of owner u's chunk k landed */
static void on_ag_down(sim_engine *e, void *ctx, uint64_t k)
{
    (void)e;
    rs_unit *u = ctx;
    if (++u->landed[k] == (uint32_t)u->ch->x->sys->nranks)
        step_landed(u, (uint32_t)k);
}

/* all_gather: owner u's chunk k is at the switch: multicast to every rank */
static void on_ag_up(sim_engine *e, void *ctx, uint64_t k)
{
    (void)e;
    rs_unit *u = ctx;
    rs_chan *c = u->ch;
    if (coll_held_wait(&u->held, c->x, on_ag_up, u, k))
        return; /* at the switch, but its block is still copying and flagging */
    u->busy = false;
    for (int r = 0; r < c->x->sys->nranks; r++)
        coll_exec_send_hop(c->x, c->u[r].down, wire(c, payload(c, (uint32_t)k)), on_ag_down, u, k);
    try_up(u);
}

/* reduce_scatter: owner's sum of step k landed; every rank's step k is done
 * once all owners have theirs */
static void on_rs_down(sim_engine *e, void *ctx, uint64_t k)
{
    (void)e;
    rs_unit *owner = ctx;
    rs_chan *c = owner->ch;
    if (++c->arrived[k] == 2u * (uint32_t)c->x->sys->nranks) /* n parts up, then n sums down */
        for (int r = 0; r < c->x->sys->nranks; r++)
            step_landed(&c->u[r], (uint32_t)k);
}

/* reduce_scatter: rank u's n parts of step k are at the switch */
static void on_rs_up(sim_engine *e, void *ctx, uint64_t k)
{
    (void)e;
    rs_unit *u = ctx;
    rs_chan *c = u->ch;
    if (coll_held_wait(&u->held, c->x, on_rs_up, u, k))
        return;
    int n = c->x->sys->nranks;
    u->busy = false;
    if (++c->arrived[k] == (uint32_t)n) /* every rank's parts are in: the switch reduces each owner's */
        for (int r = 0; r < n; r++)
            coll_exec_send_hop(c->x, c->u[r].down, wire(c, payload(c, (uint32_t)k)), on_rs_down, &c->u[r], k);
    try_up(u);
}

static void try_up(rs_unit *u)
{
    rs_chan *c = u->ch;
    /* the slot of step k_up - 8 must be back (step_landed retries) */
    if (u->busy || u->k_up >= c->nchunks || !coll_slots_free(&u->slots, c->x, u->k_up, COLL_SLOTS, on_wake, u))
        return;
    uint32_t k = u->k_up++;
    u->busy = true;
    coll_slots_sent(&u->slots, c->x, k);
    uint32_t parts = c->gather ? 1u : (uint32_t)c->x->sys->nranks; /* a chunk and its flag per owner */
    uint64_t p = payload(c, k) * parts;
    coll_held_issue(&u->held, c->x, wire(c, p), (int64_t)parts * c->flag_ps);
    coll_exec_send_hop(c->x, u->up, wire(c, p), c->gather ? on_ag_up : on_rs_up, u, k);
}

void coll_nvls_rsag_start(coll_exec *x)
{
    const coll_system *sys = x->sys;
    int n = sys->nranks, nch = x->req->nchannels > 0 ? x->req->nchannels : 1;
    bool gather = x->req->kind == COLL_ALL_GATHER;
    x->start += sim_time_from_us(coll_hw_lat_us(0, ALGO_NVLS, PROTO_SIMPLE));
    uint64_t chunk = coll_nvls_chunk(x, nch, 1);
    fab_node_id sw = coll_nvls_switch_of(x, sys->gpu[0]);
    uint64_t part = (x->req->bytes + (uint64_t)n - 1) / (uint64_t)n; /* one rank's shard */
    GPtrArray *chans = g_ptr_array_new();
    for (int ci = 0; ci < nch; ci++) {
        rs_chan *c = g_new0(rs_chan, 1);
        g_ptr_array_add(x->garbage, c);
        *c = (rs_chan){.x = x, .c = ci, .gather = gather, .scale = 1.0 / coll_nvls_eff(sys->gpu_sm), .sw = sw,
                       .chunk = chunk, .rtt = sim_time_from_us(coll_hw_lat_us(0, ALGO_NVLS, PROTO_SIMPLE)),
                       .flag_ps = coll_nvls_flag_ps()};
        c->bytes = coll_share(part, nch, ci, 512);
        if (!c->bytes)
            continue;
        c->nchunks = (uint32_t)((c->bytes + chunk - 1) / chunk);
        c->arrived = g_new0(uint32_t, c->nchunks);
        c->u = g_new0(rs_unit, n);
        g_ptr_array_add(x->garbage, c->arrived);
        g_ptr_array_add(x->garbage, c->u);
        for (int r = 0; r < n; r++) {
            rs_unit *u = &c->u[r];
            *u = (rs_unit){.ch = c, .rank = r};
            u->landed = g_new0(uint32_t, c->nchunks);
            g_ptr_array_add(x->garbage, u->landed);
            u->up = coll_exec_route(x, sys->gpu[r], sw, (uint32_t)ci);
            u->down = coll_exec_route(x, sw, sys->gpu[r], (uint32_t)ci);
            if (!u->up || !u->down) {
                g_ptr_array_unref(chans);
                return;
            }
            x->units_left++;
        }
        g_ptr_array_add(chans, c);
    }
    /* every channel's block of a GPU copies up at its share of the GPU's
     * links, a flag per chunk (coll_held, as algo_nvls.c) */
    size_t m = (size_t)chans->len * (size_t)n, i = 0;
    coll_held **held = g_new(coll_held *, m ? m : 1);
    const fab_route **up = g_new(const fab_route *, m ? m : 1);
    for (guint j = 0; j < chans->len; j++)
        for (int r = 0; r < n; r++, i++) {
            held[i] = &((rs_chan *)chans->pdata[j])->u[r].held;
            up[i] = ((rs_chan *)chans->pdata[j])->u[r].up;
        }
    coll_held_init(x, held, up, m);
    g_free(held);
    g_free(up);
    for (guint j = 0; j < chans->len; j++)
        for (int r = 0; r < n; r++)
            try_up(&((rs_chan *)chans->pdata[j])->u[r]);
    g_ptr_array_unref(chans);
}

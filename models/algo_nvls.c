/* models/algo_nvls.c - NVLink SHARP all-reduce: the switch reduces and
 * multicasts.
 *
 * Per channel the data is cut into chunks; chunk k is owned by a head rank.
 * Every rank sends chunk k up to the NVSwitch once; when all n contributions
 * are in, the switch reduces them and multicasts the result down to every
 * rank. The head's multimem load-reduce result (down) and store (up) add
 * 1/n of the chunk each way, so each GPU moves S(1+1/n) up and down instead
 * of the ring's 2(n-1)/n S each way. Multimem traffic runs at NCCL's
 * nvlsEfficiency (0.85 Hopper, 0.74 Blackwell, tuning.cc) of the link.
 * Ideal busbw = link bw x nvlsEff x 2(n-1)/n / (1 + 1/n).
 */
#include "coll_priv.h"

#define NVLS_CHUNK (128 * 1024) /* NCCL_NVLS_CHUNKSIZE */
#define NVLS_WINDOW 4           /* chunks in flight per rank and channel */

typedef struct nvls_chan nvls_chan;

typedef struct {
    nvls_chan *ch;
    int rank;
    uint32_t k_up, up_done, down_done;
    bool busy, done;
} nvls_unit;

struct nvls_chan {
    coll_exec *x;
    uint64_t bytes;     /* this channel's payload */
    uint32_t nchunks;
    uint32_t *arrived;  /* per chunk: contributions at the switch */
    const fab_route **up, **down; /* per rank */
    nvls_unit *u;
    double scale;       /* wire bytes per payload byte */
};

static uint64_t chunk_payload(const nvls_chan *c, uint32_t k)
{
    uint64_t off = (uint64_t)k * NVLS_CHUNK;
    return c->bytes - off < NVLS_CHUNK ? c->bytes - off : NVLS_CHUNK;
}

static void up_try(nvls_unit *u);

static void check_done(nvls_unit *u)
{
    if (!u->done && u->down_done == u->ch->nchunks && u->up_done == u->ch->nchunks) {
        u->done = true;
        coll_exec_unit_done(u->ch->x);
    }
}

static void on_down(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    nvls_unit *u = ctx;
    u->down_done++;
    up_try(u);
    check_done(u);
}

static void on_up(sim_engine *e, void *ctx, uint64_t k)
{
    (void)e;
    nvls_unit *u = ctx;
    nvls_chan *c = u->ch;
    coll_exec *x = c->x;
    u->busy = false;
    u->up_done++;
    if (++c->arrived[k] == (uint32_t)x->sys->nranks) {
        uint64_t wire = (uint64_t)((double)chunk_payload(c, (uint32_t)k) * c->scale + 0.5);
        for (int r = 0; r < x->sys->nranks; r++)
            fabric_transfer_start(x->fab, c->down[r], FAB_NONE, wire, coll_exec_fabric_chunk(wire), 0, 0,
                                  on_down, &c->u[r], k);
    }
    up_try(u);
    check_done(u);
}

static void up_try(nvls_unit *u)
{
    nvls_chan *c = u->ch;
    coll_exec *x = c->x;
    if (u->busy || u->k_up >= c->nchunks || u->k_up - u->down_done >= NVLS_WINDOW)
        return;
    uint32_t k = u->k_up++;
    u->busy = true;
    uint64_t wire = (uint64_t)((double)chunk_payload(c, k) * c->scale + 0.5);
    sim_time now = sim_engine_now(x->eng);
    fabric_transfer_start(x->fab, c->up[u->rank], FAB_NONE, wire, coll_exec_fabric_chunk(wire), 0,
                          now < x->start ? x->start - now : 0, on_up, u, k);
}

static bool nvls_supports(const coll_system *sys, coll_kind kind, const char **why)
{
    if (!sys->nvls || sys->nvswitch == FAB_NONE) {
        *why = "no NVLS-capable NVSwitch joins the ranks";
        return false;
    }
    if (sys->nnodes > 1) {
        *why = "multi-node NVLS needs CollNet (NVLS+SHARP), not modelled; use NVLSTree or Ring";
        return false;
    }
    if (kind != COLL_ALL_REDUCE) {
        *why = "modelled for all_reduce only";
        return false;
    }
    return true;
}

static void nvls_start(coll_exec *x)
{
    const coll_system *sys = x->sys;
    int n = sys->nranks, nch = x->req->nchannels > 0 ? x->req->nchannels : 1;
    double eff = sys->gpu_sm >= 100 ? 0.74 : 0.85;
    /* NCCL's NVLS latency (hwLat NVLINK/NVLS/Simple, 25 us): multicast
     * object setup and the switch's reduction round trip, paid once */
    x->start += sim_time_from_us(coll_hw_lat_us(0, ALGO_NVLS, PROTO_SIMPLE));
    for (int ci = 0; ci < nch; ci++) {
        nvls_chan *c = g_new0(nvls_chan, 1);
        g_ptr_array_add(x->garbage, c);
        c->x = x;
        c->bytes = coll_share(x->req->bytes, nch, ci, 512);
        if (!c->bytes)
            continue;
        c->nchunks = (uint32_t)((c->bytes + NVLS_CHUNK - 1) / NVLS_CHUNK);
        c->scale = (1.0 + 1.0 / n) / eff;
        c->arrived = g_new0(uint32_t, c->nchunks);
        g_ptr_array_add(x->garbage, c->arrived);
        c->up = g_new0(const fab_route *, n);
        c->down = g_new0(const fab_route *, n);
        c->u = g_new0(nvls_unit, n);
        g_ptr_array_add(x->garbage, c->up);
        g_ptr_array_add(x->garbage, c->down);
        g_ptr_array_add(x->garbage, c->u);
        for (int r = 0; r < n; r++) {
            c->up[r] = coll_exec_route(x, sys->gpu[r], sys->nvswitch, 0);
            c->down[r] = coll_exec_route(x, sys->nvswitch, sys->gpu[r], 0);
            if (!c->up[r] || !c->down[r])
                return;
            c->u[r] = (nvls_unit){.ch = c, .rank = r};
            x->units_left++;
        }
        for (int r = 0; r < n; r++)
            up_try(&c->u[r]);
    }
}

const coll_algo coll_algo_nvls = {
    .name = "nvls",
    .summary = "each rank sends S up once, the switch reduces and multicasts S down; "
               "busbw = bw x nvlsEff x 2(n-1)/n / (1+1/n)",
    .supports = nvls_supports,
    .start = nvls_start,
};

/* models/p2psim.c - p2pBandwidthLatencyTest simulated on the fabric. */
#include "p2psim.h"

#include <math.h>
#include <string.h>

#include "sim/engine.h"

void p2psim_defaults(p2psim_params *p)
{
    *p = (p2psim_params){.copy_bytes = P2PSIM_COPY_BYTES, .chunk_bytes = P2PSIM_CHUNK_BYTES,
                         .lat_bytes = P2PSIM_LAT_BYTES, .window = P2PSIM_WINDOW,
                         .overhead_us = P2PSIM_COPY_OVERHEAD_US, .diag_factor = P2PSIM_DIAG_HBM_FACTOR};
}

/* One copy. A host-staged copy (P2P off for the pair) goes chunk by chunk
 * through the source socket's host memory in two serial legs: the chunk is
 * copied device to host, then host to device, and only then does the next
 * chunk start (one pinned staging buffer). The test's copies (one, or two
 * opposite ones) are issued together and staged alike, so they move in
 * step: all write a chunk to host memory, then all read it back. Measured
 * file 22 fits this: the two GPUs share their switch's uplink, so two
 * opposite copies write at the same time and read at the same time, each
 * leg at half the link: one way 6.1 GB/s (5.7 measured), both ways 6.1
 * together (6.1). A pipelined route would give the link's 12.2 one way
 * (docs/validation-p2p.md). */
typedef struct {
    fabric *f;
    const fab_route *route;
    const fab_route *leg[2]; /* staged: to host memory, from it; else NULL */
    sim_time done;
} p2p_copy;

/* The staged copies of one test, moving in step. */
typedef struct {
    p2p_copy *c;
    int n, pending, phase;
    uint64_t left, chunk, cur;
} p2p_stage;

static void on_copy(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)arg;
    ((p2p_copy *)ctx)->done = sim_engine_now(e);
}

/* A leg moves its staging chunk in sixteenths, so the hops overlap as a
 * DMA stream does (whole chunks would be store-and-forward per hop). */
static uint64_t piece(uint64_t bytes) { return bytes / 16 > 0 ? bytes / 16 : 1; }

/* Every copy's leg of this phase has landed (or the start): the next one. */
static void on_leg(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)arg;
    p2p_stage *s = ctx;
    if (s->pending > 0 && --s->pending > 0)
        return;
    if (s->phase == 0) {
        if (s->left == 0) {
            for (int k = 0; k < s->n; k++)
                s->c[k].done = sim_engine_now(e);
            return;
        }
        s->cur = s->left < s->chunk ? s->left : s->chunk;
        s->left -= s->cur;
    }
    for (int k = 0; k < s->n; k++)
        fabric_transfer_start(s->c[k].f, s->c[k].leg[s->phase], FAB_NONE, s->cur, piece(s->cur), 0, 0, on_leg, s,
                              0);
    s->pending = s->n;
    s->phase ^= 1;
}

/* The route of a copy a -> b, or its two legs through the source socket's
 * host memory when staged (force_staged: also a route the fabric keeps
 * direct, NVLink: the fabric keeps NVLink pairs direct with P2P off, as NCCL
 * does, but the sample's P2P=Disabled copies go through the host for every
 * pair). */
static gboolean copy_init(p2p_copy *c, fabric *f, fab_node_id a, fab_node_id b, bool force_staged, GError **err)
{
    *c = (p2p_copy){.f = f};
    const fab_route *r = fabric_route(f, a, b, 0, err);
    if (!r)
        return FALSE;
    c->route = r;
    if (a == b || (!force_staged && !fabric_route_staged(f, r)))
        return TRUE;
    fab_node_id mem = fabric_socket_mem(f, a);
    if (mem == FAB_NONE)
        return TRUE;
    c->leg[0] = fabric_route(f, a, mem, 0, err);
    c->leg[1] = c->leg[0] ? fabric_route(f, mem, b, 0, err) : NULL;
    return c->leg[1] != NULL;
}

/* Runs `n` (1 or 2) copies src[k] -> dst[k] of `bytes` together; returns
 * the time the last one finished, ps, or -1 with *err set. */
static int64_t run_copies(fabric *f, const fab_node_id *src, const fab_node_id *dst, int n, uint64_t bytes,
                          uint64_t chunk, uint32_t window, bool force_staged, GError **err)
{
    p2p_copy c[2] = {{0}, {0}};
    int64_t end = 0;
    for (int k = 0; k < n; k++)
        if (!copy_init(&c[k], f, src[k], dst[k], force_staged, err)) {
            end = -1;
            goto out;
        }
    sim_engine *e = sim_engine_new(1);
    fabric_attach(f, e);
    p2p_stage stage = {.c = c, .n = n, .left = bytes, .chunk = chunk};
    if (c[0].leg[0]) /* opposite copies of one pair: both staged or neither */
        on_leg(e, &stage, 0);
    else
        for (int k = 0; k < n; k++)
            fabric_transfer_start(f, c[k].route, FAB_NONE, bytes, chunk, window, 0, on_copy, &c[k], 0);
    int rc = sim_engine_run(e);
    sim_engine_free(e);
    if (rc != SIM_OK) {
        g_set_error(err, FABRIC_ERROR, FABRIC_ERROR_SIM, "copy of %" G_GUINT64_FORMAT " bytes stopped: %s", bytes,
                    sim_engine_strerror(rc));
        return -1;
    }
    for (int k = 0; k < n; k++)
        if ((int64_t)c[k].done > end)
            end = (int64_t)c[k].done;
out:
    return end;
}

double p2psim_uni_GBps(fabric *f, fab_node_id a, fab_node_id b, const p2psim_params *p, GError **err)
{
    int64_t ps = run_copies(f, &a, &b, 1, p->copy_bytes, p->chunk_bytes, p->window, p->force_staged, err);
    if (ps <= 0)
        return ps < 0 ? NAN : INFINITY;
    return (double)p->copy_bytes / ((double)ps * 1e-12) / 1e9;
}

double p2psim_bi_GBps(fabric *f, fab_node_id a, fab_node_id b, const p2psim_params *p, GError **err)
{
    fab_node_id s[2] = {a, b}, d[2] = {b, a};
    int64_t ps = run_copies(f, s, d, 2, p->copy_bytes, p->chunk_bytes, p->window, p->force_staged, err);
    if (ps <= 0)
        return ps < 0 ? NAN : INFINITY;
    return 2.0 * (double)p->copy_bytes / ((double)ps * 1e-12) / 1e9;
}

double p2psim_lat_us(fabric *f, fab_node_id a, fab_node_id b, const p2psim_params *p, GError **err)
{
    if (a == b)
        return p->overhead_us;
    const fab_route *r = fabric_route(f, a, b, 0, err);
    if (!r)
        return NAN;
    int copies = fabric_route_staged(f, r) || p->force_staged ? 2 : 1;
    int64_t ps = run_copies(f, &a, &b, 1, p->lat_bytes, p->lat_bytes, 1, p->force_staged, err);
    if (ps < 0)
        return NAN;
    return (double)ps * 1e-6 + copies * p->overhead_us;
}

gboolean p2psim_fill(fabric *f, const fab_node_id *gpus, int n, double hbm_Bps, bool enabled,
                     const p2psim_params *p, double *uni, double *bi, double *lat, double *con,
                     GError **err)
{
    p2psim_params q = *p;
    q.force_staged = !enabled;
    p = &q;
    double diag = hbm_Bps * p->diag_factor / 1e9;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            int k = i * n + j;
            if (i == j) {
                uni[k] = diag;
                bi[k] = diag;
                lat[k] = p->overhead_us;
                if (con)
                    con[k] = 1;
                continue;
            }
            if (con) {
                const fab_route *r = fabric_route(f, gpus[i], gpus[j], 0, err);
                if (!r)
                    return FALSE;
                con[k] = fabric_route_staged(f, r) ? 0 : 1;
            }
            uni[k] = p2psim_uni_GBps(f, gpus[i], gpus[j], p, err);
            if (isnan(uni[k]))
                return FALSE;
            /* symmetric pairs are simulated once */
            if (j < i) {
                bi[k] = bi[j * n + i];
            } else {
                bi[k] = p2psim_bi_GBps(f, gpus[i], gpus[j], p, err);
                if (isnan(bi[k]))
                    return FALSE;
            }
            lat[k] = p2psim_lat_us(f, gpus[i], gpus[j], p, err);
            if (isnan(lat[k]))
                return FALSE;
        }
    }
    return TRUE;
}

/* models/p2psim.c - p2pBandwidthLatencyTest simulated on the fabric. */
#include "p2psim.h"

#include <math.h>

#include "sim/engine.h"

void p2psim_defaults(p2psim_params *p)
{
    *p = (p2psim_params){.copy_bytes = P2PSIM_COPY_BYTES, .chunk_bytes = P2PSIM_CHUNK_BYTES,
                         .lat_bytes = P2PSIM_LAT_BYTES, .window = P2PSIM_WINDOW,
                         .overhead_us = P2PSIM_COPY_OVERHEAD_US, .diag_factor = P2PSIM_DIAG_HBM_FACTOR};
}

/* One copy. A host-staged copy (P2P off for the pair) is done by the driver
 * as a device-to-host copy into host memory followed by a host-to-device
 * copy: the second leg starts when the first has landed (measured file 22:
 * D2H 13.2 and H2D 12.2 GB/s give 1/(1/13.2+1/12.2) = 6.3 GB/s serially,
 * the sample measured 5.7), so the legs are simulated one after the other
 * rather than as one pipelined route through host memory. */
typedef struct {
    fabric *f;
    const fab_route *leg[2];
    uint64_t bytes, chunk;
    uint32_t window;
    sim_time done;
} p2p_copy;

static void on_leg(sim_engine *e, void *ctx, uint64_t arg)
{
    p2p_copy *c = ctx;
    if (arg == 0 && c->leg[1])
        fabric_transfer_start(c->f, c->leg[1], FAB_NONE, c->bytes, c->chunk, c->window, 0, on_leg, c, 1);
    else
        c->done = sim_engine_now(e);
}

static fab_node_id staging_node(const fabric *f, const fab_route *r)
{
    for (uint32_t h = 0; h < r->nhops; h++) {
        fab_node_id d = fabric_link_dst(f, r->hop[h]);
        if (d != FAB_NONE && d < fabric_node_count(f) && fabric_node(f, d)->kind == FAB_HOSTMEM)
            return d;
    }
    return FAB_NONE;
}

/* The source socket's host memory (force_staged: the fabric keeps NVLink
 * pairs direct even with P2P off, as NCCL does, but the sample's
 * P2P=Disabled copies go through the host for every pair). */
static fab_node_id socket_mem(const fabric *f, fab_node_id a)
{
    const fab_node_desc *g = fabric_node(f, a);
    for (fab_node_id i = 0; i < fabric_node_count(f); i++) {
        const fab_node_desc *d = fabric_node(f, i);
        if (d->kind == FAB_HOSTMEM && d->server == g->server && d->socket == g->socket)
            return i;
    }
    return FAB_NONE;
}

static gboolean copy_init(p2p_copy *c, fabric *f, fab_node_id a, fab_node_id b, bool force_staged, GError **err)
{
    *c = (p2p_copy){.f = f};
    const fab_route *r = fabric_route(f, a, b, 0, err);
    if (!r)
        return FALSE;
    fab_node_id mem = fabric_route_staged(f, r) ? staging_node(f, r) : FAB_NONE;
    if (mem == FAB_NONE && force_staged && a != b)
        mem = socket_mem(f, a);
    if (mem == FAB_NONE) {
        c->leg[0] = r;
        return TRUE;
    }
    return (c->leg[0] = fabric_route(f, a, mem, 0, err)) && (c->leg[1] = fabric_route(f, mem, b, 0, err));
}

/* Runs `n` (1 or 2) copies src[k] -> dst[k] of `bytes` together; returns
 * the time the last one finished, ps, or -1 with *err set. */
static int64_t run_copies(fabric *f, const fab_node_id *src, const fab_node_id *dst, int n, uint64_t bytes,
                          uint64_t chunk, uint32_t window, bool force_staged, GError **err)
{
    p2p_copy c[2];
    for (int k = 0; k < n; k++) {
        if (!copy_init(&c[k], f, src[k], dst[k], force_staged, err))
            return -1;
        c[k].bytes = bytes;
        c[k].chunk = chunk;
        c[k].window = window;
    }
    sim_engine *e = sim_engine_new(1);
    fabric_attach(f, e);
    for (int k = 0; k < n; k++)
        fabric_transfer_start(f, c[k].leg[0], FAB_NONE, bytes, chunk, window, 0, on_leg, &c[k], 0);
    sim_engine_run(e);
    sim_engine_free(e);
    int64_t end = 0;
    for (int k = 0; k < n; k++)
        if ((int64_t)c[k].done > end)
            end = (int64_t)c[k].done;
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

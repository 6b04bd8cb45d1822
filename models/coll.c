/* models/coll.c - runs one collective: launch overhead, base latency, the
 * chosen algorithm's state machines on the fabric, and the result. */
#include "coll_priv.h"
#include "models/compute.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(conveyor-coll-error-quark, coll_error)

static const char *const algo_names[ALGO_COUNT] = {"Tree", "Ring", "CollNetDirect", "CollNetChain",
                                                   "NVLS", "NVLSTree", "PAT", "Direct"};

const char *coll_algo_name(coll_algo_id a)
{
    g_assert(a >= 0 && a < ALGO_COUNT);
    return algo_names[a];
}

int coll_algo_from_name(const char *s)
{
    for (int a = 0; a < ALGO_COUNT; a++)
        if (s && !g_ascii_strcasecmp(s, algo_names[a]))
            return a;
    return -1;
}

static const coll_algo *algo_impl(coll_algo_id a)
{
    switch (a) {
    case ALGO_RING: return &coll_algo_ring;
    case ALGO_TREE: return &coll_algo_tree;
    case ALGO_PAT: return &coll_algo_pat;
    case ALGO_COLLNET_DIRECT: return &coll_algo_collnet;
    case ALGO_COLLNET_CHAIN: return &coll_algo_collnet_chain;
    case ALGO_NVLS: return &coll_algo_nvls;
    case ALGO_NVLS_TREE: return &coll_algo_nvls_tree;
    case ALGO_DIRECT: return &coll_algo_direct;
    default: return NULL;
    }
}

/* NCCL's search for a communicator of one GPU per server (the
 * data-parallel group of a rail): the path GPU -> NIC in NCCL's units (PCIe
 * x16: Gen3 12, Gen4 24, Gen5 48 GB/s, i.e. 24/31.5 of the raw rate; a NIC
 * its Gb/s / 8), the highest speed of search.cc's inter-node array that
 * fits it, as many channels of that speed as fit, then ncclTopoDupChannels
 * (x2 unless the speed < 25, or sm > 80, speed < 50 and > 4 channels),
 * connectRings' x2 and Hopper's multi-node x2 (speed > 45, < 16 channels):
 * A100 + HDR 200G -> 24 GB/s, 1 channel, 2 after connectRings; H100 + NDR
 * 400G -> 48, 1, 2 (dup, 24 each), 4 (nccl-model.md s1). */
static int net_channels(const coll_system *sys)
{
    static const double sp80[] = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
    static const double sp90[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
    const fab_route *r = fabric_route(sys->fab, sys->gpu[0], sys->gpu[1], 0, NULL);
    double bw = 1e9;
    for (uint32_t h = 0; r && h < r->nhops; h++) {
        const fab_link_desc *d = fabric_link(sys->fab, r->hop[h]);
        if (d->kind == LINK_PCIE)
            bw = fmin(bw, d->bw_Bps / 1e9 * 24.0 / 31.5);
        else if (d->kind == LINK_NET)
            bw = fmin(bw, d->bw_Bps / 1e9);
    }
    if (!r || bw >= 1e9)
        return 2;
    const double *sp = sys->gpu_sm >= 90 ? sp90 : sp80;
    size_t ns = sys->gpu_sm >= 90 ? G_N_ELEMENTS(sp90) : G_N_ELEMENTS(sp80), i = 0;
    while (i + 1 < ns && sp[i] > bw)
        i++;
    double speed = sp[i];
    int nch = (int)(bw / speed);
    nch = nch < 1 ? 1 : nch;
    if (!(speed < 25) && !(sys->gpu_sm > 80 && speed < 50 && nch > 4))
        nch *= 2, speed /= 2;
    nch *= 2;
    if (sys->gpu_sm >= 90 && speed > 45 && nch < 16)
        nch *= 2;
    return nch < 32 ? nch : 32;
}

int coll_channels(const coll_system *sys, coll_algo_id algo)
{
    /* NCCL's search (nccl-model.md s1): NVSwitch A100 24, H100 24, H800 16;
     * NVLS 16 on Hopper, 24/32 on Blackwell; PCIe rings 2; one GPU per
     * server: net_channels. */
    const fabric *f = sys->fab;
    if (algo == ALGO_NVLS || algo == ALGO_NVLS_TREE)
        return sys->gpu_sm >= 100 ? (sys->nnodes > 1 ? 32 : 24) : 16;
    if (sys->ppn == 1 && sys->nnodes > 1 && sys->nranks > 1)
        return net_channels(sys);
    int links = 0;
    if (sys->nranks > 1) {
        const fab_link_id *out;
        uint32_t n;
        fabric_node_links(f, sys->gpu[0], &out, &n);
        for (uint32_t i = 0; i < n; i++)
            if (fabric_link(f, out[i])->kind == LINK_NVLINK)
                links += fabric_link(f, out[i])->count > 0 ? fabric_link(f, out[i])->count : 1;
    }
    if (links == 0)
        return 2;
    int ch = 2 * links;
    int cap = sys->gpu_sm >= 100 ? 32 : 24;
    return ch < cap ? ch : cap;
}

static const fab_route *route_or_fail(coll_exec *x, const fab_route *r, GError *e);

const fab_route *coll_exec_route(coll_exec *x, fab_node_id a, fab_node_id b, uint32_t flow)
{
    GError *e = NULL;
    const fab_route *r = fabric_route(x->fab, a, b, flow, &e);
    return route_or_fail(x, r, e);
}

const fab_route *coll_exec_route_p2p(coll_exec *x, fab_node_id a, fab_node_id b, uint32_t flow)
{
    GError *e = NULL;
    const fab_route *r = fabric_route_p2p(x->fab, a, b, flow, &e);
    return route_or_fail(x, r, e);
}

/* r, noted for the collective; or NULL with the error e where it belongs */
static const fab_route *route_or_fail(coll_exec *x, const fab_route *r, GError *e)
{
    if (!r) {
        /* during coll_launch: the launch fails; later: the caller's sink */
        GError **sink = x->starting ? &x->err : x->async_err;
        if (sink && !*sink)
            *sink = e;
        else
            g_error_free(e);
        if (sink != &x->err)
            sim_engine_stop(x->eng);
    }
    coll_exec_note_route(x, r);
    return r;
}

void coll_exec_note_route(coll_exec *x, const fab_route *r)
{
    if (x->seen && r)
        g_hash_table_add(x->seen, (gpointer)r);
}

/* NCCL's P2P transport reads from the sending GPU instead of writing to the
 * receiving one for the Simple protocol between two compute capability 8.0
 * GPUs joined by NVLink only (ncclTopoCheckP2p, src/graph/paths.cc: "Enable
 * P2P Read for Ampere/NVLink only"). */
bool coll_p2p_reads(const coll_system *sys, const fabric *f, const fab_route *r, coll_proto_id p)
{
    if (sys->gpu_sm != 80 || p != PROTO_SIMPLE || r->nhops == 0)
        return false;
    for (uint32_t i = 0; i < r->nhops; i++)
        if (fabric_link(f, r->hop[i])->kind != LINK_NVLINK)
            return false;
    return true;
}

int64_t coll_route_step_lat_ps(const coll_system *sys, const fabric *f, const fab_route *r, coll_algo_id algo,
                               coll_proto_id proto)
{
    int hw = 1; /* PCI */
    for (uint32_t i = 0; i < r->nhops; i++) {
        fab_link_kind k = fabric_link(f, r->hop[i])->kind;
        if (k == LINK_NET) {
            hw = 2;
            break;
        }
        if (k == LINK_NVLINK)
            hw = 0;
    }
    double us = coll_hw_lat_us(hw, algo, proto);
    int64_t wire = fabric_route_lat_ps(f, r);
    int64_t lat = (int64_t)(us * 1e6) - wire;
    if (lat < 0)
        lat = 0;
    /* a read first sends its request across the route: one more wire
     * latency before the data (which the fabric then carries back) moves */
    if (coll_p2p_reads(sys, f, r, proto))
        lat += wire;
    return lat;
}

int64_t coll_exec_step_lat_ps(coll_exec *x, const fab_route *r, coll_algo_id algo)
{
    return coll_route_step_lat_ps(x->sys, x->fab, r, algo, x->req->proto);
}

/* The rank on GPU node g: server-major, local index within (the ranks' order,
 * topo_coll_system), checked; a search for any other order. */
static int rank_of_gpu(const coll_system *sys, fab_node_id g)
{
    const fab_node_desc *d = fabric_node(sys->fab, g);
    int r = d->server * sys->ppn + d->local;
    if (d->server >= 0 && d->local >= 0 && d->local < sys->ppn && r < sys->nranks && sys->gpu[r] == g)
        return r;
    for (r = 0; r < sys->nranks; r++)
        if (sys->gpu[r] == g)
            return r;
    return -1;
}

bool coll_conn_of(const coll_system *sys, int a, int b, uint32_t flow, bool pxn, coll_conn *out, GError **err)
{
    fabric *f = sys->fab;
    const fab_route *r = (pxn ? fabric_route_p2p : fabric_route)(f, sys->gpu[a], sys->gpu[b], flow, err);
    if (!r)
        return false;
    *out = (coll_conn){.kind = COLL_CONN_P2P, .net_dev = -1, .proxy = -1, .recv_dev = -1};
    fab_node_id via = sys->gpu[a]; /* the last GPU before the network */
    for (uint32_t i = 0; i < r->nhops; i++) {
        const fab_link_desc *d = fabric_link(f, r->hop[i]);
        fab_node_id src = fabric_link_src(f, r->hop[i]);
        if (d->kind == LINK_NET) {
            out->kind = COLL_CONN_NET;
            out->net_dev = fabric_node(f, src)->local;
            int p = rank_of_gpu(sys, via);
            out->proxy = p >= 0 && p != a ? p : -1;
            out->gdr = fabric_nic_beside(f, via, src);
            for (uint32_t j = r->nhops; j-- > i;) { /* the NIC the last network hop lands on */
                fab_node_id dst = fabric_link_dst(f, r->hop[j]);
                if (fabric_link(f, r->hop[j])->kind == LINK_NET && fabric_node(f, dst)->kind == FAB_NIC) {
                    out->recv_dev = fabric_node(f, dst)->local;
                    out->recv_gdr = fabric_nic_beside(f, sys->gpu[b], dst);
                    break;
                }
            }
            return true;
        }
        if (d->kind != LINK_SERVER && fabric_node(f, src)->kind == FAB_GPU) /* (a private server has no nodes) */
            via = src;
    }
    if (fabric_route_staged(f, r))
        out->kind = COLL_CONN_SHM;
    else
        out->read = coll_p2p_reads(sys, f, r, PROTO_SIMPLE);
    return true;
}

bool coll_route_crosses_net(const fabric *f, const fab_route *r)
{
    for (uint32_t i = 0; i < r->nhops; i++)
        if (fabric_link(f, r->hop[i])->kind == LINK_NET)
            return true;
    return false;
}

/* r reaches its peer GPU over NVLink only (NVLink and NVSwitch hops; no
 * PCIe, host memory or network) */
static bool route_nvlink(const fabric *f, const fab_route *r)
{
    if (!r->nhops)
        return false;
    for (uint32_t i = 0; i < r->nhops; i++)
        if (fabric_link(f, r->hop[i])->kind != LINK_NVLINK)
            return false;
    return true;
}

bool coll_nvlink_write(const coll_exec *x, const fab_route *r)
{
    return route_nvlink(x->fab, r) && !coll_p2p_reads(x->sys, x->fab, r, x->req->proto);
}

bool coll_nodes_alike(const coll_system *sys)
{
    if (sys->nranks != sys->nnodes * sys->ppn)
        return false;
    const fabric *f = sys->fab;
    const fab_node_desc *a0 = fabric_node(f, sys->gpu[0]);
    for (int j = 1; j < sys->nnodes; j++) {
        const fab_node_desc *b0 = fabric_node(f, sys->gpu[j * sys->ppn]);
        if (b0->server < 0 || b0->server == fabric_node(f, sys->gpu[(j - 1) * sys->ppn])->server)
            return false;
        for (int l = 0; l < sys->ppn; l++) {
            const fab_node_desc *a = fabric_node(f, sys->gpu[l]), *b = fabric_node(f, sys->gpu[j * sys->ppn + l]);
            if (a->local != b->local || a->kind != b->kind || b->server - b0->server != a->server - a0->server)
                return false;
        }
    }
    return true;
}

/* Adds `delta` to (or, with clear, zeroes) entry 2q + slot of the tally for
 * every hop q of block b's routes. */
static void tally_block(const fabric *f, const coll_block_routes *b, uint32_t *cnt, int slot, bool clear)
{
    for (int j = 0; j < b->nroutes; j++)
        for (uint32_t h = 0; b->route[j] && h < b->route[j]->nhops; h++) {
            uint32_t *c = &cnt[2 * (size_t)fabric_link_queue(f, b->route[j]->hop[h]) + slot];
            *c = clear ? 0 : *c + 1;
        }
}

/* Counts per link in the fabric's tally: [2q] routes of all blocks on queue
 * link q, [2q + 1] this block's. Was two GHashTables: on a 500-node DGX A100
 * Tree all_reduce (1M) 370 M of the run's 3,178 M instructions (callgrind).
 * Every share is > 0 (links have bw and eff > 0), so the minimum does not
 * depend on the order the links are visited in. */
void coll_link_shares(coll_exec *x, const coll_block_routes *b, size_t n, double *share)
{
    fabric *f = x->fab;
    uint32_t *cnt = fabric_link_tally(f);
    for (size_t i = 0; i < n; i++)
        tally_block(f, &b[i], cnt, 0, false);
    for (size_t i = 0; i < n; i++) {
        tally_block(f, &b[i], cnt, 1, false);
        share[i] = 0;
        for (int j = 0; j < b[i].nroutes; j++) {
            for (uint32_t h = 0; b[i].route[j] && h < b[i].route[j]->nhops; h++) {
                fab_link_id l = fabric_link_queue(f, b[i].route[j]->hop[h]);
                guint mine = cnt[2 * (size_t)l + 1], users = cnt[2 * (size_t)l];
                if (!mine)
                    continue; /* counted at its first hop of the block */
                cnt[2 * (size_t)l + 1] = 0;
                const fab_link_desc *d = fabric_link(f, l);
                double s = d->bw_Bps * d->eff * mine / users;
                if (share[i] == 0 || s < share[i])
                    share[i] = s;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        tally_block(f, &b[i], cnt, 0, true);
}

void coll_held_init(coll_exec *x, coll_held *const *h, const fab_route *const *routes, size_t n)
{
    coll_block_routes *b = g_new0(coll_block_routes, n ? n : 1);
    double *share = g_new0(double, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        b[i] = (coll_block_routes){.route = {routes[i]}, .nroutes = routes[i] ? 1 : 0};
    coll_link_shares(x, b, n, share);
    for (size_t i = 0; i < n; i++)
        *h[i] = (coll_held){.share_Bps = share[i], .wire_lat = routes[i] ? fabric_route_lat_ps(x->fab, routes[i]) : 0};
    g_free(share);
    g_free(b);
}

int64_t coll_held_copy_ps(const coll_held *h, double wire)
{
    return sim_time_for_bytes(wire, h->share_Bps) + h->wire_lat;
}

void coll_held_issue(coll_held *h, coll_exec *x, uint64_t wire, int64_t lead_ps)
{
    if (h->share_Bps <= 0)
        return;
    sim_time now = sim_engine_now(x->eng);
    h->t_min = now + lead_ps + (now < x->start ? x->start - now : 0) + coll_held_copy_ps(h, (double)wire);
}

bool coll_held_wait(coll_held *h, coll_exec *x, sim_handler fn, void *ctx, uint64_t arg)
{
    if (h->share_Bps <= 0 || sim_engine_now(x->eng) >= h->t_min)
        return false;
    sim_engine_at(x->eng, h->t_min, fn, ctx, arg);
    h->t_min = 0;
    return true;
}

int64_t coll_nvls_flag_ps(void) { return (int64_t)(coll_hw_lat_us(0, ALGO_RING, PROTO_LL) * 1e6 + 0.5); }

uint64_t coll_exec_fabric_chunk(uint64_t wire)
{
    uint64_t c = (wire + 3) / 4;
    return c < 16384 ? 16384 : c;
}

bool coll_slots_free(coll_slots *s, coll_exec *x, uint32_t k, uint32_t window, sim_handler wake, void *ctx)
{
    if (k < window)
        return true;
    uint32_t j = k - window;
    if (s->ret_k[j % COLL_SLOTS] != j + 1)
        return false; /* its data has not landed yet */
    sim_time back = s->ret_at[j % COLL_SLOTS];
    if (sim_engine_now(x->eng) >= back)
        return true;
    if (!s->wake) {
        s->wake = true;
        sim_engine_at(x->eng, back, wake, ctx, 0);
    }
    return false;
}

void coll_slots_sent(coll_slots *s, coll_exec *x, uint32_t k)
{
    sim_time now = sim_engine_now(x->eng);
    s->sent_at[k % COLL_SLOTS] = now > x->start ? now : x->start;
}

void coll_slots_landed(coll_slots *s, coll_exec *x, uint32_t k, sim_time rtt)
{
    sim_time now = sim_engine_now(x->eng), back = s->sent_at[k % COLL_SLOTS] + rtt;
    s->ret_k[k % COLL_SLOTS] = k + 1;
    s->ret_at[k % COLL_SLOTS] = back > now ? back : now;
}

void coll_exec_send_hop(coll_exec *x, const fab_route *r, uint64_t wire, fab_done_fn fn, void *ctx, uint64_t arg)
{
    if (!r)
        return;
    sim_time now = sim_engine_now(x->eng);
    fabric_transfer_start(x->fab, r, FAB_NONE, wire, r->nhops > 1 ? coll_exec_fabric_chunk(wire) : wire, 0,
                          now < x->start ? x->start - now : 0, fn, ctx, arg);
}

uint64_t coll_share(uint64_t total, int parts, int i, uint64_t grain)
{
    uint64_t units = (total + grain - 1) / grain;
    uint64_t base = units / (uint64_t)parts, extra = units % (uint64_t)parts;
    uint64_t begin = ((uint64_t)i * base + ((uint64_t)i < extra ? (uint64_t)i : extra)) * grain;
    uint64_t len = (base + ((uint64_t)i < extra)) * grain;
    if (begin >= total)
        return 0;
    return begin + len > total ? total - begin : len;
}

double coll_setup_host_us(const coll_system *sys, const coll_request *req)
{
    int nch = req->nchannels > 0 ? req->nchannels : 1;
    return (sys->launch_us + nch * sys->launch_ch_us) * (sys->gpus_per_thread > 0 ? sys->gpus_per_thread : 1);
}

double coll_net_ovh_us(const coll_system *sys, coll_proto_id p)
{
    if (sys->nnodes <= 1)
        return 0;
    double ovh = sys->nccl.net_ovh_set ? sys->nccl.net_ovh_us : sys->cpu_vendor == 1 ? 2.0 : 1.0;
    return ovh * (p == PROTO_SIMPLE ? 3 : 1);
}

double coll_setup_us(const coll_system *sys, const coll_request *req)
{
    int a = req->algo == ALGO_DIRECT ? ALGO_RING : (int)req->algo;
    return (req->fused ? 0 : coll_setup_host_us(sys, req)) + coll_base_lat_us(a, req->proto);
}

/* coll.h */
double coll_one_rank_us(const coll_system *sys, const coll_request *req)
{
    double copy = sys->hbm_Bps > 0 ? 2.0 * (double)req->bytes / (sys->hbm_Bps * COMPUTE_COPY_HBM_EFF) * 1e6 : 0;
    return (req->fused ? 0 : sys->launch_us) + copy;
}

static sim_time setup_ps(const coll_system *sys, const coll_request *req)
{
    return sim_time_from_us(coll_setup_us(sys, req));
}

static void exec_free(coll_exec *x)
{
    if (x->seen)
        g_hash_table_unref(x->seen);
    g_ptr_array_unref(x->garbage);
    g_free(x);
}

/* After the last unit finished (deferred by one event, so that no algorithm
 * code runs on freed state): report and free. */
static void on_exec_done(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)arg;
    coll_exec *x = ctx;
    coll_result res = {.time_us = sim_time_to_us(sim_engine_now(e) - x->launched),
                       .events = sim_engine_stats(e)->events - x->events0, .busiest = FAB_NONE};
    coll_done_fn done = x->done;
    void *dctx = x->done_ctx;
    exec_free(x);
    if (done)
        done(e, dctx, &res);
}

void coll_exec_unit_done(coll_exec *x)
{
    g_assert(x->units_left > 0);
    if (--x->units_left == 0)
        sim_engine_after(x->eng, 0, on_exec_done, x, 0);
}

static bool check_supported(const coll_system *sys, const coll_request *req, GError **err)
{
    const coll_algo *impl = algo_impl(req->algo);
    const char *why = NULL;
    if (!impl || !impl->supports(sys, req->kind, &why)) {
        g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED, "algorithm %s cannot run %s here%s%s",
                    coll_algo_name(req->algo), coll_kind_name(req->kind), why ? ": " : "", why ? why : "");
        return false;
    }
    return true;
}

static bool launch(const coll_system *sys, const coll_request *req, sim_engine *eng, coll_done_fn done, void *ctx,
                   GError **async_err, GHashTable *seen, GError **err)
{
    if (!check_supported(sys, req, err))
        return false;
    coll_exec *x = g_new0(coll_exec, 1);
    *x = (coll_exec){.sys = sys, .req_copy = *req, .proto_own = *coll_proto_get(req->proto), .fab = sys->fab,
                     .eng = eng, .garbage = g_ptr_array_new_with_free_func(g_free), .done = done,
                     .done_ctx = ctx, .launched = sim_engine_now(eng), .events0 = sim_engine_stats(eng)->events,
                     .async_err = async_err};
    x->req = &x->req_copy;
    x->proto = &x->proto_own;
    if (req->proto == PROTO_SIMPLE && sys->nccl.buffsize > 0) {
        /* NCCL_BUFFSIZE: Simple's buffer of NCCL_STEPS steps; a ring chunk is
         * 4 steps (ALLREDUCE_CHUNKSTEPS), a pipelined chain's 1 */
        x->proto_own.step_bytes = sys->nccl.buffsize / 8;
        x->proto_own.chunk_bytes = 4 * x->proto_own.step_bytes;
        x->proto_own.chunk_bytes_pipe = x->proto_own.step_bytes;
    }
    x->seen = seen ? g_hash_table_ref(seen) : NULL;
    /* NCCL discards an empty collective (no launch, nothing to wait for) and runs one rank
     * without a kernel (coll_one_rank_us) */
    bool empty = req->bytes == 0 && coll_empty_is_noop(req->kind);
    x->start = x->launched + (empty                ? 0
                              : sys->nranks == 1 ? sim_time_from_us(coll_one_rank_us(sys, req))
                                                 : setup_ps(sys, req));
    x->starting = true;
    if (sys->nranks > 1 && req->bytes > 0)
        algo_impl(req->algo)->start(x);
    x->starting = false;
    if (x->err) {
        g_propagate_error(err, x->err);
        x->err = NULL;
        exec_free(x);
        return false;
    }
    if (x->units_left == 0) /* nothing to move: done after the setup latency */
        sim_engine_at(eng, x->start, on_exec_done, x, 0);
    return true;
}

bool coll_launch(const coll_system *sys, const coll_request *req, sim_engine *eng, coll_done_fn done, void *ctx,
                 GError **async_err, GError **err)
{
    return launch(sys, req, eng, done, ctx, async_err, NULL, err);
}

typedef struct {
    bool done;
    coll_result res;
} run_sink;

static void on_run_done(sim_engine *e, void *ctx, const coll_result *res)
{
    (void)e;
    run_sink *s = ctx;
    s->done = true;
    s->res = *res;
}

static int link_cmp(const void *a, const void *b)
{
    fab_link_id x = *(const fab_link_id *)a, y = *(const fab_link_id *)b;
    return (x > y) - (x < y);
}

/* the links of every route in `seen`, sorted and unique, onto *links */
static void footprint(GHashTable *seen, GArray *links)
{
    guint first = links->len;
    GHashTableIter it;
    gpointer k;
    g_hash_table_iter_init(&it, seen);
    while (g_hash_table_iter_next(&it, &k, NULL)) {
        const fab_route *r = k;
        g_array_append_vals(links, r->hop, r->nhops);
    }
    guint n = links->len - first;
    if (n == 0) /* nothing moved (a 0-byte alltoall's pairs): links->data may be NULL */
        return;
    fab_link_id *v = &g_array_index(links, fab_link_id, first);
    qsort(v, n, sizeof *v, link_cmp);
    guint u = 0;
    for (guint i = 0; i < n; i++)
        if (u == 0 || v[i] != v[u - 1])
            v[u++] = v[i];
    g_array_set_size(links, first + u);
}

static bool run(const coll_system *sys, const coll_request *req, coll_result *out, GArray *links, GError **err)
{
    sim_engine *eng = sim_engine_new(1);
    fabric_attach(sys->fab, eng);
    run_sink sink = {0};
    GError *async = NULL;
    GHashTable *seen = links ? g_hash_table_new(g_direct_hash, g_direct_equal) : NULL;
    bool ok = launch(sys, req, eng, on_run_done, &sink, &async, seen, err);
    if (ok) {
        int rc = sim_engine_run(eng);
        if (async) {
            g_propagate_error(err, async);
            ok = false;
        } else if (rc != SIM_OK || !sink.done) {
            if (rc != SIM_OK)
                g_set_error(err, COLL_ERROR, COLL_ERROR_SIM, "simulation of %s stopped: %s", coll_kind_name(req->kind),
                            sim_engine_strerror(rc));
            else
                g_set_error(err, COLL_ERROR, COLL_ERROR_SIM, "simulation of %s did not complete",
                            coll_kind_name(req->kind));
            ok = false;
        }
    }
    if (ok) {
        sim_time end = sim_engine_now(eng);
        *out = sink.res;
        out->busiest = fabric_busiest_link(sys->fab);
        if (out->busiest != FAB_NONE && end > 0)
            out->busiest_util = (double)fabric_link_stats(sys->fab, out->busiest)->busy_ps / (double)end;
        fabric_totals(sys->fab, NULL, &out->wire_bytes);
        if (links)
            footprint(seen, links);
    }
    if (seen)
        g_hash_table_unref(seen);
    sim_engine_free(eng);
    return ok;
}

bool coll_run(const coll_system *sys, const coll_request *req, coll_result *out, GError **err)
{
    return run(sys, req, out, NULL, err);
}

bool coll_run_footprint(const coll_system *sys, const coll_request *req, coll_result *out, GArray *links,
                        GError **err)
{
    return run(sys, req, out, links, err);
}

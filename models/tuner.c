/* models/tuner.c - which (algorithm, protocol, channels) NCCL would pick.
 *
 * NCCL 2.30's cost model (src/graph/tuning.cc, src/enqueue.cc; see
 * shared/reference/nccl-model.md s2): time = latency + bytes / algbw for
 * every enabled pair, the smallest wins. Bus bandwidth comes from the
 * simulated system (the ring neighbour route's bw x eff, the servers' NIC
 * bandwidth), then NCCL's caps: LL min(llMaxBw, busBw/2), LL128
 * min(0.92 busBw, nCh x perChMaxRingLL128Bw); Ring algbw = busBw n/nsteps.
 * Latency: baseLat + (nsteps - nInter) max(intraLat, netOvh) + nInter
 * interLat. Only algorithms conveyor simulates are candidates.
 */
#include "coll_priv.h"

#include <math.h>
#include <string.h>

static bool intra_is_nvlink(const coll_system *sys)
{
    if (sys->ppn < 2)
        return true;
    const fab_route *r = fabric_route(sys->fab, sys->gpu[0], sys->gpu[1], 0, NULL);
    if (!r)
        return false;
    for (uint32_t i = 0; i < r->nhops; i++)
        if (fabric_link(sys->fab, r->hop[i])->kind == LINK_NVLINK)
            return true;
    return false;
}

static double intra_bus_GBps(const coll_system *sys)
{
    if (sys->ppn < 2)
        return 1e9;
    if (coll_rings_usable(&sys->rings, sys->fab, sys->gpu, sys->ppn)) /* a mesh: NCCL's rings x each one's rate */
        return sys->rings.n * sys->rings.speed_GBps;
    const fab_route *r = fabric_route(sys->fab, sys->gpu[0], sys->gpu[1], 0, NULL);
    return r ? fabric_route_bw(sys->fab, r) / 1e9 : 0;
}

bool coll_nvls_on(const coll_system *sys) { return sys->nvls && sys->ppn > 2; }

static int nsteps_of(coll_kind k, int n)
{
    return k == COLL_ALL_REDUCE ? 2 * (n - 1) : (k == COLL_BROADCAST || k == COLL_REDUCE) ? n : n - 1;
}

/* NCCL's latency (us, *lat) and algbw (GB/s, returned) of (algo, proto),
 * or -1 if disabled. `table`: as tuning.cc's table holds them, without the
 * per-call terms ncclTopoGetAlgoTime adds (Tree's correction factor, the
 * multi-node Simple ring's latency factor); else for a call of `bytes`. */
static double model_latbw(const coll_system *sys, coll_kind kind, coll_algo_id a, coll_proto_id p,
                          uint64_t bytes, int nch, bool table, double *lat_out)
{
    int n = sys->nranks, nsteps = nsteps_of(kind, n);
    bool nvl = intra_is_nvlink(sys);
    double bus = intra_bus_GBps(sys);
    if (sys->nnodes > 1 && sys->net_Bps > 0 && sys->net_Bps / 1e9 < bus)
        bus = sys->net_Bps / 1e9;
    double lat = 0, algbw = 0;
    if (a == ALGO_RING) {
        if (coll_is_p2p(kind))
            return -1; /* point-to-point: Direct only */
        if (p == PROTO_LL128 && !nvl)
            return -1; /* LL128 only on NVLink-connected nodes */
        double b = bus;
        if (p == PROTO_LL)
            b = fmin(coll_ll_max_GBps(sys->gpu_sm, sys->nnodes, sys->cpu_vendor), bus * 0.5);
        else if (p == PROTO_LL128)
            b = fmin(bus * 0.92, nch * coll_ring_ll128_perch_GBps(sys->gpu_sm));
        algbw = b * n / nsteps;
        int hw = nvl ? 0 : 1;
        double intra = coll_hw_lat_us(hw, ALGO_RING, p), inter = coll_hw_lat_us(2, ALGO_RING, p);
        int ninter = sys->nnodes > 1 ? (kind == COLL_ALL_REDUCE ? 2 : 1) * (sys->nnodes - 1) : 0;
        double netovh = coll_net_ovh_us(sys, p);
        lat = coll_base_lat_us(ALGO_RING, p);
        if (kind == COLL_BROADCAST || kind == COLL_REDUCE)
            lat += nvl ? intra : intra;
        else
            lat += (nsteps - ninter) * fmax(intra, netovh) + ninter * inter;
        if (!table && kind == COLL_ALL_REDUCE && sys->nnodes > 1 && p == PROTO_SIMPLE &&
            bytes / ((uint64_t)nch * n) >= 64)
            lat *= sys->gpu_sm < 80 ? 1.9 : 1.4;
    } else if (a == ALGO_NVLS) {
        bool rsag = kind == COLL_ALL_GATHER || kind == COLL_REDUCE_SCATTER;
        if (p != PROTO_SIMPLE || (kind != COLL_ALL_REDUCE && !rsag) || !coll_nvls_on(sys) || sys->nnodes > 1)
            return -1;
        if (rsag && sys->ppn > COLL_NVLS_MAX_ARITY) /* enqueue.cc: only all_reduce past 32 local ranks */
            return -1;
        double eff = coll_nvls_eff(sys->gpu_sm);
        /* all_reduce: S(1+1/n) each way per GPU; all_gather/reduce_scatter: S
         * down (up) per GPU, NCCL's bwIntra x nvlsEff x (ppn-1)/ppn as busBw */
        algbw = bus * eff / (rsag ? 1.0 : 1.0 + 1.0 / n) * (nch - 1) / nch;
        lat = coll_hw_lat_us(0, ALGO_NVLS, p);
    } else if (a == ALGO_TREE) {
        if (kind != COLL_ALL_REDUCE || (p == PROTO_LL128 && !nvl))
            return -1;
        /* tuning.cc: every Tree all_reduce min(0.92 busBw, nCh x perChMaxTreeBw),
         * then LL min(/3.8, llMaxBw), LL128 min(x 7/9 on one node or 120/128,
         * nCh x perChMaxTreeLL128Bw); on one node the tree is a chain */
        double b = fmin(bus * 0.92, nch * coll_tree_perch_GBps(sys->gpu_sm, sys->nnodes, PROTO_SIMPLE));
        if (p == PROTO_LL)
            b = fmin(b / 3.8, coll_ll_max_GBps(sys->gpu_sm, sys->nnodes, sys->cpu_vendor));
        else if (p == PROTO_LL128)
            b = fmin(b * (sys->nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                     nch * coll_tree_perch_GBps(sys->gpu_sm, sys->nnodes, PROTO_LL128));
        algbw = b * 0.5 * (table ? 1.0 : coll_tree_correction(p, bytes));
        int hw = nvl ? 0 : 1;
        lat = coll_base_lat_us(ALGO_TREE, p) + 2 * ((sys->ppn - 1) * coll_hw_lat_us(hw, ALGO_TREE, p) +
                                                   log2((double)sys->nnodes) * coll_hw_lat_us(2, ALGO_TREE, p));
    } else if (a == ALGO_NVLS_TREE) {
        if (p != PROTO_SIMPLE || kind != COLL_ALL_REDUCE || !coll_nvls_on(sys) || sys->nnodes < 2)
            return -1;
        /* NVLS inside: each GPU moves S(1+1/ppn) each way; between nodes
         * each node sends S (2 nodes) or about 2S (a tree of more) */
        double eff = coll_nvls_eff(sys->gpu_sm);
        double intra_alg = intra_bus_GBps(sys) * eff / (1.0 + 1.0 / sys->ppn) * (nch - 1) / nch;
        double inter_alg = sys->net_Bps / 1e9 * (sys->nnodes <= 2 ? 1.0 : 0.5);
        /* tuning.cc: per channel min(intra, bwInter x (2 on <= 2 nodes), perChMaxNVLSTreeBw), x
         * nChannels, x nRanks/nsteps; bwInter is one network device's speed (a channel's head
         * uses one), which binds where NCCL sees many slower devices (p5: 32 x 100G EFA) */
        if (sys->net_dev_Bps > 0) {
            double dev = fmin(sys->net_dev_Bps / 1e9 * (sys->nnodes <= 2 ? 2.0 : 1.0),
                              coll_nvls_tree_perch_GBps(sys->gpu_sm, sys->nnodes));
            inter_alg = fmin(inter_alg, nch * dev * n / (double)nsteps);
        }
        algbw = fmin(intra_alg, inter_alg);
        lat = coll_hw_lat_us(0, ALGO_NVLS_TREE, p) + 2 * log2((double)sys->nnodes) * coll_hw_lat_us(2, ALGO_NVLS_TREE, p);
    } else if (a == ALGO_COLLNET_DIRECT) {
        /* NVLink reduce-scatter + all-gather (2 S (ppn-1)/ppn per GPU) and
         * S/ppn per head each way through the SHARP switches */
        if (p != PROTO_SIMPLE || kind != COLL_ALL_REDUCE || !sys->sharp || sys->nnodes < 2 || sys->ppn > 8 ||
            (sys->ppn > 1 && sys->nvswitch == FAB_NONE))
            return -1;
        double nvl_alg = sys->ppn > 1 ? intra_bus_GBps(sys) * sys->ppn / (2.0 * (sys->ppn - 1)) : 1e9;
        algbw = fmin(nvl_alg, sys->net_Bps / 1e9);
        if (sys->gpu_sm >= 90)
            algbw *= 0.85; /* NCCL's CollNetDirect factor on SM90+ */
        double intra = coll_hw_lat_us(nvl ? 0 : 1, ALGO_COLLNET_DIRECT, p);
        lat = 2 * ((sys->ppn > 1 ? 1 : 0) * intra + 0.4 * (sys->ppn - 1)) + coll_hw_lat_us(2, ALGO_COLLNET_DIRECT, p);
    } else if (a == ALGO_COLLNET_CHAIN) {
        /* a chain inside the node whose heads rotate over the channels (2 S
         * (ppn-1)/ppn out of each GPU over NVLink, as Direct) and S through
         * the node's NICs each way; its latency is the chain's */
        if (p != PROTO_SIMPLE || kind != COLL_ALL_REDUCE || !sys->sharp || sys->nnodes < 2 || sys->ppn > 8)
            return -1;
        double nvl_alg = sys->ppn > 1 ? intra_bus_GBps(sys) * sys->ppn / (2.0 * (sys->ppn - 1)) : 1e9;
        algbw = fmin(nvl_alg, sys->net_Bps / 1e9);
        double intra = coll_hw_lat_us(nvl ? 0 : 1, ALGO_COLLNET_CHAIN, p);
        lat = 2 * (sys->ppn - 1) * intra + coll_hw_lat_us(2, ALGO_COLLNET_CHAIN, p);
    } else if (a == ALGO_PAT) {
        /* one GPU per node, Simple only; NCCL: busBw x 0.75, no bus->alg conversion for
         * AllGather/ReduceScatter; lat = baseLat + log2(nNodes) interLat / 3.5 + nRanks x 2.8 */
        if (p != PROTO_SIMPLE || (kind != COLL_ALL_GATHER && kind != COLL_REDUCE_SCATTER) || sys->ppn != 1 ||
            sys->nranks < 2)
            return -1;
        algbw = bus * 0.75;
        lat = coll_base_lat_us(ALGO_PAT, p) + log2((double)sys->nnodes) * coll_hw_lat_us(2, ALGO_PAT, p) / 3.5 +
              sys->nranks * 2.8;
    } else if (a == ALGO_DIRECT) {
        if (table || !coll_is_p2p(kind))
            return -1; /* not one of tuning.cc's algorithms */
        if (p == PROTO_LL128)
            return -1;
        /* each pair's bytes: alltoall, gather and scatter move S/n per pair */
        bool split = kind != COLL_SENDRECV;
        double per = bytes / (double)(split ? n : 1);
        if (p == PROTO_LL && per > 16384) /* NCCL_P2P_LL_THRESHOLD */
            return -1;
        if (p == PROTO_SIMPLE && per <= 16384)
            return -1;
        algbw = bus * (p == PROTO_LL ? 0.5 : 1.0);
        if (split) /* (n-1)/n of S crosses the busiest GPU's link */
            algbw = algbw * n / (n - 1);
        lat = coll_base_lat_us(ALGO_RING, p) + coll_hw_lat_us(sys->nnodes > 1 ? 2 : nvl ? 0 : 1, ALGO_RING, p);
    } else {
        return -1;
    }
    if (algbw <= 0)
        return -1;
    *lat_out = lat;
    return algbw;
}

/* NCCL's modelled time (us) of (algo, proto) for `bytes`, or -1 if disabled. */
static double model_time(const coll_system *sys, coll_kind kind, coll_algo_id a, coll_proto_id p,
                         uint64_t bytes, int nch)
{
    double lat = 0, algbw = model_latbw(sys, kind, a, p, bytes, nch, false, &lat);
    return algbw > 0 ? lat + (double)bytes / (1000.0 * algbw) : -1;
}

bool coll_tune_table(const coll_system *sys, coll_kind kind, coll_algo_id algo, coll_proto_id proto,
                     double *lat_us, double *algbw_GBps)
{
    *lat_us = *algbw_GBps = 0;
    if (algo < 0 || algo >= ALGO_DIRECT || proto < 0 || proto >= PROTO_COUNT)
        return false;
    double lat = 0, bw = model_latbw(sys, kind, algo, proto, 0, coll_channels(sys, algo), true, &lat);
    if (bw <= 0)
        return false;
    *lat_us = lat;
    *algbw_GBps = bw;
    return true;
}

static int small_channels(coll_algo_id a, coll_proto_id p, int nch, int n, uint64_t bytes)
{
    if (a != ALGO_RING && a != ALGO_TREE)
        return nch;
    /* enqueue.cc: drop channels while nBytes < nc x nthreads x threshold */
    int nt = p == PROTO_LL128 ? 640 : 512;
    uint64_t thr = p == PROTO_SIMPLE ? 64 : 8;
    if (p == PROTO_LL && a == ALGO_RING)
        thr *= (uint64_t)n;
    while (nch > 1 && bytes < (uint64_t)nch * nt * thr)
        nch--;
    return nch;
}

bool coll_tune(const coll_system *sys, coll_kind kind, uint64_t bytes, uint32_t algo_mask,
               uint32_t proto_mask, coll_request *req, double *model_us)
{
    double best = -1;
    /* CollNet is off unless asked for (NCCL_COLLNET_ENABLE=1, or named in the algorithm list):
     * "^nvls" or a reduction NVLS cannot do leaves it allowed, not on */
    const char *cn = g_getenv("NCCL_COLLNET_ENABLE");
    bool collnet = ((algo_mask & ((1u << ALGO_COLLNET_DIRECT) | (1u << ALGO_COLLNET_CHAIN))) &&
                    !(algo_mask & COLL_ALGO_MASK_UNNAMED)) ||
                   (cn && !strcmp(cn, "1"));
    for (int a = 0; a < ALGO_COUNT; a++) {
        if (algo_mask && !(algo_mask & (1u << a)))
            continue;
        if ((a == ALGO_COLLNET_DIRECT || a == ALGO_COLLNET_CHAIN) && !collnet)
            continue;
        if (sys->uneven && a != ALGO_RING && a != ALGO_DIRECT) /* they assume ppn ranks per server */
            continue;
        if (sys->nccl.nvls_off && (a == ALGO_NVLS || a == ALGO_NVLS_TREE)) /* NCCL_NVLS_ENABLE=0 */
            continue;
        /* the search graph's channels set NCCL's modelled bandwidth; the knobs
         * (NCCL_MAX_NCHANNELS, ...) only change the blocks that run */
        int nch = coll_channels(sys, (coll_algo_id)a); /* a route lookup for some systems: once per algorithm */
        int run = coll_channels_limit(sys, (coll_algo_id)a, nch);
        for (int p = 0; p < PROTO_COUNT; p++) {
            if (proto_mask && !(proto_mask & (1u << p)))
                continue;
            double t = model_time(sys, kind, (coll_algo_id)a, (coll_proto_id)p, bytes, nch);
            if (t > 0 && (best < 0 || t < best)) {
                best = t;
                req->algo = (coll_algo_id)a;
                req->proto = (coll_proto_id)p;
                req->nchannels = small_channels((coll_algo_id)a, (coll_proto_id)p, run, sys->nranks, bytes);
            }
        }
    }
    if (best < 0)
        return false;
    req->kind = kind;
    req->bytes = bytes;
    req->fused = false; /* a launch of its own unless the caller says otherwise */
    if (model_us)
        *model_us = best;
    return true;
}

static bool mask_list(const char *list, bool algos, uint32_t *mask, GError **err)
{
    bool negate = list[0] == '^';
    uint32_t m = 0;
    g_auto(GStrv) names = g_strsplit(list + negate, ",", -1);
    for (int i = 0; names[i]; i++) {
        char *nm = g_strstrip(names[i]);
        if (!*nm)
            continue;
        int v = algos ? coll_algo_from_name(nm) : coll_proto_from_name(nm);
        if (v < 0) {
            g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED, "unknown %s '%s' (expected %s)",
                        algos ? "algorithm" : "protocol", nm,
                        algos ? "ring, tree, nvls, nvlstree, collnetdirect, collnetchain, pat"
                              : "LL, LL128, Simple");
            return false;
        }
        m |= 1u << v;
    }
    if (negate) /* (CollNet allowed by "^nvls" is not asked for: coll_tune) */
        m = (~m & ((1u << (algos ? ALGO_COUNT : PROTO_COUNT)) - 1)) | (algos ? COLL_ALGO_MASK_UNNAMED : 0);
    if (algos)
        m &= ~(1u << ALGO_DIRECT); /* (not an NCCL_ALGO name; added back by used_mask) */
    *mask = m;
    return true;
}

/* The list that applies to the collective run: it must leave something (an
 * empty mask means "unset", so '^LL,LL128,Simple' and ',' used to allow
 * everything; NCCL fails such a collective). Another collective's list may
 * leave nothing: NCCL only fails when that collective runs. */
static bool used_mask(const char *list, bool algos, uint32_t m, uint32_t *mask, GError **err)
{
    if (!(m & (algos ? COLL_ALGO_MASK_ALL : (1u << PROTO_COUNT) - 1))) {
        g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED, "'%s' leaves no %s", list,
                    algos ? "algorithm" : "protocol");
        return false;
    }
    *mask = algos ? m | 1u << ALGO_DIRECT : m; /* p2p collectives are not governed by NCCL_ALGO */
    return true;
}

bool coll_tune_parse_mask(const char *spec, coll_kind kind, bool algos, uint32_t *mask, GError **err)
{
    *mask = 0;
    if (!spec || !*spec)
        return true;
    uint32_t m;
    if (!strchr(spec, ':'))
        return mask_list(spec, algos, &m, err) && used_mask(spec, algos, m, mask, err);
    /* NCCL 2.24+: "coll:list;coll:list", the first list may omit "coll:" and
     * then applies to every collective not named (NCCL's own example:
     * NCCL_PROTO="^LL128;allreduce:LL128") */
    g_auto(GStrv) parts = g_strsplit(spec, ";", -1);
    const char *use = NULL, *dflt = NULL;
    uint32_t use_m = 0, dflt_m = 0;
    for (int i = 0; parts[i]; i++) {
        char *colon = strchr(parts[i], ':');
        if (!colon) {
            if (i > 0) {
                g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED,
                            "'%s': expected collective:list (only the first list may name no collective)", parts[i]);
                return false;
            }
            if (!mask_list(parts[i], algos, &dflt_m, err))
                return false;
            dflt = parts[i];
            continue;
        }
        *colon = 0;
        coll_kind k;
        if (coll_kind_from_name(g_strstrip(parts[i]), &k) != 0) {
            g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED, "unknown collective '%s'", parts[i]);
            return false;
        }
        if (!mask_list(colon + 1, algos, &m, err))
            return false;
        if (k == kind)
            use = colon + 1, use_m = m;
    }
    if (use)
        return used_mask(use, algos, use_m, mask, err);
    if (dflt)
        return used_mask(dflt, algos, dflt_m, mask, err);
    return true;
}

/* cli/simsweep.c - see simsweep.h. */
#include "simsweep.h"

#include <string.h>

#include "progress.h"
#include "topologies/accuracy.h"

bool simsweep_agg_ok(coll_kind kind)
{
    return !coll_is_p2p(kind) && kind != COLL_ALLTOALL;
}

static bool run_sizes(const coll_system *sys, coll_kind kind, int root, size_t elt_bytes, bool nvls_reduces,
                      const uint64_t *sizes, size_t n, simsweep_launch ln, const char *algo_spec, const char *proto_spec,
                      nccltests_row *rows, simsweep_explain *ex, cli_progress *pg, GError **err)
{
    int agg = ln.agg > 1 ? ln.agg : 1;
    g_assert(agg == 1 || simsweep_agg_ok(kind));
    uint32_t amask, pmask;
    if (!coll_tune_parse_mask(algo_spec, kind, true, &amask, err) ||
        !coll_tune_parse_mask(proto_spec, kind, false, &pmask, err))
        return false;
    if (!nvls_reduces && (kind == COLL_ALL_REDUCE || kind == COLL_REDUCE_SCATTER)) {
        uint32_t nv = (1u << ALGO_NVLS) | (1u << ALGO_NVLS_TREE);
        /* every algorithm but NVLS does not name CollNet: it stays off unless enabled */
        amask = (amask ? amask : COLL_ALGO_MASK_ALL | COLL_ALGO_MASK_UNNAMED) & ~nv;
        if (!(amask & COLL_ALGO_MASK_ALL & ~(1u << ALGO_DIRECT))) { /* (Direct is always in a mask: point-to-point) */
            g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED,
                        "NCCL cannot run this reduction and type in the NVSwitch (NVLS: sum, and min/max on integer "
                        "and 16-bit types); choose another --algo");
            return false;
        }
    }
    if (sys->nranks == 1) /* one copy per call (ncclLaunchOneRank), not an aggregate */
        agg = 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t bytes = sizes[i] * (uint64_t)agg; /* -m: the group's aggregate, one launch */
        coll_request req = {.kind = kind, .bytes = bytes};
        if (!coll_tune(sys, kind, bytes, amask, pmask, &req, NULL)) {
            g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED,
                        "no enabled algorithm/protocol can run %s on this system (check --algo/--proto)",
                        coll_kind_name(kind));
            return false;
        }
        req.root = root > 0 && coll_default_root(kind) >= 0 ? root : 0;
        req.fused = ln.graph; /* in a CUDA graph no call pays the host launch (as a fused call) */
        if (pg) {
            char sz[32];
            cli_progress_bytes(sz, sizeof sz, sizes[i]);
            cli_progress_show(pg, true, "size %zu/%zu (%s, %s/%s)", i + 1, n, sz, coll_algo_name(req.algo),
                              coll_proto_name(req.proto));
        }
        coll_result res;
        if (!coll_run(sys, &req, &res, err))
            return false;
        nccltests_row *r = &rows[i];
        memset(r, 0, sizeof *r);
        r->size_bytes = sizes[i];
        r->count = nccltests_count_for_size(kind, sizes[i], sys->nranks, elt_bytes);
        r->time_us[NCCLTESTS_OOP] = r->time_us[NCCLTESTS_IP] = res.time_us / agg; /* nccl-tests: per call */
        if (sys->nranks == 1 && !coll_is_p2p(kind)) /* in place on one rank: nothing to copy, no launch */
            r->time_us[NCCLTESTS_IP] = 0;
        nccltests_row_compute_bw(r, kind, sys->nranks);
        if (ex) {
            ex[i] = (simsweep_explain){.algo = req.algo, .proto = req.proto, .nchannels = req.nchannels,
                                       .busiest_util = res.busiest_util, .events = res.events};
            g_strlcpy(ex[i].busiest, res.busiest == FAB_NONE ? "-" : fabric_link_name(sys->fab, res.busiest),
                      sizeof ex[i].busiest);
        }
    }
    return true;
}

bool simsweep_run(const coll_system *sys, coll_kind kind, int root, size_t elt_bytes, bool nvls_reduces,
                  const uint64_t *sizes, size_t n, simsweep_launch ln, const char *algo_spec, const char *proto_spec,
                  nccltests_row *rows, simsweep_explain *ex, const char *progress, GError **err)
{
    cli_progress pgs, *pg = progress ? &pgs : NULL;
    if (pg)
        cli_progress_start(pg, progress);
    bool ok = run_sizes(sys, kind, root, elt_bytes, nvls_reduces, sizes, n, ln, algo_spec, proto_spec, rows, ex, pg,
                        err);
    if (pg)
        cli_progress_end(pg);
    return ok;
}

void simsweep_print_explain(FILE *f, const nccltests_row *rows, const simsweep_explain *ex, size_t n,
                            coll_kind kind, int nranks, const double *blo, const double *bhi,
                            const char *const *regime)
{
    char head[64];
    g_snprintf(head, sizeof head, "busbw, 80%% band (validation, %s)", acc_coll_band_kind());
    fprintf(f, "# explain: %12s  %-13s %-6s %3s  %-28s %5s %10s  %s\n", "size", "algo", "proto", "ch",
            "busiest link", "util", "events", blo ? head : "busbw");
    for (size_t i = 0; i < n; i++) {
        nccltests_row r = rows[i];
        nccltests_row_compute_bw(&r, kind, nranks);
        double bw = r.busbw_GBps[NCCLTESTS_OOP];
        char band[64];
        if (blo && bhi[i] > 0)
            g_snprintf(band, sizeof band, "%.2f [%.2f-%.2f] %s", bw, bw * blo[i], bw * bhi[i], regime[i]);
        else if (blo)
            g_strlcpy(band, "no band", sizeof band);
        else
            g_snprintf(band, sizeof band, "%.2f", bw);
        fprintf(f, "# explain: %12llu  %-13s %-6s %3d  %-28s %4.0f%% %10llu  %s\n",
                (unsigned long long)rows[i].size_bytes, coll_algo_name(ex[i].algo), coll_proto_name(ex[i].proto),
                ex[i].nchannels, ex[i].busiest, 100 * ex[i].busiest_util, (unsigned long long)ex[i].events, band);
    }
}

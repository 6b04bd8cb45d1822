/* cli/cmd_sweep.c - `conveyor sweep`: a what-if grid over a base command.
 *
 * A base command is one table entry (traces/sweep_spec.h: sweep_base):
 * its name, the parameters it accepts, the figures it produces and
 * run(point) -> figures. `collective`, `replay` and `scale` are here; a
 * base named in `planned` (none now) gets a clear "not available yet"
 * error. Adding one = writing its run() and adding it to `bases`.
 * Spec schema, figures and MPI/Slurm use: docs/sweep.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef CONVEYOR_MPI
#include <mpi.h>
#endif

#include "bands.h"
#include "cli.h"
#include "commands.h"
#include "simsweep.h"
#include "sweep_run.h"
#include "models/replay.h"
#include "sysbuild.h"
#include "traceload.h"
#include "wlopts.h"

/* ---- base command: collective ------------------------------------------ */

static const char *const coll_params[] = {
    "topo", "nodes", "gpus", "fabric", "set", "launch_us", "launch_channel_us", "ngpus", "op", "minbytes", "maxbytes",
    "stepfactor", "stepbytes", "datatype", "algo", "proto", "max_ctas", "min_ctas", "max_nchannels",
    "min_nchannels", "buffsize", "nvls", "p2p_level", "root", NULL,
};

enum {
    F_BUSBW_MAX, F_ALGBW_MAX, F_TIME_MAX, F_BUSBW_MIN, F_ALGBW_MIN, F_TIME_MIN, F_AVG_BUSBW, F_PEAK_BUSBW,
    F_NRANKS, F_SIZE_MAX, F_ALGO_MAX, F_PROTO_MAX, F_NCH_MAX,
};
static const char *const coll_figures[] = {
    [F_BUSBW_MAX] = "busbw_at_max", [F_ALGBW_MAX] = "algbw_at_max", [F_TIME_MAX] = "time_us_at_max",
    [F_BUSBW_MIN] = "busbw_at_min", [F_ALGBW_MIN] = "algbw_at_min", [F_TIME_MIN] = "time_us_at_min",
    [F_AVG_BUSBW] = "avg_busbw", [F_PEAK_BUSBW] = "peak_busbw", [F_NRANKS] = "nranks",
    [F_SIZE_MAX] = "size_at_max", [F_ALGO_MAX] = "algo_at_max", [F_PROTO_MAX] = "proto_at_max",
    [F_NCH_MAX] = "nchannels_at_max", NULL,
};

/* The band columns of the collective base: the busbw band `conveyor
 * collective` prints for that size (bus_bw_80: topologies/accuracy.h), the
 * regime it is of and what kind of band it is. */
enum { FB_MAX_LO, FB_MAX_HI, FB_MIN_LO, FB_MIN_HI, FB_REGIME, FB_KIND };
static const char *const coll_bands[] = {
    [FB_MAX_LO] = "busbw_at_max_lo80", [FB_MAX_HI] = "busbw_at_max_hi80", [FB_MIN_LO] = "busbw_at_min_lo80",
    [FB_MIN_HI] = "busbw_at_min_hi80", [FB_REGIME] = "band_regime", [FB_KIND] = "band_kind", NULL,
};
static const int coll_band_of[] = {F_BUSBW_MAX, F_BUSBW_MAX, F_BUSBW_MIN, F_BUSBW_MIN, -1, -1};

static bool point_int(const sweep_point *p, const char *key, int lo, int hi, int *out, GError **err)
{
    const char *v = sweep_point_get(p, key);
    if (!v)
        return true;
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < lo || x > hi) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "%s: expected an integer in %d..%d, got '%s'", key, lo, hi, v);
        return false;
    }
    *out = (int)x;
    return true;
}

/* An on/off parameter (nvls, sp, recompute): *on set when given. */
static bool point_on_off(const sweep_point *p, const char *key, bool *on, GError **err)
{
    const char *v = sweep_point_get(p, key);
    if (!v)
        return true;
    if (strcmp(v, "on") && strcmp(v, "off")) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "%s: expected on or off, got '%s'", key, v);
        return false;
    }
    *on = !strcmp(v, "on");
    return true;
}

static bool point_bytes(const sweep_point *p, const char *key, uint64_t *out, GError **err)
{
    const char *v = sweep_point_get(p, key);
    GError *e = NULL;
    if (v && !cli_parse_bytes(v, out, &e)) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "%s: %s", key, e->message);
        g_error_free(e);
        return false;
    }
    return true;
}

/* Request sizes as `conveyor collective -b -e -f -i` (factor >= 2, else step). */
static GArray *coll_sizes(const sweep_point *p, GError **err)
{
    uint64_t lo = 33554432, hi = 33554432, step = 1048576;
    int factor = 0;
    if (!point_bytes(p, "minbytes", &lo, err) || !point_bytes(p, "maxbytes", &hi, err) ||
        !point_bytes(p, "stepbytes", &step, err) || !point_int(p, "stepfactor", 0, 1 << 20, &factor, err))
        return NULL;
    if (lo > hi || (factor < 2 && step == 0)) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "need minbytes <= maxbytes and stepfactor >= 2 or stepbytes > 0");
        return NULL;
    }
    GError *e = NULL;
    GArray *a = cli_coll_sizes(lo, hi, factor, factor >= 2 ? 0 : step, &e);
    if (!a) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "maxbytes: %s", e->message);
        g_error_free(e);
    }
    return a;
}

static char *coll_figure(int f, const nccltests_row *rows, const simsweep_explain *ex, size_t n, int nranks)
{
    const nccltests_row *lo = &rows[0], *hi = &rows[n - 1];
    double sum = 0, peak = 0;
    for (size_t i = 0; i < n; i++) {
        sum += rows[i].busbw_GBps[NCCLTESTS_OOP];
        peak = fmax(peak, rows[i].busbw_GBps[NCCLTESTS_OOP]);
    }
    switch (f) {
    case F_BUSBW_MAX: return g_strdup_printf("%.3f", hi->busbw_GBps[NCCLTESTS_OOP]);
    case F_ALGBW_MAX: return g_strdup_printf("%.3f", hi->algbw_GBps[NCCLTESTS_OOP]);
    case F_TIME_MAX: return g_strdup_printf("%.3f", hi->time_us[NCCLTESTS_OOP]);
    case F_BUSBW_MIN: return g_strdup_printf("%.3f", lo->busbw_GBps[NCCLTESTS_OOP]);
    case F_ALGBW_MIN: return g_strdup_printf("%.3f", lo->algbw_GBps[NCCLTESTS_OOP]);
    case F_TIME_MIN: return g_strdup_printf("%.3f", lo->time_us[NCCLTESTS_OOP]);
    case F_AVG_BUSBW: return g_strdup_printf("%.3f", sum / (double)n);
    case F_PEAK_BUSBW: return g_strdup_printf("%.3f", peak);
    case F_NRANKS: return g_strdup_printf("%d", nranks);
    case F_SIZE_MAX: return g_strdup_printf("%llu", (unsigned long long)hi->size_bytes);
    case F_ALGO_MAX: return g_strdup(coll_algo_name(ex[n - 1].algo));
    case F_PROTO_MAX: return g_strdup(coll_proto_name(ex[n - 1].proto));
    case F_NCH_MAX: return g_strdup_printf("%d", ex[n - 1].nchannels);
    default: g_assert_not_reached();
    }
}

/* The regime of row i as `collective` labels it (an unmeasured one marked). */
static const char *coll_regime_label(const coll_system *sys, const simsweep_explain *ex, size_t i, acc_regime *r)
{
    *r = acc_regime_algo(sys, sys->nnodes, ex[i].algo);
    return acc_regime_label(sys, *r);
}

/* Band column b of a collective point: as `conveyor collective` prints it
 * for that size (busbw x [1/(1 + hi), 1/(1 + lo)]); empty without a band. The
 * labels: the regime of the sizes whose band is listed ("min: A; max: B"
 * when they differ) and "held out" / "in-sample", or "none" (no band). */
static char *coll_band(int b, const int *fig, size_t nfig, const coll_system *sys, const nccltests_row *rows,
                       const simsweep_explain *ex, size_t n)
{
    acc_band band;
    acc_regime r;
    if (b == FB_MAX_LO || b == FB_MAX_HI || b == FB_MIN_LO || b == FB_MIN_HI) {
        size_t i = b == FB_MAX_LO || b == FB_MAX_HI ? n - 1 : 0;
        (void)coll_regime_label(sys, ex, i, &r);
        if (!acc_coll_band(r, rows[i].size_bytes, &band))
            return g_strdup("");
        double lo, hi;
        acc_rate_range(1.0, &band, &lo, &hi); /* the factors `collective` multiplies by */
        double bw = rows[i].busbw_GBps[NCCLTESTS_OOP];
        return g_strdup_printf("%.3f", bw * (b == FB_MAX_LO || b == FB_MIN_LO ? lo : hi));
    }
    bool at_max = false, at_min = false, any = false;
    for (size_t k = 0; k < nfig; k++) {
        at_max |= fig[k] == F_BUSBW_MAX;
        at_min |= fig[k] == F_BUSBW_MIN;
    }
    const char *rmax = coll_regime_label(sys, ex, n - 1, &r);
    any |= at_max && acc_coll_band(r, rows[n - 1].size_bytes, &band);
    const char *rmin = coll_regime_label(sys, ex, 0, &r);
    any |= at_min && acc_coll_band(r, rows[0].size_bytes, &band);
    if (b == FB_KIND)
        return g_strdup(any ? acc_coll_band_kind() : "none");
    if (at_max && at_min && strcmp(rmin, rmax))
        return g_strdup_printf("min: %s; max: %s", rmin, rmax);
    return g_strdup(at_max ? rmax : rmin);
}

/* NCCL's knobs as point parameters (points run in threads, so not through
 * the environment): they replace what the environment set (nccl_env.c). */
static bool point_nccl(const sweep_point *p, coll_nccl_env *e, GError **err)
{
    int v = -1;
    static const char *const keys[4] = {"max_ctas", "min_ctas", "max_nchannels", "min_nchannels"};
    int *dst[4] = {&e->max_ctas, &e->min_ctas, &e->max_nch, &e->min_nch};
    for (int i = 0; i < 4; i++) {
        v = -1;
        if (!point_int(p, keys[i], 0, 64, &v, err))
            return false;
        if (v >= 0)
            *dst[i] = v;
    }
    const char *bs = sweep_point_get(p, "buffsize");
    if (bs) {
        uint64_t b = 0;
        GError *e2 = NULL;
        if (!cli_parse_bytes(bs, &b, &e2) || !coll_nccl_buffsize_ok(b)) {
            g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT,
                        "buffsize: expected a size, a multiple of 4 KiB from 64K to 1G, got '%s'", bs);
            g_clear_error(&e2);
            return false;
        }
        e->buffsize = b;
    }
    bool nvls = !e->nvls_off;
    if (!point_on_off(p, "nvls", &nvls, err))
        return false;
    e->nvls_off = !nvls;
    const char *pl = sweep_point_get(p, "p2p_level");
    if (pl) {
        if (!coll_p2p_level_from_name(pl, &e->p2p_level)) {
            g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT,
                        "p2p_level: expected LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB or SYS, got '%s'", pl);
            return false;
        }
        e->p2p_set = true;
    }
    return true;
}

/* launch_us and launch_channel_us of a point (collective and replay bases),
 * as --launch-us and --launch-channel-us. */
static bool point_launch_us(const sweep_point *p, sys_opts *so, GError **err)
{
    static const char *const keys[] = {"launch_us", "launch_channel_us"};
    double *dst[] = {&so->launch_us, &so->launch_ch_us};
    for (int i = 0; i < 2; i++) {
        const char *v = sweep_point_get(p, keys[i]);
        if (v && !sys_parse_launch_us(v, dst[i])) {
            g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "%s: expected microseconds in 0..1e6, got '%s'", keys[i], v);
            return false;
        }
    }
    return true;
}

/* One `conveyor collective` run; loads its own topology (thread-safe). */
static bool coll_run_point(const sweep_point *p, const int *fig, size_t nfig, char **out, GError **err)
{
    sys_opts so = {0};
    g_option_group_unref(sys_opts_group(&so)); /* the options' defaults (launch_us) */
    so.topo = (char *)sweep_point_get(p, "topo");
    so.fabric = (char *)sweep_point_get(p, "fabric");
    so.sets = p->sets[0] ? p->sets : NULL;
    if (!point_launch_us(p, &so, err))
        return false;
    coll_kind kind;
    nccltests_dtype dt;
    const char *op = sweep_point_get(p, "op"), *dts = sweep_point_get(p, "datatype");
    if (coll_kind_from_name(op ? op : "all_reduce", &kind) != 0) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "op: unknown collective '%s'", op);
        return false;
    }
    if (nccltests_dtype_from_name(dts ? dts : "float", &dt) != 0) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "datatype: unknown type '%s'", dts);
        return false;
    }
    if (!point_int(p, "nodes", 1, TOPO_MAX_NODES, &so.nodes, err) || !point_int(p, "gpus", 1, 1024, &so.gpus, err) ||
        !point_int(p, "ngpus", 1, 1024, &so.gpus_per_thread, err))
        return false;
    g_autoptr(GArray) req = coll_sizes(p, err);
    if (!req)
        return false;
    topo *t = sys_opts_load(&so, err);
    if (!t)
        return false;
    coll_system sys;
    sys_from_topo(&sys, t, &so);
    bool divides = sys.nranks % sys.gpus_per_thread == 0; /* as collective -g: ranks = threads x GPUs each */
    if (!divides)
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "ngpus: -t 1 x -g %d does not divide the system's %d ranks",
                    sys.gpus_per_thread, sys.nranks);
    if (!divides || !point_nccl(p, &sys.nccl, err) || !sys_check_p2p_env(&sys.nccl, t, err)) {
        topo_free(t);
        return false;
    }
    coll_nccl_env_apply(&sys.nccl, t->fab); /* a point's p2p_level (the environment's was applied) */
    int root = 0; /* broadcast/reduce's root, as collective -r (which the others ignore) */
    if (coll_default_root(kind) >= 0 && !point_int(p, "root", 0, sys.nranks - 1, &root, err)) {
        topo_free(t);
        return false;
    }
    size_t elt = nccltests_dtype_bytes(dt), n = req->len;
    uint64_t *sizes = g_new(uint64_t, n);
    for (size_t i = 0; i < n; i++)
        sizes[i] = nccltests_size_for_request(kind, g_array_index(req, uint64_t, i), sys.nranks, elt);
    nccltests_row *rows = g_new0(nccltests_row, n);
    simsweep_explain *ex = g_new0(simsweep_explain, n);
    const char *aspec = sweep_point_get(p, "algo"), *pspec = sweep_point_get(p, "proto");
    /* sweeps reduce with sum, as nccl-tests' default; NVLS only where the switch can */
    bool nvls = nccltests_nvls_reduces(coll_is_reducing(kind) ? NCCLTESTS_OP_SUM : NCCLTESTS_OP_NONE, dt);
    bool ok = simsweep_run(&sys, kind, root, elt, nvls, sizes, n, (simsweep_launch){.agg = 1}, aspec ? aspec : g_getenv("NCCL_ALGO"),
                           pspec ? pspec : g_getenv("NCCL_PROTO"), rows, ex, NULL, err);
    for (size_t i = 0; ok && i < nfig; i++)
        out[i] = fig[i] < (int)G_N_ELEMENTS(coll_figures) - 1
                     ? coll_figure(fig[i], rows, ex, n, sys.nranks)
                     : coll_band(fig[i] - ((int)G_N_ELEMENTS(coll_figures) - 1), fig, nfig, &sys, rows, ex, n);
    g_free(sizes);
    g_free(rows);
    g_free(ex);
    topo_free(t);
    return ok;
}

static const sweep_base coll_base = {
    .name = "collective",
    .summary = "one `conveyor collective` sweep per point; figures from its rows (GB/s, us)",
    .params = coll_params,
    .figures = coll_figures,
    .bands = coll_bands,
    .band_of = coll_band_of,
    .run = coll_run_point,
};

/* ---- base command: replay ---------------------------------------------- */

static const char *const replay_params[] = {
    "topo", "nodes", "gpus", "fabric", "set", "launch_us", "launch_channel_us", "ngpus", "trace", "ranks", "compute_scale",
    "algo", "proto", "max_ctas", "min_ctas", "max_nchannels", "min_nchannels", "buffsize", "nvls", "p2p_level",
    NULL,
};

enum { R_STEP, R_TOTAL, R_COMPUTE, R_COMM, R_EXPOSED, R_IDLE, R_WAIT_PEERS, R_LINK_UTIL, R_NRANKS, R_EXPOSED_NET };
static const char *const replay_figures[] = {
    [R_STEP] = "step_ms", [R_TOTAL] = "total_ms", [R_COMPUTE] = "compute_ms", [R_COMM] = "comm_ms",
    [R_EXPOSED] = "exposed_comm_ms", [R_IDLE] = "idle_ms", [R_WAIT_PEERS] = "wait_peers_ms",
    [R_LINK_UTIL] = "busiest_link_util", [R_NRANKS] = "nranks", [R_EXPOSED_NET] = "exposed_net_ms", NULL,
};

/* The band columns of the replay base: the step time's 80% band `conveyor
 * replay` prints (its collectives' validation bands applied to the exposed
 * communication, cli_replay_step_band), the regimes of those collectives and
 * what kind of band it is. */
enum { RB_STEP_LO, RB_STEP_HI, RB_REGIME, RB_KIND };
static const char *const replay_bands[] = {
    [RB_STEP_LO] = "step_ms_lo80", [RB_STEP_HI] = "step_ms_hi80", [RB_REGIME] = "band_regime", [RB_KIND] = "band_kind",
    NULL,
};
static const int replay_band_of[] = {R_STEP, R_STEP, -1, -1};

static char *replay_band(int b, const trace *t, const replay_result *res, const coll_system *sys)
{
    double lo, hi, ex;
    unsigned regimes;
    if (!cli_replay_step_band(res, sys, t->steps > 0 ? t->steps : 1, &lo, &hi, &ex, &regimes, NULL))
        return g_strdup(b == RB_KIND ? "none" : "");
    switch (b) {
    case RB_STEP_LO: return g_strdup_printf("%.6f", lo * 1e3);
    case RB_STEP_HI: return g_strdup_printf("%.6f", hi * 1e3);
    case RB_KIND: return g_strdup(acc_coll_band_kind());
    default: {
        GString *g = g_string_new(NULL);
        for (int r = 0; r < ACC_REGIMES; r++)
            if (regimes & (1u << r))
                g_string_append_printf(g, "%s%s", g->len ? "+" : "", acc_regime_label(sys, (acc_regime)r));
        return g_string_free(g, FALSE);
    }
    }
}

/* The figure of a replay; per-rank figures are the maximum over ranks. */
static char *replay_figure(int f, const trace *t, const replay_result *res, fabric *fab)
{
    int64_t mx = 0;
    for (int r = 0; r < res->nranks; r++) {
        const replay_rank *rr = &res->ranks[r];
        int64_t v = f == R_COMPUTE ? rr->compute_ps : f == R_COMM ? rr->comm_ps : f == R_EXPOSED ? rr->exposed_comm_ps
                  : f == R_EXPOSED_NET ? rr->exposed_net_ps : f == R_IDLE ? rr->idle_ps : rr->wait_peers_ps;
        mx = v > mx ? v : mx;
    }
    switch (f) {
    case R_STEP: return g_strdup_printf("%.6f", res->end_ps * 1e-9 / (t->steps > 0 ? t->steps : 1));
    case R_TOTAL: return g_strdup_printf("%.6f", res->end_ps * 1e-9);
    case R_COMPUTE: case R_COMM: case R_EXPOSED: case R_EXPOSED_NET: case R_IDLE: case R_WAIT_PEERS:
        return g_strdup_printf("%.6f", mx * 1e-9);
    case R_LINK_UTIL: {
        fab_link_id b = fabric_busiest_link(fab);
        double u = b == FAB_NONE || !res->end_ps ? 0 : (double)fabric_link_stats(fab, b)->busy_ps / (double)res->end_ps;
        return g_strdup_printf("%.4f", u);
    }
    case R_NRANKS: return g_strdup_printf("%d", res->nranks);
    default: g_assert_not_reached();
    }
}

/* One `conveyor replay`; loads its own trace and topology (thread-safe). */
static bool replay_run_point(const sweep_point *p, const int *fig, size_t nfig, char **out, GError **err)
{
    sys_opts so = {0};
    g_option_group_unref(sys_opts_group(&so));
    so.topo = (char *)sweep_point_get(p, "topo");
    so.fabric = (char *)sweep_point_get(p, "fabric");
    so.sets = p->sets[0] ? p->sets : NULL;
    if (!point_launch_us(p, &so, err)) /* (it was accepted and then ignored) */
        return false;
    int ranks = 0;
    double scale = 1.0;
    const char *path = sweep_point_get(p, "trace"), *cs = sweep_point_get(p, "compute_scale");
    if (!path) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "trace: the replay base needs a trace file");
        return false;
    }
    if (cs) {
        char *end = NULL;
        scale = g_ascii_strtod(cs, &end);
        if (end == cs || *end || !(scale > 0) || scale > 1e6) {
            g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "compute_scale: expected a number in (0, 1e6], got '%s'", cs);
            return false;
        }
    }
    if (!point_int(p, "nodes", 1, TOPO_MAX_NODES, &so.nodes, err) || !point_int(p, "gpus", 1, 1024, &so.gpus, err) ||
        !point_int(p, "ngpus", 1, 1024, &so.gpus_per_thread, err) || !point_int(p, "ranks", 1, 1048576, &ranks, err))
        return false;
    char *paths[] = {(char *)path};
    trace *t = trace_load_any(paths, 1, NULL, err);
    if (t && ranks > 0) {
        trace *r = trace_replicate(t, ranks, err);
        trace_free(t);
        t = r && trace_validate(r, err) ? r : (trace_free(r), NULL);
    }
    if (!t)
        return false;
    topo *tp = sys_opts_load(&so, err);
    topo *ti = tp ? sys_opts_load(&so, err) : NULL;
    bool ok = ti != NULL;
    if (ok) {
        coll_system sys, iso;
        sys_from_topo(&sys, tp, &so);
        sys_from_topo(&iso, ti, &so);
        ok = point_nccl(p, &sys.nccl, err) && sys_check_p2p_env(&sys.nccl, tp, err);
        iso.nccl = sys.nccl;
        if (ok) {
            coll_nccl_env_apply(&sys.nccl, tp->fab);
            coll_nccl_env_apply(&iso.nccl, ti->fab);
        }
        replay_opts o = {.sys = &sys, .compute_scale = scale, .iso = &iso};
        const char *as = sweep_point_get(p, "algo"), *ps = sweep_point_get(p, "proto");
        ok = ok && coll_tune_parse_mask(as, COLL_ALL_REDUCE, true, &o.algo_mask, err) &&
             coll_tune_parse_mask(ps, COLL_ALL_REDUCE, false, &o.proto_mask, err);
        replay_result res;
        if (ok && (ok = replay_run(t, &o, &res, err))) {
            for (size_t i = 0; i < nfig; i++)
                out[i] = fig[i] < (int)G_N_ELEMENTS(replay_figures) - 1
                             ? replay_figure(fig[i], t, &res, sys.fab)
                             : replay_band(fig[i] - ((int)G_N_ELEMENTS(replay_figures) - 1), t, &res, &sys);
            replay_result_clear(&res);
        }
    }
    topo_free(ti);
    topo_free(tp);
    trace_free(t);
    return ok;
}

static const sweep_base replay_base = {
    .name = "replay",
    .summary = "one `conveyor replay` per point; figures in ms (per-rank figures: the maximum over ranks)",
    .params = replay_params,
    .figures = replay_figures,
    .bands = replay_bands,
    .band_of = replay_band_of,
    .run = replay_run_point,
};

/* ---- base command: scale (one generated training step per point) ------- */

static const char *const scale_params[] = {
    "topo", "fabric", "set", "gpus", "model", "tp", "pp", "cp", "cp_comm", "hierarchical_context_parallel_sizes", "ep", "etp", "zero", "sp", "micro_batch",
    "global_batch", "seq", "dtype", "layer_fuse", "recompute", "schedule", "overlap_param_gather", "tp_async_bwd",
    "tp_comm_overlap", "moe_shared_expert_overlap", "fp8_param_gather", "fp8_recipe",
    "reuse_grad_buf_for_mxfp8_param_ag", "moe_token_dispatcher_type", "moe_router_num_groups", "moe_router_group_topk",
    /* model custom's shape, as scale's --layers ... --dense-layers */
    "layers", "hidden", "heads", "kv_heads", "kv_channels", "ffn", "vocab", "gated", "experts", "topk", "expert_ffn", "shared_ffn",
    "dense_layers", "moe_layer_freq", "q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim",
    "mtp_num_layers", "decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers",
    "moe_expert_capacity_factor", "moe_pad_expert_input_to_capacity", "recompute_granularity", "recompute_modules",
    "pipeline_model_parallel_layout", "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
    "recompute_method", "recompute_num_layers", "num_virtual_stages_per_pipeline_rank",
    "num_layers_per_virtual_pipeline_stage", "no_overlap_grad_reduce", "attention_backend",
    "overlap_moe_expert_parallel_comm", "delay_wgrad_compute", "window_size", "window_attn_skip_freq", "moe_load_imbalance", "attention_chunk_size", NULL,
};

enum { S_STEP, S_TOKENS, S_MFU, S_EXPOSED, S_TFLOPS, S_DP, S_EXPOSED_NET, S_COMPUTE, S_IDLE, S_MEM };
static const char *const scale_figures[] = {
    [S_STEP] = "step_ms", [S_TOKENS] = "tokens_per_s", [S_MFU] = "mfu", [S_EXPOSED] = "exposed_comm_frac",
    [S_TFLOPS] = "tflops_per_gpu", [S_DP] = "dp", [S_EXPOSED_NET] = "exposed_net_frac",
    [S_COMPUTE] = "compute_frac", [S_IDLE] = "idle_frac", [S_MEM] = "memory_gib", NULL,
};

/* The band columns of the scale base: the 80% bands of step time and
 * TFLOP/s per GPU `conveyor scale` prints (the training comparison's, of the
 * DeepSpeed ZeRO-3 rows for zero 3), which rows they come from and what
 * kind of band they are. */
enum { SB_STEP_LO, SB_STEP_HI, SB_TF_LO, SB_TF_HI, SB_REGIME, SB_KIND };
static const char *const scale_bands[] = {
    [SB_STEP_LO] = "step_ms_lo80", [SB_STEP_HI] = "step_ms_hi80", [SB_TF_LO] = "tflops_per_gpu_lo80",
    [SB_TF_HI] = "tflops_per_gpu_hi80", [SB_REGIME] = "band_regime", [SB_KIND] = "band_kind", NULL,
};
static const int scale_band_of[] = {S_STEP, S_STEP, S_TFLOPS, S_TFLOPS, -1, -1};

static char *scale_band(int b, const workload_spec *w, const wl_step *st)
{
    acc_band bd, bz;
    bool band = acc_training_band(false, &bd), z3 = band && w->zero == ZERO_3 && acc_training_band(true, &bz);
    if (!band)
        return g_strdup(b == SB_KIND ? "none" : "");
    double lo, hi;
    if (b == SB_STEP_LO || b == SB_STEP_HI)
        acc_time_range(st->step_s * 1e3, z3 ? &bz : &bd, &lo, &hi);
    else
        acc_rate_range(st->tflops, z3 ? &bz : &bd, &lo, &hi);
    switch (b) {
    case SB_STEP_LO: return g_strdup_printf("%.6f", lo);
    case SB_STEP_HI: return g_strdup_printf("%.6f", hi);
    case SB_TF_LO: return g_strdup_printf("%.2f", lo);
    case SB_TF_HI: return g_strdup_printf("%.2f", hi);
    case SB_REGIME: return g_strdup(z3 ? "training-zero3 (A100 rows)" : "training (A100 rows)");
    default: return g_strdup(acc_training_band_kind());
    }
}

/* Generate the step (`conveyor workload`) for the point's model and layout
 * (dp = gpus / (tp x pp x cp)) on its system, replay it, report. */
static bool scale_run_point(const sweep_point *p, const int *fig, size_t nfig, char **out, GError **err)
{
    wl_opts o = {0};
    o.model = (char *)sweep_point_get(p, "model");
    o.topo = (char *)sweep_point_get(p, "topo");
    o.fabric = (char *)sweep_point_get(p, "fabric");
    o.zero_s = (char *)sweep_point_get(p, "zero");
    o.dtype = (char *)sweep_point_get(p, "dtype");
    o.schedule = (char *)sweep_point_get(p, "schedule"); /* 1f1b or interleaved:V, as `scale --schedule` */
    o.cp_comm = (char *)sweep_point_get(p, "cp_comm");   /* p2p, allgather, a2a or a2a+p2p, as `scale --cp-comm` */
    o.hier_cp = (char *)sweep_point_get(p, "hierarchical_context_parallel_sizes"); /* "A,B", as the option */
    o.fp8_recipe = (char *)sweep_point_get(p, "fp8_recipe"); /* delayed, tensorwise, mxfp8, blockwise */
    o.moe_dispatcher = (char *)sweep_point_get(p, "moe_token_dispatcher_type"); /* alltoall, flex */
    o.attn_backend = (char *)sweep_point_get(p, "attention_backend");       /* flash, unfused (and aliases) */
    o.capacity = (char *)sweep_point_get(p, "moe_expert_capacity_factor");    /* a number, as the option */
    o.imbalance = (char *)sweep_point_get(p, "moe_load_imbalance");           /* a number, as the option */
    o.rc_gran = (char *)sweep_point_get(p, "recompute_granularity");          /* full, selective */
    o.rc_modules = (char *)sweep_point_get(p, "recompute_modules");          /* "core_attn,mla_up_proj" */
    o.pp_layout = (char *)sweep_point_get(p, "pipeline_model_parallel_layout"); /* "Et*3|(tt|)*29,m|L" */
    o.rc_method = (char *)sweep_point_get(p, "recompute_method");                 /* uniform, block */
    o.sets = p->sets[0] ? p->sets : NULL;
    /* on/off keys ("yes" and "true" were read as off before point_on_off) */
    bool sp = false, rc = false, gated = false, opg = false, tpa = false, tco = false, mso = false, fpg = false,
         mgb = false, pad = false, ae = false, al = false, nog = false, meo = false, dwg = false;
    if (!point_on_off(p, "sp", &sp, err) || !point_on_off(p, "recompute", &rc, err) ||
        !point_on_off(p, "gated", &gated, err) || !point_on_off(p, "overlap_param_gather", &opg, err) ||
        !point_on_off(p, "tp_async_bwd", &tpa, err) || !point_on_off(p, "tp_comm_overlap", &tco, err) ||
        !point_on_off(p, "moe_shared_expert_overlap", &mso, err) || !point_on_off(p, "fp8_param_gather", &fpg, err) ||
        !point_on_off(p, "reuse_grad_buf_for_mxfp8_param_ag", &mgb, err) ||
        !point_on_off(p, "moe_pad_expert_input_to_capacity", &pad, err) ||
        !point_on_off(p, "account_for_embedding_in_pipeline_split", &ae, err) ||
        !point_on_off(p, "account_for_loss_in_pipeline_split", &al, err) ||
        !point_on_off(p, "no_overlap_grad_reduce", &nog, err) ||
        !point_on_off(p, "overlap_moe_expert_parallel_comm", &meo, err) ||
        !point_on_off(p, "delay_wgrad_compute", &dwg, err))
        return false;
    o.moe_ep_overlap = meo;
    o.delay_wgrad = dwg;
    o.no_overlap_grad = nog;
    o.acct_emb = ae;
    o.acct_loss = al;
    o.fp8_param_gather = fpg;
    o.mxfp8_grad_buf = mgb;
    o.pad_capacity = pad;
    o.tp_async_bwd = tpa;
    o.tp_comm_overlap = tco;
    o.moe_shared_overlap = mso;
    o.sp = sp;
    o.recompute = rc;
    o.overlap_param_gather = opg;
    o.gated = gated;
    static const char *const shape[] = {"layers", "hidden", "heads", "kv_heads", "kv_channels", "attention_chunk_size", "ffn", "vocab", "experts", "topk",
                                        "expert_ffn", "shared_ffn", "dense_layers", "moe_router_num_groups",
                                        "moe_router_group_topk", "q_lora_rank", "kv_lora_rank", "qk_head_dim",
                                        "qk_pos_emb_head_dim", "v_head_dim", "mtp_num_layers",
                                        "decoder_first_pipeline_num_layers",
                                        "decoder_last_pipeline_num_layers", "recompute_num_layers",
                                        "num_virtual_stages_per_pipeline_rank",
                                        "num_layers_per_virtual_pipeline_stage"}; /* scale's options */
    for (size_t i = 0; i < G_N_ELEMENTS(shape); i++)
        if (!point_int(p, shape[i], 0, 1 << 30, wl_opts_int_field(&o, shape[i]), err))
            return false;
    const char *mf = sweep_point_get(p, "moe_layer_freq"); /* N, or Megatron-LM's list, as the option */
    GError *e = NULL;
    if (mf && !wl_opts_set_moe_freq(&o, mf, &e)) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "moe_layer_freq: %s", e->message);
        g_error_free(e);
        return false;
    }
    const char *ws = sweep_point_get(p, "window_size"), *wf = sweep_point_get(p, "window_attn_skip_freq");
    const char *bad = ws && !wl_opts_set_window(&o, ws, &e)                ? "window_size"
                      : wf && !wl_opts_set_window_freq(&o, wf, &e) ? "window_attn_skip_freq"
                                                                     : NULL;
    if (bad) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "%s: %s", bad, e->message);
        g_error_free(e);
        return false;
    }
    if (!o.topo || !o.model) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_POINT, "the scale base needs topo and model");
        return false;
    }
    if (!point_int(p, "gpus", 1, 1 << 20, &o.gpus, err) || !point_int(p, "tp", 1, 1024, &o.tp, err) ||
        !point_int(p, "pp", 1, 1024, &o.pp, err) || !point_int(p, "cp", 1, 1024, &o.cp, err) ||
        !point_int(p, "ep", 1, 1024, &o.ep, err) || !point_int(p, "etp", 1, 1024, &o.etp, err) ||
        !point_int(p, "micro_batch", 1, 1 << 20, &o.micro_batch, err) ||
        !point_int(p, "global_batch", 1, 1 << 30, &o.global_batch, err) ||
        !point_int(p, "seq", 1, 1 << 24, &o.seq, err) || !point_int(p, "layer_fuse", 1, 1024, &o.layer_fuse, err))
        return false;
    workload_spec w;
    if (!wl_opts_spec(&o, &w, err))
        return false;
    wl_step st;
    if (!workload_spec_check(&w, err) || !wl_step_run(&o, o.topo, NULL, &w, FALSE, &st, err))
        return false;
    for (size_t i = 0; i < nfig; i++) {
        switch (fig[i]) {
        case S_STEP: out[i] = g_strdup_printf("%.6f", st.step_s * 1e3); break;
        case S_TOKENS: out[i] = g_strdup_printf("%.1f", st.tokens_s); break;
        case S_MFU: out[i] = g_strdup_printf("%.4f", st.mfu); break;
        case S_EXPOSED: out[i] = g_strdup_printf("%.4f", st.exposed); break;
        case S_TFLOPS: out[i] = g_strdup_printf("%.2f", st.tflops); break;
        case S_DP: out[i] = g_strdup_printf("%d", st.dp); break;
        case S_EXPOSED_NET: out[i] = g_strdup_printf("%.4f", st.exposed_net); break;
        case S_COMPUTE: out[i] = g_strdup_printf("%.4f", st.compute); break;
        case S_IDLE: out[i] = g_strdup_printf("%.4f", st.idle); break;
        case S_MEM: out[i] = g_strdup_printf("%.2f", st.mem_bytes / (1024.0 * 1024 * 1024)); break;
        default: out[i] = scale_band(fig[i] - ((int)G_N_ELEMENTS(scale_figures) - 1), &w, &st); break;
        }
    }
    return true;
}

static const sweep_base scale_base = {
    .name = "scale",
    .summary = "one generated training step (conveyor workload) replayed per point: step time, tokens/s, MFU",
    .params = scale_params,
    .figures = scale_figures,
    .bands = scale_bands,
    .band_of = scale_band_of,
    .run = scale_run_point,
};

/* Bases a spec may name. */
static const sweep_base *const bases[] = {&coll_base, &replay_base, &scale_base};
static const char *const planned[] = {NULL};
static const sweep_catalog catalog = {.bases = bases, .nbases = G_N_ELEMENTS(bases), .planned = planned};

/* ---- the command ------------------------------------------------------- */

typedef struct {
    char *out, *plot;
    gint jobs;
    gboolean resume;
} sweep_opts;

static char *describe_bases(void)
{
    GString *g = g_string_new("Base commands (\"base\" in the spec), their parameters and figures:\n");
    for (size_t i = 0; i < G_N_ELEMENTS(bases); i++) {
        g_autofree char *ps = g_strjoinv(", ", (char **)bases[i]->params);
        g_autofree char *fs = g_strjoinv(", ", (char **)bases[i]->figures);
        g_string_append_printf(g, "  %s: %s\n    parameters: %s (vary set.KEY for --set KEY=...)\n    figures: %s\n",
                               bases[i]->name, bases[i]->summary, ps, fs);
    }
    g_string_append(g, "Schema and examples: docs/sweep.md, docs/examples/.");
    return g_string_free(g, FALSE);
}

static int run_spec(const sweep_opts *so, const char *path)
{
    GError *err = NULL;
    sweep_spec *spec = sweep_spec_load(path, &catalog, &err);
    int rc;
#ifdef CONVEYOR_MPI
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ok = spec != NULL, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all_ok) {
        rc = spec ? EXIT_BADINPUT : (rank == 0 ? cli_fail(err) : (g_clear_error(&err), EXIT_BADINPUT));
        sweep_spec_free(spec);
        return rc;
    }
#else
    if (!spec)
        return cli_fail(err);
#endif
    /* Warm two lazy initialisations before any worker thread runs:
     * topo_dir() fills an unlocked static cache, and glib's g_ascii_strtod
     * creates its C locale under g_once, where a waiting thread can come
     * back with errno = EAGAIN, which cli_parse_bytes and the topology
     * loader read as a parse failure. */
    (void)topo_dir();
    (void)g_ascii_strtod("0", NULL);
    cli_bands_preload(); /* the bands files' cache, filled once here (unlocked) */
    sweep_run_opts ro = {.spec = spec, .out_path = so->out, .threads = so->jobs, .resume = so->resume,
                         .progress = isatty(STDERR_FILENO)};
#ifdef CONVEYOR_MPI
    if (size > 1) {
        ro.progress = ro.progress && rank == 0;
        rc = sweep_run_mpi(&ro, rank, size);
    } else
#endif
        rc = sweep_run_threads(&ro);
    sweep_spec_free(spec);
    return rc;
}

static int sweep_main(int argc, char **argv)
{
    sweep_opts so = {.jobs = CLI_UNSET};
    GOptionEntry e[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &so.out, "results CSV (stdout if absent); with --plot: the SVG", "FILE"},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &so.jobs, "points run at once (threads) [CPU count]", "N"},
        {"resume", 0, 0, G_OPTION_ARG_NONE, &so.resume, "skip the points already in -o FILE (its header must match)", NULL},
        {"plot", 0, 0, G_OPTION_ARG_STRING, &so.plot, "draw columns X,Y[,SERIES] of a results CSV with gnuplot (and Y's 80% band)", "X,Y[,S]"},
        {0},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("SPEC.json | --plot X,Y[,SERIES] RESULTS.csv -o PLOT.svg");
    g_option_context_set_summary(ctx, "Run a what-if grid of simulations; one CSV row per point, in grid order.");
    g_autofree char *desc = describe_bases();
    g_option_context_set_description(ctx, desc);
    g_option_context_add_main_entries(ctx, e, NULL);
    int rc = cli_parse(ctx, "sweep", &argc, &argv) ? EXIT_OK : EXIT_BADINPUT;
    if (rc == EXIT_OK && !cli_dash_output("sweep", (const char *[]){so.out}, 1))
        rc = EXIT_BADINPUT;
    if (rc == EXIT_OK && argc != 2) {
        fprintf(stderr, "conveyor sweep: expected one %s (see 'conveyor sweep --help')\n",
                so.plot ? "results CSV" : "spec file");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && so.jobs == CLI_UNSET)
        so.jobs = (gint)g_get_num_processors();
    if (rc == EXIT_OK && (so.jobs < 1 || so.jobs > 4096)) {
        fprintf(stderr, "conveyor sweep: -j must be in 1..4096\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && so.resume && !so.out) {
        fprintf(stderr, "conveyor sweep: --resume needs -o FILE (the CSV to extend)\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && so.plot && !so.out) {
        fprintf(stderr, "conveyor sweep: --plot needs -o PLOT.svg\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK)
        rc = so.plot ? sweep_plot(so.plot, argv[1], so.out) : run_spec(&so, argv[1]);
    g_free(so.out);
    g_free(so.plot);
    return rc;
}

int cmd_sweep(int argc, char **argv)
{
#ifdef CONVEYOR_MPI
    MPI_Init(&argc, &argv);
    int rc = sweep_main(argc, argv);
    MPI_Finalize();
    return rc;
#else
    return sweep_main(argc, argv);
#endif
}

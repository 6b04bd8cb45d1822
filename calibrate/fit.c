/* calibrate/fit.c - the calibration fitter: JSON-lines and nccl-tests readers,
 * grouping by measured path, the robust alpha-beta line fit, and the params
 * file (write and load).  The fit is specified in docs/calibration.md; in
 * short: beta from a Huber-then-outlier-dropping weighted least-squares fit of
 * t = a + S/beta over the bandwidth-bound sizes (relative residuals), alpha =
 * median of t - S/beta over the latency-bound sizes.
 */
#include "calibrate/fit.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "traces/nccltests.h"

G_DEFINE_QUARK(calib-error-quark, calib_error)

/* Bandwidth-bound: transfer time at the peak observed rate >= BW_KNEE x the
 * smallest measured time.  Latency-bound: <= LAT_KNEE x it. */
#define BW_KNEE 4.0
#define LAT_KNEE 0.25
#define HUBER_K 1.345
#define OUTLIER_Z 3.0
#define REL_SCALE_FLOOR 1e-3 /* 0.1%: below this, noise is not told from rounding */
/* A record's time (size / bandwidth for a rate) is 1 ps .. 1e6 s: outside
 * it, t^2 in the fit underflows or overflows (a time of 0 failed an assert) */
#define CALIB_T_MIN_S 1e-12
#define CALIB_T_MAX_S 1e6

typedef struct {
    double s, t; /* bytes, seconds */
} pt;

static int pt_cmp(const void *a, const void *b)
{
    const pt *x = a, *y = b;
    return x->s < y->s ? -1 : x->s > y->s ? 1 : (x->t > y->t) - (x->t < y->t);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (reorders v); n > 0. */
static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, dbl_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Weighted least squares of t = a + b s with weights w[i] / t[i]^2 (relative
 * residuals), size centred for accuracy.  Returns false if degenerate. */
static bool wls(const pt *p, const double *w, size_t n, double *a, double *b)
{
    double sw = 0, ss = 0, st = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w[i] / (p[i].t * p[i].t);
        sw += wi, ss += wi * p[i].s, st += wi * p[i].t;
    }
    if (!(sw > 0))
        return false;
    double sbar = ss / sw, tbar = st / sw, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w[i] / (p[i].t * p[i].t), ds = p[i].s - sbar;
        sxx += wi * ds * ds, sxy += wi * ds * (p[i].t - tbar);
    }
    if (!(sxx > 0))
        return false;
    *b = sxy / sxx;
    *a = tbar - *b * sbar;
    return true;
}

/* Robust scale of relative residuals: 1.4826 x MAD, floored. */
static double rel_scale(const pt *p, const bool *keep, size_t n, double a, double b, double *r)
{
    double *tmp = g_new(double, n);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        r[i] = (p[i].t - a - b * p[i].s) / p[i].t;
        if (keep[i])
            tmp[m++] = fabs(r[i]);
    }
    double sc = m ? 1.4826 * median_of(tmp, m) : 0;
    g_free(tmp);
    return MAX(sc, REL_SCALE_FLOOR);
}

/* Slope fit on the bandwidth-bound points p[0..n): Huber IRLS, then drop
 * points beyond OUTLIER_Z robust scales (keeping >= 2) and refit. */
static bool fit_slope(const pt *p, size_t n, double *a, double *b, int *nout)
{
    double *w = g_new(double, n), *r = g_new(double, n);
    bool *keep = g_new(bool, n), ok = true;
    for (size_t i = 0; i < n; i++)
        w[i] = 1, keep[i] = true;
    ok = wls(p, w, n, a, b);
    for (int it = 0; ok && it < 50; it++) {
        double sc = rel_scale(p, keep, n, *a, *b, r), a0 = *a, b0 = *b;
        for (size_t i = 0; i < n; i++)
            w[i] = fabs(r[i]) <= HUBER_K * sc ? 1 : HUBER_K * sc / fabs(r[i]);
        ok = wls(p, w, n, a, b);
        if (ok && fabs(*b - b0) <= 1e-12 * fabs(b0) && fabs(*a - a0) <= 1e-12 * fabs(a0) + 1e-18)
            break;
    }
    *nout = 0;
    if (ok) {
        double sc = rel_scale(p, keep, n, *a, *b, r);
        size_t kept = n;
        for (size_t i = 0; i < n; i++)
            if (fabs(r[i]) > OUTLIER_Z * sc && kept > 2)
                keep[i] = false, kept--, (*nout)++;
        for (size_t i = 0; i < n; i++)
            w[i] = keep[i] ? 1 : 0;
        ok = wls(p, w, n, a, b);
    }
    g_free(w), g_free(r), g_free(keep);
    return ok;
}

bool calib_fit_line(const double *size_bytes, const double *t_s, size_t n, calib_line *out)
{
    if (n < 2)
        return false;
    pt *p = g_new(pt, n);
    size_t distinct = 0;
    double beta0 = 0, alpha0 = INFINITY;
    for (size_t i = 0; i < n; i++) {
        assert(size_bytes[i] >= 0 && t_s[i] > 0);
        p[i] = (pt){size_bytes[i], t_s[i]};
        beta0 = MAX(beta0, p[i].s / p[i].t);
        alpha0 = MIN(alpha0, p[i].t);
    }
    qsort(p, n, sizeof *p, pt_cmp);
    for (size_t i = 0; i < n; i++)
        distinct += i == 0 || p[i].s != p[i - 1].s;
    bool ok = distinct >= 2 && beta0 > 0;
    /* bandwidth-bound suffix: s >= BW_KNEE alpha0 beta0, at least 3 points */
    size_t first = n;
    while (first > 0 && p[first - 1].s >= BW_KNEE * alpha0 * beta0)
        first--;
    if (n - first < 3)
        first = n >= 3 ? n - 3 : 0;
    while (ok && first > 0 && p[first].s == p[n - 1].s) /* need 2 sizes */
        first--;
    double a = 0, b = 0;
    int nout = 0;
    ok = ok && fit_slope(p + first, n - first, &a, &b, &nout) && b > 0;
    if (ok) {
        double beta = 1 / b, *d = g_new(double, n);
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (p[i].s / beta <= LAT_KNEE * alpha0)
                d[m++] = p[i].t - p[i].s / beta;
        double alpha = m ? median_of(d, m) : a;
        alpha = MAX(alpha, 0.0);
        double sq = 0, mx = 0;
        for (size_t i = 0; i < n; i++) {
            double r = (alpha + p[i].s / beta - p[i].t) / p[i].t;
            sq += r * r, mx = MAX(mx, fabs(r));
        }
        *out = (calib_line){.alpha_s = alpha, .beta_Bps = beta, .residual_rms_pct = 100 * sqrt(sq / n),
                            .residual_max_pct = 100 * mx, .npoints = (int)n, .nfit = (int)(n - first),
                            .noutliers = nout, .nalpha = (int)m};
        g_free(d);
    }
    g_free(p);
    return ok;
}

const char *calib_dtype_name(calib_dtype dt)
{
    static const char *const names[CALIB_NDTYPES] = {"fp32", "fp16", "bf16"};
    assert(dt >= 0 && dt < CALIB_NDTYPES);
    return names[dt];
}

/* ---- groups ----------------------------------------------------------- */

typedef struct {
    char *name, *bench, *mode, *dtype;
    char *where;   /* "path:line" of its first record ("path" for a log), for messages */
    bool is_coll, bw_unit;
    int nranks;
    GArray *pts; /* of pt */
    bool fitted;
    calib_line fit;
    double scalar; /* single-size groups: median time (s) or rate (B/s) */
} group;

struct calib_fit_set {
    GPtrArray *groups;   /* of group*, in first-seen order; sorted by solve */
    GHashTable *by_name; /* name -> group* (borrowed) */
    GString *source;
    char *device;
    GArray *gemm;                      /* of calib_gemm_pt */
    calib_gemm gemm_fit[CALIB_GEMM_NDTYPES]; /* after solve */
};

static void group_free(gpointer data)
{
    group *g = data;
    g_free(g->name), g_free(g->bench), g_free(g->mode), g_free(g->dtype), g_free(g->where);
    g_array_unref(g->pts);
    g_free(g);
}

calib_fit_set *calib_fit_set_new(void)
{
    calib_fit_set *s = g_new0(calib_fit_set, 1);
    s->groups = g_ptr_array_new_with_free_func(group_free);
    s->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    s->source = g_string_new(NULL);
    s->gemm = g_array_new(FALSE, FALSE, sizeof(calib_gemm_pt));
    return s;
}

void calib_fit_set_free(calib_fit_set *s)
{
    if (!s)
        return;
    g_hash_table_destroy(s->by_name);
    g_ptr_array_unref(s->groups);
    g_string_free(s->source, TRUE);
    g_array_unref(s->gemm);
    g_free(s->device);
    g_free(s);
}

static group *group_get(calib_fit_set *s, const char *name, const char *bench, const char *mode,
                        const char *dtype, const char *where)
{
    group *g = g_hash_table_lookup(s->by_name, name);
    if (g)
        return g;
    g = g_new0(group, 1);
    g->name = g_strdup(name), g->bench = g_strdup(bench), g->where = g_strdup(where);
    g->mode = g_strdup(mode), g->dtype = g_strdup(dtype);
    g->pts = g_array_new(FALSE, FALSE, sizeof(pt));
    g_ptr_array_add(s->groups, g);
    g_hash_table_insert(s->by_name, g->name, g);
    return g;
}

static void note_source(calib_fit_set *s, const char *path, const char *device)
{
    if (s->source->len)
        g_string_append_c(s->source, ' ');
    g_string_append(s->source, path);
    if (device && !s->device)
        s->device = g_strdup(device);
    else if (device && strcmp(s->device, device) && strcmp(s->device, "mixed"))
        g_free(s->device), s->device = g_strdup("mixed");
}

/* ---- JSON-lines reader ------------------------------------------------ */

typedef struct {
    const char *name;
    double scale; /* to seconds, or to bytes/s */
    bool bw;
} unit_def;

static const unit_def units[] = {
    {"s", 1, false},    {"ms", 1e-3, false}, {"us", 1e-6, false},         {"ns", 1e-9, false},
    {"B/s", 1, true},   {"GB/s", 1e9, true}, {"GiB/s", 1073741824.0, true},
};

/* One parsed record, before grouping. */
typedef struct {
    char *name; /* group name, whole (owned; NULL for a flag record) */
    const char *bench, *mode, *dtype, *device;
    bool bw, info; /* info: unit "flag", a capability record, not fitted */
    double s, t;
    int line;
} record;

static const char *opt_str(cJSON *o, const char *key, const char *where, GError **err, bool *bad)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return NULL;
    if (!cJSON_IsString(v) || !*v->valuestring) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_FIELD, "%s: \"%s\" must be a non-empty string", where, key);
        *bad = true;
        return NULL;
    }
    return v->valuestring;
}

static bool get_num(cJSON *o, const char *key, const char *where, double *out, GError **err)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v)) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_FIELD, "%s: \"%s\" %s", where, key,
                    v ? "must be a number" : "is missing");
        return false;
    }
    *out = v->valuedouble;
    if (!isfinite(*out) || *out < 0) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_VALUE, "%s: \"%s\" must be >= 0, got %g", where, key, *out);
        return false;
    }
    return true;
}

/* Validates one record object and converts it to (size, time). */
static bool record_parse(cJSON *o, const char *where, record *r, GError **err)
{
    bool bad = false;
    r->bench = opt_str(o, "bench", where, err, &bad);
    r->device = bad ? NULL : opt_str(o, "device", where, err, &bad);
    const char *path = bad ? NULL : opt_str(o, "path", where, err, &bad);
    const char *dir = bad ? NULL : opt_str(o, "direction", where, err, &bad);
    r->mode = bad ? NULL : opt_str(o, "mode", where, err, &bad);
    r->dtype = bad ? NULL : opt_str(o, "dtype", where, err, &bad);
    const char *unit = bad ? NULL : opt_str(o, "unit", where, err, &bad);
    if (bad)
        return false;
    const char *miss = !r->bench ? "bench" : !r->device ? "device" : !unit ? "unit" : NULL;
    if (miss) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_FIELD, "%s: \"%s\" is missing", where, miss);
        return false;
    }
    r->info = !strcmp(unit, "flag");
    if (r->info)
        return true;
    double size, med, mn, mx;
    if (!get_num(o, "size_bytes", where, &size, err) || !get_num(o, "median", where, &med, err) ||
        !get_num(o, "min", where, &mn, err) || !get_num(o, "max", where, &mx, err))
        return false;
    if (size != floor(size) || size > 9007199254740992.0) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_VALUE, "%s: \"size_bytes\" must be a whole number, got %g",
                    where, size);
        return false;
    }
    if (!(med > 0) || mn > med * (1 + 1e-9) || mx < med * (1 - 1e-9)) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_VALUE,
                    "%s: need 0 < median and min <= median <= max, got min %g median %g max %g", where, mn, med,
                    mx);
        return false;
    }
    const unit_def *u = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(units); i++)
        if (!strcmp(unit, units[i].name))
            u = &units[i];
    if (!u) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_UNIT,
                    "%s: unknown unit \"%s\" (expected s, ms, us, ns, B/s, GB/s, GiB/s or flag)", where, unit);
        return false;
    }
    if (u->bw && !(size > 0)) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_VALUE, "%s: a bandwidth record needs size_bytes > 0", where);
        return false;
    }
    r->bw = u->bw;
    r->s = size;
    r->t = u->bw ? size / (med * u->scale) : med * u->scale;
    if (!(r->t >= CALIB_T_MIN_S && r->t <= CALIB_T_MAX_S)) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_VALUE,
                    "%s: \"median\" %g %s gives a time of %g s, outside %g..%g s", where, med, unit, r->t,
                    CALIB_T_MIN_S, CALIB_T_MAX_S);
        return false;
    }
    /* the whole name: a cut one (it was 511 bytes) merged two paths' records */
    const char *parts[] = {r->bench, path, dir, r->mode, r->dtype};
    GString *name = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(parts); i++)
        if (parts[i])
            g_string_append_printf(name, "%s%s", name->len ? "/" : "", parts[i]);
    r->name = g_string_free(name, FALSE);
    return true;
}

static void record_clear(gpointer p) { g_free(((record *)p)->name); }

static int dtype_index(const char *name);

/* What calibrate/ writes (run.sh's benchmarks): an unknown bench, a reduce
 * of an unknown type or a second device's record in one file used to be
 * fitted into latencies_s (or into the first device's fit) without a word. */
static bool record_known(const record *r, const char *where, const char *first_device, GError **err)
{
    static const char *const benches[] = {"d2d_copy", "d2h",   "h2d",  "event",   "flag_pingpong", "gemm", "launch",
                                          "p2p",      "p2p_access", "stream_order", "overlap", "reduce", "nccl"};
    bool known = false;
    for (size_t i = 0; i < G_N_ELEMENTS(benches) && !known; i++)
        known = !strcmp(r->bench, benches[i]);
    if (!known) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_FIELD, "%s: unknown bench \"%s\" (calibrate/ writes d2d_copy, "
                    "d2h, h2d, event, flag_pingpong, gemm, launch, p2p, p2p_access, stream_order, overlap, reduce, "
                    "nccl)", where, r->bench);
        return false;
    }
    if (!strcmp(r->bench, "reduce") && !r->info && dtype_index(r->dtype) < 0) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_FIELD, "%s: reduce of dtype \"%s\": expected fp32, fp16 or bf16",
                    where, r->dtype ? r->dtype : "(none)");
        return false;
    }
    if (first_device && strcmp(r->device, first_device)) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_FIELD, "%s: device \"%s\", but the file's first record is of "
                    "\"%s\": fit one device at a time", where, r->device, first_device);
        return false;
    }
    return true;
}

bool calib_fit_set_add_jsonl(calib_fit_set *s, const char *path, GError **err)
{
    char *text = NULL;
    gsize len = 0;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, &len, &e)) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_IO, "%s: %s", path, e->message);
        g_error_free(e);
        return false;
    }
    GArray *recs = g_array_new(FALSE, FALSE, sizeof(record));
    g_array_set_clear_func(recs, record_clear);
    GArray *gemm = g_array_new(FALSE, FALSE, sizeof(calib_gemm_pt));
    const char *first_device = NULL;
    GPtrArray *objs = g_ptr_array_new_with_free_func((GDestroyNotify)cJSON_Delete);
    bool ok = true;
    int lineno = 0;
    for (char *line = text, *next; ok && line && line < text + len; line = next) {
        lineno++;
        next = memchr(line, '\n', (size_t)(text + len - line));
        if (next)
            *next++ = 0;
        const char *p = line;
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p || *p == '#')
            continue;
        const char *end = NULL;
        cJSON *o = cJSON_ParseWithOpts(line, &end, false);
        const char *q = end ? end : line;
        while (o && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (!o || !cJSON_IsObject(o) || *q) {
            const char *at = o ? q : (cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : line);
            if (at < line || at > line + strlen(line))
                at = line + strlen(line);
            g_set_error(err, CALIB_ERROR, CALIB_ERROR_PARSE, "%s:%d:%d: %s", path, lineno, (int)(at - line) + 1,
                        !o ? "not valid JSON (truncated line?)" : *q ? "text after the JSON object"
                                                                    : "a record must be a JSON object");
            cJSON_Delete(o);
            ok = false;
            break;
        }
        g_ptr_array_add(objs, o);
        char *where = g_strdup_printf("%s:%d", path, lineno);
        record r = {.line = lineno};
        ok = record_parse(o, where, &r, err) && record_known(&r, where, first_device, err);
        if (ok && !strcmp(r.bench, "gemm")) { /* its own model (fit_gemm.c), not an alpha-beta path */
            calib_gemm_pt gp;
            if ((ok = calib_gemm_pt_parse(o, where, &gp, err)))
                g_array_append_val(gemm, gp);
        } else if (ok && !r.info) {
            g_array_append_val(recs, r);
            r.name = NULL; /* recs owns it */
        }
        g_free(r.name);
        if (ok && !first_device)
            first_device = r.device;
        g_free(where);
    }
    if (ok && recs->len == 0 && gemm->len == 0) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_EMPTY, "%s:%d: no calibration record in the file", path,
                    MAX(lineno, 1));
        ok = false;
    }
    for (guint i = 0; ok && i < recs->len; i++) {
        record *r = &g_array_index(recs, record, i);
        char *where = g_strdup_printf("%s:%d", path, r->line);
        group *g = group_get(s, r->name, r->bench, r->mode, r->dtype, where);
        g_free(where);
        g->bw_unit = g->bw_unit || r->bw;
        g_array_append_val(g->pts, ((pt){r->s, r->t}));
    }
    if (ok) {
        note_source(s, path, first_device);
        g_array_append_vals(s->gemm, gemm->data, gemm->len);
    }
    g_ptr_array_unref(objs);
    g_array_unref(gemm);
    g_array_unref(recs);
    g_free(text);
    return ok;
}

/* ---- nccl-tests logs --------------------------------------------------- */

/* One run of an nccl-tests log (where the file holds several, "path (run r of n)" in messages): its
 * out-of-place times as one group per collective, ranks and type; false with *err. */
static bool add_nccltests_run(calib_fit_set *s, const char *path, const nccltests_log *log, GError **err)
{
    char *where = log->run.nruns > 1 ? g_strdup_printf("%s (run %d of %d, lines %d-%d)", path, log->run.run,
                                                       log->run.nruns, log->run.first_line, log->run.last_line)
                                     : g_strdup(path);
    bool ok = false;
    if (log->ngroups > 1) { /* -d all / -o all / -r -1: one fit group per type would mix them */
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_NCCLTESTS,
                    "%s: %d sweeps (one per type, reduction or root) in one table; calibrate fit takes one per run",
                    where, log->ngroups);
        goto out;
    }
    char *name = g_strdup_printf("nccl/%s/%dr/%s", coll_kind_name(log->coll), log->nranks,
                                 nccltests_dtype_name(log->dtype));
    group *g = group_get(s, name, "nccl", NULL, nccltests_dtype_name(log->dtype), where);
    g_free(name);
    g->is_coll = true, g->nranks = log->nranks;
    size_t added = 0;
    for (size_t i = 0; i < log->nrows; i++)
        if (log->rows[i].size_bytes > 0 && log->rows[i].time_us[NCCLTESTS_OOP] > 0) { /* size 0: no call */
            g_array_append_val(g->pts, ((pt){(double)log->rows[i].size_bytes,
                                             log->rows[i].time_us[NCCLTESTS_OOP] * 1e-6}));
            added++;
        }
    if (!added) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_EMPTY, "%s: no row with a positive time", where);
        goto out;
    }
    ok = true;
out:
    g_free(where);
    return ok;
}

/* Every run of the log (nccl-tests runs one after another in one file, e.g. all_reduce_perf then
 * all_gather_perf from one job script), each its own group; repeated runs of the same collective,
 * ranks and type add their points to one group. */
bool calib_fit_set_add_nccltests(calib_fit_set *s, const char *path, GError **err)
{
    GError *e = NULL;
    int nruns = 1;
    for (int run = 1; run <= nruns; run++) {
        nccltests_log *log = nccltests_read_run(path, -1, run, &e);
        if (!log) {
            g_set_error_literal(err, CALIB_ERROR, CALIB_ERROR_NCCLTESTS, e->message);
            g_error_free(e);
            return false;
        }
        nruns = log->run.nruns;
        bool ok = add_nccltests_run(s, path, log, err);
        nccltests_log_free(log);
        if (!ok)
            return false;
    }
    note_source(s, path, NULL);
    return true;
}

bool calib_fit_set_add_file(calib_fit_set *s, const char *path, GError **err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_IO, "%s: %s", path, g_strerror(errno));
        return false;
    }
    int c;
    while ((c = fgetc(f)) != EOF && (c == ' ' || c == '\t' || c == '\r' || c == '\n'))
        ;
    fclose(f);
    if (c == '{' || c == EOF || g_str_has_suffix(path, ".jsonl"))
        return calib_fit_set_add_jsonl(s, path, err);
    return calib_fit_set_add_nccltests(s, path, err);
}

/* ---- solve -------------------------------------------------------------- */

static int group_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp((*(group *const *)a)->name, (*(group *const *)b)->name);
}

static int dtype_index(const char *name)
{
    static const char *const alias[][2] = {{"fp32", "float"}, {"fp16", "half"}, {"bf16", "bfloat16"}};
    for (int i = 0; name && i < CALIB_NDTYPES; i++)
        if (!strcmp(name, alias[i][0]) || !strcmp(name, alias[i][1]))
            return i;
    return -1;
}

/* A fitted path (or collective) and the launch cost within what a params
 * file may hold (calib_params_load's bounds); false with *err at the
 * group's first record. */
static bool fit_in_bounds(const calib_fit_set *s, const group *launch, GError **err)
{
    for (guint gi = 0; gi < s->groups->len; gi++) {
        const group *g = s->groups->pdata[gi];
        if (g->fitted && g->fit.alpha_s > CALIB_ALPHA_MAX_S) {
            g_set_error(err, CALIB_ERROR, CALIB_ERROR_VALUE, "%s: %s: fitted alpha %g s is over %g s, the most a "
                        "params file holds", g->where, g->name, g->fit.alpha_s, CALIB_ALPHA_MAX_S);
            return false;
        }
        if (g->fitted && !(g->fit.beta_Bps >= CALIB_BETA_MIN_BPS && isfinite(g->fit.beta_Bps))) {
            g_set_error(err, CALIB_ERROR, CALIB_ERROR_VALUE, "%s: %s: fitted beta %g B/s: a params file holds finite "
                        "rates of at least %g B/s (1 MB/s)", g->where, g->name, g->fit.beta_Bps, CALIB_BETA_MIN_BPS);
            return false;
        }
    }
    if (launch && launch->scalar > CALIB_LAUNCH_MAX_S) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_VALUE, "%s: %s: launch cost %g s is over %g s, the most a "
                    "params file holds (launch_s)", launch->where, launch->name, launch->scalar, CALIB_LAUNCH_MAX_S);
        return false;
    }
    return true;
}

bool calib_fit_set_solve(calib_fit_set *s, calib_params *out, GError **err)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < CALIB_NDTYPES; i++)
        out->reduction_Bps[i] = NAN;
    out->launch_s = NAN;
    out->source = g_strdup(s->source->str);
    out->device = g_strdup(s->device ? s->device : "unknown");
    g_ptr_array_sort(s->groups, group_cmp);
    GArray *paths = g_array_new(FALSE, FALSE, sizeof(calib_path));
    GArray *colls = g_array_new(FALSE, FALSE, sizeof(calib_path));
    GArray *scal = g_array_new(FALSE, FALSE, sizeof(calib_scalar));
    const group *launch = NULL; /* the group launch_s is from */
    for (guint gi = 0; gi < s->groups->len; gi++) {
        group *g = s->groups->pdata[gi];
        size_t n = g->pts->len, distinct = 0;
        double *sz = g_new(double, n), *t = g_new(double, n);
        for (size_t i = 0; i < n; i++) {
            const pt *p = &g_array_index(g->pts, pt, i);
            sz[i] = p->s, t[i] = p->t;
            distinct += i == 0 || sz[i] != sz[0];
        }
        if (distinct < 2 && !g->is_coll) {
            /* one size: a latency (or one-size bandwidth), median over records */
            double med = median_of(t, n);
            g->scalar = g->bw_unit ? sz[0] / med : med;
            calib_scalar c = {g_strdup(g->name), g->scalar, g->bw_unit};
            g_array_append_val(scal, c);
            if (!strcmp(g->bench, "launch") && g->mode && !strcmp(g->mode, "kernel") && isnan(out->launch_s)) {
                out->launch_s = med;
                launch = g;
            }
        } else if ((g->fitted = calib_fit_line(sz, t, n, &g->fit))) {
            calib_path c = {g_strdup(g->name), g->fit.alpha_s, g->fit.beta_Bps, g->fit.residual_rms_pct,
                            g->nranks};
            g_array_append_val(g->is_coll ? colls : paths, c);
            int d = dtype_index(g->dtype);
            if (!strcmp(g->bench, "reduce") && d >= 0 && isnan(out->reduction_Bps[d]))
                out->reduction_Bps[d] = g->fit.beta_Bps;
        }
        g_free(sz), g_free(t);
    }
    out->npaths = paths->len, out->paths = (calib_path *)g_array_free(paths, FALSE);
    out->ncollectives = colls->len, out->collectives = (calib_path *)g_array_free(colls, FALSE);
    out->nscalars = scal->len, out->scalars = (calib_scalar *)g_array_free(scal, FALSE);
    calib_gemm_solve((const calib_gemm_pt *)s->gemm->data, s->gemm->len, s->gemm_fit);
    memcpy(out->gemm, s->gemm_fit, sizeof out->gemm);
    if (!fit_in_bounds(s, launch, err)) {
        calib_params_clear(out);
        return false;
    }
    if (!out->npaths && !out->ncollectives && !out->nscalars && !s->gemm->len) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_FIT, "%s: nothing could be fitted (need >= 2 sizes with "
                    "time growing with size)", out->source);
        calib_params_clear(out);
        return false;
    }
    return true;
}

void calib_fit_set_print(const calib_fit_set *s, FILE *f)
{
    for (guint gi = 0; gi < s->groups->len; gi++) {
        const group *g = s->groups->pdata[gi];
        size_t n = g->pts->len;
        if (!g->fitted) {
            if (g->scalar > 0)
                fprintf(f, "%s: %s %.6g %s (one size, median of %zu)\n\n", g->name,
                        g->bw_unit ? "bandwidth" : "latency", g->bw_unit ? g->scalar / 1e9 : g->scalar * 1e6,
                        g->bw_unit ? "GB/s" : "us", n);
            else
                fprintf(f, "%s: not fitted (%zu points; need >= 2 sizes and a positive slope)\n\n", g->name, n);
            continue;
        }
        const calib_line *L = &g->fit;
        fprintf(f, "%s: alpha %.4f us  beta %.4f GB/s  residual rms %.2f%% max %.2f%%\n"
                   "  points %d, slope from %d bandwidth-bound (%d outliers dropped), alpha from %d%s\n",
                g->name, L->alpha_s * 1e6, L->beta_Bps / 1e9, L->residual_rms_pct, L->residual_max_pct, L->npoints,
                L->nfit, L->noutliers, L->nalpha, L->nalpha ? " small sizes" : " (extrapolated intercept)");
        pt *p = g_memdup2(g->pts->data, n * sizeof(pt));
        qsort(p, n, sizeof *p, pt_cmp);
        fprintf(f, "  %14s %14s %14s %9s\n", "size_B", "measured_us", "model_us", "resid%");
        for (size_t i = 0; i < n; i++) {
            double m = L->alpha_s + p[i].s / L->beta_Bps;
            fprintf(f, "  %14.0f %14.4f %14.4f %+9.3f\n", p[i].s, p[i].t * 1e6, m * 1e6, 100 * (m - p[i].t) / p[i].t);
        }
        fprintf(f, "\n");
        g_free(p);
    }
    calib_gemm_print((const calib_gemm_pt *)s->gemm->data, s->gemm->len, s->gemm_fit, f);
}

/* ---- params file ------------------------------------------------------- */

void calib_params_clear(calib_params *p)
{
    for (size_t i = 0; i < p->npaths; i++)
        g_free(p->paths[i].name);
    for (size_t i = 0; i < p->ncollectives; i++)
        g_free(p->collectives[i].name);
    for (size_t i = 0; i < p->nscalars; i++)
        g_free(p->scalars[i].name);
    g_free(p->paths), g_free(p->collectives), g_free(p->scalars);
    g_free(p->source), g_free(p->device);
    memset(p, 0, sizeof *p);
}

const calib_path *calib_params_find(const calib_params *p, const char *name)
{
    for (size_t i = 0; i < p->npaths; i++)
        if (!strcmp(p->paths[i].name, name))
            return &p->paths[i];
    for (size_t i = 0; i < p->ncollectives; i++)
        if (!strcmp(p->collectives[i].name, name))
            return &p->collectives[i];
    return NULL;
}

static cJSON *paths_json(const calib_path *v, size_t n, bool coll)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", v[i].name);
        if (coll)
            cJSON_AddNumberToObject(o, "nranks", v[i].nranks);
        cJSON_AddNumberToObject(o, "alpha_s", v[i].alpha_s);
        cJSON_AddNumberToObject(o, "beta_Bps", v[i].beta_Bps);
        cJSON_AddNumberToObject(o, "residual_rms_pct", v[i].residual_rms_pct);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

char *calib_params_to_json(const calib_params *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "source", p->source ? p->source : "");
    cJSON_AddStringToObject(o, "device", p->device ? p->device : "unknown");
    cJSON_AddItemToObject(o, "paths", paths_json(p->paths, p->npaths, false));
    cJSON *red = cJSON_AddObjectToObject(o, "reduction_Bps");
    for (int i = 0; i < CALIB_NDTYPES; i++)
        if (!isnan(p->reduction_Bps[i]))
            cJSON_AddNumberToObject(red, calib_dtype_name((calib_dtype)i), p->reduction_Bps[i]);
    if (!isnan(p->launch_s))
        cJSON_AddNumberToObject(o, "launch_s", p->launch_s);
    cJSON *gm = NULL;
    for (int i = 0; i < CALIB_GEMM_NDTYPES; i++) {
        const calib_gemm *g = &p->gemm[i];
        if (!(g->peak_Fps > 0) && !(g->eff_Fps > 0))
            continue;
        gm = gm ? gm : cJSON_AddObjectToObject(o, "gemm");
        cJSON *d = cJSON_AddObjectToObject(gm, calib_gemm_dtype_name((calib_gemm_dtype)i));
        if (g->peak_Fps > 0)
            cJSON_AddNumberToObject(d, "peak_Fps", g->peak_Fps);
        if (g->eff_Fps > 0) {
            cJSON_AddNumberToObject(d, "eff_Fps", g->eff_Fps);
            cJSON_AddNumberToObject(d, "k0", g->k0);
            cJSON_AddNumberToObject(d, "residual_rms_pct", g->rms_pct);
            cJSON_AddNumberToObject(d, "residual_max_pct", g->max_pct);
            cJSON_AddNumberToObject(d, "points", g->npoints);
        }
    }
    cJSON *lat = cJSON_AddObjectToObject(o, "latencies_s"), *bw = cJSON_AddObjectToObject(o, "bandwidths_Bps");
    for (size_t i = 0; i < p->nscalars; i++)
        cJSON_AddNumberToObject(p->scalars[i].is_bandwidth ? bw : lat, p->scalars[i].name, p->scalars[i].value);
    cJSON_AddItemToObject(o, "collectives", paths_json(p->collectives, p->ncollectives, true));
    char *txt = cJSON_Print(o), *ret = g_strdup(txt);
    cJSON_free(txt);
    cJSON_Delete(o);
    return ret;
}

/* "path:line:col" of offset `off` in text. */
static char *pos_of(const char *path, const char *text, size_t off)
{
    int line = 1, col = 1;
    for (size_t i = 0; i < off && text[i]; i++)
        text[i] == '\n' ? (line++, col = 1) : col++;
    return g_strdup_printf("%s:%d:%d", path, line, col);
}

static bool load_paths(cJSON *arr, const char *path, const char *key, GArray *out, GError **err)
{
    if (!arr)
        return true;
    if (!cJSON_IsArray(arr)) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_FIELD, "%s: $.%s: must be an array", path, key);
        return false;
    }
    int idx = 0;
    for (cJSON *e = arr->child; e; e = e->next, idx++) {
        cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "alpha_s"), *b = cJSON_GetObjectItemCaseSensitive(e, "beta_Bps");
        cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "residual_rms_pct");
        cJSON *nr = cJSON_GetObjectItemCaseSensitive(e, "nranks");
        /* beta at least 1 MB/s, alpha at most 1 s: a slower path's times leave the picosecond clock */
        if (!cJSON_IsString(nm) || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) || !(a->valuedouble >= 0) ||
            !(a->valuedouble <= CALIB_ALPHA_MAX_S) || !(b->valuedouble >= CALIB_BETA_MIN_BPS) ||
            !isfinite(b->valuedouble)) {
            g_set_error(err, CALIB_ERROR, CALIB_ERROR_VALUE,
                        "%s: $.%s[%d]: need \"name\", \"alpha_s\" in 0..%g and \"beta_Bps\" >= %g", path, key, idx,
                        CALIB_ALPHA_MAX_S, CALIB_BETA_MIN_BPS);
            return false;
        }
        calib_path c = {g_strdup(nm->valuestring), a->valuedouble, b->valuedouble,
                        cJSON_IsNumber(r) ? r->valuedouble : NAN, cJSON_IsNumber(nr) ? nr->valueint : 0};
        g_array_append_val(out, c);
    }
    return true;
}

static void load_scalars(cJSON *obj, bool bw, GArray *out)
{
    for (cJSON *e = obj ? obj->child : NULL; e; e = e->next)
        if (cJSON_IsNumber(e) && e->string) {
            calib_scalar c = {g_strdup(e->string), e->valuedouble, bw};
            g_array_append_val(out, c);
        }
}

/* The "gemm" object: per dtype name, peak_Fps > 0 and/or eff_Fps > 0 with
 * k0 >= 0; anything else named there is an error. */
static bool load_gemm(cJSON *obj, const char *path, calib_gemm out[CALIB_GEMM_NDTYPES], GError **err)
{
    for (int i = 0; i < CALIB_GEMM_NDTYPES; i++)
        out[i] = (calib_gemm){NAN, NAN, NAN, NAN, NAN, 0};
    if (!obj)
        return true;
    if (!cJSON_IsObject(obj)) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_FIELD, "%s: $.gemm: must be an object", path);
        return false;
    }
    for (cJSON *e = obj->child; e; e = e->next) {
        int d = -1;
        for (int i = 0; i < CALIB_GEMM_NDTYPES; i++)
            if (!strcmp(e->string, calib_gemm_dtype_name((calib_gemm_dtype)i)))
                d = i;
        cJSON *pk = cJSON_GetObjectItemCaseSensitive(e, "peak_Fps"), *ef = cJSON_GetObjectItemCaseSensitive(e, "eff_Fps");
        cJSON *k0 = cJSON_GetObjectItemCaseSensitive(e, "k0"), *np = cJSON_GetObjectItemCaseSensitive(e, "points");
        cJSON *rms = cJSON_GetObjectItemCaseSensitive(e, "residual_rms_pct");
        cJSON *mx = cJSON_GetObjectItemCaseSensitive(e, "residual_max_pct");
        /* rates finite (1e400 is inf to cJSON), k0 as --set gpu.gemm_k0 (0..1e6) */
        bool bad = d < 0 || !cJSON_IsObject(e) ||
                   (pk && (!cJSON_IsNumber(pk) || !(pk->valuedouble > 0) || !isfinite(pk->valuedouble))) ||
                   (ef && (!cJSON_IsNumber(ef) || !(ef->valuedouble > 0) || !isfinite(ef->valuedouble) ||
                           !cJSON_IsNumber(k0) || !(k0->valuedouble >= 0) ||
                           !(k0->valuedouble <= CALIB_GEMM_K0_MAX))) ||
                   (!pk && !ef);
        if (bad) {
            g_set_error(err, CALIB_ERROR, CALIB_ERROR_VALUE,
                        "%s: $.gemm.%s: need a dtype name (fp32, tf32, fp16, bf16, fp8) holding \"peak_Fps\" > 0 "
                        "and/or \"eff_Fps\" > 0 with \"k0\" in 0..1e6",
                        path, e->string ? e->string : "?");
            return false;
        }
        calib_gemm *g = &out[d];
        g->peak_Fps = pk ? pk->valuedouble : NAN;
        g->eff_Fps = ef ? ef->valuedouble : NAN;
        g->k0 = ef ? k0->valuedouble : NAN;
        g->rms_pct = cJSON_IsNumber(rms) ? rms->valuedouble : NAN;
        g->max_pct = cJSON_IsNumber(mx) ? mx->valuedouble : NAN;
        g->npoints = cJSON_IsNumber(np) ? np->valueint : 0;
    }
    return true;
}

bool calib_params_load(const char *path, calib_params *out, GError **err)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, NULL, &e)) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_IO, "%s: %s", path, e->message);
        g_error_free(e);
        return false;
    }
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithOpts(text, &end, true);
    if (!cJSON_IsObject(o)) {
        const char *at = o ? text : cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : text;
        char *pos = pos_of(path, text, (size_t)(at - text));
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_PARSE, "%s: %s", pos,
                    o ? "a params file must be a JSON object" : "not valid JSON");
        g_free(pos), g_free(text), cJSON_Delete(o);
        return false;
    }
    GArray *paths = g_array_new(FALSE, FALSE, sizeof(calib_path));
    GArray *colls = g_array_new(FALSE, FALSE, sizeof(calib_path));
    GArray *scal = g_array_new(FALSE, FALSE, sizeof(calib_scalar));
    bool ok = load_paths(cJSON_GetObjectItemCaseSensitive(o, "paths"), path, "paths", paths, err) &&
              load_paths(cJSON_GetObjectItemCaseSensitive(o, "collectives"), path, "collectives", colls, err);
    load_scalars(cJSON_GetObjectItemCaseSensitive(o, "latencies_s"), false, scal);
    load_scalars(cJSON_GetObjectItemCaseSensitive(o, "bandwidths_Bps"), true, scal);
    cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "source"), *dev = cJSON_GetObjectItemCaseSensitive(o, "device");
    out->source = g_strdup(cJSON_IsString(src) ? src->valuestring : "");
    out->device = g_strdup(cJSON_IsString(dev) ? dev->valuestring : "unknown");
    cJSON *red = cJSON_GetObjectItemCaseSensitive(o, "reduction_Bps");
    for (int i = 0; i < CALIB_NDTYPES; i++) {
        cJSON *v = cJSON_GetObjectItemCaseSensitive(red, calib_dtype_name((calib_dtype)i));
        out->reduction_Bps[i] = cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : NAN;
    }
    ok = ok && load_gemm(cJSON_GetObjectItemCaseSensitive(o, "gemm"), path, out->gemm, err);
    cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "launch_s");
    /* 0..1 s, as --launch-us (0..1e6 us): 1e300 overflowed the picosecond clock */
    if (ok && l && (!cJSON_IsNumber(l) || !(l->valuedouble >= 0) || !(l->valuedouble <= CALIB_LAUNCH_MAX_S))) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_VALUE, "%s: $.launch_s: must be seconds in 0..%g", path,
                    CALIB_LAUNCH_MAX_S);
        ok = false;
    }
    out->launch_s = cJSON_IsNumber(l) && l->valuedouble >= 0 ? l->valuedouble : NAN;
    out->npaths = paths->len, out->paths = (calib_path *)g_array_free(paths, FALSE);
    out->ncollectives = colls->len, out->collectives = (calib_path *)g_array_free(colls, FALSE);
    out->nscalars = scal->len, out->scalars = (calib_scalar *)g_array_free(scal, FALSE);
    if (!ok)
        calib_params_clear(out);
    cJSON_Delete(o);
    g_free(text);
    return ok;
}

/* calibrate/fit_gemm.c - GEMM records (calibrate/gemm.cu) to the compute
 * model's GEMM parameters: the best square rate per dtype, and the shape
 * model t = 2mnk / (eff * k / (k + k0)) fitted to the transformer-layer
 * shapes.  Contracts in calibrate/fit.h; the model and the fit are in
 * docs/calibration.md ("GEMM").
 */
#include "calibrate/fit.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

/* k0 is searched on 0, 1, ..., K0_MAX (reduction steps). */
#define K0_MAX 4096

const char *calib_gemm_dtype_name(calib_gemm_dtype dt)
{
    static const char *const names[CALIB_GEMM_NDTYPES] = {"fp32", "tf32", "fp16", "bf16", "fp8"};
    g_assert(dt >= 0 && dt < CALIB_GEMM_NDTYPES);
    return names[dt];
}

static bool whole_pos(const cJSON *o, const char *key, const char *where, double *out, GError **err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble > 1e9) {
        g_set_error(err, CALIB_ERROR, v ? CALIB_ERROR_VALUE : CALIB_ERROR_FIELD,
                    "%s: gemm record: \"%s\" must be a whole number in 1..1e9", where, key);
        return false;
    }
    *out = v->valuedouble;
    return true;
}

bool calib_gemm_pt_parse(const void *cjson_obj, const char *where, calib_gemm_pt *out, GError **err)
{
    const cJSON *o = cjson_obj;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(o, "dtype"), *mode = cJSON_GetObjectItemCaseSensitive(o, "mode");
    const cJSON *med = cJSON_GetObjectItemCaseSensitive(o, "median"), *unit = cJSON_GetObjectItemCaseSensitive(o, "unit");
    memset(out, 0, sizeof *out);
    int d = -1;
    for (int i = 0; cJSON_IsString(dt) && i < CALIB_GEMM_NDTYPES; i++)
        if (!strcmp(dt->valuestring, calib_gemm_dtype_name((calib_gemm_dtype)i)))
            d = i;
    if (d < 0) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_FIELD,
                    "%s: gemm record: \"dtype\" must be one of fp32, tf32, fp16, bf16, fp8", where);
        return false;
    }
    static const struct {
        const char *name;
        double s;
    } units[] = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
    double scale = 0;
    for (size_t i = 0; cJSON_IsString(unit) && i < G_N_ELEMENTS(units); i++)
        if (!strcmp(unit->valuestring, units[i].name))
            scale = units[i].s;
    if (!scale) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_UNIT, "%s: gemm record: \"unit\" must be s, ms, us or ns", where);
        return false;
    }
    if (!cJSON_IsNumber(med) || !(med->valuedouble > 0) || !isfinite(med->valuedouble)) {
        g_set_error(err, CALIB_ERROR, CALIB_ERROR_VALUE, "%s: gemm record: \"median\" must be a number > 0", where);
        return false;
    }
    if (!whole_pos(o, "m", where, &out->m, err) || !whole_pos(o, "n", where, &out->n, err) ||
        !whole_pos(o, "k", where, &out->k, err))
        return false;
    out->dt = (calib_gemm_dtype)d;
    out->square = cJSON_IsString(mode) && !strcmp(mode->valuestring, "square");
    out->t = med->valuedouble * scale;
    return true;
}

double calib_gemm_time(const calib_gemm *g, double m, double n, double k)
{
    return 2 * m * n * k / (g->eff_Fps * k / (k + g->k0));
}

/* For one k0: the eff minimising sum (model/measured - 1)^2 (closed form:
 * with u = rate / (k / (k + k0)), model/measured = u / eff, so 1/eff =
 * sum u / sum u^2) and that sum. */
static double fit_at(const calib_gemm_pt *p, size_t n, calib_gemm_dtype dt, double k0, double *eff)
{
    double su = 0, su2 = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i].dt == dt && !p[i].square) {
            double u = 2 * p[i].m * p[i].n * p[i].k / p[i].t / (p[i].k / (p[i].k + k0));
            su += u, su2 += u * u;
        }
    *eff = su2 / su;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i].dt == dt && !p[i].square) {
            double u = 2 * p[i].m * p[i].n * p[i].k / p[i].t / (p[i].k / (p[i].k + k0));
            ss += (u / *eff - 1) * (u / *eff - 1);
        }
    return ss;
}

void calib_gemm_solve(const calib_gemm_pt *p, size_t n, calib_gemm out[CALIB_GEMM_NDTYPES])
{
    for (int d = 0; d < CALIB_GEMM_NDTYPES; d++) {
        calib_gemm *g = &out[d];
        *g = (calib_gemm){NAN, NAN, NAN, NAN, NAN, 0};
        GHashTable *ks = g_hash_table_new(g_direct_hash, g_direct_equal);
        for (size_t i = 0; i < n; i++) {
            if (p[i].dt != (calib_gemm_dtype)d)
                continue;
            double rate = 2 * p[i].m * p[i].n * p[i].k / p[i].t;
            if (p[i].square && !(rate <= g->peak_Fps))
                g->peak_Fps = rate;
            if (!p[i].square) {
                g->npoints++;
                g_hash_table_add(ks, GINT_TO_POINTER((int)p[i].k));
            }
        }
        bool enough = g_hash_table_size(ks) >= 3;
        g_hash_table_destroy(ks);
        if (!enough)
            continue;
        double best = INFINITY, eff = 0;
        for (int k0 = 0; k0 <= K0_MAX; k0++) {
            double e, ss = fit_at(p, n, (calib_gemm_dtype)d, k0, &e);
            if (ss < best)
                best = ss, g->k0 = k0, eff = e;
        }
        g->eff_Fps = eff;
        g->rms_pct = 100 * sqrt(best / g->npoints);
        g->max_pct = 0;
        for (size_t i = 0; i < n; i++)
            if (p[i].dt == (calib_gemm_dtype)d && !p[i].square) {
                double r = 100 * fabs(calib_gemm_time(g, p[i].m, p[i].n, p[i].k) / p[i].t - 1);
                g->max_pct = r > g->max_pct ? r : g->max_pct;
            }
    }
}

void calib_gemm_print(const calib_gemm_pt *p, size_t n, const calib_gemm out[CALIB_GEMM_NDTYPES], FILE *f)
{
    for (int d = 0; d < CALIB_GEMM_NDTYPES; d++) {
        const calib_gemm *g = &out[d];
        if (isnan(g->peak_Fps) && !g->npoints)
            continue;
        fprintf(f, "gemm/%s: best square %.1f TFLOP/s", calib_gemm_dtype_name((calib_gemm_dtype)d),
                isnan(g->peak_Fps) ? 0 : g->peak_Fps / 1e12);
        if (isnan(g->eff_Fps)) {
            fprintf(f, "; shape model not fitted (%d layer points, need >= 3 distinct k)\n\n", g->npoints);
            continue;
        }
        fprintf(f, "; shape model eff %.1f TFLOP/s, k0 %.0f: residual rms %.2f%% max %.2f%% over %d layer shapes\n",
                g->eff_Fps / 1e12, g->k0, g->rms_pct, g->max_pct, g->npoints);
        fprintf(f, "  %8s %8s %8s %12s %12s %9s\n", "m", "n", "k", "measured_us", "model_us", "resid%");
        for (size_t i = 0; i < n; i++)
            if (p[i].dt == (calib_gemm_dtype)d && !p[i].square) {
                double m = calib_gemm_time(g, p[i].m, p[i].n, p[i].k);
                fprintf(f, "  %8.0f %8.0f %8.0f %12.2f %12.2f %+9.2f\n", p[i].m, p[i].n, p[i].k, p[i].t * 1e6,
                        m * 1e6, 100 * (m / p[i].t - 1));
            }
        fprintf(f, "\n");
    }
}

/* traces/validate_stats.c - relative errors and nearest-rank percentiles
 * for `conveyor validate`.  See validate_stats.h for the exclusion rule.
 */
#include "traces/validate_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double vstats_percentile(const double *values, size_t n, double p)
{
    g_assert(p >= 0 && p <= 100);
    if (n == 0)
        return NAN;
    double *v = g_memdup2(values, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);
    size_t rank = (size_t)ceil(p / 100.0 * (double)n - 1e-9);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    double r = v[rank - 1];
    g_free(v);
    return r;
}

static double rel_pct(double pred, double meas)
{
    return meas > 0 ? 100.0 * (pred - meas) / meas : NAN;
}

void vstats_compute(vstats_point *pts, size_t n, vstats_summary *sum)
{
    double *all = g_new(double, n + 1), *large = g_new(double, n + 1);
    size_t na = 0, nl = 0;
    double max = NAN;
    for (size_t i = 0; i < n; i++) {
        vstats_point *p = &pts[i];
        p->time_err_pct = rel_pct(p->pred_time_us, p->meas_time_us);
        /* busbw is size / time x the collective's factor on both sides, so its relative error
         * is meas_time / pred_time - 1: from the times, not the printed busbw, which nccl-tests
         * rounds to 0.01 GB/s (0.0064 prints as 0.01, a 56% error before anything is compared) */
        p->excluded = !(p->size_bytes > 0 && p->meas_time_us > 0 && p->pred_time_us > 0);
        p->busbw_err_pct = p->excluded ? NAN : 100.0 * (p->meas_time_us / p->pred_time_us - 1);
        if (p->excluded)
            continue;
        double e = fabs(p->busbw_err_pct);
        all[na++] = e;
        if ((double)p->size_bytes >= MIB)
            large[nl++] = e;
        if (isnan(max) || e > max)
            max = e;
    }
    *sum = (vstats_summary){
        .points = na,
        .median = vstats_percentile(all, na, 50),
        .p90 = vstats_percentile(all, na, 90),
        .max = max,
        .points_large = nl,
        .median_large = vstats_percentile(large, nl, 50),
        .p90_large = vstats_percentile(large, nl, 90),
    };
    g_free(all);
    g_free(large);
}

vstats_point *vstats_pair_rows(const nccltests_row *meas, size_t nm, const nccltests_row *pred,
                               size_t np, int placement, size_t *n_out, GError **err)
{
    g_assert(placement == NCCLTESTS_OOP || placement == NCCLTESTS_IP);
    vstats_point *pts = g_new0(vstats_point, nm + 1);
    for (size_t i = 0; i < nm; i++) {
        const nccltests_row *m = &meas[i], *q = NULL;
        for (size_t j = 0; j < np && !q; j++)
            if (pred[j].size_bytes == m->size_bytes)
                q = &pred[j];
        if (!q) {
            g_set_error(err, NCCLTESTS_ERROR, NCCLTESTS_ERROR_BAD_VALUE,
                        "expected a prediction for every measured size, got none for %" G_GUINT64_FORMAT
                        " B (measured row %zu)", m->size_bytes, i + 1);
            g_free(pts);
            return NULL;
        }
        pts[i] = (vstats_point){
            .size_bytes = m->size_bytes,
            .meas_time_us = m->time_us[placement],
            .meas_busbw_GBps = m->busbw_GBps[placement],
            .pred_time_us = q->time_us[placement],
            .pred_busbw_GBps = q->busbw_GBps[placement],
        };
    }
    *n_out = nm;
    return pts;
}

static const char *pct(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, "%.2f%%", v);
    if (buf[0] == '-' && buf[strspn(buf + 1, "0.") + 1] == '%') /* -0.004 printed "-0.00%": a sign on zero */
        memmove(buf, buf + 1, strlen(buf));
    return buf;
}

void vstats_print(FILE *f, const vstats_point *pts, size_t n, const vstats_summary *sum)
{
    char a[32], b[32], c[32], d[32], e[32];
    fprintf(f, "%12s  %12s  %12s  %12s  %12s  %9s\n", "size(B)", "meas_us", "meas_busbw",
            "pred_us", "pred_busbw", "busbw_err");
    for (size_t i = 0; i < n; i++) {
        const vstats_point *p = &pts[i];
        fprintf(f, "%12" G_GUINT64_FORMAT "  %12.2f  %12.2f  %12.2f  %12.2f  %9s\n", p->size_bytes,
                p->meas_time_us, p->meas_busbw_GBps, p->pred_time_us, p->pred_busbw_GBps,
                p->excluded ? "-" : pct(a, sizeof a, p->busbw_err_pct));
    }
    fprintf(f, "summary: points=%zu median_abs_err=%s p90_abs_err=%s max_abs_err=%s"
               " (sizes >= 1MiB: median %s p90 %s)\n",
            sum->points, pct(a, sizeof a, sum->median), pct(b, sizeof b, sum->p90),
            pct(c, sizeof c, sum->max), pct(d, sizeof d, sum->median_large),
            pct(e, sizeof e, sum->p90_large));
}

/* traces/validate_stats.h - statistics of `conveyor validate`: measured vs
 * predicted nccl-tests rows, per-size relative errors, and a summary with
 * nearest-rank percentiles.  The busbw error is computed from the times
 * (busbw is size / time x a factor on both sides: error = meas_time /
 * pred_time - 1), not from the printed busbw, which nccl-tests rounds to
 * 0.01 GB/s. Rows of 0 bytes (nothing moved) stay in the table but are
 * excluded from the statistics.
 */
#ifndef TRACES_VALIDATE_STATS_H
#define TRACES_VALIDATE_STATS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "traces/nccltests.h"

typedef struct {
    uint64_t size_bytes;
    double meas_time_us, meas_busbw_GBps;
    double pred_time_us, pred_busbw_GBps;
    double busbw_err_pct; /* 100 (pred - meas) / meas busbw = 100 (meas_time / pred_time - 1);
                           * NAN when excluded */
    double time_err_pct;  /* 100 (pred - meas) / meas time; NAN when measured time is 0 */
    bool excluded;        /* 0 bytes, or a time of 0: not in the busbw statistics */
} vstats_point;

typedef struct {
    size_t points;            /* rows that entered the busbw statistics */
    double median, p90, max;  /* of |busbw_err_pct| over those rows; NAN if none */
    size_t points_large;      /* of those, rows with size >= 1 MiB */
    double median_large, p90_large;
} vstats_summary;

/* Nearest-rank percentile: with the n values sorted ascending, the value of
 * rank ceil(p/100 x n) (1-based), rank 1 for p = 0.  `values` is not
 * modified.  p in [0, 100].  NAN when n == 0. */
double vstats_percentile(const double *values, size_t n, double p);

/* Fills each point's errors and `excluded`, and *sum.  pts may be NULL when
 * n == 0. */
void vstats_compute(vstats_point *pts, size_t n, vstats_summary *sum);

/* Pairs measured and predicted rows by size for one placement
 * (NCCLTESTS_OOP or NCCLTESTS_IP).  Returns a new array of nm points (free
 * with g_free) with *n_out set, or NULL with *err set (NCCLTESTS_ERROR,
 * NCCLTESTS_ERROR_BAD_VALUE) when a measured size has no prediction.
 * Errors are not computed yet: call vstats_compute. */
vstats_point *vstats_pair_rows(const nccltests_row *meas, size_t nm, const nccltests_row *pred,
                               size_t np, int placement, size_t *n_out, GError **err);

/* Prints the validate table (one line per point, "-" for an excluded
 * error) and the last line exactly:
 * "summary: points=N median_abs_err=X% p90_abs_err=Y% max_abs_err=Z%
 *  (sizes >= 1MiB: median A% p90 B%)" with %.2f numbers, "n/a" when empty. */
void vstats_print(FILE *f, const vstats_point *pts, size_t n, const vstats_summary *sum);

#endif

/* cli/collplot.h - bus bandwidth against size as an SVG (gnuplot): a
 * simulated sweep (`collective --plot`) and a validation (`validate --plot`,
 * also what make validate draws under docs/validation/). */
#ifndef CLI_COLLPLOT_H
#define CLI_COLLPLOT_H

#include "simsweep.h"
#include "traces/validate_stats.h"

/* busbw (out-of-place) of rows[0..n) against size, each point marked with the
 * algorithm/protocol ex[i] names; the 80% band busbw x [blo, bhi] shaded
 * where blo/bhi are not NULL and bhi[i] > 0. Returns an exit code. */
int collplot_sweep(const char *path, const char *title, const nccltests_row *rows, size_t n,
                   const simsweep_explain *ex, const double *blo, const double *bhi);

/* measured and predicted busbw of the points (excluded ones left out). */
int collplot_validate(const char *path, const char *title, const vstats_point *pts, size_t np);

#endif

/* calibrate/fit.h - turns measurements into model parameters.
 *
 * Reads the JSON lines written by the CUDA microbenchmarks (calibrate/ .cu files)
 * and nccl-tests logs, fits t(S) = alpha + S / beta per measured path, and
 * writes/loads the parameter file a topology can reference.  The fit is
 * defined in docs/calibration.md ("The fit"); this header states contracts.
 */
#ifndef CALIBRATE_FIT_H
#define CALIBRATE_FIT_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CALIB_ERROR (calib_error_quark())
GQuark calib_error_quark(void);

/* Every code is bad input (the CLI exits 2). */
typedef enum {
    CALIB_ERROR_IO,      /* cannot open or read a file */
    CALIB_ERROR_PARSE,   /* a line is not one JSON object */
    CALIB_ERROR_FIELD,   /* a field is missing or has the wrong type */
    CALIB_ERROR_VALUE,   /* negative / zero / non-finite / out-of-order number */
    CALIB_ERROR_UNIT,    /* unknown unit */
    CALIB_ERROR_EMPTY,   /* a file holds no record */
    CALIB_ERROR_FIT,     /* nothing fittable (e.g. every slope <= 0) */
    CALIB_ERROR_NCCLTESTS /* an nccl-tests log did not read (message from traces/) */
} calib_error_code;

/* ---- the straight-line fit ------------------------------------------- */

typedef struct {
    double alpha_s;          /* intercept: latency, seconds */
    double beta_Bps;         /* 1 / slope: bandwidth, bytes per second */
    double residual_rms_pct; /* RMS of (model - measured) / measured over all points, % */
    double residual_max_pct; /* largest |(model - measured) / measured|, % */
    int npoints;             /* points given */
    int nfit;                /* bandwidth-bound points the slope was fitted on */
    int noutliers;           /* of those, dropped as outliers */
    int nalpha;              /* small points alpha was taken from (0: extrapolated) */
} calib_line;

/* Fits t = alpha + S / beta to n points (size_bytes[i] >= 0, t_s[i] > 0,
 * any order).  Needs >= 2 distinct sizes.  Returns false (out untouched)
 * when it cannot: fewer than 2 distinct sizes or a non-positive slope.
 * Cost O(n log n). */
bool calib_fit_line(const double *size_bytes, const double *t_s, size_t n, calib_line *out);

/* ---- parameters ------------------------------------------------------- */

/* What a params file may hold: calib_params_load refuses more, and
 * calib_fit_set_solve refuses to fit more.  A path's alpha at most 1 s and
 * beta at least 1 MB/s (slower, a transfer's time leaves the simulator's
 * picosecond clock); the kernel launch cost at most 1 s (--launch-us is
 * 0..1e6 us); a GEMM's k0 at most 1e6 reduction steps. */
#define CALIB_ALPHA_MAX_S 1.0
#define CALIB_BETA_MIN_BPS 1e6
#define CALIB_LAUNCH_MAX_S 1.0
#define CALIB_GEMM_K0_MAX 1e6

typedef enum { CALIB_FP32, CALIB_FP16, CALIB_BF16, CALIB_NDTYPES } calib_dtype;
/* "fp32", "fp16", "bf16". */
const char *calib_dtype_name(calib_dtype dt);

typedef struct {
    char *name;              /* "d2d_copy/gpu0/d2d/ce", "nccl/all_reduce/8r/float" */
    double alpha_s, beta_Bps, residual_rms_pct;
    int nranks;              /* collectives only; 0 for paths */
} calib_path;

typedef struct {
    char *name;              /* group name, as for paths */
    double value;            /* seconds, or bytes/s when is_bandwidth */
    bool is_bandwidth;
} calib_scalar;

/* GEMM (calibrate/gemm.cu records, bench "gemm"; calibrate/fit_gemm.c).
 * Per dtype, the shape model t(m, n, k) = 2mnk / (eff_Fps * k / (k + k0)):
 * a fixed per-tile cost (prologue, epilogue, pipeline fill) worth k0 steps
 * of the reduction loop.  eff_Fps and k0 are fitted to the non-square
 * (transformer-layer) shapes; peak_Fps is the best square product. */
typedef enum { CALIB_GEMM_FP32, CALIB_GEMM_TF32, CALIB_GEMM_FP16, CALIB_GEMM_BF16, CALIB_GEMM_FP8,
               CALIB_GEMM_NDTYPES } calib_gemm_dtype;
/* "fp32", "tf32", "fp16", "bf16", "fp8". */
const char *calib_gemm_dtype_name(calib_gemm_dtype dt);

typedef struct {
    double peak_Fps;         /* best 2mnk/t over square shapes; NAN if none */
    double eff_Fps, k0;      /* shape model; NAN if fewer than 3 distinct k among the layer shapes */
    double rms_pct, max_pct; /* relative residuals of the shape model over its points, % */
    int npoints;             /* layer-shape points fitted */
} calib_gemm;

/* One measured product (C is m x n, k the reduction), seconds. */
typedef struct {
    calib_gemm_dtype dt;
    bool square;
    double m, n, k, t;
} calib_gemm_pt;

/* Validates a "gemm" record (fields m, n, k > 0 whole numbers, dtype one of
 * the names above, median > 0 in unit "us"/"ms"/"s"/"ns"); false with *err
 * ("where: ..."). */
bool calib_gemm_pt_parse(const void *cjson_obj, const char *where, calib_gemm_pt *out, GError **err);
/* Fits every dtype present (out[dt] all NAN / 0 where none). O(n * grid). */
void calib_gemm_solve(const calib_gemm_pt *p, size_t n, calib_gemm out[CALIB_GEMM_NDTYPES]);
/* Model time (s) of one product under g (eff_Fps, k0 set). */
double calib_gemm_time(const calib_gemm *g, double m, double n, double k);
/* Report: per dtype the fit, then each layer point with its residual. */
void calib_gemm_print(const calib_gemm_pt *p, size_t n, const calib_gemm out[CALIB_GEMM_NDTYPES], FILE *f);

typedef struct {
    char *source;            /* input files, space-separated */
    char *device;            /* device name; "mixed" if records disagree */
    calib_path *paths;       /* fitted paths (microbenchmarks), by name */
    size_t npaths;
    calib_path *collectives; /* per-log fits of nccl-tests results */
    size_t ncollectives;
    calib_scalar *scalars;   /* single-size measurements (latencies, one-size bw) */
    size_t nscalars;
    double reduction_Bps[CALIB_NDTYPES]; /* NAN when not measured */
    double launch_s;         /* kernel launch latency; NAN when not measured */
    calib_gemm gemm[CALIB_GEMM_NDTYPES]; /* NAN fields when not measured */
} calib_params;

/* Frees what *p owns and zeroes it; safe on a zeroed struct. */
void calib_params_clear(calib_params *p);

/* The path (or collective) named `name`, or NULL.  Borrowed pointer. */
const calib_path *calib_params_find(const calib_params *p, const char *name);

/* The params JSON (format in docs/calibration.md).  Caller g_free()s. */
char *calib_params_to_json(const calib_params *p);

/* Loads a params file written by calib_params_to_json.  Returns false with
 * *err (CALIB_ERROR, message "path[:line:col]: ...") on bad input; *out is
 * then zeroed.  How a topology uses it: a topology JSON names the file
 * ("calibration": "params.json", relative to the topology file); its loader
 * calls this and takes link alpha/beta from calib_params_find(p, NAME) where
 * the topology maps its link classes to path names (e.g. "p2p/gpu0-gpu1/uni/ce"
 * for NVLink, "h2d/gpu0/h2d/pinned" for PCIe), reduction_Bps for the
 * in-GPU reduction cost and launch_s for per-kernel overhead. */
bool calib_params_load(const char *path, calib_params *out, GError **err);

/* ---- the fitter over files -------------------------------------------- */

typedef struct calib_fit_set calib_fit_set;

calib_fit_set *calib_fit_set_new(void);
void calib_fit_set_free(calib_fit_set *s);

/* Reads calibration JSON lines (one record per line; blank and '#' lines
 * skipped).  All-or-nothing: on error nothing from this file is kept and
 * *err says "path:line:col: ...". */
bool calib_fit_set_add_jsonl(calib_fit_set *s, const char *path, GError **err);

/* Reads an nccl-tests log with traces/nccltests (out-of-place times). */
bool calib_fit_set_add_nccltests(calib_fit_set *s, const char *path, GError **err);

/* Either of the two: a file whose first non-blank character is '{' is JSON
 * lines, anything else an nccl-tests log. */
bool calib_fit_set_add_file(calib_fit_set *s, const char *path, GError **err);

/* Fits every group and fills *out (caller calib_params_clear()s it).  Groups
 * that cannot be fitted are reported by calib_fit_set_print and left out.
 * Returns false (CALIB_ERROR_FIT) when nothing at all could be fitted, and
 * (CALIB_ERROR_VALUE, "path:line: name: ...", the group's first record)
 * when a fit is outside what a params file may hold (CALIB_ALPHA_MAX_S,
 * CALIB_BETA_MIN_BPS, CALIB_LAUNCH_MAX_S); *out is then zeroed. */
bool calib_fit_set_solve(calib_fit_set *s, calib_params *out, GError **err);

/* After solve: one block per group (fit line, then size, measured, model,
 * residual %). */
void calib_fit_set_print(const calib_fit_set *s, FILE *f);

#endif

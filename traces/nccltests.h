/* traces/nccltests.h - the nccl-tests result format: collective identity,
 * nccl-tests' size/count/bandwidth conventions, a writer that prints exactly
 * what nccl-tests 2.19.x prints (plus CSV and JSON), and a tolerant reader for
 * real logs (old and new formats, Slurm prefixes, NCCL INFO noise, `#!`
 * provenance headers).  See docs/formats-nccl-tests.md for the sources.
 */
#ifndef TRACES_NCCLTESTS_H
#define TRACES_NCCLTESTS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "models/coll_kind.h"

/* ---- data types and reduction ops ------------------------------------- */

typedef enum {
    NCCLTESTS_FLOAT,
    NCCLTESTS_HALF,
    NCCLTESTS_BFLOAT16,
    NCCLTESTS_DOUBLE,
    NCCLTESTS_INT32,
    NCCLTESTS_INT8,
    NCCLTESTS_UINT8,
    NCCLTESTS_INT64,
    NCCLTESTS_UINT32,
    NCCLTESTS_UINT64,
    NCCLTESTS_FP8_E4M3,
    NCCLTESTS_FP8_E5M2,
    NCCLTESTS_DTYPES
} nccltests_dtype;

/* The name nccl-tests prints in the type column ("float", "f8e4m3", ...). */
const char *nccltests_dtype_name(nccltests_dtype dt);
/* Element size in bytes (1, 2, 4 or 8). */
size_t nccltests_dtype_bytes(nccltests_dtype dt);
/* Accepts the printed names plus "fp8_e4m3"/"fp8_e5m2", "float32", "fp16",
 * "bf16", "int", "char".  Returns 0 and sets *out, or -1. */
int nccltests_dtype_from_name(const char *name, nccltests_dtype *out);

typedef enum {
    NCCLTESTS_OP_NONE,
    NCCLTESTS_OP_SUM,
    NCCLTESTS_OP_PROD,
    NCCLTESTS_OP_MAX,
    NCCLTESTS_OP_MIN,
    NCCLTESTS_OP_AVG,
    NCCLTESTS_REDOPS
} nccltests_redop;

/* Whether NCCL can reduce `op` on `dt` in the NVSwitch (NVLS/NVLSTree), as
 * ncclNvlsSupported (src/include/device.h): sum on 32/64-bit integers, half,
 * bfloat16, float and double; min/max on the integers, half and bfloat16;
 * nothing on 8-bit types, prod or avg. NONE (no reduction) is supported. */
bool nccltests_nvls_reduces(nccltests_redop op, nccltests_dtype dt);

/* "none", "sum", "prod", "max", "min", "avg". */
const char *nccltests_redop_name(nccltests_redop op);
/* Returns 0 and sets *out, or -1 (an empty string means none). */
int nccltests_redop_from_name(const char *name, nccltests_redop *out);

/* ---- size conventions (tests:src/<coll>.cu *GetCollByteCount) ---------- */

/* The count column for a size-column value `size_bytes`: per-rank elements
 * of the call.  all_reduce, broadcast, reduce, sendrecv: S/elt;
 * all_gather, reduce_scatter, alltoall: S/(n*elt). */
uint64_t nccltests_count_for_size(coll_kind kind, uint64_t size_bytes, int nranks,
                                  size_t elt_bytes);

/* The size column nccl-tests prints for a requested byte count (the -b/-e
 * sweep value): the request is cut to whole elements and, for the
 * per-rank-split collectives, to a per-rank count aligned down to 16 bytes
 * (2.19.x: base = (count/nranks) & -(16/elt)), so 8 and 16 B of float over
 * 2 ranks print 0 (file 24).  Releases before ~2022 did not align. */
uint64_t nccltests_size_for_request(coll_kind kind, uint64_t req_bytes, int nranks,
                                    size_t elt_bytes);

/* Per-rank buffer sizes in bytes for a size-column value S: what one rank
 * passes in (send) and gets back (recv).  all_gather: S/n in, S out;
 * reduce_scatter: S in, S/n out; the others S and S.  The bytes a rank puts
 * on the wire with the bandwidth-optimal algorithm are S x busbw factor. */
void nccltests_rank_bytes(coll_kind kind, uint64_t size_bytes, int nranks,
                          uint64_t *send_bytes, uint64_t *recv_bytes);

/* ---- rows --------------------------------------------------------------- */

enum { NCCLTESTS_OOP = 0, NCCLTESTS_IP = 1 }; /* placement index */

typedef struct {
    uint64_t size_bytes;    /* size column (B) */
    uint64_t count;         /* count column (elements) */
    double time_us[2];      /* [NCCLTESTS_OOP], [NCCLTESTS_IP] */
    double algbw_GBps[2];   /* 1 GB = 1e9 B */
    double busbw_GBps[2];
    double wrong[2];        /* #wrong (or old "error" value); NAN for N/A */
} nccltests_row;

/* Fills algbw_GBps/busbw_GBps from size_bytes and time_us with nccl-tests'
 * formulas: algbw = S / t / 1e9, busbw = algbw x coll_busbw_factor.
 * A time of 0 gives 0 bandwidth. */
void nccltests_row_compute_bw(nccltests_row *row, coll_kind kind, int nranks);

/* ---- writer ------------------------------------------------------------- */

/* Which sweep of a table a row belongs to: nccl-tests -d all / -o all / -r -1
 * print one sweep per (type, reduction, root), one after another. */
typedef struct {
    nccltests_dtype dtype;
    nccltests_redop redop;
    int root;
} nccltests_sweep_id;

typedef struct {
    int rank, group, pid;
    const char *host;      /* printed %10s */
    int device;            /* CUDA device index */
    unsigned pci_domain, pci_bus, pci_device; /* "[%04x:%02x:%02x]" */
    const char *name;      /* "NVIDIA H100 80GB HBM3" */
} nccltests_device;

typedef struct {
    coll_kind coll;
    nccltests_dtype dtype;
    nccltests_redop redop;    /* NONE for non-reducing collectives */
    int root;                 /* -1 where not applicable */
    int nranks;
    const char *version;      /* nccl-tests version, e.g. "2.19.6" */
    int nccl_code;            /* e.g. 21903, printed as headers and library */
    int nthreads, ngpus;
    uint64_t min_bytes, max_bytes;
    int step_factor;          /* -f; printed as "step: F(factor)" when > 1 */
    uint64_t step_bytes;      /* -i; printed as "step: N(bytes)" otherwise, as nccl-tests does */
    int warmup_iters, iters, agg_iters, validation, graph;
    int blocking;             /* -z: 1 adds nccl-tests' "# Blocking Enabled: ..." line to the preamble */
    const nccltests_device *devices; /* ndevices lines in "# Using devices" */
    size_t ndevices;
    const nccltests_row *rows; /* size, count, time_us used; bw recomputed */
    size_t nrows;
    /* Optional per-row sweep (NULL: dtype/redop/root for every row): nccl-tests
     * -d all / -o all / -r -1 print one table over every combination. */
    const nccltests_sweep_id *row_id;
    /* Optional error band per row (NULL: none; CSV and JSON only): the
     * measured busbw's 80% range as multiples of the predicted one
     * (topologies/accuracy.h). CSV adds busbw_lo_GBps,busbw_hi_GBps (out of
     * place; empty where a row has none, band_lo[i] <= 0); JSON adds
     * "bus_bw_80": [lo, hi] to "out_of_place". */
    const double *band_lo, *band_hi;
    /* What the band is (JSON: "bus_bw_80_note" at the top; NULL: none) */
    const char *band_note;
    /* Optional lines printed as they are (text only; NULL: none): after the
     * device block (NCCL's INFO lines of communicator setup), and before row
     * i (NCCL's INFO lines of that size's calls), as NCCL_DEBUG=INFO
     * interleaves them with nccl-tests' output. */
    const char *setup_log;
    const char *const *row_log;
} nccltests_sweep;

/* Prints the sweep as nccl-tests 2.19.x prints it to stdout: preamble, device
 * block, table header, one row per size (time %7s, bandwidths %6s, chosen by
 * nccl-tests' getFloatStr), footer with "Avg bus bandwidth" = mean busbw over
 * all rows and both placements.  #wrong is printed as 0, or as nccl-tests'
 * "N/A" when validation is 0 (-c 0: nothing was checked).  Write errors are
 * left in ferror(f). */
void nccltests_write(FILE *f, const nccltests_sweep *s);

/* CSV: header line, then one record per size: size,count,type,redop,root,
 * oop_time_us,oop_algbw_GBps,oop_busbw_GBps,ip_time_us,ip_algbw_GBps,
 * ip_busbw_GBps.  Numbers %.6g (full precision for integers). */
void nccltests_write_csv(FILE *f, const nccltests_sweep *s);

/* JSON (cJSON): {"collective","nranks","type","redop","root","results":[
 * {"size","count","type","redop","root","out_of_place":{"time","alg_bw",
 * "bus_bw"},"in_place":{...}}]} - key names follow nccl-tests' -J output. */
void nccltests_write_json(FILE *f, const nccltests_sweep *s);

/* ---- reader ------------------------------------------------------------- */

/* The largest size a result row may have (1T, as `collective -e`): bigger is
 * NCCLTESTS_ERROR_BAD_VALUE. */
#define NCCLTESTS_MAX_SIZE (1ull << 40)

#define NCCLTESTS_ERROR (nccltests_error_quark())
GQuark nccltests_error_quark(void);

typedef enum {
    NCCLTESTS_ERROR_IO,            /* cannot open/read the file */
    NCCLTESTS_ERROR_BINARY,        /* NUL bytes or invalid UTF-8: not a log */
    NCCLTESTS_ERROR_NO_TABLE,      /* no result row found (empty file too) */
    NCCLTESTS_ERROR_TRUNCATED_ROW, /* fewer columns than the table has */
    NCCLTESTS_ERROR_COLUMN_COUNT,  /* more columns, or a layout we do not know */
    NCCLTESTS_ERROR_NOT_NUMBER,    /* a numeric field is not a number */
    NCCLTESTS_ERROR_BAD_VALUE,     /* negative/NaN time or bandwidth, bad type */
    NCCLTESTS_ERROR_MIXED,         /* two collectives, or the redop/type changes */
    NCCLTESTS_ERROR_DUPLICATE_SIZE,/* a non-zero size appears twice */
    NCCLTESTS_ERROR_NO_COLLECTIVE, /* cannot tell the collective: pass --op */
    NCCLTESTS_ERROR_NO_NRANKS      /* cannot tell the number of ranks */
} nccltests_error_code;

/* One NCCL_DEBUG_SUBSYS=TUNING line of the log (src/enqueue.cc): what NCCL
 * chose for a call. */
typedef struct {
    uint64_t bytes;           /* as NCCL counts them: count x type size (per rank for AllGather/ReduceScatter) */
    char func[24], algo[24], proto[12];
    int nchannels;            /* channelHi - channelLo + 1 */
} nccltests_tuning;

/* One cell of NCCL's "Latency/AlgBw" table (tuning.cc, printed once per
 * communicator under NCCL_DEBUG_SUBSYS=TUNING): the tuner's latency (us)
 * and algorithm bandwidth (GB/s) of (algo, proto) for func. */
typedef struct {
    char func[24], algo[24], proto[12];
    double lat_us, algbw_GBps;
} nccltests_latbw;

/* One of rank 0's ring lines in NCCL's init log ("Channel cc/NN :" and the
 * ranks from 0 along the ring, rings.cc; a 128-byte line, so rings over
 * about 28 ranks are cut): the channel, the communicator's channel count
 * and the ranks the line holds. */
#define NCCLTESTS_RING_MAX 32
typedef struct {
    int channel, nchannels;
    int n;                       /* ranks the line lists (at most NCCLTESTS_RING_MAX kept) */
    int rank[NCCLTESTS_RING_MAX];
    int line;                    /* the file line */
} nccltests_ring;

/* One channel of a rank's "Trees" line in NCCL's init log (init.cc:
 * " [c] d0/d1/d2->r->up" per channel): the rank, the channel, its parent
 * (-1: none) and children (-1 where none). */
typedef struct {
    int rank, channel, up, down[3];
    int line;
} nccltests_tree;

/* The text after "NCCL INFO " as a ring line ("Channel cc/NN :   0   1 ...":
 * only numbers after the colon; a connection line "Channel cc/c : a[d] -> b[d]
 * via ..." is not one): true and *out (line `line`), or false. */
bool nccltests_ring_parse(const char *info, int line, nccltests_ring *out);

/* The text after "NCCL INFO " as a rank's Trees line ("Trees [0]
 * 1/-1/-1->0->-1 [1] ..."; NCCL's 1024-byte line may be cut: the whole
 * channels are kept): appends one nccltests_tree per channel to out and
 * returns the rank, or -1 (nothing appended) when it is not one. */
int nccltests_trees_parse(const char *info, int line, GArray *out);

/* Where the run read sits in a log of several (nccl-tests runs one after another in one file). */
typedef struct {
    int run, nruns;           /* the run read (1-based) of the runs with a result table */
    int first_line, last_line;
} nccltests_log_run;

typedef struct {
    char *path;               /* as given */
    coll_kind coll;
    char *coll_source;        /* where coll came from, e.g. "Collective test starting" */
    int nranks;
    char *nranks_source;      /* "# Using devices", "#! gpus", "busbw/algbw ratio", ... */
    bool nranks_derived;      /* true when inferred from busbw/algbw (say so) */
    nccltests_dtype dtype;
    nccltests_redop redop;    /* NONE when the table has no redop column */
    int root;                 /* -1 when the table has no root column */
    bool old_format;          /* no root column and/or "error" column */
    double avg_busbw_GBps;    /* "# Avg bus bandwidth" value, NAN if absent */
    nccltests_row *rows;      /* nrows rows in file order */
    size_t nrows;
    nccltests_tuning *tuning; /* NCCL INFO TUNING lines, in file order (NULL: none) */
    size_t ntuning;
    nccltests_latbw *latbw;   /* the first Latency/AlgBw table's cells (NULL: none) */
    size_t nlatbw;
    nccltests_ring *rings;    /* the first communicator's ring lines, by channel (NULL: none) */
    size_t nrings;
    nccltests_tree *trees;    /* the first communicator's Trees lines, rank by rank, channel by channel (NULL: none) */
    size_t ntrees;
    char **env;               /* "NAME=value" of each NCCL INFO "NCCL_X set by environment to v" line,
                               * first occurrence, the trailing period of integer parameters
                               * removed; NULL-terminated (never NULL) */
    int *env_line;            /* the file line of each env[] entry */
    int nccl_code;            /* the NCCL the run used, NCCL_VERSION_CODE style (21903 = 2.19.3), from
                               * "nccl-library=N" or NCCL's "NCCL version X.Y.Z" line, else a
                               * "#! nccl_version: X.Y.Z" provenance header; 0: not in the log */
    int nccl_code_line;       /* where it was read */
    int agg_iters;            /* the header's "agg iters: M" (nccl-tests -m: M calls per group), 1 if absent */
    int graph;                /* the header's "graph: N" (nccl-tests -G: CUDA graph launches), 0 if absent */
    int ngpus;                /* the header's "nGpus G" (nccl-tests -g), 0 if absent */
    nccltests_log_run run;    /* which run of the file was read */
    /* nccl-tests -d all / -o all / -r -1 print one sweep per (type, reduction, root), one after another in
     * one table: ngroups of them (1 for most logs; dtype/redop/root above are the first's); row_id[i]
     * is row i's. */
    int ngroups;
    nccltests_sweep_id *row_id;
} nccltests_log;

/* "2.19.3" for 21903 (NCCL >= 2.9: major x 10000 + minor x 100 + patch;
 * before: major x 1000 + minor x 100 + patch, e.g. 2708 = 2.7.8). */
void nccltests_nccl_version(int code, char *buf, size_t len);

/* Reads an nccl-tests log.  coll_hint is the caller's --op (or -1): used when
 * the file names no collective, an error (MIXED) when it names another one.
 * Returns a new log (free with nccltests_log_free) or NULL with *err set;
 * messages start "path:line:col: ". */
nccltests_log *nccltests_read_with(const char *path, int coll_hint, GError **err);

/* The same for run `run` (1-based) of a log holding several nccl-tests runs one after another; run 0:
 * the only one (several are an error, NCCLTESTS_ERROR_MIXED at the second's first line). */
nccltests_log *nccltests_read_run(const char *path, int coll_hint, int run, GError **err);

/* nccltests_read_with(path, -1, err). */
nccltests_log *nccltests_read(const char *path, GError **err);

/* Same on text in memory; `name` is used in messages.  text need not be
 * NUL-terminated. */
nccltests_log *nccltests_parse(const char *name, const char *text, size_t len,
                               int coll_hint, GError **err);

nccltests_log *nccltests_parse_run(const char *name, const char *text, size_t len, int coll_hint, int run,
                                   GError **err);

void nccltests_log_free(nccltests_log *log);

#endif

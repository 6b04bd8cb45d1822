/* traces/p2pmatrix.h - the output of the CUDA sample p2pBandwidthLatencyTest:
 * named n x n matrices (connectivity, uni/bidirectional bandwidth with P2P
 * disabled/enabled, GPU and CPU latency).  A reader for real logs (any
 * subset of the matrices, "..." elisions, `#!` headers) and a writer that
 * prints conveyor's simulated matrices in the sample's layout.
 */
#ifndef TRACES_P2PMATRIX_H
#define TRACES_P2PMATRIX_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

typedef enum {
    P2PMATRIX_CONNECTIVITY,     /* "P2P Connectivity Matrix" (0/1) */
    P2PMATRIX_UNI_BW_DISABLED,  /* GB/s, 1 GB = 1e9 B */
    P2PMATRIX_UNI_BW_ENABLED,
    P2PMATRIX_BI_BW_DISABLED,
    P2PMATRIX_BI_BW_ENABLED,
    P2PMATRIX_LAT_GPU_DISABLED, /* us */
    P2PMATRIX_LAT_CPU_DISABLED,
    P2PMATRIX_LAT_GPU_ENABLED,
    P2PMATRIX_LAT_CPU_ENABLED,
    P2PMATRIX_KINDS
} p2pmatrix_kind;

typedef struct {
    int ngpus;
    bool p2p_reads;                /* enabled matrices measured with P2P Reads */
    double *m[P2PMATRIX_KINDS];    /* row-major ngpus x ngpus, NULL if absent */
} p2pmatrix_set;

#define P2PMATRIX_ERROR (p2pmatrix_error_quark())
GQuark p2pmatrix_error_quark(void);

typedef enum {
    P2PMATRIX_ERROR_IO,
    P2PMATRIX_ERROR_NO_MATRIX,  /* no known matrix title in the file */
    P2PMATRIX_ERROR_TRUNCATED,  /* a matrix has fewer rows/cells than GPUs */
    P2PMATRIX_ERROR_NOT_NUMBER, /* a cell is not a number */
    P2PMATRIX_ERROR_SIZE        /* matrices disagree on the number of GPUs */
} p2pmatrix_error_code;

/* A set for n GPUs with no matrices.  Free with p2pmatrix_free. */
p2pmatrix_set *p2pmatrix_new(int ngpus);
void p2pmatrix_free(p2pmatrix_set *set);

/* The matrix of `kind`, allocated (zeros) if absent; owned by the set. */
double *p2pmatrix_ensure(p2pmatrix_set *set, p2pmatrix_kind kind);

/* Cell (i, j) of `kind`, or NAN if the matrix is absent. */
double p2pmatrix_get(const p2pmatrix_set *set, p2pmatrix_kind kind, int i, int j);

/* The title line the sample prints before the matrix (latency CPU/GPU
 * halves share the latency title).  Static string. */
const char *p2pmatrix_kind_title(p2pmatrix_kind kind, bool p2p_reads);

/* Reads a p2pBandwidthLatencyTest log.  Returns a new set or NULL with *err
 * set ("path:line:col: what was expected, got what"). */
p2pmatrix_set *p2pmatrix_read(const char *path, GError **err);
/* Same on text in memory (need not be NUL-terminated). */
p2pmatrix_set *p2pmatrix_parse(const char *name, const char *text, size_t len, GError **err);

/* Prints the matrices present, in the sample's order and layout: title,
 * "   D\D" header with "%6d " per column, rows "%6d " then "%6.02f " per
 * cell (connectivity: "%6d\t" then "%6d"); latency as a GPU block, a blank
 * line and a CPU block.  Write errors are left in ferror(f). */
void p2pmatrix_write(FILE *f, const p2pmatrix_set *set);

#endif

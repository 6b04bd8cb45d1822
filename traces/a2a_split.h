/* traces/a2a_split.h - uneven alltoalls read from per-rank traces.
 *
 * PyTorch's all_to_all_single with split sizes moves other bytes between
 * each pair of members, and each member's trace records only its own side:
 * its totals sent and received, and (Kineto) its "In/Out split size" lists.
 * An importer keeps one row per alltoall op; a2a_settle then builds each
 * collective's n x n matrix from its members' rows, checks it, keeps it as
 * the trace's alltoall weights (a matrix, traces/trace.h) and makes every
 * member's op name it, with the mean bytes a member sends. docs/traces-
 * importers.md.
 */
#ifndef TRACES_A2A_SPLIT_H
#define TRACES_A2A_SPLIT_H

#include <glib.h>

#include "traces/trace.h"

typedef enum {
    A2A_LISTS,  /* the lists (or none: an even split) */
    A2A_CUT,    /* a list PyTorch cut to 30 entries: the totals only */
    A2A_TOTALS, /* a trace that records no split (the Flight Recorder): the totals only */
} a2a_known;

/* One member's side of one alltoall. */
typedef struct {
    double in_b, out_b; /* the bytes it sends and receives in all */
    double *in, *out;   /* bytes to (from) each member, group-local order (g_malloc); NULL: an even split */
    int n;              /* the group's size */
    a2a_known known;
    const char *path;   /* its file and entry (borrowed), for errors */
    const char *what;   /* "event" or "$.entries" */
    int ev;
} a2a_row;

/* What a2a_settle did other than as the lists say, for an importer's note. */
typedef struct {
    int cut;    /* from the totals: a list was cut */
    int totals; /* from the totals: no lists recorded */
    int wide;   /* groups over A2A_MAX_MATRIX ranks: even */
    int alone;  /* a2a_count_alone: in a trace without all of the group's ranks: even */
} a2a_notes;

/* Largest group whose uneven alltoall keeps its whole matrix (8 MB of shares). */
#define A2A_MAX_MATRIX 1024

/* A table for one rank's rows: op index (GUINT_TO_POINTER) -> a2a_row*, freed with it. */
GHashTable *a2a_rows_new(void);
void a2a_row_free(gpointer row);

/* Every alltoall of t whose members are all there: its matrix from rows[r] (rank r's table, or
 * NULL; an op without a row is an even split of its bytes), where the lists are known checked
 * against each receiver's; where a member knows only its totals, member i sends member j
 * s_i x r_j / sum r (s: sent, r: received). An uneven one is added to t's alltoall weights and
 * every member's op gets root = its list and bytes = the mean a member sends. Numbers t's
 * collectives (trace_number_collectives). FALSE with *err (TRACE_ERROR_MISMATCH, naming the rows'
 * files and entries) where a pair or the totals sent and received disagree. */
gboolean a2a_settle(trace *t, GHashTable **rows, a2a_notes *notes, GError **err);

/* How many of rows[0..n-1]'s rows are uneven on their own (unequal totals sent and received, or a
 * whole list with unequal entries): in a trace without all of a group's ranks they replay even. */
int a2a_count_alone(GHashTable **rows, int n);

#endif

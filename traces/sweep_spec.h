/* traces/sweep_spec.h - what-if sweeps: the spec file, its grid, and the CSV
 * of results.
 *
 * A spec names a base command (a sweep_base: name, parameters it accepts,
 * figures it produces, run(point) -> figures), fixed arguments, parameters
 * to vary (lists or ranges) and the figures to collect. The grid is the
 * cartesian product of the varied parameters, first key outermost. Results
 * are one CSV row per point in grid order; sweep_csv_* write them in order
 * however points complete and read a partial file back for --resume.
 * Schema: docs/sweep.md. Execution (threads, MPI) lives in cli/sweep_run.c.
 */
#ifndef TRACES_SWEEP_SPEC_H
#define TRACES_SWEEP_SPEC_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

#define SWEEP_ERROR (sweep_error_quark())
GQuark sweep_error_quark(void);
enum {
    SWEEP_ERROR_IO = 1,
    SWEEP_ERROR_PARSE,     /* malformed JSON or CSV */
    SWEEP_ERROR_SCHEMA,    /* unknown key, wrong type, missing member */
    SWEEP_ERROR_VALUE,     /* empty list or range, bad range, duplicate */
    SWEEP_ERROR_BASE,      /* unknown or not yet available base command */
    SWEEP_ERROR_PARAM,     /* parameter or figure the base does not know */
    SWEEP_ERROR_RESUME,    /* existing CSV does not belong to this spec */
    SWEEP_ERROR_POINT,     /* a point's run failed */
};

/* One point of the grid: the fixed arguments, then the varied ones.
 * keys/vals: non-"set" parameters (n of them); sets: NULL-terminated
 * "key=value" topology overrides. All owned by the point. */
typedef struct {
    size_t index;  /* position in grid order, 0-based */
    size_t n;
    char **keys, **vals;
    char **sets;
} sweep_point;

/* Value of parameter `key` at this point, or NULL (not given). Borrowed. */
const char *sweep_point_get(const sweep_point *p, const char *key);
void sweep_point_free(sweep_point *p);

/* A base command the sweep can drive. Every slot is required. */
typedef struct sweep_base {
    const char *name;
    const char *summary;
    const char *const *params;  /* NULL-ended; "set" allows args.set and vary "set.KEY" */
    const char *const *figures; /* NULL-ended; the default when the spec lists none */
    /* Run one point; fill out[i] (caller g_free's each) for each figure
     * index fig[i], i < nfig. Must not touch shared mutable state: it is
     * called from several threads at once. False with *err on failure. */
    /* Optional (NULL: none): the columns of the figures' 80% error bands, NULL-ended,
     * written after the figures whatever the spec lists (so that readers keyed by
     * position keep working). band_of[k]: the figure (index into figures) that
     * brings column k into a spec, or -1 for a label column (listed after the
     * others), present when any other band column is. run() gets band column k as fig index
     * (number of figures) + k. */
    const char *const *bands;
    const int *band_of;
    bool (*run)(const sweep_point *p, const int *fig, size_t nfig, char **out, GError **err);
} sweep_base;

/* The bases a parser accepts, and names known to be planned but not yet
 * available (a clear error rather than "unknown"). */
typedef struct {
    const sweep_base *const *bases;
    size_t nbases;
    const char *const *planned; /* NULL-ended, or NULL */
} sweep_catalog;

typedef struct {
    char *file;              /* path the spec came from */
    const sweep_base *base;  /* borrowed from the catalog */
    GPtrArray *arg_keys, *arg_vals; /* fixed non-set args (char*) */
    GPtrArray *arg_sets;     /* fixed "key=value" sets (char*) */
    GPtrArray *axis_names;   /* varied parameter per axis ("nodes", "set.nic.gbps") */
    GPtrArray *axis_values;  /* per axis: GPtrArray of char* values */
    GArray *fig;             /* int: indices into base->figures, then band columns (sweep_column_name) */
    size_t npoints;          /* product of the axes' lengths (1 with no axis) */
} sweep_spec;

/* Parse and validate the spec at `path` against `cat`. Errors (SWEEP_ERROR)
 * start with "path:line:col: " and, for semantic ones, the JSON path:
 *   "s.json:4:22: $.vary.nodes: empty list". Caller sweep_spec_free's. */
sweep_spec *sweep_spec_load(const char *path, const sweep_catalog *cat, GError **err);
void sweep_spec_free(sweep_spec *s);

/* Point `index` (< npoints): axis values with the last axis varying
 * fastest. Caller sweep_point_free's. */
sweep_point *sweep_spec_point(const sweep_spec *s, size_t index);
/* The name of column `fig` (an index in sweep_spec.fig: a figure, or a band
 * column after them, sweep_base.bands). Borrowed. */
const char *sweep_column_name(const sweep_base *b, int fig);
/* Value of axis `axis` at point `index`. Borrowed from s. */
const char *sweep_spec_axis_value(const sweep_spec *s, size_t index, size_t axis);

/* ---- CSV ------------------------------------------------------------ */

/* Header line: "point,<axis names>,<figure names>\n" (caller g_free's). */
char *sweep_csv_header(const sweep_spec *s);
/* Row of point `index` with its figure values (nfig of them, spec order),
 * newline-terminated, fields quoted as RFC 4180 when needed (g_free). */
char *sweep_csv_row(const sweep_spec *s, size_t index, char *const *figs);

/* Check that the CSV at `path` belongs to `s`: the header matches and its
 * rows are points 0..k-1 in order with the grid's axis values. A last line
 * without its newline (a write cut short) is dropped: the file is truncated
 * to its last complete row. Returns k (points already done) or -1 with
 * *err (SWEEP_ERROR_RESUME / _PARSE / _IO; "path:line: ..."). A missing
 * file returns 0. */
long sweep_csv_resume(const sweep_spec *s, const char *path, GError **err);

/* An ordered writer: rows handed in any order go out in grid order, each
 * flushed as soon as every earlier point is out. Not thread-safe: one
 * caller (the collecting thread or rank) owns it. */
typedef struct sweep_csv_writer sweep_csv_writer;
/* f: open stream (borrowed); first: index of the next row to write (points
 * before it are already in the file); n: total points. */
sweep_csv_writer *sweep_csv_writer_new(FILE *f, size_t first, size_t n);
/* Hand in the row of point `index` (takes ownership of row). Writes every
 * row now in order; false if a write or flush failed (errno set). */
bool sweep_csv_writer_put(sweep_csv_writer *w, size_t index, char *row);
/* Index of the next row to be written (== n when all are out). */
size_t sweep_csv_writer_next(const sweep_csv_writer *w);
void sweep_csv_writer_free(sweep_csv_writer *w);

/* Split one CSV line of a file written by sweep_csv_row (quoted fields
 * allowed) with libcsv; NULL-terminated (g_strfreev) or NULL if malformed. */
char **sweep_csv_split(const char *line, size_t len);

#endif

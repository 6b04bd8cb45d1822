/* cli/sweep_plot.c - `conveyor sweep --plot X,Y[,SERIES] results.csv -o
 * plot.svg`: read the CSV with libcsv, group rows by SERIES (order of first
 * appearance), write a gnuplot script with one inline data block per
 * series and run gnuplot on it. A non-numeric X column (e.g. topology
 * names) is plotted as categories in order of first appearance.
 */
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gnuplot.h"
#include "sweep_run.h"

#define MAX_SERIES 256

typedef struct {
    GPtrArray *rows; /* GPtrArray of char* per row */
    GPtrArray *cur;
    size_t line;
} csv_read;

static void on_field(void *s, size_t len, void *data)
{
    csv_read *r = data;
    if (!r->cur)
        r->cur = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(r->cur, g_strndup(s ? s : "", len));
}

static void on_row(int c, void *data)
{
    (void)c;
    csv_read *r = data;
    r->line++;
    if (!r->cur)
        r->cur = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(r->rows, r->cur);
    r->cur = NULL;
}

static int no_space(unsigned char c)
{
    (void)c;
    return 0;
}

/* All rows of the file, header first; NULL after printing the error. */
static GPtrArray *read_csv(const char *path)
{
    char *text = NULL;
    gsize len = 0;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, &len, &e)) {
        fprintf(stderr, "conveyor sweep: %s\n", e->message);
        g_error_free(e);
        return NULL;
    }
    struct csv_parser p;
    csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL); /* FINI: an unclosed quote at the end */
    csv_set_space_func(&p, no_space);
    csv_read r = {.rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref)};
    bool ok = csv_parse(&p, text, len, on_field, on_row, &r) == len;
    ok = ok && csv_fini(&p, on_field, on_row, &r) == 0;
    if (!ok)
        fprintf(stderr, "conveyor sweep: %s:%zu: malformed CSV (%s)\n", path, r.line + 1, csv_strerror(csv_error(&p)));
    csv_free(&p);
    g_free(text);
    if (r.cur)
        g_ptr_array_unref(r.cur);
    if (ok && r.rows->len == 0) {
        fprintf(stderr, "conveyor sweep: %s:1: empty file (no header)\n", path);
        ok = false;
    }
    if (!ok) {
        g_ptr_array_unref(r.rows);
        return NULL;
    }
    return r.rows;
}

static int column(GPtrArray *header, const char *name, const char *path)
{
    for (guint i = 0; i < header->len; i++)
        if (!strcmp(header->pdata[i], name))
            return (int)i;
    GString *g = g_string_new(NULL);
    for (guint i = 0; i < header->len; i++)
        g_string_append_printf(g, "%s%s", i ? ", " : "", (char *)header->pdata[i]);
    fprintf(stderr, "conveyor sweep: %s:1: no column '%s' (columns: %s)\n", path, name, g->str);
    g_string_free(g, TRUE);
    return -1;
}

/* Whole text read as a number (g_ascii_strtod: also nan, inf, 1e999). */
static bool reads_as_number(const char *s, double *v)
{
    char *end = NULL;
    *v = g_ascii_strtod(s, &end);
    return *s && end != s && !*end;
}

/* A finite decimal number, as gnuplot reads it: not nan, inf, 1e999
 * (gnuplot then failed) nor hexadecimal. */
static bool is_number(const char *s, double *v)
{
    return reads_as_number(s, v) && isfinite(*v) && !s[strspn(s, " +-.0123456789eE")];
}

/* A value of column col that reads as a number and is not finite (nan,
 * inf, 1e999): an error naming file:line, true after printing it. */
static bool non_finite(const char *path, guint line, const char *col, const char *s)
{
    double v;
    if (!reads_as_number(s, &v) || isfinite(v))
        return false;
    fprintf(stderr, "conveyor sweep: %s:%u: column '%s' is not a finite number: '%s'\n", path, line, col, s);
    return true;
}

/* Data row text for a category label: double-quoted, quotes dropped. */
static char *gp_label(const char *s)
{
    char *l = g_strdup(s);
    g_strdelimit(l, "\"\n", '\'');
    return l;
}

/* Index of s in a (order of first appearance), added if new; idx maps each
 * string to its index + 1 (a linear search made 10^5 categories take minutes). */
static int str_index(GPtrArray *a, GHashTable *idx, const char *s)
{
    gpointer v = g_hash_table_lookup(idx, s);
    if (v)
        return GPOINTER_TO_INT(v) - 1;
    g_ptr_array_add(a, (char *)s);
    g_hash_table_insert(idx, (char *)s, GINT_TO_POINTER((int)a->len));
    return (int)a->len - 1;
}

/* The gnuplot script for columns x, y, series (-1: none); NULL after an error. */
static char *build_script(GPtrArray *rows, int x, int y, int sc, const char *path)
{
    GPtrArray *hdr = rows->pdata[0];
    bool numeric_x = true;
    double v;
    for (guint r = 1; r < rows->len; r++) {
        GPtrArray *row = rows->pdata[r];
        if (row->len != hdr->len) {
            fprintf(stderr, "conveyor sweep: %s:%u: %u fields, the header has %u\n", path, r + 1, row->len, hdr->len);
            return NULL;
        }
        if (non_finite(path, r + 1, hdr->pdata[x], row->pdata[x]) ||
            non_finite(path, r + 1, hdr->pdata[y], row->pdata[y]))
            return NULL;
        if (!is_number(row->pdata[y], &v)) {
            fprintf(stderr, "conveyor sweep: %s:%u: column '%s' is not a number: '%s'\n", path, r + 1,
                    (char *)hdr->pdata[y], (char *)row->pdata[y]);
            return NULL;
        }
        numeric_x = numeric_x && is_number(row->pdata[x], &v);
    }
    g_autoptr(GPtrArray) series = g_ptr_array_new(), cats = g_ptr_array_new();
    g_autoptr(GHashTable) series_idx = g_hash_table_new(g_str_hash, g_str_equal);
    g_autoptr(GHashTable) cats_idx = g_hash_table_new(g_str_hash, g_str_equal);
    /* each series' rows as a chain (first, next): one pass, not one per series */
    int *row_cat = g_new(int, rows->len), *next = g_new(int, rows->len);
    GArray *first = g_array_new(FALSE, FALSE, sizeof(int)), *last = g_array_new(FALSE, FALSE, sizeof(int));
    for (guint r = 1; r < rows->len; r++) {
        GPtrArray *row = rows->pdata[r];
        int s = str_index(series, series_idx, sc >= 0 ? row->pdata[sc] : "");
        if (s == MAX_SERIES) { /* gnuplot took hours over 10^5 series */
            fprintf(stderr, "conveyor sweep: %s:%u: column '%s' has more than %d values; at most %d series are drawn\n",
                    path, r + 1, (char *)hdr->pdata[sc], MAX_SERIES, MAX_SERIES);
            g_free(row_cat), g_free(next);
            g_array_unref(first), g_array_unref(last);
            return NULL;
        }
        int ri = (int)r;
        if ((guint)s == first->len) {
            g_array_append_val(first, ri);
            g_array_append_val(last, ri);
        } else {
            next[g_array_index(last, int, s)] = ri;
            g_array_index(last, int, s) = ri;
        }
        next[r] = 0;
        row_cat[r] = numeric_x ? 0 : str_index(cats, cats_idx, row->pdata[x]);
    }
    GString *g = g_string_new("set datafile separator ','\nset grid\nset key outside right top noenhanced\nset xlabel ");
    cli_gp_quote(g, hdr->pdata[x]);
    g_string_append(g, " noenhanced\nset ylabel ");
    cli_gp_quote(g, hdr->pdata[y]);
    g_string_append(g, " noenhanced\nset title ");
    cli_gp_quote(g, path);
    g_string_append(g, " noenhanced\n");
    for (guint s = 0; s < series->len; s++) {
        g_string_append_printf(g, "$d%u << EOD\n", s);
        for (int r = g_array_index(first, int, s); r; r = next[r]) {
            GPtrArray *row = rows->pdata[r];
            g_autofree char *lab = gp_label(row->pdata[x]);
            if (numeric_x)
                g_string_append_printf(g, "%s,%s\n", (char *)row->pdata[x], (char *)row->pdata[y]);
            else
                g_string_append_printf(g, "%d,%s,\"%s\"\n", row_cat[r], (char *)row->pdata[y], lab);
        }
        g_string_append(g, "EOD\n");
    }
    g_free(row_cat), g_free(next);
    g_array_unref(first), g_array_unref(last);
    if (!numeric_x)
        g_string_append_printf(g, "set xrange [-0.5:%u.5]\n", cats->len ? cats->len - 1 : 0);
    g_string_append(g, "plot ");
    for (guint s = 0; s < series->len; s++) {
        g_string_append_printf(g, "%s$d%u using 1:2%s with linespoints title ", s ? ", " : "", s,
                               numeric_x ? "" : ":xtic(3)");
        g_autofree char *t = sc >= 0 ? g_strdup_printf("%s=%s", (char *)hdr->pdata[sc], (char *)series->pdata[s])
                                     : g_strdup(hdr->pdata[y]);
        cli_gp_quote(g, t);
    }
    g_string_append(g, "\n");
    return g_string_free(g, FALSE);
}

int sweep_plot(const char *cols, const char *csv_path, const char *svg_path)
{
    g_auto(GStrv) c = g_strsplit(cols, ",", -1);
    guint nc = g_strv_length(c);
    if (nc < 2 || nc > 3 || !*c[0] || !*c[1] || (nc == 3 && !*c[2])) {
        fprintf(stderr, "conveyor sweep: --plot expects X,Y or X,Y,SERIES (column names), got '%s'\n", cols);
        return EXIT_BADINPUT;
    }
    GPtrArray *rows = read_csv(csv_path);
    if (!rows)
        return EXIT_BADINPUT;
    GPtrArray *hdr = rows->pdata[0];
    int x = column(hdr, c[0], csv_path), y = x < 0 ? -1 : column(hdr, c[1], csv_path);
    int s = nc == 3 && y >= 0 ? column(hdr, c[2], csv_path) : -1;
    int rc = EXIT_BADINPUT;
    if (x >= 0 && y >= 0 && (nc == 2 || s >= 0)) {
        if (rows->len < 2)
            fprintf(stderr, "conveyor sweep: %s:2: no rows to plot (only the header)\n", csv_path);
        char *script = rows->len < 2 ? NULL : build_script(rows, x, y, s, csv_path);
        if (script)
            rc = cli_gnuplot_svg("sweep", svg_path, script);
        g_free(script);
    }
    g_ptr_array_unref(rows);
    return rc;
}

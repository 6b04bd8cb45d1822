/* cli/sweep_plot.c - `conveyor sweep --plot X,Y[,SERIES] results.csv -o
 * plot.svg`: read the CSV with libcsv, group rows by SERIES (order of first
 * appearance), write a gnuplot script with one inline data block per
 * series and run gnuplot on it. A non-numeric X column (e.g. topology
 * names) is plotted as categories in order of first appearance. Where the
 * CSV has Y's 80% band (columns Y_lo80 and Y_hi80, as `conveyor sweep`
 * writes them), the band is drawn behind the lines, in collective --plot's
 * style (a light grey filledcurves), titled with the rows' band_kind.
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

/* Y's 80% band in the CSV: columns Y_lo80 and Y_hi80 (both, or no band), and
 * band_kind for the legend (-1 where absent). */
typedef struct {
    int lo, hi, kind;
} band_cols;

static band_cols find_band(GPtrArray *hdr, int y)
{
    band_cols b = {-1, -1, -1};
    g_autofree char *lo = g_strdup_printf("%s_lo80", (char *)hdr->pdata[y]);
    g_autofree char *hi = g_strdup_printf("%s_hi80", (char *)hdr->pdata[y]);
    for (guint i = 0; i < hdr->len; i++) {
        if (!strcmp(hdr->pdata[i], lo))
            b.lo = (int)i;
        else if (!strcmp(hdr->pdata[i], hi))
            b.hi = (int)i;
        else if (!strcmp(hdr->pdata[i], "band_kind"))
            b.kind = (int)i;
    }
    if (b.lo < 0 || b.hi < 0)
        b.lo = b.hi = -1;
    return b;
}

/* Whether row (line `line` of the file) has a band: both band fields empty
 * (none: the sweep had no bands file) or both finite numbers; anything else
 * is an error naming file:line, -1 after printing it. */
static int row_band(GPtrArray *hdr, GPtrArray *row, band_cols b, const char *path, guint line)
{
    if (b.lo < 0)
        return 0;
    const char *lo = row->pdata[b.lo], *hi = row->pdata[b.hi];
    if (!*lo && !*hi)
        return 0;
    double v;
    int cols[2] = {b.lo, b.hi};
    for (int k = 0; k < 2; k++) {
        const char *s = row->pdata[cols[k]], *col = hdr->pdata[cols[k]];
        if (non_finite(path, line, col, s))
            return -1;
        if (!is_number(s, &v)) {
            fprintf(stderr,
                    "conveyor sweep: %s:%u: band column '%s' is not a number: '%s' (a row's band is two "
                    "numbers, or both fields empty for none)\n",
                    path, line, col, s);
            return -1;
        }
    }
    return 1;
}

/* The gnuplot script for columns x, y, series (-1: none); NULL after an error. */
static char *build_script(GPtrArray *rows, int x, int y, int sc, const char *path)
{
    GPtrArray *hdr = rows->pdata[0];
    bool numeric_x = true;
    double v;
    band_cols band = find_band(hdr, y);
    g_autofree char *has_band = g_new0(char, rows->len); /* each row's: Y's band is drawn */
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
        int hb = row_band(hdr, row, band, path, r + 1);
        if (hb < 0)
            return NULL;
        has_band[r] = (char)hb;
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
    /* Y's band, per series: a run of two or more consecutive rows with a band
     * is a grey area ($f: x,lo,hi), a row alone (between rows without one,
     * or on a category axis) a grey bar ($e: x,y,lo,hi) */
    GString *items = g_string_new(NULL); /* the band's plot items, drawn first (behind the lines) */
    /* its legend: "80% band (held out)", with the band_kind of the rows that have a band (those of
     * each, in order of first appearance, where they differ) */
    GString *title = g_string_new("title "), *t = g_string_new("80% band");
    g_autoptr(GPtrArray) kinds = g_ptr_array_new();
    for (guint r = 1; r < rows->len && band.kind >= 0; r++) {
        const char *kind = ((GPtrArray *)rows->pdata[r])->pdata[band.kind];
        guint k;
        for (k = 0; k < kinds->len && strcmp(kinds->pdata[k], kind); k++)
            ;
        if (has_band[r] && *kind && k == kinds->len) {
            g_string_append_printf(t, "%s%s", k ? ", " : " (", kind);
            g_ptr_array_add(kinds, (char *)kind);
        }
    }
    if (kinds->len)
        g_string_append_c(t, ')');
    cli_gp_quote(title, t->str);
    g_string_free(t, TRUE);
    GArray *run = g_array_new(FALSE, FALSE, sizeof(int));
    bool titled = false, any_bar = false;
    for (guint s = 0; s < series->len && band.lo >= 0; s++) {
        GString *f = g_string_new(NULL), *e = g_string_new(NULL);
        for (int r = g_array_index(first, int, s);; r = next[r]) {
            if (r && has_band[r]) {
                g_array_append_val(run, r);
                continue;
            }
            bool area = numeric_x && run->len >= 2;
            for (guint i = 0; i < run->len; i++) {
                int q = g_array_index(run, int, i);
                GPtrArray *row = rows->pdata[q];
                if (area)
                    g_string_append_printf(f, "%s,%s,%s\n", (char *)row->pdata[x], (char *)row->pdata[band.lo],
                                           (char *)row->pdata[band.hi]);
                else if (numeric_x)
                    g_string_append_printf(e, "%s,%s,%s,%s\n", (char *)row->pdata[x], (char *)row->pdata[y],
                                           (char *)row->pdata[band.lo], (char *)row->pdata[band.hi]);
                else
                    g_string_append_printf(e, "%d,%s,%s,%s\n", row_cat[q], (char *)row->pdata[y],
                                           (char *)row->pdata[band.lo], (char *)row->pdata[band.hi]);
            }
            if (area)
                g_string_append_c(f, '\n'); /* a blank line: the area ends here */
            g_array_set_size(run, 0);
            if (!r)
                break;
        }
        if (f->len) {
            g_string_append_printf(g, "$f%u << EOD\n%sEOD\n", s, f->str);
            g_string_append_printf(items, "$f%u using 1:2:3 with filledcurves fc rgb '#dddddd' %s, ", s,
                                   titled ? "notitle" : title->str);
            titled = true;
        }
        if (e->len) { /* a thick bar, as wide as the area's grey is light */
            g_string_append_printf(g, "$e%u << EOD\n%sEOD\n", s, e->str);
            g_string_append_printf(items, "$e%u using 1:2:3:4 with yerrorbars lc rgb '#dddddd' lw 10 pt -1 %s, ", s,
                                   titled ? "notitle" : title->str);
            titled = any_bar = true;
        }
        g_string_free(f, TRUE), g_string_free(e, TRUE);
    }
    g_array_unref(run);
    g_free(row_cat), g_free(next);
    g_array_unref(first), g_array_unref(last);
    if (!numeric_x)
        g_string_append_printf(g, "set xrange [-0.5:%u.5]\n", cats->len ? cats->len - 1 : 0);
    if (any_bar)
        g_string_append(g, "set bars 0\n"); /* no end ticks: a bar of the band's width */
    g_string_append(g, "plot ");
    g_string_append(g, items->str);
    g_string_free(items, TRUE), g_string_free(title, TRUE);
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

/* traces/sweep_csv.c - the results CSV of a sweep: header, rows, the
 * ordered writer and --resume's check of a partial file.
 *
 * Rows go out in grid order and are flushed one by one, so a killed sweep
 * leaves a header and a prefix of the grid (at worst plus one cut line,
 * which resume drops). Fields are quoted as RFC 4180 only when needed;
 * reading back uses libcsv.
 */
#include <csv.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "traces/sweep_spec.h"

static void field_append(GString *g, const char *f)
{
    bool quote = !*f || strpbrk(f, ",\"\r\n") || f[0] == ' ' || f[strlen(f) - 1] == ' ';
    if (!quote) {
        g_string_append(g, f);
        return;
    }
    g_string_append_c(g, '"');
    for (const char *c = f; *c; c++) {
        if (*c == '"')
            g_string_append_c(g, '"');
        g_string_append_c(g, *c);
    }
    g_string_append_c(g, '"');
}

char *sweep_csv_header(const sweep_spec *s)
{
    GString *g = g_string_new("point");
    for (guint a = 0; a < s->axis_names->len; a++) {
        g_string_append_c(g, ',');
        field_append(g, s->axis_names->pdata[a]);
    }
    for (guint i = 0; i < s->fig->len; i++) {
        g_string_append_c(g, ',');
        field_append(g, sweep_column_name(s->base, g_array_index(s->fig, int, i)));
    }
    g_string_append_c(g, '\n');
    return g_string_free(g, FALSE);
}

char *sweep_csv_row(const sweep_spec *s, size_t index, char *const *figs)
{
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, "%zu", index);
    for (guint a = 0; a < s->axis_names->len; a++) {
        g_string_append_c(g, ',');
        field_append(g, sweep_spec_axis_value(s, index, a));
    }
    for (guint i = 0; i < s->fig->len; i++) {
        g_string_append_c(g, ',');
        field_append(g, figs[i]);
    }
    g_string_append_c(g, '\n');
    return g_string_free(g, FALSE);
}

/* ---- reading ---------------------------------------------------------- */

typedef struct {
    GPtrArray *fields;
    int rows;
} split_state;

static void on_field(void *s, size_t len, void *data)
{
    split_state *st = data;
    g_ptr_array_add(st->fields, g_strndup(s ? s : "", len));
}

static void on_row(int c, void *data)
{
    (void)c;
    ((split_state *)data)->rows++;
}

static int no_space(unsigned char c)
{
    (void)c;
    return 0;
}

char **sweep_csv_split(const char *line, size_t len)
{
    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) /* FINI: an unclosed quote */
        return NULL;
    csv_set_space_func(&p, no_space);
    split_state st = {.fields = g_ptr_array_new_with_free_func(g_free)};
    bool ok = csv_parse(&p, line, len, on_field, on_row, &st) == len;
    ok = ok && csv_fini(&p, on_field, on_row, &st) == 0 && st.rows == 1;
    csv_free(&p);
    if (!ok) {
        g_ptr_array_unref(st.fields);
        return NULL;
    }
    g_ptr_array_set_free_func(st.fields, NULL);
    g_ptr_array_add(st.fields, NULL);
    return (char **)g_ptr_array_free(st.fields, FALSE);
}

/* Check one data row (line number lineno) against point k of s. */
static bool check_row(const sweep_spec *s, const char *path, int lineno, const char *line, size_t len, size_t k,
                      GError **err)
{
    g_auto(GStrv) f = sweep_csv_split(line, len);
    size_t want = 1 + s->axis_names->len + s->fig->len;
    if (!f) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_PARSE, "%s:%d: malformed CSV row", path, lineno);
        return false;
    }
    if (g_strv_length(f) != want) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_RESUME, "%s:%d: %u fields, the header has %zu", path, lineno,
                    g_strv_length(f), want);
        return false;
    }
    g_autofree char *idx = g_strdup_printf("%zu", k);
    if (strcmp(f[0], idx)) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_RESUME,
                    "%s:%d: row is point %s, expected point %zu (rows must be the grid's first points, in order)",
                    path, lineno, f[0], k);
        return false;
    }
    for (guint a = 0; a < s->axis_names->len; a++) {
        const char *v = sweep_spec_axis_value(s, k, a);
        if (strcmp(f[1 + a], v)) {
            g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_RESUME,
                        "%s:%d: point %zu has %s=%s, the spec gives %s (the spec changed since this file was written)",
                        path, lineno, k, (char *)s->axis_names->pdata[a], f[1 + a], v);
            return false;
        }
    }
    return true;
}

long sweep_csv_resume(const sweep_spec *s, const char *path, GError **err)
{
    char *text = NULL;
    gsize len = 0;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, &len, &e)) {
        bool missing = g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT);
        if (!missing)
            g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_IO, "%s: %s", path, e->message);
        g_error_free(e);
        return missing ? 0 : -1;
    }
    size_t complete = len;
    while (complete > 0 && text[complete - 1] != '\n')
        complete--;
    if (complete < len && truncate(path, (off_t)complete) != 0) {
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_IO, "%s: cannot drop the cut last line: %s", path,
                    g_strerror(errno));
        g_free(text);
        return -1;
    }
    long k = 0;
    g_autofree char *header = sweep_csv_header(s);
    size_t hl = strlen(header);
    if (complete > 0 && (complete < hl || memcmp(text, header, hl))) {
        const char *nl = memchr(text, '\n', complete);
        g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_RESUME,
                    "%s:1: header does not match the spec: expected '%.*s', got '%.*s'", path, (int)hl - 1, header,
                    (int)(nl - text), text);
        k = -1;
    }
    int lineno = 2;
    for (size_t off = hl; k >= 0 && complete > 0 && off < complete; lineno++) {
        const char *line = text + off, *nl = memchr(line, '\n', complete - off);
        size_t ll = (size_t)(nl - line);
        if ((size_t)k >= s->npoints) {
            g_set_error(err, SWEEP_ERROR, SWEEP_ERROR_RESUME, "%s:%d: more rows than the grid's %zu points", path,
                        lineno, s->npoints);
            k = -1;
        } else if (!check_row(s, path, lineno, line, ll, (size_t)k, err)) {
            k = -1;
        } else {
            k++;
        }
        off += ll + 1;
    }
    g_free(text);
    return k;
}

/* ---- ordered writer --------------------------------------------------- */

struct sweep_csv_writer {
    FILE *f;
    size_t next, n;
    GHashTable *pending; /* index -> row (owned), completed out of order */
};

sweep_csv_writer *sweep_csv_writer_new(FILE *f, size_t first, size_t n)
{
    g_assert(first <= n);
    sweep_csv_writer *w = g_new0(sweep_csv_writer, 1);
    w->f = f;
    w->next = first;
    w->n = n;
    w->pending = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    return w;
}

bool sweep_csv_writer_put(sweep_csv_writer *w, size_t index, char *row)
{
    g_assert(index >= w->next && index < w->n);
    g_assert(!g_hash_table_contains(w->pending, GSIZE_TO_POINTER(index)));
    g_hash_table_insert(w->pending, GSIZE_TO_POINTER(index), row);
    char *r;
    while (w->next < w->n && (r = g_hash_table_lookup(w->pending, GSIZE_TO_POINTER(w->next)))) {
        if (fputs(r, w->f) == EOF || fflush(w->f) != 0)
            return false;
        g_hash_table_remove(w->pending, GSIZE_TO_POINTER(w->next));
        w->next++;
    }
    return true;
}

size_t sweep_csv_writer_next(const sweep_csv_writer *w) { return w->next; }

void sweep_csv_writer_free(sweep_csv_writer *w)
{
    if (!w)
        return;
    g_hash_table_destroy(w->pending);
    g_free(w);
}

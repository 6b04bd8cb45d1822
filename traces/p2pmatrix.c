/* traces/p2pmatrix.c - read and write p2pBandwidthLatencyTest matrices.
 *
 * Layout from cuda-samples p2pBandwidthLatencyTest.cu: a title line, a
 * header ("   D\D" or "   GPU"/"   CPU" then "%6d " per column) and one row
 * per GPU ("%6d " then "%6.02f " per cell).  Published logs often lose the
 * trailing blanks and elide matrices with "..."; both are accepted.
 */
#include "traces/p2pmatrix.h"
#include "traces/tracefile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(p2pmatrix-error-quark, p2pmatrix_error)

p2pmatrix_set *p2pmatrix_new(int ngpus)
{
    g_assert(ngpus >= 1);
    p2pmatrix_set *s = g_new0(p2pmatrix_set, 1);
    s->ngpus = ngpus;
    return s;
}

void p2pmatrix_free(p2pmatrix_set *set)
{
    if (!set)
        return;
    for (int k = 0; k < P2PMATRIX_KINDS; k++)
        g_free(set->m[k]);
    g_free(set);
}

double *p2pmatrix_ensure(p2pmatrix_set *set, p2pmatrix_kind kind)
{
    g_assert(kind >= 0 && kind < P2PMATRIX_KINDS);
    if (!set->m[kind])
        set->m[kind] = g_new0(double, (gsize)set->ngpus * (gsize)set->ngpus);
    return set->m[kind];
}

double p2pmatrix_get(const p2pmatrix_set *set, p2pmatrix_kind kind, int i, int j)
{
    g_assert(i >= 0 && i < set->ngpus && j >= 0 && j < set->ngpus);
    return set->m[kind] ? set->m[kind][i * set->ngpus + j] : NAN;
}

const char *p2pmatrix_kind_title(p2pmatrix_kind kind, bool reads)
{
    switch (kind) {
    case P2PMATRIX_CONNECTIVITY:
        return "P2P Connectivity Matrix";
    case P2PMATRIX_UNI_BW_DISABLED:
        return "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)";
    case P2PMATRIX_UNI_BW_ENABLED:
        return reads ? "Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)"
                     : "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)";
    case P2PMATRIX_BI_BW_DISABLED:
        return "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)";
    case P2PMATRIX_BI_BW_ENABLED:
        return "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)";
    case P2PMATRIX_LAT_GPU_DISABLED:
    case P2PMATRIX_LAT_CPU_DISABLED:
        return "P2P=Disabled Latency Matrix (us)";
    case P2PMATRIX_LAT_GPU_ENABLED:
    case P2PMATRIX_LAT_CPU_ENABLED:
        return reads ? "P2P=Enabled Latency (P2P Reads) Matrix (us)"
                     : "P2P=Enabled Latency (P2P Writes) Matrix (us)";
    default:
        g_assert_not_reached();
    }
}

/* ---- reader ------------------------------------------------------------- */

typedef struct {
    const char *name;
    GError **err;
    char **lines;
    int nlines;
    int at; /* index of the next line */
    p2pmatrix_set *set;
} reader;

static void fail(reader *r, int code, int line, int col, const char *fmt, ...) G_GNUC_PRINTF(5, 6);

static void fail(reader *r, int code, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(r->err, P2PMATRIX_ERROR, code, "%s:%d:%d: %s", r->name, line, col, what);
    g_free(what);
}

/* Title -> kind (the GPU half for latency), or -1. */
static int title_kind(const char *s, bool *reads)
{
    bool en = strstr(s, "P2P=Enabled") != NULL;
    if (strstr(s, "P2P=") == NULL && strstr(s, "Connectivity Matrix") == NULL)
        return -1;
    *reads = *reads || strstr(s, "P2P Reads") != NULL;
    if (strstr(s, "Connectivity Matrix"))
        return P2PMATRIX_CONNECTIVITY;
    if (strstr(s, "Latency"))
        return en ? P2PMATRIX_LAT_GPU_ENABLED : P2PMATRIX_LAT_GPU_DISABLED;
    if (!strstr(s, "Bandwidth"))
        return -1;
    if (strstr(s, "Bidirectional"))
        return en ? P2PMATRIX_BI_BW_ENABLED : P2PMATRIX_BI_BW_DISABLED;
    if (strstr(s, "Unidirectional"))
        return en ? P2PMATRIX_UNI_BW_ENABLED : P2PMATRIX_UNI_BW_DISABLED;
    return -1;
}

/* Most GPUs a matrix may have: the reader allocates n*n cells per matrix. */
#define P2P_MAX_GPUS 1024

static bool is_blank(const char *s)
{
    return s[strspn(s, " \t\r")] == '\0';
}

/* Reads "label c0 c1 ..." at r->at; sets *n to the column count. */
static bool read_header(reader *r, const char *label, int *n)
{
    while (r->at < r->nlines && is_blank(r->lines[r->at]))
        r->at++;
    char *d = g_strstrip(g_strdup(r->at < r->nlines ? r->lines[r->at] : ""));
    char **tok = g_strsplit_set(d, " \t\r", -1);
    int k = 0;
    bool ok = tok[0] && strcmp(tok[0], label) == 0;
    /* Columns must read 0 1 2 ... in order (a repeated or skipped index used
     * to pass), and at most P2P_MAX_GPUS of them: the cells are n*n doubles. */
    for (char **t = tok + 1; ok && *t && k <= P2P_MAX_GPUS; t++) {
        if (!**t)
            continue;
        char *end;
        ok = strtol(*t, &end, 10) == k && *end == '\0';
        k++;
    }
    g_strfreev(tok);
    if (!ok || k < 1 || k > P2P_MAX_GPUS)
        fail(r, P2PMATRIX_ERROR_TRUNCATED, r->at + 1, 1,
             "expected a matrix header \"%s 0 1 ...\" (columns in order, at most %d), got \"%s\"", label,
             P2P_MAX_GPUS, d);
    g_free(d);
    if (!ok || k < 1 || k > P2P_MAX_GPUS)
        return false;
    r->at++;
    *n = k;
    return true;
}

static bool read_cells(reader *r, double *m, int n, bool binary)
{
    for (int i = 0; i < n; i++, r->at++) {
        int line = r->at + 1;
        if (r->at >= r->nlines) {
            fail(r, P2PMATRIX_ERROR_TRUNCATED, line, 1, "expected row %d of %d, got end of file", i, n);
            return false;
        }
        char *s = r->lines[r->at], *p = s, *end;
        long idx = strtol(p, &end, 10);
        if (end == p || idx != i) {
            fail(r, P2PMATRIX_ERROR_TRUNCATED, line, 1, "expected row %d of %d, got \"%s\"", i, n, s);
            return false;
        }
        p = end;
        for (int j = 0; j < n; j++) {
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p == '\0' || *p == '\r') {
                fail(r, P2PMATRIX_ERROR_TRUNCATED, line, (int)(p - s) + 1,
                     "expected %d cells in row %d, got %d", n, i, j);
                return false;
            }
            double v = g_ascii_strtod(p, &end);
            /* bandwidths, latencies and 0/1 connectivity are never negative; decimal only (strtod
             * reads hex too); at most 1e9 (GB/s or us: a 1e308 cell printed 309 digits) */
            if (end == p || (*end && *end != ' ' && *end != '\t' && *end != '\r') || !isfinite(v) || v < 0 ||
                v > 1e9 || strspn(p, "0123456789.eE+-") != (size_t)(end - p)) {
                fail(r, P2PMATRIX_ERROR_NOT_NUMBER, line, (int)(p - s) + 1,
                     "expected a decimal number in 0..1e9 in row %d column %d, got \"%.*s\"", i, j,
                     (int)strcspn(p, " \t\r"), p);
                return false;
            }
            if (binary && v != 0 && v != 1) {
                fail(r, P2PMATRIX_ERROR_NOT_NUMBER, line, (int)(p - s) + 1,
                     "expected 0 or 1 (P2P connectivity) in row %d column %d, got \"%.*s\"", i, j,
                     (int)strcspn(p, " \t\r"), p);
                return false;
            }
            m[i * n + j] = v;
            p = end;
        }
        if (!is_blank(p)) { /* a cell past the header's columns used to be ignored */
            fail(r, P2PMATRIX_ERROR_SIZE, line, (int)(p - s) + 1 + (int)strspn(p, " \t"),
                 "expected %d cells in row %d, got more", n, i);
            return false;
        }
    }
    return true;
}

static bool read_block(reader *r, p2pmatrix_kind kind, const char *label)
{
    int n, hdr_line = r->at + 1;
    if (!read_header(r, label, &n))
        return false;
    if (!r->set) {
        r->set = p2pmatrix_new(n);
    } else if (r->set->ngpus != n) {
        fail(r, P2PMATRIX_ERROR_SIZE, hdr_line, 1, "expected %d GPUs as in the first matrix, got %d",
             r->set->ngpus, n);
        return false;
    }
    return read_cells(r, p2pmatrix_ensure(r->set, kind), n, kind == P2PMATRIX_CONNECTIVITY);
}

static bool read_matrix(reader *r, int kind)
{
    if (kind == P2PMATRIX_CONNECTIVITY || kind <= P2PMATRIX_BI_BW_ENABLED)
        return read_block(r, (p2pmatrix_kind)kind, "D\\D");
    if (!read_block(r, (p2pmatrix_kind)kind, "GPU"))
        return false;
    int save = r->at;
    while (r->at < r->nlines && is_blank(r->lines[r->at]))
        r->at++;
    if (r->at < r->nlines && g_str_has_prefix(g_strchug(r->lines[r->at]), "CPU"))
        return read_block(r, (p2pmatrix_kind)(kind + 1), "CPU");
    r->at = save;
    return true;
}

p2pmatrix_set *p2pmatrix_parse(const char *name, const char *text, size_t len, GError **err)
{
    char *copy = g_strndup(text, len);
    reader r = {.name = name, .err = err, .lines = g_strsplit(copy, "\n", -1)};
    g_free(copy);
    r.nlines = (int)g_strv_length(r.lines);
    bool ok = true, reads = false;
    while (ok && r.at < r.nlines) {
        const char *s = r.lines[r.at++];
        int kind = s[0] == '#' ? -1 : title_kind(s, &reads);
        if (kind >= 0)
            ok = read_matrix(&r, kind);
    }
    if (ok && !r.set)
        fail(&r, P2PMATRIX_ERROR_NO_MATRIX, MAX(r.nlines, 1), 1, /* an empty file is line 1, not 0 */
             "expected a p2pBandwidthLatencyTest matrix title, got none");
    g_strfreev(r.lines);
    if (!ok || !r.set) {
        p2pmatrix_free(r.set);
        return NULL;
    }
    r.set->p2p_reads = reads;
    return r.set;
}

p2pmatrix_set *p2pmatrix_read(const char *path, GError **err)
{
    char *text = NULL;
    gsize len = 0;
    GError *io = NULL;
    if (!g_file_get_contents(path, &text, &len, &io)) {
        g_set_error(err, P2PMATRIX_ERROR, P2PMATRIX_ERROR_IO, "%s: cannot read: %s", path,
                    io->message);
        g_error_free(io);
        return NULL;
    }
    tracefile_blank_bom(text, len);
    p2pmatrix_set *s = p2pmatrix_parse(path, text, len, err);
    g_free(text);
    return s;
}

/* ---- writer ------------------------------------------------------------- */

static void write_block(FILE *f, const p2pmatrix_set *s, p2pmatrix_kind kind, const char *label)
{
    int n = s->ngpus;
    fprintf(f, "%s", label);
    for (int j = 0; j < n; j++)
        fprintf(f, "%6d ", j);
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "%6d ", i);
        for (int j = 0; j < n; j++)
            fprintf(f, "%6.02f ", s->m[kind][i * n + j]);
        fprintf(f, "\n");
    }
}

static void write_connectivity(FILE *f, const p2pmatrix_set *s)
{
    int n = s->ngpus;
    fprintf(f, "%s\n     D\\D", p2pmatrix_kind_title(P2PMATRIX_CONNECTIVITY, false));
    for (int j = 0; j < n; j++)
        fprintf(f, "%6d", j);
    fprintf(f, "\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "%6d\t", i);
        for (int j = 0; j < n; j++)
            fprintf(f, "%6d", (int)lround(s->m[P2PMATRIX_CONNECTIVITY][i * n + j]));
        fprintf(f, "\n");
    }
}

void p2pmatrix_write(FILE *f, const p2pmatrix_set *s)
{
    if (s->m[P2PMATRIX_CONNECTIVITY])
        write_connectivity(f, s);
    for (int k = P2PMATRIX_UNI_BW_DISABLED; k <= P2PMATRIX_BI_BW_ENABLED; k++) {
        if (!s->m[k])
            continue;
        fprintf(f, "%s\n", p2pmatrix_kind_title((p2pmatrix_kind)k, s->p2p_reads));
        write_block(f, s, (p2pmatrix_kind)k, "   D\\D");
    }
    for (int k = P2PMATRIX_LAT_GPU_DISABLED; k < P2PMATRIX_KINDS; k += 2) {
        if (!s->m[k])
            continue;
        fprintf(f, "%s\n", p2pmatrix_kind_title((p2pmatrix_kind)k, s->p2p_reads));
        write_block(f, s, (p2pmatrix_kind)k, "   GPU");
        if (s->m[k + 1]) {
            fprintf(f, "\n");
            write_block(f, s, (p2pmatrix_kind)(k + 1), "   CPU");
        }
    }
}

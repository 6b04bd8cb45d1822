/* traces/timeline.c - Chrome trace event format ("X" slices in microseconds,
 * "M" names, "C" counters), which chrome://tracing and ui.perfetto.dev
 * open. Slices on one track never overlap: a stream runs one op at a time,
 * and a link serves one chunk at a time. */
#include "timeline.h"
#include "traces/tracefile.h"

#include <limits.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

void timeline_json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20)
            fprintf(o, "\\u%04x", c);
        else if (c < 0x80)
            fputc(c, o);
        else if (g_utf8_get_char_validated(s, -1) >= 0x80000000u) /* (-1, -2): JSON is UTF-8 */
            fputs("\\ufffd", o); /* a Chakra .et name is any bytes: they went out raw */
        else {
            const char *nx = g_utf8_next_char(s);
            fwrite(s, 1, (size_t)(nx - s), o);
            s = nx - 1;
        }
    }
    fputc('"', o);
}

typedef struct {
    fab_link_id l;
    int64_t busy;
} busy_link;

static int busy_cmp(const void *a, const void *b)
{
    const busy_link *x = a, *y = b;
    return (x->busy < y->busy) - (x->busy > y->busy);
}

/* The busiest links as tracks of process pid: their chunks, and utilisation
 * counters in 100 windows of [0, end_ps]. */
static void write_links(FILE *o, int64_t end_ps, fabric *f, int max_links, int pid)
{
    const GArray *recs = fabric_records(f);
    if (!recs || !recs->len)
        return;
    uint64_t dropped = fabric_records_dropped(f);
    if (dropped) { /* the log's cap: say where the tracks stop */
        const fab_service_rec *last = &g_array_index(recs, fab_service_rec, recs->len - 1);
        fprintf(o, ",\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"recording stopped: %u chunks kept, %" G_GUINT64_FORMAT
                   " later ones not shown\",\"pid\":%d,\"tid\":0,\"ts\":%.6f}",
                recs->len, dropped, pid, last->start_ps / 1e6);
    }
    uint32_t nl = fabric_link_count(f);
    busy_link *b = g_new0(busy_link, nl);
    for (uint32_t l = 0; l < nl; l++)
        b[l] = (busy_link){l, fabric_link(f, l)->kind == LINK_SERVER ? -1 : fabric_link_stats(f, l)->busy_ps};
    qsort(b, nl, sizeof *b, busy_cmp);
    int *track = g_new(int, nl);
    for (uint32_t l = 0; l < nl; l++)
        track[l] = -1;
    int kept = 0;
    for (uint32_t i = 0; i < nl && kept < max_links && b[i].busy > 0; i++) {
        track[b[i].l] = kept;
        fprintf(o, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", pid, kept);
        timeline_json_str(o, fabric_link_name(f, b[i].l));
        fprintf(o, "}}");
        kept++;
    }
    /* utilisation counters in 100 windows */
    int64_t win = end_ps / 100 + 1;
    double *busy = g_new0(double, (size_t)kept * 100);
    for (guint i = 0; i < recs->len; i++) {
        const fab_service_rec *r = &g_array_index(recs, fab_service_rec, i);
        int tk = track[r->link];
        if (tk < 0)
            continue;
        fprintf(o, ",\n{\"ph\":\"X\",\"name\":\"chunk\",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,"
                   "\"args\":{\"bytes\":%" G_GUINT64_FORMAT "}}",
                pid, tk, r->start_ps / 1e6, (r->end_ps - r->start_ps) / 1e6, r->bytes);
        for (int64_t t0 = r->start_ps; t0 < r->end_ps;) {
            int64_t w = t0 / win, wend = (w + 1) * win, t1 = r->end_ps < wend ? r->end_ps : wend;
            if (w < 100)
                busy[(size_t)tk * 100 + (size_t)w] += (double)(t1 - t0);
            t0 = t1;
        }
    }
    for (uint32_t i = 0; i < nl; i++) {
        int tk = track[b[i].l];
        if (tk < 0)
            continue;
        for (int w = 0; w < 100; w++) {
            fprintf(o, ",\n{\"ph\":\"C\",\"name\":");
            timeline_json_str(o, fabric_link_name(f, b[i].l));
            fprintf(o, ",\"pid\":%d,\"ts\":%.6f,\"args\":{\"utilisation\":%.4f}}", pid, (double)(w * win) / 1e6,
                    busy[(size_t)tk * 100 + (size_t)w] / (double)win);
        }
    }
    g_free(busy);
    g_free(track);
    g_free(b);
}

/* A temporary file next to path (renamed into place by finish); a device
 * or FIFO is written in place (*tmp NULL: renaming over it would replace it). */
static FILE *open_tmp(const char *path, char **tmp, GError **err)
{
    *tmp = tracefile_is_special(path) ? NULL : g_strdup_printf("%s.tmp.%d", path, (int)getpid());
    FILE *o = tracefile_open_write(*tmp ? *tmp : path);
    if (!o) {
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: cannot write: %s", path,
                    g_strerror(errno));
        g_free(*tmp);
        *tmp = NULL;
        return NULL;
    }
    fprintf(o, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    return o;
}

static gboolean finish(FILE *o, char *tmp, const char *path, GError **err)
{
    fprintf(o, "\n]}\n");
    gboolean ok = !ferror(o);
    int e = ok ? 0 : errno;
    if (tracefile_close_write(o) != 0) {
        ok = FALSE;
        e = e ? e : errno;
    }
    if (ok && tmp && rename(tmp, path) != 0) {
        ok = FALSE;
        e = errno;
    }
    if (!ok) { /* with the reason: "/tmp: write failed" said nothing (a directory, here) */
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: write failed: %s", *path ? path : "(empty file name)",
                    e ? g_strerror(e) : "I/O error");
        if (tmp)
            remove(tmp);
        ok = FALSE;
    }
    g_free(tmp);
    return ok;
}

int timeline_exposed_tid(const replay_result *res)
{
    int tid = TIMELINE_EXPOSED_TID;
    for (guint i = 0; res->intervals && i < res->intervals->len; i++) {
        int s = g_array_index(res->intervals, replay_interval, i).stream;
        if (s >= tid && s < INT_MAX)
            tid = s + 1;
    }
    return tid;
}

gboolean timeline_write(const char *path, const trace *t, const replay_result *res, fabric *f, int max_links,
                        GError **err)
{
    char *tmp;
    FILE *o = open_tmp(path, &tmp, err);
    if (!o)
        return FALSE;
    fprintf(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"links (busiest)\"}}",
            t->nranks);
    for (int r = 0; r < t->nranks; r++)
        fprintf(o, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"GPU %d\"}}", r, r);
    GHashTable *named = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL); /* (rank, stream) tracks named so far */
    for (guint i = 0; i < res->intervals->len; i++) {
        const replay_interval *iv = &g_array_index(res->intervals, replay_interval, i);
        gint64 key = (gint64)iv->rank << 32 | (guint32)iv->stream;
        if (!g_hash_table_contains(named, &key) && /* a stream's track: named by the first op kind on it */
            g_hash_table_add(named, g_memdup2(&key, sizeof key)))
            fprintf(o, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":"
                       "\"stream %d (%s)\"}}", iv->rank, iv->stream, iv->stream, trace_op_kind_name(iv->kind));
        fprintf(o, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", trace_op_kind_name(iv->kind));
        timeline_json_str(o, iv->name ? iv->name : trace_op_kind_name(iv->kind));
        fprintf(o, ",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f}", iv->rank, iv->stream, iv->start_ps / 1e6,
                (iv->end_ps - iv->start_ps) / 1e6);
    }
    g_hash_table_destroy(named);
    /* each GPU's exposed communication on a track of its own, network or not */
    int last = -1, xtid = timeline_exposed_tid(res);
    for (guint i = 0; res->exposed_spans && i < res->exposed_spans->len; i++) {
        const replay_exposed_span *x = &g_array_index(res->exposed_spans, replay_exposed_span, i);
        if (x->rank != last)
            fprintf(o, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":"
                       "\"exposed communication\"}}", x->rank, xtid);
        last = x->rank;
        fprintf(o, ",\n{\"ph\":\"X\",\"cat\":\"exposed\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,"
                   "\"dur\":%.6f}", x->net ? "exposed: network" : "exposed: inside the server", x->rank,
                xtid, x->start_ps / 1e6, (x->end_ps - x->start_ps) / 1e6);
    }
    write_links(o, res->end_ps, f, max_links, t->nranks);
    return finish(o, tmp, path, err);
}

gboolean timeline_write_coll(const char *path, const char *label, double setup_us, const char *setup_detail,
                             double total_us, fabric *f, int max_links, GError **err)
{
    char *tmp;
    FILE *o = open_tmp(path, &tmp, err);
    if (!o)
        return FALSE;
    fprintf(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"collective\"}}");
    fprintf(o, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"links (busiest)\"}}");
    fprintf(o, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":0,\"args\":{\"name\":");
    timeline_json_str(o, label);
    fprintf(o, "}}");
    double setup = setup_us < total_us ? setup_us : total_us;
    fprintf(o, ",\n{\"ph\":\"X\",\"cat\":\"setup\",\"name\":\"launch + NCCL base latency\",\"pid\":0,\"tid\":0,"
               "\"ts\":0,\"dur\":%.6f", setup);
    if (setup_detail) {
        fprintf(o, ",\"args\":{\"detail\":");
        timeline_json_str(o, setup_detail);
        fprintf(o, "}");
    }
    fprintf(o, "}");
    fprintf(o, ",\n{\"ph\":\"X\",\"cat\":\"collective\",\"name\":");
    timeline_json_str(o, label);
    fprintf(o, ",\"pid\":0,\"tid\":0,\"ts\":%.6f,\"dur\":%.6f}", setup, total_us - setup);
    write_links(o, (int64_t)(total_us * 1e6 + 0.5), f, max_links, 1);
    return finish(o, tmp, path, err);
}

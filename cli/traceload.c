/* cli/traceload.c - pick the importer for the traces a user names. */
#include "traceload.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "traces/chakra.h"
#include "traces/flightrec.h"
#include "traces/kineto.h"
#include "traces/native.h"
#include "traces/nccllog.h"
#include "traces/tracefile.h"

/* A note a loader gave on what it kept, on stderr. */
static trace *noted(trace *t, char *note)
{
    if (note)
        fprintf(stderr, "conveyor: %s\n", note);
    g_free(note);
    return t;
}

static trace *load_kineto(const char *path, GError **err)
{
    char *note = NULL;
    trace *t = trace_kineto_load_noted(path, &note, err);
    return noted(t, note);
}

static trace *load_flightrec(const char *path, GError **err)
{
    char *note = NULL;
    trace *t = trace_flightrec_load(path, &note, err);
    return noted(t, note);
}

static trace *load_nccllog(const char *path, nccllog_extras *x, GError **err)
{
    char *note = NULL;
    trace *t = trace_nccllog_load(path, &note, x, err);
    return noted(t, note);
}

/* Pick the importer from the path and, for JSON, its content. */
static trace *load_one(const char *path, nccllog_extras *x, GError **err)
{
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
        const char *n;
        bool fr = false, nl = false;
        while (d && (n = g_dir_read_name(d))) {
            if (g_str_has_suffix(n, ".et") || g_str_has_suffix(n, ".et.gz"))
                return trace_chakra_load(path, err);
            char head[4096 + 1];
            g_autofree char *p = g_build_filename(path, n, NULL);
            gssize len = fr || nl ? 0 : tracefile_head(p, head, sizeof head);
            fr |= len > 0 && flightrec_sniff(head, len);
            nl |= len > 0 && nccllog_sniff(head, len);
        }
        return nl ? load_nccllog(path, x, err) : fr ? load_flightrec(path, err) : load_kineto(path, err);
    }
    if (g_str_has_suffix(path, ".et") || g_str_has_suffix(path, ".et.gz")) /* (.gz alone: Kineto's) */
        return trace_chakra_load(path, err);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) { /* a Chakra prefix: <path>.0.et, as ASTRA-sim takes them */
        g_autofree char *e0 = g_strconcat(path, ".0.et", NULL), *z0 = g_strconcat(path, ".0.et.gz", NULL);
        if (g_file_test(e0, G_FILE_TEST_IS_REGULAR) || g_file_test(z0, G_FILE_TEST_IS_REGULAR))
            return trace_chakra_load(path, err);
    }
    if (g_str_has_suffix(path, ".csv"))
        return trace_native_load(&path, 1, err);
    if (g_str_has_suffix(path, ".gz"))
        return load_kineto(path, err);
    /* the first 64 KiB say which format it is (the whole file used to be read for this) */
    char head[65536 + 1];
    gssize n = tracefile_head(path, head, sizeof head);
    gsize blank = 0;
    while ((gssize)blank < n && g_ascii_isspace(head[blank]))
        blank++;
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR) && (gssize)blank == n && n < (gssize)sizeof head - 1) {
        /* (an empty .log was read as a malformed native JSON trace) */
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE, "%s:1:1: the file is empty: no trace in it", path);
        return NULL;
    }
    bool ops = g_strstr_len(head, n, "\"ops\"") != NULL;
    if (!ops && flightrec_sniff(head, n))
        return load_flightrec(path, err);
    if (!ops && nccllog_sniff(head, n))
        return load_nccllog(path, x, err);
    if (!ops && (g_strstr_len(head, n, "\"traceEvents\"") || g_strstr_len(head, n, "\"distributedInfo\"")))
        return load_kineto(path, err); /* (a large job's pg_config can push traceEvents past the head) */
    if (!ops && (g_strstr_len(head, n, "\"dataDeps\"") || g_strstr_len(head, n, "\"ctrlDeps\"")))
        return trace_chakra_load(path, err);
    return trace_native_load(&path, 1, err);
}

trace *trace_load_any(char **paths, int n, nccllog_extras *x, GError **err)
{
    if (x)
        *x = (nccllog_extras){0};
    bool all_native = true;
    for (int i = 0; i < n; i++)
        all_native &= g_str_has_suffix(paths[i], ".csv") || (g_str_has_suffix(paths[i], ".json") &&
                                                            !g_str_has_suffix(paths[i], ".et.json"));
    if (n > 1 && all_native)
        return trace_native_load((const char *const *)paths, n, err);
    if (n > 1) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_SCHEMA,
                    "several trace files are read together only in the native format; give a directory for "
                    "per-rank Kineto or Chakra files");
        return NULL;
    }
    return load_one(paths[0], x, err);
}


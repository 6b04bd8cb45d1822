/* traces/tracefile.c - whole-file reads with transparent gunzip for the
 * trace importers. The gzip path feeds the compressed bytes through a
 * GZlibDecompressor in one GConverter loop so a truncated or corrupt stream
 * is reported with the compressed offset where it broke. */
#include "traces/tracefile.h"
#include <stdio.h>
#include <errno.h>
#include <sys/stat.h>

#include <gio/gio.h>
#include <string.h>

#include "traces/trace.h"

static char *gunzip(const char *path, const guint8 *in, gsize in_len, gsize *len, GError **err)
{
    GConverter *z = G_CONVERTER(g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP));
    GByteArray *out = g_byte_array_sized_new((guint)MIN(in_len * 4, (gsize)1 << 30));
    guint8 buf[1 << 16];
    gsize pos = 0;
    GConverterResult res = G_CONVERTER_CONVERTED;
    GError *zerr = NULL;
    while (res != G_CONVERTER_FINISHED) {
        gsize nread = 0, nwritten = 0;
        res = g_converter_convert(z, in + pos, in_len - pos, buf, sizeof buf, G_CONVERTER_INPUT_AT_END, &nread,
                                  &nwritten, &zerr);
        if (res == G_CONVERTER_ERROR) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE,
                        "%s: byte %" G_GSIZE_FORMAT ": gzip: %s after %" G_GSIZE_FORMAT
                        " compressed bytes (%u decompressed): %s", /* "byte N": a position like the other readers' */
                        path, pos, pos >= in_len ? "truncated" : "corrupt", pos, out->len, zerr->message);
            g_error_free(zerr);
            g_byte_array_free(out, TRUE);
            g_object_unref(z);
            return NULL;
        }
        pos += nread;
        g_byte_array_append(out, buf, (guint)nwritten);
    }
    g_object_unref(z);
    *len = out->len;
    g_byte_array_append(out, (const guint8 *)"", 1);
    return (char *)g_byte_array_free(out, FALSE);
}

char *tracefile_read(const char *path, gsize *len, GError **err)
{
    char *raw = NULL;
    gsize n = 0;
    GError *ioerr = NULL;
    if (!g_file_get_contents(path, &raw, &n, &ioerr)) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO, "%s", ioerr->message);
        g_error_free(ioerr);
        return NULL;
    }
    if (n >= 2 && (guint8)raw[0] == 0x1f && (guint8)raw[1] == 0x8b) {
        char *out = gunzip(path, (const guint8 *)raw, n, len, err);
        g_free(raw);
        return out;
    }
    *len = n; /* g_file_get_contents NUL-terminates */
    tracefile_blank_bom(raw, n);
    return raw;
}

void tracefile_line_col(const char *text, gsize len, gsize off, int *line, int *col)
{
    int l = 1, c = 1;
    for (gsize i = 0; i < off && i < len; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

static FILE *dash_stream;

void tracefile_set_dash(FILE *stream)
{
    dash_stream = stream;
}

gboolean tracefile_is_dash(const char *path)
{
    return path && strcmp(path, "-") == 0;
}

FILE *tracefile_open_write(const char *path)
{
    if (tracefile_is_dash(path))
        return dash_stream ? dash_stream : stdout;
    return fopen(path, "w");
}

int tracefile_close_write(FILE *f)
{
    if (f == stdout || (dash_stream && f == dash_stream))
        return fflush(f);
    return fclose(f);
}

gboolean tracefile_is_special(const char *path)
{
    struct stat st;
    if (tracefile_is_dash(path))
        return TRUE;
    if (!path || lstat(path, &st) != 0)
        return FALSE; /* a new file */
    /* a link (/dev/stdout -> /proc/self/fd/1, even when that is a regular
     * file): a rename would replace the link itself, so write through it */
    return S_ISLNK(st.st_mode) || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

gboolean tracefile_set_contents(const char *path, const char *data, gssize len, GError **err)
{
    if (!tracefile_is_special(path)) {
        GError *e = NULL; /* temporary file + rename; its message names the temporary file */
        if (g_file_set_contents(path, data, len, &e))
            return TRUE;
        g_set_error(err, G_FILE_ERROR, e->code, "%s: cannot write: %s", path,
                    e->code == G_FILE_ERROR_NOENT ? "no such directory" : e->message);
        g_error_free(e);
        return FALSE;
    }
    size_t n = len < 0 ? strlen(data) : (size_t)len;
    FILE *o = tracefile_open_write(path);
    gboolean ok = o && fwrite(data, 1, n, o) == n;
    int e = errno;
    if (o && tracefile_close_write(o) != 0 && ok) {
        ok = FALSE;
        e = errno;
    }
    if (!ok)
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "%s: cannot write: %s", path, g_strerror(e));
    return ok;
}

static gint path_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

GPtrArray *tracefile_list(const char *path, gboolean (*want)(const char *full, const char *name), const char *what,
                          GError **err)
{
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    if (!g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_ptr_array_add(files, g_strdup(path));
        return files;
    }
    GError *e = NULL;
    GDir *d = g_dir_open(path, 0, &e);
    if (!d) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO, "%s", e->message);
        g_error_free(e);
        g_ptr_array_unref(files);
        return NULL;
    }
    for (const char *n; (n = g_dir_read_name(d));) {
        char *p = g_build_filename(path, n, NULL);
        if (want(p, n))
            g_ptr_array_add(files, p);
        else
            g_free(p);
    }
    g_dir_close(d);
    g_ptr_array_sort(files, path_cmp);
    if (!files->len) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO, "%s: no %s", path, what);
        g_ptr_array_unref(files);
        return NULL;
    }
    return files;
}

gssize tracefile_head(const char *path, char *buf, size_t n)
{
    FILE *f = g_file_test(path, G_FILE_TEST_IS_REGULAR) ? fopen(path, "rb") : NULL;
    size_t len = f ? fread(buf, 1, n - 1, f) : 0;
    if (f)
        fclose(f);
    buf[len] = 0;
    tracefile_blank_bom(buf, len);
    return (gssize)len;
}

void tracefile_blank_bom(char *text, gsize len)
{
    if (len >= 3 && (guint8)text[0] == 0xef && (guint8)text[1] == 0xbb && (guint8)text[2] == 0xbf)
        memset(text, ' ', 3);
}

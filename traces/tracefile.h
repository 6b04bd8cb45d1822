/* traces/tracefile.h - read a whole trace file into memory, gunzipping it
 * when it starts with the gzip magic (1f 8b). Shared by the Kineto and
 * Chakra importers so that either format may be stored compressed.
 * Uses GIO's GZlibDecompressor (link with gio-2.0).
 */
#ifndef TRACES_TRACEFILE_H
#define TRACES_TRACEFILE_H

#include <glib.h>

/* The bytes of `path` (decompressed if gzip), NUL-terminated (the NUL is not
 * counted in *len). Caller frees with g_free. On failure returns NULL with
 * *err: TRACE_ERROR_IO when the file cannot be read, TRACE_ERROR_PARSE for a
 * corrupt or truncated gzip stream ("path: gzip: truncated after N
 * compressed bytes (M decompressed): ..."). */
char *tracefile_read(const char *path, gsize *len, GError **err);

/* Line and column (1-based) of byte offset `off` in text[0..len). */
void tracefile_line_col(const char *text, gsize len, gsize off, int *line, int *col);

#endif

/* traces/tracefile.h - read a whole trace file into memory, gunzipping it
 * when it starts with the gzip magic (1f 8b). Shared by the Kineto and
 * Chakra importers so that either format may be stored compressed.
 * Uses GIO's GZlibDecompressor (link with gio-2.0).
 */
#ifndef TRACES_TRACEFILE_H
#define TRACES_TRACEFILE_H

#include <stdio.h>

#include <glib.h>

/* The bytes of `path` (decompressed if gzip), NUL-terminated (the NUL is not
 * counted in *len). Caller frees with g_free. On failure returns NULL with
 * *err: TRACE_ERROR_IO when the file cannot be read, TRACE_ERROR_PARSE for a
 * corrupt or truncated gzip stream ("path: gzip: truncated after N
 * compressed bytes (M decompressed): ..."). */
char *tracefile_read(const char *path, gsize *len, GError **err);

/* A UTF-8 byte order mark (EF BB BF, which Windows editors write) at the
 * start of text becomes three spaces: the formats' readers skip it as
 * whitespace and byte offsets stay those of the file. tracefile_read and
 * tracefile_head do it; readers of their own call it. */
void tracefile_blank_bom(char *text, gsize len);

/* Line and column (1-based) of byte offset `off` in text[0..len). */
void tracefile_line_col(const char *text, gsize len, gsize off, int *line, int *col);

/* The traces a path names: `path` itself, or the files of directory `path`
 * that want(full path, name) accepts, in name order. NULL with *err
 * (TRACE_ERROR_IO) when the directory cannot be read or holds none ("path:
 * no <what>"). Caller g_ptr_array_unref's. */
GPtrArray *tracefile_list(const char *path, gboolean (*want)(const char *full, const char *name), const char *what,
                          GError **err);

/* The first n - 1 bytes of a regular file into buf, NUL-terminated, for
 * telling formats apart; how many (0 for a directory, device or FIFO, whose
 * bytes a reader would consume). */
gssize tracefile_head(const char *path, char *buf, size_t n);

/* Outputs. Every file conveyor writes goes to a temporary name and is
 * renamed into place, so a crash never leaves half a file where a good one
 * was; but renaming over /dev/null, a FIFO or a symbolic link replaces the
 * device or the link with a regular file (as root: `-o /dev/null` broke
 * /dev/null, and `--plot /dev/stdout` with stdout sent to a file replaced the
 * /dev/stdout link). tracefile_is_special: path exists and is a link or not
 * a regular file (nor a directory); such an output is written in place,
 * through the link. */
gboolean tracefile_is_special(const char *path);
/* g_file_set_contents, or an in-place write to a special file. */
gboolean tracefile_set_contents(const char *path, const char *data, gssize len, GError **err);
/* The path "-" names standard output (special, as above): the stream given
 * here (the command's saved stdout, cli_dash_output), or stdout when none. */
void tracefile_set_dash(FILE *stream);
/* Whether path is "-". */
gboolean tracefile_is_dash(const char *path);
/* fopen(path, "w"), or the stream "-" names; close with tracefile_close_write
 * (which only flushes that stream). */
FILE *tracefile_open_write(const char *path);
int tracefile_close_write(FILE *f);

#endif

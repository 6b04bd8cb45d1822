/* fuzz/fuzz_file.h - helpers shared by the libFuzzer targets.
 *
 * Several loaders take a path, not memory, so a target writes each input to
 * one temporary file per process (under $TMPDIR, removed at exit) and hands
 * the path over. Also silences GLib's default log handler so an expected
 * warning does not flood the fuzzer's output. Not part of the library build.
 */
#ifndef FUZZ_FUZZ_FILE_H
#define FUZZ_FUZZ_FILE_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char *fuzz_path;

static inline void fuzz_file_cleanup(void)
{
    if (fuzz_path)
        unlink(fuzz_path);
}

static inline void fuzz_log_quiet(const gchar *domain, GLogLevelFlags level, const gchar *msg, gpointer data)
{
    (void)domain, (void)level, (void)msg, (void)data;
}

/* Writes data[0..size) to this process's temporary file whose name ends in
 * `suffix` (e.g. ".json"); returns its path (owned here, same every call).
 * Aborts if the file cannot be written: that is the harness failing. */
static inline const char *fuzz_file_write(const uint8_t *data, size_t size, const char *suffix)
{
    if (!fuzz_path) {
        fuzz_path = g_strdup_printf("%s/conveyor-fuzz-%d%s", g_get_tmp_dir(), (int)getpid(), suffix);
        atexit(fuzz_file_cleanup);
        g_log_set_default_handler(fuzz_log_quiet, NULL);
    }
    FILE *f = fopen(fuzz_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    return fuzz_path;
}

#endif

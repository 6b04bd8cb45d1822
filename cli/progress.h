/* cli/progress.h - the progress line of long runs, on stderr: shown when
 * stderr is a terminal (or CONVEYOR_PROGRESS=1), redrawn in place at most
 * five times a second, erased at the end. Standard output is never
 * touched, so what a command prints stays byte for byte the same. */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    bool on;
    const char *what; /* the command, e.g. "replay" */
    gint64 t0_us, last_us;
    int width;        /* of the last line drawn (0: nothing shown) */
} cli_progress;

void cli_progress_start(cli_progress *pg, const char *what);
/* Draw "what: <msg>, <elapsed> s" unless one was drawn less than 0.2 s ago
 * (force: draw anyway). */
void cli_progress_show(cli_progress *pg, bool force, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
/* "1 MiB", "1.5 GiB", "96 B" into buf. */
void cli_progress_bytes(char *buf, size_t len, uint64_t bytes);
/* Erase the line. */
void cli_progress_end(cli_progress *pg);

#endif

/* cli/progress.c - see progress.h. */
#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void cli_progress_start(cli_progress *pg, const char *what)
{
    const char *env = g_getenv("CONVEYOR_PROGRESS");
    *pg = (cli_progress){.what = what, .t0_us = g_get_monotonic_time()};
    pg->on = env ? strcmp(env, "0") != 0 : isatty(STDERR_FILENO);
}

void cli_progress_show(cli_progress *pg, bool force, const char *fmt, ...)
{
    if (!pg->on)
        return;
    gint64 now = g_get_monotonic_time();
    if (!force && pg->width && now - pg->last_us < 200000)
        return;
    pg->last_us = now;
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    int w = fprintf(stderr, "\r%s: %s, %.1f s", pg->what, msg, (double)(now - pg->t0_us) / 1e6) - 1;
    if (w < pg->width) /* blank what the longer line before left */
        fprintf(stderr, "%*s", pg->width - w, "");
    pg->width = w > pg->width ? w : pg->width;
    fflush(stderr);
    g_free(msg);
}

void cli_progress_end(cli_progress *pg)
{
    if (!pg->on || !pg->width)
        return;
    fprintf(stderr, "\r%*s\r", pg->width, "");
    fflush(stderr);
    pg->width = 0;
}

void cli_progress_bytes(char *buf, size_t len, uint64_t bytes)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    g_snprintf(buf, len, v == (double)(uint64_t)v ? "%.0f %s" : "%.1f %s", v, unit[u]);
}

/* cli/gnuplot.c - see gnuplot.h. */
#include "gnuplot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "traces/tracefile.h"

void cli_gp_quote(GString *g, const char *s)
{
    g_string_append_c(g, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            g_string_append_c(g, '\'');
        g_string_append_c(g, *s == '\n' ? ' ' : *s);
    }
    g_string_append_c(g, '\'');
}

/* The rendered SVG into a special file (a device or FIFO). */
static gboolean copy_into(const char *from, const char *path, GError **err)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    return g_file_get_contents(from, &text, &len, err) && tracefile_set_contents(path, text, (gssize)len, err);
}

int cli_gnuplot_svg(const char *cmd, const char *path, const char *body)
{
    return cli_gnuplot_svg_sized(cmd, path, 800, 500, body);
}

int cli_gnuplot_svg_sized(const char *cmd, const char *path, int width, int height, const char *body)
{
    /* gnuplot writes a temporary file next to the SVG, renamed when done;
     * for a device or FIFO (/dev/stdout), one in the temporary directory,
     * copied into it */
    bool special = tracefile_is_special(path);
    g_autofree char *out = special ? g_build_filename(g_get_tmp_dir(), "conveyor-plot-out-XXXXXX.svg", NULL)
                                   : g_strdup_printf("%s.tmp.%d", path, (int)getpid());
    if (special) {
        int ofd = g_mkstemp(out);
        if (ofd >= 0)
            close(ofd);
    }
    GString *g = g_string_new(NULL);
    g_string_printf(g, "set terminal svg size %d,%d dynamic enhanced font 'sans,12' background '#ffffff'\nset output ",
                    width, height);
    cli_gp_quote(g, out);
    g_string_append_printf(g, "\n%s\nset output\n", body);
    GError *e = NULL;
    FILE *probe = fopen(out, "w"); /* a clear message for a path we cannot write */
    if (!probe) {
        fprintf(stderr, "conveyor %s: cannot write %s: %s\n", cmd, path, g_strerror(errno));
        g_string_free(g, TRUE);
        return EXIT_BADINPUT; /* a path we cannot write is bad input, as for -o and --timeline */
    }
    fclose(probe);
    char *gp = NULL;
    int fd = g_file_open_tmp("conveyor-plot-XXXXXX.gp", &gp, &e);
    if (fd >= 0)
        close(fd);
    int rc = EXIT_OK;
    if (fd < 0 || !g_file_set_contents(gp, g->str, -1, &e)) {
        fprintf(stderr, "conveyor %s: gnuplot script: %s\n", cmd, e->message);
        rc = EXIT_INTERNAL;
    } else {
        char *argv[] = {"gnuplot", gp, NULL};
        char *err_text = NULL;
        int status = 0;
        if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                          &err_text, &status, &e)) {
            fprintf(stderr, "conveyor %s: cannot run gnuplot (install gnuplot-nox): %s\n", cmd, e->message);
            rc = EXIT_INTERNAL;
        } else if (!g_spawn_check_wait_status(status, NULL)) {
            fprintf(stderr, "conveyor %s: gnuplot failed:\n%s", cmd, err_text ? err_text : "");
            rc = EXIT_INTERNAL;
        } else if (special ? !copy_into(out, path, &e) : rename(out, path) != 0) {
            if (special) /* (the message names the file) */
                fprintf(stderr, "conveyor %s: %s\n", cmd, e->message);
            else
                fprintf(stderr, "conveyor %s: %s: %s\n", cmd, path, g_strerror(errno));
            rc = EXIT_BADINPUT; /* the user's path would not take it (/dev/full): as for --timeline and -o */
        } else {
            fprintf(stderr, "plot written to %s\n", tracefile_is_dash(path) ? "standard output" : path);
        }
        g_free(err_text);
    }
    if (rc != EXIT_OK || special)
        remove(out);
    g_clear_error(&e);
    if (gp)
        unlink(gp);
    g_free(gp);
    g_string_free(g, TRUE);
    return rc;
}

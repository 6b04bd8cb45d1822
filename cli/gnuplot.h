/* cli/gnuplot.h - SVG plots through gnuplot (package gnuplot-nox), shared by
 * scale, sweep, collective and validate. The caller writes the plot commands
 * with inline data blocks; this adds the terminal and output, runs gnuplot
 * and moves the SVG into place only when gnuplot succeeded. */
#ifndef CLI_GNUPLOT_H
#define CLI_GNUPLOT_H

#include <glib.h>

/* Append s as a gnuplot single-quoted string ('' stands for '; newlines
 * become spaces). */
void cli_gp_quote(GString *g, const char *s);

/* Write the plot `body` to the SVG `path` (800 x 500). `cmd` names the
 * command in messages ("conveyor <cmd>: ..."). Returns EXIT_OK and says
 * "plot written to PATH" on stderr, or EXIT_INTERNAL with the reason (no
 * gnuplot, gnuplot's own error, the rename). */
int cli_gnuplot_svg(const char *cmd, const char *path, const char *body);
/* The same at width x height pixels. */
int cli_gnuplot_svg_sized(const char *cmd, const char *path, int width, int height, const char *body);

#endif

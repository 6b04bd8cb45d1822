/* cli/collplot.c - see collplot.h. */
#include "collplot.h"

#include <string.h>

#include "cli.h"
#include "gnuplot.h"

static void axes(GString *g, const char *title)
{
    g_string_append(g, "set title ");
    cli_gp_quote(g, title);
    g_string_append(g, " noenhanced\nset logscale x 2\nset format x '%.0b%B'\nset xlabel 'size (bytes)'\n"
                       "set ylabel 'busbw (GB/s)'\nset key top left noenhanced\nset grid\nset yrange [0:*]\n");
}

int collplot_sweep(const char *path, const char *title, const nccltests_row *rows, size_t n,
                   const simsweep_explain *ex, const double *blo, const double *bhi)
{
    size_t drawn = 0; /* log axes: a point needs bytes and a bandwidth above 0 */
    for (size_t i = 0; i < n; i++)
        drawn += rows[i].size_bytes > 0 && rows[i].busbw_GBps[NCCLTESTS_OOP] > 0;
    if (!drawn) {
        fprintf(stderr, "conveyor: --plot %s: no size with bytes and a bandwidth above 0 to draw (sizes below one "
                        "element count as 0 bytes)\n", path);
        return EXIT_BADINPUT;
    }
    GString *g = g_string_new(NULL);
    axes(g, title);
    bool band = false;
    GString *all = g_string_new("$all << EOD\n"), *bd = g_string_new("$band << EOD\n");
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free); /* algorithm/protocol series */
    guint *series = g_new0(guint, n);                           /* each row's */
    for (size_t i = 0; i < n; i++) {
        if (rows[i].size_bytes == 0)
            continue;
        double bw = rows[i].busbw_GBps[NCCLTESTS_OOP];
        g_string_append_printf(all, "%llu %.6g\n", (unsigned long long)rows[i].size_bytes, bw);
        if (blo && bhi && bhi[i] > 0) {
            g_string_append_printf(bd, "%llu %.6g %.6g\n", (unsigned long long)rows[i].size_bytes, bw * blo[i],
                                   bw * bhi[i]);
            band = true;
        }
        char *name = g_strdup_printf("%s/%s", coll_algo_name(ex[i].algo), coll_proto_name(ex[i].proto));
        guint k;
        for (k = 0; k < names->len && strcmp(names->pdata[k], name); k++)
            ;
        if (k == names->len)
            g_ptr_array_add(names, name);
        else
            g_free(name);
        series[i] = k;
    }
    g_string_append(all, "EOD\n");
    g_string_append(bd, "EOD\n");
    g_string_append(g, all->str);
    if (band)
        g_string_append(g, bd->str);
    /* one block of points per algorithm/protocol the tuner chose */
    for (guint k = 0; k < names->len; k++) {
        g_string_append_printf(g, "$a%u << EOD\n", k);
        for (size_t i = 0; i < n; i++) {
            if (rows[i].size_bytes && series[i] == k)
                g_string_append_printf(g, "%llu %.6g\n", (unsigned long long)rows[i].size_bytes,
                                       rows[i].busbw_GBps[NCCLTESTS_OOP]);
        }
        g_string_append(g, "EOD\n");
    }
    g_string_append(g, "plot ");
    if (band)
        g_string_append(g, "$band using 1:2:3 with filledcurves fc rgb '#dddddd' "
                           "title 'measured busbw fell here for 80% of the validation points', ");
    g_string_append(g, "$all using 1:2 with lines lc rgb '#888888' notitle");
    for (guint k = 0; k < names->len; k++) {
        g_string_append_printf(g, ", $a%u using 1:2 with points pt 7 ps 0.8 title ", k);
        cli_gp_quote(g, names->pdata[k]);
    }
    g_string_append_c(g, '\n');
    int rc = cli_gnuplot_svg("collective", path, g->str);
    g_ptr_array_unref(names);
    g_free(series);
    g_string_free(all, TRUE);
    g_string_free(bd, TRUE);
    g_string_free(g, TRUE);
    return rc;
}

int collplot_validate(const char *path, const char *title, const vstats_point *pts, size_t np)
{
    GString *g = g_string_new(NULL);
    axes(g, title);
    g_string_append(g, "$d << EOD\n");
    for (size_t i = 0; i < np; i++)
        if (!pts[i].excluded && pts[i].size_bytes)
            g_string_append_printf(g, "%llu %.6g %.6g\n", (unsigned long long)pts[i].size_bytes,
                                   pts[i].meas_busbw_GBps, pts[i].pred_busbw_GBps);
    g_string_append(g, "EOD\nplot $d using 1:2 with linespoints pt 7 ps 0.6 title 'measured', "
                       "$d using 1:3 with linespoints pt 5 ps 0.6 title 'conveyor'\n");
    int rc = cli_gnuplot_svg("validate", path, g->str);
    g_string_free(g, TRUE);
    return rc;
}

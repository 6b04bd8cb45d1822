/* cli/cmd_p2p.c - `conveyor p2p`: CUDA's p2pBandwidthLatencyTest simulated
 * on a topology's fabric (models/p2psim.c), printed in the sample's layout, and
 * optionally compared with a real log (--compare). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "gnuplot.h"
#include "models/p2psim.h"
#include "traces/p2pmatrix.h"
#include "sysbuild.h"
#include "topologies/accuracy.h"
#include "traces/validate_stats.h"

/* Above this many GPUs the all-pairs simulation gets slow and the matrices
 * unreadable; the sample itself runs on one server. */
#define P2P_MAX_GPUS 128

static const char *const kind_key[P2PMATRIX_KINDS] = {
    "connectivity",     "uni_bw_disabled",  "uni_bw_enabled",  "bi_bw_disabled", "bi_bw_enabled",
    "lat_gpu_disabled", "lat_cpu_disabled", "lat_gpu_enabled", "lat_cpu_enabled",
};

/* What a pair's P2P=Enabled copy crosses (the validation's link classes,
 * docs/validation-p2p.md): "local" (the diagonal), "nvlink" (a direct route
 * with an NVLink hop), "pcie-p2p" (direct, PCIe only), "staged" (through
 * host memory: P2P off for the pair), "network" (between servers). Every
 * pair of the Disabled matrices is staged. */
typedef enum { LC_LOCAL, LC_NVLINK, LC_PCIE, LC_STAGED, LC_NETWORK, LC_N } link_class;
static const char *const lc_name[LC_N] = {"local", "nvlink", "pcie-p2p", "staged", "network"};

static link_class pair_class(fabric *f, fab_node_id a, fab_node_id b)
{
    if (a == b)
        return LC_LOCAL;
    GError *err = NULL;
    const fab_route *r = fabric_route(f, a, b, 0, &err);
    if (!r) { /* (p2psim_fill reached every pair first) */
        g_clear_error(&err);
        return LC_STAGED;
    }
    if (fabric_route_staged(f, r))
        return LC_STAGED;
    link_class c = LC_PCIE;
    for (uint32_t h = 0; h < r->nhops; h++) {
        int k = fabric_link(f, r->hop[h])->kind;
        if (k == LINK_NET)
            return LC_NETWORK;
        if (k == LINK_NVLINK)
            c = LC_NVLINK;
    }
    return c;
}

/* The class of every pair of the Enabled matrices, row-major (g_free). */
static link_class *pair_classes(const topo *t, int n)
{
    link_class *c = g_new(link_class, (size_t)n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            c[(size_t)i * n + j] = pair_class(t->fab, t->gpu_of_rank[i], t->gpu_of_rank[j]);
    return c;
}

/* How far the matrices were off on the real logs compared, per link class
 * present (topologies/accuracy/p2p.json; docs/validation-p2p.md): text
 * lines for the footer under the sample's layout (to `text`, each ending in
 * a newline, "# " comment lines), and the same as a JSON array (to `json`).
 * No band is made up: a class and measure with one dataset gets its
 * in-sample error range and "one dataset"; nothing where nothing was
 * measured. Nothing when the file is missing. */
static void accuracy(const link_class *lc, int n, GString *text, cJSON *json)
{
    if (!acc_p2p_loaded())
        return;
    bool present[LC_N] = {false};
    for (int c = 0; c < n * n; c++)
        present[lc[c]] = true;
    present[LC_STAGED] |= n > 1; /* every pair of the Disabled matrices */
    static const char *const measure[] = {"bi_bw", "uni_bw", "lat_gpu"};
    static const char *const mtext[] = {"bidirectional bandwidth", "unidirectional bandwidth", "GPU latency"};
    static const char *const ctext[LC_N] = {
        [LC_NVLINK] = "NVLink pairs", [LC_PCIE] = "PCIe P2P pairs",
        [LC_STAGED] = "staged pairs (through host memory: P2P=Disabled, or no P2P)",
        [LC_NETWORK] = "pairs in different servers"};
    bool any_band = false;
    GString *body = g_string_new(NULL);
    for (int c = LC_NVLINK; c < LC_N; c++) {
        if (!present[c])
            continue;
        GString *none = g_string_new(NULL);
        for (int k = 0; k < 3; k++) {
            acc_p2p e;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "link", lc_name[c]);
            cJSON_AddStringToObject(o, "measure", measure[k]);
            if (!acc_p2p_error(lc_name[c], measure[k], &e)) {
                g_string_append_printf(none, "%s%s", none->len ? ", " : "", mtext[k]);
                cJSON_AddNumberToObject(o, "datasets", 0);
                cJSON_AddNullToObject(o, "band");
                cJSON_AddStringToObject(o, "why_no_band", "unmeasured: no real log of this kind of pair");
                cJSON_AddItemToArray(json, o);
                continue;
            }
            char why[256];
            if (e.band)
                g_snprintf(why, sizeof why, "held out: %.0f%% of the cells of a dataset left out fell in the p10-p90 of the others",
                           100 * e.held_out);
            else if (e.datasets == 1)
                g_snprintf(why, sizeof why, "one dataset: nothing to leave out");
            else if (isnan(e.held_out))
                g_snprintf(why, sizeof why, "%d datasets, none with enough cells to be checked against the others",
                           e.datasets);
            else
                g_snprintf(why, sizeof why, "only %d of its %d datasets could be left out (the others have too few cells "
                           "to check it against), and %.0f%% of its %d cells fell in the p10-p90 of the rest", e.checked,
                           e.datasets, 100 * e.held_out, e.checked_cells);
            any_band |= e.band;
            g_string_append_printf(body, "#   %s, %s: %+.1f%% to %+.1f%% (median %+.1f%%) over %d cells of %s (%s)",
                                   ctext[c], mtext[k], cli_no_neg_zero(100 * e.min, 1), cli_no_neg_zero(100 * e.max, 1),
                                   cli_no_neg_zero(100 * e.p50, 1), e.n, e.datasets == 1 ? "one dataset" : e.datasets == 2 ? "two datasets" : "several datasets",
                                   e.systems);
            if (e.band)
                g_string_append_printf(body, "; 80%% band: measured between P/%.3f and P/%.3f (%s)\n", 1 + e.hi, 1 + e.lo, why);
            else
                g_string_append_printf(body, "; no band: %s\n", why);
            cJSON_AddNumberToObject(o, "datasets", e.datasets);
            cJSON_AddStringToObject(o, "systems", e.systems);
            cJSON_AddNumberToObject(o, "cells", e.n);
            cJSON_AddNumberToObject(o, "error_min", e.min);
            cJSON_AddNumberToObject(o, "error_median", e.p50);
            cJSON_AddNumberToObject(o, "error_max", e.max);
            if (isnan(e.held_out))
                cJSON_AddNullToObject(o, "held_out");
            else
                cJSON_AddNumberToObject(o, "held_out", e.held_out);
            if (e.band) {
                double b[2] = {e.lo, e.hi};
                cJSON_AddItemToObject(o, "band", cJSON_CreateDoubleArray(b, 2));
            } else {
                cJSON_AddNullToObject(o, "band");
                cJSON_AddStringToObject(o, "why_no_band", why);
            }
            cJSON_AddItemToArray(json, o);
        }
        if (none->len)
            g_string_append_printf(body, "#   %s, %s: unmeasured (no real log has them)\n", ctext[c], none->str);
        g_string_free(none, TRUE);
    }
    g_string_append_printf(text, "# conveyor: %s; the error of these link classes on the real p2pBandwidthLatencyTest "
                                 "logs compared, (conveyor - measured) / measured per cell, in-sample "
                                 "(topologies/accuracy/p2p.json, docs/validation-p2p.md):\n",
                           any_band ? "80% bands where a dataset left out supports one"
                                    : "no 80% band: too few measured systems per link class to leave one out");
    g_string_append(text, body->str);
    g_string_free(body, TRUE);
}

static void print_header(const topo *t, const p2pmatrix_set *s)
{
    int n = s->ngpus;
    printf("[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n");
    for (int r = 0; r < n; r++) {
        int local = r % t->gpus_per_node;
        printf("Device: %d, NVIDIA %s, pciBusID: %x, pciDeviceID: %x, pciDomainID:%x\n", r, t->gpu_model,
               (unsigned)(0x18 + 0x10 * local), 0u, 0u);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j)
                printf("Device=%d %s Access Peer Device=%d\n", i,
                       s->m[P2PMATRIX_CONNECTIVITY][i * n + j] > 0.5 ? "CAN" : "CANNOT", j);
    printf("\n***NOTE: In case a device doesn't have P2P access to other one, it falls back to normal "
           "memcopy procedure.\nSo you can see lesser Bandwidth (GB/s) and unstable Latency (us) in those "
           "cases.\n\n");
}

static void write_csv(const p2pmatrix_set *s)
{
    int n = s->ngpus;
    printf("matrix,src,dst,value\n");
    for (int k = 0; k < P2PMATRIX_KINDS; k++)
        if (s->m[k])
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    printf("%s,%d,%d,%.4f\n", kind_key[k], i, j, s->m[k][i * n + j]);
}

static void write_json(const topo *t, const p2pmatrix_set *s, const link_class *lc)
{
    int n = s->ngpus;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "topology", t->name);
    cJSON_AddStringToObject(o, "gpu", t->gpu_model);
    cJSON_AddNumberToObject(o, "ngpus", n);
    cJSON *ms = cJSON_AddObjectToObject(o, "matrices");
    for (int k = 0; k < P2PMATRIX_KINDS; k++) {
        if (!s->m[k])
            continue;
        cJSON *rows = cJSON_AddArrayToObject(ms, kind_key[k]);
        for (int i = 0; i < n; i++)
            cJSON_AddItemToArray(rows, cJSON_CreateDoubleArray(s->m[k] + (size_t)i * n, n));
    }
    /* how far each link class was off on real logs, in-sample; a band only where one was held out */
    cJSON *acc = cJSON_CreateArray();
    GString *unused = g_string_new(NULL);
    accuracy(lc, n, unused, acc);
    g_string_free(unused, TRUE);
    if (cJSON_GetArraySize(acc) > 0)
        cJSON_AddItemToObject(o, "accuracy", acc);
    else
        cJSON_Delete(acc);
    /* what each pair of the Enabled matrices crosses (the Disabled ones: all staged) */
    cJSON *links = cJSON_AddArrayToObject(o, "link_class");
    for (int i = 0; i < n; i++) {
        const char *row[P2P_MAX_GPUS];
        for (int j = 0; j < n; j++)
            row[j] = lc_name[lc[(size_t)i * n + j]];
        cJSON_AddItemToArray(links, cJSON_CreateStringArray(row, n));
    }
    char *txt = cJSON_Print(o);
    printf("%s\n", txt);
    cJSON_free(txt);
    cJSON_Delete(o);
}

/* Measured vs predicted, per matrix present in both, on o. */
static void compare(FILE *o, const char *path, const p2pmatrix_set *meas, const p2pmatrix_set *pred)
{
    int n = pred->ngpus;
    fprintf(o, "\n# compare: measured %s vs predicted\n", path);
    double *errs = g_new(double, (size_t)n * n);
    for (int k = 0; k < P2PMATRIX_KINDS; k++) {
        if (!meas->m[k] || !pred->m[k])
            continue;
        if (k == P2PMATRIX_CONNECTIVITY) {
            int diff = 0;
            for (int c = 0; c < n * n; c++)
                diff += lround(meas->m[k][c]) != lround(pred->m[k][c]);
            fprintf(o, "summary: %s cells=%d differing=%d\n", kind_key[k], n * n, diff);
            continue;
        }
        fprintf(o, "%s\n   src  dst   measured  predicted     err%%\n", p2pmatrix_kind_title((p2pmatrix_kind)k, meas->p2p_reads));
        size_t ne = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                if (i == j)
                    continue;
                double m = meas->m[k][i * n + j], p = pred->m[k][i * n + j];
                if (!(m > 0) || !isfinite(m)) {
                    fprintf(o, "%6d %4d %10.2f %10.2f %8s\n", i, j, m, p, "-");
                    continue;
                }
                double e = 100 * (p - m) / m;
                errs[ne++] = fabs(e);
                fprintf(o, "%6d %4d %10.2f %10.2f %+8.1f\n", i, j, m, p, cli_no_neg_zero(e, 1));
            }
        if (ne)
            fprintf(o, "summary: %s cells=%zu median_abs_err=%.1f%% max_abs_err=%.1f%%\n", kind_key[k], ne,
                   vstats_percentile(errs, ne, 50), vstats_percentile(errs, ne, 100));
        else
            fprintf(o, "summary: %s cells=0 median_abs_err=n/a max_abs_err=n/a\n", kind_key[k]);
    }
    g_free(errs);
}

/* One heat map panel of matrix m (n x n; the diagonal, NaN cells, and cells
 * <= 0 where `positive`, blank) with its title and colour-bar label; values
 * written in the cells (printf format fmt) up to 16 GPUs. */
static void heat_panel(GString *g, const char *name, const double *m, int n, bool positive, const char *fmt,
                       const char *title, const char *cblabel, const char *palette)
{
    GString *lab = g_string_new(NULL); /* the cells with a value, for their labels */
    g_string_append_printf(g, "$%s << EOD\n", name);
    g_string_append_printf(lab, "$%s_l << EOD\n", name);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double v = m[(size_t)i * n + j];
            if (i != j && isfinite(v) && (v > 0 || !positive)) {
                g_string_append_printf(g, "%d %d %.6g\n", j, i, v);
                g_string_append_printf(lab, "%d %d %.6g\n", j, i, v);
            } else {
                g_string_append_printf(g, "%d %d NaN\n", j, i);
            }
        }
    g_string_append(lab, "EOD\n");
    g_string_append(g, "EOD\n");
    g_string_append(g, lab->str);
    g_string_free(lab, TRUE);
    g_string_append(g, "set title ");
    cli_gp_quote(g, title);
    g_string_append(g, " noenhanced\nset cblabel ");
    cli_gp_quote(g, cblabel);
    g_string_append_printf(g, "\nset palette %s\nplot $%s using 1:2:3 with image pixels notitle", palette, name);
    if (n <= 16)
        g_string_append_printf(g, ", $%s_l using 1:2:(sprintf('%s', $3)) with labels font ',8' notitle", name, fmt);
    g_string_append_c(g, '\n');
}

/* --plot: heat maps of the simulated unidirectional bandwidth and GPU
 * latency with P2P enabled (the sample's two main matrices), and with
 * --compare the bandwidth error against the measured one, in %. */
static int plot_p2p(const char *path, const topo *t, const p2pmatrix_set *pred, const p2pmatrix_set *meas)
{
    int n = pred->ngpus;
    const double *bw = pred->m[P2PMATRIX_UNI_BW_ENABLED], *lat = pred->m[P2PMATRIX_LAT_GPU_ENABLED];
    /* the measured bandwidth matrix: unidirectional, else bidirectional (some logs have only that) */
    p2pmatrix_kind ek = meas && !meas->m[P2PMATRIX_UNI_BW_ENABLED] ? P2PMATRIX_BI_BW_ENABLED : P2PMATRIX_UNI_BW_ENABLED;
    const double *mbw = meas ? meas->m[ek] : NULL, *pbw = pred->m[ek];
    int panels = 2 + (mbw != NULL);
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, "set multiplot layout 1,%d\nset size ratio -1\nset xrange [-0.5:%d.5]\n"
                              "set yrange [%d.5:-0.5]\nset xlabel 'destination GPU'\nset ylabel 'source GPU'\n"
                              "set tics scale 0\nset xtics %d\nset ytics %d\n",
                           panels, n - 1, n - 1, n <= 16 ? 1 : 8, n <= 16 ? 1 : 8);
    char *title = g_strdup_printf("%s (%d GPUs): unidirectional bandwidth, P2P enabled", t->name, n);
    heat_panel(g, "bw", bw, n, true, "%.0f", title, "GB/s", "defined (0 '#deebf7', 1 '#6baed6', 2 '#08306b')");
    g_free(title);
    heat_panel(g, "lat", lat, n, true, "%.1f", "GPU latency, P2P enabled", "us",
               "defined (0 '#fee6ce', 1 '#fd8d3c', 2 '#7f2704')");
    if (mbw) {
        double *e = g_new(double, (size_t)n * n);
        for (int c = 0; c < n * n; c++) /* off the diagonal, where the log has a figure */
            e[c] = mbw[c] > 0 && isfinite(mbw[c]) && c / n != c % n ? 100 * (pbw[c] - mbw[c]) / mbw[c] : NAN;
        g_string_append(g, "set cbrange [-50:50]\n");
        heat_panel(g, "err", e, n, false, "%+.0f",
                   ek == P2PMATRIX_UNI_BW_ENABLED ? "unidirectional bandwidth: conveyor vs measured"
                                                  : "bidirectional bandwidth: conveyor vs measured",
                   "error %",
                   "defined (-50 '#b2182b', 0 'white', 50 '#2166ac')");
        g_free(e);
    }
    g_string_append(g, "unset multiplot\n");
    int rc = cli_gnuplot_svg_sized("p2p", path, 420 * panels, 460, g->str);
    g_string_free(g, TRUE);
    return rc;
}

/* Simulate and print (fmt "text"/"csv"/"json", or NULL: print nothing but
 * the comparison), comparing with the measured log `cmp` when not NULL. */
static int run_p2p(const sys_opts *so, const char *cmp, const char *fmt, const char *plot)
{
    GError *err = NULL;
    p2pmatrix_set *meas = NULL, *set = NULL;
    topo *ton = NULL, *toff = NULL;
    link_class *lc = NULL;
    int rc = EXIT_OK;
    if (cmp && !(meas = p2pmatrix_read(cmp, &err)))
        return cli_fail(err);
    if (!(ton = sys_opts_load(so, &err)) || !(toff = sys_opts_load(so, &err))) {
        rc = cli_fail(err);
        goto out;
    }
    int n = ton->nranks;
    if (n < 1 || n > P2P_MAX_GPUS) {
        fprintf(stderr, "conveyor p2p: %d GPUs; the p2p test runs on 1..%d\n", n, P2P_MAX_GPUS);
        rc = EXIT_BADINPUT;
        goto out;
    }
    if (meas && meas->ngpus != n) {
        fprintf(stderr, "conveyor p2p: %s has %d GPUs but the topology has %d (use --gpus)\n", cmp,
                meas->ngpus, n);
        rc = EXIT_BADINPUT;
        goto out;
    }
    /* "Enabled" is the system as loaded: P2P where the topology (and --set
     * p2p=...) allows it, staged elsewhere, as the sample falls back to a
     * normal memcpy. "Disabled" always stages through host memory. */
    fabric_set_p2p(toff->fab, false);
    p2psim_params prm;
    p2psim_defaults(&prm);
    set = p2pmatrix_new(n);
    if (!p2psim_fill(toff->fab, toff->gpu_of_rank, n, toff->gpu_hbm_Bps, false, &prm,
                     p2pmatrix_ensure(set, P2PMATRIX_UNI_BW_DISABLED), p2pmatrix_ensure(set, P2PMATRIX_BI_BW_DISABLED),
                     p2pmatrix_ensure(set, P2PMATRIX_LAT_GPU_DISABLED), NULL, &err) ||
        !p2psim_fill(ton->fab, ton->gpu_of_rank, n, ton->gpu_hbm_Bps, true, &prm,
                     p2pmatrix_ensure(set, P2PMATRIX_UNI_BW_ENABLED), p2pmatrix_ensure(set, P2PMATRIX_BI_BW_ENABLED),
                     p2pmatrix_ensure(set, P2PMATRIX_LAT_GPU_ENABLED), p2pmatrix_ensure(set, P2PMATRIX_CONNECTIVITY),
                     &err)) {
        rc = cli_fail(err);
        goto out;
    }
    lc = pair_classes(ton, n);
    if (!fmt) {
        /* comparison only */
    } else if (!strcmp(fmt, "csv")) {
        write_csv(set);
    } else if (!strcmp(fmt, "json")) {
        write_json(ton, set, lc);
    } else {
        print_header(ton, set);
        p2pmatrix_write(stdout, set);
        printf("\nNOTE: The CUDA Samples are not meant for performance measurements. Results may vary when "
               "GPU Boost is enabled.\n");
        /* conveyor's footer, under the sample's last line: comment lines */
        GString *foot = g_string_new(NULL);
        cJSON *unused = cJSON_CreateArray();
        accuracy(lc, n, foot, unused);
        cJSON_Delete(unused);
        fputs(foot->str, stdout);
        g_string_free(foot, TRUE);
    }
    if (meas) /* beside CSV or JSON on stdout, the text comparison goes to stderr */
        compare(fmt && (!strcmp(fmt, "csv") || !strcmp(fmt, "json")) ? stderr : stdout, cmp, meas, set);
    if (plot)
        rc = plot_p2p(plot, ton, set, meas);
out:
    g_free(lc);
    p2pmatrix_free(meas);
    p2pmatrix_free(set);
    topo_free(ton);
    topo_free(toff);
    return rc;
}

int p2p_compare_only(const sys_opts *so, const char *path)
{
    return run_p2p(so, path, NULL, NULL);
}

int cmd_p2p(int argc, char **argv)
{
    char *cmp = NULL, *fmt = NULL, *plot = NULL;
    sys_opts so = {0};
    GOptionEntry e[] = {
        {"compare", 0, 0, G_OPTION_ARG_FILENAME, &cmp, "compare with a real p2pBandwidthLatencyTest log", "FILE"},
        {"format", 0, 0, G_OPTION_ARG_STRING, &fmt, "text (the sample's layout), csv or json [text]", "FMT"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &plot,
         "heat maps of bandwidth and latency (P2P enabled; with --compare, the bandwidth error) (SVG, gnuplot; - for stdout)",
         "FILE"},
        {0},
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("- simulate CUDA's p2pBandwidthLatencyTest (GPU x GPU bandwidth and latency)");
    g_option_context_add_main_entries(ctx, e, NULL);
    g_option_context_add_group(ctx, sys_opts_group(&so));
    int rc = cli_parse(ctx, "p2p", &argc, &argv) ? EXIT_OK : EXIT_BADINPUT;
    if (rc == EXIT_OK && !cli_dash_output("p2p", (const char *[]){plot}, 1))
        rc = EXIT_BADINPUT;
    if (rc == EXIT_OK && argc > 1) {
        fprintf(stderr, "conveyor p2p: unexpected argument '%s'\n", argv[1]);
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && fmt && strcmp(fmt, "text") && strcmp(fmt, "csv") && strcmp(fmt, "json")) {
        fprintf(stderr, "conveyor p2p: --format must be text, csv or json\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK)
        rc = run_p2p(&so, cmp, fmt ? fmt : "text", plot);
    g_free(cmp);
    g_free(plot);
    g_free(fmt);
    sys_opts_clear(&so);
    return rc;
}

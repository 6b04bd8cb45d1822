/* cli/cmd_validate.c - `conveyor validate`: read a real nccl-tests log,
 * simulate the same sweep on a topology, print measured vs predicted per
 * size and the error statistics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "collplot.h"
#include "commands.h"
#include "nccl_log.h"
#include "ncclgraph.h"
#include "simsweep.h"
#include "sysbuild.h"
#include "topologies/accuracy.h"
#include "traces/validate_stats.h"

/* GPUs per host thread as the run used them (nccl-tests -g), from the
 * "# nThread 1 nGpus 8" header or the command line in a `#!` header; 1 if
 * the log does not say. It sets the launch cost (one thread launches its
 * GPUs' kernels one after another). */
static int log_gpus_per_thread(const char *path)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return 1;
    static const char *const pats[] = {"nGpus\\s+(\\d+)", "--ngpus[= ](\\d+)", "\\s-g\\s*(\\d+)"};
    for (size_t i = 0; i < G_N_ELEMENTS(pats); i++) {
        g_autoptr(GRegex) re = g_regex_new(pats[i], 0, 0, NULL);
        g_autoptr(GMatchInfo) m = NULL;
        if (g_regex_match(re, text, 0, &m)) {
            g_autofree char *d = g_match_info_fetch(m, 1);
            gint64 v = g_ascii_strtoll(d, NULL, 10); /* (atoi of 4294967297 was 1) */
            if (v >= 1 && v <= 64)
                return (int)v;
        }
    }
    return 1;
}

/* Is `path` a p2pBandwidthLatencyTest output (rather than nccl-tests)? */
static bool is_p2p_log(const char *path)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &text, &len, NULL))
        return false;
    return g_strstr_len(text, (gssize)len, "P2P Connectivity Matrix") ||
           g_strstr_len(text, (gssize)len, "Bandwidth Matrix (GB/s)");
}

/* The log's NCCL_DEBUG TUNING lines (what NCCL chose per size, rank 0's
 * first call of that size) against conveyor's tuner: a line per size and
 * "# tuner: sizes=N algo_proto_match=M channels_match=K". */
static void print_tuner(const nccltests_log *log, const nccltests_row *pred, const simsweep_explain *ex, size_t n,
                        size_t elt)
{
    size_t sizes = 0, same = 0, same_ch = 0;
    printf("# tuner: NCCL's choice in the log (NCCL_DEBUG_SUBSYS=TUNING) against conveyor's\n");
    printf("# tuner: %12s  %-24s  %s\n", "size(B)", "NCCL algo/proto/ch", "conveyor algo/proto/ch");
    for (size_t i = 0; i < n; i++) {
        uint64_t bytes = pred[i].count * (uint64_t)elt; /* NCCL's count x type size */
        const nccltests_tuning *t = NULL;
        for (size_t j = 0; j < log->ntuning && !t; j++)
            if (log->tuning[j].bytes == bytes)
                t = &log->tuning[j];
        if (!t || pred[i].size_bytes == 0)
            continue;
        char theirs[64], ours[64];
        bool match = cli_same_name(t->algo, coll_algo_name(ex[i].algo)) &&
                     cli_same_name(t->proto, coll_proto_name(ex[i].proto));
        sizes++;
        same += match;
        same_ch += match && t->nchannels == ex[i].nchannels;
        g_snprintf(theirs, sizeof theirs, "%s/%s/%d", t->algo, t->proto, t->nchannels);
        g_snprintf(ours, sizeof ours, "%s/%s/%d", coll_algo_name(ex[i].algo), coll_proto_name(ex[i].proto),
                   ex[i].nchannels);
        printf("# tuner: %12llu  %-24s  %s%s\n", (unsigned long long)pred[i].size_bytes, theirs, ours,
               match ? "" : "  (differs)");
    }
    printf("# tuner: sizes=%zu algo_proto_match=%zu channels_match=%zu\n", sizes, same, same_ch);
}

/* The log's Latency/AlgBw table (NCCL_DEBUG_SUBSYS=TUNING: NCCL's tuner's
 * latency and algbw per algorithm and protocol) against conveyor's
 * (coll_tune_table), for the log's collective: a line per pair either
 * enables, then "# tuner table: pairs=N both=M lat_within_10%=L
 * algbw_within_10%=B". */
static void print_tuner_table(const nccltests_log *log, const coll_system *sys)
{
    const char *func = NULL;
    for (int k = 0; k < NCCL_TABLE_NFUNC; k++)
        if (nccl_table_func[k].kind == log->coll)
            func = nccl_table_func[k].name;
    if (!func)
        return;
    int pairs = 0, both = 0, lat_ok = 0, bw_ok = 0;
    for (size_t i = 0; i < log->nlatbw; i++) {
        const nccltests_latbw *c = &log->latbw[i];
        if (strcmp(c->func, func))
            continue;
        int a = -1, pr = -1;
        for (int k = 0; k < NCCL_TABLE_NALGO; k++)
            if (!g_ascii_strcasecmp(c->algo, nccl_table_algo[k].name))
                a = k;
        for (int k = 0; k < NCCL_TABLE_NPROTO; k++)
            if (!g_ascii_strcasecmp(c->proto, nccl_table_proto[k].name))
                pr = k;
        double lat = 0, bw = 0;
        if (a >= 0 && pr >= 0)
            nccl_log_table_cell(sys, log->coll, nccl_table_algo[a].id, nccl_table_proto[pr].id, g_getenv("NCCL_ALGO"),
                                g_getenv("NCCL_PROTO"), &lat, &bw);
        if (!(c->algbw_GBps > 0) && !(bw > 0))
            continue;
        if (!pairs++) {
            printf("# tuner table: NCCL's Latency/AlgBw for %s in the log (NCCL_DEBUG_SUBSYS=TUNING) against "
                   "conveyor's, us/GB/s\n",
                   func);
            printf("# tuner table: %-20s %16s %16s\n", "algo/proto", "NCCL", "conveyor");
        }
        bool on = c->algbw_GBps > 0 && bw > 0;
        bool lok = on && fabs(lat - c->lat_us) <= 0.1 * c->lat_us + 0.05;
        bool bok = on && fabs(bw - c->algbw_GBps) <= 0.1 * c->algbw_GBps;
        both += on;
        lat_ok += lok;
        bw_ok += bok;
        char name[48], theirs[32], ours[32];
        g_snprintf(name, sizeof name, "%s/%s", c->algo, c->proto);
        g_snprintf(theirs, sizeof theirs, "%.1f/%.1f", c->lat_us, c->algbw_GBps);
        g_snprintf(ours, sizeof ours, "%.1f/%.1f", lat, bw);
        printf("# tuner table: %-20s %16s %16s%s\n", name, theirs, ours,
               !on ? "  (enabled on one side)" : lok && bok ? "" : "  (differs)");
    }
    if (pairs)
        printf("# tuner table: pairs=%d both=%d lat_within_10%%=%d algbw_within_10%%=%d\n", pairs, both, lat_ok,
               bw_ok);
}

static bool read_here(const char *name)
{
    for (const coll_nccl_var *v = coll_nccl_vars; v->name; v++)
        if (!strcmp(v->name, name))
            return true;
    return false;
}

/* The NCCL variables the run had, from its NCCL INFO "set by environment"
 * lines (NCCL_DEBUG=INFO logs them), that conveyor reads (coll_nccl_vars):
 * set for this simulation unless conveyor's own environment sets them, or
 * algo/proto (--algo, --proto, or the environment's) NCCL_ALGO/NCCL_PROTO
 * (those win). *line: a "# environment from the log: ..." line, or NULL. False,
 * with *err at the log line, for a value NCCL would not take. */
static bool apply_log_env(const nccltests_log *log, const char *algo, const char *proto, char **line, GError **err)
{
    *line = NULL;
    coll_nccl_env own; /* conveyor's own environment first: its error is not the log's */
    if (!coll_nccl_env_read(&own, err))
        return false;
    GString *used = g_string_new(NULL), *kept = g_string_new(NULL);
    bool ok = true;
    for (int i = 0; ok && log->env[i]; i++) {
        const char *e = log->env[i], *eq = strchr(e, '='), *mine;
        g_autofree char *name = g_strndup(e, (gsize)(eq - e));
        if (!read_here(name))
            continue;
        bool given = (algo && !strcmp(name, "NCCL_ALGO")) || (proto && !strcmp(name, "NCCL_PROTO")); /* --algo/--proto */
        if (given || ((mine = g_getenv(name)) && *mine)) { /* set and not empty: NCCL takes an empty one as unset */
            g_string_append_printf(kept, " %s", name);
            continue;
        }
        g_setenv(name, eq + 1, TRUE);
        g_string_append_printf(used, " %s", e);
        coll_nccl_env check;
        GError *why = NULL;
        if (!coll_nccl_env_read(&check, &why)) { /* this entry: the others so far were read */
            g_set_error(err, NCCLTESTS_ERROR, NCCLTESTS_ERROR_BAD_VALUE,
                        "%s:%d: NCCL INFO \"set by environment\" line: %s", log->path, log->env_line[i], why->message);
            g_error_free(why);
            ok = false;
        }
    }
    if (ok && (used->len || kept->len))
        *line = g_strdup_printf("# environment from the log's NCCL INFO lines:%s%s%s%s\n",
                                used->len ? used->str : " none", kept->len ? " (set here instead:" : "", kept->str,
                                kept->len ? ")" : "");
    g_string_free(used, TRUE);
    g_string_free(kept, TRUE);
    return ok;
}

static int run_validate(const char *path, bool p2p_log, const char *op, const char *algo, const char *proto,
                        double max_err, const char *plot_path, bool explain, int run, sys_opts *so)
{
    GError *err = NULL;
    if (p2p_log)
        return p2p_compare_only(so, path);
    int hint = -1;
    if (op) {
        coll_kind k;
        if (coll_kind_from_name(op, &k) != 0) {
            fprintf(stderr, "conveyor validate: unknown --op '%s'\n", op);
            return EXIT_BADINPUT;
        }
        hint = (int)k;
    }
    nccltests_log *log = nccltests_read_run(path, hint, run, &err);
    if (!log)
        return cli_fail(err);
    g_autofree char *log_env = NULL;
    if (!apply_log_env(log, algo, proto, &log_env, &err)) {
        nccltests_log_free(log);
        return cli_fail(err);
    }
    if (!algo)
        algo = g_getenv("NCCL_ALGO");
    if (!proto)
        proto = g_getenv("NCCL_PROTO");
    if (so->gpus_per_thread == 0) /* the run's own header, else the first in the file */
        so->gpus_per_thread = log->ngpus >= 1 && log->ngpus <= 64 ? log->ngpus : log_gpus_per_thread(path);
    topo *t = sys_opts_load(so, &err);
    if (!t) {
        nccltests_log_free(log);
        return cli_fail(err);
    }
    int rc = EXIT_OK;
    coll_system sys;
    sys_from_topo(&sys, t, so);
    if (!sys_check_p2p_env(&sys.nccl, t, &err)) {
        topo_free(t);
        nccltests_log_free(log);
        return cli_fail(err);
    }
    if (sys.nranks != log->nranks) {
        fprintf(stderr, "conveyor validate: %s: the log has %d ranks (from %s) but --topo %s builds %d; "
                        "use --nodes/--gpus to match\n", path, log->nranks, log->nranks_source, t->name, sys.nranks);
        rc = EXIT_BADINPUT;
        goto out;
    }
    if (sys.nranks % sys.gpus_per_thread) { /* as `collective` refuses it: ranks = threads x GPUs each */
        fprintf(stderr, "conveyor validate: %s: -g %d does not divide the %d ranks\n", path, sys.gpus_per_thread,
                sys.nranks);
        rc = EXIT_BADINPUT;
        goto out;
    }
    if (plot_path && log->ngroups > 1) {
        fprintf(stderr, "conveyor validate: --plot draws one sweep; %s holds %d (one per type, reduction or root)\n",
                path, log->ngroups);
        rc = EXIT_BADINPUT;
        goto out;
    }
    /* one simulated sweep per (type, reduction, root) group of rows: one for most logs, several for
     * nccl-tests -d all / -o all / -r -1 */
    size_t n = 0, np = 0;
    uint64_t *sizes = g_new(uint64_t, log->nrows);
    nccltests_row *pred = g_new0(nccltests_row, log->nrows);
    simsweep_explain *ex = g_new0(simsweep_explain, log->nrows);
    vstats_point *pts = g_new0(vstats_point, log->nrows + 1);
    GString *groups = g_string_new(NULL);
    int gi = 0;
    for (size_t a = 0; rc == EXIT_OK && a < log->nrows;) {
        const nccltests_sweep_id *g = &log->row_id[a];
        size_t b = a + 1;
        while (b < log->nrows && log->row_id[b].dtype == g->dtype && log->row_id[b].redop == g->redop &&
               log->row_id[b].root == g->root)
            b++;
        nccltests_dtype dt = g->dtype;
        nccltests_redop op = g->redop;
        int root = g->root;
        size_t n0 = n;
        for (size_t i = a; i < b; i++)
            if (i == a || log->rows[i].size_bytes != log->rows[i - 1].size_bytes)
                sizes[n++] = log->rows[i].size_bytes;
        if (log->ngroups > 1)
            g_string_append_printf(groups, "# sweep %d: %s %s, root %d (table rows %zu-%zu)\n", ++gi,
                                   nccltests_dtype_name(dt), nccltests_redop_name(op), root, np + 1, np + (b - a));
        if (coll_default_root(log->coll) >= 0 && root >= sys.nranks) {
            g_set_error(&err, COLL_ERROR, COLL_ERROR_UNSUPPORTED, "%s: root %d in the log, but the system has %d ranks",
                        path, root, sys.nranks);
            rc = cli_fail(err);
            break;
        }
        int agg = log->agg_iters > 1 && simsweep_agg_ok(log->coll) ? log->agg_iters : 1; /* -m: one group of m */
        if (!simsweep_run(&sys, log->coll, root, nccltests_dtype_bytes(dt), nccltests_nvls_reduces(op, dt), sizes + n0,
                          n - n0, (simsweep_launch){.agg = agg, .graph = log->graph > 0}, algo, proto, pred + n0,
                          ex + n0, "validate", &err)) {
            rc = cli_fail(err);
            break;
        }
        size_t gp = 0;
        vstats_point *p = vstats_pair_rows(log->rows + a, b - a, pred + n0, n - n0, NCCLTESTS_OOP, &gp, &err);
        if (!p) {
            rc = cli_fail(err);
            break;
        }
        memcpy(pts + np, p, gp * sizeof *p);
        np += gp;
        g_free(p);
        a = b;
    }
    if (rc == EXIT_OK) {
        vstats_summary sum;
        vstats_compute(pts, np, &sum);
        printf("# validate: %s\n# system: %s (%d ranks: %d node%s x %d GPUs), %s, -g %d\n", path, t->name,
               sys.nranks, sys.nnodes, sys.nnodes > 1 ? "s" : "", sys.ppn, coll_kind_name(log->coll),
               sys.gpus_per_thread);
        if (log->run.nruns > 1)
            printf("# run %d of the %d in the log (lines %d-%d)\n", log->run.run, log->run.nruns, log->run.first_line,
                   log->run.last_line);
        printf("# regime: %s (make validate groups the errors by it: topologies/accuracy/)\n",
               acc_regime_name(acc_regime_of(&sys)));
        if (log->nccl_code && log->nccl_code / 100 != COLL_NCCL_CODE / 100) {
            char v[32], m[32];
            nccltests_nccl_version(log->nccl_code, v, sizeof v);
            nccltests_nccl_version(COLL_NCCL_CODE, m, sizeof m);
            printf("# NCCL %s in the log (line %d); the tuner follows NCCL %s's cost model, so where that "
                   "version chose differently the rows compare other algorithms, protocols or channels\n",
                   v, log->nccl_code_line, m);
        }
        if (log_env)
            fputs(log_env, stdout);
        fputs(groups->str, stdout);
        if (log->nlatbw)
            print_tuner_table(log, &sys);
        if (log->nrings)
            ncclgraph_print_rings(log->rings, log->nrings, &sys);
        if (log->ntrees)
            ncclgraph_print_trees(log->trees, log->ntrees, &sys);
        if (log->ntuning && log->ngroups == 1) /* before the table: its summary stays the last line */
            print_tuner(log, pred, ex, n, nccltests_dtype_bytes(log->dtype));
        else if (log->ntuning)
            printf("# tuner: not compared (%zu TUNING lines over %d sweeps: a line names its size, not its sweep)\n",
                   log->ntuning, log->ngroups);
        if (explain)
            simsweep_print_explain(stdout, pred, ex, n, log->coll, sys.nranks, NULL, NULL, NULL);
        vstats_print(stdout, pts, np, &sum);
        if (plot_path) {
            char *base = g_path_get_basename(path);
            char *title = g_strdup_printf("%s: measured and conveyor on %s (%d GPUs)", base, t->name, sys.nranks);
            int prc = collplot_validate(plot_path, title, pts, np);
            if (prc != EXIT_OK)
                rc = prc;
            g_free(title);
            g_free(base);
        }
        if (rc == EXIT_OK && max_err > 0 && !(sum.median_large <= max_err))
            rc = EXIT_INTERNAL;
    }
    g_string_free(groups, TRUE);
    g_free(pts);
    g_free(pred);
    g_free(ex);
    g_free(sizes);
out:
    topo_free(t);
    nccltests_log_free(log);
    return rc;
}

int cmd_validate(int argc, char **argv)
{
    sys_opts so = {0};
    char *op = NULL, *algo = NULL, *proto = NULL, *plot = NULL;
    double max_err = 0;
    gboolean explain = FALSE;
    int run = 0;
    GOptionEntry e[] = {
        {"op", 0, 0, G_OPTION_ARG_STRING, &op, "the collective, when the log does not name it", "OP"},
        {"ngpus", 'g', 0, G_OPTION_ARG_INT, &so.gpus_per_thread, "GPUs per host thread [from the log, else 1]", "G"},
        {"algo", 0, 0, G_OPTION_ARG_STRING, &algo, "force algorithms (NCCL_ALGO syntax)", "LIST"},
        {"proto", 0, 0, G_OPTION_ARG_STRING, &proto, "force protocols (NCCL_PROTO syntax)", "LIST"},
        {"max-error", 0, 0, G_OPTION_ARG_DOUBLE, &max_err, "exit 1 if the median |busbw error| over sizes >= 1 MiB exceeds PCT", "PCT"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &plot, "measured and predicted busbw against size (SVG, gnuplot; - for stdout)", "FILE"},
        {"explain", 0, 0, G_OPTION_ARG_NONE, &explain, "per size: the algorithm, protocol, channels and busiest link simulated", NULL},
        {"run", 0, 0, G_OPTION_ARG_INT, &run, "the run to read where the log holds several nccl-tests runs, from 1", "N"},
        {0},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("MEASURED.log - compare a real nccl-tests run with the simulation");
    g_option_context_set_description(ctx, SYS_ENV_HELP "\n\n"
                                          "A log with NCCL_DEBUG=INFO lines: the NCCL variables its ENV lines name are set "
                                          "for the simulation,\nits TUNING lines (the choice per size) and Latency/AlgBw "
                                          "table are compared with conveyor's tuner,\nrank 0's ring lines (Channel cc/NN : ...) and the ranks' Trees "
                                          "lines with the rings and trees\nit simulates (docs/formats-nccl-tests.md).");
    g_option_context_add_main_entries(ctx, e, NULL);
    g_option_context_add_group(ctx, sys_opts_group(&so));
    int rc = cli_parse(ctx, "validate", &argc, &argv) ? EXIT_OK : EXIT_BADINPUT;
    if (rc == EXIT_OK && !cli_dash_output("validate", (const char *[]){plot}, 1))
        rc = EXIT_BADINPUT;
    if (rc == EXIT_OK && argc != 2) {
        fprintf(stderr, "conveyor validate: expected exactly one measured log (see 'conveyor validate --help')\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && (!(max_err >= 0 && max_err <= 1e6) || so.gpus_per_thread < 0 || so.gpus_per_thread > 1024)) {
        fprintf(stderr, "conveyor validate: --max-error must be a percentage >= 0 and -g in 1..1024\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && (run < 0 || run > 1000000)) {
        fprintf(stderr, "conveyor validate: --run must be a run number from 1\n");
        rc = EXIT_BADINPUT;
    }
    bool p2p_log = rc == EXIT_OK && is_p2p_log(argv[1]); /* (read once: run_validate takes it) */
    if (p2p_log) { /* a p2pBandwidthLatencyTest log: no collective sweep to shape */
        const char *given = op ? "--op" : algo ? "--algo" : proto ? "--proto" : so.gpus_per_thread ? "-g" :
                            explain ? "--explain" : max_err > 0 ? "--max-error" : plot ? "--plot" : run ? "--run" : NULL;
        if (given) {
            fprintf(stderr, "conveyor validate: %s is for nccl-tests logs; %s is a p2pBandwidthLatencyTest log "
                            "(conveyor p2p --compare it: --format, --plot)\n", given, argv[1]);
            rc = EXIT_BADINPUT;
        }
    }
    const char *env_algo = g_getenv("NCCL_ALGO"), *env_proto = g_getenv("NCCL_PROTO"); /* empty: unset, as NCCL */
    if (rc == EXIT_OK)
        rc = run_validate(argv[1], p2p_log, op, algo ? algo : env_algo && *env_algo ? env_algo : NULL,
                          proto ? proto : env_proto && *env_proto ? env_proto : NULL,
                          max_err, plot, explain, run, &so);
    g_free(op);
    g_free(plot);
    g_free(algo);
    g_free(proto);
    sys_opts_clear(&so);
    return rc;
}

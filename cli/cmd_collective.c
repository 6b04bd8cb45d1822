/* cli/cmd_collective.c - `conveyor collective`: a simulated nccl-tests sweep,
 * printed exactly as nccl-tests prints it (or as CSV/JSON). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "collplot.h"
#include "commands.h"
#include "nccl_log.h"
#include "progress.h"
#include "simsweep.h"
#include "sysbuild.h"
#include "topologies/accuracy.h"
#include "traces/timeline.h"

/* Rows one run may print (sizes x types x reductions x roots): each is a
 * simulation; 65,536 of the smallest take minutes here. */
#define COLLECTIVE_MAX_ROWS 65536

typedef struct {
    char *op, *minb, *maxb, *stepb, *dtype, *redop, *algo, *proto, *format, *plot, *timeline;
    gint factor, root, iters, warmup;
    gint nthreads, check, agg, blocking, average, graph; /* nccl-tests' -t -c -m -z -a -G */
    gboolean explain;
} coll_opts;

/* NCCL's name of the network plugin a scale-out fabric would use: IB
 * verbs for InfiniBand and RoCE, aws-ofi-nccl's Libfabric for EFA. */
static const char *net_name(const char *fabric)
{
    return fabric && g_str_has_prefix(fabric, "efa") ? "Libfabric" : "IB";
}

/* One MPI process per per_proc ranks (nccl-tests' -t x -g), never across servers. */
static void fill_devices(nccltests_device *dev, int n, const topo *t, int per_proc, char *name, char **hosts)
{
    for (int r = 0; r < n; r++) {
        int node = r / t->gpus_per_node, local = r % t->gpus_per_node;
        hosts[r] = g_strdup_printf("node%d", node);
        dev[r] = (nccltests_device){.rank = r, .group = 0, .pid = 10000 + r / per_proc, .host = hosts[r],
                                    .device = local, .pci_bus = (unsigned)(0x18 + 0x10 * local),
                                    .name = name};
    }
}

/* --timeline: the sweep's last (largest) size again, with the fabric
 * recording every chunk each link serves, written for Perfetto. The run is
 * the sweep's own (same choice, deterministic), so its time is the row's. */
static bool write_timeline(const char *path, const coll_system *sys, coll_kind kind, uint64_t bytes,
                           const simsweep_explain *ex, GError **err)
{
    coll_request req = {.kind = kind, .bytes = bytes, .root = coll_default_root(kind) < 0 ? 0 : coll_default_root(kind),
                        .algo = ex->algo, .proto = ex->proto, .nchannels = ex->nchannels};
    coll_result res;
    fabric_set_recording(sys->fab, true);
    bool ok = coll_run(sys, &req, &res, err);
    if (ok) {
        char sz[32];
        cli_progress_bytes(sz, sizeof sz, bytes);
        char *label = g_strdup_printf("%s %s: %s/%s, %d channel%s, %d ranks", coll_kind_name(kind), sz,
                                      coll_algo_name(req.algo), coll_proto_name(req.proto), req.nchannels,
                                      req.nchannels == 1 ? "" : "s", sys->nranks);
        double setup = coll_setup_us(sys, &req);
        int g = sys->gpus_per_thread > 0 ? sys->gpus_per_thread : 1;
        double host = coll_setup_host_us(sys, &req);
        char *detail = g_strdup_printf("host launch %d GPU%s x (%.2f us + %d channel%s x %.2f us) = %.2f us, "
                                       "then NCCL's %s/%s base latency %.2f us",
                                       g, g == 1 ? "" : "s", sys->launch_us, req.nchannels,
                                       req.nchannels == 1 ? "" : "s", sys->launch_ch_us, host,
                                       coll_algo_name(req.algo), coll_proto_name(req.proto), setup - host);
        ok = timeline_write_coll(path, label, setup, detail, res.time_us, sys->fab, 64, err);
        g_free(detail);
        g_free(label);
        if (ok && fabric_records_dropped(sys->fab))
            fprintf(stderr, "conveyor collective: %s holds the first %u chunks; %" G_GUINT64_FORMAT
                            " later ones are not in it (choose a smaller -e for the timeline)\n",
                    path, FABRIC_MAX_RECORDS, fabric_records_dropped(sys->fab));
    }
    fabric_set_recording(sys->fab, false);
    return ok;
}

static int run_sweep(const coll_opts *co, const sys_opts *so)
{
    GError *err = NULL;
    coll_kind kind;
    if (coll_kind_from_name(co->op ? co->op : "all_reduce", &kind) != 0) {
        fprintf(stderr, "conveyor collective: unknown --op '%s' (all_reduce, all_gather, reduce_scatter, "
                        "broadcast, reduce, alltoall, sendrecv, gather, scatter)\n", co->op);
        return EXIT_BADINPUT;
    }
    int root = coll_default_root(kind) >= 0 ? co->root : -1; /* (other collectives print -1, as nccl-tests) */
    bool all_roots = coll_default_root(kind) >= 0 && co->root == -1; /* nccl-tests -r -1: every root in turn */
    /* -d all / -o all: one table over every type / reduction, in nccl-tests' order (its test_types,
     * test_ops; fp8 where the GPU reduces it, below; PreMulSum "mulsum" is not modelled) */
    static const nccltests_dtype all_dt[] = {NCCLTESTS_INT8,  NCCLTESTS_UINT8,   NCCLTESTS_INT32,   NCCLTESTS_UINT32,
                                             NCCLTESTS_INT64, NCCLTESTS_UINT64,  NCCLTESTS_HALF,    NCCLTESTS_FLOAT,
                                             NCCLTESTS_DOUBLE, NCCLTESTS_BFLOAT16, NCCLTESTS_FP8_E4M3, NCCLTESTS_FP8_E5M2};
    static const nccltests_redop all_op[] = {NCCLTESTS_OP_SUM, NCCLTESTS_OP_PROD, NCCLTESTS_OP_MAX, NCCLTESTS_OP_MIN,
                                             NCCLTESTS_OP_AVG};
    nccltests_dtype dts[G_N_ELEMENTS(all_dt)];
    nccltests_redop ops[G_N_ELEMENTS(all_op)];
    size_t ndt = 1, nop = 1;
    bool dt_all = co->dtype && !strcmp(co->dtype, "all"), op_all = co->redop && !strcmp(co->redop, "all");
    if (dt_all) {
        ndt = G_N_ELEMENTS(all_dt);
        memcpy(dts, all_dt, sizeof all_dt);
    } else if (nccltests_dtype_from_name(co->dtype ? co->dtype : "float", &dts[0]) != 0) {
        fprintf(stderr, "conveyor collective: unknown -d type '%s' (or all)\n", co->dtype);
        return EXIT_BADINPUT;
    }
    ops[0] = NCCLTESTS_OP_SUM;
    if (op_all) {
        nop = G_N_ELEMENTS(all_op);
        memcpy(ops, all_op, sizeof all_op);
    } else if (co->redop && (!*co->redop || nccltests_redop_from_name(co->redop, &ops[0]) != 0)) { /* ("" is a log's "none") */
        fprintf(stderr, "conveyor collective: unknown -o op '%s' (or all)\n", co->redop);
        return EXIT_BADINPUT;
    }
    /* nccl-tests runs those once per type, reduction "none"; but sendrecv_perf runs each -o reduction
     * (sendrecv.cu SendRecvRunTest: test_ops with -o all) and prints its name, "sum" by default (file 29) */
    if (!coll_is_reducing(kind) && kind != COLL_SENDRECV) {
        ops[0] = NCCLTESTS_OP_NONE;
        nop = 1;
    }
    if ((dt_all || op_all || all_roots) && (co->plot || co->timeline)) {
        fprintf(stderr, "conveyor collective: --plot and --timeline take one type, one reduction and one root "
                        "(not -d all / -o all / -r -1)\n");
        return EXIT_BADINPUT;
    }
    uint64_t lo = 33554432, hi = 33554432, step = 1048576;
    if ((co->minb && !cli_parse_bytes(co->minb, &lo, &err)) || (co->maxb && !cli_parse_bytes(co->maxb, &hi, &err)) ||
        (co->stepb && !cli_parse_bytes(co->stepb, &step, &err)))
        return cli_fail(err);
    const char *fmt = co->format ? co->format : "text";
    if (strcmp(fmt, "text") && strcmp(fmt, "csv") && strcmp(fmt, "json")) {
        fprintf(stderr, "conveyor collective: --format must be text, csv or json\n");
        return EXIT_BADINPUT;
    }
    g_autoptr(GArray) req = cli_coll_sizes(lo, hi, co->factor, co->factor >= 2 ? 0 : step, &err);
    if (!req)
        return cli_fail(err);
    if (hi > CLI_MAX_COLL_BYTES / (uint64_t)co->agg) { /* -m calls run as one of -m x the size */
        fprintf(stderr, "conveyor collective: -m %d x -e %" G_GUINT64_FORMAT " bytes is above 1T (2^40 bytes), the "
                        "largest size simulated\n", co->agg, hi);
        return EXIT_BADINPUT;
    }
    topo *t = sys_opts_load(so, &err);
    if (!t)
        return cli_fail(err);
    coll_system sys;
    sys_from_topo(&sys, t, so);
    if (!sys_check_p2p_env(&sys.nccl, t, &err)) {
        topo_free(t);
        return cli_fail(err);
    }
    int nroot = all_roots ? sys.nranks : 1;
    if (sys.nranks % (co->nthreads * sys.gpus_per_thread) != 0) { /* ranks = processes x threads x GPUs */
        fprintf(stderr, "conveyor collective: -t %d x -g %d does not divide the system's %d ranks\n", co->nthreads,
                sys.gpus_per_thread, sys.nranks);
        topo_free(t);
        return EXIT_BADINPUT;
    }
    if (root >= sys.nranks) {
        fprintf(stderr, "conveyor collective: -r %d: the system has ranks 0..%d\n", root, sys.nranks - 1);
        topo_free(t);
        return EXIT_BADINPUT;
    }
    if (dt_all && sys.gpu_sm < 90) /* fp8 reductions need sm 9.0 (NCCL) */
        ndt -= 2;
    size_t nreq = req->len, n = nreq * ndt * nop * (size_t)nroot;
    if (n > COLLECTIVE_MAX_ROWS) { /* each row is a simulation: refuse before allocating */
        fprintf(stderr, "conveyor collective: %zu sizes x %zu types x %zu reductions x %d roots = %zu rows; at most %d "
                        "(narrow -b/-e, -d, -o or -r)\n", nreq, ndt, nop, nroot, n, COLLECTIVE_MAX_ROWS);
        topo_free(t);
        return EXIT_BADINPUT;
    }
    uint64_t *sizes = g_new(uint64_t, n);
    nccltests_row *rows = g_new0(nccltests_row, n);
    simsweep_explain *ex = g_new0(simsweep_explain, n);
    nccltests_sweep_id *row_id = g_new(nccltests_sweep_id, n);
    const char *aspec = co->algo ? co->algo : g_getenv("NCCL_ALGO");
    const char *pspec = co->proto ? co->proto : g_getenv("NCCL_PROTO");
    int rc = EXIT_OK;
    nccltests_dtype dt = dts[0];
    nccltests_redop redop = ops[0];
    size_t off = 0; /* nccl-tests' order: types, then reductions, then roots, then sizes */
    for (size_t a = 0; a < ndt; a++)
        for (size_t b = 0; b < nop; b++)
            for (int r = 0; r < nroot; r++, off += nreq) {
                size_t elt = nccltests_dtype_bytes(dts[a]);
                int rt = all_roots ? r : root;
                for (size_t i = 0; i < nreq; i++) {
                    sizes[off + i] = nccltests_size_for_request(kind, g_array_index(req, uint64_t, i), sys.nranks, elt);
                    row_id[off + i] = (nccltests_sweep_id){.dtype = dts[a], .redop = ops[b], .root = rt};
                }
                if (!simsweep_run(&sys, kind, rt, elt, nccltests_nvls_reduces(ops[b], dts[a]), sizes + off, nreq,
                                  (simsweep_launch){.agg = co->agg, .graph = co->graph > 0}, aspec, pspec, rows + off,
                                  ex + off, "collective", &err)) {
                    rc = cli_fail(err);
                    goto out;
                }
            }
    char *gname = g_strdup_printf("NVIDIA %s", t->gpu_model);
    char **hosts = g_new0(char *, sys.nranks + 1);
    nccltests_device *dev = g_new0(nccltests_device, sys.nranks);
    fill_devices(dev, sys.nranks, t, co->nthreads * sys.gpus_per_thread, gname, hosts);
    /* error bands from the validation (topologies/accuracy.h) */
    double *blo = g_new0(double, n), *bhi = g_new0(double, n);
    const char **regime = g_new(const char *, n); /* per row: NVLS keeps NVLink without P2P */
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        acc_band b;
        acc_regime r = acc_regime_algo(&sys, sys.nnodes, ex[i].algo);
        regime[i] = acc_regime_label(&sys, r);
        if (acc_coll_band(r, rows[i].size_bytes, &b)) {
            acc_rate_range(1.0, &b, &blo[i], &bhi[i]);
            any = true;
        }
    }
    /* what the CSV/JSON band columns are (JSON: "bus_bw_80_note"; the CSV has no room for it) */
    GString *note = g_string_new(NULL);
    for (size_t i = 0; any && i < n; i++)
        if (!strstr(note->str, regime[i]))
            g_string_append_printf(note, "%s%s", note->len ? ", " : "", regime[i]);
    if (any)
        g_string_prepend(note, "bus_bw_80: where the measured out-of-place busbw is expected for 80% of sizes, from "
                               "make validate's errors on nccl-tests logs of systems of the same kind (");
    if (any)
        g_string_append_printf(note, "), %s; topologies/accuracy/collectives.json, docs/validation.md",
                               strcmp(acc_coll_band_kind(), "held out")
                                   ? "their p10-p90, in-sample"
                                   : "their p10-p90 widened until 80% of a dataset left out fell inside");
    /* NCCL_DEBUG=INFO: the lines NCCL would add (ENV, init and the TUNING table at setup, TUNING per size) */
    char *prefix = g_strdup_printf("%s:%d:%d [%d]", dev[0].host ? dev[0].host : "localhost", dev[0].pid, dev[0].pid,
                                   dev[0].device);
    char *setup_log = nccl_log_env(prefix);
    nccl_log_comm lc = {.sys = &sys, .dev = dev, .net = net_name(t->fabric_name), .mnnvl = t->nodes > sys.nnodes,
                        .comm_id = g_str_hash(t->name)};
    char *init_log = nccl_log_init(&lc);
    if (init_log) {
        char *both = g_strconcat(setup_log ? setup_log : "", init_log, NULL);
        g_free(setup_log);
        g_free(init_log);
        setup_log = both;
    }
    char **row_log = NULL;
    if (nccl_log_on("TUNING")) {
        char *table = nccl_log_tuning_table(prefix, &sys, aspec, pspec), *both = g_strconcat(setup_log ? setup_log : "", table, NULL);
        g_free(table);
        g_free(setup_log);
        setup_log = both;
        row_log = g_new0(char *, n + 1);
        for (size_t i = 0; i < n; i++)
            row_log[i] = nccl_log_tuning(prefix, kind, rows[i].count * (uint64_t)nccltests_dtype_bytes(row_id[i].dtype),
                                         ex[i].algo, ex[i].proto, ex[i].nchannels);
    }
    if (nccl_log_on("COLL")) { /* every call nccl-tests makes, in its order (common.cu TimeTest, BenchTime) */
        if (!row_log)
            row_log = g_new0(char *, n + 1);
        uint64_t opcount = 0;
        int per = co->iters * co->agg + (co->check ? 1 : 0); /* timed calls, and the one -c checks */
        for (size_t i = 0; i < n; i++) {
            GString *lines = g_string_new(NULL);
            const nccltests_sweep_id *id = &row_id[i];
            char *part;
            if (i % nreq == 0) /* a table's warm-up: at its largest size, then its smallest */
                for (int w = 0; w < 2; w++) {
                    part = nccl_log_coll(&lc, kind, rows[i + (w ? 0 : nreq - 1)].count, id->dtype, id->redop, id->root,
                                         co->warmup, co->warmup, 1, &opcount);
                    g_string_append(lines, part);
                    g_free(part);
                }
            part = nccl_log_coll(&lc, kind, rows[i].count, id->dtype, id->redop, id->root, 2 * per, per, co->agg,
                                 &opcount);
            g_string_append(lines, part);
            g_string_append(lines, row_log[i] ? row_log[i] : "");
            g_free(part);
            g_free(row_log[i]);
            row_log[i] = g_string_free(lines, FALSE);
        }
    }
    nccltests_sweep sw = {.coll = kind, .dtype = dt, .redop = redop,
                          .root = root, .nranks = sys.nranks, .version = "2.19.6",
                          .nccl_code = COLL_NCCL_CODE, .nthreads = co->nthreads, .ngpus = sys.gpus_per_thread,
                          .min_bytes = lo, .max_bytes = hi, .step_factor = co->factor, .step_bytes = step,
                          .warmup_iters = co->warmup, .iters = co->iters, .agg_iters = co->agg, .validation = co->check, .graph = co->graph,
                          .blocking = co->blocking,
                          .devices = dev, .ndevices = (size_t)sys.nranks, .rows = rows, .nrows = n,
                          .band_lo = any ? blo : NULL, .band_hi = any ? bhi : NULL, .band_note = any ? note->str : NULL, .setup_log = setup_log,
                          .row_log = (const char *const *)row_log, .row_id = n > nreq ? row_id : NULL};
    if (!strcmp(fmt, "csv"))
        nccltests_write_csv(stdout, &sw);
    else if (!strcmp(fmt, "json"))
        nccltests_write_json(stdout, &sw);
    else
        nccltests_write(stdout, &sw);
    if (co->explain) /* comment lines: in the text, beside CSV or JSON on stderr */
        simsweep_print_explain(strcmp(fmt, "text") ? stderr : stdout, rows, ex, n, kind, sys.nranks, blo, bhi, regime);
    if (co->plot) {
        char *title = g_strdup_printf("%s on %s: %d GPUs (%d node%s), conveyor", coll_kind_name(kind), t->name,
                                      sys.nranks, sys.nnodes, sys.nnodes > 1 ? "s" : "");
        rc = collplot_sweep(co->plot, title, rows, n, ex, any ? blo : NULL, any ? bhi : NULL);
        g_free(title);
    }
    if (rc == EXIT_OK && co->timeline &&
        !write_timeline(co->timeline, &sys, kind, sizes[n - 1] * (uint64_t)co->agg, &ex[n - 1], &err))
        rc = cli_fail(err);
    g_free(blo);
    g_free(bhi);
    g_free(regime);
    g_string_free(note, TRUE);
    g_free(prefix);
    g_free(setup_log);
    if (row_log)
        for (size_t i = 0; i < n; i++)
            g_free(row_log[i]);
    g_free(row_log);
    g_strfreev(hosts);
    g_free(dev);
    g_free(gname);
out:
    g_free(sizes);
    g_free(rows);
    g_free(ex);
    g_free(row_id);
    topo_free(t);
    return rc;
}

int cmd_collective(int argc, char **argv)
{
    coll_opts co = {.factor = 0, .iters = 20, .warmup = 1, .nthreads = 1, .check = 1, .agg = 1, .average = 1};
    sys_opts so = {.gpus_per_thread = 1, .no_topo_short = TRUE}; /* nccl-tests' -g default (0 given is an error below); -t is threads */
    GOptionEntry e[] = {
        {"op", 0, 0, G_OPTION_ARG_STRING, &co.op, "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv, gather, scatter", "OP"},
        {"minbytes", 'b', 0, G_OPTION_ARG_STRING, &co.minb, "smallest size (K/M/G suffixes) [32M]", "SIZE"},
        {"maxbytes", 'e', 0, G_OPTION_ARG_STRING, &co.maxb, "largest size [32M]", "SIZE"},
        {"stepfactor", 'f', 0, G_OPTION_ARG_INT, &co.factor, "multiply the size by F each step", "F"},
        {"stepbytes", 'i', 0, G_OPTION_ARG_STRING, &co.stepb, "add this many bytes each step [1M]", "SIZE"},
        {"datatype", 'd', 0, G_OPTION_ARG_STRING, &co.dtype, "element type, or all (one table over nccl-tests' types) [float]", "TYPE"},
        {"op-reduce", 'o', 0, G_OPTION_ARG_STRING, &co.redop, "reduction: sum, prod, min, max, avg, or all [sum]", "OP"},
        {"ngpus", 'g', 0, G_OPTION_ARG_INT, &so.gpus_per_thread, "GPUs driven by one host thread, as nccl-tests -g [1]", "G"},
        {"iters", 'n', 0, G_OPTION_ARG_INT, &co.iters, "printed in the header only (the simulation has no noise) [20]", "N"},
        {"warmup_iters", 'w', 0, G_OPTION_ARG_INT, &co.warmup, "printed in the header only [1]", "N"},
        {"root", 'r', 0, G_OPTION_ARG_INT, &co.root, "root rank of broadcast and reduce, as nccl-tests -r (-1: every root in turn) [0]", "R"},
        {"nthreads", 't', 0, G_OPTION_ARG_INT, &co.nthreads, "host threads per process, as nccl-tests -t: printed; "
         "each drives -g GPUs, launched in parallel with the other threads' [1]", "T"},
        {"check", 'c', 0, G_OPTION_ARG_INT, &co.check, "printed in the header (validation: N); 0 prints #wrong as N/A, as nccl-tests [1]", "N"},
        {"agg_iters", 'm', 0, G_OPTION_ARG_INT, &co.agg, "operations per iteration, in one NCCL group (run as NCCL aggregates them: one collective of M x the size, a 1/M share each; not for alltoall, sendrecv, gather, scatter) [1]", "M"},
        {"blocking", 'z', 0, G_OPTION_ARG_INT, &co.blocking, "0 or 1, as nccl-tests -z: the host launch is charged "
         "to every collective either way [0]", "Z"},
        {"average", 'a', 0, G_OPTION_ARG_INT, &co.average, "0-3 (rank 0, mean, min, max over ranks), as nccl-tests -a: "
         "the simulated ranks finish together, so all give the same time [1]", "A"},
        {"cudagraph", 'G', 0, G_OPTION_ARG_INT, &co.graph, "CUDA graph launches, as nccl-tests -G: above 0 the calls run from a graph, without a host launch each [0]", "N"},
        {"algo", 0, 0, G_OPTION_ARG_STRING, &co.algo, "force algorithms, NCCL_ALGO syntax (e.g. ring, ^nvls)", "LIST"},
        {"proto", 0, 0, G_OPTION_ARG_STRING, &co.proto, "force protocols, NCCL_PROTO syntax (LL, LL128, Simple)", "LIST"},
        {"format", 0, 0, G_OPTION_ARG_STRING, &co.format, "text (nccl-tests), csv or json [text]", "FMT"},
        {"explain", 0, 0, G_OPTION_ARG_NONE, &co.explain, "per size: algorithm, protocol, channels, busiest link", NULL},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &co.plot, "busbw against size with the algorithms and the error band (SVG, gnuplot; - for stdout)", "FILE"},
        {"timeline", 0, 0, G_OPTION_ARG_FILENAME, &co.timeline, "Chrome/Perfetto trace of the largest size: its span and the 64 busiest links' chunks (- for stdout)", "FILE"},
        {0},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("- simulate an nccl-tests sweep");
    g_option_context_set_description(ctx, SYS_ENV_HELP);
    g_option_context_add_main_entries(ctx, e, NULL);
    g_option_context_add_group(ctx, sys_opts_group(&so));
    int rc = cli_parse(ctx, "collective", &argc, &argv) ? EXIT_OK : EXIT_BADINPUT;
    if (rc == EXIT_OK && !cli_dash_output("collective", (const char *[]){co.plot, co.timeline}, 2))
        rc = EXIT_BADINPUT;
    if (rc == EXIT_OK && argc > 1) {
        fprintf(stderr, "conveyor collective: unexpected argument '%s'\n", argv[1]);
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && (so.gpus_per_thread < 1 || so.gpus_per_thread > 1024)) {
        fprintf(stderr, "conveyor collective: -g must be in 1..1024\n");
        rc = EXIT_BADINPUT;
    }
    /* nccl-tests: -f multiplies when > 1, else sizes step by -i; -n, -w, -c are counts */
    if (rc == EXIT_OK && (co.factor < 0 || co.iters < 0 || co.warmup < 0 || co.check < 0)) {
        fprintf(stderr, "conveyor collective: -f, -n, -w and -c must be >= 0\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && (co.nthreads < 1 || co.nthreads > 1024 || co.root < -1 || co.blocking < 0 ||
                          co.blocking > 1 || co.average < 0 || co.average > 3)) {
        fprintf(stderr, "conveyor collective: -t must be in 1..1024, -r >= -1 (-1: every root), -z 0 or 1, -a 0..3\n");
        rc = EXIT_BADINPUT;
    }
    /* -G: the calls run from a CUDA graph, no host launch each (simsweep_launch); -m
     * (one group of m) runs as NCCL's planner aggregates it (simsweep_agg_ok) */
    if (rc == EXIT_OK && (co.graph < 0 || co.graph > 1000000)) {
        fprintf(stderr, "conveyor collective: -G must be in 0..1000000\n");
        rc = EXIT_BADINPUT;
    }
    coll_kind agk;
    if (rc == EXIT_OK && (co.agg < 1 || co.agg > 1024)) {
        fprintf(stderr, "conveyor collective: -m must be in 1..1024\n");
        rc = EXIT_BADINPUT;
    } else if (rc == EXIT_OK && co.agg > 1 && coll_kind_from_name(co.op ? co.op : "all_reduce", &agk) == 0 &&
               !simsweep_agg_ok(agk)) {
        fprintf(stderr, "conveyor collective: -m other than 1 is not modelled for %s (NCCL runs a group of sends "
                        "and receives otherwise than one of collectives); use -m 1\n", co.op);
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK)
        rc = run_sweep(&co, &so);
    g_free(co.op); g_free(co.minb); g_free(co.maxb); g_free(co.stepb); g_free(co.dtype);
    g_free(co.redop); g_free(co.algo); g_free(co.proto); g_free(co.format); g_free(co.plot);
    g_free(co.timeline);
    sys_opts_clear(&so);
    return rc;
}

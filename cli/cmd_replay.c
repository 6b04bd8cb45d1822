/* cli/cmd_replay.c - `conveyor replay`: run a training job's trace on a
 * simulated cluster and say where the time goes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bands.h"
#include "cli.h"
#include "progress.h"
#include "commands.h"
#include "models/replay.h"
#include "ncclgraph.h"
#include "sysbuild.h"
#include "topologies/accuracy.h"
#include "traces/nccllog.h"
#include "traces/timeline.h"
#include "traceload.h"

static double ms(int64_t ps) { return (double)ps * 1e-9; }

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    fab_link_id l;
    int64_t busy;
} lbusy;

static int lbusy_cmp(const void *a, const void *b)
{
    const lbusy *x = a, *y = b;
    if (x->busy != y->busy)
        return (x->busy < y->busy) - (x->busy > y->busy);
    return (x->l > y->l) - (x->l < y->l);
}

/* The n busiest graph links (caller g_free's). */
static lbusy *busiest(fabric *f, int n, int *got)
{
    uint32_t nl = fabric_link_count(f);
    lbusy *b = g_new(lbusy, nl ? nl : 1);
    uint32_t k = 0;
    for (uint32_t l = 0; l < nl; l++)
        if (fabric_link(f, l)->kind != LINK_SERVER && fabric_link_stats(f, l)->busy_ps > 0)
            b[k++] = (lbusy){l, fabric_link_stats(f, l)->busy_ps};
    qsort(b, k, sizeof *b, lbusy_cmp);
    *got = (int)k < n ? (int)k : n;
    return b;
}

/* Median and worst |error| of simulated vs traced collective durations. */
static int coll_errors(const replay_result *res, double *med, double *worst)
{
    GArray *e = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < res->colls->len; i++) {
        const replay_coll *c = &g_array_index(res->colls, replay_coll, i);
        if (c->traced_ps > 0 && c->sim_ps > 0) {
            double v = fabs((double)c->sim_ps - (double)c->traced_ps) / (double)c->traced_ps * 100;
            g_array_append_val(e, v);
        }
    }
    int n = (int)e->len;
    if (n) {
        g_array_sort(e, dbl_cmp);
        *med = g_array_index(e, double, (n - 1) / 2);
        *worst = g_array_index(e, double, n - 1);
    }
    g_array_free(e, TRUE);
    return n;
}

/* One shape of collective (op, size, group) with traced durations. */
typedef struct {
    coll_kind op;
    bool uneven;               /* an uneven alltoall: "alltoallv" */
    uint64_t bytes;
    int group_size, group_nodes;
    GArray *traced, *sim;      /* double, us */
    double total_us, med_traced_us, med_sim_us; /* filled once collected */
} coll_shape;

static double median_us(GArray *a)
{
    g_array_sort(a, dbl_cmp);
    guint n = a->len;
    return n % 2 ? g_array_index(a, double, n / 2)
                 : (g_array_index(a, double, n / 2 - 1) + g_array_index(a, double, n / 2)) / 2;
}

static gint shape_cmp(gconstpointer x, gconstpointer y) /* most traced time first, then by shape */
{
    const coll_shape *a = x, *b = y;
    if (a->total_us != b->total_us)
        return a->total_us < b->total_us ? 1 : -1;
    if (a->op != b->op)
        return (int)a->op - (int)b->op;
    if (a->uneven != b->uneven)
        return (int)a->uneven - (int)b->uneven;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? -1 : 1;
    return a->group_size != b->group_size ? a->group_size - b->group_size : a->group_nodes - b->group_nodes;
}

/* The collectives with a traced duration, by shape: how many, the traced and
 * the simulated median, the error; the ten with the most traced time. */
static void print_shapes(const replay_result *res)
{
    GArray *sh = g_array_new(FALSE, FALSE, sizeof(coll_shape));
    GHashTable *at = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
    for (guint i = 0; i < res->colls->len; i++) {
        const replay_coll *c = &g_array_index(res->colls, replay_coll, i);
        if (c->traced_ps <= 0 || c->sim_ps <= 0)
            continue;
        struct { int64_t op, size, nodes, uneven; uint64_t bytes; } k = {c->op, c->group_size, c->group_nodes,
                                                                        c->uneven, c->bytes};
        GBytes *key = g_bytes_new(&k, sizeof k);
        gpointer v;
        if (!g_hash_table_lookup_extended(at, key, NULL, &v)) {
            coll_shape n = {.op = c->op, .uneven = c->uneven, .bytes = c->bytes, .group_size = c->group_size,
                            .group_nodes = c->group_nodes, .traced = g_array_new(FALSE, FALSE, sizeof(double)),
                            .sim = g_array_new(FALSE, FALSE, sizeof(double))};
            g_array_append_val(sh, n);
            v = GUINT_TO_POINTER(sh->len); /* index + 1 */
            g_hash_table_insert(at, g_bytes_ref(key), v);
        }
        g_bytes_unref(key);
        coll_shape *x = &g_array_index(sh, coll_shape, GPOINTER_TO_UINT(v) - 1);
        double t = (double)c->traced_ps / 1e6, m = (double)c->sim_ps / 1e6;
        g_array_append_val(x->traced, t);
        g_array_append_val(x->sim, m);
        x->total_us += t;
    }
    g_hash_table_destroy(at);
    for (guint j = 0; j < sh->len; j++) {
        coll_shape *x = &g_array_index(sh, coll_shape, j);
        x->med_traced_us = median_us(x->traced);
        x->med_sim_us = median_us(x->sim);
    }
    if (sh->len) {
        g_array_sort(sh, shape_cmp);
        printf("\ncollectives against their traced durations (median per shape; the ten with the most traced time):\n");
        printf("  %-16s %14s %6s %6s %6s %12s %12s %8s\n", "op", "bytes", "ranks", "nodes", "count", "traced_us",
               "simulated_us", "error");
        for (guint j = 0; j < sh->len && j < 10; j++) {
            const coll_shape *x = &g_array_index(sh, coll_shape, j);
            double t = x->med_traced_us, m = x->med_sim_us;
            printf("  %-16s %14" G_GUINT64_FORMAT " %6d %6d %6u %12.1f %12.1f %+7.1f%%\n",
                   x->uneven ? "alltoallv" : coll_kind_name(x->op),
                   x->bytes, x->group_size, x->group_nodes, x->traced->len, t, m, cli_no_neg_zero(100 * (m - t) / t, 1));
        }
        if (sh->len > 10)
            printf("  (%u more shapes)\n", sh->len - 10);
    }
    for (guint j = 0; j < sh->len; j++) {
        g_array_free(g_array_index(sh, coll_shape, j).traced, TRUE);
        g_array_free(g_array_index(sh, coll_shape, j).sim, TRUE);
    }
    g_array_free(sh, TRUE);
}

/* What the step band adds where its collectives cross a network between
 * servers without NVLink (acc_regime_label's "unmeasured"). */
static const char *unmeasured_note(bool unmeasured)
{
    return unmeasured ? "; network between PCIe servers: unmeasured" : "";
}

static void print_text(const trace *t, const topo *tp, const replay_result *res, fabric *f,
                       const coll_system *sys)
{
    printf("# replay: %s (%d ranks, %zu ops) on %s (%d node%s x %d GPU%s)\n", t->source, t->nranks,
           trace_op_count(t), tp->name, tp->nodes, tp->nodes == 1 ? "" : "s", tp->gpus_per_node,
           tp->gpus_per_node == 1 ? "" : "s");
    int steps = t->steps > 0 ? t->steps : 1;
    int64_t step = res->end_ps / steps;
    if (t->steps > 1)
        printf("total time: %.3f ms over %d steps\n", ms(res->end_ps), t->steps);
    printf("step time: %.3f ms", ms(step));
    if (t->step_ps > 0)
        printf("  (traced %.3f ms, error %+.1f%%)", ms(t->step_ps),
               cli_no_neg_zero(100.0 * ((double)step - (double)t->step_ps) / (double)t->step_ps, 1));
    double blo, bhi, bex;
    bool unmeasured;
    if (cli_replay_step_band(res, sys, steps, &blo, &bhi, &bex, NULL, &unmeasured))
        printf("\nstep time 80%%: %.3f-%.3f ms (the exposed communication, %.3f ms per step on the rank that "
               "exposes the most, at its collectives' validation bands, %s%s; compute as given; docs/traces.md)",
               blo * 1e3, bhi * 1e3, bex * 1e3, acc_coll_band_kind(),
               unmeasured_note(unmeasured));
    printf("\n\n%6s %12s %12s %12s %14s %12s %14s %14s\n", "rank", "compute_ms", "comm_ms", "exposed_ms",
           "exposed_net_ms", "idle_ms", "wait_peers_ms", "wait_stream_ms");
    int64_t w1 = 0, w2 = 0;
    for (int r = 0; r < res->nranks; r++) {
        const replay_rank *rr = &res->ranks[r];
        w1 += rr->wait_peers_ps;
        w2 += rr->wait_stream_ps;
        if (r < 16 || r == res->nranks - 1)
            printf("%6d %12.3f %12.3f %12.3f %14.3f %12.3f %14.3f %14.3f\n", r, ms(rr->compute_ps), ms(rr->comm_ps),
                   ms(rr->exposed_comm_ps), ms(rr->exposed_net_ps), ms(rr->idle_ps), ms(rr->wait_peers_ps),
                   ms(rr->wait_stream_ps));
        else if (r == 16)
            printf("%6s\n", "...");
    }
    double med = 0, worst = 0;
    int n = coll_errors(res, &med, &worst);
    printf("\ncollectives: %u", res->colls->len);
    if (res->memo_runs)
        printf(" (%" G_GUINT64_FORMAT " distinct, each simulated once alone; %" G_GUINT64_FORMAT
               " reused that time, the rest ran on the shared fabric; %" G_GUINT64_FORMAT
               " shared links with other reused ones, in proportion to their loads: --exact for chunk by chunk)",
               res->memo_runs, res->memo_hits, res->memo_overlaps);
    else
        printf(" simulated");
    guint fused = 0;
    for (guint i = 0; i < res->colls->len; i++)
        fused += g_array_index(res->colls, replay_coll, i).fused;
    if (fused)
        printf("; %u launched in one kernel with the collective before them (one NCCL group: no host launch)",
               fused);
    if (res->empty_colls)
        printf("; %" G_GUINT64_FORMAT " calls of 0 bytes done at once (NCCL discards them: no launch, no wait "
               "for peers)", res->empty_colls);
    if (res->p2p_memo_runs)
        printf("; sends/receives: %" G_GUINT64_FORMAT " reused the time of one of %" G_GUINT64_FORMAT
               " distinct ones simulated alone", res->p2p_memo_hits, res->p2p_memo_runs);
    if (n)
        printf("; against the %d traced kernel durations: median |error| %.1f%%, worst %.1f%%", n, med, worst);
    printf("\nqueueing delay (all ranks): layer 1 collective queue (waiting for peers) %.3f ms, "
           "layer 2 stream queue %.3f ms, layer 3 link queues %.3f ms (chunk waiting time, summed over chunks)\n",
           ms(w1), ms(w2), ms(res->link_qdelay_ps));
    print_shapes(res);
    if (res->compute_by_name && res->compute_by_name->len) {
        int64_t tot = 0;
        for (guint i = 0; i < res->compute_by_name->len; i++)
            tot += g_array_index(res->compute_by_name, replay_exposed, i).ps;
        printf("\ncompute by operation (mean per rank; a stretch with several running is shared):\n");
        printf("  %-32s %12s %7s\n", "name", "compute_ms", "share");
        guint n = res->compute_by_name->len;
        for (guint i = 0; i < n && i < 10; i++) {
            const replay_exposed *x = &g_array_index(res->compute_by_name, replay_exposed, i);
            printf("  %-32s %12.3f %6.1f%%\n", x->name ? x->name : "(unnamed)", ms(x->ps) / res->nranks,
                   tot ? 100.0 * (double)x->ps / (double)tot : 0.0);
        }
        if (n > 10)
            printf("  (%u more names)\n", n - 10);
    }
    if (res->exposed_by_name && res->exposed_by_name->len) {
        int64_t tot = 0;
        for (guint i = 0; i < res->exposed_by_name->len; i++)
            tot += g_array_index(res->exposed_by_name, replay_exposed, i).ps;
        printf("\nexposed communication by operation (mean per rank; a stretch with several in flight is shared):\n");
        printf("  %-32s %12s %7s %12s\n", "name", "exposed_ms", "share", "on_net_ms");
        guint n = res->exposed_by_name->len;
        for (guint i = 0; i < n && i < 10; i++) {
            const replay_exposed *x = &g_array_index(res->exposed_by_name, replay_exposed, i);
            printf("  %-32s %12.3f %6.1f%% %12.3f\n", x->name ? x->name : "(unnamed)", ms(x->ps) / res->nranks,
                   tot ? 100.0 * (double)x->ps / (double)tot : 0.0, ms(x->net_ps) / res->nranks);
        }
        if (n > 10)
            printf("  (%u more names)\n", n - 10);
    }
    int nb;
    lbusy *b = busiest(f, 10, &nb);
    printf("\nbusiest links:\n");
    for (int i = 0; i < nb; i++)
        printf("  %-36s %6.1f%%  %10.3f GB moved\n", fabric_link_name(f, b[i].l),
               res->end_ps ? 100.0 * (double)b[i].busy / (double)res->end_ps : 0.0,
               (double)fabric_link_stats(f, b[i].l)->bytes / 1e9);
    g_free(b);
    printf("\nsimulation: %" G_GUINT64_FORMAT " events", res->events);
    if (res->memo_runs)
        printf(" + %" G_GUINT64_FORMAT " in the isolated runs", res->memo_events);
    printf("\n");
}

static void print_json(const trace *t, const replay_result *res, fabric *f, const coll_system *sys)
{
    int steps = t->steps > 0 ? t->steps : 1;
    printf("{\"step_time_s\": %.9g, \"total_time_s\": %.9g, \"steps\": %d, ", res->end_ps * 1e-12 / steps,
           res->end_ps * 1e-12, steps);
    double blo, bhi, bex;
    bool unmeasured;
    if (cli_replay_step_band(res, sys, steps, &blo, &bhi, &bex, NULL, &unmeasured))
        printf("\"step_time_80_s\": [%.9g, %.9g], \"step_time_80_kind\": \"%s%s\", ", blo, bhi, acc_coll_band_kind(),
               unmeasured_note(unmeasured));
    if (t->step_ps > 0)
        printf("\"traced_step_time_s\": %.9g, ", t->step_ps * 1e-12);
    printf("\"ranks\": [");
    for (int r = 0; r < res->nranks; r++) {
        const replay_rank *rr = &res->ranks[r];
        printf("%s\n  {\"rank\": %d, \"compute_s\": %.9g, \"comm_s\": %.9g, \"exposed_comm_s\": %.9g, "
               "\"exposed_net_s\": %.9g, \"idle_s\": %.9g, \"queue_collective_s\": %.9g, \"queue_stream_s\": %.9g}",
               r ? "," : "", r, rr->compute_ps * 1e-12, rr->comm_ps * 1e-12, rr->exposed_comm_ps * 1e-12,
               rr->exposed_net_ps * 1e-12,
               rr->idle_ps * 1e-12, rr->wait_peers_ps * 1e-12, rr->wait_stream_ps * 1e-12);
    }
    printf("],\n\"queue_links_s\": %.9g,\n\"exposed_by_name\": [", res->link_qdelay_ps * 1e-12);
    for (guint i = 0; res->exposed_by_name && i < res->exposed_by_name->len; i++) {
        const replay_exposed *x = &g_array_index(res->exposed_by_name, replay_exposed, i);
        printf("%s\n  {\"name\": ", i ? "," : "");
        timeline_json_str(stdout, x->name);
        printf(", \"exposed_s_per_rank\": %.9g, \"net_s_per_rank\": %.9g}", x->ps * 1e-12 / res->nranks,
               x->net_ps * 1e-12 / res->nranks);
    }
    printf("],\n\"compute_by_name\": [");
    for (guint i = 0; res->compute_by_name && i < res->compute_by_name->len; i++) {
        const replay_exposed *x = &g_array_index(res->compute_by_name, replay_exposed, i);
        printf("%s\n  {\"name\": ", i ? "," : "");
        timeline_json_str(stdout, x->name);
        printf(", \"compute_s_per_rank\": %.9g}", x->ps * 1e-12 / res->nranks);
    }
    printf("],\n\"collectives\": [");
    for (guint i = 0; i < res->colls->len; i++) {
        const replay_coll *c = &g_array_index(res->colls, replay_coll, i);
        printf("%s\n  {\"op\": \"%s\", \"bytes\": %" G_GUINT64_FORMAT ", \"group_size\": %d, \"algo\": \"%s\", "
               "\"proto\": \"%s\", \"start_s\": %.9g, \"simulated_s\": %.9g",
               i ? "," : "", coll_kind_name(c->op), c->bytes, c->group_size, coll_algo_name(c->algo),
               coll_proto_name(c->proto), c->start_ps * 1e-12, c->sim_ps * 1e-12);
        if (c->traced_ps > 0)
            printf(", \"traced_s\": %.9g", c->traced_ps * 1e-12);
        if (c->uneven)
            printf(", \"uneven\": true");
        printf(", \"reused\": %s, \"fused\": %s}", c->reused ? "true" : "false", c->fused ? "true" : "false");
    }
    int nb;
    lbusy *b = busiest(f, 10, &nb);
    printf("],\n\"links\": [");
    for (int i = 0; i < nb; i++)
        printf("%s\n  {\"link\": \"%s\", \"utilisation\": %.6f, \"bytes\": %" G_GUINT64_FORMAT "}", i ? "," : "",
               fabric_link_name(f, b[i].l), res->end_ps ? (double)b[i].busy / (double)res->end_ps : 0.0,
               fabric_link_stats(f, b[i].l)->bytes);
    printf("],\n\"events\": %" G_GUINT64_FORMAT ", \"isolated_runs\": %" G_GUINT64_FORMAT
           ", \"isolated_events\": %" G_GUINT64_FORMAT ", \"reused\": %" G_GUINT64_FORMAT
           ", \"reuse_overlaps\": %" G_GUINT64_FORMAT ", \"p2p_isolated_runs\": %" G_GUINT64_FORMAT
           ", \"p2p_reused\": %" G_GUINT64_FORMAT ", \"empty_calls\": %" G_GUINT64_FORMAT "}\n", res->events,
           res->memo_runs, res->memo_events, res->memo_hits, res->memo_overlaps, res->p2p_memo_runs,
           res->p2p_memo_hits, res->empty_colls);
    g_free(b);
}

typedef struct {
    char *timeline, *format, *algo, *proto;
    gint ranks;
    double compute_scale;
} replay_cli;


/* the progress line: share of the trace's ops done, simulated time, events */
static void replay_progress(void *ctx, double frac, int64_t now_ps, uint64_t events)
{
    cli_progress_show(ctx, false, "%.0f%% of the ops, %.3f ms simulated, %.1f M events", frac * 100,
                      (double)now_ps / 1e9, (double)events / 1e6);
}

/* An NCCL log's TUNING lines (what NCCL chose, per shape) against what
 * conveyor's tuner chose for the same collectives in the replay; counts
 * into *shapes, *same (algorithm and protocol), *same_ch (and channels). */
static void tuner_rows(const trace *t, const replay_result *res, const GArray *tuning, GString *text, int *shapes,
                       int *same, int *same_ch)
{
    *shapes = *same = *same_ch = 0;
    for (guint i = 0; tuning && i < tuning->len; i++) {
        const nccllog_tuning *k = &g_array_index(tuning, nccllog_tuning, i);
        const replay_coll *c = NULL;
        for (guint j = 0; j < res->colls->len && !c; j++) {
            const replay_coll *x = &g_array_index(res->colls, replay_coll, j);
            c = x->op == k->coll && x->bytes == k->bytes && x->group == k->group && x->group_size > 1 ? x : NULL;
        }
        if (!c)
            continue;
        bool match = cli_same_name(k->t.algo, coll_algo_name(c->algo)) && cli_same_name(k->t.proto, coll_proto_name(c->proto));
        ++*shapes;
        *same += match;
        *same_ch += match && k->t.nchannels == c->nchannels;
        char theirs[64], ours[64];
        g_snprintf(theirs, sizeof theirs, "%s/%s/%d", k->t.algo, k->t.proto, k->t.nchannels);
        g_snprintf(ours, sizeof ours, "%s/%s/%d", coll_algo_name(c->algo), coll_proto_name(c->proto), c->nchannels);
        const trace_group *g = g_ptr_array_index(t->groups, k->group);
        g_string_append_printf(text, "# tuner: %-14s %12" G_GUINT64_FORMAT " %6d %6d  %-26s %s%s\n",
                               coll_kind_name(k->coll), k->bytes, g->size, k->calls, theirs, ours,
                               match ? "" : "  (differs)");
    }
}

static void print_tuner(const trace *t, const replay_result *res, const GArray *tuning)
{
    GString *rows = g_string_new(NULL);
    int shapes, same, same_ch;
    tuner_rows(t, res, tuning, rows, &shapes, &same, &same_ch);
    printf("\n# tuner: NCCL's choice in the log (its TUNING lines) against conveyor's, per collective shape\n");
    printf("# tuner: %-14s %12s %6s %6s  %-26s %s\n", "collective", "bytes", "ranks", "calls", "NCCL algo/proto/ch",
           "conveyor algo/proto/ch");
    fputs(rows->str, stdout);
    printf("# tuner: shapes=%d algo_proto_match=%d channels_match=%d\n", shapes, same, same_ch);
    g_string_free(rows, TRUE);
}

static int run_replay(replay_cli *c, sys_opts *so, char **paths, int n)
{
    GError *err = NULL;
    nccllog_extras x = {0};
    trace *t = trace_load_any(paths, n, &x, &err);
    if (!t)
        return cli_fail(err);
    if (c->ranks > 0) {
        trace *r = trace_replicate(t, c->ranks, &err);
        trace_free(t);
        if (!r || !trace_validate(r, &err)) {
            trace_free(r);
            nccllog_extras_clear(&x);
            return cli_fail(err);
        }
        t = r;
    }
    topo *tp = sys_opts_load(so, &err), *tpi = NULL;
    coll_system sys, iso;
    int rc = EXIT_OK;
    if (!tp) {
        rc = cli_fail(err);
        goto out;
    }
    sys_from_topo(&sys, tp, so);
    if (!sys_check_p2p_env(&sys.nccl, tp, &err)) {
        rc = cli_fail(err);
        goto out;
    }
    if (t->nranks % sys.gpus_per_thread) { /* one host thread launches -g of the ranks, as collective's -g */
        fprintf(stderr, "conveyor replay: -g %d does not divide the trace's %d ranks\n", sys.gpus_per_thread,
                t->nranks);
        rc = EXIT_BADINPUT;
        goto out;
    }
    /* repeated collectives run once alone and are reused, unless --exact or
     * a timeline (which needs every chunk on the shared fabric) */
    if (!so->exact && !c->timeline) {
        if (!(tpi = sys_opts_load(so, &err))) {
            rc = cli_fail(err);
            goto out;
        }
        sys_from_topo(&iso, tpi, so);
    }
    replay_opts o = {.sys = &sys, .compute_scale = c->compute_scale, .record = c->timeline != NULL, .by_name = true,
                     .iso = tpi ? &iso : NULL};
    if (!coll_tune_parse_mask(c->algo ? c->algo : g_getenv("NCCL_ALGO"), COLL_ALL_REDUCE, true, &o.algo_mask, &err) ||
        !coll_tune_parse_mask(c->proto ? c->proto : g_getenv("NCCL_PROTO"), COLL_ALL_REDUCE, false, &o.proto_mask, &err)) {
        rc = cli_fail(err);
        goto out;
    }
    replay_result res;
    cli_progress pg;
    cli_progress_start(&pg, "replay");
    o.progress = replay_progress;
    o.progress_ctx = &pg;
    bool ran = replay_run(t, &o, &res, &err);
    cli_progress_end(&pg);
    if (!ran) {
        rc = cli_fail(err);
        goto out;
    }
    if (c->format && !strcmp(c->format, "json")) {
        print_json(t, &res, sys.fab, &sys);
    } else {
        print_text(t, tp, &res, sys.fab, &sys);
        if (x.tuning)
            print_tuner(t, &res, x.tuning);
        /* the rings and trees NCCL built for all the log's ranks (the
         * replay's ranks are the system's GPUs), against the system's */
        bool graphs = (x.rings || x.trees) && t->nranks == sys.nranks;
        if (graphs)
            printf("\n");
        if (graphs && x.rings)
            ncclgraph_print_rings((const nccltests_ring *)(void *)x.rings->data, x.rings->len, &sys);
        if (graphs && x.trees)
            ncclgraph_print_trees((const nccltests_tree *)(void *)x.trees->data, x.trees->len, &sys);
    }
    if (c->timeline && !timeline_write(c->timeline, t, &res, sys.fab, 64, &err))
        rc = cli_fail(err);
    else if (c->timeline && fabric_records_dropped(sys.fab))
        fprintf(stderr, "conveyor replay: %s holds the links' first %u chunks; %" G_GUINT64_FORMAT
                        " later ones are not in it\n",
                c->timeline, FABRIC_MAX_RECORDS, fabric_records_dropped(sys.fab));
    replay_result_clear(&res);
out:
    nccllog_extras_clear(&x);
    topo_free(tpi);
    topo_free(tp);
    trace_free(t);
    return rc;
}

int cmd_replay(int argc, char **argv)
{
    replay_cli c = {.compute_scale = 1.0, .ranks = CLI_UNSET};
    sys_opts so = {.gpus_per_thread = 1}; /* -g 0 given is an error below */
    GOptionEntry e[] = {
        {"ranks", 0, 0, G_OPTION_ARG_INT, &c.ranks, "replicate a one-rank trace to N ranks (SPMD)", "N"},
        {"timeline", 0, 0, G_OPTION_ARG_FILENAME, &c.timeline, "write a Chrome/Perfetto trace of the replay (- for stdout)", "FILE"},
        {"format", 0, 0, G_OPTION_ARG_STRING, &c.format, "text or json [text]", "FMT"},
        {"compute-scale", 0, 0, G_OPTION_ARG_DOUBLE, &c.compute_scale, "multiply compute durations (0.5 = twice as fast) [1]", "X"},
        {"algo", 0, 0, G_OPTION_ARG_STRING, &c.algo, "limit collective algorithms (NCCL_ALGO syntax)", "LIST"},
        {"proto", 0, 0, G_OPTION_ARG_STRING, &c.proto, "limit protocols (NCCL_PROTO syntax)", "LIST"},
        {"ngpus", 'g', 0, G_OPTION_ARG_INT, &so.gpus_per_thread, "GPUs launched by one host thread [1]", "G"},
        {0},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("TRACE... - replay a training job's trace on a simulated cluster");
    g_option_context_set_description(ctx, "TRACE: conveyor's JSON or CSV (several files together), a PyTorch profiler "
                                          "(Kineto) .json[.gz] or a directory of\nper-rank ones, a Chakra .et (file, "
                                          "prefix or directory), a PyTorch Flight Recorder JSON dump or a directory of\n"
                                          "them, an NCCL log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL: every rank's "
                                          "lines in one file, or a\ndirectory of NCCL_DEBUG_FILE logs) "
                                          "(docs/traces.md, docs/traces-importers.md).\n\n" SYS_ENV_HELP);
    g_option_context_add_main_entries(ctx, e, NULL);
    g_option_context_add_group(ctx, sys_opts_group(&so));
    int rc = cli_parse(ctx, "replay", &argc, &argv) ? EXIT_OK : EXIT_BADINPUT;
    if (rc == EXIT_OK && !cli_dash_output("replay", (const char *[]){c.timeline}, 1))
        rc = EXIT_BADINPUT;
    if (rc == EXIT_OK && argc < 2) {
        fprintf(stderr, "conveyor replay: give a trace (native .json/.csv, Kineto .json[.gz] or directory, Chakra .et, "
                        "Flight Recorder dump or directory)\n");
        rc = EXIT_BADINPUT;
    }
    bool ranks_bad = c.ranks != CLI_UNSET && (c.ranks < 1 || c.ranks > 1048576);
    c.ranks = c.ranks == CLI_UNSET ? 0 : c.ranks; /* 0: as the trace has them */
    if (rc == EXIT_OK && (!(c.compute_scale > 0) || c.compute_scale > 1e6 || ranks_bad)) {
        fprintf(stderr, "conveyor replay: --compute-scale must be in (0, 1e6] and --ranks in 1..1048576\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && (so.gpus_per_thread < 1 || so.gpus_per_thread > 1024)) {
        fprintf(stderr, "conveyor replay: -g must be in 1..1024\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && c.format && strcmp(c.format, "text") && strcmp(c.format, "json")) {
        fprintf(stderr, "conveyor replay: --format must be text or json\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK)
        rc = run_replay(&c, &so, argv + 1, argc - 1);
    g_free(c.timeline);
    g_free(c.format);
    g_free(c.algo);
    g_free(c.proto);
    sys_opts_clear(&so);
    return rc;
}

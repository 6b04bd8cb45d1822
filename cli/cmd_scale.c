/* cli/cmd_scale.c - `conveyor scale`: the scaling study. For each system
 * and size, choose the parallel layout (given, or the rule in
 * docs/scaling.md), generate one training step (traces/workload.c), replay
 * it chunk by chunk on the built cluster (models/replay.c) and report step
 * time, tokens/s, TFLOP/s per GPU, MFU, speedup and efficiency against the
 * system's smallest size, and the exposed-communication share.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gnuplot.h"
#include "commands.h"
#include "sysbuild.h"
#include "models/replay.h"
#include "topologies/accuracy.h"
#include "traces/timeline.h"
#include "wlopts.h"
#include "megatron_args.h"

#define MAX_POINTS 256
#define GIB 1073741824.0
#define OP_BUDGET 4e6 /* trace ops above which layers are fused (replay memory and time) */

typedef struct {
    char *system, *fabric;
    int gpus;
} point;

typedef struct {
    point p;
    workload_spec w;
    wl_step st;      /* the replayed step (its name lists owned; --breakdown) */
    double speedup, eff;
    int base_gpus;   /* the system's smallest size that ran: speedup's and efficiency's base */
    double hbm;      /* the GPU's memory, bytes (the layout's limit: 90% of it) */
    int domain;      /* GPUs in one NVLink domain (1 without NVLink) */
    int tried;       /* --auto: layouts simulated for this point */
    int fitting;     /* --auto: layouts that fit (tried is at most the cap of them) */
    bool fits, ok;
} result;

typedef struct {
    char *systems, *gpus_s, *format, *plot, *timeline;
    gint tp, pp, max_gpus;
    gboolean exact, autolayout, breakdown;
} scale_cli;

static gboolean bad_sizes(const char *s, GError **err)
{
    g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, "bad sizes '%s': expected A..B (doubling) or A/B/C", s);
    return FALSE;
}

/* SIZES: "A..B" (doubling from A to B) or "A/B/C". */
static gboolean parse_sizes(const char *s, GArray *out, GError **err)
{
    char *dots = strstr(s, "..");
    if (dots) {
        char *ea, *eb;
        long a = strtol(s, &ea, 10), b = strtol(dots + 2, &eb, 10);
        if (ea != dots || *eb || a < 1 || b < a || b > 1048576) /* ("8x..16", "8..16x" were read as 8..16) */
            return bad_sizes(s, err);
        for (long n = a; n <= b; n *= 2) {
            int v = (int)n;
            g_array_append_val(out, v);
        }
        return TRUE;
    }
    g_auto(GStrv) parts = g_strsplit_set(s, "/,", -1);
    for (char **p = parts; *p; p++) {
        char *end;
        long v = strtol(*p, &end, 10);
        if (end == *p || *end || v < 1 || v > 1048576)
            return bad_sizes(s, err);
        int n = (int)v;
        g_array_append_val(out, n);
    }
    return out->len > 0 ? TRUE : bad_sizes(s, err);
}

/* --systems NAME[@FABRIC][:SIZES],... with --gpus for items without sizes;
 * NAME:FABRIC[:SIZES] too (the form the issue and PRODUCT.md write): a
 * field after a colon that does not start with a digit names the fabric. */
static int parse_points(const scale_cli *c, point *pts, GError **err)
{
    g_autoptr(GArray) dflt = g_array_new(FALSE, FALSE, sizeof(int));
    if (!parse_sizes(c->gpus_s ? c->gpus_s : "8..64", dflt, err))
        return -1;
    g_auto(GStrv) items = g_strsplit(c->systems ? c->systems : "dgx-h100", ",", -1);
    int n = 0;
    for (char **it = items; *it; it++) {
        if (!**it)
            continue;
        g_autofree char *name = g_strdup(*it);
        char *colon = strchr(name, ':'), *at = NULL, *sz = NULL;
        g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(int));
        if (colon) {
            *colon++ = 0;
            char *next = strchr(colon, ':');
            if (!*colon) {
                g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE,
                            "'%s': nothing after ':' (expected FABRIC or SIZES)", *it);
                goto fail;
            }
            if (!g_ascii_isdigit(*colon)) { /* NAME:FABRIC[:SIZES] */
                if (next)
                    *next++ = 0;
                at = colon;
                sz = next;
            } else {
                sz = colon;
            }
        }
        if (sz && !parse_sizes(sz, sizes, err))
            goto fail;
        char *at2 = strchr(name, '@');
        if (at2) {
            if (at) {
                g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE,
                            "'%s': two fabrics (NAME@FABRIC or NAME:FABRIC, not both)", *it);
                goto fail;
            }
            *at2++ = 0;
            at = at2;
        }
        if (at && !*at) {
            g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, "'%s': empty fabric name", *it);
            goto fail;
        }
        for (const char *ch = *it; *ch; ch++)
            if (*ch == '"' || (unsigned char)*ch < 0x20) { /* the CSV and text rows print names as they are */
                g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, "'%s': a system or fabric name with a quote or "
                            "a control character", *it);
                goto fail;
            }
        GArray *use = sz ? sizes : dflt;
        for (guint k = 0; k < use->len; k++) {
            if (n == MAX_POINTS) {
                g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, "more than %d points", MAX_POINTS);
                goto fail;
            }
            point q = {g_strdup(name), at ? g_strdup(at) : NULL, g_array_index(use, int, k)};
            for (int j = 0; j < n; j++)
                if (pts[j].gpus == q.gpus && !strcmp(pts[j].system, q.system) && !g_strcmp0(pts[j].fabric, q.fabric)) {
                    g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, "'%s': %d GPUs of %s%s%s given twice", *it,
                                q.gpus, q.system, q.fabric ? "@" : "", q.fabric ? q.fabric : "");
                    g_free(q.system);
                    g_free(q.fabric);
                    goto fail;
                }
            pts[n++] = q;
        }
    }
    return n;
fail: /* the points made so far */
    for (int j = 0; j < n; j++) {
        g_free(pts[j].system);
        g_free(pts[j].fabric);
    }
    return -1;
}

static int pow2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* Whether w's schedule allows pp pipeline stages: under interleaved:V at
 * least 2, and a layer per model chunk (workload_spec_check's rule). */
static bool schedule_allows(const workload_spec *w, int pp)
{
    if (w->pp_layout) /* its virtual stages over pp (wl_opts_spec set vpp); chunks may be empty */
        return (long)pp * w->vpp == workload_layout_get(w->pp_layout, NULL)->n;
    return w->vpp <= 1 || (pp >= 2 && w->m.layers >= pp * w->vpp);
}

/* Whether tp x pp x cp GPUs per data-parallel replica tile n GPUs with EP
 * inside the data-parallel ranks (dp a multiple of ep; !fold), or with EP
 * folded over a stage's tp x cp x dp ranks as Megatron's MoE parallel
 * folding allows (fold; workload_spec_check). */
static bool layout_tiles(const workload_spec *w, int n, int tp, int pp, bool fold)
{
    long rep = (long)tp * pp * MAX(w->cp, 1);
    return n % rep == 0 && (fold ? n / pp : n / rep) % ((long)MAX(w->ep, 1) * MAX(w->etp, 1)) == 0;
}

/* Whether tp splits the model's heads, KV heads and FFN. */
static bool tp_splits(const workload_spec *w, int tp)
{
    return w->m.heads % tp == 0 && w->m.kv_heads % tp == 0 && w->m.ffn % tp == 0;
}

/* choose_layout's search with EP inside DP (!fold) or folded over TP, CP
 * and DP (fold): the layout in w (tp 0 if none), and whether it fits. */
static bool rule_layout(const scale_cli *c, workload_spec *w, const topo *t, const gpu_model *g, bool fold)
{
    int n = w->gpus, domain = (t->nvswitch || t->nvlink_links > 0) ? t->gpus_per_node * t->nvl_domain_nodes : 1;
    int cp = MAX(w->cp, 1);
    w->tp = w->pp = 0;
    for (int tp = c->tp > 0 ? c->tp : pow2_floor(MIN(MIN(8, domain), n)); tp >= 1; tp /= 2) {
        if (c->tp <= 0 && !tp_splits(w, tp))
            continue;
        int best = 0;
        for (int pp = 1; pp <= MAX(w->m.layers, c->pp) && (long)pp * tp * cp <= n; pp++) {
            if ((c->pp > 0 && pp != c->pp) || !layout_tiles(w, n, tp, pp, fold) || !schedule_allows(w, pp))
                continue;
            w->tp = tp;
            w->pp = pp;
            w->dp = n / (tp * pp * cp);
            best = pp;
            if (workload_memory_bytes(w) <= 0.9 * g->spec.mem_bytes)
                return true;
        }
        if (best) { /* nothing fits: the largest PP tried, flagged */
            w->pp = best;
            w->dp = n / (tp * best * cp);
            return false;
        }
        if (c->tp > 0)
            return false;
    }
    return false;
}

/* The layout rule (docs/scaling.md): TP = the largest power of two <= 8,
 * the NVLink domain and N dividing heads, KV heads and FFN for which some
 * PP is possible; PP = the smallest divisor of N/(TP x CP), at most the
 * layers, whose memory estimate fits 90% of HBM (stages uneven when PP does
 * not divide the layers: workload_stage_layers; with interleaved:V, pp >= 2
 * and pp*V at most the layers, model chunks uneven as stages are:
 * workload_chunk_layers); DP = the rest, a multiple of EP. Where no such
 * layout fits (or none exists), the same search with EP folded over TP x CP x
 * DP (Megatron's MoE parallel folding), kept if it fits or the first found
 * nothing. --tp/--pp pin theirs (a pinned PP or an interleaved schedule can
 * lower the rule's TP). Without any layout, w keeps tp/pp 0 (plan reports it). */
static void choose_layout(const scale_cli *c, workload_spec *w, const topo *t, const gpu_model *g, bool *fits)
{
    *fits = rule_layout(c, w, t, g, false);
    if (*fits || (long)MAX(w->ep, 1) * MAX(w->etp, 1) == 1)
        return;
    workload_spec folded = *w;
    bool fits2 = rule_layout(c, &folded, t, g, true);
    if (fits2 || !w->tp) {
        *w = folded;
        *fits = fits2;
    }
}

static long gcd(long a, long b)
{
    while (b) {
        long r = a % b;
        a = b;
        b = r;
    }
    return a;
}

static long lcm(long a, long b)
{
    return a / gcd(a, b) * b;
}

static bool run_point(const wl_opts *o, bool exact, result *R, GError **err)
{
    R->ok = wl_step_run(o, R->p.system, R->p.fabric, &R->w, exact, &R->st, err);
    return R->ok;
}

/* The layers of the longest model chunk (a stage, or a chunk of one under
 * interleaving), and whether every chunk has that many. */
static int chunk_layers(const workload_spec *w, bool *even)
{
    int hi = 0, lo = 1 << 30;
    for (int s = 0; s < w->pp; s++)
        for (int c = 0; c < MAX(w->vpp, 1); c++) {
            int n = workload_chunk_layers(w, s, c, NULL);
            hi = MAX(hi, n);
            lo = MIN(lo, n);
        }
    *even = hi == lo;
    return hi;
}

/* Fuse layers into one op until the trace fits the budget: divisors of the
 * chunk length when the chunks are equal (every op the same), any size when
 * uneven (the last group of a chunk takes the rest). */
static void fit_ops(const wl_opts *o, workload_spec *w)
{
    bool even;
    int lps = chunk_layers(w, &even);
    w->layer_fuse = o->layer_fuse > 0 ? o->layer_fuse : 1;
    workload_spec fusable = *w; /* per-parameter ZeRO-3 gathers are never fused: not counted here */
    fusable.zero3_param_sync = false;
    while (o->layer_fuse <= 0 && workload_op_estimate(&fusable) > OP_BUDGET) {
        int f = w->layer_fuse + 1;
        while (even && f <= lps && lps % f)
            f++;
        if (f > lps)
            break;
        w->layer_fuse = fusable.layer_fuse = f;
    }
}

/* Layouts, a common global batch (strong scaling), layer fusion. */
static bool auto_ep(const wl_opts *o, const workload_spec *w);

static bool plan(const wl_opts *o, const scale_cli *c, result *R, int n, GError **err)
{
    long l = 1;
    int maxpp = 1, mindp = 1 << 30;
    for (int i = 0; i < n; i++) {
        g_auto(GStrv) sets = wl_opts_topo_sets(o);
        topo_opts to = {.fabric = R[i].p.fabric ? R[i].p.fabric : o->fabric, .sets = (const char *const *)sets};
        topo *t = topo_load(R[i].p.system, &to, err);
        gpu_model g;
        if (!t || !wl_opts_gpu(o, t, &g, err)) {
            topo_free(t);
            return false;
        }
        if (!wl_opts_spec(o, &R[i].w, err)) {
            topo_free(t);
            return false;
        }
        R[i].w.gpus = R[i].p.gpus;
        wl_opts_system(t, &g, &R[i].w); /* fp8's layouts in the memory estimate, flex's domains */
        /* the batch is chosen after the layouts (below): until then the memory estimate takes a
         * full pipeline, unless --global-batch is given (workload_spec_defaults' batch, made for
         * one replica, left 1 / (mb dp) = 0 microbatches per pipeline: no activations counted) */
        R[i].w.global_batch = o->global_batch;
        choose_layout(c, &R[i].w, t, &g, &R[i].fits);
        if (!R[i].w.tp) {
            g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_LAYOUT,
                        "%s with %d GPUs: no layout%s%.0d%s%.0d%s%.0d (tp x pp x cp must divide the GPUs, tp divide "
                        "the heads, KV heads and FFN, pp at most the layers, and tp x cp x dp a multiple of ep x etp%s)",
                        R[i].p.system, R[i].p.gpus, c->tp > 0 ? " with tp " : "", c->tp,
                        c->pp > 0 ? (c->tp > 0 ? " pp " : " with pp ") : "", c->pp,
                        R[i].w.cp > 1 ? (c->tp > 0 || c->pp > 0 ? " cp " : " with cp ") : "", R[i].w.cp > 1 ? R[i].w.cp : 0,
                        R[i].w.vpp > 1 ? "; under interleaved:V, pp at least 2 and at most layers / V" : "");
            topo_free(t);
            return false;
        }
        R[i].hbm = g.spec.mem_bytes;
        R[i].domain = (t->nvswitch || t->nvlink_links > 0) ? t->gpus_per_node * t->nvl_domain_nodes : 1;
        topo_free(t);
        /* microbatches per pipeline: a multiple of pp under the interleaved schedule; with
         * --auto every layout's dp (a divisor of N) must divide the batch too */
        l = lcm(l, R[i].w.vpp > 1 ? (long)R[i].w.dp * R[i].w.pp : R[i].w.dp);
        if (c->autolayout)
            l = lcm(l, R[i].w.vpp > 1 ? (long)R[i].w.gpus * R[i].w.gpus : R[i].w.gpus);
        maxpp = MAX(maxpp, R[i].w.pp);
        mindp = MIN(mindp, R[i].w.dp);
    }
    int b = R[0].w.micro_batch;
    long gb = o->global_batch > 0 ? o->global_batch : b * l;
    /* at least max(4, 2 pp) microbatches on the smallest data-parallel size */
    while (o->global_batch <= 0 && gb / ((long)b * mindp) < MAX(4, 2 * maxpp) && gb < 1000000)
        gb *= 2;
    for (int i = 0; i < n; i++) {
        workload_spec *w = &R[i].w;
        w->global_batch = (int)gb;
        fit_ops(o, w);
        if (c->autolayout && auto_ep(o, w) && w->ep <= 1 && !workload_spec_check(w, NULL))
            continue; /* EP is searched, and options that need EP above 1 (flex, combined 1F1B) refuse the rule's
                       * EP 1: the search checks each layout (and runs the rule's, to its error, if none passes) */
        if (!workload_spec_check(w, err)) {
            g_prefix_error(err, "%s with %d GPUs (tp %d pp %d dp %d): ", R[i].p.system, w->gpus, w->tp, w->pp, w->dp);
            return false;
        }
    }
    return true;
}

/* speedup and efficiency against the smallest size of the same system */
static void relate(result *R, int n)
{
    for (int i = 0; i < n; i++) {
        const result *base = NULL;
        for (int k = 0; k < n; k++)
            if (R[k].ok && !strcmp(R[k].p.system, R[i].p.system) && !g_strcmp0(R[k].p.fabric, R[i].p.fabric) &&
                (!base || R[k].p.gpus < base->p.gpus))
                base = &R[k];
        if (!R[i].ok || !base)
            continue;
        R[i].base_gpus = base->p.gpus;
        R[i].speedup = R[i].st.tokens_s / base->st.tokens_s;
        R[i].eff = R[i].speedup / ((double)R[i].p.gpus / base->p.gpus);
    }
}

static void sysname(const result *r, char *buf, size_t n)
{
    g_snprintf(buf, n, "%s%s%s", r->p.system, r->p.fabric ? "@" : "", r->p.fabric ? r->p.fabric : "");
}

static void print_results(const result *R, int n, const char *fmt)
{
    bool csv = fmt && !strcmp(fmt, "csv"), json = fmt && !strcmp(fmt, "json");
    char s[128];
    /* the error bands of the training comparison (topologies/accuracy.h): the Megatron rows', and
     * for a ZeRO-3 / FSDP row the DeepSpeed ZeRO-3 rows' (the dense band where the file has none) */
    acc_band bd, bz;
    bool band = acc_training_band(false, &bd), bandz = band && acc_training_band(true, &bz), any_z = false;
    if (csv)
        printf("system,gpu,gpus,tp,pp,dp,global_batch,layer_fuse,step_time_s,tokens_per_s,tflops_per_gpu,mfu,"
               "speedup,efficiency,exposed_comm_frac,fits_memory,step_time_lo_s,step_time_hi_s,tflops_lo,tflops_hi,"
               "exposed_net_frac,server_fabric,net_fabric,cp,ep,etp,memory_gib,hbm_gib\n");
    else if (json)
        printf("[");
    else
        printf("%-22s %-9s %6s %3s %3s %5s %6s %7s %10s %12s %8s %6s %8s %6s %8s %5s  %s\n", "system", "gpu", "gpus",
               "tp", "pp", "dp", "batch", "mem_GiB", "step_ms", "tokens/s", "TFLOP/s", "MFU%", "speedup", "eff%",
               "exposed%", "net%", band ? "step_ms 80%" : "");
    int k = 0;
    for (int i = 0; i < n; i++) {
        const result *r = &R[i];
        if (!r->ok)
            continue;
        sysname(r, s, sizeof s);
        const workload_spec *w = &r->w;
        double slo = 0, shi = 0, tlo = 0, thi = 0;
        double mem = workload_memory_bytes(w) / GIB, hbm = r->hbm / GIB; /* the busiest rank's estimate */
        bool z3 = bandz && w->zero == ZERO_3;
        any_z |= z3;
        if (band) {
            acc_time_range(r->st.step_s, z3 ? &bz : &bd, &slo, &shi);
            acc_rate_range(r->st.tflops, z3 ? &bz : &bd, &tlo, &thi);
        }
        /* the band's fields: CSV columns (empty without a band), JSON members */
        char cband[96] = ",,,", jband[128] = "";
        if (band) {
            g_snprintf(cband, sizeof cband, "%.6g,%.6g,%.4g,%.4g", slo, shi, tlo, thi);
            g_snprintf(jband, sizeof jband, ", \"step_time_80_s\": [%.6g, %.6g], \"tflops_80\": [%.4g, %.4g]", slo, shi,
                       tlo, thi);
        }
        if (csv)
            printf("%s,%s,%d,%d,%d,%d,%d,%d,%.9g,%.9g,%.4g,%.4f,%.4f,%.4f,%.4f,%s,%s,%.4f,%s,%s,%d,%d,%d,%.2f,%.2f\n", s,
                   r->st.gpu, w->gpus, w->tp, w->pp, w->dp, w->global_batch, w->layer_fuse, r->st.step_s, r->st.tokens_s,
                   r->st.tflops, r->st.mfu, r->speedup, r->eff, r->st.exposed, r->fits ? "yes" : "no", cband,
                   r->st.exposed_net, r->st.server_fabric, r->st.net_fabric, MAX(w->cp, 1), MAX(w->ep, 1),
                   MAX(w->etp, 1), mem, hbm);
        else if (json) {
            printf("%s\n {\"system\": ", k ? "," : "");
            timeline_json_str(stdout, s); /* a topology path may hold a backslash */
            printf(", \"gpu\": ");
            timeline_json_str(stdout, r->st.gpu);
            printf(", \"gpus\": %d, \"tp\": %d, \"pp\": %d, \"dp\": %d, \"cp\": %d, \"ep\": %d, \"etp\": %d, "
                   "\"global_batch\": %d, \"layer_fuse\": %d, \"step_time_s\": %.9g, \"tokens_per_s\": %.9g, "
                   "\"tflops_per_gpu\": %.4g, \"mfu\": %.4f, \"speedup\": %.4f, \"efficiency\": %.4f, "
                   "\"exposed_comm_frac\": %.4f, \"exposed_net_frac\": %.4f, \"server_fabric\": ",
                   w->gpus, w->tp, w->pp, w->dp, MAX(w->cp, 1), MAX(w->ep, 1), MAX(w->etp, 1), w->global_batch, w->layer_fuse,
                   r->st.step_s, r->st.tokens_s, r->st.tflops, r->st.mfu, r->speedup, r->eff, r->st.exposed,
                   r->st.exposed_net);
            timeline_json_str(stdout, r->st.server_fabric);
            printf(", \"net_fabric\": ");
            timeline_json_str(stdout, r->st.net_fabric);
            printf(", \"fits_memory\": %s, \"memory_gib\": %.2f, \"hbm_gib\": %.2f, \"sim_events\": %" G_GUINT64_FORMAT "%s",
                   r->fits ? "true" : "false", mem, hbm, r->st.events, jband);
            /* what the step ran, for records read apart from their command */
            printf(", \"seq\": %d, \"micro_batch\": %d, \"dtype\": \"%s\"", w->seq, w->micro_batch,
                   compute_dtype_name(w->dtype));
            if (w->dtype == COMPUTE_FP8)
                printf(", \"fp8_recipe\": \"%s\"", workload_fp8_recipe_name(w->fp8_recipe));
            printf(", \"attention_backend\": \"%s\"", workload_attn_backend_name(w->attn_backend));
            if (w->cp > 1) {
                char cpl[48];
                printf(", \"cp_comm\": \"%s\"", workload_cp_comm_label(w, cpl, sizeof cpl));
            }
            if (w->mtp > 0)
                printf(", \"mtp_num_layers\": %d", w->mtp);
            if (w->moe_ep_overlap)
                printf(", \"overlap_moe_expert_parallel_comm\": true");
            if (w->delay_wgrad)
                printf(", \"delay_wgrad_compute\": true");
            if (w->recompute_modules) {
                char rcm[128];
                printf(", \"recompute_granularity\": \"selective\", \"recompute_modules\": \"%s\"",
                       workload_recompute_modules_label(w->recompute_modules, rcm, sizeof rcm));
            } else if (w->recompute) {
                printf(", \"recompute_granularity\": \"full\"");
                if (w->recompute_method || w->recompute_layers)
                    printf(", \"recompute_method\": \"%s\", \"recompute_num_layers\": %d",
                           w->recompute_method == WL_RC_BLOCK ? "block" : "uniform", MAX(w->recompute_layers, 1));
            }
            if (w->first_stage_layers > 0 || w->last_stage_layers > 0)
                printf(", \"decoder_first_pipeline_num_layers\": %d, \"decoder_last_pipeline_num_layers\": %d",
                       w->first_stage_layers, w->last_stage_layers);
            if (w->grad_reduce_after)
                printf(", \"overlap_grad_reduce\": false");
            if (w->pp_layout) /* the grammar's characters need no JSON escape (workload_layout_get) */
                printf(", \"pipeline_model_parallel_layout\": \"%s\"", w->pp_layout);
            if (w->m.kv_lora > 0)
                printf(", \"q_lora_rank\": %d, \"kv_lora_rank\": %d, \"qk_head_dim\": %d, \"qk_pos_emb_head_dim\": %d, "
                       "\"v_head_dim\": %d", w->m.q_lora, w->m.kv_lora, w->m.qk_dim, w->m.rope_dim, w->m.v_dim);
            if (w->m.window > 0 || w->m.chunk > 0) { /* Megatron-LM's names (the chunk: Llama 4's); the skip
                                                     * frequency as N or the list's 0s and 1s */
                printf(w->m.chunk > 0 ? ", \"attention_chunk_size\": %d" : ", \"window_size\": %d",
                       w->m.chunk > 0 ? w->m.chunk : w->m.window);
                if (w->m.window_pattern)
                    printf(", \"window_attn_skip_freq\": \"%s\"", w->m.window_pattern);
                else if (w->m.window_freq > 0)
                    printf(", \"window_attn_skip_freq\": %d", w->m.window_freq);
            }
            if (w->m.experts)
                printf(", \"moe_token_dispatcher_type\": \"%s\"", workload_moe_dispatcher_name(w->moe_dispatcher));
            if (w->moe_imbalance > 1)
                printf(", \"moe_load_imbalance\": %g", w->moe_imbalance);
            if (w->capacity_factor > 0)
                printf(", \"moe_expert_capacity_factor\": %g, \"moe_pad_expert_input_to_capacity\": %s",
                       w->capacity_factor, w->pad_to_capacity ? "true" : "false");
            if (w->router_groups > 0)
                printf(", \"moe_router_num_groups\": %d, \"moe_router_group_topk\": %d", w->router_groups,
                       w->router_group_topk);
            if (r->st.by_name) {
                double f = 1.0 / ((double)r->st.nranks * r->st.step_s * 1e12);
                printf(", \"compute_frac\": %.4f, \"idle_frac\": %.4f, \"compute_by_name\": [", r->st.compute, r->st.idle);
                for (guint j = 0; r->st.compute_by_name && j < r->st.compute_by_name->len; j++) {
                    const replay_exposed *x = &g_array_index(r->st.compute_by_name, replay_exposed, j);
                    printf("%s{\"name\": ", j ? ", " : "");
                    timeline_json_str(stdout, x->name);
                    printf(", \"frac\": %.4f}", (double)x->ps * f);
                }
                printf("], \"exposed_by_name\": [");
                for (guint j = 0; j < r->st.by_name->len; j++) {
                    const replay_exposed *x = &g_array_index(r->st.by_name, replay_exposed, j);
                    printf("%s{\"name\": ", j ? ", " : "");
                    timeline_json_str(stdout, x->name);
                    printf(", \"frac\": %.4f, \"net_frac\": %.4f}", (double)x->ps * f, (double)x->net_ps * f);
                }
                printf("]");
            }
            printf("}");
        } else {
            char sb[48] = "";
            if (band) { /* three figures at least: a 3.25 ms step's band is 2.94-3.40, not 3-3 */
                int dec = shi * 1e3 >= 100 ? 0 : shi * 1e3 >= 10 ? 1 : 2;
                g_snprintf(sb, sizeof sb, "  %.*f-%.*f", dec, slo * 1e3, dec, shi * 1e3);
            }
            printf("%-22s %-9s %6d %3d %3d %5d %6d %7.1f %10.2f %12.0f %8.1f %6.1f %8.2f %6.1f %8.1f %5.1f%s%s\n", s,
                   r->st.gpu, w->gpus, w->tp, w->pp, w->dp, w->global_batch, mem, r->st.step_s * 1e3, r->st.tokens_s, r->st.tflops,
                   r->st.mfu * 100, r->speedup, r->eff * 100, r->st.exposed * 100, r->st.exposed_net * 100, sb,
                   r->fits ? "" : "  (exceeds HBM)");
        }
        k++;
    }
    if (json)
        printf("\n]\n");
    if (!csv && !json && n > 0 && R[0].st.by_name) {
        printf("# where the step goes (--breakdown), shares of the step, mean over the GPUs: compute by operation; "
               "exposed communication by operation (of it on the network; a stretch with several ops running or in "
               "flight is shared among them); idle (nothing running: pipeline bubbles, waiting on peers):\n");
        for (int i = 0; i < n; i++) {
            const result *r = &R[i];
            if (!r->ok || !r->st.by_name)
                continue;
            sysname(r, s, sizeof s);
            double f = 1.0 / ((double)r->st.nranks * r->st.step_s * 1e12);
            printf("#   %s %d: compute %.1f%%:", s, r->w.gpus, 100 * r->st.compute);
            guint nc = r->st.compute_by_name ? r->st.compute_by_name->len : 0;
            for (guint j = 0; j < nc && j < 6; j++) {
                const replay_exposed *x = &g_array_index(r->st.compute_by_name, replay_exposed, j);
                printf("%s %s %.1f%%", j ? "," : "", x->name ? x->name : "(unnamed)", 100 * (double)x->ps * f);
            }
            if (nc > 6)
                printf(", %u more", nc - 6);
            printf("\n#   %s %d: exposed %.1f%%:", s, r->w.gpus, 100 * r->st.exposed);
            for (guint j = 0; j < r->st.by_name->len && j < 6; j++) {
                const replay_exposed *x = &g_array_index(r->st.by_name, replay_exposed, j);
                printf("%s %s %.1f%% (%.1f%%)", j ? "," : "", x->name ? x->name : "(unnamed)", 100 * (double)x->ps * f,
                       100 * (double)x->net_ps * f);
            }
            if (r->st.by_name->len > 6)
                printf(", %u more", r->st.by_name->len - 6);
            if (!r->st.by_name->len)
                printf(" nothing exposed");
            printf("; idle %.1f%%\n", 100 * r->st.idle);
        }
    }
    if (!csv && !json) {
        /* which fabric the exposed share waited on, per system */
        GString *f = g_string_new(NULL);
        for (int i = 0; i < n; i++) {
            const result *r = &R[i];
            bool seen = false;
            for (int j = 0; j < i && !seen; j++)
                seen = R[j].ok && !strcmp(R[j].p.system, r->p.system) && !g_strcmp0(R[j].p.fabric, r->p.fabric);
            if (!r->ok || seen)
                continue;
            const char *out = "";
            for (int j = i; j < n && !*out; j++)
                if (R[j].ok && !strcmp(R[j].p.system, r->p.system) && !g_strcmp0(R[j].p.fabric, r->p.fabric))
                    out = R[j].st.net_fabric;
            sysname(r, s, sizeof s);
            g_string_append_printf(f, "%s%s %s%s%s", f->len ? ", " : "", s, r->st.server_fabric, *out ? " + " : "", out);
        }
        if (f->len)
            printf("# net%%: the part of exposed%% with traffic between servers (NVLink domains) in flight, the rest "
                   "on links inside one (%s)\n", f->str);
        g_string_free(f, TRUE);
    }
    if (!csv && !json && band)
        printf("# step_ms 80%%: where the published step fell for 80%% of %d Megatron-LM rows on A100s%s (error %+.1f%% to "
               "%+.1f%%%s; topologies/accuracy/training.json, docs/validation.md)\n", bd.n,
               bd.held_out ? ", each left out of the band it was checked against" : "", 100 * bd.lo, 100 * bd.hi,
               bd.held_out ? "" : ", in-sample");
    if (!csv && !json && any_z)
        printf("# step_ms 80%% of a ZeRO-3/FSDP row: where it fell for 80%% of %d DeepSpeed ZeRO-3 rows on A100s (2021; "
               "error %+.1f%% to %+.1f%%, %s; %d rows are few: docs/scaling.md)\n",
               bz.n, 100 * bz.lo, 100 * bz.hi, bz.held_out ? "each left out of the band it was checked against" : "in-sample", bz.n);
}

/* Speedup and scaling efficiency against GPUs per system, each with the
 * ideal line, side by side, via gnuplot. */
static int plot(const result *R, int n, const char *path)
{
    GString *d = g_string_new(NULL), *sp = g_string_new(NULL), *ef = g_string_new(NULL);
    /* the ideal speedup is x / (the system's smallest size), as relate() measures it: one line per
     * distinct smallest size (it was x / the first point's GPUs, off when sizes were given largest
     * first or systems started at different sizes) */
    int bases[16], nb = 0;
    for (int i = 0; i < n; i++) {
        int b = R[i].ok ? R[i].base_gpus : 0; /* (relate) */
        bool seen = !b;
        for (int j = 0; j < nb && !seen; j++)
            seen = bases[j] == b;
        if (!seen && nb < (int)G_N_ELEMENTS(bases))
            bases[nb++] = b;
    }
    g_string_append(sp, "plot ");
    for (int j = 0; j < MAX(nb, 1); j++) {
        int b = nb ? bases[j] : R[0].p.gpus;
        g_string_append_printf(sp, "%sx/%d with lines dt 2 lc rgb 'gray' title 'ideal", j ? ", " : "", b);
        if (nb > 1)
            g_string_append_printf(sp, " (from %d GPUs)", b);
        g_string_append_c(sp, '\'');
    }
    g_string_append(ef, "plot 100 with lines dt 2 lc rgb 'gray' title 'ideal'");
    int blocks = 0;
    char s[128], prev[128] = "";
    for (int i = 0; i < n; i++) {
        if (!R[i].ok)
            continue;
        sysname(&R[i], s, sizeof s);
        if (strcmp(s, prev)) {
            if (blocks)
                g_string_append(d, "EOD\n");
            g_string_append_printf(d, "$s%d << EOD\n", blocks);
            g_string_append_printf(sp, ", $s%d using 1:2 with linespoints title ", blocks);
            cli_gp_quote(sp, s);
            g_string_append_printf(ef, ", $s%d using 1:3 with linespoints title ", blocks);
            cli_gp_quote(ef, s);
            blocks++;
            g_strlcpy(prev, s, sizeof prev);
        }
        g_string_append_printf(d, "%d %.6g %.6g\n", R[i].p.gpus, R[i].speedup, 100 * R[i].eff);
    }
    if (blocks)
        g_string_append(d, "EOD\n");
    /* --breakdown: a third panel, where each point's step goes (stacked shares of the step) */
    bool bd = R[0].st.by_name != NULL;
    if (bd) {
        g_string_append(d, "$bd << EOD\n");
        for (int i = 0; i < n; i++) {
            if (!R[i].ok)
                continue;
            sysname(&R[i], s, sizeof s);
            char label[160];
            g_snprintf(label, sizeof label, "%s %d", s, R[i].p.gpus);
            g_string_append_c(d, '"');
            for (const char *q = label; *q; q++)
                if (*q != '"')
                    g_string_append_c(d, *q);
            g_string_append_printf(d, "\" %.3f %.3f %.3f %.3f\n", 100 * R[i].st.compute, 100 * R[i].st.exposed_net,
                                   100 * (R[i].st.exposed - R[i].st.exposed_net), 100 * R[i].st.idle);
        }
        g_string_append(d, "EOD\n");
    }
    g_string_append_printf(d, "set multiplot layout 1,%d\nset xlabel 'GPUs'\nset logscale x 2\nset grid\n"
                              "set key left top noenhanced\nset ylabel 'speedup vs smallest size'\nset logscale y 2\n"
                              "%s\nunset logscale y\nset ylabel 'scaling efficiency (%%)'\nset yrange [*:101]\n"
                              "set key left bottom noenhanced\n%s\n",
                           bd ? 3 : 2, sp->str, ef->str);
    if (bd)
        g_string_append(d, "unset logscale x\nunset xlabel\nset yrange [0:130]\nset ytics 0,20,100\n"
                           "set ylabel 'share of the step (%)'\n"
                           "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\n"
                           "set boxwidth 0.75\nset xtics rotate by 45 right noenhanced\nset bmargin 8\nunset grid\n"
                           "set grid ytics\nset key inside top center horizontal maxcols 2 samplen 1 noenhanced\nplot $bd using 2:xtic(1) title 'compute' lc rgb '#4477aa', '' using 3 title "
                           "'exposed: network' lc rgb '#ee6677', '' using 4 title 'exposed: inside the server' lc rgb "
                           "'#ccbb44', '' using 5 title 'idle' lc rgb '#bbbbbb'\n");
    g_string_append(d, "unset multiplot\n");
    int rc = cli_gnuplot_svg_sized("scale", path, bd ? 1500 : 1000, 450, d->str);
    g_string_free(d, TRUE);
    g_string_free(sp, TRUE);
    g_string_free(ef, TRUE);
    return rc;
}

#define AUTO_MAX 32 /* layouts simulated per point at most (twice that where EP or CP is searched, 4x both) */
#define AUTO_CP_TOKENS 4096 /* --auto tries CP while each CP rank keeps at least this much of the sequence */
#define AUTO_CP_COMMS 3      /* CP's exchanges --auto tries without --cp-comm: p2p, allgather, a2a */

/* Whether --auto searches CP (no --cp, a sequence long enough for two CP
 * ranks of AUTO_CP_TOKENS) and EP (no --ep, an MoE model) for w. */
static bool auto_cp(const wl_opts *o, const workload_spec *w)
{
    return o->cp <= 0 && !o->hier_cp && w->seq / 2 >= AUTO_CP_TOKENS; /* the hierarchical sizes fix cp */
}

/* Whether --auto tries each of CP's exchanges (p2p, allgather, a2a) for a
 * layout with CP > 1: no --cp-comm (nor hierarchical sizes) given. */
static bool auto_cp_comm(const wl_opts *o)
{
    return !o->cp_comm && !o->hier_cp;
}

static bool auto_ep(const wl_opts *o, const workload_spec *w)
{
    return o->ep <= 0 && w->m.experts > 0;
}

typedef struct {
    workload_spec w;
    int group, depth; /* (tp, cp, ep) in search order; the layout's place among its group's PPs */
} auto_cand;

static gint auto_cand_cmp(gconstpointer pa, gconstpointer pb)
{
    const auto_cand *a = pa, *b = pb;
    return a->depth != b->depth ? (a->depth > b->depth) - (a->depth < b->depth)
                                : (a->group > b->group) - (a->group < b->group);
}

/* --auto: simulate every layout that fits 90% of the GPU's memory (TP a
 * power of two up to 8 inside the NVLink domain dividing heads, KV heads,
 * FFN and N; PP a divisor of N/(TP x CP) up to the layers, from the smallest
 * that fits to 4 times it; DP the rest, TP x CP x DP a multiple of EP (EP
 * folded over TP and CP ranks too, as Megatron's MoE folding allows); the common global batch
 * divisible by its microbatches) and keep the fastest step. For an MoE model without --ep, EP too: each
 * power of two dividing the experts, and the experts themselves. Without --cp, CP too: each power of
 * two leaving every CP rank at least AUTO_CP_TOKENS of the sequence (so 1 up to seq 4096).
 * --tp/--pp/--ep/--cp pin that part. More candidates than the cap: each (TP, CP, EP)'s shallowest
 * pipeline first, then each one's next, and so on. Without a layout that fits, the rule's layout
 * stays (flagged "exceeds HBM"). */
static bool auto_layout(const wl_opts *o, const scale_cli *c, result *R, bool tty, int idx, int n, GError **err)
{
    workload_spec base = R->w;
    int N = base.gpus;
    result best = *R;
    best.ok = false;
    R->tried = R->fitting = 0;
    int eps[32], neps = 0, cps[32], ncps = 0, group = 0;
    if (auto_ep(o, &base)) { /* MoE without --ep: EP is part of the layout searched */
        for (int e = 1; e <= base.m.experts && neps < 31; e *= 2)
            if (base.m.experts % e == 0)
                eps[neps++] = e;
        if (eps[neps - 1] != base.m.experts)
            eps[neps++] = base.m.experts;
    } else {
        eps[neps++] = MAX(base.ep, 1);
    }
    if (o->cp <= 0) /* without --cp: CP 1, and more where the sequence is long (auto_cp) */
        for (int k = 1; k <= N && ncps < 32 && (k == 1 || base.seq / k >= AUTO_CP_TOKENS); k *= 2)
            cps[ncps++] = k;
    else
        cps[ncps++] = MAX(base.cp, 1);
    int cap = AUTO_MAX * (neps > 1 ? 2 : 1) * (ncps > 1 ? (auto_cp_comm(o) ? 4 : 2) : 1);
    GArray *cand = g_array_new(FALSE, FALSE, sizeof(auto_cand));
    for (int tp = 1; tp <= MIN(8, MIN(N, R->domain)); tp *= 2) {
        if ((c->tp > 0 && tp != c->tp) || !tp_splits(&base, tp))
            continue;
        for (int ci = 0; ci < ncps; ci++) {
            int cp = cps[ci], first = 0; /* the smallest PP that fits; deeper than 4x that is not tried */
            int depth[32 * AUTO_CP_COMMS] = {0};
            for (int pp = 1; pp <= base.m.layers && (long)tp * pp * cp <= N; pp++)
                for (int ei = 0; ei < neps; ei++)
                for (int cc = 0; cc < (cp > 1 && auto_cp_comm(o) ? AUTO_CP_COMMS : 1); cc++) {
                    workload_spec w = base;
                    w.ep = eps[ei];
                    w.cp = cp;
                    if (cp > 1 && auto_cp_comm(o)) /* the ring first (Megatron-LM's default), then the others */
                        w.cp_comm = (const int[AUTO_CP_COMMS]){WL_CP_P2P, WL_CP_ALLGATHER, WL_CP_A2A}[cc];
                    if ((c->pp > 0 && pp != c->pp) || !layout_tiles(&w, N, tp, pp, true) || (first && pp > 4 * first))
                        continue;
                    w.tp = tp;
                    w.pp = pp;
                    w.dp = N / (tp * pp * cp);
                    if (!schedule_allows(&w, pp))
                        continue;
                    int64_t per = (int64_t)w.micro_batch * w.dp; /* micro-batch not checked yet */
                    if (w.global_batch % per || (w.vpp > 1 && (w.global_batch / per) % pp))
                        continue;
                    if (workload_memory_bytes(&w) > 0.9 * R->hbm)
                        continue;
                    if (!first)
                        first = pp;
                    fit_ops(o, &w);
                    if (!workload_spec_check(&w, NULL))
                        continue;
                    auto_cand a = {.w = w, .group = group + ei * AUTO_CP_COMMS + cc, .depth = depth[ei * AUTO_CP_COMMS + cc]++};
                    g_array_append_val(cand, a);
                }
            group += neps * AUTO_CP_COMMS;
        }
    }
    R->fitting = (int)cand->len;
    g_array_sort(cand, auto_cand_cmp); /* stable for equal keys: none, (group, depth) is unique */
    for (guint k = 0; k < cand->len && R->tried < cap; k++) {
        const workload_spec *w = &g_array_index(cand, auto_cand, k).w;
        result r = *R;
        r.w = *w;
        if (tty)
            fprintf(stderr, "\r[%d/%d] %s, %d GPUs: layout %d (tp %d cp %d pp %d dp %d ep %d)...        ", idx + 1, n,
                    R->p.system, N, R->tried + 1, w->tp, w->cp, w->pp, w->dp, w->ep);
        R->tried++;
        if (!run_point(o, c->exact, &r, err)) {
            if (best.ok)
                wl_step_clear(&best.st);
            g_array_free(cand, TRUE);
            return false;
        }
        /* ties keep the earlier candidate: the shallower pipeline, then the search order */
        if (!best.ok || r.st.step_s < best.st.step_s) {
            if (best.ok)
                wl_step_clear(&best.st);
            best = r;
            best.fits = true;
        } else {
            wl_step_clear(&r.st);
        }
    }
    g_array_free(cand, TRUE);
    if (best.ok) {
        best.tried = R->tried;
        best.fitting = R->fitting;
        *R = best;
        return true;
    }
    return run_point(o, c->exact, R, err);
}

/* The --auto line of one point: how many layouts fitted, or that none did
 * and what would lower the estimate (the options not given). */
static void auto_line(const wl_opts *o, const result *r)
{
    const workload_spec *w = &r->w;
    printf("# %s %d GPUs: ", r->p.system, r->p.gpus);
    if (r->tried) {
        if (r->fitting > r->tried)
            printf("fastest of %d of the %d layouts that fit (--auto; shallowest pipelines first)", r->tried, r->fitting);
        else
            printf("fastest of %d layout%s that fit (--auto)", r->tried, r->tried == 1 ? "" : "s");
        bool ep = auto_ep(o, w), cp = auto_cp(o, w);
        if (cp)
            printf(": cp %d", MAX(w->cp, 1));
        if (cp && w->cp > 1 && auto_cp_comm(o))
            printf(" (%s)", workload_cp_comm_name(w->cp_comm));
        if (ep)
            printf("%s ep %d", cp ? "," : ":", w->ep);
        printf("\n");
        return;
    }
    GString *hint = g_string_new("");
    if (w->zero == 0)
        g_string_append(hint, ", --zero 1");
    if (!w->sp && w->tp > 1)
        g_string_append(hint, ", --sp");
    if (!w->recompute) /* (full: selective recomputation keeps more) */
        g_string_append(hint, w->recompute_modules ? ", --recompute-granularity full" : ", --recompute");
    printf("no layout fits 90%% of %.0f GiB (--auto): the layout rule's, %.1f GiB a GPU, simulated and flagged",
           r->hbm / GIB, workload_memory_bytes(w) / GIB);
    if (hint->len)
        printf(" (%s would lower the estimate)", hint->str + 2);
    printf("\n");
    g_string_free(hint, TRUE);
}

static int run_scale(wl_opts *o, scale_cli *c)
{
    GError *err = NULL;
    point pts[MAX_POINTS];
    int n = parse_points(c, pts, &err);
    if (n <= 0)
        return cli_fail(err ? err : g_error_new(WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, "no systems given"));
    if (c->timeline && n > 1) {
        fprintf(stderr, "conveyor scale: --timeline writes one point's step; %d points given (one system, one size: "
                        "--systems NAME:GPUS)\n", n);
        for (int i = 0; i < n; i++) {
            g_free(pts[i].system);
            g_free(pts[i].fabric);
        }
        return EXIT_BADINPUT;
    }
    result *R = g_new0(result, n);
    int rc = EXIT_OK, cap = c->max_gpus > 0 ? c->max_gpus : 1024;
    for (int i = 0; i < n; i++) {
        R[i].p = pts[i];
        if (pts[i].gpus > cap && rc == EXIT_OK) {
            fprintf(stderr, "conveyor scale: %s with %d GPUs exceeds --max-gpus %d: chunk-level replay of that many "
                            "GPUs takes minutes to hours; raise --max-gpus to run it anyway\n",
                    pts[i].system, pts[i].gpus, cap);
            rc = EXIT_BADINPUT;
        }
    }
    if (rc == EXIT_OK && !plan(o, c, R, n, &err))
        rc = cli_fail(err);
    bool tty = isatty(2);
    for (int i = 0; rc == EXIT_OK && i < n; i++) {
        if (tty)
            fprintf(stderr, "\r[%d/%d] %s, %d GPUs (tp %d pp %d dp %d)...        ", i + 1, n, pts[i].system,
                    pts[i].gpus, R[i].w.tp, R[i].w.pp, R[i].w.dp);
        if (!(c->autolayout ? auto_layout(o, c, &R[i], tty, i, n, &err) : run_point(o, c->exact, &R[i], &err)))
            rc = cli_fail(err);
        err = NULL;
    }
    if (tty)
        fprintf(stderr, "\r%60s\r", "");
    if (rc == EXIT_OK) {
        for (int i = 0; i < n && !(R[i].ok && wl_opts_megatron_note("scale", &R[i].w)); i++) /* once */
            ;
        relate(R, n);
        if (!c->format || !strcmp(c->format, "text")) {
            char rcp[24] = ""; /* fp8's recipe where not the default */
            if (R[0].w.dtype == COMPUTE_FP8 && R[0].w.fp8_recipe != WL_FP8_DELAYED)
                g_snprintf(rcp, sizeof rcp, " (%s)", workload_fp8_recipe_name(R[0].w.fp8_recipe));
            char mla[128];
            printf("# scale: %s%s, %d x %d tokens per step (strong scaling), %s%s, %s%s", R[0].w.m.name,
                   workload_attn_label(&R[0].w.m, mla, sizeof mla), R[0].w.global_batch, R[0].w.seq,
                   compute_dtype_name(R[0].w.dtype), rcp,
                   R[0].w.zero == 3 ? (R[0].w.fsdp ? "FSDP" : "ZeRO-3") : R[0].w.zero ? "ZeRO" : "DDP",
                   R[0].w.recompute ? ", full recompute" : "");
            if (R[0].w.recompute && R[0].w.recompute_method == WL_RC_BLOCK)
                printf(" (block: %d layer%s a model chunk)", R[0].w.recompute_layers,
                       R[0].w.recompute_layers > 1 ? "s" : "");
            else if (R[0].w.recompute && R[0].w.recompute_layers > 1)
                printf(" (uniform: a checkpoint each %d layers)", R[0].w.recompute_layers);
            if (R[0].w.attn_backend == WL_ATTN_UNFUSED)
                printf(", unfused attention (the full s x s product)");
            if (R[0].w.tp_async_bwd)
                printf(", TP input gradients reduced beside the weight gradients");
            if (R[0].w.tp_comm_overlap)
                printf(", TP communication overlapped with GEMMs (userbuffers)");
            if (R[0].w.recompute_modules) {
                char rcm[128];
                printf(", selective recompute (%s)",
                       workload_recompute_modules_label(R[0].w.recompute_modules, rcm, sizeof rcm));
            }
            if (R[0].w.mtp > 0)
                printf(", %d MTP layer%s", R[0].w.mtp, R[0].w.mtp > 1 ? "s" : "");
            int fsl = R[0].w.first_stage_layers, lsl = R[0].w.last_stage_layers;
            if (fsl > 0)
                printf(", %d layer%s on the first stage", fsl, fsl > 1 ? "s" : "");
            if (lsl > 0 && fsl > 0)
                printf(", %d on the last", lsl);
            else if (lsl > 0)
                printf(", %d layer%s on the last stage", lsl, lsl > 1 ? "s" : "");
            if (R[0].w.pp_layout) {
                int ms = workload_mtp_stage(&R[0].w);
                printf(", pipeline layout %s", R[0].w.pp_layout);
                if (ms >= 0 && ms != R[0].w.pp - 1)
                    printf(" (MTP on stage %d of %d)", ms, R[0].w.pp);
            }
            if (R[0].w.moe_shared_overlap)
                printf(", shared expert beside the all-to-alls");
            if (R[0].w.moe_ep_overlap)
                printf(", combined 1F1B (all-to-alls beside the paired microbatch's compute%s)",
                       R[0].w.delay_wgrad ? ", weight gradients delayed" : "");
            if (R[0].w.overlap_param_gather)
                printf(", parameter gathers overlapped with the forward");
            if (R[0].w.grad_reduce_after)
                printf(", gradients reduced after the backward");
            printf("%s", workload_fp8_param_gather_label(&R[0].w));
            char moe[160];
            printf("%s", workload_moe_label(&R[0].w, moe, sizeof moe));
            if (R[0].w.vpp > 1)
                printf(", interleaved 1F1B (%d model chunks per pp rank)", R[0].w.vpp);
            /* not columns of the table (tp x pp x cp x dp GPUs); searched by --auto, on its lines instead */
            bool cpv = c->autolayout && auto_cp(o, &R[0].w), epv = c->autolayout && auto_ep(o, &R[0].w);
            char cpl[48];
            const char *cpx = workload_cp_comm_label(&R[0].w, cpl, sizeof cpl); /* how CP ranks exchange K, V */
            char cpd[32] = "";
            if (R[0].w.cp > 1)
                g_snprintf(cpd, sizeof cpd, " (%s)", cpx);
            if (!cpv && !epv && (R[0].w.cp > 1 || R[0].w.ep > 1))
                printf(", context parallel %d%s, expert parallel %d", MAX(R[0].w.cp, 1), cpd, MAX(R[0].w.ep, 1));
            else if (!cpv && R[0].w.cp > 1)
                printf(", context parallel %d%s", R[0].w.cp, cpd);
            else if (!epv && R[0].w.ep > 1)
                printf(", expert parallel %d", R[0].w.ep);
            if (cpv)
                printf(", CP searched (%s)", auto_cp_comm(o) ? "and its exchange: p2p, allgather, a2a" : cpx);
            if (R[0].w.etp > 1)
                printf(", expert tensor parallel %d", R[0].w.etp);
            printf("\n");
            if (c->autolayout)
                for (int i = 0; i < n; i++)
                    auto_line(o, &R[i]);
            for (int i = 0; i < n; i++)
                if (R[i].w.layer_fuse > 1)
                    printf("# %s %d GPUs: %d layers per trace op (coarsened to stay under %.0g ops)\n",
                           pts[i].system, pts[i].gpus, R[i].w.layer_fuse, OP_BUDGET);
        }
        print_results(R, n, c->format);
        if (c->plot)
            rc = plot(R, n, c->plot);
    }
    for (int i = 0; i < n; i++) {
        g_free(pts[i].system);
        g_free(pts[i].fabric);
        wl_step_clear(&R[i].st);
    }
    g_free(R);
    return rc;
}

int cmd_scale(int argc, char **argv)
{
    wl_opts o = {0};
    scale_cli c = {.tp = CLI_UNSET, .pp = CLI_UNSET, .max_gpus = CLI_UNSET};
    GOptionEntry e[] = {
        {"systems", 's', 0, G_OPTION_ARG_STRING, &c.systems,
         "NAME[@FABRIC][:SIZES] or NAME:FABRIC[:SIZES],... SIZES = A..B (doubling) or A/B/C [dgx-h100]", "LIST"},
        {"gpus", 0, 0, G_OPTION_ARG_STRING, &c.gpus_s, "sizes for systems without their own [8..64]", "SIZES"},
        {"tp", 0, 0, G_OPTION_ARG_INT, &c.tp, "tensor-parallel size [rule: NVLink domain, <= 8]", "T"},
        {"pp", 0, 0, G_OPTION_ARG_INT, &c.pp, "pipeline-parallel size [rule: smallest that fits HBM]", "P"},
        {"format", 0, 0, G_OPTION_ARG_STRING, &c.format, "text, csv or json [text]", "FMT"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &c.plot, "speedup and scaling-efficiency curves per system (SVG, gnuplot; - for stdout)", "FILE"},
        {"max-gpus", 0, 0, G_OPTION_ARG_INT, &c.max_gpus, "refuse sizes above this (replay cost) [1024]", "N"},
        {"auto", 0, 0, G_OPTION_ARG_NONE, &c.autolayout, "per point, simulate every layout that fits memory and keep "
         "the fastest: TP, PP, DP, and CP on long sequences and EP on MoE models (--tp/--pp/--cp/--ep pin that part)", NULL},
        {"exact", 0, 0, G_OPTION_ARG_NONE, &c.exact, "simulate every rank and collective (no folded rings, no reuse "
         "of repeated collectives' isolated runs)", NULL},
        {"breakdown", 0, 0, G_OPTION_ARG_NONE, &c.breakdown, "per point, where the step goes: compute and exposed "
         "communication by operation (its part on the network), idle; text or json (with --plot, stacked bars too)", NULL},
        {"timeline", 0, 0, G_OPTION_ARG_FILENAME, &c.timeline, "one point (one system, one size, no --auto): write "
         "its step as a Chrome/Perfetto trace (every chunk simulated, as --exact; - for stdout)", "FILE"},
        {0},
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("- scaling study across sizes and systems");
    g_option_context_set_description(ctx, SYS_ENV_HELP);
    g_option_context_set_main_group(ctx, wl_opts_group(&o, FALSE));
    g_option_context_add_main_entries(ctx, e, NULL);
    g_autoptr(GPtrArray) margs = NULL; /* --megatron-args FILE said as options (megatron_args.h) */
    if (!megatron_args_expand("scale", &argc, &argv, &margs)) {
        wl_opts_clear(&o);
        return EXIT_BADINPUT;
    }
    int rc = cli_parse(ctx, "scale", &argc, &argv) ? EXIT_OK : EXIT_BADINPUT;
    if (rc == EXIT_OK && !cli_dash_output("scale", (const char *[]){c.plot, c.timeline}, 2))
        rc = EXIT_BADINPUT;
    if (rc == EXIT_OK && argc > 1) {
        fprintf(stderr, "conveyor scale: unexpected argument '%s'\n", argv[1]);
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && c.format && strcmp(c.format, "text") && strcmp(c.format, "csv") && strcmp(c.format, "json")) {
        fprintf(stderr, "conveyor scale: --format must be text, csv or json\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && c.breakdown && c.format && !strcmp(c.format, "csv")) {
        fprintf(stderr, "conveyor scale: --breakdown is for --format text or json (a list per point, not a column)\n");
        rc = EXIT_BADINPUT;
    }
    o.by_name = c.breakdown;
    o.timeline = c.timeline;
    if (rc == EXIT_OK && c.timeline && c.autolayout) {
        fprintf(stderr, "conveyor scale: --timeline writes one layout's step; --auto tries several (pin one with "
                        "--tp/--pp)\n");
        rc = EXIT_BADINPUT;
    }
    if (rc == EXIT_OK && ((c.tp != CLI_UNSET && c.tp < 1) || (c.pp != CLI_UNSET && c.pp < 1) ||
                          (c.max_gpus != CLI_UNSET && c.max_gpus < 1))) {
        fprintf(stderr, "conveyor scale: --tp, --pp and --max-gpus must be >= 1\n");
        rc = EXIT_BADINPUT;
    }
    c.tp = c.tp == CLI_UNSET ? 0 : c.tp; /* 0: chosen per size */
    c.pp = c.pp == CLI_UNSET ? 0 : c.pp;
    c.max_gpus = c.max_gpus == CLI_UNSET ? 0 : c.max_gpus;
    if (rc == EXIT_OK && (o.pp_layout || o.acct_emb || o.acct_loss || o.vstage_layers > 0) &&
        (c.autolayout || c.pp <= 0)) {
        fprintf(stderr, "conveyor scale: %s fixes the pipeline: give --pp (%s)%s\n",
                o.pp_layout ? "--pipeline-model-parallel-layout"
                : o.vstage_layers > 0 ? "--num-layers-per-virtual-pipeline-stage"
                                      : "--account-for-embedding/loss-in-pipeline-split",
                o.pp_layout ? "its virtual stages over pp are the model chunks" : "the layers split over pp",
                c.autolayout ? ", not --auto" : "");
        rc = EXIT_BADINPUT;
    }
    o.pp = c.pp; /* wl_opts_spec spreads a layout's virtual stages over it */
    if (rc == EXIT_OK && !wl_opts_list_models(&o, stdout))
        rc = run_scale(&o, &c);
    g_free(c.systems);
    g_free(c.gpus_s);
    g_free(c.format);
    g_free(c.plot);
    g_free(c.timeline);
    wl_opts_clear(&o);
    return rc;
}

/* Tests of calibrate/fit (the alpha-beta fitter, the JSON-lines and
 * nccl-tests readers, the params file).  Run from the repository root. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "calibrate/fit.h"
#include "testutil.h"
#include "traces/nccltests.h"

#define SYNTH "tests/data/calibration/synthetic.jsonl"
#define BAD "tests/bad_input/calibration/"

/* Constants the synthetic file was generated from (see its header lines). */
#define D2D_ALPHA 5e-6
#define D2D_BETA 20e9
#define H2D_ALPHA 8e-6
#define H2D_BETA 50e9
#define RED_BETA 1.5e12

static void test_fit_line_exact_points_give_exact_params(void)
{
    double s[20], t[20];
    for (int i = 0; i < 20; i++)
        s[i] = (double)(64u << i), t[i] = 2e-6 + s[i] / 40e9;
    calib_line L;
    CU_ASSERT_FATAL(calib_fit_line(s, t, 20, &L));
    ASSERT_REL(L.alpha_s, 2e-6, 1e-9);
    ASSERT_REL(L.beta_Bps, 40e9, 1e-9);
    CU_ASSERT(L.residual_max_pct < 1e-6);
    CU_ASSERT_EQUAL(L.npoints, 20);
    CU_ASSERT_EQUAL(L.noutliers, 0);
    /* knee 4 x 2us x 40 GB/s = 320 kB: 512 KiB..32 MiB are bandwidth-bound;
     * latency-bound: S / 40e9 <= 0.5 us, i.e. S <= 20 kB: 64 B..16 KiB */
    CU_ASSERT_EQUAL(L.nfit, 7);
    CU_ASSERT_EQUAL(L.nalpha, 9);
}

static void test_fit_line_refuses_one_size_and_flat_slope(void)
{
    double s1[3] = {1024, 1024, 1024}, t1[3] = {1e-6, 2e-6, 3e-6};
    calib_line L = {.alpha_s = -1};
    CU_ASSERT_FALSE(calib_fit_line(s1, t1, 3, &L));
    CU_ASSERT_EQUAL(L.alpha_s, -1); /* untouched */
    double s2[4] = {1e3, 1e6, 1e7, 1e8}, t2[4] = {4e-3, 3e-3, 2e-3, 1e-3};
    CU_ASSERT_FALSE(calib_fit_line(s2, t2, 4, &L));
    CU_ASSERT_FALSE(calib_fit_line(s2, t2, 1, &L));
}

static void test_fit_line_drops_an_outlier(void)
{
    double s[16], t[16];
    for (int i = 0; i < 16; i++)
        s[i] = (double)(1u << (i + 10)), t[i] = 1e-6 + s[i] / 10e9;
    t[14] *= 3; /* one bandwidth-bound point three times too slow */
    calib_line L;
    CU_ASSERT_FATAL(calib_fit_line(s, t, 16, &L));
    ASSERT_REL(L.beta_Bps, 10e9, 1e-6);
    ASSERT_REL(L.alpha_s, 1e-6, 1e-6);
    CU_ASSERT_EQUAL(L.noutliers, 1);
    ASSERT_REL(L.residual_max_pct, 100 * (1 - 1.0 / 3), 1e-6); /* the outlier's residual */
}

static void solve_file(const char *path, calib_fit_set **s, calib_params *p)
{
    GError *err = NULL;
    *s = calib_fit_set_new();
    CU_ASSERT_FATAL(calib_fit_set_add_file(*s, path, &err));
    CU_ASSERT_FATAL(calib_fit_set_solve(*s, p, &err));
    CU_ASSERT_PTR_NULL(err);
}

static void test_synthetic_file_recovers_known_alpha_beta(void)
{
    calib_fit_set *s;
    calib_params p;
    solve_file(SYNTH, &s, &p);
    const calib_path *d = calib_params_find(&p, "d2d_copy/gpu0/d2d/ce");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    ASSERT_REL(d->alpha_s, D2D_ALPHA, 0.01);
    ASSERT_REL(d->beta_Bps, D2D_BETA, 0.01);
    CU_ASSERT(d->residual_rms_pct > 1 && d->residual_rms_pct < 20); /* the outlier shows in the RMS */
    const calib_path *h = calib_params_find(&p, "h2d/gpu0/h2d/pinned"); /* given as GB/s */
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    ASSERT_REL(h->alpha_s, H2D_ALPHA, 0.01);
    ASSERT_REL(h->beta_Bps, H2D_BETA, 0.01);
    ASSERT_REL(p.reduction_Bps[CALIB_FP32], RED_BETA, 0.01);
    CU_ASSERT(isnan(p.reduction_Bps[CALIB_BF16]));
    ASSERT_REL(p.launch_s, 2.5e-6, 1e-12);
    CU_ASSERT_STRING_EQUAL(p.device, "Synthetic GPU");
    CU_ASSERT_EQUAL(p.npaths, 3);
    CU_ASSERT_EQUAL(p.nscalars, 1);
    CU_ASSERT_EQUAL(p.ncollectives, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    calib_fit_set_print(s, f);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "1 outliers dropped"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "resid%"));
    free(buf);
    calib_params_clear(&p);
    calib_fit_set_free(s);
}

static void test_params_json_round_trip(void)
{
    calib_fit_set *s;
    calib_params p, q;
    solve_file(SYNTH, &s, &p);
    char *json = calib_params_to_json(&p), *tmp = NULL;
    GError *err = NULL;
    int fd = g_file_open_tmp("calib-XXXXXX.json", &tmp, NULL);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_FATAL(g_file_set_contents(tmp, json, -1, NULL));
    CU_ASSERT_FATAL(calib_params_load(tmp, &q, &err));
    CU_ASSERT_EQUAL(q.npaths, p.npaths);
    for (size_t i = 0; i < p.npaths; i++) {
        const calib_path *a = &p.paths[i], *b = calib_params_find(&q, a->name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        ASSERT_REL(b->alpha_s, a->alpha_s, 1e-12);
        ASSERT_REL(b->beta_Bps, a->beta_Bps, 1e-12);
    }
    ASSERT_REL(q.reduction_Bps[CALIB_FP32], p.reduction_Bps[CALIB_FP32], 1e-12);
    ASSERT_REL(q.launch_s, p.launch_s, 1e-12);
    CU_ASSERT_EQUAL(q.nscalars, 1);
    CU_ASSERT_STRING_EQUAL(q.source, SYNTH);
    calib_params_clear(&q);
    /* a broken params file: position and code */
    g_file_set_contents(tmp, "{\"paths\": [{\"name\": \"x\", \"alpha_s\": 1e-6, \"beta_Bps\": -3}]}", -1, NULL);
    CU_ASSERT_FALSE(calib_params_load(tmp, &q, &err));
    CU_ASSERT(g_error_matches(err, CALIB_ERROR, CALIB_ERROR_VALUE));
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, "paths[0]") : NULL);
    g_clear_error(&err);
    g_file_set_contents(tmp, "{\"paths\": [\n  {\"name\": }", -1, NULL);
    CU_ASSERT_FALSE(calib_params_load(tmp, &q, &err));
    CU_ASSERT(g_error_matches(err, CALIB_ERROR, CALIB_ERROR_PARSE));
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, ":2:") : NULL);
    g_clear_error(&err);
    g_unlink(tmp);
    g_free(tmp);
    g_free(json);
    calib_params_clear(&p);
    calib_params_clear(&q);
    calib_fit_set_free(s);
}

static void test_bad_inputs_name_code_and_line(void)
{
    static const struct {
        const char *file;
        int code;
        const char *pos;
    } cases[] = {
        {BAD "truncated-line.jsonl", CALIB_ERROR_PARSE, "truncated-line.jsonl:3:"},
        {BAD "negative-median.jsonl", CALIB_ERROR_VALUE, "negative-median.jsonl:3: \"median\""},
        {BAD "unknown-unit.jsonl", CALIB_ERROR_UNIT, "unknown-unit.jsonl:2: unknown unit"},
        {BAD "empty.jsonl", CALIB_ERROR_EMPTY, "empty.jsonl:1: no calibration record"},
        {BAD "no-such-file.jsonl", CALIB_ERROR_IO, "no-such-file.jsonl: "},
        {BAD "gemm-missing-k.jsonl", CALIB_ERROR_FIELD, "gemm-missing-k.jsonl:2: gemm record: \"k\""},
        {BAD "gemm-bad-dtype.jsonl", CALIB_ERROR_FIELD, "gemm-bad-dtype.jsonl:1: gemm record: \"dtype\""},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        calib_fit_set *s = calib_fit_set_new();
        GError *err = NULL;
        CU_ASSERT_FALSE(calib_fit_set_add_jsonl(s, cases[i].file, &err));
        CU_ASSERT(g_error_matches(err, CALIB_ERROR, cases[i].code));
        if (!err || !strstr(err->message, cases[i].pos)) {
            fprintf(stderr, "\n%s: got '%s', want '%s'\n", cases[i].file, err ? err->message : "(none)",
                    cases[i].pos);
            CU_FAIL("message lacks the position");
        }
        g_clear_error(&err);
        /* nothing of a bad file is kept: solving finds nothing */
        calib_params p;
        CU_ASSERT_FALSE(calib_fit_set_solve(s, &p, &err));
        CU_ASSERT(g_error_matches(err, CALIB_ERROR, CALIB_ERROR_FIT));
        g_clear_error(&err);
        calib_fit_set_free(s);
    }
}

/* A fit the params loader would refuse (calib_params_load: alpha <= 1 s,
 * beta >= 1 MB/s, launch_s <= 1 s) is refused by the fitter, at the group's
 * first record, with the bound; at the bound it is written and loads. */
static void test_fit_outside_params_bounds_is_refused(void)
{
    static const struct {
        const char *file, *want;
    } cases[] = {
        {BAD "launch-1000-s-over-1-s.jsonl",
         "launch-1000-s-over-1-s.jsonl:1: launch/gpu0/kernel: launch cost 1000 s is over 1 s"},
        {BAD "path-alpha-100-s-over-1-s.jsonl",
         "path-alpha-100-s-over-1-s.jsonl:1: h2d/gpu0/h2d/pinned: fitted alpha 100 s is over 1 s"},
        {BAD "path-beta-under-1MBps.jsonl", "path-beta-under-1MBps.jsonl:1: h2d/gpu0/h2d/pinned: fitted beta 0.5 B/s"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        calib_fit_set *s = calib_fit_set_new();
        calib_params p;
        GError *err = NULL;
        CU_ASSERT_FATAL(calib_fit_set_add_jsonl(s, cases[i].file, &err));
        CU_ASSERT_FALSE(calib_fit_set_solve(s, &p, &err));
        CU_ASSERT(g_error_matches(err, CALIB_ERROR, CALIB_ERROR_VALUE));
        if (!err || !strstr(err->message, cases[i].want)) {
            fprintf(stderr, "\n%s: got '%s', want '%s'\n", cases[i].file, err ? err->message : "(none)", cases[i].want);
            CU_FAIL("message lacks the position or the bound");
        }
        CU_ASSERT_EQUAL(p.npaths + p.nscalars, 0);
        g_clear_error(&err);
        calib_fit_set_free(s);
    }
    /* a launch of exactly CALIB_LAUNCH_MAX_S: fitted, written, loaded */
    char *tmp = NULL, *out = NULL;
    int fd = g_file_open_tmp("calib-XXXXXX.jsonl", &tmp, NULL);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_FATAL(g_file_set_contents(tmp, "{\"device\": \"G\", \"bench\": \"launch\", \"path\": \"gpu0\", "
                                             "\"mode\": \"kernel\", \"size_bytes\": 0, \"unit\": \"s\", \"median\": 1, "
                                             "\"min\": 1, \"max\": 1}\n", -1, NULL));
    calib_fit_set *s = calib_fit_set_new();
    calib_params p, q;
    GError *err = NULL;
    CU_ASSERT_FATAL(calib_fit_set_add_jsonl(s, tmp, &err));
    CU_ASSERT_FATAL(calib_fit_set_solve(s, &p, &err));
    char *json = calib_params_to_json(&p);
    fd = g_file_open_tmp("calib-XXXXXX.json", &out, NULL);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_FATAL(g_file_set_contents(out, json, -1, NULL));
    CU_ASSERT(calib_params_load(out, &q, &err));
    ASSERT_REL(q.launch_s, CALIB_LAUNCH_MAX_S, 1e-12);
    g_unlink(tmp), g_unlink(out);
    g_free(tmp), g_free(out), g_free(json);
    calib_params_clear(&p), calib_params_clear(&q);
    calib_fit_set_free(s);
}

/* Two paths whose names agree for their first 600 bytes are two groups (a
 * name cut at 511 bytes merged them into one fit with a 63% residual), each
 * fitted exactly: t = S / beta with beta 1 and 0.1 GB/s. */
static void test_long_names_stay_apart(void)
{
    char *tmp = NULL, *pre = g_strnfill(600, 'A');
    int fd = g_file_open_tmp("calib-XXXXXX.jsonl", &tmp, NULL);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    GString *text = g_string_new(NULL);
    for (int k = 0; k < 2; k++)
        for (int s = 1000; s <= 8000; s *= 2)
            g_string_append_printf(text, "{\"device\": \"G\", \"bench\": \"d2d_copy\", \"path\": \"%s%c\", "
                                   "\"mode\": \"ce\", \"size_bytes\": %d, \"unit\": \"s\", \"median\": %g, "
                                   "\"min\": %g, \"max\": %g}\n", pre, "xy"[k], s, s / (k ? 1e8 : 1e9),
                                   s / (k ? 1e8 : 1e9), s / (k ? 1e8 : 1e9));
    CU_ASSERT_FATAL(g_file_set_contents(tmp, text->str, -1, NULL));
    calib_fit_set *set = calib_fit_set_new();
    calib_params p;
    GError *err = NULL;
    CU_ASSERT_FATAL(calib_fit_set_add_jsonl(set, tmp, &err));
    CU_ASSERT_FATAL(calib_fit_set_solve(set, &p, &err));
    CU_ASSERT_EQUAL(p.npaths, 2);
    for (int k = 0; k < 2; k++) {
        char *name = g_strdup_printf("d2d_copy/%s%c/ce", pre, "xy"[k]);
        const calib_path *c = calib_params_find(&p, name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        ASSERT_REL(c->beta_Bps, k ? 1e8 : 1e9, 1e-9);
        CU_ASSERT(c->residual_rms_pct < 1e-6);
        g_free(name);
    }
    g_unlink(tmp);
    g_free(tmp), g_free(pre);
    g_string_free(text, TRUE);
    calib_params_clear(&p);
    calib_fit_set_free(set);
}

/* GEMM records made from t = 2mnk / (E k / (k + K0)) (layer shapes) and
 * 2mnk / P (squares): the fit gives back K0 exactly (integer grid), E and
 * the best square rate; the params file carries them; the model time of a
 * point is its measured time. */
#define GEMM_E 600e12
#define GEMM_K0 256
static void test_gemm_fit_recovers_shape_model(void)
{
    char *tmp = NULL;
    int fd = g_file_open_tmp("gemm-XXXXXX.jsonl", &tmp, NULL);
    CU_ASSERT_FATAL(fd >= 0);
    FILE *f = fdopen(fd, "w");
    static const int ks[] = {512, 1024, 2048, 4096, 8192, 16384};
    for (size_t i = 0; i < G_N_ELEMENTS(ks); i++) {
        double m = 4096, n = 2048 * (double)(1 + i % 3), k = ks[i];
        double t = 2 * m * n * k / (GEMM_E * k / (k + GEMM_K0));
        fprintf(f, "{\"bench\":\"gemm\",\"device\":\"T\",\"path\":\"gpu0\",\"mode\":\"fwd\",\"dtype\":\"bf16\","
                   "\"m\":%.0f,\"n\":%.0f,\"k\":%.0f,\"size_bytes\":1,\"iters\":1,\"median\":%.9g,\"min\":%.9g,"
                   "\"max\":%.9g,\"unit\":\"us\"}\n",
                m, n, k, t * 1e6, t * 1e6, t * 1e6);
    }
    for (int s = 1024; s <= 8192; s *= 2) { /* squares at 500 and 700 TFLOP/s */
        double t = 2.0 * s * s * s / (s == 4096 ? 700e12 : 500e12);
        fprintf(f, "{\"bench\":\"gemm\",\"device\":\"T\",\"path\":\"gpu0\",\"mode\":\"square\",\"dtype\":\"fp8\","
                   "\"m\":%d,\"n\":%d,\"k\":%d,\"size_bytes\":1,\"iters\":1,\"median\":%.9g,\"min\":%.9g,"
                   "\"max\":%.9g,\"unit\":\"ms\"}\n",
                s, s, s, t * 1e3, t * 1e3, t * 1e3);
    }
    fclose(f);
    calib_fit_set *s;
    calib_params p, q;
    solve_file(tmp, &s, &p);
    const calib_gemm *g = &p.gemm[CALIB_GEMM_BF16];
    CU_ASSERT_EQUAL(g->k0, GEMM_K0);
    ASSERT_REL(g->eff_Fps, GEMM_E, 1e-6);
    CU_ASSERT(g->max_pct < 1e-4);
    CU_ASSERT_EQUAL(g->npoints, (int)G_N_ELEMENTS(ks));
    CU_ASSERT(isnan(g->peak_Fps)); /* no bf16 square */
    ASSERT_REL(p.gemm[CALIB_GEMM_FP8].peak_Fps, 700e12, 1e-6);
    CU_ASSERT(isnan(p.gemm[CALIB_GEMM_FP8].eff_Fps)); /* squares only: no shape fit */
    ASSERT_REL(calib_gemm_time(g, 4096, 2048, 512), 2.0 * 4096 * 2048 * 512 / (GEMM_E * 512 / 768.0), 1e-6);
    /* round trip */
    char *json = calib_params_to_json(&p);
    GError *err = NULL;
    CU_ASSERT_FATAL(g_file_set_contents(tmp, json, -1, NULL));
    CU_ASSERT_FATAL(calib_params_load(tmp, &q, &err));
    ASSERT_REL(q.gemm[CALIB_GEMM_BF16].eff_Fps, GEMM_E, 1e-6);
    CU_ASSERT_EQUAL(q.gemm[CALIB_GEMM_BF16].k0, GEMM_K0);
    ASSERT_REL(q.gemm[CALIB_GEMM_FP8].peak_Fps, 700e12, 1e-6);
    CU_ASSERT(isnan(q.gemm[CALIB_GEMM_TF32].peak_Fps));
    calib_params_clear(&q);
    /* a bad gemm block: the dtype and the file named */
    g_file_set_contents(tmp, "{\"gemm\": {\"bf16\": {\"eff_Fps\": 1e14}}}", -1, NULL);
    CU_ASSERT_FALSE(calib_params_load(tmp, &q, &err));
    CU_ASSERT(g_error_matches(err, CALIB_ERROR, CALIB_ERROR_VALUE));
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err->message, "gemm.bf16") : NULL);
    g_clear_error(&err);
    g_free(json);
    g_unlink(tmp);
    g_free(tmp);
    calib_params_clear(&p);
    calib_fit_set_free(s);
}

/* An nccl-tests log written by our writer with t = 20 us + S / 100 GB/s:
 * the per-collective latency and algbw come back within 1% (printed times
 * have 4 significant digits); with an all_gather run (10 us + S / 50 GB/s)
 * appended to the file, both. */
static void rows_fill(nccltests_row *rows, int n, double alpha_s, double beta_Bps)
{
    for (int i = 0; i < n; i++) {
        uint64_t S = 8ull << (2 * i);
        rows[i] = (nccltests_row){.size_bytes = S, .count = S / 4};
        rows[i].time_us[0] = rows[i].time_us[1] = (alpha_s + S / beta_Bps) * 1e6;
    }
}

static void test_nccltests_log_gives_collective_latency(void)
{
    nccltests_row rows[13];
    rows_fill(rows, 13, 20e-6, 100e9);
    nccltests_device dev[2] = {{0, 0, 1, "h", 0, 0, 0x18, 0, "NVIDIA H200"}, {1, 0, 1, "h", 1, 0, 0x2a, 0, "NVIDIA H200"}};
    nccltests_sweep sw = {.coll = COLL_ALL_REDUCE, .dtype = NCCLTESTS_FLOAT, .redop = NCCLTESTS_OP_SUM, .root = -1,
                          .nranks = 2, .version = "2.19.6", .nccl_code = 21903, .nthreads = 1, .ngpus = 2,
                          .min_bytes = 8, .max_bytes = rows[12].size_bytes, .step_factor = 4, .warmup_iters = 1,
                          .iters = 20, .agg_iters = 1, .validation = 1, .devices = dev, .ndevices = 2,
                          .rows = rows, .nrows = 13};
    char *tmp = NULL;
    int fd = g_file_open_tmp("calib-XXXXXX.log", &tmp, NULL);
    CU_ASSERT_FATAL(fd >= 0);
    FILE *f = fdopen(fd, "w");
    nccltests_write(f, &sw);
    fclose(f);
    calib_fit_set *s;
    calib_params p;
    solve_file(tmp, &s, &p);
    CU_ASSERT_EQUAL(p.ncollectives, 1);
    const calib_path *c = calib_params_find(&p, "nccl/all_reduce/2r/float");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->nranks, 2);
    ASSERT_REL(c->alpha_s, 20e-6, 0.01);
    ASSERT_REL(c->beta_Bps, 100e9, 0.01);
    calib_params_clear(&p);
    calib_fit_set_free(s);

    /* A log of several runs one after another (a job script's all_reduce_perf then all_gather_perf):
     * each run is its own group. Until 2026-12-02 such a log was refused. */
    rows_fill(rows, 13, 10e-6, 50e9);
    f = fopen(tmp, "a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    sw.coll = COLL_ALL_GATHER;
    nccltests_write(f, &sw);
    fclose(f);
    solve_file(tmp, &s, &p);
    CU_ASSERT_EQUAL(p.ncollectives, 2);
    c = calib_params_find(&p, "nccl/all_reduce/2r/float");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    ASSERT_REL(c->alpha_s, 20e-6, 0.01);
    c = calib_params_find(&p, "nccl/all_gather/2r/float");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    ASSERT_REL(c->alpha_s, 10e-6, 0.01);
    ASSERT_REL(c->beta_Bps, 50e9, 0.01);
    calib_params_clear(&p);
    calib_fit_set_free(s);
    g_unlink(tmp);
    g_free(tmp);
}

/* A real measured log (tests/data/nccltests/15-..., provenance in its #!
 * header): the collective latency alpha is the small-size floor the log
 * shows, 34.84..37.48 us for 8 B..64 KiB. */
static void test_real_nccltests_log_latency(void)
{
    calib_fit_set *s;
    calib_params p;
    solve_file("tests/data/nccltests/15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt", &s, &p);
    const calib_path *c = calib_params_find(&p, "nccl/all_reduce/8r/float");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(c->alpha_s >= 34.84e-6 && c->alpha_s <= 37.48e-6);
    CU_ASSERT_EQUAL(c->nranks, 8);
    calib_params_clear(&p);
    calib_fit_set_free(s);
}

int main(void)
{
    static const test_case cases[] = {
        {"test_fit_line_exact_points_give_exact_params", test_fit_line_exact_points_give_exact_params},
        {"test_fit_line_refuses_one_size_and_flat_slope", test_fit_line_refuses_one_size_and_flat_slope},
        {"test_fit_line_drops_an_outlier", test_fit_line_drops_an_outlier},
        {"test_synthetic_file_recovers_known_alpha_beta", test_synthetic_file_recovers_known_alpha_beta},
        {"test_params_json_round_trip", test_params_json_round_trip},
        {"test_gemm_fit_recovers_shape_model", test_gemm_fit_recovers_shape_model},
        {"test_bad_inputs_name_code_and_line", test_bad_inputs_name_code_and_line},
        {"test_fit_outside_params_bounds_is_refused", test_fit_outside_params_bounds_is_refused},
        {"test_long_names_stay_apart", test_long_names_stay_apart},
        {"test_nccltests_log_gives_collective_latency", test_nccltests_log_gives_collective_latency},
        {"test_real_nccltests_log_latency", test_real_nccltests_log_latency},
        {NULL, NULL},
    };
    return test_main("calibrate", cases);
}

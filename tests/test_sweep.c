/* Tests of traces/sweep_spec (spec parsing, grid expansion, CSV writer and
 * resume) and, through the built binary next to this test
 * (BUILD/tests/.. /conveyor), of `conveyor sweep` itself: the same CSV
 * whatever the thread count, resume after a simulated crash, a failed
 * point, --plot errors. Run from the repository root. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>

#include "testutil.h"
#include "traces/sweep_spec.h"

#define DATA "tests/data/sweep/"
#define BAD "tests/bad_input/sweep/"

/* ---- a stand-in base: same name and parameters as cli's collective ---- */

static const char *const params[] = {"topo", "nodes", "gpus", "fabric", "set", "launch_us", "op",
                                     "minbytes", "maxbytes", "stepfactor", NULL};
static const char *const figures[] = {"busbw_at_max", "avg_busbw", "time_us_at_max", "nranks", "algo_at_max", NULL};

static bool fake_run(const sweep_point *p, const int *fig, size_t nfig, char **out, GError **err)
{
    (void)err;
    for (size_t i = 0; i < nfig; i++)
        out[i] = g_strdup_printf("%s/%d", sweep_point_get(p, "topo"), fig[i]);
    return true;
}

static const sweep_base fake = {.name = "collective", .summary = "test", .params = params, .figures = figures,
                                .run = fake_run};
static const sweep_base *const fakes[] = {&fake};
static const char *const planned[] = {"studies", NULL};
static const sweep_catalog cat = {.bases = fakes, .nbases = 1, .planned = planned};

/* ---- grid ---------------------------------------------------------------- */

static void test_grid_last_axis_varies_fastest(void)
{
    GError *err = NULL;
    sweep_spec *s = sweep_spec_load(DATA "small.json", &cat, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->npoints, 2 * 2 * 3); /* nodes x nic.gbps x oversubscription 1,2,4 */
    CU_ASSERT_EQUAL(s->fig->len, 5);
    /* index = ((nodes_i * 2) + nic_i) * 3 + os_i */
    sweep_point *p = sweep_spec_point(s, 1 * 6 + 1 * 3 + 2);
    CU_ASSERT_STRING_EQUAL(sweep_point_get(p, "nodes"), "2");
    CU_ASSERT_STRING_EQUAL(sweep_point_get(p, "topo"), "dgx-a100");
    CU_ASSERT_STRING_EQUAL(sweep_point_get(p, "stepfactor"), "4");
    CU_ASSERT_PTR_NULL(sweep_point_get(p, "gpus"));
    CU_ASSERT_STRING_EQUAL(p->sets[0], "nic.gbps=200");
    CU_ASSERT_STRING_EQUAL(p->sets[1], "oversubscription=4");
    CU_ASSERT_PTR_NULL(p->sets[2]);
    sweep_point_free(p);
    CU_ASSERT_STRING_EQUAL(sweep_spec_axis_value(s, 0, 0), "1");
    CU_ASSERT_STRING_EQUAL(sweep_spec_axis_value(s, 0, 2), "1");
    CU_ASSERT_STRING_EQUAL(sweep_spec_axis_value(s, 4, 2), "2");
    CU_ASSERT_STRING_EQUAL(sweep_spec_axis_value(s, 4, 1), "200");
    CU_ASSERT_STRING_EQUAL(sweep_spec_axis_value(s, 5, 0), "1");
    CU_ASSERT_STRING_EQUAL(sweep_spec_axis_value(s, 6, 0), "2");
    sweep_spec_free(s);
}

/* An axis's values are exactly want[0..n) (as printed). */
static void assert_values(const GPtrArray *v, const char *const *want, guint n)
{
    CU_ASSERT_EQUAL_FATAL(v->len, n);
    for (guint i = 0; i < n; i++)
        CU_ASSERT_STRING_EQUAL(v->pdata[i], want[i]);
}

static void test_ranges_expand_inclusively(void)
{
    GError *err = NULL;
    sweep_spec *s = sweep_spec_load(DATA "ranges.json", &cat, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    GPtrArray *os = s->axis_values->pdata[0], *lu = s->axis_values->pdata[1];
    const char *want_os[] = {"1", "3", "9"}, *want_lu[] = {"0.5", "0.75", "1", "1.25", "1.5"};
    assert_values(os, want_os, 3);
    assert_values(lu, want_lu, 5);
    CU_ASSERT_EQUAL(s->npoints, 3 * 5 * 2);
    CU_ASSERT_EQUAL(s->fig->len, 5); /* no "figures": all of the base's */
    sweep_point *p = sweep_spec_point(s, 0);
    CU_ASSERT_STRING_EQUAL(p->sets[0], "p2p=on"); /* fixed sets first */
    CU_ASSERT_STRING_EQUAL(p->sets[1], "oversubscription=1");
    sweep_point_free(p);
    sweep_spec_free(s);
}

/* Numbers print as written: shortest round trip for listed values (0.1, not
 * 0.10000000000000001), twelve digits for a range's sums (0.3, not
 * 0.30000000000000004). */
static void test_decimal_values_print_as_written(void)
{
    GError *err = NULL;
    sweep_spec *s = sweep_spec_load(DATA "decimals.json", &cat, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    GPtrArray *nic = s->axis_values->pdata[0], *lu = s->axis_values->pdata[1];
    const char *want_nic[] = {"0.1", "1e-07", "2.5"}, *want_lu[] = {"0", "0.1", "0.2", "0.3"};
    assert_values(nic, want_nic, 3);
    assert_values(lu, want_lu, 4);
    GPtrArray *mb = s->axis_values->pdata[2];
    CU_ASSERT_EQUAL_FATAL(mb->len, 3);
    CU_ASSERT_STRING_EQUAL(mb->pdata[2], "1099511627776"); /* not rounded to 12 digits */
    sweep_spec_free(s);
}

/* A range ends at "to" even when its step is a billionth of its values
 * (1e9 to 1e9 + 2 by 1 used to add 1e9 + 3: the slack was 1e-9 of the
 * values, not a fraction of the step). */
static void test_range_stops_at_to(void)
{
    GError *err = NULL;
    sweep_spec *s = sweep_spec_load(DATA "range-last-point.json", &cat, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    const char *want_mb[] = {"1000000000", "1000000001", "1000000002"};
    assert_values(s->axis_values->pdata[0], want_mb, 3);
    GPtrArray *lu = s->axis_values->pdata[1]; /* 1.0000000001^k for k = 0..10 */
    CU_ASSERT_EQUAL_FATAL(lu->len, 11);
    CU_ASSERT_STRING_EQUAL(lu->pdata[1], "1.0000000001");
    CU_ASSERT_STRING_EQUAL(lu->pdata[10], "1.000000001");
    sweep_spec_free(s);
}

/* ---- bad specs: code and line ---------------------------------------------- */

static void test_bad_specs_report_code_and_line(void)
{
    static const struct {
        const char *file;
        int code, line;
        const char *words;
    } cases[] = {
        {"unknown_key.json", SWEEP_ERROR_SCHEMA, 4, "$.varry: unknown key"},
        {"unknown_arg.json", SWEEP_ERROR_SCHEMA, 3, "$.args.topology: unknown key"},
        {"empty_list.json", SWEEP_ERROR_VALUE, 5, "empty list"},
        {"empty_range.json", SWEEP_ERROR_VALUE, 5, "empty range"},
        {"zero_step.json", SWEEP_ERROR_VALUE, 5, "step must be > 0"},
        {"range_without_step.json", SWEEP_ERROR_SCHEMA, 5, "exactly one of"},
        {"vary_not_a_list.json", SWEEP_ERROR_SCHEMA, 5, "expected a list"},
        {"arg_wrong_type.json", SWEEP_ERROR_SCHEMA, 4, "$.args.nodes: expected a string or a number"},
        {"set_not_a_list.json", SWEEP_ERROR_SCHEMA, 3, "$.args.set"},
        {"unknown_parameter.json", SWEEP_ERROR_PARAM, 5, "$.vary.link_speed: unknown parameter"},
        {"unknown_figure.json", SWEEP_ERROR_PARAM, 5, "$.figures[1]: unknown figure 'goodput'"},
        {"unknown_base.json", SWEEP_ERROR_BASE, 2, "unknown base command 'train'"},
        {"base_not_available.json", SWEEP_ERROR_BASE, 2, "'studies' is not available yet"},
        {"missing_base.json", SWEEP_ERROR_SCHEMA, 1, "missing \"base\""},
        {"fixed_and_varied.json", SWEEP_ERROR_VALUE, 5, "also fixed in $.args"},
        {"duplicate_value.json", SWEEP_ERROR_VALUE, 5, "$.vary.nodes[2]: duplicate value"},
        {"vary_set_without_key.json", SWEEP_ERROR_PARAM, 5, "set.KEY"},
        {"truncated.json", SWEEP_ERROR_PARSE, 5, "truncated"},
        {"range_values_not_distinct.json", SWEEP_ERROR_VALUE, 5, "$.vary.launch_us: values 0 and 1 are both 1"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = g_strconcat(BAD, cases[i].file, NULL);
        GError *err = NULL;
        sweep_spec *s = sweep_spec_load(path, &cat, &err);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT_PTR_NOT_NULL_FATAL(err);
        int line = 0, col = 0;
        size_t pl = strlen(path);
        bool positioned = !strncmp(err->message, path, pl) && sscanf(err->message + pl, ":%d:%d:", &line, &col) == 2;
        if (!g_error_matches(err, SWEEP_ERROR, cases[i].code) || !positioned || line != cases[i].line ||
            !strstr(err->message, cases[i].words))
            fprintf(stderr, "\n%s: code %d line %d: %s\n", cases[i].file, err->code, line, err->message);
        CU_ASSERT(g_error_matches(err, SWEEP_ERROR, cases[i].code));
        CU_ASSERT(positioned);
        CU_ASSERT_EQUAL(line, cases[i].line);
        CU_ASSERT_PTR_NOT_NULL(strstr(err->message, cases[i].words));
        g_error_free(err);
        sweep_spec_free(s);
    }
}

/* ---- CSV ------------------------------------------------------------------- */

static void test_csv_quotes_and_splits_back(void)
{
    sweep_spec *s = sweep_spec_load(DATA "ranges.json", &cat, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    g_autofree char *h = sweep_csv_header(s);
    CU_ASSERT_STRING_EQUAL(h, "point,set.oversubscription,launch_us,fabric,busbw_at_max,avg_busbw,time_us_at_max,"
                              "nranks,algo_at_max\n");
    char *figs[] = {"1", "2", "x,y", "4", "Ring", NULL};
    g_autofree char *row = sweep_csv_row(s, 1, figs); /* fabric is the last axis: point 1 has "c \"d\"" */
    CU_ASSERT_STRING_EQUAL(row, "1,1,0.5,\"c \"\"d\"\"\",1,2,\"x,y\",4,Ring\n");
    g_auto(GStrv) f = sweep_csv_split(row, strlen(row) - 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(g_strv_length(f), 9);
    CU_ASSERT_STRING_EQUAL(f[3], "c \"d\"");
    CU_ASSERT_STRING_EQUAL(f[6], "x,y");
    g_autofree char *row0 = sweep_csv_row(s, 0, figs);
    CU_ASSERT(g_str_has_prefix(row0, "0,1,0.5,\"a,b\","));
    sweep_spec_free(s);
}

static char *file_text(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    char *buf = g_malloc0((size_t)n + 1);
    rewind(f);
    CU_ASSERT_EQUAL(fread(buf, 1, (size_t)n, f), (size_t)n);
    fseek(f, 0, SEEK_END);
    return buf;
}

static void test_writer_holds_rows_until_earlier_ones_are_out(void)
{
    FILE *f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    sweep_csv_writer *w = sweep_csv_writer_new(f, 1, 5); /* point 0 already in the file */
    CU_ASSERT(sweep_csv_writer_put(w, 3, g_strdup("r3\n")));
    CU_ASSERT(sweep_csv_writer_put(w, 2, g_strdup("r2\n")));
    char *t = file_text(f);
    CU_ASSERT_STRING_EQUAL(t, ""); /* 1 is missing: nothing may go out */
    g_free(t);
    CU_ASSERT_EQUAL(sweep_csv_writer_next(w), 1);
    CU_ASSERT(sweep_csv_writer_put(w, 1, g_strdup("r1\n")));
    t = file_text(f);
    CU_ASSERT_STRING_EQUAL(t, "r1\nr2\nr3\n");
    g_free(t);
    CU_ASSERT(sweep_csv_writer_put(w, 4, g_strdup("r4\n")));
    CU_ASSERT_EQUAL(sweep_csv_writer_next(w), 5);
    sweep_csv_writer_free(w);
    fclose(f);
}

/* A CSV holding the header and rows 0..k-1 of small.json (fake figures). */
static char *partial_csv(const sweep_spec *s, size_t k, const char *tail)
{
    GString *g = g_string_new(NULL);
    g_autofree char *h = sweep_csv_header(s);
    g_string_append(g, h);
    char *figs[] = {"1", "2", "3", "4", "Ring", NULL};
    for (size_t i = 0; i < k; i++) {
        g_autofree char *r = sweep_csv_row(s, i, figs);
        g_string_append(g, r);
    }
    g_string_append(g, tail);
    return g_string_free(g, FALSE);
}

/* A path in this run's own temporary directory: two test runs on one
 * machine (make test beside a CI clone's) used to write the same
 * /tmp/conveyor-test-sweep-*.csv and fail each other's checks. */
static char *tmp_dir;
static char *tmp_path(const char *name)
{
    if (!tmp_dir)
        tmp_dir = g_dir_make_tmp("conveyor-test-sweep-XXXXXX", NULL);
    return g_build_filename(tmp_dir ? tmp_dir : g_get_tmp_dir(), name, NULL);
}

static void test_resume_counts_prefix_and_drops_cut_line(void)
{
    sweep_spec *s = sweep_spec_load(DATA "small.json", &cat, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    g_autofree char *path = tmp_path("conveyor-test-sweep-resume.csv");
    g_autofree char *text = partial_csv(s, 4, "4,1,200,2,19"); /* killed mid-row */
    CU_ASSERT(g_file_set_contents(path, text, -1, NULL));
    GError *err = NULL;
    CU_ASSERT_EQUAL(sweep_csv_resume(s, path, &err), 4);
    CU_ASSERT_PTR_NULL(err);
    g_autofree char *after = NULL;
    CU_ASSERT(g_file_get_contents(path, &after, NULL, NULL));
    CU_ASSERT_EQUAL(strlen(after), strlen(text) - strlen("4,1,200,2,19"));
    g_unlink(path);
    CU_ASSERT_EQUAL(sweep_csv_resume(s, path, &err), 0); /* no file: nothing done */
    CU_ASSERT_PTR_NULL(err);
    sweep_spec_free(s);
}

static void test_resume_rejects_a_file_of_another_spec(void)
{
    sweep_spec *s = sweep_spec_load(DATA "small.json", &cat, NULL);
    sweep_spec *other = sweep_spec_load(DATA "ranges.json", &cat, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(other);
    g_autofree char *path = tmp_path("conveyor-test-sweep-other.csv");
    static const struct {
        const char *what;
        int line;
    } cases[] = {{"header", 1}, {"values", 3}, {"order", 4}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = NULL;
        if (i == 0) {
            text = partial_csv(other, 0, "");
        } else {
            g_autofree char *ok = partial_csv(s, 1, "");
            text = g_strconcat(ok, i == 1 ? "1,1,100,4,1,2,3,4,Ring\n" /* point 1 has oversubscription 2 */
                                          : "1,1,100,2,1,2,3,4,Ring\n0,1,100,1,1,2,3,4,Ring\n",
                               NULL);
        }
        CU_ASSERT(g_file_set_contents(path, text, -1, NULL));
        GError *err = NULL;
        CU_ASSERT_EQUAL(sweep_csv_resume(s, path, &err), -1);
        CU_ASSERT(g_error_matches(err, SWEEP_ERROR, SWEEP_ERROR_RESUME));
        g_autofree char *where = g_strdup_printf("%s:%d:", path, cases[i].line);
        CU_ASSERT(err && g_str_has_prefix(err->message, where));
        g_clear_error(&err);
    }
    g_unlink(path);
    sweep_spec_free(s);
    sweep_spec_free(other);
}

/* ---- the command, through the binary ---------------------------------------- */

/* BUILD/conveyor for this test's BUILD/tests/test_sweep. */
static char *conveyor_path(void)
{
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    g_autofree char *tests = g_path_get_dirname(exe);
    g_autofree char *build = g_path_get_dirname(tests);
    return g_build_filename(build, "conveyor", NULL);
}

/* Run `conveyor sweep ARGS...`; returns the exit code, *err_out the stderr. */
static int sweep_cli(char **err_out, ...)
{
    GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(argv, conveyor_path());
    g_ptr_array_add(argv, g_strdup("sweep"));
    va_list ap;
    va_start(ap, err_out);
    for (const char *a; (a = va_arg(ap, const char *));)
        g_ptr_array_add(argv, g_strdup(a));
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    int status = -1;
    char *err = NULL;
    gboolean ok = g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                               &status, NULL);
    g_ptr_array_unref(argv);
    if (err_out)
        *err_out = err;
    else
        g_free(err);
    return ok && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *slurp(const char *path)
{
    char *t = NULL;
    if (!g_file_get_contents(path, &t, NULL, NULL))
        return g_strdup("");
    return t;
}

static void test_cli_same_csv_whatever_the_thread_count(void)
{
    g_autofree char *a = tmp_path("conveyor-test-sweep-j1.csv"), *b = tmp_path("conveyor-test-sweep-j3.csv");
    CU_ASSERT_EQUAL(sweep_cli(NULL, DATA "small.json", "-j", "1", "-o", a, NULL), 0);
    CU_ASSERT_EQUAL(sweep_cli(NULL, DATA "small.json", "-j", "3", "-o", b, NULL), 0);
    g_autofree char *ta = slurp(a), *tb = slurp(b);
    CU_ASSERT_STRING_EQUAL(ta, tb);
    g_auto(GStrv) lines = g_strsplit(ta, "\n", -1);
    CU_ASSERT_EQUAL_FATAL(g_strv_length(lines), 1 + 12 + 1); /* header, 12 points, "" after the last \n */
    for (int i = 1; i <= 12; i++) {
        g_auto(GStrv) f = g_strsplit(lines[i], ",", -1);
        CU_ASSERT_EQUAL_FATAL(g_strv_length(f), 9 + 4); /* and busbw_at_max's band: lo, hi, regime, kind */
        CU_ASSERT_EQUAL(atoi(f[0]), i - 1);            /* grid order */
        CU_ASSERT(g_ascii_strtod(f[9], NULL) < g_ascii_strtod(f[4], NULL) && g_ascii_strtod(f[4], NULL) < g_ascii_strtod(f[10], NULL));
        CU_ASSERT_EQUAL(atoi(f[7]), 8 * atoi(f[1]));   /* nranks = 8 GPUs x nodes */
        CU_ASSERT(g_ascii_strtod(f[4], NULL) > 0);
    }
    /* one server uses no NIC: its figures cannot depend on NIC speed or oversubscription */
    for (int i = 2; i <= 6; i++) {
        g_auto(GStrv) f0 = g_strsplit(lines[1], ",", -1), fi = g_strsplit(lines[i], ",", -1);
        CU_ASSERT_STRING_EQUAL(f0[4], fi[4]);
        CU_ASSERT_STRING_EQUAL(f0[6], fi[6]);
    }
    g_unlink(a);
    g_unlink(b);
}

static void test_cli_resume_after_crash_matches_full_run(void)
{
    g_autofree char *full = tmp_path("conveyor-test-sweep-full.csv"), *part = tmp_path("conveyor-test-sweep-part.csv");
    CU_ASSERT_EQUAL_FATAL(sweep_cli(NULL, DATA "small.json", "-j", "2", "-o", full, NULL), 0);
    g_autofree char *tf = slurp(full);
    /* the crash: header, 5 rows and half of the 6th */
    const char *cut = tf;
    for (int nl = 0; nl < 6; cut++)
        nl += *cut == '\n';
    size_t keep = (size_t)(cut - tf) + 7;
    CU_ASSERT(g_file_set_contents(part, tf, (gssize)keep, NULL));
    CU_ASSERT_EQUAL(sweep_cli(NULL, DATA "small.json", "-j", "2", "--resume", "-o", part, NULL), 0);
    g_autofree char *tp = slurp(part);
    CU_ASSERT_STRING_EQUAL(tp, tf);
    /* resuming a finished sweep changes nothing */
    CU_ASSERT_EQUAL(sweep_cli(NULL, DATA "small.json", "--resume", "-o", part, NULL), 0);
    g_autofree char *tp2 = slurp(part);
    CU_ASSERT_STRING_EQUAL(tp2, tf);
    g_unlink(full);
    g_unlink(part);
}

static void test_cli_failed_point_keeps_earlier_rows(void)
{
    g_autofree char *out = tmp_path("conveyor-test-sweep-fail.csv");
    g_autofree char *err = NULL;
    CU_ASSERT_EQUAL(sweep_cli(&err, DATA "failing.json", "-j", "2", "-o", out, NULL), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "point 1 (set.nic.gbps=99999)"));
    g_autofree char *t = slurp(out);
    g_auto(GStrv) lines = g_strsplit(t, "\n", -1);
    CU_ASSERT_EQUAL(g_strv_length(lines), 3); /* header, point 0, "" */
    CU_ASSERT(g_str_has_prefix(lines[1], "0,100,"));
    g_unlink(out);
}

static void test_cli_bad_spec_and_plot_errors_exit_2(void)
{
    g_autofree char *e1 = NULL, *e2 = NULL, *e3 = NULL;
    CU_ASSERT_EQUAL(sweep_cli(&e1, BAD "base_not_available.json", NULL), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(e1, BAD "base_not_available.json:2:"));
    CU_ASSERT_EQUAL(sweep_cli(&e2, BAD "unknown_parameter.json", NULL), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(e2, "accepted: topo, nodes"));
    g_autofree char *csv = tmp_path("conveyor-test-sweep-plot.csv"), *svg = tmp_path("conveyor-test-sweep-plot.svg");
    CU_ASSERT(g_file_set_contents(csv, "point,nodes,busbw_at_max\n0,1,10.5\n1,2,20.25\n", -1, NULL));
    CU_ASSERT_EQUAL(sweep_cli(&e3, "--plot", "nodes,goodput", csv, "-o", svg, NULL), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(e3, "no column 'goodput'"));
    g_unlink(csv);
}

static void test_cli_plot_draws_one_line_per_series(void)
{
    g_autofree char *csv = tmp_path("conveyor-test-sweep-plot2.csv"), *svg = tmp_path("conveyor-test-sweep-plot2.svg");
    CU_ASSERT(g_file_set_contents(csv, "point,nic,os,bw\n0,200,1,10\n1,200,2,8\n2,400,1,20\n3,400,2,15\n", -1, NULL));
    g_autofree char *err = NULL;
    CU_ASSERT_EQUAL(sweep_cli(&err, "--plot", "os,bw,nic", csv, "-o", svg, NULL), 0);
    g_autofree char *t = slurp(svg);
    CU_ASSERT(g_str_has_prefix(t, "<?xml") || strstr(t, "<svg") != NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "nic=200"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t, "nic=400"));
    g_unlink(csv);
    g_unlink(svg);
}

/* Band columns (sweep_base.bands) go after the figures, each only with its
 * figure, the label after any of them. */
static const char *const bands[] = {"busbw_at_max_lo80", "busbw_at_max_hi80", "time_lo80", "band_kind", NULL};
static const int band_of[] = {0, 0, 2, -1};
static const sweep_base banded = {.name = "collective", .summary = "test", .params = params, .figures = figures,
                                  .bands = bands, .band_of = band_of, .run = fake_run};
static const sweep_base *const bandeds[] = {&banded};
static const sweep_catalog bcat = {.bases = bandeds, .nbases = 1, .planned = planned};

static void test_band_columns_follow_their_figures(void)
{
    sweep_spec *s = sweep_spec_load(DATA "ranges.json", &bcat, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    g_autofree char *h = sweep_csv_header(s); /* ranges.json: every figure, by default */
    CU_ASSERT(g_str_has_prefix(h, "point,set.oversubscription,launch_us,fabric,busbw_at_max,avg_busbw,"));
    CU_ASSERT(g_str_has_suffix(h, "algo_at_max,busbw_at_max_lo80,busbw_at_max_hi80,time_lo80,band_kind\n"));
    CU_ASSERT_STRING_EQUAL(sweep_column_name(&banded, g_array_index(s->fig, int, s->fig->len - 1)), "band_kind");
    sweep_spec_free(s);
}

int main(void)
{
    static const test_case cases[] = {
        {"/sweep/grid/last-axis-fastest", test_grid_last_axis_varies_fastest},
        {"/sweep/grid/ranges-inclusive", test_ranges_expand_inclusively},
        {"/sweep/spec/decimal-values-print-as-written", test_decimal_values_print_as_written},
        {"/sweep/spec/bad-code-and-line", test_bad_specs_report_code_and_line},
        {"/sweep/spec/range-stops-at-to", test_range_stops_at_to},
        {"/sweep/csv/quote-and-split", test_csv_quotes_and_splits_back},
        {"/sweep/csv/band-columns-last", test_band_columns_follow_their_figures},
        {"/sweep/csv/writer-order", test_writer_holds_rows_until_earlier_ones_are_out},
        {"/sweep/csv/resume-prefix-cut-line", test_resume_counts_prefix_and_drops_cut_line},
        {"/sweep/csv/resume-other-spec", test_resume_rejects_a_file_of_another_spec},
        {"/sweep/cli/threads-identical", test_cli_same_csv_whatever_the_thread_count},
        {"/sweep/cli/resume-after-crash", test_cli_resume_after_crash_matches_full_run},
        {"/sweep/cli/failed-point", test_cli_failed_point_keeps_earlier_rows},
        {"/sweep/cli/errors-exit-2", test_cli_bad_spec_and_plot_errors_exit_2},
        {"/sweep/cli/plot-series", test_cli_plot_draws_one_line_per_series},
        {NULL, NULL},
    };
    int rc = test_main("sweep", cases);
    if (tmp_dir) { /* what the tests left there */
        GDir *d = g_dir_open(tmp_dir, 0, NULL);
        for (const char *n; d && (n = g_dir_read_name(d));) {
            g_autofree char *f = g_build_filename(tmp_dir, n, NULL);
            g_unlink(f);
        }
        if (d)
            g_dir_close(d);
        g_rmdir(tmp_dir);
        g_free(tmp_dir);
    }
    return rc;
}

/* Tests of topologies/accuracy: the regime a system's collectives are
 * grouped by, parsing the bands files (and their errors), the ranges a band
 * puts around a predicted rate and time, and the shipped files. */
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "topologies/accuracy.h"
#include "topologies/topo.h"

/* the regime of `name` on `nodes` servers, of a group spanning `span` of
 * them (0: all, acc_regime_of) */
static acc_regime regime_span(const char *name, int nodes, int span)
{
    GError *e = NULL;
    topo_opts o = {.nodes = nodes};
    topo *t = topo_load(name, &o, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    coll_system sys;
    topo_coll_system(&sys, t, 0, 1);
    acc_regime r = span ? acc_regime_span(&sys, span) : acc_regime_of(&sys);
    topo_free(t);
    return r;
}

static acc_regime regime(const char *name, int nodes) { return regime_span(name, nodes, 0); }

/* The regimes of the validation's systems: NVSwitch and NVLink-mesh
 * servers and a multi-tray NVLink domain are nvlink, PCIe boxes pcie,
 * servers joined by NICs network. */
static void test_accuracy_regimes(void)
{
    CU_ASSERT_EQUAL(regime("dgx-h100", 1), ACC_NVLINK);
    CU_ASSERT_EQUAL(regime("dgx1-v100", 1), ACC_NVLINK);
    CU_ASSERT_EQUAL(regime("gb200-nvl72", 2), ACC_NVLINK);
    CU_ASSERT_EQUAL(regime("pcie-gen3-2gpu", 1), ACC_PCIE);
    CU_ASSERT_EQUAL(regime("pcie-gen4-8gpu-2socket", 1), ACC_PCIE);
    CU_ASSERT_EQUAL(regime("dgx-a100", 4), ACC_NETWORK);
    CU_ASSERT_EQUAL(regime("aws-p5", 2), ACC_NETWORK);
    /* a replay's group inside one server of a networked system: the server's */
    CU_ASSERT_EQUAL(regime_span("dgx-a100", 4, 1), ACC_NVLINK);
    CU_ASSERT_EQUAL(regime_span("dgx-a100", 4, 2), ACC_NETWORK);
    CU_ASSERT_STRING_EQUAL(acc_regime_name(ACC_PCIE), "pcie");
    CU_ASSERT_EQUAL(acc_regime_from_name("network"), ACC_NETWORK);
    CU_ASSERT_EQUAL(acc_regime_from_name("ethernet"), -1);
}

static void test_accuracy_parse_and_ranges(void)
{
    const char *doc = "{\"bands\": ["
                      "{\"regime\": \"pcie\", \"min_bytes\": 0, \"max_bytes\": 1024, \"n\": 7, \"p10\": -0.2, \"p50\": 0, \"p90\": 0.25},"
                      "{\"regime\": \"pcie\", \"min_bytes\": 1024, \"n\": 9, \"p10\": 0.1, \"p50\": 0.2, \"p90\": 0.3},"
                      "{\"regime\": \"training\", \"n\": 18, \"p10\": -0.13, \"p50\": -0.04, \"p90\": 0.03},"
                      "{\"regime\": \"training-zero3\", \"n\": 6, \"p10\": -0.03, \"p50\": 0.09, \"p90\": 0.25}]}";
    GError *err = NULL;
    GArray *t = acc_parse(doc, "x.json", &err);
    double lo, hi;
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->len, 4);
    CU_ASSERT_EQUAL(g_array_index(t, acc_entry, 3).regime, -2);
    const acc_entry *e = &g_array_index(t, acc_entry, 1);
    CU_ASSERT_EQUAL(e->regime, ACC_PCIE);
    CU_ASSERT_EQUAL(e->min_bytes, 1024);
    CU_ASSERT_EQUAL(e->max_bytes, UINT64_MAX); /* no max: to the end */
    CU_ASSERT_EQUAL(g_array_index(t, acc_entry, 2).regime, -1);
    /* without lo/hi (an older file) the band is the in-sample p10-p90 */
    CU_ASSERT_FALSE(e->band.held_out);
    CU_ASSERT_DOUBLE_EQUAL(e->band.lo, 0.1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(e->band.hi, 0.3, 1e-12);
    g_array_unref(t);
    /* with them, the band printed is lo-hi (widened by leave-one-dataset-out, scripts/bands.awk) */
    t = acc_parse("{\"bands\": [{\"regime\": \"nvlink\", \"n\": 9, \"p10\": -0.1, \"p50\": 0, \"p90\": 0.2, "
                  "\"lo\": -0.3, \"hi\": 0.5}]}", "y.json", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    acc_band hb = g_array_index(t, acc_entry, 0).band;
    CU_ASSERT_TRUE(hb.held_out);
    acc_rate_range(100, &hb, &lo, &hi);
    ASSERT_REL(lo, 100 / 1.5, 1e-12);
    ASSERT_REL(hi, 100 / 0.7, 1e-12);
    g_array_unref(t);
    /* a prediction 25% high (p90) means the measured value was P/1.25 */
    acc_band b = {.n = 7, .e10 = -0.2, .e50 = 0, .e90 = 0.25, .lo = -0.2, .hi = 0.25};
    acc_rate_range(100, &b, &lo, &hi);
    ASSERT_REL(lo, 80, 1e-12);
    ASSERT_REL(hi, 125, 1e-12);
    /* a time moves the other way: rate error e is time ratio 1/(1+e) */
    acc_time_range(100, &b, &lo, &hi);
    ASSERT_REL(lo, 80, 1e-12);
    ASSERT_REL(hi, 125, 1e-12);
    b = (acc_band){.n = 1, .e10 = 0.1, .e50 = 0.2, .e90 = 0.3, .lo = 0.1, .hi = 0.3};
    acc_rate_range(130, &b, &lo, &hi);
    ASSERT_REL(lo, 100, 1e-12);
    ASSERT_REL(hi, 130 / 1.1, 1e-12);
}

static void expect_bad(const char *doc, const char *needle)
{
    GError *err = NULL;
    GArray *t = acc_parse(doc, "bad.json", &err);
    CU_ASSERT_PTR_NULL(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    if (!strstr(err->message, needle))
        fprintf(stderr, "expected '%s' in '%s'\n", needle, err->message);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, needle));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "bad.json"));
    g_error_free(err);
    if (t)
        g_array_unref(t);
}

static void test_accuracy_bad_files(void)
{
    expect_bad("{\"bands\": [", "not JSON");
    expect_bad("{\"band\": []}", "no \"bands\" array");
    expect_bad("{\"bands\": [{\"n\": 3}]}", "bands[0]: no \"regime\"");
    expect_bad("{\"bands\": [{\"regime\": \"ib\", \"n\": 3, \"p10\": 0, \"p50\": 0, \"p90\": 0}]}", "unknown \"ib\"");
    expect_bad("{\"bands\": [{\"regime\": \"pcie\", \"n\": 3, \"p50\": 0, \"p90\": 0}]}", "no \"p10\"");
    expect_bad("{\"bands\": [{\"regime\": \"pcie\", \"n\": 3, \"p10\": \"x\", \"p50\": 0, \"p90\": 0}]}", "p10: expected a number");
    expect_bad("{\"bands\": [{\"regime\": \"pcie\", \"n\": 3, \"p10\": 0.2, \"p50\": 0, \"p90\": 0.1}]}", "p10 <= p50 <= p90");
    expect_bad("{\"bands\": [{\"regime\": \"pcie\", \"n\": 0, \"p10\": 0, \"p50\": 0, \"p90\": 0}]}", "n >= 1");
    expect_bad("{\"bands\": [{\"regime\": \"pcie\", \"n\": 3, \"p10\": -1, \"p50\": 0, \"p90\": 0}]}", "-1 < p10");
    expect_bad("{\"bands\": [{\"regime\": \"pcie\", \"n\": 3, \"p10\": 0, \"p50\": 0, \"p90\": 0, \"lo\": -0.1}]}", "go together");
    expect_bad("{\"bands\": [{\"regime\": \"pcie\", \"n\": 3, \"p10\": 0, \"p50\": 0, \"p90\": 0, \"lo\": -1, \"hi\": 0}]}", "-1 < lo <= hi");
}

/* The shipped files (make validate writes them) parse, cover every regime
 * at every size, and contain the predictions' own errors' middle: p10 <= p90. */
static void test_accuracy_shipped_files(void)
{
    uint64_t sizes[] = {8, 65536, 1 << 20, 64ull << 20, 8ull << 30};
    for (int r = 0; r < ACC_REGIMES; r++)
        for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
            acc_band b;
            CU_ASSERT_TRUE(acc_coll_band((acc_regime)r, sizes[i], &b));
            CU_ASSERT(b.n >= 5);
            CU_ASSERT(b.e10 <= b.e50 && b.e50 <= b.e90);
            /* checked on left-out datasets, and no narrower than the in-sample p10-p90 */
            CU_ASSERT(b.held_out && b.lo <= b.e10 && b.hi >= b.e90);
        }
    for (int z3 = 0; z3 < 2; z3++) { /* the Megatron rows' band and the ZeRO-3 rows' */
        acc_band b;
        CU_ASSERT_TRUE(acc_training_band(z3, &b));
        CU_ASSERT(b.n >= 5);
        CU_ASSERT(b.e10 <= b.e50 && b.e50 <= b.e90);
        CU_ASSERT(b.held_out && b.lo <= b.e10 && b.hi >= b.e90);
    }
}

int main(void)
{
    static const test_case cases[] = {
        {"/accuracy/regimes", test_accuracy_regimes},
        {"/accuracy/parse-and-ranges", test_accuracy_parse_and_ranges},
        {"/accuracy/bad-files", test_accuracy_bad_files},
        {"/accuracy/shipped-files", test_accuracy_shipped_files},
        {NULL, NULL},
    };
    return test_main("accuracy", cases);
}

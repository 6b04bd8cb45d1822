/* Tests of traces/p2pmatrix: the three real p2pBandwidthLatencyTest logs,
 * the writer's layout, a round trip and bad input.  Run from the repo root. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "traces/p2pmatrix.h"

#define DATA "tests/data/nccltests/"

static void test_p2p_reads_dgx1_file11(void)
{
    GError *err = NULL;
    p2pmatrix_set *s = p2pmatrix_read(DATA "11-dgx1-v100-8gpu-hybridcubemesh-p2p-bidir-matrix.txt", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->ngpus, 8);
    CU_ASSERT_PTR_NOT_NULL(s->m[P2PMATRIX_CONNECTIVITY]);
    CU_ASSERT_PTR_NOT_NULL(s->m[P2PMATRIX_BI_BW_DISABLED]);
    CU_ASSERT_PTR_NOT_NULL(s->m[P2PMATRIX_BI_BW_ENABLED]);
    CU_ASSERT_PTR_NULL(s->m[P2PMATRIX_UNI_BW_DISABLED]);
    CU_ASSERT_PTR_NULL(s->m[P2PMATRIX_LAT_GPU_ENABLED]);
    CU_ASSERT_EQUAL(p2pmatrix_get(s, P2PMATRIX_CONNECTIVITY, 0, 4), 0);
    CU_ASSERT_EQUAL(p2pmatrix_get(s, P2PMATRIX_CONNECTIVITY, 0, 6), 1);
    ASSERT_REL(p2pmatrix_get(s, P2PMATRIX_BI_BW_ENABLED, 0, 3), 96.91, 1e-12);
    ASSERT_REL(p2pmatrix_get(s, P2PMATRIX_BI_BW_ENABLED, 7, 7), 770.84, 1e-12);
    ASSERT_REL(p2pmatrix_get(s, P2PMATRIX_BI_BW_DISABLED, 0, 1), 8.56, 1e-12);
    CU_ASSERT(isnan(p2pmatrix_get(s, P2PMATRIX_UNI_BW_ENABLED, 0, 0)));
    p2pmatrix_free(s);
}

static void test_p2p_reads_rtx4090_file13(void)
{
    p2pmatrix_set *s = p2pmatrix_read(DATA "13-rtx4090-8gpu-pcie-p2p-patched-driver-p2p-bidir-matrix.txt", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->ngpus, 8);
    int present = 0;
    for (int k = 0; k < P2PMATRIX_KINDS; k++)
        present += s->m[k] != NULL;
    CU_ASSERT_EQUAL(present, 1);
    ASSERT_REL(p2pmatrix_get(s, P2PMATRIX_BI_BW_ENABLED, 6, 0), 38.92, 1e-12);
    ASSERT_REL(p2pmatrix_get(s, P2PMATRIX_BI_BW_ENABLED, 0, 0), 916.92, 1e-12);
    p2pmatrix_free(s);
}

static void test_p2p_reads_all_matrices_file22(void)
{
    p2pmatrix_set *s = p2pmatrix_read(DATA "22-rtx2080ti-2gpu-pcie3-noP2P-p2pBandwidthLatencyTest.txt", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->ngpus, 2);
    for (int k = 0; k < P2PMATRIX_KINDS; k++)
        CU_ASSERT_PTR_NOT_NULL(s->m[k]);
    ASSERT_REL(p2pmatrix_get(s, P2PMATRIX_UNI_BW_DISABLED, 0, 1), 5.71, 1e-12);
    ASSERT_REL(p2pmatrix_get(s, P2PMATRIX_UNI_BW_ENABLED, 1, 1), 532.54, 1e-12);
    ASSERT_REL(p2pmatrix_get(s, P2PMATRIX_BI_BW_DISABLED, 0, 1), 6.12, 1e-12);
    ASSERT_REL(p2pmatrix_get(s, P2PMATRIX_LAT_GPU_DISABLED, 0, 1), 14.76, 1e-12);
    ASSERT_REL(p2pmatrix_get(s, P2PMATRIX_LAT_CPU_DISABLED, 1, 0), 10.48, 1e-12);
    ASSERT_REL(p2pmatrix_get(s, P2PMATRIX_LAT_GPU_ENABLED, 1, 0), 13.63, 1e-12);
    ASSERT_REL(p2pmatrix_get(s, P2PMATRIX_LAT_CPU_ENABLED, 1, 1), 3.27, 1e-12);
    CU_ASSERT(!s->p2p_reads);
    p2pmatrix_free(s);
}

static char *write_set(const p2pmatrix_set *s, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    p2pmatrix_write(f, s);
    fclose(f);
    return buf;
}

/* The sample's printf formats: "   D\\D" + "%6d " per column, rows "%6d "
 * + "%6.02f " per cell (trailing blank kept, as the sample prints it). */
static void test_p2p_writer_layout_by_hand(void)
{
    p2pmatrix_set *s = p2pmatrix_new(2);
    double *bw = p2pmatrix_ensure(s, P2PMATRIX_BI_BW_ENABLED);
    bw[0] = 533.34, bw[1] = 6.10, bw[2] = 6.1, bw[3] = 534.01;
    double *g = p2pmatrix_ensure(s, P2PMATRIX_LAT_GPU_DISABLED);
    double *c = p2pmatrix_ensure(s, P2PMATRIX_LAT_CPU_DISABLED);
    g[0] = 1.33, g[1] = 14.76, g[2] = 13.95, g[3] = 1.26;
    c[0] = 3.55, c[1] = 11.08, c[2] = 10.48, c[3] = 3.32;
    size_t len;
    char *out = write_set(s, &len);
    const char *want = "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n"
                       "   D\\D     0      1 \n"
                       "     0 533.34   6.10 \n"
                       "     1   6.10 534.01 \n"
                       "P2P=Disabled Latency Matrix (us)\n"
                       "   GPU     0      1 \n"
                       "     0   1.33  14.76 \n"
                       "     1  13.95   1.26 \n"
                       "\n"
                       "   CPU     0      1 \n"
                       "     0   3.55  11.08 \n"
                       "     1  10.48   3.32 \n";
    CU_ASSERT_STRING_EQUAL(out, want);
    free(out);
    p2pmatrix_free(s);
}

static void test_p2p_round_trip_file22(void)
{
    p2pmatrix_set *a = p2pmatrix_read(DATA "22-rtx2080ti-2gpu-pcie3-noP2P-p2pBandwidthLatencyTest.txt", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    size_t len;
    char *text = write_set(a, &len);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "     0\t     1     0\n"));
    p2pmatrix_set *b = p2pmatrix_parse("roundtrip", text, len, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (int k = 0; k < P2PMATRIX_KINDS; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
                CU_ASSERT_EQUAL(p2pmatrix_get(a, k, i, j), p2pmatrix_get(b, k, i, j));
    free(text);
    p2pmatrix_free(a);
    p2pmatrix_free(b);
}

static void test_p2p_bad_inputs(void)
{
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(p2pmatrix_read("tests/bad_input/nccltests/p2p-truncated-matrix.txt", &err));
    CU_ASSERT(g_error_matches(err, P2PMATRIX_ERROR, P2PMATRIX_ERROR_TRUNCATED));
    CU_ASSERT(g_str_has_prefix(err->message, "tests/bad_input/nccltests/p2p-truncated-matrix.txt:4:"));
    g_clear_error(&err);
    CU_ASSERT_PTR_NULL(p2pmatrix_read(DATA "15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt", &err));
    CU_ASSERT(g_error_matches(err, P2PMATRIX_ERROR, P2PMATRIX_ERROR_NO_MATRIX));
    g_clear_error(&err);
    const char *bad = "P2P=Disabled Latency Matrix (us)\n   GPU     0      1\n     0   1.33  x.76\n";
    CU_ASSERT_PTR_NULL(p2pmatrix_parse("inline", bad, strlen(bad), &err));
    CU_ASSERT(g_error_matches(err, P2PMATRIX_ERROR, P2PMATRIX_ERROR_NOT_NUMBER));
    CU_ASSERT(g_str_has_prefix(err->message, "inline:3:16:"));
    g_clear_error(&err);
    const char *mism = "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n   D\\D     0\n     0 1.00\n"
                       "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n";
    CU_ASSERT_PTR_NULL(p2pmatrix_parse("inline", mism, strlen(mism), &err));
    CU_ASSERT(g_error_matches(err, P2PMATRIX_ERROR, P2PMATRIX_ERROR_SIZE));
    g_clear_error(&err);
}

int main(void)
{
    static const test_case cases[] = {
        {"test_p2p_reads_dgx1_file11", test_p2p_reads_dgx1_file11},
        {"test_p2p_reads_rtx4090_file13", test_p2p_reads_rtx4090_file13},
        {"test_p2p_reads_all_matrices_file22", test_p2p_reads_all_matrices_file22},
        {"test_p2p_writer_layout_by_hand", test_p2p_writer_layout_by_hand},
        {"test_p2p_round_trip_file22", test_p2p_round_trip_file22},
        {"test_p2p_bad_inputs", test_p2p_bad_inputs},
        {NULL, NULL},
    };
    return test_main("p2pmatrix", cases);
}

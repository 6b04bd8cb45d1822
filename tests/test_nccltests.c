/* Tests of traces/nccltests (names, conventions, writer, reader) and
 * traces/validate_stats.  Run from the repository root. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "traces/nccltests.h"
#include "traces/validate_stats.h"

#define DATA "tests/data/nccltests/"
/* Two ranks' device lines and one 32 B all_reduce row: the smallest table
 * the reader takes, for tests of what comes around it. */
#define TWO_RANK_TABLE                                                                                            \
    "#  Rank  0 Group  0 Pid    1 on h device  0 [0000:18:00] X\n"                                              \
    "#  Rank  1 Group  0 Pid    1 on h device  1 [0000:19:00] X\n"                                              \
    "          32             8     float     sum      -1    10.52    0.00    0.00      0    10.01    0.00    0.00      0\n"
#define BAD "tests/bad_input/nccltests/"

static void test_coll_names_parse_variants(void)
{
    const char *names[] = {"all_reduce", "allreduce", "all_reduce_perf", "AllReduce",
                           "./build/all_reduce_perf", "all-reduce"};
    coll_kind k;
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        CU_ASSERT_EQUAL(coll_kind_from_name(names[i], &k), 0);
        CU_ASSERT_EQUAL(k, COLL_ALL_REDUCE);
    }
    CU_ASSERT_EQUAL(coll_kind_from_name("ReduceScatter", &k), 0);
    CU_ASSERT_EQUAL(k, COLL_REDUCE_SCATTER);
    CU_ASSERT_EQUAL(coll_kind_from_name("sendrecv_perf", &k), 0);
    CU_ASSERT_EQUAL(k, COLL_SENDRECV);
    CU_ASSERT_EQUAL(coll_kind_from_name("hypercube", &k), -1);
    for (int i = 0; i < COLL_KINDS; i++) {
        CU_ASSERT_EQUAL(coll_kind_from_name(coll_kind_name((coll_kind)i), &k), 0);
        CU_ASSERT_EQUAL(k, (coll_kind)i);
    }
    CU_ASSERT_EQUAL(coll_default_root(COLL_BROADCAST), 0);
    CU_ASSERT_EQUAL(coll_default_root(COLL_ALL_GATHER), -1);
    CU_ASSERT(coll_is_reducing(COLL_REDUCE_SCATTER));
    CU_ASSERT(!coll_is_reducing(COLL_ALLTOALL));
}

static void test_busbw_factor_closed_forms(void)
{
    /* tests:doc/PERFORMANCE.md: 2(n-1)/n, (n-1)/n, 1 */
    ASSERT_REL(coll_busbw_factor(COLL_ALL_REDUCE, 8), 1.75, 1e-12);
    ASSERT_REL(coll_busbw_factor(COLL_ALL_REDUCE, 32), 1.9375, 1e-12); /* file 47 */
    ASSERT_REL(coll_busbw_factor(COLL_ALL_GATHER, 8), 0.875, 1e-12);
    ASSERT_REL(coll_busbw_factor(COLL_REDUCE_SCATTER, 4), 0.75, 1e-12);
    ASSERT_REL(coll_busbw_factor(COLL_ALLTOALL, 2), 0.5, 1e-12);
    CU_ASSERT_EQUAL(coll_busbw_factor(COLL_BROADCAST, 8), 1.0);
    CU_ASSERT_EQUAL(coll_busbw_factor(COLL_SENDRECV, 2), 1.0);
    CU_ASSERT_EQUAL(coll_busbw_factor(COLL_ALL_REDUCE, 1), 0.0);
}

static void test_dtypes_and_redops(void)
{
    nccltests_dtype dt;
    CU_ASSERT_EQUAL(nccltests_dtype_from_name("fp8_e4m3", &dt), 0);
    CU_ASSERT_EQUAL(dt, NCCLTESTS_FP8_E4M3);
    CU_ASSERT_EQUAL(nccltests_dtype_bytes(dt), 1);
    CU_ASSERT_EQUAL(nccltests_dtype_from_name("bfloat16", &dt), 0);
    CU_ASSERT_EQUAL(nccltests_dtype_bytes(dt), 2);
    CU_ASSERT_EQUAL(nccltests_dtype_bytes(NCCLTESTS_DOUBLE), 8);
    CU_ASSERT_EQUAL(nccltests_dtype_from_name("complex", &dt), -1);
    nccltests_redop op;
    CU_ASSERT_EQUAL(nccltests_redop_from_name("avg", &op), 0);
    CU_ASSERT_EQUAL(op, NCCLTESTS_OP_AVG);
    CU_ASSERT_STRING_EQUAL(nccltests_redop_name(NCCLTESTS_OP_NONE), "none");
}

static void test_count_conventions_match_real_files(void)
{
    /* file 24 (all_gather, 2 ranks): size 32 -> count 4; file 55 (8 ranks): 32 -> 1 */
    CU_ASSERT_EQUAL(nccltests_count_for_size(COLL_ALL_GATHER, 32, 2, 4), 4);
    CU_ASSERT_EQUAL(nccltests_count_for_size(COLL_ALL_GATHER, 32, 8, 4), 1);
    CU_ASSERT_EQUAL(nccltests_count_for_size(COLL_ALL_GATHER, 1073741824, 2, 4), 134217728);
    /* file 01 (all_reduce): 1073741824 -> 268435456 */
    CU_ASSERT_EQUAL(nccltests_count_for_size(COLL_ALL_REDUCE, 1073741824, 8, 4), 268435456);
    /* file 24: requests of 8 and 16 B print size 0, 32 B prints 32 */
    CU_ASSERT_EQUAL(nccltests_size_for_request(COLL_ALL_GATHER, 8, 2, 4), 0);
    CU_ASSERT_EQUAL(nccltests_size_for_request(COLL_ALL_GATHER, 16, 2, 4), 0);
    CU_ASSERT_EQUAL(nccltests_size_for_request(COLL_ALL_GATHER, 32, 2, 4), 32);
    CU_ASSERT_EQUAL(nccltests_size_for_request(COLL_ALL_REDUCE, 10, 2, 4), 8);
    uint64_t snd, rcv;
    nccltests_rank_bytes(COLL_ALL_GATHER, 1024, 4, &snd, &rcv);
    CU_ASSERT_EQUAL(snd, 256);
    CU_ASSERT_EQUAL(rcv, 1024);
    nccltests_rank_bytes(COLL_REDUCE_SCATTER, 1024, 4, &snd, &rcv);
    CU_ASSERT_EQUAL(snd, 1024);
    CU_ASSERT_EQUAL(rcv, 256);
}

static void test_row_bw_closed_form(void)
{
    /* 1 GiB all_reduce on 8 ranks in 4607.6 us (file 21 row, 16 ranks there) */
    nccltests_row r = {.size_bytes = 1073741824, .time_us = {4607.6, 4565.6}};
    nccltests_row_compute_bw(&r, COLL_ALL_REDUCE, 16);
    ASSERT_REL(r.algbw_GBps[0], 233.04, 1e-4); /* printed 233.04 */
    ASSERT_REL(r.busbw_GBps[0], 436.95, 1e-4); /* printed 436.95 */
    ASSERT_REL(r.busbw_GBps[1], 440.96, 1e-4);
}

/* ---- writer golden ------------------------------------------------------ */

/* Times chosen so algbw = S/t is round: 1 MiB in 104.8576 us = 10 GB/s,
 * busbw x 1.5 for 4 ranks.  Avg busbw = (2 x 0.0012 + 2x15 + 150 + 120 +
 * 2x300 + 4x750 + 2x2250) / 14 = 600.00017 -> "600". */
static const nccltests_row golden_rows[] = {
    {.size_bytes = 8, .count = 2, .time_us = {10.0, 10.0}},
    {.size_bytes = 1048576, .count = 262144, .time_us = {104.8576, 104.8576}},
    {.size_bytes = 4194304, .count = 1048576, .time_us = {41.94304, 52.4288}},
    {.size_bytes = 16777216, .count = 4194304, .time_us = {83.88608, 83.88608}},
    {.size_bytes = 1073741824, .count = 268435456, .time_us = {2147.483648, 2147.483648}},
    {.size_bytes = 17179869184ULL, .count = 4294967296ULL, .time_us = {34359.738368, 34359.738368}},
    {.size_bytes = 34359738368ULL, .count = 8589934592ULL, .time_us = {22906.492245, 22906.492245}},
};

static const nccltests_device golden_devs[] = {
    {0, 0, 12345, "host01", 0, 0, 0x18, 0, "NVIDIA H100 80GB HBM3"},
    {1, 0, 12345, "host01", 1, 0, 0x2a, 0, "NVIDIA H100 80GB HBM3"},
    {2, 0, 12345, "host01", 2, 0, 0x3a, 0, "NVIDIA H100 80GB HBM3"},
    {3, 0, 12345, "host01", 3, 0, 0x5d, 0, "NVIDIA H100 80GB HBM3"},
};

static nccltests_sweep golden_sweep(void)
{
    return (nccltests_sweep){
        .coll = COLL_ALL_REDUCE, .dtype = NCCLTESTS_FLOAT, .redop = NCCLTESTS_OP_SUM, .root = -1,
        .nranks = 4, .version = "2.19.6", .nccl_code = 21903, .nthreads = 1, .ngpus = 4,
        .min_bytes = 8, .max_bytes = 34359738368ULL, .step_factor = 2, .warmup_iters = 1,
        .iters = 20, .agg_iters = 1, .validation = 1, .graph = 0, .devices = golden_devs,
        .ndevices = 4, .rows = golden_rows, .nrows = G_N_ELEMENTS(golden_rows),
    };
}

static char *write_to_string(void (*fn)(FILE *, const nccltests_sweep *), const nccltests_sweep *s,
                             size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    fn(f, s);
    fclose(f);
    return buf;
}

/* -d all / -o all / -r -1: each row names its own type, reduction and root
 * in the text, CSV and JSON tables. */
static void test_writer_per_row_type_and_redop(void)
{
    nccltests_sweep s = golden_sweep();
    s.nrows = 2;
    static const nccltests_dtype dts[] = {NCCLTESTS_FLOAT, NCCLTESTS_HALF};
    static const nccltests_redop ops[] = {NCCLTESTS_OP_SUM, NCCLTESTS_OP_MAX};
    static const int roots[] = {0, 3};
    nccltests_sweep_id ids[2];
    for (int i = 0; i < 2; i++)
        ids[i] = (nccltests_sweep_id){.dtype = dts[i], .redop = ops[i], .root = roots[i]};
    s.row_id = ids;
    size_t len;
    char *text = write_to_string(nccltests_write, &s, &len);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "     float     sum"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "      half     max       3"));
    char *csv = write_to_string(nccltests_write_csv, &s, &len);
    CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",float,sum,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(csv, ",half,max,3,"));
    char *json = write_to_string(nccltests_write_json, &s, &len);
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"half\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"max\""));
    free(text);
    free(csv);
    free(json);
}

static void test_writer_golden_byte_for_byte(void)
{
    nccltests_sweep s = golden_sweep();
    size_t len;
    char *got = write_to_string(nccltests_write, &s, &len);
    char *want = NULL;
    gsize wlen = 0;
    CU_ASSERT_FATAL(g_file_get_contents(DATA "golden-allreduce-4rank.txt", &want, &wlen, NULL));
    CU_ASSERT_EQUAL(len, wlen);
    CU_ASSERT_STRING_EQUAL(got, want);
    free(got);
    g_free(want);
}

static void test_writer_round_trip(void)
{
    nccltests_sweep s = golden_sweep();
    size_t len;
    char *text = write_to_string(nccltests_write, &s, &len);
    GError *err = NULL;
    nccltests_log *log = nccltests_parse("roundtrip", text, len, -1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log->coll, COLL_ALL_REDUCE);
    CU_ASSERT_EQUAL(log->nranks, 4);
    CU_ASSERT_STRING_EQUAL(log->nranks_source, "# Using devices");
    CU_ASSERT_EQUAL(log->nrows, s.nrows);
    for (size_t i = 0; i < log->nrows && i < s.nrows; i++) {
        CU_ASSERT_EQUAL(log->rows[i].size_bytes, s.rows[i].size_bytes);
        CU_ASSERT_EQUAL(log->rows[i].count, s.rows[i].count);
        for (int p = 0; p < 2; p++) /* printed with >= 6 significant digits */
            ASSERT_REL(log->rows[i].time_us[p], s.rows[i].time_us[p], 5e-4);
    }
    ASSERT_REL(log->avg_busbw_GBps, 600.0, 1e-9);
    nccltests_log_free(log);
    free(text);
}

static void test_writer_csv_and_json(void)
{
    nccltests_sweep s = golden_sweep();
    size_t len;
    char *csv = write_to_string(nccltests_write_csv, &s, &len);
    CU_ASSERT(g_str_has_prefix(csv, "size,count,type,redop,root,oop_time_us,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(csv, "\n1048576,262144,float,sum,-1,104.858,10,15,104.858,10,15\n"));
    free(csv);
    char *json = write_to_string(nccltests_write_json, &s, &len);
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"collective\":\t\"all_reduce\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"bus_bw\":\t2250"));
    free(json);
}

/* ---- reader on real files ----------------------------------------------- */

typedef struct {
    const char *file;
    coll_kind coll;
    int nranks;
    size_t nrows;
    uint64_t first_size;
    double first_oop_time_us;
    uint64_t last_size;
    double last_oop_time_us, last_ip_busbw;
} real_case;

static const real_case real_cases[] = {
    {"01-gb200-nvl72-2x4gpu-mnnvl-allreduce.txt", COLL_ALL_REDUCE, 8, 33, 8, 21.57, 34359738368ULL, 70981, 847.42},
    {"05-rtx4090-2gpu-pcie-noP2P-docker-allreduce.txt", COLL_ALL_REDUCE, 2, 29, 8, 8.97, 2147483648ULL, 957746, 2.23},
    {"06-rtx4090-4gpu-pcie-noP2P-docker-allreduce.txt", COLL_ALL_REDUCE, 4, 29, 8, 18.90, 2147483648ULL, 1246110, 2.58},
    {"07-rtx4090-2gpu-pcie-noP2P-crossroot-k8s-allreduce.txt", COLL_ALL_REDUCE, 2, 29, 8, 10.98, 2147483648ULL, 557166, 3.87},
    {"09-dell-h200-2node-16gpu-spectrumx-roce-allreduce.txt", COLL_ALL_REDUCE, 16, 25, 1024, 45.06, 17179869184ULL, 66326.9, 485.52},
    {"14-rtx4090-4gpu-pcie-p2p-patched-driver-allreduce.txt", COLL_ALL_REDUCE, 4, 21, 1024, 18.46, 1073741824, 63624, 25.31},
    {"15-a100-sxm4-80gb-8gpu-nvswitch-allreduce.txt", COLL_ALL_REDUCE, 8, 25, 8, 34.84, 134217728, 1295.41, 182.90},
    {"17-rtx4090-8gpu-pcie-noP2P-stock-driver-allreduce.txt", COLL_ALL_REDUCE, 8, 25, 8, 38.83, 134217728, 16253, 14.47},
    {"21-aws-p5-h100-2node-16gpu-efa-allreduce.txt", COLL_ALL_REDUCE, 16, 32, 8, 69.12, 17179869184ULL, 66132, 487.26},
    {"23-rtx2080ti-2gpu-pcie3-noP2P-allreduce.txt", COLL_ALL_REDUCE, 2, 28, 8, 12.25, 1073741824, 268588, 4.00},
    {"24-rtx2080ti-2gpu-pcie3-noP2P-allgather.txt", COLL_ALL_GATHER, 2, 28, 0, 0.33, 1073741824, 141614, 3.84},
    {"27-l40s-2node-1gpu-each-tcp-socket-allreduce.txt", COLL_ALL_REDUCE, 2, 31, 8, 13.24, 8589934592ULL, 1059765, 8.12},
    {"29-moc-h100-2node-1gpu-1nic-roce-sendrecv.txt", COLL_SENDRECV, 2, 13, 1073741824, 76929, 26843545600ULL, 1923022, 13.97},
    {"30-dgx-h200-2node-16gpu-single-iface-ANOMALOUS-allreduce.txt", COLL_ALL_REDUCE, 16, 32, 8, 59.24, 17179869184ULL, 348875, 92.35},
    {"47-dgx-a100-4node-32gpu-hdr-ib-allreduce.txt", COLL_ALL_REDUCE, 32, 13, 1048576, 135.3, 4294967296ULL, 43557, 191.56},
    {"55-a100-sxm4-40gb-8gpu-1node-nvswitch-allgather.txt", COLL_ALL_GATHER, 8, 34, 0, 34.27, 8589934592ULL, 33646, 230.07},
};

static void test_reader_real_files(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(real_cases); i++) {
        const real_case *c = &real_cases[i];
        char *path = g_strconcat(DATA, c->file, NULL);
        GError *err = NULL;
        nccltests_log *log = nccltests_read(path, &err);
        if (!log)
            fprintf(stderr, "\n%s\n", err->message);
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        CU_ASSERT_EQUAL(log->coll, c->coll);
        CU_ASSERT_EQUAL(log->nranks, c->nranks);
        CU_ASSERT_EQUAL(log->nrows, c->nrows);
        CU_ASSERT_EQUAL(log->rows[0].size_bytes, c->first_size);
        ASSERT_REL(log->rows[0].time_us[0], c->first_oop_time_us, 1e-12);
        const nccltests_row *last = &log->rows[log->nrows - 1];
        CU_ASSERT_EQUAL(last->size_bytes, c->last_size);
        ASSERT_REL(last->time_us[0], c->last_oop_time_us, 1e-12);
        ASSERT_REL(last->busbw_GBps[1], c->last_ip_busbw, 1e-12);
        CU_ASSERT_EQUAL(log->dtype, NCCLTESTS_FLOAT);
        nccltests_log_free(log);
        g_free(path);
    }
}

static void test_reader_old_format_details(void)
{
    nccltests_log *log = nccltests_read(DATA "47-dgx-a100-4node-32gpu-hdr-ib-allreduce.txt", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT(log->old_format);
    CU_ASSERT_EQUAL(log->redop, NCCLTESTS_OP_SUM);
    CU_ASSERT_EQUAL(log->root, -1);
    ASSERT_REL(log->rows[0].wrong[0], 7e-07, 1e-12);
    ASSERT_REL(log->avg_busbw_GBps, 113.289, 1e-12);
    nccltests_log_free(log);
    log = nccltests_read(DATA "55-a100-sxm4-40gb-8gpu-1node-nvswitch-allgather.txt", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log->redop, NCCLTESTS_OP_NONE);
    CU_ASSERT(isnan(log->rows[0].wrong[0]));
    CU_ASSERT_STRING_EQUAL(log->nranks_source, "# Using devices");
    nccltests_log_free(log);
}

static void test_reader_derives_nranks_from_ratio(void)
{
    /* file 01 rows without any header: 847.12/484.07 = 1.75 -> 8 ranks */
    const char *text =
        "  8589934592    2147483648     float     sum      -1    17887  480.23  840.41      0    17885  480.29  840.50      0\n"
        " 34359738368    8589934592     float     sum      -1    70981  484.07  847.12      0    70956  484.24  847.42      0\n";
    nccltests_log *log = nccltests_parse("inline", text, strlen(text), COLL_ALL_REDUCE, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log->nranks, 8);
    CU_ASSERT(log->nranks_derived);
    CU_ASSERT_STRING_EQUAL(log->coll_source, "--op");
    nccltests_log_free(log);
}

static void test_reader_tolerates_noise_and_slurm(void)
{
    const char *text =
        "0: host1:123:123 [0] NCCL INFO Bootstrap : Using eth0\n"
        "0: # Collective test starting: all_gather_perf\n"
        "0: #  Rank  0 Group  0 Pid    1 on h device  0 [0000:18:00] X\n"
        "0: #  Rank  1 Group  0 Pid    1 on h device  1 [0000:19:00] X\n"
        "0:           32             4     float    none      -1    10.52    0.00    0.00      0    10.01    0.00    0.00      0\r\n"
        "host1:123:123 [0] NCCL WARN something\n"
        "0:           64             8     float    none      -1    10.01    0.01    0.00      0    10.07    0.01    0.00    N/A\n";
    GError *err = NULL;
    nccltests_log *log = nccltests_parse("noise", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log->coll, COLL_ALL_GATHER);
    CU_ASSERT_EQUAL(log->nranks, 2);
    CU_ASSERT_EQUAL(log->nrows, 2);
    CU_ASSERT(isnan(log->rows[1].wrong[1]));
    nccltests_log_free(log);
    /* --op disagreeing with the file is an error */
    log = nccltests_parse("noise", text, strlen(text), COLL_ALL_REDUCE, &err);
    CU_ASSERT_PTR_NULL(log);
    CU_ASSERT(g_error_matches(err, NCCLTESTS_ERROR, NCCLTESTS_ERROR_MIXED));
    g_clear_error(&err);
}


/* Launcher prefixes (log review 2026-12): Open MPI's --tag-output, with --timestamp-output too, a "[N] "
 * tag, Slurm's label. Rows and '#' lines are rank 0's stdout; other ranks' and stderr lines give their NCCL
 * lines only (a non-MPI nccl-tests under mpirun prints a table per process). */
static void test_reader_launcher_prefixes(void)
{
    const char *row8 = "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0";
    const char *row16 = "          16             4     float     sum      -1    11.00    0.00    0.00      0    11.00    0.00    0.00      0";
    const char *pfx[][2] = {
        {"        [1,0]<stdout>:", "        [1,1]<stdout>:"},
        {"Thu May  7 10:39:20 2020[1,0]<stdout>:", "Thu May  7 10:39:20 2020[1,1]<stdout>:"},
        {"[0] ", "[1] "},
        {" 0: ", "11: "},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(pfx); i++) {
        const char *z = pfx[i][0], *o = pfx[i][1];
        char *text = g_strdup_printf("%s# Collective test starting: all_reduce_perf\n"
                                     "%s#  Rank  0 Group  0 Pid    1 on h device  0 [0000:18:00] X\n"
                                     "%s#  Rank  1 Group  0 Pid    2 on h device  1 [0000:19:00] X\n"
                                     "%s# Collective test starting: all_gather_perf\n" /* another process's */
                                     "%s%s\n%s%s\n%s%s\n%s%s\n",
                                     z, z, z, o, z, row8, o, row8, o, row16, z, row16);
        GError *err = NULL;
        nccltests_log *log = nccltests_parse("pfx", text, strlen(text), -1, &err);
        if (!log)
            fprintf(stderr, "\nprefix %zu: %s\n", i, err->message);
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        CU_ASSERT_EQUAL(log->coll, COLL_ALL_REDUCE);
        CU_ASSERT_EQUAL(log->nranks, 2);
        CU_ASSERT_EQUAL(log->nrows, 2);
        CU_ASSERT_DOUBLE_EQUAL(log->rows[1].time_us[0], 11.0, 1e-9);
        nccltests_log_free(log);
        g_free(text);
    }
    /* stderr lines are not the table; an Open MPI tag whose rank is not a number is no prefix (the line is
     * text, not a row) */
    const char *text = "[1,0]<stdout>:# Collective test starting: all_reduce_perf\n"
                       "[1,0]<stdout>:#  Rank  0 Group  0 Pid    1 on h device  0 [0000:18:00] X\n"
                       "[1,0]<stderr>:           4             1     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n"
                       "[1,x]<stdout>:          32             8     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n"
                       "[1,0]<stdout>:           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n";
    GError *err = NULL;
    nccltests_log *log = nccltests_parse("pfx", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log->nrows, 1);
    CU_ASSERT_EQUAL(log->rows[0].size_bytes, 8);
    nccltests_log_free(log);
}

/* A row nccl-tests printed in pieces with NCCL's lines glued after them (NVIDIA/nccl#1453): read whole,
 * an error in a later piece at its own line and column. */
static void test_reader_rows_split_by_nccl_lines(void)
{
    const char *head = "# Collective test starting: all_reduce_perf\n"
                       "#  Rank  0 Group  0 Pid    1 on h device  0 [0000:18:00] X\n"
                       "#  Rank  1 Group  0 Pid    1 on h device  1 [0000:19:00] X\n"
                       "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
                       "h1:7:7 [0] NCCL INFO Bootstrap : Using eth0\n";
    char *text = g_strconcat(head,
                             "           8             2     float     sum      -1h1:7:7 [0] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n"
                             "h1:7:9 [1] NCCL INFO Connected all rings\n"
                             "    10.00    0.00    0.00      0h1:7:7 [0] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n"
                             "    12.50    0.00    0.00      0\n"
                             "          16             4     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n",
                             NULL);
    GError *err = NULL;
    nccltests_log *log = nccltests_parse("split", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log->nrows, 2);
    CU_ASSERT_DOUBLE_EQUAL(log->rows[0].time_us[0], 10.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(log->rows[0].time_us[1], 12.5, 1e-9);
    CU_ASSERT_EQUAL(log->ntuning, 2); /* the glued TUNING lines are NCCL's lines still */
    nccltests_log_free(log);
    g_free(text);
    /* a bad in-place time on the row's third line: line 9, its column there */
    text = g_strconcat(head,
                       "           8             2     float     sum      -1h1:7:7 [0] NCCL INFO x\n"
                       "    10.00    0.00    0.00      0h1:7:7 [0] NCCL INFO x\n"
                       "    1z.50    0.00    0.00      0\n", NULL);
    log = nccltests_parse("split", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NULL(log);
    CU_ASSERT(g_error_matches(err, NCCLTESTS_ERROR, NCCLTESTS_ERROR_NOT_NUMBER));
    CU_ASSERT(err && g_str_has_prefix(err->message, "split:8:5: time"));
    if (err && !g_str_has_prefix(err->message, "split:8:5: time"))
        fprintf(stderr, "\n%s\n", err->message);
    g_clear_error(&err);
    g_free(text);
}

/* Several runs in one file: refused unless one is picked; a run that stopped before its table is passed
 * over. */
static void test_reader_runs(void)
{
    const char *run = "# nThread 1 nGpus 2 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
                      "# Collective test starting: %s\n"
                      "#  Rank  0 Group  0 Pid    1 on h device  0 [0000:18:00] X\n"
                      "#  Rank  1 Group  0 Pid    1 on h device  1 [0000:19:00] X\n"
                      "%s";
    const char *row = "           8             2     float     sum      -1    %s    0.00    0.00      0    10.00    0.00    0.00      0\n";
    char *r1 = g_strdup_printf(row, "10.00"), *r2 = g_strdup_printf(row, "20.00");
    char *a = g_strdup_printf(run, "all_reduce_perf", ""), *b = g_strdup_printf(run, "all_reduce_perf", r1),
         *c = g_strdup_printf(run, "all_gather_perf", r2);
    char *text = g_strconcat(a, "Test NCCL failure common.cu:892 'unhandled system error'\n", b, c, NULL);
    GError *err = NULL;
    nccltests_log *log = nccltests_parse("runs", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NULL(log);
    CU_ASSERT(err && g_str_has_prefix(err->message, "runs:11:1: expected one nccl-tests run per file"));
    g_clear_error(&err);
    log = nccltests_parse_run("runs", text, strlen(text), -1, 2, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log->coll, COLL_ALL_GATHER);
    CU_ASSERT_EQUAL(log->nranks, 2);
    CU_ASSERT_DOUBLE_EQUAL(log->rows[0].time_us[0], 20.0, 1e-9);
    CU_ASSERT_EQUAL(log->run.nruns, 2);
    CU_ASSERT_EQUAL(log->run.first_line, 11);
    nccltests_log_free(log);
    CU_ASSERT_PTR_NULL(nccltests_parse_run("runs", text, strlen(text), -1, 3, &err));
    CU_ASSERT(g_error_matches(err, NCCLTESTS_ERROR, NCCLTESTS_ERROR_NO_TABLE));
    g_clear_error(&err);
    g_free(text);
    /* the failed run, then one: that one */
    text = g_strconcat(a, b, NULL);
    log = nccltests_parse("runs", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log->nranks, 2);
    CU_ASSERT_EQUAL(log->run.first_line, 5);
    nccltests_log_free(log);
    g_free(text);
    g_free(a);
    g_free(b);
    g_free(c);
    g_free(r1);
    g_free(r2);
}

/* ncclNvlsSupported's table (src/include/device.h). */
static void test_nvls_reduces_table(void)
{
    CU_ASSERT_TRUE(nccltests_nvls_reduces(NCCLTESTS_OP_SUM, NCCLTESTS_FLOAT));
    CU_ASSERT_TRUE(nccltests_nvls_reduces(NCCLTESTS_OP_SUM, NCCLTESTS_DOUBLE));
    CU_ASSERT_FALSE(nccltests_nvls_reduces(NCCLTESTS_OP_MAX, NCCLTESTS_FLOAT));
    CU_ASSERT_TRUE(nccltests_nvls_reduces(NCCLTESTS_OP_MAX, NCCLTESTS_BFLOAT16));
    CU_ASSERT_TRUE(nccltests_nvls_reduces(NCCLTESTS_OP_MIN, NCCLTESTS_INT32));
    CU_ASSERT_TRUE(nccltests_nvls_reduces(NCCLTESTS_OP_SUM, NCCLTESTS_UINT64));
    CU_ASSERT_FALSE(nccltests_nvls_reduces(NCCLTESTS_OP_PROD, NCCLTESTS_HALF));
    CU_ASSERT_FALSE(nccltests_nvls_reduces(NCCLTESTS_OP_AVG, NCCLTESTS_FLOAT));
    CU_ASSERT_FALSE(nccltests_nvls_reduces(NCCLTESTS_OP_SUM, NCCLTESTS_INT8));
    CU_ASSERT_FALSE(nccltests_nvls_reduces(NCCLTESTS_OP_SUM, NCCLTESTS_FP8_E4M3));
    CU_ASSERT_TRUE(nccltests_nvls_reduces(NCCLTESTS_OP_NONE, NCCLTESTS_INT8));
}

/* NCCL_DEBUG_SUBSYS=TUNING lines are kept (what NCCL chose), in file order,
 * whatever the prefix (slurm, timestamps) and name case; other INFO lines and
 * malformed TUNING lines are skipped. */
/* Rank 0's ring lines of NCCL's init log (a real NCCL's format, rings.cc:
 * " %3d" per rank, cut at 128 bytes): kept by channel for the first
 * communicator; connection lines and a second communicator's rings are not. */
static void test_reader_keeps_ring_lines(void)
{
    GString *big = g_string_new("h:1:1 [0] NCCL INFO Channel 01/02 :");
    for (int r = 0; r < 40; r++) /* a ring of 40: NCCL's line holds the first 28 */
        g_string_append_printf(big, " %3d", r);
    g_string_truncate(big, strlen("h:1:1 [0] NCCL INFO ") + 127);
    char *text = g_strconcat(
        "# Collective test starting: all_reduce_perf\n"
        "h:1:1 [0] NCCL INFO Channel 00/02 :    0   1   3   2\n"
        "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
        "h:1:1 [1] NCCL INFO Channel 00 : 1[1] -> 3[3] via SHM/direct/direct\n"
        "h:1:1 [0] NCCL INFO Channel 00/1 :    0  x\n",
        big->str, "\n",
        "h:1:1 [0] NCCL INFO Channel 00/02 :    0   2   1   3\n" /* another communicator */
        "h:1:1 [0] NCCL INFO Channel 01/02 :    0   3\n", TWO_RANK_TABLE, NULL);
    GError *err = NULL;
    nccltests_log *log = nccltests_parse("rings", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL_FATAL(log->nrings, 2);
    CU_ASSERT_EQUAL(log->rings[0].channel, 0);
    CU_ASSERT_EQUAL(log->rings[0].nchannels, 2);
    CU_ASSERT_EQUAL(log->rings[0].n, 4);
    CU_ASSERT_EQUAL(log->rings[0].rank[2], 3);
    CU_ASSERT_EQUAL(log->rings[0].line, 2);
    CU_ASSERT_EQUAL(log->rings[1].channel, 1);
    CU_ASSERT_EQUAL(log->rings[1].n, 28);
    CU_ASSERT_EQUAL(log->rings[1].rank[27], 27);
    nccltests_log_free(log);
    g_free(text);
    g_string_free(big, TRUE);
}

/* Each rank's "Trees" line (init.cc's format): kept per (rank, channel) for
 * the first communicator; a line cut inside a channel keeps the whole ones. */
static void test_reader_keeps_trees_lines(void)
{
    const char *text =
        "# Collective test starting: all_reduce_perf\n"
        "gpu01:1:1 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1\n"
        "gpu02:2:2 [0] NCCL INFO Trees [0] -1/-1/-1->1->0 [1] 0/-1/-1->1->-1 [2] 0/-1/-\n"
        "gpu01:1:1 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1\n" /* another communicator */
        TWO_RANK_TABLE;
    GError *err = NULL;
    nccltests_log *log = nccltests_parse("trees", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL_FATAL(log->ntrees, 4);
    const nccltests_tree *t = log->trees;
    CU_ASSERT(t[0].rank == 0 && t[0].channel == 0 && t[0].down[0] == 1 && t[0].down[1] == -1 && t[0].up == -1);
    CU_ASSERT(t[1].rank == 0 && t[1].channel == 1 && t[1].down[0] == -1 && t[1].up == 1);
    CU_ASSERT(t[3].rank == 1 && t[3].channel == 1 && t[3].down[0] == 0 && t[3].up == -1 && t[3].line == 3);
    nccltests_log_free(log);
}

static void test_reader_keeps_tuning_lines(void)
{
    const char *text =
        "0: host1:123:123 [0] NCCL INFO AllGather: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..23}\n"
        "0: # Collective test starting: all_gather_perf\n"
        "0: #  Rank  0 Group  0 Pid    1 on h device  0 [0000:18:00] X\n"
        "0: #  Rank  1 Group  0 Pid    1 on h device  1 [0000:19:00] X\n"
        "[2026-11-30 10:00:00] host1:123:123 [0] NCCL INFO AllGather: 16 Bytes -> Algo NVLSTree proto Simple channel{Lo..Hi}={2..5}\n"
        "host1:123:123 [0] NCCL INFO AllGather: 32 Bytes -> Algo RING proto LL channel{Lo..Hi}={3..1}\n"
        "host1:123:123 [0] NCCL INFO AllGather: 32 Bytes -> Algo\n"
        "0:           32             4     float    none      -1    10.52    0.00    0.00      0    10.01    0.00    0.00      0\n";
    GError *err = NULL;
    nccltests_log *log = nccltests_parse("tuning", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log->nrows, 1);
    CU_ASSERT_EQUAL_FATAL(log->ntuning, 2);
    CU_ASSERT_STRING_EQUAL(log->tuning[0].func, "AllGather");
    CU_ASSERT_EQUAL(log->tuning[0].bytes, 1048576);
    CU_ASSERT_STRING_EQUAL(log->tuning[0].algo, "RING");
    CU_ASSERT_STRING_EQUAL(log->tuning[0].proto, "LL128");
    CU_ASSERT_EQUAL(log->tuning[0].nchannels, 24);
    CU_ASSERT_STRING_EQUAL(log->tuning[1].algo, "NVLSTree");
    CU_ASSERT_EQUAL(log->tuning[1].nchannels, 4);
    nccltests_log_free(log);
    /* none in a log without them */
    text = "# Collective test starting: all_reduce_perf\n"
           TWO_RANK_TABLE;
    log = nccltests_parse("plain", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log->ntuning, 0);
    CU_ASSERT_PTR_NULL(log->tuning);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log->env);
    CU_ASSERT_PTR_NULL(log->env[0]);
    nccltests_log_free(log);
}

/* NCCL's Latency/AlgBw table (tuning.cc): the header names the columns,
 * the Max NThreads line is skipped, each collective's cells are kept with
 * their column's algorithm and protocol, other INFO lines between them (other
 * threads') are passed over; only the first table counts (a second
 * communicator prints another), and a row whose cells do not read as
 * latency/bandwidth ends it. */
static void test_reader_keeps_latbw_table(void)
{
    const char *text =
        "h:1:1 [0] NCCL INFO Latency/AlgBw |    Tree/    LL |    Ring/Simple |    NVLS/Simple |\n"
        "h:1:1 [0] NCCL INFO  Max NThreads |            512 |            512 |            544 |\n"
        "h:1:1 [0] NCCL INFO     Broadcast |     0.0/   0.0 |    11.8/ 370.8 |     0.0/   0.0 |\n"
        "h:1:1 [0] NCCL INFO     AllReduce |    15.2/   5.0 |    56.0/ 211.9 |    25.0/ 262.7 |\n"
        "h:1:1 [0] NCCL INFO Channel 00/24 : 0 1 2 3\n"
        "h:1:1 [0] NCCL INFO     AllGather |    99.0/  99.0 |    99.0/  99.0 |    99.0/  99.0 |\n"
        "h:1:1 [0] NCCL INFO Latency/AlgBw |    Tree/    LL |    Ring/Simple |    NVLS/Simple |\n"
        "h:1:1 [0] NCCL INFO     AllReduce |     1.0/   1.0 |     1.0/   1.0 |     1.0/   1.0 |\n"
        "# Collective test starting: all_reduce_perf\n"
        TWO_RANK_TABLE;
    GError *err = NULL;
    nccltests_log *log = nccltests_parse("latbw", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL_FATAL(log->nlatbw, 9);
    CU_ASSERT_STRING_EQUAL(log->latbw[6].func, "AllGather");
    CU_ASSERT_STRING_EQUAL(log->latbw[1].func, "Broadcast");
    CU_ASSERT_STRING_EQUAL(log->latbw[1].algo, "Ring");
    CU_ASSERT_STRING_EQUAL(log->latbw[1].proto, "Simple");
    CU_ASSERT_DOUBLE_EQUAL(log->latbw[1].algbw_GBps, 370.8, 1e-9);
    CU_ASSERT_STRING_EQUAL(log->latbw[5].func, "AllReduce");
    CU_ASSERT_STRING_EQUAL(log->latbw[5].algo, "NVLS");
    CU_ASSERT_DOUBLE_EQUAL(log->latbw[5].lat_us, 25.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(log->latbw[3].algbw_GBps, 5.0, 1e-9);
    nccltests_log_free(log);
    /* a row that is not lat/bw ends the table: the rows after it are not kept */
    text = "h:1:1 [0] NCCL INFO Latency/AlgBw |    Tree/    LL |    Ring/Simple |\n"
           "h:1:1 [0] NCCL INFO     Broadcast |     0.0/   0.0 |    11.8/ 370.8 |\n"
           "h:1:1 [0] NCCL INFO        Reduce |           none |    11.8/ 370.8 |\n"
           "h:1:1 [0] NCCL INFO     AllReduce |    15.2/   5.0 |    56.0/ 211.9 |\n"
           "# Collective test starting: all_reduce_perf\n"
           TWO_RANK_TABLE;
    log = nccltests_parse("latbw-bad", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log->nlatbw, 2);
    nccltests_log_free(log);
}

/* NCCL's ENV lines: "NAME=value" once per name (the first), an integer's
 * trailing period removed, a string value kept, other INFO lines not. */
static void test_reader_keeps_env_lines(void)
{
    const char *text =
        "h:1:1 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 8.\n"
        "h:1:1 [1] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 16.\n"
        "[2026-11-30 10:00:00] h:1:1 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to NVL\n"
        "h:1:1 [0] NCCL INFO CUDA_VISIBLE set by environment to 1.\n"
        "h:1:1 [0] NCCL INFO Channel 00/24 :    0   1   2   3\n"
        "# Collective test starting: all_reduce_perf\n"
        TWO_RANK_TABLE;
    GError *err = NULL;
    nccltests_log *log = nccltests_parse("env", text, strlen(text), -1, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL_FATAL(g_strv_length(log->env), 2);
    CU_ASSERT_STRING_EQUAL(log->env[0], "NCCL_MAX_NCHANNELS=8");
    CU_ASSERT_STRING_EQUAL(log->env[1], "NCCL_P2P_LEVEL=NVL");
    nccltests_log_free(log);
}

/* The NCCL a log ran on: nccl-tests' "nccl-library=" header, else NCCL's
 * "NCCL version" INFO line, else a "#! nccl_version:" provenance header. */
static void test_reader_nccl_version(void)
{
    static const char *const rows =
        TWO_RANK_TABLE;
    static const struct {
        const char *head;
        int code, line;
    } cases[] = {
        {"#! nccl_version: 2.19.3 (nccl-headers=21903)\n# nccl-tests version 2.13.8 nccl-headers=21805 nccl-library=21805\n", 21805, 2},
        {"#! nccl_version: 2.19.3 (from the container tag)\nh:1:1 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n", 21805, 2},
        {"#! nccl_version: 2.26.6 (not printed in log)\n", 22606, 1},
        {"#! nccl_version: not printed\n", 0, 0},
        {"h:1:1 [0] NCCL INFO NCCL version 2.8.4+cuda11.2\n", 2804, 1}, /* before 2.9: X*1000 + Y*100 + Z */
        {"# nThread 1 nGpus 2 minBytes 32\n", 0, 0},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *text = g_strconcat(cases[i].head, "# Collective test starting: all_reduce_perf\n", rows, NULL);
        GError *err = NULL;
        nccltests_log *log = nccltests_parse("version", text, strlen(text), -1, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        CU_ASSERT_EQUAL(log->nccl_code, cases[i].code);
        CU_ASSERT_EQUAL(log->nccl_code_line, cases[i].line);
        nccltests_log_free(log);
        g_free(text);
    }
    char v[32];
    nccltests_nccl_version(21903, v, sizeof v);
    CU_ASSERT_STRING_EQUAL(v, "2.19.3");
    nccltests_nccl_version(23007, v, sizeof v);
    CU_ASSERT_STRING_EQUAL(v, "2.30.7");
    nccltests_nccl_version(2708, v, sizeof v); /* before 2.9: major x 1000 + minor x 100 + patch */
    CU_ASSERT_STRING_EQUAL(v, "2.7.8");
}

/* nccl-tests -d all: one sweep per type, one after another in one table;
 * each restarts at the first size. A type, reduction or root that changes
 * elsewhere is malformed (mixed-redop.txt, mixed-roots.txt). */
static void test_reader_sweeps_per_type(void)
{
    GError *err = NULL;
    nccltests_log *log = nccltests_read(DATA "conveyor-dgx-a100-all-types.txt", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log->ngroups, 10);
    CU_ASSERT_EQUAL(log->nrows, 40);
    CU_ASSERT_EQUAL(log->dtype, NCCLTESTS_INT8); /* the first sweep's */
    CU_ASSERT_EQUAL(log->row_id[0].dtype, NCCLTESTS_INT8);
    CU_ASSERT_EQUAL(log->row_id[4].dtype, NCCLTESTS_UINT8);
    CU_ASSERT_EQUAL(log->row_id[39].dtype, NCCLTESTS_BFLOAT16);
    CU_ASSERT_EQUAL(log->row_id[39].redop, NCCLTESTS_OP_SUM);
    CU_ASSERT_EQUAL(log->row_id[39].root, -1);
    nccltests_log_free(log);
}

/* Every prefix of a real log either parses or fails with an error; never
 * both, never neither (and ASan/UBSan see no fault). */
static void test_reader_every_prefix_parses_or_fails(void)
{
    char *text = NULL;
    gsize len = 0;
    CU_ASSERT_FATAL(g_file_get_contents(DATA "55-a100-sxm4-40gb-8gpu-1node-nvswitch-allgather.txt",
                                        &text, &len, NULL));
    size_t ok = 0, bad = 0;
    for (gsize cut = 0; cut <= len; cut += 7) {
        GError *err = NULL;
        nccltests_log *log = nccltests_parse("prefix", text, cut, -1, &err);
        CU_ASSERT((log == NULL) != (err == NULL));
        ok += log != NULL;
        bad += err != NULL;
        nccltests_log_free(log);
        g_clear_error(&err);
    }
    CU_ASSERT(ok > 0 && bad > 0);
    g_free(text);
}

/* ---- bad input ----------------------------------------------------------- */

typedef struct {
    const char *file;
    int code;
    int line;
} bad_case;

static const bad_case bad_cases[] = {
    {"truncated-row.txt", NCCLTESTS_ERROR_TRUNCATED_ROW, 11},
    {"wrong-column-count.txt", NCCLTESTS_ERROR_COLUMN_COUNT, 11},
    {"non-numeric-size.txt", NCCLTESTS_ERROR_NOT_NUMBER, 11},
    {"non-numeric-bandwidth.txt", NCCLTESTS_ERROR_NOT_NUMBER, 11},
    {"negative-time.txt", NCCLTESTS_ERROR_BAD_VALUE, 11},
    {"nan-time.txt", NCCLTESTS_ERROR_BAD_VALUE, 11},
    {"unknown-type.txt", NCCLTESTS_ERROR_BAD_VALUE, 11},
    {"mixed-redop.txt", NCCLTESTS_ERROR_MIXED, 11},
    {"mixed-collectives.txt", NCCLTESTS_ERROR_MIXED, 11},
    {"duplicate-size.txt", NCCLTESTS_ERROR_DUPLICATE_SIZE, 11},
    {"mixed-roots.txt", NCCLTESTS_ERROR_MIXED, 20},
    {"repeated-sweep.txt", NCCLTESTS_ERROR_MIXED, 29},
    {"no-table.txt", NCCLTESTS_ERROR_NO_TABLE, 4},
    {"empty.txt", NCCLTESTS_ERROR_NO_TABLE, 1},
    {"binary-garbage.bin", NCCLTESTS_ERROR_BINARY, 1},
    {"no-collective.txt", NCCLTESTS_ERROR_NO_COLLECTIVE, 1},
    {"no-nranks.txt", NCCLTESTS_ERROR_NO_NRANKS, 1},
    {"prefix-mixed-styles.txt", NCCLTESTS_ERROR_MIXED, 11},
    {"prefix-tag-bad-time.txt", NCCLTESTS_ERROR_NOT_NUMBER, 11},
    {"prefix-like-size.txt", NCCLTESTS_ERROR_MIXED, 11},
    {"split-row-never-ends.txt", NCCLTESTS_ERROR_TRUNCATED_ROW, 11},
    {"split-row-cut-mid-group.txt", NCCLTESTS_ERROR_TRUNCATED_ROW, 11},
    {"two-runs.txt", NCCLTESTS_ERROR_MIXED, 12},
};

static void test_reader_bad_inputs(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
        const bad_case *c = &bad_cases[i];
        char *path = g_strconcat(BAD, c->file, NULL);
        GError *err = NULL;
        nccltests_log *log = nccltests_read(path, &err);
        CU_ASSERT_PTR_NULL(log);
        nccltests_log_free(log);
        CU_ASSERT_PTR_NOT_NULL_FATAL(err);
        if (!g_error_matches(err, NCCLTESTS_ERROR, c->code))
            fprintf(stderr, "\n%s: code %d, want %d: %s\n", c->file, err->code, c->code, err->message);
        CU_ASSERT(g_error_matches(err, NCCLTESTS_ERROR, c->code));
        char *prefix = g_strdup_printf("%s:%d:", path, c->line);
        if (!g_str_has_prefix(err->message, prefix))
            fprintf(stderr, "\n%s: want prefix %s, got %s\n", c->file, prefix, err->message);
        CU_ASSERT(g_str_has_prefix(err->message, prefix));
        g_free(prefix);
        g_error_free(err);
        g_free(path);
    }
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(nccltests_read(BAD "does-not-exist.txt", &err));
    CU_ASSERT(g_error_matches(err, NCCLTESTS_ERROR, NCCLTESTS_ERROR_IO));
    g_clear_error(&err);
}

/* ---- validate statistics ------------------------------------------------- */

static void test_percentile_nearest_rank_by_hand(void)
{
    /* sorted: 1 2 3 4 5 6 7 8 9 10; nearest rank ceil(p n / 100) */
    double v[] = {7, 3, 10, 1, 9, 2, 8, 4, 6, 5};
    CU_ASSERT_EQUAL(vstats_percentile(v, 10, 50), 5);  /* rank 5 */
    CU_ASSERT_EQUAL(vstats_percentile(v, 10, 90), 9);  /* rank 9 */
    CU_ASSERT_EQUAL(vstats_percentile(v, 10, 91), 10); /* rank ceil(9.1) = 10 */
    CU_ASSERT_EQUAL(vstats_percentile(v, 10, 100), 10);
    CU_ASSERT_EQUAL(vstats_percentile(v, 10, 0), 1);
    CU_ASSERT_EQUAL(v[0], 7); /* input untouched */
    double w[] = {4, 1, 3};
    CU_ASSERT_EQUAL(vstats_percentile(w, 3, 50), 3); /* rank ceil(1.5) = 2 -> 3 */
    CU_ASSERT(isnan(vstats_percentile(NULL, 0, 50)));
}

static void test_vstats_summary_by_hand(void)
{
    /* busbw errors from the times (meas_time / pred_time - 1): excluded (0 bytes), +10% (small,
     * whose printed busbw 0.00 does not matter), -20%, +5%, -40% (>= 1 MiB) */
    vstats_point p[] = {
        {.size_bytes = 0, .meas_time_us = 10, .meas_busbw_GBps = 0, .pred_time_us = 12, .pred_busbw_GBps = 0},
        {.size_bytes = 8, .meas_time_us = 11, .meas_busbw_GBps = 0, .pred_time_us = 10, .pred_busbw_GBps = 0.0008},
        {.size_bytes = 1048576, .meas_time_us = 100, .meas_busbw_GBps = 100, .pred_time_us = 125, .pred_busbw_GBps = 80},
        {.size_bytes = 4194304, .meas_time_us = 105, .meas_busbw_GBps = 200, .pred_time_us = 100, .pred_busbw_GBps = 210},
        {.size_bytes = 16777216, .meas_time_us = 60, .meas_busbw_GBps = 250, .pred_time_us = 100, .pred_busbw_GBps = 150},
    };
    vstats_summary s;
    vstats_compute(p, G_N_ELEMENTS(p), &s);
    CU_ASSERT(p[0].excluded);
    CU_ASSERT(isnan(p[0].busbw_err_pct));
    ASSERT_REL(p[0].time_err_pct, 20.0, 1e-12);
    ASSERT_REL(p[1].busbw_err_pct, 10.0, 1e-12);
    ASSERT_REL(p[2].busbw_err_pct, -20.0, 1e-12);
    ASSERT_REL(p[4].busbw_err_pct, -40.0, 1e-12);
    CU_ASSERT_EQUAL(s.points, 4);
    /* |err| sorted: 5 10 20 40; median rank 2 -> 10; p90 rank ceil(3.6) = 4 -> 40 */
    ASSERT_REL(s.median, 10.0, 1e-12);
    ASSERT_REL(s.p90, 40.0, 1e-12);
    ASSERT_REL(s.max, 40.0, 1e-12);
    /* >= 1 MiB: 5 20 40; median rank 2 -> 20; p90 rank 3 -> 40 */
    CU_ASSERT_EQUAL(s.points_large, 3);
    ASSERT_REL(s.median_large, 20.0, 1e-12);
    ASSERT_REL(s.p90_large, 40.0, 1e-12);

    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    vstats_print(f, p, G_N_ELEMENTS(p), &s);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nsummary: points=4 median_abs_err=10.00% p90_abs_err=40.00% "
                                       "max_abs_err=40.00% (sizes >= 1MiB: median 20.00% p90 40.00%)\n"));
    CU_ASSERT(g_str_has_suffix(buf, "p90 40.00%)\n"));
    free(buf);
}

static void test_vstats_pair_rows(void)
{
    nccltests_row meas[2] = {{.size_bytes = 8, .time_us = {10, 11}, .busbw_GBps = {0, 0}},
                             {.size_bytes = 1024, .time_us = {20, 21}, .busbw_GBps = {5, 6}}};
    nccltests_row pred[2] = {{.size_bytes = 1024, .time_us = {18, 19}, .busbw_GBps = {5.5, 6.5}},
                             {.size_bytes = 8, .time_us = {9, 9}, .busbw_GBps = {0.001, 0.001}}};
    size_t n = 0;
    vstats_point *pts = vstats_pair_rows(meas, 2, pred, 2, NCCLTESTS_IP, &n, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pts);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(pts[1].pred_time_us, 19);
    CU_ASSERT_EQUAL(pts[1].meas_busbw_GBps, 6);
    g_free(pts);
    GError *err = NULL;
    CU_ASSERT_PTR_NULL(vstats_pair_rows(meas, 2, pred, 1, NCCLTESTS_OOP, &n, &err));
    CU_ASSERT(g_error_matches(err, NCCLTESTS_ERROR, NCCLTESTS_ERROR_BAD_VALUE));
    g_clear_error(&err);
}

int main(void)
{
    static const test_case cases[] = {
        {"test_coll_names_parse_variants", test_coll_names_parse_variants},
        {"test_busbw_factor_closed_forms", test_busbw_factor_closed_forms},
        {"test_dtypes_and_redops", test_dtypes_and_redops},
        {"test_count_conventions_match_real_files", test_count_conventions_match_real_files},
        {"test_row_bw_closed_form", test_row_bw_closed_form},
        {"test_writer_golden_byte_for_byte", test_writer_golden_byte_for_byte},
        {"test_writer_per_row_type_and_redop", test_writer_per_row_type_and_redop},
        {"test_writer_round_trip", test_writer_round_trip},
        {"test_writer_csv_and_json", test_writer_csv_and_json},
        {"test_reader_real_files", test_reader_real_files},
        {"test_reader_old_format_details", test_reader_old_format_details},
        {"test_reader_derives_nranks_from_ratio", test_reader_derives_nranks_from_ratio},
        {"test_reader_tolerates_noise_and_slurm", test_reader_tolerates_noise_and_slurm},
        {"test_reader_launcher_prefixes", test_reader_launcher_prefixes},
        {"test_reader_rows_split_by_nccl_lines", test_reader_rows_split_by_nccl_lines},
        {"test_reader_runs", test_reader_runs},
        {"test_reader_keeps_tuning_lines", test_reader_keeps_tuning_lines},
        {"test_reader_keeps_ring_lines", test_reader_keeps_ring_lines},
        {"test_reader_keeps_trees_lines", test_reader_keeps_trees_lines},
        {"test_reader_keeps_latbw_table", test_reader_keeps_latbw_table},
        {"test_reader_keeps_env_lines", test_reader_keeps_env_lines},
        {"test_reader_nccl_version", test_reader_nccl_version},
        {"test_reader_sweeps_per_type", test_reader_sweeps_per_type},
        {"test_nvls_reduces_table", test_nvls_reduces_table},
        {"test_reader_bad_inputs", test_reader_bad_inputs},
        {"test_reader_every_prefix_parses_or_fails", test_reader_every_prefix_parses_or_fails},
        {"test_percentile_nearest_rank_by_hand", test_percentile_nearest_rank_by_hand},
        {"test_vstats_summary_by_hand", test_vstats_summary_by_hand},
        {"test_vstats_pair_rows", test_vstats_pair_rows},
        {NULL, NULL},
    };
    return test_main("nccltests", cases);
}

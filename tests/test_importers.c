/* Tests of traces/kineto, traces/chakra and traces/pbwire on the real sample
 * traces in tests/data/traces (provenance and the independent counts in
 * tests/data/traces/PROVENANCE.md), a hand-written old-style Kineto trace, a
 * hand-written chakra_jsonizer file, and broken inputs. Run from the
 * repository root. */
#include <cjson/cJSON.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "testutil.h"
#include "traces/a2a_split.h"
#include "traces/chakra.h"
#include "traces/flightrec.h"
#include "traces/json_arena.h"
#include "traces/kineto.h"
#include "traces/nccllog.h"
#include "traces/pbwire.h"

#define DATA "tests/data/traces/"

#define OP(t, r, i) (&g_array_index((t)->ranks[r].ops, trace_op, (i)))

typedef struct {
    int colls[COLL_KINDS]; /* collectives per kind */
    int compute, gaps, sends, recvs;
} counts;

static counts count_ops(const trace *t, int r)
{
    counts c = {0};
    for (guint i = 0; i < t->ranks[r].ops->len; i++) {
        const trace_op *o = OP(t, r, i);
        if (o->kind == TOP_COLL)
            c.colls[o->coll]++;
        else if (o->kind == TOP_SEND)
            c.sends++;
        else if (o->kind == TOP_RECV)
            c.recvs++;
        else if (!strcmp(o->name, "host gap"))
            c.gaps++;
        else
            c.compute++;
    }
    return c;
}

/* How many collectives of `kind` and `bytes` rank r has. */
static int count_sized(const trace *t, int r, coll_kind kind, uint64_t bytes)
{
    int n = 0;
    for (guint i = 0; i < t->ranks[r].ops->len; i++) {
        const trace_op *o = OP(t, r, i);
        n += o->kind == TOP_COLL && o->coll == kind && o->bytes == bytes;
    }
    return n;
}

/* python3: 15 ncclKernel_AllReduce (In msg nelems x 4 bytes, Float) and 6
 * ncclKernel_Broadcast (53120 Float, 53 Long), group [0, 1]; 2700 kernels +
 * 960 memcpy + 114 memset; ProfilerStep#4..6 durations 222442.191,
 * 219726.905, 224936.243 us (PROVENANCE.md). */
static void test_kineto_hta_resnet50_collectives(void)
{
    GError *err = NULL;
    trace *t = trace_kineto_load(DATA "hta_resnet50_rank0.json.gz", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->nranks, 1);
    counts c = count_ops(t, 0);
    CU_ASSERT_EQUAL(c.colls[COLL_ALL_REDUCE], 15);
    CU_ASSERT_EQUAL(c.colls[COLL_BROADCAST], 6);
    CU_ASSERT_EQUAL(c.compute + c.colls[COLL_ALL_REDUCE] + c.colls[COLL_BROADCAST], 2700 + 960 + 114);
    const uint64_t ar[] = {2049000, 7875584, 6563840, 6637568, 2431040};
    for (size_t i = 0; i < G_N_ELEMENTS(ar); i++)
        CU_ASSERT_EQUAL(count_sized(t, 0, COLL_ALL_REDUCE, ar[i] * 4), 3);
    CU_ASSERT_EQUAL(count_sized(t, 0, COLL_BROADCAST, 53120 * 4), 3);
    CU_ASSERT_EQUAL(count_sized(t, 0, COLL_BROADCAST, 53 * 8), 3);
    CU_ASSERT_EQUAL(t->groups->len, 1);
    const trace_group *g = g_ptr_array_index(t->groups, 0);
    CU_ASSERT_EQUAL(g->size, 2);
    CU_ASSERT_STRING_EQUAL(g->name, "0");
    CU_ASSERT_EQUAL(t->step_ps, 222442191000LL);
    /* every collective waits for a compute kernel of the other stream */
    for (guint i = 0; i < t->ranks[0].ops->len; i++)
        if (OP(t, 0, i)->kind == TOP_COLL)
            CU_ASSERT(OP(t, 0, i)->deps && OP(t, 0, i)->deps->len == 1 && OP(t, 0, i)->stream == 1);
    trace *two = trace_replicate(t, 2, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(two);
    CU_ASSERT(trace_validate(two, &err));
    trace_free(two);
    trace_free(t);
}

/* python3: one ncclDevKernel_AllGather, Out msg nelems 201088 BFloat16, PG
 * "3" of 8 ranks; 768 kernels + 161 memcpy; no ProfilerStep. */
static void test_kineto_b200_allgather(void)
{
    GError *err = NULL;
    trace *t = trace_kineto_load(DATA "tracelens_b200_rank0.json.gz", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    counts c = count_ops(t, 0);
    CU_ASSERT_EQUAL(c.colls[COLL_ALL_GATHER], 1);
    CU_ASSERT_EQUAL(count_sized(t, 0, COLL_ALL_GATHER, 201088 * 2), 1);
    CU_ASSERT_EQUAL(c.compute + 1, 768 + 161);
    CU_ASSERT_EQUAL(t->step_ps, -1);
    const trace_group *g = g_ptr_array_index(t->groups, 0);
    CU_ASSERT_EQUAL(g->size, 8);
    CU_ASSERT_STRING_EQUAL(g->name, "3");
    trace_free(t);
}

/* Hand-written: kernels gemm [20,120) and relu [160,200) on stream 7, relu
 * launched at 150 -> host gap 30 us; an NCCL kernel without args linked by
 * External id 10 to nccl:all_reduce with Input Dims [[1024]] float -> 4096
 * bytes over world_size 2; it waits for relu (ended at 200 < 210). */
static void test_kineto_old_style_annotation_and_host_gap(void)
{
    GError *err = NULL;
    trace *t = trace_kineto_load(DATA "kineto_old_style.json", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL_FATAL(t->ranks[0].ops->len, 4);
    CU_ASSERT_STRING_EQUAL(OP(t, 0, 1)->name, "host gap");
    CU_ASSERT_EQUAL(OP(t, 0, 1)->dur_ps, 30000000);
    CU_ASSERT_EQUAL(OP(t, 0, 1)->stream, 0);
    const trace_op *ar = OP(t, 0, 3);
    CU_ASSERT_EQUAL(ar->kind, TOP_COLL);
    CU_ASSERT_EQUAL(ar->coll, COLL_ALL_REDUCE);
    CU_ASSERT_EQUAL(ar->bytes, 4096);
    CU_ASSERT_EQUAL(ar->stream, 1);
    CU_ASSERT_EQUAL(ar->dur_ps, 50000000);
    CU_ASSERT_EQUAL_FATAL(ar->deps ? ar->deps->len : 0, 1);
    CU_ASSERT_EQUAL(g_array_index(ar->deps, uint32_t, 0), 2);
    CU_ASSERT_EQUAL(((trace_group *)g_ptr_array_index(t->groups, ar->group))->size, 2);
    CU_ASSERT_EQUAL(t->step_ps, 1000000000LL);
    trace_free(t);
    /* the same trace with the annotation turned into PyTorch's nccl:coalesced (a batch_isend_irecv's
     * SendRecv kernel, launched where no record_param_comms is open): no size anywhere, so the
     * kernel stays at its traced 50 us as compute, and the note says so (the load used to fail) */
    gchar *body = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(DATA "kineto_old_style.json", &body, NULL, NULL));
    GString *g = g_string_new(body);
    g_string_replace(g, "\"nccl:all_reduce\"", "\"nccl:coalesced\"", 1);
    g_string_replace(g, "ncclKernel_AllReduce_RING_LL_Sum_float", "ncclDevKernel_SendRecv", 1);
    char *path = NULL;
    int fd = g_file_open_tmp("kineto-XXXXXX.json", &path, NULL);
    close(fd);
    g_file_set_contents(path, g->str, -1, NULL);
    char *note = NULL;
    t = trace_kineto_load_noted(path, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const trace_op *k = OP(t, 0, 3);
    CU_ASSERT(k->kind == TOP_COMPUTE && k->dur_ps == 50000000 && g_str_has_prefix(k->name, "ncclDevKernel_SendRecv"));
    CU_ASSERT_PTR_NOT_NULL(note && strstr(note, "Kineto: 1 NCCL kernel without the collective's size in the trace "
                                                "(e.g. ncclDevKernel_SendRecv"));
    g_free(note);
    trace_free(t);
    g_unlink(path);
    g_free(path);
    g_string_free(g, TRUE);
    g_free(body);
}

/* python3 wire-format decode (PROVENANCE.md): 3664 nodes = 3643 COMP + 21
 * COMM_COLL; 7 of the COLL nodes carry comm_type (2 BROADCAST: 212480, 424
 * bytes; 5 ALL_REDUCE: 8196000, 31502336, 26255360, 26550272, 9724160); the
 * other 14 are CPU-side c10d:: wrappers without comm_type. data_deps are
 * acyclic; ctrl_deps have self-loops and cycles. */
static void test_chakra_et_resnet50(void)
{
    GError *err = NULL;
    trace *t = trace_chakra_load(DATA "chakra.0.et.gz", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->ranks[0].ops->len, 3664);
    counts c = count_ops(t, 0);
    CU_ASSERT_EQUAL(c.colls[COLL_BROADCAST], 2);
    CU_ASSERT_EQUAL(c.colls[COLL_ALL_REDUCE], 5);
    CU_ASSERT_EQUAL(c.compute, 3643 + 14);
    CU_ASSERT_EQUAL(count_sized(t, 0, COLL_BROADCAST, 212480), 1);
    CU_ASSERT_EQUAL(count_sized(t, 0, COLL_BROADCAST, 424), 1);
    const uint64_t ar[] = {8196000, 31502336, 26255360, 26550272, 9724160};
    for (size_t i = 0; i < G_N_ELEMENTS(ar); i++)
        CU_ASSERT_EQUAL(count_sized(t, 0, COLL_ALL_REDUCE, ar[i]), 1);
    CU_ASSERT(trace_validate(t, &err));
    g_clear_error(&err);
    trace_free(t);
}

/* Hand-written jsonizer output: node 2 depends through METADATA node 3 on
 * node 1; node 4's ctrl deps: 2 kept, itself dropped. */
static void test_chakra_json_deps_through_metadata(void)
{
    GError *err = NULL;
    trace *t = trace_chakra_load(DATA "jsonized.json", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL_FATAL(t->ranks[0].ops->len, 3);
    const trace_op *a = OP(t, 0, 0), *b = OP(t, 0, 1), *d = OP(t, 0, 2);
    CU_ASSERT_EQUAL(a->kind, TOP_COLL);
    CU_ASSERT_EQUAL(a->coll, COLL_ALL_REDUCE);
    CU_ASSERT_EQUAL(a->bytes, 1048576);
    CU_ASSERT_EQUAL(a->dur_ps, 5000000);
    CU_ASSERT_EQUAL(b->kind, TOP_COMPUTE);
    CU_ASSERT_EQUAL_FATAL(b->deps ? b->deps->len : 0, 1);
    CU_ASSERT_EQUAL(g_array_index(b->deps, uint32_t, 0), 0);
    CU_ASSERT_EQUAL(d->kind, TOP_SEND);
    CU_ASSERT_EQUAL(d->peer, 1);
    CU_ASSERT_EQUAL(d->tag, 7);
    CU_ASSERT_EQUAL(d->bytes, 64);
    CU_ASSERT_EQUAL_FATAL(d->deps ? d->deps->len : 0, 1);
    CU_ASSERT_EQUAL(g_array_index(d->deps, uint32_t, 0), 1);
    trace_free(t);
}

/* Removes a temporary directory with the files in it, and frees its name. */
static void tmp_dir_remove(char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    for (const char *n; d && (n = g_dir_read_name(d));) {
        char *f = g_build_filename(dir, n, NULL);
        remove(f);
        g_free(f);
    }
    if (d)
        g_dir_close(d);
    remove(dir);
    g_free(dir);
}

/* Chakra's GATHER (3) and SCATTER (4) are the collectives, of comm_size
 * bytes; a Chakra node has no root, so it is 0 (as for REDUCE and BROADCAST). */
static void test_chakra_gather_scatter(void)
{
    char *dir = g_dir_make_tmp("conveyor-chakra-XXXXXX", NULL);
    char *f = g_build_filename(dir, "gs.json", NULL);
    g_assert(g_file_set_contents(
        f,
        "{\"version\":\"0.0.4\"}\n"
        "{\"id\":\"1\",\"name\":\"g\",\"type\":\"COMM_COLL_NODE\",\"attr\":[{\"name\":\"comm_type\",\"int64Val\":\"3\"},"
        "{\"name\":\"comm_size\",\"int64Val\":\"4096\"}]}\n"
        "{\"id\":\"2\",\"name\":\"s\",\"type\":\"COMM_COLL_NODE\",\"dataDeps\":[\"1\"],\"attr\":[{\"name\":"
        "\"comm_type\",\"int64Val\":\"4\"},{\"name\":\"comm_size\",\"int64Val\":\"8192\"}]}\n",
        -1, NULL));
    GError *err = NULL;
    trace *t = trace_chakra_load(f, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL_FATAL(t->ranks[0].ops->len, 2);
    const trace_op *g = OP(t, 0, 0), *sc = OP(t, 0, 1);
    CU_ASSERT(g->kind == TOP_COLL && g->coll == COLL_GATHER && g->bytes == 4096 && g->root == 0);
    CU_ASSERT(sc->kind == TOP_COLL && sc->coll == COLL_SCATTER && sc->bytes == 8192 && sc->root == 0);
    trace_free(t);
    g_free(f);
    tmp_dir_remove(dir);
}

static void test_pbwire_varint_and_packed(void)
{
    const uint8_t buf[] = {0x08, 0x96, 0x01, 0x22, 0x03, 0x01, 0xac, 0x02};
    pbwire_reader r = {buf, sizeof buf, 0, 0};
    pbwire_field f;
    CU_ASSERT_EQUAL(pbwire_next(&r, &f), PBWIRE_OK);
    CU_ASSERT_EQUAL(f.field, 1);
    CU_ASSERT_EQUAL(f.v, 150); /* the protobuf encoding guide's example */
    CU_ASSERT_EQUAL(pbwire_next(&r, &f), PBWIRE_OK);
    CU_ASSERT_EQUAL(f.field, 4);
    CU_ASSERT_EQUAL(f.wire, PB_LEN);
    CU_ASSERT_EQUAL(f.data_offset, 5);
    CU_ASSERT_EQUAL(pbwire_next(&r, &f), PBWIRE_END);
    const uint8_t cut[] = {0x08, 0x96};
    pbwire_reader c = {cut, sizeof cut, 0, 0};
    CU_ASSERT_EQUAL(pbwire_next(&c, &f), PBWIRE_ETRUNC);
}

/* `load` is called here so that err is read after it ran. */
static void expect_error(trace *(*load)(const char *, GError **), const char *path, int code, const char *needle)
{
    GError *err = NULL;
    trace *t = load(path, &err);
    CU_ASSERT_PTR_NULL(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(err->code, code);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, needle));
    g_error_free(err);
}

static void test_bad_inputs_report_code_and_position(void)
{
    expect_error(trace_kineto_load, DATA "bad/truncated_gzip.json.gz", TRACE_ERROR_PARSE,
                 "gzip: truncated after 4000 compressed bytes");
    expect_error(trace_kineto_load, DATA "bad/not_chrome_trace.json", TRACE_ERROR_SCHEMA,
                 "not a Chrome trace");
    expect_error(trace_kineto_load, DATA "bad/invalid_json.json", TRACE_ERROR_PARSE, ":2:");
    expect_error(trace_chakra_load, DATA "bad/truncated_varint.et", TRACE_ERROR_PARSE,
                 "byte 2: node 0: truncated");
    expect_error(trace_chakra_load, DATA "bad/host_execution_trace.json", TRACE_ERROR_SCHEMA,
                 "host execution trace");
    expect_error(trace_chakra_load, DATA "no_such_prefix", TRACE_ERROR_IO, "no_such_prefix.0.et");
    expect_error(trace_kineto_load, DATA "no_such_file.json", TRACE_ERROR_IO, "no_such_file");
}

static void test_kineto_names_and_dtypes(void)
{
    coll_kind k;
    CU_ASSERT_EQUAL(kineto_coll_from_name("_allgather_base", &k), 0);
    CU_ASSERT_EQUAL(k, COLL_ALL_GATHER);
    CU_ASSERT_EQUAL(kineto_coll_from_name("reduce_scatter_tensor_coalesced", &k), 0);
    CU_ASSERT_EQUAL(k, COLL_REDUCE_SCATTER);
    CU_ASSERT_EQUAL(kineto_coll_from_name("all_to_allv", &k), 0);
    CU_ASSERT_EQUAL(k, COLL_ALLTOALL);
    CU_ASSERT_EQUAL(kineto_coll_from_name("_all_gather_base", &k), 0);
    CU_ASSERT_EQUAL(k, COLL_ALL_GATHER);
    CU_ASSERT_EQUAL(kineto_coll_from_name("barrier", &k), -1);
    CU_ASSERT_EQUAL(kineto_dtype_bytes("BFloat16"), 2);
    CU_ASSERT_EQUAL(kineto_dtype_bytes("Long"), 8);
    CU_ASSERT_EQUAL(kineto_dtype_bytes("c10::Half"), 2);
    CU_ASSERT_EQUAL(kineto_dtype_bytes("Quaternion"), 0);
}

/* A directory of per-rank Kineto traces: the ranks come from their
 * distributedInfo, and the trace is validated across the files (its
 * collectives numbered: a 2-rank directory used to replay into a false
 * deadlock with every collective at #-1). Three files of a 2-rank job name
 * a group the third rank is not in: an error, not a replay. */
static char *kineto_dir(const int *ranks, int n)
{
    char *old = NULL;
    g_assert(g_file_get_contents(DATA "kineto_old_style.json", &old, NULL, NULL));
    char *dir = g_dir_make_tmp("conveyor-kineto-XXXXXX", NULL);
    g_assert(dir);
    for (int i = 0; i < n; i++) {
        char needle[] = "\"rank\": 0", repl[32];
        g_snprintf(repl, sizeof repl, "\"rank\": %d", ranks[i]);
        char *at = strstr(old, needle);
        g_assert(at);
        GString *txt = g_string_new_len(old, at - old);
        g_string_append(txt, repl);
        g_string_append(txt, at + strlen(needle));
        char *name = g_strdup_printf("%s/r%d.json", dir, i);
        g_assert(g_file_set_contents(name, txt->str, -1, NULL));
        g_free(name);
        g_string_free(txt, TRUE);
    }
    g_free(old);
    return dir;
}

static void test_kineto_directory_validated(void)
{
    GError *err = NULL;
    int two[2] = {1, 0}; /* file order differs from the ranks */
    char *dir = kineto_dir(two, 2);
    trace *t = trace_kineto_load(dir, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->nranks, 2);
    for (int r = 0; r < 2; r++) {
        const trace_op *ar = OP(t, r, 3);
        CU_ASSERT_EQUAL(ar->kind, TOP_COLL);
        CU_ASSERT_EQUAL(ar->seq, 0); /* numbered */
    }
    trace_free(t);
    tmp_dir_remove(dir);
    int three[3] = {0, 1, 2};
    dir = kineto_dir(three, 3);
    CU_ASSERT_PTR_NULL(trace_kineto_load(dir, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "rank 2 is not in group"));
    g_clear_error(&err);
    tmp_dir_remove(dir);
}

/* Two ranks' Kineto files, each with a broadcast, a gather and a scatter
 * (kernels carrying PyTorch's record_param_comms args) whose "Rank" is
 * root[file]; gather records Out = piece x 2, scatter In = piece x 2 (as
 * PyTorch 2.2+). Returns the directory. */
static char *kineto_rooted_dir(const int root[2], int group_size)
{
    char *dir = g_dir_make_tmp("conveyor-kineto-XXXXXX", NULL);
    g_assert(dir);
    const char *ops[][4] = {{"Broadcast", "broadcast", "256", "256"},
                            {"SendRecv", "gather", "256", "512"},
                            {"SendRecv", "scatter", "512", "256"}};
    for (int r = 0; r < 2; r++) {
        GString *g = g_string_new(NULL);
        g_string_printf(g, "{\"distributedInfo\": {\"rank\": %d, \"world_size\": 2}, \"traceEvents\": [", r);
        for (int i = 0; i < 3; i++)
            g_string_append_printf(g, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_%s\", "
                                      "\"pid\": 0, \"tid\": 20, \"ts\": %d, \"dur\": 10, \"args\": {\"stream\": 20, "
                                      "\"Collective name\": \"%s\", \"dtype\": \"Float\", \"In msg nelems\": %s, "
                                      "\"Out msg nelems\": %s, \"Group size\": %d, \"Rank\": %d, \"Process Group Name\": "
                                      "\"0\", \"Process Group Ranks\": \"[0, 1]\"}}",
                                   i ? ", " : "", ops[i][0], 100 * i, ops[i][1], ops[i][2], ops[i][3], group_size,
                                   root[r]);
        g_string_append(g, "]}");
        char *f = g_strdup_printf("%s/r%d.json", dir, r);
        g_assert(g_file_set_contents(f, g->str, -1, NULL));
        g_free(f);
        g_string_free(g, TRUE);
    }
    return dir;
}

/* n ranks' Kineto files, each with one all_to_allv (Float) whose split sizes are the rows of
 * rows[i n + j] (what rank i sends rank j, in rows of `re` elements): "In split size" row i,
 * "Out split size" column i, as PyTorch records them; `cut` writes lists over 30 entries as
 * format_list cuts them. in_list/out_list (when not NULL) replace rank `who`'s lists as written.
 * Returns the directory. */
static char *kineto_a2a_dir(int n, const int *rows, int re, gboolean cut, int who, const char *in_list,
                            const char *out_list)
{
    char *dir = g_dir_make_tmp("conveyor-kineto-XXXXXX", NULL);
    g_assert(dir);
    GString *ranks = g_string_new("[");
    for (int i = 0; i < n; i++) /* cut as PyTorch cuts the group's ranks too */
        if (!cut || i < 29 || i == n - 1)
            g_string_append_printf(ranks, "%s%d", i ? ", " : "", i);
        else if (i == 29)
            g_string_append(ranks, ", ...");
    g_string_append(ranks, "]");
    for (int i = 0; i < n; i++) {
        GString *in = g_string_new("["), *out = g_string_new("[");
        long tin = 0, tout = 0;
        for (int j = 0; j < n; j++) {
            tin += rows[i * n + j];
            tout += rows[j * n + i];
            if (cut && j >= 29 && j < n - 1) {
                if (j == 29) {
                    g_string_append(in, ", ...");
                    g_string_append(out, ", ...");
                }
                continue;
            }
            g_string_append_printf(in, "%s%d", j ? ", " : "", rows[i * n + j]);
            g_string_append_printf(out, "%s%d", j ? ", " : "", rows[j * n + i]);
        }
        g_string_append(in, "]");
        g_string_append(out, "]");
        char *txt = g_strdup_printf(
            "{\"distributedInfo\": {\"rank\": %d, \"world_size\": %d}, \"traceEvents\": ["
            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_SendRecv\", \"pid\": 0, \"tid\": 20, "
            "\"ts\": 0, \"dur\": 10, \"args\": {\"stream\": 20, \"Collective name\": \"all_to_allv\", \"dtype\": "
            "\"Float\", \"In msg nelems\": %ld, \"Out msg nelems\": %ld, \"In split size\": \"%s\", \"Out split "
            "size\": \"%s\", \"Process Group Name\": \"0\", \"Process Group Ranks\": \"%s\", \"Group size\": %d}}]}",
            i, n, tin * re, tout * re, i == who && in_list ? in_list : in->str,
            i == who && out_list ? out_list : out->str, ranks->str, n);
        char *f = g_strdup_printf("%s/r%d.json", dir, i);
        g_assert(g_file_set_contents(f, txt, -1, NULL));
        g_free(f);
        g_free(txt);
        g_string_free(in, TRUE);
        g_string_free(out, TRUE);
    }
    g_string_free(ranks, TRUE);
    return dir;
}

/* PyTorch's all_to_all_single with split sizes: each member records its own totals and lists, so
 * the ranks' ops differ (until 2026-12-03 a directory of such files was refused: "ranks disagree
 * on collective #0"). Read back as one uneven alltoall: every member names the same n x n matrix
 * (trace.a2a_weights, mean 1), whose shares x bytes / n are the bytes each pair moves, and carries
 * the mean bytes a member sends. Even lists stay an even alltoall. A receiver's list that
 * disagrees, a list of another length than the group, bytes that are not whole rows, text that is
 * not a list: errors naming the file and event. Lists cut to 30 entries (groups over 30 ranks):
 * the matrix from the totals (s_i r_j / sum r), with a note; a lone rank's: even, with a note. */
static void test_kineto_alltoall_splits(void)
{
    GError *err = NULL;
    char *note = NULL;
    enum { n = 4, re = 256 }; /* rows of 1 KiB */
    const int rows[n * n] = {4, 1, 1, 2, 2, 4, 1, 1, 1, 1, 4, 2, 1, 2, 2, 3};
    char *dir = kineto_a2a_dir(n, rows, re, FALSE, -1, NULL, NULL);
    trace *t = trace_kineto_load_noted(dir, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NULL(note);
    int root = OP(t, 0, 0)->root;
    CU_ASSERT(root > 0);
    for (int r = 0; r < n; r++) { /* the mean of 8, 8, 8 and 8 rows: 8 KiB */
        CU_ASSERT(OP(t, r, 0)->kind == TOP_COLL && OP(t, r, 0)->coll == COLL_ALLTOALL);
        CU_ASSERT_EQUAL(OP(t, r, 0)->root, root);
        CU_ASSERT_EQUAL(OP(t, r, 0)->bytes, 8 * 1024);
    }
    int nw;
    const double *w = trace_a2a_weights(t, root, &nw);
    CU_ASSERT_EQUAL_FATAL(nw, n * n);
    for (int e = 0; e < n * n; e++)
        CU_ASSERT_DOUBLE_EQUAL(w[e] * 8 * 1024 / n, rows[e] * 1024.0, 1e-6);
    CU_ASSERT_TRUE(trace_validate(t, &err));
    trace_free(t);
    tmp_dir_remove(dir);

    /* unequal totals too: rank 3 sends and receives 12 rows, the others 8 */
    const int skew[n * n] = {4, 1, 1, 2, 2, 4, 1, 1, 1, 1, 4, 2, 1, 2, 2, 7};
    dir = kineto_a2a_dir(n, skew, re, FALSE, -1, NULL, NULL);
    t = trace_kineto_load_noted(dir, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int r = 0; r < n; r++)
        CU_ASSERT_EQUAL(OP(t, r, 0)->bytes, 9 * 1024); /* (8 + 8 + 8 + 12) / 4 rows */
    w = trace_a2a_weights(t, OP(t, 0, 0)->root, &nw);
    CU_ASSERT_EQUAL_FATAL(nw, n * n);
    CU_ASSERT_DOUBLE_EQUAL(w[15] * 9 * 1024 / n, 7 * 1024.0, 1e-6);
    trace_free(t);
    tmp_dir_remove(dir);

    const int even[n * n] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
    dir = kineto_a2a_dir(n, even, re, FALSE, -1, NULL, NULL);
    t = trace_kineto_load_noted(dir, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int r = 0; r < n; r++)
        CU_ASSERT(OP(t, r, 0)->root == 0 && OP(t, r, 0)->bytes == 8 * 1024);
    CU_ASSERT_EQUAL(t->a2a_weights->len, 0);
    trace_free(t);
    tmp_dir_remove(dir);

    /* rank 1 says it receives 2 rows from rank 0, which sends it 1 */
    dir = kineto_a2a_dir(n, rows, re, FALSE, 1, NULL, "[2, 4, 1, 1]");
    CU_ASSERT_PTR_NULL(trace_kineto_load_noted(dir, &note, &err));
    CU_ASSERT(err && err->code == TRACE_ERROR_MISMATCH &&
              strstr(err->message, "r0.json: event 0 (alltoall #0): rank 0 sends 1024 bytes to rank 1, but ") &&
              strstr(err->message, "r1.json: event 0 says rank 1 receives 2048 from it"));
    g_clear_error(&err);
    tmp_dir_remove(dir);

    struct {
        const char *in, *msg;
    } bad[] = {{"[2, 4, 1]", "r1.json: event 0 (kernel 'ncclDevKernel_SendRecv'): In split size: 3 entries for a "
                             "process group of 4 ranks"},
               {"[2, 4, x, 1]", "In split size: expected split sizes that are whole numbers in 0..2^50"},
               {"[2, 4, 1, 1", "In split size: expected a list of split sizes"},
               {"[3, 4, 1, 1]", "In split size: 8192 bytes are not a whole number of its 9 rows"},
               {"[0, 0, 0, 0]", "In split size: no rows for 8192 bytes"},
               {"[..., 1]", "In split size: expected split sizes"}};
    for (size_t b = 0; b < G_N_ELEMENTS(bad); b++) {
        dir = kineto_a2a_dir(n, rows, re, FALSE, 1, bad[b].in, NULL);
        CU_ASSERT_PTR_NULL(trace_kineto_load_noted(dir, &note, &err));
        CU_ASSERT(err && err->code == TRACE_ERROR_VALUE && strstr(err->message, bad[b].msg));
        if (err && !strstr(err->message, bad[b].msg))
            fprintf(stderr, "%s\n", err->message);
        g_clear_error(&err);
        tmp_dir_remove(dir);
    }

    /* a lone rank of the job: its peers' lists are not there, so even, and the note says so */
    dir = kineto_a2a_dir(n, rows, re, FALSE, -1, NULL, NULL);
    char *one = g_strdup_printf("%s/r3.json", dir);
    t = trace_kineto_load_noted(one, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(OP(t, 0, 0)->root == 0 && OP(t, 0, 0)->bytes == 8 * 1024);
    CU_ASSERT(note && strstr(note, "1 uneven alltoall (split sizes) in a trace without all of its group's ranks"));
    g_clear_pointer(&note, g_free);
    trace_free(t);
    g_free(one);
    tmp_dir_remove(dir);

    /* 32 ranks: the lists are cut to 30 entries; rank 0 sends 3 rows to each, the others 1, so the
     * senders' totals are 96 and 32 rows, every receiver's 34: from the totals rank 0 sends rank j
     * 96 x 34 / 1,088 = 3 rows, rank 1 sends rank 0 32 x 34 / 1,088 = 1 (the matrix itself, as for
     * any whose rows are proportional) */
    enum { m = 32 };
    int *big = g_new(int, m * m);
    for (int e = 0; e < m * m; e++)
        big[e] = e < m ? 3 : 1;
    dir = kineto_a2a_dir(m, big, re, TRUE, -1, NULL, NULL);
    t = trace_kineto_load_noted(dir, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(note && strstr(note, "1 alltoall of groups over 30 ranks, whose split sizes PyTorch cuts to 30 entries, "
                                   "replayed from each member's totals"));
    g_clear_pointer(&note, g_free);
    uint64_t mean = (96 + 31 * 32) * 1024 / m; /* 34 rows */
    CU_ASSERT_EQUAL(OP(t, 5, 0)->bytes, mean);
    w = trace_a2a_weights(t, OP(t, 5, 0)->root, &nw);
    CU_ASSERT_EQUAL_FATAL(nw, m * m);
    CU_ASSERT_DOUBLE_EQUAL(w[1] * mean / m, 3 * 1024.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(w[m] * mean / m, 32.0 * 34 / 1088 * 1024, 1e-6);
    trace_free(t);
    tmp_dir_remove(dir);
    g_free(big);

    /* a group's ranks cut the same way: its "Group size" ranks where the visible ones are evenly
     * strided (a data-parallel group of every 8th rank of 512), else an error */
    struct {
        const char *list;
        int size, n, second, last; /* want: n ranks (0: refused), the second and the last */
    } rl[] = {{"[0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176, "
               "184, 192, 200, 208, 216, 224, ..., 504]", 64, 64, 8, 504},
              {"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, "
               "28, 29, ..., 40]", 40, 40, 2, 40},
              {"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, "
               "28, 29, ..., 40]", 0, 0, 0, 0},
              {"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, "
               "28, 30, ..., 41]", 40, 0, 0, 0},
              {"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, "
               "28, 29, ..., 41]", 40, 0, 0, 0}};
    for (size_t k = 0; k < G_N_ELEMENTS(rl); k++) {
        cJSON *v = cJSON_CreateString(rl[k].list);
        GArray *r = NULL;
        const char *why = NULL;
        gboolean ok = kineto_ranks_parse(v, rl[k].size, &r, &why);
        CU_ASSERT_EQUAL(ok, rl[k].n > 0);
        if (rl[k].n) {
            CU_ASSERT(r && r->len == (guint)rl[k].n && g_array_index(r, int, 1) == rl[k].second &&
                      g_array_index(r, int, rl[k].n - 1) == rl[k].last);
        } else {
            CU_ASSERT(!r && why && strstr(why, "a list cut to 30 entries"));
        }
        if (r)
            g_array_free(r, TRUE);
        cJSON_Delete(v);
    }

    /* the lists as PyTorch writes them, and as JSON arrays */
    GArray *l;
    gboolean c;
    const char *why;
    cJSON *v = cJSON_CreateString("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, "
                                  "24, 25, 26, 27, 28, 29, ..., 40]");
    CU_ASSERT(kineto_splits_parse(v, &l, &c, &why) && c && l && l->len == 30 &&
              g_array_index(l, double, 29) == 40);
    g_array_free(l, TRUE);
    cJSON_Delete(v);
    v = cJSON_CreateString(" [] ");
    CU_ASSERT(kineto_splits_parse(v, &l, &c, &why) && !l && !c);
    cJSON_Delete(v);
    v = cJSON_Parse("[3, 0, 1125899906842624]");
    CU_ASSERT(kineto_splits_parse(v, &l, &c, &why) && l && l->len == 3 && !c);
    g_array_free(l, TRUE);
    cJSON_Delete(v);
    const char *nots[] = {"[1.5]", "[-1]", "[1125899906842625]", "{}", "[1, ..., 2, ..., 3]"};
    for (size_t k = 0; k < G_N_ELEMENTS(nots); k++) {
        v = cJSON_Parse(nots[k]);
        if (!v)
            v = cJSON_CreateString(nots[k]);
        CU_ASSERT_FALSE(kineto_splits_parse(v, &l, &c, &why));
        CU_ASSERT_PTR_NULL(l);
        cJSON_Delete(v);
    }
    v = cJSON_CreateString("[1, ..., 2, ..., 3]");
    CU_ASSERT_FALSE(kineto_splits_parse(v, &l, &c, &why));
    cJSON_Delete(v);
}

/* Gather and scatter (PyTorch runs them as sends and receives in one NCCL
 * group) are read as the collectives, of the whole list's bytes; a rooted
 * collective's "Rank" is its root (PyTorch 2.2+, pytorch#113828), and where
 * the members disagree on it (before 2.2: each caller's own rank) root 0
 * is taken and the note says so. A root outside the group is an error. */
static void test_kineto_gather_scatter_roots(void)
{
    GError *err = NULL;
    char *note = NULL;
    int one[2] = {1, 1}, own[2] = {0, 1}, bad[2] = {5, 5};
    char *dir = kineto_rooted_dir(one, 2);
    trace *t = trace_kineto_load_noted(dir, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NULL(note);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL_FATAL(t->ranks[r].ops->len, 3);
        const trace_op *b = OP(t, r, 0), *ga = OP(t, r, 1), *sc = OP(t, r, 2);
        CU_ASSERT(b->kind == TOP_COLL && b->coll == COLL_BROADCAST && b->bytes == 1024 && b->root == 1);
        CU_ASSERT(ga->kind == TOP_COLL && ga->coll == COLL_GATHER && ga->bytes == 2048 && ga->root == 1);
        CU_ASSERT(sc->kind == TOP_COLL && sc->coll == COLL_SCATTER && sc->bytes == 2048 && sc->root == 1);
    }
    trace_free(t);
    tmp_dir_remove(dir);

    dir = kineto_rooted_dir(own, 2);
    t = trace_kineto_load_noted(dir, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int r = 0; r < 2; r++)
        for (guint i = 0; i < 3; i++)
            CU_ASSERT_EQUAL(OP(t, r, i)->root, 0);
    CU_ASSERT_PTR_NOT_NULL(note && strstr(note, "3 broadcast/reduce/gather/scatters whose members disagree on "
                                                "\"Rank\""));
    g_free(note);
    note = NULL;
    trace_free(t);
    tmp_dir_remove(dir);

    dir = kineto_rooted_dir(bad, 2);
    CU_ASSERT_PTR_NULL(trace_kineto_load_noted(dir, &note, &err));
    CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "event 0 (kernel 'ncclDevKernel_Broadcast'): Rank (the root"));
    g_clear_error(&err);
    tmp_dir_remove(dir);

    /* two process groups over the same ranks, each numbering its collectives ("Seq" 0 both):
     * two communicators, not one group calling collective #0 twice */
    dir = g_dir_make_tmp("conveyor-kineto-XXXXXX", NULL);
    for (int r = 0; r < 2; r++) {
        char *txt = g_strdup_printf(
            "{\"distributedInfo\": {\"rank\": %d, \"world_size\": 2}, \"traceEvents\": ["
            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce\", \"pid\": 0, \"tid\": 20, "
            "\"ts\": 0, \"dur\": 10, \"args\": {\"stream\": 20, \"Collective name\": \"allreduce\", \"dtype\": \"Float\", "
            "\"In msg nelems\": 256, \"Out msg nelems\": 256, \"Process Group Name\": \"0\", \"Process Group Ranks\": "
            "\"[0, 1]\", \"Seq\": 0}}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce\", "
            "\"pid\": 0, \"tid\": 20, \"ts\": 100, \"dur\": 10, \"args\": {\"stream\": 20, \"Collective name\": "
            "\"allreduce\", \"dtype\": \"Float\", \"In msg nelems\": 512, \"Out msg nelems\": 512, \"Process Group "
            "Name\": \"1\", \"Process Group Ranks\": \"[0, 1]\", \"Seq\": 0}}]}",
            r);
        char *f = g_strdup_printf("%s/r%d.json", dir, r);
        g_assert(g_file_set_contents(f, txt, -1, NULL));
        g_free(f);
        g_free(txt);
    }
    t = trace_kineto_load_noted(dir, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_NOT_EQUAL(OP(t, 0, 0)->group, OP(t, 0, 1)->group);
    CU_ASSERT(OP(t, 1, 0)->group == OP(t, 0, 0)->group && OP(t, 1, 1)->group == OP(t, 0, 1)->group);
    trace_free(t);
    tmp_dir_remove(dir);

    coll_kind k;
    CU_ASSERT(kineto_coll_from_name("gather", &k) == 0 && k == COLL_GATHER);
    CU_ASSERT(kineto_coll_from_name("nccl:scatter", &k) != 0); /* the caller strips "nccl:" */
    CU_ASSERT(kineto_coll_from_name("scatter", &k) == 0 && k == COLL_SCATTER);
}

/* json_arena: a document parsed inside an arena reads as it does outside
 * one and needs no cJSON_Delete (the sanitizers' leak check covers that);
 * a document made before the arena opened is freed normally while it is
 * open; arenas do not nest; threads each get their own. */
static gpointer arena_thread(gpointer data)
{
    int k = GPOINTER_TO_INT(data), sum = 0;
    for (int rep = 0; rep < 50; rep++) {
        json_arena *a = json_arena_open();
        CU_ASSERT_PTR_NOT_NULL(a);
        char *text = g_strdup_printf("{\"k\": %d, \"v\": [1, 2, 3], \"s\": \"thread %d\"}", k, k);
        cJSON *o = cJSON_Parse(text);
        g_free(text);
        sum += cJSON_GetObjectItemCaseSensitive(o, "k")->valueint +
               cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "v"));
        json_arena_close(a);
    }
    return GINT_TO_POINTER(sum);
}

static void test_json_arena(void)
{
    json_arena_init();
    cJSON *before = cJSON_Parse("{\"a\": [1, 2, {\"b\": \"c\"}]}");
    json_arena *a = json_arena_open();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NULL(json_arena_open()); /* no nesting */
    cJSON *in = cJSON_Parse("{\"x\": 1.5, \"name\": \"all_reduce\", \"ops\": [{\"rank\": 3}]}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItemCaseSensitive(in, "x")->valuedouble, 1.5, 0);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(in, "name")->valuestring, "all_reduce");
    CU_ASSERT_EQUAL(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(in, "ops"), 0),
                                                     "rank")->valueint, 3);
    cJSON_Delete(before); /* made with malloc before the arena: freed now, not kept */
    json_arena_close(a);  /* `in` goes with it */
    /* outside an arena cJSON allocates and frees as before */
    cJSON *after = cJSON_Parse("[true, false]");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(after), 2);
    cJSON_Delete(after);
    GThread *t[4];
    for (int i = 0; i < 4; i++)
        t[i] = g_thread_new("arena", arena_thread, GINT_TO_POINTER(i));
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(GPOINTER_TO_INT(g_thread_join(t[i])), 50 * (i + 3));
}

/* NCCL debug logs (tests/data/traces/nccl-log: 8 ranks, 2 hosts; its
 * header says what it holds): ranks from the world communicator, groups
 * from commIds, sizes from count x datatype, peers from the pair
 * communicators; the combined log and the per-process directory agree. */
static void test_nccllog_job(void)
{
    GError *err = NULL;
    char *note = NULL;
    nccllog_extras x;
    trace *t = trace_nccllog_load(DATA "nccl-log/job-8rank.log", &note, &x, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* the world communicator's ring line (its processes print channel 0 of 24) */
    CU_ASSERT_FATAL(x.rings && x.rings->len == 1);
    const nccltests_ring *ring = &g_array_index(x.rings, nccltests_ring, 0);
    CU_ASSERT(ring->channel == 0 && ring->nchannels == 24 && ring->n == 8 && ring->rank[7] == 7);
    CU_ASSERT(x.tuning == NULL && x.trees == NULL);
    nccllog_extras_clear(&x);
    CU_ASSERT_EQUAL_FATAL(t->nranks, 8);
    CU_ASSERT_PTR_NOT_NULL(note && strstr(note, "8 ranks, 7 communicators, 72 calls replayed (the log"));
    CU_ASSERT_EQUAL(t->groups->len, 7); /* world, 2 x tensor parallel of 4, 4 pipeline pairs */
    for (int r = 0; r < 8; r++) {
        CU_ASSERT_EQUAL(t->ranks[r].ops->len, 9);
        counts c = count_ops(t, r);
        CU_ASSERT_EQUAL(c.colls[COLL_ALL_REDUCE], 3);
        CU_ASSERT_EQUAL(c.colls[COLL_ALLTOALL], 1);
        CU_ASSERT_EQUAL(c.sends, 1);
        CU_ASSERT_EQUAL(c.recvs, 1);
    }
    const trace_op *tp = OP(t, 5, 0), *snd = OP(t, 2, 2), *rcv = OP(t, 2, 3), *ag = OP(t, 2, 4), *bc = OP(t, 2, 7);
    CU_ASSERT_EQUAL(tp->bytes, 4194304ull * 2); /* bf16 (datatype 9) */
    const trace_group *g = g_ptr_array_index(t->groups, tp->group);
    CU_ASSERT(g->size == 4 && g->ranks[0] == 4 && g->ranks[3] == 7);
    CU_ASSERT_EQUAL(snd->kind, TOP_SEND);
    CU_ASSERT_EQUAL(snd->peer, 6); /* rank 1 of the pair (2, 6) */
    CU_ASSERT_EQUAL(rcv->kind, TOP_RECV);
    CU_ASSERT_EQUAL(rcv->peer, 6);
    CU_ASSERT_NOT_EQUAL(snd->stream, rcv->stream); /* one group: they run together */
    CU_ASSERT_EQUAL(ag->bytes, 1048576ull * 4 * 8); /* all_gather: count per rank x 8 */
    CU_ASSERT_STRING_EQUAL(ag->name, "AllGather");
    CU_ASSERT_EQUAL(OP(t, 2, 5)->bytes, 1048576ull * 4 * 8);
    CU_ASSERT_EQUAL(bc->coll, COLL_BROADCAST);
    CU_ASSERT_EQUAL(bc->bytes, 4096);
    const trace_op *a2a = OP(t, 2, 6); /* NCCL 2.28's AlltoAll: count per peer x 8 ranks */
    CU_ASSERT(a2a->kind == TOP_COLL && a2a->coll == COLL_ALLTOALL && a2a->bytes == 65536ull * 4 * 8);
    CU_ASSERT_EQUAL(tp->seq, 0);
    CU_ASSERT_EQUAL(OP(t, 5, 1)->seq, 1);
    CU_ASSERT(tp->src_index > 10); /* the line it was read from */
    trace *d = trace_nccllog_load(DATA "nccl-log/per-rank", NULL, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(d->nranks, 8);
    for (int r = 0; r < 8; r++)
        for (guint i = 0; i < t->ranks[r].ops->len; i++) {
            const trace_op *a = OP(t, r, i), *b = OP(d, r, i);
            CU_ASSERT(a->kind == b->kind && a->bytes == b->bytes && a->peer == b->peer && a->seq == b->seq);
        }
    trace_free(d);
    g_free(note);
    trace_free(t);
}

/* Writes a 3-rank log: each rank's Init line, then its calls (lines of
 * "Op opCount count datatype root", {r} standing for the rank). */
static char *nccllog_3rank(const char *const calls[3])
{
    GString *g = g_string_new(NULL);
    for (int r = 0; r < 3; r++)
        g_string_append_printf(g, "h:%d:%d [%d] NCCL INFO comm 0xc%d rank %d nRanks 3 nNodes 1 localRanks 3\n", r + 1,
                               r + 1, r, r, r);
    for (int r = 0; r < 3; r++) {
        char **l = g_strsplit(calls[r], "\n", -1);
        for (char **k = l; *k; k++) {
            char op[32];
            unsigned oc, count, dt, root;
            if (sscanf(*k, "%31s %u %u %u %u", op, &oc, &count, &dt, &root) == 5)
                g_string_append_printf(g, "h:%d:%d [%d] NCCL INFO %s: opCount %x sendbuff 0x1 recvbuff 0x2 count %u "
                                          "datatype %u op 0 root %u comm 0xc%d [nranks=3] stream 0xs\n",
                                       r + 1, r + 1, r, op, oc, count, dt, root, r);
        }
        g_strfreev(l);
    }
    char *path = NULL;
    int fd = g_file_open_tmp("nccllog-XXXXXX.log", &path, NULL);
    close(fd);
    g_file_set_contents(path, g->str, -1, NULL);
    g_string_free(g, TRUE);
    return path;
}

/* A group of one send to and one receive from every rank (itself included)
 * of one size is an all-to-all when every member has it; NCCL 2.28's
 * AlltoAll line is one; Gather and Scatter are the sends and receives NCCL
 * turns them into. */
static void test_nccllog_alltoall_gather_scatter(void)
{
    /* opCount 1: an all-to-all of 4 floats per peer; 2: Gather of 8 bytes to
     * rank 1; 3: Scatter of 2 floats from rank 0; 4: sends of sizes that
     * differ (an all-to-all-v); 5: NCCL 2.28's AlltoAll */
    const char *a2a = "Send 1 4 7 0\nRecv 1 4 7 0\nSend 1 4 7 1\nRecv 1 4 7 1\nSend 1 4 7 2\nRecv 1 4 7 2\n";
    char *calls[3];
    for (int r = 0; r < 3; r++)
        calls[r] = g_strdup_printf("%sGather 2 8 0 1\nScatter 3 2 7 0\nSend 4 %d 0 %d\nRecv 4 %d 0 %d\n"
                                   "AlltoAll 5 16 0 0\n",
                                   a2a, r + 1, (r + 1) % 3, (r + 2) % 3 + 1, (r + 2) % 3);
    char *path = nccllog_3rank((const char *const *)calls);
    GError *err = NULL;
    char *note = NULL;
    trace *t = trace_nccllog_load(path, &note, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NOT_NULL(note && strstr(note, "; 1 groups of sends/receives to every rank replayed as all_to_all; "
                                                "6 sends/receives of a rank to itself (local copies) left out"));
    for (int r = 0; r < 3; r++) {
        const trace_op *o = OP(t, r, 0);
        CU_ASSERT(o->kind == TOP_COLL && o->coll == COLL_ALLTOALL && o->bytes == 3 * 16 && o->seq == 0);
        counts c = count_ops(t, r);
        CU_ASSERT_EQUAL(c.colls[COLL_ALLTOALL], 2);
        /* gather: 1 send off the root, 2 receives at it; scatter: the
         * mirror; the all-to-all-v: 1 and 1 */
        CU_ASSERT_EQUAL(c.sends, (r == 1 ? 0 : 1) + (r == 0 ? 2 : 0) + 1);
        CU_ASSERT_EQUAL(c.recvs, (r == 1 ? 2 : 0) + (r == 0 ? 0 : 1) + 1);
        const trace_op *last = OP(t, r, t->ranks[r].ops->len - 1);
        CU_ASSERT(last->coll == COLL_ALLTOALL && last->bytes == 16 * 3 && last->seq == 1);
    }
    const trace_op *g1 = OP(t, 1, 1), *g2 = OP(t, 1, 2);
    CU_ASSERT(g1->kind == TOP_RECV && g1->peer == 0 && g1->bytes == 8 && !strcmp(g1->name, "Gather"));
    CU_ASSERT(g2->kind == TOP_RECV && g2->peer == 2 && g2->stream != g1->stream);
    trace_free(t);
    g_free(note);
    g_unlink(path);
    g_free(path);
    /* rank 2 posts its all-to-all in two groups: the communicator's groups
     * do not line up, so every rank's stays sends and receives */
    g_free(calls[2]);
    calls[2] = g_strdup("Send 1 4 7 0\nRecv 1 4 7 0\nSend 1 4 7 1\nRecv 1 4 7 1\nSend 2 4 7 2\nRecv 2 4 7 2\n");
    for (int r = 0; r < 2; r++) {
        g_free(calls[r]);
        calls[r] = g_strdup(a2a);
    }
    path = nccllog_3rank((const char *const *)calls);
    t = trace_nccllog_load(path, NULL, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int r = 0; r < 3; r++) {
        counts c = count_ops(t, r);
        CU_ASSERT(c.colls[COLL_ALLTOALL] == 0 && c.sends == 2 && c.recvs == 2);
    }
    trace_free(t);
    g_unlink(path);
    g_free(path);
    /* a group on two communicators, the later one's peer beyond the
     * first's ranks (rank 0: pair 0xp0 of ranks 0 and 1, then the world):
     * not an all-to-all, and no write past the first's ranks (ASan) */
    const char *mixed =
        "h:1:1 [0] NCCL INFO comm 0xc0 rank 0 nRanks 3 nNodes 1 localRanks 3\n"
        "h:2:2 [1] NCCL INFO comm 0xc1 rank 1 nRanks 3 nNodes 1 localRanks 3\n"
        "h:3:3 [2] NCCL INFO comm 0xc2 rank 2 nRanks 3 nNodes 1 localRanks 3\n"
        "h:1:1 [0] NCCL INFO comm 0xp0 rank 0 nRanks 2 nNodes 1 localRanks 2\n"
        "h:2:2 [1] NCCL INFO comm 0xp1 rank 1 nRanks 2 nNodes 1 localRanks 2\n"
        "h:1:1 [0] NCCL INFO Send: opCount 1 sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 0 comm 0xp0 [nranks=2] stream 0xs\n"
        "h:1:1 [0] NCCL INFO Recv: opCount 1 sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 1 comm 0xp0 [nranks=2] stream 0xs\n"
        "h:1:1 [0] NCCL INFO Send: opCount 1 sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 2 comm 0xc0 [nranks=3] stream 0xs\n"
        "h:1:1 [0] NCCL INFO Recv: opCount 1 sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 2 comm 0xc0 [nranks=3] stream 0xs\n"
        "h:2:2 [1] NCCL INFO Send: opCount 1 sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 0 comm 0xp1 [nranks=2] stream 0xs\n"
        "h:3:3 [2] NCCL INFO Send: opCount 1 sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 0 comm 0xc2 [nranks=3] stream 0xs\n"
        "h:3:3 [2] NCCL INFO Recv: opCount 1 sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 0 comm 0xc2 [nranks=3] stream 0xs\n";
    int fd = g_file_open_tmp("nccllog-XXXXXX.log", &path, NULL);
    close(fd);
    g_file_set_contents(path, mixed, -1, NULL);
    t = trace_nccllog_load(path, NULL, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    counts mc = count_ops(t, 0);
    CU_ASSERT(mc.colls[COLL_ALLTOALL] == 0 && mc.sends == 1 && mc.recvs == 2);
    trace_free(t);
    g_unlink(path);
    g_free(path);
    /* a Gather's root outside the communicator */
    g_free(calls[0]);
    calls[0] = g_strdup("Gather 1 8 0 3\n");
    path = nccllog_3rank((const char *const *)calls);
    CU_ASSERT_PTR_NULL(trace_nccllog_load(path, NULL, NULL, &err));
    CU_ASSERT(err && strstr(err->message, ":4: Gather root/peer 3: comm 0xc0 has ranks 0..2"));
    g_clear_error(&err);
    g_unlink(path);
    g_free(path);
    for (int r = 0; r < 3; r++)
        g_free(calls[r]);
}

/* Calls of one group print one opCount (NCCL 2.13-2.26 advance it once per
 * kernel launch): a collective after one of its communicator with the same
 * opCount is fused (one kernel). Where a communicator's opCount never moves
 * (NCCL 2.27+ on one node advances it only for launches with network work)
 * it says nothing of groups: no collective is fused, and a group of sends
 * and receives ends where a call repeats a peer and direction of it. */
static void test_nccllog_groups_by_opcount(void)
{
    char *calls[3];
    for (int r = 0; r < 3; r++)
        calls[r] = g_strdup("AllReduce 1 1024 7 0\nAllReduce 2 1024 7 0\nAllReduce 2 256 7 0\nAllGather 2 64 7 0\n"
                            "AllReduce 3 1024 7 0\n");
    char *path = nccllog_3rank((const char *const *)calls);
    GError *err = NULL;
    char *note = NULL;
    trace *t = trace_nccllog_load(path, &note, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NOT_NULL(note && strstr(note, "; 6 collectives in a group with the one before (one opCount: one "
                                                "kernel, no host launch of their own), 3 of them of its function"));
    /* AllReduce; the two all_reduces of opCount 2 as one of 1280 floats;
     * the AllGather fused after them; AllReduce */
    const uint64_t bytes[4] = {4096, 5120, 768, 4096};
    for (int r = 0; r < 3; r++) {
        CU_ASSERT_EQUAL_FATAL(t->ranks[r].ops->len, 4);
        for (int i = 0; i < 4; i++) {
            CU_ASSERT_EQUAL(OP(t, r, i)->fused, i == 2);
            CU_ASSERT_EQUAL(OP(t, r, i)->bytes, bytes[i]);
        }
    }
    trace_free(t);
    g_free(note);
    g_unlink(path);
    g_free(path);
    /* rank 2 launched the two all_reduces apart: the members disagree, so
     * every rank's collectives replay as launched alone */
    g_free(calls[2]);
    calls[2] = g_strdup("AllReduce 1 1024 7 0\nAllReduce 2 1024 7 0\nAllReduce 3 256 7 0\nAllGather 4 64 7 0\n"
                        "AllReduce 5 1024 7 0\n");
    path = nccllog_3rank((const char *const *)calls);
    t = trace_nccllog_load(path, &note, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int r = 0; r < 3; r++) {
        CU_ASSERT_EQUAL_FATAL(t->ranks[r].ops->len, 5);
        for (int i = 0; i < 5; i++)
            CU_ASSERT_FALSE(OP(t, r, i)->fused);
    }
    trace_free(t);
    g_free(note);
    g_unlink(path);
    g_free(path);
    /* opCount 0 throughout: two all-to-alls (the rank itself included), two
     * ring exchanges, two all_reduces */
    for (int r = 0; r < 3; r++) {
        g_free(calls[r]);
        GString *g = g_string_new(NULL);
        for (int it = 0; it < 2; it++)
            for (int q = 0; q < 3; q++)
                g_string_append_printf(g, "Send 0 4 7 %d\nRecv 0 4 7 %d\n", q, q);
        for (int it = 0; it < 2; it++)
            g_string_append_printf(g, "Send 0 8 7 %d\nRecv 0 8 7 %d\n", (r + 1) % 3, (r + 2) % 3);
        g_string_append(g, "AllReduce 0 1024 7 0\nAllReduce 0 1024 7 0\n");
        calls[r] = g_string_free(g, FALSE);
    }
    path = nccllog_3rank((const char *const *)calls);
    t = trace_nccllog_load(path, &note, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NOT_NULL(note && strstr(note, "; 2 groups of sends/receives to every rank replayed as all_to_all"));
    CU_ASSERT_PTR_NOT_NULL(note && !strstr(note, "in a group with the one before"));
    for (int r = 0; r < 3; r++) {
        counts c = count_ops(t, r);
        CU_ASSERT(c.colls[COLL_ALLTOALL] == 2 && c.sends == 2 && c.recvs == 2 && c.colls[COLL_ALL_REDUCE] == 2);
        /* ops: a2a, a2a, send, recv, send, recv, all_reduce, all_reduce; the
         * second exchange waits for the first (two groups, not one) */
        const trace_op *s2 = OP(t, r, 4);
        CU_ASSERT_FATAL(s2->kind == TOP_SEND && s2->deps && s2->deps->len == 2);
        CU_ASSERT_EQUAL(g_array_index(s2->deps, uint32_t, 0), 2);
        CU_ASSERT_EQUAL(g_array_index(s2->deps, uint32_t, 1), 3);
        CU_ASSERT_FALSE(OP(t, r, 7)->fused);
    }
    trace_free(t);
    g_free(note);
    g_unlink(path);
    g_free(path);
    for (int r = 0; r < 3; r++)
        g_free(calls[r]);
}

/* ncclCommSplit's children print their parent and color and (NCCL 2.2x)
 * no commId: one split's children of one color are one communicator,
 * though several have the same size (here {0,2} and {1,3} of a world of 4;
 * by size and creation order alone, two processes would claim each rank). */
static void test_nccllog_split_comms(void)
{
    GString *g = g_string_new(NULL);
    for (int r = 0; r < 4; r++)
        g_string_append_printf(g, "h:%d:%d [%d] NCCL INFO ncclCommInitRankConfig comm 0xw%d rank %d nranks 4 cudaDev "
                                  "%d nvmlDev %d busId 1000 commId 0xabc - Init COMPLETE\n",
                               r + 1, r + 1, r, r, r, r, r);
    for (int r = 0; r < 4; r++)
        g_string_append_printf(g, "h:%d:%d [%d] NCCL INFO ncclCommSplit comm 0xs%d rank %d nranks 2 cudaDev %d nvmlDev "
                                  "%d busId 1000 parent 0xw%d splitCount 1 color %d key %d - Init COMPLETE\n",
                               r + 1, r + 1, r, r, r / 2, r, r, r, r % 2, r);
    for (int r = 0; r < 4; r++)
        g_string_append_printf(g, "h:%d:%d [%d] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count %d "
                                  "datatype 7 op 0 root 0 comm 0xs%d [nranks=2] stream 0xs\n",
                               r + 1, r + 1, r, 256 << (r % 2), r);
    char *path = NULL;
    int fd = g_file_open_tmp("nccllog-XXXXXX.log", &path, NULL);
    close(fd);
    g_file_set_contents(path, g->str, -1, NULL);
    GError *err = NULL;
    trace *t = trace_nccllog_load(path, NULL, NULL, &err);
    if (!t)
        fprintf(stderr, "%s\n", err->message);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->groups->len, 3);
    for (int r = 0; r < 4; r++) {
        const trace_op *o = OP(t, r, 0);
        const trace_group *tg = g_ptr_array_index(t->groups, o->group);
        CU_ASSERT(tg->size == 2 && tg->ranks[0] == r % 2 && tg->ranks[1] == r % 2 + 2);
        CU_ASSERT_EQUAL(o->bytes, (uint64_t)(256 << (r % 2)) * 4);
    }
    trace_free(t);
    g_string_free(g, TRUE);
    g_unlink(path);
    g_free(path);
}

/* Sends and receives one after another on a stream are one group: each on a
 * lane of its own after the stream's previous call, and the stream's next
 * call after all of them; with nranks only in the comm line (no commId) the
 * communicators pair up by size and order. */
static void test_nccllog_group_of_sends(void)
{
    const char *log =
        "h:1:1 [0] NCCL INFO comm 0xa rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n"
        "h:2:2 [1] NCCL INFO comm 0xb rank 1 nRanks 2 nNodes 1 localRanks 2 localRank 1 MNNVL 0\n"
        "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 8 datatype 7 op 0 root 0 comm 0xa [nranks=2] stream 0xs\n"
        "h:1:1 [0] NCCL INFO Send: opCount 1 sendbuff 0x1 recvbuff (nil) count 16 datatype 0 op 0 root 1 comm 0xa [nranks=2] stream 0xs\n"
        "h:1:1 [0] NCCL INFO Recv: opCount 1 sendbuff (nil) recvbuff 0x1 count 16 datatype 0 op 0 root 1 comm 0xa [nranks=2] stream 0xs\n"
        "h:1:1 [0] NCCL INFO AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x2 count 8 datatype 7 op 0 root 0 comm 0xa [nranks=2] stream 0xs\n"
        "h:2:2 [1] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 8 datatype 7 op 0 root 0 comm 0xb [nranks=2] stream 0xs\n"
        "h:2:2 [1] NCCL INFO Send: opCount 1 sendbuff 0x1 recvbuff (nil) count 16 datatype 0 op 0 root 0 comm 0xb [nranks=2] stream 0xs\n"
        "h:2:2 [1] NCCL INFO Recv: opCount 1 sendbuff (nil) recvbuff 0x1 count 16 datatype 0 op 0 root 0 comm 0xb [nranks=2] stream 0xs\n"
        "h:2:2 [1] NCCL INFO AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x2 count 8 datatype 7 op 0 root 0 comm 0xb [nranks=2] stream 0xs\n"
        "h:2:2 [1] NCCL INFO AllReduce: 32 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n"
        "h:1:1 [0] NCCL INFO AllReduce: 32 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n"
        "h:1:1 [0] NCCL INFO AllReduce: 64 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..0}\n";
    char *path = NULL;
    int fd = g_file_open_tmp("nccllog-XXXXXX.log", &path, NULL);
    close(fd);
    g_file_set_contents(path, log, -1, NULL);
    GError *err = NULL;
    nccllog_extras x;
    trace *t = trace_nccllog_load(path, NULL, &x, &err);
    GArray *tuning = x.tuning;
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->nranks, 2);
    /* the TUNING lines go with each rank's latest AllReduce of 32 bytes (the
     * second call): one shape, two calls; 64 bytes matches no call */
    CU_ASSERT_FATAL(tuning && tuning->len == 1);
    const nccllog_tuning *k = &g_array_index(tuning, nccllog_tuning, 0);
    CU_ASSERT(k->coll == COLL_ALL_REDUCE && k->bytes == 32 && k->calls == 2 && k->t.nchannels == 2);
    CU_ASSERT_STRING_EQUAL(k->t.algo, "RING");
    CU_ASSERT_STRING_EQUAL(k->t.proto, "LL");
    CU_ASSERT(x.rings == NULL && x.trees == NULL);
    nccllog_extras_clear(&x);
    const trace_op *ar = OP(t, 0, 0), *s = OP(t, 0, 1), *r = OP(t, 0, 2), *ar2 = OP(t, 0, 3);
    CU_ASSERT_NOT_EQUAL(s->stream, ar->stream);
    CU_ASSERT_NOT_EQUAL(s->stream, r->stream);
    CU_ASSERT_EQUAL(ar2->stream, ar->stream);
    CU_ASSERT(s->deps && s->deps->len == 1 && g_array_index(s->deps, uint32_t, 0) == 0);
    CU_ASSERT(r->deps && r->deps->len == 1 && g_array_index(r->deps, uint32_t, 0) == 0);
    CU_ASSERT(ar2->deps && ar2->deps->len == 2 && g_array_index(ar2->deps, uint32_t, 0) == 1 &&
              g_array_index(ar2->deps, uint32_t, 1) == 2);
    CU_ASSERT_EQUAL(s->bytes, 16);
    CU_ASSERT_EQUAL(ar2->seq, 1);
    trace_free(t);
    /* a rank missing: named with the communicator and where it was made */
    GString *g = g_string_new("h:1:1 [0] NCCL INFO comm 0xa rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n");
    char **l = g_strsplit(log, "\n", -1);
    for (char **k = l; *k; k++)
        if (g_str_has_prefix(*k, "h:1:1") && strstr(*k, "opCount"))
            g_string_append_printf(g, "%s\n", *k);
    g_strfreev(l);
    g_file_set_contents(path, g->str, -1, NULL);
    CU_ASSERT_PTR_NULL(trace_nccllog_load(path, NULL, NULL, &err));
    CU_ASSERT(err && strstr(err->message, ":1: comm 0xa (nranks=2#0): the log has 1 of its 2 ranks (none says rank 1)"));
    g_clear_error(&err);
    g_string_free(g, TRUE);
    g_unlink(path);
    g_free(path);
}

/* A coalesced block as PyTorch 2.7+ records it (each op an entry with the
 * block's collective_seq_id, then nccl:coalesced): one NCCL group, so the
 * ops of one kind are one collective of their summed size and the next
 * kind is fused after it. */
static void test_flightrec_coalesced_block(void)
{
    char *dir = g_dir_make_tmp("conveyor-fr-XXXXXX", NULL);
    for (int r = 0; r < 2; r++) {
        GString *g = g_string_new("{\"version\": \"2.7\", \"pg_config\": {\"0\": {\"name\": \"0\", \"desc\": \"default_pg\", "
                                  "\"ranks\": \"[0, 1]\"}}, \"pg_status\": {}, \"entries\": [");
        const char *ent[][2] = {{"nccl:all_reduce", "1"}, {"nccl:_broadcast_oop", "2"}, {"nccl:_broadcast_oop", "2"},
                                {"nccl:all_gather", "2"}, {"nccl:coalesced", "2"}, {"nccl:all_reduce", "3"}};
        for (size_t i = 0; i < G_N_ELEMENTS(ent); i++)
            g_string_append_printf(g, "%s{\"record_id\": %zu, \"process_group\": [\"0\", \"default_pg\"], "
                                      "\"collective_seq_id\": %s, \"p2p_seq_id\": 0, \"profiling_name\": \"%s\", "
                                      "\"input_sizes\": [[1024]], \"input_dtypes\": [\"Float\"], \"output_sizes\": "
                                      "[[%s]], \"output_dtypes\": [\"Float\"]}",
                                   i ? ", " : "", i, ent[i][1], ent[i][0], strstr(ent[i][0], "gather") ? "2048" : "1024");
        g_string_append(g, "]}");
        char *f = g_strdup_printf("%s/nccl_trace_rank_%d", dir, r);
        g_file_set_contents(f, g->str, -1, NULL);
        g_free(f);
        g_string_free(g, TRUE);
    }
    GError *err = NULL;
    char *note = NULL;
    trace *t = trace_flightrec_load(dir, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NOT_NULL(note && strstr(note, "; 4 in a coalesced block with the one before (one NCCL group: one "
                                                "kernel), 2 of them of its kind"));
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL_FATAL(t->ranks[r].ops->len, 4);
        const trace_op *b = OP(t, r, 1), *ag = OP(t, r, 2);
        CU_ASSERT(b->coll == COLL_BROADCAST && b->bytes == 2 * 4096 && !b->fused);
        CU_ASSERT(ag->coll == COLL_ALL_GATHER && ag->bytes == 8192 && ag->fused);
        CU_ASSERT(!OP(t, r, 0)->fused && !OP(t, r, 3)->fused);
    }
    trace_free(t);
    g_free(note);
    tmp_dir_remove(dir);
}

/* Gather and scatter entries: each rank's input is its piece (scatter's
 * too: PyTorch records the received tensor as its input), the root's output
 * the list; the collective is the whole list's bytes, and a dump records no
 * root, so it is 0 and the note counts them. */
static void test_flightrec_gather_scatter(void)
{
    char *dir = g_dir_make_tmp("conveyor-fr-XXXXXX", NULL);
    for (int r = 0; r < 2; r++) {
        const char *list = r == 0 ? "[[256], [256]]" : "[]", *types = r == 0 ? "[\"Float\", \"Float\"]" : "[]";
        char *txt = g_strdup_printf(
            "{\"version\": \"2.7\", \"pg_config\": {\"0\": {\"name\": \"0\", \"desc\": \"default_pg\", "
            "\"ranks\": \"[0, 1]\"}}, \"entries\": [{\"record_id\": 0, \"process_group\": [\"0\", \"default_pg\"], "
            "\"collective_seq_id\": 1, \"profiling_name\": \"nccl:gather\", \"input_sizes\": [[256]], "
            "\"input_dtypes\": [\"Float\"], \"output_sizes\": %s, \"output_dtypes\": %s}, {\"record_id\": 1, "
            "\"process_group\": [\"0\", \"default_pg\"], \"collective_seq_id\": 2, \"profiling_name\": "
            "\"nccl:scatter\", \"input_sizes\": [[256]], \"input_dtypes\": [\"Float\"], \"output_sizes\": %s, "
            "\"output_dtypes\": %s}]}",
            list, types, list, types);
        char *f = g_strdup_printf("%s/nccl_trace_rank_%d", dir, r);
        g_assert(g_file_set_contents(f, txt, -1, NULL));
        g_free(f);
        g_free(txt);
    }
    GError *err = NULL;
    char *note = NULL;
    trace *t = trace_flightrec_load(dir, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int r = 0; r < 2; r++) {
        CU_ASSERT_EQUAL_FATAL(t->ranks[r].ops->len, 2);
        const trace_op *ga = OP(t, r, 0), *sc = OP(t, r, 1);
        CU_ASSERT(ga->kind == TOP_COLL && ga->coll == COLL_GATHER && ga->bytes == 2048 && ga->root == 0);
        CU_ASSERT(sc->kind == TOP_COLL && sc->coll == COLL_SCATTER && sc->bytes == 2048 && sc->root == 0);
    }
    CU_ASSERT_PTR_NOT_NULL(note && strstr(note, "; 4 broadcast/reduce/gather/scatter with root 0 (a dump records no root)"));
    trace_free(t);
    g_free(note);
    tmp_dir_remove(dir);
}

/* PyTorch Flight Recorder dumps (tests/data/traces/flightrec, counts in
 * PROVENANCE.md): the ranks' windows lined up per group sequence number and
 * per sender/receiver pair, sizes from the tensors, durations kept. */
/* A group over A2A_MAX_MATRIX ranks keeps no matrix (1,100 ranks: 19 MB of shares): its uneven
 * alltoall (rank 0 sends, rank 1 receives twice the others' 1 MiB) replays as the even split of the
 * mean, counted; its totals are still checked; the even one stays as it is. */
static void test_a2a_settle_wide(void)
{
    enum { n = 1100 };
    const double X = 1 << 20;
    for (int pass = 0; pass < 3; pass++) {
        trace *t = trace_new(n, "wide");
        int world = trace_group_world(t);
        GHashTable **rows = g_new0(GHashTable *, n);
        for (int r = 0; r < n; r++) {
            trace_op op = {.kind = TOP_COLL, .coll = COLL_ALLTOALL, .group = world, .seq = -1, .name = "a2a",
                           .bytes = (uint64_t)X};
            uint32_t at = trace_op_add(t, r, &op);
            rows[r] = a2a_rows_new();
            a2a_row *row = g_new0(a2a_row, 1);
            *row = (a2a_row){.in_b = pass && r == 0 ? 2 * X : X, .out_b = pass == 1 && r == 1 ? 2 * X : X, .n = n,
                             .known = A2A_TOTALS, .path = "wide", .what = "$.entries", .ev = r};
            g_hash_table_insert(rows[r], GUINT_TO_POINTER(at), row);
        }
        a2a_notes nt = {0};
        GError *err = NULL;
        gboolean ok = a2a_settle(t, rows, &nt, &err);
        if (pass == 2) { /* rank 0 sends 2 MiB, nobody receives more: the totals disagree */
            CU_ASSERT(!ok && err && strstr(err->message, "its members send 1154482176 bytes in all and receive "
                                                         "1153433600"));
            g_clear_error(&err);
        } else {
            CU_ASSERT_TRUE(ok);
            CU_ASSERT_EQUAL(nt.wide, pass);
            CU_ASSERT_EQUAL(t->a2a_weights->len, 0);
            for (int r = 0; r < n; r += 99)
                CU_ASSERT(OP(t, r, 0)->root == 0 &&
                          OP(t, r, 0)->bytes == (uint64_t)llround(pass ? (n + 1) * X / n : X));
        }
        for (int r = 0; r < n; r++)
            g_hash_table_destroy(rows[r]);
        g_free(rows);
        trace_free(t);
    }
}

/* n ranks' Flight Recorder dumps, each with one nccl:all_to_all whose input and output are
 * sent[r] and recv[r] rows of 256 floats (1 KiB). Returns the directory. */
static char *fr_a2a_dir(int n, const int *sent, const int *recv)
{
    char *dir = g_dir_make_tmp("conveyor-fr-XXXXXX", NULL);
    g_assert(dir);
    GString *ranks = g_string_new("[");
    for (int i = 0; i < n; i++)
        g_string_append_printf(ranks, "%s%d", i ? ", " : "", i);
    g_string_append(ranks, "]");
    for (int r = 0; r < n; r++) {
        char *txt = g_strdup_printf(
            "{\"entries\": [{\"collective_seq_id\": 0, \"input_dtypes\": [\"Float\"], \"input_sizes\": [[%d, 256]], "
            "\"output_dtypes\": [\"Float\"], \"output_sizes\": [[%d, 256]], \"p2p_seq_id\": 0, \"pg_id\": 0, "
            "\"process_group\": [\"0\", \"default_pg\"], \"profiling_name\": \"nccl:all_to_all\", \"state\": "
            "\"completed\"}], \"pg_config\": {\"0\": {\"desc\": \"default_pg\", \"name\": \"0\", \"ranks\": \"%s\"}}}",
            sent[r], recv[r], ranks->str);
        char *f = g_strdup_printf("%s/nccl_trace_rank_%d", dir, r);
        g_assert(g_file_set_contents(f, txt, -1, NULL));
        g_free(f);
        g_free(txt);
    }
    g_string_free(ranks, TRUE);
    return dir;
}

/* A dump records an all_to_all_single's tensors, not its split sizes: members that send or receive
 * unequal sizes (refused before 2026-12-03: "ranks disagree") replay as one uneven alltoall from
 * their totals, member i sending member j s_i x r_j / sum r, with a note; totals sent and received
 * that differ are an error naming the entry. */
static void test_flightrec_alltoall_totals(void)
{
    GError *err = NULL;
    char *note = NULL;
    const int sent[3] = {6, 2, 4}, recv[3] = {4, 4, 4}, more[3] = {4, 4, 5};
    char *dir = fr_a2a_dir(3, sent, recv);
    trace *t = trace_flightrec_load(dir, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(note && strstr(note, "; 1 uneven alltoall (members sending or receiving unequal sizes) replayed from "
                                   "each member's totals"));
    g_clear_pointer(&note, g_free);
    int nw;
    const double *w = trace_a2a_weights(t, OP(t, 1, 0)->root, &nw);
    CU_ASSERT_EQUAL_FATAL(nw, 9);
    for (int r = 0; r < 3; r++)
        CU_ASSERT_EQUAL(OP(t, r, 0)->bytes, 4 * 1024); /* the mean of 6, 2 and 4 rows */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) /* s_i x 4 / 12 rows each */
            CU_ASSERT_DOUBLE_EQUAL(w[i * 3 + j] * 4 * 1024 / 3, sent[i] / 3.0 * 1024, 1e-6);
    CU_ASSERT_TRUE(trace_validate(t, &err));
    trace_free(t);
    tmp_dir_remove(dir);

    dir = fr_a2a_dir(3, sent, more);
    CU_ASSERT_PTR_NULL(trace_flightrec_load(dir, &note, &err));
    CU_ASSERT(err && err->code == TRACE_ERROR_MISMATCH && strstr(err->message, "nccl_trace_rank_0: $.entries[0] "
                                                                               "(alltoall #0 of the group of ranks "
                                                                               "0..2): its members send 12288 bytes "
                                                                               "in all and receive 13312"));
    g_clear_error(&err);
    char *one = g_strdup_printf("%s/nccl_trace_rank_0", dir);
    t = trace_flightrec_load(one, &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(note && strstr(note, "1 alltoall sending and receiving unequal sizes in a trace without all of its "
                                   "group's ranks replayed as even splits"));
    g_clear_pointer(&note, g_free);
    trace_free(t);
    g_free(one);
    tmp_dir_remove(dir);
}

static void test_flightrec_directory(void)
{
    GError *err = NULL;
    char *note = NULL;
    trace *t = trace_flightrec_load(DATA "flightrec", &note, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL_FATAL(t->nranks, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(note, "4 files, 32 entries: 22 collectives and 4 sends/receives replayed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(note, "2 not in every member's window; 4 of kinds not replayed (e.g. nccl:coalesced)"));
    const int nops[4] = {8, 6, 7, 5}; /* rank 2 lost tp seq 1 to rank 3's window; rank 0 its oldest send */
    for (int r = 0; r < 4; r++)
        CU_ASSERT_EQUAL(t->ranks[r].ops->len, (guint)nops[r]);
    counts c0 = count_ops(t, 0), c2 = count_ops(t, 2);
    CU_ASSERT_EQUAL(c0.colls[COLL_ALL_REDUCE], 5);
    CU_ASSERT_EQUAL(c0.colls[COLL_ALL_GATHER], 1);
    CU_ASSERT_EQUAL(c0.sends, 2);
    CU_ASSERT_EQUAL(c2.recvs, 2);
    CU_ASSERT_EQUAL(c2.colls[COLL_ALL_REDUCE], 4);
    const trace_op *ar = OP(t, 0, 0), *dp = OP(t, 0, 4), *ag = OP(t, 0, 5), *snd = OP(t, 0, 6);
    CU_ASSERT_EQUAL(ar->bytes, 4096ull * 4096 * 2);
    CU_ASSERT_EQUAL(ar->dur_ps, 250000000); /* 0.25 ms */
    CU_ASSERT_STRING_EQUAL(ar->name, "nccl:all_reduce");
    CU_ASSERT_EQUAL(dp->bytes, 1024ull * 1024 * 8 * 4);
    CU_ASSERT_EQUAL(ag->bytes, 2048); /* all_gather: the total output */
    CU_ASSERT_EQUAL(snd->kind, TOP_SEND);
    CU_ASSERT_EQUAL(snd->peer, 2); /* group rank 1 of dp group [0, 2] */
    CU_ASSERT_EQUAL(snd->bytes, 2048ull * 1024 * 2);
    CU_ASSERT_EQUAL(snd->src_index, 8); /* entry 7, the oldest send, left out */
    const trace_group *g = g_ptr_array_index(t->groups, ar->group);
    CU_ASSERT_EQUAL(g->size, 2);
    CU_ASSERT(g->ranks[0] == 0 && g->ranks[1] == 1);
    CU_ASSERT_NOT_EQUAL(ar->stream, dp->stream); /* a stream per process group */
    /* rank 2's first kept tp all_reduce is seq 2 of its group, as rank 3's first */
    CU_ASSERT_EQUAL(OP(t, 2, 0)->seq, OP(t, 3, 0)->seq);
    CU_ASSERT_EQUAL(OP(t, 2, 0)->src_index, 1);
    CU_ASSERT_EQUAL(OP(t, 3, 0)->src_index, 0);
    g_free(note);
    trace_free(t);
    /* one file: one rank whose groups keep the job's global ranks (replicated with --ranks) */
    t = trace_flightrec_load(DATA "flightrec/nccl_trace_rank_1", NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->nranks, 1);
    CU_ASSERT_EQUAL(t->ranks[0].ops->len, 6);
    CU_ASSERT_FALSE(trace_check_whole(t, NULL));
    trace_free(t);
    /* a directory whose dump names carry no rank, or one rank twice */
    char *dir = g_dir_make_tmp("conveyor-fr-XXXXXX", NULL);
    gchar *body = NULL;
    CU_ASSERT_TRUE_FATAL(g_file_get_contents(DATA "flightrec/nccl_trace_rank_1", &body, NULL, NULL));
    char *a = g_build_filename(dir, "dump_a", NULL), *b = g_build_filename(dir, "x_1", NULL),
         *d = g_build_filename(dir, "y_1", NULL);
    g_file_set_contents(a, body, -1, NULL);
    CU_ASSERT_PTR_NULL(trace_flightrec_load(dir, NULL, &err));
    CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "dump_a: cannot tell its rank"));
    g_clear_error(&err);
    remove(a);
    g_file_set_contents(b, body, -1, NULL);
    g_file_set_contents(d, body, -1, NULL);
    CU_ASSERT_PTR_NULL(trace_flightrec_load(dir, NULL, &err));
    CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "y_1: rank 1 again"));
    g_clear_error(&err);
    remove(b);
    remove(d);
    g_rmdir(dir);
    g_free(a);
    g_free(b);
    g_free(d);
    g_free(dir);
    g_free(body);
}

int main(void)
{
    static const test_case cases[] = {
        {"test_kineto_hta_resnet50_collectives", test_kineto_hta_resnet50_collectives},
        {"test_kineto_b200_allgather", test_kineto_b200_allgather},
        {"test_kineto_old_style_annotation_and_host_gap", test_kineto_old_style_annotation_and_host_gap},
        {"test_chakra_et_resnet50", test_chakra_et_resnet50},
        {"test_chakra_json_deps_through_metadata", test_chakra_json_deps_through_metadata},
        {"test_pbwire_varint_and_packed", test_pbwire_varint_and_packed},
        {"test_bad_inputs_report_code_and_position", test_bad_inputs_report_code_and_position},
        {"test_kineto_names_and_dtypes", test_kineto_names_and_dtypes},
        {"test_json_arena", test_json_arena},
        {"test_kineto_directory_validated", test_kineto_directory_validated},
        {"test_kineto_gather_scatter_roots", test_kineto_gather_scatter_roots},
        {"test_kineto_alltoall_splits", test_kineto_alltoall_splits},
        {"test_chakra_gather_scatter", test_chakra_gather_scatter},
        {"test_flightrec_gather_scatter", test_flightrec_gather_scatter},
        {"test_flightrec_directory", test_flightrec_directory},
        {"test_flightrec_alltoall_totals", test_flightrec_alltoall_totals},
        {"test_a2a_settle_wide", test_a2a_settle_wide},
        {"test_flightrec_coalesced_block", test_flightrec_coalesced_block},
        {"test_nccllog_job", test_nccllog_job},
        {"test_nccllog_group_of_sends", test_nccllog_group_of_sends},
        {"test_nccllog_alltoall_gather_scatter", test_nccllog_alltoall_gather_scatter},
        {"test_nccllog_groups_by_opcount", test_nccllog_groups_by_opcount},
        {"test_nccllog_split_comms", test_nccllog_split_comms},
        {NULL, NULL},
    };
    return test_main("importers", cases);
}

/* traces/nccltests.c - nccl-tests conventions (names, sizes, bandwidth
 * factors) and the writers (text as nccl-tests 2.19.x prints it, CSV, JSON).
 * The reader is in nccltests_read.c.
 *
 * Sources: tests:src/common.cu (type/op names, Avg bus bandwidth),
 * tests:src/util.cu (getFloatStr, header and row formats),
 * tests:src/<coll>.cu (*GetCollByteCount, *GetBw), tests:doc/PERFORMANCE.md.
 */
#include "traces/nccltests.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <string.h>

static bool coll_split_per_rank(coll_kind kind)
{
    return kind == COLL_ALL_GATHER || kind == COLL_REDUCE_SCATTER || kind == COLL_ALLTOALL || kind == COLL_GATHER ||
           kind == COLL_SCATTER;
}

static const struct {
    const char *name;
    size_t bytes;
} dtypes[NCCLTESTS_DTYPES] = {
    [NCCLTESTS_FLOAT] = {"float", 4},     [NCCLTESTS_HALF] = {"half", 2},
    [NCCLTESTS_BFLOAT16] = {"bfloat16", 2}, [NCCLTESTS_DOUBLE] = {"double", 8},
    [NCCLTESTS_INT32] = {"int32", 4},     [NCCLTESTS_INT8] = {"int8", 1},
    [NCCLTESTS_UINT8] = {"uint8", 1},     [NCCLTESTS_INT64] = {"int64", 8},
    [NCCLTESTS_UINT32] = {"uint32", 4},   [NCCLTESTS_UINT64] = {"uint64", 8},
    [NCCLTESTS_FP8_E4M3] = {"f8e4m3", 1}, [NCCLTESTS_FP8_E5M2] = {"f8e5m2", 1},
};

static const struct {
    const char *alias;
    nccltests_dtype dt;
} dtype_aliases[] = {
    {"fp8_e4m3", NCCLTESTS_FP8_E4M3}, {"fp8_e5m2", NCCLTESTS_FP8_E5M2},
    {"float32", NCCLTESTS_FLOAT},     {"fp32", NCCLTESTS_FLOAT},
    {"fp16", NCCLTESTS_HALF},         {"float16", NCCLTESTS_HALF},
    {"bf16", NCCLTESTS_BFLOAT16},     {"float64", NCCLTESTS_DOUBLE},
    {"int", NCCLTESTS_INT32},         {"char", NCCLTESTS_INT8},
};

const char *nccltests_dtype_name(nccltests_dtype dt)
{
    assert(dt >= 0 && dt < NCCLTESTS_DTYPES);
    return dtypes[dt].name;
}

size_t nccltests_dtype_bytes(nccltests_dtype dt)
{
    assert(dt >= 0 && dt < NCCLTESTS_DTYPES);
    return dtypes[dt].bytes;
}

int nccltests_dtype_from_name(const char *name, nccltests_dtype *out)
{
    for (int i = 0; i < NCCLTESTS_DTYPES; i++)
        if (g_ascii_strcasecmp(name, dtypes[i].name) == 0) {
            *out = (nccltests_dtype)i;
            return 0;
        }
    for (size_t i = 0; i < G_N_ELEMENTS(dtype_aliases); i++)
        if (g_ascii_strcasecmp(name, dtype_aliases[i].alias) == 0) {
            *out = dtype_aliases[i].dt;
            return 0;
        }
    return -1;
}

static const char *const redop_names[NCCLTESTS_REDOPS] = {
    "none", "sum", "prod", "max", "min", "avg",
};

const char *nccltests_redop_name(nccltests_redop op)
{
    assert(op >= 0 && op < NCCLTESTS_REDOPS);
    return redop_names[op];
}

int nccltests_redop_from_name(const char *name, nccltests_redop *out)
{
    if (name[0] == '\0') {
        *out = NCCLTESTS_OP_NONE;
        return 0;
    }
    for (int i = 0; i < NCCLTESTS_REDOPS; i++)
        if (g_ascii_strcasecmp(name, redop_names[i]) == 0) {
            *out = (nccltests_redop)i;
            return 0;
        }
    return -1;
}

uint64_t nccltests_count_for_size(coll_kind kind, uint64_t size_bytes, int nranks,
                                  size_t elt_bytes)
{
    assert(nranks >= 1 && elt_bytes >= 1);
    uint64_t elems = size_bytes / elt_bytes;
    return coll_split_per_rank(kind) ? elems / (uint64_t)nranks : elems;
}

uint64_t nccltests_size_for_request(coll_kind kind, uint64_t req_bytes, int nranks,
                                    size_t elt_bytes)
{
    assert(nranks >= 1 && elt_bytes >= 1);
    uint64_t count = req_bytes / elt_bytes;
    if (coll_split_per_rank(kind)) {
        /* base = (count/nranks) & -(16/eltSize): 16-byte aligned per rank */
        uint64_t align = elt_bytes >= 16 ? 1 : 16 / elt_bytes;
        uint64_t base = count / (uint64_t)nranks / align * align;
        count = base * (uint64_t)nranks;
    }
    return count * elt_bytes;
}

bool nccltests_nvls_reduces(nccltests_redop op, nccltests_dtype dt)
{
    if (op == NCCLTESTS_OP_NONE)
        return true;
    switch (dt) {
    case NCCLTESTS_INT32:
    case NCCLTESTS_UINT32:
    case NCCLTESTS_INT64:
    case NCCLTESTS_UINT64:
    case NCCLTESTS_HALF:
    case NCCLTESTS_BFLOAT16:
        return op == NCCLTESTS_OP_SUM || op == NCCLTESTS_OP_MIN || op == NCCLTESTS_OP_MAX;
    case NCCLTESTS_FLOAT:
    case NCCLTESTS_DOUBLE:
        return op == NCCLTESTS_OP_SUM;
    default:
        return false;
    }
}

void nccltests_rank_bytes(coll_kind kind, uint64_t size_bytes, int nranks,
                          uint64_t *send_bytes, uint64_t *recv_bytes)
{
    assert(nranks >= 1);
    *send_bytes = size_bytes;
    *recv_bytes = size_bytes;
    if (kind == COLL_ALL_GATHER)
        *send_bytes = size_bytes / (uint64_t)nranks;
    else if (kind == COLL_REDUCE_SCATTER)
        *recv_bytes = size_bytes / (uint64_t)nranks;
}

void nccltests_row_compute_bw(nccltests_row *row, coll_kind kind, int nranks)
{
    double factor = coll_busbw_factor(kind, nranks);
    for (int p = 0; p < 2; p++) {
        double t = row->time_us[p];
        double alg = t > 0 ? (double)row->size_bytes / (t * 1e-6) / 1e9 : 0.0;
        row->algbw_GBps[p] = alg;
        row->busbw_GBps[p] = alg * factor;
    }
}

/* ---- text writer -------------------------------------------------------- */

/* nccl-tests' getFloatStr (tests:src/util.cu): %.2f, else %.1f, else %.0f,
 * else exponent form, chosen by the number of integer digits so the value
 * fits `width`. */
static void float_str(char *buf, size_t n, double v, int width)
{
    int power = 0;
    double val = 1;
    while (v >= val && power < 40) {
        power++;
        val *= 10;
    }
    if (power < width - 2)
        snprintf(buf, n, "%*.2f", width, v);
    else if (power < width - 1)
        snprintf(buf, n, "%*.1f", width, v);
    else if (power < width + 1)
        snprintf(buf, n, "%*.0f", width, v);
    else if (width >= 7)
        snprintf(buf, n, "%*.1e", width, v);
    else
        snprintf(buf, n, "%*.0e", width, v);
}

static const char *perf_name(coll_kind kind, char *buf, size_t n)
{
    snprintf(buf, n, "%s_perf", coll_kind_name(kind));
    return buf;
}

static void write_preamble(FILE *f, const nccltests_sweep *s)
{
    char prog[64];
    fprintf(f, "# nccl-tests version %s nccl-headers=%d nccl-library=%d\n",
            s->version ? s->version : "2.19.6", s->nccl_code, s->nccl_code);
    fprintf(f, "# Collective test starting: %s\n", perf_name(s->coll, prog, sizeof prog));
    char step[48];
    if (s->step_factor > 1)
        g_snprintf(step, sizeof step, "%d(factor)", s->step_factor);
    else
        g_snprintf(step, sizeof step, "%" G_GUINT64_FORMAT "(bytes)", s->step_bytes);
    fprintf(f, "# nThread %d nGpus %d minBytes %" G_GUINT64_FORMAT " maxBytes %" G_GUINT64_FORMAT
            " step: %s warmup iters: %d iters: %d agg iters: %d validation: %d"
            " graph: %d unalign: 0\n",
            s->nthreads, s->ngpus, s->min_bytes, s->max_bytes, step,
            s->warmup_iters, s->iters, s->agg_iters, s->validation, s->graph);
    if (s->blocking) /* util.cu writeDeviceReport, -z 1 (trailing blank as there) */
        fprintf(f, "# Blocking Enabled: wait for completion and barrier after each collective \n");
    fprintf(f, "#\n# Using devices\n");
    for (size_t i = 0; i < s->ndevices; i++) {
        const nccltests_device *d = &s->devices[i];
        fprintf(f, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n",
                d->rank, d->group, d->pid, d->host ? d->host : "localhost", d->device,
                d->pci_domain, d->pci_bus, d->pci_device, d->name ? d->name : "");
    }
    fprintf(f, "#\n");
}

static void write_table_header(FILE *f)
{
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
               "          \n", "", "", "", "", "");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s\n",
            "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
            "time", "algbw", "busbw", "#wrong", "");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s\n",
            "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
            "(GB/s)", "", "");
}

static nccltests_dtype row_dt(const nccltests_sweep *s, size_t i) { return s->row_id ? s->row_id[i].dtype : s->dtype; }
static nccltests_redop row_op(const nccltests_sweep *s, size_t i) { return s->row_id ? s->row_id[i].redop : s->redop; }
static int row_root(const nccltests_sweep *s, size_t i) { return s->row_id ? s->row_id[i].root : s->root; }

void nccltests_write(FILE *f, const nccltests_sweep *s)
{
    char prog[64], root[16], tstr[32], astr[32], bstr[32];
    double bw_sum = 0;
    size_t bw_n = 0;
    write_preamble(f, s);
    if (s->setup_log)
        fputs(s->setup_log, f);
    write_table_header(f);
    for (size_t i = 0; i < s->nrows; i++) {
        snprintf(root, sizeof root, "%6i", row_root(s, i));
        if (s->row_log && s->row_log[i])
            fputs(s->row_log[i], f);
        nccltests_row r = s->rows[i];
        nccltests_row_compute_bw(&r, s->coll, s->nranks);
        fprintf(f, "%12" G_GUINT64_FORMAT "  %12" G_GUINT64_FORMAT "  %8s  %6s  %6s", r.size_bytes,
                r.count, nccltests_dtype_name(row_dt(s, i)), nccltests_redop_name(row_op(s, i)), root);
        for (int p = 0; p < 2; p++) {
            float_str(tstr, sizeof tstr, r.time_us[p], 7);
            float_str(astr, sizeof astr, r.algbw_GBps[p], 6);
            float_str(bstr, sizeof bstr, r.busbw_GBps[p], 6);
            /* util.cu writeBenchmarkLineBody: -c 0 reports no errors, "    N/A" (7 wide); nor does the in-place
             * run of alltoall and sendrecv at any -c (alltoall.cu, sendrecv.cu InitData: "We don't support
             * in-place": reportErrors = in_place ? 0 : 1; file 29) */
            bool report = s->validation && !(p == NCCLTESTS_IP && (s->coll == COLL_ALLTOALL || s->coll == COLL_SENDRECV));
            if (report)
                fprintf(f, "  %7s  %6s  %6s  %6g", tstr, astr, bstr, 0.0);
            else
                fprintf(f, "  %7s  %6s  %6s    N/A", tstr, astr, bstr);
            bw_sum += r.busbw_GBps[p];
            bw_n++;
        }
        fprintf(f, "\n");
    }
    fprintf(f, "# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
    fprintf(f, "# %-20s : %g %s\n", "Avg bus bandwidth", bw_n ? bw_sum / (double)bw_n : 0.0, "");
    fprintf(f, "#\n# Collective test concluded: %s\n", perf_name(s->coll, prog, sizeof prog));
}

/* ---- CSV and JSON ------------------------------------------------------- */

void nccltests_write_csv(FILE *f, const nccltests_sweep *s)
{
    fprintf(f, "size,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps,"
               "ip_time_us,ip_algbw_GBps,ip_busbw_GBps%s\n", s->band_lo ? ",busbw_lo_GBps,busbw_hi_GBps" : "");
    for (size_t i = 0; i < s->nrows; i++) {
        nccltests_row r = s->rows[i];
        nccltests_row_compute_bw(&r, s->coll, s->nranks);
        fprintf(f, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%s,%s,%d", r.size_bytes, r.count,
                nccltests_dtype_name(row_dt(s, i)), nccltests_redop_name(row_op(s, i)), row_root(s, i));
        for (int p = 0; p < 2; p++)
            fprintf(f, ",%.6g,%.6g,%.6g", r.time_us[p], r.algbw_GBps[p], r.busbw_GBps[p]);
        if (s->band_lo && s->band_lo[i] > 0)
            fprintf(f, ",%.6g,%.6g", r.busbw_GBps[NCCLTESTS_OOP] * s->band_lo[i],
                    r.busbw_GBps[NCCLTESTS_OOP] * s->band_hi[i]);
        else if (s->band_lo)
            fprintf(f, ",,");
        fprintf(f, "\n");
    }
}

static cJSON *json_placement(const nccltests_row *r, int p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "time", r->time_us[p]);
    cJSON_AddNumberToObject(o, "alg_bw", r->algbw_GBps[p]);
    cJSON_AddNumberToObject(o, "bus_bw", r->busbw_GBps[p]);
    return o;
}

void nccltests_write_json(FILE *f, const nccltests_sweep *s)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "collective", coll_kind_name(s->coll));
    cJSON_AddNumberToObject(doc, "nranks", s->nranks);
    bool dts = false, ops = false; /* several sweeps (-d all, -o all): the rows' types or operations differ */
    for (size_t i = 1; i < s->nrows; i++) {
        dts |= row_dt(s, i) != row_dt(s, 0);
        ops |= row_op(s, i) != row_op(s, 0);
    }
    cJSON_AddStringToObject(doc, "type", dts ? "all" : nccltests_dtype_name(s->dtype));
    cJSON_AddStringToObject(doc, "redop", ops ? "all" : nccltests_redop_name(s->redop));
    cJSON_AddNumberToObject(doc, "root", s->root);
    if (s->band_note)
        cJSON_AddStringToObject(doc, "bus_bw_80_note", s->band_note);
    cJSON *results = cJSON_AddArrayToObject(doc, "results");
    for (size_t i = 0; i < s->nrows; i++) {
        nccltests_row r = s->rows[i];
        nccltests_row_compute_bw(&r, s->coll, s->nranks);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "size", (double)r.size_bytes);
        cJSON_AddNumberToObject(o, "count", (double)r.count);
        cJSON_AddStringToObject(o, "type", nccltests_dtype_name(row_dt(s, i)));
        cJSON_AddStringToObject(o, "redop", nccltests_redop_name(row_op(s, i)));
        cJSON_AddNumberToObject(o, "root", row_root(s, i));
        cJSON *oop = json_placement(&r, NCCLTESTS_OOP);
        if (s->band_lo && s->band_lo[i] > 0) {
            double b[2] = {r.busbw_GBps[NCCLTESTS_OOP] * s->band_lo[i], r.busbw_GBps[NCCLTESTS_OOP] * s->band_hi[i]};
            cJSON_AddItemToObject(oop, "bus_bw_80", cJSON_CreateDoubleArray(b, 2));
        }
        cJSON_AddItemToObject(o, "out_of_place", oop);
        cJSON_AddItemToObject(o, "in_place", json_placement(&r, NCCLTESTS_IP));
        cJSON_AddItemToArray(results, o);
    }
    char *text = cJSON_Print(doc);
    if (text) {
        fputs(text, f);
        fputc('\n', f);
    }
    cJSON_free(text);
    cJSON_Delete(doc);
}

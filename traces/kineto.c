/* traces/kineto.c - PyTorch profiler (Kineto) Chrome trace importer.
 *
 * One pass collects the GPU activities (kernel, gpu_memcpy, gpu_memset),
 * the CUDA runtime/driver calls by correlation id (the launches), the
 * record_param_comms and nccl:<op> CPU ops by External id, and the
 * ProfilerStep durations. The GPU activities are then emitted in start order
 * (see emit_rank for host gaps and cross-stream dependencies). Sources:
 * ../shared/reference/formats.md section 1; docs/traces-importers.md.
 */
#include "traces/kineto.h"
#include "traces/a2a_split.h"
#include "traces/json_arena.h"
#include "sim/hash.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "traces/tracefile.h"

/* A kernel that starts more than this after both its launch call and the end
 * of the previous kernel on its stream waited for another stream. */
#define WAIT_SLACK_PS ((int64_t)10 * 1000 * 1000)

typedef struct {
    const cJSON *ev;
    int idx;       /* event index in traceEvents */
    double ts_us;  /* raw */
    double dur_us;
    int64_t stream_raw;
} gpu_ev;

typedef struct {
    int64_t end[2]; /* [0] last, [1] the one before (ps); -1 none */
    int op[2];
} recent;

/* What the note on stderr says, over all files. */
struct knotes {
    int opaque;              /* NCCL kernels whose collective the trace does not give */
    char opaque_name[64];    /* the first one's name */
    int rootless;            /* rooted collectives whose members disagree on the root: root 0 */
    int past_group;          /* rooted ops whose "Rank" lies past an unlisted (default) group: root 0 */
    a2a_notes a2a;           /* uneven alltoalls read other than by their lists */
};

typedef struct {
    trace *t;
    int r;
    const char *path;
    const cJSON *dist;       /* distributedInfo or NULL */
    GHashTable *launch;      /* correlation -> cuda_runtime/driver event */
    GHashTable *rpc;         /* External id -> record_param_comms */
    GHashTable *ncclop;      /* External id -> nccl:<op> annotation */
    GArray *gpu;             /* gpu_ev */
    GArray *steps;           /* int64_t ProfilerStep durations, ps */
    double ts0_us;           /* earliest ts: trace time 0 */
    double tsmax_us;         /* latest ts + dur */
    int tsmax_ev;            /* its event */
    struct knotes *notes;    /* what the note says (all files) */
    a2a_row *a2a_pending;    /* the alltoall row of the op being built */
    GHashTable *a2a;         /* op index -> a2a_row*, this file's alltoalls */
} kctx;

/* Largest message (as the native format) and rank number accepted. */
#define KINETO_MAX_BYTES 1125899906842624.0 /* 2^50 */
#define KINETO_MAX_RANKS 1048576

static int64_t us_to_ps(double us)
{
    return (int64_t)llround(us * 1e6);
}

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    /* cJSON reads 1e400 as inf: treat it as absent, like a non-number (an
     * infinite "dur" used to pass the dur >= 0 check); so is any magnitude
     * over 2^53, which callers cast to integers (UB, found by fuzz_kineto). */
    return cJSON_IsNumber(v) && fabs(v->valuedouble) <= 9007199254740992.0 ? v->valuedouble : dflt;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int kineto_dtype_bytes(const char *n)
{
    static const struct {
        const char *name;
        int bytes;
    } t[] = {
        {"Float", 4}, {"float", 4}, {"Double", 8}, {"double", 8}, {"Half", 2}, {"c10::Half", 2},
        {"BFloat16", 2}, {"c10::BFloat16", 2}, {"Long", 8}, {"long int", 8}, {"int64_t", 8},
        {"Int", 4}, {"int", 4}, {"Short", 2}, {"short int", 2}, {"Char", 1}, {"signed char", 1},
        {"Byte", 1}, {"unsigned char", 1}, {"Bool", 1}, {"bool", 1}, {"ComplexFloat", 8},
        {"ComplexDouble", 16}, {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}, {"Float8_e4m3fnuz", 1},
        {"Float8_e5m2fnuz", 1}, {"UInt16", 2}, {"UInt32", 4}, {"UInt64", 8},
    };
    for (size_t i = 0; n && i < G_N_ELEMENTS(t); i++)
        if (!strcmp(n, t[i].name))
            return t[i].bytes;
    return 0;
}

int kineto_coll_from_name(const char *name, coll_kind *out)
{
    char buf[96];
    size_t m = 0;
    for (const char *p = name; *p && m + 1 < sizeof buf; p++)
        if (*p != '_' && *p != '-')
            buf[m++] = g_ascii_tolower(*p);
    buf[m] = 0;
    static const char *suffix[] = {"coalesced", "base", "intotensor", "tensor", "oop", "v"}; /* _broadcast_oop, _reduce_oop: out of place */
    for (size_t i = 0; i < G_N_ELEMENTS(suffix); i++) {
        size_t l = strlen(suffix[i]);
        if (m > l && !strcmp(buf + m - l, suffix[i]))
            buf[m -= l] = 0;
    }
    if (!strcmp(buf, "alltoall") || !strcmp(buf, "alltoallv")) {
        *out = COLL_ALLTOALL;
        return 0;
    }
    if (!strcmp(buf, "reducescatter") || !strcmp(buf, "allreduce") || !strcmp(buf, "allgather") ||
        !strcmp(buf, "broadcast") || !strcmp(buf, "reduce") || !strcmp(buf, "gather") || !strcmp(buf, "scatter"))
        return coll_kind_from_name(buf, out);
    return -1;
}

/* A list of whole numbers in 0..max as PyTorch writes them: a string "[3, 1, 0]" (or "[]"), cut
 * where allowed to its first 29 entries, "..." and its last ("[a0, ..., a28, ..., an]": the
 * profiler's format_list, torch/csrc/profiler/util.cpp, kTruncateLength 30), or a JSON array of
 * numbers. *out the numbers (NULL when v is absent or the list empty), *cut for a cut list; else
 * the reason, `shape` (not such a list) or `range` (an entry out of range). */
static const char *num_list_scan(const cJSON *v, double max, GArray **out, gboolean *cut, const char *shape,
                                 const char *range)
{
    *out = NULL;
    *cut = FALSE;
    if (!v)
        return NULL;
    GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
    const char *why = NULL;
    if (cJSON_IsString(v)) {
        const char *p = v->valuestring;
        while (g_ascii_isspace(*p))
            p++;
        if (*p++ != '[')
            why = shape;
        while (!why) {
            while (g_ascii_isspace(*p))
                p++;
            if (*p == ']' && !a->len && !*cut)
                break;
            if (!strncmp(p, "...", 3) && a->len && !*cut) {
                *cut = TRUE;
                p += 3;
            } else {
                char *end;
                errno = 0;
                double x = g_ascii_isdigit(*p) ? (double)g_ascii_strtoull(p, &end, 10) : -1;
                if (x < 0 || errno || x > max) {
                    why = range;
                    break;
                }
                g_array_append_val(a, x);
                p = end;
            }
            while (g_ascii_isspace(*p))
                p++;
            if (*p == ']')
                break;
            if (*p++ != ',')
                why = shape;
        }
        if (!why) {
            p++;
            while (g_ascii_isspace(*p))
                p++;
            if (*p || (*cut && a->len < 2))
                why = shape;
        }
    } else if (cJSON_IsArray(v)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, v)
        {
            if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > max ||
                e->valuedouble != floor(e->valuedouble)) {
                why = range;
                break;
            }
            g_array_append_val(a, e->valuedouble);
        }
    } else {
        why = shape;
    }
    if (why || !a->len) {
        g_array_free(a, TRUE);
        *cut = FALSE;
        return why;
    }
    *out = a;
    return NULL;
}

/* kineto.h; also the Flight Recorder's (flightrec.c). */
gboolean kineto_ranks_parse(const cJSON *v, int size, GArray **out, const char **why)
{
    GArray *d;
    gboolean cut;
    *out = NULL;
    *why = num_list_scan(v, KINETO_MAX_RANKS - 1, &d, &cut, "expected a list of ranks like \"[0, 1]\"",
                         "expected ranks that are whole numbers in 0..2^20");
    if (*why || !d)
        return !*why;
    const double *x = (const double *)d->data;
    int n = (int)d->len;
    if (cut) { /* a group over 30 ranks: its ranks where the visible ones are evenly strided */
        double stride = x[1] - x[0];
        gboolean even = stride > 0 && size > n && x[0] + (size - 1) * stride == x[n - 1];
        for (int i = 2; even && i < n - 1; i++)
            even = x[i] == x[0] + i * stride;
        if (!even) {
            *why = size > n ? "a list cut to 30 entries (PyTorch cuts a group's over 30) whose ranks are not evenly "
                              "strided: its members cannot be told"
                            : "a list cut to 30 entries (PyTorch cuts a group's over 30) without the \"Group size\" "
                              "that tells its members";
            g_array_free(d, TRUE);
            return FALSE;
        }
        double first = x[0];
        g_array_set_size(d, 0); /* (x is not read again before it is set anew: d may move) */
        for (int i = 0; i < size; i++) {
            double r = first + i * stride;
            if (r > KINETO_MAX_RANKS - 1) {
                *why = "expected ranks that are whole numbers in 0..2^20";
                g_array_free(d, TRUE);
                return FALSE;
            }
            g_array_append_val(d, r);
        }
        x = (const double *)d->data;
        n = size;
    }
    GArray *a = g_array_sized_new(FALSE, FALSE, sizeof(int), (guint)n);
    for (int i = 0; i < n; i++) {
        int r = (int)x[i];
        g_array_append_val(a, r);
    }
    g_array_free(d, TRUE);
    for (guint i = 0; !*why && i < a->len; i++)
        for (guint j = 0; j < i && !*why; j++)
            if (g_array_index(a, int, i) == g_array_index(a, int, j))
                *why = "a rank is named twice";
    if (*why) {
        g_array_free(a, TRUE);
        return FALSE;
    }
    *out = a;
    return TRUE;
}

/* kineto.h */
gboolean kineto_splits_parse(const cJSON *v, GArray **out, gboolean *cut, const char **why)
{
    *why = num_list_scan(v, KINETO_MAX_BYTES, out, cut, "expected a list of split sizes like \"[3, 1, 0]\"",
                         "expected split sizes that are whole numbers in 0..2^50");
    return !*why;
}

static gboolean fail(kctx *k, const gpu_ev *g, int code, GError **err, const char *what);

/* A group's size as recorded (PyTorch's "Group size", pg_config's "pg_size"), 0 where absent or
 * not a size. */
static int group_size(const cJSON *o, const char *key)
{
    double n = num(o, key, 0);
    return n >= 1 && n <= KINETO_MAX_RANKS && n == floor(n) ? (int)n : 0;
}

/* ranks_parse of v (a group of `size` ranks where known, else 0), the error naming `what` and
 * event g. */
static gboolean ranks_get(kctx *k, const gpu_ev *g, const cJSON *v, int size, const char *what, GArray **out,
                          GError **err)
{
    const char *why;
    if (kineto_ranks_parse(v, size, out, &why))
        return TRUE;
    char *m = g_strdup_printf("%s: %s", what, why);
    fail(k, g, TRACE_ERROR_VALUE, err, m);
    g_free(m);
    return FALSE;
}

/* The default process group: pg_config's pg "0", else 0..world_size-1,
 * else all loaded ranks; -1 (and *err) when pg "0"'s ranks are malformed. */
static int default_group(kctx *k, const gpu_ev *g, GError **err)
{
    const cJSON *pgs = cJSON_GetObjectItemCaseSensitive(k->dist, "pg_config"), *pg;
    cJSON_ArrayForEach(pg, pgs)
    {
        const char *name = str(pg, "pg_name");
        if (!name || strcmp(name, "0"))
            continue;
        GArray *a;
        if (!ranks_get(k, g, cJSON_GetObjectItemCaseSensitive(pg, "ranks"), group_size(pg, "pg_size"),
                       "distributedInfo.pg_config: process group \"0\"'s ranks", &a, err))
            return -1;
        if (a) {
            int gi = trace_group_add(k->t, "0", (int *)a->data, (int)a->len);
            g_array_free(a, TRUE);
            return gi;
        }
    }
    double wsd = num(k->dist, "world_size", 0);
    /* (an int cast of 2^31 was UB: a size past KINETO_MAX_RANKS counts as absent) */
    int ws = wsd >= 1 && wsd <= KINETO_MAX_RANKS ? (int)wsd : 0;
    if (ws < 1)
        return trace_group_world(k->t);
    int *rk = g_new(int, ws);
    for (int i = 0; i < ws; i++)
        rk[i] = i;
    int gi = trace_group_add(k->t, "0", rk, ws);
    g_free(rk);
    return gi;
}

static gboolean fail(kctx *k, const gpu_ev *g, int code, GError **err, const char *what)
{
    g_set_error(err, TRACE_ERROR, code, "%s: event %d (%s '%s'): %s", k->path, g->idx,
                str(g->ev, "cat") ? str(g->ev, "cat") : "?", str(g->ev, "name") ? str(g->ev, "name") : "", what);
    return FALSE;
}

/* One member's side of an alltoall: its send and receive totals and, from "In split size" and
 * "Out split size" (rows of dim 0 per member, all_to_all_single's input_split_sizes and
 * output_split_sizes; empty for an even split), the bytes to and from each member. Kept in
 * k->a2a_pending for emit_one; a2a_settle builds the matrix from every member's. */
static gboolean a2a_split(kctx *k, const gpu_ev *g, const cJSON *a, double in_b, double out_b, int members,
                          GError **err)
{
    a2a_row *row = g_new0(a2a_row, 1);
    row->in_b = in_b;
    row->out_b = out_b;
    row->n = members;
    row->path = k->path;
    row->what = "event";
    row->ev = g->idx;
    k->a2a_pending = row;
    for (int dir = 0; dir < 2; dir++) {
        const char *key = dir ? "Out split size" : "In split size";
        GArray *l;
        gboolean cut;
        const char *why;
        if (!kineto_splits_parse(cJSON_GetObjectItemCaseSensitive(a, key), &l, &cut, &why)) {
            char *m = g_strdup_printf("%s: %s", key, why);
            fail(k, g, TRACE_ERROR_VALUE, err, m);
            g_free(m);
            return FALSE;
        }
        if (cut)
            row->known = A2A_CUT;
        if (!l)
            continue;
        double rows = 0, total = dir ? out_b : in_b;
        for (guint j = 0; j < l->len; j++)
            rows += g_array_index(l, double, j);
        char *m = NULL;
        if (!cut && (int)l->len != members)
            m = g_strdup_printf("%s: %u entries for a process group of %d ranks", key, l->len, members);
        else if (rows == 0 && total > 0)
            m = g_strdup_printf("%s: no rows for %.0f bytes", key, total);
        else if (!cut && rows > 0 && fmod(total, rows) != 0)
            m = g_strdup_printf("%s: %.0f bytes are not a whole number of its %.0f rows", key, total, rows);
        if (m) {
            g_array_free(l, TRUE);
            fail(k, g, TRACE_ERROR_VALUE, err, m);
            g_free(m);
            return FALSE;
        }
        if (!cut) {
            double *b = g_new(double, members);
            for (int j = 0; j < members; j++)
                b[j] = rows > 0 ? g_array_index(l, double, j) * (total / rows) : 0;
            if (dir)
                row->out = b;
            else
                row->in = b;
        }
        g_array_free(l, TRUE);
    }
    if (row->known == A2A_CUT) { /* the exact lists of a member whose other list was cut are not used */
        g_clear_pointer(&row->in, g_free);
        g_clear_pointer(&row->out, g_free);
    }
    return TRUE;
}

/* Fill the TOP_COLL/SEND/RECV fields from a set of collective args (the
 * kernel's own, or its record_param_comms'). */
static gboolean comm_from_args(kctx *k, const gpu_ev *g, const cJSON *a, const cJSON *rpc, trace_op *op,
                               GError **err)
{
    const char *cname = str(a, "Collective name");
    const char *dt = str(a, "dtype");
    int esz = kineto_dtype_bytes(dt);
    double in = num(a, "In msg nelems", -1), out = num(a, "Out msg nelems", -1);
    if (esz <= 0)
        return fail(k, g, TRACE_ERROR_VALUE, err, "unknown or missing dtype");
    if (in < 0 || out < 0) {
        gboolean absent = !cJSON_GetObjectItemCaseSensitive(a, in < 0 ? "In msg nelems" : "Out msg nelems");
        return fail(k, g, absent ? TRACE_ERROR_SCHEMA : TRACE_ERROR_VALUE, err,
                    absent ? "missing In/Out msg nelems" : "In/Out msg nelems: expected a count of elements >= 0");
    }
    /* bounds before the (uint64_t)/(int) casts below, which overflowed (UB) */
    if (in * esz > KINETO_MAX_BYTES || out * esz > KINETO_MAX_BYTES)
        return fail(k, g, TRACE_ERROR_VALUE, err, "In/Out msg nelems x dtype size over 2^50 bytes");
    if (!cname)
        return fail(k, g, TRACE_ERROR_SCHEMA, err, "missing Collective name");
    GArray *rk;
    if (!ranks_get(k, g, cJSON_GetObjectItemCaseSensitive(a, "Process Group Ranks"), group_size(a, "Group size"),
                   "Process Group Ranks", &rk, err))
        return FALSE;
    op->group = rk ? trace_group_add(k->t, str(a, "Process Group Name"), (int *)rk->data, (int)rk->len)
                   : default_group(k, g, err);
    if (op->group < 0)
        return FALSE;
    op->seq = (int64_t)num(a, "Seq", -1);
    gboolean ok = TRUE;
    if (!strcmp(cname, "send") || !strcmp(cname, "recv")) {
        gboolean send = cname[0] == 's';
        const char *key = send ? "Dst Rank" : "Src Rank";
        double peer = num(a, key, num(rpc, key, -1));
        if (peer < 0 || peer >= KINETO_MAX_RANKS) {
            ok = fail(k, g, TRACE_ERROR_SCHEMA, err, send ? "send without a Dst Rank in 0..2^20" : "recv without a Src Rank in 0..2^20");
        } else {
            op->kind = send ? TOP_SEND : TOP_RECV;
            op->peer = rk && peer < rk->len ? g_array_index(rk, int, (int)peer) : (int)peer;
            op->bytes = (uint64_t)(in * esz);
            op->tag = 0;
        }
    } else if (kineto_coll_from_name(cname, &op->coll) == 0) {
        op->kind = TOP_COLL;
        /* nccl-tests' size: all_gather's total output; gather's and scatter's whole list (PyTorch
         * records the rank's piece x the group size as Out for gather, as In for scatter since
         * 2.2 and as Out before) */
        gboolean rooted = coll_default_root(op->coll) >= 0;
        op->bytes = (uint64_t)((op->coll == COLL_ALL_GATHER                                  ? out
                                : op->coll == COLL_GATHER || op->coll == COLL_SCATTER ? fmax(in, out)
                                                                                       : in) *
                               esz);
        /* "Rank": the root (group-local) of a rooted collective since PyTorch 2.2 (pytorch#113828),
         * the caller's own rank before; members that disagree are settled after loading
         * (settle_roots) */
        /* a "Rank" that is there but not a number ("1", true, 1e300) is an error, not root 0 */
        const cJSON *rv = cJSON_GetObjectItemCaseSensitive(a, "Rank");
        if (!rv)
            rv = cJSON_GetObjectItemCaseSensitive(rpc, "Rank");
        double root = !rooted || !rv ? 0 : cJSON_IsNumber(rv) && fabs(rv->valuedouble) < 1e15 ? rv->valuedouble : -1;
        int gsize = ((const trace_group *)g_ptr_array_index(k->t->groups, op->group))->size;
        if (!(root >= 0 && root == floor(root) && (root < gsize || (!rk && root < KINETO_MAX_RANKS))))
            ok = fail(k, g, TRACE_ERROR_VALUE, err, "Rank (the root of a broadcast, reduce, gather or scatter): "
                                                    "expected a rank of its process group");
        else if (root >= gsize) /* the caller's rank (before 2.2) in a group the trace does not list */
            k->notes->past_group++;
        else
            op->root = (int)root;
        if (ok && op->coll == COLL_ALLTOALL)
            ok = a2a_split(k, g, a, in * esz, out * esz, gsize, err);
    } else {
        ok = fail(k, g, TRACE_ERROR_VALUE, err, "unsupported Collective name");
    }
    if (rk)
        g_array_free(rk, TRUE);
    return ok;
}

/* Older traces: the nccl:<op> annotation's Input Dims and Input type. */
static gboolean comm_from_annotation(kctx *k, const gpu_ev *g, const cJSON *ann, trace_op *op, GError **err)
{
    const char *n = str(ann, "name") + strlen("nccl:");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(ann, "args");
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(a, "Input Dims");
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(a, "Input type");
    if (kineto_coll_from_name(n, &op->coll) != 0)
        return fail(k, g, TRACE_ERROR_VALUE, err, "linked nccl: annotation names an unsupported collective");
    double bytes = 0;
    for (int i = 0; i < cJSON_GetArraySize(dims); i++) {
        const cJSON *d = cJSON_GetArrayItem(dims, i), *x;
        const cJSON *ty = cJSON_GetArrayItem(types, i);
        int esz = kineto_dtype_bytes(cJSON_IsString(ty) ? ty->valuestring : NULL);
        if (!cJSON_IsArray(d) || !cJSON_GetArraySize(d) || !esz)
            continue;
        double ne = 1;
        cJSON_ArrayForEach(x, d)
        {
            /* two negative dims used to multiply to a positive size */
            if (!cJSON_IsNumber(x) || x->valuedouble < 0)
                return fail(k, g, TRACE_ERROR_VALUE, err, "linked nccl: annotation has a dimension that is not a number >= 0");
            ne *= x->valuedouble;
        }
        bytes += ne * esz;
    }
    if (bytes > KINETO_MAX_BYTES) /* the (uint64_t) cast below overflowed (UB) */
        return fail(k, g, TRACE_ERROR_VALUE, err, "linked nccl: annotation's tensor is over 2^50 bytes");
    if (bytes <= 0)
        return fail(k, g, TRACE_ERROR_SCHEMA, err, "linked nccl: annotation has no sized tensor input");
    op->kind = TOP_COLL;
    op->group = default_group(k, g, err);
    if (op->group < 0)
        return FALSE;
    const trace_group *grp = g_ptr_array_index(k->t->groups, op->group);
    /* all_gather's annotation lists the rank's input; so does gather's, and scatter's lists the
     * received piece on every rank but the root: the total is the piece x the group size */
    gboolean pieces = op->coll == COLL_ALL_GATHER || op->coll == COLL_GATHER || op->coll == COLL_SCATTER;
    if (pieces && bytes * grp->size > KINETO_MAX_BYTES) /* (2^50 x 2^20 overflowed the cast) */
        return fail(k, g, TRACE_ERROR_VALUE, err, "linked nccl: annotation's tensor x the group size is over 2^50 bytes");
    op->bytes = (uint64_t)(pieces ? bytes * grp->size : bytes);
    op->seq = -1;
    return TRUE;
}

static gboolean is_nccl_kernel(const char *name)
{
    return g_str_has_prefix(name, "ncclKernel_") || g_str_has_prefix(name, "ncclDevKernel_") ||
           g_str_has_prefix(name, "ncclSymkDevKernel_");
}

static const cJSON *by_ext(GHashTable *h, double ext)
{
    return ext < 0 ? NULL : g_hash_table_lookup(h, GSIZE_TO_POINTER((gsize)ext));
}

/* One GPU activity as an op: compute, or (NCCL kernels) collective/p2p. */
static gboolean gpu_to_op(kctx *k, const gpu_ev *g, trace_op *op, GError **err)
{
    const char *name = str(g->ev, "name");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(g->ev, "args");
    memset(op, 0, sizeof *op);
    op->kind = TOP_COMPUTE;
    op->dur_ps = us_to_ps(g->dur_us);
    op->ts_ps = us_to_ps(g->ts_us - k->ts0_us);
    op->src_index = g->idx;
    op->seq = -1;
    if (!name || !is_nccl_kernel(name))
        return TRUE;
    double ext = num(a, "External id", -1);
    const cJSON *rpc = by_ext(k->rpc, ext);
    const cJSON *rargs = cJSON_GetObjectItemCaseSensitive(rpc, "args");
    if (str(a, "Collective name"))
        return comm_from_args(k, g, a, rargs, op, err);
    if (str(rargs, "Collective name"))
        return comm_from_args(k, g, rargs, rargs, op, err);
    const cJSON *ann = by_ext(k->ncclop, ext);
    if (!ann)
        ann = by_ext(k->ncclop, ext + 1); /* nested right under record_param_comms */
    if (ann && strcmp(str(ann, "name"), "nccl:coalesced"))
        return comm_from_annotation(k, g, ann, op, err);
    /* no collective args, record_param_comms or nccl:<op> by External id: PyTorch launches the
     * kernel of a coalesced group (batch_isend_irecv, _coalescing_manager with a device) at
     * endCoalescing, where no record_param_comms is open, so the kernel carries no sizes (the
     * ops' own record_param_comms are not linked to it). Rather than refuse the whole trace
     * (it did), the kernel stays at its traced duration, as compute, and the note says so. */
    if (!k->notes->opaque++)
        g_strlcpy(k->notes->opaque_name, name, sizeof k->notes->opaque_name);
    return TRUE;
}

static gboolean scan_event(kctx *k, const cJSON *e, int i, GError **err)
{
    const char *ph = str(e, "ph"), *cat = str(e, "cat"), *name = str(e, "name");
    if (!ph || strcmp(ph, "X") || !cat)
        return TRUE;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "args");
    double ts = num(e, "ts", NAN), dur = num(e, "dur", NAN);
    if (isnan(ts) || isnan(dur) || dur < 0 || dur > 1e12) { /* 1e12 us, as the native format */
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_SCHEMA, "%s: event %d ('%s'): complete event without numeric ts and dur in 0..1e12 us",
                    k->path, i, name ? name : "");
        return FALSE;
    }
    if (ts < k->ts0_us)
        k->ts0_us = ts;
    if (ts + dur > k->tsmax_us) {
        k->tsmax_us = ts + dur;
        k->tsmax_ev = i;
    }
    /* Kineto repeats a user annotation that covers GPU work on the GPU's timeline, with the same
     * name and External id ("gpu_user_annotation"): ProfilerStep#N twice (twice the steps, their
     * median mixed with the GPU's span), an nccl:<op> without its Input Dims in place of the CPU
     * one. Only its time span counts. */
    if (!strcmp(cat, "gpu_user_annotation"))
        return TRUE;
    if (!strcmp(cat, "kernel") || !strcmp(cat, "gpu_memcpy") || !strcmp(cat, "gpu_memset")) {
        gpu_ev g = {e, i, ts, dur, (int64_t)num(a, "stream", num(e, "tid", 0))};
        g_array_append_val(k->gpu, g);
    } else if (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver")) {
        double c = num(a, "correlation", -1);
        if (c >= 0)
            g_hash_table_insert(k->launch, GSIZE_TO_POINTER((gsize)c), (gpointer)e);
    } else if (name && !strcmp(name, "record_param_comms") && num(a, "External id", -1) >= 0) {
        g_hash_table_insert(k->rpc, GSIZE_TO_POINTER((gsize)num(a, "External id", 0)), (gpointer)e);
    } else if (name && g_str_has_prefix(name, "nccl:") && num(a, "External id", -1) >= 0) {
        g_hash_table_insert(k->ncclop, GSIZE_TO_POINTER((gsize)num(a, "External id", 0)), (gpointer)e);
    }
    if (name && g_str_has_prefix(name, "ProfilerStep#")) {
        int64_t d = us_to_ps(dur);
        g_array_append_val(k->steps, d);
    }
    return TRUE;
}

static gint gpu_cmp(gconstpointer pa, gconstpointer pb)
{
    const gpu_ev *a = pa, *b = pb;
    if (a->ts_us != b->ts_us)
        return a->ts_us < b->ts_us ? -1 : 1;
    return a->idx - b->idx;
}

static gint i64_cmp(gconstpointer pa, gconstpointer pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Latest-ending op on a stream other than `s` that ended at or before `ts`
 * and not before `after`; -1 if none. `rec` is per stream. */
static int latest_before(const recent *rec, int nstreams, int s, int64_t ts, int64_t after)
{
    int best = -1;
    int64_t best_end = -1;
    for (int q = 0; q < nstreams; q++) {
        if (q == s)
            continue;
        for (int j = 0; j < 2; j++) {
            if (rec[q].op[j] < 0 || rec[q].end[j] > ts)
                continue;
            if (rec[q].end[j] >= after && rec[q].end[j] > best_end) {
                best_end = rec[q].end[j];
                best = rec[q].op[j];
            }
            break;
        }
    }
    return best;
}

static void recent_push(recent *r, int op, int64_t end)
{
    r->end[1] = r->end[0];
    r->op[1] = r->op[0];
    r->end[0] = end;
    r->op[0] = op;
}

static int64_t launch_ps(kctx *k, const gpu_ev *g)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(g->ev, "args");
    const cJSON *l = by_ext(k->launch, num(a, "correlation", -1));
    return l ? us_to_ps(num(l, "ts", 0) - k->ts0_us) : -1;
}

/* Host gap: on a stream, the part of the idle time before a kernel during
 * which its launch call had not yet been made (launch ts - previous end,
 * capped at the gap). Cross-stream dependencies: a collective/p2p kernel
 * depends on the latest compute kernel of another stream that ended before it
 * started; any kernel that started more than WAIT_SLACK_PS after both its
 * launch and its stream's previous end depends on the latest op of another
 * stream that ended within that wait. */
static gboolean emit_one(kctx *k, const gpu_ev *g, int s, int ns, recent *comp, recent *any, int64_t *last_end,
                         GError **err)
{
    trace_op op;
    if (!gpu_to_op(k, g, &op, err)) {
        g_clear_pointer(&k->a2a_pending, a2a_row_free);
        return FALSE;
    }
    op.stream = s;
    op.name = str(g->ev, "name") ? str(g->ev, "name") : "";
    int64_t launch = launch_ps(k, g), ready = last_end[s];
    if (ready >= 0 && launch > ready && op.ts_ps > ready) {
        trace_op gap = {.kind = TOP_COMPUTE, .stream = s, .name = "host gap",
                        .dur_ps = MIN(launch, op.ts_ps) - ready, .seq = -1, .ts_ps = ready, .src_index = g->idx};
        trace_op_add(k->t, k->r, &gap);
    }
    uint32_t idx = trace_op_add(k->t, k->r, &op);
    if (k->a2a_pending) {
        g_hash_table_insert(k->a2a, GUINT_TO_POINTER(idx), k->a2a_pending);
        k->a2a_pending = NULL;
    }
    int dep = -1;
    if (op.kind != TOP_COMPUTE)
        dep = latest_before(comp, ns, s, op.ts_ps, INT64_MIN);
    else if (launch >= 0 && op.ts_ps - MAX(ready, launch) > WAIT_SLACK_PS)
        dep = latest_before(any, ns, s, op.ts_ps, MAX(ready, launch));
    if (dep >= 0)
        trace_op_dep(k->t, k->r, idx, (uint32_t)dep);
    int64_t end = op.ts_ps + op.dur_ps;
    last_end[s] = end;
    if (op.kind == TOP_COMPUTE)
        recent_push(&comp[s], (int)idx, end);
    recent_push(&any[s], (int)idx, end);
    return TRUE;
}

static gboolean emit_rank(kctx *k, GError **err)
{
    g_array_sort(k->gpu, gpu_cmp);
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(int64_t));
    GHashTable *seen = g_hash_table_new(sim_int64_hash, g_int64_equal);
    for (guint i = 0; i < k->gpu->len; i++) {
        gpu_ev *g = &g_array_index(k->gpu, gpu_ev, i);
        if (!g_hash_table_contains(seen, &g->stream_raw)) {
            g_hash_table_add(seen, &g->stream_raw);
            g_array_append_val(ids, g->stream_raw);
        }
    }
    g_array_sort(ids, i64_cmp);
    guint ns = ids->len;
    GHashTable *map = g_hash_table_new(sim_int64_hash, g_int64_equal);
    for (guint i = 0; i < ns; i++)
        g_hash_table_insert(map, &g_array_index(ids, int64_t, i), GUINT_TO_POINTER(i));
    recent *comp = g_new(recent, ns), *any = g_new(recent, ns);
    int64_t *last_end = g_new(int64_t, ns);
    for (guint i = 0; i < ns; i++) {
        comp[i] = any[i] = (recent){{-1, -1}, {-1, -1}};
        last_end[i] = -1;
    }
    gboolean ok = TRUE;
    for (guint i = 0; i < k->gpu->len && ok; i++) {
        gpu_ev *g = &g_array_index(k->gpu, gpu_ev, i);
        int s = GPOINTER_TO_INT(g_hash_table_lookup(map, &g->stream_raw));
        ok = emit_one(k, g, s, (int)ns, comp, any, last_end, err);
    }
    g_free(comp);
    g_free(any);
    g_free(last_end);
    g_hash_table_destroy(map);
    g_hash_table_destroy(seen);
    g_array_free(ids, TRUE);
    return ok;
}

/* Parses one file; NULL with *err unless it is a JSON object with a
 * traceEvents array. */
static cJSON *parse_file(const char *path, GError **err)
{
    gsize len;
    char *text = tracefile_read(path, &len, err);
    if (!text)
        return NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 0);
    if (!root) {
        int line, col;
        gsize off = end ? (gsize)(end - text) : 0;
        tracefile_line_col(text, len, off, &line, &col);
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE, "%s:%d:%d: (byte %" G_GSIZE_FORMAT "): invalid JSON", path,
                    line, col, off);
    } else if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_SCHEMA, "%s: $.traceEvents: not a Chrome trace (no \"traceEvents\" array)", path);
        cJSON_Delete(root);
        root = NULL;
    }
    g_free(text);
    return root;
}

static gboolean load_rank(trace *t, int r, const char *path, const cJSON *root, GArray *steps,
                          struct knotes *notes, GHashTable *a2a, GError **err)
{
    kctx k = {.t = t, .r = r, .path = path, .ts0_us = INFINITY, .tsmax_us = -INFINITY, .notes = notes, .a2a = a2a};
    k.dist = cJSON_GetObjectItemCaseSensitive(root, "distributedInfo");
    k.launch = g_hash_table_new(g_direct_hash, g_direct_equal);
    k.rpc = g_hash_table_new(g_direct_hash, g_direct_equal);
    k.ncclop = g_hash_table_new(g_direct_hash, g_direct_equal);
    k.gpu = g_array_new(FALSE, FALSE, sizeof(gpu_ev));
    k.steps = steps;
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    gboolean ok = TRUE;
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, evs)
    {
        if (ok && !cJSON_IsObject(e)) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_SCHEMA, "%s: event %d: not an object", path, i);
            ok = FALSE;
        }
        ok = ok && scan_event(&k, e, i++, err);
    }
    /* times become picoseconds from the first event: a span over 1e12 us
     * (the native format's limit) overflowed the 64-bit clock (fuzzing) */
    if (ok && k.tsmax_us - k.ts0_us > 1e12) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE,
                    "%s: event %d: ends %.6g us after the first event begins (at most 1e12 us)", path, k.tsmax_ev,
                    k.tsmax_us - k.ts0_us);
        ok = FALSE;
    }
    if (ok && k.gpu->len == 0) { /* used to replay as an empty job taking 0 s */
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_SCHEMA,
                    "%s: $.traceEvents: no GPU kernel, memcpy or memset events (nothing to replay)", path);
        ok = FALSE;
    }
    ok = ok && emit_rank(&k, err);
    g_hash_table_destroy(k.launch);
    g_hash_table_destroy(k.rpc);
    g_hash_table_destroy(k.ncclop);
    g_array_free(k.gpu, TRUE);
    return ok;
}

/* a directory's per-rank traces: its *.json[.gz] */
static gboolean is_json(const char *full, const char *name)
{
    (void)full;
    return g_str_has_suffix(name, ".json") || g_str_has_suffix(name, ".json.gz");
}

/* distributedInfo.rank of every file (dist[i], -1 where absent) when all
 * are distinct and < n; else file order. */
static void assign_ranks(const double *dist, int n, int *rank)
{
    gboolean *used = g_new0(gboolean, n);
    gboolean ok = TRUE;
    for (int i = 0; i < n; i++) {
        double r = dist[i];
        if (!(r >= 0 && r < n) || used[(int)r]) /* (tested before the cast: 2^32 was UB) */
            ok = FALSE;
        else
            used[rank[i] = (int)r] = TRUE;
    }
    for (int i = 0; !ok && i < n; i++)
        rank[i] = i;
    g_free(used);
}

/* Since PyTorch 2.2 a rooted collective's "Rank" is its root, before it was the caller's own rank
 * in the group. Where the members of a group disagree on a rooted collective's (numbered as
 * trace_validate numbers them: "Seq", else call order per rank and group) it was the latter: the
 * root is not in the trace, and 0 is taken (counted for the note). */
static void settle_roots(trace *t, struct knotes *kn)
{
    trace_number_collectives(t);
    GHashTable *seen = g_hash_table_new_full(sim_int64_hash, g_int64_equal, g_free, NULL); /* key -> root + 1, or -1 */
    for (int pass = 0; pass < 2; pass++)
        for (int r = 0; r < t->nranks; r++)
            for (guint i = 0; i < t->ranks[r].ops->len; i++) {
                trace_op *o = &g_array_index(t->ranks[r].ops, trace_op, i);
                if (o->kind != TOP_COLL || coll_default_root(o->coll) < 0 || o->group < 0 ||
                    (guint)o->group >= t->groups->len || o->seq >= TRACE_MAX_SEQ) /* (validate refuses those) */
                    continue;
                gint64 key = trace_coll_key(o->group, o->seq);
                gpointer v;
                if (pass == 0 && !g_hash_table_lookup_extended(seen, &key, NULL, &v))
                    g_hash_table_insert(seen, g_memdup2(&key, sizeof key), GINT_TO_POINTER(o->root + 1));
                else if (pass == 0 && GPOINTER_TO_INT(v) != o->root + 1)
                    g_hash_table_insert(seen, g_memdup2(&key, sizeof key), GINT_TO_POINTER(-1));
                else if (pass == 1 && GPOINTER_TO_INT(g_hash_table_lookup(seen, &key)) == -1) {
                    o->root = 0;
                    if (((const trace_group *)g_ptr_array_index(t->groups, o->group))->ranks[0] == r)
                        kn->rootless++; /* once per collective: at its first member */
                }
            }
    g_hash_table_destroy(seen);
}


/* One document in memory at a time: each file is parsed in an arena, loaded
 * into the rank of its place in the file list and freed whole before the
 * next (a directory of large per-rank traces used to hold every document at
 * once); the ranks are then put in distributedInfo order. Ops name other
 * ranks only through groups and peers, which the files give as global
 * ranks, so moving a rank's op list is all the reordering needs. */
trace *trace_kineto_load(const char *path_or_dir, GError **err)
{
    return trace_kineto_load_noted(path_or_dir, NULL, err);
}

trace *trace_kineto_load_noted(const char *path_or_dir, char **note, GError **err)
{
    if (note)
        *note = NULL;
    struct knotes kn = {0};
    GPtrArray *files = tracefile_list(path_or_dir, is_json, "*.json or *.json.gz files", err);
    if (!files)
        return NULL;
    int n = (int)files->len;
    int *rank = g_new0(int, n);
    double *dist = g_new(double, n);
    trace *t = trace_new(n, path_or_dir);
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(int64_t));
    GHashTable **a2a = g_new0(GHashTable *, n); /* by file, then by rank: each one's alltoall rows */
    gboolean ok = TRUE;
    for (int i = 0; i < n && ok; i++) {
        json_arena *arena = json_arena_open(); /* names are interned and groups copied by trace_op_add / trace_group_add */
        cJSON *root = parse_file(g_ptr_array_index(files, i), err);
        a2a[i] = a2a_rows_new();
        ok = root != NULL && load_rank(t, i, g_ptr_array_index(files, i), root, steps, &kn, a2a[i], err);
        dist[i] = ok ? num(cJSON_GetObjectItemCaseSensitive(root, "distributedInfo"), "rank", -1) : -1;
        if (!arena)
            cJSON_Delete(root);
        json_arena_close(arena);
    }
    if (ok && n > 1) {
        assign_ranks(dist, n, rank);
        trace_rank *by_file = g_memdup2(t->ranks, (gsize)n * sizeof *t->ranks);
        GHashTable **a2a_file = g_memdup2(a2a, (gsize)n * sizeof *a2a);
        for (int i = 0; i < n; i++) {
            t->ranks[rank[i]] = by_file[i];
            a2a[rank[i]] = a2a_file[i];
        }
        g_free(by_file);
        g_free(a2a_file);
    }
    /* groups, matching collectives and sends/receives across the files, and the collectives'
     * sequence numbers: a directory of ranks used to reach the replay without them (every
     * collective of a group one rendezvous: a false deadlock, or an overrun with files naming
     * groups of other ranks). A rank of a larger job is validated after --ranks replicates it. */
    gboolean whole = ok && trace_check_whole(t, NULL);
    if (whole)
        settle_roots(t, &kn);
    ok = ok && (!whole || a2a_settle(t, a2a, &kn.a2a, err));
    ok = ok && (!whole || trace_validate(t, err));
    if (ok && !whole) /* a rank of a larger job: its peers' splits are not in it */
        kn.a2a.alone = a2a_count_alone(a2a, n);
    for (int i = 0; i < n; i++)
        if (a2a[i])
            g_hash_table_destroy(a2a[i]);
    g_free(a2a);
    if (ok && steps->len) {
        g_array_sort(steps, i64_cmp);
        guint m = steps->len;
        int64_t *s = (int64_t *)steps->data;
        t->step_ps = m % 2 ? s[m / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
        t->steps = (int)(m / (guint)n); /* ProfilerStep ranges per rank */
    }
    if (!ok && t) {
        trace_free(t);
        t = NULL;
    }
    if (ok && (kn.opaque || kn.rootless || kn.past_group || kn.a2a.cut || kn.a2a.wide || kn.a2a.alone) && note) {
        GString *m = g_string_new(NULL);
        if (kn.opaque)
            g_string_append_printf(m, "; %d NCCL kernel%s without the collective's size in the trace (e.g. %.48s: the "
                                   "kernel of a coalesced group, such as PyTorch's batch_isend_irecv, carries no "
                                   "record_param_comms) replayed at %s traced duration%s, as compute",
                                   kn.opaque, kn.opaque == 1 ? "" : "s", kn.opaque_name, kn.opaque == 1 ? "its" : "their",
                                   kn.opaque == 1 ? "" : "s");
        if (kn.rootless)
            g_string_append_printf(m, "; %d broadcast/reduce/gather/scatter%s whose members disagree on \"Rank\" (PyTorch "
                                   "before 2.2 recorded each caller's own rank there, not the root) replayed with root 0",
                                   kn.rootless, kn.rootless == 1 ? "" : "s");
        if (kn.past_group)
            g_string_append_printf(m, "; %d broadcast/reduce/gather/scatter op%s whose \"Rank\" lies past the default "
                                   "group (no \"Process Group Ranks\"; PyTorch before 2.2 recorded the caller's rank "
                                   "there) replayed with root 0", kn.past_group, kn.past_group == 1 ? "" : "s");
        if (kn.a2a.cut)
            g_string_append_printf(m, "; %d alltoall%s of groups over 30 ranks, whose split sizes PyTorch cuts to 30 "
                                   "entries, replayed from each member's totals (member i sends member j a share in "
                                   "proportion to what j receives)", kn.a2a.cut, kn.a2a.cut == 1 ? "" : "s");
        if (kn.a2a.wide)
            g_string_append_printf(m, "; %d uneven alltoall%s of groups over %d ranks replayed as even splits of the "
                                   "members' mean", kn.a2a.wide, kn.a2a.wide == 1 ? "" : "s", A2A_MAX_MATRIX);
        if (kn.a2a.alone)
            g_string_append_printf(m, "; %d uneven alltoall%s (split sizes) in a trace without all of %s group's ranks "
                                   "replayed as even splits (the other members' splits are not in it)", kn.a2a.alone,
                                   kn.a2a.alone == 1 ? "" : "s", kn.a2a.alone == 1 ? "its" : "their");
        *note = g_strconcat("Kineto: ", m->str + 2, NULL);
        g_string_free(m, TRUE);
    }
    g_free(rank);
    g_free(dist);
    g_array_free(steps, TRUE);
    g_ptr_array_unref(files);
    return t;
}

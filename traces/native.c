/* traces/native.c - the native trace format.
 *
 * JSON: {"ranks": N, "groups": [{"name", "ranks": [...]}], "alltoall_weights": [[w, ...], ...] (an uneven
 * alltoall's shares: its "root" k > 0 names list k for the receivers, -k for the senders; a list of n x n
 * a whole matrix, row by sender, -k transposed), "ops": [{"rank",
 * "id", "kind", "stream", "dur_us", "bytes", "group", "peer", "tag", "root",
 * "deps": [ids], "name", "flops", "mem_bytes", "fused", "copy", "sms"}]}; a file may instead
 * hold one rank ({"rank": r, "ops": [...]}, ops without "rank"). CSV: one op
 * per row with the header rank,id,kind,stream,dur_us,bytes,group,peer,tag,deps
 * and optionally fused (group: "world" or space-separated ranks; deps: ids
 * separated by ';'; fused: true/false or 1/0).
 * kind: compute, send, recv, or a collective name (all_reduce, ...).
 * Sizes accept K/M/G suffixes (powers of two).
 */
#include "native.h"
#include "json_arena.h"

#include <cjson/cJSON.h>
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "traces/tracefile.h"

#define MAX_RANKS 1048576

typedef struct {
    const char *path;
    trace *t;                /* built once the rank count is known */
    GPtrArray *pending;      /* raw ops before the trace exists: pend_op* */
    GHashTable *groups;      /* name -> rank list string (JSON groups) */
    GPtrArray *weights;      /* "alltoall_weights": GArray of double each (the first file's that has them) */
    const char *weights_file;
    int nranks;
} nload;

typedef struct {
    int rank;
    trace_op op;
    char *id;
    char **deps;             /* ids */
    char *group;             /* name or rank list */
    const char *file;        /* where it is, for messages: the file (the caller's path, alive while loading) */
    long pos;                /* and its place there: $.ops[pos], or CSV record pos */
    bool csv;
} pend_op;

/* An op's position for messages: "file:$.ops[i]" or "file:record n". */
static char *pend_where(const pend_op *p)
{
    return p->csv ? g_strdup_printf("%s:record %ld", p->file, p->pos) : g_strdup_printf("%s:$.ops[%ld]", p->file, p->pos);
}

static void pend_free(gpointer p)
{
    pend_op *o = p;
    g_free(o->id);
    g_strfreev(o->deps);
    g_free(o->group);
    g_free(o);
}

/* An op's place for messages, formatted only when one is written:
 * "file:$.ops[pos]" or "file:record pos" (a per-op sprintf was 2.5% of a
 * 558k-op load); pos -1: the text alone. */
typedef struct {
    const char *text;
    long pos;
    bool csv; /* "file:record pos" */
} nwhere;

/* Values quoted in messages are cut with %.64s: a 100 MB field used to be
 * copied whole into the message. */
static gboolean bad_at(GError **err, int code, const nwhere *w, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static gboolean bad_at(GError **err, int code, const nwhere *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *m = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (w->pos >= 0)
        g_set_error(err, TRACE_ERROR, code, w->csv ? "%s:record %ld: %s" : "%s:$.ops[%ld]: %s", w->text, w->pos, m);
    else /* the top level's "file:$" */
        g_set_error(err, TRACE_ERROR, code, "%s: %s", w->text, m);
    g_free(m);
    return FALSE;
}
/* a message at a place given as text */
#define bad trace_fail

/* "64M", "1024", 1e6 -> bytes; false on negatives, garbage, > 2^50. */
static gboolean parse_size(const char *s, double num, bool is_num, uint64_t *out)
{
    double v = num, mult = 1;
    if (!is_num) {
        char *end = NULL;
        errno = 0;
        v = g_ascii_strtod(s, &end);
        if (end == s || errno == ERANGE || strspn(s, "0123456789.eE+-") != (size_t)(end - s)) /* (hex: strtod's) */
            return FALSE;
        switch (g_ascii_toupper(*end)) {
        case 'K': mult = 1024.0; end++; break;
        case 'M': mult = 1048576.0; end++; break;
        case 'G': mult = 1073741824.0; end++; break;
        case 'T': mult = 1099511627776.0; end++; break;
        default: break;
        }
        if (*end == 'B' || *end == 'b')
            end++;
        if (*end)
            return FALSE;
    }
    v *= mult;
    if (!isfinite(v) || v < 0 || v > 1125899906842624.0 || v != floor(v))
        return FALSE;
    *out = (uint64_t)v;
    return TRUE;
}

static gboolean kind_of(const char *s, trace_op *op)
{
    if (!strcmp(s, "compute"))
        op->kind = TOP_COMPUTE;
    else if (!strcmp(s, "send"))
        op->kind = TOP_SEND;
    else if (!strcmp(s, "recv"))
        op->kind = TOP_RECV;
    else if (coll_kind_from_name(s, &op->coll) == 0 && op->coll != COLL_SENDRECV)
        op->kind = TOP_COLL;
    else
        return FALSE;
    return TRUE;
}

/* ---- JSON ---- */

static void line_col(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *c = text; c < at && *c; c++) {
        if (*c == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static gboolean get_int(const cJSON *o, const char *key, int lo, int hi, int dflt, int *out, const nwhere *w,
                        GError **err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        *out = dflt;
        return TRUE;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return bad_at(err, TRACE_ERROR_VALUE, w, "\"%s\": expected an integer in %d..%d", key, lo, hi);
    *out = (int)v->valuedouble;
    return TRUE;
}

static gboolean json_bytes(const cJSON *v, uint64_t *out)
{
    if (cJSON_IsNumber(v))
        return parse_size(NULL, v->valuedouble, true, out);
    if (cJSON_IsString(v))
        return parse_size(v->valuestring, 0, false, out);
    return FALSE;
}

static gboolean json_op(nload *L, const cJSON *o, int file_rank, const char *file, long pos, const nwhere *w,
                        GError **err)
{
    static const char *const keys[] = {"rank", "id", "kind", "stream", "dur_us", "bytes", "group", "peer",
                                       "tag", "root", "deps", "name", "flops", "mem_bytes", "fused", "copy", "sms", NULL};
    if (!cJSON_IsObject(o))
        return bad_at(err, TRACE_ERROR_SCHEMA, w, "expected an object");
    for (const cJSON *c = o->child; c; c = c->next) {
        bool known = false;
        for (const char *const *k = keys; *k && !known; k++)
            known = !strcmp(*k, c->string);
        if (!known)
            return bad_at(err, TRACE_ERROR_SCHEMA, w, "unknown key \"%s\"", c->string);
        for (const cJSON *d = o->child; d != c; d = d->next)
            if (!strcmp(d->string, c->string)) /* cJSON keeps both; the first was read */
                return bad_at(err, TRACE_ERROR_SCHEMA, w, "key \"%s\" given twice", c->string);
    }
    pend_op *p = g_new0(pend_op, 1);
    p->file = file;
    p->pos = pos;
    g_ptr_array_add(L->pending, p);
    p->op.dur_ps = p->op.ts_ps = -1;
    p->op.src_index = L->pending->len - 1;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
    if (!cJSON_IsString(kind) || !kind_of(kind->valuestring, &p->op))
        return bad_at(err, TRACE_ERROR_VALUE, w, "\"kind\": expected compute, send, recv or a collective "
                   "(all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall)");
    int stream, peer, tag, root, sms;
    if (!get_int(o, "rank", 0, MAX_RANKS - 1, file_rank, &p->rank, w, err) ||
        !get_int(o, "stream", 0, 1 << 20, p->op.kind == TOP_COMPUTE ? 0 : 1, &stream, w, err) ||
        !get_int(o, "peer", 0, MAX_RANKS - 1, -1, &peer, w, err) ||
        !get_int(o, "tag", 0, INT32_MAX, 0, &tag, w, err) ||
        !get_int(o, "root", p->op.kind == TOP_COLL && p->op.coll == COLL_ALLTOALL ? -MAX_RANKS : 0, MAX_RANKS - 1, 0,
                 &root, w, err) ||
        !get_int(o, "sms", 0, 1024, 0, &sms, w, err))
        return FALSE;
    if (sms && p->op.kind != TOP_COLL)
        return bad_at(err, TRACE_ERROR_SCHEMA, w, "\"sms\": only a collective holds SMs of its own");
    p->op.sms = (unsigned)sms;
    if (p->rank < 0)
        return bad_at(err, TRACE_ERROR_SCHEMA, w, "\"rank\" is required (the file has no top-level \"rank\")");
    p->op.stream = stream;
    p->op.peer = peer;
    p->op.tag = tag;
    p->op.root = root;
    const cJSON *fu = cJSON_GetObjectItemCaseSensitive(o, "fused");
    if (fu && !cJSON_IsBool(fu))
        return bad_at(err, TRACE_ERROR_SCHEMA, w, "\"fused\": expected true or false");
    p->op.fused = fu && cJSON_IsTrue(fu);
    const cJSON *cp = cJSON_GetObjectItemCaseSensitive(o, "copy");
    if (cp && !cJSON_IsBool(cp))
        return bad_at(err, TRACE_ERROR_SCHEMA, w, "\"copy\": expected true or false");
    if (cp && cJSON_IsTrue(cp) && p->op.kind != TOP_SEND && p->op.kind != TOP_RECV)
        return bad_at(err, TRACE_ERROR_SCHEMA, w, "\"copy\": only a send or a recv is a copy");
    p->op.copy = cp && cJSON_IsTrue(cp);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "dur_us");
    if (v) {
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > TRACE_MAX_DUR_PS / 1e6)
            return bad_at(err, TRACE_ERROR_VALUE, w, "\"dur_us\": expected a number of microseconds in 0..1e12");
        p->op.dur_ps = (int64_t)llround(v->valuedouble * 1e6);
    } else if (p->op.kind == TOP_COMPUTE) {
        return bad_at(err, TRACE_ERROR_SCHEMA, w, "a compute op needs \"dur_us\"");
    }
    v = cJSON_GetObjectItemCaseSensitive(o, "bytes");
    if (v && !json_bytes(v, &p->op.bytes))
        return bad_at(err, TRACE_ERROR_VALUE, w, "\"bytes\": expected a whole number of bytes (K/M/G suffixes) in 0..2^50");
    if (!v && p->op.kind != TOP_COMPUTE)
        return bad_at(err, TRACE_ERROR_SCHEMA, w, "a %s needs \"bytes\"", trace_op_kind_name(p->op.kind));
    if ((p->op.kind == TOP_SEND || p->op.kind == TOP_RECV) && peer < 0)
        return bad_at(err, TRACE_ERROR_SCHEMA, w, "a %s needs \"peer\"", trace_op_kind_name(p->op.kind));
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id"), *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
    if ((id && !cJSON_IsString(id)) || (nm && !cJSON_IsString(nm)))
        return bad_at(err, TRACE_ERROR_SCHEMA, w, "\"id\" and \"name\" must be strings");
    p->id = id ? g_strdup(id->valuestring) : NULL;
    p->op.name = g_intern_string(nm ? nm->valuestring : id ? id->valuestring : kind->valuestring);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "group");
    if (g && cJSON_IsString(g)) {
        p->group = g_strdup(g->valuestring);
    } else if (g && cJSON_IsArray(g)) {
        GString *s = g_string_new(NULL);
        for (const cJSON *e = g->child; e; e = e->next) {
            if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble >= MAX_RANKS || e->valuedouble != floor(e->valuedouble)) {
                g_string_free(s, TRUE);
                return bad_at(err, TRACE_ERROR_VALUE, w, "\"group\": expected rank numbers");
            }
            g_string_append_printf(s, "%s%d", s->len ? " " : "", (int)e->valuedouble);
        }
        p->group = g_string_free(s, FALSE);
    } else if (g) {
        return bad_at(err, TRACE_ERROR_SCHEMA, w, "\"group\": expected a group name or an array of ranks");
    }
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "deps");
    if (d) {
        if (!cJSON_IsArray(d))
            return bad_at(err, TRACE_ERROR_SCHEMA, w, "\"deps\": expected an array of op ids");
        GPtrArray *ids = g_ptr_array_new_with_free_func(g_free); /* (free(FALSE) below hands them over) */
        for (const cJSON *e = d->child; e; e = e->next) {
            if (!cJSON_IsString(e)) {
                g_ptr_array_free(ids, TRUE);
                return bad_at(err, TRACE_ERROR_SCHEMA, w, "\"deps\": expected op ids (strings)");
            }
            g_ptr_array_add(ids, g_strdup(e->valuestring));
        }
        g_ptr_array_add(ids, NULL);
        p->deps = (char **)g_ptr_array_free(ids, FALSE);
    }
    return TRUE;
}

static gboolean json_file(nload *L, const char *path, const char *text, GError **err)
{
    const char *end = NULL;
    json_arena *arena = json_arena_open(); /* the document's nodes: everything kept is copied out */
    cJSON *root = cJSON_ParseWithOpts(text, &end, TRUE);
    if (!root) {
        int line, col;
        line_col(text, end ? end : text, &line, &col);
        json_arena_close(arena);
        g_autofree char *at = g_strdup_printf("%s:%d:%d", path, line, col);
        return bad(err, TRACE_ERROR_PARSE, at, "malformed JSON (expected a trace object)");
    }
    gboolean ok = TRUE;
    char *top = NULL;
    int file_rank = -1, nr = 0;
    if (!cJSON_IsObject(root)) {
        ok = bad(err, TRACE_ERROR_SCHEMA, path, "$: expected an object with \"ops\"");
        goto out;
    }
    /* "file:$: ..." so the top-level keys' errors carry a JSON path too. */
    top = g_strdup_printf("%s:$", path);
    nwhere tw = {.text = top, .pos = -1};
    if (!(ok = get_int(root, "rank", 0, MAX_RANKS - 1, -1, &file_rank, &tw, err)) ||
        !(ok = get_int(root, "ranks", 1, MAX_RANKS, 0, &nr, &tw, err)))
        goto out;
    if (nr > L->nranks)
        L->nranks = nr;
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(root, "groups");
    for (const cJSON *g = groups ? groups->child : NULL; g && ok; g = g->next) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(g, "name"), *rk = cJSON_GetObjectItemCaseSensitive(g, "ranks");
        if (!cJSON_IsString(nm) || !cJSON_IsArray(rk) || !cJSON_GetArraySize(rk)) {
            ok = bad(err, TRACE_ERROR_SCHEMA, path, "$.groups: each group needs \"name\" and a non-empty \"ranks\" array");
            break;
        }
        GString *s = g_string_new(NULL);
        for (const cJSON *e = rk->child; e; e = e->next) {
            if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble >= MAX_RANKS ||
                e->valuedouble != floor(e->valuedouble)) {
                ok = bad(err, TRACE_ERROR_VALUE, path, "$.groups[\"%s\"].ranks: expected rank numbers (whole, 0..%d)",
                         nm->valuestring, MAX_RANKS - 1);
                break;
            }
            g_string_append_printf(s, "%s%d", s->len ? " " : "", (int)e->valuedouble);
        }
        if (g_hash_table_contains(L->groups, nm->valuestring) && ok)
            ok = bad(err, TRACE_ERROR_VALUE, path, "$.groups: duplicate group \"%s\"", nm->valuestring);
        if (ok)
            g_hash_table_insert(L->groups, g_strdup(nm->valuestring), g_string_free(s, FALSE));
        else
            g_string_free(s, TRUE);
    }
    /* an uneven alltoall's weights, one list a group shape and split: each list's numbers >= 0 */
    const cJSON *aw = cJSON_GetObjectItemCaseSensitive(root, "alltoall_weights");
    if (ok && aw && !cJSON_IsArray(aw))
        ok = bad(err, TRACE_ERROR_SCHEMA, path, "$.alltoall_weights: expected an array of arrays of numbers");
    GPtrArray *wl = aw && ok ? g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref) : NULL;
    int li = 0;
    for (const cJSON *l = wl ? aw->child : NULL; l && ok; l = l->next, li++) {
        double sum = 0;
        GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
        g_ptr_array_add(wl, a);
        if (!cJSON_IsArray(l) || !cJSON_GetArraySize(l) || cJSON_GetArraySize(l) > MAX_RANKS) {
            ok = bad(err, TRACE_ERROR_SCHEMA, path, "$.alltoall_weights[%d]: expected a non-empty array of numbers", li);
            break;
        }
        int ei = 0;
        for (const cJSON *e = l->child; e && ok; e = e->next, ei++) {
            if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0) || e->valuedouble > 1e9)
                ok = bad(err, TRACE_ERROR_VALUE, path, "$.alltoall_weights[%d][%d]: expected a number in 0..1e9", li, ei);
            else
                g_array_append_val(a, e->valuedouble), sum += e->valuedouble;
        }
        if (ok && !(sum > 0))
            ok = bad(err, TRACE_ERROR_VALUE, path, "$.alltoall_weights[%d]: all zero", li);
    }
    if (ok && wl && L->weights) { /* several files: the same lists */
        bool same = wl->len == L->weights->len;
        for (guint k = 0; same && k < wl->len; k++) {
            GArray *x = g_ptr_array_index(wl, k), *y = g_ptr_array_index(L->weights, k);
            same = x->len == y->len && !memcmp(x->data, y->data, x->len * sizeof(double));
        }
        if (!same)
            ok = bad(err, TRACE_ERROR_VALUE, path, "$.alltoall_weights: differs from those of %s", L->weights_file);
    }
    if (ok && wl && !L->weights) {
        L->weights = wl;
        L->weights_file = path;
    } else if (wl) {
        g_ptr_array_unref(wl);
    }
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(root, "ops");
    if (ok && !cJSON_IsArray(ops))
        ok = bad(err, TRACE_ERROR_SCHEMA, path, "$.ops: expected an array of operations");
    int i = 0;
    for (const cJSON *o = ok ? ops->child : NULL; o && ok; o = o->next, i++) {
        nwhere w = {.text = path, .pos = i};
        ok = json_op(L, o, file_rank, path, i, &w, err);
        /* An op beyond the declared "ranks" used to grow the trace silently. */
        const pend_op *p = ok ? g_ptr_array_index(L->pending, L->pending->len - 1) : NULL;
        if (p && nr > 0 && p->rank >= nr)
            ok = bad_at(err, TRACE_ERROR_VALUE, &w, "\"rank\": %d, but the file declares \"ranks\": %d", p->rank, nr);
    }
out:
    g_free(top);
    if (!arena) /* else the arena holds the whole document */
        cJSON_Delete(root);
    json_arena_close(arena);
    return ok;
}

/* ---- CSV ---- */

enum { C_RANK, C_ID, C_KIND, C_STREAM, C_DUR, C_BYTES, C_GROUP, C_PEER, C_TAG, C_DEPS, C_FUSED, C_NCOLS };
static const char *const csv_cols[C_NCOLS] = {"rank", "id", "kind", "stream", "dur_us", "bytes",
                                              "group", "peer", "tag", "deps", "fused"};

typedef struct {
    nload *L;
    const char *path;
    GPtrArray *fields;   /* current record */
    int col_of[C_NCOLS]; /* column index of each known name, -1 if absent */
    guint ncols;         /* the header's */
    long record;         /* 1-based, header = 1 */
    GError **err;
    gboolean ok;
} csv_ctx;

static void csv_field(void *s, size_t len, void *data)
{
    csv_ctx *c = data;
    g_ptr_array_add(c->fields, g_strndup(s, len));
}

static const char *fld(csv_ctx *c, int col)
{
    int i = c->col_of[col];
    return i >= 0 && (guint)i < c->fields->len ? g_ptr_array_index(c->fields, i) : "";
}

static gboolean csv_int(csv_ctx *c, int col, long lo, long hi, long dflt, long *out, const nwhere *w)
{
    const char *s = fld(c, col);
    if (!*s) {
        *out = dflt;
        return TRUE;
    }
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return bad_at(c->err, TRACE_ERROR_VALUE, w, "%s: expected an integer in %ld..%ld, got '%.64s'", csv_cols[col],
                   lo, hi, s);
    *out = v;
    return TRUE;
}

static gboolean csv_row(csv_ctx *c)
{
    nwhere wh = {.text = c->path, .pos = c->record, .csv = true};
    const nwhere *w = &wh;
    pend_op *p = g_new0(pend_op, 1);
    p->file = c->path;
    p->pos = c->record;
    p->csv = true;
    g_ptr_array_add(c->L->pending, p);
    p->op.dur_ps = p->op.ts_ps = -1;
    if (!kind_of(fld(c, C_KIND), &p->op))
        return bad_at(c->err, TRACE_ERROR_VALUE, w, "kind: expected compute, send, recv or a collective, got '%.64s'",
                   fld(c, C_KIND));
    long rank, stream, peer, tag;
    if (!csv_int(c, C_RANK, 0, MAX_RANKS - 1, -1, &rank, w) ||
        !csv_int(c, C_STREAM, 0, 1 << 20, p->op.kind == TOP_COMPUTE ? 0 : 1, &stream, w) ||
        !csv_int(c, C_PEER, 0, MAX_RANKS - 1, -1, &peer, w) || !csv_int(c, C_TAG, 0, INT32_MAX, 0, &tag, w))
        return FALSE;
    if (rank < 0)
        return bad_at(c->err, TRACE_ERROR_SCHEMA, w, "rank is required");
    p->rank = (int)rank;
    p->op.stream = (int)stream;
    p->op.peer = (int)peer;
    p->op.tag = tag;
    const char *fu = fld(c, C_FUSED);
    if (*fu && strcmp(fu, "true") && strcmp(fu, "false") && strcmp(fu, "1") && strcmp(fu, "0"))
        return bad_at(c->err, TRACE_ERROR_VALUE, w, "fused: expected true, false, 1 or 0, got '%.64s'", fu);
    p->op.fused = !strcmp(fu, "true") || !strcmp(fu, "1");
    const char *dur = fld(c, C_DUR), *bytes = fld(c, C_BYTES);
    if (*dur) {
        char *end;
        double us = g_ascii_strtod(dur, &end);
        if (*end || !(us >= 0) || us > TRACE_MAX_DUR_PS / 1e6 || strspn(dur, "0123456789.eE+-") != strlen(dur)) /* (hex: strtod's) */
            return bad_at(c->err, TRACE_ERROR_VALUE, w, "dur_us: expected microseconds in 0..1e12, got '%.64s'", dur);
        p->op.dur_ps = (int64_t)llround(us * 1e6);
    } else if (p->op.kind == TOP_COMPUTE) {
        return bad_at(c->err, TRACE_ERROR_SCHEMA, w, "a compute op needs dur_us");
    }
    if (*bytes && !parse_size(bytes, 0, false, &p->op.bytes))
        return bad_at(c->err, TRACE_ERROR_VALUE, w, "bytes: expected a whole number of bytes (K/M/G), got '%.64s'", bytes);
    if (!*bytes && p->op.kind != TOP_COMPUTE)
        return bad_at(c->err, TRACE_ERROR_SCHEMA, w, "a %s needs bytes", trace_op_kind_name(p->op.kind));
    if ((p->op.kind == TOP_SEND || p->op.kind == TOP_RECV) && peer < 0)
        return bad_at(c->err, TRACE_ERROR_SCHEMA, w, "a %s needs peer", trace_op_kind_name(p->op.kind));
    p->id = *fld(c, C_ID) ? g_strdup(fld(c, C_ID)) : NULL;
    p->op.name = g_intern_string(p->id ? p->id : fld(c, C_KIND));
    p->group = *fld(c, C_GROUP) ? g_strdup(fld(c, C_GROUP)) : NULL;
    if (*fld(c, C_DEPS))
        p->deps = g_strsplit(fld(c, C_DEPS), ";", -1);
    return TRUE;
}

static void csv_record(int term, void *data)
{
    (void)term;
    csv_ctx *c = data;
    c->record++;
    if (!c->ok) {
        g_ptr_array_set_size(c->fields, 0);
        return;
    }
    if (c->record == 1) {
        for (int k = 0; k < C_NCOLS; k++)
            c->col_of[k] = -1;
        for (guint i = 0; i < c->fields->len; i++) {
            const char *h = g_ptr_array_index(c->fields, i);
            int k = 0;
            while (k < C_NCOLS && strcmp(csv_cols[k], h))
                k++;
            if (k == C_NCOLS) {
                c->ok = bad(c->err, TRACE_ERROR_SCHEMA, c->path, "record 1: unknown column '%.64s' (expected %s, ...)",
                            h, "rank,id,kind,stream,dur_us,bytes,group,peer,tag,deps,fused");
                break;
            }
            if (c->col_of[k] >= 0) {
                c->ok = bad(c->err, TRACE_ERROR_SCHEMA, c->path, "record 1: column '%s' twice", h);
                break;
            }
            c->col_of[k] = (int)i;
        }
        c->ncols = c->fields->len;
        if (c->ok && (c->col_of[C_RANK] < 0 || c->col_of[C_KIND] < 0))
            c->ok = bad(c->err, TRACE_ERROR_SCHEMA, c->path, "record 1: the header needs rank and kind columns");
    } else if (c->fields->len != c->ncols) { /* an extra field was ignored, a missing one read as empty */
        nwhere wh = {.text = c->path, .pos = c->record, .csv = true};
        c->ok = bad_at(c->err, TRACE_ERROR_SCHEMA, &wh, "%u fields, but the header has %u", c->fields->len, c->ncols);
    } else {
        c->ok = csv_row(c);
    }
    g_ptr_array_set_size(c->fields, 0);
}

static gboolean csv_file(nload *L, const char *path, const char *text, gsize len, GError **err)
{
    struct csv_parser p;
    if (csv_init(&p, CSV_APPEND_NULL) != 0)
        return bad(err, TRACE_ERROR_IO, path, "cannot start the CSV parser");
    /* libcsv grows a field's buffer by blk_size (128 bytes by default): a
     * 100 MB field cost ~800k reallocs, minutes under ASan. 1 MiB steps. */
    csv_set_blk_size(&p, (size_t)1 << 20);
    csv_ctx c = {.L = L, .path = path, .fields = g_ptr_array_new_with_free_func(g_free), .err = err, .ok = TRUE};
    if (csv_parse(&p, text, len, csv_field, csv_record, &c) != len || csv_fini(&p, csv_field, csv_record, &c) != 0) {
        if (c.ok)
            c.ok = bad(err, TRACE_ERROR_PARSE, path, "record %ld: malformed CSV (%s)", c.record + 1,
                       csv_strerror(csv_error(&p)));
    }
    if (c.ok && c.record < 2)
        c.ok = bad(err, TRACE_ERROR_SCHEMA, path, "record %ld: no operations (expected a header and one op per record)",
                   c.record + 1); /* the record where the first op should be, so the message has a position */
    csv_free(&p);
    g_ptr_array_unref(c.fields);
    return c.ok;
}

/* ---- build ---- */

static int cmp_rank(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int group_of(nload *L, trace *t, pend_op *p, GError **err)
{
    const char *spec = p->group ? p->group : "world";
    if (!strcmp(spec, "world"))
        return trace_group_world(t);
    const char *list = g_hash_table_lookup(L->groups, spec);
    const char *name = list ? spec : NULL;
    if (!list)
        list = spec;
    g_auto(GStrv) parts = g_strsplit_set(list, " ,", -1);
    GArray *r = g_array_new(FALSE, FALSE, sizeof(int));
    for (int i = 0; parts[i]; i++) {
        if (!*parts[i])
            continue;
        char *end;
        long v = strtol(parts[i], &end, 10);
        if (*end || v < 0 || v >= t->nranks) {
            g_array_free(r, TRUE);
            g_autofree char *w = pend_where(p);
            bad(err, TRACE_ERROR_REF, w, "group '%.64s': unknown group or bad rank '%.64s' (%d ranks)", spec,
                parts[i], t->nranks);
            return -1;
        }
        int iv = (int)v;
        g_array_append_val(r, iv);
    }
    /* a rank twice was dropped silently: [0, 0, 1] was a group of 2 (an empty group has no array to
     * sort: qsort of NULL was UB, found by fuzz_native_json; it is refused below) */
    int *sorted = r->len ? g_memdup2(r->data, sizeof(int) * r->len) : NULL;
    if (sorted)
        qsort(sorted, r->len, sizeof(int), cmp_rank);
    for (guint k = 1; k < r->len; k++)
        if (sorted[k] == sorted[k - 1]) {
            int twice = sorted[k];
            g_free(sorted);
            g_array_free(r, TRUE);
            g_autofree char *w = pend_where(p);
            bad(err, TRACE_ERROR_VALUE, w, "group '%.64s' names rank %d twice", spec, twice);
            return -1;
        }
    g_free(sorted);
    if (r->len == 0) {
        g_array_free(r, TRUE);
        g_autofree char *w = pend_where(p);
        bad(err, TRACE_ERROR_REF, w, "group '%.64s' is empty", spec);
        return -1;
    }
    int id = trace_group_add(t, name, (int *)r->data, (int)r->len);
    g_array_free(r, TRUE);
    return id;
}

static trace *build(nload *L, const char *source, GError **err)
{
    int n = L->nranks;
    for (guint i = 0; i < L->pending->len; i++) {
        pend_op *p = g_ptr_array_index(L->pending, i);
        if (p->rank + 1 > n)
            n = p->rank + 1;
    }
    if (n < 1) {
        bad(err, TRACE_ERROR_SCHEMA, source, "no operations");
        return NULL;
    }
    trace *t = trace_new(n, source);
    for (guint k = 0; L->weights && k < L->weights->len; k++) { /* scaled to mean 1 there */
        const GArray *a = g_ptr_array_index(L->weights, k);
        trace_a2a_weights_append(t, (const double *)a->data, (int)a->len);
    }
    GHashTable **ids = g_new0(GHashTable *, n);
    for (int r = 0; r < n; r++)
        ids[r] = g_hash_table_new(g_str_hash, g_str_equal);
    gboolean ok = TRUE;
    /* a group's spec -> its id + 1: parsed (and checked) once, not for every op that names it */
    GHashTable *gcache = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < L->pending->len && ok; i++) {
        pend_op *p = g_ptr_array_index(L->pending, i);
        if (p->op.kind == TOP_COLL) {
            const char *spec = p->group ? p->group : "world";
            int gid = GPOINTER_TO_INT(g_hash_table_lookup(gcache, spec)) - 1;
            if (gid < 0 && (gid = group_of(L, t, p, err)) < 0) {
                ok = FALSE;
                break;
            }
            g_hash_table_insert(gcache, (gpointer)spec, GINT_TO_POINTER(gid + 1));
            p->op.group = gid;
        }
        if ((p->op.kind == TOP_SEND || p->op.kind == TOP_RECV) && p->op.peer >= n) {
            g_autofree char *w = pend_where(p);
            ok = bad(err, TRACE_ERROR_REF, w, "peer %d: there are only %d ranks", p->op.peer, n);
            break;
        }
        p->op.seq = -1;
        p->op.src_index = i;
        uint32_t idx = trace_op_add(t, p->rank, &p->op);
        if (p->id) {
            if (g_hash_table_contains(ids[p->rank], p->id)) {
                g_autofree char *w = pend_where(p);
                ok = bad(err, TRACE_ERROR_VALUE, w, "duplicate id \"%s\" on rank %d", p->id, p->rank);
                break;
            }
            g_hash_table_insert(ids[p->rank], p->id, GUINT_TO_POINTER(idx + 1));
        }
        p->op.group = (int)idx; /* remember the index for the dependency pass */
    }
    for (guint i = 0; i < L->pending->len && ok; i++) {
        pend_op *p = g_ptr_array_index(L->pending, i);
        for (int k = 0; p->deps && p->deps[k] && ok; k++) {
            char *d = g_strstrip(p->deps[k]);
            if (!*d)
                continue;
            gpointer v = g_hash_table_lookup(ids[p->rank], d);
            if (!v) {
                g_autofree char *w = pend_where(p);
                ok = bad(err, TRACE_ERROR_REF, w, "depends on \"%s\", which rank %d does not have", d, p->rank);
            } else
                trace_op_dep(t, p->rank, (uint32_t)p->op.group, GPOINTER_TO_UINT(v) - 1);
        }
    }
    for (int r = 0; r < n; r++)
        g_hash_table_destroy(ids[r]);
    g_free(ids);
    g_hash_table_destroy(gcache);
    if (ok)
        ok = trace_validate(t, err);
    if (!ok) {
        trace_free(t);
        return NULL;
    }
    return t;
}

trace *trace_native_load(const char *const *paths, int npaths, GError **err)
{
    nload L = {.pending = g_ptr_array_new_with_free_func(pend_free),
               .groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)};
    gboolean ok = TRUE;
    for (int i = 0; i < npaths && ok; i++) {
        char *text = NULL;
        gsize len = 0;
        GError *e = NULL;
        if (!g_file_get_contents(paths[i], &text, &len, &e)) {
            ok = bad(err, TRACE_ERROR_IO, paths[i], "%s", e->message);
            g_error_free(e);
            break;
        }
        tracefile_blank_bom(text, len);
        const char *nul = memchr(text, 0, len), *bad_utf8 = NULL;
        if (nul || !g_utf8_validate(text, (gssize)len, &bad_utf8))
            ok = bad(err, TRACE_ERROR_PARSE, paths[i], "byte %td: binary data: not a native trace (JSON or CSV text)",
                     (nul ? nul : bad_utf8) - text);
        else if (g_str_has_suffix(paths[i], ".csv"))
            ok = csv_file(&L, paths[i], text, len, err);
        else
            ok = json_file(&L, paths[i], text, err);
        g_free(text);
    }
    trace *t = ok ? build(&L, npaths == 1 ? paths[0] : "(several files)", err) : NULL;
    g_ptr_array_unref(L.pending);
    g_hash_table_destroy(L.groups);
    if (L.weights)
        g_ptr_array_unref(L.weights);
    return t;
}

gboolean trace_native_write_json(const trace *t, const char *path, GError **err)
{
    cJSON *root = cJSON_CreateObject(), *groups = cJSON_AddArrayToObject(root, "groups");
    cJSON_AddNumberToObject(root, "ranks", t->nranks);
    for (guint g = 0; g < t->groups->len; g++) {
        const trace_group *tg = g_ptr_array_index(t->groups, g);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", tg->name);
        cJSON_AddItemToObject(o, "ranks", cJSON_CreateIntArray(tg->ranks, tg->size));
        cJSON_AddItemToArray(groups, o);
    }
    if (t->a2a_weights->len) {
        cJSON *aw = cJSON_AddArrayToObject(root, "alltoall_weights");
        for (guint k = 0; k < t->a2a_weights->len; k++) {
            const GArray *a = g_ptr_array_index(t->a2a_weights, k);
            cJSON_AddItemToArray(aw, cJSON_CreateDoubleArray((const double *)a->data, (int)a->len));
        }
    }
    cJSON *ops = cJSON_AddArrayToObject(root, "ops");
    for (int r = 0; r < t->nranks; r++) {
        for (guint i = 0; i < t->ranks[r].ops->len; i++) {
            const trace_op *op = &g_array_index(t->ranks[r].ops, trace_op, i);
            if (op->dur_ps > TRACE_MAX_DUR_PS) { /* the reader's bound: a file it would refuse */
                g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE, "%s: op %u of rank %d (%s) lasts %.4g us, over the "
                            "format's 1e12", path, i, r, op->name ? op->name : "", (double)op->dur_ps / 1e6);
                cJSON_Delete(root);
                return FALSE;
            }
            cJSON *o = cJSON_CreateObject();
            char id[32];
            g_snprintf(id, sizeof id, "r%do%u", r, i);
            cJSON_AddNumberToObject(o, "rank", r);
            cJSON_AddStringToObject(o, "id", id);
            cJSON_AddStringToObject(o, "name", op->name ? op->name : "");
            cJSON_AddStringToObject(o, "kind", op->kind == TOP_COLL ? coll_kind_name(op->coll) : trace_op_kind_name(op->kind));
            cJSON_AddNumberToObject(o, "stream", op->stream);
            if (op->dur_ps >= 0)
                cJSON_AddNumberToObject(o, "dur_us", (double)op->dur_ps / 1e6);
            if (op->kind != TOP_COMPUTE)
                cJSON_AddNumberToObject(o, "bytes", (double)op->bytes);
            if (op->kind == TOP_COLL)
                cJSON_AddStringToObject(o, "group", ((trace_group *)g_ptr_array_index(t->groups, op->group))->name);
            if (op->kind == TOP_COLL && (coll_default_root(op->coll) >= 0 || (op->coll == COLL_ALLTOALL && op->root)))
                cJSON_AddNumberToObject(o, "root", op->root);
            if (op->fused)
                cJSON_AddBoolToObject(o, "fused", 1);
            if (op->sms)
                cJSON_AddNumberToObject(o, "sms", op->sms);
            if (op->kind == TOP_SEND || op->kind == TOP_RECV) {
                cJSON_AddNumberToObject(o, "peer", op->peer);
                cJSON_AddNumberToObject(o, "tag", (double)op->tag);
                if (op->copy)
                    cJSON_AddBoolToObject(o, "copy", 1);
            }
            if (op->deps && op->deps->len) {
                cJSON *d = cJSON_AddArrayToObject(o, "deps");
                for (guint k = 0; k < op->deps->len; k++) {
                    g_snprintf(id, sizeof id, "r%do%u", r, g_array_index(op->deps, uint32_t, k));
                    cJSON_AddItemToArray(d, cJSON_CreateString(id));
                }
            }
            cJSON_AddItemToArray(ops, o);
        }
    }
    /* printed into one buffer of about the final size (measured about 140 bytes per op): cJSON's
     * hooks (traces/json_arena.h) leave it no realloc, so a growing buffer would be copied */
    char *text = cJSON_PrintBuffered(root, (int)MIN((double)G_MAXINT, 4096 + 160.0 * (double)trace_op_count(t)), 1);
    cJSON_Delete(root);
    gboolean ok = tracefile_set_contents(path, text, -1, err); /* temporary file + rename; a device in place */
    cJSON_free(text);
    return ok;
}

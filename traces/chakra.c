/* traces/chakra.c - Chakra ET importer (protobuf via traces/pbwire, or
 * chakra_jsonizer JSON via cJSON). Both readers fill the same node records;
 * emit_nodes then orders them by their dependencies (the files hold forward
 * references) and adds them to the trace. Schema: et_def.proto as summarised
 * in ../shared/reference/formats.md section 2. */
#include "traces/chakra.h"
#include "sim/hash.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <string.h>

#include "traces/pbwire.h"
#include "traces/tracefile.h"

enum { NODE_INVALID, NODE_METADATA, NODE_MEM_LOAD, NODE_MEM_STORE, NODE_COMP, NODE_SEND, NODE_RECV, NODE_COLL };
#define CHAKRA_MAX_RANKS 1048576 /* as the other importers */

typedef struct {
    uint64_t id;
    char *name;
    int type;
    GArray *deps; /* uint64_t node ids: data_deps */
    GArray *ctrl; /* uint64_t node ids: ctrl_deps */
    int64_t start_us, dur_us;
    int64_t src_index; /* node index in the file */
    size_t offset;     /* byte offset (protobuf) or object index (JSON) */
    gboolean is_cpu;
    int64_t tid;
    gboolean has_comm_type, has_src, has_dst;
    int64_t comm_type, comm_size, comm_src, comm_dst, comm_tag, num_ops;
    char *pg_name;
} cnode;

static void cnode_clear(cnode *n)
{
    g_free(n->name);
    g_free(n->pg_name);
    if (n->deps)
        g_array_free(n->deps, TRUE);
    if (n->ctrl)
        g_array_free(n->ctrl, TRUE);
}

/* One attribute by name; `iv` is the integer of whichever int/bool field
 * carried it (the feeder's fixed fields are int64/int32/uint64/bool). */
static void attr_set(cnode *n, const char *name, int64_t iv, const char *sv)
{
    if (!strcmp(name, "is_cpu_op"))
        n->is_cpu = iv != 0;
    else if (!strcmp(name, "tid"))
        n->tid = iv;
    else if (!strcmp(name, "comm_type"))
        n->comm_type = iv, n->has_comm_type = TRUE;
    else if (!strcmp(name, "comm_size"))
        n->comm_size = iv;
    else if (!strcmp(name, "comm_src"))
        n->comm_src = iv, n->has_src = TRUE;
    else if (!strcmp(name, "comm_dst"))
        n->comm_dst = iv, n->has_dst = TRUE;
    else if (!strcmp(name, "comm_tag"))
        n->comm_tag = iv;
    else if (!strcmp(name, "num_ops"))
        n->num_ops = iv;
    else if (!strcmp(name, "pg_name") && sv)
        g_free(n->pg_name), n->pg_name = g_strdup(sv);
}

/* ---- protobuf ---- */

static void dep_push(uint64_t v, void *ctx)
{
    g_array_append_val((GArray *)ctx, v);
}

static int pb_attr(cnode *n, const pbwire_field *af)
{
    pbwire_reader r = pbwire_sub(af);
    pbwire_field f;
    char *name = NULL, *sv = NULL;
    int64_t iv = 0;
    int rc;
    while ((rc = pbwire_next(&r, &f)) == PBWIRE_OK) {
        /* a repeated field keeps the last value (as protobuf does); the
         * earlier copy used to leak (found by fuzz/fuzz_chakra) */
        if (f.field == 1 && f.wire == PB_LEN)
            g_free(name), name = g_strndup((const char *)f.data, f.len);
        else if (f.field == 29 && f.wire == PB_LEN)
            g_free(sv), sv = g_strndup((const char *)f.data, f.len);
        else if (f.wire == PB_VARINT && (f.field == 15 || f.field == 17)) /* sint32_val, sint64_val: zigzag */
            iv = (int64_t)(f.v >> 1) ^ -(int64_t)(f.v & 1);
        else if (f.wire == PB_VARINT)
            iv = (int64_t)f.v;
    }
    if (rc == PBWIRE_END && name)
        attr_set(n, name, iv, sv);
    g_free(name);
    g_free(sv);
    return rc == PBWIRE_END ? PBWIRE_OK : rc;
}

static int pb_node(cnode *n, pbwire_reader *r, size_t *bad)
{
    pbwire_field f;
    int rc;
    while ((rc = pbwire_next(r, &f)) == PBWIRE_OK) {
        *bad = f.offset;
        switch (f.field) {
        case 1: n->id = f.v; break;
        case 2: g_free(n->name); n->name = g_strndup((const char *)f.data, f.len); break;
        case 3: n->type = f.v <= INT_MAX ? (int)f.v : INT_MAX; break; /* (2^32 + 5 was type 5) */
        case 4: rc = pbwire_varints(&f, dep_push, n->ctrl); break;
        case 5: rc = pbwire_varints(&f, dep_push, n->deps); break;
        case 6: n->start_us = (int64_t)f.v; break;
        case 7: n->dur_us = (int64_t)f.v; break;
        case 10: rc = pb_attr(n, &f); break;
        default: break;
        }
        if (rc != PBWIRE_OK)
            return rc;
    }
    if (rc != PBWIRE_END)
        *bad = r->base + r->pos;
    return rc == PBWIRE_END ? PBWIRE_OK : rc;
}

/* Length-prefixed messages: GlobalMetadata (skipped), then Nodes. */
static gboolean pb_read(const char *path, const guint8 *p, gsize len, GArray *nodes, GError **err)
{
    pbwire_reader r = {p, len, 0, 0};
    for (int64_t k = 0; r.pos < r.len; k++) {
        size_t at = r.pos, bad = at;
        uint64_t mlen;
        int rc = pbwire_varint(&r, &mlen);
        if (rc == PBWIRE_OK && mlen > r.len - r.pos)
            rc = PBWIRE_ETRUNC;
        if (rc == PBWIRE_OK && k > 0) {
            cnode n = {.deps = g_array_new(FALSE, FALSE, sizeof(uint64_t)), .ctrl = g_array_new(FALSE, FALSE, sizeof(uint64_t)),
                       .src_index = k - 1, .offset = at};
            pbwire_reader m = {p + r.pos, (size_t)mlen, 0, r.pos};
            rc = pb_node(&n, &m, &bad);
            g_array_append_val(nodes, n);
        }
        if (rc != PBWIRE_OK) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE, "%s: byte %" G_GSIZE_FORMAT ": %s %" G_GINT64_FORMAT ": %s",
                        path, (gsize)bad, k ? "node" : "GlobalMetadata", k ? k - 1 : 0, pbwire_strerror(rc));
            return FALSE;
        }
        r.pos += (size_t)mlen;
    }
    return TRUE;
}

/* ---- chakra_jsonizer JSON ---- */

/* An integer field: a whole number, its decimal string (the jsonizer
 * writes int64 as strings) or a bool. Absent: *out unchanged, TRUE. FALSE
 * for anything else, or a magnitude of 2^63 or more (the plain cast of
 * 8e108 was UB, found by fuzz/fuzz_chakra; "abc" used to read as 0). */
static gboolean jint(const cJSON *o, const char *key, int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return TRUE;
    if (cJSON_IsString(v)) {
        gint64 x;
        if (!g_ascii_string_to_signed(v->valuestring, 10, G_MININT64, G_MAXINT64, &x, NULL))
            return FALSE;
        *out = x;
        return TRUE;
    }
    if (cJSON_IsNumber(v)) {
        if (!(v->valuedouble < 0x1p63 && v->valuedouble >= -0x1p63) || v->valuedouble != floor(v->valuedouble))
            return FALSE;
        *out = (int64_t)v->valuedouble;
        return TRUE;
    }
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v);
        return TRUE;
    }
    return FALSE;
}

/* The node type by name or number; -1 for anything else (absent too). */
static int type_from_json(const cJSON *v)
{
    static const char *names[] = {"INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE",
                                  "COMP_NODE", "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"};
    if (cJSON_IsNumber(v))
        return v->valuedouble >= 0 && v->valuedouble < (double)G_N_ELEMENTS(names) &&
                       v->valuedouble == floor(v->valuedouble)
                   ? (int)v->valuedouble
                   : -1;
    for (int i = 0; cJSON_IsString(v) && i < (int)G_N_ELEMENTS(names); i++)
        if (!strcmp(v->valuestring, names[i]))
            return i;
    return -1;
}

/* A dependency: a node id, a whole number 0..2^63 (or its decimal string);
 * false for anything else (a negative number used to wrap to 2^64 - 1). */
static bool dep_id(const cJSON *d, uint64_t *v)
{
    if (cJSON_IsString(d)) {
        char *end;
        errno = 0;
        guint64 x = g_ascii_strtoull(d->valuestring, &end, 10);
        if (errno || !g_ascii_isdigit(d->valuestring[0]) || *end) /* (" -1" was read as 2^64 - 1) */
            return false;
        *v = x;
        return true;
    }
    if (!cJSON_IsNumber(d) || !(d->valuedouble >= 0) || d->valuedouble >= 0x1p63 ||
        d->valuedouble != floor(d->valuedouble))
        return false;
    *v = (uint64_t)d->valuedouble;
    return true;
}

/* Fill n from o; NULL, or what is wrong (g_free it). */
static char *json_node(cnode *n, const cJSON *o)
{
    static const char *ival[] = {"int64Val", "int32Val", "uint64Val", "boolVal", "uint32Val", "sint64Val"};
    /* proto3's JSON mapping leaves out a field at its default: a node without "id" is node 0, as
     * in the .et (Chakra's generator and TACOS number nodes from 0) */
    const cJSON *idv = cJSON_GetObjectItemCaseSensitive(o, "id");
    if (idv && !dep_id(idv, &n->id))
        return g_strdup("id: expected a node id (a whole number >= 0)");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (nm && !cJSON_IsString(nm))
        return g_strdup("name: expected a string");
    n->name = g_strdup(cJSON_IsString(nm) ? nm->valuestring : "");
    n->type = type_from_json(cJSON_GetObjectItemCaseSensitive(o, "type"));
    if (n->type < 0)
        return g_strdup("type: expected a node type (COMP_NODE, COMM_COLL_NODE, ... or 0..7)");
    if (!jint(o, "startTimeMicros", &n->start_us))
        return g_strdup("startTimeMicros: expected a whole number of microseconds");
    if (!jint(o, "durationMicros", &n->dur_us) || n->dur_us < 0)
        return g_strdup("durationMicros: expected a whole number of microseconds >= 0");
    const char *dk[] = {"dataDeps", "ctrlDeps"};
    for (int k = 0; k < 2; k++) {
        const cJSON *d, *arr = cJSON_GetObjectItemCaseSensitive(o, dk[k]);
        if (arr && !cJSON_IsArray(arr))
            return g_strdup_printf("%s: expected an array of node ids", dk[k]);
        cJSON_ArrayForEach(d, arr)
        {
            uint64_t v;
            if (!dep_id(d, &v)) {
                char *txt = cJSON_PrintUnformatted(d);
                char *msg = g_strdup_printf("%s: %s is not a node id", dk[k], txt ? txt : "?");
                cJSON_free(txt);
                return msg;
            }
            g_array_append_val(k ? n->ctrl : n->deps, v);
        }
    }
    const cJSON *a, *attrs = cJSON_GetObjectItemCaseSensitive(o, "attr");
    if (attrs && !cJSON_IsArray(attrs))
        return g_strdup("attr: expected an array of attributes");
    cJSON_ArrayForEach(a, attrs)
    {
        const cJSON *an = cJSON_GetObjectItemCaseSensitive(a, "name");
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(a, "stringVal");
        if (!cJSON_IsObject(a) || !cJSON_IsString(an))
            return g_strdup("attr: expected objects with a \"name\"");
        int64_t iv = 0;
        for (size_t i = 0; i < G_N_ELEMENTS(ival); i++)
            if (!jint(a, ival[i], &iv))
                return g_strdup_printf("attr \"%.64s\": %s: expected a whole number below 2^63", an->valuestring,
                                       ival[i]);
        attr_set(n, an->valuestring, iv, cJSON_IsString(s) ? s->valuestring : NULL);
    }
    return NULL;
}

/* Concatenated objects; the first (GlobalMetadata) is skipped. */
static gboolean json_read(const char *path, const char *text, gsize len, GArray *nodes, GError **err)
{
    const char *p = text;
    for (int64_t k = 0;; k++) {
        while (p < text + len && g_ascii_isspace(*p))
            p++;
        if (p >= text + len)
            return TRUE;
        const char *end = NULL;
        /* with the length: without it cJSON measured the rest of the file for
         * every object (strlen), quadratic in the nodes (35 s for 200,000) */
        cJSON *o = cJSON_ParseWithLengthOpts(p, (size_t)(text + len - p), &end, 0);
        if (!cJSON_IsObject(o)) {
            int line, col;
            gsize off = (gsize)((o ? p : end ? end : p) - text);
            tracefile_line_col(text, len, off, &line, &col);
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_PARSE, "%s:%d:%d: (byte %" G_GSIZE_FORMAT ", object %" G_GINT64_FORMAT
                        "): %s", path, line, col, off, k, o ? "not a JSON object" : "invalid JSON");
            cJSON_Delete(o);
            return FALSE;
        }
        if (k == 0 && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "nodes"))) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_SCHEMA,
                        "%s: a PyTorch host execution trace (\"nodes\" array), not Chakra ET; convert it with "
                        "chakra_trace_link and chakra_converter", path);
            cJSON_Delete(o);
            return FALSE;
        }
        if (k > 0) {
            cnode n = {.deps = g_array_new(FALSE, FALSE, sizeof(uint64_t)), .ctrl = g_array_new(FALSE, FALSE, sizeof(uint64_t)),
                       .src_index = k - 1, .offset = (size_t)k};
            char *why = json_node(&n, o);
            g_array_append_val(nodes, n); /* (freed with the others, also on an error) */
            if (why) {
                int line, col;
                gsize off = (gsize)(p - text);
                tracefile_line_col(text, len, off, &line, &col);
                g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE, "%s:%d:%d: (object %" G_GINT64_FORMAT "): %s", path, line,
                            col, k, why);
                g_free(why);
                cJSON_Delete(o);
                return FALSE;
            }
        }
        cJSON_Delete(o);
        p = end;
    }
}

/* ---- nodes to ops ---- */

typedef struct {
    trace *t;
    int r;
    const char *path;
    GArray *nodes;       /* cnode */
    GHashTable *by_id;   /* &cnode.id -> index + 1 */
    int *opidx;          /* op index of node i, -1 if not imported */
    GArray **eff;        /* skipped node i: the op indices it stands for */
    GHashTable *streams; /* (tid << 1 | is_cpu) -> stream + 1 */
    guint8 *state;       /* per node: 0 not visited, 1 on the DFS stack, 2 emitted */
    int group;
} cctx;

static gboolean node_fail(cctx *c, const cnode *n, int code, GError **err, const char *what)
{
    g_set_error(err, TRACE_ERROR, code, "%s: node %" G_GINT64_FORMAT " (id %" G_GUINT64_FORMAT " '%s'): %s", c->path,
                n->src_index, n->id, n->name ? n->name : "", what);
    return FALSE;
}

static gboolean node_to_op(cctx *c, const cnode *n, trace_op *op, GError **err)
{
    /* CollectiveCommType (et_def.proto): a REDUCE, GATHER, SCATTER or BROADCAST node carries no
     * root, so its root is 0 */
    static const int kinds[] = {COLL_ALL_REDUCE, COLL_REDUCE,   COLL_ALL_GATHER,     COLL_GATHER,         COLL_SCATTER,
                                COLL_BROADCAST,  COLL_ALLTOALL, COLL_REDUCE_SCATTER, COLL_REDUCE_SCATTER, COLL_ALL_REDUCE};
    memset(op, 0, sizeof *op);
    op->kind = TOP_COMPUTE;
    /* range checks before the * 1000000: the products overflowed (UB, found by fuzz/fuzz_chakra) */
    if (n->dur_us < 0 || n->dur_us > INT64_MAX / 1000000)
        return node_fail(c, n, TRACE_ERROR_VALUE, err, "duration_micros out of range");
    op->dur_ps = n->dur_us * 1000000;
    op->flops = (double)n->num_ops;
    op->seq = -1;
    op->ts_ps = n->start_us > 0 && n->start_us <= INT64_MAX / 1000000 ? n->start_us * 1000000 : -1;
    op->src_index = n->src_index;
    if (n->comm_size < 0 || n->comm_size > (INT64_C(1) << 50))
        return node_fail(c, n, TRACE_ERROR_VALUE, err, "comm_size: expected bytes in 0..2^50");
    op->bytes = (uint64_t)n->comm_size;
    if (n->type == NODE_COLL && n->has_comm_type) {
        if (n->comm_type < 0 || n->comm_type >= (int64_t)G_N_ELEMENTS(kinds) || kinds[n->comm_type] < 0)
            return node_fail(c, n, TRACE_ERROR_VALUE, err, "comm_type: expected a CollectiveCommType, 0..9");
        op->kind = TOP_COLL;
        op->coll = (coll_kind)kinds[n->comm_type];
        op->group = c->group;
    } else if (n->type == NODE_SEND || n->type == NODE_RECV) {
        gboolean send = n->type == NODE_SEND;
        if (send ? !n->has_dst : !n->has_src)
            return node_fail(c, n, TRACE_ERROR_SCHEMA, err, send ? "send without comm_dst" : "recv without comm_src");
        int64_t peer = send ? n->comm_dst : n->comm_src;
        if (peer < 0 || peer >= CHAKRA_MAX_RANKS)
            return node_fail(c, n, TRACE_ERROR_VALUE, err, send ? "comm_dst: expected a rank in 0..2^20" : "comm_src: expected a rank in 0..2^20");
        op->kind = send ? TOP_SEND : TOP_RECV;
        op->peer = (int)peer;
        op->tag = n->comm_tag;
    }
    return TRUE;
}

static int node_index(cctx *c, uint64_t id)
{
    return GPOINTER_TO_INT(g_hash_table_lookup(c->by_id, &id)) - 1;
}

static void dep_add(cctx *c, GArray *into, uint32_t at, int d)
{
    if (c->opidx[d] >= 0) {
        uint32_t v = (uint32_t)c->opidx[d];
        if (into)
            g_array_append_val(into, v);
        else
            trace_op_dep(c->t, c->r, at, v);
        return;
    }
    for (guint k = 0; c->eff[d] && k < c->eff[d]->len; k++) {
        uint32_t v = g_array_index(c->eff[d], uint32_t, k);
        if (into)
            g_array_append_val(into, v);
        else
            trace_op_dep(c->t, c->r, at, v);
    }
}

/* Adds node v (all its dependencies already emitted). */
static gboolean emit_node(cctx *c, int v, GError **err)
{
    const cnode *n = &g_array_index(c->nodes, cnode, v);
    if (n->type < 0 || n->type > NODE_COLL)
        return node_fail(c, n, TRACE_ERROR_VALUE, err, "unknown node type");
    c->opidx[v] = -1;
    if (n->type < NODE_COMP) {
        c->eff[v] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        for (guint k = 0; k < n->deps->len; k++) {
            int d = node_index(c, g_array_index(n->deps, uint64_t, k));
            if (d >= 0)
                dep_add(c, c->eff[v], 0, d);
        }
        return TRUE;
    }
    trace_op op;
    if (!node_to_op(c, n, &op, err))
        return FALSE;
    int64_t key = (int64_t)((uint64_t)n->tid << 1 | (n->is_cpu ? 1u : 0u)); /* (tid * 2 overflowed: UB) */
    int s = GPOINTER_TO_INT(g_hash_table_lookup(c->streams, &key)) - 1;
    if (s < 0) {
        s = (int)g_hash_table_size(c->streams);
        g_hash_table_insert(c->streams, g_memdup2(&key, sizeof key), GINT_TO_POINTER(s + 1));
    }
    op.stream = s;
    op.name = n->name ? n->name : "";
    uint32_t at = trace_op_add(c->t, c->r, &op);
    c->opidx[v] = (int)at;
    for (guint k = 0; k < n->deps->len + n->ctrl->len; k++) {
        gboolean data = k < n->deps->len;
        int d = node_index(c, data ? g_array_index(n->deps, uint64_t, k) : g_array_index(n->ctrl, uint64_t, k - n->deps->len));
        if (d >= 0 && (data || c->state[d] == 2))
            dep_add(c, NULL, at, d);
    }
    return TRUE;
}

typedef struct {
    int node;
    guint pos; /* next dependency to visit */
} frame;

/* Depth-first over dependencies from each node in file order: emits every
 * node after the nodes it depends on (file order when deps point back). */
static gboolean emit_nodes(cctx *c, GError **err)
{
    int nn = (int)c->nodes->len;
    guint8 *state = c->state = g_new0(guint8, nn);
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(frame));
    gboolean ok = TRUE;
    for (int i = 0; i < nn && ok; i++) {
        if (state[i])
            continue;
        frame top = {i, 0};
        g_array_append_val(stack, top);
        state[i] = 1;
        while (stack->len && ok) {
            frame *f = &g_array_index(stack, frame, stack->len - 1);
            const cnode *n = &g_array_index(c->nodes, cnode, f->node);
            if (f->pos < n->deps->len) {
                uint64_t id = g_array_index(n->deps, uint64_t, f->pos++);
                int d = node_index(c, id);
                if (d < 0) { /* a dangling data dependency used to be dropped silently */
                    g_autofree char *what =
                        g_strdup_printf("data dependency on node id %" G_GUINT64_FORMAT ", which the file does not have", id);
                    ok = node_fail(c, n, TRACE_ERROR_REF, err, what);
                } else if (state[d] == 1)
                    ok = node_fail(c, n, TRACE_ERROR_CYCLE, err, "dependencies form a cycle through this node");
                else if (d >= 0 && !state[d]) {
                    frame nt = {d, 0};
                    state[d] = 1;
                    g_array_append_val(stack, nt);
                }
            } else {
                int v = f->node;
                ok = emit_node(c, v, err);
                state[v] = 2;
                g_array_set_size(stack, stack->len - 1);
            }
        }
    }
    g_array_free(stack, TRUE);
    g_free(state);
    c->state = NULL;
    return ok;
}

/* All loaded ranks, named by the first pg_name seen (the .et files carry
 * no member lists). */
static int world_group(trace *t, GArray *nodes)
{
    const char *name = NULL;
    for (guint i = 0; !name && i < nodes->len; i++)
        name = g_array_index(nodes, cnode, i).pg_name;
    int *rk = g_new(int, t->nranks);
    for (int i = 0; i < t->nranks; i++)
        rk[i] = i;
    int g = trace_group_add(t, name, rk, t->nranks);
    g_free(rk);
    return g;
}

static gboolean load_rank(trace *t, int r, const char *path, GError **err)
{
    gsize len;
    char *text = tracefile_read(path, &len, err);
    if (!text)
        return FALSE;
    GArray *nodes = g_array_new(FALSE, FALSE, sizeof(cnode));
    gsize sp = 0;
    while (sp < len && g_ascii_isspace(text[sp]))
        sp++;
    gboolean ok = sp < len && text[sp] == '{' ? json_read(path, text, len, nodes, err)
                                              : pb_read(path, (const guint8 *)text, len, nodes, err);
    if (ok && nodes->len == 0) { /* an empty file used to load as an empty rank */
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_SCHEMA, "%s: byte %" G_GSIZE_FORMAT ": no nodes in the file", path, len);
        ok = FALSE;
    }
    cctx c = {.t = t, .r = r, .path = path, .nodes = nodes};
    c.by_id = g_hash_table_new(sim_int64_hash, g_int64_equal);
    c.streams = g_hash_table_new_full(sim_int64_hash, g_int64_equal, g_free, NULL);
    c.opidx = g_new(int, nodes->len + 1);
    c.eff = g_new0(GArray *, nodes->len + 1);
    for (guint i = 0; ok && i < nodes->len; i++) {
        cnode *n = &g_array_index(nodes, cnode, i);
        if (g_hash_table_contains(c.by_id, &n->id))
            ok = node_fail(&c, n, TRACE_ERROR_VALUE, err, "duplicate node id");
        g_hash_table_insert(c.by_id, &n->id, GINT_TO_POINTER((int)i + 1));
    }
    if (ok) {
        c.group = world_group(t, nodes);
        ok = emit_nodes(&c, err);
    }
    for (guint i = 0; i < nodes->len; i++) {
        cnode_clear(&g_array_index(nodes, cnode, i));
        if (c.eff[i])
            g_array_free(c.eff[i], TRUE);
    }
    g_array_free(nodes, TRUE);
    g_hash_table_destroy(c.by_id);
    g_hash_table_destroy(c.streams);
    g_free(c.opidx);
    g_free(c.eff);
    g_free(text);
    return ok;
}

/* A directory's `<prefix>.0.et` (or .et.gz) as DIR/<prefix>, newly allocated; NULL if none. */
static char *dir_prefix(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *n, *best = NULL;
    char *p = NULL;
    while (d && (n = g_dir_read_name(d))) /* (the least name: the same prefix whatever the listing order) */
        if ((g_str_has_suffix(n, ".0.et") || g_str_has_suffix(n, ".0.et.gz")) && (!best || strcmp(n, best) < 0)) {
            g_free(p);
            p = g_strdup(n);
            best = p;
        }
    if (!p)
        return NULL;
    p[strlen(p) - strlen(g_str_has_suffix(p, ".gz") ? ".0.et.gz" : ".0.et")] = 0;
    char *full = g_build_filename(dir, p, NULL);
    g_free(p);
    return full;
}

trace *trace_chakra_load(const char *path_or_prefix, GError **err)
{
    /* a directory of per-rank files (chakra_converter's output): its <prefix>.<r>.et (it used to
     * look for DIR.0.et beside the directory, so no multi-rank trace could be replayed) */
    g_autofree char *inner = g_file_test(path_or_prefix, G_FILE_TEST_IS_DIR) ? dir_prefix(path_or_prefix) : NULL;
    if (inner)
        path_or_prefix = inner;
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    static const char *ext[] = {".et", ".et.gz", ".json", ".json.gz"};
    gboolean single = g_file_test(path_or_prefix, G_FILE_TEST_IS_REGULAR);
    if (single)
        g_ptr_array_add(files, g_strdup(path_or_prefix));
    for (int r = 0; !single; r++) {
        char *found = NULL;
        for (size_t e = 0; !found && e < G_N_ELEMENTS(ext); e++) {
            char *f = g_strdup_printf("%s.%d%s", path_or_prefix, r, ext[e]);
            if (g_file_test(f, G_FILE_TEST_IS_REGULAR))
                found = f;
            else
                g_free(f);
        }
        if (!found)
            break;
        g_ptr_array_add(files, found);
    }
    if (!files->len) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_IO, "%s: no such file, and no %s.0.et (or .et.gz, .json, .json.gz)",
                    path_or_prefix, path_or_prefix);
        g_ptr_array_unref(files);
        return NULL;
    }
    trace *t = trace_new((int)files->len, path_or_prefix);
    gboolean ok = TRUE;
    for (guint r = 0; r < files->len && ok; r++)
        ok = load_rank(t, (int)r, g_ptr_array_index(files, r), err);
    g_ptr_array_unref(files);
    /* groups, matching collectives and sends/receives across the files, and the collectives'
     * sequence numbers (a rank of a larger job is validated after --ranks replicates it) */
    ok = ok && (!trace_check_whole(t, NULL) || trace_validate(t, err));
    if (!ok) {
        trace_free(t);
        return NULL;
    }
    return t;
}

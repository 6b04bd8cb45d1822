#include <stdarg.h>
/* traces/trace.c - the per-rank operation lists, their groups, validation
 * (dependencies, collective agreement, send/recv matching) and SPMD
 * replication of one rank's trace. */
#include "trace.h"
#include "sim/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(conveyor-trace-error-quark, trace_error)

static const char *const op_names[TOP_KINDS] = {"compute", "collective", "send", "recv"};

const char *trace_op_kind_name(trace_op_kind k)
{
    g_assert(k >= 0 && k < TOP_KINDS);
    return op_names[k];
}

static void group_free(gpointer p)
{
    trace_group *g = p;
    g_free(g->name);
    g_free(g->ranks);
    g_free(g);
}

/* w scaled to mean 1 (all 1 when they sum to 0) */
static GArray *mean_one(const double *w, int n)
{
    g_assert(n >= 1);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += w[i];
    GArray *a = g_array_sized_new(FALSE, FALSE, sizeof(double), (guint)n);
    for (int i = 0; i < n; i++) {
        double v = sum > 0 ? w[i] * n / sum : 1;
        g_array_append_val(a, v);
    }
    return a;
}

/* A list's bytes as the index's key (borrowed: the list outlives the index's entry). */
static GBytes *a2a_key(const GArray *a)
{
    return g_bytes_new_static(a->data, a->len * sizeof(double));
}

/* The index of t's lists by content (key -> k), built on first use: a trace read from per-rank
 * files adds one list per uneven alltoall, thousands of them (a scan of all per list was 38% of a
 * 20,000-alltoall Kineto replay). */
static GHashTable *a2a_index(trace *t)
{
    if (!t->a2a_index) {
        t->a2a_index = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
        for (guint k = 0; k < t->a2a_weights->len; k++) {
            GBytes *key = a2a_key(g_ptr_array_index(t->a2a_weights, k));
            if (g_hash_table_contains(t->a2a_index, key))
                g_bytes_unref(key); /* an equal earlier list keeps its k */
            else
                g_hash_table_insert(t->a2a_index, key, GINT_TO_POINTER((int)k + 1));
        }
    }
    return t->a2a_index;
}

int trace_a2a_weights_append(trace *t, const double *w, int n)
{
    g_ptr_array_add(t->a2a_weights, mean_one(w, n));
    g_clear_pointer(&t->a2a_index, g_hash_table_destroy); /* rebuilt when next asked */
    return (int)t->a2a_weights->len;
}

int trace_a2a_weights_add(trace *t, const double *w, int n)
{
    GArray *a = mean_one(w, n);
    GHashTable *idx = a2a_index(t);
    GBytes *key = a2a_key(a);
    int k = GPOINTER_TO_INT(g_hash_table_lookup(idx, key));
    if (k) {
        g_bytes_unref(key);
        g_array_unref(a);
        return k;
    }
    g_ptr_array_add(t->a2a_weights, a);
    g_hash_table_insert(idx, key, GINT_TO_POINTER((int)t->a2a_weights->len));
    return (int)t->a2a_weights->len;
}

const double *trace_a2a_weights(const trace *t, int root, int *n)
{
    int k = root < 0 ? -root : root;
    if (k == 0 || k > (int)t->a2a_weights->len) {
        *n = 0;
        return NULL;
    }
    GArray *a = g_ptr_array_index(t->a2a_weights, k - 1);
    *n = (int)a->len;
    return (const double *)a->data;
}

trace *trace_new(int nranks, const char *source)
{
    g_assert(nranks >= 1);
    trace *t = g_new0(trace, 1);
    t->nranks = nranks;
    t->ranks = g_new0(trace_rank, nranks);
    for (int r = 0; r < nranks; r++)
        t->ranks[r].ops = g_array_new(FALSE, TRUE, sizeof(trace_op));
    t->groups = g_ptr_array_new_with_free_func(group_free);
    t->a2a_weights = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    t->source = g_strdup(source ? source : "");
    t->step_ps = -1;
    return t;
}

void trace_free(trace *t)
{
    if (!t)
        return;
    for (int r = 0; r < t->nranks; r++) {
        GArray *ops = t->ranks[r].ops;
        for (guint i = 0; i < ops->len; i++) {
            trace_op *o = &g_array_index(ops, trace_op, i);
            if (o->deps)
                g_array_free(o->deps, TRUE);
        }
        g_array_free(ops, TRUE);
    }
    g_free(t->ranks);
    g_ptr_array_unref(t->groups);
    if (t->a2a_index)
        g_hash_table_destroy(t->a2a_index);
    g_ptr_array_unref(t->a2a_weights);
    g_free(t->source);
    g_free(t);
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int trace_group_add(trace *t, const char *name, const int *ranks, int n)
{
    g_assert(n >= 1);
    int *s = g_memdup2(ranks, (gsize)n * sizeof(int));
    qsort(s, (size_t)n, sizeof(int), int_cmp);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || s[m - 1] != s[i])
            s[m++] = s[i];
    for (guint i = 0; i < t->groups->len; i++) {
        trace_group *g = g_ptr_array_index(t->groups, i);
        /* two named groups of the same ranks are two communicators (PyTorch process groups,
         * NCCL comms), each numbering its own collectives: kept apart */
        if (g->size == m && !memcmp(g->ranks, s, (size_t)m * sizeof(int)) && (!name || !strcmp(g->name, name))) {
            g_free(s);
            return (int)i;
        }
    }
    trace_group *g = g_new0(trace_group, 1);
    g->ranks = s;
    g->size = m;
    g->name = name ? g_strdup(name) : g_strdup_printf("g%u", t->groups->len);
    g_ptr_array_add(t->groups, g);
    return (int)t->groups->len - 1;
}

int trace_group_world(trace *t)
{
    int *all = g_new(int, t->nranks);
    for (int r = 0; r < t->nranks; r++)
        all[r] = r;
    int g = trace_group_add(t, "world", all, t->nranks);
    g_free(all);
    return g;
}

uint32_t trace_op_add(trace *t, int r, const trace_op *op)
{
    g_assert(r >= 0 && r < t->nranks);
    trace_op o = *op;
    o.name = op->name ? g_intern_string(op->name) : NULL;
    g_array_append_val(t->ranks[r].ops, o);
    return t->ranks[r].ops->len - 1;
}

void trace_op_dep(trace *t, int r, uint32_t after, uint32_t before)
{
    trace_op *o = &g_array_index(t->ranks[r].ops, trace_op, after);
    if (!o->deps)
        o->deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_array_append_val(o->deps, before);
}

size_t trace_op_count(const trace *t)
{
    size_t n = 0;
    for (int r = 0; r < t->nranks; r++)
        n += t->ranks[r].ops->len;
    return n;
}

#define OP(t, r, i) (&g_array_index((t)->ranks[r].ops, trace_op, (i)))

/* Per rank: deps exist, and stream order + deps form no cycle (Kahn). */
static gboolean check_rank_graph(const trace *t, int r, GError **err)
{
    GArray *ops = t->ranks[r].ops;
    guint n = ops->len;
    guint *indeg = g_new0(guint, n + 1);
    GPtrArray *succ = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (guint i = 0; i < n; i++)
        g_ptr_array_add(succ, g_array_new(FALSE, FALSE, sizeof(guint)));
    GHashTable *last_on = g_hash_table_new(g_direct_hash, g_direct_equal);
    gboolean ok = TRUE;
    for (guint i = 0; i < n && ok; i++) {
        trace_op *o = OP(t, r, i);
        gpointer prev;
        if (g_hash_table_lookup_extended(last_on, GINT_TO_POINTER(o->stream), NULL, &prev)) {
            guint p = GPOINTER_TO_UINT(prev);
            g_array_append_val(g_ptr_array_index(succ, p), i);
            indeg[i]++;
        }
        g_hash_table_insert(last_on, GINT_TO_POINTER(o->stream), GUINT_TO_POINTER(i));
        for (guint k = 0; o->deps && k < o->deps->len; k++) {
            guint d = g_array_index(o->deps, uint32_t, k);
            if (d >= n || d == i) {
                g_set_error(err, TRACE_ERROR, TRACE_ERROR_REF,
                            "%s: rank %d op %u (%s '%s'): depends on op %u, which %s", t->source, r, i,
                            trace_op_kind_name(o->kind), o->name ? o->name : "", d,
                            d == i ? "is itself" : "does not exist");
                ok = FALSE;
                break;
            }
            g_array_append_val(g_ptr_array_index(succ, d), i);
            indeg[i]++;
        }
    }
    if (ok) {
        GArray *q = g_array_new(FALSE, FALSE, sizeof(guint));
        for (guint i = 0; i < n; i++)
            if (!indeg[i])
                g_array_append_val(q, i);
        guint seen = 0;
        for (guint h = 0; h < q->len; h++, seen++) {
            GArray *s = g_ptr_array_index(succ, g_array_index(q, guint, h));
            for (guint k = 0; k < s->len; k++) {
                guint v = g_array_index(s, guint, k);
                if (--indeg[v] == 0)
                    g_array_append_val(q, v);
            }
        }
        if (seen < n) {
            guint first = 0;
            while (first < n && !indeg[first])
                first++;
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_CYCLE,
                        "%s: rank %d: dependencies form a cycle (op %u '%s' is on it or waits for it; with "
                        "stream order, %u of %u ops can never start)",
                        t->source, r, first, OP(t, r, first)->name ? OP(t, r, first)->name : "", n - seen, n);
            ok = FALSE;
        }
        g_array_free(q, TRUE);
    }
    g_hash_table_destroy(last_on);
    g_ptr_array_unref(succ);
    g_free(indeg);
    return ok;
}

int trace_group_pos(const trace_group *g, int r)
{
    const int *at = bsearch(&r, g->ranks, (size_t)g->size, sizeof(int), int_cmp);
    return at ? (int)(at - g->ranks) : -1;
}

static bool in_group(const trace_group *g, int r)
{
    return trace_group_pos(g, r) >= 0;
}

static char *group_desc(const trace_group *g)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "group '%s' [", g->name);
    for (int i = 0; i < g->size && i < 16; i++)
        g_string_append_printf(s, "%s%d", i ? "," : "", g->ranks[i]);
    g_string_append(s, g->size > 16 ? ",...]" : "]");
    return g_string_free(s, FALSE);
}

/* trace.h */
void trace_number_collectives(trace *t)
{
    for (int r = 0; r < t->nranks; r++) {
        int64_t *next = g_new0(int64_t, t->groups->len + 1);
        for (guint i = 0; i < t->ranks[r].ops->len; i++) {
            trace_op *o = OP(t, r, i);
            if (o->kind != TOP_COLL || o->group < 0 || (guint)o->group >= t->groups->len)
                continue;
            if (o->seq < 0)
                o->seq = next[o->group];
            if (o->seq + 1 > next[o->group])
                next[o->group] = o->seq + 1;
        }
        g_free(next);
    }
}

typedef struct {
    int rank;        /* first rank seen */
    guint index;     /* its op index */
    int last_rank;
    int count;
} coll_seen;

static gboolean check_one_coll(trace *t, GHashTable *seen, int r, guint i, GError **err)
{
    trace_op *o = OP(t, r, i);
    if (o->group < 0 || (guint)o->group >= t->groups->len) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_REF, "%s: rank %d op %u (%s %s): unknown group %d",
                    t->source, r, i, trace_op_kind_name(o->kind), coll_kind_name(o->coll), o->group);
        return FALSE;
    }
    trace_group *g = g_ptr_array_index(t->groups, o->group);
    if (!in_group(g, r)) {
        g_autofree char *gd = group_desc(g);
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_REF, "%s: rank %d op %u (%s): rank %d is not in %s", t->source,
                    r, i, coll_kind_name(o->coll), r, gd);
        return FALSE;
    }
    if (coll_default_root(o->coll) >= 0 && (o->root < 0 || o->root >= g->size)) {
        g_autofree char *gd = group_desc(g);
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE,
                    "%s: rank %d op %u (%s): root %d is not a rank of %s (its ranks are numbered 0..%d)", t->source,
                    r, i, coll_kind_name(o->coll), o->root, gd, g->size - 1);
        return FALSE;
    }
    if (o->coll == COLL_ALLTOALL && o->root) {
        int n;
        const double *w = trace_a2a_weights(t, o->root, &n);
        if (!w || (n != g->size && n != g->size * g->size)) {
            g_autofree char *gd = group_desc(g);
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_REF,
                        "%s: rank %d op %u (alltoall): root %d names %s of the %u alltoall weight lists, for %s of %d "
                        "ranks (a list of n or n x n)", t->source, r, i, o->root, w ? "a list of another length" : "none",
                        t->a2a_weights->len, gd, g->size);
            return FALSE;
        }
    }
    if (o->seq >= TRACE_MAX_SEQ) { /* (trace_coll_key keeps 40 bits: collectives collided) */
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE,
                    "%s: rank %d op %u (%s): sequence number %" G_GINT64_FORMAT " is 2^40 or more", t->source, r, i,
                    coll_kind_name(o->coll), o->seq);
        return FALSE;
    }
    gint64 key = trace_coll_key(o->group, o->seq);
    coll_seen *s = g_hash_table_lookup(seen, &key);
    if (!s) {
        s = g_new0(coll_seen, 1);
        *s = (coll_seen){.rank = r, .index = i, .last_rank = r, .count = 1};
        g_hash_table_insert(seen, g_memdup2(&key, sizeof key), s);
        return TRUE;
    }
    trace_op *f = OP(t, s->rank, s->index);
    if (s->last_rank == r) {
        g_autofree char *gd = group_desc(g); /* described only on the error paths: this runs per call */
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_MISMATCH,
                    "%s: rank %d calls collective #%" G_GINT64_FORMAT " of %s twice (ops %u and %u)", t->source, r,
                    o->seq, gd, s->index, i);
        return FALSE;
    }
    if (f->coll != o->coll || f->bytes != o->bytes || f->root != o->root) {
        g_autofree char *gd = group_desc(g);
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_MISMATCH,
                    "%s: ranks disagree on collective #%" G_GINT64_FORMAT " of %s: rank %d op %u is %s of %" G_GUINT64_FORMAT
                    " bytes (root %d), rank %d op %u is %s of %" G_GUINT64_FORMAT " bytes (root %d)",
                    t->source, o->seq, gd, s->rank, s->index, coll_kind_name(f->coll), f->bytes, f->root, r, i,
                    coll_kind_name(o->coll), o->bytes, o->root);
        return FALSE;
    }
    s->last_rank = r;
    s->count++;
    return TRUE;
}

static gboolean check_colls(trace *t, GError **err)
{
    GHashTable *seen = g_hash_table_new_full(sim_int64_hash, g_int64_equal, g_free, g_free);
    gboolean ok = TRUE;
    for (int r = 0; r < t->nranks && ok; r++)
        for (guint i = 0; i < t->ranks[r].ops->len && ok; i++)
            if (OP(t, r, i)->kind == TOP_COLL)
                ok = check_one_coll(t, seen, r, i, err);
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, seen);
    while (ok && g_hash_table_iter_next(&it, &k, &v)) {
        coll_seen *s = v;
        trace_op *f = OP(t, s->rank, s->index);
        trace_group *g = g_ptr_array_index(t->groups, f->group);
        if (s->count == g->size)
            continue;
        /* find a member that never calls it */
        int missing = -1;
        for (int m = 0; m < g->size && missing < 0; m++) {
            int rr = g->ranks[m];
            bool has = false;
            for (guint i = 0; rr < t->nranks && i < t->ranks[rr].ops->len && !has; i++) {
                trace_op *o = OP(t, rr, i);
                has = o->kind == TOP_COLL && o->group == f->group && o->seq == f->seq;
            }
            if (!has)
                missing = rr;
        }
        g_autofree char *gd = group_desc(g);
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_UNMATCHED,
                    "%s: rank %d never calls %s #%" G_GINT64_FORMAT " of %s, which rank %d calls at op %u "
                    "(%d of %d members call it): the job would hang",
                    t->source, missing, coll_kind_name(f->coll), f->seq, gd, s->rank, s->index, s->count, g->size);
        ok = FALSE;
    }
    g_hash_table_destroy(seen);
    return ok;
}

/* The k-th send of (src, dst, tag) matches the k-th receive at dst: the
 * sends of one (src, dst, tag) in order, a receive taking the one at head. */
typedef struct {
    int src, dst;
    int64_t tag;
    GArray *ops; /* guint op indices on src */
    guint head;
} p2p_queue;

static guint p2p_hash(gconstpointer k)
{
    const p2p_queue *q = k;
    guint64 v = (guint64)(guint32)q->src << 32 | (guint32)q->dst;
    return sim_int64_hash(&v) ^ sim_int64_hash(&q->tag);
}

static gboolean p2p_equal(gconstpointer a, gconstpointer b)
{
    const p2p_queue *x = a, *y = b;
    return x->src == y->src && x->dst == y->dst && x->tag == y->tag;
}

static void p2p_queue_free(gpointer p)
{
    p2p_queue *q = p;
    g_array_unref(q->ops);
    g_free(q);
}

static gboolean check_p2p(trace *t, GError **err)
{
    GHashTable *sends = g_hash_table_new_full(p2p_hash, p2p_equal, p2p_queue_free, NULL);
    gboolean ok = TRUE;
    for (int pass = 0; pass < 2 && ok; pass++) {
        for (int r = 0; r < t->nranks && ok; r++) {
            for (guint i = 0; i < t->ranks[r].ops->len && ok; i++) {
                trace_op *o = OP(t, r, i);
                trace_op_kind want = pass == 0 ? TOP_SEND : TOP_RECV;
                if (o->kind != want)
                    continue;
                if (o->peer < 0 || o->peer >= t->nranks || o->peer == r) {
                    g_set_error(err, TRACE_ERROR, TRACE_ERROR_REF, "%s: rank %d op %u (%s): bad peer %d (%d ranks)",
                                t->source, r, i, trace_op_kind_name(o->kind), o->peer, t->nranks);
                    ok = FALSE;
                    break;
                }
                int src = pass == 0 ? r : o->peer, dst = pass == 0 ? o->peer : r;
                p2p_queue key = {.src = src, .dst = dst, .tag = o->tag};
                p2p_queue *q = g_hash_table_lookup(sends, &key);
                if (pass == 0) {
                    if (!q) {
                        q = g_new(p2p_queue, 1);
                        *q = key;
                        q->ops = g_array_new(FALSE, FALSE, sizeof(guint));
                        g_hash_table_add(sends, q);
                    }
                    g_array_append_val(q->ops, i);
                } else if (!q || q->head == q->ops->len) {
                    g_set_error(err, TRACE_ERROR, TRACE_ERROR_UNMATCHED,
                                "%s: rank %d op %u receives %" G_GUINT64_FORMAT " bytes from rank %d (tag %" G_GINT64_FORMAT
                                ") but rank %d sends it nothing more: the job would hang",
                                t->source, r, i, o->bytes, src, o->tag, src);
                    ok = FALSE;
                } else {
                    guint si = g_array_index(q->ops, guint, q->head++);
                    if (OP(t, src, si)->copy != o->copy) {
                        g_set_error(err, TRACE_ERROR, TRACE_ERROR_MISMATCH,
                                    "%s: rank %d op %u sends to rank %d %s but its receive (op %u) is %s", t->source,
                                    src, si, dst, OP(t, src, si)->copy ? "as a copy" : "through NCCL", i,
                                    o->copy ? "a copy" : "NCCL's");
                        ok = FALSE;
                    } else if (OP(t, src, si)->bytes != o->bytes) {
                        g_set_error(err, TRACE_ERROR, TRACE_ERROR_MISMATCH,
                                    "%s: rank %d op %u sends %" G_GUINT64_FORMAT " bytes to rank %d but its receive (op %u) "
                                    "expects %" G_GUINT64_FORMAT,
                                    t->source, src, si, OP(t, src, si)->bytes, dst, i, o->bytes);
                        ok = FALSE;
                    }
                }
            }
        }
    }
    GHashTableIter it;
    gpointer k;
    g_hash_table_iter_init(&it, sends);
    while (ok && g_hash_table_iter_next(&it, &k, NULL)) {
        p2p_queue *q = k;
        if (q->head == q->ops->len)
            continue;
        guint si = g_array_index(q->ops, guint, q->head);
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_UNMATCHED,
                    "%s: rank %d op %u sends to rank %d, which never receives it: the job would hang", t->source,
                    q->src, si, q->dst);
        ok = FALSE;
    }
    g_hash_table_destroy(sends);
    return ok;
}

gboolean trace_check_whole(const trace *t, GError **err)
{
    for (guint i = 0; i < t->groups->len; i++) {
        const trace_group *g = g_ptr_array_index(t->groups, i);
        for (int k = 0; k < g->size; k++)
            if (g->ranks[k] < 0 || g->ranks[k] >= t->nranks) {
                g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE,
                            "%s: group '%s' names rank %d, but the trace has %d rank%s (a rank of a larger job: "
                            "replicate it with --ranks %d)",
                            t->source, g->name, g->ranks[k], t->nranks, t->nranks == 1 ? "" : "s",
                            MAX(g->size, g->ranks[k] + 1));
                return FALSE;
            }
    }
    for (int r = 0; r < t->nranks; r++) /* the same for a send/receive's peer */
        for (guint i = 0; i < t->ranks[r].ops->len; i++) {
            const trace_op *o = OP(t, r, i);
            if ((o->kind == TOP_SEND || o->kind == TOP_RECV) && (o->peer < 0 || o->peer >= t->nranks)) {
                g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE,
                            "%s: rank %d op %u: a %s with rank %d, but the trace has %d rank%s (a rank of a larger "
                            "job: replicate it with --ranks)",
                            t->source, r, i, trace_op_kind_name(o->kind), o->peer, t->nranks,
                            t->nranks == 1 ? "" : "s");
                return FALSE;
            }
        }
    return TRUE;
}

G_STATIC_ASSERT(sizeof(trace_op) == 104); /* millions per generated step: keep it packed */

/* A fused collective (launched in the kernel of the one before it) must
 * follow a collective of its own group on its stream. */
static gboolean check_fused(trace *t, int r, GError **err)
{
    GHashTable *last = NULL; /* stream -> op index + 1 */
    gboolean ok = TRUE;
    for (guint i = 0; i < t->ranks[r].ops->len && ok; i++) {
        const trace_op *o = OP(t, r, i);
        if (o->fused && !last) { /* built at the first fused op: most traces have none */
            last = g_hash_table_new(g_direct_hash, g_direct_equal);
            for (guint j = 0; j < i; j++)
                g_hash_table_replace(last, GINT_TO_POINTER(OP(t, r, j)->stream), GUINT_TO_POINTER(j + 1));
        }
        if (o->fused) {
            guint prev = GPOINTER_TO_UINT(g_hash_table_lookup(last, GINT_TO_POINTER(o->stream)));
            const trace_op *p = prev ? OP(t, r, prev - 1) : NULL;
            if (o->kind != TOP_COLL || !p || p->kind != TOP_COLL || p->group != o->group) {
                g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE,
                            "%s: rank %d op %u (%s) is fused (launched with the collective before it) but %s",
                            t->source, r, i, o->kind == TOP_COLL ? coll_kind_name(o->coll) : trace_op_kind_name(o->kind),
                            o->kind != TOP_COLL ? "only collectives can be"
                            : !p ? "it is the first op on its stream"
                            : p->kind != TOP_COLL ? "the op before it on its stream is not a collective"
                                                  : "the collective before it on its stream is of another group");
                ok = FALSE;
            }
        }
        if (last)
            g_hash_table_replace(last, GINT_TO_POINTER(o->stream), GUINT_TO_POINTER(i + 1));
    }
    if (last)
        g_hash_table_destroy(last);
    return ok;
}

gboolean trace_validate(trace *t, GError **err)
{
    for (int r = 0; r < t->nranks; r++)
        if (!check_rank_graph(t, r, err) || !check_fused(t, r, err))
            return FALSE;
    trace_number_collectives(t);
    return check_colls(t, err) && check_p2p(t, err);
}

/* The group of new rank r that plays the role rank-0 group g plays: all
 * ranks for the world; consecutive blocks for a group of consecutive ranks
 * (tensor parallel); ranks with the same residue for a strided group (data
 * parallel), which grows with n. */
static int map_group(const trace *t, trace *nt, const trace_group *g, int r, int n, GError **err)
{
    int stride = g->size > 1 ? g->ranks[1] - g->ranks[0] : 1;
    for (int i = 2; i < g->size; i++)
        if (g->ranks[i] - g->ranks[i - 1] != stride) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE,
                        "%s: group '%s' is neither consecutive nor evenly strided; cannot replicate it", t->source,
                        g->name);
            return -1;
        }
    int *m = g_new(int, n), k = 0;
    if (g->size == t->nranks) {
        for (int i = 0; i < n; i++)
            m[k++] = i;
    } else if (stride == 1) {
        if (n % g->size) {
            g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE, "%s: group '%s' of %d ranks does not divide %d ranks",
                        t->source, g->name, g->size, n);
            g_free(m);
            return -1;
        }
        for (int i = r / g->size * g->size; i < (r / g->size + 1) * g->size; i++)
            m[k++] = i;
    } else {
        for (int i = r % stride; i < n; i += stride)
            m[k++] = i;
    }
    char *name = g->size == t->nranks ? g_strdup(g->name) : g_strdup_printf("%s.%d", g->name, m[0]);
    int id = trace_group_add(nt, name, m, k);
    g_free(name);
    g_free(m);
    return id;
}

trace *trace_replicate(const trace *t, int n, GError **err)
{
    g_assert(n >= 1);
    trace *nt = trace_new(n, t->source);
    for (guint k = 0; k < t->a2a_weights->len; k++)
        g_ptr_array_add(nt->a2a_weights, g_array_copy(g_ptr_array_index(t->a2a_weights, k)));
    nt->step_ps = t->step_ps;
    nt->steps = t->steps;
    GArray *src = t->ranks[0].ops;
    for (int r = 0; r < n; r++) {
        for (guint i = 0; i < src->len; i++) {
            trace_op o = g_array_index(src, trace_op, i);
            o.deps = o.deps ? g_array_copy(o.deps) : NULL;
            if (o.kind == TOP_COLL) {
                o.group = map_group(t, nt, g_ptr_array_index(t->groups, o.group), r, n, err);
                if (o.group < 0) {
                    if (o.deps)
                        g_array_free(o.deps, TRUE);
                    trace_free(nt);
                    return NULL;
                }
            } else if (o.kind == TOP_SEND || o.kind == TOP_RECV) {
                o.peer = r + o.peer; /* rank 0's peer p is offset p */
                if (o.peer >= n) {
                    g_set_error(err, TRACE_ERROR, TRACE_ERROR_VALUE,
                                "%s: op %u: rank %d's peer would be rank %d of %d", t->source, i, r, o.peer, n);
                    if (o.deps)
                        g_array_free(o.deps, TRUE);
                    trace_free(nt);
                    return NULL;
                }
            }
            trace_op_add(nt, r, &o);
        }
    }
    return nt;
}

gboolean trace_fail(GError **err, int code, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *m = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, TRACE_ERROR, code, "%s: %s", where, m);
    g_free(m);
    return FALSE;
}

/* traces/a2a_split.c - uneven alltoalls from per-rank traces: each
 * collective's matrix from its members' rows (a2a_split.h).
 */
#include "traces/a2a_split.h"
#include "sim/hash.h"

#include <math.h>

GHashTable *a2a_rows_new(void)
{
    return g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, a2a_row_free);
}

void a2a_row_free(gpointer p)
{
    a2a_row *r = p;
    g_free(r->in);
    g_free(r->out);
    g_free(r);
}

/* Whether one member's split alone is uneven: unequal totals, or a list with unequal entries. */
static int a2a_row_uneven(const a2a_row *r)
{
    if (r->in_b != r->out_b)
        return 1;
    if (r->known != A2A_LISTS) /* the totals alone: even as far as they tell */
        return 0;
    for (int dir = 0; dir < 2; dir++) {
        const double *l = dir ? r->out : r->in;
        for (int j = 1; l && j < r->n; j++)
            if (l[j] != l[0])
                return 1;
    }
    return 0;
}

/* One alltoall across its members (a2a_settle). */
typedef struct {
    int n, seen, group;
    int64_t seq;
    double *m;           /* n x n bytes, [i n + j] from member i to member j (NULL over A2A_MAX_MATRIX) */
    double *recv;        /* n x n, [j n + i]: what j says it receives from i */
    double *in_b, *out_b; /* each member's totals */
    a2a_known known;     /* the least known of its members' rows */
    gboolean lists_uneven; /* a member's own lists unequal (kept where m is not) */
    const a2a_row **row; /* each member's (NULL: an op without collective args) */
    GArray *at;          /* its members' ops: (rank, index) pairs of ints */
} a2a_coll;

static void a2a_coll_free(gpointer p)
{
    a2a_coll *c = p;
    g_free(c->m);
    g_free(c->recv);
    g_free(c->in_b);
    g_free(c->out_b);
    g_free(c->row);
    g_array_free(c->at, TRUE);
    g_free(c);
}

/* "file: event N" of a member's row, or NULL */
static char *a2a_where(const a2a_row *r)
{
    return r ? g_strdup_printf(r->what[0] == '$' ? "%s: %s[%d]" : "%s: %s %d", r->path, r->what, r->ev) : NULL;
}

static gboolean a2a_differ(double x, double y)
{
    return fabs(x - y) > 0.5 + 1e-9 * fmax(fabs(x), fabs(y));
}

/* One alltoall's members' rows (a2a_split) into its matrix; FALSE with *err where they disagree. */
static gboolean a2a_settle_one(trace *t, const trace_group *g, int64_t seq, a2a_coll *c, a2a_notes *kn,
                               GError **err)
{
    int n = c->n;
    double sin = 0, sout = 0;
    for (int i = 0; i < n; i++) {
        sin += c->in_b[i];
        sout += c->out_b[i];
    }
    if (a2a_differ(sin, sout)) {
        g_autofree char *at = a2a_where(c->row[0]);
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_MISMATCH, "%s (alltoall #%" G_GINT64_FORMAT " of the group of "
                    "ranks %d..%d): its members send %.0f bytes in all and receive %.0f (In/Out msg nelems)",
                    at ? at : t->source, seq, g->ranks[0], g->ranks[n - 1], sin, sout);
        return FALSE;
    }
    for (int i = 0; c->m && i < n && c->known == A2A_LISTS; i++)
        for (int j = 0; j < n; j++)
            if (a2a_differ(c->m[i * n + j], c->recv[j * n + i])) {
                g_autofree char *si = a2a_where(c->row[i]), *rj = a2a_where(c->row[j]);
                g_set_error(err, TRACE_ERROR, TRACE_ERROR_MISMATCH, "%s (alltoall #%" G_GINT64_FORMAT "): rank %d "
                            "sends %.0f bytes to rank %d, but %s says rank %d receives %.0f from it (In/Out split "
                            "size)", si ? si : t->source, seq, g->ranks[i], c->m[i * n + j], g->ranks[j],
                            rj ? rj : "its op", g->ranks[j], c->recv[j * n + i]);
                return FALSE;
            }
    if (c->m && c->known != A2A_LISTS) { /* each member's totals only: i sends to j in proportion to what j receives */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                c->m[i * n + j] = sout > 0 ? c->in_b[i] * c->out_b[j] / sout : 0;
    }
    gboolean uneven = !c->m && c->lists_uneven; /* (no matrix: the lists and totals tell) */
    for (int i = 1; !c->m && i < n && !uneven; i++)
        uneven = c->in_b[i] != c->in_b[0] || c->out_b[i] != c->out_b[0];
    for (int e = 1; c->m && e < n * n && !uneven; e++)
        uneven = c->m[e] != c->m[0];
    if (!uneven)
        return TRUE;
    kn->cut += c->known == A2A_CUT;
    kn->totals += c->known == A2A_TOTALS;
    int root = 0;
    if (!c->m)
        kn->wide++;
    else
        root = trace_a2a_weights_add(t, c->m, n * n);
    uint64_t bytes = (uint64_t)llround(sin / n);
    for (guint k = 0; k < c->at->len; k += 2) {
        trace_op *o = &g_array_index(t->ranks[g_array_index(c->at, int, k)].ops, trace_op,
                                     g_array_index(c->at, int, k + 1));
        o->root = root;
        o->bytes = bytes;
    }
    return TRUE;
}

/* a2a_split.h. Each alltoall's members' rows by collective (group, seq), settled when its last
 * member's op is seen (ranks in order; a member missing: trace_validate says which). */
gboolean a2a_settle(trace *t, GHashTable **a2a, a2a_notes *kn, GError **err)
{
    trace_number_collectives(t);
    GHashTable *colls = g_hash_table_new_full(sim_int64_hash, g_int64_equal, g_free, a2a_coll_free);
    gboolean ok = TRUE;
    for (int r = 0; r < t->nranks; r++)
        for (guint i = 0; i < t->ranks[r].ops->len; i++) {
            trace_op *o = &g_array_index(t->ranks[r].ops, trace_op, i);
            if (o->kind != TOP_COLL || o->coll != COLL_ALLTOALL || o->group < 0 ||
                (guint)o->group >= t->groups->len || o->seq < 0 || o->seq >= TRACE_MAX_SEQ)
                continue; /* (trace_validate refuses the last three) */
            const trace_group *g = g_ptr_array_index(t->groups, o->group);
            int n = g->size, p = trace_group_pos(g, r);
            if (p < 0)
                continue;
            gint64 key = trace_coll_key(o->group, o->seq);
            a2a_coll *c = g_hash_table_lookup(colls, &key);
            if (!c) {
                c = g_new0(a2a_coll, 1);
                c->n = n;
                c->group = o->group;
                c->seq = o->seq;
                if (n <= A2A_MAX_MATRIX) {
                    c->m = g_new0(double, (gsize)n * n);
                    c->recv = g_new0(double, (gsize)n * n);
                }
                c->in_b = g_new0(double, n);
                c->out_b = g_new0(double, n);
                c->row = g_new0(const a2a_row *, n);
                c->at = g_array_new(FALSE, FALSE, sizeof(int));
                g_hash_table_insert(colls, g_memdup2(&key, sizeof key), c);
            }
            if (++c->seen > n)
                continue; /* a member calling it twice: trace_validate says so */
            const a2a_row *row = a2a[r] ? g_hash_table_lookup(a2a[r], GUINT_TO_POINTER(i)) : NULL;
            double ib = row ? row->in_b : (double)o->bytes, ob = row ? row->out_b : (double)o->bytes;
            c->in_b[p] = ib;
            c->out_b[p] = ob;
            if (row && row->known > c->known)
                c->known = row->known;
            c->row[p] = row;
            c->lists_uneven |= row && a2a_row_uneven(row);
            for (int j = 0; c->m && j < n; j++) { /* no list: an even split */
                c->m[(gsize)p * n + j] = row && row->in ? row->in[j] : ib / n;
                c->recv[(gsize)p * n + j] = row && row->out ? row->out[j] : ob / n;
            }
            int at[2] = {r, (int)i};
            g_array_append_vals(c->at, at, 2);
            if (c->seen == n) { /* all its members: settled, and its tables freed (a trace has thousands) */
                ok = a2a_settle_one(t, g, c->seq, c, kn, err);
                g_clear_pointer(&c->m, g_free);
                g_clear_pointer(&c->recv, g_free);
                g_clear_pointer(&c->in_b, g_free);
                g_clear_pointer(&c->out_b, g_free);
                g_clear_pointer(&c->row, g_free);
                g_array_set_size(c->at, 0);
                if (!ok)
                    goto done;
            }
        }
done:
    g_hash_table_destroy(colls);
    return ok;
}

int a2a_count_alone(GHashTable **rows, int n)
{
    int k = 0;
    for (int r = 0; r < n; r++) {
        if (!rows[r])
            continue;
        GHashTableIter it;
        gpointer v;
        g_hash_table_iter_init(&it, rows[r]);
        while (g_hash_table_iter_next(&it, NULL, &v))
            k += a2a_row_uneven(v);
    }
    return k;
}

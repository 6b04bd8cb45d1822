/* traces/workload_layout.c - Megatron-LM's --pipeline-model-parallel-layout
 * (workload.h, workload_layout_get): the string's grammar as Megatron-LM's
 * PipelineParallelLayerLayout.parse_str_to_list reads it (commas dropped,
 * "(...)*N" unrolled, then "X*N", then split at '|'), checked character by
 * character so that a bad layout is refused with its position; the parsed
 * layouts kept in a table for the process, each string parsed once.
 */
#include "traces/workload.h"

#include <string.h>

#define LAYOUT_MAX_ITEMS (1 << 22) /* items and separators after unrolling */
#define LAYOUT_MAX_COUNT 1000000   /* N of "*N" */

#define BAD(...) (g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, __VA_ARGS__), false)

static bool is_item(char c)
{
    return c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|';
}

/* The count of "*N" at s[i] (s[i] == '*'), its digits' end in *end. */
static bool repeat_count(const char *s, const int *pos, size_t i, size_t *end, long *count, GError **err)
{
    size_t j = i + 1;
    long v = 0;
    if (!g_ascii_isdigit(s[j]))
        return BAD("'*' at character %d needs a count after it (t*3, (tt|)*4)", pos[i]);
    for (; g_ascii_isdigit(s[j]); j++) {
        v = v * 10 + (s[j] - '0');
        if (v > LAYOUT_MAX_COUNT)
            return BAD("the count at character %d is above %d", pos[i + 1], LAYOUT_MAX_COUNT);
    }
    *end = j;
    *count = v;
    return true;
}

static bool append_n(GString *out, const char *p, size_t len, long n, const int *pos, size_t at, GError **err)
{
    if ((double)len * (double)n + (double)out->len > LAYOUT_MAX_ITEMS)
        return BAD("the layout unrolls to more than %d items (at character %d)", LAYOUT_MAX_ITEMS, pos[at]);
    for (long k = 0; k < n; k++)
        g_string_append_len(out, p, (gssize)len);
    return true;
}

/* Unroll s (commas dropped) into out: items and '|' only. pos[i]: s[i]'s
 * 1-based place in the string as given. */
static bool unroll(const char *s, const int *pos, GString *out, GError **err)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        char c = s[i];
        if (c == '(') {
            size_t close = i + 1;
            while (close < n && s[close] != ')' && s[close] != '(')
                close++;
            if (close == n)
                return BAD("'(' at character %d is not closed", pos[i]);
            if (s[close] == '(')
                return BAD("'(' at character %d inside another: parentheses do not nest (Megatron-LM's layout "
                           "unrolls one level)", pos[close]);
            if (close == i + 1)
                return BAD("empty '()' at character %d", pos[i]);
            if (s[close + 1] != '*')
                return BAD("'(...)' closed at character %d needs '*N' after it", pos[close]);
            g_autoptr(GString) inner = g_string_new(NULL);
            for (size_t k = i + 1; k < close;) { /* the text inside: items, their "X*N" */
                size_t end;
                long cnt;
                if (s[k] == '*')
                    return BAD("'*' at character %d repeats nothing", pos[k]);
                if (g_ascii_isdigit(s[k]))
                    return BAD("a number at character %d outside '*N'", pos[k]);
                if (s[k + 1] == '*') {
                    if (!repeat_count(s, pos, k + 1, &end, &cnt, err) ||
                        !append_n(inner, s + k, 1, cnt, pos, k, err))
                        return false;
                    k = end;
                } else {
                    g_string_append_c(inner, s[k]);
                    k++;
                }
            }
            size_t end;
            long cnt;
            if (!repeat_count(s, pos, close + 1, &end, &cnt, err) ||
                !append_n(out, inner->str, inner->len, cnt, pos, i, err))
                return false;
            i = end;
        } else if (c == ')') {
            return BAD("')' at character %d without its '('", pos[i]);
        } else if (c == '*') {
            return BAD("'*' at character %d repeats nothing", pos[i]);
        } else if (g_ascii_isdigit(c)) {
            return BAD("a number at character %d outside '*N'", pos[i]);
        } else if (s[i + 1] == '*') {
            size_t end;
            long cnt;
            if (!repeat_count(s, pos, i + 1, &end, &cnt, err) || !append_n(out, s + i, 1, cnt, pos, i, err))
                return false;
            i = end;
        } else {
            if (!append_n(out, s + i, 1, 1, pos, i, err))
                return false;
            i++;
        }
    }
    return true;
}

static workload_layout *parse(const char *given, GError **err)
{
    size_t n = strlen(given);
    if (n == 0) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, "the layout is empty");
        return NULL;
    }
    /* drop the commas, keeping each character's place */
    g_autofree char *s = g_new(char, n + 2);
    g_autofree int *pos = g_new(int, n + 2);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = given[i];
        if (c == ',')
            continue;
        if (!is_item(c) && c != '(' && c != ')' && c != '*' && !g_ascii_isdigit(c)) {
            g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE,
                        "unknown character '%c' at character %zu (a layout holds E, t, m, L, '|', ',', '(...)*N' and "
                        "'X*N')", g_ascii_isprint(c) ? c : '?', i + 1);
            return NULL;
        }
        pos[k] = (int)(i + 1);
        s[k++] = c;
    }
    s[k] = s[k + 1] = 0;
    pos[k] = pos[k + 1] = (int)n;
    g_autoptr(GString) u = g_string_new(NULL);
    if (!unroll(s, pos, u, err))
        return NULL;
    int stages = 1;
    for (size_t i = 0; i < u->len; i++)
        stages += u->str[i] == '|';
    workload_layout *L = g_new0(workload_layout, 1);
    int *dec = g_new0(int, stages), *first = g_new0(int, stages);
    L->n = stages;
    L->mtp_vs = -1;
    int vs = 0;
    for (size_t i = 0; i < u->len; i++) {
        switch (u->str[i]) {
        case '|':
            first[++vs] = L->ndec;
            break;
        case 't':
            dec[vs]++;
            L->ndec++;
            L->dec_after_mtp |= L->nmtp > 0;
            break;
        case 'm':
            L->mtp_vs = L->mtp_vs == -1 || L->mtp_vs == vs ? vs : -2;
            L->nmtp++;
            break;
        case 'E':
            L->nemb++;
            break;
        default: /* 'L' */
            L->nloss++;
            break;
        }
    }
    L->emb_opens = u->len > 0 && u->str[0] == 'E';
    L->loss_closes = u->len > 0 && u->str[u->len - 1] == 'L';
    L->dec = dec;
    L->first = first;
    return L;
}

G_LOCK_DEFINE_STATIC(layouts);
static GHashTable *layouts; /* interned string -> workload_layout, for the process */
static _Thread_local const char *last_key;
static _Thread_local const workload_layout *last_val;

const workload_layout *workload_layout_get(const char *s, GError **err)
{
    if (last_val && (s == last_key || !strcmp(s, last_key)))
        return last_val;
    const char *key = g_intern_string(s);
    G_LOCK(layouts);
    if (!layouts)
        layouts = g_hash_table_new(g_direct_hash, g_direct_equal);
    const workload_layout *L = g_hash_table_lookup(layouts, key);
    G_UNLOCK(layouts);
    if (!L) {
        workload_layout *p = parse(s, err);
        if (!p)
            return NULL;
        G_LOCK(layouts);
        const workload_layout *had = g_hash_table_lookup(layouts, key);
        if (had) { /* another thread parsed it meanwhile */
            g_free((int *)p->dec);
            g_free((int *)p->first);
            g_free(p);
            L = had;
        } else {
            g_hash_table_insert(layouts, (gpointer)key, p);
            L = p;
        }
        G_UNLOCK(layouts);
    }
    last_key = key;
    last_val = L;
    return L;
}

/* c n times as the grammar writes it: nothing, "c", or "c*n" */
static void run(GString *s, char c, int64_t n)
{
    if (n == 1)
        g_string_append_c(s, c);
    else if (n > 1)
        g_string_append_printf(s, "%c*%" G_GINT64_FORMAT, c, n);
}

char *workload_layout_split(int layers, int pp, int vpp, int mtp, bool emb, bool loss, GError **err)
{
    int64_t n = (int64_t)pp * vpp, all = (int64_t)layers + emb + loss;
    if (pp < 1 || vpp < 1 || layers < 1 || all % n) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_LAYOUT,
                    "--account-for-%s-in-pipeline-split: the %d layers%s%s (%" G_GINT64_FORMAT ") must split evenly "
                    "over pp x V = %d x %d virtual stages (Megatron-LM asserts)",
                    emb && loss ? "embedding/loss" : emb ? "embedding" : "loss", layers, emb ? " + the embedding" : "",
                    loss ? " + the loss" : "", all, pp, vpp);
        return NULL;
    }
    int64_t k = all / n, head = n == 1 ? layers : k - emb, tail = k - loss; /* the first, last stage's layers */
    GString *s = g_string_new("E");
    run(s, 't', head);
    if (n > 2) {
        g_string_append(s, "|(");
        run(s, 't', k);
        g_string_append_printf(s, "|)*%" G_GINT64_FORMAT, n - 2);
    } else if (n == 2) {
        g_string_append_c(s, '|');
    }
    if (n > 1)
        run(s, 't', tail);
    run(s, 'm', mtp);
    g_string_append_c(s, 'L');
    return g_string_free(s, FALSE);
}

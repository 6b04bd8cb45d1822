/* traces/sweep_spec.c - sweep spec files -> a validated grid of points.
 *
 * The JSON is read with the topology loader's position map (topo_src:
 * "$.a.b[2]" -> line:col), so every semantic error names the file, the
 * line:col of the offending value and its JSON path. Cost: one pass over
 * the text; points are built on demand from their index.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "topologies/topo_internal.h"
#include "traces/sweep_spec.h"

G_DEFINE_QUARK(sweep-error-quark, sweep_error)

#define MAX_AXIS_VALUES 100000
#define MAX_POINTS 10000000

typedef struct {
    const topo_src *src;
    GError **err;
} pctx;

static bool fail(pctx *c, int code, const char *path, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static bool fail(pctx *c, int code, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    GError *t = NULL;
    topo_src_error(c->src, &t, 0, path, "%s", msg);
    g_set_error(c->err, SWEEP_ERROR, code, "%s", t->message);
    g_error_free(t);
    g_free(msg);
    return false;
}

static bool in_list(const char *const *list, const char *s)
{
    for (; list && *list; list++)
        if (!strcmp(*list, s))
            return true;
    return false;
}

static int list_index(const char *const *list, const char *s)
{
    for (int i = 0; list && list[i]; i++)
        if (!strcmp(list[i], s))
            return i;
    return -1;
}

/* Numbers print as integers when integral, else shortest round-trip. */
static char *fmt_num(double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        return g_strdup_printf("%.0f", v);
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (int prec = 1; prec < 17; prec++) { /* (g_ascii_dtostr alone writes 0.1 as 0.10000000000000001) */
        char fmt[8];
        g_snprintf(fmt, sizeof fmt, "%%.%dg", prec);
        g_ascii_formatd(buf, sizeof buf, fmt, v);
        if (g_ascii_strtod(buf, NULL) == v)
            return g_strdup(buf);
    }
    return g_strdup(g_ascii_dtostr(buf, sizeof buf, v));
}

/* A scalar (string or finite number) as text; NULL with an error otherwise. */
static char *scalar(pctx *c, const cJSON *v, const char *path)
{
    if (cJSON_IsString(v)) {
        if (!*v->valuestring) {
            fail(c, SWEEP_ERROR_VALUE, path, "empty string");
            return NULL;
        }
        return g_strdup(v->valuestring);
    }
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
        return fmt_num(v->valuedouble);
    char *d = tj_describe(v);
    fail(c, SWEEP_ERROR_SCHEMA, path, "expected a string or a number, got %s", d);
    g_free(d);
    return NULL;
}

static bool check_keys(pctx *c, const cJSON *v, const char *path, const char *const *allowed)
{
    if (!cJSON_IsObject(v)) {
        char *d = tj_describe(v);
        fail(c, SWEEP_ERROR_SCHEMA, path, "expected an object, got %s", d);
        g_free(d);
        return false;
    }
    for (const cJSON *k = v->child; k; k = k->next) {
        if (!in_list(allowed, k->string)) {
            g_autofree char *p = tj_path_key(path, k->string);
            g_autofree char *list = g_strjoinv(", ", (char **)allowed);
            return fail(c, SWEEP_ERROR_SCHEMA, p, "unknown key (expected one of: %s)", list);
        }
        for (const cJSON *j = v->child; j != k; j = j->next)
            if (!strcmp(j->string, k->string)) { /* cJSON keeps both; the first was read */
                g_autofree char *p = tj_path_key(path, k->string);
                return fail(c, SWEEP_ERROR_SCHEMA, p, "key given twice");
            }
    }
    return true;
}

static const sweep_base *find_base(pctx *c, const sweep_catalog *cat, const cJSON *b)
{
    if (!cJSON_IsString(b)) {
        char *d = tj_describe(b);
        fail(c, SWEEP_ERROR_SCHEMA, "$.base", "expected a string naming the base command, got %s", d);
        g_free(d);
        return NULL;
    }
    GString *names = g_string_new(NULL);
    for (size_t i = 0; i < cat->nbases; i++) {
        if (!strcmp(cat->bases[i]->name, b->valuestring)) {
            g_string_free(names, TRUE);
            return cat->bases[i];
        }
        g_string_append_printf(names, "%s%s", i ? ", " : "", cat->bases[i]->name);
    }
    if (in_list(cat->planned, b->valuestring))
        fail(c, SWEEP_ERROR_BASE, "$.base", "base command '%s' is not available yet in this build (available: %s)",
             b->valuestring, names->str);
    else
        fail(c, SWEEP_ERROR_BASE, "$.base", "unknown base command '%s' (available: %s)", b->valuestring, names->str);
    g_string_free(names, TRUE);
    return NULL;
}

/* "key=value" with a non-empty key; returns the key length or 0. */
static size_t set_key_len(const char *kv)
{
    const char *eq = strchr(kv, '=');
    return eq && eq > kv && eq[1] ? (size_t)(eq - kv) : 0;
}

static bool parse_sets(pctx *c, sweep_spec *s, const cJSON *v, const char *path)
{
    if (!cJSON_IsArray(v)) {
        char *d = tj_describe(v);
        fail(c, SWEEP_ERROR_SCHEMA, path, "expected an array of \"key=value\" strings, got %s", d);
        g_free(d);
        return false;
    }
    int i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        g_autofree char *p = tj_path_idx(path, i);
        if (!cJSON_IsString(e) || !set_key_len(e->valuestring))
            return fail(c, SWEEP_ERROR_SCHEMA, p, "expected a \"key=value\" string");
        g_ptr_array_add(s->arg_sets, g_strdup(e->valuestring));
    }
    return true;
}

static bool parse_args(pctx *c, sweep_spec *s, const cJSON *args)
{
    if (!args)
        return true;
    if (!check_keys(c, args, "$.args", s->base->params))
        return false;
    for (const cJSON *k = args->child; k; k = k->next) {
        g_autofree char *p = tj_path_key("$.args", k->string);
        if (!strcmp(k->string, "set")) {
            if (!parse_sets(c, s, k, p))
                return false;
            continue;
        }
        for (guint i = 0; i < s->arg_keys->len; i++)
            if (!strcmp(s->arg_keys->pdata[i], k->string))
                return fail(c, SWEEP_ERROR_VALUE, p, "given twice");
        char *val = scalar(c, k, p);
        if (!val)
            return false;
        g_ptr_array_add(s->arg_keys, g_strdup(k->string));
        g_ptr_array_add(s->arg_vals, val);
    }
    return true;
}

/* {"from": A, "to": B, "factor": F} or {..., "step": S}, inclusive. */
static bool parse_range(pctx *c, const cJSON *r, const char *path, GPtrArray *out)
{
    static const char *const keys[] = {"from", "to", "factor", "step", NULL};
    if (!check_keys(c, r, path, keys))
        return false;
    const char *names[] = {"from", "to", "factor", "step"};
    double v[4];
    bool has[4];
    for (int i = 0; i < 4; i++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, names[i]);
        g_autofree char *p = tj_path_key(path, names[i]);
        has[i] = m != NULL;
        if (m && !(cJSON_IsNumber(m) && isfinite(m->valuedouble))) {
            char *d = tj_describe(m);
            fail(c, SWEEP_ERROR_SCHEMA, p, "expected a number, got %s", d);
            g_free(d);
            return false;
        }
        v[i] = m ? m->valuedouble : 0;
    }
    if (!has[0] || !has[1])
        return fail(c, SWEEP_ERROR_SCHEMA, path, "a range needs \"from\" and \"to\"");
    if (has[2] == has[3])
        return fail(c, SWEEP_ERROR_SCHEMA, path, "a range needs exactly one of \"factor\" (> 1) or \"step\" (> 0)");
    if (v[0] > v[1])
        return fail(c, SWEEP_ERROR_VALUE, path, "empty range: from %g > to %g", v[0], v[1]);
    if (has[2] && !(v[2] > 1 && v[0] > 0))
        return fail(c, SWEEP_ERROR_VALUE, path, "a geometric range needs factor > 1 and from > 0");
    if (has[3] && !(v[3] > 0))
        return fail(c, SWEEP_ERROR_VALUE, path, "empty range: step must be > 0, got %g", v[3]);
    /* "to" counts when a point misses it by rounding only: 1e-9 of the
     * values, and never more than a thousandth of the gap between points
     * (1e9 to 1e9 + 2 by 1 stops at 1e9 + 2) */
    double gap = has[2] ? v[1] * (v[2] - 1) : v[3];
    double slack = fmin(1e-9 * fmax(fabs(v[0]), fabs(v[1])), 1e-3 * gap);
    for (int k = 0;; k++) {
        double x = has[2] ? v[0] * pow(v[2], k) : v[0] + k * v[3];
        if (x > v[1] + slack)
            break;
        if (out->len >= MAX_AXIS_VALUES)
            return fail(c, SWEEP_ERROR_VALUE, path, "more than %d values", MAX_AXIS_VALUES);
        char buf[G_ASCII_DTOSTR_BUF_SIZE]; /* a range's decimal values: 0 + 3 x 0.1 is 0.3, not 0.30000000000000004 */
        if (x != floor(x)) /* (whole numbers stay exact: 2^40 is not 1099511627780) */
            x = g_ascii_strtod(g_ascii_formatd(buf, sizeof buf, "%.12g", x), NULL);
        char *val = fmt_num(x);
        /* values only grow, so two that print alike are neighbours */
        if (out->len && !strcmp(out->pdata[out->len - 1], val)) {
            fail(c, SWEEP_ERROR_VALUE, path, "values %u and %u are both %s: the %s is too fine for values this "
                 "large (the points must be distinct)", out->len - 1, out->len, val, has[2] ? "factor" : "step");
            g_free(val);
            return false;
        }
        g_ptr_array_add(out, val);
    }
    return true;
}

static bool parse_axis_values(pctx *c, const cJSON *v, const char *path, GPtrArray *out)
{
    if (cJSON_IsObject(v))
        return parse_range(c, v, path, out);
    if (!cJSON_IsArray(v)) {
        char *d = tj_describe(v);
        fail(c, SWEEP_ERROR_SCHEMA, path, "expected a list of values or a range object, got %s", d);
        g_free(d);
        return false;
    }
    if (!v->child)
        return fail(c, SWEEP_ERROR_VALUE, path, "empty list: give at least one value");
    int i = 0;
    /* value -> index + 1: a pairwise check took minutes on a 200,000-value list */
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        g_autofree char *p = tj_path_idx(path, i);
        char *val = scalar(c, e, p);
        if (!val)
            return false;
        guint j = GPOINTER_TO_UINT(g_hash_table_lookup(seen, val));
        if (j) {
            g_free(val);
            return fail(c, SWEEP_ERROR_VALUE, p, "duplicate value (already at index %u)", j - 1);
        }
        g_ptr_array_add(out, val);
        g_hash_table_insert(seen, val, GUINT_TO_POINTER(out->len));
    }
    return true;
}

/* A varied name: a parameter of the base (not "set"), or "set.KEY". */
static bool check_axis_name(pctx *c, const sweep_spec *s, const char *name, const char *path)
{
    if (!strncmp(name, "set.", 4)) {
        if (!in_list(s->base->params, "set"))
            return fail(c, SWEEP_ERROR_PARAM, path, "base command '%s' takes no --set", s->base->name);
        if (!name[4])
            return fail(c, SWEEP_ERROR_PARAM, path, "\"set.\" needs a parameter name (e.g. set.nic.gbps)");
        size_t kl = strlen(name + 4);
        for (guint i = 0; i < s->arg_sets->len; i++) {
            const char *kv = s->arg_sets->pdata[i];
            if (set_key_len(kv) == kl && !strncmp(kv, name + 4, kl))
                return fail(c, SWEEP_ERROR_VALUE, path, "also fixed in $.args.set; give it in one place");
        }
    } else if (!strcmp(name, "set")) {
        return fail(c, SWEEP_ERROR_PARAM, path, "vary a topology parameter as \"set.KEY\" (e.g. \"set.nic.gbps\")");
    } else if (!in_list(s->base->params, name)) {
        g_autofree char *list = g_strjoinv(", ", (char **)s->base->params);
        return fail(c, SWEEP_ERROR_PARAM, path, "unknown parameter of '%s' (accepted: %s, set.KEY)",
                    s->base->name, list);
    } else {
        for (guint i = 0; i < s->arg_keys->len; i++)
            if (!strcmp(s->arg_keys->pdata[i], name))
                return fail(c, SWEEP_ERROR_VALUE, path, "also fixed in $.args; give it in one place");
    }
    for (guint i = 0; i < s->axis_names->len; i++)
        if (!strcmp(s->axis_names->pdata[i], name))
            return fail(c, SWEEP_ERROR_VALUE, path, "varied twice");
    return true;
}

static bool parse_vary(pctx *c, sweep_spec *s, const cJSON *vary)
{
    s->npoints = 1;
    if (!vary)
        return true;
    if (!cJSON_IsObject(vary)) {
        char *d = tj_describe(vary);
        fail(c, SWEEP_ERROR_SCHEMA, "$.vary", "expected an object, got %s", d);
        g_free(d);
        return false;
    }
    for (const cJSON *k = vary->child; k; k = k->next) {
        g_autofree char *p = tj_path_key("$.vary", k->string);
        if (!check_axis_name(c, s, k->string, p))
            return false;
        GPtrArray *vals = g_ptr_array_new_with_free_func(g_free);
        g_ptr_array_add(s->axis_names, g_strdup(k->string));
        g_ptr_array_add(s->axis_values, vals);
        if (!parse_axis_values(c, k, p, vals))
            return false;
        if (s->npoints > MAX_POINTS / vals->len)
            return fail(c, SWEEP_ERROR_VALUE, p, "the grid has more than %d points", MAX_POINTS);
        s->npoints *= vals->len;
    }
    return true;
}

static bool parse_figures(pctx *c, sweep_spec *s, const cJSON *f)
{
    if (!f) {
        for (int i = 0; s->base->figures[i]; i++)
            g_array_append_val(s->fig, i);
        return true;
    }
    if (!cJSON_IsArray(f) || !f->child) {
        char *d = tj_describe(f);
        fail(c, SWEEP_ERROR_SCHEMA, "$.figures", "expected a non-empty list of figure names, got %s", d);
        g_free(d);
        return false;
    }
    int i = 0;
    for (const cJSON *e = f->child; e; e = e->next, i++) {
        g_autofree char *p = tj_path_idx("$.figures", i);
        if (!cJSON_IsString(e))
            return fail(c, SWEEP_ERROR_SCHEMA, p, "expected a figure name (string)");
        int k = list_index(s->base->figures, e->valuestring);
        if (k < 0) {
            g_autofree char *list = g_strjoinv(", ", (char **)s->base->figures);
            return fail(c, SWEEP_ERROR_PARAM, p, "unknown figure '%s' of '%s' (known: %s)", e->valuestring,
                        s->base->name, list);
        }
        for (guint j = 0; j < s->fig->len; j++)
            if (g_array_index(s->fig, int, j) == k)
                return fail(c, SWEEP_ERROR_VALUE, p, "figure '%s' listed twice", e->valuestring);
        g_array_append_val(s->fig, k);
    }
    return true;
}

static int nfigures(const sweep_base *b)
{
    int n = 0;
    while (b->figures[n])
        n++;
    return n;
}

const char *sweep_column_name(const sweep_base *b, int fig)
{
    int n = nfigures(b);
    return fig < n ? b->figures[fig] : b->bands[fig - n];
}

/* The band columns of the figures listed (sweep_base.bands), after them. */
static void add_bands(sweep_spec *s)
{
    const sweep_base *b = s->base;
    int n = nfigures(b);
    guint listed = s->fig->len;
    bool any = false;
    for (int k = 0; b->bands && b->bands[k]; k++) {
        bool in = false;
        for (guint j = 0; j < listed && !in; j++)
            in = b->band_of[k] >= 0 && g_array_index(s->fig, int, j) == b->band_of[k];
        if (b->band_of[k] < 0)
            in = any;
        if (in) {
            int idx = n + k;
            g_array_append_val(s->fig, idx);
            any = true;
        }
    }
}

sweep_spec *sweep_spec_load(const char *path, const sweep_catalog *cat, GError **err)
{
    topo_src src;
    cJSON *root = NULL;
    GError *terr = NULL;
    if (!topo_src_load(&src, path, &root, &terr)) {
        g_set_error(err, SWEEP_ERROR, terr->code == TOPO_ERROR_IO ? SWEEP_ERROR_IO : SWEEP_ERROR_PARSE, "%s",
                    terr->message);
        g_error_free(terr);
        topo_src_clear(&src);
        return NULL;
    }
    pctx c = {.src = &src, .err = err};
    sweep_spec *s = g_new0(sweep_spec, 1);
    s->file = g_strdup(path);
    s->arg_keys = g_ptr_array_new_with_free_func(g_free);
    s->arg_vals = g_ptr_array_new_with_free_func(g_free);
    s->arg_sets = g_ptr_array_new_with_free_func(g_free);
    s->axis_names = g_ptr_array_new_with_free_func(g_free);
    s->axis_values = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
    s->fig = g_array_new(FALSE, FALSE, sizeof(int));
    static const char *const top[] = {"base", "description", "args", "vary", "figures", NULL};
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
    bool ok = check_keys(&c, root, "$", top);
    if (ok && desc && !cJSON_IsString(desc))
        ok = fail(&c, SWEEP_ERROR_SCHEMA, "$.description", "expected a string");
    if (ok && !cJSON_GetObjectItemCaseSensitive(root, "base"))
        ok = fail(&c, SWEEP_ERROR_SCHEMA, "$", "missing \"base\" (the command to sweep, e.g. \"collective\")");
    if (ok)
        ok = (s->base = find_base(&c, cat, cJSON_GetObjectItemCaseSensitive(root, "base"))) != NULL;
    ok = ok && parse_args(&c, s, cJSON_GetObjectItemCaseSensitive(root, "args"));
    ok = ok && parse_vary(&c, s, cJSON_GetObjectItemCaseSensitive(root, "vary"));
    ok = ok && parse_figures(&c, s, cJSON_GetObjectItemCaseSensitive(root, "figures"));
    if (ok)
        add_bands(s);
    cJSON_Delete(root);
    topo_src_clear(&src);
    if (!ok) {
        sweep_spec_free(s);
        return NULL;
    }
    return s;
}

void sweep_spec_free(sweep_spec *s)
{
    if (!s)
        return;
    g_free(s->file);
    g_ptr_array_unref(s->arg_keys);
    g_ptr_array_unref(s->arg_vals);
    g_ptr_array_unref(s->arg_sets);
    g_ptr_array_unref(s->axis_names);
    g_ptr_array_unref(s->axis_values);
    g_array_free(s->fig, TRUE);
    g_free(s);
}

const char *sweep_spec_axis_value(const sweep_spec *s, size_t index, size_t axis)
{
    g_assert(index < s->npoints && axis < s->axis_names->len);
    for (size_t a = s->axis_names->len; a-- > axis + 1;)
        index /= ((GPtrArray *)s->axis_values->pdata[a])->len;
    GPtrArray *vals = s->axis_values->pdata[axis];
    return vals->pdata[index % vals->len];
}

sweep_point *sweep_spec_point(const sweep_spec *s, size_t index)
{
    g_assert(index < s->npoints);
    sweep_point *p = g_new0(sweep_point, 1);
    GPtrArray *keys = g_ptr_array_new(), *vals = g_ptr_array_new(), *sets = g_ptr_array_new();
    for (guint i = 0; i < s->arg_keys->len; i++) {
        g_ptr_array_add(keys, g_strdup(s->arg_keys->pdata[i]));
        g_ptr_array_add(vals, g_strdup(s->arg_vals->pdata[i]));
    }
    for (guint i = 0; i < s->arg_sets->len; i++)
        g_ptr_array_add(sets, g_strdup(s->arg_sets->pdata[i]));
    for (guint a = 0; a < s->axis_names->len; a++) {
        const char *name = s->axis_names->pdata[a], *v = sweep_spec_axis_value(s, index, a);
        if (!strncmp(name, "set.", 4)) {
            g_ptr_array_add(sets, g_strdup_printf("%s=%s", name + 4, v));
        } else {
            g_ptr_array_add(keys, g_strdup(name));
            g_ptr_array_add(vals, g_strdup(v));
        }
    }
    p->index = index;
    p->n = keys->len;
    g_ptr_array_add(sets, NULL);
    p->keys = (char **)g_ptr_array_free(keys, FALSE);
    p->vals = (char **)g_ptr_array_free(vals, FALSE);
    p->sets = (char **)g_ptr_array_free(sets, FALSE);
    return p;
}

const char *sweep_point_get(const sweep_point *p, const char *key)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->keys[i], key))
            return p->vals[i];
    return NULL;
}

void sweep_point_free(sweep_point *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        g_free(p->keys[i]);
        g_free(p->vals[i]);
    }
    g_free(p->keys);
    g_free(p->vals);
    g_strfreev(p->sets);
    g_free(p);
}

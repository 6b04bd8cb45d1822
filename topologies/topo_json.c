/* topologies/topo_json.c - JSON source positions and typed getters.
 *
 * cJSON keeps no positions, so after a successful parse the text is walked
 * once more by a minimal tokenizer that tracks the JSON path ("$.a.b[2]")
 * and records the offset of every value. Errors then name the value's
 * line:col. Cost: one pass over the text, one hash entry per value.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "topologies/topo_internal.h"
#include "traces/tracefile.h"

G_DEFINE_QUARK(topo-error-quark, topo_error)

/* ---- position map ---------------------------------------------------- */

typedef struct {
    const char *t;
    size_t i, n;
    GHashTable *pos;
} scan;

/* Whitespace as cJSON skips it: every byte 1..32, not only " \t\r\n".
 * (Fuzzing found that a control byte such as 0x0f, which cJSON accepts,
 * desynchronised this scanner and sent it into an endless loop.) */
static bool is_ws(char c)
{
    return c != '\0' && (unsigned char)c <= 32;
}

static void skip_ws(scan *s)
{
    while (s->i < s->n && is_ws(s->t[s->i]))
        s->i++;
}

/* Skip a string starting at '"'; returns its raw contents (escapes kept). */
static char *scan_string(scan *s)
{
    size_t start = ++s->i;
    while (s->i < s->n && s->t[s->i] != '"')
        s->i += s->t[s->i] == '\\' ? 2 : 1;
    char *r = g_strndup(s->t + start, (s->i < s->n ? s->i : s->n) - start);
    s->i++;
    return r;
}

static void scan_value(scan *s, const char *path, int depth)
{
    skip_ws(s);
    if (s->i >= s->n || depth > 256)
        return;
    if (!g_hash_table_contains(s->pos, path))
        g_hash_table_insert(s->pos, g_strdup(path), GSIZE_TO_POINTER(s->i + 1));
    char c = s->t[s->i];
    if (c == '"') {
        g_free(scan_string(s));
    } else if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        s->i++;
        for (int k = 0;; k++) {
            skip_ws(s);
            if (s->i >= s->n || s->t[s->i] == close) {
                s->i++;
                return;
            }
            char *sub;
            if (c == '{') {
                char *key = scan_string(s);
                skip_ws(s);
                s->i++; /* ':' */
                sub = tj_path_key(path, key);
                g_free(key);
            } else {
                sub = tj_path_idx(path, k);
            }
            scan_value(s, sub, depth + 1);
            g_free(sub);
            skip_ws(s);
            if (s->i < s->n && s->t[s->i] == ',')
                s->i++;
        }
    } else {
        size_t start = s->i;
        while (s->i < s->n && !is_ws(s->t[s->i]) && !strchr(",]}", s->t[s->i]))
            s->i++;
        if (s->i == start) /* a stray ',', ']' or '}': always move on, never loop */
            s->i++;
    }
}

static void offset_lc(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

bool topo_src_load(topo_src *s, const char *path, cJSON **root, GError **err)
{
    memset(s, 0, sizeof *s);
    s->file = g_strdup(path);
    gsize len = 0;
    GError *e = NULL;
    if (!g_file_get_contents(path, &s->text, &len, &e)) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_IO, "%s: %s", path, e->message);
        g_error_free(e);
        return false;
    }
    tracefile_blank_bom(s->text, len);
    s->pos = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    const char *end = NULL;
    *root = cJSON_ParseWithOpts(s->text, &end, true);
    if (!*root || strlen(s->text) != len) {
        int line, col;
        size_t off = end ? (size_t)(end - s->text) : 0;
        if (*root) /* an embedded NUL */
            off = strlen(s->text);
        offset_lc(s->text, off, &line, &col);
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_PARSE, "%s:%d:%d: invalid JSON %s", path, line,
                    col, off >= len ? "(truncated: unexpected end of file)" : "syntax");
        cJSON_Delete(*root);
        *root = NULL;
        return false;
    }
    scan sc = {.t = s->text, .n = len, .pos = s->pos};
    scan_value(&sc, "$", 0);
    return true;
}

void topo_src_clear(topo_src *s)
{
    g_free(s->file);
    g_free(s->text);
    if (s->pos)
        g_hash_table_destroy(s->pos);
    memset(s, 0, sizeof *s);
}

void topo_src_error(const topo_src *s, GError **err, int code, const char *path, const char *fmt,
                    ...)
{
    size_t off = 0;
    char *p = g_strdup(path);
    while (s->pos) { /* nearest recorded ancestor */
        gpointer v = g_hash_table_lookup(s->pos, p);
        char *cut = strrchr(p, '.'), *br = strrchr(p, '[');
        if (v) {
            off = GPOINTER_TO_SIZE(v) - 1;
            break;
        }
        if (br > cut)
            cut = br;
        if (!cut)
            break;
        *cut = 0;
    }
    g_free(p);
    int line = 1, col = 1;
    if (s->text)
        offset_lc(s->text, off, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, TOPO_ERROR, code, "%s:%d:%d: %s: %s", s->file, line, col, path, msg);
    g_free(msg);
}

/* ---- getters --------------------------------------------------------- */

char *tj_path_key(const char *path, const char *key) { return g_strdup_printf("%s.%s", path, key); }
char *tj_path_idx(const char *path, int i) { return g_strdup_printf("%s[%d]", path, i); }

char *tj_describe(const cJSON *v)
{
    if (!v)
        return g_strdup("nothing");
    if (cJSON_IsString(v))
        return g_strdup_printf("string \"%.40s\"", v->valuestring);
    if (cJSON_IsNumber(v))
        return g_strdup_printf("number %g", v->valuedouble);
    if (cJSON_IsBool(v))
        return g_strdup(cJSON_IsTrue(v) ? "true" : "false");
    if (cJSON_IsNull(v))
        return g_strdup("null");
    return g_strdup(cJSON_IsArray(v) ? "an array" : "an object");
}

bool tj_object(tj_ctx *c, const cJSON *v, const char *path, const char *const *allowed)
{
    if (!cJSON_IsObject(v)) {
        char *d = tj_describe(v);
        topo_src_error(c->src, c->err, TOPO_ERROR_SCHEMA, path, "expected an object, got %s", d);
        g_free(d);
        return false;
    }
    for (const cJSON *k = v->child; k; k = k->next) {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = !strcmp(*a, k->string);
        if (!ok) {
            char *p = tj_path_key(path, k->string);
            char *list = g_strjoinv(", ", (char **)allowed);
            topo_src_error(c->src, c->err, TOPO_ERROR_SCHEMA, p, "unknown key (expected one of: %s)",
                           list);
            g_free(list);
            g_free(p);
            return false;
        }
        for (const cJSON *j = v->child; j != k; j = j->next)
            if (!strcmp(j->string, k->string)) { /* cJSON keeps both; the first was read, the second ignored */
                char *p = tj_path_key(path, k->string);
                topo_src_error(c->src, c->err, TOPO_ERROR_SCHEMA, p, "key given twice");
                g_free(p);
                return false;
            }
    }
    return true;
}

/* Value of a number member, resolving "$param"; false + error otherwise. */
static bool num_value(tj_ctx *c, const cJSON *v, const char *p, double *out)
{
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return true;
    }
    if (cJSON_IsString(v) && v->valuestring[0] == '$') {
        const char *pv = c->params ? g_hash_table_lookup(c->params, v->valuestring + 1) : NULL;
        char *end = NULL;
        if (!pv) {
            topo_src_error(c->src, c->err, TOPO_ERROR_SCHEMA, p,
                           "parameter '%s' is not declared in $.params", v->valuestring + 1);
            return false;
        }
        errno = 0;
        *out = g_ascii_strtod(pv, &end);
        if (end == pv || *end || errno == ERANGE) {
            topo_src_error(c->src, c->err, TOPO_ERROR_VALUE, p,
                           "parameter '%s' = '%s' is not a number", v->valuestring + 1, pv);
            return false;
        }
        return true;
    }
    char *d = tj_describe(v);
    topo_src_error(c->src, c->err, TOPO_ERROR_SCHEMA, p,
                   "expected a number (or \"$param\"), got %s", d);
    g_free(d);
    return false;
}

bool tj_num(tj_ctx *c, const cJSON *obj, const char *path, const char *key, bool required,
            double dflt, double lo, bool lo_open, double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char *p = tj_path_key(path, key);
    bool ok = false;
    if (!v) {
        if (required)
            topo_src_error(c->src, c->err, TOPO_ERROR_SCHEMA, p, "required number is missing");
        else
            *out = dflt;
        ok = !required;
    } else if (num_value(c, v, p, out)) {
        double x = *out;
        if (!isfinite(x))
            topo_src_error(c->src, c->err, TOPO_ERROR_VALUE, p, "must be a finite number, got %g", x);
        else if (lo_open ? !(x > lo) : !(x >= lo))
            topo_src_error(c->src, c->err, TOPO_ERROR_VALUE, p, "must be %s %g, got %g",
                           lo_open ? ">" : ">=", lo, x);
        else if (x > hi)
            topo_src_error(c->src, c->err, TOPO_ERROR_VALUE, p, "must be <= %g, got %g", hi, x);
        else
            ok = true;
    }
    g_free(p);
    return ok;
}

bool tj_rate(tj_ctx *c, const cJSON *obj, const char *path, const char *key, bool required, double unit_GBps,
             double hi, double *out)
{
    if (!tj_num(c, obj, path, key, required, 0, -INFINITY, false, hi, out)) /* (the floor below, negatives too) */
        return false;
    double lo = TOPO_MIN_GBPS / unit_GBps;
    if ((!required && *out == 0) || *out >= lo)
        return true;
    char *p = tj_path_key(path, key);
    topo_src_error(c->src, c->err, TOPO_ERROR_VALUE, p, "must be >= %g (%s), got %g", lo,
                   unit_GBps == 1 ? "1 MB/s" : "1 MB/s in these units", *out);
    g_free(p);
    return false;
}

bool tj_int(tj_ctx *c, const cJSON *obj, const char *path, const char *key, bool required,
            int dflt, int lo, int hi, int *out)
{
    double x;
    if (!tj_num(c, obj, path, key, required, dflt, lo, false, hi, &x))
        return false;
    if (x != floor(x)) {
        char *p = tj_path_key(path, key);
        topo_src_error(c->src, c->err, TOPO_ERROR_VALUE, p, "must be an integer, got %g", x);
        g_free(p);
        return false;
    }
    *out = (int)x;
    return true;
}

bool tj_str(tj_ctx *c, const cJSON *obj, const char *path, const char *key, bool required,
            const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!v && !required)
        return true;
    if (cJSON_IsString(v) && v->valuestring[0]) {
        *out = v->valuestring;
        return true;
    }
    char *p = tj_path_key(path, key), *d = tj_describe(v);
    topo_src_error(c->src, c->err, TOPO_ERROR_SCHEMA, p, "expected a non-empty string, got %s", d);
    g_free(p);
    g_free(d);
    return false;
}

bool tj_bool(tj_ctx *c, const cJSON *obj, const char *path, const char *key, bool dflt, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = dflt;
    if (!v)
        return true;
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v);
        return true;
    }
    char *p = tj_path_key(path, key), *d = tj_describe(v);
    topo_src_error(c->src, c->err, TOPO_ERROR_SCHEMA, p, "expected true or false, got %s", d);
    g_free(p);
    g_free(d);
    return false;
}

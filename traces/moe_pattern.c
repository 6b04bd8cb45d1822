/* traces/moe_pattern.c - Megatron-LM's --moe-layer-freq (and
 * --window-attn-skip-freq) as a pattern (workload.h,
 * workload_moe_pattern_parse, workload_layer_pattern_parse): the Python list expression
 * Megatron-LM evaluates (megatron/training/arguments.py, moe_freq_type: a
 * list of 0 (dense) and 1 (MoE) per layer) - "[1,0]" lists, "+" joining
 * them, "*N" repeating what is before it, parentheses - read by recursive
 * descent, refused with the character's position where it breaks; the
 * result kept as an interned string of '0' and '1', one a layer.
 */
#include "traces/workload.h"

#include <stdlib.h>
#include <string.h>

#define BAD(...) (g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, __VA_ARGS__), false)

typedef struct {
    const char *flag, *zero, *one; /* the flag's name, what a 0 and a 1 are */
    const char *s, *p; /* the expression, the place read */
    GString *out;      /* the layers' kinds so far */
    GError **err;
} pat;

static bool expr(pat *P, int depth);

static int at(const pat *P)
{
    return (int)(P->p - P->s) + 1;
}

static void space(pat *P)
{
    while (*P->p == ' ')
        P->p++;
}

static bool fail(pat *P, const char *what)
{
    GError **err = P->err;
    if (!*P->p)
        return BAD("%s '%.60s%s': %s at its end", P->flag, P->s, strlen(P->s) > 60 ? "..." : "", what);
    return BAD("%s '%.60s%s': %s at character %d ('%c')", P->flag, P->s, strlen(P->s) > 60 ? "..." : "", what,
               at(P), *P->p);
}

/* "[k, k, ...]" or "( expr )" */
static bool atom(pat *P, int depth)
{
    space(P);
    if (*P->p == '(') {
        if (depth >= WL_MOE_PATTERN_DEPTH)
            return fail(P, "parentheses nested deeper than " G_STRINGIFY(WL_MOE_PATTERN_DEPTH));
        P->p++;
        if (!expr(P, depth + 1))
            return false;
        space(P);
        if (*P->p != ')')
            return fail(P, "expected ')'");
        P->p++;
        return true;
    }
    if (*P->p != '[')
        return fail(P, "expected '[' or '('");
    P->p++;
    for (;;) {
        space(P);
        if (*P->p != '0' && *P->p != '1') {
            char what[96];
            g_snprintf(what, sizeof what, "expected 0 (%s) or 1 (%s)", P->zero, P->one);
            return fail(P, what);
        }
        if (P->out->len >= WL_MAX_LAYERS)
            return fail(P, "more than " G_STRINGIFY(WL_MAX_LAYERS) " layers");
        g_string_append_c(P->out, *P->p++);
        space(P);
        if (*P->p == ']')
            return P->p++, true;
        if (*P->p != ',')
            return fail(P, "expected ',' or ']'");
        P->p++;
    }
}

/* atom, then "* N" any number of times */
static bool term(pat *P, int depth)
{
    gsize from = P->out->len;
    if (!atom(P, depth))
        return false;
    for (;;) {
        space(P);
        if (*P->p != '*')
            return true;
        P->p++;
        space(P);
        if (!g_ascii_isdigit(*P->p))
            return fail(P, "expected a count after '*'");
        const char *c = P->p;
        long n = 0;
        for (; g_ascii_isdigit(*P->p); P->p++)
            if ((n = n * 10 + (*P->p - '0')) > WL_MAX_LAYERS) {
                P->p = c;
                return fail(P, "a count above " G_STRINGIFY(WL_MAX_LAYERS));
            }
        gsize len = P->out->len - from;
        if ((double)from + (double)len * (double)n > WL_MAX_LAYERS) { /* the whole list bounded */
            P->p = c;
            return fail(P, "more than " G_STRINGIFY(WL_MAX_LAYERS) " layers");
        }
        if (n == 0)
            g_string_truncate(P->out, from);
        for (long r = 1; r < n; r++)
            g_string_append_len(P->out, P->out->str + from, (gssize)len);
    }
}

/* term, then "+ term" any number of times */
static bool expr(pat *P, int depth)
{
    if (!term(P, depth))
        return false;
    for (;;) {
        space(P);
        if (*P->p != '+')
            return true;
        P->p++;
        if (!term(P, depth))
            return false;
    }
}

const char *workload_layer_pattern_parse(const char *flag, const char *zero, const char *one, bool need_one,
                                         const char *s, GError **err)
{
    g_autoptr(GString) out = g_string_new(NULL);
    pat P = {.flag = flag, .zero = zero, .one = one, .s = s ? s : "", .p = s ? s : "", .out = out, .err = err};
    if (!expr(&P, 0))
        return NULL;
    space(&P);
    if (*P.p) {
        fail(&P, "unexpected text");
        return NULL;
    }
    if (need_one && !strchr(out->str, '1')) {
        g_set_error(err, WORKLOAD_ERROR, WORKLOAD_ERROR_VALUE, "%s '%.60s%s': no %s layer (a 1) in the pattern", flag,
                    P.s, strlen(P.s) > 60 ? "..." : "", one);
        return NULL;
    }
    return g_intern_string(out->str);
}

const char *workload_moe_pattern_parse(const char *s, GError **err)
{
    return workload_layer_pattern_parse("--moe-layer-freq", "dense", "MoE", true, s, err);
}

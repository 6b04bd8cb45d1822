/* cli/util.c - shared command-line helpers. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "traces/tracefile.h"

GArray *cli_coll_sizes(uint64_t lo, uint64_t hi, int factor, uint64_t step, GError **err)
{
    if (lo > hi || (factor < 2 && step == 0)) {
        g_set_error(err, g_quark_from_static_string("cli"), 1,
                    "bad sweep: need -b <= -e and a factor -f >= 2 or a step -i > 0");
        return NULL;
    }
    if (hi > CLI_MAX_COLL_BYTES) {
        g_set_error(err, g_quark_from_static_string("cli"), 1,
                    "largest size %" G_GUINT64_FORMAT " is above 1T (2^40 bytes, more than any GPU holds)", hi);
        return NULL;
    }
    GArray *a = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    for (uint64_t s = lo;;) {
        if (a->len == CLI_MAX_COLL_SIZES) {
            g_set_error(err, g_quark_from_static_string("cli"), 1,
                        "bad sweep: more than %d sizes from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT
                        " (a larger -i or -f)", CLI_MAX_COLL_SIZES, lo, hi);
            g_array_free(a, TRUE);
            return NULL;
        }
        g_array_append_val(a, s);
        /* the next size, or the end: s x factor or s + step past hi (checked before it could wrap) */
        if (factor >= 2 ? s > hi / (uint64_t)factor : step > hi - s)
            break;
        uint64_t next = factor >= 2 ? s * (uint64_t)factor : s + step;
        s = next <= s ? s + 1 : next; /* 0 x factor: on to 1 */
        if (s > hi)
            break;
    }
    return a;
}

gboolean cli_parse_bytes(const char *s, uint64_t *out, GError **err)
{
    char *end = NULL;
    errno = 0;
    if (!s || !*s || *s == '-' || *s == '+')
        goto bad;
    double v = g_ascii_strtod(s, &end);
    if (errno == ERANGE || end == s || !(v >= 0)) /* only ERANGE: g_ascii_strtod may leave EAGAIN from its one-time locale set-up in threads */
        goto bad;
    double mult = 1;
    switch (g_ascii_toupper(*end)) {
    case 'K': mult = 1024.0; end++; break;
    case 'M': mult = 1048576.0; end++; break;
    case 'G': mult = 1073741824.0; end++; break;
    case 'T': mult = 1099511627776.0; end++; break;
    case 'P': case 'E': case 'Z':
        g_set_error(err, g_quark_from_static_string("cli"), 1,
                    "size '%s' is absurd: the largest accepted size is 1024T (2^50 bytes)", s);
        return FALSE;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        goto bad;
    v *= mult;
    if (v > 1125899906842624.0) {
        g_set_error(err, g_quark_from_static_string("cli"), 1,
                    "size '%s' is absurd: the largest accepted size is 1024T (2^50 bytes)", s);
        return FALSE;
    }
    *out = (uint64_t)v;
    return TRUE;
bad:
    g_set_error(err, g_quark_from_static_string("cli"), 1,
                "bad size '%s': expected a non-negative number with an optional K, M, G or T suffix",
                s ? s : "");
    return FALSE;
}

gboolean cli_parse(GOptionContext *ctx, const char *name, int *argc, char ***argv)
{
    GError *err = NULL;
    if (g_option_context_parse(ctx, argc, argv, &err))
        return TRUE;
    fprintf(stderr, "conveyor %s: %s (see 'conveyor %s --help')\n", name, err->message, name);
    g_error_free(err);
    return FALSE;
}

int cli_fail(GError *err)
{
    fprintf(stderr, "conveyor: %s\n", err ? err->message : "unknown error");
    if (err)
        g_error_free(err);
    return EXIT_BADINPUT;
}

bool cli_same_name(const char *a, const char *b)
{
    for (;;) {
        while (*a && !g_ascii_isalnum(*a))
            a++;
        while (*b && !g_ascii_isalnum(*b))
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        if (g_ascii_tolower(*a++) != g_ascii_tolower(*b++))
            return false;
    }
}

double cli_no_neg_zero(double v, int decimals)
{
    return fabs(v) < 0.5 * pow(10, -decimals) ? 0.0 : v;
}

gboolean cli_int_arg(const char *opt, const char *value, gint64 lo, gint64 hi, int *out, GError **err)
{
    gint64 v;
    if (!value || !g_ascii_string_to_signed(value, 10, lo, hi, &v, NULL)) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: expected a whole number in %" G_GINT64_FORMAT
                    "..%" G_GINT64_FORMAT ", got '%s'", opt, lo, hi, value ? value : "");
        return FALSE;
    }
    *out = (int)v;
    return TRUE;
}

gboolean cli_dash_output(const char *cmd, const char *const *paths, size_t n)
{
    size_t dashes = 0;
    for (size_t i = 0; i < n; i++)
        dashes += tracefile_is_dash(paths[i]);
    if (dashes > 1) {
        fprintf(stderr, "conveyor %s: only one output can be '-' (standard output)\n", cmd);
        return FALSE;
    }
    if (dashes == 0)
        return TRUE;
    /* the output keeps the real stdout (a new descriptor); stdout itself
     * now writes to stderr, so the report and the output never mix */
    fflush(stdout);
    int fd = dup(STDOUT_FILENO);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        fprintf(stderr, "conveyor %s: standard output: %s\n", cmd, g_strerror(errno));
        if (f)
            fclose(f);
        else if (fd >= 0)
            close(fd);
        return FALSE;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines in order with stderr's */
    tracefile_set_dash(f);
    return TRUE;
}

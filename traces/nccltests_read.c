/* traces/nccltests_read.c - reader for nccl-tests logs.
 *
 * A pre-pass (NCCL line headers, runs), then one pass over the lines.  Comment lines ('#') give the collective
 * ("# Collective test starting: X_perf"), the device block, the header line
 * (which fixes the column layout) and the average bus bandwidth; `#!` lines
 * are conveyor's provenance headers (collective:, gpus:, command:).  Any
 * other line whose first token starts with a digit and holds no ':' is a
 * result row and must parse; NCCL INFO/WARN and other noise is skipped.
 * A launcher's prefix (Slurm "N: ", Open MPI "[job,rank]<stdout>:" with or
 * without a time stamp, "[N] ") is set aside first: rows and '#' lines are
 * rank 0's stdout; a row cut by NCCL's log lines is joined; a file of
 * several runs is read one run at a time (find_runs).  Layouts: 13 columns (2.x with
 * root), 12 (old, redop but no root, "error" column), 11 (old all_gather
 * etc., no redop).  Without a header the first row's width picks one.
 */
#include "traces/nccltests.h"
#include "traces/tracefile.h"
#include "sim/hash.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(nccltests-error-quark, nccltests_error)

#define MAX_TOK 32

typedef struct {
    const char *s; /* token start (in the line) */
    int len;
    int col;       /* 1-based column in the original line */
    int line;      /* its line (a row cut by NCCL's log spans several) */
} token;

/* What a launcher put before a line: Slurm's srun --label "N: ", Open MPI's
 * --tag-output "[job,rank]<stdout>:" (with --timestamp-output, ctime's
 * "Thu May  7 10:39:20 2020" before it, or before a bare "<stdout>:"), or a
 * "[N] " rank tag (NVIDIA/nccl#1453). */
typedef enum { PFX_NONE, PFX_SLURM, PFX_OMPI, PFX_OMPI_TIME, PFX_OMPI_TIME_ONLY, PFX_RANK } pfx_kind;

static const char *const pfx_names[] = {
    "no launcher prefix", "a Slurm label \"N: \"", "an Open MPI tag \"[job,rank]<stdout>:\"",
    "an Open MPI time stamp and tag", "an Open MPI time stamp \"<stdout>:\"", "a rank tag \"[N] \"",
};

typedef struct {
    pfx_kind kind;
    int rank;        /* -1: the prefix names none */
    bool out;        /* stdout (false: the tag says <stderr> or <stddiag>) */
    size_t at, len;  /* where the prefix starts (after blanks) and ends, in the line */
} launch_pfx;

typedef struct {
    const char *name;
    GError **err;
    int line;
    GArray *rows;        /* of nccltests_row */
    GHashTable *sizes;   /* size -> first line (GINT_TO_POINTER) */
    bool have_layout, has_redop, has_root, old_error;
    int ncols;
    int coll_start, coll_bang, coll_cmd; /* -1 when not seen */
    int ndev, bang_gpus, nthread, ngpus, agg, graph;
    bool have_first;
    uint64_t prev_size;             /* the previous row's size: a sweep's sizes increase, so a new
                                     * (type, reduction, root) group starts where they do not */
    GHashTable *seen_groups;        /* groups met so far ("dt/op/root"): a repeat is an error */
    nccltests_dtype cur_dtype;      /* the current group's */
    nccltests_redop cur_redop;
    int cur_root;
    GArray *row_id;                 /* of nccltests_sweep_id, one per row */
    int ngroups;
    nccltests_dtype dtype;
    nccltests_redop redop;
    int root;
    double avg_busbw;
    int nccl_code, nccl_code_line; /* NCCL's version code and where it was read (0: none) */
    int bang_code, bang_code_line; /* the same from a "#! nccl_version:" header (the log's own wins) */
    GArray *tuning;      /* of nccltests_tuning */
    GArray *rings;       /* of nccltests_ring: the first communicator's */
    bool rings_done;     /* a channel came again (another communicator): keep the first's */
    GArray *trees;       /* of nccltests_tree: the first communicator's */
    GHashTable *tree_ranks; /* ranks whose Trees line was read (a rank again: another communicator) */
    bool trees_done;
    GArray *latbw;       /* of nccltests_latbw: the first Latency/AlgBw table */
    struct latbw_col { char algo[24], proto[12]; } *latbw_cols; /* its header's columns */
    int nlatbw_cols;     /* 0: no header yet; -1: the first table is complete */
    GPtrArray *env;      /* "NAME=value" from NCCL's ENV lines */
    GArray *env_line;    /* int: their lines */
    GHashTable *heads;   /* "host:pid:tid" of NCCL lines that start a line: where one glued to a row starts */
    int row_style, row_style_line; /* the launcher prefix of the first result row (-1: none yet) */
    token pend[MAX_TOK]; /* a result row cut by NCCL lines, its columns so far */
    int pend_n, pend_end_line, pend_end_col;
    int run_lo, run_hi;  /* the lines of the run read (0, 0: all) */
} parser;

static void fail(parser *p, int code, int col, const char *fmt, ...) G_GNUC_PRINTF(4, 5);

static void fail(parser *p, int code, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(p->err, NCCLTESTS_ERROR, code, "%s:%d:%d: %s", p->name, p->line, col, what);
    g_free(what);
}

/* The tokens of line from `from` to `to` (NULL: the end), on file line `ln`. */
static int tokenize_to(const char *line, const char *from, const char *to, int ln, token *tok, int max)
{
    int n = 0;
    const char *s = from;
    if (!to)
        to = from + strlen(from);
    while (s < to) {
        while (s < to && (*s == ' ' || *s == '\t'))
            s++;
        if (s >= to)
            break;
        const char *b = s;
        while (s < to && *s != ' ' && *s != '\t')
            s++;
        if (n < max)
            tok[n] = (token){.s = b, .len = (int)(s - b), .col = (int)(b - line) + 1, .line = ln};
        n++;
    }
    return n;
}

static int tokenize(const char *line, const char *from, token *tok, int max)
{
    return tokenize_to(line, from, NULL, 0, tok, max);
}

/* The column of t, its line made the current one (for an error there). */
static int at(parser *p, const token *t)
{
    if (t->line > 0)
        p->line = t->line;
    return t->col;
}

static char *tok_dup(const token *t)
{
    return g_strndup(t->s, (gsize)t->len);
}

/* Length of a Slurm "12: " prefix at the start of s, or 0. */
static size_t slurm_prefix(const char *s)
{
    size_t i = 0;
    while (s[i] == ' ')
        i++;
    size_t d = i;
    while (isdigit((unsigned char)s[i]) && i - d < 8)
        i++;
    if (i > d && s[i] == ':' && (s[i + 1] == ' ' || s[i + 1] == '\t' || s[i + 1] == '\0'))
        return i + 1;
    return 0;
}

/* 1 to 7 digits at *c (moved past them) into *v. */
static bool small_num(const char **c, int *v)
{
    const char *b = *c;
    long n = 0;
    while (isdigit((unsigned char)**c) && *c - b < 7)
        n = n * 10 + (*(*c)++ - '0');
    *v = (int)n;
    return *c > b && !isdigit((unsigned char)**c);
}

/* Open MPI's stream tag "<stdout>:" (also <stderr>, <stddiag>) at c: its length, or 0. */
static size_t ompi_stream(const char *c, bool *out)
{
    *out = !strncmp(c, "<stdout>:", 9);
    return *out || !strncmp(c, "<stderr>:", 9) ? 9 : !strncmp(c, "<stddiag>:", 10) ? 10 : 0;
}

/* Open MPI's "[job,rank]<stdout>:" at c (orte/mca/iof/base/iof_base_output.c): its length, or 0. */
static size_t ompi_tag(const char *c, int *rank, bool *out)
{
    const char *b = c;
    int job;
    if (*c++ != '[' || !small_num(&c, &job) || *c++ != ',' || !small_num(&c, rank) || *c++ != ']')
        return 0;
    size_t n = ompi_stream(c, out);
    return n ? (size_t)(c - b) + n : 0;
}

/* ctime()'s "Thu May  7 10:39:20 2020" (24 characters) at c. */
static bool is_ctime(const char *c)
{
    static const char form[] = "Aaa Aaa _9 99:99:99 9999";
    for (int i = 0; i < 24; i++) {
        unsigned char ch = (unsigned char)c[i], f = (unsigned char)form[i];
        if (!ch || (f == 'A' && !isalpha(ch)) || (f == '9' && !isdigit(ch)) || (f == '_' && ch != ' ' && !isdigit(ch)) ||
            ((f == ' ' || f == ':') && ch != f))
            return false;
    }
    return true;
}

static launch_pfx launcher_prefix(const char *line)
{
    launch_pfx lp = {.kind = PFX_NONE, .rank = -1, .out = true};
    const char *s = line;
    while (*s == ' ')
        s++;
    size_t n;
    int r = -1, r2;
    bool out = true;
    const char *c = s;
    if ((n = ompi_tag(s, &r, &out)))
        lp.kind = PFX_OMPI;
    else if (is_ctime(s) && (n = ompi_tag(s + 24, &r, &out)))
        lp.kind = PFX_OMPI_TIME, n += 24;
    else if (is_ctime(s) && (n = ompi_stream(s + 24, &out)))
        lp.kind = PFX_OMPI_TIME_ONLY, n += 24;
    else if ((n = slurm_prefix(line))) {
        lp.kind = PFX_SLURM;
        n -= (size_t)(s - line);
        r = atoi(s);
    } else if (*c++ == '[' && small_num(&c, &r2) && c[0] == ']' && c[1] == ' ') {
        lp.kind = PFX_RANK, n = (size_t)(c + 1 - s), r = r2;
    }
    if (lp.kind == PFX_NONE)
        return lp;
    lp.rank = r;
    lp.out = out;
    lp.at = (size_t)(s - line);
    lp.len = lp.at + n;
    return lp;
}

/* Finds a collective name in free text: the first word that names one, or a
 * word ending in "_perf".  Returns the kind or -1. */
static int coll_in_text(const char *text, bool perf_only)
{
    int found = -1;
    char **words = g_strsplit_set(text, " \t,;()=\"'", -1);
    for (char **w = words; *w && found < 0; w++) {
        coll_kind k;
        if (!**w || (perf_only && !g_str_has_suffix(*w, "_perf")))
            continue;
        if (coll_kind_from_name(*w, &k) == 0)
            found = (int)k;
    }
    g_strfreev(words);
    return found;
}

/* NCCL_VERSION(X, Y, Z): X*10000 + Y*100 + Z from 2.9, X*1000 + Y*100 + Z before */
static int nccl_code_of(int maj, int min, int pat)
{
    return maj > 2 || (maj == 2 && min >= 9) ? maj * 10000 + min * 100 + pat : maj * 1000 + min * 100 + pat;
}

static void bang_line(parser *p, const char *s)
{
    s += 2;
    while (*s == ' ')
        s++;
    if (g_str_has_prefix(s, "collective:")) {
        const char *v = s + strlen("collective:");
        char *first = g_strstrip(g_strndup(v, strcspn(v, "(;,")));
        coll_kind k;
        if (coll_kind_from_name(first, &k) == 0)
            p->coll_bang = (int)k;
        g_free(first);
    } else if (g_str_has_prefix(s, "gpus:")) {
        long n = strtol(s + strlen("gpus:"), NULL, 10);
        if (n > 0 && n < 1000000)
            p->bang_gpus = (int)n;
    } else if (g_str_has_prefix(s, "command:")) {
        p->coll_cmd = coll_in_text(s + strlen("command:"), true);
    } else if (g_str_has_prefix(s, "nccl_version:")) { /* a provenance header's "2.19.3 (...)" */
        int maj, min, pat;
        if (sscanf(s + strlen("nccl_version:"), " %d.%d.%d", &maj, &min, &pat) == 3 && maj > 0 && maj < 100 && min >= 0 &&
            min < 100 && pat >= 0 && pat < 100) {
            p->bang_code = nccl_code_of(maj, min, pat);
            p->bang_code_line = p->line;
        }
    }
}

static void header_line(parser *p, token *tok, int n)
{
    bool size = false, count = false, time = false;
    bool redop = false, root = false, err = false;
    for (int i = 0; i < n && i < MAX_TOK; i++) {
        char *w = tok_dup(&tok[i]);
        size |= strcmp(w, "size") == 0;
        count |= strcmp(w, "count") == 0;
        time |= strcmp(w, "time") == 0 || strcmp(w, "cputime") == 0;
        redop |= strcmp(w, "redop") == 0;
        root |= strcmp(w, "root") == 0;
        err |= strcmp(w, "error") == 0;
        g_free(w);
    }
    if (!(size && count && time))
        return;
    p->have_layout = true;
    p->has_redop = redop;
    p->has_root = root;
    p->old_error = err;
    p->ncols = 3 + redop + root + 8;
}

/* The whole number after `key` in the nccl-tests header line `body` (left
 * alone where the key is absent); false after setting an error where it is
 * not a number in lo..hi. */
static bool header_int(parser *p, const char *line, const char *body, const char *key, long lo, long hi,
                       const char *what, int *out)
{
    const char *k = strstr(body, key);
    if (!k)
        return true;
    char *end;
    errno = 0;
    long v = strtol(k + strlen(key), &end, 10);
    /* a whole number: "3.5" or "2abc" were read as 3 and 2 */
    if (end == k + strlen(key) || errno || (*end && *end != ' ' && *end != '\t') || v < lo || v > hi) {
        int kl = (int)strlen(key);
        while (kl > 0 && (key[kl - 1] == ' ' || key[kl - 1] == ':'))
            kl--;
        fail(p, NCCLTESTS_ERROR_BAD_VALUE, (int)(k - line) + 1, "%.*s: expected a whole number in %ld..%ld (%s)", kl,
             key, lo, hi, what);
        return false;
    }
    *out = (int)v;
    return true;
}

/* Returns false after setting an error. */
static bool comment_line(parser *p, const char *line, const char *s)
{
    token tok[MAX_TOK];
    const char *body = s + 1;
    while (*body == ' ')
        body++;
    const char *m;
    if ((m = strstr(body, "Collective test starting:"))) {
        int k = coll_in_text(m + strlen("Collective test starting:"), false);
        if (k >= 0 && p->coll_start >= 0 && k != p->coll_start) {
            fail(p, NCCLTESTS_ERROR_MIXED, (int)(m - line) + 1,
                 "expected one collective per file, got %s after %s",
                 coll_kind_name((coll_kind)k), coll_kind_name((coll_kind)p->coll_start));
            return false;
        }
        if (k >= 0)
            p->coll_start = k;
    } else if ((m = strstr(body, "nccl-library="))) { /* nccl-tests >= 2.13: the NCCL it ran on */
        long code = strtol(m + strlen("nccl-library="), NULL, 10); /* 23007; not past 99.99.99 */
        if (code > 0 && code < 1000000 && !p->nccl_code) {
            p->nccl_code = (int)code;
            p->nccl_code_line = p->line;
        }
    } else if (g_str_has_prefix(body, "nThread ")) {
        /* -t, -g, -m and -G: whole numbers in range (they were dropped silently or wrapped, and
         * nThread x nGpus overflowed an int) */
        if (!header_int(p, line, body, "nThread ", 1, 1000000, "nccl-tests -t", &p->nthread) ||
            !header_int(p, line, body, "nGpus ", 1, 1000000, "nccl-tests -g", &p->ngpus) ||
            !header_int(p, line, body, "agg iters: ", 1, 1024, "nccl-tests -m, as conveyor collective takes it", &p->agg) ||
            !header_int(p, line, body, "graph: ", 0, 1000000, "nccl-tests -G", &p->graph))
            return false;
        if ((int64_t)p->nthread * p->ngpus > 1000000) {
            fail(p, NCCLTESTS_ERROR_BAD_VALUE, (int)(body - line) + 1,
                 "nThread %d x nGpus %d: expected at most 1000000 GPUs", p->nthread, p->ngpus);
            return false;
        }
    } else if (g_str_has_prefix(body, "Rank ")) {
        p->ndev++;
    } else if ((m = strstr(body, "Avg bus bandwidth"))) {
        const char *colon = strchr(m, ':');
        if (colon)
            p->avg_busbw = g_ascii_strtod(colon + 1, NULL);
    } else {
        int n = tokenize(line, body, tok, MAX_TOK);
        header_line(p, tok, n);
    }
    return true;
}

/* Parses a non-negative integer token. */
static bool parse_u64(parser *p, const token *t, const char *what, uint64_t *out)
{
    char *w = tok_dup(t), *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(w, &end, 10);
    bool ok = isdigit((unsigned char)w[0]) && *end == '\0' && errno == 0;
    if (!ok)
        fail(p, NCCLTESTS_ERROR_NOT_NUMBER, at(p, t), "%s: expected a non-negative integer, got \"%s\"",
             what, w);
    g_free(w);
    *out = (uint64_t)v;
    return ok;
}

/* Parses a time or bandwidth: a decimal number >= 0 (nccl-tests prints
 * %7.2f or %6.2f; hex, which strtod also reads, is refused), at most 1e12
 * (us: 11 days; GB/s: beyond any link), a time above 0 except in a row of
 * 0 bytes (a call NCCL discards, which conveyor collective prints as 0.00). */
static bool parse_value(parser *p, const token *t, const char *what, bool empty, double *out)
{
    char *w = tok_dup(t), *end = NULL;
    double v = g_ascii_strtod(w, &end);
    bool ok = false, time = !strcmp(what, "time") && !empty;
    if (end == w || *end != '\0' || strpbrk(w, "xXpP"))
        fail(p, NCCLTESTS_ERROR_NOT_NUMBER, at(p, t), "%s: expected a number, got \"%s\"", what, w);
    else if (isnan(v) || isinf(v) || v < 0 || v > 1e12 || (time && v == 0))
        fail(p, NCCLTESTS_ERROR_BAD_VALUE, at(p, t), "%s: expected a value %s 0 and at most 1e12, got \"%s\"",
             what, time ? ">" : ">=", w);
    else
        ok = true;
    g_free(w);
    *out = v;
    return ok;
}

/* The #wrong / error column: a number, or N/A (NAN). */
static bool parse_wrong(parser *p, const token *t, double *out)
{
    char *w = tok_dup(t), *end = NULL;
    bool ok = true;
    if (g_ascii_strcasecmp(w, "N/A") == 0) {
        *out = NAN;
    } else {
        *out = g_ascii_strtod(w, &end);
        if (end == w || *end != '\0') {
            fail(p, NCCLTESTS_ERROR_NOT_NUMBER, at(p, t),
                 "#wrong: expected a number or N/A, got \"%s\"", w);
            ok = false;
        }
    }
    g_free(w);
    return ok;
}

static bool pick_layout(parser *p, const token *tok, int n)
{
    if (p->have_layout)
        return true;
    if (n < 11 || n > 13) {
        fail(p, n < 11 ? NCCLTESTS_ERROR_TRUNCATED_ROW : NCCLTESTS_ERROR_COLUMN_COUNT,
             n > 13 ? at(p, &tok[13]) : at(p, &tok[0]),
             "expected a result row of 11, 12 or 13 columns, got %d", n);
        return false;
    }
    p->have_layout = true;
    p->has_root = n == 13;
    p->has_redop = n >= 12;
    p->old_error = n < 13;
    p->ncols = n;
    return true;
}

static bool row_identity(parser *p, const token *tok, int *k, uint64_t size)
{
    nccltests_dtype dt;
    nccltests_redop op = NCCLTESTS_OP_NONE;
    int root = -1;
    char *w = tok_dup(&tok[2]);
    bool ok = nccltests_dtype_from_name(w, &dt) == 0;
    if (!ok)
        fail(p, NCCLTESTS_ERROR_BAD_VALUE, at(p, &tok[2]), "type: expected an nccl-tests data type, got \"%s\"", w);
    g_free(w);
    *k = 3;
    if (ok && p->has_redop) {
        w = tok_dup(&tok[3]);
        ok = nccltests_redop_from_name(w, &op) == 0;
        if (!ok)
            fail(p, NCCLTESTS_ERROR_BAD_VALUE, at(p, &tok[3]), "redop: expected sum/prod/max/min/avg/none, got \"%s\"", w);
        g_free(w);
        (*k)++;
    }
    if (ok && p->has_root) {
        char *end;
        w = tok_dup(&tok[*k]);
        long lr = strtol(w, &end, 10);
        ok = end != w && *end == '\0' && lr >= -1 && lr <= 1048576; /* -1: no root; else a rank */
        root = (int)lr;
        if (!ok)
            fail(p, NCCLTESTS_ERROR_NOT_NUMBER, at(p, &tok[*k]), "root: expected -1 or a rank (0..1048576), got \"%s\"", w);
        g_free(w);
        (*k)++;
    }
    if (!ok)
        return false;
    char gkey[48];
    g_snprintf(gkey, sizeof gkey, "%d/%d/%d", (int)dt, (int)op, root);
    if (!p->have_first) {
        p->have_first = true;
        p->dtype = p->cur_dtype = dt;
        p->redop = p->cur_redop = op;
        p->root = p->cur_root = root;
        p->ngroups = 1;
        g_hash_table_add(p->seen_groups, g_strdup(gkey));
    } else if (dt != p->cur_dtype || op != p->cur_redop || root != p->cur_root) {
        /* nccl-tests -d all / -o all / -r -1: each (type, reduction, root) is a sweep of its own, all
         * in one table, one after another, its sizes increasing (the first can be smaller than the
         * first sweep's: sizes round down to whole elements); a change where the sizes still
         * increase is a malformed table */
        if (size > p->prev_size) {
            if (dt != p->cur_dtype || op != p->cur_redop)
                fail(p, NCCLTESTS_ERROR_MIXED, at(p, &tok[dt != p->cur_dtype ? 2 : 3]),
                     "expected one type/redop per sweep (%s %s), got %s %s where the sizes still increase (a -d "
                     "all / -o all table starts each type and reduction over at its smallest size)",
                     nccltests_dtype_name(p->cur_dtype), nccltests_redop_name(p->cur_redop),
                     nccltests_dtype_name(dt), nccltests_redop_name(op));
            else
                fail(p, NCCLTESTS_ERROR_MIXED, at(p, &tok[*k - 1]),
                     "expected one root per sweep (%d), got %d where the sizes still increase (a -r -1 table "
                     "starts each root over at its smallest size)", p->cur_root, root);
            return false;
        }
        if (g_hash_table_contains(p->seen_groups, gkey)) {
            fail(p, NCCLTESTS_ERROR_MIXED, at(p, &tok[2]), "expected each sweep once per table, got %s %s root %d again",
                 nccltests_dtype_name(dt), nccltests_redop_name(op), root);
            return false;
        }
        g_hash_table_add(p->seen_groups, g_strdup(gkey));
        p->cur_dtype = dt;
        p->cur_redop = op;
        p->cur_root = root;
        p->ngroups++;
        g_hash_table_remove_all(p->sizes); /* each group's sizes once */
    }
    p->prev_size = size;
    nccltests_sweep_id id = {.dtype = dt, .redop = op, .root = root};
    g_array_append_val(p->row_id, id);
    return true;
}

/* A result row from its tokens (n of them, from one line or, for a row cut by NCCL's log, several);
 * (end_line, end_col): just past its last piece, where a row cut short is reported. */
static bool data_row_tok(parser *p, token *tok, int n, int end_line, int end_col)
{
    nccltests_row r = {0};
    int k;
    if (!pick_layout(p, tok, n))
        return false;
    if (n < p->ncols) {
        p->line = end_line;
        if (tok[0].line != end_line)
            fail(p, NCCLTESTS_ERROR_TRUNCATED_ROW, end_col,
                 "expected %d columns in a result row, got %d (the row begun on line %d, cut by NCCL's log, "
                 "ends here short)", p->ncols, n, tok[0].line);
        else
            fail(p, NCCLTESTS_ERROR_TRUNCATED_ROW, end_col,
                 "expected %d columns in a result row, got %d (row cut short?)", p->ncols, n);
        return false;
    }
    if (n > p->ncols) {
        fail(p, NCCLTESTS_ERROR_COLUMN_COUNT, at(p, &tok[p->ncols < MAX_TOK ? p->ncols : MAX_TOK - 1]),
             "expected %d columns as the header says, got %d", p->ncols, n);
        return false;
    }
    if (!parse_u64(p, &tok[0], "size", &r.size_bytes) || !parse_u64(p, &tok[1], "count", &r.count))
        return false;
    /* as collective -e (cli_coll_sizes): a 20 TB row simulated for many minutes */
    if (r.size_bytes > NCCLTESTS_MAX_SIZE) {
        fail(p, NCCLTESTS_ERROR_BAD_VALUE, at(p, &tok[0]),
             "size: %" G_GUINT64_FORMAT " is above 1T (2^40 bytes, more than any GPU holds)", r.size_bytes);
        return false;
    }
    if (!row_identity(p, tok, &k, r.size_bytes))
        return false;
    for (int pl = 0; pl < 2; pl++, k += 4) {
        bool empty = r.size_bytes == 0;
        if (!parse_value(p, &tok[k], "time", empty, &r.time_us[pl]) ||
            !parse_value(p, &tok[k + 1], "algbw", empty, &r.algbw_GBps[pl]) ||
            !parse_value(p, &tok[k + 2], "busbw", empty, &r.busbw_GBps[pl]) ||
            !parse_wrong(p, &tok[k + 3], &r.wrong[pl]))
            return false;
    }
    gpointer first = g_hash_table_lookup(p->sizes, &r.size_bytes);
    if (r.size_bytes > 0 && first) {
        fail(p, NCCLTESTS_ERROR_DUPLICATE_SIZE, at(p, &tok[0]),
             "expected each size once per table, got %" G_GUINT64_FORMAT " again (first on line %d; a run over "
             "several types, reductions or roots repeats its sizes: validate one at a time)",
             r.size_bytes, GPOINTER_TO_INT(first));
        return false;
    }
    g_array_append_val(p->rows, r);
    uint64_t *key = g_new(uint64_t, 1);
    *key = r.size_bytes;
    g_hash_table_insert(p->sizes, key, GINT_TO_POINTER(tok[0].line));
    return true;
}

/* A result row cut by NCCL's log was left unfinished (a comment line, or the end of the file, came first). */
static bool pending_cut(parser *p)
{
    p->line = p->pend_end_line;
    fail(p, NCCLTESTS_ERROR_TRUNCATED_ROW, p->pend_end_col,
         "expected %d columns in a result row, got %d: the row begun on line %d before an NCCL line never ends "
         "(row cut short?)", p->have_layout ? p->ncols : 13, p->pend_n, p->pend[0].line);
    return false;
}

/* Columns of a result row from line `line`, from..to: a whole row, or (glued: an NCCL log line follows on
 * the same line, as nccl-tests prints a row in pieces to the stdout NCCL logs to) a piece of one. A row
 * begun before an NCCL line goes on on a later line: its out-of-place columns (often glued to NCCL's next
 * line too), then its in-place ones ending the line. */
static bool row_piece(parser *p, const char *line, const char *from, const char *to, bool glued)
{
    token tok[MAX_TOK];
    int n = tokenize_to(line, from, to, p->line, tok, MAX_TOK);
    int end_col = (int)(to - line) + 1;
    if (!p->pend_n && !glued)
        return data_row_tok(p, tok, n, p->line, end_col);
    for (int i = 0; i < n; i++) {
        if (p->pend_n >= MAX_TOK) { /* far more than a row has: report the first past the header's */
            p->pend_n = MAX_TOK;
            break;
        }
        p->pend[p->pend_n++] = tok[i < MAX_TOK ? i : MAX_TOK - 1];
    }
    p->pend_end_line = p->line;
    p->pend_end_col = end_col;
    int want = p->have_layout ? p->ncols : 0;
    if (glued && (!want || p->pend_n < want)) {
        /* nccl-tests prints a row in three writes (the size..root preamble, out of place, in place): NCCL's
         * lines come between them, not inside one */
        if (want && p->pend_n != want - 8 && p->pend_n != want - 4) {
            p->line = p->pend_end_line;
            fail(p, NCCLTESTS_ERROR_TRUNCATED_ROW, end_col,
                 "expected a result row cut by an NCCL line after its first %d or %d columns, got %d", want - 8,
                 want - 4, p->pend_n);
            return false;
        }
        return true;
    }
    int m = p->pend_n;
    p->pend_n = 0;
    return data_row_tok(p, p->pend, m, p->pend_end_line, p->pend_end_col);
}

/* Does s (a line after its launcher prefix and blanks) start a result row: a first word that starts with
 * a digit (a sign and a digit: a negative size is refused, not skipped)? Not a logger's time stamp or date
 * ("22:55:51", "2024/06/10", "2024-06-10"), an address or a version ("10.0.0.1", "2.19.3"), nor the
 * dashes of mpirun's banners and the +--- of nvidia-smi's table. */
static bool is_row(const char *s)
{
    const char *d = s + (*s == '-' || *s == '+');
    if (!isdigit((unsigned char)*d))
        return false;
    size_t n = strcspn(s, " \t");
    if (memchr(s, ':', n) || memchr(s, '/', n))
        return false;
    int dots = 0;
    for (size_t i = 0; i < n; i++)
        dots += s[i] == '.';
    if (dots > 1)
        return false;
    bool date = n >= 10;
    for (int i = 0; date && i < 10; i++)
        date = i == 4 || i == 7 ? s[i] == '-' : isdigit((unsigned char)s[i]);
    return !date;
}

/* NCCL's "NCCL_X set by environment to v" (param.cc; integers end with a
 * period, e.g. "32."): kept once per name, as the run had it. */
static void env_line(parser *p, const char *info)
{
    char name[64], value[128];
    if (sscanf(info, "%63[A-Z0-9_] set by environment to %127s", name, value) != 2 || strncmp(name, "NCCL_", 5))
        return;
    size_t n = strlen(value);
    if (n > 1 && value[n - 1] == '.' && g_ascii_isdigit(value[n - 2]))
        value[n - 1] = 0;
    for (guint i = 0; i < p->env->len; i++) {
        const char *e = p->env->pdata[i];
        if (!strncmp(e, name, strlen(name)) && e[strlen(name)] == '=')
            return;
    }
    g_ptr_array_add(p->env, g_strdup_printf("%s=%s", name, value));
    int ln = (int)p->line;
    g_array_append_val(p->env_line, ln);
}

/* tuning.cc's table: "Latency/AlgBw | Tree/    LL | ..." then " Max NThreads |
 * ..." and one "<Func> |  lat/  bw | ..." line per collective. Only the
 * first table is kept (each communicator prints one); a malformed line ends
 * it (it is NCCL's log, not the results). */
static void latbw_line(parser *p, const char *info)
{
    if (p->nlatbw_cols < 0)
        return;
    g_auto(GStrv) cells = g_strsplit(info, "|", -1);
    int n = (int)g_strv_length(cells);
    if (n < 2)
        return;
    g_strstrip(cells[0]);
    if (!strcmp(cells[0], "Latency/AlgBw")) {
        if (p->nlatbw_cols > 0) { /* a second table: keep the first */
            p->nlatbw_cols = -1;
            return;
        }
        g_free(p->latbw_cols);
        p->latbw_cols = g_new0(struct latbw_col, n);
        int c = 0;
        for (int i = 1; i < n; i++) {
            char *slash = strchr(cells[i], '/');
            if (!slash)
                continue;
            *slash = '\0';
            g_strlcpy(p->latbw_cols[c].algo, g_strstrip(cells[i]), sizeof p->latbw_cols[c].algo);
            g_strlcpy(p->latbw_cols[c].proto, g_strstrip(slash + 1), sizeof p->latbw_cols[c].proto);
            c++;
        }
        p->nlatbw_cols = c;
        return;
    }
    if (p->nlatbw_cols <= 0 || !strcmp(cells[0], "Max NThreads"))
        return;
    bool name = *cells[0] != '\0';
    for (const char *s = cells[0]; *s && name; s++)
        name = g_ascii_isalpha(*s);
    if (!name) {
        p->nlatbw_cols = -1;
        return;
    }
    for (int i = 1, c = 0; i < n && c < p->nlatbw_cols; i++) {
        nccltests_latbw e = {0};
        if (!*g_strstrip(cells[i]))
            continue; /* after the last '|' */
        if (sscanf(cells[i], "%lf / %lf", &e.lat_us, &e.algbw_GBps) != 2 || !isfinite(e.lat_us) ||
            !isfinite(e.algbw_GBps)) {
            p->nlatbw_cols = -1; /* not the table after all */
            return;
        }
        g_strlcpy(e.func, cells[0], sizeof e.func);
        g_strlcpy(e.algo, p->latbw_cols[c].algo, sizeof e.algo);
        g_strlcpy(e.proto, p->latbw_cols[c].proto, sizeof e.proto);
        g_array_append_val(p->latbw, e);
        c++;
    }
}

bool nccltests_ring_parse(const char *info, int line, nccltests_ring *out)
{
    nccltests_ring r = {.line = line};
    int at = 0;
    if (sscanf(info, "Channel %d/%d :%n", &r.channel, &r.nchannels, &at) != 2 || at == 0 || r.channel < 0 ||
        r.nchannels < 1 || r.channel >= r.nchannels || r.nchannels > 1024)
        return false;
    const char *s = info + at;
    while (*s) {
        char *end;
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        long v = strtol(s, &end, 10);
        if (end == s || (*end && *end != ' ') || v < 0 || v > INT_MAX)
            return false; /* not a ring line */
        if (r.n < NCCLTESTS_RING_MAX)
            r.rank[r.n] = (int)v;
        r.n++;
        s = end;
    }
    if (r.n == 0)
        return false;
    *out = r;
    return true;
}

/* rank 0's "Channel cc/NN :   0   1 ..." */
static void ring_line(parser *p, const char *info)
{
    nccltests_ring r;
    if (p->rings_done || !nccltests_ring_parse(info, p->line, &r))
        return;
    for (guint i = 0; i < p->rings->len; i++)
        if (g_array_index(p->rings, nccltests_ring, i).channel == r.channel) {
            p->rings_done = true; /* a second communicator's rings */
            return;
        }
    g_array_append_val(p->rings, r);
}

int nccltests_trees_parse(const char *info, int line, GArray *out)
{
    if (strncmp(info, "Trees", 5) || (info[5] != ' ' && info[5] != 0))
        return -1;
    const char *s = info + 5;
    int rank = -1;
    for (;;) {
        nccltests_tree t = {.line = line};
        int used = 0;
        if (sscanf(s, " [%d] %d/%d/%d->%d->%d%n", &t.channel, &t.down[0], &t.down[1], &t.down[2], &t.rank, &t.up,
                   &used) != 6 || used == 0)
            break;
        if (t.channel < 0 || t.channel > 1024 || t.rank < 0 || t.rank > (1 << 24) || (rank >= 0 && t.rank != rank))
            break;
        rank = t.rank;
        g_array_append_val(out, t);
        s += used;
    }
    return rank;
}

/* A rank's "Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1" */
static void trees_line(parser *p, const char *info)
{
    if (p->trees_done)
        return;
    GArray *got = g_array_new(FALSE, FALSE, sizeof(nccltests_tree));
    int rank = nccltests_trees_parse(info, p->line, got);
    if (rank >= 0) {
        if (g_hash_table_contains(p->tree_ranks, GINT_TO_POINTER(rank + 1)))
            p->trees_done = true; /* a second communicator's trees */
        else {
            g_hash_table_add(p->tree_ranks, GINT_TO_POINTER(rank + 1));
            g_array_append_vals(p->trees, got->data, got->len);
        }
    }
    g_array_free(got, TRUE);
}

/* Where NCCL's "host:pid:tid [dev] " starts in s (a line after its launcher prefix), or NULL. The first
 * such header counts; one glued to the row nccl-tests was printing ("-1host:12:12 [0] NCCL INFO ...") is
 * told apart by the headers that start other lines, else at a number followed by a letter. */
static const char *nccl_head(const parser *p, const char *s)
{
    for (const char *b = strstr(s, " ["); b; b = strstr(b + 1, " [")) {
        const char *d = b + 2;
        if (!isdigit((unsigned char)*d))
            continue;
        while (isdigit((unsigned char)*d))
            d++;
        if (d[0] != ']' || d[1] != ' ')
            continue;
        const char *t = b, *e = b;
        while (t > s && t[-1] != ' ')
            t--;
        int k = 0;
        for (; k < 2; k++) { /* ":pid:tid" */
            const char *q = e;
            while (q > t && isdigit((unsigned char)q[-1]))
                q--;
            if (q == e || q - 1 <= t || q[-1] != ':')
                break;
            e = q - 1;
        }
        if (k < 2)
            continue;
        if (t == s)
            return t;
        char buf[256];
        size_t n = (size_t)(b - t);
        if (n < sizeof buf) {
            memcpy(buf, t, n);
            buf[n] = 0;
            for (size_t off = 0; off < n; off++)
                if (g_hash_table_contains(p->heads, buf + off))
                    return t + off;
        }
        const char *q = t + (*t == '-' || *t == '+');
        if (isdigit((unsigned char)*q)) {
            while (isdigit((unsigned char)*q))
                q++;
            if (isalpha((unsigned char)*q))
                return q;
        }
        return t;
    }
    return NULL;
}

/* Result rows come from rank 0's stdout, all with the launcher prefix the first one had. */
static bool row_style_ok(parser *p, const char *line, const launch_pfx *lp)
{
    if (p->row_style < 0) {
        p->row_style = (int)lp->kind;
        p->row_style_line = p->line;
        return true;
    }
    if (p->row_style == (int)lp->kind)
        return true;
    fail(p, NCCLTESTS_ERROR_MIXED, (int)lp->at + 1,
         "expected a result row with %s as on line %d, got %s (launcher output mixed up?)", pfx_names[p->row_style],
         p->row_style_line, pfx_names[lp->kind]);
    (void)line;
    return false;
}

static bool one_line(parser *p, char *line)
{
    launch_pfx lp = launcher_prefix(line);
    const char *s = line + lp.len;
    while (*s == ' ')
        s++;
    bool bang = s[0] == '#' && s[1] == '!';
    if (p->run_lo && (p->line < p->run_lo || p->line > p->run_hi) && !bang)
        return true; /* another run's line */
    bool mine = lp.rank <= 0 && lp.out; /* rank 0's stdout, or a line no launcher tagged */
    const char *nccl = strstr(s, "NCCL INFO");
    if (nccl || strstr(s, "NCCL WARN") || strstr(s, "NCCL TRACE")) {
        const char *head = nccl_head(p, s);
        if (head && head > s && is_row(s)) { /* a row's piece, then NCCL's line */
            const char *fe = head;
            while (fe > s && fe[-1] == ' ')
                fe--;
            size_t pl = lp.len - lp.at; /* the launcher's tag again, before the NCCL line ("-1[0] host:...") */
            if (lp.kind != PFX_NONE && (size_t)(fe - s) > pl && !strncmp(fe - pl, line + lp.at, pl)) {
                fe -= pl;
                while (fe > s && fe[-1] == ' ')
                    fe--;
            }
            if (!row_style_ok(p, line, &lp))
                return false;
            if (mine && !row_piece(p, line, s, fe, true))
                return false;
        }
        if (!nccl)
            return true;
        const char *info = nccl;
        /* NCCL's log: keep its TUNING lines (what NCCL chose), skip the rest */
        nccltests_tuning t = {0};
        unsigned long long bytes;
        int lo, hi;
        info += 9;
        while (*info == ' ')
            info++;
        /* (channel numbers of at most 4 digits, NCCL's MAXCHANNELS being 64: a
         * wider one no longer overflows the count; such a line is skipped) */
        if (sscanf(info, "%23[A-Za-z]: %llu Bytes -> Algo %23s proto %11s channel{Lo..Hi}={%4d..%4d}", t.func,
                   &bytes, t.algo, t.proto, &lo, &hi) == 6 && hi >= lo && lo >= 0) {
            t.bytes = bytes;
            t.nchannels = hi - lo + 1;
            g_array_append_val(p->tuning, t);
        }
        latbw_line(p, info);
        env_line(p, info);
        ring_line(p, info);
        trees_line(p, info);
        int maj, min, pat; /* "NCCL version 2.18.5+cuda12.2" (printed with NCCL_DEBUG=VERSION or INFO) */
        if (!p->nccl_code && sscanf(info, "NCCL version %d.%d.%d", &maj, &min, &pat) == 3 && maj > 0 && maj < 100 &&
            min >= 0 && min < 100 && pat >= 0 && pat < 100) {
            p->nccl_code = nccl_code_of(maj, min, pat);
            p->nccl_code_line = p->line;
        }
        return true;
    }
    if (!*s)
        return true;
    if (bang) {
        if (mine)
            bang_line(p, s);
        return true;
    }
    if (s[0] == '#') {
        if (!mine)
            return true;
        if (p->pend_n)
            return pending_cut(p);
        return comment_line(p, line, s);
    }
    if (is_row(s)) {
        if (!row_style_ok(p, line, &lp))
            return false;
        return !mine || row_piece(p, line, s, s + strlen(s), false);
    }
    return true;
}

/* An array's elements, handed over (NULL when there are none), their count in *n; *a is freed. */
static void *take(GArray **a, size_t *n)
{
    *n = (*a)->len;
    void *d = g_array_free(*a, *n == 0);
    *a = NULL;
    return *n ? d : NULL;
}

static int resolve_coll(parser *p, int hint)
{
    int k = p->coll_start >= 0 ? p->coll_start : p->coll_bang >= 0 ? p->coll_bang : p->coll_cmd;
    p->line = 1;
    if (k >= 0 && hint >= 0 && k != hint) {
        fail(p, NCCLTESTS_ERROR_MIXED, 1, "--op says %s, the log says %s",
             coll_kind_name((coll_kind)hint), coll_kind_name((coll_kind)k));
        return -1;
    }
    if (k < 0)
        k = hint;
    if (k < 0)
        fail(p, NCCLTESTS_ERROR_NO_COLLECTIVE, 1,
             "expected a collective name (\"# Collective test starting: X_perf\", \"#! collective:\""
             " or an X_perf command line), got none; pass --op");
    return k;
}

static const char *coll_source(const parser *p, int hint)
{
    (void)hint;
    return p->coll_start >= 0 ? "Collective test starting"
           : p->coll_bang >= 0 ? "#! collective"
           : p->coll_cmd >= 0  ? "#! command"
                               : "--op";
}

/* nranks from busbw/algbw of the row with the largest algbw, or -1. */
static int nranks_from_ratio(const GArray *rows, coll_kind kind)
{
    if (coll_busbw_factor(kind, 2) == coll_busbw_factor(kind, 3))
        return -1; /* factor 1: the ratio says nothing */
    const nccltests_row *best = NULL;
    for (guint i = 0; i < rows->len; i++) {
        const nccltests_row *r = &g_array_index(rows, nccltests_row, i);
        if (!best || r->algbw_GBps[0] > best->algbw_GBps[0])
            best = r;
    }
    if (!best || best->algbw_GBps[0] < 1.0)
        return -1;
    double r = best->busbw_GBps[0] / best->algbw_GBps[0];
    double x = kind == COLL_ALL_REDUCE ? 2.0 - r : 1.0 - r; /* = factor/n scale */
    if (x <= 0)
        return -1;
    double n = (kind == COLL_ALL_REDUCE ? 2.0 : 1.0) / x;
    int ni = (int)lround(n);
    if (ni < 1 || fabs(coll_busbw_factor(kind, ni) - r) > 0.01 * r + 1e-9)
        return -1;
    return ni;
}

static bool resolve_nranks(parser *p, nccltests_log *log)
{
    const char *src = NULL;
    int n = -1;
    if (p->ndev > 0) {
        n = p->ndev, src = "# Using devices";
    } else if (p->bang_gpus > 0) {
        n = p->bang_gpus, src = "#! gpus";
    } else if ((n = nranks_from_ratio(p->rows, log->coll)) > 0) {
        src = "busbw/algbw ratio", log->nranks_derived = true;
    } else if (p->nthread > 0 && p->ngpus > 0) {
        n = p->nthread * p->ngpus, src = "nThread x nGpus (one process assumed)";
    }
    if (n <= 0) {
        p->line = 1;
        fail(p, NCCLTESTS_ERROR_NO_NRANKS, 1,
             "expected the number of ranks (device list, \"#! gpus:\" or a busbw/algbw ratio),"
             " got none");
        return false;
    }
    log->nranks = n;
    log->nranks_source = g_strdup(src);
    return true;
}

static bool check_text(parser *p, const char *text, size_t len)
{
    const char *nul = memchr(text, '\0', len);
    const char *bad = NULL;
    if (!nul && !g_utf8_validate(text, (gssize)len, &bad))
        nul = bad;
    if (!nul)
        return true;
    p->line = 1;
    for (const char *c = text; c < nul; c++)
        p->line += *c == '\n';
    fail(p, NCCLTESTS_ERROR_BINARY, 1, "expected text, got binary data (byte 0x%02x at offset %zu)",
         (unsigned char)*nul, (size_t)(nul - text));
    return false;
}

static nccltests_log *finish(parser *p, int hint)
{
    if (p->rows->len == 0) {
        fail(p, NCCLTESTS_ERROR_NO_TABLE, 1,
             "expected an nccl-tests result table (rows \"size count type ...\"), got none");
        return NULL;
    }
    int k = resolve_coll(p, hint);
    if (k < 0)
        return NULL;
    nccltests_log *log = g_new0(nccltests_log, 1);
    log->path = g_strdup(p->name);
    log->coll = (coll_kind)k;
    log->coll_source = g_strdup(coll_source(p, hint));
    if (!resolve_nranks(p, log)) {
        nccltests_log_free(log);
        return NULL;
    }
    log->dtype = p->dtype;
    log->redop = p->redop;
    log->root = p->root;
    log->old_format = !p->has_root || p->old_error;
    log->avg_busbw_GBps = p->avg_busbw;
    log->nccl_code = p->nccl_code ? p->nccl_code : p->bang_code;
    log->agg_iters = p->agg > 0 ? p->agg : 1;
    log->graph = p->graph;
    log->ngpus = p->ngpus;
    log->nccl_code_line = p->nccl_code ? p->nccl_code_line : p->bang_code_line;
    log->nrows = p->rows->len;
    log->rows = (nccltests_row *)(void *)g_array_free(p->rows, FALSE);
    p->rows = NULL;
    log->latbw = take(&p->latbw, &log->nlatbw);
    log->trees = take(&p->trees, &log->ntrees);
    log->rings = take(&p->rings, &log->nrings);
    log->tuning = take(&p->tuning, &log->ntuning);
    g_ptr_array_add(p->env, NULL);
    log->env = (char **)g_ptr_array_free(p->env, FALSE);
    p->env = NULL;
    log->env_line = (int *)(void *)g_array_free(p->env_line, FALSE);
    p->env_line = NULL;
    log->ngroups = p->ngroups > 0 ? p->ngroups : 1;
    log->row_id = (nccltests_sweep_id *)(void *)g_array_free(p->row_id, FALSE);
    p->row_id = NULL;
    return log;
}

/* The lines of a start of an nccl-tests run: 1 "# nccl-tests version", 2 "# Collective test starting:",
 * 3 "# nThread" (all three from 2.19, the last alone in old ones); 0 for another line. */
static int run_start_kind(const char *s)
{
    if (*s++ != '#')
        return 0;
    while (*s == ' ')
        s++;
    return g_str_has_prefix(s, "nccl-tests version") ? 1 : g_str_has_prefix(s, "Collective test starting:") ? 2
           : g_str_has_prefix(s, "nThread ")                                                               ? 3
                                                                                                            : 0;
}

typedef struct {
    int first, last;  /* its lines */
    int rows;         /* result rows of rank 0 in it */
    char coll[40];    /* the collective its "Collective test starting" names, or "" */
} run_span;

/* The pre-pass: NCCL's line headers that start a line (to find one glued to a row), and the runs: a run
 * starts at one of its start lines after the previous run's rows, or where a start line comes twice. Only
 * runs with result rows count (a run that failed before its table is passed over). */
static GArray *find_runs(parser *p, char **lines, int nlines)
{
    GArray *runs = g_array_new(FALSE, TRUE, sizeof(run_span));
    run_span cur = {.first = 1};
    bool seen[4] = {false};
    for (int i = 0; i < nlines; i++) {
        const char *line = lines[i];
        launch_pfx lp = launcher_prefix(line);
        const char *s = line + lp.len, *sp;
        while (*s == ' ')
            s++;
        if ((sp = strchr(s, ' ')) && sp[1] == '[' && sp - s < 256 && nccl_head(p, s) == s)
            g_hash_table_add(p->heads, g_strndup(s, (gsize)(sp - s)));
        if (lp.rank > 0 || !lp.out)
            continue;
        int k = run_start_kind(s);
        if (k && (cur.rows || seen[k])) {
            cur.last = i;
            if (cur.rows)
                g_array_append_val(runs, cur);
            cur = (run_span){.first = i + 1};
            memset(seen, 0, sizeof seen);
        }
        if (k)
            seen[k] = true;
        if (k == 2) {
            const char *c = strstr(s, "starting:") + 9;
            while (*c == ' ')
                c++;
            g_strlcpy(cur.coll, c, MIN(sizeof cur.coll, strcspn(c, " ") + 1));
        }
        cur.rows += !k && is_row(s);
    }
    cur.last = nlines;
    if (cur.rows || !runs->len)
        g_array_append_val(runs, cur);
    return runs;
}

/* Picks the run to read (run: 1-based, 0 for the only one): false with an error where the log has several
 * and none was named, or fewer than `run`. */
static bool pick_run(parser *p, GArray *runs, int run, nccltests_log_run *out)
{
    int n = (int)runs->len;
    if (run == 0 && n > 1) {
        const run_span *a = &g_array_index(runs, run_span, 0), *b = &g_array_index(runs, run_span, 1);
        p->line = b->first;
        fail(p, NCCLTESTS_ERROR_MIXED, 1,
             "expected one nccl-tests run per file, got a second one here (run 1: lines %d-%d%s%s; run 2: lines "
             "%d-%d%s%s; %d runs in all): validate --run N reads run N", a->first, a->last, *a->coll ? ", " : "",
             a->coll, b->first, b->last, *b->coll ? ", " : "", b->coll, n);
        return false;
    }
    if (run > n) {
        p->line = 1;
        fail(p, NCCLTESTS_ERROR_NO_TABLE, 1, "expected run %d (--run), got %d nccl-tests run%s with a result table",
             run, n, n == 1 ? "" : "s");
        return false;
    }
    const run_span *r = &g_array_index(runs, run_span, run ? run - 1 : 0);
    *out = (nccltests_log_run){.run = run ? run : 1, .nruns = n, .first_line = r->first, .last_line = r->last};
    if (n > 1 || r->first > 1 || r->rows) { /* read its lines only (a run without rows before it is passed over) */
        p->run_lo = r->first;
        p->run_hi = r->last;
    }
    return true;
}

nccltests_log *nccltests_parse_run(const char *name, const char *text, size_t len, int coll_hint, int run,
                                   GError **err)
{
    parser p = {.name = name, .err = err, .coll_start = -1, .coll_bang = -1, .coll_cmd = -1,
                .avg_busbw = NAN, .row_style = -1};
    if (!check_text(&p, text, len))
        return NULL;
    p.rows = g_array_new(FALSE, TRUE, sizeof(nccltests_row));
    p.tuning = g_array_new(FALSE, TRUE, sizeof(nccltests_tuning));
    p.rings = g_array_new(FALSE, TRUE, sizeof(nccltests_ring));
    p.trees = g_array_new(FALSE, TRUE, sizeof(nccltests_tree));
    p.tree_ranks = g_hash_table_new(g_direct_hash, g_direct_equal);
    p.latbw = g_array_new(FALSE, TRUE, sizeof(nccltests_latbw));
    p.env = g_ptr_array_new_with_free_func(g_free);
    p.env_line = g_array_new(FALSE, FALSE, sizeof(int));
    p.sizes = g_hash_table_new_full(sim_int64_hash, g_int64_equal, g_free, NULL);
    p.row_id = g_array_new(FALSE, FALSE, sizeof(nccltests_sweep_id));
    p.seen_groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    p.heads = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    char *copy = g_strndup(text, len);
    /* the lines, each without its CR (CRLF files), tabs read as blanks (one column each) */
    GPtrArray *lines = g_ptr_array_new();
    for (char *line = copy; line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        size_t n = strlen(line);
        if (n && line[n - 1] == '\r')
            line[--n] = '\0';
        for (char *c = line; (c = strchr(c, '\t'));)
            *c = ' ';
        g_ptr_array_add(lines, line);
        line = nl ? nl + 1 : NULL;
    }
    nccltests_log *log = NULL;
    nccltests_log_run span = {0};
    GArray *runs = find_runs(&p, (char **)lines->pdata, (int)lines->len);
    bool ok = pick_run(&p, runs, run, &span);
    g_array_free(runs, TRUE);
    for (guint i = 0; ok && i < lines->len; i++) {
        p.line = (int)i + 1;
        ok = one_line(&p, lines->pdata[i]);
    }
    if (ok && p.pend_n)
        ok = pending_cut(&p);
    if (ok) {
        p.line = (int)lines->len;
        log = finish(&p, coll_hint);
    }
    if (log)
        log->run = span;
    g_ptr_array_free(lines, TRUE);
    g_hash_table_destroy(p.heads);
    if (p.rows)
        g_array_free(p.rows, TRUE);
    if (p.tuning)
        g_array_free(p.tuning, TRUE);
    if (p.rings)
        g_array_free(p.rings, TRUE);
    if (p.trees)
        g_array_free(p.trees, TRUE);
    g_hash_table_destroy(p.tree_ranks);
    if (p.latbw)
        g_array_free(p.latbw, TRUE);
    g_free(p.latbw_cols);
    if (p.env)
        g_ptr_array_free(p.env, TRUE);
    if (p.env_line)
        g_array_free(p.env_line, TRUE);
    if (p.row_id)
        g_array_free(p.row_id, TRUE);
    g_hash_table_destroy(p.seen_groups);
    g_hash_table_destroy(p.sizes);
    g_free(copy);
    return log;
}

nccltests_log *nccltests_parse(const char *name, const char *text, size_t len, int coll_hint, GError **err)
{
    return nccltests_parse_run(name, text, len, coll_hint, 0, err);
}

nccltests_log *nccltests_read_run(const char *path, int coll_hint, int run, GError **err)
{
    char *text = NULL;
    gsize len = 0;
    GError *io = NULL;
    if (!g_file_get_contents(path, &text, &len, &io)) {
        g_set_error(err, NCCLTESTS_ERROR, NCCLTESTS_ERROR_IO, "%s: cannot read: %s", path,
                    io->message);
        g_error_free(io);
        return NULL;
    }
    tracefile_blank_bom(text, len);
    nccltests_log *log = nccltests_parse_run(path, text, len, coll_hint, run, err);
    g_free(text);
    return log;
}

nccltests_log *nccltests_read_with(const char *path, int coll_hint, GError **err)
{
    return nccltests_read_run(path, coll_hint, 0, err);
}

nccltests_log *nccltests_read(const char *path, GError **err)
{
    return nccltests_read_with(path, -1, err);
}

void nccltests_log_free(nccltests_log *log)
{
    if (!log)
        return;
    g_free(log->path);
    g_free(log->coll_source);
    g_free(log->nranks_source);
    g_free(log->rows);
    g_strfreev(log->env);
    g_free(log->env_line);
    g_free(log->tuning);
    g_free(log->rings);
    g_free(log->trees);
    g_free(log->latbw);
    g_free(log->row_id);
    g_free(log);
}

void nccltests_nccl_version(int code, char *buf, size_t len)
{
    if (code >= 20900)
        g_snprintf(buf, len, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
    else
        g_snprintf(buf, len, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
}

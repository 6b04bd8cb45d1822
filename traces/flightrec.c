/* traces/flightrec.c - PyTorch Flight Recorder JSON dumps as a trace (see
 * flightrec.h). Format: pytorch torch/csrc/distributed/c10d/FlightRecorder
 * (dump_json): {"version", "pg_config": {name: {"name", "desc", "ranks":
 * "[0, 1]"}}, "pg_status", "entries": [{"record_id", "pg_id",
 * "process_group": [name, desc], "collective_seq_id", "p2p_seq_id",
 * "op_id", "profiling_name", "time_created_ns", "duration_ms" (with
 * timing), "input_sizes": [[dims]], "input_dtypes": ["Float"],
 * "output_sizes", "output_dtypes", "state", "time_discovered_started_ns",
 * "time_discovered_completed_ns", "retired", "timeout_ms", "is_p2p"}]};
 * ../shared/reference/formats.md section 3. */
#include "traces/flightrec.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/a2a_split.h"
#include "traces/json_arena.h"
#include "traces/kineto.h"
#include "traces/tracefile.h"

#define FR_MAX_BYTES 1125899906842624.0 /* 2^50, as the other importers */
#define FR_MAX_RANKS 1048576

/* One entry kept from a file, before the ranks are lined up. */
typedef struct {
    trace_op_kind kind;
    coll_kind coll;
    int group;        /* trace group */
    int64_t seq;      /* collective_seq_id (collectives) */
    int occ;          /* how many entries of this rank had (group, seq) before it (coalesced launches) */
    int peer;         /* global rank (send/recv) */
    uint64_t bytes;
    double in_b, out_b; /* input_sizes' and output_sizes' bytes (an alltoall's, when uneven, differ by rank) */
    int64_t dur_ps;   /* duration_ms, or -1 */
    int64_t ts_ps;    /* time_created_ns from the rank's first entry, or -1 */
    const char *name; /* profiling_name, borrowed from the document until added */
    int idx;          /* index in $.entries */
} fr_ent;

typedef struct {
    int rank;         /* the file's global rank */
    GArray *ent;      /* fr_ent */
    GStringChunk *names; /* the entries' names, kept past the document */
} fr_file;

typedef struct {
    trace *t;
    const char *path;
    GHashTable *pg;   /* process group name -> trace group + 1 (owned keys) */
    int unknown;      /* entries of kinds not replayed */
    char unknown_name[64];
    int entries;
} fr_ctx;

#define fail trace_fail /* "path: message" */

gboolean flightrec_sniff(const char *head, gssize len)
{
    /* dump_json builds an nlohmann::json, whose objects keep their keys sorted: "entries"
     * (each opening with "collective_seq_id") comes before "pg_config", which a real ring
     * buffer pushes far past the head; a Kineto trace has a "pg_config" too, inside its
     * "distributedInfo" */
    return (g_strstr_len(head, len, "\"pg_config\"") || g_strstr_len(head, len, "\"collective_seq_id\"")) &&
           !g_strstr_len(head, len, "\"traceEvents\"") && !g_strstr_len(head, len, "\"distributedInfo\"");
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The groups of pg_config into the trace, by name. */
static gboolean load_groups(fr_ctx *c, const cJSON *root, int *max_rank, GError **err)
{
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(root, "pg_config");
    if (!cJSON_IsObject(cfg))
        return fail(err, TRACE_ERROR_SCHEMA, c->path, "$.pg_config: expected an object of process groups");
    for (const cJSON *g = cfg->child; g; g = g->next) {
        GArray *ra = NULL;
        const char *why = "an empty list";
        if (!kineto_ranks_parse(cJSON_GetObjectItemCaseSensitive(g, "ranks"), 0, &ra, &why) || !ra)
            return fail(err, TRACE_ERROR_VALUE, c->path, "$.pg_config[\"%.64s\"].ranks: %s", g->string, why);
        int n = (int)ra->len;
        int *ranks = (int *)(void *)g_array_free(ra, FALSE);
        for (int i = 0; i < n; i++)
            *max_rank = MAX(*max_rank, ranks[i]);
        gpointer had = g_hash_table_lookup(c->pg, g->string);
        if (!had) {
            int gi = trace_group_add(c->t, g->string, ranks, n);
            g_hash_table_insert(c->pg, g_strdup(g->string), GINT_TO_POINTER(gi + 1));
        } else { /* another rank's file named it: the same members, or the dumps are of different jobs */
            const trace_group *tg = g_ptr_array_index(c->t->groups, GPOINTER_TO_INT(had) - 1);
            int *sorted = g_memdup2(ranks, sizeof(int) * (gsize)n);
            qsort(sorted, (size_t)n, sizeof(int), cmp_int);
            bool same = n == tg->size && !memcmp(sorted, tg->ranks, sizeof(int) * (size_t)n);
            g_free(sorted);
            if (!same) {
                g_free(ranks);
                return fail(err, TRACE_ERROR_MISMATCH, c->path, "$.pg_config[\"%.64s\"].ranks: other ranks than "
                            "an earlier file gives the same process group", g->string);
            }
        }
        g_free(ranks);
    }
    return TRUE;
}

/* Elements x type size over a list of tensors ([[dims], ...] and their types). */
static gboolean tensor_bytes(const cJSON *sizes, const cJSON *types, double *out)
{
    *out = 0;
    if (!sizes)
        return TRUE;
    if (!cJSON_IsArray(sizes))
        return FALSE;
    const cJSON *ty = cJSON_IsArray(types) ? types->child : NULL;
    for (const cJSON *t = sizes->child; t; t = t->next, ty = ty ? ty->next : NULL) {
        if (!cJSON_IsArray(t))
            return FALSE;
        double n = 1;
        for (const cJSON *d = t->child; d; d = d->next) {
            if (!cJSON_IsNumber(d) || d->valuedouble < 0 || d->valuedouble != floor(d->valuedouble))
                return FALSE;
            n *= d->valuedouble;
            if (n > FR_MAX_BYTES)
                return FALSE;
        }
        int b = ty && cJSON_IsString(ty) ? kineto_dtype_bytes(ty->valuestring) : 0;
        if (!b)
            return FALSE; /* an unknown or missing type */
        *out += n * b;
        if (*out > FR_MAX_BYTES)
            return FALSE;
    }
    return TRUE;
}

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && fabs(v->valuedouble) <= 9007199254740992.0 ? v->valuedouble : dflt;
}

/* "send 3->5" / "recv 5<-3" (group ranks, this rank's first): the peer's; -1 if not so. */
static int p2p_peer(const char *op, bool *send)
{
    int a, b, used = 0;
    if (sscanf(op, "send %d->%d%n", &a, &b, &used) == 2 && !op[used]) {
        *send = true;
        return b;
    }
    if (sscanf(op, "recv %d<-%d%n", &a, &b, &used) == 2 && !op[used]) {
        *send = false;
        return b;
    }
    return -1;
}

/* One entry: appended to f->ent, or counted as a kind not replayed. */
static gboolean load_entry(fr_ctx *c, fr_file *f, const cJSON *e, int idx, int64_t *t0, GError **err)
{
#define BAD(code, ...) fail(err, code, c->path, __VA_ARGS__)
    if (!cJSON_IsObject(e))
        return BAD(TRACE_ERROR_SCHEMA, "$.entries[%d]: expected an object", idx);
    const cJSON *pn = cJSON_GetObjectItemCaseSensitive(e, "profiling_name");
    if (!cJSON_IsString(pn))
        return BAD(TRACE_ERROR_SCHEMA, "$.entries[%d]: \"profiling_name\" (a string) is required", idx);
    const char *op = g_str_has_prefix(pn->valuestring, "nccl:") ? pn->valuestring + 5 : pn->valuestring;
    const cJSON *pg = cJSON_GetObjectItemCaseSensitive(e, "process_group");
    const char *pgname = cJSON_IsArray(pg) && cJSON_IsString(pg->child) ? pg->child->valuestring : NULL;
    gpointer gv = pgname ? g_hash_table_lookup(c->pg, pgname) : NULL;
    if (!gv)
        return BAD(TRACE_ERROR_REF, "$.entries[%d].process_group: expected [name, desc] naming a group of "
                   "$.pg_config, got %.64s", idx, pgname ? pgname : "none");
    fr_ent x = {.group = GPOINTER_TO_INT(gv) - 1, .dur_ps = -1, .ts_ps = -1, .idx = idx, .peer = -1};
    const trace_group *grp = g_ptr_array_index(c->t->groups, x.group);
    bool send = false;
    int peer = p2p_peer(op, &send);
    coll_kind k;
    if (peer >= 0) {
        if (peer >= grp->size)
            return BAD(TRACE_ERROR_VALUE, "$.entries[%d].profiling_name: peer %d, but group \"%.64s\" has %d ranks",
                       idx, peer, pgname, grp->size);
        x.kind = send ? TOP_SEND : TOP_RECV;
        x.peer = grp->ranks[peer];
    } else if (!strcmp(op, "barrier") || kineto_coll_from_name(op, &k) == 0) {
        x.kind = TOP_COLL;
        x.coll = strcmp(op, "barrier") ? k : COLL_ALL_REDUCE; /* PyTorch's barrier: an all_reduce of one element */
        double seq = num(e, "collective_seq_id", -1);
        if (!(seq >= 0 && seq < (double)TRACE_MAX_SEQ) || seq != floor(seq)) /* (trace_coll_key: 40 bits) */
            return BAD(TRACE_ERROR_VALUE, "$.entries[%d].collective_seq_id: expected a whole number in 0..2^40-1", idx);
        x.seq = (int64_t)seq;
    } else {
        if (!c->unknown++)
            g_strlcpy(c->unknown_name, pn->valuestring, sizeof c->unknown_name);
        return TRUE;
    }
    double in, out;
    if (!tensor_bytes(cJSON_GetObjectItemCaseSensitive(e, "input_sizes"),
                      cJSON_GetObjectItemCaseSensitive(e, "input_dtypes"), &in) ||
        !tensor_bytes(cJSON_GetObjectItemCaseSensitive(e, "output_sizes"),
                      cJSON_GetObjectItemCaseSensitive(e, "output_dtypes"), &out))
        return BAD(TRACE_ERROR_VALUE, "$.entries[%d]: input_sizes/output_sizes: expected lists of whole dimensions "
                   "with a known type each (input_dtypes/output_dtypes), at most 2^50 bytes", idx);
    /* nccl-tests' size: the buffer; all_gather its total output, reduce_scatter its total input */
    double b = x.kind != TOP_COLL ? fmax(in, out)
             : x.coll == COLL_ALL_GATHER ? (out > 0 ? out : in * grp->size)
             : x.coll == COLL_REDUCE_SCATTER ? (in > 0 ? in : out * grp->size)
             /* gather's input is the rank's piece, and so is scatter's (PyTorch records the received
              * tensor as its input); the other side is the root's list of every piece */
             : x.coll == COLL_GATHER || x.coll == COLL_SCATTER ? (in > 0 ? in * grp->size : out)
             : in > 0 ? in : out;
    if (!strcmp(op, "barrier"))
        b = fmax(b, 4);
    if (b > FR_MAX_BYTES)
        return BAD(TRACE_ERROR_VALUE, "$.entries[%d]: over 2^50 bytes", idx);
    x.bytes = (uint64_t)b;
    x.in_b = in;
    x.out_b = out;
    const cJSON *dv = cJSON_GetObjectItemCaseSensitive(e, "duration_ms");
    double ms = num(e, "duration_ms", -1);
    if (dv && !cJSON_IsNull(dv) && !(ms >= 0 && ms < 1e9)) /* (was dropped silently) */
        return BAD(TRACE_ERROR_VALUE, "$.entries[%d].duration_ms: expected milliseconds in 0..1e9 (or null)", idx);
    if (ms >= 0)
        x.dur_ps = (int64_t)llround(ms * 1e9);
    double ns = num(e, "time_created_ns", -1);
    if (ns >= 0) {
        if (*t0 < 0)
            *t0 = (int64_t)ns;
        x.ts_ps = ((int64_t)ns - *t0) * 1000;
    }
    x.name = g_string_chunk_insert_const(f->names, pn->valuestring);
    g_array_append_val(f->ent, x);
    return TRUE;
#undef BAD
}

static gboolean load_file(fr_ctx *c, fr_file *f, int *max_rank, GError **err)
{
    gsize len;
    char *text = tracefile_read(c->path, &len, err);
    if (!text)
        return FALSE;
    json_arena *arena = json_arena_open();
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    gboolean ok = root != NULL;
    if (!ok) {
        int line, col;
        gsize off = end ? (gsize)(end - text) : 0;
        tracefile_line_col(text, len, off, &line, &col);
        fail(err, TRACE_ERROR_PARSE, c->path, "%d:%d: (byte %" G_GSIZE_FORMAT ") invalid JSON", line, col, off);
    } else if (!cJSON_IsObject(root)) {
        ok = fail(err, TRACE_ERROR_SCHEMA, c->path, "$: expected a Flight Recorder dump (an object with pg_config)");
    }
    ok = ok && load_groups(c, root, max_rank, err);
    const cJSON *ents = ok ? cJSON_GetObjectItemCaseSensitive(root, "entries") : NULL;
    if (ok && ents && !cJSON_IsArray(ents))
        ok = fail(err, TRACE_ERROR_SCHEMA, c->path, "$.entries: expected an array");
    int idx = 0;
    int64_t t0 = -1;
    for (const cJSON *e = ents ? ents->child : NULL; ok && e; e = e->next, idx++)
        ok = load_entry(c, f, e, idx, &t0, err);
    c->entries += idx;
    if (!arena)
        cJSON_Delete(root);
    json_arena_close(arena);
    g_free(text);
    return ok;
}

/* The rank a dump file's name ends in (TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>,
 * an extension allowed); -1 if none. */
static int rank_of_name(const char *path)
{
    g_autofree char *base = g_path_get_basename(path);
    char *dot = strrchr(base, '.');
    if (dot && dot != base && !g_ascii_isdigit(dot[1]))
        *dot = 0;
    size_t n = strlen(base), i = n;
    while (i > 0 && g_ascii_isdigit(base[i - 1]))
        i--;
    if (i == n || n - i > 7)
        return -1;
    long r = strtol(base + i, NULL, 10);
    return r < FR_MAX_RANKS ? (int)r : -1;
}

/* Which entries every side holds (see flightrec.h); *dropped counts the others. */
static void line_up(trace *t, fr_file *fs, int nf, int *dropped)
{
    /* collectives: per (group, seq), the files that hold it and the fewest entries one holds */
    GHashTable *seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    for (int i = 0; i < nf; i++) {
        GHashTable *mine = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
        for (guint j = 0; j < fs[i].ent->len; j++) {
            fr_ent *x = &g_array_index(fs[i].ent, fr_ent, j);
            if (x->kind != TOP_COLL)
                continue;
            int64_t key = trace_coll_key(x->group, x->seq);
            x->occ = GPOINTER_TO_INT(g_hash_table_lookup(mine, &key));
            g_hash_table_replace(mine, g_memdup2(&key, sizeof key), GINT_TO_POINTER(x->occ + 1));
        }
        GHashTableIter it;
        gpointer k, v;
        g_hash_table_iter_init(&it, mine);
        while (g_hash_table_iter_next(&it, &k, &v)) {
            int *s = g_hash_table_lookup(seen, k); /* [files, fewest] */
            if (!s) {
                s = g_new(int, 2);
                s[0] = 0, s[1] = INT32_MAX;
                g_hash_table_insert(seen, g_memdup2(k, sizeof(int64_t)), s);
            }
            s[0]++;
            s[1] = MIN(s[1], GPOINTER_TO_INT(v));
        }
        g_hash_table_destroy(mine);
    }
    /* sends and receives: per (src, dst), the last min(sends, receives) of each */
    GHashTable *pairs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    for (int i = 0; i < nf; i++)
        for (guint j = 0; j < fs[i].ent->len; j++) {
            const fr_ent *x = &g_array_index(fs[i].ent, fr_ent, j);
            if (x->kind == TOP_COLL)
                continue;
            int src = x->kind == TOP_SEND ? fs[i].rank : x->peer, dst = x->kind == TOP_SEND ? x->peer : fs[i].rank;
            int64_t key = ((int64_t)src << 21) | dst;
            int *s = g_hash_table_lookup(pairs, &key); /* [sends, receives, sends seen, receives seen] */
            if (!s)
                g_hash_table_insert(pairs, g_memdup2(&key, sizeof key), s = g_new0(int, 4));
            s[x->kind == TOP_RECV]++;
        }
    for (int i = 0; i < nf; i++)
        for (guint j = 0; j < fs[i].ent->len; j++) {
            fr_ent *x = &g_array_index(fs[i].ent, fr_ent, j);
            gboolean keep;
            if (x->kind == TOP_COLL) {
                int64_t key = trace_coll_key(x->group, x->seq);
                const int *s = g_hash_table_lookup(seen, &key);
                const trace_group *g = g_ptr_array_index(t->groups, x->group);
                keep = s && s[0] == g->size && x->occ < s[1];
            } else {
                int src = x->kind == TOP_SEND ? fs[i].rank : x->peer, dst = x->kind == TOP_SEND ? x->peer : fs[i].rank;
                int64_t key = ((int64_t)src << 21) | dst;
                int *s = g_hash_table_lookup(pairs, &key), side = x->kind == TOP_RECV;
                int k = MIN(s[0], s[1]);
                keep = s[2 + side]++ >= s[side] - k; /* the last k of this side's */
            }
            if (!keep) {
                x->kind = TOP_KINDS; /* left out */
                (*dropped)++;
            }
        }
    g_hash_table_destroy(seen);
    g_hash_table_destroy(pairs);
}

static gboolean is_dump(const char *full, const char *name)
{
    (void)name;
    char head[4096 + 1];
    gssize len = tracefile_head(full, head, sizeof head);
    return len > 0 && flightrec_sniff(head, len);
}

trace *trace_flightrec_load(const char *path_or_dir, char **note, GError **err)
{
    if (note)
        *note = NULL;
    GPtrArray *files = tracefile_list(path_or_dir, is_dump, "Flight Recorder dumps (JSON with \"pg_config\")", err);
    if (!files)
        return NULL;
    int nf = (int)files->len, max_rank = 0;
    fr_file *fs = g_new0(fr_file, nf);
    gboolean ok = TRUE, dir = g_file_test(path_or_dir, G_FILE_TEST_IS_DIR);
    /* the trace's ranks are known once every group is: one rank for a single file */
    trace *t = trace_new(1, path_or_dir);
    fr_ctx c = {.t = t, .pg = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL)};
    for (int i = 0; i < nf && ok; i++) {
        c.path = g_ptr_array_index(files, i);
        fs[i].ent = g_array_new(FALSE, FALSE, sizeof(fr_ent));
        fs[i].names = g_string_chunk_new(4096);
        fs[i].rank = rank_of_name(c.path);
        if (dir && fs[i].rank < 0)
            ok = fail(err, TRACE_ERROR_VALUE, c.path, "cannot tell its rank: a dump's name ends in its rank "
                      "(TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>, e.g. nccl_trace_rank_3)");
        for (int j = 0; ok && j < i; j++)
            if (fs[j].rank == fs[i].rank)
                ok = fail(err, TRACE_ERROR_VALUE, c.path, "rank %d again (also %s)", fs[i].rank,
                          (const char *)g_ptr_array_index(files, j));
        max_rank = MAX(max_rank, fs[i].rank);
        ok = ok && load_file(&c, &fs[i], &max_rank, err);
    }
    int dropped = 0, kept = 0, kept_p2p = 0;
    if (ok && dir) { /* every rank a group names, files or not (a missing one's groups are left out) */
        t->nranks = max_rank + 1;
        t->ranks = g_renew(trace_rank, t->ranks, t->nranks);
        for (int r = 1; r < t->nranks; r++)
            t->ranks[r].ops = g_array_new(FALSE, TRUE, sizeof(trace_op));
        line_up(t, fs, nf, &dropped);
    }
    int fused = 0, merged = 0, rootless = 0;
    /* each rank's alltoalls, whose splits a dump does not record: their totals (a2a_settle) */
    GHashTable **a2a = g_new0(GHashTable *, t->nranks);
    for (int i = 0; ok && i < nf; i++) {
        int r = dir ? fs[i].rank : 0;
        if (!a2a[r])
            a2a[r] = a2a_rows_new();
        /* per group: the entry behind its last op (a collective), or NULL; and that op's index */
        const fr_ent **last = g_new0(const fr_ent *, t->groups->len);
        uint32_t *last_at = g_new0(uint32_t, t->groups->len);
        for (guint j = 0; j < fs[i].ent->len; j++) {
            const fr_ent *x = &g_array_index(fs[i].ent, fr_ent, j);
            if (x->kind == TOP_KINDS)
                continue;
            /* entries of one coalesced block (PyTorch 2.7+ records each op of a startCoalescing/
             * endCoalescing block with the block's collective_seq_id) are one NCCL group: one kernel,
             * the ops of one kind one aggregate of their summed size, as NCCL's planner runs them and
             * as the NCCL log importer reads them (fused) */
            const fr_ent *prev = x->kind == TOP_COLL ? last[x->group] : NULL;
            bool block = prev && prev->seq == x->seq;
            if (block && prev->coll == x->coll) {
                trace_op *o = &g_array_index(t->ranks[r].ops, trace_op, last_at[x->group]);
                if (o->bytes + x->bytes > FR_MAX_BYTES) { /* (the sum wrapped, or ran for hours) */
                    ok = fail(err, TRACE_ERROR_VALUE, g_ptr_array_index(files, (guint)i),
                              "$.entries[%d]: a coalesced block over 2^50 bytes", x->idx);
                    break;
                }
                o->bytes += x->bytes;
                o->dur_ps = o->dur_ps >= 0 && x->dur_ps >= 0 ? MAX(o->dur_ps, x->dur_ps) : -1;
                a2a_row *row = g_hash_table_lookup(a2a[r], GUINT_TO_POINTER(last_at[x->group]));
                if (row) {
                    row->in_b += x->in_b;
                    row->out_b += x->out_b;
                }
                merged++;
                fused++;
                kept++;
                continue;
            }
            /* each process group on a stream of its own, as PyTorch gives each its NCCL stream */
            trace_op op = {.kind = x->kind, .stream = 1 + x->group, .name = x->name, .dur_ps = x->dur_ps,
                           .coll = x->coll, .group = x->group, .bytes = x->bytes, .seq = -1, .peer = x->peer,
                           .ts_ps = x->ts_ps, .src_index = x->idx, .fused = block};
            uint32_t at = trace_op_add(t, r, &op);
            if (x->kind == TOP_COLL && x->coll == COLL_ALLTOALL) {
                a2a_row *row = g_new0(a2a_row, 1);
                *row = (a2a_row){.in_b = x->in_b, .out_b = x->out_b, .n = ((const trace_group *)g_ptr_array_index(
                                     t->groups, x->group))->size, .known = A2A_TOTALS,
                                 .path = g_ptr_array_index(files, (guint)i), .what = "$.entries", .ev = x->idx};
                g_hash_table_insert(a2a[r], GUINT_TO_POINTER(at), row);
            }
            fused += block;
            kept += x->kind == TOP_COLL;
            kept_p2p += x->kind != TOP_COLL;
            rootless += x->kind == TOP_COLL && coll_default_root(x->coll) >= 0;
            if (x->kind == TOP_COLL) {
                last[x->group] = x;
                last_at[x->group] = at;
            } else {
                last[x->group] = NULL;
            }
        }
        g_free(last);
        g_free(last_at);
    }
    gboolean whole = ok && trace_check_whole(t, NULL);
    a2a_notes an = {0};
    ok = ok && (!whole || a2a_settle(t, a2a, &an, err));
    ok = ok && (!whole || trace_validate(t, err));
    if (ok && !whole)
        an.alone = a2a_count_alone(a2a, t->nranks);
    for (int r = 0; r < t->nranks; r++)
        if (a2a[r])
            g_hash_table_destroy(a2a[r]);
    g_free(a2a);
    if (ok && note) {
        GString *m = g_string_new(NULL);
        g_string_printf(m, "flight recorder: %d file%s, %d entries: %d collectives and %d sends/receives replayed "
                        "(communication only: a dump records no compute)", nf, nf == 1 ? "" : "s", c.entries, kept,
                        kept_p2p);
        if (fused)
            g_string_append_printf(m, "; %d in a coalesced block with the one before (one NCCL group: one kernel), "
                                      "%d of them of its kind, replayed with it as one collective of their summed "
                                      "size", fused, merged);
        if (rootless)
            g_string_append_printf(m, "; %d broadcast/reduce/gather/scatter with root 0 (a dump records no root)",
                                   rootless);
        if (an.totals)
            g_string_append_printf(m, "; %d uneven alltoall%s (members sending or receiving unequal sizes) replayed "
                                   "from each member's totals (a dump records no split sizes: member i sends member j "
                                   "a share in proportion to what j receives)", an.totals, an.totals == 1 ? "" : "s");
        if (an.wide)
            g_string_append_printf(m, "; %d uneven alltoall%s of groups over %d ranks replayed as even splits of the "
                                   "members' mean", an.wide, an.wide == 1 ? "" : "s", A2A_MAX_MATRIX);
        if (an.alone)
            g_string_append_printf(m, "; %d alltoall%s sending and receiving unequal sizes in a trace without all of "
                                   "%s group's ranks replayed as even splits", an.alone, an.alone == 1 ? "" : "s",
                                   an.alone == 1 ? "its" : "their");
        if (dropped)
            g_string_append_printf(m, "; %d not in every member's window", dropped);
        if (c.unknown)
            g_string_append_printf(m, "; %d of kinds not replayed (e.g. %s)", c.unknown, c.unknown_name);
        *note = g_string_free(m, FALSE);
    }
    for (int i = 0; i < nf; i++) {
        if (fs[i].ent)
            g_array_free(fs[i].ent, TRUE);
        if (fs[i].names)
            g_string_chunk_free(fs[i].names);
    }
    g_free(fs);
    g_hash_table_destroy(c.pg);
    g_ptr_array_unref(files);
    if (!ok) {
        trace_free(t);
        return NULL;
    }
    return t;
}

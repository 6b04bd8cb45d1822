/* traces/nccllog.c - NCCL debug logs (NCCL_DEBUG=INFO,
 * NCCL_DEBUG_SUBSYS=INIT,COLL) as a trace; see nccllog.h. Formats: NCCL
 * src/enqueue.cc ("%s: opCount %lx sendbuff %p recvbuff %p count %zu
 * datatype %d op %d root %d comm %p [nranks=%d] stream %p") and init.cc
 * ("comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId
 * 0x%llx - Init COMPLETE"; older NCCLs print no nvmlDev and no commId), each
 * after debug.cc's "%s:%d:%d [%d] NCCL INFO " (host, pid, tid, device).
 */
#include "traces/nccllog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "traces/tracefile.h"

#define NL_MAX_RANKS 1048576
#define NL_MAX_BYTES 1125899906842624.0 /* 2^50, as the other importers */

/* One communicator as one process sees it. */
typedef struct {
    char *ptr;    /* "0x55d1c5a0" */
    char *id;     /* commId, or NULL */
    char *parent; /* ncclCommSplit's parent comm (a pointer of this process), or NULL */
    int color, split; /* ncclCommSplit's color and splitCount (-1: not printed) */
    int rank, nranks;
    int order;    /* among this process's communicators of this size */
    int group;    /* index into the communicator groups, after grouping */
    bool grouped; /* group is set */
    int line;     /* of its first Init line */
    const char *file;
    uint64_t oc0; /* the opCount of its first call in this process */
    int ncalls;   /* its calls in this process */
    bool oc_moves; /* they print more than one opCount (mark_runs): NCCL 2.27+ advances it
                    * only for launches with proxy (network) work, so on one node it stays 0
                    * and says nothing of groups */
    GArray *rings; /* nccltests_ring this process printed for it (a channel once), or NULL */
    GArray *trees; /* nccltests_tree of its Trees line, or NULL */
} nl_comm;

/* One call as logged. */
typedef struct {
    trace_op_kind kind;
    coll_kind coll;
    const char *name; /* "AllReduce" (static) */
    nl_comm *comm;
    uint64_t count;
    int dt, root;
    int stream;       /* 1.. per distinct stream pointer of the process */
    uint64_t opcount; /* NCCL's: the calls of one group (ncclGroupStart/End) share it */
    uint32_t run;     /* sends/receives: the group it is in (mark_runs), 0 for collectives */
    int tuning;       /* its TUNING line: index + 1 into nl_ctx.tuning, 0 none */
    bool self;        /* a send/receive to the rank itself: a local copy */
    uint32_t a2a_len; /* > 0 on the first call of a group that is an all-to-all: the group's calls */
    bool fused;       /* a collective launched in one group with the collective before it on its
                       * stream (same communicator and opCount, where opCount moves: mark_fused) */
    uint32_t agg_len; /* > 0 on the first of adjacent calls of one group and one function, root
                       * and type: NCCL's planner sizes them as one (agg_len of them) */
    int line;
    const char *file;
} nl_call;

typedef struct {
    char *key;           /* "host:pid [dev]": a rank (nccl-tests -g 8 drives 8 from one thread) */
    GHashTable *comms;   /* ptr -> nl_comm* (owned) */
    GPtrArray *comm_list; /* the same in order of first Init line */
    GHashTable *streams; /* ptr -> id */
    GArray *calls;       /* nl_call */
    int world;           /* global rank */
    nl_comm *cur;        /* the communicator of its latest Init line: its ring and Trees lines follow */
} nl_proc;

/* A communicator: its members' processes by rank. */
typedef struct {
    char *key;           /* commId or "nranks=N#k" */
    int nranks;
    nl_proc **member;    /* nranks, NULL where no process said so */
    int *grank;          /* global ranks by communicator rank */
    int index;           /* in the list of communicators */
    int tgroup;          /* trace group */
    bool a2a_off;        /* its members' groups of sends and receives do not line up as
                          * all-to-alls: replayed as they are */
    bool fuse_off;       /* its members' groups of collectives differ (mark_fused): each of
                          * their collectives replays as launched alone */
    const nl_comm *first; /* for messages */
} nl_group;

typedef struct {
    GHashTable *procs;   /* key -> nl_proc* */
    GPtrArray *order;    /* nl_proc* in order of first line */
    GStringChunk *files; /* file names the calls point to */
    GArray *tuning;      /* nccltests_tuning, the TUNING lines tied to a call */
    int lines, calls, skipped, self, a2a;
    int fused, aggregated; /* collectives launched with the one before; of them, merged into it */
    int64_t expanded; /* sends and receives of Gather/Scatter roots */
    const nl_group *world; /* the communicator of all ranks (number_ranks) */
    const char *end_file; /* the last file read and its line count: where "no call" points */
    int end_line;
    char skipped_name[32];
} nl_ctx;

/* Data type sizes by ncclDataType_t (src/nccl.h.in): int8, uint8, int32,
 * uint32, int64, uint64, float16, float32, float64, bfloat16, fp8 e4m3, fp8
 * e5m2. */
static const int dt_size[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};

gboolean nccllog_sniff(const char *head, gssize len)
{
    return g_strstr_len(head, len, " NCCL INFO ") != NULL;
}

static void comm_free(gpointer p)
{
    nl_comm *c = p;
    g_free(c->ptr);
    g_free(c->id);
    g_free(c->parent);
    if (c->rings)
        g_array_unref(c->rings);
    if (c->trees)
        g_array_unref(c->trees);
    g_free(c);
}

static void proc_free(gpointer p)
{
    nl_proc *x = p;
    g_free(x->key);
    g_ptr_array_unref(x->comm_list);
    g_hash_table_destroy(x->comms);
    g_hash_table_destroy(x->streams);
    g_array_unref(x->calls);
    g_free(x);
}

/* The word after " key " in msg (NUL-terminated copy in buf), or NULL. */
static const char *field(const char *msg, const char *key, char *buf, size_t n)
{
    size_t kl = strlen(key);
    for (const char *p = msg; (p = strstr(p, key)); p += kl) {
        if ((p != msg && p[-1] != ' ') || p[kl] != ' ')
            continue;
        const char *v = p + kl + 1;
        size_t l = strcspn(v, " \t\r\n");
        if (l == 0 || l >= n)
            return NULL;
        memcpy(buf, v, l);
        buf[l] = '\0';
        return buf;
    }
    return NULL;
}

static bool int_of(const char *s, long lo, long hi, long *out)
{
    if (!s)
        return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static nl_proc *proc_of(nl_ctx *c, const char *key)
{
    nl_proc *p = g_hash_table_lookup(c->procs, key);
    if (!p) {
        p = g_new0(nl_proc, 1);
        p->key = g_strdup(key);
        p->comms = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, comm_free);
        p->comm_list = g_ptr_array_new();
        p->streams = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        p->calls = g_array_new(FALSE, FALSE, sizeof(nl_call));
        p->world = -1;
        g_hash_table_insert(c->procs, p->key, p);
        g_ptr_array_add(c->order, p);
    }
    return p;
}

#define BAD(...) trace_fail(err, TRACE_ERROR_VALUE, where, __VA_ARGS__)

/* "comm 0x.. rank R nranks N ... [commId 0x..]" (Init START/COMPLETE, or
 * the comm line with nRanks). */
static gboolean init_line(nl_proc *p, const char *msg, const char *file, int ln, const char *where, GError **err)
{
    char ptr[64], b[64];
    long rank, n;
    if (!field(msg, "comm", ptr, sizeof ptr) || strncmp(ptr, "0x", 2) || !field(msg, "rank", b, sizeof b))
        return TRUE; /* another INIT line */
    if (!int_of(b, 0, NL_MAX_RANKS - 1, &rank))
        return BAD("rank '%s': expected 0..%d", b, NL_MAX_RANKS - 1);
    if (!field(msg, "nranks", b, sizeof b) && !field(msg, "nRanks", b, sizeof b))
        return TRUE;
    if (!int_of(b, 1, NL_MAX_RANKS, &n) || rank >= n)
        return BAD("nranks '%s' with rank %ld: expected more ranks than the rank", b, rank);
    nl_comm *m = g_hash_table_lookup(p->comms, ptr);
    if (m && (m->rank != rank || m->nranks != n))
        return BAD("comm %s is rank %ld of %ld here, rank %d of %d on line %d", ptr, rank, n, m->rank, m->nranks,
                   m->line);
    if (!m) {
        m = g_new0(nl_comm, 1);
        m->ptr = g_strdup(ptr);
        m->rank = (int)rank;
        m->nranks = (int)n;
        m->line = ln;
        m->file = file;
        for (guint i = 0; i < p->comm_list->len; i++)
            m->order += ((nl_comm *)g_ptr_array_index(p->comm_list, i))->nranks == n;
        g_hash_table_insert(p->comms, m->ptr, m);
        g_ptr_array_add(p->comm_list, m);
    }
    if (!m->id && field(msg, "commId", b, sizeof b))
        m->id = g_strdup(b);
    /* ncclCommSplit's lines (init.cc) name the parent and the color, and
     * from NCCL 2.2x no commId: the children of one split with one color
     * are one communicator */
    long v;
    if (!m->parent && field(msg, "parent", b, sizeof b) && !strncmp(b, "0x", 2)) {
        m->parent = g_strdup(b);
        m->color = int_of(field(msg, "color", b, sizeof b), INT32_MIN, INT32_MAX, &v) ? (int)v : -1;
        m->split = int_of(field(msg, "splitCount", b, sizeof b), 0, INT32_MAX, &v) ? (int)v : -1;
    }
    p->cur = m;
    return TRUE;
}

/* A ring line ("Channel cc/NN :   0   1 ...") or a Trees line of the
 * process's current communicator; other lines are ignored. */
static void graph_line(nl_proc *p, const char *msg, int ln)
{
    nl_comm *m = p->cur;
    nccltests_ring r;
    if (!m)
        return;
    if (!strncmp(msg, "Channel ", 8) && nccltests_ring_parse(msg, ln, &r)) {
        if (!m->rings)
            m->rings = g_array_new(FALSE, FALSE, sizeof(nccltests_ring));
        for (guint i = 0; i < m->rings->len; i++)
            if (g_array_index(m->rings, nccltests_ring, i).channel == r.channel)
                return;
        g_array_append_val(m->rings, r);
    } else if (!strncmp(msg, "Trees", 5) && !m->trees) {
        GArray *t = g_array_new(FALSE, FALSE, sizeof(nccltests_tree));
        if (nccltests_trees_parse(msg, ln, t) >= 0)
            m->trees = t;
        else
            g_array_unref(t);
    }
}

/* How a logged call becomes calls of the trace: as it is, or (NCCL 2.28's
 * Gather and Scatter) as the sends and receives NCCL's taskAppend
 * (src/enqueue.cc) turns it into, one to or from each rank, the rank's own
 * block included. */
typedef enum { X_ONE, X_GATHER, X_SCATTER } nl_expand;

/* At most this many sends and receives from Gather/Scatter lines (a root's
 * line is one per rank of its communicator). */
#define NL_MAX_EXPANDED (1 << 22)

/* Appends x; a send/receive to the rank itself is marked, and counted
 * where it is a line of the log (`counted`). */
static void add_call(nl_ctx *c, nl_proc *p, const nl_call *x, bool counted)
{
    g_array_append_val(p->calls, *x);
    nl_call *y = &g_array_index(p->calls, nl_call, p->calls->len - 1);
    y->self = y->kind != TOP_COLL && y->root == y->comm->rank;
    c->self += y->self && counted;
}

/* "<Op>: opCount .. count N datatype D op O root R comm P [nranks=N] stream S". */
static gboolean call_line(nl_ctx *c, nl_proc *p, const char *msg, const char *colon, const char *file, int ln,
                          const char *where, GError **err)
{
    static const struct {
        const char *name;
        trace_op_kind kind;
        coll_kind coll;
        nl_expand expand;
    } ops[] = {{"AllReduce", TOP_COLL, COLL_ALL_REDUCE, X_ONE},
               {"AllGather", TOP_COLL, COLL_ALL_GATHER, X_ONE},
               {"ReduceScatter", TOP_COLL, COLL_REDUCE_SCATTER, X_ONE},
               {"Broadcast", TOP_COLL, COLL_BROADCAST, X_ONE},
               {"Reduce", TOP_COLL, COLL_REDUCE, X_ONE},
               {"AlltoAll", TOP_COLL, COLL_ALLTOALL, X_ONE},
               {"Send", TOP_SEND, COLL_SENDRECV, X_ONE},
               {"Recv", TOP_RECV, COLL_SENDRECV, X_ONE},
               {"Gather", TOP_SEND, COLL_SENDRECV, X_GATHER},
               {"Scatter", TOP_RECV, COLL_SENDRECV, X_SCATTER}};
    size_t nl = (size_t)(colon - msg);
    int k = -1;
    for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
        if (strlen(ops[i].name) == nl && !strncmp(msg, ops[i].name, nl))
            k = (int)i;
    c->calls++;
    if (k < 0) {
        if (!c->skipped++)
            g_snprintf(c->skipped_name, sizeof c->skipped_name, "%.*s", (int)MIN(nl, 31), msg);
        return TRUE;
    }
    char b[64], ptr[64], st[64];
    long dt, root;
    if (!field(msg, "count", b, sizeof b))
        return BAD("%s without a count", ops[k].name);
    char *end;
    errno = 0;
    unsigned long long count = strtoull(b, &end, 10);
    if (errno || *end || b[0] == '-' || (double)count > NL_MAX_BYTES)
        return BAD("count '%s': expected 0..2^50", b);
    if (!int_of(field(msg, "datatype", b, sizeof b), 0, G_N_ELEMENTS(dt_size) - 1, &dt))
        return BAD("datatype: expected ncclDataType_t 0..%d", (int)G_N_ELEMENTS(dt_size) - 1);
    if (!int_of(field(msg, "root", b, sizeof b), -1, NL_MAX_RANKS - 1, &root))
        return BAD("root: expected a rank");
    if (!field(msg, "comm", ptr, sizeof ptr))
        return BAD("%s without a comm", ops[k].name);
    nl_comm *m = g_hash_table_lookup(p->comms, ptr);
    if (!m)
        return trace_fail(err, TRACE_ERROR_REF, where,
                          "comm %s: no Init line of this process names it (log with NCCL_DEBUG_SUBSYS=INIT,COLL)", ptr);
    if ((ops[k].kind != TOP_COLL || ops[k].coll == COLL_BROADCAST || ops[k].coll == COLL_REDUCE) &&
        (root < 0 || root >= m->nranks))
        return BAD("%s root/peer %ld: comm %s has ranks 0..%d", ops[k].name, root, ptr, m->nranks - 1);
    int stream = 0;
    if (field(msg, "stream", st, sizeof st)) {
        stream = GPOINTER_TO_INT(g_hash_table_lookup(p->streams, st));
        if (!stream) {
            stream = (int)g_hash_table_size(p->streams) + 1;
            g_hash_table_insert(p->streams, g_strdup(st), GINT_TO_POINTER(stream));
        }
    }
    char oc[32];
    uint64_t opcount = field(msg, "opCount", oc, sizeof oc) ? g_ascii_strtoull(oc, NULL, 16) : 0;
    nl_call x = {.kind = ops[k].kind, .coll = ops[k].coll, .name = ops[k].name, .comm = m, .count = count,
                 .dt = (int)dt, .root = (int)root, .stream = stream, .opcount = opcount, .line = ln, .file = file};
    if (ops[k].expand == X_ONE) {
        add_call(c, p, &x, true);
        return TRUE;
    }
    /* Gather: every rank sends its block to the root, which receives one
     * from each; Scatter: the root sends each rank its block */
    bool at_root = m->rank == root, gather = ops[k].expand == X_GATHER;
    if (at_root && (c->expanded += m->nranks) > NL_MAX_EXPANDED)
        return BAD("%s at root of %d ranks: more than %d sends and receives from Gather/Scatter lines", ops[k].name,
                   m->nranks, NL_MAX_EXPANDED);
    x.kind = gather ? TOP_SEND : TOP_RECV;
    add_call(c, p, &x, false);
    for (int q = 0; at_root && q < m->nranks; q++) {
        x.kind = gather ? TOP_RECV : TOP_SEND;
        x.root = q;
        add_call(c, p, &x, false);
    }
    return TRUE;
}

/* "AllReduce: 4194304 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..31}"
 * (enqueue.cc, at launch): tied to the process's latest call of that
 * function and those bytes (NCCL's count x type size) without one yet. */
static void tuning_line(nl_ctx *c, nl_proc *p, const char *msg)
{
    nccltests_tuning t = {0};
    unsigned long long bytes;
    int lo, hi;
    if (sscanf(msg, "%23[A-Za-z]: %llu Bytes -> Algo %23s proto %11s channel{Lo..Hi}={%4d..%4d}", t.func, &bytes,
               t.algo, t.proto, &lo, &hi) != 6)
        return;
    t.bytes = bytes;
    t.nchannels = hi - lo + 1;
    for (guint i = p->calls->len; i-- > 0;) {
        nl_call *x = &g_array_index(p->calls, nl_call, i);
        if (!x->tuning && !strcmp(x->name, t.func) && x->count * (uint64_t)dt_size[x->dt] == t.bytes) {
            g_array_append_val(c->tuning, t);
            x->tuning = (int)c->tuning->len;
            return;
        }
    }
}

/* One file: every " NCCL INFO " line, others ignored. */
static gboolean read_file(nl_ctx *c, const char *path, GError **err)
{
    gsize len = 0;
    char *text = tracefile_read(path, &len, err);
    if (!text)
        return FALSE;
    const char *file = g_string_chunk_insert_const(c->files, path);
    gboolean ok = TRUE;
    int ln = 0;
    char where[512];
    for (char *s = text, *nx; ok && s < text + len; s = nx) {
        ln++;
        nx = memchr(s, '\n', (size_t)(text + len - s));
        nx = nx ? nx + 1 : text + len;
        if (nx > s && nx[-1] == '\n')
            nx[-1] = '\0';
        char *tag = strstr(s, " NCCL INFO ");
        if (!tag || tag < s + 4 || tag[-1] != ']')
            continue;
        /* "host:pid:tid [dev]": the word before "[dev]", less ":tid", and "[dev]" */
        char *br = tag - 1;
        while (br > s && *br != '[')
            br--;
        char *w = br;
        while (w > s && w[-1] == ' ')
            w--;
        char *we = w;
        while (w > s && w[-1] != ' ' && w[-1] != '\t')
            w--;
        char *tid = NULL;
        for (char *q = w; q < we; q++)
            if (*q == ':')
                tid = q;
        if (*br != '[' || !tid || tid == w)
            continue;
        c->lines++;
        char *key = g_strdup_printf("%.*s %.*s", (int)(tid - w), w, (int)(tag - br), br);
        nl_proc *p = proc_of(c, key);
        g_free(key);
        const char *msg = tag + strlen(" NCCL INFO ");
        g_snprintf(where, sizeof where, "%s:%d", path, ln);
        const char *colon = strstr(msg, ": opCount ");
        if (colon && !memchr(msg, ' ', (size_t)(colon - msg)))
            ok = call_line(c, p, msg, colon, file, ln, where, err);
        else if (strstr(msg, " Bytes -> Algo "))
            tuning_line(c, p, msg);
        else if (strstr(msg, "comm 0x"))
            ok = init_line(p, msg, file, ln, where, err);
        else
            graph_line(p, msg, ln);
    }
    c->end_file = file;
    c->end_line = ln;
    g_free(text);
    return ok;
}

static gboolean want_log(const char *full, const char *name)
{
    (void)name;
    char head[65536 + 1];
    gssize n = tracefile_head(full, head, sizeof head);
    return n > 0 && nccllog_sniff(head, n);
}

/* Communicators across processes: by commId, else by size and creation
 * order. FALSE with *err on a rank claimed twice or a size that differs. */
static gboolean group_comms(nl_ctx *c, GPtrArray *gs, GError **err)
{
    GHashTable *by = g_hash_table_new(g_str_hash, g_str_equal);
    char where[512];
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < c->order->len; i++) {
        nl_proc *p = g_ptr_array_index(c->order, i);
        for (guint j = 0; ok && j < p->comm_list->len; j++) {
            nl_comm *m = g_ptr_array_index(p->comm_list, j);
            const nl_comm *par = m->parent ? g_hash_table_lookup(p->comms, m->parent) : NULL;
            par = par && par->grouped ? par : NULL; /* (its Init line came first) */
            char *key = m->id    ? g_strdup(m->id)
                        : par ? g_strdup_printf("%s/split%d/color%d", ((nl_group *)g_ptr_array_index(gs, (guint)par->group))->key,
                                                m->split, m->color)
                              : g_strdup_printf("nranks=%d#%d", m->nranks, m->order);
            nl_group *g = g_hash_table_lookup(by, key);
            if (!g) {
                g = g_new0(nl_group, 1);
                g->key = key;
                g->nranks = m->nranks;
                g->member = g_new0(nl_proc *, (gsize)m->nranks);
                g->first = m;
                g->index = (int)gs->len;
                g_hash_table_insert(by, g->key, g);
                g_ptr_array_add(gs, g);
            } else {
                g_free(key);
            }
            if (g->nranks != m->nranks || g->member[m->rank]) {
                g_snprintf(where, sizeof where, "%s:%d", m->file, m->line);
                ok = trace_fail(err, TRACE_ERROR_VALUE, where, "comm %s (%s): rank %d of %d, but %s", m->ptr, g->key,
                                m->rank, m->nranks,
                                g->nranks != m->nranks ? "another rank has it with another size"
                                                       : "another rank has that rank of it");
            } else {
                g->member[m->rank] = p;
                m->group = g->index;
                m->grouped = true;
            }
        }
    }
    g_hash_table_destroy(by);
    return ok;
}

static void group_free(gpointer p)
{
    nl_group *g = p;
    g_free(g->key);
    g_free(g->member);
    g_free(g->grank);
    g_free(g);
}

/* Global ranks from the largest communicator; every communicator complete. */
static gboolean number_ranks(nl_ctx *c, GPtrArray *gs, int *nworld, GError **err)
{
    nl_group *w = NULL;
    for (guint i = 0; i < gs->len; i++) {
        nl_group *g = g_ptr_array_index(gs, i);
        if (!w || g->nranks > w->nranks)
            w = g;
    }
    char where[512];
    if (!w) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_SCHEMA,
                    "no communicator's Init line (comm 0x.. rank R nranks N): log with NCCL_DEBUG=INFO "
                    "NCCL_DEBUG_SUBSYS=INIT,COLL");
        return FALSE;
    }
    for (guint i = 0; i < gs->len; i++) {
        nl_group *g = g_ptr_array_index(gs, i);
        int have = 0, miss = -1;
        for (int r = 0; r < g->nranks; r++)
            have += g->member[r] != NULL, miss = miss < 0 && !g->member[r] ? r : miss;
        if (have < g->nranks) {
            g_snprintf(where, sizeof where, "%s:%d", g->first->file, g->first->line);
            return trace_fail(err, TRACE_ERROR_REF, where,
                              "comm %s (%s): the log has %d of its %d ranks (none says rank %d): give every "
                              "rank's log (one file, or a directory of NCCL_DEBUG_FILE logs)",
                              g->first->ptr, g->key, have, g->nranks, miss);
        }
    }
    for (int r = 0; r < w->nranks; r++)
        w->member[r]->world = r;
    for (guint i = 0; i < c->order->len; i++) {
        nl_proc *p = g_ptr_array_index(c->order, i);
        if (p->world < 0 && p->calls->len) {
            const nl_call *x = &g_array_index(p->calls, nl_call, 0);
            g_snprintf(where, sizeof where, "%s:%d", x->file, x->line);
            return trace_fail(err, TRACE_ERROR_REF, where,
                              "process %s is in no communicator of all %d ranks (%s), so it has no global rank",
                              p->key, w->nranks, w->key);
        }
    }
    for (guint i = 0; i < gs->len; i++) {
        nl_group *g = g_ptr_array_index(gs, i);
        g->grank = g_new(int, (gsize)g->nranks);
        for (int r = 0; r < g->nranks; r++) {
            g->grank[r] = g->member[r]->world;
            if (g->grank[r] < 0) { /* a member of this one, none of the largest */
                const nl_comm *m = g_hash_table_lookup(g->member[r]->comms, g->first->ptr);
                g_snprintf(where, sizeof where, "%s:%d", m ? m->file : g->first->file, m ? m->line : g->first->line);
                return trace_fail(err, TRACE_ERROR_REF, where,
                                  "%s is rank %d of comm %s but in no communicator of all %d ranks (%s), so it has "
                                  "no global rank",
                                  g->member[r]->key, r, g->key, w->nranks, w->key);
            }
        }
    }
    *nworld = w->nranks;
    c->world = w;
    return TRUE;
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* The position of global rank gr among the sorted members of g. */
static int local_of(const nl_group *g, int gr)
{
    int n = 0;
    for (int r = 0; r < g->nranks; r++)
        n += g->grank[r] < gr;
    return n;
}

static void tails_free(gpointer p) { g_array_unref(p); }

/* The groups of sends and receives of p: consecutive calls on one stream
 * with one opCount (NCCL 2.13-2.26 advances it once per kernel launch, so
 * the calls of one ncclGroupStart/End print one value) get one run number.
 * On a communicator whose opCount never moves in this process (NCCL 2.27+
 * on one node: no proxy work, no increment) a group also ends where a call
 * repeats a (communicator, direction, peer) of the group: the next
 * iteration of a loop of groups. Also marks each communicator's oc_moves. */
G_STATIC_ASSERT(sizeof(gsize) >= 8); /* mark_runs packs (communicator, direction, peer) into a pointer */

static void mark_runs(nl_proc *p)
{
    for (guint i = 0; i < p->calls->len; i++) {
        const nl_call *x = &g_array_index(p->calls, nl_call, i);
        nl_comm *m = x->comm;
        if (m->ncalls++ == 0)
            m->oc0 = x->opcount;
        else if (x->opcount != m->oc0)
            m->oc_moves = true;
    }
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal); /* (communicator, direction, peer) */
    uint32_t run = 0;
    const nl_call *prev = NULL;
    for (guint i = 0; i < p->calls->len; prev = &g_array_index(p->calls, nl_call, i), i++) {
        nl_call *x = &g_array_index(p->calls, nl_call, i);
        if (x->kind == TOP_COLL)
            continue;
        gpointer key = GSIZE_TO_POINTER((gsize)(guint32)x->comm->group << 32 | (gsize)(x->kind == TOP_SEND) << 31 |
                                        (guint32)x->root); /* (roots are < 2^31) */
        bool repeat = !x->comm->oc_moves && g_hash_table_contains(seen, key);
        if (!prev || prev->kind == TOP_COLL || prev->stream != x->stream || prev->opcount != x->opcount || repeat) {
            run++;
            g_hash_table_remove_all(seen);
        }
        g_hash_table_add(seen, key);
        x->run = run;
    }
    g_hash_table_destroy(seen);
}

/* The length of the group of sends and receives starting at call i of p
 * (mark_runs), 0 if call i is none. */
static guint run_len(const nl_proc *p, guint i)
{
    const nl_call *a = &g_array_index(p->calls, nl_call, i);
    guint j = i;
    while (j < p->calls->len) {
        const nl_call *x = &g_array_index(p->calls, nl_call, j);
        if (x->kind == TOP_COLL || x->run != a->run)
            break;
        j++;
    }
    return j - i;
}

/* A process's collectives launched in one group: a collective is fused when
 * the collective before it on its stream (no send/receive between) is of
 * its communicator with the same opCount and that communicator's opCount
 * moves (mark_runs). Adjacent fused calls of one function, root and type
 * form one aggregate under their first (agg_len): NCCL's planner
 * (ncclPrepareTasks, src/enqueue.cc) picks the algorithm for their summed
 * size and spreads them over the channels side by side. */
static void mark_fused(nl_proc *p)
{
    GHashTable *last = g_hash_table_new(g_direct_hash, g_direct_equal); /* stream -> call index + 1 */
    nl_call *lead = NULL;
    for (guint i = 0; i < p->calls->len; i++) {
        nl_call *x = &g_array_index(p->calls, nl_call, i);
        if (x->kind != TOP_COLL) {
            g_hash_table_remove(last, GINT_TO_POINTER(x->stream));
            lead = NULL;
            continue;
        }
        guint k = GPOINTER_TO_UINT(g_hash_table_lookup(last, GINT_TO_POINTER(x->stream)));
        const nl_call *prev = k ? &g_array_index(p->calls, nl_call, k - 1) : NULL;
        x->fused = prev && prev->comm == x->comm && prev->opcount == x->opcount && x->comm->oc_moves;
        g_hash_table_replace(last, GINT_TO_POINTER(x->stream), GUINT_TO_POINTER(i + 1));
        if (x->fused && lead && k == i && lead->coll == x->coll && lead->root == x->root && lead->dt == x->dt) {
            lead->agg_len++;
        } else {
            lead = x;
            x->agg_len = 1;
        }
    }
    g_hash_table_destroy(last);
}

/* Per process k, mine[k] maps a communicator (group index) to a GString
 * that says what the process did on it (its signature). Sets the bool
 * `flag` bytes into each nl_group whose members' signatures differ, and
 * frees mine. With `first`, *first gets per communicator a copy of the
 * signature its members agree on, NULL where they disagree or have none
 * (gs->len entries; the caller frees each and the array). */
static void members_agree(nl_ctx *c, GPtrArray *gs, GHashTable **mine, size_t flag, char ***first)
{
    GHashTable *index = g_hash_table_new(g_direct_hash, g_direct_equal); /* process -> k */
    for (guint k = 0; k < c->order->len; k++)
        g_hash_table_insert(index, g_ptr_array_index(c->order, k), GUINT_TO_POINTER(k));
    if (first)
        *first = g_new0(char *, gs->len + 1);
    for (guint gi = 0; gi < gs->len; gi++) {
        nl_group *g = g_ptr_array_index(gs, gi);
        bool *off = (bool *)((char *)g + flag);
        const char *sig0 = NULL;
        for (int r = 0; r < g->nranks && !*off; r++) {
            guint k = GPOINTER_TO_UINT(g_hash_table_lookup(index, g->member[r]));
            const GString *gl = g_hash_table_lookup(mine[k], GINT_TO_POINTER(g->index));
            const char *l = gl ? gl->str : NULL;
            if (r == 0)
                sig0 = l;
            else if (g_strcmp0(l, sig0))
                *off = true;
        }
        if (first)
            (*first)[gi] = !*off && sig0 ? g_strdup(sig0) : NULL;
    }
    for (guint k = 0; k < c->order->len; k++)
        g_hash_table_destroy(mine[k]);
    g_free(mine);
    g_hash_table_destroy(index);
}

/* Appends `add` to process k's signature of communicator `group`. */
static void sig_append(GHashTable *mine, int group, const char *add)
{
    GString *g = g_hash_table_lookup(mine, GINT_TO_POINTER(group));
    if (!g) /* (a GString: concatenating strings was quadratic in a long log's calls) */
        g_hash_table_insert(mine, GINT_TO_POINTER(group), g = g_string_new(NULL));
    g_string_append(g, add);
}

static void sig_free(gpointer g) { g_string_free(g, TRUE); }

/* A new per-process signature table (communicator -> GString). */
static GHashTable *sig_table(void) { return g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, sig_free); }

/* The communicators whose members disagree on their collectives' groups
 * (fused flags and aggregates in order) get fuse_off: NCCL requires the
 * same calls in the same order of every member, but a member may have
 * launched them in other groups (or its opCount may not move). */
static void check_fused(nl_ctx *c, GPtrArray *gs)
{
    GHashTable **mine = g_new0(GHashTable *, c->order->len); /* per process: group -> "fused/agg," per collective */
    for (guint k = 0; k < c->order->len; k++) {
        nl_proc *p = g_ptr_array_index(c->order, k);
        mine[k] = sig_table();
        for (guint i = 0; i < p->calls->len; i++) {
            const nl_call *x = &g_array_index(p->calls, nl_call, i);
            char one[32];
            if (x->kind != TOP_COLL)
                continue;
            g_snprintf(one, sizeof one, "%d/%u,", x->fused, x->agg_len);
            sig_append(mine[k], x->comm->group, one);
        }
    }
    members_agree(c, gs, mine, offsetof(nl_group, fuse_off), NULL);
}

/* Whether calls i..i+len of p are an all-to-all: one send to and one
 * receive from every rank of one communicator, the rank itself included,
 * all of one size (nccl-tests' alltoall, PyTorch's all_to_all_single, and
 * NCCL 2.28's AlltoAll as its taskAppend expands it). *per_peer gets the
 * size. */
static bool is_alltoall(const nl_proc *p, guint i, guint len, uint64_t *per_peer)
{
    const nl_call *a = &g_array_index(p->calls, nl_call, i);
    int n = a->comm->nranks;
    if (n < 2 || len != 2 * (guint)n)
        return false;
    uint8_t *seen = g_new0(uint8_t, (gsize)n);
    bool ok = true;
    for (guint j = i; ok && j < i + len; j++) {
        const nl_call *x = &g_array_index(p->calls, nl_call, j);
        uint8_t bit = x->kind == TOP_SEND ? 1 : 2;
        /* (a call on another communicator may name a peer beyond this one's ranks: checked first) */
        ok = x->comm == a->comm && x->count * (uint64_t)dt_size[x->dt] == a->count * (uint64_t)dt_size[a->dt] &&
             !(seen[x->root] & bit);
        if (ok)
            seen[x->root] |= bit;
    }
    g_free(seen);
    *per_peer = a->count * (uint64_t)dt_size[a->dt];
    return ok;
}

/* Marks the groups of sends and receives that are all-to-alls (is_alltoall)
 * where every member of the communicator has the same ones (sizes, order):
 * they replay as the all_to_all collective, as a trace of the job from the
 * framework (Kineto, Chakra) has them and as `conveyor collective` runs them.
 * Returns how many all-to-alls that is. */
static int find_alltoalls(nl_ctx *c, GPtrArray *gs)
{
    GHashTable **mine = g_new0(GHashTable *, c->order->len); /* per process: group -> "size," per all-to-all */
    for (guint k = 0; k < c->order->len; k++) {
        nl_proc *p = g_ptr_array_index(c->order, k);
        mine[k] = sig_table();
        for (guint i = 0, len; i < p->calls->len; i += len ? len : 1) {
            len = run_len(p, i);
            uint64_t b;
            if (len && is_alltoall(p, i, len, &b)) {
                nl_call *x = &g_array_index(p->calls, nl_call, i);
                char one[32];
                g_snprintf(one, sizeof one, "%" G_GUINT64_FORMAT ",", b);
                sig_append(mine[k], x->comm->group, one);
                x->a2a_len = len;
            }
        }
    }
    char **first;
    members_agree(c, gs, mine, offsetof(nl_group, a2a_off), &first);
    int count = 0;
    for (guint gi = 0; gi < gs->len; gi++) { /* one comma per all-to-all */
        for (const char *q = first[gi]; q && *q; q++)
            count += *q == ',';
        g_free(first[gi]);
    }
    g_free(first);
    return count;
}

/* A rank's calls as trace ops: a run of sends and receives (mark_runs) runs
 * together (each on a lane of its own, after what the stream ran before; the
 * stream's next op waits for all of them). Collectives launched in one group
 * (mark_fused) are fused, an aggregate of them one op of their summed size,
 * unless the communicator's members disagree on the groups (check_fused). */
static void add_ops(nl_ctx *c, trace *t, GPtrArray *gs, nl_proc *p, int *lane, GArray *tuned)
{
    const GArray *tlines = c->tuning;
    int r = p->world;
    /* next sequence number per trace group (one per communicator) */
    int *seq = g_new0(int, t->groups->len);
    GHashTable *tail = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, tails_free); /* stream -> ops */
    GArray *run = g_array_new(FALSE, FALSE, sizeof(uint32_t)), *before = NULL;
    int run_stream = -1;
    uint32_t run_id = 0;
    for (guint i = 0; i <= p->calls->len; i++) {
        const nl_call *x = i < p->calls->len ? &g_array_index(p->calls, nl_call, i) : NULL;
        const nl_group *g = x ? g_ptr_array_index(gs, (guint)x->comm->group) : NULL;
        bool a2a = x && x->a2a_len && !g->a2a_off, p2p = x && x->kind != TOP_COLL && !a2a;
        if (run->len && (!p2p || x->run != run_id)) {
            /* the group ended: its stream waits for all of it */
            g_hash_table_replace(tail, GINT_TO_POINTER(run_stream), run);
            run = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        }
        if (!x)
            break;
        if (x->self && !a2a) /* a local copy */
            continue;
        trace_op op = {.kind = a2a ? TOP_COLL : x->kind, .stream = x->stream, .name = a2a ? "AlltoAll" : x->name,
                       .dur_ps = -1, .coll = a2a ? COLL_ALLTOALL : x->coll, .group = g->tgroup, .seq = -1,
                       .ts_ps = -1, .src_index = x->line, .bytes = x->count * (uint64_t)dt_size[x->dt]};
        if (a2a) /* the group as the all_to_all it is (find_alltoalls) */
            i += x->a2a_len - 1;
        if (op.kind == TOP_COLL) {
            op.bytes *= op.coll == COLL_ALL_GATHER || op.coll == COLL_REDUCE_SCATTER || op.coll == COLL_ALLTOALL
                            ? (uint64_t)g->nranks
                            : 1;
            op.seq = seq[g->tgroup]++;
            if (x->coll == COLL_BROADCAST || x->coll == COLL_REDUCE)
                op.root = local_of(g, g->grank[x->root]);
            if (!a2a && !g->fuse_off) {
                op.fused = x->fused;
                /* an aggregate: one collective of the calls' summed size */
                for (guint j = 1; j < x->agg_len; j++) {
                    const nl_call *y = &g_array_index(p->calls, nl_call, i + j);
                    op.bytes += y->count * (uint64_t)dt_size[y->dt] *
                                (op.coll == COLL_ALL_GATHER || op.coll == COLL_REDUCE_SCATTER ? (uint64_t)g->nranks : 1);
                }
                c->fused += x->fused + (int)x->agg_len - 1;
                c->aggregated += (int)x->agg_len - 1;
                i += x->agg_len - 1;
            }
        } else {
            op.peer = g->grank[x->root];
            op.stream = (*lane)++;
            if (!run->len) {
                run_stream = x->stream;
                run_id = x->run;
                before = g_hash_table_lookup(tail, GINT_TO_POINTER(x->stream));
            }
        }
        if (x->tuning && tuned) { /* the first call of each shape speaks for it */
            nccllog_tuning *k = NULL;
            for (guint j = 0; j < tuned->len && !k; j++) {
                nccllog_tuning *e = &g_array_index(tuned, nccllog_tuning, j);
                k = e->coll == op.coll && e->bytes == op.bytes && e->group == op.group ? e : NULL;
            }
            if (!k) {
                nccllog_tuning e = {.coll = op.coll, .bytes = op.bytes, .group = op.group,
                                    .t = g_array_index(tlines, nccltests_tuning, x->tuning - 1)};
                g_array_append_val(tuned, e);
                k = &g_array_index(tuned, nccllog_tuning, tuned->len - 1);
            }
            k->calls++;
        }
        uint32_t at = trace_op_add(t, r, &op);
        const GArray *deps = p2p ? before : g_hash_table_lookup(tail, GINT_TO_POINTER(x->stream));
        for (guint k = 0; deps && k < deps->len; k++)
            trace_op_dep(t, r, at, g_array_index(deps, uint32_t, k));
        if (p2p) {
            g_array_append_val(run, at);
        } else {
            GArray *one = g_array_new(FALSE, FALSE, sizeof(uint32_t));
            g_array_append_val(one, at);
            g_hash_table_replace(tail, GINT_TO_POINTER(x->stream), one);
        }
    }
    g_array_unref(run);
    g_hash_table_destroy(tail);
    g_free(seq);
}

void nccllog_extras_clear(nccllog_extras *x)
{
    GArray **a[] = {&x->tuning, &x->rings, &x->trees};
    for (size_t i = 0; i < G_N_ELEMENTS(a); i++)
        if (*a[i]) {
            g_array_unref(*a[i]);
            *a[i] = NULL;
        }
}

/* The ring and Trees lines of the communicator of all ranks, w: the rings
 * of the first member (by rank) that printed some, every member's Trees
 * line. */
static void world_graph(const nl_group *w, nccllog_extras *x)
{
    for (int r = 0; r < w->nranks; r++) {
        const nl_proc *p = w->member[r];
        for (guint j = 0; j < p->comm_list->len; j++) {
            const nl_comm *m = g_ptr_array_index(p->comm_list, j);
            if (m->group != w->index)
                continue;
            if (m->rings && m->rings->len && !x->rings)
                x->rings = g_array_ref(m->rings);
            for (guint k = 0; m->trees && k < m->trees->len; k++) {
                nccltests_tree t = g_array_index(m->trees, nccltests_tree, k);
                if (t.rank != m->rank)
                    break;
                t.rank = w->grank[r];
                if (!x->trees)
                    x->trees = g_array_new(FALSE, FALSE, sizeof(nccltests_tree));
                g_array_append_val(x->trees, t);
            }
        }
    }
}

trace *trace_nccllog_load(const char *path, char **note, nccllog_extras *extras, GError **err)
{
    if (note)
        *note = NULL;
    if (extras)
        *extras = (nccllog_extras){0};
    GPtrArray *files = tracefile_list(path, want_log, "NCCL debug logs (files with \" NCCL INFO \" lines)", err);
    if (!files)
        return NULL;
    nl_ctx c = {.procs = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, proc_free),
                .order = g_ptr_array_new(), .files = g_string_chunk_new(1024),
                .tuning = g_array_new(FALSE, FALSE, sizeof(nccltests_tuning))};
    GArray *tuned = extras ? g_array_new(FALSE, FALSE, sizeof(nccllog_tuning)) : NULL;
    trace *t = NULL;
    GPtrArray *gs = NULL;
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < files->len; i++)
        ok = read_file(&c, g_ptr_array_index(files, i), err);
    if (ok && !c.calls) {
        g_set_error(err, TRACE_ERROR, TRACE_ERROR_SCHEMA,
                    "%s:%d: the end, after %d NCCL INFO lines and no call (\"AllReduce: opCount ...\"): log with "
                    "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL",
                    c.end_file, c.end_line, c.lines);
        ok = FALSE;
    }
    if (ok) {
        gs = g_ptr_array_new_with_free_func(group_free);
        ok = group_comms(&c, gs, err);
    }
    int nworld = 0;
    if (ok)
        ok = number_ranks(&c, gs, &nworld, err);
    if (ok) {
        for (guint i = 0; i < c.order->len; i++) {
            mark_runs(g_ptr_array_index(c.order, i));
            mark_fused(g_ptr_array_index(c.order, i));
        }
        check_fused(&c, gs);
        c.a2a = find_alltoalls(&c, gs);
        t = trace_new(nworld, path);
        for (guint i = 0; i < gs->len; i++) {
            nl_group *g = g_ptr_array_index(gs, i);
            int *sorted = g_memdup2(g->grank, sizeof(int) * (gsize)g->nranks);
            qsort(sorted, (size_t)g->nranks, sizeof(int), cmp_int);
            /* by its key: another communicator of all ranks is another group, numbering its own
             * calls (named "world" as well, its calls were lined up with the first's, and a log
             * whose ranks called the two in different orders was refused) */
            g->tgroup = trace_group_add(t, g == c.world ? "world" : g->key, sorted, g->nranks);
            g_free(sorted);
        }
        int lane = 1 << 20; /* streams for sends and receives that run together */
        for (guint i = 0; i < c.order->len; i++) {
            nl_proc *p = g_ptr_array_index(c.order, i);
            if (p->world >= 0)
                add_ops(&c, t, gs, p, &lane, tuned);
        }
        ok = trace_validate(t, err);
    }
    if (ok && note) {
        GString *n = g_string_new(NULL);
        g_string_printf(n, "NCCL log: %u file(s), %d NCCL INFO lines, %d ranks, %u communicators, %d calls replayed",
                        files->len, c.lines, nworld, gs->len, c.calls - c.skipped - c.self);
        if (c.a2a)
            g_string_append_printf(n, "; %d groups of sends/receives to every rank replayed as all_to_all", c.a2a);
        if (c.fused)
            g_string_append_printf(n, "; %d collectives in a group with the one before (one opCount: one kernel, "
                                      "no host launch of their own), %d of them of its function, type and root, "
                                      "replayed with it as one collective of their summed size", c.fused, c.aggregated);
        if (c.self)
            g_string_append_printf(n, "; %d sends/receives of a rank to itself (local copies) left out", c.self);
        if (c.skipped)
            g_string_append_printf(n, "; %d of kinds not replayed (e.g. %s)", c.skipped, c.skipped_name);
        g_string_append(n, " (the log has no durations and no compute: the communication runs alone)");
        *note = g_string_free(n, FALSE);
    }
    if (!ok) {
        if (t)
            trace_free(t);
        t = NULL;
    }
    if (ok && tuned && tuned->len)
        extras->tuning = tuned;
    else if (tuned)
        g_array_unref(tuned);
    if (ok && extras)
        world_graph(c.world, extras);
    if (gs)
        g_ptr_array_unref(gs);
    g_array_unref(c.tuning);
    g_ptr_array_unref(c.order);
    g_hash_table_destroy(c.procs);
    g_string_chunk_free(c.files);
    g_ptr_array_unref(files);
    return t;
}

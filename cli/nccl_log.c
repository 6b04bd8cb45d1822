/* cli/nccl_log.c - NCCL_DEBUG=INFO lines for simulated runs (see nccl_log.h).
 * Formats: NCCL's src/debug.c prefix "<host>:<pid>:<tid> [<dev>] NCCL INFO ",
 * ncclLoadParam's "%s set by environment to %lld.", tuning.cc's "NCCL_ALGO
 * set by environment to %s", enqueue.cc's TUNING line with
 * ncclFuncToString / ncclAlgoToString / ncclProtoToString names
 * (shared/reference/formats.md s4). */
#include "nccl_log.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

bool nccl_log_on(const char *sub)
{
    const char *lvl = g_getenv("NCCL_DEBUG");
    if (!lvl || (g_ascii_strcasecmp(lvl, "INFO") && g_ascii_strcasecmp(lvl, "TRACE")))
        return false;
    const char *s = g_getenv("NCCL_DEBUG_SUBSYS");
    if (!s || !*s)
        s = "INIT,BOOTSTRAP,ENV";
    bool neg = s[0] == '^', found = false;
    g_auto(GStrv) parts = g_strsplit(s + neg, ",", -1);
    for (int i = 0; parts[i]; i++) {
        char *p = g_strstrip(parts[i]);
        if (!g_ascii_strcasecmp(p, "ALL") || !g_ascii_strcasecmp(p, sub))
            found = true;
    }
    return neg ? !found : found;
}

char *nccl_log_env(const char *prefix)
{
    const char *lvl = g_getenv("NCCL_DEBUG");
    if (!lvl || (g_ascii_strcasecmp(lvl, "INFO") && g_ascii_strcasecmp(lvl, "TRACE")))
        return NULL;
    GString *out = g_string_new(NULL);
    /* integer parameters (NCCL_PARAM) end with a period, string ones do not */
    bool env = nccl_log_on("ENV");
    for (const coll_nccl_var *var = coll_nccl_vars; env && var->name; var++) {
        const char *v = g_getenv(var->name);
        if (v && *v && var->kind != COLL_NCCL_VAR_P2P)
            g_string_append_printf(out, "%s NCCL INFO %s set by environment to %s%s\n", prefix, var->name, v,
                                   var->kind == COLL_NCCL_VAR_INT ? "." : "");
    }
    /* paths.cc ncclGetLevel logs under NCCL_ALL (whatever NCCL_DEBUG_SUBSYS
     * says): NCCL_P2P_DISABLE=1 wins; else the level by name (old numbers
     * shown as the name they map to) */
    coll_nccl_env e;
    if (coll_nccl_env_read(&e, NULL) && e.p2p_set) {
        const char *d = g_getenv("NCCL_P2P_DISABLE");
        if (d && strtol(d, NULL, 0) == 1)
            g_string_append_printf(out, "%s NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n", prefix);
        else
            g_string_append_printf(out, "%s NCCL INFO NCCL_P2P_LEVEL set by environment to %s\n", prefix,
                                   coll_p2p_level_name(e.p2p_level));
    }
    return out->len ? g_string_free(out, FALSE) : (g_string_free(out, TRUE), NULL);
}

char *nccl_log_tuning(const char *prefix, coll_kind kind, uint64_t bytes, coll_algo_id algo, coll_proto_id proto,
                      int nch)
{
    static const char *const algo_s[ALGO_COUNT] = {
        [ALGO_TREE] = "TREE", [ALGO_RING] = "RING", [ALGO_COLLNET_DIRECT] = "COLLNET_DIRECT",
        [ALGO_COLLNET_CHAIN] = "COLLNET_CHAIN", [ALGO_NVLS] = "NVLS", [ALGO_NVLS_TREE] = "NVLS_TREE",
        [ALGO_PAT] = "PAT"};
    static const char *const proto_s[PROTO_COUNT] = {[PROTO_LL] = "LL", [PROTO_LL128] = "LL128",
                                                     [PROTO_SIMPLE] = "SIMPLE"};
    const char *func = kind == COLL_ALL_REDUCE ? "AllReduce" : kind == COLL_ALL_GATHER ? "AllGather"
                     : kind == COLL_REDUCE_SCATTER ? "ReduceScatter" : kind == COLL_BROADCAST ? "Broadcast"
                     : kind == COLL_REDUCE ? "Reduce" : NULL;
    if (!func || algo < 0 || algo >= ALGO_COUNT || !algo_s[algo] || proto < 0 || proto >= PROTO_COUNT)
        return NULL;
    return g_strdup_printf("%s NCCL INFO %s: %" G_GUINT64_FORMAT " Bytes -> Algo %s proto %s channel{Lo..Hi}={0..%d}\n",
                           prefix, func, bytes, algo_s[algo], proto_s[proto], nch > 0 ? nch - 1 : 0);
}

/* tuning.cc's order and names (ncclFuncStr, ncclAlgoStr, ncclProtoStr) */
const nccl_table_func_t nccl_table_func[NCCL_TABLE_NFUNC] = {
    {"Broadcast", COLL_BROADCAST}, {"Reduce", COLL_REDUCE}, {"AllGather", COLL_ALL_GATHER},
    {"ReduceScatter", COLL_REDUCE_SCATTER}, {"AllReduce", COLL_ALL_REDUCE}};
const nccl_table_algo_t nccl_table_algo[NCCL_TABLE_NALGO] = {
    {"Tree", ALGO_TREE}, {"Ring", ALGO_RING}, {"CollNetDirect", ALGO_COLLNET_DIRECT},
    {"CollNetChain", ALGO_COLLNET_CHAIN}, {"NVLS", ALGO_NVLS}, {"NVLSTree", ALGO_NVLS_TREE}, {"PAT", ALGO_PAT}};
const nccl_table_proto_t nccl_table_proto[NCCL_TABLE_NPROTO] = {
    {"LL", PROTO_LL}, {"LL128", PROTO_LL128}, {"Simple", PROTO_SIMPLE}};

bool nccl_log_table_cell(const coll_system *sys, coll_kind kind, coll_algo_id algo, coll_proto_id proto,
                         const char *aspec, const char *pspec, double *lat_us, double *algbw_GBps)
{
    bool on = coll_tune_table(sys, kind, algo, proto, lat_us, algbw_GBps);
    uint32_t am = 0, pm = 0;
    /* a list NCCL would refuse masks nothing here (collective and validate report it) */
    if (aspec && !coll_tune_parse_mask(aspec, kind, true, &am, NULL))
        am = 0;
    if (pspec && !coll_tune_parse_mask(pspec, kind, false, &pm, NULL))
        pm = 0;
    if (on && ((am && !(am & (1u << algo))) || (pm && !(pm & (1u << proto))))) {
        *algbw_GBps = 0; /* tuning.cc zeroes a disabled pair's bandwidth, keeps its latency */
        return false;
    }
    return on;
}

char *nccl_log_tuning_table(const char *prefix, const coll_system *sys, const char *aspec, const char *pspec)
{
    GString *out = g_string_new(NULL);
    g_string_append_printf(out, "%s NCCL INFO Latency/AlgBw |", prefix);
    for (int a = 0; a < NCCL_TABLE_NALGO; a++)
        for (int p = 0; p < NCCL_TABLE_NPROTO; p++)
            g_string_append_printf(out, " %7s/%6s |", nccl_table_algo[a].name, nccl_table_proto[p].name);
    g_string_append_c(out, '\n');
    for (int c = 0; c < NCCL_TABLE_NFUNC; c++) {
        g_string_append_printf(out, "%s NCCL INFO %13s |", prefix, nccl_table_func[c].name);
        for (int a = 0; a < NCCL_TABLE_NALGO; a++)
            for (int p = 0; p < NCCL_TABLE_NPROTO; p++) {
                double lat, bw;
                nccl_log_table_cell(sys, nccl_table_func[c].kind, nccl_table_algo[a].id, nccl_table_proto[p].id, aspec,
                                    pspec, &lat, &bw);
                g_string_append_printf(out, "%8.1f/%6.1f |", lat, bw);
            }
        g_string_append_c(out, '\n');
    }
    return g_string_free(out, FALSE);
}

/* one rank's log prefix, as NCCL's debug.cc: "<host>:<pid>:<tid> [<dev>]" */
static void rank_prefix(char *buf, size_t n, const nccltests_device *d)
{
    snprintf(buf, n, "%s:%d:%d [%d]", d->host ? d->host : "localhost", d->pid, d->pid, d->device);
}

/* A stand-in for the communicator's address (%p in NCCL's lines): fixed per
 * rank, so the log is the same from run to run. */
static unsigned long long comm_addr(int rank) { return 0x560000000000ULL + 0x10000ULL * (unsigned)rank; }

/* p2p.cc's transport name: one process (-g > 1) shares pointers, else cuMem
 * handles (MNNVL across the hosts of an NVLink domain) */
static const char *p2p_mode(const nccl_log_comm *c, int a, int b)
{
    if (c->dev[a].pid == c->dev[b].pid)
        return "direct pointer";
    return c->mnnvl ? "MNNVL" : "CUMEM";
}

/* The subsystems the init lines print under, read once per log (nccl_log_on
 * reads and splits NCCL_DEBUG_SUBSYS each time). */
typedef struct {
    bool init, graph, p2p, shm, net;
} log_subsys;

static void conn_lines(GString *out, const nccl_log_comm *c, const log_subsys *on, int ch, int a, int b)
{
    const coll_system *sys = c->sys;
    coll_conn k;
    char pa[160], pb[160];
    rank_prefix(pa, sizeof pa, &c->dev[a]);
    rank_prefix(pb, sizeof pb, &c->dev[b]);
    if (!coll_conn_of(sys, a, b, (uint32_t)ch, !sys->nccl.cross_nic, &k, NULL))
        return;
    int da = c->dev[a].device, db = c->dev[b].device;
    if (k.kind == COLL_CONN_P2P && (on->init || on->p2p))
        g_string_append_printf(out, "%s NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via P2P/%s%s\n", pa, ch, a, da, b,
                               db, p2p_mode(c, a, b), k.read ? "/read" : "");
    else if (k.kind == COLL_CONN_SHM && (on->init || on->shm))
        g_string_append_printf(out, "%s NCCL INFO Channel %02d : %d[%d] -> %d[%d] via SHM/direct/direct\n", pa, ch, a,
                               da, b, db);
    else if (k.kind == COLL_CONN_NET && (on->init || on->net)) {
        char proxy[16] = "";
        if (k.proxy >= 0)
            snprintf(proxy, sizeof proxy, "(%d)", k.proxy);
        g_string_append_printf(out, "%s NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s\n", pa,
                               ch, a, da, b, db, c->net, k.net_dev, proxy, k.gdr ? "/GDRDMA" : "");
        g_string_append_printf(out, "%s NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] [receive] via NET/%s/%d%s\n", pb,
                               ch, a, da, b, db, c->net, k.recv_dev, k.recv_gdr ? "/GDRDMA" : "");
    }
}

char *nccl_log_init(const nccl_log_comm *c)
{
    const coll_system *sys = c->sys;
    int n = sys->nranks;
    log_subsys on = {.init = nccl_log_on("INIT"), .graph = nccl_log_on("GRAPH"), .p2p = nccl_log_on("P2P"),
                     .shm = nccl_log_on("SHM"), .net = nccl_log_on("NET")};
    if (n < 1 || !(on.init || on.graph || on.p2p || on.net || on.shm))
        return NULL;
    bool init = on.init;
    int nch = n > 1 ? coll_channels(sys, ALGO_RING) : 1;
    GString *out = g_string_new(NULL);
    char pre[160];
    for (int r = 0; init && r < n; r++) { /* init.cc, after the ranks' first exchange */
        rank_prefix(pre, sizeof pre, &c->dev[r]);
        g_string_append_printf(out, "%s NCCL INFO comm 0x%llx rank %d nRanks %d nNodes %d localRanks %d localRank %d "
                                    "MNNVL %d\n", pre, comm_addr(r), r, n, sys->nnodes, sys->ppn, r % sys->ppn,
                               c->mnnvl ? 1 : 0);
    }
    int *ring = g_new(int, (size_t)n * nch), *pos = g_new(int, (size_t)n * nch);
    for (int ch = 0; ch < nch; ch++)
        for (int i = 0; i < n; i++) {
            int r = coll_ring_rank(sys, ch, i);
            ring[(size_t)ch * n + i] = r;
            pos[(size_t)ch * n + r] = i;
        }
    /* rings.cc: rank 0 prints each channel's ring from itself, " %3d" per rank in a 128-byte line */
    rank_prefix(pre, sizeof pre, &c->dev[0]);
    for (int ch = 0; init && n > 1 && ch < nch; ch++) {
        char line[128];
        int len = snprintf(line, sizeof line, "Channel %02d/%02d :", ch, nch);
        for (int i = 0, at = pos[(size_t)ch * n]; i < n && len < (int)sizeof line; i++)
            len += snprintf(line + len, sizeof line - (size_t)len, " %3d", ring[(size_t)ch * n + (at + i) % n]);
        g_string_append_printf(out, "%s NCCL INFO %s\n", pre, line);
    }
    for (int r = 0; n > 1 && r < n; r++) { /* init.cc: each rank's trees (INIT) and ring neighbours (GRAPH) */
        rank_prefix(pre, sizeof pre, &c->dev[r]);
        if (init) {
            GString *t = g_string_new(NULL);
            for (int ch = 0; ch < nch; ch++) {
                int up, down[3];
                coll_tree_links(sys, ch, nch, r, &up, down);
                g_string_append_printf(t, " [%d] %d/%d/%d->%d->%d", ch, down[0], down[1], down[2], r, up);
            }
            if (t->len > 1023) /* NCCL's 1024-byte line */
                g_string_truncate(t, 1023);
            g_string_append_printf(out, "%s NCCL INFO Trees%s\n", pre, t->str);
            g_string_free(t, TRUE);
        }
        for (int ch = 0; on.graph && ch < nch; ch++) {
            int i = pos[(size_t)ch * n + r];
            g_string_append_printf(out, "%s NCCL INFO Ring %02d : %d -> %d -> %d\n", pre, ch,
                                   ring[(size_t)ch * n + (i + n - 1) % n], r, ring[(size_t)ch * n + (i + 1) % n]);
        }
    }
    /* the rings' connections, channel by channel, then each rank's "Connected all rings" */
    for (int ch = 0; n > 1 && ch < nch; ch++)
        for (int r = 0; r < n; r++) {
            int i = pos[(size_t)ch * n + r];
            conn_lines(out, c, &on, ch, r, ring[(size_t)ch * n + (i + 1) % n]);
        }
    for (int r = 0; init && n > 1 && r < n; r++) {
        rank_prefix(pre, sizeof pre, &c->dev[r]);
        g_string_append_printf(out, "%s NCCL INFO Connected all rings\n", pre);
    }
    for (int r = 0; init && n > 1 && r < n; r++) {
        rank_prefix(pre, sizeof pre, &c->dev[r]);
        g_string_append_printf(out, "%s NCCL INFO Connected all trees\n", pre);
    }
    for (int r = 0; init && r < n; r++) {
        rank_prefix(pre, sizeof pre, &c->dev[r]);
        g_string_append_printf(out, "%s NCCL INFO ncclCommInitRank comm 0x%llx rank %d nranks %d cudaDev %d nvmlDev %d "
                                    "busId %x000 commId 0x%llx - Init COMPLETE\n", pre, comm_addr(r), r, n,
                               c->dev[r].device, c->dev[r].device, c->dev[r].pci_bus, c->comm_id);
    }
    g_free(ring);
    g_free(pos);
    return out->len ? g_string_free(out, FALSE) : (g_string_free(out, TRUE), NULL);
}

/* ncclDataType_t (src/nccl.h.in) of an nccl-tests type. */
static int nccl_dtype(nccltests_dtype dt)
{
    switch (dt) {
    case NCCLTESTS_INT8: return 0;
    case NCCLTESTS_UINT8: return 1;
    case NCCLTESTS_INT32: return 2;
    case NCCLTESTS_UINT32: return 3;
    case NCCLTESTS_INT64: return 4;
    case NCCLTESTS_UINT64: return 5;
    case NCCLTESTS_HALF: return 6;
    case NCCLTESTS_FLOAT: return 7;
    case NCCLTESTS_DOUBLE: return 8;
    case NCCLTESTS_BFLOAT16: return 9;
    case NCCLTESTS_FP8_E4M3: return 10;
    default: return 11;
    }
}

/* Stand-ins for a rank's buffers and stream (%p in NCCL's lines). */
static unsigned long long buf_addr(int rank) { return 0x7f0000000000ULL + 0x100000000ULL * (unsigned)rank; }
static unsigned long long stream_addr(int rank) { return 0x7e0000000000ULL + 0x1000ULL * (unsigned)rank; }

static void coll_line(GString *out, const char *pre, const char *name, uint64_t op_count, const char *sendbuff,
                      unsigned long long recvbuff, uint64_t count, int dt, int op, int root, int rank, int n)
{
    g_string_append_printf(out, "%s NCCL INFO %s: opCount %" G_GINT64_MODIFIER "x sendbuff %s recvbuff 0x%llx count %"
                                G_GUINT64_FORMAT " datatype %d op %d root %d comm 0x%llx [nranks=%d] stream 0x%llx\n",
                           pre, name, op_count, sendbuff, recvbuff, count, dt, op, root, comm_addr(rank), n,
                           stream_addr(rank));
}

char *nccl_log_coll(const nccl_log_comm *c, coll_kind kind, uint64_t count, nccltests_dtype dt,
                    nccltests_redop op, int root, int calls, int in_place_from, int agg, uint64_t *opcount)
{
    if (!nccl_log_on("COLL"))
        return NULL;
    static const char *const names[COLL_KINDS] = {
        [COLL_ALL_REDUCE] = "AllReduce", [COLL_ALL_GATHER] = "AllGather", [COLL_REDUCE_SCATTER] = "ReduceScatter",
        [COLL_BROADCAST] = "Broadcast",  [COLL_REDUCE] = "Reduce",        [COLL_GATHER] = "Gather",
        [COLL_SCATTER] = "Scatter"};
    int n = c->sys->nranks, d = nccl_dtype(dt), ncclop = op == NCCLTESTS_OP_NONE ? 0 : (int)op - 1;
    uint64_t size = nccltests_dtype_bytes(dt), per = count; /* nccl-tests' count: per rank where it splits */
    GString *out = g_string_new(NULL);
    char pre[160], sb[40];
    for (int k = 0; k < calls; k++) {
        bool inplace = k >= in_place_from;
        for (int r = 0; r < n; r++) {
            rank_prefix(pre, sizeof pre, &c->dev[r]);
            unsigned long long recv = buf_addr(r) + 0x80000000ULL, send = inplace ? recv : buf_addr(r);
            if (kind == COLL_ALLTOALL || kind == COLL_SENDRECV) { /* one group of sends and receives */
                for (int p = 0; p < n; p++) {
                    if (kind == COLL_SENDRECV && p != (r + 1) % n && p != (r + n - 1) % n)
                        continue;
                    uint64_t cnt = count;
                    unsigned long long off = kind == COLL_ALLTOALL ? (unsigned long long)p * per * size : 0;
                    if (kind == COLL_ALLTOALL || p == (r + 1) % n)
                        coll_line(out, pre, "Send", *opcount, "(nil)", send + off, cnt, d, 0, p, r, n);
                    if (kind == COLL_ALLTOALL || p == (r + n - 1) % n)
                        coll_line(out, pre, "Recv", *opcount, "(nil)", recv + off, cnt, d, 0, p, r, n);
                }
                continue;
            }
            /* all_gather (and gather) sends its block of the output, reduce_scatter's (and scatter's)
             * output is its block of the input; gather and scatter as NCCL 2.28+ logs them (nccl-tests
             * calls ncclGather/ncclScatter there) */
            uint64_t cnt = count;
            if (inplace && (kind == COLL_ALL_GATHER || kind == COLL_GATHER))
                send = recv + (unsigned long long)r * per * size;
            if (inplace && kind == COLL_SCATTER)
                recv = send + (unsigned long long)r * per * size;
            if (inplace && kind == COLL_REDUCE_SCATTER)
                recv = send + (unsigned long long)r * per * size;
            g_snprintf(sb, sizeof sb, "0x%llx", send);
            coll_line(out, pre, names[kind], *opcount, sb, recv, cnt, d, ncclop,
                      coll_default_root(kind) >= 0 ? root : 0, r, n);
        }
        /* per launch (ncclProxyStart): -m calls of one iteration are one group; NCCL 2.27+
         * starts the proxy only for a launch with network work, so on one node it stays */
        if (((k + 1) % (agg > 0 ? agg : 1) == 0 || k + 1 == calls || k + 1 == in_place_from) && c->sys->nnodes > 1)
            ++*opcount;
    }
    return g_string_free(out, FALSE);
}

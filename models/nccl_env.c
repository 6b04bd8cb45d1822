/* models/nccl_env.c - NCCL's channel knobs, read from the environment the
 * way NCCL reads them, and the channels a collective then runs on.
 *
 * NCCL 2.30 (src/graph/connect.cc, ncclTopoPostset): after its search and
 * duplication the communicator keeps min(NCCL_MAX_NCHANNELS, nChannels,
 * maxCTAs) channels, then copies channels up to max(NCCL_MIN_NCHANNELS,
 * minCTAs), at most MAXCHANNELS (64, src/include/device.h). maxCTAs/minCTAs
 * are ncclConfig_t fields that NCCL_MAX_CTAS / NCCL_MIN_CTAS override;
 * NCCL_MAX_NRINGS / NCCL_MIN_NRINGS are the older names of the NCCL_*_NCHANNELS
 * pair. NVLS keeps its own count (16 Hopper, 24/32 Blackwell), clamped to
 * [minCTAs, maxCTAs] only (src/transport/nvls.cc). NCCL_NVLS_ENABLE=0 turns
 * NVLS and NVLSTree off. NCCL_NET_OVERHEAD (ns; -2 NCCL's default) is the
 * proxy's work per multi-node ring network step (coll_net_ovh_us).
 * NCCL_BUFFSIZE is the Simple protocol's buffer per connection (default 4 MiB): NCCL_STEPS steps, so it sets Simple's step,
 * slice and chunk (coll.c). The tuner's bandwidths stay those of NCCL's search
 * graph (tuning.cc uses graph->nChannels), so the knobs change how many
 * thread blocks move the data, not which algorithm NCCL picks; below a size
 * NCCL still drops channels (tuner.c). docs/collectives.md, "Channel knobs".
 */
#include "coll_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NCCL_MAXCHANNELS 64

/* Env variable `name` as an integer, read as NCCL's ncclLoadParam reads it
 * (strtoll base 0: 0x10 and 020 are 16): *set false when unset or empty;
 * false when it is not such an integer (spaces and tabs after it allowed;
 * other trailing text, which NCCL drops silently, is refused), the caller
 * then reports it with its own expectation. */
static bool env_int(const char *name, const char **v, long long *out, bool *set)
{
    *v = g_getenv(name);
    *set = *v && **v;
    *out = 0;
    if (!*set)
        return true;
    char *end;
    errno = 0;
    *out = strtoll(*v, &end, 0);
    while (*end == ' ' || *end == '\t')
        end++;
    return !errno && end != *v && !*end;
}

/* *out = the value of env variable `name`: 0 when unset, empty or "0" (NCCL
 * ignores values <= 0), at most NCCL_MAXCHANNELS (NCCL clamps to it); false
 * with *err when it is not an integer in 0..1024. */
static bool env_channels(const char *name, int *out, GError **err)
{
    const char *v;
    long long n;
    bool set;
    *out = 0;
    if (!env_int(name, &v, &n, &set) || n < 0 || n > 1024) {
        g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED,
                    "environment %s='%s': expected a channel count (an integer, at most %d used)", name, v,
                    NCCL_MAXCHANNELS);
        return false;
    }
    *out = n > NCCL_MAXCHANNELS ? NCCL_MAXCHANNELS : (int)n;
    return true;
}

const coll_nccl_var coll_nccl_vars[] = {
    {"NCCL_ALGO", COLL_NCCL_VAR_STRING},         {"NCCL_PROTO", COLL_NCCL_VAR_STRING},
    {"NCCL_MIN_NRINGS", COLL_NCCL_VAR_INT},      {"NCCL_MAX_NRINGS", COLL_NCCL_VAR_INT},
    {"NCCL_MIN_NCHANNELS", COLL_NCCL_VAR_INT},   {"NCCL_MAX_NCHANNELS", COLL_NCCL_VAR_INT},
    {"NCCL_MIN_CTAS", COLL_NCCL_VAR_INT},        {"NCCL_MAX_CTAS", COLL_NCCL_VAR_INT},
    {"NCCL_NVLS_ENABLE", COLL_NCCL_VAR_INT},     {"NCCL_COLLNET_ENABLE", COLL_NCCL_VAR_INT},
    {"NCCL_BUFFSIZE", COLL_NCCL_VAR_INT},        {"NCCL_P2P_DISABLE", COLL_NCCL_VAR_P2P},
    {"NCCL_P2P_LEVEL", COLL_NCCL_VAR_P2P},       {"NCCL_NET_OVERHEAD", COLL_NCCL_VAR_INT},
    {"NCCL_CROSS_NIC", COLL_NCCL_VAR_INT},       {NULL, COLL_NCCL_VAR_STRING},
};

/* NCCL 2.30's path type names (topoPathTypeStr, topo.cc); the old numbers
 * 0..5 are LOC PIX PXB PHB SYS SYS (levelsOldToNew, paths.cc). */
static const char *const path_names[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"};

bool coll_p2p_level_from_name(const char *s, int *out)
{
    for (int i = 0; i < (int)G_N_ELEMENTS(path_names); i++)
        if (!strcmp(s, path_names[i])) { /* NCCL compares with strcmp: "nvl" is no level */
            *out = i;
            return true;
        }
    return false;
}

const char *coll_p2p_level_name(int level)
{
    return level >= 0 && level < (int)G_N_ELEMENTS(path_names) ? path_names[level] : "?";
}

/* As paths.cc ncclGetLevel: NCCL_P2P_DISABLE whose strtol(.., 0) is 1 is
 * LOC (any other value: not disabled, as NCCL reads it); else
 * NCCL_P2P_LEVEL by name, or a number in NCCL's old numbering. A name NCCL
 * does not know, which NCCL ignores silently, is an error here, saying so. */
static bool env_p2p_level(int *out, GError **err)
{
    static const int old[] = {FAB_PATH_LOC, FAB_PATH_PIX, FAB_PATH_PXB, FAB_PATH_PHB, FAB_PATH_SYS, FAB_PATH_SYS};
    *out = -1;
    const char *d = g_getenv("NCCL_P2P_DISABLE"), *l = g_getenv("NCCL_P2P_LEVEL");
    if (d && strtol(d, NULL, 0) == 1) {
        *out = FAB_PATH_LOC;
        return true;
    }
    if (!l || !*l || coll_p2p_level_from_name(l, out))
        return true;
    if (l[0] >= '0' && l[0] <= '9') {
        long v = strtol(l, NULL, 0);
        *out = old[v > 5 || v < 0 ? 5 : v];
        return true;
    }
    g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED,
                "environment NCCL_P2P_LEVEL='%s': not a level NCCL knows (NCCL would ignore it): expected LOC, NVL, "
                "NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS (upper case) or a number", l);
    return false;
}

void coll_nccl_env_apply(const coll_nccl_env *e, fabric *f)
{
    if (e->p2p_set)
        fabric_set_p2p_level(f, e->p2p_level);
}

bool coll_nccl_buffsize_ok(uint64_t bytes) { return bytes >= 65536 && bytes <= (1ull << 30) && bytes % 4096 == 0; }

bool coll_nccl_env_read(coll_nccl_env *e, GError **err)
{
    *e = (coll_nccl_env){0};
    int rings_min, rings_max;
    if (!env_channels("NCCL_MIN_NRINGS", &rings_min, err) || !env_channels("NCCL_MAX_NRINGS", &rings_max, err) ||
        !env_channels("NCCL_MIN_NCHANNELS", &e->min_nch, err) ||
        !env_channels("NCCL_MAX_NCHANNELS", &e->max_nch, err) || !env_channels("NCCL_MIN_CTAS", &e->min_ctas, err) ||
        !env_channels("NCCL_MAX_CTAS", &e->max_ctas, err))
        return false;
    if (!e->min_nch) /* the newer name wins, as in NCCL's ncclMinNchannels() */
        e->min_nch = rings_min;
    if (!e->max_nch)
        e->max_nch = rings_max;
    const char *v;
    long long n;
    bool set;
    if (!env_int("NCCL_BUFFSIZE", &v, &n, &set) || (set && (n < 0 || !coll_nccl_buffsize_ok((uint64_t)n)))) {
        g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED,
                    "environment NCCL_BUFFSIZE='%s': expected bytes, a multiple of 4096 from 65536 to 1073741824", v);
        return false;
    }
    e->buffsize = (uint64_t)n;
    if (!env_p2p_level(&e->p2p_level, err))
        return false;
    e->p2p_set = e->p2p_level >= 0;
    /* ns, as NCCL's ncclParamNetOverhead (-2: its default, not set) */
    if (!env_int("NCCL_NET_OVERHEAD", &v, &n, &set) || (n < 0 && n != -2) || n > 1000000000LL) {
        g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED,
                    "environment NCCL_NET_OVERHEAD='%s': expected nanoseconds, 0 to 1000000000 (or -2: NCCL's default)",
                    v);
        return false;
    }
    e->net_ovh_set = set && n >= 0;
    e->net_ovh_us = (double)n * 1e-3;
    /* NCCL_CROSS_NIC (search.cc, default 2): 1 lets a ring leave a server on
     * another NIC than it came in by; 0 and 2 try the same NIC first, which
     * the servers conveyor ships always allow */
    if (!env_int("NCCL_CROSS_NIC", &v, &n, &set) || n < 0 || n > 2) {
        g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED, "environment NCCL_CROSS_NIC='%s': expected 0, 1 or 2",
                    v);
        return false;
    }
    e->cross_nic = set && n == 1;
    const char *nv = g_getenv("NCCL_NVLS_ENABLE");
    if (nv && *nv) {
        if (strcmp(nv, "0") && strcmp(nv, "1") && strcmp(nv, "2")) {
            g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED,
                        "environment NCCL_NVLS_ENABLE='%s': expected 0, 1 or 2", nv);
            return false;
        }
        e->nvls_off = !strcmp(nv, "0");
    }
    const char *cn = g_getenv("NCCL_COLLNET_ENABLE"); /* read by the tuner; "yes" was taken as off */
    if (cn && *cn && strcmp(cn, "0") && strcmp(cn, "1")) {
        g_set_error(err, COLL_ERROR, COLL_ERROR_UNSUPPORTED, "environment NCCL_COLLNET_ENABLE='%s': expected 0 or 1",
                    cn);
        return false;
    }
    return true;
}

int coll_run_channels(const coll_system *sys, coll_algo_id algo)
{
    return coll_channels_limit(sys, algo, coll_channels(sys, algo));
}

int coll_channels_limit(const coll_system *sys, coll_algo_id algo, int n)
{
    const coll_nccl_env *e = &sys->nccl;
    int max_ctas = e->max_ctas > 0 ? e->max_ctas : NCCL_MAXCHANNELS, min_ctas = e->min_ctas > 0 ? e->min_ctas : 1;
    if (algo == ALGO_DIRECT) /* point-to-point channels: NCCL's own (not modelled by these knobs) */
        return n;
    if (algo == ALGO_NVLS || algo == ALGO_NVLS_TREE)
        return MAX(min_ctas, MIN(max_ctas, n));
    int hi = e->max_nch > 0 ? MIN(e->max_nch, max_ctas) : max_ctas;
    n = MIN(n, hi);
    int lo = MIN(MAX(e->min_nch, min_ctas), NCCL_MAXCHANNELS);
    return MAX(n, lo); /* max first, then min: NCCL copies the kept channels up to it */
}

/* models/coll_kind.c - collective names and nccl-tests' busbw factors
 * (nccl-tests src/<coll>.cu GetBw functions, doc/PERFORMANCE.md). */
#include "coll_kind.h"

#include <assert.h>
#include <ctype.h>
#include <stddef.h>
#include <string.h>

static const char *const coll_names[COLL_KINDS] = {
    [COLL_ALL_REDUCE] = "all_reduce",   [COLL_ALL_GATHER] = "all_gather",
    [COLL_REDUCE_SCATTER] = "reduce_scatter", [COLL_BROADCAST] = "broadcast",
    [COLL_REDUCE] = "reduce",           [COLL_ALLTOALL] = "alltoall",
    [COLL_SENDRECV] = "sendrecv",     [COLL_GATHER] = "gather",
    [COLL_SCATTER] = "scatter",
};

const char *coll_kind_name(coll_kind kind)
{
    assert(kind >= 0 && kind < COLL_KINDS);
    return coll_names[kind];
}

/* Lower-case copy of `s` without '_', '-' and ' ', a leading path and a
 * trailing "perf"; into buf of size n. */
static void squash_name(const char *s, char *buf, size_t n)
{
    const char *slash = strrchr(s, '/');
    if (slash)
        s = slash + 1;
    size_t k = 0;
    for (; *s && k + 1 < n; s++) {
        if (*s == '_' || *s == '-' || *s == ' ')
            continue;
        buf[k++] = (char)tolower((unsigned char)*s);
    }
    buf[k] = '\0';
    if (k > 4 && strcmp(buf + k - 4, "perf") == 0)
        buf[k - 4] = '\0';
}

int coll_kind_from_name(const char *name, coll_kind *out)
{
    char want[64], have[64];
    if (!name)
        return -1;
    squash_name(name, want, sizeof want);
    for (int k = 0; k < COLL_KINDS; k++) {
        squash_name(coll_names[k], have, sizeof have);
        if (strcmp(want, have) == 0) {
            *out = (coll_kind)k;
            return 0;
        }
    }
    return -1;
}

double coll_busbw_factor(coll_kind kind, int nranks)
{
    assert(nranks >= 1);
    double n = nranks;
    switch (kind) {
    case COLL_ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_ALLTOALL:
    case COLL_GATHER:
    case COLL_SCATTER:
        return (n - 1) / n;
    case COLL_BROADCAST:
    case COLL_REDUCE:
    case COLL_SENDRECV:
        return 1.0;
    default:
        assert(!"bad coll_kind");
        return 1.0;
    }
}

bool coll_is_reducing(coll_kind kind)
{
    return kind == COLL_ALL_REDUCE || kind == COLL_REDUCE_SCATTER || kind == COLL_REDUCE;
}

int coll_default_root(coll_kind kind)
{
    return (kind == COLL_BROADCAST || kind == COLL_REDUCE || kind == COLL_GATHER || kind == COLL_SCATTER) ? 0 : -1;
}

bool coll_is_p2p(coll_kind kind)
{
    return kind == COLL_ALLTOALL || kind == COLL_SENDRECV || kind == COLL_GATHER || kind == COLL_SCATTER;
}


bool coll_empty_is_noop(coll_kind kind)
{
    return !coll_is_p2p(kind);
}

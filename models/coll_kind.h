/* models/coll_kind.h - which collective: the names NCCL and nccl-tests use,
 * and nccl-tests' bus-bandwidth factor. Shared by the collective models and
 * the readers/writers of traces/. */
#ifndef MODELS_COLL_KIND_H
#define MODELS_COLL_KIND_H

#include <stdbool.h>

typedef enum {
    COLL_ALL_REDUCE,
    COLL_ALL_GATHER,
    COLL_REDUCE_SCATTER,
    COLL_BROADCAST,
    COLL_REDUCE,
    COLL_ALLTOALL,
    COLL_SENDRECV,
    COLL_GATHER,  /* to a root: NCCL 2.28's ncclGather, nccl-tests' gather_perf */
    COLL_SCATTER, /* from a root: ncclScatter, scatter_perf */
    COLL_KINDS
} coll_kind;

/* "all_reduce", "all_gather", ...; static string; asserts on a bad kind. */
const char *coll_kind_name(coll_kind kind);

/* Parses "all_reduce", "allreduce", "all_reduce_perf", "AllReduce",
 * "all-reduce" (case, '_' and '-' ignored; a "_perf" suffix and a leading
 * path are dropped).  Returns 0 and sets *out, or -1 if unknown. */
int coll_kind_from_name(const char *name, coll_kind *out);

/* nccl-tests' busbw/algbw factor for nranks ranks: 2(n-1)/n for all_reduce,
 * (n-1)/n for all_gather, reduce_scatter, alltoall, gather and scatter, 1
 * for broadcast, reduce and sendrecv.  nranks must be >= 1. */
double coll_busbw_factor(coll_kind kind, int nranks);

/* True for all_reduce, reduce_scatter and reduce (they take a redop). */
bool coll_is_reducing(coll_kind kind);

/* The root nccl-tests prints: 0 for broadcast, reduce, gather and scatter,
 * -1 otherwise. */
int coll_default_root(coll_kind kind);

/* True for the kinds NCCL runs as sends and receives (alltoall, sendrecv,
 * gather, scatter: algorithm Direct). */
bool coll_is_p2p(coll_kind kind);

/* True where NCCL drops a call of 0 elements without launching anything or
 * waiting for the other ranks ("Empty collectives can be discarded",
 * taskAppend in src/enqueue.cc, NCCL 2.12+): all_reduce, all_gather,
 * reduce_scatter, broadcast, reduce. Sends and receives of 0 bytes (and the
 * kinds NCCL runs as them) still meet their peer. */
bool coll_empty_is_noop(coll_kind kind);

#endif

/* cli/simsweep.h - simulate an nccl-tests style sweep (one collective per
 * size) on a system: tuner choice per size (or forced algo/proto), one
 * coll_run per size, rows in nccl-tests' conventions. Shared by `collective`
 * and `validate`. */
#ifndef CLI_SIMSWEEP_H
#define CLI_SIMSWEEP_H

#include <stdio.h>

#include "models/coll.h"
#include "traces/nccltests.h"

typedef struct {
    coll_algo_id algo;
    coll_proto_id proto;
    int nchannels;
    char busiest[96];
    double busiest_util;
    uint64_t events;
} simsweep_explain;

/* How nccl-tests launches the calls: agg, its -m (collectives per group; 1:
 * one launch each; agg > 1 needs simsweep_agg_ok(kind)); graph, its -G > 0
 * (the calls captured in a CUDA graph: NCCL's host work is done at capture,
 * so no call pays a host launch; NCCL's base latency, on the GPU, stays). */
typedef struct {
    int agg;
    bool graph;
} simsweep_launch;

/* For each size (nccl-tests size column, bytes) fill rows[i] (size, count,
 * times, bandwidths; in-place = out-of-place) and, if ex is not NULL,
 * ex[i]. root: broadcast/reduce's root rank (< 0: rank 0). algo_spec/proto_spec are NCCL_ALGO/NCCL_PROTO-style strings or
 * NULL. nvls_reduces: whether NCCL can do the run's reduction and type in
 * the NVSwitch (nccltests_nvls_reduces); if not, NVLS and NVLSTree are not
 * candidates for all_reduce/reduce_scatter (NCCL's nvlsSupport). progress
 * (a command name, or NULL: none) draws a progress line naming the size that
 * runs (cli/progress.h). ln: how the calls are launched (agg 0 counts as 1).
 * Returns false with *err on a bad spec or a failed simulation. */
bool simsweep_run(const coll_system *sys, coll_kind kind, int root, size_t elt_bytes, bool nvls_reduces,
                  const uint64_t *sizes, size_t n, simsweep_launch ln, const char *algo_spec, const char *proto_spec,
                  nccltests_row *rows, simsweep_explain *ex, const char *progress, GError **err);

/* Whether -m (several collectives in one ncclGroupStart/End) is modelled
 * for kind: the collectives NCCL's planner aggregates (ncclPrepareTasks,
 * src/enqueue.cc: tasks of one function, operation and type are sized as
 * one, their algorithm, protocol and channels picked for the summed size,
 * and they run side by side on shares of the channels in one kernel), so m
 * calls of S bytes run as one collective of m x S and each takes 1/m of it.
 * Not the ones made of sends and receives (alltoall, sendrecv, gather,
 * scatter), which NCCL schedules otherwise. */
bool simsweep_agg_ok(coll_kind kind);

/* The "# explain:" block (per size: algorithm, protocol, channels, busiest
 * link and its utilisation, events, the predicted busbw and, where blo/bhi
 * give one (> 0), its validation band in `regime` names; NULL: none). */
void simsweep_print_explain(FILE *f, const nccltests_row *rows, const simsweep_explain *ex, size_t n,
                            coll_kind kind, int nranks, const double *blo, const double *bhi,
                            const char *const *regime);

#endif

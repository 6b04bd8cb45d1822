/* traces/trace.h - what a training job did, per rank: the operations the
 * replay runs (compute kernels, collectives, point-to-point sends and
 * receives, host-side gaps) on streams, with their dependencies.
 *
 * Every importer (native JSON/CSV, PyTorch profiler / Kineto, Chakra) and
 * the workload generator produce this one structure; models/replay.c runs
 * it on a simulated cluster. Ranks are 0..nranks-1; a rank's operations are
 * kept in the order of the source; on one stream they run in that order.
 */
#ifndef TRACES_TRACE_H
#define TRACES_TRACE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "models/coll_kind.h"

typedef enum {
    TOP_COMPUTE,  /* a kernel (or host gap): runs for dur_ps, or as the compute model says */
    TOP_COLL,     /* a collective over a process group */
    TOP_SEND,     /* point-to-point send to `peer` */
    TOP_RECV,     /* point-to-point receive from `peer` */
    TOP_KINDS
} trace_op_kind;

/* Fields paired so that the struct has no padding (104 bytes): a generated
 * step holds millions of these (`fused` shares the word of `kind`). */
typedef struct {
    trace_op_kind kind : 8;
    unsigned fused : 1;  /* TOP_COLL: launched in one kernel with the collective before it on
                          * its stream, of the same group (one ncclGroupStart/End, PyTorch's
                          * coalesced calls): no host launch of its own */
    unsigned copy : 1;   /* TOP_SEND/RECV: a copy between peers' memory (copy engine or a
                          * library's own kernel, as Transformer Engine's userbuffers), not
                          * NCCL's: no NCCL launch, no protocol, the route at its rate */
    unsigned sms : 11;   /* TOP_COLL: SMs its kernel holds on each member while it runs, where
                          * another library than NCCL runs it (Transformer Engine's userbuffers:
                          * num_sm), 1..1024; 0: NCCL's channels (the tuner's). Only the
                          * slowdown of compute beside it reads it (a bit-field: the op stays
                          * 104 bytes) */
    int stream;          /* stream id within the rank (0 = the default/compute stream) */
    const char *name;    /* kernel / op name: interned (g_intern_string), shared, never freed */
    int64_t dur_ps;      /* measured duration, ps; -1 if unknown */
    double flops;        /* compute: floating-point operations (0 if unknown) */
    double mem_bytes;    /* compute: device-memory bytes moved (0 if unknown) */
    coll_kind coll;      /* TOP_COLL */
    int group;           /* TOP_COLL: index into trace.groups */
    uint64_t bytes;      /* TOP_COLL: the nccl-tests size of the call (all_reduce: the
                          * buffer; all_gather: total output; reduce_scatter: total
                          * input; alltoall: total per rank); SEND/RECV: message bytes */
    int64_t seq;         /* TOP_COLL: sequence number within the group (>= 0) */
    int peer;            /* TOP_SEND/RECV: the other rank (global) */
    int root;            /* broadcast/reduce root (group-local); alltoall: 0 an even split, k > 0 each
                          * member receiving by trace.a2a_weights[k-1] (an uneven dispatch), k < 0
                          * sending by trace.a2a_weights[-k-1] (its reverse, a combine); else 0 */
    int64_t tag;         /* TOP_SEND/RECV: matching tag (sends and receives of one
                          * (src, dst, tag) match in order) */
    GArray *deps;        /* uint32_t indices of earlier ops of the same rank this
                          * one waits for (besides stream order); may be NULL */
    int64_t ts_ps;       /* start time in the source trace (ps), -1 if none */
    int64_t src_index;   /* position in the source file (event/record/node index), for
                          * error messages */
} trace_op;

typedef struct {
    char *name;          /* e.g. "0", "tp0", "default_pg" (owned) */
    int *ranks;          /* global ranks, ascending (owned) */
    int size;
} trace_group;

typedef struct {
    GArray *ops;         /* trace_op */
} trace_rank;

typedef struct {
    int nranks;
    trace_rank *ranks;   /* nranks entries */
    GPtrArray *groups;   /* trace_group* */
    char *source;        /* file or directory it came from (owned) */
    int64_t step_ps;     /* traced step time (e.g. median ProfilerStep), -1 if unknown */
    int steps;           /* training steps the trace covers, 0 if unknown */
    GPtrArray *a2a_weights; /* GArray of double, mean 1, group-local order: an uneven alltoall's share per
                          * group member (n of them: member i sends (receives) bytes / n x w[j] to (from)
                          * j), or a whole matrix (n x n, row i the sender: i sends bytes / n x w[i n + j]
                          * to j, the diagonal its own piece) */
    GHashTable *a2a_index; /* a2a_weights by content (trace_a2a_weights_add), built on first use; NULL */
} trace;

/* A new trace of nranks empty ranks (nranks >= 1). Caller frees with trace_free. */
trace *trace_new(int nranks, const char *source);
void trace_free(trace *t);

/* The group over these global ranks (sorted, de-duplicated internally);
 * returns its index, reusing an existing group with the same member set
 * and name (any name when `name` is NULL): two named groups of the same
 * ranks are two communicators. `name` may be NULL (then "g<index>"). */
int trace_group_add(trace *t, const char *name, const int *ranks, int n);
/* The group of all ranks. */
int trace_group_world(trace *t);
/* Global rank r's place in g (its group-local rank), -1 if r is not a member. */
int trace_group_pos(const trace_group *g, int r);
/* An uneven alltoall's weights (n of them, or n x n for a matrix; each >= 0, normalised here to
 * mean 1): the root value a receiver-weighted alltoall carries (k >= 1; its sender-weighted reverse,
 * or the matrix transposed, carries -k), reusing an equal vector already added. */
int trace_a2a_weights_add(trace *t, const double *w, int n);
/* The same list appended as it is (scaled to mean 1, not shared with an equal one: a file's roots
 * name lists by their place); returns its k. */
int trace_a2a_weights_append(trace *t, const double *w, int n);
/* The weights an alltoall's root names (NULL for 0 or one out of the table), their count in *n. */
const double *trace_a2a_weights(const trace *t, int root, int *n);

/* Append op to rank r (takes ownership of op->deps; op->name is borrowed:
 * the trace keeps an interned copy, so the millions of ops of a generated
 * step share a handful of strings); returns its index in the rank. */
uint32_t trace_op_add(trace *t, int r, const trace_op *op);
/* Add a dependency: op `after` of rank r waits for op `before` (before < after). */
void trace_op_dep(trace *t, int r, uint32_t after, uint32_t before);

/* Check what replay needs: deps point backwards to existing ops, groups
 * contain the ranks that use them, collectives of one (group, seq) agree
 * on op, bytes and root on every member rank and every member has it,
 * send/recv peers exist and every send has a matching receive (and back),
 * a fused collective follows a collective of its group on its stream.
 * Fills missing collective seq numbers (-1) in per-(rank, group) order.
 * Errors name the ranks, the operation and its index in each rank's trace
 * (TRACE_ERROR_MISMATCH / TRACE_ERROR_UNMATCHED / TRACE_ERROR_REF). */
gboolean trace_validate(trace *t, GError **err);

/* Largest collective sequence number + 1 (trace_validate refuses more). */
#define TRACE_MAX_SEQ (INT64_C(1) << 40)
/* A native trace op's longest duration, ps ("dur_us" up to 1e12). */
#define TRACE_MAX_DUR_PS 1e18
/* The key of collective `seq` (0 <= seq < TRACE_MAX_SEQ) of group `group`:
 * one integer per (group, seq), for the tables that line collectives up. */
static inline int64_t trace_coll_key(int group, int64_t seq)
{
    return ((int64_t)group << 40) | seq;
}
/* Fills missing collective seq numbers (-1) in per-(rank, group) call order,
 * as trace_validate does first. */
void trace_number_collectives(trace *t);

/* FALSE with *err (which may be NULL) when t is a rank (or some ranks) of a
 * larger job: a group names a rank, or a send/receive a peer, beyond t's
 * ranks. Such a trace is validated after trace_replicate; the replay
 * refuses it as it is. */
gboolean trace_check_whole(const trace *t, GError **err);

/* SPMD replication: a trace of one rank (rank 0 of `t`) copied to n ranks;
 * groups of rank 0 are mapped onto the new ranks by their size: a group of
 * size g becomes n/g groups of consecutive... (see traces/trace.c). Returns
 * a new trace, or NULL with *err when the sizes do not divide n. */
trace *trace_replicate(const trace *t, int n, GError **err);

/* Total operations over all ranks. */
size_t trace_op_count(const trace *t);
const char *trace_op_kind_name(trace_op_kind k);

/* Sets *err (TRACE_ERROR, code) to "where: <message>" and returns FALSE:
 * the importers' error with its file and position. */
gboolean trace_fail(GError **err, int code, const char *where, const char *fmt, ...) G_GNUC_PRINTF(4, 5);

#define TRACE_ERROR (trace_error_quark())
GQuark trace_error_quark(void);
enum {
    TRACE_ERROR_IO = 1,
    TRACE_ERROR_PARSE,     /* malformed file: position in the message */
    TRACE_ERROR_SCHEMA,    /* missing/unknown field, wrong type */
    TRACE_ERROR_VALUE,     /* negative/NaN/absurd number, unknown name */
    TRACE_ERROR_REF,       /* dangling dependency, unknown group or peer */
    TRACE_ERROR_CYCLE,     /* cyclic dependencies */
    TRACE_ERROR_MISMATCH,  /* ranks disagree on a collective */
    TRACE_ERROR_UNMATCHED, /* a peer never posts the matching operation */
    TRACE_ERROR_DEADLOCK,  /* replay stopped with ranks still waiting */
};

#endif

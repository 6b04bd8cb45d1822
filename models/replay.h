/* models/replay.h - run a training job's trace on a simulated cluster.
 *
 * The three queue layers of conveyor's model, all on one engine and one
 * fabric: each rank's streams run their operations in order (layer 2: an
 * operation waits for the one before it on its stream and for its explicit
 * dependencies); a collective starts when every member of its group has
 * reached it (layer 1: the collective library's queue, per (group, seq)) and
 * then runs as NCCL would (tuner + algorithm state machines), its chunks
 * queuing on the links with everything else in flight (layer 3); a send and
 * its receive move when both are posted. Compute takes its traced duration
 * (scaled by compute_scale).
 */
#ifndef MODELS_REPLAY_H
#define MODELS_REPLAY_H

#include <glib.h>

#include "models/coll.h"
#include "traces/trace.h"

typedef struct {
    const coll_system *sys; /* the cluster; its ranks are the trace's ranks */
    double compute_scale;   /* compute durations x this (0.5 = GPUs twice as fast) */
    uint32_t algo_mask, proto_mask; /* tuner limits (0 = NCCL's choice) */
    bool record;            /* keep op intervals and link transfers for a timeline */
    bool by_name;           /* fill replay_result.exposed_by_name and compute_by_name */
    /* The same cluster built a second time (same topology and options), or
     * NULL. When set, each distinct collective (group, op, size, algorithm,
     * protocol, channels, root) is simulated once alone on iso, and every
     * instance whose links are free of other traffic when it launches takes
     * that duration instead of being simulated again on sys (docs/traces.md,
     * "Repeated collectives"). NULL: every collective runs on sys. */
    const coll_system *iso;
    /* SMs of each GPU, or 0. When set, a compute op that starts while
     * collectives of its rank are in flight runs slower by the share of
     * SMs their channels (one thread block each) hold, and by sm_penalty:
     * d x S / (S - C) x (1 + sm_penalty), C = their channels (docs/traces.md,
     * "Compute beside communication"). For generated workloads; a traced
     * compute duration already carries what overlap did to it. */
    int gpu_sms;
    double sm_penalty;
    /* Called every SIM_PROGRESS_EVENTS engine events, or NULL: the share of
     * the trace's ops done, the simulated time (ps) and the events so far. */
    void (*progress)(void *ctx, double ops_done_frac, int64_t now_ps, uint64_t events);
    void *progress_ctx;
} replay_opts;

typedef struct {
    int64_t compute_ps;      /* time with a compute op running (union over streams) */
    int64_t comm_ps;         /* time with a collective or send/recv in flight (union) */
    int64_t exposed_comm_ps; /* comm time with no compute running */
    int64_t exposed_net_ps; /* the part of it with an op between servers in flight: a
                              * collective whose group spans servers (NVLink domains), a
                              * send/receive to another; the rest waited on NVLink/PCIe only */
    int64_t idle_ps;         /* neither */
    int64_t slowed_ps;       /* compute time added by collectives holding SMs (opts.gpu_sms) */
    int64_t wait_peers_ps;   /* layer 1: collectives waiting for the group's other ranks */
    int64_t wait_stream_ps;  /* layer 2: ops ready but waiting for their stream */
    int64_t end_ps;          /* when its last op finished */
} replay_rank;

typedef struct {
    coll_kind op;
    uint64_t bytes;
    int group_size;
    int group_nodes;          /* servers its group spans */
    int64_t start_ps, sim_ps; /* launch time and simulated duration */
    int64_t traced_ps;        /* the traced kernel duration (rank of its first member), -1 if none */
    coll_algo_id algo;
    coll_proto_id proto;
    int nchannels;            /* the tuner's */
    int group;                /* trace group */
    bool reused;              /* took the isolated duration (opts.iso) */
    bool fused;               /* launched with the collective before it: no host launch */
    bool uneven;              /* an alltoall with weights (trace.a2a_weights): pairs move unequal bytes */
} replay_coll;

typedef struct {
    int rank, stream;
    trace_op_kind kind;
    const char *name;         /* points into the trace */
    int64_t start_ps, end_ps;
} replay_interval;

/* A stretch of a rank's exposed communication (opts.record): no compute
 * running, a collective or send/receive in flight; net: one of them leaves
 * the server (as replay_rank.exposed_net_ps counts it). */
typedef struct {
    int rank;
    bool net;
    int64_t start_ps, end_ps;
} replay_exposed_span;

/* Exposed communication of one op name (opts.by_name), summed over ranks:
 * each stretch of a rank's exposed time is shared equally among the
 * communication ops it has in flight then. */
typedef struct {
    const char *name;         /* interned, from the trace */
    int64_t ps;               /* summed over ranks */
    int64_t net_ps;           /* the part while an op between servers was in flight */
} replay_exposed;

typedef struct {
    int64_t end_ps;           /* makespan */
    int nranks;
    replay_rank *ranks;
    GArray *colls;            /* replay_coll, in launch order */
    GArray *intervals;        /* replay_interval (opts.record) */
    GArray *exposed_spans;    /* replay_exposed_span (opts.record), rank by rank, in time order */
    GArray *exposed_by_name;  /* replay_exposed, largest first, equal ones by name (opts.by_name) */
    GArray *compute_by_name;  /* replay_exposed (net_ps 0): each rank's compute time by op name, summed
                               * over ranks; a stretch with several compute ops running is shared
                               * equally among them, so a rank's add up to its compute_ps (opts.by_name) */
    int64_t link_qdelay_ps;   /* layer 3: total time chunks waited on links */
    uint64_t events;          /* engine events of the replay (iso runs not included) */
    double wall_s;
    /* repeated collectives (opts.iso): */
    uint64_t memo_runs;       /* distinct collectives simulated alone on iso */
    uint64_t memo_events;     /* engine events of those runs */
    uint64_t memo_hits;       /* instances that took the isolated duration */
    uint64_t memo_overlaps;   /* transfers or collectives that started on links an instance
                                 reused this way was holding (contention not simulated) */
    uint64_t p2p_memo_runs;   /* distinct sends/receives (route parameters, size) simulated alone */
    uint64_t p2p_memo_hits;   /* sends/receives that took the isolated duration */
    uint64_t empty_colls;     /* collectives of 0 bytes, which NCCL discards (coll_empty_is_noop):
                               * done when issued, per rank; not in colls */
} replay_result;

/* Replay t on o->sys (t->nranks must equal o->sys->nranks; t must have
 * passed trace_validate). On a deadlock (ranks left waiting) or a bad
 * operation returns false with *err naming the ranks, operations and their
 * indices (TRACE_ERROR_DEADLOCK); never hangs. On success the caller
 * clears *out with replay_result_clear; on failure *out is already empty. With o->record, the fabric records link transfers
 * (fabric_transfer_log). */
bool replay_run(const trace *t, const replay_opts *o, replay_result *out, GError **err);
void replay_result_clear(replay_result *r);

#endif

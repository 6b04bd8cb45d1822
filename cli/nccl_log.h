/* cli/nccl_log.h - what NCCL_DEBUG=INFO would add to a simulated nccl-tests
 * run: the ENV lines of the NCCL variables conveyor honours and one TUNING
 * line per size (src/enqueue.cc's format), with NCCL's log prefix. */
#ifndef CLI_NCCL_LOG_H
#define CLI_NCCL_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "models/coll.h"
#include "traces/nccltests.h"

/* NCCL_DEBUG is INFO or TRACE and NCCL_DEBUG_SUBSYS (NCCL's default
 * INIT,BOOTSTRAP,ENV; ALL; a leading ^ negates) takes subsystem `sub`. */
bool nccl_log_on(const char *sub);
/* "NAME set by environment to VALUE" lines (newline-terminated, each after
 * `prefix`) for the NCCL variables set; NULL when none or ENV is off. */
char *nccl_log_env(const char *prefix);
/* The TUNING line of one call: "<func>: <bytes> Bytes -> Algo <A> proto <P>
 * channel{Lo..Hi}={0..nch-1}"; NULL for point-to-point collectives. */
char *nccl_log_tuning(const char *prefix, coll_kind kind, uint64_t bytes, coll_algo_id algo, coll_proto_id proto,
                      int nch);
/* tuning.cc's table order: NCCL's names (ncclFuncStr, ncclAlgoStr,
 * ncclProtoStr) and conveyor's ids. */
enum { NCCL_TABLE_NFUNC = 5, NCCL_TABLE_NALGO = 7, NCCL_TABLE_NPROTO = 3 };
typedef struct {
    const char *name;
    coll_kind kind;
} nccl_table_func_t;
typedef struct {
    const char *name;
    coll_algo_id id;
} nccl_table_algo_t;
typedef struct {
    const char *name;
    coll_proto_id id;
} nccl_table_proto_t;
extern const nccl_table_func_t nccl_table_func[NCCL_TABLE_NFUNC];
extern const nccl_table_algo_t nccl_table_algo[NCCL_TABLE_NALGO];
extern const nccl_table_proto_t nccl_table_proto[NCCL_TABLE_NPROTO];

/* tuning.cc's "Latency/AlgBw" table (printed once per communicator under
 * NCCL_DEBUG_SUBSYS=TUNING): a header line, then per collective NCCL tunes
 * (Broadcast, Reduce, AllGather, ReduceScatter, AllReduce) one line of
 * "latency/algbw" (us / GB/s) per algorithm and protocol, 0.0/0.0 where the
 * tuner does not consider the pair (coll_tune_table). NCCL's " Max
 * NThreads" line is not printed: conveyor does not model thread counts.
 * aspec/pspec: the NCCL_ALGO / NCCL_PROTO lists in force (NULL: none). */
char *nccl_log_tuning_table(const char *prefix, const coll_system *sys, const char *aspec, const char *pspec);
/* One cell as NCCL's table holds it: coll_tune_table, with the bandwidth of
 * a pair NCCL_ALGO / NCCL_PROTO (aspec/pspec, NULL: none) leave out zeroed,
 * as tuning.cc does. False when the pair is off. */
bool nccl_log_table_cell(const coll_system *sys, coll_kind kind, coll_algo_id algo, coll_proto_id proto,
                         const char *aspec, const char *pspec, double *lat_us, double *algbw_GBps);

/* What NCCL's init logs for a communicator (NCCL_DEBUG=INFO, subsystem
 * INIT; GRAPH adds each rank's ring neighbours, P2P/SHM/NET the
 * connections alone): per rank "comm ... nRanks nNodes localRanks
 * localRank MNNVL", rank 0's ring per channel ("Channel cc/NN :" and the
 * ranks, rings.cc), each rank's trees ("Trees [c] d0/d1/d2->r->up",
 * init.cc), every ring connection with its transport (p2p.cc, shm.cc,
 * net.cc formats: P2P/direct pointer|CUMEM|MNNVL[/read], SHM/direct/direct,
 * NET/<net>/<dev>[(proxy)][/GDRDMA] as a send and a receive line),
 * "Connected all rings/trees" and "ncclCommInitRank ... - Init COMPLETE".
 * The rings, trees and transports are the ones the simulation runs
 * (coll_ring_rank, coll_tree_links, coll_conn_of); the comm addresses and
 * commId are stand-ins. NULL when none of those subsystems is on. */
typedef struct {
    const coll_system *sys;
    const nccltests_device *dev; /* per rank: host, pid, device, PCI bus */
    const char *net;             /* NCCL's network name: "IB", "Socket", "Libfabric" */
    bool mnnvl;                  /* the NVLink domain spans hosts (GB200 trays) */
    unsigned long long comm_id;
} nccl_log_comm;
char *nccl_log_init(const nccl_log_comm *c);

/* The COLL lines (enqueue.cc: "AllReduce: opCount %lx sendbuff %p recvbuff
 * %p count %zu datatype %d op %d root %d comm %p [nranks=%d] stream %p")
 * of `calls` calls of one size, each on every rank in turn; half of them
 * in place when in_place_from <= the call's index. An all_to_all is each
 * rank's Send and Recv to every rank, a sendrecv a Send to the next rank and
 * a Recv from the previous one (nccl-tests' groups). count: nccl-tests'
 * count column (per rank for all_gather, reduce_scatter and alltoall, as
 * NCCL takes it); agg: calls per group (nccl-tests -m), which share an
 * opCount as NCCL counts launches; *opcount: launches so far.
 * NULL when COLL is off. */
char *nccl_log_coll(const nccl_log_comm *c, coll_kind kind, uint64_t count, nccltests_dtype dt,
                    nccltests_redop op, int root, int calls, int in_place_from, int agg, uint64_t *opcount);

#endif

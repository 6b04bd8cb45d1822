/* traces/nccllog.h - import NCCL's own debug log (NCCL_DEBUG=INFO with
 * NCCL_DEBUG_SUBSYS=INIT,COLL) as a trace of the job's collectives and
 * point-to-point operations.
 *
 * With COLL, NCCL logs every call as it is enqueued (src/enqueue.cc):
 *   host:pid:tid [dev] NCCL INFO AllReduce: opCount 3 sendbuff 0x.. recvbuff 0x..
 *     count 262144 datatype 7 op 0 root 0 comm 0x55.. [nranks=16] stream 0x7f..
 * and with INIT each communicator's rank ("comm 0x55.. rank 3 nranks 16
 * cudaDev 3 ... commId 0x.. - Init COMPLETE"). A process's calls are in its
 * lines' order; a communicator's members are the processes whose Init lines
 * carry its commId (or, from NCCLs that print none, the same size in the
 * same creation order); a rank's global number is its rank in the largest
 * communicator. The log has no durations and no compute, so the replay runs
 * the communication alone, each call on the CUDA stream it was enqueued on;
 * consecutive sends and receives of one stream with one opCount run
 * together, as the group (ncclGroupStart/End) they are; a group of one send
 * to and one receive from every rank of a communicator, all of one size, is
 * the all-to-all it stands for (where every member has the same ones), and
 * NCCL 2.28's Gather and Scatter are the sends and receives NCCL makes of
 * them. A rank's sends and receives to itself (its block of an all-to-all)
 * are local copies, left out. docs/traces-importers.md.
 */
#ifndef TRACES_NCCLLOG_H
#define TRACES_NCCLLOG_H

#include <glib.h>

#include "traces/nccltests.h"
#include "traces/trace.h"

/* What NCCL chose for the calls of one shape, from the log's TUNING lines
 * (NCCL_DEBUG_SUBSYS=TUNING adds, after a call's COLL line, "AllReduce:
 * 4194304 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..31}"): the
 * collective, the trace op's bytes and group, NCCL's line (the first of
 * that shape) and how many calls had one. */
typedef struct {
    coll_kind coll;
    uint64_t bytes;
    int group;
    nccltests_tuning t;
    int calls;
} nccllog_tuning;

/* What the log says besides the calls, each NULL where it says nothing:
 * NCCL's choices (TUNING lines, nccllog_tuning by shape) and the graphs its
 * init built for the communicator of all ranks: its ring lines (INIT
 * "Channel cc/NN :   0   1 ...", nccltests_ring, one per channel, from the
 * first of its ranks that printed them) and its ranks' Trees lines
 * (nccltests_tree, ranks as global ranks). */
typedef struct {
    GArray *tuning;
    GArray *rings;
    GArray *trees;
} nccllog_extras;

void nccllog_extras_clear(nccllog_extras *x);

/* Loads a log file holding every rank's lines (mpirun's combined output;
 * other lines are ignored) or a directory of logs (NCCL_DEBUG_FILE per
 * process: every file whose head has "NCCL INFO"). Validated. NULL with
 * *err (TRACE_ERROR_IO; _PARSE / _VALUE / _REF with file:line). *note (may
 * be NULL) gets one line on what was read and left out (caller g_free's).
 * *extras (may be NULL) is filled on success (caller nccllog_extras_clear's). */
trace *trace_nccllog_load(const char *path_or_dir, char **note, nccllog_extras *extras, GError **err);

/* Whether the first bytes of a file look like an NCCL debug log. */
gboolean nccllog_sniff(const char *head, gssize len);

#endif

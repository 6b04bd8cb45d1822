/* traces/flightrec.h - import PyTorch's Flight Recorder dumps (the JSON form:
 * TORCH_NCCL_TRACE_BUFFER_SIZE / TORCH_FR_BUFFER_SIZE with a JSON dump, one
 * file per rank named <prefix><rank>, e.g. /tmp/nccl_trace_rank_3) as a
 * trace of the job's collectives and point-to-point operations.
 *
 * A dump holds each rank's last N collectives per process group (a ring
 * buffer): the op (profiling_name "nccl:all_reduce", ...), its tensors'
 * sizes and types, the group (pg_config: name -> ranks), its sequence
 * number in the group, and with TORCH_NCCL_ENABLE_TIMING its measured GPU
 * duration. No compute is recorded, so the replay runs the communication
 * alone (each process group on a stream of its own, as PyTorch gives each
 * its own NCCL stream), and the recorded durations are the kernels' to
 * compare with. What is read and dropped: docs/traces-importers.md.
 */
#ifndef TRACES_FLIGHTREC_H
#define TRACES_FLIGHTREC_H

#include <glib.h>

#include "traces/trace.h"

/* Loads a dump file (a 1-rank trace whose groups keep their global ranks:
 * see trace_replicate) or a directory of them (every file whose JSON has
 * "pg_config"; its rank the number its name ends in). Across a directory,
 * a group's collectives are those whose sequence number every member's
 * window holds (the ring buffers start at different places), sends and
 * receives the last ones both sides hold. Validated when the trace is
 * whole. NULL with *err (TRACE_ERROR_IO, _PARSE with line:col, _SCHEMA /
 * _VALUE with the entry's index). *note (may be NULL) gets one line on
 * what was kept and left out (caller g_free's). */
trace *trace_flightrec_load(const char *path_or_dir, char **note, GError **err);

/* Whether the first bytes of a JSON file look like a Flight Recorder dump: "pg_config" or an
 * entry's "collective_seq_id", and no Kineto "traceEvents" or "distributedInfo". */
gboolean flightrec_sniff(const char *head, gssize len);

#endif

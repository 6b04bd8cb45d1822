/* traces/kineto.h - import PyTorch profiler / Kineto Chrome traces (one JSON
 * file per rank, plain or gzip, or a directory of them) into a trace: GPU
 * kernels become compute ops on their streams, NCCL kernels collectives or
 * sends/receives, GPU idle time the host caused becomes "host gap" ops.
 * What is read and what is dropped: docs/traces-importers.md.
 */
#ifndef TRACES_KINETO_H
#define TRACES_KINETO_H

#include <glib.h>

#include <cjson/cJSON.h>

#include "traces/trace.h"

/* Loads `path_or_dir`: a file gives a 1-rank trace (its groups keep the
 * recorded global ranks; see trace_replicate); a directory gives one rank per
 * *.json / *.json.gz file, ranked by distributedInfo.rank when every file has
 * a distinct one in range, else by file name order. Caller frees the result
 * with trace_free. On failure returns NULL with *err (TRACE_ERROR_IO,
 * _PARSE with line:col and byte offset, _SCHEMA / _VALUE with the event
 * index). The result is not validated (call trace_validate). */
trace *trace_kineto_load(const char *path_or_dir, GError **err);
/* The same, with *note (g_free; NULL when there is nothing to say) naming
 * what was read other than as it stands: NCCL kernels whose collective the
 * trace does not give (a coalesced group's), replayed at their traced
 * durations as compute. */
trace *trace_kineto_load_noted(const char *path_or_dir, char **note, GError **err);

/* A process group's ranks as PyTorch writes them: "[0, 1, 2]" (Kineto's "Process Group Ranks",
 * the Flight Recorder's pg_config ranks) or a JSON array of numbers; a group of `size` > 30 ranks
 * (its "Group size"; 0 where unknown) cut as the profiler cuts lists ("[0, 8, ..., 224, ..., 504]",
 * kineto_splits_parse) is its `size` ranks where the visible ones are evenly strided. *out NULL
 * when v is absent or the list empty; FALSE with *why (static) for anything else: a rank not a
 * whole number in 0..2^20, a rank named twice, a cut list that is not evenly strided or whose
 * size is unknown, text that is not such a list. */
gboolean kineto_ranks_parse(const cJSON *v, int size, GArray **out, const char **why);

/* An alltoall's split sizes as PyTorch records them ("In split size", "Out split size": rows of dim
 * 0 per member): "[3, 1, 0]", a JSON array of numbers, or, longer than 30 entries, cut to its first
 * 29, "..." and its last (torch/csrc/profiler/util.cpp, format_list). *out the numbers (GArray of
 * double; NULL when v is absent or the list empty: an even split), *cut TRUE for a cut list. FALSE
 * with *why (static) for anything else: an entry not a whole number in 0..2^50, text that is not
 * such a list. */
gboolean kineto_splits_parse(const cJSON *v, GArray **out, gboolean *cut, const char **why);

/* Bytes of one element of a c10 ScalarType name ("Float", "BFloat16",
 * "Long", ...) or of a C++ type from "Input type" ("float", "c10::Half",
 * "long int", ...); 0 if unknown. */
int kineto_dtype_bytes(const char *name);

/* The collective of a PyTorch "Collective name" ("allreduce",
 * "_allgather_base", "reduce_scatter_tensor_coalesced", "all_to_allv", ...)
 * or an "nccl:<op>" suffix, "gather", "scatter"; 0 and *out, -1 if unknown
 * (send, recv and barrier are unknown here). */
int kineto_coll_from_name(const char *name, coll_kind *out);

#endif

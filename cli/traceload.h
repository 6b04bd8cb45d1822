/* cli/traceload.h - load a trace whatever its format: native JSON/CSV
 * (several files together), Kineto JSON (.json, .json.gz, or a directory
 * of per-rank files), Chakra .et (a file, a prefix or a directory), a
 * PyTorch Flight Recorder dump (or a directory), an NCCL debug log (or a
 * directory), chosen from the path and the first bytes. */
#ifndef CLI_TRACELOAD_H
#define CLI_TRACELOAD_H

#include "traces/trace.h"

/* Caller trace_free's the result; NULL with *err (TRACE_ERROR). *tuning
 * (may be NULL): an NCCL log's TUNING lines by shape (nccllog_tuning;
 * NULL when none; caller g_array_unref's). */
trace *trace_load_any(char **paths, int n, GArray **tuning, GError **err);

#endif

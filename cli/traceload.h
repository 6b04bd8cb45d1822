/* cli/traceload.h - load a trace whatever its format: native JSON/CSV
 * (several files together), Kineto JSON (.json, .json.gz, or a directory
 * of per-rank files), Chakra .et (a file, a prefix or a directory), a
 * PyTorch Flight Recorder dump (or a directory), an NCCL debug log (or a
 * directory), chosen from the path and the first bytes. */
#ifndef CLI_TRACELOAD_H
#define CLI_TRACELOAD_H

#include "traces/nccllog.h"
#include "traces/trace.h"

/* Caller trace_free's the result; NULL with *err (TRACE_ERROR). *x (may be
 * NULL): what an NCCL log says besides its calls (TUNING lines, rings and
 * trees; all NULL for other formats; caller nccllog_extras_clear's). */
trace *trace_load_any(char **paths, int n, nccllog_extras *x, GError **err);

#endif

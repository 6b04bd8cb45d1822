/* cli/traceload.h - load a trace whatever its format: native JSON/CSV
 * (several files together), Kineto JSON (.json, .json.gz, or a directory
 * of per-rank files), Chakra .et (a file, a prefix or a directory), chosen
 * from the path and, for JSON, from its content. */
#ifndef CLI_TRACELOAD_H
#define CLI_TRACELOAD_H

#include "traces/trace.h"

/* Caller trace_free's the result; NULL with *err (TRACE_ERROR). */
trace *trace_load_any(char **paths, int n, GError **err);

#endif

/* traces/native.h - conveyor's own trace format, JSON or CSV, written by
 * hand or by tools (docs/traces.md has the schema and an example). */
#ifndef TRACES_NATIVE_H
#define TRACES_NATIVE_H

#include "traces/trace.h"

/* Load one or more native trace files (.json or .csv; several files are one
 * trace, e.g. one per rank). Errors (TRACE_ERROR) carry the file and the
 * position: line:col for JSON syntax, the JSON path ($.ops[3].bytes) or the
 * CSV record number for values. The trace is validated (trace_validate).
 * Caller frees the result. */
trace *trace_native_load(const char *const *paths, int npaths, GError **err);

/* Write t as native JSON (all ranks in one file). */
gboolean trace_native_write_json(const trace *t, const char *path, GError **err);

#endif

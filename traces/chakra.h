/* traces/chakra.h - import Chakra execution traces (mlcommons/chakra): the
 * protobuf .et files (one per rank) and the JSON that chakra_jsonizer writes,
 * plain or gzip. COMM_COLL/SEND/RECV nodes become collectives and
 * point-to-point ops, COMP nodes compute ops, data and control dependencies
 * op dependencies. Field by field: docs/traces-importers.md.
 */
#ifndef TRACES_CHAKRA_H
#define TRACES_CHAKRA_H

#include <glib.h>

#include "traces/trace.h"

/* Loads a single file (a 1-rank trace) or, when `path_or_prefix` is not a
 * file, `<prefix>.0.et`, `<prefix>.1.et`, ... (also `.et.gz`, `.json`,
 * `.json.gz`) up to the first missing rank; a directory is the prefix of
 * its `<prefix>.0.et` (or .et.gz). The format is sniffed: text
 * starting with '{' is jsonizer JSON, anything else protobuf. Collectives use
 * the group of all loaded ranks (named by pg_name when present). Dependencies
 * on nodes that are not imported (METADATA, MEM_LOAD/STORE) are followed
 * through to the imported nodes they depend on; dependencies on ids absent
 * from the file are dropped. Caller frees with trace_free. On failure NULL
 * with *err: TRACE_ERROR_IO, _PARSE (byte offset / object index), _SCHEMA,
 * _VALUE (node index and id), _CYCLE. */
trace *trace_chakra_load(const char *path_or_prefix, GError **err);

#endif

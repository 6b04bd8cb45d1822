/* fuzz/fuzz_chakra.c - libFuzzer target: Chakra execution trace (.et,
 * length-delimited protobuf, optionally gzip'd) -> trace_chakra_load.
 * A GError is a clean reject. */
#include "fuzz/fuzz_file.h"
#include "traces/chakra.h"
#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write(data, size, ".et");
    GError *err = NULL;
    trace *t = trace_chakra_load(path, &err);
    if (t)
        trace_free(t);
    g_clear_error(&err);
    return 0;
}

/* fuzz/fuzz_native_csv.c - libFuzzer target: native trace (csv) ->
 * trace_native_load, which also validates the trace (deps, groups, peers).
 * A GError is a clean reject. */
#include "fuzz/fuzz_file.h"
#include "traces/native.h"
#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write(data, size, ".csv");
    GError *err = NULL;
    trace *t = trace_native_load(&path, 1, &err);
    if (t)
        trace_free(t);
    g_clear_error(&err);
    return 0;
}

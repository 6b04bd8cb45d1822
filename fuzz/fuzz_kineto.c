/* fuzz/fuzz_kineto.c - libFuzzer target: PyTorch profiler (Kineto) JSON,
 * optionally gzip'd -> trace_kineto_load. A GError is a clean reject. */
#include "fuzz/fuzz_file.h"
#include "traces/kineto.h"
#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write(data, size, ".json");
    GError *err = NULL;
    trace *t = trace_kineto_load(path, &err);
    if (t)
        trace_free(t);
    g_clear_error(&err);
    return 0;
}

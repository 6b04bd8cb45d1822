/* fuzz/fuzz_nccllog.c - libFuzzer target: an NCCL debug log (INIT and COLL
 * lines) -> trace_nccllog_load, validated. A GError is a clean reject. */
#include "fuzz/fuzz_file.h"
#include "traces/nccllog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write(data, size, ".log");
    GError *err = NULL;
    char *note = NULL;
    nccllog_extras x;
    trace *t = trace_nccllog_load(path, &note, &x, &err);
    if (t)
        trace_free(t);
    nccllog_extras_clear(&x);
    g_free(note);
    g_clear_error(&err);
    return 0;
}

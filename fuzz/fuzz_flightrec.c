/* fuzz/fuzz_flightrec.c - libFuzzer target: a PyTorch Flight Recorder JSON
 * dump -> trace_flightrec_load (and trace_validate when it is whole, as the
 * loader does). A GError is a clean reject. */
#include "fuzz/fuzz_file.h"
#include "traces/flightrec.h"
#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write(data, size, ".json");
    GError *err = NULL;
    char *note = NULL;
    trace *t = trace_flightrec_load(path, &note, &err);
    if (t)
        trace_free(t);
    g_free(note);
    g_clear_error(&err);
    return 0;
}

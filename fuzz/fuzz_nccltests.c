/* fuzz/fuzz_nccltests.c - libFuzzer target: nccl-tests log text ->
 * nccltests_parse (from memory, not NUL-terminated: ASan sees overreads). */
#include "fuzz/fuzz_file.h"
#include "traces/nccltests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gboolean quiet;
    if (!quiet) {
        g_log_set_default_handler(fuzz_log_quiet, NULL);
        quiet = TRUE;
    }
    GError *err = NULL;
    nccltests_log *log = nccltests_parse("fuzz.txt", (const char *)data, size, -1, &err);
    if (log)
        nccltests_log_free(log);
    g_clear_error(&err);
    return 0;
}

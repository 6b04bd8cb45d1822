/* fuzz/fuzz_p2pmatrix.c - libFuzzer target: p2pBandwidthLatencyTest log ->
 * p2pmatrix_parse (from memory, not NUL-terminated), then print the result
 * to /dev/null so the writer sees every matrix shape the reader accepts. */
#include "fuzz/fuzz_file.h"
#include "traces/p2pmatrix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *null_out;
    if (!null_out) {
        g_log_set_default_handler(fuzz_log_quiet, NULL);
        null_out = fopen("/dev/null", "w");
    }
    GError *err = NULL;
    p2pmatrix_set *s = p2pmatrix_parse("fuzz.txt", (const char *)data, size, &err);
    if (s) {
        p2pmatrix_write(null_out, s);
        p2pmatrix_free(s);
    }
    g_clear_error(&err);
    return 0;
}

/* fuzz/fuzz_topo_smi.c - libFuzzer target: `nvidia-smi topo -m` output ->
 * topo_import_smi. A GError is a clean reject. */
#include "fuzz/fuzz_file.h"
#include "topologies/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write(data, size, ".txt");
    GError *err = NULL;
    char *note = NULL;
    g_free(topo_import_smi(path, NULL, &note, &err));
    g_free(note);
    g_clear_error(&err);
    return 0;
}

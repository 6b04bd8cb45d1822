/* fuzz/fuzz_topo_json.c - libFuzzer target: topology JSON -> topo_load.
 * Runs from the repository root so fabric names resolve in ./topologies.
 * Any crash, sanitizer report or leak is a bug; a GError is a clean reject. */
#include "fuzz/fuzz_file.h"
#include "topologies/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write(data, size, ".json");
    GError *err = NULL;
    topo_opts opts = {0};
    topo *t = topo_load(path, &opts, &err);
    if (t)
        topo_free(t);
    g_clear_error(&err);
    return 0;
}

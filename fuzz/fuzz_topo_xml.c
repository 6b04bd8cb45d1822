/* fuzz/fuzz_topo_xml.c - libFuzzer target: NCCL topology XML dump ->
 * topo_import_nccl_xml (GMarkup). A GError is a clean reject. */
#include "fuzz/fuzz_file.h"
#include "topologies/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write(data, size, ".xml");
    GError *err = NULL;
    g_free(topo_import_nccl_xml(path, NULL, NULL, &err));
    g_clear_error(&err);
    return 0;
}

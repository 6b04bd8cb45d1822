/* topologies/topo_fabric.c - scale-out fabric files and the topology
 * directory.
 *
 * A fabric file (topologies/fabrics/<name>.json) gives the switch port rate,
 * efficiency, per-hop switch and NIC latency, leaf radix, default
 * oversubscription and whether the network is rail-optimized; every number
 * has a "sources" entry. Schema in docs/topology.md.
 */
#include <string.h>
#include <unistd.h>

#include "topologies/topo_internal.h"

const char *topo_dir(void)
{
    static char *dir;
    if (dir)
        return dir;
    const char *env = g_getenv("CONVEYOR_TOPO_DIR");
    if (env && *env) {
        dir = g_strdup(env);
        return dir;
    }
    if (g_file_test("topologies/dgx-h100.json", G_FILE_TEST_IS_REGULAR)) {
        dir = g_strdup("topologies");
        return dir;
    }
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (exe) {
        char *bin = g_path_get_dirname(exe);
        char *share = g_build_filename(bin, "..", "share", "conveyor", "topologies", NULL);
        char *src = g_build_filename(bin, "..", "topologies", NULL); /* build/conveyor */
        char *probe = g_build_filename(src, "dgx-h100.json", NULL);
        dir = g_file_test(probe, G_FILE_TEST_IS_REGULAR) ? g_strdup(src) : g_strdup(share);
        g_free(probe);
        g_free(src);
        g_free(share);
        g_free(bin);
        g_free(exe);
        return dir;
    }
    dir = g_strdup("topologies");
    return dir;
}

static bool fabric_parse(topo_src *src, const cJSON *root, tfabric *f, GError **err)
{
    static const char *const keys[] = {"name", "description", "link_gbps", "eff",
                                       "switch_lat_ns", "nic_lat_ns", "leaf_radix",
                                       "oversubscription", "rail_optimized", "adaptive_routing",
                                       "sharp", "sources", NULL};
    tj_ctx c = {.src = src, .err = err};
    const char *s;
    double gbps;
    const cJSON *srcs = cJSON_GetObjectItemCaseSensitive(root, "sources");
    if (!tj_object(&c, root, "$", keys) || !tj_str(&c, root, "$", "description", true, &s) ||
        !tj_rate(&c, root, "$", "link_gbps", true, 0.125, 1e5, &gbps) ||
        !tj_num(&c, root, "$", "eff", true, 0, TOPO_MIN_EFF, false, 1, &f->eff) ||
        !tj_num(&c, root, "$", "switch_lat_ns", true, 0, 0, false, 1e7, &f->switch_lat_ns) ||
        !tj_num(&c, root, "$", "nic_lat_ns", true, 0, 0, false, 1e7, &f->nic_lat_ns) ||
        !tj_int(&c, root, "$", "leaf_radix", true, 0, 2, 1024, &f->leaf_radix) ||
        !tj_num(&c, root, "$", "oversubscription", false, 1, 1, false, 64, &f->oversubscription) ||
        !tj_bool(&c, root, "$", "rail_optimized", true, &f->rail_optimized) ||
        !tj_bool(&c, root, "$", "adaptive_routing", false, &f->adaptive_routing) ||
        !tj_bool(&c, root, "$", "sharp", false, &f->sharp))
        return false;
    if (srcs && !cJSON_IsObject(srcs)) {
        topo_src_error(src, err, TOPO_ERROR_SCHEMA, "$.sources",
                       "expected an object of key -> source text");
        return false;
    }
    f->link_Bps = gbps * 1e9 / 8;
    return true;
}

bool topo_fabric_load(const char *name, tfabric *f, GError **err)
{
    memset(f, 0, sizeof *f);
    char *file = g_strdup_printf("%s.json", name);
    char *path = g_build_filename(topo_dir(), "fabrics", file, NULL);
    g_free(file);
    topo_src src;
    cJSON *root = NULL;
    bool ok = topo_src_load(&src, path, &root, err) && fabric_parse(&src, root, f, err);
    if (ok)
        f->name = g_strdup(name);
    cJSON_Delete(root);
    topo_src_clear(&src);
    g_free(path);
    return ok;
}

/* ---- the list of shipped systems ------------------------------------ */

static void entry_free(gpointer p)
{
    topo_entry *e = p;
    g_free(e->name);
    g_free(e->description);
    g_free(e);
}

static gint entry_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp((*(topo_entry *const *)a)->name, (*(topo_entry *const *)b)->name);
}

GPtrArray *topo_list(GError **err)
{
    GError *e = NULL;
    GDir *d = g_dir_open(topo_dir(), 0, &e);
    if (!d) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_IO, "%s: %s", topo_dir(), e->message);
        g_error_free(e);
        return NULL;
    }
    GPtrArray *out = g_ptr_array_new_with_free_func(entry_free);
    const char *fn;
    while ((fn = g_dir_read_name(d))) {
        if (!g_str_has_suffix(fn, ".json"))
            continue;
        char *path = g_build_filename(topo_dir(), fn, NULL);
        topo_opts o = {0};
        topo *t = topo_load(path, &o, err);
        g_free(path);
        if (!t) {
            g_ptr_array_unref(out);
            g_dir_close(d);
            return NULL;
        }
        topo_entry *en = g_new0(topo_entry, 1);
        en->name = g_strndup(fn, strlen(fn) - 5);
        en->gpus = t->gpus_per_node;
        en->description = g_strdup(t->description);
        g_ptr_array_add(out, en);
        topo_free(t);
    }
    g_dir_close(d);
    g_ptr_array_sort(out, entry_cmp);
    return out;
}

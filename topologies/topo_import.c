/* topologies/topo_import.c - what the two `topo import` readers share
 * (topo_xml.c: NCCL's XML dump; topo_smi.c: `nvidia-smi topo -m`): the JSON
 * pieces they write, the GPU kind from --gpu or a guess, the links between
 * sockets, and the choice of reader by the file's first character.
 */
#include <stdio.h>
#include <string.h>

#include "models/compute.h"
#include "traces/tracefile.h"
#include "topologies/topo_internal.h"

cJSON *imp_node(cJSON *nodes, const char *id, const char *kind)
{
    cJSON *n = cJSON_CreateObject();
    cJSON_AddStringToObject(n, "id", id);
    cJSON_AddStringToObject(n, "kind", kind);
    cJSON_AddItemToArray(nodes, n);
    return n;
}

cJSON *imp_link(cJSON *links, const char *a, const char *b, const char *kind, const char *src)
{
    cJSON *l = cJSON_CreateObject();
    cJSON_AddStringToObject(l, "a", a);
    cJSON_AddStringToObject(l, "b", b);
    cJSON_AddStringToObject(l, "kind", kind);
    if (src)
        cJSON_AddStringToObject(l, "source", src);
    cJSON_AddItemToArray(links, l);
    return l;
}

int imp_nvlink_gen(int sm)
{
    return sm >= 100 ? 5 : sm >= 90 ? 4 : sm >= 80 ? 3 : sm >= 70 ? 2 : 1;
}

/* HBM/GDDR bandwidth by sm, GB/s: a guess for a GPU known only by sm. */
static double hbm_guess(int sm)
{
    return sm >= 100 ? 8000 : sm >= 90 ? 3350 : sm == 89 ? 1008 : sm == 86 ? 936
         : sm >= 80 ? 2039 : sm == 75 ? 616 : 900;
}

cJSON *imp_gpu(const char *file, const char *name, int sm, const char *guess, const char *why,
               GError **err)
{
    cJSON *o = cJSON_CreateObject();
    const char *want = name ? name : guess;
    if (!want) {
        char *model = g_strdup_printf("sm%d-GPU", sm);
        cJSON_AddStringToObject(o, "model", model);
        cJSON_AddNumberToObject(o, "sm", sm);
        cJSON_AddNumberToObject(o, "hbm_GBps", hbm_guess(sm));
        cJSON_AddStringToObject(o, "source", "import: model and memory bandwidth guessed from sm; "
                                             "`topo import --gpu NAME` names the GPU");
        g_free(model);
        return o;
    }
    const gpu_spec *g = compute_gpu_find(want, sm, NULL);
    if (!g) {
        int n;
        const gpu_spec *t = compute_gpu_table(&n);
        GString *known = g_string_new(NULL);
        for (int i = 0; i < n; i++)
            g_string_append_printf(known, "%s%s", i ? ", " : "", t[i].name);
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, "%s: --gpu %s: no such GPU kind (known: %s)", file,
                    want, known->str);
        g_string_free(known, TRUE);
    } else if (sm > 0 && g->sm_cc != sm) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, "%s: --gpu %s names the %s (sm_%d); the file's GPUs are sm_%d",
                    file, want, g->name, g->sm_cc, sm);
        g = NULL;
    }
    if (!g) {
        cJSON_Delete(o);
        return NULL;
    }
    char *src = g_strdup_printf("%s; %s", g->source,
                                name ? "the kind named by `topo import --gpu`" : why);
    cJSON_AddStringToObject(o, "model", g->name);
    cJSON_AddNumberToObject(o, "sm", g->sm_cc);
    cJSON_AddNumberToObject(o, "hbm_GBps", g->hbm_Bps / 1e9);
    cJSON_AddStringToObject(o, "source", src);
    g_free(src);
    return o;
}

void imp_sockets(cJSON *params, cJSON *links, int ncpu, const char *vendor)
{
    static const double xbw[] = {10, 16, 6}; /* NCCL SKL_QPI_BW, AMD_BW, ARM_BW */
    int v = !strcmp(vendor, "amd") ? 1 : !strcmp(vendor, "arm") ? 2 : 0;
    cJSON_AddStringToObject(params, "p2p", "on");
    if (ncpu < 2)
        return;
    cJSON_AddStringToObject(params, "p2p_xsocket", v == 1 ? "on" : "off");
    cJSON_AddNumberToObject(params, "xsocket.GBps", xbw[v]);
    for (int i = 0; i < ncpu; i++)
        for (int j = i + 1; j < ncpu; j++) {
            char a[16], b[16];
            snprintf(a, sizeof a, "cpu%d", i);
            snprintf(b, sizeof b, "cpu%d", j);
            cJSON_AddStringToObject(imp_link(links, a, b, "xsocket",
                                             "NCCL ncclTopoGetInterCpuBw constants (nccl-model.md 1); "
                                             "--set xsocket.GBps=N"),
                                    "GBps", "$xsocket.GBps");
        }
}

gboolean imp_scaleout(cJSON *root, const char *file, const topo_import_opts *o, bool nics, double gbps, bool nvswitch,
                      GError **err)
{
    bool domain = o->nvl_domain > 1;
    if (domain && (!nvswitch || o->nvl_domain > TOPO_MAX_NVL_DOMAIN)) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, "%s: --nvl-domain %d: %s", file, o->nvl_domain,
                    nvswitch ? "at most " G_STRINGIFY(TOPO_MAX_NVL_DOMAIN) " servers"
                             : "the GPUs have no NVSwitch to join servers with");
        return FALSE;
    }
    if (!nics && !domain)
        return TRUE;
    cJSON *p = cJSON_AddObjectToObject(root, "scaleout");
    if (nics)
        cJSON_AddStringToObject(p, "fabric", gbps <= 200 ? "ib-hdr" : gbps <= 400 ? "ib-ndr" : "ib-xdr");
    else
        cJSON_AddNullToObject(p, "fabric");
    if (domain) {
        cJSON_AddNumberToObject(p, "nvl_domain_nodes", o->nvl_domain);
        cJSON_AddStringToObject(p, "source", "`topo import --nvl-domain`: servers sharing one NVLink domain");
    }
    return TRUE;
}

char *topo_import(const char *path, const topo_import_opts *o, char **note, GError **err)
{
    char head[256];
    size_t n = 0;
    FILE *f = fopen(path, "rb");
    if (f) {
        n = fread(head, 1, sizeof head, f);
        fclose(f);
    }
    tracefile_blank_bom(head, n);
    size_t i = 0;
    while (i < n && g_ascii_isspace(head[i]))
        i++;
    return i < n && head[i] == '<' ? topo_import_nccl_xml(path, o, note, err)
                                   : topo_import_smi(path, o, note, err);
}

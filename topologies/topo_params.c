/* topologies/topo_params.c - named parameters (--set) and link-rate tables.
 *
 * A topology declares the parameters it supports in "params" with their
 * defaults; --set may change only those. Each known key has a validator, so
 * a bad default in a file and a bad --set value get the same check.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "topologies/topo_internal.h"

/* Per-lane PCIe data rate, bytes/s: GT/s x encoding / 8 bits.
 * Gen1-2 8b/10b, Gen3-5 128b/130b (PCIe base spec 3.0-5.0), Gen6 64 GT/s PAM4
 * FLIT mode with 242 useful bytes per 256-byte FLIT (PCIe 6.0 spec). */
double topo_pcie_lane_Bps(int gen)
{
    switch (gen) {
    case 1: return 2.5e9 * 8 / 10 / 8;
    case 2: return 5e9 * 8 / 10 / 8;
    case 3: return 8e9 * 128 / 130 / 8;
    case 4: return 16e9 * 128 / 130 / 8;
    case 5: return 32e9 * 128 / 130 / 8;
    case 6: return 64e9 * 242 / 256 / 8;
    default: return 0;
    }
}

/* NVLink per-link per-direction raw rate (NVIDIA architecture whitepapers:
 * P100 20, V100 25, A100 25, H100 25, B200 50 GB/s). */
double topo_nvlink_link_Bps(int gen)
{
    static const double gbps[] = {0, 20, 25, 25, 25, 50};
    return gen >= 1 && gen <= 5 ? gbps[gen] * 1e9 : 0;
}

/* NCCL's per-link effective rate / raw rate (nccl-model.md section 1):
 * SM60 18/20, SM70 and SM80 20/25, SM90 20.6/25, SM100 40.1/50. */
double topo_nvlink_eff(int gen)
{
    static const double eff[] = {0, 18.0 / 20, 20.0 / 25, 20.0 / 25, 20.6 / 25, 40.1 / 50};
    return gen >= 1 && gen <= 5 ? eff[gen] : 0;
}

/* ---- parameters ------------------------------------------------------ */

typedef struct {
    const char *key;
    const char *help;
    bool onoff;       /* "on" | "off" */
    bool integer;
    double lo, hi;    /* numeric range, inclusive */
} param_spec;

static const param_spec param_specs[] = {
    {"p2p", "GPU peer-to-peer (on|off)", true, false, 0, 0},
    {"p2p_xsocket", "P2P across sockets (on|off)", true, false, 0, 0},
    {"pcie.gen", "PCIe generation of the GPU/NIC links (3..6)", false, true, 3, 6},
    {"xsocket.GBps", "rate of the link between the sockets, GB/s per direction (0.001..1000)", false, false, 1e-3, 1000},
    {"nic.gbps", "NIC line rate, Gb/s (0.008 <= x <= " G_STRINGIFY(TOPO_MAX_NIC_GBPS) ": at least 1 MB/s)", false,
     false, 8 * TOPO_MIN_GBPS, TOPO_MAX_NIC_GBPS},
    {"nics_per_node", "NICs per server (1.." G_STRINGIFY(TOPO_MAX_NICS) ")", false, true, 1, TOPO_MAX_NICS},
    {"nvlink.links", "NVLinks per GPU (1.." G_STRINGIFY(TOPO_MAX_GPU_NVLINKS) ")", false, true, 1,
     TOPO_MAX_GPU_NVLINKS},
    {"oversubscription", "leaf down:up bandwidth ratio (1..64)", false, false, 1, 64},
    {"adaptive_routing", "leaves spread chunks over spines by load (on|off; default: the fabric's)", true, false, 0, 0},
    {"pxn", "send/receive across servers through the GPU on the receiver's rail, NCCL's PXN (on|off) [on]", true, false, 0, 0},
};

static const param_spec *param_find(const char *key)
{
    for (size_t i = 0; i < G_N_ELEMENTS(param_specs); i++)
        if (!strcmp(param_specs[i].key, key))
            return &param_specs[i];
    return NULL;
}

/* NULL when `val` is acceptable for `ps`, else a message (caller g_free's). */
static char *param_check(const param_spec *ps, const char *val)
{
    if (ps->onoff) {
        bool dflt = !strcmp(ps->key, "adaptive_routing"); /* "default": the fabric's, as topo show prints it */
        return strcmp(val, "on") && strcmp(val, "off") && !(dflt && !strcmp(val, "default"))
                   ? g_strdup_printf("expected on or off%s, got '%s'", dflt ? " (or default)" : "", val)
                   : NULL;
    }
    char *end = NULL;
    errno = 0;
    double x = g_ascii_strtod(val, &end);
    if (end == val || *end || errno == ERANGE || !isfinite(x))
        return g_strdup_printf("expected a number, got '%s'", val);
    if (ps->integer && x != floor(x))
        return g_strdup_printf("expected an integer, got '%s'", val);
    if (x < ps->lo || x > ps->hi)
        return g_strdup_printf("must be in [%g, %g], got %s", ps->lo, ps->hi, val);
    return NULL;
}

static char *param_text(const cJSON *v)
{
    if (cJSON_IsBool(v))
        return g_strdup(cJSON_IsTrue(v) ? "on" : "off");
    if (cJSON_IsString(v))
        return g_strdup(v->valuestring);
    if (cJSON_IsNumber(v)) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        return g_strdup(g_ascii_dtostr(buf, sizeof buf, v->valuedouble));
    }
    return NULL;
}

static char *declared_list(GHashTable *params)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(param_specs); i++)
        if (g_hash_table_contains(params, param_specs[i].key))
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", param_specs[i].key);
    return g_string_free(s, FALSE);
}

GHashTable *topo_params_load(const topo_src *src, const cJSON *root, const char *const *sets,
                             GError **err)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(root, "params");
    if (pr && !cJSON_IsObject(pr)) {
        topo_src_error(src, err, TOPO_ERROR_SCHEMA, "$.params", "expected an object");
        goto fail;
    }
    for (const cJSON *v = pr ? pr->child : NULL; v; v = v->next) {
        char *p = tj_path_key("$.params", v->string);
        const param_spec *ps = param_find(v->string);
        char *txt = param_text(v), *why = NULL;
        if (!ps)
            topo_src_error(src, err, TOPO_ERROR_SCHEMA, p, "unknown parameter");
        else if (!txt)
            topo_src_error(src, err, TOPO_ERROR_SCHEMA, p, "expected a number, string or boolean");
        else if ((why = param_check(ps, txt)))
            topo_src_error(src, err, TOPO_ERROR_VALUE, p, "%s", why);
        g_free(p);
        g_free(why);
        if (!ps || !txt || (err && *err)) {
            g_free(txt);
            goto fail;
        }
        g_hash_table_replace(h, g_strdup(v->string), txt);
    }
    /* every system with a scale-out fabric can switch its adaptive routing;
     * "default" keeps the fabric file's setting */
    if (cJSON_GetObjectItemCaseSensitive(root, "scaleout") && !g_hash_table_contains(h, "adaptive_routing"))
        g_hash_table_replace(h, g_strdup("adaptive_routing"), g_strdup("default"));
    /* and NCCL's PXN for send/receive across servers (on unless set) */
    if (cJSON_GetObjectItemCaseSensitive(root, "scaleout") && !g_hash_table_contains(h, "pxn"))
        g_hash_table_replace(h, g_strdup("pxn"), g_strdup("on"));
    for (const char *const *s = sets; s && *s; s++) {
        const char *eq = strchr(*s, '=');
        char *key = eq ? g_strndup(*s, (gsize)(eq - *s)) : g_strdup(*s);
        const param_spec *ps = param_find(key);
        char *why = NULL;
        if (!eq || !g_hash_table_contains(h, key) || !ps) {
            char *list = declared_list(h);
            topo_src_error(src, err, TOPO_ERROR_SET, "$.params",
                           !eq ? "--set '%s': expected key=value (parameters: %s)"
                               : "--set '%s': this topology has no such parameter (it has: %s)",
                           *s, *list ? list : "none");
            g_free(list);
        } else if ((why = param_check(ps, eq + 1))) {
            topo_src_error(src, err, TOPO_ERROR_SET, "$.params", "--set %s: %s", key, why);
        } else {
            g_hash_table_replace(h, g_strdup(key), g_strdup(eq + 1));
        }
        g_free(key);
        g_free(why);
        if (err && *err)
            goto fail;
    }
    return h;
fail:
    g_hash_table_destroy(h);
    return NULL;
}

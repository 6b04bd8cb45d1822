/* topologies/topo_parse.c - a topology file -> a one-server template.
 *
 * Reads and validates every key of a topology JSON file (schema in
 * docs/topology.md), expands "repeat" entries ("gpu{i}", "sw{i/2}"),
 * resolves "$param" numbers, derives link rates (PCIe gen x lanes, NVLink
 * gen x links) and each node's socket. Every error carries file:line:col
 * and the JSON path of the offending value.
 */
#include <math.h>
#include <errno.h>
#include <string.h>

#include "topologies/topo_internal.h"

typedef struct {
    tj_ctx c;
    tgraph *g;
} pctx;

/* ---- "{expr}" templates: expr is i or integers joined by + - * / %,
 * evaluated left to right (no precedence). A value that leaves the range of
 * a long (a literal or a step) is malformed, like a division by zero. ---- */
static bool expr_eval(const char *e, int i, long *out)
{
    long acc = 0;
    char op = '+';
    while (*e) {
        long v;
        if (*e == 'i') {
            v = i;
            e++;
        } else if (g_ascii_isdigit(*e)) {
            char *end;
            errno = 0;
            v = strtol(e, &end, 10);
            if (errno == ERANGE)
                return false;
            e = end;
        } else {
            return false;
        }
        if ((op == '/' || op == '%') && v == 0)
            return false;
        bool over = false;
        switch (op) {
        case '+': over = __builtin_add_overflow(acc, v, &acc); break;
        case '-': over = __builtin_sub_overflow(acc, v, &acc); break;
        case '*': over = __builtin_mul_overflow(acc, v, &acc); break;
        default: /* / and %: v > 0 (literals and i are not negative) */
            acc = op == '/' ? acc / v : acc % v;
        }
        if (over)
            return false;
        if (!*e)
            break;
        if (!strchr("+-*/%", *e))
            return false;
        op = *e++;
    }
    *out = acc;
    return true;
}

/* Expand tmpl for index i; NULL when a {..} is malformed. */
static char *expand(const char *tmpl, int i)
{
    GString *s = g_string_new(NULL);
    for (const char *p = tmpl; *p; p++) {
        if (*p != '{') {
            g_string_append_c(s, *p);
            continue;
        }
        const char *close = strchr(p, '}');
        long v;
        char *e = close ? g_strndup(p + 1, (gsize)(close - p - 1)) : NULL;
        bool ok = e && *e && expr_eval(e, i, &v);
        g_free(e);
        if (!ok) {
            g_string_free(s, TRUE);
            return NULL;
        }
        g_string_append_printf(s, "%ld", v);
        p = close;
    }
    return g_string_free(s, FALSE);
}

static bool enum_of(pctx *x, const cJSON *o, const char *path, const char *key,
                    const char *const *names, int *out)
{
    const char *s;
    if (!tj_str(&x->c, o, path, key, true, &s))
        return false;
    for (int k = 0; names[k]; k++)
        if (!strcmp(names[k], s)) {
            *out = k;
            return true;
        }
    char *p = tj_path_key(path, key), *list = g_strjoinv(", ", (char **)names);
    topo_src_error(x->c.src, x->c.err, TOPO_ERROR_VALUE, p, "expected one of %s, got \"%s\"", list, s);
    g_free(p);
    g_free(list);
    return false;
}

/* ---- nodes ----------------------------------------------------------- */

static const char *const node_kinds[] = {"gpu", "pcie_switch", "cpu", "hostmem", "nvswitch", NULL};
static const fab_node_kind node_kind_map[] = {FAB_GPU, FAB_PCIE_SWITCH, FAB_CPU, FAB_HOSTMEM,
                                              FAB_NVSWITCH};

/* An id is letters, digits, '_', '-' and '.': it names a device in every
 * output (topo show and dot, CSV and JSON link names, Perfetto timelines). */
static bool id_ok(const char *id)
{
    for (const char *p = id; *p; p++)
        if (!g_ascii_isalnum(*p) && !strchr("_-.", *p))
            return false;
    return *id != 0;
}

static bool node_add(pctx *x, const char *path, const char *id, const tnode *proto)
{
    if (!id_ok(id)) {
        char *p = tj_path_key(path, "id"), *esc = g_strescape(id, NULL);
        topo_src_error(x->c.src, x->c.err, TOPO_ERROR_SCHEMA, p,
                       "id \"%s\": use letters, digits, '_', '-' and '.' (an id names the device in every output)",
                       esc);
        g_free(p);
        g_free(esc);
        return false;
    }
    if (g_hash_table_contains(x->g->ids, id)) {
        char *p = tj_path_key(path, "id");
        topo_src_error(x->c.src, x->c.err, TOPO_ERROR_REF, p, "duplicate id \"%s\"", id);
        g_free(p);
        return false;
    }
    tnode n = *proto;
    n.id = g_strdup(id);
    n.path = g_strdup(path);
    n.gpu_local = n.kind == FAB_GPU ? x->g->ngpus++ : -1;
    g_array_append_val(x->g->nodes, n);
    g_hash_table_insert(x->g->ids, g_strdup(id), GUINT_TO_POINTER(x->g->nodes->len));
    return true;
}

static bool parse_node(pctx *x, const cJSON *o, const char *path)
{
    static const char *const keys[] = {"id", "kind", "repeat", "socket", "p2p_GBps", "transit_lat_ns",
                                       "tx_GBps", "rx_GBps", "nvls", "source", NULL};
    const char *id, *src;
    int kind, repeat, socket;
    double p2p, tlat, tx, rx;
    bool nvls;
    if (!tj_object(&x->c, o, path, keys) || !tj_str(&x->c, o, path, "id", true, &id) ||
        !enum_of(x, o, path, "kind", node_kinds, &kind) ||
        !tj_int(&x->c, o, path, "repeat", false, 1, 1, 1024, &repeat) ||
        !tj_int(&x->c, o, path, "socket", false, 0, 0, TOPO_MAX_SOCKETS - 1, &socket) ||
        !tj_rate(&x->c, o, path, "p2p_GBps", false, 1, 1e5, &p2p) ||
        !tj_num(&x->c, o, path, "transit_lat_ns", false, 0, 0, false, 1e9, &tlat) ||
        !tj_rate(&x->c, o, path, "tx_GBps", false, 1, 1e5, &tx) ||
        !tj_rate(&x->c, o, path, "rx_GBps", false, 1, 1e5, &rx) ||
        !tj_bool(&x->c, o, path, "nvls", false, &nvls) ||
        !tj_str(&x->c, o, path, "source", false, &src))
        return false;
    if (nvls && node_kind_map[kind] != FAB_NVSWITCH) {
        char *p = tj_path_key(path, "nvls");
        topo_src_error(x->c.src, x->c.err, TOPO_ERROR_VALUE, p,
                       "\"nvls\": true marks an NVSwitch with in-switch reduction; a \"%s\" node cannot have it",
                       node_kinds[kind]);
        g_free(p);
        return false;
    }
    fab_node_kind fk = node_kind_map[kind];
    const char *endk = tx > 0 ? "tx_GBps" : rx > 0 ? "rx_GBps" : NULL;
    if (endk && fk != FAB_GPU && fk != FAB_HOSTMEM) { /* a route passes switches and CPUs, never ends there */
        char *p = tj_path_key(path, endk);
        topo_src_error(x->c.src, x->c.err, TOPO_ERROR_VALUE, p,
                       "\"%s\" limits where a route starts or ends, a gpu or hostmem node; routes pass a \"%s\" "
                       "node (its limit there: p2p_GBps on a cpu)", endk, node_kinds[kind]);
        g_free(p);
        return false;
    }
    for (int i = 0; i < repeat; i++) {
        char *eid = expand(id, i);
        tnode n = {.kind = fk,
                   .socket = node_kind_map[kind] == FAB_CPU ? socket + i : -1,
                   .transit_Bps = p2p * 1e9, .transit_lat_ps = (int64_t)llround(tlat * 1e3),
                   .tx_Bps = tx * 1e9, .rx_Bps = rx * 1e9, .nvls = nvls};
        bool ok = eid && node_add(x, path, eid, &n);
        if (!eid) {
            char *p = tj_path_key(path, "id");
            topo_src_error(x->c.src, x->c.err, TOPO_ERROR_SCHEMA, p,
                           "bad {expr} in \"%s\" (use i, integers and + - * / %%)", id);
            g_free(p);
        }
        g_free(eid);
        if (!ok)
            return false;
    }
    return true;
}

/* ---- links ----------------------------------------------------------- */

static const char *const link_kinds[] = {"pcie", "nvlink", "xsocket", "mem", "net", NULL};

/* Default efficiency and latency by kind (docs/topology.md, "numbers"). */
static const double link_eff_default[] = {0.88, 0.80, 1.0, 0.80, 0.96};
static const double link_lat_ns_default[] = {100, 100, 150, 100, 500};

/* Rate of one link entry, bytes/s per direction, and its bundle count. */
static bool link_rate(pctx *x, const cJSON *o, const char *path, int kind, fab_link_desc *d)
{
    tj_ctx *c = &x->c;
    double GBps = 0;
    int gen = 0, n = 1;
    bool has_GBps = cJSON_GetObjectItemCaseSensitive(o, "GBps") != NULL;
    switch (kind) {
    case LINK_PCIE:
        if (has_GBps)
            return tj_rate(c, o, path, "GBps", true, 1, 1e5, &GBps) &&
                   (d->bw_Bps = GBps * 1e9, d->count = 1, true);
        if (!tj_int(c, o, path, "gen", true, 0, 1, 6, &gen) ||
            !tj_int(c, o, path, "lanes", true, 0, 1, TOPO_MAX_PCIE_LANES, &n))
            return false;
        d->bw_Bps = n * topo_pcie_lane_Bps(gen);
        d->count = n;
        return true;
    case LINK_NVLINK: {
        double per = 0;
        if (!tj_int(c, o, path, "links", true, 0, 1, TOPO_MAX_LINK_NVLINKS, &n))
            return false;
        if (cJSON_GetObjectItemCaseSensitive(o, "link_GBps")) {
            if (!tj_rate(c, o, path, "link_GBps", true, 1, 1e4, &per))
                return false;
            per *= 1e9;
            d->eff = 0.8;
        } else {
            if (!tj_int(c, o, path, "nvlink_gen", true, 0, 1, 5, &gen))
                return false;
            per = topo_nvlink_link_Bps(gen);
            d->eff = topo_nvlink_eff(gen);
        }
        d->bw_Bps = per * n;
        d->count = n;
        return true;
    }
    case LINK_NET:
        if (!tj_rate(c, o, path, "gbps", true, 0.125, 1e5, &GBps))
            return false;
        d->bw_Bps = GBps * 1e9 / 8;
        d->count = 1;
        return true;
    default:
        if (!tj_rate(c, o, path, "GBps", true, 1, 1e5, &GBps))
            return false;
        d->bw_Bps = GBps * 1e9;
        d->count = 1;
        return true;
    }
}

static bool link_end(pctx *x, const char *path, const char *key, const char *tmpl, int i,
                     guint *out)
{
    char *p = tj_path_key(path, key), *id = expand(tmpl, i);
    gpointer v = id ? g_hash_table_lookup(x->g->ids, id) : NULL;
    if (!id)
        topo_src_error(x->c.src, x->c.err, TOPO_ERROR_SCHEMA, p, "bad {expr} in \"%s\"", tmpl);
    else if (!v)
        topo_src_error(x->c.src, x->c.err, TOPO_ERROR_REF, p, "no node with id \"%s\"", id);
    else
        *out = GPOINTER_TO_UINT(v) - 1;
    g_free(p);
    g_free(id);
    return v != NULL;
}

static bool parse_link(pctx *x, const cJSON *o, const char *path)
{
    static const char *const keys[] = {"a", "b", "kind", "repeat", "gen", "lanes", "GBps",
                                       "links", "nvlink_gen", "link_GBps", "gbps", "eff",
                                       "lat_ns", "source", NULL};
    const char *a, *b, *src;
    int kind, repeat;
    double lat;
    fab_link_desc d = {0};
    if (!tj_object(&x->c, o, path, keys) || !tj_str(&x->c, o, path, "a", true, &a) ||
        !tj_str(&x->c, o, path, "b", true, &b) || !enum_of(x, o, path, "kind", link_kinds, &kind) ||
        !tj_int(&x->c, o, path, "repeat", false, 1, 1, 1024, &repeat) ||
        !tj_str(&x->c, o, path, "source", false, &src))
        return false;
    d.kind = (fab_link_kind)kind;
    d.eff = link_eff_default[kind];
    if (!link_rate(x, o, path, kind, &d) ||
        !tj_num(&x->c, o, path, "eff", false, d.eff, TOPO_MIN_EFF, false, 1, &d.eff) ||
        !tj_num(&x->c, o, path, "lat_ns", false, link_lat_ns_default[kind], 0, false, 1e9, &lat))
        return false;
    d.lat_ps = (int64_t)llround(lat * 1e3);
    for (int i = 0; i < repeat; i++) {
        tlink l = {.d = d};
        if (!link_end(x, path, "a", a, i, &l.a) || !link_end(x, path, "b", b, i, &l.b))
            return false;
        if (l.a == l.b) {
            char *p = tj_path_key(path, "b");
            topo_src_error(x->c.src, x->c.err, TOPO_ERROR_REF, p, "a link joins \"%s\" to itself",
                           g_array_index(x->g->nodes, tnode, l.a).id);
            g_free(p);
            return false;
        }
        l.path = g_strdup(path);
        g_array_append_val(x->g->links, l);
    }
    return true;
}

static bool parse_array(pctx *x, const cJSON *parent, const char *path, const char *key,
                        bool (*each)(pctx *, const cJSON *, const char *))
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(parent, key);
    char *p = tj_path_key(path, key);
    bool ok = cJSON_IsArray(arr);
    if (!ok) {
        char *d = tj_describe(arr);
        topo_src_error(x->c.src, x->c.err, TOPO_ERROR_SCHEMA, p, "expected an array, got %s", d);
        g_free(d);
    }
    int i = 0;
    for (const cJSON *e = ok ? arr->child : NULL; e && ok; e = e->next, i++) {
        char *ep = tj_path_idx(p, i);
        ok = each(x, e, ep);
        g_free(ep);
    }
    g_free(p);
    return ok;
}

/* ---- sockets: a cpu's socket spreads over pcie and mem links ---------- */
static void derive_sockets(tgraph *g)
{
    bool changed = true;
    while (changed) {
        changed = false;
        for (guint k = 0; k < g->links->len; k++) {
            tlink *l = &g_array_index(g->links, tlink, k);
            if (l->d.kind != LINK_PCIE && l->d.kind != LINK_MEM)
                continue;
            tnode *a = &g_array_index(g->nodes, tnode, l->a);
            tnode *b = &g_array_index(g->nodes, tnode, l->b);
            if (a->socket >= 0 && b->socket < 0 && b->kind != FAB_CPU) {
                b->socket = a->socket;
                changed = true;
            } else if (b->socket >= 0 && a->socket < 0 && a->kind != FAB_CPU) {
                a->socket = b->socket;
                changed = true;
            }
        }
    }
}

/* ---- sections -------------------------------------------------------- */

static bool parse_gpu_cpu(pctx *x, const cJSON *root)
{
    static const char *const gk[] = {"model", "sm", "hbm_GBps", "source", NULL};
    static const char *const ck[] = {"vendor", "model", "source", NULL};
    static const char *const vendors[] = {"intel", "amd", "arm", NULL};
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(root, "gpu");
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(root, "cpu");
    const char *model, *s;
    int vendor = 0;
    if (!tj_object(&x->c, gpu, "$.gpu", gk) || !tj_str(&x->c, gpu, "$.gpu", "model", true, &model) ||
        !tj_int(&x->c, gpu, "$.gpu", "sm", true, 0, TOPO_MIN_SM, TOPO_MAX_SM, &x->g->gpu_sm) ||
        !tj_rate(&x->c, gpu, "$.gpu", "hbm_GBps", true, 1, 1e6, &x->g->gpu_hbm_Bps) ||
        !tj_str(&x->c, gpu, "$.gpu", "source", false, &s) ||
        !tj_object(&x->c, cpu, "$.cpu", ck) || !enum_of(x, cpu, "$.cpu", "vendor", vendors, &vendor) ||
        !tj_str(&x->c, cpu, "$.cpu", "model", false, &s) ||
        !tj_str(&x->c, cpu, "$.cpu", "source", false, &s))
        return false;
    x->g->gpu_model = g_strdup(model);
    x->g->gpu_hbm_Bps *= 1e9;
    x->g->cpu_vendor = (topo_cpu_vendor)vendor;
    return true;
}

static bool parse_nics(pctx *x, const cJSON *node)
{
    static const char *const keys[] = {"count", "gbps", "gen", "lanes", "eff", "lat_ns", "tx_GBps",
                                       "rx_GBps", "net_devices", "source", NULL};
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(node, "nics");
    const char *p = "$.node.nics", *s;
    int gen, lanes;
    double gbps, lat, tx, rx;
    if (!o)
        return true;
    fab_link_desc *d = &x->g->nic_pcie;
    if (!tj_object(&x->c, o, p, keys) || !tj_int(&x->c, o, p, "count", true, 0, 0, TOPO_MAX_NICS, &x->g->nics) ||
        !tj_rate(&x->c, o, p, "gbps", true, 0.125, 1e5, &gbps) ||
        !tj_int(&x->c, o, p, "gen", true, 0, 1, 6, &gen) ||
        !tj_int(&x->c, o, p, "lanes", true, 0, 1, TOPO_MAX_PCIE_LANES, &lanes) ||
        !tj_num(&x->c, o, p, "eff", false, link_eff_default[LINK_PCIE], TOPO_MIN_EFF, false, 1, &d->eff) ||
        !tj_num(&x->c, o, p, "lat_ns", false, link_lat_ns_default[LINK_PCIE], 0, false, 1e9, &lat) ||
        !tj_rate(&x->c, o, p, "tx_GBps", false, 1, 1e5, &tx) ||
        !tj_rate(&x->c, o, p, "rx_GBps", false, 1, 1e5, &rx) ||
        !tj_int(&x->c, o, p, "net_devices", false, 1, 1, 16, &x->g->nic_devices) ||
        !tj_str(&x->c, o, p, "source", false, &s))
        return false;
    x->g->nic_Bps = gbps * 1e9 / 8;
    x->g->nic_tx_Bps = tx * 1e9;
    x->g->nic_rx_Bps = rx * 1e9;
    d->kind = LINK_PCIE;
    d->bw_Bps = lanes * topo_pcie_lane_Bps(gen);
    d->count = lanes;
    d->lat_ps = (int64_t)llround(lat * 1e3);
    x->g->nics_path = g_strdup(p);
    return true;
}

static bool parse_scaleout(pctx *x, const cJSON *root)
{
    static const char *const keys[] = {"fabric", "nvl_domain_nodes", "source", NULL};
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "scaleout");
    const char *s = NULL;
    x->g->nvl_domain_nodes = 1;
    if (!o)
        return true;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "fabric");
    if (!tj_object(&x->c, o, "$.scaleout", keys) ||
        !tj_int(&x->c, o, "$.scaleout", "nvl_domain_nodes", false, 1, 1, TOPO_MAX_NVL_DOMAIN,
                 &x->g->nvl_domain_nodes) ||
        !tj_str(&x->c, o, "$.scaleout", "source", false, &s) ||
        (!cJSON_IsNull(f) && !tj_str(&x->c, o, "$.scaleout", "fabric", false, &s)))
        return false;
    if (cJSON_IsString(f))
        x->g->fabric = g_strdup(f->valuestring);
    x->g->fabric_path = g_strdup("$.scaleout.fabric");
    return true;
}

bool topo_parse(const char *path, const char *const *sets, tgraph *g, topo_src *src, GError **err)
{
    static const char *const keys[] = {"name", "description", "gpu", "cpu", "params", "node",
                                       "scaleout", "source", "notes", "calibration", NULL};
    static const char *const nkeys[] = {"nodes", "links", "nics", NULL};
    cJSON *root = NULL;
    memset(g, 0, sizeof *g);
    g->nodes = g_array_new(FALSE, TRUE, sizeof(tnode));
    g->links = g_array_new(FALSE, TRUE, sizeof(tlink));
    g->ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g->path = g_strdup(path);
    if (!topo_src_load(src, path, &root, err))
        return false;
    pctx x = {.c = {.src = src, .err = err}, .g = g};
    const char *name = NULL, *desc = NULL, *s, *calib = NULL;
    const cJSON *node = cJSON_GetObjectItemCaseSensitive(root, "node");
    /* --set calibration=FILE (relative to the working directory) replaces the
     * file's "calibration"; the other sets are named parameters */
    GPtrArray *psets = g_ptr_array_new();
    const char *calib_set = NULL;
    for (const char *const *p = sets; p && *p; p++)
        if (g_str_has_prefix(*p, "calibration="))
            calib_set = *p + strlen("calibration=");
        else
            g_ptr_array_add(psets, (gpointer)*p);
    g_ptr_array_add(psets, NULL);
    if (calib_set && !*calib_set) { /* (it fell back to the file's silently) */
        g_ptr_array_free(psets, TRUE);
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_SET, "--set calibration=: expected a params file (calibrate fit's)");
        cJSON_Delete(root);
        return false;
    }
    bool ok = tj_object(&x.c, root, "$", keys) &&
              (g->params = topo_params_load(src, root, (const char *const *)psets->pdata, err)) != NULL;
    g_ptr_array_free(psets, TRUE);
    x.c.params = g->params;
    ok = ok && tj_str(&x.c, root, "$", "name", false, &name) &&
         tj_str(&x.c, root, "$", "description", true, &desc) &&
         tj_str(&x.c, root, "$", "source", false, &s) && tj_str(&x.c, root, "$", "calibration", false, &calib) &&
         parse_gpu_cpu(&x, root) &&
         tj_object(&x.c, node, "$.node", nkeys) &&
         parse_array(&x, node, "$.node", "nodes", parse_node) &&
         parse_array(&x, node, "$.node", "links", parse_link) && parse_nics(&x, node) &&
         parse_scaleout(&x, root);
    if (ok && calib_set && *calib_set)
        g->calibration = g_canonicalize_filename(calib_set, NULL);
    else if (ok && calib)
        g->calibration = g_strdup(calib);
    if (ok && g->ngpus == 0) {
        topo_src_error(src, err, TOPO_ERROR_SCHEMA, "$.node.nodes", "no node of kind \"gpu\"");
        ok = false;
    }
    if (ok) {
        char *base = g_path_get_basename(path);
        if (g_str_has_suffix(base, ".json"))
            base[strlen(base) - 5] = 0;
        g->name = name ? g_strdup(name) : g_strdup(base);
        g_free(base);
        g->description = g_strdup(desc);
        derive_sockets(g);
    }
    cJSON_Delete(root);
    return ok;
}

void tgraph_clear(tgraph *g)
{
    for (guint i = 0; g->nodes && i < g->nodes->len; i++) {
        g_free(g_array_index(g->nodes, tnode, i).id);
        g_free(g_array_index(g->nodes, tnode, i).path);
    }
    for (guint i = 0; g->links && i < g->links->len; i++)
        g_free(g_array_index(g->links, tlink, i).path);
    if (g->nodes)
        g_array_free(g->nodes, TRUE);
    if (g->links)
        g_array_free(g->links, TRUE);
    if (g->ids)
        g_hash_table_destroy(g->ids);
    if (g->params)
        g_hash_table_destroy(g->params);
    g_free(g->name);
    g_free(g->description);
    g_free(g->path);
    g_free(g->gpu_model);
    g_free(g->nics_path);
    g_free(g->calibration);
    g_free(g->fabric);
    g_free(g->fabric_path);
    memset(g, 0, sizeof *g);
}

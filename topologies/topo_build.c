/* topologies/topo_build.c - topo_load: template x --nodes x fabric -> graph.
 *
 * The one-server template (topo_parse.c) is checked for GPU connectivity,
 * replicated --nodes times (names "n0.gpu3"), servers of one NVLink domain
 * share its NVSwitch nodes ("d0.nvsw"), NICs are attached next to the GPUs
 * that use them, and a 2-tier leaf/spine network joins the NICs
 * (docs/topology.md, "Scale-out"). Cost: O(nodes x template size).
 */
#include <math.h>
#include <string.h>

#include "topologies/topo_internal.h"

typedef struct {
    tgraph *g;
    topo_src *src;
    topo *t;
    int G;             /* GPUs used per server */
    tfabric fab;       /* valid when fab.name */
    fab_node_id *map;  /* [server * nnodes + k] -> fabric node (FAB_NONE: dropped) */
    fab_node_id *nic;  /* [server * nics + k] */
} bctx;

static const tnode *TN(const tgraph *g, guint k) { return &g_array_index(g->nodes, tnode, k); }
static const tlink *TL(const tgraph *g, guint k) { return &g_array_index(g->links, tlink, k); }

static bool used(const bctx *b, guint k)
{
    const tnode *n = TN(b->g, k);
    return n->kind != FAB_GPU || n->gpu_local < b->G;
}

/* Every used GPU must reach every other one through nodes a route may pass
 * (models/fabric_route.c: never a GPU or host memory; NICs are not in the
 * template). */
static bool check_reach(bctx *b, GError **err)
{
    tgraph *g = b->g;
    guint n = g->nodes->len;
    bool *seen = g_new(bool, n);
    guint *stack = g_new(guint, n);
    bool ok = true;
    for (guint s = 0; s < n && ok; s++) {
        if (TN(g, s)->kind != FAB_GPU || !used(b, s))
            continue;
        memset(seen, 0, n * sizeof *seen);
        guint top = 0;
        stack[top++] = s;
        seen[s] = true;
        while (top) {
            guint u = stack[--top];
            if (u != s && (TN(g, u)->kind == FAB_GPU || TN(g, u)->kind == FAB_HOSTMEM))
                continue;
            for (guint k = 0; k < g->links->len; k++) {
                const tlink *l = TL(g, k);
                guint v = l->a == u ? l->b : l->b == u ? l->a : G_MAXUINT;
                if (v != G_MAXUINT && !seen[v] && used(b, v)) {
                    seen[v] = true;
                    stack[top++] = v;
                }
            }
        }
        for (guint d = 0; d < n && ok; d++)
            if (TN(g, d)->kind == FAB_GPU && used(b, d) && !seen[d]) {
                topo_src_error(b->src, err, TOPO_ERROR_UNREACHABLE, TN(g, d)->path,
                               "GPU \"%s\" cannot reach GPU \"%s\" over a link or through switches, CPUs or "
                               "NVSwitches (a route never passes through another GPU or host memory)",
                               TN(g, d)->id, TN(g, s)->id);
                ok = false;
            }
    }
    g_free(seen);
    g_free(stack);
    return ok;
}

/* Whether template GPU k has an NVLink (to an NVSwitch only, when to_switch). */
static bool gpu_has_nvlink(const tgraph *g, guint k, bool to_switch)
{
    for (guint i = 0; i < g->links->len; i++) {
        const tlink *l = TL(g, i);
        guint o = l->a == k ? l->b : l->b == k ? l->a : G_MAXUINT;
        if (l->d.kind == LINK_NVLINK && o != G_MAXUINT && (!to_switch || TN(g, o)->kind == FAB_NVSWITCH))
            return true;
    }
    return false;
}

/* Servers of one NVLink domain meet only at its shared NVSwitch (their GPUs
 * get the domain for their NVLinks): with nvl_domain_nodes > 1 the template
 * needs an nvswitch and every used GPU an NVLink to one. */
static bool check_domain(bctx *b, GError **err)
{
    tgraph *g = b->g;
    if (g->nvl_domain_nodes < 2)
        return true;
    bool nvsw = false;
    for (guint k = 0; k < g->nodes->len; k++)
        nvsw = nvsw || TN(g, k)->kind == FAB_NVSWITCH;
    if (!nvsw) {
        topo_src_error(b->src, err, TOPO_ERROR_UNREACHABLE, "$.scaleout.nvl_domain_nodes",
                       "%d servers in one NVLink domain meet at an \"nvswitch\" node, and this topology has none",
                       g->nvl_domain_nodes);
        return false;
    }
    for (guint k = 0; k < g->nodes->len; k++)
        if (TN(g, k)->kind == FAB_GPU && used(b, k) && !gpu_has_nvlink(g, k, true)) {
            topo_src_error(b->src, err, TOPO_ERROR_UNREACHABLE, TN(g, k)->path,
                           "GPU \"%s\" has no NVLink to an nvswitch, where the %d servers of an NVLink domain "
                           "($.scaleout.nvl_domain_nodes) meet", TN(g, k)->id, g->nvl_domain_nodes);
            return false;
        }
    return true;
}

/* Add server s's nodes (shared NVSwitches once per domain) and links. */
static void build_server(bctx *b, int s)
{
    tgraph *g = b->g;
    guint n = g->nodes->len;
    int D = g->nvl_domain_nodes, dom = s / D;
    int local[FAB_NODE_KINDS] = {0};
    for (guint k = 0; k < n; k++) {
        const tnode *tn = TN(g, k);
        int loc = tn->kind == FAB_GPU ? tn->gpu_local : local[tn->kind]++;
        bool shared = tn->kind == FAB_NVSWITCH && D > 1;
        b->map[(size_t)s * n + k] = FAB_NONE;
        if (!used(b, k))
            continue;
        if (shared && s % D) {
            b->map[(size_t)s * n + k] = b->map[(size_t)(dom * D) * n + k];
            continue;
        }
        char *name = shared ? g_strdup_printf("d%d.%s", dom, tn->id)
                            : g_strdup_printf("n%d.%s", s, tn->id);
        bool nvl = tn->kind == FAB_NVSWITCH || (tn->kind == FAB_GPU && gpu_has_nvlink(g, k, false));
        fab_node_desc d = {.kind = tn->kind, .name = name, .server = shared ? -1 : s,
                           .local = loc, .socket = tn->socket, .domain = nvl ? dom : -1,
                           .nvls = tn->nvls, .transit_Bps = tn->transit_Bps,
                           .transit_lat_ps = tn->transit_lat_ps};
        b->map[(size_t)s * n + k] = fabric_node_add(b->t->fab, &d);
        if (tn->tx_Bps > 0 || tn->rx_Bps > 0)
            fabric_node_set_endpoint(b->t->fab, b->map[(size_t)s * n + k], tn->tx_Bps, tn->rx_Bps);
        g_free(name);
    }
    for (guint k = 0; k < g->links->len; k++) {
        const tlink *l = TL(g, k);
        fab_node_id a = b->map[(size_t)s * n + l->a], c = b->map[(size_t)s * n + l->b];
        if (a != FAB_NONE && c != FAB_NONE)
            fabric_link_add(b->t->fab, a, c, &l->d);
    }
}

/* The non-GPU PCIe neighbour of template GPU `gk` (its switch or root port). */
static int pcie_parent(const tgraph *g, guint gk)
{
    for (guint i = 0; i < g->links->len; i++) {
        const tlink *l = TL(g, i);
        guint o = l->a == gk ? l->b : l->b == gk ? l->a : G_MAXUINT;
        if (l->d.kind == LINK_PCIE && o != G_MAXUINT && TN(g, o)->kind != FAB_GPU)
            return (int)o;
    }
    return -1;
}

static guint gpu_index(const tgraph *g, int local)
{
    for (guint k = 0; k < g->nodes->len; k++)
        if (TN(g, k)->kind == FAB_GPU && TN(g, k)->gpu_local == local)
            return k;
    g_assert_not_reached();
    return 0;
}

/* NIC k sits under the PCIe parent of GPU k*ngpus/nics. */
static bool build_nics(bctx *b, int s, GError **err)
{
    tgraph *g = b->g;
    for (int k = 0; k < g->nics; k++) {
        int p = pcie_parent(g, gpu_index(g, k * g->ngpus / g->nics));
        if (p < 0) {
            topo_src_error(b->src, err, TOPO_ERROR_UNREACHABLE, g->nics_path,
                           "NIC %d: GPU %d has no PCIe parent to attach it to", k,
                           k * g->ngpus / g->nics);
            return false;
        }
        char *name = g_strdup_printf("n%d.nic%d", s, k);
        fab_node_desc d = {.kind = FAB_NIC, .name = name, .server = s, .local = k,
                           .socket = TN(g, (guint)p)->socket, .domain = -1};
        fab_node_id id = fabric_node_add(b->t->fab, &d);
        if (g->nic_tx_Bps > 0 || g->nic_rx_Bps > 0)
            fabric_node_set_endpoint(b->t->fab, id, g->nic_tx_Bps, g->nic_rx_Bps);
        g_free(name);
        b->nic[(size_t)s * g->nics + k] = id;
        fabric_link_add(b->t->fab, id, b->map[(size_t)s * g->nodes->len + (guint)p], &g->nic_pcie);
    }
    return true;
}

static fab_node_id switch_add(fabric *f, fab_node_kind kind, const char *name)
{
    fab_node_desc d = {.kind = kind, .name = name, .server = -1, .socket = -1, .domain = -1};
    return fabric_node_add(f, &d);
}

/* The rate a NIC's link to its leaf runs at: the slower of the NIC and the
 * switch port (a link trains to the speed both ends support: a 400 Gb/s NIC
 * on an HDR switch runs at 200). */
static double net_link_Bps(const tgraph *g, const tfabric *F)
{
    return F->link_Bps > 0 && F->link_Bps < g->nic_Bps ? F->link_Bps : g->nic_Bps;
}

/* Two-tier leaf/spine: rail-optimized puts NIC k of each server of a group on
 * leaf (group, k); otherwise a group's NICs fill one leaf. Each of `nics`
 * spines joins every leaf with (down ports x port rate / oversubscription) /
 * spines: uplinks are switch-to-switch links at the fabric's port rate,
 * whatever the NICs below run at. */
static void build_network(bctx *b, int nodes, double oversub)
{
    const tfabric *F = &b->fab;
    int nics = b->g->nics, half = F->leaf_radix / 2;
    int spg = F->rail_optimized ? half : MAX(1, half / nics);
    int groups = (nodes + spg - 1) / spg, per = F->rail_optimized ? nics : 1;
    int nleaf = groups * per, nspine = nleaf > 1 ? nics : 0;
    fab_node_id *leaf = g_new(fab_node_id, nleaf);
    for (int i = 0; i < nleaf; i++) {
        char *nm = g_strdup_printf("leaf%d.%d", i / per, i % per);
        leaf[i] = switch_add(b->t->fab, FAB_NET_LEAF, nm);
        g_free(nm);
    }
    int64_t sw_ps = (int64_t)llround(F->switch_lat_ns * 1e3);
    fab_link_desc nl = {.kind = LINK_NET, .bw_Bps = net_link_Bps(b->g, F), .eff = F->eff, .count = 1,
                        .lat_ps = (int64_t)llround(F->nic_lat_ns * 1e3) + sw_ps / 2};
    for (int s = 0; s < nodes; s++)
        for (int k = 0; k < nics; k++)
            fabric_link_add(b->t->fab, b->nic[(size_t)s * nics + k], leaf[(s / spg) * per + k % per],
                            &nl);
    int down = F->rail_optimized ? spg : spg * nics;
    fab_link_desc up = {.kind = LINK_NET, .eff = F->eff, .lat_ps = sw_ps,
                        .bw_Bps = down * F->link_Bps / oversub / MAX(nspine, 1),
                        .count = MAX(1, (int)ceil(down / oversub / MAX(nspine, 1)))};
    for (int j = 0; j < nspine; j++) {
        char *nm = g_strdup_printf("spine%d", j);
        fab_node_id sp = switch_add(b->t->fab, FAB_NET_SPINE, nm);
        g_free(nm);
        for (int i = 0; i < nleaf; i++)
            fabric_link_add(b->t->fab, leaf[i], sp, &up);
    }
    g_free(leaf);
}

static bool param_on(GHashTable *p, const char *key, bool dflt)
{
    const char *v = g_hash_table_lookup(p, key);
    return v && strcmp(v, "default") ? !strcmp(v, "on") : dflt;
}

static double param_num(GHashTable *p, const char *key, double dflt)
{
    const char *v = g_hash_table_lookup(p, key);
    return v ? g_ascii_strtod(v, NULL) : dflt;
}

/* Shape checks and the fabric file; false with *err. */
static bool prepare(bctx *b, const topo_opts *o, int *nodes, GError **err)
{
    tgraph *g = b->g;
    *nodes = o && o->nodes ? o->nodes : 1;
    b->G = o && o->gpus ? o->gpus : g->ngpus;
    if (*nodes < 1 || *nodes > TOPO_MAX_NODES || b->G < 1 || b->G > g->ngpus) {
        topo_src_error(b->src, err, TOPO_ERROR_VALUE, "$.node.nodes",
                       "--nodes must be 1..%d and --gpus 1..%d, got %d and %d", TOPO_MAX_NODES, g->ngpus,
                       *nodes, b->G);
        return false;
    }
    if (!check_reach(b, err) || !check_domain(b, err))
        return false;
    const char *fname = o && o->fabric ? o->fabric : g->fabric;
    if (fname && g->nics > 0) {
        char *probe = g_strdup_printf("%s/fabrics/%s.json", topo_dir(), fname);
        bool exists = g_file_test(probe, G_FILE_TEST_IS_REGULAR);
        g_free(probe);
        if (!exists && o && o->fabric) { /* the option's, not the file's: no position in the file */
            g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, "--fabric %s: unknown fabric (no %s/fabrics/%s.json)",
                        fname, topo_dir(), fname);
            return false;
        }
        if (!exists) {
            topo_src_error(b->src, err, TOPO_ERROR_VALUE, g->fabric_path ? g->fabric_path : "$",
                           "unknown fabric \"%s\" (no %s/fabrics/%s.json)", fname, topo_dir(), fname);
            return false;
        }
        if (!topo_fabric_load(fname, &b->fab, err))
            return false;
    }
    if (*nodes > g->nvl_domain_nodes && !b->fab.name) {
        topo_src_error(b->src, err, TOPO_ERROR_UNREACHABLE, g->fabric_path ? g->fabric_path : "$",
                       "--nodes %d needs a scale-out fabric and NICs, and this topology has %s",
                       *nodes, g->nics ? "no fabric" : "no NICs");
        return false;
    }
    int D = g->nvl_domain_nodes;
    if (D > 1 && *nodes > D && *nodes % D) { /* the option's, not the file's: no position */
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE,
                    "--nodes %d leaves a partial NVLink domain (%d domain%s of %d servers and one of %d): "
                    "collectives over domains of different sizes are not modelled; use at most %d servers or a "
                    "multiple of %d", *nodes, *nodes / D, *nodes / D == 1 ? "" : "s", D, *nodes % D, D, D);
        return false;
    }
    return true;
}

static void fill_summary(bctx *b, int nodes)
{
    topo *t = b->t;
    tgraph *g = b->g;
    t->nodes = nodes;
    t->gpus_per_node = b->G;
    t->nranks = nodes * b->G;
    t->nvl_domain_nodes = g->nvl_domain_nodes;
    t->p2p = param_on(g->params, "p2p", true);
    t->nics_per_node = g->nics;
    t->nic_Bps = b->fab.name ? net_link_Bps(g, &b->fab) : g->nic_Bps;
    t->nic_raw_Bps = g->nic_Bps;
    t->nic_devices = g->nic_devices > 0 ? g->nic_devices : 1;
    t->fabric_name = b->fab.name ? g_strdup(b->fab.name) : NULL;
    t->sharp = b->fab.name && b->fab.sharp;
    guint g0 = gpu_index(g, 0);
    for (guint k = 0; k < g->links->len; k++) {
        const tlink *l = TL(g, k);
        if (l->d.kind == LINK_NVLINK && (l->a == g0 || l->b == g0)) {
            t->nvlink_links += l->d.count;
            t->nvlink_link_Bps = l->d.bw_Bps / l->d.count;
            t->nvlink_eff = l->d.eff;
        }
    }
    for (guint k = 0; k < g->nodes->len; k++)
        if (TN(g, k)->kind == FAB_NVSWITCH) {
            t->nvswitch = true;
            t->nvls = t->nvls || TN(g, k)->nvls;
        }
}

static topo *build(tgraph *g, topo_src *src, const topo_opts *o, GError **err)
{
    bctx b = {.g = g, .src = src};
    int nodes;
    if (!prepare(&b, o, &nodes, err)) {
        g_free(b.fab.name);
        return NULL;
    }
    topo *t = b.t = g_new0(topo, 1);
    t->fab = fabric_new();
    fill_summary(&b, nodes);
    b.map = g_new(fab_node_id, (size_t)nodes * g->nodes->len);
    b.nic = g_new(fab_node_id, (size_t)nodes * MAX(g->nics, 1));
    bool ok = true;
    for (int s = 0; s < nodes && ok; s++) {
        build_server(&b, s);
        ok = build_nics(&b, s, err);
    }
    if (ok && b.fab.name && nodes > 1)
        build_network(&b, nodes, param_num(g->params, "oversubscription", b.fab.oversubscription));
    fabric_set_p2p(t->fab, t->p2p);
    fabric_set_p2p_xsocket(t->fab, param_on(g->params, "p2p_xsocket", true));
    fabric_set_adaptive(t->fab, param_on(g->params, "adaptive_routing", b.fab.adaptive_routing));
    fabric_set_pxn(t->fab, param_on(g->params, "pxn", true));
    t->gpu_of_rank = g_new(fab_node_id, t->nranks);
    t->nic_of_rank = g_new(fab_node_id, t->nranks);
    for (int r = 0; ok && r < t->nranks; r++) {
        int s = r / b.G, l = r % b.G;
        t->gpu_of_rank[r] = b.map[(size_t)s * g->nodes->len + gpu_index(g, l)];
        t->nic_of_rank[r] = g->nics ? b.nic[(size_t)s * g->nics + l * g->nics / g->ngpus] : FAB_NONE;
    }
    g_free(b.map);
    g_free(b.nic);
    g_free(b.fab.name);
    if (!ok) {
        topo_free(t);
        return NULL;
    }
    return t;
}

static char *resolve(const char *name, GError **err)
{
    if (strchr(name, '/') || g_str_has_suffix(name, ".json")) {
        if (g_file_test(name, G_FILE_TEST_IS_REGULAR))
            return g_strdup(name);
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_IO, "%s: %s", name,
                    g_file_test(name, G_FILE_TEST_IS_DIR) ? "a directory, not a topology file"
                    : g_file_test(name, G_FILE_TEST_EXISTS) ? "not a regular file (a topology is a JSON file)"
                                                            : "no such topology file");
        return NULL;
    }
    char *file = g_strdup_printf("%s.json", name);
    char *path = g_build_filename(topo_dir(), file, NULL);
    g_free(file);
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
        return path;
    g_set_error(err, TOPO_ERROR, TOPO_ERROR_IO,
                "unknown topology '%s' (not in %s; see 'conveyor topo list')", name, topo_dir());
    g_free(path);
    return NULL;
}

topo *topo_load(const char *name_or_path, const topo_opts *opts, GError **err)
{
    char *path = resolve(name_or_path, err);
    if (!path)
        return NULL;
    tgraph g;
    topo_src src;
    GError *e = NULL;
    topo *t = NULL;
    topo_calib_vals cv = {0};
    char *calib = NULL;
    if (topo_parse(path, opts ? opts->sets : NULL, &g, &src, &e) && topo_calib_apply(&g, &src, &cv, &calib, &e))
        t = build(&g, &src, opts, &e);
    if (t) {
        t->launch_us = cv.launch_us;
        t->calib_gemm_Fps = cv.gemm_Fps, t->calib_gemm_k0 = cv.gemm_k0;
        t->calib_hbm_copy_Bps = cv.hbm_copy_Bps;
        t->calibration = calib;
        calib = NULL;
        t->name = g_strdup(g.name);
        t->description = g_strdup(g.description);
        t->path = g_strdup(path);
        t->gpu_model = g_strdup(g.gpu_model);
        t->gpu_sm = g.gpu_sm;
        t->gpu_hbm_Bps = g.gpu_hbm_Bps;
        t->cpu_vendor = g.cpu_vendor;
        t->params = g.params;
        g.params = NULL;
    }
    g_free(calib);
    if (e)
        g_propagate_error(err, e);
    tgraph_clear(&g);
    topo_src_clear(&src);
    g_free(path);
    return t;
}

void topo_free(topo *t)
{
    if (!t)
        return;
    g_free(t->name);
    g_free(t->description);
    g_free(t->path);
    g_free(t->gpu_model);
    g_free(t->fabric_name);
    g_free(t->calibration);
    if (t->fab)
        fabric_free(t->fab);
    g_free(t->gpu_of_rank);
    g_free(t->nic_of_rank);
    if (t->params)
        g_hash_table_destroy(t->params);
    g_free(t);
}

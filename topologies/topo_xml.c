/* topologies/topo_xml.c - NCCL topology dump (NCCL_TOPO_DUMP_FILE) -> JSON.
 *
 * Reads system/cpu/pci/gpu/nvlink/nic/net with GMarkup and writes a
 * conveyor topology (docs/topology.md): each <cpu> becomes a socket with its
 * host memory, each PCI bridge a pcie_switch, each <gpu> a GPU on its PCI
 * parent, <nvlink> to an NVSwitch (tclass 0x068000) one shared nvswitch,
 * GPU-GPU nvlinks direct bundles, and the <net>s a "nics" section. Numbers
 * the dump lacks (HBM bandwidth, host memory) are marked as estimates.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "topologies/topo_internal.h"
#include "traces/tracefile.h"

typedef struct {
    char *id;     /* node id of the nearest CPU / bridge above, or own id */
    int gen, width;
} xframe;

typedef struct {
    GMarkupParseContext *ctx;
    const char *file;
    GPtrArray *stack;     /* of xframe* */
    cJSON *nodes, *links;
    GHashTable *gpu_bus;  /* busid -> gpu id */
    GPtrArray *peer;      /* pending "gpuid\tbusid\tcount" GPU-GPU nvlinks */
    int ncpu, nsw, ngpu, nnet, sm, nic_gen, nic_width;
    int nvsw_links;       /* current GPU's NVLinks to NVSwitches, summed */
    double net_mbps;
    bool nvsw;
    char *vendor, *cur_gpu, *cur_bus;
} xstate;

static void frame_free(gpointer p)
{
    xframe *f = p;
    g_free(f->id);
    g_free(f);
}

static void xerr(xstate *x, GError **err, const char *fmt, const char *a)
{
    int line, col;
    g_markup_parse_context_get_position(x->ctx, &line, &col);
    char *msg = g_strdup_printf(fmt, a);
    g_set_error(err, TOPO_ERROR, TOPO_ERROR_PARSE, "%s:%d:%d: %s", x->file, line, col, msg);
    g_free(msg);
}

static const char *attr(const char **names, const char **vals, const char *key)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], key))
            return vals[i];
    return NULL;
}

/* A whole decimal attribute within [lo, hi]; false when absent, not a
 * number, or out of range (atoi would wrap or read "12abc" as 12). */
static bool xint(const char *s, int lo, int hi, int *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

/* "16.0 GT/s PCIe" -> 4; 0 when unknown. */
static int pcie_gen_of(const char *s)
{
    static const double gts[] = {2.5, 5, 8, 16, 32, 64};
    double v = s ? g_ascii_strtod(s, NULL) : 0;
    for (int i = 0; i < 6; i++)
        if (v > gts[i] * 0.99 && v < gts[i] * 1.01)
            return i + 1;
    return 0;
}

static void add_pcie(xstate *x, const char *a, const char *b, int gen, int width)
{
    cJSON *l = imp_link(x->links, a, b, "pcie", "NCCL dump: pci link_speed and link_width");
    cJSON_AddNumberToObject(l, "gen", gen);
    cJSON_AddNumberToObject(l, "lanes", width);
}

static xframe *top(xstate *x) { return x->stack->len ? g_ptr_array_index(x->stack, x->stack->len - 1) : NULL; }

static bool on_cpu(xstate *x, const char **n, const char **v, GError **err)
{
    if (x->ncpu >= TOPO_MAX_SOCKETS) { /* a topology's sockets are 0..63 */
        xerr(x, err, "more than " G_STRINGIFY(TOPO_MAX_SOCKETS) " <cpu>s (sockets) in one server%s", "");
        return false;
    }
    char *id = g_strdup_printf("cpu%d", x->ncpu), *mem = g_strdup_printf("mem%d", x->ncpu);
    cJSON *c = imp_node(x->nodes, id, "cpu");
    cJSON_AddNumberToObject(c, "socket", x->ncpu++);
    imp_node(x->nodes, mem, "hostmem");
    cJSON_AddNumberToObject(imp_link(x->links, id, mem, "mem",
                                     "import: estimate (the dump has no memory bandwidth); edit"),
                            "GBps", 200);
    const char *vend = attr(n, v, "vendor"), *arch = attr(n, v, "arch");
    if (!x->vendor)
        x->vendor = g_strdup(arch && !strcmp(arch, "arm64") ? "arm"
                             : vend && strstr(vend, "AMD")  ? "amd"
                             : vend && strstr(vend, "Intel") ? "intel"
                             : arch && strstr(arch, "arm")  ? "arm" : "intel");
    xframe *f = g_new0(xframe, 1);
    f->id = id;
    g_ptr_array_add(x->stack, f);
    g_free(mem);
    return true;
}

static bool on_pci(xstate *x, const char **n, const char **v, GError **err)
{
    xframe *up = top(x), *f = g_new0(xframe, 1);
    const char *cls = attr(n, v, "class"), *sp = attr(n, v, "link_speed");
    const char *w = attr(n, v, "link_width");
    f->gen = pcie_gen_of(sp);
    if (!xint(w, 1, TOPO_MAX_PCIE_LANES, &f->width))
        f->width = 0;
    g_ptr_array_add(x->stack, f);
    if (!up || f->gen == 0 || f->width < 1) {
        xerr(x, err, !up ? "<pci> outside a <cpu>%s"
                         : "<pci>: need link_speed like \"16.0 GT/s PCIe\" and link_width 1.."
                           G_STRINGIFY(TOPO_MAX_PCIE_LANES) "%s", "");
        return false;
    }
    g_free(x->cur_bus);
    x->cur_bus = g_strdup(attr(n, v, "busid"));
    if (cls && g_str_has_prefix(cls, "0x0604")) {
        f->id = g_strdup_printf("sw%d", x->nsw++);
        imp_node(x->nodes, f->id, "pcie_switch");
        add_pcie(x, f->id, up->id, f->gen, f->width);
    } else {
        f->id = g_strdup(up->id);
    }
    return true;
}

static bool on_gpu(xstate *x, const char **n, const char **v, GError **err)
{
    xframe *pf = top(x);
    const char *sm = attr(n, v, "sm");
    int smv;
    /* the topology's bounds on gpu.sm (compute capability x10) */
    if (!pf || !x->stack->len || !pf->gen || !xint(sm, TOPO_MIN_SM, TOPO_MAX_SM, &smv)) {
        xerr(x, err, "<gpu> must sit in a <pci> and have sm=\"NN\" (" G_STRINGIFY(TOPO_MIN_SM) ".."
                     G_STRINGIFY(TOPO_MAX_SM) ")%s", "");
        return false;
    }
    /* Two GPUs on one PCI function used to pass, the second silently taking
     * the first one's NVLink peers (peers are found by busid). */
    if (x->cur_bus && g_hash_table_contains(x->gpu_bus, x->cur_bus)) {
        xerr(x, err, "a second <gpu> on PCI bus %s", x->cur_bus);
        return false;
    }
    x->sm = smv;
    char *id = g_strdup_printf("gpu%d", x->ngpu++);
    imp_node(x->nodes, id, "gpu");
    add_pcie(x, id, pf->id, pf->gen, pf->width); /* a device frame's id is its parent's */
    if (x->cur_bus)
        g_hash_table_replace(x->gpu_bus, g_strdup(x->cur_bus), g_strdup(id));
    g_free(x->cur_gpu);
    x->cur_gpu = id;
    return true;
}

static bool on_nvlink(xstate *x, const char **n, const char **v, GError **err)
{
    const char *tgt = attr(n, v, "target"), *cnt = attr(n, v, "count"), *tc = attr(n, v, "tclass");
    int count;
    /* a topology's NVLink bundle; an H100 has 18 */
    if (!x->cur_gpu || !tgt || !xint(cnt, 1, TOPO_MAX_LINK_NVLINKS, &count)) {
        xerr(x, err, "<nvlink> must sit in a <gpu> and have target and count 1.."
                     G_STRINGIFY(TOPO_MAX_LINK_NVLINKS) "%s", "");
        return false;
    }
    if (tc && !g_ascii_strcasecmp(tc, "0x068000")) {
        if (!x->nvsw)
            cJSON_AddBoolToObject(imp_node(x->nodes, "nvsw", "nvswitch"), "nvls", x->sm >= 90);
        x->nvsw = true;
        x->nvsw_links += count; /* one bundle per GPU, added at </gpu> */
        if (x->nvsw_links > TOPO_MAX_LINK_NVLINKS) {
            xerr(x, err, "<gpu> with more than " G_STRINGIFY(TOPO_MAX_LINK_NVLINKS) " NVLinks to NVSwitches%s", "");
            return false;
        }
    } else {
        g_ptr_array_add(x->peer, g_strdup_printf("%s\t%s\t%d", x->cur_gpu, tgt, count));
    }
    return true;
}

static void start_el(GMarkupParseContext *c, const char *el, const char **n, const char **v,
                     gpointer ud, GError **err)
{
    (void)c;
    xstate *x = ud;
    if (!strcmp(el, "cpu"))
        on_cpu(x, n, v, err);
    else if (!strcmp(el, "pci"))
        on_pci(x, n, v, err);
    else if (!strcmp(el, "gpu"))
        on_gpu(x, n, v, err);
    else if (!strcmp(el, "nvlink"))
        on_nvlink(x, n, v, err);
    else if (!strcmp(el, "net")) {
        const char *sp = attr(n, v, "speed");
        xframe *f = top(x);
        if (++x->nnet > TOPO_MAX_NICS) {
            xerr(x, err, "more than " G_STRINGIFY(TOPO_MAX_NICS) " <net>s (NICs) in one server%s", "");
            return;
        }
        char *end = NULL;
        double mbps = sp ? g_ascii_strtod(sp, &end) : 0;
        /* NCCL prints Mb/s; 0: unknown (the NIC rate is assumed), else a
         * topology's NIC rate: at least 1 MB/s (8 Mb/s), at most nic.gbps's */
        if (sp && (end == sp || *end || !isfinite(mbps) || mbps < 0 || (mbps > 0 && mbps < 8e3 * TOPO_MIN_GBPS) ||
                   mbps > 1e3 * TOPO_MAX_NIC_GBPS)) {
            char *m = g_strdup_printf("<net speed=\"%s\">: expected 0 (unknown) or Mb/s in %.0f..%.0f", sp,
                                      8e3 * TOPO_MIN_GBPS, 1e3 * TOPO_MAX_NIC_GBPS);
            xerr(x, err, "%s", m);
            g_free(m);
            return;
        }
        x->net_mbps = MAX(x->net_mbps, mbps);
        if (f && f->gen && !x->nic_gen) {
            x->nic_gen = f->gen;
            x->nic_width = f->width;
        }
    }
}

static void end_el(GMarkupParseContext *c, const char *el, gpointer ud, GError **err)
{
    (void)c;
    (void)err;
    xstate *x = ud;
    if (!strcmp(el, "cpu") || !strcmp(el, "pci"))
        if (x->stack->len)
            g_ptr_array_remove_index(x->stack, x->stack->len - 1);
    if (!strcmp(el, "gpu")) {
        if (x->nvsw_links) {
            cJSON *l = imp_link(x->links, x->cur_gpu, "nvsw", "nvlink",
                                "NCCL dump: nvlink counts to NVSwitches (tclass 0x068000), summed");
            cJSON_AddNumberToObject(l, "links", x->nvsw_links);
            cJSON_AddNumberToObject(l, "nvlink_gen", imp_nvlink_gen(x->sm));
        }
        x->nvsw_links = 0;
        g_free(x->cur_gpu);
        x->cur_gpu = NULL;
    }
}

static void add_peer_links(xstate *x)
{
    GHashTable *done = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < x->peer->len; i++) {
        char **f = g_strsplit(g_ptr_array_index(x->peer, i), "\t", 3);
        const char *b = g_hash_table_lookup(x->gpu_bus, f[1]);
        bool lt = b && strcmp(f[0], b) < 0;
        char *key = b ? g_strdup_printf("%s-%s", lt ? f[0] : b, lt ? b : f[0]) : NULL;
        if (b && strcmp(f[0], b) && !g_hash_table_contains(done, key)) {
            cJSON *l = imp_link(x->links, f[0], b, "nvlink", "NCCL dump: GPU-GPU nvlink count");
            cJSON_AddNumberToObject(l, "links", atoi(f[2]));
            cJSON_AddNumberToObject(l, "nvlink_gen", imp_nvlink_gen(x->sm));
            g_hash_table_add(done, key);
            key = NULL;
        }
        g_free(key);
        g_strfreev(f);
    }
    g_hash_table_destroy(done);
}

/* Inter-socket links and the top-level object; NULL with *err when --gpu
 * names no GPU of the dump's sm. */
static cJSON *finish(xstate *x, const char *path, const topo_import_opts *o, GError **err)
{
    cJSON *gpu = imp_gpu(path, o->gpu, x->sm, NULL, NULL, err);
    if (!gpu)
        return NULL;
    const char *vendor = o->cpu ? o->cpu : x->vendor;
    add_peer_links(x);
    cJSON *root = cJSON_CreateObject(), *p;
    char *base = g_path_get_basename(path), *desc = g_strdup_printf("imported from %s", base);
    cJSON_AddStringToObject(root, "description", desc);
    cJSON_AddItemToObject(root, "gpu", gpu);
    p = cJSON_AddObjectToObject(root, "cpu");
    cJSON_AddStringToObject(p, "vendor", vendor);
    p = cJSON_AddObjectToObject(root, "params");
    imp_sockets(p, x->links, x->ncpu, vendor);
    if (x->nnet)
        cJSON_AddNumberToObject(p, "nics_per_node", x->nnet);
    p = cJSON_AddObjectToObject(root, "node");
    cJSON_AddItemToObject(p, "nodes", x->nodes);
    cJSON_AddItemToObject(p, "links", x->links);
    x->nodes = x->links = NULL;
    double gbps = o->nic_gbps > 0 ? o->nic_gbps : x->net_mbps > 0 ? x->net_mbps / 1000 : 10;
    if (x->nnet) {
        cJSON *n = cJSON_AddObjectToObject(p, "nics");
        cJSON_AddStringToObject(n, "count", "$nics_per_node");
        cJSON_AddNumberToObject(n, "gbps", gbps);
        cJSON_AddNumberToObject(n, "gen", x->nic_gen ? x->nic_gen : 4);
        cJSON_AddNumberToObject(n, "lanes", x->nic_width ? x->nic_width : 16);
        cJSON_AddStringToObject(n, "source", o->nic_gbps > 0 ? "rate: `topo import --nic-gbps`; NCCL dump: the NIC's pci link"
                                                             : "NCCL dump: net speed (Mb/s) and the NIC's pci link");
    }
    if (!imp_scaleout(root, path, o, x->nnet > 0, gbps, x->nvsw, err)) {
        cJSON_Delete(root);
        root = NULL;
    }
    g_free(base);
    g_free(desc);
    return root;
}

char *topo_import_nccl_xml(const char *path, const topo_import_opts *o, char **note, GError **err)
{
    static const topo_import_opts none = {0};
    o = o ? o : &none;
    if (note)
        *note = NULL;
    char *text = NULL;
    gsize len = 0;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, &len, &e)) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_IO, "%s: %s", path, e->message);
        g_error_free(e);
        return NULL;
    }
    tracefile_blank_bom(text, len);
    static const GMarkupParser parser = {.start_element = start_el, .end_element = end_el};
    xstate x = {.file = path, .stack = g_ptr_array_new_with_free_func(frame_free),
                .nodes = cJSON_CreateArray(), .links = cJSON_CreateArray(),
                .gpu_bus = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
                .peer = g_ptr_array_new_with_free_func(g_free)};
    x.ctx = g_markup_parse_context_new(&parser, 0, &x, NULL);
    bool ok = g_markup_parse_context_parse(x.ctx, text, (gssize)len, &e) &&
              g_markup_parse_context_end_parse(x.ctx, &e);
    char *out = NULL;
    if (!ok && e->domain != TOPO_ERROR) {
        int line, col;
        g_markup_parse_context_get_position(x.ctx, &line, &col);
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_PARSE, "%s:%d:%d: %s", path, line, col, e->message);
        g_clear_error(&e);
    } else if (!ok) {
        g_propagate_error(err, e);
    } else if (x.ngpu == 0 || x.ncpu == 0) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_SCHEMA, "%s:1:1: no <cpu> or no <gpu> in the dump",
                    path);
    } else {
        cJSON *root = finish(&x, path, o, err);
        out = root ? cJSON_Print(root) : NULL;
        cJSON_Delete(root);
        if (out && note && !o->gpu)
            *note = g_strdup_printf("%s: the dump gives the GPUs' compute capability (sm_%d), not their kind: "
                                    "`conveyor scale` and `workload` need one, `topo import --gpu NAME` sets it",
                                    path, x.sm);
    }
    g_markup_parse_context_free(x.ctx);
    g_ptr_array_unref(x.stack);
    cJSON_Delete(x.nodes);
    cJSON_Delete(x.links);
    g_hash_table_destroy(x.gpu_bus);
    g_ptr_array_unref(x.peer);
    g_free(x.vendor);
    g_free(x.cur_gpu);
    g_free(x.cur_bus);
    g_free(text);
    return out;
}

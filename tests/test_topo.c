/* Tests of topologies/: shipped systems, bad input with positions, --set,
 * --nodes/--gpus shapes, NVLink domains, DGX-1 wiring, NCCL XML import. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "topologies/topo.h"

static topo *load(const char *name, int nodes, int gpus, const char *const *sets)
{
    GError *e = NULL;
    topo_opts o = {.nodes = nodes, .gpus = gpus, .sets = sets};
    topo *t = topo_load(name, &o, &e);
    if (!t) {
        fprintf(stderr, "%s: %s\n", name, e->message);
        g_error_free(e);
    }
    return t;
}

/* Expect failure with `code`; returns the message (caller g_free's) or NULL. */
static char *load_fails(const char *name, const char *const *sets, const char *fabric, int code)
{
    GError *e = NULL;
    topo_opts o = {.sets = sets, .fabric = fabric};
    topo *t = topo_load(name, &o, &e);
    CU_ASSERT_PTR_NULL(t);
    topo_free(t);
    if (!e)
        return NULL;
    CU_ASSERT(g_error_matches(e, TOPO_ERROR, code));
    if (!g_error_matches(e, TOPO_ERROR, code))
        fprintf(stderr, "want code %d: %s\n", code, e->message);
    char *m = g_strdup(e->message);
    g_error_free(e);
    return m;
}

/* GPUs per server by the vendors' system descriptions. */
static const struct { const char *name; int gpus; } shipped[] = {
    {"aws-p5", 8}, {"dgx-a100", 8}, {"dgx-h100", 8}, {"dgx1-v100", 8}, {"dgx2-v100", 16}, {"gb200-nvl72", 4},
    {"hgx-b200", 8}, {"hgx-h200", 8}, {"pcie-gen3-2gpu", 2}, {"pcie-gen4-4gpu", 4},
    {"pcie-gen4-8gpu-2socket", 8}, {"pcie-gen5-8gpu-2socket", 8},
};

static void test_topo_shipped_all_load_with_gpu_counts(void)
{
    GError *e = NULL;
    GPtrArray *l = topo_list(&e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(l->len, G_N_ELEMENTS(shipped));
    for (size_t i = 0; i < G_N_ELEMENTS(shipped); i++) {
        topo *t = load(shipped[i].name, 0, 0, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(t->gpus_per_node, shipped[i].gpus);
        CU_ASSERT_EQUAL(t->nranks, shipped[i].gpus);
        CU_ASSERT_EQUAL(fabric_gpus(t->fab)->len, (guint)shipped[i].gpus);
        CU_ASSERT(t->gpu_sm >= 70 && t->gpu_hbm_Bps > 1e11);
        if (i < l->len) {
            const topo_entry *en = g_ptr_array_index(l, i);
            CU_ASSERT_STRING_EQUAL(en->name, shipped[i].name);
            CU_ASSERT_EQUAL(en->gpus, shipped[i].gpus);
        }
        topo_free(t);
    }
    g_ptr_array_unref(l);
}

/* Each broken file, the code it must produce and the line:col of the
 * offending value (found in the file text by tests' generator, not by the
 * loader). */
static const struct { const char *file; int code, line, col; } bad[] = {
    {"negative-bandwidth", TOPO_ERROR_VALUE, 12, 73},
    {"zero-bandwidth", TOPO_ERROR_VALUE, 12, 73},
    {"huge-bandwidth", TOPO_ERROR_VALUE, 12, 73},
    {"dangling-link-end", TOPO_ERROR_REF, 12, 28},
    {"self-link", TOPO_ERROR_REF, 12, 28},
    {"unknown-key", TOPO_ERROR_SCHEMA, 12, 101},
    {"unknown-top-level-key", TOPO_ERROR_SCHEMA, 15, 12},
    {"duplicate-id", TOPO_ERROR_REF, 9, 14},
    {"wrong-type", TOPO_ERROR_SCHEMA, 12, 84},
    {"zero-lanes", TOPO_ERROR_VALUE, 12, 84},
    {"bad-pcie-gen", TOPO_ERROR_VALUE, 12, 72},
    {"nan-latency", TOPO_ERROR_VALUE, 12, 98},
    {"nan-string-latency", TOPO_ERROR_SCHEMA, 12, 98},
    {"negative-latency", TOPO_ERROR_VALUE, 12, 98},
    {"eff-above-one", TOPO_ERROR_VALUE, 12, 95},
    {"eff-zero", TOPO_ERROR_VALUE, 12, 72},
    {"unknown-node-kind", TOPO_ERROR_VALUE, 9, 30},
    {"unknown-link-kind", TOPO_ERROR_VALUE, 12, 44},
    {"unknown-param", TOPO_ERROR_SCHEMA, 5, 23},
    {"bad-param-default", TOPO_ERROR_VALUE, 5, 26},
    {"undeclared-param-ref", TOPO_ERROR_SCHEMA, 12, 72},
    {"bad-repeat-expr", TOPO_ERROR_SCHEMA, 9, 14},
    {"disconnected-gpus", TOPO_ERROR_UNREACHABLE, 10, 7},
    {"unknown-fabric", TOPO_ERROR_VALUE, 16, 26},
    {"missing-description", TOPO_ERROR_SCHEMA, 1, 1},
    {"syntax-error", TOPO_ERROR_PARSE, 3, 36},
    {"truncated", TOPO_ERROR_PARSE, 4, 1},
    {"wrong-gpu-sm-type", TOPO_ERROR_SCHEMA, 3, 31},
    /* found by fuzz/fuzz_topo_json: a 0x0f byte as whitespace hung the position scanner */
    {"control-byte-whitespace-hang", TOPO_ERROR_VALUE, 12, 72},
    {"calibration-file-missing", TOPO_ERROR_VALUE, 111, 18}, /* the value of "calibration" (grep -n) */
    /* found by a CLI mutation fuzzer: rates and efficiencies too small for the
     * picosecond clock, and an {expr} that overflowed a long */
    {"tiny-bandwidth", TOPO_ERROR_VALUE, 11, 73},
    {"tiny-eff", TOPO_ERROR_VALUE, 11, 95},
    {"repeat-expr-overflow", TOPO_ERROR_SCHEMA, 8, 14},
    /* a review of bad inputs: cJSON keeps both, the first was read */
    {"duplicate-key", TOPO_ERROR_SCHEMA, 5, 49},
    /* a review of the loader (2026-12-02): an id that broke topo dot's output */
    {"id-with-quote-and-newline", TOPO_ERROR_SCHEMA, 25, 11},
    /* "nvls" on a node that is not an NVSwitch */
    {"nvls-on-gpu", TOPO_ERROR_VALUE, 32, 13},
    {"nvls-on-pcie-switch", TOPO_ERROR_VALUE, 27, 13},
    {"tx-on-pcie-switch", TOPO_ERROR_VALUE, 27, 16},
    /* GPUs no route joins: at the GPUs' entry (its "{" opens line 28 or 33),
     * at nvl_domain_nodes' value */
    {"gpu-reached-only-through-hostmem", TOPO_ERROR_UNREACHABLE, 28, 4},
    {"nvl-domain-without-nvswitch", TOPO_ERROR_UNREACHABLE, 60, 23},
    {"nvl-domain-gpu-without-nvlink-to-nvswitch", TOPO_ERROR_UNREACHABLE, 33, 4},
};

static void test_topo_bad_inputs_report_code_and_position(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *path = g_strdup_printf("tests/bad_input/topo/%s.json", bad[i].file);
        char *want = g_strdup_printf("%s:%d:%d: ", path, bad[i].line, bad[i].col);
        char *m = load_fails(path, NULL, NULL, bad[i].code);
        CU_ASSERT_PTR_NOT_NULL(m);
        CU_ASSERT(m && g_str_has_prefix(m, want));
        if (m && !g_str_has_prefix(m, want))
            fprintf(stderr, "want prefix '%s', got '%s'\n", want, m);
        g_free(m);
        g_free(want);
        g_free(path);
    }
}

static void test_topo_bad_input_dir_has_15_or_more(void)
{
    GDir *d = g_dir_open("tests/bad_input/topo", 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    unsigned n = 0;
    for (const char *f; (f = g_dir_read_name(d));)
        n += g_str_has_suffix(f, ".json");
    g_dir_close(d);
    CU_ASSERT(n >= 15);
    CU_ASSERT_EQUAL(n, G_N_ELEMENTS(bad)); /* every file is in the table */
}

static void test_topo_set_unknown_or_bad_is_error(void)
{
    const char *const unknown[] = {"turbo=1", NULL};
    const char *const absent[] = {"nvlink.links=4", NULL}; /* a PCIe box has no NVLink */
    const char *const gen7[] = {"pcie.gen=7", NULL};
    const char *const neg[] = {"nic.gbps=-1", NULL};
    const char *const noeq[] = {"p2p", NULL};
    const char *const onoff[] = {"p2p=maybe", NULL};
    g_free(load_fails("dgx-h100", unknown, NULL, TOPO_ERROR_SET));
    g_free(load_fails("pcie-gen4-4gpu", absent, NULL, TOPO_ERROR_SET));
    g_free(load_fails("dgx-h100", gen7, NULL, TOPO_ERROR_SET));
    g_free(load_fails("dgx-h100", neg, NULL, TOPO_ERROR_SET));
    g_free(load_fails("dgx-h100", noeq, NULL, TOPO_ERROR_SET));
    g_free(load_fails("dgx-h100", onoff, NULL, TOPO_ERROR_SET));
    g_free(load_fails("dgx-h100", NULL, "no-such-fabric", TOPO_ERROR_VALUE));
}

/* The GPU's PCIe link rate: lanes x GT/s x 128/130 / 8. */
static double gpu_pcie_Bps(const topo *t)
{
    const fab_link_id *out;
    uint32_t n;
    fabric_node_links(t->fab, t->gpu_of_rank[0], &out, &n);
    for (uint32_t i = 0; i < n; i++)
        if (fabric_link(t->fab, out[i])->kind == LINK_PCIE)
            return fabric_link(t->fab, out[i])->bw_Bps;
    return 0;
}

static void test_topo_set_pcie_gen_changes_rates(void)
{
    const char *const gen5[] = {"pcie.gen=5", NULL};
    topo *a = load("pcie-gen4-4gpu", 0, 0, NULL), *b = load("pcie-gen4-4gpu", 0, 0, gen5);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    ASSERT_REL(gpu_pcie_Bps(a), 16 * 16e9 * 128 / 130 / 8, 1e-9);
    ASSERT_REL(gpu_pcie_Bps(b), 16 * 32e9 * 128 / 130 / 8, 1e-9);
    CU_ASSERT_STRING_EQUAL(g_hash_table_lookup(b->params, "pcie.gen"), "5");
    topo_free(a);
    topo_free(b);
}

static void test_topo_p2p_defaults_and_set(void)
{
    const char *const on[] = {"p2p=on", NULL};
    topo *a = load("pcie-gen3-2gpu", 0, 0, NULL), *b = load("pcie-gen3-2gpu", 0, 0, on);
    topo *c = load("dgx-h100", 0, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_FALSE(a->p2p); /* measured files 22/23: P2P not supported */
    CU_ASSERT_TRUE(b->p2p);
    CU_ASSERT_TRUE(c->p2p);
    topo_free(a);
    topo_free(b);
    topo_free(c);
}

/* The leaf a NIC's network link goes to. */
static const char *nic_leaf(const topo *t, fab_node_id nic)
{
    const fab_link_id *out;
    uint32_t n;
    fabric_node_links(t->fab, nic, &out, &n);
    for (uint32_t i = 0; i < n; i++)
        if (fabric_link(t->fab, out[i])->kind == LINK_NET)
            return fabric_node(t->fab, fabric_link_dst(t->fab, out[i]))->name;
    return "";
}

static void test_topo_nodes4_replicates_and_rails(void)
{
    topo *t = load("dgx-h100", 4, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const GArray *g = fabric_gpus(t->fab);
    CU_ASSERT_EQUAL(t->nranks, 32);
    CU_ASSERT_EQUAL(g->len, 32u);
    for (int r = 0; r < t->nranks && r < (int)g->len; r++) {
        const fab_node_desc *d = fabric_node(t->fab, g_array_index(g, fab_node_id, r));
        CU_ASSERT_EQUAL(d->server, r / 8); /* server-major */
        CU_ASSERT_EQUAL(d->local, r % 8);
        CU_ASSERT_EQUAL(t->gpu_of_rank[r], g_array_index(g, fab_node_id, r));
        char *want = g_strdup_printf("leaf0.%d", r % 8); /* rail k -> leaf k */
        CU_ASSERT_STRING_EQUAL(nic_leaf(t, t->nic_of_rank[r]), want);
        g_free(want);
        if (r % 8)
            CU_ASSERT_NOT_EQUAL(t->nic_of_rank[r], t->nic_of_rank[r - 1]);
    }
    topo_free(t);
}

/* The raw rates of a leaf's links down to NICs and up to spines, summed. */
static void leaf_rates(const topo *t, const char *leaf, double *down, double *up)
{
    *down = *up = 0;
    for (fab_node_id n = 0; n < fabric_node_count(t->fab); n++) {
        if (strcmp(fabric_node(t->fab, n)->name, leaf))
            continue;
        const fab_link_id *out;
        uint32_t k;
        fabric_node_links(t->fab, n, &out, &k);
        for (uint32_t i = 0; i < k; i++) {
            fab_node_kind other = fabric_node(t->fab, fabric_link_dst(t->fab, out[i]))->kind;
            if (other == FAB_NIC)
                *down += fabric_link(t->fab, out[i])->bw_Bps;
            else if (other == FAB_NET_SPINE)
                *up += fabric_link(t->fab, out[i])->bw_Bps;
        }
    }
}

static void test_topo_oversubscription_halves_uplinks(void)
{
    const char *const two[] = {"oversubscription=2", NULL};
    topo *t = load("dgx-h100", 64, 0, two); /* radix 64: 32 servers per group, 2 groups */
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    double down, up;
    leaf_rates(t, "leaf1.3", &down, &up);
    ASSERT_REL(down, 32 * 400e9 / 8, 1e-9);
    ASSERT_REL(up, down / 2, 1e-9);
    topo_free(t);
}

/* A NIC's link runs at the slower of the NIC and the switch port; uplinks at
 * the port rate: 400G NICs on HDR (200G ports) run at 200; 100G EDR NICs
 * (DGX-1) under HDR leaves keep 100 while the leaf's uplinks run at 200. */
static void test_topo_nic_links_at_port_rate(void)
{
    GError *e = NULL;
    topo *h = topo_load("dgx-h100", &(topo_opts){.nodes = 64, .fabric = "ib-hdr"}, &e);
    topo *v = load("dgx1-v100", 64, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    double down, up;
    leaf_rates(h, "leaf0.3", &down, &up); /* ib-hdr radix 40: 20 servers per leaf */
    ASSERT_REL(down, 20 * 200e9 / 8, 1e-9);
    ASSERT_REL(up, down, 1e-9);
    ASSERT_REL(h->nic_Bps, 200e9 / 8, 1e-12); /* what NCCL's tuner sees */
    ASSERT_REL(h->nic_raw_Bps, 400e9 / 8, 1e-12);
    leaf_rates(v, "leaf0.3", &down, &up);
    ASSERT_REL(down, 20 * 100e9 / 8, 1e-9);
    ASSERT_REL(up, 2 * down, 1e-9);
    ASSERT_REL(v->nic_Bps, 100e9 / 8, 1e-12);
    topo_free(h);
    topo_free(v);
}

static void test_topo_gpus2_uses_first_two(void)
{
    topo *t = load("dgx-h100", 0, 2, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->nranks, 2);
    CU_ASSERT_EQUAL(fabric_gpus(t->fab)->len, 2u);
    CU_ASSERT_STRING_EQUAL(fabric_node(t->fab, t->gpu_of_rank[0])->name, "n0.gpu0");
    CU_ASSERT_STRING_EQUAL(fabric_node(t->fab, t->gpu_of_rank[1])->name, "n0.gpu1");
    topo_free(t);
}

static int count_kind(const topo *t, fab_node_kind k)
{
    int n = 0;
    for (fab_node_id i = 0; i < fabric_node_count(t->fab); i++)
        n += fabric_node(t->fab, i)->kind == k;
    return n;
}

/* Why the ring's reduction kernel is not charged to HBM (docs/collectives.md
 * "Reduction on the GPU"): per ring step a GPU's memory takes the incoming
 * chunk S, reads it and its own S, and writes S (the result, or the next
 * peer's copy): at most 4 S of HBM traffic while each link direction moves
 * S. At the measured reduction efficiency (c = a + b on an H200: 4.124 TB/s
 * of 4.8, calibrate/data/h200-2026-11-29) every shipped GPU's memory
 * outruns 4 x its links' total per-direction rate, so the links bind. */
static void test_topo_hbm_outruns_reduction_traffic(void)
{
    const double red_eff = 4.1236e12 / 4.8e12;
    for (size_t i = 0; i < G_N_ELEMENTS(shipped); i++) {
        topo *t = load(shipped[i].name, 0, 0, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        fab_node_id g0 = g_array_index(fabric_gpus(t->fab), fab_node_id, 0);
        const fab_link_id *out;
        uint32_t n;
        fabric_node_links(t->fab, g0, &out, &n);
        double links = 0;
        for (uint32_t k = 0; k < n; k++)
            links += fabric_link(t->fab, out[k])->bw_Bps;
        if (!(red_eff * t->gpu_hbm_Bps >= 4 * links)) {
            fprintf(stderr, "\n%s: HBM %.0f GB/s x %.3f < 4 x %.0f GB/s of links\n", shipped[i].name,
                    t->gpu_hbm_Bps / 1e9, red_eff, links / 1e9);
            CU_FAIL("reduction traffic would bind");
        }
        topo_free(t);
    }
}

static void test_topo_nvl72_shares_one_nvswitch_per_domain(void)
{
    topo *t = load("gb200-nvl72", 18, 0, NULL), *u = load("gb200-nvl72", 36, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(u);
    CU_ASSERT_EQUAL(t->nranks, 72);
    CU_ASSERT_EQUAL(count_kind(t, FAB_NVSWITCH), 1);
    CU_ASSERT_TRUE(t->nvls);
    CU_ASSERT_EQUAL(t->nvl_domain_nodes, 18);
    CU_ASSERT_EQUAL(count_kind(u, FAB_NVSWITCH), 2);
    CU_ASSERT_EQUAL(fabric_node(u->fab, u->gpu_of_rank[71])->domain, 0);
    CU_ASSERT_EQUAL(fabric_node(u->fab, u->gpu_of_rank[72])->domain, 1);
    topo_free(t);
    topo_free(u);
}

/* DGX-1V: 6 NVLinks per GPU (NVIDIA DGX-1 whitepaper). */
static void test_topo_dgx1_six_nvlinks_per_gpu(void)
{
    topo *t = load("dgx1-v100", 0, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int r = 0; r < 8; r++) {
        const fab_link_id *out;
        uint32_t n;
        int links = 0;
        fabric_node_links(t->fab, t->gpu_of_rank[r], &out, &n);
        for (uint32_t i = 0; i < n; i++)
            if (fabric_link(t->fab, out[i])->kind == LINK_NVLINK)
                links += fabric_link(t->fab, out[i])->count;
        CU_ASSERT_EQUAL(links, 6);
    }
    topo_free(t);
}

static void test_topo_nvlink_generations(void)
{
    topo *h = load("dgx-h100", 0, 0, NULL), *b = load("hgx-b200", 0, 0, NULL);
    topo *a = load("dgx-a100", 0, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(h->nvlink_links, 18);
    ASSERT_REL(h->nvlink_link_Bps, 25e9, 1e-12);
    ASSERT_REL(h->nvlink_link_Bps * h->nvlink_eff, 20.6e9, 1e-9); /* NCCL SM90 */
    ASSERT_REL(b->nvlink_link_Bps * b->nvlink_eff, 40.1e9, 1e-9); /* NCCL SM100 */
    ASSERT_REL(a->nvlink_link_Bps * a->nvlink_eff, 20.0e9, 1e-9); /* NCCL SM80 */
    CU_ASSERT_EQUAL(a->nvlink_links, 12);
    CU_ASSERT_FALSE(a->nvls);
    CU_ASSERT_TRUE(h->nvls);
    topo_free(h);
    topo_free(b);
    topo_free(a);
}

static void test_topo_nics_per_node_shares_nics(void)
{
    const char *const four[] = {"nics_per_node=4", NULL};
    topo *t = load("dgx-h100", 0, 0, four);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(count_kind(t, FAB_NIC), 4);
    CU_ASSERT_EQUAL(t->nic_of_rank[0], t->nic_of_rank[1]);
    CU_ASSERT_NOT_EQUAL(t->nic_of_rank[1], t->nic_of_rank[2]);
    topo_free(t);
}

static topo *import_and_load_with(const char *file, const topo_import_opts *o)
{
    GError *e = NULL;
    char *json = topo_import(file, o, NULL, &e);
    CU_ASSERT_PTR_NOT_NULL(json);
    if (!json) {
        fprintf(stderr, "%s\n", e->message);
        g_error_free(e);
        return NULL;
    }
    char *tmp = NULL;
    int fd = g_file_open_tmp("topo-import-XXXXXX.json", &tmp, NULL);
    CU_ASSERT(fd >= 0);
    close(fd);
    g_file_set_contents(tmp, json, -1, NULL);
    topo *t = load(tmp, 0, 0, NULL);
    g_unlink(tmp);
    g_free(tmp);
    g_free(json);
    return t;
}

static topo *import_and_load(const char *file) { return import_and_load_with(file, NULL); }

/* The link between two named template nodes ("gpu0", "sw1"): count
 * of the built link (lanes, NVLinks), 0 when none. */
static int link_count(const topo *t, const char *a, const char *b)
{
    for (fab_link_id l = 0; l < fabric_link_count(t->fab); l++) {
        const fab_link_desc *k = fabric_link(t->fab, l);
        if (k->kind == LINK_SERVER)
            continue;
        const char *x = fabric_node(t->fab, fabric_link_src(t->fab, l))->name;
        const char *y = fabric_node(t->fab, fabric_link_dst(t->fab, l))->name;
        if (strlen(x) > strlen(a) && strlen(y) > strlen(b) && g_str_has_suffix(x, a) &&
            x[strlen(x) - strlen(a) - 1] == '.' && g_str_has_suffix(y, b) && y[strlen(y) - strlen(b) - 1] == '.')
            return k->count;
    }
    return 0;
}

/* nvidia-smi topo -m: the matrix's NVLink counts, sockets, PCIe switches
 * and rail NICs become the model's (tests/data/smi-topo, hand-made in the
 * layout of real outputs). */
static void test_topo_import_smi_structure(void)
{
    topo *h = import_and_load("tests/data/smi-topo/dgx-h100-like.txt");
    topo *v = import_and_load("tests/data/smi-topo/dgx1-v100-like.txt");
    topo_import_opts rtx = {.gpu = "RTX 4090"};
    topo *p = import_and_load_with("tests/data/smi-topo/pcie-2gpu-spaces.txt", &rtx);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    /* NV18 between all 8 GPUs: more than one GPU has (18), so a switch */
    CU_ASSERT_EQUAL(h->nranks, 8);
    CU_ASSERT_TRUE(h->nvswitch);
    CU_ASSERT_EQUAL(h->nvlink_links, 18);
    CU_ASSERT_EQUAL(count_kind(h, FAB_CPU), 2);          /* NUMA Affinity 0 and 1 */
    CU_ASSERT_EQUAL(count_kind(h, FAB_PCIE_SWITCH), 8);  /* each GPU PIX to its own NIC */
    CU_ASSERT_EQUAL(h->nics_per_node, 8);                /* NIC8/9 NODE to every GPU: left out */
    ASSERT_REL(h->nic_Bps, 400e9 / 8, 1e-12);
    CU_ASSERT_EQUAL(link_count(h, "gpu0", "nvsw"), 18);
    /* DGX-1: the hybrid cube mesh's bundles, 2 sockets, a switch per 2 GPUs + NIC */
    CU_ASSERT_FALSE(v->nvswitch);
    CU_ASSERT_EQUAL(link_count(v, "gpu0", "gpu3"), 2);
    CU_ASSERT_EQUAL(link_count(v, "gpu0", "gpu1"), 1);
    CU_ASSERT_EQUAL(link_count(v, "gpu0", "gpu4"), 0);
    CU_ASSERT_EQUAL(count_kind(v, FAB_CPU), 2);
    CU_ASSERT_EQUAL(count_kind(v, FAB_PCIE_SWITCH), 4);
    CU_ASSERT_EQUAL(v->nics_per_node, 4);
    CU_ASSERT_EQUAL(link_count(v, "gpu0", "sw0"), 16);
    CU_ASSERT_EQUAL(link_count(v, "gpu2", "sw1"), 16);
    /* PHB: both GPUs on the socket's root ports, no switch, no NIC */
    CU_ASSERT_EQUAL(p->nranks, 2);
    CU_ASSERT_EQUAL(count_kind(p, FAB_PCIE_SWITCH), 0);
    CU_ASSERT_EQUAL(count_kind(p, FAB_NIC), 0);
    CU_ASSERT_EQUAL(link_count(p, "gpu1", "cpu0"), 16);
    topo_free(h);
    topo_free(v);
    topo_free(p);
}

/* Every GPU kind name, guess and refusal. */
static void test_topo_import_gpu_kind(void)
{
    GError *e = NULL;
    char *note = NULL;
    char *j = topo_import("tests/data/smi-topo/pcie-2gpu-spaces.txt", NULL, &note, &e);
    CU_ASSERT_PTR_NULL(j); /* PHB only: nothing tells the kind */
    CU_ASSERT(e && strstr(e->message, "pcie-2gpu-spaces.txt:1:1: ") && strstr(e->message, "--gpu"));
    g_clear_error(&e);
    topo_import_opts h100 = {.gpu = "H100"};
    j = topo_import("tests/data/nccl-topo/dgx-a100-like.xml", &h100, &note, &e);
    CU_ASSERT_PTR_NULL(j); /* the dump's sm 80 is not an H100 */
    CU_ASSERT(e && strstr(e->message, "sm_80"));
    g_clear_error(&e);
    topo_import_opts a100 = {.gpu = "a100"};
    j = topo_import("tests/data/nccl-topo/dgx-a100-like.xml", &a100, &note, &e);
    CU_ASSERT(j && strstr(j, "\"A100-SXM4\""));
    CU_ASSERT_PTR_NULL(note); /* named: nothing guessed */
    g_free(j);
    j = topo_import("tests/data/smi-topo/dgx-h100-like.txt", NULL, &note, &e);
    CU_ASSERT(j && strstr(j, "\"H100-SXM\""));
    CU_ASSERT(note && strstr(note, "guessed from NV18"));
    g_free(note);
    g_free(j);
}

static void test_topo_import_nccl_xml_loads(void)
{
    topo *d = import_and_load("tests/data/nccl-topo/dgx-a100-like.xml");
    topo *p = import_and_load("tests/data/nccl-topo/pcie-only.xml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(d->nranks, 8);
    CU_ASSERT_TRUE(d->nvswitch);
    CU_ASSERT_EQUAL(d->nvlink_links, 12); /* 6 <nvlink count="2"> per GPU */
    CU_ASSERT_EQUAL(d->nics_per_node, 4);
    ASSERT_REL(d->nic_Bps, 200e9 / 8, 1e-12); /* speed="200000" Mb/s */
    CU_ASSERT_EQUAL(p->nranks, 2);
    CU_ASSERT_EQUAL(p->nvlink_links, 0);
    ASSERT_REL(gpu_pcie_Bps(p), 16 * 8e9 * 128 / 130 / 8, 1e-9); /* 8.0 GT/s x16 */
    topo_free(d);
    topo_free(p);
}

static void test_topo_import_bad_xml_has_position(void)
{
    char *tmp = NULL;
    int fd = g_file_open_tmp("topo-bad-XXXXXX.xml", &tmp, NULL);
    close(fd);
    g_file_set_contents(tmp, "<system version=\"1\">\n  <cpu>\n  </pci>\n</system>\n", -1, NULL);
    GError *e = NULL;
    char *json = topo_import_nccl_xml(tmp, NULL, NULL, &e);
    CU_ASSERT_PTR_NULL(json);
    CU_ASSERT(g_error_matches(e, TOPO_ERROR, TOPO_ERROR_PARSE));
    char *want = g_strdup_printf("%s:3:", tmp);
    CU_ASSERT(e && g_str_has_prefix(e->message, want));
    g_free(want);
    g_clear_error(&e);
    g_free(json);
    g_unlink(tmp);
    g_free(tmp);
}

static void test_topo_dot_has_every_link(void)
{
    topo *t = load("dgx1-v100", 0, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    char *d = topo_dot(t);
    CU_ASSERT(g_str_has_prefix(d, "graph "));
    unsigned edges = 0, links = 0;
    for (const char *p = d; (p = strstr(p, " -- ")); p++)
        edges++;
    for (fab_link_id l = 0; l < fabric_link_count(t->fab); l++)
        links += fabric_link(t->fab, l)->kind != LINK_SERVER;
    CU_ASSERT_EQUAL(edges * 2, links);
    /* 4 + 16 + 4 + 8 + 2 + 1 pairs: switch uplinks, NVLink pairs, NIC, GPU PCIe, mem, QPI */
    CU_ASSERT_EQUAL(edges, 4u + 16 + 4 + 8 + 2 + 1);
    g_free(d);
    topo_free(t);
}

static void test_topo_endpoint_limits_cap_routes(void)
{
    GError *err = NULL;
    topo *t = topo_load("tests/data/topo/endpoint-limits.json", &(topo_opts){0}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    fab_node_id g0 = t->gpu_of_rank[0], g1 = t->gpu_of_rank[1];
    const fab_route *r = fabric_route(t->fab, g0, g1, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    /* gpu0 injects at most 10 GB/s, ejects at most 8; PCIe Gen4 x16 is faster */
    CU_ASSERT_DOUBLE_EQUAL(fabric_route_bw(t->fab, r), 10e9, 1);
    r = fabric_route(t->fab, g1, g0, 0, NULL);
    CU_ASSERT_DOUBLE_EQUAL(fabric_route_bw(t->fab, r), 8e9, 1);
    topo_free(t);
}

static void test_topo_calibration_sets_efficiencies_and_launch(void)
{
    GError *err = NULL;
    topo *t = topo_load("tests/data/topo/calibrated-h200.json", &(topo_opts){0}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* NVLink: measured 390 GB/s over 18 x 25 GB/s; PCIe: 52 GB/s over Gen5 x16 (16 x 32 GT/s x 128/130 / 8) */
    ASSERT_REL(t->nvlink_eff, 390.0 / 450.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(t->launch_us, 3.1, 1e-9);
    const fab_route *r = fabric_route(t->fab, t->gpu_of_rank[0], t->gpu_of_rank[1], 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    ASSERT_REL(fabric_route_bw(t->fab, r), 390e9, 1e-9);
    double pcie_raw = 16 * 32e9 * 128.0 / 130.0 / 8;
    bool found = false;
    for (fab_link_id l = 0; l < fabric_link_count(t->fab); l++)
        if (fabric_link(t->fab, l)->kind == LINK_PCIE && fabric_link_src(t->fab, l) == t->gpu_of_rank[0]) {
            ASSERT_REL(fabric_link(t->fab, l)->bw_Bps * fabric_link(t->fab, l)->eff, 52e9, 1e-6);
            ASSERT_REL(fabric_link(t->fab, l)->bw_Bps, pcie_raw, 1e-6);
            found = true;
        }
    CU_ASSERT(found);
    CU_ASSERT_PTR_NOT_NULL(t->calibration);
    topo_free(t);
    /* without calibration: the datasheet efficiency and no launch figure */
    t = topo_load("hgx-h200", &(topo_opts){0}, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(fabs(t->nvlink_eff - 390.0 / 450.0) > 0.01);
    CU_ASSERT_EQUAL(t->launch_us, 0);
    topo_free(t);
}

int main(void)
{
    static const test_case cases[] = {
        {"hbm_outruns_reduction_traffic", test_topo_hbm_outruns_reduction_traffic},
        {"calibration_sets_efficiencies_and_launch", test_topo_calibration_sets_efficiencies_and_launch},
        {"endpoint_limits_cap_routes", test_topo_endpoint_limits_cap_routes},
        {"shipped_all_load_with_gpu_counts", test_topo_shipped_all_load_with_gpu_counts},
        {"bad_inputs_report_code_and_position", test_topo_bad_inputs_report_code_and_position},
        {"bad_input_dir_has_15_or_more", test_topo_bad_input_dir_has_15_or_more},
        {"set_unknown_or_bad_is_error", test_topo_set_unknown_or_bad_is_error},
        {"set_pcie_gen_changes_rates", test_topo_set_pcie_gen_changes_rates},
        {"p2p_defaults_and_set", test_topo_p2p_defaults_and_set},
        {"nodes4_replicates_and_rails", test_topo_nodes4_replicates_and_rails},
        {"oversubscription_halves_uplinks", test_topo_oversubscription_halves_uplinks},
        {"nic_links_at_port_rate", test_topo_nic_links_at_port_rate},
        {"gpus2_uses_first_two", test_topo_gpus2_uses_first_two},
        {"nvl72_shares_one_nvswitch_per_domain", test_topo_nvl72_shares_one_nvswitch_per_domain},
        {"dgx1_six_nvlinks_per_gpu", test_topo_dgx1_six_nvlinks_per_gpu},
        {"nvlink_generations", test_topo_nvlink_generations},
        {"nics_per_node_shares_nics", test_topo_nics_per_node_shares_nics},
        {"import_nccl_xml_loads", test_topo_import_nccl_xml_loads},
        {"import_smi_structure", test_topo_import_smi_structure},
        {"import_gpu_kind", test_topo_import_gpu_kind},
        {"import_bad_xml_has_position", test_topo_import_bad_xml_has_position},
        {"dot_has_every_link", test_topo_dot_has_every_link},
        {NULL, NULL},
    };
    return test_main("topo", cases);
}

/* topologies/topo_smi.c - `nvidia-smi topo -m` output -> topology JSON.
 *
 * The matrix names each pair of devices' connection: X (self), NV<n> (n
 * bonded NVLinks), PIX (at most one PCIe bridge), PXB (several bridges, no
 * host bridge), PHB (through a host bridge), NODE (across host bridges of
 * one NUMA node), SYS (across the SMP interconnect; SOC in old drivers).
 * From it: sockets are the groups of devices joined by PIX/PXB/PHB/NODE or
 * by an equal NUMA Affinity; a PCIe switch is a group joined by PIX/PXB; GPU
 * pairs all NV<k> with k (GPUs - 1) above what one GPU has are an NVSwitch,
 * other NV pairs direct bundles; NICs near a GPU (PIX/PXB) are the rail NICs.
 * What the matrix does not say (GPU kind, PCIe generation, NIC rate, CPU
 * vendor) comes from options or is assumed by GPU generation, and the note
 * says which. Columns are split on blanks, so tabs (nvidia-smi's) and spaces
 * (a copy from a web page) read the same. docs/topology.md.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topologies/topo_internal.h"
#include "traces/tracefile.h"

#define SMI_MAX_GPUS 64
#define SMI_MAX_DEVS 256

enum { R_NONE, R_X, R_NV, R_PIX, R_PXB, R_PHB, R_NODE, R_SYS };

typedef struct {
    int k, nv, line, col; /* R_*, NVLink count, where it was read */
} rel;

typedef struct {
    const char *s;
    int len, col; /* col: 1-based byte column */
} tok;

typedef struct {
    const char *file;
    int ndev, ngpu, hdr_line;
    char **name;     /* column names */
    int *name_col;   /* their columns in the header */
    rel *m;          /* ndev x ndev as read, row-major */
    int *numa;       /* NUMA Affinity of a row, -1 unknown */
    int *row_line;   /* line of a device's row, 0 none */
    int naff, numa_at;  /* value columns after the devices; NUMA Affinity's index or -1 */
    GHashTable *legend; /* "NIC0" -> "mlx5_0" (NIC Legend) */
} smi;

static bool fail(const smi *s, GError **err, int line, int col, const char *fmt, ...) G_GNUC_PRINTF(5, 6);
static bool fail(const smi *s, GError **err, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, TOPO_ERROR, TOPO_ERROR_PARSE, "%s:%d:%d: %s", s->file, line, col, msg);
    g_free(msg);
    return false;
}

/* Blank-separated words of one line (pointers into it). */
static GArray *words(const char *line)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(tok));
    for (const char *p = line; *p;) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p)
            break;
        tok t = {p, 0, (int)(p - line) + 1};
        while (p[t.len] && p[t.len] != ' ' && p[t.len] != '\t' && p[t.len] != '\r')
            t.len++;
        g_array_append_val(a, t);
        p += t.len;
    }
    return a;
}

static bool is(const tok *t, const char *w)
{
    return t->len == (int)strlen(w) && !memcmp(t->s, w, (size_t)t->len);
}

static int idx(const GArray *a, guint i, const char *w)
{
    return i < a->len && is(&g_array_index(a, tok, i), w);
}

static char *tokdup(const tok *t) { return g_strndup(t->s, (gsize)t->len); }

/* "GPU<k>" with k == want. */
static bool gpu_name(const tok *t, int want)
{
    char buf[24];
    snprintf(buf, sizeof buf, "GPU%d", want);
    return is(t, buf);
}

/* The header: device columns, then CPU Affinity / NUMA Affinity / GPU NUMA
 * ID (or a bare NUMA, as some pages print it). */
static bool header(smi *s, const char *line, int ln, GError **err)
{
    GArray *w = words(line);
    guint i = 0;
    bool ok = true;
    GPtrArray *names = g_ptr_array_new();
    GArray *cols = g_array_new(FALSE, FALSE, sizeof(int));
    for (; i < w->len && ok; i++) {
        tok *t = &g_array_index(w, tok, i);
        if (is(t, "CPU") || is(t, "NUMA") || (is(t, "GPU") && idx(w, i + 1, "NUMA")))
            break;
        bool gpu = t->len > 3 && !memcmp(t->s, "GPU", 3);
        if (gpu && (!gpu_name(t, (int)i) || (int)i != s->ngpu))
            ok = fail(s, err, ln, t->col, "column '%.*s': GPU columns must come first, GPU0, GPU1, ... in order",
                      t->len, t->s);
        else if (names->len >= SMI_MAX_DEVS)
            ok = fail(s, err, ln, t->col, "more than %d device columns", SMI_MAX_DEVS);
        else if (gpu && s->ngpu >= SMI_MAX_GPUS)
            ok = fail(s, err, ln, t->col, "more than %d GPUs in one server", SMI_MAX_GPUS);
        for (guint k = 0; ok && k < names->len; k++)
            if (!strncmp(g_ptr_array_index(names, k), t->s, (size_t)t->len) &&
                strlen(g_ptr_array_index(names, k)) == (size_t)t->len)
                ok = fail(s, err, ln, t->col, "column '%.*s' twice", t->len, t->s);
        if (ok) {
            s->ngpu += gpu;
            g_ptr_array_add(names, tokdup(t));
            g_array_append_val(cols, t->col);
        }
    }
    s->numa_at = -1;
    while (ok && i < w->len) {
        tok *t = &g_array_index(w, tok, i);
        if (is(t, "CPU") && idx(w, i + 1, "Affinity"))
            i += 2;
        else if (is(t, "NUMA") && idx(w, i + 1, "Affinity"))
            s->numa_at = s->naff, i += 2;
        else if (is(t, "GPU") && idx(w, i + 1, "NUMA") && idx(w, i + 2, "ID"))
            i += 3;
        else if (is(t, "NUMA"))
            s->numa_at = s->naff, i += 1;
        else {
            ok = fail(s, err, ln, t->col,
                      "column '%.*s' after the devices: expected CPU Affinity, NUMA Affinity or GPU NUMA ID",
                      t->len, t->s);
            break;
        }
        s->naff++;
    }
    s->ndev = (int)names->len;
    g_ptr_array_add(names, NULL);
    s->name = (char **)g_ptr_array_free(names, FALSE);
    s->name_col = (int *)(void *)g_array_free(cols, FALSE);
    g_array_unref(w);
    return ok;
}

static rel *at(const smi *s, int i, int j) { return &s->m[(size_t)i * (size_t)s->ndev + (size_t)j]; }

/* A cell as nvidia-smi prints it. */
static const char *rel_str(const rel *r, char buf[8])
{
    static const char *const w[] = {"?", "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS"};
    if (r->k == R_NV)
        snprintf(buf, 8, "NV%d", r->nv);
    return r->k == R_NV ? buf : w[r->k];
}

/* One cell: X, NV<n>, PIX, PXB, PHB, NODE, SYS (SOC). */
static bool cell(smi *s, const tok *t, int ln, int i, int j, GError **err)
{
    static const struct {
        const char *w;
        int k;
    } kw[] = {{"X", R_X}, {"PIX", R_PIX}, {"PXB", R_PXB}, {"PHB", R_PHB},
              {"NODE", R_NODE}, {"SYS", R_SYS}, {"SOC", R_SYS}};
    rel r = {R_NONE, 0, ln, t->col};
    for (size_t k = 0; k < G_N_ELEMENTS(kw); k++)
        if (is(t, kw[k].w))
            r.k = kw[k].k;
    if (r.k == R_NONE && t->len >= 3 && t->len <= 4 && !memcmp(t->s, "NV", 2) && g_ascii_isdigit(t->s[2]) &&
        (t->len == 3 || g_ascii_isdigit(t->s[3]))) {
        r.k = R_NV;
        r.nv = atoi(t->s + 2);
    }
    if (r.k == R_NONE || (r.k == R_NV && (r.nv < 1 || r.nv > TOPO_MAX_LINK_NVLINKS)))
        return fail(s, err, ln, t->col, "'%.*s': expected X, NV<1.." G_STRINGIFY(TOPO_MAX_LINK_NVLINKS)
                                        ">, PIX, PXB, PHB, NODE or SYS", t->len, t->s);
    if (i == j && r.k != R_X)
        return fail(s, err, ln, t->col, "%s with itself is '%.*s', expected X", s->name[i], t->len, t->s);
    if (i != j && r.k == R_X)
        return fail(s, err, ln, t->col, "%s/%s: X (self) off the diagonal", s->name[i], s->name[j]);
    if (r.k == R_NV && (i >= s->ngpu || j >= s->ngpu))
        return fail(s, err, ln, t->col, "%s/%s: NVLink between a GPU and a NIC", s->name[i], s->name[j]);
    const rel *o = at(s, j, i);
    if (o->k != R_NONE && (o->k != r.k || o->nv != r.nv))
    {
        char b[8];
        return fail(s, err, ln, t->col, "%s/%s is '%.*s' here but '%s' on line %d", s->name[i], s->name[j],
                    t->len, t->s, rel_str(o, b), o->line);
    }
    *at(s, i, j) = r;
    return true;
}

static int find_dev(const smi *s, const tok *t)
{
    for (int i = 0; i < s->ndev; i++)
        if (is(t, s->name[i]))
            return i;
    return -1;
}

/* A device's row; *end set when the line is past the table. */
static bool row(smi *s, const char *line, int ln, bool *end, GError **err)
{
    GArray *w = words(line);
    bool ok = true;
    if (!w->len)
        goto out;
    tok *t0 = &g_array_index(w, tok, 0);
    int i = find_dev(s, t0);
    if (i < 0) {
        bool gpus = true;
        for (int g = 0; g < s->ngpu; g++)
            gpus = gpus && s->row_line[g];
        if (gpus)
            *end = true;
        else
            ok = fail(s, err, ln, t0->col, "'%.*s': expected the row of a header column (GPU0 .. %s)",
                      t0->len, t0->s, s->name[s->ndev - 1]);
        goto out;
    }
    if (s->row_line[i]) {
        ok = fail(s, err, ln, t0->col, "a second row for %s (the first is on line %d)", s->name[i], s->row_line[i]);
        goto out;
    }
    if ((int)w->len - 1 < s->ndev) {
        ok = fail(s, err, ln, (int)strlen(line) + 1, "%s has %u of the %d device columns", s->name[i], w->len - 1,
                  s->ndev);
        goto out;
    }
    for (int j = 0; j < s->ndev && ok; j++)
        ok = cell(s, &g_array_index(w, tok, (guint)j + 1), ln, i, j, err);
    int extra = (int)w->len - 1 - s->ndev;
    if (ok && extra > s->naff) {
        tok *t = &g_array_index(w, tok, (guint)(s->ndev + 1 + s->naff));
        ok = fail(s, err, ln, t->col, "'%.*s': more values than the header has columns", t->len, t->s);
    }
    if (ok && s->numa_at >= 0 && extra == s->naff) {
        tok *t = &g_array_index(w, tok, (guint)(s->ndev + 1 + s->numa_at));
        bool digits = t->len > 0 && t->len < 6;
        for (int k = 0; k < t->len; k++)
            digits = digits && g_ascii_isdigit(t->s[k]);
        s->numa[i] = digits ? atoi(t->s) : -1;
    }
    s->row_line[i] = ln;
out:
    g_array_unref(w);
    return ok;
}

/* "  NIC0: mlx5_0" under "NIC Legend:". */
static void legend(smi *s, const char *line)
{
    GArray *w = words(line);
    if (w->len == 2) {
        tok *a = &g_array_index(w, tok, 0), *b = &g_array_index(w, tok, 1);
        if (a->len > 1 && a->s[a->len - 1] == ':')
            g_hash_table_replace(s->legend, g_strndup(a->s, (gsize)a->len - 1), tokdup(b));
    }
    g_array_unref(w);
}

static bool parse(smi *s, char **lines, GError **err)
{
    int n = (int)g_strv_length(lines), l = 0;
    for (; l < n; l++) {
        GArray *w = words(lines[l]);
        bool h = w->len && is(&g_array_index(w, tok, 0), "GPU0");
        g_array_unref(w);
        if (h)
            break;
    }
    if (l == n)
        return fail(s, err, 1, 1, "no line starts with GPU0: not `nvidia-smi topo -m` output "
                                  "(nor an NCCL topology dump, which starts with '<')");
    s->hdr_line = l + 1;
    if (!header(s, lines[l], l + 1, err))
        return false;
    size_t nd = (size_t)s->ndev;
    s->m = g_new0(rel, nd * nd);
    s->numa = g_new(int, nd);
    s->row_line = g_new0(int, nd);
    for (size_t i = 0; i < nd; i++)
        s->numa[i] = -1;
    bool end = false, in_legend = false;
    for (l++; l < n; l++) {
        const char *p = lines[l];
        while (*p == ' ' || *p == '\t')
            p++;
        if (g_str_has_prefix(p, "Legend:") || g_str_has_prefix(p, "NIC Legend:")) {
            end = true;
            in_legend = g_str_has_prefix(p, "NIC Legend:");
            continue;
        }
        if (in_legend)
            legend(s, p);
        else if (!end && !row(s, lines[l], l + 1, &end, err))
            return false;
    }
    for (int g = 0; g < s->ngpu; g++)
        if (!s->row_line[g])
            return fail(s, err, s->hdr_line, s->name_col[g], "no row for %s", s->name[g]);
    return true;
}

/* ---- from the matrix to the model ------------------------------------ */

static const rel *rel_of(const smi *s, int i, int j)
{
    const rel *r = at(s, i, j);
    return r->k != R_NONE ? r : at(s, j, i);
}

static int find_root(int *p, int i)
{
    while (p[i] != i)
        i = p[i] = p[p[i]];
    return i;
}

static void unite(int *p, int a, int b)
{
    a = find_root(p, a);
    b = find_root(p, b);
    if (a != b)
        p[MAX(a, b)] = MIN(a, b);
}

/* Groups of devices joined by a relation in [lo, hi] (and, for sockets,
 * equal NUMA Affinity); p[i] = the group's lowest device. */
static int *groups(const smi *s, int lo, int hi, bool numa)
{
    int *p = g_new(int, s->ndev);
    for (int i = 0; i < s->ndev; i++)
        p[i] = i;
    for (int i = 0; i < s->ndev; i++)
        for (int j = i + 1; j < s->ndev; j++) {
            int k = rel_of(s, i, j)->k;
            if ((k >= lo && k <= hi) || (numa && s->numa[i] >= 0 && s->numa[i] == s->numa[j]))
                unite(p, i, j);
        }
    if (numa) { /* a GPU nothing places (NVLink to every GPU, no NIC, no NUMA) joins GPU0's */
        for (int g = 1; g < s->ngpu; g++) {
            bool known = s->numa[g] >= 0;
            for (int j = 0; j < s->ndev && !known; j++)
                known = j != g && rel_of(s, g, j)->k >= R_PIX;
            if (!known)
                unite(p, 0, g);
        }
    }
    for (int i = 0; i < s->ndev; i++)
        p[i] = find_root(p, i);
    return p;
}

/* The GPU kind the NVLink pattern points to, or NULL. */
static const char *guess_gpu(int allnv_k, int n, int maxtot, char **why)
{
    const char *g = NULL;
    if (allnv_k > 0 && n >= 3)
        g = allnv_k == 18 ? "H100-SXM" : allnv_k == 12 || allnv_k == 8 ? "A100-SXM4" : allnv_k == 6 ? "V100-SXM2" : NULL;
    else
        g = maxtot == 6 ? "V100-SXM2" : maxtot == 12 ? "A100-SXM4" : NULL;
    if (g)
        *why = g_strdup_printf(allnv_k > 0 && n >= 3
                                   ? "GPU kind guessed from NV%d between every pair (%s; H200, B200 and GB200 show NV18 too); "
                                     "`topo import --gpu NAME` names it"
                                   : "GPU kind guessed from %d NVLinks per GPU (%s); `topo import --gpu NAME` names it",
                               allnv_k > 0 && n >= 3 ? allnv_k : maxtot,
                               allnv_k == 18 ? "Hopper's 18" : allnv_k == 12 || maxtot == 12 ? "A100's 12"
                               : allnv_k == 8 ? "A800's 8 (an A100 kind)" : "V100's 6");
    return g;
}

/* NVLinks one GPU has, by compute capability (V100 6, A100 12, GA10x/AD10x
 * 4 over a bridge, Hopper and Blackwell 18; the architecture whitepapers). */
static int max_links(int sm)
{
    return sm >= 90 ? 18 : sm == 80 ? 12 : sm >= 80 ? 4 : sm >= 70 ? 6 : 4;
}

static void nic_name(const smi *s, GString *o, int i)
{
    const char *l = g_hash_table_lookup(s->legend, s->name[i]);
    g_string_append_printf(o, l ? "%s (%s)" : "%s", s->name[i], l);
}

static cJSON *build(smi *s, const topo_import_opts *o, GString *note, GError **err)
{
    int n = s->ngpu;
    int allk = n >= 2 ? -1 : 0, maxtot = 0, minpeers = n > 1 ? n : 0;
    for (int i = 0; i < n; i++) {
        int tot = 0, peers = 0;
        for (int j = 0; j < n; j++) {
            const rel *r = rel_of(s, i, j);
            if (i == j)
                continue;
            tot += r->k == R_NV ? r->nv : 0;
            peers += r->k == R_NV;
            if (j > i)
                allk = r->k != R_NV ? 0 : allk < 0 ? r->nv : allk == r->nv ? allk : 0;
        }
        maxtot = MAX(maxtot, tot);
        minpeers = MIN(minpeers, peers);
    }
    allk = MAX(allk, 0);
    /* NV<k> between every pair of 3 or more GPUs with k over what a GPU has
     * is an NVSwitch of k links per GPU (nvlink.links, at most 18) */
    if (n >= 3 && allk > TOPO_MAX_GPU_NVLINKS) {
        const rel *r = rel_of(s, 0, 1);
        fail(s, err, r->line, r->col, "NV%d between every pair of GPUs is an NVSwitch with %d NVLinks per GPU: at most "
             G_STRINGIFY(TOPO_MAX_GPU_NVLINKS) " (nvlink.links)", allk, allk);
        return NULL;
    }
    char *why = NULL;
    /* a mesh's links tell the GPU (V100 6, A100 12 over 3+ peers); a bridged
     * pair's do not (an A100 PCIe and an H100 NVL pair both show NV12) */
    const char *guess = o->gpu ? NULL : guess_gpu(allk, n, minpeers >= 3 ? maxtot : 0, &why);
    if (!o->gpu && !guess) {
        fail(s, err, s->hdr_line, 1, "nvidia-smi topo -m does not name the GPU kind and the NVLinks do not tell it: "
                                     "`topo import --gpu NAME` (H100, H200, A100, B200, L40S, RTX 4090, ...)");
        return NULL;
    }
    cJSON *gpu = imp_gpu(s->file, o->gpu, 0, guess, why, err);
    if (!gpu) {
        g_free(why);
        return NULL;
    }
    if (why)
        g_string_append_printf(note, "%s: %s: %s\n", s->file, cJSON_GetObjectItem(gpu, "model")->valuestring, why);
    g_free(why);
    int sm = cJSON_GetObjectItem(gpu, "sm")->valueint, gen = imp_nvlink_gen(sm);
    bool nvsw = allk > 0 && n >= 3 && allk * (n - 1) > max_links(sm);
    int pcie_gen = sm >= 90 ? 5 : sm >= 80 ? 4 : 3;
    double gbps = o->nic_gbps > 0 ? o->nic_gbps : sm >= 90 ? 400 : sm >= 80 ? 200 : 100;
    const char *vendor = o->cpu ? o->cpu : "intel";

    int *sock = groups(s, R_PIX, R_NODE, true), *sw = groups(s, R_PIX, R_PXB, false);
    int *sock_no = g_new(int, s->ndev), *sw_no = g_new(int, s->ndev), *size = g_new0(int, s->ndev);
    int nsock = 0, nsw = 0;
    for (int i = 0; i < s->ndev; i++)
        size[sw[i]]++;
    for (int i = 0; i < s->ndev; i++)
        sock_no[i] = sw_no[i] = -1;
    for (int g = 0; g < n; g++) {
        if (sock_no[sock[g]] < 0)
            sock_no[sock[g]] = nsock++;
        if (size[sw[g]] > 1 && sw_no[sw[g]] < 0)
            sw_no[sw[g]] = nsw++;
    }

    cJSON *nodes = cJSON_CreateArray(), *links = cJSON_CreateArray();
    char id[32], up[32];
    for (int c = 0; c < nsock; c++) {
        snprintf(id, sizeof id, "cpu%d", c);
        snprintf(up, sizeof up, "mem%d", c);
        cJSON_AddNumberToObject(imp_node(nodes, id, "cpu"), "socket", c);
        imp_node(nodes, up, "hostmem");
        cJSON_AddNumberToObject(imp_link(links, id, up, "mem", "import: estimate (nvidia-smi has no memory bandwidth); edit"),
                                "GBps", 200);
    }
    bool *declared = g_new0(bool, nsw + 1);
    for (int g = 0; g < n; g++) {
        int k = sw_no[sw[g]];
        if (k < 0 || declared[k])
            continue;
        declared[k] = true;
        snprintf(id, sizeof id, "sw%d", k);
        snprintf(up, sizeof up, "cpu%d", sock_no[sock[g]]);
        imp_node(nodes, id, "pcie_switch");
        cJSON *l = imp_link(links, id, up, "pcie", "nvidia-smi: devices joined by PIX/PXB share a switch; "
                                                   "PCIe generation by GPU generation (pcie.gen), x16");
        cJSON_AddStringToObject(l, "gen", "$pcie.gen");
        cJSON_AddNumberToObject(l, "lanes", 16);
    }
    g_free(declared);
    if (nvsw)
        cJSON_AddBoolToObject(imp_node(nodes, "nvsw", "nvswitch"), "nvls", sm >= 90);
    for (int g = 0; g < n; g++) {
        snprintf(id, sizeof id, "gpu%d", g);
        imp_node(nodes, id, "gpu");
        if (sw_no[sw[g]] >= 0)
            snprintf(up, sizeof up, "sw%d", sw_no[sw[g]]);
        else
            snprintf(up, sizeof up, "cpu%d", sock_no[sock[g]]);
        cJSON *l = imp_link(links, id, up, "pcie", "nvidia-smi: the GPU's switch (PIX/PXB) or root port; x16");
        cJSON_AddStringToObject(l, "gen", "$pcie.gen");
        cJSON_AddNumberToObject(l, "lanes", 16);
        if (nvsw) {
            l = imp_link(links, id, "nvsw", "nvlink", "nvidia-smi: NV<k> between every pair of GPUs, more than "
                                                     "one GPU has: k links to an NVSwitch");
            cJSON_AddStringToObject(l, "links", "$nvlink.links");
            cJSON_AddNumberToObject(l, "nvlink_gen", gen);
        }
        for (int h = g + 1; h < n && !nvsw; h++) {
            const rel *r = rel_of(s, g, h);
            if (r->k != R_NV)
                continue;
            snprintf(up, sizeof up, "gpu%d", h);
            l = imp_link(links, id, up, "nvlink", "nvidia-smi: NV<k>, k links between the two GPUs");
            cJSON_AddNumberToObject(l, "links", r->nv);
            cJSON_AddNumberToObject(l, "nvlink_gen", gen);
        }
    }

    /* NICs: those PIX/PXB to a GPU (the rails); all of them when none is */
    int nnic = s->ndev - n, nrail = 0;
    GString *used = g_string_new(NULL), *unused = g_string_new(NULL);
    for (int i = n; i < s->ndev; i++) {
        bool rail = false;
        for (int g = 0; g < n && !rail; g++)
            rail = rel_of(s, g, i)->k == R_PIX || rel_of(s, g, i)->k == R_PXB;
        nrail += rail;
        GString *to = rail ? used : unused;
        if (to->len)
            g_string_append(to, ", ");
        nic_name(s, to, i);
    }
    int nics = nrail ? nrail : nnic;
    if (nics > TOPO_MAX_NICS) {
        fail(s, err, s->hdr_line, s->name_col[n], "%d NICs: at most " G_STRINGIFY(TOPO_MAX_NICS) " per server", nics);
        nics = -1;
    } else if (nnic) {
        g_string_append_printf(note, "%s: %d NIC(s) modelled: %s", s->file, nics, nrail ? used->str : unused->str);
        if (nrail && unused->len)
            g_string_append_printf(note, "; not modelled (NODE/SYS to every GPU): %s", unused->str);
        g_string_append(note, "\n");
    }
    g_string_free(used, TRUE);
    g_string_free(unused, TRUE);
    g_string_append_printf(note, "%s: assumed (nvidia-smi does not say): PCIe Gen%d x16 (--set pcie.gen=N)", s->file,
                           pcie_gen);
    if (!o->cpu)
        g_string_append(note, ", Intel CPUs (--cpu)");
    if (nnic && o->nic_gbps <= 0)
        g_string_append_printf(note, ", NICs of %g Gb/s (--nic-gbps)", gbps);
    g_string_append(note, "\n");
    cJSON *root = cJSON_CreateObject(), *p;
    char *base = g_path_get_basename(s->file);
    char *desc = g_strdup_printf("imported from %s (nvidia-smi topo -m): %d GPUs, %s, %d socket(s), %d NIC(s)", base,
                                 n, nvsw ? "NVSwitch" : maxtot ? "direct NVLinks" : "PCIe only", nsock, MAX(nics, 0));
    cJSON_AddStringToObject(root, "description", desc);
    cJSON_AddItemToObject(root, "gpu", gpu);
    p = cJSON_AddObjectToObject(root, "cpu");
    cJSON_AddStringToObject(p, "vendor", vendor);
    cJSON_AddStringToObject(p, "source", o->cpu ? "`topo import --cpu`" : "assumed: nvidia-smi names no CPU; --cpu sets it");
    p = cJSON_AddObjectToObject(root, "params");
    imp_sockets(p, links, nsock, vendor);
    cJSON_AddNumberToObject(p, "pcie.gen", pcie_gen);
    if (nvsw)
        cJSON_AddNumberToObject(p, "nvlink.links", allk);
    if (nics > 0) {
        cJSON_AddNumberToObject(p, "nics_per_node", nics);
        cJSON_AddNumberToObject(p, "nic.gbps", gbps);
    }
    p = cJSON_AddObjectToObject(root, "node");
    cJSON_AddItemToObject(p, "nodes", nodes);
    cJSON_AddItemToObject(p, "links", links);
    if (nics > 0) {
        cJSON *x = cJSON_AddObjectToObject(p, "nics");
        cJSON_AddStringToObject(x, "count", "$nics_per_node");
        cJSON_AddStringToObject(x, "gbps", "$nic.gbps");
        cJSON_AddStringToObject(x, "gen", "$pcie.gen");
        cJSON_AddNumberToObject(x, "lanes", 16);
        cJSON_AddStringToObject(x, "source", o->nic_gbps > 0 ? "nvidia-smi: the NICs near a GPU; rate from --nic-gbps"
                                                             : "nvidia-smi: the NICs near a GPU; rate assumed by GPU "
                                                               "generation (--nic-gbps sets it)");
    }
    if (nics >= 0 && !imp_scaleout(root, s->file, o, nics > 0, gbps, nvsw, err))
        nics = -1;
    g_free(base);
    g_free(desc);
    g_free(sock);
    g_free(sw);
    g_free(sock_no);
    g_free(sw_no);
    g_free(size);
    if (nics < 0) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

char *topo_import_smi(const char *path, const topo_import_opts *o, char **note, GError **err)
{
    static const topo_import_opts none = {0};
    o = o ? o : &none;
    if (note)
        *note = NULL;
    char *text = NULL;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, NULL, &e)) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_IO, "%s: %s", path, e->message);
        g_error_free(e);
        return NULL;
    }
    tracefile_blank_bom(text, strlen(text));
    smi s = {.file = path, .legend = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)};
    char **lines = g_strsplit(text, "\n", -1);
    g_free(text);
    char *out = NULL;
    GString *msg = g_string_new(NULL);
    if (parse(&s, lines, err)) {
        cJSON *root = build(&s, o, msg, err);
        out = root ? cJSON_Print(root) : NULL;
        cJSON_Delete(root);
    }
    if (out && note && msg->len)
        *note = g_strndup(msg->str, msg->len - 1);
    g_string_free(msg, TRUE);
    g_strfreev(lines);
    g_strfreev(s.name);
    g_free(s.name_col);
    g_free(s.m);
    g_free(s.numa);
    g_free(s.row_line);
    g_hash_table_destroy(s.legend);
    return out;
}

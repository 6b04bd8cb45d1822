/* topologies/topo_accuracy.c - the validation's error bands (accuracy.h). */
#include "topologies/accuracy.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "models/fabric.h"
#include "topologies/topo.h"

static const char *const regime_names[ACC_REGIMES] = {"nvlink", "pcie", "network"};

acc_regime acc_regime_of(const coll_system *sys) { return acc_regime_span(sys, sys->nnodes); }

/* shm: GPU pairs go through host memory (NCCL_P2P_DISABLE) */
static acc_regime regime(const coll_system *sys, int nnodes, bool shm)
{
    if (nnodes > 1 && sys->net_Bps > 0)
        return ACC_NETWORK;
    if (shm)
        return ACC_PCIE; /* NCCL_P2P_DISABLE: GPU pairs through host memory, as the PCIe files without P2P */
    if (sys->nvswitch != FAB_NONE)
        return ACC_NVLINK;
    const fab_link_id *out;
    uint32_t n = 0;
    if (sys->nranks > 0)
        fabric_node_links(sys->fab, sys->gpu[0], &out, &n);
    for (uint32_t i = 0; i < n; i++)
        if (fabric_link(sys->fab, out[i])->kind == LINK_NVLINK)
            return ACC_NVLINK;
    return ACC_PCIE;
}

acc_regime acc_regime_span(const coll_system *sys, int nnodes)
{
    return regime(sys, nnodes, sys->nccl.p2p_set && sys->nccl.p2p_level < FAB_PATH_NVL);
}

acc_regime acc_regime_algo(const coll_system *sys, int nnodes, coll_algo_id algo)
{
    /* NVLS and NVLSTree do not use NCCL's P2P transport: NVLink either way */
    bool nvls = algo == ALGO_NVLS || algo == ALGO_NVLS_TREE;
    return regime(sys, nnodes, !nvls && sys->nccl.p2p_set && sys->nccl.p2p_level < FAB_PATH_NVL);
}

bool acc_regime_measured(const coll_system *sys, acc_regime r)
{
    return r != ACC_NETWORK || regime(sys, 1, false) != ACC_PCIE;
}

const char *acc_regime_label(const coll_system *sys, acc_regime r)
{
    return acc_regime_measured(sys, r) ? acc_regime_name(r) : "network (PCIe servers: unmeasured)";
}

const char *acc_regime_name(acc_regime r)
{
    return r >= 0 && r < ACC_REGIMES ? regime_names[r] : "?";
}

int acc_regime_from_name(const char *s)
{
    for (int r = 0; r < ACC_REGIMES; r++)
        if (!strcmp(s, regime_names[r]))
            return r;
    return -1;
}

#define BAD(...) (g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, __VA_ARGS__), false)

static bool num(const cJSON *o, const char *k, double *v, bool need, const char *what, int i, GError **err)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!x)
        return need ? BAD("%s: bands[%d]: no \"%s\"", what, i, k) : true;
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble))
        return BAD("%s: bands[%d].%s: expected a number", what, i, k);
    *v = x->valuedouble;
    return true;
}

GArray *acc_parse(const char *json, const char *what, GError **err)
{
    cJSON *doc = cJSON_Parse(json);
    if (!doc) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_PARSE, "%s: not JSON", what);
        return NULL;
    }
    GArray *t = g_array_new(FALSE, TRUE, sizeof(acc_entry));
    const cJSON *bands = cJSON_GetObjectItemCaseSensitive(doc, "bands");
    bool ok = cJSON_IsArray(bands) || BAD("%s: no \"bands\" array", what);
    int i = 0;
    for (const cJSON *b = ok ? bands->child : NULL; b && ok; b = b->next, i++) {
        acc_entry e = {0};
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(b, "regime");
        double n = 0, lo = 0, hi = 0, blo = NAN, bhi = NAN;
        if (!cJSON_IsString(r)) {
            ok = BAD("%s: bands[%d]: no \"regime\"", what, i);
            break;
        }
        bool z3 = !strcmp(r->valuestring, "training-zero3");
        e.regime = z3 ? -2 : !strcmp(r->valuestring, "training") ? -1 : acc_regime_from_name(r->valuestring);
        if (e.regime == -1 && strcmp(r->valuestring, "training")) {
            ok = BAD("%s: bands[%d].regime: unknown \"%s\"", what, i, r->valuestring);
            break;
        }
        ok = num(b, "n", &n, true, what, i, err) && num(b, "p10", &e.band.e10, true, what, i, err) &&
             num(b, "p50", &e.band.e50, true, what, i, err) && num(b, "p90", &e.band.e90, true, what, i, err) &&
             num(b, "min_bytes", &lo, false, what, i, err) && num(b, "max_bytes", &hi, false, what, i, err) &&
             num(b, "lo", &blo, false, what, i, err) && num(b, "hi", &bhi, false, what, i, err);
        if (!ok)
            break;
        if (isnan(blo) != isnan(bhi)) {
            ok = BAD("%s: bands[%d]: \"lo\" and \"hi\" go together", what, i);
            break;
        }
        e.band.held_out = !isnan(blo);
        e.band.lo = e.band.held_out ? blo : e.band.e10;
        e.band.hi = e.band.held_out ? bhi : e.band.e90;
        if (e.band.held_out && !(e.band.lo > -1 && e.band.lo <= e.band.hi && e.band.hi < 100)) {
            ok = BAD("%s: bands[%d]: need -1 < lo <= hi", what, i);
            break;
        }
        if (n < 1 || n > 1e9 || lo < 0 || hi < 0 || hi > 1.8e19 || lo > 1.8e19 ||
            !(e.band.e10 > -1 && e.band.e10 <= e.band.e50 && e.band.e50 <= e.band.e90 && e.band.e90 < 100)) {
            ok = BAD("%s: bands[%d]: need n >= 1, bytes >= 0 and -1 < p10 <= p50 <= p90", what, i);
            break;
        }
        e.band.n = (int)n;
        e.min_bytes = (uint64_t)lo;
        e.max_bytes = hi > 0 ? (uint64_t)hi : UINT64_MAX;
        g_array_append_val(t, e);
    }
    cJSON_Delete(doc);
    if (!ok) {
        g_array_unref(t);
        return NULL;
    }
    return t;
}

/* A bands file under topo_dir()/accuracy, loaded once; NULL when absent
 * or bad (a warning on stderr for a bad one: predictions stand without). */
typedef GArray *(*parse_fn)(const char *text, const char *path, GError **err);

/* topologies/accuracy/FILE parsed by `parse`, once per file (NULL when
 * missing or bad: a warning says why and what is `lost`). */
static GArray *table_of(const char *file, parse_fn parse, const char *lost)
{
    static GHashTable *cache;
    if (!cache)
        cache = g_hash_table_new(g_str_hash, g_str_equal);
    gpointer hit;
    if (g_hash_table_lookup_extended(cache, file, NULL, &hit))
        return hit;
    char *path = g_build_filename(topo_dir(), "accuracy", file, NULL), *text = NULL;
    GArray *t = NULL;
    GError *err = NULL;
    if (g_file_get_contents(path, &text, NULL, NULL)) {
        t = parse(text, path, &err);
        if (!t) {
            g_printerr("conveyor: warning: %s; %s\n", err->message, lost);
            g_error_free(err);
        }
    }
    g_free(text);
    g_free(path);
    g_hash_table_insert(cache, (gpointer)file, t);
    return t;
}

static GArray *table(const char *file) { return table_of(file, acc_parse, "no error bands"); }

bool acc_coll_band(acc_regime r, uint64_t bytes, acc_band *out)
{
    GArray *t = table("collectives.json");
    for (guint i = 0; t && i < t->len; i++) {
        const acc_entry *e = &g_array_index(t, acc_entry, i);
        if (e->regime == (int)r && bytes >= e->min_bytes && bytes < e->max_bytes) {
            *out = e->band;
            return true;
        }
    }
    return false;
}

bool acc_training_band(bool zero3, acc_band *out)
{
    GArray *t = table("training.json");
    for (guint i = 0; t && i < t->len; i++) {
        const acc_entry *e = &g_array_index(t, acc_entry, i);
        if (e->regime == (zero3 ? -2 : -1)) {
            *out = e->band;
            return true;
        }
    }
    return false;
}

static const char *kind(const char *file)
{
    GArray *t = table(file);
    bool held = t && t->len > 0;
    for (guint i = 0; t && i < t->len; i++)
        held &= g_array_index(t, acc_entry, i).band.held_out;
    return held ? "held out" : "in-sample";
}

const char *acc_coll_band_kind(void) { return kind("collectives.json"); }
const char *acc_training_band_kind(void) { return kind("training.json"); }

void acc_rate_range(double pred, const acc_band *b, double *lo, double *hi)
{
    *lo = pred / (1 + b->hi);
    *hi = pred / (1 + b->lo);
}

void acc_time_range(double pred, const acc_band *b, double *lo, double *hi)
{
    *lo = pred * (1 + b->lo);
    *hi = pred * (1 + b->hi);
}

/* ---- the p2p comparison (p2p.json) ----------------------------------- */

typedef struct {
    char link[16], measure[16];
    acc_p2p e;
} p2p_entry;

static GArray *p2p_parse(const char *json, const char *what, GError **err)
{
    cJSON *doc = cJSON_Parse(json);
    const cJSON *cl = doc ? cJSON_GetObjectItemCaseSensitive(doc, "classes") : NULL;
    if (!cJSON_IsArray(cl)) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, "%s: no \"classes\" array", what);
        cJSON_Delete(doc);
        return NULL;
    }
    GArray *t = g_array_new(FALSE, TRUE, sizeof(p2p_entry));
    for (const cJSON *c = cl->child; c; c = c->next) {
        p2p_entry x = {0};
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(c, "link"), *m = cJSON_GetObjectItemCaseSensitive(c, "measure"),
                    *sy = cJSON_GetObjectItemCaseSensitive(c, "systems"), *h = cJSON_GetObjectItemCaseSensitive(c, "held_out");
        static const char *const keys[] = {"datasets", "n", "min", "p10", "p50", "p90", "max", "checked", "checked_cells"};
        double v[9];
        bool ok = cJSON_IsString(l) && cJSON_IsString(m) && cJSON_IsString(sy);
        for (int i = 0; ok && i < 9; i++) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, keys[i]);
            ok = cJSON_IsNumber(n) && isfinite(n->valuedouble);
            v[i] = ok ? n->valuedouble : 0;
        }
        const cJSON *lo = cJSON_GetObjectItemCaseSensitive(c, "lo"), *hi = cJSON_GetObjectItemCaseSensitive(c, "hi");
        ok = ok && (h == NULL || cJSON_IsNull(h) || cJSON_IsNumber(h)) && !lo == !hi && (!lo || (cJSON_IsNumber(lo) && cJSON_IsNumber(hi)));
        if (!ok || v[0] < 1 || v[1] < 1 || !(v[2] > -1 && v[2] <= v[6])) {
            g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, "%s: a bad entry in \"classes\"", what);
            g_array_unref(t);
            cJSON_Delete(doc);
            return NULL;
        }
        g_strlcpy(x.link, l->valuestring, sizeof x.link);
        g_strlcpy(x.measure, m->valuestring, sizeof x.measure);
        g_strlcpy(x.e.systems, sy->valuestring, sizeof x.e.systems);
        x.e.datasets = (int)v[0];
        x.e.n = (int)v[1];
        x.e.min = v[2];
        x.e.p10 = v[3];
        x.e.p50 = v[4];
        x.e.p90 = v[5];
        x.e.max = v[6];
        x.e.checked = (int)v[7];
        x.e.checked_cells = (int)v[8];
        x.e.held_out = cJSON_IsNumber(h) ? h->valuedouble : NAN;
        x.e.band = lo != NULL;
        x.e.lo = lo ? lo->valuedouble : 0;
        x.e.hi = hi ? hi->valuedouble : 0;
        g_array_append_val(t, x);
    }
    cJSON_Delete(doc);
    return t;
}

static GArray *p2p_table(void) { return table_of("p2p.json", p2p_parse, "no p2p error figures"); }

bool acc_p2p_loaded(void) { return p2p_table() != NULL; }

bool acc_p2p_error(const char *link, const char *measure, acc_p2p *out)
{
    GArray *t = p2p_table();
    for (guint i = 0; t && i < t->len; i++) {
        const p2p_entry *x = &g_array_index(t, p2p_entry, i);
        if (!strcmp(x->link, link) && !strcmp(x->measure, measure)) {
            *out = x->e;
            return true;
        }
    }
    return false;
}

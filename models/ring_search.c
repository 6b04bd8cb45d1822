/* models/ring_search.c - see ring_search.h. */
#include "ring_search.h"

#include <glib.h>
#include <string.h>

#define MAX_CYCLES 4096      /* Hamiltonian cycles enumerated (the DGX-1 has 60 from GPU 0) */
#define STEP_BUDGET 2000000L /* search steps, enumeration and packing together */

typedef struct {
    int ppn;
    int res[COLL_RING_MAX_PPN][COLL_RING_MAX_PPN]; /* NVLinks left from u to v */
    int path[COLL_RING_MAX_PPN];
    uint8_t used[COLL_RING_MAX_PPN];
    GArray *cycles; /* of uint8_t[ppn] rows, flattened */
    long steps;
    bool over;      /* too many cycles or steps: keep what was found */
    /* packing */
    int chosen[COLL_RING_MAX_ORDERS], nchosen;
    int best[COLL_RING_MAX_ORDERS], nbest, bound;
} search;

static const uint8_t *cycle_at(const search *s, int i)
{
    return &g_array_index(s->cycles, uint8_t, (size_t)i * (size_t)s->ppn);
}

/* Depth first from the path's end to a cycle, the neighbour with the most
 * links left first; false when none (or the step budget is spent). */
static bool greedy_dfs(search *s, int len)
{
    if (++s->steps > STEP_BUDGET)
        return false;
    int u = s->path[len - 1];
    if (len == s->ppn)
        return s->res[u][s->path[0]] > 0;
    int cand[COLL_RING_MAX_PPN], nc = 0;
    for (int v = 0; v < s->ppn; v++)
        if (!s->used[v] && s->res[u][v] > 0)
            cand[nc++] = v;
    for (int i = 1; i < nc; i++)
        for (int j = i; j > 0 && s->res[u][cand[j]] > s->res[u][cand[j - 1]]; j--) {
            int t = cand[j];
            cand[j] = cand[j - 1];
            cand[j - 1] = t;
        }
    for (int i = 0; i < nc; i++) {
        s->used[cand[i]] = 1;
        s->path[len] = cand[i];
        if (greedy_dfs(s, len + 1))
            return true;
        s->used[cand[i]] = 0;
    }
    return false;
}

/* Every directed Hamiltonian cycle over links with capacity, from GPU 0. */
static void enumerate(search *s, int len)
{
    if (s->over || ++s->steps > STEP_BUDGET) {
        s->over = true;
        return;
    }
    int u = s->path[len - 1];
    if (len == s->ppn) {
        if (s->res[u][0] > 0) {
            if (s->cycles->len / (guint)s->ppn >= MAX_CYCLES) {
                s->over = true;
                return;
            }
            for (int i = 0; i < s->ppn; i++) {
                uint8_t v = (uint8_t)s->path[i];
                g_array_append_val(s->cycles, v);
            }
        }
        return;
    }
    for (int v = 0; v < s->ppn; v++)
        if (!s->used[v] && s->res[u][v] > 0) {
            s->used[v] = 1;
            s->path[len] = v;
            enumerate(s, len + 1);
            s->used[v] = 0;
        }
}

static bool fits(const search *s, const uint8_t *c)
{
    for (int i = 0; i < s->ppn; i++)
        if (s->res[c[i]][c[(i + 1) % s->ppn]] <= 0)
            return false;
    return true;
}

static void take(search *s, const uint8_t *c, int d)
{
    for (int i = 0; i < s->ppn; i++)
        s->res[c[i]][c[(i + 1) % s->ppn]] -= d;
}

/* The most cycles that fit the links together (a cycle may repeat where
 * links are wide enough), first found kept among equals. */
static void pack(search *s, int from)
{
    if (s->nchosen > s->nbest) {
        s->nbest = s->nchosen;
        memcpy(s->best, s->chosen, sizeof s->best);
    }
    if (s->nbest >= s->bound || s->nchosen == COLL_RING_MAX_ORDERS || ++s->steps > STEP_BUDGET)
        return;
    int n = (int)(s->cycles->len / (guint)s->ppn);
    for (int i = from; i < n && s->nbest < s->bound; i++) {
        if (++s->steps > STEP_BUDGET) /* (each candidate counts: a wide mesh has thousands) */
            return;
        const uint8_t *c = cycle_at(s, i);
        if (!fits(s, c))
            continue;
        take(s, c, 1);
        s->chosen[s->nchosen++] = i;
        pack(s, i);
        s->nchosen--;
        take(s, c, -1);
    }
}

/* One ring after another, each the first cycle found preferring the hop
 * with the most links left: a fallback where the cycles are too many to
 * list (a wide mesh's first 4,096 share their long prefixes). */
static int greedy(search *s, const int cap[COLL_RING_MAX_PPN][COLL_RING_MAX_PPN], uint8_t out[][COLL_RING_MAX_PPN])
{
    int n = 0;
    memcpy(s->res, cap, sizeof s->res);
    while (n < COLL_RING_MAX_ORDERS && n < s->bound) {
        memset(s->used, 0, sizeof s->used);
        s->path[0] = 0;
        s->used[0] = 1;
        s->steps = 0;
        if (!greedy_dfs(s, 1))
            break;
        for (int i = 0; i < s->ppn; i++) {
            s->res[s->path[i]][s->path[(i + 1) % s->ppn]]--;
            out[n][i] = (uint8_t)s->path[i];
        }
        n++;
    }
    return n;
}

/* The direct NVLink from a to b, if any. */
static const fab_link_desc *direct_nvlink(const fabric *f, fab_node_id a, fab_node_id b)
{
    const fab_link_id *out;
    uint32_t n;
    fabric_node_links(f, a, &out, &n);
    for (uint32_t i = 0; i < n; i++)
        if (fabric_link_dst(f, out[i]) == b && fabric_link(f, out[i])->kind == LINK_NVLINK)
            return fabric_link(f, out[i]);
    return NULL;
}

void coll_ring_search(const fabric *f, const fab_node_id *gpu, int ppn, coll_rings *out)
{
    memset(out, 0, sizeof *out);
    out->ppn = ppn;
    if (ppn < 3 || ppn > COLL_RING_MAX_PPN) /* two GPUs: one ring either way */
        return;
    search s = {.ppn = ppn};
    double speed = 0;
    bool alike = true;
    int first = -1;
    for (int u = 0; u < ppn; u++)
        for (int v = 0; v < ppn; v++) {
            if (u == v)
                continue;
            const fab_link_desc *l = direct_nvlink(f, gpu[u], gpu[v]);
            int k = l ? (l->count > 0 ? l->count : 1) : 0;
            s.res[u][v] = k;
            if (first < 0)
                first = k;
            alike &= k == first;
            if (l) {
                double one = l->bw_Bps * l->eff / k / 1e9;
                if (speed == 0 || one < speed)
                    speed = one;
            }
        }
    if (alike && first == 0) /* NVSwitch or PCIe: no direct GPU-GPU NVLinks, rank order */
        return;
    /* at most as many rings as the GPU with the fewest NVLinks out can start */
    s.bound = COLL_RING_MAX_ORDERS;
    for (int u = 0; u < ppn; u++) {
        int k = 0;
        for (int v = 0; v < ppn; v++)
            k += s.res[u][v];
        if (k < s.bound)
            s.bound = k;
    }
    int cap[COLL_RING_MAX_PPN][COLL_RING_MAX_PPN];
    memcpy(cap, s.res, sizeof cap);
    s.cycles = g_array_new(FALSE, FALSE, 1);
    s.path[0] = 0;
    s.used[0] = 1;
    enumerate(&s, 1);
    s.steps = 0;
    pack(&s, 0);
    for (int r = 0; r < s.nbest; r++)
        memcpy(out->order[r], cycle_at(&s, s.best[r]), (size_t)ppn);
    out->n = s.nbest;
    if (out->n < s.bound) { /* the listing may have missed cycles: greedy, and keep the better */
        uint8_t g[COLL_RING_MAX_ORDERS][COLL_RING_MAX_PPN];
        int ng = greedy(&s, cap, g);
        if (ng > out->n) {
            memcpy(out->order, g, sizeof g);
            out->n = ng;
        }
    }
    out->speed_GBps = out->n ? speed : 0;
    g_array_free(s.cycles, TRUE);
}

bool coll_rings_usable(const coll_rings *r, fabric *f, const fab_node_id *gpu, int ppn)
{
    if (r->n <= 0 || r->ppn != ppn)
        return false;
    const fab_route *rt = fabric_route(f, gpu[r->order[0][0]], gpu[r->order[0][1]], 0, NULL);
    if (!rt || rt->nhops == 0)
        return false;
    for (uint32_t i = 0; i < rt->nhops; i++)
        if (fabric_link(f, rt->hop[i])->kind != LINK_NVLINK)
            return false;
    return true;
}

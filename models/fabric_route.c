/* models/fabric_route.c - routes between devices, as NCCL's paths go.
 *
 * Inside a server (or an NVLink domain spanning servers): the cheapest path
 * where a link costs the time to move 1 MiB over it (bytes/(bw*eff)) plus
 * its latency, so NVLink beats PCIe and fewer hops beat more. GPUs and host
 * memory are never transited; NICs and network switches are not used
 * between devices of one server. When P2P is off for a pair whose path has
 * no NVLink, the route is staged: source GPU -> host memory of its socket ->
 * destination GPU. Between servers: GPU -> its NIC (the rail it is bound to,
 * else the nearest) -> leaf -> [spine chosen by a deterministic ECMP hash of
 * (src, dst, flow)] -> leaf -> NIC -> GPU. Endpoint and transit servers are
 * spliced in (a NIC's endpoint limits where the route leaves or enters the
 * network through it). Routes are cached per (src, dst, flow).
 *
 * Most of a route does not depend on the flow: the in-server legs (GPU ->
 * its NIC, NIC -> GPU) and paths inside a server or NVLink domain are
 * searched once per endpoint pair and cached in f->legs; a new (src, dst,
 * flow) across servers only picks its spine (a hash and one link lookup)
 * and splices. Cached routes live in an arena next to their key (no malloc
 * per route). fabric_route_uncached() recomputes a route without any of
 * these caches, by the plain searches; tests compare the two.
 */
#include "fabric_priv.h"
#include "sim/mem.h"

#include <string.h>

#define COST_BYTES 1048576.0

guint route_key_hash(gconstpointer k)
{
    const route_key *r = k;
    guint64 h = (guint64)r->src * 0x9E3779B97F4A7C15ULL ^ (guint64)r->dst * 0xC2B2AE3D27D4EB4FULL ^
                (guint64)r->flow * 0x165667B19E3779F9ULL;
    return (guint)(h ^ (h >> 32));
}

gboolean route_key_equal(gconstpointer a, gconstpointer b)
{
    const route_key *x = a, *y = b;
    return x->src == y->src && x->dst == y->dst && x->flow == y->flow;
}

#define ROUTE_BLOCK (64 * 1024) /* bytes of the first arena block; then doubling (sim_mem_next) */

/* n hops in the arena as a route, after a copy of key (NULL: none). */
static fab_route *arena_put(fabric *f, const route_key *key, const fab_link_id *hop, guint n)
{
    gsize ksz = key ? sizeof(route_key) : 0, sz = ksz + sizeof(fab_route) + n * sizeof(fab_link_id);
    if (f->arena_left < sz) {
        gsize bs = f->arena_block = sim_mem_next(f->arena_block, ROUTE_BLOCK, 1);
        if (bs < sz)
            bs = sz;
        f->arena_cur = sim_mem_block(bs);
        f->arena_left = bs;
        g_ptr_array_add(f->arena_blocks, f->arena_cur);
    }
    char *at = f->arena_cur;
    f->arena_cur += sz;
    f->arena_left -= sz;
    if (key)
        *(route_key *)at = *key;
    fab_route *r = (fab_route *)(at + ksz);
    r->nhops = n;
    if (n)
        memcpy(r->hop, hop, n * sizeof(fab_link_id));
    return r;
}

/* Store a route (graph links or spliced hops) with its key in the arena and
 * index it in table t (a set of keys; the route follows its key). */
static fab_route *route_store(fabric *f, GHashTable *t, const route_key *key, const fab_link_id *hop, guint n)
{
    fab_route *r = arena_put(f, key, hop, n);
    g_hash_table_add(t, (route_key *)r - 1);
    return r;
}

static fab_route *route_find(GHashTable *t, const route_key *key)
{
    route_key *k = g_hash_table_lookup(t, key);
    return k ? (fab_route *)(k + 1) : NULL;
}

typedef struct {
    fab_node_kind kind; /* target kind */
    fab_node_id id;     /* a specific node, or FAB_NONE for any of kind... */
    int server, socket; /* ...restricted to this server/socket (-2 = any) */
} target;

static bool is_target(const fab_node *n, fab_node_id id, const target *t)
{
    if (t->id != FAB_NONE)
        return id == t->id;
    return n->d.kind == t->kind && (t->server == -2 || n->d.server == t->server) &&
           (t->socket == -2 || n->d.socket == t->socket);
}

static bool in_scope(const fab_node *n, int s1, int s2)
{
    if (n->d.kind == FAB_NET_LEAF || n->d.kind == FAB_NET_SPINE)
        return false;
    return n->d.server == s1 || n->d.server == s2 || n->d.server < 0;
}

/* May a path pass *through* node n (enter and leave)? */
static bool transit_ok(const fab_node *n)
{
    return n->d.kind != FAB_GPU && n->d.kind != FAB_HOSTMEM && n->d.kind != FAB_NIC;
}

static void scratch_ensure(fabric *f)
{
    if (f->scratch_len == f->nodes->len)
        return;
    f->scratch_len = f->nodes->len;
    f->dist = g_renew(double, f->dist, f->scratch_len);
    f->via = g_renew(fab_link_id, f->via, f->scratch_len);
    for (uint32_t i = 0; i < f->scratch_len; i++)
        f->dist[i] = -1;
}

/* Cheapest path from src to a node matching t, within servers {s1, s2} and
 * shared devices. Appends its links to `out`; returns the node reached or
 * FAB_NONE. Work is proportional to the nodes in scope. */
static fab_node_id shortest(fabric *f, fab_node_id src, const target *t, int s1, int s2, GArray *out)
{
    scratch_ensure(f);
    GArray *touched = f->sp_touched, *open = f->sp_open;
    g_array_set_size(touched, 0);
    g_array_set_size(open, 0);
    f->dist[src] = 0;
    f->via[src] = FAB_NONE;
    g_array_append_val(touched, src);
    g_array_append_val(open, src);
    fab_node_id found = FAB_NONE;
    while (open->len) {
        guint bi = 0;
        for (guint i = 1; i < open->len; i++)
            if (f->dist[g_array_index(open, fab_node_id, i)] < f->dist[g_array_index(open, fab_node_id, bi)])
                bi = i;
        fab_node_id u = g_array_index(open, fab_node_id, bi);
        g_array_remove_index(open, bi);
        fab_node *nu = NODE(f, u);
        if (u != src && is_target(nu, u, t)) {
            found = u;
            break;
        }
        if (u != src && !transit_ok(nu))
            continue;
        for (guint k = 0; k < nu->out->len; k++) {
            fab_link_id l = g_array_index(nu->out, fab_link_id, k);
            fab_link *lk = LINK(f, l);
            fab_node *nv = NODE(f, lk->dst);
            if (!in_scope(nv, s1, s2) && !is_target(nv, lk->dst, t))
                continue;
            double c = f->dist[u] + lk->ps_per_byte * COST_BYTES + (double)lk->d.lat_ps;
            if (nu->transit != FAB_NONE && u != src)
                c += LINK(f, nu->transit)->ps_per_byte * COST_BYTES;
            if (f->dist[lk->dst] < 0) {
                g_array_append_val(touched, lk->dst);
                g_array_append_val(open, lk->dst);
            } else if (c >= f->dist[lk->dst]) {
                continue;
            }
            f->dist[lk->dst] = c;
            f->via[lk->dst] = l;
        }
    }
    if (found != FAB_NONE) {
        guint base = out->len, n = 0;
        for (fab_node_id v = found; f->via[v] != FAB_NONE; v = LINK(f, f->via[v])->src)
            n++;
        g_array_set_size(out, base + n);
        guint i = base + n;
        for (fab_node_id v = found; f->via[v] != FAB_NONE; v = LINK(f, f->via[v])->src)
            g_array_index(out, fab_link_id, --i) = f->via[v];
    }
    for (guint i = 0; i < touched->len; i++)
        f->dist[g_array_index(touched, fab_node_id, i)] = -1;
    return found;
}

static bool has_kind(const fabric *f, const GArray *p, guint from, fab_link_kind k)
{
    for (guint i = from; i < p->len; i++)
        if (LINK(f, g_array_index(p, fab_link_id, i))->d.kind == k)
            return true;
    return false;
}

/* NCCL's type of a PCIe path p between two GPUs (no NVLink on it): PIX
 * under one switch, PXB across switches, PHB through a CPU, SYS across
 * sockets (paths.cc computes the same from its topology graph). */
static int pcie_path_type(const fabric *f, const GArray *p)
{
    int cpus = 0, switches = 0;
    for (guint i = 0; i < p->len; i++) {
        const fab_link *l = LINK(f, g_array_index(p, fab_link_id, i));
        if (l->d.kind == LINK_XSOCKET)
            return FAB_PATH_SYS;
        fab_node_kind k = NODE(f, l->dst)->d.kind;
        cpus += k == FAB_CPU;
        switches += k == FAB_PCIE_SWITCH;
    }
    return cpus ? FAB_PATH_PHB : switches <= 1 ? FAB_PATH_PIX : FAB_PATH_PXB;
}

/* Whether GPUs a and b use P2P over their path p (else SHM, staged). */
static bool p2p_allowed(const fabric *f, const fab_node *a, const fab_node *b, const GArray *p)
{
    bool nvl = has_kind(f, p, 0, LINK_NVLINK);
    if (nvl)
        return f->p2p_level < 0 || f->p2p_level >= FAB_PATH_NVL;
    /* PCIe P2P needs the hardware (the topology's p2p, and p2p_xsocket across
     * sockets: dgx1-v100 measures none); the user's level can only restrict
     * it, as NVML's P2P status does after NCCL's level check */
    if (!f->p2p || (!f->p2p_xsocket && a->d.socket != b->d.socket))
        return false;
    return f->p2p_level < 0 || pcie_path_type(f, p) <= f->p2p_level;
}

static fab_link_id first_out(const fabric *f, fab_node_id n, fab_node_kind to)
{
    GArray *o = NODE(f, n)->out;
    for (guint i = 0; i < o->len; i++) {
        fab_link_id l = g_array_index(o, fab_link_id, i);
        if (NODE(f, LINK(f, l)->dst)->d.kind == to)
            return l;
    }
    return FAB_NONE;
}

/* Cached legs are keyed as routes; the flow field says which kind. */
enum { LEG_NIC = 0, LEG_LOCAL = 1 };

void fabric_spine_ups_build(fabric *f)
{
    uint32_t n = f->nodes->len;
    f->up_idx = g_renew(uint32_t, f->up_idx, n + 1);
    g_array_set_size(f->up_links, 0);
    for (uint32_t i = 0; i < n; i++) {
        f->up_idx[i] = f->up_links->len;
        fab_node *nd = NODE(f, i);
        if (nd->d.kind != FAB_NET_LEAF)
            continue;
        for (guint k = 0; k < nd->out->len; k++) {
            fab_link_id l = g_array_index(nd->out, fab_link_id, k);
            if (NODE(f, LINK(f, l)->dst)->d.kind == FAB_NET_SPINE)
                g_array_append_val(f->up_links, l);
        }
    }
    f->up_idx[n] = f->up_links->len;
    f->ups_valid = true;
}

void fabric_route_forget(fabric *f)
{
    if (g_hash_table_size(f->legs))
        g_hash_table_remove_all(f->legs); /* their storage stays in the arena */
    if (g_hash_table_size(f->routes)) /* whole routes too: a policy change after one was asked kept it */
        g_hash_table_remove_all(f->routes);
    g_free(f->gpu_at);
    f->gpu_at = NULL;
    g_clear_pointer(&f->pxn_up, g_free); /* the parts' storage stays in the arena */
    g_clear_pointer(&f->pxn_down, g_free);
    f->ups_valid = false;
}

/* leaf la -> spine -> leaf lb: from the hash's pick among la's spines, the
 * first (wrapping) whose spine reaches lb. */
static bool spine_pick(fabric *f, fab_node_id la, fab_node_id lb, guint64 hash, GArray *out)
{
    uint32_t nsp;
    const fab_link_id *ups = fabric_spine_ups(f, la, &nsp);
    for (guint tries = 0; tries < nsp; tries++) {
        fab_link_id l = ups[(guint)((hash + tries) % nsp)];
        fab_link_id l2 = fabric_link_between(f, LINK(f, l)->dst, lb);
        if (l2 != FAB_NONE) {
            g_array_append_val(out, l);
            g_array_append_val(out, l2);
            return true;
        }
    }
    return false;
}

/* The same choice by scanning la's out list for every try (the reference). */
static bool spine_scan(fabric *f, fab_node_id la, fab_node_id lb, guint64 hash, GArray *out)
{
    GArray *o = NODE(f, la)->out;
    guint nsp = 0;
    for (guint i = 0; i < o->len; i++)
        nsp += NODE(f, LINK(f, g_array_index(o, fab_link_id, i))->dst)->d.kind == FAB_NET_SPINE;
    for (guint tries = 0; tries < nsp; tries++) {
        guint want = (guint)((hash + tries) % nsp), seen = 0;
        for (guint i = 0; i < o->len; i++) {
            fab_link_id l = g_array_index(o, fab_link_id, i);
            if (NODE(f, LINK(f, l)->dst)->d.kind != FAB_NET_SPINE || seen++ != want)
                continue;
            fab_link_id l2 = fabric_link_between(f, LINK(f, l)->dst, lb);
            if (l2 != FAB_NONE) {
                g_array_append_val(out, l);
                g_array_append_val(out, l2);
                return true;
            }
            break;
        }
    }
    return false;
}

/* NIC -> leaf -> [spine] -> leaf -> NIC, spine picked by hash. */
static bool net_path(fabric *f, fab_node_id na, fab_node_id nb, guint64 hash, bool ref, GArray *out)
{
    fab_link_id up = first_out(f, na, FAB_NET_LEAF), down_l = first_out(f, nb, FAB_NET_LEAF);
    if (up == FAB_NONE || down_l == FAB_NONE)
        return false;
    fab_node_id la = LINK(f, up)->dst, lb = LINK(f, down_l)->dst;
    fab_link_id down = down_l ^ 1; /* leaf_b -> nic_b */
    g_array_append_val(out, up);
    if (la != lb && !(ref ? spine_scan : spine_pick)(f, la, lb, hash, out))
        return false;
    g_array_append_val(out, down);
    return true;
}

void fabric_gpu_set_nic(fabric *f, fab_node_id gpu, fab_node_id nic) { NODE(f, gpu)->nic = nic; }

/* The in-server path from `from` to a node matching t, appended to p: from
 * f->legs under key, else searched and cached (ref: searched, not cached).
 * Returns the node reached, FAB_NONE (nothing appended) if none. */
static fab_node_id cached_leg(fabric *f, const route_key *key, fab_node_id from, const target *t, int server,
                              bool ref, GArray *p)
{
    fab_route *r = ref ? NULL : route_find(f->legs, key);
    if (r) {
        g_array_append_vals(p, r->hop, r->nhops);
        return LINK(f, r->hop[r->nhops - 1])->dst;
    }
    guint base = p->len;
    fab_node_id got = shortest(f, from, t, server, server, p);
    if (got != FAB_NONE && !ref)
        route_store(f, f->legs, key, &g_array_index(p, fab_link_id, base), p->len - base);
    return got;
}

/* The in-server path from `from` to node `to` (a GPU and its NIC), cached:
 * every pair of GPUs on two servers shares these legs. Appends to p. */
static bool leg(fabric *f, fab_node_id from, fab_node_id to, int server, bool ref, GArray *p)
{
    route_key key = {.src = from, .dst = to, .flow = LEG_NIC};
    return cached_leg(f, &key, from, &(target){.id = to}, server, ref, p) != FAB_NONE;
}

/* The NIC nearest to x on its server (x is not a NIC); the path to it is
 * appended to p. */
static fab_node_id nearest_nic(fabric *f, fab_node_id x, bool ref, GArray *p)
{
    const fab_node *n = NODE(f, x);
    route_key key = {.src = x, .dst = FAB_NONE, .flow = LEG_NIC};
    target tn = {.kind = FAB_NIC, .id = FAB_NONE, .server = n->d.server, .socket = -2};
    return cached_leg(f, &key, x, &tn, n->d.server, ref, p);
}

/* The static ECMP hash of a flow across servers (the spine it takes). */
static guint64 ecmp_hash(fab_node_id src, fab_node_id dst, uint32_t flow)
{
    guint64 h = (guint64)src * 2654435761u + (guint64)dst * 40503u + flow * 2246822519u;
    return h ^ (h >> 17);
}

static bool cross_server(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow, bool ref, GArray *p)
{
    fab_node *a = NODE(f, src), *b = NODE(f, dst);
    fab_node_id na = a->d.kind == FAB_NIC ? src : a->nic, nb = b->d.kind == FAB_NIC ? dst : b->nic;
    if (na == FAB_NONE)
        na = nearest_nic(f, src, ref, p);
    else if (na != src && !leg(f, src, na, a->d.server, ref, p))
        return false;
    if (na == FAB_NONE)
        return false;
    if (nb == FAB_NONE) {
        /* the destination NIC nearest to dst: search from dst, then reverse */
        GArray *rev = f->rt_tmp;
        g_array_set_size(rev, 0);
        nb = nearest_nic(f, dst, ref, rev);
        if (nb == FAB_NONE)
            return false;
    }
    if (!net_path(f, na, nb, ecmp_hash(src, dst, flow), ref, p))
        return false;
    return nb == dst || leg(f, nb, dst, b->d.server, ref, p);
}

/* The path inside a server or an NVLink domain, into the empty p: 1 found,
 * 0 none (the network may still join them), -1 none (staging failed). */
static int local_path(fabric *f, fab_node_id src, fab_node_id dst, GArray *p)
{
    fab_node *a = NODE(f, src), *b = NODE(f, dst);
    target t = {.id = dst};
    if (shortest(f, src, &t, a->d.server, b->d.server, p) == FAB_NONE)
        return 0;
    if (a->d.kind == FAB_GPU && b->d.kind == FAB_GPU && !p2p_allowed(f, a, b, p)) {
        /* stage through the source socket's host memory */
        g_array_set_size(p, 0);
        target tm = {.kind = FAB_HOSTMEM, .id = FAB_NONE, .server = a->d.server, .socket = a->d.socket};
        fab_node_id m = shortest(f, src, &tm, a->d.server, a->d.server, p);
        if (m == FAB_NONE || shortest(f, m, &t, a->d.server, b->d.server, p) == FAB_NONE)
            return -1;
    }
    return 1;
}

/* The path of graph links from src to dst into the empty p. Paths inside a
 * server or domain do not depend on the flow and are cached (unless ref). */
static bool plain_path(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow, bool ref, GArray *p)
{
    fab_node *a = NODE(f, src), *b = NODE(f, dst);
    bool same_domain = a->d.domain >= 0 && a->d.domain == b->d.domain;
    if (a->d.server != b->d.server && !same_domain)
        return cross_server(f, src, dst, flow, ref, p); /* only the network joins them */
    route_key key = {.src = src, .dst = dst, .flow = LEG_LOCAL};
    fab_route *r = ref ? NULL : route_find(f->legs, &key);
    if (r) {
        g_array_append_vals(p, r->hop, r->nhops);
        return true;
    }
    int got = local_path(f, src, dst, p);
    if (got > 0 && !ref)
        route_store(f, f->legs, &key, (const fab_link_id *)p->data, p->len);
    if (got != 0)
        return got > 0;
    if (a->d.server == b->d.server)
        return false;
    return cross_server(f, src, dst, flow, ref, p);
}

/* Append l to h after the servers of the node before it (a graph link after
 * another): its transit server, and for a NIC, which a route only passes
 * through, its endpoint limit in the direction taken: tx when l leaves it
 * for the network, rx when prev came in from the network. */
static void splice_next(const fabric *f, GArray *h, fab_link_id prev, fab_link_id l)
{
    fab_node *mid = NODE(f, LINK(f, l)->src);
    if (mid->transit != FAB_NONE && LINK(f, prev)->d.kind != LINK_MEM && LINK(f, l)->d.kind != LINK_MEM)
        g_array_append_val(h, mid->transit);
    if (mid->d.kind == FAB_NIC && LINK(f, l)->d.kind == LINK_NET && mid->tx != FAB_NONE)
        g_array_append_val(h, mid->tx);
    else if (mid->d.kind == FAB_NIC && LINK(f, prev)->d.kind == LINK_NET && mid->rx != FAB_NONE)
        g_array_append_val(h, mid->rx);
    g_array_append_val(h, l);
}

/* Graph links p spliced into h (emptied first), with src's tx before. */
static void splice_all(const fabric *f, fab_node_id src, const GArray *p, GArray *h)
{
    g_array_set_size(h, 0);
    if (src != FAB_NONE && NODE(f, src)->tx != FAB_NONE)
        g_array_append_val(h, NODE(f, src)->tx);
    for (guint i = 0; i < p->len; i++) {
        fab_link_id l = g_array_index(p, fab_link_id, i);
        if (i == 0)
            g_array_append_val(h, l);
        else
            splice_next(f, h, g_array_index(p, fab_link_id, i - 1), l);
    }
}

/* Splice endpoint and transit servers into a path of graph links: the
 * route's hops, into h. */
static void assemble(fabric *f, fab_node_id src, fab_node_id dst, const GArray *p, GArray *h)
{
    splice_all(f, p->len ? src : FAB_NONE, p, h);
    if (p->len && NODE(f, dst)->rx != FAB_NONE)
        g_array_append_val(h, NODE(f, dst)->rx);
}

/* GPUs on two servers that no NVLink domain joins: the network carries
 * their route (PXN when their local indices differ). */
static bool cross_gpus(const fab_node *a, const fab_node *b)
{
    return a->d.kind == FAB_GPU && b->d.kind == FAB_GPU && a->d.server != b->d.server &&
           !(a->d.domain >= 0 && a->d.domain == b->d.domain);
}

/* Whether a send from a to b takes NCCL's PXN route (fabric_route_p2p). */
static bool pxn_case(const fabric *f, const fab_node *a, const fab_node *b)
{
    return f->pxn && cross_gpus(a, b) && a->d.local != b->d.local;
}

/* A malloc'd route of path p from src to dst (the uncached references). */
static fab_route *route_of_path(fabric *f, fab_node_id src, fab_node_id dst, const GArray *p)
{
    GArray *h = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    assemble(f, src, dst, p, h);
    fab_route *r = g_malloc(sizeof *r + h->len * sizeof(fab_link_id));
    r->nhops = h->len;
    if (h->len)
        memcpy(r->hop, h->data, h->len * sizeof(fab_link_id));
    g_array_free(h, TRUE);
    return r;
}

static bool pxn_fast(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow);

const fab_route *fabric_route(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow, GError **err)
{
    g_assert(src < f->nodes->len && dst < f->nodes->len);
    route_key key = {.src = src, .dst = dst, .flow = flow};
    fab_route *r = route_find(f->routes, &key);
    if (r)
        return r;
    const fab_node *a = NODE(f, src), *b = NODE(f, dst);
    if (cross_gpus(a, b) && a->d.local == b->d.local && pxn_fast(f, src, dst, flow))
        return route_store(f, f->routes, &key, (const fab_link_id *)f->rt_hops->data, f->rt_hops->len);
    GArray *p = f->rt_path;
    g_array_set_size(p, 0);
    if (src != dst && !plain_path(f, src, dst, flow, false, p)) {
        g_set_error(err, FABRIC_ERROR, FABRIC_ERROR_UNREACHABLE, "no route from %s to %s",
                    NODE(f, src)->d.name, NODE(f, dst)->d.name);
        return NULL;
    }
    assemble(f, src, dst, p, f->rt_hops);
    return route_store(f, f->routes, &key, (const fab_link_id *)f->rt_hops->data, f->rt_hops->len);
}

/* ---- send/receive across servers: PXN -------------------------------- */

#define PXN_FLOW 0x80000000u /* route key flag: the PXN route of (src, dst, flow) */

/* The GPU on `server` with local index `local`, or FAB_NONE (an index of
 * every server's GPUs, built on first use, dropped with the legs). */
static fab_node_id gpu_at(fabric *f, int server, int local)
{
    if (!f->gpu_at) {
        int ns = 0, nl = 0;
        for (guint i = 0; i < f->gpus->len; i++) {
            const fab_node *n = NODE(f, g_array_index(f->gpus, fab_node_id, i));
            ns = n->d.server + 1 > ns ? n->d.server + 1 : ns;
            nl = n->d.local + 1 > nl ? n->d.local + 1 : nl;
        }
        f->gpu_at_servers = ns;
        f->gpu_at_locals = nl;
        f->gpu_at = g_new(fab_node_id, (size_t)ns * (size_t)nl + 1);
        for (size_t i = 0; i < (size_t)ns * (size_t)nl; i++)
            f->gpu_at[i] = FAB_NONE;
        for (guint i = 0; i < f->gpus->len; i++) {
            fab_node_id g = g_array_index(f->gpus, fab_node_id, i);
            const fab_node *n = NODE(f, g);
            if (n->d.server >= 0 && n->d.local >= 0)
                f->gpu_at[(size_t)n->d.server * (size_t)nl + (size_t)n->d.local] = g;
        }
    }
    if (server < 0 || local < 0 || server >= f->gpu_at_servers || local >= f->gpu_at_locals)
        return FAB_NONE;
    return f->gpu_at[(size_t)server * (size_t)f->gpu_at_locals + (size_t)local];
}

static bool path_has_node(const fabric *f, const GArray *p, guint from, fab_node_kind k)
{
    for (guint i = from; i < p->len; i++)
        if (NODE(f, LINK(f, g_array_index(p, fab_link_id, i))->dst)->d.kind == k)
            return true;
    return false;
}

/* src's own path to NIC na through PCIe switches only (NCCL: PIX or PXB),
 * appended to p; false (p as it was) when it crosses a CPU or NVLink. NCCL
 * relays through a proxy GPU only where the sender's own path to the NIC is
 * worse than that (paths.cc: PXN needs the GPU's path type above PATH_PXB),
 * so the GPUs sharing a NIC's PCIe switch send through it themselves. */
static bool nic_direct(fabric *f, fab_node_id src, fab_node_id na, bool ref, GArray *p)
{
    guint base = p->len;
    if (leg(f, src, na, NODE(f, src)->d.server, ref, p) && !path_has_node(f, p, base, FAB_CPU) &&
        !has_kind(f, p, base, LINK_NVLINK) && !has_kind(f, p, base, LINK_MEM))
        return true;
    g_array_set_size(p, base);
    return false;
}

bool fabric_nic_beside(fabric *f, fab_node_id gpu, fab_node_id nic)
{
    g_assert(gpu < f->nodes->len && nic < f->nodes->len);
    GArray *p = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    bool near = nic_direct(f, gpu, nic, false, p);
    g_array_free(p, TRUE);
    return near;
}

/* NCCL's PXN (ncclTopoGetNetDev with NCCL_P2P_PXN_LEVEL=2, the default): a
 * send to a GPU on another server leaves through the NIC on the receiver's
 * rail, i.e. of the local GPU with the receiver's local index (the proxy),
 * when that GPU is reached over NVLink and its NIC through PCIe switches
 * only; the data crosses to the proxy's memory over NVLink and its NIC sends
 * it from there. The graph links of that path into the empty p, or false
 * (no PXN: p is left empty). */
static bool pxn_path(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow, bool ref, GArray *p)
{
    const fab_node *a = NODE(f, src), *b = NODE(f, dst);
    fab_node_id proxy = gpu_at(f, a->d.server, b->d.local);
    if (proxy == FAB_NONE || proxy == src || NODE(f, proxy)->nic == FAB_NONE)
        return false;
    /* src under the NIC's own PCIe switch: straight to it, no proxy */
    if (nic_direct(f, src, NODE(f, proxy)->nic, ref, p)) {
        fab_node_id nb = b->nic;
        if (nb != FAB_NONE && net_path(f, NODE(f, proxy)->nic, nb, ecmp_hash(proxy, dst, flow), ref, p) &&
            leg(f, nb, dst, b->d.server, ref, p))
            return true;
        g_array_set_size(p, 0);
        return false;
    }
    /* src -> proxy over NVLink only (NCCL: PATH_NVL) */
    if (!plain_path(f, src, proxy, flow, ref, p) || !has_kind(f, p, 0, LINK_NVLINK) ||
        has_kind(f, p, 0, LINK_PCIE) || has_kind(f, p, 0, LINK_MEM)) {
        g_array_set_size(p, 0);
        return false;
    }
    guint mid = p->len;
    /* proxy -> its NIC through PCIe switches, not a CPU (NCCL: PATH_PXB) */
    if (!plain_path(f, proxy, dst, flow, ref, p) || path_has_node(f, p, mid, FAB_CPU)) {
        g_array_set_size(p, 0);
        return false;
    }
    return true;
}

/* ---- PXN routes in parts --------------------------------------------
 * A PXN route is [src's tx] src -> proxy (NVLink) -> the proxy's NIC -> its
 * leaf, then leaf -> spine -> leaf (the flow's ECMP pick; nothing when both
 * NICs share a leaf), then leaf -> dst's NIC -> dst [dst's rx]. Only the
 * middle depends on the flow: the sender's part (per src and the receiver's
 * local index) and the receiver's part (per dst) are spliced once and kept,
 * so a new route is a spine pick and two copies instead of three cached-leg
 * lookups, two NIC link scans and a splice (an alltoall over 1,024 GPUs asks
 * 1,047,552 of them). Hop for hop the route assemble() makes from the whole
 * path (tested against fabric_route_p2p_uncached). Where a part does not
 * exist as PXN needs it (no NIC bound, no NVLink to the proxy, a CPU on a
 * NIC's leg) the entry is pxn_nopart and the whole path is searched. */
static const fab_route pxn_nopart;

/* src -> proxy (the GPU of src's server at local index `local`) over NVLink
 * only -> the proxy's NIC through PCIe switches only -> its leaf. When the
 * proxy is src (a receiver on src's rail, no PXN): src -> its NIC -> its
 * leaf, the start of the plain route across servers. */
static const fab_route *pxn_up_part(fabric *f, fab_node_id src, int local)
{
    const fab_node *a = NODE(f, src);
    fab_node_id proxy = gpu_at(f, a->d.server, local);
    if (proxy == FAB_NONE || NODE(f, proxy)->nic == FAB_NONE)
        return &pxn_nopart;
    fab_node_id na = NODE(f, proxy)->nic;
    GArray *p = f->rt_path;
    g_array_set_size(p, 0);
    fab_link_id up = first_out(f, na, FAB_NET_LEAF);
    if (up == FAB_NONE)
        return &pxn_nopart;
    if (proxy == src || !nic_direct(f, src, na, false, p)) {
        if (proxy != src && (!plain_path(f, src, proxy, 0, false, p) || !has_kind(f, p, 0, LINK_NVLINK) ||
                             has_kind(f, p, 0, LINK_PCIE) || has_kind(f, p, 0, LINK_MEM)))
            return &pxn_nopart;
        guint mid = p->len;
        if (!leg(f, proxy, na, NODE(f, proxy)->d.server, false, p) || path_has_node(f, p, mid, FAB_CPU))
            return &pxn_nopart;
    }
    g_array_append_val(p, up);
    splice_all(f, src, p, f->rt_tmp);
    return arena_put(f, NULL, (const fab_link_id *)f->rt_tmp->data, f->rt_tmp->len);
}

/* leaf -> dst's NIC -> dst, then dst's rx. */
static const fab_route *pxn_down_part(fabric *f, fab_node_id dst)
{
    const fab_node *b = NODE(f, dst);
    fab_node_id nb = b->nic;
    fab_link_id down_l = nb == FAB_NONE ? FAB_NONE : first_out(f, nb, FAB_NET_LEAF);
    if (down_l == FAB_NONE)
        return &pxn_nopart;
    GArray *p = f->rt_path;
    g_array_set_size(p, 0);
    fab_link_id down = down_l ^ 1; /* leaf -> nic */
    g_array_append_val(p, down);
    if (!leg(f, nb, dst, b->d.server, false, p) || path_has_node(f, p, 1, FAB_CPU))
        return &pxn_nopart;
    splice_all(f, FAB_NONE, p, f->rt_tmp);
    if (b->rx != FAB_NONE)
        g_array_append_val(f->rt_tmp, b->rx);
    return arena_put(f, NULL, (const fab_link_id *)f->rt_tmp->data, f->rt_tmp->len);
}

/* The PXN route of (src, dst, flow) from the parts into f->rt_hops: true,
 * or false when the parts do not apply (then the whole path decides). With
 * src and dst at the same local index it is their plain route. */
static bool pxn_fast(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow)
{
    const fab_node *a = NODE(f, src), *b = NODE(f, dst);
    gpu_at(f, 0, 0); /* the index, built on first use */
    int ns = f->gpu_at_servers, nl = f->gpu_at_locals;
    if (a->d.server < 0 || b->d.server < 0 || a->d.local < 0 || b->d.local < 0 || a->d.server >= ns ||
        b->d.server >= ns || a->d.local >= nl || b->d.local >= nl)
        return false;
    if (!f->pxn_up) {
        f->pxn_up = g_new0(const fab_route *, (size_t)ns * nl * nl);
        f->pxn_down = g_new0(const fab_route *, (size_t)ns * nl);
    }
    const fab_route **u = &f->pxn_up[((size_t)a->d.server * nl + a->d.local) * nl + b->d.local];
    const fab_route **d = &f->pxn_down[(size_t)b->d.server * nl + b->d.local];
    if (!*u)
        *u = pxn_up_part(f, src, b->d.local);
    if (!*d)
        *d = pxn_down_part(f, dst);
    if (*u == &pxn_nopart || *d == &pxn_nopart)
        return false;
    const fab_route *U = *u, *D = *d;
    fab_link_id up = U->hop[U->nhops - 1], down = D->hop[0];
    fab_node_id la = LINK(f, up)->dst, lb = LINK(f, down)->src;
    GArray *h = f->rt_hops, *m = f->rt_tmp;
    g_array_set_size(m, 0);
    /* the spine cross_server() picks for the proxy's part of the path */
    if (la != lb && !spine_pick(f, la, lb, ecmp_hash(gpu_at(f, a->d.server, b->d.local), dst, flow), m))
        return false;
    g_array_set_size(h, 0);
    g_array_append_vals(h, U->hop, U->nhops);
    fab_link_id prev = up;
    for (guint i = 0; i < m->len; i++) {
        splice_next(f, h, prev, g_array_index(m, fab_link_id, i));
        prev = g_array_index(m, fab_link_id, i);
    }
    splice_next(f, h, prev, down);
    g_array_append_vals(h, D->hop + 1, D->nhops - 1);
    return true;
}

const fab_route *fabric_route_p2p(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow, GError **err)
{
    g_assert(src < f->nodes->len && dst < f->nodes->len && !(flow & PXN_FLOW));
    const fab_node *a = NODE(f, src), *b = NODE(f, dst);
    if (!pxn_case(f, a, b))
        return fabric_route(f, src, dst, flow, err);
    route_key key = {.src = src, .dst = dst, .flow = flow | PXN_FLOW};
    fab_route *r = route_find(f->routes, &key);
    if (r)
        return r;
    if (pxn_fast(f, src, dst, flow))
        return route_store(f, f->routes, &key, (const fab_link_id *)f->rt_hops->data, f->rt_hops->len);
    GArray *p = f->rt_path; /* fabric_route's scratch: free again before it is called */
    g_array_set_size(p, 0);
    if (pxn_path(f, src, dst, flow, false, p)) {
        assemble(f, src, dst, p, f->rt_hops);
        return route_store(f, f->routes, &key, (const fab_link_id *)f->rt_hops->data, f->rt_hops->len);
    }
    /* PXN does not apply (no NVLink to that GPU, its NIC behind a CPU):
     * the plain route, remembered under this key too */
    const fab_route *plain = fabric_route(f, src, dst, flow, err);
    return plain ? route_store(f, f->routes, &key, plain->hop, plain->nhops) : NULL;
}

fab_route *fabric_route_uncached(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow)
{
    g_assert(src < f->nodes->len && dst < f->nodes->len);
    GArray *p = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    fab_route *r = src == dst || plain_path(f, src, dst, flow, true, p) ? route_of_path(f, src, dst, p) : NULL;
    g_array_free(p, TRUE);
    return r;
}

fab_route *fabric_route_p2p_uncached(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow)
{
    g_assert(src < f->nodes->len && dst < f->nodes->len);
    if (!pxn_case(f, NODE(f, src), NODE(f, dst)))
        return fabric_route_uncached(f, src, dst, flow);
    GArray *p = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    fab_route *r = pxn_path(f, src, dst, flow, true, p) ? route_of_path(f, src, dst, p) : NULL;
    g_array_free(p, TRUE);
    return r ? r : fabric_route_uncached(f, src, dst, flow);
}

double fabric_route_bw(const fabric *f, const fab_route *r)
{
    double bw = 0;
    for (uint32_t i = 0; i < r->nhops; i++) {
        const fab_link *l = LINK(f, r->hop[i]);
        double b = l->d.bw_Bps * l->d.eff;
        if (i == 0 || b < bw)
            bw = b;
    }
    return bw;
}

int64_t fabric_route_lat_ps(const fabric *f, const fab_route *r)
{
    int64_t s = 0;
    for (uint32_t i = 0; i < r->nhops; i++)
        s += LINK(f, r->hop[i])->d.lat_ps;
    return s;
}

fab_node_id fabric_socket_mem(const fabric *f, fab_node_id n)
{
    const fab_node_desc *g = &NODE(f, n)->d;
    for (fab_node_id i = 0; i < f->nodes->len; i++) {
        const fab_node_desc *d = &NODE(f, i)->d;
        if (d->kind == FAB_HOSTMEM && d->server == g->server && d->socket == g->socket)
            return i;
    }
    return FAB_NONE;
}

bool fabric_route_staged(const fabric *f, const fab_route *r)
{
    for (uint32_t i = 0; i < r->nhops; i++)
        if (LINK(f, r->hop[i])->d.kind == LINK_MEM)
            return true;
    return false;
}

/* ---- in-network reduction (SHARP): routes to and from a switch ---- */

static fab_node_id nic_of(fabric *f, fab_node_id gpu)
{
    fab_node *g = NODE(f, gpu);
    if (g->d.kind == FAB_NIC)
        return gpu;
    if (g->nic != FAB_NONE)
        return g->nic;
    g_array_set_size(f->rt_tmp, 0);
    return nearest_nic(f, gpu, false, f->rt_tmp);
}

fab_node_id fabric_sharp_root(fabric *f, const fab_node_id *gpus, int n, uint32_t hint)
{
    g_assert(n >= 1);
    fab_node_id leaf0 = FAB_NONE;
    bool one_leaf = true;
    for (int i = 0; i < n; i++) {
        fab_node_id nic = nic_of(f, gpus[i]);
        fab_link_id up = nic == FAB_NONE ? FAB_NONE : first_out(f, nic, FAB_NET_LEAF);
        if (up == FAB_NONE)
            return FAB_NONE;
        fab_node_id leaf = LINK(f, up)->dst;
        if (i == 0)
            leaf0 = leaf;
        else if (leaf != leaf0)
            one_leaf = false;
    }
    if (one_leaf)
        return leaf0;
    GArray *o = NODE(f, leaf0)->out;
    GArray *spines = g_array_new(FALSE, FALSE, sizeof(fab_node_id));
    for (guint k = 0; k < o->len; k++) {
        fab_node_id sp = LINK(f, g_array_index(o, fab_link_id, k))->dst;
        if (NODE(f, sp)->d.kind != FAB_NET_SPINE)
            continue;
        bool all = true;
        for (int i = 0; i < n && all; i++) {
            fab_node_id leaf = LINK(f, first_out(f, nic_of(f, gpus[i]), FAB_NET_LEAF))->dst;
            all = fabric_link_between(f, leaf, sp) != FAB_NONE;
        }
        if (all)
            g_array_append_val(spines, sp);
    }
    fab_node_id root = spines->len ? g_array_index(spines, fab_node_id, hint % spines->len) : FAB_NONE;
    g_array_free(spines, TRUE);
    return root;
}

const fab_route *fabric_route_switch(fabric *f, fab_node_id gpu, fab_node_id sw, bool up, GError **err)
{
    route_key key = {.src = up ? gpu : sw, .dst = up ? sw : gpu, .flow = UINT32_MAX - 1};
    fab_route *r = route_find(f->routes, &key);
    if (r)
        return r;
    fab_node_id nic = nic_of(f, gpu);
    fab_link_id nl = nic == FAB_NONE ? FAB_NONE : first_out(f, nic, FAB_NET_LEAF);
    fab_node_id leaf = nl == FAB_NONE ? FAB_NONE : LINK(f, nl)->dst;
    fab_link_id ls = leaf == FAB_NONE || leaf == sw ? FAB_NONE : fabric_link_between(f, leaf, sw);
    if (leaf == FAB_NONE || (leaf != sw && ls == FAB_NONE)) {
        g_set_error(err, FABRIC_ERROR, FABRIC_ERROR_UNREACHABLE, "no route between %s and switch %s",
                    NODE(f, gpu)->d.name, NODE(f, sw)->d.name);
        return NULL;
    }
    GArray *p = f->rt_path;
    g_array_set_size(p, 0);
    if (up) {
        if (nic != gpu)
            leg(f, gpu, nic, NODE(f, gpu)->d.server, false, p);
        g_array_append_val(p, nl);
        if (ls != FAB_NONE)
            g_array_append_val(p, ls);
    } else {
        if (ls != FAB_NONE) {
            fab_link_id down = ls ^ 1;
            g_array_append_val(p, down);
        }
        fab_link_id ln = nl ^ 1;
        g_array_append_val(p, ln);
        if (nic != gpu)
            leg(f, nic, gpu, NODE(f, gpu)->d.server, false, p);
    }
    assemble(f, up ? gpu : sw, up ? sw : gpu, p, f->rt_hops);
    return route_store(f, f->routes, &key, (const fab_link_id *)f->rt_hops->data, f->rt_hops->len);
}

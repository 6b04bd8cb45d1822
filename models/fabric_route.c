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
 * spliced in. Routes are cached per (src, dst, flow).
 */
#include "fabric_priv.h"

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

static bool p2p_allowed(const fabric *f, const fab_node *a, const fab_node *b)
{
    if (!f->p2p)
        return false;
    return f->p2p_xsocket || a->d.socket == b->d.socket;
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

/* NIC -> leaf -> [spine] -> leaf -> NIC, spine picked by hash. */
static bool net_path(fabric *f, fab_node_id na, fab_node_id nb, guint64 hash, GArray *out)
{
    fab_link_id up = first_out(f, na, FAB_NET_LEAF), down_l = first_out(f, nb, FAB_NET_LEAF);
    if (up == FAB_NONE || down_l == FAB_NONE)
        return false;
    fab_node_id la = LINK(f, up)->dst, lb = LINK(f, down_l)->dst;
    fab_link_id down = down_l ^ 1; /* leaf_b -> nic_b */
    g_array_append_val(out, up);
    if (la != lb) {
        GArray *o = NODE(f, la)->out;
        guint nsp = 0;
        for (guint i = 0; i < o->len; i++)
            nsp += NODE(f, LINK(f, g_array_index(o, fab_link_id, i))->dst)->d.kind == FAB_NET_SPINE;
        bool ok = false;
        for (guint tries = 0; tries < nsp && !ok; tries++) {
            guint want = (guint)((hash + tries) % nsp), seen = 0;
            for (guint i = 0; i < o->len; i++) {
                fab_link_id l = g_array_index(o, fab_link_id, i);
                if (NODE(f, LINK(f, l)->dst)->d.kind != FAB_NET_SPINE || seen++ != want)
                    continue;
                fab_link_id l2 = fabric_link_between(f, LINK(f, l)->dst, lb);
                if (l2 != FAB_NONE) {
                    g_array_append_val(out, l);
                    g_array_append_val(out, l2);
                    ok = true;
                }
                break;
            }
        }
        if (!ok)
            return false;
    }
    g_array_append_val(out, down);
    return true;
}

void fabric_gpu_set_nic(fabric *f, fab_node_id gpu, fab_node_id nic) { NODE(f, gpu)->nic = nic; }

/* The in-server path from `from` to node `to` (a GPU and its NIC), cached:
 * every pair of GPUs on two servers shares these legs. Appends to p. */
static bool leg(fabric *f, fab_node_id from, fab_node_id to, int server, GArray *p)
{
    route_key key = {.src = from, .dst = to, .flow = 0};
    fab_route *r = g_hash_table_lookup(f->legs, &key);
    if (!r) {
        GArray *tmp = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
        if (shortest(f, from, &(target){.id = to}, server, server, tmp) == FAB_NONE) {
            g_array_free(tmp, TRUE);
            return false;
        }
        r = g_malloc(sizeof *r + tmp->len * sizeof(fab_link_id));
        r->nhops = tmp->len;
        memcpy(r->hop, tmp->data, tmp->len * sizeof(fab_link_id));
        g_array_free(tmp, TRUE);
        g_hash_table_insert(f->legs, g_memdup2(&key, sizeof key), r);
    }
    g_array_append_vals(p, r->hop, r->nhops);
    return true;
}

static bool cross_server(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow, GArray *p)
{
    fab_node *a = NODE(f, src), *b = NODE(f, dst);
    fab_node_id na = a->d.kind == FAB_NIC ? src : a->nic, nb = b->d.kind == FAB_NIC ? dst : b->nic;
    target tn = {.kind = FAB_NIC, .id = FAB_NONE, .server = a->d.server, .socket = -2};
    if (na == FAB_NONE)
        na = shortest(f, src, &tn, a->d.server, a->d.server, p);
    else if (na != src && !leg(f, src, na, a->d.server, p))
        return false;
    if (na == FAB_NONE)
        return false;
    if (nb == FAB_NONE) {
        /* the destination NIC nearest to dst: search from dst, then reverse */
        GArray *rev = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
        tn.server = b->d.server;
        nb = shortest(f, dst, &tn, b->d.server, b->d.server, rev);
        g_array_free(rev, TRUE);
        if (nb == FAB_NONE)
            return false;
    }
    guint64 h = (guint64)src * 2654435761u + (guint64)dst * 40503u + flow * 2246822519u;
    if (!net_path(f, na, nb, h ^ (h >> 17), p))
        return false;
    return nb == dst || leg(f, nb, dst, b->d.server, p);
}

static bool plain_path(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow, GArray *p)
{
    fab_node *a = NODE(f, src), *b = NODE(f, dst);
    target t = {.id = dst};
    bool same_domain = a->d.domain >= 0 && a->d.domain == b->d.domain;
    if (a->d.server != b->d.server && !same_domain)
        return cross_server(f, src, dst, flow, p); /* only the network joins them */
    if (shortest(f, src, &t, a->d.server, b->d.server, p) != FAB_NONE) {
        if (a->d.kind == FAB_GPU && b->d.kind == FAB_GPU && !has_kind(f, p, 0, LINK_NVLINK) &&
            !p2p_allowed(f, a, b)) {
            /* stage through the source socket's host memory */
            g_array_set_size(p, 0);
            target tm = {.kind = FAB_HOSTMEM, .id = FAB_NONE, .server = a->d.server, .socket = a->d.socket};
            fab_node_id m = shortest(f, src, &tm, a->d.server, a->d.server, p);
            if (m == FAB_NONE)
                return false;
            return shortest(f, m, &t, a->d.server, b->d.server, p) != FAB_NONE;
        }
        return true;
    }
    if (a->d.server == b->d.server)
        return false;
    return cross_server(f, src, dst, flow, p);
}

/* Splice endpoint and transit servers into a path of graph links. */
static fab_route *assemble(fabric *f, fab_node_id src, fab_node_id dst, const GArray *p)
{
    GArray *h = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    if (p->len && NODE(f, src)->tx != FAB_NONE)
        g_array_append_val(h, NODE(f, src)->tx);
    for (guint i = 0; i < p->len; i++) {
        fab_link_id l = g_array_index(p, fab_link_id, i);
        if (i > 0) {
            fab_link_id prev = g_array_index(p, fab_link_id, i - 1);
            fab_node *mid = NODE(f, LINK(f, l)->src);
            if (mid->transit != FAB_NONE && LINK(f, prev)->d.kind != LINK_MEM && LINK(f, l)->d.kind != LINK_MEM)
                g_array_append_val(h, mid->transit);
        }
        g_array_append_val(h, l);
    }
    if (p->len && NODE(f, dst)->rx != FAB_NONE)
        g_array_append_val(h, NODE(f, dst)->rx);
    fab_route *r = g_malloc(sizeof *r + h->len * sizeof(fab_link_id));
    r->nhops = h->len;
    memcpy(r->hop, h->data, h->len * sizeof(fab_link_id));
    g_array_free(h, TRUE);
    return r;
}

const fab_route *fabric_route(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow, GError **err)
{
    g_assert(src < f->nodes->len && dst < f->nodes->len);
    route_key key = {.src = src, .dst = dst, .flow = flow};
    fab_route *r = g_hash_table_lookup(f->routes, &key);
    if (r)
        return r;
    GArray *p = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    if (src != dst && !plain_path(f, src, dst, flow, p)) {
        g_set_error(err, FABRIC_ERROR, FABRIC_ERROR_UNREACHABLE, "no route from %s to %s",
                    NODE(f, src)->d.name, NODE(f, dst)->d.name);
        g_array_free(p, TRUE);
        return NULL;
    }
    r = assemble(f, src, dst, p);
    g_array_free(p, TRUE);
    g_hash_table_insert(f->routes, g_memdup2(&key, sizeof key), r);
    return r;
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
    GArray *tmp = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    target tn = {.kind = FAB_NIC, .id = FAB_NONE, .server = g->d.server, .socket = -2};
    fab_node_id n = shortest(f, gpu, &tn, g->d.server, g->d.server, tmp);
    g_array_free(tmp, TRUE);
    return n;
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
    fab_route *r = g_hash_table_lookup(f->routes, &key);
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
    GArray *p = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    if (up) {
        if (nic != gpu)
            leg(f, gpu, nic, NODE(f, gpu)->d.server, p);
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
            leg(f, nic, gpu, NODE(f, gpu)->d.server, p);
    }
    r = assemble(f, up ? gpu : sw, up ? sw : gpu, p);
    g_array_free(p, TRUE);
    g_hash_table_insert(f->routes, g_memdup2(&key, sizeof key), r);
    return r;
}

/* models/fabric.c - the fabric graph (build phase) and its read access.
 *
 * Nodes and directed links live in GArrays indexed by id; a full-duplex link
 * is two consecutive directed links (a->b even, b->a odd). Routing lives in
 * fabric_route.c, the chunk-moving run phase in fabric_run.c; they share the
 * private layout in fabric_priv.h.
 */
#include "fabric_priv.h"
#include "sim/hash.h"

#include <math.h>

G_DEFINE_QUARK(conveyor-fabric-error-quark, fabric_error)

fabric *fabric_new(void)
{
    fabric *f = g_new0(fabric, 1);
    f->nodes = g_array_new(FALSE, TRUE, sizeof(fab_node));
    f->links = g_array_new(FALSE, TRUE, sizeof(fab_link));
    f->gpus = g_array_new(FALSE, FALSE, sizeof(fab_node_id));
    f->pair = g_hash_table_new_full(sim_int64_hash, g_int64_equal /* keys (a << 32 | b) */, g_free, NULL);
    f->routes = g_hash_table_new(route_key_hash, route_key_equal);
    f->legs = g_hash_table_new(route_key_hash, route_key_equal);
    f->arena_blocks = g_ptr_array_new_with_free_func(g_aligned_free); /* sim_mem_block */
    f->up_links = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    f->rt_path = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    f->rt_hops = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    f->rt_tmp = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    f->sp_touched = g_array_new(FALSE, FALSE, sizeof(fab_node_id));
    f->sp_open = g_array_new(FALSE, FALSE, sizeof(fab_node_id));
    f->p2p = true;
    f->p2p_xsocket = true;
    f->p2p_level = -1;
    f->pxn = true;
    return f;
}

void fabric_free(fabric *f)
{
    if (!f)
        return;
    for (guint i = 0; i < f->nodes->len; i++) {
        fab_node *n = &g_array_index(f->nodes, fab_node, i);
        g_free((char *)n->d.name);
        g_array_free(n->out, TRUE);
    }
    for (guint i = 0; i < f->links->len; i++)
        g_free(g_array_index(f->links, fab_link, i).name);
    g_array_free(f->nodes, TRUE);
    g_array_free(f->links, TRUE);
    g_array_free(f->gpus, TRUE);
    g_hash_table_destroy(f->pair);
    g_hash_table_destroy(f->routes);
    g_hash_table_destroy(f->legs);
    g_free(f->gpu_at);
    g_free(f->pxn_up);
    g_free(f->pxn_down);
    g_ptr_array_unref(f->arena_blocks);
    g_free(f->up_idx);
    g_array_free(f->up_links, TRUE);
    g_array_free(f->rt_path, TRUE);
    g_array_free(f->rt_hops, TRUE);
    g_array_free(f->rt_tmp, TRUE);
    g_array_free(f->sp_touched, TRUE);
    g_array_free(f->sp_open, TRUE);
    g_free(f->dist);
    g_free(f->via);
    g_free(f->tally);
    fabric_run_free(f);
    g_free(f);
}

fab_node_id fabric_node_add(fabric *f, const fab_node_desc *d)
{
    fab_node n = {.d = *d, .tx = FAB_NONE, .rx = FAB_NONE, .transit = FAB_NONE, .nic = FAB_NONE};
    n.d.name = g_strdup(d->name ? d->name : "?");
    n.out = g_array_new(FALSE, FALSE, sizeof(fab_link_id));
    fab_node_id id = f->nodes->len;
    g_array_append_val(f->nodes, n);
    if (d->kind == FAB_GPU)
        g_array_append_val(f->gpus, id);
    fabric_route_forget(f);
    if (d->transit_Bps > 0) {
        char *nm = g_strdup_printf("%s.transit", n.d.name);
        fab_link_id s = fabric_server_add(f, nm, d->transit_Bps, d->transit_lat_ps);
        g_free(nm);
        NODE(f, id)->transit = s;
    }
    return id;
}

static fab_link_id link_push(fabric *f, fab_node_id a, fab_node_id b, const fab_link_desc *d,
                             const char *name)
{
    fab_link l = {.src = a, .dst = b, .d = *d};
    l.name = name ? g_strdup(name)
                  : g_strdup_printf("%s->%s", NODE(f, a)->d.name, NODE(f, b)->d.name);
    l.ps_per_byte = 1e12 / (d->bw_Bps * d->eff);
    fab_link_id id = f->links->len;
    g_array_append_val(f->links, l);
    fabric_run_grow(f);
    return id;
}

static void pair_remember(fabric *f, fab_node_id a, fab_node_id b, fab_link_id l)
{
    gint64 key = ((gint64)a << 32) | b;
    if (g_hash_table_contains(f->pair, &key))
        return;
    g_hash_table_insert(f->pair, g_memdup2(&key, sizeof key), GUINT_TO_POINTER(l + 1));
}

fab_link_id fabric_link_add(fabric *f, fab_node_id a, fab_node_id b, const fab_link_desc *d)
{
    g_assert(a < f->nodes->len && b < f->nodes->len && a != b);
    g_assert(d->bw_Bps > 0 && d->eff > 0 && d->eff <= 1 && d->lat_ps >= 0);
    g_assert(d->kind != LINK_SERVER);
    /* keep full-duplex pairs at (even, odd) ids */
    if (f->links->len % 2)
        link_push(f, a, a, &(fab_link_desc){.kind = LINK_SERVER, .bw_Bps = 1, .eff = 1}, "pad");
    fab_link_id ab = link_push(f, a, b, d, NULL);
    fab_link_id ba = link_push(f, b, a, d, NULL);
    g_array_append_val(NODE(f, a)->out, ab);
    g_array_append_val(NODE(f, b)->out, ba);
    pair_remember(f, a, b, ab);
    pair_remember(f, b, a, ba);
    fabric_route_forget(f);
    return ab;
}

fab_link_id fabric_server_add(fabric *f, const char *name, double bw_Bps, int64_t lat_ps)
{
    g_assert(bw_Bps > 0 && lat_ps >= 0);
    fab_link_desc d = {.kind = LINK_SERVER, .bw_Bps = bw_Bps, .eff = 1, .lat_ps = lat_ps, .count = 1};
    return link_push(f, FAB_NONE, FAB_NONE, &d, name ? name : "server");
}

void fabric_node_set_endpoint(fabric *f, fab_node_id n, double tx_Bps, double rx_Bps)
{
    fab_node *nd = NODE(f, n);
    if (tx_Bps > 0) {
        char *nm = g_strdup_printf("%s.tx", nd->d.name);
        fab_link_id s = fabric_server_add(f, nm, tx_Bps, 0);
        NODE(f, n)->tx = s;
        g_free(nm);
    }
    if (rx_Bps > 0) {
        char *nm = g_strdup_printf("%s.rx", NODE(f, n)->d.name);
        fab_link_id s = fabric_server_add(f, nm, rx_Bps, 0);
        NODE(f, n)->rx = s;
        g_free(nm);
    }
}

void fabric_set_p2p(fabric *f, bool enabled)
{
    f->p2p = enabled;
    fabric_route_forget(f);
}

void fabric_set_p2p_xsocket(fabric *f, bool enabled)
{
    f->p2p_xsocket = enabled;
    fabric_route_forget(f);
}

void fabric_set_p2p_level(fabric *f, int level)
{
    f->p2p_level = level < 0 ? -1 : level;
    fabric_route_forget(f);
}

void fabric_set_adaptive(fabric *f, bool enabled) { f->adaptive = enabled; }
void fabric_set_pxn(fabric *f, bool enabled) { f->pxn = enabled; }
bool fabric_pxn(const fabric *f) { return f->pxn; }
bool fabric_adaptive(const fabric *f) { return f->adaptive; }

uint32_t fabric_node_count(const fabric *f) { return f->nodes->len; }
uint32_t fabric_link_count(const fabric *f) { return f->links->len; }
const fab_node_desc *fabric_node(const fabric *f, fab_node_id n) { return &NODE(f, n)->d; }
fab_node_id fabric_link_src(const fabric *f, fab_link_id l) { return LINK(f, l)->src; }
fab_node_id fabric_link_dst(const fabric *f, fab_link_id l) { return LINK(f, l)->dst; }
const fab_link_desc *fabric_link(const fabric *f, fab_link_id l) { return &LINK(f, l)->d; }
const char *fabric_link_name(const fabric *f, fab_link_id l) { return LINK(f, l)->name; }
fab_link_id fabric_link_queue(const fabric *f, fab_link_id l) { return LINK(f, l)->d.kind == LINK_MEM ? (l & ~1u) : l; }

uint32_t *fabric_link_tally(fabric *f)
{
    if (f->tally_len < 2 * f->links->len) { /* all 0: the callers leave it so */
        g_free(f->tally);
        f->tally_len = 2 * f->links->len;
        f->tally = g_new0(uint32_t, f->tally_len);
    }
    return f->tally;
}
const GArray *fabric_gpus(const fabric *f) { return f->gpus; }

void fabric_node_links(const fabric *f, fab_node_id n, const fab_link_id **out, uint32_t *len)
{
    GArray *o = NODE(f, n)->out;
    *out = (const fab_link_id *)o->data;
    *len = o->len;
}

fab_link_id fabric_link_between(const fabric *f, fab_node_id a, fab_node_id b)
{
    gint64 key = ((gint64)a << 32) | b;
    gpointer v = g_hash_table_lookup(f->pair, &key);
    return v ? GPOINTER_TO_UINT(v) - 1 : FAB_NONE;
}

/* topologies/topo_dot.c - Graphviz text of a built topology.
 *
 * One vertex per fabric node (shape by kind), one undirected edge per
 * full-duplex link labelled "kind xN GB/s" (raw rate, one direction).
 * Private servers (LINK_SERVER) are not drawn.
 */
#include <stdio.h>

#include "topologies/topo_internal.h"

static const char *const dot_shape[FAB_NODE_KINDS] = {
    [FAB_GPU] = "box",         [FAB_PCIE_SWITCH] = "diamond", [FAB_CPU] = "octagon",
    [FAB_HOSTMEM] = "cylinder", [FAB_NVSWITCH] = "hexagon",  [FAB_NIC] = "component",
    [FAB_NET_LEAF] = "trapezium", [FAB_NET_SPINE] = "invtrapezium",
};

static const char *const dot_kind[LINK_KINDS] = {
    [LINK_PCIE] = "pcie", [LINK_NVLINK] = "nvlink", [LINK_XSOCKET] = "xsocket",
    [LINK_MEM] = "mem",   [LINK_NET] = "net",       [LINK_SERVER] = "server",
};

/* Link colours by kind, so the NVLink fabric stands out. */
static const char *const dot_color[LINK_KINDS] = {
    [LINK_PCIE] = "black", [LINK_NVLINK] = "green4", [LINK_XSOCKET] = "red",
    [LINK_MEM] = "gray40", [LINK_NET] = "blue",      [LINK_SERVER] = "gray",
};

char *topo_dot(const topo *t)
{
    GString *s = g_string_new(NULL);
    const fabric *f = t->fab;
    g_string_append_printf(s, "graph \"%s\" {\n  graph [overlap=false, fontsize=10];\n"
                              "  node [fontsize=10];\n  edge [fontsize=8];\n",
                           t->name);
    for (fab_node_id n = 0; n < fabric_node_count(f); n++) {
        const fab_node_desc *d = fabric_node(f, n);
        g_string_append_printf(s, "  \"%s\" [shape=%s%s];\n", d->name, dot_shape[d->kind],
                               d->kind == FAB_GPU ? ", style=filled, fillcolor=palegreen" : "");
    }
    for (fab_link_id l = 0; l < fabric_link_count(f); l += 2) {
        const fab_link_desc *d = fabric_link(f, l);
        if (d->kind == LINK_SERVER || fabric_link_src(f, l) == fabric_link_dst(f, l))
            continue;
        g_string_append_printf(s, "  \"%s\" -- \"%s\" [label=\"%s x%d %.1f GB/s\", color=%s];\n",
                               fabric_node(f, fabric_link_src(f, l))->name,
                               fabric_node(f, fabric_link_dst(f, l))->name, dot_kind[d->kind],
                               d->count, d->bw_Bps / 1e9, dot_color[d->kind]);
    }
    g_string_append(s, "}\n");
    return g_string_free(s, FALSE);
}

/* topologies/topo_dot.c - Graphviz text of a built topology.
 *
 * One vertex per fabric node (shape by kind), one undirected edge per
 * full-duplex link labelled "kind xN GB/s" (raw rate, one direction).
 * Private servers (LINK_SERVER) are not drawn. Node names are ids the
 * loader restricted to letters, digits and "_-."; every name is still
 * written through dot_quote, since the graph's name may be a file name.
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

/* Append name as a DOT quoted string: '"' escaped, a backslash or a
 * control byte written as '_' (in DOT a backslash before the closing quote
 * escapes it, and a backslash itself has no escape). */
static void dot_quote(GString *s, const char *name)
{
    g_string_append_c(s, '"');
    for (const char *p = name; *p; p++)
        if (*p == '"')
            g_string_append(s, "\\\"");
        else
            g_string_append_c(s, *p == '\\' || g_ascii_iscntrl(*p) ? '_' : *p);
    g_string_append_c(s, '"');
}

char *topo_dot(const topo *t)
{
    GString *s = g_string_new("graph ");
    const fabric *f = t->fab;
    dot_quote(s, t->name);
    g_string_append(s, " {\n  graph [overlap=false, fontsize=10];\n  node [fontsize=10];\n  edge [fontsize=8];\n");
    for (fab_node_id n = 0; n < fabric_node_count(f); n++) {
        const fab_node_desc *d = fabric_node(f, n);
        g_string_append(s, "  ");
        dot_quote(s, d->name);
        g_string_append_printf(s, " [shape=%s%s];\n", dot_shape[d->kind],
                               d->kind == FAB_GPU ? ", style=filled, fillcolor=palegreen" : "");
    }
    for (fab_link_id l = 0; l < fabric_link_count(f); l += 2) {
        const fab_link_desc *d = fabric_link(f, l);
        if (d->kind == LINK_SERVER || fabric_link_src(f, l) == fabric_link_dst(f, l))
            continue;
        g_string_append(s, "  ");
        dot_quote(s, fabric_node(f, fabric_link_src(f, l))->name);
        g_string_append(s, " -- ");
        dot_quote(s, fabric_node(f, fabric_link_dst(f, l))->name);
        g_string_append_printf(s, " [label=\"%s x%d %.1f GB/s\", color=%s];\n", dot_kind[d->kind], d->count,
                               d->bw_Bps / 1e9, dot_color[d->kind]);
    }
    g_string_append(s, "}\n");
    return g_string_free(s, FALSE);
}

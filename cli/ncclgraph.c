/* cli/ncclgraph.c - see ncclgraph.h. */
#include "ncclgraph.h"

#include <stdio.h>

/* NCCL's trees (each rank's "Trees" line) against the trees the simulation
 * runs (coll_tree_links over its ring channel count). */
void ncclgraph_print_trees(const nccltests_tree *trees, size_t ntrees, const coll_system *sys)
{
    int n = sys->nranks, nch = n > 1 ? coll_channels(sys, ALGO_RING) : 1, same = 0, cmp = 0, shown = 0;
    GString *diff = g_string_new(NULL);
    for (size_t j = 0; j < ntrees; j++) {
        const nccltests_tree *t = &trees[j];
        if (t->channel >= nch || t->rank >= n)
            continue;
        cmp++;
        int up, down[3];
        coll_tree_links(sys, t->channel, nch, t->rank, &up, down);
        if (up == t->up && down[0] == t->down[0] && down[1] == t->down[1] && down[2] == t->down[2]) {
            same++;
            continue;
        }
        if (shown++ < 3)
            g_string_append_printf(diff, "# trees: rank %d channel %d (line %d): NCCL %d/%d/%d->%d->%d, conveyor "
                                   "%d/%d/%d->%d->%d\n", t->rank, t->channel, t->line, t->down[0], t->down[1],
                                   t->down[2], t->rank, t->up, down[0], down[1], down[2], t->rank, up);
    }
    printf("# trees: the log's Trees lines give %zu (rank, channel) pairs; %d of the %d on this system's ranks and %d "
           "channels the same\n", ntrees, same, cmp, nch);
    fputs(diff->str, stdout);
    if (shown > 3)
        printf("# trees: %d more differ\n", shown - 3);
    g_string_free(diff, TRUE);
}

/* NCCL's rings (rank 0's "Channel cc/NN :" lines) against the rings the
 * simulation runs on this system (coll_ring_rank), each from rank 0; a line
 * cut at NCCL's 128 bytes is compared as far as it goes. */
void ncclgraph_print_rings(const nccltests_ring *rings, size_t nrings, const coll_system *sys)
{
    int n = sys->nranks, nch = n > 1 ? coll_channels(sys, ALGO_RING) : 1, same = 0, cmp = 0, shown = 0;
    GString *diff = g_string_new(NULL);
    for (size_t j = 0; j < nrings; j++) {
        const nccltests_ring *r = &rings[j];
        if (r->channel >= nch)
            continue;
        cmp++;
        int k = r->n < NCCLTESTS_RING_MAX ? r->n : NCCLTESTS_RING_MAX, at = 0;
        while (at < n && coll_ring_rank(sys, r->channel, at) != 0)
            at++;
        bool eq = r->n <= n && (r->n == n || k == NCCLTESTS_RING_MAX);
        for (int i = 0; eq && i < k; i++)
            eq = coll_ring_rank(sys, r->channel, (at + i) % n) == r->rank[i];
        if (eq) {
            same++;
            continue;
        }
        if (shown++ < 3) {
            g_string_append_printf(diff, "# rings: channel %d (line %d): NCCL", r->channel, r->line);
            for (int i = 0; i < k; i++)
                g_string_append_printf(diff, " %d", r->rank[i]);
            g_string_append(diff, r->n > k ? " ..., conveyor" : ", conveyor");
            for (int i = 0; i < n && i < NCCLTESTS_RING_MAX; i++)
                g_string_append_printf(diff, " %d", coll_ring_rank(sys, r->channel, (at + i) % n));
            g_string_append(diff, n > NCCLTESTS_RING_MAX ? " ...\n" : "\n");
        }
    }
    printf("# rings: the log has %zu ring channel%s of %d (rank 0's Channel lines); conveyor runs %d on this system: "
           "%d of the %d compared in the same order\n", nrings, nrings == 1 ? "" : "s",
           rings[0].nchannels, nch, same, cmp);
    fputs(diff->str, stdout);
    if (shown > 3)
        printf("# rings: %d more channels differ\n", shown - 3);
    g_string_free(diff, TRUE);
}


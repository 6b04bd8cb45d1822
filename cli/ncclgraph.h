/* cli/ncclgraph.h - the rings and trees NCCL's init log printed (its
 * "Channel cc/NN :" ring lines and each rank's "Trees" line) against the ones
 * conveyor runs on a system: for `validate` (an nccl-tests log) and `replay`
 * (an NCCL debug log). */
#ifndef CLI_NCCLGRAPH_H
#define CLI_NCCLGRAPH_H

#include <stddef.h>

#include "models/coll.h"
#include "traces/nccltests.h"

/* "# rings: the log has N ring channels of M ...; K of the C compared in the
 * same order", then up to three that differ (nrings >= 1). */
void ncclgraph_print_rings(const nccltests_ring *rings, size_t nrings, const coll_system *sys);

/* "# trees: the log's Trees lines give N (rank, channel) pairs; K of the C
 * ... the same", then up to three that differ. */
void ncclgraph_print_trees(const nccltests_tree *trees, size_t ntrees, const coll_system *sys);

#endif

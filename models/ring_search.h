/* models/ring_search.h - the rings NCCL's search finds inside a server whose
 * GPUs are joined by direct NVLinks of different widths (a mesh, such as the
 * DGX-1's hybrid cube mesh).
 *
 * On an NVSwitch, or over PCIe, every GPU pair is alike and NCCL's rings
 * follow the GPUs' order; conveyor keeps rank order there (n = 0). On a mesh
 * NCCL's search (src/graph/search.cc) only builds rings whose every hop is an
 * NVLink: rank order would send two of the DGX-1's eight hops through the
 * CPUs. Here each ring is a Hamiltonian cycle over direct GPU-GPU NVLinks, at
 * one link's rate; a pair joined by k links carries up to k rings in each
 * direction (NCCL's search consumes a link's bandwidth per ring it routes).
 * Every Hamiltonian cycle from GPU 0 is listed (up to 4,096), then the
 * largest set of them that fits the links together is kept (a bounded
 * backtracking search; the DGX-1's 60 cycles give 6 rings, one per NVLink
 * a GPU has). */
#ifndef MODELS_RING_SEARCH_H
#define MODELS_RING_SEARCH_H

#include <stdint.h>

#include "models/fabric.h"

#define COLL_RING_MAX_ORDERS 16
#define COLL_RING_MAX_PPN 32

typedef struct {
    int n;             /* rings found; 0: rank order (pairs alike, no NVLink cycle, or too many GPUs) */
    int ppn;           /* GPUs per ring */
    double speed_GBps; /* one ring's rate: one NVLink's bw x eff (NCCL's bwIntra) */
    uint8_t order[COLL_RING_MAX_ORDERS][COLL_RING_MAX_PPN]; /* ring i: local GPU indices in ring order */
} coll_rings;

/* Search the rings of the ppn GPUs gpu[0..ppn-1] (one server) on f. */
void coll_ring_search(const fabric *f, const fab_node_id *gpu, int ppn, coll_rings *out);

/* Whether the rings carry the traffic: their first hop's route is all
 * NVLink (NCCL_P2P_DISABLE or a low NCCL_P2P_LEVEL sends GPU pairs through
 * host memory, and NCCL's rings then follow the PCI order). gpu: rank ->
 * GPU node of the system the rings were searched for. */
bool coll_rings_usable(const coll_rings *r, fabric *f, const fab_node_id *gpu, int ppn);

#endif

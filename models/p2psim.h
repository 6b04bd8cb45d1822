/* models/p2psim.h - what CUDA's p2pBandwidthLatencyTest measures, simulated
 * on a models/fabric graph with real transfers (not closed forms):
 * unidirectional and bidirectional copy bandwidth and 1-element copy
 * latency between every GPU pair, plus the P2P connectivity matrix.
 * Results are plain row-major n x n arrays; cli/cmd_p2p.c prints them in
 * the sample's layout (traces/p2pmatrix).
 */
#ifndef MODELS_P2PSIM_H
#define MODELS_P2PSIM_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "models/compute.h"
#include "models/fabric.h"

/* Bytes of one simulated bandwidth copy. The sample copies 40,000,000
 * ints (160 MB) per repetition; with a pipelined chunked transfer the rate
 * no longer depends on size beyond a few MB, so 64 MiB is used. */
#define P2PSIM_COPY_BYTES (64ull << 20)
/* Chunk and window of a copy-engine DMA. The fabric forwards whole chunks
 * (store-and-forward), which real PCIe/NVLink (cut-through, 256 B TLPs) do
 * not; 2 MiB chunks cost 3 extra chunk times on a 4-hop path (~9% at 64 MiB),
 * so 256 KiB chunks are used (fill cost ~1%) with 32 in flight (the same
 * 8 MiB in flight as 2 MiB x 4). */
#define P2PSIM_CHUNK_BYTES (256ull << 10)
#define P2PSIM_WINDOW 32u
/* The latency test copies one element (4 bytes). */
#define P2PSIM_LAT_BYTES 4ull
/* Fixed cost of one DMA copy (cudaMemcpyPeerAsync launch + copy-engine
 * setup), us, added once per copy on top of the simulated 4-byte transfer
 * (twice for a host-staged copy, which is a D2H then an H2D copy).
 * Calibrated from one number of measured file 22 (RTX 2080 Ti, PCIe Gen3):
 * the GPU-local 1-element copy latency, diagonal 1.25..1.33 us, whose route
 * has 0 hops; not fitted per pair. */
#define P2PSIM_COPY_OVERHEAD_US 1.3
/* Diagonal bandwidth: a device-local copy reads and writes device memory,
 * and p2pBandwidthLatencyTest counts both ("gb *= 2; // must count both the
 * read and the write here"), so it prints the HBM traffic rate of a copy:
 * hbm_Bps x the copy's efficiency (docs/validation-p2p.md). */
#define P2PSIM_DIAG_HBM_FACTOR COMPUTE_COPY_HBM_EFF

typedef struct {
    uint64_t copy_bytes, chunk_bytes, lat_bytes;
    uint32_t window;
    double overhead_us, diag_factor;
    /* stage every GPU pair through the source socket's host memory, NVLink
     * pairs included (the sample's P2P=Disabled); default false */
    bool force_staged;
} p2psim_params;

void p2psim_defaults(p2psim_params *p);

/* Simulated rate of one copy a -> b (a != b), GB/s (1e9). NAN with *err
 * set when b is unreachable from a. */
double p2psim_uni_GBps(fabric *f, fab_node_id a, fab_node_id b, const p2psim_params *p, GError **err);
/* Copies a -> b and b -> a started together; the sum of both directions
 * as the sample reports it: 2 x bytes / time of the later one, GB/s. */
double p2psim_bi_GBps(fabric *f, fab_node_id a, fab_node_id b, const p2psim_params *p, GError **err);
/* Latency of a 1-element copy a -> b, us (simulated transfer time plus
 * the per-copy overhead). a == b gives the overhead alone. */
double p2psim_lat_us(fabric *f, fab_node_id a, fab_node_id b, const p2psim_params *p, GError **err);

/* Fills, for the n GPUs `gpus` of `f`, row-major n x n matrices: uni/bi
 * bandwidth (GB/s) and GPU latency (us) of the Enabled (enabled=true) or
 * Disabled kind (every pair staged through host memory: p->force_staged is
 * implied); `con`, if not NULL, gets the connectivity matrix (1 where the
 * route is direct P2P, not staged through host memory). Diagonal bandwidth
 * = hbm_Bps x diag_factor / 1e9. FALSE with *err on an unreachable pair. */
gboolean p2psim_fill(fabric *f, const fab_node_id *gpus, int n, double hbm_Bps, bool enabled,
                     const p2psim_params *p, double *uni, double *bi, double *lat, double *con,
                     GError **err);

#endif

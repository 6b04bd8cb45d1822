/* models/proto.h - NCCL's three protocols: wire efficiency, buffer slots,
 * chunk and slice sizes, and per-step latencies (NCCL 2.30, see
 * docs/collectives.md for the sources). */
#ifndef MODELS_PROTO_H
#define MODELS_PROTO_H

#include <stdint.h>

typedef enum { PROTO_LL, PROTO_LL128, PROTO_SIMPLE, PROTO_COUNT } coll_proto_id;

typedef struct {
    const char *name;
    double wire_eff;      /* payload bytes per wire byte: LL 8/16, LL128 120/128, Simple 1 */
    uint64_t step_bytes;  /* buffer bytes per step = buffSize / NCCL_STEPS */
    uint64_t chunk_bytes; /* Ring AllReduce/AllGather/ReduceScatter payload chunk */
    uint64_t chunk_bytes_pipe; /* Broadcast/Reduce/P2P chunk */
    int slices_per_chunk; /* Simple: CHUNKSTEPS/SLICESTEPS = 2; others 1 */
    int slots;            /* slices in flight per connection: NCCL_STEPS / SLICESTEPS */
    uint64_t grain;       /* chunk alignment, bytes */
} coll_proto;

const coll_proto *coll_proto_get(coll_proto_id p);
const char *coll_proto_name(coll_proto_id p);
/* "LL", "LL128", "Simple" (case-insensitive); -1 if unknown. */
int coll_proto_from_name(const char *s);

/* NCCL's latency tables (us): baseLat[algo][proto], hwLat[hw][algo][proto]
 * with hw 0 NVLINK, 1 PCI, 2 NET and algo in coll_algo_id order. */
double coll_base_lat_us(int algo, coll_proto_id p);
double coll_hw_lat_us(int hw, int algo, coll_proto_id p);

/* NCCL's bandwidth ceilings (tuning.cc), GB/s of payload. sm: compute
 * capability x10; nnodes: servers; cpu_vendor 0 Intel, 1 AMD, 2 ARM. */
/* LL total over all channels (llMaxBws). */
double coll_ll_max_GBps(int sm, int nnodes, int cpu_vendor);
/* Ring LL128 per channel (perChMaxRingLL128Bws). */
double coll_ring_ll128_perch_GBps(int sm);
/* Tree per channel: Simple perChMaxTreeBws, LL128 perChMaxTreeLL128Bws; 0
 * (no per-channel ceiling) for LL. */
double coll_tree_perch_GBps(int sm, int nnodes, coll_proto_id p);
/* NVLSTree per channel (perChMaxNVLSTreeBws). */
double coll_nvls_tree_perch_GBps(int sm, int nnodes);
/* One thread block's Simple copy rate (one channel), GB/s of payload: NCCL's
 * one-node Simple per-channel ceiling (perChMaxTreeBws; the ring's blocks run
 * the same copy loop). Binds only with few channels (NCCL_MAX_NCHANNELS). */
double coll_block_simple_GBps(int sm);
/* NCCL's treeCorrectionFactor for a Tree all-reduce of `bytes`. */
double coll_tree_correction(coll_proto_id p, uint64_t bytes);

#endif

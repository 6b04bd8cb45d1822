/* models/proto.c - protocol constants from NCCL 2.30.7 (src/include/device.h,
 * src/init.cc, src/graph/tuning.cc; summarised in
 * shared/reference/nccl-model.md sections 2-3). */
#include "proto.h"

#include <glib.h>

static const coll_proto protos[PROTO_COUNT] = {
    [PROTO_LL] = {.name = "LL", .wire_eff = 0.5, .step_bytes = 65536, .chunk_bytes = 32768,
                  .chunk_bytes_pipe = 32768, .slices_per_chunk = 1, .slots = 8, .grain = 16},
    [PROTO_LL128] = {.name = "LL128", .wire_eff = 120.0 / 128.0, .step_bytes = 614400,
                     .chunk_bytes = 576000, .chunk_bytes_pipe = 576000, .slices_per_chunk = 1,
                     .slots = 8, .grain = 1920},
    [PROTO_SIMPLE] = {.name = "Simple", .wire_eff = 1.0, .step_bytes = 524288,
                      .chunk_bytes = 2097152, .chunk_bytes_pipe = 524288, .slices_per_chunk = 2,
                      .slots = 4, .grain = 512},
};

const coll_proto *coll_proto_get(coll_proto_id p)
{
    g_assert(p >= 0 && p < PROTO_COUNT);
    return &protos[p];
}

const char *coll_proto_name(coll_proto_id p) { return coll_proto_get(p)->name; }

int coll_proto_from_name(const char *s)
{
    for (int p = 0; p < PROTO_COUNT; p++)
        if (s && !g_ascii_strcasecmp(s, protos[p].name))
            return p;
    return -1;
}

/* Algorithms: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT, Direct. */
static const double base_lat[8][PROTO_COUNT] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0},
    {6.6, 14.0, 8.4},
};

static const double hw_lat[3][8][PROTO_COUNT] = {
    /* NVLINK */
    {{.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0},
     {.6, 1.9, 3.4}},
    /* PCI */
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0},
     {1.0, 2.5, 5.7}},
    /* NET */
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14},
     {2.7, 4.0, 14.0}},
};

double coll_base_lat_us(int algo, coll_proto_id p)
{
    g_assert(algo >= 0 && algo < 8);
    return base_lat[algo][p];
}

double coll_hw_lat_us(int hw, int algo, coll_proto_id p)
{
    g_assert(hw >= 0 && hw < 3 && algo >= 0 && algo < 8);
    return hw_lat[hw][algo][p];
}

static int arch_index(int sm) { return sm >= 100 ? 3 : sm >= 90 ? 2 : sm >= 80 ? 1 : 0; }
static int nodes_index(int nnodes) { return nnodes <= 2 ? (nnodes < 1 ? 0 : nnodes - 1) : 2; }

double coll_ll_max_GBps(int sm, int nnodes, int cpu_vendor)
{
    static const double one[4] = {39.0, 87.7, 141.0, 282.0};
    static const double multi[2][3] = {{39.0, 39.0, 20.4}, {22.5, 22.5, 19.0}};
    if (nnodes <= 1)
        return one[arch_index(sm)];
    return multi[cpu_vendor == 0 ? 0 : 1][nodes_index(nnodes)];
}

double coll_ring_ll128_perch_GBps(int sm)
{
    static const double v[4] = {20, 20, 36.7, 40};
    return v[arch_index(sm)];
}

double coll_tree_perch_GBps(int sm, int nnodes, coll_proto_id p)
{
    static const double simple[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
    static const double ll128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
    int a = arch_index(sm), n = nodes_index(nnodes);
    return p == PROTO_SIMPLE ? simple[a][n] : p == PROTO_LL128 ? ll128[a][n] : 0;
}

double coll_nvls_tree_perch_GBps(int sm, int nnodes)
{
    /* perChMaxNVLSTreeBws (tuning.cc; 0 on one node, where NVLSTree does not run) */
    static const double v[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5}, {0, 96.0, 80.0}};
    return v[arch_index(sm)][nodes_index(nnodes)];
}

double coll_block_simple_GBps(int sm)
{
    /* perChMaxTreeBws, one-node column: NCCL's per-channel ceiling for Simple */
    static const double v[4] = {26.5, 24.0, 38.7, 70.0};
    return v[arch_index(sm)];
}

double coll_tree_correction(coll_proto_id p, uint64_t bytes)
{
    static const double f[PROTO_COUNT][24] = {
        {1, 1, 1, 1, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1, 1, 1, 1, 1},
        {1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1, 1, 1},
        {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
    };
    int i = 0;
    for (uint64_t b = bytes >> 6; b > 1 && i < 23; b >>= 1)
        i++;
    return f[p][i];
}

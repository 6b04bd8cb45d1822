/* models/coll_priv.h - what the collective driver (coll.c) shares with the
 * algorithm files (algo_*.c). Not for use outside models/. */
#ifndef MODELS_COLL_PRIV_H
#define MODELS_COLL_PRIV_H

#include "coll.h"

/* One running collective. */
typedef struct {
    const coll_system *sys;
    const coll_request *req; /* points at req_copy */
    coll_request req_copy;
    const coll_proto *proto; /* points at proto_own */
    coll_proto proto_own;    /* the protocol's constants, Simple's steps at NCCL_BUFFSIZE */
    sim_engine *eng;
    fabric *fab;
    int units_left;     /* state machines that have not finished */
    sim_time start;     /* when the first byte may move (after launch + base latency) */
    GError *err;        /* first failure (route lookup), stops the run */
    GPtrArray *garbage; /* allocations freed after the run */
    sim_time launched;  /* engine time of coll_launch */
    uint64_t events0;   /* engine events at launch */
    GError **async_err; /* where failures after launch go (may be NULL) */
    bool starting;      /* inside the algorithm's start(): failures fail the launch */
    coll_done_fn done;  /* caller's completion callback, or NULL */
    void *done_ctx;
    GHashTable *seen;   /* routes used (coll_run_footprint), or NULL */
} coll_exec;

/* An algorithm: a name, the equation it follows, and its planner. */
typedef struct {
    const char *name;
    const char *summary;
    /* Which collectives it implements on this system (sets *why if not). */
    bool (*supports)(const coll_system *sys, coll_kind kind, const char **why);
    /* Create the per-channel/per-rank state machines and schedule their
     * first events at x->start. Registers allocations in x->garbage. */
    void (*start)(coll_exec *x);
} coll_algo;

extern const coll_algo coll_algo_ring;
extern const coll_algo coll_algo_nvls;
extern const coll_algo coll_algo_nvls_tree;
extern const coll_algo coll_algo_tree;
extern const coll_algo coll_algo_pat;
extern const coll_algo coll_algo_collnet;
extern const coll_algo coll_algo_collnet_chain;
extern const coll_algo coll_algo_direct;

/* CollNet (algo_collnet.c), both algorithms: the checks NCCL applies to
 * either (SHARP fabric, several nodes, all_reduce, at most 8 GPUs a node),
 * and each rail's aggregation switch (garbage-owned array of ppn; NULL with
 * x->err set when a rail's NICs share no switch). */
bool coll_collnet_common(const coll_system *sys, coll_kind kind, const char **why);
/* NVLS (and NVLSTree) on: an NVLS NVSwitch, and more than 2 of the
 * communicator's GPUs on a node or NVLink clique, as ncclNvlsInit requires
 * (src/transport/nvls.cc: gpuCount <= 2, or clique.size <= 2 with MNNVL,
 * leaves it off). The algorithms (algo_nvls.c) and the tuner both ask. */
bool coll_nvls_on(const coll_system *sys);
fab_node_id *coll_collnet_roots(coll_exec *x);

/* A unit (one rank on one channel) finished. */
void coll_exec_unit_done(coll_exec *x);
/* Route between two ranks (cached in the fabric); on failure records the
 * error in x and returns NULL. flow spreads channels over ECMP paths. */
const fab_route *coll_exec_route(coll_exec *x, fab_node_id a, fab_node_id b, uint32_t flow);
/* The same for a send/receive: fabric_route_p2p (PXN across servers). */
const fab_route *coll_exec_route_p2p(coll_exec *x, fab_node_id a, fab_node_id b, uint32_t flow);
/* Per-step protocol latency for a route, ps: NCCL's hwLat for the route's
 * hardware class minus the wire latency the fabric already simulates; a P2P
 * read adds the request's trip. */
int64_t coll_exec_step_lat_ps(coll_exec *x, const fab_route *r, coll_algo_id algo);
/* One thread block (a channel on one rank) and the routes it sends on. */
typedef struct {
    const fab_route *route[4];
    int nroutes;
} coll_block_routes;
/* Channels share links (docs/collectives.md): each block's share of the
 * links its routes cross, wire bytes/s: the smallest over those links of
 * the link's rate times the block's routes on it over all the given routes
 * on it. 0 for a block without routes. */
void coll_link_shares(coll_exec *x, const coll_block_routes *b, size_t n, double *share);
/* Note a route the collective uses that did not come from coll_exec_route
 * (switch routes): it belongs to the footprint. */
void coll_exec_note_route(coll_exec *x, const fab_route *r);
/* True when a route leaves the server through a NIC: the GPU hands such
 * sends to NCCL's network proxy instead of copying them itself. */
bool coll_route_crosses_net(const fabric *f, const fab_route *r);
/* True when a block's send over r is a write to its peer over NVLink (every
 * NVLink route but A100's Simple reads): the block is free once the data has
 * landed, and the step latency is the receiver's (docs/collectives.md,
 * "Channels share links"). Ring and Tree chains. */
bool coll_nvlink_write(const coll_exec *x, const fab_route *r);
/* Are the nodes alike (the same GPU local indices in the same server
 * pattern, consecutive nodes on different servers)? Folding needs it. */
bool coll_nodes_alike(const coll_system *sys);
/* Fabric chunk size for a message of `wire` bytes: a quarter of it, at
 * least 16 KiB; pipelines across hops without an event per small packet. */
uint64_t coll_exec_fabric_chunk(uint64_t wire);
/* Split `total` bytes into `parts` shares aligned to `grain`; share i. */
uint64_t coll_share(uint64_t total, int parts, int i, uint64_t grain);
/* A sender's NCCL_STEPS chunk slots (NVLS, algo_nvls*.c): chunk k may go
 * once chunk k - window's slot is back, which is a round trip after that
 * chunk was sent and not before its data landed. */
#define COLL_SLOTS 8
typedef struct {
    sim_time sent_at[COLL_SLOTS], ret_at[COLL_SLOTS];
    uint32_t ret_k[COLL_SLOTS]; /* k + 1 once chunk k has landed */
    bool wake;                  /* a wake-up is scheduled */
} coll_slots;
/* May chunk k go now (window in flight)? If not and its slot has a return
 * time, schedules wake(ctx) then (once); if its data has not landed, the
 * caller retries when it does. */
bool coll_slots_free(coll_slots *s, coll_exec *x, uint32_t k, uint32_t window, sim_handler wake, void *ctx);
/* chunk k leaves now (or at the collective's start) */
void coll_slots_sent(coll_slots *s, coll_exec *x, uint32_t k);
/* chunk k's data landed: its slot is back rtt after it was sent, not before now */
void coll_slots_landed(coll_slots *s, coll_exec *x, uint32_t k, sim_time rtt);
/* A send a thread block copies itself (not handed to a proxy) lands no
 * earlier than a fixed lead (the step latency, or NVLS's flags), its wire
 * bytes at the block's share of the links, and the route's wire latency
 * after it was issued ("Channels share links"): the fabric's queues serve
 * whole chunks first come, first served, where the real blocks share each
 * link packet by packet. Ring (its sends and SHM passes), Tree (its chain
 * sends) and NVLS keep one per block and direction. */
typedef struct {
    double share_Bps; /* the block's share of its route's links, wire bytes/s; 0: not held */
    int64_t wire_lat; /* the route's wire latency, ps */
    sim_time t_min;   /* the send in flight lands no earlier */
} coll_held;
/* Shares and wire latencies for n blocks, block i sending over routes[i]
 * (NULL: not held). */
void coll_held_init(coll_exec *x, coll_held *const *h, const fab_route *const *routes, size_t n);
/* Its copy of `wire` bytes at the share, then the wire latency, ps. */
int64_t coll_held_copy_ps(const coll_held *h, double wire);
/* a send of `wire` bytes leaves now (or at the collective's start) after
 * lead_ps (no-op when not held) */
void coll_held_issue(coll_held *h, coll_exec *x, uint64_t wire, int64_t lead_ps);
/* The send landed now: true if its block is still copying, in which case
 * fn(ctx, arg) runs again when it is done. */
bool coll_held_wait(coll_held *h, coll_exec *x, sim_handler fn, void *ctx, uint64_t arg);
/* NVLS blocks: the fixed cost per chunk, NCCL's NVLink latency of a
 * flagged store (hwLat NVLink LL, 0.6 us; docs/collectives.md, "NVLS
 * steps"). */
int64_t coll_nvls_flag_ps(void);

/* wire bytes over r from now (not before the collective's start): one piece
 * over a single hop, else pipelined in coll_exec_fabric_chunk pieces */
void coll_exec_send_hop(coll_exec *x, const fab_route *r, uint64_t wire, fab_done_fn fn, void *ctx, uint64_t arg);

/* NCCL_MAX_NVLS_ARITY (device.h): NCCL runs NVLS for collectives other than
 * all_reduce only with at most this many local ranks (enqueue.cc). */
#define COLL_NVLS_MAX_ARITY 32

/* NVLS (algo_nvls.c), shared with algo_nvls_rsag.c: NCCL's chunk for the
 * operation (calcCollChunking), nvlsEfficiency, a GPU's NVSwitch; and the
 * all_gather/reduce_scatter planner. */
uint64_t coll_nvls_chunk(const coll_exec *x, int nch, int nnodes);
double coll_nvls_eff(int sm);
fab_node_id coll_nvls_switch_of(const coll_exec *x, fab_node_id gpu);
void coll_nvls_rsag_start(coll_exec *x);
/* n channels for `algo` within sys->nccl's limits (coll_run_channels). */
int coll_channels_limit(const coll_system *sys, coll_algo_id algo, int n);

#endif

/* models/coll.h - collectives as NCCL runs them (layer 1 of the model).
 *
 * A collective request (op, size, algorithm, protocol, channels) on a built
 * topology becomes a plan that runs on the fabric: per channel and rank a
 * state machine issues slices over routes, with NCCL's dependencies (a ring
 * step forwards what the previous step received), its 8-slot FIFO per
 * connection, per-step protocol latency and per-channel caps. Chunks queue on
 * links like any other traffic, so contention is simulated, not assumed.
 * Algorithms live one per file (algo_ring.c, algo_nvls.c, algo_p2p.c); the
 * tuner (tuner.c) picks (algorithm, protocol, channels) with NCCL 2.30's cost
 * model.
 */
#ifndef MODELS_COLL_H
#define MODELS_COLL_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "models/fabric.h"
#include "models/proto.h"
#include "models/coll_kind.h"
#include "models/ring_search.h"

typedef enum {
    ALGO_TREE,
    ALGO_RING,
    ALGO_COLLNET_DIRECT,
    ALGO_COLLNET_CHAIN,
    ALGO_NVLS,
    ALGO_NVLS_TREE,
    ALGO_PAT,
    ALGO_DIRECT, /* alltoall: pairwise; sendrecv: point-to-point */
    ALGO_COUNT
} coll_algo_id;

const char *coll_algo_name(coll_algo_id a);
/* Case-insensitive NCCL names ("ring", "tree", "nvls", "nvlstree",
 * "collnetdirect", "collnetchain", "pat"); -1 if unknown. */
int coll_algo_from_name(const char *s);

/* NCCL's p2p chunk for a send/receive on route r: 512 KiB over NVLink
 * (NCCL_P2P_NVL_CHUNKSIZE), 128 KiB through PCIe or the network
 * (P2P_PCI / P2P_NET); NCCL_STEPS (8) of them in flight. */
#define COLL_P2P_WINDOW 8
uint64_t coll_p2p_chunk(const fabric *f, const fab_route *r);

/* NCCL's channel knobs from the environment (0: not set; nccl_env.c). */
typedef struct {
    int min_nch, max_nch;   /* NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS (or the older NCCL_*_NRINGS) */
    int min_ctas, max_ctas; /* NCCL_MIN_CTAS / NCCL_MAX_CTAS */
    bool nvls_off;          /* NCCL_NVLS_ENABLE=0 */
    uint64_t buffsize;      /* NCCL_BUFFSIZE: Simple's buffer per connection, bytes (0: 4 MiB) */
    bool p2p_set;           /* NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL given: */
    int p2p_level;          /* ... as a FAB_PATH_* type (LOC for NCCL_P2P_DISABLE=1) */
    bool net_ovh_set;       /* NCCL_NET_OVERHEAD given: */
    double net_ovh_us;      /* ... the proxy's work per ring network step, us (NCCL reads ns) */
    bool cross_nic;         /* NCCL_CROSS_NIC=1: rings leave a server on the rail of the GPU that
                             * ends them (0 and 2, the default: on the NIC they came in by) */
} coll_nccl_env;

/* The NCCL whose constants and choices conveyor follows (2.30.7), as
 * NCCL_VERSION_CODE: printed in nccl-tests headers, compared with a log's. */
#define COLL_NCCL_CODE 23007
/* Host-side cost of launching one GPU's kernel (cudaLaunchKernel plus
 * NCCL's enqueue), us, where no calibration gives it: an estimate
 * (calibrate/ measures it; docs/collectives.md). */
#define COLL_LAUNCH_US 2.5
/* Host cost per channel (thread block) of one GPU's launch, us: NCCL's
 * enqueue prepares each channel's work on the host before the kernel runs
 * (docs/collectives.md, "Launch"). */
#define COLL_LAUNCH_CH_US 0.1

/* What the collective runs on: the fabric and who the ranks are. */
typedef struct {
    fabric *fab;
    int nranks;
    int nnodes;             /* servers spanned */
    int ppn;                /* ranks per server */
    const fab_node_id *gpu; /* rank -> GPU node */
    int gpu_sm;             /* compute capability x10 */
    double hbm_Bps;         /* device memory bandwidth (reduction cost) */
    bool nvls;              /* an NVLS-capable NVSwitch joins the ranks of a node */
    fab_node_id nvswitch;   /* that switch (FAB_NONE if none) */
    int cpu_vendor;         /* 0 Intel, 1 AMD, 2 ARM (NCCL's net overhead) */
    double launch_us;       /* host cost to launch one GPU's kernel (COLL_LAUNCH_US without calibration) */
    double launch_ch_us;    /* host cost per channel of that launch (COLL_LAUNCH_CH_US) */
    int gpus_per_thread;    /* GPUs launched serially by one host thread (nccl-tests -g) */
    double net_Bps;         /* a server's NIC bandwidth, all NICs, payload bytes/s (0: one node) */
    double net_dev_Bps;     /* the line rate of one network device as NCCL sees it (its net
                             * "speed"), bytes/s; 0: not known (one node) */
    bool sharp;             /* the network switches reduce (SHARP): CollNet can run */
    bool exact;             /* simulate every rank (no folded rings, docs/collectives.md) */
    bool uneven;            /* servers hold different numbers of the ranks (a group cut across
                             * servers, e.g. 36 ranks on 8-GPU servers): only Ring (in rank
                             * order) and Direct run; the others assume ppn ranks per node */
    coll_nccl_env nccl;     /* NCCL_MIN/MAX_NCHANNELS, NCCL_MIN/MAX_CTAS, NCCL_NVLS_ENABLE (nccl_env.c) */
    coll_rings rings;       /* NVLink rings inside a server where its GPU pairs differ (a mesh);
                             * rings.n == 0: rank order (ring_search.h) */
    uint8_t ring_down[COLL_RING_MAX_PPN]; /* across servers, a ring entering a server at local
                             * GPU e runs e, e-1, ..., e+1 (1) or e, e+1, ..., e-1 (0), so
                             * it leaves from a GPU beside e's NIC (topo_coll_system) */
    int ring_nics;          /* across servers: the distinct NICs of a server's ranks, which channels
                             * cycle through as NCCL's search does (channel c leaves by NIC c mod
                             * ring_nics); 0: not known, channel c enters at local GPU c mod ppn */
    uint8_t ring_entry[COLL_RING_MAX_PPN]; /* ring_nics > 0: channel c enters a server at local GPU
                             * ring_entry[c mod ppn], one beside NIC c mod ring_nics */
    uint8_t mesh_entry[COLL_RING_MAX_ORDERS][COLL_RING_MAX_PPN]; /* ring_nics > 0 on a mesh: the
                             * place in ring i where a channel leaving by NIC k enters, so that
                             * the ring ends beside that NIC where ring i allows; 0xff: none */
} coll_system;

typedef struct {
    coll_kind kind;
    uint64_t bytes;   /* nccl-tests size column (see nccltests_rank_bytes) */
    int root;         /* broadcast/reduce */
    coll_algo_id algo;
    coll_proto_id proto;
    int nchannels;
    bool fused;       /* launched in the kernel of the collective before it (one NCCL
                       * group): its setup has no host launch, only the base latency */
    const double *a2a_w; /* alltoall: NULL an even split; else a share per rank (mean 1): rank i
                       * sends bytes / n x a2a_w[j] to j (a2a_send: x a2a_w[i], the reverse); with
                       * a2a_matrix n x n shares, bytes / n x a2a_w[i n + j] (a2a_send: [j n + i]) */
    bool a2a_send;
    bool a2a_matrix;
} coll_request;

typedef struct {
    double time_us;          /* simulated time of one collective */
    uint64_t events;         /* engine events processed */
    fab_link_id busiest;     /* most-busy graph link, or FAB_NONE */
    double busiest_util;     /* its busy time / collective time */
    uint64_t wire_bytes;     /* bytes delivered over the fabric */
} coll_result;

/* Completion of a launched collective: res->time_us is its duration from
 * launch; res->events the engine events in between (other traffic
 * included); busiest/wire_bytes are not filled (the fabric is shared). */
typedef void (*coll_done_fn)(sim_engine *e, void *ctx, const coll_result *res);

/* Start one collective at the engine's current time on sys->fab, which
 * must be attached to `eng`; the collective's chunks share the fabric with
 * whatever else runs. done(e, ctx, res) runs when every rank has finished.
 * Returns false with *err when the request cannot run here. A route that
 * fails during the run stops the engine and is reported through *async_err
 * (may be NULL). sys must outlive the collective. */
bool coll_launch(const coll_system *sys, const coll_request *req, sim_engine *eng, coll_done_fn done, void *ctx,
                 GError **async_err, GError **err);

/* Simulate one collective; fills *out. Returns false with *err set when the
 * request cannot run on this system (e.g. NVLS without an NVLS switch,
 * unreachable ranks). The fabric is re-attached to a fresh engine. */
bool coll_run(const coll_system *sys, const coll_request *req, coll_result *out, GError **err);
/* The time before a collective's first transfer: the host launch of each
 * GPU one thread drives ((launch_us + nchannels x launch_ch_us) x
 * gpus_per_thread; none when req->fused) and NCCL's base latency of the algorithm and
 * protocol, us. */
double coll_setup_us(const coll_system *sys, const coll_request *req);
/* A collective on one rank, us: NCCL launches no kernel (ncclLaunchOneRank,
 * src/enqueue.cc) but, out of place, copies the buffer device to device: its
 * launch (none when req->fused: a CUDA graph's node) and req->bytes read and
 * written in HBM at COMPUTE_COPY_HBM_EFF of hbm_Bps. */
double coll_one_rank_us(const coll_system *sys, const coll_request *req);
/* Its host part alone: (launch_us + nchannels x launch_ch_us) x gpus_per_thread, us. */
double coll_setup_host_us(const coll_system *sys, const coll_request *req);
/* NCCL's per-step network overhead of a multi-node ring (getNetOverhead,
 * tuning.cc), us: NCCL_NET_OVERHEAD (ns) if set, else 2 on AMD hosts and 1
 * otherwise, x3 for Simple; 0 on one node. "Inter-node rings still have to
 * launch nsteps * net overhead": the proxy's serial work per network step. */
double coll_net_ovh_us(const coll_system *sys, coll_proto_id p);
/* True where NCCL's P2P transport reads from the peer instead of writing to
 * it: the Simple protocol between two sm 8.0 GPUs over NVLink only
 * (ncclTopoCheckP2p). Each step then waits one more wire latency of r. */
bool coll_p2p_reads(const coll_system *sys, const fabric *f, const fab_route *r, coll_proto_id p);
/* The latency one step of `algo` in `proto` adds over route r beyond the
 * wire's own: NCCL's hwLat for the route's class (NVLink, PCI, network:
 * tuning.cc) less the route's link latencies, plus one wire latency where
 * the step is a read. */
int64_t coll_route_step_lat_ps(const coll_system *sys, const fabric *f, const fab_route *r, coll_algo_id algo,
                               coll_proto_id proto);

/* Channel c's ring: the rank at position i (0 <= i < nranks), as the
 * ring all-reduce runs it (algo_ring.c): servers in order, each entered at
 * GPU coll_channel_entry across servers, along an NVLink ring on a mesh. */
int coll_ring_rank(const coll_system *sys, int c, int i);
/* Where channel c enters each server (a local GPU; on an NVLink mesh, a
 * place on ring c mod rings.n): beside NIC c mod ring_nics across servers,
 * as NCCL's search cycles the NICs; c mod ppn on one server. Rings start
 * there, Tree's chains have their head there. */
int coll_channel_entry(const coll_system *sys, int c);
/* Rank r's place in channel ci's tree of nch Tree channels (algo_tree.c),
 * as NCCL logs it ("Trees [c] d0/d1/d2->r->up"): *up the rank it sends
 * partials to (-1: the root), down[] the ranks it sends results to (the
 * chain's next first, then the child nodes' heads; -1 where none). */
void coll_tree_links(const coll_system *sys, int ci, int nch, int r, int *up, int down[3]);

/* NCCL's double binary tree over n nodes (trees.cc, ncclGetDtree): node's
 * parent in tree `which` (0 or 1; -1: the root) and its children (-1 where
 * none), in NCCL's order (kid[0] below it, kid[1] above). models/dtree.c. */
void coll_dtree(int n, int node, int which, int *up, int kid[2]);
/* The same with the children packed first (kid[0] the first that exists);
 * returns how many there are. */
int coll_dtree_packed(int n, int node, int which, int *up, int kid[2]);

/* How a send from rank a to rank b travels, as NCCL's init log names the
 * transport ("via P2P/...", "via SHM/...", "[send] via NET/..."). */
typedef enum { COLL_CONN_P2P, COLL_CONN_SHM, COLL_CONN_NET } coll_conn_kind;
typedef struct {
    coll_conn_kind kind;
    bool read;   /* P2P: NCCL's P2P read (sm 8.0 over NVLink, coll_p2p_reads with Simple) */
    int net_dev; /* NET: local index of the NIC the bytes leave the server by */
    int proxy;   /* NET: the rank beside that NIC that relays a's send (PXN); -1: a itself */
    bool gdr;    /* NET: that rank's GPU reaches the NIC through PCIe switches only (GPUDirect RDMA) */
    int recv_dev;  /* NET: local index of the NIC the bytes enter b's server by */
    bool recv_gdr; /* NET: b reaches that NIC through PCIe switches only */
} coll_conn;
/* The send's route (fabric_route_p2p when pxn, else fabric_route, for flow)
 * classified; false with *err when b is unreachable. */
bool coll_conn_of(const coll_system *sys, int a, int b, uint32_t flow, bool pxn, coll_conn *out, GError **err);

/* coll_run, and the collective's footprint: every graph link its routes
 * cross, appended to *links (fab_link_id, sorted, each once). The replay
 * uses it to tell whether a repeated collective would meet other traffic. */
bool coll_run_footprint(const coll_system *sys, const coll_request *req, coll_result *out, GArray *links,
                        GError **err);

/* The tuner: pick (algorithm, protocol, channels) for `kind` of `bytes`
 * with NCCL 2.30's cost model (tuning.cc: bandwidth caps, base + per-step
 * latencies, the small-size channel reduction). algo_mask/proto_mask limit
 * the choice (bit i = coll_algo_id/coll_proto_id i; 0 = all). CollNet runs
 * only when NCCL_COLLNET_ENABLE=1 or the mask names it: a mask that also has
 * COLL_ALGO_MASK_UNNAMED (a negated list such as "^nvls", or "every algorithm
 * but NVLS" for a reduction the switch cannot do) allows CollNet without
 * turning it on, as NCCL_ALGO does in NCCL. Fills *req
 * (all but root; fused false) and, if model_us is not NULL, NCCL's predicted
 * time. Returns false when
 * no enabled combination can run the collective here. */
bool coll_tune(const coll_system *sys, coll_kind kind, uint64_t bytes, uint32_t algo_mask,
               uint32_t proto_mask, coll_request *req, double *model_us);
#define COLL_ALGO_MASK_ALL ((1u << ALGO_COUNT) - 1)
#define COLL_ALGO_MASK_UNNAMED (1u << 31) /* the mask's algorithms were not named (see coll_tune) */

/* One cell of NCCL's "Latency/AlgBw" table (tuning.cc, printed under
 * NCCL_DEBUG_SUBSYS=TUNING): the tuner's latency (us) and algbw (GB/s) of
 * (algo, proto) for `kind` on this system, before the per-call terms
 * (coll_tune's time for bytes b is about lat + b / algbw). False, with
 * both 0, where the tuner does not consider it (or it is not one of
 * NCCL's table algorithms: Direct). */
bool coll_tune_table(const coll_system *sys, coll_kind kind, coll_algo_id algo, coll_proto_id proto,
                     double *lat_us, double *algbw_GBps);

/* Parse an NCCL_ALGO / NCCL_PROTO style list for collective `kind`:
 * "ring,tree", "^nvls" (all but), or per-collective "allreduce:tree,ring;
 * allgather:ring". Names unknown to NCCL are errors. Sets *mask (0 if the
 * spec does not mention this collective). */
bool coll_tune_parse_mask(const char *spec, coll_kind kind, bool algos, uint32_t *mask, GError **err);

/* Channels NCCL's search gives `algo` on this system (the tuner's count;
 * see docs/collectives.md). */
int coll_channels(const coll_system *sys, coll_algo_id algo);
/* The channels `algo` runs on: coll_channels within sys->nccl's limits, as
 * NCCL applies NCCL_MIN/MAX_NCHANNELS and NCCL_MIN/MAX_CTAS (nccl_env.c). */
int coll_run_channels(const coll_system *sys, coll_algo_id algo);
/* Read NCCL_MIN/MAX_NCHANNELS (NCCL_MIN/MAX_NRINGS), NCCL_MIN/MAX_CTAS,
 * NCCL_NVLS_ENABLE and NCCL_BUFFSIZE; false with *err (a bad value) otherwise. */
/* Apply e's fabric knobs (NCCL_P2P_LEVEL / NCCL_P2P_DISABLE) to f; before
 * any route of f is used (it forgets the cached ones). */
void coll_nccl_env_apply(const coll_nccl_env *e, fabric *f);
/* The NCCL environment variables conveyor reads (NULL-name terminated):
 * how NCCL logs each under NCCL_DEBUG=INFO (ncclLoadParam: integers end
 * with a period; the P2P pair is logged by ncclGetLevel, nccl_log.c). */
typedef enum { COLL_NCCL_VAR_STRING, COLL_NCCL_VAR_INT, COLL_NCCL_VAR_P2P } coll_nccl_var_kind;
typedef struct {
    const char *name;
    coll_nccl_var_kind kind;
} coll_nccl_var;
extern const coll_nccl_var coll_nccl_vars[];

/* A P2P level by NCCL's path name (LOC, NVL, ..., SYS; any case): false if
 * it is none; and the name of a level. */
bool coll_p2p_level_from_name(const char *s, int *out);
const char *coll_p2p_level_name(int level);
bool coll_nccl_env_read(coll_nccl_env *e, GError **err);
/* An NCCL_BUFFSIZE conveyor takes: a multiple of 4 KiB from 64 KiB to 1 GiB. */
bool coll_nccl_buffsize_ok(uint64_t bytes);

#define COLL_ERROR (coll_error_quark())
GQuark coll_error_quark(void);
enum { COLL_ERROR_UNSUPPORTED = 1, COLL_ERROR_ROUTE, COLL_ERROR_SIM };

#endif

/* models/fabric.h - the physical layer: devices, directed links that queue,
 * routes, and transfers that move chunks hop by hop.
 *
 * A fabric is a graph of nodes (GPUs, PCIe switches, CPU root complexes,
 * host memory, NVSwitches, NICs, network switches) joined by full-duplex
 * links; each direction is a FIFO server with bandwidth x efficiency and a
 * propagation latency (layer 3 of the model: the hardware queue). A transfer
 * is cut into chunks; a chunk occupies each link for bytes/(bw*eff)
 * (store-and-forward per chunk, so consecutive chunks pipeline over hops) and
 * is then handed to the next link after the link's latency. A link has at
 * most one pending engine event, so cost grows with chunks x hops.
 *
 * Build phase: fabric_node_add / fabric_link_add (topologies/ does this).
 * Run phase: fabric_attach(engine), then fabric_transfer_start(...).
 */
#ifndef MODELS_FABRIC_H
#define MODELS_FABRIC_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"

typedef struct fabric fabric;
typedef uint32_t fab_node_id;
typedef uint32_t fab_link_id; /* a directed link; its reverse is id ^ 1 */

#define FAB_NONE UINT32_MAX

typedef enum {
    FAB_GPU,
    FAB_PCIE_SWITCH,
    FAB_CPU,      /* a socket's root complex */
    FAB_HOSTMEM,  /* a socket's DRAM, the staging point when P2P is off */
    FAB_NVSWITCH, /* NVSwitch crossbar (one logical switch per NVLink domain) */
    FAB_NIC,
    FAB_NET_LEAF,
    FAB_NET_SPINE,
    FAB_NODE_KINDS
} fab_node_kind;

typedef enum {
    LINK_PCIE,
    LINK_NVLINK,
    LINK_XSOCKET, /* UPI / QPI / xGMI between sockets */
    LINK_MEM,     /* root complex <-> host memory; half duplex: reads and writes share bw */
    LINK_NET,     /* NIC <-> leaf, leaf <-> spine */
    LINK_SERVER,  /* a private server (channel cap, endpoint limit, transit); not in the graph */
    LINK_KINDS
} fab_link_kind;

/* What a node is; filled by the caller of fabric_node_add. */
typedef struct {
    fab_node_kind kind;
    const char *name;  /* copied; e.g. "n0.gpu3" */
    int server;        /* server (node) index, -1 for shared network switches */
    int local;         /* index among nodes of its kind inside the server (GPU local rank) */
    int socket;        /* CPU socket (NUMA domain), -1 if none */
    int domain;        /* NVLink domain index (GPU, NVSwitch); -1 if none */
    bool nvls;         /* NVSwitch: supports in-switch reduction (NVLS) */
    /* Transit server: traffic that passes *through* this node (enters on one
     * link and leaves on another) also crosses a server of this bandwidth,
     * e.g. a root complex's P2P forwarding limit. 0 = none. */
    double transit_Bps;
    int64_t transit_lat_ps;
} fab_node_desc;

typedef struct {
    fab_link_kind kind;
    double bw_Bps;     /* raw rate per direction, bytes/s, > 0 */
    double eff;        /* fraction of bw left after packet overheads, (0,1] */
    int64_t lat_ps;    /* propagation + per-hop switching latency, >= 0 */
    int count;         /* physical links bundled (informational; bw is the total) */
} fab_link_desc;

/* Per directed link statistics (run phase). */
typedef struct {
    uint64_t bytes;       /* payload bytes that crossed the link */
    uint64_t chunks;
    int64_t busy_ps;      /* time spent serialising */
    int64_t qdelay_ps;    /* total time chunks waited in the FIFO */
    uint32_t peak_queue;  /* most chunks waiting at once (excluding the one in service) */
} fab_link_stats;

fabric *fabric_new(void);
void fabric_free(fabric *f);

/* Build phase. Returns the new node's id. */
fab_node_id fabric_node_add(fabric *f, const fab_node_desc *d);

/* Add a full-duplex link a<->b with the same parameters both ways; returns
 * the a->b directed link (b->a is the returned id ^ 1). */
fab_link_id fabric_link_add(fabric *f, fab_node_id a, fab_node_id b, const fab_link_desc *d);

/* Add a private server (kind LINK_SERVER, not part of routing) of bw_Bps
 * with latency lat_ps; used for channel caps and endpoint limits. Returns a
 * directed link id usable in a route. May be called in the run phase. */
fab_link_id fabric_server_add(fabric *f, const char *name, double bw_Bps, int64_t lat_ps);

/* Set per-GPU/NIC endpoint limits (copy-engine/SM or NIC injection and
 * ejection rates), bytes/s; 0 = unlimited. Applied to every route that
 * starts (tx) or ends (rx) at the node; a NIC's also where a route passes
 * it: tx when the route leaves for the network through it, rx when it
 * comes in from the network. */
void fabric_node_set_endpoint(fabric *f, fab_node_id n, double tx_Bps, double rx_Bps);

/* P2P policy between two GPUs: when false, GPU->GPU routes are staged
 * through the source socket's host memory (device-to-host, host-to-device). */
void fabric_set_p2p(fabric *f, bool enabled);
/* When false, P2P across sockets is not supported and cross-socket GPU pairs
 * are staged through host memory even with P2P on. Default true. */
void fabric_set_p2p_xsocket(fabric *f, bool enabled);

/* NCCL's path types (src/graph/topo.h, topoPathTypeStr in topo.cc, 2.30):
 * a GPU pair uses NCCL's P2P transport when its path type is at most the
 * P2P level, else SHM through host memory. */
enum { FAB_PATH_LOC = 0, FAB_PATH_NVL = 1, FAB_PATH_NVB = 2, FAB_PATH_C2C = 3, FAB_PATH_PIX = 4,
       FAB_PATH_PXB = 5, FAB_PATH_P2C = 6, FAB_PATH_PXN = 7, FAB_PATH_PHB = 8, FAB_PATH_SYS = 9 };
/* A user's P2P level (NCCL_P2P_LEVEL, or NCCL_P2P_DISABLE=1 = LOC) for GPU
 * pairs inside a server: an NVLink path is NVL; a PCIe path is PIX under
 * one switch, PXB across switches, PHB through a CPU, SYS across sockets.
 * It only restricts: PCIe P2P still needs the hardware (fabric_set_p2p, and
 * fabric_set_p2p_xsocket across sockets). -1: none (default). */
void fabric_set_p2p_level(fabric *f, int level);

/* Adaptive routing (default off): a chunk leaving a leaf for a spine takes
 * the uplink, among those whose spine reaches its destination leaf, with
 * the fewest chunks queued or in service, instead of its route's ECMP
 * choice. Routes stay as computed; only the spine changes, per chunk. */
void fabric_set_adaptive(fabric *f, bool enabled);
bool fabric_adaptive(const fabric *f);

/* PXN (default on): send/receive between GPUs on different servers leaves
 * through the NIC of the local GPU on the receiver's rail, reached over
 * NVLink (fabric_route_p2p). NCCL_PXN_DISABLE=1 is off. */
void fabric_set_pxn(fabric *f, bool enabled);
bool fabric_pxn(const fabric *f);

/* Bind a GPU to the NIC it uses for traffic leaving its server (its rail).
 * Without it, the nearest NIC is used. */
void fabric_gpu_set_nic(fabric *f, fab_node_id gpu, fab_node_id nic);

/* Read access. */
uint32_t fabric_node_count(const fabric *f);
uint32_t fabric_link_count(const fabric *f); /* directed links, servers included */
const fab_node_desc *fabric_node(const fabric *f, fab_node_id n);
fab_node_id fabric_link_src(const fabric *f, fab_link_id l);
fab_node_id fabric_link_dst(const fabric *f, fab_link_id l);
const fab_link_desc *fabric_link(const fabric *f, fab_link_id l);
const char *fabric_link_name(const fabric *f, fab_link_id l); /* "a->b"; owned by f */
/* The node's GPUs in global rank order (server-major, then local index). */
const GArray *fabric_gpus(const fabric *f); /* of fab_node_id */
/* The directed links leaving node n (graph links only). */
void fabric_node_links(const fabric *f, fab_node_id n, const fab_link_id **out, uint32_t *len);

/* ---- routes ---------------------------------------------------------- */

typedef struct {
    uint32_t nhops;
    fab_link_id hop[]; /* directed links in order */
} fab_route;

/* The route from GPU/NIC/node `src` to `dst`, following the P2P rules:
 * fewest-cost path where cost favours bandwidth (NVLink before PCIe), never
 * transiting a GPU, staged through host memory when P2P is off for the pair,
 * ECMP among equal-cost network paths by a deterministic hash of (src, dst,
 * flow). Includes transit and endpoint servers. Cached; owned by f; NULL with
 * *err set when dst is unreachable. src == dst gives a 0-hop route. */
const fab_route *fabric_route(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow, GError **err);
/* For tests: the same route computed from scratch by the plain searches,
 * without any of fabric_route's caches; the caller g_free()s it. NULL when
 * dst is unreachable. */
fab_route *fabric_route_uncached(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow);
/* For tests: fabric_route_p2p's route the same way (PXN or not), from the
 * whole path by the plain searches, no cache; the caller g_free()s it. */
fab_route *fabric_route_p2p_uncached(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow);

/* In-network reduction (SHARP): the switch where the NICs of these GPUs
 * meet - their common leaf, or else a spine that reaches all their leaves
 * (the hint-th of those, to spread rails over spines); FAB_NONE if none. */
fab_node_id fabric_sharp_root(fabric *f, const fab_node_id *gpus, int n, uint32_t hint);
/* The route from a GPU through its NIC and leaf up to network switch sw
 * (up = true), or back down from sw to the GPU. Cached; NULL with *err when
 * the GPU has no NIC or sw is not above its leaf. */
const fab_route *fabric_route_switch(fabric *f, fab_node_id gpu, fab_node_id sw, bool up, GError **err);

/* The route of a send/receive (NCCL's p2p transport) from GPU src to GPU
 * dst: with PXN on, across servers and when src and dst sit at different
 * local indexes, src -> (NVLink) -> the local GPU with dst's index -> its
 * NIC -> network -> dst, as NCCL's ncclTopoGetNetDev picks it (that GPU
 * reached over NVLink only, its NIC over PCIe switches only); otherwise
 * fabric_route(). Cached; errors as fabric_route(). flow < 2^31. */
const fab_route *fabric_route_p2p(fabric *f, fab_node_id src, fab_node_id dst, uint32_t flow, GError **err);

/* Bottleneck rate of a route, bytes/s (min over hops of bw*eff), and the sum
 * of its latencies. */
double fabric_route_bw(const fabric *f, const fab_route *r);
int64_t fabric_route_lat_ps(const fabric *f, const fab_route *r);
/* True when the route crosses host memory (P2P unavailable). */
bool fabric_route_staged(const fabric *f, const fab_route *r);
/* True when GPU gpu reaches NIC nic of its server through PCIe switches only
 * (NCCL's PIX/PXB: no CPU, no NVLink): it sends through that NIC itself,
 * with no PXN relay (fabric_route_p2p). */
bool fabric_nic_beside(fabric *f, fab_node_id gpu, fab_node_id nic);
/* The host memory of node n's socket, where a route from n is staged
 * (FAB_NONE if its server has none there). A staged route a -> b is the
 * route a -> fabric_socket_mem(a) followed by that memory -> b. */
fab_node_id fabric_socket_mem(const fabric *f, fab_node_id n);

/* ---- run phase: transfers ------------------------------------------- */

typedef void (*fab_done_fn)(sim_engine *e, void *ctx, uint64_t arg);

/* Bind the fabric to an engine and reset link state and statistics. */
void fabric_attach(fabric *f, sim_engine *e);

/* Start moving `bytes` along `route` in chunks of `chunk_bytes` (the last
 * may be shorter), at most `window` chunks in flight (0 = unlimited), at the
 * engine's current time (+ `delay_ps`). `pre` is an optional private server
 * (FAB_NONE if none) crossed before the route's first hop. When the last
 * byte has arrived, done(e, ctx, arg) runs at that time. bytes == 0 or a
 * 0-hop route completes after delay_ps. */
void fabric_transfer_start(fabric *f, const fab_route *route, fab_link_id pre, uint64_t bytes,
                           uint64_t chunk_bytes, uint32_t window, int64_t delay_ps, fab_done_fn done,
                           void *ctx, uint64_t arg);

/* A dedicated sender that injects at most `Bps` bytes/s (e.g. one thread
 * block per NCCL channel), shared by all the transfers it starts: chunk i
 * enters its route no earlier than max(its ready time, when the sender's
 * previous chunk was paced out) + bytes_i / Bps. Equivalent to a private
 * FIFO server of that rate in front of the routes, without an engine event
 * per chunk. Owned by the caller; Bps <= 0 means no limit. */
typedef struct {
    double Bps;
    int64_t t_ps; /* set to 0 before the first use */
} fab_pacer;

/* As fabric_transfer_start without a pre server, paced by `pacer` (may be
 * NULL: not paced). The pacer must outlive the transfer. */
void fabric_transfer_start_paced(fabric *f, const fab_route *route, fab_pacer *pacer, uint64_t bytes,
                                 uint64_t chunk_bytes, uint32_t window, int64_t delay_ps, fab_done_fn done,
                                 void *ctx, uint64_t arg);

/* As fabric_transfer_start without a pre server, in cut-through pieces of
 * `piece_bytes`: a piece stands for back-to-back chunks of one connection,
 * so link k+1 starts on it when its head arrives (link k's start plus k's
 * latency) and finishes no earlier than its tail arrives (k's finish plus
 * the latency). Fewer, larger pieces without store-and-forward's pipeline
 * fill per hop; the links still serve them FIFO and contend. */
void fabric_transfer_start_cut(fabric *f, const fab_route *route, uint64_t bytes, uint64_t piece_bytes,
                               uint32_t window, int64_t delay_ps, fab_done_fn done, void *ctx, uint64_t arg);

/* The queue directed link l's traffic joins: its own, except host memory
 * (LINK_MEM), which is half duplex: DRAM serves reads and writes from one
 * pool, so both directions share the even link's queue. */
fab_link_id fabric_link_queue(const fabric *f, fab_link_id l);
/* Scratch counters for tallies per link (coll_link_shares): 2 x
 * fabric_link_count() entries, entry 2l and 2l + 1 for link l, all 0 when
 * handed out; the caller sets every entry it changed back to 0 before it
 * returns. Owned by f (it grows with the links); like the route caches, for
 * one thread at a time. */
uint32_t *fabric_link_tally(fabric *f);

/* Statistics of directed link l (for a half-duplex LINK_MEM link, of the
 * server both directions share). */
const fab_link_stats *fabric_link_stats(const fabric *f, fab_link_id l);
/* Add `add` to link l's statistics (peak_queue: the larger): traffic that
 * was simulated elsewhere and is charged here (the replay's reused
 * collectives). No effect before fabric_attach. */
void fabric_link_account(fabric *f, fab_link_id l, const fab_link_stats *add);
/* Bytes injected and delivered over all transfers since attach. */
void fabric_totals(const fabric *f, uint64_t *injected, uint64_t *delivered);

/* The directed link with the highest busy time since attach (FAB_NONE if
 * nothing moved); graph links only. */
fab_link_id fabric_busiest_link(const fabric *f);

/* Recording (for timelines): when on, every chunk a link serves is logged
 * as {link, start, end, bytes}; the log is cleared by fabric_attach. */
typedef struct {
    fab_link_id link;
    int64_t start_ps, end_ps;
    uint64_t bytes;
} fab_service_rec;
void fabric_set_recording(fabric *f, bool on);
/* The log (fab_service_rec, in service order), or NULL when not recording.
 * It keeps the first FABRIC_MAX_RECORDS chunks (32 B each: 128 MiB, about
 * 0.4 GB of timeline JSON, about what a browser's Perfetto opens);
 * fabric_records_dropped counts the chunks served after that (16 DGX
 * H100s, ring all_reduce of 8 GiB: 4.29 M chunks; 1 TiB would be ~128 times). */
#define FABRIC_MAX_RECORDS (4u << 20)
const GArray *fabric_records(const fabric *f);
uint64_t fabric_records_dropped(const fabric *f);

#define FABRIC_ERROR (fabric_error_quark())
GQuark fabric_error_quark(void);
enum { FABRIC_ERROR_UNREACHABLE = 1, FABRIC_ERROR_SIM /* the engine stopped (its error in words) */ };

#endif

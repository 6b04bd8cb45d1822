/* models/fabric_priv.h - the fabric's private layout, shared by fabric.c
 * (graph), fabric_route.c (routing) and fabric_run.c (chunk movement). Not
 * for use outside models/fabric*.c. */
#ifndef MODELS_FABRIC_PRIV_H
#define MODELS_FABRIC_PRIV_H

#include "fabric.h"

typedef struct fab_chunk fab_chunk;
typedef struct fab_xfer fab_xfer;

typedef struct {
    fab_node_desc d;
    GArray *out;          /* fab_link_id leaving this node (graph links) */
    fab_link_id tx, rx;   /* endpoint servers or FAB_NONE */
    fab_link_id transit;  /* transit server or FAB_NONE */
    fab_node_id nic;      /* GPU: the NIC it uses across servers, or FAB_NONE */
} fab_node;

typedef struct {
    fab_node_id src, dst; /* FAB_NONE for servers */
    fab_link_desc d;
    char *name;
    double ps_per_byte;   /* 1e12 / (bw * eff) */
} fab_link;

/* Run-phase state of one directed link: a FIFO server. The first 64 bytes
 * are what moving a chunk reads (copies of the link's rate and latency, so
 * the cold fab_link is not touched per chunk); the statistics follow. */
typedef struct {
    fab_chunk *head, *tail; /* waiting chunks */
    fab_chunk *cur;         /* in service (its completion event is pending) */
    sim_time free_at;       /* when the link last finished a chunk */
    double ps_per_byte;     /* LINK()->ps_per_byte */
    int64_t lat_ps;         /* LINK()->d.lat_ps */
    uint32_t qlen;
    fab_link_id server;     /* whose queue this link's chunks join (server_of) */
    bool leaf_up;           /* a leaf -> spine link (adaptive routing may swap it) */
    fab_link_stats st;
} fab_lrun;

typedef struct {
    fab_node_id src, dst;
    uint32_t flow;
} route_key;

struct fabric {
    GArray *nodes;  /* fab_node */
    GArray *links;  /* fab_link */
    GArray *gpus;   /* fab_node_id */
    GHashTable *pair;   /* (a<<32|b) -> first link a->b, +1 */
    GHashTable *routes; /* set of route_key*, each followed by its fab_route */
    bool p2p, p2p_xsocket;
    int p2p_level;      /* NCCL_P2P_LEVEL / NCCL_P2P_DISABLE as a FAB_PATH_* type, or -1 (the topology's policy) */
    bool pxn;           /* send/receive across servers through the GPU on the destination's rail */
    fab_node_id *gpu_at; /* [server * gpu_at_locals + local]: GPU node or FAB_NONE (gpu_at()); NULL: not built */
    int gpu_at_servers, gpu_at_locals;
    /* PXN routes in parts (fabric_route.c, pxn_fast): the sender's part per
     * [(server * locals + local) * locals + receiver's local], the receiver's
     * per [server * locals + local]; NULL: not built yet (arrays or entries) */
    const fab_route **pxn_up, **pxn_down;
    bool adaptive;      /* leaves pick the least-loaded spine per chunk */
    /* run phase */
    sim_engine *eng;
    fab_lrun *run;      /* one per directed link */
    uint32_t run_cap;
    uint32_t run_init;  /* run[0 .. run_init) hold their links' copies */
    fab_chunk *free_chunks;
    GPtrArray *chunk_blocks;
    gsize chunk_block_n;    /* records in the newest block (sim_mem_next) */
    fab_xfer *free_xfers;   /* finished transfer records, for reuse */
    GPtrArray *xfer_allocs; /* blocks of transfer records allocated since attach */
    fab_xfer *xfer_next;    /* the unused rest of the newest block */
    gsize xfer_left, xfer_block_n;
    uint64_t injected, delivered;
    bool recording;
    GArray *recs;       /* fab_service_rec, while recording */
    uint64_t recs_dropped; /* chunks served after the log reached FABRIC_MAX_RECORDS */
    /* routing: the flow-independent paths of graph links (GPU <-> its NIC,
     * nearest NIC, paths inside a server or NVLink domain), keyed as routes */
    GHashTable *legs;  /* set of route_key*, each followed by its fab_route */
    GPtrArray *arena_blocks; /* storage of cached routes and legs with their keys */
    char *arena_cur;
    gsize arena_left, arena_block;
    uint32_t *up_idx;   /* leaf n's spine uplinks: up_links[up_idx[n] .. up_idx[n + 1]) */
    GArray *up_links;   /* fab_link_id, in each leaf's out order */
    bool ups_valid;
    GArray *rt_path, *rt_hops, *rt_tmp; /* fab_link_id scratch */
    GArray *sp_touched, *sp_open;
    double *dist;
    fab_link_id *via;
    uint32_t scratch_len;
    uint32_t *tally;    /* fabric_link_tally: 2 per link, all 0 between uses */
    uint32_t tally_len;
};

#define NODE(f, i) (&g_array_index((f)->nodes, fab_node, (i)))
#define LINK(f, i) (&g_array_index((f)->links, fab_link, (i)))

guint route_key_hash(gconstpointer k);
gboolean route_key_equal(gconstpointer a, gconstpointer b);

/* fabric_route.c: drop what routing derived from the graph and the P2P
 * policy (legs, spine uplinks) after either changes. Cached routes stay. */
void fabric_route_forget(fabric *f);
void fabric_spine_ups_build(fabric *f);

/* The uplinks of leaf `leaf` to spines, in its out order. */
static inline const fab_link_id *fabric_spine_ups(fabric *f, fab_node_id leaf, uint32_t *n)
{
    if (!f->ups_valid)
        fabric_spine_ups_build(f);
    *n = f->up_idx[leaf + 1] - f->up_idx[leaf];
    return *n ? &g_array_index(f->up_links, fab_link_id, f->up_idx[leaf]) : NULL;
}

/* fabric.c */
fab_link_id fabric_link_between(const fabric *f, fab_node_id a, fab_node_id b);
/* fabric_run.c */
void fabric_run_grow(fabric *f);
void fabric_run_free(fabric *f);

#endif

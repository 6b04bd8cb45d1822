/* topologies/topo_internal.h - what the topology loader's files share.
 *
 * topo_json.c: JSON text positions ("$.a.b[2]" -> line:col) and typed
 * getters that report "file:line:col: $.path: expected X, got Y".
 * topo_parse.c: a topology file -> a one-server template graph (tgraph).
 * topo_build.c: template x --nodes x fabric file -> models/fabric graph.
 */
#ifndef TOPOLOGIES_TOPO_INTERNAL_H
#define TOPOLOGIES_TOPO_INTERNAL_H

#include <cjson/cJSON.h>
#include <glib.h>
#include <stdbool.h>

#include "topologies/topo.h"

/* ---- positions and errors (topo_json.c) ------------------------------ */

typedef struct {
    char *file;      /* path used in messages (owned) */
    char *text;      /* file contents (owned) */
    GHashTable *pos; /* JSON path of each value -> offset + 1 */
} topo_src;

/* Read `path` and parse it; on success *root is the cJSON tree (caller
 * cJSON_Delete's) and s holds the text and its position map. On failure
 * sets *err (TOPO_ERROR_IO or TOPO_ERROR_PARSE with line:col). */
bool topo_src_load(topo_src *s, const char *path, cJSON **root, GError **err);
void topo_src_clear(topo_src *s);
/* Set *err to "file:line:col: path: <fmt>", the position being that of the
 * value at `path` (or its nearest recorded ancestor). */
void topo_src_error(const topo_src *s, GError **err, int code, const char *path, const char *fmt,
                    ...) G_GNUC_PRINTF(5, 6);

/* A getter context: the source for positions, the effective parameters
 * (numbers may be written "$name" to use a parameter), and the error out. */
typedef struct {
    const topo_src *src;
    GHashTable *params; /* key -> value string; may be NULL */
    GError **err;
} tj_ctx;

/* "$.a" + ".key" / "[i]" (caller g_free's). */
char *tj_path_key(const char *path, const char *key);
char *tj_path_idx(const char *path, int i);
/* A short description of a JSON value's type for messages ("string \"x\""). */
char *tj_describe(const cJSON *v);

/* Require `v` to be an object whose keys are all in `allowed` (NULL-ended). */
bool tj_object(tj_ctx *c, const cJSON *v, const char *path, const char *const *allowed);
/* Number member `key`: missing -> dflt (or an error when required); must be
 * finite and within [lo, hi] (lo excluded when lo_open). Strings "$p" are
 * parameter references. */
bool tj_num(tj_ctx *c, const cJSON *obj, const char *path, const char *key, bool required,
            double dflt, double lo, bool lo_open, double hi, double *out);
bool tj_int(tj_ctx *c, const cJSON *obj, const char *path, const char *key, bool required,
            int dflt, int lo, int hi, int *out);

/* The slowest rate and the lowest efficiency a topology may give a link:
 * 1 MB/s and 1%. Slower, a byte takes over 1e8 ps and a transfer's time
 * leaves the simulator's 64-bit picosecond clock (the slowest real link, a
 * 1 GbE port, is 125 MB/s). */
#define TOPO_MIN_GBPS 1e-3
#define TOPO_MIN_EFF 0.01
/* A rate member `key` in units of unit_GBps GB/s (1: GB/s, 0.125: Gb/s):
 * at least TOPO_MIN_GBPS and at most hi units; when not required, missing
 * or 0 means none (*out = 0). */
bool tj_rate(tj_ctx *c, const cJSON *obj, const char *path, const char *key, bool required, double unit_GBps,
             double hi, double *out);
/* String member; *out points into the tree (NULL when missing, not required). */
bool tj_str(tj_ctx *c, const cJSON *obj, const char *path, const char *key, bool required,
            const char **out);
bool tj_bool(tj_ctx *c, const cJSON *obj, const char *path, const char *key, bool dflt, bool *out);

/* ---- the one-server template (topo_parse.c) -------------------------- */

typedef struct {
    char *id;          /* template id, e.g. "gpu3" */
    char *path;        /* JSON path of the declaring entry, for messages */
    fab_node_kind kind;
    int socket;        /* cpu: declared; others: derived over pcie/mem links; -1 none */
    double transit_Bps;
    int64_t transit_lat_ps;
    double tx_Bps, rx_Bps; /* endpoint injection / ejection limits, 0 = none */
    bool nvls;
    int gpu_local;     /* GPU: index among GPUs in declaration order; else -1 */
} tnode;

typedef struct {
    guint a, b;        /* tnode indices */
    char *path;
    fab_link_desc d;
} tlink;

typedef struct {
    char *name, *description, *path;
    char *gpu_model;
    int gpu_sm;
    double gpu_hbm_Bps;
    topo_cpu_vendor cpu_vendor;
    GHashTable *params;  /* effective key -> value (owned) */
    GArray *nodes;       /* of tnode */
    GArray *links;       /* of tlink */
    GHashTable *ids;     /* id -> index + 1 */
    int ngpus;
    /* NICs: count, rate, and their PCIe link to the GPU's parent */
    int nics;
    double nic_Bps;
    int nic_devices;     /* network devices NCCL sees per modelled NIC (each nic_Bps / nic_devices) */
    fab_link_desc nic_pcie;
    double nic_tx_Bps, nic_rx_Bps; /* NIC injection / ejection limits, 0 = none */
    char *nics_path;
    /* scale-out */
    char *fabric;        /* NULL: none */
    char *fabric_path;   /* JSON path of $.scaleout.fabric */
    int nvl_domain_nodes;
    /* calibration: a params file from `conveyor calibrate fit` */
    char *calibration;   /* as written in the file (relative to it), NULL: none */
} tgraph;

/* What a calibration gives beyond link efficiencies; 0 = not measured. */
typedef struct {
    double launch_us;    /* kernel launch cost */
    double gemm_Fps;     /* bf16 GEMM shape model: rate at long reduction ... */
    double gemm_k0;      /* ... and its per-tile cost in reduction steps */
    double hbm_copy_Bps; /* device-to-device copy rate (bytes copied per second) */
} topo_calib_vals;

/* Apply the calibration file named by g->calibration (resolved next to the
 * topology file): link efficiencies from the measured copy rates (NVLink
 * from p2p/gpu0-gpu1/uni/ce, PCIe from h2d/gpu0/h2d/pinned); *v gets the
 * kernel launch cost, the bf16 GEMM shape model and the HBM copy rate (0
 * where not measured); *summary (caller g_free's) says what was applied.
 * Errors at "$.calibration" with the file's position. No-op without a
 * calibration. */
bool topo_calib_apply(tgraph *g, const topo_src *src, topo_calib_vals *v, char **summary, GError **err);

/* Parse the topology at `path` with --set overrides `sets` into *g. */
bool topo_parse(const char *path, const char *const *sets, tgraph *g, topo_src *src, GError **err);
void tgraph_clear(tgraph *g);

/* Read $.params (the parameters this file supports, with defaults) into a
 * new key -> value-string table, then apply `sets` ("k=v"). NULL with *err
 * set (TOPO_ERROR_SET for a key the file lacks or a bad value). */
GHashTable *topo_params_load(const topo_src *src, const cJSON *root, const char *const *sets,
                             GError **err);

/* ---- scale-out fabric files (topo_parse.c) --------------------------- */

typedef struct {
    char *name;
    double link_Bps;     /* switch port rate, bytes/s per direction */
    double eff;
    double switch_lat_ns;
    double nic_lat_ns;
    int leaf_radix;
    double oversubscription;
    bool rail_optimized;
    bool adaptive_routing;
    bool sharp;          /* switches reduce in the network (InfiniBand SHARP): CollNet */
} tfabric;

/* Load topo_dir()/fabrics/<name>.json. */
bool topo_fabric_load(const char *name, tfabric *fab, GError **err);

/* Per-lane PCIe rate in bytes/s for gen 1..6 (0 for others). */
double topo_pcie_lane_Bps(int gen);
/* NVLink per-link per-direction rate, bytes/s, for gen 1..5; 0 otherwise. */
double topo_nvlink_link_Bps(int gen);
/* NCCL's effective/raw ratio for an NVLink generation. */
double topo_nvlink_eff(int gen);

/* ---- importers' shared pieces (topo_import.c) ------------------------ */

/* Append {"id", "kind"} to nodes / {"a", "b", "kind"[, "source"]} to links;
 * return the new object for more members. */
cJSON *imp_node(cJSON *nodes, const char *id, const char *kind);
cJSON *imp_link(cJSON *links, const char *a, const char *b, const char *kind, const char *src);
/* NVLink generation by compute capability x10 (Pascal 1 ... Blackwell 5). */
int imp_nvlink_gen(int sm);
/* The "gpu" object: the compute table's kind named by `name` (its sm must
 * be sm when sm > 0), or, name NULL, the kind `guess` names (why: the
 * reason, for the source and the note), or with neither, a GPU known only
 * by sm (model "smNN-GPU", memory bandwidth guessed). NULL with *err
 * (TOPO_ERROR_VALUE, "file: ...") on an unknown name or an sm mismatch. */
cJSON *imp_gpu(const char *file, const char *name, int sm, const char *guess, const char *why,
               GError **err);
/* params.p2p on; with several sockets, links between every pair of them
 * (cpu0..cpuN-1) at params.xsocket.GBps, NCCL's inter-CPU rate for the
 * vendor (intel, amd, arm), and params.p2p_xsocket: NCCL uses P2P between
 * GPUs across sockets (path SYS) on AMD hosts only; on Intel and ARM it
 * stops at PXB (ncclTopoCheckP2p, src/graph/paths.cc). */
void imp_sockets(cJSON *params, cJSON *links, int ncpu, const char *vendor);
/* The "scaleout" object: the shipped fabric file for the NIC rate (ib-hdr
 * to 200 Gb/s, ib-ndr to 400, ib-xdr above) when the server has NICs, null
 * otherwise, and with o->nvl_domain > 1 that many servers in one NVLink
 * domain. Nothing when neither. FALSE with *err (TOPO_ERROR_VALUE) for a
 * domain without an NVSwitch to span it. */
gboolean imp_scaleout(cJSON *root, const char *file, const topo_import_opts *o, bool nics, double gbps, bool nvswitch,
                      GError **err);

#endif

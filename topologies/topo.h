/* topologies/topo.h - shipped systems and topology files -> a built fabric.
 *
 * A topology JSON file describes one server (node template: devices and
 * links with cited numbers), its GPU kind, named parameters overridable with
 * --set, and the scale-out fabric that joins N servers (a separate fabric
 * file under topologies/fabrics/). topo_load() resolves a shipped name or a
 * path, validates everything with file:line:col and JSON-path positions, and
 * builds a models/fabric graph for --nodes N / --gpus G.
 */
#ifndef TOPOLOGIES_TOPO_H
#define TOPOLOGIES_TOPO_H

#include <glib.h>
#include <stdbool.h>

#include "models/coll.h"
#include "models/fabric.h"

/* Largest --nodes: 131072 servers (a million GPUs at 8 per server). */
#define TOPO_MAX_NODES 131072

/* Bounds of a topology file that `topo import` must respect too (the
 * importers check these, so what they write loads; docs/topology.md). */
#define TOPO_MIN_SM 30            /* gpu.sm: compute capability x10 */
#define TOPO_MAX_SM 200
#define TOPO_MAX_LINK_NVLINKS 64  /* "links" of one nvlink entry (a bundle) */
#define TOPO_MAX_GPU_NVLINKS 18   /* the nvlink.links parameter: NVLinks per GPU to its NVSwitch */
#define TOPO_MAX_PCIE_LANES 32
#define TOPO_MAX_NICS 64          /* node.nics.count and nics_per_node */
#define TOPO_MAX_NIC_GBPS 3200    /* nic.gbps */
#define TOPO_MAX_SOCKETS 64       /* a cpu's socket is 0 .. TOPO_MAX_SOCKETS - 1 */
#define TOPO_MAX_NVL_DOMAIN 576   /* scaleout.nvl_domain_nodes: servers in one NVLink domain */

typedef struct {
    int nodes;             /* servers to build; 0 = the file's default (1) */
    int gpus;              /* GPUs per server to use (first G, as CUDA_VISIBLE_DEVICES); 0 = all */
    const char *fabric;    /* scale-out fabric name overriding the file's; NULL = file's */
    const char *const *sets; /* NULL-terminated "key=value" overrides, or NULL */
} topo_opts;

typedef enum { CPU_INTEL, CPU_AMD, CPU_ARM } topo_cpu_vendor;

typedef struct {
    char *name;          /* shipped name or file basename without .json */
    char *description;   /* one line */
    char *path;          /* file it came from */
    /* GPU kind (all GPUs of a topology are the same kind) */
    char *gpu_model;     /* e.g. "H100-SXM5-80GB" (nccl-tests prints "NVIDIA " + this) */
    int gpu_sm;          /* compute capability x10: 70, 75, 80, 86, 89, 90, 100 */
    double gpu_hbm_Bps;  /* device memory bandwidth, bytes/s */
    topo_cpu_vendor cpu_vendor;
    /* shape */
    int nodes;           /* servers built */
    int gpus_per_node;   /* GPUs used per server */
    int nranks;          /* nodes * gpus_per_node */
    /* per-GPU NVLink: links and per-link raw rate (bytes/s, one direction); 0 if none */
    int nvlink_links;
    double nvlink_link_Bps;
    double nvlink_eff;
    bool nvswitch;       /* GPUs reach each other through an NVSwitch */
    bool nvls;           /* that NVSwitch supports NVLS (in-switch reduction) */
    int nvl_domain_nodes;/* servers sharing one NVLink domain (GB200 NVL72: 18); 1 otherwise */
    bool p2p;            /* effective p2p setting */
    /* scale-out */
    char *fabric_name;   /* e.g. "ib-ndr"; NULL for a single-node-only system */
    int nics_per_node;
    bool sharp;          /* the scale-out switches reduce in-network (SHARP) */
    double nic_Bps;      /* per NIC, bytes/s, one direction (raw), as its link runs: the
                          * slower of the NIC and the fabric's switch port */
    double nic_raw_Bps;  /* the NIC's own rate (nic.gbps) */
    int nic_devices;     /* network devices NCCL sees per NIC ("net_devices"; 1 unless the NIC
                          * models several, e.g. four 100G EFA per GPU as one 400G NIC) */
    /* the built graph; owned by the topo */
    fabric *fab;
    /* rank r -> its GPU node, and the NIC node it uses (FAB_NONE if none) */
    fab_node_id *gpu_of_rank;
    fab_node_id *nic_of_rank;
    /* calibration (the file's "calibration" params, from `conveyor calibrate fit`) */
    double launch_us;    /* measured kernel launch cost, us; 0 if not calibrated */
    double calib_gemm_Fps, calib_gemm_k0; /* measured bf16 GEMM shape model (compute.h); 0 if not */
    double calib_hbm_copy_Bps;            /* measured device-to-device copy rate; 0 if not */
    char *calibration;   /* what was applied, one line; NULL if none */
    /* effective named parameters after --set (key -> value string) */
    GHashTable *params;
} topo;

/* Load `name_or_path` (a shipped name such as "dgx-h100", resolved in the
 * topology directory, or a path to a .json file) and build it. Returns NULL
 * with *err set (TOPO_ERROR domain) on any problem; messages start with
 * "file:line:col: " and name the JSON path, e.g.
 *   "topologies/x.json:14:9: $.node.links[3].bw_GBps: must be > 0, got -5".
 * Caller owns the result (topo_free). */
topo *topo_load(const char *name_or_path, const topo_opts *opts, GError **err);
void topo_free(topo *t);

/* Directory holding shipped topologies: $CONVEYOR_TOPO_DIR if set, else
 * ./topologies if it has the files, else the install prefix's
 * share/conveyor/topologies next to the binary. Owned by the library. */
const char *topo_dir(void);

/* Shipped systems: a list of (name, gpus per node, description) sorted by
 * name. Caller frees with g_ptr_array_unref (elements are topo_entry*, freed
 * with the array). */
typedef struct {
    char *name;
    int gpus;
    char *description;
} topo_entry;
GPtrArray *topo_list(GError **err);

/* Graphviz text of the built graph (caller g_free's). */
char *topo_dot(const topo *t);

/* What `topo import` is told that the imported file does not say. */
typedef struct {
    const char *gpu;  /* a GPU kind of the compute model's table ("H100", "A100", ...); NULL: the
                       * file's (an NCCL dump's sm) or a guess from the NVLink pattern */
    double nic_gbps;  /* NIC line rate, Gb/s; 0: the dump's <net speed>, or by GPU generation */
    const char *cpu;  /* intel | amd | arm (nvidia-smi output names none; NULL: intel) */
    int nvl_domain;   /* servers sharing one NVLink domain (GB200 NVL72: 18); 0 or 1: none */
} topo_import_opts;

/* Convert an NCCL topology dump (NCCL_TOPO_DUMP_FILE XML) to conveyor's
 * topology JSON text (caller g_free's); GMarkup errors carry line:col. o
 * may be NULL. *note (when note is not NULL) gets a line for the user
 * about what was guessed, or NULL. */
char *topo_import_nccl_xml(const char *path, const topo_import_opts *o, char **note, GError **err);

/* The same from `nvidia-smi topo -m` output (topo_smi.c): GPUs, NVLink
 * counts, PCIe relations (PIX/PXB/PHB/NODE/SYS), NICs and NUMA affinity.
 * Errors carry file:line:col. */
char *topo_import_smi(const char *path, const topo_import_opts *o, char **note, GError **err);

/* Either of the two, chosen by the file's first character ('<': XML). */
char *topo_import(const char *path, const topo_import_opts *o, char **note, GError **err);

/* Fill *s with the collective layer's view of t (pointers into t, valid
 * while t lives): ranks, GPUs, the NVLS switch, the servers' NIC bandwidth;
 * binds every GPU to its rail NIC in t's fabric. launch_us: host cost per
 * GPU kernel launch; gpus_per_thread: GPUs one host thread launches (-g). */
void topo_coll_system(coll_system *s, const topo *t, double launch_us, int gpus_per_thread);

#define TOPO_ERROR (topo_error_quark())
GQuark topo_error_quark(void);
enum {
    TOPO_ERROR_IO = 1,
    TOPO_ERROR_PARSE,     /* malformed JSON / XML */
    TOPO_ERROR_SCHEMA,    /* unknown key, wrong type, missing field */
    TOPO_ERROR_VALUE,     /* out-of-range number, unknown name */
    TOPO_ERROR_REF,       /* dangling or duplicate id */
    TOPO_ERROR_UNREACHABLE,
    TOPO_ERROR_SET,       /* --set key unknown or value invalid */
};

#endif

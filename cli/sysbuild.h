/* cli/sysbuild.h - the options every simulating subcommand shares (--topo,
 * --nodes, --gpus, --fabric, --set) and the bridge from a loaded topology to
 * the collective layer's view of it (coll_system). */
#ifndef CLI_SYSBUILD_H
#define CLI_SYSBUILD_H

#include <glib.h>

#include "models/coll.h"
#include "topologies/topo.h"

typedef struct {
    char *topo;     /* --topo name or path */
    gint nodes, gpus;
    char *fabric;
    char **sets;    /* --set k=v, repeatable */
    gint gpus_per_thread; /* -g as nccl-tests: GPUs driven by one host thread */
    double launch_us;     /* -1: not given (the topology's calibration, else 2.5 us) */
    double launch_ch_us;  /* -1: not given (COLL_LAUNCH_CH_US) */
    gboolean exact;       /* --exact: no folded rings, no reused collectives */
    gboolean no_topo_short; /* set before sys_opts_group: no -t for --topo (collective's -t is nccl-tests' threads) */
} sys_opts;

/* The --help epilogue of the simulating commands: NCCL's variables they read. */
#define SYS_ENV_HELP                                                                                              \
    "Environment, read as NCCL reads it (docs/collectives.md, \"Channel knobs\" and \"Tuner\"):\n"              \
    "  NCCL_ALGO, NCCL_PROTO        limit algorithms/protocols (as --algo/--proto)\n"                             \
    "  NCCL_MAX_NCHANNELS, NCCL_MIN_NCHANNELS, NCCL_MAX_CTAS, NCCL_MIN_CTAS   channels (thread blocks) used\n"    \
    "  NCCL_NVLS_ENABLE=0           no NVLS/NVLSTree\n"                                                             \
    "  NCCL_BUFFSIZE                Simple protocol buffer (bytes; sets its step and slice)\n"                     \
    "  NCCL_COLLNET_ENABLE=1        CollNet (SHARP) where the fabric has it\n"                                     \
    "  NCCL_NET_OVERHEAD            ns of proxy work per multi-node ring network step [2000 AMD, 1000 other; x3 Simple]\n" \
    "  NCCL_P2P_DISABLE=1, NCCL_P2P_LEVEL=NVL|PIX|PXB|PHB|SYS|...   GPU pairs beyond the level go through host memory\n" \
    "  NCCL_DEBUG=INFO              collective: NCCL's ENV lines and its init's (communicator, rings, trees,\n"   \
    "                               transports as simulated); with NCCL_DEBUG_SUBSYS=TUNING its Latency/AlgBw\n" \
    "                               table and one TUNING line per size; with COLL every call nccl-tests makes\n" \
    "                               (`conveyor replay` reads such a log back)"

/* Adds --topo/--nodes/--gpus/--fabric/--set/--launch-us/--launch-channel-us/--exact to a group. */
GOptionGroup *sys_opts_group(sys_opts *o);
/* A --launch-us value (also a sweep point's launch_us): microseconds, a
 * finite number in 0..1e6; false otherwise. */
bool sys_parse_launch_us(const char *value, double *out);
/* NCCL_P2P_DISABLE / NCCL_P2P_LEVEL below NVL on an NVLink domain that spans
 * servers (GB200 NVL72 trays) is not modelled: false with *err. */
bool sys_check_p2p_env(const coll_nccl_env *e, const topo *t, GError **err);
/* Load the topology (exit-2 class errors in *err). */
topo *sys_opts_load(const sys_opts *o, GError **err);
void sys_opts_clear(sys_opts *o);
/* Fill *s from t (pointers into t; valid while t lives). */
void sys_from_topo(coll_system *s, const topo *t, const sys_opts *o);

/* `conveyor p2p --compare PATH` without printing the simulated matrices
 * (cmd_p2p.c); `validate` uses it for p2pBandwidthLatencyTest logs. */
int p2p_compare_only(const sys_opts *so, const char *path);

#endif

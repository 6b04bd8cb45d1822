/* topologies/accuracy.h - error bands next to predictions.
 *
 * `make validate` compares conveyor with real runs (docs/validation.md) and
 * writes what it found to topologies/accuracy/: collectives.json (the signed
 * busbw errors of every compared nccl-tests point, as quantiles per kind of
 * system and size band) and training.json (the TFLOP/s errors of the
 * Megatron rows). A prediction P with errors e = (P - M)/M between lo and
 * hi puts the measured value M between P/(1 + hi) and P/(1 + lo): the 80%
 * band printed next to it. p10/p90 of the errors are in-sample (the model
 * was developed against the same logs) and the errors of one dataset move
 * together, so the p10-p90 of the pooled points held only 41-58% of the
 * points of an nccl-tests dataset left out of it; lo/hi are p10/p90 widened
 * until 80% of a left-out dataset's points fall in the band of the others
 * (scripts/bands.awk; docs/validation.md, "Error bands"). A file without
 * lo/hi (older) gives p10/p90, flagged in-sample.
 */
#ifndef TOPOLOGIES_ACCURACY_H
#define TOPOLOGIES_ACCURACY_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "models/coll.h"

/* What a collective crosses, as the validation groups it. */
typedef enum {
    ACC_NVLINK,  /* one NVLink domain (NVSwitch, NVLink mesh, multi-node NVLink) */
    ACC_PCIE,    /* one server without NVLink (P2P or staged through host memory) */
    ACC_NETWORK, /* servers joined by NICs */
    ACC_REGIMES
} acc_regime;

typedef struct {
    int n;               /* points behind the band */
    double e10, e50, e90; /* quantiles of (predicted - measured) / measured (in-sample) */
    double lo, hi;       /* the band's errors: e10/e90 widened by leave-one-dataset-out (held_out), else e10/e90 */
    bool held_out;       /* lo/hi checked on left-out datasets (the file has them) */
} acc_band;

acc_regime acc_regime_of(const coll_system *sys);
/* The regime of a group of sys's GPUs that spans `nnodes` servers (a replay's
 * tensor- or data-parallel group): the network's across servers, else the
 * server's (NVLink or PCIe). acc_regime_of(sys) is this with sys->nnodes. */
acc_regime acc_regime_span(const coll_system *sys, int nnodes);
/* The regime of a collective run with algorithm `algo` over nnodes nodes:
 * acc_regime_span, except that NVLS and NVLSTree keep NVLink when NCCL's
 * P2P transport is off (NCCL_P2P_DISABLE), since they do not use it. */
acc_regime acc_regime_algo(const coll_system *sys, int nnodes, coll_algo_id algo);
/* Whether the validation measured a system of this kind in regime r: false
 * for servers without NVLink (pcie inside) joined by NICs, since every
 * network dataset (docs/validation.md: 09, 21, 47) is of NVSwitch servers;
 * the network band is then printed marked unmeasured. */
bool acc_regime_measured(const coll_system *sys, acc_regime r);
/* The regime's name as outputs print it: acc_regime_name, or "network (PCIe
 * servers: unmeasured)" where acc_regime_measured is false. */
const char *acc_regime_label(const coll_system *sys, acc_regime r);
const char *acc_regime_name(acc_regime r);
/* -1 if unknown */
int acc_regime_from_name(const char *s);

/* The band for a collective of `bytes` (nccl-tests size) in regime r:
 * false when topologies/accuracy/collectives.json is missing, unreadable,
 * or has no band for it (never an error: predictions stand without one). */
bool acc_coll_band(acc_regime r, uint64_t bytes, acc_band *out);
/* The band of the training-throughput comparison: of the Megatron rows
 * (data, tensor, pipeline parallel; regime "training"), or with zero3 of the
 * DeepSpeed ZeRO-3 rows ("training-zero3"). False when the file has none. */
bool acc_training_band(bool zero3, acc_band *out);

/* The range M in [P/(1+hi), P/(1+lo)] of a predicted rate P (bandwidth,
 * throughput) and, for a predicted time, [P(1+lo), P(1+hi)]. */
void acc_rate_range(double pred, const acc_band *b, double *lo, double *hi);
void acc_time_range(double pred, const acc_band *b, double *lo, double *hi);

/* What the bands printed are, for a label: "held out" (lo/hi checked on
 * datasets left out, every band of the file) or "in-sample". */
const char *acc_coll_band_kind(void);
const char *acc_training_band_kind(void);

/* Parse a bands document (the files' format, docs/validation.md) from
 * text; for tests and the loader. The table is owned by the caller
 * (g_array_unref); elements are acc_entry. */
typedef struct {
    int regime;          /* acc_regime, or -1 for the training entry, -2 for its ZeRO-3 one */
    uint64_t min_bytes, max_bytes; /* [min, max) */
    acc_band band;
} acc_entry;
GArray *acc_parse(const char *json, const char *what, GError **err);

/* The p2p comparison (topologies/accuracy/p2p.json, scripts/validate_p2p.sh):
 * per link class ("nvlink", "pcie-p2p", "staged") and measure ("uni_bw",
 * "bi_bw", "lat_gpu"), the errors of the off-diagonal cells of the real
 * p2pBandwidthLatencyTest logs, in-sample, and whether a band was checked
 * on a dataset left out. One dataset per class and measure is the rule, so
 * there is no band (band false) but where held_out reached 80% with every
 * dataset checked. Loaded once, unlocked: call from one thread. */
typedef struct {
    int datasets, n, checked, checked_cells;
    double min, p10, p50, p90, max;
    double held_out; /* NAN: nothing left out */
    bool band;
    double lo, hi;   /* the band's errors, with band */
    char systems[160]; /* "11 DGX-1 V100; 22 2x RTX 2080 Ti" */
} acc_p2p;
/* False when the file is missing or bad, or has nothing for link/measure. */
bool acc_p2p_error(const char *link, const char *measure, acc_p2p *out);
/* Whether topologies/accuracy/p2p.json was read. */
bool acc_p2p_loaded(void);

#endif

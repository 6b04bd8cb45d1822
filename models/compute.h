/* models/compute.h - the compute model: how long a GPU kernel takes.
 *
 * Per GPU kind, the datasheet numbers (dense tensor-core peak per dtype, HBM
 * bandwidth, SM count, memory size), each with its source; a kernel's time
 * is a roofline with per-class efficiencies:
 *   t = max(flops / (peak[dtype] * eff_flops[class]), bytes / (hbm_Bps * eff_bytes[class]))
 * docs/workloads.md gives the equations, the numbers and where the default
 * efficiencies come from.
 */
#ifndef MODELS_COMPUTE_H
#define MODELS_COMPUTE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum { COMPUTE_BF16, COMPUTE_FP8, COMPUTE_FP32, COMPUTE_DTYPES } compute_dtype;
typedef enum { KC_GEMM, KC_ATTN, KC_ELEM, KC_KINDS } compute_kclass;

typedef struct {
    const char *name;                  /* "H100-SXM", "A100", ... */
    int sm_cc;                         /* compute capability x10 */
    int sms;                           /* streaming multiprocessors */
    double peak_flops[COMPUTE_DTYPES]; /* dense FLOP/s; bf16 slot = fp16 on GPUs without bf16; 0 = unsupported */
    double hbm_Bps;                    /* device memory bandwidth, bytes/s */
    double mem_bytes;                  /* device memory, bytes */
    const char *source;                /* datasheet / whitepaper the numbers come from */
    double gemm_eff;                   /* this kind's default GEMM efficiency, fitted on its own one-GPU
                                        * published run (docs/workloads.md); 0: the shared default */
} gpu_spec;

typedef struct {
    gpu_spec spec;                 /* a copy; hbm_Bps may come from the topology */
    double eff_flops[KC_KINDS];    /* fraction of peak a kernel class reaches (0, 1] */
    double eff_bytes[KC_KINDS];    /* fraction of HBM bandwidth (0, 1] */
    double kernel_ps;              /* fixed cost per kernel (launch + tail), ps */
    double gemm_k0;                /* GEMM shape: efficiency x k / (k + gemm_k0), k the reduction length */
    double comm_penalty;           /* compute beside a collective: x S / (S - C) x (1 + this) (replay.h) */
    double fp8_k0_scale;           /* an fp8 GEMM's k0 is gemm_k0 x this (3, measured on an H200) */
    bool sm_share;                 /* apply that slowdown (default; gpu.sm_share=0 turns it off) */
} gpu_model;

/* The shipped GPU kinds (static table, n entries). */
const gpu_spec *compute_gpu_table(int *n);

/* The GPU kind for a topology's model string ("H100-SXM5-80GB", "Tesla
 * V100-SXM2-32GB", "GB200", ...) and compute capability; NULL with *err
 * (COMPUTE_ERROR_UNKNOWN) if none matches. */
const gpu_spec *compute_gpu_find(const char *model, int sm_cc, GError **err);

/* Fill *g with spec and the default efficiencies (docs/workloads.md). */
void compute_model_init(gpu_model *g, const gpu_spec *spec);

/* Apply one "gpu.KEY=VALUE" override: gemm_eff, attn_eff, elem_eff (FLOP
 * efficiencies), gemm_k0, fp8_k0_scale, comm_penalty, sm_share (0/1), gemm_bw_eff, attn_bw_eff, elem_bw_eff, kernel_us,
 * peak_tflops (bf16), fp8_tflops, hbm_GBps. Returns false with *err
 * (COMPUTE_ERROR_SET) on an unknown key or a value out of range. */
bool compute_model_set(gpu_model *g, const char *kv, GError **err);

/* Kernel time in ps: kernel_ps + max(flops / (peak[dt] * eff_flops[k]),
 * bytes / (hbm * eff_bytes[k])). A dtype the GPU lacks (peak 0) falls back
 * to bf16. flops, bytes >= 0. */
int64_t compute_kernel_ps(const gpu_model *g, compute_kclass k, compute_dtype dt, double flops, double bytes);

/* A GEMM C(m x n) = A(m x k) B(k x n): kernel_ps + max(2mnk / (peak[dt] *
 * eff_flops[KC_GEMM] * k / (k + k0)), bytes / (hbm * eff_bytes[KC_GEMM])),
 * k0 = gemm_k0 (x fp8_k0_scale for fp8 on a GPU with fp8), bytes =
 * compute_gemm_bytes. m, n, k > 0. */
int64_t compute_gemm_ps(const gpu_model *g, compute_dtype dt, double m, double n, double k);
/* A GEMM's device-memory bytes: operands of 2 bytes (1 for fp8) and a 16-bit
 * output: 2 (mk + kn + mn), fp8 mk + kn + 2 mn. */
double compute_gemm_bytes(compute_dtype dt, double m, double n, double k);
/* Dense peak FLOP/s of dt (with the bf16 fallback). */
double compute_peak(const gpu_model *g, compute_dtype dt);

/* "bf16"/"fp16" -> BF16, "fp8", "fp32"; -1 if unknown. */
int compute_dtype_parse(const char *s);
const char *compute_dtype_name(compute_dtype dt);

/* A device-to-device copy (cudaMemcpy on the copy engines) reads and writes
 * each byte in device memory, moving that traffic at this fraction of the
 * datasheet HBM bandwidth: 0.882, measured on an H200 (calibrate/data/
 * h200-2026-11-29, d2d_copy ce: 4 GiB in 2,024.7 us = 4.23 of 4.8 TB/s).
 * Used where a copy is the whole operation: a one-rank collective (NCCL's
 * ncclLaunchOneRank) and p2pBandwidthLatencyTest's diagonal. */
#define COMPUTE_COPY_HBM_EFF 0.882

#define COMPUTE_ERROR (compute_error_quark())
GQuark compute_error_quark(void);
enum { COMPUTE_ERROR_UNKNOWN = 1, COMPUTE_ERROR_SET };

#endif

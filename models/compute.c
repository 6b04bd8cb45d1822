/* models/compute.c - GPU kinds with their datasheet numbers, and the
 * roofline kernel-time model with per-class efficiencies (compute.h).
 * Every number below carries its source; docs/workloads.md repeats them.
 */
#include "models/compute.h"
#include "sim/simtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define T 1e12
#define GB 1e9
#define GIB 1073741824.0
#define MIB 1048576.0

/* Dense (no 2:4 sparsity) tensor-core peaks. bf16 slot: bf16 where the GPU
 * has it, fp16 with fp32 accumulate otherwise (V100, RTX 2080 Ti). */
static const gpu_spec gpus[] = {
    {"V100-SXM2", 70, 80, {125 * T, 0, 15.7 * T}, 900 * GB, 32 * GIB,
     "NVIDIA Tesla V100 datasheet (SXM2): 125 TFLOPS tensor (fp16), 15.7 TFLOPS fp32, 900 GB/s HBM2, 32 GB; "
     "80 SMs (Volta whitepaper)",
     0.73 /* fitted: Megatron-LM 2020 table, 1.2B on one DGX-2 V100 (docs/workloads.md) */},
    {"A100-SXM4", 80, 108, {312 * T, 0, 19.5 * T}, 2039 * GB, 80 * GIB,
     "NVIDIA A100 datasheet (SXM 80GB): 312 TFLOPS bf16 dense, 19.5 TFLOPS fp32, 2,039 GB/s HBM2e; "
     "108 SMs (Ampere whitepaper)", 0},
    {"H100-SXM", 90, 132, {989.4 * T, 1978.9 * T, 66.9 * T}, 3350 * GB, 80 * GIB,
     "NVIDIA H100 datasheet (SXM5): 989 TFLOPS bf16 and 1,979 TFLOPS fp8 dense (half the sparse figures), "
     "67 TFLOPS fp32, 3.35 TB/s HBM3, 80 GB; 132 SMs (Hopper whitepaper)", 0},
    {"H100-PCIe", 90, 114, {756 * T, 1513 * T, 51.2 * T}, 2000 * GB, 80 * GIB,
     "NVIDIA H100 datasheet (PCIe): 756 TFLOPS bf16 and 1,513 TFLOPS fp8 dense, 51 TFLOPS fp32, 2 TB/s; 114 SMs", 0},
    {"H200", 90, 132, {989.4 * T, 1978.9 * T, 66.9 * T}, 4800 * GB, 143771 * MIB,
     "NVIDIA H200 datasheet (SXM): 989 TFLOPS bf16 and 1,979 TFLOPS fp8 dense, 67 TFLOPS fp32, 4.8 TB/s "
     "HBM3e; memory: nvidia-smi -q's FB total on an H200, 143,771 MiB (the datasheet's \"141 GB\" is "
     "binary: 140.4 GiB; calibrate/data/h200-2026-11-29/machine.txt); 132 SMs (same GH100 configuration "
     "as H100 SXM)", 0},
    {"B200", 100, 148, {2250 * T, 4500 * T, 75 * T}, 8000 * GB, 180 * GB,
     "NVIDIA HGX B200 datasheet, 8 GPUs: 36 PFLOPS bf16 and 72 PFLOPS fp8 with sparsity -> 2.25 / 4.5 "
     "PFLOPS dense per GPU, 600 TFLOPS fp32 -> 75 per GPU, 64 TB/s HBM3e -> 8 TB/s, 1.44 TB -> 180 GB; "
     "148 SMs (Blackwell technical brief)", 0},
    {"GB200", 100, 148, {2500 * T, 5000 * T, 80 * T}, 8000 * GB, 186 * GB,
     "NVIDIA GB200 NVL72 datasheet, 72 GPUs: 360 PFLOPS bf16 and 720 PFLOPS fp8 with sparsity -> 2.5 / 5 "
     "PFLOPS dense per GPU, 5,760 TFLOPS fp32 -> 80 per GPU, 576 TB/s HBM3e -> 8 TB/s, 13.4 TB -> 186 GB; "
     "148 SMs", 0},
    {"RTX 4090", 89, 128, {165.2 * T, 330.3 * T, 82.6 * T}, 1008 * GB, 24 * GIB,
     "NVIDIA Ada Lovelace whitepaper, appendix (GeForce RTX 4090): 165.2 TFLOPS bf16/fp16 tensor with fp32 "
     "accumulate, 330.3 TFLOPS fp8 (fp32 accumulate), 82.6 TFLOPS fp32, 1,008 GB/s GDDR6X, 24 GB, 128 SMs", 0},
    {"L40S", 89, 142, {362.05 * T, 733 * T, 91.6 * T}, 864 * GB, 48 * GIB,
     "NVIDIA L40S datasheet: 362 TFLOPS bf16 and 733 TFLOPS fp8 dense (half the sparse figures), 91.6 "
     "TFLOPS fp32, 864 GB/s GDDR6, 48 GB; 142 SMs", 0},
    {"RTX 2080 Ti", 75, 68, {53.8 * T, 0, 13.4 * T}, 616 * GB, 11 * GIB,
     "NVIDIA Turing whitepaper, appendix (GeForce RTX 2080 Ti reference): 53.8 TFLOPS fp16 tensor with fp32 "
     "accumulate, 13.4 TFLOPS fp32, 616 GB/s GDDR6, 11 GB, 68 SMs", 0},
};

/* Topology model strings -> table names: the first pattern found in the
 * (upper-cased) string wins, so specific names come before general ones. */
static const struct {
    const char *pattern, *name;
} aliases[] = {
    {"GB200", "GB200"}, {"B200", "B200"},   {"H200", "H200"},       {"H100-PCIE", "H100-PCIe"},
    {"H100 PCIE", "H100-PCIe"},             {"H100", "H100-SXM"},   {"A100", "A100-SXM4"},
    {"V100", "V100-SXM2"},                  {"L40S", "L40S"},       {"4090", "RTX 4090"},
    {"2080", "RTX 2080 Ti"},
};

/* Default efficiencies; docs/workloads.md "Efficiencies" derives each. */
#define DEFAULT_GEMM_EFF 0.60
#define DEFAULT_ATTN_EFF 0.50
#define DEFAULT_ELEM_EFF 0.50
#define DEFAULT_BW_EFF 0.80
#define DEFAULT_KERNEL_US 1.0
#define DEFAULT_GEMM_K0 182.0 /* measured, calibrate/data/h200-2026-11-29 (docs/workloads.md) */
#define DEFAULT_COMM_PENALTY 0.064 /* measured, calibrate/data/h200-2026-11-29/overlap.jsonl (docs/traces.md) */
/* An fp8 GEMM's k0 over a bf16 one's: the H200's squares, 2,048-12,288, fit e k / (k + k0) at
 * e 0.862 for both dtypes, k0 420 bf16 and 1,250 fp8 (calibrate/data/h200-2026-11-29; docs/workloads.md) */
#define DEFAULT_FP8_K0_SCALE 3.0

G_DEFINE_QUARK(conveyor-compute-error-quark, compute_error)

const gpu_spec *compute_gpu_table(int *n)
{
    *n = (int)G_N_ELEMENTS(gpus);
    return gpus;
}

const gpu_spec *compute_gpu_find(const char *model, int sm_cc, GError **err)
{
    g_autofree char *up = g_ascii_strup(model ? model : "", -1);
    for (size_t i = 0; i < G_N_ELEMENTS(aliases); i++) {
        if (!strstr(up, aliases[i].pattern))
            continue;
        for (size_t k = 0; k < G_N_ELEMENTS(gpus); k++)
            if (!strcmp(gpus[k].name, aliases[i].name))
                return &gpus[k];
    }
    g_set_error(err, COMPUTE_ERROR, COMPUTE_ERROR_UNKNOWN,
                "no compute model for GPU '%s' (sm_%d); known: V100, A100, H100 (SXM, PCIe), H200, B200, GB200, "
                "RTX 4090, L40S, RTX 2080 Ti",
                model ? model : "", sm_cc);
    return NULL;
}

void compute_model_init(gpu_model *g, const gpu_spec *spec)
{
    *g = (gpu_model){.spec = *spec, .kernel_ps = DEFAULT_KERNEL_US * 1e6, .gemm_k0 = DEFAULT_GEMM_K0,
                     .comm_penalty = DEFAULT_COMM_PENALTY, .fp8_k0_scale = DEFAULT_FP8_K0_SCALE,
                     .sm_share = true};
    g->eff_flops[KC_GEMM] = spec->gemm_eff > 0 ? spec->gemm_eff : DEFAULT_GEMM_EFF;
    g->eff_flops[KC_ATTN] = DEFAULT_ATTN_EFF;
    g->eff_flops[KC_ELEM] = DEFAULT_ELEM_EFF;
    for (int k = 0; k < KC_KINDS; k++)
        g->eff_bytes[k] = DEFAULT_BW_EFF;
}

bool compute_model_set(gpu_model *g, const char *kv, GError **err)
{
    const char *eq = kv ? strchr(kv, '=') : NULL;
    if (!eq || strncmp(kv, "gpu.", 4)) {
        g_set_error(err, COMPUTE_ERROR, COMPUTE_ERROR_SET, "--set '%s': expected gpu.KEY=VALUE", kv ? kv : "");
        return false;
    }
    g_autofree char *key = g_strndup(kv + 4, (gsize)(eq - kv - 4));
    char *end = NULL;
    double v = g_ascii_strtod(eq + 1, &end);
    if (end == eq + 1 || *end || !isfinite(v)) {
        g_set_error(err, COMPUTE_ERROR, COMPUTE_ERROR_SET, "--set %s: '%s' is not a number", kv, eq + 1);
        return false;
    }
    static const char *const effk[] = {"gemm_eff", "attn_eff", "elem_eff"};
    static const char *const bwk[] = {"gemm_bw_eff", "attn_bw_eff", "elem_bw_eff"};
    for (int k = 0; k < KC_KINDS; k++) {
        double *slot = !strcmp(key, effk[k]) ? &g->eff_flops[k] : !strcmp(key, bwk[k]) ? &g->eff_bytes[k] : NULL;
        if (!slot)
            continue;
        if (!(v > 0 && v <= 1)) {
            g_set_error(err, COMPUTE_ERROR, COMPUTE_ERROR_SET, "--set gpu.%s: must be in (0, 1], got %g", key, v);
            return false;
        }
        *slot = v;
        return true;
    }
    double *slot = NULL, scale = 1, lo = 0, hi = 1e9;
    if (!strcmp(key, "kernel_us"))
        slot = &g->kernel_ps, scale = 1e6, lo = -1e-300, hi = 1e6; /* >= 0 */
    else if (!strcmp(key, "gemm_k0"))
        slot = &g->gemm_k0, lo = -1e-300, hi = 1e6; /* >= 0 */
    else if (!strcmp(key, "fp8_k0_scale"))
        slot = &g->fp8_k0_scale, lo = -1e-300, hi = 100; /* >= 0 */
    else if (!strcmp(key, "comm_penalty"))
        slot = &g->comm_penalty, lo = -1e-300, hi = 10; /* >= 0 */
    else if (!strcmp(key, "sm_share")) {
        if (v != 0 && v != 1) {
            g_set_error(err, COMPUTE_ERROR, COMPUTE_ERROR_SET, "--set gpu.sm_share: 0 or 1, got %g", v);
            return false;
        }
        g->sm_share = v == 1;
        return true;
    }
    else if (!strcmp(key, "peak_tflops"))
        slot = &g->spec.peak_flops[COMPUTE_BF16], scale = T;
    else if (!strcmp(key, "fp8_tflops"))
        slot = &g->spec.peak_flops[COMPUTE_FP8], scale = T;
    else if (!strcmp(key, "hbm_GBps"))
        slot = &g->spec.hbm_Bps, scale = GB;
    if (!slot) {
        g_set_error(err, COMPUTE_ERROR, COMPUTE_ERROR_SET,
                    "--set gpu.%s: no such parameter (gemm_eff, gemm_k0, fp8_k0_scale, comm_penalty, sm_share, attn_eff, elem_eff, gemm_bw_eff, attn_bw_eff, "
                    "elem_bw_eff, kernel_us, peak_tflops, fp8_tflops, hbm_GBps)", key);
        return false;
    }
    if (!(v > lo && v <= hi)) {
        if (lo < 0) /* the "(-1e-300" bounds: zero allowed */
            g_set_error(err, COMPUTE_ERROR, COMPUTE_ERROR_SET, "--set gpu.%s: must be in [0, %g], got %g", key, hi, v);
        else
            g_set_error(err, COMPUTE_ERROR, COMPUTE_ERROR_SET, "--set gpu.%s: must be in (%g, %g], got %g", key,
                        lo, hi, v);
        return false;
    }
    *slot = v * scale;
    return true;
}

double compute_peak(const gpu_model *g, compute_dtype dt)
{
    double p = g->spec.peak_flops[dt];
    return p > 0 ? p : g->spec.peak_flops[COMPUTE_BF16];
}

/* A kernel's picoseconds: the slower roofline bound plus the fixed cost,
 * at most SIM_TIME_LIMIT (a kernel past the simulated clock's range: the
 * replay stops there with its error instead of a wrapped time). */
static int64_t kernel_ps(const gpu_model *g, double tf, double tb)
{
    return sim_time_from_ps((tf > tb ? tf : tb) * 1e12 + g->kernel_ps);
}

int64_t compute_kernel_ps(const gpu_model *g, compute_kclass k, compute_dtype dt, double flops, double bytes)
{
    g_assert(k >= 0 && k < KC_KINDS && flops >= 0 && bytes >= 0);
    double tf = flops / (compute_peak(g, dt) * g->eff_flops[k]);
    double tb = bytes / (g->spec.hbm_Bps * g->eff_bytes[k]);
    return kernel_ps(g, tf, tb);
}

double compute_gemm_bytes(compute_dtype dt, double m, double n, double k)
{
    return (dt == COMPUTE_FP8 ? 1 : 2) * (m * k + k * n) + 2 * m * n;
}

int64_t compute_gemm_ps(const gpu_model *g, compute_dtype dt, double m, double n, double k)
{
    g_assert(m > 0 && n > 0 && k > 0);
    if (!(g->spec.peak_flops[dt] > 0)) /* a dtype the GPU lacks: its bf16 GEMM */
        dt = COMPUTE_BF16;
    double k0 = g->gemm_k0 * (dt == COMPUTE_FP8 ? g->fp8_k0_scale : 1);
    double tf = 2 * m * n * k / (compute_peak(g, dt) * g->eff_flops[KC_GEMM] * (k / (k + k0)));
    double tb = compute_gemm_bytes(dt, m, n, k) / (g->spec.hbm_Bps * g->eff_bytes[KC_GEMM]);
    return kernel_ps(g, tf, tb);
}

int compute_dtype_parse(const char *s)
{
    if (!s)
        return -1;
    if (!g_ascii_strcasecmp(s, "bf16") || !g_ascii_strcasecmp(s, "fp16"))
        return COMPUTE_BF16;
    if (!g_ascii_strcasecmp(s, "fp8"))
        return COMPUTE_FP8;
    if (!g_ascii_strcasecmp(s, "fp32"))
        return COMPUTE_FP32;
    return -1;
}

const char *compute_dtype_name(compute_dtype dt)
{
    static const char *const n[] = {"bf16", "fp8", "fp32"};
    g_assert(dt >= 0 && dt < COMPUTE_DTYPES);
    return n[dt];
}

/* calibrate/gemm.cu - matrix-multiply throughput through cuBLAS, the kernel
 * class that dominates a transformer step (the compute model's KC_GEMM,
 * models/compute.c).  Two sets of shapes:
 *   square   M = N = K = 256 .. 16384, dtypes fp32 (plain FMA), tf32, fp16,
 *            bf16 (fp32 accumulate) and fp8 e4m3 (cublasLt, bf16 output,
 *            Hopper and later): the reachable peak per dtype;
 *   layer    bf16 GEMMs (and fp8 ones, sm_89 and later) of a transformer layer as Megatron-LM runs them with
 *            tensor parallelism t: for hidden h, FFN f, tokens T (micro-batch x
 *            sequence) and t in {1,2,4,8}: qkv (T x h -> 3h/t), proj (T x h/t
 *            -> h), fc1 (T x h -> f/t), fc2 (T x f/t -> h), each as forward
 *            (mode "fwd"), input gradient ("dgrad") and weight gradient
 *            ("wgrad"), so the efficiency by shape can be read off.
 * Operands are filled with values in [-1, 1) (never zeros: a zero-filled
 * product draws less power and runs faster).  Records: bench "gemm", path
 * "gpuN", mode "square" | "fwd" | "dgrad" | "wgrad", dtype, plus "m", "n",
 * "k" (C is m x n, K the reduction), "layer" (e.g. "h8192-f28672-T8192-t4-fc1")
 * and "tflops" (2mnk / median time); size_bytes = bytes of A, B and C;
 * unit "us" per product.  See docs/calibration.md. */
#include "common.cuh"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#define CKB(call)                                                                                  \
    do {                                                                                           \
        cublasStatus_t s_ = (call);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #call, (int)s_);    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* x[i] = uniform in [-1, 1) by a hash of i, converted to T. */
template <class T> __global__ void fill_uniform(T *x, uint64_t n, uint32_t seed)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)(i * 2654435761u) ^ seed;
        h ^= h >> 16, h *= 0x7feb352du, h ^= h >> 15;
        x[i] = (T)((float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
    }
}

template <class T> static void fill(void *p, uint64_t n, uint32_t seed)
{
    fill_uniform<T><<<1024, 256>>>((T *)p, n, seed);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
}

typedef enum { DT_FP32, DT_TF32, DT_FP16, DT_BF16, DT_FP8, DT_N } dt_kind;
static const char *const dt_names[DT_N] = {"fp32", "tf32", "fp16", "bf16", "fp8"};
static const int dt_in_bytes[DT_N] = {4, 4, 2, 2, 1};
static const int dt_out_bytes[DT_N] = {4, 4, 2, 2, 2};

typedef struct {
    cublasHandle_t h;
    cublasLtHandle_t lt;
    void *ws;
    size_t ws_bytes;
    void *a, *b, *c; /* each cap bytes */
    uint64_t cap;
    cudaStream_t s;
} ctx;

/* One product C(m x n) = op(A) op(B), column-major as cuBLAS sees it.
 * ta/tb: whether A/B are transposed (A is m x k after op, B k x n). */
static bool gemm_once(ctx *c, dt_kind dt, bool ta, bool tb, int m, int n, int k)
{
    const float one = 1.0f, zero = 0.0f;
    cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    int lda = ta ? k : m, ldb = tb ? n : k;
    cudaDataType_t t;
    cublasComputeType_t ct;
    switch (dt) {
    case DT_FP32: t = CUDA_R_32F, ct = CUBLAS_COMPUTE_32F; break;
    case DT_TF32: t = CUDA_R_32F, ct = CUBLAS_COMPUTE_32F_FAST_TF32; break;
    case DT_FP16: t = CUDA_R_16F, ct = CUBLAS_COMPUTE_32F; break;
    case DT_BF16: t = CUDA_R_16BF, ct = CUBLAS_COMPUTE_32F; break;
    default: return false;
    }
    return cublasGemmEx(c->h, oa, ob, m, n, k, &one, c->a, t, lda, c->b, t, ldb, &zero, c->c, t, m, ct,
                        CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
}

/* fp8 e4m3 through cublasLt: the only layout Hopper's fp8 path takes is
 * A transposed ("TN"), bf16 output, fp32 accumulate, unit scales. */
typedef struct {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    bool ok;
} lt_plan;

static lt_plan lt_plan_make(ctx *c, int m, int n, int k)
{
    lt_plan p = {};
    cublasOperation_t T = CUBLAS_OP_T, N = CUBLAS_OP_N;
    if (cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS)
        return p;
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &T, sizeof T);
    cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &N, sizeof N);
    if (cublasLtMatrixLayoutCreate(&p.la, CUDA_R_8F_E4M3, k, m, k) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatrixLayoutCreate(&p.lb, CUDA_R_8F_E4M3, k, n, k) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatrixLayoutCreate(&p.lc, CUDA_R_16BF, m, n, m) != CUBLAS_STATUS_SUCCESS)
        return p;
    cublasLtMatmulPreference_t pref;
    if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS)
        return p;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &c->ws_bytes,
                                         sizeof c->ws_bytes);
    cublasLtMatmulHeuristicResult_t r;
    int got = 0;
    if (cublasLtMatmulAlgoGetHeuristic(c->lt, p.op, p.la, p.lb, p.lc, p.lc, pref, 1, &r, &got) ==
            CUBLAS_STATUS_SUCCESS &&
        got > 0) {
        p.algo = r.algo;
        p.ok = true;
    }
    cublasLtMatmulPreferenceDestroy(pref);
    return p;
}

static bool lt_run(ctx *c, const lt_plan *p)
{
    const float one = 1.0f, zero = 0.0f;
    return cublasLtMatmul(c->lt, p->op, &one, c->a, p->la, c->b, p->lb, &zero, c->c, p->lc, c->c, p->lc, &p->algo,
                          c->ws, c->ws_bytes, c->s) == CUBLAS_STATUS_SUCCESS;
}

static void lt_plan_free(lt_plan *p)
{
    if (p->lc)
        cublasLtMatrixLayoutDestroy(p->lc);
    if (p->lb)
        cublasLtMatrixLayoutDestroy(p->lb);
    if (p->la)
        cublasLtMatrixLayoutDestroy(p->la);
    if (p->op)
        cublasLtMatmulDescDestroy(p->op);
}

static void emit(const cal_opts *o, const cal_device *d, const char *path, const char *mode, dt_kind dt, int m,
                 int n, int k, const char *layer, int iters, cal_stats st)
{
    uint64_t bytes = (uint64_t)dt_in_bytes[dt] * ((uint64_t)m * k + (uint64_t)k * n) +
                     (uint64_t)dt_out_bytes[dt] * (uint64_t)m * n;
    double flops = 2.0 * m * n * (double)k;
    fprintf(o->out,
            "{\"bench\":\"gemm\",\"device\":\"%s\",\"pci_bus_id\":\"%s\",\"path\":\"%s\",\"mode\":\"%s\","
            "\"dtype\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d",
            d->name, d->pci, path, mode, dt_names[dt], m, n, k);
    if (layer)
        fprintf(o->out, ",\"layer\":\"%s\"", layer);
    fprintf(o->out,
            ",\"tflops\":%.6g,\"size_bytes\":%llu,\"iters\":%d,\"median\":%.6g,\"min\":%.6g,\"max\":%.6g,"
            "\"unit\":\"us\"}\n",
            flops / st.median * 1e-12, (unsigned long long)bytes, iters, st.median * 1e6, st.min * 1e6,
            st.max * 1e6);
    fflush(o->out);
}

/* Times one shape; false (and a message) when cuBLAS refuses it. */
static bool measure(ctx *c, const cal_opts *o, const cal_device *d, const char *path, const char *mode, dt_kind dt,
                    bool ta, bool tb, int m, int n, int k, const char *layer)
{
    uint64_t need = (uint64_t)std::max(dt_in_bytes[dt], dt_out_bytes[dt]) *
                    std::max({(uint64_t)m * k, (uint64_t)k * n, (uint64_t)m * n});
    if (need > c->cap) {
        fprintf(stderr, "gemm: %s %s %dx%dx%d needs %llu bytes per operand (cap %llu): skipped\n", mode,
                dt_names[dt], m, n, k, (unsigned long long)need, (unsigned long long)c->cap);
        return false;
    }
    double flops = 2.0 * m * n * (double)k;
    /* rough rate for the repeat count: 400 TFLOP/s for tensor-core types */
    double rough = dt == DT_FP32 ? 40e12 : 400e12;
    int inner = std::max(1, std::min(50, (int)(2e-3 / (flops / rough + 5e-6))));
    int reps = o->quick ? 3 : (flops > 1e12 ? 5 : o->reps);
    lt_plan lp = {};
    if (dt == DT_FP8) {
        lp = lt_plan_make(c, m, n, k);
        if (!lp.ok) {
            fprintf(stderr, "gemm: no cublasLt fp8 algorithm for %dx%dx%d: skipped\n", m, n, k);
            lt_plan_free(&lp);
            return false;
        }
    }
    bool ok = dt == DT_FP8 ? lt_run(c, &lp) : gemm_once(c, dt, ta, tb, m, n, k);
    if (!ok) {
        fprintf(stderr, "gemm: cuBLAS refused %s %s %dx%dx%d: skipped\n", mode, dt_names[dt], m, n, k);
        lt_plan_free(&lp);
        CK(cudaGetLastError());
        return false;
    }
    cal_stats st = cal_time(c->s, o->warmup, reps, inner, [&](cudaStream_t) {
        if (dt == DT_FP8)
            lt_run(c, &lp);
        else
            gemm_once(c, dt, ta, tb, m, n, k);
    });
    CK(cudaGetLastError());
    lt_plan_free(&lp);
    emit(o, d, path, mode, dt, m, n, k, layer, reps * inner, st);
    return true;
}

/* Transformer shapes: (hidden, FFN) of Llama 3 8B, Llama 3 70B, GPT-3 175B,
 * Llama 3 405B (published configurations; SwiGLU's fc1 is two f-wide
 * projections, run as one 2f-wide product as Megatron-LM fuses them). */
static const struct {
    int h, f;
    bool glu;
} layers[] = {{4096, 14336, true}, {8192, 28672, true}, {12288, 49152, false}, {16384, 53248, true}};

/* The forward, input-gradient and weight-gradient GEMMs of each layer shape
 * in dtype dt (fp8 through cublasLt's one layout: the transposes do not
 * change m, n, k). */
static void layer_gemms(ctx *c, const cal_opts *o, const cal_device *d, const char *path, dt_kind dt)
{
    std::vector<int> toks = o->quick ? std::vector<int>{4096} : std::vector<int>{2048, 8192};
    std::vector<int> tps = o->quick ? std::vector<int>{1, 8} : std::vector<int>{1, 2, 4, 8};
    for (auto &L : layers)
        for (int T : toks)
            for (int t : tps) {
                /* name, in (K of fwd), out (N of fwd) */
                struct {
                    const char *name;
                    int in, out;
                } g[4] = {{"qkv", L.h, 3 * L.h / t},
                          {"proj", L.h / t, L.h},
                          {"fc1", L.h, (L.glu ? 2 : 1) * L.f / t},
                          {"fc2", L.f / t, L.h}};
                for (auto &G : g) {
                    char name[96];
                    snprintf(name, sizeof name, "h%d-f%d-T%d-t%d-%s", L.h, L.f, T, t, G.name);
                    /* row-major Y[T x out] = X[T x in] W^T, W is [out x in]: in
                     * cuBLAS column-major terms C(out x T) = W^T(out x in) X(in x T) */
                    measure(c, o, d, path, "fwd", dt, true, false, G.out, T, G.in, name);
                    /* dX[T x in] = dY[T x out] W: C(in x T) = W(in x out) dY(out x T) */
                    measure(c, o, d, path, "dgrad", dt, false, false, G.in, T, G.out, name);
                    /* dW[out x in] = dY^T X: C(in x out) = X(in x T) dY^T(T x out) */
                    measure(c, o, d, path, "wgrad", dt, false, true, G.in, G.out, T, name);
                }
            }
}

static void run_device(const cal_opts *o, int dev)
{
    CK(cudaSetDevice(dev));
    cal_device d = cal_device_get(dev);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    ctx c = {};
    c.cap = std::min<uint64_t>(cal_size_cap(o, 4), 4ull << 30);
    CK(cudaMalloc(&c.a, c.cap));
    CK(cudaMalloc(&c.b, c.cap));
    CK(cudaMalloc(&c.c, c.cap));
    c.ws_bytes = 64ull << 20;
    CK(cudaMalloc(&c.ws, c.ws_bytes));
    CK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
    CKB(cublasCreate(&c.h));
    CKB(cublasSetStream(c.h, c.s));
    CKB(cublasSetWorkspace(c.h, c.ws, c.ws_bytes));
    CKB(cublasLtCreate(&c.lt));
    char path[32];
    snprintf(path, sizeof path, "gpu%d", dev);

    std::vector<int> sq = o->quick ? std::vector<int>{1024, 4096, 8192}
                                   : std::vector<int>{256, 512, 1024, 2048, 4096, 6144, 8192, 12288, 16384};
    for (int dt = 0; dt < DT_N; dt++) {
        if (dt == DT_FP8 && prop.major * 10 + prop.minor < 89) {
            fprintf(stderr, "gemm: sm_%d%d has no fp8 tensor cores: fp8 skipped\n", prop.major, prop.minor);
            continue;
        }
        /* fill as this dtype's element type (fp8 and tf32 share bit patterns
         * with a narrower or equal type, so the values stay in [-1, 1)) */
        uint64_t n = c.cap / dt_in_bytes[dt];
        void *bufs[3] = {c.a, c.b, c.c};
        for (int i = 0; i < 3; i++) {
            if (dt == DT_FP32 || dt == DT_TF32)
                fill<float>(bufs[i], n, 0x1234u + i);
            else if (dt == DT_FP16)
                fill<__half>(bufs[i], n, 0x1234u + i);
            else if (dt == DT_BF16)
                fill<__nv_bfloat16>(bufs[i], n, 0x1234u + i);
            else
                fill<__nv_fp8_e4m3>(bufs[i], c.cap, 0x1234u + i);
        }
        for (int s : sq) {
            if (dt == DT_FP32 && s > 8192)
                continue; /* 2 TFLOP per product at ~50 TFLOP/s: long, and fp32 only anchors the CUDA-core rate */
            measure(&c, o, &d, path, "square", (dt_kind)dt, dt == DT_FP8, false, s, s, s, NULL);
        }
    }

    /* layer shapes, bf16; fp8 too where the GPU has it (Transformer Engine runs the linear layers'
     * three GEMMs in fp8 under --dtype fp8: their shape model's k0 against fp8_k0_scale) */
    for (int i = 0; i < 3; i++)
        fill<__nv_bfloat16>(i == 0 ? c.a : i == 1 ? c.b : c.c, c.cap / 2, 0x99u + i);
    layer_gemms(&c, o, &d, path, DT_BF16);
    if (prop.major * 10 + prop.minor >= 89) {
        for (int i = 0; i < 3; i++)
            fill<__nv_fp8_e4m3>(i == 0 ? c.a : i == 1 ? c.b : c.c, c.cap, 0x77u + i);
        layer_gemms(&c, o, &d, path, DT_FP8);
    }

    cublasLtDestroy(c.lt);
    cublasDestroy(c.h);
    CK(cudaStreamDestroy(c.s));
    CK(cudaFree(c.ws));
    CK(cudaFree(c.a));
    CK(cudaFree(c.b));
    CK(cudaFree(c.c));
}

int main(int argc, char **argv) { return cal_main_per_device(argc, argv, run_device); }

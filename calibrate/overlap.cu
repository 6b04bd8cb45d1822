/* calibrate/overlap.cu - what a communication kernel costs the compute it
 * overlaps.  NCCL runs a collective as one thread block per channel that
 * streams data through HBM for as long as the collective lasts; a GEMM
 * launched beside it gets the remaining SMs and shares HBM.  This runs a
 * bf16 cuBLAS GEMM (8192^3, 5 back to back) alone and beside a copy kernel
 * of C blocks x 512 threads (NCCL's Simple thread count; one block per SM,
 * forced by asking for over half an SM's shared memory) that streams a
 * 256 MiB buffer for longer than the GEMMs take, C = 1, 2, 4, 8, 16, 24,
 * 32, 48, 64, and the copy kernel alone with C blocks.  Records: bench
 * "overlap", path "gpuN", dtype "bf16", size_bytes 0, unit "us";
 * mode "gemm" (alone, per GEMM), "gemm_with_copy<C>" (per GEMM beside C
 * copy blocks), "copy<C>" (per pass of the buffer, alone) and
 * "copy<C>_with_gemm" (per pass while the GEMMs run); for C = 16 and 32,
 * one GEMM beside a copy of about 25% and 50% of its time, launched
 * together: "gemm_with_copy<C>_part<P>" (the GEMM) and
 * "copy<C>_part<P>_with_gemm" (the whole copy).  Also "sms" (flag).
 * See docs/calibration.md. */
#include "common.cuh"

#include <cublas_v2.h>
#include <cuda_bf16.h>

#define GEMM_N 8192
#define GEMMS 5
#define COPY_BYTES (256ull << 20)

/* Each block copies its slice of src to dst `passes` times (16-byte
 * vectors); the slice layout keeps blocks off each other's lines. */
__global__ void copy_passes(const int4 *__restrict__ src, int4 *dst, uint64_t n16, int passes)
{
    uint64_t per = (n16 + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per, hi = min(n16, lo + per);
    for (int p = 0; p < passes; p++)
        for (uint64_t i = lo + threadIdx.x; i < hi; i += blockDim.x)
            dst[i] = src[i];
}

/* v: per-operation times in us, one per repeat */
static void emit(const cal_opts *o, const cal_device *d, const char *path, const char *mode, int iters,
                 std::vector<double> v)
{
    for (double &x : v)
        x *= 1e-6;
    cal_emit(o, d, "overlap", path, NULL, mode, "bf16", 0, iters, cal_summarize(v), "us");
}

static void run_device(const cal_opts *o, int dev)
{
    CK(cudaSetDevice(dev));
    cal_device d = cal_device_get(dev);
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    char path[32];
    snprintf(path, sizeof path, "gpu%d", dev);
    fprintf(o->out, "{\"bench\":\"overlap\",\"device\":\"%s\",\"pci_bus_id\":\"%s\",\"path\":\"%s\",\"mode\":\"sms\","
                    "\"value\":%d,\"unit\":\"flag\"}\n", d.name, d.pci, path, sms);
    size_t mat = (size_t)GEMM_N * GEMM_N * sizeof(__nv_bfloat16);
    void *a, *b, *c, *src, *dst;
    CK(cudaMalloc(&a, mat));
    CK(cudaMalloc(&b, mat));
    CK(cudaMalloc(&c, mat));
    CK(cudaMalloc(&src, COPY_BYTES));
    CK(cudaMalloc(&dst, COPY_BYTES));
    cal_fill(a, mat, 0x3c01u); /* bf16 patterns with bit 0 set: small non-zero values and some NaN; */
    cal_fill(b, mat, 0x3c03u); /* the tensor cores' rate does not depend on the values' class */
    cal_fill(src, COPY_BYTES, 0x77u);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "overlap: cublasCreate failed\n");
        exit(1);
    }
    cudaStream_t sg, sc;
    CK(cudaStreamCreateWithFlags(&sg, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
    cublasSetStream(h, sg);
    const float one = 1, zero = 0;
    auto gemm = [&]() {
        if (cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, GEMM_N, GEMM_N, GEMM_N, &one, a, CUDA_R_16BF, GEMM_N, b,
                         CUDA_R_16BF, GEMM_N, &zero, c, CUDA_R_16BF, GEMM_N, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "overlap: cublasGemmEx failed\n");
            exit(1);
        }
    };
    cudaEvent_t g0, g1, c0, c1;
    CK(cudaEventCreate(&g0));
    CK(cudaEventCreate(&g1));
    CK(cudaEventCreate(&c0));
    CK(cudaEventCreate(&c1));
    uint64_t n16 = COPY_BYTES / 16;
    /* one copy block per SM, as NCCL's blocks (large shared memory) are:
     * ask for over half an SM's shared memory */
    int smem_sm = 0, smem_blk = 0;
    CK(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    CK(cudaDeviceGetAttribute(&smem_blk, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    int smem = std::min(smem_blk, smem_sm / 2 + 1024);
    CK(cudaFuncSetAttribute(copy_passes, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int reps = o->quick ? 2 : 5;
    /* `passes` of the copy on C blocks and `ngemm` GEMMs launched together:
     * the GEMMs' and the copy's times, us */
    auto beside = [&](int C, int passes, int ngemm, double *tg, double *tc) {
        CK(cudaEventRecord(c0, sc));
        copy_passes<<<C, 512, smem, sc>>>((const int4 *)src, (int4 *)dst, n16, passes);
        CK_LAUNCH();
        CK(cudaEventRecord(c1, sc));
        CK(cudaEventRecord(g0, sg));
        for (int i = 0; i < ngemm; i++)
            gemm();
        CK(cudaEventRecord(g1, sg));
        CK(cudaEventSynchronize(g1));
        CK(cudaEventSynchronize(c1));
        float mg, mc;
        CK(cudaEventElapsedTime(&mg, g0, g1));
        CK(cudaEventElapsedTime(&mc, c0, c1));
        *tg = mg * 1e3;
        *tc = mc * 1e3;
    };
    /* GEMM alone */
    for (int i = 0; i < 3; i++)
        gemm();
    CK(cudaStreamSynchronize(sg));
    std::vector<double> alone;
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(g0, sg));
        for (int i = 0; i < GEMMS; i++)
            gemm();
        CK(cudaEventRecord(g1, sg));
        CK(cudaEventSynchronize(g1));
        float ms;
        CK(cudaEventElapsedTime(&ms, g0, g1));
        alone.push_back(ms * 1e3 / GEMMS);
    }
    double t_gemm = cal_summarize(alone).median;
    emit(o, &d, path, "gemm", reps * GEMMS, alone);
    static const int blocks[] = {1, 2, 4, 8, 16, 24, 32, 48, 64};
    for (int C : blocks) {
        if (C >= sms)
            break;
        /* the copy alone: time per pass of the buffer */
        copy_passes<<<C, 512, smem, sc>>>((const int4 *)src, (int4 *)dst, n16, 1);
        CK_LAUNCH();
        CK(cudaEventRecord(c0, sc));
        copy_passes<<<C, 512, smem, sc>>>((const int4 *)src, (int4 *)dst, n16, 4);
        CK_LAUNCH();
        CK(cudaEventRecord(c1, sc));
        CK(cudaEventSynchronize(c1));
        float ms;
        CK(cudaEventElapsedTime(&ms, c0, c1));
        double t_pass = ms * 1e3 / 4;
        char mode[48];
        snprintf(mode, sizeof mode, "copy%d", C);
        emit(o, &d, path, mode, 4, {t_pass});
        /* enough passes to outlast the GEMMs 1.5 times (at most 2000) */
        int passes = (int)std::min(2000.0, std::max(2.0, 1.5 * GEMMS * t_gemm / t_pass + 1));
        std::vector<double> with, copy_with;
        for (int r = 0; r < reps; r++) {
            double mg, mc;
            beside(C, passes, GEMMS, &mg, &mc);
            with.push_back(mg / GEMMS);
            copy_with.push_back(mc / passes);
        }
        snprintf(mode, sizeof mode, "gemm_with_copy%d", C);
        emit(o, &d, path, mode, reps * GEMMS, with);
        snprintf(mode, sizeof mode, "copy%d_with_gemm", C);
        emit(o, &d, path, mode, reps * passes, copy_with);
        if (C != 16 && C != 32)
            continue;
        /* a copy ending part-way through one GEMM: passes lasting about a
         * quarter, a half of the GEMM alone, both launched together; the
         * GEMM's time tells whether compute beside communication slows for
         * its whole length or only while the copy runs (docs/traces.md,
         * "Compute beside communication") */
        static const int pcts[] = {25, 50};
        for (int pct : pcts) {
            int part = (int)std::max(1.0, pct / 100.0 * t_gemm / t_pass + 0.5);
            std::vector<double> g1v, c1v;
            for (int r = 0; r < reps; r++) {
                double mg, mc;
                beside(C, part, 1, &mg, &mc);
                g1v.push_back(mg);
                c1v.push_back(mc);
            }
            snprintf(mode, sizeof mode, "gemm_with_copy%d_part%d", C, pct);
            emit(o, &d, path, mode, reps, g1v);
            snprintf(mode, sizeof mode, "copy%d_part%d_with_gemm", C, pct);
            emit(o, &d, path, mode, reps, c1v);
        }
    }
    cublasDestroy(h);
    CK(cudaStreamDestroy(sg));
    CK(cudaStreamDestroy(sc));
    for (void *p : {a, b, c, src, dst})
        CK(cudaFree(p));
}

int main(int argc, char **argv) { return cal_main_per_device(argc, argv, run_device); }

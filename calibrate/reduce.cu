/* calibrate/reduce.cu - reduction-kernel throughput: c = a + b elementwise
 * for fp32, fp16 and bf16 (16-byte vector loads, fp32 accumulate for the
 * 16-bit types), time vs size 1 KiB .. 1 GiB per buffer.  This is the
 * reduction cost inside all_reduce.  Records: bench "reduce", path "gpuN",
 * dtype "fp32" | "fp16" | "bf16", size_bytes = bytes of ONE buffer (the
 * kernel reads 2x and writes 1x that), unit "us".  See docs/calibration.md. */
#include "common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

template <class T> __device__ __forceinline__ T add2(T x, T y)
{
    return (T)((float)x + (float)y);
}
template <> __device__ __forceinline__ float add2<float>(float x, float y)
{
    return x + y;
}

/* 16 bytes at a time: the body as int4 reinterpreted as 16/sizeof(T) values. */
template <class T>
__global__ void reduce_sum(const int4 *__restrict__ a, const int4 *__restrict__ b, int4 *c, uint64_t n16,
                           const T *at, const T *bt, T *ct, uint64_t n)
{
    const int K = 16 / sizeof(T);
    uint64_t tid = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = tid; i < n16; i += stride) {
        int4 x = a[i], y = b[i], z;
        const T *xs = (const T *)&x, *ys = (const T *)&y;
        T *zs = (T *)&z;
#pragma unroll
        for (int k = 0; k < K; k++)
            zs[k] = add2<T>(xs[k], ys[k]);
        c[i] = z;
    }
    for (uint64_t i = n16 * K + tid; i < n; i += stride)
        ct[i] = add2<T>(at[i], bt[i]);
}

template <class T>
static void run_dtype(const cal_opts *o, const cal_device *d, const char *path, const char *dtname, void *a, void *b,
                      void *c, uint64_t cap, int sms, cudaStream_t s)
{
    for (uint64_t sz : cal_sizes(1024, cap, o->quick ? 16 : 4)) {
        uint64_t n = sz / sizeof(T), n16 = sz / 16;
        unsigned blocks = (unsigned)std::max<uint64_t>(1, std::min<uint64_t>((n16 + 255) / 256, (uint64_t)sms * 8));
        int inner = cal_inner(3 * sz, 2e12, 2e-6);
        int reps = sz >= (256ull << 20) ? std::min(o->reps, 5) : o->reps;
        cal_stats st = cal_time(s, o->warmup, reps, inner, [&](cudaStream_t q) {
            reduce_sum<T><<<blocks, 256, 0, q>>>((const int4 *)a, (const int4 *)b, (int4 *)c, n16, (const T *)a,
                                                 (const T *)b, (T *)c, n);
            CK_LAUNCH();
        });
        cal_emit(o, d, "reduce", path, NULL, NULL, dtname, sz, reps * inner, st, "us");
    }
}

static void run_device(const cal_opts *o, int dev)
{
    CK(cudaSetDevice(dev));
    cal_device d = cal_device_get(dev);
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    uint64_t cap = std::min<uint64_t>(cal_size_cap(o, 3), 1ull << 30);
    void *a, *b, *c;
    CK(cudaMalloc(&a, cap));
    CK(cudaMalloc(&b, cap));
    CK(cudaMalloc(&c, cap));
    /* byte patterns with bit 0 set: no value is zero; some are NaN/Inf for the
     * float types, which costs the adder nothing */
    cal_fill(a, cap, 0x3c00u);
    cal_fill(b, cap, 0x4000u);
    cal_fill(c, cap, 0x0101u);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    char path[32];
    snprintf(path, sizeof path, "gpu%d", dev);
    run_dtype<float>(o, &d, path, "fp32", a, b, c, cap, sms, s);
    run_dtype<__half>(o, &d, path, "fp16", a, b, c, cap, sms, s);
    run_dtype<__nv_bfloat16>(o, &d, path, "bf16", a, b, c, cap, sms, s);
    CK(cudaStreamDestroy(s));
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(c));
}

int main(int argc, char **argv) { return cal_main_per_device(argc, argv, run_device); }

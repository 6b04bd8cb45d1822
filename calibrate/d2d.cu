/* calibrate/d2d.cu - device-to-device copy time vs size (8 B .. 4 GiB, capped
 * by free memory) with the copy engines (cudaMemcpyAsync) and with an SM copy
 * kernel using 16-byte vector loads/stores.  One record per (mode, size):
 * bench "d2d_copy", path "gpuN", direction "d2d", mode "ce" | "sm", unit "us"
 * (time per copy of size_bytes).  See docs/calibration.md. */
#include "common.cuh"

/* dst[i] = src[i]: 16-byte vectors for the aligned body, bytes for the tail. */
__global__ void sm_copy(const int4 *__restrict__ src, int4 *dst, uint64_t n16,
                        const uint8_t *srcb, uint8_t *dstb, uint64_t nbytes)
{
    uint64_t tid = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = tid; i < n16; i += stride)
        dst[i] = src[i];
    for (uint64_t i = n16 * 16 + tid; i < nbytes; i += stride)
        dstb[i] = srcb[i];
}

static void sm_copy_launch(void *dst, const void *src, uint64_t bytes, int sms, cudaStream_t s)
{
    uint64_t n16 = bytes / 16;
    uint64_t want = (n16 + 255) / 256;
    unsigned blocks = (unsigned)std::max<uint64_t>(1, std::min<uint64_t>(want, (uint64_t)sms * 8));
    sm_copy<<<blocks, 256, 0, s>>>((const int4 *)src, (int4 *)dst, n16, (const uint8_t *)src, (uint8_t *)dst, bytes);
    CK_LAUNCH();
}

static void run_device(const cal_opts *o, int dev)
{
    CK(cudaSetDevice(dev));
    cal_device d = cal_device_get(dev);
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    uint64_t cap = cal_size_cap(o, 2);
    void *a, *b;
    CK(cudaMalloc(&a, cap));
    CK(cudaMalloc(&b, cap));
    cal_fill(a, cap, 0x1234u);
    cal_fill(b, cap, 0x5678u);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    char path[32];
    snprintf(path, sizeof path, "gpu%d", dev);
    for (uint64_t sz : cal_sizes(8, cap, o->quick ? 8 : 2)) {
        int inner = cal_inner(sz, 1e12, 2e-6);
        int reps = sz >= (1ull << 30) ? std::min(o->reps, 5) : o->reps;
        cal_stats ce = cal_time(s, o->warmup, reps, inner, [&](cudaStream_t st) {
            CK(cudaMemcpyAsync(b, a, sz, cudaMemcpyDeviceToDevice, st));
        });
        cal_emit(o, &d, "d2d_copy", path, "d2d", "ce", NULL, sz, reps * inner, ce, "us");
        cal_stats sm = cal_time(s, o->warmup, reps, inner, [&](cudaStream_t st) { sm_copy_launch(b, a, sz, sms, st); });
        cal_emit(o, &d, "d2d_copy", path, "d2d", "sm", NULL, sz, reps * inner, sm, "us");
    }
    CK(cudaStreamDestroy(s));
    CK(cudaFree(a));
    CK(cudaFree(b));
}

int main(int argc, char **argv) { return cal_main_per_device(argc, argv, run_device); }

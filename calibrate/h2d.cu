/* calibrate/h2d.cu - host<->device copies over PCIe (or C2C): host-to-device
 * and device-to-host, pinned (cudaHostAlloc, cudaMemcpyAsync) and pageable
 * (malloc, cudaMemcpy), time vs size 8 B .. 1 GiB (the layout of CUDA
 * samples' bandwidthTest, extended to small sizes for latency).  Records:
 * bench "h2d" | "d2h", path "gpuN", direction "h2d" | "d2h", mode "pinned" |
 * "pageable", unit "us" per copy.  See docs/calibration.md. */
#include "common.cuh"

static void run_device(const cal_opts *o, int dev)
{
    CK(cudaSetDevice(dev));
    cal_device d = cal_device_get(dev);
    uint64_t cap = std::min<uint64_t>(cal_size_cap(o, 1), o->quick ? (64ull << 20) : (1ull << 30));
    void *dbuf, *pinned;
    CK(cudaMalloc(&dbuf, cap));
    CK(cudaHostAlloc(&pinned, cap, cudaHostAllocDefault));
    void *pageable = malloc(cap);
    if (!pageable) {
        fprintf(stderr, "h2d: cannot allocate %llu pageable bytes\n", (unsigned long long)cap);
        exit(1);
    }
    cal_fill(dbuf, cap, 0x9abcu);
    cal_fill_host(pinned, cap, 0x1111u);
    cal_fill_host(pageable, cap, 0x2222u);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    char path[32];
    snprintf(path, sizeof path, "gpu%d", dev);
    for (uint64_t sz : cal_sizes(8, cap, o->quick ? 16 : 4)) {
        int inner = cal_inner(sz, 25e9, 5e-6);
        int reps = sz >= (256ull << 20) ? std::min(o->reps, 5) : o->reps;
        for (int dir = 0; dir < 2; dir++) {
            const char *name = dir ? "d2h" : "h2d";
            cudaMemcpyKind kind = dir ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice;
            cal_stats p = cal_time(s, o->warmup, reps, inner, [&](cudaStream_t st) {
                CK(dir ? cudaMemcpyAsync(pinned, dbuf, sz, kind, st) : cudaMemcpyAsync(dbuf, pinned, sz, kind, st));
            });
            cal_emit(o, &d, name, path, name, "pinned", NULL, sz, reps * inner, p, "us");
            /* pageable: cudaMemcpy is synchronous w.r.t. the host; events on the
             * legacy default stream bracket it */
            cal_stats g = cal_time(0, o->warmup, reps, inner, [&](cudaStream_t) {
                CK(dir ? cudaMemcpy(pageable, dbuf, sz, kind) : cudaMemcpy(dbuf, pageable, sz, kind));
            });
            cal_emit(o, &d, name, path, name, "pageable", NULL, sz, reps * inner, g, "us");
        }
    }
    CK(cudaStreamDestroy(s));
    CK(cudaFree(dbuf));
    CK(cudaFreeHost(pinned));
    free(pageable);
}

int main(int argc, char **argv) { return cal_main_per_device(argc, argv, run_device); }

/* calibrate/flag.cu - flag-polling round trip, the handshake of NCCL's LL
 * protocol.  gpu-host: one GPU thread and the host ping-pong through mapped
 * pinned memory (each side spins on its flag, then writes the other's).
 * gpu-gpu (two or more GPUs with P2P): a thread on GPU i and one on GPU j
 * ping-pong through flags in j's and i's memory.  A persistent kernel does
 * ROUNDS round trips between CUDA events; record = time / ROUNDS.  Spins are
 * bounded (a timeout is an error, never a hang).  Records: bench
 * "flag_pingpong", path "gpuN-host" | "gpuI-gpuJ", mode "mapped" | "p2p",
 * size_bytes 8 (one flag), unit "us" per round trip.  See docs/calibration.md. */
#include "common.cuh"

#include <atomic>
#include <chrono>
#include <thread>

#define ROUNDS 2000
#define SPIN_LIMIT (1ll << 31)

/* Waits for *wait == i, then sets *post = i, for i = 1..rounds; on timeout
 * writes -i to *status and stops. */
__global__ void pong_kernel(volatile long long *wait, volatile long long *post, int rounds, bool starts,
                            long long *status)
{
    for (long long i = 1; i <= rounds; i++) {
        if (starts) {
            *post = i;
            __threadfence_system();
        }
        long long spins = 0;
        while (*wait < i)
            if (++spins > SPIN_LIMIT) {
                *status = -i;
                return;
            }
        if (!starts) {
            *post = i;
            __threadfence_system();
        }
    }
    *status = rounds;
}

static void gpu_host(const cal_opts *o, int dev)
{
    CK(cudaSetDevice(dev));
    cal_device d = cal_device_get(dev);
    char path[48];
    snprintf(path, sizeof path, "gpu%d-host", dev);
    long long *h;
    CK(cudaHostAlloc(&h, 4 * sizeof(long long), cudaHostAllocMapped));
    long long *dh;
    CK(cudaHostGetDevicePointer((void **)&dh, h, 0));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> v;
    for (int r = 0; r < o->warmup + o->reps; r++) {
        volatile long long *hv = h;
        hv[0] = 0, hv[1] = 0, hv[2] = 0; /* [0] host->gpu, [1] gpu->host, [2] status */
        CK(cudaEventRecord(a, 0));
        pong_kernel<<<1, 1>>>(dh + 0, dh + 1, ROUNDS, false, dh + 2);
        CK_LAUNCH();
        CK(cudaEventRecord(b, 0));
        for (long long i = 1; i <= ROUNDS; i++) {
            hv[0] = i;
            std::atomic_thread_fence(std::memory_order_seq_cst);
            long long spins = 0;
            while (hv[1] < i && hv[2] == 0)
                if (++spins > SPIN_LIMIT)
                    break;
            if (hv[1] < i)
                break;
        }
        CK(cudaEventSynchronize(b));
        if (hv[2] != ROUNDS) {
            fprintf(stderr, "flag: gpu%d-host ping-pong timed out (status %lld)\n", dev, hv[2]);
            exit(1);
        }
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r >= o->warmup)
            v.push_back(ms * 1e-3 / ROUNDS);
    }
    cal_emit(o, &d, "flag_pingpong", path, NULL, "mapped", NULL, 8, o->reps * ROUNDS, cal_summarize(v), "us");
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    CK(cudaFreeHost(h));
}

static void gpu_gpu(const cal_opts *o, int i, int j)
{
    int can = 0;
    CK(cudaDeviceCanAccessPeer(&can, i, j));
    int can2 = 0;
    CK(cudaDeviceCanAccessPeer(&can2, j, i));
    if (!can || !can2)
        return;
    cal_device d = cal_device_get(i);
    char path[48];
    snprintf(path, sizeof path, "gpu%d-gpu%d", i, j);
    long long *fi, *fj; /* [0] flag written by the peer, [1] status */
    CK(cudaSetDevice(i));
    cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
    if (e != cudaErrorPeerAccessAlreadyEnabled)
        CK(e);
    (void)cudaGetLastError();
    CK(cudaMalloc(&fi, 2 * sizeof(long long)));
    CK(cudaSetDevice(j));
    e = cudaDeviceEnablePeerAccess(i, 0);
    if (e != cudaErrorPeerAccessAlreadyEnabled)
        CK(e);
    (void)cudaGetLastError();
    CK(cudaMalloc(&fj, 2 * sizeof(long long)));
    cudaEvent_t a, b;
    CK(cudaSetDevice(i));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    cudaStream_t si, sj;
    CK(cudaStreamCreateWithFlags(&si, cudaStreamNonBlocking));
    CK(cudaSetDevice(j));
    CK(cudaStreamCreateWithFlags(&sj, cudaStreamNonBlocking));
    std::vector<double> v;
    for (int r = 0; r < o->warmup + o->reps; r++) {
        CK(cudaSetDevice(j));
        CK(cudaMemset(fj, 0, 2 * sizeof(long long)));
        /* j waits on its own memory, posts into i's */
        pong_kernel<<<1, 1, 0, sj>>>(fj, fi, ROUNDS, false, fj + 1);
        CK_LAUNCH();
        CK(cudaSetDevice(i));
        CK(cudaMemsetAsync(fi, 0, 2 * sizeof(long long), si));
        CK(cudaEventRecord(a, si));
        pong_kernel<<<1, 1, 0, si>>>(fi, fj, ROUNDS, true, fi + 1);
        CK_LAUNCH();
        CK(cudaEventRecord(b, si));
        CK(cudaEventSynchronize(b));
        CK(cudaSetDevice(j));
        CK(cudaStreamSynchronize(sj));
        long long st[2] = {0, 0};
        CK(cudaMemcpy(&st[0], fi + 1, sizeof(long long), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&st[1], fj + 1, sizeof(long long), cudaMemcpyDeviceToHost));
        if (st[0] != ROUNDS || st[1] != ROUNDS) {
            fprintf(stderr, "flag: %s ping-pong timed out (status %lld, %lld)\n", path, st[0], st[1]);
            exit(1);
        }
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r >= o->warmup)
            v.push_back(ms * 1e-3 / ROUNDS);
    }
    cal_emit(o, &d, "flag_pingpong", path, NULL, "p2p", NULL, 8, o->reps * ROUNDS, cal_summarize(v), "us");
    CK(cudaStreamDestroy(sj));
    CK(cudaFree(fj));
    CK(cudaSetDevice(i));
    CK(cudaStreamDestroy(si));
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    CK(cudaFree(fi));
}

int main(int argc, char **argv)
{
    cal_opts o = cal_parse(argc, argv);
    int n = cal_device_count(argv[0]);
    for (int dev = 0; dev < n; dev++)
        if (o.device < 0 || o.device == dev)
            gpu_host(&o, dev);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && (o.device < 0 || o.device == i))
                gpu_gpu(&o, i, j);
    return 0;
}

/* calibrate/p2p.cu - peer-to-peer between every ordered GPU pair (needs two or
 * more GPUs), after CUDA samples' p2pBandwidthLatencyTest: P2P access
 * capability; unidirectional and bidirectional copy time vs size with P2P
 * enabled (copy engines "ce" and an SM kernel writing the peer "sm") and with
 * P2P disabled ("staged": the driver stages through host memory).  Records:
 * bench "p2p_access" (unit "flag", median = 1 or 0), bench "p2p", path
 * "gpuI-gpuJ", direction "uni" | "bi", mode "ce" | "sm" | "staged", size_bytes
 * per direction, unit "us" per copy (bi: both directions at once).  Latency is
 * the alpha the fitter takes from the small sizes.  See docs/calibration.md. */
#include "common.cuh"

__global__ void sm_put(const int4 *__restrict__ src, int4 *dst, uint64_t n16,
                       const uint8_t *sb, uint8_t *db, uint64_t n)
{
    uint64_t tid = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = tid; i < n16; i += stride)
        dst[i] = src[i];
    for (uint64_t i = n16 * 16 + tid; i < n; i += stride)
        db[i] = sb[i];
}

typedef struct {
    int dev;
    void *src, *dst; /* src: on dev; dst: receives the peer's data */
    cudaStream_t s;
    cudaEvent_t start, done;
} side;

/* One copy i->j (and j->i when bi) of sz bytes. */
static void do_copy(side *a, side *b, uint64_t sz, bool bi, const char *mode, int sms)
{
    /* b's stream waits for a's start so both directions begin together */
    CK(cudaEventRecord(a->start, a->s));
    CK(cudaStreamWaitEvent(b->s, a->start, 0));
    side *sd[2] = {a, b};
    for (int k = 0; k < (bi ? 2 : 1); k++) {
        side *x = sd[k], *y = sd[1 - k];
        if (!strcmp(mode, "sm")) {
            CK(cudaSetDevice(x->dev));
            uint64_t n16 = sz / 16;
            unsigned blocks = (unsigned)std::max<uint64_t>(1, std::min<uint64_t>((n16 + 255) / 256, (uint64_t)sms * 4));
            sm_put<<<blocks, 256, 0, x->s>>>((const int4 *)x->src, (int4 *)y->dst, n16, (const uint8_t *)x->src,
                                             (uint8_t *)y->dst, sz);
            CK_LAUNCH();
        } else {
            CK(cudaMemcpyPeerAsync(y->dst, y->dev, x->src, x->dev, sz, x->s));
        }
    }
    CK(cudaSetDevice(a->dev));
    CK(cudaEventRecord(b->done, b->s));
    CK(cudaStreamWaitEvent(a->s, b->done, 0));
}

static void set_peer(int i, int j, bool on)
{
    CK(cudaSetDevice(i));
    cudaError_t e = on ? cudaDeviceEnablePeerAccess(j, 0) : cudaDeviceDisablePeerAccess(j);
    if (e != cudaErrorPeerAccessAlreadyEnabled && e != cudaErrorPeerAccessNotEnabled)
        CK(e);
    (void)cudaGetLastError();
}

static void run_pair(const cal_opts *o, int i, int j, uint64_t cap)
{
    cal_device d = cal_device_get(i);
    char path[48];
    snprintf(path, sizeof path, "gpu%d-gpu%d", i, j);
    int can = 0, sms = 0;
    CK(cudaDeviceCanAccessPeer(&can, i, j));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, i));
    cal_stats flag = {(double)can, (double)can, (double)can};
    cal_emit(o, &d, "p2p_access", path, NULL, NULL, NULL, 0, 1, flag, "flag");
    side a = {i, NULL, NULL, 0, 0, 0}, b = {j, NULL, NULL, 0, 0, 0};
    side *sd[2] = {&a, &b};
    for (int k = 0; k < 2; k++) {
        CK(cudaSetDevice(sd[k]->dev));
        CK(cudaMalloc(&sd[k]->src, cap));
        CK(cudaMalloc(&sd[k]->dst, cap));
        cal_fill(sd[k]->src, cap, 0x77u + k);
        cal_fill(sd[k]->dst, cap, 0x99u + k);
        CK(cudaStreamCreateWithFlags(&sd[k]->s, cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&sd[k]->start, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&sd[k]->done, cudaEventDisableTiming));
    }
    const char *modes[3] = {"staged", "ce", "sm"};
    for (int m = 0; m < 3; m++) {
        bool on = m > 0;
        if (on && !can)
            break;
        set_peer(i, j, on);
        set_peer(j, i, on);
        for (int bi = 0; bi < 2; bi++)
            for (uint64_t sz : cal_sizes(8, cap, o->quick ? 64 : 8)) {
                int inner = cal_inner(sz, on ? 100e9 : 10e9, 10e-6);
                int reps = sz >= (64ull << 20) ? std::min(o->reps, 5) : o->reps;
                CK(cudaSetDevice(i));
                cal_stats st = cal_time(a.s, o->warmup, reps, inner,
                                        [&](cudaStream_t) { do_copy(&a, &b, sz, bi, modes[m], sms); });
                cal_emit(o, &d, "p2p", path, bi ? "bi" : "uni", modes[m], NULL, sz, reps * inner, st, "us");
            }
    }
    set_peer(i, j, false);
    set_peer(j, i, false);
    for (int k = 0; k < 2; k++) {
        CK(cudaSetDevice(sd[k]->dev));
        CK(cudaStreamSynchronize(sd[k]->s));
        CK(cudaFree(sd[k]->src));
        CK(cudaFree(sd[k]->dst));
        CK(cudaStreamDestroy(sd[k]->s));
        CK(cudaEventDestroy(sd[k]->start));
        CK(cudaEventDestroy(sd[k]->done));
    }
}

int main(int argc, char **argv)
{
    cal_opts o = cal_parse(argc, argv);
    int n = cal_device_count(argv[0]);
    if (n < 2) {
        fprintf(stderr, "%s: %d GPU: peer-to-peer needs two or more, skipped\n", argv[0], n);
        return 0;
    }
    /* all pairs: keep buffers modest so 8 GPUs x 56 pairs stays in minutes */
    uint64_t cap = o.quick ? (16ull << 20) : (256ull << 20);
    for (int dev = 0; dev < n; dev++) {
        CK(cudaSetDevice(dev));
        cap = std::min(cap, cal_size_cap(&o, 4));
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && (o.device < 0 || o.device == i))
                run_pair(&o, i, j, cap);
    return 0;
}

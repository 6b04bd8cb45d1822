/* calibrate/nccl.cu - NCCL collective sweeps on all GPUs of the machine (one
 * process, ncclCommInitAll; needs two or more GPUs): all_reduce, all_gather,
 * reduce_scatter, alltoall (grouped ncclSend/ncclRecv), float (sum), sizes
 * 8 B .. MAX x2, out-of-place and in-place.  Output is nccl-tests 2.19's text
 * format (one log per collective, to FILE_PREFIX<coll>.txt) so `conveyor
 * validate` and `conveyor calibrate fit` read it directly.  Times: CUDA events
 * on every rank's stream around `iters` calls, the slowest rank, per call.
 * No data validation (printed "N/A", as nccl-tests -c 0).  See
 * docs/calibration.md.  Usage: nccl [-m MAX_BYTES] [-q] -o FILE_PREFIX */
#include "common.cuh"

#include <nccl.h>
#include <unistd.h>

#define NCK(call)                                                                                  \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != ncclSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum { AR, AG, RS, A2A, NCOLL };
static const char *const coll_name[NCOLL] = {"all_reduce", "all_gather", "reduce_scatter", "alltoall"};

typedef struct {
    int n;
    std::vector<ncclComm_t> comm;
    std::vector<cudaStream_t> s;
    std::vector<float *> send, recv;
    std::vector<cudaEvent_t> a, b;
} world;

/* nccl-tests' getFloatStr (same as traces/nccltests.c float_str). */
static void float_str(char *buf, size_t n, double v, int width)
{
    int power = 0;
    double val = 1;
    while (v >= val && power < 40)
        power++, val *= 10;
    if (power < width - 2)
        snprintf(buf, n, "%*.2f", width, v);
    else if (power < width - 1)
        snprintf(buf, n, "%*.1f", width, v);
    else if (power < width + 1)
        snprintf(buf, n, "%*.0f", width, v);
    else
        snprintf(buf, n, "%*.1e", width, v);
}

/* One call of collective c on every rank; count = per-rank count column. */
static void launch(world *w, int c, size_t count, bool inplace)
{
    NCK(ncclGroupStart());
    for (int r = 0; r < w->n; r++) {
        float *sb = w->send[r], *rb = w->recv[r];
        switch (c) {
        case AR: NCK(ncclAllReduce(sb, inplace ? sb : rb, count, ncclFloat, ncclSum, w->comm[r], w->s[r])); break;
        case AG: NCK(ncclAllGather(inplace ? rb + (size_t)r * count : sb, rb, count, ncclFloat, w->comm[r], w->s[r])); break;
        case RS: NCK(ncclReduceScatter(sb, inplace ? sb + (size_t)r * count : rb, count, ncclFloat, ncclSum, w->comm[r], w->s[r])); break;
        default:
            for (int p = 0; p < w->n; p++) {
                NCK(ncclSend(sb + (size_t)p * count, count, ncclFloat, p, w->comm[r], w->s[r]));
                NCK(ncclRecv((inplace ? sb : rb) + (size_t)p * count, count, ncclFloat, p, w->comm[r], w->s[r]));
            }
        }
    }
    NCK(ncclGroupEnd());
}

/* Seconds per call: the slowest rank's event time over `iters` calls. */
static double time_calls(world *w, int c, size_t count, bool inplace, int warmup, int iters)
{
    for (int i = 0; i < warmup; i++)
        launch(w, c, count, inplace);
    for (int r = 0; r < w->n; r++) {
        CK(cudaSetDevice(r));
        CK(cudaStreamSynchronize(w->s[r]));
        CK(cudaEventRecord(w->a[r], w->s[r]));
    }
    for (int i = 0; i < iters; i++)
        launch(w, c, count, inplace);
    double worst = 0;
    for (int r = 0; r < w->n; r++) {
        CK(cudaSetDevice(r));
        CK(cudaEventRecord(w->b[r], w->s[r]));
    }
    for (int r = 0; r < w->n; r++) {
        float ms = 0;
        CK(cudaEventSynchronize(w->b[r]));
        CK(cudaEventElapsedTime(&ms, w->a[r], w->b[r]));
        worst = std::max(worst, ms * 1e-3 / iters);
    }
    return worst;
}

static void sweep(world *w, int c, uint64_t max_bytes, bool quick, FILE *f)
{
    int n = w->n, warmup = 5, iters = quick ? 5 : 20, ver = 0;
    NCK(ncclGetVersion(&ver));
    char host[64] = "localhost";
    gethostname(host, sizeof host - 1);
    fprintf(f, "# nccl-tests version 2.19.6 nccl-headers=%d nccl-library=%d\n", NCCL_VERSION_CODE, ver);
    fprintf(f, "#! command: conveyor calibrate/nccl (%s_perf equivalent, -b 8 -e %llu -f 2 -g %d -w %d -n %d -c 0)\n",
            coll_name[c], (unsigned long long)max_bytes, n, warmup, iters);
    fprintf(f, "# Collective test starting: %s_perf\n", coll_name[c]);
    fprintf(f, "# nThread 1 nGpus %d minBytes 8 maxBytes %llu step: 2(factor) warmup iters: %d iters: %d agg iters: 1"
               " validation: 0 graph: 0 unalign: 0\n#\n# Using devices\n",
            n, (unsigned long long)max_bytes, warmup, iters);
    for (int r = 0; r < n; r++) {
        cudaDeviceProp p;
        CK(cudaGetDeviceProperties(&p, r));
        fprintf(f, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", r, 0, (int)getpid(), host,
                r, p.pciDomainID, p.pciBusID, p.pciDeviceID, p.name);
    }
    fprintf(f, "#\n# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "",
            "", "", "", "");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n", "size", "count", "type",
            "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n", "(B)", "(elements)", "", "",
            "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
    double factor = c == AR ? 2.0 * (n - 1) / n : (double)(n - 1) / n, sum = 0;
    int rows = 0;
    for (uint64_t req = 8; req <= max_bytes; req *= 2) {
        /* nccl-tests 2.19 sizes: whole elements; split collectives align the
         * per-rank count down to 16 bytes */
        size_t count = c == AR ? req / 4 : (size_t)((req / 4 / n) & ~(uint64_t)3);
        uint64_t size = c == AR ? count * 4 : (uint64_t)count * n * 4;
        char t[2][32], al[2][32], bu[2][32];
        for (int ip = 0; ip < 2; ip++) {
            double sec = count ? time_calls(w, c, count, ip, warmup, iters) : 0;
            double algbw = sec > 0 ? size / sec / 1e9 : 0;
            float_str(t[ip], sizeof t[ip], sec * 1e6, 7);
            float_str(al[ip], sizeof al[ip], algbw, 6);
            float_str(bu[ip], sizeof bu[ip], algbw * factor, 6);
            sum += algbw * factor;
        }
        rows++;
        fprintf(f, "%12llu  %12zu  %8s  %6s  %6i  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", (unsigned long long)size,
                count, "float", c == AR || c == RS ? "sum" : "none", -1, t[0], al[0], bu[0], "N/A", t[1], al[1], bu[1],
                "N/A");
        fflush(f);
    }
    fprintf(f, "# %-20s : %d %s\n# %-20s : %g \n#\n# Collective test concluded: %s_perf\n", "Out of bounds values", 0,
            "OK", "Avg bus bandwidth", rows ? sum / (2 * rows) : 0.0, coll_name[c]);
}

int main(int argc, char **argv)
{
    uint64_t max_bytes = 1ull << 30;
    bool quick = false;
    const char *prefix = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-q"))
            quick = true, max_bytes = std::min<uint64_t>(max_bytes, 64ull << 20);
        else if (!strcmp(argv[i], "-m") && i + 1 < argc)
            max_bytes = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            prefix = argv[++i];
        else {
            fprintf(stderr, "usage: %s [-m MAX_BYTES] [-q] -o FILE_PREFIX\n", argv[0]);
            return 2;
        }
    }
    if (!prefix || max_bytes < 8) {
        fprintf(stderr, "usage: %s [-m MAX_BYTES] [-q] -o FILE_PREFIX\n", argv[0]);
        return 2;
    }
    world w;
    w.n = cal_device_count(argv[0]);
    if (w.n < 2) {
        fprintf(stderr, "%s: %d GPU: NCCL sweeps need two or more, skipped\n", argv[0], w.n);
        return 0;
    }
    w.comm.resize(w.n), w.s.resize(w.n), w.send.resize(w.n), w.recv.resize(w.n), w.a.resize(w.n), w.b.resize(w.n);
    NCK(ncclCommInitAll(w.comm.data(), w.n, NULL));
    for (int r = 0; r < w.n; r++) {
        CK(cudaSetDevice(r));
        cal_opts o = {stdout, r, 1, 0, max_bytes, quick};
        max_bytes = std::min(max_bytes, cal_size_cap(&o, 2));
        CK(cudaStreamCreateWithFlags(&w.s[r], cudaStreamNonBlocking));
        CK(cudaEventCreate(&w.a[r]));
        CK(cudaEventCreate(&w.b[r]));
    }
    for (int r = 0; r < w.n; r++) {
        CK(cudaSetDevice(r));
        CK(cudaMalloc(&w.send[r], max_bytes));
        CK(cudaMalloc(&w.recv[r], max_bytes));
        cal_fill(w.send[r], max_bytes, 0x3f80u + r); /* non-zero; NaN-free enough for timing */
        cal_fill(w.recv[r], max_bytes, 0x4000u + r);
    }
    for (int c = 0; c < NCOLL; c++) {
        char path[1024];
        snprintf(path, sizeof path, "%s%s.txt", prefix, coll_name[c]);
        FILE *f = fopen(path, "w");
        if (!f) {
            perror(path);
            return 1;
        }
        sweep(&w, c, max_bytes, quick, f);
        fclose(f);
        fprintf(stderr, "nccl: wrote %s\n", path);
    }
    for (int r = 0; r < w.n; r++) {
        CK(cudaSetDevice(r));
        CK(cudaFree(w.send[r]));
        CK(cudaFree(w.recv[r]));
        NCK(ncclCommDestroy(w.comm[r]));
    }
    return 0;
}

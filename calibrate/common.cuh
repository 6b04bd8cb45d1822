/* calibrate/common.cuh - what every calibration microbenchmark shares:
 * checked CUDA calls, non-zero buffer fill, event timing with warm-up and
 * repeats (median/min/max), the size cap from free memory, and the JSON-lines
 * record writer read by `conveyor calibrate fit` (calibrate/fit.h).
 * Header-only; each .cu is one program.  See docs/calibration.md.
 */
#ifndef CALIBRATE_COMMON_CUH
#define CALIBRATE_COMMON_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

/* Every CUDA call goes through CK; a failure prints where and exits 1. */
#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,              \
                    cudaGetErrorName(e_), cudaGetErrorString(e_));                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* After every kernel launch. */
#define CK_LAUNCH() CK(cudaGetLastError())

typedef struct {
    double median, min, max; /* of the per-operation value */
} cal_stats;

typedef struct {
    FILE *out;            /* JSON lines */
    int device;           /* -1: all devices (per-program meaning) */
    int reps;             /* timed repeats per point */
    int warmup;           /* untimed runs per point */
    uint64_t max_bytes;   /* user cap on buffer sizes */
    bool quick;           /* fewer sizes and repeats (smoke run) */
} cal_opts;

static inline void cal_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [-d DEVICE] [-o FILE.jsonl] [-r REPS] [-w WARMUP] [-m MAX_BYTES] [-q]\n"
            "  -d  CUDA device index (default 0; -1 = every device where that applies)\n"
            "  -o  append JSON lines here (default stdout)\n"
            "  -r  timed repeats per point (default 11), -w warm-up runs (default 2)\n"
            "  -m  largest buffer in bytes (default 4 GiB, also capped by free memory)\n"
            "  -q  quick: fewer sizes and repeats\n",
            prog);
}

static inline cal_opts cal_parse(int argc, char **argv)
{
    cal_opts o = {stdout, 0, 11, 2, 4ull << 30, false};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < argc;
        char *end = NULL;
        if (!strcmp(a, "-q")) {
            o.quick = true;
            o.reps = 5;
            continue;
        }
        if (!has || a[0] != '-' || !a[1] || a[2]) {
            cal_usage(argv[0]);
            exit(2);
        }
        const char *v = argv[++i];
        long long n = strtoll(v, &end, 0);
        if (a[1] != 'o' && (!*v || *end)) {
            fprintf(stderr, "%s: bad number '%s' for %s\n", argv[0], v, a);
            exit(2);
        }
        switch (a[1]) {
        case 'd': o.device = (int)n; break;
        case 'r': o.reps = (int)std::max(1LL, n); break;
        case 'w': o.warmup = (int)std::max(0LL, n); break;
        case 'm': o.max_bytes = (uint64_t)std::max(8LL, n); break;
        case 'o':
            o.out = fopen(v, "a");
            if (!o.out) {
                perror(v);
                exit(2);
            }
            break;
        default: cal_usage(argv[0]); exit(2);
        }
    }
    return o;
}

/* Device identity for records. */
typedef struct {
    int index;
    char name[256];
    char pci[32]; /* "0000:18:00.0" */
} cal_device;

static inline cal_device cal_device_get(int dev)
{
    cal_device d;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    d.index = dev;
    snprintf(d.name, sizeof d.name, "%s", p.name);
    for (char *c = d.name; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
            *c = '_';
    CK(cudaDeviceGetPCIBusId(d.pci, (int)sizeof d.pci, dev));
    return d;
}

/* Largest buffer such that `nbuf` buffers fit in 80% of free memory,
 * limited by the user cap; a power of two. */
static inline uint64_t cal_size_cap(const cal_opts *o, int nbuf)
{
    size_t fr = 0, tot = 0;
    CK(cudaMemGetInfo(&fr, &tot));
    uint64_t lim = (uint64_t)(fr * 0.8) / (uint64_t)nbuf;
    lim = std::min(lim, o->max_bytes);
    uint64_t p = 8;
    while (p * 2 <= lim)
        p *= 2;
    return p;
}

/* Sizes lo, lo*f, ... <= hi. */
static inline std::vector<uint64_t> cal_sizes(uint64_t lo, uint64_t hi, uint64_t f)
{
    std::vector<uint64_t> v;
    for (uint64_t s = lo; s <= hi; s *= f)
        v.push_back(s);
    return v;
}

/* Fills bytes with a non-zero pattern (never all zeros: compression and
 * zero-page tricks must not flatter a measurement). */
__global__ void cal_fill_kernel(uint8_t *p, uint64_t n, uint32_t seed)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)(i * 2654435761u) ^ seed;
        p[i] = (uint8_t)((h >> 13) | 1u);
    }
}

static inline void cal_fill(void *p, uint64_t n, uint32_t seed)
{
    cal_fill_kernel<<<1024, 256>>>((uint8_t *)p, n, seed);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
}

static inline void cal_fill_host(void *p, uint64_t n, uint32_t seed)
{
    uint8_t *b = (uint8_t *)p;
    for (uint64_t i = 0; i < n; i++)
        b[i] = (uint8_t)((((uint32_t)(i * 2654435761u) ^ seed) >> 13) | 1u);
}

static inline cal_stats cal_summarize(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    cal_stats s;
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    s.min = v.front();
    s.max = v.back();
    return s;
}

/* Inner iterations per timed repeat so that one repeat lasts >= ~20 us of
 * work for an operation of `bytes` at roughly `rough_Bps`, at most 100. */
static inline int cal_inner(uint64_t bytes, double rough_Bps, double op_floor_s)
{
    double t = op_floor_s + (double)bytes / rough_Bps;
    int k = (int)(20e-6 / t);
    return std::max(1, std::min(100, k));
}

/* Times op(stream) with events on `stream`: `warmup` untimed calls, then
 * `reps` repeats of `inner` back-to-back calls; returns per-call seconds. */
template <class F>
static inline cal_stats cal_time(cudaStream_t stream, int warmup, int reps, int inner, F op)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < warmup; i++)
        op(stream);
    CK(cudaStreamSynchronize(stream));
    std::vector<double> v;
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(a, stream));
        for (int i = 0; i < inner; i++)
            op(stream);
        CK(cudaEventRecord(b, stream));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        v.push_back(ms * 1e-3 / inner);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return cal_summarize(v);
}

/* One JSON line.  Optional string fields are left out when NULL.  `st` is in
 * seconds for unit "us" (converted here) or in the unit given otherwise. */
static inline void cal_emit(const cal_opts *o, const cal_device *d, const char *bench, const char *path,
                     const char *direction, const char *mode, const char *dtype, uint64_t size_bytes,
                     int iters, cal_stats st, const char *unit)
{
    double k = !strcmp(unit, "us") ? 1e6 : 1.0;
    fprintf(o->out, "{\"bench\":\"%s\",\"device\":\"%s\",\"pci_bus_id\":\"%s\"", bench, d->name, d->pci);
    if (path)
        fprintf(o->out, ",\"path\":\"%s\"", path);
    if (direction)
        fprintf(o->out, ",\"direction\":\"%s\"", direction);
    if (mode)
        fprintf(o->out, ",\"mode\":\"%s\"", mode);
    if (dtype)
        fprintf(o->out, ",\"dtype\":\"%s\"", dtype);
    fprintf(o->out, ",\"size_bytes\":%llu,\"iters\":%d,\"median\":%.6g,\"min\":%.6g,\"max\":%.6g,\"unit\":\"%s\"}\n",
            (unsigned long long)size_bytes, iters, st.median * k, st.min * k, st.max * k, unit);
    fflush(o->out);
}

/* Number of devices; exits 3 with a message when there is none. */
static inline int cal_device_count(const char *prog)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        fprintf(stderr, "%s: no CUDA device (%s)\n", prog, e != cudaSuccess ? cudaGetErrorString(e) : "count 0");
        exit(3);
    }
    return n;
}

/* main() of a per-device benchmark: parse the options, then run
 * run_device(&o, dev) on every device (or the one --device names). */
static inline int cal_main_per_device(int argc, char **argv, void (*run_device)(const cal_opts *, int))
{
    cal_opts o = cal_parse(argc, argv);
    int n = cal_device_count(argv[0]);
    for (int dev = 0; dev < n; dev++)
        if (o.device < 0 || o.device == dev)
            run_device(&o, dev);
    return 0;
}

#endif

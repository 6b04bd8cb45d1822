/* calibrate/launch.cu - fixed costs of the CUDA runtime on one GPU:
 *   launch/gpuN/kernel       per-kernel cost of back-to-back empty launches on
 *                            one stream (events around 100 launches / 100)
 *   launch/gpuN/kernel_sync  launch + cudaStreamSynchronize of one empty kernel
 *                            (events around it; includes the completion wait)
 *   event/gpuN/record        cost of one cudaEventRecord in a stream
 *   stream_order/gpuN/same_stream   kernel -> kernel on one stream
 *   stream_order/gpuN/cross_stream  kernel on s1 -> event -> wait on s2 -> kernel
 * All size_bytes 0, unit "us" per operation.  See docs/calibration.md. */
#include "common.cuh"

__global__ void empty_kernel(int *p)
{
    if (p && threadIdx.x == 1024) /* never true: keeps the argument live */
        *p = 1;
}

static void run_device(const cal_opts *o, int dev)
{
    CK(cudaSetDevice(dev));
    cal_device d = cal_device_get(dev);
    char path[32];
    snprintf(path, sizeof path, "gpu%d", dev);
    int *flag;
    CK(cudaMalloc(&flag, sizeof(int)));
    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t ev, mark;
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&mark, cudaEventDisableTiming));
    int reps = std::max(o->reps, 21), N = 100, w = o->warmup + 10;
    auto launch = [&](cudaStream_t st) {
        empty_kernel<<<1, 32, 0, st>>>(flag);
        CK_LAUNCH();
    };
    cal_stats k = cal_time(s1, w, reps, N, launch);
    cal_emit(o, &d, "launch", path, NULL, "kernel", NULL, 0, reps * N, k, "us");
    cal_stats ks = cal_time(s1, w, reps, 1, [&](cudaStream_t st) {
        launch(st);
        CK(cudaStreamSynchronize(st));
    });
    cal_emit(o, &d, "launch", path, NULL, "kernel_sync", NULL, 0, reps, ks, "us");
    cal_stats er = cal_time(s1, w, reps, N, [&](cudaStream_t st) { CK(cudaEventRecord(mark, st)); });
    cal_emit(o, &d, "event", path, NULL, "record", NULL, 0, reps * N, er, "us");
    /* ordering: pairs of kernels, the second depending on the first */
    cal_stats same = cal_time(s1, w, reps, N, [&](cudaStream_t st) {
        launch(st);
        launch(st);
    });
    cal_emit(o, &d, "stream_order", path, NULL, "same_stream", NULL, 0, reps * N, same, "us");
    cal_stats cross = cal_time(s1, w, reps, N, [&](cudaStream_t st) {
        launch(s2);
        CK(cudaEventRecord(ev, s2));
        CK(cudaStreamWaitEvent(st, ev, 0));
        launch(st);
    });
    cal_emit(o, &d, "stream_order", path, NULL, "cross_stream", NULL, 0, reps * N, cross, "us");
    CK(cudaEventDestroy(ev));
    CK(cudaEventDestroy(mark));
    CK(cudaStreamDestroy(s1));
    CK(cudaStreamDestroy(s2));
    CK(cudaFree(flag));
}

int main(int argc, char **argv) { return cal_main_per_device(argc, argv, run_device); }

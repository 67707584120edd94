/* granularity_cuda.cu: the hand-written CUDA C baselines of benchmarks/granularity.c: the same
 * spin kernel and patterns, issued on streams (one per chain, chain c on GPU c) call by call
 * ("streams"), or captured once per 100 tasks as a CUDA graph and replayed ("graph": the
 * GPU's own floor for dependent kernels). Same CSV.
 * Build: nvcc -O3 -arch=sm_90 -o granularity_cuda granularity_cuda.cu
 * Usage: granularity_cuda [gpus] [max_tasks] */
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

__global__ void spin(float *a, long long ticks) {
    long long t0 = clock64();
    while (clock64() - t0 < ticks) {
    }
    if (threadIdx.x == 0 && blockIdx.x == 0)
        a[0] += 1.0f;
}

static const double DURATIONS_US[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
static const int NDUR = 10, BLOCK = 100;

static double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int main(int argc, char **argv) {
    int gpus = argc > 1 ? atoi(argv[1]) : 1, max_tasks = argc > 2 ? atoi(argv[2]) : 2000;
    std::vector<float *> arr(gpus);
    std::vector<cudaStream_t> st(gpus);
    for (int g = 0; g < gpus; g++) {
        CK(cudaSetDevice(g));
        CK(cudaMalloc(&arr[g], sizeof(float)));
        CK(cudaStreamCreateWithFlags(&st[g], cudaStreamNonBlocking));
    }
    auto sync = [&]() {
        for (int g = 0; g < gpus; g++) {
            CK(cudaSetDevice(g));
            CK(cudaStreamSynchronize(st[g]));
        }
    };
    /* graph: per chain, BLOCK / w tasks captured on its stream */
    auto run = [&](int graph, int w, int tasks, long long ticks) {
        int per = BLOCK - BLOCK % w;
        std::vector<cudaGraphExec_t> ex(w);
        if (graph)
            for (int c = 0; c < w; c++) {
                cudaGraph_t gr;
                CK(cudaSetDevice(c));
                CK(cudaStreamBeginCapture(st[c], cudaStreamCaptureModeThreadLocal));
                for (int i = 0; i < per / w; i++)
                    spin<<<1, 1, 0, st[c]>>>(arr[c], ticks);
                CK(cudaStreamEndCapture(st[c], &gr));
                CK(cudaGraphInstantiate(&ex[c], gr, 0));
                CK(cudaGraphDestroy(gr));
            }
        sync();
        double t0 = now_s();
        if (graph) {
            for (int done = 0; done < tasks; done += per)
                for (int c = 0; c < w; c++) {
                    CK(cudaSetDevice(c));
                    CK(cudaGraphLaunch(ex[c], st[c]));
                }
        } else {
            for (int i = 0; i < tasks; i++) {
                int c = i % w;
                if (w > 1)
                    CK(cudaSetDevice(c));
                spin<<<1, 1, 0, st[c]>>>(arr[c], ticks);
            }
        }
        sync();
        double t = now_s() - t0;
        if (graph)
            for (int c = 0; c < w; c++)
                CK(cudaGraphExecDestroy(ex[c]));
        return t;
    };
    long long probe = 200000000;
    CK(cudaSetDevice(0));
    run(0, 1, 1, 1000);
    double per_us = (double)probe / (run(0, 1, 1, probe) * 1e6);
    printf("runtime,issue,pattern,devices,duration_us,tasks,seconds,efficiency,us_per_task\n");
    const char *issue[] = {"streams", "graph"};
    for (int r = 0; r < 2; r++)
        for (int p = 0; p < 2; p++) {
            int w = p ? gpus : 1;
            if (p && gpus == 1)
                continue;
            double eff[NDUR];
            int per = BLOCK - BLOCK % w;
            for (int d = 0; d < NDUR; d++) {
                double dur = DURATIONS_US[d];
                int tasks = (int)fmin(max_tasks, fmax(20 * w, 0.2e6 / dur * w));
                tasks -= tasks % per;
                if (tasks <= 0)
                    tasks = per;
                long long ticks = (long long)(dur * per_us);
                run(r, w, per, ticks);
                double t = run(r, w, tasks, ticks);
                eff[d] = (double)tasks / w * dur * 1e-6 / t;
                printf("cuda-c,%s,%s,%d gpus,%g,%d,%.6f,%.4f,%.3f\n", issue[r],
                       p ? "independent" : "chain", gpus, dur, tasks, t, eff[d], t / tasks * 1e6);
                fflush(stdout);
            }
            double metg = NAN;
            for (int d = 0; d < NDUR && std::isnan(metg); d++)
                if (eff[d] >= 0.5)
                    metg = d == 0 ? DURATIONS_US[0]
                                  : exp(log(DURATIONS_US[d - 1]) +
                                        (0.5 - eff[d - 1]) / (eff[d] - eff[d - 1]) *
                                            (log(DURATIONS_US[d]) - log(DURATIONS_US[d - 1])));
            printf("# METG(50%%) cuda-c %s %s on %d gpus: %s%.2f us\n", issue[r],
                   p ? "independent" : "chain", gpus, std::isnan(metg) ? "> " : "",
                   std::isnan(metg) ? DURATIONS_US[NDUR - 1] : metg);
        }
    return 0;
}

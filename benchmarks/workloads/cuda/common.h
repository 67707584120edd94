/* common.h: what the hand-written CUDA C baselines share: error checks, the command line, the
 * launch geometry of workloads/common.py (the same numbers), partitions, peer access, timing,
 * the validated sample and the JSON line the harness reads.
 *
 * A baseline runs one workload on N GPUs with explicit streams, events, peer copies and pinned
 * host memory (no Unified Memory, no polygpu), or with --sync on one GPU with synchronous
 * copies and a device synchronisation after every kernel.
 *
 * The tuned baselines (workloads/cuda/<bench>.cu) place partitions contiguously (pgb_gpu_of), keep at
 * most 8 streams per GPU (CUDA's default number of hardware queues) with copies on their own
 * streams; the first versions, kept as the ablation "cuda-untuned" (workloads/cuda/untuned/),
 * put partition p on GPU p % N with one or two streams per partition. */
#ifndef PGB_CUDA_COMMON_H
#define PGB_CUDA_COMMON_H

#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

/* After a kernel launch: configuration errors show here, execution errors at the next sync. */
#define CK_LAUNCH() CK(cudaGetLastError())

static const int BLOCK = 256;

/* The version name in the JSON line: "cuda" for the tuned baselines, "cuda-untuned" for the
 * ablation (compiled with -DPGB_VERSION=...). */
#ifndef PGB_VERSION
#define PGB_VERSION "cuda"
#endif

/* Compute streams per GPU in the tuned baselines: with the copy streams, at most 8. */
static const int PGB_COMPUTE_STREAMS = 4;

struct pgb_args {
    long long n = 0;             /* the workload's size (elements, rows or matrix order) */
    int partitions = 16;         /* independent of the number of GPUs */
    int gpus = 1;                /* GPUs 0 .. gpus-1 */
    int warmup = 3, runs = 10;   /* untimed, then timed runs */
    int sync = 0;                /* 1: the synchronous single-GPU version */
    long long sample_stride = 1; /* the validated outputs: every stride-th element */
    const char *sample_out = 0;  /* where they go (float64, little endian) */
    int f = 1024;                /* ML: features */
    int iterations = 25;         /* CG */
    int graph = 1;               /* CG: replay the run as one CUDA graph (--no-graph: streams) */
};

static inline void pgb_usage(const char *bench) {
    fprintf(stderr,
            "usage: %s --n N [--partitions P] [--gpus G] [--warmup W] [--runs R] [--sync]\n"
            "          [--sample-stride S] [--sample-out FILE] [--f F] [--iterations I]\n"
            "          [--no-graph]\n"
            "Runs the %s baseline; prints one JSON line with the run times.\n",
            bench, bench);
    exit(1);
}

static inline pgb_args pgb_parse(int argc, char **argv, const char *bench) {
    pgb_args a;
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        if (!strcmp(k, "--sync")) {
            a.sync = 1;
            continue;
        }
        if (!strcmp(k, "--no-graph")) {
            a.graph = 0;
            continue;
        }
        if (i + 1 >= argc)
            pgb_usage(bench);
        const char *v = argv[++i];
        if (!strcmp(k, "--n"))
            a.n = atoll(v);
        else if (!strcmp(k, "--partitions"))
            a.partitions = atoi(v);
        else if (!strcmp(k, "--gpus"))
            a.gpus = atoi(v);
        else if (!strcmp(k, "--warmup"))
            a.warmup = atoi(v);
        else if (!strcmp(k, "--runs"))
            a.runs = atoi(v);
        else if (!strcmp(k, "--sample-stride"))
            a.sample_stride = atoll(v);
        else if (!strcmp(k, "--sample-out"))
            a.sample_out = v;
        else if (!strcmp(k, "--f"))
            a.f = atoi(v);
        else if (!strcmp(k, "--iterations"))
            a.iterations = atoi(v);
        else
            pgb_usage(bench);
    }
    int have = 0;
    CK(cudaGetDeviceCount(&have));
    if (a.n <= 0 || a.partitions <= 0 || a.gpus <= 0 || a.runs <= 0 || a.warmup < 0 ||
        a.sample_stride <= 0)
        pgb_usage(bench);
    if (a.sync)
        a.gpus = 1;
    if (a.gpus > have) {
        fprintf(stderr, "%s: %d GPUs asked for, %d present\n", bench, a.gpus, have);
        exit(1);
    }
    return a;
}

/* ---- the launch geometry of workloads/common.py */

static inline long long pgb_cdiv(long long a, long long b) {
    return (a + b - 1) / b;
}
static inline long long pgb_min(long long a, long long b) {
    return a < b ? a : b;
}
static inline long long pgb_max(long long a, long long b) {
    return a > b ? a : b;
}

static inline unsigned grid_1d(long long n) {
    return (unsigned)pgb_max(1, pgb_min(pgb_cdiv(n, BLOCK), 65535));
}

static inline unsigned grid_reduce(long long n) {
    return (unsigned)pgb_max(1, pgb_min(pgb_cdiv(n, BLOCK * 16), 256));
}

/* linalg_matvec on `rows` x `n`: grid and column chunk. */
static inline dim3 matvec_geometry(long long rows, long long n, int *chunk) {
    long long ksplit = pgb_max(1, pgb_min(pgb_cdiv(1 << 17, rows), pgb_cdiv(n, 128)));
    long long c = pgb_cdiv(n, ksplit);
    *chunk = (int)c;
    return dim3((unsigned)pgb_cdiv(rows, BLOCK), (unsigned)pgb_cdiv(n, c), 1);
}

/* ml_rr_stats on `rows` x `f`: grid and row chunk. */
static inline dim3 stats_geometry(long long rows, long long f, int *chunk) {
    long long rsplit = pgb_max(1, pgb_min(pgb_cdiv(rows, 64), 256));
    long long c = pgb_cdiv(rows, rsplit);
    *chunk = (int)c;
    return dim3((unsigned)pgb_cdiv(f, BLOCK), (unsigned)pgb_cdiv(rows, c), 1);
}

/* Contiguous placement: partitions [p * N / P] of P on N GPUs, so each GPU holds one block of
 * rows and exchanges one piece with the others. */
static inline int pgb_gpu_of(int p, int parts, int gpus) {
    return (int)((long long)p * gpus / parts);
}

/* The order in which to issue P contiguously placed partitions on N GPUs: the first partition of
 * each GPU, then the second of each, ..., so that every GPU gets work from the start. */
static inline std::vector<int> pgb_issue_order(int parts, int gpus) {
    std::vector<std::vector<int>> of(gpus);
    std::vector<int> order;
    for (int p = 0; p < parts; p++)
        of[pgb_gpu_of(p, parts, gpus)].push_back(p);
    for (size_t k = 0; order.size() < (size_t)parts; k++)
        for (int g = 0; g < gpus; g++)
            if (k < of[g].size())
                order.push_back(of[g][k]);
    return order;
}

struct pgb_part {
    long long offset, count;
};

/* n elements in p partitions of ceil(n / p), the last shorter (none empty). */
static inline std::vector<pgb_part> pgb_partitions(long long n, int p) {
    std::vector<pgb_part> v;
    long long s = pgb_cdiv(n, p);
    for (int i = 0; i < p && i * s < n; i++)
        v.push_back({i * s, pgb_min(s, n - i * s)});
    return v;
}

/* Every pair of the GPUs reaches the other directly (NVLink or PCIe peer-to-peer) where the
 * hardware allows; cudaMemcpyPeerAsync goes through the host otherwise. */
static inline void pgb_enable_peers(int gpus) {
    for (int i = 0; i < gpus; i++) {
        CK(cudaSetDevice(i));
        for (int j = 0; j < gpus; j++) {
            int ok = 0;
            if (i == j)
                continue;
            CK(cudaDeviceCanAccessPeer(&ok, i, j));
            if (!ok)
                continue;
            cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError();
            else
                CK(e);
        }
    }
}

static inline void pgb_sync_all(int gpus) {
    for (int g = 0; g < gpus; g++) {
        CK(cudaSetDevice(g));
        CK(cudaDeviceSynchronize());
    }
}

static inline double pgb_now(void) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/* Every stride-th value of the output (a function from global index to value) to the file. */
template <class F>
static inline void pgb_write_sample(const pgb_args &a, long long total, F value) {
    if (!a.sample_out)
        return;
    FILE *f = fopen(a.sample_out, "wb");
    if (!f) {
        perror(a.sample_out);
        exit(2);
    }
    for (long long i = 0; i < total; i += a.sample_stride) {
        double v = value(i);
        fwrite(&v, sizeof v, 1, f);
    }
    fclose(f);
}

/* The JSON line the harness reads: the arguments, the device and each timed run. */
static inline void pgb_print_json(const char *bench, const pgb_args &a,
                                  const std::vector<double> &t) {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("{\"bench\": \"%s\", \"version\": \"%s\", \"gpus\": %d, \"partitions\": %d, "
           "\"n\": %lld, \"device\": \"%s\", \"times_s\": [",
           bench, a.sync ? "cuda-sync" : (a.graph ? PGB_VERSION : PGB_VERSION "-streams"), a.gpus, a.partitions, a.n, prop.name);
    for (size_t i = 0; i < t.size(); i++)
        printf("%s%.9f", i ? ", " : "", t[i]);
    printf("]}\n");
    fflush(stdout);
}

/* Warm-ups, then timed runs of `run` (which returns when the results are on the host). */
template <class F> static inline std::vector<double> pgb_time_runs(const pgb_args &a, F run) {
    std::vector<double> t;
    for (int i = 0; i < a.warmup + a.runs; i++) {
        pgb_sync_all(a.gpus);
        double t0 = pgb_now();
        run();
        double t1 = pgb_now();
        if (i >= a.warmup)
            t.push_back(t1 - t0);
    }
    return t;
}

#endif

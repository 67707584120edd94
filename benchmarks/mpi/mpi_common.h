/* mpi_common.h: what the hand-written MPI + CUDA C baselines (cg_mpi.cu, jacobi_mpi.cu) share:
 * the command line, one GPU per rank by local rank, an all-gather made of MPI point-to-point
 * messages between pinned host buffers, timing and the JSON line (the fields of the polygpu
 * scripts' line, benchmarks/mpi/_dist.py). Error checks and launch geometry come from
 * workloads/cuda/common.h (the same numbers as workloads/common.py).
 *
 * Build: nvcc -O3 -std=c++17 -arch=sm_90 $(mpicxx --showme:compile) x.cu $(mpicxx --showme:link)
 * (benchmarks/mpi_bench.sh does it). */
#ifndef PGB_MPI_COMMON_H
#define PGB_MPI_COMMON_H

/* The C interface only (Open MPI's C++ one warns under -Wextra). */
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../workloads/cuda/common.h"

#define MCK(call)                                                                                  \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        if (e_ != MPI_SUCCESS) {                                                                   \
            fprintf(stderr, "%s:%d: %s: MPI error %d\n", __FILE__, __LINE__, #call, e_);           \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                          \
        }                                                                                          \
    } while (0)

struct pgm_args {
    long long n = 0;
    int iterations = 0;
    int warmup = 1, repeats = 5;
    const char *sample = 0; /* rank 0 writes the checked values there (float64) */
    const char *label = "";
};

static inline pgm_args pgm_parse(int argc, char **argv, long long n, int iterations) {
    pgm_args a;
    a.n = n;
    a.iterations = iterations;
    for (int i = 1; i < argc; i++) {
        std::string s = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : 0;
        if (!v) {
            fprintf(stderr, "%s: %s needs a value\n", argv[0], argv[i]);
            exit(1);
        }
        if (s == "--n")
            a.n = atoll(v);
        else if (s == "--iterations")
            a.iterations = atoi(v);
        else if (s == "--warmup")
            a.warmup = atoi(v);
        else if (s == "--repeats")
            a.repeats = atoi(v);
        else if (s == "--sample")
            a.sample = v;
        else if (s == "--label")
            a.label = v;
        else {
            fprintf(stderr,
                    "usage: %s [--n N] [--iterations K] [--warmup W] [--repeats R] "
                    "[--sample FILE] [--label TEXT]\n",
                    argv[0]);
            exit(1);
        }
        i++;
    }
    return a;
}

/* This rank's GPU: local rank modulo the node's GPUs (the ranks of a node share them out). */
static inline int pgm_select_gpu(char *name, size_t len) {
    MPI_Comm node;
    int local = 0, ngpu = 0;
    MCK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MCK(MPI_Comm_rank(node, &local));
    MCK(MPI_Comm_free(&node));
    CK(cudaGetDeviceCount(&ngpu));
    if (ngpu < 1) {
        fprintf(stderr, "no GPU\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dev = local % ngpu;
    CK(cudaSetDevice(dev));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    snprintf(name, len, "cuda:%d %.255s", dev, p.name);
    return dev;
}

/* All-gather by point-to-point: rank k's `counts[k]` elements of `type` at `displs[k]` of `buf`
 * (pinned host memory; this rank's piece already in place) go to every other rank. */
static inline void pgm_allgather(void *buf, const int *counts, const int *displs, MPI_Datatype type,
                                 int tag) {
    int rank, size, tsize;
    MCK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MCK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MCK(MPI_Type_size(type, &tsize));
    if (size == 1)
        return;
    std::vector<MPI_Request> req;
    req.reserve(2 * size);
    char *b = (char *)buf;
    for (int k = 0; k < size; k++) {
        if (k == rank)
            continue;
        req.push_back(MPI_REQUEST_NULL);
        MCK(MPI_Irecv(b + (size_t)displs[k] * tsize, counts[k], type, k, tag, MPI_COMM_WORLD,
                      &req.back()));
    }
    for (int k = 0; k < size; k++) {
        if (k == rank)
            continue;
        req.push_back(MPI_REQUEST_NULL);
        MCK(MPI_Isend(b + (size_t)displs[rank] * tsize, counts[rank], type, k, tag, MPI_COMM_WORLD,
                      &req.back()));
    }
    MCK(MPI_Waitall((int)req.size(), req.data(), MPI_STATUSES_IGNORE));
}

/* What every baseline does first: MPI up, this rank and the number of ranks, the arguments
 * (defaults n, iterations), this rank's GPU (its name into device). */
static inline pgm_args pgm_start(int *argc, char ***argv, long long n, int iterations, int *rank,
                                 int *size, char *device, size_t device_len) {
    MCK(MPI_Init(argc, argv));
    MCK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
    MCK(MPI_Comm_size(MPI_COMM_WORLD, size));
    pgm_args a = pgm_parse(*argc, *argv, n, iterations);
    pgm_select_gpu(device, device_len);
    return a;
}

/* a.warmup untimed runs of run(), then a.repeats timed ones, each started together on every
 * rank (a barrier): their seconds. */
template <class F> static inline std::vector<double> pgm_time(const pgm_args &a, F run) {
    for (int i = 0; i < a.warmup; i++)
        run();
    std::vector<double> runs;
    for (int i = 0; i < a.repeats; i++) {
        MCK(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = MPI_Wtime();
        run();
        runs.push_back(MPI_Wtime() - t0);
    }
    return runs;
}

static inline double pgm_median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/* Rank 0's JSON line: the fields of _dist.report; "ok" is null (the harness checks the sample:
 * benchmarks/mpi/check_sample.py). */
static inline void pgm_report(const char *bench, const pgm_args &a, int nranks, const char *device,
                              const std::vector<double> &runs, int per_run, const char *checksum,
                              long long bytes_sent) {
    double med = pgm_median(runs);
    printf("{\"bench\": \"%s\", \"version\": \"mpi-cuda\", \"ranks\": %d, \"devices\": [\"%s\"], "
           "\"devices_option\": \"one GPU per rank\", \"n\": %lld, \"iterations\": %d, "
           "\"parts\": %d, \"repeats\": %zu, \"s_per_iter\": %.9g, \"s_per_run\": %.9g, "
           "\"runs_s\": [",
           bench, nranks, device, a.n, a.iterations, nranks, runs.size(), med / per_run, med);
    for (size_t i = 0; i < runs.size(); i++)
        printf("%s%.6f", i ? ", " : "", runs[i]);
    printf("], \"checksum\": \"%s\", \"ok\": null, \"check\": \"sample in %s\", "
           "\"rank0_bytes_sent\": %lld, \"label\": \"%s\"}\n",
           checksum, a.sample ? a.sample : "(none)", bytes_sent, a.label);
    fflush(stdout);
}

#endif

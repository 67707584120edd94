/* differential.h: what the differential tests share: the kernels their random programs launch,
 * the generator's random numbers, the digest of what a program observes, and the runtime
 * configurations (every device, stream and parent-stream policy) they compare against a serial
 * reference. */
#ifndef PG_TEST_DIFFERENTIAL_H
#define PG_TEST_DIFFERENTIAL_H

#include "kernels_common.h"

#include <stdint.h>

#define DIFF_N 517 /* not a multiple of the block size: ragged last block */

static const char *DIFF_SRC =
    "__device__ int idx() { return blockIdx.x * blockDim.x + threadIdx.x; }\n"
    "extern \"C\" __global__ void axpy(float *y, const float *x, float a, int n) {\n"
    "  int i = idx(); if (i < n) y[i] = y[i] + a * x[i]; }\n"
    "extern \"C\" __global__ void half1(float *y, const float *x, int n) {\n"
    "  int i = idx(); if (i < n) y[i] = x[i] * 0.5f + 1.0f; }\n"
    "extern \"C\" __global__ void add(float *z, const float *x, const float *y, int n) {\n"
    "  int i = idx(); if (i < n) z[i] = x[i] + y[i]; }\n"
    "extern \"C\" __global__ void inc(float *y, int n) {\n"
    "  int i = idx(); if (i < n) y[i] += 1.0f; }\n"
    "extern \"C\" __global__ void mix(float *a, float *b, int n) {\n"
    "  int i = idx(); if (i < n) { a[i] = a[i] + b[i]; b[i] = a[i] - 3.0f; } }\n";

/* name, signature (NULL: inferred), array params, has float scalar, bit j: array j is only
 * read (an input several threads may share) */
static const struct {
    const char *name, *sig;
    int narrays, fscalar, in_mask;
} DIFF_KERNELS[] = {
    {"axpy", "inout float *y, in const float *x, float a, int n", 2, 1, 2},
    {"half1", "out float *y, in const float *x, int n", 2, 0, 2},
    {"add", "out float *z, in const float *x, in const float *y, int n", 3, 0, 6},
    {"inc", NULL, 1, 0, 0},
    {"mix", NULL, 2, 0, 0},
    /* half1 again, its output declared chunked: copies of it may start per chunk while it runs */
    {"half1", "out(chunks=blocks) float *y, in const float *x, int n", 2, 0, 2},
};
#define DIFF_NKERNELS 6

/* Does kernel i declare its first array `out` (every element written, chunked or not)? */
static inline int diff_first_out(int i) {
    const char *sig = DIFF_KERNELS[i].sig;
    return sig && !strncmp(sig, "out", 3) && (sig[3] == ' ' || sig[3] == '(');
}

static const char *DIFF_POLICIES[] = {"round-robin",       "stream-aware",
                                      "min-transfer-size", "minmax-transfer-time",
                                      "min-transfer-time", "earliest-finish"};
static const char *DIFF_STREAMS[] = {"fifo", "always-new"};
static const char *DIFF_PARENTS[] = {"same-as-parent", "disjoint", "multigpu-disjoint",
                                     "multigpu-early-disjoint"};
#define DIFF_CONFIGS 48 /* 6 x 2 x 4 */

static inline unsigned diff_rnd(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

/* FNV-1a over everything a program observes. */
#define DIFF_DIGEST0 1469598103934665603u
static inline uint64_t diff_mix_in(uint64_t h, const void *data, size_t n) {
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211u;
    return h;
}

typedef struct diff_env {
    pg_runtime *rt;
    pg_kernel *k[DIFF_NKERNELS];
} diff_env;

/* The serial reference runs on one device, every call finished before the next. */
static inline const char *diff_serial_devices(const char *async_devices) {
    return strncmp(async_devices, "cuda", 4) ? "host:1" : "cuda:0";
}

static inline void diff_open(diff_env *e, const char *devices, const char *execution,
                             const char *policy, const char *stream_policy, const char *parent) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.execution = execution;
    o.policy = policy;
    o.stream_policy = stream_policy;
    o.parent_stream_policy = parent;
    /* PG_DIFF_MEMORY_LIMIT (e.g. "8K": arrays are 2068 bytes, a kernel takes up to three): the
     * asynchronous side runs under that device_memory_limit, so evictions and write-backs
     * interleave with everything else. */
    const char *limit = getenv("PG_DIFF_MEMORY_LIMIT");
    if (limit && *limit && strcmp(execution, "sync"))
        REQUIRE_OK(pg_options_set(&o, "device_memory_limit", limit));
    REQUIRE_OK(pg_runtime_new(&o, &e->rt));
    for (int i = 0; i < DIFF_NKERNELS; i++)
        REQUIRE_OK(pg_kernel_new(e->rt, DIFF_SRC, DIFF_KERNELS[i].name, DIFF_KERNELS[i].sig, NULL,
                                 &e->k[i]));
}

/* Configuration c (0 <= c < DIFF_CONFIGS), asynchronous on `devices`. */
static inline void diff_open_config(diff_env *e, const char *devices, int c) {
    diff_open(e, devices, "async", DIFF_POLICIES[c / 8], DIFF_STREAMS[c / 4 % 2],
              DIFF_PARENTS[c % 4]);
}

/* Launch kernel `kernel` of e on the first n elements of arrays arr[idx[0..]] (and `value`
 * when it takes one). */
static inline pg_status diff_launch_n(diff_env *e, int kernel, pg_array *const *arr, const int *idx,
                                      float value, int n) {
    pg_arg args[5];
    int na = DIFF_KERNELS[kernel].narrays, k = 0;
    for (int j = 0; j < na; j++)
        args[k++] = pg_arg_array(arr[idx[j]]);
    if (DIFF_KERNELS[kernel].fscalar)
        args[k++] = pg_arg_float(value);
    args[k++] = pg_arg_int(n);
    return pg_kernel_launch(e->k[kernel], dim1(((unsigned)n + 127) / 128), dim1(128), 0, args, k);
}

static inline pg_status diff_launch(diff_env *e, int kernel, pg_array *const *arr, const int *idx,
                                    float value) {
    return diff_launch_n(e, kernel, arr, idx, value, DIFF_N);
}

static uint64_t diff_evictions, diff_writebacks; /* over the runs closed so far */

static inline void diff_close(diff_env *e) {
    pg_stats s;
    if (pg_runtime_stats(e->rt, &s) == PG_OK) {
        diff_evictions += s.evictions;
        diff_writebacks += s.writebacks;
    }
    for (int i = 0; i < DIFF_NKERNELS; i++)
        CHECK_OK(pg_kernel_free(e->k[i]));
    CHECK_OK(pg_runtime_free(e->rt));
}

static inline int diff_env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

#endif

/* kernels_common.h: small element-wise kernels and helpers shared by the C tests. */
#ifndef PG_TEST_KERNELS_COMMON_H
#define PG_TEST_KERNELS_COMMON_H

#include "check.h"

#include <string.h>

static const char *TEST_SRC =
    "extern \"C\" __global__ void fill(float *y, float v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }\n"
    "extern \"C\" __global__ void add1(float *y, const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }\n"
    "extern \"C\" __global__ void sum2(float *y, const float *a, const float *b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a[i] + b[i]; }\n"
    "extern \"C\" __global__ void scale(float *y, float s, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] * s; }\n";

static pg_dim3 dim1(uint32_t x) {
    pg_dim3 d = {x, 1, 1};
    return d;
}

/* Kernel `name` of TEST_SRC with an optional explicit signature. */
static inline pg_kernel *test_kernel(pg_runtime *rt, const char *name, const char *sig) {
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, TEST_SRC, name, sig, NULL, &k));
    return k;
}

static inline pg_array *test_array(pg_runtime *rt, int64_t n) {
    pg_array *a = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &a));
    return a;
}

/* The devices a test runs on: PG_TEST_DEVICES overrides the test's own choice, so the GPU
 * script runs the same tests on GPUs. */
static inline const char *test_devices(const char *dflt) {
    const char *e = getenv("PG_TEST_DEVICES");
    return e && *e ? e : dflt;
}

/* A runtime on exactly these devices, whatever PG_TEST_DEVICES says: for tests whose checks
 * hold on CPU devices only (timings of every computation, a second device). */
static inline pg_runtime *test_runtime_on(const char *devices, const char *policy,
                                          const char *execution) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.policy = policy;
    o.execution = execution;
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

static inline pg_runtime *test_runtime(const char *devices, const char *policy,
                                       const char *execution) {
    pg_options o;
    pg_options_init(&o);
    o.devices = test_devices(devices);
    o.policy = policy;
    o.execution = execution;
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

#endif

/* test_kernel_faults.c: a kernel that faults on a CPU device (wild pointer, integer division by
 * zero, __trap, assert, stack overflow, exit, abort) fails its computation with PG_ERROR_DEVICE
 * naming the kernel, device and launch, instead of killing the process; its device is marked
 * failed, arrays whose only copy was there are reported lost by name, and everything else
 * (arrays with a host copy, arrays on the other device, new launches) keeps working. The
 * checked mode (check=bounds) catches out-of-bounds writes with guard pages. Runs on host:2 with
 * a test policy that places each launch where the test says. */
#include "fault_checks.h"
#include "kernels_common.h"

#include "core/handle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096

static const char *FAULT_SRC =
    "extern \"C\" __global__ void fill(float *y, float v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }\n"
    "extern \"C\" __global__ void add1(float *y, const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }\n"
    /* A wild pointer: the address comes in as a parameter, so the compiler cannot see it. */
    "extern \"C\" __global__ void wild_write(float *y, const float *x, long addr, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  y[i] = x[i]; if (i == n / 2) *(volatile float *)addr = 1.0f; }\n"
    "extern \"C\" __global__ void div_zero(float *y, const float *x, int d, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  y[i] = x[i] + (float)(i / d); }\n"
    "extern \"C\" __global__ void trap(float *y, const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  y[i] = x[i]; if (i == n - 1) __trap(); }\n"
    "extern \"C\" __global__ void asserts(float *y, const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  y[i] = x[i]; assert(i < n / 2); }\n"
    "__device__ int deep(int n, volatile char *sink) {\n"
    "  volatile char buf[512]; buf[n & 511] = (char)n; *sink = buf[0];\n"
    "  return n <= 0 ? 0 : deep(n - 1, sink) + buf[(n * 7) & 511]; }\n"
    "extern \"C\" __global__ void recurse(float *y, const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  volatile char sink; y[i] = x[i] + (float)deep(i == 3 ? (1 << 30) : 1, &sink); }\n"
    "extern \"C\" __global__ void exits(float *y, const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  y[i] = x[i]; if (i == 5) exit(3); }\n"
    "extern \"C\" __global__ void aborts(float *y, const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  y[i] = x[i]; if (i == 7) std::abort(); }\n"
    /* Block-level kernels (a barrier): threads run as fibers on their own stacks. */
    "extern \"C\" __global__ void wild_block(float *y, const float *x, long addr, int n) {\n"
    "  __shared__ float s[256]; int t = threadIdx.x;\n"
    "  int i = blockIdx.x * blockDim.x + t; s[t] = i < n ? x[i] : 0.0f; __syncthreads();\n"
    "  if (i == n / 2) *(volatile float *)addr = 1.0f;\n"
    "  if (i < n) y[i] = s[(t + 1) % blockDim.x]; }\n"
    "extern \"C\" __global__ void recurse_block(float *y, const float *x, int n) {\n"
    "  __shared__ float s[256]; int t = threadIdx.x;\n"
    "  int i = blockIdx.x * blockDim.x + t; s[t] = i < n ? x[i] : 0.0f; __syncthreads();\n"
    "  volatile char sink; int r = deep(i == 300 ? (1 << 30) : 1, &sink);\n"
    "  if (i < n) y[i] = s[t] + (float)r; }\n"
    /* Reported by the kernel itself from a fiber's stack: the jump lands on the worker's. */
    "extern \"C\" __global__ void trap_block(float *y, const float *x, int n) {\n"
    "  __shared__ float s[256]; int t = threadIdx.x;\n"
    "  int i = blockIdx.x * blockDim.x + t; s[t] = i < n ? x[i] : 0.0f; __syncthreads();\n"
    "  if (i == 600) __trap();\n"
    "  if (i < n) y[i] = s[t]; }\n"
    /* Faults late, so that work depending on it is launched before the fault is seen. */
    "extern \"C\" __global__ void slow_wild(float *y, const float *x, long addr, int spins,\n"
    "                                       int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  y[i] = x[i]; if (i != n / 2) return;\n"
    "  for (volatile int k = 0; k < spins; k++) {}\n"
    "  *(volatile float *)addr = 1.0f; }\n"
    /* Writes `off` elements past the thread's own: past the end of y for the last threads. */
    "extern \"C\" __global__ void write_off(float *y, int off, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i + off] = 9.0f; }\n";

static pg_runtime *runtime(const char *check) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:2";
    o.policy = "fault-test";
    if (check && pg_options_set(&o, "check", check) != PG_OK) {
        fprintf(stderr, "option check=%s: %s\n", check, pg_last_error());
        exit(1);
    }
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

static pg_kernel *kernel(pg_runtime *rt, const char *name) {
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, FAULT_SRC, name, NULL, NULL, &k));
    return k;
}

static pg_array *array(pg_runtime *rt) {
    return test_array(rt, N);
}

static void fill(pg_runtime *rt, pg_array *y, float v, int dev) {
    pg_kernel *k = NULL; /* y is written whole: a lost value does not matter */
    REQUIRE_OK(pg_kernel_new(rt, FAULT_SRC, "fill", "out float *y, float v, int n", NULL, &k));
    pg_arg args[] = {pg_arg_array(y), pg_arg_float(v), pg_arg_int(N)};
    want = dev;
    REQUIRE_OK(pg_kernel_launch(k, dim1(N / 256), dim1(256), 0, args, 3));
    pg_kernel_free(k);
}

typedef struct fault_case {
    const char *kernel;
    const char *what; /* in the error message */
    int extra;        /* 1: a long parameter (address) before n; 2: an int (divisor) */
    int block;        /* threads per block */
} fault_case;

static const fault_case CASES[] = {
    {"wild_write", "SIGSEGV", 1, 256},
    {"div_zero", "divide by zero", 2, 256},
    {"trap", "__trap", 0, 256},
    {"asserts", "i < n / 2", 0, 256},
    {"recurse", "stack overflow", 0, 64},
    {"exits", "exit(3)", 0, 256},
    {"aborts", "abort", 0, 256},
    {"wild_block", "SIGSEGV", 1, 256},
    {"recurse_block", "stack overflow", 0, 256},
    {"trap_block", "__trap", 0, 256},
};

static void one_case(const fault_case *fc) {
    pg_runtime *rt = runtime(NULL);
    pg_array *x = array(rt), *y = array(rt), *z = array(rt), *w = array(rt);
    float host[N];
    for (int i = 0; i < N; i++)
        host[i] = 2.0f;
    REQUIRE_OK(pg_array_write(x, 0, N, host)); /* x: the host copy is current */
    fill(rt, z, 5.0f, 0);                      /* z: only on device 0 */
    fill(rt, w, 6.0f, 1);                      /* w: only on device 1 */
    REQUIRE_OK(pg_runtime_sync(rt));

    pg_kernel *k = kernel(rt, fc->kernel);
    pg_arg args[4] = {pg_arg_array(y), pg_arg_array(x)};
    int na = 2;
    if (fc->extra == 1)
        args[na++] = pg_arg_int(16); /* an address in the never-mapped first page */
    else if (fc->extra == 2)
        args[na++] = pg_arg_int(0);
    args[na++] = pg_arg_int(N);
    want = 0;
    CHECK_OK(pg_kernel_launch(k, dim1(N / fc->block), dim1(fc->block), 0, args, na));

    /* The result: the kernel's error, naming the kernel, the device and the launch. */
    char kname[96];
    snprintf(kname, sizeof kname, "'%s'", fc->kernel);
    CHECK(read_fails_n(y, N, kname, "CPU device 0", fc->what));
    CHECK(read_fails_n(y, N, "computation #", NULL, NULL)); /* and again: the error stays */
    /* Everything not on device 0 alone is intact. */
    CHECK(holds_n(w, N, 6.0f));
    CHECK(holds_n(x, N, 2.0f));
    /* z's only copy was on device 0. */
    char lost[96];
    snprintf(lost, sizeof lost, "array %llu was lost with device 0",
             (unsigned long long)array_id(z));
    CHECK(read_fails_n(z, N, lost, "only current copy", NULL));

    /* New work goes to the surviving device, even when the policy asks for device 0. */
    pg_array *v = array(rt);
    fill(rt, v, 4.0f, 0);
    CHECK(holds_n(v, N, 4.0f));
    pg_kernel *add1 = kernel(rt, "add1");
    pg_arg a1[] = {pg_arg_array(v), pg_arg_array(x), pg_arg_int(N)};
    want = 0;
    CHECK_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, a1, 3));
    CHECK(holds_n(v, N, 3.0f)); /* x's host copy went to device 1 */

    /* A kernel reading the failed result fails too: at launch, or when its result is read. */
    pg_array *u = array(rt);
    pg_arg a2[] = {pg_arg_array(u), pg_arg_array(y), pg_arg_int(N)};
    pg_status st = pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, a2, 3);
    CHECK(st == PG_ERROR_DEVICE || st == PG_OK);
    if (st == PG_ERROR_DEVICE)
        CHECK(strstr(pg_last_error(), kname) != NULL);
    else
        CHECK(read_fails_n(u, N, kname, NULL, NULL));

    /* Writing a failed or lost array whole gives it a value again. */
    REQUIRE_OK(pg_array_write(y, 0, N, host));
    CHECK(holds_n(y, N, 2.0f));
    fill(rt, z, 8.0f, 0);
    CHECK(holds_n(z, N, 8.0f));
    CHECK_STATUS(pg_runtime_sync(rt), PG_ERROR_DEVICE); /* the failure is reported once */
    CHECK_OK(pg_runtime_sync(rt));
    pg_kernel_free(k);
    pg_kernel_free(add1);
    CHECK_OK(pg_runtime_free(rt));
}

/* Work launched on the other device before the fault was seen, reading the faulting kernel's
 * result (through a copy) or what was computed from it, fails with the first cause; it never
 * returns the garbage it read. A writer that only had to wait for the failed kernel is fine. */
static void propagation(void) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:2";
    o.policy = "fault-test";
    o.parent_stream_policy = "multigpu-early-disjoint"; /* the policy may leave the parent's */
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    pg_array *x = array(rt), *y = array(rt), *u = array(rt), *u2 = array(rt);
    float host[N];
    for (int i = 0; i < N; i++)
        host[i] = 2.0f;
    REQUIRE_OK(pg_array_write(x, 0, N, host));
    pg_kernel *slow = kernel(rt, "slow_wild"), *add1 = kernel(rt, "add1");
    pg_arg sa[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(16), pg_arg_int(200000000),
                   pg_arg_int(N)};
    want = 0;
    CHECK_OK(pg_kernel_launch(slow, dim1(N / 256), dim1(256), 0, sa, 5));
    want = 1;
    pg_arg a1[] = {pg_arg_array(u), pg_arg_array(y), pg_arg_int(N)};
    pg_status s1 = pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, a1, 3);
    pg_arg a2[] = {pg_arg_array(u2), pg_arg_array(u), pg_arg_int(N)};
    pg_status s2 = s1 ? s1 : pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, a2, 3);
    if (s1 != PG_OK)
        fprintf(stderr, "note: the fault was seen before the dependent launches\n");
    CHECK(read_fails_n(y, N, "'slow_wild'", "CPU device 0", "SIGSEGV"));
    if (s1 == PG_OK)
        CHECK(read_fails_n(u, N, "'slow_wild'", "CPU device 0", NULL));
    if (s2 == PG_OK)
        CHECK(read_fails_n(u2, N, "'slow_wild'", "CPU device 0", NULL));
    /* x was only read by the failed kernel: writing it waits for that, then works. */
    REQUIRE_OK(pg_array_write(x, 0, N, host));
    CHECK(holds_n(x, N, 2.0f));
    pg_kernel_free(slow);
    pg_kernel_free(add1);
    pg_runtime_free(rt);
}

/* Both devices fail: launches error out clearly, arrays with a host copy are still readable. */
static void all_devices_fail(void) {
    pg_runtime *rt = runtime(NULL);
    pg_array *x = array(rt);
    float host[N];
    for (int i = 0; i < N; i++)
        host[i] = 1.0f;
    REQUIRE_OK(pg_array_write(x, 0, N, host));
    pg_kernel *k = kernel(rt, "trap");
    for (int d = 0; d < 2; d++) {
        pg_array *y = array(rt);
        pg_arg args[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
        want = d;
        CHECK_OK(pg_kernel_launch(k, dim1(N / 256), dim1(256), 0, args, 3));
        CHECK(read_fails_n(y, N, "'trap'", d ? "CPU device 1" : "CPU device 0", NULL));
    }
    pg_array *v = array(rt);
    pg_kernel *f = kernel(rt, "fill");
    pg_arg fa[] = {pg_arg_array(v), pg_arg_float(1.0f), pg_arg_int(N)};
    CHECK_STATUS(pg_kernel_launch(f, dim1(N / 256), dim1(256), 0, fa, 3), PG_ERROR_DEVICE);
    CHECK(strstr(pg_last_error(), "every device has failed") != NULL);
    CHECK(holds_n(x, N, 1.0f));
    pg_kernel_free(f);
    pg_kernel_free(k);
    pg_runtime_free(rt);
}

/* check=bounds: an out-of-bounds write faults in a guard page and is reported as such; the
 * neighbouring array's device copy is untouched. */
static void checked_mode(int off) {
    pg_runtime *rt = runtime("bounds");
    pg_array *a = array(rt), *b = array(rt);
    fill(rt, b, 7.0f, 0);
    fill(rt, a, 1.0f, 0);
    REQUIRE_OK(pg_runtime_sync(rt));
    pg_kernel *k = kernel(rt, "write_off");
    pg_arg args[] = {pg_arg_array(a), pg_arg_int(off), pg_arg_int(N)};
    want = 0;
    CHECK_OK(pg_kernel_launch(k, dim1(N / 256), dim1(256), 0, args, 3));
    CHECK(read_fails_n(a, N, "'write_off'", "out of bounds", NULL));
    /* b's only copy is on the failed device, so b is lost; its memory there is intact. */
    pg__array *ib = pg__handle_get((uint64_t)(uintptr_t)b, PG__H_ARRAY);
    REQUIRE_OK(ib && ib->dev[0] ? PG_OK : PG_ERROR_INTERNAL);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += ((float *)ib->dev[0])[i] != 7.0f;
    CHECK(bad == 0);
    pg_kernel_free(k);
    pg_runtime_free(rt);
}

int main(void) {
    pg_device_policy p = {NULL, pick_device, NULL};
    REQUIRE_OK(pg_policy_register("fault-test", &p));
    /* One thread per device (the stream worker runs every block), then helper threads too. */
    const char *threads[] = {"1", "3"};
    const char *only = getenv("PG_FAULT_CASE"); /* run one case: for looking at one */
    for (int t = 0; t < 2; t++) {
        setenv("PG_HOST_THREADS", threads[t], 1);
        for (size_t c = 0; c < sizeof CASES / sizeof *CASES; c++) {
            if (only && strcmp(only, CASES[c].kernel))
                continue;
            fprintf(stderr, "case %s, %s thread(s) per device\n", CASES[c].kernel, threads[t]);
            one_case(&CASES[c]);
        }
    }
    if (only)
        CHECK_DONE();
    propagation();
    all_devices_fail();
    checked_mode(1);    /* one element past the end */
    checked_mode(1024); /* one page past the end */
    checked_mode(-1);   /* one element before the start */
    CHECK_DONE();
}

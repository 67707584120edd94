/* test_limits.c: launch limits from the devices (issue 17, part 4): what CPU devices report, a
 * launch over every device's limit failing with the limits named, launches at a CPU device's
 * limits (beyond a GPU's) running, and a launch placed only on the devices it fits.
 * One runtime holds devices of one backend, all alike, so a runtime with two different kinds
 * (a GPU and a CPU device) cannot be made: the mixed case lowers one CPU device's limits to a
 * GPU's through the runtime's internals, as a GPU next to it would report them. Always CPU
 * devices: the held kernels read a flag through a host pointer. */
#include "core/handle.h"
#include "core/launch_limits.h"
#include "kernels_common.h"

#include <stdlib.h>
#include <string.h>

#define CPU_THREADS 8192u
#define CPU_SHARED ((uint64_t)64 << 20)

static void check_msg(pg_status got, pg_status want, const char *what, const char *needle) {
    if (got != want || !strstr(pg_last_error(), needle)) {
        fprintf(stderr, "%s: %s \"%s\", expected %s with \"%s\"\n", what, pg_status_name(got),
                pg_last_error(), pg_status_name(want), needle);
        pg_check_failures++;
    }
}

static pg_runtime *open_rt(const char *devices, const char *policy, const char *parent) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.policy = policy;
    o.parent_stream_policy = parent;
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

/* Where a's current value is: the device whose copy alone is valid (-1 host, -2 several). */
static int location_of(pg_array *a) {
    pg_array_desc d;
    REQUIRE_OK(pg_array_describe(a, &d));
    for (int loc = 0; loc <= PG_MAX_DEVICES; loc++)
        if (d.valid == 1u << loc)
            return loc - 1;
    return -2;
}

/* ---- what CPU devices report */
static void cpu_limits(void) {
    pg_runtime *rt = open_rt("host:3", NULL, NULL);
    pg_device_info info[4];
    int n = 0;
    REQUIRE_OK(pg_runtime_devices(rt, info, 4, &n));
    CHECK(n == 3);
    for (int d = 0; d < n; d++) {
        CHECK(info[d].kind == PG_DEVICE_CPU);
        CHECK(info[d].max_threads_per_block == CPU_THREADS);
        CHECK(info[d].max_block.x == CPU_THREADS && info[d].max_block.y == CPU_THREADS &&
              info[d].max_block.z == CPU_THREADS);
        CHECK(info[d].max_grid.x == 2147483647u && info[d].max_grid.y == 65535 &&
              info[d].max_grid.z == 65535);
        CHECK(info[d].max_shared_memory_per_block == CPU_SHARED);
        CHECK(info[d].memory_bytes > 0);
    }
    CHECK_OK(pg_runtime_free(rt));
}

static const char *BLOCK_SRC =
    "extern \"C\" __global__ void count(int *y, unsigned long long last) {\n"
    "  extern __shared__ unsigned char dyn[];\n"
    "  __shared__ int n;\n"
    "  if (threadIdx.x + threadIdx.y + threadIdx.z == 0) { n = 0; if (last) dyn[last - 1] = 7; }\n"
    "  __syncthreads();\n"
    "  atomicAdd(&n, 1);\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x + threadIdx.y + threadIdx.z == 0)\n"
    "    y[blockIdx.x] = n + (last ? dyn[last - 1] : 0);\n"
    "}\n";

static void run_count(pg_kernel *k, pg_array *y, pg_dim3 block, uint64_t shared, int want) {
    pg_arg args[] = {pg_arg_array(y), pg_arg_uint(shared)};
    CHECK_OK(pg_kernel_launch(k, dim1(2), block, (size_t)shared, args, 2));
    int v[2] = {0, 0};
    CHECK_OK(pg_array_read(y, 0, 2, v));
    if (v[0] != want || v[1] != want) {
        fprintf(stderr, "block (%u, %u, %u), %llu bytes shared: %d %d, expected %d\n", block.x,
                block.y, block.z, (unsigned long long)shared, v[0], v[1], want);
        pg_check_failures++;
    }
}

/* ---- over every device's limit: the launch and each device's limit are named; at the limit
 * (more than a GPU allows) it runs */
static void over_and_at(void) {
    pg_runtime *rt = open_rt("host:2", NULL, NULL);
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, BLOCK_SRC, "count", NULL, NULL, &k));
    int64_t two = 2;
    pg_array *y = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_INT32, 1, &two, &y));
    pg_arg args[] = {pg_arg_array(y), pg_arg_uint(0)};
    pg_dim3 big = {CPU_THREADS * 2, 1, 1}, tall = {64, 256, 1}, deep_grid = {1, 65536, 1};
    check_msg(pg_kernel_launch(k, dim1(1), big, 0, args, 2), PG_ERROR_ARGUMENT, "block of 16384",
              "block (16384, 1, 1) of 16384 threads");
    check_msg(pg_kernel_launch(k, dim1(1), big, 0, args, 2), PG_ERROR_ARGUMENT, "block of 16384",
              "devices 0-1 (CPU devices) each allows 8192 threads per block");
    check_msg(pg_kernel_launch(k, dim1(1), tall, 0, args, 2), PG_ERROR_ARGUMENT, "block (64, 256)",
              "allows 8192 threads per block");
    check_msg(pg_kernel_launch(k, deep_grid, dim1(32), 0, args, 2), PG_ERROR_ARGUMENT,
              "grid y 65536", "allows grids up to (2147483647, 65535, 65535)");
    check_msg(pg_kernel_launch(k, dim1(1), dim1(32), CPU_SHARED + 1, args, 2), PG_ERROR_ARGUMENT,
              "shared memory", "allows 67108864 bytes (64 MiB) of shared memory per block");
    /* Nothing of the refused launches ran. */
    int v[2] = {-1, -1};
    CHECK_OK(pg_array_read(y, 0, 2, v));
    CHECK(v[0] == 0 && v[1] == 0);
    /* At the CPU limits, past a GPU's: 8192 threads, z of 2048, 64 MiB of shared memory. */
    run_count(k, y, dim1(CPU_THREADS), 0, (int)CPU_THREADS);
    run_count(k, y, (pg_dim3){2, 2, 2048}, 0, 8192);
    run_count(k, y, dim1(32), CPU_SHARED, 32 + 7);
    CHECK_OK(pg_runtime_free(rt));

    /* One device: named alone. */
    rt = open_rt("host:1", NULL, NULL);
    REQUIRE_OK(pg_kernel_new(rt, BLOCK_SRC, "count", NULL, NULL, &k));
    REQUIRE_OK(pg_array_new(rt, PG_INT32, 1, &two, &y));
    args[0] = pg_arg_array(y);
    check_msg(pg_kernel_launch(k, dim1(1), big, 0, args, 2), PG_ERROR_ARGUMENT, "one device",
              "device 0 (CPU device 0");
    check_msg(pg_kernel_launch(k, dim1(1), big, 0, args, 2), PG_ERROR_ARGUMENT, "one device",
              "allows 8192 threads per block");
    CHECK_OK(pg_runtime_free(rt));
}

/* Give device d a GPU's limits (an H100's), as if it were one: see the file's comment. */
static void make_gpu_like(pg_runtime *h, int d) {
    pg__runtime *rt = pg__handle_get((uint64_t)(uintptr_t)h, PG__H_RUNTIME);
    REQUIRE_OK(rt ? PG_OK : PG_ERROR_STATE);
    pg_device_info *i = &rt->dev[d].info;
    snprintf(i->name, sizeof i->name, "GPU-like CPU device %d", d);
    i->max_threads_per_block = 1024;
    i->max_block = (pg_dim3){1024, 1024, 64};
    i->max_shared_memory_per_block = 227 * 1024;
    pg__limits_init(rt);
}

static const char *HOLD_SRC =
    "extern \"C\" __global__ void hold(float *x, unsigned long long flag) {\n"
    "  while (*(volatile const int *)flag == 0) {\n"
    "    struct timespec t = {0, 200000}; nanosleep(&t, 0);\n"
    "  }\n"
    "  if (threadIdx.x == 0) x[0] += 1;\n"
    "}\n"
    "extern \"C\" __global__ void big(float *x) { if (threadIdx.x == 2047) x[0] += 10; }\n";

/* ---- two devices with different limits: a launch only one fits goes there, whatever the
 * device policy, and even when its parent runs on the other one (parent-stream policies). */
static void mixed(const char *policy, const char *parent) {
    pg_runtime *rt = open_rt("host:2", policy, parent);
    make_gpu_like(rt, 1);
    pg_kernel *hold = NULL, *big = NULL;
    REQUIRE_OK(pg_kernel_new(rt, HOLD_SRC, "hold", NULL, NULL, &hold));
    REQUIRE_OK(pg_kernel_new(rt, HOLD_SRC, "big", NULL, NULL, &big));
    pg_device_info info[2];
    int n = 0;
    REQUIRE_OK(pg_runtime_devices(rt, info, 2, &n));
    CHECK(info[1].max_threads_per_block == 1024 && info[0].max_threads_per_block == CPU_THREADS);

    /* Launches that fit both go to both (the policy is free), ones of 2048 threads to device 0. */
    enum { N = 8 };
    int seen_small = 0, flag = 1;
    for (int i = 0; i < N; i++) {
        pg_array *y = test_array(rt, 1);
        pg_arg h[] = {pg_arg_array(y), pg_arg_uint((uint64_t)(uintptr_t)&flag)};
        CHECK_OK(pg_kernel_launch(hold, dim1(1), dim1(32), 0, h, 2));
        seen_small |= 1 << location_of(y);
    }
    if (!strcmp(policy, "round-robin"))
        CHECK(seen_small == 3);
    for (int i = 0; i < N; i++) {
        pg_array *y = test_array(rt, 1);
        pg_arg a[] = {pg_arg_array(y)};
        CHECK_OK(pg_kernel_launch(big, dim1(1), dim1(2048), 0, a, 1));
        CHECK(location_of(y) == 0);
    }
    CHECK_OK(pg_runtime_sync(rt));

    /* A parent held running on device 1 (the GPU-like one), then a child of 2048 threads that
     * reads and writes its output: the child cannot take the parent's stream; it goes to 0. */
    int placed_on_1 = 0;
    flag = 0;
    for (int i = 0; i < 4 && !placed_on_1; i++) {
        pg_array *x = test_array(rt, 1);
        pg_arg h[] = {pg_arg_array(x), pg_arg_uint((uint64_t)(uintptr_t)&flag)};
        CHECK_OK(pg_kernel_launch(hold, dim1(1), dim1(32), 0, h, 2));
        if (location_of(x) != 1)
            continue;
        placed_on_1 = 1;
        pg_arg a[] = {pg_arg_array(x)};
        CHECK_OK(pg_kernel_launch(big, dim1(1), dim1(2048), 0, a, 1));
        if (location_of(x) != 0) {
            fprintf(stderr, "%s/%s: the child of 2048 threads went to device %d\n", policy, parent,
                    location_of(x));
            pg_check_failures++;
        }
        __atomic_store_n(&flag, 1, __ATOMIC_SEQ_CST);
        float v = 0;
        CHECK_OK(pg_array_read(x, 0, 1, &v));
        CHECK(v == 11.0f);
    }
    __atomic_store_n(&flag, 1, __ATOMIC_SEQ_CST);
    if (!strcmp(policy, "round-robin"))
        CHECK(placed_on_1);

    /* Over both: each device named with its own limit. */
    pg_arg a[] = {pg_arg_array(test_array(rt, 1))};
    check_msg(pg_kernel_launch(big, dim1(1), dim1(10000), 0, a, 1), PG_ERROR_ARGUMENT, "mixed",
              "device 0 (CPU device 0");
    check_msg(pg_kernel_launch(big, dim1(1), dim1(10000), 0, a, 1), PG_ERROR_ARGUMENT, "mixed",
              "allows 8192 threads per block; device 1 (GPU-like CPU device 1) allows 1024 "
              "threads per block");
    CHECK_OK(pg_runtime_sync(rt));
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    cpu_limits();
    over_and_at();
    const char *parents[] = {"same-as-parent", "disjoint", "multigpu-disjoint",
                             "multigpu-early-disjoint"};
    for (int i = 0; i < 4; i++)
        mixed("round-robin", parents[i]);
    mixed("minmax-transfer-time", "multigpu-disjoint");
    mixed("stream-aware", "multigpu-disjoint");
    mixed("min-transfer-size", "same-as-parent");
    CHECK_DONE();
}

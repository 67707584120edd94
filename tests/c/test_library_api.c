/* test_library_api.c: the public entries a library built on the runtime uses (linalg/: the
 * tiled GEMM and the BLAS tasks use nothing else of the library), on CPU devices:
 * - pg_kernel_launch_on: the call runs on the device asked, its value left there; a device
 *   past the runtime's, below -1, unknown flags and a failed device are refused with the
 *   runtime usable; PG_LAUNCH_PREFETCH puts the input copy on the device's copy stream;
 * - pg_runtime_devices_usable: every device, then without a device that failed, and the set a
 *   power budget chose;
 * - pg_runtime_device_memory, _device_throughput, _device_class, _cache_dir: what a device is
 *   and where the caches are, as the options and the models say;
 * - pg_runtime_model_predict: 0 while the models do not know a kernel, the median once they do,
 *   0 with models off;
 * - pg_graph_recording: 1 on the recording thread only;
 * - pg_runtime_attach / _attached: the first value under a key stays, release runs once per
 *   kept value at pg_runtime_free, at most 16 keys. */
#include "check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pg_runtime *runtime(const char *devices, const char *name1, const char *value1,
                           const char *name2, const char *value2) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    if (name1)
        REQUIRE_OK(pg_options_set(&o, name1, value1));
    if (name2)
        REQUIRE_OK(pg_options_set(&o, name2, value2));
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

static pg_status nothing(const pg_task_call *c) {
    (void)c;
    return PG_OK;
}

/* A task reading x and writing y that changes nothing. */
static pg_kernel *touch(pg_runtime *rt) {
    pg_task_impls im = {nothing, NULL, NULL, NULL};
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_task_new(rt, "touch", &im, "in const float *x, inout float *y", &k));
    return k;
}

static pg_array *vec(pg_runtime *rt, int64_t n) {
    pg_array *a = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &a));
    return a;
}

static const pg_dim3 ONE = {1, 1, 1};

/* The stream of the last copy of array `a` to `device` in rt's DAG; -2 when there is none. */
static int copy_stream(pg_runtime *rt, pg_array *a, int device) {
    pg_array_desc d;
    REQUIRE_OK(pg_array_describe(a, &d));
    pg_dag *g = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &g));
    size_t n = 0;
    CHECK_OK(pg_dag_vertex_count(g, &n));
    int stream = -2;
    for (size_t i = 0; i < n; i++) {
        pg_dag_vertex_info v;
        CHECK_OK(pg_dag_vertex(g, i, &v));
        if (v.kind == PG_DAG_COPY && v.dst == device && v.nargs > 0 && v.args[0].array == d.id)
            stream = v.stream;
    }
    pg_dag_free(g);
    return stream;
}

static void launch_on(void) {
    pg_runtime *rt = runtime("host:4", NULL, NULL, NULL, NULL);
    pg_kernel *k = touch(rt);
    pg_array *x = vec(rt, 1024), *y = vec(rt, 1024);
    pg_arg args[2] = {pg_arg_array(x), pg_arg_array(y)};
    for (int d = 3; d >= 0; d--) {
        CHECK_OK(pg_kernel_launch_on(k, d, ONE, ONE, 0, args, 2, 0));
        pg_array_desc desc;
        CHECK_OK(pg_array_describe(y, &desc));
        CHECK(desc.valid == 1u << (d + 1)); /* written there: only there */
    }
    /* Without the flag the input copy goes on the launch's stream, with it on the copy stream. */
    pg_array *x2 = vec(rt, 1024), *x3 = vec(rt, 1024);
    float ones[1024];
    for (int i = 0; i < 1024; i++)
        ones[i] = 1.0f;
    CHECK_OK(pg_array_write(x2, 0, 1024, ones)); /* a value on the host: copied to the device */
    CHECK_OK(pg_array_write(x3, 0, 1024, ones));
    args[0] = pg_arg_array(x2);
    CHECK_OK(pg_kernel_launch_on(k, 2, ONE, ONE, 0, args, 2, 0));
    CHECK(copy_stream(rt, x2, 2) >= 0 && copy_stream(rt, x2, 2) < PG_DAG_COPY_STREAM);
    args[0] = pg_arg_array(x3);
    CHECK_OK(pg_kernel_launch_on(k, 2, ONE, ONE, 0, args, 2, PG_LAUNCH_PREFETCH));
    CHECK(copy_stream(rt, x3, 2) == PG_DAG_COPY_STREAM);
    /* -1: the policy places it, as pg_kernel_launch. */
    CHECK_OK(pg_kernel_launch_on(k, -1, ONE, ONE, 0, args, 2, 0));
    CHECK_MSG(pg_kernel_launch_on(k, 4, ONE, ONE, 0, args, 2, 0), PG_ERROR_ARGUMENT,
              "cannot run on device 4");
    CHECK_MSG(pg_kernel_launch_on(k, -2, ONE, ONE, 0, args, 2, 0), PG_ERROR_ARGUMENT,
              "no device below -1");
    CHECK_MSG(pg_kernel_launch_on(k, 0, ONE, ONE, 0, args, 2, 8), PG_ERROR_ARGUMENT,
              "unknown flags");
    CHECK_OK(pg_kernel_launch_on(k, 1, ONE, ONE, 0, args, 2, 0)); /* still usable */
    CHECK_OK(pg_runtime_sync(rt));
    CHECK_OK(pg_runtime_free(rt));
}

static const char *TRAP_SRC =
    "extern \"C\" __global__ void trap(float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 1.0f;\n"
    "  if (i == 0) __trap(); }\n";

static void usable(void) {
    pg_runtime *rt = runtime("host:4", NULL, NULL, NULL, NULL);
    uint32_t m = 0;
    CHECK_OK(pg_runtime_devices_usable(rt, &m));
    CHECK(m == 0xF);
    CHECK_MSG(pg_runtime_devices_usable(rt, NULL), PG_ERROR_ARGUMENT, "mask");
    /* A kernel that traps on device 1 fails it: it takes no new work. */
    pg_kernel *trap = NULL;
    REQUIRE_OK(pg_kernel_new(rt, TRAP_SRC, "trap", NULL, NULL, &trap));
    pg_array *y = vec(rt, 64);
    pg_arg args[2] = {pg_arg_array(y), pg_arg_int(64)};
    pg_dim3 grid = {1, 1, 1}, block = {64, 1, 1};
    CHECK_OK(pg_kernel_launch_on(trap, 1, grid, block, 0, args, 2, 0));
    CHECK_STATUS(pg_runtime_sync(rt), PG_ERROR_DEVICE);
    CHECK_OK(pg_runtime_devices_usable(rt, &m));
    CHECK(m == 0xD);
    CHECK_MSG(pg_kernel_launch_on(trap, 1, grid, block, 0, args, 2, 0), PG_ERROR_ARGUMENT,
              "it failed");
    CHECK_OK(pg_runtime_free(rt));

    /* A budget of 250 W over devices of 100 W: two of them. */
    rt = runtime("host:4", "power_watts", "100", "power_limit", "250");
    pg_power_choice pc;
    CHECK_OK(pg_runtime_power_choice(rt, &pc));
    CHECK(pc.nchosen == 2);
    uint32_t chosen = 0;
    for (int i = 0; i < pc.nchosen; i++)
        chosen |= 1u << pc.chosen[i];
    CHECK_OK(pg_runtime_devices_usable(rt, &m));
    CHECK(m == chosen);
    CHECK_OK(pg_runtime_free(rt));
}

static void device_queries(void) {
    pg_runtime *rt =
        runtime("host:2", "device_memory_limit", "64M", "cache_dir", "/tmp/pg-lib-api");
    pg_device_info info[2];
    int n = 0;
    REQUIRE_OK(pg_runtime_devices(rt, info, 2, &n));
    uint64_t bytes = 0;
    CHECK_OK(pg_runtime_device_memory(rt, 1, &bytes));
    CHECK(bytes == 64ull << 20);
    CHECK_MSG(pg_runtime_device_memory(rt, 2, &bytes), PG_ERROR_ARGUMENT, "no device 2");
    double tps = 0;
    CHECK_OK(pg_runtime_device_throughput(rt, 0, &tps));
    CHECK(tps == info[0].multiprocessors * 2.5e8); /* one thread per 4 ns per worker */
    CHECK_MSG(pg_runtime_device_throughput(rt, -1, &tps), PG_ERROR_ARGUMENT, "no device -1");
    char cls[128], want[128];
    CHECK_OK(pg_runtime_model_class(rt, 1, cls, sizeof cls));
    snprintf(want, sizeof want, "CPU device (%d thread%s)", info[1].multiprocessors,
             info[1].multiprocessors == 1 ? "" : "s");
    CHECK(!strcmp(cls, want));
    char dir[64], tiny[4];
    CHECK_OK(pg_runtime_cache_dir(rt, dir, sizeof dir));
    CHECK(!strcmp(dir, "/tmp/pg-lib-api"));
    CHECK_MSG(pg_runtime_cache_dir(rt, tiny, sizeof tiny), PG_ERROR_ARGUMENT, "do not hold");
    CHECK_OK(pg_runtime_free(rt));

    rt = runtime("host:2", NULL, NULL, NULL, NULL); /* no limit: the device's memory */
    CHECK_OK(pg_runtime_device_memory(rt, 0, &bytes));
    CHECK(bytes == info[0].memory_bytes);
    CHECK_OK(pg_runtime_free(rt));
}

static void predict(void) {
    char dir[] = "/tmp/pg-lib-api-XXXXXX"; /* a fresh cache: no models saved before */
    REQUIRE_OK(mkdtemp(dir) ? PG_OK : PG_ERROR_IO);
    pg_runtime *rt = runtime("host:2", "models", "on", "cache_dir", dir);
    uint64_t ns = 1;
    CHECK_OK(pg_runtime_model_predict(rt, "lib_api_kernel", 0, 4096, &ns));
    CHECK(ns == 0);
    /* The first sample of a bucket is a warm-up; three more make a prediction. */
    for (uint64_t t = 1; t <= 4; t++)
        CHECK_OK(pg_runtime_model_sample(rt, "lib_api_kernel", 0, 4096, 1000 * t));
    CHECK_OK(pg_runtime_model_predict(rt, "lib_api_kernel", 0, 4096, &ns));
    CHECK(ns == 3000);
    CHECK_OK(pg_runtime_model_predict(rt, "lib_api_kernel", 0, 5000, &ns)); /* the same bucket */
    CHECK(ns == 3000);
    CHECK_OK(pg_runtime_model_predict(rt, "lib_api_kernel", 0, 1 << 20, &ns));
    CHECK(ns == 0);
    CHECK_MSG(pg_runtime_model_predict(rt, "lib_api_kernel", 2, 4096, &ns), PG_ERROR_ARGUMENT,
              "no device 2");
    CHECK_MSG(pg_runtime_model_predict(rt, NULL, 0, 4096, &ns), PG_ERROR_ARGUMENT, "kernel");
    CHECK_OK(pg_runtime_free(rt));
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    rt = runtime("host:2", "models", "off", NULL, NULL);
    CHECK_OK(pg_runtime_model_predict(rt, "lib_api_kernel", 0, 4096, &ns));
    CHECK(ns == 0);
    CHECK_OK(pg_runtime_free(rt));
}

static void *ask_recording(void *arg) {
    static int r;
    r = -1;
    CHECK_OK(pg_graph_recording(arg, &r));
    return &r;
}

static void recording(void) {
    pg_runtime *rt = runtime("host:1", NULL, NULL, NULL, NULL);
    int r = -1;
    CHECK_OK(pg_graph_recording(rt, &r));
    CHECK(r == 0);
    CHECK_OK(pg_graph_begin(rt));
    CHECK_OK(pg_graph_recording(rt, &r));
    CHECK(r == 1);
    pthread_t t;
    void *other = NULL;
    pthread_create(&t, NULL, ask_recording, rt);
    pthread_join(t, &other);
    CHECK(*(int *)other == 0); /* another thread's calls are not recorded */
    pg_graph *g = NULL;
    CHECK_OK(pg_graph_end(rt, &g));
    CHECK_OK(pg_graph_recording(rt, &r));
    CHECK(r == 0);
    CHECK_MSG(pg_graph_recording(rt, NULL), PG_ERROR_ARGUMENT, "recording");
    CHECK_OK(pg_runtime_free(rt));
}

static int released[32];

static void release(void *v) {
    released[(int *)v - released]++; /* the value is the address of its own counter */
}

static void attach(void) {
    static const char keys[17];
    memset(released, 0, sizeof released);
    pg_runtime *rt = runtime("host:1", NULL, NULL, NULL, NULL);
    void *v = (void *)1;
    CHECK_OK(pg_runtime_attached(rt, &keys[0], &v));
    CHECK(v == NULL);
    void *kept = NULL;
    CHECK_OK(pg_runtime_attach(rt, &keys[0], &released[0], release, &kept));
    CHECK(kept == &released[0]);
    /* A second value under the key: the first stays, the second is the caller's. */
    CHECK_OK(pg_runtime_attach(rt, &keys[0], &released[20], release, &kept));
    CHECK(kept == &released[0]);
    CHECK_OK(pg_runtime_attached(rt, &keys[0], &v));
    CHECK(v == &released[0]);
    for (int i = 1; i < 16; i++)
        CHECK_OK(pg_runtime_attach(rt, &keys[i], &released[i], release, NULL));
    CHECK_MSG(pg_runtime_attach(rt, &keys[16], &released[16], release, &kept),
              PG_ERROR_OUT_OF_MEMORY, "at most 16 keys");
    CHECK_MSG(pg_runtime_attach(rt, NULL, &released[0], release, &kept), PG_ERROR_ARGUMENT, "key");
    CHECK_OK(pg_runtime_attached(rt, &keys[15], &v)); /* still usable */
    CHECK(v == &released[15]);
    for (int i = 0; i < 32; i++)
        CHECK(released[i] == 0); /* nothing before the runtime goes */
    CHECK_OK(pg_runtime_free(rt));
    for (int i = 0; i < 32; i++)
        CHECK(released[i] == (i < 16));
}

int main(void) {
    launch_on();
    usable();
    device_queries();
    predict();
    recording();
    attach();
    CHECK_DONE();
}

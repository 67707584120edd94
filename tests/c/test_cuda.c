/* test_cuda.c: the runtime on GPUs (devices=cuda). Without a GPU it checks that asking for one
 * fails with a clear error and says so; PG_TEST_REQUIRE_GPU=1 (the GPU script) makes a missing
 * GPU a failure. */
#include "dag_view.h"
#include "kernels_common.h"

#include <stdio.h>
#include <stdlib.h>

static const char *TEMPLATE_SRC =
    "template <typename T> __global__ void scale(T *y, const T *x, T s, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * s; }\n";

int main(void) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "cuda";
    pg_runtime *rt;
    pg_status st = pg_runtime_new(&o, &rt);
    if (st != PG_OK) {
        CHECK(st == PG_ERROR_DEVICE);
        CHECK(strstr(pg_last_error(), "libcuda.so.1") || strstr(pg_last_error(), "GPU"));
        /* The file is named once, not "libcuda.so.1: libcuda.so.1: cannot open ...". */
        const char *lib = strstr(pg_last_error(), "libcuda.so.1");
        CHECK(!lib || !strstr(lib + 1, "libcuda.so.1"));
        printf("no GPU: devices=cuda failed as it should: %s\n", pg_last_error());
        if (getenv("PG_TEST_REQUIRE_GPU") && atoi(getenv("PG_TEST_REQUIRE_GPU")))
            pg_check_failures++;
        /* auto falls back to a CPU device */
        o.devices = "auto";
        REQUIRE_OK(pg_runtime_new(&o, &rt));
        pg_device_info info;
        int n;
        REQUIRE_OK(pg_runtime_devices(rt, &info, 1, &n));
        CHECK(n == 1 && info.kind == PG_DEVICE_CPU);
        /* Device addresses are a GPU thing, said so. */
        int64_t len = 4;
        pg_array *x;
        void *p;
        uint64_t s;
        REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &len, &x));
        CHECK_STATUS(pg_array_device_pointer(x, 0, PG_ACCESS_IN, &p, &s), PG_ERROR_UNSUPPORTED);
        CHECK(strstr(pg_last_error(), "GPU") != NULL);
        CHECK_STATUS(pg_array_copy_from_device(x, 0x1000, 16, 0), PG_ERROR_UNSUPPORTED);
        CHECK_OK(pg_runtime_free(rt));
        CHECK_DONE();
    }
    int ndev;
    pg_device_info info[PG_MAX_DEVICES];
    REQUIRE_OK(pg_runtime_devices(rt, info, PG_MAX_DEVICES, &ndev));
    printf("GPU mode: %d device(s), first: %s (sm_%d%d, %d SMs)\n", ndev, info[0].name,
           info[0].compute_major, info[0].compute_minor, info[0].multiprocessors);
    CHECK(info[0].kind == PG_DEVICE_CUDA && info[0].memory_bytes > 0);
    /* Launch limits from the device attributes (every GPU since Kepler: 1024 threads per block,
     * z up to 64, x of the grid up to 2^31-1; at least 48 KiB of shared memory). */
    printf("limits: %u threads per block, block (%u, %u, %u), grid (%u, %u, %u), %llu bytes of "
           "shared memory per block\n",
           info[0].max_threads_per_block, info[0].max_block.x, info[0].max_block.y,
           info[0].max_block.z, info[0].max_grid.x, info[0].max_grid.y, info[0].max_grid.z,
           (unsigned long long)info[0].max_shared_memory_per_block);
    CHECK(info[0].max_threads_per_block == 1024 && info[0].max_block.x == 1024 &&
          info[0].max_block.z == 64 && info[0].max_grid.x == 2147483647u &&
          info[0].max_grid.y == 65535);
    CHECK(info[0].max_shared_memory_per_block >= 48 * 1024);

    /* Bad ordinals are named. */
    pg_options bad;
    pg_options_init(&bad);
    bad.devices = "cuda:99";
    pg_runtime *rt2;
    CHECK_STATUS(pg_runtime_new(&bad, &rt2), PG_ERROR_DEVICE);
    CHECK(strstr(pg_last_error(), "99") != NULL);

    /* A chain over every device, with host reads in between. */
    const int N = 1 << 20;
    pg_kernel *add1 = test_kernel(rt, "add1", NULL), *fill = test_kernel(rt, "fill", NULL);
    pg_array *a = test_array(rt, N), *b = test_array(rt, N);
    pg_arg fa[] = {pg_arg_array(a), pg_arg_float(1.0f), pg_arg_int(N)};
    REQUIRE_OK(pg_kernel_launch(fill, dim1(N / 256), dim1(256), 0, fa, 3));
    for (int i = 0; i < 2 * ndev + 1; i++) {
        pg_arg aa[] = {pg_arg_array(i % 2 ? a : b), pg_arg_array(i % 2 ? b : a), pg_arg_int(N)};
        REQUIRE_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, aa, 3));
    }
    float v[2];
    REQUIRE_OK(pg_array_read(b, (uint64_t)N - 2, 2, v));
    CHECK(v[0] == (float)(2 * ndev + 2) && v[1] == v[0]);

    /* Past the GPU's limits: refused with the limit named; at the shared memory limit: runs. */
    pg_arg big[] = {pg_arg_array(a), pg_arg_float(1.0f), pg_arg_int(N)};
    CHECK_STATUS(pg_kernel_launch(fill, dim1(1), dim1(2048), 0, big, 3), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "allows 1024 threads per block") != NULL);
    size_t smem = (size_t)info[0].max_shared_memory_per_block;
    CHECK_STATUS(pg_kernel_launch(fill, dim1(1), dim1(32), smem + 1, big, 3), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "of shared memory per block") != NULL);
    CHECK_OK(pg_kernel_launch(fill, dim1(1), dim1(32), smem, big, 3));
    CHECK_OK(pg_runtime_sync(rt));

    /* A C++ template through a name expression. */
    pg_kernel *sc;
    REQUIRE_OK(pg_kernel_new(rt, TEMPLATE_SRC, "scale<float>", NULL, NULL, &sc));
    pg_arg sa[] = {pg_arg_array(a), pg_arg_array(b), pg_arg_float(0.5f), pg_arg_int(N)};
    REQUIRE_OK(pg_kernel_launch(sc, dim1(N / 256), dim1(256), 0, sa, 4));
    REQUIRE_OK(pg_array_read(a, 7, 1, v));
    CHECK(v[0] == (float)(ndev + 1));

    /* Compile errors carry NVRTC's log. */
    pg_kernel *broken;
    CHECK_STATUS(pg_kernel_new(rt, "__global__ void k(float *y) { y[0] = undefined_name; }", "k",
                               NULL, NULL, &broken),
                 PG_ERROR_COMPILE);
    CHECK(strstr(pg_last_error_log(), "undefined_name") != NULL);
    /* The chain: the kernel and the GPU, then NVRTC's message (the cause). */
    printf("compile error: %.300s\n", pg_last_error());
    CHECK(!strncmp(pg_last_error(), "compiling kernel 'k' for device 0 (", 35));
    CHECK(strstr(pg_last_error(), "): NVRTC ") && strstr(pg_last_error(), "undefined_name"));

    /* Large host round trip (pinned memory, both directions). */
    float *h = malloc(sizeof(float) * (size_t)N);
    for (int i = 0; i < N; i++)
        h[i] = (float)i;
    REQUIRE_OK(pg_array_write(a, 0, (uint64_t)N, h));
    REQUIRE_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0,
                                (pg_arg[]){pg_arg_array(b), pg_arg_array(a), pg_arg_int(N)}, 3));
    REQUIRE_OK(pg_array_read(b, 0, (uint64_t)N, h));
    int bad_count = 0;
    for (int i = 0; i < N; i++)
        bad_count += h[i] != (float)i + 1.0f;
    CHECK(bad_count == 0);
    free(h);

    /* Device addresses for other CUDA libraries: b's value handed over on the GPU, copied from
     * there into a fresh array, device to device, with no host copy in between. */
    {
        REQUIRE_OK(pg_runtime_sync(rt));
        pg_stats s0, s1;
        REQUIRE_OK(pg_runtime_stats(rt, &s0));
        void *pb;
        uint64_t stream = 0;
        REQUIRE_OK(pg_array_device_pointer(b, ndev - 1, PG_ACCESS_IN, &pb, &stream));
        CHECK(pb != NULL && stream != 0);
        pg_array *c = test_array(rt, N);
        REQUIRE_OK(pg_array_copy_from_device(c, (uint64_t)(uintptr_t)pb, sizeof(float) * (size_t)N,
                                             stream));
        REQUIRE_OK(pg_runtime_stats(rt, &s1));
        uint64_t to_host = 0;
        for (int d = 1; d <= ndev; d++)
            to_host += s1.link_bytes[d][0] - s0.link_bytes[d][0];
        CHECK(to_host == 0); /* no trip through the host */
        REQUIRE_OK(pg_array_read(c, 5, 2, v));
        CHECK(v[0] == 6.0f && v[1] == 7.0f);
        CHECK_STATUS(pg_array_copy_from_device(c, (uint64_t)(uintptr_t)pb, 12, 0),
                     PG_ERROR_ARGUMENT);
        CHECK_STATUS(pg_array_device_pointer(c, ndev, PG_ACCESS_IN, &pb, &stream),
                     PG_ERROR_ARGUMENT);
        int host_var = 0;
        CHECK_STATUS(pg_array_copy_from_device(c, (uint64_t)(uintptr_t)&host_var,
                                               sizeof(float) * (size_t)N, 0),
                     PG_ERROR_ARGUMENT);
        CHECK(strstr(pg_last_error(), "not CUDA device memory") != NULL);
    }

    /* A trace with GPU timings. */
    REQUIRE_OK(pg_runtime_sync(rt));
    char *js;
    REQUIRE_OK(pg_dag_export_string(rt, PG_DAG_JSON, &js));
    CHECK(strstr(js, "\"kind\":\"kernel\"") != NULL);
    pg_string_free(js);
    CHECK_OK(pg_runtime_free(rt));

    /* With timing on, every GPU's kernels sit on the host's timeline: a kernel on an idle GPU
     * starts soon after its submission on each device (devices open one after another, so a
     * shared epoch would shift the first ones by a context creation, ~100 ms). */
    o.trace = "/tmp/pg-test-cuda-trace.json";
    o.policy = "round-robin";
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    int ndev2;
    pg_device_info infos[PG_MAX_DEVICES];
    REQUIRE_OK(pg_runtime_devices(rt, infos, PG_MAX_DEVICES, &ndev2));
    pg_kernel *tfill = test_kernel(rt, "fill", "out float *y, float v, int n");
    for (int round = 0; round < 2; round++) {
        pg_array *ys[PG_MAX_DEVICES];
        for (int d = 0; d < ndev2; d++) {
            ys[d] = test_array(rt, 1 << 20);
            pg_arg tfa[] = {pg_arg_array(ys[d]), pg_arg_float(1.0f), pg_arg_int(1 << 20)};
            REQUIRE_OK(pg_kernel_launch(tfill, dim1(4096), dim1(256), 0, tfa, 3));
        }
        REQUIRE_OK(pg_runtime_sync(rt));
        for (int d = 0; d < ndev2; d++)
            REQUIRE_OK(pg_array_free(ys[d]));
    }
    static tdag dag;
    tdag_load(rt, &dag);
    /* The second round's kernels, the last ndev2 kernel vertices: modules are loaded then. */
    int seen = 0;
    unsigned devs = 0;
    for (int i = dag.nv - 1; i >= 0 && seen < ndev2; i--) {
        const tvertex *tv = &dag.v[i];
        if (strcmp(tv->kind, "kernel"))
            continue;
        seen++;
        devs |= 1u << tv->device;
        long long lag = tv->start_ns - tv->submit_ns;
        if (lag < -200000 || lag > 20000000)
            fprintf(stderr, "kernel %ld on device %d: start - submit = %lld ns\n", tv->id,
                    tv->device, lag);
        CHECK(lag >= -200000 && lag <= 20000000);
        CHECK(tv->end_ns >= tv->start_ns);
    }
    CHECK(seen == ndev2 && devs == (1u << ndev2) - 1); /* one kernel on every GPU */
    CHECK_OK(pg_kernel_free(tfill));
    CHECK_OK(pg_runtime_free(rt));
    remove("/tmp/pg-test-cuda-trace.json");
    CHECK_DONE();
}

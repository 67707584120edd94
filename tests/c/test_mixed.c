/* test_mixed.c: GPUs and CPU devices in one runtime (devices "sim:...,host:2"; with
 * PG_MIXED_DEVICES "cuda,host:2" over the CUDA test double, tests/cudadouble): the devices
 * string's forms and errors, each device's class and backend, a kernel's where= (an error for a
 * class the runtime lacks, naming the devices; honoured by every registered policy), values
 * carried between the classes both ways through one coherence, and independent where=any calls
 * with correct values wherever they ran. */
#include "check.h"
#include "dag_view.h"
#include "kernels_common.h"
#include "policies/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256

static const char *mixed_devices(void) {
    const char *e = getenv("PG_MIXED_DEVICES");
    return e && e[0] ? e : "sim:h200x2-nv18,host_time=0,host:2";
}

static pg_runtime *runtime(const char *devices, const char *policy) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.policy = policy;
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

/* The devices: GPUs first (as named), then the CPU devices; class and backend from the
 * registry. Returns the number of GPUs. */
static int check_devices(pg_runtime *rt, int *ncpu) {
    pg_device_info info[PG_MAX_DEVICES];
    int n = 0, gpus = 0;
    CHECK_OK(pg_runtime_devices(rt, info, PG_MAX_DEVICES, &n));
    *ncpu = 0;
    for (int d = 0; d < n; d++) {
        CHECK(info[d].id == d);
        if (info[d].device_class == PG_CLASS_GPU) {
            CHECK(*ncpu == 0); /* the GPUs' part comes first */
            CHECK(!strcmp(info[d].backend, "sim") || !strcmp(info[d].backend, "cuda"));
            CHECK(info[d].kind == PG_DEVICE_CUDA);
            gpus++;
        } else {
            CHECK(!strcmp(info[d].backend, "host") && info[d].kind == PG_DEVICE_CPU);
            ++*ncpu;
        }
    }
    CHECK(gpus >= 1 && *ncpu == 2);
    return gpus;
}

static void test_forms(void) {
    pg_runtime *rt = runtime(mixed_devices(), NULL);
    int ncpu;
    check_devices(rt, &ncpu);
    CHECK_OK(pg_runtime_free(rt));

    /* "auto,host:2": the GPUs if any, and two CPU devices; here (no GPU driver) just those. */
    if (!getenv("PG_MIXED_DEVICES")) {
        rt = runtime("auto,host:2", NULL);
        pg_device_info info[PG_MAX_DEVICES];
        int n = 0;
        CHECK_OK(pg_runtime_devices(rt, info, PG_MAX_DEVICES, &n));
        int cpus = 0;
        for (int d = 0; d < n; d++)
            cpus += info[d].device_class == PG_CLASS_CPU;
        CHECK(cpus == 2);
        CHECK_OK(pg_runtime_free(rt));
    }

    static const struct {
        const char *devices, *says;
    } bad[] = {
        {"host:2,host:1", "names host twice"}, {"host:2,bogus", "is not valid"},
        {"host:2,", "is not valid"},           {"sim:h200x2-nv18,host:0", "host:N"},
        {"auto,auto", "names auto twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pg_options o;
        pg_options_init(&o);
        o.devices = bad[i].devices;
        pg_runtime *r = NULL;
        CHECK(pg_runtime_new(&o, &r) == PG_ERROR_ARGUMENT && !r);
        if (!strstr(pg_last_error(), bad[i].says))
            fprintf(stderr, "devices '%s': message '%s' lacks '%s'\n", bad[i].devices,
                    pg_last_error(), bad[i].says);
        CHECK(strstr(pg_last_error(), bad[i].says) != NULL);
    }
}

/* where=gpu in a runtime without a GPU fails at creation, naming the devices there are; a bad
 * where names the forms. */
static void test_where_errors(void) {
    pg_runtime *rt = runtime("host:2", NULL);
    pg_kernel *k = NULL;
    CHECK(pg_kernel_new_where(rt, TEST_SRC, "fill", NULL, NULL, "gpu", &k) == PG_ERROR_ARGUMENT);
    CHECK(!k);
    CHECK(strstr(pg_last_error(), "where=gpu, but this runtime has no GPU") != NULL);
    CHECK(strstr(pg_last_error(), "0 (CPU device") != NULL);
    CHECK(strstr(pg_last_error(), "1 (CPU device") != NULL);
    CHECK(pg_kernel_new_where(rt, TEST_SRC, "fill", NULL, NULL, "tpu", &k) == PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "expected any, gpu or cpu") != NULL);
    /* The runtime is still usable, and where=cpu / any work there. */
    CHECK_OK(pg_kernel_new_where(rt, TEST_SRC, "fill", NULL, NULL, "cpu", &k));
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_kernel_new_where(rt, TEST_SRC, "fill", NULL, NULL, "any", &k));
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_runtime_free(rt));
}

static void read_check(pg_array *a, float want, const char *what) {
    float got[N];
    CHECK_OK(pg_array_read(a, 0, N, got));
    for (int i = 0; i < N; i++)
        if (got[i] != want) {
            fprintf(stderr, "%s: element %d is %g, expected %g\n", what, i, got[i], want);
            CHECK(got[i] == want);
            return;
        }
}

/* The device of each kernel vertex named `name`, in order. */
static int kernel_devices(pg_runtime *rt, const char *name, int *dev, int cap) {
    static tdag d;
    tdag_load(rt, &d);
    int n = 0;
    for (int i = 0; i < d.nv && n < cap; i++)
        if (!strcmp(d.v[i].kind, "kernel") && !strcmp(d.v[i].name, name))
            dev[n++] = d.v[i].device;
    return n;
}

/* A value made on a CPU device, changed on a GPU, then on a CPU device again, then on a GPU:
 * every step reads the one before it, across the classes both ways. */
static void test_across(void) {
    pg_runtime *rt = runtime(mixed_devices(), "round-robin");
    int ncpu, ngpu = check_devices(rt, &ncpu);
    pg_kernel *fill_cpu, *add_gpu, *add_cpu;
    REQUIRE_OK(pg_kernel_new_where(rt, TEST_SRC, "fill", NULL, NULL, "cpu", &fill_cpu));
    REQUIRE_OK(pg_kernel_new_where(rt, TEST_SRC, "add1", NULL, NULL, "gpu", &add_gpu));
    REQUIRE_OK(pg_kernel_new_where(rt, TEST_SRC, "add1", NULL, NULL, "cpu", &add_cpu));
    pg_array *a = test_array(rt, N), *b = test_array(rt, N), *c = test_array(rt, N),
             *e = test_array(rt, N);
    pg_arg f[3] = {pg_arg_array(a), pg_arg_float(3.0f), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(fill_cpu, dim1(N / 32), dim1(32), 0, f, 3));
    pg_arg s1[3] = {pg_arg_array(b), pg_arg_array(a), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(add_gpu, dim1(N / 32), dim1(32), 0, s1, 3)); /* CPU -> GPU */
    pg_arg s2[3] = {pg_arg_array(c), pg_arg_array(b), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(add_cpu, dim1(N / 32), dim1(32), 0, s2, 3)); /* GPU -> CPU */
    pg_arg s3[3] = {pg_arg_array(e), pg_arg_array(c), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(add_gpu, dim1(N / 32), dim1(32), 0, s3, 3));
    read_check(e, 6.0f, "fill(3) on a CPU device, +1 on a GPU, +1 on a CPU device, +1 on a GPU");
    read_check(c, 5.0f, "the CPU device's result");
    read_check(b, 4.0f, "the GPU's result");
    int dev[8];
    int n = kernel_devices(rt, "add1", dev, 8);
    CHECK(n == 3);
    CHECK(n == 3 && dev[0] < ngpu && dev[1] >= ngpu && dev[2] < ngpu);
    n = kernel_devices(rt, "fill", dev, 8);
    CHECK(n == 1 && dev[0] >= ngpu);
    pg_kernel_free(fill_cpu);
    pg_kernel_free(add_gpu);
    pg_kernel_free(add_cpu);
    pg_array_free(a);
    pg_array_free(b);
    pg_array_free(c);
    pg_array_free(e);
    CHECK_OK(pg_runtime_free(rt));
}

/* Every registered policy keeps where=gpu calls on the GPUs and where=cpu calls on the CPU
 * devices, with eight independent calls of each reading one shared input; where=any calls
 * give the right values wherever they ran. */
static void test_where_every_policy(void) {
    char names[1024];
    snprintf(names, sizeof names, "%s", pg__policy_names());
    int policies = 0;
    for (char *save = NULL, *p = strtok_r(names, ", ", &save); p; p = strtok_r(NULL, ", ", &save)) {
        policies++;
        pg_runtime *rt = runtime(mixed_devices(), p);
        int ncpu, ngpu = check_devices(rt, &ncpu);
        const char *where[3] = {"gpu", "cpu", "any"};
        pg_array *x = test_array(rt, N);
        pg_kernel *fill = test_kernel(rt, "fill", NULL);
        pg_arg f[3] = {pg_arg_array(x), pg_arg_float(1.5f), pg_arg_int(N)};
        CHECK_OK(pg_kernel_launch(fill, dim1(N / 32), dim1(32), 0, f, 3));
        for (int w = 0; w < 3; w++) {
            pg_kernel *k = NULL;
            REQUIRE_OK(pg_kernel_new_where(rt, TEST_SRC, "add1", NULL, NULL, where[w], &k));
            pg_array *ys[8];
            for (int i = 0; i < 8; i++) {
                ys[i] = test_array(rt, N);
                pg_arg a[3] = {pg_arg_array(ys[i]), pg_arg_array(x), pg_arg_int(N)};
                CHECK_OK(pg_kernel_launch(k, dim1(N / 32), dim1(32), 0, a, 3));
            }
            for (int i = 0; i < 8; i++) {
                read_check(ys[i], 2.5f, where[w]);
                pg_array_free(ys[i]);
            }
            int dev[32];
            int n = kernel_devices(rt, "add1", dev, 32);
            CHECK(n == 8 * (w + 1));
            for (int i = 8 * w; i < n; i++) {
                int gpu = dev[i] < ngpu;
                if ((w == 0 && !gpu) || (w == 1 && gpu))
                    fprintf(stderr, "policy %s: a where=%s call ran on device %d\n", p, where[w],
                            dev[i]);
                CHECK(!(w == 0 && !gpu) && !(w == 1 && gpu));
            }
            pg_kernel_free(k);
        }
        pg_kernel_free(fill);
        pg_array_free(x);
        CHECK_OK(pg_runtime_free(rt));
    }
    CHECK(policies >= 7);
}

/* The default policy compares the classes by their throughput: eight independent GPU-shaped
 * calls (a million threads each) stay on the GPUs however idle the CPU devices are, while the
 * values stay right. */
static void test_gpu_shaped_stays_on_gpus(void) {
    pg_runtime *rt = runtime(mixed_devices(), NULL);
    int ncpu, ngpu = check_devices(rt, &ncpu);
    const int64_t n = 1 << 20;
    pg_array *x = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &x));
    pg_kernel *fill = test_kernel(rt, "fill", NULL), *add = test_kernel(rt, "add1", NULL);
    pg_arg f[3] = {pg_arg_array(x), pg_arg_float(0.5f), pg_arg_int(n)};
    CHECK_OK(pg_kernel_launch(fill, dim1((uint32_t)(n / 256)), dim1(256), 0, f, 3));
    pg_array *ys[8];
    for (int i = 0; i < 8; i++) {
        REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &ys[i]));
        pg_arg a[3] = {pg_arg_array(ys[i]), pg_arg_array(x), pg_arg_int(n)};
        CHECK_OK(pg_kernel_launch(add, dim1((uint32_t)(n / 256)), dim1(256), 0, a, 3));
    }
    for (int i = 0; i < 8; i++) {
        float v[4];
        CHECK_OK(pg_array_read(ys[i], n - 4, 4, v));
        CHECK(v[0] == 1.5f && v[3] == 1.5f);
        pg_array_free(ys[i]);
    }
    int dev[16];
    int k = kernel_devices(rt, "add1", dev, 16);
    CHECK(k == 8);
    int used[PG_MAX_DEVICES] = {0};
    for (int i = 0; i < k; i++) {
        if (dev[i] >= ngpu)
            fprintf(stderr, "a GPU-shaped call ran on CPU device %d\n", dev[i]);
        CHECK(dev[i] < ngpu);
        used[dev[i]] = 1;
    }
    /* Spread over the simulated GPUs. The driver's double runs work when asked whether it
     * finished, so each call sees the one before done and x read by no unfinished call: x is
     * then the call's own state (docs/PLACEMENT.md) and the calls stay with it, as they should. */
    if (ngpu >= 2 && !getenv("PG_MIXED_DEVICES"))
        CHECK(used[0] && used[1]);
    pg_kernel_free(fill);
    pg_kernel_free(add);
    pg_array_free(x);
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    test_forms();
    test_where_errors();
    test_across();
    test_where_every_policy();
    test_gpu_shaped_stays_on_gpus();
    CHECK_DONE();
}

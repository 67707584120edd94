/* test_models.c: performance models (option models) and the min-finish-time policy — a
 * model's median, warm-up and spike rules and its size buckets; persistence across two
 * runtimes sharing a cache_dir; durations measured from CPU kernels of controlled lengths; the
 * policy on scripted views (slow vs fast device, queued work, transfers, uncalibrated: as
 * minmax-transfer-time); and placement by a runtime whose device has predicted work queued. */
#include "kernels_common.h"
#include "policies/builtin.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *SPIN_SRC =
    "extern \"C\" __global__ void spin(float *a, long long ticks) {\n"
    "  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);\n"
    "  long long t0 = t.tv_sec * 1000000000LL + t.tv_nsec, now;\n"
    "  do { clock_gettime(CLOCK_MONOTONIC, &t); now = t.tv_sec * 1000000000LL + t.tv_nsec; }\n"
    "  while (now - t0 < ticks);\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) a[0] += 1.0f; }\n"
    "extern \"C\" __global__ void spinb(float *a, long long ticks) {\n"
    "  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);\n"
    "  long long t0 = t.tv_sec * 1000000000LL + t.tv_nsec, now;\n"
    "  do { clock_gettime(CLOCK_MONOTONIC, &t); now = t.tv_sec * 1000000000LL + t.tv_nsec; }\n"
    "  while (now - t0 < ticks);\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) a[0] += 1.0f; }\n";

/* ---- the policy on scripted views */

static const pg_device_policy *policy(const char *name) {
    for (const pg__builtin_policy *b = pg__builtin_policies(); b->name; b++)
        if (!strcmp(b->name, name))
            return &b->ops;
    return NULL;
}

static int choose(const char *name, const pg_policy_view *v) {
    const pg_device_policy *p = policy(name);
    void *st = p->create(v->ndevices);
    int d = p->choose(st, v);
    p->destroy(st);
    return d;
}

#define NDEV 2
#define NLOC (NDEV + 1)
#define ON(dev) (1u << ((dev) + 1))

static double bw[NLOC * NLOC];
static pg_policy_device devs[NDEV];

static pg_policy_view view(pg_policy_array *arrays, int n, double p0, double p1, double q0,
                           double q1) {
    for (int s = 0; s < NLOC; s++)
        for (int d = 0; d < NLOC; d++)
            bw[s * NLOC + d] = s == d ? 1e9 : 10; /* GB/s */
    memset(devs, 0, sizeof devs);
    for (int d = 0; d < NDEV; d++)
        devs[d].id = d;
    devs[0].predicted_s = p0;
    devs[1].predicted_s = p1;
    devs[0].queued_s = q0;
    devs[1].queued_s = q1;
    pg_policy_view v = {NDEV, devs, n, arrays, bw, 0.1, (1u << NDEV) - 1};
    return v;
}

static void policy_checks(void) {
    CHECK(policy("min-finish-time") != NULL);
    /* Measured slow on 0, fast on 1, no data anywhere: 1. And the other way round: 0. */
    pg_policy_view v = view(NULL, 0, 1.0, 0.001, 0, 0);
    CHECK(choose("min-finish-time", &v) == 1);
    v = view(NULL, 0, 0.001, 1.0, 0, 0);
    CHECK(choose("min-finish-time", &v) == 0);
    /* Equal durations, work queued on 1: 0; queued on 0: 1. */
    v = view(NULL, 0, 0.01, 0.01, 0, 0.5);
    CHECK(choose("min-finish-time", &v) == 0);
    v = view(NULL, 0, 0.01, 0.01, 0.5, 0);
    CHECK(choose("min-finish-time", &v) == 1);
    /* 1 GB on device 0 (0.1 s to move at 10 GB/s): equal durations stay with the data; a
     * device 1 faster by more than the copy wins; queued work on 0 beyond the copy moves it. */
    pg_policy_array arr[1] = {{1000000000ull, ON(0), PG_ACCESS_IN, 0}};
    v = view(arr, 1, 0.05, 0.05, 0, 0);
    CHECK(choose("min-finish-time", &v) == 0);
    v = view(arr, 1, 0.5, 0.05, 0, 0); /* 0.5 vs 0.1 + 0.05 */
    CHECK(choose("min-finish-time", &v) == 1);
    v = view(arr, 1, 0.5, 0.45, 0, 0); /* 0.5 vs 0.1 + 0.45 */
    CHECK(choose("min-finish-time", &v) == 0);
    v = view(arr, 1, 0.05, 0.05, 0.2, 0); /* 0.25 vs 0.15 */
    CHECK(choose("min-finish-time", &v) == 1);
    /* Candidates restrict it. */
    v = view(NULL, 0, 1.0, 0.001, 0, 0);
    v.candidates = 1u << 0;
    CHECK(choose("min-finish-time", &v) == 0);
    /* Uncalibrated on a candidate (unknown duration): minmax-transfer-time's choice, which
     * keeps the work with its data although device 1 would be predicted faster. */
    v = view(arr, 1, -1, 0.001, 0, 0);
    CHECK(choose("minmax-transfer-time", &v) == 0);
    CHECK(choose("min-finish-time", &v) == 0);
    v = view(arr, 1, 10.0, -1, 0, 0);
    CHECK(choose("min-finish-time", &v) == 0);
    v = view(arr, 1, 10.0, 0.001, 0, 0); /* calibrated: it moves */
    CHECK(choose("min-finish-time", &v) == 1);
    /* ... and with data nowhere, the same rotation as minmax-transfer-time's. */
    {
        const pg_device_policy *m = policy("min-finish-time"), *x = policy("minmax-transfer-time");
        void *sm = m->create(NDEV), *sx = x->create(NDEV);
        v = view(NULL, 0, -1, -1, 0, 0);
        for (int i = 0; i < 5; i++)
            CHECK(m->choose(sm, &v) == x->choose(sx, &v));
        m->destroy(sm);
        x->destroy(sx);
    }
}

/* ---- models through a runtime */

static pg_runtime *runtime(const char *devices, const char *policy_name, const char *models,
                           const char *cache_dir) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.policy = policy_name;
    o.cache_dir = cache_dir;
    if (models)
        REQUIRE_OK(pg_options_set(&o, "models", models));
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

/* The model of (kernel, bucket), or samples = -1 when there is none. */
static pg_model_info find_model(pg_runtime *rt, const char *kernel, uint64_t bucket) {
    pg_model_info m;
    memset(&m, 0, sizeof m);
    m.samples = -1;
    int n = 0;
    CHECK_OK(pg_runtime_models(rt, &n));
    for (int i = 0; i < n; i++) {
        pg_model_info x;
        CHECK_OK(pg_runtime_model(rt, i, &x));
        if (!strcmp(x.kernel, kernel) && x.bytes == bucket)
            return x;
    }
    return m;
}

static void median_checks(const char *dir) {
    pg_runtime *rt = runtime("host:2", NULL, "on", dir);
    /* The first sample is a warm-up: dropped. */
    CHECK_OK(pg_runtime_model_sample(rt, "k1", 0, 1000, 500000));
    pg_model_info m = find_model(rt, "k1", 512);
    CHECK(m.samples == 0 && m.median_ns == 0);
    CHECK(!strncmp(m.device_class, "CPU device (", 12));
    CHECK_OK(pg_runtime_model_sample(rt, "k1", 0, 1000, 100));
    CHECK_OK(pg_runtime_model_sample(rt, "k1", 1, 600, 110)); /* same class, same bucket */
    CHECK_OK(pg_runtime_model_sample(rt, "k1", 0, 1023, 90));
    m = find_model(rt, "k1", 512);
    CHECK(m.samples == 3 && m.median_ns == 100);
    /* One spike (over 10x the median) is not kept; nor a second. */
    CHECK_OK(pg_runtime_model_sample(rt, "k1", 0, 1000, 5000));
    CHECK_OK(pg_runtime_model_sample(rt, "k1", 0, 1000, 4000));
    m = find_model(rt, "k1", 512);
    CHECK(m.samples == 3 && m.median_ns == 100);
    /* A sample in between ends the run of spikes; an even count: the mean of the middle two. */
    CHECK_OK(pg_runtime_model_sample(rt, "k1", 0, 1000, 900));
    m = find_model(rt, "k1", 512);
    CHECK(m.samples == 4 && m.median_ns == 105);
    /* Three spikes in a row: the kernel changed, the model starts again from the third. */
    for (int i = 0; i < 3; i++)
        CHECK_OK(pg_runtime_model_sample(rt, "k1", 0, 1000, 100000 + (uint64_t)i));
    m = find_model(rt, "k1", 512);
    CHECK(m.samples == 1 && m.median_ns == 100002);
    /* At most 32 kept, the newest: the median follows them. */
    for (int i = 0; i < 40; i++)
        CHECK_OK(pg_runtime_model_sample(rt, "k2", 0, 0, i < 20 ? 1000 : 2000));
    m = find_model(rt, "k2", 0);
    CHECK(m.samples == 32 && m.median_ns == 2000);
    /* Buckets: powers of two. */
    CHECK_OK(pg_runtime_model_sample(rt, "k1", 0, 1024, 7));
    CHECK(find_model(rt, "k1", 1024).samples == 0);
    CHECK_MSG(pg_runtime_model_sample(rt, "k1", 2, 10, 7), PG_ERROR_ARGUMENT, "no device 2");
    CHECK_OK(pg_runtime_free(rt));

    /* Off: nothing kept, nothing to inject into. */
    rt = runtime("host:1", NULL, "off", dir);
    int n = -1;
    CHECK_OK(pg_runtime_models(rt, &n));
    CHECK(n == 0);
    CHECK_STATUS(pg_runtime_model_sample(rt, "k1", 0, 10, 7), PG_ERROR_STATE);
    CHECK_OK(pg_runtime_free(rt));
    /* Unknown value; the default follows the policy. */
    pg_options o;
    pg_options_init(&o);
    CHECK_STATUS(pg_options_set(&o, "models", "maybe"), PG_OK);
    o.devices = "host:1";
    pg_runtime *bad = NULL;
    CHECK_MSG(pg_runtime_new(&o, &bad), PG_ERROR_ARGUMENT, "unknown models 'maybe'");
    rt = runtime("host:1", "min-finish-time", NULL, dir);
    CHECK_OK(pg_runtime_model_sample(rt, "k9", 0, 10, 7));
    CHECK_OK(pg_runtime_free(rt));
    rt = runtime("host:1", "minmax-transfer-time", NULL, dir);
    CHECK_STATUS(pg_runtime_model_sample(rt, "k9", 0, 10, 7), PG_ERROR_STATE);
    CHECK_OK(pg_runtime_free(rt));
}

static int csv_files(const char *path) {
    DIR *dd = opendir(path);
    int n = 0;
    if (!dd)
        return -1;
    for (struct dirent *e; (e = readdir(dd));)
        n += strlen(e->d_name) > 4 && !strcmp(e->d_name + strlen(e->d_name) - 4, ".csv");
    closedir(dd);
    return n;
}

static void persistence_checks(const char *dir) {
    /* A fresh folder inside dir: models from median_checks are not in it. */
    char sub[1100], file[1200];
    snprintf(sub, sizeof sub, "%s/persist", dir);
    snprintf(file, sizeof file, "%s/models", sub);
    pg_runtime *rt = runtime("host:1", NULL, "on", sub);
    uint64_t ns[] = {999, 300, 100, 200, 250};
    for (int i = 0; i < 5; i++)
        CHECK_OK(pg_runtime_model_sample(rt, "kp", 0, 4096, ns[i]));
    CHECK_OK(pg_runtime_free(rt));
    struct stat st;
    CHECK(csv_files(file) == 1);
    rt = runtime("host:1", NULL, "on", sub);
    pg_model_info m = find_model(rt, "kp", 4096);
    CHECK(m.samples == 4 && m.median_ns == 225 && !strncmp(m.device_class, "CPU device (", 12));
    /* A new process's first sample is a warm-up again; then they add to the loaded ones. */
    CHECK_OK(pg_runtime_model_sample(rt, "kp", 0, 4096, 50000 / 10));
    CHECK_OK(pg_runtime_model_sample(rt, "kp", 0, 4096, 260));
    m = find_model(rt, "kp", 4096);
    CHECK(m.samples == 5 && m.median_ns == 250);
    CHECK_OK(pg_runtime_free(rt));
    rt = runtime("host:1", NULL, "on", sub);
    CHECK(find_model(rt, "kp", 4096).samples == 5);
    CHECK_OK(pg_runtime_free(rt));
    /* Models off neither loads nor writes. */
    rt = runtime("host:1", NULL, "off", sub);
    CHECK(find_model(rt, "kp", 4096).samples == -1);
    CHECK_OK(pg_runtime_free(rt));
    char off[1100], offfile[1200];
    snprintf(off, sizeof off, "%s/off", dir);
    snprintf(offfile, sizeof offfile, "%s/models", off);
    rt = runtime("host:1", NULL, "off", off);
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SPIN_SRC, "spin", NULL, NULL, &k));
    pg_array *a = test_array(rt, 4);
    for (int i = 0; i < 3; i++) {
        pg_arg args[] = {pg_arg_array(a), pg_arg_int(0)};
        CHECK_OK(pg_kernel_launch(k, dim1(1), dim1(1), 0, args, 2));
    }
    CHECK_OK(pg_runtime_free(rt));
    CHECK(stat(offfile, &st) != 0);
}

/* CPU kernels of controlled durations: the median is their length, not the warm-up's. */
static void measured_checks(const char *dir) {
    pg_runtime *rt = runtime("host:1", NULL, "on", dir);
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SPIN_SRC, "spin", NULL, NULL, &k));
    pg_array *a = test_array(rt, 64); /* 256 bytes */
    for (int i = 0; i < 6; i++) {
        pg_arg args[] = {pg_arg_array(a), pg_arg_int(2000000)}; /* 2 ms */
        CHECK_OK(pg_kernel_launch(k, dim1(1), dim1(1), 0, args, 2));
    }
    CHECK_OK(pg_runtime_sync(rt));
    pg_model_info m = find_model(rt, "spin", 256);
    CHECK(m.samples >= 3 && m.samples <= 5); /* 5 unless a spike (a preempted worker) */
    CHECK(m.median_ns >= 2000000 && m.median_ns < 20000000);
    CHECK_OK(pg_runtime_free(rt));
}

static int where(pg_array *a) {
    pg_array_desc d;
    CHECK_OK(pg_array_describe(a, &d));
    for (int k = 0; k < 2; k++)
        if (d.valid >> (k + 1) & 1)
            return k;
    return -1;
}

/* A runtime's placement: a long kernel runs on device L with its predicted duration queued
 * there; work whose data is on L stays there while its kernel is uncalibrated (as
 * minmax-transfer-time), and moves to the idle device once it is calibrated. */
static void placement_checks(const char *dir) {
    char sub[1100];
    snprintf(sub, sizeof sub, "%s/place", dir);
    pg_runtime *rt = runtime("host:2", "min-finish-time", NULL, sub);
    pg_kernel *k = NULL, *kb = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SPIN_SRC, "spin", NULL, NULL, &k));
    REQUIRE_OK(pg_kernel_new(rt, SPIN_SRC, "spinb", NULL, NULL, &kb));
    enum { N = 1 << 20 }; /* 4 MiB: the bucket */
    const uint64_t bytes = (uint64_t)N * 4;
    for (int i = 0; i < 4; i++) /* 200 ms, on every CPU device (one class) */
        CHECK_OK(pg_runtime_model_sample(rt, "spin", 0, bytes, 200000000));
    pg_array *a1 = test_array(rt, N), *d[4];
    for (int i = 0; i < 4; i++) { /* data on both devices (the policy rotates on ties) */
        d[i] = test_array(rt, N);
        pg_arg args[] = {pg_arg_array(d[i]), pg_arg_int(0)};
        CHECK_OK(pg_kernel_launch(i < 2 ? kb : k, dim1(1), dim1(1), 0, args, 2));
    }
    CHECK_OK(pg_runtime_sync(rt));
    pg_arg long_args[] = {pg_arg_array(a1), pg_arg_int(600000000)}; /* 600 ms */
    CHECK_OK(pg_kernel_launch(k, dim1(1), dim1(1), 0, long_args, 2));
    int L = where(a1);
    CHECK(L == 0 || L == 1);
    pg_array *near_b = NULL, *near_k = NULL;
    for (int i = 0; i < 4; i++) {
        int w = where(d[i]);
        if (w == L && i < 2)
            near_b = d[i];
        if (w == L && i >= 2)
            near_k = d[i];
    }
    CHECK(near_b && near_k);
    if (near_b && near_k && (L == 0 || L == 1)) {
        pg_arg b_args[] = {pg_arg_array(near_b), pg_arg_int(0)};
        CHECK_OK(pg_kernel_launch(kb, dim1(1), dim1(1), 0, b_args, 2)); /* uncalibrated */
        pg_arg k_args[] = {pg_arg_array(near_k), pg_arg_int(0)};
        CHECK_OK(pg_kernel_launch(k, dim1(1), dim1(1), 0, k_args, 2)); /* 200 ms queued on L */
        CHECK_OK(pg_runtime_sync(rt));
        CHECK(where(near_b) == L);
        CHECK(where(near_k) == 1 - L);
    }
    CHECK_OK(pg_runtime_free(rt));
}

static void remove_tree(const char *path) {
    DIR *dd = opendir(path);
    if (dd) {
        struct dirent *e;
        while ((e = readdir(dd))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[2048];
            snprintf(p, sizeof p, "%s/%s", path, e->d_name);
            remove_tree(p);
        }
        closedir(dd);
        rmdir(path);
    } else {
        unlink(path);
    }
}

int main(void) {
    policy_checks();
    char dir[] = "/tmp/pg-models-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    median_checks(dir);
    persistence_checks(dir);
    measured_checks(dir);
    placement_checks(dir);
    remove_tree(dir);
    CHECK_DONE();
}

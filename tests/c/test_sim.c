/* test_sim.c: simulated GPUs through the runtime (devices="sim:..."): every preset opens with
 * its GPUs and its links as the interconnect matrix; a kernel chain's virtual time is the sum of
 * its profile durations; on a DGX-1 minmax-transfer-time keeps copies off the PCIe pairs that
 * round-robin crosses, and finishes sooner; two runs with host time frozen give the same
 * timeline, however fast the host really is; the trace shows virtual times; compute=cpu
 * computes the values too; recordings replay (a plan as one graph launch), memory pressure
 * evicts, threads launch at once. */
#include "dag_view.h"
#include "kernels_common.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[256];

static pg_runtime *sim_runtime(const char *devices, const char *policy) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.policy = policy;
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

typedef struct preset {
    const char *name;
    int ngpu;
    const char *gpu;
    double host_gbps, peer01_gbps; /* host -> gpu0, gpu0 -> gpu1 */
} preset;

static const preset PRESETS[] = {
    {"dgx1-v100", 8, "Tesla V100-SXM2-32GB", 12, 24},
    {"dgx2-v100", 16, "Tesla V100-SXM3-32GB", 12, 150},
    {"dgx-a100", 8, "NVIDIA A100-SXM4-40GB", 24, 300},
    {"hgx-h200x8", 8, "NVIDIA H200", 55, 394},
    {"h200x4-nv18", 4, "NVIDIA H200", 55, 394},
    {"pcie-4gpu", 4, "NVIDIA A100-PCIE-40GB", 24, 24},
};

static void test_presets(void) {
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++) {
        const preset *p = &PRESETS[i];
        char spec[64];
        snprintf(spec, sizeof spec, "sim:%s,host_time=0", p->name);
        pg_runtime *rt = sim_runtime(spec, NULL);
        pg_device_info info[PG_MAX_DEVICES];
        int n = 0;
        CHECK_OK(pg_runtime_devices(rt, info, PG_MAX_DEVICES, &n));
        CHECK(n == p->ngpu);
        for (int d = 0; d < n; d++)
            CHECK(info[d].kind == PG_DEVICE_CUDA && info[d].id == d &&
                  !strcmp(info[d].name, p->gpu) && info[d].memory_bytes > ((uint64_t)16 << 30) &&
                  info[d].compute_major >= 7 && info[d].max_threads_per_block == 1024);
        /* The policies' matrix is the topology's. */
        int nloc = 0;
        double gbps[(PG_MAX_DEVICES + 1) * (PG_MAX_DEVICES + 1)];
        CHECK_OK(pg_runtime_interconnect(rt, &nloc, gbps, NULL));
        CHECK(nloc == n + 1);
        if (gbps[0 * nloc + 1] != p->host_gbps || gbps[1 * nloc + 2] != p->peer01_gbps)
            fprintf(stderr, "%s: host->gpu0 %g, gpu0->gpu1 %g\n", p->name, gbps[1], gbps[nloc + 2]);
        CHECK(gbps[0 * nloc + 1] == p->host_gbps && gbps[1 * nloc + 2] == p->peer01_gbps);
        /* Something runs on each. */
        pg_kernel *k = test_kernel(rt, "fill", NULL);
        pg_array *y = test_array(rt, 1000);
        pg_arg a[] = {pg_arg_array(y), pg_arg_float(2), pg_arg_int(1000)};
        CHECK_OK(pg_kernel_launch(k, dim1(4), dim1(256), 0, a, 3));
        CHECK_OK(pg_runtime_sync(rt));
        CHECK_OK(pg_runtime_free(rt));
    }
    pg_runtime *rt = NULL;
    pg_options o;
    pg_options_init(&o);
    o.devices = "sim:no-such-machine";
    CHECK_MSG(pg_runtime_new(&o, &rt), PG_ERROR_NOT_FOUND, "no sim preset 'no-such-machine'");
    o.devices = "sim:";
    CHECK_MSG(pg_runtime_new(&o, &rt), PG_ERROR_ARGUMENT, "sim:PRESET");
    o.devices = "sim:pcie-4gpu,compute=gpu";
    CHECK_MSG(pg_runtime_new(&o, &rt), PG_ERROR_ARGUMENT, "compute 'gpu'");
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

/* The kernels of one runtime's DAG in id order. */
static int kernels(pg_runtime *rt, tdag *d, tvertex **out, int cap) {
    tdag_load(rt, d);
    int n = 0;
    for (int i = 0; i < d->nv && n < cap; i++)
        if (!strcmp(d->v[i].kind, "kernel"))
            out[n++] = &d->v[i];
    return n;
}

static tdag dag;

/* y = x + 1, y *= 2, x = y + 1, x *= 2 on one GPU: each kernel lasts what the profile says,
 * and the chain's virtual time is their sum. */
static void test_chain(void) {
    char profile[400], spec[600];
    snprintf(profile, sizeof profile, "%s/chain.csv", tmpdir);
    write_file(profile, "# test profile\n"
                        "model,add1,NVIDIA H200,bytes,50000,0.001\n"
                        "model,scale,*,threads,10000,1\n");
    snprintf(spec, sizeof spec, "sim:h200x4-nv18,host_time=0,compute=none,profile=%s", profile);
    pg_runtime *rt = sim_runtime(spec, NULL);
    enum { N = 1 << 20 };
    /* Both arrays get their GPU buffers (zero-filled there) before the first kernel, so the
     * chain is the kernels alone. */
    pg_kernel *add1 = test_kernel(rt, "add1", "out float *y, const float *x, int n");
    pg_kernel *scale = test_kernel(rt, "scale", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N);
    pg_arg a1[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    pg_arg s1[] = {pg_arg_array(y), pg_arg_float(2), pg_arg_int(N)};
    pg_arg a2[] = {pg_arg_array(x), pg_arg_array(y), pg_arg_int(N)};
    pg_arg s2[] = {pg_arg_array(x), pg_arg_float(2), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, a1, 3));
    CHECK_OK(pg_kernel_launch(scale, dim1(N / 256), dim1(256), 0, s1, 3));
    CHECK_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, a2, 3));
    CHECK_OK(pg_kernel_launch(scale, dim1(N / 256), dim1(256), 0, s2, 3));
    CHECK_OK(pg_runtime_sync(rt));
    tvertex *k[8];
    int n = kernels(rt, &dag, k, 8);
    CHECK(n == 4);
    /* add1 reads x and writes y: 2 x 4 MiB of arguments; scale: N threads. */
    double add_ns = 50000 + 0.001 * (2.0 * N * 4), scale_ns = 10000 + N;
    double want[4] = {add_ns, scale_ns, add_ns, scale_ns}, sum = 0;
    for (int i = 0; i < n; i++) {
        double d = (double)(k[i]->end_ns - k[i]->start_ns);
        if (fabs(d - want[i]) > 1)
            fprintf(stderr, "kernel %d (%s): %.0f ns, want %.0f\n", i, k[i]->name, d, want[i]);
        CHECK(fabs(d - want[i]) <= 1);
        CHECK(k[i]->device == k[0]->device);
        if (i)
            CHECK(k[i]->start_ns == k[i - 1]->end_ns); /* device-bound: back to back */
        sum += want[i];
    }
    if (n == 4)
        CHECK(fabs((double)(k[3]->end_ns - k[0]->start_ns) - sum) <= 2);
    CHECK_OK(pg_runtime_free(rt));
}

static const char *SUM3_SRC =
    "extern \"C\" __global__ void init(float *y, float v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }\n"
    "extern \"C\" __global__ void sum3(float *y, const float *a, const float *b, const float *c,\n"
    "                                   int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a[i] + b[i] + c[i]; }\n";

/* Pairs of DGX-1 GPUs without an NVLink (copies between them go over PCIe and QPI). */
static int no_nvlink(int a, int b) {
    static const char nv[8][8] = {{0, 1, 1, 1, 1, 0, 0, 0}, {1, 0, 1, 1, 0, 1, 0, 0},
                                  {1, 1, 0, 1, 0, 0, 1, 0}, {1, 1, 1, 0, 0, 0, 0, 1},
                                  {1, 0, 0, 0, 0, 1, 1, 1}, {0, 1, 0, 0, 1, 0, 1, 1},
                                  {0, 0, 1, 0, 1, 1, 0, 1}, {0, 0, 0, 1, 1, 1, 1, 0}};
    return a != b && !nv[a][b];
}

/* The device holding a freshly written array. */
static int device_of(pg_array *a) {
    pg_array_desc d;
    CHECK_OK(pg_array_describe(a, &d));
    for (int i = 0; i < 8; i++)
        if (d.valid >> (i + 1) & 1)
            return i;
    return -1;
}

/* Five sets of eight arrays made by kernels on GPUs r..r+7 (data-blind placement rotates), then
 * for each GPU i one kernel reading an array on i, one on j and one on k, where i-j and i-k are
 * NVLinked and j-k are not. minmax-transfer-time runs it on i, moving data over NVLink only;
 * round-robin runs it where its rotation is, here j = i + 4 (the calls are issued in that
 * order), so the array on k crosses PCIe. Each array is read once, so no copy made earlier
 * changes a later choice. Bytes over the pairs without NVLink, and the virtual makespan. */
static void dgx1_workload(const char *policy, uint64_t *pcie_bytes, uint64_t *nvlink_bytes,
                          double *makespan_ns) {
    /* timing only: 48 arrays of 64 MiB would be 3 GiB of host memory with compute=cpu */
    pg_runtime *rt = sim_runtime("sim:dgx1-v100,host_time=0,compute=none", policy);
    enum { N = 16 << 20 }; /* 64 MiB each */
    pg_kernel *init = NULL, *sum3 = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SUM3_SRC, "init", "out float *y, float v, int n", NULL, &init));
    REQUIRE_OK(pg_kernel_new(rt, SUM3_SRC, "sum3", NULL, NULL, &sum3));
    enum { SETS = 5 }; /* i's, j's, and up to three for k (0 and 4 are k of three calls) */
    pg_array *on[SETS][8] = {{NULL}}, *y[8];
    int first = -1;
    for (int set = 0; set < SETS; set++) {
        for (int n = 0; n < 8; n++) {
            pg_array *a = test_array(rt, N);
            pg_arg args[] = {pg_arg_array(a), pg_arg_float((float)n), pg_arg_int(N)};
            CHECK_OK(pg_kernel_launch(init, dim1(N / 256), dim1(256), 0, args, 3));
            int d = device_of(a);
            REQUIRE_OK(d >= 0 && !on[set][d] ? PG_OK : PG_ERROR_INTERNAL);
            on[set][d] = a;
            if (first < 0)
                first = d;
        }
    }
    /* Nothing unfinished: the policy alone places each call, over all devices. */
    CHECK_OK(pg_runtime_sync(rt));
    static const int jk[8][2] = {{4, 1}, {5, 0}, {6, 0}, {7, 0}, {0, 5}, {1, 4}, {2, 4}, {3, 4}};
    int k_uses[8] = {0};
    for (int p = 0; p < 8; p++) {
        int i = (first + p + 4) % 8, j = jk[i][0], k = jk[i][1]; /* round-robin's next: i + 4 */
        CHECK(j == (i + 4) % 8 && !no_nvlink(i, j) && !no_nvlink(i, k) && no_nvlink(j, k));
        y[i] = test_array(rt, N);
        pg_arg args[] = {pg_arg_array(y[i]), pg_arg_array(on[0][i]), pg_arg_array(on[1][j]),
                         pg_arg_array(on[2 + k_uses[k]++][k]), pg_arg_int(N)};
        CHECK_OK(pg_kernel_launch(sum3, dim1(N / 256), dim1(256), 0, args, 5));
    }
    CHECK_OK(pg_runtime_sync(rt));
    pg_stats st;
    CHECK_OK(pg_runtime_stats(rt, &st));
    *pcie_bytes = *nvlink_bytes = 0;
    for (int s = 0; s < 8; s++)
        for (int d = 0; d < 8; d++)
            if (s != d)
                *(no_nvlink(s, d) ? pcie_bytes : nvlink_bytes) += st.link_bytes[s + 1][d + 1];
    /* From the first copy of the second phase to the end. */
    tdag_load(rt, &dag);
    long long start = -1, last = 0;
    for (int i = 0; i < dag.nv; i++) {
        if (!strcmp(dag.v[i].kind, "copy") && (start < 0 || dag.v[i].start_ns < start))
            start = dag.v[i].start_ns;
        if (dag.v[i].end_ns > last)
            last = dag.v[i].end_ns;
    }
    *makespan_ns = (double)(last - start);
    CHECK_OK(pg_runtime_free(rt));
}

static void test_policies(void) {
    uint64_t rr_pcie, rr_nv, mm_pcie, mm_nv;
    double rr_t, mm_t;
    dgx1_workload("round-robin", &rr_pcie, &rr_nv, &rr_t);
    dgx1_workload("minmax-transfer-time", &mm_pcie, &mm_nv, &mm_t);
    printf("dgx1-v100: round-robin %.2f MB over PCIe pairs, %.2f MB over NVLink, %.3f ms; "
           "minmax-transfer-time %.2f MB, %.2f MB, %.3f ms\n",
           rr_pcie / 1e6, rr_nv / 1e6, rr_t / 1e6, mm_pcie / 1e6, mm_nv / 1e6, mm_t / 1e6);
    CHECK(rr_pcie == 8ull * (64 << 20)); /* each call's array on k crossed PCIe */
    CHECK(mm_pcie == 0 && mm_nv > 0);
    CHECK(mm_t < rr_t);
}

/* One program, with host time frozen: independent launches (placed by how busy devices look),
 * chains, host reads in the middle; `pause_us` of real time before each launch. Its kernels and
 * copies in id order. */
static int timeline(const char *trace, int pause_us, tvertex *out, int cap) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "sim:dgx1-v100,host_time=0";
    o.trace = trace;
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    enum { N = 1 << 20 };
    pg_kernel *add1 = test_kernel(rt, "add1", NULL), *sum2 = test_kernel(rt, "sum2", NULL);
    pg_kernel *fill = test_kernel(rt, "fill", NULL);
    pg_array *v[6], *w[16];
    static float ones[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1;
    for (int i = 0; i < 6; i++) {
        v[i] = test_array(rt, N);
        CHECK_OK(pg_array_write(v[i], 0, N, ones));
    }
    for (int i = 0; i < 16; i++)
        w[i] = test_array(rt, N / 4);
    struct timespec pause = {0, pause_us * 1000L};
    for (int r = 0; r < 3; r++) {
        for (int i = 0; i < 16; i++) { /* two rounds over the eight GPUs */
            pg_arg a[] = {pg_arg_array(w[i]), pg_arg_float((float)r), pg_arg_int(N / 4)};
            nanosleep(&pause, NULL);
            CHECK_OK(pg_kernel_launch(fill, dim1(N / 1024), dim1(256), 0, a, 3));
        }
        for (int i = 0; i < 5; i++) {
            pg_arg a[] = {pg_arg_array(v[i + 1]), pg_arg_array(v[i]), pg_arg_int(N)};
            nanosleep(&pause, NULL);
            CHECK_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, a, 3));
        }
        pg_arg s[] = {pg_arg_array(v[0]), pg_arg_array(v[5]), pg_arg_array(v[2]), pg_arg_int(N)};
        CHECK_OK(pg_kernel_launch(sum2, dim1(N / 256), dim1(256), 0, s, 4));
        float x;
        CHECK_OK(pg_array_read(w[r], 0, 1, &x)); /* waits for one writer: a partial wait */
    }
    CHECK_OK(pg_runtime_sync(rt));
    tdag_load(rt, &dag);
    int n = 0;
    for (int i = 0; i < dag.nv && n < cap; i++)
        if (!strcmp(dag.v[i].kind, "kernel") || !strcmp(dag.v[i].kind, "copy"))
            out[n++] = dag.v[i];
    CHECK_OK(pg_runtime_free(rt));
    return n;
}

static tvertex run1[512], run2[512];

static void test_determinism(void) {
    char trace[400];
    snprintf(trace, sizeof trace, "%s/trace.json", tmpdir);
    /* The second run's host is slow (real time frozen out of the timeline): the core's polls
     * on real-time heuristics differ, the timeline must not. */
    int n1 = timeline(trace, 0, run1, 512), n2 = timeline(NULL, 300, run2, 512);
    CHECK(n1 == n2 && n1 > 40);
    int same = n1 == n2;
    for (int i = 0; same && i < n1; i++)
        same = run1[i].id == run2[i].id && !strcmp(run1[i].name, run2[i].name) &&
               run1[i].device == run2[i].device && run1[i].stream == run2[i].stream &&
               run1[i].start_ns == run2[i].start_ns && run1[i].end_ns == run2[i].end_ns;
    CHECK(same);
    /* The trace's times are the virtual ones: a copy's start in microseconds. */
    FILE *f = fopen(trace, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    fclose(f);
    char ts[64];
    snprintf(ts, sizeof ts, "\"ts\":%.3f", run1[n1 - 1].start_ns / 1e3);
    CHECK(strstr(text, ts) != NULL);
}

/* compute=cpu: the kernels also run (on the CPU), so values are right; times stay virtual. */
static void test_compute(void) {
    pg_runtime *rt = sim_runtime("sim:pcie-4gpu,host_time=0,compute=cpu", "round-robin");
    enum { N = 5000 };
    pg_kernel *add1 = test_kernel(rt, "add1", NULL), *sum2 = test_kernel(rt, "sum2", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N), *z = test_array(rt, N);
    static float in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = (float)i;
    CHECK_OK(pg_array_write(x, 0, N, in));
    pg_arg a[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)}; /* y = x + 1 */
    CHECK_OK(pg_kernel_launch(add1, dim1((N + 255) / 256), dim1(256), 0, a, 3));
    pg_arg b[] = {pg_arg_array(z), pg_arg_array(x), pg_arg_int(N)}; /* z = x + 1, elsewhere */
    CHECK_OK(pg_kernel_launch(add1, dim1((N + 255) / 256), dim1(256), 0, b, 3));
    pg_arg c[] = {pg_arg_array(x), pg_arg_array(y), pg_arg_array(z), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(sum2, dim1((N + 255) / 256), dim1(256), 0, c, 4)); /* x = y + z */
    CHECK_OK(pg_array_read(x, 0, N, out));
    int good = 1;
    for (int i = 0; i < N; i++)
        good &= out[i] == 2.0f * i + 2.0f;
    CHECK(good);
    tvertex *k[4];
    CHECK(kernels(rt, &dag, k, 4) == 3);
    pg_stats st;
    CHECK_OK(pg_runtime_stats(rt, &st));
    /* Round-robin spread them: a peer copy made (for real) brought one input to the other. */
    CHECK(k[0]->device != k[1]->device && st.bytes_moved > 2 * N * 4);
    CHECK_OK(pg_runtime_free(rt));

    /* By default the values are computed too: a newcomer's sim:MACHINE reads what the kernels
     * made (it used to read zeros). */
    rt = sim_runtime("sim:pcie-4gpu,host_time=0", NULL);
    add1 = test_kernel(rt, "add1", NULL);
    x = test_array(rt, N);
    y = test_array(rt, N);
    CHECK_OK(pg_array_write(x, 0, N, in));
    pg_arg d[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(add1, dim1((N + 255) / 256), dim1(256), 0, d, 3));
    float v = -1;
    CHECK_OK(pg_array_read(y, 10, 1, &v));
    CHECK(v == 11.0f);
    CHECK_OK(pg_runtime_free(rt));

    /* compute=none (timing only): a read of what devices made is refused, naming the option,
     * and the runtime goes on; what the host wrote reads back; a whole overwrite from the host
     * makes the array readable again. */
    rt = sim_runtime("sim:pcie-4gpu,host_time=0,compute=none", NULL);
    add1 = test_kernel(rt, "add1", NULL);
    x = test_array(rt, N);
    y = test_array(rt, N);
    CHECK_OK(pg_array_write(x, 0, N, in));
    pg_arg e[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(add1, dim1((N + 255) / 256), dim1(256), 0, e, 3));
    v = -1;
    CHECK_MSG(pg_array_read(y, 10, 1, &v), PG_ERROR_UNSUPPORTED, "compute=none");
    CHECK(strstr(pg_last_error(), "compute=cpu") != NULL);
    CHECK(v == -1.0f);
    void *p = NULL;
    CHECK_MSG(pg_array_map(y, PG_ACCESS_IN, &p), PG_ERROR_UNSUPPORTED, "compute=none");
    CHECK_MSG(pg_array_map(y, PG_ACCESS_INOUT, &p), PG_ERROR_UNSUPPORTED, "compute=none");
    CHECK_OK(pg_array_read(x, 10, 1, &v)); /* the host's own value */
    CHECK(v == 10.0f);
    pg_array *yv = NULL; /* a view's rows: cut from what devices made, refused alike */
    REQUIRE_OK(pg_array_slice(y, 8, 16, &yv));
    CHECK_MSG(pg_array_read(yv, 0, 1, &v), PG_ERROR_UNSUPPORTED, "compute=none");
    CHECK_MSG(pg_array_read(y, 20, 1, &v), PG_ERROR_UNSUPPORTED, "compute=none");
    CHECK_OK(pg_array_free(yv));
    CHECK_OK(pg_array_write(y, 0, 1, in)); /* a partial write: allowed, the rest still not */
    CHECK_MSG(pg_array_read(y, 0, 1, &v), PG_ERROR_UNSUPPORTED, "compute=none");
    CHECK_OK(pg_array_write(y, 0, N, in)); /* all of it: the host's value now */
    CHECK_OK(pg_array_read(y, 10, 1, &v));
    CHECK(v == 10.0f);
    CHECK_OK(pg_array_map(y, PG_ACCESS_OUT, &p));
    CHECK_OK(pg_array_unmap(y));
    CHECK_OK(pg_runtime_sync(rt));
    CHECK_OK(pg_runtime_free(rt));
}

/* A recording replayed (as a plan's graph once captured), memory pressure
 * (device_memory_limit: evictions and write-backs over the simulated links), and threads
 * launching at once with the host's real time counting. */
static void test_graph_and_pressure(void) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "sim:pcie-4gpu,host_time=0,compute=none"; /* evictions of values not computed */
    REQUIRE_OK(pg_options_set(&o, "device_memory_limit", "9M"));
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    enum { N = 1 << 20 }; /* 4 MiB: two fit a GPU, three do not */
    pg_kernel *fill = test_kernel(rt, "fill", NULL), *add1 = test_kernel(rt, "add1", NULL);
    pg_array *a[4];
    for (int i = 0; i < 4; i++)
        a[i] = test_array(rt, N);
    pg_arg f[] = {pg_arg_array(a[0]), pg_arg_float(1), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(fill, dim1(N / 256), dim1(256), 0, f, 3));
    for (int i = 1; i < 4; i++) {
        pg_arg x[] = {pg_arg_array(a[i]), pg_arg_array(a[i - 1]), pg_arg_int(N)};
        CHECK_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, x, 3));
    }
    pg_graph *g = NULL;
    REQUIRE_OK(pg_graph_begin(rt));
    pg_arg x[] = {pg_arg_array(a[1]), pg_arg_array(a[0]), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, x, 3));
    pg_arg y[] = {pg_arg_array(a[0]), pg_arg_array(a[1]), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, y, 3));
    REQUIRE_OK(pg_graph_end(rt, &g));
    for (int r = 0; r < 3; r++)
        CHECK_OK(pg_graph_launch(g));
    CHECK_OK(pg_runtime_sync(rt));
    pg_stats st;
    CHECK_OK(pg_runtime_stats(rt, &st));
    CHECK(st.kernels == 4 + 3 * 2 || st.kernels == 4 + 1 + 2 * 2); /* eager, or plan replays */
    CHECK(st.evictions > 0);
    CHECK_OK(pg_graph_free(g));
    CHECK_OK(pg_runtime_free(rt));
}

/* A plan's replay is one graph launch on simulated GPUs, as on CUDA: the host pays graph_us plus
 * graph_node_ns per node once, not launch_us per kernel (8 x 2.9 us); with compute=cpu the
 * replayed kernels compute the right values. */
static void test_replay_graph(void) {
    pg_runtime *rt = sim_runtime("sim:h200x2-nv18,host_time=0,compute=cpu", NULL);
    enum { N = 4096, K = 8 };
    pg_kernel *add1 = test_kernel(rt, "add1", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N);
    pg_graph *g = NULL;
    REQUIRE_OK(pg_graph_begin(rt));
    for (int i = 0; i < K; i++) { /* y = x + 1, x = y + 1, ...: x grows by K a replay */
        pg_arg a[] = {pg_arg_array(i % 2 ? x : y), pg_arg_array(i % 2 ? y : x), pg_arg_int(N)};
        CHECK_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, a, 3));
    }
    REQUIRE_OK(pg_graph_end(rt, &g));
    for (int r = 0; r < 3; r++) /* the first replays capture the plan */
        CHECK_OK(pg_graph_launch(g));
    CHECK_OK(pg_runtime_sync(rt));
    uint64_t t0 = 0, t1 = 0;
    CHECK_OK(pg_runtime_clock(rt, &t0));
    for (int r = 0; r < 5; r++)
        CHECK_OK(pg_graph_launch(g));
    CHECK_OK(pg_runtime_clock(rt, &t1));
    double per = (double)(t1 - t0) / 5;
    if (!(per >= 2500 && per < 2600))
        fprintf(stderr, "replay: %.0f ns of host time each\n", per);
    CHECK(per >= 2500 && per < 2600); /* one graph launch of K nodes (and any copies) */
    float v = -1;
    CHECK_OK(pg_array_read(x, 7, 1, &v));
    CHECK(v == 8.0f * K);
    CHECK_OK(pg_graph_free(g));
    CHECK_OK(pg_runtime_free(rt));
}

typedef struct worker {
    pg_runtime *rt;
    pg_kernel *add1;
    float got;
} worker;

static void *work(void *p) {
    worker *w = p;
    enum { N = 4096 };
    pg_array *x = test_array(w->rt, N), *y = test_array(w->rt, N);
    for (int i = 0; i < 40; i++) {
        pg_arg a[] = {pg_arg_array(i % 2 ? x : y), pg_arg_array(i % 2 ? y : x), pg_arg_int(N)};
        CHECK_OK(pg_kernel_launch(w->add1, dim1(N / 256), dim1(256), 0, a, 3));
    }
    CHECK_OK(pg_array_read(x, 5, 1, &w->got));
    CHECK_OK(pg_array_free(x));
    CHECK_OK(pg_array_free(y));
    return NULL;
}

static void test_threads(void) {
    pg_runtime *rt = sim_runtime("sim:h200x4-nv18,compute=cpu", NULL);
    pg_kernel *add1 = test_kernel(rt, "add1", NULL);
    worker w[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){rt, add1, -1};
        REQUIRE_OK(pthread_create(&t[i], NULL, work, &w[i]) ? PG_ERROR_INTERNAL : PG_OK);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(w[i].got == 40.0f); /* x = 40 additions of 1 to zeros, computed on the CPU */
    }
    CHECK_OK(pg_runtime_free(rt));
}

/* Values that overflow or stall virtual time are refused when the machine is read, naming the
 * field and the line: before, launch_us=1e308 made the first launch never return, and
 * memory_gbps=1e-300 or a link latency of 1e300 a kernel that never ended. An alarm bounds the
 * test should one open and hang. */
static void test_topology_ranges(void) {
    static const struct {
        const char *host, *gpu, *link, *needle;
    } cases[] = {
        {"host launch_us=1e308\n", "", "10 1", "big.topo:1: launch_us=1e308 is out of range"},
        {"host memory_gbps=1e-300\n", "", "10 1", ":1: memory_gbps=1e-300 is out of range"},
        {"host copy_us=1e300\n", "", "10 1", ":1: copy_us=1e300 is out of range"},
        {"host graph_node_ns=1e300\n", "", "10 1", ":1: graph_node_ns=1e300 is out of range"},
        {"host dma_gbps=1e-300\n", "", "10 1", ":1: dma_gbps=1e-300 is out of range"},
        {"", " kernel_us=1e300", "10 1", ":2: kernel_us=1e300 is out of range"},
        {"", " memory_gbps=1e-300", "10 1", ":2: memory_gbps=1e-300 is out of range"},
        {"", " sms=1e300", "10 1", ":2: sms=1e300 is not a whole number from 1 to"},
        {"", "", "10 1e300", ":4: latency=1e300 is out of range"},
        {"", "", "1e-300 1", ":4: bandwidth=1e-300 is out of range"},
        {"", "", "10 1 duplex=1e-300", ":4: duplex=1e-300 is out of range"},
    };
    alarm(120);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[400], text[600], spec[500];
        snprintf(path, sizeof path, "%s/big.topo", tmpdir);
        /* line 1: host (or blank); 2: the gpu type; 3: gpus; 4: the link */
        snprintf(text, sizeof text,
                 "%s\ngpu_type g name=G memory=1G cc=8.0 sms=10 memory_gbps=100%s\ngpus 1 g\n"
                 "link gpu0 host %s\n",
                 cases[i].host[0] ? cases[i].host : "# host defaults", cases[i].gpu, cases[i].link);
        /* "%s\n" after a host line that ends in \n would shift the lines: drop one */
        char *nn = strstr(text, "\n\n");
        if (nn)
            memmove(nn, nn + 1, strlen(nn + 1) + 1);
        write_file(path, text);
        snprintf(spec, sizeof spec, "sim:%s,host_time=0", path);
        pg_options o;
        pg_options_init(&o);
        o.devices = spec;
        pg_runtime *rt = NULL;
        pg_status st = pg_runtime_new(&o, &rt);
        CHECK(st == PG_ERROR_ARGUMENT);
        if (!strstr(pg_last_error(), cases[i].needle)) {
            fprintf(stderr, "topology %zu: message '%s' lacks '%s'\n", i, pg_last_error(),
                    cases[i].needle);
            pg_check_failures++;
        }
        if (st == PG_OK) { /* what used to hang: a launch and a sync */
            pg_kernel *fill = test_kernel(rt, "fill", NULL);
            pg_array *a = test_array(rt, 1024);
            pg_arg f[] = {pg_arg_array(a), pg_arg_float(1), pg_arg_int(1024)};
            CHECK_OK(pg_kernel_launch(fill, dim1(4), dim1(256), 0, f, 3));
            CHECK_OK(pg_runtime_sync(rt));
            CHECK_OK(pg_runtime_free(rt));
        }
    }
    /* The profile's durations and the host's time scale likewise. */
    char profile[400], spec[600];
    snprintf(profile, sizeof profile, "%s/big.csv", tmpdir);
    write_file(profile, "model,fill,NVIDIA H200,bytes,1e300,0\n");
    snprintf(spec, sizeof spec, "sim:h200x1,host_time=0,profile=%s", profile);
    pg_options o;
    pg_options_init(&o);
    o.devices = spec;
    pg_runtime *rt = NULL;
    CHECK_MSG(pg_runtime_new(&o, &rt), PG_ERROR_ARGUMENT, "a_ns '1e300'");
    o.devices = "sim:h200x1,host_time=1e300";
    CHECK_MSG(pg_runtime_new(&o, &rt), PG_ERROR_ARGUMENT, "host_time '1e300' is not a number");
    alarm(0);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "%s/pg-sim-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_topology_ranges();
    test_presets();
    test_chain();
    test_policies();
    test_determinism();
    test_compute();
    test_graph_and_pressure();
    test_replay_graph();
    test_threads();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    CHECK_DONE();
}

/* cpu_kernels.c: kernels on CPU devices against plain C with the same number of threads.
 * saxpy over 2^24 floats (the plain loop over threads) against a C loop split over the device's
 * threads; the shared-memory tree reduction of tests/kernels/reduce_tree.cu (blocks of fibers
 * meeting at barriers) against a C reduction; and the cost of one thread's barrier and warp
 * shuffle with the hand-made context switch and with ucontext.
 * Usage: cpu_kernels [devices] [repetitions]   (defaults: host:1, 11) */
#include "bench_stats.h"
#include "polygpu.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N (1 << 24)

static const char *SAXPY = "extern \"C\" __global__ void saxpy(float *y, const float *x, float a, "
                           "int n) {\n"
                           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "    if (i < n) y[i] = a * x[i] + y[i];\n"
                           "}\n";

/* The same with a barrier nobody reaches: the compiler must run it as fibers. */
static const char *SAXPY_FIBERS = "extern \"C\" __global__ void saxpy(float *y, const float *x, "
                                  "float a, int n) {\n"
                                  "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                  "    if (i < n) y[i] = a * x[i] + y[i];\n"
                                  "    if (n < 0) __syncthreads();\n"
                                  "}\n";

/* tests/kernels/reduce_tree.cu */
static const char *REDUCE =
    "template <typename T>\n"
    "__global__ void reduce_tree(const T *__restrict__ x, T *partial, int n) {\n"
    "    extern __shared__ __align__(sizeof(T)) unsigned char smem[];\n"
    "    T *s = reinterpret_cast<T *>(smem);\n"
    "    unsigned int tid = threadIdx.x;\n"
    "    T v = 0;\n"
    "    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x)\n"
    "        v += x[i];\n"
    "    s[tid] = v;\n"
    "    __syncthreads();\n"
    "    for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) {\n"
    "        if (tid < k)\n"
    "            s[tid] += s[tid + k];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    if (tid == 0)\n"
    "        partial[blockIdx.x] = s[0];\n"
    "}\n";

static const char *SWITCHES = "extern \"C\" __global__ void barriers(int *out, int k) {\n"
                              "    for (int i = 0; i < k; i++) __syncthreads();\n"
                              "    out[threadIdx.x] = 1;\n"
                              "}\n"
                              "extern \"C\" __global__ void shuffles(int *out, int k) {\n"
                              "    int v = threadIdx.x;\n"
                              "    for (int i = 0; i < k; i++) v += __shfl_xor_sync(~0u, v, 1);\n"
                              "    out[threadIdx.x] = v;\n"
                              "}\n";

static void die(const char *what) {
    fprintf(stderr, "%s: %s\n%s\n", what, pg_last_error(),
            pg_last_error_log() ? pg_last_error_log() : "");
    exit(1);
}

/* ------------------------------------------------------------------ plain C, T threads */

typedef struct pool {
    int threads, stop, what;
    pthread_barrier_t start, done;
    pthread_t *t;
    float *x, *y;
    double *partial;
} pool;

typedef struct worker {
    pool *p;
    int id;
} worker;

static void slice(const pool *p, int id, size_t *b, size_t *e) {
    *b = (size_t)N * (size_t)id / (size_t)p->threads;
    *e = (size_t)N * (size_t)(id + 1) / (size_t)p->threads;
}

static void *work(void *arg) {
    worker *w = arg;
    pool *p = w->p;
    for (;;) {
        pthread_barrier_wait(&p->start);
        if (p->stop)
            return NULL;
        size_t b, e;
        slice(p, w->id, &b, &e);
        if (p->what == 0) {
            for (size_t i = b; i < e; i++)
                p->y[i] = 2.0f * p->x[i] + p->y[i];
        } else {
            float s = 0;
            for (size_t i = b; i < e; i++)
                s += p->x[i];
            p->partial[w->id] = s;
        }
        pthread_barrier_wait(&p->done);
    }
}

static double c_run(pool *p, int what) {
    double t0 = bench_now();
    p->what = what;
    pthread_barrier_wait(&p->start);
    pthread_barrier_wait(&p->done);
    return bench_now() - t0;
}

/* ------------------------------------------------------------------ polygpu */

static double kernel_run(pg_runtime *rt, pg_kernel *k, pg_dim3 g, pg_dim3 b, size_t shared,
                         const pg_arg *args, int nargs) {
    double t0 = bench_now();
    if (pg_kernel_launch(k, g, b, shared, args, nargs) || pg_runtime_sync(rt))
        die("launch");
    return bench_now() - t0;
}

static pg_kernel *kernel(pg_runtime *rt, const char *src, const char *name, const char *options) {
    pg_kernel *k;
    if (pg_kernel_new(rt, src, name, NULL, options, &k))
        die(name);
    return k;
}

/* ns per thread and collective on one OS thread, for one build of SWITCHES. */
static void switch_cost(const char *options, const char *label) {
    setenv("PG_HOST_THREADS", "1", 1);
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:1";
    pg_runtime *rt;
    if (pg_runtime_new(&o, &rt))
        die("runtime");
    unsetenv("PG_HOST_THREADS");
    int64_t n = 256;
    pg_array *out;
    if (pg_array_new(rt, PG_INT32, 1, &n, &out))
        die("array");
    const char *names[] = {"barriers", "shuffles"};
    for (int i = 0; i < 2; i++) {
        pg_kernel *k = kernel(rt, SWITCHES, names[i], options);
        enum { K = 2000, BLOCKS = 8 };
        pg_arg args[] = {pg_arg_array(out), pg_arg_int(K)};
        pg_dim3 g = {BLOCKS, 1, 1}, b = {256, 1, 1};
        kernel_run(rt, k, g, b, 0, args, 2);
        double t[5];
        for (int r = 0; r < 5; r++)
            t[r] = kernel_run(rt, k, g, b, 0, args, 2);
        printf("  %-9s %-24s %7.1f ns per thread and %s\n", label, names[i],
               bench_median(t, 5) * 1e9 / ((double)K * BLOCKS * 256),
               i ? "__shfl_xor_sync" : "__syncthreads");
        pg_kernel_free(k);
    }
    pg_array_free(out);
    pg_runtime_free(rt);
}

int main(int argc, char **argv) {
    const char *devices = argc > 1 ? argv[1] : "host:1";
    int reps = argc > 2 ? atoi(argv[2]) : 11;
    if (reps < 1)
        reps = 1;
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    pg_runtime *rt;
    if (pg_runtime_new(&o, &rt))
        die("runtime");
    pg_device_info info;
    int ndev;
    if (pg_runtime_devices(rt, &info, 1, &ndev))
        die("devices");
    int threads = info.kind == PG_DEVICE_CPU ? info.multiprocessors : 1;
    printf("devices=%s: %d device(s), %d thread(s) on the first; n = 2^24 floats; median of %d\n",
           devices, ndev, threads, reps);

    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % 1000) * 1e-3f;
        y[i] = 1.0f;
    }
    int64_t len = N, nparts = 65536;
    pg_array *ax, *ay, *ap;
    if (pg_array_new(rt, PG_FLOAT32, 1, &len, &ax) || pg_array_new(rt, PG_FLOAT32, 1, &len, &ay) ||
        pg_array_new(rt, PG_FLOAT32, 1, &nparts, &ap) || pg_array_write(ax, 0, N, x) ||
        pg_array_write(ay, 0, N, y))
        die("arrays");

    /* Plain C with the device's thread count. */
    pool p = {.threads = threads, .x = x, .y = y};
    p.t = calloc((size_t)threads, sizeof *p.t);
    p.partial = calloc((size_t)threads, sizeof *p.partial);
    worker *ws = calloc((size_t)threads, sizeof *ws);
    pthread_barrier_init(&p.start, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&p.done, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++) {
        ws[i] = (worker){&p, i};
        pthread_create(&p.t[i], NULL, work, &ws[i]);
    }
    double *t = malloc(sizeof(double) * (size_t)reps);

    /* saxpy */
    pg_kernel *ks = kernel(rt, SAXPY, "saxpy", NULL);
    pg_kernel *kf = kernel(rt, SAXPY_FIBERS, "saxpy", NULL);
    pg_arg sa[] = {pg_arg_array(ay), pg_arg_array(ax), pg_arg_float(2.0f), pg_arg_int(N)};
    pg_dim3 g = {N / 256, 1, 1}, b = {256, 1, 1};
    kernel_run(rt, ks, g, b, 0, sa, 4); /* warm-up: copies, module load, thread memory */
    for (int r = 0; r < reps; r++)
        t[r] = kernel_run(rt, ks, g, b, 0, sa, 4);
    double saxpy = bench_median(t, reps);
    c_run(&p, 0);
    for (int r = 0; r < reps; r++)
        t[r] = c_run(&p, 0);
    double saxpy_c = bench_median(t, reps);
    kernel_run(rt, kf, g, b, 0, sa, 4);
    for (int r = 0; r < reps && r < 3; r++)
        t[r] = kernel_run(rt, kf, g, b, 0, sa, 4);
    double saxpy_f = bench_median(t, reps < 3 ? reps : 3);
    printf("saxpy      polygpu %8.2f ms   plain C (%d threads) %8.2f ms   ratio %.2f\n",
           saxpy * 1e3, threads, saxpy_c * 1e3, saxpy / saxpy_c);
    printf("           the same kernel forced onto fibers (an unreached __syncthreads): %.2f ms "
           "(%.1fx the plain loop)\n",
           saxpy_f * 1e3, saxpy_f / saxpy);

    /* reduction */
    pg_kernel *kr = kernel(rt, REDUCE, "reduce_tree<float>", NULL);
    pg_arg ra[] = {pg_arg_array(ax), pg_arg_array(ap), pg_arg_int(N)};
    /* 1024 blocks: a grid-stride of 2^20 bytes, so each thread's loads share a few cache sets;
     * 1023 blocks shows what that aliasing costs; 65536: one element per thread. */
    const uint32_t grids[] = {1024, 1023, 65536};
    double sum_c = 0;
    c_run(&p, 1);
    for (int r = 0; r < reps; r++)
        t[r] = c_run(&p, 1);
    double reduce_c = bench_median(t, reps);
    for (int i = 0; i < threads; i++)
        sum_c += p.partial[i];
    for (int gi = 0; gi < 3; gi++) {
        pg_dim3 rg = {grids[gi], 1, 1};
        kernel_run(rt, kr, rg, b, 256 * sizeof(float), ra, 3);
        for (int r = 0; r < reps; r++)
            t[r] = kernel_run(rt, kr, rg, b, 256 * sizeof(float), ra, 3);
        double reduce = bench_median(t, reps);
        if (grids[gi] <= 1024) {
            float parts[1024];
            double sum = 0;
            if (pg_array_read(ap, 0, grids[gi], parts))
                die("read");
            for (uint32_t i = 0; i < grids[gi]; i++)
                sum += parts[i];
            printf("reduction  polygpu %8.2f ms   plain C (%d threads) %8.2f ms   ratio %.2f   "
                   "(%u blocks of 256, %d elements per thread; sums %.6g and %.6g)\n",
                   reduce * 1e3, threads, reduce_c * 1e3, reduce / reduce_c, grids[gi],
                   N / (int)(grids[gi] * 256), sum, sum_c);
        } else {
            printf("           one element per thread (%u blocks of 256: 9 barriers per "
                   "element): %.2f ms, ratio %.2f\n",
                   grids[gi], reduce * 1e3, reduce / reduce_c);
        }
    }

    printf("context switch, one OS thread, 8 blocks of 256 threads, 2000 rounds:\n");
    switch_cost(NULL, "hand-made");
    switch_cost("-DPG_CPU_UCONTEXT", "ucontext");

    p.stop = 1;
    pthread_barrier_wait(&p.start);
    for (int i = 0; i < threads; i++)
        pthread_join(p.t[i], NULL);
    pthread_barrier_destroy(&p.start);
    pthread_barrier_destroy(&p.done);
    pg_kernel_free(ks);
    pg_kernel_free(kf);
    pg_kernel_free(kr);
    pg_array_free(ax);
    pg_array_free(ay);
    pg_array_free(ap);
    pg_runtime_free(rt);
    free(t);
    free(ws);
    free(p.t);
    free(p.partial);
    free(x);
    free(y);
    return 0;
}

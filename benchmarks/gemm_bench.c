/* gemm_bench.c: polygpu's tiled GEMM (pg_linalg_gemm) against cuBLASXt, plain cuBLAS on
 * device-resident operands and the roofline bound, on PARALiA's problem set scaled to one or
 * two GPUs: square M = N = K from 2k to 22k, fat-thin (M = N = S, K = S / r) and thin-fat
 * (M = N = S / r, K = S) with r = 2, 8, 32, each with A, B and C on the host ('h') or on GPU 0
 * ('d'); SGEMM and DGEMM; beta = 0. All in one process, on the same buffers:
 * - polygpu: the runtime's arrays (host copies pinned: cuMemHostAlloc), placed as the problem
 *   says before each run (a host write mapping leaves the host copy the only one; a no-op task
 *   on GPU 0 leaves GPU 0's the only one), timed from the call to pg_runtime_sync (C back home
 *   included); the best of the runs after a warm-up.
 * - cuBLASXt (libcublas by dlopen: cublasXtCreate, cublasXtDeviceSelect, cublasXtSetBlockDim,
 *   cublasXtSgemm/Dgemm) on the same placement: the arrays' pinned host buffers for 'h', this
 *   program's device buffers for 'd'; its best block size of a sweep.
 * - cuBLAS on device-resident operands (cublasSgemm/Dgemm on this program's device buffers).
 * - the bound: max(compute at cuBLAS's measured device-resident time, the bytes on the host
 *   over the host link the runtime measured (pinned), each direction).
 * - energy per run when NVML is there (libnvidia-ml.so.1 by dlopen,
 *   nvmlDeviceGetTotalEnergyConsumption, summed over the GPUs used).
 * polygpu's result is checked against cuBLAS's on sampled elements (max relative error).
 * Output: one CSV row per problem (stdout, or --out FILE). The plot and the summary against the
 * targets: gemm_plot.py.
 *
 * Usage: gemm_bench [--quick] [--gpus N] [--dtype s|d] [--reps R] [--out FILE] [--metric edp]
 *        gemm_bench --cpu [--out FILE]   (CPU devices host:4, small sizes: polygpu's results
 *                                         against a naive reference; no GPU baselines)
 */
#include "polygpu.h"

#include "bench_stats.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIE(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "gemm_bench: " __VA_ARGS__);                                               \
        fprintf(stderr, " (%s)\n", pg_last_error());                                               \
        exit(1);                                                                                   \
    } while (0)

/* ---- the libraries, by dlopen */

typedef int CUresult;
typedef struct {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(int *, int);
    CUresult (*primary_retain)(void **, int);
    CUresult (*ctx_set)(void *);
    CUresult (*ctx_sync)(void);
    CUresult (*mem_alloc)(uint64_t *, size_t);
    CUresult (*mem_free)(uint64_t);
    CUresult (*memcpy_dtod)(uint64_t, uint64_t, size_t);
    CUresult (*memcpy_htod)(uint64_t, const void *, size_t);
} cuda_api;

typedef struct {
    int (*create)(void **);
    int (*destroy)(void *);
    int (*sgemm)(void *, int, int, int, int, int, const float *, const float *, int, const float *,
                 int, const float *, float *, int);
    int (*dgemm)(void *, int, int, int, int, int, const double *, const double *, int,
                 const double *, int, const double *, double *, int);
    int (*xt_create)(void **);
    int (*xt_destroy)(void *);
    int (*xt_device_select)(void *, int, int *);
    int (*xt_set_block_dim)(void *, int);
    int (*xt_sgemm)(void *, int, int, size_t, size_t, size_t, const float *, const float *, size_t,
                    const float *, size_t, const float *, float *, size_t);
    int (*xt_dgemm)(void *, int, int, size_t, size_t, size_t, const double *, const double *,
                    size_t, const double *, size_t, const double *, double *, size_t);
} cublas_api;

typedef struct {
    int (*init)(void);
    int (*handle)(unsigned, void **);
    int (*energy)(void *, unsigned long long *);
    void *dev[PG_MAX_DEVICES];
} nvml_api;

static cuda_api cu;
static cublas_api cb;
static nvml_api nv;
static int have_nvml;

static void *sym(void *h, const char *name, const char *lib) {
    void *f = dlsym(h, name);
    if (!f) {
        fprintf(stderr, "gemm_bench: %s has no %s\n", lib, name);
        exit(1);
    }
    return f;
}

static void *open_first(const char *const *names, int n) {
    for (int i = 0; i < n; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (h)
            return h;
    }
    return NULL;
}

static void load_gpu_libs(int ngpu) {
    static const char *const cuda_names[] = {"libcuda.so.1", "libcuda.so"};
    static const char *const cublas_names[] = {"libcublas.so.13", "libcublas.so.12",
                                               "libcublas.so"};
    void *h = open_first(cuda_names, 2);
    if (!h) {
        fprintf(stderr, "gemm_bench: no CUDA driver (libcuda.so.1)\n");
        exit(1);
    }
    *(void **)&cu.init = sym(h, "cuInit", "libcuda");
    *(void **)&cu.device_get = sym(h, "cuDeviceGet", "libcuda");
    *(void **)&cu.primary_retain = sym(h, "cuDevicePrimaryCtxRetain", "libcuda");
    *(void **)&cu.ctx_set = sym(h, "cuCtxSetCurrent", "libcuda");
    *(void **)&cu.ctx_sync = sym(h, "cuCtxSynchronize", "libcuda");
    *(void **)&cu.mem_alloc = sym(h, "cuMemAlloc_v2", "libcuda");
    *(void **)&cu.mem_free = sym(h, "cuMemFree_v2", "libcuda");
    *(void **)&cu.memcpy_dtod = sym(h, "cuMemcpyDtoD_v2", "libcuda");
    *(void **)&cu.memcpy_htod = sym(h, "cuMemcpyHtoD_v2", "libcuda");
    const char *env = getenv("PG_CUBLAS_LIB");
    void *b = env && *env ? dlopen(env, RTLD_NOW | RTLD_GLOBAL) : open_first(cublas_names, 3);
    if (!b) {
        fprintf(stderr, "gemm_bench: no cuBLAS (libcublas.so.13/.12; PG_CUBLAS_LIB names one)\n");
        exit(1);
    }
    *(void **)&cb.create = sym(b, "cublasCreate_v2", "libcublas");
    *(void **)&cb.destroy = sym(b, "cublasDestroy_v2", "libcublas");
    *(void **)&cb.sgemm = sym(b, "cublasSgemm_v2", "libcublas");
    *(void **)&cb.dgemm = sym(b, "cublasDgemm_v2", "libcublas");
    *(void **)&cb.xt_create = sym(b, "cublasXtCreate", "libcublas");
    *(void **)&cb.xt_destroy = sym(b, "cublasXtDestroy", "libcublas");
    *(void **)&cb.xt_device_select = sym(b, "cublasXtDeviceSelect", "libcublas");
    *(void **)&cb.xt_set_block_dim = sym(b, "cublasXtSetBlockDim", "libcublas");
    *(void **)&cb.xt_sgemm = sym(b, "cublasXtSgemm", "libcublas");
    *(void **)&cb.xt_dgemm = sym(b, "cublasXtDgemm", "libcublas");
    void *n = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (n) {
        *(void **)&nv.init = dlsym(n, "nvmlInit_v2");
        *(void **)&nv.handle = dlsym(n, "nvmlDeviceGetHandleByIndex_v2");
        *(void **)&nv.energy = dlsym(n, "nvmlDeviceGetTotalEnergyConsumption");
        have_nvml = nv.init && nv.handle && nv.energy && nv.init() == 0;
        for (int d = 0; have_nvml && d < ngpu; d++)
            have_nvml = nv.handle((unsigned)d, &nv.dev[d]) == 0;
    }
    if (!have_nvml)
        fprintf(stderr, "gemm_bench: NVML not available: no energy figures\n");
    void *ctx;
    int dev;
    if (cu.init(0) || cu.device_get(&dev, 0) || cu.primary_retain(&ctx, dev) || cu.ctx_set(ctx)) {
        fprintf(stderr, "gemm_bench: no CUDA context on GPU 0\n");
        exit(1);
    }
}

/* Millijoules used so far by GPUs 0..n-1 (0 without NVML). */
static double energy_mj(int n) {
    double s = 0;
    for (int d = 0; have_nvml && d < n; d++) {
        unsigned long long mj = 0;
        if (nv.energy(nv.dev[d], &mj) == 0)
            s += (double)mj;
    }
    return s;
}

/* ---- the problems */

typedef struct problem {
    const char *shape; /* "square", "fat-thin", "thin-fat" */
    int ratio;
    int64_t m, n, k;
    char place[4]; /* A, B, C: 'h' or 'd' */
} problem;

static int add(problem *p, int n, const char *shape, int ratio, int64_t m, int64_t nn, int64_t k,
               const char *place) {
    problem *q = &p[n];
    q->shape = shape;
    q->ratio = ratio;
    q->m = m;
    q->n = nn;
    q->k = k;
    snprintf(q->place, sizeof q->place, "%s", place);
    return n + 1;
}

/* The full grid, or its representative subset (--quick), or small sizes for CPU devices. */
static int problems(problem *p, int quick, int cpu) {
    static const char *const all[] = {"hhh", "dhh", "hdh", "hhd", "ddh", "dhd", "hdd", "ddd"};
    static const char *const some[] = {"hhh", "ddd", "dhh", "hhd"};
    const char *const *pl = quick || cpu ? some : all;
    int npl = quick || cpu ? 4 : 8, n = 0;
    if (cpu) {
        for (int i = 0; i < npl; i++) {
            n = add(p, n, "square", 1, 192, 192, 192, pl[i]);
            n = add(p, n, "fat-thin", 8, 256, 256, 32, pl[i]);
            n = add(p, n, "thin-fat", 8, 32, 32, 256, pl[i]);
        }
        return n;
    }
    static const int64_t sq_full[] = {2048,  4096,  6144,  8192,  10240, 12288,
                                      14336, 16384, 18432, 20480, 22528};
    static const int64_t sq_quick[] = {4096, 8192, 16384, 22528};
    const int64_t *sq = quick ? sq_quick : sq_full;
    int nsq = quick ? 4 : 11;
    for (int i = 0; i < npl; i++)
        for (int s = 0; s < nsq; s++)
            n = add(p, n, "square", 1, sq[s], sq[s], sq[s], pl[i]);
    static const int ratios[] = {2, 8, 32};
    static const int64_t big_full[] = {8192, 16384}, big_quick[] = {16384};
    const int64_t *big = quick ? big_quick : big_full;
    int nbig = quick ? 1 : 2;
    for (int i = 0; i < (quick ? 2 : npl); i++) /* quick: hhh and ddd */
        for (int b = 0; b < nbig; b++)
            for (int r = 0; r < 3; r++) {
                int64_t s = big[b], t = big[b] / ratios[r];
                n = add(p, n, "fat-thin", ratios[r], s, s, t, pl[i]);
                n = add(p, n, "thin-fat", ratios[r], t, t, s, pl[i]);
            }
    return n;
}

/* ---- polygpu side */

static pg_runtime *rt;
static pg_kernel *touch[2];
static int target_dev;

/* Runs the no-op touch task on the benchmark's target device (else the first candidate). */
static int pick(void *state, const pg_policy_view *v) {
    (void)state;
    if (v->candidates >> target_dev & 1)
        return target_dev;
    return __builtin_ctz(v->candidates);
}

static pg_status touch_cpu(const pg_task_call *c) {
    (void)c;
    return PG_OK;
}

static void make_touch(void) {
    pg_task_impls im = {touch_cpu, touch_cpu, NULL, NULL};
    if (pg_task_new(rt, "bench_place_f32", &im, "inout float *x", &touch[0]) ||
        pg_task_new(rt, "bench_place_f64", &im, "inout double *x", &touch[1]))
        DIE("placement task");
}

/* a's current value on the host only ('h') or on GPU 0 only ('d'). */
static void place(pg_array *a, char where, int f64) {
    void *p;
    if (pg_array_map(a, PG_ACCESS_INOUT, &p) || pg_array_unmap(a))
        DIE("host mapping");
    if (where == 'h')
        return;
    target_dev = 0;
    pg_arg arg = pg_arg_array(a);
    pg_dim3 one = {1, 1, 1};
    if (pg_kernel_launch(touch[f64], one, one, 0, &arg, 1))
        DIE("placing on device 0");
    pg_array_desc d;
    if (pg_array_describe(a, &d) || d.valid != 2u)
        DIE("placement: valid 0x%x, expected GPU 0 only", d.valid);
}

static pg_array *matrix(int f64, int64_t r, int64_t c) {
    pg_array *a;
    int64_t shape[2] = {r, c};
    if (pg_array_new(rt, f64 ? PG_FLOAT64 : PG_FLOAT32, 2, shape, &a))
        DIE("array %lld x %lld", (long long)r, (long long)c);
    void *p;
    if (pg_array_map(a, PG_ACCESS_OUT, &p))
        DIE("map");
    uint64_t n = (uint64_t)(r * c);
    for (uint64_t i = 0; i < n; i++) {
        double v = (double)((i * 2654435761u) % 2001) / 1000.0 - 1.0;
        if (f64)
            ((double *)p)[i] = v;
        else
            ((float *)p)[i] = (float)v;
    }
    pg_array_unmap(a);
    return a;
}

static double now_s(void) {
    uint64_t ns = 0;
    pg_runtime_clock(rt, &ns);
    return (double)ns * 1e-9;
}

/* ---- one problem */

typedef struct result {
    double pg_s, pg_j, pg_pred, xt_s, xt_j, cb_s, cb_j, bound_s, err;
    int xt_block;
    pg_gemm_report rep;
} result;

static double bytes_of(const problem *p, int f64, char which) {
    double e = f64 ? 8 : 4;
    return which == 'a'   ? (double)p->m * (double)p->k * e
           : which == 'b' ? (double)p->k * (double)p->n * e
                          : (double)p->m * (double)p->n * e;
}

static void run_problem(const problem *p, int f64, int ngpu, int reps, int cpu,
                        pg_gemm_metric metric, double h2d, double d2h, result *r) {
    memset(r, 0, sizeof *r);
    r->xt_s = r->cb_s = r->bound_s = NAN;
    pg_array *A = matrix(f64, p->m, p->k), *B = matrix(f64, p->k, p->n),
             *C = matrix(f64, p->m, p->n);
    pg_array *arr[3] = {A, B, C};
    pg_gemm_options o;
    pg_gemm_options_init(&o);
    o.metric = metric;
    /* polygpu: a warm-up (rates measured once per dtype, libraries loaded), then the best */
    double best = 0, joules = 0;
    for (int rep = 0; rep <= reps; rep++) {
        for (int i = 0; i < 3; i++)
            place(arr[i], p->place[i], f64);
        if (pg_runtime_sync(rt))
            DIE("sync");
        double e0 = energy_mj(ngpu), t0 = now_s();
        if (pg_linalg_gemm(rt, A, B, C, &o, &r->rep))
            DIE("pg_linalg_gemm %s %lldx%lldx%lld %s", p->shape, (long long)p->m, (long long)p->n,
                (long long)p->k, p->place);
        if (pg_runtime_sync(rt))
            DIE("sync after gemm");
        double t = now_s() - t0, e = energy_mj(ngpu) - e0;
        if (rep > 0 && (best == 0 || t < best)) {
            best = t;
            joules = e * 1e-3;
        }
    }
    r->pg_s = best;
    r->pg_j = have_nvml ? joules : NAN;
    r->pg_pred = r->rep.predicted_s;
    /* polygpu's C, sampled, against a reference: a naive dot product on the host */
    void *pa, *pb, *pc;
    if (pg_array_map(A, PG_ACCESS_IN, &pa) || pg_array_map(B, PG_ACCESS_IN, &pb) ||
        pg_array_map(C, PG_ACCESS_IN, &pc))
        DIE("map for the check");
    double maxerr = 0;
    for (int s = 0; s < 64; s++) {
        int64_t i = (int64_t)((uint64_t)s * 7919u % (uint64_t)p->m),
                j = (int64_t)((uint64_t)s * 104729u % (uint64_t)p->n);
        double want = 0, scale = 0;
        for (int64_t q = 0; q < p->k; q++) {
            double x = f64 ? ((double *)pa)[i * p->k + q] : ((float *)pa)[i * p->k + q];
            double y = f64 ? ((double *)pb)[q * p->n + j] : ((float *)pb)[q * p->n + j];
            want += x * y;
            scale += fabs(x * y);
        }
        double got = f64 ? ((double *)pc)[i * p->n + j] : ((float *)pc)[i * p->n + j];
        double err = fabs(got - want) / (scale > 0 ? scale : 1);
        if (err > maxerr)
            maxerr = err;
    }
    r->err = maxerr;
    if (cpu) {
        pg_array_unmap(A);
        pg_array_unmap(B);
        pg_array_unmap(C);
        pg_array_free(A);
        pg_array_free(B);
        pg_array_free(C);
        return;
    }
    /* Device buffers for the baselines ('d' operands of cuBLASXt, and plain cuBLAS) */
    double ba = bytes_of(p, f64, 'a'), bb = bytes_of(p, f64, 'b'), bc = bytes_of(p, f64, 'c');
    uint64_t da, db, dc;
    if (cu.mem_alloc(&da, (size_t)ba) || cu.mem_alloc(&db, (size_t)bb) ||
        cu.mem_alloc(&dc, (size_t)bc))
        DIE("cuMemAlloc");
    if (cu.memcpy_htod(da, pa, (size_t)ba) || cu.memcpy_htod(db, pb, (size_t)bb))
        DIE("cuMemcpyHtoD");
    pg_array_unmap(A);
    pg_array_unmap(B);
    pg_array_unmap(C);
    /* plain cuBLAS, device-resident (row-major: C^T = B^T A^T in column-major) */
    void *h;
    if (cb.create(&h))
        DIE("cublasCreate");
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    int M = (int)p->m, N = (int)p->n, K = (int)p->k;
    double cbest = 0, cj = 0;
    for (int rep = 0; rep <= reps; rep++) {
        cu.ctx_sync();
        double e0 = energy_mj(1), t0 = bench_now();
        int st = f64 ? cb.dgemm(h, 0, 0, N, M, K, &one, (const double *)(uintptr_t)db, N,
                                (const double *)(uintptr_t)da, K, &zero, (double *)(uintptr_t)dc, N)
                     : cb.sgemm(h, 0, 0, N, M, K, &onef, (const float *)(uintptr_t)db, N,
                                (const float *)(uintptr_t)da, K, &zerof, (float *)(uintptr_t)dc, N);
        if (st || cu.ctx_sync())
            DIE("cuBLAS gemm (status %d)", st);
        double t = bench_now() - t0;
        if (rep > 0 && (cbest == 0 || t < cbest)) {
            cbest = t;
            cj = (energy_mj(1) - e0) * 1e-3;
        }
    }
    cb.destroy(h);
    r->cb_s = cbest;
    r->cb_j = have_nvml ? cj : NAN;
    /* the bound: compute at cuBLAS's rate (split over the GPUs), the host's bytes over its link */
    double in = (p->place[0] == 'h' ? ba : 0) + (p->place[1] == 'h' ? bb : 0),
           out = p->place[2] == 'h' ? bc : 0;
    r->bound_s = fmax(cbest / ngpu, fmax(in / (h2d * 1e9 * ngpu), out / (d2h * 1e9 * ngpu)));
    /* cuBLASXt, same placement: the arrays' pinned host buffers, or the device buffers */
    void *ha, *hb, *hc;
    if (pg_array_map(A, PG_ACCESS_IN, &ha) || pg_array_map(B, PG_ACCESS_IN, &hb) ||
        pg_array_map(C, PG_ACCESS_INOUT, &hc))
        DIE("map for cuBLASXt");
    const void *xa = p->place[0] == 'h' ? ha : (const void *)(uintptr_t)da;
    const void *xb = p->place[1] == 'h' ? hb : (const void *)(uintptr_t)db;
    void *xc = p->place[2] == 'h' ? hc : (void *)(uintptr_t)dc;
    void *xt;
    int ids[PG_MAX_DEVICES];
    for (int d = 0; d < ngpu; d++)
        ids[d] = d;
    if (cb.xt_create(&xt) || cb.xt_device_select(xt, ngpu, ids))
        DIE("cublasXtCreate / DeviceSelect");
    static const int blocks[] = {1024, 2048, 4096, 8192};
    double xbest = 0, xj = 0;
    for (int bi = 0; bi < 4; bi++) {
        if (blocks[bi] > 2 * p->m && blocks[bi] > 2 * p->n && bi > 0)
            continue; /* a block past the matrix is the previous one again */
        if (cb.xt_set_block_dim(xt, blocks[bi]))
            DIE("cublasXtSetBlockDim %d", blocks[bi]);
        int xreps = reps < 2 ? reps : 2;
        for (int rep = 0; rep <= xreps; rep++) {
            cu.ctx_sync();
            double e0 = energy_mj(ngpu), t0 = bench_now();
            int st = f64 ? cb.xt_dgemm(xt, 0, 0, (size_t)N, (size_t)M, (size_t)K, &one, xb,
                                       (size_t)N, xa, (size_t)K, &zero, xc, (size_t)N)
                         : cb.xt_sgemm(xt, 0, 0, (size_t)N, (size_t)M, (size_t)K, &onef, xb,
                                       (size_t)N, xa, (size_t)K, &zerof, xc, (size_t)N);
            cu.ctx_sync();
            if (st)
                DIE("cublasXt gemm (status %d)", st);
            double t = bench_now() - t0;
            if (rep > 0 && (xbest == 0 || t < xbest)) {
                xbest = t;
                xj = (energy_mj(ngpu) - e0) * 1e-3;
                r->xt_block = blocks[bi];
            }
        }
    }
    cb.xt_destroy(xt);
    pg_array_unmap(A);
    pg_array_unmap(B);
    pg_array_unmap(C);
    r->xt_s = xbest;
    r->xt_j = have_nvml ? xj : NAN;
    cu.mem_free(da);
    cu.mem_free(db);
    cu.mem_free(dc);
    pg_array_free(A);
    pg_array_free(B);
    pg_array_free(C);
}

int main(int argc, char **argv) {
    int quick = 0, cpu = 0, ngpu = 1, reps = 3;
    const char *out = NULL, *dtypes = "sd";
    pg_gemm_metric metric = PG_GEMM_PERF;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--cpu"))
            cpu = 1;
        else if (!strcmp(argv[i], "--gpus") && i + 1 < argc)
            ngpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dtype") && i + 1 < argc)
            dtypes = argv[++i];
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--metric") && i + 1 < argc)
            metric = !strcmp(argv[++i], "edp") ? PG_GEMM_EDP : PG_GEMM_PERF;
        else {
            fprintf(stderr,
                    "usage: gemm_bench [--quick] [--gpus N] [--dtype s|d|sd] [--reps R] [--out "
                    "FILE] [--metric perf|edp] | gemm_bench --cpu [--out FILE]\n");
            return 2;
        }
    }
    if (ngpu < 1 || ngpu > PG_MAX_DEVICES || reps < 1)
        DIE("--gpus 1..%d and --reps >= 1", PG_MAX_DEVICES);
    if (cpu)
        reps = 1;
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f)
        DIE("cannot write %s", out);
    if (!cpu)
        load_gpu_libs(ngpu);
    pg_device_policy pol = {NULL, pick, NULL};
    if (pg_policy_register("gemm-bench-target", &pol))
        DIE("policy");
    pg_options o;
    pg_options_init(&o);
    char devs[64] = "cuda:0";
    for (int d = 1; d < ngpu; d++)
        snprintf(devs + strlen(devs), sizeof devs - strlen(devs), ",%d", d);
    o.devices = cpu ? "host:4" : devs;
    o.policy = "gemm-bench-target";
    if (pg_runtime_new(&o, &rt))
        DIE("runtime on %s", o.devices);
    make_touch();
    int nloc;
    double bw[(PG_MAX_DEVICES + 1) * (PG_MAX_DEVICES + 1)];
    if (pg_runtime_interconnect(rt, &nloc, bw, NULL))
        DIE("interconnect");
    double h2d = bw[0 * nloc + 1], d2h = bw[1 * nloc + 0];
    pg_device_info info;
    int n = 0;
    pg_runtime_devices(rt, &info, 1, &n);
    fprintf(stderr,
            "gemm_bench: %s, %d device(s) used of %d, host link %.1f / %.1f GB/s (h2d / "
            "d2h, pinned, as the runtime measured), NVML %s\n",
            info.name, cpu ? 4 : ngpu, n, h2d, d2h, have_nvml ? "yes" : "no");
    static problem ps[512];
    int np = problems(ps, quick, cpu);
    fprintf(f, "gpus,device,dtype,shape,ratio,m,n,k,place,pg_s,pg_pred_s,pg_devices,pg_tile,"
               "pg_tiles,pg_J,xt_s,xt_block,xt_J,cublas_s,cublas_J,bound_s,h2d_gbps,d2h_gbps,"
               "max_rel_err\n");
    int bad = 0;
    for (const char *dt = dtypes; *dt; dt++) {
        int f64 = *dt == 'd';
        for (int i = 0; i < np; i++) {
            result r;
            double t0 = bench_now();
            run_problem(&ps[i], f64, cpu ? 4 : ngpu, reps, cpu, metric, h2d, d2h, &r);
            char devlist[64] = "";
            for (int d = 0; d < PG_MAX_DEVICES; d++)
                if (r.rep.devices >> d & 1)
                    snprintf(devlist + strlen(devlist), sizeof devlist - strlen(devlist), "%s%d",
                             devlist[0] ? " " : "", d);
            fprintf(f,
                    "%d,%s,%s,%s,%d,%lld,%lld,%lld,%s,%.6f,%.6f,%s,%lld,%lld,%.3f,%.6f,%d,%.3f,"
                    "%.6f,%.3f,%.6f,%.2f,%.2f,%.3g\n",
                    cpu ? 0 : ngpu, cpu ? "host:4" : info.name, f64 ? "d" : "s", ps[i].shape,
                    ps[i].ratio, (long long)ps[i].m, (long long)ps[i].n, (long long)ps[i].k,
                    ps[i].place, r.pg_s, r.pg_pred, devlist, (long long)r.rep.tile,
                    (long long)r.rep.tiles, r.pg_j, r.xt_s, r.xt_block, r.xt_j, r.cb_s, r.cb_j,
                    r.bound_s, h2d, d2h, r.err);
            fflush(f);
            double tol = f64 ? 1e-11 : 1e-4;
            if (!(r.err <= tol)) {
                fprintf(stderr, "gemm_bench: WRONG result: %s %lldx%lldx%lld %s: max rel err %g\n",
                        ps[i].shape, (long long)ps[i].m, (long long)ps[i].n, (long long)ps[i].k,
                        ps[i].place, r.err);
                bad++;
            }
            fprintf(stderr,
                    "  %s %s %lldx%lldx%lld %s: polygpu %.4f s (devices %s, tile %lld) "
                    "cuBLASXt %.4f cuBLAS %.4f bound %.4f  [%.1f s]\n",
                    f64 ? "D" : "S", ps[i].shape, (long long)ps[i].m, (long long)ps[i].n,
                    (long long)ps[i].k, ps[i].place, r.pg_s, devlist, (long long)r.rep.tile, r.xt_s,
                    r.cb_s, r.bound_s, bench_now() - t0);
        }
    }
    if (pg_runtime_free(rt))
        DIE("runtime free");
    if (out)
        fclose(f);
    return bad ? 1 : 0;
}

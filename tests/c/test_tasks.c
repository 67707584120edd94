/* test_tasks.c: library calls as tasks (pg_task_new, pg_task_builtin). The built-in gemm, axpy
 * and dot against naive references on CPU devices (OpenBLAS; on GPUs cuBLAS with
 * PG_TEST_DEVICES), ordering with kernels before and after, graphs replaying a task, a task's
 * own failure, a task whose only implementation is for GPUs refused on CPU devices, the
 * simulator refusing tasks, and a missing BLAS library named with its package. */
#include "kernels_common.h"
#include "gemm_ref.h"

#include <math.h>
#include <stdint.h>

static pg_kernel *builtin(pg_runtime *rt, const char *name) {
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_task_builtin(rt, name, &k));
    return k;
}

static pg_array *array_of(pg_runtime *rt, pg_dtype dt, int64_t n) {
    pg_array *a = NULL;
    REQUIRE_OK(pg_array_new(rt, dt, 1, &n, &a));
    return a;
}

/* Deterministic values in [-1, 1). */
static double val(uint64_t i, uint64_t seed) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    return (double)(x % 2000) / 1000.0 - 1.0;
}

static void put(pg_array *a, pg_dtype dt, const double *v, int64_t n) {
    if (dt == PG_FLOAT64) {
        REQUIRE_OK(pg_array_write(a, 0, (uint64_t)n, v));
        return;
    }
    float *f = malloc((size_t)n * sizeof *f);
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)v[i];
    REQUIRE_OK(pg_array_write(a, 0, (uint64_t)n, f));
    free(f);
}

static void get(pg_array *a, pg_dtype dt, double *v, int64_t n) {
    if (dt == PG_FLOAT64) {
        CHECK_OK(pg_array_read(a, 0, (uint64_t)n, v));
        return;
    }
    float *f = malloc((size_t)n * sizeof *f);
    CHECK_OK(pg_array_read(a, 0, (uint64_t)n, f));
    for (int64_t i = 0; i < n; i++)
        v[i] = f[i];
    free(f);
}

static int close_to(double got, double want, pg_dtype dt) {
    double tol = dt == PG_FLOAT64 ? 1e-10 : 1e-4;
    return fabs(got - want) <= tol * (1.0 + fabs(want));
}

static pg_status launch(pg_kernel *k, const pg_arg *args, int n) {
    return pg_kernel_launch(k, dim1(1), dim1(1), 0, args, n);
}

static pg_status gemm_launch(pg_kernel *g, pg_array *a, pg_array *b, pg_array *c, int m, int n,
                             int k, int ta, int tb, double alpha, double beta) {
    pg_arg args[] = {pg_arg_array(a),      pg_arg_array(b),    pg_arg_array(c), pg_arg_int(m),
                     pg_arg_int(n),        pg_arg_int(k),      pg_arg_int(ta),  pg_arg_int(tb),
                     pg_arg_double(alpha), pg_arg_double(beta)};
    return launch(g, args, 10);
}

static void gemm_shapes(pg_runtime *rt, pg_dtype dt) {
    pg_kernel *g = builtin(rt, dt == PG_FLOAT64 ? "gemm_f64" : "gemm_f32");
    static const int shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 4, 9}, {64, 33, 20}, {2, 8, 1}};
    int checked = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int t = 0; t < 4; t++) {
            int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2], ta = t & 1, tb = t >> 1;
            double alpha = 1.5, beta = s % 2 ? 0.0 : -0.5;
            double *a = malloc(sizeof(double) * (size_t)(m * k));
            double *b = malloc(sizeof(double) * (size_t)(k * n));
            double *c = malloc(sizeof(double) * (size_t)(m * n));
            double *got = malloc(sizeof(double) * (size_t)(m * n));
            for (int i = 0; i < m * k; i++)
                a[i] = val((uint64_t)i, 1 + s);
            for (int i = 0; i < k * n; i++)
                b[i] = val((uint64_t)i, 100 + s);
            for (int i = 0; i < m * n; i++)
                c[i] = val((uint64_t)i, 200 + s);
            pg_array *A = array_of(rt, dt, m * k), *B = array_of(rt, dt, k * n),
                     *C = array_of(rt, dt, m * n);
            put(A, dt, a, m * k);
            put(B, dt, b, k * n);
            put(C, dt, c, m * n);
            CHECK_OK(gemm_launch(g, A, B, C, m, n, k, ta, tb, alpha, beta));
            gemm_ref(m, n, k, ta, tb, alpha, a, b, beta, c);
            get(C, dt, got, m * n);
            int bad = 0;
            for (int i = 0; i < m * n; i++)
                bad += !close_to(got[i], c[i], dt);
            if (bad)
                fprintf(stderr, "gemm %s m=%d n=%d k=%d ta=%d tb=%d: %d wrong, [0] %g vs %g\n",
                        pg_dtype_name(dt), m, n, k, ta, tb, bad, got[0], c[0]);
            CHECK(bad == 0);
            checked++;
            pg_array_free(A);
            pg_array_free(B);
            pg_array_free(C);
            free(a);
            free(b);
            free(c);
            free(got);
        }
    CHECK(checked == 20);
    CHECK_OK(pg_kernel_free(g));
}

static void vectors(pg_runtime *rt, pg_dtype dt) {
    int f64 = dt == PG_FLOAT64;
    pg_kernel *axpy = builtin(rt, f64 ? "axpy_f64" : "axpy_f32");
    pg_kernel *dot = builtin(rt, f64 ? "dot_f64" : "dot_f32");
    static const int sizes[] = {1, 1000, 4097};
    for (size_t s = 0; s < 3; s++) {
        int n = sizes[s];
        double *x = malloc(sizeof(double) * (size_t)n), *y = malloc(sizeof(double) * (size_t)n);
        double *got = malloc(sizeof(double) * (size_t)n);
        for (int i = 0; i < n; i++) {
            x[i] = val((uint64_t)i, 7 + s);
            y[i] = val((uint64_t)i, 70 + s);
        }
        pg_array *X = array_of(rt, dt, n), *Y = array_of(rt, dt, n), *R = array_of(rt, dt, 1);
        put(X, dt, x, n);
        put(Y, dt, y, n);
        pg_arg aargs[] = {pg_arg_array(X), pg_arg_array(Y), pg_arg_int(n), pg_arg_double(-2.5)};
        CHECK_OK(launch(axpy, aargs, 4));
        pg_arg dargs[] = {pg_arg_array(X), pg_arg_array(Y), pg_arg_array(R), pg_arg_int(n)};
        CHECK_OK(launch(dot, dargs, 4)); /* reads what axpy wrote */
        double want = 0;
        for (int i = 0; i < n; i++) {
            y[i] += -2.5 * x[i];
            want += x[i] * y[i];
        }
        get(Y, dt, got, n);
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += !close_to(got[i], y[i], dt);
        CHECK(bad == 0);
        double r;
        get(R, dt, &r, 1);
        if (!(fabs(r - want) <= (f64 ? 1e-9 : 1e-3) * (1 + fabs(want))))
            fprintf(stderr, "dot %s n=%d: %g, expected %g\n", pg_dtype_name(dt), n, r, want);
        CHECK(fabs(r - want) <= (f64 ? 1e-9 : 1e-3) * (1 + fabs(want)));
        pg_array_free(X);
        pg_array_free(Y);
        pg_array_free(R);
        free(x);
        free(y);
        free(got);
    }
    CHECK_OK(pg_kernel_free(axpy));
    CHECK_OK(pg_kernel_free(dot));
}

/* A kernel writes A and B, gemm reads them and writes C, a kernel reads C: each waits for the
 * one before, across devices, every round with new values. */
static void kernels_around(pg_runtime *rt) {
    enum { M = 48, K = 40, N = 36 };
    pg_kernel *fill = test_kernel(rt, "fill", NULL);
    pg_kernel *add1 = test_kernel(rt, "add1", NULL);
    pg_kernel *g = builtin(rt, "gemm_f32");
    for (int round = 0; round < 12; round++) {
        pg_array *A = test_array(rt, M * K), *B = test_array(rt, K * N);
        pg_array *C = test_array(rt, M * N), *D = test_array(rt, M * N);
        float va = 0.5f + (float)round, vb = 0.25f * (float)(round + 1);
        pg_arg fa[] = {pg_arg_array(A), pg_arg_float(va), pg_arg_int(M * K)};
        pg_arg fb[] = {pg_arg_array(B), pg_arg_float(vb), pg_arg_int(K * N)};
        CHECK_OK(pg_kernel_launch(fill, dim1((M * K + 63) / 64), dim1(64), 0, fa, 3));
        CHECK_OK(pg_kernel_launch(fill, dim1((K * N + 63) / 64), dim1(64), 0, fb, 3));
        CHECK_OK(gemm_launch(g, A, B, C, M, N, K, 0, 0, 1.0, 0.0));
        pg_arg ad[] = {pg_arg_array(D), pg_arg_array(C), pg_arg_int(M * N)};
        CHECK_OK(pg_kernel_launch(add1, dim1((M * N + 63) / 64), dim1(64), 0, ad, 3));
        float d[M * N];
        CHECK_OK(pg_array_read(D, 0, M * N, d));
        float want = (float)K * va * vb + 1.0f;
        int bad = 0;
        for (int i = 0; i < M * N; i++)
            bad += fabsf(d[i] - want) > 1e-4f * want;
        if (bad)
            fprintf(stderr, "round %d: %d wrong, d[0] = %g, expected %g\n", round, bad, d[0], want);
        CHECK(bad == 0);
        pg_array_free(A);
        pg_array_free(B);
        pg_array_free(C);
        pg_array_free(D);
    }
    pg_kernel_free(fill);
    pg_kernel_free(add1);
    pg_kernel_free(g);
}

/* A recording with a task in it replays correctly (eagerly: a C function is no graph node). */
static void in_a_graph(pg_runtime *rt) {
    pg_kernel *scale = test_kernel(rt, "scale", NULL);
    pg_kernel *axpy = builtin(rt, "axpy_f32");
    enum { N = 256 };
    pg_array *X = test_array(rt, N), *Y = test_array(rt, N);
    float ones[N], y[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1.0f;
    REQUIRE_OK(pg_array_write(X, 0, N, ones));
    REQUIRE_OK(pg_graph_begin(rt));
    pg_arg sa[] = {pg_arg_array(X), pg_arg_float(2.0f), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(scale, dim1(4), dim1(64), 0, sa, 3));
    pg_arg aa[] = {pg_arg_array(X), pg_arg_array(Y), pg_arg_int(N), pg_arg_double(1.0)};
    CHECK_OK(launch(axpy, aa, 4));
    pg_graph *gr = NULL;
    REQUIRE_OK(pg_graph_end(rt, &gr));
    for (int r = 0; r < 4; r++)
        CHECK_OK(pg_graph_launch(gr));
    CHECK_OK(pg_array_read(Y, 0, N, y));
    /* x doubles each replay (2, 4, 8, 16); y sums them */
    for (int i = 0; i < N; i++)
        CHECK(y[i] == 30.0f);
    pg_graph_free(gr);
    pg_array_free(X);
    pg_array_free(Y);
    pg_kernel_free(scale);
    pg_kernel_free(axpy);
}

/* ---- tasks of one's own */

static int ctx_freed;
static void count_free(void *ctx) {
    ctx_freed += *(int *)ctx;
}

/* y[i] = x[i] * factor + the device it ran on's kind (checks the call's fields too) */
static pg_status my_scale(const pg_task_call *c) {
    if (c->nargs != 3 || c->kind != PG_DEVICE_CPU || c->stream != 0 || !c->ctx ||
        strcmp(c->name, "my_scale") || c->counts[2] != 0 || !c->params[0].is_array)
        return pg_task_fail(PG_ERROR_INTERNAL, "my_scale: unexpected call fields");
    const float *x = (const float *)(uintptr_t)c->args[0];
    float *y = (float *)(uintptr_t)c->args[1];
    double f;
    memcpy(&f, &c->args[2], sizeof f);
    uint64_t n = c->counts[0] < c->counts[1] ? c->counts[0] : c->counts[1];
    for (uint64_t i = 0; i < n; i++)
        y[i] = x[i] * (float)f;
    return PG_OK;
}

static pg_status always_fails(const pg_task_call *c) {
    (void)c;
    return pg_task_fail(PG_ERROR_ARGUMENT, "the library said no (error 42)");
}

static void own_tasks(void) {
    pg_runtime *rt = test_runtime_on("host:2", NULL, NULL);
    static int one = 1;
    pg_task_impls impls = {my_scale, NULL, &one, count_free};
    pg_kernel *t = NULL;
    ctx_freed = 0;
    REQUIRE_OK(
        pg_task_new(rt, "my_scale", &impls, "in const float *x, out float *y, double factor", &t));
    pg_param_info p[4];
    int np = 0;
    CHECK_OK(pg_kernel_params(t, p, 4, &np));
    CHECK(np == 3 && p[1].access == PG_ACCESS_OUT && p[2].dtype == PG_FLOAT64);
    enum { N = 100 };
    pg_array *X = test_array(rt, N), *Y = test_array(rt, N);
    float x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i;
    REQUIRE_OK(pg_array_write(X, 0, N, x));
    pg_arg args[] = {pg_arg_array(X), pg_arg_array(Y), pg_arg_double(3.0)};
    CHECK_OK(launch(t, args, 3));
    CHECK_OK(pg_array_read(Y, 0, N, y));
    for (int i = 0; i < N; i++)
        CHECK(y[i] == 3.0f * (float)i);
    /* The signature is checked as a kernel's: wrong count, array for a scalar. */
    CHECK_MSG(launch(t, args, 2), PG_ERROR_ARGUMENT, "my_scale");
    pg_arg wrong[] = {pg_arg_array(X), pg_arg_array(Y), pg_arg_array(X)};
    CHECK_MSG(launch(t, wrong, 3), PG_ERROR_ARGUMENT, "expected a float64 scalar");
    /* The task's own failure: reported by the sync, naming the task; the device goes on. */
    pg_task_impls bad = {always_fails, NULL, NULL, NULL};
    pg_kernel *f = NULL;
    REQUIRE_OK(pg_task_new(rt, "always_fails", &bad, "inout float *y", &f));
    pg_arg fy[] = {pg_arg_array(Y)};
    CHECK_OK(launch(f, fy, 1));
    CHECK_MSG(pg_runtime_sync(rt), PG_ERROR_DEVICE, "task 'always_fails'");
    CHECK(strstr(pg_last_error(), "error 42") != NULL);
    pg_array *Z = test_array(rt, N);
    pg_arg ok[] = {pg_arg_array(X), pg_arg_array(Z), pg_arg_double(-1.0)};
    CHECK_OK(launch(t, ok, 3));
    CHECK_OK(pg_array_read(Z, 0, N, y));
    CHECK(y[N - 1] == -(float)(N - 1));
    /* ctx_free once the task is freed and its calls are done */
    CHECK(ctx_freed == 0);
    CHECK_OK(pg_kernel_free(t));
    CHECK_OK(pg_runtime_sync(rt));
    CHECK(ctx_freed == 1);
    pg_kernel_free(f);
    pg_runtime_free(rt);
}

static pg_status gpu_only(const pg_task_call *c) {
    (void)c;
    return PG_OK;
}

static void refusals(void) {
    pg_runtime *rt = test_runtime_on("host:4", NULL, NULL);
    /* only a CUDA implementation: nothing on CPU devices may run it */
    pg_task_impls impls = {NULL, gpu_only, NULL, NULL};
    pg_kernel *t = NULL;
    REQUIRE_OK(pg_task_new(rt, "cufft_plan", &impls, "inout float *y", &t));
    pg_array *Y = test_array(rt, 8);
    pg_arg a[] = {pg_arg_array(Y)};
    CHECK_MSG(launch(t, a, 1), PG_ERROR_ARGUMENT, "task 'cufft_plan' cannot run");
    CHECK(strstr(pg_last_error(), "CPU") != NULL);
    pg_kernel_free(t);
    /* no implementation at all, no signature, unknown built-in */
    pg_task_impls none = {NULL, NULL, NULL, NULL};
    CHECK_MSG(pg_task_new(rt, "nothing", &none, "float *y", &t), PG_ERROR_ARGUMENT,
              "no implementation");
    CHECK_STATUS(pg_task_new(rt, "nosig", &impls, NULL, &t), PG_ERROR_ARGUMENT);
    CHECK_MSG(pg_task_new(rt, "badsig", &impls, "inout float *y, complex z", &t), PG_ERROR_ARGUMENT,
              "badsig");
    CHECK_MSG(pg_task_builtin(rt, "gemm_f16", &t), PG_ERROR_NOT_FOUND, "gemm_f32");
    /* arrays too small for the sizes given: the call fails, naming the array */
    pg_kernel *g = builtin(rt, "gemm_f32");
    pg_array *A = test_array(rt, 6), *B = test_array(rt, 6), *C = test_array(rt, 3);
    CHECK_OK(gemm_launch(g, A, B, C, 2, 2, 3, 0, 0, 1.0, 0.0)); /* C needs 4 */
    CHECK_MSG(pg_runtime_sync(rt), PG_ERROR_DEVICE, "fewer than");
    CHECK(strstr(pg_last_error(), "array c") != NULL);
    pg_kernel_free(g);
    pg_runtime_free(rt);

    /* the simulator cannot run C functions */
    pg_runtime *sim = test_runtime_on("sim:h200x1,host_time=0", NULL, NULL);
    pg_task_impls both = {gpu_only, gpu_only, NULL, NULL};
    CHECK_MSG(pg_task_new(sim, "on_sim", &both, "inout float *y", &t), PG_ERROR_ARGUMENT, "sim");
    pg_runtime_free(sim);
}

/* A BLAS library that cannot be loaded: the error names it and the package to install. */
static void missing_library(void) {
    pg_runtime *rt = test_runtime_on("host:2", NULL, NULL);
    const char *old = getenv("PG_BLAS_LIB");
    char *saved = old ? strdup(old) : NULL;
    setenv("PG_BLAS_LIB", "/nonexistent/libopenblas.so.0", 1);
    pg_kernel *t = NULL;
    CHECK_MSG(pg_task_builtin(rt, "gemm_f64", &t), PG_ERROR_NOT_FOUND, "libopenblas0");
    CHECK(strstr(pg_last_error(), "/nonexistent/libopenblas.so.0") != NULL);
    CHECK(strstr(pg_last_error(), "OpenBLAS") != NULL);
    /* a library without CBLAS (libc here) is refused too, naming the missing function */
    setenv("PG_BLAS_LIB", "libc.so.6", 1);
    CHECK_MSG(pg_task_builtin(rt, "dot_f32", &t), PG_ERROR_NOT_FOUND, "cblas_sgemm");
    if (saved)
        setenv("PG_BLAS_LIB", saved, 1);
    else
        unsetenv("PG_BLAS_LIB");
    free(saved);
    CHECK_OK(pg_task_builtin(rt, "dot_f32", &t)); /* found again */
    pg_kernel_free(t);
    pg_runtime_free(rt);
}

int main(void) {
    pg_runtime *rt = test_runtime("host:4", NULL, NULL);
    gemm_shapes(rt, PG_FLOAT32);
    gemm_shapes(rt, PG_FLOAT64);
    vectors(rt, PG_FLOAT32);
    vectors(rt, PG_FLOAT64);
    kernels_around(rt);
    in_a_graph(rt);
    CHECK_OK(pg_runtime_free(rt));
    own_tasks();
    refusals();
    missing_library();
    CHECK_DONE();
}

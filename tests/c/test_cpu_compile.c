/* test_cpu_compile.c: CUDA source compiled for CPU devices: launches over block ranges and
 * threads, atomics, math, templates, the errors, option translation and the on-disk cache. */
#include "check.h"
#include "nvrtc/cpu_compile.h"
#include "nvrtc/signature.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *cache_dir; /* PG_CACHE_DIR when set (CTest sets it): rebuilds are quick */

/* Compile `name` from `source` with parameters inferred from the source. */
static pg_status compile(const char *source, const char *name, const char *options, const char *dir,
                         pg__cpu_module **m) {
    pg_param_info *params;
    int n;
    pg_status st = pg__signature_infer(source, name, &params, &n);
    if (st)
        return st;
    pg__kernel_src src = {source, name, options, params, n, dir, 0};
    st = pg__cpu_compile(&src, m);
    free(params);
    return st;
}

/* Argument slots as the backend passes them: one 8-byte slot per parameter. */
typedef struct args {
    uint64_t slot[16];
    void *ptr[16];
    int n;
} args;

static void arg_ptr(args *a, const void *p) {
    a->slot[a->n] = 0;
    memcpy(&a->slot[a->n], &p, sizeof p);
    a->ptr[a->n] = &a->slot[a->n];
    a->n++;
}
static void arg_i32(args *a, int32_t v) {
    a->slot[a->n] = 0;
    memcpy(&a->slot[a->n], &v, sizeof v);
    a->ptr[a->n] = &a->slot[a->n];
    a->n++;
}
static void arg_f32(args *a, float v) {
    a->slot[a->n] = 0;
    memcpy(&a->slot[a->n], &v, sizeof v);
    a->ptr[a->n] = &a->slot[a->n];
    a->n++;
}
static void arg_f64(args *a, double v) {
    memcpy(&a->slot[a->n], &v, sizeof v);
    a->ptr[a->n] = &a->slot[a->n];
    a->n++;
}

static pg__cpu_launch launch(uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                             uint32_t bz) {
    pg__cpu_launch l = {{gx, gy, gz}, {bx, by, bz}, 0, NULL, NULL};
    return l;
}

static uint64_t nblocks(const pg__cpu_launch *l) {
    return (uint64_t)l->grid.x * l->grid.y * l->grid.z;
}

static const char *saxpy_src =
    "#include <cstdint>\n" /* kernels that include standard headers themselves still build */
    "#include <cmath>\n"
    "extern \"C\" __global__ void saxpy(float *y, const float *x, float a, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

typedef struct run_job {
    pg__cpu_entry entry;
    const pg__cpu_launch *l;
    uint64_t begin, end;
    void **params;
} run_job;

static void *run_range(void *p) {
    run_job *j = p;
    j->entry(j->l, j->begin, j->end, j->params);
    return NULL;
}

static void test_saxpy(void) {
    pg__cpu_module *m;
    REQUIRE_OK(compile(saxpy_src, "saxpy", NULL, cache_dir, &m));
    pg__cpu_entry e = pg__cpu_module_entry(m);
    CHECK(e != NULL);
    enum { N = 1000 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    args a = {0};
    arg_ptr(&a, y);
    arg_ptr(&a, x);
    arg_f32(&a, 2.0f);
    arg_i32(&a, N);
    pg__cpu_launch l = launch((N + 127) / 128, 1, 1, 128, 1, 1); /* 8 blocks, the last partial */
    /* Two ranges on this thread: each block exactly once. */
    e(&l, 0, 3, a.ptr);
    e(&l, 3, nblocks(&l), a.ptr);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += y[i] != 2.0f * (float)i + 1.0f;
    CHECK(bad == 0);
    /* Two threads on disjoint ranges at once: indices are per thread. */
    run_job j1 = {e, &l, 0, 5, a.ptr}, j2 = {e, &l, 5, nblocks(&l), a.ptr};
    pthread_t t1, t2;
    REQUIRE_OK(pthread_create(&t1, NULL, run_range, &j1) ? PG_ERROR_INTERNAL : PG_OK);
    REQUIRE_OK(pthread_create(&t2, NULL, run_range, &j2) ? PG_ERROR_INTERNAL : PG_OK);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += y[i] != 4.0f * (float)i + 1.0f;
    CHECK(bad == 0);
    /* An empty range touches nothing. */
    e(&l, 2, 2, a.ptr);
    CHECK(y[300] == 1201.0f);
    pg__cpu_module_free(m);
    free(x);
    free(y);
}

static const char *grid_src =
    "__global__ void index3(int *out, int w, int h, int d) {\n"
    "    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "    unsigned z = blockIdx.z * blockDim.z + threadIdx.z;\n"
    "    if (x < (unsigned)w && y < (unsigned)h && z < (unsigned)d)\n"
    "        out[(z * h + y) * w + x] = (int)(x + 1000 * y + 1000000 * z) +\n"
    "            (gridDim.x * blockDim.x >= (unsigned)w && gridDim.y * blockDim.y >= (unsigned)h "
    "&&\n"
    "             warpSize == 32 ? 0 : -1000000000);\n"
    "}\n";

static void test_grid(void) {
    pg__cpu_module *m;
    REQUIRE_OK(compile(grid_src, "index3", NULL, cache_dir, &m));
    pg__cpu_entry e = pg__cpu_module_entry(m);
    enum { W = 37, H = 21, D = 3 };
    int *out = calloc(W * H * D, sizeof *out);
    args a = {0};
    arg_ptr(&a, out);
    arg_i32(&a, W);
    arg_i32(&a, H);
    arg_i32(&a, D);
    pg__cpu_launch l = launch(5, 3, 2, 8, 8, 2); /* 40 x 24 x 4 threads cover 37 x 21 x 3 */
    e(&l, 0, 7, a.ptr);
    e(&l, 7, nblocks(&l), a.ptr);
    int bad = 0;
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                bad += out[(z * H + y) * W + x] != x + 1000 * y + 1000000 * z;
    CHECK(bad == 0);
    pg__cpu_module_free(m);
    free(out);
}

static const char *atomic_src =
    "__global__ void count(float *fsum, int *isum, unsigned *umax, double *dsum,\n"
    "                      unsigned long long *bits, unsigned *wrap, int *cas, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= n) return;\n"
    "    atomicAdd(fsum, 0.5f);\n"
    "    atomicAdd(isum, i);\n"
    "    atomicSub(isum + 1, 1);\n"
    "    atomicMax(umax, (unsigned)i * 3u);\n"
    "    atomicMin(isum + 2, -i);\n"
    "    atomicAdd(dsum, 0.25);\n"
    "    atomicOr(bits, 1ull << (i % 64));\n"
    "    atomicInc(wrap, 9u);\n"
    "    atomicCAS(cas, 0, i + 1);\n"
    "}\n";

static void test_atomics(void) {
    pg__cpu_module *m;
    REQUIRE_OK(compile(atomic_src, "count", NULL, cache_dir, &m));
    pg__cpu_entry e = pg__cpu_module_entry(m);
    enum { N = 1000 };
    float fsum = 0;
    int isum[3] = {0, 0, 0};
    unsigned umax = 0, wrap = 0;
    double dsum = 0;
    unsigned long long bits = 0;
    int cas = 0;
    args a = {0};
    arg_ptr(&a, &fsum);
    arg_ptr(&a, isum);
    arg_ptr(&a, &umax);
    arg_ptr(&a, &dsum);
    arg_ptr(&a, &bits);
    arg_ptr(&a, &wrap);
    arg_ptr(&a, &cas);
    arg_i32(&a, N);
    pg__cpu_launch l = launch(16, 1, 1, 64, 1, 1);
    /* Four threads over disjoint ranges, so the atomics really race. */
    run_job j[4];
    pthread_t t[4];
    for (int k = 0; k < 4; k++) {
        j[k] = (run_job){e, &l, (uint64_t)k * 4, (uint64_t)k * 4 + 4, a.ptr};
        REQUIRE_OK(pthread_create(&t[k], NULL, run_range, &j[k]) ? PG_ERROR_INTERNAL : PG_OK);
    }
    for (int k = 0; k < 4; k++)
        pthread_join(t[k], NULL);
    CHECK(fsum == 500.0f);
    CHECK(isum[0] == N * (N - 1) / 2);
    CHECK(isum[1] == -N);
    CHECK(isum[2] == -(N - 1));
    CHECK(umax == (N - 1) * 3u);
    CHECK(dsum == 250.0);
    CHECK(bits == ~0ull);
    CHECK(wrap == N % 10); /* atomicInc wraps to 0 past 9 */
    CHECK(cas >= 1 && cas <= N);
    pg__cpu_module_free(m);
}

static const char *math_src =
    "__device__ __forceinline__ float sq(float v) { return v * v; }\n"
    "__global__ void math(float *f, double *d, int *k, float x, double y) {\n"
    "    f[0] = sinf(x); f[1] = cosf(x); f[2] = expf(x); f[3] = logf(x);\n"
    "    f[4] = sqrtf(x); f[5] = rsqrtf(x); f[6] = powf(x, 2.5f); f[7] = fabsf(-x);\n"
    "    f[8] = fminf(x, 1.0f); f[9] = fmaxf(x, 1.0f); f[10] = floorf(x); f[11] = ceilf(x);\n"
    "    f[12] = erff(x); f[13] = __expf(x); f[14] = __logf(x); f[15] = __powf(x, 2.0f);\n"
    "    f[16] = __fdividef(x, 4.0f); f[17] = __saturatef(x); f[18] = __sinf(x);\n"
    "    f[19] = __cosf(x); f[20] = fmaf(x, 2.0f, 1.0f); f[21] = __fmaf_rn(x, x, x);\n"
    "    f[22] = __int_as_float(__float_as_int(x)); f[23] = min(x, 0.5f); f[24] = max(x, 9.f);\n"
    "    f[25] = sq(x) + tanhf(x) * 0.0f;\n"
    "    float s, c; sincosf(x, &s, &c); f[26] = s * s + c * c; f[27] = __saturatef(-x);\n"
    "    d[0] = sin(y); d[1] = exp(y); d[2] = log(y); d[3] = sqrt(y); d[4] = pow(y, 3.0);\n"
    "    d[5] = fabs(-y); d[6] = rsqrt(y); d[7] = min(y, 1.0); d[8] = max(y, 1.0); d[9] = erf(y);\n"
    "    k[0] = __popc(0xF0F0u); k[1] = __popcll(0xFFFFFFFFFFull); k[2] = __clz(1);\n"
    "    k[3] = __clz(0); k[4] = __clzll(1ll); k[5] = __ffs(8); k[6] = __ffsll(0);\n"
    "    k[7] = min(3, -4); k[8] = (int)max(3u, 7u); k[9] = (int)min(5ll, 2ll);\n"
    "    k[10] = __ldg(k + 8); k[11] = (int)(__brev(1u) >> 31);\n"
    "}\n";

static int near(double a, double b, double tol) {
    return fabs(a - b) <= tol * (1.0 + fabs(b));
}

static void test_math(void) {
    pg__cpu_module *m;
    REQUIRE_OK(compile(math_src, "math", NULL, cache_dir, &m));
    pg__cpu_entry e = pg__cpu_module_entry(m);
    float f[28];
    double d[10];
    int k[12];
    const float x = 1.75f;
    const double y = 2.5;
    args a = {0};
    arg_ptr(&a, f);
    arg_ptr(&a, d);
    arg_ptr(&a, k);
    arg_f32(&a, x);
    arg_f64(&a, y);
    pg__cpu_launch l = launch(1, 1, 1, 1, 1, 1);
    e(&l, 0, 1, a.ptr);
    const double fx[28] = {sin(x),    cos(x), exp(x), log(x), sqrt(x), 1 / sqrt(x), pow(x, 2.5),
                           x,         1.0,    x,      1.0,    2.0,     erf(x),      exp(x),
                           log(x),    x * x,  x / 4,  1.0,    sin(x),  cos(x),      2 * x + 1,
                           x * x + x, x,      0.5,    9.0,    x * x,   1.0,         0.0};
    for (int i = 0; i < 28; i++)
        if (!near(f[i], fx[i], 1e-5)) {
            fprintf(stderr, "math f[%d] = %.9g, expected %.9g\n", i, f[i], fx[i]);
            CHECK(0);
        }
    const double dx[10] = {sin(y), exp(y),      log(y), sqrt(y), pow(y, 3.0),
                           y,      1 / sqrt(y), 1.0,    y,       erf(y)};
    for (int i = 0; i < 10; i++)
        if (!near(d[i], dx[i], 1e-14)) {
            fprintf(stderr, "math d[%d] = %.17g, expected %.17g\n", i, d[i], dx[i]);
            CHECK(0);
        }
    const int kx[12] = {8, 40, 31, 32, 63, 4, 0, -4, 7, 2, 7, 1};
    for (int i = 0; i < 12; i++)
        if (k[i] != kx[i]) {
            fprintf(stderr, "math k[%d] = %d, expected %d\n", i, k[i], kx[i]);
            CHECK(0);
        }
    pg__cpu_module_free(m);
}

static const char *template_src =
    "template <typename T, int SCALE>\n"
    "__global__ void __launch_bounds__(256) axpy(T *y, const T *__restrict__ x, T a, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = SCALE * a * x[i] + y[i];\n"
    "}\n";

static void test_template(void) {
    pg__cpu_module *m;
    REQUIRE_OK(compile(template_src, "axpy<double, 3>", NULL, cache_dir, &m));
    pg__cpu_entry e = pg__cpu_module_entry(m);
    double x[10], y[10];
    for (int i = 0; i < 10; i++) {
        x[i] = i;
        y[i] = 0.5;
    }
    args a = {0};
    arg_ptr(&a, y);
    arg_ptr(&a, x);
    arg_f64(&a, 2.0);
    arg_i32(&a, 10);
    pg__cpu_launch l = launch(3, 1, 1, 4, 1, 1);
    e(&l, 0, nblocks(&l), a.ptr);
    int bad = 0;
    for (int i = 0; i < 10; i++)
        bad += y[i] != 6.0 * i + 0.5;
    CHECK(bad == 0);
    pg__cpu_module_free(m);
}

static void test_options(void) {
    const char *src = "__global__ void k(int *v) {\n"
                      "#ifndef VALUE\n"
                      "#error VALUE must be defined\n"
                      "#endif\n"
                      "    v[0] = VALUE;\n"
                      "}\n";
    pg__cpu_module *m;
    REQUIRE_OK(compile(src, "k",
                       "-DVALUE=42 -arch=sm_80 --use_fast_math -lineinfo -O2 "
                       "--gpu-architecture=compute_90 -std=c++17 -D OTHER=1",
                       cache_dir, &m));
    int v = 0;
    args a = {0};
    arg_ptr(&a, &v);
    pg__cpu_launch l = launch(1, 1, 1, 1, 1, 1);
    pg__cpu_module_entry(m)(&l, 0, 1, a.ptr);
    CHECK(v == 42);
    pg__cpu_module_free(m);
    /* Without the macro, the kernel's #error is a compile error. */
    CHECK_STATUS(compile(src, "k", NULL, cache_dir, &m), PG_ERROR_COMPILE);
    CHECK(strstr(pg_last_error_log(), "VALUE must be defined") != NULL);
    /* Unknown options name themselves. */
    CHECK_STATUS(compile(src, "k", "-DVALUE=1 --bogus-flag", cache_dir, &m), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "--bogus-flag") != NULL);
    CHECK_STATUS(compile(src, "k", "-fsanitize=address", cache_dir, &m), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "-fsanitize=address") != NULL);
    CHECK_STATUS(compile(src, "k", "-D", cache_dir, &m), PG_ERROR_ARGUMENT);
    CHECK_STATUS(compile(src, "k", "-std=c++98", cache_dir, &m), PG_ERROR_ARGUMENT);
}

static void test_errors(void) {
    pg__cpu_module *m = NULL;
    /* A compile error: the message and the log point at the kernel's own line 3. */
    const char *broken = "__global__ void k(float *v) {\n"
                         "    int i = threadIdx.x;\n"
                         "    v[i] = undeclared_thing * 2;\n"
                         "}\n";
    CHECK_STATUS(compile(broken, "k", NULL, cache_dir, &m), PG_ERROR_COMPILE);
    CHECK(strstr(pg_last_error(), "the C++ compiler") != NULL);
    CHECK(strstr(pg_last_error(), "kernel.cu:3") != NULL);
    CHECK(strstr(pg_last_error_log(), "undeclared_thing") != NULL);
    CHECK(strstr(pg_last_error_log(), "kernel.cu:3") != NULL);
    /* A call the kernel's parameters do not accept: the message blames the signature. */
    pg_param_info *wrong;
    int nwrong;
    REQUIRE_OK(pg__signature_parse("double *v", &wrong, &nwrong));
    pg__kernel_src src = {
        "__global__ void k(float *v) { v[0] = 1; }", "k", NULL, wrong, nwrong, cache_dir, 0};
    CHECK_STATUS(pg__cpu_compile(&src, &m), PG_ERROR_COMPILE);
    CHECK(strstr(pg_last_error(), "signature") != NULL);
    free(wrong);
    /* A declared but undefined device function is a link error, not a dlopen surprise. */
    CHECK_STATUS(compile("__device__ float missing(float);\n"
                         "__global__ void k(float *v) { v[0] = missing(v[0]); }\n",
                         "k", NULL, cache_dir, &m),
                 PG_ERROR_COMPILE);
    CHECK(strstr(pg_last_error_log(), "missing") != NULL);
    /* Constructs CPU devices lack are refused by name before compiling (block-level features
     * are supported: tests/c/test_kernel_corpus.c). */
    CHECK_STATUS(compile("__global__ void k(float *v) {\n"
                         "    unsigned lane;\n"
                         "    asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\n"
                         "}\n",
                         "k", NULL, cache_dir, &m),
                 PG_ERROR_UNSUPPORTED);
    CHECK(strstr(pg_last_error(), "kernel 'k' uses asm (line 3") != NULL);
    CHECK(strstr(pg_last_error(), "inline PTX") != NULL);
    const char *features[] = {"__shfl_down(v[0], 1)", "__half h",
                              "tex1Dfetch(t, 0)",     "cooperative_groups::this_grid()",
                              "k<<<1, 1>>>(v)",       "cuda::std::min(1, 2)"};
    const char *named[] = {"uses __shfl_down",        "uses __half", "uses tex1Dfetch",
                           "uses cooperative_groups", "uses <<<",    "uses cuda::"};
    for (size_t i = 0; i < sizeof features / sizeof features[0]; i++) {
        char s[256];
        snprintf(s, sizeof s, "__global__ void k(int *v) { v[0] = 1; %s; }", features[i]);
        CHECK_STATUS(compile(s, "k", NULL, cache_dir, &m), PG_ERROR_UNSUPPORTED);
        CHECK(strstr(pg_last_error(), named[i]) != NULL);
    }
    /* ...but not when they only appear in comments or strings. */
    CHECK_OK(compile("// asm() is not needed here\n"
                     "__global__ void k(int *v) { const char *s = \"__half\"; v[0] = s[0]; }\n",
                     "k", NULL, cache_dir, &m));
    pg__cpu_module_free(m);
    /* The kernel must exist, and the error lists what does. */
    CHECK_STATUS(compile(saxpy_src, "saxpy", NULL, cache_dir, &m), PG_OK);
    pg__cpu_module_free(m);
    pg_param_info none[1];
    pg__kernel_src nf = {saxpy_src, "sax", NULL, none, 0, cache_dir, 0};
    CHECK_STATUS(pg__cpu_compile(&nf, &m), PG_ERROR_NOT_FOUND);
    CHECK(strstr(pg_last_error(), "'sax'") && strstr(pg_last_error(), "saxpy"));
    pg__kernel_src bad_name = {saxpy_src, "saxpy; int x", NULL, none, 0, cache_dir, 0};
    CHECK_STATUS(pg__cpu_compile(&bad_name, &m), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg__cpu_compile(NULL, &m), PG_ERROR_ARGUMENT);
}

/* Many kernels loaded at once: per-kernel thread-locals must not come out of glibc's small static
 * TLS reserve (with initial-exec TLS, dlopen fails after about 26 kernels). */
static void test_many_modules(void) {
    enum { K = 40 };
    pg__cpu_module *m[K] = {0};
    int loaded = 0;
    for (int i = 0; i < K; i++) {
        char src[256];
        snprintf(src, sizeof src,
                 "__global__ void k(int *v) { v[threadIdx.x] = %d + (int)blockIdx.x; }", i);
        if (compile(src, "k", NULL, cache_dir, &m[i]) != PG_OK) {
            fprintf(stderr, "kernel %d of %d: %s\n", i + 1, K, pg_last_error());
            break;
        }
        loaded++;
    }
    CHECK(loaded == K);
    int bad = 0;
    for (int i = 0; i < loaded; i++) {
        int v[2] = {-1, -1};
        args a = {0};
        arg_ptr(&a, v);
        pg__cpu_launch l = launch(1, 1, 1, 2, 1, 1);
        pg__cpu_module_entry(m[i])(&l, 0, 1, a.ptr);
        bad += v[0] != i || v[1] != i;
    }
    CHECK(bad == 0);
    for (int i = 0; i < loaded; i++)
        pg__cpu_module_free(m[i]);
}

/* ------------------------------------------------------------------ the cache */

static int count_lines(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Files in dir whose name ends with suffix (or starts with it when prefix). */
static int count_files(const char *dir, const char *s, int prefix) {
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t ln = strlen(de->d_name), ls = strlen(s);
        if (prefix ? strncmp(de->d_name, s, ls) == 0
                   : ln >= ls && strcmp(de->d_name + ln - ls, s) == 0)
            n++;
    }
    closedir(d);
    return n;
}

static void remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    char p[4096];
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Replace every key file of dir by one that names other inputs. */
static void tamper_keys(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[4096];
    while (d && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n < 4 || strcmp(de->d_name + n - 4, ".key") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "format 20\npolygpu-cpu-kernel 1\nsource 3\nxyz\n");
            fclose(f);
        }
    }
    if (d)
        closedir(d);
}

static int saxpy_works(pg__cpu_module *m) {
    float x[4] = {1, 2, 3, 4}, y[4] = {0, 0, 0, 0};
    args a = {0};
    arg_ptr(&a, y);
    arg_ptr(&a, x);
    arg_f32(&a, 3.0f);
    arg_i32(&a, 4);
    pg__cpu_launch l = launch(2, 1, 1, 2, 1, 1);
    pg__cpu_module_entry(m)(&l, 0, 2, a.ptr);
    return y[0] == 3 && y[3] == 12;
}

static void test_cache(const char *tmp) {
    char dir[1024], script[1100], counter[1100], path[1100];
    snprintf(dir, sizeof dir, "%s/cache/nested", tmp); /* created with mkdir -p semantics */
    snprintf(script, sizeof script, "%s/cxx.sh", tmp);
    snprintf(counter, sizeof counter, "%s/compiles", tmp);
    /* A compiler that counts its builds (not its --version answers). */
    FILE *f = fopen(script, "w");
    REQUIRE_OK(f ? PG_OK : PG_ERROR_IO);
    fprintf(f, "#!/bin/sh\n[ \"$1\" = --version ] || echo build >> '%s'\nexec c++ \"$@\"\n",
            counter);
    fclose(f);
    chmod(script, 0700);
    const char *old = getenv("PG_CXX");
    char *saved = old ? strdup(old) : NULL;
    setenv("PG_CXX", script, 1);

    pg__cpu_module *m1 = NULL, *m2 = NULL;
    REQUIRE_OK(compile(saxpy_src, "saxpy", NULL, dir, &m1));
    CHECK(count_lines(counter) == 1);
    CHECK(saxpy_works(m1));
    CHECK(count_files(dir, ".so", 0) == 1 && count_files(dir, ".key", 0) == 1);
    CHECK(count_files(dir, ".tmp-", 1) == 0);
    struct stat st;
    CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
    /* Same key: a hit, no build, while the first module is still loaded and after. */
    REQUIRE_OK(compile(saxpy_src, "saxpy", NULL, dir, &m2));
    CHECK(count_lines(counter) == 1);
    CHECK(saxpy_works(m2));
    pg__cpu_module_free(m2);
    pg__cpu_module_free(m1);
    REQUIRE_OK(compile(saxpy_src, "saxpy", NULL, dir, &m1));
    CHECK(count_lines(counter) == 1);
    pg__cpu_module_free(m1);
    /* Different options: a different entry. */
    REQUIRE_OK(compile(saxpy_src, "saxpy", "-O1", dir, &m1));
    CHECK(count_lines(counter) == 2);
    CHECK(count_files(dir, ".so", 0) == 2);
    pg__cpu_module_free(m1);
    /* Key files that do not match (what a hash collision looks like): rebuilt, not used. */
    tamper_keys(dir);
    REQUIRE_OK(compile(saxpy_src, "saxpy", NULL, dir, &m1));
    CHECK(count_lines(counter) == 3);
    CHECK(saxpy_works(m1));
    pg__cpu_module_free(m1);
    REQUIRE_OK(compile(saxpy_src, "saxpy", "-O1", dir, &m1));
    CHECK(count_lines(counter) == 4);
    pg__cpu_module_free(m1);
    /* ...and the entries are whole again: hits */
    REQUIRE_OK(compile(saxpy_src, "saxpy", NULL, dir, &m1));
    REQUIRE_OK(compile(saxpy_src, "saxpy", "-O1", dir, &m2));
    CHECK(count_lines(counter) == 4);
    pg__cpu_module_free(m1);
    pg__cpu_module_free(m2);
    /* A tampered key is no hit even without a compiler (it names other inputs). */
    tamper_keys(dir);
    setenv("PG_CXX", "/nonexistent/c++", 1);
    CHECK_STATUS(compile(saxpy_src, "saxpy", NULL, dir, &m1), PG_ERROR_DEVICE);
    setenv("PG_CXX", script, 1);
    /* Restore a good entry, then take the compiler away: the cache still serves it. */
    REQUIRE_OK(compile(saxpy_src, "saxpy", NULL, dir, &m1));
    CHECK(count_lines(counter) == 5);
    pg__cpu_module_free(m1);
    setenv("PG_CXX", "/nonexistent/c++", 1);
    m1 = NULL;
    CHECK_OK(compile(saxpy_src, "saxpy", NULL, dir, &m1));
    if (m1) {
        CHECK(saxpy_works(m1));
        pg__cpu_module_free(m1);
        m1 = NULL;
    }
    /* A kernel not in the cache needs the compiler: the error says what to do. */
    CHECK_STATUS(compile(grid_src, "index3", NULL, dir, &m1), PG_ERROR_DEVICE);
    CHECK(strstr(pg_last_error(), "PG_CXX") != NULL);
    CHECK_STATUS(compile(saxpy_src, "saxpy", NULL, NULL, &m1), PG_ERROR_DEVICE);
    CHECK(count_lines(counter) == 5);
    /* A compiler that does not run is no compiler either. */
    snprintf(path, sizeof path, "%s/broken.sh", tmp);
    f = fopen(path, "w");
    REQUIRE_OK(f ? PG_OK : PG_ERROR_IO);
    fprintf(f, "#!/bin/sh\nexit 1\n");
    fclose(f);
    chmod(path, 0700);
    setenv("PG_CXX", path, 1);
    m1 = NULL;
    CHECK_OK(compile(saxpy_src, "saxpy", NULL, dir, &m1));
    if (m1) {
        CHECK(saxpy_works(m1));
        pg__cpu_module_free(m1);
    }
    CHECK_STATUS(compile(grid_src, "index3", NULL, dir, &m1), PG_ERROR_DEVICE);
    CHECK(strstr(pg_last_error(), "version") != NULL);

    /* No cache folder: compiles every time, leaves nothing behind. */
    setenv("PG_CXX", script, 1);
    REQUIRE_OK(compile(saxpy_src, "saxpy", NULL, NULL, &m1));
    CHECK(count_lines(counter) == 6);
    CHECK(saxpy_works(m1));
    pg__cpu_module_free(m1);
    /* A cache folder that cannot be created (below a file): compiles uncached, no failure. */
    snprintf(path, sizeof path, "%s/plainfile", tmp);
    f = fopen(path, "w");
    if (f)
        fclose(f);
    snprintf(path, sizeof path, "%s/plainfile/cache", tmp);
    REQUIRE_OK(compile(saxpy_src, "saxpy", NULL, path, &m1));
    CHECK(count_lines(counter) == 7);
    CHECK(saxpy_works(m1));
    pg__cpu_module_free(m1);
    CHECK(count_files(dir, ".tmp-", 1) == 0);

    if (saved) {
        setenv("PG_CXX", saved, 1);
        free(saved);
    } else
        unsetenv("PG_CXX");
}

int main(void) {
    cache_dir = getenv("PG_CACHE_DIR");
    /* A private TMPDIR, so the test can see that builds leave no temporary files. */
    char tmp[] = "/tmp/pg-test-cpu-XXXXXX";
    REQUIRE_OK(mkdtemp(tmp) ? PG_OK : PG_ERROR_IO);
    char tmpdir[1100];
    snprintf(tmpdir, sizeof tmpdir, "%s/tmp", tmp);
    mkdir(tmpdir, 0700);
    setenv("TMPDIR", tmpdir, 1);

    test_saxpy();
    test_grid();
    test_atomics();
    test_math();
    test_template();
    test_options();
    test_errors();
    test_many_modules();
    test_cache(tmp);

    CHECK(count_files(tmpdir, "", 1) == 2); /* only . and .. */
    remove_tree(tmp);
    CHECK_DONE();
}

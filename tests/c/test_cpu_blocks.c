/* test_cpu_blocks.c: the CPU device layer's block-level execution on its own: which kernels the
 * compiler runs as cooperative blocks, the rewrite of extern __shared__, and what only a CPU
 * device can be asked (threads that return before a barrier, collectives that diverge, the
 * ucontext fallback, fiber memory from the backend or per call, several OS threads at once). */
#include "check.h"
#include "kernel_file.h"
#include "devices/host/host_fibers.h"
#include "nvrtc/cpu_compile.h"
#include "nvrtc/cpu_features.h"
#include "nvrtc/cpu_rewrite.h"
#include "nvrtc/signature.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cache_dir;

/* ------------------------------------------------------------------ which path */

static void expect_path(const char *src, const char *name, const char *options, int want) {
    int got = pg__cpu_needs_block(src, name, options);
    if (got != want) {
        fprintf(stderr, "kernel '%s': needs_block = %d, expected %d\n", name, got, want);
        pg_check_failures++;
    }
}

static void test_paths(void) {
    /* The corpus: element-wise kernels keep the plain loop, even next to block kernels. */
    static const struct {
        const char *file, *name;
        int block;
    } corpus[] = {{"reduce_tree.cu", "reduce_tree<float>", 1},
                  {"reduce_warp.cu", "reduce_warp", 1},
                  {"scan.cu", "scan_blocks", 1},
                  {"scan.cu", "scan_sums", 1},
                  {"scan.cu", "scan_add", 0},
                  {"matmul_tiled.cu", "matmul_tiled", 1},
                  {"histogram.cu", "histogram", 1},
                  {"softmax.cu", "softmax_rows", 1},
                  {"transpose.cu", "transpose", 1},
                  {"dot.cu", "dot", 1},
                  {"stencil.cu", "stencil_1d", 1},
                  {"compact.cu", "compact", 1},
                  {"votes.cu", "votes", 1},
                  {"last_block.cu", "sum_last_block", 1},
                  {"vectors.cu", "normalize4", 0}};
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
        char *src = read_kernel(corpus[i].file);
        expect_path(src, corpus[i].name, NULL, corpus[i].block);
        free(src);
    }
    /* Through a chain of device functions, a macro, a member function, a namespace. */
    const char *src =
        "#define SYNC() __syncthreads()\n"
        "__device__ void g(float *s) { __syncwarp(); s[0] = 1; }\n"
        "__device__ void f(float *s) { g(s); }\n"
        "struct Reducer {\n"
        "    __device__ float fold(float v) { return v + __shfl_down_sync(~0u, v, 1); }\n"
        "    __device__ float keep(float v) { return v; }\n"
        "};\n"
        "namespace ns {\n"
        "__global__ void via_chain(float *s) { f(s); }\n"
        "__global__ void plain(float *y) { y[threadIdx.x] = 1; }\n"
        "}\n"
        "extern \"C\" __global__ void via_macro(float *s) { SYNC(); }\n"
        "__global__ void via_member(float *s) { Reducer r; s[0] = r.fold(s[0]); }\n"
        "template <int N> __global__ void templ(float *y) { y[N] = 2; }\n"
        "__global__ void mentions(float *y) { const char *s = \"__syncthreads\"; y[0] = s[0]; }\n";
    expect_path(src, "ns::via_chain", NULL, 1);
    expect_path(src, "ns::plain", NULL, 0);
    expect_path(src, "via_macro", NULL, 1);
    expect_path(src, "via_member", NULL, 1);
    expect_path(src, "templ<3>", NULL, 0);
    expect_path(src, "mentions", NULL, 0);
    /* What cannot be followed is cooperative: an option's macro, a local header. */
    const char *opt = "__global__ void k(float *y) { SYNC_ALL; y[0] = 1; }\n"
                      "__global__ void e(float *y) { y[0] = 1; __syncthreads(); }\n";
    expect_path(opt, "k", "-DSYNC_ALL=__syncthreads()", 1);
    expect_path(opt, "k", NULL, 0);
    expect_path("#include \"helpers.cuh\"\n__global__ void k(float *y) { y[0] = 1; }\n"
                "__global__ void e(float *y) { __syncthreads(); }\n",
                "k", NULL, 1);
    expect_path("#include <cstdint>\n__global__ void k(float *y) { y[0] = 1; }\n"
                "__global__ void e(float *y) { __syncthreads(); }\n",
                "k", NULL, 0);
}

/* ------------------------------------------------------------------ extern __shared__ */

static void test_rewrite(void) {
    char *out = NULL;
    const char *src = "extern __shared__ float filesmem[];\n"
                      "__global__ void k(float *y) {\n"
                      "    extern __shared__ __align__(16) volatile int s[][4]; y[0] = s[0][1];\n"
                      "    extern __shared__ double one;\n"
                      "    y[1] = filesmem[2];\n"
                      "}\n";
    REQUIRE_OK(pg__cpu_rewrite_shared(src, "k", &out));
    CHECK(strstr(out, "volatile int (*const s)[4] = (volatile int (*)[4])pg__smem_dyn(); "
                      "y[0] = s[0][1];\n") != NULL);
    CHECK(strstr(out, "double &one = *(double *)pg__smem_dyn();\n") != NULL);
    CHECK(strstr(out, "#define filesmem (pg__smem_filesmem())\n#line 1 \"kernel.cu\"\n") != NULL);
    CHECK(strstr(out, "__shared__") == NULL);
    free(out);
    /* Without extern __shared__ the text is unchanged. */
    const char *none = "__global__ void k(float *y) { __shared__ float t[4]; y[0] = t[0]; }\n";
    REQUIRE_OK(pg__cpu_rewrite_shared(none, "k", &out));
    CHECK(strcmp(out, none) == 0);
    free(out);
    /* Forms it cannot rewrite are named with their line. */
    CHECK_STATUS(pg__cpu_rewrite_shared("__global__ void k(float *y) {\n"
                                        "    extern __shared__ float a[], b[];\n}\n",
                                        "k", &out),
                 PG_ERROR_UNSUPPORTED);
    CHECK(strstr(pg_last_error(), "line 2") != NULL);
    CHECK_STATUS(pg__cpu_rewrite_shared("#define SMEM extern __shared__ float s[]\n"
                                        "__global__ void k(float *y) { SMEM; y[0] = s[0]; }\n",
                                        "k", &out),
                 PG_ERROR_UNSUPPORTED);
    CHECK(strstr(pg_last_error(), "macro") != NULL);
}

/* ------------------------------------------------------------------ running blocks */

static pg__cpu_module *build(const char *src, const char *name, const char *options) {
    pg_param_info *params;
    int n;
    REQUIRE_OK(pg__signature_infer(src, name, &params, &n));
    pg__kernel_src ks = {src, name, options, params, n, cache_dir, 0};
    pg__cpu_module *m = NULL;
    pg_status st = pg__cpu_compile(&ks, &m);
    if (st) {
        fprintf(stderr, "%s: %s\n%s\n", name, pg_last_error(),
                pg_last_error_log() ? pg_last_error_log() : "");
        exit(1);
    }
    free(params);
    return m;
}

typedef struct slots {
    uint64_t v[8];
    void *p[8];
} slots;

static void **ptrs(slots *s, int n, ...) {
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        void *p = va_arg(ap, void *);
        s->v[i] = (uint64_t)(uintptr_t)p;
        s->p[i] = &s->v[i];
    }
    va_end(ap);
    return s->p;
}

static pg__cpu_launch launch1(uint32_t grid, uint32_t bx, uint32_t by, uint32_t bz, size_t shared,
                              int backend) {
    pg__cpu_launch l = {{grid, 1, 1}, {bx, by, bz}, shared, NULL, NULL};
    if (backend)
        l.fiber_memory = pg__host_fiber_memory;
    return l;
}

/* Threads that return before a barrier no longer hold it up (as on a GPU, where exited threads
 * leave the barrier's count). */
static void test_early_return(int backend) {
    pg__cpu_module *m = build("__global__ void k(int *out) {\n"
                              "    if (threadIdx.x >= 40) return;\n"
                              "    __syncthreads();\n"
                              "    out[blockIdx.x * 64 + threadIdx.x] = __syncthreads_count(1);\n"
                              "}\n",
                              "k", NULL);
    int out[3 * 64];
    for (int i = 0; i < 3 * 64; i++)
        out[i] = -1;
    slots s;
    pg__cpu_launch l = launch1(3, 64, 1, 1, 0, backend);
    pg__cpu_module_entry(m)(&l, 0, 3, ptrs(&s, 1, out));
    int bad = 0;
    for (int i = 0; i < 3 * 64; i++)
        bad += out[i] != (i % 64 < 40 ? 40 : -1);
    CHECK(bad == 0);
    pg__cpu_module_free(m);
}

/* Half a warp in a collective while the other half waits at __syncthreads: undefined in CUDA;
 * here the collective completes with the lanes that came, then the barrier: no hang. */
static void test_divergent(int backend) {
    pg__cpu_module *m = build("__global__ void k(int *out) {\n"
                              "    int v = threadIdx.x, lane = threadIdx.x & 31;\n"
                              "    if (lane < 16) v = __shfl_xor_sync(0xffffffffu, v, 1);\n"
                              "    __syncthreads();\n"
                              "    out[threadIdx.x] = v;\n"
                              "}\n",
                              "k", NULL);
    int out[64];
    slots s;
    pg__cpu_launch l = launch1(1, 64, 1, 1, 0, backend);
    pg__cpu_module_entry(m)(&l, 0, 1, ptrs(&s, 1, out));
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += out[i] != ((i & 31) < 16 ? i ^ 1 : i);
    CHECK(bad == 0);
    pg__cpu_module_free(m);
}

/* Dynamic shared memory: extern arrays in two functions alias, a file-scope one too; 3-D blocks
 * of 1024 threads make warps of linear thread indices; a deep stack per thread. */
static const char *shapes_src =
    "extern __shared__ int filewide[];\n"
    "__device__ float *as_float(void) { extern __shared__ float f[]; return f; }\n"
    "__global__ void shapes(int *out, int *lanes) {\n"
    "    extern __shared__ int s[];\n"
    "    int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n"
    "    s[t] = t;\n"
    "    __syncthreads();\n"
    "    int n = blockDim.x * blockDim.y * blockDim.z;\n"
    "    int other = filewide[n - 1 - t] + (as_float() == (float *)s ? 0 : 100000);\n"
    "    volatile char deep[16384];\n"
    "    deep[t % 16384] = (char)t;\n"
    "    out[blockIdx.x * n + t] = other + deep[t % 16384] - (char)t;\n"
    "    lanes[blockIdx.x * n + t] = __shfl_sync(0xffffffffu, t, 0) + 10000 * (__activemask() != "
    "0xffffffffu);\n"
    "    if (t == 5 && blockIdx.x == 1) /* the C library (and a sanitizer's interceptors) on a "
    "fiber's stack */\n"
    "        printf(\"test_cpu_blocks: printf from thread %d of a 3-D block of %d\\n\", t, n);\n"
    "}\n";

static void test_shapes(int backend) {
    pg__cpu_module *m = build(shapes_src, "shapes", NULL);
    enum { N = 1024, G = 2 };
    int *out = malloc(G * N * sizeof *out), *lanes = malloc(G * N * sizeof *lanes);
    slots s;
    pg__cpu_launch l = launch1(G, 8, 8, 16, N * sizeof(int), backend);
    pg__cpu_module_entry(m)(&l, 0, G, ptrs(&s, 2, out, lanes));
    int bad = 0;
    for (int i = 0; i < G * N; i++)
        bad += out[i] != N - 1 - i % N || lanes[i] != (i % N & ~31);
    CHECK(bad == 0);
    free(out);
    free(lanes);
    pg__cpu_module_free(m);
}

/* Plain-loop kernels get __shared__ and dynamic shared memory too. */
static void test_plain_shared(int backend) {
    const char *src = "__global__ void k(int *out) {\n"
                      "    __shared__ int mine[64];\n"
                      "    extern __shared__ int dyn[];\n"
                      "    mine[threadIdx.x] = threadIdx.x; dyn[threadIdx.x] = 2 * threadIdx.x;\n"
                      "    out[blockIdx.x * 64 + threadIdx.x] = mine[threadIdx.x] + "
                      "dyn[threadIdx.x];\n"
                      "}\n";
    CHECK(pg__cpu_needs_block(src, "k", NULL) == 0);
    pg__cpu_module *m = build(src, "k", NULL);
    int out[2 * 64];
    slots s;
    pg__cpu_launch l = launch1(2, 64, 1, 1, 64 * sizeof(int), backend);
    pg__cpu_module_entry(m)(&l, 0, 2, ptrs(&s, 1, out));
    int bad = 0;
    for (int i = 0; i < 2 * 64; i++)
        bad += out[i] != 3 * (i % 64);
    CHECK(bad == 0);
    pg__cpu_module_free(m);
}

/* A block reduction: with the hand-made switch, with ucontext (the path of other CPUs), and
 * from two OS threads at once on disjoint block ranges. */
static const char *reduce_src =
    "__global__ void reduce(const float *x, float *partial, int n) {\n"
    "    __shared__ float s[256];\n"
    "    float v = 0;\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * "
    "blockDim.x)\n"
    "        v += x[i];\n"
    "    v = __shfl_xor_sync(0xffffffffu, v, 16); /* there and back */\n"
    "    v = __shfl_xor_sync(0xffffffffu, v, 16);\n"
    "    s[threadIdx.x] = v;\n"
    "    __syncthreads();\n"
    "    for (int k = blockDim.x / 2; k > 0; k >>= 1) {\n"
    "        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];\n"
    "}\n";

typedef struct range_job {
    pg__cpu_entry e;
    const pg__cpu_launch *l;
    uint64_t begin, end;
    void **params;
} range_job;

static void *run_range(void *p) {
    range_job *j = p;
    j->e(j->l, j->begin, j->end, j->params);
    return NULL;
}

static void test_reduce(const char *options, int threads) {
    pg__cpu_module *m = build(reduce_src, "reduce", options);
    enum { N = 100000, G = 16, B = 256 };
    float *x = malloc(N * sizeof *x), partial[G];
    for (int i = 0; i < N; i++)
        x[i] = (float)(i % 17); /* small integers: every order sums them exactly */
    uint64_t nv = N;
    slots s;
    void **p = ptrs(&s, 3, x, partial, (void *)(uintptr_t)nv);
    pg__cpu_launch l = launch1(G, B, 1, 1, 0, 1);
    range_job jobs[2] = {{pg__cpu_module_entry(m), &l, 0, G / 2, p},
                         {pg__cpu_module_entry(m), &l, G / 2, G, p}};
    if (threads == 2) {
        pthread_t t;
        REQUIRE_OK(pthread_create(&t, NULL, run_range, &jobs[1]) ? PG_ERROR_INTERNAL : PG_OK);
        run_range(&jobs[0]);
        pthread_join(t, NULL);
    } else {
        jobs[0].end = G;
        run_range(&jobs[0]);
    }
    int bad = 0;
    for (int b = 0; b < G; b++) {
        double want = 0;
        for (int i = b * B; i < N; i += G * B)
            for (int t = 0; t < B && i + t < N; t++)
                want += x[i + t];
        bad += partial[b] != (float)want;
    }
    CHECK(bad == 0);
    free(x);
    pg__cpu_module_free(m);
}

int main(void) {
    cache_dir = getenv("PG_CACHE_DIR");
    test_paths();
    test_rewrite();
    for (int backend = 0; backend < 2; backend++) {
        test_early_return(backend);
        test_divergent(backend);
        test_shapes(backend);
        test_plain_shared(backend);
    }
    test_reduce(NULL, 1);
    test_reduce(NULL, 2);
#if defined(__SANITIZE_ADDRESS__)
    /* ASan's swapcontext interceptor prints a warning at any use; the ucontext path is the one
     * of CPUs other than x86-64, checked in the plain and TSan builds. */
    printf("ucontext variant not run under ASan\n");
#else
    test_reduce("-DPG_CPU_UCONTEXT", 1);
#endif
    CHECK_DONE();
}

/* blas.c: the built-in tasks (pg_task_builtin) — gemm, axpy and dot in float32 and float64,
 * row-major as NumPy — over OpenBLAS's CBLAS on CPU devices and cuBLAS on GPUs, both loaded
 * with dlopen when a task is made (a library that is missing leaves its devices out). Made
 * with the public task API only (pg_task_new: one implementation per slot of pg_task_impls),
 * as a user would make a task of their own; base/ for the thread's error message and the
 * allocation door every layer uses. */
#include "polygpu.h"

#include "base/alloc.h"
#include "base/error.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the libraries */

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_PTR_HOST = 0, CUBLAS_PTR_DEVICE = 1 };

typedef struct cblas_lib {
    char name[256];
    void (*sgemm)(int, int, int, int, int, int, float, const float *, int, const float *, int,
                  float, float *, int);
    void (*dgemm)(int, int, int, int, int, int, double, const double *, int, const double *, int,
                  double, double *, int);
    void (*saxpy)(int, float, const float *, int, float *, int);
    void (*daxpy)(int, double, const double *, int, double *, int);
    float (*sdot)(int, const float *, int, const float *, int);
    double (*ddot)(int, const double *, int, const double *, int);
} cblas_lib;

typedef struct cublas_lib {
    char name[256];
    int (*create)(void **);
    int (*destroy)(void *);
    int (*set_stream)(void *, void *);
    int (*set_pointer_mode)(void *, int);
    int (*sgemm)(void *, int, int, int, int, int, const float *, const float *, int, const float *,
                 int, const float *, float *, int);
    int (*dgemm)(void *, int, int, int, int, int, const double *, const double *, int,
                 const double *, int, const double *, double *, int);
    int (*saxpy)(void *, int, const float *, const float *, int, float *, int);
    int (*daxpy)(void *, int, const double *, const double *, int, double *, int);
    int (*sdot)(void *, int, const float *, int, const float *, int, float *);
    int (*ddot)(void *, int, const double *, int, const double *, int, double *);
} cublas_lib;

/* Loaded libraries stay for the life of the process (tasks keep their functions); one per
 * distinct name asked for (the environment variables may name another later). */
enum { MAX_LIBS = 8 };
static pthread_mutex_t libs_mu = PTHREAD_MUTEX_INITIALIZER;
static cblas_lib *cblas_libs[MAX_LIBS];
static cublas_lib *cublas_libs[MAX_LIBS];

/* Resolve each of n symbols into the function pointers at fns (consecutive members); the first
 * missing one is named in why. */
static int resolve(void *h, const char *const *syms, void **fns, int n, char *why, size_t cap,
                   const char *lib) {
    for (int i = 0; i < n; i++) {
        dlerror();
        void *f = dlsym(h, syms[i]);
        if (!f) {
            snprintf(why, cap, "%s: it has no %s", lib, syms[i]);
            return 0;
        }
        fns[i] = f;
    }
    return 1;
}

static void append(char *why, size_t cap, const char *what) {
    size_t len = strlen(why);
    snprintf(why + len, cap - len, "%s%s", len ? "; " : "", what);
}

_Static_assert(offsetof(cblas_lib, name) == 0 && sizeof(((cblas_lib *)0)->name) == 256 &&
                   offsetof(cublas_lib, name) == 0 && sizeof(((cublas_lib *)0)->name) == 256,
               "load_lib writes a library's name at its start, 256 bytes");

/* One library kind: where to look, what it must export, where loaded ones are kept. Each
 * library struct starts with its name, then one function pointer per symbol, in order. */
typedef struct lib_kind {
    const char *env;             /* names the library to use instead of the defaults */
    const char *const *defaults; /* sonames tried in order */
    int ndefaults;
    const char *const *syms;
    int nsyms;
    size_t size, fns_offset; /* the library struct, and where its function pointers start */
    void **loaded;           /* MAX_LIBS slots */
    const char *what;        /* "BLAS", "cuBLAS", for the message */
} lib_kind;

/* The library of kind k, loaded once per distinct name (lock held throughout); NULL with why
 * saying, per name tried, what was wrong. */
static void *load_lib(const lib_kind *k, char *why, size_t cap) {
    const char *env = getenv(k->env);
    const char *const *names = env && *env ? &env : k->defaults;
    int nnames = env && *env ? 1 : k->ndefaults;
    why[0] = '\0';
    pthread_mutex_lock(&libs_mu);
    void *found = NULL;
    for (int i = 0; i < MAX_LIBS && k->loaded[i] && !found; i++)
        for (int j = 0; j < nnames && !found; j++)
            if (!strcmp((const char *)k->loaded[i], names[j]))
                found = k->loaded[i];
    for (int j = 0; j < nnames && !found; j++) {
        void *h = dlopen(names[j], RTLD_NOW | RTLD_LOCAL);
        char one[512];
        if (!h) {
            const char *e = dlerror();
            snprintf(one, sizeof one, "%s", e ? e : names[j]);
            append(why, cap, one);
            continue;
        }
        char *l = pg__calloc(1, k->size);
        int slot = 0;
        while (slot < MAX_LIBS && k->loaded[slot])
            slot++;
        if (!l || slot == MAX_LIBS ||
            !resolve(h, k->syms, (void **)(l + k->fns_offset), k->nsyms, one, sizeof one,
                     names[j])) {
            if (!l || slot == MAX_LIBS)
                snprintf(one, sizeof one, "%s: out of memory or too many %s libraries", names[j],
                         k->what);
            append(why, cap, one);
            pg__free(l);
            dlclose(h);
            continue;
        }
        snprintf(l, 256, "%s", names[j]); /* the struct's name[256] */
        k->loaded[slot] = l;
        found = l;
    }
    pthread_mutex_unlock(&libs_mu);
    return found;
}

static const cblas_lib *load_cblas(char *why, size_t cap) {
    static const char *const syms[] = {"cblas_sgemm", "cblas_dgemm", "cblas_saxpy",
                                       "cblas_daxpy", "cblas_sdot",  "cblas_ddot"};
    static const char *const defaults[] = {"libopenblas.so.0", "libblas.so.3"};
    static const lib_kind k = {
        "PG_BLAS_LIB",       defaults, 2, syms, 6, sizeof(cblas_lib), offsetof(cblas_lib, sgemm),
        (void **)cblas_libs, "BLAS"};
    return load_lib(&k, why, cap);
}

static const cublas_lib *load_cublas(char *why, size_t cap) {
    static const char *const syms[] = {
        "cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2", "cublasSetPointerMode_v2",
        "cublasSgemm_v2",  "cublasDgemm_v2",   "cublasSaxpy_v2",     "cublasDaxpy_v2",
        "cublasSdot_v2",   "cublasDdot_v2"};
    static const char *const defaults[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    static const lib_kind k = {"PG_CUBLAS_LIB",
                               defaults,
                               3,
                               syms,
                               10,
                               sizeof(cublas_lib),
                               offsetof(cublas_lib, create),
                               (void **)cublas_libs,
                               "cuBLAS"};
    return load_lib(&k, why, cap);
}

/* ---- the tasks */

typedef enum { OP_GEMM, OP_AXPY, OP_DOT } blas_op;

typedef struct blas_task {
    blas_op op;
    int f64;
    const cblas_lib *cpu;
    const cublas_lib *gpu;
    void *handle[PG_MAX_DEVICES]; /* cuBLAS, per device, made on first use (under the lock) */
} blas_task;

static void blas_task_free(void *ctx) {
    blas_task *t = ctx;
    for (int d = 0; d < PG_MAX_DEVICES; d++)
        if (t->handle[d])
            t->gpu->destroy(t->handle[d]);
    pg__free(t);
}

static int64_t arg_i64(const pg_task_call *c, int i) {
    int64_t v;
    memcpy(&v, &c->args[i], sizeof v);
    return v;
}
static int arg_int(const pg_task_call *c, int i) {
    int v;
    memcpy(&v, &c->args[i], sizeof v);
    return v;
}
static double arg_f64(const pg_task_call *c, int i) {
    double v;
    memcpy(&v, &c->args[i], sizeof v);
    return v;
}
static void *arg_ptr(const pg_task_call *c, int i) {
    return (void *)(uintptr_t)c->args[i];
}

/* A size that BLAS's int takes. */
static pg_status size_ok(const pg_task_call *c, const char *what, int64_t v) {
    if (v < 0 || v > INT_MAX)
        return pg__error(PG_ERROR_ARGUMENT, "task '%s': %s = %lld is out of range (0 to %d)",
                         c->name, what, (long long)v, INT_MAX);
    return PG_OK;
}

static pg_status count_ok(const pg_task_call *c, int i, uint64_t need, const char *shape) {
    if (c->counts[i] >= need)
        return PG_OK;
    return pg__error(PG_ERROR_ARGUMENT,
                     "task '%s': array %s has %llu elements, fewer than the %llu that %s needs",
                     c->name, c->params[i].name, (unsigned long long)c->counts[i],
                     (unsigned long long)need, shape);
}

typedef struct gemm_args {
    int m, n, k, ta, tb, lda, ldb;
    double alpha, beta;
    const char *a; /* A's first element used: the array's, or a_offset elements on (tiles) */
} gemm_args;

static pg_status gemm_read(const pg_task_call *c, gemm_args *g) {
    int64_t m = arg_i64(c, 3), n = arg_i64(c, 4), k = arg_i64(c, 5);
    pg_status st = size_ok(c, "m", m);
    if (!st)
        st = size_ok(c, "n", n);
    if (!st)
        st = size_ok(c, "k", k);
    if (st)
        return st;
    g->m = (int)m;
    g->n = (int)n;
    g->k = (int)k;
    g->ta = arg_int(c, 6) != 0;
    g->tb = arg_int(c, 7) != 0;
    g->alpha = arg_f64(c, 8);
    g->beta = arg_f64(c, 9);
    char shape[128];
    snprintf(shape, sizeof shape, "m=%d n=%d k=%d", g->m, g->n, g->k);
    /* Leading dimensions of the row-major arrays as stored; at least 1, as BLAS checks. */
    g->lda = g->ta ? g->m : g->k;
    g->ldb = g->tb ? g->k : g->n;
    uint64_t need_a = (uint64_t)m * (uint64_t)k;
    int64_t off = 0;
    if (c->nargs == 12) { /* the tile variant: A's block starts a_offset elements in, rows lda */
        off = arg_i64(c, 10);
        int64_t lda = arg_i64(c, 11);
        if ((st = size_ok(c, "lda", lda)))
            return st;
        if (off < 0 || lda < (g->ta ? m : k))
            return pg__error(PG_ERROR_ARGUMENT,
                             "task '%s': a_offset = %lld and lda = %lld do not describe a block "
                             "of A (lda must be at least %lld)",
                             c->name, (long long)off, (long long)lda, (long long)(g->ta ? m : k));
        g->lda = (int)lda;
        int64_t rows = g->ta ? k : m, cols = g->ta ? m : k;
        need_a = rows && cols
                     ? (uint64_t)off + (uint64_t)(rows - 1) * (uint64_t)lda + (uint64_t)cols
                     : 0;
        snprintf(shape, sizeof shape, "m=%d n=%d k=%d a_offset=%lld lda=%lld", g->m, g->n, g->k,
                 (long long)off, (long long)lda);
    }
    if ((st = count_ok(c, 0, need_a, shape)) ||
        (st = count_ok(c, 1, (uint64_t)k * (uint64_t)n, shape)) ||
        (st = count_ok(c, 2, (uint64_t)m * (uint64_t)n, shape)))
        return st;
    g->a = (const char *)arg_ptr(c, 0) + (size_t)off * (size_t)pg_dtype_size(c->params[0].dtype);
    if (g->lda < 1)
        g->lda = 1;
    if (g->ldb < 1)
        g->ldb = 1;
    return PG_OK;
}

static pg_status vec_read(const pg_task_call *c, int nidx, int nvec, int *n) {
    int64_t v = arg_i64(c, nidx);
    pg_status st = size_ok(c, "n", v);
    char shape[64];
    snprintf(shape, sizeof shape, "n=%lld", (long long)v);
    for (int i = 0; !st && i < nvec; i++)
        st = count_ok(c, i, (uint64_t)v, shape);
    *n = (int)v;
    return st;
}

static pg_status cpu_blas(const pg_task_call *c) {
    const blas_task *t = c->ctx;
    const cblas_lib *l = t->cpu;
    pg_status st;
    if (t->op == OP_GEMM) {
        gemm_args g;
        if ((st = gemm_read(c, &g)))
            return st;
        int ta = g.ta ? CBLAS_TRANS : CBLAS_NO_TRANS, tb = g.tb ? CBLAS_TRANS : CBLAS_NO_TRANS;
        int ldc = g.n < 1 ? 1 : g.n;
        if (t->f64)
            l->dgemm(CBLAS_ROW_MAJOR, ta, tb, g.m, g.n, g.k, g.alpha, (const double *)g.a, g.lda,
                     arg_ptr(c, 1), g.ldb, g.beta, arg_ptr(c, 2), ldc);
        else
            l->sgemm(CBLAS_ROW_MAJOR, ta, tb, g.m, g.n, g.k, (float)g.alpha, (const float *)g.a,
                     g.lda, arg_ptr(c, 1), g.ldb, (float)g.beta, arg_ptr(c, 2), ldc);
        return PG_OK;
    }
    int n;
    if (t->op == OP_AXPY) {
        if ((st = vec_read(c, 2, 2, &n)))
            return st;
        double alpha = arg_f64(c, 3);
        if (t->f64)
            l->daxpy(n, alpha, arg_ptr(c, 0), 1, arg_ptr(c, 1), 1);
        else
            l->saxpy(n, (float)alpha, arg_ptr(c, 0), 1, arg_ptr(c, 1), 1);
        return PG_OK;
    }
    if ((st = vec_read(c, 3, 2, &n)) || (st = count_ok(c, 2, 1, "the result")))
        return st;
    if (t->f64)
        *(double *)arg_ptr(c, 2) = l->ddot(n, arg_ptr(c, 0), 1, arg_ptr(c, 1), 1);
    else
        *(float *)arg_ptr(c, 2) = l->sdot(n, arg_ptr(c, 0), 1, arg_ptr(c, 1), 1);
    return PG_OK;
}

static pg_status cublas_status(const pg_task_call *c, const char *fn, int r) {
    if (r == 0)
        return PG_OK;
    return pg__error(PG_ERROR_DEVICE, "task '%s': %s failed on GPU %d (cublasStatus_t %d)", c->name,
                     fn, c->device, r);
}

static pg_status gpu_blas(const pg_task_call *c) {
    blas_task *t = c->ctx;
    const cublas_lib *l = t->gpu;
    pg_status st;
    if (c->device < 0 || c->device >= PG_MAX_DEVICES)
        return pg__error(PG_ERROR_INTERNAL, "task '%s': device %d", c->name, c->device);
    void **h = &t->handle[c->device];
    if (!*h && (st = cublas_status(c, "cublasCreate", l->create(h))))
        return st;
    if ((st = cublas_status(c, "cublasSetStream", l->set_stream(*h, (void *)(uintptr_t)c->stream))))
        return st;
    if (t->op == OP_GEMM) {
        gemm_args g;
        if ((st = gemm_read(c, &g)))
            return st;
        if (!g.m || !g.n)
            return PG_OK;
        /* Row-major C is column-major C^T = op(B)^T op(A)^T: B and A swap places. */
        int ta = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
        if (t->f64)
            return cublas_status(c, "cublasDgemm",
                                 l->dgemm(*h, tb, ta, g.n, g.m, g.k, &g.alpha, arg_ptr(c, 1), g.ldb,
                                          (const double *)g.a, g.lda, &g.beta, arg_ptr(c, 2), g.n));
        float alpha = (float)g.alpha, beta = (float)g.beta;
        return cublas_status(c, "cublasSgemm",
                             l->sgemm(*h, tb, ta, g.n, g.m, g.k, &alpha, arg_ptr(c, 1), g.ldb,
                                      (const float *)g.a, g.lda, &beta, arg_ptr(c, 2), g.n));
    }
    int n;
    if (t->op == OP_AXPY) {
        if ((st = vec_read(c, 2, 2, &n)))
            return st;
        double alpha = arg_f64(c, 3);
        float alphaf = (float)alpha;
        if (t->f64)
            return cublas_status(c, "cublasDaxpy",
                                 l->daxpy(*h, n, &alpha, arg_ptr(c, 0), 1, arg_ptr(c, 1), 1));
        return cublas_status(c, "cublasSaxpy",
                             l->saxpy(*h, n, &alphaf, arg_ptr(c, 0), 1, arg_ptr(c, 1), 1));
    }
    if ((st = vec_read(c, 3, 2, &n)) || (st = count_ok(c, 2, 1, "the result")))
        return st;
    /* The result stays on the device, in stream order: no host synchronization. */
    if ((st = cublas_status(c, "cublasSetPointerMode", l->set_pointer_mode(*h, CUBLAS_PTR_DEVICE))))
        return st;
    int r = t->f64 ? l->ddot(*h, n, arg_ptr(c, 0), 1, arg_ptr(c, 1), 1, arg_ptr(c, 2))
                   : l->sdot(*h, n, arg_ptr(c, 0), 1, arg_ptr(c, 1), 1, arg_ptr(c, 2));
    int r2 = l->set_pointer_mode(*h, CUBLAS_PTR_HOST);
    st = cublas_status(c, t->f64 ? "cublasDdot" : "cublasSdot", r);
    return st ? st : cublas_status(c, "cublasSetPointerMode", r2);
}

typedef struct builtin {
    const char *name;
    blas_op op;
    int f64;
    const char *signature;
} builtin;

#define GEMM_SIG(T)                                                                                \
    "in const " T " *a, in const " T " *b, inout " T " *c, int64_t m, int64_t n, int64_t k, "      \
    "int trans_a, int trans_b, double alpha, double beta"
/* The tiled GEMM's task (linalg/gemm.c): A's block at a_offset with rows of lda elements; C
 * "out" when beta is 0 (its old rows need not travel), else "inout". */
#define GEMM_TILE_SIG(T, CACC)                                                                     \
    "in const " T " *a, in const " T " *b, " CACC " " T " *c, int64_t m, int64_t n, int64_t k, "   \
    "int trans_a, int trans_b, double alpha, double beta, int64_t a_offset, int64_t lda"
#define AXPY_SIG(T) "in const " T " *x, inout " T " *y, int64_t n, double alpha"
#define DOT_SIG(T) "in const " T " *x, in const " T " *y, out " T " *result, int64_t n"

static const builtin builtins[] = {
    {"gemm_f32", OP_GEMM, 0, GEMM_SIG("float")},
    {"gemm_f64", OP_GEMM, 1, GEMM_SIG("double")},
    {"axpy_f32", OP_AXPY, 0, AXPY_SIG("float")},
    {"axpy_f64", OP_AXPY, 1, AXPY_SIG("double")},
    {"dot_f32", OP_DOT, 0, DOT_SIG("float")},
    {"dot_f64", OP_DOT, 1, DOT_SIG("double")},
    {"gemm_tile_f32", OP_GEMM, 0, GEMM_TILE_SIG("float", "inout")},
    {"gemm_tile_f64", OP_GEMM, 1, GEMM_TILE_SIG("double", "inout")},
    {"gemm_tile_out_f32", OP_GEMM, 0, GEMM_TILE_SIG("float", "out")},
    {"gemm_tile_out_f64", OP_GEMM, 1, GEMM_TILE_SIG("double", "out")},
};

pg_status pg_task_builtin(pg_runtime *rt, const char *name, pg_kernel **out) {
    pg__error_clear();
    if (!name || !out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_task_builtin: name and out are required");
    const builtin *b = NULL;
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins && !b; i++)
        if (!strcmp(builtins[i].name, name))
            b = &builtins[i];
    if (!b)
        return pg__error(PG_ERROR_NOT_FOUND,
                         "pg_task_builtin: no built-in task '%s' (there are gemm_f32, gemm_f64, "
                         "axpy_f32, axpy_f64, dot_f32, dot_f64, gemm_tile_f32, gemm_tile_f64, "
                         "gemm_tile_out_f32, gemm_tile_out_f64)",
                         name);
    pg_device_info info[PG_MAX_DEVICES];
    int n = 0;
    pg_status st = pg_runtime_devices(rt, info, PG_MAX_DEVICES, &n);
    if (st)
        return st;
    int has_cpu = 0, has_gpu = 0;
    for (int d = 0; d < n && d < PG_MAX_DEVICES; d++) {
        /* The slot of pg_task_impls a device's calls take: its class's (cpu or cuda). */
        has_cpu |= info[d].device_class == PG_CLASS_CPU;
        has_gpu |= info[d].device_class == PG_CLASS_GPU;
    }
    char cpu_why[1024] = "", gpu_why[1024] = "";
    const cblas_lib *cpu = has_cpu ? load_cblas(cpu_why, sizeof cpu_why) : NULL;
    const cublas_lib *gpu = has_gpu ? load_cublas(gpu_why, sizeof gpu_why) : NULL;
    if (!cpu && !gpu) {
        char msg[2600] = "";
        if (has_cpu)
            snprintf(msg, sizeof msg,
                     "OpenBLAS could not be loaded for the CPU devices (%s): install it (Debian "
                     "or Ubuntu: apt-get install libopenblas0-pthread, or libopenblas0), or name "
                     "a CBLAS library in PG_BLAS_LIB",
                     cpu_why);
        if (has_gpu) {
            size_t len = strlen(msg);
            snprintf(msg + len, sizeof msg - len,
                     "%scuBLAS could not be loaded for the GPUs (%s): install the CUDA toolkit's "
                     "cuBLAS or `pip install nvidia-cublas-cu12`, or name the library in "
                     "PG_CUBLAS_LIB",
                     len ? "; " : "", gpu_why);
        }
        return pg__error(PG_ERROR_NOT_FOUND, "built-in task '%s': %s", name, msg);
    }
    blas_task *t = pg__calloc(1, sizeof *t);
    if (!t)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    t->op = b->op;
    t->f64 = b->f64;
    t->cpu = cpu;
    t->gpu = gpu;
    pg_task_impls impls = {cpu ? cpu_blas : NULL, gpu ? gpu_blas : NULL, t, blas_task_free};
    st = pg_task_new(rt, name, &impls, b->signature, out);
    if (st)
        pg__free(t);
    return st;
}

/* test_fault_injection.c: SQLite-style fault injection (base/inject.h, devices/host/
 * host_inject.h). A representative API sequence (create a runtime, arrays, kernels; launch,
 * write, read, map, prefetch, sync, export, free, close) runs with the library's N-th heap
 * allocation failing, for every N until the sequence runs through without reaching it; then
 * again with the N-th call of a CPU-device backend operation failing (an allocation, a memset,
 * a stream, an event, a copy, a kernel build or load, a launch). Each call must succeed or fail
 * with a message (an allocation failing: PG_ERROR_OUT_OF_MEMORY, never disguised as another
 * error); a read that succeeds must give the value the calls that succeeded imply; afterwards
 * the same runtime must still work, its DAG show what ran and no device memory stay counted
 * (or, when its creation or close failed, a new runtime works), and under ASan nothing may
 * leak. Further walks fail allocations in the source rewrite, in DAG records, in loading a
 * cached kernel and in real compilations (each kernel built so must compute right).
 * Usage: test_fault_injection [alloc|ops|rewrite|record|load|compile [first-N [last-N]]];
 * PG_INJECT_VERBOSE=1 prints every failed call. */
#include "kernels_common.h"

#include "base/inject.h"
#include "core/observe.h"
#include "devices/host/host_inject.h"
#include "nvrtc/cpu_rewrite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 48
#define MAX_WALK 20000 /* a walk that never ends is a bug of its own */

typedef struct injector {
    const char *name;
    void (*arm)(uint64_t n);
    uint64_t (*disarm)(void);
} injector;

static unsigned ops_mask;
static void ops_arm(uint64_t n) {
    pg__inject_ops_arm(ops_mask, n);
}

/* The walk in progress, for messages. */
static const char *walk_name;
static uint64_t walk_n;
static int verbose;
static uint64_t first_n = 1, last_n = MAX_WALK; /* argv: walk name, first and last N */
static uint64_t calls_failed;
static int only_oom; /* allocations fail: every error must say so (not disguised as another) */
static char tmp_dir[64];
static const char *cache_dir; /* kernel cache (pre-warmed), NULL: the default */

/* A call made with injection armed: OK, or an error with a message of a sensible kind. */
static pg_status step(pg_status st, const char *what, int line) {
    if (st == PG_OK)
        return st;
    calls_failed++;
    if (verbose)
        fprintf(stderr, "  %s N=%llu: line %d %s -> %s: %s\n", walk_name,
                (unsigned long long)walk_n, line, what, pg_status_name(st), pg_last_error());
    if (!pg_last_error()[0]) {
        fprintf(stderr, "%s N=%llu: line %d: %s returned %s with no message\n", walk_name,
                (unsigned long long)walk_n, line, what, pg_status_name(st));
        pg_check_failures++;
    }
    /* Running out of memory or a device failing is no caller's mistake and no bug. */
    if (st == PG_ERROR_ARGUMENT || st == PG_ERROR_INTERNAL || st == PG_ERROR_NOT_FOUND ||
        (only_oom && st != PG_ERROR_OUT_OF_MEMORY)) {
        fprintf(stderr, "%s N=%llu: line %d: %s returned %s: %s\n", walk_name,
                (unsigned long long)walk_n, line, what, pg_status_name(st), pg_last_error());
        pg_check_failures++;
    }
    return st;
}
#define STEP(call) step((call), #call, __LINE__)

#define FAIL_IF(cond, ...)                                                                         \
    do {                                                                                           \
        if (cond) {                                                                                \
            fprintf(stderr, "%s N=%llu: line %d: ", walk_name, (unsigned long long)walk_n,         \
                    __LINE__);                                                                     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            pg_check_failures++;                                                                   \
        }                                                                                          \
    } while (0)

/* What the sequence made, and the values the calls that returned PG_OK imply. */
typedef struct world {
    pg_runtime *rt;
    pg_array *x, *y;
    pg_kernel *fill, *add1;
    float mx[N], my[N];
    int launched; /* an add1 launch was accepted: the DAG shows it */
} world;

/* host:2, the pre-warmed cache, and a trace written at close (so that closing allocates too). */
static pg_status new_runtime(pg_runtime **rt) {
    static char trace[128];
    snprintf(trace, sizeof trace, "%s/close-trace.json", tmp_dir);
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:2";
    o.cache_dir = cache_dir;
    o.trace = trace;
    *rt = NULL;
    return pg_runtime_new(&o, rt);
}

/* A read that succeeds gives the model's value; one that fails says why. */
static void check_read(pg_array *a, const float *model, const char *name, int line) {
    float got[N];
    if (step(pg_array_read(a, 0, N, got), "pg_array_read", line))
        return;
    for (int i = 0; i < N; i++) {
        if (got[i] != model[i]) {
            FAIL_IF(1, "read of %s (line %d) gave %g at %d, expected %g", name, line, got[i], i,
                    model[i]);
            return;
        }
    }
}

static pg_status launch_fill(pg_kernel *k, pg_array *y, float v) {
    pg_arg args[3] = {pg_arg_array(y), pg_arg_float(v), pg_arg_int(N)};
    return pg_kernel_launch(k, dim1(2), dim1(32), 0, args, 3);
}

static pg_status launch_add1(pg_kernel *k, pg_array *y, pg_array *x) {
    pg_arg args[3] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    return pg_kernel_launch(k, dim1(2), dim1(32), 0, args, 3);
}

static void sequence(world *w) {
    if (STEP(new_runtime(&w->rt))) {
        w->rt = NULL;
        return;
    }
    pg_runtime *rt = w->rt;
    int64_t n = N;
    if (STEP(pg_array_new(rt, PG_FLOAT32, 1, &n, &w->x)))
        w->x = NULL;
    if (STEP(pg_array_new(rt, PG_FLOAT32, 1, &n, &w->y)))
        w->y = NULL;
    if (STEP(pg_kernel_new(rt, TEST_SRC, "fill", NULL, NULL, &w->fill)))
        w->fill = NULL;
    if (STEP(pg_kernel_new(rt, TEST_SRC, "add1", NULL, NULL, &w->add1)))
        w->add1 = NULL;
    if (w->x) {
        float v[N];
        for (int i = 0; i < N; i++)
            v[i] = (float)i;
        if (!STEP(pg_array_write(w->x, 0, N, v)))
            memcpy(w->mx, v, sizeof v);
    }
    if (w->fill && w->y && !STEP(launch_fill(w->fill, w->y, 2.5f)))
        for (int i = 0; i < N; i++)
            w->my[i] = 2.5f;
    if (w->add1 && w->x && w->y && !STEP(launch_add1(w->add1, w->y, w->x))) {
        w->launched = 1;
        for (int i = 0; i < N; i++)
            w->my[i] = w->mx[i] + 1.0f;
    }
    if (w->x)
        STEP(pg_array_prefetch(w->x, 1));
    if (w->y) {
        STEP(pg_array_prefetch(w->y, PG_HOST));
        check_read(w->y, w->my, "y", __LINE__);
    }
    if (w->x) {
        float *p = NULL;
        if (!STEP(pg_array_map(w->x, PG_ACCESS_INOUT, (void **)&p))) {
            for (int i = 0; i < N; i++) {
                FAIL_IF(p[i] != w->mx[i], "mapped x[%d] = %g, expected %g", i, p[i], w->mx[i]);
                p[i] = w->mx[i] = 3.0f * (float)i;
            }
            /* An unmap that fails leaves the mapping open: it must be possible to end it. */
            if (STEP(pg_array_unmap(w->x)))
                CHECK_OK(pg_array_unmap(w->x));
        }
    }
    if (w->add1 && w->x && w->y && !STEP(launch_add1(w->add1, w->y, w->x))) {
        w->launched = 1;
        for (int i = 0; i < N; i++)
            w->my[i] = w->mx[i] + 1.0f;
    }
    if (w->x)
        STEP(pg_array_prefetch(w->x, 0));
    STEP(pg_runtime_sync(rt));
    char *s = NULL;
    if (!STEP(pg_dag_export_string(rt, PG_DAG_JSON, &s)))
        FAIL_IF(w->launched && (!s || !strstr(s, "add1")), "the JSON export lacks the kernel");
    pg_string_free(s);
    s = NULL;
    if (!STEP(pg_dag_export_string(rt, PG_DAG_DOT, &s)))
        FAIL_IF(w->launched && (!s || !strstr(s, "add1")), "the DOT export lacks the kernel");
    pg_string_free(s);
    char path[128];
    snprintf(path, sizeof path, "%s/trace.json", tmp_dir);
    STEP(pg_trace_write(rt, path));
    pg_stats stats;
    STEP(pg_runtime_stats(rt, &stats));
    if (w->x) {
        check_read(w->x, w->mx, "x", __LINE__);
        if (!STEP(pg_array_free(w->x)))
            w->x = NULL;
    }
    if (w->y)
        check_read(w->y, w->my, "y", __LINE__);
}

static uint64_t count_of(const char *s, const char *needle) {
    uint64_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* The DAG shows what ran, and nothing that did not: as many kernels, copies and host accesses
 * as the counters say were accepted. */
static void check_dag(pg_runtime *rt) {
    char *s = NULL;
    pg_stats stats;
    CHECK_OK(pg_runtime_stats(rt, &stats));
    CHECK_OK(pg_dag_export_string(rt, PG_DAG_JSON, &s));
    if (!s)
        return;
    uint64_t kernels = count_of(s, "\"kind\":\"kernel\""),
             copies = count_of(s, "\"kind\":\"copy\"");
    uint64_t host = count_of(s, "\"kind\":\"host_read\"") + count_of(s, "\"kind\":\"host_write\"");
    FAIL_IF(kernels != stats.kernels || copies != stats.copies || host != stats.host_accesses,
            "the DAG shows %llu kernels, %llu copies, %llu host accesses; the counters say %llu, "
            "%llu, %llu",
            (unsigned long long)kernels, (unsigned long long)copies, (unsigned long long)host,
            (unsigned long long)stats.kernels, (unsigned long long)stats.copies,
            (unsigned long long)stats.host_accesses);
    pg_string_free(s);
}

/* Injection off: what is left still holds the model's values (or says it lost them), and the
 * runtime still computes: a fresh array filled by a kernel reads back right. Then every array
 * is freed and no device memory stays counted. */
static void verify(world *w) {
    pg_runtime *rt = w->rt;
    if (!rt) {
        REQUIRE_OK(new_runtime(&rt));
        w->rt = rt;
    }
    check_dag(rt);
    if (w->x)
        check_read(w->x, w->mx, "x", __LINE__);
    if (w->y)
        check_read(w->y, w->my, "y", __LINE__);
    pg_kernel *k = NULL;
    pg_array *z = NULL;
    int64_t n = N;
    CHECK_OK(pg_kernel_new(rt, TEST_SRC, "fill", NULL, NULL, &k));
    CHECK_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &z));
    if (k && z) {
        CHECK_OK(launch_fill(k, z, 7.0f));
        float got[N], want[N];
        for (int i = 0; i < N; i++)
            want[i] = 7.0f;
        pg_status st = pg_array_read(z, 0, N, got);
        CHECK_OK(st);
        FAIL_IF(!st && memcmp(got, want, sizeof got) != 0, "a fresh launch after the failure: %g",
                got[0]);
    }
    if (w->y) {
        /* An array whose value was lost can be written again. */
        for (int i = 0; i < N; i++)
            w->my[i] = 9.0f;
        CHECK_OK(pg_array_write(w->y, 0, N, w->my));
        check_read(w->y, w->my, "y rewritten", __LINE__);
    }
    CHECK_OK(pg_array_free(z));
    CHECK_OK(pg_kernel_free(k));
    if (w->x)
        CHECK_OK(pg_array_free(w->x));
    if (w->y)
        CHECK_OK(pg_array_free(w->y));
    w->x = w->y = NULL;
    CHECK_OK(pg_runtime_sync(rt));
    pg_stats stats;
    CHECK_OK(pg_runtime_stats(rt, &stats));
    for (int d = 0; d < stats.ndevices; d++)
        FAIL_IF(stats.device_bytes[d] != 0, "device %d still counts %llu bytes with no array", d,
                (unsigned long long)stats.device_bytes[d]);
}

/* Walk N = 1, 2, ... until the sequence and the close run through without reaching the N-th
 * injection point. Returns the number of points walked. */
static uint64_t walk(const injector *inj) {
    walk_name = inj->name;
    uint64_t n;
    for (n = first_n; n < MAX_WALK && n <= last_n; n++) {
        walk_n = n;
        world w;
        memset(&w, 0, sizeof w);
        inj->arm(n);
        sequence(&w);
        uint64_t counted = inj->disarm();
        if (counted >= n) {
            /* The N-th point was in the sequence: the same runtime must still work. */
            verify(&w);
            CHECK_OK(pg_runtime_free(w.rt));
            continue;
        }
        /* Not yet reached: it may be in the close. */
        uint64_t left = n - counted;
        inj->arm(left);
        if (w.rt)
            STEP(pg_runtime_free(w.rt));
        counted = inj->disarm();
        if (counted < left)
            break; /* the whole sequence ran without reaching N */
        /* The N-th point was in the close: it closed all the same (ASan says if memory was
         * left), and a new runtime works. */
        if (w.rt)
            CHECK_STATUS(pg_runtime_sync(w.rt), PG_ERROR_STATE);
        world fresh;
        memset(&fresh, 0, sizeof fresh);
        verify(&fresh);
        CHECK_OK(pg_runtime_free(fresh.rt));
    }
    FAIL_IF(n >= MAX_WALK, "the walk did not end");
    printf("%s: %llu injection points walked, %llu calls failed\n", inj->name,
           (unsigned long long)(n - 1), (unsigned long long)calls_failed);
    calls_failed = 0;
    return n - 1;
}

static void alloc_arm(uint64_t n) {
    pg__inject_alloc_arm(n);
}

/* A kernel whose extern __shared__ array is declared at namespace scope: the CPU compiler
 * rewrites it, differently inside a function. %llu makes each source new to the cache. */
static const char *COMPILE_SRC = "// fault-injection walk, point %llu\n"
                                 "extern __shared__ float stage[];\n"
                                 "extern \"C\" __global__ void twice(float *y, int n) {\n"
                                 "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                 "  stage[threadIdx.x] = i < n ? y[i] : 0.0f;\n"
                                 "  if (i < n) y[i] = 2.0f * stage[threadIdx.x]; }\n";

/* Launch `twice` on y = 0, 1, 2, ... and check it doubles them. */
static void check_twice(pg_runtime *rt, pg_kernel *k) {
    pg_array *y = NULL;
    int64_t n = N;
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &y));
    float v[N], got[N];
    for (int i = 0; i < N; i++)
        v[i] = (float)i;
    CHECK_OK(pg_array_write(y, 0, N, v));
    pg_arg args[2] = {pg_arg_array(y), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(k, dim1(2), dim1(32), 32 * sizeof(float), args, 2));
    pg_status st = pg_array_read(y, 0, N, got);
    CHECK_OK(st);
    for (int i = 0; !st && i < N; i++)
        if (got[i] != 2.0f * (float)i) {
            FAIL_IF(1, "the kernel built under injection gave %g at %d, expected %g", got[i], i,
                    2.0f * (float)i);
            break;
        }
    CHECK_OK(pg_array_free(y));
}

/* pg_kernel_new under allocation injection, on one runtime (no threads start per point): for
 * each N the kernel either fails with a message, or computes right and is found again; and the
 * runtime goes on (`fill`, made before, still works). unique: each N's source is new to the
 * cache, so the compiler runs; else the source is in the cache (not loaded), so it is loaded. */
static uint64_t kernel_walk(const char *name, pg_runtime *rt, pg_kernel *fill, int unique) {
    walk_name = name;
    uint64_t n;
    for (n = first_n; n < MAX_WALK && n <= last_n; n++) {
        walk_n = n;
        char src[1024];
        snprintf(src, sizeof src, COMPILE_SRC, unique ? (unsigned long long)n : 0ULL);
        pg_kernel *k = NULL;
        pg__inject_alloc_arm(n);
        pg_status st = STEP(pg_kernel_new(rt, src, "twice", NULL, NULL, &k));
        uint64_t counted = pg__inject_alloc_disarm();
        if (!st) {
            check_twice(rt, k);
            CHECK_OK(pg_kernel_free(k));
            k = NULL;
            CHECK_OK(pg_kernel_new(rt, src, "twice", NULL, NULL, &k));
            if (k)
                check_twice(rt, k);
            CHECK_OK(pg_kernel_free(k));
        }
        pg_array *y = NULL;
        int64_t len = N;
        CHECK_OK(pg_array_new(rt, PG_FLOAT32, 1, &len, &y));
        if (y) {
            float got[N];
            CHECK_OK(launch_fill(fill, y, 4.0f));
            CHECK_OK(pg_array_read(y, 0, N, got));
            FAIL_IF(got[N - 1] != 4.0f, "fill after the failure gave %g", got[N - 1]);
            CHECK_OK(pg_array_free(y));
        }
        if (counted < n)
            break;
    }
    printf("%s: %llu injection points walked, %llu calls failed\n", walk_name,
           (unsigned long long)(n - 1), (unsigned long long)calls_failed);
    calls_failed = 0;
    return n - 1;
}

/* The source rewrite on its own: under injection it fails with a message or gives exactly the
 * text it gives without (never another kernel, which the cache would keep under this source's
 * key). */
static uint64_t rewrite_walk(void) {
    walk_name = "rewrite allocations";
    char src[1024], *want = NULL;
    snprintf(src, sizeof src, COMPILE_SRC, 0ULL);
    REQUIRE_OK(pg__cpu_rewrite_shared(src, "twice", &want));
    uint64_t n;
    for (n = 1; n < MAX_WALK; n++) {
        walk_n = n;
        char *got = NULL;
        pg__inject_alloc_arm(n);
        pg_status st = STEP(pg__cpu_rewrite_shared(src, "twice", &got));
        uint64_t counted = pg__inject_alloc_disarm();
        FAIL_IF(!st && strcmp(got, want) != 0,
                "the rewrite under injection gave\n%s\ninstead of\n%s", got, want);
        free(got);
        if (counted < n)
            break;
    }
    free(want);
    printf("%s: %llu injection points walked, %llu calls failed\n", walk_name,
           (unsigned long long)(n - 1), (unsigned long long)calls_failed);
    calls_failed = 0;
    return n - 1;
}

/* A DAG record, then the copy scheduling adds as its parent (pg__dag_record_add_parent): under
 * injection either fails with a message, or the record shows the edge. On a bare runtime: the
 * record ring is all these functions use. */
static uint64_t record_walk(void) {
    walk_name = "DAG record allocations";
    pg__runtime *rt = calloc(1, sizeof *rt);
    REQUIRE_OK(rt ? PG_OK : PG_ERROR_OUT_OF_MEMORY);
    rt->records = pg__records_new();
    REQUIRE_OK(rt->records ? PG_OK : PG_ERROR_OUT_OF_MEMORY);
    pg__array a = {.id = 7};
    pg__comp parent = {.id = 1};
    pg__comp c = {.id = 2, .nargs = 1, .args = c.args_in, .nparents = 1, .parents = c.parents_in};
    c.args_in[0] = (pg__carg){&a, PG_ACCESS_IN};
    c.parents_in[0] = &parent;
    uint64_t n;
    for (n = 1; n < MAX_WALK; n++) {
        walk_n = n;
        pg__inject_alloc_arm(n);
        pg_status st = STEP(pg__dag_record(rt, &c, "k"));
        if (!st)
            st = STEP(pg__dag_record_add_parent(rt, &c, 5));
        uint64_t counted = pg__inject_alloc_disarm();
        pg__record *r = &rt->records[c.id % PG_DAG_HISTORY];
        FAIL_IF(!st && (r->nparents != 2 || r->parent_ids[1] != 5),
                "the record lost the copy's edge (%d parents)", r->nparents);
        if (counted < n)
            break;
    }
    pg__records_free(rt->records);
    free(rt);
    printf("%s: %llu injection points walked, %llu calls failed\n", walk_name,
           (unsigned long long)(n - 1), (unsigned long long)calls_failed);
    calls_failed = 0;
    return n - 1;
}

/* The path of a program found in PATH (1), as a shell would. */
static int find_in_path(const char *name, char *out, size_t cap) {
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(out, cap, "%.*s/%s", (int)n, p, name);
        if (n && access(out, X_OK) == 0)
            return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

int main(int argc, char **argv) {
    verbose = getenv("PG_INJECT_VERBOSE") != NULL;
    cache_dir = getenv("PG_CACHE_DIR");
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/pg-inject-XXXXXX");
    REQUIRE_OK(mkdtemp(tmp_dir) ? PG_OK : PG_ERROR_IO);
    const char *only = argc > 1 ? argv[1] : NULL;
    if (argc > 2)
        first_n = strtoull(argv[2], NULL, 10);
    if (argc > 3)
        last_n = strtoull(argv[3], NULL, 10);

    /* Warm the kernel cache, and see the sequence run clean once. Its runtime stays open with
     * its kernels: every later load of them shares their mapping (nvrtc/cpu_compile.c), so the
     * walks do not dlopen and dlclose a library per point, which under TSan (GCC 12) ends, after
     * about a hundred cycles, with a thread start mapping shadow for a bogus TLS range. */
    pg__inject_ops_enable();
    world keep;
    memset(&keep, 0, sizeof keep);
    walk_name = "warm-up";
    sequence(&keep);
    CHECK(calls_failed == 0);
    verify(&keep);
    char src0[1024];
    snprintf(src0, sizeof src0, COMPILE_SRC, 0ULL);
    pg_kernel *k0 = NULL; /* in the cache, not loaded: for the load walk */
    REQUIRE_OK(pg_kernel_new(keep.rt, src0, "twice", NULL, NULL, &k0));
    CHECK_OK(pg_kernel_free(k0));

    injector alloc = {"allocations", alloc_arm, pg__inject_alloc_disarm};
    injector ops = {"backend operations", ops_arm, pg__inject_ops_disarm};
    uint64_t total = 0;
    only_oom = 1;
    if (!only || !strcmp(only, "alloc"))
        total += walk(&alloc);
    only_oom = 0;
    ops_mask = PG__INJ_ALL_OPS;
    if (!only || !strcmp(only, "ops"))
        total += walk(&ops);
    only_oom = 1;
    if (!only || !strcmp(only, "rewrite"))
        total += rewrite_walk();
    if (!only || !strcmp(only, "record"))
        total += record_walk();
    if (!only || !strcmp(only, "load"))
        total += kernel_walk("kernel load allocations", keep.rt, keep.fill, 0);
    if (!only || !strcmp(only, "compile")) {
        /* A cache of its own, so that each point compiles afresh (and fill once). */
        char dir[128];
        snprintf(dir, sizeof dir, "%s/compile-cache", tmp_dir);
        pg_options o;
        pg_options_init(&o);
        o.devices = "host:1";
        o.cache_dir = dir;
        pg_runtime *rt = NULL;
        pg_kernel *fill = NULL;
        REQUIRE_OK(pg_runtime_new(&o, &rt));
        REQUIRE_OK(pg_kernel_new(rt, TEST_SRC, "fill", NULL, NULL, &fill));
        /* The compiler named explicitly: running out of memory looking for it must not
         * read as its absence (nor pick another). */
        char cxx[4096];
        if (find_in_path("c++", cxx, sizeof cxx) || find_in_path("g++", cxx, sizeof cxx))
            setenv("PG_CXX", cxx, 1);
        total += kernel_walk("compile allocations", rt, fill, 1);
        unsetenv("PG_CXX");
        CHECK_OK(pg_runtime_free(rt));
    }
    only_oom = 0;
    printf("%llu injection points in all\n", (unsigned long long)total);
    CHECK_OK(pg_runtime_free(keep.rt));

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_dir);
    CHECK_DONE();
}

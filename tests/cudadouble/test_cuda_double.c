/* test_cuda_double.c: the CUDA backend (devices/cuda) on two fake GPUs (fake_cuda.c, loaded as
 * libcuda.so.1 through LD_LIBRARY_PATH; fake_nvrtc.c through PG_NVRTC_PATH), with SQLite-style
 * fault injection: a workload (arrays, kernels, a chunked output copied while its kernel runs,
 * copies between the two GPUs and the host, a map, a recorded graph replayed, sync, reads,
 * close) runs with the driver's N-th call failing, for N = 1, 2, ... until the workload and its
 * close run through without reaching N. Each call must succeed or fail with a message; a read
 * that succeeds must give the value the calls that succeeded imply; afterwards the same runtime
 * must still work (or, when its creation or close failed, a new one must), no device memory
 * stay counted, the close leave nothing for the contexts' end to free (unless a free failed),
 * and the driver must have seen no use of memory it had freed or never handed out
 * (fake_cuda_violations). Under ASan nothing may leak (checked after every N).
 * Walks: "calls" (a call fails once: out of memory for allocations, CUDA_ERROR_UNKNOWN else),
 * "kept" (a call fails with CUDA_ERROR_ILLEGAL_ADDRESS and its context keeps the fault, as after
 * a kernel's illegal access: that GPU is out for the runtime, the other goes on, and a new
 * runtime finds it out for the process), "pairs" (the N-th and (N+1)-th calls fail: a failure,
 * then the call that cleans up after it), "alloc" (the library's N-th heap allocation fails, on
 * the fake GPUs: the CUDA backend's own allocations included). Not registered in CTest yet:
 * under it pg_kernel_new of a kernel with chunked outputs says "its definition was not found
 * in the source to wrap" (PG_ERROR_NOT_FOUND) when an allocation fails, since
 * pg__signature_demote (nvrtc/signature_source.c) answers NULL for both.
 * Usage: test_cuda_double [clean|calls|kept|pairs|alloc [first-N [last-N]]]; PG_INJECT_VERBOSE=1
 * prints every failed call; PG_TEST_MEMLIMIT sets device_memory_limit (bytes per GPU; 600 evicts);
 * PG_TEST_STREAMS sets the stream policy (always-new: a stream per
 * computation, so that every ordering is a cross-stream wait); FAKE_CUDA_VERBOSE=1..3 has the
 * double say what it does. */
#include "tests/c/kernels_common.h"

#include "base/inject.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() __lsan_do_recoverable_leak_check()
#else
#define LEAK_CHECK() 0
#endif

#define N 48
#define MAX_WALK 5000

static void (*fake_arm)(uint64_t n, int keep);
static void (*fake_arm_run)(uint64_t n, uint64_t run);
static uint64_t (*fake_disarm)(void);
static const char *(*fake_failed_call)(void);
static const char *(*fake_failed_calls)(void);
static uint64_t (*fake_violations)(void);
static uint64_t (*fake_reclaimed)(void);
static uint64_t (*fake_graphs_reclaim)(void);
static int (*fake_release_all)(void);
static int (*fake_restart)(void);

/* The walk's injector: the driver's N-th call, or (alloc) the library's N-th heap allocation
 * (base/inject.h), on the fake GPUs: the CUDA backend's own allocations fail too. */
static int heap_walk;
static int run_walk; /* pairs: the N-th and the (N+1)-th driver calls fail */

static const char *failed_call(void) {
    return heap_walk ? "heap allocation" : fake_failed_call();
}

/* Did the driver call `name` fail since the arm? */
static int call_failed(const char *name) {
    char word[64];
    snprintf(word, sizeof word, " %s", name);
    const char *all = heap_walk ? "" : fake_failed_calls();
    size_t n = strlen(word);
    for (const char *p = all; (p = strstr(p, word)); p += n)
        if (p[n] == ' ' || p[n] == 0)
            return 1;
    return 0;
}

static const char *walk_name = "clean";
static uint64_t walk_n;
static int verbose, keep_faults;
static uint64_t calls_failed;
static char tmp_dir[64];

static pg_status step(pg_status st, const char *what, int line) {
    if (st == PG_OK)
        return st;
    calls_failed++;
    if (verbose)
        fprintf(stderr, "  %s N=%llu (%s): line %d %s -> %s: %s\n", walk_name,
                (unsigned long long)walk_n, failed_call(), line, what, pg_status_name(st),
                pg_last_error());
    if (!pg_last_error()[0]) {
        fprintf(stderr, "%s N=%llu: line %d: %s returned %s with no message\n", walk_name,
                (unsigned long long)walk_n, line, what, pg_status_name(st));
        pg_check_failures++;
    }
    /* A driver call failing is no caller's mistake and no internal error. */
    if (st == PG_ERROR_ARGUMENT || st == PG_ERROR_INTERNAL || st == PG_ERROR_NOT_FOUND) {
        fprintf(stderr, "%s N=%llu (%s): line %d: %s returned %s: %s\n", walk_name,
                (unsigned long long)walk_n, failed_call(), line, what, pg_status_name(st),
                pg_last_error());
        pg_check_failures++;
    }
    return st;
}
#define STEP(call) step((call), #call, __LINE__)

#define FAIL_IF(cond, ...)                                                                         \
    do {                                                                                           \
        if (cond) {                                                                                \
            fprintf(stderr, "%s N=%llu (%s): line %d: ", walk_name, (unsigned long long)walk_n,    \
                    failed_call(), __LINE__);                                                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            pg_check_failures++;                                                                   \
        }                                                                                          \
    } while (0)

typedef struct world {
    pg_runtime *rt;
    pg_array *x, *y, *z, *c;
    pg_kernel *fill, *fillc, *add1, *sum2;
    float mx[N], my[N], mz[N], mc[N];
    int launched;
} world;

static pg_status new_runtime(pg_runtime **rt) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "cuda";
    o.policy = "round-robin"; /* work on both GPUs, data copied between them */
    o.cache_dir = tmp_dir;
    o.stream_policy = getenv("PG_TEST_STREAMS") ? getenv("PG_TEST_STREAMS") : "fifo";
    if (getenv("PG_TEST_MEMLIMIT")) /* bytes per GPU: evictions under the faults */
        o.device_memory_limit = strtoull(getenv("PG_TEST_MEMLIMIT"), NULL, 10);
    o.models = "on"; /* kernels timed with events, and models written at close */
    *rt = NULL;
    return pg_runtime_new(&o, rt);
}

/* Each run starts from the same state: no performance models from the runs before (they
 * decide which launches are timed, so the calls made and the N of each). */
static void forget_models(void) {
    char dir[160], path[512];
    snprintf(dir, sizeof dir, "%s/models", tmp_dir);
    DIR *d = opendir(dir); /* files only: one per device class (core/models.c) */
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (unlink(path))
                fprintf(stderr, "could not remove %s\n", path);
        }
    closedir(d);
    rmdir(dir);
}

static void check_read(pg_array *a, const float *model, const char *name, int line) {
    float got[N];
    if (step(pg_array_read(a, 0, N, got), "pg_array_read", line))
        return;
    for (int i = 0; i < N; i++)
        if (got[i] != model[i]) {
            FAIL_IF(1, "read of %s (line %d) gave %g at %d, expected %g", name, line, got[i], i,
                    model[i]);
            return;
        }
}

static void set(float *m, float v) {
    for (int i = 0; i < N; i++)
        m[i] = v;
}

static pg_status launch3(pg_kernel *k, pg_array *y, pg_arg b, int nblocks) {
    pg_arg args[3] = {pg_arg_array(y), b, pg_arg_int(N)};
    return pg_kernel_launch(k, dim1((uint32_t)nblocks), dim1(32), 0, args, 3);
}

static pg_status launch_sum2(pg_kernel *k, pg_array *y, pg_array *a, pg_array *b) {
    pg_arg args[4] = {pg_arg_array(y), pg_arg_array(a), pg_arg_array(b), pg_arg_int(N)};
    return pg_kernel_launch(k, dim1(2), dim1(32), 0, args, 4);
}

static void new_kernel(pg_runtime *rt, const char *name, const char *sig, pg_kernel **k) {
    if (STEP(pg_kernel_new(rt, TEST_SRC, name, sig, NULL, k)))
        *k = NULL;
}

static void sequence(world *w) {
    if (STEP(new_runtime(&w->rt))) {
        w->rt = NULL;
        return;
    }
    pg_runtime *rt = w->rt;
    int64_t n = N;
    pg_array **arrays[4] = {&w->x, &w->y, &w->z, &w->c};
    for (int i = 0; i < 4; i++)
        if (STEP(pg_array_new(rt, PG_FLOAT32, 1, &n, arrays[i])))
            *arrays[i] = NULL;
    new_kernel(rt, "fill", NULL, &w->fill);
    new_kernel(rt, "fill", "out(chunks=blocks) float *y, float v, int n", &w->fillc);
    new_kernel(rt, "add1", NULL, &w->add1);
    new_kernel(rt, "sum2", NULL, &w->sum2);
    if (w->x) {
        float v[N];
        for (int i = 0; i < N; i++)
            v[i] = (float)i;
        if (!STEP(pg_array_write(w->x, 0, N, v)))
            memcpy(w->mx, v, sizeof v);
    }
    /* 64 KiB of dynamic shared memory: over 48 KiB, so cuFuncSetAttribute first */
    pg_arg fill_args[3] = {pg_arg_array(w->y), pg_arg_float(2.5f), pg_arg_int(N)};
    if (w->fill && w->y &&
        !STEP(pg_kernel_launch(w->fill, dim1(2), dim1(32), 64 << 10, fill_args, 3)))
        set(w->my, 2.5f);
    if (w->add1 && w->x && w->y && !STEP(launch3(w->add1, w->y, pg_arg_array(w->x), 2))) {
        w->launched = 1;
        for (int i = 0; i < N; i++)
            w->my[i] = w->mx[i] + 1.0f;
    }
    /* a chunked output, read on the other GPU while its kernel runs (cuStreamWaitValue32) */
    if (w->fillc && w->c && !STEP(launch3(w->fillc, w->c, pg_arg_float(5.0f), 6)))
        set(w->mc, 5.0f);
    if (w->c)
        STEP(pg_array_prefetch(w->c, PG_HOST));
    if (w->sum2 && w->z && w->x && w->c && !STEP(launch_sum2(w->sum2, w->z, w->x, w->c)))
        for (int i = 0; i < N; i++)
            w->mz[i] = w->mx[i] + w->mc[i];
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
            if (STEP(pg_array_unmap(w->x)))
                CHECK_OK(pg_array_unmap(w->x));
        }
    }
    if (w->add1 && w->x && w->y && !STEP(launch3(w->add1, w->y, pg_arg_array(w->x), 2))) {
        w->launched = 1;
        for (int i = 0; i < N; i++)
            w->my[i] = w->mx[i] + 1.0f;
    }
    /* a recording of one call, replayed three times (captured at the first, a CUDA graph after) as
     * a CUDA graph */
    if (w->add1 && w->z && w->y && !STEP(pg_graph_begin(rt))) {
        pg_status st = STEP(launch3(w->add1, w->z, pg_arg_array(w->y), 2));
        pg_graph *g = NULL;
        pg_status end = STEP(pg_graph_end(rt, &g));
        if (end) /* the recording goes on: ending it again must work */
            CHECK_OK(end = pg_graph_end(rt, &g));
        if (!end && !st) {
            for (int r = 0; r < 3; r++)
                if (!STEP(pg_graph_launch(g)))
                    for (int i = 0; i < N; i++)
                        w->mz[i] = w->my[i] + 1.0f;
        }
        if (g)
            STEP(pg_graph_free(g));
    }
    /* Interop (core/device_access.c): x's address on GPU 1 with the CUstream it is ready
     * after, copied from there into c by address (cuPointerGetAttributes finds the GPU; the copy
     * waits on that CUstream); y's address on GPU 0 with the calling thread made to wait, so
     * that its memory (host memory in the double) holds y's value on return. */
    if (w->x && w->c) {
        void *px = NULL;
        uint64_t sx = 0;
        if (!STEP(pg_array_device_pointer(w->x, 1, PG_ACCESS_IN, &px, &sx)) &&
            !STEP(pg_array_copy_from_device(w->c, (uint64_t)(uintptr_t)px, N * sizeof(float), sx)))
            memcpy(w->mc, w->mx, sizeof w->mc);
        STEP(pg_array_wait(w->c)); /* before x's memory may change */
    }
    if (w->y) {
        float *py = NULL;
        if (!STEP(pg_array_device_pointer_synced(w->y, 0, PG_ACCESS_IN, 0, (void **)&py)))
            for (int i = 0; i < N; i++)
                if (py[i] != w->my[i]) {
                    FAIL_IF(1, "y on GPU 0 after a synced hand-out: %g at %d, expected %g", py[i],
                            i, w->my[i]);
                    break;
                }
    }
    if (w->x)
        STEP(pg_array_prefetch(w->x, 0));
    STEP(pg_runtime_sync(rt));
    if (w->x) {
        check_read(w->x, w->mx, "x", __LINE__);
        if (!STEP(pg_array_free(w->x)))
            w->x = NULL;
    }
    if (w->y)
        check_read(w->y, w->my, "y", __LINE__);
    if (w->z)
        check_read(w->z, w->mz, "z", __LINE__);
    if (w->c)
        check_read(w->c, w->mc, "c", __LINE__);
}

/* Injection off: what is left holds the model's values (or says it lost them), and the runtime
 * still computes; then everything is freed and no device memory stays counted. */
static void verify(world *w) {
    pg_runtime *rt = w->rt;
    if (!rt) {
        /* After a fault CUDA kept, the GPU is out for the process: a new runtime says so. Then
         * the test goes on as a new process would. */
        pg_status st = new_runtime(&rt);
        if (st) {
            if (verbose)
                fprintf(stderr, "  %s N=%llu: a new runtime: %s\n", walk_name,
                        (unsigned long long)walk_n, pg_last_error());
            FAIL_IF(!keep_faults || st != PG_ERROR_DEVICE ||
                        !strstr(pg_last_error(), "CUDA_ERROR_ILLEGAL_ADDRESS"),
                    "a new runtime failed: %s", pg_last_error());
            FAIL_IF(!fake_restart(), "a new runtime failed with no GPU out: %s", pg_last_error());
            REQUIRE_OK(new_runtime(&rt));
        }
        w->rt = rt;
    }
    /* A failure the workload's last reads saw is reported once more by the next sync. */
    STEP(pg_runtime_sync(rt));
    pg_array *arrays[4] = {w->x, w->y, w->z, w->c};
    const float *models[4] = {w->mx, w->my, w->mz, w->mc};
    const char *names[4] = {"x", "y", "z", "c"};
    for (int i = 0; i < 4; i++)
        if (arrays[i])
            check_read(arrays[i], models[i], names[i], __LINE__);
    pg_kernel *k = NULL, *add1 = NULL;
    pg_array *a = NULL, *b = NULL;
    int64_t n = N;
    CHECK_OK(pg_kernel_new(rt, TEST_SRC, "fill", NULL, NULL, &k));
    CHECK_OK(pg_kernel_new(rt, TEST_SRC, "add1", NULL, NULL, &add1));
    CHECK_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &a));
    CHECK_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &b));
    if (k && add1 && a && b) {
        /* twice: round-robin puts one launch on each GPU (where both still work) */
        CHECK_OK(launch3(k, a, pg_arg_float(7.0f), 2));
        CHECK_OK(launch3(add1, b, pg_arg_array(a), 2));
        float got[N], want[N];
        set(want, 8.0f);
        pg_status st = pg_array_read(b, 0, N, got);
        CHECK_OK(st);
        FAIL_IF(!st && memcmp(got, want, sizeof got) != 0, "a fresh launch after the failure: %g",
                got[0]);
    }
    for (int i = 0; i < 4; i++)
        if (arrays[i]) { /* an array whose value was lost can be written again */
            float v[N];
            set(v, 9.0f + (float)i);
            CHECK_OK(pg_array_write(arrays[i], 0, N, v));
            check_read(arrays[i], v, names[i], __LINE__);
            CHECK_OK(pg_array_free(arrays[i]));
        }
    w->x = w->y = w->z = w->c = NULL;
    CHECK_OK(pg_array_free(a));
    CHECK_OK(pg_array_free(b));
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_kernel_free(add1));
    pg_kernel *ks[4] = {w->fill, w->fillc, w->add1, w->sum2};
    for (int i = 0; i < 4; i++)
        if (ks[i])
            CHECK_OK(pg_kernel_free(ks[i]));
    w->fill = w->fillc = w->add1 = w->sum2 = NULL;
    CHECK_OK(pg_runtime_sync(rt));
    pg_stats stats;
    CHECK_OK(pg_runtime_stats(rt, &stats));
    for (int d = 0; d < stats.ndevices; d++)
        FAIL_IF(stats.device_bytes[d] != 0, "device %d still counts %llu bytes with no array", d,
                (unsigned long long)stats.device_bytes[d]);
}

static void free_kernels(world *w) {
    pg_kernel *ks[4] = {w->fill, w->fillc, w->add1, w->sum2};
    for (int i = 0; i < 4; i++)
        if (ks[i])
            STEP(pg_kernel_free(ks[i]));
}

/* The driver saw no use of freed memory, and (with reclaimed_ok 0) the runtime's close left
 * nothing for the contexts' end to free. */
static void check_driver(uint64_t reclaimed_before, int reclaimed_ok) {
    static uint64_t seen;
    uint64_t v = fake_violations();
    FAIL_IF(v != seen, "the driver saw %llu uses of memory it had not handed out",
            (unsigned long long)(v - seen));
    seen = v;
    /* A context still retained once the runtime closed: its release failed (and the context
     * stays, as it would in a process on a GPU); ended here so that the next runtime gets a new
     * one. */
    int retained = fake_release_all();
    FAIL_IF(retained && !call_failed("cuDevicePrimaryCtxRelease"),
            "the runtime's close left %d context retain(s)", retained);
    uint64_t r = fake_reclaimed() - reclaimed_before + fake_graphs_reclaim();
    /* Under ASan: nothing leaked by this N's runs (said now, with the N, not at exit). */
    FAIL_IF(LEAK_CHECK(), "memory leaked (LeakSanitizer's report above)");
    if (getenv("PG_RECLAIMED") && r)
        fprintf(stderr, "RECLAIMED %s N=%llu (%s): %llu\n", walk_name, (unsigned long long)walk_n,
                failed_call(), (unsigned long long)r);
    FAIL_IF(r && !reclaimed_ok, "the runtime's close left %llu driver objects to the contexts' end",
            (unsigned long long)r);
}

/* Objects may be left for the contexts' end to free (as CUDA frees them with the context) only
 * when the failed call was a free (it failed: the object stays), a cuCtxSetCurrent (the backend
 * cannot free in a context it cannot enter), or a fault the context keeps (it frees nothing). */
static int may_leave_objects(void) {
    static const char *const frees[] = {
        "cuEventDestroy",  "cuStreamDestroy",          "cuMemFree",          "cuMemFreeAsync",
        "cuMemFreeHost",   "cuModuleUnload",           "cuGraphExecDestroy", "cuGraphDestroy",
        "cuCtxSetCurrent", "cuDevicePrimaryCtxRelease"};
    if (keep_faults)
        return 1;
    for (size_t i = 0; i < sizeof frees / sizeof *frees; i++)
        if (call_failed(frees[i]))
            return 1;
    return 0;
}

/* Which driver calls the walk failed, and how often. */
static struct {
    const char *name;
    int n;
} tally[64];

static void tally_add(const char *name) {
    int i = 0;
    while (i < 64 && tally[i].name && strcmp(tally[i].name, name))
        i++;
    if (i < 64) {
        tally[i].name = name;
        tally[i].n++;
    }
}

static void arm(uint64_t n) {
    if (heap_walk)
        pg__inject_alloc_arm(n);
    else if (run_walk)
        fake_arm_run(n, 2);
    else
        fake_arm(n, keep_faults);
}

static uint64_t disarm(void) {
    return heap_walk ? pg__inject_alloc_disarm() : fake_disarm();
}

static uint64_t walk(void) {
    uint64_t n, first = walk_n ? walk_n : 1, last = MAX_WALK;
    const char *e = getenv("PG_WALK_LAST");
    if (e)
        last = strtoull(e, NULL, 10);
    for (n = first; n < MAX_WALK && n <= last; n++) {
        walk_n = n;
        world w;
        memset(&w, 0, sizeof w);
        uint64_t rec = fake_reclaimed();
        forget_models();
        fake_restart(); /* each N as in a new process */
        arm(n);
        sequence(&w);
        uint64_t counted = disarm();
        if (counted >= n)
            tally_add(failed_call());
        if (counted >= n) {
            verify(&w);
            CHECK_OK(pg_runtime_free(w.rt));
            check_driver(rec, may_leave_objects());
            continue;
        }
        /* not yet reached: it may be in the close */
        uint64_t left = n - counted;
        arm(left);
        free_kernels(&w);
        if (w.rt)
            STEP(pg_runtime_free(w.rt));
        counted = disarm();
        if (counted < left) {
            check_driver(rec, 0);
            break; /* the whole workload ran without reaching N */
        }
        tally_add(failed_call());
        check_driver(rec, may_leave_objects());
        world fresh;
        memset(&fresh, 0, sizeof fresh);
        rec = fake_reclaimed();
        verify(&fresh);
        CHECK_OK(pg_runtime_free(fresh.rt));
        check_driver(rec, 0);
    }
    FAIL_IF(n >= MAX_WALK, "the walk did not end");
    printf("%s: %llu injection points walked, %llu API calls failed; the calls failed:", walk_name,
           (unsigned long long)(n - 1), (unsigned long long)calls_failed);
    for (int i = 0; i < 64 && tally[i].name; i++)
        printf(" %s x%d", tally[i].name, tally[i].n);
    printf("\n");
    return n - 1;
}

int main(int argc, char **argv) {
    verbose = getenv("PG_INJECT_VERBOSE") != NULL;
    /* The driver the backend will load: it must be the double. */
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h || !(*(void **)&fake_arm = dlsym(h, "fake_cuda_arm"))) {
        fprintf(stderr, "libcuda.so.1 is not tests/cudadouble's double (LD_LIBRARY_PATH?)\n");
        return 1;
    }
    *(void **)&fake_disarm = dlsym(h, "fake_cuda_disarm");
    *(void **)&fake_arm_run = dlsym(h, "fake_cuda_arm_run");
    *(void **)&fake_failed_call = dlsym(h, "fake_cuda_failed_call");
    *(void **)&fake_failed_calls = dlsym(h, "fake_cuda_failed_calls");
    *(void **)&fake_violations = dlsym(h, "fake_cuda_violations");
    *(void **)&fake_reclaimed = dlsym(h, "fake_cuda_reclaimed");
    *(void **)&fake_graphs_reclaim = dlsym(h, "fake_cuda_graphs_reclaim");
    *(void **)&fake_release_all = dlsym(h, "fake_cuda_release_all");
    *(void **)&fake_restart = dlsym(h, "fake_cuda_restart");
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/pg-cudadouble-XXXXXX");
    REQUIRE_OK(mkdtemp(tmp_dir) ? PG_OK : PG_ERROR_IO);
    const char *only = argc > 1 ? argv[1] : "clean";
    if (argc > 2)
        walk_n = strtoull(argv[2], NULL, 10);
    if (argc > 3)
        setenv("PG_WALK_LAST", argv[3], 1);

    /* Once clean: every call succeeds, every value is right, the close leaves nothing. */
    world w;
    memset(&w, 0, sizeof w);
    uint64_t rec = fake_reclaimed();
    fake_arm(0, 0);
    sequence(&w);
    uint64_t calls = fake_disarm();
    CHECK(calls_failed == 0);
    verify(&w);
    CHECK_OK(pg_runtime_free(w.rt));
    check_driver(rec, 0);
    printf("clean: %llu driver calls\n", (unsigned long long)calls);

    if (!strcmp(only, "calls") || !strcmp(only, "kept") || !strcmp(only, "alloc") ||
        !strcmp(only, "pairs")) {
        heap_walk = !strcmp(only, "alloc");
        run_walk = !strcmp(only, "pairs");
        walk_name = only;
        keep_faults = !strcmp(only, "kept");
        walk();
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_dir);
    dlclose(h);
    CHECK_DONE();
}

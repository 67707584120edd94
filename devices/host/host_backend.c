/* host_backend.c: CPU devices (separate memories, a thread pool each) behind pg__backend_ops. */
#include "devices/backend.h"
#include "devices/registry.h"
#include "base/alloc.h"
#include "base/error.h"
#include "devices/host/host_guard.h"
#include "devices/host/host_inject.h"
#include "devices/host/host_pool.h"
#include "devices/host/host_stream.h"
#include "nvrtc/cpu_compile.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Buffers start on a cache line, as a GPU allocation would, so kernels can vectorise. */
#define ALIGN 64
/* Launch limits. A CPU device runs a block on one worker thread, each CUDA thread of a block
 * that synchronises as a fiber with its own stack (devices/host/host_fibers.c), and a block's
 * dynamic shared memory is ordinary memory of that worker. So a block may have more threads than
 * on a GPU, in any dimension (z too), and more shared memory. What bounds them is memory each
 * worker keeps for its next launch: a fiber costs about 4.4 KiB resident (64 KiB of stack
 * reserved, a guard page), so 8192 threads cost about 36 MiB per worker (measured: 4 blocks of
 * 8192 on 2 workers, 74 MB), and shared memory costs what the kernel touches of it, per worker.
 * The grid is CUDA's: the launch loops count blocks in 64 bits, which its product fits. */
#define CPU_BLOCK_THREADS 8192u
#define CPU_SHARED_BYTES ((uint64_t)64 << 20)
/* More threads than this per device is surely a typo in PG_HOST_THREADS. */
#define MAX_THREADS 4096

struct pg__backend {
    int ndev;
    int threads; /* per device, the stream worker included */
    uint64_t epoch_ns;
    int check_bounds; /* device buffers between guard pages (check=bounds) */
    pg__host_dev devs[PG_MAX_DEVICES];
    pg__host_sched *sched; /* every device's (devs[d].sched) */
    pthread_mutex_t mu;    /* guards the list of live streams */
    pg__bstream **streams;
    int nstreams, cap;
};

static pg_status spec_error(const char *spec) {
    return pg__error(PG_ERROR_ARGUMENT,
                     "bad host device spec '%s': expected host:N with N in 1..%d", spec,
                     PG_MAX_DEVICES);
}

static pg_status parse_spec(const char *spec, int *ndev) {
    if (!spec || !spec[0]) {
        *ndev = 1;
        return PG_OK;
    }
    int n = 0;
    for (const char *c = spec; *c; c++) {
        if (*c < '0' || *c > '9' || n > PG_MAX_DEVICES)
            return spec_error(spec);
        n = n * 10 + (*c - '0');
    }
    if (n < 1 || n > PG_MAX_DEVICES)
        return spec_error(spec);
    *ndev = n;
    return PG_OK;
}

static pg_status threads_per_device(int ndev, int *out) {
    const char *env = getenv("PG_HOST_THREADS");
    if (env && env[0]) {
        char *end;
        errno = 0;
        long t = strtol(env, &end, 10);
        if (errno || *end || end == env || t < 1 || t > MAX_THREADS)
            return pg__error(PG_ERROR_ARGUMENT,
                             "PG_HOST_THREADS='%s': expected a whole number of threads per CPU "
                             "device in 1..%d (or unset it for cores / devices)",
                             env, MAX_THREADS);
        *out = (int)t;
        return PG_OK;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long t = cores > 0 ? cores / ndev : 1;
    *out = t < 1 ? 1 : (int)t;
    return PG_OK;
}

static void host_close(pg__backend *b) {
    /* Streams the core did not free: their work finishes first (the worker drains). */
    for (int i = 0; i < b->nstreams; i++)
        pg__host_stream_free(b->streams[i]);
    pg__host_sched_free(b->sched);
    for (int d = 0; d < PG_MAX_DEVICES; d++) {
        pg__host_pool_free(b->devs[d].pool);
        pthread_mutex_destroy(&b->devs[d].mu);
    }
    pg__free(b->streams);
    pthread_mutex_destroy(&b->mu);
    pg__free(b);
}

static pg_status bad_device(pg__backend *b, int dev) {
    return pg__error(PG_ERROR_INTERNAL, "CPU device %d does not exist (there are %d)", dev,
                     b->ndev);
}

static pg_status host_device_info(pg__backend *b, int dev, pg_device_info *out) {
    if (dev < 0 || dev >= b->ndev)
        return bad_device(b, dev);
    memset(out, 0, sizeof *out);
    out->id = dev;
    out->kind = PG_DEVICE_CPU;
    snprintf(out->name, sizeof out->name, "CPU device %d (%d thread%s)", dev, b->threads,
             b->threads == 1 ? "" : "s");
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    out->memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    out->multiprocessors = b->threads;
    out->max_threads_per_block = CPU_BLOCK_THREADS;
    out->max_block = (pg_dim3){CPU_BLOCK_THREADS, CPU_BLOCK_THREADS, CPU_BLOCK_THREADS};
    out->max_grid = (pg_dim3){2147483647u, 65535, 65535};
    out->max_shared_memory_per_block = CPU_SHARED_BYTES;
    return PG_OK;
}

static pg_status alloc_zeroed(size_t bytes, const char *where, void **out) {
    size_t n = bytes ? (bytes + ALIGN - 1) & ~(size_t)(ALIGN - 1) : ALIGN;
    void *p = NULL;
    if (n < bytes || pg__posix_memalign(&p, ALIGN, n))
        return pg__error(PG_ERROR_OUT_OF_MEMORY,
                         "out of host memory: %zu bytes for %s; free arrays or use fewer host "
                         "devices",
                         bytes, where);
    memset(p, 0, n);
    *out = p;
    return PG_OK;
}

static pg_status host_host_alloc(pg__backend *b, size_t bytes, void **out) {
    return alloc_zeroed(bytes, "host memory", out);
}

static void host_host_free(pg__backend *b, void *p) {
    pg__free(p);
}

static pg_status host_dev_alloc(pg__backend *b, int dev, size_t bytes, pg__bstream *s, void **out) {
    if (dev < 0 || dev >= b->ndev)
        return bad_device(b, dev);
    if (!b->check_bounds)
        return alloc_zeroed(bytes, "a CPU device's memory", out);
    if (!(*out = pg__host_guard_alloc(bytes)))
        return pg__error(PG_ERROR_OUT_OF_MEMORY,
                         "out of memory for a guarded buffer of %zu bytes (check=bounds maps "
                         "each buffer on its own pages; free arrays or turn the check off)",
                         bytes);
    return PG_OK;
}

static void host_dev_free(pg__backend *b, int dev, void *p) {
    if (!b->check_bounds || !pg__host_guard_free(p))
        pg__free(p);
}

static pg_status host_memset_zero(pg__backend *b, pg__bstream *s, void *p, size_t bytes) {
    return pg__host_stream_memset_zero(s, p, bytes);
}

static pg_status host_stream_new(pg__backend *b, int dev, pg__bstream **out) {
    if (dev < 0 || dev >= b->ndev)
        return bad_device(b, dev);
    pthread_mutex_lock(&b->mu);
    if (b->nstreams == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        pg__bstream **n = pg__realloc(b->streams, (size_t)cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&b->mu);
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for a stream");
        }
        b->streams = n;
        b->cap = cap;
    }
    pg__bstream *s;
    pg_status st = pg__host_stream_new(b->devs, dev, b->epoch_ns, &s);
    if (!st) {
        b->streams[b->nstreams++] = s;
        *out = s;
    }
    pthread_mutex_unlock(&b->mu);
    return st;
}

static void host_stream_free(pg__backend *b, pg__bstream *s) {
    if (!s)
        return;
    pthread_mutex_lock(&b->mu);
    for (int i = 0; i < b->nstreams; i++) {
        if (b->streams[i] == s) {
            b->streams[i] = b->streams[--b->nstreams];
            break;
        }
    }
    pthread_mutex_unlock(&b->mu);
    pg__host_stream_free(s);
}

static pg_status host_event_record(pg__backend *b, pg__bstream *s, pg__bevent **out) {
    return pg__host_event_record(s, out);
}

static int host_event_done(pg__backend *b, pg__bevent *e) {
    return pg__host_event_done(e);
}

static pg_status host_event_wait(pg__backend *b, pg__bevent *e) {
    pg__host_event_wait(e);
    return PG_OK;
}

static pg_status host_event_wait_for(pg__backend *b, pg__bevent *e, uint64_t timeout_ns) {
    return pg__host_event_wait_for(e, timeout_ns) ? PG_OK : PG_ERROR_TIMEOUT;
}

static pg_status host_event_error(pg__backend *b, pg__bevent *e, int *failed_dev, char *msg,
                                  size_t cap) {
    *failed_dev = -1;
    return pg__host_event_failure(e, failed_dev, msg, cap) ? PG_ERROR_DEVICE : PG_OK;
}

static pg_status host_stream_wait(pg__backend *b, pg__bstream *s, pg__bevent *e) {
    return pg__host_stream_wait(s, e);
}

static void host_event_free(pg__backend *b, pg__bevent *e) {
    pg__host_event_free(e);
}

static pg_status host_copy(pg__backend *b, pg__bstream *s, int dst_dev, void *dst, int src_dev,
                           const void *src, size_t bytes, pg__timing *t) {
    return pg__host_stream_copy(s, dst_dev, dst, src_dev, src, bytes, t);
}

static pg_status host_kernel_build(pg__backend *b, const pg__kernel_src *src, void **image) {
    pg__cpu_module *m;
    pg_status st = pg__cpu_compile(src, &m);
    if (st) /* one build serves every CPU device */
        return pg__error_wrap(st, "compiling kernel '%s' for CPU devices", src->name);
    *image = m;
    return PG_OK;
}

static pg_status host_kernel_function(pg__backend *b, void *image, int dev, void **fn) {
    if (dev < 0 || dev >= b->ndev)
        return bad_device(b, dev);
    /* All CPU devices share one address space: one module serves them all. */
    *fn = (void *)pg__cpu_module_entry(image);
    return PG_OK;
}

static void host_kernel_free(pg__backend *b, void *image) {
    pg__cpu_module_free(image);
}

static pg_status host_launch(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid, pg_dim3 block,
                             size_t shared_mem, const uint64_t *params, int nparams,
                             pg__timing *t) {
    return pg__host_stream_launch(s, (pg__cpu_entry)fn, grid, block, shared_mem, params, nparams,
                                  t);
}

static pg_status host_launch_range(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid,
                                   pg_dim3 block, size_t shared_mem, const uint64_t *params,
                                   int nparams, uint64_t first, uint64_t count, pg__timing *t) {
    return pg__host_stream_launch_range(s, (pg__cpu_entry)fn, grid, block, shared_mem, params,
                                        nparams, first, count, t);
}

static pg_status host_launch_chunks(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid,
                                    pg_dim3 block, size_t shared_mem, const uint64_t *params,
                                    int nparams, uint32_t *sync, uint32_t bpc, pg__timing *t) {
    return pg__host_stream_launch_chunks(s, (pg__cpu_entry)fn, grid, block, shared_mem, params,
                                         nparams, sync, bpc, t);
}

static pg_status host_wait_flags(pg__backend *b, pg__bstream *s, const uint32_t *flags,
                                 uint32_t count) {
    return pg__host_stream_wait_flags(s, flags, count);
}

static pg_status host_call(pg__backend *b, pg__bstream *s, pg_status (*fn)(void *arg),
                           const void *arg, size_t arg_bytes, pg__timing *t) {
    return pg__host_stream_call(s, fn, arg, arg_bytes, t);
}

/* The worker wrote the times before the op counted as done: nothing is left to do. */
static void host_timing_resolve(pg__backend *b, pg__timing *t) {}

static void host_timing_release(pg__backend *b, pg__timing *t) {}

static const pg__backend_ops host_ops = {
    .name = "host",
    .close = host_close,
    .device_info = host_device_info,
    .host_alloc = host_host_alloc,
    .host_free = host_host_free,
    .dev_alloc = host_dev_alloc,
    .dev_free = host_dev_free,
    .memset_zero = host_memset_zero,
    .stream_new = host_stream_new,
    .stream_free = host_stream_free,
    .event_record = host_event_record,
    .event_done = host_event_done,
    .event_wait = host_event_wait,
    .event_wait_for = host_event_wait_for,
    .event_error = host_event_error,
    .stream_wait = host_stream_wait,
    .event_free = host_event_free,
    .copy = host_copy,
    .launch_chunks = host_launch_chunks,
    .wait_flags = host_wait_flags,
    .kernel_build = host_kernel_build,
    .kernel_function = host_kernel_function,
    .kernel_free = host_kernel_free,
    .launch = host_launch,
    .launch_range = host_launch_range,
    .call = host_call,
    .timing_resolve = host_timing_resolve,
    .timing_release = host_timing_release,
    .wants_timing_events = 0,
};

pg_status pg__host_backend_open(const char *spec, int enable_timing, int check_bounds,
                                const pg__backend_ops **ops, pg__backend **out, int *ndev) {
    int n = 0, threads = 1;
    pg_status st = parse_spec(spec, &n);
    if (!st)
        st = threads_per_device(n, &threads);
    if (st)
        return st;
    pg__backend *b = pg__calloc(1, sizeof *b);
    if (!b)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory opening CPU devices");
    pthread_mutex_init(&b->mu, NULL);
    for (int d = 0; d < PG_MAX_DEVICES; d++) {
        pthread_mutex_init(&b->devs[d].mu, NULL);
        atomic_init(&b->devs[d].failed, 0);
    }
    b->threads = threads;
    b->check_bounds = check_bounds;
    b->epoch_ns = pg__host_now_ns();
    /* One thread per device means the stream workers run every block themselves. */
    for (int d = 0; d < n && threads > 1; d++) {
        if ((st = pg__host_pool_new(threads - 1, &b->devs[d].pool))) {
            host_close(b);
            return st;
        }
        b->ndev = d + 1;
    }
    /* One scheduler for all the devices, a worker per device: a worker awake for one device
     * takes another's work too, so independent work over several devices wakes nobody. */
    if ((st = pg__host_sched_new(n, &b->sched))) {
        host_close(b);
        return st;
    }
    for (int d = 0; d < n; d++)
        b->devs[d].sched = b->sched;
    b->ndev = n;
    *ops = pg__host_inject_wrap(&host_ops);
    *out = b;
    *ndev = n;
    return PG_OK;
}

static pg_status host_check(const char *spec) {
    int n;
    return parse_spec(spec, &n);
}

static pg_status host_entry_open(const char *spec, const pg__open_args *a,
                                 const pg__backend_ops **ops, pg__backend **b, int *ndev) {
    return pg__host_backend_open(spec, a->timing, a->check_bounds, ops, b, ndev);
}

/* CPU devices: their memory is the process's, so other backends copy to it as host memory. */
const pg__backend_entry pg__host_entry = {
    .name = "host",
    .forms = "host (one CPU device), host:N (N CPU devices, 1..64)",
    .device_class = PG_CLASS_CPU,
    .host_visible = 1,
    .cheap_queries = 1,
    .label_buffer = pg__host_guard_label,
    .check = host_check,
    .open = host_entry_open,
};

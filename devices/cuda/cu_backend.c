/* cu_backend.c: the CUDA backend — one primary context per GPU, non-blocking streams, events
 * from a free list, stream-ordered device memory from each device's pool, pinned host memory,
 * peer access between every capable pair, NVRTC kernels loaded lazily per device. */
#include "base/error.h"
#include "base/alloc.h"
#include "devices/backend.h"
#include "devices/cuda/cu_cupti.h"
#include "devices/registry.h"
#include "devices/cuda/cu_driver.h"
#include "devices/cuda/cu_nvml.h"
#include "nvrtc/chunk_wrap.h"
#include "nvrtc/nvrtc_compile.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t host_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct cu_device {
    CUdevice dev;
    CUcontext ctx;
    CUmemoryPool pool;
    CUstream internal; /* frees and other work of the backend's own */
    CUevent epoch;     /* timing origin (tracing only) */
    /* Host clock when `epoch` completed, then (once every device is open) that minus the
     * backend's epoch: devices open one after another, a context taking up to a few hundred
     * milliseconds, so each device's events need their own offset to share one timeline. */
    int64_t epoch_offset_ns;
    /* The first fault CUDA keeps for the context's life (pg__cu_sticky), 0 while healthy: from
     * then on every call in the context fails, so the device is out for this runtime. */
    _Atomic int fault;
    int major, minor, sms, clock_khz;
    pg__nvml_gpu *nvml; /* this GPU in NVML (power, energy); NULL: NVML does not serve it */
    /* launch limits: threads per block, block x y z, grid x y z, opt-in shared memory */
    int limit[8];
    size_t memory;
    char name[128];
    char uuid[48];
} cu_device;

struct pg__bevent {
    CUevent e;
    int dev;
    /* What the first look at the completed event said (0: success). Kept because, once the
     * context has a fault, every later query says so, even for work that had finished well. */
    _Atomic int err;
    pg__bevent *next_free;
};

enum { TIMING_POOL = 64 };

struct pg__bstream {
    int dev;
    CUstream s;
};

/* Flags memory (flags_alloc): slabs of cuMemAlloc'd memory per device, in 256-byte units. */
enum { FLAG_UNIT = 256, SLAB_UNITS = 16384, MAX_SLABS = 32 };
typedef struct flag_slab {
    CUdeviceptr base;
    uint64_t used[SLAB_UNITS / 64];
} flag_slab;
struct flag_slabs {
    flag_slab *slab[MAX_SLABS];
    int n;
};

struct pg__backend {
    const pg__cu *cu;
    int n, timing;
    cu_device d[PG_MAX_DEVICES];
    pthread_mutex_t mu; /* the event free lists, the plain host buffers */
    pg__bevent *free_events[PG_MAX_DEVICES];
    /* Timing events (with timestamps) kept for reuse, per device: the models time one launch in
     * 16, and creating and destroying its two events cost more than the rest of its launch. */
    CUevent free_timing[PG_MAX_DEVICES][TIMING_POOL];
    int nfree_timing[PG_MAX_DEVICES];
    /* Host buffers made with malloc because every context had failed (cuMemHostAlloc needs a
     * working one): host_free must not hand them to the driver. */
    void **plain;
    int nplain, plain_cap;
    struct flag_slabs flags[PG_MAX_DEVICES]; /* guarded by mu */
    /* The GPU's own timeline (trace option): CUPTI's records, or why there are none. */
    pg__cupti *cupti;
    char cupti_why[1400];
};

typedef struct cu_image {
    int narchs;
    int arch[PG_MAX_DEVICES];
    pg__nvrtc_image img[PG_MAX_DEVICES];
    CUmodule mod[PG_MAX_DEVICES];
    CUfunction fn[PG_MAX_DEVICES];
} cu_image;

/* The calling thread's current context, to skip redundant cuCtxSetCurrent calls. */
static _Thread_local CUcontext current;

/* Device d's context has a fault that CUDA keeps: remember the first one. */
static void fault_note(pg__backend *b, int d, CUresult r) {
    int none = 0;
    if (d >= 0 && d < b->n && pg__cu_sticky(r))
        atomic_compare_exchange_strong(&b->d[d].fault, &none, r);
}

/* A call in the current context failed with r: if r is a kept fault, the device is out. */
static void fault_seen(pg__backend *b, CUresult r) {
    if (!pg__cu_sticky(r))
        return;
    for (int d = 0; d < b->n; d++)
        if (b->d[d].ctx == current)
            fault_note(b, d, r);
}

#define CU(call, what)                                                                             \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fault_seen(b, r_);                                                                     \
            return (pg_status)pg__cu_error(b->cu, r_, what);                                       \
        }                                                                                          \
    } while (0)

static pg_status use(pg__backend *b, int dev) {
    if (current != b->d[dev].ctx) {
        CU(b->cu->cuCtxSetCurrent(b->d[dev].ctx), "cuCtxSetCurrent");
        current = b->d[dev].ctx;
    }
    return PG_OK;
}

static pg_status device_info(pg__backend *b, int dev, pg_device_info *out) {
    memset(out, 0, sizeof *out);
    out->id = dev;
    out->kind = PG_DEVICE_CUDA;
    snprintf(out->name, sizeof out->name, "%s", b->d[dev].name);
    out->memory_bytes = b->d[dev].memory;
    out->compute_major = b->d[dev].major;
    out->compute_minor = b->d[dev].minor;
    out->multiprocessors = b->d[dev].sms;
    out->clock_khz = (uint32_t)b->d[dev].clock_khz;
    snprintf(out->uuid, sizeof out->uuid, "%s", b->d[dev].uuid);
    const int *l = b->d[dev].limit;
    out->max_threads_per_block = (uint32_t)l[0];
    out->max_block = (pg_dim3){(uint32_t)l[1], (uint32_t)l[2], (uint32_t)l[3]};
    out->max_grid = (pg_dim3){(uint32_t)l[4], (uint32_t)l[5], (uint32_t)l[6]};
    out->max_shared_memory_per_block = (uint64_t)l[7];
    return PG_OK;
}

/* Pinned memory comes from a working context (portable: every context may copy to and from
 * it). Once every device has failed, plain memory serves: the runtime still holds arrays and
 * reads them on the host. */
static pg_status host_alloc(pg__backend *b, size_t bytes, void **out) {
    int d = 0;
again:
    while (d < b->n && atomic_load(&b->d[d].fault))
        d++;
    if (d == b->n) {
        pthread_mutex_lock(&b->mu);
        void *p = NULL;
        if (b->nplain == b->plain_cap) {
            int cap = b->plain_cap ? 2 * b->plain_cap : 16;
            void **n = pg__realloc(b->plain, sizeof *n * (size_t)cap);
            if (n) {
                b->plain = n;
                b->plain_cap = cap;
            }
        }
        if (b->nplain < b->plain_cap && (p = pg__calloc(1, bytes ? bytes : 1)))
            b->plain[b->nplain++] = p;
        pthread_mutex_unlock(&b->mu);
        if (!p)
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory (%zu bytes)", bytes);
        *out = p;
        return PG_OK;
    }
    /* A GPU whose context refuses with a fault CUDA keeps is marked (the driver may pass an
     * earlier kernel's fault to every GPU of the process: seen on 4 x H200), and the next one
     * is asked, down to plain memory: a host copy needs no GPU. */
    pg_status st = use(b, d);
    if (st && atomic_load(&b->d[d].fault)) {
        pg__error_clear();
        goto again;
    }
    if (st)
        return st;
    CUresult r = b->cu->cuMemHostAlloc(out, bytes ? bytes : 1, CU_MEMHOSTALLOC_PORTABLE);
    if (r != CUDA_SUCCESS) {
        fault_seen(b, r);
        if (atomic_load(&b->d[d].fault)) {
            pg__error_clear();
            goto again;
        }
        return (pg_status)pg__cu_error(b->cu, r, "cuMemHostAlloc (pinned host memory)");
    }
    memset(*out, 0, bytes);
    return PG_OK;
}

static void host_free(pg__backend *b, void *p) {
    pthread_mutex_lock(&b->mu);
    for (int i = 0; i < b->nplain; i++)
        if (b->plain[i] == p) {
            b->plain[i] = b->plain[--b->nplain];
            pthread_mutex_unlock(&b->mu);
            pg__free(p);
            return;
        }
    pthread_mutex_unlock(&b->mu);
    /* Any context frees pinned memory; a failed one refuses (it is freed with the context). */
    for (int d = 0; d < b->n; d++)
        if (!atomic_load(&b->d[d].fault) && use(b, d) == PG_OK) {
            fault_note(b, d, b->cu->cuMemFreeHost(p));
            return;
        }
}

static pg_status dev_alloc(pg__backend *b, int dev, size_t bytes, pg__bstream *s, void **out) {
    pg_status st = use(b, dev);
    if (st)
        return st;
    CUdeviceptr p;
    CU(b->cu->cuMemAllocAsync(&p, bytes ? bytes : 1, s ? s->s : b->d[dev].internal),
       "cuMemAllocAsync (device memory)");
    *out = (void *)(uintptr_t)p;
    return PG_OK;
}

static void dev_free(pg__backend *b, int dev, void *p) {
    if (use(b, dev) == PG_OK) /* a kept fault, seen here first, puts the device out */
        fault_note(b, dev, b->cu->cuMemFreeAsync((CUdeviceptr)(uintptr_t)p, b->d[dev].internal));
}

static pg_status memset_zero(pg__backend *b, pg__bstream *s, void *p, size_t bytes) {
    pg_status st = use(b, s->dev);
    if (st)
        return st;
    CU(b->cu->cuMemsetD8Async((CUdeviceptr)(uintptr_t)p, 0, bytes, s->s), "cuMemsetD8Async");
    return PG_OK;
}

static pg_status stream_new(pg__backend *b, int dev, pg__bstream **out) {
    pg_status st = use(b, dev);
    if (st)
        return st;
    pg__bstream *s = pg__calloc(1, sizeof *s);
    if (!s)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    CUresult r = b->cu->cuStreamCreate(&s->s, CU_STREAM_NON_BLOCKING);
    if (r) {
        pg__free(s);
        fault_note(b, dev, r);
        return (pg_status)pg__cu_error(b->cu, r, "cuStreamCreate");
    }
    s->dev = dev;
    *out = s;
    return PG_OK;
}

static void stream_free(pg__backend *b, pg__bstream *s) {
    if (use(b, s->dev) == PG_OK)
        fault_note(b, s->dev, b->cu->cuStreamDestroy(s->s));
    pg__free(s);
}

static pg_status event_get(pg__backend *b, int dev, pg__bevent **out) {
    pthread_mutex_lock(&b->mu);
    pg__bevent *e = b->free_events[dev];
    if (e)
        b->free_events[dev] = e->next_free;
    pthread_mutex_unlock(&b->mu);
    if (!e) {
        if (!(e = pg__calloc(1, sizeof *e)))
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        CUresult r = b->cu->cuEventCreate(&e->e, CU_EVENT_DISABLE_TIMING);
        if (r) {
            pg__free(e);
            fault_note(b, dev, r);
            return (pg_status)pg__cu_error(b->cu, r, "cuEventCreate");
        }
        e->dev = dev;
    }
    *out = e;
    return PG_OK;
}

static void event_free(pg__backend *b, pg__bevent *e) {
    pthread_mutex_lock(&b->mu);
    e->next_free = b->free_events[e->dev];
    b->free_events[e->dev] = e;
    pthread_mutex_unlock(&b->mu);
}

/* The event meant to mark s's work could not be made or recorded: nothing will track that work
 * (the core gives the device up), yet unless the context has a kept fault it still runs, reading
 * and writing buffers the core may free or reuse at once. Wait for it here. */
static void untracked_work_wait(pg__backend *b, pg__bstream *s) {
    char why[1024];
    snprintf(why, sizeof why, "%s", pg_last_error());
    /* A wait that fails with an error CUDA does not keep is tried again (twice): the work goes
     * on meanwhile, and returning would hand its buffers back. */
    CUresult r = CUDA_ERROR_NOT_READY;
    for (int i = 0; i < 3 && r && !pg__cu_sticky(r); i++)
        if (use(b, s->dev) == PG_OK)
            r = b->cu->cuStreamSynchronize(s->s);
    pg__error(PG_ERROR_DEVICE, "%s", why); /* the failure being reported stays the message */
}

static pg_status event_record(pg__backend *b, pg__bstream *s, pg__bevent **out) {
    pg_status st = use(b, s->dev);
    pg__bevent *e = NULL;
    if (!st && (st = event_get(b, s->dev, &e)) != PG_OK)
        untracked_work_wait(b, s);
    if (st)
        return st;
    CUresult r = b->cu->cuEventRecord(e->e, s->s);
    if (r) {
        fault_note(b, s->dev, r);
        event_free(b, e);
        st = (pg_status)pg__cu_error(b->cu, r, "cuEventRecord");
        untracked_work_wait(b, s);
        return st;
    }
    atomic_store(&e->err, 0);
    *out = e;
    return PG_OK;
}

/* What the query or wait of a completed event said; a failed event is done too (the core asks
 * event_error what failed). */
static void event_result(pg__backend *b, pg__bevent *e, CUresult r) {
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY)
        return;
    /* An error CUDA does not keep says nothing of the work before the event, which may still
     * run: the core, taking the event as done, would free and reuse buffers it uses. Wait for
     * it (the error is reported all the same); after a kept fault it never runs. */
    CUresult w = r;
    for (int i = 0; i < 3 && w && !pg__cu_sticky(w); i++) /* as untracked_work_wait */
        w = b->cu->cuEventSynchronize(e->e);
    int none = 0;
    atomic_compare_exchange_strong(&e->err, &none, r);
    fault_note(b, e->dev, r);
    fault_note(b, e->dev, w); /* the wait may have met a kept fault */
}

static int event_done(pg__backend *b, pg__bevent *e) {
    if (atomic_load(&e->err))
        return 1;
    CUresult r = b->cu->cuEventQuery(e->e);
    event_result(b, e, r);
    return r != CUDA_ERROR_NOT_READY;
}

static pg_status event_wait(pg__backend *b, pg__bevent *e) {
    if (!atomic_load(&e->err))
        event_result(b, e, b->cu->cuEventSynchronize(e->e));
    return PG_OK;
}

static pg_status event_error(pg__backend *b, pg__bevent *e, int *failed_dev, char *msg,
                             size_t cap) {
    CUresult r = atomic_load(&e->err);
    *failed_dev = -1;
    if (!r)
        return PG_OK;
    char d[256];
    pg__cu_describe(b->cu, r, d, sizeof d);
    if (!pg__cu_sticky(r)) {
        snprintf(msg, cap, "%s", d);
        return PG_ERROR_DEVICE;
    }
    *failed_dev = e->dev;
    snprintf(msg, cap,
             "%s. The CUDA driver keeps this fault until the process ends, so GPU %d runs "
             "nothing more in this process: arrays with a copy elsewhere can still be read; "
             "restart the process to use that GPU again. CUDA does not say which work "
             "faulted: this, or work that ran beside it on that GPU",
             d, e->dev);
    return PG_ERROR_DEVICE;
}

/* The driver cannot bound cuEventSynchronize, so a wait with a limit polls: spinning (with
 * yields) for the first 2 ms, as the driver's default scheduling does, then sleeping 100 us
 * between queries, so a long wait costs little CPU and wakes at most 100 us late. */
static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static pg_status event_wait_for(pg__backend *b, pg__bevent *e, uint64_t timeout_ns) {
    uint64_t t0 = mono_ns();
    for (;;) {
        if (atomic_load(&e->err))
            return PG_OK;
        CUresult r = b->cu->cuEventQuery(e->e);
        event_result(b, e, r);
        if (r != CUDA_ERROR_NOT_READY)
            return PG_OK; /* done, well or not: event_error tells */
        uint64_t t = mono_ns() - t0;
        if (t >= timeout_ns)
            return PG_ERROR_TIMEOUT;
        if (t < 2000000) {
            sched_yield();
        } else {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
}

static pg_status stream_wait(pg__backend *b, pg__bstream *s, pg__bevent *e) {
    /* Work on a failed GPU will not complete: waiting for it would stall this stream forever.
     * What s runs next reads a failed value, which the core reports when it settles. */
    if (e->dev != s->dev && (atomic_load(&e->err) || atomic_load(&b->d[e->dev].fault)))
        return PG_OK;
    pg_status st = use(b, s->dev);
    if (st)
        return st;
    CU(b->cu->cuStreamWaitEvent(s->s, e->e, 0), "cuStreamWaitEvent");
    return PG_OK;
}

/* Timing events around an operation, only when tracing. */
static void time_mark(pg__backend *b, pg__bstream *s, pg__timing *t, int end) {
    if (!t || !b->timing)
        return;
    CUevent e = NULL;
    pthread_mutex_lock(&b->mu);
    if (b->nfree_timing[s->dev])
        e = b->free_timing[s->dev][--b->nfree_timing[s->dev]];
    pthread_mutex_unlock(&b->mu);
    if (e || b->cu->cuEventCreate(&e, CU_EVENT_DEFAULT) == CUDA_SUCCESS) {
        b->cu->cuEventRecord(e, s->s);
        t->priv[end] = e;
        t->priv_dev = s->dev;
    }
}

static pg_status copy(pg__backend *b, pg__bstream *s, int dst_dev, void *dst, int src_dev,
                      const void *src, size_t bytes, pg__timing *t) {
    (void)dst_dev;
    (void)src_dev;
    pg_status st = use(b, s->dev);
    if (st)
        return st;
    time_mark(b, s, t, 0);
    /* Unified addressing: one call for every direction; the driver uses peer links where
     * access is enabled and stages through the host where not. */
    CU(b->cu->cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes, s->s),
       "cuMemcpyAsync");
    time_mark(b, s, t, 1);
    return PG_OK;
}

static pg_status kernel_build(pg__backend *b, const pg__kernel_src *src, void **image) {
    cu_image *k = pg__calloc(1, sizeof *k);
    if (!k)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pg_status st = PG_OK;
    for (int d = 0; d < b->n && !st; d++) {
        int arch = b->d[d].major * 10 + b->d[d].minor, i = 0;
        while (i < k->narchs && k->arch[i] != arch)
            i++;
        if (i < k->narchs)
            continue;
        k->arch[k->narchs] = arch;
        st = pg__nvrtc_compile(src, b->d[d].major, b->d[d].minor, &k->img[k->narchs]);
        if (!st)
            k->narchs++;
        else /* one build per architecture: the first GPU of it is named */
            pg__error_wrap(st, "compiling kernel '%s' for device %d (%s, sm_%d%d)", src->name, d,
                           b->d[d].name, b->d[d].major, b->d[d].minor);
    }
    if (st) {
        for (int i = 0; i < k->narchs; i++)
            pg__nvrtc_image_free(&k->img[i]);
        pg__free(k);
        return st;
    }
    *image = k;
    return PG_OK;
}

static pg_status load_function(pg__backend *b, cu_image *k, int i, int dev) {
    pg_status st = use(b, dev);
    if (st)
        return st;
    CU(b->cu->cuModuleLoadData(&k->mod[dev], k->img[i].data), "cuModuleLoadData");
    CUresult r = b->cu->cuModuleGetFunction(&k->fn[dev], k->mod[dev], k->img[i].lowered);
    if (r) { /* the next launch loads the module again: this one must not stay behind */
        fault_seen(b, r);
        b->cu->cuModuleUnload(k->mod[dev]);
        k->mod[dev] = NULL;
        k->fn[dev] = NULL;
        return (pg_status)pg__cu_error(b->cu, r, "cuModuleGetFunction");
    }
    return PG_OK;
}

static pg_status kernel_function(pg__backend *b, void *image, int dev, void **fn) {
    cu_image *k = image;
    if (!k->fn[dev]) {
        int arch = b->d[dev].major * 10 + b->d[dev].minor, i = 0;
        while (i < k->narchs && k->arch[i] != arch)
            i++;
        if (i == k->narchs)
            return pg__error(PG_ERROR_INTERNAL, "no image for sm_%d", arch);
        pg_status st = load_function(b, k, i, dev);
        if (st) /* the first launch there: say which kernel and GPU */
            return pg__error_wrap(st, "loading kernel '%s' on device %d (%s)", k->img[i].lowered,
                                  dev, b->d[dev].name);
    }
    *fn = k->fn[dev];
    return PG_OK;
}

static void kernel_free(pg__backend *b, void *image) {
    cu_image *k = image;
    for (int d = 0; d < b->n; d++)
        if (k->mod[d] && use(b, d) == PG_OK)
            fault_note(b, d, b->cu->cuModuleUnload(k->mod[d]));
    for (int i = 0; i < k->narchs; i++)
        pg__nvrtc_image_free(&k->img[i]);
    pg__free(k);
}

static pg_status launch(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid, pg_dim3 block,
                        size_t shared_mem, const uint64_t *params, int nparams, pg__timing *t) {
    pg_status st = use(b, s->dev);
    if (st)
        return st;
    void *args[PG__MAX_PARAMS];
    for (int i = 0; i < nparams; i++)
        args[i] = (void *)&params[i];
    if (shared_mem > 48 * 1024)
        CU(b->cu->cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     (int)shared_mem),
           "cuFuncSetAttribute (dynamic shared memory over 48 KiB)");
    time_mark(b, s, t, 0);
    CU(b->cu->cuLaunchKernel(fn, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                             (unsigned)shared_mem, s->s, args, NULL),
       "cuLaunchKernel");
    time_mark(b, s, t, 1);
    return PG_OK;
}

/* The kernel was built from its wrapper source (nvrtc/chunk_wrap.c): its extra parameters say
 * where to count blocks (counters NULL: no epilogue) and which blocks of which grid run. */
static pg_status launch_chunks(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid,
                               pg_dim3 block, size_t shared_mem, const uint64_t *params,
                               int nparams, uint32_t *sync, uint32_t bpc, pg__timing *t) {
    if (nparams + PG__CHUNK_EXTRA_PARAMS > PG__MAX_PARAMS)
        return pg__error(PG_ERROR_ARGUMENT,
                         "a kernel with chunked outputs has at most %d parameters",
                         PG__MAX_PARAMS - PG__CHUNK_EXTRA_PARAMS);
    uint64_t p[PG__MAX_PARAMS];
    memcpy(p, params, (size_t)nparams * sizeof *p);
    uint64_t nblocks = (uint64_t)grid.x * grid.y * grid.z;
    uint64_t nchunks = sync && bpc ? (nblocks + bpc - 1) / bpc : 0;
    p[nparams] = (uint64_t)(uintptr_t)sync;
    p[nparams + 1] = sync ? (uint64_t)(uintptr_t)(sync + nchunks) : 0;
    p[nparams + 2] = bpc ? bpc : 1;
    p[nparams + 3] = nblocks;
    p[nparams + 4] = 0; /* the whole grid, launched as it is */
    p[nparams + 5] = grid.x;
    p[nparams + 6] = grid.y;
    p[nparams + 7] = grid.z;
    return launch(b, s, fn, grid, block, shared_mem, p, nparams + PG__CHUNK_EXTRA_PARAMS, t);
}

/* Blocks [first, first + count) of the grid, through the wrapper: a 1-D launch of count
 * blocks, each told its block of the whole grid. */
static pg_status launch_range(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid, pg_dim3 block,
                              size_t shared_mem, const uint64_t *params, int nparams,
                              uint64_t first, uint64_t count, pg__timing *t) {
    if (nparams + PG__CHUNK_EXTRA_PARAMS > PG__MAX_PARAMS)
        return pg__error(PG_ERROR_ARGUMENT, "a kernel split over devices has at most %d parameters",
                         PG__MAX_PARAMS - PG__CHUNK_EXTRA_PARAMS);
    if (count == 0 || count > 0x7fffffffu)
        return pg__error(PG_ERROR_ARGUMENT,
                         "a part of a split launch has %llu blocks; a GPU runs 1 to 2^31 - 1",
                         (unsigned long long)count);
    uint64_t p[PG__MAX_PARAMS];
    memcpy(p, params, (size_t)nparams * sizeof *p);
    p[nparams] = p[nparams + 1] = 0; /* no counting */
    p[nparams + 2] = 1;
    p[nparams + 3] = count;
    p[nparams + 4] = first;
    p[nparams + 5] = grid.x;
    p[nparams + 6] = grid.y;
    p[nparams + 7] = grid.z;
    pg_dim3 hw = {(uint32_t)count, 1, 1};
    return launch(b, s, fn, hw, block, shared_mem, p, nparams + PG__CHUNK_EXTRA_PARAMS, t);
}

/* Flags memory: slabs of cuMemAlloc'd memory per device (a cuMemAlloc or cuMemFree of its
 * own per launch would synchronize), handed out in units of 256 bytes first-fit. */

static int unit_used(const flag_slab *s, int u) {
    return (int)(s->used[u / 64] >> (u % 64)) & 1;
}

static void units_mark(flag_slab *s, int u, int k, int on) {
    for (int i = u; i < u + k; i++) {
        if (on)
            s->used[i / 64] |= UINT64_C(1) << (i % 64);
        else
            s->used[i / 64] &= ~(UINT64_C(1) << (i % 64));
    }
}

/* First run of k free units in s, or -1. */
static int units_find(const flag_slab *s, int k) {
    for (int u = 0, run = 0; u < SLAB_UNITS; u++) {
        run = unit_used(s, u) ? 0 : run + 1;
        if (run == k)
            return u - k + 1;
    }
    return -1;
}

static pg_status flags_alloc(pg__backend *b, int dev, size_t bytes, void **out) {
    int k = (int)((bytes + FLAG_UNIT - 1) / FLAG_UNIT);
    if (k > SLAB_UNITS)
        return pg__error(PG_ERROR_ARGUMENT, "%zu bytes of chunk flags: at most %d", bytes,
                         SLAB_UNITS * FLAG_UNIT);
    pg_status st = use(b, dev);
    if (st)
        return st;
    pthread_mutex_lock(&b->mu);
    struct flag_slabs *fs = &b->flags[dev];
    for (int i = 0; i <= fs->n && i < MAX_SLABS; i++) {
        if (i == fs->n) {
            flag_slab *ns = pg__calloc(1, sizeof *ns);
            CUresult r = ns ? b->cu->cuMemAlloc(&ns->base, (size_t)SLAB_UNITS * FLAG_UNIT) : 0;
            if (!ns || r != CUDA_SUCCESS) {
                pg__free(ns);
                fault_note(b, dev, r);
                pthread_mutex_unlock(&b->mu);
                return ns ? (pg_status)pg__cu_error(b->cu, r, "cuMemAlloc (chunk flags)")
                          : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
            }
            fs->slab[fs->n++] = ns;
        }
        int u = units_find(fs->slab[i], k);
        if (u >= 0) {
            units_mark(fs->slab[i], u, k, 1);
            pthread_mutex_unlock(&b->mu);
            *out = (void *)(uintptr_t)(fs->slab[i]->base + (CUdeviceptr)u * FLAG_UNIT);
            return PG_OK;
        }
    }
    pthread_mutex_unlock(&b->mu);
    return pg__error(PG_ERROR_OUT_OF_MEMORY,
                     "chunk flags on GPU %d: launches with chunked outputs in flight hold all %d "
                     "slabs (%d MiB) of flag memory",
                     dev, MAX_SLABS, MAX_SLABS * SLAB_UNITS * FLAG_UNIT >> 20);
}

/* The units are free again at once: the core frees only once no work uses them. */
static void flags_free(pg__backend *b, int dev, void *p, size_t bytes) {
    int k = (int)((bytes + FLAG_UNIT - 1) / FLAG_UNIT);
    CUdeviceptr a = (CUdeviceptr)(uintptr_t)p;
    pthread_mutex_lock(&b->mu);
    struct flag_slabs *fs = &b->flags[dev];
    for (int i = 0; i < fs->n; i++) {
        CUdeviceptr base = fs->slab[i]->base;
        if (a >= base && a < base + (CUdeviceptr)SLAB_UNITS * FLAG_UNIT) {
            units_mark(fs->slab[i], (int)((a - base) / FLAG_UNIT), k, 0);
            break;
        }
    }
    pthread_mutex_unlock(&b->mu);
}

/* in: the device's context is current (else the context's release frees the memory). */
static void flags_slabs_free(pg__backend *b, int d, int in) {
    for (int i = 0; i < b->flags[d].n; i++) {
        if (in)
            b->cu->cuMemFree(b->flags[d].slab[i]->base);
        pg__free(b->flags[d].slab[i]);
    }
    b->flags[d].n = 0;
}

/* The copy engine waits on each flag: no SM polls. */
static pg_status wait_flags(pg__backend *b, pg__bstream *s, const uint32_t *flags, uint32_t count) {
    pg_status st = use(b, s->dev);
    if (st)
        return st;
    for (uint32_t i = 0; i < count; i++)
        CU(b->cu->cuStreamWaitValue32(s->s, (CUdeviceptr)(uintptr_t)(flags + i), 1,
                                      CU_STREAM_WAIT_VALUE_GEQ),
           "cuStreamWaitValue32");
    return PG_OK;
}

/* A task: fn runs now, with the device's context current, and enqueues on s's CUstream. */
static pg_status call(pg__backend *b, pg__bstream *s, pg_status (*fn)(void *arg), const void *arg,
                      size_t arg_bytes, pg__timing *t) {
    (void)arg_bytes;
    pg_status st = use(b, s->dev);
    if (st)
        return st;
    time_mark(b, s, t, 0);
    st = fn((void *)arg);
    if (st)
        return st;
    current = NULL; /* the function may have made another context current */
    if ((st = use(b, s->dev)) != PG_OK)
        return st;
    time_mark(b, s, t, 1);
    return PG_OK;
}

/* ---- graphs: one CUDA graph for a recording's replay, on every device it uses (kernel and
 * memcpy nodes name their device's context), launched on one stream as one operation. */

static void memcpy_end(int dev, const void *p, int *type, const void **host, CUdeviceptr *d) {
    if (dev == PG_HOST) {
        *type = CU_MEMORYTYPE_HOST;
        *host = p;
    } else {
        *type = CU_MEMORYTYPE_DEVICE;
        *d = (CUdeviceptr)(uintptr_t)p;
    }
}

static CUresult add_node(pg__backend *b, CUgraph g, const pg__bnode *n, const CUgraphNode *deps,
                         CUgraphNode *out) {
    if (n->kind == PG__BNODE_LAUNCH) {
        void *args[PG__MAX_PARAMS];
        for (int i = 0; i < n->nparams; i++)
            args[i] = (void *)&n->params[i];
        CUDA_KERNEL_NODE_PARAMS_v2 kp = {0};
        kp.func = n->fn;
        kp.gridDimX = n->grid.x, kp.gridDimY = n->grid.y, kp.gridDimZ = n->grid.z;
        kp.blockDimX = n->block.x, kp.blockDimY = n->block.y, kp.blockDimZ = n->block.z;
        kp.sharedMemBytes = (unsigned)n->shared_mem;
        kp.kernelParams = args;
        kp.ctx = b->d[n->dev].ctx;
        return b->cu->cuGraphAddKernelNode(out, g, deps, (size_t)n->ndeps, &kp);
    }
    if (n->kind == PG__BNODE_EMPTY)
        return b->cu->cuGraphAddEmptyNode(out, g, deps, (size_t)n->ndeps);
    CUDA_MEMCPY3D cp = {0};
    const void *dst_host = NULL;
    memcpy_end(n->src_dev, n->src, &cp.srcMemoryType, &cp.srcHost, &cp.srcDevice);
    memcpy_end(n->dst_dev, n->dst, &cp.dstMemoryType, &dst_host, &cp.dstDevice);
    cp.dstHost = (void *)(uintptr_t)dst_host;
    cp.srcPitch = cp.dstPitch = n->bytes;
    cp.srcHeight = cp.dstHeight = 1;
    cp.WidthInBytes = n->bytes;
    cp.Height = cp.Depth = 1;
    return b->cu->cuGraphAddMemcpyNode(out, g, deps, (size_t)n->ndeps, &cp, b->d[n->dev].ctx);
}

static pg_status graph_build(pg__backend *b, const pg__bnode *nodes, int n, void **out) {
    pg_status st = use(b, nodes[0].dev);
    if (st)
        return st;
    CUgraphNode *h = pg__calloc((size_t)n, sizeof *h);
    CUgraphNode *deps = pg__calloc((size_t)n, sizeof *deps);
    if (!h || !deps) {
        pg__free(h);
        pg__free(deps);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    CUgraph g = NULL;
    CUgraphExec e = NULL;
    CUresult r = b->cu->cuGraphCreate(&g, 0);
    const char *what = "cuGraphCreate";
    for (int i = 0; !r && i < n; i++) {
        for (int j = 0; j < nodes[i].ndeps; j++)
            deps[j] = h[nodes[i].deps[j]];
        r = add_node(b, g, &nodes[i], deps, &h[i]);
        what = nodes[i].kind == PG__BNODE_LAUNCH ? "cuGraphAddKernelNode"
               : nodes[i].kind == PG__BNODE_COPY ? "cuGraphAddMemcpyNode"
                                                 : "cuGraphAddEmptyNode";
    }
    if (!r) {
        what = "cuGraphInstantiate";
        r = b->cu->cuGraphInstantiate(&e, g, 0);
    }
    if (g)
        b->cu->cuGraphDestroy(g); /* the executable graph stands alone */
    pg__free(h);
    pg__free(deps);
    if (r) {
        fault_seen(b, r);
        return (pg_status)pg__cu_error(b->cu, r, what);
    }
    *out = e;
    return PG_OK;
}

static pg_status graph_launch(pg__backend *b, pg__bstream *s, void *graph) {
    pg_status st = use(b, s->dev);
    if (st)
        return st;
    CU(b->cu->cuGraphLaunch(graph, s->s), "cuGraphLaunch");
    return PG_OK;
}

static void graph_free(pg__backend *b, void *graph) {
    b->cu->cuGraphExecDestroy(graph);
}

static uint64_t ns_since_epoch(pg__backend *b, int dev, void *ev) {
    float ms = 0;
    if (!ev || b->cu->cuEventElapsedTime(&ms, b->d[dev].epoch, (CUevent)ev) != CUDA_SUCCESS)
        return 0;
    int64_t ns = b->d[dev].epoch_offset_ns + (int64_t)((double)ms * 1e6);
    return ns > 0 ? (uint64_t)ns : 0;
}

/* Back to the pool (a later record replaces whatever the event still waits for), or destroyed
 * when the pool is full. */
static void timing_release(pg__backend *b, pg__timing *t) {
    int d = t->priv_dev;
    for (int i = 0; i < 2; i++)
        if (t->priv[i]) {
            int kept = 0;
            pthread_mutex_lock(&b->mu);
            if (d >= 0 && d < b->n && b->nfree_timing[d] < TIMING_POOL) {
                b->free_timing[d][b->nfree_timing[d]++] = (CUevent)t->priv[i];
                kept = 1;
            }
            pthread_mutex_unlock(&b->mu);
            if (!kept)
                b->cu->cuEventDestroy((CUevent)t->priv[i]);
            t->priv[i] = NULL;
        }
}

/* Times relative to the epoch of the device whose stream recorded the events (an epoch of
 * another device's context would be an invalid-handle error). */
static void timing_resolve(pg__backend *b, pg__timing *t) {
    int d = t->priv_dev;
    if (!t->priv[0] || d < 0 || d >= b->n)
        return;
    t->start_ns = ns_since_epoch(b, d, t->priv[0]);
    t->end_ns = ns_since_epoch(b, d, t->priv[1]);
}

static int device_fault(pg__backend *b, int dev, char *msg, size_t cap) {
    CUresult r = dev >= 0 && dev < b->n ? atomic_load(&b->d[dev].fault) : 0;
    if (!r)
        return 0;
    char d[256];
    pg__cu_describe(b->cu, r, d, sizeof d);
    snprintf(msg, cap, "GPU %d has a fault CUDA keeps for the life of its context: %s", dev, d);
    return 1;
}

/* ---- the GPU's own timeline (devices/cuda/cu_cupti.c) */

static void gpu_trace_start(pg__backend *b) {
    void *ctx[PG_MAX_DEVICES];
    for (int d = 0; d < b->n; d++)
        ctx[d] = b->d[d].ctx;
    b->cupti = pg__cupti_start(ctx, b->n, b->cupti_why, sizeof b->cupti_why);
    /* PG_TRACE_EVENTS=0: with the GPU's own timeline, no timing events around each launch and
     * copy (two event records each, host time that would show in the timeline as host
     * submission); the host's rows then show instants at submission. */
    const char *ev = getenv("PG_TRACE_EVENTS");
    if (b->cupti && ev && !strcmp(ev, "0"))
        b->timing = 0;
}

static void trace_enter(pg__backend *b, uint64_t id) {
    if (b->cupti)
        pg__cupti_enter(b->cupti, id);
}

static void trace_leave(pg__backend *b) {
    if (b->cupti)
        pg__cupti_leave(b->cupti);
}

static int gpu_timeline(pg__backend *b, uint64_t epoch_ns, int idle, pg_gpu_span **spans, size_t *n,
                        char *why, size_t cap) {
    *spans = NULL;
    *n = 0;
    if (!b->cupti) {
        snprintf(why, cap, "%s",
                 b->cupti_why[0] ? b->cupti_why : "recording was not started (trace option off)");
        return 0;
    }
    if (pg__cupti_spans(b->cupti, epoch_ns, idle, spans, n, why, cap)) {
        snprintf(why, cap, "%s", pg_last_error());
        pg__error_clear();
        return 0;
    }
    return 1;
}

static void close_backend(pg__backend *b) {
    pg__cupti_stop(b->cupti); /* while the contexts live: CUPTI flushes their records */
    b->cupti = NULL;
    for (int d = 0; d < b->n; d++) {
        if (!b->d[d].ctx)
            continue;
        /* Outside the context (cuCtxSetCurrent failed) only the host memory is freed here: the
         * context's release frees what the driver holds. */
        int in = use(b, d) == PG_OK;
        if (in && b->d[d].internal) {
            b->cu->cuStreamSynchronize(b->d[d].internal);
            b->cu->cuStreamDestroy(b->d[d].internal);
        }
        if (in && b->d[d].epoch)
            b->cu->cuEventDestroy(b->d[d].epoch);
        flags_slabs_free(b, d, in);
        for (pg__bevent *e = b->free_events[d], *n; e; e = n) {
            n = e->next_free;
            if (in)
                b->cu->cuEventDestroy(e->e);
            pg__free(e);
        }
        b->free_events[d] = NULL;
        while (b->nfree_timing[d]) {
            CUevent e = b->free_timing[d][--b->nfree_timing[d]];
            if (in)
                b->cu->cuEventDestroy(e);
        }
        b->cu->cuDevicePrimaryCtxRelease(b->d[d].dev);
    }
    /* The driver's own idea of this thread's context goes too: a later retain looks at it, and
     * a reset context left current there hands its fault to the next runtime. */
    b->cu->cuCtxSetCurrent(NULL);
    current = NULL;
    for (int i = 0; i < b->nplain; i++)
        pg__free(b->plain[i]);
    pg__free(b->plain);
    pthread_mutex_destroy(&b->mu);
    pg__free(b);
}

static uint64_t stream_handle(pg__backend *b, pg__bstream *s) {
    (void)b;
    return (uint64_t)(uintptr_t)s->s;
}

/* An event recorded on the foreign stream, waited for by ours: no host synchronization. The
 * event can go back to the free list at once: the wait captured its state. */
static pg_status stream_wait_foreign(pg__backend *b, pg__bstream *s, uint64_t foreign) {
    pg__bevent *e = NULL;
    pg_status st = use(b, s->dev);
    if (!st)
        st = event_get(b, s->dev, &e);
    if (st)
        return st;
    CUresult r = b->cu->cuEventRecord(e->e, (CUstream)(uintptr_t)foreign);
    if (!r)
        r = b->cu->cuStreamWaitEvent(s->s, e->e, 0);
    event_free(b, e);
    fault_note(b, s->dev, r);
    if (r)
        return (pg_status)pg__cu_error(b->cu, r, "waiting for a foreign CUDA stream");
    return PG_OK;
}

static pg_status foreign_wait(pg__backend *b, int dev, uint64_t waiter, uint64_t done) {
    pg__bevent *e = NULL;
    pg_status st = use(b, dev);
    if (!st)
        st = event_get(b, dev, &e);
    if (st)
        return st;
    CUresult r = b->cu->cuEventRecord(e->e, (CUstream)(uintptr_t)done);
    if (!r)
        r = waiter ? b->cu->cuStreamWaitEvent((CUstream)(uintptr_t)waiter, e->e, 0)
                   : b->cu->cuEventSynchronize(e->e);
    event_free(b, e);
    fault_note(b, dev, r);
    if (r)
        return (pg_status)pg__cu_error(b->cu, r, "ordering a foreign CUDA stream after polygpu's");
    return PG_OK;
}

static pg_status pointer_device(pg__backend *b, uint64_t ptr, int *dev) {
    /* The plural call answers "not CUDA memory" with defaults instead of an API error. */
    unsigned type = 0;
    int ordinal = -1;
    int attrs[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *data[2] = {&type, &ordinal};
    /* A failed call says nothing of the address: the driver's error, not the caller's. (No
     * context is made current for these calls, so a fault is not pinned on a device here.) */
    CUresult r = b->cu->cuPointerGetAttributes(2, attrs, data, (CUdeviceptr)ptr);
    if (r)
        return (pg_status)pg__cu_error(b->cu, r,
                                       "cuPointerGetAttributes (which GPU holds a device address)");
    if ((type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED) || ordinal < 0)
        return pg__error(PG_ERROR_ARGUMENT, "address %#llx is not CUDA device memory",
                         (unsigned long long)ptr);
    CUdevice d;
    if ((r = b->cu->cuDeviceGet(&d, ordinal)) != CUDA_SUCCESS)
        return (pg_status)pg__cu_error(b->cu, r, "cuDeviceGet");
    for (int i = 0; i < b->n; i++)
        if (d == b->d[i].dev) {
            *dev = i;
            return PG_OK;
        }
    return pg__error(PG_ERROR_ARGUMENT,
                     "address %#llx is on GPU %d, which this runtime does not use (devices=...)",
                     (unsigned long long)ptr, ordinal);
}

/* Power through NVML: read only, never a setting. */
static int power_mw(pg__backend *b, int dev, unsigned *mw) {
    return pg__nvml_power_mw(b->d[dev].nvml, mw);
}

static int energy_mj(pg__backend *b, int dev, uint64_t *mj) {
    return pg__nvml_energy_mj(b->d[dev].nvml, mj);
}

static int power_default_mw(pg__backend *b, int dev, unsigned *mw) {
    return pg__nvml_default_limit_mw(b->d[dev].nvml, mw);
}

static const pg__backend_ops ops = {
    .name = "cuda",
    .close = close_backend,
    .device_info = device_info,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .dev_alloc = dev_alloc,
    .dev_free = dev_free,
    .memset_zero = memset_zero,
    .stream_new = stream_new,
    .stream_free = stream_free,
    .event_record = event_record,
    .event_done = event_done,
    .event_wait = event_wait,
    .event_wait_for = event_wait_for,
    .event_error = event_error,
    .device_fault = device_fault,
    .stream_wait = stream_wait,
    .event_free = event_free,
    .copy = copy,
    .kernel_build = kernel_build,
    .kernel_function = kernel_function,
    .kernel_free = kernel_free,
    .launch = launch,
    .chunk_epilogue = 1,
    .launch_chunks = launch_chunks,
    .launch_range = launch_range,
    .range_wrapper = 1,
    .wait_flags = wait_flags,
    .flags_alloc = flags_alloc,
    .flags_free = flags_free,
    .call = call,
    .graph_build = graph_build,
    .graph_launch = graph_launch,
    .graph_free = graph_free,
    .timing_resolve = timing_resolve,
    .timing_release = timing_release,
    .wants_timing_events = 1,
    .stream_handle = stream_handle,
    .stream_wait_foreign = stream_wait_foreign,
    .foreign_wait = foreign_wait,
    .pointer_device = pointer_device,
    .power_mw = power_mw,
    .energy_mj = energy_mj,
    .power_default_mw = power_default_mw,
    .gpu_trace_start = gpu_trace_start,
    .trace_enter = trace_enter,
    .trace_leave = trace_leave,
    .gpu_timeline = gpu_timeline,
};

/* "" = every GPU, "0,2" = those ordinals. */
static pg_status parse_spec(const char *spec, int count, int *ord, int *n) {
    *n = 0;
    if (!*spec) {
        for (int i = 0; i < count && i < PG_MAX_DEVICES; i++)
            ord[(*n)++] = i;
        return PG_OK;
    }
    const char *p = spec;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v >= count || *n == PG_MAX_DEVICES)
            return pg__error(PG_ERROR_DEVICE,
                             "bad CUDA device list 'cuda:%s': this machine has %d GPU(s), "
                             "ordinals 0..%d",
                             spec, count, count - 1);
        for (int i = 0; i < *n; i++)
            if (ord[i] == v)
                return pg__error(PG_ERROR_ARGUMENT, "GPU %ld is listed twice in 'cuda:%s'", v,
                                 spec);
        ord[(*n)++] = (int)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return pg__error(PG_ERROR_ARGUMENT, "bad CUDA device list 'cuda:%s'", spec);
    }
    return PG_OK;
}

/* nvidia-smi's spelling, GPU-8-4-4-4-12 hex digits: the name users see elsewhere. */
static void format_uuid(const CUuuid *u, char *out, size_t cap) {
    const unsigned char *x = (const unsigned char *)u->bytes;
    size_t n = (size_t)snprintf(out, cap, "GPU-");
    for (int i = 0; i < 16 && n + 3 < cap; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[n++] = '-';
        n += (size_t)snprintf(out + n, cap - n, "%02x", x[i]);
    }
}

static pg_status open_device(pg__backend *b, int i, int ordinal) {
    cu_device *d = &b->d[i];
    CU(b->cu->cuDeviceGet(&d->dev, ordinal), "cuDeviceGet");
    CUresult r = b->cu->cuDevicePrimaryCtxRetain(&d->ctx, d->dev);
    if (r && pg__cu_sticky(r)) {
        char why[256];
        pg__cu_describe(b->cu, r, why, sizeof why);
        return pg__error(PG_ERROR_DEVICE,
                         "GPU %d is unusable in this process: a kernel faulted on it earlier "
                         "(%s), and the CUDA driver keeps that fault until the process ends; "
                         "restart the process to use it (devices=host:N works meanwhile)",
                         ordinal, why);
    }
    CU(r, "cuDevicePrimaryCtxRetain");
    pg_status st = use(b, i);
    if (st)
        return st;
    CU(b->cu->cuDeviceGetName(d->name, sizeof d->name, d->dev), "cuDeviceGetName");
    CU(b->cu->cuDeviceTotalMem(&d->memory, d->dev), "cuDeviceTotalMem");
    CUuuid u;
    CU(b->cu->cuDeviceGetUuid(&u, d->dev), "cuDeviceGetUuid");
    format_uuid(&u, d->uuid, sizeof d->uuid);
    CU(b->cu->cuDeviceGetAttribute(&d->major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev),
       "cuDeviceGetAttribute");
    CU(b->cu->cuDeviceGetAttribute(&d->minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev),
       "cuDeviceGetAttribute");
    CU(b->cu->cuDeviceGetAttribute(&d->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev),
       "cuDeviceGetAttribute");
    /* The clock only weighs devices against each other under a power budget: a driver that no
     * longer reports it leaves 0 (the SM count alone then). */
    if (b->cu->cuDeviceGetAttribute(&d->clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, d->dev) ||
        d->clock_khz < 0)
        d->clock_khz = 0;
    /* NVML's view of the same board, for power and energy: absent NVML is no error. */
    char bus[32] = "";
    if (b->cu->cuDeviceGetPCIBusId(bus, (int)sizeof bus, d->dev))
        bus[0] = 0;
    d->nvml = pg__nvml_find(d->uuid, bus, NULL, 0);
    static const int limit_attr[8] = {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                      CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
                                      CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                                      CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
                                      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                                      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
                                      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN};
    for (int a = 0; a < 8; a++) {
        CU(b->cu->cuDeviceGetAttribute(&d->limit[a], limit_attr[a], d->dev),
           "cuDeviceGetAttribute (launch limits)");
        if (d->limit[a] < 0)
            d->limit[a] = 0;
    }
    int pools = 0;
    CU(b->cu->cuDeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, d->dev),
       "cuDeviceGetAttribute");
    if (!pools)
        return pg__error(PG_ERROR_UNSUPPORTED,
                         "GPU %d (%s) has no stream-ordered memory pools (needs CUDA 11.2+ and a "
                         "supported driver)",
                         ordinal, d->name);
    CU(b->cu->cuDeviceGetDefaultMemPool(&d->pool, d->dev), "cuDeviceGetDefaultMemPool");
    /* Keep freed memory in the pool for reuse instead of returning it at each sync. */
    uint64_t keep = UINT64_MAX;
    CU(b->cu->cuMemPoolSetAttribute(d->pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep),
       "cuMemPoolSetAttribute");
    CU(b->cu->cuStreamCreate(&d->internal, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (b->timing) {
        CU(b->cu->cuEventCreate(&d->epoch, CU_EVENT_DEFAULT), "cuEventCreate");
        CU(b->cu->cuEventRecord(d->epoch, d->internal), "cuEventRecord");
        CU(b->cu->cuEventSynchronize(d->epoch), "cuEventSynchronize");
        d->epoch_offset_ns = host_now_ns();
    }
    return PG_OK;
}

/* Peer access both ways between every capable pair, for contexts and for pool memory. */
static pg_status enable_peers(pg__backend *b) {
    for (int i = 0; i < b->n; i++)
        for (int j = 0; j < b->n; j++) {
            if (i == j)
                continue;
            int can = 0;
            CU(b->cu->cuDeviceCanAccessPeer(&can, b->d[i].dev, b->d[j].dev),
               "cuDeviceCanAccessPeer");
            if (!can)
                continue;
            pg_status st = use(b, i);
            if (st)
                return st;
            CUresult r = b->cu->cuCtxEnablePeerAccess(b->d[j].ctx, 0);
            if (r && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
                return (pg_status)pg__cu_error(b->cu, r, "cuCtxEnablePeerAccess");
            /* Device i may read and write memory from j's pool. */
            CUmemAccessDesc desc = {{CU_MEM_LOCATION_TYPE_DEVICE, (int)b->d[i].dev},
                                    CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
            CU(b->cu->cuMemPoolSetAccess(b->d[j].pool, &desc, 1), "cuMemPoolSetAccess");
        }
    return PG_OK;
}

/* The process that initialised CUDA (0: none yet). A fork() child inherits it, not a usable
 * CUDA: its cuInit fails, and the pid differing says why. */
static _Atomic long cuda_pid;

pg_status pg__cuda_backend_open(const char *spec, int enable_timing, const pg__backend_ops **out,
                                pg__backend **bout, int *ndev) {
    const pg__cu *cu = pg__cu_load();
    if (!cu)
        return PG_ERROR_DEVICE;
    CUresult r = cu->cuInit(0);
    if (r)
        return (pg_status)pg__cu_init_error(cu, r, atomic_load(&cuda_pid), (long)getpid());
    atomic_store(&cuda_pid, (long)getpid());
    int count = 0;
    r = cu->cuDeviceGetCount(&count);
    if (r)
        return (pg_status)pg__cu_error(cu, r, "cuDeviceGetCount");
    if (count == 0)
        return pg__error(PG_ERROR_DEVICE, "the CUDA driver found no GPU: use devices=host:N");
    int ord[PG_MAX_DEVICES], n;
    pg_status st = parse_spec(spec, count, ord, &n);
    if (st)
        return st;
    pg__backend *b = pg__calloc(1, sizeof *b);
    if (!b)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    b->cu = cu;
    b->timing = enable_timing;
    pthread_mutex_init(&b->mu, NULL);
    for (int i = 0; i < n && !st; i++) {
        st = open_device(b, i, ord[i]);
        b->n = i + 1;
    }
    if (!st)
        st = enable_peers(b);
    if (st) {
        close_backend(b);
        return st;
    }
    /* Trace times count from here, as the core's host-side ones do (it starts its clock right
     * after the backend opens). */
    int64_t epoch = host_now_ns();
    for (int i = 0; i < n; i++)
        b->d[i].epoch_offset_ns -= epoch;
    *out = &ops;
    *bout = b;
    *ndev = n;
    return PG_OK;
}

/* Syntax only: how many GPUs there are is known once the driver is loaded. */
static pg_status cuda_check(const char *spec) {
    const char *p = spec;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || end - p > 4 || v < 0 || (*end && *end != ',') || (*end && !end[1]))
            return pg__error(PG_ERROR_ARGUMENT, "bad CUDA device list 'cuda:%s'", spec);
        p = *end ? end + 1 : end;
    }
    return PG_OK;
}

static pg_status cuda_entry_open(const char *spec, const pg__open_args *a,
                                 const pg__backend_ops **out, pg__backend **b, int *ndev) {
    return pg__cuda_backend_open(spec, a->timing, out, b, ndev);
}

const pg__backend_entry pg__cuda_entry = {
    .name = "cuda",
    .forms = "cuda (every GPU), a list of GPU ordinals such as cuda:0,2",
    .device_class = PG_CLASS_GPU,
    .in_auto = 1,
    .measure_links = 1,
    .check = cuda_check,
    .open = cuda_entry_open,
};

/* fake_cupti.c: a test double of CUPTI's activity API (libcupti.so) for tests/cudadouble, found
 * through PG_CUPTI_PATH, beside the fake driver (fake_cuda.c). It hears from the driver of each
 * call that enqueues work and of each kernel, copy and memset as the fake GPUs run it
 * (fake_cuda_set_tracer), and hands over records in the layout of devices/cuda/cu_cupti_abi.h,
 * as the real CUPTI does:
 * - a call gets a correlation id; with EXTERNAL_CORRELATION enabled and the call's API records
 *   on (cuptiActivityEnableDriverApi for its callback id, or the DRIVER kind), an external
 *   correlation record per id pushed on the calling thread, then the call's API record;
 * - a kernel (CONCURRENT_KERNEL), copy (MEMCPY; peer copies MEMCPY2 when enabled) or memset
 *   (MEMSET) when it runs, on CUPTI's clock (CLOCK_REALTIME), in order on each stream; device
 *   ids are the GPU's ordinal + 100, so the backend must map them (cuptiGetDeviceId);
 * - records go into buffers the client's callback hands out, returned full or at a flush.
 * FAKE_CUPTI_NO_EXTERNAL=1: no external correlation records (the backend must find each
 * record's computation from when its call was made).
 * FAKE_CUPTI_REFUSE=1: cuptiActivityEnable fails with CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, as on
 * a machine that lets only administrators profile. */
#include "devices/cuda/cu_cupti_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

enum { STRIDE = 256, MAX_KIND = 64, MAX_CBID = 1024, MAX_STREAMS = 256, DEV_BASE = 100 };

typedef struct fake_tracer {
    uint32_t (*call)(const char *name);
    void (*ran)(int kind, int dev, const void *stream, uint32_t corr, uint64_t bytes, int copy_kind,
                int src_dev, int dst_dev, const char *name);
} fake_tracer;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pg__cupti_buffer_requested requested;
static pg__cupti_buffer_completed completed;
static int enabled[MAX_KIND];
static uint8_t driver_api[MAX_CBID];
static uint8_t *buf;
static size_t buf_size, buf_used;
static uint32_t next_corr;
static struct {
    const void *s;
    uint64_t last_end;
    uint32_t id;
} streams[MAX_STREAMS];
static int nstreams;
static _Thread_local uint64_t ext_stack[16];
static _Thread_local int ext_depth;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* mu held: hand the current buffer back (outside mu: the client takes its own lock). */
static void take_buffer(uint8_t **b, size_t *size, size_t *used) {
    *b = buf;
    *size = buf_size;
    *used = buf_used;
    buf = NULL;
    buf_size = buf_used = 0;
}

static void give(uint8_t *b, size_t size, size_t used) {
    if (b && completed)
        completed(NULL, 0, b, size, used);
}

/* mu held: room for one record; a full buffer goes back first (then *full is set). */
static void *record(uint8_t **full, size_t *full_size, size_t *full_used) {
    if (buf && buf_used + STRIDE > buf_size)
        take_buffer(full, full_size, full_used);
    if (!buf && requested) {
        size_t max = 0;
        requested(&buf, &buf_size, &max);
        buf_used = 0;
    }
    if (!buf || buf_used + STRIDE > buf_size)
        return NULL;
    void *r = buf + buf_used;
    memset(r, 0, STRIDE);
    buf_used += STRIDE;
    return r;
}

static uint32_t cbid_of(const char *name) {
    if (!strcmp(name, "cuLaunchKernel"))
        return 307;
    if (!strcmp(name, "cuMemcpyAsync"))
        return 306;
    if (!strcmp(name, "cuMemsetD8Async"))
        return 216;
    if (!strcmp(name, "cuGraphLaunch"))
        return 514;
    return 0;
}

static uint32_t on_call(const char *name) {
    uint8_t *full = NULL;
    size_t fs = 0, fu = 0;
    pthread_mutex_lock(&mu);
    uint32_t corr = ++next_corr, cbid = cbid_of(name);
    int api = enabled[PG__CUPTI_ACTIVITY_KIND_DRIVER] || (cbid < MAX_CBID && driver_api[cbid]);
    if (api && enabled[PG__CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION] && ext_depth &&
        !getenv("FAKE_CUPTI_NO_EXTERNAL")) {
        pg__cupti_external *x = record(&full, &fs, &fu);
        if (x) {
            x->kind = PG__CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
            x->externalKind = PG__CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
            x->externalId = ext_stack[ext_depth - 1];
            x->correlationId = corr;
        }
    }
    if (api) {
        pg__cupti_api *a = record(&full, &fs, &fu);
        if (a) {
            a->kind = PG__CUPTI_ACTIVITY_KIND_DRIVER;
            a->cbid = cbid;
            a->start = now_ns();
            a->end = a->start + 50;
            a->correlationId = corr;
        }
    }
    pthread_mutex_unlock(&mu);
    give(full, fs, fu);
    return corr;
}

/* mu held: stream s's id, and the GPU time its work may start at (in order on a stream). */
static uint64_t stream_start(const void *s, uint32_t *id) {
    int i = 0;
    while (i < nstreams && streams[i].s != s)
        i++;
    if (i == nstreams && nstreams < MAX_STREAMS) {
        streams[nstreams].s = s;
        streams[nstreams].id = 7 + (uint32_t)nstreams; /* CUPTI's ids are its own */
        streams[nstreams++].last_end = 0;
    }
    uint64_t t = now_ns();
    if (i == MAX_STREAMS) {
        *id = 0;
        return t;
    }
    *id = streams[i].id;
    if (t < streams[i].last_end)
        t = streams[i].last_end;
    streams[i].last_end = t + 200;
    return t;
}

static void on_ran(int kind, int dev, const void *stream, uint32_t corr, uint64_t bytes,
                   int copy_kind, int src_dev, int dst_dev, const char *name) {
    uint8_t *full = NULL;
    size_t fs = 0, fu = 0;
    pthread_mutex_lock(&mu);
    uint32_t sid = 0;
    uint64_t start = stream_start(stream, &sid);
    if (kind == 0 && enabled[PG__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]) {
        pg__cupti_kernel *k = record(&full, &fs, &fu);
        if (k) {
            k->kind = PG__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            k->start = start;
            k->end = start + 150;
            k->deviceId = (uint32_t)dev + DEV_BASE;
            k->streamId = sid;
            k->correlationId = corr;
            k->gridX = k->gridY = k->gridZ = 1;
            k->name = name; /* the fake driver's kernel table: static strings */
        }
    } else if (kind == 1 && copy_kind == PG__CUPTI_ACTIVITY_MEMCPY_KIND_PTOP &&
               enabled[PG__CUPTI_ACTIVITY_KIND_MEMCPY2]) {
        pg__cupti_memcpy2 *m = record(&full, &fs, &fu);
        if (m) {
            m->kind = PG__CUPTI_ACTIVITY_KIND_MEMCPY2;
            m->copyKind = (uint8_t)copy_kind;
            m->bytes = bytes;
            m->start = start;
            m->end = start + 150;
            m->deviceId = (uint32_t)dev + DEV_BASE;
            m->streamId = sid;
            m->srcDeviceId = (uint32_t)src_dev + DEV_BASE;
            m->dstDeviceId = (uint32_t)dst_dev + DEV_BASE;
            m->correlationId = corr;
        }
    } else if (kind == 1 && enabled[PG__CUPTI_ACTIVITY_KIND_MEMCPY]) {
        pg__cupti_memcpy *m = record(&full, &fs, &fu);
        if (m) {
            m->kind = PG__CUPTI_ACTIVITY_KIND_MEMCPY;
            m->copyKind = (uint8_t)copy_kind;
            m->bytes = bytes;
            m->start = start;
            m->end = start + 150;
            m->deviceId = (uint32_t)dev + DEV_BASE;
            m->streamId = sid;
            m->correlationId = corr;
        }
    } else if (kind == 2 && enabled[PG__CUPTI_ACTIVITY_KIND_MEMSET]) {
        pg__cupti_memset *m = record(&full, &fs, &fu);
        if (m) {
            m->kind = PG__CUPTI_ACTIVITY_KIND_MEMSET;
            m->bytes = bytes;
            m->start = start;
            m->end = start + 150;
            m->deviceId = (uint32_t)dev + DEV_BASE;
            m->streamId = sid;
            m->correlationId = corr;
        }
    }
    pthread_mutex_unlock(&mu);
    give(full, fs, fu);
}

static const fake_tracer tracer = {on_call, on_ran};

/* The fake driver, already loaded by the backend (RTLD_LOCAL: found by name, not globally). */
static void *driver_sym(const char *name) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return h ? dlsym(h, name) : NULL;
}

EXPORT pg__cupti_result cuptiGetResultString(pg__cupti_result r, const char **s) {
    static char text[64];
    snprintf(text, sizeof text,
             r == PG__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
                                                          : "FAKE_CUPTI_ERROR");
    *s = text;
    return PG__CUPTI_SUCCESS;
}

EXPORT pg__cupti_result cuptiActivityRegisterCallbacks(pg__cupti_buffer_requested req,
                                                       pg__cupti_buffer_completed done) {
    if (!req || !done)
        return 1;
    pthread_mutex_lock(&mu);
    requested = req;
    completed = done;
    pthread_mutex_unlock(&mu);
    return PG__CUPTI_SUCCESS;
}

EXPORT pg__cupti_result cuptiActivityEnable(int32_t kind) {
    if (getenv("FAKE_CUPTI_REFUSE"))
        return PG__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
    if (kind <= 0 || kind >= MAX_KIND)
        return PG__CUPTI_ERROR_INVALID_KIND;
    void (*set)(const fake_tracer *) =
        (void (*)(const fake_tracer *))driver_sym("fake_cuda_set_tracer");
    if (!set)
        return PG__CUPTI_ERROR_NOT_INITIALIZED;
    set(&tracer);
    pthread_mutex_lock(&mu);
    enabled[kind] = 1;
    pthread_mutex_unlock(&mu);
    return PG__CUPTI_SUCCESS;
}

EXPORT pg__cupti_result cuptiActivityDisable(int32_t kind) {
    if (kind <= 0 || kind >= MAX_KIND)
        return PG__CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&mu);
    enabled[kind] = 0;
    pthread_mutex_unlock(&mu);
    return PG__CUPTI_SUCCESS;
}

EXPORT pg__cupti_result cuptiActivityEnableDriverApi(uint32_t cbid, uint8_t on) {
    if (cbid >= MAX_CBID)
        return 1;
    pthread_mutex_lock(&mu);
    driver_api[cbid] = on;
    pthread_mutex_unlock(&mu);
    return PG__CUPTI_SUCCESS;
}

EXPORT pg__cupti_result cuptiActivityEnableRuntimeApi(uint32_t cbid, uint8_t on) {
    (void)cbid;
    (void)on;
    return PG__CUPTI_SUCCESS;
}

EXPORT pg__cupti_result cuptiActivityFlushAll(uint32_t flag) {
    (void)flag; /* every record here is complete when written */
    uint8_t *b;
    size_t size, used;
    pthread_mutex_lock(&mu);
    take_buffer(&b, &size, &used);
    pthread_mutex_unlock(&mu);
    give(b, size, used);
    return PG__CUPTI_SUCCESS;
}

EXPORT pg__cupti_result cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
                                                   pg__cupti_activity **record) {
    uint8_t *next = *record ? (uint8_t *)*record + STRIDE : buffer;
    if (next + STRIDE > buffer + valid) {
        *record = NULL;
        return PG__CUPTI_ERROR_MAX_LIMIT_REACHED;
    }
    *record = (pg__cupti_activity *)next;
    return PG__CUPTI_SUCCESS;
}

EXPORT pg__cupti_result cuptiActivityGetNumDroppedRecords(pg__cupti_context ctx, uint32_t stream,
                                                          size_t *dropped) {
    (void)ctx;
    (void)stream;
    *dropped = 0;
    return PG__CUPTI_SUCCESS;
}

EXPORT pg__cupti_result cuptiActivityPushExternalCorrelationId(int32_t kind, uint64_t id) {
    if (kind != PG__CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 || ext_depth == 16)
        return 1;
    ext_stack[ext_depth++] = id;
    return PG__CUPTI_SUCCESS;
}

EXPORT pg__cupti_result cuptiActivityPopExternalCorrelationId(int32_t kind, uint64_t *last) {
    if (kind != PG__CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 || !ext_depth)
        return 1;
    ext_depth--;
    if (last)
        *last = ext_stack[ext_depth];
    return PG__CUPTI_SUCCESS;
}

EXPORT pg__cupti_result cuptiGetTimestamp(uint64_t *ts) {
    *ts = now_ns();
    return PG__CUPTI_SUCCESS;
}

EXPORT pg__cupti_result cuptiGetDeviceId(pg__cupti_context ctx, uint32_t *id) {
    int (*dev)(void *) = (int (*)(void *))driver_sym("fake_cuda_context_device");
    int d = dev ? dev(ctx) : -1;
    if (d < 0)
        return 1;
    *id = (uint32_t)d + DEV_BASE;
    return PG__CUPTI_SUCCESS;
}

/* How many times the client pushed without popping, for the test's checks. */
EXPORT int fake_cupti_depth(void) {
    return ext_depth;
}

/* cu_cupti.c: CUPTI's activity API behind the CUDA backend (trace option). CUPTI is one per
 * process: this file loads it once, registers the buffer callbacks once, and keeps every record
 * it hands over in one ring; each backend that records takes a tag, and the computations it
 * issues carry tag << 48 | id as their external correlation id, so each backend finds its own
 * records (several runtimes may trace at once). A record is tied to its computation through the
 * correlation id CUPTI gives the driver call that enqueued it: the external correlation record
 * maps that call to our id, and the API record says when the call began on the host. */
#include "devices/cuda/cu_cupti.h"
#include "devices/cuda/cu_cupti_abi.h"

#include "base/alloc.h"
#include "base/dl_find.h"
#include "base/error.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct {
#define PG__CUPTI_FIELD(name, sym, params) pg__cupti_result(*name) params;
    PG__CUPTI_FUNCS(PG__CUPTI_FIELD)
    PG__CUPTI_OPTIONAL(PG__CUPTI_FIELD)
#undef PG__CUPTI_FIELD
} api;
static int loaded;
static char load_why[1200];
static char where[800];
static pthread_once_t once = PTHREAD_ONCE_INIT;

enum {
    MAX_SPANS = 1 << 17, /* records kept, oldest overwritten (the DAG keeps 65,536 vertices) */
    MAP = 1 << 16,    /* correlation ids remembered: driver calls between a call and its record */
    BUFFER = 1 << 20, /* bytes per buffer handed to CUPTI */
    TAG_SHIFT = 48,
};

/* A kernel, copy or memset as CUPTI reported it, times on CUPTI's clock. */
typedef struct raw {
    uint64_t start, end, bytes;
    uint64_t ext; /* the external correlation id, 0: none (yet) */
    uint64_t api; /* the enqueueing call's start, 0: unknown (yet) */
    uint32_t dev, stream, corr;
    uint8_t kind, copy_kind, resolved;
    char name[64];
} raw;

typedef struct corr_slot {
    uint32_t corr;
    uint64_t ext, api;
} corr_slot;

/* Records (guarded by mu: CUPTI's callbacks run on its own thread or inside a flush). */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static raw *ring;
static size_t ring_cap, ring_n, ring_head;
static uint64_t dropped_ring, dropped_cupti;
static corr_slot *map;
/* Subscription (guarded by life: starts and stops, never taken in a callback). */
static pthread_mutex_t life = PTHREAD_MUTEX_INITIALIZER;
static int users;
static uint64_t next_tag;
static int64_t clock_offset; /* CUPTI's clock minus CLOCK_MONOTONIC, ns */
static int api_all;          /* every driver and runtime call is recorded (no fine-grained API) */

/* When each computation's work was enqueued, on CUPTI's clock: the second way to a record's
 * computation, for records whose call CUPTI gave no external correlation (a CUPTI that emits
 * them only with every API record on, say): the call began inside its computation's window. */
typedef struct window {
    uint64_t id, from, to;
} window;

struct pg__cupti {
    uint64_t tag;
    uint64_t t0; /* CUPTI's clock at the start: records before it are not this backend's */
    int n;
    uint32_t devid[PG_MAX_DEVICES]; /* CUPTI's device id of each of the backend's GPUs */
    /* The windows, oldest first in a ring of up to MAX_SPANS (the caller's lock: enter, leave
     * and spans are called under the runtime's). */
    window *win;
    size_t win_cap, win_n, win_head;
    uint64_t cur; /* the computation entered, 0: none */
    uint64_t cur_from;
};

static const char *describe(pg__cupti_result r) {
    const char *s = NULL;
    if (!api.cuptiGetResultString || api.cuptiGetResultString(r, &s) != PG__CUPTI_SUCCESS || !s)
        s = "unknown CUPTI error";
    return s;
}

static void *try_open(const char *path) {
    return pg__dl_try(where, sizeof where, path);
}

static void *open_glob(const char *pattern) {
    return pg__dl_glob(where, sizeof where, pattern, 1);
}

/* PG_CUPTI_PATH alone when set (a test double, or a choice); else the toolkit (CUDA 13 puts
 * CUPTI in lib64, earlier ones in extras/CUPTI/lib64), the loader path, Python wheels. */
static void *find_cupti(void) {
    const char *env = getenv("PG_CUPTI_PATH");
    if (env && *env)
        return try_open(env);
    void *h = NULL;
    char path[1024];
    const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    for (int i = 0; i < 3 && !h; i++) {
        if (!homes[i] || !*homes[i])
            continue;
        snprintf(path, sizeof path, "%s/extras/CUPTI/lib64/libcupti.so*", homes[i]);
        if (!(h = open_glob(path))) {
            snprintf(path, sizeof path, "%s/lib64/libcupti.so*", homes[i]);
            h = open_glob(path);
        }
    }
    const char *names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
    for (int i = 0; i < 3 && !h; i++)
        h = try_open(names[i]);
    const char *wheels[] = {
        "/usr/local/lib/python3*/dist-packages/nvidia/cu13/lib/libcupti.so*",
        "/usr/local/lib/python3*/site-packages/nvidia/cu13/lib/libcupti.so*",
        "/usr/local/lib/python3*/dist-packages/nvidia/cuda_cupti/lib/libcupti.so*",
        "/usr/local/lib/python3*/site-packages/nvidia/cuda_cupti/lib/libcupti.so*",
    };
    for (size_t i = 0; i < sizeof wheels / sizeof *wheels && !h; i++)
        h = open_glob(wheels[i]);
    return h;
}

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    void *p = NULL;
    /* Records are 8-byte aligned (ACTIVITY_RECORD_ALIGNMENT); NULL makes CUPTI drop records. */
    if (posix_memalign(&p, 8, BUFFER))
        p = NULL;
    *buffer = p;
    *size = p ? BUFFER : 0;
    *max_records = 0;
}

/* mu held. The slot for a new record: the ring grows to MAX_SPANS, then drops its oldest. */
static raw *ring_slot(void) {
    if (ring_n == ring_cap && ring_cap < MAX_SPANS) { /* head is 0 until the ring is full */
        size_t cap = ring_cap ? 2 * ring_cap : 4096;
        raw *n = pg__realloc(ring, cap * sizeof *n);
        if (n) {
            ring = n;
            ring_cap = cap;
        }
    }
    if (ring_n < ring_cap)
        return &ring[(ring_head + ring_n++) % ring_cap];
    if (!ring_cap) {
        dropped_ring++;
        return NULL;
    }
    raw *s = &ring[ring_head];
    ring_head = (ring_head + 1) % ring_cap;
    dropped_ring++;
    return s;
}

static corr_slot *slot_of(uint32_t corr) {
    corr_slot *s = &map[corr & (MAP - 1)];
    if (s->corr != corr) {
        s->corr = corr;
        s->ext = s->api = 0;
    }
    return s;
}

/* mu held: what CUPTI knows of the call that enqueued s. The external correlation record comes
 * before the call's API record, which comes before the work's record (usually: they may sit in
 * different buffers), so a record is resolved once its call's API record is seen. */
static void resolve(raw *s) {
    if (s->resolved || !map)
        return;
    const corr_slot *m = &map[s->corr & (MAP - 1)];
    if (m->corr != s->corr || (!m->api && !m->ext))
        return;
    s->ext = m->ext;
    s->api = m->api;
    s->resolved = m->api != 0;
}

static void name_copy(raw *s, const char *name) {
    snprintf(s->name, sizeof s->name, "%s", name ? name : "");
}

static const char *copy_kind_str(int k) {
    switch (k) {
    case PG__CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return "HtoD";
    case PG__CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return "DtoH";
    case PG__CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return "DtoD";
    case PG__CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return "HtoH";
    case PG__CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return "PtoP";
    default:
        return "copy";
    }
}

/* mu held. */
static void take(const pg__cupti_activity *r) {
    raw *s = NULL;
    switch (r->kind) {
    case PG__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const pg__cupti_kernel *k = (const void *)r;
        if (!(s = ring_slot()))
            return;
        *s = (raw){.start = k->start,
                   .end = k->end,
                   .dev = k->deviceId,
                   .stream = k->streamId,
                   .corr = k->correlationId,
                   .kind = PG_GPU_KERNEL};
        name_copy(s, k->name);
        break;
    }
    case PG__CUPTI_ACTIVITY_KIND_MEMCPY: {
        const pg__cupti_memcpy *m = (const void *)r;
        if (!(s = ring_slot()))
            return;
        *s = (raw){.start = m->start,
                   .end = m->end,
                   .bytes = m->bytes,
                   .dev = m->deviceId,
                   .stream = m->streamId,
                   .corr = m->correlationId,
                   .kind = PG_GPU_COPY,
                   .copy_kind = m->copyKind};
        snprintf(s->name, sizeof s->name, "memcpy %s", copy_kind_str(m->copyKind));
        break;
    }
    case PG__CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const pg__cupti_memcpy2 *m = (const void *)r;
        if (!(s = ring_slot()))
            return;
        *s = (raw){.start = m->start,
                   .end = m->end,
                   .bytes = m->bytes,
                   .dev = m->deviceId,
                   .stream = m->streamId,
                   .corr = m->correlationId,
                   .kind = PG_GPU_COPY,
                   .copy_kind = PG__CUPTI_ACTIVITY_MEMCPY_KIND_PTOP};
        snprintf(s->name, sizeof s->name, "memcpy PtoP %u->%u", m->srcDeviceId, m->dstDeviceId);
        break;
    }
    case PG__CUPTI_ACTIVITY_KIND_MEMSET: {
        const pg__cupti_memset *m = (const void *)r;
        if (!(s = ring_slot()))
            return;
        *s = (raw){.start = m->start,
                   .end = m->end,
                   .bytes = m->bytes,
                   .dev = m->deviceId,
                   .stream = m->streamId,
                   .corr = m->correlationId,
                   .kind = PG_GPU_MEMSET};
        snprintf(s->name, sizeof s->name, "memset");
        break;
    }
    case PG__CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const pg__cupti_external *x = (const void *)r;
        if (map && x->externalKind == PG__CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
            slot_of(x->correlationId)->ext = x->externalId;
        return;
    }
    case PG__CUPTI_ACTIVITY_KIND_DRIVER:
    case PG__CUPTI_ACTIVITY_KIND_RUNTIME: {
        const pg__cupti_api *a = (const void *)r;
        /* A runtime call (cuBLAS's cudaLaunchKernel) and the driver call inside it share the
         * correlation id in some versions: the earlier start, the runtime's, is the submission. */
        if (map) {
            corr_slot *m = slot_of(a->correlationId);
            if (!m->api || a->start < m->api)
                m->api = a->start ? a->start : 1;
        }
        return;
    }
    default:
        return;
    }
    resolve(s);
}

static void buffer_completed(pg__cupti_context ctx, uint32_t stream, uint8_t *buffer, size_t size,
                             size_t valid) {
    (void)size;
    pthread_mutex_lock(&mu);
    pg__cupti_activity *r = NULL;
    while (buffer && valid &&
           api.cuptiActivityGetNextRecord(buffer, valid, &r) == PG__CUPTI_SUCCESS && r)
        take(r);
    size_t d = 0;
    if (api.cuptiActivityGetNumDroppedRecords(ctx, stream, &d) == PG__CUPTI_SUCCESS)
        dropped_cupti += d;
    pthread_mutex_unlock(&mu);
    free(buffer);
}

static void load(void) {
    void *h = find_cupti();
    if (!h) {
        const char *e = dlerror();
        snprintf(load_why, sizeof load_why,
                 "CUPTI not found (%s; looked in: %.700s): install the CUDA toolkit or the "
                 "nvidia-cuda-cupti wheel, or set PG_CUPTI_PATH",
                 e ? e : "no libcupti.so", where);
        return;
    }
#define PG__CUPTI_LOAD(name, sym, params)                                                          \
    *(void **)&api.name = dlsym(h, sym);                                                           \
    if (!api.name) {                                                                               \
        snprintf(load_why, sizeof load_why,                                                        \
                 "CUPTI (%.600s) lacks %s: a CUPTI of CUDA 11 or later "                           \
                 "is needed",                                                                      \
                 where, sym);                                                                      \
        return;                                                                                    \
    }
    PG__CUPTI_FUNCS(PG__CUPTI_LOAD)
#undef PG__CUPTI_LOAD
#define PG__CUPTI_LOAD_OPTIONAL(name, sym, params) *(void **)&api.name = dlsym(h, sym);
    PG__CUPTI_OPTIONAL(PG__CUPTI_LOAD_OPTIONAL)
#undef PG__CUPTI_LOAD_OPTIONAL
    pg__cupti_result r = api.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != PG__CUPTI_SUCCESS) {
        snprintf(load_why, sizeof load_why, "cuptiActivityRegisterCallbacks failed: %s (%d)",
                 describe(r), r);
        return;
    }
    loaded = 1;
}

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CUPTI's clock (CLOCK_REALTIME on Linux unless told otherwise) against ours: the narrowest of
 * a few brackets. */
static void measure_offset(void) {
    int64_t best = INT64_MAX;
    for (int i = 0; i < 7; i++) {
        uint64_t c = 0;
        int64_t t0 = mono_ns();
        if (api.cuptiGetTimestamp(&c) != PG__CUPTI_SUCCESS)
            return;
        int64_t t1 = mono_ns();
        if (t1 - t0 < best) {
            best = t1 - t0;
            clock_offset = (int64_t)c - (t0 + (t1 - t0) / 2);
        }
    }
}

static const int32_t kinds[] = {
    PG__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    PG__CUPTI_ACTIVITY_KIND_MEMCPY,
    PG__CUPTI_ACTIVITY_KIND_MEMSET,
    PG__CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    PG__CUPTI_ACTIVITY_KIND_MEMCPY2, /* optional: peer copies; without it they may be missing */
};
enum { REQUIRED_KINDS = 4 };
static const uint32_t driver_cbids[] = {PG__CUPTI_DRIVER_CBIDS};
static const uint32_t runtime_cbids[] = {PG__CUPTI_RUNTIME_CBIDS};

static const char *kind_name(int32_t k) {
    switch (k) {
    case PG__CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return "CONCURRENT_KERNEL";
    case PG__CUPTI_ACTIVITY_KIND_MEMCPY:
        return "MEMCPY";
    case PG__CUPTI_ACTIVITY_KIND_MEMSET:
        return "MEMSET";
    case PG__CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return "EXTERNAL_CORRELATION";
    case PG__CUPTI_ACTIVITY_KIND_DRIVER:
        return "DRIVER";
    default:
        return "?";
    }
}

static void disable_all(void) {
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        api.cuptiActivityDisable(kinds[i]);
    if (api_all) {
        api.cuptiActivityDisable(PG__CUPTI_ACTIVITY_KIND_DRIVER);
        api.cuptiActivityDisable(PG__CUPTI_ACTIVITY_KIND_RUNTIME);
    } else {
        for (size_t i = 0; i < sizeof driver_cbids / sizeof *driver_cbids; i++)
            api.cuptiActivityEnableDriverApi(driver_cbids[i], 0);
        for (size_t i = 0;
             api.cuptiActivityEnableRuntimeApi && i < sizeof runtime_cbids / sizeof *runtime_cbids;
             i++)
            api.cuptiActivityEnableRuntimeApi(runtime_cbids[i], 0);
    }
}

/* life held, no backend recording: turn CUPTI's records on. */
static int enable_all(char *why, size_t cap) {
    pthread_mutex_lock(&mu);
    if (!map)
        map = pg__calloc(MAP, sizeof *map);
    pthread_mutex_unlock(&mu);
    if (!map) {
        snprintf(why, cap, "out of host memory for the GPU timeline");
        return -1;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        pg__cupti_result r = api.cuptiActivityEnable(kinds[i]);
        if (r != PG__CUPTI_SUCCESS && i < REQUIRED_KINDS) {
            snprintf(why, cap, "cuptiActivityEnable(%s) failed: %s (%d)%s", kind_name(kinds[i]),
                     describe(r), r,
                     r == PG__CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
                         ? "; the driver lets only administrators profile "
                           "(NVreg_RestrictProfilingToAdminUsers)"
                         : "");
            for (size_t j = 0; j < i; j++)
                api.cuptiActivityDisable(kinds[j]);
            return -1;
        }
    }
    /* External correlation records come with the API records of the calls that enqueue work.
     * Choosing those calls (cuptiActivityEnableDriverApi) gave neither API nor external
     * correlation records on an H200 with CUPTI 13.0.1 (2026-11-28: 113 spans, none tied to a
     * computation), so every driver call's records are taken unless PG_CUPTI_SELECT=1. */
    const char *sel = getenv("PG_CUPTI_SELECT");
    api_all = !api.cuptiActivityEnableDriverApi || !sel || strcmp(sel, "1") != 0;
    for (size_t i = 0; !api_all && i < sizeof driver_cbids / sizeof *driver_cbids; i++)
        api_all = api.cuptiActivityEnableDriverApi(driver_cbids[i], 1) != PG__CUPTI_SUCCESS;
    for (size_t i = 0; !api_all && api.cuptiActivityEnableRuntimeApi &&
                       i < sizeof runtime_cbids / sizeof *runtime_cbids;
         i++)
        api.cuptiActivityEnableRuntimeApi(runtime_cbids[i], 1); /* cuBLAS's; optional */
    if (api_all) {
        pg__cupti_result r = api.cuptiActivityEnable(PG__CUPTI_ACTIVITY_KIND_DRIVER);
        if (r != PG__CUPTI_SUCCESS) {
            snprintf(why, cap, "cuptiActivityEnable(DRIVER) failed: %s (%d)", describe(r), r);
            disable_all();
            return -1;
        }
        api.cuptiActivityEnable(PG__CUPTI_ACTIVITY_KIND_RUNTIME);
    }
    measure_offset();
    return 0;
}

pg__cupti *pg__cupti_start(void *const *ctx, int n, char *why, size_t cap) {
    pthread_once(&once, load);
    if (!loaded) {
        snprintf(why, cap, "%s", load_why);
        return NULL;
    }
    pg__cupti *c = pg__calloc(1, sizeof *c);
    if (!c) {
        pg__error_clear(); /* a reason, not an error: the trace goes on without the GPU's rows */
        snprintf(why, cap, "out of host memory for the GPU timeline");
        return NULL;
    }
    c->n = n < PG_MAX_DEVICES ? n : PG_MAX_DEVICES;
    for (int i = 0; i < c->n; i++) {
        pg__cupti_result r = api.cuptiGetDeviceId((pg__cupti_context)ctx[i], &c->devid[i]);
        if (r != PG__CUPTI_SUCCESS) {
            snprintf(why, cap, "cuptiGetDeviceId (GPU %d) failed: %s (%d)", i, describe(r), r);
            pg__free(c);
            return NULL;
        }
    }
    pthread_mutex_lock(&life);
    if (users == 0 && enable_all(why, cap)) {
        pthread_mutex_unlock(&life);
        pg__free(c);
        return NULL;
    }
    users++;
    c->tag = next_tag++ % 0xffff + 1;
    pthread_mutex_unlock(&life);
    if (api.cuptiGetTimestamp(&c->t0) != PG__CUPTI_SUCCESS)
        c->t0 = 0;
    return c;
}

void pg__cupti_stop(pg__cupti *c) {
    if (!c)
        return;
    pthread_mutex_lock(&life);
    if (--users == 0) {
        /* The last one: CUPTI stops recording, and what it still holds is dropped with ours. */
        api.cuptiActivityFlushAll(PG__CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        disable_all();
        pthread_mutex_lock(&mu);
        pg__free(ring);
        ring = NULL;
        ring_cap = ring_n = ring_head = 0;
        dropped_ring = dropped_cupti = 0;
        memset(map, 0, MAP * sizeof *map);
        pthread_mutex_unlock(&mu);
    }
    pthread_mutex_unlock(&life);
    pg__free(c->win);
    pg__free(c);
}

void pg__cupti_enter(pg__cupti *c, uint64_t id) {
    api.cuptiActivityPushExternalCorrelationId(PG__CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                               c->tag << TAG_SHIFT |
                                                   (id & ((UINT64_C(1) << TAG_SHIFT) - 1)));
    c->cur = id;
    c->cur_from = (uint64_t)(mono_ns() + clock_offset);
}

void pg__cupti_leave(pg__cupti *c) {
    uint64_t last = 0;
    api.cuptiActivityPopExternalCorrelationId(PG__CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    if (!c->cur)
        return;
    if (c->win_n == c->win_cap && c->win_cap < MAX_SPANS) { /* head is 0 until full */
        size_t cap = c->win_cap ? 2 * c->win_cap : 4096;
        window *w = pg__realloc(c->win, cap * sizeof *w);
        if (w) {
            c->win = w;
            c->win_cap = cap;
        } else {
            pg__error_clear(); /* this window is lost: the external correlation may do */
        }
    }
    window *w = NULL;
    if (c->win_n < c->win_cap) {
        w = &c->win[(c->win_head + c->win_n++) % c->win_cap];
    } else if (c->win_cap) {
        w = &c->win[c->win_head];
        c->win_head = (c->win_head + 1) % c->win_cap;
    }
    if (w)
        *w = (window){c->cur, c->cur_from, (uint64_t)(mono_ns() + clock_offset)};
    c->cur = 0;
}

/* The computation whose window holds CUPTI time t, 0: none (windows are in time order). */
static uint64_t window_at(const pg__cupti *c, uint64_t t) {
    size_t lo = 0, hi = c->win_n;
    while (lo < hi) { /* the first window ending at or after t */
        size_t mid = lo + (hi - lo) / 2;
        if (c->win[(c->win_head + mid) % c->win_cap].to < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == c->win_n)
        return 0;
    const window *w = &c->win[(c->win_head + lo) % c->win_cap];
    return w->from <= t ? w->id : 0;
}

/* Which of c's GPUs CUPTI's device id is, -1: none. */
static int device_of(const pg__cupti *c, uint32_t devid) {
    for (int i = 0; i < c->n; i++)
        if (c->devid[i] == devid)
            return i;
    return -1;
}

/* mu held: s is c's (and on which device), -1 if not; *id its computation (0: none). Work of
 * another backend carries its tag; work without an external correlation is c's computation's
 * when its call began in that computation's window; work of none (a zero fill, another
 * library) goes to every backend on its GPU that was recording when it started. */
static int mine(const pg__cupti *c, raw *s, uint64_t *id) {
    resolve(s);
    *id = s->ext & ((UINT64_C(1) << TAG_SHIFT) - 1);
    if (s->ext)
        return s->ext >> TAG_SHIFT == c->tag ? device_of(c, s->dev) : -1;
    if (s->api && (*id = window_at(c, s->api)) != 0)
        return device_of(c, s->dev);
    return s->start >= c->t0 ? device_of(c, s->dev) : -1;
}

static uint64_t to_ns(uint64_t cupti_ts, uint64_t epoch_ns) {
    if (!cupti_ts)
        return 0;
    int64_t t = (int64_t)cupti_ts - clock_offset - (int64_t)epoch_ns;
    return t > 0 ? (uint64_t)t : 0;
}

static int by_device_start(const void *a, const void *b) {
    const pg_gpu_span *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

pg_status pg__cupti_spans(pg__cupti *c, uint64_t epoch_ns, int idle, pg_gpu_span **out, size_t *n,
                          char *note, size_t cap) {
    *out = NULL;
    *n = 0;
    note[0] = 0;
    /* Outside mu: the flush hands buffers to buffer_completed, which takes it. */
    api.cuptiActivityFlushAll(idle ? PG__CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
    pthread_mutex_lock(&mu);
    size_t count = 0;
    uint64_t id = 0;
    for (size_t i = 0; i < ring_n; i++)
        count += mine(c, &ring[(ring_head + i) % ring_cap], &id) >= 0;
    pg_gpu_span *s = count ? pg__calloc(count, sizeof *s) : NULL;
    if (count && !s) {
        pthread_mutex_unlock(&mu);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for the GPU timeline");
    }
    size_t k = 0;
    for (size_t i = 0; i < ring_n && k < count; i++) {
        raw *r = &ring[(ring_head + i) % ring_cap];
        int d = mine(c, r, &id);
        if (d < 0)
            continue;
        pg_gpu_span *x = &s[k++];
        x->id = id;
        x->kind = (pg_gpu_span_kind)r->kind;
        x->device = d;
        x->gpu_stream = r->stream;
        x->start_ns = to_ns(r->start, epoch_ns);
        x->end_ns = to_ns(r->end, epoch_ns);
        x->api_ns = to_ns(r->api, epoch_ns);
        x->bytes = r->bytes;
        if (r->kind == PG_GPU_COPY)
            snprintf(x->copy_kind, sizeof x->copy_kind, "%s", copy_kind_str(r->copy_kind));
        memcpy(x->name, r->name, sizeof x->name);
    }
    if (dropped_ring || dropped_cupti)
        snprintf(note, cap,
                 "%llu records dropped (%llu overwritten: the ring keeps the last %d; %llu "
                 "dropped by CUPTI)",
                 (unsigned long long)(dropped_ring + dropped_cupti),
                 (unsigned long long)dropped_ring, MAX_SPANS, (unsigned long long)dropped_cupti);
    pthread_mutex_unlock(&mu);
    qsort(s, k, sizeof *s, by_device_start);
    *out = s;
    *n = k;
    return PG_OK;
}

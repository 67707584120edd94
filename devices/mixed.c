/* mixed.c: several backends behind one ops table ("cuda,host:2", "sim:h200x2-nv18,host:2"), so
 * that one runtime — one DAG, one coherence — drives GPUs and CPU devices together. Devices are
 * numbered part after part. Each operation goes to the backend that owns its device, stream or
 * event; streams and events are wrapped to say which.
 *
 * What crosses backends:
 * - Copies go through host memory: a CPU device's memory is the host's (the registry's
 *   host_visible), so a GPU backend copies to or from it as host memory. A copy issued on a CPU
 *   device's stream that reads or writes a GPU runs, in that stream's order, as a call that has
 *   the GPU's backend copy and waits for it (on a worker of the CPU devices).
 * - A stream of one backend waiting for an event of another: a CPU device's stream waits in its
 *   own order (a call that waits on a worker); a GPU's stream cannot be told to wait for a CPU
 *   event, so the issuing thread waits for it. Not yet: a GPU stream waiting without blocking
 *   the host (a host-mapped flag the CPU side raises, and cuStreamWaitValue32).
 * - Kernels are built by every backend whose class the kernel may run on (pg__kernel_src's
 *   classes): NVRTC for GPUs, the host compiler for CPU devices, from the same source.
 * - Not offered: launches split over devices, chunked outputs counted by the device, backend
 *   graphs (each is per backend; the core then re-issues, copies after the kernel, and does not
 *   split), and the simulated clock (the real one is the runtime's). */
#include "devices/registry.h"

#include "base/alloc.h"
#include "base/error.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define MAXP 4

typedef struct part {
    const pg__backend_entry *e;
    const pg__backend_ops *ops;
    pg__backend *b;
    int first, n; /* its devices are first .. first + n - 1 */
} part;

struct pg__backend {
    int np, ndev;
    part p[MAXP];
    int dev_part[PG_MAX_DEVICES];
    int host_part; /* whose host_alloc serves array host copies (a GPU's: pinned) */
    int pin_cpu;   /* CPU devices' buffers from host_part's host_alloc too (pinned_dev) */
    /* Streams of each GPU device for copies a CPU stream has them do, made on first use. */
    pthread_mutex_t mu;
    pg__bstream *helper[PG_MAX_DEVICES];
};

struct pg__bstream {
    int part, dev; /* dev: global */
    pg__bstream *s;
};

/* An event, counted: a CPU stream waiting for it in its own order keeps it past event_free. */
struct pg__bevent {
    int part;
    _Atomic int refs;
    pg__bevent *e;
};

static part *of_dev(pg__backend *b, int dev) {
    return &b->p[b->dev_part[dev]];
}

static int local(pg__backend *b, int dev) {
    return dev - of_dev(b, dev)->first;
}

static pg_status bad_device(int dev) {
    return pg__error(PG_ERROR_ARGUMENT, "no device %d", dev);
}

static void m_close(pg__backend *b) {
    for (int d = 0; d < b->ndev; d++)
        if (b->helper[d])
            of_dev(b, d)->ops->stream_free(of_dev(b, d)->b, b->helper[d]);
    for (int i = 0; i < b->np; i++)
        b->p[i].ops->close(b->p[i].b);
    pthread_mutex_destroy(&b->mu);
    pg__free(b);
}

static pg_status m_device_info(pg__backend *b, int dev, pg_device_info *out) {
    if (dev < 0 || dev >= b->ndev)
        return bad_device(dev);
    part *p = of_dev(b, dev);
    pg_status st = p->ops->device_info(p->b, dev - p->first, out);
    out->id = dev;
    return st;
}

static pg_status m_host_alloc(pg__backend *b, size_t bytes, void **out) {
    part *p = &b->p[b->host_part];
    return p->ops->host_alloc(p->b, bytes, out);
}

static void m_host_free(pg__backend *b, void *ptr) {
    part *p = &b->p[b->host_part];
    p->ops->host_free(p->b, ptr);
}

/* A CPU device's memory comes from the GPU backend's host allocator (pinned), so its copies
 * with the GPUs are DMA the GPU may run asynchronously (the driver refuses or stages pageable
 * memory); not with check=bounds, where the CPU backend puts its buffers between guards. */
static int pinned_dev(const pg__backend *b, int dev) {
    const part *p = &b->p[b->dev_part[dev]];
    return b->pin_cpu && p->e->host_visible && b->dev_part[dev] != b->host_part;
}

static pg_status m_dev_alloc(pg__backend *b, int dev, size_t bytes, pg__bstream *s, void **out) {
    if (dev < 0 || dev >= b->ndev)
        return bad_device(dev);
    if (pinned_dev(b, dev))
        return b->p[b->host_part].ops->host_alloc(b->p[b->host_part].b, bytes ? bytes : 1, out);
    part *p = of_dev(b, dev);
    return p->ops->dev_alloc(p->b, dev - p->first, bytes,
                             s && s->part == b->dev_part[dev] ? s->s : NULL, out);
}

static void m_dev_free(pg__backend *b, int dev, void *ptr) {
    if (pinned_dev(b, dev)) {
        b->p[b->host_part].ops->host_free(b->p[b->host_part].b, ptr);
        return;
    }
    part *p = of_dev(b, dev);
    p->ops->dev_free(p->b, dev - p->first, ptr);
}

static pg_status m_memset_zero(pg__backend *b, pg__bstream *s, void *ptr, size_t bytes) {
    part *p = &b->p[s->part];
    return p->ops->memset_zero(p->b, s->s, ptr, bytes);
}

static pg_status m_stream_new(pg__backend *b, int dev, pg__bstream **out) {
    if (dev < 0 || dev >= b->ndev)
        return bad_device(dev);
    part *p = of_dev(b, dev);
    pg__bstream *w = pg__calloc(1, sizeof *w);
    if (!w)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pg_status st = p->ops->stream_new(p->b, dev - p->first, &w->s);
    if (st) {
        pg__free(w);
        return st;
    }
    w->part = b->dev_part[dev];
    w->dev = dev;
    *out = w;
    return PG_OK;
}

static void m_stream_free(pg__backend *b, pg__bstream *s) {
    b->p[s->part].ops->stream_free(b->p[s->part].b, s->s);
    pg__free(s);
}

static void event_unref(pg__backend *b, pg__bevent *e) {
    if (atomic_fetch_sub(&e->refs, 1) == 1) {
        b->p[e->part].ops->event_free(b->p[e->part].b, e->e);
        pg__free(e);
    }
}

static pg_status m_event_record(pg__backend *b, pg__bstream *s, pg__bevent **out) {
    pg__bevent *w = pg__malloc(sizeof *w);
    if (!w)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pg_status st = b->p[s->part].ops->event_record(b->p[s->part].b, s->s, &w->e);
    if (st) {
        pg__free(w);
        return st;
    }
    w->part = s->part;
    atomic_init(&w->refs, 1);
    *out = w;
    return PG_OK;
}

static int m_event_done(pg__backend *b, pg__bevent *e) {
    return b->p[e->part].ops->event_done(b->p[e->part].b, e->e);
}

static pg_status m_event_wait(pg__backend *b, pg__bevent *e) {
    return b->p[e->part].ops->event_wait(b->p[e->part].b, e->e);
}

static pg_status m_event_wait_for(pg__backend *b, pg__bevent *e, uint64_t timeout_ns) {
    return b->p[e->part].ops->event_wait_for(b->p[e->part].b, e->e, timeout_ns);
}

static pg_status m_event_error(pg__backend *b, pg__bevent *e, int *failed_dev, char *msg,
                               size_t cap) {
    part *p = &b->p[e->part];
    if (!p->ops->event_error) {
        *failed_dev = -1;
        return PG_OK;
    }
    pg_status st = p->ops->event_error(p->b, e->e, failed_dev, msg, cap);
    if (*failed_dev >= 0)
        *failed_dev += p->first;
    return st;
}

static int m_device_fault(pg__backend *b, int dev, char *msg, size_t cap) {
    part *p = of_dev(b, dev);
    return p->ops->device_fault ? p->ops->device_fault(p->b, dev - p->first, msg, cap) : 0;
}

static void m_event_free(pg__backend *b, pg__bevent *e) {
    event_unref(b, e);
}

typedef struct wait_arg {
    pg__backend *b;
    pg__bevent *e;
} wait_arg;

/* On a CPU device's worker, in its stream's order: wait for another backend's event. */
static pg_status wait_other(void *arg) {
    wait_arg *w = arg;
    pg_status st = m_event_wait(w->b, w->e);
    int failed = -1;
    char msg[256];
    if (!st && w->b->p[w->e->part].ops->event_error &&
        m_event_error(w->b, w->e, &failed, msg, sizeof msg) != PG_OK)
        st = pg__error(PG_ERROR_DEVICE, "%s", msg); /* the work after it fails too */
    event_unref(w->b, w->e);
    return st;
}

static pg_status m_stream_wait(pg__backend *b, pg__bstream *s, pg__bevent *e) {
    part *p = &b->p[s->part];
    if (e->part == s->part)
        return p->ops->stream_wait(p->b, s->s, e->e);
    if (p->e->device_class == PG_CLASS_CPU && p->ops->call) {
        wait_arg w = {b, e};
        atomic_fetch_add(&e->refs, 1);
        pg_status st = p->ops->call(p->b, s->s, wait_other, &w, sizeof w, NULL);
        if (st)
            event_unref(b, e);
        return st;
    }
    /* A GPU's stream cannot wait for a CPU device's event: the issuing thread does. */
    return m_event_wait(b, e);
}

/* Where a copy's end lies for backend `pi`: its own device (local id), host memory (PG_HOST,
 * also a host-visible device of another backend), or -2: another backend's device it cannot
 * reach. */
static int end_for(pg__backend *b, int pi, int dev) {
    if (dev == PG_HOST)
        return PG_HOST;
    if (b->dev_part[dev] == pi)
        return local(b, dev);
    return of_dev(b, dev)->e->host_visible ? PG_HOST : -2;
}

typedef struct copy_arg {
    pg__backend *b;
    int via;              /* the GPU whose backend copies */
    int dst_dev, src_dev; /* for that backend */
    void *dst;
    const void *src;
    size_t bytes;
} copy_arg;

/* On a CPU device's worker, in its stream's order: have a GPU's backend copy, and wait. */
static pg_status copy_through(void *arg) {
    copy_arg *c = arg;
    pg__backend *b = c->b;
    part *q = of_dev(b, c->via);
    pg_status st = PG_OK;
    pthread_mutex_lock(&b->mu);
    if (!b->helper[c->via])
        st = q->ops->stream_new(q->b, c->via - q->first, &b->helper[c->via]);
    pg__bstream *hs = b->helper[c->via];
    pthread_mutex_unlock(&b->mu);
    pg__bevent *e = NULL;
    if (!st)
        st = q->ops->copy(q->b, hs, c->dst_dev, c->dst, c->src_dev, c->src, c->bytes, NULL);
    if (!st)
        st = q->ops->event_record(q->b, hs, &e);
    if (!st)
        st = q->ops->event_wait(q->b, e);
    if (!st && q->ops->event_error) {
        int failed;
        char msg[256];
        if (q->ops->event_error(q->b, e, &failed, msg, sizeof msg))
            st = pg__error(PG_ERROR_DEVICE, "copy through GPU %d: %s", c->via, msg);
    }
    if (e)
        q->ops->event_free(q->b, e);
    return st;
}

static pg_status m_copy(pg__backend *b, pg__bstream *s, int dst_dev, void *dst, int src_dev,
                        const void *src, size_t bytes, pg__timing *t) {
    part *p = &b->p[s->part];
    int d = end_for(b, s->part, dst_dev), sr = end_for(b, s->part, src_dev);
    if (t)
        t->mixed_part = s->part;
    if (d != -2 && sr != -2)
        return p->ops->copy(p->b, s->s, d, dst, sr, src, bytes, t);
    /* One end is a GPU of another backend: that backend copies, the other end being host
     * memory to it. Only a stream that can call in order (CPU devices) can have it do so. */
    int via = d == -2 ? dst_dev : src_dev;
    int qi = b->dev_part[via];
    copy_arg c = {b, via, end_for(b, qi, dst_dev), end_for(b, qi, src_dev), dst, src, bytes};
    if (c.dst_dev == -2 || c.src_dev == -2 || !p->ops->call || p->e->device_class != PG_CLASS_CPU)
        return pg__error(PG_ERROR_UNSUPPORTED,
                         "a copy from device %d to device %d on a stream of device %d: %s and "
                         "%s devices copy to each other only through host memory",
                         src_dev, dst_dev, s->dev, of_dev(b, via)->e->name, p->e->name);
    return p->ops->call(p->b, s->s, copy_through, &c, sizeof c, t);
}

/* A kernel built by each backend its classes allow: image[i] for part i (NULL: not built). */
typedef struct image {
    void *img[MAXP];
} image;

static pg_status m_kernel_build(pg__backend *b, const pg__kernel_src *src, void **out) {
    image *im = pg__calloc(1, sizeof *im);
    if (!im)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pg_status st = PG_OK;
    for (int i = 0; !st && i < b->np; i++) {
        part *p = &b->p[i];
        if (src->classes && !(src->classes >> p->e->device_class & 1))
            continue;
        st = p->ops->kernel_build(p->b, src, &im->img[i]);
    }
    if (st) {
        for (int i = 0; i < b->np; i++)
            if (im->img[i])
                b->p[i].ops->kernel_free(b->p[i].b, im->img[i]);
        pg__free(im);
        return st;
    }
    *out = im;
    return PG_OK;
}

static pg_status m_kernel_function(pg__backend *b, void *img, int dev, void **fn) {
    if (dev < 0 || dev >= b->ndev)
        return bad_device(dev);
    image *im = img;
    part *p = of_dev(b, dev);
    if (!im->img[b->dev_part[dev]])
        return pg__error(PG_ERROR_ARGUMENT,
                         "the kernel was not built for %s devices (its where= excludes device %d)",
                         p->e->name, dev);
    return p->ops->kernel_function(p->b, im->img[b->dev_part[dev]], dev - p->first, fn);
}

static void m_kernel_free(pg__backend *b, void *img) {
    image *im = img;
    for (int i = 0; i < b->np; i++)
        if (im->img[i])
            b->p[i].ops->kernel_free(b->p[i].b, im->img[i]);
    pg__free(im);
}

static pg_status m_launch(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid, pg_dim3 block,
                          size_t shared_mem, const uint64_t *params, int nparams, pg__timing *t) {
    if (t)
        t->mixed_part = s->part;
    return b->p[s->part].ops->launch(b->p[s->part].b, s->s, fn, grid, block, shared_mem, params,
                                     nparams, t);
}

static pg_status m_call(pg__backend *b, pg__bstream *s, pg_status (*fn)(void *arg), const void *arg,
                        size_t arg_bytes, pg__timing *t) {
    part *p = &b->p[s->part];
    if (!p->ops->call)
        return pg__error(PG_ERROR_UNSUPPORTED, "%s devices run no tasks", p->e->name);
    if (t)
        t->mixed_part = s->part;
    return p->ops->call(p->b, s->s, fn, arg, arg_bytes, t);
}

static const char *m_uncomputed(pg__backend *b) {
    for (int i = 0; i < b->np; i++)
        if (b->p[i].ops->uncomputed && b->p[i].ops->uncomputed(b->p[i].b))
            return b->p[i].ops->uncomputed(b->p[i].b);
    return NULL;
}

static void m_timing_resolve(pg__backend *b, pg__timing *t) {
    part *p = &b->p[t->mixed_part];
    p->ops->timing_resolve(p->b, t);
}

static void m_timing_release(pg__backend *b, pg__timing *t) {
    part *p = &b->p[t->mixed_part];
    p->ops->timing_release(p->b, t);
}

static uint64_t m_stream_handle(pg__backend *b, pg__bstream *s) {
    part *p = &b->p[s->part];
    return p->ops->stream_handle ? p->ops->stream_handle(p->b, s->s) : 0;
}

static pg_status m_stream_wait_foreign(pg__backend *b, pg__bstream *s, uint64_t foreign) {
    part *p = &b->p[s->part];
    if (!p->ops->stream_wait_foreign)
        return pg__error(PG_ERROR_UNSUPPORTED, "%s devices have no native streams", p->e->name);
    return p->ops->stream_wait_foreign(p->b, s->s, foreign);
}

static pg_status m_foreign_wait(pg__backend *b, int dev, uint64_t waiter, uint64_t done) {
    part *p = of_dev(b, dev);
    if (!p->ops->foreign_wait)
        return pg__error(PG_ERROR_UNSUPPORTED, "%s devices have no native streams", p->e->name);
    return p->ops->foreign_wait(p->b, dev - p->first, waiter, done);
}

static pg_status m_pointer_device(pg__backend *b, uint64_t ptr, int *dev) {
    for (int i = 0; i < b->np; i++) {
        part *p = &b->p[i];
        if (!p->ops->pointer_device)
            continue;
        if (p->ops->pointer_device(p->b, ptr, dev) == PG_OK) {
            *dev += p->first;
            return PG_OK;
        }
        pg__error_clear();
    }
    return pg__error(PG_ERROR_ARGUMENT, "address 0x%llx is on no device of this runtime",
                     (unsigned long long)ptr);
}

static int m_power_mw(pg__backend *b, int dev, unsigned *mw) {
    part *p = of_dev(b, dev);
    return p->ops->power_mw ? p->ops->power_mw(p->b, dev - p->first, mw) : 0;
}

static int m_energy_mj(pg__backend *b, int dev, uint64_t *mj) {
    part *p = of_dev(b, dev);
    return p->ops->energy_mj ? p->ops->energy_mj(p->b, dev - p->first, mj) : 0;
}

static int m_power_default_mw(pg__backend *b, int dev, unsigned *mw) {
    part *p = of_dev(b, dev);
    return p->ops->power_default_mw ? p->ops->power_default_mw(p->b, dev - p->first, mw) : 0;
}

#define MIXED_OPS(timing_events)                                                                   \
    {                                                                                              \
        .name = "mixed", .close = m_close, .device_info = m_device_info,                           \
        .host_alloc = m_host_alloc, .host_free = m_host_free, .dev_alloc = m_dev_alloc,            \
        .dev_free = m_dev_free, .memset_zero = m_memset_zero, .stream_new = m_stream_new,          \
        .stream_free = m_stream_free, .event_record = m_event_record, .event_done = m_event_done,  \
        .event_wait = m_event_wait, .event_wait_for = m_event_wait_for,                            \
        .event_error = m_event_error, .device_fault = m_device_fault,                              \
        .stream_wait = m_stream_wait, .event_free = m_event_free, .copy = m_copy,                  \
        .kernel_build = m_kernel_build, .kernel_function = m_kernel_function,                      \
        .kernel_free = m_kernel_free, .launch = m_launch, .call = m_call,                          \
        .uncomputed = m_uncomputed, .timing_resolve = m_timing_resolve,                            \
        .timing_release = m_timing_release, .stream_handle = m_stream_handle,                      \
        .stream_wait_foreign = m_stream_wait_foreign, .foreign_wait = m_foreign_wait,              \
        .pointer_device = m_pointer_device, .power_mw = m_power_mw, .energy_mj = m_energy_mj,      \
        .power_default_mw = m_power_default_mw, .wants_timing_events = timing_events,              \
    }

/* Two tables: any part timing with events makes the runtime ask for timing only when tracing. */
static const pg__backend_ops mixed_ops = MIXED_OPS(0);
static const pg__backend_ops mixed_ops_events = MIXED_OPS(1);

pg_status pg__mixed_open(int nparts, const pg__backend_entry *const *entries,
                         const pg__backend_ops *const *ops, pg__backend *const *bs, const int *n,
                         int check_bounds, const pg__backend_ops **out_ops, pg__backend **out_b) {
    if (nparts < 2 || nparts > MAXP)
        return pg__error(PG_ERROR_ARGUMENT, "%d backends in one runtime: 2..%d", nparts, MAXP);
    pg__backend *b = pg__calloc(1, sizeof *b);
    if (!b)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pthread_mutex_init(&b->mu, NULL);
    b->np = nparts;
    b->host_part = -1;
    int events = 0;
    for (int i = 0; i < nparts; i++) {
        b->p[i] = (part){entries[i], ops[i], bs[i], b->ndev, n[i]};
        for (int d = 0; d < n[i]; d++)
            b->dev_part[b->ndev + d] = i;
        b->ndev += n[i];
        if (b->host_part < 0 && entries[i]->device_class == PG_CLASS_GPU)
            b->host_part = i;
        events |= ops[i]->wants_timing_events;
    }
    if (b->host_part < 0)
        b->host_part = 0;
    b->pin_cpu = !check_bounds && entries[b->host_part]->device_class == PG_CLASS_GPU;
    *out_ops = events ? &mixed_ops_events : &mixed_ops;
    *out_b = b;
    return PG_OK;
}

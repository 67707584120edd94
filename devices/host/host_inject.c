/* host_inject.c: test-only wrapper around the CPU-device backend's operations that fails the
 * Nth call of chosen ones (see host_inject.h). */
#include "devices/host/host_inject.h"
#include "base/error.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_int enabled;
static atomic_uint armed_mask; /* 0: not armed */
static atomic_uint_fast64_t counted, fail_at;

/* Set once, by the first host backend opened after enabling: every host backend has the same
 * table, so one copy serves them all. */
static const pg__backend_ops *real;
static pg__backend_ops wrapped;
static pthread_once_t wrapped_once = PTHREAD_ONCE_INIT;

__attribute__((noinline)) void pg__inject_ops_failing(void) {
    __asm__ volatile("");
}

/* Does this call of op fail? Counts it when op is armed. */
static int hit(unsigned op) {
    if (!(atomic_load(&armed_mask) & op))
        return 0;
    uint64_t n = atomic_fetch_add(&counted, 1) + 1;
    if (n != atomic_load(&fail_at))
        return 0;
    pg__inject_ops_failing();
    return 1;
}

static pg_status injected(pg_status s, const char *op) {
    return pg__error(s, "injected failure of the CPU device's %s (fault-injection test)", op);
}

static pg_status inj_host_alloc(pg__backend *b, size_t bytes, void **out) {
    if (hit(PG__INJ_HOST_ALLOC))
        return injected(PG_ERROR_OUT_OF_MEMORY, "host allocation");
    return real->host_alloc(b, bytes, out);
}

static pg_status inj_dev_alloc(pg__backend *b, int dev, size_t bytes, pg__bstream *s, void **out) {
    if (hit(PG__INJ_DEV_ALLOC))
        return injected(PG_ERROR_OUT_OF_MEMORY, "device allocation");
    return real->dev_alloc(b, dev, bytes, s, out);
}

static pg_status inj_memset_zero(pg__backend *b, pg__bstream *s, void *p, size_t bytes) {
    if (hit(PG__INJ_MEMSET))
        return injected(PG_ERROR_DEVICE, "memset");
    return real->memset_zero(b, s, p, bytes);
}

static pg_status inj_stream_new(pg__backend *b, int dev, pg__bstream **out) {
    if (hit(PG__INJ_STREAM_NEW))
        return injected(PG_ERROR_DEVICE, "stream creation");
    return real->stream_new(b, dev, out);
}

static pg_status inj_event_record(pg__backend *b, pg__bstream *s, pg__bevent **out) {
    if (hit(PG__INJ_EVENT_RECORD)) {
        /* As a GPU whose context broke: the work queued before runs out or not at all, but is
         * never left running untracked (the core fails the device and may free its buffers). */
        pg__bevent *e;
        if (real->event_record(b, s, &e) == PG_OK) {
            real->event_wait(b, e);
            real->event_free(b, e);
        }
        return injected(PG_ERROR_DEVICE, "event record");
    }
    return real->event_record(b, s, out);
}

static pg_status inj_stream_wait(pg__backend *b, pg__bstream *s, pg__bevent *e) {
    if (hit(PG__INJ_STREAM_WAIT))
        return injected(PG_ERROR_DEVICE, "stream wait");
    return real->stream_wait(b, s, e);
}

static pg_status inj_copy(pg__backend *b, pg__bstream *s, int dst_dev, void *dst, int src_dev,
                          const void *src, size_t bytes, pg__timing *t) {
    if (hit(PG__INJ_COPY))
        return injected(PG_ERROR_DEVICE, "copy");
    return real->copy(b, s, dst_dev, dst, src_dev, src, bytes, t);
}

static pg_status inj_kernel_build(pg__backend *b, const pg__kernel_src *src, void **image) {
    if (hit(PG__INJ_KERNEL_BUILD)) {
        pg_status st = injected(PG_ERROR_COMPILE, "kernel compiler");
        pg__error_set_log("injected compiler failure");
        return st;
    }
    return real->kernel_build(b, src, image);
}

static pg_status inj_kernel_function(pg__backend *b, void *image, int dev, void **fn) {
    if (hit(PG__INJ_KERNEL_FUNCTION))
        return injected(PG_ERROR_DEVICE, "kernel load");
    return real->kernel_function(b, image, dev, fn);
}

static pg_status inj_launch(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid, pg_dim3 block,
                            size_t shared_mem, const uint64_t *params, int nparams, pg__timing *t) {
    if (hit(PG__INJ_LAUNCH))
        return injected(PG_ERROR_DEVICE, "kernel launch");
    return real->launch(b, s, fn, grid, block, shared_mem, params, nparams, t);
}

static pg_status inj_launch_range(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid,
                                  pg_dim3 block, size_t shared_mem, const uint64_t *params,
                                  int nparams, uint64_t first, uint64_t count, pg__timing *t) {
    if (hit(PG__INJ_LAUNCH))
        return injected(PG_ERROR_DEVICE, "kernel launch");
    return real->launch_range(b, s, fn, grid, block, shared_mem, params, nparams, first, count, t);
}

static const pg__backend_ops *_Atomic real_pending;

static void make_wrapped(void) {
    real = atomic_load(&real_pending);
    wrapped = *real;
    wrapped.host_alloc = inj_host_alloc;
    wrapped.dev_alloc = inj_dev_alloc;
    wrapped.memset_zero = inj_memset_zero;
    wrapped.stream_new = inj_stream_new;
    wrapped.event_record = inj_event_record;
    wrapped.stream_wait = inj_stream_wait;
    wrapped.copy = inj_copy;
    wrapped.kernel_build = inj_kernel_build;
    wrapped.kernel_function = inj_kernel_function;
    wrapped.launch = inj_launch;
    if (real->launch_range)
        wrapped.launch_range = inj_launch_range;
}

const pg__backend_ops *pg__host_inject_wrap(const pg__backend_ops *ops) {
    if (!atomic_load(&enabled))
        return ops;
    atomic_store(&real_pending, ops);
    pthread_once(&wrapped_once, make_wrapped);
    return &wrapped;
}

void pg__inject_ops_enable(void) {
    atomic_store(&enabled, 1);
}

void pg__inject_ops_arm(unsigned mask, uint64_t n) {
    atomic_store(&armed_mask, 0);
    atomic_store(&counted, 0);
    atomic_store(&fail_at, n);
    atomic_store(&armed_mask, mask);
}

uint64_t pg__inject_ops_disarm(void) {
    atomic_store(&armed_mask, 0);
    atomic_store(&fail_at, 0);
    return atomic_load(&counted);
}

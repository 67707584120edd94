/* adopt.c: arrays whose value lives in memory another library owns (pg_array_adopt_host,
 * pg_array_adopt_device; DLPack's zero-copy from_dlpack). The memory becomes the array's copy
 * at one location; core/array.c never frees it, core/evict.c never evicts it (dev_pinned), and
 * pg__array_write_home copies a value made elsewhere back into it at sync, free and close. */
#include "core/array.h"
#include "core/exec.h"
#include "core/graph.h"
#include "core/handle.h"
#include "core/pieces.h"

/* The door of both: arguments, then the runtime entered and the shape checked. */
static pg__runtime *enter_adopt(pg_runtime *h, const char *fn, pg_dtype dtype, int ndim,
                                const int64_t *shape, void *ptr, pg_array **out, uint64_t *size,
                                uint64_t *nbytes, pg_status *st) {
    *st = PG_ERROR_ARGUMENT;
    if (!out || !ptr || (ndim > 0 && !shape)) {
        pg__error(PG_ERROR_ARGUMENT, "%s: ptr, shape and out must not be NULL", fn);
        return NULL;
    }
    if ((*st = pg__array_shape_check(fn, dtype, ndim, shape, size, nbytes)))
        return NULL;
    if (((uintptr_t)ptr % pg_dtype_size(dtype)) != 0) {
        *st = pg__error(PG_ERROR_ARGUMENT, "%s: %p is not aligned to its %zu-byte elements", fn,
                        ptr, pg_dtype_size(dtype));
        return NULL;
    }
    pg__runtime *rt;
    if (!pg__enter((uint64_t)(uintptr_t)h, PG__H_RUNTIME, fn, &rt)) {
        *st = PG_ERROR_STATE;
        return NULL;
    }
    *st = pg__graph_refuse(rt, fn, NULL);
    if (!*st && rt->ranks) /* another library's memory is this process's alone */
        *st = pg__error(PG_ERROR_UNSUPPORTED,
                        "%s: adopting another library's memory is not available with several "
                        "ranks (this run has %d); copy it in with pg_array_write",
                        fn, rt->nranks);
    if (*st) {
        pg__leave(rt);
        return NULL;
    }
    return rt;
}

static void adopted(pg__array *a, int loc, void (*release)(void *), void *ctx) {
    a->adopted = 1;
    a->adopted_loc = loc;
    a->release = release;
    a->release_ctx = ctx;
    a->fresh = 0;
}

pg_status pg_array_adopt_host(pg_runtime *h, pg_dtype dtype, int ndim, const int64_t *shape,
                              void *ptr, void (*release)(void *ctx), void *ctx, pg_array **out) {
    pg__error_clear();
    uint64_t size, nbytes;
    pg_status st;
    pg__runtime *rt =
        enter_adopt(h, "pg_array_adopt_host", dtype, ndim, shape, ptr, out, &size, &nbytes, &st);
    if (!rt)
        return st;
    pg__array *a = NULL;
    st = pg__array_new_root(rt, dtype, ndim, shape, size, nbytes, &a);
    if (!st) {
        a->host = ptr;
        adopted(a, 0, release, ctx);
        a->valid = PG__LOC_BIT(0); /* the value is there now: nothing to wait for */
        *out = (pg_array *)(uintptr_t)a->handle;
    }
    pg__leave(rt);
    return st;
}

pg_status pg_array_adopt_device(pg_runtime *h, pg_dtype dtype, int ndim, const int64_t *shape,
                                void *ptr, uint64_t stream, void (*release)(void *ctx), void *ctx,
                                pg_array **out) {
    pg__error_clear();
    uint64_t size, nbytes;
    pg_status st;
    const char *fn = "pg_array_adopt_device";
    pg__runtime *rt = enter_adopt(h, fn, dtype, ndim, shape, ptr, out, &size, &nbytes, &st);
    if (!rt)
        return st;
    int dev = -1;
    if (!rt->ops->pointer_device || !rt->ops->stream_wait_foreign)
        st = pg__error(PG_ERROR_UNSUPPORTED,
                       "%s: device memory is for GPU devices; this runtime has %s devices", fn,
                       rt->ops->name);
    else if ((st = rt->ops->pointer_device(rt->b, (uint64_t)(uintptr_t)ptr, &dev)))
        st = pg__error_wrap(st, "%s: %p is on none of this runtime's GPUs", fn, ptr);
    pg__array *a = NULL;
    if (!st)
        st = pg__array_new_root(rt, dtype, ndim, shape, size, nbytes, &a);
    if (st) {
        pg__leave(rt);
        return st;
    }
    a->dev[dev] = ptr;
    adopted(a, PG__LOC(dev), NULL, NULL); /* released by the caller if this fails */
    a->valid = 0;
    /* A write on the device after the other library's stream: the value is its memory's once
     * that stream's work so far is done, and polygpu's work on it is ordered after that. */
    void *buf;
    uint64_t ours;
    st = pg__exec_device_access(rt, a, dev, PG_ACCESS_OUT, 0, 0, stream, &buf, &ours);
    if (st) {
        pg__handle_release(a->handle);
        pg__array_remove_live(rt, a);
        pg__array_user_gone(a);
        pg__array_unref(a);
        pg__leave(rt);
        return st;
    }
    a->release = release;
    a->release_ctx = ctx;
    *out = (pg_array *)(uintptr_t)a->handle;
    pg__leave(rt);
    return PG_OK;
}

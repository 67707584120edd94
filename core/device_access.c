/* device_access.c: handing arrays to and from other CUDA libraries (CuPy, PyTorch, Numba via
 * __cuda_array_interface__) without a trip through the host. */
#include "core/coherence.h"
#include "core/comp.h"
#include "core/exec.h"
#include "core/graph.h"
#include "core/handle.h"
#include "core/pieces.h"
#include "core/waits.h"

static pg_status wait_history(pg__runtime *rt, pg__array *a, int readers);

static pg_status need_gpus(pg__runtime *rt, const char *fn) {
    if (!rt->ops->stream_handle || !rt->ops->stream_wait_foreign || !rt->ops->pointer_device)
        return pg__error(PG_ERROR_UNSUPPORTED,
                         "%s: device addresses are for GPU devices; this runtime has %s devices",
                         fn, rt->ops->name);
    if (rt->ranks) /* another library's writes would bypass what every rank tracks */
        return pg__error(PG_ERROR_UNSUPPORTED,
                         "%s: device addresses for other libraries are not available with "
                         "several ranks yet (this run has %d); use pg_array_read/write",
                         fn, rt->nranks);
    return PG_OK;
}

/* The door of both device-pointer calls: the access mode, the array, GPUs and the device
 * index. NULL (error set) when one is wrong; else the array, its runtime locked. */
static pg__array *enter_pointer(pg_array *h, int device, pg_access access, const char *fn,
                                pg_status *st) {
    *st = PG_ERROR_ARGUMENT;
    if (access != PG_ACCESS_IN && access != PG_ACCESS_OUT && access != PG_ACCESS_INOUT) {
        pg__error(PG_ERROR_ARGUMENT, "%s: access %d is not in, out or inout", fn, (int)access);
        return NULL;
    }
    pg__array *a = pg__enter_array(h, fn);
    if (!a) {
        *st = PG_ERROR_STATE;
        return NULL;
    }
    pg__runtime *rt = a->rt;
    *st = pg__graph_refuse(rt, fn, a);
    if (!*st)
        *st = need_gpus(rt, fn);
    if (!*st && (device < 0 || device >= rt->ndev))
        *st = pg__error(PG_ERROR_ARGUMENT, "%s: device %d is not 0..%d", fn, device, rt->ndev - 1);
    if (*st) {
        pg__leave(rt);
        return NULL;
    }
    return a;
}

pg_status pg_array_device_pointer(pg_array *h, int device, pg_access access, void **ptr,
                                  uint64_t *stream) {
    pg__error_clear();
    if (!ptr || !stream)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_array_device_pointer: ptr and stream must not be NULL");
    pg_status st;
    pg__array *a = enter_pointer(h, device, access, "pg_array_device_pointer", &st);
    if (!a)
        return st;
    st = pg__exec_device_access(a->rt, a, device, access, 0, 0, 0, ptr, stream);
    pg__leave(a->rt);
    return st;
}

pg_status pg_array_device_pointer_synced(pg_array *h, int device, pg_access access,
                                         uint64_t consumer, void **ptr) {
    pg__error_clear();
    if (!ptr)
        return pg__error(PG_ERROR_ARGUMENT, "pg_array_device_pointer_synced: ptr must not be NULL");
    pg_status st;
    pg__array *a = enter_pointer(h, device, access, "pg_array_device_pointer_synced", &st);
    if (!a)
        return st;
    pg__runtime *rt = a->rt;
    if (!rt->ops->foreign_wait)
        st = pg__error(PG_ERROR_UNSUPPORTED,
                       "pg_array_device_pointer_synced: the %s backend cannot order another "
                       "library's stream",
                       rt->ops->name);
    uint64_t ours = 0;
    if (!st)
        st = pg__exec_device_access(rt, a, device, access, 0, 0, 0, ptr, &ours);
    if (!st && consumer) /* the GPU orders the other library's work after ours */
        st = rt->ops->foreign_wait(rt->b, device, consumer, ours);
    if (!st && !consumer) /* the calling thread waits (the device access is a reader of a) */
        st = wait_history(rt, a, 1);
    if (!st && !consumer) /* a fault found by that wait leaves no value at the address */
        st = pg__coh_value_at(rt, a, PG__LOC(device));
    pg__leave(rt);
    return st;
}

/* Wait until a's last writers (and, with readers, the computations reading it since) have
 * finished. A wait drops the lock, so the pieces are looked up again after each (a view made
 * meanwhile may have cut them); finished ones are skipped. */
static pg_status wait_history(pg__runtime *rt, pg__array *a, int readers) {
    pg__array **ps;
    int n;
    pg__array_parts(a, &ps, &n);
    for (int i = 0; i < n; i++) {
        const pg__history *h = &ps[i]->hist;
        pg__comp *w = h->writer && !pg__comp_done(rt, h->writer) ? h->writer : NULL;
        for (int r = 0; readers && !w && r < h->nreaders; r++)
            if (!pg__comp_done(rt, h->readers[r]))
                w = h->readers[r];
        if (w) {
            pg_status st = pg__wait_comp(rt, w);
            if (st)
                return st;
            pg__array_parts(a, &ps, &n);
            i = -1;
        }
    }
    return PG_OK;
}

pg_status pg_array_wait(pg_array *h) {
    pg__error_clear();
    pg__array *a = pg__enter_array(h, "pg_array_wait");
    if (!a)
        return PG_ERROR_STATE;
    pg__runtime *rt = a->rt;
    pg_status st = pg__graph_refuse(rt, "pg_array_wait", a);
    if (!st)
        st = wait_history(rt, a, 0);
    pg__leave(rt);
    return st;
}

pg_status pg_array_copy_from_device(pg_array *h, uint64_t src, size_t bytes, uint64_t stream) {
    pg__error_clear();
    if (!src)
        return pg__error(PG_ERROR_ARGUMENT, "pg_array_copy_from_device: src is NULL");
    pg__array *a = pg__enter_array(h, "pg_array_copy_from_device");
    if (!a)
        return PG_ERROR_STATE;
    pg__runtime *rt = a->rt;
    pg_status st = pg__graph_refuse(rt, "pg_array_copy_from_device", a);
    if (!st)
        st = need_gpus(rt, "pg_array_copy_from_device");
    if (!st && bytes != a->nbytes)
        st = pg__error(PG_ERROR_ARGUMENT,
                       "pg_array_copy_from_device: %zu bytes given, the array holds %llu", bytes,
                       (unsigned long long)a->nbytes);
    int dev = 0;
    if (!st)
        st = rt->ops->pointer_device(rt->b, src, &dev);
    void *ptr;
    uint64_t s;
    if (!st)
        st = pg__exec_device_access(rt, a, dev, PG_ACCESS_OUT, src, bytes, stream, &ptr, &s);
    pg__leave(rt);
    return st;
}

/* device_access.c: handing arrays to and from other CUDA libraries (CuPy, PyTorch, Numba via
 * __cuda_array_interface__) without a trip through the host. */
#include "core/internal.h"

static pg_status need_gpus(pg__runtime *rt, const char *fn) {
    if (!rt->ops->stream_handle || !rt->ops->stream_wait_foreign || !rt->ops->pointer_device)
        return pg__error(PG_ERROR_UNSUPPORTED,
                         "%s: device addresses are for GPU devices; this runtime has %s devices",
                         fn, rt->ops->name);
    return PG_OK;
}

pg_status pg_array_device_pointer(pg_array *h, int device, pg_access access, void **ptr,
                                  uint64_t *stream) {
    pg__error_clear();
    if (!ptr || !stream)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_array_device_pointer: ptr and stream must not be NULL");
    if (access != PG_ACCESS_IN && access != PG_ACCESS_OUT && access != PG_ACCESS_INOUT)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_array_device_pointer: access %d is not in, out or inout", (int)access);
    pg__array *a = pg__enter_array(h, "pg_array_device_pointer");
    if (!a)
        return PG_ERROR_STATE;
    pg__runtime *rt = a->rt;
    pg_status st = pg__graph_refuse(rt, "pg_array_device_pointer", a);
    if (!st)
        st = need_gpus(rt, "pg_array_device_pointer");
    if (!st && (device < 0 || device >= rt->ndev))
        st = pg__error(PG_ERROR_ARGUMENT, "pg_array_device_pointer: device %d is not 0..%d", device,
                       rt->ndev - 1);
    if (!st)
        st = pg__exec_device_access(rt, a, device, access, 0, 0, 0, ptr, stream);
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

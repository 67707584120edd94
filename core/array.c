/* array.c: the array object — the live list, a new root, its last reference, its buffer at each
 * location (allocated on first use). The public array entries are core/array_api.c's; views
 * and pieces core/pieces.c's. */
#include "core/array.h"
#include "core/coherence.h"
#include "core/comp.h"
#include "core/deps.h"
#include "core/evict.h"
#include "core/handle.h"
#include "core/pieces.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

pg_status pg__array_add_live(pg__runtime *rt, pg__array *a) {
    if (rt->narrays == rt->caparrays) {
        int cap = rt->caparrays ? rt->caparrays * 2 : 64;
        pg__array **n = pg__realloc(rt->arrays, (size_t)cap * sizeof *n);
        if (!n)
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for the array table");
        rt->arrays = n;
        rt->caparrays = cap;
    }
    a->live_index = rt->narrays;
    rt->arrays[rt->narrays++] = a;
    return PG_OK;
}

void pg__array_remove_live(pg__runtime *rt, pg__array *a) {
    pg__array *last = rt->arrays[--rt->narrays];
    rt->arrays[a->live_index] = last;
    last->live_index = a->live_index;
}

pg_status pg__array_shape_check(const char *fn, pg_dtype dtype, int ndim, const int64_t *shape,
                                uint64_t *size_out, uint64_t *nbytes_out) {
    size_t esize = pg_dtype_size(dtype);
    if (!esize)
        return pg__error(PG_ERROR_ARGUMENT, "%s: unknown dtype %d", fn, (int)dtype);
    if (ndim < 1 || ndim > PG_MAX_DIMS)
        return pg__error(PG_ERROR_ARGUMENT, "%s: %d dimensions; arrays have 1 to %d dimensions", fn,
                         ndim, PG_MAX_DIMS);
    uint64_t size = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] <= 0)
            return pg__error(PG_ERROR_ARGUMENT,
                             "%s: dimension %d has size %lld; sizes must be positive", fn, i,
                             (long long)shape[i]);
        if ((uint64_t)shape[i] > (UINT64_C(1) << 48) / size)
            return pg__error(PG_ERROR_ARGUMENT, "%s: shape is too large (over 2^48 elements)", fn);
        size *= (uint64_t)shape[i];
    }
    *size_out = size;
    *nbytes_out = size * esize;
    return PG_OK;
}

pg_status pg__array_new_root(pg__runtime *rt, pg_dtype dtype, int ndim, const int64_t *shape,
                             uint64_t size, uint64_t nbytes, pg__array **out) {
    pg__array *a = pg__calloc(1, sizeof *a);
    pg_status st = a ? PG_OK : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (!st)
        st = pg__array_add_live(rt, a);
    if (!st) {
        a->handle = pg__handle_new(PG__H_ARRAY, a, rt);
        if (!a->handle) {
            pg__array_remove_live(rt, a);
            st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of handles");
        }
    }
    if (st) {
        pg__free(a);
        return st;
    }
    a->rt = rt;
    a->id = ++rt->next_array_id;
    a->refs = 1;
    a->dtype = dtype;
    a->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        a->shape[i] = shape[i];
    a->size = size;
    a->nbytes = nbytes;
    a->fresh = 1;
    a->valid = (1u << (rt->ndev + 1)) - 1;
    a->kind = PG__A_ROOT;
    a->store = a;
    a->one = a;
    a->users = 1;
    *out = a;
    return PG_OK;
}

void pg__array_unref(pg__array *a) {
    if (--a->refs > 0)
        return;
    pg__runtime *rt = a->rt;
    pg__dag_forget(rt, a);
    pg__coh_array_free(a);
    for (int l = 0; l < PG__NLOC; l++)
        pg__comp_set(rt, &a->ready[l], NULL);
    int theirs = a->adopted ? a->adopted_loc : -1; /* another library's memory stays */
    if (a->host && theirs != 0)
        rt->ops->host_free(rt->b, a->host);
    for (int d = 0; d < rt->ndev; d++)
        if (a->dev[d] && theirs != PG__LOC(d)) {
            rt->ops->dev_free(rt->b, d, a->dev[d]);
            pg__evict_forget(rt, a, d);
        }
    pg__array *store = a->store;
    void (*release)(void *) = a->adopted ? a->release : NULL;
    void *release_ctx = a->release_ctx;
    if (a->kind == PG__A_VIEW)
        pg__pieces_view_gone(a); /* its cuts may go */
    pg__free(a->pieces);
    pg__free(a);
    if (release) /* nothing of ours uses the memory any more */
        release(release_ctx);
    if (store != a) /* a view or a piece: the elements may go now */
        pg__array_unref(store);
}

pg_status pg__array_buffer(pg__array *a, int loc, pg__stream *s, void **out) {
    pg__runtime *rt = a->rt;
    if (a->store != a) { /* a piece or a view: the root's buffer, at its offset */
        void *base = NULL;
        pg_status st = pg__array_buffer(a->store, loc, s, &base);
        if (!st)
            *out = (char *)base + a->off * pg_dtype_size(a->dtype);
        return st;
    }
    if (loc == 0) {
        if (!a->host) {
            pg_status st = rt->ops->host_alloc(rt->b, a->nbytes, &a->host);
            if (st)
                return pg__error_wrap(pg__coh_fault_cause(rt, st),
                                      "the host copy of array %llu (%llu bytes)",
                                      (unsigned long long)a->id, (unsigned long long)a->nbytes);
        }
        *out = a->host;
        return PG_OK;
    }
    int d = loc - 1;
    if (!a->dev[d]) {
        /* Counted per device and kept under device_memory_limit (core/evict.c); a kernel's
         * buffers were made by pg__evict_reserve already. */
        void *p = NULL;
        pg_status st = pg__evict_alloc(rt, a, d, s, &p);
        if (st)
            return pg__error_wrap(pg__coh_fault_cause(rt, st),
                                  "the copy of array %llu (%llu bytes) on device %d",
                                  (unsigned long long)a->id, (unsigned long long)a->nbytes, d);
        a->dev[d] = p;
        if (a->fresh && (st = rt->ops->memset_zero(rt->b, s->b, a->dev[d], a->nbytes))) {
            rt->ops->dev_free(rt->b, d, a->dev[d]);
            pg__evict_forget(rt, a, d);
            a->dev[d] = NULL;
            return st;
        }
    }
    *out = a->dev[d];
    return PG_OK;
}

/* array_api.c: the public array entries — make, free, describe, read, write, map, prefetch —
 * and adopted memory written home. Each enters through the door (core/handle.c) and works on
 * the array's pieces through the execution context (core/exec.c: host accesses) and the issue
 * path (prefetches); the object itself is core/array.c's. */
#include "core/array.h"
#include "core/exec.h"
#include "core/graph.h"
#include "core/handle.h"
#include "core/issue.h"
#include "core/pieces.h"
#include "core/ranks.h"
#include "core/host_memory.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

pg_status pg_array_new(pg_runtime *rth, pg_dtype dtype, int ndim, const int64_t *shape,
                       pg_array **out) {
    pg__error_clear();
    if (!out || (ndim > 0 && !shape))
        return pg__error(PG_ERROR_ARGUMENT, "pg_array_new: shape and out must not be NULL");
    uint64_t size, nbytes;
    pg_status st = pg__array_shape_check("pg_array_new", dtype, ndim, shape, &size, &nbytes);
    if (st)
        return st;
    /* The host copy is allocated at first use: an impossible size must fail here, not there. */
    pg_status hst = pg__host_memory_check(nbytes, "pg_array_new");
    if (hst)
        return hst;
    pg__runtime *rt;
    if (!pg__enter((uint64_t)(uintptr_t)rth, PG__H_RUNTIME, "pg_array_new", &rt))
        return PG_ERROR_STATE;
    uint64_t largest = 0;
    for (int d = 0; d < rt->ndev; d++)
        if (rt->dev[d].info.memory_bytes > largest)
            largest = rt->dev[d].info.memory_bytes;
    if (largest && nbytes > largest) {
        pg__leave(rt);
        return pg__error(PG_ERROR_OUT_OF_MEMORY,
                         "pg_array_new: %llu bytes is more than any device's memory (%llu bytes)",
                         (unsigned long long)nbytes, (unsigned long long)largest);
    }
    pg__array *a = NULL;
    st = pg__array_new_root(rt, dtype, ndim, shape, size, nbytes, &a);
    /* Read under the lock: once it is dropped, another thread closing the runtime frees a. */
    if (!st)
        *out = (pg_array *)(uintptr_t)a->handle;
    pg__leave(rt);
    return st;
}

pg_status pg_array_free(pg_array *h) {
    pg__error_clear();
    pg__array *a = pg__enter_array(h, "pg_array_free");
    if (!a)
        return PG_ERROR_STATE;
    pg__runtime *rt = a->rt;
    if (pg__graph_uses(rt, a)) {
        pg__leave(rt);
        return pg__error(PG_ERROR_STATE,
                         "pg_array_free: array %llu is used by the graph being recorded; free "
                         "it after pg_graph_end (and after the last replay)",
                         (unsigned long long)a->id);
    }
    if (a->umaps) {
        pg__leave(a->rt);
        return pg__error(PG_ERROR_STATE,
                         "pg_array_free: array %llu is still mapped; unmap it first",
                         (unsigned long long)a->id);
    }
    /* The other library keeps the memory an adopted array's value lives in: it gets the last
     * value (the copy holds the root until it has run). */
    pg_status wst = a->adopted ? pg__array_write_home(rt, a) : PG_OK;
    if (wst) {
        pg__leave(rt);
        return pg__error_wrap(wst,
                              "pg_array_free: writing array %llu back to the memory it "
                              "adopted",
                              (unsigned long long)a->id);
    }
    pg__handle_release(a->handle);
    pg__array_remove_live(rt, a);
    pg__array_user_gone(a); /* a root's elements stay while its views and work use them */
    pg__array_unref(a);
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_array_describe(pg_array *h, pg_array_desc *out) {
    pg__error_clear();
    if (!out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_array_describe: out must not be NULL");
    pg__array *a = pg__enter_array(h, "pg_array_describe");
    if (!a)
        return PG_ERROR_STATE;
    memset(out, 0, sizeof *out);
    out->id = a->id;
    out->dtype = a->dtype;
    out->ndim = a->ndim;
    for (int i = 0; i < a->ndim; i++)
        out->shape[i] = a->shape[i];
    out->size = a->size;
    out->nbytes = a->nbytes;
    pg__array **ps;
    int n;
    pg__array_parts(a, &ps, &n);
    out->valid = ~0u; /* where every piece of it is current; none where this rank's copy is
                       * not (several ranks: core/ranks.c) */
    for (int i = 0; i < n; i++)
        out->valid &= !pg__ranks_here(a->rt, ps[i]) ? 0u
                      : ps[i]->fresh                ? (1u << (a->rt->ndev + 1)) - 1
                                                    : ps[i]->valid;
    pg__leave(a->rt);
    return PG_OK;
}

static pg_status check_range(pg__array *a, uint64_t first, uint64_t count, const void *p,
                             const char *fn) {
    if (!p && count)
        return pg__error(PG_ERROR_ARGUMENT, "%s: the host pointer is NULL", fn);
    if (first > a->size || count > a->size - first)
        return pg__error(PG_ERROR_ARGUMENT,
                         "%s: elements [%llu, %llu) are out of range for array %llu of %llu "
                         "elements",
                         fn, (unsigned long long)first, (unsigned long long)(first + count),
                         (unsigned long long)a->id, (unsigned long long)a->size);
    return PG_OK;
}

/* Begin a host access to the piece of root r at element pos (its holder then). The lock is
 * dropped while it waits, when another thread may cut that piece: then the access goes to the
 * halves instead. */
static pg_status piece_begin(pg__runtime *rt, pg__array *r, uint64_t pos, uint64_t end,
                             pg_access access, pg__array **out) {
    for (;;) {
        pg__array *p = pg__array_piece_at(r, pos);
        /* a write of a whole piece needs none of its old value */
        pg_access acc = access == PG_ACCESS_OUT && !(pos == p->off && end >= p->off + p->size)
                            ? PG_ACCESS_INOUT
                            : access;
        pg__array_ref(p);
        pg_status st = pg__exec_host_begin(rt, p, acc);
        if (!st && p->superseded) {
            st = pg__exec_host_end(rt, p);
            pg__array_unref(p);
            if (st)
                return st;
            continue;
        }
        if (!st && (access & PG_ACCESS_IN) && p->uncomputed) {
            /* Devices that compute nothing made this value: none may be read back. */
            (void)pg__exec_host_end(rt, p); /* the refusal below is the error to report */
            st =
                pg__error(PG_ERROR_UNSUPPORTED, "array %llu: its value was made on devices that %s",
                          (unsigned long long)p->id, rt->uncomputed);
        }
        if (st) {
            pg__array_unref(p);
            return st;
        }
        *out = p; /* referenced */
        return PG_OK;
    }
}

static pg_status piece_end(pg__runtime *rt, pg__array *p) {
    pg_status st = pg__exec_host_end(rt, p);
    pg__array_unref(p);
    return st;
}

/* One host access per piece the range covers: begin, copy, end. */
static pg_status host_copy(pg_array *h, uint64_t first, uint64_t count, void *dst, const void *src,
                           const char *fn) {
    pg__error_clear();
    pg__array *a = pg__enter_array(h, fn);
    if (!a)
        return PG_ERROR_STATE;
    pg__runtime *rt = a->rt;
    pg_status st = pg__graph_refuse(rt, fn, a);
    if (!st)
        st = check_range(a, first, count, dst ? dst : src, fn);
    pg__array *r = a->store;
    pg__array_ref(r); /* a concurrent free must not take the memory while we copy */
    size_t es = pg_dtype_size(a->dtype);
    uint64_t start = a->off + first, pos = start, end = start + count;
    while (!st && pos < end) {
        pg__array *p;
        if (rt->ranks) { /* every rank reads the value; only the owner's copy takes a write */
            p = pg__array_piece_at(r, pos);
            uint64_t pend = p->off + p->size;
            int local;
            st = pg__ranks_host_piece(rt, p, dst ? PG_ACCESS_IN : PG_ACCESS_OUT,
                                      pos == p->off && end >= pend, &local);
            if (!st && !local) {
                pos = pend < end ? pend : end;
                continue;
            }
            if (st)
                break;
        }
        st = piece_begin(rt, r, pos, end, dst ? PG_ACCESS_IN : PG_ACCESS_OUT, &p);
        if (st)
            break;
        uint64_t hi = p->off + p->size < end ? p->off + p->size : end;
        char *host = (char *)r->host + pos * es;
        char *user = (char *)(dst ? dst : (void *)(uintptr_t)src) + (pos - start) * es;
        pg__unlock(rt);
        memcpy(dst ? user : host, dst ? host : user, (hi - pos) * es);
        pg__lock(rt);
        st = piece_end(rt, p);
        pos = hi;
    }
    pg__array_unref(r);
    pg__leave(rt);
    return st;
}

pg_status pg_array_read(pg_array *h, uint64_t first, uint64_t count, void *dst) {
    return host_copy(h, first, count, dst, NULL, "pg_array_read");
}

pg_status pg_array_write(pg_array *h, uint64_t first, uint64_t count, const void *src) {
    return host_copy(h, first, count, NULL, src, "pg_array_write");
}

/* End the host accesses of a's pieces from its start to element `upto` of its root. */
static pg_status end_pieces(pg__runtime *rt, pg__array *a, uint64_t upto) {
    pg_status first = PG_OK;
    for (uint64_t pos = a->off; pos < upto;) {
        pg__array *p = pg__array_piece_at(a->store, pos);
        pos = p->off + p->size;
        pg_status st = pg__exec_host_end(rt, p);
        if (!first)
            first = st;
    }
    return first;
}

pg_status pg_array_map(pg_array *h, pg_access access, void **ptr) {
    pg__error_clear();
    if (!ptr)
        return pg__error(PG_ERROR_ARGUMENT, "pg_array_map: ptr must not be NULL");
    if (access != PG_ACCESS_IN && access != PG_ACCESS_OUT && access != PG_ACCESS_INOUT)
        return pg__error(PG_ERROR_ARGUMENT, "pg_array_map: access %d is not in, out or inout",
                         (int)access);
    pg__array *a = pg__enter_array(h, "pg_array_map");
    if (!a)
        return PG_ERROR_STATE;
    pg__runtime *rt = a->rt;
    pg_status st = pg__graph_refuse(rt, "pg_array_map", a);
    uint64_t pos = a->off, end = a->off + a->size;
    while (!st && pos < end) {
        pg__array *p;
        int local; /* a map covers whole pieces; a rank not owning one writes a copy not used */
        if (rt->ranks &&
            (st = pg__ranks_host_piece(rt, pg__array_piece_at(a->store, pos), access, 1, &local)))
            break;
        st = piece_begin(rt, a->store, pos, end, access, &p);
        if (!st) {
            pos = p->off + p->size;
            pg__array_unref(p); /* its mapping keeps it until the unmap */
        }
    }
    if (st && pos > a->off) {
        char why[1024];
        snprintf(why, sizeof why, "%s", pg_last_error());
        (void)end_pieces(rt, a, pos); /* no access granted: end what was begun */
        st = pg__error(st, "%s", why);
    }
    if (!st) {
        a->umaps++;
        *ptr = pg__array_buf(a, 0);
    }
    pg__leave(rt);
    return st;
}

pg_status pg_array_unmap(pg_array *h) {
    pg__error_clear();
    pg__array *a = pg__enter_array(h, "pg_array_unmap");
    if (!a)
        return PG_ERROR_STATE;
    pg_status st =
        a->umaps ? PG_OK
                 : pg__error(PG_ERROR_STATE, "array %llu is not mapped", (unsigned long long)a->id);
    if (!st) {
        a->umaps--;
        st = end_pieces(a->rt, a, a->off + a->size);
    }
    pg__leave(a->rt);
    return st;
}

pg_status pg_array_prefetch(pg_array *h, int location) {
    pg__error_clear();
    pg__array *a = pg__enter_array(h, "pg_array_prefetch");
    if (!a)
        return PG_ERROR_STATE;
    pg__runtime *rt = a->rt;
    pg_status st = pg__graph_refuse(rt, "pg_array_prefetch", a);
    if (!st && location != PG_HOST && (location < 0 || location >= rt->ndev))
        st = pg__error(PG_ERROR_ARGUMENT,
                       "pg_array_prefetch: location %d is neither PG_HOST (-1) nor a device 0..%d",
                       location, rt->ndev - 1);
    pg__array **ps;
    int n = 0;
    if (!st)
        pg__array_parts(a, &ps, &n);
    for (int i = 0; !st && i < n; i++) {
        pg__array *p = ps[i];
        if (!pg__ranks_here(rt, p))
            continue; /* this rank's copy is not the current value: nothing to prefetch */
        /* Nothing to copy yet while the current value is still being made on the host or
         * waits behind a mapping: the copy would read an unfinished value. */
        pg__comp *w = p->hist.writer;
        int unknown = (p->map_comp && p->map_comp->kind == PG__HOST_WRITE) ||
                      (w && (w->state == PG__OPEN || w->state == PG__PENDING));
        if (!unknown)
            st = pg__issue_prefetch(rt, p, location == PG_HOST ? 0 : PG__LOC(location));
    }
    if (st == PG_ERROR_OUT_OF_MEMORY && location != PG_HOST) {
        /* No room on the device short of waiting for other work (core/evict.c): a hint
         * leaves it to the launch that needs the array, which may wait. */
        pg__error_clear();
        st = PG_OK;
    }
    pg__leave(rt);
    return st;
}

pg_status pg__array_write_home(pg__runtime *rt, pg__array *root) {
    if (!root->adopted)
        return PG_OK;
    int home = root->adopted_loc;
    pg__array **ps;
    int n;
    pg__array_parts(root, &ps, &n);
    for (int i = 0; i < n; i++) {
        pg__array *p = ps[i];
        if (p->lost || p->fresh || (p->valid & PG__LOC_BIT(home)))
            continue;
        /* A value still being made on the host, or held back behind a mapping, is not known
         * yet: the sync or free after it writes it back. */
        pg__comp *w = p->hist.writer;
        if ((p->map_comp && p->map_comp->kind == PG__HOST_WRITE) ||
            (w && (w->state == PG__OPEN || w->state == PG__PENDING)))
            continue;
        pg_status st = pg__issue_prefetch(rt, p, home);
        if (st)
            return st;
    }
    return PG_OK;
}

pg_status pg__array_write_home_all(pg__runtime *rt) {
    for (int i = 0; i < rt->narrays; i++) {
        pg__array *a = rt->arrays[i];
        if (a->adopted && a->kind == PG__A_ROOT) {
            pg_status st = pg__array_write_home(rt, a);
            if (st)
                return st;
        }
    }
    return PG_OK;
}

/* array.h: the array object (core/array.c) and adopted memory written home (core/array_api.c); the
 * public array entries are core/array_api.c's. Owns an array's buffers (host, dev[]), rt->arrays
 * (the live handles), adopted memory. */
#ifndef PG_CORE_ARRAY_H
#define PG_CORE_ARRAY_H

#include "core/objects.h"

/* ---- arrays (core/array.c) */
void pg__array_unref(pg__array *a);
/* rt->arrays, the live handles (a root or a view each) */
pg_status pg__array_add_live(pg__runtime *rt, pg__array *a);
/* pg_array_new's checks of dtype and shape (errors name fn), and a new root with a handle,
 * zeros everywhere (rt->mu held). */
pg_status pg__array_shape_check(const char *fn, pg_dtype dtype, int ndim, const int64_t *shape,
                                uint64_t *size, uint64_t *nbytes);
pg_status pg__array_new_root(pg__runtime *rt, pg_dtype dtype, int ndim, const int64_t *shape,
                             uint64_t size, uint64_t nbytes, pg__array **out);
void pg__array_remove_live(pg__runtime *rt, pg__array *a);
/* The buffer at a location, allocated on first use (zeroed if the array is fresh); a piece's or
 * view's is its root's at its offset. */
pg_status pg__array_buffer(pg__array *a, int loc, pg__stream *s, void **out);
/* The buffer at loc if there is one (a piece's or view's: its root's at its offset), or NULL. */
static inline void *pg__array_buf(const pg__array *a, int loc) {
    const pg__array *r = a->store;
    char *b = loc == 0 ? r->host : r->dev[loc - 1];
    return b && a->off ? b + a->off * pg_dtype_size(a->dtype) : b;
}

/* ---- adopted memory (core/array_api.c) */
/* Adopted roots (pg_array_adopt_*): copy each piece whose current value is not in the adopted
 * memory back into it (core/array.c); _all for every live root of rt (sync, close). */
pg_status pg__array_write_home(pg__runtime *rt, pg__array *root);
pg_status pg__array_write_home_all(pg__runtime *rt);

#endif

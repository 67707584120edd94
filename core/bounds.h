/* bounds.h: check=bounds for views (core/bounds.c). Owns rt->staging. */
#ifndef PG_CORE_BOUNDS_H
#define PG_CORE_BOUNDS_H

#include "core/objects.h"

/* ---- check=bounds on CPU devices (core/bounds.c) */
typedef struct pg__staging pg__staging;
/* Launch c on s (buffers per argument in buf), each view parameter in a guarded buffer of its
 * own (its rows copied in, and back when it may be written): pg__comp_expand_pieces left each
 * view parameter's elements in its slot (0: not a view). */
pg_status pg__bounds_launch(pg__runtime *rt, pg__comp *c, pg__stream *s, void *fn, void **buf);
/* Free what the staged launches kept (runtime teardown). */
void pg__bounds_free(pg__runtime *rt);

#endif

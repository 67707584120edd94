/* place.h: placement (core/place.c): a device and a stream for a computation (Figure 5). Writes
 * nothing: reads the state, builds the policy's view, calls the policy. */
#ifndef PG_CORE_PLACE_H
#define PG_CORE_PLACE_H

#include "core/objects.h"

/* ---- placement (core/place.c) */
/* Choose a device and a stream for c (the Figure 5 flow); reads state only. *stream = NULL
 * asks the caller for a new stream on *device. Marks nothing: the caller sets stream_taken. */
pg_status pg__policy_place(pg__runtime *rt, pg__comp *c, int *device, pg__stream **stream,
                           pg__comp **stream_parent);

#endif

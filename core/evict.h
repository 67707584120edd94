/* evict.h: device memory (core/evict.c): bytes per device under the limit, eviction, write-back.
 * Owns rt->stats.device_bytes, an array's dev_use, dev_evicted, evict_mark, a device's loads,
 * pingpong, last_ws. */
#ifndef PG_CORE_EVICT_H
#define PG_CORE_EVICT_H

#include "core/objects.h"

/* ---- device memory (core/evict.c): the bytes of device buffers per device, kept under
 * device_memory_limit (and under what the device itself can give) by evicting least recently
 * used copies that no unfinished work uses: clean ones are freed, dirty ones (the only current
 * value) are copied to the host first. */
/* Allocate the buffers c lacks on dev (zeroed on s for never-written arrays), making room
 * first. Needing to wait for work to finish (a write-back, a computation using a buffer), it
 * waits with the lock dropped and sets *again: the world changed, so the caller places c anew
 * (its parents, device and stream may differ). Fails with PG_ERROR_OUT_OF_MEMORY when c's own
 * arguments exceed the limit, when nothing can be evicted, or when the device ping-pongs. */
pg_status pg__evict_reserve(pg__runtime *rt, pg__comp *c, int dev, pg__stream *s, int *again);
/* A buffer of a's size on dev for a copy or a device access (a itself has none there):
 * evicts only what can go without waiting. */
pg_status pg__evict_alloc(pg__runtime *rt, pg__array *a, int dev, pg__stream *s, void **out);
/* a's buffer on dev is gone (array freed): stop counting it. */
void pg__evict_forget(pg__runtime *rt, pg__array *a, int dev);

#endif

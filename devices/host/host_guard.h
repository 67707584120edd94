/* host_guard.h: device buffers with guard pages for the check=bounds mode of CPU devices, so an
 * access past either end of a buffer faults instead of changing a neighbouring array. */
#ifndef PG_HOST_GUARD_H
#define PG_HOST_GUARD_H

#include <stddef.h>
#include <stdint.h>

/* `bytes` (zero-filled) placed so that they end exactly where a PROT_NONE page starts, with
 * another such page before them. NULL when out of memory. */
void *pg__host_guard_alloc(size_t bytes);
/* Free a buffer of pg__host_guard_alloc: 1, or 0 when p is not one (nothing done). */
int pg__host_guard_free(void *p);
/* When addr is in a guard page of a live guarded buffer: 1 and a sentence saying where
 * ("out of bounds: byte offset 16384 of a 16384-byte device buffer (past its end)"). Else 0. */
int pg__host_guard_describe(uintptr_t addr, char *out, size_t cap);

#endif

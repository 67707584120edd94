/* host_guard.h: device buffers with guard pages for the check=bounds mode of CPU devices, so an
 * access past either end of a buffer faults instead of changing a neighbouring array. */
#ifndef PG_HOST_GUARD_H
#define PG_HOST_GUARD_H

#include <stddef.h>
#include <stdint.h>

/* `bytes` (zero-filled) placed so that they end exactly where a PROT_NONE guard region starts,
 * with another before them (each at least 16 MiB and the buffer's size, address space only);
 * the bytes between the first guard and the start (less than a page) are a redzone that
 * pg__host_guard_check looks at. NULL when out of memory. */
void *pg__host_guard_alloc(size_t bytes);
/* Free a buffer of pg__host_guard_alloc: 1, or 0 when p is not one (nothing done). */
int pg__host_guard_free(void *p);
/* When addr is in a guard page of a live guarded buffer: 1 and a sentence saying where
 * ("out of bounds: byte offset 16384 of a 16384-byte device buffer (past its end)"). Else 0. */
int pg__host_guard_describe(uintptr_t addr, char *out, size_t cap);
/* Say what buffer p (from pg__host_guard_alloc) holds, in messages about it ("argument 'y' of
 * kernel 'fill': rows [0, 8) of array 3"); copied. Nothing when p is not one. */
void pg__host_guard_label(void *p, const char *label);
/* After a kernel: 1 and a sentence when a parameter points into a guarded buffer whose
 * redzone before its start was written. 0 at once when no guarded buffer lives. */
int pg__host_guard_check(const uint64_t *params, int nparams, char *out, size_t cap);

#endif

/* host_memory.h: how much host memory the process can still take, and byte counts as people
 * read them. */
#ifndef PG_HOST_MEMORY_H
#define PG_HOST_MEMORY_H

#include "polygpu.h"

/* PG_OK if `bytes` more of host memory can be had at all: under the address-space and data-size
 * limits (RLIMIT_AS, RLIMIT_DATA) given what the process uses now, and under the machine's RAM
 * plus swap. Else PG_ERROR_OUT_OF_MEMORY naming the size and the limit, `what` first. A bound,
 * not a promise: memory that is free now may be gone at first use. */
pg_status pg__host_memory_check(uint64_t bytes, const char *what);

/* "4 GiB", "227 KiB", "100 bytes". */
void pg__bytes_text(uint64_t bytes, char *out, size_t cap);

#endif

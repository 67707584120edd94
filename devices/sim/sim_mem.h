/* sim_mem.h: the memory of simulated GPUs — a table of buffers per device, with each device's
 * capacity enforced. Timing-only runs hand out addresses that are never dereferenced (no host
 * memory is used, so a simulated 80 GB GPU costs nothing); runs that compute allocate real
 * host memory. The table also answers which buffer a kernel's pointer argument lies in (the
 * bytes a launch touches, for its duration model). Not thread-safe: the backend locks. */
#ifndef PG_SIM_MEM_H
#define PG_SIM_MEM_H

#include "polygpu.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pg__sim_block {
    uintptr_t addr;
    size_t bytes;
    int dev;
} pg__sim_block;

typedef struct pg__sim_mem {
    int real; /* 1: buffers are host memory (kernels run); 0: addresses only */
    uint64_t capacity[PG_MAX_DEVICES];
    uint64_t used[PG_MAX_DEVICES];
    pg__sim_block *b; /* sorted by address */
    int n, cap;
} pg__sim_mem;

typedef enum { PG__SIM_MEM_OK, PG__SIM_MEM_FULL, PG__SIM_MEM_HOST_OOM } pg__sim_mem_result;

/* A zero-filled buffer (real) or a fresh address range (not) of `bytes` on dev. */
pg__sim_mem_result pg__sim_mem_alloc(pg__sim_mem *m, int dev, size_t bytes, void **out);
void pg__sim_mem_free(pg__sim_mem *m, void *p);
/* Bytes from v to the end of the buffer of dev that holds it; 0 if none does. */
uint64_t pg__sim_mem_extent(const pg__sim_mem *m, int dev, uintptr_t v);
/* Frees every buffer left and the table. */
void pg__sim_mem_close(pg__sim_mem *m);

#endif

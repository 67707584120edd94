/* cu_cupti.h: the GPU's own timeline through CUPTI's activity API (trace option): kernels,
 * copies and memsets with the GPU's start and end, tied to polygpu's computations by external
 * correlation ids. CUPTI is loaded with dlopen (never linked), as the driver is; without it the
 * trace goes on without the GPU's rows and says why. */
#ifndef PG_CU_CUPTI_H
#define PG_CU_CUPTI_H

#include "polygpu.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pg__cupti pg__cupti; /* one backend's share of the process's CUPTI subscription */

/* Start recording for a backend whose GPUs are the contexts ctx[0 .. n) (CUcontext). CUPTI is
 * loaded and its callbacks registered once per process; its records are enabled while at least
 * one backend records. NULL with `why` (a reason, no error message set) when CUPTI is absent or
 * refuses. */
pg__cupti *pg__cupti_start(void *const *ctx, int n, char *why, size_t cap);
void pg__cupti_stop(pg__cupti *c); /* NULL is fine */
/* The driver calls the calling thread makes until pg__cupti_leave enqueue computation id's work. */
void pg__cupti_enter(pg__cupti *c, uint64_t id);
void pg__cupti_leave(pg__cupti *c);
/* The spans recorded so far for this backend (pg__malloc'd into *out, the caller frees), times
 * in ns after epoch_ns (CLOCK_MONOTONIC). idle: no work is in flight, so CUPTI may hand over
 * every record (a forced flush); else only its completed buffers. `note` gets a sentence on what
 * is missing (records dropped), "" when nothing. */
pg_status pg__cupti_spans(pg__cupti *c, uint64_t epoch_ns, int idle, pg_gpu_span **out, size_t *n,
                          char *note, size_t cap);

#endif

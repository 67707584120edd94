/* exec.h: the execution context (core/exec.c): submit, schedule, held-back work, host accesses,
 * sync, device accesses for other libraries. Owns rt->pending list, an array's map_comp, map_count,
 * a computation's state from PENDING to ISSUED. */
#ifndef PG_CORE_EXEC_H
#define PG_CORE_EXEC_H

#include "core/issue.h"

/* ---- execution (core/exec.c) */
/* Submit a computation whose args are set; schedules it now or holds it back. Lock held. */
pg_status pg__exec_submit(pg__runtime *rt, pg__comp *c);
/* Begin a host access to a: waits (unlocked) until the host copy may be used that way. Lock
 * held on entry and exit. Accesses nest (a->map_count); each needs a host_end. */
/* Device access for another CUDA library (see pg_array_device_pointer); src != 0 also copies
 * `bytes` from that device address after the foreign stream's work. */
pg_status pg__exec_device_access(pg__runtime *rt, pg__array *a, int dev, pg_access access,
                                 uint64_t src, size_t bytes, uint64_t foreign, void **ptr,
                                 uint64_t *stream);
pg_status pg__exec_host_begin(pg__runtime *rt, pg__array *a, pg_access access);
pg_status pg__exec_host_end(pg__runtime *rt, pg__array *a);
pg_status pg__exec_sync(pg__runtime *rt);
/* Issue the held-back work that an open access ended by the core (a rank's transfer) let go. */
pg_status pg__exec_release(pg__runtime *rt);

/* Issue c (args set) on s, both decided already (a plan's replay, core/replay.c): parents from
 * the arrays' histories and `extra` (what it reads that they may not name), accepted into the
 * DAG under `name`, then pg__issue with work. *blocked: an open host access holds it back;
 * nothing was done, and the caller goes the eager way, which can wait for it. */
pg_status pg__exec_issue_on(pg__runtime *rt, pg__comp *c, pg__stream *s, const char *name,
                            pg__comp *const *extra, int nextra, pg__issue_work work, void *ctx,
                            int *blocked);

#endif

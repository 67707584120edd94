/* task.h: tasks (core/task.c): C functions launched like kernels. */
#ifndef PG_CORE_TASK_H
#define PG_CORE_TASK_H

#include "core/objects.h"

/* ---- tasks (core/task.c): kernels that are C functions. A task's computation keeps, after its
 * nslots parameter slots, one more slot per parameter: the array's element count (0: scalar). */
/* The devices task k may run on (a kind with an implementation); none: PG_ERROR_ARGUMENT. */
pg_status pg__task_fits(const pg__runtime *rt, const pg__kernel *k, uint32_t *mask);
/* Enqueue task computation c (slots filled with s's buffers) on s through the backend's call. */
pg_status pg__task_issue(pg__runtime *rt, pg__comp *c, pg__stream *s);

#endif

/* split.h: one launch over several devices (core/split.c). Owns a kernel's splittable, split and
 * its last split. */
#ifndef PG_CORE_SPLIT_H
#define PG_CORE_SPLIT_H

#include "core/objects.h"

/* ---- one launch over several devices (core/split.c) */
/* At kernel creation: whether its signature lets a launch be split (k->splittable). */
void pg__split_kernel_init(pg__kernel *k);
/* Submit bound launch c as one part per device when its kernel and the runtime allow it
 * (*done 1: submitted so, c itself is not); else *done 0 and the caller submits c. */
pg_status pg__split_submit(pg__runtime *rt, pg__comp *c, int *done);

#endif

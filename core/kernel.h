/* kernel.h: kernels and tasks (core/kernel.c): made, bound, launched. Owns pg__kernel, rt->kernels.
 */
#ifndef PG_CORE_KERNEL_H
#define PG_CORE_KERNEL_H

#include "core/objects.h"

/* ---- kernels (core/kernel.c) */
void pg__kernel_unref(pg__kernel *k);
/* Give k (built, refs 1) a handle and list it in rt->kernels; the lock is not held on entry.
 * On failure k is left to the caller. */
pg_status pg__kernel_register(pg__runtime *rt, pg__kernel *k, pg_kernel **out);

#endif

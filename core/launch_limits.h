/* launch_limits.h: launch limits (core/limits.c). Owns rt->limits_min and each device's limits. */
#ifndef PG_CORE_LAUNCH_LIMITS_H
#define PG_CORE_LAUNCH_LIMITS_H

#include "core/objects.h"

/* ---- launch limits (core/limits.c) */
/* Take each device's limits from its info (once the infos are there). */
void pg__limits_init(pg__runtime *rt);
/* *mask gets the devices whose limits a launch of kernel `kernel` fits; none: PG_ERROR_ARGUMENT
 * naming the launch and each device's limit. A few comparisons when every device fits it. */
pg_status pg__limits_fit(const pg__runtime *rt, const char *kernel, pg_dim3 grid, pg_dim3 block,
                         size_t shared, uint32_t *mask);

#endif

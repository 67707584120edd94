/* host_inject.h: test-only fault injection for CPU devices: the Nth call of chosen backend
 * operations fails, as a device, a driver or a compiler might. Not part of the public header;
 * exported only so that tests/c can reach it. The counter is process-wide. */
#ifndef PG_HOST_INJECT_H
#define PG_HOST_INJECT_H

#include "devices/backend.h"

#include <stdint.h>

/* The operations that can be made to fail (a mask of these). */
enum {
    PG__INJ_HOST_ALLOC = 1 << 0,
    PG__INJ_DEV_ALLOC = 1 << 1,
    PG__INJ_MEMSET = 1 << 2,
    PG__INJ_STREAM_NEW = 1 << 3,
    PG__INJ_EVENT_RECORD = 1 << 4,
    PG__INJ_STREAM_WAIT = 1 << 5,
    PG__INJ_COPY = 1 << 6,
    PG__INJ_KERNEL_BUILD = 1 << 7,
    PG__INJ_KERNEL_FUNCTION = 1 << 8,
    PG__INJ_LAUNCH = 1 << 9,
    PG__INJ_ALL_OPS = (1 << 10) - 1
};

/* From now on, host backends opened (pg_runtime_new with host:N) call their operations through
 * a counting wrapper; those opened before are unaffected. Once on, stays on. */
void pg__inject_ops_enable(void);
/* Count the calls of the operations in `mask` from now; the n-th fails once, doing nothing,
 * with the operation's natural status: PG_ERROR_OUT_OF_MEMORY for an allocation,
 * PG_ERROR_COMPILE for a build, PG_ERROR_DEVICE otherwise. n = 0 counts only. */
void pg__inject_ops_arm(unsigned mask, uint64_t n);
uint64_t pg__inject_ops_disarm(void); /* stop; returns the calls counted since the arm */
/* Called when the armed operation fails: break on it in a debugger to see where N is. */
void pg__inject_ops_failing(void);

/* The table a host backend hands out: `real`, or the wrapper around it once enabled. */
const pg__backend_ops *pg__host_inject_wrap(const pg__backend_ops *real);

#endif

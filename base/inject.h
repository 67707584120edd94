/* inject.h: test-only fault injection (SQLite style): fail the Nth heap allocation of the
 * library from the moment it is armed (devices/host/host_inject.h does the same for CPU-device
 * backend operations). Not part of the public header; the symbols are exported only so that
 * tests/c can reach them. The counter is process-wide and counts every thread. */
#ifndef PG_INJECT_H
#define PG_INJECT_H

#include <stdint.h>

/* Count allocations from now; the n-th fails (returns NULL) once, the later ones succeed.
 * n = 0 counts only. */
void pg__inject_alloc_arm(uint64_t n);
/* Stop counting; returns the allocations counted since the arm (the n-th failed iff >= n). */
uint64_t pg__inject_alloc_disarm(void);
/* Called when the armed allocation fails: break on it in a debugger to see where N is. */
void pg__inject_alloc_failing(void);

#endif

/* alloc.c: the test-only switch that fails the Nth allocation of the library's door (alloc.h). */
#include "base/alloc.h"
#include "base/inject.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Armed: every allocation counts; the one whose count equals fail_at fails. */
atomic_int pg__alloc_armed;
static atomic_uint_fast64_t counted, fail_at;

/* Called at the injected failure: a place for a debugger's breakpoint ("which allocation is
 * N?"). */
__attribute__((noinline)) void pg__inject_alloc_failing(void) {
    __asm__ volatile("");
}

int pg__alloc_injected(void) {
    uint64_t n = atomic_fetch_add(&counted, 1) + 1;
    if (n != atomic_load(&fail_at))
        return 0;
    pg__inject_alloc_failing();
    return 1;
}

void pg__inject_alloc_arm(uint64_t n) {
    atomic_store(&pg__alloc_armed, 0);
    atomic_store(&counted, 0);
    atomic_store(&fail_at, n);
    atomic_store(&pg__alloc_armed, 1);
}

uint64_t pg__inject_alloc_disarm(void) {
    atomic_store(&pg__alloc_armed, 0);
    atomic_store(&fail_at, 0);
    return atomic_load(&counted);
}

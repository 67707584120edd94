/* alloc.c: the library's allocator door, and the test-only switch that fails the Nth call. */
#include "base/alloc.h"
#include "base/inject.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Armed: every allocation counts; the one whose count equals fail_at fails. Off (the normal
 * case) costs one relaxed load per allocation. */
static atomic_int armed;
static atomic_uint_fast64_t counted, fail_at;

/* Called at the injected failure: a place for a debugger's breakpoint ("which allocation is
 * N?"). */
__attribute__((noinline)) void pg__inject_alloc_failing(void) {
    __asm__ volatile("");
}

static int injected_failure(void) {
    if (!atomic_load_explicit(&armed, memory_order_relaxed))
        return 0;
    uint64_t n = atomic_fetch_add(&counted, 1) + 1;
    if (n != atomic_load(&fail_at))
        return 0;
    pg__inject_alloc_failing();
    return 1;
}

void pg__inject_alloc_arm(uint64_t n) {
    atomic_store(&armed, 0);
    atomic_store(&counted, 0);
    atomic_store(&fail_at, n);
    atomic_store(&armed, 1);
}

uint64_t pg__inject_alloc_disarm(void) {
    atomic_store(&armed, 0);
    atomic_store(&fail_at, 0);
    return atomic_load(&counted);
}

void *pg__malloc(size_t n) {
    return injected_failure() ? NULL : malloc(n);
}

void *pg__calloc(size_t count, size_t size) {
    return injected_failure() ? NULL : calloc(count, size);
}

void *pg__realloc(void *p, size_t n) {
    return injected_failure() ? NULL : realloc(p, n);
}

char *pg__strdup(const char *s) {
    return injected_failure() ? NULL : strdup(s);
}

char *pg__strndup(const char *s, size_t n) {
    return injected_failure() ? NULL : strndup(s, n);
}

int pg__posix_memalign(void **out, size_t align, size_t n) {
    return injected_failure() ? ENOMEM : posix_memalign(out, align, n);
}

void pg__free(void *p) {
    free(p);
}

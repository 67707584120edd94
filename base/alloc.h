/* alloc.h: the one door every heap allocation of the library goes through (core, dag,
 * policies, devices, nvrtc), so that a test can fail the Nth one (base/inject.h). Same
 * contracts as the C library functions they stand for; memory from any of them is released
 * with pg__free, which is free(): the one block handed to callers (pg_dag_export_string) is
 * released by pg_string_free all the same. Not counted: what the C library allocates for
 * itself (stdio, dlopen, glob, thread stacks) and the mappings of guard pages and fiber
 * stacks (mmap: their failure is handled where they are made). */
#ifndef PG_ALLOC_H
#define PG_ALLOC_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Inline: the launch path allocates and frees a few times per call, and a call into the
 * library per allocation cost about 1% of a launch on a CPU device. Off, injection costs one
 * relaxed load. */
extern atomic_int pg__alloc_armed;
int pg__alloc_injected(void); /* armed: count this allocation; 1 if it is the one to fail */

static inline int pg__alloc_fails(void) {
    return atomic_load_explicit(&pg__alloc_armed, memory_order_relaxed) && pg__alloc_injected();
}
static inline void *pg__malloc(size_t n) {
    return pg__alloc_fails() ? NULL : malloc(n);
}
static inline void *pg__calloc(size_t count, size_t size) {
    return pg__alloc_fails() ? NULL : calloc(count, size);
}
/* On failure p is untouched, as with realloc. */
static inline void *pg__realloc(void *p, size_t n) {
    return pg__alloc_fails() ? NULL : realloc(p, n);
}
static inline char *pg__strdup(const char *s) {
    return pg__alloc_fails() ? NULL : strdup(s);
}
static inline char *pg__strndup(const char *s, size_t n) {
    return pg__alloc_fails() ? NULL : strndup(s, n);
}
/* 0 or an errno value. */
static inline int pg__posix_memalign(void **out, size_t align, size_t n) {
    return pg__alloc_fails() ? ENOMEM : posix_memalign(out, align, n);
}
static inline void pg__free(void *p) {
    free(p);
}

#endif

/* alloc.h: the one door every heap allocation of the library goes through (core, dag,
 * policies, devices, nvrtc), so that a test can fail the Nth one (base/inject.h). Same
 * contracts as the C library functions they stand for; memory from any of them is released
 * with pg__free, which is free(): the one block handed to callers (pg_dag_export_string) is
 * released by pg_string_free all the same. Not counted: what the C library allocates for
 * itself (stdio, dlopen, glob, thread stacks) and the mappings of guard pages and fiber
 * stacks (mmap: their failure is handled where they are made). */
#ifndef PG_ALLOC_H
#define PG_ALLOC_H

#include <stddef.h>

void *pg__malloc(size_t n);
void *pg__calloc(size_t count, size_t size);
void *pg__realloc(void *p, size_t n); /* on failure p is untouched, as with realloc */
char *pg__strdup(const char *s);
char *pg__strndup(const char *s, size_t n);
int pg__posix_memalign(void **out, size_t align, size_t n); /* 0 or an errno value */
void pg__free(void *p);

#endif

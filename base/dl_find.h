/* dl_find.h: opening a shared library from candidate places, and saying where it looked (the
 * NVRTC and CUPTI loaders: nvrtc/nvrtc_compile.c, devices/cuda/cu_cupti.c). `where` is the
 * caller's buffer (cap bytes): a list "a, b, c" that each try adds its path to, for the error
 * that names the places when none opens. */
#ifndef PG_BASE_DL_FIND_H
#define PG_BASE_DL_FIND_H

#include <stddef.h>

/* dlopen(path) (RTLD_NOW | RTLD_LOCAL), path added to where; the handle or NULL. */
void *pg__dl_try(char *where, size_t cap, const char *path);
/* Each file matching the glob pattern in turn until one opens; name_unmatched: a pattern that
 * matches nothing is named in where too. */
void *pg__dl_glob(char *where, size_t cap, const char *pattern, int name_unmatched);

#endif

/* dl_find.c: shared libraries opened from candidate places (base/dl_find.h). */
#include "base/dl_find.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>

void *pg__dl_try(char *where, size_t cap, const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    size_t n = strlen(where);
    if (n < cap - 2)
        snprintf(where + n, cap - n, "%s%s", n ? ", " : "", path);
    return h;
}

void *pg__dl_glob(char *where, size_t cap, const char *pattern, int name_unmatched) {
    glob_t g;
    void *h = NULL;
    if (glob(pattern, 0, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc && !h; i++)
            h = pg__dl_try(where, cap, g.gl_pathv[i]);
    else if (name_unmatched)
        pg__dl_try(where, cap, pattern);
    globfree(&g);
    return h;
}

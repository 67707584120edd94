/* sim_presets.c: where preset topologies live. An installed library finds them relative to its
 * own file (nothing installed names the configure-time prefix, so a moved install still works);
 * a build tree has a copy beside the library; PG_SIM_PRESETS overrides both. */
#include "devices/sim/sim_topo.h"
#include "base/error.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* From the library's folder to the installed presets (CMake computes it from the install
 * dirs: libdir -> datadir/polygpu/sim). */
#ifndef PG_SIM_DATA_REL
#define PG_SIM_DATA_REL "../share/polygpu/sim"
#endif
/* The build tree's copy, beside the library (CMakeLists.txt). */
#define BUILD_DIR_NAME "sim-presets"

static int valid_preset(const char *s) {
    if (!s[0] || s[0] == '.' || strlen(s) > 64)
        return 0;
    for (const char *c = s; *c; c++)
        if (!(*c == '-' || *c == '_' || *c == '.' || (*c >= '0' && *c <= '9') ||
              (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
            return 0;
    return 1;
}

/* The folders to look in, best first: up to 3 (a library path of up to 1023 characters and
 * what follows it fit). */
#define DIR_CAP 1100
static int folders(char dirs[3][DIR_CAP]) {
    int n = 0;
    const char *env = getenv("PG_SIM_PRESETS");
    if (env && env[0])
        snprintf(dirs[n++], sizeof dirs[0], "%.1023s", env);
    Dl_info info;
    if (dladdr((void *)pg__sim_topo_find, &info) && info.dli_fname && info.dli_fname[0]) {
        char lib[1024];
        snprintf(lib, sizeof lib, "%s", info.dli_fname);
        char *slash = strrchr(lib, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(lib, sizeof lib, ".");
        snprintf(dirs[n++], sizeof dirs[0], "%s/%s", lib, PG_SIM_DATA_REL);
        snprintf(dirs[n++], sizeof dirs[0], "%s/%s", lib, BUILD_DIR_NAME);
    }
    return n;
}

static int by_name(const void *a, const void *b) {
    return strcmp((const char *)a, (const char *)b);
}

/* "a, b, c" of the *.topo files in dir; "" if none. */
static void list_presets(const char *dir, char *out, size_t cap) {
    out[0] = '\0';
    DIR *d = opendir(dir);
    if (!d)
        return;
    /* Sorted by name so the message does not depend on the folder's order. */
    char names[32][64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 32) {
        size_t len = strlen(e->d_name);
        if (len > 5 && len < 64 && !strcmp(e->d_name + len - 5, ".topo")) {
            snprintf(names[n], sizeof names[0], "%.*s", (int)(len - 5), e->d_name);
            n++;
        }
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    size_t len = 0;
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ", " : "", names[i]);
}

pg_status pg__sim_topo_find(const char *name, char *path, size_t cap) {
    if (!valid_preset(name))
        return pg__error(PG_ERROR_ARGUMENT,
                         "sim preset '%s' is not a preset name (letters, digits, - _ .); give a "
                         "topology file as a path with a '/' (sim:./my.topo)",
                         name);
    char dirs[3][DIR_CAP];
    int n = folders(dirs);
    for (int i = 0; i < n; i++) {
        char p[DIR_CAP + 80];
        int len = snprintf(p, sizeof p, "%s/%s.topo", dirs[i], name);
        if (len > 0 && (size_t)len < sizeof p && access(p, R_OK) == 0) {
            if (strlen(p) >= cap)
                return pg__error(PG_ERROR_ARGUMENT, "the path of preset %s is too long: %s", name,
                                 p);
            snprintf(path, cap, "%s", p);
            return PG_OK;
        }
    }
    char known[600] = "";
    const char *where = "";
    for (int i = 0; i < n && !known[0]; i++) {
        list_presets(dirs[i], known, sizeof known);
        where = dirs[i];
    }
    if (known[0])
        return pg__error(PG_ERROR_NOT_FOUND,
                         "no sim preset '%s' (in %s: %s); or give a topology file's path", name,
                         where, known);
    return pg__error(PG_ERROR_NOT_FOUND,
                     "no sim preset '%s': no preset folder found (set PG_SIM_PRESETS to the "
                     "folder of *.topo files, e.g. devices/sim/presets of a checkout, or give a "
                     "topology file's path)",
                     name);
}

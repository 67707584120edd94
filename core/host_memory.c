/* host_memory.c: how much host memory the process can still take, and byte counts as people
 * read them. */
#include "core/host_memory.h"
#include "base/error.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>

void pg__bytes_text(uint64_t bytes, char *out, size_t cap) {
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(out, cap, "%llu bytes", (unsigned long long)bytes);
    else
        snprintf(out, cap, "%.3g %s", v, unit[u]);
}

/* A "Name:   123 kB" line of /proc/self/status in bytes; 0 where it cannot be read (the limit
 * check then counts nothing as used, which errs on the side of allowing). */
static uint64_t status_bytes(const char *name) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    size_t n = strlen(name);
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, name, n) == 0 && line[n] == ':') {
            if (sscanf(line + n + 1, "%llu", &kb) != 1)
                kb = 0;
            break;
        }
    fclose(f);
    return (uint64_t)kb * 1024;
}

static pg_status check_limit(uint64_t bytes, const char *what, int resource, const char *used_name,
                             const char *limit_name) {
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return PG_OK;
    uint64_t limit = (uint64_t)rl.rlim_cur, used = status_bytes(used_name);
    uint64_t room = limit > used ? limit - used : 0;
    if (bytes <= room)
        return PG_OK;
    char b[32], l[32], u[32];
    pg__bytes_text(bytes, b, sizeof b);
    pg__bytes_text(limit, l, sizeof l);
    pg__bytes_text(used, u, sizeof u);
    return pg__error(PG_ERROR_OUT_OF_MEMORY,
                     "%s: %llu bytes (%s) do not fit under the process's %s of %s, of which %s "
                     "are in use: raise the limit or use a smaller array",
                     what, (unsigned long long)bytes, b, limit_name, l, u);
}

pg_status pg__host_memory_check(uint64_t bytes, const char *what) {
    pg_status st =
        check_limit(bytes, what, RLIMIT_AS, "VmSize", "address-space limit (RLIMIT_AS, ulimit -v)");
    if (!st)
        st = check_limit(bytes, what, RLIMIT_DATA, "VmData",
                         "data-size limit (RLIMIT_DATA, ulimit -d)");
    if (st)
        return st;
    struct sysinfo si;
    if (sysinfo(&si) != 0)
        return PG_OK;
    uint64_t unit = si.mem_unit ? si.mem_unit : 1;
    uint64_t ram = (uint64_t)si.totalram * unit, swap = (uint64_t)si.totalswap * unit;
    if (bytes <= ram + swap)
        return PG_OK;
    char b[32], r[32], s[32];
    pg__bytes_text(bytes, b, sizeof b);
    pg__bytes_text(ram, r, sizeof r);
    pg__bytes_text(swap, s, sizeof s);
    return pg__error(PG_ERROR_OUT_OF_MEMORY,
                     "%s: %llu bytes (%s) are more than this machine's memory (%s of RAM and %s of "
                     "swap): use a smaller array",
                     what, (unsigned long long)bytes, b, r, s);
}

/* fuzz_profile.c: fuzz harness of the kernel timing profiles of simulated devices
 * (sim:...,profile=FILE): pg__sim_profile_load reads the CSV (sim_text.c's fields, model lines,
 * sample lines fitted by least squares), then lookups and durations. Input: the file's text,
 * written to an in-memory file opened by path as a real one is. */
#include "devices/sim/sim_profile.h"
#include "tests/fuzz/fuzz.h"

#include <math.h>
#include <sys/mman.h>
#include <unistd.h>

int pg_fuzz_profile(const uint8_t *data, size_t size) {
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz.profile", MFD_CLOEXEC);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("fuzz_profile: writing the input");
        abort();
    }
    pg__sim_profile *p = NULL;
    pg_status st = pg__sim_profile_load(path, 5500.0, &p);
    if (st != PG_OK) {
        pg_fuzz_check_error(st);
        FUZZ_ASSERT(p == NULL);
        return 0;
    }
    FUZZ_ASSERT(p != NULL && pg__sim_profile_count(p) >= 0);
    /* Lookups of names the input may hold (its first fields), and durations never below 0. */
    static const char *names[] = {"k", "add1", "scale", "axpy", "*", ""};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const pg__sim_model *m = pg__sim_profile_find(p, names[i], "NVIDIA H200");
        if (!m)
            continue;
        FUZZ_ASSERT(m->x == PG__SIM_X_BYTES || m->x == PG__SIM_X_THREADS);
        FUZZ_ASSERT(!(pg__sim_model_ns(m, 0, 1) < 0));
        FUZZ_ASSERT(!(pg__sim_model_ns(m, 1u << 20, 1u << 20) < 0));
    }
    pg__sim_profile_free(p);
    return 0;
}

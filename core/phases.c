/* phases.c: the counters of phases.h and their table. */
#include "core/phases.h"

#include <string.h>
#include <time.h>

static const char *const NAMES[PG__PH_COUNT] = {"enter (lock, handle, dims)",
                                                "bind arguments",
                                                "sweep finished work",
                                                "dependencies",
                                                "placement (policies, stream)",
                                                "buffers, kernel function, checks",
                                                "DAG record",
                                                "waits on parents, input copies",
                                                "backend launch",
                                                "completion marker",
                                                "bookkeeping, coherence",
                                                "leave (unref, unlock)"};

#ifdef PG_PHASES
uint64_t pg__phase_ns[PG__PH_COUNT];
uint64_t pg__phase_launches;
uint64_t pg__phase_mark;
uint64_t pg__phase_queries, pg__phase_query_ns;

uint64_t pg__phase_clock(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int pg__phases_report(FILE *out, const char *title) {
    double n = pg__phase_launches ? (double)pg__phase_launches : 1, total = 0;
    fprintf(out,
            "\n%s: %llu launches, µs per launch by phase\n\n| phase | µs | share |\n| --- | "
            "--- | --- |\n",
            title, (unsigned long long)pg__phase_launches);
    for (int p = 0; p < PG__PH_COUNT; p++)
        total += (double)pg__phase_ns[p];
    for (int p = 0; p < PG__PH_COUNT; p++)
        fprintf(out, "| %s | %.3f | %.0f%% |\n", NAMES[p], (double)pg__phase_ns[p] / n / 1e3,
                total > 0 ? 100.0 * (double)pg__phase_ns[p] / total : 0.0);
    fprintf(out, "| **total** | %.3f | |\n", total / n / 1e3);
    fprintf(out,
            "\nevent queries (completion checks, any phase): %.3f per launch, %.3f us per "
            "launch in them\n",
            (double)pg__phase_queries / n, (double)pg__phase_query_ns / n / 1e3);
    pg__phases_reset();
    return 1;
}

void pg__phases_reset(void) {
    memset(pg__phase_ns, 0, sizeof pg__phase_ns);
    pg__phase_launches = 0;
    pg__phase_queries = pg__phase_query_ns = 0;
}
#else
void pg__phases_reset(void) {}

int pg__phases_report(FILE *out, const char *title) {
    (void)NAMES;
    fprintf(out, "%s: phase counters are not built in (configure with -DPG_PHASES=ON)\n", title);
    return 0;
}
#endif

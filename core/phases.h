/* phases.h: where the time of one launch goes, counted only in a build with -DPG_PHASES=ON (the
 * launch_overhead benchmark prints the table). Each phase adds the time since the previous mark
 * of the same launch to its counter; the counters are process-wide and not synchronised, so they
 * are meant for one submitting thread. In an ordinary build every macro is empty. */
#ifndef PG_CORE_PHASES_H
#define PG_CORE_PHASES_H

#include <stdint.h>
#include <stdio.h>

typedef enum pg__phase {
    PG__PH_ENTER,    /* public entry: lock, handle check, launch dimensions */
    PG__PH_BIND,     /* argument binding: new computation, array references, slot layout */
    PG__PH_SWEEP,    /* releasing finished work (every 16th submission) */
    PG__PH_DEPS,     /* dependency analysis: parents from the arrays' histories */
    PG__PH_PLACE,    /* fault check, device and stream policy, stream creation */
    PG__PH_BUFFERS,  /* device memory reservation, buffers, kernel function, input checks */
    PG__PH_RECORD,   /* DAG record and history commit */
    PG__PH_WAITS,    /* event waits on parents' streams and input copies */
    PG__PH_LAUNCH,   /* the backend launch */
    PG__PH_MARK,     /* the completion marker (backend event record) */
    PG__PH_BOOKKEEP, /* issued: in-flight lists, parent references, coherence updates */
    PG__PH_LEAVE,    /* reference drops, unlock */
    PG__PH_COUNT
} pg__phase;

#ifdef PG_PHASES
extern uint64_t pg__phase_ns[PG__PH_COUNT];
extern uint64_t pg__phase_launches;
uint64_t pg__phase_clock(void);
/* PG__PHASE_SET starts a launch's clock; PG__PHASE_SHARED(p) charges the time since the last
 * mark to phase p (one process-wide mark: the launch path spans several functions). */
extern uint64_t pg__phase_mark;
#define PG__PHASE_SET() (pg__phase_mark = pg__phase_clock())
#define PG__PHASE_SHARED(p)                                                                        \
    do {                                                                                           \
        uint64_t pg__ph_n = pg__phase_clock();                                                     \
        pg__phase_ns[p] += pg__ph_n - pg__phase_mark;                                              \
        pg__phase_mark = pg__ph_n;                                                                 \
    } while (0)
#define PG__PHASE_LAUNCH_DONE() (pg__phase_launches++)
/* Event queries asking whether a computation finished (the sweep's and the others'), and their
 * time: a line under the table, since they fall in several phases. */
extern uint64_t pg__phase_queries, pg__phase_query_ns;
#define PG__PHASE_QUERY(expr)                                                                      \
    ({                                                                                             \
        uint64_t pg__q0 = pg__phase_clock();                                                       \
        int pg__qr = (expr);                                                                       \
        pg__phase_queries++;                                                                       \
        pg__phase_query_ns += pg__phase_clock() - pg__q0;                                          \
        pg__qr;                                                                                    \
    })
#else
#define PG__PHASE_QUERY(expr) (expr)
#define PG__PHASE_SET() ((void)0)
#define PG__PHASE_SHARED(p) ((void)0)
#define PG__PHASE_LAUNCH_DONE() ((void)0)
#endif

/* Prints the table (µs per launch per phase) and resets the counters; says so and returns 0 in
 * a build without phases. pg__phases_reset only resets. */
int pg__phases_report(FILE *out, const char *title);
void pg__phases_reset(void);

#endif

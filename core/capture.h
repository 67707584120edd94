/* capture.h: the capture notes (set by core/replay.c while a plan is captured): what the issue path
 * tells a capture, through a table, so that no module below the replay calls up into it. */
#ifndef PG_CORE_CAPTURE_H
#define PG_CORE_CAPTURE_H

#include "core/objects.h"

/* Capture notes, taken where core/issue.c, core/exec.c, core/bounds.c and core/evict.c hand
 * work to a stream: through the table the capture set (rt->cap_notes), so that those modules,
 * below the replay, never call up into it; nothing at all while no plan is captured. */
typedef struct pg__capture_notes {
    void (*launch)(pg__runtime *rt, pg__comp *c, pg__stream *s, void *fn);
    void (*copy)(pg__runtime *rt, pg__comp *c, pg__stream *s, void *dst, const void *src);
    void (*read)(pg__runtime *rt, pg__array *a, int loc); /* a's value at loc was read */
    void (*broken)(pg__runtime *rt); /* not a plan: the lock was dropped meanwhile */
} pg__capture_notes;
static inline void pg__plan_note_launch(pg__runtime *rt, pg__comp *c, pg__stream *s, void *fn) {
    if (rt->cap)
        rt->cap_notes->launch(rt, c, s, fn);
}
static inline void pg__plan_note_copy(pg__runtime *rt, pg__comp *c, pg__stream *s, void *dst,
                                      const void *src) {
    if (rt->cap)
        rt->cap_notes->copy(rt, c, s, dst, src);
}
static inline void pg__plan_note_read(pg__runtime *rt, pg__array *a, int loc) {
    if (rt->cap)
        rt->cap_notes->read(rt, a, loc);
}
static inline void pg__plan_note_broken(pg__runtime *rt) {
    if (rt->cap)
        rt->cap_notes->broken(rt);
}

#endif

/* replay.h: plans (core/replay.c): capture what one replay issued, check that it fits, issue it
 * again. Owns pg__plan, rt->cap, rt->cap_gens, an array's and a computation's cap_gen, cap_idx,
 * cap_node. */
#ifndef PG_CORE_REPLAY_H
#define PG_CORE_REPLAY_H

#include "core/objects.h"

/* ---- plans (core/replay.c): what one replay of a recording issued — backend launches and
 * copies with the edges between them, the arrays' coherence before and after — kept so that
 * later replays issue it again as one backend graph (or the same operations re-issued)
 * without placing, binding or analysing each call. */
/* Start capturing the replay of `calls` (rt->cap); NULL (nothing captured) when out of memory. */
pg__plan *pg__plan_capture_begin(pg__runtime *rt, pg__comp *const *calls, int ncalls);
/* The replay ended (ok: every call was issued, none held back): the plan, ready to replay, or
 * NULL when it cannot be one (freed then). Ends the capture either way. */
pg__plan *pg__plan_capture_end(pg__runtime *rt, pg__plan *p, int ok);
/* Replay p as one computation named `name`, first copying values to where the plan reads them
 * if they are not there: *used = 0 (and nothing replayed) when p cannot replay now (a buffer
 * moved meanwhile, or a host access holds it back); the caller then replays eagerly. */
pg_status pg__plan_replay(pg__runtime *rt, pg__plan *p, const char *name, int *used);
/* Whether p may replay with the arrays as they are: 2 as eager calls would (every value it
 * reads is where it reads it, and it copies none to where it already is), 1 only after
 * copies or with copies eager calls would not make, 0 not at all (buffers moved, a device
 * failed, a value lost). */
int pg__plan_fit(pg__runtime *rt, const pg__plan *p);
void pg__plan_free(pg__runtime *rt, pg__plan *p); /* waits for its last replay's work */

#endif

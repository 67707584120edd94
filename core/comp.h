/* comp.h: computations (core/comp.c): made, referenced, cloned, observed done, failed; the
 * in-flight sweep. Owns pg__comp and the in-flight list; calls no module above it (rt->hooks
 * instead). */
#ifndef PG_CORE_COMP_H
#define PG_CORE_COMP_H

#include "core/objects.h"

/* Drop c's parent list (the references must already be released). */
void pg__comp_parents_clear(pg__comp *c);
/* c's value is bad: it failed itself or read from a failed computation. msg is copied. */
void pg__comp_fail(pg__comp *c, const char *msg);
/* Failures seen since the last call (faults, not their consequences): PG_ERROR_DEVICE naming
 * the first and how many, or PG_OK. For pg_runtime_sync, as CUDA's synchronize reports an
 * asynchronous error. */
pg_status pg__comp_failures_take(pg__runtime *rt);
/* Free the pool of finished computations (runtime teardown). */
void pg__comp_pool_free(pg__runtime *rt);

/* ---- computations (core/comp.c) */
pg__comp *pg__comp_new(pg__runtime *rt, pg__comp_kind kind);
static inline void pg__comp_ref(pg__comp *c) {
    c->refs++;
}
void pg__comp_unref(pg__runtime *rt, pg__comp *c);
/* Room in c for the arguments, slots and slot map of a launch with n parameters: inside the
 * computation up to PG__INLINE (no allocation on the hot path), else on the heap. */
pg_status pg__comp_storage(pg__comp *c, int n);
/* A new computation that launches what rec (a recorded launch) launched: same kernel,
 * dimensions, arrays and scalar slots (a replay, a part of a split launch). */
pg__comp *pg__comp_clone(pg__runtime *rt, const pg__comp *rec);
/* Done: finished and observed (marks it DONE, resolves timing). Never blocks. */
/* Done as far as the runtime has seen, with no device query (may say 0 for finished work):
 * for heuristics, where asking the device (about a microsecond on a GPU) costs more than a
 * stale answer. */
int pg__comp_known_done(const pg__comp *c);
int pg__comp_done(pg__runtime *rt, pg__comp *c);
void pg__comp_set(pg__runtime *rt, pg__comp **slot, pg__comp *c); /* ref c, unref old */
/* Append c to a list linked through c->next (the in-flight or pending list), referenced. */
void pg__comp_list_push(pg__comp **head, pg__comp **tail, pg__comp *c);
void pg__comp_finish_host(pg__runtime *rt, pg__comp *c); /* a host access ended */
/* Observe what finished, oldest first, at most max computations: each seen done leaves the
 * in-flight list (its references go). */
void pg__comp_sweep(pg__runtime *rt, int max);

#endif

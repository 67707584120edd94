/* waits.h: waits that end (core/wait.c): on an event, on the runtime's condition, on a poll, on a
 * computation; deadlocks with this thread's own host accesses are refused. Owns a host access's
 * holders (c->holder). */
#ifndef PG_CORE_WAITS_H
#define PG_CORE_WAITS_H

#include "core/objects.h"

/* ---- waits that end (core/wait.c): lock held on entry and exit, dropped while waiting. Each
 * ends with PG_ERROR_TIMEOUT past the thread's deadline and PG_ERROR_INTERRUPTED when the
 * binding's interrupt check says so; the time counts as host wait. */
pg_status pg__wait_event(pg__runtime *rt, pg__bevent *e);
pg_status pg__wait_cond(pg__runtime *rt); /* one wait on rt->cond: callers loop */
/* Wait until poll says done (or fails), asking it again and again with the lock dropped: for
 * what no event or condition signals (a message from another rank). */
pg_status pg__wait_poll(pg__runtime *rt, pg_status (*poll)(void *ctx, int *done), void *ctx);
/* Give this thread's waits a deadline timeout_ns from now (the earlier one wins when nested);
 * returns what pg__wait_deadline_pop restores. */
uint64_t pg__wait_deadline_push(uint64_t timeout_ns);
void pg__wait_deadline_pop(uint64_t old);
/* Wait until c is finished; lock held on entry and exit. PG_ERROR_STATE when that would wait
 * for a host access this thread holds open (a deadlock) or another thread closes the runtime. */
pg_status pg__wait_comp(pg__runtime *rt, pg__comp *c);
/* Wait until c, held back behind a host access, is issued. */
pg_status pg__wait_issued(pg__runtime *rt, pg__comp *c);
/* One wait for another thread's host access to end or held-back work to be issued (rt->cond);
 * ends when another thread closes the runtime. */
pg_status pg__wait_host(pg__runtime *rt);
/* Host accesses and the threads holding them (c->holder): hold/unhold count this thread's
 * holds; waiting for an access this thread holds is a deadlock, reported by deadlock_error. */
void pg__wait_hold(pg__comp *c);
void pg__wait_unhold(pg__comp *c);
int pg__wait_held_by_self(const pg__comp *c);
pg__comp *pg__wait_self_blocker(pg__comp *c);
pg_status pg__wait_deadlock_error(pg__comp *b);

#endif

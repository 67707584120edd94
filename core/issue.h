/* issue.h: the issue path (core/issue.c): the one path from a placed computation to a stream. Owns
 * the order of work on streams (stream waits, events, a computation's issue). */
#ifndef PG_CORE_ISSUE_H
#define PG_CORE_ISSUE_H

#include "core/objects.h"

/* ---- issue (core/issue.c): the one path from a placed computation to a stream */
/* The backend operation(s) of computation c on stream s (a launch, a copy...). */
typedef pg_status (*pg__issue_work)(pg__runtime *rt, pg__comp *c, pg__stream *s, void *ctx);
/* Issue c (accepted, parents set) on s: order it after its parents, bring its inputs (args
 * with PG_ACCESS_IN; copies have none) to s's device, run work, record the completion event;
 * then c is issued, last on s, in flight, and its parents dropped. On failure nothing is
 * marked issued and the caller still owns c; devices found faulted are marked failed. */
pg_status pg__issue(pg__runtime *rt, pg__comp *c, pg__stream *s, pg__issue_work work, void *ctx);
/* Make a's current value usable by c on s's device: s waits for the work that made that copy
 * current, or for a copy issued now (on the device's copy stream with prefetch). Buffers must
 * exist (pg__array_buffer). */
pg_status pg__issue_input(pg__runtime *rt, pg__comp *c, pg__array *a, pg__stream *s);
/* Bring the host copy up to date for host access c; *wait gets the computation to wait for
 * (a reference, or NULL). */
pg_status pg__issue_to_host(pg__runtime *rt, pg__comp *c, pg__array *a, pg__comp **wait);
/* Start a copy of a's current value to location loc (0 host, d+1 device d) unless loc holds
 * it already; returns without waiting. The copy counts as a reader of a. */
pg_status pg__issue_prefetch(pg__runtime *rt, pg__array *a, int loc);

#endif

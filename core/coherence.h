/* coherence.h: coherence (core/coherence.c): which locations hold each piece's current value, where
 * a copy comes from, lost and failed values, failed devices. Owns a piece's valid, fresh, ready[],
 * lost, uncomputed; a device's failed and failure. */
#ifndef PG_CORE_COHERENCE_H
#define PG_CORE_COHERENCE_H

#include "core/objects.h"

/* After a wait for a's writers: PG_OK when a's current value is at loc (every piece of it),
 * else an error saying why not (lost, failed, its device failed meanwhile). */
pg_status pg__coh_value_at(pg__runtime *rt, pg__array *a, int loc);

/* ---- coherence (core/coherence.c) */
/* Where a's current value must come from to be at location loc: *src = -1 when loc holds it
 * already (current after a->ready[loc]), else the valid location with the fastest link to loc.
 * PG_ERROR_DEVICE when the value is lost. */
pg_status pg__coh_source(pg__runtime *rt, const pg__array *a, int loc, int *src);
/* A copy cc of a to dst was issued: dst holds the current value once cc completes. */
void pg__coh_copied(pg__runtime *rt, pg__array *a, int dst, pg__comp *cc);
/* c reads what p made (p may be NULL): a failure of p is one of c. Reserve room first (the
 * only step that can fail), so that the add after issuing work cannot. */
pg_status pg__coh_input_reserve(pg__comp *c);
void pg__coh_input_add(pg__comp *c, pg__comp *p);
/* c writes a at location loc: from now on only loc is valid, current after c. */
void pg__coh_write(pg__runtime *rt, pg__comp *c, pg__array *a, int loc);
/* Before kernel c is accepted to run on dev: PG_ERROR_DEVICE if dev has failed or an input's
 * current value is known to be lost or failed (the message names the array and the cause). */
pg_status pg__coh_check_inputs(pg__runtime *rt, pg__comp *c, int dev);
/* Host access c waited for `producer`, which made a's host copy and failed: the error to
 * return; when c writes a, a's value stays failed. */
pg_status pg__coh_value_failed(pg__runtime *rt, pg__comp *c, pg__array *a, pg__comp *producer);
/* Device dev failed (why: the fault): nothing is placed there any more, its copies stop counting,
 * and arrays whose only current copy was there are lost. Idempotent. */
void pg__coh_device_failed(pg__runtime *rt, int dev, const char *why);
/* Mark failed every device the backend knows has a fault it keeps (CUDA: an illegal address or a
 * trap in some kernel), before any event of it was looked at: nothing is placed there then. */
/* A backend call failed with st, its message set: when st is a device error and a device has
 * failed (or the backend saw a fault there: a fault CUDA keeps fails every later call on that
 * GPU, whatever the call), the message gains which device failed earlier and why (the kernel),
 * or the kernels unfinished there. Changes no state. Returns st. */
pg_status pg__coh_fault_cause(pg__runtime *rt, pg_status st);
void pg__coh_faults_check(pg__runtime *rt);
/* Kernel c will never run (held back, then its scheduling failed with msg): its outputs have no
 * value until written again. */
void pg__coh_outputs_failed(pg__runtime *rt, pg__comp *c, const char *msg);
/* a is being freed: release what coherence keeps for it. */
void pg__coh_array_free(pg__array *a);

#endif

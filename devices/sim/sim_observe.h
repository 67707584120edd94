/* sim_observe.h: what the host has seen finish, for host_time=0.
 *
 * With host time frozen the host is infinitely fast, and it learns that work finished only by
 * waiting for it: event_done says yes for exactly the work that some completed host wait
 * implies finished (the awaited operation, everything before it on its stream, everything those
 * waited for on other streams, transitively). Whether work finished by the clock's time is
 * never asked. This keeps runs identical even though the core polls streams on a real-time
 * heuristic (a GPU stream probed in the last 100 us counts as busy, core/streams.c): a probe it
 * skips and a probe it makes get the same answer.
 *
 * Causality is tracked with vector clocks: each stream has a slot and counts its operations;
 * a stream's clock holds, per slot, the last operation it depends on; an event copies its
 * stream's clock; a stream wait merges the event's clock into the stream's; a completed host
 * wait raises `observed` to the event's clock. Entries the host has already seen are dropped,
 * so clocks stay as small as the unobserved work. Not thread-safe: the backend locks. */
#ifndef PG_SIM_OBSERVE_H
#define PG_SIM_OBSERVE_H

#include <stdint.h>

typedef struct pg__sim_vc_entry {
    int slot;
    uint64_t seq;
} pg__sim_vc_entry;

typedef struct pg__sim_vc {
    pg__sim_vc_entry *e;
    int n, cap;
} pg__sim_vc;

typedef struct pg__sim_observe {
    uint64_t *seq;      /* per slot: operations enqueued so far (never reset: slots are reused) */
    uint64_t *observed; /* per slot: the host has seen operations up to this one finish */
    unsigned char *used;
    int nslots, cap;
} pg__sim_observe;

/* A slot for a new stream; -1 when out of memory. */
int pg__sim_obs_slot_new(pg__sim_observe *o);
void pg__sim_obs_slot_free(pg__sim_observe *o, int slot);
void pg__sim_obs_close(pg__sim_observe *o);

/* One more operation on the stream of `slot` whose clock is vc; its number. -1 out of memory. */
int pg__sim_obs_enqueue(pg__sim_observe *o, int slot, pg__sim_vc *vc, uint64_t *seq);
/* The last operation's number on `slot` (0: none yet). */
uint64_t pg__sim_obs_last(const pg__sim_observe *o, int slot);
/* into = max(into, from), dropping entries already seen. -1 out of memory. */
int pg__sim_vc_merge(const pg__sim_observe *o, pg__sim_vc *into, const pg__sim_vc *from);
void pg__sim_vc_free(pg__sim_vc *vc);
/* A host wait for an event with clock vc completed: everything in vc is seen. */
void pg__sim_obs_saw(pg__sim_observe *o, const pg__sim_vc *vc);
/* Has the host seen operation seq of slot finish? */
int pg__sim_obs_seen(const pg__sim_observe *o, int slot, uint64_t seq);

#endif

/* ranks.h: ranks (core/ranks.c). Owns rt->ranks, an array's owner, rank_stale, rank_version. */
#ifndef PG_CORE_RANKS_H
#define PG_CORE_RANKS_H

#include "core/objects.h"

/* ---- ranks (core/ranks.c): the same program on every rank; each knows, identically, which
 * ranks hold each piece's current value, so sender and receiver of each transfer agree with no
 * message about it. Every hook is a program point of every rank. */
/* Open the ranks if option ranks asks for them (rt->ranks stays NULL single-process, and for
 * one rank); *local_rank and *local_size say where this rank is on its node. */
pg_status pg__ranks_open(pg__runtime *rt, int *local_rank, int *local_size);
/* Wait for this rank's sends (lock held), then close. */
void pg__ranks_close(pg__runtime *rt);
/* Kernel c (bound): decide its rank, move the inputs it lacks there, record what it writes.
 * *here: run it on this rank (else the caller drops it). Errors: several owners written. */
pg_status pg__ranks_launch(pg__runtime *rt, pg__comp *c, int *here);
/* A host access with `access` to piece p (whole: the access covers all of it), before it
 * begins: a read brings p's current value to every rank lacking it, a write makes p's owner
 * the only holder. *local: this rank's own copy takes the write (the owner's); the others skip
 * it. */
pg_status pg__ranks_host_piece(pg__runtime *rt, pg__array *p, pg_access access, int whole,
                               int *local);
/* Transfers are asynchronous (an open host access per transfer, ended by progress): a wait of
 * the runtime with transfers in flight moves them on (core/wait.c pg__wait_host, through
 * rt->hooks); _busy: any in flight; _quiesce: wait until none is (before a cut changes
 * pieces). Lock held. */
pg_status pg__ranks_wait(pg__runtime *rt);
int pg__ranks_busy(const pg__runtime *rt);
pg_status pg__ranks_quiesce(pg__runtime *rt);
/* The GPUs of this rank out of ndev on its node (devices "auto" or "cuda"): their indices for
 * the CUDA backend ("1,3") in buf, or "" for all of them. */
void pg__ranks_gpu_spec(int local_rank, int local_size, int ndev, char *buf, size_t cap);

/* Is p's value current on this rank? */
static inline int pg__ranks_here(const pg__runtime *rt, const pg__array *p) {
    return !(p->rank_stale >> rt->rank & 1);
}

#endif

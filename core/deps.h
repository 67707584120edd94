/* deps.h: dependencies (core/deps.c, over dag/history.h): parents from each piece's history. Owns a
 * piece's hist (the references it holds). */
#ifndef PG_CORE_DEPS_H
#define PG_CORE_DEPS_H

#include "core/objects.h"

/* ---- dependencies (core/deps.c, over dag/history.h) */
/* Parents of a computation using (array, access) pairs, from each array's history. *out is
 * inline_buf when they fit there (may be NULL, 0), else malloc'ed; finished computations are
 * included (they are edges of the DAG) and flagged by pg__comp_done when waited on. */
pg_status pg__dag_parents(pg__runtime *rt, const pg__carg *args, int nargs, pg__comp ***out, int *n,
                          pg__comp **inline_buf, int inline_cap);
/* Record c in each array's history (after c was accepted). */
pg_status pg__dag_commit(pg__runtime *rt, pg__comp *c);
/* Drop from a's history the readers known to be done (they order nothing any more); asks no
 * device. */
void pg__dag_drop_done(pg__runtime *rt, pg__array *a);
void pg__dag_forget(pg__runtime *rt, pg__array *a); /* drop a's history (array freed) */

#endif

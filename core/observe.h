/* observe.h: what core tells the record of recent computations (core/observe.c, over dag/record.h);
 * the DAG snapshot and the trace. Owns rt->records. */
#ifndef PG_CORE_OBSERVE_H
#define PG_CORE_OBSERVE_H

#include "core/objects.h"

/* ---- what core tells the record of recent computations (core/observe.c, over dag/record.h) */

pg_status pg__dag_record(pg__runtime *rt, pg__comp *c, const char *name);
void pg__dag_record_device(pg__runtime *rt, pg__comp *c); /* device/stream chosen */
void pg__dag_record_drop(pg__runtime *rt, pg__comp *c);   /* it will not run after all */
/* An edge found while scheduling (a copy c waits for); PG_ERROR_OUT_OF_MEMORY if it could not be
 * recorded: the caller fails rather than export a DAG without it. */
pg_status pg__dag_record_add_parent(pg__runtime *rt, pg__comp *c, uint64_t parent);
void pg__dag_record_timing(pg__runtime *rt, pg__comp *c);

/* Copy the records into a new snapshot; lock held. */
pg_status pg__dag_snapshot(pg__runtime *rt, pg_dag **out);
/* Snapshot (lock not held on entry) and write the trace: pg_trace_write, and at close. */
pg_status pg__trace_write_file(pg__runtime *rt, const char *path);

#endif

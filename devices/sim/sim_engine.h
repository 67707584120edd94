/* sim_engine.h: the virtual-time core of the simulated devices — in-order queues of operations,
 * shared resources (links, a GPU's compute, a memory), exclusive engines (a GPU's copy engines)
 * and a clock. Nothing here knows devices, memory or kernels; the sim backend (sim_backend.c)
 * maps those onto queues, resources and engines.
 *
 * An operation starts once the operation before it in its queue and each of its dependencies
 * have finished, not before its `not_before` time (nor the clock's value when it was enqueued),
 * and once the engines it names are free: an engine runs one operation at a time, and those
 * waiting for it start in the order they became ready (first come, first served). It then spends
 * `delay` nanoseconds on nothing (a latency), then does `work` units at a rate r (units per ns)
 * that takes use[k] * r of each of its resources' capacity, and never more than `max_rate`.
 * Operations running at once share the resources max-min fairly in their rates (weighted
 * progressive filling: the resource whose capacity left, over the weights of the operations still
 * unfixed on it, is smallest fixes those operations at that rate; repeat); rates are recomputed
 * whenever an operation starts or ends, so an end time is final only once the clock has passed it.
 * The clock moves only when the caller advances it: everything before the clock is final, since
 * later operations start at the clock at the earliest.
 *
 * Not thread-safe: the backend calls it under its lock. Times are nanoseconds (double). */
#ifndef PG_SIM_ENGINE_H
#define PG_SIM_ENGINE_H

#define PG__SIM_OP_RES 20    /* resources one operation may use at once (a route's links, ...) */
#define PG__SIM_OP_ENGINES 2 /* engines one operation may hold */

typedef struct pg__sim_engine pg__sim_engine;
typedef struct pg__sim_queue pg__sim_queue;
typedef struct pg__sim_op pg__sim_op;

/* What an operation does (pg__sim_enqueue). */
typedef struct pg__sim_work {
    double delay; /* ns of latency before its work */
    double work;  /* units of work (0: the delay alone) */
    int nres;     /* resources it uses while it works (0: the delay alone) */
    int res[PG__SIM_OP_RES];
    double use[PG__SIM_OP_RES]; /* capacity of res[k] per unit of rate; <= 0 counts as 1 */
    double max_rate;            /* units per ns at most; <= 0: no limit but the resources' */
    double not_before;          /* clock time before which it does not start */
    int nengines;               /* engines it holds from its start to its end */
    int engine[PG__SIM_OP_ENGINES];
} pg__sim_work;

/* An engine with nres resources of the given capacities (work units per ns, > 0) and nengines
 * exclusive engines. NULL: out of memory. */
pg__sim_engine *pg__sim_engine_new(int nres, const double *capacity, int nengines);
/* Frees the queues still open and every operation, including those the caller still holds
 * references to: close only when nothing will use them. */
void pg__sim_engine_free(pg__sim_engine *e);
double pg__sim_now(const pg__sim_engine *e);

pg__sim_queue *pg__sim_queue_new(pg__sim_engine *e); /* NULL: out of memory */
/* Its unfinished operations are dropped (they never finish). */
void pg__sim_queue_free(pg__sim_engine *e, pg__sim_queue *q);
/* The operation enqueued last on q (borrowed; NULL if none ever was). */
pg__sim_op *pg__sim_queue_last(const pg__sim_queue *q);

/* Enqueue on q the operation w describes (NULL: a marker that does nothing), after
 * deps[0..ndeps) (NULL entries are skipped). Returns a new reference to it, NULL when out of
 * memory. */
pg__sim_op *pg__sim_enqueue(pg__sim_engine *e, pg__sim_queue *q, const pg__sim_work *w,
                            pg__sim_op *const *deps, int ndeps);

void pg__sim_op_ref(pg__sim_op *op);
void pg__sim_op_unref(pg__sim_op *op);
int pg__sim_op_done(const pg__sim_op *op);
/* Start and end (valid once done). */
void pg__sim_op_times(const pg__sim_op *op, double *start, double *end);
/* A failure the backend attaches (a kernel that faulted when it also ran for real): copied. */
void pg__sim_op_fail(pg__sim_op *op, int dev, const char *why);
/* NULL when it did not fail; else why, and *dev the device. */
const char *pg__sim_op_failure(const pg__sim_op *op, int *dev);

/* Move the clock forward to t (no-op if t is not later). */
void pg__sim_advance_to(pg__sim_engine *e, double t);
/* Move the clock forward until op is done or the clock reaches `limit`, whichever is first.
 * 1: op is done. */
int pg__sim_run_until(pg__sim_engine *e, pg__sim_op *op, double limit);

#endif

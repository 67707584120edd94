/* host_stream.h: in-order streams of a CPU device (FIFOs of operations that the device's
 * scheduler runs on a few worker threads) and events (a stream plus the sequence number of its
 * last operation when recorded). Streams and events are reference-counted: either may be freed
 * first. */
#ifndef PG_HOST_STREAM_H
#define PG_HOST_STREAM_H

#include "devices/backend.h"
#include "devices/host/host_pool.h"

#include <pthread.h>
#include <stdatomic.h>

/* A CPU device as its streams see it. Once a kernel faults on it the device has failed, as a
 * GPU whose context died: work on it that has not started yet is not run, and copies to or from
 * it fail, each completing as failed (pg__host_event_failure). */
/* A device's scheduler: its worker threads take the device's streams that have work in turn. */
typedef struct pg__host_sched pg__host_sched;

typedef struct pg__host_dev {
    pg__host_sched *sched; /* runs the device's streams (owned by the backend) */
    pg__host_pool *pool;   /* NULL: the stream workers run every block */
    atomic_int failed;
    pthread_mutex_t mu; /* guards why */
    char why[400];      /* the fault that made it fail */
} pg__host_dev;

/* A scheduler with `workers` worker threads (more only while every worker is busy for 20 ms
 * with work waiting: a kernel that blocks), shared by all the devices of a backend: a stream
 * waits only on events of streams of the same scheduler. Free it after every stream it
 * serves. */
pg_status pg__host_sched_new(int workers, pg__host_sched **out);
void pg__host_sched_free(pg__host_sched *h);

/* A stream of device devs[dev] (devs[dev].sched set); launches run on its pool. Times are
 * CLOCK_MONOTONIC nanoseconds minus epoch_ns. devs outlives the stream. */
pg_status pg__host_stream_new(pg__host_dev *devs, int dev, uint64_t epoch_ns, pg__bstream **out);
/* Let the queued work finish and drop the owner's reference. */
void pg__host_stream_free(pg__bstream *s);

/* Enqueue operations; each copies what it needs, so the caller's arguments may change once the
 * call returns. t (may be NULL) gets the operation's start and end before it counts as done. */
pg_status pg__host_stream_launch(pg__bstream *s, pg__cpu_entry fn, pg_dim3 grid, pg_dim3 block,
                                 size_t shared_mem, const uint64_t *params, int nparams,
                                 pg__timing *t);
/* A launch whose finished blocks are counted per chunk (backend.h launch_chunks); sync NULL:
 * a plain launch. */
pg_status pg__host_stream_launch_chunks(pg__bstream *s, pg__cpu_entry fn, pg_dim3 grid,
                                        pg_dim3 block, size_t shared_mem, const uint64_t *params,
                                        int nparams, uint32_t *sync, uint32_t bpc, pg__timing *t);
/* Only blocks [first, first + count) of the grid (linear index, x fastest), each seeing its
 * own blockIdx and the whole grid's gridDim (backend.h launch_range). */
pg_status pg__host_stream_launch_range(pg__bstream *s, pg__cpu_entry fn, pg_dim3 grid,
                                       pg_dim3 block, size_t shared_mem, const uint64_t *params,
                                       int nparams, uint64_t first, uint64_t count, pg__timing *t);
/* s waits (set aside, not blocking a worker) until flags[0 .. count) are all nonzero. */
pg_status pg__host_stream_wait_flags(pg__bstream *s, const uint32_t *flags, uint32_t count);
pg_status pg__host_stream_copy(pg__bstream *s, int dst_dev, void *dst, int src_dev, const void *src,
                               size_t bytes, pg__timing *t);
/* fn(copy of the arg_bytes at arg) run by a worker as an operation of s; a status other than
 * PG_OK fails the operation (with the worker's pg_last_error()), not the device. */
pg_status pg__host_stream_call(pg__bstream *s, pg_status (*fn)(void *arg), const void *arg,
                               size_t arg_bytes, pg__timing *t);
pg_status pg__host_stream_memset_zero(pg__bstream *s, void *p, size_t bytes);
/* s waits for e before its later operations. */
pg_status pg__host_stream_wait(pg__bstream *s, pg__bevent *e);

pg_status pg__host_event_record(pg__bstream *s, pg__bevent **out);
int pg__host_event_done(pg__bevent *e);
/* Once e is done: 0 when the operation enqueued last before it completed, 1 when it failed (a
 * fault, or not run because a device had failed): msg says why, *dev is the failed device. */
int pg__host_event_failure(pg__bevent *e, int *dev, char *msg, size_t cap);
void pg__host_event_wait(pg__bevent *e);
int pg__host_event_wait_for(pg__bevent *e, uint64_t timeout_ns); /* 1: completed */
void pg__host_event_free(pg__bevent *e);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t pg__host_now_ns(void);

#endif

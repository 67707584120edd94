/* handle.h: handles and the one door (core/handle.c): every public entry resolves its handle, pins
 * its runtime and takes its lock here; nothing else locks a runtime (pg__lock, pg__unlock). */
#ifndef PG_CORE_HANDLE_H
#define PG_CORE_HANDLE_H

#include "core/objects.h"

#include <time.h>

/* ---- handles: user-visible pointers are generation-checked ids, so a freed or doubly freed
 * handle is detected instead of touching freed memory. */
enum { PG__H_RUNTIME = 1, PG__H_ARRAY = 2, PG__H_KERNEL = 3, PG__H_GRAPH = 4 };
uint64_t pg__handle_new(int kind, void *obj, pg__runtime *owner); /* 0 when out of memory */
void *pg__handle_get(uint64_t h, int kind); /* NULL if not a live handle of that kind */
/* Like pg__handle_get for an object that must belong to rt (rt->mu held: then it stays alive
 * while the lock is held); *foreign says it is live but another runtime's. */
void *pg__handle_get_owned(uint64_t h, int kind, pg__runtime *rt, int *foreign);
void pg__handle_release(uint64_t h);
/* This thread records on the runtime owning graph handle `graph` (0: no longer): pg__enter then
 * refuses handles of other runtimes. */
void pg__handle_set_recording(uint64_t graph);

/* The door of every public call on a handle: resolves h, refuses it if its runtime is closing
 * or was inherited through fork(), pins the runtime (a close waits for pinned calls) and locks
 * it. Returns the object and *rt, or NULL with the error set (status PG_ERROR_STATE). */
void *pg__enter(uint64_t h, int kind, const char *fn, pg__runtime **rt);
/* pg__enter for each kind of public handle: the object (its runtime is obj->rt), or NULL. */
pg__array *pg__enter_array(pg_array *h, const char *fn);
pg__kernel *pg__enter_kernel(pg_kernel *h, const char *fn);
pg__runtime *pg__enter_runtime(pg_runtime *h, const char *fn);
/* pg__enter_runtime for a call about one of its devices: NULL (with *st) when h is not a live
 * runtime or device is not one of its devices. */
pg__runtime *pg__enter_device(pg_runtime *h, int device, const char *fn, pg_status *st);
void pg__leave(pg__runtime *rt); /* unlock and unpin */
/* The lock inside a call that entered (it stays pinned): dropped around what must not hold it
 * (a copy to the user's memory, a compile, a wait on a device) and taken again; and by the close,
 * which owns the runtime once every other call has left. Nothing else in core/ touches rt->mu
 * (tests/layers/check_door.py). */
void pg__lock(pg__runtime *rt);
void pg__unlock(pg__runtime *rt);
/* One wait on rt->cond with the lock held (it is dropped while waiting); the _until form
 * returns 1 when the time (CLOCK_REALTIME) passed. */
void pg__cond_wait(pg__runtime *rt);
int pg__cond_wait_until(pg__runtime *rt, const struct timespec *until);
void pg__unpin(pg__runtime *rt); /* unpin only (lock already dropped) */
/* Close: marks the runtime closing (new calls are refused, waits of other threads end) and
 * releases its handle; *forked says the runtime was inherited through fork(). NULL with the
 * error set if h is not a live runtime. Then pg__close_wait_unpinned waits (at most timeout_ns)
 * for the calls in progress to leave. */
pg__runtime *pg__close_begin(uint64_t h, const char *fn, int *forked);
int pg__close_wait_unpinned(pg__runtime *rt, uint64_t timeout_ns); /* 1: timed out */
uint64_t pg__fork_generation(void); /* installs the fork handlers on first use */

#endif

/* backend.h: the operations a device backend (host threads, CUDA) offers the core. A backend
 * knows devices, memory, streams, events, copies and compiled kernels; nothing of DAGs,
 * arrays or policies. All functions may be called from any thread, but the core never calls
 * two of them on the same stream at once. */
#ifndef PG_BACKEND_H
#define PG_BACKEND_H

#include "nvrtc/kernel_src.h"
#include "polygpu.h"

typedef struct pg__backend pg__backend; /* backend-private state */
typedef struct pg__bstream pg__bstream; /* an in-order queue of work on one device */
typedef struct pg__bevent pg__bevent; /* a point in a stream; completes when work before it does */

/* Start/end of one operation, in nanoseconds since the backend was opened. The core owns the
 * struct; the backend fills it (possibly after the call returns, until the event after the
 * operation completes) and the core reads it after calling timing_resolve. */
typedef struct pg__timing {
    uint64_t start_ns, end_ns;
    void *priv[2];  /* backend's own (CUDA timing events) */
    int priv_dev;   /* backend's own (the device those events belong to) */
    int mixed_part; /* devices/mixed.c's own: which backend filled it */
} pg__timing;

/* One operation of a backend graph (graph_build): a kernel launch or a copy, after the nodes
 * listed in deps (indices of earlier nodes). Pointers are borrowed for the call. */
/* PG__BNODE_EMPTY orders its deps before its dependents and does nothing (an elided copy). */
typedef enum { PG__BNODE_LAUNCH, PG__BNODE_COPY, PG__BNODE_EMPTY } pg__bnode_kind;
typedef struct pg__bnode {
    pg__bnode_kind kind;
    int dev; /* the device that runs it (a copy: the device of the stream it was issued on) */
    /* launch */
    void *fn;
    pg_dim3 grid, block;
    size_t shared_mem;
    const uint64_t *params; /* one 8-byte slot per parameter, as for launch */
    int nparams;
    /* copy (dev = PG_HOST for host memory) */
    int dst_dev, src_dev;
    void *dst;
    const void *src;
    size_t bytes;
    const int *deps;
    int ndeps;
} pg__bnode;

typedef struct pg__backend_ops {
    const char *name;              /* "host" or "cuda" */
    void (*close)(pg__backend *b); /* all work finished; frees everything */
    pg_status (*device_info)(pg__backend *b, int dev, pg_device_info *out);

    /* Host memory for array copies (pinned where the backend benefits), zero-filled. */
    pg_status (*host_alloc)(pg__backend *b, size_t bytes, void **out);
    void (*host_free)(pg__backend *b, void *p);
    /* Device memory, ordered on stream `s`. dev_free is called once no work uses p. */
    pg_status (*dev_alloc)(pg__backend *b, int dev, size_t bytes, pg__bstream *s, void **out);
    void (*dev_free)(pg__backend *b, int dev, void *p);
    pg_status (*memset_zero)(pg__backend *b, pg__bstream *s, void *p, size_t bytes);

    pg_status (*stream_new)(pg__backend *b, int dev, pg__bstream **out);
    void (*stream_free)(pg__backend *b, pg__bstream *s); /* only once its work finished */

    /* A new event marking everything enqueued on s so far. */
    pg_status (*event_record)(pg__backend *b, pg__bstream *s, pg__bevent **out);
    int (*event_done)(pg__backend *b, pg__bevent *e); /* 1 finished, 0 not yet; never blocks */
    pg_status (*event_wait)(pg__backend *b, pg__bevent *e); /* block the calling thread */
    /* Block at most timeout_ns: PG_OK when e completed, PG_ERROR_TIMEOUT (no message) if not. */
    pg_status (*event_wait_for)(pg__backend *b, pg__bevent *e, uint64_t timeout_ns);
    /* Once e is done: PG_OK when the operation enqueued last before e was recorded succeeded;
     * PG_ERROR_DEVICE when it failed (a kernel faulted, or the work did not run because a
     * device had failed before it): msg gets a sentence saying why, *failed_dev the device that
     * failed (-1: none). Sets no error message. NULL where a backend cannot tell. */
    pg_status (*event_error)(pg__backend *b, pg__bevent *e, int *failed_dev, char *msg, size_t cap);
    /* 1 when device dev can run nothing more (a fault the device keeps, seen by any call on
     * it): msg gets why. Sets no error message. NULL where faults are known only from events. */
    int (*device_fault)(pg__backend *b, int dev, char *msg, size_t cap);
    pg_status (*stream_wait)(pg__backend *b, pg__bstream *s, pg__bevent *e); /* s waits for e */
    void (*event_free)(pg__backend *b, pg__bevent *e);

    /* Async copy on s. dev = PG_HOST for host memory. t may be NULL. */
    pg_status (*copy)(pg__backend *b, pg__bstream *s, int dst_dev, void *dst, int src_dev,
                      const void *src, size_t bytes, pg__timing *t);

    /* Compile for every device of the backend (errors: PG_ERROR_COMPILE with the log set). */
    pg_status (*kernel_build)(pg__backend *b, const pg__kernel_src *src, void **image);
    /* The launchable function on `dev`, loaded lazily (first call per device). */
    pg_status (*kernel_function)(pg__backend *b, void *image, int dev, void **fn);
    void (*kernel_free)(pg__backend *b, void *image); /* only once no launch uses it */

    /* Launch on s. params: one 8-byte slot per parameter (the value at the slot's start),
     * copied before the call returns. t may be NULL. */
    pg_status (*launch)(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid, pg_dim3 block,
                        size_t shared_mem, const uint64_t *params, int nparams, pg__timing *t);

    /* Launch only blocks [first, first + count) of the grid (linear index, x fastest): each
     * block sees its own blockIdx and the whole grid's gridDim, as in a launch of the whole
     * grid (a launch split over devices, core/split.c). NULL: the backend cannot; launches are
     * then never split. */
    pg_status (*launch_range)(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid, pg_dim3 block,
                              size_t shared_mem, const uint64_t *params, int nparams,
                              uint64_t first, uint64_t count, pg__timing *t);
    /* 1: launch_range needs the kernel built from its wrapper source (nvrtc/chunk_wrap.h, as
     * chunk_epilogue), whose whole launches then go through launch_chunks (GPUs); 0: any
     * kernel (CPU devices run a range of blocks themselves). */
    int range_wrapper;

    /* Chunked outputs (out(chunks=blocks), nvrtc/chunk_wrap.h). chunk_epilogue: 1 when kernels
     * with chunked outputs must be built from their wrapper source (GPUs: the epilogue runs in
     * the kernel), 0 when the backend counts finished blocks itself (CPU devices).
     * launch_chunks (NULL: the backend has none; chunked outputs are then copied after the
     * kernel like any other): launch as `launch` does, and as thread blocks finish, count them
     * per chunk of bpc consecutive blocks (linear index, x fastest) in sync[0 .. nchunks) and
     * set sync[nchunks + c] to 1 once every block of chunk c is done with its writes visible to
     * copies, nchunks = ceil(blocks / bpc); sync (zeroed, on s's device, nchunks * 2 words)
     * NULL: no counting. A launch that fails sets every flag, so no waiter waits forever.
     * wait_flags: s waits, without blocking the host, until flags[0 .. count) are all nonzero
     * (flags of a launch_chunks on s's device). */
    int chunk_epilogue;
    pg_status (*launch_chunks)(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid,
                               pg_dim3 block, size_t shared_mem, const uint64_t *params,
                               int nparams, uint32_t *sync, uint32_t bpc, pg__timing *t);
    pg_status (*wait_flags)(pg__backend *b, pg__bstream *s, const uint32_t *flags, uint32_t count);
    /* Memory for launch_chunks' counters and flags on device dev, usable by every stream at
     * once (CUDA's stream memory operations refuse stream-ordered pool memory), not zeroed;
     * freed once no work uses it. NULL: dev_alloc's memory serves. */
    pg_status (*flags_alloc)(pg__backend *b, int dev, size_t bytes, void **out);
    void (*flags_free)(pg__backend *b, int dev, void *p, size_t bytes);

    /* Run fn(arg) in s's order (a task: a C function instead of a kernel; NULL where the
     * backend cannot, and tasks are refused there). The backend copies the arg_bytes at arg
     * (8-byte aligned) before returning. CPU devices: a worker runs fn on the copy as an
     * operation of s, after the work enqueued before it; a status other than PG_OK fails that
     * operation (events after it report that thread's pg_last_error()) but not the device.
     * GPUs: fn runs now, on the calling thread, with s's device's context current, and
     * enqueues its GPU work on the native stream (stream_handle); its status is returned. t
     * may be NULL. */
    pg_status (*call)(pg__backend *b, pg__bstream *s, pg_status (*fn)(void *arg), const void *arg,
                      size_t arg_bytes, pg__timing *t);

    /* Graphs (NULL where the backend has none: the core re-issues the operations itself). Build
     * an executable graph of n nodes, each running after its deps; launch it on s as one
     * operation (everything in it finishes before work enqueued on s after it starts); free it
     * once no launch of it runs. Nodes may run on several devices. */
    pg_status (*graph_build)(pg__backend *b, const pg__bnode *nodes, int n, void **graph);
    pg_status (*graph_launch)(pg__backend *b, pg__bstream *s, void *graph);
    void (*graph_free)(pg__backend *b, void *graph);

    /* The clock a script's time is measured by, in ns since the backend opened, where it is not
     * the host's real clock (simulated devices: virtual time). NULL: the real clock. */
    uint64_t (*clock_ns)(pg__backend *b);
    /* NULL where the devices compute what they are given; else, when this instance's devices
     * compute no values (simulated GPUs with compute=none: timing only), a sentence saying so
     * and how to compute them (NULL: they do). The core refuses host reads of values a device
     * made there. */
    const char *(*uncomputed)(pg__backend *b);

    /* After the operation's completion: make t->start_ns/end_ns final. */
    void (*timing_resolve)(pg__backend *b, pg__timing *t);
    /* Release what the backend put in t->priv (may be called before completion only at close). */
    void (*timing_release)(pg__backend *b, pg__timing *t);
    int wants_timing_events; /* 1 if timing costs something (CUDA): core asks only when tracing */

    /* Interoperation with other CUDA libraries (NULL where the backend has no such thing):
     * the native handle of s (a CUstream); make s wait for all work enqueued so far on a
     * foreign native stream; which of this backend's devices holds a foreign device address. */
    uint64_t (*stream_handle)(pg__backend *b, pg__bstream *s);
    pg_status (*stream_wait_foreign)(pg__backend *b, pg__bstream *s, uint64_t foreign);
    /* The other way: foreign native stream `waiter` on device dev waits for the work enqueued
     * so far on native stream `done` (waiter 0: the calling thread waits). */
    pg_status (*foreign_wait)(pg__backend *b, int dev, uint64_t waiter, uint64_t done);
    pg_status (*pointer_device)(pg__backend *b, uint64_t ptr, int *dev);

    /* Power, read only (NULL where the backend reads none: the core then uses injected
     * figures): 1 with the figure, 0 when device dev's is unknown. Never set an error; never
     * change a power limit or a clock. CUDA reads NVML (devices/cuda/cu_nvml.h). */
    int (*power_mw)(pg__backend *b, int dev, unsigned *mw);         /* drawn now */
    int (*energy_mj)(pg__backend *b, int dev, uint64_t *mj);        /* a counter that only grows */
    int (*power_default_mw)(pg__backend *b, int dev, unsigned *mw); /* default power limit */

    /* The GPU's own timeline (trace option; NULL where the backend has none: CPU devices time
     * their work themselves, simulated ones live in virtual time). gpu_trace_start: begin
     * recording, after open and before any work (a backend that cannot keeps the reason for
     * gpu_timeline). trace_enter/trace_leave: the work enqueued between them on this thread is
     * computation id's. gpu_timeline: 1 with what was recorded so far (*spans pg__malloc'd, times
     * in ns after epoch_ns on CLOCK_MONOTONIC; idle: no work is in flight) and a note on what is
     * missing in why ("" if nothing), or 0 with the reason there is none in why. Neither sets
     * an error message. */
    void (*gpu_trace_start)(pg__backend *b);
    void (*trace_enter)(pg__backend *b, uint64_t id);
    void (*trace_leave)(pg__backend *b);
    int (*gpu_timeline)(pg__backend *b, uint64_t epoch_ns, int idle, pg_gpu_span **spans, size_t *n,
                        char *why, size_t cap);
} pg__backend_ops;

/* Open a backend. spec is the part after "host:" / "cuda:" (may be ""). enable_timing asks the
 * backend to time operations (trace requested). check_bounds puts CPU device buffers between
 * guard pages (option check=bounds). On success *ndev >= 1. */
pg_status pg__host_backend_open(const char *spec, int enable_timing, int check_bounds,
                                const pg__backend_ops **ops, pg__backend **b, int *ndev);
pg_status pg__cuda_backend_open(const char *spec, int enable_timing, const pg__backend_ops **ops,
                                pg__backend **b, int *ndev);

#endif

/* sim_internal.h: the sim backend's state, shared by its files — sim_backend.c (devices, memory,
 * streams, events, times), sim_work.c (copies, launches and their durations), sim_graph.c
 * (graphs), sim_cpu.c (kernels run for real on a CPU device, compute=cpu). */
#ifndef PG_SIM_INTERNAL_H
#define PG_SIM_INTERNAL_H

#include "devices/sim/sim_backend.h"
#include "devices/sim/sim_engine.h"
#include "devices/sim/sim_mem.h"
#include "devices/sim/sim_observe.h"
#include "devices/sim/sim_profile.h"
#include "devices/sim/sim_spec.h"
#include "devices/sim/sim_topo.h"

#include <pthread.h>
#include <stdint.h>

struct pg__backend {
    pthread_mutex_t mu; /* everything below but the CPU runner's */
    pg__sim_spec spec;
    pg__sim_topo *topo;
    pg__sim_profile *profile; /* NULL: none */
    pg__sim_engine *eng;
    pg__sim_mem mem;
    uint64_t last_exit_ns; /* host clock when a call last left the backend */
    pthread_t last_thread; /* host_clock=cpu: whose CPU clock last_exit_ns is */
    int frozen;            /* host_time=0: completions are seen only through host waits */
    pg__sim_observe obs;   /* what the host has seen finish (frozen) */
    pg__bstream **streams; /* open streams, freed at close if the core did not */
    int nstreams, scap;
    /* compute=cpu: one CPU device of the host backend runs every kernel, one at a time. */
    pthread_mutex_t cpu_mu;
    const pg__backend_ops *cpu;
    pg__backend *cpu_b; /* the host backend's (opaque here) */
    pg__bstream *cpu_s; /* a stream of it */
};

struct pg__bstream {
    pg__sim_queue *q;
    int dev;
    int slot;      /* in b->obs (frozen) */
    pg__sim_vc vc; /* what its last operation depends on (frozen) */
};

struct pg__bevent {
    pg__sim_op *op; /* a reference; NULL: nothing was enqueued before it (done) */
    int slot;       /* its stream's, and the number of the operation it marks (frozen) */
    uint64_t seq;
    pg__sim_vc vc;
};

/* A built kernel: its name (what the profile knows it by), the CPU image when kernels run, and
 * a launchable function per device, made on first use. */
typedef struct pg__sim_kernel pg__sim_kernel;
typedef struct pg__sim_fn {
    pg__sim_kernel *k;
    int dev;
    const pg__sim_model *model; /* the profile's for (kernel, device name); NULL: the default */
    void *cpu_fn;               /* compute=cpu */
} pg__sim_fn;
struct pg__sim_kernel {
    char *name;
    void *cpu_image; /* compute=cpu */
    pg__sim_fn *fn[PG_MAX_DEVICES];
};

/* Resources of the engine: each directed link, each link's duplex limit (both directions), each
 * GPU's compute, each GPU's memory, the host's memory, the host's DMA (copies between host memory
 * and GPUs). */
static inline int pg__sim_res_link(int i) {
    return i;
}
static inline int pg__sim_res_duplex(const pg__backend *b, int i) {
    return b->topo->nlinks + i;
}
static inline int pg__sim_res_compute(const pg__backend *b, int dev) {
    return b->topo->nlinks + b->topo->nduplex + dev;
}
static inline int pg__sim_res_memory(const pg__backend *b, int dev) {
    return b->topo->nlinks + b->topo->nduplex + b->topo->ngpu + dev;
}
static inline int pg__sim_res_host(const pg__backend *b) {
    return b->topo->nlinks + b->topo->nduplex + 2 * b->topo->ngpu;
}
static inline int pg__sim_res_dma(const pg__backend *b) {
    return pg__sim_res_host(b) + 1;
}
static inline int pg__sim_nres(const pg__backend *b) {
    return pg__sim_res_dma(b) + 1;
}
/* Engines: each GPU's copy engine for copies into it, and for copies out of it. */
static inline int pg__sim_engine_in(int dev) {
    return 2 * dev;
}
static inline int pg__sim_engine_out(int dev) {
    return 2 * dev + 1;
}

/* Lock, then move the clock over the host's time since the last call left (scaled by
 * host_time). */
void pg__sim_enter(pg__backend *b);
/* Note when the call leaves (the host's time runs from here), unlock. */
void pg__sim_leave(pg__backend *b);
/* Inside a call: the host spends us microseconds in the driver (the clock moves). */
void pg__sim_host_spends(pg__backend *b, double us);
/* Enqueue an operation on s (sim_engine.h: pg__sim_enqueue; w NULL: a marker), counted for what
 * the host sees. A new reference, or NULL when out of memory. */
pg__sim_op *pg__sim_submit(pg__backend *b, pg__bstream *s, const pg__sim_work *w,
                           pg__sim_op *const *deps, int ndeps);
/* The operation's times go to t (NULL: the reference is dropped). Takes op's reference. */
void pg__sim_timing_attach(pg__timing *t, pg__sim_op *op);

/* sim_work.c: what each operation does in the engine (its duration model) */
/* A copy of `bytes` between two locations (0 the host, 1 + d GPU d) issued on a stream of
 * stream_dev; -1: no such location. */
int pg__sim_copy_work(const pg__backend *b, int stream_dev, int dst_loc, int src_loc, double bytes,
                      pg__sim_work *w);
/* A launch of f with this shape and these parameters. */
void pg__sim_kernel_work(const pg__backend *b, const pg__sim_fn *f, pg_dim3 grid, pg_dim3 block,
                         const uint64_t *params, int nparams, pg__sim_work *w);
pg_status pg__sim_copy(pg__backend *b, pg__bstream *s, int dst_dev, void *dst, int src_dev,
                       const void *src, size_t bytes, pg__timing *t);
pg_status pg__sim_memset_zero(pg__backend *b, pg__bstream *s, void *p, size_t bytes);
pg_status pg__sim_kernel_build(pg__backend *b, const pg__kernel_src *src, void **image);
pg_status pg__sim_kernel_function(pg__backend *b, void *image, int dev, void **fn);
void pg__sim_kernel_free(pg__backend *b, void *image);
pg_status pg__sim_launch(pg__backend *b, pg__bstream *s, void *fn, pg_dim3 grid, pg_dim3 block,
                         size_t shared_mem, const uint64_t *params, int nparams, pg__timing *t);

/* sim_graph.c: backend graphs (a plan's replay as one launch) */
pg_status pg__sim_graph_build(pg__backend *b, const pg__bnode *nodes, int n, void **graph);
pg_status pg__sim_graph_launch(pg__backend *b, pg__bstream *s, void *graph);
void pg__sim_graph_free(pg__backend *b, void *graph);

/* sim_cpu.c: compute=cpu. Open/close the CPU device; build, load and run a kernel on it
 * (blocking until it finished; *failed set with why when the kernel faulted). */
pg_status pg__sim_cpu_open(pg__backend *b);
void pg__sim_cpu_close(pg__backend *b);
pg_status pg__sim_cpu_build(pg__backend *b, const pg__kernel_src *src, void **image);
pg_status pg__sim_cpu_function(pg__backend *b, void *image, void **fn);
void pg__sim_cpu_free(pg__backend *b, void *image);
pg_status pg__sim_cpu_run(pg__backend *b, void *fn, pg_dim3 grid, pg_dim3 block, size_t shared,
                          const uint64_t *params, int nparams, int *failed, char *why, size_t cap);

#endif

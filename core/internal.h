/* internal.h: the core's private types — runtime, arrays, kernels, computations, streams —
 * shared by core/, dag/ and policies/. Bindings never include this. */
#ifndef PG_INTERNAL_H
#define PG_INTERNAL_H

#include "base/buf.h"
#include "base/alloc.h"
#include "base/error.h"
#include "dag/history.h"
#include "dag/record.h"
#include "devices/backend.h"
#include "devices/interconnect.h"
#include "policies/registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define PG__MAX_STREAMS 32 /* streams per device; past that the least recently used is reused */
#define PG__MODEL_KEEP 32  /* samples a performance model keeps per bucket (core/models.c) */
#define PG__MODEL_CLASSES PG_MAX_DEVICES /* device classes: at most one per device */
#define PG__ATTACH_MAX 16 /* keys pg_runtime_attach keeps per runtime (libraries on the API) */

typedef struct pg__runtime pg__runtime;
typedef struct pg__array pg__array;
typedef struct pg__kernel pg__kernel;
typedef struct pg__comp pg__comp;
typedef struct pg__stream pg__stream;
typedef struct pg__graph pg__graph;
typedef struct pg__plan pg__plan;
typedef struct pg__profile_sample pg__profile_sample;
typedef struct pg__model pg__model;
typedef struct pg__power pg__power;
typedef struct pg__ranks pg__ranks;

/* Location index: 0 = host, d + 1 = device d. */
#define PG__LOC(dev) ((dev) + 1)
#define PG__LOC_BIT(loc) (1u << (loc))

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
void pg__leave(pg__runtime *rt); /* unlock and unpin */
void pg__unpin(pg__runtime *rt); /* unpin only (lock already dropped) */
/* Close: marks the runtime closing (new calls are refused, waits of other threads end) and
 * releases its handle; *forked says the runtime was inherited through fork(). NULL with the
 * error set if h is not a live runtime. Then pg__close_wait_unpinned waits (at most timeout_ns)
 * for the calls in progress to leave. */
pg__runtime *pg__close_begin(uint64_t h, const char *fn, int *forked);
int pg__close_wait_unpinned(pg__runtime *rt, uint64_t timeout_ns); /* 1: timed out */
uint64_t pg__fork_generation(void); /* installs the fork handlers on first use */
/* Is rt being closed by another thread? Then this thread's waits end with an error. */
static inline int pg__closing_other(pg__runtime *rt);

/* ---- computations: a kernel launch, a host access, or a copy. Owned by references: the
 * runtime's in-flight and pending lists, arrays' histories, streams' last slots, children. */
/* PG__REPLAY: one replay of a recording through its plan (core/replay.c), standing for the
 * recorded calls in dependencies, coherence and the DAG. */
typedef enum { PG__KERNEL, PG__HOST_READ, PG__HOST_WRITE, PG__COPY, PG__REPLAY } pg__comp_kind;
typedef enum {
    PG__PENDING, /* submitted, held back until a host access it depends on ends */
    PG__OPEN,    /* host access in progress (until unmap) */
    PG__ISSUED,  /* handed to a backend stream; done when its event completes */
    PG__DONE
} pg__comp_state;

typedef struct pg__carg {
    pg__array *array; /* one reference held until the computation is done */
    pg_access access; /* union of the accesses of every parameter bound to this array */
} pg__carg;

/* Launches with at most this many arguments (and parents) use storage inside the computation:
 * no heap allocation per launch on the hot path. */
#define PG__INLINE 8
/* Threads whose holds of one host access are told apart (more: deadlocks go undetected). */
#define PG__HOLDERS 4

typedef struct pg__holder {
    pthread_t thread;
    int holds;
} pg__holder;

/* A launch with chunked outputs (backend launch_chunks): its block counters and flags on its
 * device, and the arrays (pieces) its blocks write chunk by chunk, so that a copy of one can
 * start per chunk while the kernel runs (core/chunks.c). */
#define PG__CHUNK_ARGS 4
typedef struct pg__chunks {
    uint32_t *sync; /* device memory: counters, then flags; freed with the computation */
    /* After sync was zeroed on the producer's stream: a copy's stream waits for it before it
     * waits on flags, or it could see a flag its memory kept from an earlier launch. */
    pg__bevent *zeroed;
    int dev;
    uint32_t nflags, bpc; /* chunks; blocks per chunk */
    uint64_t nblocks;
    int n;
    struct {
        pg__array *a;         /* a piece the computation writes (held by its args) */
        uint64_t block_bytes; /* bytes each block writes; a's first byte is block 0's */
    } arg[PG__CHUNK_ARGS];
} pg__chunks;

struct pg__comp {
    uint64_t id;
    int refs;
    pg__comp_kind kind;
    pg__comp_state state;
    int device;         /* PG_HOST for host accesses */
    pg__stream *stream; /* NULL for host accesses */
    pg__bevent *event;  /* completes with the computation (issued device work) */
    uint64_t seq;       /* position on its stream (pg__stream.issued_seq when issued) */
    pg__timing timing;
    int timed;
    uint64_t pred_ns; /* predicted duration (models), counted in its device's queued_ns */
    uint64_t est_ns;  /* estimated duration (models, else cold), counted in its backlog_ns */
    int stream_taken; /* a child already reuses this computation's stream */
    /* host accesses: the threads holding it open (another thread's access that it covers
     * shares it), with their holds; holders_lost when that is no longer known */
    pg__holder holder[PG__HOLDERS];
    int nholders, holders_lost;
    pg__comp *blocker; /* pending: the open host access it ultimately waits for */
    int nargs;
    pg__carg *args;
    int nparents;
    pg__comp **parents; /* references, dropped once issued */
    /* kernel launch (kept while pending) */
    pg__kernel *kernel;
    pg_dim3 grid, block;
    size_t shared_mem;
    uint32_t fits;   /* bit d: device d's limits allow this launch (placement looks only there) */
    int copy_inputs; /* its input copies go to the device's copy stream, as with the prefetch
                        option (PG_LAUNCH_PREFETCH: the tiled GEMM's tiles fetch in issue order) */
    int nslots;
    uint64_t *slots;
    int8_t *slot_arg; /* per parameter: index into args, or -1 for a scalar */
    /* one part of a launch split over devices (core/split.c): only blocks [block_first,
     * block_first + block_count) run (count 0: the whole grid), and per slot the elements
     * between the argument's first element (what the kernel's pointer points to) and the
     * first element of the pieces bound (NULL: none; owned) */
    uint64_t block_first, block_count;
    uint64_t *slot_shift;
    int part, parts; /* 1..parts: which part (the DAG shows one call with parts); 0 0 not split */
    /* copy */
    int copy_src, copy_dst; /* locations */
    uint64_t copy_bytes;
    pg__chunks *chunks; /* a kernel launched with chunked outputs, else NULL (owned) */
    int recorded;       /* in the DAG and the arrays' histories already */
    pg__comp *next;     /* in-flight or pending list; the runtime's free pool */
    /* Failure: err is NULL while fine, else the message of what failed (this computation's own
     * fault, or a failed computation it read from), owned. Set once, when it is seen done. */
    char *err;
    /* The computations whose results it reads (references, until done): a failure of one is a
     * failure of this one. Set by coherence when inputs are acquired. */
    int ninputs, capinputs;
    pg__comp **inputs;
    pg__comp *fin_next; /* finishing inputs first (comp.c) */
    int visiting;
    /* issued while a plan was captured (core/replay.c): cap_gen is that capture's, cap_node its
     * node there */
    uint64_t cap_gen;
    int cap_node;
    pg__carg args_in[PG__INLINE];
    uint64_t slots_in[PG__INLINE];
    int8_t slot_arg_in[PG__INLINE];
    pg__comp *parents_in[PG__INLINE];
    pg__comp *inputs_in[PG__INLINE];
};

/* Drop c's parent list (the references must already be released). */
void pg__comp_parents_clear(pg__comp *c);
/* c's value is bad: it failed itself or read from a failed computation. msg is copied. */
void pg__comp_fail(pg__comp *c, const char *msg);
/* Failures seen since the last call (faults, not their consequences): PG_ERROR_DEVICE naming
 * the first and how many, or PG_OK. For pg_runtime_sync, as CUDA's synchronize reports an
 * asynchronous error. */
pg_status pg__comp_failures_take(pg__runtime *rt);
/* Free the pool of finished computations (runtime teardown). */
void pg__comp_pool_free(pg__runtime *rt);

/* ---- arrays */
/* What a pg__array is (core/pieces.c). A root owns the elements: one buffer per location. A
 * view (pg_array_slice) is a handle on rows [lo, hi) of a root, with no state of its own. Once
 * a view cuts a root, the root's value state (valid, fresh, ready, hist, lost, host mapping)
 * lives in its pieces: internal arrays over consecutive element ranges between the cuts, whose
 * buffers are the root's at an offset; computations work on pieces (core/exec.c expands the
 * roots and views they are given), so dependencies and coherence are per piece. */
typedef enum { PG__A_ROOT, PG__A_VIEW, PG__A_PIECE } pg__array_kind;

struct pg__array {
    pg__runtime *rt;
    uint64_t handle; /* 0 for pieces */
    uint64_t id;     /* a piece has its root's: messages and the DAG name the user's array */
    int refs; /* the user's handle + each computation using it; a root: + its views and pieces;
               * a piece: + its root's list */
    pg__array_kind kind;
    pg__array *store; /* the root holding the elements (itself for a root) */
    uint64_t off;     /* first element within store */
    /* a root: its pieces in order (NULL: it is its own single piece, `one`), and its users
     * (its handle and its views' handles: the pieces go when the last goes) */
    pg__array **pieces;
    int npieces, cappieces;
    pg__array *one;
    int users;
    int superseded; /* a piece cut in two: no new work uses it */
    int view_ends;  /* a piece: live views with an end at its start (its cut stays while > 0) */
    int merge_due;  /* a root: a cut no live view needs any more (its pieces may merge back) */
    int umaps;      /* a root or view: pg_array_map calls not unmapped yet */
    pg_dtype dtype;
    int ndim;
    int64_t shape[PG_MAX_DIMS];
    uint64_t size, nbytes;
    void *host;                /* host copy, allocated on first use */
    void *dev[PG_MAX_DEVICES]; /* device copies, allocated on first use */
    uint32_t valid;            /* locations holding the current value */
    int fresh;                 /* never written: every location is valid as zeros */
    pg__comp *ready[PG__NLOC]; /* after which the copy at a location is current */
    pg__history hist; /* last writer and readers since (dag/history.h; comps, referenced) */
    /* host mapping */
    pg__comp *map_comp;
    int map_count;
    int live_index; /* position in rt->arrays */
    int uncomputed; /* the current value was made by devices that compute none (rt->uncomputed) */
    char *lost;     /* the current value is gone (its only copy was on a failed device, or its
                     * writer failed or never ran): the error to report, owned; NULL if fine */
    /* device memory (core/evict.c) */
    uint64_t dev_use[PG_MAX_DEVICES];     /* LRU: pg__runtime.use_clock when last used there */
    uint64_t dev_evicted[PG_MAX_DEVICES]; /* number of the load that evicted it there (0 never) */
    uint64_t evict_mark;                  /* == rt->evict_mark: an argument being placed */
    uint32_t dev_pinned; /* bit d: its address on device d was handed out, never evicted */
    /* an argument of the plan being captured (cap_gen is that capture's): its index there */
    uint64_t cap_gen;
    int cap_idx;
    /* ranks (core/ranks.c; all 0 single-process): a root's or piece's owner, the ranks whose
     * copy is not current (none at creation: zeros everywhere), and how many times its value
     * was replaced, for message tags. The same on every rank. */
    int owner;
    uint64_t rank_stale;
    uint32_t rank_version;
    /* a root adopting another library's memory (pg_array_adopt_*): its buffer at location
     * `adopted_loc` is theirs — never freed nor evicted, written back to by
     * pg__array_write_home — and release(release_ctx) runs when the root goes */
    int adopted;
    int adopted_loc;
    void (*release)(void *ctx);
    void *release_ctx;
};

/* ---- kernels */
struct pg__kernel {
    pg__runtime *rt;
    uint64_t handle;
    int refs;
    char *name;
    int nparams;
    pg_param_info *params;
    void *image;              /* backend's compiled kernel */
    void *fn[PG_MAX_DEVICES]; /* loaded lazily per device */
    int live_index;           /* position in rt->kernels */
    /* out(chunks=blocks) parameters: chunked is set when any has one; wrapped when the image
     * is the wrapper kernel (nvrtc/chunk_wrap.h), launched with launch_chunks only */
    int chunked, wrapped;
    /* a task (core/task.c): C functions instead of a compiled image (image NULL) */
    int is_task;
    /* core/split.c: its signature says what each block writes of every array it writes
     * (splittable); split: 1 auto, 0 off, 2 on (pg_kernel_split), -1 the runtime's option */
    int splittable, split;
    /* The last split of a launch of it (core/split.c): the grid's blocks and devices it was
     * for, and its bounds, kept while the devices' throughputs say about the same. */
    uint64_t split_nblocks, split_lo[PG_MAX_DEVICES + 1];
    uint32_t split_devs;
    pg_task_impls impls;
    uint32_t where; /* the devices its where= allows (pg_kernel_new_where); 0: every one */
};

/* ---- streams (per device, in creation order) */
struct pg__stream {
    int device;
    int index; /* per device, from 0 (the copy stream has its own numbering) */
    int copy;  /* the device's copy stream (prefetch), not one of its streams[] */
    pg__bstream *b;
    pg__comp *last;    /* last computation issued on it (reference) */
    uint64_t last_use; /* submission counter when last chosen, for LRU reuse */
    /* Work on a stream completes in order: once the computation issued n-th is seen done,
     * every earlier one is done too, with no event query. */
    uint64_t issued_seq, done_seq;
    uint64_t probed_ns; /* last time pg__stream_busy asked the device */
};

/* A device's launch limits (pg_device_info's), kept together for the launch check. */
typedef struct pg__limits {
    uint32_t threads; /* per block */
    pg_dim3 block, grid;
    uint64_t shared; /* bytes of dynamic shared memory per block */
} pg__limits;

typedef struct pg__device {
    pg_device_info info;
    pg__limits limits; /* from info, at runtime creation (core/limits.c) */
    const struct pg__backend_entry *entry; /* its backend's registration (devices/registry.h) */
    int nstreams;
    pg__stream *streams[PG__MAX_STREAMS];
    pg__stream *copy_stream; /* prefetch: input copies go here */
    uint64_t inflight;
    uint64_t queued_ns;  /* predicted durations of its issued, unfinished computations */
    uint64_t backlog_ns; /* estimated durations of the same (pg__models_estimate_ns) */
    int failed;          /* a kernel faulted here: nothing is placed here any more */
    char *failure;       /* why, owned (may be NULL when out of memory) */
    /* memory pressure (core/evict.c); the bytes held are rt->stats.device_bytes[d] */
    uint64_t loads;   /* placements that allocated buffers here while a limit was in force */
    int pingpong;     /* consecutive loads that undid the previous one (see evict.c) */
    uint64_t last_ws; /* bytes of the arguments of the previous load */
} pg__device;

typedef enum { PG__NEW_FIFO, PG__NEW_ALWAYS } pg__new_stream_policy;
typedef enum {
    PG__PARENT_SAME,
    PG__PARENT_DISJOINT,
    PG__PARENT_MULTIGPU_DISJOINT,
    PG__PARENT_MULTIGPU_EARLY_DISJOINT
} pg__parent_stream_policy;

typedef struct pg__options_resolved {
    char devices[128];
    char policy[64];
    pg__new_stream_policy stream_policy;
    pg__parent_stream_policy parent_stream_policy;
    int sync;
    int prefetch;
    char interconnect[1024];
    double exploration_threshold;
    int log; /* 0 off, 1 info, 2 debug */
    char trace[1024];
    char profile[1024]; /* record kernel durations to this timing profile ("": no) */
    char cache_dir[1024];
    int check_bounds;             /* check=bounds: guard pages around CPU device buffers */
    int elide_copies;             /* a limit study: copies between locations are skipped */
    int models;                   /* performance models learn, persist and predict */
    uint64_t chunk_bytes;         /* chunked outputs: bytes per copy (0: per link) */
    uint64_t device_memory_limit; /* 0: none */
    char power_watts[512];        /* injected watts per device (core/power.c); "": none */
    double power_limit;           /* watts per node the chosen devices may draw; 0: none */
    enum { PG__RANKS_AUTO, PG__RANKS_MPI, PG__RANKS_OFF } ranks; /* option ranks */
    int split; /* option split: 1 auto, 0 off */
    int share; /* option share: 1 node, 0 off (core/share.c) */
} pg__options_resolved;

struct pg__runtime {
    uint64_t handle;
    /* lifetime (core/handle.c): pins and fork_gen are guarded by the handle table's lock */
    _Atomic int closing; /* pg_runtime_free has begun: new calls are refused */
    pthread_t closer;    /* the thread closing it, valid once closing is set */
    int pins;            /* public calls in progress */
    uint64_t fork_gen;   /* pg__fork_generation() when created */
    pthread_mutex_t mu;
    pthread_cond_t cond; /* host accesses ended, pending computations issued */
    pg__options_resolved opt;
    const pg__backend_ops *ops;
    pg__backend *b;
    /* the backend's devices compute no values (backend.h uncomputed): why; NULL they do */
    const char *uncomputed;
    int ndev;
    pg__device dev[PG_MAX_DEVICES];
    pg__limits limits_min; /* the smallest of every device's limits: a launch within fits all */
    pg__interconnect ic;
    double policy_bw[PG__NLOC * PG__NLOC]; /* ic equalized for the policies (core/links.c) */
    pg__policy policy;
    uint64_t next_comp_id, next_array_id, submissions;
    uint64_t use_clock;  /* LRU stamps of device buffers (core/evict.c) */
    uint64_t evict_mark; /* marks the arguments of the computation being placed */
    uint64_t submits;
    pg__comp *comp_pool; /* finished computations kept for reuse */
    int comp_pool_n;     /* kernel submissions, for the periodic sweep */
    pg__comp *inflight_head, *inflight_tail;
    pg__comp *pending_head, *pending_tail;
    uint64_t failures;   /* faults seen since the last pg_runtime_sync */
    char *first_failure; /* the first of them, owned */
    pg_stats stats;
    pg__record *records; /* ring of PG_DAG_HISTORY (dag/record.h) */
    int timing;          /* ask the backend for timing */
    int timing_all;      /* time every kernel and copy (trace, profile; CPU devices: free) */
    uint64_t epoch_ns;   /* pg__now_ns() when the backend opened: host-side trace times */
    /* live handles, freed by pg_runtime_free */
    pg__array **arrays;
    int narrays, caparrays;
    pg__kernel **kernels;
    int nkernels, capkernels;
    pg__graph **graphs;
    int ngraphs, capgraphs;
    /* the recording in progress (pg_graph_begin .. pg_graph_end), NULL when none, and the
     * thread recording it */
    pg__graph *rec;
    pthread_t rec_thread;
    /* the plan being captured from a replay (core/replay.c), NULL when none */
    pg__plan *cap;
    uint64_t cap_gens;
    /* kernel durations for the timing profile (core/profile.c; option profile) */
    pg__profile_sample *prof;
    int nprof, capprof;
    /* performance models (core/models.c; option models) */
    pg__model *models;
    int nmodels, capmodels;
    int *model_index; /* open addressing over models, -1 empty */
    size_t model_index_cap;
    char model_class[PG__MODEL_CLASSES][128]; /* device classes: the devices' names */
    int nmodel_class;
    int dev_model_class[PG_MAX_DEVICES];
    /* state libraries keep per runtime (pg_runtime_attach: linalg/'s tile tasks) */
    struct {
        const void *key;
        void *value;
        void (*release)(void *value);
    } attached[PG__ATTACH_MAX];
    int nattached;
    /* power and energy per device (core/power.c), owned */
    pg__power *power;
    /* the ranks of a distributed run (core/ranks.c); NULL single-process, so that the launch
     * path pays one predictable branch for them */
    pg__ranks *ranks;
    struct pg__node *node; /* the node this runtime shares (core/share.c); NULL: alone */
    int rank, nranks; /* 0 and 1 single-process */
    /* check=bounds: view parameters' own buffers, freed once their launch is done (bounds.c) */
    struct pg__staging *staging;
};

static inline int pg__closing_other(pg__runtime *rt) {
    return atomic_load(&rt->closing) && !pthread_equal(rt->closer, pthread_self());
}

/* ---- recordings (core/graph.c) */
/* Whether c (kernel launch, bound, references taken) is taken by rt's recording: then *st is
 * PG_OK and the recording owns c's reference, or an error (another thread records). 0: not
 * recording, launch c now. */
int pg__graph_take(pg__runtime *rt, pg__comp *c, pg_status *st);
/* PG_OK unless the calling thread is recording on rt (host access `fn` refused), or on another
 * runtime (any call refused); `a` (may be NULL) is the array the call is about. */
pg_status pg__graph_refuse(pg__runtime *rt, const char *fn, const pg__array *a);
/* Whether rt's recording in progress uses a (pg_array_free refuses then). */
int pg__graph_uses(const pg__runtime *rt, const pg__array *a);
/* pg_runtime_free: frees rt's graphs and any recording in progress (rt->mu held). */
void pg__graph_free_all(pg__runtime *rt);
/* An abandoned close: the graphs' handles stop working, their memory goes with the process. */
void pg__graph_forget_handles(pg__runtime *rt);
/* A new computation that launches what rec (a recorded launch) launched: same kernel,
 * dimensions, arrays and scalar slots (core/kernel.c). */
pg__comp *pg__kernel_comp_clone(pg__runtime *rt, const pg__comp *rec);

/* ---- plans (core/replay.c): what one replay of a recording issued — backend launches and
 * copies with the edges between them, the arrays' coherence before and after — kept so that
 * later replays issue it again as one backend graph (or the same operations re-issued)
 * without placing, binding or analysing each call. */
/* Start capturing the replay of `calls` (rt->cap); NULL (nothing captured) when out of memory. */
pg__plan *pg__plan_capture_begin(pg__runtime *rt, pg__comp *const *calls, int ncalls);
/* The replay ended (ok: every call was issued, none held back): the plan, ready to replay, or
 * NULL when it cannot be one (freed then). Ends the capture either way. */
pg__plan *pg__plan_capture_end(pg__runtime *rt, pg__plan *p, int ok);
/* Capture hooks, called where core/issue.c and core/exec.c hand work to a stream. */
void pg__plan_note_launch(pg__runtime *rt, pg__comp *c, pg__stream *s, void *fn);
void pg__plan_note_copy(pg__runtime *rt, pg__comp *c, pg__stream *s, void *dst, const void *src);
void pg__plan_note_read(pg__runtime *rt, pg__array *a, int loc); /* a's value at loc was read */
void pg__plan_note_broken(pg__runtime *rt); /* not a plan: the lock was dropped meanwhile */
/* Replay p as one computation named `name`, first copying values to where the plan reads them
 * if they are not there: *used = 0 (and nothing replayed) when p cannot replay now (a buffer
 * moved meanwhile, or a host access holds it back); the caller then replays eagerly. */
pg_status pg__plan_replay(pg__runtime *rt, pg__plan *p, const char *name, int *used);
/* Whether p may replay with the arrays as they are: 2 as eager calls would (every value it
 * reads is where it reads it, and it copies none to where it already is), 1 only after
 * copies or with copies eager calls would not make, 0 not at all (buffers moved, a device
 * failed, a value lost). */
int pg__plan_fit(pg__runtime *rt, const pg__plan *p);
void pg__plan_free(pg__runtime *rt, pg__plan *p); /* waits for its last replay's work */

/* ---- timing profile (core/profile.c): kernel c finished, timed: keep its duration; at close,
 * append what was kept to the profile file (error: the file could not be written). */
void pg__profile_note(pg__runtime *rt, const pg__comp *c);
pg_status pg__profile_write(pg__runtime *rt);

/* ---- performance models (core/models.c): durations per kernel, device class and size bucket */
uint64_t pg__model_bucket(uint64_t bytes);         /* bytes rounded down to a power of two (0: 0) */
uint64_t pg__models_args_bytes(const pg__comp *c); /* the bytes a model is keyed on */
/* A measured duration of `kernel` on device dev over `bytes` of arguments (warm-up and
 * spike rules apply); c finished, timed: its duration. */
void pg__models_sample(pg__runtime *rt, const char *kernel, int dev, uint64_t bytes, uint64_t ns);
void pg__models_note(pg__runtime *rt, const pg__comp *c);
/* The predicted duration in ns, -1 when unknown (fewer than 3 samples, or models off). */
/* Whether c, a kernel or task about to issue on dev, is timed for the models (always until its
 * model is full, then one launch in 16). */
int pg__models_want_timing(pg__runtime *rt, const pg__comp *c, int dev);
int64_t pg__models_predict(pg__runtime *rt, const char *kernel, int dev, uint64_t bytes);
/* c's duration on dev: the model's prediction when calibrated, else a cold estimate from its
 * threads (a task: its argument bytes) and the device's throughput class. Never 0. */
uint64_t pg__models_estimate_ns(pg__runtime *rt, const pg__comp *c, int dev);
/* The device's throughput class measured at start-up (simple threads per second), for weighing
 * devices before the models know a kernel. */
double pg__models_cold_rate(const pg__runtime *rt, int dev);
/* The devices' queued work: c's predicted and estimated durations are added to its device's
 * queued_ns and backlog_ns when it is issued there, and removed when it is seen finished. */
void pg__models_queue_add(pg__runtime *rt, pg__comp *c, int dev);
void pg__models_queue_done(pg__runtime *rt, pg__comp *c);
/* Each device's speed from the models: for every kernel and size bucket predicted on every
 * device, 1 / its predicted duration; speed[d] is their geometric mean. Returns how many such
 * (kernel, bucket) pairs there are: 0 (speeds untouched) while the models cannot compare all
 * devices. */
int pg__models_speed(pg__runtime *rt, double speed[PG_MAX_DEVICES]);
void pg__models_load(pg__runtime *rt);      /* at creation: device classes, then the files */
pg_status pg__models_save(pg__runtime *rt); /* at close: the files (atomic) */
void pg__models_free(pg__runtime *rt);

/* ---- options (core/options.c) */
pg_status pg__options_resolve(const pg_options *o, pg__options_resolved *out);
/* A copy of s kept for the life of the process, the same one for equal strings (core/intern.c);
 * NULL when out of memory. */
const char *pg__intern(const char *s);

/* ---- computations (core/comp.c) */
pg__comp *pg__comp_new(pg__runtime *rt, pg__comp_kind kind);
void pg__comp_ref(pg__comp *c);
void pg__comp_unref(pg__runtime *rt, pg__comp *c);
/* Done: finished and observed (marks it DONE, resolves timing). Never blocks. */
/* Done as far as the runtime has seen, with no device query (may say 0 for finished work):
 * for heuristics, where asking the device (about a microsecond on a GPU) costs more than a
 * stale answer. */
int pg__comp_known_done(const pg__comp *c);
int pg__comp_done(pg__runtime *rt, pg__comp *c);
void pg__comp_set(pg__runtime *rt, pg__comp **slot, pg__comp *c); /* ref c, unref old */
/* Append c to a list linked through c->next (the in-flight or pending list), referenced. */
void pg__comp_list_push(pg__comp **head, pg__comp **tail, pg__comp *c);
void pg__comp_finish_host(pg__runtime *rt, pg__comp *c); /* a host access ended */

/* ---- arrays (core/array.c) */
void pg__array_ref(pg__array *a);
void pg__array_unref(pg__array *a);
/* rt->arrays, the live handles (a root or a view each) */
pg_status pg__array_add_live(pg__runtime *rt, pg__array *a);
/* pg_array_new's checks of dtype and shape (errors name fn), and a new root with a handle,
 * zeros everywhere (rt->mu held). */
pg_status pg__array_shape_check(const char *fn, pg_dtype dtype, int ndim, const int64_t *shape,
                                uint64_t *size, uint64_t *nbytes);
pg_status pg__array_new_root(pg__runtime *rt, pg_dtype dtype, int ndim, const int64_t *shape,
                             uint64_t size, uint64_t nbytes, pg__array **out);
void pg__array_remove_live(pg__runtime *rt, pg__array *a);
/* The buffer at a location, allocated on first use (zeroed if the array is fresh); a piece's or
 * view's is its root's at its offset. */
pg_status pg__array_buffer(pg__array *a, int loc, pg__stream *s, void **out);
/* The buffer at loc if there is one (a piece's or view's: its root's at its offset), or NULL. */
static inline void *pg__array_buf(const pg__array *a, int loc) {
    const pg__array *r = a->store;
    char *b = loc == 0 ? r->host : r->dev[loc - 1];
    return b && a->off ? b + a->off * pg_dtype_size(a->dtype) : b;
}

/* ---- pieces (core/pieces.c) */
/* The pieces holding the state of a (a root or a view): a span of the root's pieces, or the
 * root itself while it was never cut. */
void pg__array_parts(pg__array *a, pg__array ***parts, int *n);
/* The piece of root r holding element e (r cut or not). */
pg__array *pg__array_piece_at(pg__array *r, uint64_t e);
/* A user handle of root or view a is gone: its root loses a user; the last one lets the pieces
 * go (each goes when no computation uses it). */
void pg__array_user_gone(pg__array *a);
/* View v is gone (its last reference): its ends no longer keep its root's cuts, so the pieces
 * on either side may merge back at the next launch on the root (pg__comp_expand_pieces). */
void pg__pieces_view_gone(pg__array *v);
/* The kernel's arguments (roots and views, deduplicated) replaced by the pieces they cover,
 * accesses merged per piece, slot map updated: at submission, so that a recording made before
 * a cut replays over the pieces of then. */
pg_status pg__comp_expand_pieces(pg__runtime *rt, pg__comp *c);
/* Make element `at` of root r the start of a piece (a no-op at 0, at the end, or where a cut
 * is already); refused while the piece there is mapped or held back behind a mapping. */
pg_status pg__array_cut(pg__runtime *rt, pg__array *r, uint64_t at);

/* ---- one launch over several devices (core/split.c) */
/* At kernel creation: whether its signature lets a launch be split (k->splittable). */
void pg__split_kernel_init(pg__kernel *k);
/* Submit bound launch c as one part per device when its kernel and the runtime allow it
 * (*done 1: submitted so, c itself is not); else *done 0 and the caller submits c. */
pg_status pg__split_submit(pg__runtime *rt, pg__comp *c, int *done);

/* ---- check=bounds on CPU devices (core/bounds.c) */
typedef struct pg__staging pg__staging;
/* Launch c on s (buffers per argument in buf), each view parameter in a guarded buffer of its
 * own (its rows copied in, and back when it may be written): pg__comp_expand_pieces left each
 * view parameter's elements in its slot (0: not a view). */
pg_status pg__bounds_launch(pg__runtime *rt, pg__comp *c, pg__stream *s, void *fn, void **buf);
/* Free what the staged launches kept (runtime teardown). */
void pg__bounds_free(pg__runtime *rt);

/* ---- device memory (core/evict.c): the bytes of device buffers per device, kept under
 * device_memory_limit (and under what the device itself can give) by evicting least recently
 * used copies that no unfinished work uses: clean ones are freed, dirty ones (the only current
 * value) are copied to the host first. */
/* Allocate the buffers c lacks on dev (zeroed on s for never-written arrays), making room
 * first. Needing to wait for work to finish (a write-back, a computation using a buffer), it
 * waits with the lock dropped and sets *again: the world changed, so the caller places c anew
 * (its parents, device and stream may differ). Fails with PG_ERROR_OUT_OF_MEMORY when c's own
 * arguments exceed the limit, when nothing can be evicted, or when the device ping-pongs. */
pg_status pg__evict_reserve(pg__runtime *rt, pg__comp *c, int dev, pg__stream *s, int *again);
/* A buffer of a's size on dev for a copy or a device access (a itself has none there):
 * evicts only what can go without waiting. */
pg_status pg__evict_alloc(pg__runtime *rt, pg__array *a, int dev, pg__stream *s, void **out);
/* a's buffer on dev is gone (array freed): stop counting it. */
void pg__evict_forget(pg__runtime *rt, pg__array *a, int dev);

/* ---- kernels (core/kernel.c) */
void pg__kernel_unref(pg__kernel *k);
/* Give k (built, refs 1) a handle and list it in rt->kernels; the lock is not held on entry.
 * On failure k is left to the caller. */
pg_status pg__kernel_register(pg__runtime *rt, pg__kernel *k, pg_kernel **out);

/* ---- tasks (core/task.c): kernels that are C functions. A task's computation keeps, after its
 * nslots parameter slots, one more slot per parameter: the array's element count (0: scalar). */
/* The devices task k may run on (a kind with an implementation); none: PG_ERROR_ARGUMENT. */
pg_status pg__task_fits(const pg__runtime *rt, const pg__kernel *k, uint32_t *mask);
/* Enqueue task computation c (slots filled with s's buffers) on s through the backend's call. */
pg_status pg__task_issue(pg__runtime *rt, pg__comp *c, pg__stream *s);

/* ---- launch limits (core/limits.c) */
/* Take each device's limits from its info (once the infos are there). */
void pg__limits_init(pg__runtime *rt);
/* *mask gets the devices whose limits a launch of kernel `kernel` fits; none: PG_ERROR_ARGUMENT
 * naming the launch and each device's limit. A few comparisons when every device fits it. */
pg_status pg__limits_fit(const pg__runtime *rt, const char *kernel, pg_dim3 grid, pg_dim3 block,
                         size_t shared, uint32_t *mask);

/* ---- streams (core/streams.c) */
pg_status pg__stream_new(pg__runtime *rt, int dev, pg__stream **out);
/* dev's copy stream (prefetch: input copies go there), created on first use. */
pg_status pg__stream_copy(pg__runtime *rt, int dev, pg__stream **out);
int pg__stream_busy(pg__runtime *rt, pg__stream *s);
/* pg__stream_busy in a sweep over several streams: *now (0 at first) is the clock, read at most
 * once for the sweep. */
int pg__stream_busy_at(pg__runtime *rt, pg__stream *s, uint64_t *now);
/* The first stream of dev with no unfinished work, or NULL. */
pg__stream *pg__stream_idle(pg__runtime *rt, int dev);
/* A new stream on dev, or past PG__MAX_STREAMS the least recently used one. */
pg_status pg__stream_get_new(pg__runtime *rt, int dev, pg__stream **out);
void pg__streams_free(pg__runtime *rt);

/* ---- execution (core/exec.c) */
/* Submit a computation whose args are set; schedules it now or holds it back. Lock held. */
pg_status pg__exec_submit(pg__runtime *rt, pg__comp *c);
/* Begin a host access to a: waits (unlocked) until the host copy may be used that way. Lock
 * held on entry and exit. Accesses nest (a->map_count); each needs a host_end. */
/* Device access for another CUDA library (see pg_array_device_pointer); src != 0 also copies
 * `bytes` from that device address after the foreign stream's work. */
pg_status pg__exec_device_access(pg__runtime *rt, pg__array *a, int dev, pg_access access,
                                 uint64_t src, size_t bytes, uint64_t foreign, void **ptr,
                                 uint64_t *stream);
pg_status pg__exec_host_begin(pg__runtime *rt, pg__array *a, pg_access access);
pg_status pg__exec_host_end(pg__runtime *rt, pg__array *a);
/* Wait until c is finished; lock held on entry and exit. */
pg_status pg__exec_wait(pg__runtime *rt, pg__comp *c);
pg_status pg__exec_sync(pg__runtime *rt);
void pg__exec_sweep(pg__runtime *rt, int max);
/* Issue the held-back work that an open access ended by the core (a rank's transfer) let go. */
pg_status pg__exec_release(pg__runtime *rt);

/* ---- issue (core/issue.c): the one path from a placed computation to a stream */
/* The backend operation(s) of computation c on stream s (a launch, a copy...). */
typedef pg_status (*pg__issue_work)(pg__runtime *rt, pg__comp *c, pg__stream *s, void *ctx);
/* Issue c (accepted, parents set) on s: order it after its parents, bring its inputs (args
 * with PG_ACCESS_IN; copies have none) to s's device, run work, record the completion event;
 * then c is issued, last on s, in flight, and its parents dropped. On failure nothing is
 * marked issued and the caller still owns c; devices found faulted are marked failed. */
pg_status pg__issue(pg__runtime *rt, pg__comp *c, pg__stream *s, pg__issue_work work, void *ctx);
/* Make a's current value usable by c on s's device: s waits for the work that made that copy
 * current, or for a copy issued now (on the device's copy stream with prefetch). Buffers must
 * exist (pg__array_buffer). */
pg_status pg__issue_input(pg__runtime *rt, pg__comp *c, pg__array *a, pg__stream *s);
/* Bring the host copy up to date for host access c; *wait gets the computation to wait for
 * (a reference, or NULL). */
pg_status pg__issue_to_host(pg__runtime *rt, pg__comp *c, pg__array *a, pg__comp **wait);
/* Start a copy of a's current value to location loc (0 host, d+1 device d) unless loc holds
 * it already; returns without waiting. The copy counts as a reader of a. */
pg_status pg__issue_prefetch(pg__runtime *rt, pg__array *a, int loc);
/* After a wait for a's writers: PG_OK when a's current value is at loc (every piece of it),
 * else an error saying why not (lost, failed, its device failed meanwhile). */
pg_status pg__coh_value_at(pg__runtime *rt, pg__array *a, int loc);
/* Adopted roots (pg_array_adopt_*): copy each piece whose current value is not in the adopted
 * memory back into it (core/array.c); _all for every live root of rt (sync, close). */
pg_status pg__array_write_home(pg__runtime *rt, pg__array *root);
pg_status pg__array_write_home_all(pg__runtime *rt);
/* Issue c (args set) on s, both decided already (a plan's replay, core/replay.c): parents from
 * the arrays' histories and `extra` (what it reads that they may not name), accepted into the
 * DAG under `name`, then pg__issue with work. *blocked: an open host access holds it back;
 * nothing was done, and the caller goes the eager way, which can wait for it. */
pg_status pg__exec_issue_on(pg__runtime *rt, pg__comp *c, pg__stream *s, const char *name,
                            pg__comp *const *extra, int nextra, pg__issue_work work, void *ctx,
                            int *blocked);

/* ---- waits that end (core/wait.c): lock held on entry and exit, dropped while waiting. Each
 * ends with PG_ERROR_TIMEOUT past the thread's deadline and PG_ERROR_INTERRUPTED when the
 * binding's interrupt check says so; the time counts as host wait. */
pg_status pg__wait_event(pg__runtime *rt, pg__bevent *e);
pg_status pg__wait_cond(pg__runtime *rt); /* one wait on rt->cond: callers loop */
/* Wait until poll says done (or fails), asking it again and again with the lock dropped: for
 * what no event or condition signals (a message from another rank). */
pg_status pg__wait_poll(pg__runtime *rt, pg_status (*poll)(void *ctx, int *done), void *ctx);
/* Give this thread's waits a deadline timeout_ns from now (the earlier one wins when nested);
 * returns what pg__wait_deadline_pop restores. */
uint64_t pg__wait_deadline_push(uint64_t timeout_ns);
void pg__wait_deadline_pop(uint64_t old);

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
/* ---- what core tells the record of recent computations (core/observe.c, over dag/record.h) */
/* ---- chunked outputs (core/chunks.c) */
/* Launch c (a kernel with chunked parameters, fn on s's device) with launch_chunks: with block
 * counting and c->chunks set when a copy could use it, else without. */
pg_status pg__chunks_launch(pg__runtime *rt, pg__comp *c, pg__stream *s, void *fn);
/* Frees c->chunks (its flags on the device): once no copy can wait on them. */
void pg__chunks_free(pg__runtime *rt, pg__comp *c);
/* 1 when a copy of a from src may go chunk by chunk while its producer p still runs; then
 * *block_bytes is the bytes each of p's blocks writes, from a's first byte. */
int pg__chunks_copyable(pg__runtime *rt, const pg__comp *p, const pg__array *a, int src,
                        uint64_t *block_bytes);
/* Bytes a chunked copy of `bytes` over src -> dst moves at once (option chunk_bytes, else from
 * the link's bandwidth and latency). */
uint64_t pg__chunks_copy_bytes(pg__runtime *rt, int src, int dst, uint64_t bytes);

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

/* ---- placement (core/place.c) */
/* Choose a device and a stream for c (the Figure 5 flow); reads state only. *stream = NULL
 * asks the caller for a new stream on *device. Marks nothing: the caller sets stream_taken. */
pg_status pg__policy_place(pg__runtime *rt, pg__comp *c, int *device, pg__stream **stream,
                           pg__comp **stream_parent);

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
/* Is p's value current on this rank? */
static inline int pg__ranks_here(const pg__runtime *rt, const pg__array *p);
/* Transfers are asynchronous (an open host access per transfer, ended by progress): a wait of
 * the runtime with transfers in flight moves them on (core/exec.c wait_host); _busy: any in
 * flight; _quiesce: wait until none is (before a cut changes pieces). Lock held. */
pg_status pg__ranks_wait(pg__runtime *rt);
int pg__ranks_busy(const pg__runtime *rt);
pg_status pg__ranks_quiesce(pg__runtime *rt);
/* The GPUs of this rank out of ndev on its node (devices "auto" or "cuda"): their indices for
 * the CUDA backend ("1,3") in buf, or "" for all of them. */
void pg__ranks_gpu_spec(int local_rank, int local_size, int ndev, char *buf, size_t cap);

/* ---- logging */
void pg__log(pg__runtime *rt, int level, const char *fmt, ...) PG__PRINTF(3, 4);

uint64_t pg__now_ns(void);

/* ---- links.c: the interconnect matrix at start (file, cached measurement, quick measurement,
 * or defaults). Called once the backend and device infos are there. */
pg_status pg__links_init(pg__runtime *rt);

static inline int pg__ranks_here(const pg__runtime *rt, const pg__array *p) {
    return !(p->rank_stale >> rt->rank & 1);
}

#endif

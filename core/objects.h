/* objects.h: the engine's shared objects — runtime, devices, streams, computations, arrays, kernels
 * — as plain structs: every module of core/ reads them; which module writes which fields is said at
 * each field (a field names its module). Functions are in the modules' own headers. */
#ifndef PG_CORE_OBJECTS_H
#define PG_CORE_OBJECTS_H

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

/* What a computation tells the modules above it: comp.c holds references to its arguments and
 * its kernel and learns when work finished, but calls no module above it; core/engine.c sets
 * these at runtime creation (pg__engine_init). */
typedef struct pg__comp_hooks {
    void (*array_unref)(pg__array *a);                 /* an argument's reference (array.c) */
    void (*kernel_unref)(pg__kernel *k);               /* the kernel's (kernel.c) */
    void (*chunks_free)(pg__runtime *rt, pg__comp *c); /* last reference: its flags (chunks.c) */
    /* its own work faulted device dev: nothing is placed there any more (coherence.c) */
    void (*device_failed)(pg__runtime *rt, int dev, const char *why);
    /* done, its timing resolved if timed: the record, the profile, the models, power */
    void (*finished)(pg__runtime *rt, pg__comp *c);
    /* then, no longer counted in its device's inflight: its estimate leaves the device's
     * queue (models.c) and the node sees the device's load (share.c) */
    void (*left_device)(pg__runtime *rt, pg__comp *c);
    /* ranks (core/ranks.c), called only while rt->ranks is set: a wait of the runtime moves
     * the transfers in flight on (core/wait.c); whether any is in flight (core/exec.c's sync,
     * core/pieces.c's cut); wait until none is (before a cut changes pieces) */
    pg_status (*ranks_wait)(pg__runtime *rt);
    int (*ranks_busy)(const pg__runtime *rt);
    pg_status (*ranks_quiesce)(pg__runtime *rt);
} pg__comp_hooks;

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

/* A reference to an array (rt->mu held): here with the struct, not in core/array.h, since the
 * computations that hold their arguments (core/comp.c) sit below the array module; the last
 * reference goes through pg__array_unref (core/array.c), which frees. */
static inline void pg__array_ref(pg__array *a) {
    a->refs++;
}

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
    pg__limits limits;                     /* from info, at runtime creation (core/limits.c) */
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
    int split;                                                   /* option split: 1 auto, 0 off */
    int share; /* option share: 1 node, 0 off (core/share.c) */
} pg__options_resolved;

struct pg__runtime {
    uint64_t handle;
    /* lifetime (core/handle.c): pins and fork_gen are guarded by the handle table's lock */
    _Atomic int closing;         /* pg_runtime_free has begun: new calls are refused */
    pthread_t closer;            /* the thread closing it, valid once closing is set */
    int pins;                    /* public calls in progress */
    uint64_t fork_gen;           /* pg__fork_generation() when created */
    const pg__comp_hooks *hooks; /* set by pg__engine_init before anything else */
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
    const struct pg__capture_notes *cap_notes; /* its notes (set with cap) */
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
    int rank, nranks;      /* 0 and 1 single-process */
    /* check=bounds: view parameters' own buffers, freed once their launch is done (bounds.c) */
    struct pg__staging *staging;
};

/* Is rt being closed by another thread? Then this thread's waits end with an error. */
static inline int pg__closing_other(pg__runtime *rt) {
    return atomic_load(&rt->closing) && !pthread_equal(rt->closer, pthread_self());
}

#endif

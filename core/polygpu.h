/* polygpu.h: the one public door of polygpu. Everything a binding or a C program may call. */
#ifndef POLYGPU_H
#define POLYGPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PG_VERSION_MAJOR 0
#define PG_VERSION_MINOR 1
#define PG_VERSION_PATCH 0

/* Most devices one runtime drives; location arrays are sized PG_MAX_DEVICES + 1. */
#define PG_MAX_DEVICES 16
/* The host (CPU memory) where an API takes a device id. */
#define PG_HOST (-1)
/* Arrays have at most this many dimensions (row-major). */
#define PG_MAX_DIMS 4

/* Every public function returns a status; details are in pg_last_error(). */
typedef enum pg_status {
    PG_OK = 0,
    PG_ERROR_ARGUMENT = 1,      /* a bad value passed by the caller */
    PG_ERROR_STATE = 2,         /* a freed handle, or a call that would deadlock */
    PG_ERROR_COMPILE = 3,       /* kernel source did not compile: see pg_last_error_log() */
    PG_ERROR_DEVICE = 4,        /* a device, driver or library failed or is missing */
    PG_ERROR_OUT_OF_MEMORY = 5, /* host or device memory exhausted */
    PG_ERROR_NOT_FOUND = 6,     /* a named thing (policy, kernel, file) does not exist */
    PG_ERROR_UNSUPPORTED = 7,   /* valid request the chosen devices cannot do */
    PG_ERROR_IO = 8,            /* reading or writing a file failed */
    PG_ERROR_INTERNAL = 9,      /* a bug in polygpu: please report it */
    PG_ERROR_TIMEOUT = 10,      /* a wait with a time limit ran out (work goes on) */
    PG_ERROR_INTERRUPTED = 11   /* a wait was interrupted (pg_set_interrupt_check) */
} pg_status;

/* Element types. */
typedef enum pg_dtype {
    PG_INT8,
    PG_INT16,
    PG_INT32,
    PG_INT64,
    PG_UINT8,
    PG_UINT16,
    PG_UINT32,
    PG_UINT64,
    PG_FLOAT32,
    PG_FLOAT64,
    PG_DTYPE_COUNT
} pg_dtype;

/* How a kernel or host access uses an array. Bit 1 = reads old contents, bit 2 = writes. */
typedef enum pg_access {
    PG_ACCESS_IN = 1,   /* read only */
    PG_ACCESS_OUT = 2,  /* every element written, old contents not needed */
    PG_ACCESS_INOUT = 3 /* read and written (default for non-const pointers) */
} pg_access;

/* Thread-local message of the last failed call on this thread ("" if none). */
const char *pg_last_error(void);
/* Thread-local long detail of the last failure, e.g. a compiler log ("" if none). */
const char *pg_last_error_log(void);
/* Symbolic name of a status, e.g. "PG_ERROR_ARGUMENT". */
const char *pg_status_name(pg_status s);

/* dtype helpers. Names: "int8".."int64", "uint8".."uint64", "float32", "float64". */
pg_status pg_dtype_parse(const char *name, pg_dtype *out);
const char *pg_dtype_name(pg_dtype t); /* NULL for an invalid dtype */
size_t pg_dtype_size(pg_dtype t);      /* 0 for an invalid dtype */

/* ---------------------------------------------------------------- options */

/* Runtime options. Start from pg_options_init(); NULL strings and negative numbers mean "the
 * default, or the PG_<NAME> environment variable if set". Precedence: explicit field >
 * environment > default. Strings are copied by pg_runtime_new: one set directly in a field must
 * live until pg_runtime_new returns; pg_options_set copies its own. */
typedef struct pg_options {
    const char *devices;              /* "auto" | "cuda" | "cuda:0,2" | "host:4" |
                                         "sim:dgx1-v100": simulated GPUs in virtual time
                                         (devices/sim/README.md) */
    const char *policy;               /* device policy name, default "earliest-finish" */
    const char *stream_policy;        /* "fifo" (default) | "always-new" */
    const char *parent_stream_policy; /* "same-as-parent" | "disjoint" | "multigpu-disjoint"
                                         (default) | "multigpu-early-disjoint" */
    const char *execution;            /* "async" (default) | "sync" */
    int prefetch;                     /* 1: input copies on a separate copy stream; 0 default */
    const char *interconnect;         /* bandwidth matrix CSV path, or "default" (see below) */
    double exploration_threshold;     /* default 0.1 */
    const char *log;                  /* "off" (default) | "info" | "debug" */
    const char *trace;                /* path of a Chrome trace written at pg_runtime_free */
    const char *cache_dir;            /* compiled-kernel cache, default ~/.cache/polygpu */
    const char *check;                /* "off" (default) | "bounds": CPU device buffers sit
                                         between guard pages, so a kernel reading or writing
                                         past an array's end (or a view's rows) fails with
                                         "out of bounds" (core/bounds.c) */
    /* Bytes of device buffers the runtime may hold per device (CPU and GPU devices alike); past
     * it, least recently used copies are evicted (see pg_stats.evictions). 0: no limit;
     * PG_DEVICE_MEMORY_UNSET (what pg_options_init sets): PG_DEVICE_MEMORY_LIMIT, else none.
     * pg_options_set takes bytes or a size with a binary suffix: "4194304", "64M", "1.5G". */
    uint64_t device_memory_limit;
    /* 1: a limit study — every copy between locations is skipped (counted in
     * pg_stats.copies_elided), so results are WRONG and only the timing means something: the
     * infinite-bandwidth bound of a program. 0: off; -1 (what pg_options_init sets):
     * PG_ELIDE_COPIES, else off. */
    int elide_copies;
    /* Path of a kernel timing profile to record: every kernel's measured duration on its
     * device (GPU events, CPU clocks), with its launch shape and argument bytes, appended at
     * pg_runtime_free as samples the simulated devices (devices="sim:...,profile=PATH") fit
     * their duration models from. NULL: PG_PROFILE, else none. */
    const char *profile;
    /* Chunked outputs (out(chunks=blocks) in a signature): the bytes a copy of such an output
     * moves at once, while its kernel still runs. 0 (what pg_options_init leaves):
     * PG_CHUNK_BYTES, else chosen per copy from the link's bandwidth and per-copy latency (the
     * interconnect matrix): about sqrt(bytes x bandwidth x latency), the size that balances the
     * per-copy cost against the last chunk's copy after the kernel ends. pg_options_set takes
     * bytes or a size with a binary suffix ("4M"). Meant for measuring (a sweep). */
    uint64_t chunk_bytes;
    /* Performance models (pg_runtime_models): "on": every kernel's and task's measured
     * duration (GPUs: timed with events, which costs a little per launch; CPU and simulated
     * devices are timed anyway) is kept per kernel name, device class (the device's name; CPU
     * devices: "CPU device (N threads)") and
     * size bucket (bytes of its array arguments rounded down to a power of two); the models
     * are loaded from <cache_dir>/models/<device class>.csv when the runtime is created and
     * written back (atomically) at pg_runtime_free, and the min-finish-time policy predicts
     * with them. "off": none of that. NULL: PG_MODELS, else "on" when the policy is
     * min-finish-time and "off" otherwise (so that other runtimes write nothing to the cache
     * folder and time nothing they did not before). */
    const char *models;
    /* Watts per node the runtime's devices may draw (Czarnul's greedy rule): the runtime uses
     * only the devices chosen by taking, again and again, the one with the best performance
     * per watt whose power still fits in what is left of the budget (pg_runtime_power_choice
     * says which and why); placement puts work only there. Performance: the performance models
     * when they predict some kernel on every device, else the nominal throughput (GPUs: SMs x
     * clock; CPU devices: worker threads). Power: the power each device draws under load
     * (GPUs: through NVML; others: power_watts). A budget no device fits fails
     * pg_runtime_new naming the smallest device power. 0: no budget, every device is used;
     * negative (what pg_options_init sets): PG_POWER_LIMIT, else none. */
    double power_limit;
    /* Watts each device draws under load, for tests and for machines without NVML: "120"
     * (every device) or "0:120,1:80" (per device). Used where NVML gives no figure (CPU
     * devices, simulated GPUs, GPUs without NVML); such a device's energy is these watts x its
     * busy time (the time its operations ran). NULL: PG_POWER_WATTS, else none. */
    const char *power_watts;
    /* More than one process (README, "More than one machine"): "auto" (default) runs on the
     * ranks of an MPI job when the process was started by mpirun (or srun, mpiexec) with more
     * than one rank, and single-process otherwise; "mpi" requires the ranks (an error when
     * polygpu was built without MPI); "off" is single-process even under mpirun. With ranks,
     * every rank runs the same program: each array has an owner rank (pg_array_owner_set), a
     * kernel runs on the rank owning what it writes, and values move between ranks as the
     * program needs them. NULL: PG_RANKS, else "auto". */
    const char *ranks;
    /* One launch over several devices (issue "One launch over every GPU"): "auto" (default)
     * splits a launch of a kernel whose signature says what each thread block writes
     * (out/inout(chunks=blocks) or (rows=blocks*R) for every array it writes) into one
     * computation per device over contiguous ranges of its blocks; "off" never splits.
     * pg_kernel_split sets it per kernel. NULL: PG_SPLIT, else "auto". */
    const char *split;
    /* Several processes of this user on one machine (issue 39): "node" (default) joins the
     * node's shared state, so placement sees the other processes' work in flight per device
     * and a call whose arrays do not fit beside their memory waits for it (first come, first
     * served) instead of failing; "off" schedules alone. NULL: PG_SHARE, else "node". */
    const char *share;
} pg_options;

#define PG_DEVICE_MEMORY_UNSET UINT64_MAX

void pg_options_init(pg_options *o);
/* Set an option by its name (the same names as the struct fields) from a string, as a
 * binding's keyword argument would. String values are copied: `value` may be freed at once. The
 * copy is kept by the library for the life of the process, one per distinct value, so a
 * pg_options stays valid when copied and needs no freeing (a field set directly is the
 * caller's, as before). Unknown name or unparsable number: PG_ERROR_ARGUMENT. */
pg_status pg_options_set(pg_options *o, const char *name, const char *value);

/* ---------------------------------------------------------------- runtime */

typedef struct pg_runtime pg_runtime;
typedef struct pg_array pg_array;
typedef struct pg_kernel pg_kernel;

/* Create a runtime. opts may be NULL (defaults overridden by PG_* environment variables). */
pg_status pg_runtime_new(const pg_options *opts, pg_runtime **out);
/* Wait for all work, write the trace if one was asked for, free every array and kernel
 * still alive. Freeing twice is detected (PG_ERROR_STATE). */
pg_status pg_runtime_free(pg_runtime *rt);
/* Block until every computation submitted so far has finished. */
pg_status pg_runtime_sync(pg_runtime *rt);
/* pg_runtime_sync for at most timeout_ns: PG_ERROR_TIMEOUT if work is still running then (it
 * goes on; nothing is cancelled). */
pg_status pg_runtime_sync_timeout(pg_runtime *rt, uint64_t timeout_ns);
/* pg_runtime_free that waits at most timeout_ns for submitted work. If work is still running
 * then (a kernel that never ends), the runtime is closed all the same: its handles become
 * invalid, the devices with unfinished work are abandoned with their memory (the process
 * reclaims it at exit), and PG_ERROR_TIMEOUT names the unfinished computations. */
pg_status pg_runtime_free_timeout(pg_runtime *rt, uint64_t timeout_ns);

/* Interrupts, for bindings: while a call waits (a host read, a map, a sync, a close), `check`
 * is called on the waiting thread at the start and then every few tens of milliseconds. It
 * returns 0 to keep waiting, 1 to end the wait with PG_ERROR_INTERRUPTED (the work goes on),
 * or -1 if this thread cannot be interrupted (then it is not asked again during that wait).
 * One per process; NULL removes it. Python uses it for Ctrl-C, Java for Thread.interrupt(). */
typedef int (*pg_interrupt_check)(void *ctx);
void pg_set_interrupt_check(pg_interrupt_check check, void *ctx);

typedef enum pg_device_kind { PG_DEVICE_CPU = 0, PG_DEVICE_CUDA = 1 } pg_device_kind;
/* What a device is to placement and to a kernel's `where` (pg_device_info.device_class): the
 * class its backend registered (devices/registry.h). Bindings and tools ask this and
 * pg_device_info.backend, not `kind`, which says only CPU or CUDA-like. */
typedef enum pg_device_class { PG_CLASS_CPU = 0, PG_CLASS_GPU = 1 } pg_device_class;

/* A grid or block shape (kernel launches) and a device's largest one (pg_device_info). */
typedef struct pg_dim3 {
    uint32_t x, y, z;
} pg_dim3;

typedef struct pg_device_info {
    int id;
    pg_device_kind kind;
    char name[128];
    uint64_t memory_bytes; /* total memory of the device */
    int compute_major;     /* CUDA compute capability; 0 on CPU devices */
    int compute_minor;
    int multiprocessors; /* SMs on a GPU, worker threads on a CPU device */
    char uuid[48];       /* "GPU-xxxxxxxx-xxxx-..." as nvidia-smi prints it; "" on CPU devices */
    /* Launch limits: pg_kernel_launch places a launch only on devices whose limits it fits and
     * fails with PG_ERROR_ARGUMENT naming them when none does. GPUs report CUDA's device
     * attributes (an H100: 1024 threads, block (1024, 1024, 64), grid (2^31-1, 65535, 65535),
     * 227 KiB). CPU devices report what they can run, more than a GPU: 8192 threads per block in
     * any shape (block (8192, 8192, 8192)), CUDA's grid, 64 MiB of shared memory per block. A
     * kernel meant for GPUs too should keep to the GPUs' limits. */
    uint32_t max_threads_per_block;       /* threads in one block: block.x * block.y * block.z */
    pg_dim3 max_block;                    /* threads per block in each dimension */
    pg_dim3 max_grid;                     /* blocks per grid in each dimension */
    uint64_t max_shared_memory_per_block; /* bytes of dynamic shared memory one block may ask
                                             for (GPUs: the opt-in maximum, less the kernel's
                                             static __shared__ data) */
    uint32_t clock_khz; /* GPUs: the SMs' clock rate (CUDA's attribute); 0 on CPU devices */
    pg_device_class device_class; /* PG_CLASS_GPU or PG_CLASS_CPU */
    char backend[16];             /* the backend's registered name: "cuda", "host", "sim" */
} pg_device_info;

/* Fill up to `capacity` entries; *count gets the number of devices (may exceed capacity). */
pg_status pg_runtime_devices(pg_runtime *rt, pg_device_info *out, int capacity, int *count);

/* The interconnect matrix the transfer-time policies use: *nloc = devices + 1 locations
 * (0 host, d + 1 device d); gbps and latency_us (either may be NULL) get nloc * nloc values,
 * [src * nloc + dst], room for (PG_MAX_DEVICES + 1)^2 always suffices. On GPUs it is measured
 * once per set of GPUs and cached; the `interconnect` option names a CSV file instead, or
 * "default" for uniform defaults. */
pg_status pg_runtime_interconnect(pg_runtime *rt, int *nloc, double *gbps, double *latency_us);

/* Measure every link again with the runtime's own copy path (copies of `bytes`, `reps` timed
 * after a warm-up; waits for the runtime's work first), use the result from now on, and save
 * it as CSV to `path` (NULL: the cache file for these GPUs; "": do not save). saved_as (may
 * be NULL) gets the path written. */
pg_status pg_runtime_measure_interconnect(pg_runtime *rt, size_t bytes, int reps, const char *path,
                                          char *saved_as, size_t saved_cap);

#define PG_MAX_RANKS 64       /* ranks a runtime can run on */
#define PG_MAX_RANKS_STATS 16 /* peers pg_stats counts bytes for */

/* Counters. A "location" is 0 for the host and d + 1 for device d. */
typedef struct pg_stats {
    int ndevices;
    uint64_t computations; /* kernels + host accesses + copies */
    uint64_t kernels;
    uint64_t host_accesses;
    uint64_t copies;
    uint64_t bytes_moved;                                        /* sum of link_bytes */
    uint64_t link_bytes[PG_MAX_DEVICES + 1][PG_MAX_DEVICES + 1]; /* [src location][dst location] */
    uint64_t host_wait_ns; /* time host accesses and syncs spent waiting for devices */
    uint64_t pending;      /* computations waiting for a mapped array to be released */
    /* Memory pressure (device_memory_limit, or a device out of memory). */
    uint64_t evictions;     /* device copies freed to make room */
    uint64_t bytes_evicted; /* their bytes */
    uint64_t writebacks;    /* of those, copies that held the only current value: copied to the
                               host first (also counted in copies and link_bytes) */
    uint64_t device_bytes[PG_MAX_DEVICES];      /* bytes of device buffers held now, per device */
    uint64_t device_bytes_peak[PG_MAX_DEVICES]; /* the most held at once, per device */
    /* elide_copies: copies skipped and their bytes (also counted in copies and link_bytes, as
     * if made). Non-zero: the arrays' values are wrong. */
    uint64_t copies_elided, bytes_elided;
    /* Energy per device since the runtime started, in joules; -1 where unknown. GPUs: NVML's
     * energy counter (Volta and later). Devices with an injected figure (option power_watts:
     * CPU devices, simulated GPUs, GPUs without NVML): those watts x the device's busy time,
     * the summed durations of the kernels, tasks and copies it ran (known when every operation
     * is timed: always on CPU devices; on GPUs only with trace or profile; graph
     * replays through a plan are not timed and not counted). */
    double energy_joules[PG_MAX_DEVICES];
    /* Watts each device draws under load, as the power budget counts it: GPUs the highest
     * power NVML reported while it ran work, else its default power limit; others the
     * injected figure; 0 where unknown. */
    double power_watts[PG_MAX_DEVICES];
    /* Ranks (option ranks): this process's rank and how many there are (0 and 1 when
     * single-process); messages this rank sent and received, with their bytes, per peer rank
     * (the first PG_MAX_RANKS_STATS ranks), and reads of another rank's array that found a
     * received copy still current (no message). */
    int rank, nranks;
    uint64_t rank_messages_sent, rank_messages_received, rank_bytes_sent, rank_bytes_received;
    uint64_t rank_bytes_to[PG_MAX_RANKS_STATS], rank_bytes_from[PG_MAX_RANKS_STATS];
    uint64_t rank_cache_hits;
} pg_stats;

pg_status pg_runtime_stats(pg_runtime *rt, pg_stats *out);

/* The devices a power budget (option power_limit) lets the runtime use, chosen once when it
 * was created by Czarnul's greedy rule: again and again the device with the best performance
 * per watt whose power still fits in what is left of the budget. Placement uses only these. */
typedef struct pg_power_choice {
    double limit_watts; /* the budget; 0: none, every device is chosen (in index order) */
    double used_watts;  /* the chosen devices' power together */
    int from_models;    /* 1: performance from the performance models (some kernel and size
                           predicted on every device: the geometric mean of 1/duration over
                           those); 0: nominal throughput (GPUs: SMs x clock in kHz; CPU
                           devices: worker threads) */
    int ndevices;
    int nchosen;
    int chosen[PG_MAX_DEVICES];         /* the chosen devices, in the order the rule took them */
    double watts[PG_MAX_DEVICES];       /* per device: the power counted (pg_stats.power_watts) */
    double performance[PG_MAX_DEVICES]; /* per device: the performance figure */
} pg_power_choice;

pg_status pg_runtime_power_choice(pg_runtime *rt, pg_power_choice *out);
/* The runtime's clock: nanoseconds since it was created — real time, or on simulated devices
 * (devices="sim:...") the simulated machine's virtual time, so a script timing itself between
 * two readings (after a sync or a host read) measures what that machine would take. */
pg_status pg_runtime_clock(pg_runtime *rt, uint64_t *ns);

/* ---------------------------------------------------------------- arrays */

/* A new array, zero-filled, dtype and up to PG_MAX_DIMS dimensions (row-major). */
pg_status pg_array_new(pg_runtime *rt, pg_dtype dtype, int ndim, const int64_t *shape,
                       pg_array **out);
/* Release the handle. Safe while computations still use the array: the memory goes when
 * they finish. A second free is detected (PG_ERROR_STATE). */
pg_status pg_array_free(pg_array *a);

typedef struct pg_array_desc {
    uint64_t id; /* the id used in the DAG export */
    pg_dtype dtype;
    int ndim;
    int64_t shape[PG_MAX_DIMS];
    uint64_t size; /* elements */
    uint64_t nbytes;
    uint32_t valid; /* bit L set: location L (0 host, d+1 device d) holds the current value
                       (with several ranks: of this rank; 0 when this rank's copy is stale) */
} pg_array_desc;

pg_status pg_array_describe(pg_array *a, pg_array_desc *out);

/* Copy `count` elements starting at flat index `first` to / from host memory. Blocks until
 * the data is ready (read waits only for the array's last writer). */
pg_status pg_array_read(pg_array *a, uint64_t first, uint64_t count, void *dst);
pg_status pg_array_write(pg_array *a, uint64_t first, uint64_t count, const void *src);

/* The array's device address on GPU `device`, for another CUDA library (CuPy, PyTorch, Numba;
 * __cuda_array_interface__). The runtime makes the value current there and returns at once:
 * *stream gets the native CUstream after whose work so far the data is ready (make your stream
 * wait for it). With PG_ACCESS_OUT / INOUT the GPU copy becomes the only valid one, as after a
 * kernel that writes it. The address stays valid while the array lives; ordering the other
 * library's later work against polygpu's is the caller's (as between any two CUDA libraries).
 * PG_ERROR_UNSUPPORTED on CPU devices. */
pg_status pg_array_device_pointer(pg_array *a, int device, pg_access access, void **ptr,
                                  uint64_t *stream);

/* pg_array_device_pointer with DLPack's stream semantics: instead of returning polygpu's
 * stream, the other library's CUstream `consumer` is made to wait on the GPU until the value
 * is ready there (1: CUDA's legacy default stream, 2: its per-thread default stream; 0: the
 * calling thread waits instead). The address is handed out as by pg_array_device_pointer. */
pg_status pg_array_device_pointer_synced(pg_array *a, int device, pg_access access,
                                         uint64_t consumer, void **ptr);

/* Wait until the work that makes a's current value (its last writers, on any range) has
 * finished — with no copy and no host access: for a caller whose memory a computation reads
 * (pg_array_copy_from_device's source), before it lets that memory go. */
pg_status pg_array_wait(pg_array *a);

/* Overwrite the whole array from another library's device memory at `src` (bytes must equal
 * the array's size), on the GPU that holds src, after the work enqueued so far on the native
 * CUstream `stream` (0: none to wait for). Asynchronous, device to device, no host copy. */
pg_status pg_array_copy_from_device(pg_array *a, uint64_t src, size_t bytes, uint64_t stream);

/* A new array whose value IS memory another library owns (zero-copy; DLPack's from_dlpack):
 * `ptr` holds the array's elements, C-contiguous, at the host (pg_array_adopt_host) or on the
 * GPU holding it (pg_array_adopt_device: the runtime finds which of its GPUs that is; the
 * value is the memory's after the work enqueued so far on the native CUstream `stream`, 0:
 * none to wait for, 1: CUDA's legacy default stream, 2: the per-thread one). The runtime uses
 * that memory as its copy there: kernels on that device read and write it in place, other
 * locations get copies as usual, and the memory is never freed, moved or evicted. Writes made
 * anywhere else (another device, the host) are copied back into it by pg_runtime_sync,
 * pg_runtime_free and pg_array_free of the array, so the other library sees them after a
 * sync. `release(ctx)` (may be NULL) is called exactly once, from whichever thread lets the
 * last computation using the memory go, with the runtime's lock held (it must not call back
 * into polygpu): the memory may go then. On an error nothing is adopted and release is not
 * called. Refused with several ranks; adopt_device on CPU devices is PG_ERROR_UNSUPPORTED. */
pg_status pg_array_adopt_host(pg_runtime *rt, pg_dtype dtype, int ndim, const int64_t *shape,
                              void *ptr, void (*release)(void *ctx), void *ctx, pg_array **out);
pg_status pg_array_adopt_device(pg_runtime *rt, pg_dtype dtype, int ndim, const int64_t *shape,
                                void *ptr, uint64_t stream, void (*release)(void *ctx), void *ctx,
                                pg_array **out);

/* Zero-copy host access to the whole array: *ptr stays valid until the matching unmap.
 * PG_ACCESS_IN waits for the last writer; OUT/INOUT also wait for readers, and make the host
 * copy the only valid one. Kernels that conflict with a mapped array are held back (not
 * failed) until it is unmapped. Maps nest; each needs its unmap. */
pg_status pg_array_map(pg_array *a, pg_access access, void **ptr);
pg_status pg_array_unmap(pg_array *a);

/* Start copying a's current value to `location` (PG_HOST or a device index) without waiting,
 * so that a later read there (a host read, a kernel placed there) finds it ready. The copy
 * is ordered after a's last writer and before its next one, and other copies stay valid.
 * A hint: it does nothing where the location already holds the value or will get it anyway,
 * while the value is not yet known (the host has a write mapping open, or its writer is
 * held back by one), and where the device has no room for it without waiting for other work
 * (device_memory_limit). */
pg_status pg_array_prefetch(pg_array *a, int location);
/* A view of rows [lo, hi) of a (along its first axis; a view of a view is a view of the same
 * array): a new handle usable wherever an array is — a kernel argument (a pointer to its first
 * element), read, write, map, prefetch, slice, free — sharing a's elements. Dependencies and
 * coherence follow the ranges: two computations depend on each other only where the rows they
 * touch overlap and one writes (kernels writing disjoint views of one array on two devices run
 * at once), a read of a range copies only its stale parts, from wherever they are current, and
 * a write of a range leaves the rest of the array where it is. Views and the whole array mix
 * freely and may overlap; freeing an array whose views live keeps its memory until the last
 * view is freed. A view has its array's id (pg_array_describe), the id the DAG shows for work
 * on any range of it. Cutting an array that is mapped, or that work held back
 * behind a mapped array uses, is refused. pg_array_device_pointer refuses views and arrays
 * that views cut. */
pg_status pg_array_slice(pg_array *a, int64_t lo, int64_t hi, pg_array **view);

/* ---------------------------------------------------------------- ranks */

/* This process's rank and the number of ranks (0 and 1 when single-process: option ranks). */
pg_status pg_runtime_ranks(pg_runtime *rt, int *rank, int *nranks);

/* Make rank `owner` the owner of a (an array, or a view: its rows), on every rank at the same
 * point of the program, as everything is with ranks. Arrays start owned by rank 0. A kernel runs
 * on the rank owning the arrays (and rows) it writes; a kernel writing data of several owners
 * is an error naming them (split the call by views, or give the data one owner). Ownership
 * moves no data: the next write there is the owner's, and a read elsewhere fetches the current
 * value from a rank holding it. Single-process, rank 0 is the only valid owner. */
pg_status pg_array_owner_set(pg_array *a, int owner);
/* The owner of a's rows: -1 when they have several owners. */
pg_status pg_array_owner(pg_array *a, int *owner);
/* Block distribution of the views of one array over the ranks: view i of n gets owner
 * i * nranks / n. For pg_array_owner_set over the views of a split, so that split(n) spreads
 * an array over the ranks the same way in every binding. */
int pg_rank_block_owner(int i, int n, int nranks);
/* A failed rank ends the job: print "polygpu: rank R of N: <why>: ending every rank" on stderr
 * and end every process of the run with exit status `code` (MPI_Abort), when this process runs
 * a runtime on several ranks; otherwise return doing nothing. For a C program's own failure
 * paths (an error it does not survive), as MPI's contract has it: the other ranks would wait
 * for this one. The bindings call it on an uncaught exception. Without it, a process that
 * exits (or frees its runtime) on one rank only still ends the job: the others learn it from
 * the runtime's close and fail, naming this rank. */
void pg_ranks_abort(int code, const char *why);
/* 1 when this process runs (or ran) a runtime on several ranks. */
int pg_ranks_active(void);

/* ---------------------------------------------------------------- kernels */

/* A kernel from CUDA source. `name` is the __global__ function (a C++ name expression such
 * as "axpy<float>" works). `signature` may be NULL (inferred from the source: const T* is
 * in, T* inout, scalars by value) or a C parameter list whose pointers may be prefixed by
 * in/out/inout: "out float *y, in const float *x, int n". `options` may be NULL or
 * space-separated compiler options ("-O3 --use_fast_math -DN=4").
 * Chunked outputs: "out(chunks=blocks) float *y" (or inout(...)) promises that thread block b
 * (linear index, x fastest) writes exactly elements [b*T, (b+1)*T) of y, T its threads ("chunks=
 * blocks*K": K elements per thread, [b*K*T, (b+1)*K*T)), and nothing else writes y in the
 * kernel. Then a copy of y to another device or the host that is needed while the kernel runs
 * starts chunk by chunk as blocks finish, instead of after the kernel (PROACT's transfers; GPUs
 * count blocks in an epilogue compiled around the kernel, CPU devices in their workers; chunk
 * size per link, option chunk_bytes). A kernel that breaks the promise gets stale values in such
 * copies. Recorded replays of such kernels stay eager. */
pg_status pg_kernel_new(pg_runtime *rt, const char *source, const char *name, const char *signature,
                        const char *options, pg_kernel **out);
/* As pg_kernel_new, on the devices of one class only: `where` is "any" (or NULL: every device),
 * "gpu" or "cpu". In a runtime of GPUs and CPU devices (devices "cuda,host:2") the kernel is
 * compiled for each class it may run on (NVRTC, the host compiler) from the same source, and
 * every placement policy chooses among the allowed devices only. A class the runtime lacks is
 * an error (PG_ERROR_ARGUMENT) naming the devices there are. */
pg_status pg_kernel_new_where(pg_runtime *rt, const char *source, const char *name,
                              const char *signature, const char *options, const char *where,
                              pg_kernel **out);
pg_status pg_kernel_free(pg_kernel *k);

typedef struct pg_param_info {
    char name[64];    /* parameter name ("" if unnamed) */
    char type[96];    /* C type as written, e.g. "const float *" */
    int is_array;     /* 1 for pointers */
    pg_dtype dtype;   /* element type (pointers) or value type (scalars) */
    pg_access access; /* pointers only */
    /* out(chunks=blocks*K): thread block b (linear index, x fastest) writes elements
     * [b*K*T, (b+1)*K*T) of it, T the threads per block; in(chunks=blocks*K): b reads them;
     * 0 when not declared */
    int chunk_per_thread;
    /* out(rows=blocks*R) / in(rows=blocks*R): block b writes / reads rows [b*R, (b+1)*R) along
     * the first axis; 0 when not declared */
    int rows_per_block;
    /* in(..., halo=H): block b also reads the H elements (chunks) or rows (rows=) on each side
     * of its own; inputs only */
    int halo;
} pg_param_info;

/* Whether launches of k are split over devices (option split): "auto" (split when its
 * signature says what each thread block writes of every array it writes, the runtime has
 * several devices it fits and the grid several blocks), "on" (as auto, and a launch that
 * cannot be split is an error naming why; refused at once for a kernel whose signature does
 * not allow it), "off", or "default" (the runtime's option). A split launch is one computation
 * per device over a contiguous range of the grid's blocks, each block seeing its true blockIdx
 * and the whole gridDim; its array arguments are the ranges the signature gives. */
pg_status pg_kernel_split(pg_kernel *k, const char *mode);

/* Fill up to `capacity` parameter descriptions; *count gets the number of parameters. */
pg_status pg_kernel_params(pg_kernel *k, pg_param_info *out, int capacity, int *count);

typedef enum pg_arg_kind { PG_ARG_ARRAY = 0, PG_ARG_SCALAR = 1 } pg_arg_kind;

/* A launch argument. Scalars carry a dtype and a value in the matching member (int8..int64 in
 * i, uint8..uint64 in u, float32/float64 in f); the runtime converts it to the parameter's
 * type and fails with PG_ERROR_ARGUMENT if it does not fit. */
typedef struct pg_arg {
    pg_arg_kind kind;
    pg_dtype dtype;
    union {
        pg_array *array;
        int64_t i;
        uint64_t u;
        double f;
    } v;
} pg_arg;

static inline pg_arg pg_arg_array(pg_array *a) {
    pg_arg r;
    r.kind = PG_ARG_ARRAY;
    r.dtype = PG_FLOAT32;
    r.v.array = a;
    return r;
}
static inline pg_arg pg_arg_int(int64_t v) {
    pg_arg r;
    r.kind = PG_ARG_SCALAR;
    r.dtype = PG_INT64;
    r.v.i = v;
    return r;
}
static inline pg_arg pg_arg_uint(uint64_t v) {
    pg_arg r;
    r.kind = PG_ARG_SCALAR;
    r.dtype = PG_UINT64;
    r.v.u = v;
    return r;
}
static inline pg_arg pg_arg_double(double v) {
    pg_arg r;
    r.kind = PG_ARG_SCALAR;
    r.dtype = PG_FLOAT64;
    r.v.f = v;
    return r;
}
static inline pg_arg pg_arg_float(float v) {
    pg_arg r;
    r.kind = PG_ARG_SCALAR;
    r.dtype = PG_FLOAT32;
    r.v.f = (double)v;
    return r;
}

/* Submit a launch. Returns as soon as it is scheduled; argument errors are reported here and
 * nothing is launched. */
pg_status pg_kernel_launch(pg_kernel *k, pg_dim3 grid, pg_dim3 block, size_t shared_mem,
                           const pg_arg *args, int nargs);

/* ---------------------------------------------------------------- for libraries on the runtime */

/* What a library built on this API needs beyond a script's calls (the tiled GEMM and the
 * built-in BLAS tasks, linalg/, use only this header): placing a call itself, asking what a
 * device is and what the models know, keeping state per runtime. */

/* pg_launch_flags: its input copies go on the device's copy stream, in issue order, instead of
 * the launch's stream (the option prefetch, for this launch only): a library issuing a
 * pipeline (tile i + 1's inputs arrive while tile i computes) asks for it per call. */
#define PG_LAUNCH_PREFETCH 1u

/* pg_kernel_launch on `device` only (-1: wherever the policy puts it, as pg_kernel_launch), with
 * `flags` (PG_LAUNCH_*; 0: none). PG_ERROR_ARGUMENT when the kernel cannot run there: no such
 * device, its launch limits or a task's implementations leave it out, the power budget
 * (option power_limit) leaves it out, or it failed. The call's dependencies, copies and
 * coherence are a pg_kernel_launch's; only the choice of device is the caller's. */
pg_status pg_kernel_launch_on(pg_kernel *k, int device, pg_dim3 grid, pg_dim3 block,
                              size_t shared_mem, const pg_arg *args, int nargs, unsigned flags);

/* *mask: bit d set when device d may take new work now: it has not failed (a fault the driver
 * keeps excludes it for the process) and a power budget (option power_limit) chose it. */
pg_status pg_runtime_devices_usable(pg_runtime *rt, uint32_t *mask);

/* *bytes: what the runtime may hold in buffers on `device` (option device_memory_limit, else
 * the device's memory): the most one launch's arguments may take there together. */
pg_status pg_runtime_device_memory(pg_runtime *rt, int device, uint64_t *bytes);

/* *threads_per_s: the device's nominal throughput, the simple CUDA threads it retires per
 * second (GPUs: SMs x clock; CPU devices: worker threads x 2.5e8, one thread per 4 ns), as the
 * cold duration estimate of placement takes it (pg_policy_device.estimated_s). An order of
 * magnitude to compare devices by, not a measurement. */
pg_status pg_runtime_device_throughput(pg_runtime *rt, int device, double *threads_per_s);

/* The name the performance models keep `device`'s measurements under (pg_model_info.
 * device_class: the device's name; CPU devices "CPU device (N threads)"; finer than the
 * CPU/GPU pg_device_class), into out (cap bytes, NUL-terminated): devices of one such class
 * share measurements, so a library caching its own per-device figures keys them so. */
pg_status pg_runtime_model_class(pg_runtime *rt, int device, char *out, size_t cap);

/* The folder of the runtime's caches (option cache_dir, resolved: compiled kernels, models,
 * link matrices), into out (cap bytes): a library keeps its own cache files under it. */
pg_status pg_runtime_cache_dir(pg_runtime *rt, char *out, size_t cap);

/* *ns: what the performance models predict for `kernel` (a kernel's or task's name) on
 * `device` over `bytes` of array arguments (its size bucket) — the median the min-finish-time
 * policy uses — or 0 when they do not know it (models off, fewer than 3 samples there). */
pg_status pg_runtime_model_predict(pg_runtime *rt, const char *kernel, int device, uint64_t bytes,
                                   uint64_t *ns);

/* *recording: 1 when this thread records a graph on rt (pg_graph_begin): launches are kept,
 * not run, and host accesses are refused, so a library call that reads values or waits must
 * refuse first. */
pg_status pg_graph_recording(pg_runtime *rt, int *recording);

/* State a library keeps per runtime (a handle it made once, a cache), under `key` (any address
 * of the library's own, compared as an address): the first value attached under a key stays
 * and *kept (may be NULL) gets it — `value` itself, or the value another thread attached first
 * (then `value` is not kept and `release` not called: free it yourself). release (may be NULL)
 * is called with the kept value by pg_runtime_free once the runtime's arrays and kernels are
 * freed (a kernel made for the value is freed by then: never free it in release), without
 * the runtime's lock; it must not call the runtime (a close that times out abandons the
 * runtime, and its values, to the process). At most 16 keys per runtime: more is
 * PG_ERROR_OUT_OF_MEMORY. */
pg_status pg_runtime_attach(pg_runtime *rt, const void *key, void *value,
                            void (*release)(void *value), void **kept);
/* *value: what is attached under `key`, NULL when nothing is. */
pg_status pg_runtime_attached(pg_runtime *rt, const void *key, void **value);

/* ---------------------------------------------------------------- tasks */

/* A task is a library call (cuBLAS, OpenBLAS, your own C code) that the runtime schedules as it
 * schedules a kernel: a C function per device kind instead of kernel source (StarPU's codelet
 * with per-architecture implementations). It is a pg_kernel handle: pg_kernel_launch submits a
 * call (grid, block and shared_mem are ignored), pg_kernel_params describes it, pg_kernel_free
 * frees it, and graphs record it (a replay issues it again, never as a backend graph). The
 * signature says each parameter's type and access, as a kernel's explicit signature does
 * ("in const float *x, inout float *y, int64_t n, double alpha"), and the runtime derives the
 * call's dependencies, copies and placement from it exactly as for a kernel: the function runs
 * once the arrays it reads hold their current value on the chosen device, and before work that
 * depends on what it writes. */

/* What an implementation is given, valid during the call only. */
typedef struct pg_task_call {
    const char *name; /* the task's name */
    int device;       /* the runtime's device index it runs on */
    pg_device_kind kind;
    uint64_t stream; /* a CUstream on GPUs (enqueue the work there); 0 on CPU devices */
    int nargs;       /* the signature's parameters */
    const pg_param_info *params;
    /* One 8-byte slot per parameter, as a kernel gets them: an array's address on `device`
     * (cast through uintptr_t), or a scalar converted to the parameter's type, stored at the
     * slot's first bytes (memcpy it out: an int64_t, a double, an int...). */
    const uint64_t *args;
    const uint64_t *counts; /* per parameter: the array's elements (check your bounds); 0: scalar */
    void *ctx;              /* pg_task_impls.ctx */
} pg_task_call;

typedef pg_status (*pg_task_fn)(const pg_task_call *call);

/* One implementation per device kind; NULL: the task cannot run on devices of that kind, and
 * placement considers only devices whose kind has one (none in the runtime: pg_kernel_launch
 * fails with PG_ERROR_ARGUMENT naming the task and the kinds it has).
 * - cpu runs on a CPU device's worker thread, in the order of the stream it was placed on,
 *   after the call returned (never under the runtime's lock; it must not call the runtime).
 *   A status other than PG_OK (its message set with pg_task_fail) fails the call like a
 *   faulting kernel: reported by the next wait on what it wrote or by pg_runtime_sync; the
 *   device does not fail.
 * - cuda runs on the submitting thread, during pg_kernel_launch (under the runtime's lock: it
 *   must not call the runtime), with the device's primary context current; it enqueues GPU work
 *   on call->stream and returns without waiting for it. A status other than PG_OK is returned
 *   by pg_kernel_launch.
 * ctx is passed as is; ctx_free (may be NULL) is called with it once the task is freed and no
 * call of it is in flight (at the latest when the runtime is freed). */
typedef struct pg_task_impls {
    pg_task_fn cpu;
    pg_task_fn cuda;
    void *ctx;
    void (*ctx_free)(void *ctx);
} pg_task_impls;

/* For implementations: set this thread's error message (pg_last_error) to msg and return s. */
pg_status pg_task_fail(pg_status s, const char *msg);

/* A task named `name` with the implementations in *impls (copied) and `signature` (required: a
 * C parameter list, pointers prefixed by in/out/inout, at most 32 parameters). Runtimes whose
 * backend cannot run C functions in stream order (the simulator) refuse with
 * PG_ERROR_ARGUMENT. On failure ctx_free is not called: ctx stays the caller's. */
pg_status pg_task_new(pg_runtime *rt, const char *name, const pg_task_impls *impls,
                      const char *signature, pg_kernel **out);

/* The built-in tasks (row-major, as NumPy), for float32 ("_f32") and float64 ("_f64"):
 *   gemm_f32 / gemm_f64: C = alpha * op(A) * op(B) + beta * C, with the signature
 *     "in const T *a, in const T *b, inout T *c, int64_t m, int64_t n, int64_t k,
 *      int trans_a, int trans_b, double alpha, double beta"
 *     (op(A) is m x k: A is stored m x k, or k x m when trans_a; op(B) is k x n; C is m x n);
 *   gemm_tile_f32 / gemm_tile_f64 (and gemm_tile_out_*, whose c is "out": beta must be 0): the
 *     tiled GEMM's task (pg_linalg_gemm), gemm's signature and ", int64_t a_offset, int64_t
 *     lda": op(A)'s block starts a_offset elements into a, whose stored rows have lda elements;
 *   axpy_f32 / axpy_f64: y = alpha * x + y, "in const T *x, inout T *y, int64_t n, double alpha";
 *   dot_f32 / dot_f64: result[0] = x . y, "in const T *x, in const T *y, out T *result,
 *     int64_t n".
 * Arrays too small for the sizes given fail the call. CPU devices use OpenBLAS (dlopen of
 * libopenblas.so.0, else libblas.so.3 when it has CBLAS; the environment variable
 * PG_BLAS_LIB names another), GPUs cuBLAS (libcublas.so.13, .12, libcublas.so; PG_CUBLAS_LIB
 * names another; a handle per device and task). Devices whose library cannot be loaded are
 * left out of the task's placement; when that leaves none, PG_ERROR_NOT_FOUND names the library
 * and the package to install. Unknown name: PG_ERROR_NOT_FOUND listing the names. */
pg_status pg_task_builtin(pg_runtime *rt, const char *name, pg_kernel **out);

/* ---------------------------------------------------------------- tiled GEMM */

/* What pg_linalg_gemm optimizes: predicted time, or energy x time (device power from NVML). */
typedef enum pg_gemm_metric { PG_GEMM_PERF = 0, PG_GEMM_EDP = 1 } pg_gemm_metric;

typedef struct pg_gemm_options {
    double alpha, beta; /* C = alpha * op(A) op(B) + beta * C; 1 and 0 by pg_gemm_options_init */
    int trans_a, trans_b;
    uint32_t devices; /* bit d: device d may compute tiles; 0: every device */
    int64_t tile;     /* rows of C per tile; 0: the model chooses */
    pg_gemm_metric metric;
} pg_gemm_options;

void pg_gemm_options_init(pg_gemm_options *o);

/* What the model chose and predicted (pg_linalg_gemm's report). */
typedef struct pg_gemm_report {
    uint32_t devices; /* bit d: device d computes tiles */
    int ndevices;
    int64_t tile;                  /* rows of C per tile (the last may have fewer) */
    int64_t tiles;                 /* tile tasks issued */
    int64_t rows[PG_MAX_DEVICES];  /* rows of C each device computes */
    double predicted_s;            /* predicted time of the whole GEMM */
    double predicted_j;            /* predicted energy (devices' power x busy time); < 0
                                      unknown (no power reading) */
    double gflops[PG_MAX_DEVICES]; /* the GEMM rate the model used per device (0: not used) */
    int from_models;               /* 1: tile durations came from the performance models */
} pg_gemm_report;

/* C = alpha * op(A) op(B) + beta * C on 2-D row-major float32 or float64 arrays of one dtype
 * (op(A) m x k, op(B) k x n, C m x n; A stored k x m when trans_a, B n x k when trans_b), of
 * any size, wherever their current values are (the host, any device, in any mix), over several
 * devices: C is cut into tiles of rows (views, pg_array_slice), each computed by a built-in
 * gemm task on the device the model assigns it to, reading the matching rows of A (all of A
 * when trans_a) and all of B. The runtime's coherence makes the pipeline: B goes once to each
 * device and is reused by its tiles, a tile's rows of A come while the tile before computes,
 * and each tile of C is copied back to where C was while the next computes (C's home: the
 * host when its value was there, else the device that held it). The model (PARALiA's) picks
 * the tile height and the devices: per device the slowest of compute, transfers in and
 * transfers out from the link matrix (pg_runtime_interconnect), with the device's GEMM rate
 * from the performance models when they know the tile task, else a rate measured once per
 * device class and dtype and cached under cache_dir/models/gemm-rates.csv; fewer devices when
 * more do not help (the first call for a device class and dtype in a fresh cache measures it:
 * it waits for the runtime's work, and the measuring tasks show in the DAG). Returns once the
 * tiles are issued (like pg_kernel_launch); `report` (may be
 * NULL) gets the plan. At most 32 tiles (views cut arrays for good). Errors: shapes that do not
 * fit, dtypes, a tile that needs more than 32 tiles, metric edp without power readings — all
 * PG_ERROR_ARGUMENT before anything is issued; c sharing an array with a or b (views of one
 * array included) is PG_ERROR_ARGUMENT too, and a call while this thread records a graph is
 * PG_ERROR_STATE (record gemm_tile tasks instead). opt NULL: pg_gemm_options_init's. */
pg_status pg_linalg_gemm(pg_runtime *rt, pg_array *a, pg_array *b, pg_array *c,
                         const pg_gemm_options *opt, pg_gemm_report *report);

/* ---------------------------------------------------------------- recordings */

/* A block of kernel launches recorded once and replayed many times (a CUDA graph's idea, for
 * every device of the runtime). Between pg_graph_begin and pg_graph_end, pg_kernel_launch on
 * that runtime, from the thread that began, checks its arguments and records the call instead
 * of running it; nothing runs and no state changes until a replay. Each pg_graph_launch issues
 * the recorded calls again, in order, with the same arrays and scalar values, as if they were
 * launched eagerly at that moment: dependencies on work before and after the replay and
 * coherence are those of the eager calls. The argument binding is done once, at recording.
 * The first replay (and one that finds the arrays elsewhere than a plan expects) issues the
 * calls eagerly and keeps what they did — devices, streams, copies — as the graph's plan; a
 * replay that finds every value the plan reads where it reads it issues the plan again as one
 * operation (on GPUs one CUDA graph spanning the GPUs it uses; on CPU devices the same
 * operations re-issued without analysis). In the DAG a plan replay is one kernel vertex named
 * "graph replay (N calls)", reading and writing what the calls do; an eager replay shows each
 * call. With the sync or trace option every replay is eager. Inside a recording, on the
 * recording thread, a
 * host access (read, write, map, prefetch, device pointer, sync) on the runtime and any call on
 * another runtime are errors, as is freeing an array the recording uses (from any thread);
 * launches from other threads are refused while the runtime records. A replay whose recorded
 * arrays include a freed one fails, naming it, before issuing anything. A graph belongs to its
 * runtime: pg_runtime_free frees it. */
typedef struct pg_graph pg_graph;

pg_status pg_graph_begin(pg_runtime *rt);
/* Ends the recording begun on rt; *out is the graph (possibly of no calls). */
pg_status pg_graph_end(pg_runtime *rt, pg_graph **out);
/* Issues the recorded calls once; returns when they are issued, like pg_kernel_launch. */
pg_status pg_graph_launch(pg_graph *g);
/* Number of recorded calls. */
pg_status pg_graph_calls(pg_graph *g, int64_t *ncalls);

/* One recorded call, to show a recording (the bindings draw it): the kernel, its launch shape
 * and its arrays — each with its id (a view's is its array's), the union of the accesses of the
 * parameters bound to it, and the elements of that array it covers (a view: its range). */
#define PG_GRAPH_CALL_ARGS 64
typedef struct pg_graph_call_info {
    char kernel[64];
    pg_dim3 grid, block;
    int nargs;
    struct {
        uint64_t array;
        pg_access access;
        uint64_t first, count; /* elements of the array */
    } args[PG_GRAPH_CALL_ARGS];
} pg_graph_call_info;
/* Call `index` (0-based, in recording order) of g. */
pg_status pg_graph_call(pg_graph *g, int64_t index, pg_graph_call_info *out);
pg_status pg_graph_free(pg_graph *g);

/* ---------------------------------------------------------------- elements */

/* One element in host memory (a pg_array_read or pg_array_write buffer, a host view) to and from
 * a value carried as a scalar pg_arg is. Bindings turn their language's numbers into elements
 * and back through these, so every language accepts and refuses the same values with the same
 * message; kernel scalars are converted by the same rules (and a kernel also refuses any
 * floating-point value for an integer parameter). No allocation and no lock: one call per
 * element is cheap. `dst` and `src` need no alignment. */

/* Store `value` (from pg_arg_int, pg_arg_uint, pg_arg_double or pg_arg_float) at `dst` as one
 * element of type `t`. An integer type takes a value in its range, and from a floating-point
 * value only an integral one (2.0 is stored, 2.5 is refused: truncate first for C's cast);
 * float32 refuses a finite value beyond its largest (infinities and NaN are stored); the
 * floating-point types round to nearest. A value that does not fit is PG_ERROR_ARGUMENT naming
 * the value, the type and its range ("value 300 does not fit uint8 (out of range 0 to 255)"),
 * and `dst` is left unchanged. */
pg_status pg_element_store(pg_dtype t, pg_arg value, void *dst);
/* Load the element of type `t` at `src` into *out, exactly, as a scalar pg_arg of the widest
 * type of its kind: dtype PG_INT64 (value in v.i) for int8..int64, PG_UINT64 (v.u) for
 * uint8..uint64, PG_FLOAT64 (v.f) for float32 and float64. */
pg_status pg_element_load(pg_dtype t, const void *src, pg_arg *out);
/* Convert `count` packed elements of type `from` at `src` into type `to` at `dst`, each as
 * pg_element_load then pg_element_store would; with `truncate`, floating-point values going to
 * an integer type are truncated toward zero first (C's cast, NumPy's astype). A value that does
 * not fit is PG_ERROR_ARGUMENT naming its index and the value ("element 3: value 300 does not
 * fit uint8 ..."); `dst` then holds the elements before it. One call for a whole buffer. */
pg_status pg_elements_convert(pg_dtype from, const void *src, pg_dtype to, void *dst,
                              uint64_t count, int truncate);

/* ---------------------------------------------------------------- performance models */

/* One performance model (option models): the measured durations of a kernel or task on one
 * device class at one size bucket. */
typedef struct pg_model_info {
    char kernel[64];        /* the kernel's or task's name */
    char device_class[128]; /* the device's name (pg_device_info.name), e.g. "NVIDIA H200";
                               CPU devices: "CPU device (N threads)", without the index */
    uint64_t bytes;         /* size bucket: bytes of the array arguments, rounded down to a
                               power of two (0: none) */
    uint64_t median_ns;     /* the median of the kept samples (0 while none is kept) */
    int samples;            /* samples kept: the last 32 at most; the first of each bucket in a
                               process is dropped (warm-up), as is one over 10x the median (a
                               spike; three in a row start the model afresh). A prediction needs
                               3 */
} pg_model_info;

/* The models known (loaded and learned): *count of them, 0 when models are off. Models are
 * only added while the runtime lives, so index i < count keeps naming the same one;
 * pg_runtime_model(rt, i, &info) reads it as it is now. */
pg_status pg_runtime_models(pg_runtime *rt, int *count);
pg_status pg_runtime_model(pg_runtime *rt, int i, pg_model_info *out);
/* Record a duration as if `kernel` had run on `device` over `bytes` of array arguments for
 * `ns` (the same rules as measured samples, warm-up included): to seed models from
 * measurements made elsewhere, or to script them in a test. PG_ERROR_STATE when models are
 * off. */
pg_status pg_runtime_model_sample(pg_runtime *rt, const char *kernel, int device, uint64_t bytes,
                                  uint64_t ns);

/* ---------------------------------------------------------------- policies */

/* What a device policy sees: read-only. Locations: 0 host, d + 1 device d. */
typedef struct pg_policy_device {
    int id;
    int busy_streams;  /* streams with unfinished work */
    int streams;       /* streams created so far */
    uint64_t inflight; /* unfinished computations on this device */
    /* Performance models (option models; 0 and -1 when off): */
    double predicted_s; /* this computation's predicted duration here in seconds; < 0 unknown
                           (its kernel has fewer than 3 samples on this device class at this
                           size, or it is not a kernel) */
    double queued_s;    /* predicted seconds until this device's issued work ends: the sum of
                           the predictions for its issued, unfinished computations (those
                           without one count 0), however long they have run already */
    /* Estimates, with models or without (never unknown; earliest-finish reads them): */
    double estimated_s; /* this computation's duration here: predicted_s when known, else a
                           cold estimate, 5 us + its threads over the device's throughput class
                           (GPUs: SMs x clock, one thread per SM per cycle; CPU devices: worker
                           threads x one thread per 4 ns) */
    double backlog_s;   /* the sum of the estimated_s of its issued, unfinished computations
                           (taken when each was issued) */
} pg_policy_device;

/* pg_policy_array.readers counts no further: a policy asks whether a value is shared. */
#define PG_POLICY_READERS_MAX 64

typedef struct pg_policy_array {
    uint64_t nbytes;
    uint32_t valid; /* location bitmask holding the current value */
    pg_access access;
    uint32_t readers; /* other kernels reading its current value that have not been seen
                         finished, counted up to PG_POLICY_READERS_MAX: 0, a value no other
                         call is using now */
} pg_policy_array;

typedef struct pg_policy_view {
    int ndevices;
    const pg_policy_device *devices;
    int narrays;
    const pg_policy_array *arrays;
    const double *bandwidth; /* GB/s, (ndevices+1)^2 row-major, [src location][dst location] */
    double exploration_threshold;
    uint32_t candidates; /* bit d: device d may be chosen (never 0) */
} pg_policy_view;

typedef struct pg_device_policy {
    /* Per-runtime private state (may be NULL). Called once per runtime. */
    void *(*create)(int ndevices);
    /* Return a device id whose bit is set in view->candidates. Must not change the view. */
    int (*choose)(void *state, const pg_policy_view *view);
    void (*destroy)(void *state);
} pg_device_policy;

/* Built-in policies: "earliest-finish" (the default): the candidate where the computation
 * would end first — backlog_s + the time to bring the inputs it lacks from their fastest valid
 * source + estimated_s — finishes within a tenth of estimated_s tie, and ties go to the
 * device holding most of its input bytes; but a computation whose bytes are mostly state (an
 * array it writes whose value is on a device: a partition's rows; an input on a device that
 * no other unfinished call reads: a chain's last step) goes where the data to move (its inputs in,
 * that state back) is least, load breaking only ties: load never moves state
 * (docs/PLACEMENT.md).
 * GrCUDA's "round-robin", "stream-aware", "min-transfer-size", "minmax-transfer-time" (the
 * default until 2026-11-28) and "min-transfer-time"; and "min-finish-time" (HEFT / StarPU
 * dmda): the candidate with the earliest predicted finish, queued_s + the time to bring
 * the inputs it lacks over their slowest valid link + predicted_s; while the computation's
 * duration is unknown on some candidate (not yet calibrated, or models off), it chooses as
 * minmax-transfer-time does. Choosing it turns option models on unless it is set. */
/* Register a device policy under `name` (copied) for runtimes created afterwards. Built-in
 * names cannot be replaced. */
pg_status pg_policy_register(const char *name, const pg_device_policy *policy);

/* ---------------------------------------------------------------- observability */

/* The DAG the runtime recorded, as data: a vertex per computation (kernel launch, host access,
 * copy) of the most recent PG_DAG_HISTORY, an edge per inferred dependency between two of them.
 * A snapshot is a copy taken at one instant, owned by the caller and independent of the
 * runtime: it stays valid and unchanged after more launches and after pg_runtime_free. The DOT
 * and JSON exports are written from a snapshot, so they show exactly what it holds. */
typedef struct pg_dag pg_dag;

#define PG_DAG_HISTORY 65536 /* computations kept, newest last */

typedef enum pg_dag_kind {
    PG_DAG_KERNEL = 0,     /* a kernel launch */
    PG_DAG_HOST_READ = 1,  /* an access from outside that only reads: pg_array_read, a map
                              for reading, pg_array_device_pointer with PG_ACCESS_IN */
    PG_DAG_HOST_WRITE = 2, /* an access from outside that writes (pg_array_write, ...) */
    PG_DAG_COPY = 3        /* a copy the runtime issued: an input brought to a device, a
                              prefetch, a write-back before an eviction */
} pg_dag_kind;

/* An array argument of a vertex. */
typedef struct pg_dag_arg {
    uint64_t array;   /* pg_array_desc.id */
    pg_access access; /* for a kernel, the union of the parameters bound to the array */
} pg_dag_arg;

/* The stream number of a device's copy stream (the prefetch option), after its compute
 * streams 0..PG_DAG_COPY_STREAM-1. */
#define PG_DAG_COPY_STREAM 32

typedef struct pg_dag_vertex_info {
    uint64_t id; /* the computation's id: increasing in submission order, from 1 */
    pg_dag_kind kind;
    char name[64]; /* the kernel's name, "host_read", "copy a3 0->host" (array 3, device 0) */
    int device;    /* where it ran: a device id, or PG_HOST */
    int stream;    /* stream number on that device; -1 on the host */
    int nargs;
    const pg_dag_arg *args; /* nargs entries, owned by the snapshot (valid until pg_dag_free) */
    /* Nanoseconds since the runtime was created, host clock. start_ns and end_ns are 0 while it
     * has not run, or when it is not timed (GPUs time work only with the trace option). */
    uint64_t submit_ns, start_ns, end_ns;
    /* Copies only (0, PG_HOST, PG_HOST for the other kinds): bytes moved, from where, to where
     * (a device id or PG_HOST). */
    uint64_t bytes;
    int src, dst;
    int rank; /* the rank that ran it (0 single-process): each rank records its own work */
    /* A part of one launch split over devices (pg_kernel_split): part 1..parts of it, each a
     * vertex of its own with the kernel's name; 0 and 0 for anything else. */
    int part, parts;
} pg_dag_vertex_info;

typedef enum pg_dag_format { PG_DAG_DOT = 0, PG_DAG_JSON = 1 } pg_dag_format;

/* The names the JSON export uses: "kernel", "host_read", "host_write", "copy"; "in", "out",
 * "inout". "?" for a value outside the enum. */
const char *pg_dag_kind_name(pg_dag_kind kind);
const char *pg_access_name(pg_access access);

/* A snapshot of rt's DAG, taken under the runtime's lock (timings of work finished by then are
 * included). Free it with pg_dag_free. */
pg_status pg_dag_snapshot(pg_runtime *rt, pg_dag **out);
void pg_dag_free(pg_dag *dag); /* NULL is fine */
/* Vertices, oldest first: index 0 .. count - 1. An index past the end is PG_ERROR_ARGUMENT. */
pg_status pg_dag_vertex_count(const pg_dag *dag, size_t *count);
pg_status pg_dag_vertex(const pg_dag *dag, size_t index, pg_dag_vertex_info *out);
/* Edges: `to` depends on `from` (vertex ids; both vertices are in the snapshot), in the order of
 * their `to` vertex. A copy vertex sits between a producer and a consumer on another device. */
pg_status pg_dag_edge_count(const pg_dag *dag, size_t *count);
pg_status pg_dag_edge(const pg_dag *dag, size_t index, uint64_t *from, uint64_t *to);
/* The snapshot as DOT or JSON text; free it with pg_string_free. JSON: {"vertices": [{"id",
 * "kind" ("kernel", "host_read", "host_write", "copy"), "name", "device", "stream", "args":
 * [{"array", "access" ("in", "out", "inout")}], "submit_ns", "start_ns", "end_ns", for
 * copies "bytes", "src", "dst", and for parts of a split launch "part", "parts"}], "edges":
 * [[from, to]]}. */
pg_status pg_dag_to_string(const pg_dag *dag, pg_dag_format format, char **out);

/* A snapshot of rt's DAG written to a file, or returned as a string (free it with
 * pg_string_free). */
pg_status pg_dag_export(pg_runtime *rt, pg_dag_format format, const char *path);
pg_status pg_dag_export_string(pg_runtime *rt, pg_dag_format format, char **out);
void pg_string_free(char *s);

/* The node shared by this user's runtimes (option share), as JSON (free it with
 * pg_string_free): {"clients": [{"pid", "language", "devices" (names: "host:0", a GPU's UUID),
 * "inflight" (unfinished computations), "bytes" (device memory held)}], "devices": [{"device",
 * "inflight", "bytes", "clients" (their pids)}]}. Needs no runtime; clients that died are
 * reclaimed first. The state lives in $PG_NODE_DIR (else /dev/shm)/polygpu-<uid>, 0700. */
pg_status pg_node_status(char **json);
/* The language this process's runtimes report in pg_node_status: "c" unless a binding says. */
void pg_node_language_set(const char *name);

/* Write a Chrome-trace JSON timeline (opens in Perfetto): one track per device stream, every
 * kernel, copy and host access. GPUs time work (events) only when the runtime was made with the
 * `trace` option (timing events cost launch time); otherwise GPU work appears as instants at
 * its submission, marked "timed": false. CPU devices always time. */
pg_status pg_trace_write(pg_runtime *rt, const char *path);

/* The GPU's own timeline: with the trace option on GPUs and CUPTI installed (the CUDA toolkit's
 * libcupti.so, found with dlopen: PG_CUPTI_PATH, CUDA_HOME, /usr/local/cuda, the loader path),
 * each kernel, copy and memset as the GPU ran it, beside the host's submission times of the
 * DAG's vertices. The Chrome trace shows them as rows "gpu N stream S". Elsewhere (no CUPTI, no
 * GPU, trace off) a snapshot has none, and pg_dag_gpu_timeline says why. PG_TRACE_EVENTS=0 in
 * the environment leaves out the timing events the trace otherwise records around each GPU
 * operation (the vertices are then untimed on GPUs, the GPU's rows timing them). */
typedef enum pg_gpu_span_kind {
    PG_GPU_KERNEL = 0,
    PG_GPU_COPY = 1,
    PG_GPU_MEMSET = 2
} pg_gpu_span_kind;

typedef struct pg_gpu_span {
    uint64_t id; /* the vertex (computation) whose issue enqueued it; 0: none of polygpu's
                    computations (a new buffer's zero fill, another library's work) */
    pg_gpu_span_kind kind;
    int device;          /* the device that ran it */
    uint32_t gpu_stream; /* the GPU's own stream id (CUPTI's; unique per device) */
    /* On the GPU, in ns since the runtime was created on the host's clock (the vertices'
     * clock); api_ns: when the driver call that enqueued it began, 0 when unknown. */
    uint64_t start_ns, end_ns, api_ns;
    uint64_t bytes;    /* copies and memsets */
    char copy_kind[8]; /* copies: "HtoD", "DtoH", "DtoD", "PtoP", "HtoH"; else "" */
    char name[64];     /* kernels: the GPU's name of the function; else "memcpy HtoD" ... */
} pg_gpu_span;

/* Spans, in order of their start per device: index 0 .. count - 1. */
pg_status pg_dag_gpu_span_count(const pg_dag *dag, size_t *count);
pg_status pg_dag_gpu_span(const pg_dag *dag, size_t index, pg_gpu_span *out);
/* "available (N spans ...)" or "unavailable (why)"; valid until pg_dag_free. NULL dag: NULL. */
const char *pg_dag_gpu_timeline(const pg_dag *dag);

#ifdef __cplusplus
}
#endif
#endif

/* cpu_compile.h: CUDA kernel source compiled for CPU devices with the host C++ compiler behind
 * a device-language layer, loaded with dlopen, cached on disk. */
#ifndef PG_CPU_COMPILE_H
#define PG_CPU_COMPILE_H

#include "nvrtc/kernel_src.h"

/* Memory for a kernel whose blocks run as fibers, owned by the OS thread that asked for it.
 * Stack i is [stacks + i * stride + stride - stack_bytes, stacks + (i + 1) * stride) and grows
 * down; the bytes below it, when any, are a guard page. extra: 64-byte aligned. */
typedef struct pg__cpu_fibers {
    unsigned char *stacks;
    size_t stride, stack_bytes;
    unsigned char *extra;
} pg__cpu_fibers;

typedef struct pg__cpu_launch {
    pg_dim3 grid, block;
    size_t shared_mem;
    /* Per-thread memory for block-level kernels (fiber stacks, control data, dynamic shared
     * memory): nstacks stacks and extra_bytes more, kept by the calling thread for its next
     * launch. 0 ok, -1 out of memory. NULL (kernels called directly): the kernel maps memory
     * for each call. */
    int (*fiber_memory)(uint32_t nstacks, size_t extra_bytes, pg__cpu_fibers *out);
    /* The kernel called exit, abort, __trap or failed an assert: report `what` and leave the
     * kernel call (does not return). NULL (kernels called directly): the process aborts. */
    void (*fault)(const char *what);
} pg__cpu_launch;

/* Runs blocks [begin, end) of a launch (linear block index, x fastest) on the calling thread.
 * params: pointers to each parameter's value (8-byte slots). Safe to call from several threads
 * at once on disjoint block ranges. */
typedef void (*pg__cpu_entry)(const pg__cpu_launch *l, uint64_t begin, uint64_t end, void **params);

typedef struct pg__cpu_module pg__cpu_module;

/* Compile src (host compiler from PG_CXX, CXX, c++, g++, clang++). A kernel that reaches a
 * barrier or a warp collective runs each block's threads as fibers on one OS thread; any other
 * keeps a plain loop over threads. Compile errors: PG_ERROR_COMPILE with the full log in
 * pg_last_error_log(); no compiler: PG_ERROR_DEVICE naming what to install; a construct CPU
 * devices lack (inline PTX, half precision, textures...): PG_ERROR_UNSUPPORTED naming it;
 * a name the source does not define: PG_ERROR_NOT_FOUND; an option with no CPU meaning:
 * PG_ERROR_ARGUMENT. With src->cache_dir, builds are cached there (created if needed; if it
 * cannot be written, or others could write it, the build is not cached; see kernel_cache.h for
 * the checks on the folder and on each cached object): a hit runs no compiler, and when no
 * compiler is available any cached build of the same source, name, options and parameter
 * types is used. Thread-safe. */
pg_status pg__cpu_compile(const pg__kernel_src *src, pg__cpu_module **out);
/* The entry point of a module, valid until pg__cpu_module_free. */
pg__cpu_entry pg__cpu_module_entry(const pg__cpu_module *m);
void pg__cpu_module_free(pg__cpu_module *m);

/* The device-language layer put before every kernel's source: the language (nvrtc/cpu_prelude.c),
 * then blocks, barriers, warps and the launch loops (nvrtc/cpu_prelude_block.c); and a version
 * string that changes with them (part of the cache key). */
extern const char pg__cpu_prelude[];
extern const char pg__cpu_prelude_block[];
extern const char pg__cpu_prelude_version[];

#endif

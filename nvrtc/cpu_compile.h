/* cpu_compile.h: CUDA kernel source compiled for CPU devices with the host C++ compiler behind
 * a device-language layer, loaded with dlopen, cached on disk. */
#ifndef PG_CPU_COMPILE_H
#define PG_CPU_COMPILE_H

#include "devices/backend.h"

typedef struct pg__cpu_launch {
    pg_dim3 grid, block;
    size_t shared_mem;
} pg__cpu_launch;

/* Runs blocks [begin, end) of a launch (linear block index, x fastest) on the calling thread.
 * params: pointers to each parameter's value (8-byte slots). Safe to call from several threads
 * at once on disjoint block ranges. */
typedef void (*pg__cpu_entry)(const pg__cpu_launch *l, uint64_t begin, uint64_t end,
                              void **params);

typedef struct pg__cpu_module pg__cpu_module;

/* Compile src (host compiler from PG_CXX, CXX, c++, g++, clang++). Compile errors:
 * PG_ERROR_COMPILE with the full log in pg_last_error_log(); no compiler: PG_ERROR_DEVICE
 * naming what to install; block-level features: PG_ERROR_UNSUPPORTED naming the construct. */
pg_status pg__cpu_compile(const pg__kernel_src *src, pg__cpu_module **out);
pg__cpu_entry pg__cpu_module_entry(const pg__cpu_module *m);
void pg__cpu_module_free(pg__cpu_module *m);

#endif

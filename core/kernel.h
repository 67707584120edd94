/* kernel.h: kernels and tasks (core/kernel.c): made, bound, launched. Owns pg__kernel, rt->kernels.
 */
#ifndef PG_CORE_KERNEL_H
#define PG_CORE_KERNEL_H

#include "core/objects.h"

/* ---- kernels (core/kernel.c) */
void pg__kernel_unref(pg__kernel *k);
/* Give k (built, refs 1) a handle and list it in rt->kernels; the lock is not held on entry.
 * On failure k is left to the caller. */
pg_status pg__kernel_register(pg__runtime *rt, pg__kernel *k, pg_kernel **out);

/* For the tiled GEMM (core/gemm.c, core/gemm_rates.c) */
/* The GEMM rate of device dev's class for dtype dt (core/gemm_rates.c): known in the process,
 * else from <cache_dir>/models/gemm-rates.csv, else measured now on dev (waits for the
 * runtime's work: pg_runtime_sync) and cached. Without the lock. */
pg_status pg__gemm_rate(pg_runtime *rt, int dev, pg_dtype dt, double *gflops, double *overhead_s);
/* pg_kernel_launch (grid and block 1) placed on `device` only, as the tiled GEMM assigns its
 * tiles (core/gemm.c), its input copies on the device's copy stream with copy_inputs;
 * PG_ERROR_ARGUMENT when the kernel cannot run there. Public entry: takes the lock itself. */
pg_status pg__kernel_launch_on(pg_kernel *k, int device, const pg_arg *args, int nargs,
                               int copy_inputs);

#endif

/* linalg.h: what the files of linalg/ share — the layer of features built on the runtime's
 * public API, as cuBLASXt sits on cuBLAS: the tiled GEMM (gemm.c, its model gemm_plan.c, the
 * measured rates gemm_rates.c) and the built-in BLAS tasks (blas.c). Nothing here is the
 * engine's: these files include only core/polygpu.h of the library above base/ (the thread's
 * error message, the allocation door), and call only its public functions — the layer tests
 * (tests/layers/check_layers.py, check_calls.py) refuse anything else. */
#ifndef PG_LINALG_H
#define PG_LINALG_H

#include "polygpu.h"

/* The GEMM rate of device dev's class for dtype dt (gemm_rates.c): known in the process, else
 * from <cache_dir>/models/gemm-rates.csv, else measured now on dev (waits for the runtime's
 * work: pg_runtime_sync) and cached. */
pg_status pg__gemm_rate(pg_runtime *rt, int dev, pg_dtype dt, double *gflops, double *overhead_s);

#endif

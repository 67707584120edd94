/* linalg.h: what the files of linalg/ share — the layer of features built on the runtime's
 * public API, as cuBLASXt sits on cuBLAS: the tiled GEMM (gemm.c, its model gemm_plan.c, the
 * measured rates gemm_rates.c) and the built-in BLAS tasks (blas.c). Nothing here is the
 * engine's: these files include only core/polygpu.h of the library above base/ (the thread's
 * error message, the allocation door), and call only its public functions — the layer tests
 * (tests/layers/check_layers.py, check_calls.py) refuse anything else. */
#ifndef PG_LINALG_H
#define PG_LINALG_H

#include "polygpu.h"

/* What linalg asks of a runtime's devices that never changes while it lives, asked once per
 * runtime and kept with it (pg_runtime_attach; the runtime frees it): each public question is
 * a pass through the runtime's door, and a small GEMM asked a dozen per call. Read-only once
 * made, so threads share it without a lock. */
typedef struct pg__linalg_facts {
    int ndev;
    char cache_dir[1024];                  /* pg_runtime_cache_dir */
    char model_class[PG_MAX_DEVICES][128]; /* pg_runtime_model_class */
    double threads_per_s[PG_MAX_DEVICES];  /* pg_runtime_device_throughput */
    uint64_t memory[PG_MAX_DEVICES];       /* pg_runtime_device_memory */
} pg__linalg_facts;

/* rt's facts, made on first use. */
pg_status pg__linalg_facts_get(pg_runtime *rt, const pg__linalg_facts **out);

/* The GEMM rate of device dev's class for dtype dt (gemm_rates.c): known in the process, else
 * from <cache_dir>/models/gemm-rates.csv, else measured now on dev (waits for the runtime's
 * work: pg_runtime_sync) and cached. */
pg_status pg__gemm_rate(pg_runtime *rt, int dev, pg_dtype dt, double *gflops, double *overhead_s);

#endif

/* gemm_plan.h (linalg/): the tiled GEMM's model (PARALiA / CoCoPeLia) — from the problem, each
 * device's links to where the operands live, its GEMM rate and power, choose the set of devices,
 * the tile (rows of C per task) and which tiles each device computes. A pure function: it reads
 * numbers and writes a plan, touches no runtime (linalg/gemm.c gathers the numbers and carries
 * the plan out), so tests script every input. */
#ifndef PG_GEMM_PLAN_H
#define PG_GEMM_PLAN_H

#include "polygpu.h"

/* Tiles per GEMM at most: each tile is a view of C (and of A), and views cut arrays into pieces
 * that never merge, while one launch may cover at most 64 pieces (core/pieces.c) — a later
 * kernel taking C whole must still fit. */
#define PG__GEMM_MAX_TILES 32
/* Tile heights considered: powers of two from 2^PG__GEMM_TILE_LOG_MIN rows, and C whole. */
#define PG__GEMM_TILE_LOG_MIN 5
#define PG__GEMM_TILE_CANDIDATES 24

/* B in chunks of rows for a device's first tile: that tile computes chunk by chunk (its K
 * split, C's rows accumulated) as B's rows arrive, so B's transfer overlaps compute instead of
 * preceding it. 1 when B need not travel, when trans_b (a chunk of K is then no view of B) or
 * when K is too short for chunks worth a call. */
int pg__gemm_k_chunks(int64_t k, int trans_b, int b_travels);

typedef struct pg__gemm_dev {
    int allowed;
    double gflops;     /* sustained GEMM rate on large tiles; <= 0: unknown (not used) */
    double overhead_s; /* per call: launch and library set-up, the initiation cost of a tile */
    double watts;      /* while computing; <= 0 unknown (edp then refuses the device) */
    /* Link rates in GB/s from where each operand's current value is to this device, and from
     * this device to C's home; 0: already there (no transfer). Latency per transfer. */
    double gbps_a, gbps_b, gbps_c_in, gbps_c_out;
    double latency_s;
    /* Measured durations of one tile task of candidate j's height here (the performance
     * model, pg_runtime_model_predict), in seconds; <= 0 where unknown (the rate model is used). */
    double model_s[PG__GEMM_TILE_CANDIDATES];
    /* What one launch's arguments may take on this device together (device_memory_limit, else
     * its memory); 0: no limit known. */
    uint64_t mem_bytes;
} pg__gemm_dev;

typedef struct pg__gemm_problem {
    int64_t m, n, k;
    int elem;    /* bytes per element */
    int trans_a; /* A is k x m: no row panel of op(A) is contiguous, every device takes A whole */
    int trans_b;
    int c_in;     /* beta != 0: C's tiles are read too */
    int64_t tile; /* > 0: this tile height only */
    pg_gemm_metric metric;
    int ndev;
    pg__gemm_dev dev[PG_MAX_DEVICES];
} pg__gemm_problem;

typedef struct pg__gemm_plan {
    uint32_t devices; /* bit d: device d computes tiles */
    int ndevices;
    int64_t tile, tiles;
    int8_t owner[PG__GEMM_MAX_TILES]; /* tile i (rows [i * tile, min(m, (i + 1) * tile))) */
    double device_s[PG_MAX_DEVICES];  /* predicted busy time per device */
    double predicted_s;               /* the slowest device's */
    double predicted_j;               /* energy (sum of watts x time over the set); < 0 unknown */
    /* 1: A, B and C whole do not fit a device: each tile takes a copy of its own rows of op(A)
     * (an array of its own, filled on the host), since a view of A takes all of A's buffer on
     * a device. B and C stay whole (views of them likewise). */
    int stage_a;
} pg__gemm_plan;

/* Device memory a tile of `rows` rows takes (B and C whole; A whole, or its rows when
 * staged), in bytes. */
uint64_t pg__gemm_tile_bytes(const pg__gemm_problem *p, int64_t rows, int64_t tiles, int stage_a);

/* The candidate tile heights for m rows, tallest first: m itself, then powers of two below it
 * that need at most PG__GEMM_MAX_TILES tiles. Returns how many (>= 1 for m >= 1). */
int pg__gemm_tile_candidates(int64_t m, int64_t out[PG__GEMM_TILE_CANDIDATES]);

/* The plan of least predicted time (perf) or energy x time (edp); among plans within 2% of the
 * best, the one with fewest devices. A device takes only tiles whose arguments fit its
 * mem_bytes. PG_ERROR_ARGUMENT when no allowed device has a rate, or edp lacks a device's
 * power; PG_ERROR_OUT_OF_MEMORY, saying what did not fit, when no tile fits any device. */
pg_status pg__gemm_plan_make(const pg__gemm_problem *p, pg__gemm_plan *out);

#endif

/* host_pool.h: a CPU device's worker threads, which run the blocks of its kernel launches. Any
 * number of threads (the devices' stream workers) may run launches on one pool at once; each
 * caller works on its own launch too, so a pool of 0 threads runs everything on the caller. */
#ifndef PG_HOST_POOL_H
#define PG_HOST_POOL_H

#include "devices/host/host_fault.h"
#include "nvrtc/cpu_compile.h"

typedef struct pg__host_pool pg__host_pool;

/* A pool with `nthreads` helper threads (0 allowed). Owned by the caller; free with
 * pg__host_pool_free once no pg__host_pool_run is in progress. */
pg_status pg__host_pool_new(int nthreads, pg__host_pool **out);
void pg__host_pool_free(pg__host_pool *p);

/* Run blocks [0, nblocks) of a launch: split into chunks that the calling thread and the
 * pool's threads take in turn. Returns 0 once every block ran; whatever the blocks wrote is then
 * visible to the caller. p may be NULL (the caller runs every block). When kernel code faults
 * (host_fault.h) no further chunk starts: returns -1 once the chunks already started are done,
 * with the first fault in *fault. */
/* Blocks counted per chunk as they finish (a launch with chunked outputs, backend.h
 * launch_chunks): bpc consecutive blocks a chunk, counters sync[0 .. nchunks), flags
 * sync[nchunks + c] set (release) when chunk c's blocks are all done, then ready(ctx) called
 * (from whichever thread finished it). */
typedef struct pg__host_chunks {
    uint32_t *sync;
    uint32_t bpc;
    uint64_t nchunks;
    void (*ready)(void *ctx);
    void *ctx;
} pg__host_chunks;

/* Run blocks [first, first + nblocks) of the launch (linear index); ch may be NULL (no
 * counting; chunks count from block 0, so first is 0 with ch). */
int pg__host_pool_run(pg__host_pool *p, pg__cpu_entry fn, const pg__cpu_launch *l, void **params,
                      uint64_t first, uint64_t nblocks, const pg__host_chunks *ch,
                      pg__host_fault *fault);

#endif

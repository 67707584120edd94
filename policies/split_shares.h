/* split_shares.h: how a split launch's blocks are shared among devices (decision 29). A pure
 * function of the weights core measures (each device's throughput for the kernel) and of the
 * split the same kernel had last time: it changes nothing and knows nothing of runtimes. */
#ifndef PG_POLICIES_SPLIT_SHARES_H
#define PG_POLICIES_SPLIT_SHARES_H

#include <stdint.h>

/* A device whose share moved less than this fraction of its size keeps the old split: the data
 * one launch wrote stays where the next reads it unless a device is clearly faster or slower. */
#define PG__SPLIT_KEEP 0.25

/* Cut blocks [0, nblocks) into n contiguous ranges, device i's [lo[i], lo[i + 1]), sizes
 * proportional to weight[i] (> 0; a weight that is not a positive number counts as the mean of
 * the others, or 1). lo[0] = 0, lo[n] = nblocks; a device whose share is under one block gets
 * none (an empty range). prev (n + 1 bounds of the last split for the same nblocks and devices,
 * or NULL) is kept when every device's share is within PG__SPLIT_KEEP of the new one; returns 1
 * when it was kept, 0 when lo was computed afresh. */
int pg__split_shares(uint64_t nblocks, int n, const double *weight, const uint64_t *prev,
                     uint64_t *lo);

#endif

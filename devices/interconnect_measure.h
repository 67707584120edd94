/* interconnect_measure.h: measuring the interconnect matrix through a backend's copy path, and
 * the cache file name for a set of GPUs. */
#ifndef PG_INTERCONNECT_MEASURE_H
#define PG_INTERCONNECT_MEASURE_H

#include "devices/backend.h"
#include "devices/interconnect.h"

#include <stddef.h>

/* Measure every directed link host<->device d and device<->device with copies of `bytes`
 * (`reps` timed after a warm-up) and 8-byte copies for latency. On success *out holds the
 * measured links (its other fields unchanged); on failure *out is untouched. Uses its own
 * streams and buffers, freed before it returns. */
pg_status pg__interconnect_measure(const pg__backend_ops *ops, pg__backend *b, int ndev,
                                   size_t bytes, int reps, pg__interconnect *out);

/* "interconnect-<n>-<hash of the devices' UUIDs>.csv": one file per set of GPUs. */
void pg__interconnect_cache_name(const pg_device_info *devs, int ndev, char *out, size_t cap);

#endif

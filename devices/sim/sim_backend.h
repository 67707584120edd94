/* sim_backend.h: simulated GPUs in virtual time ("sim:PRESET" or "sim:/path/file.topo") behind
 * pg__backend_ops. How time passes, what is simulated and the file formats: devices/sim/README.md.
 */
#ifndef PG_SIM_BACKEND_H
#define PG_SIM_BACKEND_H

#include "devices/backend.h"

#include <stddef.h>

/* Open the simulated machine spec names (the part after "sim:"; sim_spec.h). enable_timing is
 * ignored: virtual times cost nothing, so every operation is timed. On success *ndev >= 1. */
pg_status pg__sim_backend_open(const char *spec, int enable_timing, const pg__backend_ops **ops,
                               pg__backend **b, int *ndev);

/* The simulated machine's interconnect matrix (each pair of locations at its route's bandwidth
 * and latency) as an interconnect CSV file in cache_dir, named by the topology's content and
 * written once; its path into out. The runtime reads it as if the interconnect option named
 * it, so the policies see the simulated links. */
pg_status pg__sim_interconnect_file(pg__backend *b, const char *cache_dir, char *out, size_t cap);

/* The virtual clock of a sim backend (ops->name "sim"), in ns since it opened: tests and tools
 * read how long a program took on the simulated machine. */
double pg__sim_backend_now(pg__backend *b);

#endif

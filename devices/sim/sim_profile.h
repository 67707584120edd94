/* sim_profile.h: kernel timing profiles of the simulated devices — a CSV file of duration models
 * and measured samples per (kernel, device name), its reader, and the writer that records a
 * sample (for core to call after timing a kernel on a real GPU). Format in sim_profile.c. */
#ifndef PG_SIM_PROFILE_H
#define PG_SIM_PROFILE_H

#include "polygpu.h"

#include <stdint.h>

typedef struct pg__sim_profile pg__sim_profile;

/* What a model's duration grows with: the bytes of the launch's array arguments, or its threads
 * (grid x block, all dimensions). */
typedef enum pg__sim_x { PG__SIM_X_BYTES = 0, PG__SIM_X_THREADS = 1 } pg__sim_x;

/* duration_ns = a_ns + b_ns * x (never below 0). */
typedef struct pg__sim_model {
    pg__sim_x x;
    double a_ns, b_ns;
} pg__sim_model;

/* Read a profile: model lines as written, sample lines fitted per (kernel, device) by least
 * squares on whichever x fits them better; a model line wins over samples of the same pair.
 * sample_offset_ns is taken off each sample first (never below the smaller of the sample and
 * 0.5 us): what a recorded sample holds beyond the kernel's own time. polygpu records from an
 * event before the launch call to one after it, on an idle stream, so a sample also holds the
 * launch's host and device latency (the topology's profile_us). Errors name the file and line. */
pg_status pg__sim_profile_load(const char *path, double sample_offset_ns, pg__sim_profile **out);
void pg__sim_profile_free(pg__sim_profile *p); /* NULL is fine */
/* The model of `kernel` on a device named `device`: that name's, else the "*" entry's; NULL if
 * neither exists. Valid until the profile is freed. */
const pg__sim_model *pg__sim_profile_find(const pg__sim_profile *p, const char *kernel,
                                          const char *device);
double pg__sim_model_ns(const pg__sim_model *m, uint64_t arg_bytes, uint64_t threads);
/* Entries (kernel, device pairs) the profile has. */
int pg__sim_profile_count(const pg__sim_profile *p);

/* Append one measured sample to the profile at `path` (created, with a header comment, if
 * missing): kernel `kernel` ran `ns` nanoseconds on a device named `device` with this grid and
 * block and `arg_bytes` bytes of array arguments (the bytes from each pointer argument to the end
 * of its buffer, as the simulator counts them). One write() per line: concurrent writers append
 * whole lines. */
pg_status pg__sim_profile_append(const char *path, const char *kernel, const char *device,
                                 pg_dim3 grid, pg_dim3 block, uint64_t arg_bytes, uint64_t ns);

#endif

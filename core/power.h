/* power.h: what each device draws and has spent, and the device set a power budget allows.
 *
 * GPUs are read through NVML (the CUDA backend's power op, devices/cuda/cu_nvml.c); CPU
 * devices, simulated GPUs and GPUs NVML does not serve take the figures injected with the
 * option power_watts (for tests, and for machines without NVML). Nothing here changes a
 * device's power limit or clocks: NVML is only read.
 *
 * Owner: the runtime owns its power state (rt->power, created by pg__power_init, freed by
 * pg__power_free); callers hold rt->mu unless said otherwise. */
#ifndef PG_POWER_H
#define PG_POWER_H

#include "core/internal.h"

/* Watts device dev draws under load: on a GPU read through NVML, the highest power seen while
 * the device ran work, else its default power limit (nvmlDeviceGetPowerManagementDefaultLimit);
 * on a device without an NVML figure (CPU devices, simulated GPUs, no NVML) the injected
 * figure of option power_watts; 0 when unknown (and for a device that does not exist).
 *
 * Called with either runtime pointer (a generic selection picks the function):
 * - a pg_runtime * (the public handle): enters the runtime (takes its lock), so it must not be
 *   called with rt->mu held;
 * - a pg__runtime * (inside core, rt->mu held): reads under the caller's lock. */
double(pg__power_device_watts)(pg_runtime *rt, int dev);
double pg__power_watts(pg__runtime *rt, int dev);
#define pg__power_device_watts(rt, dev)                                                            \
    _Generic((rt), pg__runtime * : pg__power_watts, default : (pg__power_device_watts))(rt, dev)

/* At runtime creation, once the device infos are there: the injected figures (checked against
 * the device count), NVML's figures and energy counters at start. Error: a power_watts entry
 * naming a device that does not exist. */
pg_status pg__power_init(pg__runtime *rt);
void pg__power_free(pg__runtime *rt);

/* Computation c finished (observed done; c->timing resolved when c->timed): counts its busy
 * time on a device with an injected figure, and on a GPU samples NVML's power now and then. */
void pg__power_note(pg__runtime *rt, const pg__comp *c);

/* Check the syntax of a power_watts value ("120" for every device, or "0:120,1:80" per
 * device): PG_ERROR_ARGUMENT naming the problem. For core/options.c. */
pg_status pg__power_parse_watts(const char *spec, double watts[PG_MAX_DEVICES], double *all);

#endif

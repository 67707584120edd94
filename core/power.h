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

#include "core/objects.h"

/* The runtime's power state (rt->power). */
typedef struct pg__power_dev {
    double injected_w;        /* option power_watts; 0: none */
    int nvml;                 /* the backend reads this device's power (a GPU NVML serves) */
    double default_w;         /* NVML's default power limit; 0: unknown */
    double peak_w;            /* highest NVML power seen while work ran here; 0: none yet */
    int energy_known;         /* NVML gives this GPU's energy counter */
    uint64_t energy_start_mj; /* the counter when the runtime started */
    uint64_t busy_ns;         /* devices without NVML: the time their timed operations ran */
    uint64_t sampled_ns;      /* pg__now_ns() of the last NVML power read or busy sample */
    double last_j;            /* energy at the last sample kept for the trace */
    uint64_t last_t;          /* its time (the runtime's clock) */
} pg__power_dev;

#define PG__POWER_SAMPLES 4096 /* kept for the trace: the most recent */

struct pg__power {
    pg__power_dev dev[PG_MAX_DEVICES];
    /* samples for the trace: a ring of the most recent PG__POWER_SAMPLES */
    pg__dag_power sample[PG__POWER_SAMPLES];
    size_t nsample, head;
    /* the device set a power_limit allows (core/power_choice.c); every device without one */
    uint32_t allowed;
    pg_power_choice choice;
};

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

/* Joules device dev has used since the runtime started (NVML's energy counter on a GPU; the
 * injected watts x busy time on a device without NVML, when every operation is timed), or -1
 * when unknown. Reads NVML now. */
double pg__power_energy(pg__runtime *rt, int dev);
/* The power samples kept for the trace (at most every 100 ms per device while it works), then
 * one per device as of now: *out (the caller frees it with pg__free; NULL when none), *n. */
pg_status pg__power_samples(pg__runtime *rt, pg__dag_power **out, size_t *n);
/* Fill the power and energy figures of a pg_stats (pg_runtime_stats). */
void pg__power_stats(pg__runtime *rt, pg_stats *out);

/* ---- the power budget (core/power_choice.c) */
/* At creation, after pg__power_init and the models: choose the devices under power_limit by
 * Czarnul's greedy rule (every device when there is no limit). Errors: a budget that fits no
 * device (naming the smallest device power), a device whose power is unknown under a budget. */
pg_status pg__power_choose(pg__runtime *rt);
/* Launch of `kernel` may go to *fits (its limits and implementations): keep only the devices
 * the budget allows; none left is PG_ERROR_ARGUMENT naming both sets. */
pg_status pg__power_fit(const pg__runtime *rt, const char *kernel, uint32_t *fits);
/* The greedy rule over plain figures (n devices): chosen[] gets the devices in the order taken,
 * *nchosen how many, *used their watts together. limit <= 0: every device, in index order. */
void pg__power_greedy(int n, const double *perf, const double *watts, double limit, int *chosen,
                      int *nchosen, double *used);

/* Check the syntax of a power_watts value ("120" for every device, or "0:120,1:80" per
 * device): PG_ERROR_ARGUMENT naming the problem. For core/options.c. */
pg_status pg__power_parse_watts(const char *spec, double watts[PG_MAX_DEVICES], double *all);

#endif

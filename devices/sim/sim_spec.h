/* sim_spec.h: what "sim:..." asks for — the machine, the profile, whether kernels also run, how
 * host time counts. */
#ifndef PG_SIM_SPEC_H
#define PG_SIM_SPEC_H

#include "polygpu.h"

typedef struct pg__sim_spec {
    char topo[1200];    /* the topology file's path */
    char profile[1024]; /* the timing profile's path; "" for none */
    int compute;        /* 1: kernels also run, on the CPU (compute=cpu, the default); 0: timing
                         * only (compute=none) */
    double host_time;   /* virtual ns per real ns the host spends outside the backend; 0 frozen */
    int host_cpu;       /* host_clock=cpu: the host's time is the calling thread's CPU time, not
                         * the wall clock (many simulated ranks sharing a few cores) */
    int reads_any;      /* reads=any (compute=none): a host read of what devices made is allowed
                         * and returns whatever the host copy holds (timing runs whose script
                         * reads its results; the values are not computed) */
} pg__sim_spec;

/* spec: "PRESET" or a topology file's path (anything with a '/', or ending in .topo), then
 * optional ",key=value" options: compute=none|cpu, profile=PATH, host_time=SCALE,
 * host_clock=wall|cpu, reads=checked|any. The options' defaults come from PG_SIM_COMPUTE,
 * PG_SIM_PROFILE, PG_SIM_HOST_TIME, PG_SIM_HOST_CLOCK and PG_SIM_READS. */
pg_status pg__sim_spec_parse(const char *spec, pg__sim_spec *out);

#endif

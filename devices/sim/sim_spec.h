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
} pg__sim_spec;

/* spec: "PRESET" or a topology file's path (anything with a '/', or ending in .topo), then
 * optional ",key=value" options: compute=none|cpu, profile=PATH, host_time=SCALE. The options'
 * defaults come from PG_SIM_COMPUTE, PG_SIM_PROFILE and PG_SIM_HOST_TIME. */
pg_status pg__sim_spec_parse(const char *spec, pg__sim_spec *out);

#endif

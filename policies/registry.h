/* registry.h: device policies by name — the built-ins and those a C user registers — and the
 * instance a runtime opens. A policy is a pure function of the view core builds for it
 * (pg_policy_view in polygpu.h); this layer knows nothing of runtimes. */
#ifndef PG_POLICIES_REGISTRY_H
#define PG_POLICIES_REGISTRY_H

#include "polygpu.h"

/* A device policy instance. */
typedef struct pg__policy {
    char name[64];
    pg_device_policy ops;
    void *state;
} pg__policy;

/* Add or replace policy `name` (copied); built-in names cannot be replaced. */
pg_status pg__policy_add(const char *name, const pg_device_policy *policy);
pg_status pg__policy_open(const char *name, int ndevices, pg__policy *out);
void pg__policy_close(pg__policy *p);
const char *pg__policy_names(void); /* "round-robin, stream-aware, ..." */

#endif

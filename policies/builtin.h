/* builtin.h: the built-in device policies, for the registry. */
#ifndef PG_POLICIES_BUILTIN_H
#define PG_POLICIES_BUILTIN_H

#include "polygpu.h"

typedef struct pg__builtin_policy {
    const char *name;
    pg_device_policy ops;
} pg__builtin_policy;

/* Terminated by an entry with a NULL name. */
const pg__builtin_policy *pg__builtin_policies(void);

#endif

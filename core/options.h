/* options.h: options (core/options.c) and interned strings (core/intern.c). Owns rt->opt. */
#ifndef PG_CORE_OPTIONS_H
#define PG_CORE_OPTIONS_H

#include "core/objects.h"

/* ---- options (core/options.c) */
pg_status pg__options_resolve(const pg_options *o, pg__options_resolved *out);
/* A copy of s kept for the life of the process, the same one for equal strings (core/intern.c);
 * NULL when out of memory. */
const char *pg__intern(const char *s);

#endif

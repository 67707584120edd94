/* profile.h: timing profiles (core/profile.c). Owns rt->prof. */
#ifndef PG_CORE_PROFILE_H
#define PG_CORE_PROFILE_H

#include "core/objects.h"

/* ---- timing profile (core/profile.c): kernel c finished, timed: keep its duration; at close,
 * append what was kept to the profile file (error: the file could not be written). */
void pg__profile_note(pg__runtime *rt, const pg__comp *c);
pg_status pg__profile_write(pg__runtime *rt);

#endif

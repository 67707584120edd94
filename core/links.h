/* links.h: the interconnect matrix (core/links.c). Owns rt->ic and rt->policy_bw. */
#ifndef PG_CORE_LINKS_H
#define PG_CORE_LINKS_H

#include "core/objects.h"

/* ---- links.c: the interconnect matrix at start (file, cached measurement, quick measurement,
 * or defaults). Called once the backend and device infos are there. */
pg_status pg__links_init(pg__runtime *rt);

#endif

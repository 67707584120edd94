/* util.h: logging and the clock (core/util.c). */
#ifndef PG_CORE_UTIL_H
#define PG_CORE_UTIL_H

#include "core/objects.h"

/* ---- logging */
void pg__log(pg__runtime *rt, int level, const char *fmt, ...) PG__PRINTF(3, 4);

uint64_t pg__now_ns(void);

#endif

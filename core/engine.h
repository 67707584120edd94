/* engine.h: the engine's wiring (core/engine.c). */
#ifndef PG_CORE_ENGINE_H
#define PG_CORE_ENGINE_H

#include "core/objects.h"

/* ---- the engine's wiring (core/engine.c): sets rt->hooks; first thing at creation */
void pg__engine_init(pg__runtime *rt);

#endif

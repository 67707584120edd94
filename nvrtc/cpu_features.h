/* cpu_features.h: what a kernel's source asks of the CPU device layer: constructs it cannot offer,
 * and whether a kernel needs the threads of a block to run together (barriers, warp
 * collectives) or can keep the plain loop over threads. */
#ifndef PG_CPU_FEATURES_H
#define PG_CPU_FEATURES_H

#include "polygpu.h"

/* PG_OK, or PG_ERROR_UNSUPPORTED naming the first construct CPU devices cannot run (inline PTX,
 * half precision, textures, cooperative groups, device-side launches...) and its line. */
pg_status pg__cpu_check_constructs(const char *source, const char *name);

/* 1 when kernel `name` (a name expression such as "reduce<float>") may reach a block barrier
 * or a warp collective, through the device functions and macros it uses; 0 when it surely does
 * not. When the source cannot be followed (an #include of a non-standard header, unbalanced
 * braces, a kernel or collective it cannot place), the answer is 1: the cooperative path runs
 * every kernel correctly, only slower. -1: out of memory. options: the build's options (a -D
 * may name a collective). */
int pg__cpu_needs_block(const char *source, const char *name, const char *options);

#endif

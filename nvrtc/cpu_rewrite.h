/* cpu_rewrite.h: kernel source rewritten for the host compiler where a macro of the prelude
 * cannot do it: extern __shared__ arrays become pointers into the block's dynamic shared memory.
 * Line numbers stay those of the kernel's source. */
#ifndef PG_CPU_REWRITE_H
#define PG_CPU_REWRITE_H

#include "polygpu.h"

/* *out (malloc'ed) is source with every extern __shared__ declaration rewritten; the same text
 * when there is none. PG_ERROR_UNSUPPORTED for a form it cannot rewrite (several arrays in one
 * declaration, one inside a macro), naming kernel `name` and the line. */
pg_status pg__cpu_rewrite_shared(const char *source, const char *name, char **out);

#endif

/* chunk_wrap.h: the GPU form of a kernel with chunked outputs (out(chunks=blocks)) or one whose
 * launches may be split over devices (core/split.c): the user's kernel becomes a __device__
 * function called by a wrapper kernel. The wrapper's per-block epilogue counts finished blocks
 * per chunk and raises the chunk's flag, so a copy stream can wait on the flag
 * (cuStreamWaitValue32) and copy that chunk while the kernel still runs; and the wrapper may
 * run only a range of the grid's blocks: it is launched over `count` blocks and tells the
 * kernel (through blockIdx and gridDim, redirected in its source) which block of the whole grid
 * each one is. */
#ifndef PG_NVRTC_CHUNK_WRAP_H
#define PG_NVRTC_CHUNK_WRAP_H

#include "polygpu.h"

/* Extra parameters the wrapper takes after the kernel's own, in this order. */
#define PG__CHUNK_EXTRA_PARAMS                                                                     \
    8 /* counters, flags (uint32 device arrays), blocks per chunk, blocks; the first block's       \
       * linear index and the whole grid's x, y, z (the hardware grid is then 1-D) */

/* The wrapper's source (the demoted kernel and the wrapper, malloc'ed) and its name (written
 * to name_out, NUL-terminated). The wrapper, launched with counters NULL, runs the kernel with
 * no epilogue. PG_ERROR_NOT_FOUND when the source has no such kernel. */
pg_status pg__chunk_wrap_source(const char *source, const char *name, const pg_param_info *params,
                                int nparams, char **source_out, char *name_out, size_t name_cap);

#endif

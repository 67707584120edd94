/* kernel_src.h: what the compilers are given — a kernel's source, name, options and parsed
 * parameters. The device backends pass it on; the core fills it. */
#ifndef PG_NVRTC_KERNEL_SRC_H
#define PG_NVRTC_KERNEL_SRC_H

#include "polygpu.h"

#define PG__MAX_PARAMS 64

/* A kernel to build: the core has parsed its parameters already. */
typedef struct pg__kernel_src {
    const char *source;
    const char *name;    /* function name or C++ name expression */
    const char *options; /* space-separated compiler options, may be NULL */
    const pg_param_info *params;
    int nparams;
    const char *cache_dir; /* on-disk cache folder, may be NULL (no cache) */
    /* Device classes to build for, bit (1 << pg_device_class) each; 0: all. A runtime of
     * several backends builds only for the backends of these classes (a kernel's where=). */
    unsigned classes;
} pg__kernel_src;

#endif

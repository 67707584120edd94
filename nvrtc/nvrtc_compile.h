/* nvrtc_compile.h: CUDA kernel source compiled with NVRTC (loaded at run time) for one GPU
 * architecture, to CUBIN (or PTX where NVRTC does not know the architecture), cached on disk. */
#ifndef PG_NVRTC_COMPILE_H
#define PG_NVRTC_COMPILE_H

#include "nvrtc/kernel_src.h"

typedef struct pg__nvrtc_image {
    char *data; /* CUBIN or NUL-terminated PTX */
    size_t size;
    int is_ptx;
    char *lowered; /* the kernel's mangled name in the image */
} pg__nvrtc_image;

/* Compile src for compute capability major.minor. Errors: PG_ERROR_DEVICE when NVRTC is not
 * found (naming where it looked), PG_ERROR_COMPILE with the log in pg_last_error_log(). */
pg_status pg__nvrtc_compile(const pg__kernel_src *src, int major, int minor, pg__nvrtc_image *out);
void pg__nvrtc_image_free(pg__nvrtc_image *img);

#endif

/* signature.h: kernel parameter lists, from an explicit signature or from the kernel source. */
#ifndef PG_SIGNATURE_H
#define PG_SIGNATURE_H

#include "polygpu.h"

/* Parse "out float *y, in const float *x, int n". *out is malloc'ed (free it). Pointers without
 * a prefix: const T* is in, T* inout. Errors name the parameter and what was wrong. bool is
 * accepted as a scalar (dtype uint8); bool arrays are rejected (use unsigned char). "" and "void"
 * are empty lists. */
pg_status pg__signature_parse(const char *signature, pg_param_info **out, int *n);

/* Find the __global__ function `name` (a name expression like "axpy<float>" allowed: template
 * parameters are substituted) in `source` and parse its parameter list. PG_ERROR_NOT_FOUND if
 * the source has no such kernel (PG_ERROR_COMPILE naming the fault when the source does not
 * scan); PG_ERROR_ARGUMENT naming each when the name has overloads with different parameters. */
pg_status pg__signature_infer(const char *source, const char *name, pg_param_info **out, int *n);

/* Parse a parameter list taken from kernel source (no in/out/inout prefixes); errors start with
 * `what` (e.g. "kernel 'k'"). */
pg_status pg__signature_parse_list(const char *what, const char *list, size_t len,
                                   pg_param_info **out, int *n);

/* Is there a __global__ function named by `name` (its base name, before any '<')? PG_OK, or
 * PG_ERROR_NOT_FOUND listing the kernels the source has (PG_ERROR_COMPILE naming the fault when
 * the source does not scan). Overloads are not checked here. */
pg_status pg__signature_find(const char *source, const char *name);

/* A copy of source, same length, with comments and the contents of string and character literals
 * blanked (newlines kept, so offsets and line numbers still match); with blank_preprocessor, the
 * preprocessor lines too. malloc'ed; NULL when out of memory. */
char *pg__signature_strip(const char *source, int blank_preprocessor);

/* The first lexical fault of kernel source: a comment or literal that never ends, a bracket
 * never closed or closing nothing. Only the first branch of each #if counts (alternatives may
 * each open a brace). 1 with "line L, column C: what" in why; 0 none; -1 out of memory. Linear
 * time, no recursion. */
int pg__signature_scan(const char *source, char *why, size_t nwhy);

/* A copy of source in which the kernel named by `name` (its base name: every declaration and
 * the definition) is a __device__ function instead of a __global__ one, with any
 * __launch_bounds__ blanked, offsets unchanged: a wrapper kernel can then call it
 * (nvrtc/chunk_wrap.c). malloc'ed; NULL when the source has no such kernel or out of memory. */
char *pg__signature_demote(const char *source, const char *name);

/* C type spelled for a dtype ("float", "int64_t"...). */
const char *pg__dtype_ctype(pg_dtype t);

#endif

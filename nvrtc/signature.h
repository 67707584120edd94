/* signature.h: kernel parameter lists, from an explicit signature or from the kernel source. */
#ifndef PG_SIGNATURE_H
#define PG_SIGNATURE_H

#include "polygpu.h"

/* Parse "out float *y, in const float *x, int n". *out is malloc'ed (free it). Pointers without
 * a prefix: const T* is in, T* inout. Errors name the parameter and what was wrong. */
pg_status pg__signature_parse(const char *signature, pg_param_info **out, int *n);

/* Find the __global__ function `name` (a name expression like "axpy<float>" allowed: template
 * parameters are substituted) in `source` and parse its parameter list. PG_ERROR_NOT_FOUND if
 * the source has no such kernel. */
pg_status pg__signature_infer(const char *source, const char *name, pg_param_info **out,
                              int *n);

/* C type spelled for a dtype ("float", "int64_t"...). */
const char *pg__dtype_ctype(pg_dtype t);

#endif

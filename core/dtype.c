/* dtype.c: element type names and sizes. */
#include "base/error.h"

#include <string.h>

static const struct {
    const char *name;
    size_t size;
} dtypes[PG_DTYPE_COUNT] = {
    [PG_INT8] = {"int8", 1},       [PG_INT16] = {"int16", 2},   [PG_INT32] = {"int32", 4},
    [PG_INT64] = {"int64", 8},     [PG_UINT8] = {"uint8", 1},   [PG_UINT16] = {"uint16", 2},
    [PG_UINT32] = {"uint32", 4},   [PG_UINT64] = {"uint64", 8}, [PG_FLOAT32] = {"float32", 4},
    [PG_FLOAT64] = {"float64", 8},
};

pg_status pg_dtype_parse(const char *name, pg_dtype *out) {
    if (!name || !out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dtype_parse: name and out must not be NULL");
    for (int i = 0; i < PG_DTYPE_COUNT; i++)
        if (strcmp(name, dtypes[i].name) == 0) {
            *out = (pg_dtype)i;
            return PG_OK;
        }
    return pg__error(PG_ERROR_ARGUMENT,
                     "unknown dtype '%s': expected one of int8, int16, int32, int64, uint8, "
                     "uint16, uint32, uint64, float32, float64",
                     name);
}

const char *pg_dtype_name(pg_dtype t) {
    return (unsigned)t < PG_DTYPE_COUNT ? dtypes[t].name : NULL;
}

size_t pg_dtype_size(pg_dtype t) {
    return (unsigned)t < PG_DTYPE_COUNT ? dtypes[t].size : 0;
}

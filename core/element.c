/* element.c: one element in host memory to and from a scalar value, range-checked. */
#include "base/error.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every binding stores its language's numbers through here, and kernel scalars too, so that all
 * accept and refuse the same values with the same words. It runs once per element in script
 * loops: no allocation, no lock, and no pg__error_clear (the message is read only after a
 * failure). Elements may be unaligned (packed buffers), hence memcpy. */

/* Each dtype's size, kind and range, so that no check calls out (libm, dtype.c) per element.
 * end is one past the largest value, as a double: exact, unlike the largest 64-bit ones. */
enum { SIGNED, UNSIGNED, FLOATING };
static const struct {
    unsigned char size, kind;
    int64_t lo;
    uint64_t hi;
    double end;
} types[PG_DTYPE_COUNT] = {
    [PG_INT8] = {1, SIGNED, INT8_MIN, INT8_MAX, 128.0},
    [PG_INT16] = {2, SIGNED, INT16_MIN, INT16_MAX, 32768.0},
    [PG_INT32] = {4, SIGNED, INT32_MIN, INT32_MAX, 2147483648.0},
    [PG_INT64] = {8, SIGNED, INT64_MIN, INT64_MAX, 9223372036854775808.0},
    [PG_UINT8] = {1, UNSIGNED, 0, UINT8_MAX, 256.0},
    [PG_UINT16] = {2, UNSIGNED, 0, UINT16_MAX, 65536.0},
    [PG_UINT32] = {4, UNSIGNED, 0, UINT32_MAX, 4294967296.0},
    [PG_UINT64] = {8, UNSIGNED, 0, UINT64_MAX, 18446744073709551616.0},
    [PG_FLOAT32] = {4, FLOATING, 0, 0, 0.0},
    [PG_FLOAT64] = {8, FLOATING, 0, 0, 0.0},
};

/* The value for a message: integers exactly, doubles in the fewest digits that read back the
 * same (2^63 as 9.223372036854776e+18, not a rounded 9.22337203685478e+18). */
static const char *value_text(pg_arg v, char *buf, size_t n) {
    if (types[v.dtype].kind == FLOATING) {
        for (int digits = 15; digits <= 17; digits++) {
            snprintf(buf, n, "%.*g", digits, v.v.f);
            if (!isfinite(v.v.f) || strtod(buf, NULL) == v.v.f)
                break;
        }
    } else if (types[v.dtype].kind == UNSIGNED) {
        snprintf(buf, n, "%" PRIu64, v.v.u);
    } else {
        snprintf(buf, n, "%" PRId64, v.v.i);
    }
    return buf;
}

static pg_status out_of_range(pg_dtype t, pg_arg v) {
    char val[40];
    value_text(v, val, sizeof val);
    if (t == PG_FLOAT32)
        return pg__error(PG_ERROR_ARGUMENT,
                         "value %s does not fit in float32 (out of range -3.4028235e+38 to "
                         "3.4028235e+38)",
                         val);
    if (types[t].kind == UNSIGNED)
        return pg__error(PG_ERROR_ARGUMENT,
                         "value %s does not fit %s (out of range 0 to %" PRIu64 ")", val,
                         pg_dtype_name(t), types[t].hi);
    return pg__error(PG_ERROR_ARGUMENT,
                     "value %s does not fit %s (out of range %" PRId64 " to %" PRId64 ")", val,
                     pg_dtype_name(t), types[t].lo, (int64_t)types[t].hi);
}

static pg_status inexact(pg_dtype t, pg_arg v) {
    char val[40];
    return pg__error(PG_ERROR_ARGUMENT,
                     "value %s has no exact %s representation: integer elements take integral "
                     "values",
                     value_text(v, val, sizeof val), pg_dtype_name(t));
}

/* An integer element and its bits, zero-extended, through the member of its width: any byte
 * order, any alignment. */
typedef union word {
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
} word;

/* The low bytes of `bits` as an element of integer type t: the value itself when it fits. */
static void put_int(pg_dtype t, uint64_t bits, void *dst) {
    word w;
    switch (types[t].size) {
    case 1:
        w.u8 = (uint8_t)bits;
        break;
    case 2:
        w.u16 = (uint16_t)bits;
        break;
    case 4:
        w.u32 = (uint32_t)bits;
        break;
    default:
        w.u64 = bits;
        break;
    }
    memcpy(dst, &w, types[t].size);
}

static uint64_t get_int(pg_dtype t, const void *src) {
    word w;
    memcpy(&w, src, types[t].size);
    switch (types[t].size) {
    case 1:
        return w.u8;
    case 2:
        return w.u16;
    case 4:
        return w.u32;
    default:
        return w.u64;
    }
}

static pg_status store_double(pg_dtype t, double d, pg_arg v, void *dst) {
    if (t == PG_FLOAT64) {
        memcpy(dst, &d, sizeof d);
        return PG_OK;
    }
    if (t == PG_FLOAT32) {
        /* Past FLT_MAX a cast gives infinity or is undefined: refuse what is not one already. */
        if (isfinite(d) && fabs(d) > FLT_MAX)
            return out_of_range(t, v);
        float f = (float)d;
        memcpy(dst, &f, sizeof f);
        return PG_OK;
    }
    /* An integer type takes integral values only, as Lua's own conversions do; a caller that
     * wants C's truncation truncates first. The range check comes first: it makes the casts
     * below defined. */
    if (isnan(d))
        return inexact(t, v);
    if (!(d >= (double)types[t].lo && d < types[t].end))
        return out_of_range(t, v);
    uint64_t bits;
    if (types[t].kind == UNSIGNED) {
        bits = (uint64_t)d;
        if ((double)bits != d)
            return inexact(t, v);
    } else {
        int64_t i = (int64_t)d;
        if ((double)i != d)
            return inexact(t, v);
        bits = (uint64_t)i;
    }
    put_int(t, bits, dst);
    return PG_OK;
}

static pg_status store(pg_dtype t, pg_arg v, void *dst);

pg_status pg_element_store(pg_dtype t, pg_arg v, void *dst) {
    if ((unsigned)t >= PG_DTYPE_COUNT || !dst)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_element_store: dtype %d is not a pg_dtype, or dst is NULL", (int)t);
    if (v.kind != PG_ARG_SCALAR || (unsigned)v.dtype >= PG_DTYPE_COUNT)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_element_store: the value must be a scalar pg_arg (pg_arg_int, "
                         "pg_arg_uint, pg_arg_double or pg_arg_float)");
    return store(t, v, dst);
}

/* pg_element_store once its arguments are known good. */
static pg_status store(pg_dtype t, pg_arg v, void *dst) {
    int from = types[v.dtype].kind;
    if (from == FLOATING)
        return store_double(t, v.v.f, v, dst);
    int neg = from == SIGNED && v.v.i < 0;
    uint64_t bits = from == UNSIGNED ? v.v.u : (uint64_t)v.v.i;
    if (types[t].kind == FLOATING)
        return store_double(t, neg ? (double)v.v.i : (double)bits, v, dst);
    /* Integer to integer: sign and magnitude against t's two ends. */
    if (neg ? v.v.i < types[t].lo : bits > types[t].hi)
        return out_of_range(t, v);
    put_int(t, bits, dst);
    return PG_OK;
}

static void load(pg_dtype t, const void *src, pg_arg *out);

pg_status pg_element_load(pg_dtype t, const void *src, pg_arg *out) {
    if ((unsigned)t >= PG_DTYPE_COUNT || !src || !out)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_element_load: dtype %d is not a pg_dtype, or src or out is NULL",
                         (int)t);
    load(t, src, out);
    return PG_OK;
}

/* pg_element_load once its arguments are known good. */
static void load(pg_dtype t, const void *src, pg_arg *out) {
    if (t == PG_FLOAT32) {
        float f;
        memcpy(&f, src, sizeof f);
        *out = pg_arg_double(f);
    } else if (t == PG_FLOAT64) {
        double d;
        memcpy(&d, src, sizeof d);
        *out = pg_arg_double(d);
    } else if (types[t].kind == UNSIGNED) {
        *out = pg_arg_uint(get_int(t, src));
    } else {
        /* Two's complement: with the sign bit set the value is bits - 2^width, computed without
         * an out-of-range conversion. */
        uint64_t bits = get_int(t, src), sign = UINT64_C(1) << (8 * types[t].size - 1);
        *out = pg_arg_int(bits & sign ? -(int64_t)(~bits & (sign - 1)) - 1 : (int64_t)bits);
    }
}

pg_status pg_elements_convert(pg_dtype from, const void *src, pg_dtype to, void *dst,
                              uint64_t count, int truncate) {
    if ((unsigned)from >= PG_DTYPE_COUNT || (unsigned)to >= PG_DTYPE_COUNT ||
        (count && (!src || !dst)))
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_elements_convert: dtypes %d and %d must be "
                         "pg_dtypes, and src and dst not NULL",
                         (int)from, (int)to);
    const char *s = src;
    char *d = dst;
    size_t fs = types[from].size, ts = types[to].size;
    if (from == to) {
        memcpy(d, s, (size_t)count * ts);
        return PG_OK;
    }
    /* The common float casts without the per-element dispatch. */
    if (from == PG_FLOAT64 && to == PG_FLOAT32) {
        for (uint64_t i = 0; i < count; i++) {
            double x;
            memcpy(&x, s + i * 8, 8);
            if (isfinite(x) && fabs(x) > FLT_MAX) {
                out_of_range(to, pg_arg_double(x));
                return pg__error_wrap(PG_ERROR_ARGUMENT, "element %" PRIu64, i);
            }
            float f = (float)x;
            memcpy(d + i * 4, &f, 4);
        }
        return PG_OK;
    }
    for (uint64_t i = 0; i < count; i++) {
        pg_arg v;
        load(from, s + i * fs, &v);
        if (truncate && types[v.dtype].kind == FLOATING && types[to].kind != FLOATING)
            v.v.f = trunc(v.v.f);
        if (store(to, v, d + i * ts) != PG_OK)
            return pg__error_wrap(PG_ERROR_ARGUMENT, "element %" PRIu64, i);
    }
    return PG_OK;
}

/* lpg_value.c: one array element between host memory and a Lua number, range-checked. */
#include "lpg_internal.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

void lpg_push_element(lua_State *L, pg_dtype dtype, const void *src) {
    switch (dtype) {
    case PG_INT8:
        lua_pushinteger(L, *(const int8_t *)src);
        return;
    case PG_INT16:
        lua_pushinteger(L, *(const int16_t *)src);
        return;
    case PG_INT32:
        lua_pushinteger(L, *(const int32_t *)src);
        return;
    case PG_INT64:
        lua_pushinteger(L, (lua_Integer) * (const int64_t *)src);
        return;
    case PG_UINT8:
        lua_pushinteger(L, *(const uint8_t *)src);
        return;
    case PG_UINT16:
        lua_pushinteger(L, *(const uint16_t *)src);
        return;
    case PG_UINT32:
        lua_pushinteger(L, (lua_Integer) * (const uint32_t *)src);
        return;
    case PG_UINT64: {
        /* Values past math.maxinteger become floats rather than wrap to negative integers, so
         * a read never changes the value's meaning (it may lose precision, as in Lua itself). */
        uint64_t u = *(const uint64_t *)src;
        if (u <= (uint64_t)INT64_MAX)
            lua_pushinteger(L, (lua_Integer)u);
        else
            lua_pushnumber(L, (lua_Number)u);
        return;
    }
    case PG_FLOAT32:
        lua_pushnumber(L, *(const float *)src);
        return;
    case PG_FLOAT64:
        lua_pushnumber(L, *(const double *)src);
        return;
    case PG_DTYPE_COUNT:
        break;
    }
    lua_pushnil(L);
}

/* The range of an integer dtype that Lua integers cover (uint64 values past INT64_MAX arrive as
 * floats and are handled apart). */
static int int_range(pg_dtype t, int64_t *lo, int64_t *hi) {
    switch (t) {
    case PG_INT8:
        *lo = INT8_MIN, *hi = INT8_MAX;
        return 1;
    case PG_INT16:
        *lo = INT16_MIN, *hi = INT16_MAX;
        return 1;
    case PG_INT32:
        *lo = INT32_MIN, *hi = INT32_MAX;
        return 1;
    case PG_INT64:
        *lo = INT64_MIN, *hi = INT64_MAX;
        return 1;
    case PG_UINT8:
        *lo = 0, *hi = UINT8_MAX;
        return 1;
    case PG_UINT16:
        *lo = 0, *hi = UINT16_MAX;
        return 1;
    case PG_UINT32:
        *lo = 0, *hi = UINT32_MAX;
        return 1;
    case PG_UINT64:
        *lo = 0, *hi = INT64_MAX;
        return 1;
    default:
        return 0;
    }
}

static void store_int(pg_dtype t, int64_t v, void *dst) {
    switch (t) {
    case PG_INT8:
        *(int8_t *)dst = (int8_t)v;
        break;
    case PG_INT16:
        *(int16_t *)dst = (int16_t)v;
        break;
    case PG_INT32:
        *(int32_t *)dst = (int32_t)v;
        break;
    case PG_INT64:
        *(int64_t *)dst = v;
        break;
    case PG_UINT8:
        *(uint8_t *)dst = (uint8_t)v;
        break;
    case PG_UINT16:
        *(uint16_t *)dst = (uint16_t)v;
        break;
    case PG_UINT32:
        *(uint32_t *)dst = (uint32_t)v;
        break;
    case PG_UINT64:
        *(uint64_t *)dst = (uint64_t)v;
        break;
    default:
        break;
    }
}

/* Store the number at idx into *dst. On failure push a message saying why and return 0. */
static int convert(lua_State *L, int idx, pg_dtype dtype, void *dst) {
    if (lua_type(L, idx) != LUA_TNUMBER) {
        lua_pushfstring(L, "expected a number for a %s array, got %s", pg_dtype_name(dtype),
                        luaL_typename(L, idx));
        return 0;
    }
    if (dtype == PG_FLOAT64) {
        *(double *)dst = (double)lua_tonumber(L, idx);
        return 1;
    }
    if (dtype == PG_FLOAT32) {
        double d = (double)lua_tonumber(L, idx);
        if (isfinite(d) && fabs(d) > FLT_MAX) {
            lua_pushfstring(L, "%f does not fit in float32", d);
            return 0;
        }
        float f = (float)d;
        memcpy(dst, &f, sizeof f);
        return 1;
    }
    int64_t lo, hi;
    if (!int_range(dtype, &lo, &hi)) {
        lua_pushfstring(L, "invalid dtype %d", (int)dtype);
        return 0;
    }
    if (lua_isinteger(L, idx)) {
        int64_t v = (int64_t)lua_tointeger(L, idx);
        if (v < lo || v > hi) {
            lua_pushfstring(L, "%I is out of range for %s", (lua_Integer)v, pg_dtype_name(dtype));
            return 0;
        }
        store_int(dtype, v, dst);
        return 1;
    }
    /* A float: only exact integral values are accepted, as Lua's own integer conversions do. */
    double d = (double)lua_tonumber(L, idx);
    if (d != floor(d)) {
        lua_pushfstring(L, "%f has no exact %s representation", d, pg_dtype_name(dtype));
        return 0;
    }
    if (dtype == PG_UINT64 && d >= 9223372036854775808.0 && d < 18446744073709551616.0) {
        *(uint64_t *)dst = (uint64_t)d;
        return 1;
    }
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || (int64_t)d < lo ||
        (int64_t)d > hi) {
        lua_pushfstring(L, "%f is out of range for %s", d, pg_dtype_name(dtype));
        return 0;
    }
    store_int(dtype, (int64_t)d, dst);
    return 1;
}

void lpg_check_element(lua_State *L, int idx, pg_dtype dtype, void *dst, const char *what,
                       lua_Integer pos) {
    if (convert(L, idx, dtype, dst))
        return;
    if (pos > 0)
        lpg_error(L, PG_ERROR_ARGUMENT, "%s %I: %s", what, pos, lua_tostring(L, -1));
    else
        lpg_error(L, PG_ERROR_ARGUMENT, "%s: %s", what, lua_tostring(L, -1));
}

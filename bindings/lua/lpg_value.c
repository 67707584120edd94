/* lpg_value.c: one array element between host memory and a Lua number, range-checked. */
#include "lpg_internal.h"

/* Range checks and their messages are the core's (pg_element_store), as in every binding. */

pg_arg lpg_number_arg(lua_State *L, int idx) {
    return lua_isinteger(L, idx) ? pg_arg_int((int64_t)lua_tointeger(L, idx))
                                 : pg_arg_double((double)lua_tonumber(L, idx));
}

void lpg_push_element(lua_State *L, pg_dtype dtype, const void *src) {
    pg_arg v;
    if (pg_element_load(dtype, src, &v) != PG_OK)
        lua_pushnil(L);
    else if (v.dtype == PG_INT64)
        lua_pushinteger(L, (lua_Integer)v.v.i);
    else if (v.dtype == PG_UINT64 && v.v.u <= (uint64_t)LUA_MAXINTEGER)
        lua_pushinteger(L, (lua_Integer)v.v.u);
    else if (v.dtype == PG_UINT64)
        /* Past math.maxinteger a float rather than a wrap to a negative integer, so a read never
         * changes the value's meaning (it may lose precision, as in Lua itself). */
        lua_pushnumber(L, (lua_Number)v.v.u);
    else
        lua_pushnumber(L, (lua_Number)v.v.f);
}

void lpg_check_element(lua_State *L, int idx, pg_dtype dtype, void *dst, const char *what,
                       lua_Integer pos) {
    pg_status st = PG_ERROR_ARGUMENT;
    if (lua_type(L, idx) != LUA_TNUMBER) {
        lua_pushfstring(L, "expected a number for a %s array, got %s", pg_dtype_name(dtype),
                        luaL_typename(L, idx));
    } else {
        st = pg_element_store(dtype, lpg_number_arg(L, idx), dst);
        if (st == PG_OK)
            return;
        lpg_push_failure(L, st); /* the core's message, copied before anything can clear it */
    }
    if (pos > 0)
        lua_pushfstring(L, "%s %I: ", what, pos);
    else
        lua_pushfstring(L, "%s: ", what);
    lua_insert(L, -2);
    lua_concat(L, 2);
    lpg_raise(L, st);
}

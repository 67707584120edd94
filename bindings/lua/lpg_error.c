/* lpg_error.c: turns a failed polygpu call (or a bad Lua value) into a Lua error string. */
#include "lpg_internal.h"

#include <stdarg.h>
#include <string.h>

static const char *kind(pg_status st) {
    switch (st) {
    case PG_ERROR_ARGUMENT:
        return "argument";
    case PG_ERROR_STATE:
        return "state";
    case PG_ERROR_COMPILE:
        return "compile";
    case PG_ERROR_DEVICE:
        return "device";
    case PG_ERROR_OUT_OF_MEMORY:
        return "out of memory";
    case PG_ERROR_NOT_FOUND:
        return "not found";
    case PG_ERROR_UNSUPPORTED:
        return "unsupported";
    case PG_ERROR_IO:
        return "io";
    case PG_ERROR_INTERNAL:
        return "internal";
    case PG_ERROR_TIMEOUT:
        return "timeout";
    case PG_ERROR_INTERRUPTED:
        return "interrupted";
    case PG_OK:
        break;
    }
    return "unknown";
}

/* The message sits on top of the stack: prefix the position and the kind. */
int lpg_raise(lua_State *L, pg_status st) {
    luaL_where(L, 1);
    lua_pushfstring(L, "polygpu: %s error: ", kind(st));
    lua_rotate(L, -3, 2);
    lua_concat(L, 3);
    return lua_error(L);
}

void lpg_push_failure(lua_State *L, pg_status st) {
    /* Copy the thread-local texts first: a finalizer run by a later allocation may call
     * polygpu and clear them. lua_pushstring copies before it steps the collector. */
    const char *msg = pg_last_error();
    lua_pushstring(L, msg && *msg ? msg : pg_status_name(st));
    const char *log = st == PG_ERROR_COMPILE ? pg_last_error_log() : NULL;
    if (log && *log) {
        lua_pushstring(L, log);
        lua_pushliteral(L, "\n");
        lua_insert(L, -2);
        lua_concat(L, 3);
    }
}

int lpg_fail(lua_State *L, pg_status st) {
    lpg_push_failure(L, st);
    return lpg_raise(L, st);
}

int lpg_error(lua_State *L, pg_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    return lpg_raise(L, st);
}

const char *lpg_check_cstring(lua_State *L, int idx, const char *what) {
    size_t len;
    const char *s = luaL_checklstring(L, idx, &len);
    size_t n = strlen(s);
    if (n != len) { /* C would read "a\0b" as "a" and drop the rest without a word */
        lua_pushlstring(L, s, n > 40 ? 40 : n);
        lpg_error(L, PG_ERROR_ARGUMENT,
                  "%s '%s...' contains a NUL character (after byte %I), which C strings cannot "
                  "carry",
                  what, lua_tostring(L, -1), (lua_Integer)n);
    }
    return s;
}

const char *lpg_opt_cstring(lua_State *L, int idx, const char *what) {
    return lua_isnoneornil(L, idx) ? NULL : lpg_check_cstring(L, idx, what);
}

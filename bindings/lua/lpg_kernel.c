/* lpg_kernel.c: the kernel userdata and launches: k(grid, block [, shared_mem])(args...). */
#include "lpg_internal.h"

#include <string.h>

/* What k(grid, block, shared_mem) captures for the launcher it returns. */
typedef struct launch_config {
    pg_dim3 grid, block;
    size_t shared_mem;
} launch_config;

static lpg_kernel *check_kernel(lua_State *L, int idx) {
    lpg_kernel *k = luaL_checkudata(L, idx, LPG_KERNEL_MT);
    if (!k->k)
        lpg_error(L, PG_ERROR_STATE, "the kernel was freed; it cannot be launched");
    else if (!k->owner->rt)
        lpg_error(L, PG_ERROR_STATE, "the kernel's runtime was closed; it cannot be launched");
    return k;
}

/* rt:kernel(source, name [, signature [, options]] [, {where = "any" | "gpu" | "cpu"}]): the
 * options table, last, may also carry signature= and options=. */
int lpg_kernel_new(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    const char *src = lpg_check_cstring(L, 2, "kernel source");
    const char *name = lpg_check_cstring(L, 3, "kernel name");
    int top = lua_gettop(L), tab = top >= 4 && lua_type(L, top) == LUA_TTABLE ? top : 0;
    const char *sig = tab == 4 ? NULL : lpg_opt_cstring(L, 4, "signature");
    const char *opts = tab && tab <= 5 ? NULL : lpg_opt_cstring(L, 5, "compiler options");
    const char *where = NULL;
    if (tab) {
        static const char *const keys[] = {"where", "signature", "options"};
        const char **out[] = {&where, &sig, &opts};
        for (int i = 0; i < 3; i++) {
            int t = lua_getfield(L, tab, keys[i]);
            if (t == LUA_TSTRING)
                *out[i] = lua_tostring(L, -1); /* the table keeps it alive */
            else if (t != LUA_TNIL)
                return lpg_error(L, PG_ERROR_ARGUMENT,
                                 "kernel options: %s must be a string, got %s", keys[i],
                                 luaL_typename(L, -1));
            lua_pop(L, 1);
        }
        lua_pushnil(L); /* an unknown key is a mistake worth naming */
        while (lua_next(L, tab)) {
            lua_pop(L, 1);
            const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
            if (strcmp(k, "where") && strcmp(k, "signature") && strcmp(k, "options")) {
                lua_pushvalue(L, -1);
                return lpg_error(L, PG_ERROR_ARGUMENT,
                                 "kernel options: unknown key '%s' (expected where, signature, "
                                 "options)",
                                 luaL_tolstring(L, -1, NULL));
            }
        }
    }
    lpg_kernel *k = lua_newuserdatauv(L, sizeof *k, 2);
    k->k = NULL;
    k->owner = r;
    luaL_setmetatable(L, LPG_KERNEL_MT);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    lua_pushvalue(L, 3);
    lua_setiuservalue(L, -2, 2);
    pg_status st = pg_kernel_new_where(r->rt, src, name, sig, opts, where, &k->k);
    if (st != PG_OK) {
        k->k = NULL;
        return lpg_fail(L, st);
    }
    return 1;
}

/* A grid or block size: a number, or a table of 1 to 3 numbers (x, y, z). */
static pg_dim3 check_dim3(lua_State *L, int idx, const char *what) {
    pg_dim3 d = {1, 1, 1};
    uint32_t *out[3] = {&d.x, &d.y, &d.z};
    int n = 1;
    if (lua_type(L, idx) == LUA_TTABLE) {
        lua_Unsigned len = lua_rawlen(L, idx);
        if (len < 1 || len > 3) {
            lpg_error(L, PG_ERROR_ARGUMENT, "%s: give 1 to 3 sizes {x, y, z}, not %I", what,
                      (lua_Integer)len);
            return d;
        }
        n = (int)len;
    } else if (lua_type(L, idx) != LUA_TNUMBER) {
        lpg_error(L, PG_ERROR_ARGUMENT, "%s: expected a number or a table {x, y, z}, got %s", what,
                  luaL_typename(L, idx));
        return d;
    }
    for (int i = 0; i < n; i++) {
        if (lua_type(L, idx) == LUA_TTABLE)
            lua_rawgeti(L, idx, i + 1);
        else
            lua_pushvalue(L, idx);
        int isint = 0;
        lua_Integer v = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
        if (!isint || v < 1 || v > (lua_Integer)UINT32_MAX) {
            lpg_error(L, PG_ERROR_ARGUMENT, "%s: size %d must be an integer from 1 to %I, got %s",
                      what, i + 1, (lua_Integer)UINT32_MAX, luaL_tolstring(L, -1, NULL));
            return d;
        }
        *out[i] = (uint32_t)v;
        lua_pop(L, 1);
    }
    return d;
}

/* The launcher made by k(grid, block): upvalue 1 the kernel, upvalue 2 its launch_config.
 * Integers become int64 scalars and floats float64 (math.type decides); the core converts them
 * to the parameter's type and range-checks them. */
static int launch(lua_State *L) {
    lpg_kernel *k = check_kernel(L, lua_upvalueindex(1));
    const launch_config *c = lua_touserdata(L, lua_upvalueindex(2));
    int nargs = lua_gettop(L);
    /* Most kernels take a few arguments: no allocation for them on this hot path. */
    pg_arg small[16];
    pg_arg *args = nargs <= 16 ? small : lua_newuserdatauv(L, (size_t)nargs * sizeof *args, 0);
    for (int i = 1; i <= nargs; i++) {
        lpg_array *a;
        if (lua_type(L, i) == LUA_TNUMBER) {
            args[i - 1] = lpg_number_arg(L, i);
        } else if ((a = lpg_test_array(L, i))) {
            if (!a->a || !a->owner->rt)
                return lpg_error(L, PG_ERROR_STATE, "kernel argument %d: the array %s", i,
                                 !a->a ? "was freed" : "belongs to a closed runtime");
            args[i - 1] = pg_arg_array(a->a);
        } else {
            return lpg_error(L, PG_ERROR_ARGUMENT,
                             "kernel argument %d: expected an array or a number, got %s", i,
                             luaL_typename(L, i));
        }
    }
    pg_status st = pg_kernel_launch(k->k, c->grid, c->block, c->shared_mem, args, nargs);
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 0;
}

/* k(grid, block [, shared_mem]) -> a function taking the kernel's arguments. */
static int kernel_call(lua_State *L) {
    check_kernel(L, 1);
    launch_config c;
    c.grid = check_dim3(L, 2, "grid");
    c.block = check_dim3(L, 3, "block");
    c.shared_mem = 0;
    if (!lua_isnoneornil(L, 4)) {
        int isint = 0;
        lua_Integer s = lua_type(L, 4) == LUA_TNUMBER ? lua_tointegerx(L, 4, &isint) : 0;
        if (!isint || s < 0)
            return lpg_error(L, PG_ERROR_ARGUMENT,
                             "shared_mem: expected a byte count (an integer >= 0), got %s",
                             luaL_tolstring(L, 4, NULL));
        c.shared_mem = (size_t)s;
    }
    lua_pushvalue(L, 1);
    launch_config *kept = lua_newuserdatauv(L, sizeof *kept, 0);
    *kept = c;
    lua_pushcclosure(L, launch, 2);
    return 1;
}

static const char *access_name(pg_access a) {
    return a == PG_ACCESS_IN ? "in" : a == PG_ACCESS_OUT ? "out" : "inout";
}

/* k:params(): {name, type, is_array, dtype, access, chunk_per_thread} per parameter (the last
 * two for arrays only). */
static int kernel_params(lua_State *L) {
    lpg_kernel *k = check_kernel(L, 1);
    int count = 0;
    pg_status st = pg_kernel_params(k->k, NULL, 0, &count);
    if (st != PG_OK)
        return lpg_fail(L, st);
    pg_param_info *p = lua_newuserdatauv(L, (size_t)(count ? count : 1) * sizeof *p, 0);
    st = pg_kernel_params(k->k, p, count, &count);
    if (st != PG_OK)
        return lpg_fail(L, st);
    lua_createtable(L, count, 0);
    for (int i = 0; i < count; i++) {
        lua_createtable(L, 0, 5);
        lua_pushstring(L, p[i].name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, p[i].type);
        lua_setfield(L, -2, "type");
        lua_pushboolean(L, p[i].is_array);
        lua_setfield(L, -2, "is_array");
        lua_pushstring(L, pg_dtype_name(p[i].dtype));
        lua_setfield(L, -2, "dtype");
        if (p[i].is_array) {
            lua_pushstring(L, access_name(p[i].access));
            lua_setfield(L, -2, "access");
            lua_pushinteger(L, p[i].chunk_per_thread);
            lua_setfield(L, -2, "chunk_per_thread");
        }
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* k:split(mode): "auto", "on", "off" or "default" (the runtime's option split): whether a
 * launch runs as one part per device over ranges of its blocks (pg_kernel_split). */
static int kernel_split(lua_State *L) {
    lpg_kernel *k = check_kernel(L, 1);
    const char *mode = lpg_check_cstring(L, 2, "split mode");
    pg_status st = pg_kernel_split(k->k, mode);
    if (st != PG_OK)
        return lpg_fail(L, st);
    lua_settop(L, 1);
    return 1; /* the kernel, so that rt:kernel(...):split("on") reads as one call */
}

static int kernel_name(lua_State *L) {
    luaL_checkudata(L, 1, LPG_KERNEL_MT);
    lua_getiuservalue(L, 1, 2);
    return 1;
}

/* Launches already submitted keep what they need; freeing twice does nothing. */
static pg_status release(lpg_kernel *k) {
    if (!k->k)
        return PG_OK;
    pg_status st = k->owner->rt ? pg_kernel_free(k->k) : PG_OK;
    if (st == PG_OK)
        k->k = NULL;
    return st;
}

static int kernel_free(lua_State *L) {
    pg_status st = release(luaL_checkudata(L, 1, LPG_KERNEL_MT));
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 0;
}

static int kernel_gc(lua_State *L) {
    release(luaL_checkudata(L, 1, LPG_KERNEL_MT));
    return 0;
}

static int kernel_tostring(lua_State *L) {
    lpg_kernel *k = luaL_checkudata(L, 1, LPG_KERNEL_MT);
    lua_getiuservalue(L, 1, 2);
    lua_pushfstring(L, "polygpu.kernel(%s%s)", lua_tostring(L, -1),
                    !k->k           ? ", freed"
                    : !k->owner->rt ? ", runtime closed"
                                    : "");
    return 1;
}

void lpg_kernel_register(lua_State *L) {
    static const luaL_Reg meta[] = {
        {"__call", kernel_call},         {"__gc", kernel_gc}, {"__close", kernel_free},
        {"__tostring", kernel_tostring}, {NULL, NULL},
    };
    static const luaL_Reg methods[] = {
        {"params", kernel_params},
        {"split", kernel_split},
        {"name", kernel_name},
        {"free", kernel_free},
        {NULL, NULL},
    };
    luaL_newmetatable(L, LPG_KERNEL_MT);
    luaL_setfuncs(L, meta, 0);
    lpg_push_index(L, LPG_KERNEL_MT, methods, NULL);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, "polygpu.kernel");
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}

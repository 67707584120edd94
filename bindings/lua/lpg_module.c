/* lpg_module.c: luaopen_polygpu: the module table, and its functions on a default runtime. */
#include "lpolygpu.h"
#include "lpg_internal.h"

#include <string.h>

/* Registry key of the default runtime, made on the first module-level call. */
#define LPG_DEFAULT_KEY "polygpu.default_runtime"

/* Push the default runtime, making it (from the PG_* environment) if there is none or it was
 * closed. */
static void push_default(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, LPG_DEFAULT_KEY);
    lpg_runtime *r = luaL_testudata(L, -1, LPG_RUNTIME_MT);
    if (r && r->rt)
        return;
    lua_pop(L, 1);
    lua_pushcfunction(L, lpg_runtime_new);
    lua_call(L, 0, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, LPG_DEFAULT_KEY);
}

/* polygpu.default_runtime() */
static int mod_default_runtime(lua_State *L) {
    push_default(L);
    return 1;
}

/* polygpu.<method>(...) is default_runtime():<method>(...); the method is upvalue 1. */
static int mod_forward(lua_State *L) {
    lua_CFunction method = lua_tocfunction(L, lua_upvalueindex(1));
    push_default(L);
    lua_insert(L, 1);
    return method(L);
}

/* polygpu.close(): close the default runtime if there is one (the next call makes another). */
static int mod_close(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, LPG_DEFAULT_KEY);
    if (!luaL_testudata(L, -1, LPG_RUNTIME_MT))
        return 0;
    lua_getfield(L, -1, "close");
    lua_insert(L, -2);
    lua_call(L, 1, 0);
    return 0;
}

int luaopen_polygpu(lua_State *L) {
    luaL_checkversion(L);
    lpg_interrupt_install();
    pg_node_language_set("lua"); /* what pg_node_status says of this process's runtimes */
    lpg_runtime_register(L);
    lpg_array_register(L);
    lpg_kernel_register(L);
    lpg_graph_register(L);
    lua_newtable(L);
    for (const luaL_Reg *m = lpg_runtime_methods(); m->name; m++) {
        if (!strcmp(m->name, "close"))
            continue;
        lua_pushcfunction(L, m->func);
        lua_pushcclosure(L, mod_forward, 1);
        lua_setfield(L, -2, m->name);
    }
    lua_pushcfunction(L, mod_close);
    lua_setfield(L, -2, "close");
    lua_pushcfunction(L, lpg_runtime_new);
    lua_setfield(L, -2, "runtime");
    lpg_push_linalg(L);
    lua_setfield(L, -2, "linalg");
    lua_pushcfunction(L, mod_default_runtime);
    lua_setfield(L, -2, "default_runtime");
    lua_pushcfunction(L, lpg_node_status);
    lua_setfield(L, -2, "node_status");
    lua_pushfstring(L, "%d.%d.%d", PG_VERSION_MAJOR, PG_VERSION_MINOR, PG_VERSION_PATCH);
    lua_setfield(L, -2, "version");
    return 1;
}

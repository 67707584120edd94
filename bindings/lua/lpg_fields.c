/* lpg_fields.c: __index of the userdata types: a method by name, or an error that names the
 * unknown key and lists the methods (a mistyped method name must not read as nil). */
#include "lpg_internal.h"

/* The running closure's upvalues, as lpg_push_index made them. */
#define METHODS lua_upvalueindex(1)
#define METHOD_LIST lua_upvalueindex(2)
#define TYPE_NAME lua_upvalueindex(3)

int lpg_index_method(lua_State *L, int key, const char *hint) {
    key = lua_absindex(L, key);
    if (lua_type(L, key) == LUA_TSTRING) {
        lua_pushvalue(L, key);
        if (lua_rawget(L, METHODS) != LUA_TNIL)
            return 1;
        lua_pop(L, 1);
    }
    const luaL_Reg *methods = lua_touserdata(L, METHOD_LIST);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (const luaL_Reg *m = methods; m->name; m++) {
        if (m != methods)
            luaL_addstring(&b, ", ");
        luaL_addstring(&b, m->name);
    }
    luaL_pushresult(&b);
    const char *list = lua_tostring(L, -1);
    const char *type = lua_tostring(L, TYPE_NAME);
    if (lua_type(L, key) == LUA_TSTRING)
        return lpg_error(L, PG_ERROR_ARGUMENT, "%s has no field '%s'; its methods are %s%s", type,
                         lua_tostring(L, key), list, hint);
    const char *tname = luaL_typename(L, key);
    return lpg_error(L, PG_ERROR_ARGUMENT, "%s has no field %s (a %s); its methods are %s%s", type,
                     luaL_tolstring(L, key, NULL), tname, list, hint);
}

static int method_index(lua_State *L) {
    return lpg_index_method(L, 2, "");
}

void lpg_push_index(lua_State *L, const char *type, const luaL_Reg *methods, lua_CFunction index) {
    lua_newtable(L); /* luaL_newlib needs the array itself, not a pointer */
    luaL_setfuncs(L, methods, 0);
    lua_pushlightuserdata(L, (void *)methods);
    lua_pushstring(L, type);
    lua_pushcclosure(L, index ? index : method_index, 3);
}

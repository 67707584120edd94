/* lpolygpu.h: the polygpu Lua module's entry point, for C programs that embed Lua.
 *
 *     #include <lauxlib.h>
 *     #include <lualib.h>
 *     #include "lpolygpu.h"
 *
 *     lua_State *L = luaL_newstate();
 *     luaL_openlibs(L);
 *     luaL_requiref(L, "polygpu", luaopen_polygpu, 1); // also sets the global `polygpu`
 *     lua_pop(L, 1);
 *     // scripts may now `local pg = require "polygpu"`
 *
 * Link the program with libpolygpu_lua.a (CMake target polygpu_lua), libpolygpu and Lua 5.4. */
#ifndef LPOLYGPU_H
#define LPOLYGPU_H

#include <lua.h>

#ifdef __cplusplus
extern "C" {
#endif

int luaopen_polygpu(lua_State *L);

#ifdef __cplusplus
}
#endif
#endif

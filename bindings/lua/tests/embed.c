/* embed.c: a C program that embeds Lua and links polygpu: it registers the module with
 * luaL_requiref (no package.cpath search) and runs the script named on its command line. */
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>

#include "lpolygpu.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s script.lua\n", argv[0]);
        return 2;
    }
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "out of memory for the Lua state\n");
        return 1;
    }
    luaL_openlibs(L);
    luaL_requiref(L, "polygpu", luaopen_polygpu, 1);
    lua_pop(L, 1);
    /* Empty the C search path: `require "polygpu"` must find the module registered above. */
    int st = luaL_dostring(L, "package.cpath = ''");
    if (st == LUA_OK)
        st = luaL_dofile(L, argv[1]);
    if (st != LUA_OK)
        fprintf(stderr, "%s\n", lua_tostring(L, -1));
    lua_close(L); /* collects the runtime: waits for its work and frees it */
    return st == LUA_OK ? 0 : 1;
}

/* pgb_clock.c: a Lua module with one function, now(): seconds on a monotonic clock. Lua's own
 * os.clock() is processor time and os.time() whole seconds, neither fit to time a run.
 * Built by benchmarks/run.py:  cc -shared -fPIC -I<lua headers> pgb_clock.c -o pgb_clock.so */
#define _POSIX_C_SOURCE 199309L
#include <lauxlib.h>
#include <lua.h>
#include <time.h>

static int clock_now(lua_State *L) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
    return 1;
}

int luaopen_pgb_clock(lua_State *L);

int luaopen_pgb_clock(lua_State *L) {
    lua_newtable(L);
    lua_pushcfunction(L, clock_now);
    lua_setfield(L, -2, "now");
    return 1;
}

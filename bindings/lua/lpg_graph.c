/* lpg_graph.c: rt:record(fn) and the graph it returns: fn's kernel calls are recorded (nothing
 * runs), then g() replays them, each replay equal to making the same calls then (pg_graph_*). */
#include "lpg_internal.h"

#define LPG_GRAPH_MT "polygpu.graph"

/* Graph userdata; user value 1 is the runtime userdata, so the runtime is collected last. g is
 * NULL once freed. */
typedef struct lpg_graph {
    pg_graph *g;
    lpg_runtime *owner;
} lpg_graph;

static lpg_graph *check_graph(lua_State *L, int idx) {
    lpg_graph *g = luaL_checkudata(L, idx, LPG_GRAPH_MT);
    if (!g->g)
        lpg_error(L, PG_ERROR_STATE, "the graph was freed (g:free() or its runtime's close)");
    if (!g->owner->rt)
        lpg_error(L, PG_ERROR_STATE, "the graph's runtime was closed");
    return g;
}

/* rt:record(fn): begin, call fn (its kernel calls are recorded), end; fn's error ends the
 * recording, drops it and is raised again. */
int lpg_runtime_record(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    pg_status st = pg_graph_begin(r->rt);
    if (st != PG_OK)
        return lpg_fail(L, st);
    lua_pushvalue(L, 2);
    int failed = lua_pcall(L, 0, 0, 0) != LUA_OK;
    pg_graph *h = NULL;
    st = pg_graph_end(r->rt, &h);
    if (failed) { /* the function's error is the one to see */
        if (st == PG_OK)
            pg_graph_free(h);
        return lua_error(L);
    }
    if (st != PG_OK)
        return lpg_fail(L, st);
    lpg_graph *g = lua_newuserdatauv(L, sizeof *g, 1);
    g->g = h;
    g->owner = r;
    luaL_setmetatable(L, LPG_GRAPH_MT);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static int graph_launch(lua_State *L) {
    pg_status st = pg_graph_launch(check_graph(L, 1)->g);
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 0;
}

static int graph_calls(lua_State *L) {
    int64_t n = 0;
    pg_status st = pg_graph_calls(check_graph(L, 1)->g, &n);
    if (st != PG_OK)
        return lpg_fail(L, st);
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

static pg_status release(lpg_graph *g) {
    if (!g->g)
        return PG_OK;
    pg_status st = g->owner->rt ? pg_graph_free(g->g) : PG_OK; /* a closed runtime freed it */
    if (st == PG_OK)
        g->g = NULL;
    return st;
}

static int graph_free(lua_State *L) {
    pg_status st = release(luaL_checkudata(L, 1, LPG_GRAPH_MT));
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 0;
}

static int graph_gc(lua_State *L) {
    release(luaL_checkudata(L, 1, LPG_GRAPH_MT));
    return 0;
}

static int graph_tostring(lua_State *L) {
    lpg_graph *g = luaL_checkudata(L, 1, LPG_GRAPH_MT);
    int64_t n = -1;
    if (g->g && g->owner->rt && pg_graph_calls(g->g, &n) == PG_OK)
        lua_pushfstring(L, "polygpu.graph(%d call%s)", (int)n, n == 1 ? "" : "s");
    else
        lua_pushstring(L, !g->g ? "polygpu.graph(freed)" : "polygpu.graph(runtime closed)");
    return 1;
}

void lpg_graph_register(lua_State *L) {
    static const luaL_Reg meta[] = {
        {"__call", graph_launch},        {"__gc", graph_gc}, {"__close", graph_free},
        {"__tostring", graph_tostring}, {NULL, NULL},
    };
    static const luaL_Reg methods[] = {
        {"launch", graph_launch},
        {"calls", graph_calls},
        {"free", graph_free},
        {NULL, NULL},
    };
    luaL_newmetatable(L, LPG_GRAPH_MT);
    luaL_setfuncs(L, meta, 0);
    lpg_push_index(L, LPG_GRAPH_MT, methods, NULL);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, "polygpu.graph");
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}

/* lpg_dag.c: a snapshot of the runtime's DAG (pg_dag_snapshot) as Lua tables, for rt:dag(). */
#include "lpg_internal.h"

#include <limits.h>

#define LPG_DAG_MT "polygpu.dag_snapshot"

/* The snapshot sits in a userdata while the tables are built, so that a Lua error (out of
 * memory) between the snapshot and its free leaves it to the collector instead of leaking. */
static int snapshot_gc(lua_State *L) {
    pg_dag **g = luaL_checkudata(L, 1, LPG_DAG_MT);
    pg_dag_free(*g);
    *g = NULL;
    return 0;
}

static void set_int(lua_State *L, const char *key, int v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, key);
}

/* The vertex as a table with the JSON export's fields. */
static void push_vertex(lua_State *L, const pg_dag_vertex_info *v) {
    lua_createtable(L, 0, 12);
    lpg_set_u64(L, "id", v->id);
    lua_pushstring(L, pg_dag_kind_name(v->kind));
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, v->name);
    lua_setfield(L, -2, "name");
    set_int(L, "device", v->device);
    set_int(L, "stream", v->stream);
    set_int(L, "rank", v->rank); /* the rank that ran it (each rank records its own work) */
    if (v->parts) {              /* a part of one launch split over devices */
        set_int(L, "part", v->part);
        set_int(L, "parts", v->parts);
    }
    lua_createtable(L, v->nargs, 0);
    for (int i = 0; i < v->nargs; i++) {
        lua_createtable(L, 0, 2);
        lpg_set_u64(L, "array", v->args[i].array);
        lua_pushstring(L, pg_access_name(v->args[i].access));
        lua_setfield(L, -2, "access");
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "args");
    lpg_set_u64(L, "submit_ns", v->submit_ns);
    lpg_set_u64(L, "start_ns", v->start_ns);
    lpg_set_u64(L, "end_ns", v->end_ns);
    if (v->kind == PG_DAG_COPY) {
        lpg_set_u64(L, "bytes", v->bytes);
        set_int(L, "src", v->src);
        set_int(L, "dst", v->dst);
    }
}

int lpg_push_dag(lua_State *L, pg_runtime *rt) {
    pg_dag **g = lua_newuserdatauv(L, sizeof *g, 0);
    *g = NULL;
    if (luaL_newmetatable(L, LPG_DAG_MT)) {
        lua_pushcfunction(L, snapshot_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    pg_status st = pg_dag_snapshot(rt, g);
    size_t nv = 0, ne = 0;
    if (!st)
        st = pg_dag_vertex_count(*g, &nv);
    if (!st)
        st = pg_dag_edge_count(*g, &ne);
    if (st)
        return lpg_fail(L, st);
    lua_createtable(L, 0, 2);
    lua_createtable(L, nv < INT_MAX ? (int)nv : 0, 0);
    for (size_t i = 0; i < nv; i++) {
        pg_dag_vertex_info v;
        if ((st = pg_dag_vertex(*g, i, &v)))
            return lpg_fail(L, st);
        push_vertex(L, &v);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "vertices");
    lua_createtable(L, ne < INT_MAX ? (int)ne : 0, 0);
    for (size_t i = 0; i < ne; i++) {
        uint64_t from, to;
        if ((st = pg_dag_edge(*g, i, &from, &to)))
            return lpg_fail(L, st);
        lua_createtable(L, 2, 0);
        lpg_push_u64(L, from);
        lua_rawseti(L, -2, 1);
        lpg_push_u64(L, to);
        lua_rawseti(L, -2, 2);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "edges");
    pg_dag_free(*g); /* now, not at the next collection */
    *g = NULL;
    lua_remove(L, -2);
    return 1;
}

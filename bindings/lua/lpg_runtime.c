/* lpg_runtime.c: the runtime userdata: options from a Lua table, lifetime, and its methods. */
#include "lpg_internal.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lpg_runtime *lpg_check_runtime(lua_State *L, int idx) {
    lpg_runtime *r = luaL_checkudata(L, idx, LPG_RUNTIME_MT);
    if (!r->rt)
        lpg_error(L, PG_ERROR_STATE,
                  "the runtime was closed; create another with polygpu.runtime{}");
    return r;
}

/* Options whose value is a path. */
static int is_path_option(const char *name) {
    static const char *const paths[] = {"trace", "profile", "cache_dir", "interconnect"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if (!strcmp(name, paths[i]))
            return 1;
    return 0;
}

/* Fill *o from the option table at index 1 (pg_options_set copies the values). */
static void read_options(lua_State *L, pg_options *o) {
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            lpg_error(L, PG_ERROR_ARGUMENT, "runtime options: keys must be option names, got a %s",
                      luaL_typename(L, -2));
        const char *name = lpg_check_cstring(L, -2, "runtime option name");
        const char *value = NULL;
        switch (lua_type(L, -1)) {
        case LUA_TSTRING:
            value = lpg_check_cstring(L, -1, "runtime option value");
            break;
        case LUA_TBOOLEAN:
            /* "on"/"off", which every on/off option takes (models as well as prefetch); a path
             * option would take it as a file name. */
            if (is_path_option(name))
                lpg_error(L, PG_ERROR_ARGUMENT, "runtime option '%s' takes a path, got %s", name,
                          lua_toboolean(L, -1) ? "true" : "false");
            value = lua_toboolean(L, -1) ? "on" : "off";
            break;
        case LUA_TNUMBER:
            /* Convert a copy, popped after the set: lua_next's value stays a number. */
            lua_pushvalue(L, -1);
            value = lua_tostring(L, -1);
            break;
        default:
            lpg_error(L, PG_ERROR_ARGUMENT,
                      "runtime option '%s': expected a string, number or boolean, got %s", name,
                      luaL_typename(L, -1));
        }
        pg_status st = pg_options_set(o, name, value);
        if (st != PG_OK)
            lpg_fail(L, st);
        lua_settop(L, 2); /* the key stays for lua_next */
    }
}

/* polygpu.runtime([options]) */
int lpg_runtime_new(lua_State *L) {
    if (!lua_isnoneornil(L, 1))
        luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    pg_options o;
    pg_options_init(&o);
    if (lua_istable(L, 1))
        read_options(L, &o);
    lpg_runtime *r = lua_newuserdatauv(L, sizeof *r, 0);
    r->rt = NULL;
    luaL_setmetatable(L, LPG_RUNTIME_MT);
    pg_status st = pg_runtime_new(&o, &r->rt);
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 1;
}

/* Close once: the handle is dropped before the call, so even a failed free (e.g. the trace
 * could not be written: the runtime is gone all the same) is never retried. */
static pg_status close_runtime(lpg_runtime *r, uint64_t timeout_ns) {
    pg_runtime *rt = r->rt;
    r->rt = NULL;
    return rt ? pg_runtime_free_timeout(rt, timeout_ns) : PG_OK;
}

/* An optional time limit in seconds (nil: none). math.huge is no limit too, and so is anything
 * past 1e9 s (31 years; the nanoseconds must fit the core's uint64). */
static uint64_t opt_timeout(lua_State *L, int i) {
    if (lua_isnoneornil(L, i))
        return UINT64_MAX;
    lua_Number s = luaL_checknumber(L, i);
    if (!(s >= 0))
        lpg_error(L, PG_ERROR_ARGUMENT,
                  "timeout must be nil or a number of seconds >= 0 (math.huge: no limit), not %f",
                  (double)s);
    return s > 1e9 ? UINT64_MAX : (uint64_t)(s * 1e9);
}

static int rt_close(lua_State *L) {
    lpg_runtime *r = luaL_checkudata(L, 1, LPG_RUNTIME_MT);
    pg_status st = close_runtime(r, opt_timeout(L, 2));
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 0;
}

/* PG_CLOSE_TIMEOUT seconds (10): how long a close nobody asked for waits for running work. */
static uint64_t unasked_close_limit(void) {
    const char *e = getenv("PG_CLOSE_TIMEOUT");
    double s = e && *e ? atof(e) : 10.0;
    return s > 0 && s < 1e9 ? (uint64_t)(s * 1e9) : UINT64_MAX;
}

/* Nobody waits for a collected runtime (or the end of the script): a kernel that never ends
 * must not hang the interpreter, so it waits at most PG_CLOSE_TIMEOUT seconds. */
static int rt_gc(lua_State *L) {
    if (close_runtime(luaL_checkudata(L, 1, LPG_RUNTIME_MT), unasked_close_limit()) ==
        PG_ERROR_TIMEOUT)
        fprintf(stderr, "polygpu: %s\n", pg_last_error());
    return 0;
}

/* `local rt <close> = ...`: Lua passes the error leaving the scope (nil on a normal exit) as the
 * second argument, which is no timeout. A normal exit closes as rt:close() does and raises its
 * failure. Leaving on an error, the script's error must reach its handler: a failed close
 * raising here would replace it, so that close waits as the collector's does and its failure
 * goes to stderr. */
static int rt_close_scope(lua_State *L) {
    /* On several ranks the others would wait for this one: the error ends every rank
     * (pg_ranks_abort), as MPI's contract has it. */
    if (!lua_isnoneornil(L, 2) && pg_ranks_active()) {
        const char *msg = luaL_tolstring(L, 2, NULL);
        char why[1024];
        snprintf(why, sizeof why, "uncaught Lua error: %s", msg ? msg : "?");
        fprintf(stderr, "%s\n", msg ? msg : "?");
        pg_ranks_abort(1, why);
    }
    lpg_runtime *r = luaL_checkudata(L, 1, LPG_RUNTIME_MT);
    if (lua_isnoneornil(L, 2)) {
        pg_status st = close_runtime(r, UINT64_MAX);
        return st != PG_OK ? lpg_fail(L, st) : 0;
    }
    if (close_runtime(r, unasked_close_limit()) != PG_OK)
        fprintf(stderr, "polygpu: closing the runtime while leaving its scope on an error: %s\n",
                pg_last_error());
    return 0;
}

static int rt_tostring(lua_State *L) {
    lpg_runtime *r = luaL_checkudata(L, 1, LPG_RUNTIME_MT);
    lua_pushfstring(L, "polygpu.runtime: %p%s", (void *)r, r->rt ? "" : " (closed)");
    return 1;
}

static int rt_sync(lua_State *L) {
    pg_runtime *rt = lpg_check_runtime(L, 1)->rt;
    uint64_t limit = opt_timeout(L, 2);
    pg_status st = limit == UINT64_MAX ? pg_runtime_sync(rt) : pg_runtime_sync_timeout(rt, limit);
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 0;
}

void lpg_push_u64(lua_State *L, uint64_t v) {
    if (v <= (uint64_t)LUA_MAXINTEGER)
        lua_pushinteger(L, (lua_Integer)v);
    else
        lua_pushnumber(L, (lua_Number)v);
}

void lpg_set_u64(lua_State *L, const char *key, uint64_t v) {
    lpg_push_u64(L, v);
    lua_setfield(L, -2, key);
}

/* rt:stats(): counters; link_bytes[src + 1][dst + 1] where location 0 is the host and d + 1
 * device d (so link_bytes[1] is the host's row). */
/* Field `name` of the table on top: {[d + 1] = v[d]} for the devices whose figure is at least
 * `least` (below it: unknown, left nil). */
static void per_device(lua_State *L, const char *name, const double *v, int ndevices,
                       double least) {
    lua_createtable(L, ndevices, 0);
    for (int d = 0; d < ndevices && d < PG_MAX_DEVICES; d++)
        if (v[d] >= least) {
            lua_pushnumber(L, v[d]);
            lua_rawseti(L, -2, d + 1);
        }
    lua_setfield(L, -2, name);
}

/* rt:clock(): seconds since the runtime was made — virtual time on simulated devices. */
static int rt_clock(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    uint64_t ns = 0;
    pg_status st = pg_runtime_clock(r->rt, &ns);
    if (st != PG_OK)
        return lpg_fail(L, st);
    lua_pushnumber(L, (lua_Number)ns * 1e-9);
    return 1;
}

static int rt_stats(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    pg_stats s;
    pg_status st = pg_runtime_stats(r->rt, &s);
    if (st != PG_OK)
        return lpg_fail(L, st);
    lua_createtable(L, 0, 15);
    lua_pushinteger(L, s.ndevices);
    lua_setfield(L, -2, "ndevices");
    lpg_set_u64(L, "computations", s.computations);
    lpg_set_u64(L, "kernels", s.kernels);
    lpg_set_u64(L, "host_accesses", s.host_accesses);
    lpg_set_u64(L, "copies", s.copies);
    lpg_set_u64(L, "bytes_moved", s.bytes_moved);
    lpg_set_u64(L, "host_wait_ns", s.host_wait_ns);
    lpg_set_u64(L, "pending", s.pending);
    lpg_set_u64(L, "evictions", s.evictions);
    lpg_set_u64(L, "bytes_evicted", s.bytes_evicted);
    lpg_set_u64(L, "writebacks", s.writebacks);
    lpg_set_u64(L, "copies_elided", s.copies_elided); /* elide_copies: values are wrong */
    lpg_set_u64(L, "bytes_elided", s.bytes_elided);
    lua_pushinteger(L, s.rank);
    lua_setfield(L, -2, "rank");
    lua_pushinteger(L, s.nranks);
    lua_setfield(L, -2, "nranks");
    lpg_set_u64(L, "rank_messages_sent", s.rank_messages_sent);
    lpg_set_u64(L, "rank_messages_received", s.rank_messages_received);
    lpg_set_u64(L, "rank_bytes_sent", s.rank_bytes_sent);
    lpg_set_u64(L, "rank_bytes_received", s.rank_bytes_received);
    lpg_set_u64(L, "rank_cache_hits", s.rank_cache_hits);
    int nloc = s.ndevices + 1 <= PG_MAX_DEVICES + 1 ? s.ndevices + 1 : PG_MAX_DEVICES + 1;
    lua_createtable(L, nloc, 0);
    for (int src = 0; src < nloc; src++) {
        lua_createtable(L, nloc, 0);
        for (int dst = 0; dst < nloc; dst++) {
            lpg_push_u64(L, s.link_bytes[src][dst]);
            lua_rawseti(L, -2, dst + 1);
        }
        lua_rawseti(L, -2, src + 1);
    }
    lua_setfield(L, -2, "link_bytes");
    /* per device d at [d + 1]: joules since the start and watts under load; nil where unknown
     * (iterate 1..ndevices) */
    per_device(L, "energy_joules", s.energy_joules, s.ndevices, 0.0);
    per_device(L, "power_watts", s.power_watts, s.ndevices, DBL_MIN);
    return 1;
}

/* rt:power_choice(): the devices the power budget (option power_limit) lets the runtime use:
 * {devices = {ids in the order taken, 0-based as rt:devices() ids}, limit_watts (nil: no
 * budget), used_watts, performance_from = "models" | "nominal", watts = {[d + 1] = W or nil},
 * performance = {[d + 1] = figure}}. */
static int rt_power_choice(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    pg_power_choice c;
    pg_status st = pg_runtime_power_choice(r->rt, &c);
    if (st != PG_OK)
        return lpg_fail(L, st);
    lua_createtable(L, 0, 6);
    lua_createtable(L, c.nchosen, 0);
    for (int i = 0; i < c.nchosen; i++) {
        lua_pushinteger(L, c.chosen[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "devices");
    if (c.limit_watts > 0) {
        lua_pushnumber(L, c.limit_watts);
        lua_setfield(L, -2, "limit_watts");
    }
    lua_pushnumber(L, c.used_watts);
    lua_setfield(L, -2, "used_watts");
    lua_pushstring(L, c.from_models ? "models" : "nominal");
    lua_setfield(L, -2, "performance_from");
    per_device(L, "watts", c.watts, c.ndevices, DBL_MIN);
    per_device(L, "performance", c.performance, c.ndevices, -DBL_MAX);
    return 1;
}

/* rt:models(): the performance models (option models; on by default with policy
 * "min-finish-time"), one table {kernel, device_class, bytes, median_ns, samples} each, loaded
 * from and saved to <cache_dir>/models/. Empty when models are off. */
static int rt_models(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    int n = 0;
    pg_status st = pg_runtime_models(r->rt, &n);
    if (st != PG_OK)
        return lpg_fail(L, st);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        pg_model_info m;
        if ((st = pg_runtime_model(r->rt, i, &m)) != PG_OK)
            return lpg_fail(L, st);
        lua_createtable(L, 0, 5);
        lua_pushstring(L, m.kernel);
        lua_setfield(L, -2, "kernel");
        lua_pushstring(L, m.device_class);
        lua_setfield(L, -2, "device_class");
        lpg_set_u64(L, "bytes", m.bytes);
        lpg_set_u64(L, "median_ns", m.median_ns);
        lua_pushinteger(L, m.samples);
        lua_setfield(L, -2, "samples");
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* {x, y, z} as a sequence, the shape k(grid, block) takes. */
static void push_dim3(lua_State *L, pg_dim3 d) {
    lua_createtable(L, 3, 0);
    lua_pushinteger(L, (lua_Integer)d.x);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, (lua_Integer)d.y);
    lua_rawseti(L, -2, 2);
    lua_pushinteger(L, (lua_Integer)d.z);
    lua_rawseti(L, -2, 3);
}

/* rt:devices(): one table per device, in device-id order; `id` is polygpu's 0-based id, the
 * one the DAG's "device" fields use. */
static int rt_devices(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    pg_device_info info[PG_MAX_DEVICES];
    int count = 0;
    pg_status st = pg_runtime_devices(r->rt, info, PG_MAX_DEVICES, &count);
    if (st != PG_OK)
        return lpg_fail(L, st);
    if (count > PG_MAX_DEVICES)
        count = PG_MAX_DEVICES;
    lua_createtable(L, count, 0);
    for (int i = 0; i < count; i++) {
        lua_createtable(L, 0, 13);
        lua_pushinteger(L, info[i].id);
        lua_setfield(L, -2, "id");
        int gpu = info[i].device_class == PG_CLASS_GPU; /* what the registry says */
        lua_pushstring(L, gpu ? "cuda" : "cpu");
        lua_setfield(L, -2, "kind");
        lua_pushstring(L, gpu ? "gpu" : "cpu");
        lua_setfield(L, -2, "class");
        lua_pushstring(L, info[i].backend);
        lua_setfield(L, -2, "backend");
        lua_pushstring(L, info[i].name);
        lua_setfield(L, -2, "name");
        lpg_set_u64(L, "memory_bytes", info[i].memory_bytes);
        lua_pushinteger(L, info[i].compute_major);
        lua_setfield(L, -2, "compute_major");
        lua_pushinteger(L, info[i].compute_minor);
        lua_setfield(L, -2, "compute_minor");
        lua_pushinteger(L, info[i].multiprocessors);
        lua_setfield(L, -2, "multiprocessors");
        lua_pushinteger(L, (lua_Integer)info[i].max_threads_per_block);
        lua_setfield(L, -2, "max_threads_per_block");
        push_dim3(L, info[i].max_block);
        lua_setfield(L, -2, "max_block");
        push_dim3(L, info[i].max_grid);
        lua_setfield(L, -2, "max_grid");
        lpg_set_u64(L, "max_shared_memory_per_block", info[i].max_shared_memory_per_block);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static pg_dag_format check_format(lua_State *L, int idx, pg_dag_format dflt) {
    static const char *const names[] = {"dot", "json", NULL};
    if (lua_isnoneornil(L, idx))
        return dflt;
    lpg_check_cstring(L, idx, "DAG format"); /* "dot\0x" would pass as "dot" */
    return luaL_checkoption(L, idx, NULL, names) == 0 ? PG_DAG_DOT : PG_DAG_JSON;
}

/* rt:dag() -> table {vertices = {...}, edges = {{from, to}, ...}}; rt:dag("json" | "dot") ->
 * the export as a string. */
static int rt_dag(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    if (lua_isnoneornil(L, 2))
        return lpg_push_dag(L, r->rt);
    pg_dag_format fmt = check_format(L, 2, PG_DAG_JSON);
    char *s = NULL;
    pg_status st = pg_dag_export_string(r->rt, fmt, &s);
    if (st != PG_OK)
        return lpg_fail(L, st);
    /* Copied into Lua, then freed. */
    lua_pushstring(L, s);
    pg_string_free(s);
    return 1;
}

/* rt:export_dag(path [, "dot" | "json"]): the format defaults to JSON for a .json path, else
 * DOT. */
static int rt_export_dag(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    size_t len;
    const char *path = lpg_check_cstring(L, 2, "path");
    len = strlen(path);
    int json_name = len >= 5 && !strcmp(path + len - 5, ".json");
    pg_dag_format fmt = check_format(L, 3, json_name ? PG_DAG_JSON : PG_DAG_DOT);
    pg_status st = pg_dag_export(r->rt, fmt, path);
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 0;
}

/* rt:ranks(): this process's rank (MPI's number, from 0) and the number of ranks. */
static int rt_ranks(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    int rank = 0, nranks = 1;
    pg_status st = pg_runtime_ranks(r->rt, &rank, &nranks);
    if (st != PG_OK)
        return lpg_fail(L, st);
    lua_pushinteger(L, rank);
    lua_pushinteger(L, nranks);
    return 2;
}

static int rt_write_trace(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    pg_status st = pg_trace_write(r->rt, lpg_check_cstring(L, 2, "path"));
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 0;
}

static const luaL_Reg methods[] = {
    {"array", lpg_array_new},
    {"kernel", lpg_kernel_new},
    {"task", lpg_runtime_task},
    {"record", lpg_runtime_record},
    {"sync", rt_sync},
    {"stats", rt_stats},
    {"ranks", rt_ranks},
    {"clock", rt_clock},
    {"devices", rt_devices},
    {"models", rt_models},
    {"power_choice", rt_power_choice},
    {"dag", rt_dag},
    {"export_dag", rt_export_dag},
    {"write_trace", rt_write_trace},
    {"close", rt_close},
    {NULL, NULL},
};

const luaL_Reg *lpg_runtime_methods(void) {
    return methods;
}

void lpg_runtime_register(lua_State *L) {
    static const luaL_Reg meta[] = {
        {"__gc", rt_gc},
        {"__close", rt_close_scope},
        {"__tostring", rt_tostring},
        {NULL, NULL},
    };
    luaL_newmetatable(L, LPG_RUNTIME_MT);
    luaL_setfuncs(L, meta, 0);
    lpg_push_index(L, LPG_RUNTIME_MT, methods, NULL);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, "polygpu.runtime"); /* getmetatable(rt) gives this, not the table */
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}

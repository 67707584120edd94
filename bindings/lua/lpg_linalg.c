/* lpg_linalg.c: rt:task(name) (the built-in tasks of pg_task_builtin as kernels) and the
 * polygpu.linalg table: gemm, axpy and dot launched as tasks, the dtype chosen from the arrays. */
#include "lpg_internal.h"

#include <string.h>

/* Registry key of the task cache: a table with weak keys (an ephemeron table), runtime
 * userdata -> {task name -> kernel userdata}, so each runtime makes each task once. */
#define LPG_TASKS_KEY "polygpu.tasks"

/* Push a new kernel userdata for the built-in task `name` of the runtime at rt_idx. */
static void push_task(lua_State *L, int rt_idx, const char *name) {
    lpg_runtime *r = lpg_check_runtime(L, rt_idx);
    lpg_kernel *k = lua_newuserdatauv(L, sizeof *k, 2);
    k->k = NULL;
    k->owner = r;
    luaL_setmetatable(L, LPG_KERNEL_MT);
    lua_pushvalue(L, rt_idx);
    lua_setiuservalue(L, -2, 1);
    lua_pushstring(L, name);
    lua_setiuservalue(L, -2, 2);
    pg_status st = pg_task_builtin(r->rt, name, &k->k);
    if (st != PG_OK) {
        k->k = NULL;
        lpg_fail(L, st);
    }
}

/* rt:task(name): the built-in task `name` ("gemm_f32", "axpy_f64", "dot_f32", ...) as a new
 * kernel, launched as k(1, 1)(args...) (grid and block are ignored). */
int lpg_runtime_task(lua_State *L) {
    lpg_check_runtime(L, 1);
    size_t len;
    const char *name = luaL_checklstring(L, 2, &len);
    if (strlen(name) != len)
        return lpg_error(L, PG_ERROR_ARGUMENT, "task name '%s...' contains a NUL character", name);
    push_task(L, 1, name);
    return 1;
}

/* The cached task `name` of the runtime at rt_idx (made on first use); the kernel userdata is
 * left on the stack so that it stays alive during the launch. */
static lpg_kernel *cached_task(lua_State *L, int rt_idx, const char *name) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, LPG_TASKS_KEY) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, LPG_TASKS_KEY);
    }
    lua_pushvalue(L, rt_idx);
    if (lua_rawget(L, -2) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, rt_idx);
        lua_pushvalue(L, -2);
        lua_rawset(L, -4);
    }
    lua_remove(L, -2); /* the cache; the runtime's table stays */
    lpg_kernel *k = NULL;
    if (lua_getfield(L, -1, name) == LUA_TUSERDATA) {
        k = luaL_checkudata(L, -1, LPG_KERNEL_MT);
        if (!k->k)
            k = NULL;
    }
    if (!k) {
        lua_pop(L, 1);
        push_task(L, rt_idx, name);
        k = lua_touserdata(L, -1);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, name);
    }
    lua_remove(L, -2); /* the runtime's table */
    return k;
}

/* The array argument at idx, named `what` in errors of call `fn`. */
static lpg_array *check_operand(lua_State *L, int idx, const char *fn, const char *what) {
    lpg_array *a = lpg_test_array(L, idx);
    if (!a)
        lpg_error(L, PG_ERROR_ARGUMENT, "%s: %s must be a polygpu array, got %s", fn, what,
                  luaL_typename(L, idx));
    else if (!a->a)
        lpg_error(L, PG_ERROR_STATE, "%s: %s was freed", fn, what);
    else if (!a->owner->rt)
        lpg_error(L, PG_ERROR_STATE, "%s: %s belongs to a closed runtime", fn, what);
    return a;
}

/* The suffix of the task for the arrays' common dtype, or an error naming the dtypes. */
static const char *dtype_suffix(lua_State *L, const char *fn, lpg_array **arrays,
                                const char **names, int n) {
    pg_dtype dt = arrays[0]->desc.dtype;
    for (int i = 1; i < n; i++)
        if (arrays[i]->desc.dtype != dt) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            for (int j = 0; j < n; j++) {
                if (j)
                    luaL_addstring(&b, ", ");
                lua_pushfstring(L, "%s %s", names[j], pg_dtype_name(arrays[j]->desc.dtype));
                luaL_addvalue(&b);
            }
            luaL_pushresult(&b);
            lpg_error(L, PG_ERROR_ARGUMENT, "%s: the arrays must have one dtype, got %s", fn,
                      lua_tostring(L, -1));
        }
    if (dt == PG_FLOAT32)
        return "_f32";
    if (dt == PG_FLOAT64)
        return "_f64";
    lpg_error(L, PG_ERROR_ARGUMENT, "%s: arrays of float32 or float64 are supported, got %s", fn,
              pg_dtype_name(dt));
    return NULL;
}

static void launch_task(lua_State *L, int rt_idx, const char *op, const char *suffix,
                        const pg_arg *args, int nargs) {
    char name[32];
    strcpy(name, op);
    strcat(name, suffix);
    lpg_kernel *k = cached_task(L, rt_idx, name);
    pg_dim3 one = {1, 1, 1};
    pg_status st = pg_kernel_launch(k->k, one, one, 0, args, nargs);
    if (st != PG_OK)
        lpg_fail(L, st);
    lua_pop(L, 1);
}

/* A number option of the gemm table at idx (nil: dflt). */
static double opt_number(lua_State *L, int idx, const char *key, double dflt) {
    if (lua_isnoneornil(L, idx))
        return dflt;
    int t = lua_getfield(L, idx, key);
    double v = dflt;
    if (t == LUA_TNUMBER)
        v = (double)lua_tonumber(L, -1);
    else if (t != LUA_TNIL)
        lpg_error(L, PG_ERROR_ARGUMENT, "gemm: option %s must be a number, got %s", key,
                  luaL_typename(L, -1));
    lua_pop(L, 1);
    return v;
}

static int opt_bool(lua_State *L, int idx, const char *key) {
    if (lua_isnoneornil(L, idx))
        return 0;
    int t = lua_getfield(L, idx, key);
    int v = 0;
    if (t == LUA_TBOOLEAN)
        v = lua_toboolean(L, -1);
    else if (t != LUA_TNIL)
        lpg_error(L, PG_ERROR_ARGUMENT, "gemm: option %s must be a boolean, got %s", key,
                  luaL_typename(L, -1));
    lua_pop(L, 1);
    return v;
}

/* The device mask of option `devices` (a sequence of 0-based device ids; nil: 0, every
 * device). */
static uint32_t opt_devices(lua_State *L, int idx, int ndev) {
    if (lua_isnoneornil(L, idx))
        return 0;
    int t = lua_getfield(L, idx, "devices");
    uint32_t mask = 0;
    if (t == LUA_TTABLE) {
        lua_Integer n = (lua_Integer)luaL_len(L, -1);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, i);
            int isint = 0;
            lua_Integer d = lua_tointegerx(L, -1, &isint);
            if (!isint || d < 0 || d >= ndev)
                lpg_error(L, PG_ERROR_ARGUMENT,
                          "gemm: devices[%I] is %s, not a device id of this runtime (0 to %d)", i,
                          luaL_tolstring(L, -1, NULL), ndev - 1);
            mask |= 1u << d;
            lua_pop(L, 1);
        }
        if (!mask)
            lpg_error(L, PG_ERROR_ARGUMENT, "gemm: devices is empty: name at least one device");
    } else if (t != LUA_TNIL) {
        lpg_error(L, PG_ERROR_ARGUMENT,
                  "gemm: option devices must be a table of device ids, got %s",
                  luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    return mask;
}

static int64_t opt_tile(lua_State *L, int idx) {
    if (lua_isnoneornil(L, idx))
        return 0;
    int t = lua_getfield(L, idx, "tile");
    int isint = 0;
    lua_Integer v = t == LUA_TNIL ? 0 : lua_tointegerx(L, -1, &isint);
    if (t != LUA_TNIL && (!isint || v < 1))
        lpg_error(L, PG_ERROR_ARGUMENT,
                  "gemm: option tile must be a positive number of rows, got %s",
                  luaL_tolstring(L, -1, NULL));
    lua_pop(L, 1);
    return (int64_t)v;
}

static pg_gemm_metric opt_metric(lua_State *L, int idx) {
    if (lua_isnoneornil(L, idx))
        return PG_GEMM_PERF;
    int t = lua_getfield(L, idx, "metric");
    pg_gemm_metric m = PG_GEMM_PERF;
    if (t == LUA_TSTRING)
        lpg_check_cstring(L, -1, "gemm: option metric");
    if (t == LUA_TSTRING && !strcmp(lua_tostring(L, -1), "edp"))
        m = PG_GEMM_EDP;
    else if (t != LUA_TNIL && !(t == LUA_TSTRING && !strcmp(lua_tostring(L, -1), "perf")))
        lpg_error(L, PG_ERROR_ARGUMENT, "gemm: option metric must be \"perf\" or \"edp\", got %s",
                  luaL_tolstring(L, -1, NULL));
    lua_pop(L, 1);
    return m;
}

/* The report as a table: devices (0-based ids, ascending), rows (per device of `devices`),
 * tile, tiles, predicted_s, predicted_j (nil: unknown), from_models. */
static void push_report(lua_State *L, const pg_gemm_report *r) {
    lua_createtable(L, 0, 7);
    lua_newtable(L);
    lua_newtable(L);
    int i = 1;
    for (int d = 0; d < PG_MAX_DEVICES; d++)
        if (r->devices >> d & 1) {
            lua_pushinteger(L, d);
            lua_rawseti(L, -3, i);
            lua_pushinteger(L, (lua_Integer)r->rows[d]);
            lua_rawseti(L, -2, i);
            i++;
        }
    lua_setfield(L, -3, "rows");
    lua_setfield(L, -2, "devices");
    lua_pushinteger(L, (lua_Integer)r->tile);
    lua_setfield(L, -2, "tile");
    lua_pushinteger(L, (lua_Integer)r->tiles);
    lua_setfield(L, -2, "tiles");
    lua_pushnumber(L, r->predicted_s);
    lua_setfield(L, -2, "predicted_s");
    if (r->predicted_j >= 0) {
        lua_pushnumber(L, r->predicted_j);
        lua_setfield(L, -2, "predicted_j");
    }
    lua_pushboolean(L, r->from_models);
    lua_setfield(L, -2, "from_models");
}

/* polygpu.linalg.gemm(rt, a, b, c [, {alpha = 1, beta = 0, trans_a = false, trans_b = false,
 * devices = {ids}, tile = rows, metric = "perf" | "edp"}]): c = alpha * op(a) * op(b) + beta *
 * c, row-major 2-D arrays of one dtype (float32 or float64); op(a) is m x k, op(b) k x n, c m x
 * n. The tiled GEMM (pg_linalg_gemm): tiles of c's rows over the devices a model picks.
 * Returns at once, with the plan as a table. */
static int la_gemm(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    static const char *names[] = {"a", "b", "c"};
    lpg_array *arr[3];
    for (int i = 0; i < 3; i++)
        arr[i] = check_operand(L, i + 2, "gemm", names[i]);
    if (!lua_isnoneornil(L, 5)) {
        if (lua_type(L, 5) != LUA_TTABLE)
            return lpg_error(L, PG_ERROR_ARGUMENT,
                             "gemm: options must be a table {alpha, beta, trans_a, trans_b, "
                             "devices, tile, metric}, got %s",
                             luaL_typename(L, 5));
        lua_pushnil(L);
        while (lua_next(L, 5)) {
            static const char *const keys[] = {"alpha",   "beta", "trans_a", "trans_b",
                                               "devices", "tile", "metric"};
            const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
            int known = 0;
            for (size_t i = 0; key && i < sizeof keys / sizeof *keys; i++)
                known |= !strcmp(key, keys[i]);
            if (!known)
                return lpg_error(L, PG_ERROR_ARGUMENT,
                                 "gemm: unknown option %s; the options are alpha, beta, trans_a, "
                                 "trans_b, devices, tile and metric",
                                 luaL_tolstring(L, -2, NULL));
            lua_pop(L, 1);
        }
    }
    pg_gemm_options o;
    pg_gemm_options_init(&o);
    o.alpha = opt_number(L, 5, "alpha", 1.0);
    o.beta = opt_number(L, 5, "beta", 0.0);
    o.trans_a = opt_bool(L, 5, "trans_a");
    o.trans_b = opt_bool(L, 5, "trans_b");
    int ndev = 0;
    pg_status st = pg_runtime_devices(r->rt, NULL, 0, &ndev);
    if (st != PG_OK)
        return lpg_fail(L, st);
    o.devices = opt_devices(L, 5, ndev);
    o.tile = opt_tile(L, 5);
    o.metric = opt_metric(L, 5);
    int ta = o.trans_a, tb = o.trans_b;
    dtype_suffix(L, "gemm", arr, names, 3);
    for (int i = 0; i < 3; i++)
        if (arr[i]->desc.ndim != 2) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            for (int d = 0; d < arr[i]->desc.ndim; d++) {
                if (d)
                    luaL_addstring(&b, ", ");
                lua_pushinteger(L, (lua_Integer)arr[i]->desc.shape[d]);
                luaL_addvalue(&b);
            }
            luaL_pushresult(&b);
            return lpg_error(L, PG_ERROR_ARGUMENT, "gemm: %s must be a 2-D array, got shape {%s}",
                             names[i], lua_tostring(L, -1));
        }
    int64_t ar = arr[0]->desc.shape[0], ac = arr[0]->desc.shape[1];
    int64_t br = arr[1]->desc.shape[0], bc = arr[1]->desc.shape[1];
    int64_t m = arr[2]->desc.shape[0], n = arr[2]->desc.shape[1];
    int64_t m_a = ta ? ac : ar, k = ta ? ar : ac;
    int64_t k_b = tb ? bc : br, n_b = tb ? br : bc;
    if (m_a != m || n_b != n || k_b != k)
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         "gemm: shapes do not fit: op(a) is %I x %I, op(b) %I x %I, c %I x %I "
                         "(op(a) must be m x k, op(b) k x n, c m x n)",
                         (lua_Integer)m_a, (lua_Integer)k, (lua_Integer)k_b, (lua_Integer)n_b,
                         (lua_Integer)m, (lua_Integer)n);
    pg_gemm_report rep;
    st = pg_linalg_gemm(r->rt, arr[0]->a, arr[1]->a, arr[2]->a, &o, &rep);
    if (st != PG_OK)
        return lpg_fail(L, st);
    push_report(L, &rep);
    return 1;
}

/* polygpu.linalg.axpy(rt, alpha, x, y): y = alpha * x + y over #x elements (y at least as
 * many). */
static int la_axpy(lua_State *L) {
    lpg_check_runtime(L, 1);
    if (lua_type(L, 2) != LUA_TNUMBER)
        return lpg_error(L, PG_ERROR_ARGUMENT, "axpy: alpha must be a number, got %s",
                         luaL_typename(L, 2));
    double alpha = (double)lua_tonumber(L, 2);
    static const char *names[] = {"x", "y"};
    lpg_array *arr[2] = {check_operand(L, 3, "axpy", "x"), check_operand(L, 4, "axpy", "y")};
    const char *suffix = dtype_suffix(L, "axpy", arr, names, 2);
    if (arr[1]->desc.size < arr[0]->desc.size)
        return lpg_error(L, PG_ERROR_ARGUMENT, "axpy: y has %I elements, fewer than x's %I",
                         (lua_Integer)arr[1]->desc.size, (lua_Integer)arr[0]->desc.size);
    pg_arg args[4] = {pg_arg_array(arr[0]->a), pg_arg_array(arr[1]->a),
                      pg_arg_int((int64_t)arr[0]->desc.size), pg_arg_double(alpha)};
    launch_task(L, 1, "axpy", suffix, args, 4);
    return 0;
}

/* polygpu.linalg.dot(rt, x, y, out): out[1] = x . y (x and y of one size, one dtype with out). */
static int la_dot(lua_State *L) {
    lpg_check_runtime(L, 1);
    static const char *names[] = {"x", "y", "out"};
    lpg_array *arr[3];
    for (int i = 0; i < 3; i++)
        arr[i] = check_operand(L, i + 2, "dot", names[i]);
    const char *suffix = dtype_suffix(L, "dot", arr, names, 3);
    if (arr[0]->desc.size != arr[1]->desc.size)
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         "dot: x has %I elements and y %I: they must be equal",
                         (lua_Integer)arr[0]->desc.size, (lua_Integer)arr[1]->desc.size);
    pg_arg args[4] = {pg_arg_array(arr[0]->a), pg_arg_array(arr[1]->a), pg_arg_array(arr[2]->a),
                      pg_arg_int((int64_t)arr[0]->desc.size)};
    launch_task(L, 1, "dot", suffix, args, 4);
    return 0;
}

void lpg_push_linalg(lua_State *L) {
    static const luaL_Reg funcs[] = {
        {"gemm", la_gemm},
        {"axpy", la_axpy},
        {"dot", la_dot},
        {NULL, NULL},
    };
    luaL_newlib(L, funcs);
}

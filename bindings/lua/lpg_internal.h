/* lpg_internal.h: what the Lua binding's files share: userdata layouts, error raising, element
 * conversion, the DAG as tables. Built on polygpu.h only. */
#ifndef LPG_INTERNAL_H
#define LPG_INTERNAL_H

#include <lauxlib.h>
#include <lua.h>

#include "polygpu.h"

#define LPG_RUNTIME_MT "polygpu.runtime"
#define LPG_ARRAY_MT "polygpu.array"
#define LPG_KERNEL_MT "polygpu.kernel"

/* Runtime userdata. rt becomes NULL once closed (rt:close(), __close or __gc); the userdata
 * itself outlives that while arrays and kernels still reference it. */
typedef struct lpg_runtime {
    pg_runtime *rt;
} lpg_runtime;

/* Array userdata; user value 1 is the runtime userdata, so the runtime is collected last.
 * The descriptor is cached: dtype and shape never change. a is NULL once freed. */
typedef struct lpg_array {
    pg_array *a;
    lpg_runtime *owner;
    pg_array_desc desc;
} lpg_array;

/* Kernel userdata; user value 1 is the runtime userdata, user value 2 the kernel's name. */
typedef struct lpg_kernel {
    pg_kernel *k;
    lpg_runtime *owner;
} lpg_kernel;

/* Raise a Lua error for the failed pg_* call that returned `st`: "polygpu: <kind> error:
 * <pg_last_error()>" (plus the compiler log for compile errors). Call it right after the
 * failing call, before anything else touches polygpu on this thread. */
/* A uint64 as a Lua integer, or a float past LUA_MAXINTEGER; into field key of the table on top. */
void lpg_push_u64(lua_State *L, uint64_t v);
void lpg_set_u64(lua_State *L, const char *key, uint64_t v);
int lpg_fail(lua_State *L, pg_status st);
/* polygpu.node_status() (lpg_node.c) */
int lpg_node_status(lua_State *L);
/* lpg_fail in two steps, for a caller that must clean up (with more polygpu calls) between the
 * failure and the raise: push the message now, raise it later with the message on top. */
void lpg_push_failure(lua_State *L, pg_status st);
int lpg_raise(lua_State *L, pg_status st);
/* Raise an error of the binding's own in the same form as lpg_fail's. */
int lpg_error(lua_State *L, pg_status st, const char *fmt, ...);

/* The string at idx (luaL_checklstring; nil gives NULL in the opt form), refusing one with a
 * NUL inside, which C would cut short: an argument error naming `what`. */
const char *lpg_check_cstring(lua_State *L, int idx, const char *what);
const char *lpg_opt_cstring(lua_State *L, int idx, const char *what);

/* The runtime userdata at `idx`, open (an error if it was closed). */
lpg_runtime *lpg_check_runtime(lua_State *L, int idx);
/* The array at `idx`, not freed and with its runtime open. */
lpg_array *lpg_check_array(lua_State *L, int idx);
/* Whether the value at idx is a polygpu array (freed or not). */
lpg_array *lpg_test_array(lua_State *L, int idx);

/* Push the __index of a userdata type: a closure of `index` (NULL: methods only) whose
 * upvalues hold the methods (a static list) and the type's name, for lpg_index_method. */
void lpg_push_index(lua_State *L, const char *type, const luaL_Reg *methods, lua_CFunction index);
/* From such a closure: push the method named by the key at `key`, or raise an argument error
 * naming the key, the type and its methods, followed by `hint`. */
int lpg_index_method(lua_State *L, int key, const char *hint);

/* Register the metatables of the three userdata types. */
/* Ctrl-C ends a wait inside polygpu with an "interrupted" error (lpg_interrupt.c). */
void lpg_interrupt_install(void);
void lpg_runtime_register(lua_State *L);
void lpg_array_register(lua_State *L);
void lpg_kernel_register(lua_State *L);
void lpg_graph_register(lua_State *L);
/* rt:record(fn): fn's kernel calls recorded once, returned as a callable graph (lpg_graph.c). */
int lpg_runtime_record(lua_State *L);
/* rt:task(name): a built-in task (pg_task_builtin) as a kernel; polygpu.linalg's table of
 * gemm, axpy and dot pushed by lpg_push_linalg (lpg_linalg.c). */
int lpg_runtime_task(lua_State *L);
void lpg_push_linalg(lua_State *L);

/* Runtime methods that make new handles (also used by the module-level functions). */
int lpg_runtime_new(lua_State *L);
int lpg_array_new(lua_State *L);
int lpg_kernel_new(lua_State *L);
/* The remaining runtime methods, in the order of lpg_runtime_methods(). */
const luaL_Reg *lpg_runtime_methods(void);

/* A Lua number as a scalar pg_arg: an integer as int64, a float as float64 (math.type decides). */
pg_arg lpg_number_arg(lua_State *L, int idx);
/* Element conversion between Lua values and one element of `dtype` in host memory. */
void lpg_push_element(lua_State *L, pg_dtype dtype, const void *src);
/* Convert the value at idx into *dst; on a value of the wrong kind or out of range, raise an
 * argument error naming `what` and, when pos > 0, the 1-based position (e.g. "element 3"). */
void lpg_check_element(lua_State *L, int idx, pg_dtype dtype, void *dst, const char *what,
                       lua_Integer pos);

/* Push a snapshot of rt's DAG as {vertices = {...}, edges = {{from, to}, ...}} (the JSON
 * export's fields); raise the error if the snapshot fails. Returns 1. */
int lpg_push_dag(lua_State *L, pg_runtime *rt);

#endif

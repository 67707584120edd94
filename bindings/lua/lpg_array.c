/* lpg_array.c: the array userdata: 1-based element access, bulk table copies, lifetime. */
#include "lpg_internal.h"

#include <string.h>

lpg_array *lpg_test_array(lua_State *L, int idx) {
    return luaL_testudata(L, idx, LPG_ARRAY_MT);
}

static lpg_array *usable(lua_State *L, lpg_array *a) {
    if (!a->a)
        lpg_error(L, PG_ERROR_STATE, "the array was freed (free() or <close>); it cannot be used");
    else if (!a->owner->rt)
        lpg_error(L, PG_ERROR_STATE, "the array's runtime was closed; it cannot be used");
    return a;
}

lpg_array *lpg_check_array(lua_State *L, int idx) {
    return usable(L, luaL_checkudata(L, idx, LPG_ARRAY_MT));
}

/* The rank in field `owner` of the options table at idx (absent or nil: 0). */
static int owner_option(lua_State *L, int idx) {
    if (lua_isnoneornil(L, idx))
        return 0;
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_getfield(L, idx, "owner");
    int isint = 0;
    lua_Integer r = lua_isnil(L, -1) ? 0 : lua_tointegerx(L, -1, &isint);
    if (!lua_isnil(L, -1) && (!isint || r < INT32_MIN || r > INT32_MAX))
        return lpg_error(L, PG_ERROR_ARGUMENT, "array option owner: expected a rank, got %s",
                         luaL_tolstring(L, -1, NULL));
    lua_pop(L, 1);
    return (int)r;
}

/* rt:array(dtype, n | {d1, d2, ...} [, {owner = rank}]) */
int lpg_array_new(lua_State *L) {
    lpg_runtime *r = lpg_check_runtime(L, 1);
    int owner = owner_option(L, 4);
    lua_settop(L, 3);
    pg_dtype dtype;
    size_t len;
    const char *name = luaL_checklstring(L, 2, &len);
    if (strlen(name) != len) /* C would read "float32\0junk" as "float32" */
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         "dtype '%s...' contains a NUL character: expected a name such as "
                         "'float32'",
                         name);
    pg_status st = pg_dtype_parse(name, &dtype);
    if (st != PG_OK)
        return lpg_fail(L, st);
    int64_t shape[PG_MAX_DIMS];
    int ndim = 0;
    if (lua_type(L, 3) == LUA_TNUMBER) {
        lua_settop(L, 3);
        lua_createtable(L, 1, 0);
        lua_pushvalue(L, 3);
        lua_rawseti(L, -2, 1);
        lua_replace(L, 3);
    } else if (lua_type(L, 3) != LUA_TTABLE) {
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         "array shape: expected an element count or a table of dimensions, got %s",
                         luaL_typename(L, 3));
    }
    lua_Unsigned n = lua_rawlen(L, 3);
    if (n < 1 || n > PG_MAX_DIMS)
        return lpg_error(L, PG_ERROR_ARGUMENT, "array shape: %I dimensions; give 1 to %d",
                         (lua_Integer)n, PG_MAX_DIMS);
    for (ndim = 0; ndim < (int)n; ndim++) {
        int isint = 0;
        lua_rawgeti(L, 3, ndim + 1);
        lua_Integer d = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
        if (!isint)
            return lpg_error(L, PG_ERROR_ARGUMENT,
                             "array shape: dimension %d must be an integer, got %s", ndim + 1,
                             luaL_tolstring(L, -1, NULL));
        shape[ndim] = (int64_t)d;
        lua_pop(L, 1);
    }
    lpg_array *a = lua_newuserdatauv(L, sizeof *a, 1);
    memset(a, 0, sizeof *a);
    a->owner = r;
    luaL_setmetatable(L, LPG_ARRAY_MT);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    st = pg_array_new(r->rt, dtype, ndim, shape, &a->a);
    if (st != PG_OK) {
        a->a = NULL;
        return lpg_fail(L, st);
    }
    /* On failure the handle is already in a->a, so __gc frees it. */
    st = pg_array_describe(a->a, &a->desc);
    if (st == PG_OK && owner != 0)
        st = pg_array_owner_set(a->a, owner);
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 1;
}

/* The 0-based flat index for the 1-based Lua index at idx. */
static uint64_t check_index(lua_State *L, lpg_array *a, int idx) {
    int isint = 0;
    lua_Integer i = lua_tointegerx(L, idx, &isint);
    if (!isint)
        lpg_error(L, PG_ERROR_ARGUMENT, "array index %s is not an integer",
                  luaL_tolstring(L, idx, NULL));
    else if (i < 1 || (lua_Unsigned)i > a->desc.size)
        lpg_error(L, PG_ERROR_ARGUMENT,
                  "array index %I out of range: valid indices are 1 to %I (Lua counts from 1; "
                  "kernels see 0 to %I)",
                  i, (lua_Integer)a->desc.size, (lua_Integer)a->desc.size - 1);
    return (uint64_t)(i - 1);
}

/* Large enough for one element of any dtype. */
typedef union element {
    int64_t i;
    uint64_t u;
    double f;
} element;

/* a[i] reads element i; a.name is a method; any other key is an error, never nil. */
static int arr_index(lua_State *L) {
    lpg_array *a = luaL_checkudata(L, 1, LPG_ARRAY_MT);
    if (lua_type(L, 2) != LUA_TNUMBER)
        return lpg_index_method(L, 2, "; elements are a[1] .. a[#a] (integer indices)");
    usable(L, a);
    uint64_t i = check_index(L, a, 2);
    element e;
    pg_status st = pg_array_read(a->a, i, 1, &e);
    if (st != PG_OK)
        return lpg_fail(L, st);
    lpg_push_element(L, a->desc.dtype, &e);
    return 1;
}

static int arr_newindex(lua_State *L) {
    lpg_array *a = lpg_check_array(L, 1);
    if (lua_type(L, 2) == LUA_TSTRING)
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         "arrays take integer indices a[1] .. a[#a], not a string ('%s'): "
                         "their fields cannot be set",
                         lua_tostring(L, 2));
    if (lua_type(L, 2) != LUA_TNUMBER) {
        const char *tname = luaL_typename(L, 2);
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         "arrays take integer indices a[1] .. a[#a], not a %s (%s)", tname,
                         luaL_tolstring(L, 2, NULL));
    }
    uint64_t i = check_index(L, a, 2);
    element e;
    lpg_check_element(L, 3, a->desc.dtype, &e, "array element", (lua_Integer)i + 1);
    pg_status st = pg_array_write(a->a, i, 1, &e);
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 0;
}

static int arr_len(lua_State *L) {
    lpg_array *a = lpg_check_array(L, 1);
    lua_pushinteger(L, (lua_Integer)a->desc.size);
    return 1;
}

/* A scratch buffer owned by the Lua stack, so an error raised while it is in use leaks nothing. */
static void *scratch(lua_State *L, lpg_array *a) {
    size_t n = (size_t)a->desc.nbytes;
    return lua_newuserdatauv(L, n ? n : 1, 0);
}

/* a:to_table(): every element in row-major order, in one host read. */
static int arr_to_table(lua_State *L) {
    lpg_array *a = lpg_check_array(L, 1);
    char *buf = scratch(L, a);
    pg_status st = pg_array_read(a->a, 0, a->desc.size, buf);
    if (st != PG_OK)
        return lpg_fail(L, st);
    size_t esize = pg_dtype_size(a->desc.dtype);
    uint64_t n = a->desc.size;
    lua_createtable(L, n < (uint64_t)(1 << 30) ? (int)n : 1 << 30, 0);
    for (uint64_t i = 0; i < n; i++) {
        lpg_push_element(L, a->desc.dtype, buf + i * esize);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* a:from_table(t): t holds exactly #a numbers, row-major; one host write. Returns a. */
static int arr_from_table(lua_State *L) {
    lpg_array *a = lpg_check_array(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    lua_Unsigned n = lua_rawlen(L, 2);
    if (n != a->desc.size)
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         "from_table: the table has %I elements but the array has %I",
                         (lua_Integer)n, (lua_Integer)a->desc.size);
    char *buf = scratch(L, a);
    size_t esize = pg_dtype_size(a->desc.dtype);
    for (lua_Unsigned i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        lpg_check_element(L, 4, a->desc.dtype, buf + i * esize, "from_table: element",
                          (lua_Integer)i + 1);
        lua_pop(L, 1);
    }
    pg_status st = pg_array_write(a->a, 0, a->desc.size, buf);
    if (st != PG_OK)
        return lpg_fail(L, st);
    lua_settop(L, 1);
    return 1;
}

/* a:copy_from(b): a gets b's contents (same dtype and size), read straight from b's host view.
 * Returns a. */
static int arr_copy_from(lua_State *L) {
    lpg_array *a = lpg_check_array(L, 1);
    lpg_array *b = lpg_check_array(L, 2);
    if (a->desc.dtype != b->desc.dtype || a->desc.size != b->desc.size)
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         "copy_from: the arrays differ (%s[%I] here, %s[%I] given); they need the "
                         "same dtype and element count",
                         pg_dtype_name(a->desc.dtype), (lua_Integer)a->desc.size,
                         pg_dtype_name(b->desc.dtype), (lua_Integer)b->desc.size);
    lua_settop(L, 1);
    if (a->a == b->a)
        return 1;
    void *src = NULL;
    pg_status st = pg_array_map(b->a, PG_ACCESS_IN, &src);
    if (st != PG_OK)
        return lpg_fail(L, st);
    st = pg_array_write(a->a, 0, a->desc.size, src);
    if (st != PG_OK)
        lpg_push_failure(L, st); /* before the unmap resets the message */
    pg_status ust = pg_array_unmap(b->a);
    if (st != PG_OK)
        return lpg_raise(L, st);
    if (ust != PG_OK)
        return lpg_fail(L, ust);
    return 1;
}

/* a:prefetch([where]): start copying the current value to the host (no argument or "host")
 * or to device id `where` (counting from 0, as rt:devices() ids) and return at once. */
static int arr_prefetch(lua_State *L) {
    lpg_array *a = lpg_check_array(L, 1);
    int loc = PG_HOST;
    if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "host") == 0)
        loc = PG_HOST;
    else if (lua_isinteger(L, 2)) {
        lua_Integer d = lua_tointeger(L, 2);
        if (d < 0 || d > PG_MAX_DEVICES)
            return lpg_error(L, PG_ERROR_ARGUMENT, "prefetch: device %I is not a device id", d);
        loc = (int)d;
    } else if (!lua_isnoneornil(L, 2))
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         "prefetch: where must be \"host\" or a device id (an integer), not %s",
                         luaL_typename(L, 2));
    pg_status st = pg_array_prefetch(a->a, loc);
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 0;
}

static int arr_shape(lua_State *L) {
    lpg_array *a = lpg_check_array(L, 1);
    lua_createtable(L, a->desc.ndim, 0);
    for (int i = 0; i < a->desc.ndim; i++) {
        lua_pushinteger(L, (lua_Integer)a->desc.shape[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int arr_dtype(lua_State *L) {
    lua_pushstring(L, pg_dtype_name(lpg_check_array(L, 1)->desc.dtype));
    return 1;
}

/* a:id(): the array's id in the DAG export ("array" fields of a vertex's args). */
static int arr_id(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)lpg_check_array(L, 1)->desc.id);
    return 1;
}

/* Views ----------------------------------------------------------------------------------
 * A view is an array userdata like any other (same metatable, its own pg_array handle from
 * pg_array_slice, its own cached descriptor with the view's shape); user value 2 holds its
 * first row in the root array (0-based), for tostring. Plain arrays have no user value 2. */

/* The first row of the array at idx within its root array (0 for an array that is no view). */
static lua_Integer root_row(lua_State *L, int idx) {
    lua_Integer r = lua_getiuservalue(L, idx, 2) == LUA_TNUMBER ? lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    return r;
}

/* Push a view of rows [lo, hi) (0-based, hi exclusive, already checked) of the array a at
 * index idx. */
static void push_view(lua_State *L, int idx, lpg_array *a, int64_t lo, int64_t hi) {
    idx = lua_absindex(L, idx);
    lpg_array *v = lua_newuserdatauv(L, sizeof *v, 2);
    memset(v, 0, sizeof *v);
    v->owner = a->owner;
    luaL_setmetatable(L, LPG_ARRAY_MT);
    lua_getiuservalue(L, idx, 1); /* the runtime, kept alive by the view as by any array */
    lua_setiuservalue(L, -2, 1);
    lua_pushinteger(L, root_row(L, idx) + (lua_Integer)lo);
    lua_setiuservalue(L, -2, 2);
    pg_status st = pg_array_slice(a->a, lo, hi, &v->a);
    if (st != PG_OK) {
        v->a = NULL;
        lpg_fail(L, st);
    }
    /* On failure the handle is already in v->a, so __gc frees it. */
    st = pg_array_describe(v->a, &v->desc);
    if (st != PG_OK)
        lpg_fail(L, st);
}

/* The integer argument at idx for `what` of a call shown as `call`. */
static lua_Integer check_row_arg(lua_State *L, int idx, const char *call, const char *what) {
    int isint = 0;
    lua_Integer v = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &isint) : 0;
    if (!isint && lua_type(L, idx) == LUA_TNUMBER)
        lpg_error(L, PG_ERROR_ARGUMENT, "%s: %s must be an integer row number, got %s", call, what,
                  luaL_tolstring(L, idx, NULL));
    else if (!isint)
        lpg_error(L, PG_ERROR_ARGUMENT, "%s: %s must be an integer row number, got %s", call, what,
                  luaL_typename(L, idx));
    return v;
}

/* a:slice(lo [, hi]): a view of rows lo to hi (1-based, inclusive; hi defaults to the last row)
 * along the first axis. */
static int arr_slice(lua_State *L) {
    lpg_array *a = lpg_check_array(L, 1);
    lua_Integer rows = (lua_Integer)a->desc.shape[0];
    lua_Integer lo = check_row_arg(L, 2, "slice(lo, hi)", "lo");
    lua_Integer hi = lua_isnoneornil(L, 3) ? rows : check_row_arg(L, 3, "slice(lo, hi)", "hi");
    if (lo < 1 || lo > rows || hi < 1 || hi > rows)
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         "slice(%I, %I): rows are 1 to %I (lo and hi are 1-based and inclusive)",
                         lo, hi, rows);
    if (lo > hi)
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         "slice(%I, %I): lo > hi; a view holds rows lo to hi (inclusive), at "
                         "least one of rows 1 to %I",
                         lo, hi, rows);
    push_view(L, 1, a, (int64_t)lo - 1, (int64_t)hi);
    return 1;
}

/* "split{4, 5}" for the row-count table at idx (the first counts only, if there are many). */
static const char *split_call(lua_State *L, int idx) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, "split{");
    lua_Unsigned n = lua_rawlen(L, idx);
    for (lua_Unsigned i = 1; i <= n; i++) {
        if (i > 8) {
            luaL_addstring(&b, ", ...");
            break;
        }
        if (i > 1)
            luaL_addstring(&b, ", ");
        lua_rawgeti(L, idx, (lua_Integer)i);
        luaL_tolstring(L, -1, NULL);
        lua_remove(L, -2);
        luaL_addvalue(&b);
    }
    luaL_addstring(&b, "}");
    luaL_pushresult(&b);
    return lua_tostring(L, -1);
}

/* On several ranks the n views of a split (the table at -1) spread over them in blocks. */
static void spread(lua_State *L, lpg_array *a, lua_Integer n) {
    int rank = 0, nranks = 1;
    pg_status st = pg_runtime_ranks(a->owner->rt, &rank, &nranks);
    for (lua_Integer i = 1; st == PG_OK && nranks > 1 && i <= n; i++) {
        lua_rawgeti(L, -1, i);
        lpg_array *v = lua_touserdata(L, -1);
        st = pg_array_owner_set(v->a, pg_rank_block_owner((int)(i - 1), (int)n, nranks));
        lua_pop(L, 1);
    }
    if (st != PG_OK)
        lpg_fail(L, st);
}

/* a:owner(): the rank owning a's rows (-1: several); a:set_owner(rank) moves the ownership on
 * every rank (MPI's rank numbers, from 0). */
static int arr_owner(lua_State *L) {
    lpg_array *a = lpg_check_array(L, 1);
    int owner = 0;
    pg_status st = pg_array_owner(a->a, &owner);
    if (st != PG_OK)
        return lpg_fail(L, st);
    lua_pushinteger(L, owner);
    return 1;
}

static int arr_set_owner(lua_State *L) {
    lpg_array *a = lpg_check_array(L, 1);
    int isint = 0;
    lua_Integer r = lua_tointegerx(L, 2, &isint);
    if (!isint || r < INT32_MIN || r > INT32_MAX)
        return lpg_error(L, PG_ERROR_ARGUMENT, "set_owner: expected a rank, got %s",
                         luaL_tolstring(L, 2, NULL));
    pg_status st = pg_array_owner_set(a->a, (int)r);
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 0;
}

/* a:split(n): n views of nearly equal rows (the first rows % n one row longer, as
 * numpy.array_split); a:split{r1, r2, ...}: views of r1, r2, ... rows, which must add up to the
 * array's rows. Returns the views as a sequence. */
static int arr_split(lua_State *L) {
    lpg_array *a = lpg_check_array(L, 1);
    lua_Integer rows = (lua_Integer)a->desc.shape[0];
    lua_settop(L, 2);
    lua_Integer n;
    if (lua_type(L, 2) == LUA_TNUMBER) {
        int isint = 0;
        n = lua_tointegerx(L, 2, &isint);
        if (!isint)
            return lpg_error(L, PG_ERROR_ARGUMENT,
                             "split(%s): the number of views must be an integer",
                             luaL_tolstring(L, 2, NULL));
        if (n < 1 || n > rows)
            return lpg_error(L, PG_ERROR_ARGUMENT,
                             "split(%I): an array of %I rows splits into 1 to %I views", n, rows,
                             rows);
        lua_createtable(L, n < (1 << 30) ? (int)n : 1 << 30, 0);
        int64_t lo = 0;
        for (lua_Integer i = 1; i <= n; i++) {
            int64_t len = rows / n + (i <= rows % n ? 1 : 0);
            push_view(L, 1, a, lo, lo + len);
            lua_rawseti(L, 3, i);
            lo += len;
        }
        spread(L, a, n);
        return 1;
    }
    if (lua_type(L, 2) != LUA_TTABLE)
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         "split: expected a number of views or a table of row counts, got %s",
                         luaL_typename(L, 2));
    /* Check every count before making any view. */
    lua_Unsigned count = lua_rawlen(L, 2);
    lua_Integer sum = 0;
    int over = 0;
    for (lua_Unsigned i = 1; i <= count; i++) {
        int isint = 0;
        lua_rawgeti(L, 2, (lua_Integer)i);
        lua_Integer r = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
        if (!isint || r < 1) {
            const char *got = luaL_tolstring(L, -1, NULL);
            return lpg_error(L, PG_ERROR_ARGUMENT,
                             "%s: row count %I is %s; each view needs a positive (integer) number "
                             "of rows",
                             split_call(L, 2), (lua_Integer)i, got);
        }
        lua_pop(L, 1);
        if (r > LUA_MAXINTEGER - sum)
            over = 1;
        else
            sum += r;
    }
    if (over || sum != rows)
        return lpg_error(L, PG_ERROR_ARGUMENT,
                         over ? "%s: the row counts add up to more than %I; the array has %I rows"
                              : "%s: the row counts add up to %I; the array has %I rows",
                         split_call(L, 2), over ? LUA_MAXINTEGER : sum, rows);
    lua_createtable(L, count < (1 << 30) ? (int)count : 1 << 30, 0);
    int64_t lo = 0;
    for (lua_Unsigned i = 1; i <= count; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i);
        int64_t len = (int64_t)lua_tointeger(L, -1);
        lua_pop(L, 1);
        push_view(L, 1, a, lo, lo + len);
        lua_rawseti(L, 3, (lua_Integer)i);
        lo += len;
    }
    spread(L, a, (lua_Integer)count);
    return 1;
}

/* Release the handle; the core keeps the memory while computations still use it. Freeing a
 * freed array, or one whose runtime was closed (which freed it), does nothing. */
static pg_status release(lpg_array *a) {
    if (!a->a)
        return PG_OK;
    pg_status st = a->owner->rt ? pg_array_free(a->a) : PG_OK;
    if (st == PG_OK)
        a->a = NULL;
    return st;
}

static int arr_free(lua_State *L) {
    pg_status st = release(luaL_checkudata(L, 1, LPG_ARRAY_MT));
    if (st != PG_OK)
        return lpg_fail(L, st);
    return 0;
}

static int arr_gc(lua_State *L) {
    release(luaL_checkudata(L, 1, LPG_ARRAY_MT));
    return 0;
}

static int arr_tostring(lua_State *L) {
    lpg_array *a = luaL_checkudata(L, 1, LPG_ARRAY_MT);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "polygpu.array(%s, {", pg_dtype_name(a->desc.dtype));
    luaL_addvalue(&b);
    for (int i = 0; i < a->desc.ndim; i++) {
        lua_pushfstring(L, i ? ", %I" : "%I", (lua_Integer)a->desc.shape[i]);
        luaL_addvalue(&b);
    }
    luaL_addstring(&b, "}");
    if (lua_getiuservalue(L, 1, 2) == LUA_TNUMBER) { /* a view: its rows of the root, 1-based */
        lua_Integer first = lua_tointeger(L, -1) + 1;
        lua_pop(L, 1);
        lua_pushfstring(L, ", view of rows %I to %I of array %I", first,
                        first + (lua_Integer)a->desc.shape[0] - 1, (lua_Integer)a->desc.id);
        luaL_addvalue(&b);
    } else {
        lua_pop(L, 1);
    }
    luaL_addstring(&b, !a->a ? ", freed)" : !a->owner->rt ? ", runtime closed)" : ")");
    luaL_pushresult(&b);
    return 1;
}

void lpg_array_register(lua_State *L) {
    static const luaL_Reg meta[] = {
        {"__newindex", arr_newindex}, {"__len", arr_len},           {"__gc", arr_gc},
        {"__close", arr_free},        {"__tostring", arr_tostring}, {NULL, NULL},
    };
    static const luaL_Reg methods[] = {
        {"shape", arr_shape},
        {"dtype", arr_dtype},
        {"id", arr_id},
        {"to_table", arr_to_table},
        {"from_table", arr_from_table},
        {"copy_from", arr_copy_from},
        {"prefetch", arr_prefetch},
        {"slice", arr_slice},
        {"split", arr_split},
        {"owner", arr_owner},
        {"set_owner", arr_set_owner},
        {"free", arr_free},
        {NULL, NULL},
    };
    luaL_newmetatable(L, LPG_ARRAY_MT);
    luaL_setfuncs(L, meta, 0);
    lpg_push_index(L, LPG_ARRAY_MT, methods, arr_index);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, "polygpu.array");
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}

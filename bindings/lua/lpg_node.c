/* lpg_node.c: polygpu.node_status(): pg_node_status's JSON as a Lua table. The JSON is the
 * library's own (objects, arrays, strings, integers), so a small reader does. */
#include "lpg_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *skip(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

static const char *value(lua_State *L, const char *p, int depth);

static const char *string(lua_State *L, const char *p) {
    if (*p != '"')
        return NULL;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            char c = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == 'r' ? '\r' : *p;
            if (*p == 'u' && strlen(p) >= 5) { /* the library escapes only control bytes */
                c = (char)strtol((char[]){p[1], p[2], p[3], p[4], 0}, NULL, 16);
                p += 4;
            }
            luaL_addchar(&b, c);
        } else {
            luaL_addchar(&b, *p);
        }
    }
    if (*p != '"')
        return NULL;
    luaL_pushresult(&b);
    return p + 1;
}

static const char *value(lua_State *L, const char *p, int depth) {
    p = skip(p);
    luaL_checkstack(L, 4, "node status");
    if (!p || depth > 16)
        return NULL;
    if (*p == '{' || *p == '[') {
        int obj = *p == '{';
        lua_newtable(L);
        p = skip(p + 1);
        if (*p == (obj ? '}' : ']'))
            return p + 1;
        for (lua_Integer i = 1;; i++) {
            if (obj) {
                if (!(p = string(L, skip(p))) || *(p = skip(p)) != ':')
                    return NULL;
                p++;
            }
            if (!(p = value(L, p, depth + 1)))
                return NULL;
            if (obj)
                lua_rawset(L, -3);
            else
                lua_rawseti(L, -2, i);
            p = skip(p);
            if (*p == ',')
                p++;
            else if (*p == (obj ? '}' : ']'))
                return p + 1;
            else
                return NULL;
        }
    }
    if (*p == '"')
        return string(L, p);
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p)
        return NULL;
    lua_pushinteger(L, (lua_Integer)v);
    return end;
}

/* polygpu.node_status() */
int lpg_node_status(lua_State *L) {
    char *json = NULL;
    pg_status st = pg_node_status(&json);
    if (st)
        return lpg_fail(L, st);
    const char *end = value(L, json, 0);
    pg_string_free(json);
    if (!end)
        return luaL_error(L, "polygpu.node_status: unreadable status from the library");
    return 1;
}

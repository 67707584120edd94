/* lpg_json.c: a small strict JSON reader that builds Lua tables (for the DAG export). */
#include "lpg_internal.h"

#include <stdlib.h>
#include <string.h>

/* Deeper nesting than this is not something polygpu writes; refusing it bounds the C stack. */
#define LPG_JSON_MAX_DEPTH 64

typedef struct reader {
    lua_State *L;
    const char *p;
    const char *start;
} reader;

static void fail(reader *r, const char *what) {
    lpg_error(r->L, PG_ERROR_INTERNAL, "malformed JSON from polygpu at offset %d: %s",
              (int)(r->p - r->start), what);
}

static void skip_space(reader *r) {
    while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
        r->p++;
}

static int hex4(reader *r, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = r->p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return 0;
    }
    r->p += 4;
    *out = v;
    return 1;
}

static void add_utf8(luaL_Buffer *b, unsigned c) {
    char s[4];
    int n;
    if (c < 0x80) {
        s[0] = (char)c, n = 1;
    } else if (c < 0x800) {
        s[0] = (char)(0xC0 | (c >> 6)), s[1] = (char)(0x80 | (c & 0x3F)), n = 2;
    } else if (c < 0x10000) {
        s[0] = (char)(0xE0 | (c >> 12)), s[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        s[2] = (char)(0x80 | (c & 0x3F)), n = 3;
    } else {
        s[0] = (char)(0xF0 | (c >> 18)), s[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        s[2] = (char)(0x80 | ((c >> 6) & 0x3F)), s[3] = (char)(0x80 | (c & 0x3F)), n = 4;
    }
    luaL_addlstring(b, s, (size_t)n);
}

static void read_string(reader *r) {
    luaL_Buffer b;
    luaL_buffinit(r->L, &b);
    r->p++; /* the opening quote */
    for (;;) {
        const char *run = r->p;
        while (*r->p && *r->p != '"' && *r->p != '\\' && (unsigned char)*r->p >= 0x20)
            r->p++;
        luaL_addlstring(&b, run, (size_t)(r->p - run));
        if (*r->p == '"')
            break;
        if (*r->p != '\\') {
            fail(r, "unterminated string");
            return;
        }
        r->p++;
        char c = *r->p++;
        switch (c) {
        case '"':
            luaL_addchar(&b, '"');
            break;
        case '\\':
            luaL_addchar(&b, '\\');
            break;
        case '/':
            luaL_addchar(&b, '/');
            break;
        case 'b':
            luaL_addchar(&b, '\b');
            break;
        case 'f':
            luaL_addchar(&b, '\f');
            break;
        case 'n':
            luaL_addchar(&b, '\n');
            break;
        case 'r':
            luaL_addchar(&b, '\r');
            break;
        case 't':
            luaL_addchar(&b, '\t');
            break;
        case 'u': {
            unsigned cp, lo;
            if (!hex4(r, &cp)) {
                fail(r, "bad \\u escape");
                return;
            }
            /* A surrogate pair encodes one code point above the basic plane. */
            if (cp >= 0xD800 && cp < 0xDC00 && r->p[0] == '\\' && r->p[1] == 'u') {
                r->p += 2;
                if (!hex4(r, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                    fail(r, "bad surrogate pair");
                    return;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            add_utf8(&b, cp);
            break;
        }
        default:
            fail(r, "bad escape");
            return;
        }
    }
    r->p++; /* the closing quote */
    luaL_pushresult(&b);
}

static void read_number(reader *r) {
    const char *s = r->p;
    int integral = 1;
    if (*r->p == '-')
        r->p++;
    while ((*r->p >= '0' && *r->p <= '9') || *r->p == '.' || *r->p == 'e' || *r->p == 'E' ||
           *r->p == '+' || *r->p == '-') {
        if (*r->p == '.' || *r->p == 'e' || *r->p == 'E')
            integral = 0;
        r->p++;
    }
    char tmp[64];
    size_t n = (size_t)(r->p - s);
    if (n == 0 || n >= sizeof tmp) {
        fail(r, "bad number");
        return;
    }
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    /* lua_stringtonumber keeps integers as integers (ids, nanoseconds) and floats as floats. */
    if (lua_stringtonumber(r->L, tmp) != n + 1) {
        fail(r, "bad number");
        return;
    }
    if (integral && !lua_isinteger(r->L, -1)) {
        /* An integer too large for lua_Integer (e.g. a uint64 counter): keep it as a float. */
        lua_pop(r->L, 1);
        lua_pushnumber(r->L, (lua_Number)strtod(tmp, NULL));
    }
}

static int literal(reader *r, const char *word) {
    size_t n = strlen(word);
    if (strncmp(r->p, word, n))
        return 0;
    r->p += n;
    return 1;
}

static void read_value(reader *r, int depth);

static void read_array(reader *r, int depth) {
    lua_newtable(r->L);
    r->p++;
    skip_space(r);
    if (*r->p == ']') {
        r->p++;
        return;
    }
    for (lua_Integer i = 1;; i++) {
        read_value(r, depth + 1);
        lua_seti(r->L, -2, i);
        skip_space(r);
        if (*r->p == ']') {
            r->p++;
            return;
        }
        if (*r->p++ != ',') {
            fail(r, "expected ',' or ']'");
            return;
        }
    }
}

static void read_object(reader *r, int depth) {
    lua_newtable(r->L);
    r->p++;
    skip_space(r);
    if (*r->p == '}') {
        r->p++;
        return;
    }
    for (;;) {
        skip_space(r);
        if (*r->p != '"') {
            fail(r, "expected a key");
            return;
        }
        read_string(r);
        skip_space(r);
        if (*r->p++ != ':') {
            fail(r, "expected ':'");
            return;
        }
        read_value(r, depth + 1);
        lua_rawset(r->L, -3);
        skip_space(r);
        if (*r->p == '}') {
            r->p++;
            return;
        }
        if (*r->p++ != ',') {
            fail(r, "expected ',' or '}'");
            return;
        }
    }
}

static void read_value(reader *r, int depth) {
    if (depth > LPG_JSON_MAX_DEPTH) {
        fail(r, "nested too deeply");
        return;
    }
    luaL_checkstack(r->L, 4, "JSON nesting");
    skip_space(r);
    char c = *r->p;
    if (c == '{')
        read_object(r, depth);
    else if (c == '[')
        read_array(r, depth);
    else if (c == '"')
        read_string(r);
    else if (c == '-' || (c >= '0' && c <= '9'))
        read_number(r);
    else if (literal(r, "true"))
        lua_pushboolean(r->L, 1);
    else if (literal(r, "false"))
        lua_pushboolean(r->L, 0);
    else if (literal(r, "null"))
        lua_pushnil(r->L);
    else
        fail(r, "unexpected character");
}

void lpg_json_push(lua_State *L, const char *text) {
    reader r = {L, text, text};
    read_value(&r, 0);
    skip_space(&r);
    if (*r.p)
        fail(&r, "trailing characters");
}

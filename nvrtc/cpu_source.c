/* cpu_source.c: identifiers, words, lines and top-level declarations of stripped kernel source. */
#include "nvrtc/cpu_source.h"
#include "base/alloc.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int pg__cpu_ident_char(int c) {
    return isalnum(c) || c == '_';
}

size_t pg__cpu_ident_at(const char *s, size_t i) {
    if (!(isalpha((unsigned char)s[i]) || s[i] == '_') ||
        (i > 0 && pg__cpu_ident_char((unsigned char)s[i - 1])))
        return 0;
    size_t n = 1;
    while (pg__cpu_ident_char((unsigned char)s[i + n]))
        n++;
    return n;
}

size_t pg__cpu_find_word(const char *s, size_t from, size_t to, const char *w) {
    size_t wn = strlen(w);
    for (size_t i = from; i + wn <= to; i++) {
        if (s[i] != w[0])
            continue;
        size_t n = pg__cpu_ident_at(s, i);
        if (n == wn && memcmp(s + i, w, wn) == 0)
            return i;
    }
    return (size_t)-1;
}

int pg__cpu_line_of(const char *s, size_t at) {
    int line = 1;
    for (size_t i = 0; i < at && s[i]; i++)
        line += s[i] == '\n';
    return line;
}

size_t pg__cpu_match(const char *s, size_t i) {
    char open = s[i];
    char close = open == '(' ? ')' : open == '[' ? ']' : open == '{' ? '}' : '>';
    int depth = 0;
    for (; s[i]; i++) {
        if (s[i] == open)
            depth++;
        else if (s[i] == close && --depth == 0)
            return i + 1;
        else if (open == '<' && (s[i] == ';' || s[i] == '{' || s[i] == '}'))
            return 0;
        else if (open == '<' && s[i] == '(') {
            /* A '>' inside parentheses compares; it does not close the template list. */
            size_t j = pg__cpu_match(s, i);
            if (!j)
                return 0;
            i = j - 1;
        }
    }
    return 0;
}

static size_t skip_space(const char *s, size_t i, size_t to) {
    while (i < to && isspace((unsigned char)s[i]))
        i++;
    return i;
}

/* Does s[from, to) (the text before a '{') open a namespace or an extern "C" block? */
static int opens_scope(const char *s, size_t from, size_t to) {
    size_t i = skip_space(s, from, to), n = pg__cpu_ident_at(s, i);
    if (n == 6 && memcmp(s + i, "inline", 6) == 0) {
        i = skip_space(s, i + n, to);
        n = pg__cpu_ident_at(s, i);
    }
    if (n == 9 && memcmp(s + i, "namespace", 9) == 0) {
        for (i += n; i < to; i++)
            if (!pg__cpu_ident_char((unsigned char)s[i]) && !isspace((unsigned char)s[i]) &&
                s[i] != ':')
                return 0;
        return 1;
    }
    if (n == 6 && memcmp(s + i, "extern", 6) == 0) {
        i = skip_space(s, i + n, to);
        if (i >= to || s[i] != '"')
            return 0;
        for (i++; i < to && s[i] != '"'; i++)
            ;
        return i < to && skip_space(s, i + 1, to) == to;
    }
    return 0;
}

static int blank(const char *s, size_t from, size_t to) {
    for (size_t i = from; i < to; i++)
        if (!isspace((unsigned char)s[i]) && s[i] != ';')
            return 0;
    return 1;
}

typedef struct units {
    pg__cpu_unit *u;
    int n, cap, failed;
} units;

static void add(units *a, const char *s, size_t start, size_t body, size_t end) {
    if (a->failed || blank(s, start, end))
        return;
    if (a->n == a->cap) {
        int cap = a->cap ? 2 * a->cap : 32;
        pg__cpu_unit *u = pg__realloc(a->u, (size_t)cap * sizeof *u);
        if (!u) {
            a->failed = 1;
            return;
        }
        a->u = u;
        a->cap = cap;
    }
    a->u[a->n++] = (pg__cpu_unit){start, body, end};
}

int pg__cpu_units(const char *code, pg__cpu_unit **out) {
    units a = {0};
    size_t n = strlen(code), start = 0, body = SIZE_MAX;
    int depth = 0, scopes = 0; /* open braces of definitions; open namespace blocks */
    for (size_t i = 0; i < n; i++) {
        char c = code[i];
        if (c == '{') {
            if (depth == 0 && opens_scope(code, start, i)) {
                scopes++;
                start = i + 1;
                continue;
            }
            if (depth++ == 0 && body == SIZE_MAX)
                body = i;
        } else if (c == '}') {
            if (depth == 0) { /* a namespace block closes */
                if (scopes-- == 0)
                    break;
                add(&a, code, start, body == SIZE_MAX ? i : body, i);
                start = i + 1;
                body = SIZE_MAX;
            } else if (--depth == 0) {
                add(&a, code, start, body, i + 1);
                start = i + 1;
                body = SIZE_MAX;
            }
        } else if (c == ';' && depth == 0) {
            add(&a, code, start, body == SIZE_MAX ? i + 1 : body, i + 1);
            start = i + 1;
            body = SIZE_MAX;
        }
    }
    add(&a, code, start, body == SIZE_MAX ? n : body, n);
    if (a.failed || depth != 0 || scopes != 0) {
        pg__free(a.u);
        return a.failed ? -2 : -1;
    }
    *out = a.u;
    return a.n;
}

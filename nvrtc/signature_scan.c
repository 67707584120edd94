/* signature_scan.c: the first lexical fault of kernel source (a literal or comment that never
 * ends, a bracket that is never closed or closes nothing), with its line and column, for error
 * messages that name what is wrong. One pass, an explicit stack: no recursion, linear time. */
#include "nvrtc/signature.h"
#include "base/alloc.h"
#include "nvrtc/cpu_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct open_bracket {
    char c;
    int line, col;
} open_bracket;

typedef struct scan {
    const char *s;
    size_t i, line_start;
    int line;
    char *why;
    size_t nwhy;
} scan;

static int col_of(const scan *sc, size_t at) {
    return (int)(at - sc->line_start) + 1;
}

/* Step over s[i], counting lines. */
static void advance(scan *sc) {
    if (sc->s[sc->i] == '\n') {
        sc->line++;
        sc->line_start = sc->i + 1;
    }
    sc->i++;
}

/* To the end of the line, following backslash continuations (a // comment, a # line). */
static void skip_line(scan *sc) {
    while (sc->s[sc->i] && sc->s[sc->i] != '\n') {
        if (sc->s[sc->i] == '\\' && sc->s[sc->i + 1] == '\n')
            advance(sc);
        advance(sc);
    }
}

static int fault(scan *sc, int line, int col, const char *what) {
    snprintf(sc->why, sc->nwhy, "line %d, column %d: %s", line, col, what);
    return 1;
}

/* A quoted literal from its opening quote; 1 (fault) if it has no closing quote on its line. */
static int skip_quoted(scan *sc) {
    int line = sc->line, col = col_of(sc, sc->i);
    char q = sc->s[sc->i];
    advance(sc);
    while (sc->s[sc->i] && sc->s[sc->i] != q && sc->s[sc->i] != '\n') {
        if (sc->s[sc->i] == '\\' && sc->s[sc->i + 1])
            advance(sc);
        advance(sc);
    }
    if (sc->s[sc->i] != q)
        return fault(sc, line, col,
                     q == '"' ? "this string literal has no closing '\"' on its line"
                              : "this character literal has no closing '\\'' on its line");
    advance(sc);
    return 0;
}

/* R"delim( ... )delim" from its opening quote. */
static int skip_raw(scan *sc) {
    int line = sc->line, col = col_of(sc, sc->i);
    size_t d0 = sc->i + 1, d1 = d0;
    while (sc->s[d1] && sc->s[d1] != '(' && d1 - d0 < 16)
        d1++;
    if (sc->s[d1] != '(')
        return skip_quoted(sc);
    size_t dn = d1 - d0;
    while (sc->i < d1)
        advance(sc);
    for (; sc->s[sc->i]; advance(sc))
        if (sc->s[sc->i] == ')' && strncmp(sc->s + sc->i + 1, sc->s + d0, dn) == 0 &&
            sc->s[sc->i + 1 + dn] == '"') {
            for (size_t k = 0; k < dn + 2; k++)
                advance(sc);
            return 0;
        }
    return fault(sc, line, col, "this raw string literal is never closed");
}

/* Conditional compilation: only the first branch of each #if counts, as the alternatives
 * (#elif, #else) may each open or close a brace that the other one does. */
typedef struct conditional {
    int depth;     /* #if nesting */
    int skip_from; /* the nesting at which an #elif / #else branch began; 0: none */
} conditional;

static void directive(const scan *sc, conditional *cond) {
    size_t i = sc->i + 1;
    while (sc->s[i] == ' ' || sc->s[i] == '\t')
        i++;
    size_t n = pg__cpu_ident_at(sc->s, i);
    const char *d = sc->s + i;
    if ((n == 2 && !memcmp(d, "if", 2)) || (n == 5 && !memcmp(d, "ifdef", 5)) ||
        (n == 6 && !memcmp(d, "ifndef", 6))) {
        cond->depth++;
    } else if ((n == 4 && (!memcmp(d, "elif", 4) || !memcmp(d, "else", 4))) ||
               (n == 7 && (!memcmp(d, "elifdef", 7))) || (n == 8 && !memcmp(d, "elifndef", 8))) {
        if (cond->depth > 0 && cond->skip_from == 0)
            cond->skip_from = cond->depth;
    } else if (n == 5 && !memcmp(d, "endif", 5) && cond->depth > 0) {
        if (cond->skip_from == cond->depth)
            cond->skip_from = 0;
        cond->depth--;
    }
}

int pg__signature_scan(const char *source, char *why, size_t nwhy) {
    scan sc = {source, 0, 0, 1, why, nwhy};
    conditional cond = {0, 0};
    open_bracket *stack = NULL;
    size_t depth = 0, cap = 0;
    int at_line_start = 1, r = 0;
    while (!r && source[sc.i]) {
        char c = source[sc.i];
        if (c == '\n') {
            at_line_start = 1;
            advance(&sc);
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            advance(&sc);
            continue;
        }
        if (c == '#' && at_line_start) { /* preprocessor lines hold no code brackets */
            directive(&sc, &cond);
            skip_line(&sc);
            continue;
        }
        at_line_start = 0;
        if (c == '/' && source[sc.i + 1] == '/') {
            skip_line(&sc);
        } else if (c == '/' && source[sc.i + 1] == '*') {
            int line = sc.line, col = col_of(&sc, sc.i);
            advance(&sc);
            advance(&sc);
            while (source[sc.i] && !(source[sc.i] == '*' && source[sc.i + 1] == '/'))
                advance(&sc);
            if (!source[sc.i])
                r = fault(&sc, line, col, "this comment is never closed (no '*/')");
            else {
                advance(&sc);
                advance(&sc);
            }
        } else if (c == '"') {
            size_t i = sc.i;
            int raw = i > 0 && source[i - 1] == 'R' &&
                      (i < 2 || !pg__cpu_ident_char((unsigned char)source[i - 2]) ||
                       source[i - 2] == 'u' || source[i - 2] == 'U' || source[i - 2] == 'L' ||
                       source[i - 2] == '8');
            r = raw ? skip_raw(&sc) : skip_quoted(&sc);
        } else if (c == '\'' &&
                   (sc.i == 0 || !pg__cpu_ident_char((unsigned char)source[sc.i - 1]))) {
            r = skip_quoted(&sc); /* not a digit separator such as 1'000 */
        } else if (cond.skip_from &&
                   (c == '(' || c == '[' || c == '{' || c == ')' || c == ']' || c == '}')) {
            advance(&sc);
        } else if (c == '(' || c == '[' || c == '{') {
            if (depth == cap) {
                size_t ncap = cap ? 2 * cap : 64;
                open_bracket *ns = pg__realloc(stack, ncap * sizeof *ns);
                if (!ns) {
                    pg__free(stack);
                    return -1;
                }
                stack = ns;
                cap = ncap;
            }
            stack[depth++] = (open_bracket){c, sc.line, col_of(&sc, sc.i)};
            advance(&sc);
        } else if (c == ')' || c == ']' || c == '}') {
            char want = c == ')' ? '(' : c == ']' ? '[' : '{';
            char what[160];
            if (depth == 0) {
                snprintf(what, sizeof what, "'%c' closes nothing (no '%c' is open)", c, want);
                r = fault(&sc, sc.line, col_of(&sc, sc.i), what);
            } else if (stack[depth - 1].c != want) {
                const open_bracket *o = &stack[depth - 1];
                snprintf(what, sizeof what,
                         "'%c' does not match the '%c' opened at line %d, column %d", c, o->c,
                         o->line, o->col);
                r = fault(&sc, sc.line, col_of(&sc, sc.i), what);
            } else {
                depth--;
                advance(&sc);
            }
        } else {
            advance(&sc);
        }
    }
    if (!r && depth > 0) {
        /* The innermost one still open, as compilers report it. */
        const open_bracket *o = &stack[depth - 1];
        char what[120];
        if (depth > 1)
            snprintf(what, sizeof what, "this '%c' is never closed (%zu brackets are left open)",
                     o->c, depth);
        else
            snprintf(what, sizeof what, "this '%c' is never closed", o->c);
        r = fault(&sc, o->line, o->col, what);
    }
    pg__free(stack);
    return r;
}

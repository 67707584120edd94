/* cpu_rewrite.c: extern __shared__ declarations turned into pointers to dynamic shared memory. */
#include "nvrtc/cpu_rewrite.h"
#include "base/alloc.h"
#include "base/error.h"
#include "nvrtc/cpu_source.h"
#include "nvrtc/signature.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct text {
    char *s;
    size_t len, cap;
    int failed;
} text;

static void put(text *t, const char *s, size_t n) {
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = pg__realloc(t->s, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->s = p;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void putf(text *t, const char *fmt, ...) PG__PRINTF(2, 3);

static void putf(text *t, const char *fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf)
        t->failed = 1;
    else
        put(t, buf, (size_t)n);
}

static int word_is(const char *s, size_t n, const char *w) {
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

static int is_attribute(const char *s, size_t n) {
    return word_is(s, n, "__align__") || word_is(s, n, "alignas") ||
           word_is(s, n, "__attribute__") || word_is(s, n, "__declspec");
}

/* One declaration taken apart: "extern __shared__ __align__(16) volatile float s[][33];" has
 * spec "volatile float", name "s", rest "[33]", and is an array. */
typedef struct decl {
    text spec, rest;
    const char *name;
    size_t name_len;
    int array;
} decl;

static size_t skip_space(const char *s, size_t i, size_t to) {
    while (i < to && isspace((unsigned char)s[i]))
        i++;
    return i;
}

/* 0 ok; -1 a form that cannot be rewritten; -2 out of memory. */
static int parse(const char *s, size_t from, size_t to, decl *d) {
    size_t i = from;
    int depth = 0; /* template argument lists in the type */
    while (i < to) {
        if (s[i] == '[' && s[i + 1] == '[') { /* [[attribute]] */
            size_t e = pg__cpu_match(s, i);
            if (!e || e > to)
                return -1;
            i = e;
            continue;
        }
        size_t n = pg__cpu_ident_at(s, i);
        if (!n) {
            depth += s[i] == '<' ? 1 : s[i] == '>' ? -1 : 0;
            if (s[i] == ',' && depth == 0)
                return -1; /* several declarators */
            if (s[i] == '(' || s[i] == '[' || s[i] == '=')
                return -1;
            if (!isspace((unsigned char)s[i]))
                put(&d->spec, s + i, 1);
            else if (d->spec.len && d->spec.s[d->spec.len - 1] != ' ')
                put(&d->spec, " ", 1);
            i++;
            continue;
        }
        size_t after = skip_space(s, i + n, to);
        if (word_is(s + i, n, "extern") || word_is(s + i, n, "__shared__")) {
            i += n;
        } else if (is_attribute(s + i, n)) {
            if (s[after] != '(')
                return -1;
            size_t e = pg__cpu_match(s, after);
            if (!e || e > to)
                return -1;
            i = e;
        } else if (depth == 0 && (s[after] == '[' || after == to)) {
            d->name = s + i;
            d->name_len = n;
            i = after;
            break;
        } else {
            put(&d->spec, s + i, n);
            i += n;
        }
    }
    if (!d->name)
        return -1;
    for (int first = 1; i < to && s[i] == '['; first = 0) {
        size_t e = pg__cpu_match(s, i);
        if (!e || e > to)
            return -1;
        if (!first)
            put(&d->rest, s + i, e - i);
        d->array = 1;
        i = skip_space(s, e, to);
    }
    while (i < to) { /* trailing attributes only */
        size_t n = pg__cpu_ident_at(s, i);
        size_t after = skip_space(s, i + n, to);
        if (!n || !is_attribute(s + i, n) || s[after] != '(')
            return -1;
        size_t e = pg__cpu_match(s, after);
        if (!e || e > to)
            return -1;
        i = skip_space(s, e, to);
    }
    put(&d->spec, "", 0);
    put(&d->rest, "", 0);
    while (d->spec.len && d->spec.s[d->spec.len - 1] == ' ')
        d->spec.s[--d->spec.len] = '\0';
    return d->spec.failed || d->rest.failed ? -2 : 0;
}

/* The replacement of one declaration. In a function: a local pointer. At namespace scope a
 * pointer would be set once for every thread, so the name becomes a macro for a call that
 * reads the running block's memory; #line keeps the kernel's numbering. */
static void emit(text *out, const decl *d, int in_function, int line, int newlines) {
    const char *sp = d->spec.s, *rest = d->rest.s;
    int nn = (int)d->name_len;
    const char *nm = d->name;
    if (in_function) {
        if (d->array)
            putf(out, "%s (*const %.*s)%s = (%s (*)%s)pg__smem_dyn();", sp, nn, nm, rest, sp, rest);
        else
            putf(out, "%s &%.*s = *(%s *)pg__smem_dyn();", sp, nn, nm, sp);
        for (int i = 0; i < newlines; i++)
            put(out, "\n", 1);
        return;
    }
    if (d->array)
        putf(out,
             "static inline %s (*pg__smem_%.*s(void))%s { return (%s (*)%s)pg__smem_dyn(); }\n"
             "#define %.*s (pg__smem_%.*s())\n",
             sp, nn, nm, rest, sp, rest, nn, nm, nn, nm);
    else
        putf(out,
             "static inline %s *pg__smem_%.*s(void) { return (%s *)pg__smem_dyn(); }\n"
             "#define %.*s (*pg__smem_%.*s())\n",
             sp, nn, nm, sp, nn, nm, nn, nm);
    putf(out, "#line %d \"kernel.cu\"\n", line);
}

static pg_status refuse(const char *name, const char *s, size_t at, const char *why) {
    return pg__error(PG_ERROR_UNSUPPORTED,
                     "kernel '%s': the extern __shared__ declaration on line %d of its source %s "
                     "(CPU devices rewrite it): declare one array per statement, e.g. "
                     "extern __shared__ float smem[];",
                     name, pg__cpu_line_of(s, at), why);
}

/* The unit holding offset at; NULL at namespace scope between units. n < 0: units unknown.
 * Units are in order and at only grows from call to call: *from is where the last one was. */
static const pg__cpu_unit *unit_at(const pg__cpu_unit *u, int n, size_t at, int *from) {
    while (*from < n && u[*from].end <= at)
        ++*from;
    return *from < n && at >= u[*from].start ? &u[*from] : NULL;
}

static pg_status rewrite(const char *source, const char *name, const char *code,
                         const pg__cpu_unit *u, int nu, text *out) {
    /* Each statement is looked at once (seen: where the last one ended), and line numbers are
     * counted as the text goes by: repeated __shared__ must not make this quadratic. */
    size_t n = strlen(code), copied = 0, seen = 0, line_at = 0;
    int line = 1, unit = 0; /* line: at offset line_at; unit: see unit_at */
    for (size_t p = pg__cpu_find_word(code, 0, n, "__shared__"); p != (size_t)-1;
         p = pg__cpu_find_word(code, p + 10, n, "__shared__")) {
        if (p < seen)
            continue; /* another __shared__ of a statement already looked at */
        size_t ds = p, de = p;
        while (ds > 0 && !strchr(";{}", code[ds - 1]))
            ds--;
        ds = skip_space(code, ds, p);
        while (de < n && code[de] != ';' && code[de] != '{' && code[de] != '}')
            de++;
        seen = de;
        if (de == n || code[de] != ';' || pg__cpu_find_word(code, ds, de, "extern") == (size_t)-1)
            continue;
        decl d = {0};
        int bad = parse(code, ds, de, &d);
        const pg__cpu_unit *in = unit_at(u, nu, p, &unit);
        int in_function = nu < 0 || (in && p >= in->body);
        int newlines = 0;
        for (size_t i = ds; i < de; i++)
            newlines += code[i] == '\n';
        for (; line_at < de; line_at++)
            line += code[line_at] == '\n';
        if (!bad) {
            put(out, source + copied, ds - copied);
            emit(out, &d, in_function, line, newlines);
            copied = de + 1;
        }
        pg__free(d.spec.s);
        pg__free(d.rest.s);
        if (bad == -2)
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        if (bad)
            return refuse(name, code, p, "has a form that cannot be rewritten");
    }
    put(out, source + copied, strlen(source) - copied);
    return PG_OK;
}

/* An extern __shared__ that only a macro expansion would show cannot be rewritten. */
static pg_status check_macros(const char *name, const char *pp) {
    size_t n = strlen(pp);
    for (size_t i = 0; i < n; i++) {
        size_t line = i;
        while (i < n && (pp[i] == ' ' || pp[i] == '\t'))
            i++;
        size_t end = i;
        while (end < n && !(pp[end] == '\n' && (end == 0 || pp[end - 1] != '\\')))
            end++;
        if (pp[i] == '#' && pg__cpu_find_word(pp, i, end, "__shared__") != (size_t)-1 &&
            pg__cpu_find_word(pp, i, end, "extern") != (size_t)-1)
            return refuse(name, pp, line, "is inside a macro");
        i = end;
    }
    return PG_OK;
}

pg_status pg__cpu_rewrite_shared(const char *source, const char *name, char **out) {
    char *code = pg__signature_strip(source, 1), *pp = pg__signature_strip(source, 0);
    pg__cpu_unit *u = NULL;
    text t = {0};
    pg_status st = code && pp ? PG_OK : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (!st)
        st = check_macros(name, pp);
    if (!st) {
        /* Unbalanced braces (nu < 0): the compiler will say so; meanwhile a declaration is
         * taken to be in a function. */
        int nu = pg__cpu_units(code, &u);
        /* Out of memory is no unbalanced brace: rewriting as if it were would compile another
         * kernel, cached under this source's key. */
        st = nu == -2 ? pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory")
                      : rewrite(source, name, code, u, nu, &t);
    }
    if (!st && t.failed)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (st)
        pg__free(t.s);
    else
        *out = t.s;
    pg__free(u);
    pg__free(code);
    pg__free(pp);
    return st;
}

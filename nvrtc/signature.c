/* signature.c: parameter lists in C syntax (explicit signatures, or lists taken from kernel
 * source) turned into parameter descriptions. */
#include "nvrtc/signature.h"
#include "base/alloc.h"
#include "base/error.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 32
#define MAX_BASE 6

static int is_ident_start(int c) {
    return isalpha(c) || c == '_';
}

static int is_ident_char(int c) {
    return isalnum(c) || c == '_';
}

static int word_is(const char *s, size_t n, const char *w) {
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* ------------------------------------------------------------------ one parameter */

typedef struct tok {
    char kind; /* 'a' identifier, '*', '&', '[', ']', '0' number, '?' anything else */
    const char *s;
    size_t n;
} tok;

static int tokenize(const char *s, size_t len, tok *t, int *nt) {
    int n = 0;
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        if (isspace(c)) {
            i++;
            continue;
        }
        if (n == MAX_TOKENS)
            return -1;
        size_t j = i;
        char kind;
        if (is_ident_start(c) || (c == ':' && i + 2 < len && s[i + 1] == ':' &&
                                  is_ident_start((unsigned char)s[i + 2]))) {
            /* Qualified names (std::size_t) are one word. */
            for (;;) {
                if (s[j] == ':')
                    j += 2;
                while (j < len && is_ident_char((unsigned char)s[j]))
                    j++;
                if (j + 2 < len && s[j] == ':' && s[j + 1] == ':' &&
                    is_ident_start((unsigned char)s[j + 2]))
                    continue;
                break;
            }
            kind = 'a';
        } else if (isdigit(c)) {
            while (j < len && is_ident_char((unsigned char)s[j]))
                j++;
            kind = '0';
        } else {
            j = i + 1;
            kind = (c == '*' || c == '&' || c == '[' || c == ']') ? (char)c : '?';
        }
        t[n].kind = kind;
        t[n].s = s + i;
        t[n].n = j - i;
        n++;
        i = j;
    }
    *nt = n;
    return 0;
}

/* Qualifiers that change nothing polygpu needs to know. */
static int is_ignored_qualifier(const tok *t) {
    return t->kind == 'a' &&
           (word_is(t->s, t->n, "__restrict__") || word_is(t->s, t->n, "__restrict") ||
            word_is(t->s, t->n, "restrict") || word_is(t->s, t->n, "__grid_constant__"));
}

static int is_qualifier(const tok *t) {
    return t->kind == 'a' && (word_is(t->s, t->n, "const") || word_is(t->s, t->n, "volatile") ||
                              is_ignored_qualifier(t));
}

static const char *const keyword_types[] = {"char",     "short", "int",    "long", "signed",
                                            "unsigned", "float", "double", "bool", "void"};

static const struct {
    const char *name;
    pg_dtype dtype;
} typedef_types[] = {
    {"int8_t", PG_INT8},     {"int16_t", PG_INT16},   {"int32_t", PG_INT32},
    {"int64_t", PG_INT64},   {"uint8_t", PG_UINT8},   {"uint16_t", PG_UINT16},
    {"uint32_t", PG_UINT32}, {"uint64_t", PG_UINT64}, {"size_t", PG_UINT64},
    {"ptrdiff_t", PG_INT64}, {"intptr_t", PG_INT64},  {"uintptr_t", PG_UINT64},
    {"ssize_t", PG_INT64},
};

/* A typedef name, with "std::" or "::" allowed in front; -1 if not one. */
static int typedef_index(const char *s, size_t n) {
    if (n > 5 && memcmp(s, "std::", 5) == 0) {
        s += 5;
        n -= 5;
    } else if (n > 2 && memcmp(s, "::", 2) == 0) {
        s += 2;
        n -= 2;
    }
    for (size_t i = 0; i < sizeof typedef_types / sizeof typedef_types[0]; i++)
        if (word_is(s, n, typedef_types[i].name))
            return (int)i;
    return -1;
}

static int keyword_index(const char *s, size_t n) {
    for (size_t i = 0; i < sizeof keyword_types / sizeof keyword_types[0]; i++)
        if (word_is(s, n, keyword_types[i]))
            return (int)i;
    return -1;
}

static int is_type_word(const tok *t) {
    return t->kind == 'a' && (keyword_index(t->s, t->n) >= 0 || typedef_index(t->s, t->n) >= 0);
}

static const char supported_types[] =
    "supported: char, short, int, long, long long (each signed or unsigned), int8_t..int64_t, "
    "uint8_t..uint64_t, size_t, ptrdiff_t, float, double, bool (scalars only)";

/* The dtype of a base type made of words; on failure a reason in why. */
static int resolve_base(const tok *base, int nbase, pg_dtype *dt, char *why, size_t whyn) {
    int nsigned = 0, nunsigned = 0, nchar = 0, nshort = 0, nint = 0, nlong = 0;
    int other = -1, n_other = 0;
    for (int i = 0; i < nbase; i++) {
        int k = keyword_index(base[i].s, base[i].n);
        int td = typedef_index(base[i].s, base[i].n);
        if (k < 0 && td < 0) {
            snprintf(why, whyn, "unknown type '%.*s' (%s)", (int)base[i].n, base[i].s,
                     supported_types);
            return -1;
        }
        const char *w = k >= 0 ? keyword_types[k] : "";
        if (strcmp(w, "signed") == 0)
            nsigned++;
        else if (strcmp(w, "unsigned") == 0)
            nunsigned++;
        else if (strcmp(w, "char") == 0)
            nchar++;
        else if (strcmp(w, "short") == 0)
            nshort++;
        else if (strcmp(w, "int") == 0)
            nint++;
        else if (strcmp(w, "long") == 0)
            nlong++;
        else {
            other = i;
            n_other++;
        }
    }
    int nsign = nsigned + nunsigned;
    if (n_other == 1 && nbase == 1) {
        const tok *o = &base[other];
        int td = typedef_index(o->s, o->n);
        if (td >= 0) {
            *dt = typedef_types[td].dtype;
            return 0;
        }
        if (word_is(o->s, o->n, "float")) {
            *dt = PG_FLOAT32;
            return 0;
        }
        if (word_is(o->s, o->n, "double")) {
            *dt = PG_FLOAT64;
            return 0;
        }
        if (word_is(o->s, o->n, "bool")) {
            *dt = PG_UINT8;
            return 0;
        }
        snprintf(why, whyn, "'void' has no element type: use a typed pointer such as float *");
        return -1;
    }
    int ok = n_other == 0 && nsigned <= 1 && nunsigned <= 1 && nsign <= 1 && nint <= 1;
    if (ok && nchar) {
        ok = nchar == 1 && !nshort && !nint && !nlong;
        *dt = nunsigned ? PG_UINT8 : PG_INT8;
    } else if (ok && nshort) {
        ok = nshort == 1 && !nlong;
        *dt = nunsigned ? PG_UINT16 : PG_INT16;
    } else if (ok && nlong) {
        ok = nlong <= 2;
        *dt = nunsigned ? PG_UINT64 : PG_INT64;
    } else if (ok) {
        ok = nint || nsign;
        *dt = nunsigned ? PG_UINT32 : PG_INT32;
    }
    if (!ok) {
        int len = 0;
        char words[96] = "";
        for (int i = 0; i < nbase && len < (int)sizeof words; i++)
            len += snprintf(words + len, sizeof words - (size_t)len, "%s%.*s", i ? " " : "",
                            (int)base[i].n, base[i].s);
        if (nlong == 1 && n_other == 1 && word_is(base[other].s, base[other].n, "double"))
            snprintf(why, whyn, "'long double' is not supported: use double");
        else
            snprintf(why, whyn, "'%s' is not a valid type (%s)", words, supported_types);
        return -1;
    }
    return 0;
}

/* Context for error messages: "signature" or "kernel 'k'". */
typedef struct sig_ctx {
    const char *what;
    int allow_prefix; /* in/out/inout before a pointer (explicit signatures only) */
} sig_ctx;

static pg_status param_error(const sig_ctx *cx, int pos, const char *text, size_t len,
                             const char *name, size_t name_len, const char *fmt, ...)
    PG__PRINTF(7, 8);

static pg_status param_error(const sig_ctx *cx, int pos, const char *text, size_t len,
                             const char *name, size_t name_len, const char *fmt, ...) {
    char why[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    while (len && isspace((unsigned char)*text)) {
        text++;
        len--;
    }
    while (len && isspace((unsigned char)text[len - 1]))
        len--;
    if (name_len)
        return pg__error(PG_ERROR_ARGUMENT, "%s: parameter %d '%.*s' (\"%.*s\"): %s", cx->what, pos,
                         (int)name_len, name, (int)len, text, why);
    return pg__error(PG_ERROR_ARGUMENT, "%s: parameter %d (unnamed, \"%.*s\"): %s", cx->what, pos,
                     (int)len, text, why);
}

/* The options in parentheses after an access word: what each thread block b (linear index, x
 * fastest; T threads per block) touches of the array, so that copies of an output may start per
 * chunk while the kernel runs, and one launch may be split over devices by ranges of blocks:
 *   out(chunks=blocks[*K])       b writes elements [b*K*T, (b+1)*K*T)
 *   out(rows=blocks*R)           b writes rows [b*R, (b+1)*R) along the first axis
 *   in(chunks=blocks[*K], halo=H) b reads its elements and the H elements on each side
 *   in(rows=blocks*R, halo=H)    b reads its rows and the H rows on each side
 * (inout as out; halo is optional and for inputs only). */
typedef struct access_opts {
    int chunk_k, rows, halo;
} access_opts;

/* One "key=value" of the options: 0, or -1 with why set. */
static int access_item(const char *opt, access_opts *o, int input, char *why, size_t cap) {
    const char *digits;
    long v = 1;
    if (!strncmp(opt, "chunks=blocks", 13) || !strncmp(opt, "rows=blocks", 11)) {
        int rows = opt[0] == 'r';
        const char *rest = opt + (rows ? 11 : 13);
        if (*rest) {
            digits = rest + 1;
            if (*rest != '*' || !*digits || strspn(digits, "0123456789") != strlen(digits) ||
                (v = strtol(digits, NULL, 10)) < 1 || v > 65536) {
                snprintf(why, cap,
                         "'%s': write %s=blocks or %s=blocks*K with K from 1 to 65536 (%s per "
                         "thread block)",
                         opt, rows ? "rows" : "chunks", rows ? "rows" : "chunks",
                         rows ? "K rows" : "K elements per thread");
                return -1;
            }
        }
        if (o->chunk_k || o->rows) {
            snprintf(why, cap, "'%s': give one of chunks= and rows=, once", opt);
            return -1;
        }
        if (rows)
            o->rows = (int)v;
        else
            o->chunk_k = (int)v;
        return 0;
    }
    if (!strncmp(opt, "halo=", 5)) {
        digits = opt + 5;
        if (!input) {
            snprintf(why, cap,
                     "'%s': halo applies to inputs only (the elements a block reads beyond its "
                     "own range); a block of an output writes its own range",
                     opt);
            return -1;
        }
        if (!*digits || strspn(digits, "0123456789") != strlen(digits) ||
            (v = strtol(digits, NULL, 10)) < 0 || v > (1L << 30)) {
            snprintf(why, cap, "'%s': halo=H takes a whole number of elements or rows, 0 to 2^30",
                     opt);
            return -1;
        }
        if (o->halo) {
            snprintf(why, cap, "'%s': halo is given twice", opt);
            return -1;
        }
        o->halo = (int)v;
        return 0;
    }
    snprintf(why, cap,
             "unknown option '%s': the options are chunks=blocks[*K] (each thread block touches "
             "one contiguous chunk, K elements per thread), rows=blocks*R (R rows per block), and "
             "for inputs halo=H",
             opt);
    return -1;
}

/* "out(chunks=blocks) float *y", "in(rows=blocks*4, halo=1) const float *x": on success *skip
 * is the length of "(...)" (the caller reads the access word as usual from the rest) and *o the
 * options; 0 and *skip 0 when there are no parentheses. -1 with why set: malformed options. */
static int access_option(const char *text, size_t len, size_t *skip, access_opts *o, char *why,
                         size_t cap) {
    size_t i = 0;
    *skip = 0;
    memset(o, 0, sizeof *o);
    while (i < len && isspace((unsigned char)text[i]))
        i++;
    size_t w = i;
    while (i < len && isalpha((unsigned char)text[i]))
        i++;
    int input = word_is(text + w, i - w, "in");
    if (!(input || word_is(text + w, i - w, "out") || word_is(text + w, i - w, "inout")) ||
        i >= len || text[i] != '(')
        return 0;
    size_t open = i, close = open;
    while (close < len && text[close] != ')')
        close++;
    if (close >= len) {
        snprintf(why, cap, "'%.*s(' is not closed: write %.*s(chunks=blocks)", (int)(i - w),
                 text + w, (int)(i - w), text + w);
        return -1;
    }
    char opt[128];
    size_t n = 0;
    for (size_t j = open + 1; j <= close; j++) {
        if (j < close && text[j] != ',') {
            if (!isspace((unsigned char)text[j]) && n + 1 < sizeof opt)
                opt[n++] = text[j];
            continue;
        }
        opt[n] = 0;
        if (n == 0) {
            snprintf(why, cap, "'%.*s(%.*s)': an empty option", (int)(i - w), text + w,
                     (int)(close - open - 1), text + open + 1);
            return -1;
        }
        if (access_item(opt, o, input, why, cap) < 0)
            return -1;
        n = 0;
    }
    if (!o->chunk_k && !o->rows) {
        snprintf(why, cap,
                 "'%.*s(%.*s)': say which part each thread block touches (chunks=blocks or "
                 "rows=blocks*R)%s",
                 (int)(i - w), text + w, (int)(close - open - 1), text + open + 1,
                 o->halo ? " before its halo" : "");
        return -1;
    }
    *skip = close + 1 - open;
    return 1;
}

static pg_status parse_param(const sig_ctx *cx, int pos, const char *text, size_t len,
                             pg_param_info *p) {
    tok t[MAX_TOKENS];
    int nt;
    char cwhy[512];
    size_t cskip = 0;
    access_opts ao = {0, 0, 0};
    int copt = cx->allow_prefix ? access_option(text, len, &cskip, &ao, cwhy, sizeof cwhy) : 0;
    if (copt < 0)
        return param_error(cx, pos, text, len, NULL, 0, "%s", cwhy);
    char ctext[1024];
    if (copt > 0) { /* the same text without "(...)", so the rest reads as always */
        size_t at = 0;
        while (at < len && text[at] != '(')
            at++;
        if (len - cskip >= sizeof ctext)
            return param_error(cx, pos, text, len, NULL, 0, "the parameter is too long");
        memcpy(ctext, text, at);
        memcpy(ctext + at, text + at + cskip, len - at - cskip);
        text = ctext;
        len -= cskip;
    }
    if (tokenize(text, len, t, &nt) != 0)
        return param_error(cx, pos, text, len, NULL, 0, "too many words for a parameter");
    int i = 0;
    pg_access prefix = 0;
    if (cx->allow_prefix && nt > 1 && t[0].kind == 'a') {
        if (word_is(t[0].s, t[0].n, "in"))
            prefix = PG_ACCESS_IN;
        else if (word_is(t[0].s, t[0].n, "out"))
            prefix = PG_ACCESS_OUT;
        else if (word_is(t[0].s, t[0].n, "inout"))
            prefix = PG_ACCESS_INOUT;
        if (prefix)
            i = 1;
    }
    tok base[MAX_BASE];
    int nbase = 0, pointee_const = 0, pointee_volatile = 0, stars = 0, brackets = 0;
    const tok *name = NULL, *bad = NULL;
    for (; i < nt && t[i].kind == 'a'; i++) {
        if (word_is(t[i].s, t[i].n, "const"))
            pointee_const = 1;
        else if (word_is(t[i].s, t[i].n, "volatile"))
            pointee_volatile = 1;
        else if (!is_ignored_qualifier(&t[i])) {
            if (nbase == MAX_BASE) {
                bad = &t[i];
                break;
            }
            base[nbase++] = t[i];
        }
    }
    while (!bad && i < nt && t[i].kind == '*') {
        stars++;
        for (i++; i < nt && is_qualifier(&t[i]); i++)
            ; /* const after '*' makes the pointer itself const: irrelevant here */
    }
    if (!bad && stars && i < nt && t[i].kind == 'a')
        name = &t[i++];
    else if (!stars && nbase >= 2 && !is_type_word(&base[nbase - 1]))
        name = &base[--nbase];
    if (!bad && i < nt && t[i].kind == '[') {
        /* float x[] and float x[16] are pointers in a parameter list. */
        for (i++; i < nt && t[i].kind != ']'; i++)
            ;
        if (i < nt) {
            i++;
            brackets = 1;
        }
    }
    if (!bad && i < nt)
        bad = &t[i];
    const char *nm = name ? name->s : NULL;
    size_t nmn = name ? name->n : 0;
    if (bad && bad->kind == '&') {
        if (!name && bad + 1 < t + nt && bad[1].kind == 'a') {
            nm = bad[1].s;
            nmn = bad[1].n;
        }
        return param_error(cx, pos, text, len, nm, nmn,
                           "references are not supported: pass a pointer or a value");
    }
    if (bad)
        return param_error(cx, pos, text, len, nm, nmn, "unexpected '%.*s'", (int)bad->n, bad->s);
    if (nbase == 0)
        return param_error(cx, pos, text, len, nm, nmn, "the parameter has no type");
    if (name && (name->n >= sizeof p->name || is_type_word(name) || is_qualifier(name) ||
                 memmem(name->s, name->n, "::", 2))) {
        if (name->n >= sizeof p->name)
            return param_error(cx, pos, text, len, nm, nmn,
                               "the name is %zu characters long; at most %zu are allowed", name->n,
                               sizeof p->name - 1);
        return param_error(cx, pos, text, len, NULL, 0, "'%.*s' is not a valid parameter name",
                           (int)name->n, name->s);
    }
    pg_dtype dt;
    char why[512];
    if (resolve_base(base, nbase, &dt, why, sizeof why) != 0)
        return param_error(cx, pos, text, len, nm, nmn, "%s", why);
    stars += brackets;
    if (stars > 1)
        return param_error(cx, pos, text, len, nm, nmn,
                           "pointers to pointers are not supported: pass one flat array");
    int is_bool = nbase == 1 && word_is(base[0].s, base[0].n, "bool");
    if (stars && is_bool)
        return param_error(cx, pos, text, len, nm, nmn,
                           "bool arrays are not supported: use unsigned char (uint8) elements");
    if (!stars && prefix)
        return param_error(cx, pos, text, len, nm, nmn,
                           "'%s' applies to pointers only: scalars are passed by value",
                           prefix == PG_ACCESS_IN    ? "in"
                           : prefix == PG_ACCESS_OUT ? "out"
                                                     : "inout");
    if (stars && pointee_const && prefix && prefix != PG_ACCESS_IN)
        return param_error(cx, pos, text, len, nm, nmn,
                           "'%s' contradicts const: a kernel cannot write through a const "
                           "pointer (drop const or use 'in')",
                           prefix == PG_ACCESS_OUT ? "out" : "inout");

    memset(p, 0, sizeof *p);
    if (name)
        memcpy(p->name, name->s, name->n);
    size_t tl = 0;
    char type[256];
    tl += (size_t)snprintf(type, sizeof type, "%s%s", stars && pointee_const ? "const " : "",
                           stars && pointee_volatile ? "volatile " : "");
    for (int b = 0; b < nbase; b++)
        tl += (size_t)snprintf(type + tl, sizeof type - tl, "%s%.*s", b ? " " : "", (int)base[b].n,
                               base[b].s);
    if (stars)
        tl += (size_t)snprintf(type + tl, sizeof type - tl, " *");
    if (tl >= sizeof p->type)
        return param_error(cx, pos, text, len, nm, nmn, "the type '%s' is too long", type);
    memcpy(p->type, type, tl + 1);
    if (copt > 0 && !stars)
        return param_error(cx, pos, text, len, nm, nmn, "%s=blocks applies to pointers only",
                           ao.rows ? "rows" : "chunks");
    p->is_array = stars == 1;
    p->chunk_per_thread = ao.chunk_k;
    p->rows_per_block = ao.rows;
    p->halo = ao.halo;
    p->dtype = dt;
    p->access = !stars          ? PG_ACCESS_IN
                : prefix        ? prefix
                : pointee_const ? PG_ACCESS_IN
                                : PG_ACCESS_INOUT;
    return PG_OK;
}

/* ------------------------------------------------------------------ parameter lists */

static int only_space(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return 0;
    return 1;
}

static pg_status parse_list(const sig_ctx *cx, const char *s, size_t len, pg_param_info **out,
                            int *nout) {
    size_t a = 0, b = len;
    while (a < b && isspace((unsigned char)s[a]))
        a++;
    while (b > a && isspace((unsigned char)s[b - 1]))
        b--;
    if (a == b || (b - a == 4 && memcmp(s + a, "void", 4) == 0)) {
        *out = pg__calloc(1, sizeof **out);
        if (!*out)
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        *nout = 0;
        return PG_OK;
    }
    int count = 1, depth = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        depth += (c == '(' || c == '[' || c == '<') - (c == ')' || c == ']' || c == '>');
        count += c == ',' && depth == 0;
    }
    pg_param_info *params = pg__calloc((size_t)count, sizeof *params);
    if (!params)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    size_t start = 0;
    int pos = 0;
    depth = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = i < len ? s[i] : ',';
        depth += (c == '(' || c == '[' || c == '<') - (c == ')' || c == ']' || c == '>');
        if (c != ',' || (depth != 0 && i < len))
            continue;
        pg_status st;
        if (only_space(s + start, i - start))
            st = pg__error(PG_ERROR_ARGUMENT,
                           "%s: parameter %d is empty in \"%.*s\": remove the extra comma",
                           cx->what, pos + 1, (int)len, s);
        else
            st = parse_param(cx, pos + 1, s + start, i - start, &params[pos]);
        if (st) {
            pg__free(params);
            return st;
        }
        pos++;
        start = i + 1;
    }
    *out = params;
    *nout = pos;
    return PG_OK;
}

pg_status pg__signature_parse(const char *signature, pg_param_info **out, int *n) {
    if (!signature || !out || !n)
        return pg__error(PG_ERROR_ARGUMENT, "signature parsing: signature, out and n are required");
    sig_ctx cx = {"signature", 1};
    return parse_list(&cx, signature, strlen(signature), out, n);
}

pg_status pg__signature_parse_list(const char *what, const char *list, size_t len,
                                   pg_param_info **out, int *n) {
    sig_ctx cx = {what, 0};
    return parse_list(&cx, list, len, out, n);
}

const char *pg__dtype_ctype(pg_dtype t) {
    static const char *const names[PG_DTYPE_COUNT] = {
        [PG_INT8] = "int8_t",     [PG_INT16] = "int16_t",   [PG_INT32] = "int32_t",
        [PG_INT64] = "int64_t",   [PG_UINT8] = "uint8_t",   [PG_UINT16] = "uint16_t",
        [PG_UINT32] = "uint32_t", [PG_UINT64] = "uint64_t", [PG_FLOAT32] = "float",
        [PG_FLOAT64] = "double",
    };
    return (unsigned)t < PG_DTYPE_COUNT ? names[t] : NULL;
}

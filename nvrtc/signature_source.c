/* signature_source.c: kernels found in CUDA source: comments and literals stripped, __global__
 * functions located by name, template arguments of a name expression substituted into the
 * parameter list, which signature.c then parses. */
#include "nvrtc/signature.h"
#include "base/alloc.h"
#include "nvrtc/cpu_source.h"
#include "base/error.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEMPLATE_PARAMS 16
#define MAX_SHOWN_PARAMS 64 /* parameters shown or compared as text */

static int is_ident_start(int c) {
    return isalpha(c) || c == '_';
}

static int word_is(const char *s, size_t n, const char *w) {
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

static int only_space(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return 0;
    return 1;
}

/* ------------------------------------------------------------------ source stripping */

/* Blank from p up to the end of its line, following backslash continuations. */
static size_t blank_line(char *out, const char *src, size_t i) {
    while (src[i] && src[i] != '\n') {
        if (src[i] == '\\' && src[i + 1] == '\n') {
            out[i] = ' ';
            i += 2;
            continue;
        }
        out[i++] = ' ';
    }
    return i;
}

/* Blank a quoted literal's contents, keeping its quotes; i is at the opening quote. */
static size_t blank_quoted(char *out, const char *src, size_t i) {
    char q = src[i++];
    while (src[i] && src[i] != q && src[i] != '\n') {
        if (src[i] == '\\' && src[i + 1]) {
            out[i] = ' ';
            if (src[i + 1] != '\n')
                out[i + 1] = ' ';
            i += 2;
            continue;
        }
        out[i++] = ' ';
    }
    return src[i] == q ? i + 1 : i;
}

/* A raw string R"delim( ... )delim"; i is at the opening quote. */
static size_t blank_raw(char *out, const char *src, size_t i) {
    size_t d0 = i + 1, d1 = d0;
    while (src[d1] && src[d1] != '(' && d1 - d0 < 16)
        d1++;
    if (src[d1] != '(')
        return blank_quoted(out, src, i);
    size_t dn = d1 - d0;
    for (size_t j = d1 + 1; src[j]; j++) {
        if (src[j] == ')' && strncmp(src + j + 1, src + d0, dn) == 0 && src[j + 1 + dn] == '"') {
            for (size_t k = i + 1; k < j + 1 + dn; k++)
                if (out[k] != '\n')
                    out[k] = ' ';
            return j + 2 + dn;
        }
    }
    for (size_t k = i + 1; src[k]; k++)
        if (out[k] != '\n')
            out[k] = ' ';
    return strlen(src);
}

char *pg__signature_strip(const char *source, int blank_preprocessor) {
    size_t n = strlen(source);
    char *out = pg__malloc(n + 1);
    if (!out)
        return NULL;
    memcpy(out, source, n + 1);
    size_t i = 0;
    while (i < n) {
        char c = source[i];
        if (c == '/' && source[i + 1] == '/') {
            i = blank_line(out, source, i);
        } else if (c == '/' && source[i + 1] == '*') {
            size_t j = i + 2;
            while (j < n && !(source[j] == '*' && source[j + 1] == '/'))
                j++;
            j = j < n ? j + 2 : n;
            for (size_t k = i; k < j; k++)
                if (out[k] != '\n')
                    out[k] = ' ';
            i = j;
        } else if (c == '"') {
            int raw = i > 0 && source[i - 1] == 'R' &&
                      (i < 2 || !pg__cpu_ident_char(source[i - 2]) || source[i - 2] == 'u' ||
                       source[i - 2] == 'U' || source[i - 2] == 'L' || source[i - 2] == '8');
            i = raw ? blank_raw(out, source, i) : blank_quoted(out, source, i);
        } else if (c == '\'' && (i == 0 || !pg__cpu_ident_char(source[i - 1]))) {
            i = blank_quoted(out, source, i); /* not a digit separator such as 1'000 */
        } else {
            i++;
        }
    }
    if (blank_preprocessor) {
        int line_start = 1;
        for (i = 0; i < n; i++) {
            if (out[i] == '\n') {
                line_start = 1;
            } else if (line_start && out[i] == '#') {
                i = blank_line(out, out, i);
                i--; /* the loop's i++ lands on the newline (or the end) */
                line_start = 0;
            } else if (!isspace((unsigned char)out[i])) {
                line_start = 0;
            }
        }
    }
    return out;
}

/* ------------------------------------------------------------------ finding kernels */

typedef struct kernel_site {
    size_t global_at; /* the __global__ token */
    size_t name_at, name_len;
    size_t lparen, rparen; /* the parameter list's parentheses */
    int is_definition;     /* a body follows */
} kernel_site;

static size_t skip_space(const char *s, size_t i) {
    while (s[i] && isspace((unsigned char)s[i]))
        i++;
    return i;
}

/* Where each '(' and '[' of a stripped source closes (offset just past its partner, 0 if never),
 * as pg__cpu_match would say, found in one pass: matching again from every __global__ would be
 * quadratic in a source of many unclosed parameter lists. */
typedef struct match_table {
    uint32_t *close; /* by offset; only entries at '(' and '[' are meaningful */
} match_table;

static int match_table_build(const char *s, match_table *t) {
    size_t n = strlen(s);
    t->close = NULL;
    if (n >= UINT32_MAX)
        return -1;
    uint32_t *close = pg__calloc(n + 1, sizeof *close);
    uint32_t *open = pg__malloc((n + 1) * sizeof *open); /* two stacks: '(' from the bottom, '[' */
    if (!close || !open) {
        pg__free(close);
        pg__free(open);
        return -1;
    }
    size_t np = 0, nb = n; /* '(' stack grows up from 0, '[' stack down from n */
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '(')
            open[np++] = (uint32_t)i;
        else if (c == '[')
            open[--nb] = (uint32_t)i;
        else if (c == ')' && np > 0)
            close[open[--np]] = (uint32_t)(i + 1);
        else if (c == ']' && nb < n)
            close[open[nb++]] = (uint32_t)(i + 1);
    }
    pg__free(open);
    t->close = close;
    return 0;
}

static size_t match_at(const match_table *t, size_t i) {
    return t->close[i];
}

/* From just after a __global__ token: the function name and its parameter list. */
static int parse_site(const char *s, const match_table *t, size_t after, kernel_site *k) {
    size_t i = after;
    for (;;) {
        i = skip_space(s, i);
        char c = s[i];
        if (!c || c == ';' || c == '{' || c == '}' || c == '(' || c == ')')
            return 0;
        if (c == '"') {
            for (i++; s[i] && s[i] != '"'; i++)
                ;
            i += s[i] == '"';
            continue;
        }
        if (c == '[' && s[i + 1] == '[') { /* [[attribute]] */
            size_t j = match_at(t, i);
            if (!j)
                return 0;
            i = j;
            continue;
        }
        if (!is_ident_start((unsigned char)c)) {
            i++;
            continue;
        }
        size_t w = i;
        while (pg__cpu_ident_char((unsigned char)s[i]))
            i++;
        size_t wn = i - w;
        size_t j = skip_space(s, i);
        if (word_is(s + w, wn, "__global__"))
            return 0; /* the next kernel: reading on from each one would be quadratic */
        if (word_is(s + w, wn, "__launch_bounds__") || word_is(s + w, wn, "__attribute__") ||
            word_is(s + w, wn, "__declspec") || word_is(s + w, wn, "alignas")) {
            if (s[j] == '(') {
                size_t e = match_at(t, j);
                if (!e)
                    return 0;
                i = e;
            }
            continue;
        }
        if (s[j] == '(') {
            size_t e = match_at(t, j);
            if (!e)
                return 0;
            k->name_at = w;
            k->name_len = wn;
            k->lparen = j;
            k->rparen = e - 1;
            return 1;
        }
    }
}

/* Every __global__ function of a stripped source, in order. *out malloc'ed. */
static pg_status find_sites(const char *s, kernel_site **out, int *n) {
    int cap = 8, cnt = 0;
    kernel_site *sites = pg__malloc((size_t)cap * sizeof *sites);
    match_table t;
    if (!sites || match_table_build(s, &t) != 0) {
        pg__free(sites);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    /* Not strstr nor memmem: under a sanitizer each call checks the whole rest of the text
     * (quadratic in a source of many __global__). */
    size_t len = strlen(s);
    for (size_t at = pg__cpu_find_word(s, 0, len, "__global__"); at != (size_t)-1;
         at = pg__cpu_find_word(s, at + 10, len, "__global__")) {
        kernel_site k = {.global_at = at};
        if (!parse_site(s, &t, at + 10, &k))
            continue;
        if (cnt == cap) {
            cap *= 2;
            kernel_site *ns = pg__realloc(sites, (size_t)cap * sizeof *sites);
            if (!ns) {
                pg__free(sites);
                pg__free(t.close);
                return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
            }
            sites = ns;
        }
        sites[cnt++] = k;
    }
    pg__free(t.close);
    /* After a list: qualifiers or attributes, then '{' for a definition. Looked for only up to
     * the next kernel, so that each part of the source is read once. */
    for (int i = 0; i < cnt; i++) {
        size_t b = sites[i].rparen + 1, end = i + 1 < cnt ? sites[i + 1].global_at : SIZE_MAX;
        while (b < end && s[b] && s[b] != '{' && s[b] != ';' && s[b] != '}')
            b++;
        sites[i].is_definition = b < end && s[b] == '{';
    }
    *out = sites;
    *n = cnt;
    return PG_OK;
}

/* A name expression split: "ns::axpy<float, 4>" has base "axpy" (what the source declares),
 * and template arguments "float" and "4". */
typedef struct name_expr {
    const char *base;
    size_t base_len;
    int has_args;
    int nargs;
    const char *arg[MAX_TEMPLATE_PARAMS];
    size_t arg_len[MAX_TEMPLATE_PARAMS];
} name_expr;

static void trim(const char **s, size_t *n) {
    while (*n && isspace((unsigned char)**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && isspace((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

/* Split s[0..n) on commas outside brackets into trimmed pieces; -1 if a piece is empty or there
 * are more than max. An all-space s gives no pieces. */
static int split_args(const char *s, size_t n, const char **arg, size_t *arg_len, int max) {
    if (only_space(s, n))
        return 0;
    int cnt = 0, depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = i < n ? s[i] : ',';
        if (c == '<' || c == '(' || c == '[')
            depth++;
        else if ((c == '>' || c == ')' || c == ']') && depth > 0)
            depth--;
        if (c != ',' || (depth > 0 && i < n))
            continue;
        const char *a = s + start;
        size_t an = i - start;
        trim(&a, &an);
        if (an == 0 || cnt == max)
            return -1;
        arg[cnt] = a;
        arg_len[cnt++] = an;
        start = i + 1;
    }
    return cnt;
}

static pg_status parse_name_expr(const char *name, name_expr *e) {
    memset(e, 0, sizeof *e);
    size_t n = strlen(name);
    const char *lt = strchr(name, '<');
    size_t head = lt ? (size_t)(lt - name) : n;
    const char *b = name;
    size_t bn = head;
    trim(&b, &bn);
    /* The declared name is the last component of a qualified name. */
    for (size_t i = bn; i >= 2; i--)
        if (b[i - 1] == ':' && b[i - 2] == ':') {
            b += i;
            bn -= i;
            break;
        }
    int ok = bn > 0 && is_ident_start((unsigned char)b[0]);
    for (size_t i = 0; ok && i < bn; i++)
        ok = pg__cpu_ident_char((unsigned char)b[i]);
    if (ok && lt) {
        size_t close = pg__cpu_match(name, head);
        ok = close > 0 && only_space(name + close, n - close);
        if (ok) {
            e->has_args = 1;
            e->nargs = split_args(name + head + 1, close - head - 2, e->arg, e->arg_len,
                                  MAX_TEMPLATE_PARAMS);
            ok = e->nargs >= 0;
        }
    }
    if (!ok)
        return pg__error(PG_ERROR_ARGUMENT,
                         "'%s' is not a kernel name: expected a function name, optionally with "
                         "template arguments (\"axpy\", \"axpy<float>\")",
                         name);
    e->base = b;
    e->base_len = bn;
    return PG_OK;
}

static pg_status not_found(const char *name, const char *source, const char *s,
                           const kernel_site *sites, int n) {
    /* A source that does not scan (a '(' never closed, a string with no end) hides its kernels:
     * say so rather than that there are none. */
    char why[256];
    int bad = pg__signature_scan(source, why, sizeof why);
    if (bad < 0)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (bad)
        return pg__error(
            PG_ERROR_COMPILE, "kernel '%s': the source is malformed at %s; %s", name, why,
            n ? "the kernel may be hidden by it" : "no __global__ function could be found in it");
    char list[1024];
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; i < n && i < 256 && len < sizeof list - 1; i++) {
        int dup = 0;
        for (int j = 0; j < i && !dup; j++)
            dup = sites[j].name_len == sites[i].name_len &&
                  memcmp(s + sites[j].name_at, s + sites[i].name_at, sites[i].name_len) == 0;
        if (!dup)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%.*s", len ? ", " : "",
                                    (int)sites[i].name_len, s + sites[i].name_at);
    }
    if (n == 0)
        return pg__error(PG_ERROR_NOT_FOUND,
                         "kernel '%s' not found in the source (the source has no __global__ "
                         "function)",
                         name);
    return pg__error(PG_ERROR_NOT_FOUND, "kernel '%s' not found in the source (kernels found: %s)",
                     name, list);
}

/* The site for a name: the first definition, else the first declaration. */
static const kernel_site *pick_site(const char *s, const name_expr *e, const kernel_site *sites,
                                    int n) {
    const kernel_site *first = NULL;
    for (int i = 0; i < n; i++) {
        if (sites[i].name_len != e->base_len ||
            memcmp(s + sites[i].name_at, e->base, e->base_len) != 0)
            continue;
        if (sites[i].is_definition)
            return &sites[i];
        if (!first)
            first = &sites[i];
    }
    return first;
}

pg_status pg__signature_find(const char *source, const char *name) {
    if (!source || !name)
        return pg__error(PG_ERROR_ARGUMENT, "kernel lookup: source and name are required");
    name_expr e;
    pg_status st = parse_name_expr(name, &e);
    if (st)
        return st;
    char *s = pg__signature_strip(source, 1);
    if (!s)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    kernel_site *sites = NULL;
    int n = 0;
    st = find_sites(s, &sites, &n);
    if (!st && !pick_site(s, &e, sites, n))
        st = not_found(name, source, s, sites, n);
    pg__free(sites);
    pg__free(s);
    return st;
}

/* ------------------------------------------------------------------ overloads */

/* A parameter list as text, whitespace squeezed; with drop_names, each parameter's trailing
 * name removed (a declaration and its definition may name parameters differently). */
static void squeeze(const char *list, size_t len, int drop_names, char *out, size_t cap) {
    size_t o = 0;
    const char *piece[MAX_SHOWN_PARAMS];
    size_t piece_len[MAX_SHOWN_PARAMS];
    int n = split_args(list, len, piece, piece_len, MAX_SHOWN_PARAMS);
    if (n < 0) { /* too many to split: the text as it is */
        piece[0] = list;
        piece_len[0] = len;
        n = 1;
        trim(&piece[0], &piece_len[0]);
    }
    for (int k = 0; k < n && o + 1 < cap; k++) {
        const char *p = piece[k];
        size_t pn = piece_len[k];
        const char *eq = memchr(p, '=', pn); /* a default argument */
        if (eq)
            pn = (size_t)(eq - p);
        while (pn && isspace((unsigned char)p[pn - 1]))
            pn--;
        if (drop_names) {
            size_t e = pn;
            while (e > 0 && pg__cpu_ident_char((unsigned char)p[e - 1]))
                e--;
            size_t before = e;
            while (before > 0 && isspace((unsigned char)p[before - 1]))
                before--;
            /* "float *y", "int n": a name follows a type; "float", "unsigned": no name */
            if (e < pn && before > 0 &&
                (pg__cpu_ident_char((unsigned char)p[before - 1]) || p[before - 1] == '*' ||
                 p[before - 1] == '&'))
                pn = before;
        }
        if (k && o + 2 < cap) {
            out[o++] = ',';
            out[o++] = ' ';
        }
        int space = 0;
        for (size_t i = 0; i < pn && o + 1 < cap; i++) {
            if (isspace((unsigned char)p[i])) {
                space = 1;
                continue;
            }
            /* A step may write two characters (a space, then p[i]): both must leave room
             * for the terminator, or it lands past out[cap - 1]. */
            if (space && o > 0 && out[o - 1] != ' ' && out[o - 1] != ',') {
                if (o + 2 >= cap)
                    break;
                out[o++] = ' ';
            }
            space = 0;
            out[o++] = p[i];
        }
    }
    out[o] = '\0';
}

/* Do two sites declare the same parameter types? By the parsed parameters where both lists
 * parse (names, spelling and qualifiers that change nothing are ignored), else by their text
 * without names (template parameters do not parse). */
static int same_params(const char *s, const kernel_site *a, const kernel_site *b) {
    pg_param_info *pa = NULL, *pb = NULL;
    int na = 0, nb = 0;
    int oka = pg__signature_parse_list("", s + a->lparen + 1, a->rparen - a->lparen - 1, &pa,
                                       &na) == PG_OK;
    int okb = pg__signature_parse_list("", s + b->lparen + 1, b->rparen - b->lparen - 1, &pb,
                                       &nb) == PG_OK;
    pg__error_clear(); /* a list that does not parse (template parameters) is compared as text */
    int same;
    if (oka && okb) {
        same = na == nb;
        for (int i = 0; same && i < na; i++)
            same = pa[i].is_array == pb[i].is_array && pa[i].dtype == pb[i].dtype &&
                   (!pa[i].is_array || pa[i].access == pb[i].access);
    } else if (oka || okb) {
        same = 0;
    } else {
        char ta[512], tb[512];
        squeeze(s + a->lparen + 1, a->rparen - a->lparen - 1, 1, ta, sizeof ta);
        squeeze(s + b->lparen + 1, b->rparen - b->lparen - 1, 1, tb, sizeof tb);
        same = strcmp(ta, tb) == 0;
    }
    pg__free(pa);
    pg__free(pb);
    return same;
}

/* Two __global__ functions of one name with different parameters: which one is meant cannot
 * be told from the name, and taking the first would pass the other's arguments wrongly. */
static pg_status check_overloads(const char *name, const char *s, const name_expr *e,
                                 const kernel_site *sites, int n) {
    const kernel_site *distinct[4];
    int nd = 0, more = 0;
    for (int i = 0; i < n; i++) {
        if (sites[i].name_len != e->base_len ||
            memcmp(s + sites[i].name_at, e->base, e->base_len) != 0)
            continue;
        int known = 0;
        for (int j = 0; j < nd && !known; j++)
            known = same_params(s, distinct[j], &sites[i]);
        if (known)
            continue;
        if (nd == 4) {
            more = 1;
            break;
        }
        distinct[nd++] = &sites[i];
    }
    if (nd < 2)
        return PG_OK;
    char list[1200], params[256];
    size_t len = 0;
    for (int j = 0; j < nd && len < sizeof list; j++) {
        const kernel_site *k = distinct[j];
        squeeze(s + k->lparen + 1, k->rparen - k->lparen - 1, 0, params, sizeof params);
        int w =
            snprintf(list + len, sizeof list - len, "%s%.*s(%s) at line %d",
                     j == 0        ? ""
                     : j == nd - 1 ? (more ? ", " : " and ")
                                   : ", ",
                     (int)k->name_len, s + k->name_at, params, pg__cpu_line_of(s, k->global_at));
        /* snprintf returns the length it wanted: a long name truncated leaves len at the
         * end of what fits, never past it (sizeof list - len must not wrap). */
        if (w < 0)
            break;
        len = len + (size_t)w < sizeof list ? len + (size_t)w : sizeof list - 1;
    }
    return pg__error(PG_ERROR_ARGUMENT,
                     "kernel '%s' is ambiguous: the source has %s__global__ functions of that "
                     "name with different parameters: %s%s. Pass signature= with the parameter "
                     "list of the one to run (e.g. signature=\"%s\"), or rename the others",
                     name,
                     more      ? "several "
                     : nd == 2 ? "two "
                               : "",
                     list, more ? " and more" : "", params);
}

/* ------------------------------------------------------------------ templates */

typedef struct template_param {
    const char *name, *def; /* def: default argument, NULL if none */
    size_t name_len, def_len;
} template_param;

/* The template header right before a kernel (between the previous declaration's end and the
 * __global__ token), if any. Returns the number of parameters, 0 for none, -1 if malformed. */
static int find_template(const char *s, size_t global_at, template_param *tp, int max) {
    size_t from = global_at;
    while (from > 0 && s[from - 1] != ';' && s[from - 1] != '}' && s[from - 1] != '{')
        from--;
    const char *t = NULL;
    for (size_t i = from; i + 8 <= global_at; i++)
        if (memcmp(s + i, "template", 8) == 0 &&
            (i == 0 || !pg__cpu_ident_char((unsigned char)s[i - 1])) &&
            !pg__cpu_ident_char((unsigned char)s[i + 8])) {
            t = s + i;
            break;
        }
    if (!t)
        return 0;
    size_t lt = skip_space(s, (size_t)(t - s) + 8);
    if (s[lt] != '<')
        return -1;
    size_t gt = pg__cpu_match(s, lt);
    if (!gt || gt > global_at)
        return -1;
    const char *piece[MAX_TEMPLATE_PARAMS];
    size_t piece_len[MAX_TEMPLATE_PARAMS];
    int n = split_args(s + lt + 1, gt - lt - 2, piece, piece_len, max);
    for (int k = 0; k < n; k++) {
        const char *p = piece[k];
        size_t pn = piece_len[k];
        if (memchr(p, '.', pn))
            return -1; /* a parameter pack */
        const char *eq = memchr(p, '=', pn);
        size_t decl_len = eq ? (size_t)(eq - p) : pn;
        while (decl_len && isspace((unsigned char)p[decl_len - 1]))
            decl_len--;
        size_t e = decl_len;
        while (e > 0 && pg__cpu_ident_char((unsigned char)p[e - 1]))
            e--;
        if (e == decl_len || e == 0)
            return -1; /* no name, or a name with no kind in front */
        tp[k].name = p + e;
        tp[k].name_len = decl_len - e;
        tp[k].def = NULL;
        tp[k].def_len = 0;
        if (eq) {
            tp[k].def = eq + 1;
            tp[k].def_len = pn - (size_t)(eq + 1 - p);
            trim(&tp[k].def, &tp[k].def_len);
        }
    }
    return n;
}

/* The parameter list text with each template parameter replaced by its argument. */
static char *substitute(const char *list, size_t len, const template_param *tp, int n,
                        const char *const *val, const size_t *val_len) {
    size_t cap = len + 1;
    for (int k = 0; k < n; k++)
        cap += val_len[k] * (len / (tp[k].name_len ? tp[k].name_len : 1) + 1);
    char *out = pg__malloc(cap);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        if (is_ident_start((unsigned char)list[i]) &&
            (i == 0 || !pg__cpu_ident_char((unsigned char)list[i - 1]))) {
            size_t j = i;
            while (j < len && pg__cpu_ident_char((unsigned char)list[j]))
                j++;
            int hit = -1;
            for (int k = 0; k < n && hit < 0; k++)
                if (tp[k].name_len == j - i && memcmp(tp[k].name, list + i, j - i) == 0)
                    hit = k;
            if (hit >= 0) {
                memcpy(out + o, val[hit], val_len[hit]);
                o += val_len[hit];
            } else {
                memcpy(out + o, list + i, j - i);
                o += j - i;
            }
            i = j;
        } else {
            out[o++] = list[i++];
        }
    }
    out[o] = '\0';
    return out;
}

pg_status pg__signature_infer(const char *source, const char *name, pg_param_info **out, int *n) {
    if (!source || !name || !out || !n)
        return pg__error(PG_ERROR_ARGUMENT,
                         "signature inference: source, name, out and n are required");
    name_expr e;
    pg_status st = parse_name_expr(name, &e);
    if (st)
        return st;
    char *s = pg__signature_strip(source, 1);
    if (!s)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    kernel_site *sites = NULL;
    int nsites = 0;
    char *subst = NULL;
    st = find_sites(s, &sites, &nsites);
    if (st) {
        pg__free(s);
        return st;
    }
    const kernel_site *k = pick_site(s, &e, sites, nsites);
    if (k && (st = check_overloads(name, s, &e, sites, nsites))) {
        pg__free(sites);
        pg__free(s);
        return st;
    }
    char what[160];
    snprintf(what, sizeof what, "kernel '%s'", name);
    template_param tp[MAX_TEMPLATE_PARAMS];
    int ntp = k ? find_template(s, k->global_at, tp, MAX_TEMPLATE_PARAMS) : 0;
    const char *list = k ? s + k->lparen + 1 : NULL;
    size_t list_len = k ? k->rparen - k->lparen - 1 : 0;
    if (!k) {
        st = not_found(name, source, s, sites, nsites);
    } else if (ntp < 0) {
        st = pg__error(PG_ERROR_UNSUPPORTED,
                       "kernel '%s': its template header could not be read (parameter packs "
                       "and more than %d parameters are not supported): give a signature",
                       name, MAX_TEMPLATE_PARAMS);
    } else if (ntp == 0 && e.has_args) {
        st = pg__error(PG_ERROR_ARGUMENT,
                       "kernel '%s': '%.*s' is not a template, but the name gives template "
                       "arguments",
                       name, (int)e.base_len, e.base);
    } else if (e.nargs > ntp) {
        st = pg__error(PG_ERROR_ARGUMENT,
                       "kernel '%s': the template has %d parameter(s) but the name gives %d "
                       "argument(s)",
                       name, ntp, e.nargs);
    } else if (ntp > 0) {
        const char *val[MAX_TEMPLATE_PARAMS];
        size_t val_len[MAX_TEMPLATE_PARAMS];
        for (int i = 0; i < ntp && !st; i++) {
            val[i] = i < e.nargs ? e.arg[i] : tp[i].def;
            val_len[i] = i < e.nargs ? e.arg_len[i] : tp[i].def_len;
            if (!val[i])
                st = pg__error(PG_ERROR_ARGUMENT,
                               "kernel '%s' is a template: give its template argument for '%.*s' "
                               "in the name, e.g. \"%.*s<float>\"",
                               name, (int)tp[i].name_len, tp[i].name, (int)e.base_len, e.base);
        }
        if (!st && !(subst = substitute(list, list_len, tp, ntp, val, val_len)))
            st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        if (subst) {
            list = subst;
            list_len = strlen(subst);
        }
    }
    if (!st)
        st = pg__signature_parse_list(what, list, list_len, out, n);
    pg__free(subst);
    pg__free(sites);
    pg__free(s);
    return st;
}

/* ------------------------------------------------------------------ demoting a kernel */

char *pg__signature_demote(const char *source, const char *name) {
    name_expr e;
    if (!source || !name || parse_name_expr(name, &e) != PG_OK)
        return NULL;
    char *s = pg__signature_strip(source, 1);
    char *out = s ? pg__strdup(source) : NULL;
    kernel_site *sites = NULL;
    int n = 0;
    if (!out || find_sites(s, &sites, &n) != PG_OK) {
        pg__free(s);
        pg__free(out);
        pg__error_clear();
        return NULL;
    }
    match_table t = {0};
    int found = 0;
    for (int i = 0; i < n; i++) {
        const kernel_site *k = &sites[i];
        if (k->name_len != e.base_len || memcmp(s + k->name_at, e.base, e.base_len) != 0)
            continue;
        found = 1;
        /* Same length: every offset the source had stays where it was. */
        memcpy(out + k->global_at, "__device__", 10);
        /* __launch_bounds__ means nothing on a __device__ function, and NVRTC refuses it. */
        for (size_t at = pg__cpu_find_word(s, k->global_at, k->name_at, "__launch_bounds__");
             at != (size_t)-1; at = pg__cpu_find_word(s, at + 1, k->name_at, "__launch_bounds__")) {
            if (!t.close && match_table_build(s, &t) != 0)
                break;
            size_t j = skip_space(s, at + 17);
            size_t end = s[j] == '(' ? match_at(&t, j) : at + 17;
            for (size_t b = at; b < end && b < k->name_at; b++)
                if (out[b] != '\n')
                    out[b] = ' ';
        }
    }
    pg__free(t.close);
    pg__free(sites);
    pg__free(s);
    if (!found) {
        pg__free(out);
        return NULL;
    }
    return out;
}

/* cpu_features.c: a kernel source's constructs checked against what CPU devices offer, and the
 * kernels that need cooperative blocks found by following calls from the kernel. */
#include "nvrtc/cpu_features.h"
#include "base/alloc.h"
#include "base/error.h"
#include "nvrtc/cpu_source.h"
#include "nvrtc/signature.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ unsupported constructs */

typedef struct construct {
    const char *name;
    int prefix; /* also every identifier that starts with it */
    const char *what;
} construct;

static const construct unsupported[] = {
    {"asm", 0, "inline PTX assembly"},
    {"__asm__", 0, "inline PTX assembly"},
    {"__asm", 0, "inline PTX assembly"},
    {"cooperative_groups", 0, "cooperative groups"},
    {"__half", 1, "half precision (cuda_fp16.h)"},
    {"cuda_fp16", 0, "half precision (cuda_fp16.h)"},
    {"__nv_bfloat16", 1, "bfloat16 (cuda_bf16.h)"},
    {"cuda_bf16", 0, "bfloat16 (cuda_bf16.h)"},
    {"__nv_fp8", 1, "8-bit floating point (cuda_fp8.h)"},
    {"cuda_fp8", 0, "8-bit floating point (cuda_fp8.h)"},
    {"nvcuda", 0, "tensor core matrix operations (wmma)"},
    {"wmma", 0, "tensor core matrix operations (wmma)"},
    {"tex1D", 1, "textures"},
    {"tex2D", 1, "textures"},
    {"tex3D", 1, "textures"},
    {"texCubemap", 1, "textures"},
    {"cudaTextureObject_t", 0, "textures"},
    {"surf1D", 1, "surfaces"},
    {"surf2D", 1, "surfaces"},
    {"surf3D", 1, "surfaces"},
    {"surfCubemap", 1, "surfaces"},
    {"cudaSurfaceObject_t", 0, "surfaces"},
    {"__pipeline_", 1, "asynchronous copy pipelines"},
    {"__cvta_", 1, "address space conversions"},
    {"__isShared", 0, "address space queries"},
    {"__isGlobal", 0, "address space queries"},
    {"__isConstant", 0, "address space queries"},
    {"__isLocal", 0, "address space queries"},
    {"cudaDeviceSynchronize", 0, "dynamic parallelism"},
    {"cudaGetParameterBuffer", 0, "dynamic parallelism"},
    {"cudaLaunchDevice", 0, "dynamic parallelism"},
    {"__prof_trigger", 0, "profiler counters"},
    /* Removed in CUDA 9 for sm_70 and later: NVRTC refuses them there too. */
    {"__shfl", 0, "a warp shuffle without _sync (use __shfl_sync)"},
    {"__shfl_up", 0, "a warp shuffle without _sync (use __shfl_up_sync)"},
    {"__shfl_down", 0, "a warp shuffle without _sync (use __shfl_down_sync)"},
    {"__shfl_xor", 0, "a warp shuffle without _sync (use __shfl_xor_sync)"},
    {"__ballot", 0, "a warp vote without _sync (use __ballot_sync)"},
    {"__any", 0, "a warp vote without _sync (use __any_sync)"},
    {"__all", 0, "a warp vote without _sync (use __all_sync)"},
    {NULL, 0, NULL}};

static pg_status refuse(const char *name, const char *s, size_t at, size_t n, const char *what) {
    return pg__error(PG_ERROR_UNSUPPORTED,
                     "kernel '%s' uses %.*s (line %d of its source): CPU devices do not support "
                     "%s",
                     name, (int)n, s + at, pg__cpu_line_of(s, at), what);
}

pg_status pg__cpu_check_constructs(const char *source, const char *name) {
    char *s = pg__signature_strip(source, 0);
    if (!s)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pg_status st = PG_OK;
    for (size_t i = 0; s[i] && !st; i++) {
        if (s[i] == '<' && s[i + 1] == '<' && s[i + 2] == '<') {
            st = refuse(name, s, i, 3, "launching kernels from device code");
            break;
        }
        size_t n = pg__cpu_ident_at(s, i);
        if (!n)
            continue;
        for (const construct *c = unsupported; c->name && !st; c++) {
            size_t cn = strlen(c->name);
            if ((n == cn || (c->prefix && n > cn)) && strncmp(s + i, c->name, cn) == 0)
                st = refuse(name, s, i, n, c->what);
        }
        size_t j = i + n;
        while (isspace((unsigned char)s[j]))
            j++;
        if (!st && n == 4 && strncmp(s + i, "cuda", 4) == 0 && s[j] == ':' && s[j + 1] == ':')
            st = refuse(name, s, i, j + 2 - i, "libcu++ (cuda::)");
        i += n - 1;
    }
    pg__free(s);
    return st;
}

/* ------------------------------------------------------------------ cooperative blocks */

/* The device functions that need a block's threads to run together. */
static const char *const collectives[] = {
    "__syncthreads",     "__syncthreads_count", "__syncthreads_and",
    "__syncthreads_or",  "__syncwarp",          "__shfl_sync",
    "__shfl_up_sync",    "__shfl_down_sync",    "__shfl_xor_sync",
    "__ballot_sync",     "__any_sync",          "__all_sync",
    "__match_any_sync",  "__match_all_sync",    "__reduce_add_sync",
    "__reduce_min_sync", "__reduce_max_sync",   "__reduce_and_sync",
    "__reduce_or_sync",  "__reduce_xor_sync",   NULL};

/* Headers that define no device functions of the kernel's own. */
static const char *const plain_headers[] = {
    "cstdint",          "stdint.h",       "cmath",
    "math.h",           "cstdio",         "stdio.h",
    "cstdlib",          "stdlib.h",       "cstring",
    "string.h",         "climits",        "limits.h",
    "cfloat",           "float.h",        "cstddef",
    "stddef.h",         "cassert",        "assert.h",
    "cinttypes",        "inttypes.h",     "limits",
    "utility",          "stdbool.h",      "type_traits",
    "cuda_runtime.h",   "cuda.h",         "device_launch_parameters.h",
    "math_constants.h", "vector_types.h", NULL};

/* Words before '(' that name no function. */
static const char *const not_names[] = {"if",
                                        "for",
                                        "while",
                                        "switch",
                                        "return",
                                        "sizeof",
                                        "alignof",
                                        "decltype",
                                        "static_assert",
                                        "alignas",
                                        "__align__",
                                        "__attribute__",
                                        "__launch_bounds__",
                                        "__declspec",
                                        "noexcept",
                                        "throw",
                                        "new",
                                        "delete",
                                        "static_cast",
                                        "reinterpret_cast",
                                        "const_cast",
                                        "dynamic_cast",
                                        "typeid",
                                        "__noinline__",
                                        NULL};

static int in_list(const char *s, size_t n, const char *const *list) {
    for (int i = 0; list[i]; i++)
        if (strlen(list[i]) == n && memcmp(s, list[i], n) == 0)
            return 1;
    return 0;
}

typedef struct word {
    const char *s;
    size_t n;
} word;

/* A unit of source: a top-level declaration, or a #define. */
typedef struct unit {
    const char *text;
    size_t start, end;
    word *names;
    int nnames, cap;
    int marked; /* may reach a collective */
} unit;

typedef struct graph {
    unit *u;
    int n, cap;
    int unsure; /* something could not be followed: every kernel is cooperative */
    int failed; /* out of memory */
} graph;

static unit *new_unit(graph *g, const char *text, size_t start, size_t end) {
    if (g->failed)
        return NULL;
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 32;
        unit *u = pg__realloc(g->u, (size_t)cap * sizeof *u);
        if (!u) {
            g->failed = 1;
            return NULL;
        }
        g->u = u;
        g->cap = cap;
    }
    unit *u = &g->u[g->n++];
    memset(u, 0, sizeof *u);
    u->text = text;
    u->start = start;
    u->end = end;
    return u;
}

static void add_name(graph *g, unit *u, const char *s, size_t n) {
    if (!u || !n || in_list(s, n, not_names))
        return;
    if (u->nnames == u->cap) {
        int cap = u->cap ? 2 * u->cap : 4;
        word *nm = pg__realloc(u->names, (size_t)cap * sizeof *nm);
        if (!nm) {
            g->failed = 1;
            return;
        }
        u->names = nm;
        u->cap = cap;
    }
    u->names[u->nnames++] = (word){s, n};
}

static int mentions_collective(const char *s, size_t from, size_t to) {
    for (int i = 0; collectives[i]; i++)
        if (pg__cpu_find_word(s, from, to, collectives[i]) != (size_t)-1)
            return 1;
    return 0;
}

static size_t skip_space(const char *s, size_t i, size_t to) {
    while (i < to && isspace((unsigned char)s[i]))
        i++;
    return i;
}

/* The identifier that ends right before s[at] (spaces and a template argument list skipped),
 * or n = 0. */
static word ident_before(const char *s, size_t from, size_t at) {
    word r = {NULL, 0};
    size_t i = at;
    while (i > from && isspace((unsigned char)s[i - 1]))
        i--;
    if (i > from && s[i - 1] == '>') { /* a specialization: f<float>( */
        int depth = 0;
        while (i > from) {
            char c = s[--i];
            if (c == '>')
                depth++;
            else if (c == '<' && --depth == 0)
                break;
        }
        while (i > from && isspace((unsigned char)s[i - 1]))
            i--;
    }
    size_t e = i;
    while (i > from && pg__cpu_ident_char((unsigned char)s[i - 1]))
        i--;
    if (i < e && !isdigit((unsigned char)s[i])) {
        r.s = s + i;
        r.n = e - i;
    }
    return r;
}

/* Names a top-level unit defines: a function's name; a class's name and its member functions'. */
static void unit_names(graph *g, unit *u, const pg__cpu_unit *cu) {
    const char *s = u->text;
    size_t i = skip_space(s, cu->start, cu->body);
    for (;;) { /* template headers */
        size_t n = pg__cpu_ident_at(s, i);
        if (n != 8 || memcmp(s + i, "template", 8) != 0)
            break;
        i = skip_space(s, i + n, cu->body);
        if (s[i] != '<' || !(i = pg__cpu_match(s, i)))
            return;
        i = skip_space(s, i, cu->body);
    }
    for (size_t j = i; j < cu->body; j++) {
        size_t n = pg__cpu_ident_at(s, j);
        if ((n == 6 && !memcmp(s + j, "struct", 6)) || (n == 5 && !memcmp(s + j, "class", 5)) ||
            (n == 5 && !memcmp(s + j, "union", 5))) {
            for (size_t k = j + n; k < cu->body; k++) { /* the class name, after attributes */
                size_t m = pg__cpu_ident_at(s, k);
                if (!m)
                    continue;
                size_t after = skip_space(s, k + m, cu->body);
                if (!in_list(s + k, m, not_names) && s[after] != '(') {
                    add_name(g, u, s + k, m);
                    break;
                }
                if (s[after] == '(' && !(k = pg__cpu_match(s, after)))
                    return;
                k = s[after] == '(' ? k - 1 : k + m - 1;
            }
            int depth = 0; /* member functions: a name before '(' directly in the body */
            for (size_t k = cu->body; k < cu->end; k++) {
                depth += s[k] == '{' ? 1 : s[k] == '}' ? -1 : 0;
                if (s[k] == '(' && depth == 1)
                    add_name(g, u, ident_before(s, cu->body, k).s, ident_before(s, cu->body, k).n);
            }
            return;
        }
        if (s[j] == '(') {
            word nm = ident_before(s, i, j);
            if (nm.n && !in_list(nm.s, nm.n, not_names)) {
                add_name(g, u, nm.s, nm.n);
                return;
            }
            size_t e = pg__cpu_match(s, j); /* an attribute's arguments */
            if (!e)
                return;
            j = e - 1;
        }
        j += n ? n - 1 : 0;
    }
}

static int header_is_plain(const char *source, size_t at, size_t to) {
    size_t i = skip_space(source, at, to);
    if (source[i] != '<')
        return 0; /* "local.h" or a macro: its device functions are unknown */
    size_t e = i + 1;
    while (e < to && source[e] != '>')
        e++;
    for (int k = 0; plain_headers[k]; k++)
        if (strlen(plain_headers[k]) == e - i - 1 &&
            !memcmp(source + i + 1, plain_headers[k], e - i - 1))
            return 1;
    return 0;
}

/* #define units, and #include lines the analysis cannot see through. */
static void directives(graph *g, const char *source, const char *pp) {
    size_t n = strlen(pp);
    for (size_t i = 0; i < n; i++) {
        size_t line = i;
        i = skip_space(pp, i, n);
        if (pp[i] != '#') {
            while (i < n && pp[i] != '\n')
                i++;
            continue;
        }
        size_t end = i;
        while (end < n && !(pp[end] == '\n' && (end == 0 || pp[end - 1] != '\\')))
            end++;
        size_t d = skip_space(pp, i + 1, end), dn = pg__cpu_ident_at(pp, d);
        if (dn == 7 && !memcmp(pp + d, "include", 7) && !header_is_plain(source, d + dn, end))
            g->unsure = 1;
        if (dn == 6 && !memcmp(pp + d, "define", 6)) {
            size_t m = skip_space(pp, d + dn, end), mn = pg__cpu_ident_at(pp, m);
            unit *u = new_unit(g, pp, line, end);
            add_name(g, u, pp + m, mn);
        }
        i = end;
    }
}

/* Does unit u mention a name of a marked unit? */
static int calls_marked(const graph *g, const unit *u) {
    for (size_t i = u->start; i < u->end; i++) {
        size_t n = pg__cpu_ident_at(u->text, i);
        if (!n)
            continue;
        for (int k = 0; k < g->n; k++) {
            const unit *m = &g->u[k];
            if (!m->marked || m == u)
                continue;
            for (int j = 0; j < m->nnames; j++)
                if (m->names[j].n == n && !memcmp(m->names[j].s, u->text + i, n))
                    return 1;
        }
        i += n - 1;
    }
    return 0;
}

/* The declared name of a name expression: "ns::reduce<float, 4>" gives "reduce". */
static word base_name(const char *expr) {
    size_t n = strcspn(expr, "<");
    while (n && isspace((unsigned char)expr[n - 1]))
        n--;
    size_t b = n;
    while (b && pg__cpu_ident_char((unsigned char)expr[b - 1]))
        b--;
    return (word){expr + b, n - b};
}

static int decide(graph *g, const char *kernel) {
    for (int i = 0; i < g->n; i++) {
        unit *u = &g->u[i];
        u->marked = mentions_collective(u->text, u->start, u->end);
        if (u->marked && !u->nnames)
            return 1; /* a collective in something unnamed (a global lambda...) */
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < g->n; i++)
            if (!g->u[i].marked && calls_marked(g, &g->u[i]))
                changed = g->u[i].marked = 1;
    }
    word k = base_name(kernel);
    int found = 0;
    for (int i = 0; i < g->n; i++)
        for (int j = 0; j < g->u[i].nnames; j++)
            if (g->u[i].names[j].n == k.n && !memcmp(g->u[i].names[j].s, k.s, k.n)) {
                if (g->u[i].marked)
                    return 1;
                found = 1;
            }
    return !found;
}

int pg__cpu_needs_block(const char *source, const char *name, const char *options) {
    if (options && mentions_collective(options, 0, strlen(options)))
        return 1;
    char *code = pg__signature_strip(source, 1), *pp = pg__signature_strip(source, 0);
    graph g = {0};
    pg__cpu_unit *cu = NULL;
    int r = -1;
    if (!code || !pp)
        goto done;
    if (!mentions_collective(pp, 0, strlen(pp))) {
        r = 0;
        goto done;
    }
    int n = pg__cpu_units(code, &cu);
    if (n < 0) {
        r = 1; /* unbalanced braces, or out of memory: be safe either way */
        goto done;
    }
    for (int i = 0; i < n; i++) {
        unit *u = new_unit(&g, code, cu[i].start, cu[i].end);
        if (u)
            unit_names(&g, u, &cu[i]);
    }
    directives(&g, source, pp);
    if (!g.failed)
        r = g.unsure ? 1 : decide(&g, name);
done:
    for (int i = 0; i < g.n; i++)
        pg__free(g.u[i].names);
    pg__free(g.u);
    pg__free(cu);
    pg__free(code);
    pg__free(pp);
    return r;
}

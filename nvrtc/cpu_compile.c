/* cpu_compile.c: CUDA kernel source built for CPU devices: checks, the host compiler found and run,
 * the generated entry point, the on-disk cache, dlopen. */
#include "nvrtc/cpu_compile.h"
#include "base/buf.h"
#include "base/alloc.h"
#include "base/error.h"
#include "nvrtc/cpu_features.h"
#include "nvrtc/cpu_rewrite.h"
#include "nvrtc/kernel_cache.h"
#include "nvrtc/signature.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

_Static_assert(sizeof(pg__cpu_launch) == 48 && offsetof(pg__cpu_launch, shared_mem) == 24 &&
                   offsetof(pg__cpu_launch, fiber_memory) == 32 &&
                   offsetof(pg__cpu_launch, fault) == 40,
               "pg__cpu_launch must match its C++ twin in cpu_prelude_block.c");
_Static_assert(sizeof(pg__cpu_fibers) == 32 && offsetof(pg__cpu_fibers, extra) == 24,
               "pg__cpu_fibers must match its C++ twin in cpu_prelude_block.c");

struct pg__cpu_module {
    void *handle;
    pg__cpu_entry entry;
};

/* Flags of every build; the user's translated options come after them, so theirs win. */
static const char *const base_flags[] = {
    "-std=c++17",          "-O3",         "-fPIC", "-shared", "-fno-exceptions",
    "-fvisibility=hidden", "-Wl,-z,defs", NULL};

#define LOG_LIMIT (1u << 20) /* compiler output kept; the rest is drained and dropped */

/* ------------------------------------------------------------------ small helpers */

/* A NULL-terminated list of malloc'ed strings. */
typedef struct strv {
    char **v;
    int n, cap;
    int failed;
} strv;

static void sv_add(strv *a, const char *s) {
    if (a->failed)
        return;
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? a->cap * 2 : 16;
        char **v = pg__realloc(a->v, (size_t)cap * sizeof *v);
        if (!v) {
            a->failed = 1;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    if (!(a->v[a->n] = pg__strdup(s))) {
        a->failed = 1;
        return;
    }
    a->v[++a->n] = NULL;
}

static void sv_free(strv *a) {
    for (int i = 0; i < a->n; i++)
        pg__free(a->v[i]);
    pg__free(a->v);
    memset(a, 0, sizeof *a);
}

static int has_prefix(const char *s, const char *p) {
    return strncmp(s, p, strlen(p)) == 0;
}

/* ------------------------------------------------------------------ options */

/* NVRTC options that mean nothing for a CPU build (architecture, registers, debug line tables,
 * GPU-only code generation switches). Entries ending in '=' match any value. */
static const char *const ignored_options[] = {"-arch=",
                                              "--gpu-architecture=",
                                              "-lineinfo",
                                              "--generate-line-info",
                                              "--maxrregcount=",
                                              "-maxrregcount=",
                                              "--ftz=",
                                              "-ftz=",
                                              "--prec-div=",
                                              "-prec-div=",
                                              "--prec-sqrt=",
                                              "-prec-sqrt=",
                                              "-rdc=",
                                              "--relocatable-device-code=",
                                              "-default-device",
                                              "--device-as-default-execution-space",
                                              "--extra-device-vectorization",
                                              "-extra-device-vectorization",
                                              "-restrict",
                                              "--restrict",
                                              "-dopt=",
                                              "--dopt=",
                                              "-ewp",
                                              "--extensible-whole-program",
                                              "-dlto",
                                              "--dlink-time-opt",
                                              "--ptxas-options=",
                                              "-Xptxas=",
                                              "--fmad=true",
                                              "-fmad=true",
                                              NULL};

static int option_ignored(const char *o) {
    for (int i = 0; ignored_options[i]; i++) {
        const char *ig = ignored_options[i];
        size_t n = strlen(ig);
        if (ig[n - 1] == '=' ? strncmp(o, ig, n) == 0 && o[n] : strcmp(o, ig) == 0)
            return 1;
    }
    return 0;
}

static pg_status option_error(const char *opt) {
    return pg__error(PG_ERROR_ARGUMENT,
                     "option '%s' is not supported for CPU devices: use -O0..-O3, -D<macro>, "
                     "-U<macro>, -I<dir>, -std=c++11|14|17|20, --use_fast_math, --fmad=false, -G, "
                     "-w (NVRTC options such as -arch=, -lineinfo, --maxrregcount= are accepted "
                     "and ignored)",
                     opt);
}

/* Options for NVRTC, translated into host compiler arguments. */
static pg_status translate_options(const char *options, strv *out) {
    if (!options)
        return PG_OK;
    char *copy = pg__strdup(options);
    if (!copy)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    char *save = NULL, *tok[512];
    int n = 0;
    for (char *t = strtok_r(copy, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == (int)(sizeof tok / sizeof tok[0])) {
            pg__free(copy);
            return pg__error(PG_ERROR_ARGUMENT, "too many compiler options (at most %d)", n);
        }
        tok[n++] = t;
    }
    pg_status st = PG_OK;
    char arg[4096];
    for (int i = 0; i < n && !st; i++) {
        const char *o = tok[i];
        /* Options with a value: -D X, -DX, --define-macro=X and the same for -U and -I. */
        static const struct {
            const char *shrt, *lng, *to;
        } valued[] = {{"-D", "--define-macro", "-D"},
                      {"-U", "--undefine-macro", "-U"},
                      {"-I", "--include-path", "-I"}};
        int done = 0;
        for (size_t v = 0; v < sizeof valued / sizeof valued[0] && !done; v++) {
            const char *val = NULL;
            size_t ln = strlen(valued[v].lng);
            if (strcmp(o, valued[v].shrt) == 0 || strcmp(o, valued[v].lng) == 0) {
                if (i + 1 == n) {
                    st = pg__error(PG_ERROR_ARGUMENT, "option '%s' needs a value", o);
                    done = 1;
                    break;
                }
                val = tok[++i];
            } else if (has_prefix(o, valued[v].lng) && o[ln] == '=') {
                val = o + ln + 1;
            } else if (has_prefix(o, valued[v].shrt) && o[2] && o[1] != '-') {
                val = o + 2;
            }
            if (val) {
                done = 1;
                if (!*val)
                    st = pg__error(PG_ERROR_ARGUMENT, "option '%s' needs a value", o);
                else if (snprintf(arg, sizeof arg, "%s%s", valued[v].to, val) >= (int)sizeof arg)
                    st = pg__error(PG_ERROR_ARGUMENT, "option '%s' is too long", o);
                else
                    sv_add(out, arg);
            }
        }
        if (done)
            continue;
        const char *std = has_prefix(o, "--std=") ? o + 6 : has_prefix(o, "-std=") ? o + 5 : NULL;
        if (std) {
            if (strcmp(std, "c++11") && strcmp(std, "c++14") && strcmp(std, "c++17") &&
                strcmp(std, "c++20"))
                st = pg__error(PG_ERROR_ARGUMENT,
                               "option '%s': CPU devices support -std=c++11, c++14, c++17 (the "
                               "default) and c++20",
                               o);
            else {
                snprintf(arg, sizeof arg, "-std=%s", std);
                sv_add(out, arg);
            }
        } else if (strlen(o) == 3 && o[0] == '-' && o[1] == 'O' && o[2] >= '0' && o[2] <= '3') {
            sv_add(out, o);
        } else if (!strcmp(o, "--use_fast_math") || !strcmp(o, "-use_fast_math")) {
            /* -ffast-math's parts except finite-math-only (CUDA keeps NaN and infinity
             * semantics) and without the flag itself: with it, gcc and clang link
             * crtfastmath.o, which turns on flush-to-zero for the whole process at dlopen. */
            static const char *const fast[] = {"-fno-math-errno",   "-fno-trapping-math",
                                               "-fno-signed-zeros", "-fassociative-math",
                                               "-freciprocal-math", "-ffp-contract=fast"};
            for (size_t f = 0; f < sizeof fast / sizeof fast[0]; f++)
                sv_add(out, fast[f]);
        } else if (!strcmp(o, "--fmad=false") || !strcmp(o, "-fmad=false")) {
            sv_add(out, "-ffp-contract=off");
        } else if (!strcmp(o, "-G") || !strcmp(o, "--device-debug") || !strcmp(o, "-g")) {
            sv_add(out, "-g");
        } else if (!strcmp(o, "-w") || !strcmp(o, "--disable-warnings")) {
            sv_add(out, "-w");
        } else if (!strcmp(o, "-arch") || !strcmp(o, "--gpu-architecture")) {
            if (i + 1 == n)
                st = pg__error(PG_ERROR_ARGUMENT, "option '%s' needs a value", o);
            i++;
        } else if (!option_ignored(o)) {
            st = option_error(o);
        }
    }
    pg__free(copy);
    if (!st && out->failed)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    return st;
}

/* ------------------------------------------------------------------ checks on the source */

/* The name is pasted into generated C++: allow a (qualified, templated) name and nothing that
 * could end the statement around it. */
static int name_is_safe(const char *name) {
    for (const char *p = name; *p; p++)
        if (strchr(";{}\"'#\\/\n\r", *p))
            return 0;
    return 1;
}

static int type_is_safe(const char *t) {
    if (!*t)
        return 0;
    for (const char *p = t; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(" _*:", *p))
            return 0;
    return 1;
}

/* ------------------------------------------------------------------ the host compiler */

/* A runnable file: a path with '/' as is, a bare name searched in PATH. malloc'ed, or NULL (with
 * *oom set when memory ran out: that says nothing of whether the file exists). */
static char *resolve_exe(const char *name, int *oom) {
    struct stat st;
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0 || stat(name, &st) != 0 || !S_ISREG(st.st_mode))
            return NULL;
        char *p = pg__strdup(name);
        *oom = !p;
        return p;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;;) {
        const char *e = strchr(p, ':');
        size_t dn = e ? (size_t)(e - p) : strlen(p);
        size_t n = dn + strlen(name) + 3;
        char *cand = pg__malloc(n);
        if (!cand) {
            *oom = 1;
            return NULL;
        }
        snprintf(cand, n, "%.*s/%s", (int)(dn ? dn : 1), dn ? p : ".", name);
        if (access(cand, X_OK) == 0 && stat(cand, &st) == 0 && S_ISREG(st.st_mode))
            return cand;
        pg__free(cand);
        if (!e)
            return NULL;
        p = e + 1;
    }
}

/* PG_CXX (strict: an explicit choice that cannot be run is an error, never a silent fallback),
 * then CXX, c++, g++, clang++. On failure why gets the message, or *oom says memory ran out
 * (then no later candidate is tried: it would silently replace the one asked for). */
static char *find_compiler(char *why, size_t whyn, int *oom) {
    const char *pg = getenv("PG_CXX");
    *oom = 0;
    if (pg && *pg) {
        char *p = resolve_exe(pg, oom);
        if (!p && !*oom)
            snprintf(why, whyn,
                     "PG_CXX is '%s', which is not an executable C++ compiler: set PG_CXX to "
                     "one (e.g. g++) or unset it",
                     pg);
        return p;
    }
    const char *cands[] = {getenv("CXX"), "c++", "g++", "clang++"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        char *p = cands[i] && *cands[i] ? resolve_exe(cands[i], oom) : NULL;
        if (p || *oom)
            return p;
    }
    snprintf(why, whyn,
             "no C++ compiler found for CPU devices: install g++ (apt-get install g++) or set "
             "PG_CXX");
    return NULL;
}

/* Run argv[0] (a path) with stdin from /dev/null, stdout and stderr captured in *log. 0 when it
 * ran (its exit code in *code, -1 if a signal ended it); -1 with errno when it could not start. */
static int run_capture(char *const argv[], char **log, int *code) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        close(fds[0]);
        close(fds[1]);
        errno = ENOMEM;
        return -1;
    }
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    pid_t pid;
    int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (e != 0) {
        close(fds[0]);
        errno = e;
        return -1;
    }
    pg__buf b = {0};
    pg__buf_printf(&b, "%s", "");
    char chunk[4096];
    for (;;) {
        ssize_t r = read(fds[0], chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (b.len < LOG_LIMIT)
            pg__buf_printf(&b, "%.*s", (int)r, chunk);
    }
    close(fds[0]);
    int ws = 0;
    pid_t w;
    while ((w = waitpid(pid, &ws, 0)) < 0 && errno == EINTR)
        ;
    /* ECHILD: the host program reaps children itself (SIGCHLD ignored); the output decides. */
    *code = w < 0 ? 0 : WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    if (b.failed) {
        pg__free(b.data);
        b.data = NULL;
    }
    *log = b.data;
    return 0;
}

/* `cxx --version`'s first line, asked once per process and compiler path. */
static pthread_mutex_t version_mu = PTHREAD_MUTEX_INITIALIZER;
static struct { char *path, *line; } versions[16];
static int nversions;

static pg_status compiler_version(const char *cxx, char **out) {
    pthread_mutex_lock(&version_mu);
    for (int i = 0; i < nversions; i++)
        if (strcmp(versions[i].path, cxx) == 0) {
            *out = pg__strdup(versions[i].line);
            pthread_mutex_unlock(&version_mu);
            return *out ? PG_OK : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        }
    pthread_mutex_unlock(&version_mu);
    char *argv[] = {(char *)cxx, "--version", NULL};
    char *log = NULL;
    int code;
    if (run_capture(argv, &log, &code) != 0)
        return pg__error(PG_ERROR_DEVICE, "cannot run the C++ compiler '%s': %s", cxx,
                         strerror(errno));
    if (code != 0 || !log || !*log) {
        pg_status st = pg__error(PG_ERROR_DEVICE,
                                 "the C++ compiler '%s' failed to report its version (exit code "
                                 "%d): check the installation or set PG_CXX",
                                 cxx, code);
        pg__error_set_log(log);
        pg__free(log);
        return st;
    }
    log[strcspn(log, "\n")] = '\0';
    pthread_mutex_lock(&version_mu);
    int known = 0;
    for (int i = 0; i < nversions && !known; i++)
        known = strcmp(versions[i].path, cxx) == 0;
    if (!known && nversions < (int)(sizeof versions / sizeof versions[0])) {
        char *p = pg__strdup(cxx), *l = pg__strdup(log);
        if (p && l) {
            versions[nversions].path = p;
            versions[nversions++].line = l;
        } else {
            pg__free(p);
            pg__free(l);
        }
    }
    pthread_mutex_unlock(&version_mu);
    *out = log;
    return PG_OK;
}

/* ------------------------------------------------------------------ the translation unit */

/* source: the kernel's, rewritten (nvrtc/cpu_rewrite.c). blocks: the kernel runs its blocks
 * cooperatively (nvrtc/cpu_features.c). */
static char *translation_unit(const pg__kernel_src *src, const char *source, int blocks,
                              uint64_t key_check) {
    pg__buf b = {0};
    pg__buf_printf(&b, "%s%s", pg__cpu_prelude, pg__cpu_prelude_block);
    /* Defined only when used: libstdc++ headers spell __attribute__((__noinline__)). */
    if (strstr(source, "__noinline__"))
        pg__buf_printf(&b, "#define __noinline__ __attribute__((noinline))\n");
    pg__buf_printf(&b, "#line 1 \"kernel.cu\"\n%s\n", source);
    pg__buf_printf(&b, "#line 1 \"polygpu-entry.cpp\"\n");
    pg__buf_printf(&b,
                   "extern \"C\" __attribute__((visibility(\"default\"))) const unsigned long long "
                   "pg_key_check = 0x%016llxull;\n",
                   (unsigned long long)key_check);
    pg__buf_printf(&b, "extern \"C\" __attribute__((visibility(\"default\"))) void pg_entry(const "
                       "pg__cpu_launch *l, uint64_t begin, uint64_t end, void **params) {\n");
    for (int i = 0; i < src->nparams; i++) {
        const char *t = src->params[i].type;
        if (strcmp(t, "bool") == 0) /* any nonzero byte is true; a bool must hold 0 or 1 */
            pg__buf_printf(&b, "    bool p%d = *(const unsigned char *)params[%d] != 0;\n", i, i);
        else
            pg__buf_printf(&b, "    %s p%d = *(%s *)params[%d];\n", t, i, t, i);
    }
    pg__buf_printf(&b, "    %s(l, begin, end, [&]() { %s(",
                   blocks ? "pg__cpu_run_blocks" : "pg__cpu_run", src->name);
    for (int i = 0; i < src->nparams; i++)
        pg__buf_printf(&b, "%sp%d", i ? ", " : "", i);
    pg__buf_printf(&b, "); });\n}\n");
    if (b.failed) {
        pg__free(b.data);
        return NULL;
    }
    return b.data;
}

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    size_t len = strlen(text);
    const char *p = text;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return close(fd);
}

/* ------------------------------------------------------------------ loading */

/* dlopen a built kernel and check that it was built from the expected key (a cached file can be
 * replaced by a colliding key's between the key check and the dlopen). 0 ok; -1 with why set. */
static int load_module(const char *path, uint64_t check, pg__cpu_module *m, char *why,
                       size_t whyn) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, whyn, "%s", e ? e : "dlopen failed");
        return -1;
    }
    const unsigned long long *kc = dlsym(h, "pg_key_check");
    void *entry = dlsym(h, "pg_entry");
    if (!kc || *kc != check || !entry) {
        snprintf(why, whyn, "%s is not the kernel built from this key", path);
        dlclose(h);
        return -1;
    }
    m->handle = h;
    /* dlsym returns data pointers; POSIX guarantees the function pointer round trip. */
    memcpy(&m->entry, &entry, sizeof m->entry);
    return 0;
}

static const char *temp_root(void) {
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

/* Load a cached build. Its bytes were checked (owner, mode, digest) through the descriptor they
 * were read from; loading them from a new file of our own means the file checked is the file
 * loaded, and a later change to the cache file (truncated, rebuilt by another process) cannot
 * reach the mapped code. The copy goes into the cache folder (checked: no one else writes there,
 * and unlike some TMPDIRs it allows executables) or, if that is read-only, a private folder. */
/* Cached kernels loaded in this process, by key check: a second load of the same kernel shares
 * the mapping (as a dlopen of one path would) instead of mapping a new private copy each time,
 * which would grow the process by a mapping per kernel object. */
typedef struct loaded {
    uint64_t check;
    void *handle;
    pg__cpu_entry entry;
    int refs;
    struct loaded *next;
} loaded;
static pthread_mutex_t loaded_mu = PTHREAD_MUTEX_INITIALIZER;
static loaded *loaded_head;

static int loaded_share(uint64_t check, pg__cpu_module *m) {
    pthread_mutex_lock(&loaded_mu);
    loaded *l = loaded_head;
    while (l && l->check != check)
        l = l->next;
    if (l) {
        l->refs++;
        m->handle = l->handle;
        m->entry = l->entry;
    }
    pthread_mutex_unlock(&loaded_mu);
    return l != NULL;
}

static void loaded_add(uint64_t check, const pg__cpu_module *m) {
    loaded *l = pg__malloc(sizeof *l);
    if (!l)
        return; /* not shared, still correct */
    *l = (loaded){check, m->handle, m->entry, 1, NULL};
    pthread_mutex_lock(&loaded_mu);
    l->next = loaded_head;
    loaded_head = l;
    pthread_mutex_unlock(&loaded_mu);
}

/* 1 if the handle was shared and other users remain (no dlclose). */
static int loaded_release(void *handle) {
    pthread_mutex_lock(&loaded_mu);
    loaded **pl = &loaded_head;
    while (*pl && (*pl)->handle != handle)
        pl = &(*pl)->next;
    int keep = 0;
    if (*pl && --(*pl)->refs > 0) {
        keep = 1;
    } else if (*pl) {
        loaded *l = *pl;
        *pl = l->next;
        pg__free(l);
    }
    pthread_mutex_unlock(&loaded_mu);
    return keep;
}

static int load_cached(const char *cache, const pg__kcache_key *k, uint64_t check,
                       pg__cpu_module *m, char *why, size_t whyn) {
    if (loaded_share(check, m))
        return 0;
    char *path = pg__kcache_path(cache, k, ".so"), *data = NULL, *copy = NULL, *dir = NULL;
    size_t len = 0;
    int r = path ? pg__kcache_load(path, check, &data, &len) : -1;
    pg__free(path);
    if (r == 0 && pg__kcache_temp_write(cache, ".so", data, len, &copy) != 0) {
        size_t n = strlen(temp_root()) + 20;
        if ((dir = pg__malloc(n)) != NULL) {
            snprintf(dir, n, "%s/polygpu-XXXXXX", temp_root());
            if (!mkdtemp(dir) || pg__kcache_temp_write(dir, ".so", data, len, &copy) != 0)
                r = -1;
        } else {
            r = -1;
        }
    }
    pg__free(data);
    if (r == 0)
        r = load_module(copy, check, m, why, whyn);
    if (r == 0)
        loaded_add(check, m);
    if (copy)
        unlink(copy); /* the mapping stays */
    pg__free(copy);
    if (dir) {
        rmdir(dir);
        pg__free(dir);
    }
    return r;
}

/* The first lines of a compiler log, for the error message (the whole log goes to the detail). */
static void log_head(const char *log, char *out, size_t outn) {
    size_t n = 0;
    int lines = 0;
    while (log[n] && lines < 12 && n < outn - 1) {
        if (log[n] == '\n')
            lines++;
        n++;
    }
    snprintf(out, outn, "%.*s%s", (int)n, log, log[n] ? "..." : "");
}

/* The first error line of a gcc or clang log ("file:line:col: error: ..."), NULL if none. */
static const char *first_error(const char *log, size_t *len) {
    for (const char *line = log; *line;) {
        size_t n = strcspn(line, "\n");
        const char *e = memmem(line, n, ": error:", 8);
        if (!e)
            e = memmem(line, n, ": fatal error:", 14);
        if (e) {
            *len = n;
            return line;
        }
        line += n + (line[n] == '\n');
    }
    return NULL;
}

/* ------------------------------------------------------------------ compile */

static void build_key(const pg__kernel_src *src, const char *cxx, const char *version, int blocks,
                      pg__kcache_key *k) {
    char buf[64];
    pg__kcache_key_init(k);
    pg__kcache_key_add(k, "format", "polygpu-cpu-kernel 3");
    pg__kcache_key_add(k, "prelude", pg__cpu_prelude_version);
    snprintf(buf, sizeof buf, "%016llx",
             (unsigned long long)pg__kcache_hash(pg__cpu_prelude, strlen(pg__cpu_prelude)));
    pg__kcache_key_add(k, "prelude-hash", buf);
    snprintf(
        buf, sizeof buf, "%016llx",
        (unsigned long long)pg__kcache_hash(pg__cpu_prelude_block, strlen(pg__cpu_prelude_block)));
    pg__kcache_key_add(k, "prelude-block-hash", buf);
    pg__kcache_key_add(k, "entry", blocks ? "blocks" : "plain");
    for (int i = 0; base_flags[i]; i++)
        pg__kcache_key_add(k, "flag", base_flags[i]);
    pg__kcache_key_add(k, "source", src->source);
    pg__kcache_key_add(k, "name", src->name);
    pg__kcache_key_add(k, "options", src->options);
    snprintf(buf, sizeof buf, "%d", src->nparams);
    pg__kcache_key_add(k, "nparams", buf);
    for (int i = 0; i < src->nparams; i++)
        pg__kcache_key_add(k, "param", src->params[i].type);
    pg__kcache_key_tools(k);
    pg__kcache_key_add(k, "compiler", cxx);
    pg__kcache_key_add(k, "version", version);
}

static pg_status check_src(const pg__kernel_src *src, pg__cpu_module **out) {
    if (!src || !out || !src->source || !src->name)
        return pg__error(PG_ERROR_ARGUMENT, "CPU compile: src, its source and name, and out are "
                                            "required");
    if (src->nparams < 0 || src->nparams > PG__MAX_PARAMS || (src->nparams && !src->params))
        return pg__error(PG_ERROR_ARGUMENT,
                         "CPU compile: kernel '%s' has %d parameters (0..%d "
                         "with a parameter array)",
                         src->name, src->nparams, PG__MAX_PARAMS);
    if (!name_is_safe(src->name))
        return pg__error(PG_ERROR_ARGUMENT,
                         "'%s' is not a kernel name: expected a function name, optionally with "
                         "template arguments",
                         src->name);
    for (int i = 0; i < src->nparams; i++)
        if (!type_is_safe(src->params[i].type))
            return pg__error(PG_ERROR_ARGUMENT,
                             "kernel '%s': parameter %d has no usable C type "
                             "('%s')",
                             src->name, i + 1, src->params[i].type);
    return PG_OK;
}

/* Everything a build allocates, released in one place. */
typedef struct build {
    strv argv;
    char *cxx, *version, *workdir, *cpp, *so, *log, *tu;
    char *source;    /* the kernel's source, rewritten */
    int so_in_cache; /* so is a temporary file in the cache folder */
    pg__kcache_key key;
} build;

static void build_free(build *b) {
    if (b->cpp) {
        unlink(b->cpp);
        pg__free(b->cpp);
    }
    if (b->so) {
        unlink(b->so); /* already renamed into the cache, or no longer needed once loaded */
        pg__free(b->so);
    }
    if (b->workdir) {
        rmdir(b->workdir);
        pg__free(b->workdir);
    }
    sv_free(&b->argv);
    pg__free(b->cxx);
    pg__free(b->version);
    pg__free(b->log);
    pg__free(b->tu);
    pg__free(b->source);
    pg__kcache_key_free(&b->key);
}

static char *path_join(const char *dir, const char *file) {
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = pg__malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, file);
    return p;
}

/* Compile b->tu into b->so, or fail with PG_ERROR_COMPILE and the log. cache: the checked cache
 * folder, or NULL. */
static pg_status run_compiler(const pg__kernel_src *src, const char *cache, build *b,
                              const strv *opts) {
    size_t n = strlen(temp_root()) + 20;
    if (!(b->workdir = pg__malloc(n)))
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    snprintf(b->workdir, n, "%s/polygpu-XXXXXX", temp_root());
    if (!mkdtemp(b->workdir)) {
        int e = errno;
        pg__free(b->workdir);
        b->workdir = NULL;
        return pg__error(PG_ERROR_IO,
                         "cannot create a temporary folder in %s for compiling "
                         "kernel '%s': %s (set TMPDIR to a writable folder)",
                         temp_root(), src->name, strerror(e));
    }
    if (!(b->cpp = path_join(b->workdir, "kernel.cpp")))
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (write_file(b->cpp, b->tu) != 0) {
        int e = errno;
        pg__free(b->cpp);
        b->cpp = NULL;
        return pg__error(PG_ERROR_IO, "cannot write %s/kernel.cpp: %s", b->workdir, strerror(e));
    }
    if (cache && pg__kcache_temp(cache, ".so", &b->so) == 0)
        b->so_in_cache = 1; /* else the cache folder is not writable: build uncached */
    if (!b->so && !(b->so = path_join(b->workdir, "kernel.so")))
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    sv_add(&b->argv, b->cxx);
    for (int i = 0; base_flags[i]; i++)
        sv_add(&b->argv, base_flags[i]);
    for (int i = 0; i < opts->n; i++)
        sv_add(&b->argv, opts->v[i]);
    sv_add(&b->argv, "-o");
    sv_add(&b->argv, b->so);
    sv_add(&b->argv, b->cpp);
    if (b->argv.failed)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    int code;
    if (run_capture(b->argv.v, &b->log, &code) != 0)
        return pg__error(PG_ERROR_DEVICE, "cannot run the C++ compiler '%s': %s", b->cxx,
                         strerror(errno));
    if (code == 0)
        return PG_OK;
    const char *log = b->log ? b->log : "";
    char head[1200], fault[256];
    size_t first_len = 0;
    const char *first = first_error(log, &first_len);
    /* The message's first line quotes the first error line; the log's head after it starts
     * below that line, so it is not shown twice (the lines above it only name the function,
     * which the message does too). */
    const char *rest = log;
    if (first)
        rest = first + first_len + (first[first_len] == '\n');
    log_head(rest, head, sizeof head);
    /* A source that does not scan explains the compiler's errors where they land in the
     * generated call (an unclosed brace pulls it into the kernel) or at the fault's own place
     * (a literal with no end, a stray closing bracket). A compiler error in the kernel
     * elsewhere comes first: the fault may then be a brace inside a macro, which the scanner
     * does not expand. */
    int bad = pg__signature_scan(src->source, fault, sizeof fault), fault_line = 0, error_line = 0;
    if (bad > 0 && first && sscanf(first, "kernel.cu:%d:", &error_line) == 1 &&
        (sscanf(fault, "line %d", &fault_line) != 1 || error_line < fault_line ||
         strstr(fault, "' is never closed")))
        bad = 0;
    char what[1024];
    if (bad > 0)
        snprintf(what, sizeof what, "its source is malformed at %s%s%.*s%s", fault,
                 first ? " (the compiler says: " : "", first ? (int)first_len : 0,
                 first ? first : "", first ? ")" : "");
    else if (first)
        /* Only an error in the generated call itself, with the kernel's source clean, points
         * at the signature. */
        snprintf(what, sizeof what, "%.*s%s", (int)first_len, first,
                 has_prefix(first, "polygpu-entry.cpp")
                     ? " [this is in the call polygpu generates from the kernel's signature: do "
                       "the signature's types match the kernel's parameters?]"
                     : "");
    else
        snprintf(what, sizeof what, "see the log");
    /* The caller puts the kernel's name and the devices before this (pg__error_wrap). */
    pg_status st = pg__error(PG_ERROR_COMPILE, "the C++ compiler '%s' failed: %s%s%s", b->cxx, what,
                             head[0] ? "\n" : "", head);
    pg__error_set_log(log);
    return st;
}

pg_status pg__cpu_compile(const pg__kernel_src *src, pg__cpu_module **out) {
    pg_status st = check_src(src, out);
    if (st)
        return st;
    st = pg__cpu_check_constructs(src->source, src->name);
    if (!st)
        st = pg__signature_find(src->source, src->name);
    int blocks = 0;
    if (!st && (blocks = pg__cpu_needs_block(src->source, src->name, src->options)) < 0)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    strv opts = {0};
    if (!st)
        st = translate_options(src->options, &opts);
    build b = {0};
    if (!st)
        st = pg__cpu_rewrite_shared(src->source, src->name, &b.source);
    if (st) {
        sv_free(&opts);
        build_free(&b);
        return st;
    }

    pg__cpu_module m = {0};
    char why[1024], no_cxx[512];
    /* A folder others could write is no cache: its objects would be code anyone could plant. */
    const char *cache = src->cache_dir && *src->cache_dir && pg__kcache_dir(src->cache_dir) == 0
                            ? src->cache_dir
                            : NULL;
    int cxx_oom;
    b.cxx = find_compiler(no_cxx, sizeof no_cxx, &cxx_oom);
    pg_status vst = b.cxx ? compiler_version(b.cxx, &b.version) : PG_OK;
    if (cxx_oom || vst == PG_ERROR_OUT_OF_MEMORY) {
        /* Says nothing of the compiler: going on as if there were none would serve another
         * compiler's build, or another compiler would build it. */
        sv_free(&opts);
        build_free(&b);
        return pg__error(PG_ERROR_OUT_OF_MEMORY,
                         "out of host memory looking for the C++ compiler of kernel '%s'",
                         src->name);
    }
    if (vst) {
        /* A compiler that does not run counts as none: the cache may still serve. */
        snprintf(no_cxx, sizeof no_cxx, "%s", pg_last_error());
        pg__free(b.cxx);
        b.cxx = NULL;
    }
    build_key(src, b.cxx, b.version, blocks, &b.key);
    if (b.key.failed) {
        sv_free(&opts);
        build_free(&b);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    /* A cache hit runs no compiler. Without one, any build of the same inputs will do. */
    uint64_t stored_check;
    int hit = 0;
    why[0] = '\0';
    if (cache && pg__kcache_match(cache, &b.key, b.cxx == NULL, &stored_check))
        hit = load_cached(cache, &b.key, stored_check, &m, why, sizeof why) == 0;
    /* A cached build that does not load is rebuilt; with no compiler to rebuild it, its reason
     * is part of the error. */
    if (!hit && !b.cxx)
        st = why[0] ? pg__error(PG_ERROR_DEVICE, "%s; the cached build could not be used: %s",
                                no_cxx, why)
                    : pg__error(PG_ERROR_DEVICE, "%s", no_cxx);
    if (!hit && !st) {
        uint64_t check = pg__kcache_check(b.key.text, b.key.len);
        if (!(b.tu = translation_unit(src, b.source, blocks, check)))
            st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        if (!st)
            st = run_compiler(src, cache, &b, &opts);
        if (!st && load_module(b.so, check, &m, why, sizeof why) != 0) {
            st = pg__error(PG_ERROR_COMPILE, "compiled, but the library could not be loaded: %s",
                           why);
            pg__error_set_log(why);
        }
        /* Loaded already, so the file may go: its bytes into the cache, or away. */
        if (!st && b.so_in_cache) {
            pg__kcache_install(cache, &b.key, ".so", b.so);
            pg__free(b.so);
            b.so = NULL;
        }
    }
    sv_free(&opts);
    build_free(&b);
    if (st)
        return st;
    pg__cpu_module *mm = pg__malloc(sizeof *mm);
    if (!mm) {
        /* A shared mapping keeps its other users (a plain dlclose would leave its entry in the
         * shared list, and the next load of this kernel would run whatever is mapped there). */
        if (!loaded_release(m.handle))
            dlclose(m.handle);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    *mm = m;
    *out = mm;
    return PG_OK;
}

pg__cpu_entry pg__cpu_module_entry(const pg__cpu_module *m) {
    return m ? m->entry : NULL;
}

void pg__cpu_module_free(pg__cpu_module *m) {
    if (!m)
        return;
    if (!loaded_release(m->handle))
        dlclose(m->handle);
    pg__free(m);
}

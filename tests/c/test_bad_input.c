/* test_bad_input.c: malformed kernel sources, impossible sizes and bad option values get an error
 * that names what is wrong, at the call that was given the bad input (never later, never a hang,
 * never a misleading hint). */
#include "kernels_common.h"
#include "nvrtc/signature.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The last message must not contain `needle`. */
#define CHECK_NO(needle)                                                                           \
    do {                                                                                           \
        if (strstr(pg_last_error(), needle)) {                                                     \
            fprintf(stderr, "%s:%d: message '%s' should not say '%s'\n", __FILE__, __LINE__,       \
                    pg_last_error(), needle);                                                      \
            pg_check_failures++;                                                                   \
        }                                                                                          \
    } while (0)

static pg_status try_rt(const char *name, const char *value, pg_runtime **out) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:1";
    pg_status st = name ? pg_options_set(&o, name, value) : PG_OK;
    if (st)
        return st;
    *out = NULL;
    return pg_runtime_new(&o, out);
}

static pg_status new_kernel(pg_runtime *rt, const char *src, const char *name, const char *sig) {
    pg_kernel *k = NULL;
    pg_status st = pg_kernel_new(rt, src, name, sig, NULL, &k);
    if (st == PG_OK)
        pg_kernel_free(k);
    return st;
}

/* `piece` n times, malloc'ed. */
static char *repeat(const char *piece, size_t n) {
    size_t pn = strlen(piece);
    char *s = malloc(pn * n + 1);
    if (!s)
        exit(2);
    for (size_t i = 0; i < n; i++)
        memcpy(s + i * pn, piece, pn);
    s[pn * n] = '\0';
    return s;
}

/* Broken sources: the message names the fault and its line; the signature hint only where the
 * signature is the problem. */
static void malformed_sources(pg_runtime *rt) {
    /* The kernel's '{' is never closed: the compiler's errors land in the generated call. */
    CHECK_MSG(
        new_kernel(rt, "__global__ void k(float *y) {\n  if (y) {\n    y[0] = 1;\n}\n", "k", NULL),
        PG_ERROR_COMPILE, "line 1");
    CHECK(strstr(pg_last_error(), "'{'") && strstr(pg_last_error(), "never closed"));
    CHECK_NO("signature");
    /* One '}' too many. */
    CHECK_MSG(new_kernel(rt, "__global__ void k(float *y) {\n  y[0] = 1;\n}\n}\n", "k", NULL),
              PG_ERROR_COMPILE, "line 4");
    CHECK_NO("signature");
    /* An unterminated string that swallows the kernel's closing brace. */
    CHECK_MSG(new_kernel(rt, "__global__ void k(float *y) {\n  y[0] = 1; const char *s = \"}\n",
                         "k", NULL),
              PG_ERROR_COMPILE, "line 2");
    CHECK(strstr(pg_last_error(), "string"));
    CHECK_NO("signature");
    /* An unterminated comment. */
    CHECK_MSG(new_kernel(rt, "__global__ void k(float *y) {\n  y[0] = 1; /* }\n", "k", NULL),
              PG_ERROR_COMPILE, "comment");
    CHECK(strstr(pg_last_error(), "line 2"));
    CHECK_NO("signature");
    /* A header that does not exist: the compiler's first error line names it. */
    CHECK_MSG(new_kernel(rt, "#include \"no_such_header.h\"\n__global__ void k(float *y) { }\n",
                         "k", NULL),
              PG_ERROR_COMPILE, "no_such_header.h");
    CHECK_NO("signature");
    /* The message starts with the first error, not with a warning or an "In function" line. */
    CHECK_MSG(
        new_kernel(rt, "__global__ void k(float *y) {\n  y[0] = undefined_thing;\n}\n", "k", NULL),
        PG_ERROR_COMPILE, "undefined_thing");
    CHECK_NO("signature");
    { /* ... and shows that error line once, not again in the log's head below it. */
        const char *m = pg_last_error(), *e = strstr(m, "kernel.cu:2:");
        size_t n = e ? strcspn(e, "\n") : 0;
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int)n, e ? e : "");
        CHECK(e && n > 12 && !strstr(e + n, line));
    }
    /* A compiler error before the scanner's finding leads: the finding may be a macro's brace. */
    CHECK_MSG(new_kernel(rt, "#define END }\n__global__ void k(float *y) {\n  y[0] = nope;\nEND\n",
                         "k", NULL),
              PG_ERROR_COMPILE, "for CPU devices: the C++ compiler");
    CHECK(strstr(pg_last_error(), "failed: kernel.cu:3:") != NULL);
    CHECK_NO("malformed");
    /* Where the signature is the problem the hint stays: an explicit signature with a type the
     * kernel cannot take (a struct pointer, so the source check cannot compare). */
    CHECK_MSG(new_kernel(rt,
                         "struct P { float v; };\n"
                         "__global__ void k(P *p) { p->v = 1; }\n",
                         "k", "float *p"),
              PG_ERROR_COMPILE, "signature");

    /* 100k '(' is not "no __global__ function". These sources are large enough that recursion
     * would overflow the stack and a quadratic scan would run far past the test's timeout. */
    size_t big = 100000;
    char *parens = malloc(big + 1);
    memset(parens, '(', big);
    parens[big] = '\0';
    CHECK_MSG(new_kernel(rt, parens, "k", NULL), PG_ERROR_COMPILE, "never closed");
    CHECK(strstr(pg_last_error(), "'('") && strstr(pg_last_error(), "line 1"));
    /* 200k kernels (about 5 MB): whose parameter lists never close, whose names are never
     * followed by a list, and declarations with no body. Reading on from each one to the end
     * (as the kernel finder did) is about 10^12 steps. */
    char *many = repeat("__global__ void k(float *y, \n", 200000);
    CHECK_MSG(new_kernel(rt, many, "k", NULL), PG_ERROR_COMPILE, "never closed");
    CHECK(strstr(pg_last_error(), "line 200000") != NULL);
    free(many);
    many = repeat("__global__ void k\n", 200000);
    CHECK_MSG(new_kernel(rt, many, "k", NULL), PG_ERROR_NOT_FOUND, "no __global__ function");
    free(many);
    many = repeat("__global__ void k(float *y)\n", 200000);
    CHECK_MSG(new_kernel(rt, many, "nosuch", NULL), PG_ERROR_NOT_FOUND, "kernels found: k");
    free(many);
    /* And deep but balanced nesting. */
    char *deep = malloc(2 * big + 64);
    size_t d = (size_t)sprintf(deep, "__global__ void k(float *y) { y[0] = ");
    for (size_t i = 0; i < big / 2; i++)
        deep[d++] = '(';
    deep[d++] = '1';
    for (size_t i = 0; i < big / 2; i++)
        deep[d++] = ')';
    strcpy(deep + d, "; }\n");
    CHECK_STATUS(new_kernel(rt, deep, "nosuch", NULL), PG_ERROR_NOT_FOUND);
    free(parens);
    free(deep);

    /* Two overloads of one __global__ name: an ambiguity, naming both parameter lists. */
    const char *overloads = "__global__ void k(float *y) { y[0] = 1; }\n"
                            "__global__ void k(double *y, int n) { y[0] = n; }\n";
    CHECK_MSG(new_kernel(rt, overloads, "k", NULL), PG_ERROR_ARGUMENT, "float *y");
    CHECK(strstr(pg_last_error(), "double *y, int n") && strstr(pg_last_error(), "signature"));
    CHECK(strstr(pg_last_error(), "line 1") && strstr(pg_last_error(), "line 2"));
    /* signature= says which one; the compiler's overload resolution picks it. */
    pg_kernel *kd = NULL;
    CHECK_OK(pg_kernel_new(rt, overloads, "k", "double *y, int n", NULL, &kd));
    if (kd) {
        int64_t n4 = 4;
        pg_array *yd = NULL;
        REQUIRE_OK(pg_array_new(rt, PG_FLOAT64, 1, &n4, &yd));
        pg_arg args[] = {pg_arg_array(yd), pg_arg_int(7)};
        CHECK_OK(pg_kernel_launch(kd, dim1(1), dim1(1), 0, args, 2));
        double got = 0;
        CHECK_OK(pg_array_read(yd, 0, 1, &got));
        CHECK(got == 7.0);
        pg_array_free(yd);
        pg_kernel_free(kd);
    }
    /* A declaration and its definition are one kernel, whatever the parameter names. */
    CHECK_OK(new_kernel(rt,
                        "__global__ void k(float *out, int n);\n"
                        "__global__ void k(float *y, int count) { y[0] = count; }\n",
                        "k", NULL));
}

/* The scanner names real faults and stays quiet on valid source it might misread. */
static void scanner(void) {
    char why[256];
    static const char *const clean[] = {
        /* Alternatives of an #if may each open a brace. */
        "#ifdef WIDE\nvoid f(double x) {\n#else\nvoid f(float x) {\n#endif\n}\n",
        "#if A\n(\n#elif B\n(\n#else\n(\n#endif\n)\n",
        /* Brackets inside literals, comments and preprocessor lines do not count. */
        "const char *s = \"({[\"; char c = '}'; // )\n/* ] */ int a[2] = {1, 2};\n",
        "#define OPEN {\n#define CALL(x) f(x\nint x = 1'000'000;\n",
        "const char *r = R\"x( )\" ( )x\"; int y = (1);\n",
        "char q = '\\''; const char *e = \"\\\"\";\n",
        "",
    };
    for (size_t i = 0; i < sizeof clean / sizeof clean[0]; i++) {
        int r = pg__signature_scan(clean[i], why, sizeof why);
        if (r != 0) {
            fprintf(stderr, "scan of clean source %zu: %d '%s'\n", i, r, r > 0 ? why : "");
            pg_check_failures++;
        }
    }
    static const struct {
        const char *src, *want;
    } bad[] = {
        {"int f() {\n  return (1;\n}\n", "line 3, column 1: '}' does not match the '(' opened at "
                                         "line 2, column 10"},
        {"a]", "line 1, column 2: ']' closes nothing"},
        {"x = \"abc\ny = 1;\n", "line 1, column 5: this string literal"},
        {"char c = 'a;\n", "line 1, column 10: this character literal"},
        {"int a; /* open\n\n", "line 1, column 8: this comment is never closed"},
        {"auto s = R\"d(never", "line 1, column 11: this raw string literal"},
        {"{\n  {\n  }\n", "line 1, column 1: this '{' is never closed"},
        {"#if 1\n{\n#else\n}\n#endif\n", "line 2, column 1: this '{' is never closed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int r = pg__signature_scan(bad[i].src, why, sizeof why);
        if (r != 1 || !strstr(why, bad[i].want)) {
            fprintf(stderr, "scan of bad source %zu: %d '%s', expected '%s'\n", i, r,
                    r > 0 ? why : "", bad[i].want);
            pg_check_failures++;
        }
    }
}

static void shared_memory(pg_runtime *rt) {
    pg_kernel *k = test_kernel(rt, "fill", NULL);
    pg_array *y = test_array(rt, 16);
    pg_arg args[] = {pg_arg_array(y), pg_arg_float(1.0f), pg_arg_int(16)};
    size_t huge = (size_t)1 << 63;
    pg_device_info info;
    int n = 0;
    REQUIRE_OK(pg_runtime_devices(rt, &info, 1, &n));
    char limit[32], over[32];
    snprintf(limit, sizeof limit, "%llu", (unsigned long long)info.max_shared_memory_per_block);
    snprintf(over, sizeof over, "%llu", (unsigned long long)info.max_shared_memory_per_block + 1);
    CHECK_MSG(pg_kernel_launch(k, dim1(1), dim1(16), huge, args, 3), PG_ERROR_ARGUMENT,
              "shared_mem");
    CHECK(strstr(pg_last_error(), "per block"));
    CHECK(strstr(pg_last_error(), limit));
    CHECK_MSG(pg_kernel_launch(k, dim1(1), dim1(16), info.max_shared_memory_per_block + 1, args, 3),
              PG_ERROR_ARGUMENT, over);
    CHECK_OK(pg_kernel_launch(k, dim1(1), dim1(16), 1024, args, 3));
    CHECK_OK(pg_runtime_sync(rt));
    pg_array_free(y);
    pg_kernel_free(k);
}

static void device_specs(void) {
    static const char *const bad[] = {"host:",   "host:0",    "host:-1", "host:abc",  "host:2x",
                                      "host: 2", "host:17",   "cuda:",   "cuda:0,,1", "cuda:,0",
                                      "cuda:0,", "cuda:-1",   "cuda:x",  "hostx",     "",
                                      "host:+2", "cuda:0 ,1", "auto:1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pg_runtime *rt = NULL;
        pg_status st = try_rt("devices", bad[i], &rt);
        if (st != PG_ERROR_ARGUMENT) {
            fprintf(stderr, "devices='%s': %s, expected PG_ERROR_ARGUMENT (%s)\n", bad[i],
                    pg_status_name(st), pg_last_error());
            pg_check_failures++;
            if (rt)
                pg_runtime_free(rt);
            continue;
        }
        /* The message quotes the value and lists the accepted forms. */
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        if (!strstr(pg_last_error(), quoted) || !strstr(pg_last_error(), "host:N") ||
            !strstr(pg_last_error(), "cuda:0,2") || !strstr(pg_last_error(), "auto")) {
            fprintf(stderr, "devices='%s': message '%s' lacks the value or the forms\n", bad[i],
                    pg_last_error());
            pg_check_failures++;
        }
    }
    static const char *const good[] = {"host", "host:1", "host:3", "host:16"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        pg_runtime *rt = NULL;
        CHECK_OK(try_rt("devices", good[i], &rt));
        if (rt)
            pg_runtime_free(rt);
    }
}

static void exploration_threshold(void) {
    pg_options o;
    pg_options_init(&o);
    static const char *const bad[] = {"nan", "NaN", "-0.5", "-1", "1.5", "inf", "-inf", "1e400"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pg_status st = pg_options_set(&o, "exploration_threshold", bad[i]);
        if (st != PG_ERROR_ARGUMENT || !strstr(pg_last_error(), bad[i]) ||
            !strstr(pg_last_error(), "[0, 1]")) {
            fprintf(stderr, "exploration_threshold '%s': %s '%s'\n", bad[i], pg_status_name(st),
                    pg_last_error());
            pg_check_failures++;
        }
    }
    CHECK_OK(pg_options_set(&o, "exploration_threshold", "0"));
    CHECK_OK(pg_options_set(&o, "exploration_threshold", "1"));
    /* The struct field: NaN is not "unset" (negative is, as documented). */
    pg_options_init(&o);
    o.devices = "host:1";
    o.exploration_threshold = NAN;
    pg_runtime *rt = NULL;
    CHECK_MSG(pg_runtime_new(&o, &rt), PG_ERROR_ARGUMENT, "exploration_threshold");
    o.exploration_threshold = 2.0;
    CHECK_MSG(pg_runtime_new(&o, &rt), PG_ERROR_ARGUMENT, "exploration_threshold");
}

/* pg_array_new in a child with an address-space limit: an array the process cannot hold fails
 * there, with PG_ERROR_OUT_OF_MEMORY naming the size and the limit. */
/* A /proc/self/status line ("VmSize") in bytes. */
static uint64_t status_bytes(const char *name) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, name, strlen(name)) && line[strlen(name)] == ':')
            sscanf(line + strlen(name) + 1, "%llu", &kb);
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}

static void host_memory_limit(int resource, const char *used, const char *limit_name) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl;
        getrlimit(resource, &rl);
        /* 2 GiB more than in use (a sanitizer's shadow counts too): room for the runtime, not
         * for 4 GiB. */
        rl.rlim_cur = (rlim_t)(status_bytes(used) + ((uint64_t)1 << 31));
        if (setrlimit(resource, &rl) != 0)
            _exit(3);
        pg_runtime *rt = NULL;
        if (try_rt(NULL, NULL, &rt) != PG_OK) {
            fprintf(stderr, "child: %s\n", pg_last_error());
            _exit(4);
        }
        int64_t n = INT64_C(1) << 30; /* 4 GiB of float32 */
        pg_array *a = NULL;
        pg_status st = pg_array_new(rt, PG_FLOAT32, 1, &n, &a);
        int ok = st == PG_ERROR_OUT_OF_MEMORY && strstr(pg_last_error(), "4294967296") &&
                 strstr(pg_last_error(), limit_name);
        if (!ok)
            fprintf(stderr, "child (%s): pg_array_new of 4 GiB: %s '%s'\n", limit_name,
                    pg_status_name(st), pg_last_error());
        /* A small one still works, and the runtime stays usable. */
        int64_t small = 1000;
        pg_array *b = NULL;
        if (pg_array_new(rt, PG_FLOAT32, 1, &small, &b) != PG_OK) {
            fprintf(stderr, "child: small array: %s\n", pg_last_error());
            ok = 0;
        }
        float v = 1;
        if (b && (pg_array_write(b, 0, 1, &v) != PG_OK || pg_array_read(b, 0, 1, &v) != PG_OK))
            ok = 0;
        pg_runtime_free(rt);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void trace_path(void) {
    pg_runtime *rt = NULL;
    /* A folder that does not exist: fails at creation, naming the path and the reason. */
    CHECK_MSG(try_rt("trace", "/nonexistent-pg-dir/trace.json", &rt), PG_ERROR_IO,
              "/nonexistent-pg-dir/trace.json");
    CHECK(strstr(pg_last_error(), strerror(ENOENT)) != NULL);
    /* A folder as the path. */
    CHECK_MSG(try_rt("trace", "/tmp", &rt), PG_ERROR_IO, "/tmp");
    /* A writable new path: nothing left behind by the check, the trace written at the end. */
    char dir[] = "/tmp/pg-trace-XXXXXX";
    REQUIRE_OK(mkdtemp(dir) ? PG_OK : PG_ERROR_IO);
    char path[128];
    snprintf(path, sizeof path, "%s/t.json", dir);
    REQUIRE_OK(try_rt("trace", path, &rt));
    struct stat sb;
    CHECK(stat(path, &sb) != 0);
    CHECK_OK(pg_runtime_free(rt));
    CHECK(stat(path, &sb) == 0 && sb.st_size > 0);
    unlink(path);
    /* A read-only folder (unless root, who may write anyway). */
    if (geteuid() != 0) {
        chmod(dir, 0500);
        CHECK_MSG(try_rt("trace", path, &rt), PG_ERROR_IO, strerror(EACCES));
        chmod(dir, 0700);
    }
    rmdir(dir);
}

static char *temp_file(const char *text, size_t len) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/pg-ic-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len)
        exit(2);
    close(fd);
    return path;
}

static void interconnect_file(void) {
    pg_runtime *rt = NULL;
    /* /dev/zero is one endless line: refused at once, not read. */
    CHECK_MSG(try_rt("interconnect", "/dev/zero", &rt), PG_ERROR_IO, "/dev/zero");
    CHECK(strstr(pg_last_error(), "regular file") != NULL);
    CHECK_MSG(try_rt("interconnect", "/tmp", &rt), PG_ERROR_IO, "regular file");

    /* A file over the size limit. */
    size_t n = (2u << 20) + 10;
    char *text = malloc(n);
    memset(text, '#', n);
    text[n - 1] = '\n';
    char *p = temp_file(text, n);
    CHECK_MSG(try_rt("interconnect", p, &rt), PG_ERROR_IO, p);
    CHECK(strstr(pg_last_error(), "MiB") != NULL);
    unlink(p);
    /* A line over the line limit. */
    const char *head = "src,dst,bandwidth_gbps,latency_us\n";
    strcpy(text, head);
    memset(text + strlen(head), '1', 10000);
    strcpy(text + strlen(head) + 10000, "\n");
    p = temp_file(text, strlen(text));
    CHECK_MSG(try_rt("interconnect", p, &rt), PG_ERROR_ARGUMENT, ":2:");
    CHECK(strstr(pg_last_error(), "too long") != NULL);
    unlink(p);
    /* A NUL byte: not text. */
    static const char nul[] = "src,dst,bandwidth_gbps,latency_us\0junk\nhost,0,10,1\n";
    p = temp_file(nul, sizeof nul - 1);
    CHECK_MSG(try_rt("interconnect", p, &rt), PG_ERROR_ARGUMENT, "NUL");
    unlink(p);
    /* The same link twice. */
    const char *twice = "src,dst,bandwidth_gbps,latency_us\nhost,0,10,1\n0,host,9,1\nhost,0,11,1\n";
    p = temp_file(twice, strlen(twice));
    CHECK_MSG(try_rt("interconnect", p, &rt), PG_ERROR_ARGUMENT, ":4:");
    CHECK(strstr(pg_last_error(), "line 2") != NULL);
    unlink(p);
    /* A good file still loads. */
    const char *good = "# ok\nsrc,dst,bandwidth_gbps,latency_us\nhost,0,10,1\n0,host,9,1\n";
    p = temp_file(good, strlen(good));
    CHECK_OK(try_rt("interconnect", p, &rt));
    if (rt) {
        int nloc = 0;
        double bw[4];
        CHECK_OK(pg_runtime_interconnect(rt, &nloc, bw, NULL));
        CHECK(nloc == 2 && bw[1] == 10.0 && bw[2] == 9.0);
        pg_runtime_free(rt);
    }
    unlink(p);
    free(text);
}

int main(void) {
    pg_runtime *rt = NULL;
    REQUIRE_OK(try_rt(NULL, NULL, &rt));
    scanner();
    malformed_sources(rt);
    shared_memory(rt);
    CHECK_OK(pg_runtime_free(rt));
    device_specs();
    exploration_threshold();
    host_memory_limit(RLIMIT_AS, "VmSize", "address-space limit");
    host_memory_limit(RLIMIT_DATA, "VmData", "data-size limit");
    trace_path();
    interconnect_file();
    CHECK_DONE();
}

/* test_fuzz_regressions.c: every input the fuzzers of tests/fuzz/ found a crash or hang with,
 * run again through the same harnesses (saved under tests/fuzz/regressions/<harness>/), plus
 * each finding's behaviour checked by name. A harness aborts on a broken invariant, and ASan
 * (make test-asan) catches the memory errors the fuzzers saw. */
#include "check.h"
#include "nvrtc/cpu_rewrite.h"

#include "tests/fuzz/fuzz_cpu_scan.c"
#include "tests/fuzz/fuzz_options.c"
#include "tests/fuzz/fuzz_profile.c"
#include "tests/fuzz/fuzz_signature_infer.c"
#include "tests/fuzz/fuzz_signature_parse.c"
#include "tests/fuzz/fuzz_topology.c"

#include <dirent.h>
#include <string.h>
#include <unistd.h>

/* Run each file of tests/fuzz/regressions/<harness>/ (none: no finding yet) through the
 * harness; returns the count. */
static int replay(const char *harness, int (*entry)(const uint8_t *, size_t)) {
    char top[4096], dir[4200];
    const char *root = getenv("PG_SOURCE_DIR");
    if (root && *root) {
        snprintf(top, sizeof top, "%s/tests/fuzz/regressions", root);
    } else { /* run by hand: next to this file */
        const char *slash = strrchr(__FILE__, '/');
        int n = slash ? (int)(slash - __FILE__) : 0;
        snprintf(top, sizeof top, "%.*s%s../fuzz/regressions", n, __FILE__, n ? "/" : "");
    }
    /* The folder of findings must be there, even when this harness has none. */
    snprintf(dir, sizeof dir, "%s/README.md", top);
    FILE *readme = fopen(dir, "r");
    if (!readme) {
        fprintf(stderr, "cannot open %s (set PG_SOURCE_DIR to the source tree)\n", dir);
        CHECK(0);
        return 0;
    }
    fclose(readme);
    snprintf(dir, sizeof dir, "%s/%s", top, harness);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) {
            CHECK(f != NULL);
            continue;
        }
        uint8_t buf[1 << 16];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        /* Named first: a crash or hang below shows which input did it. */
        fprintf(stderr, "%s: %s (%zu bytes)\n", harness, e->d_name, n);
        entry(buf, n);
        count++;
    }
    closedir(d);
    return count;
}

/* Rewrite `src` for CPU devices; expect status `want`, and on success a text holding `frag`. */
static void check_rewrite(const char *src, pg_status want, const char *frag) {
    char *out = NULL;
    pg_status st = pg__cpu_rewrite_shared(src, "k", &out);
    if (st != want) {
        fprintf(stderr, "rewrite of \"%s\": %s (%s), expected %s\n", src, pg_status_name(st),
                pg_last_error(), pg_status_name(want));
        CHECK(0);
    }
    if (!st && frag && !strstr(out, frag)) {
        fprintf(stderr, "rewrite of \"%s\" lacks \"%s\":\n%s\n", src, frag, out);
        CHECK(0);
    }
    if (!st)
        free(out);
}

/* cpu_scan finding 1: a declaration with __shared__ twice was rewritten at its first
 * __shared__, then again at its second, copying a negative length (ASan: negative-size-param;
 * without ASan the output buffer's growth loop never ended: a hang). */
static void shared_twice_in_one_declaration(void) {
    check_rewrite("extern __shared__ __shared__ float s[];", PG_OK, "pg__smem_dyn");
    check_rewrite("__shared__ extern __shared__ l;", PG_OK, "pg__smem_dyn");
    check_rewrite("__global__ void k(float *y) {\n"
                  "  extern __shared__ __shared__ float s[];\n"
                  "  s[threadIdx.x] = y[0]; }\n",
                  PG_OK, "(*const s)");
}

/* cpu_scan, found by probing large inputs after finding 1: every __shared__ of a statement
 * scanned the statement again, and every rewritten declaration counted lines from the top: a
 * source of many of them took quadratic time (600 KB of "extern __shared__ ": over a minute).
 * Now linear: these megabytes take milliseconds; the alarm turns a relapse into a failure. */
static void shared_statements_linear(void) {
    enum { K = 100000 };
    const char *unit = "extern __shared__ ", *decl = "extern __shared__ float s[];\n";
    char *src = malloc(K * strlen(decl) + 1), *out = NULL;
    REQUIRE_OK(src ? PG_OK : PG_ERROR_OUT_OF_MEMORY);
    alarm(120);
    src[0] = '\0';
    for (size_t i = 0, at = 0; i < K; i++, at += strlen(unit))
        memcpy(src + at, unit, strlen(unit) + 1);
    CHECK_OK(pg__cpu_rewrite_shared(src, "k", &out)); /* no statement ends: nothing to rewrite */
    CHECK(out && strcmp(out, src) == 0);
    free(out);
    out = NULL;
    for (size_t i = 0, at = 0; i < K; i++, at += strlen(decl))
        memcpy(src + at, decl, strlen(decl) + 1);
    CHECK_OK(pg__cpu_rewrite_shared(src, "k", &out));
    char last[64];
    snprintf(last, sizeof last, "#line %d \"kernel.cu\"", K); /* the line of the last one */
    CHECK(out && strstr(out, last) != NULL);
    free(out);
    alarm(0);
    free(src);
}

/* signature_infer, found by the same probe: from each __global__ the search for the kernel's
 * name read on through every later __global__, so many of them without a parameter list took
 * quadratic time (200 KB: 16 s). A __global__ now ends the search of the one before it. */
static void many_global_specifiers_linear(void) {
    enum { K = 100000 };
    const char *spec = "__global__ ", *kernel = "__global__ void k(int n) {}";
    char *src = malloc(K * strlen(spec) + strlen(kernel) + 1);
    REQUIRE_OK(src ? PG_OK : PG_ERROR_OUT_OF_MEMORY);
    alarm(120);
    for (size_t i = 0; i < K; i++)
        memcpy(src + i * strlen(spec), spec, strlen(spec));
    strcpy(src + K * strlen(spec), kernel);
    pg_param_info *p = NULL;
    int n = 0;
    CHECK_OK(pg__signature_infer(src, "k", &p, &n));
    CHECK(n == 1 && p && strcmp(p[0].name, "n") == 0);
    free(p);
    CHECK_STATUS(pg__signature_find(src, "nothing"), PG_ERROR_NOT_FOUND);
    alarm(0);
    free(src);
}

/* signature_infer finding 1 (issue 36): two __global__ functions of one name whose parameter
 * lists do not parse are told apart by their text, squeezed into params[256] for the error
 * message; a step of squeeze writes a space and a character, and one starting at 254 put the
 * terminator at params[256] (ASan: stack-buffer-overflow write). "ab c d ..." (300 characters,
 * shorter than the 512 that same_params compares) makes every step after the first such a pair,
 * from an even count. Now the message cuts the list short. */
static void overload_message_fits(void) {
    char list[1024] = "ab", src[4096];
    for (int i = 0; strlen(list) < 300; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), " %c", 'c' + i % 20);
    snprintf(src, sizeof src,
             "__global__ void k(%s) {}\n"
             "__global__ void k(%s x) {}\n",
             list, list);
    pg_param_info *p = NULL;
    int n = -1;
    CHECK_STATUS(pg__signature_infer(src, "k", &p, &n), PG_ERROR_ARGUMENT);
    const char *e = pg_last_error();
    CHECK(strstr(e, "ambiguous") && strstr(e, "at line 1") && strstr(e, "at line 2"));
    CHECK(strstr(e, "k(ab c d e") != NULL);
    /* The same with names long enough that the list of sites fills the message's buffer. */
    char *big = malloc(4 * 2200 + 1);
    REQUIRE_OK(big ? PG_OK : PG_ERROR_OUT_OF_MEMORY);
    char name[1501];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    big[0] = '\0';
    for (int i = 0; i < 4; i++) /* i more words: the lists differ without their last names */
        snprintf(big + strlen(big), 4 * 2200 + 1 - strlen(big), "__global__ void %s(%s%.*s) {}\n",
                 name, list, 2 * i, " w w w");
    CHECK_STATUS(pg__signature_infer(big, name, &p, &n), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "ambiguous") != NULL);
    free(big);
}

/* topology finding 1: every route was the best of every simple path of up to 8 links, tried in
 * full, and paths multiply with parallel links and meshes of switches: the fuzzer's dgx2-v100
 * with links repeated ran for minutes, 22 switches linked each to each (and to the host) for
 * hours. Now paths that cannot beat the best so far are not followed (the same routes: the
 * presets' and the corpus's compared before and after), and a machine whose routes still take
 * more than 200,000 paths is refused, naming the problem. */
static void route_search_bounded(void) {
    char path[] = "/tmp/pg-fuzz-mesh-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE_OK(fd >= 0 ? PG_OK : PG_ERROR_IO);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "gpu_type g name=G memory=1G cc=8.0 sms=10 memory_gbps=100\ngpus 1 g\nswitch");
    for (int i = 0; i < 22; i++)
        fprintf(f, " s%d", i);
    fprintf(f, "\n");
    for (int i = -1; i < 22; i++) { /* -1: the host */
        char from[16];
        snprintf(from, sizeof from, i < 0 ? "host" : "s%d", i);
        for (int j = i + 1; j < 22; j++)
            fprintf(f, "link %s s%d 10 1\n", from, j);
    }
    fprintf(f, "link gpu0 s0 10 1\n");
    fclose(f);
    pg__sim_topo *t = malloc(sizeof *t);
    REQUIRE_OK(t ? PG_OK : PG_ERROR_OUT_OF_MEMORY);
    alarm(120);
    CHECK_STATUS(pg__sim_topo_load(path, t), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "too many paths") && strstr(pg_last_error(), path));
    alarm(0);
    unlink(path);
    free(t);
}

int main(void) {
    shared_twice_in_one_declaration();
    shared_statements_linear();
    many_global_specifiers_linear();
    overload_message_fits();
    route_search_bounded();
    int n = replay("signature_parse", pg_fuzz_signature_parse);
    n += replay("signature_infer", pg_fuzz_signature_infer);
    n += replay("cpu_scan", pg_fuzz_cpu_scan);
    n += replay("topology", pg_fuzz_topology);
    n += replay("options", pg_fuzz_options);
    n += replay("profile", pg_fuzz_profile);
    printf("fuzz regressions: %d saved inputs replayed\n", n);
    CHECK_DONE();
}

/* test_error_causes.c: errors that keep their cause (issue 17, part 5): an error raised inside
 * another keeps the inner message after the outer's context (a compile error on CPU devices, a
 * bad interconnect file at runtime creation, devices=auto with no device at all), the wrap
 * itself, and options copied by pg_options_set rather than borrowed. */
#include "base/error.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void expect_text(const char *what, const char *text, const char *needle) {
    if (!strstr(text, needle)) {
        fprintf(stderr, "%s: \"%s\" lacks \"%s\"\n", what, text, needle);
        pg_check_failures++;
    }
}

static void expect_prefix(const char *what, const char *text, const char *prefix) {
    if (strncmp(text, prefix, strlen(prefix))) {
        fprintf(stderr, "%s: \"%s\" does not start with \"%s\"\n", what, text, prefix);
        pg_check_failures++;
    }
}

/* The wrap on its own: context before the cause, the log kept, a long chain cut, not overrun. */
static void wrap(void) {
    CHECK(pg__error(PG_ERROR_IO, "inner %d", 1) == PG_ERROR_IO);
    pg__error_set_log("the long log");
    CHECK(pg__error_wrap(PG_ERROR_IO, "middle") == PG_ERROR_IO);
    CHECK(pg__error_wrap(PG_ERROR_DEVICE, "outer '%s'", "x") == PG_ERROR_DEVICE);
    CHECK(!strcmp(pg_last_error(), "outer 'x': middle: inner 1"));
    CHECK(!strcmp(pg_last_error_log(), "the long log"));
    pg__error_clear();
    pg__error_wrap(PG_ERROR_INTERNAL, "context alone");
    CHECK(!strcmp(pg_last_error(), "context alone"));
    char big[3000];
    memset(big, 'i', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    pg__error(PG_ERROR_IO, "%s", big);
    pg__error_wrap(PG_ERROR_IO, "outer");
    expect_prefix("a long cause", pg_last_error(), "outer: iii");
    CHECK(strlen(pg_last_error()) < sizeof big);
    memset(big, 'o', sizeof big - 1);
    pg__error(PG_ERROR_IO, "inner");
    pg__error_wrap(PG_ERROR_IO, "%s", big); /* a context too long leaves no room for the cause */
    expect_prefix("a long context", pg_last_error(), "ooo");
    pg__error_clear();
}

/* A compile error on CPU devices: the kernel, the devices, the compiler, and its message. */
static void compile_error(void) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:2";
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    pg_kernel *k = NULL;
    const char *src = "extern \"C\" __global__ void saxpy(float *y, float a, int n) {\n"
                      "  y[0] = a * undeclared_thing;\n"
                      "}\n";
    CHECK_STATUS(pg_kernel_new(rt, src, "saxpy", NULL, NULL, &k), PG_ERROR_COMPILE);
    expect_prefix("compile error", pg_last_error(),
                  "compiling kernel 'saxpy' for CPU devices: the C++ compiler '");
    expect_text("compile error", pg_last_error(), "' failed: kernel.cu:2:");
    expect_text("compile error", pg_last_error(), "undeclared_thing");
    expect_text("compile error log", pg_last_error_log(), "undeclared_thing");
    /* A name the source lacks: still said which kernel and where it was being built for. */
    CHECK_STATUS(pg_kernel_new(rt, src, "daxpy", NULL, "", &k), PG_ERROR_NOT_FOUND);
    expect_text("missing kernel", pg_last_error(), "daxpy");
    CHECK_OK(pg_runtime_free(rt));
}

static pg_status runtime_with_interconnect(const char *path) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:2";
    o.interconnect = path;
    pg_runtime *rt = NULL;
    pg_status st = pg_runtime_new(&o, &rt);
    if (!st)
        pg_runtime_free(rt);
    return st;
}

/* Runtime creation with a bad interconnect file: the file and the parse error, in one chain. */
static void bad_interconnect(void) {
    char path[] = "/tmp/pg-ic-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE_OK(fd >= 0 ? PG_OK : PG_ERROR_IO);
    const char *text = "src,dst,bandwidth_gbps,latency_us\nhost,0,12.5,3\n0,1,fast,1\n";
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    char want[256];
    snprintf(want, sizeof want,
             "pg_runtime_new: reading the interconnect matrix '%s' (option interconnect): %s:3: ",
             path, path);
    CHECK_STATUS(runtime_with_interconnect(path), PG_ERROR_ARGUMENT);
    expect_prefix("bad interconnect file", pg_last_error(), want);
    expect_text("bad interconnect file", pg_last_error(), "fast");
    unlink(path);
    /* And one that is not there: the cause is the OS's. */
    CHECK_STATUS(runtime_with_interconnect(path), PG_ERROR_IO);
    snprintf(want, sizeof want,
             "pg_runtime_new: reading the interconnect matrix '%s' (option interconnect): "
             "cannot read interconnect file %s: ",
             path, path);
    expect_prefix("missing interconnect file", pg_last_error(), want);
}

/* devices=auto with no GPU and CPU devices that cannot open: both reasons are given. Where a GPU
 * opens (the GPU script), auto takes it and there is nothing to check. */
static void auto_without_devices(void) {
    setenv("PG_HOST_THREADS", "0", 1);
    pg_options o;
    pg_options_init(&o);
    o.devices = "auto";
    pg_runtime *rt = NULL;
    pg_status st = pg_runtime_new(&o, &rt);
    unsetenv("PG_HOST_THREADS");
    if (st == PG_OK) {
        pg_device_info info;
        int n = 0;
        CHECK_OK(pg_runtime_devices(rt, &info, 1, &n));
        CHECK(info.kind == PG_DEVICE_CUDA);
        CHECK_OK(pg_runtime_free(rt));
        return;
    }
    CHECK(st == PG_ERROR_ARGUMENT);
    expect_prefix("auto", pg_last_error(),
                  "pg_runtime_new: opening devices 'auto': no usable GPU (");
    expect_text("auto", pg_last_error(), "), and no CPU device instead: PG_HOST_THREADS='0'");
}

/* pg_options_set copies: the caller's buffer may change or go, and a copied struct stays good. */
static void options_copied(void) {
    pg_options o;
    pg_options_init(&o);
    char *devices = strdup("host:2"), *policy = strdup("round-robin");
    REQUIRE_OK(devices && policy ? PG_OK : PG_ERROR_OUT_OF_MEMORY);
    CHECK_OK(pg_options_set(&o, "devices", devices));
    CHECK_OK(pg_options_set(&o, "policy", policy));
    strcpy(devices, "host:9"); /* what a reused buffer would hold */
    strcpy(policy, "nonesuch!!!");
    free(devices);
    free(policy);
    pg_options copy = o;
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&copy, &rt));
    int n = 0;
    CHECK_OK(pg_runtime_devices(rt, NULL, 0, &n));
    CHECK(n == 2);
    CHECK_OK(pg_runtime_free(rt));
    /* Equal values share one copy; setting again replaces. */
    char a[] = "host:3", b[] = "host:3";
    CHECK_OK(pg_options_set(&o, "devices", a));
    const char *first = o.devices;
    CHECK_OK(pg_options_set(&o, "devices", b));
    CHECK(o.devices == first && o.devices != a && o.devices != b);
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    CHECK_OK(pg_runtime_devices(rt, NULL, 0, &n));
    CHECK(n == 3);
    CHECK_OK(pg_runtime_free(rt));
    /* A field set directly is the caller's, as before. */
    o.devices = "host:1";
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    CHECK_OK(pg_runtime_devices(rt, NULL, 0, &n));
    CHECK(n == 1);
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    wrap();
    compile_error();
    bad_interconnect();
    auto_without_devices();
    options_copied();
    CHECK_DONE();
}

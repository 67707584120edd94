/* test_profile.c: the option profile (PG_PROFILE) records each kernel's measured duration with
 * its launch shape and argument bytes as sample lines of a timing profile at pg_runtime_free,
 * appending to what the file holds; a simulated machine reading that profile then predicts the
 * kernels from those samples; a bad path is refused at creation, naming it. */
#include "kernels_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 4096 };

static int count_lines(const char *path, const char *prefix) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += !strncmp(line, prefix, strlen(prefix));
    fclose(f);
    return n;
}

static void record(const char *path, int launches) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:2";
    REQUIRE_OK(pg_options_set(&o, "profile", path));
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    pg_kernel *k = test_kernel(rt, "add1", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N), *v = NULL;
    REQUIRE_OK(pg_array_slice(y, N / 2, N, &v));
    for (int i = 0; i < launches; i++) {
        pg_arg a[] = {pg_arg_array(i % 2 ? v : y), pg_arg_array(x), pg_arg_int(N / 2)};
        CHECK_OK(pg_kernel_launch(k, dim1(N / 512), dim1(256), 0, a, 3));
    }
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    char path[] = "/tmp/pg-profile-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    unlink(path);
    record(path, 10);
    CHECK(count_lines(path, "sample,add1,CPU device ") == 10);
    /* a view's bytes count from its first element to the end of its array: 8 + 16 KiB, and
     * the whole array's 16 + 16 KiB */
    FILE *f = fopen(path, "r");
    char line[512];
    int view_seen = 0, whole_seen = 0;
    while (f && fgets(line, sizeof line, f)) {
        view_seen += strstr(line, ",8x1x1,256x1x1,24576,") != NULL;
        whole_seen += strstr(line, ",8x1x1,256x1x1,32768,") != NULL;
    }
    if (f)
        fclose(f);
    CHECK(view_seen == 5 && whole_seen == 5);
    record(path, 4); /* appended */
    CHECK(count_lines(path, "sample,add1,") == 14);
    /* A simulated machine reads it (device names differ: the defaults apply, and it runs). */
    char spec[256];
    snprintf(spec, sizeof spec, "sim:pcie-4gpu,profile=%s", path);
    pg_runtime *rt = test_runtime_on(spec, NULL, NULL);
    CHECK_OK(pg_runtime_free(rt));
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:1";
    o.profile = "/nonexistent-dir/profile.csv";
    pg_runtime *bad = NULL;
    CHECK_MSG(pg_runtime_new(&o, &bad), PG_ERROR_IO, "profile file /nonexistent-dir/profile.csv");
    unlink(path);
    CHECK_DONE();
}

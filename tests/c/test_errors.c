/* test_errors.c: every bad input gets a clear error that names the problem, and leaves the
 * runtime usable with nothing lost. */
#include "kernels_common.h"

#include <stdio.h>
#include <unistd.h>

static pg_runtime *new_rt(const char *name, const char *value) {
    pg_options o;
    pg_options_init(&o);
    o.devices = test_devices("host:2");
    if (name && pg_options_set(&o, name, value) != PG_OK)
        return NULL;
    pg_runtime *rt = NULL;
    return pg_runtime_new(&o, &rt) == PG_OK ? rt : NULL;
}

int main(void) {
    /* Options. */
    pg_options o;
    pg_options_init(&o);
    pg_dtype t;
    CHECK_MSG(pg_dtype_parse("float16", &t), PG_ERROR_ARGUMENT, "float16");
    CHECK_MSG(pg_options_set(&o, "polcy", "x"), PG_ERROR_ARGUMENT, "polcy");
    CHECK_MSG(pg_options_set(&o, "exploration_threshold", "lots"), PG_ERROR_ARGUMENT, "lots");
    CHECK_MSG(pg_options_set(&o, "prefetch", "maybe"), PG_ERROR_ARGUMENT, "maybe");
    CHECK(new_rt("policy", "fastest") == NULL);
    CHECK(strstr(pg_last_error(), "fastest") && strstr(pg_last_error(), "round-robin"));
    CHECK(new_rt("devices", "tpu:3") == NULL);
    CHECK(strstr(pg_last_error(), "tpu:3") != NULL);
    CHECK(new_rt("devices", "host:99") == NULL);
    CHECK(new_rt("stream_policy", "lifo") == NULL);
    CHECK(strstr(pg_last_error(), "lifo") != NULL);
    CHECK(new_rt("parent_stream_policy", "sibling") == NULL);
    CHECK(new_rt("execution", "eager") == NULL);
    CHECK(new_rt("exploration_threshold", "1.5") == NULL);
    CHECK(strstr(pg_last_error(), "1.5") != NULL);
    CHECK(new_rt("log", "loud") == NULL);
    CHECK(new_rt("interconnect", "/nonexistent/matrix.csv") == NULL);
    CHECK(strstr(pg_last_error(), "/nonexistent/matrix.csv") != NULL);
    /* Contradicting options: a bandwidth matrix for more devices than were asked for. */
    char path[] = "/tmp/pg-err-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "src,dst,bandwidth_gbps,latency_us\nhost,5,10,1\n");
    fclose(f);
    CHECK(new_rt("interconnect", path) == NULL);
    CHECK(strstr(pg_last_error(), path) != NULL);
    unlink(path);

    pg_runtime *rt = new_rt(NULL, NULL);
    REQUIRE_OK(rt ? PG_OK : PG_ERROR_INTERNAL);

    /* Arrays. */
    pg_array *a = NULL;
    int64_t zero = 0, neg = -3, huge = INT64_C(1) << 62, n = 100, shape5[5] = {1, 1, 1, 1, 1};
    CHECK_MSG(pg_array_new(rt, PG_FLOAT32, 1, &zero, &a), PG_ERROR_ARGUMENT, "positive");
    CHECK_MSG(pg_array_new(rt, PG_FLOAT32, 1, &neg, &a), PG_ERROR_ARGUMENT, "-3");
    CHECK_MSG(pg_array_new(rt, PG_FLOAT32, 1, &huge, &a), PG_ERROR_ARGUMENT, "large");
    int64_t big = INT64_C(1) << 46; /* 256 TiB of floats: more than any device here */
    CHECK_STATUS(pg_array_new(rt, PG_FLOAT32, 1, &big, &a), PG_ERROR_OUT_OF_MEMORY);
    CHECK_MSG(pg_array_new(rt, PG_FLOAT32, 5, shape5, &a), PG_ERROR_ARGUMENT, "dimensions");
    CHECK_MSG(pg_array_new(rt, PG_FLOAT32, 0, shape5, &a), PG_ERROR_ARGUMENT, "dimensions");
    CHECK_MSG(pg_array_new(rt, (pg_dtype)42, 1, &n, &a), PG_ERROR_ARGUMENT, "dtype");
    pg_array *x = test_array(rt, 100), *y = test_array(rt, 100);
    float buf[200];
    CHECK_MSG(pg_array_read(x, 50, 51, buf), PG_ERROR_ARGUMENT, "out of range");
    CHECK_MSG(pg_array_write(x, 101, 0, buf), PG_ERROR_ARGUMENT, "out of range");
    CHECK_MSG(pg_array_read(x, UINT64_MAX, 2, buf), PG_ERROR_ARGUMENT, "out of range");
    CHECK_MSG(pg_array_unmap(x), PG_ERROR_STATE, "not mapped");
    void *p;
    CHECK_MSG(pg_array_map(x, (pg_access)7, &p), PG_ERROR_ARGUMENT, "access");

    /* Kernels. */
    pg_kernel *k = NULL;
    CHECK_MSG(pg_kernel_new(rt, TEST_SRC, "nosuch", NULL, NULL, &k), PG_ERROR_NOT_FOUND, "nosuch");
    CHECK_STATUS(pg_kernel_new(rt, "__global__ void broken(float *y) { y[0] = ; }", "broken", NULL,
                               NULL, &k),
                 PG_ERROR_COMPILE);
    CHECK(strlen(pg_last_error_log()) > 0);
    CHECK_MSG(pg_kernel_new(rt, TEST_SRC, "add1", "out const float *y, float *x, int n", NULL, &k),
              PG_ERROR_ARGUMENT, "y");
    /* A signature that does not match the source's declaration, caught before any compiler. */
    CHECK_MSG(pg_kernel_new(rt, TEST_SRC, "fill", "out float *y, int n", NULL, &k),
              PG_ERROR_ARGUMENT, "source declares 3");
    CHECK_MSG(pg_kernel_new(rt, TEST_SRC, "fill", "out float *y, double v, int n", NULL, &k),
              PG_ERROR_ARGUMENT, "parameter 2");
    pg_kernel *add1 = test_kernel(rt, "add1", NULL);
    pg_arg good[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(100)};
    pg_dim3 g = dim1(1), b = dim1(128), zero3 = {0, 1, 1}, big_block = {16384, 1, 1},
            big_grid = {1, 70000, 1};
    CHECK_MSG(pg_kernel_launch(add1, zero3, b, 0, good, 3), PG_ERROR_ARGUMENT, "at least 1");
    CHECK_MSG(pg_kernel_launch(add1, g, zero3, 0, good, 3), PG_ERROR_ARGUMENT, "at least 1");
    CHECK_MSG(pg_kernel_launch(add1, g, big_block, 0, good, 3), PG_ERROR_ARGUMENT, "too large");
    CHECK_MSG(pg_kernel_launch(add1, big_grid, b, 0, good, 3), PG_ERROR_ARGUMENT, "too large");
    CHECK_MSG(pg_kernel_launch(add1, g, b, 0, good, 2), PG_ERROR_ARGUMENT, "takes 3 arguments");
    pg_arg swapped[] = {pg_arg_int(1), pg_arg_array(x), pg_arg_int(100)};
    CHECK_MSG(pg_kernel_launch(add1, g, b, 0, swapped, 3), PG_ERROR_ARGUMENT, "parameter 1 (y)");
    pg_arg scalar_for_n[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_array(x)};
    CHECK_MSG(pg_kernel_launch(add1, g, b, 0, scalar_for_n, 3), PG_ERROR_ARGUMENT,
              "parameter 3 (n)");
    pg_array *ints = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_INT32, 1, &n, &ints));
    pg_arg wrong_type[] = {pg_arg_array(y), pg_arg_array(ints), pg_arg_int(100)};
    CHECK_MSG(pg_kernel_launch(add1, g, b, 0, wrong_type, 3), PG_ERROR_ARGUMENT, "int32");
    pg_arg too_big[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(INT64_C(1) << 40)};
    CHECK_MSG(pg_kernel_launch(add1, g, b, 0, too_big, 3), PG_ERROR_ARGUMENT, "does not fit int32");
    pg_arg as_float[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_double(3.5)};
    CHECK_MSG(pg_kernel_launch(add1, g, b, 0, as_float, 3), PG_ERROR_ARGUMENT, "3.5");
    pg_kernel *u8 = NULL;
    REQUIRE_OK(pg_kernel_new(rt,
                             "__global__ void k(unsigned char *p, unsigned char v) { p[0] = v; }",
                             "k", NULL, NULL, &u8));
    pg_array *bytes = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_UINT8, 1, &n, &bytes));
    pg_arg negv[] = {pg_arg_array(bytes), pg_arg_int(-1)};
    CHECK_MSG(pg_kernel_launch(u8, g, b, 0, negv, 2), PG_ERROR_ARGUMENT, "does not fit uint8");
    pg_arg v300[] = {pg_arg_array(bytes), pg_arg_int(300)};
    CHECK_MSG(pg_kernel_launch(u8, g, b, 0, v300, 2), PG_ERROR_ARGUMENT, "300");
    pg_arg v255[] = {pg_arg_array(bytes), pg_arg_int(255)};
    CHECK_OK(pg_kernel_launch(u8, g, b, 0, v255, 2));
    uint8_t got;
    CHECK_OK(pg_array_read(bytes, 0, 1, &got));
    CHECK(got == 255);

    /* Nothing was launched by the failed calls. */
    pg_stats st;
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    CHECK(st.kernels == 1);

    /* Use after free, free twice. */
    pg_array *gone = test_array(rt, 10);
    CHECK_OK(pg_array_free(gone));
    CHECK_MSG(pg_array_free(gone), PG_ERROR_STATE, "freed");
    CHECK_MSG(pg_array_read(gone, 0, 1, buf), PG_ERROR_STATE, "freed");
    pg_arg with_gone[] = {pg_arg_array(y), pg_arg_array(gone), pg_arg_int(10)};
    CHECK_MSG(pg_kernel_launch(add1, g, b, 0, with_gone, 3), PG_ERROR_STATE, "parameter 2 (x)");
    pg_kernel *k2 = test_kernel(rt, "add1", NULL);
    CHECK_OK(pg_kernel_free(k2));
    CHECK_MSG(pg_kernel_launch(k2, g, b, 0, good, 3), PG_ERROR_STATE, "freed");
    CHECK_MSG(pg_kernel_free(k2), PG_ERROR_STATE, "freed");

    /* A read that would wait for a kernel held back by this thread's own map fails instead of
     * hanging; after the unmap everything proceeds. */
    float *xp;
    REQUIRE_OK(pg_array_map(x, PG_ACCESS_OUT, (void **)&xp));
    for (int i = 0; i < 100; i++)
        xp[i] = (float)i;
    CHECK_OK(pg_kernel_launch(add1, g, b, 0, good, 3)); /* held back, not failed */
    CHECK_MSG(pg_array_read(y, 0, 1, buf), PG_ERROR_STATE, "mapped");
    CHECK_MSG(pg_runtime_sync(rt), PG_ERROR_STATE, "mapped");
    CHECK_MSG(pg_array_free(x), PG_ERROR_STATE, "mapped");
    CHECK_OK(pg_array_unmap(x));
    CHECK_OK(pg_array_read(y, 0, 100, buf));
    CHECK(buf[0] == 1.0f && buf[99] == 100.0f);

    /* The runtime is still fully usable. */
    CHECK_OK(pg_runtime_sync(rt));
    CHECK_OK(pg_runtime_free(rt));
    CHECK_MSG(pg_runtime_free(rt), PG_ERROR_STATE, "freed");
    CHECK_MSG(pg_array_read(y, 0, 1, buf), PG_ERROR_STATE, "freed");
    CHECK_DONE();
}

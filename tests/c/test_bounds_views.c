/* test_bounds_views.c: check=bounds on CPU devices where one guard page did not reach. A kernel
 * given a view that writes (or reads) past the view's rows fails, naming the kernel, the
 * parameter and the rows, and the array's other rows keep their values on the device too; a
 * kernel staying inside its views gives the same values as unchecked. A small write before an
 * array's start (into the bytes between the guard page and the start) and a write 2^20
 * elements past the end or before the start are caught. */
#include "kernels_common.h"

#include "core/handle.h"

#include <stdint.h>

static const char *SRC =
    "extern \"C\" __global__ void fill(float *y, float v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }\n"
    "extern \"C\" __global__ void add1(float *y, const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }\n"
    /* The index comes in as a parameter, so the compiler cannot see it. */
    /* x not const: both parameters may be written (copied back) */
    "extern \"C\" __global__ void plus1(float *y, float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }\n"
    "extern \"C\" __global__ void poke(float *y, long at) {\n"
    "  if (blockIdx.x == 0 && threadIdx.x == 0) ((volatile float *)y)[at] = 1.0f; }\n"
    "extern \"C\" __global__ void poke64(double *y, long at) {\n"
    "  if (blockIdx.x == 0 && threadIdx.x == 0) ((volatile double *)y)[at] = 1.0; }\n"
    "extern \"C\" __global__ void peek(float *y, const float *x, long at) {\n"
    "  if (blockIdx.x == 0 && threadIdx.x == 0) y[0] = ((volatile const float *)x)[at]; }\n";

static pg_runtime *checked(void) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:1";
    o.check = "bounds";
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

static pg_kernel *kernel(pg_runtime *rt, const char *name) {
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SRC, name, NULL, NULL, &k));
    return k;
}

static pg_array *view(pg_array *a, int64_t lo, int64_t hi) {
    pg_array *v = NULL;
    REQUIRE_OK(pg_array_slice(a, lo, hi, &v));
    return v;
}

static pg_array *array_of(pg_runtime *rt, pg_dtype t, int64_t n) {
    pg_array *a = NULL;
    REQUIRE_OK(pg_array_new(rt, t, 1, &n, &a));
    return a;
}

/* The runtime's next sync fails with a message holding every one of want (NULL-ended). */
static int sync_fails(pg_runtime *rt, const char *const *want) {
    pg_status st = pg_runtime_sync(rt);
    char m[2048];
    snprintf(m, sizeof m, "%s", pg_last_error());
    int ok = st == PG_ERROR_DEVICE;
    for (int i = 0; want[i]; i++)
        ok &= strstr(m, want[i]) != NULL;
    if (!ok)
        fprintf(stderr, "sync: %s '%s'\n", pg_status_name(st), m);
    return ok;
}

static float *device_copy(pg_array *a) {
    pg__array *ia = pg__handle_get((uint64_t)(uintptr_t)a, PG__H_ARRAY);
    REQUIRE_OK(ia && ia->store->dev[0] ? PG_OK : PG_ERROR_INTERNAL);
    return ia->store->dev[0];
}

/* fill(1,16)(z[0:8], 3.0, 16): writes z[8:16] through a view of 8 rows. */
static void write_past_a_view(void) {
    pg_runtime *rt = checked();
    pg_kernel *fill = kernel(rt, "fill");
    pg_array *z = array_of(rt, PG_FLOAT32, 16);
    pg_arg all[] = {pg_arg_array(z), pg_arg_float(5), pg_arg_int(16)};
    CHECK_OK(pg_kernel_launch(fill, dim1(1), dim1(16), 0, all, 3));
    CHECK_OK(pg_runtime_sync(rt));
    pg_array *v = view(z, 0, 8);
    pg_arg past[] = {pg_arg_array(v), pg_arg_float(3), pg_arg_int(16)};
    CHECK_OK(pg_kernel_launch(fill, dim1(1), dim1(16), 0, past, 3));
    const char *want[] = {
        "'fill'", "out of bounds", "parameter 1 (y)", "rows [0, 8) of array", "past its end", NULL};
    CHECK(sync_fails(rt, want));
    const float *d = device_copy(z); /* the device failed; its memory is still there */
    for (int i = 0; i < 16; i++)
        CHECK(d[i] == 5.0f); /* not even the view's rows: the copy back was not made */
    CHECK_OK(pg_array_free(v));
    CHECK_OK(pg_runtime_free(rt));
}

/* A read past a view's end, or before its start by more than the redzone, is caught too. */
static void read_past_a_view(long at) {
    pg_runtime *rt = checked();
    pg_kernel *peek = kernel(rt, "peek");
    pg_array *z = array_of(rt, PG_FLOAT32, 64), *y = array_of(rt, PG_FLOAT32, 1);
    pg_array *v = view(z, 16, 32);
    pg_arg args[] = {pg_arg_array(y), pg_arg_array(v), pg_arg_int(at)};
    CHECK_OK(pg_kernel_launch(peek, dim1(1), dim1(1), 0, args, 3));
    const char *want[] = {"'peek'", "out of bounds", "parameter 2 (x)", "rows [16, 32) of array",
                          NULL};
    CHECK(sync_fails(rt, want));
    CHECK_OK(pg_array_free(v));
    CHECK_OK(pg_runtime_free(rt));
}

/* Inside their views, kernels compute what they compute unchecked: the same view given twice
 * is one buffer, overlapping views read what was there, the other rows are untouched. */
static void inside_views(void) {
    pg_runtime *rt = checked();
    pg_kernel *fill = kernel(rt, "fill"), *add1 = kernel(rt, "add1");
    pg_array *z = array_of(rt, PG_FLOAT32, 32);
    float v[32];
    for (int i = 0; i < 32; i++)
        v[i] = (float)i;
    CHECK_OK(pg_array_write(z, 0, 32, v));
    pg_array *a = view(z, 4, 12), *b = view(z, 8, 16), *c = view(z, 20, 24);
    pg_arg a1[] = {pg_arg_array(a), pg_arg_array(a), pg_arg_int(8)}; /* a += 1 */
    CHECK_OK(pg_kernel_launch(add1, dim1(1), dim1(8), 0, a1, 3));
    pg_arg a2[] = {pg_arg_array(c), pg_arg_array(b), pg_arg_int(4)}; /* c = b[0:4] + 1 */
    CHECK_OK(pg_kernel_launch(add1, dim1(1), dim1(8), 0, a2, 3));
    pg_arg f[] = {pg_arg_array(b), pg_arg_float(-1), pg_arg_int(8)};
    CHECK_OK(pg_kernel_launch(fill, dim1(1), dim1(8), 0, f, 3));
    /* Views sharing rows, both maybe written: z[26:30] = z[24:28] + 1 must not be undone by
     * the other view's copy back (they stay in the array's buffer). */
    pg_kernel *plus1 = kernel(rt, "plus1");
    pg_array *d = view(z, 26, 30), *e = view(z, 24, 32);
    pg_arg p1[] = {pg_arg_array(d), pg_arg_array(e), pg_arg_int(2)};
    CHECK_OK(pg_kernel_launch(plus1, dim1(1), dim1(2), 0, p1, 3));
    /* A view and its whole array together, too. */
    pg_arg p2[] = {pg_arg_array(z), pg_arg_array(a), pg_arg_int(2)};
    CHECK_OK(pg_kernel_launch(plus1, dim1(1), dim1(2), 0, p2, 3));
    CHECK_OK(pg_runtime_sync(rt));
    float got[32], want[32];
    for (int i = 0; i < 32; i++)
        want[i] = (float)i;
    for (int i = 4; i < 12; i++)
        want[i] += 1;
    for (int i = 0; i < 4; i++)
        want[20 + i] = want[8 + i] + 1;
    for (int i = 8; i < 16; i++)
        want[i] = -1;
    for (int i = 0; i < 2; i++)
        want[26 + i] = want[24 + i] + 1;
    for (int i = 0; i < 2; i++)
        want[i] = want[4 + i] + 1;
    CHECK_OK(pg_array_read(z, 0, 32, got));
    CHECK(!memcmp(got, want, sizeof got));
    CHECK_OK(pg_runtime_free(rt));
}

/* poke(y, at) on an array of n elements (not a whole number of pages). */
static void poke(pg_dtype t, long n, long at, const char *where) {
    pg_runtime *rt = checked();
    pg_kernel *k = kernel(rt, t == PG_FLOAT64 ? "poke64" : "poke");
    pg_array *y = array_of(rt, t, n);
    pg_arg args[] = {pg_arg_array(y), pg_arg_int(at)};
    CHECK_OK(pg_kernel_launch(k, dim1(1), dim1(1), 0, args, 2));
    const char *want[] = {t == PG_FLOAT64 ? "'poke64'" : "'poke'", "out of bounds", where, NULL};
    if (!sync_fails(rt, want))
        fprintf(stderr, "  (poke at %ld of %ld)\n", at, n);
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    write_past_a_view();
    read_past_a_view(16);    /* x[16] of rows [16, 32): one past the end */
    read_past_a_view(-1100); /* before the start, past the redzone (a read within it is not
                              * caught: only a write there is seen, after the kernel) */
    inside_views();
    poke(PG_FLOAT32, 1000, -1, "before its start");   /* y[-1]: the redzone */
    poke(PG_FLOAT32, 1000, -100, "before its start"); /* past the redzone, in the guard */
    poke(PG_FLOAT32, 1000, 1000 + (1L << 20), "past its end");
    poke(PG_FLOAT64, 1000, 1000 + (1L << 20), "past its end");
    poke(PG_FLOAT64, 1000, -(1L << 20), "before its start");
    CHECK_DONE();
}

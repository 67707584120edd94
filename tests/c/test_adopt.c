/* test_adopt.c: an array adopting another library's host memory (pg_array_adopt_host) reads
 * and writes it in place: the value is the memory's at adoption, kernels on any device see
 * it, values made on a device reach the memory at sync and at free, the memory is never freed
 * by the runtime, and release runs exactly once when the last use is gone — at free, at the
 * runtime's close, or after the work still using it. Bad arguments are refused with nothing
 * adopted. (tests/gpu/run.sh covers pg_array_adopt_device through the Python DLPack tests.) */
#include "kernels_common.h"

enum { N = 4096 };

static int released;
static void release(void *ctx) {
    (void)ctx;
    released++;
}

int main(void) {
    pg_runtime *rt = test_runtime_on("host:2", "round-robin", NULL);
    pg_kernel *add1 = test_kernel(rt, "add1", NULL);
    pg_kernel *scale = test_kernel(rt, "scale", NULL);
    float *mem = malloc(N * sizeof *mem);
    for (int i = 0; i < N; i++)
        mem[i] = (float)i;
    int64_t n = N;
    pg_array *x = NULL;
    REQUIRE_OK(pg_array_adopt_host(rt, PG_FLOAT32, 1, &n, mem, release, mem, &x));
    /* The value is the memory's: a host read and a kernel on a device see it. */
    float v = -1;
    CHECK_OK(pg_array_read(x, 5, 1, &v));
    CHECK(v == 5.0f);
    pg_array *y = test_array(rt, N);
    pg_arg a[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, a, 3));
    CHECK_OK(pg_array_read(y, 7, 1, &v));
    CHECK(v == 8.0f);
    /* A kernel writes x on a device: the memory is not current until a sync writes it back. */
    pg_arg s[] = {pg_arg_array(x), pg_arg_float(2), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(scale, dim1(N / 256), dim1(256), 0, s, 3));
    CHECK_OK(pg_runtime_sync(rt));
    CHECK(mem[9] == 18.0f && mem[N - 1] == 2.0f * (N - 1));
    /* Host writes go to the memory itself. */
    float w = 100;
    CHECK_OK(pg_array_write(x, 3, 1, &w));
    CHECK(mem[3] == 100.0f);
    /* Views of it work, and a write through a view reaches the memory too. */
    pg_array *hi = NULL;
    REQUIRE_OK(pg_array_slice(x, N / 2, N, &hi));
    pg_arg sh[] = {pg_arg_array(hi), pg_arg_float(0.5f), pg_arg_int(N / 2)};
    CHECK_OK(pg_kernel_launch(scale, dim1(N / 512), dim1(256), 0, sh, 3));
    CHECK_OK(pg_runtime_sync(rt));
    CHECK(mem[N / 2] == (float)N / 2 && mem[1] == 2.0f);
    CHECK_OK(pg_array_free(hi));
    /* Freeing the array writes the last value back, then releases the memory once the
     * write-back has run; the runtime never frees it. */
    CHECK_OK(pg_kernel_launch(scale, dim1(N / 256), dim1(256), 0, s, 3));
    CHECK(released == 0);
    CHECK_OK(pg_array_free(x));
    CHECK_OK(pg_runtime_sync(rt));
    CHECK(released == 1);
    CHECK(mem[9] == 36.0f && mem[3] == 200.0f);

    /* Bad arguments: nothing adopted, release not called, the runtime still usable. */
    pg_array *bad = NULL;
    CHECK_MSG(pg_array_adopt_host(rt, PG_FLOAT32, 1, &n, NULL, release, NULL, &bad),
              PG_ERROR_ARGUMENT, "must not be NULL");
    CHECK_MSG(pg_array_adopt_host(rt, PG_FLOAT32, 1, &n, (char *)mem + 1, release, NULL, &bad),
              PG_ERROR_ARGUMENT, "aligned");
    int64_t zero = 0;
    CHECK_MSG(pg_array_adopt_host(rt, PG_FLOAT32, 1, &zero, mem, release, NULL, &bad),
              PG_ERROR_ARGUMENT, "positive");
    CHECK_MSG(pg_array_adopt_device(rt, PG_FLOAT32, 1, &n, mem, 0, release, NULL, &bad),
              PG_ERROR_UNSUPPORTED, "GPU devices");
    CHECK(released == 1);

    /* Closing the runtime writes back and releases what is still adopted. */
    for (int i = 0; i < N; i++)
        mem[i] = 1.0f;
    pg_array *z = NULL;
    REQUIRE_OK(pg_array_adopt_host(rt, PG_FLOAT32, 1, &n, mem, release, NULL, &z));
    pg_arg sz[] = {pg_arg_array(z), pg_arg_float(3), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(scale, dim1(N / 256), dim1(256), 0, sz, 3));
    CHECK_OK(pg_runtime_free(rt));
    CHECK(released == 2);
    CHECK(mem[0] == 3.0f && mem[N - 1] == 3.0f);
    free(mem);
    CHECK_DONE();
}

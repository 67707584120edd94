/* test_prefetch.c: pg_array_prefetch starts copies without waiting, orders them against later
 * writers, and is a harmless hint where there is nothing to copy. Runs on four CPU devices (or
 * PG_TEST_DEVICES). */
#include "kernels_common.h"

#include <stdio.h>

#define N (1 << 20)
#define BYTES ((uint64_t)N * 4)
#define HOSTL 0

/* Slow enough on a CPU device that a copy issued after it is still pending when the host
 * acts next: each element takes `reps` dependent steps. */
static const char *SLOW_SRC =
    "extern \"C\" __global__ void slow_fill(float *y, float v, int n, int reps) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  float t = 0.0f; for (int r = 0; r < reps; r++) t = t * 0.5f + 1.0f;\n"
    "  y[i] = v + (t - t); }\n";

static uint32_t valid(pg_array *a) {
    pg_array_desc d;
    REQUIRE_OK(pg_array_describe(a, &d));
    return d.valid;
}

static uint64_t moved(pg_runtime *rt) {
    pg_stats st;
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    return st.bytes_moved;
}

static int all_equal(pg_array *a, float want) {
    static float buf[N];
    REQUIRE_OK(pg_array_read(a, 0, N, buf));
    for (int i = 0; i < N; i++)
        if (buf[i] != want) {
            fprintf(stderr, "element %d is %g, expected %g\n", i, buf[i], want);
            return 0;
        }
    return 1;
}

int main(void) {
    pg_runtime *rt = test_runtime("host:4", "round-robin", NULL);
    pg_stats st;
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    int ndev = st.ndevices;
    pg_kernel *fill = test_kernel(rt, "fill", "out float *y, float v, int n");
    pg_kernel *slow = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SLOW_SRC, "slow_fill", "out float *y, float v, int n, int reps",
                             NULL, &slow));
    pg_array *a = test_array(rt, N);
    pg_arg fargs[] = {pg_arg_array(a), pg_arg_float(3.0f), pg_arg_int(N)};

    /* A device-made value prefetched to the host: the copy happens once, and the host read
     * afterwards moves nothing more. */
    REQUIRE_OK(pg_kernel_launch(fill, dim1(N / 256), dim1(256), 0, fargs, 3));
    uint64_t before = moved(rt);
    CHECK_OK(pg_array_prefetch(a, PG_HOST));
    CHECK(valid(a) & (1u << HOSTL));
    REQUIRE_OK(pg_runtime_sync(rt));
    CHECK(moved(rt) == before + BYTES);
    CHECK(all_equal(a, 3.0f));
    CHECK(moved(rt) == before + BYTES);

    /* Already there: nothing moves. */
    CHECK_OK(pg_array_prefetch(a, PG_HOST));
    CHECK(moved(rt) == before + BYTES);

    /* To a device: the host value goes there and both stay valid. */
    float ones[64];
    for (int i = 0; i < 64; i++)
        ones[i] = 1.0f;
    REQUIRE_OK(pg_array_write(a, 0, 64, ones)); /* partial: host is now the only copy */
    CHECK(valid(a) == (1u << HOSTL));
    before = moved(rt);
    CHECK_OK(pg_array_prefetch(a, ndev - 1));
    REQUIRE_OK(pg_runtime_sync(rt));
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    CHECK(st.link_bytes[HOSTL][ndev] >= BYTES);
    CHECK(valid(a) == ((1u << HOSTL) | (1u << ndev)));
    CHECK(moved(rt) == before + BYTES);

    /* A prefetch to the host, then at once a host write of the whole array: the write waits
     * for the copy, so the late copy cannot overwrite it. Repeated to give a race its chance. */
    static float fives[N];
    for (int i = 0; i < N; i++)
        fives[i] = 5.0f;
    for (int round = 0; round < 20; round++) {
        pg_arg sargs[] = {pg_arg_array(a), pg_arg_float(2.0f), pg_arg_int(N), pg_arg_int(20)};
        REQUIRE_OK(pg_kernel_launch(slow, dim1(N / 256), dim1(256), 0, sargs, 4));
        CHECK_OK(pg_array_prefetch(a, PG_HOST));
        REQUIRE_OK(pg_array_write(a, 0, N, fives));
        CHECK(all_equal(a, 5.0f));
    }

    /* A prefetch to the host, then a kernel that overwrites the array on a device: the kernel
     * waits for the copy to read the old value; the host ends with the kernel's value. */
    for (int round = 0; round < 20; round++) {
        pg_arg sargs[] = {pg_arg_array(a), pg_arg_float(6.0f), pg_arg_int(N), pg_arg_int(20)};
        REQUIRE_OK(pg_kernel_launch(slow, dim1(N / 256), dim1(256), 0, sargs, 4));
        CHECK_OK(pg_array_prefetch(a, PG_HOST));
        pg_arg gargs[] = {pg_arg_array(a), pg_arg_float(7.0f), pg_arg_int(N)};
        REQUIRE_OK(pg_kernel_launch(fill, dim1(N / 256), dim1(256), 0, gargs, 3));
        CHECK(all_equal(a, 7.0f));
    }

    /* Every prefetch copy is a computation of the DAG and the counters still add up. */
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    CHECK(st.computations == st.kernels + st.host_accesses + st.copies);

    /* While the host holds a write mapping the value is not known yet: a hint that does
     * nothing; the mapping's value is what later readers see. */
    float *p;
    REQUIRE_OK(pg_array_map(a, PG_ACCESS_OUT, (void **)&p));
    before = moved(rt);
    CHECK_OK(pg_array_prefetch(a, 0));
    CHECK(moved(rt) == before);
    for (int i = 0; i < N; i++)
        p[i] = 8.0f;
    REQUIRE_OK(pg_array_unmap(a));
    CHECK_OK(pg_array_prefetch(a, 0));
    REQUIRE_OK(pg_runtime_sync(rt));
    CHECK(valid(a) == ((1u << HOSTL) | (1u << 1)));
    CHECK(all_equal(a, 8.0f));

    /* Bad locations are refused by name and leave the runtime and the array as they were. */
    CHECK_STATUS(pg_array_prefetch(a, ndev), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "location") != NULL);
    CHECK_STATUS(pg_array_prefetch(a, -2), PG_ERROR_ARGUMENT);
    CHECK(all_equal(a, 8.0f));

    /* A freed handle is detected. */
    pg_array *b = test_array(rt, N);
    REQUIRE_OK(pg_array_free(b));
    CHECK_STATUS(pg_array_prefetch(b, PG_HOST), PG_ERROR_STATE);

    CHECK_OK(pg_kernel_free(slow));
    CHECK_OK(pg_kernel_free(fill));
    CHECK_OK(pg_array_free(a));
    CHECK_OK(pg_runtime_free(rt));
    CHECK_DONE();
}

/* test_clock.c: pg_runtime_clock — real time on CPU devices (never backwards), the simulated
 * machine's virtual time on sim: devices: with host time frozen, a chain of kernels and a sync
 * move it by exactly the work's predicted duration, the same in two runtimes. */
#include "kernels_common.h"

#include <stdlib.h>

static uint64_t chain_time(void) {
    pg_runtime *rt = test_runtime_on("sim:h200x1,host_time=0,compute=none", NULL, NULL);
    pg_kernel *k = test_kernel(rt, "add1", NULL);
    pg_array *x = test_array(rt, 1 << 20), *y = test_array(rt, 1 << 20);
    uint64_t t0 = 0, t1 = 0;
    CHECK_OK(pg_runtime_sync(rt));
    CHECK_OK(pg_runtime_clock(rt, &t0));
    for (int i = 0; i < 10; i++) {
        pg_arg a[] = {pg_arg_array(i % 2 ? x : y), pg_arg_array(i % 2 ? y : x),
                      pg_arg_int(1 << 20)};
        CHECK_OK(pg_kernel_launch(k, dim1(4096), dim1(256), 0, a, 3));
    }
    CHECK_OK(pg_runtime_sync(rt));
    CHECK_OK(pg_runtime_clock(rt, &t1));
    CHECK_OK(pg_runtime_free(rt));
    CHECK(t1 > t0);
    return t1 - t0;
}

int main(void) {
    pg_runtime *rt = test_runtime_on("host:1", NULL, NULL);
    uint64_t a = 0, b = 0;
    CHECK_OK(pg_runtime_clock(rt, &a));
    CHECK_OK(pg_runtime_clock(rt, &b));
    CHECK(b >= a);
    CHECK_STATUS(pg_runtime_clock(rt, NULL), PG_ERROR_ARGUMENT);
    CHECK_OK(pg_runtime_free(rt));
    CHECK_STATUS(pg_runtime_clock(rt, &a), PG_ERROR_STATE);
    uint64_t d1 = chain_time(), d2 = chain_time();
    CHECK(d1 == d2); /* virtual: the same work takes the same time, however fast the host */
    /* ten kernels each reading and writing 4 MiB at 4.8 TB/s plus their fixed cost */
    CHECK(d1 > 10 * 1000 && d1 < 10 * 100000);
    CHECK_DONE();
}

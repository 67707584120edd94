/* test_sim_faults.c: running out of host memory anywhere on simulated GPUs (base/inject.h: the
 * N-th allocation of the library fails, for N = 1, 2, ... until a run reaches none): every call
 * that fails says PG_ERROR_OUT_OF_MEMORY with a message, the runtime still closes, and ASan
 * finds nothing left. A program of launches, copies between GPUs, a host read, a recording,
 * with host time frozen (frozen runs keep the vector clocks of sim_observe.c too). */
#include "base/inject.h"
#include "kernels_common.h"

#include <stdio.h>

#define MAX_WALK 20000

static uint64_t walk_n;

/* OK, or out of memory with a message; anything else is a bug. */
static int step(pg_status st, const char *what, int line) {
    if (st == PG_OK)
        return 0;
    if (st != PG_ERROR_OUT_OF_MEMORY || !pg_last_error()[0]) {
        fprintf(stderr, "N=%llu: line %d: %s returned %s: '%s'\n", (unsigned long long)walk_n, line,
                what, pg_status_name(st), pg_last_error());
        pg_check_failures++;
    }
    return 1;
}
#define STEP(call) step((call), #call, __LINE__)

enum { N = 4096 };

static pg_runtime *sequence(void) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "sim:pcie-4gpu,host_time=0";
    o.policy = "round-robin";
    pg_runtime *rt = NULL;
    if (STEP(pg_runtime_new(&o, &rt)))
        return NULL;
    pg_kernel *add1 = NULL, *fill = NULL;
    if (STEP(pg_kernel_new(rt, TEST_SRC, "add1", NULL, NULL, &add1)) ||
        STEP(pg_kernel_new(rt, TEST_SRC, "fill", NULL, NULL, &fill)))
        return rt;
    pg_array *a[4] = {NULL};
    int64_t n = N;
    for (int i = 0; i < 4; i++)
        if (STEP(pg_array_new(rt, PG_FLOAT32, 1, &n, &a[i])))
            return rt;
    for (int i = 0; i < 4; i++) {
        pg_arg f[] = {pg_arg_array(a[i]), pg_arg_float((float)i), pg_arg_int(N)};
        if (STEP(pg_kernel_launch(fill, dim1(N / 256), dim1(256), 0, f, 3)))
            return rt;
    }
    for (int i = 1; i < 4; i++) { /* round-robin: inputs on other GPUs, copied over */
        pg_arg x[] = {pg_arg_array(a[i]), pg_arg_array(a[i - 1]), pg_arg_int(N)};
        if (STEP(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, x, 3)))
            return rt;
    }
    float v;
    if (STEP(pg_array_read(a[3], 0, 1, &v)))
        return rt;
    pg_graph *g = NULL;
    if (STEP(pg_graph_begin(rt)))
        return rt;
    pg_arg x[] = {pg_arg_array(a[0]), pg_arg_array(a[3]), pg_arg_int(N)};
    int bad = STEP(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, x, 3));
    if (STEP(pg_graph_end(rt, &g)) || bad) /* the recording ends either way */
        return rt;
    for (int r = 0; r < 2; r++)
        if (STEP(pg_graph_launch(g)))
            return rt;
    STEP(pg_runtime_sync(rt));
    return rt;
}

int main(void) {
    uint64_t n;
    for (n = 1; n < MAX_WALK; n++) {
        walk_n = n;
        pg__inject_alloc_arm(n);
        pg_runtime *rt = sequence();
        uint64_t counted = pg__inject_alloc_disarm();
        if (counted < n) {
            /* Not reached in the sequence: in the close, or nowhere. */
            pg__inject_alloc_arm(n - counted);
            if (rt)
                STEP(pg_runtime_free(rt));
            if (pg__inject_alloc_disarm() < n - counted)
                break;
            continue;
        }
        if (rt)
            CHECK_OK(pg_runtime_free(rt));
    }
    CHECK(n < MAX_WALK);
    printf("test_sim_faults: %llu allocation points walked\n", (unsigned long long)(n - 1));
    CHECK_DONE();
}

/* test_policy_readers.c: what a device policy sees of a shared input (pg_policy_array.readers):
 * the other kernels reading its value that have not been seen finished, counted up to
 * PG_POLICY_READERS_MAX (a placement then costs the same however many calls read one input),
 * and 0 once they are done. On simulated GPUs, whose kernels finish in virtual time only when
 * the script waits, so the readers stay unfinished until the sync. */
#include "check.h"

static uint32_t last_readers, max_readers;

static int probe_choose(void *state, const pg_policy_view *v) {
    (void)state;
    last_readers = v->arrays[1].readers; /* argument 1: the shared input x */
    if (last_readers > max_readers)
        max_readers = last_readers;
    for (int d = 0; d < v->ndevices; d++)
        if (v->candidates >> d & 1)
            return d;
    return 0;
}

static const char *SRC = "extern \"C\" __global__ void scale(float *y, const float *x, int n) {\n"
                         "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2 * "
                         "x[i]; }\n";

int main(void) {
    pg_device_policy probe = {NULL, probe_choose, NULL};
    REQUIRE_OK(pg_policy_register("readers-probe", &probe));
    pg_options o;
    pg_options_init(&o);
    o.devices = "sim:h200x2-nv18,host_time=0,compute=none";
    o.policy = "readers-probe";
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SRC, "scale", NULL, NULL, &k));
    enum { N = 1024, CALLS = 150 };
    int64_t n = N;
    pg_array *x = NULL, *y = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &x));
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &y));
    pg_arg a[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    /* x written on a device first, so the placements weigh it */
    pg_arg w[] = {pg_arg_array(x), pg_arg_array(y), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(k, (pg_dim3){N / 256, 1, 1}, (pg_dim3){256, 1, 1}, 0, w, 3));
    pg_array *out[CALLS];
    for (int i = 0; i < CALLS; i++) {
        REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &out[i]));
        a[0] = pg_arg_array(out[i]);
        CHECK_OK(pg_kernel_launch(k, (pg_dim3){N / 256, 1, 1}, (pg_dim3){256, 1, 1}, 0, a, 3));
    }
    /* the readers grew with the calls, and stopped being counted at the cap */
    CHECK(max_readers == PG_POLICY_READERS_MAX);
    CHECK(last_readers == PG_POLICY_READERS_MAX);
    CHECK_OK(pg_runtime_sync(rt));
    a[0] = pg_arg_array(y);
    CHECK_OK(pg_kernel_launch(k, (pg_dim3){N / 256, 1, 1}, (pg_dim3){256, 1, 1}, 0, a, 3));
    CHECK(last_readers == 0); /* every reader done: x is no longer shared */
    CHECK_OK(pg_runtime_sync(rt));
    for (int i = 0; i < CALLS; i++)
        CHECK_OK(pg_array_free(out[i]));
    CHECK_OK(pg_array_free(x));
    CHECK_OK(pg_array_free(y));
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_runtime_free(rt));
    CHECK_DONE();
}

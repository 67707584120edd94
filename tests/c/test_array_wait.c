/* test_array_wait.c: pg_array_wait returns once the array's writers finished, on views too,
 * and refuses freed handles; pg_array_device_pointer_synced is GPU-only and says so on CPU
 * devices (tests/gpu/run.sh runs the GPU side through the Python DLPack tests). */
#include "kernels_common.h"

enum { N = 4096 };

int main(void) {
    pg_runtime *rt = test_runtime_on("host:2", NULL, NULL);
    pg_kernel *k = test_kernel(rt, "fill", NULL);
    pg_array *x = test_array(rt, N);
    pg_arg a[] = {pg_arg_array(x), pg_arg_float(3), pg_arg_int(N)};
    for (int i = 0; i < 50; i++)
        CHECK_OK(pg_kernel_launch(k, dim1(N / 256), dim1(256), 0, a, 3));
    CHECK_OK(pg_array_wait(x));
    float v = 0;
    CHECK_OK(pg_array_read(x, 7, 1, &v));
    CHECK(v == 3.0f);
    pg_array *lo = NULL;
    REQUIRE_OK(pg_array_slice(x, 0, N / 2, &lo));
    pg_arg b[] = {pg_arg_array(lo), pg_arg_float(4), pg_arg_int(N / 2)};
    CHECK_OK(pg_kernel_launch(k, dim1(N / 512), dim1(256), 0, b, 3));
    CHECK_OK(pg_array_wait(lo));
    CHECK_OK(pg_array_wait(x));
    void *p = NULL;
    CHECK_MSG(pg_array_device_pointer_synced(x, 0, PG_ACCESS_IN, 1, &p), PG_ERROR_UNSUPPORTED,
              "GPU devices");
    CHECK_STATUS(pg_array_device_pointer_synced(x, 0, PG_ACCESS_IN, 1, NULL), PG_ERROR_ARGUMENT);
    CHECK_OK(pg_array_free(lo));
    CHECK_STATUS(pg_array_wait(lo), PG_ERROR_STATE);
    CHECK_OK(pg_runtime_free(rt));
    CHECK_DONE();
}

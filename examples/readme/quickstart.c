#include "polygpu.h"

#include <stdio.h>

int main(void) {
    const char *src = "extern \"C\" __global__ void square(float *y, const float *x, int n) {\n"
                      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                      "  if (i < n) y[i] = x[i] * x[i]; }\n";
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:4";
    pg_runtime *rt;
    pg_kernel *k;
    pg_array *x, *y;
    int64_t n = 1000;
    float v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = (float)i;
    if (pg_runtime_new(&o, &rt) || pg_kernel_new(rt, src, "square", NULL, NULL, &k) ||
        pg_array_new(rt, PG_FLOAT32, 1, &n, &x) || pg_array_new(rt, PG_FLOAT32, 1, &n, &y) ||
        pg_array_write(x, 0, 1000, v)) {
        fprintf(stderr, "%s\n", pg_last_error());
        return 1;
    }
    pg_dim3 grid = {4, 1, 1}, block = {256, 1, 1};
    pg_arg args[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(1000)};
    if (pg_kernel_launch(k, grid, block, 0, args, 3) || pg_array_read(y, 3, 1, v)) {
        fprintf(stderr, "%s\n", pg_last_error());
        return 1;
    }
    printf("%.1f\n", v[0]);
    return pg_runtime_free(rt) != PG_OK;
}

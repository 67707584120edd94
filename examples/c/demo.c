/* demo.c: the C API end to end — two independent kernels, one that depends on both, a host
 * read; prints the devices used and writes the DAG as DOT. From the top of the checkout, after
 * `make demo`:
 *   cc -std=c11 examples/c/demo.c -Icore -Lbuild -lpolygpu -Wl,-rpath,$PWD/build -o build/demo &&
 *     build/demo build/dag.dot
 * (the argument is where the DAG goes, dag.dot in the current folder without one; the build
 * makes it as build/examples/c/polygpu-demo too; examples/c/CMakeLists.txt builds it
 * against an installed polygpu). */
#include "polygpu.h"

#include <stdio.h>
#include <stdlib.h>

static const char *SRC =
    "extern \"C\" __global__ void square(float *y, const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * x[i]; }\n"
    "extern \"C\" __global__ void diff(float *z, const float *a, const float *b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) z[i] = a[i] - b[i]; }\n";

#define TRY(call)                                                                                  \
    do {                                                                                           \
        if ((call) != PG_OK) {                                                                     \
            fprintf(stderr, "%s failed: %s\n", #call, pg_last_error());                            \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv) {
    const char *dot = argc > 1 ? argv[1] : "dag.dot";
    pg_options o;
    pg_options_init(&o);
    o.devices = "cuda"; /* GPUs if there are any ... */
    pg_runtime *rt;
    if (pg_runtime_new(&o, &rt) != PG_OK) {
        printf("no GPU here: using 4 CPU devices\n");
        o.devices = "host:4"; /* ... else four CPU devices with separate memories */
        TRY(pg_runtime_new(&o, &rt));
    }
    int ndev;
    pg_device_info info[PG_MAX_DEVICES];
    TRY(pg_runtime_devices(rt, info, PG_MAX_DEVICES, &ndev));
    for (int d = 0; d < ndev; d++)
        printf("device %d: %s\n", d, info[d].name);

    const int64_t n = 1 << 20;
    pg_array *x1, *x2, *y1, *y2, *z;
    TRY(pg_array_new(rt, PG_FLOAT32, 1, &n, &x1));
    TRY(pg_array_new(rt, PG_FLOAT32, 1, &n, &x2));
    TRY(pg_array_new(rt, PG_FLOAT32, 1, &n, &y1));
    TRY(pg_array_new(rt, PG_FLOAT32, 1, &n, &y2));
    TRY(pg_array_new(rt, PG_FLOAT32, 1, &n, &z));
    float *h = malloc((size_t)n * sizeof *h);
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)(i % 100);
    TRY(pg_array_write(x1, 0, (uint64_t)n, h));
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)(i % 10);
    TRY(pg_array_write(x2, 0, (uint64_t)n, h));

    pg_kernel *square, *diff;
    TRY(pg_kernel_new(rt, SRC, "square", NULL, NULL, &square));
    TRY(pg_kernel_new(rt, SRC, "diff", NULL, NULL, &diff));
    pg_dim3 grid = {(uint32_t)((n + 255) / 256), 1, 1}, block = {256, 1, 1};
    pg_arg a1[] = {pg_arg_array(y1), pg_arg_array(x1), pg_arg_int(n)};
    pg_arg a2[] = {pg_arg_array(y2), pg_arg_array(x2), pg_arg_int(n)};
    pg_arg a3[] = {pg_arg_array(z), pg_arg_array(y1), pg_arg_array(y2), pg_arg_int(n)};
    TRY(pg_kernel_launch(square, grid, block, 0, a1, 3)); /* independent of ... */
    TRY(pg_kernel_launch(square, grid, block, 0, a2, 3)); /* ... this one */
    TRY(pg_kernel_launch(diff, grid, block, 0, a3, 4));   /* waits for both */

    float r[4];
    TRY(pg_array_read(z, 11, 4, r)); /* blocks only until diff is done */
    printf("z[11..14] = %g %g %g %g (expected 120 140 160 180)\n", r[0], r[1], r[2], r[3]);

    pg_stats st;
    TRY(pg_runtime_stats(rt, &st));
    printf("%llu kernels, %llu copies, %.1f MB moved\n", (unsigned long long)st.kernels,
           (unsigned long long)st.copies, st.bytes_moved / 1e6);
    TRY(pg_dag_export(rt, PG_DAG_DOT, dot));
    printf("DAG written to %s (render: dot -Tpng %s -o dag.png)\n", dot, dot);
    free(h);
    TRY(pg_runtime_free(rt));
    return 0;
}

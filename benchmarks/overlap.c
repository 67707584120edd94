/* overlap.c: 8 independent kernels of ~1 ms each (one warp each, so they fit on a GPU
 * together) submitted back to back: with streams overlapping they finish in about the time of
 * one; on N GPUs the runtime spreads them. Reports T(8 kernels) / T(1 kernel) (ideal 1.0,
 * fully serial 8.0) and where the kernels ran.
 * Usage: overlap [devices] [kernels]   (defaults: PG_DEVICES or cuda, 8) */
#include "bench_stats.h"
#include "polygpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *SRC = "extern \"C\" __global__ void spin(float *y, int iters) {\n"
                         "  float v = threadIdx.x;\n"
                         "  for (int i = 0; i < iters; i++) v = v * 0.9999f + 0.0001f;\n"
                         "  y[threadIdx.x] = v;\n"
                         "}\n";

#define DIE(what)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "%s: %s\n", what, pg_last_error());                                        \
        exit(1);                                                                                   \
    } while (0)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

enum { MAXK = 64, RUNS = 7 };
static pg_kernel *spin;
static pg_array *ys[MAXK];
static pg_runtime *rt;

/* Median wall time (ms) of launching k spins on separate arrays and waiting for all. */
static double timed(int k, int iters) {
    double t[RUNS];
    pg_dim3 g = {1, 1, 1}, b = {32, 1, 1};
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_ms();
        for (int i = 0; i < k; i++) {
            pg_arg args[] = {pg_arg_array(ys[i]), pg_arg_int(iters)};
            if (pg_kernel_launch(spin, g, b, 0, args, 2))
                DIE("launch");
        }
        if (pg_runtime_sync(rt))
            DIE("sync");
        t[r] = now_ms() - t0;
    }
    qsort(t, RUNS, sizeof *t, bench_cmp);
    return t[RUNS / 2];
}

int main(int argc, char **argv) {
    const char *devices = argc > 1 ? argv[1] : getenv("PG_DEVICES") ? getenv("PG_DEVICES") : "cuda";
    int k = argc > 2 ? atoi(argv[2]) : 8;
    if (k < 1 || k > MAXK) {
        fprintf(stderr, "kernels must be 1..%d\n", MAXK);
        return 2;
    }
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    if (pg_runtime_new(&o, &rt))
        DIE("runtime");
    if (pg_kernel_new(rt, SRC, "spin", "out float *y, int iters", NULL, &spin))
        DIE("kernel");
    int64_t n = 32;
    for (int i = 0; i < k; i++)
        if (pg_array_new(rt, PG_FLOAT32, 1, &n, &ys[i]))
            DIE("array");
    int iters = 1024;
    (void)timed(k, iters); /* warm-up: module load, streams, buffers on every device */
    while (timed(1, iters) < 1.0 && iters < (1 << 30))
        iters *= 2;
    double one = timed(1, iters), all = timed(k, iters);
    /* Where the last k kernels ran. */
    pg_dag *dag;
    size_t nv = 0;
    if (pg_dag_snapshot(rt, &dag) || pg_dag_vertex_count(dag, &nv))
        DIE("dag");
    int ids[MAXK * 4], nk = 0;
    for (size_t i = 0; i < nv; i++) {
        pg_dag_vertex_info v;
        if (!pg_dag_vertex(dag, i, &v) && v.kind == PG_DAG_KERNEL)
            ids[nk++ % (MAXK * 4)] = v.device * 1000 + v.stream;
    }
    pg_dag_free(dag);
    int ndev = 0;
    pg_runtime_devices(rt, NULL, 0, &ndev);
    int per_dev[PG_MAX_DEVICES] = {0}, streams = 0;
    int seen[MAXK];
    for (int i = nk - k; i < nk; i++) {
        int v = ids[i % (MAXK * 4)], dup = 0;
        per_dev[v / 1000]++;
        for (int j = 0; j < streams; j++)
            dup |= seen[j] == v;
        if (!dup)
            seen[streams++] = v;
    }
    printf("devices=%s kernels=%d iters=%d: one kernel %.3f ms, %d kernels %.3f ms, "
           "ratio %.2f (1.0 = all overlapped, %d.0 = serial); %d streams; per device:",
           devices, k, iters, one, k, all, all / one, k, streams);
    for (int d = 0; d < ndev && d < PG_MAX_DEVICES; d++)
        printf(" %d", per_dev[d]);
    printf("\n");
    return pg_runtime_free(rt) == PG_OK ? 0 : 1;
}

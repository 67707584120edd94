/* ranks.c: the same program on one process or on several (MPI ranks), same results.
 *
 *   ./polygpu-ranks                 one process
 *   mpirun --oversubscribe -np 3 ./polygpu-ranks    three ranks: each runs the whole program
 *   (--oversubscribe: more ranks than cores; as root Open MPI also wants --allow-run-as-root)
 *
 * x is cut into views spread over the ranks in blocks; each launch runs on the rank owning the
 * rows it writes; the second kernel reads all of x, and polygpu sends each rank the rows it
 * lacks; reading y on the host gives every rank the whole result. Devices: PG_DEVICES, else
 * this rank's GPUs, else one CPU device. */
#include <polygpu.h>

#include <stdio.h>
#include <stdlib.h>

#define N (1 << 14)
#define PARTS 6

static const char *SRC =
    "extern \"C\" __global__ void ramp(float *x, int lo, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = (float)((lo + i) % 97); }\n"
    "extern \"C\" __global__ void neighbours(float *y, const float *x, int lo, int n, int total) "
    "{\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = x[lo + i] + 2.0f * x[(lo + i + 1) % total]; }\n";

static void check(pg_status st, const char *what) {
    if (st != PG_OK) {
        fprintf(stderr, "%s: %s\n", what, pg_last_error());
        exit(1);
    }
}

int main(void) {
    pg_options o;
    pg_options_init(&o);
    pg_runtime *rt;
    check(pg_runtime_new(&o, &rt), "runtime");
    int rank, nranks;
    check(pg_runtime_ranks(rt, &rank, &nranks), "ranks");
    pg_kernel *ramp, *neighbours;
    check(pg_kernel_new(rt, SRC, "ramp", NULL, NULL, &ramp), "ramp");
    check(pg_kernel_new(rt, SRC, "neighbours", NULL, NULL, &neighbours), "neighbours");
    int64_t n = N;
    pg_array *x, *y, *xs[PARTS], *ys[PARTS];
    check(pg_array_new(rt, PG_FLOAT32, 1, &n, &x), "x");
    check(pg_array_new(rt, PG_FLOAT32, 1, &n, &y), "y");
    for (int p = 0; p < PARTS; p++) {
        int lo = N * p / PARTS, hi = N * (p + 1) / PARTS, rows = hi - lo;
        check(pg_array_slice(x, lo, hi, &xs[p]), "slice");
        check(pg_array_slice(y, lo, hi, &ys[p]), "slice");
        /* block distribution over the ranks; one rank: everything on rank 0 */
        check(pg_array_owner_set(xs[p], pg_rank_block_owner(p, PARTS, nranks)), "owner");
        check(pg_array_owner_set(ys[p], pg_rank_block_owner(p, PARTS, nranks)), "owner");
        pg_dim3 grid = {(unsigned)(rows + 255) / 256, 1, 1}, block = {256, 1, 1};
        pg_arg a[] = {pg_arg_array(xs[p]), pg_arg_int(lo), pg_arg_int(rows)};
        check(pg_kernel_launch(ramp, grid, block, 0, a, 3), "ramp"); /* on xs[p]'s owner */
    }
    for (int p = 0; p < PARTS; p++) { /* each reads its rows of x and the next one */
        int lo = N * p / PARTS, rows = N * (p + 1) / PARTS - lo;
        pg_dim3 grid = {(unsigned)(rows + 255) / 256, 1, 1}, block = {256, 1, 1};
        pg_arg a[] = {pg_arg_array(ys[p]), pg_arg_array(x), pg_arg_int(lo), pg_arg_int(rows),
                      pg_arg_int(N)};
        check(pg_kernel_launch(neighbours, grid, block, 0, a, 5), "neighbours");
    }
    static float v[N];
    check(pg_array_read(y, 0, N, v), "read"); /* every rank gets the whole result */
    double sum = 0;
    for (int i = 0; i < N; i++) {
        float want = (float)(i % 97) + 2.0f * (float)((i + 1) % N % 97);
        if (v[i] != want) {
            fprintf(stderr, "rank %d: y[%d] = %g, want %g\n", rank, i, v[i], want);
            return 1;
        }
        sum += v[i];
    }
    pg_stats s;
    check(pg_runtime_stats(rt, &s), "stats");
    if (rank == 0)
        printf("%d rank(s): checksum %.1f; rank 0 sent %llu and received %llu messages\n", nranks,
               sum, (unsigned long long)s.rank_messages_sent,
               (unsigned long long)s.rank_messages_received);
    for (int p = 0; p < PARTS; p++) {
        pg_array_free(xs[p]);
        pg_array_free(ys[p]);
    }
    pg_array_free(x);
    pg_array_free(y);
    pg_kernel_free(ramp);
    pg_kernel_free(neighbours);
    check(pg_runtime_free(rt), "close");
    return 0;
}

/* proact_runtime.c: PROACT's microbenchmark through polygpu (issue "Arrays in pieces", part 2):
 * a producer kernel writes `MiB` of floats that the host (gpus=1) or a second GPU (gpus=2)
 * needs, its compute time calibrated to the copy time, so the ideal overlap is 2x. Each
 * measurement is launch + pg_array_prefetch to the consumer + pg_runtime_sync, median of `runs`:
 *   bulk      the kernel declared plainly ("out float *y"): the copy starts after it
 *   chunked   declared "out(chunks=blocks) float *y": the runtime copies chunks as blocks finish,
 *             the chunk size its own (per link), then each size of the sweep (option chunk_bytes)
 *   elided    both kernels with elide_copies=1: the producer alone, without and with the
 *             epilogue (its own cost), i.e. the infinite-bandwidth bound
 * Copy time = bulk - producer alone. Prints one JSON object per line (config, ms, and for the
 * chunked runs speedup over bulk and the fraction of the copy hidden,
 * 1 - (T - T_elided) / T_copy). Usage: proact_runtime [gpus=1|2] [MiB=256] [runs=5] [sweep=1];
 * PG_BENCH_DEVICES=host:N runs it on CPU devices (a smoke test, not a measurement). */
#include "core/polygpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *SRC =
    "extern \"C\" __global__ void produce(float *y, long long n, int reps) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  float v = (float)(i & 1023);\n"
    "  for (int r = 0; r < reps; r++) v = v * 0.999f + 0.5f;\n"
    "  y[i] = v; }\n";

#define CK(x)                                                                                      \
    do {                                                                                           \
        pg_status s_ = (x);                                                                        \
        if (s_ != PG_OK) {                                                                         \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, pg_last_error());           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int gpus = 1, runs = 5;
static long long n;
enum { T = 256 };

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct bench {
    pg_runtime *rt;
    pg_kernel *k;
    pg_array *y;
} bench;

static const char *trace_path;

static bench open_bench(int chunked, const char *chunk_bytes, int elide) {
    bench b;
    pg_options o;
    pg_options_init(&o);
    o.trace = trace_path;
    const char *env = getenv("PG_BENCH_DEVICES"); /* host:1 / host:2: a CPU smoke run */
    o.devices = env && *env ? env : gpus == 2 ? "cuda:0,1" : "cuda:0";
    o.policy = "round-robin";
    o.split = "off"; /* it measures early copies of one launch, not a launch over both GPUs */
    if (chunk_bytes)
        CK(pg_options_set(&o, "chunk_bytes", chunk_bytes));
    if (elide)
        CK(pg_options_set(&o, "elide_copies", "1"));
    CK(pg_runtime_new(&o, &b.rt));
    CK(pg_kernel_new(b.rt, SRC, "produce",
                     chunked ? "out(chunks=blocks) float *y, long long n, int reps"
                             : "out float *y, long long n, int reps",
                     NULL, &b.k));
    CK(pg_array_new(b.rt, PG_FLOAT32, 1, (int64_t[]){n}, &b.y));
    return b;
}

/* One producer launch, and (copy) the prefetch of its output to the consumer: the host, or the
 * GPU the producer did not run on. */
static double once(bench *b, int reps, int copy) {
    pg_dim3 grid = {(uint32_t)((n + T - 1) / T), 1, 1}, block = {T, 1, 1};
    pg_arg a[] = {pg_arg_array(b->y), pg_arg_int(n), pg_arg_int(reps)};
    CK(pg_runtime_sync(b->rt));
    double t0 = now_ms();
    CK(pg_kernel_launch(b->k, grid, block, 0, a, 3));
    if (copy) {
        int dst = PG_HOST;
        if (gpus == 2) {
            pg_array_desc d;
            CK(pg_array_describe(b->y, &d));
            dst = (d.valid & (1u << 1)) ? 1 : 0; /* location 1 is GPU 0 */
        }
        CK(pg_array_prefetch(b->y, dst));
    }
    CK(pg_runtime_sync(b->rt));
    return now_ms() - t0;
}

static double median(bench *b, int reps, int copy) {
    double t[64];
    once(b, reps, copy); /* warm-up: buffers, the kernel's load */
    for (int i = 0; i < runs; i++)
        t[i] = once(b, reps, copy);
    qsort(t, (size_t)runs, sizeof *t, cmp);
    return t[runs / 2];
}

static void close_bench(bench *b) {
    CK(pg_runtime_free(b->rt));
}

int main(int argc, char **argv) {
    int mib = 256, sweep = 1;
    if (argc > 1)
        gpus = atoi(argv[1]);
    if (argc > 2)
        mib = atoi(argv[2]);
    if (argc > 3)
        runs = atoi(argv[3]);
    if (argc > 4)
        sweep = atoi(argv[4]);
    if (runs < 1 || runs > 64 || (gpus != 1 && gpus != 2) || mib < 1) {
        fprintf(stderr, "usage: proact_runtime [gpus=1|2] [MiB=256] [runs=5] [sweep=1]\n");
        return 2;
    }
    n = (long long)mib * 1024 * 1024 / 4;
    /* Calibrate: the producer's time equal to the copy's. */
    bench bulk = open_bench(0, NULL, 0);
    int reps = 64;
    double tk = median(&bulk, reps, 0), tb = median(&bulk, reps, 1), tc = tb - tk;
    for (int i = 0; i < 3; i++) {
        reps = (int)(reps * tc / tk + 0.5);
        if (reps < 1)
            reps = 1;
        tk = median(&bulk, reps, 0);
        tb = median(&bulk, reps, 1);
        tc = tb - tk;
    }
    printf("{\"gpus\": %d, \"MiB\": %d, \"reps\": %d, \"runs\": %d}\n", gpus, mib, reps, runs);
    printf("{\"config\": \"bulk\", \"ms\": %.4f, \"producer_ms\": %.4f, \"copy_ms\": %.4f}\n", tb,
           tk, tc);
    close_bench(&bulk);
    bench e0 = open_bench(0, NULL, 1), e1 = open_bench(1, NULL, 1);
    double te0 = median(&e0, reps, 1), te1 = median(&e1, reps, 1);
    close_bench(&e0);
    close_bench(&e1);
    printf("{\"config\": \"elided\", \"plain_ms\": %.4f, \"epilogue_ms\": %.4f, "
           "\"epilogue_slowdown\": %.4f}\n",
           te0, te1, te1 / te0);
    fflush(stdout);
    const char *sizes[] = {NULL,  "4K",  "16K", "64K", "256K", "1M",   "2M",  "4M",
                           "8M",  "16M", "32M", "64M", "128M", "256M", "1G"};
    int nsizes = sweep ? (int)(sizeof sizes / sizeof *sizes) : 1;
    for (int i = 0; i < nsizes; i++) {
        if (sizes[i] && (unsigned long long)strtoull(sizes[i], NULL, 10) * 1024 > 0 &&
            strchr(sizes[i], 'G') && mib < 1024)
            continue;
        bench c = open_bench(1, sizes[i], 0);
        double t = median(&c, reps, 1);
        pg_stats st;
        CK(pg_runtime_stats(c.rt, &st));
        /* The values the consumer got: every 4097th element, as the kernel computes it. */
        int bad = 0;
        for (long long j = 0; j < n && !bad; j += 4097) {
            float v = (float)(j & 1023), got = 0;
            for (int r = 0; r < reps; r++)
                v = v * 0.999f + 0.5f;
            CK(pg_array_read(c.y, (uint64_t)j, 1, &got));
            /* The GPU fuses the multiply-add: a few ulps from the host's loop. */
            bad = fabsf(got - v) > 1e-4f * fabsf(v) + 1e-6f;
            if (bad)
                fprintf(stderr, "chunk_bytes %s: element %lld is %g, expected %g\n",
                        sizes[i] ? sizes[i] : "auto", j, got, v);
        }
        printf("{\"config\": \"chunked\", \"chunk_bytes\": \"%s\", \"ms\": %.4f, \"speedup\": %.4f, "
               "\"hidden\": %.4f, \"copies_per_run\": %.1f, \"values\": \"%s\"}\n",
               sizes[i] ? sizes[i] : "auto", t, tb / t, 1 - (t - te1) / tc,
               (double)st.copies / (runs + 1), bad ? "WRONG" : "ok");
        close_bench(&c);
        if (bad)
            return 1;
        fflush(stdout);
    }
    /* With PG_BENCH_TRACE=path: one chunked run more, traced (GPUs time their work only
     * then), and from its DAG when the producer ran and when each chunk copy started. */
    trace_path = getenv("PG_BENCH_TRACE");
    if (trace_path && *trace_path) {
        bench c = open_bench(1, NULL, 0);
        once(&c, reps, 1);
        once(&c, reps, 1);
        pg_dag *d = NULL;
        CK(pg_dag_snapshot(c.rt, &d));
        size_t nv = 0;
        CK(pg_dag_vertex_count(d, &nv));
        uint64_t ks = 0, ke = 0, first = 0, last = 0;
        int parts = 0, before = 0;
        for (size_t i = 0; i < nv; i++) {
            pg_dag_vertex_info v;
            CK(pg_dag_vertex(d, i, &v));
            if (v.kind == PG_DAG_KERNEL) { /* the last run's producer */
                ks = v.start_ns;
                ke = v.end_ns;
                parts = before = 0;
                first = last = 0;
            } else if (v.kind == PG_DAG_COPY && strstr(v.name, " chunk ")) {
                parts++;
                before += v.start_ns < ke;
                if (!first)
                    first = v.start_ns;
                last = v.end_ns;
            }
        }
        pg_dag_free(d);
        printf("{\"config\": \"trace\", \"producer_start_ms\": 0, \"producer_end_ms\": %.4f, "
               "\"first_chunk_copy_start_ms\": %.4f, \"last_chunk_copy_end_ms\": %.4f, "
               "\"chunk_copies\": %d, \"started_before_producer_end\": %d}\n",
               (ke - ks) / 1e6, ((double)first - (double)ks) / 1e6,
               ((double)last - (double)ks) / 1e6, parts, before);
        close_bench(&c);
    }
    return 0;
}

/* test_chunks.c: chunked outputs (out(chunks=blocks) in a signature; core/chunks.c). The
 * signature form and its errors; a copy of a chunked output to another device or the host goes
 * as parts, each after its chunks' blocks are done, and the first starts before the producer
 * ends (CPU devices time every operation); results are right for peer copies, host reads,
 * views, recordings and chunk sizes from 1 block to the whole array; a faulting producer never
 * leaves a copy waiting; without the declaration nothing changes. */
#include "kernels_common.h"

#include <stdio.h>
#include <stdlib.h>

/* Each thread computes a little (so the producer runs long enough for copies to overlap it)
 * and writes its one element: block b writes elements [b * blockDim, (b + 1) * blockDim). */
static const char *SRC =
    "extern \"C\" __global__ void produce(float *y, int n, int reps) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  float v = (float)i; for (int r = 0; r < reps; r++) v = v * 0.5f + (float)i * 0.5f;\n"
    "  y[i] = v + 1.0f; }\n"
    "extern \"C\" __global__ void produce4(float *y, int n, int reps) {\n"
    "  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 4;\n"
    "  for (int j = 0; j < 4; j++) if (base + j < n) {\n"
    "    float v = (float)(base + j); for (int r = 0; r < reps; r++) v = v * 0.5f + (float)(base + "
    "j) * 0.5f;\n"
    "    y[base + j] = v + 1.0f; } }\n"
    "extern \"C\" __global__ void twice(float *z, const float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) z[i] = 2.0f * y[i]; }\n"
    "extern \"C\" __global__ void twice_with(float *z, const float *y, const float *w, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) z[i] = 2.0f * y[i] + w[i]; }\n"
    "extern \"C\" __global__ void faulty(float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  if (blockIdx.x == 3 && threadIdx.x == 0) __trap();\n"
    "  y[i] = 1.0f; }\n";

#define SIG_PRODUCE "out(chunks=blocks) float *y, int n, int reps"

enum { N = 64 * 1024, T = 128 };

static pg_runtime *rt_with(const char *devices, const char *chunk_bytes, const char *policy) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.policy = policy;
    o.split = "off"; /* early copies of whole launches (a split launch's parts are not counted) */
    if (chunk_bytes)
        REQUIRE_OK(pg_options_set(&o, "chunk_bytes", chunk_bytes));
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

static pg_kernel *kern(pg_runtime *rt, const char *name, const char *sig) {
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SRC, name, sig, NULL, &k));
    return k;
}

static pg_array *arr(pg_runtime *rt, int64_t n) {
    pg_array *a = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &a));
    return a;
}

static void produce(pg_kernel *k, pg_array *y, int n, int reps) {
    pg_arg a[] = {pg_arg_array(y), pg_arg_int(n), pg_arg_int(reps)};
    CHECK_OK(pg_kernel_launch(k, dim1((uint32_t)((n + T - 1) / T)), dim1(T), 0, a, 3));
}

static int check_values(pg_array *y, int n, float factor) {
    float *h = malloc((size_t)n * sizeof *h);
    if (!h)
        exit(1);
    CHECK_OK(pg_array_read(y, 0, n, h));
    int bad = 0;
    for (int i = 0; i < n && !bad; i++)
        if (h[i] != factor * ((float)i + 1.0f)) {
            fprintf(stderr, "element %d: %g, expected %g\n", i, h[i], factor * ((float)i + 1.0f));
            bad = 1;
        }
    free(h);
    return !bad;
}

typedef struct copies_seen {
    int parts;      /* copy vertices named "... chunk i/n" */
    uint64_t bytes; /* their bytes */
    int before_end; /* parts that started before their producer ended */
    int whole;      /* copies of a whole array */
} copies_seen;

/* The copies of the DAG, and how many parts started while kernel `producer` still ran. */
static copies_seen seen(pg_runtime *rt, const char *producer) {
    copies_seen c = {0};
    pg_dag *d = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &d));
    size_t n = 0;
    REQUIRE_OK(pg_dag_vertex_count(d, &n));
    uint64_t pend = 0;
    for (size_t i = 0; i < n; i++) {
        pg_dag_vertex_info v;
        REQUIRE_OK(pg_dag_vertex(d, i, &v));
        if (v.kind == PG_DAG_KERNEL && !strcmp(v.name, producer))
            pend = v.end_ns;
        if (v.kind != PG_DAG_COPY)
            continue;
        if (strstr(v.name, " chunk ")) {
            c.parts++;
            c.bytes += v.bytes;
            c.before_end += pend && v.start_ns && v.start_ns < pend;
        } else {
            c.whole++;
        }
    }
    pg_dag_free(d);
    return c;
}

static void test_signature(void) {
    pg_runtime *rt = rt_with("host:1", NULL, NULL);
    pg_kernel *k = kern(rt, "produce", SIG_PRODUCE);
    pg_param_info p[3];
    int n = 0;
    CHECK_OK(pg_kernel_params(k, p, 3, &n));
    CHECK(n == 3 && p[0].chunk_per_thread == 1 && p[0].access == PG_ACCESS_OUT &&
          p[1].chunk_per_thread == 0);
    k = kern(rt, "produce4", "out( chunks = blocks*4 ) float *y, int n, int reps");
    CHECK_OK(pg_kernel_params(k, p, 3, &n));
    CHECK(p[0].chunk_per_thread == 4);
    k = kern(rt, "produce", "inout(chunks=blocks) float *y, int n, int reps");
    CHECK_OK(pg_kernel_params(k, p, 3, &n));
    CHECK(p[0].chunk_per_thread == 1 && p[0].access == PG_ACCESS_INOUT);
    /* Without the declaration: 0. */
    k = kern(rt, "produce", "out float *y, int n, int reps");
    CHECK_OK(pg_kernel_params(k, p, 3, &n));
    CHECK(p[0].chunk_per_thread == 0);
    const char *bad[] = {"out(chunks=rows) float *y, int n, int reps",
                         "out(chunks=blocks*0) float *y, int n, int reps",
                         "out(chunks=blocks*x) float *y, int n, int reps",
                         "out(chunks=blocks float *y, int n, int reps",
                         "out(chunks=blocks, halo=1) float *y, int n, int reps",
                         "out float *y, out(chunks=blocks) int n, int reps",
                         "out(rows=blocks*0) float *y, int n, int reps",
                         "out(chunks=blocks, rows=blocks) float *y, int n, int reps",
                         "in(halo=2) const float *y, int n, int reps",
                         "out(chunks=blocks,) float *y, int n, int reps"};
    const char *says[] = {
        "chunks=blocks", "chunks=blocks", "chunks=blocks",  "not closed",      "inputs only",
        "pointers only", "rows=blocks*K", "one of chunks=", "before its halo", "empty option"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pg_kernel *kk = NULL;
        CHECK(pg_kernel_new(rt, SRC, "produce", bad[i], NULL, &kk) == PG_ERROR_ARGUMENT);
        CHECK(strstr(pg_last_error(), says[i]) != NULL);
    }
    /* The runtime is still usable. */
    pg_array *y = arr(rt, N);
    produce(kern(rt, "produce", SIG_PRODUCE), y, N, 0);
    CHECK(check_values(y, N, 1.0f));
    CHECK(pg_options_set(&(pg_options){0}, "chunk_bytes", "0") == PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "chunk_bytes") != NULL);
    CHECK_OK(pg_runtime_free(rt));
}

/* An array four times y's size, valid on the host and on device dev only: a consumer reading
 * it and y goes to dev, since min-transfer-size then moves y there rather than it. Made before
 * the producer starts, so the consumer is issued while the producer runs. */
static pg_array *anchor(pg_runtime *rt, int dev) {
    pg_array *w = arr(rt, 4 * N);
    float *zeros = calloc(4 * N, sizeof *zeros);
    CHECK_OK(pg_array_write(w, 0, 4 * N, zeros)); /* written: valid on the host, then there */
    free(zeros);
    CHECK_OK(pg_array_prefetch(w, dev));
    CHECK_OK(pg_runtime_sync(rt));
    return w;
}

static void consume_with(pg_runtime *rt, pg_array *z, pg_array *y, pg_array *w) {
    pg_kernel *t = kern(rt, "twice_with", NULL);
    pg_arg a[] = {pg_arg_array(z), pg_arg_array(y), pg_arg_array(w), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(t, dim1(N / T), dim1(T), 0, a, 4));
    CHECK_OK(pg_array_free(w));
}

/* Producer on device 0, consumer on device 1, and a host read. */
static void test_peer_and_host(const char *chunk_bytes, int expect_parts_min) {
    pg_runtime *rt = rt_with("host:2", chunk_bytes, "min-transfer-size");
    pg_kernel *p = kern(rt, "produce", SIG_PRODUCE);
    kern(rt, "twice_with", NULL); /* compiled before, not while the producer runs */
    pg_array *y = arr(rt, N), *z = arr(rt, N), *w = anchor(rt, 1);
    produce(p, y, N, 2000);
    consume_with(rt, z, y, w);
    CHECK(check_values(z, N, 2.0f));
    CHECK(check_values(y, N, 1.0f));
    CHECK_OK(pg_runtime_sync(rt));
    copies_seen c = seen(rt, "produce");
    if (c.parts < expect_parts_min)
        fprintf(stderr, "chunk_bytes %s: %d parts, expected at least %d\n",
                chunk_bytes ? chunk_bytes : "auto", c.parts, expect_parts_min);
    CHECK(c.parts >= expect_parts_min);
    /* y went to device 1 in parts; z to the host whole (twice is not chunked); y's host copy
     * came from one of y's current copies. */
    CHECK(c.whole >= 1);
    CHECK(c.bytes % ((uint64_t)N * 4) == 0 && c.bytes >= (uint64_t)N * 4);
    CHECK_OK(pg_runtime_free(rt));
}

/* A host read right after the launch: D2H in parts overlapping the producer. */
static void test_overlap(void) {
    pg_runtime *rt = rt_with("host:1", "32K", NULL);
    pg_kernel *p = kern(rt, "produce", SIG_PRODUCE);
    pg_array *y = arr(rt, N);
    produce(p, y, N, 20000);
    CHECK_OK(pg_array_prefetch(y, PG_HOST));
    CHECK(check_values(y, N, 1.0f));
    copies_seen c = seen(rt, "produce");
    CHECK(c.parts == N * 4 / (32 * 1024));
    CHECK(c.before_end >= 1); /* the trace shows a chunk copy starting before the producer ends */
    CHECK_OK(pg_runtime_free(rt));
}

/* K elements per thread, a view as the chunked argument, a recording. */
static void test_forms(void) {
    pg_runtime *rt = rt_with("host:2", "8K", "min-transfer-size");
    pg_kernel *p4 = kern(rt, "produce4", "out(chunks=blocks*4) float *y, int n, int reps");
    pg_kernel *t = kern(rt, "twice", NULL);
    kern(rt, "twice_with", NULL);
    pg_array *y = arr(rt, N), *z = arr(rt, N), *w = anchor(rt, 1);
    pg_arg a[] = {pg_arg_array(y), pg_arg_int(N), pg_arg_int(2000)};
    CHECK_OK(pg_kernel_launch(p4, dim1(N / (4 * T)), dim1(T), 0, a, 3));
    consume_with(rt, z, y, w);
    CHECK(check_values(z, N, 2.0f));
    CHECK(seen(rt, "produce4").parts >= 2);

    /* A view: the second half of v, produced chunked, read on the host. */
    pg_kernel *p = kern(rt, "produce", SIG_PRODUCE);
    pg_array *v = arr(rt, 2 * N), *half = NULL;
    CHECK_OK(pg_array_slice(v, N, 2 * N, &half));
    produce(p, half, N, 10);
    CHECK(check_values(half, N, 1.0f));
    float zero = -1;
    CHECK_OK(pg_array_read(v, 5, 1, &zero));
    CHECK(zero == 0.0f);
    CHECK_OK(pg_array_free(half));

    /* Recorded and replayed (replays stay eager for such kernels): same values. */
    pg_array *r = arr(rt, N), *r2 = arr(rt, N);
    pg_graph *g = NULL;
    CHECK_OK(pg_graph_begin(rt));
    produce(p, r, N, 10);
    pg_arg c2[] = {pg_arg_array(r2), pg_arg_array(r), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(t, dim1(N / T), dim1(T), 0, c2, 3));
    CHECK_OK(pg_graph_end(rt, &g));
    for (int i = 0; i < 3; i++) {
        CHECK_OK(pg_graph_launch(g));
        CHECK(check_values(r2, N, 2.0f));
    }
    CHECK_OK(pg_graph_free(g));
    CHECK_OK(pg_runtime_free(rt));
}

/* A producer that faults in one block: the copies waiting on its chunks go on (the flags are
 * raised for a failed launch), and the consumer reports the failure instead of hanging. */
static void test_fault(void) {
    pg_runtime *rt = rt_with("host:2", "4K", "min-transfer-size");
    pg_kernel *f = kern(rt, "faulty", "out(chunks=blocks) float *y, int n");
    pg_kernel *t = kern(rt, "twice_with", NULL);
    pg_array *y = arr(rt, N), *z = arr(rt, N), *w = anchor(rt, 1);
    pg_arg a[] = {pg_arg_array(y), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(f, dim1(N / T), dim1(T), 0, a, 2));
    pg_arg b[] = {pg_arg_array(z), pg_arg_array(y), pg_arg_array(w), pg_arg_int(N)};
    pg_status st = pg_kernel_launch(t, dim1(N / T), dim1(T), 0, b, 4);
    float v = 0;
    if (st == PG_OK)
        st = pg_array_read(z, 0, 1, &v);
    CHECK(st == PG_ERROR_DEVICE);
    CHECK(seen(rt, "faulty").parts >= 1 || st == PG_ERROR_DEVICE);
    (void)pg_runtime_sync(rt);
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    test_signature();
    test_peer_and_host(NULL, 1);
    test_peer_and_host("16K", N * 4 / (16 * 1024));
    test_peer_and_host("1", N / T); /* one block per part */
    test_peer_and_host("1G", 1);    /* one part */
    test_overlap();
    test_forms();
    test_fault();
    CHECK_DONE();
}

/* test_kernel_corpus.c: the kernels of tests/kernels/ (shared memory, barriers, warp collectives,
 * atomics, vector types) run through the public API on host:1 and host:4, or on the devices
 * PG_TEST_DEVICES names (the GPU script: cuda), each result checked against a plain C reference
 * computed in double. Floating-point tolerances are written next to each check; u = 2^-24 is the
 * unit roundoff of float. */
#include "kernel_file.h"
#include "kernels_common.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define U 0x1p-24 /* unit roundoff of float */

typedef struct kdef {
    const char *file, *name;
} kdef;

enum {
    K_REDUCE_TREE,
    K_REDUCE_WARP,
    K_SCAN_BLOCKS,
    K_SCAN_SUMS,
    K_SCAN_ADD,
    K_MATMUL,
    K_HISTOGRAM,
    K_SOFTMAX,
    K_TRANSPOSE,
    K_DOT,
    K_STENCIL,
    K_COMPACT,
    K_VOTES,
    K_LAST_BLOCK,
    K_VECTORS,
    NK
};

static const kdef defs[NK] = {
    [K_REDUCE_TREE] = {"reduce_tree.cu", "reduce_tree<float>"},
    [K_REDUCE_WARP] = {"reduce_warp.cu", "reduce_warp"},
    [K_SCAN_BLOCKS] = {"scan.cu", "scan_blocks"},
    [K_SCAN_SUMS] = {"scan.cu", "scan_sums"},
    [K_SCAN_ADD] = {"scan.cu", "scan_add"},
    [K_MATMUL] = {"matmul_tiled.cu", "matmul_tiled"},
    [K_HISTOGRAM] = {"histogram.cu", "histogram"},
    [K_SOFTMAX] = {"softmax.cu", "softmax_rows"},
    [K_TRANSPOSE] = {"transpose.cu", "transpose"},
    [K_DOT] = {"dot.cu", "dot"},
    [K_STENCIL] = {"stencil.cu", "stencil_1d"},
    [K_COMPACT] = {"compact.cu", "compact"},
    [K_VOTES] = {"votes.cu", "votes"},
    [K_LAST_BLOCK] = {"last_block.cu", "sum_last_block"},
    [K_VECTORS] = {"vectors.cu", "normalize4"},
};

static char *sources[NK];

/* ------------------------------------------------------------------ setup */

/* Kernels are built by a few threads at once: a cold cache means one host compile each. */
typedef struct builder {
    pg_runtime *rt;
    pg_kernel **k;
    atomic_int next;
    atomic_int failed;
} builder;

static void *build_some(void *arg) {
    builder *b = arg;
    for (int i; (i = atomic_fetch_add(&b->next, 1)) < NK;) {
        if (pg_kernel_new(b->rt, sources[i], defs[i].name, NULL, NULL, &b->k[i]) != PG_OK) {
            fprintf(stderr, "kernel %s (%s): %s\n%s\n", defs[i].name, defs[i].file, pg_last_error(),
                    pg_last_error_log() ? pg_last_error_log() : "");
            atomic_store(&b->failed, 1);
        }
    }
    return NULL;
}

static void build_all(pg_runtime *rt, pg_kernel **k) {
    builder b = {.rt = rt, .k = k};
    atomic_init(&b.next, 0);
    atomic_init(&b.failed, 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        REQUIRE_OK(pthread_create(&t[i], NULL, build_some, &b) ? PG_ERROR_INTERNAL : PG_OK);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    if (atomic_load(&b.failed))
        exit(1);
}

/* ------------------------------------------------------------------ helpers */

static uint32_t rng = 12345;

static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static float rndf(float lo, float hi) {
    return lo + (hi - lo) * (float)(rnd() >> 8) * 0x1p-24f;
}

static pg_array *array(pg_runtime *rt, pg_dtype t, int64_t n, const void *init) {
    pg_array *a = NULL;
    REQUIRE_OK(pg_array_new(rt, t, 1, &n, &a));
    if (init)
        REQUIRE_OK(pg_array_write(a, 0, (uint64_t)n, init));
    return a;
}

static void launch(pg_kernel *k, pg_dim3 grid, pg_dim3 block, size_t shared, const pg_arg *args,
                   int n) {
    REQUIRE_OK(pg_kernel_launch(k, grid, block, shared, args, n));
}

static pg_dim3 dim2(uint32_t x, uint32_t y) {
    pg_dim3 d = {x, y, 1};
    return d;
}

/* |got - want| <= tol, else one line per mismatch (the first few) and a failure. */
static int bad_values;

static void expect_near(const char *what, int i, double got, double want, double tol) {
    if (fabs(got - want) <= tol)
        return;
    if (bad_values++ < 8)
        fprintf(stderr, "%s[%d] = %.9g, expected %.9g (tolerance %.3g)\n", what, i, got, want, tol);
    pg_check_failures++;
}

static void expect_int(const char *what, int i, long long got, long long want) {
    if (got == want)
        return;
    if (bad_values++ < 8)
        fprintf(stderr, "%s[%d] = %lld, expected %lld\n", what, i, got, want);
    pg_check_failures++;
}

/* ------------------------------------------------------------------ the cases */

/* Grid-stride sums, one partial per block (reduce_tree, reduce_warp). */
static void check_partials(const char *what, const float *x, int n, int grid, int block,
                           const float *got) {
    double ref[64] = {0}, mag[64] = {0};
    for (int i = 0; i < n; i++) {
        int b = i / block % grid;
        ref[b] += x[i];
        mag[b] += fabs(x[i]);
    }
    /* Each partial is a chain of at most n / (grid * block) + 1 + log2(block) float additions
     * (~74 here), so it is within 74 u * sum|x| of the exact sum (the summation error bound);
     * the order is fixed by the algorithm, the same on a GPU. */
    int chain = n / (grid * block) + 1 + 9;
    for (int b = 0; b < grid; b++)
        expect_near(what, b, got[b], ref[b], chain * U * mag[b]);
}

static void case_reductions(pg_runtime *rt, pg_kernel **k) {
    enum { N = (1 << 20) + 12345, GRID = 64, BLOCK = 256 };
    float *x = malloc(N * sizeof *x), got[GRID];
    for (int i = 0; i < N; i++)
        x[i] = rndf(-1, 1);
    pg_array *ax = array(rt, PG_FLOAT32, N, x), *ap = array(rt, PG_FLOAT32, GRID, NULL);
    pg_arg args[] = {pg_arg_array(ax), pg_arg_array(ap), pg_arg_int(N)};
    launch(k[K_REDUCE_TREE], dim1(GRID), dim1(BLOCK), BLOCK * sizeof(float), args, 3);
    REQUIRE_OK(pg_array_read(ap, 0, GRID, got));
    check_partials("reduce_tree", x, N, GRID, BLOCK, got);
    launch(k[K_REDUCE_WARP], dim1(GRID), dim1(BLOCK), 0, args, 3);
    REQUIRE_OK(pg_array_read(ap, 0, GRID, got));
    check_partials("reduce_warp", x, N, GRID, BLOCK, got);
    pg_array_free(ax);
    pg_array_free(ap);
    free(x);
}

static void case_scan(pg_runtime *rt, pg_kernel **k) {
    enum { N = 100000, BLOCK = 256, NB = (N + BLOCK - 1) / BLOCK };
    int *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
    for (int i = 0; i < N; i++)
        in[i] = (int)(rnd() % 10);
    pg_array *ai = array(rt, PG_INT32, N, in), *ao = array(rt, PG_INT32, N, NULL);
    pg_array *as = array(rt, PG_INT32, NB, NULL);
    pg_arg a1[] = {pg_arg_array(ai), pg_arg_array(ao), pg_arg_array(as), pg_arg_int(N)};
    launch(k[K_SCAN_BLOCKS], dim1(NB), dim1(BLOCK), 0, a1, 4);
    pg_arg a2[] = {pg_arg_array(as), pg_arg_int(NB)};
    launch(k[K_SCAN_SUMS], dim1(1), dim1(BLOCK), 0, a2, 2);
    pg_arg a3[] = {pg_arg_array(ao), pg_arg_array(as), pg_arg_int(N)};
    launch(k[K_SCAN_ADD], dim1(NB), dim1(BLOCK), 0, a3, 3);
    REQUIRE_OK(pg_array_read(ao, 0, N, out));
    long long s = 0; /* integers: exact */
    for (int i = 0; i < N; i++) {
        s += in[i];
        expect_int("scan", i, out[i], s);
    }
    pg_array_free(ai);
    pg_array_free(ao);
    pg_array_free(as);
    free(in);
    free(out);
}

static void case_matmul(pg_runtime *rt, pg_kernel **k) {
    enum { M = 70, N = 50, K = 45 };
    float a[M * K], b[K * N], c[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = rndf(-1, 1);
    for (int i = 0; i < K * N; i++)
        b[i] = rndf(-1, 1);
    pg_array *aa = array(rt, PG_FLOAT32, M * K, a), *ab = array(rt, PG_FLOAT32, K * N, b);
    pg_array *ac = array(rt, PG_FLOAT32, M * N, NULL);
    pg_arg args[] = {pg_arg_array(aa), pg_arg_array(ab), pg_arg_array(ac),
                     pg_arg_int(M),    pg_arg_int(N),    pg_arg_int(K)};
    launch(k[K_MATMUL], dim2((N + 15) / 16, (M + 15) / 16), dim2(16, 16), 0, args, 6);
    REQUIRE_OK(pg_array_read(ac, 0, M * N, c));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (int p = 0; p < K; p++) {
                ref += (double)a[i * K + p] * b[p * N + j];
                mag += fabs((double)a[i * K + p] * b[p * N + j]);
            }
            /* K products and K additions in float: within 2 K u sum|a b| of the exact value,
             * whether the GPU contracts them into FMAs or not. */
            expect_near("matmul", i * N + j, c[i * N + j], ref, 2 * K * U * mag);
        }
    pg_array_free(aa);
    pg_array_free(ab);
    pg_array_free(ac);
}

static void case_histogram(pg_runtime *rt, pg_kernel **k) {
    enum { N = 200000, BINS = 64 };
    unsigned char *d = malloc(N);
    unsigned int h[BINS], ref[BINS] = {0};
    for (int i = 0; i < N; i++) {
        d[i] = (unsigned char)(rnd() >> 3);
        ref[d[i] % BINS]++;
    }
    pg_array *ad = array(rt, PG_UINT8, N, d), *ah = array(rt, PG_UINT32, BINS, NULL);
    pg_arg args[] = {pg_arg_array(ad), pg_arg_array(ah), pg_arg_int(N)};
    launch(k[K_HISTOGRAM], dim1(32), dim1(256), 0, args, 3);
    REQUIRE_OK(pg_array_read(ah, 0, BINS, h));
    for (int b = 0; b < BINS; b++) /* counts: exact */
        expect_int("histogram", b, h[b], ref[b]);
    pg_array_free(ad);
    pg_array_free(ah);
    free(d);
}

static void case_softmax(pg_runtime *rt, pg_kernel **k) {
    enum { ROWS = 37, COLS = 1000 };
    float *x = malloc(ROWS * COLS * sizeof *x), *y = malloc(ROWS * COLS * sizeof *y);
    for (int i = 0; i < ROWS * COLS; i++)
        x[i] = rndf(-4, 4);
    pg_array *ax = array(rt, PG_FLOAT32, ROWS * COLS, x);
    pg_array *ay = array(rt, PG_FLOAT32, ROWS * COLS, NULL);
    pg_arg args[] = {pg_arg_array(ax), pg_arg_array(ay), pg_arg_int(COLS)};
    launch(k[K_SOFTMAX], dim1(ROWS), dim1(128), 0, args, 3);
    REQUIRE_OK(pg_array_read(ay, 0, ROWS * COLS, y));
    for (int r = 0; r < ROWS; r++) {
        const float *row = x + r * COLS;
        double m = row[0], s = 0;
        for (int c = 1; c < COLS; c++)
            m = fmax(m, row[c]);
        for (int c = 0; c < COLS; c++)
            s += exp(row[c] - m);
        for (int c = 0; c < COLS; c++) {
            double ref = exp(row[c] - m) / s;
            /* A GPU's __expf is within 2 + 1.16 |x| ulp (|x| <= 8 here: 11 ulp), __fdividef
             * within 2 ulp, and the sum of 1000 terms is a chain of ~20 additions: about 40
             * ulp (4.8e-6) relative in all; 2e-5 leaves room. */
            expect_near("softmax", r * COLS + c, y[r * COLS + c], ref, 2e-5 * ref);
        }
    }
    pg_array_free(ax);
    pg_array_free(ay);
    free(x);
    free(y);
}

static void case_transpose(pg_runtime *rt, pg_kernel **k) {
    enum { W = 100, H = 70 };
    float in[W * H], out[W * H];
    for (int i = 0; i < W * H; i++)
        in[i] = (float)i;
    pg_array *ai = array(rt, PG_FLOAT32, W * H, in), *ao = array(rt, PG_FLOAT32, W * H, NULL);
    pg_arg args[] = {pg_arg_array(ao), pg_arg_array(ai), pg_arg_int(W), pg_arg_int(H)};
    launch(k[K_TRANSPOSE], dim2((W + 31) / 32, (H + 31) / 32), dim2(32, 8), 0, args, 4);
    REQUIRE_OK(pg_array_read(ao, 0, W * H, out));
    for (int y = 0; y < H; y++) /* a permutation: exact */
        for (int x = 0; x < W; x++)
            expect_near("transpose", x * H + y, out[x * H + y], in[y * W + x], 0);
    pg_array_free(ai);
    pg_array_free(ao);
}

static void case_dot(pg_runtime *rt, pg_kernel **k) {
    enum { N = 100000, GRID = 32, BLOCK = 256 };
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), r = 0;
    double ref = 0, mag = 0;
    for (int i = 0; i < N; i++) {
        a[i] = rndf(-1, 1);
        b[i] = rndf(-1, 1);
        ref += (double)a[i] * b[i];
        mag += fabs((double)a[i] * b[i]);
    }
    pg_array *aa = array(rt, PG_FLOAT32, N, a), *ab = array(rt, PG_FLOAT32, N, b);
    pg_array *ar = array(rt, PG_FLOAT32, 1, NULL);
    pg_arg args[] = {pg_arg_array(aa), pg_arg_array(ab), pg_arg_array(ar), pg_arg_int(N)};
    launch(k[K_DOT], dim1(GRID), dim1(BLOCK), 0, args, 4);
    REQUIRE_OK(pg_array_read(ar, 0, 1, &r));
    /* Per thread 13 products, then 8 tree levels, then 32 atomic additions in whatever order
     * the blocks finish: a chain of ~54 roundings, within 64 u sum|a b|. */
    expect_near("dot", 0, r, ref, 64 * U * mag);
    pg_array_free(aa);
    pg_array_free(ab);
    pg_array_free(ar);
    free(a);
    free(b);
}

static void case_stencil(pg_runtime *rt, pg_kernel **k) {
    enum { N = 10000, R = 3 };
    static const float w[2 * R + 1] = {0.05f, 0.1f, 0.2f, 0.3f, 0.2f, 0.1f, 0.05f};
    float *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
    for (int i = 0; i < N; i++)
        in[i] = rndf(-10, 10);
    pg_array *ai = array(rt, PG_FLOAT32, N, in), *ao = array(rt, PG_FLOAT32, N, NULL);
    pg_arg args[] = {pg_arg_array(ai), pg_arg_array(ao), pg_arg_int(N)};
    launch(k[K_STENCIL], dim1((N + 127) / 128), dim1(128), 0, args, 3);
    REQUIRE_OK(pg_array_read(ao, 0, N, out));
    for (int i = 0; i < N; i++) {
        double ref = 0, mag = 0;
        for (int j = -R; j <= R; j++)
            if (i + j >= 0 && i + j < N) {
                ref += (double)w[j + R] * in[i + j];
                mag += fabs((double)w[j + R] * in[i + j]);
            }
        /* 7 products and 6 additions (FMAs on a GPU): within 8 u sum|w x|. */
        expect_near("stencil", i, out[i], ref, 8 * U * mag);
    }
    pg_array_free(ai);
    pg_array_free(ao);
    free(in);
    free(out);
}

static void case_compact(pg_runtime *rt, pg_kernel **k) {
    enum { N = 10000, BLOCK = 256, NB = (N + BLOCK - 1) / BLOCK, THRESHOLD = 50 };
    int *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out), counts[NB];
    for (int i = 0; i < N; i++) {
        in[i] = (int)(rnd() % 100);
        out[i] = -1;
    }
    pg_array *ai = array(rt, PG_INT32, N, in), *ao = array(rt, PG_INT32, N, out);
    pg_array *ac = array(rt, PG_INT32, NB, NULL);
    pg_arg args[] = {pg_arg_array(ai), pg_arg_array(ao), pg_arg_array(ac), pg_arg_int(N),
                     pg_arg_int(THRESHOLD)};
    launch(k[K_COMPACT], dim1(NB), dim1(BLOCK), 0, args, 5);
    REQUIRE_OK(pg_array_read(ao, 0, N, out));
    REQUIRE_OK(pg_array_read(ac, 0, NB, counts));
    for (int b = 0; b < NB; b++) { /* each block's kept elements, in order: exact */
        int kept = 0;
        for (int i = b * BLOCK; i < N && i < (b + 1) * BLOCK; i++)
            if (in[i] > THRESHOLD)
                expect_int("compact", i, out[b * BLOCK + kept++], in[i]);
        expect_int("compact count", b, counts[b], kept);
    }
    pg_array_free(ai);
    pg_array_free(ao);
    pg_array_free(ac);
    free(in);
    free(out);
}

static int clz32(uint32_t x) {
    return x ? __builtin_clz(x) : 32;
}

static void case_votes(pg_runtime *rt, pg_kernel **k) {
    enum { BX = 20, BY = 3, T = BX * BY, NB = 7, N = NB * T };
    int in[N], out[N * 12];
    for (int i = 0; i < N; i++)
        in[i] = (int)(rnd() % 100);
    pg_array *ai = array(rt, PG_INT32, N, in), *ao = array(rt, PG_INT32, N * 12, NULL);
    pg_arg args[] = {pg_arg_array(ai), pg_arg_array(ao), pg_arg_int(N)};
    launch(k[K_VOTES], dim1(NB), dim2(BX, BY), 0, args, 3);
    REQUIRE_OK(pg_array_read(ao, 0, N * 12, out));
    for (int b = 0; b < NB; b++) { /* integers and masks: exact */
        const int *v = in + b * T;
        int count = 0, all = 1, any = 0;
        for (int t = 0; t < T; t++) {
            count += v[t] & 1;
            all &= v[t] >= 10;
            any |= v[t] > 90;
        }
        for (int t = 0; t < T; t++) {
            int base = t & ~31, lanes = T - base < 32 ? T - base : 32, lane = t & 31;
            uint32_t active = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1, ballot = 0, same = 0;
            int wany = 0, wall = 1, total = 0;
            for (int l = 0; l < lanes; l++) {
                int x = v[base + l];
                ballot |= (uint32_t)(x & 1) << l;
                wany |= x > 95;
                wall &= x < 99;
                same |= (uint32_t)(x % 4 == v[t] % 4) << l;
                total += x;
            }
            int want[12] = {count,
                            all,
                            any,
                            (int)active,
                            (int)ballot,
                            wany,
                            wall,
                            v[base + (lane & ~7) + 3],
                            v[base + (lane ^ 1)],
                            (int)same,
                            total,
                            __builtin_popcount(ballot) + 100 * clz32(ballot) +
                                10000 * __builtin_ffs((int)ballot)};
            for (int j = 0; j < 12; j++)
                expect_int("votes", (b * T + t) * 12 + j, out[(b * T + t) * 12 + j], want[j]);
        }
    }
    pg_array_free(ai);
    pg_array_free(ao);
}

static void case_last_block(pg_runtime *rt, pg_kernel **k) {
    enum { N = 50000, GRID = 40, BLOCK = 128 };
    float *x = malloc(N * sizeof *x), total = 0;
    double ref = 0, mag = 0;
    for (int i = 0; i < N; i++) {
        x[i] = rndf(-1, 1);
        ref += x[i];
        mag += fabs(x[i]);
    }
    pg_array *ax = array(rt, PG_FLOAT32, N, x), *ap = array(rt, PG_FLOAT32, GRID, NULL);
    pg_array *at = array(rt, PG_FLOAT32, 1, NULL), *ac = array(rt, PG_UINT32, 1, NULL);
    pg_arg args[] = {pg_arg_array(ax), pg_arg_array(ap), pg_arg_array(at), pg_arg_array(ac),
                     pg_arg_int(N)};
    for (int rep = 0; rep < 2; rep++) { /* the counter wraps to 0: a second launch works too */
        float zero = 0;
        REQUIRE_OK(pg_array_write(at, 0, 1, &zero));
        launch(k[K_LAST_BLOCK], dim1(GRID), dim1(BLOCK), 0, args, 5);
        REQUIRE_OK(pg_array_read(at, 0, 1, &total));
        /* 10 terms per thread, 7 tree levels, then 40 partials (1 per thread, 7 levels): a
         * chain of ~25 additions, within 32 u sum|x|. */
        expect_near("last_block", rep, total, ref, 32 * U * mag);
    }
    unsigned int counter = 1;
    REQUIRE_OK(pg_array_read(ac, 0, 1, &counter));
    CHECK(counter == 0);
    pg_array_free(ax);
    pg_array_free(ap);
    pg_array_free(at);
    pg_array_free(ac);
    free(x);
}

static void case_vectors(pg_runtime *rt, pg_kernel **k) {
    enum { N = 1000 };
    float in[4 * N], out[4 * N], stats[2 * N];
    for (int i = 0; i < 4 * N; i++)
        in[i] = rndf(0.1f, 2.0f);
    pg_array *ai = array(rt, PG_FLOAT32, 4 * N, in), *ao = array(rt, PG_FLOAT32, 4 * N, NULL);
    pg_array *as = array(rt, PG_FLOAT32, 2 * N, NULL);
    pg_arg args[] = {pg_arg_array(ai), pg_arg_array(ao), pg_arg_array(as), pg_arg_int(N)};
    launch(k[K_VECTORS], dim1((N + 127) / 128), dim1(128), 0, args, 4);
    REQUIRE_OK(pg_array_read(ao, 0, 4 * N, out));
    REQUIRE_OK(pg_array_read(as, 0, 2 * N, stats));
    for (int i = 0; i < N; i++) {
        const float *v = in + 4 * i;
        double norm = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2] +
                           (double)v[3] * v[3]);
        double want[6] = {v[0] / norm,           v[1] / norm, v[2] / norm,
                          v[3] > 1 ? 1.0 : v[3], norm,        exp(-(double)v[0] * v[0])};
        double got[6] = {out[4 * i],     out[4 * i + 1], out[4 * i + 2],
                         out[4 * i + 3], stats[2 * i],   stats[2 * i + 1]};
        /* A GPU's rsqrtf and __fdividef are within 2 ulp, __expf within 2 + 1.16 |x| ulp
         * (|x| <= 4: 6 ulp); with the float arithmetic around them, 1e-5 relative (~80 ulp)
         * is ample. */
        for (int j = 0; j < 6; j++)
            expect_near("vectors", 6 * i + j, got[j], want[j], 1e-5 * fabs(want[j]));
    }
    pg_array_free(ai);
    pg_array_free(ao);
    pg_array_free(as);
}

static void run_corpus(const char *devices) {
    pg_runtime *rt = test_runtime(devices, NULL, NULL);
    pg_kernel *k[NK] = {0};
    build_all(rt, k);
    static void (*const cases[])(pg_runtime *, pg_kernel **) = {
        case_reductions, case_scan,      case_matmul,     case_histogram,
        case_softmax,    case_transpose, case_dot,        case_stencil,
        case_compact,    case_votes,     case_last_block, case_vectors};
    rng = 12345;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bad_values = 0; /* a few lines per case */
        cases[i](rt, k);
    }
    CHECK_OK(pg_runtime_sync(rt));
    for (int i = 0; i < NK; i++)
        CHECK_OK(pg_kernel_free(k[i]));
    CHECK_OK(pg_runtime_free(rt));
    printf("corpus of %d kernels on %s: %s\n", NK, test_devices(devices),
           pg_check_failures ? "FAILED" : "ok");
}

int main(void) {
    for (int i = 0; i < NK; i++)
        sources[i] = read_kernel(defs[i].file);
    const char *override = getenv("PG_TEST_DEVICES");
    run_corpus("host:1");
    if (!override || !*override) /* otherwise both runs would use the same devices */
        run_corpus("host:4");
    for (int i = 0; i < NK; i++)
        free(sources[i]);
    CHECK_DONE();
}

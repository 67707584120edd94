/* test_load_placement.c: placement that sees load (issue 38), on four CPU devices. The default
 * policy (earliest-finish) spreads independent calls that share an input over the devices, where
 * the data-aware policies put them all where the input is; and what must not move does not:
 * a chain of dependent calls stays on its device, even when that device is busy and others are
 * idle, and the partitions of a split array keep their devices sweep after sweep. Devices are
 * read from the DAG snapshot; every value is checked. Always CPU devices (PG_TEST_DEVICES does
 * not apply): held kernels read a flag through a host pointer. */
#include "dag_view.h"
#include "kernels_common.h"

#include <stdlib.h>

/* sweep: y[i] = sum over 200 steps of x[i] * k (the kernel), after the flag is set.
 * fill and add1 as in TEST_SRC; relax: a 3-point average of a partition's rows, its halo
 * included in s (the rows [lo - 1, hi + 1) clipped), the array's two end elements fixed. */
static const char *SRC =
    "__device__ void hold(unsigned long long flag) {\n"
    "  while (*(volatile const int *)flag == 0) {\n"
    "    struct timespec t = {0, 200000}; nanosleep(&t, 0);\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void sweep(float *y, const float *x, int n,\n"
    "                                  unsigned long long f) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i == 0) hold(f);\n"
    "  if (i < n) { float s = 0; for (int k = 0; k < 200; k++) s += x[i] * (float)k; y[i] = s; }\n"
    "}\n"
    "extern \"C\" __global__ void fill(float *y, float v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }\n"
    "extern \"C\" __global__ void fill2(float *y, float *z, float v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { y[i] = v; z[i] = v; } }\n"
    "extern \"C\" __global__ void add1(float *y, const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }\n"
    "extern \"C\" __global__ void busy(float *z, int n, unsigned long long f) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i == 0) hold(f);\n"
    "  if (i < n) z[i] = z[i] + 1.0f; }\n"
    "extern \"C\" __global__ void init(float *u, int lo, int rows) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < rows) u[i] = (float)((lo + i) % 13); }\n"
    "extern \"C\" __global__ void relax(float *d, const float *s, int lo, int rows, int slo,\n"
    "                                  int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= rows) return;\n"
    "  int g = lo + i;\n"
    "  const float *c = s + (g - slo);\n"
    "  d[i] = (g == 0 || g == n - 1) ? c[0] : (c[-1] + c[0] + c[1]) * 0.25f + c[0] * 0.25f; }\n";

#define N (1 << 16)
#define NCALLS 8
#define BLOCK 256

static pg_kernel *kernel(pg_runtime *rt, const char *name, const char *sig) {
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SRC, name, sig, NULL, &k));
    return k;
}

static pg_runtime *runtime(const char *policy) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:4";
    o.policy = policy; /* NULL: the default */
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

static const char *name(const char *policy) {
    return policy ? policy : "the default policy";
}

/* The devices of the first n kernels, in submission order; how many distinct. */
static int kernel_devices(pg_runtime *rt, int first, int n, int *dev) {
    static tdag dag;
    tdag_load(rt, &dag);
    unsigned used = 0;
    for (int i = 0; i < n; i++) {
        const tvertex *v = tdag_vertex(&dag, tdag_nth(&dag, "kernel", first + i));
        dev[i] = v ? v->device : -9;
        if (dev[i] >= 0)
            used |= 1u << dev[i];
    }
    return __builtin_popcount(used);
}

static void print_devices(const char *what, const char *policy, const int *dev, int n) {
    fprintf(stderr, "%s, %s: devices", what, name(policy));
    for (int i = 0; i < n; i++)
        fprintf(stderr, " %d", dev[i]);
    fprintf(stderr, "\n");
}

static void release(int *flag) {
    __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
}

/* y_i[j] = 19900 x[j]: x[j] = 1 + j % 7, so every partial sum is an exact float. */
static int sweep_values_ok(pg_array *y, const float *x) {
    float *got = malloc(N * sizeof *got);
    REQUIRE_OK(pg_array_read(y, 0, N, got));
    int ok = 1;
    for (int j = 0; j < N; j++)
        ok &= got[j] == 19900.0f * x[j];
    free(got);
    return ok;
}

/* ---- the case: eight calls, each writing its own array from one shared input x, held
 * until all are placed (so that what each device has queued is what the policy sees). `made`:
 * x is made by a kernel on a device (no host copy) instead of written from the host. Returns
 * how many devices the eight used. */
static int spread(const char *policy, int made) {
    pg_runtime *rt = runtime(policy);
    pg_kernel *k = kernel(rt, "sweep", "out float *y, in const float *x, int n, uint64_t f");
    pg_kernel *f = kernel(rt, "fill", "out float *y, float v, int n");
    pg_array *x = test_array(rt, N), *y[NCALLS];
    float *hx = malloc(N * sizeof *hx);
    for (int j = 0; j < N; j++)
        hx[j] = made ? 3.0f : (float)(1 + j % 7);
    if (made) {
        pg_arg fa[] = {pg_arg_array(x), pg_arg_float(3.0f), pg_arg_int(N)};
        REQUIRE_OK(pg_kernel_launch(f, dim1(N / BLOCK), dim1(BLOCK), 0, fa, 3));
        REQUIRE_OK(pg_array_wait(x));
    } else {
        REQUIRE_OK(pg_array_write(x, 0, N, hx));
    }
    int flag = 0;
    for (int i = 0; i < NCALLS; i++) {
        y[i] = test_array(rt, N);
        pg_arg a[] = {pg_arg_array(y[i]), pg_arg_array(x), pg_arg_int(N),
                      pg_arg_uint((uint64_t)(uintptr_t)&flag)};
        REQUIRE_OK(pg_kernel_launch(k, dim1(N / BLOCK), dim1(BLOCK), 0, a, 4));
    }
    int dev[NCALLS];
    int used = kernel_devices(rt, made, NCALLS, dev);
    release(&flag);
    for (int i = 0; i < NCALLS; i++)
        CHECK(sweep_values_ok(y[i], hx));
    char what[64];
    snprintf(what, sizeof what, "spread (x %s)", made ? "made on a device" : "from the host");
    print_devices(what, policy, dev, NCALLS);
    free(hx);
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_kernel_free(f));
    CHECK_OK(pg_runtime_free(rt));
    return used;
}

/* ---- chains: four chains of six dependent calls, y[c][s + 1] = y[c][s] + 1, issued step by
 * step across the chains (c0 s1, c1 s1, ..., c0 s2, ...) and held (every parent unfinished):
 * each chain on one device, the four on different devices. */
#define CHAINS 4
#define STEPS 6
static void chains(const char *policy) {
    pg_runtime *rt = runtime(policy);
    pg_kernel *s = kernel(rt, "sweep", "out float *y, in const float *x, int n, uint64_t f");
    pg_kernel *add = kernel(rt, "add1", "out float *y, in const float *x, int n");
    pg_array *y[CHAINS][STEPS + 1];
    float *hx = malloc(N * sizeof *hx);
    for (int j = 0; j < N; j++)
        hx[j] = (float)(1 + j % 7);
    int flag = 0;
    for (int c = 0; c < CHAINS; c++) {
        pg_array *x = test_array(rt, N);
        REQUIRE_OK(pg_array_write(x, 0, N, hx));
        y[c][0] = test_array(rt, N);
        pg_arg a[] = {pg_arg_array(y[c][0]), pg_arg_array(x), pg_arg_int(N),
                      pg_arg_uint((uint64_t)(uintptr_t)&flag)};
        REQUIRE_OK(pg_kernel_launch(s, dim1(N / BLOCK), dim1(BLOCK), 0, a, 4));
    }
    for (int st = 0; st < STEPS; st++)
        for (int c = 0; c < CHAINS; c++) {
            y[c][st + 1] = test_array(rt, N);
            pg_arg a[] = {pg_arg_array(y[c][st + 1]), pg_arg_array(y[c][st]), pg_arg_int(N)};
            REQUIRE_OK(pg_kernel_launch(add, dim1(N / BLOCK), dim1(BLOCK), 0, a, 3));
        }
    int dev[CHAINS * (STEPS + 1)];
    kernel_devices(rt, 0, CHAINS * (STEPS + 1), dev);
    release(&flag);
    unsigned used = 0;
    int stayed = 1;
    for (int c = 0; c < CHAINS; c++) {
        used |= 1u << dev[c];
        for (int st = 1; st <= STEPS; st++)
            stayed &= dev[st * CHAINS + c] == dev[c];
    }
    if (!stayed || __builtin_popcount(used) < 3)
        print_devices("chains (chain by chain, step by step)", policy, dev, CHAINS * (STEPS + 1));
    CHECK(stayed);
    CHECK(__builtin_popcount(used) >= 3);
    float *got = malloc(N * sizeof *got);
    for (int c = 0; c < CHAINS; c++) {
        REQUIRE_OK(pg_array_read(y[c][STEPS], 0, N, got));
        int ok = 1;
        for (int j = 0; j < N; j++)
            ok &= got[j] == 19900.0f * hx[j] + STEPS;
        CHECK(ok);
    }
    free(got);
    free(hx);
    CHECK_OK(pg_kernel_free(s));
    CHECK_OK(pg_kernel_free(add));
    CHECK_OK(pg_runtime_free(rt));
}

/* ---- a chain on a busy device: y0 and z made together on device d (then finished); z's
 * updates, held, queue work on d (each writes z, which lives on d, so they stay there); then
 * the chain goes on from y0 while the other three devices are idle: its steps stay on d, whose
 * queue is longer than the copy of y0 elsewhere would take. */
static void chain_under_load(const char *policy) {
    pg_runtime *rt = runtime(policy);
    pg_kernel *f2 = kernel(rt, "fill2", "out float *y, out float *z, float v, int n");
    pg_kernel *busy = kernel(rt, "busy", "inout float *z, int n, uint64_t f");
    pg_kernel *add = kernel(rt, "add1", "out float *y, in const float *x, int n");
    pg_array *y[STEPS + 1], *z = test_array(rt, N);
    y[0] = test_array(rt, N);
    pg_arg fa[] = {pg_arg_array(y[0]), pg_arg_array(z), pg_arg_float(2.0f), pg_arg_int(N)};
    REQUIRE_OK(pg_kernel_launch(f2, dim1(N / BLOCK), dim1(BLOCK), 0, fa, 4));
    REQUIRE_OK(pg_array_wait(y[0]));
    int flag = 0;
    for (int i = 0; i < 4; i++) {
        pg_arg a[] = {pg_arg_array(z), pg_arg_int(N), pg_arg_uint((uint64_t)(uintptr_t)&flag)};
        REQUIRE_OK(pg_kernel_launch(busy, dim1(N / BLOCK), dim1(BLOCK), 0, a, 3));
    }
    for (int st = 0; st < STEPS; st++) {
        y[st + 1] = test_array(rt, N);
        pg_arg a[] = {pg_arg_array(y[st + 1]), pg_arg_array(y[st]), pg_arg_int(N)};
        REQUIRE_OK(pg_kernel_launch(add, dim1(N / BLOCK), dim1(BLOCK), 0, a, 3));
    }
    int dev[1 + 4 + STEPS];
    kernel_devices(rt, 0, 1 + 4 + STEPS, dev);
    release(&flag);
    int stayed = 1;
    for (int i = 1; i < 1 + 4 + STEPS; i++)
        stayed &= dev[i] == dev[0];
    if (!stayed)
        print_devices("chain under load (fill2, 4 x busy, the chain)", policy, dev, 1 + 4 + STEPS);
    CHECK(stayed);
    float *got = malloc(N * sizeof *got);
    REQUIRE_OK(pg_array_read(y[STEPS], 0, N, got));
    int ok = 1;
    for (int j = 0; j < N; j++)
        ok &= got[j] == 2.0f + STEPS;
    REQUIRE_OK(pg_array_read(z, 0, N, got));
    for (int j = 0; j < N; j++)
        ok &= got[j] == 2.0f + 4;
    CHECK(ok);
    free(got);
    CHECK_OK(pg_kernel_free(f2));
    CHECK_OK(pg_kernel_free(busy));
    CHECK_OK(pg_kernel_free(add));
    CHECK_OK(pg_runtime_free(rt));
}

/* ---- partitions: two arrays u and v of 16 partitions (views), a sweep per round from one to
 * the other, each partition reading its rows and one halo row on each side (the Jacobi-on-views
 * pattern, in one dimension), run for real: each partition's calls stay on one device round
 * after round, and the partitions use every device. */
#define PARTS 16
#define ROUNDS 8
#define PN (N / PARTS)
static void partitions(const char *policy) {
    pg_runtime *rt = runtime(policy);
    pg_kernel *init = kernel(rt, "init", "out float *u, int lo, int rows");
    pg_kernel *relax =
        kernel(rt, "relax", "out float *d, in const float *s, int lo, int rows, int slo, int n");
    pg_array *g[2] = {test_array(rt, N), test_array(rt, N)};
    pg_array *own[2][PARTS], *halo[2][PARTS];
    for (int a = 0; a < 2; a++)
        for (int p = 0; p < PARTS; p++) {
            int lo = p * PN, hi = lo + PN;
            REQUIRE_OK(pg_array_slice(g[a], lo, hi, &own[a][p]));
            REQUIRE_OK(pg_array_slice(g[a], lo ? lo - 1 : 0, hi < N ? hi + 1 : N, &halo[a][p]));
        }
    for (int p = 0; p < PARTS; p++) {
        pg_arg a[] = {pg_arg_array(own[0][p]), pg_arg_int(p * PN), pg_arg_int(PN)};
        REQUIRE_OK(pg_kernel_launch(init, dim1(PN / BLOCK), dim1(BLOCK), 0, a, 3));
    }
    for (int r = 0; r < ROUNDS; r++)
        for (int p = 0; p < PARTS; p++) {
            int lo = p * PN;
            pg_arg a[] = {pg_arg_array(own[(r + 1) % 2][p]),
                          pg_arg_array(halo[r % 2][p]),
                          pg_arg_int(lo),
                          pg_arg_int(PN),
                          pg_arg_int(lo ? lo - 1 : 0),
                          pg_arg_int(N)};
            REQUIRE_OK(pg_kernel_launch(relax, dim1(PN / BLOCK), dim1(BLOCK), 0, a, 6));
        }
    REQUIRE_OK(pg_runtime_sync(rt));
    int dev[PARTS * (ROUNDS + 1)];
    int used = kernel_devices(rt, 0, PARTS * (ROUNDS + 1), dev);
    int stayed = 1;
    for (int i = PARTS; i < PARTS * (ROUNDS + 1); i++)
        stayed &= dev[i] == dev[i % PARTS];
    if (!stayed || used < 4)
        print_devices("partitions (init, then round by round)", policy, dev, PARTS * (ROUNDS + 1));
    CHECK(stayed);
    CHECK(used == 4);
    /* The values: the same rounds on the host. */
    float *ref[2] = {malloc(N * sizeof(float)), malloc(N * sizeof(float))};
    for (int i = 0; i < N; i++)
        ref[0][i] = (float)(i % 13);
    for (int r = 0; r < ROUNDS; r++) {
        const float *s = ref[r % 2];
        float *d = ref[(r + 1) % 2];
        for (int i = 0; i < N; i++)
            d[i] =
                (i == 0 || i == N - 1) ? s[i] : (s[i - 1] + s[i] + s[i + 1]) * 0.25f + s[i] * 0.25f;
    }
    float *got = malloc(N * sizeof *got);
    REQUIRE_OK(pg_array_read(g[ROUNDS % 2], 0, N, got));
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= got[i] == ref[ROUNDS % 2][i];
    CHECK(ok);
    free(got);
    free(ref[0]);
    free(ref[1]);
    CHECK_OK(pg_kernel_free(init));
    CHECK_OK(pg_kernel_free(relax));
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    /* The default is earliest-finish, and it spreads: over at least 3 of the 4 devices (all 4
     * here: each device's queue makes the next call cheaper elsewhere once x is copied). */
    const char *spreading[] = {NULL, "earliest-finish"};
    for (int p = 0; p < 2; p++) {
        CHECK(spread(spreading[p], 0) >= 3);
        CHECK(spread(spreading[p], 1) >= 3);
    }
    /* GrCUDA's data-aware policies keep their choice: everything where x is. */
    CHECK(spread("minmax-transfer-time", 0) == 1);
    CHECK(spread("min-transfer-size", 0) == 1);
    /* What must not move. */
    for (int p = 0; p < 2; p++) {
        chains(spreading[p]);
        chain_under_load(spreading[p]);
        partitions(spreading[p]);
    }
    CHECK_DONE();
}

/* test_split.c: one launch over several devices (core/split.c) on host:4. A kernel whose
 * signature says what each block writes runs as one part per device, each over a contiguous
 * range of blocks, and gives the serial result bit for bit: element-wise (chunks=blocks),
 * stencils reading halos (halo=H: after the first sweep only the halo elements move between
 * devices), 2-D row blocks (rows=blocks*R), grids larger than the data, recordings replayed,
 * every policy. Kernels that do not declare their writes run whole; pg_kernel_split says why it
 * cannot split; option split=off turns it off. */
#include "dag_view.h"
#include "kernels_common.h"

static const char *SRC =
    "extern \"C\" __global__ void saxpy(float *y, const float *x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n"
    "extern \"C\" __global__ void blur(float *y, const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  float l = i > 0 ? x[i - 1] : 0.0f, r = i + 1 < n ? x[i + 1] : 0.0f;\n"
    "  y[i] = 0.25f * l + 0.5f * x[i] + 0.25f * r; }\n"
    /* 2-D: each block does 4 rows of a rows x cols matrix; blockIdx.y counts the row blocks */
    "extern \"C\" __global__ void rowsum(float *out, const float *m, int rows, int cols) {\n"
    "  int r = blockIdx.y * 4 + threadIdx.y; if (r >= rows) return;\n"
    "  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[r * cols + c] = m[r * cols + c] * "
    "(float)(r + 1); }\n"
    "extern \"C\" __global__ void liar(float *y, int n) {\n" /* writes the next block's */
    "  int i = blockIdx.x * blockDim.x + threadIdx.x + blockDim.x; if (i < n) y[i] = 1.0f; }\n"
    "extern \"C\" __global__ void total(float *s, const float *x, int n) {\n"
    "  if (blockIdx.x == 0 && threadIdx.x == 0) { float t = 0; for (int i = 0; i < n; i++) t += "
    "x[i]; s[0] = t; } }\n";

enum { N = 10000, T = 128 };

static pg_kernel *kern(pg_runtime *rt, const char *name, const char *sig) {
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SRC, name, sig, NULL, &k));
    return k;
}

static pg_array *arr(pg_runtime *rt, int64_t n, float base) {
    pg_array *a = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &a));
    float *h = malloc((size_t)n * sizeof *h);
    for (int64_t i = 0; i < n; i++)
        h[i] = base + (float)(i % 97) * 0.5f;
    REQUIRE_OK(pg_array_write(a, 0, (uint64_t)n, h));
    free(h);
    return a;
}

static int kernel_devices(pg_runtime *rt, const char *name) {
    static tdag d;
    tdag_load(rt, &d);
    int mask = 0;
    for (int i = 0; i < d.nv; i++)
        if (!strcmp(d.v[i].kind, "kernel") && !strcmp(d.v[i].name, name))
            mask |= 1 << d.v[i].device;
    return mask;
}

/* saxpy then a 1-D stencil ping-pong, on `devices` with `policy` (split as the option says);
 * the results in y and x (N floats each). */
static void program(const char *devices, const char *policy, const char *split, int record,
                    float *y_out, float *x_out, pg_stats *stats) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.policy = policy;
    o.split = split;
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    pg_kernel *saxpy = kern(rt, "saxpy",
                            "inout(chunks=blocks) float *y, in(chunks=blocks) const float *x, "
                            "float a, int n");
    pg_kernel *blur = kern(rt, "blur",
                           "out(chunks=blocks) float *y, in(chunks=blocks, halo=1) const float *x, "
                           "int n");
    pg_array *x = arr(rt, N, 1), *y = arr(rt, N, 2);
    pg_arg sa[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_float(3), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(saxpy, dim1((N + T - 1) / T), dim1(T), 0, sa, 4));
    pg_arg b1[] = {pg_arg_array(x), pg_arg_array(y), pg_arg_int(N)};
    pg_arg b2[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    pg_graph *g = NULL;
    if (record)
        REQUIRE_OK(pg_graph_begin(rt));
    CHECK_OK(pg_kernel_launch(blur, dim1((N + T - 1) / T), dim1(T), 0, b1, 3));
    CHECK_OK(pg_kernel_launch(blur, dim1((N + T - 1) / T), dim1(T), 0, b2, 3));
    if (record) {
        REQUIRE_OK(pg_graph_end(rt, &g));
        for (int r = 0; r < 6; r++) /* the recorded pair ran none: six replays */
            CHECK_OK(pg_graph_launch(g));
    } else {
        for (int r = 0; r < 5; r++) {
            CHECK_OK(pg_kernel_launch(blur, dim1((N + T - 1) / T), dim1(T), 0, b1, 3));
            CHECK_OK(pg_kernel_launch(blur, dim1((N + T - 1) / T), dim1(T), 0, b2, 3));
        }
    }
    if (stats)
        CHECK_OK(pg_runtime_stats(rt, stats));
    CHECK_OK(pg_array_read(y, 0, N, y_out));
    CHECK_OK(pg_array_read(x, 0, N, x_out));
    if (g)
        CHECK_OK(pg_graph_free(g));
    CHECK_OK(pg_runtime_free(rt));
}

static void test_bit_exact_against_one_device(void) {
    static float y1[N], x1[N], y4[N], x4[N];
    program("host:1", NULL, "off", 0, y1, x1, NULL);
    const char *policies[] = {"round-robin", "stream-aware", "min-transfer-size",
                              "minmax-transfer-time", "min-transfer-time"};
    for (int rec = 0; rec < 2; rec++)
        for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
            program("host:4", policies[p], "auto", rec, y4, x4, NULL);
            int same = !memcmp(y1, y4, sizeof y1) && !memcmp(x1, x4, sizeof x1);
            if (!same)
                fprintf(stderr, "policy %s, recorded %d: split results differ\n", policies[p], rec);
            CHECK(same);
        }
}

static void test_parts_and_halos(void) {
    pg_runtime *rt = test_runtime_on("host:4", NULL, NULL);
    pg_kernel *blur = kern(rt, "blur",
                           "out(chunks=blocks) float *y, in(chunks=blocks, halo=1) const float *x, "
                           "int n");
    pg_array *x = arr(rt, N, 1), *y = arr(rt, N, 0);
    pg_arg b1[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    pg_arg b2[] = {pg_arg_array(x), pg_arg_array(y), pg_arg_int(N)};
    uint32_t grid = (N + T - 1) / T;
    CHECK_OK(pg_kernel_launch(blur, dim1(grid), dim1(T), 0, b1, 3));
    CHECK_OK(pg_kernel_launch(blur, dim1(grid), dim1(T), 0, b2, 3));
    CHECK_OK(pg_runtime_sync(rt));
    CHECK(kernel_devices(rt, "blur") == 0xf); /* one part on each of the four devices */
    { /* the DAG shows each launch as one call with parts 1..4 */
        pg_dag *g = NULL;
        REQUIRE_OK(pg_dag_snapshot(rt, &g));
        size_t nv = 0;
        CHECK_OK(pg_dag_vertex_count(g, &nv));
        int seen = 0;
        for (size_t i = 0; i < nv; i++) {
            pg_dag_vertex_info v;
            CHECK_OK(pg_dag_vertex(g, i, &v));
            if (v.kind == PG_DAG_KERNEL) {
                CHECK(v.parts == 4 && v.part >= 1 && v.part <= 4 && v.device == v.part - 1);
                seen++;
            }
        }
        CHECK(seen == 8);
        char *json = NULL;
        CHECK_OK(pg_dag_to_string(g, PG_DAG_JSON, &json));
        CHECK(json && strstr(json, "\"part\":4,\"parts\":4"));
        pg_string_free(json);
        pg_dag_free(g);
    }
    pg_stats before, after;
    CHECK_OK(pg_runtime_stats(rt, &before));
    for (int r = 0; r < 10; r++) {
        CHECK_OK(pg_kernel_launch(blur, dim1(grid), dim1(T), 0, b1, 3));
        CHECK_OK(pg_kernel_launch(blur, dim1(grid), dim1(T), 0, b2, 3));
    }
    CHECK_OK(pg_runtime_sync(rt));
    CHECK_OK(pg_runtime_stats(rt, &after));
    /* Steady state: each sweep moves only the halos, one element each way across each of the
     * three boundaries between the four parts: 6 elements, 20 sweeps. */
    uint64_t moved = after.bytes_moved - before.bytes_moved;
    if (moved != 20u * 6 * sizeof(float))
        fprintf(stderr, "halo sweeps moved %llu bytes, expected %zu\n", (unsigned long long)moved,
                20u * 6 * sizeof(float));
    CHECK(moved == 20u * 6 * sizeof(float));
    CHECK_OK(pg_runtime_free(rt));
}

static void test_rows_and_large_grids(void) {
    pg_runtime *rt = test_runtime_on("host:4", NULL, NULL);
    pg_kernel *k =
        kern(rt, "rowsum",
             "out(rows=blocks*4) float *out, in(rows=blocks*4) const float *m, int rows, "
             "int cols");
    enum { R = 37, C = 50 };
    int64_t shape[2] = {R, C};
    pg_array *m = NULL, *out = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 2, shape, &m));
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 2, shape, &out));
    static float h[R * C], r[R * C];
    for (int i = 0; i < R * C; i++)
        h[i] = (float)(i % 13);
    CHECK_OK(pg_array_write(m, 0, R * C, h));
    pg_dim3 grid = {1, (R + 3) / 4, 1}, block = {32, 4, 1};
    pg_arg a[] = {pg_arg_array(out), pg_arg_array(m), pg_arg_int(R), pg_arg_int(C)};
    CHECK_OK(pg_kernel_launch(k, grid, block, 0, a, 4));
    CHECK_OK(pg_array_read(out, 0, R * C, r));
    int ok = 1;
    for (int i = 0; i < R * C; i++)
        ok &= r[i] == h[i] * (float)(i / C + 1);
    CHECK(ok);
    CHECK(kernel_devices(rt, "rowsum") == 0xf);
    /* A grid with more blocks than the data: the parts past the end touch nothing of it. */
    pg_kernel *saxpy = kern(rt, "saxpy",
                            "inout(chunks=blocks) float *y, in(chunks=blocks) const float *x, "
                            "float a, int n");
    pg_array *x = arr(rt, 100, 1), *y = arr(rt, 100, 0);
    pg_arg sa[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_float(2), pg_arg_int(100)};
    CHECK_OK(pg_kernel_launch(saxpy, dim1(64), dim1(T), 0, sa, 4));
    float yv[100];
    CHECK_OK(pg_array_read(y, 0, 100, yv));
    ok = 1;
    for (int i = 0; i < 100; i++)
        ok &= yv[i] == 2.0f * (1 + (float)(i % 97) * 0.5f) + (float)(i % 97) * 0.5f;
    CHECK(ok);
    CHECK_OK(pg_runtime_free(rt));
}

static void test_what_is_not_split(void) {
    pg_runtime *rt = test_runtime_on("host:4", "round-robin", NULL);
    /* No declared ranges: one device, and "on" says why it cannot. */
    pg_kernel *plain = kern(rt, "saxpy", NULL);
    CHECK_MSG(pg_kernel_split(plain, "on"), PG_ERROR_ARGUMENT, "parameter 1 (y)");
    /* A reduction into one element: the message says how to write it instead. */
    pg_kernel *tot = kern(rt, "total", "out float *s, in(chunks=blocks) const float *x, int n");
    CHECK_MSG(pg_kernel_split(tot, "on"), PG_ERROR_ARGUMENT, "partial results");
    CHECK_MSG(pg_kernel_split(tot, "sideways"), PG_ERROR_ARGUMENT, "expected auto, on, off");
    pg_array *x = arr(rt, N, 1), *y = arr(rt, N, 0);
    pg_arg sa[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_float(3), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(plain, dim1(N / T + 1), dim1(T), 0, sa, 4));
    CHECK_OK(pg_runtime_sync(rt));
    int m = kernel_devices(rt, "saxpy");
    CHECK(m && !(m & (m - 1))); /* one device */
    /* "on" with a grid of one block: an error naming why; the runtime goes on. */
    pg_kernel *s = kern(rt, "saxpy",
                        "inout(chunks=blocks) float *y, in(chunks=blocks) const float *x, float a, "
                        "int n");
    CHECK_OK(pg_kernel_split(s, "on"));
    CHECK_MSG(pg_kernel_launch(s, dim1(1), dim1(T), 0, sa, 4), PG_ERROR_ARGUMENT, "one block");
    /* "off" per kernel: whole. */
    CHECK_OK(pg_kernel_split(s, "off"));
    CHECK_OK(pg_kernel_launch(s, dim1(N / T + 1), dim1(T), 0, sa, 4));
    float v;
    CHECK_OK(pg_array_read(y, 5, 1, &v));
    CHECK(v == 2.5f + 2 * 3.0f * (1 + 2.5f)); /* two launches ran, the refused one did not */
    CHECK_OK(pg_runtime_free(rt));
    pg_options o;
    pg_options_init(&o);
    CHECK_MSG(pg_options_set(&o, "split", "sometimes"), PG_OK, "");
    o.devices = "host:2";
    pg_runtime *bad = NULL;
    CHECK_MSG(pg_runtime_new(&o, &bad), PG_ERROR_ARGUMENT, "unknown split 'sometimes'");
}

/* On GPUs (tests/gpu/run.sh sets PG_TEST_DEVICES=cuda): split against unsplit on the same
 * devices (a GPU contracts a*x + y into one rounding where a CPU may not). */
static void test_on_gpus(const char *devices) {
    static float y1[N], x1[N], y2[N], x2[N];
    program(devices, NULL, "off", 0, y1, x1, NULL);
    for (int rec = 0; rec < 2; rec++) {
        pg_stats st;
        program(devices, NULL, "auto", rec, y2, x2, &st);
        CHECK(!memcmp(y1, y2, sizeof y1) && !memcmp(x1, x2, sizeof x1));
        if (st.ndevices > 1)
            CHECK(st.kernels >= 2 * 12); /* every launch ran as two parts or more */
    }
}

/* check=bounds: a part may touch only the range its blocks declare; a kernel whose writes
 * break its annotation fails naming the parameter and the range. */
static void test_bounds(void) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:4";
    o.check = "bounds";
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    pg_kernel *saxpy = kern(rt, "saxpy",
                            "inout(chunks=blocks) float *y, in(chunks=blocks) const float *x, "
                            "float a, int n");
    pg_array *x = arr(rt, N, 1), *y = arr(rt, N, 0);
    pg_arg sa[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_float(2), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(saxpy, dim1((N + T - 1) / T), dim1(T), 0, sa, 4));
    float v = 0;
    CHECK_OK(pg_array_read(y, N - 1, 1, &v));
    CHECK(v == 2.0f * (1 + (float)((N - 1) % 97) * 0.5f) + (float)((N - 1) % 97) * 0.5f);
    CHECK(kernel_devices(rt, "saxpy") == 0xf);
    pg_kernel *liar = kern(rt, "liar", "out(chunks=blocks) float *y, int n");
    pg_array *z = arr(rt, N, 0);
    pg_arg la[] = {pg_arg_array(z), pg_arg_int(N)};
    pg_status st = pg_kernel_launch(liar, dim1((N + T - 1) / T), dim1(T), 0, la, 2);
    if (st == PG_OK)
        st = pg_runtime_sync(rt);
    CHECK(st != PG_OK);
    CHECK(strstr(pg_last_error(), "out of bounds") != NULL);
    CHECK(strstr(pg_last_error(), "range its blocks declare") != NULL);
    pg_runtime_free(rt);
}

/* Inputs that must come over a link are copied in parts, so that copies overlap the blocks of
 * the part before: even one device runs such a launch in parts (one per 64 MiB to copy, at most
 * 8 per device); once the inputs are there, the launch runs whole again. */
static void test_pipelined_parts(void) {
    pg_runtime *rt = test_runtime_on("host:1", NULL, NULL);
    pg_kernel *saxpy = kern(rt, "saxpy",
                            "inout(chunks=blocks) float *y, in(chunks=blocks) const float *x, "
                            "float a, int n");
    enum { M = 1 << 24 }; /* 64 MiB per array: 128 MiB to copy in */
    pg_array *x = arr(rt, M, 1), *y = arr(rt, M, 0);
    pg_arg sa[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_float(2), pg_arg_int(M)};
    CHECK_OK(pg_kernel_launch(saxpy, dim1(M / T), dim1(T), 0, sa, 4));
    CHECK_OK(pg_kernel_launch(saxpy, dim1(M / T), dim1(T), 0, sa, 4));
    float v = 0;
    CHECK_OK(pg_array_read(y, M - 5, 1, &v));
    float xv = 1 + (float)((M - 5) % 97) * 0.5f, yv = (float)((M - 5) % 97) * 0.5f;
    CHECK(v == 2 * xv + (2 * xv + yv));
    pg_dag *g = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &g));
    size_t nv = 0;
    CHECK_OK(pg_dag_vertex_count(g, &nv));
    int first_parts = -1, second_parts = -1;
    for (size_t i = 0; i < nv; i++) {
        pg_dag_vertex_info vi;
        CHECK_OK(pg_dag_vertex(g, i, &vi));
        if (vi.kind != PG_DAG_KERNEL)
            continue;
        if (first_parts < 0)
            first_parts = vi.parts;
        else if (vi.part <= 1 && second_parts < 0 && (vi.parts == 0 || vi.part == 1) &&
                 (first_parts == 0 || i > (size_t)first_parts))
            second_parts = vi.parts;
    }
    CHECK(first_parts == 2);  /* 128 MiB to copy: two parts on the one device */
    CHECK(second_parts == 0); /* the inputs are there now: whole */
    pg_dag_free(g);
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    test_pipelined_parts();
    test_bounds();
    const char *gpus = getenv("PG_TEST_DEVICES");
    if (gpus && *gpus && strncmp(gpus, "host", 4) != 0)
        test_on_gpus(gpus);
    test_bit_exact_against_one_device();
    test_parts_and_halos();
    test_rows_and_large_grids();
    test_what_is_not_split();
    CHECK_DONE();
}

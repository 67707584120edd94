/* test_slices.c: views (pg_array_slice). Kernels writing disjoint views of one array have no
 * edge between them and run on two devices at once; overlapping ones are ordered; reads copy
 * only the stale ranges (bytes moved for a scripted sequence); views of views and rows of 2-D
 * arrays; freeing the parent first; recordings across a cut; every misuse refused, naming it,
 * with the runtime usable afterwards. */
#include "dag_view.h"
#include "kernels_common.h"

#include "core/handle.h"

enum { N = 1024, H = N / 2 };

static tdag dag;

static pg_array *view(pg_array *a, int64_t lo, int64_t hi) {
    pg_array *v = NULL;
    REQUIRE_OK(pg_array_slice(a, lo, hi, &v));
    return v;
}

static void fill(pg_kernel *k, pg_array *a, float v, int n) {
    pg_arg args[] = {pg_arg_array(a), pg_arg_float(v), pg_arg_int(n)};
    CHECK_OK(pg_kernel_launch(k, dim1((uint32_t)(n + 255) / 256), dim1(256), 0, args, 3));
}

static void add1(pg_kernel *k, pg_array *y, pg_array *x, int n) {
    pg_arg args[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(n)};
    CHECK_OK(pg_kernel_launch(k, dim1((uint32_t)(n + 255) / 256), dim1(256), 0, args, 3));
}

/* Elements [lo, hi) of a all equal v? */
static int all(pg_array *a, int lo, int hi, float v) {
    static float buf[N];
    CHECK_OK(pg_array_read(a, (uint64_t)lo, (uint64_t)(hi - lo), buf));
    for (int i = 0; i < hi - lo; i++)
        if (buf[i] != v)
            return 0;
    return 1;
}

static long nth_kernel(int n) {
    return tdag_nth(&dag, "kernel", n);
}

static void disjoint_and_overlapping(const char *policy) {
    pg_runtime *rt = test_runtime("host:2", policy, NULL);
    int ndev = 0;
    REQUIRE_OK(pg_runtime_devices(rt, NULL, 0, &ndev));
    pg_kernel *k = test_kernel(rt, "fill", "out float *y, float v, int n");
    pg_array *x = test_array(rt, N);
    pg_array *lo = view(x, 0, H), *hi = view(x, H, N), *mid = view(x, H / 2, H + H / 2);
    fill(k, lo, 1, H);
    fill(k, hi, 2, H);
    fill(k, mid, 3, H);
    CHECK(all(x, 0, H / 2, 1) && all(x, H / 2, H + H / 2, 3) && all(x, H + H / 2, N, 2));
    tdag_load(rt, &dag);
    long a = nth_kernel(0), b = nth_kernel(1), c = nth_kernel(2);
    CHECK(a > 0 && b > 0 && c > 0);
    CHECK(!tdag_edge(&dag, a, b) && !tdag_edge(&dag, b, a)); /* disjoint writes: no edge */
    CHECK(tdag_edge(&dag, a, c) && tdag_edge(&dag, b, c));   /* overlap: ordered */
    if (!strcmp(policy, "round-robin") && ndev > 1) /* independent: each device takes one */
        CHECK(tdag_vertex(&dag, a)->device != tdag_vertex(&dag, b)->device);
    /* The DAG names the array the views are of. */
    pg_array_desc d;
    REQUIRE_OK(pg_array_describe(x, &d));
    char *json = NULL;
    REQUIRE_OK(pg_dag_export_string(rt, PG_DAG_JSON, &json));
    char want[64];
    snprintf(want, sizeof want, "\"array\":%llu,", (unsigned long long)d.id);
    CHECK(strstr(json, want) != NULL);
    pg_string_free(json);
    CHECK_OK(pg_runtime_free(rt));
}

static uint64_t moved(pg_runtime *rt, int src, int dst) {
    pg_stats s;
    REQUIRE_OK(pg_runtime_stats(rt, &s));
    return s.link_bytes[src][dst];
}

/* Bytes moved for a scripted sequence on one device: each step copies only what is stale. */
static void bytes_by_range(void) {
    pg_runtime *rt = test_runtime_on("host:1", NULL, NULL);
    pg_kernel *f = test_kernel(rt, "fill", "out float *y, float v, int n");
    pg_kernel *a1 = test_kernel(rt, "add1", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N);
    pg_array *lo = view(x, 0, H), *hi = view(x, H, N);
    static float ones[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1;
    CHECK_OK(pg_array_write(x, 0, N, ones)); /* x on the host */
    CHECK_OK(pg_array_prefetch(lo, 0));      /* half of it to the device */
    CHECK(moved(rt, 0, 1) == H * 4);
    fill(f, hi, 5, H); /* written whole on the device: nothing copied in */
    CHECK(moved(rt, 0, 1) == H * 4);
    CHECK(all(x, 0, N, 1) == 0 && all(x, 0, H, 1) && all(x, H, N, 5));
    CHECK(moved(rt, 1, 0) == H * 4); /* the host read brought back hi only */
    add1(a1, y, x, N);               /* reads all of x on the device: lo and hi are there already */
    CHECK(moved(rt, 0, 1) == H * 4);
    CHECK(all(y, 0, H, 2) && all(y, H, N, 6));
    CHECK_OK(pg_array_write(lo, 0, 1, ones)); /* one element of lo: only lo is stale there */
    add1(a1, y, x, N);
    CHECK(moved(rt, 0, 1) == 2 * H * 4);
    CHECK_OK(pg_runtime_free(rt));
}

/* Two devices: a read of the whole array gathers each half from where it was written. */
static void gather_from_devices(void) {
    pg_runtime *rt = test_runtime_on("host:2", "round-robin", NULL);
    pg_kernel *f = test_kernel(rt, "fill", "out float *y, float v, int n");
    pg_kernel *a1 = test_kernel(rt, "add1", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N);
    pg_array *lo = view(x, 0, H), *hi = view(x, H, N);
    fill(f, lo, 1, H);
    fill(f, hi, 2, H);
    add1(a1, y, x, N); /* on one device: the other half comes over, not the whole array */
    CHECK(all(y, 0, H, 2) && all(y, H, N, 3));
    pg_stats s;
    REQUIRE_OK(pg_runtime_stats(rt, &s));
    CHECK(s.link_bytes[1][2] + s.link_bytes[2][1] == H * 4);
    CHECK(s.link_bytes[0][1] + s.link_bytes[0][2] == 0); /* nothing from the host */
    CHECK_OK(pg_runtime_free(rt));
}

/* Rows of a 2-D array, and a view of a view. */
static void rows_and_views_of_views(void) {
    pg_runtime *rt = test_runtime("host:2", NULL, NULL);
    pg_kernel *f = test_kernel(rt, "fill", "out float *y, float v, int n");
    int64_t shape[2] = {8, 16};
    pg_array *a;
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 2, shape, &a));
    pg_array *v = view(a, 2, 6), *w = view(v, 1, 3); /* rows 3 and 4 of a */
    pg_array_desc d;
    REQUIRE_OK(pg_array_describe(w, &d));
    CHECK(d.ndim == 2 && d.shape[0] == 2 && d.shape[1] == 16 && d.size == 32);
    fill(f, w, 7, 32);
    CHECK(all(a, 0, 3 * 16, 0) && all(a, 3 * 16, 5 * 16, 7) && all(a, 5 * 16, 8 * 16, 0));
    CHECK(all(v, 0, 16, 0) && all(v, 16, 48, 7) && all(v, 48, 64, 0));
    /* Writes through the parent are seen through the views, and the other way round. */
    float nine = 9;
    CHECK_OK(pg_array_write(a, 4 * 16, 1, &nine));
    float got = 0;
    CHECK_OK(pg_array_read(w, 16, 1, &got));
    CHECK(got == 9);
    CHECK_OK(pg_array_write(v, 0, 1, &nine));
    CHECK_OK(pg_array_read(a, 2 * 16, 1, &got));
    CHECK(got == 9);
    /* A map of a view is its rows of the parent. */
    float *m = NULL;
    CHECK_OK(pg_array_map(w, PG_ACCESS_INOUT, (void **)&m));
    CHECK(m[16] == 9 && m[0] == 7);
    m[1] = 11;
    CHECK_MSG(pg_array_unmap(v), PG_ERROR_STATE, "not mapped"); /* v itself was not mapped */
    CHECK_OK(pg_array_unmap(w));
    CHECK_OK(pg_array_read(a, 3 * 16 + 1, 1, &got));
    CHECK(got == 11);
    CHECK_OK(pg_runtime_free(rt));
}

/* Freeing the parent first keeps the memory while views live. */
static void parent_freed_first(void) {
    pg_runtime *rt = test_runtime("host:2", NULL, NULL);
    pg_kernel *f = test_kernel(rt, "fill", "out float *y, float v, int n");
    pg_kernel *a1 = test_kernel(rt, "add1", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, H);
    pg_array *lo = view(x, 0, H), *hi = view(x, H, N);
    fill(f, x, 4, N);
    CHECK_OK(pg_array_free(x));
    CHECK_STATUS(pg_array_free(x), PG_ERROR_STATE);
    CHECK(all(lo, 0, H, 4));
    add1(a1, y, hi, H);
    CHECK_OK(pg_array_free(hi));
    CHECK(all(y, 0, H, 5) && all(lo, 0, H, 4));
    pg_array *lolo = view(lo, 0, 10); /* a view of a view whose array is freed */
    CHECK(all(lolo, 0, 10, 4));
    CHECK_OK(pg_array_free(lo));
    CHECK(all(lolo, 0, 10, 4));
    CHECK_OK(pg_array_free(lolo));
    CHECK_OK(pg_runtime_free(rt));
}

static void misuse(void) {
    pg_runtime *rt = test_runtime("host:2", NULL, NULL);
    pg_array *x = test_array(rt, N), *v = NULL;
    CHECK_MSG(pg_array_slice(x, -1, 5, &v), PG_ERROR_ARGUMENT, "rows [-1, 5)");
    CHECK_MSG(pg_array_slice(x, 5, 5, &v), PG_ERROR_ARGUMENT, "0 <= lo < hi <= 1024");
    CHECK_MSG(pg_array_slice(x, 0, N + 1, &v), PG_ERROR_ARGUMENT, "rows [0, 1025)");
    CHECK_STATUS(pg_array_slice(x, 0, 5, NULL), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg_array_slice(NULL, 0, 5, &v), PG_ERROR_STATE);
    /* A bad handle is the error named even when out is NULL too (bindings rely on it). */
    CHECK_STATUS(pg_array_slice(NULL, 0, 5, NULL), PG_ERROR_STATE);
    pg_array *a = view(x, 0, 8);
    CHECK_MSG(pg_array_slice(a, 0, 9, &v), PG_ERROR_ARGUMENT, "<= 8"); /* within the view */
    /* A mapped array is not cut; the map and the runtime go on. */
    float *m = NULL;
    CHECK_OK(pg_array_map(x, PG_ACCESS_INOUT, (void **)&m));
    m[100] = 3;
    CHECK_MSG(pg_array_slice(x, 100, 200, &v), PG_ERROR_STATE, "mapped");
    CHECK_OK(pg_array_slice(x, 0, 8, &v)); /* no new cut: allowed */
    CHECK_OK(pg_array_unmap(x));
    pg_array *b = view(x, 100, 200);
    float got = 0;
    CHECK_OK(pg_array_read(b, 0, 1, &got));
    CHECK(got == 3);
    CHECK_OK(pg_array_free(v));
    /* A freed view is refused everywhere, like a freed array. */
    CHECK_OK(pg_array_free(b));
    CHECK_STATUS(pg_array_read(b, 0, 1, &got), PG_ERROR_STATE);
    CHECK_STATUS(pg_array_slice(b, 0, 1, &v), PG_ERROR_STATE);
    CHECK_OK(pg_runtime_free(rt));
}

/* A recording made before a view cut its array replays correctly after, and one over views. */
static void recordings_across_cuts(void) {
    pg_runtime *rt = test_runtime("host:2", NULL, NULL);
    pg_kernel *f = test_kernel(rt, "fill", NULL); /* inout: fill(y) y[i] = v */
    pg_kernel *a1 = test_kernel(rt, "add1", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N);
    pg_graph *g = NULL;
    REQUIRE_OK(pg_graph_begin(rt));
    add1(a1, y, x, N);
    add1(a1, x, y, N); /* x += 2 each replay */
    REQUIRE_OK(pg_graph_end(rt, &g));
    for (int r = 0; r < 4; r++)
        CHECK_OK(pg_graph_launch(g));
    CHECK(all(x, 0, N, 8));
    pg_array *lo = view(x, 0, H); /* cuts x: the plan's pieces are stale */
    fill(f, lo, 100, H);
    for (int r = 0; r < 4; r++)
        CHECK_OK(pg_graph_launch(g));
    CHECK(all(x, 0, H, 108) && all(x, H, N, 16));
    pg_graph *gv = NULL;
    REQUIRE_OK(pg_graph_begin(rt));
    fill(f, lo, 1, H);
    CHECK_MSG(pg_array_free(lo), PG_ERROR_STATE, "used by the graph");
    REQUIRE_OK(pg_graph_end(rt, &gv));
    for (int r = 0; r < 3; r++)
        CHECK_OK(pg_graph_launch(gv));
    CHECK(all(x, 0, H, 1) && all(x, H, N, 16));
    CHECK_OK(pg_graph_free(g));
    CHECK_OK(pg_graph_free(gv));
    CHECK_OK(pg_runtime_free(rt));
}

/* A recording whose calls touch more pieces than a kernel may have arguments (80 views, a
 * kernel on each and one on the whole): its plan replays take them all. */
static void many_pieces_replayed(void) {
    pg_runtime *rt = test_runtime("host:2", NULL, NULL);
    pg_kernel *f = test_kernel(rt, "scale", NULL);
    pg_array *x = test_array(rt, 800);
    pg_array *v[80];
    for (int i = 0; i < 80; i++)
        v[i] = view(x, i * 10, i * 10 + 10);
    static float ones[800];
    for (int i = 0; i < 800; i++)
        ones[i] = 1;
    CHECK_OK(pg_array_write(x, 0, 800, ones));
    pg_graph *g = NULL;
    REQUIRE_OK(pg_graph_begin(rt));
    for (int i = 0; i < 80; i++) {
        pg_arg a[] = {pg_arg_array(v[i]), pg_arg_float(2), pg_arg_int(10)};
        CHECK_OK(pg_kernel_launch(f, dim1(1), dim1(32), 0, a, 3));
    }
    REQUIRE_OK(pg_graph_end(rt, &g));
    for (int r = 0; r < 5; r++)
        CHECK_OK(pg_graph_launch(g));
    CHECK(all(x, 0, 800, 32));
    CHECK_OK(pg_graph_free(g));
    CHECK_OK(pg_runtime_free(rt));
}

/* Partitions of a split array made in order fill one device after another (a block
 * distribution) and stay there when overwritten; round-robin still rotates. */
static void partitions_in_blocks(const char *policy) {
    pg_runtime *rt = test_runtime_on("host:4", policy, NULL);
    pg_kernel *f = test_kernel(rt, "fill", "out float *y, float v, int n");
    pg_array *x = test_array(rt, 1600);
    pg_array *v[16];
    for (int i = 0; i < 16; i++)
        v[i] = view(x, i * 100, i * 100 + 100);
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 16; i++)
            fill(f, v[i], (float)i, 100);
    CHECK(all(x, 1500, 1600, 15));
    tdag_load(rt, &dag);
    int dev[32], changes = 0, per[4] = {0};
    for (int k = 0; k < 32; k++) {
        dev[k] = tdag_vertex(&dag, nth_kernel(k))->device;
        if (k < 16)
            per[dev[k]]++;
        if (k > 0 && k < 16 && dev[k] != dev[k - 1])
            changes++;
    }
    int stayed = 1;
    for (int k = 0; k < 16; k++)
        stayed &= dev[k] == dev[16 + k];
    if (!strcmp(policy, "round-robin")) {
        CHECK(changes == 15);
    } else {
        CHECK(changes == 3 && per[0] == 4 && per[1] == 4 && per[2] == 4 && per[3] == 4);
        CHECK(stayed);
    }
    CHECK_OK(pg_runtime_free(rt));
}

/* Copies of array `id` in the DAG, and the first of them. */
static int copies_of(uint64_t id, long *first) {
    char pre[32];
    int n = snprintf(pre, sizeof pre, "copy a%llu ", (unsigned long long)id), k = 0;
    *first = -1;
    for (int i = 0; i < dag.nv; i++)
        if (!strcmp(dag.v[i].kind, "copy") && !strncmp(dag.v[i].name, pre, (size_t)n)) {
            if (!k++)
                *first = dag.v[i].id;
        }
    return k;
}

/* A kernel reading a whole array whose partitions were made on the other device: the adjacent
 * partitions come over in one copy (bytes: all of them), ordered after each of their writers,
 * with the values right; a partition between them that is elsewhere splits the run. Then the
 * same in a recording replayed several times. */
static void adjacent_pieces_one_copy(void) {
    pg_runtime *rt = test_runtime_on("host:2", "min-transfer-size", NULL);
    pg_kernel *f = test_kernel(rt, "fill", "out float *y, float v, int n");
    pg_kernel *a1 = test_kernel(rt, "add1", NULL);
    enum { P = 8, R = N / P };
    pg_array *x = test_array(rt, N), *y = test_array(rt, N), *v[P];
    pg_array_desc xd;
    REQUIRE_OK(pg_array_describe(x, &xd));
    for (int i = 0; i < P; i++)
        v[i] = view(x, i * R, i * R + R);
    for (int i = 0; i < P; i++) /* in blocks: 0-3 on one device, 4-7 on the other */
        fill(f, v[i], (float)i, R);
    add1(a1, y, x, N); /* reads all of x: half of it is on the other device */
    tdag_load(rt, &dag);
    int d0 = tdag_vertex(&dag, nth_kernel(0))->device;
    CHECK(d0 != tdag_vertex(&dag, nth_kernel(P - 1))->device);
    CHECK(tdag_vertex(&dag, nth_kernel(P / 2 - 1))->device == d0);
    long add = nth_kernel(P), c0;
    int da = tdag_vertex(&dag, add)->device;
    CHECK(copies_of(xd.id, &c0) == 1); /* one copy of four pieces */
    for (int i = 0; i < P; i++) {      /* after each writer of what it moves */
        long w = nth_kernel(i);
        CHECK(tdag_vertex(&dag, w)->device == da ? tdag_edge(&dag, w, add)
                                                 : tdag_edge(&dag, w, c0));
    }
    CHECK(tdag_edge(&dag, c0, add));
    pg_stats s;
    REQUIRE_OK(pg_runtime_stats(rt, &s));
    CHECK(s.copies == 1 && s.bytes_moved == (uint64_t)(P / 2) * R * 4);
    for (int i = 0; i < P; i++)
        CHECK(all(y, i * R, i * R + R, (float)i + 1));
    /* Piece 5 written whole on the host, 4, 6 and 7 again on their device: where 0-3 were
     * made, x needs three copies ([4], [5] from the host, [6, 7]); where 4-7 are, [5] and
     * [0-3] unless the first add brought them there. */
    static float nines[R];
    for (int i = 0; i < R; i++)
        nines[i] = 9;
    for (int i = 4; i < P; i++)
        if (i == 5)
            CHECK_OK(pg_array_write(v[5], 0, R, nines));
        else
            fill(f, v[i], (float)i, R);
    add1(a1, y, x, N);
    tdag_load(rt, &dag);
    int db = tdag_vertex(&dag, nth_kernel(P + 4))->device;
    /* (0-3 are on the other device too when the first add ran there) */
    CHECK(copies_of(xd.id, &c0) == 1 + (db == d0 ? 3 : da == d0 ? 2 : 1));
    CHECK(all(y, 5 * R, 5 * R + 1, 10) && all(y, 6 * R, N, 7) == 0 && all(y, 7 * R, N, 8));
    /* Recorded and replayed: the result each time as if issued again. */
    pg_graph *g = NULL;
    REQUIRE_OK(pg_graph_begin(rt));
    for (int i = 0; i < P; i++)
        fill(f, v[i], (float)(10 * i), R);
    add1(a1, y, x, N);
    REQUIRE_OK(pg_graph_end(rt, &g));
    for (int r = 0; r < 4; r++) {
        for (int i = 0; i < P; i++) /* what the replay overwrites */
            CHECK_OK(pg_array_write(v[i], 0, 1, &(float){-1}));
        CHECK_OK(pg_graph_launch(g));
        for (int i = 0; i < P; i++)
            CHECK(all(y, i * R, i * R + R, (float)(10 * i) + 1));
    }
    CHECK_OK(pg_graph_free(g));
    CHECK_OK(pg_runtime_free(rt));
}

/* Pieces of root x now (0: never cut, or merged back into one). */
static int npieces(pg_array *x) {
    pg__array *a = pg__handle_get((uint64_t)(uintptr_t)x, PG__H_ARRAY);
    REQUIRE_OK(a ? PG_OK : PG_ERROR_INTERNAL);
    return a->store->npieces;
}

/* 100 throw-away windows x[i:i+8], each used by a kernel, cut x into 108 pieces; once they are
 * gone their pieces merge back, so a kernel on all of x (which may cover at most 64 pieces)
 * runs, with the right values; also with a view still alive on another range, whose cuts
 * stay. The windows' kernels may still be running at the launch on x (it waits for them) or
 * have finished (they merged on the way). */
static void throwaway_windows(int keep, int per_window_sync) {
    pg_runtime *rt = test_runtime("host:2", "round-robin", NULL);
    pg_kernel *f = test_kernel(rt, "scale", NULL);
    enum { M = 800, W = 100 };
    pg_array *x = test_array(rt, M);
    static float v[M], want[M];
    for (int i = 0; i < M; i++)
        want[i] = v[i] = (float)(i % 13);
    CHECK_OK(pg_array_write(x, 0, M, v));
    pg_array *kept = keep ? view(x, 700, 750) : NULL;
    for (int i = 0; i < W; i++) {
        pg_array *w = view(x, i, i + 8);
        pg_arg a[] = {pg_arg_array(w), pg_arg_float(2), pg_arg_int(8)};
        CHECK_OK(pg_kernel_launch(f, dim1(1), dim1(32), 0, a, 3));
        CHECK_OK(pg_array_free(w));
        for (int e = i; e < i + 8; e++)
            want[e] *= 2;
        if (per_window_sync)
            CHECK_OK(pg_runtime_sync(rt));
    }
    pg_arg a[] = {pg_arg_array(x), pg_arg_float(0.5f), pg_arg_int(M)};
    CHECK_OK(pg_kernel_launch(f, dim1(M / 32 + 1), dim1(32), 0, a, 3));
    for (int e = 0; e < M; e++)
        want[e] *= 0.5f;
    static float got[M];
    CHECK_OK(pg_array_read(x, 0, M, got));
    CHECK(!memcmp(got, want, sizeof got));
    /* The whole array written by one kernel: one state, so the next launch merges what is left
     * (keeping the live view's cuts). */
    CHECK_OK(pg_kernel_launch(f, dim1(M / 32 + 1), dim1(32), 0, a, 3));
    CHECK_OK(pg_runtime_sync(rt));
    CHECK(npieces(x) == (keep ? 3 : 0));
    if (kept) {

        static float k[50];
        CHECK_OK(pg_array_read(kept, 0, 50, k));
        for (int e = 0; e < 50; e++)
            CHECK(k[e] == want[700 + e] * 0.5f);
        CHECK_OK(pg_array_free(kept));
        /* Its rows were read to the host, the others not: they merge once a kernel wrote all
         * (a merge never drops a current copy unless a launch needs it). */
        CHECK_OK(pg_kernel_launch(f, dim1(M / 32 + 1), dim1(32), 0, a, 3));
        CHECK_OK(pg_kernel_launch(f, dim1(M / 32 + 1), dim1(32), 0, a, 3));
        CHECK_OK(pg_runtime_sync(rt));
        CHECK(npieces(x) == 0); /* its cuts went with it */
    }
    CHECK_OK(pg_runtime_free(rt));
}

/* A merge adds no dependency: pieces merge only when their computations agree, so a view made
 * after others were freed depends only on work over its own rows (here: the first half's
 * kernel, not the second's, whether either finished or not). */
static void merge_adds_no_edges(void) {
    pg_runtime *rt = test_runtime("host:2", "round-robin", NULL);
    pg_kernel *k = test_kernel(rt, "fill", "out float *y, float v, int n");
    pg_array *x = test_array(rt, N);
    for (int round = 0; round < 20; round++) {
        pg_array *a = view(x, 0, H / 2), *b = view(x, H / 2, H), *c = view(x, H, N);
        fill(k, a, 1, H / 2);
        fill(k, b, 2, H / 2);
        fill(k, c, 3, H);
        CHECK_OK(pg_array_free(a));
        CHECK_OK(pg_array_free(b));
        CHECK_OK(pg_array_free(c));
        pg_array *d = view(x, 0, H / 4);
        fill(k, d, 4, H / 4);
        CHECK_OK(pg_array_free(d));
        tdag_load(rt, &dag);
        long ka = nth_kernel(4 * round), kb = nth_kernel(4 * round + 1),
             kc = nth_kernel(4 * round + 2), kd = nth_kernel(4 * round + 3);
        CHECK(tdag_edge(&dag, ka, kd) && !tdag_edge(&dag, kb, kd) && !tdag_edge(&dag, kc, kd));
        CHECK_OK(pg_runtime_sync(rt));
    }
    CHECK(all(x, 0, H / 4, 4) && all(x, H / 4, H / 2, 1) && all(x, H / 2, H, 2) && all(x, H, N, 3));
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    const char *policies[] = {"round-robin", "stream-aware", "min-transfer-size",
                              "minmax-transfer-time", "min-transfer-time"};
    for (int p = 0; p < 5; p++)
        disjoint_and_overlapping(policies[p]);
    bytes_by_range();
    gather_from_devices();
    rows_and_views_of_views();
    parent_freed_first();
    misuse();
    recordings_across_cuts();
    many_pieces_replayed();
    adjacent_pieces_one_copy();
    for (int k = 0; k < 4; k++)
        throwaway_windows(k & 1, k >> 1);
    merge_adds_no_edges();
    for (int p = 0; p < 5; p++)
        partitions_in_blocks(policies[p]);
    CHECK_DONE();
}

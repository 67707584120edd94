/* test_dag_api.c: the DAG as data (pg_dag_snapshot and its accessors) on small programs whose
 * DAG is known exactly, the exports written from the same data, and misuse of the API. */
#include "kernels_common.h"

#define N 1000

static uint64_t array_id(pg_array *a) {
    pg_array_desc d;
    REQUIRE_OK(pg_array_describe(a, &d));
    return d.id;
}

static size_t vcount(const pg_dag *g) {
    size_t n = 0;
    REQUIRE_OK(pg_dag_vertex_count(g, &n));
    return n;
}

static size_t ecount(const pg_dag *g) {
    size_t n = 0;
    REQUIRE_OK(pg_dag_edge_count(g, &n));
    return n;
}

static pg_dag_vertex_info vertex(const pg_dag *g, size_t i) {
    pg_dag_vertex_info v;
    memset(&v, 0xab, sizeof v);
    REQUIRE_OK(pg_dag_vertex(g, i, &v));
    return v;
}

static int has_edge(const pg_dag *g, uint64_t from, uint64_t to) {
    for (size_t i = 0; i < ecount(g); i++) {
        uint64_t f, t;
        REQUIRE_OK(pg_dag_edge(g, i, &f, &t));
        if (f == from && t == to)
            return 1;
    }
    return 0;
}

static void launch(pg_kernel *k, const pg_arg *args, int n) {
    REQUIRE_OK(pg_kernel_launch(k, dim1(4), dim1(256), 0, args, n));
}

/* k1 writes a, k2 reads a and updates b: two kernel vertices and the one edge k1 -> k2, with
 * every field as the program says. */
static void known_program(void) {
    pg_runtime *rt = test_runtime_on("host:1", "round-robin", "async");
    pg_kernel *fill_out = test_kernel(rt, "fill", "out float *y, float v, int n");
    pg_kernel *add1 = test_kernel(rt, "add1", NULL);
    pg_array *a = test_array(rt, N), *b = test_array(rt, N);
    pg_arg k1[] = {pg_arg_array(a), pg_arg_float(1), pg_arg_int(N)};
    pg_arg k2[] = {pg_arg_array(b), pg_arg_array(a), pg_arg_int(N)};
    launch(fill_out, k1, 3);
    launch(add1, k2, 3);

    pg_dag *g = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &g));
    CHECK(vcount(g) == 2);
    CHECK(ecount(g) == 1);
    pg_dag_vertex_info v1 = vertex(g, 0), v2 = vertex(g, 1);
    CHECK(v1.kind == PG_DAG_KERNEL && v2.kind == PG_DAG_KERNEL);
    CHECK(!strcmp(v1.name, "fill") && !strcmp(v2.name, "add1"));
    CHECK(v1.id > 0 && v2.id > v1.id); /* oldest first */
    CHECK(v1.device == 0 && v2.device == 0);
    CHECK(v1.stream >= 0 && v1.stream < PG_DAG_COPY_STREAM && v2.stream >= 0);
    CHECK(v1.nargs == 1 && v1.args[0].array == array_id(a) && v1.args[0].access == PG_ACCESS_OUT);
    CHECK(v2.nargs == 2);
    CHECK(v2.args[0].array == array_id(b) && v2.args[0].access == PG_ACCESS_INOUT);
    CHECK(v2.args[1].array == array_id(a) && v2.args[1].access == PG_ACCESS_IN);
    CHECK(v1.submit_ns <= v2.submit_ns);
    CHECK(v1.bytes == 0 && v1.src == PG_HOST && v1.dst == PG_HOST); /* copies only */
    uint64_t from = 0, to = 0;
    CHECK_OK(pg_dag_edge(g, 0, &from, &to));
    CHECK(from == v1.id && to == v2.id);

    /* Once finished, CPU devices have timed both. */
    REQUIRE_OK(pg_runtime_sync(rt));
    pg_dag *timed = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &timed));
    CHECK(vcount(timed) == 2);
    for (size_t i = 0; i < vcount(timed); i++) {
        pg_dag_vertex_info v = vertex(timed, i);
        CHECK(v.start_ns > 0 && v.end_ns >= v.start_ns);
    }

    /* Reading b on the host: the read (numbered first: it is accepted before it asks for its
     * copy) and b's copy to the host, both after k2, the read also after the copy. */
    float x = 0;
    REQUIRE_OK(pg_array_read(b, 0, 1, &x));
    CHECK(x == 2.0f);
    pg_dag *read = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &read));
    CHECK(vcount(read) == 4);
    pg_dag_vertex_info host = vertex(read, 2), copy = vertex(read, 3);
    CHECK(copy.kind == PG_DAG_COPY && copy.bytes == N * sizeof(float));
    CHECK(copy.src == 0 && copy.dst == PG_HOST && copy.device == 0);
    CHECK(host.kind == PG_DAG_HOST_READ && host.device == PG_HOST && host.stream == -1);
    CHECK(host.nargs == 1 && host.args[0].array == array_id(b) &&
          host.args[0].access == PG_ACCESS_IN);
    CHECK(ecount(read) == 4);
    CHECK(has_edge(read, v1.id, v2.id) && has_edge(read, v2.id, host.id));
    CHECK(has_edge(read, v2.id, copy.id) && has_edge(read, copy.id, host.id));

    /* The first snapshot is a copy: later work does not show in it. */
    launch(add1, k2, 3);
    CHECK(vcount(g) == 2 && ecount(g) == 1);
    CHECK(vertex(g, 1).id == v2.id);

    /* The exports are written from the same data: after a sync nothing changes between the
     * runtime's export and a snapshot's, so they are the same text. */
    REQUIRE_OK(pg_runtime_sync(rt));
    pg_dag *now = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &now));
    for (int f = PG_DAG_DOT; f <= PG_DAG_JSON; f++) {
        char *from_rt = NULL, *from_snapshot = NULL;
        REQUIRE_OK(pg_dag_export_string(rt, (pg_dag_format)f, &from_rt));
        REQUIRE_OK(pg_dag_to_string(now, (pg_dag_format)f, &from_snapshot));
        CHECK(!strcmp(from_rt, from_snapshot));
        pg_string_free(from_rt);
        pg_string_free(from_snapshot);
    }
    /* Every vertex of the snapshot is in the JSON with its fields. */
    char *json = NULL;
    REQUIRE_OK(pg_dag_to_string(now, PG_DAG_JSON, &json));
    static const char *kinds[] = {"kernel", "host_read", "host_write", "copy"};
    for (size_t i = 0; i < vcount(now); i++) {
        pg_dag_vertex_info v = vertex(now, i);
        char want[256];
        snprintf(want, sizeof want, "{\"id\":%llu,\"kind\":\"%s\",\"name\":\"%s\",\"device\":%d,",
                 (unsigned long long)v.id, kinds[v.kind], v.name, v.device);
        CHECK(strstr(json, want) != NULL);
        snprintf(want, sizeof want, "\"submit_ns\":%llu,\"start_ns\":%llu,\"end_ns\":%llu",
                 (unsigned long long)v.submit_ns, (unsigned long long)v.start_ns,
                 (unsigned long long)v.end_ns);
        CHECK(strstr(json, want) != NULL);
    }
    for (size_t i = 0; i < ecount(now); i++) {
        uint64_t f, t;
        REQUIRE_OK(pg_dag_edge(now, i, &f, &t));
        char want[64];
        snprintf(want, sizeof want, "[%llu,%llu]", (unsigned long long)f, (unsigned long long)t);
        CHECK(strstr(json, want) != NULL);
    }
    pg_string_free(json);
    size_t before_close = vcount(now);

    /* Snapshots outlive the runtime. */
    CHECK_OK(pg_array_free(a));
    CHECK_OK(pg_array_free(b));
    CHECK_OK(pg_kernel_free(fill_out));
    CHECK_OK(pg_kernel_free(add1));
    CHECK_OK(pg_runtime_free(rt));
    CHECK(vcount(now) == before_close && vcount(g) == 2);
    CHECK(!strcmp(vertex(g, 0).name, "fill") && vertex(g, 1).args[1].access == PG_ACCESS_IN);
    CHECK_OK(pg_dag_edge(g, 0, &from, &to));
    CHECK(from == v1.id && to == v2.id);
    char *dot = NULL;
    CHECK_OK(pg_dag_to_string(now, PG_DAG_DOT, &dot));
    CHECK(dot && strstr(dot, "digraph") && strstr(dot, "add1"));
    pg_string_free(dot);
    pg_dag *late = NULL;
    CHECK_STATUS(pg_dag_snapshot(rt, &late), PG_ERROR_STATE);
    CHECK(late == NULL);
    pg_dag_free(g);
    pg_dag_free(timed);
    pg_dag_free(read);
    pg_dag_free(now);
}

/* A copy between two devices (a prefetch) carries its bytes and both ends. */
static void copy_between_devices(void) {
    pg_runtime *rt = test_runtime_on("host:2", "round-robin", "async");
    pg_kernel *fill_out = test_kernel(rt, "fill", "out float *y, float v, int n");
    pg_array *a = test_array(rt, N);
    pg_arg k1[] = {pg_arg_array(a), pg_arg_float(1), pg_arg_int(N)};
    launch(fill_out, k1, 3);
    pg_dag *g = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &g));
    CHECK(vcount(g) == 1);
    int dev = vertex(g, 0).device, other = 1 - dev;
    uint64_t writer = vertex(g, 0).id;
    pg_dag_free(g);
    REQUIRE_OK(pg_array_prefetch(a, other));
    REQUIRE_OK(pg_runtime_sync(rt));
    REQUIRE_OK(pg_dag_snapshot(rt, &g));
    CHECK(vcount(g) == 2);
    pg_dag_vertex_info c = vertex(g, 1);
    CHECK(c.kind == PG_DAG_COPY && c.src == dev && c.dst == other);
    CHECK(c.bytes == N * sizeof(float));
    CHECK(c.nargs == 1 && c.args[0].array == array_id(a));
    CHECK(has_edge(g, writer, c.id));
    pg_dag_free(g);
    CHECK_OK(pg_array_free(a));
    CHECK_OK(pg_kernel_free(fill_out));
    CHECK_OK(pg_runtime_free(rt));
}

/* Bad indexes and NULLs: a clear error, nothing written. */
static void misuse(void) {
    pg_runtime *rt = test_runtime_on("host:1", "round-robin", "async");
    pg_kernel *fill_out = test_kernel(rt, "fill", "out float *y, float v, int n");
    pg_array *a = test_array(rt, N);
    pg_arg k1[] = {pg_arg_array(a), pg_arg_float(1), pg_arg_int(N)};
    launch(fill_out, k1, 3);
    pg_dag *g = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &g));
    size_t n = vcount(g);
    CHECK(n == 1 && ecount(g) == 0);
    pg_dag_vertex_info v;
    memset(&v, 0x5a, sizeof v);
    CHECK_STATUS(pg_dag_vertex(g, n, &v), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "index 1 is out of range") &&
          strstr(pg_last_error(), "1 vertices"));
    CHECK(v.id == 0x5a5a5a5a5a5a5a5aull); /* untouched */
    CHECK_STATUS(pg_dag_vertex(g, (size_t)-1, &v), PG_ERROR_ARGUMENT);
    uint64_t f = 7, t = 7;
    CHECK_STATUS(pg_dag_edge(g, 0, &f, &t), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "pg_dag_edge: index 0 is out of range"));
    CHECK(f == 7 && t == 7);
    CHECK_STATUS(pg_dag_vertex(NULL, 0, &v), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "dag must not be NULL"));
    CHECK_STATUS(pg_dag_vertex(g, 0, NULL), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg_dag_edge(g, 0, NULL, &t), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg_dag_vertex_count(NULL, &n), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg_dag_edge_count(g, NULL), PG_ERROR_ARGUMENT);
    char *s = NULL;
    CHECK_STATUS(pg_dag_to_string(g, (pg_dag_format)7, &s), PG_ERROR_ARGUMENT);
    CHECK(s == NULL && strstr(pg_last_error(), "unknown DAG format 7"));
    CHECK_STATUS(pg_dag_to_string(NULL, PG_DAG_JSON, &s), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg_dag_snapshot(rt, NULL), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg_dag_snapshot(NULL, &g), PG_ERROR_STATE);
    /* A failed call left the snapshot and the runtime as they were. */
    CHECK(vertex(g, 0).kind == PG_DAG_KERNEL);
    CHECK_OK(pg_dag_vertex(g, 0, &v));
    CHECK(!strcmp(pg_last_error(), "")); /* a good call clears the message */
    pg_dag_free(g);
    pg_dag_free(NULL);
    CHECK_OK(pg_array_free(a));
    CHECK_OK(pg_kernel_free(fill_out));
    CHECK_OK(pg_runtime_free(rt));
}

/* The names the exports and the bindings use, one place for all. */
static void names(void) {
    CHECK(!strcmp(pg_dag_kind_name(PG_DAG_KERNEL), "kernel"));
    CHECK(!strcmp(pg_dag_kind_name(PG_DAG_HOST_READ), "host_read"));
    CHECK(!strcmp(pg_dag_kind_name(PG_DAG_HOST_WRITE), "host_write"));
    CHECK(!strcmp(pg_dag_kind_name(PG_DAG_COPY), "copy"));
    CHECK(!strcmp(pg_dag_kind_name((pg_dag_kind)99), "?"));
    CHECK(!strcmp(pg_access_name(PG_ACCESS_IN), "in"));
    CHECK(!strcmp(pg_access_name(PG_ACCESS_OUT), "out"));
    CHECK(!strcmp(pg_access_name(PG_ACCESS_INOUT), "inout"));
    CHECK(!strcmp(pg_access_name((pg_access)0), "?"));
}

int main(void) {
    names();
    known_program();
    copy_between_devices();
    misuse();
    CHECK_DONE();
}

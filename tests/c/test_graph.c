/* test_graph.c: recordings (pg_graph_*): a recorded block runs nothing until replayed, each
 * replay equals issuing the calls eagerly then (values, dependencies on work before and after,
 * the DAG), plans take over once the arrays are as a captured replay left them (one DAG vertex
 * per replay, no copy eager calls would not make), and every misuse the header names is
 * refused with a message that names it. */
#include "kernels_common.h"

#include <pthread.h>

enum { N = 1000 };

static int64_t kernel_vertices(pg_runtime *rt) {
    pg_dag *d = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &d));
    size_t count = 0;
    REQUIRE_OK(pg_dag_vertex_count(d, &count));
    int64_t n = 0;
    for (size_t i = 0; i < count; i++) {
        pg_dag_vertex_info v;
        REQUIRE_OK(pg_dag_vertex(d, i, &v));
        n += v.kind == PG_DAG_KERNEL;
    }
    pg_dag_free(d);
    return n;
}

static unsigned long long id_of(pg_array *a) {
    pg_array_desc d;
    REQUIRE_OK(pg_array_describe(a, &d));
    return (unsigned long long)d.id;
}

static void fill_host(pg_array *a, float v) {
    static float buf[N];
    for (int i = 0; i < N; i++)
        buf[i] = v + (float)i;
    REQUIRE_OK(pg_array_write(a, 0, N, buf));
}

static float at(pg_array *a, int i) {
    float v = -1;
    CHECK_OK(pg_array_read(a, (uint64_t)i, 1, &v));
    return v;
}

/* y = x + 1; z = y + y; y *= 3: three recorded calls, replayed with x changed in between. */
static void replay_equals_eager(const char *devices, const char *policy) {
    pg_runtime *rt = test_runtime(devices, policy, NULL);
    pg_kernel *add1 = test_kernel(rt, "add1", NULL), *sum2 = test_kernel(rt, "sum2", NULL);
    pg_kernel *scale = test_kernel(rt, "scale", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N), *z = test_array(rt, N);
    fill_host(x, 1);
    fill_host(y, 100);
    pg_arg a1[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    pg_arg a2[] = {pg_arg_array(z), pg_arg_array(y), pg_arg_array(y), pg_arg_int(N)};
    pg_arg a3[] = {pg_arg_array(y), pg_arg_float(3), pg_arg_int(N)};
    int64_t before = kernel_vertices(rt);
    REQUIRE_OK(pg_graph_begin(rt));
    CHECK_OK(pg_kernel_launch(add1, dim1(4), dim1(256), 0, a1, 3));
    CHECK_OK(pg_kernel_launch(sum2, dim1(4), dim1(256), 0, a2, 4));
    CHECK_OK(pg_kernel_launch(scale, dim1(4), dim1(256), 0, a3, 3));
    /* A bad call is refused at recording, and not recorded. */
    CHECK_MSG(pg_kernel_launch(add1, dim1(4), dim1(256), 0, a1, 2), PG_ERROR_ARGUMENT,
              "takes 3 arguments");
    pg_graph *g = NULL;
    REQUIRE_OK(pg_graph_end(rt, &g));
    int64_t calls = -1;
    CHECK_OK(pg_graph_calls(g, &calls));
    CHECK(calls == 3);
    /* Nothing ran: y still holds what the host wrote, and the DAG shows no kernel. */
    CHECK(at(y, 5) == 105.0f);
    CHECK(kernel_vertices(rt) == before);
    for (int r = 0; r < 3; r++) {
        fill_host(x, (float)(10 * r)); /* work before the replay: it must see this x */
        CHECK_OK(pg_graph_launch(g));
        /* y = x + 1, z = 2 y, then y = 3 y */
        float want_y = 3 * ((float)(10 * r) + 7 + 1), want_z = 2 * ((float)(10 * r) + 7 + 1);
        CHECK(at(y, 7) == want_y); /* work after the replay waits for it */
        CHECK(at(z, 7) == want_z);
    }
    /* A replay that captures a plan shows its calls (3 vertices), one that issues a plan shows
     * one vertex; the first replay always captures. */
    int64_t added = kernel_vertices(rt) - before;
    CHECK(added >= 3 + 1 + 1 && added <= 9);
    CHECK_OK(pg_graph_free(g));
    CHECK_STATUS(pg_graph_launch(g), PG_ERROR_STATE); /* freed */
    CHECK_OK(pg_runtime_free(rt));
}

static uint64_t bytes_moved(pg_runtime *rt) {
    pg_stats s;
    REQUIRE_OK(pg_runtime_stats(rt, &s));
    return s.bytes_moved;
}

static int last_kernel_is_replay(pg_runtime *rt, int ncalls) {
    pg_dag *d = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &d));
    size_t count = 0;
    REQUIRE_OK(pg_dag_vertex_count(d, &count));
    char want[64];
    snprintf(want, sizeof want, "graph replay (%d calls)", ncalls);
    int found = 0;
    for (size_t i = count; i-- > 0;) {
        pg_dag_vertex_info v;
        REQUIRE_OK(pg_dag_vertex(d, i, &v));
        if (v.kind == PG_DAG_KERNEL) {
            found = !strcmp(v.name, want);
            break;
        }
    }
    pg_dag_free(d);
    return found;
}

/* x = 2 (x + 1), as two recorded calls (y = x + 1; x = y + y), replayed 8 times: each value
 * is what eager calls make; from the fourth replay on, each replay issues the plan (one DAG
 * vertex); on one device the steady replays move no bytes, as eager calls would not. */
static void plan_replays(const char *devices, const char *policy) {
    pg_runtime *rt = test_runtime(devices, policy, NULL);
    pg_kernel *add1 = test_kernel(rt, "add1", NULL), *sum2 = test_kernel(rt, "sum2", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N), *out = test_array(rt, N);
    fill_host(x, 0);
    pg_arg a1[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    pg_arg a2[] = {pg_arg_array(x), pg_arg_array(y), pg_arg_array(y), pg_arg_int(N)};
    pg_graph *g = NULL;
    REQUIRE_OK(pg_graph_begin(rt));
    CHECK_OK(pg_kernel_launch(add1, dim1(4), dim1(256), 0, a1, 3));
    CHECK_OK(pg_kernel_launch(sum2, dim1(4), dim1(256), 0, a2, 4));
    REQUIRE_OK(pg_graph_end(rt, &g));
    double want[N];
    for (int i = 0; i < N; i++)
        want[i] = i;
    int one_device = !strcmp(devices, "host:1");
    for (int r = 0; r < 8; r++) {
        int64_t before = kernel_vertices(rt);
        uint64_t moved = bytes_moved(rt);
        CHECK_OK(pg_graph_launch(g));
        for (int i = 0; i < N; i++)
            want[i] = 2 * (want[i] + 1);
        if (r >= 3) {
            CHECK(kernel_vertices(rt) == before + 1);
            CHECK(last_kernel_is_replay(rt, 2));
        }
        if (one_device && r >= 2)
            CHECK(bytes_moved(rt) == moved); /* x and y stay on the device */
    }
    /* Work after the replays sees their result, wherever it runs. */
    pg_arg a3[] = {pg_arg_array(out), pg_arg_array(x), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(add1, dim1(4), dim1(256), 0, a3, 3));
    int bad = 0;
    for (int i = 0; i < N; i += 37)
        bad += at(x, i) != (float)want[i] || at(out, i) != (float)want[i] + 1;
    CHECK(bad == 0);
    /* The host writes x between replays: each replay reads the new x (plans bring it). */
    for (int r = 0; r < 6; r++) {
        fill_host(x, (float)r);
        int64_t before = kernel_vertices(rt);
        CHECK_OK(pg_graph_launch(g));
        CHECK(at(x, 9) == 2 * ((float)r + 9 + 1));
        CHECK(at(y, 9) == (float)r + 9 + 1);
        if (r >= 3)
            CHECK(kernel_vertices(rt) == before + 1);
    }
    /* A host write through a map between replays. */
    void *p;
    CHECK_OK(pg_array_map(x, PG_ACCESS_INOUT, &p));
    ((float *)p)[5] = 1;
    CHECK_OK(pg_array_unmap(x));
    CHECK_OK(pg_graph_launch(g));
    CHECK(at(x, 5) == 4.0f);
    CHECK_OK(pg_graph_free(g));
    CHECK_OK(pg_runtime_free(rt));
}

typedef struct other_thread {
    pg_kernel *k;
    pg_arg *args;
    pg_status st;
    char msg[512];
} other_thread;

static void *launch_elsewhere(void *p) {
    other_thread *o = p;
    o->st = pg_kernel_launch(o->k, dim1(4), dim1(256), 0, o->args, 3);
    snprintf(o->msg, sizeof o->msg, "%s", pg_last_error());
    return NULL;
}

static void misuse(void) {
    pg_runtime *rt = test_runtime("host:2", NULL, NULL),
               *other = test_runtime("host:1", NULL, NULL);
    pg_kernel *add1 = test_kernel(rt, "add1", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N), *free_me = test_array(rt, N);
    pg_array *unused = test_array(rt, N), *o = test_array(other, N);
    pg_arg args[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    pg_arg args2[] = {pg_arg_array(free_me), pg_arg_array(x), pg_arg_int(N)};
    pg_graph *g = NULL;
    CHECK_MSG(pg_graph_end(rt, &g), PG_ERROR_STATE, "not recording");
    REQUIRE_OK(pg_graph_begin(rt));
    CHECK_MSG(pg_graph_begin(rt), PG_ERROR_STATE, "do not nest");
    CHECK_OK(pg_kernel_launch(add1, dim1(4), dim1(256), 0, args, 3));
    CHECK_OK(pg_kernel_launch(add1, dim1(4), dim1(256), 0, args2, 3));
    float v;
    void *p;
    char want[64];
    snprintf(want, sizeof want, "array %llu", id_of(y));
    CHECK_MSG(pg_array_read(y, 0, 1, &v), PG_ERROR_STATE, want);
    CHECK_MSG(pg_array_write(y, 0, 1, &v), PG_ERROR_STATE, "records a graph");
    CHECK_MSG(pg_array_map(x, PG_ACCESS_IN, &p), PG_ERROR_STATE, "records a graph");
    CHECK_MSG(pg_array_prefetch(x, PG_HOST), PG_ERROR_STATE, "records a graph");
    CHECK_MSG(pg_runtime_sync(rt), PG_ERROR_STATE, "pg_runtime_sync");
    unsigned long long free_id = id_of(free_me);
    snprintf(want, sizeof want, "array %llu is used by the graph", free_id);
    CHECK_MSG(pg_array_free(free_me), PG_ERROR_STATE, want);
    CHECK_OK(pg_array_free(unused)); /* not recorded: free to go */
    /* Any call on another runtime inside the recording. */
    CHECK_MSG(pg_array_read(o, 0, 1, &v), PG_ERROR_STATE, "another runtime");
    CHECK_MSG(pg_runtime_sync(other), PG_ERROR_STATE, "another runtime");
    /* Another thread's launch while the runtime records. */
    other_thread t = {add1, args, PG_OK, ""};
    pthread_t th;
    pthread_create(&th, NULL, launch_elsewhere, &t);
    pthread_join(th, NULL);
    CHECK(t.st == PG_ERROR_STATE && strstr(t.msg, "another thread"));
    REQUIRE_OK(pg_graph_end(rt, &g));
    /* The recording is over: everything works again, on both runtimes. */
    CHECK_OK(pg_array_read(o, 0, 1, &v));
    CHECK_OK(pg_runtime_sync(rt));
    int64_t calls = 0;
    CHECK_OK(pg_graph_calls(g, &calls));
    CHECK(calls == 2);
    CHECK_OK(pg_graph_launch(g));
    CHECK(at(y, 3) == 1.0f); /* x was never written: zeros, plus one */
    /* A replay after a recorded array was freed fails, naming it, and issues nothing. */
    int64_t before = kernel_vertices(rt);
    CHECK_OK(pg_array_free(free_me));
    snprintf(want, sizeof want, "array %llu, used by recorded call 2", free_id);
    CHECK_MSG(pg_graph_launch(g), PG_ERROR_STATE, want);
    CHECK(kernel_vertices(rt) == before);
    /* Recording, then closing the runtime with the recording and a graph alive. */
    REQUIRE_OK(pg_graph_begin(rt));
    CHECK_OK(pg_kernel_launch(add1, dim1(4), dim1(256), 0, args, 3));
    CHECK_MSG(pg_graph_launch(g), PG_ERROR_STATE, "recording");
    CHECK_OK(pg_runtime_free(rt));
    CHECK_STATUS(pg_graph_launch(g), PG_ERROR_STATE);
    CHECK_STATUS(pg_graph_free(g), PG_ERROR_STATE);
    /* The thread's recording ended with its runtime: the other runtime works. */
    CHECK_OK(pg_array_read(o, 0, 1, &v));
    CHECK_OK(pg_runtime_free(other));
}

/* pg_graph_call: each recorded call's kernel, shape and arrays (a view's range). */
static void call_info(void) {
    pg_runtime *rt = test_runtime("host:2", NULL, NULL);
    pg_kernel *add1 = test_kernel(rt, "add1", NULL), *scale = test_kernel(rt, "scale", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N), *hi = NULL;
    REQUIRE_OK(pg_array_slice(y, N / 2, N, &hi));
    pg_arg a1[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    pg_arg a2[] = {pg_arg_array(hi), pg_arg_float(2), pg_arg_int(N / 2)};
    pg_graph *g = NULL;
    REQUIRE_OK(pg_graph_begin(rt));
    CHECK_OK(pg_kernel_launch(add1, dim1(4), dim1(256), 0, a1, 3));
    CHECK_OK(pg_kernel_launch(scale, dim1(2), dim1(256), 0, a2, 3));
    REQUIRE_OK(pg_graph_end(rt, &g));
    pg_graph_call_info info;
    CHECK_OK(pg_graph_call(g, 0, &info));
    CHECK(!strcmp(info.kernel, "add1") && info.grid.x == 4 && info.block.x == 256);
    CHECK(info.nargs == 2 && info.args[0].array == id_of(y) &&
          info.args[0].access == PG_ACCESS_INOUT);
    CHECK(info.args[1].array == id_of(x) && info.args[1].access == PG_ACCESS_IN);
    CHECK(info.args[0].first == 0 && info.args[0].count == N);
    CHECK_OK(pg_graph_call(g, 1, &info));
    CHECK(!strcmp(info.kernel, "scale") && info.nargs == 1 && info.args[0].array == id_of(y));
    CHECK(info.args[0].first == N / 2 && info.args[0].count == N / 2);
    CHECK_MSG(pg_graph_call(g, 2, &info), PG_ERROR_ARGUMENT, "call 2 of a recording of 2 calls");
    CHECK_STATUS(pg_graph_call(g, 0, NULL), PG_ERROR_ARGUMENT);
    CHECK_OK(pg_graph_free(g));
    CHECK_STATUS(pg_graph_call(g, 0, &info), PG_ERROR_STATE);
    CHECK_OK(pg_runtime_free(rt));
}

/* An empty recording replays as nothing. */
static void empty(void) {
    pg_runtime *rt = test_runtime("host:1", NULL, NULL);
    pg_graph *g = NULL;
    REQUIRE_OK(pg_graph_begin(rt));
    REQUIRE_OK(pg_graph_end(rt, &g));
    int64_t calls = -1;
    CHECK_OK(pg_graph_calls(g, &calls));
    CHECK(calls == 0);
    CHECK_OK(pg_graph_launch(g));
    CHECK_OK(pg_graph_free(g));
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    const char *policies[] = {"round-robin", "stream-aware", "min-transfer-size",
                              "minmax-transfer-time", "min-transfer-time"};
    for (int p = 0; p < 5; p++)
        replay_equals_eager("host:4", policies[p]);
    replay_equals_eager("host:1", NULL);
    for (int p = 0; p < 5; p++)
        plan_replays("host:4", policies[p]);
    plan_replays("host:1", NULL);
    misuse();
    call_info();
    empty();
    CHECK_DONE();
}

/* test_dag.c: dependency inference, asserted on the DAG's edges. */
#include "dag_view.h"
#include "kernels_common.h"

#define N 1000

static pg_runtime *rt;
static pg_kernel *fill, *add1, *sum2, *fill_out;
static tdag dag;

static void launch(pg_kernel *k, const pg_arg *args, int n) {
    REQUIRE_OK(pg_kernel_launch(k, dim1(4), dim1(256), 0, args, n));
}
static void do_fill(pg_kernel *k, pg_array *y, float v) {
    pg_arg a[] = {pg_arg_array(y), pg_arg_float(v), pg_arg_int(N)};
    launch(k, a, 3);
}
static void do_add1(pg_array *y, pg_array *x) {
    pg_arg a[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    launch(add1, a, 3);
}
static void do_sum2(pg_array *y, pg_array *p, pg_array *q) {
    pg_arg a[] = {pg_arg_array(y), pg_arg_array(p), pg_arg_array(q), pg_arg_int(N)};
    launch(sum2, a, 4);
}

/* The k-th kernel vertex since the start of this case. */
static int base_kernels, base_reads;
static long K(int k) {
    return tdag_nth(&dag, "kernel", base_kernels + k);
}
static void begin_case(void) {
    REQUIRE_OK(pg_runtime_sync(rt));
    tdag_load(rt, &dag);
    base_kernels = base_reads = 0;
    while (tdag_nth(&dag, "kernel", base_kernels) >= 0)
        base_kernels++;
    while (tdag_nth(&dag, "host_read", base_reads) >= 0)
        base_reads++;
}

int main(void) {
    rt = test_runtime("host:4", "round-robin", "async");
    fill = test_kernel(rt, "fill", NULL);
    fill_out = test_kernel(rt, "fill", "out float *y, float v, int n");
    add1 = test_kernel(rt, "add1", NULL);
    sum2 = test_kernel(rt, "sum2", "out float *y, in const float *a, in const float *b, int n");
    pg_array *a = test_array(rt, N), *b = test_array(rt, N), *c = test_array(rt, N),
             *d = test_array(rt, N);

    /* Independent launches: no edge. */
    begin_case();
    do_fill(fill_out, a, 1);
    do_fill(fill_out, b, 2);
    tdag_load(rt, &dag);
    CHECK(K(0) > 0 && K(1) > 0);
    CHECK(!tdag_edge(&dag, K(0), K(1)));

    /* Chain a -> b -> c: edges along the chain, none transitive. */
    begin_case();
    do_fill(fill_out, a, 1);
    do_add1(b, a);
    do_add1(c, b);
    tdag_load(rt, &dag);
    CHECK(tdag_edge(&dag, K(0), K(1)));
    CHECK(tdag_edge(&dag, K(1), K(2)));
    CHECK(!tdag_edge(&dag, K(0), K(2)));

    /* Diamond: a feeds b and c, both feed d. */
    begin_case();
    do_fill(fill_out, a, 3);
    do_add1(b, a);
    do_add1(c, a);
    do_sum2(d, b, c);
    tdag_load(rt, &dag);
    CHECK(tdag_edge(&dag, K(0), K(1)) && tdag_edge(&dag, K(0), K(2)));
    CHECK(tdag_edge(&dag, K(1), K(3)) && tdag_edge(&dag, K(2), K(3)));
    CHECK(!tdag_edge(&dag, K(1), K(2)) && !tdag_edge(&dag, K(2), K(1)));
    float out[N];
    REQUIRE_OK(pg_array_read(d, 0, N, out));
    CHECK(out[0] == 8.0f && out[N - 1] == 8.0f);

    /* Two readers of one const array are not ordered. */
    begin_case();
    do_fill(fill_out, a, 1);
    do_add1(b, a);
    do_add1(c, a);
    tdag_load(rt, &dag);
    CHECK(!tdag_edge(&dag, K(1), K(2)));
    CHECK(tdag_edge(&dag, K(0), K(1)) && tdag_edge(&dag, K(0), K(2)));

    /* Write after read: the writer waits for the reader and the previous writer. */
    begin_case();
    do_fill(fill_out, a, 1);
    do_add1(b, a);       /* reads a */
    do_fill(fill, a, 5); /* inout a */
    tdag_load(rt, &dag);
    CHECK(tdag_edge(&dag, K(1), K(2)));
    CHECK(tdag_edge(&dag, K(0), K(2)));
    REQUIRE_OK(pg_array_read(b, 0, N, out));
    CHECK(out[7] == 2.0f); /* the reader saw a's old value */

    /* A host read waits only for the writer of that array. */
    begin_case();
    do_fill(fill_out, a, 4);
    do_fill(fill_out, b, 6);
    float x;
    REQUIRE_OK(pg_array_read(a, 3, 1, &x));
    CHECK(x == 4.0f);
    tdag_load(rt, &dag);
    long hr = tdag_nth(&dag, "host_read", base_reads);
    CHECK(hr > 0);
    CHECK(tdag_edge(&dag, K(0), hr));
    CHECK(!tdag_edge(&dag, K(1), hr));

    /* An out-only argument after a read: ordered after the reader (WAR) and the last writer,
     * and no copy brings the old value in. */
    begin_case();
    do_fill(fill_out, c, 1);
    do_add1(d, c);
    pg_stats before, after;
    REQUIRE_OK(pg_runtime_sync(rt));
    REQUIRE_OK(pg_runtime_stats(rt, &before));
    do_fill(fill_out, c, 9);
    REQUIRE_OK(pg_runtime_sync(rt));
    REQUIRE_OK(pg_runtime_stats(rt, &after));
    tdag_load(rt, &dag);
    CHECK(tdag_edge(&dag, K(1), K(2)));
    CHECK(tdag_edge(&dag, K(0), K(2)));
    CHECK(after.copies == before.copies);

    /* A host write waits for the last writer and the readers since. */
    begin_case();
    do_fill(fill_out, a, 1);
    do_add1(b, a);
    float ones[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1;
    REQUIRE_OK(pg_array_write(a, 0, N, ones));
    tdag_load(rt, &dag);
    long hw = tdag_nth(&dag, "host_write", 0);
    for (int i = 1; tdag_nth(&dag, "host_write", i) >= 0; i++)
        hw = tdag_nth(&dag, "host_write", i);
    CHECK(tdag_edge(&dag, K(0), hw) && tdag_edge(&dag, K(1), hw));

    /* DOT export names every kernel. */
    char *dot;
    REQUIRE_OK(pg_dag_export_string(rt, PG_DAG_DOT, &dot));
    CHECK(strstr(dot, "digraph") && strstr(dot, "add1") && strstr(dot, "->"));
    CHECK(!strstr(dot, "\\u")); /* DOT has no \\u escapes: line breaks are \\n */
    pg_string_free(dot);

    CHECK_OK(pg_array_free(a));
    CHECK_OK(pg_array_free(b));
    CHECK_OK(pg_array_free(c));
    CHECK_OK(pg_array_free(d));
    CHECK_OK(pg_kernel_free(fill));
    CHECK_OK(pg_kernel_free(fill_out));
    CHECK_OK(pg_kernel_free(add1));
    CHECK_OK(pg_kernel_free(sum2));
    CHECK_OK(pg_runtime_free(rt));
    CHECK_DONE();
}

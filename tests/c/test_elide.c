/* test_elide.c: the elide_copies limit study (option, env PG_ELIDE_COPIES): copies between
 * locations are skipped and counted (pg_stats.copies_elided, bytes_elided, and in copies and
 * link_bytes as if made), so values are wrong and say so, timings mean the infinite-bandwidth
 * bound; eager calls and plan replays alike; off by default. */
#include "kernels_common.h"

#include <stdlib.h>

enum { N = 1000 };

static pg_runtime *runtime(const char *elide) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:2";
    if (elide)
        REQUIRE_OK(pg_options_set(&o, "elide_copies", elide));
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

static void add1(pg_kernel *k, pg_array *y, pg_array *x) {
    pg_arg a[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    CHECK_OK(pg_kernel_launch(k, dim1(4), dim1(256), 0, a, 3));
}

/* y = x + 1 on a device after the host wrote x: what y[7] reads, and the stats. */
static float run(pg_runtime *rt, pg_stats *s) {
    pg_kernel *k = test_kernel(rt, "add1", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N);
    static float ones[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1;
    CHECK_OK(pg_array_write(x, 0, N, ones));
    add1(k, y, x);
    float v = -1;
    CHECK_OK(pg_array_read(y, 7, 1, &v));
    REQUIRE_OK(pg_runtime_stats(rt, s));
    return v;
}

int main(void) {
    pg_stats s;
    pg_runtime *rt = runtime(NULL);
    CHECK(run(rt, &s) == 2.0f && s.copies_elided == 0 && s.bytes_elided == 0);
    CHECK(s.copies == 2); /* x in, y out */
    CHECK_OK(pg_runtime_free(rt));

    rt = runtime("1");
    /* x never reached the device (zeros there) and y never came back (the host copy of a
     * never-written array is zeros): the value is wrong, and the stats say why. */
    CHECK(run(rt, &s) == 0.0f);
    CHECK(s.copies_elided == 2 && s.bytes_elided == 2 * N * 4);
    CHECK(s.copies == 2 && s.bytes_moved == 2 * N * 4); /* counted as if made */
    /* Plans keep an elided copy as the order it gives. */
    pg_kernel *k = test_kernel(rt, "add1", NULL);
    pg_array *x = test_array(rt, N), *y = test_array(rt, N);
    pg_graph *g = NULL;
    REQUIRE_OK(pg_graph_begin(rt));
    add1(k, y, x);
    add1(k, x, y);
    REQUIRE_OK(pg_graph_end(rt, &g));
    for (int r = 0; r < 5; r++)
        CHECK_OK(pg_graph_launch(g));
    CHECK_OK(pg_runtime_sync(rt));
    CHECK_OK(pg_graph_free(g));
    CHECK_OK(pg_runtime_free(rt));

    CHECK_MSG(pg_options_set(&(pg_options){0}, "elide_copies", "perhaps"), PG_ERROR_ARGUMENT,
              "elide_copies");
    setenv("PG_ELIDE_COPIES", "1", 1);
    rt = runtime(NULL);
    CHECK(run(rt, &s) == 0.0f && s.copies_elided == 2);
    CHECK_OK(pg_runtime_free(rt));
    rt = runtime("0"); /* the option wins over the environment */
    CHECK(run(rt, &s) == 2.0f && s.copies_elided == 0);
    CHECK_OK(pg_runtime_free(rt));
    CHECK_DONE();
}

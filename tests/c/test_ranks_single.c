/* test_ranks_single.c: the ranks layer in a single process (no mpirun): option ranks parses,
 * one process is rank 0 of 1, rank 0 is the only owner, ownership of views, the block
 * distribution, the GPUs a rank takes on its node, and the DAG's rank field. The runs on 2 and 3
 * ranks are tests/c/mpi_*.c. */
#include "check.h"
#include "core/ranks.h"
#include "kernels_common.h"

static void gpus(int lr, int ls, int ndev, const char *want) {
    char buf[128];
    pg__ranks_gpu_spec(lr, ls, ndev, buf, sizeof buf);
    if (strcmp(buf, want)) {
        fprintf(stderr, "local rank %d of %d, %d GPUs: '%s', want '%s'\n", lr, ls, ndev, buf, want);
        pg_check_failures++;
    }
}

int main(void) {
    pg_options o;
    pg_options_init(&o);
    CHECK_OK(pg_options_set(&o, "ranks", "off"));
    CHECK_OK(pg_options_set(&o, "ranks", "bogus")); /* checked when the runtime is made */
    o.devices = "host:2";
    pg_runtime *rt = NULL;
    CHECK_MSG(pg_runtime_new(&o, &rt), PG_ERROR_ARGUMENT, "unknown ranks 'bogus'");
    CHECK_OK(pg_options_set(&o, "ranks", "auto")); /* not started by mpirun: one process */
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    int rank = -1, nranks = -1;
    CHECK_OK(pg_runtime_ranks(rt, &rank, &nranks));
    CHECK(rank == 0 && nranks == 1);
    CHECK_STATUS(pg_runtime_ranks(rt, NULL, &nranks), PG_ERROR_ARGUMENT);
    pg_stats s;
    CHECK_OK(pg_runtime_stats(rt, &s));
    CHECK(s.rank == 0 && s.nranks == 1 && s.rank_messages_sent == 0);

    pg_array *a = test_array(rt, 100), *v;
    int owner = -1;
    CHECK_OK(pg_array_owner(a, &owner));
    CHECK(owner == 0);
    CHECK_OK(pg_array_owner_set(a, 0));
    CHECK_MSG(pg_array_owner_set(a, 1), PG_ERROR_ARGUMENT, "1 rank(s)");
    CHECK_STATUS(pg_array_owner(a, NULL), PG_ERROR_ARGUMENT);
    REQUIRE_OK(pg_array_slice(a, 10, 20, &v));
    CHECK_OK(pg_array_owner_set(v, 0));
    CHECK_OK(pg_array_owner(v, &owner));
    CHECK(owner == 0);

    /* single-process launches are as before: the DAG's vertices are rank 0's */
    pg_kernel *k = test_kernel(rt, "scale", NULL);
    pg_arg args[] = {pg_arg_array(a), pg_arg_float(2.0f), pg_arg_int(100)};
    CHECK_OK(pg_kernel_launch(k, dim1(1), dim1(128), 0, args, 3));
    CHECK_OK(pg_runtime_sync(rt));
    pg_dag *dag;
    REQUIRE_OK(pg_dag_snapshot(rt, &dag));
    size_t n = 0;
    CHECK_OK(pg_dag_vertex_count(dag, &n));
    CHECK(n >= 1);
    pg_dag_vertex_info vi;
    for (size_t i = 0; i < n; i++) {
        CHECK_OK(pg_dag_vertex(dag, i, &vi));
        CHECK(vi.rank == 0);
    }
    pg_dag_free(dag);
    char *json;
    CHECK_OK(pg_dag_export_string(rt, PG_DAG_JSON, &json));
    CHECK(strstr(json, "\"rank\":0"));
    pg_string_free(json);
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_array_free(v));
    CHECK_OK(pg_array_free(a));
    CHECK_OK(pg_runtime_free(rt));

    /* view i of n over r ranks: owner i * r / n */
    CHECK(pg_rank_block_owner(0, 4, 2) == 0 && pg_rank_block_owner(1, 4, 2) == 0);
    CHECK(pg_rank_block_owner(2, 4, 2) == 1 && pg_rank_block_owner(3, 4, 2) == 1);
    CHECK(pg_rank_block_owner(5, 6, 3) == 2 && pg_rank_block_owner(2, 3, 1) == 0);
    CHECK(pg_rank_block_owner(7, 6, 3) == 0); /* out of range: rank 0 */

    /* the GPUs of local rank lr of ls on a node with ndev */
    gpus(0, 1, 8, "");    /* alone on the node: all of them */
    gpus(1, 2, 2, "1");   /* one each */
    gpus(0, 2, 4, "0,2"); /* two each, in turn */
    gpus(1, 2, 4, "1,3");
    gpus(2, 3, 4, "2");
    gpus(3, 4, 2, "1"); /* more ranks than GPUs: shared, in turn */
    gpus(0, 2, 0, "");
    /* Single-process, pg_ranks_abort returns doing nothing: there is no job to end. */
    CHECK(!pg_ranks_active());
    pg_ranks_abort(3, "not on several ranks: nothing to end");
    CHECK_DONE();
}

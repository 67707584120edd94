/* mpi_ranks.c: the same program on N ranks (run by mpirun with 2 and 3 ranks, CPU devices):
 * who sends what (the ranks' counters), the received-copy cache, host reads of another rank's
 * array on every rank, host writes (the owner's data is the value), views owned by different
 * ranks, the DAG's rank, and the error cases (several owners written, a rank out of range,
 * recordings), after each of which the runtime goes on, and the trace: one file per rank whose
 * processes are the rank's own. Every rank checks its own counters. */
#include "check.h"
#include "kernels_common.h"

#include <stdint.h>

#define M 1000

static const char *SRC =
    "extern \"C\" __global__ void fill(float *y, float v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v + i; }\n"
    "extern \"C\" __global__ void add(float *z, const float *x, const float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) z[i] = x[i] + y[i]; }\n"
    "extern \"C\" __global__ void inc(float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += 1.0f; }\n"
    "extern \"C\" __global__ void mix(float *a, float *b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { a[i] += b[i]; b[i] = 0; } }\n";

static int rank, nranks;
static pg_kernel *kfill, *kadd, *kinc, *kmix;

static pg_status fill(pg_array *y, float v, int n) {
    pg_arg a[] = {pg_arg_array(y), pg_arg_float(v), pg_arg_int(n)};
    return pg_kernel_launch(kfill, dim1((n + 127) / 128), dim1(128), 0, a, 3);
}
static pg_status add(pg_array *z, pg_array *x, pg_array *y, int n) {
    pg_arg a[] = {pg_arg_array(z), pg_arg_array(x), pg_arg_array(y), pg_arg_int(n)};
    return pg_kernel_launch(kadd, dim1((n + 127) / 128), dim1(128), 0, a, 4);
}
static pg_status inc(pg_array *y, int n) {
    pg_arg a[] = {pg_arg_array(y), pg_arg_int(n)};
    return pg_kernel_launch(kinc, dim1((n + 127) / 128), dim1(128), 0, a, 2);
}

static pg_stats stats(pg_runtime *rt) {
    pg_stats s;
    REQUIRE_OK(pg_runtime_stats(rt, &s));
    return s;
}

static pg_array *array(pg_runtime *rt, int64_t n, int owner) {
    pg_array *a;
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &a));
    REQUIRE_OK(pg_array_owner_set(a, owner));
    return a;
}

int main(void) {
    const char *want = getenv("OMPI_COMM_WORLD_SIZE");
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:2";
    REQUIRE_OK(pg_options_set(&o, "ranks", "mpi"));
    char trace[64]; /* written at the end as mpi_ranks_trace_N.rankR.json */
    snprintf(trace, sizeof trace, "mpi_ranks_trace_%s.json", want ? want : "x");
    o.trace = trace;
    pg_runtime *rt;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    REQUIRE_OK(pg_runtime_ranks(rt, &rank, &nranks));
    CHECK(want && nranks == atoi(want));
    CHECK(nranks >= 2 && rank >= 0 && rank < nranks);
    int last = nranks - 1;
    REQUIRE_OK(pg_kernel_new(rt, SRC, "fill", "out float *y, float v, int n", NULL, &kfill));
    REQUIRE_OK(pg_kernel_new(rt, SRC, "add", "out float *z, const float *x, const float *y, int n",
                             NULL, &kadd));
    REQUIRE_OK(pg_kernel_new(rt, SRC, "inc", NULL, NULL, &kinc));
    REQUIRE_OK(pg_kernel_new(rt, SRC, "mix", NULL, NULL, &kmix));
    pg_stats s = stats(rt);
    CHECK(s.rank == rank && s.nranks == nranks);

    /* x on rank 0, y on the last rank, z = x + y on rank 0: the last rank sends y, once. */
    pg_array *x = array(rt, M, 0), *y = array(rt, M, last), *z = array(rt, M, 0);
    CHECK_OK(fill(x, 1.0f, M));
    CHECK_OK(fill(y, 1000.0f, M));
    CHECK_OK(add(z, x, y, M));
    s = stats(rt);
    const uint64_t B = M * sizeof(float);
    CHECK(s.kernels == (rank == 0 ? 2u : rank == last ? 1u : 0u));
    CHECK(s.rank_messages_sent == (rank == last ? 1u : 0u));
    CHECK(s.rank_bytes_to[0] == (rank == last ? B : 0));
    CHECK(s.rank_messages_received == (rank == 0 ? 1u : 0u));
    CHECK(s.rank_bytes_from[last] == (rank == 0 ? B : 0));

    /* Where the value is, as this rank sees it: nowhere on a rank whose copy is stale. */
    pg_array_desc desc;
    CHECK_OK(pg_array_describe(y, &desc));
    CHECK((desc.valid != 0) == (rank == 0 || rank == last));
    CHECK_OK(pg_array_describe(x, &desc));
    CHECK((desc.valid != 0) == (rank == 0));

    /* y unchanged: rank 0 uses its received copy, no message. */
    CHECK_OK(add(z, x, y, M));
    s = stats(rt);
    CHECK(s.rank_messages_sent == (rank == last ? 1u : 0u));
    CHECK(s.rank_messages_received == (rank == 0 ? 1u : 0u));
    CHECK(s.rank_cache_hits == (rank == 0 ? 1u : 0u));

    /* y written again on its owner: the cached copy is stale, y travels again. */
    CHECK_OK(inc(y, M));
    CHECK_OK(add(z, x, y, M));
    s = stats(rt);
    CHECK(s.rank_messages_sent == (rank == last ? 2u : 0u));
    CHECK(s.rank_messages_received == (rank == 0 ? 2u : 0u));

    /* A host read of z on every rank: rank 0 sends it to each other rank; correct everywhere. */
    float v[M];
    CHECK_OK(pg_array_read(z, 0, M, v));
    int bad = 0;
    for (int i = 0; i < M; i++)
        bad += v[i] != (1.0f + i) + (1000.0f + i + 1.0f);
    CHECK(bad == 0);
    s = stats(rt);
    CHECK(s.rank_messages_sent == (rank == 0 ? (uint64_t)last : rank == last ? 2u : 0u));
    CHECK(s.rank_messages_received == (rank == 0 ? 2u : 1u));
    /* Read again: every rank holds it now. */
    CHECK_OK(pg_array_read(z, 10, 1, v));
    CHECK(v[0] == 11.0f + 1011.0f);
    pg_stats s2 = stats(rt);
    CHECK(s2.rank_messages_sent == s.rank_messages_sent);
    CHECK(s2.rank_messages_received == s.rank_messages_received);

    /* A host write on every rank: the owner's data is the value (here each rank writes its own
     * number, to show which one counts); a partial write keeps the rest of the owner's value. */
    float mine[M];
    for (int i = 0; i < M; i++)
        mine[i] = (float)(100 * rank);
    CHECK_OK(pg_array_write(y, 0, M, mine));
    CHECK_OK(pg_array_write(y, 0, 1, &(float){-1.0f}));
    CHECK_OK(pg_array_read(y, 0, M, v));
    CHECK(v[0] == -1.0f && v[1] == (float)(100 * last) && v[M - 1] == (float)(100 * last));
    /* map for reading: current everywhere already, no message */
    s = stats(rt);
    void *p;
    CHECK_OK(pg_array_map(y, PG_ACCESS_IN, &p));
    CHECK(((float *)p)[5] == (float)(100 * last));
    CHECK_OK(pg_array_unmap(y));
    CHECK(stats(rt).rank_messages_received == s.rank_messages_received);

    /* Views over the ranks, block-distributed: each rank increments its rows, then every rank
     * reads the whole array: each owner sends its rows to every other rank. */
    int64_t rows = 3 * (int64_t)nranks * 10;
    pg_array *a = array(rt, rows, 0);
    pg_array *view[8];
    for (int i = 0; i < nranks; i++) {
        int64_t lo = rows * i / nranks, hi = rows * (i + 1) / nranks;
        REQUIRE_OK(pg_array_slice(a, lo, hi, &view[i]));
        CHECK(pg_rank_block_owner(i, nranks, nranks) == i);
        CHECK_OK(pg_array_owner_set(view[i], pg_rank_block_owner(i, nranks, nranks)));
    }
    int owner = 7;
    CHECK_OK(pg_array_owner(a, &owner));
    CHECK(owner == -1);
    CHECK_OK(pg_array_owner(view[last], &owner));
    CHECK(owner == last);
    s = stats(rt);
    for (int i = 0; i < nranks; i++)
        CHECK_OK(inc(view[i], (int)(rows / nranks)));
    CHECK(stats(rt).kernels == s.kernels + 1); /* its own rows only */
    float av[3 * 8 * 10];
    CHECK_OK(pg_array_read(a, 0, (uint64_t)rows, av));
    bad = 0;
    for (int i = 0; i < rows; i++)
        bad += av[i] != 1.0f;
    CHECK(bad == 0);
    s2 = stats(rt);
    uint64_t piece = (uint64_t)(rows / nranks) * sizeof(float);
    CHECK(s2.rank_messages_sent - s.rank_messages_sent == (uint64_t)last);
    CHECK(s2.rank_bytes_sent - s.rank_bytes_sent == (uint64_t)last * piece);
    CHECK(s2.rank_messages_received - s.rank_messages_received == (uint64_t)last);

    /* Errors: each leaves the runtime usable, on every rank alike. */
    pg_arg mixargs[] = {pg_arg_array(x), pg_arg_array(y), pg_arg_int(M)};
    CHECK_MSG(pg_kernel_launch(kmix, dim1(8), dim1(128), 0, mixargs, 3), PG_ERROR_ARGUMENT,
              "several owners");
    CHECK(strstr(pg_last_error(), "(rank 0)") && strstr(pg_last_error(), "mix"));
    char lastr[32];
    snprintf(lastr, sizeof lastr, "(rank %d)", last);
    CHECK(strstr(pg_last_error(), lastr));
    CHECK_MSG(pg_array_owner_set(x, nranks), PG_ERROR_ARGUMENT, "rank");
    CHECK_MSG(pg_array_owner_set(x, -1), PG_ERROR_ARGUMENT, "rank");
    CHECK_MSG(pg_graph_begin(rt), PG_ERROR_UNSUPPORTED, "several ranks");
    /* ... and the runtime goes on: the write of the failed mix did not happen anywhere */
    CHECK_OK(add(z, x, y, M));
    CHECK_OK(pg_array_read(z, 1, 1, v));
    CHECK(v[0] == 2.0f + (float)(100 * last));

    /* Ownership moves without data: x goes to the last rank, which writes it next. */
    CHECK_OK(pg_array_owner_set(x, last));
    CHECK_OK(inc(x, M));
    CHECK_OK(pg_array_read(x, 3, 1, v));
    CHECK(v[0] == 5.0f);

    /* The DAG says which rank ran each vertex. */
    char *json = NULL;
    CHECK_OK(pg_dag_export_string(rt, PG_DAG_JSON, &json));
    char want_rank[32];
    snprintf(want_rank, sizeof want_rank, "\"rank\":%d", rank);
    CHECK(json && strstr(json, want_rank));
    pg_string_free(json);

    for (int i = 0; i < nranks; i++)
        CHECK_OK(pg_array_free(view[i]));
    CHECK_OK(pg_array_free(a));
    CHECK_OK(pg_array_free(x));
    CHECK_OK(pg_array_free(y));
    CHECK_OK(pg_array_free(z));
    CHECK_OK(pg_kernel_free(kfill));
    CHECK_OK(pg_kernel_free(kadd));
    CHECK_OK(pg_kernel_free(kinc));
    CHECK_OK(pg_kernel_free(kmix));
    CHECK_OK(pg_runtime_free(rt));
    /* the trace: this rank's file, its host and devices processes of its own */
    char tfile[96], *text = NULL;
    snprintf(tfile, sizeof tfile, "mpi_ranks_trace_%s.rank%d.json", want ? want : "x", rank);
    FILE *f = fopen(tfile, "rb");
    CHECK(f != NULL);
    if (f) {
        text = calloc(1, 1 << 20);
        CHECK(text && fread(text, 1, (1 << 20) - 1, f) > 0);
        fclose(f);
        char host[64], pid[32];
        snprintf(host, sizeof host, "\"pid\":%d,\"args\":{\"name\":\"rank %d: host\"}",
                 rank * (PG_MAX_DEVICES + 1), rank);
        snprintf(pid, sizeof pid, "\"pid\":%d,", rank * (PG_MAX_DEVICES + 1) + 1);
        CHECK(text && strstr(text, host) && strstr(text, pid));
        CHECK(text && strstr(text, "device 1"));
        free(text);
        remove(tfile);
    }
    if (pg_check_failures)
        fprintf(stderr, "rank %d of %d: ", rank, nranks);
    CHECK_DONE();
}

/* mpi_async_recv.c: a receive holds back only the work that reads the received value, never the
 * script (issue 35 item 4). Every rank runs the same polygpu operations; outside polygpu, rank 0
 * waits (raw MPI) for a token that rank 1 sends only after its launch that needs a value from
 * rank 0, and rank 0 sends that value only at its own launch, after the token. A receive that
 * blocked rank 1's script at the launch would wait for rank 0, which waits for rank 1: rank 0
 * gives up after a deadline and fails the test. Rank 1 also waits for a kernel of its own that
 * needs nothing from another rank (it is not held back), and every value is checked: the launch
 * held back behind the receive ran on the value received, a later host write of the sent array
 * did not reach the message, and views of one array cut while messages were in flight kept
 * their values. Runs on 2, 3 and 4 ranks (ranks 2 and 3 only follow). */
#include "polygpu.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096
#define DEADLINE_S 30

static int rank = -1;

static void fail(const char *what) {
    fprintf(stderr, "mpi_async_recv rank %d: FAIL: %s: %s\n", rank, what, pg_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define TRY(call)                                                                                  \
    do {                                                                                           \
        if ((call) != PG_OK)                                                                       \
            fail(#call);                                                                           \
    } while (0)

static const char *SRC = "extern \"C\" __global__ void add1(float *y, const float *x, int n) {\n"
                         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                         "  if (i < n) y[i] = x[i] + 1.0f; }\n";

static pg_array *array_of(pg_runtime *rt, int owner) {
    pg_array *a;
    int64_t n = N;
    TRY(pg_array_new(rt, PG_FLOAT32, 1, &n, &a));
    TRY(pg_array_owner_set(a, owner));
    return a;
}

static void check(pg_array *a, float scale, float add, const char *what) {
    static float got[N];
    TRY(pg_array_read(a, 0, N, got));
    for (int i = 0; i < N; i++)
        if (got[i] != scale * (float)i + add) {
            fprintf(stderr, "mpi_async_recv rank %d: FAIL: %s[%d] = %g, expected %g\n", rank, what,
                    i, (double)got[i], (double)(scale * (float)i + add));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

int main(void) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:1";
    TRY(pg_options_set(&o, "ranks", "mpi"));
    pg_runtime *rt;
    TRY(pg_runtime_new(&o, &rt));
    int nranks;
    TRY(pg_runtime_ranks(rt, &rank, &nranks));
    if (nranks < 2) {
        fprintf(stderr, "mpi_async_recv: run it with 2 ranks or more\n");
        return 1;
    }
    pg_kernel *k;
    TRY(pg_kernel_new(rt, SRC, "add1", NULL, NULL, &k));
    pg_array *a = array_of(rt, 0), *b = array_of(rt, 1), *c = array_of(rt, 1), *d = array_of(rt, 1);
    static float v[N];
    for (int i = 0; i < N; i++)
        v[i] = (float)i;
    TRY(pg_array_write(a, 0, N, v)); /* rank 0's values */
    for (int i = 0; i < N; i++)
        v[i] = 2.0f * (float)i;
    TRY(pg_array_write(c, 0, N, v)); /* rank 1's */

    if (rank == 0) { /* outside polygpu: wait for rank 1 to get past its launch */
        int token = 0, done = 0;
        MPI_Request req;
        MPI_Irecv(&token, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, &req);
        time_t t0 = time(NULL);
        while (!done && time(NULL) - t0 < DEADLINE_S)
            MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done) {
            fprintf(stderr,
                    "mpi_async_recv rank 0: FAIL: rank 1 did not get past its launch in %d s: "
                    "its receive of array a blocked its script\n",
                    DEADLINE_S);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    int n = N;
    pg_arg args[3] = {pg_arg_array(b), pg_arg_array(a), pg_arg_int(n)};
    TRY(pg_kernel_launch(k, (pg_dim3){N / 256, 1, 1}, (pg_dim3){256, 1, 1}, 0, args, 3));
    pg_arg args2[3] = {pg_arg_array(d), pg_arg_array(c), pg_arg_int(n)};
    TRY(pg_kernel_launch(k, (pg_dim3){N / 256, 1, 1}, (pg_dim3){256, 1, 1}, 0, args2, 3));
    if (rank == 1) {
        TRY(pg_array_wait(d)); /* not held back: it needs nothing from another rank */
        int token = 1;
        MPI_Send(&token, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
    }
    /* A host write of a after the launch: the message, wherever it is, carries the old value. */
    for (int i = 0; i < N; i++)
        v[i] = -1.0f;
    TRY(pg_array_write(a, 0, N, v));
    /* Views cut while a receive may be in flight, and a launch on one of them. */
    pg_array *h0, *h1;
    TRY(pg_array_slice(b, 0, N / 2, &h0));
    TRY(pg_array_slice(b, N / 2, N, &h1));
    check(b, 1.0f, 1.0f, "b"); /* add1(a) with a's values before the host write */
    check(d, 2.0f, 1.0f, "d");
    check(a, 0.0f, -1.0f, "a");
    TRY(pg_array_free(h0));
    TRY(pg_array_free(h1));
    TRY(pg_runtime_free(rt));
    if (rank == 0)
        printf("mpi_async_recv: ok on %d ranks\n", nranks);
    return 0;
}

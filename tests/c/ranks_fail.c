/* ranks_fail.c: a rank that fails, stops early or runs another program than the others must
 * end the job with a message naming the ranks and the cause, never leave them waiting (run by
 * tests/c/ranks_fail_check.sh under mpirun with 2 ranks and a time limit; argv[1] names the
 * case). Each rank reports its own errors as a C program does, on stderr, and exits 1 without
 * freeing its runtime (REQUIRE): the library ends the job from there.
 *   exit     rank 1 exits (status 3) with its runtime open while rank 0 waits for its value
 *   abort    rank 1 calls pg_ranks_abort while rank 0 waits for its value
 *   close    rank 1 frees its runtime early while rank 0 waits for its value
 *   extra    rank 1 makes one more array, then both read an array of rank 0
 *   readone  only rank 0 reads an array of rank 1, then both read an array of rank 0
 *   stuck    rank 1 sleeps outside polygpu while rank 0 waits for its value: the last resort,
 *            PG_RANKS_TIMEOUT (the test sets 2 s) */
#include "polygpu.h"

#include <stdio.h>
#include <stdlib.h>

#include <string.h>
#include <unistd.h>

#define M 64

static int rank;

static void fail(const char *what) {
    fprintf(stderr, "rank %d: %s failed: %s\n", rank, what, pg_last_error());
    exit(1);
}

#define TRY(call)                                                                                  \
    do {                                                                                           \
        if ((call) != PG_OK)                                                                       \
            fail(#call);                                                                           \
    } while (0)

int main(int argc, char **argv) {
    const char *c = argc > 1 ? argv[1] : "";
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:1";
    TRY(pg_options_set(&o, "ranks", "mpi"));
    pg_runtime *rt;
    TRY(pg_runtime_new(&o, &rt));
    int nranks;
    TRY(pg_runtime_ranks(rt, &rank, &nranks));
    int64_t n = M;
    float v[M], got[M];
    for (int i = 0; i < M; i++)
        v[i] = (float)i;
    pg_array *a, *b, *x;
    TRY(pg_array_new(rt, PG_FLOAT32, 1, &n, &a));
    TRY(pg_array_owner_set(a, 1));
    TRY(pg_array_write(a, 0, M, v)); /* current on rank 1 only */
    if (!strcmp(c, "extra") && rank == 1)
        TRY(pg_array_new(rt, PG_FLOAT32, 1, &n, &x));
    TRY(pg_array_new(rt, PG_FLOAT32, 1, &n, &b)); /* rank 0's */
    TRY(pg_array_write(b, 0, M, v));
    if (rank == 1) {
        if (!strcmp(c, "exit")) {
            fprintf(stderr, "rank 1: giving up (exit 3)\n");
            exit(3);
        }
        if (!strcmp(c, "abort"))
            pg_ranks_abort(2, "rank 1 gives up: no input file (the test's failure)");
        if (!strcmp(c, "stuck"))
            sleep(60);
        if (!strcmp(c, "close")) {
            TRY(pg_runtime_free(rt));
            return 0;
        }
    }
    if (strcmp(c, "readone") != 0 || rank == 0)
        TRY(pg_array_read(a, 0, M, got));
    TRY(pg_array_read(b, 0, M, got));
    TRY(pg_runtime_free(rt));
    return 0;
}

/* test_differential.c: random programs (launches with random access modes over 2-6 arrays, host
 * reads and writes, maps, frees) run once serially on one device and then asynchronously on
 * four CPU devices under every device, stream and parent-stream policy. Every value the program
 * reads must be equal to the bit. Seeded: a failure prints the seed and the program.
 * PG_DIFF_PROGRAMS sets the number of programs (default 500), PG_DIFF_SEED the first seed; the
 * last line counts mismatches and the programs that had one (tests/soak/soak.sh reads it);
 * PG_DIFF_MEMORY_LIMIT runs the asynchronous side under that device_memory_limit.
 * Each maximal block of consecutive launches runs `reps` times (1-5, from the seed): eagerly on
 * the serial side and in half of the configurations (each device, stream and parent-stream
 * policy among them), and
 * recorded once as a graph (pg_graph_*) and replayed `reps` times in the other half. */
#include "differential.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N DIFF_N
#define MAX_ARRAYS 6
#define MAX_OPS 40

enum { OP_LAUNCH, OP_READ, OP_WRITE, OP_FREE, OP_MAP_READ, OP_MAP_WRITE };

typedef struct op {
    int kind, kernel, arr[3], first, count;
    float value;
} op;

typedef struct program {
    unsigned seed;
    int narrays, nops, reps;
    op ops[MAX_OPS];
} program;

static void generate(unsigned seed, program *p) {
    unsigned s = seed;
    p->seed = seed;
    p->narrays = 2 + (int)(diff_rnd(&s) % (MAX_ARRAYS - 1));
    p->nops = 5 + (int)(diff_rnd(&s) % (MAX_OPS - 5));
    p->reps = 1 + (int)(diff_rnd(&s) % 5); /* from the third replay on, plans replay */
    for (int i = 0; i < p->nops; i++) {
        op *o = &p->ops[i];
        unsigned r = diff_rnd(&s) % 100;
        o->kind = r < 55   ? OP_LAUNCH
                  : r < 70 ? OP_READ
                  : r < 82 ? OP_WRITE
                  : r < 88 ? OP_FREE
                  : r < 94 ? OP_MAP_READ
                           : OP_MAP_WRITE;
        o->kernel = (int)(diff_rnd(&s) % DIFF_NKERNELS);
        for (int j = 0; j < 3; j++)
            o->arr[j] = (int)(diff_rnd(&s) % (unsigned)p->narrays);
        o->first = (int)(diff_rnd(&s) % N);
        o->count = 1 + (int)(diff_rnd(&s) % (unsigned)(N - o->first));
        if (diff_rnd(&s) % 4 == 0) { /* whole-array writes are "out" host accesses */
            o->first = 0;
            o->count = N;
        }
        o->value = (float)(diff_rnd(&s) % 1000) / 8.0f - 60.0f;
    }
}

static void print_program(const program *p) {
    fprintf(stderr, "program seed %u: %d arrays, launch blocks run %d times\n", p->seed, p->narrays,
            p->reps);
    static const char *kinds[] = {"launch", "read", "write", "free", "map-read", "map-write"};
    for (int i = 0; i < p->nops; i++) {
        const op *o = &p->ops[i];
        fprintf(stderr, "  %2d %-9s", i, kinds[o->kind]);
        if (o->kind == OP_LAUNCH) {
            fprintf(stderr, " %s(", DIFF_KERNELS[o->kernel].name);
            for (int j = 0; j < DIFF_KERNELS[o->kernel].narrays; j++)
                fprintf(stderr, "%sa%d", j ? ", " : "", o->arr[j]);
            fprintf(stderr, ") value %g\n", o->value);
        } else {
            fprintf(stderr, " a%d [%d, %d) value %g\n", o->arr[0], o->first, o->first + o->count,
                    o->value);
        }
    }
}

static char run_error[2048]; /* the message of run's failing call */
static int replay_mode;      /* launch blocks recorded once and replayed */

/* Ops [i, end) are launches: run them p->reps times, eagerly or as replays of one recording. */
static pg_status run_block(diff_env *e, const program *p, pg_array **arr, int i, int end) {
    pg_status st = PG_OK;
    if (!replay_mode) {
        for (int r = 0; r < p->reps && !st; r++)
            for (int j = i; j < end && !st; j++)
                st = diff_launch(e, p->ops[j].kernel, arr, p->ops[j].arr, p->ops[j].value);
        return st;
    }
    pg_graph *g = NULL;
    if ((st = pg_graph_begin(e->rt)))
        return st;
    for (int j = i; j < end && !st; j++)
        st = diff_launch(e, p->ops[j].kernel, arr, p->ops[j].arr, p->ops[j].value);
    pg_status end_st = pg_graph_end(e->rt, &g);
    if (!st)
        st = end_st;
    for (int r = 0; r < p->reps && !st; r++)
        st = pg_graph_launch(g);
    if (g) {
        pg_status f = pg_graph_free(g);
        if (!st)
            st = f;
    }
    return st;
}

static pg_status run(diff_env *e, const program *p, uint64_t *digest) {
    pg_array *arr[MAX_ARRAYS];
    int64_t n = N;
    uint64_t h = DIFF_DIGEST0;
    pg_status st = PG_OK;
    for (int i = 0; i < p->narrays; i++)
        if ((st = pg_array_new(e->rt, PG_FLOAT32, 1, &n, &arr[i])))
            return st;
    float buf[N];
    for (int i = 0; i < p->nops && !st; i++) {
        const op *o = &p->ops[i];
        pg_array *a = arr[o->arr[0]];
        switch (o->kind) {
        case OP_LAUNCH: {
            int end = i;
            while (end < p->nops && p->ops[end].kind == OP_LAUNCH)
                end++;
            st = run_block(e, p, arr, i, end);
            i = end - 1;
            break;
        }
        case OP_READ:
            st = pg_array_read(a, (uint64_t)o->first, (uint64_t)o->count, buf);
            h = diff_mix_in(h, buf, (size_t)o->count * 4);
            break;
        case OP_WRITE:
            for (int j = 0; j < o->count; j++)
                buf[j] = o->value + (float)j;
            st = pg_array_write(a, (uint64_t)o->first, (uint64_t)o->count, buf);
            break;
        case OP_FREE:
            if (!(st = pg_array_free(a)))
                st = pg_array_new(e->rt, PG_FLOAT32, 1, &n, &arr[o->arr[0]]);
            break;
        case OP_MAP_READ:
        case OP_MAP_WRITE: {
            float *m;
            int w = o->kind == OP_MAP_WRITE;
            if ((st = pg_array_map(a, w ? PG_ACCESS_INOUT : PG_ACCESS_IN, (void **)&m)))
                break;
            h = diff_mix_in(h, m + o->first, (size_t)o->count * 4);
            if (w)
                for (int j = 0; j < o->count; j++)
                    m[o->first + j] = m[o->first + j] * 2.0f - o->value;
            st = pg_array_unmap(a);
            break;
        }
        }
    }
    for (int i = 0; i < p->narrays && !st; i++) {
        if (!(st = pg_array_read(arr[i], 0, N, buf)))
            h = diff_mix_in(h, buf, sizeof buf);
    }
    if (st) /* the frees below clear it */
        snprintf(run_error, sizeof run_error, "%s: %s", pg_status_name(st), pg_last_error());
    for (int i = 0; i < p->narrays; i++)
        pg_array_free(arr[i]);
    *digest = h;
    return st;
}

int main(void) {
    int nprog = diff_env_int("PG_DIFF_PROGRAMS", 500);
    unsigned seed0 = (unsigned)diff_env_int("PG_DIFF_SEED", 1);
    const char *async_devices = test_devices("host:4");
    program *progs = malloc(sizeof(program) * (size_t)nprog);
    uint64_t *expect = malloc(sizeof(uint64_t) * (size_t)nprog);

    /* One runtime held open for the whole run keeps GPU contexts alive: otherwise each
     * configuration's runtime creates them anew, which costs more than its programs. */
    pg_options ko;
    pg_options_init(&ko);
    ko.devices = async_devices;
    pg_runtime *keeper = NULL;
    REQUIRE_OK(pg_runtime_new(&ko, &keeper));

    diff_env serial;
    diff_open(&serial, diff_serial_devices(async_devices), "sync", "round-robin", "fifo",
              "disjoint");
    for (int i = 0; i < nprog; i++) {
        generate(seed0 + (unsigned)i, &progs[i]);
        pg_status st = run(&serial, &progs[i], &expect[i]);
        if (st) {
            fprintf(stderr, "serial run failed: %s\n", run_error);
            print_program(&progs[i]);
            return 1;
        }
    }
    diff_close(&serial);

    /* Every mismatch is counted (the soak reports them); the first few are printed in full. */
    int configs = 0, mismatches = 0, failed = 0;
    unsigned char *bad = calloc((size_t)nprog, 1);
    for (int c = 0; c < DIFF_CONFIGS; c++) {
        diff_env e;
        diff_open_config(&e, async_devices, c);
        replay_mode = (c % 4 + c / 4) % 2; /* every device and parent-stream policy */
        configs++;
        for (int i = 0; i < nprog; i++) {
            uint64_t got;
            pg_status st = run(&e, &progs[i], &got);
            if (st || got != expect[i]) {
                if (mismatches++ < 3) {
                    fprintf(stderr, "MISMATCH under %s / %s / %s%s: %s\n", DIFF_POLICIES[c / 8],
                            DIFF_STREAMS[c / 4 % 2], DIFF_PARENTS[c % 4],
                            replay_mode ? " (replayed)" : "", st ? run_error : "different values");
                    print_program(&progs[i]);
                }
                failed += !bad[i];
                bad[i] = 1;
            }
        }
        diff_close(&e);
    }
    printf("differential: %d programs x %d configurations on %s (seeds %u..%u): %d mismatches, "
           "%d programs failed\n",
           nprog, configs, async_devices, seed0, seed0 + (unsigned)nprog - 1, mismatches, failed);
    if (getenv("PG_DIFF_MEMORY_LIMIT"))
        printf("device_memory_limit %s: %llu evictions, %llu of them write-backs\n",
               getenv("PG_DIFF_MEMORY_LIMIT"), (unsigned long long)diff_evictions,
               (unsigned long long)diff_writebacks);
    REQUIRE_OK(pg_runtime_free(keeper));
    free(bad);
    free(progs);
    free(expect);
    CHECK(mismatches == 0);
    CHECK_DONE();
}

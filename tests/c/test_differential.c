/* test_differential.c: random programs (launches with random access modes over 2-6 arrays, host
 * reads and writes, maps, frees) run once serially on one device and then asynchronously on
 * four CPU devices under every device, stream and parent-stream policy. Every value the program
 * reads must be equal to the bit. Seeded: a failure prints the seed and the program.
 * PG_DIFF_PROGRAMS sets the number of programs (default 500), PG_DIFF_SEED the first seed; the
 * last line counts mismatches and the programs that had one (tests/soak/soak.sh reads it);
 * PG_DIFF_MEMORY_LIMIT runs the asynchronous side under that device_memory_limit.
 * Half of the programs also make views (pg_array_slice) of random ranges of the arrays and of
 * other views, overlapping or not, and use them beside the arrays in launches, reads, writes,
 * maps and frees (a freed view is made again; a freed array's views keep its old memory); a
 * launch never gives one kernel two partly overlapping ranges of which one is written (a race
 * in any runtime).
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
#define MAX_VIEWS 6
#define MAX_HANDLES (MAX_ARRAYS + MAX_VIEWS)

enum { OP_LAUNCH, OP_READ, OP_WRITE, OP_FREE, OP_MAP_READ, OP_MAP_WRITE };

typedef struct op {
    int kind, kernel, arr[3], first, count;
    float value;
} op;

/* A view: elements [lo, hi) of handle `parent` (an array, or an earlier view). */
typedef struct vdef {
    int parent, lo, hi;
} vdef;

typedef struct program {
    unsigned seed;
    int narrays, nviews, nops, reps;
    vdef views[MAX_VIEWS];
    op ops[MAX_OPS];
} program;

/* Handle h's array and its element range there (generation: a freed array's views keep its
 * memory, so this only errs towards "may overlap"). */
static void handle_range(const program *p, int h, int *root, int *lo, int *hi) {
    if (h < p->narrays) {
        *root = h;
        *lo = 0;
        *hi = N;
        return;
    }
    const vdef *v = &p->views[h - p->narrays];
    int plo, phi;
    handle_range(p, v->parent, root, &plo, &phi);
    *lo = plo + v->lo;
    *hi = plo + v->hi;
}

static int handle_size(const program *p, int h) {
    int r, lo, hi;
    handle_range(p, h, &r, &lo, &hi);
    return hi - lo;
}

/* Two arguments of one launch race if their ranges partly overlap and one is written; an "out"
 * argument (the first of a kernel whose signature says so) is written whole, so no other may
 * be shorter (the launch covers the shortest). */
static int launch_races(const program *p, const op *o) {
    int na = DIFF_KERNELS[o->kernel].narrays;
    if (diff_first_out(o->kernel))
        for (int j = 1; j < na; j++)
            if (handle_size(p, o->arr[j]) < handle_size(p, o->arr[0]))
                return 1;
    for (int j = 0; j < na; j++)
        for (int k = j + 1; k < na; k++) {
            int rj, lj, hj, rk, lk, hk;
            handle_range(p, o->arr[j], &rj, &lj, &hj);
            handle_range(p, o->arr[k], &rk, &lk, &hk);
            int read_only = (DIFF_KERNELS[o->kernel].in_mask >> j & 1) &&
                            (DIFF_KERNELS[o->kernel].in_mask >> k & 1);
            if (rj == rk && lj < hk && lk < hj && !(lj == lk && hj == hk) && !read_only)
                return 1;
        }
    return 0;
}

static void generate(unsigned seed, program *p) {
    unsigned s = seed;
    p->seed = seed;
    p->narrays = 2 + (int)(diff_rnd(&s) % (MAX_ARRAYS - 1));
    p->nops = 5 + (int)(diff_rnd(&s) % (MAX_OPS - 5));
    p->reps = 1 + (int)(diff_rnd(&s) % 5); /* from the third replay on, plans replay */
    p->nviews = diff_rnd(&s) % 2 ? 1 + (int)(diff_rnd(&s) % MAX_VIEWS) : 0;
    for (int v = 0; v < p->nviews; v++) {
        vdef *d = &p->views[v];
        d->parent = (int)(diff_rnd(&s) % (unsigned)(p->narrays + v));
        int size = handle_size(p, d->parent);
        d->lo = (int)(diff_rnd(&s) % (unsigned)size);
        d->hi = d->lo + 1 + (int)(diff_rnd(&s) % (unsigned)(size - d->lo));
    }
    int nh = p->narrays + p->nviews;
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
        for (int tries = 0; tries < 20; tries++) {
            for (int j = 0; j < 3; j++)
                o->arr[j] = (int)(diff_rnd(&s) % (unsigned)nh);
            if (!launch_races(p, o))
                break;
            o->arr[1] = o->arr[2] = o->arr[0]; /* the same range each time: no race */
        }
        int size = handle_size(p, o->arr[0]);
        o->first = (int)(diff_rnd(&s) % (unsigned)size);
        o->count = 1 + (int)(diff_rnd(&s) % (unsigned)(size - o->first));
        if (diff_rnd(&s) % 4 == 0) { /* whole-array writes are "out" host accesses */
            o->first = 0;
            o->count = size;
        }
        o->value = (float)(diff_rnd(&s) % 1000) / 8.0f - 60.0f;
    }
}

static void print_program(const program *p) {
    fprintf(stderr, "program seed %u: %d arrays, launch blocks run %d times\n", p->seed, p->narrays,
            p->reps);
    for (int v = 0; v < p->nviews; v++)
        fprintf(stderr, "  a%d = a%d[%d:%d]\n", p->narrays + v, p->views[v].parent, p->views[v].lo,
                p->views[v].hi);
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

/* A launch over the elements every argument has. */
static pg_status launch(diff_env *e, const program *p, pg_array **arr, const op *o) {
    int n = N;
    for (int j = 0; j < DIFF_KERNELS[o->kernel].narrays; j++) {
        int size = handle_size(p, o->arr[j]);
        n = size < n ? size : n;
    }
    return diff_launch_n(e, o->kernel, arr, o->arr, o->value, n);
}

/* View v made (again) from its parent as the parent is now. */
static pg_status make_view(const program *p, pg_array **arr, int v) {
    const vdef *d = &p->views[v];
    return pg_array_slice(arr[d->parent], d->lo, d->hi, &arr[p->narrays + v]);
}

/* Ops [i, end) are launches: run them p->reps times, eagerly or as replays of one recording. */
static pg_status run_block(diff_env *e, const program *p, pg_array **arr, int i, int end) {
    pg_status st = PG_OK;
    if (!replay_mode) {
        for (int r = 0; r < p->reps && !st; r++)
            for (int j = i; j < end && !st; j++)
                st = launch(e, p, arr, &p->ops[j]);
        return st;
    }
    pg_graph *g = NULL;
    if ((st = pg_graph_begin(e->rt)))
        return st;
    for (int j = i; j < end && !st; j++)
        st = launch(e, p, arr, &p->ops[j]);
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
    pg_array *arr[MAX_HANDLES];
    int64_t n = N;
    uint64_t h = DIFF_DIGEST0;
    pg_status st = PG_OK;
    for (int i = 0; i < p->narrays; i++)
        if ((st = pg_array_new(e->rt, PG_FLOAT32, 1, &n, &arr[i])))
            return st;
    for (int v = 0; v < p->nviews; v++)
        if ((st = make_view(p, arr, v)))
            return st;
    int nh = p->narrays + p->nviews;
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
        case OP_FREE: /* and a new one in its place; a view is made again from its parent */
            if (!(st = pg_array_free(a)))
                st = o->arr[0] < p->narrays
                         ? pg_array_new(e->rt, PG_FLOAT32, 1, &n, &arr[o->arr[0]])
                         : make_view(p, arr, o->arr[0] - p->narrays);
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
    for (int i = 0; i < nh && !st; i++) {
        int size = handle_size(p, i);
        if (!(st = pg_array_read(arr[i], 0, (uint64_t)size, buf)))
            h = diff_mix_in(h, buf, (size_t)size * 4);
    }
    if (st) /* the frees below clear it */
        snprintf(run_error, sizeof run_error, "%s: %s", pg_status_name(st), pg_last_error());
    for (int i = 0; i < nh; i++) /* arrays first: their views keep the memory */
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

/* test_threaded_differential.c: random programs run by several threads at once on one runtime
 * (host:4; each round under the next device, stream and parent-stream configuration), compared
 * with the same programs run one after another on a serial device. The threads share input
 * arrays that their kernels only read and that they overwrite with the values those already hold
 * (host writes and write mappings), so every result stays deterministic while the runtime sees a
 * writer of a shared input race its readers (issue 15's stale read). One round in three closes
 * the runtime at a random point while the threads work: every call then ends with PG_ERROR_STATE
 * (never a crash or a hang), a thread stops at its first such error, and a program that finished
 * before the close must still have read the right values. Those rounds do not map arrays: a
 * mapping's pointer dies with the runtime.
 * PG_TDIFF_PROGRAMS (default 96), PG_TDIFF_SEED (1), PG_TDIFF_THREADS (4), PG_TDIFF_TIMEOUT
 * (seconds one round may take before it counts as a hang, 300). The last line counts mismatches
 * and failed programs (tests/soak/soak.sh reads it). */
#include "differential.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N DIFF_N
#define MAX_PRIVATE 3
#define NSHARED 2
#define MAX_OPS 30
#define PER_THREAD 3 /* programs each thread runs in one round */
#define MAX_THREADS 16

enum { OP_LAUNCH, OP_READ, OP_WRITE, OP_FREE, OP_MAP_READ, OP_MAP_WRITE };

/* Arrays 0 .. npriv-1 are the program's own; npriv .. npriv+NSHARED-1 the shared inputs. */
typedef struct op {
    int kind, kernel, arr[3], target, first, count;
    float value;
} op;

typedef struct program {
    unsigned seed;
    int npriv, nops, maps;
    op ops[MAX_OPS];
} program;

/* What a shared input holds, always. */
static float shared_value(int s, int i) {
    return (float)((i * 7 + s * 5) % 23) - 11.0f;
}

static void generate(unsigned seed, int maps, program *p) {
    unsigned s = seed;
    p->seed = seed;
    p->maps = maps;
    p->npriv = 1 + (int)(diff_rnd(&s) % MAX_PRIVATE);
    p->nops = 5 + (int)(diff_rnd(&s) % (MAX_OPS - 5));
    unsigned nall = (unsigned)(p->npriv + NSHARED);
    for (int i = 0; i < p->nops; i++) {
        op *o = &p->ops[i];
        unsigned r = diff_rnd(&s) % 100;
        o->kind = r < 50   ? OP_LAUNCH
                  : r < 64 ? OP_READ
                  : r < 78 ? OP_WRITE
                  : r < 84 ? OP_FREE
                  : r < 92 ? OP_MAP_READ
                           : OP_MAP_WRITE;
        if (!maps && o->kind == OP_MAP_READ)
            o->kind = OP_READ;
        if (!maps && o->kind == OP_MAP_WRITE)
            o->kind = OP_WRITE;
        o->kernel = (int)(diff_rnd(&s) % DIFF_NKERNELS);
        /* Shared inputs only where the kernel reads and never writes. */
        for (int j = 0; j < 3; j++)
            o->arr[j] =
                (int)(diff_rnd(&s) %
                      ((DIFF_KERNELS[o->kernel].in_mask >> j & 1) ? nall : (unsigned)p->npriv));
        o->target = (int)(diff_rnd(&s) % (o->kind == OP_FREE ? (unsigned)p->npriv : nall));
        o->first = (int)(diff_rnd(&s) % N);
        o->count = 1 + (int)(diff_rnd(&s) % (unsigned)(N - o->first));
        if (diff_rnd(&s) % 4 == 0) {
            o->first = 0;
            o->count = N;
        }
        o->value = (float)(diff_rnd(&s) % 1000) / 8.0f - 60.0f;
    }
}

static void print_program(const program *p) {
    fprintf(stderr, "program seed %u: %d own arrays a0..a%d, shared s0..s%d%s\n", p->seed, p->npriv,
            p->npriv - 1, NSHARED - 1, p->maps ? "" : " (no maps: a close round)");
    static const char *kinds[] = {"launch", "read", "write", "free", "map-read", "map-write"};
    for (int i = 0; i < p->nops; i++) {
        const op *o = &p->ops[i];
        fprintf(stderr, "  %2d %-9s", i, kinds[o->kind]);
        if (o->kind == OP_LAUNCH) {
            fprintf(stderr, " %s(", DIFF_KERNELS[o->kernel].name);
            for (int j = 0; j < DIFF_KERNELS[o->kernel].narrays; j++)
                fprintf(stderr, "%s%c%d", j ? ", " : "", o->arr[j] < p->npriv ? 'a' : 's',
                        o->arr[j] < p->npriv ? o->arr[j] : o->arr[j] - p->npriv);
            fprintf(stderr, ") value %g\n", o->value);
        } else {
            int t = o->target;
            fprintf(stderr, " %c%d [%d, %d) value %g\n", t < p->npriv ? 'a' : 's',
                    t < p->npriv ? t : t - p->npriv, o->first, o->first + o->count, o->value);
        }
    }
}

/* Run p on e's runtime with the given shared inputs; *digest gets what it observed. Stops at
 * the first call that fails and returns its status; err gets its operation and message. */
static pg_status run(diff_env *e, pg_array *const *shared, const program *p, uint64_t *digest,
                     atomic_long *ops_done, char *err, size_t errn) {
    pg_array *arr[MAX_PRIVATE + NSHARED] = {0};
    int64_t n = N;
    uint64_t h = DIFF_DIGEST0;
    pg_status st = PG_OK;
    for (int i = 0; i < p->npriv && !st; i++)
        st = pg_array_new(e->rt, PG_FLOAT32, 1, &n, &arr[i]);
    for (int s = 0; s < NSHARED; s++)
        arr[p->npriv + s] = shared[s];
    float buf[N];
    for (int i = 0; i < p->nops && !st; i++) {
        const op *o = &p->ops[i];
        pg_array *a = arr[o->target];
        int sh = o->target - p->npriv; /* >= 0: a shared input */
        atomic_fetch_add(ops_done, 1);
        switch (o->kind) {
        case OP_LAUNCH:
            st = diff_launch(e, o->kernel, arr, o->arr, o->value);
            break;
        case OP_READ:
            if (!(st = pg_array_read(a, (uint64_t)o->first, (uint64_t)o->count, buf)))
                h = diff_mix_in(h, buf, (size_t)o->count * 4);
            break;
        case OP_WRITE:
            for (int j = 0; j < o->count; j++)
                buf[j] = sh >= 0 ? shared_value(sh, o->first + j) : o->value + (float)j;
            st = pg_array_write(a, (uint64_t)o->first, (uint64_t)o->count, buf);
            break;
        case OP_FREE:
            arr[o->target] = NULL;
            if (!(st = pg_array_free(a)))
                st = pg_array_new(e->rt, PG_FLOAT32, 1, &n, &arr[o->target]);
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
                    m[o->first + j] = sh >= 0 ? shared_value(sh, o->first + j)
                                              : m[o->first + j] * 2.0f - o->value;
            st = pg_array_unmap(a);
            break;
        }
        }
        if (st)
            snprintf(err, errn, "operation %d: %s", i, pg_last_error());
    }
    for (int i = 0; i < p->npriv && !st; i++) {
        if (!(st = pg_array_read(arr[i], 0, N, buf)))
            h = diff_mix_in(h, buf, sizeof buf);
        else
            snprintf(err, errn, "final read of a%d: %s", i, pg_last_error());
    }
    for (int i = 0; i < p->npriv; i++) {
        if (!arr[i])
            continue;
        pg_status fs = pg_array_free(arr[i]);
        if (!st && fs)
            snprintf(err, errn, "final free of a%d: %s", i, pg_last_error());
        if (!st)
            st = fs;
    }
    *digest = h;
    return st;
}

static void open_shared(diff_env *e, pg_array **shared) {
    int64_t n = N;
    float v[N];
    for (int s = 0; s < NSHARED; s++) {
        REQUIRE_OK(pg_array_new(e->rt, PG_FLOAT32, 1, &n, &shared[s]));
        for (int i = 0; i < N; i++)
            v[i] = shared_value(s, i);
        REQUIRE_OK(pg_array_write(shared[s], 0, N, v));
    }
}

/* ------------------------------------------------------------------ one round */

typedef struct round round;

typedef struct worker {
    round *r;
    int first, count; /* its programs */
    pg_status st[PER_THREAD];
    uint64_t got[PER_THREAD];
    char err[PER_THREAD][256]; /* the message of a failed call (thread-local, so kept here) */
    int ran;                   /* programs started */
} worker;

struct round {
    diff_env e;
    pg_array *shared[NSHARED];
    const program *progs;
    atomic_long ops_done;
    atomic_int finished; /* workers done */
};

static void *work(void *arg) {
    worker *w = arg;
    for (int j = 0; j < w->count; j++) {
        w->ran = j + 1;
        w->st[j] = run(&w->r->e, w->r->shared, &w->r->progs[w->first + j], &w->got[j],
                       &w->r->ops_done, w->err[j], sizeof w->err[j]);
        if (w->st[j]) /* refused (a close): this thread stops */
            break;
    }
    atomic_fetch_add(&w->r->finished, 1);
    return NULL;
}

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static char hang_msg[256];

static void on_alarm(int sig) {
    (void)sig;
    ssize_t w = write(2, hang_msg, strlen(hang_msg));
    (void)w;
    _exit(3);
}

typedef struct totals {
    int programs, finished, cut, mismatches, failed;
} totals;

/* One round: `nthreads` threads run progs[first ...] (PER_THREAD each, fewer at the end). */
static void run_round(int rno, const char *devices, int nthreads, const program *progs,
                      const uint64_t *expect, int first, int total, int close_at, totals *t) {
    int config = rno % DIFF_CONFIGS;
    static round r; /* large enough to keep off the stack; one round at a time */
    memset(&r, 0, sizeof r);
    r.progs = progs;
    diff_open_config(&r.e, devices, config);
    open_shared(&r.e, r.shared);
    worker w[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    int nw = 0;
    for (int k = 0; k < nthreads && first + k * PER_THREAD < total; k++, nw++) {
        memset(&w[k], 0, sizeof w[k]);
        w[k].r = &r;
        w[k].first = first + k * PER_THREAD;
        w[k].count = total - w[k].first < PER_THREAD ? total - w[k].first : PER_THREAD;
    }
    for (int k = 0; k < nw; k++)
        pthread_create(&th[k], NULL, work, &w[k]);
    if (close_at > 0) {
        /* Close once the threads together have started close_at operations, mid-work. */
        while (atomic_load(&r.ops_done) < close_at && atomic_load(&r.finished) < nw)
            sleep_us(50);
        CHECK_OK(pg_runtime_free(r.e.rt));
    }
    for (int k = 0; k < nw; k++)
        pthread_join(th[k], NULL);
    if (close_at <= 0) {
        for (int s = 0; s < NSHARED; s++)
            CHECK_OK(pg_array_free(r.shared[s]));
        diff_close(&r.e);
    }
    for (int k = 0; k < nw; k++)
        for (int j = 0; j < w[k].count; j++) {
            int g = w[k].first + j;
            const char *why = NULL;
            char msg[600];
            t->programs++;
            if (j >= w[k].ran) { /* never started: its thread stopped at the close */
                t->cut++;
                continue;
            }
            pg_status st = w[k].st[j];
            if (st == PG_ERROR_STATE && close_at > 0) {
                t->cut++;
                continue;
            }
            if (st) {
                snprintf(msg, sizeof msg, "%s: %s", pg_status_name(st), w[k].err[j]);
                why = msg;
            } else if (w[k].got[j] != expect[g]) {
                why = "different values";
            }
            if (!why) {
                t->finished++;
                continue;
            }
            if (t->mismatches++ < 3) {
                fprintf(
                    stderr, "MISMATCH in round %d (%s / %s / %s, %d threads%s), thread %d: %s\n",
                    rno, DIFF_POLICIES[config / 8], DIFF_STREAMS[config / 4 % 2],
                    DIFF_PARENTS[config % 4], nw, close_at > 0 ? ", closed mid-work" : "", k, why);
                print_program(&progs[g]);
            }
            t->failed++;
        }
}

/* ------------------------------------------------------------------ a mapping two threads share
 * The random rounds found this: a thread that had mapped a shared input for reading, then
 * unmapped it while another thread's read still shared the mapping, was taken for its holder:
 * its next wait on work held back behind the mapping failed with "this thread has mapped"
 * (issue 15's spurious StateException, Java with 8 threads). And the thread really holding it
 * alone was not seen as the holder: its wait on the same work never ended. */

typedef struct sharer {
    pg_array *x;
    _Atomic int step; /* 1: mapped; 2: may go on; 3: done */
    int unmap_first;  /* only unmap (else first read x, behind a writer held back by us) */
    pg_status st;
    char err[256];
    float x0;
} sharer;

static void wait_step(_Atomic int *step, int want) {
    while (atomic_load(step) < want)
        sleep_us(200);
}

static void *share_mapping(void *arg) {
    sharer *s = arg;
    void *m;
    s->st = pg_array_map(s->x, PG_ACCESS_IN, &m); /* shares the main thread's read mapping */
    atomic_store(&s->step, 1);
    wait_step(&s->step, 2);
    if (!s->st && s->unmap_first) {
        sleep_us(30000); /* the main thread now waits for x behind this mapping */
        s->st = pg_array_unmap(s->x);
    } else if (!s->st) {
        /* Sole holder now: waiting for work held back behind its own mapping is a deadlock. */
        s->st = pg_array_read(s->x, 0, 1, &s->x0);
        snprintf(s->err, sizeof s->err, "%s", pg_last_error());
        pg_status un = pg_array_unmap(s->x);
        if (!s->st)
            s->st = un;
    }
    atomic_store(&s->step, 3);
    return NULL;
}

static void shared_mapping(int unmap_first) {
    enum { M = 256 };
    pg_runtime *rt = test_runtime("host:2", NULL, NULL);
    pg_kernel *scale = test_kernel(rt, "scale", NULL);
    sharer s = {0};
    s.x = test_array(rt, M);
    s.unmap_first = unmap_first;
    float v[M];
    for (int i = 0; i < M; i++)
        v[i] = (float)i;
    REQUIRE_OK(pg_array_write(s.x, 0, M, v));
    void *m;
    REQUIRE_OK(pg_array_map(s.x, PG_ACCESS_IN, &m));
    pthread_t t;
    pthread_create(&t, NULL, share_mapping, &s);
    wait_step(&s.step, 1);
    CHECK_OK(s.st);
    CHECK_OK(pg_array_unmap(s.x)); /* the other thread still holds the mapping */
    pg_arg args[] = {pg_arg_array(s.x), pg_arg_float(2.0f), pg_arg_int(M)};
    CHECK_OK(pg_kernel_launch(scale, dim1(1), dim1(M), 0, args, 3)); /* held back */
    atomic_store(&s.step, 2);
    if (unmap_first) {
        /* Not this thread's mapping any more: the read waits for the other thread's unmap. */
        float got[M];
        CHECK_OK(pg_array_read(s.x, 0, M, got));
        int wrong = 0;
        for (int i = 0; i < M; i++)
            wrong += got[i] != (float)i * 2.0f;
        CHECK(wrong == 0);
    }
    /* A hang is a failure, not a stuck suite: give the other thread 20 s. */
    for (int w = 0; w < 20000 && atomic_load(&s.step) < 3; w++)
        sleep_us(1000);
    if (atomic_load(&s.step) < 3) {
        fprintf(stderr, "shared mapping: the sole holder's wait on its own mapping hung\n");
        CHECK(0);
        return; /* the thread is stuck in the runtime: leave both */
    }
    pthread_join(t, NULL);
    if (unmap_first)
        CHECK_OK(s.st);
    else
        CHECK(s.st == PG_ERROR_STATE && strstr(s.err, "this thread has mapped") != NULL);
    CHECK_OK(pg_runtime_free(rt));
}

/* TSan found this in the random rounds: a host read shared another thread's open write access
 * to the array (a write mapping, or pg_array_write's copy) and read while it was being written.
 * The read comes after that write: like a kernel, it waits for the write to end. */

typedef struct late_reader {
    pg_array *x;
    _Atomic int step; /* 1: reading */
    pg_status st;
    float got;
} late_reader;

static void *read_first(void *arg) {
    late_reader *r = arg;
    atomic_store(&r->step, 1);
    r->st = pg_array_read(r->x, 0, 1, &r->got);
    return NULL;
}

static void read_during_write_mapping(void) {
    pg_runtime *rt = test_runtime("host:2", NULL, NULL);
    late_reader r = {0};
    r.x = test_array(rt, 64);
    float *m;
    REQUIRE_OK(pg_array_map(r.x, PG_ACCESS_INOUT, (void **)&m));
    m[0] = 5.0f; /* half-way through this thread's write */
    pthread_t t;
    pthread_create(&t, NULL, read_first, &r);
    wait_step(&r.step, 1);
    sleep_us(30000);
    m[0] = 7.0f; /* the write's final value */
    CHECK_OK(pg_array_unmap(r.x));
    pthread_join(t, NULL);
    CHECK_OK(r.st);
    if (r.got != 7.0f)
        fprintf(stderr, "read during another thread's write mapping: got %g, expected 7\n", r.got);
    CHECK(r.got == 7.0f);
    CHECK_OK(pg_runtime_free(rt));
}

int main(void) {
    int nprog = diff_env_int("PG_TDIFF_PROGRAMS", 96);
    unsigned seed0 = (unsigned)diff_env_int("PG_TDIFF_SEED", 1);
    int nthreads = diff_env_int("PG_TDIFF_THREADS", 4);
    int timeout = diff_env_int("PG_TDIFF_TIMEOUT", 300);
    if (nthreads < 1 || nthreads > MAX_THREADS || nprog < 1) {
        fprintf(stderr, "PG_TDIFF_THREADS must be 1..%d and PG_TDIFF_PROGRAMS positive\n",
                MAX_THREADS);
        return 1;
    }
    shared_mapping(1);
    shared_mapping(0);
    read_during_write_mapping();
    const char *devices = test_devices("host:4");
    int per_round = nthreads * PER_THREAD, rounds = (nprog + per_round - 1) / per_round;
    program *progs = malloc(sizeof(program) * (size_t)nprog);
    uint64_t *expect = malloc(sizeof(uint64_t) * (size_t)nprog);
    int *close_at = calloc((size_t)rounds, sizeof(int));

    /* Which rounds close, and when: from the seed, so a failure reruns the same way. */
    for (int rno = 0; rno < rounds; rno++) {
        unsigned s = seed0 * 2654435761u + (unsigned)rno * 7919u;
        int closes = diff_rnd(&s) % 3 == 0;
        int ops = 0;
        for (int g = rno * per_round; g < nprog && g < (rno + 1) * per_round; g++) {
            generate(seed0 + (unsigned)g, !closes, &progs[g]);
            ops += progs[g].nops;
        }
        close_at[rno] = closes ? 1 + (int)(diff_rnd(&s) % (unsigned)ops) : 0;
    }

    /* The reference: each program alone on one serial device, the shared inputs as they are. */
    diff_env serial;
    diff_open(&serial, diff_serial_devices(devices), "sync", "round-robin", "fifo", "disjoint");
    pg_array *shared[NSHARED];
    open_shared(&serial, shared);
    atomic_long ops = 0;
    for (int g = 0; g < nprog; g++) {
        char err[256];
        pg_status st = run(&serial, shared, &progs[g], &expect[g], &ops, err, sizeof err);
        if (st) {
            fprintf(stderr, "serial run failed: %s\n", err);
            print_program(&progs[g]);
            return 1;
        }
    }
    for (int s = 0; s < NSHARED; s++)
        CHECK_OK(pg_array_free(shared[s]));
    diff_close(&serial);

    signal(SIGALRM, on_alarm);
    totals t = {0};
    int closes = 0;
    for (int rno = 0; rno < rounds; rno++) {
        snprintf(hang_msg, sizeof hang_msg,
                 "HANG: round %d (seeds %u..) did not finish in %d s%s\n", rno,
                 seed0 + (unsigned)(rno * per_round), timeout,
                 close_at[rno] ? " (a close round)" : "");
        alarm((unsigned)timeout);
        run_round(rno, devices, nthreads, progs, expect, rno * per_round, nprog, close_at[rno], &t);
        alarm(0);
        closes += close_at[rno] > 0;
    }
    printf("threaded differential: %d programs on %s, %d threads, %d rounds (%d closed mid-work, "
           "%d programs cut short), seeds %u..%u: %d mismatches, %d programs failed\n",
           t.programs, devices, nthreads, rounds, closes, t.cut, seed0, seed0 + (unsigned)nprog - 1,
           t.mismatches, t.failed);
    CHECK(t.programs == nprog && t.finished + t.cut + t.failed == nprog);
    CHECK(t.failed == 0);
    free(progs);
    free(expect);
    free(close_at);
    CHECK_DONE();
}

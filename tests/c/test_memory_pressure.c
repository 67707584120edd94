/* test_memory_pressure.c: device_memory_limit — a working set three times the limit runs and
 * gives the serial result (evicting, writing dirty copies back), a launch whose own arguments
 * do not fit fails with PG_ERROR_OUT_OF_MEMORY naming the sizes and the runtime goes on, and
 * two kernels that push each other out of one device on every launch (ping-pong) are stopped
 * with an error instead of thrashing. Runs on CPU devices (or PG_TEST_DEVICES). */
#include "kernels_common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (UINT64_C(1) << 20)
#define LIMIT (4 * MIB)

/* Unsigned arithmetic wraps by definition: the serial reference computes the same bits. */
static const char *SRC =
    "extern \"C\" __global__ void mix3(unsigned *y, const unsigned *a, const unsigned *b,\n"
    "                                  unsigned k, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = y[i] * 3u + (a[i] ^ b[i]) + k; }\n"
    "extern \"C\" __global__ void bump(unsigned *y, const unsigned *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] + x[i] + 1u; }\n";

/* Every launch on device 0: the whole working set presses on one device's limit. */
static int pin0_choose(void *state, const pg_policy_view *v) {
    (void)state;
    (void)v;
    return 0;
}
static const pg_device_policy PIN0 = {NULL, pin0_choose, NULL};

static pg_runtime *limited(const char *devices, const char *policy, const char *limit) {
    pg_options o;
    pg_options_init(&o);
    o.devices = test_devices(devices);
    o.policy = policy;
    REQUIRE_OK(pg_options_set(&o, "device_memory_limit", limit));
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

static pg_kernel *kern(pg_runtime *rt, const char *name) {
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SRC, name, NULL, NULL, &k));
    return k;
}

static pg_array *uarray(pg_runtime *rt, uint64_t bytes) {
    int64_t n = (int64_t)(bytes / 4);
    pg_array *a = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_UINT32, 1, &n, &a));
    return a;
}

static pg_status launch(pg_kernel *k, pg_array **arrays, int narrays, int nscalar, unsigned kval,
                        int n) {
    pg_arg args[5];
    int m = 0;
    for (int i = 0; i < narrays; i++)
        args[m++] = pg_arg_array(arrays[i]);
    if (nscalar == 2)
        args[m++] = pg_arg_uint(kval);
    args[m++] = pg_arg_int(n);
    return pg_kernel_launch(k, dim1((uint32_t)((n + 255) / 256)), dim1(256), 0, args, m);
}

static pg_stats stats(pg_runtime *rt) {
    pg_stats s;
    REQUIRE_OK(pg_runtime_stats(rt, &s));
    return s;
}

/* 12 arrays of 1 MiB, limit 4 MiB: passes of y = 3y + (a ^ b) + k over overlapping triples,
 * each launch touching a different subset; every array is read at the end and compared with
 * the same arithmetic done here. */
#define NARR 12
#define ELEMS (MIB / 4)
#define PASSES 3

static void streaming(const char *devices, const char *policy) {
    pg_runtime *rt = limited(devices, policy, "4M");
    pg_kernel *k = kern(rt, "mix3");
    pg_array *x[NARR];
    static unsigned ref[NARR][ELEMS], got[ELEMS];
    for (int j = 0; j < NARR; j++) {
        x[j] = uarray(rt, MIB);
        for (int i = 0; i < (int)ELEMS; i++)
            ref[j][i] = (unsigned)(j * 7919 + i);
        REQUIRE_OK(pg_array_write(x[j], 0, ELEMS, ref[j]));
    }
    for (int p = 0; p < PASSES; p++)
        for (int j = 0; j < NARR; j++) {
            int yi = (j + 1) % NARR, ai = j, bi = (j + 5) % NARR;
            unsigned kv = (unsigned)(p * 100 + j);
            pg_array *args[3] = {x[yi], x[ai], x[bi]};
            CHECK_OK(launch(k, args, 3, 2, kv, (int)ELEMS));
            for (int i = 0; i < (int)ELEMS; i++)
                ref[yi][i] = ref[yi][i] * 3u + (ref[ai][i] ^ ref[bi][i]) + kv;
        }
    int wrong = 0;
    for (int j = 0; j < NARR; j++) {
        CHECK_OK(pg_array_read(x[j], 0, ELEMS, got));
        if (memcmp(got, ref[j], sizeof got))
            wrong++;
    }
    CHECK(wrong == 0);
    pg_stats s = stats(rt);
    printf("streaming on %s (%s): %llu evictions, %llu bytes evicted, %llu write-backs, peak "
           "%llu / %llu bytes\n",
           test_devices(devices), policy, (unsigned long long)s.evictions,
           (unsigned long long)s.bytes_evicted, (unsigned long long)s.writebacks,
           (unsigned long long)s.device_bytes_peak[0], (unsigned long long)s.device_bytes_peak[1]);
    CHECK(s.evictions > 0);
    CHECK(s.bytes_evicted >= s.evictions * MIB);
    CHECK(s.writebacks > 0);
    for (int d = 0; d < s.ndevices; d++)
        CHECK(s.device_bytes_peak[d] <= LIMIT);
    for (int j = 0; j < NARR; j++)
        CHECK_OK(pg_array_free(x[j]));
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_runtime_free(rt));
}

/* One launch needs 6 MiB under a 4 MiB limit: an error naming every size, nothing launched,
 * and the next launch runs. */
static void too_big(void) {
    pg_runtime *rt = limited("host:2", "pin0", "4M");
    pg_kernel *k = kern(rt, "bump");
    pg_array *p = uarray(rt, 3 * MIB), *q = uarray(rt, 3 * MIB), *r = uarray(rt, MIB);
    pg_array *pq[2] = {p, q};
    int n = (int)(3 * MIB / 4);
    CHECK_STATUS(launch(k, pq, 2, 1, 0, n), PG_ERROR_OUT_OF_MEMORY);
    const char *msg = pg_last_error();
    printf("too big: %s\n", msg);
    CHECK(strstr(msg, "3145728") != NULL);  /* each argument */
    CHECK(strstr(msg, "6291456") != NULL);  /* their sum */
    CHECK(strstr(msg, "4194304") != NULL);  /* the limit */
    CHECK(strstr(msg, "device 0") != NULL); /* the device */
    CHECK(strstr(msg, "device_memory_limit") != NULL);
    pg_array *pr[2] = {p, r};
    CHECK_OK(launch(k, pr, 2, 1, 0, (int)(MIB / 4))); /* 4 MiB: fits exactly */
    unsigned v[2];
    CHECK_OK(pg_array_read(p, 0, 1, v));
    CHECK_OK(pg_array_read(p, MIB / 4, 1, v + 1));
    CHECK(v[0] == 1 && v[1] == 0);
    CHECK_OK(pg_array_read(q, 0, 1, v));
    CHECK(v[0] == 0); /* the failed launch did not run */
    CHECK_OK(pg_array_free(p));
    CHECK_OK(pg_array_free(q));
    CHECK_OK(pg_array_free(r));
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_runtime_free(rt));
}

/* Launches over `nsets` pairs of arrays of `bytes` each, in turn, all on device 0: with two
 * pairs that do not fit together every launch evicts what the next one needs (ping-pong);
 * returns the status of the first failing launch (PG_OK if all `rounds` ran) and checks that
 * each pair holds exactly its number of successful launches. */
static pg_status alternate(int nsets, uint64_t bytes, int rounds, int *ran, char *msg, size_t cap) {
    pg_runtime *rt = limited("host:2", "pin0", "4M");
    pg_kernel *k = kern(rt, "bump");
    pg_array *set[3][2];
    int count[3] = {0, 0, 0};
    for (int i = 0; i < nsets; i++)
        for (int j = 0; j < 2; j++)
            set[i][j] = uarray(rt, bytes);
    int n = (int)(bytes / 4);
    pg_status st = PG_OK;
    *ran = 0;
    for (int r = 0; r < rounds && !st; r++) {
        int i = r % nsets;
        st = launch(k, set[i], 2, 1, 0, n); /* y += x + 1 with x = 0: y counts launches */
        if (!st) {
            count[i]++;
            ++*ran;
        }
    }
    snprintf(msg, cap, "%s", st ? pg_last_error() : "");
    for (int i = 0; i < nsets; i++) {
        unsigned v[2];
        CHECK_OK(pg_array_read(set[i][0], 0, 1, v));
        CHECK_OK(pg_array_read(set[i][0], (uint64_t)n - 1, 1, v + 1));
        CHECK(v[0] == (unsigned)count[i] && v[1] == (unsigned)count[i]);
    }
    /* After the error the runtime goes on: a launch on one pair runs. */
    CHECK_OK(launch(k, set[0], 2, 1, 0, n));
    for (int i = 0; i < nsets; i++)
        for (int j = 0; j < 2; j++)
            CHECK_OK(pg_array_free(set[i][j]));
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_runtime_free(rt));
    return st;
}

static void ping_pong(void) {
    int ran = 0;
    char msg[2048];
    /* Two pairs of 3.5 MiB each under 4 MiB, alternating: each launch writes back and evicts
     * the other pair, which the next launch loads again. */
    pg_status st = alternate(2, 7 * MIB / 4, 1000, &ran, msg, sizeof msg);
    printf("ping-pong: stopped after %d launches: %s\n", ran, msg);
    CHECK(st == PG_ERROR_OUT_OF_MEMORY);
    CHECK(ran >= 2 && ran < 1000);
    CHECK(strstr(msg, "device 0") != NULL);
    CHECK(strstr(msg, "4194304") != NULL);
    CHECK(strstr(msg, "7340032") != NULL); /* the working set of the two launches */
    /* Not ping-pong: three such pairs in turn (streaming over 3x the limit, each launch on a
     * different subset), and two pairs of 2.5 MiB (5 MiB together) that press only a little:
     * each launch evicts a quarter of the device. */
    CHECK_OK(alternate(3, 7 * MIB / 4, 60, &ran, msg, sizeof msg));
    CHECK(ran == 60);
    CHECK_OK(alternate(2, 5 * MIB / 4, 60, &ran, msg, sizeof msg));
    CHECK(ran == 60);
}

/* Kernels held back behind a host mapping are placed when the mapping ends, on a device full
 * of dirty data that must be written back first: they still read the mapped value, in order. */
static void held_back(void) {
    pg_runtime *rt = limited("host:2", "pin0", "4M");
    pg_kernel *k = kern(rt, "bump");
    int n = (int)ELEMS;
    pg_array *x = uarray(rt, MIB), *y = uarray(rt, MIB), *z = uarray(rt, MIB), *f[3];
    for (int i = 0; i < 3; i++)
        f[i] = uarray(rt, MIB);
    unsigned *m;
    REQUIRE_OK(pg_array_map(x, PG_ACCESS_OUT, (void **)&m));
    for (int i = 0; i < n; i++)
        m[i] = (unsigned)i;
    pg_array *yx[2] = {y, x};
    for (int r = 0; r < 3; r++)
        CHECK_OK(launch(k, yx, 2, 1, 0, n)); /* held back until the unmap */
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 3; i++) { /* device 0 fills with f0..f2, dirty, and z */
            pg_array *fz[2] = {f[i], z};
            CHECK_OK(launch(k, fz, 2, 1, 0, n));
        }
    pg_stats s = stats(rt);
    CHECK(s.pending == 3);
    CHECK_OK(pg_array_unmap(x));
    static unsigned got[ELEMS];
    CHECK_OK(pg_array_read(y, 0, ELEMS, got));
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += got[i] != 3u * ((unsigned)i + 1u);
    CHECK(wrong == 0);
    for (int i = 0; i < 3; i++) {
        CHECK_OK(pg_array_read(f[i], 0, 1, got));
        CHECK(got[0] == 2);
    }
    s = stats(rt);
    CHECK(s.writebacks > 0 && s.pending == 0);
    CHECK(s.device_bytes_peak[0] <= LIMIT);
    pg_array *all[6] = {x, y, z, f[0], f[1], f[2]};
    for (int i = 0; i < 6; i++)
        CHECK_OK(pg_array_free(all[i]));
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_runtime_free(rt));
}

/* Room for a held-back kernel is made by writing back an array whose own last writer is held
 * back too (later in line): the write-back copy reads the value before that writer, which
 * then waits for it. */
static void held_back_writer(void) {
    pg_runtime *rt = limited("host:2", "pin0", "2M");
    pg_kernel *k = kern(rt, "bump");
    int n = (int)ELEMS;
    pg_array *x = uarray(rt, MIB), *y1 = uarray(rt, MIB), *y2 = uarray(rt, MIB);
    pg_array *y1x[2] = {y1, x}, *y2x[2] = {y2, x};
    CHECK_OK(launch(k, y1x, 2, 1, 0, n)); /* device 0: y1 (its only copy) and x */
    unsigned *m;
    REQUIRE_OK(pg_array_map(x, PG_ACCESS_OUT, (void **)&m));
    for (int i = 0; i < n; i++)
        m[i] = 5;
    CHECK_OK(launch(k, y2x, 2, 1, 0, n)); /* both held back; the first needs y1 evicted */
    CHECK_OK(launch(k, y1x, 2, 1, 0, n));
    CHECK_OK(pg_array_unmap(x));
    unsigned v[2];
    CHECK_OK(pg_array_read(y1, 0, 1, v));
    CHECK_OK(pg_array_read(y2, 0, 1, v + 1));
    CHECK(v[0] == 1u + 6u && v[1] == 6u);
    CHECK(stats(rt).writebacks > 0);
    CHECK_OK(pg_array_free(x));
    CHECK_OK(pg_array_free(y1));
    CHECK_OK(pg_array_free(y2));
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_runtime_free(rt));
}

/* A prefetch to a device with no room short of waiting (its data dirty) does nothing: it is a
 * hint. The launch that needs the array makes the room. */
static void prefetch_full(void) {
    pg_runtime *rt = limited("host:2", "pin0", "2M");
    pg_kernel *k = kern(rt, "bump");
    int n = (int)ELEMS;
    pg_array *a = uarray(rt, MIB), *b = uarray(rt, MIB), *c = uarray(rt, MIB);
    pg_array *ab[2] = {a, b}, *ba[2] = {b, a}, *ca[2] = {c, a};
    CHECK_OK(launch(k, ab, 2, 1, 0, n));
    CHECK_OK(launch(k, ba, 2, 1, 0, n)); /* device 0 holds a and b, both dirty */
    static unsigned ones[ELEMS];
    for (int i = 0; i < n; i++)
        ones[i] = 1;
    CHECK_OK(pg_array_write(c, 0, ELEMS, ones)); /* on the host only */
    CHECK_OK(pg_array_prefetch(c, 0));
    CHECK_OK(launch(k, ca, 2, 1, 0, n));
    unsigned v[3];
    CHECK_OK(pg_array_read(a, 0, 1, v));
    CHECK_OK(pg_array_read(b, 0, 1, v + 1));
    CHECK_OK(pg_array_read(c, 0, 1, v + 2));
    CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3);
    CHECK_OK(pg_array_free(a));
    CHECK_OK(pg_array_free(b));
    CHECK_OK(pg_array_free(c));
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_runtime_free(rt));
}

/* Threads launching into one device under the limit at once: each placement that has to wait
 * for room starts over with the lock dropped, while the others go on. */
#define THREADS 4
#define TLAUNCHES 24

typedef struct worker {
    pg_kernel *k;
    pg_array *x, *y[2];
    int ok;
} worker;

static void *work(void *p) {
    worker *w = p;
    int n = (int)ELEMS;
    for (int r = 0; r < TLAUNCHES; r++) {
        pg_array *yx[2] = {w->y[r % 2], w->x};
        if (launch(w->k, yx, 2, 1, 0, n) == PG_OK)
            w->ok++;
        else
            fprintf(stderr, "thread launch: %s\n", pg_last_error());
    }
    return NULL;
}

static void threads(void) {
    pg_runtime *rt = limited("host:2", "pin0", "4M");
    pg_kernel *k = kern(rt, "bump");
    pg_array *x = uarray(rt, MIB);
    static unsigned ones[ELEMS], got[ELEMS];
    for (size_t i = 0; i < ELEMS; i++)
        ones[i] = 1;
    REQUIRE_OK(pg_array_write(x, 0, ELEMS, ones));
    worker w[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){k, x, {uarray(rt, MIB), uarray(rt, MIB)}, 0};
        pthread_create(&t[i], NULL, work, &w[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        CHECK(w[i].ok == TLAUNCHES);
        for (int j = 0; j < 2; j++) {
            CHECK_OK(pg_array_read(w[i].y[j], 0, ELEMS, got));
            int wrong = 0;
            for (size_t e = 0; e < ELEMS; e++)
                wrong += got[e] != (unsigned)(TLAUNCHES / 2) * 2u;
            CHECK(wrong == 0);
            CHECK_OK(pg_array_free(w[i].y[j]));
        }
    }
    pg_stats s = stats(rt);
    CHECK(s.evictions > 0 && s.device_bytes_peak[0] <= LIMIT);
    CHECK_OK(pg_array_free(x));
    CHECK_OK(pg_kernel_free(k));
    CHECK_OK(pg_runtime_free(rt));
}

static void options(void) {
    pg_options o;
    pg_options_init(&o);
    CHECK(o.device_memory_limit == PG_DEVICE_MEMORY_UNSET);
    static const struct {
        const char *text;
        uint64_t bytes;
    } good[] = {
        {"4194304", 4194304}, {"64M", 64 * MIB},        {"1G", 1024 * MIB}, {"1.5K", 1536},
        {"2KiB", 2048},       {"3MB", 3 * MIB},         {"0", 0},           {"4194304.0", 4194304},
        {" 16m", 16 * MIB},   {"1T", UINT64_C(1) << 40}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        CHECK_OK(pg_options_set(&o, "device_memory_limit", good[i].text));
        if (o.device_memory_limit != good[i].bytes)
            fprintf(stderr, "'%s' gave %llu\n", good[i].text,
                    (unsigned long long)o.device_memory_limit);
        CHECK(o.device_memory_limit == good[i].bytes);
    }
    static const char *bad[] = {"", "-1", "abc", "12Q", "0.5", "1e30", "nan", "4M4", "M"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        o.device_memory_limit = 7;
        CHECK_STATUS(pg_options_set(&o, "device_memory_limit", bad[i]), PG_ERROR_ARGUMENT);
        CHECK(strstr(pg_last_error(), "device_memory_limit") != NULL);
        CHECK(o.device_memory_limit == 7); /* a failed set changes nothing */
    }

    /* The environment variable applies when the option is unset; an explicit 0 lifts it. */
    setenv("PG_DEVICE_MEMORY_LIMIT", "2M", 1);
    for (int explicit_none = 0; explicit_none < 2; explicit_none++) {
        pg_options_init(&o);
        o.devices = test_devices("host:1");
        if (explicit_none)
            o.device_memory_limit = 0;
        pg_runtime *rt = NULL;
        REQUIRE_OK(pg_runtime_new(&o, &rt));
        pg_kernel *k = kern(rt, "bump");
        pg_array *ab[2] = {uarray(rt, 3 * MIB / 2), uarray(rt, 3 * MIB / 2)};
        pg_status st = launch(k, ab, 2, 1, 0, (int)(3 * MIB / 8));
        if (explicit_none) {
            CHECK_OK(st);
        } else {
            CHECK(st == PG_ERROR_OUT_OF_MEMORY);
            CHECK(strstr(pg_last_error(), "2097152") != NULL);
        }
        CHECK_OK(pg_array_free(ab[0]));
        CHECK_OK(pg_array_free(ab[1]));
        CHECK_OK(pg_kernel_free(k));
        CHECK_OK(pg_runtime_free(rt));
    }
    setenv("PG_DEVICE_MEMORY_LIMIT", "lots", 1);
    pg_options_init(&o);
    o.devices = "host:1";
    pg_runtime *rt = NULL;
    CHECK_STATUS(pg_runtime_new(&o, &rt), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "PG_DEVICE_MEMORY_LIMIT") != NULL);
    unsetenv("PG_DEVICE_MEMORY_LIMIT");
}

int main(void) {
    REQUIRE_OK(pg_policy_register("pin0", &PIN0));
    options();
    streaming("host:2", "round-robin");
    streaming("host:2", "pin0");
    too_big();
    held_back();
    held_back_writer();
    prefetch_full();
    threads();
    ping_pong();
    CHECK_DONE();
}

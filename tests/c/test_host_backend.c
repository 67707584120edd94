/* test_host_backend.c: the CPU-device backend on its own — specs, memory, in-order streams,
 * cross-stream events, copies, launches over the worker pool, parameter copying, timing,
 * a stress run, and close with work still queued. */
#include "check.h"
#include "devices/backend.h"
#include "nvrtc/cpu_compile.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const pg__backend_ops *ops;
static pg__backend *b;

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static uint64_t slot_ptr(void *p) {
    return (uint64_t)(uintptr_t)p;
}

static void *param_ptr(void **params, int i) {
    return (void *)(uintptr_t) * (uint64_t *)params[i];
}

/* ------------------------------------------------------------ a gate kernels can wait behind */

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open;

static void gate_set(int open) {
    pthread_mutex_lock(&gate_mu);
    gate_open = open;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

static void gate_pass(void) {
    pthread_mutex_lock(&gate_mu);
    while (!gate_open)
        pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
}

/* ------------------------------------------------------------ hand-written kernels */

/* params: (int *log, int *len, int id): appends id. Runs as one block. */
static void k_append(const pg__cpu_launch *l, uint64_t begin, uint64_t end, void **params) {
    int *log = param_ptr(params, 0), *len = param_ptr(params, 1);
    log[(*len)++] = *(int *)params[2];
}

/* params: (int *x, int v): waits for the gate, then *x = v. */
static void k_gated_store(const pg__cpu_launch *l, uint64_t begin, uint64_t end, void **params) {
    gate_pass();
    *(int *)param_ptr(params, 0) = *(int *)params[1];
}

/* params: (uint32_t *count, uint32_t *bad): count[block]++ per block; sleeps a little per
 * block so the pool's threads get their share; records the threads that ran. */
static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t seen[64];
static int nseen;
static pg__cpu_launch seen_launch;

static void k_count(const pg__cpu_launch *l, uint64_t begin, uint64_t end, void **params) {
    uint32_t *count = param_ptr(params, 0);
    uint32_t *bad = param_ptr(params, 1);
    uint64_t n = (uint64_t)l->grid.x * l->grid.y * l->grid.z;
    if (begin >= end || end > n)
        __atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
    for (uint64_t i = begin; i < end && i < n; i++) {
        __atomic_fetch_add(&count[i], 1, __ATOMIC_RELAXED);
        sleep_us(20);
    }
    pthread_t me = pthread_self();
    pthread_mutex_lock(&seen_mu);
    int known = 0;
    for (int i = 0; i < nseen; i++)
        known |= pthread_equal(seen[i], me);
    if (!known && nseen < 64)
        seen[nseen++] = me;
    seen_launch = *l;
    pthread_mutex_unlock(&seen_mu);
}

/* params: (uint64_t *out, uint64_t v): waits for the gate, then *out = v (the slot's value at
 * launch time). */
static void k_gated_copy_param(const pg__cpu_launch *l, uint64_t begin, uint64_t end,
                               void **params) {
    gate_pass();
    *(uint64_t *)param_ptr(params, 0) = *(uint64_t *)params[1];
}

/* params: (sleep us): sleeps. */
static void k_sleep(const pg__cpu_launch *l, uint64_t begin, uint64_t end, void **params) {
    sleep_us((long)*(uint64_t *)params[0]);
}

/* params: (uint32_t *v, int n): v[i] += 1 for i in the blocks' range (block = element). */
static void k_inc(const pg__cpu_launch *l, uint64_t begin, uint64_t end, void **params) {
    uint32_t *v = param_ptr(params, 0);
    for (uint64_t i = begin; i < end; i++)
        v[i]++;
}

/* params: (uint32_t *dst, const uint32_t *src): dst[i] = src[i] * 2 per block. */
static void k_double(const pg__cpu_launch *l, uint64_t begin, uint64_t end, void **params) {
    uint32_t *dst = param_ptr(params, 0);
    const uint32_t *src = param_ptr(params, 1);
    for (uint64_t i = begin; i < end; i++)
        dst[i] = src[i] * 2;
}

static pg_dim3 dim(uint32_t x, uint32_t y, uint32_t z) {
    pg_dim3 d = {x, y, z};
    return d;
}

static pg_status launch(pg__bstream *s, pg__cpu_entry fn, pg_dim3 grid, const uint64_t *p, int n,
                        pg__timing *t) {
    return ops->launch(b, s, (void *)fn, grid, dim(32, 1, 1), 0, p, n, t);
}

/* Record an event on s, wait for it, free it. */
static void finish(pg__bstream *s) {
    pg__bevent *e;
    REQUIRE_OK(ops->event_record(b, s, &e));
    CHECK_OK(ops->event_wait(b, e));
    CHECK(ops->event_done(b, e));
    ops->event_free(b, e);
}

/* ------------------------------------------------------------ tests */

static void test_bad_specs(void) {
    const char *bad[] = {"0", "17", "x", "-1", "2x", " 2", "1.5", "99999999999999999999", "host"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const pg__backend_ops *o = NULL;
        pg__backend *bb = NULL;
        int n = -1;
        CHECK_STATUS(pg__host_backend_open(bad[i], 0, 0, &o, &bb, &n), PG_ERROR_ARGUMENT);
        CHECK(strstr(pg_last_error(), "bad host device spec") != NULL);
        CHECK(strstr(pg_last_error(), bad[i]) != NULL);
        CHECK(bb == NULL && n == -1);
    }
    setenv("PG_HOST_THREADS", "many", 1);
    const pg__backend_ops *o = NULL;
    pg__backend *bb = NULL;
    int n = 0;
    CHECK_STATUS(pg__host_backend_open("2", 0, 0, &o, &bb, &n), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "PG_HOST_THREADS") != NULL);
    setenv("PG_HOST_THREADS", "0", 1);
    CHECK_STATUS(pg__host_backend_open("2", 0, 0, &o, &bb, &n), PG_ERROR_ARGUMENT);

    /* Good specs: "" is one device, "16" the most. */
    unsetenv("PG_HOST_THREADS");
    REQUIRE_OK(pg__host_backend_open("", 0, 0, &o, &bb, &n));
    CHECK(n == 1);
    pg_device_info info;
    CHECK_OK(o->device_info(bb, 0, &info));
    CHECK(info.multiprocessors >= 1);
    o->close(bb);
    REQUIRE_OK(pg__host_backend_open("16", 0, 0, &o, &bb, &n));
    CHECK(n == 16);
    o->close(bb);
}

static void test_device_info(int ndev) {
    CHECK(ndev == 2);
    CHECK(!strcmp(ops->name, "host"));
    CHECK(ops->wants_timing_events == 0);
    for (int d = 0; d < ndev; d++) {
        pg_device_info info;
        REQUIRE_OK(ops->device_info(b, d, &info));
        char want[64];
        snprintf(want, sizeof want, "CPU device %d (4 threads)", d);
        CHECK(!strcmp(info.name, want));
        CHECK(info.kind == PG_DEVICE_CPU);
        CHECK(info.multiprocessors == 4);
        CHECK(info.memory_bytes > ((uint64_t)64 << 20));
        CHECK(info.compute_major == 0);
    }
    pg_device_info info;
    CHECK(ops->device_info(b, 2, &info) != PG_OK);
}

static void test_memory(void) {
    size_t sizes[] = {0, 1, 63, 64, 1000, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        void *h = NULL, *d = NULL;
        REQUIRE_OK(ops->host_alloc(b, sizes[i], &h));
        REQUIRE_OK(ops->dev_alloc(b, 1, sizes[i], NULL, &d));
        CHECK(h && d && h != d);
        CHECK((uintptr_t)h % 64 == 0 && (uintptr_t)d % 64 == 0);
        int zero = 1;
        for (size_t k = 0; k < sizes[i]; k++)
            zero &= ((unsigned char *)h)[k] == 0 && ((unsigned char *)d)[k] == 0;
        CHECK(zero);
        ops->host_free(b, h);
        ops->dev_free(b, 1, d);
    }
}

/* 300 operations on one stream, each appending to a log: the log must be in issue order. */
static void test_ordering(void) {
    pg__bstream *s;
    REQUIRE_OK(ops->stream_new(b, 0, &s));
    int *log, *len, *log2;
    REQUIRE_OK(ops->dev_alloc(b, 0, 300 * sizeof(int), s, (void **)&log));
    REQUIRE_OK(ops->dev_alloc(b, 0, 300 * sizeof(int), s, (void **)&log2));
    REQUIRE_OK(ops->dev_alloc(b, 0, sizeof(int), s, (void **)&len));
    for (int i = 0; i < 300; i++) {
        uint64_t p[3] = {slot_ptr(log), slot_ptr(len), (uint64_t)i};
        CHECK_OK(launch(s, k_append, dim(1, 1, 1), p, 3, NULL));
        /* A copy between launches sees every earlier append and none of the later ones. */
        if (i == 150)
            CHECK_OK(ops->copy(b, s, 0, log2, 0, log, 300 * sizeof(int), NULL));
    }
    finish(s);
    CHECK(*len == 300);
    int ok = 1;
    for (int i = 0; i < 300; i++)
        ok &= log[i] == i && log2[i] == (i <= 150 ? i : 0);
    CHECK(ok);
    ops->stream_free(b, s);
    ops->dev_free(b, 0, log);
    ops->dev_free(b, 0, log2);
    ops->dev_free(b, 0, len);
}

/* B waits for an event of A recorded after a held-back store; B's copy must see the store. */
static void test_cross_stream(void) {
    pg__bstream *a, *bs;
    REQUIRE_OK(ops->stream_new(b, 0, &a));
    REQUIRE_OK(ops->stream_new(b, 1, &bs));
    int *x, *y;
    REQUIRE_OK(ops->dev_alloc(b, 0, sizeof(int), a, (void **)&x));
    REQUIRE_OK(ops->dev_alloc(b, 1, sizeof(int), bs, (void **)&y));
    pg__bevent *none, *ea, *eb;
    /* An event on an empty stream is done at once. */
    REQUIRE_OK(ops->event_record(b, a, &none));
    CHECK(ops->event_done(b, none));
    gate_set(0);
    uint64_t p[2] = {slot_ptr(x), 42};
    CHECK_OK(launch(a, k_gated_store, dim(1, 1, 1), p, 2, NULL));
    REQUIRE_OK(ops->event_record(b, a, &ea));
    CHECK_OK(ops->stream_wait(b, bs, ea));
    CHECK_OK(ops->copy(b, bs, 1, y, 0, x, sizeof(int), NULL));
    REQUIRE_OK(ops->event_record(b, bs, &eb));
    sleep_us(20000);
    CHECK(!ops->event_done(b, ea));
    CHECK(!ops->event_done(b, eb));
    CHECK(ops->event_done(b, none));
    gate_set(1);
    CHECK_OK(ops->event_wait(b, eb));
    CHECK(ops->event_done(b, eb));
    CHECK(ops->event_done(b, ea)); /* B ran after A's event */
    CHECK(*y == 42);
    /* Waiting for a finished event, and on the event's own stream, are no-ops that order. */
    CHECK_OK(ops->stream_wait(b, bs, ea));
    CHECK_OK(ops->stream_wait(b, a, ea));
    finish(a);
    finish(bs);
    /* Events outlive their streams, and streams their events. */
    ops->stream_free(b, a);
    CHECK(ops->event_done(b, ea));
    CHECK_OK(ops->event_wait(b, ea));
    ops->event_free(b, ea);
    ops->event_free(b, none);
    ops->event_free(b, eb);
    ops->stream_free(b, bs);
    ops->dev_free(b, 0, x);
    ops->dev_free(b, 1, y);
}

static void test_copies_and_memset(void) {
    size_t n = (1 << 20) + 3;
    unsigned char *h, *h2, *d0, *d1;
    pg__bstream *s0, *s1;
    REQUIRE_OK(ops->stream_new(b, 0, &s0));
    REQUIRE_OK(ops->stream_new(b, 1, &s1));
    REQUIRE_OK(ops->host_alloc(b, n, (void **)&h));
    REQUIRE_OK(ops->host_alloc(b, n, (void **)&h2));
    REQUIRE_OK(ops->dev_alloc(b, 0, n, s0, (void **)&d0));
    REQUIRE_OK(ops->dev_alloc(b, 1, n, s1, (void **)&d1));
    for (size_t i = 0; i < n; i++)
        h[i] = (unsigned char)(i * 7 + 1);
    pg__bevent *e;
    CHECK_OK(ops->copy(b, s0, 0, d0, PG_HOST, h, n, NULL));
    REQUIRE_OK(ops->event_record(b, s0, &e));
    CHECK_OK(ops->stream_wait(b, s1, e));
    CHECK_OK(ops->copy(b, s1, 1, d1, 0, d0, n, NULL));
    CHECK_OK(ops->copy(b, s1, PG_HOST, h2, 1, d1, n, NULL));
    finish(s1);
    CHECK(memcmp(h, h2, n) == 0);
    /* memset is ordered: zero a device buffer between two copies out of it. */
    unsigned char *h3;
    REQUIRE_OK(ops->host_alloc(b, n, (void **)&h3));
    CHECK_OK(ops->memset_zero(b, s1, d1 + 100, 1000));
    CHECK_OK(ops->copy(b, s1, PG_HOST, h3, 1, d1, n, NULL));
    CHECK_OK(ops->memset_zero(b, s1, d1, n));
    finish(s1);
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= h3[i] == (i >= 100 && i < 1100 ? 0 : h[i]);
    CHECK(ok);
    CHECK_OK(ops->copy(b, s1, PG_HOST, h3, 1, d1, n, NULL));
    finish(s1);
    ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= h3[i] == 0;
    CHECK(ok);
    ops->event_free(b, e);
    ops->stream_free(b, s0);
    ops->stream_free(b, s1);
    ops->host_free(b, h);
    ops->host_free(b, h2);
    ops->host_free(b, h3);
    ops->dev_free(b, 0, d0);
    ops->dev_free(b, 1, d1);
}

/* Every block of several grid shapes runs exactly once, on more than one thread. */
static void test_blocks(int pooled) {
    pg__bstream *s;
    REQUIRE_OK(ops->stream_new(b, 0, &s));
    pg_dim3 grids[] = {{1, 1, 1}, {2, 1, 1}, {5, 1, 1}, {7, 5, 3}, {1000, 1, 1}, {13, 17, 11}};
    for (size_t g = 0; g < sizeof grids / sizeof *grids; g++) {
        uint64_t n = (uint64_t)grids[g].x * grids[g].y * grids[g].z;
        uint32_t *count = calloc(n, sizeof *count), bad = 0;
        nseen = 0;
        uint64_t p[2] = {slot_ptr(count), slot_ptr(&bad)};
        CHECK_OK(ops->launch(b, s, (void *)k_count, grids[g], dim(8, 4, 2), 123, p, 2, NULL));
        finish(s);
        int once = 1;
        for (uint64_t i = 0; i < n; i++)
            once &= count[i] == 1;
        CHECK(once);
        CHECK(bad == 0);
        CHECK(seen_launch.grid.x == grids[g].x && seen_launch.grid.y == grids[g].y &&
              seen_launch.grid.z == grids[g].z);
        CHECK(seen_launch.block.x == 8 && seen_launch.block.y == 4 && seen_launch.block.z == 2);
        CHECK(seen_launch.shared_mem == 123);
        if (n >= 1000) /* 1000 blocks of 20 us: the 3 pool threads surely take some */
            CHECK(pooled ? nseen > 1 : nseen == 1);
        if (n == 1)
            CHECK(nseen == 1);
        free(count);
    }
    ops->stream_free(b, s);
}

/* The slots are copied at launch: the kernel runs after the caller overwrote them. */
static void test_params_copied(void) {
    pg__bstream *s;
    REQUIRE_OK(ops->stream_new(b, 1, &s));
    uint64_t out = 0;
    uint64_t slots[2] = {slot_ptr(&out), 0x1234567890abcdefull};
    gate_set(0);
    CHECK_OK(launch(s, k_gated_copy_param, dim(1, 1, 1), slots, 2, NULL));
    slots[0] = 0;
    slots[1] = 7;
    gate_set(1);
    finish(s);
    CHECK(out == 0x1234567890abcdefull);
    ops->stream_free(b, s);
}

static void test_timing(void) {
    pg__bstream *s;
    REQUIRE_OK(ops->stream_new(b, 0, &s));
    pg__timing t1 = {0}, t2 = {0};
    uint64_t p[1] = {3000};
    char src[4096], dst[4096];
    memset(src, 1, sizeof src);
    CHECK_OK(launch(s, k_sleep, dim(1, 1, 1), p, 1, &t1));
    CHECK_OK(ops->copy(b, s, 0, dst, PG_HOST, src, sizeof src, &t2));
    finish(s);
    ops->timing_resolve(b, &t1);
    ops->timing_resolve(b, &t2);
    CHECK(t1.start_ns <= t1.end_ns && t2.start_ns <= t2.end_ns);
    CHECK(t1.end_ns - t1.start_ns >= 2500000); /* the kernel slept 3 ms */
    CHECK(t1.end_ns <= t2.start_ns);           /* in order */
    CHECK(t1.start_ns > 0);
    CHECK(memcmp(src, dst, sizeof src) == 0);
    ops->timing_release(b, &t1);
    ops->timing_release(b, &t2);
    ops->stream_free(b, s);
}

/* Many streams on both devices, many small ops, launches of one device at the same time, and
 * waits across streams and devices. Every 10 ops a stream snapshots its counters into a buffer
 * it never touches again and records an event; its neighbour waits for that event and reads the
 * snapshot, so the neighbour must see exactly the count at the snapshot. */
#define NS 8
#define NOPS 150
#define NROUND (NOPS / 10)
#define LEN 64
static void test_stress(void) {
    pg__bstream *s[NS];
    uint32_t *v[NS], *w[NS], *snap[NS][NROUND];
    for (int i = 0; i < NS; i++) {
        REQUIRE_OK(ops->stream_new(b, i % 2, &s[i]));
        REQUIRE_OK(ops->dev_alloc(b, i % 2, LEN * sizeof(uint32_t), s[i], (void **)&v[i]));
        REQUIRE_OK(ops->dev_alloc(b, i % 2, LEN * sizeof(uint32_t), s[i], (void **)&w[i]));
        for (int r = 0; r < NROUND; r++)
            REQUIRE_OK(
                ops->dev_alloc(b, i % 2, LEN * sizeof(uint32_t), s[i], (void **)&snap[i][r]));
    }
    pg__bevent *last[NS] = {0};
    for (int k = 0; k < NOPS; k++) {
        for (int i = 0; i < NS; i++) {
            uint64_t p[1] = {slot_ptr(v[i])};
            CHECK_OK(launch(s[i], k_inc, dim(LEN, 1, 1), p, 1, NULL));
            if (k % 10 == 8) {
                CHECK_OK(ops->copy(b, s[i], i % 2, snap[i][k / 10], i % 2, v[i],
                                   LEN * sizeof(uint32_t), NULL));
                if (last[i])
                    ops->event_free(b, last[i]);
                REQUIRE_OK(ops->event_record(b, s[i], &last[i]));
            }
            if (k % 10 == 9) {
                int j = (i + 1) % NS; /* j recorded its event in the previous k */
                CHECK_OK(ops->stream_wait(b, s[i], last[j]));
                uint64_t q[2] = {slot_ptr(w[i]), slot_ptr(snap[j][k / 10])};
                CHECK_OK(launch(s[i], k_double, dim(LEN, 1, 1), q, 2, NULL));
            }
        }
    }
    for (int i = 0; i < NS; i++)
        finish(s[i]);
    int ok = 1;
    for (int i = 0; i < NS; i++)
        for (int e = 0; e < LEN; e++)
            ok &= v[i][e] == NOPS && w[i][e] == 2 * (NOPS - 1);
    CHECK(ok);
    for (int i = 0; i < NS; i++) {
        ops->event_free(b, last[i]);
        ops->stream_free(b, s[i]);
        ops->dev_free(b, i % 2, v[i]);
        ops->dev_free(b, i % 2, w[i]);
        for (int r = 0; r < NROUND; r++)
            ops->dev_free(b, i % 2, snap[i][r]);
    }
}

static void *open_gate_later(void *arg) {
    sleep_us(50000);
    gate_set(1);
    return NULL;
}

/* close with queued work: the work finishes first, streams the core did not free included. */
static void test_close_in_flight(void) {
    const pg__backend_ops *o;
    pg__backend *bb;
    int n;
    REQUIRE_OK(pg__host_backend_open("3", 1, 0, &o, &bb, &n));
    CHECK(n == 3);
    pg__bstream *s[3];
    uint32_t *v[3];
    pg__bevent *e = NULL;
    for (int i = 0; i < 3; i++) {
        REQUIRE_OK(o->stream_new(bb, i, &s[i]));
        v[i] = calloc(LEN, sizeof(uint32_t));
    }
    for (int k = 0; k < 20; k++) {
        for (int i = 0; i < 3; i++) {
            uint64_t sl[1] = {2000};
            CHECK_OK(
                o->launch(bb, s[i], (void *)k_sleep, dim(1, 1, 1), dim(1, 1, 1), 0, sl, 1, NULL));
            uint64_t p[1] = {slot_ptr(v[i])};
            CHECK_OK(
                o->launch(bb, s[i], (void *)k_inc, dim(LEN, 1, 1), dim(1, 1, 1), 0, p, 1, NULL));
        }
    }
    /* Hold s[2] behind the gate; a thread opens it while close waits. */
    int held = 0;
    uint64_t g[2] = {slot_ptr(&held), 1};
    gate_set(0);
    CHECK_OK(o->launch(bb, s[2], (void *)k_gated_store, dim(1, 1, 1), dim(1, 1, 1), 0, g, 2, NULL));
    REQUIRE_OK(o->event_record(bb, s[2], &e));
    CHECK(!o->event_done(bb, e));
    o->stream_free(bb, s[0]); /* frees with work queued: drains first */
    CHECK(v[0][0] == 20);
    pthread_t opener;
    REQUIRE_OK(pthread_create(&opener, NULL, open_gate_later, NULL) ? PG_ERROR_INTERNAL : PG_OK);
    o->close(bb);
    CHECK(held == 1);
    pthread_join(opener, NULL);
    /* The event may be freed after close (the core's records can outlive the backend). */
    o->event_free(bb, e);
    int ok = 1;
    for (int i = 0; i < 3; i++) {
        for (int x = 0; x < LEN; x++)
            ok &= v[i][x] == 20;
        free(v[i]);
    }
    CHECK(ok);
}

int main(void) {
    test_bad_specs();
    setenv("PG_HOST_THREADS", "4", 1);
    int ndev = 0;
    REQUIRE_OK(pg__host_backend_open("2", 1, 0, &ops, &b, &ndev));
    test_device_info(ndev);
    test_memory();
    test_ordering();
    test_cross_stream();
    test_copies_and_memset();
    test_blocks(1);
    test_params_copied();
    test_timing();
    test_stress();
    ops->close(b);
    test_close_in_flight();
    setenv("PG_HOST_THREADS", "1", 1);
    REQUIRE_OK(pg__host_backend_open("2", 0, 0, &ops, &b, &ndev));
    test_blocks(0); /* one thread per device: the stream worker runs every block */
    test_stress();
    ops->close(b);
    CHECK_DONE();
}

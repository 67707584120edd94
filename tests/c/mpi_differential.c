/* mpi_differential.c: random programs over owned arrays, run on N ranks (mpirun) and, on each
 * rank, serially in a single-process runtime (option ranks=off, one CPU device); every value
 * the program reads on the host must be equal to the bit on every rank. A program has 2-4
 * arrays, half of them cut into 2-3 views (block or random owners), and 30 operations: launches
 * of the differential kernels (whose written data has one owner: the generator tracks owners
 * per element, as the ranks do per piece), host reads of whole arrays, views and ranges, host
 * writes of ranges (every rank writes; the owner's data counts: all ranks pass the same), maps
 * for reading and for read-modify-write, and owner changes (skipped by the serial run: one
 * process has rank 0 only). Seeded from the program number: a mismatch prints the seed.
 * PG_DIFF_PROGRAMS sets the number of programs (default 200), PG_DIFF_SEED the first. */
#include "differential.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N DIFF_N
#define MAX_ARRAYS 4
#define MAX_HANDLES (MAX_ARRAYS * 4)
#define NOPS 30

enum { OP_LAUNCH, OP_READ, OP_WRITE, OP_MAP_IN, OP_MAP_INOUT, OP_OWNER, OP_KINDS };

typedef struct handle {
    int root, lo, hi; /* a whole array (lo 0, hi N) or a view of it */
} handle;

typedef struct op {
    int kind, kernel, h[3], first, count, rank;
    float value;
} op;

typedef struct program {
    int narrays, nhandles, nops;
    handle hs[MAX_HANDLES];
    int owner0[MAX_HANDLES]; /* initial owners, set in handle order */
    op ops[NOPS];
} program;

static int rank, nranks;

/* The owner of every element of handle h, or -1 when its elements have several. */
static int owner_of(int own[][N], const handle *h) {
    int o = own[h->root][h->lo];
    for (int i = h->lo + 1; i < h->hi; i++)
        if (own[h->root][i] != o)
            return -1;
    return o;
}

static void set_owner(int own[][N], const handle *h, int r) {
    for (int i = h->lo; i < h->hi; i++)
        own[h->root][i] = r;
}

static void generate(program *p, unsigned seed) {
    unsigned s = seed;
    static int own[MAX_ARRAYS][N];
    memset(p, 0, sizeof *p);
    p->narrays = 2 + (int)(diff_rnd(&s) % 3);
    for (int a = 0; a < p->narrays; a++)
        p->hs[p->nhandles++] = (handle){a, 0, N};
    for (int a = 0; a < p->narrays; a++) {
        if (diff_rnd(&s) % 2)
            continue;
        int k = 2 + (int)(diff_rnd(&s) % 2), lo = 0;
        for (int i = 0; i < k; i++) {
            int hi = i == k - 1 ? N : lo + 1 + (int)(diff_rnd(&s) % (unsigned)(N / k));
            p->hs[p->nhandles++] = (handle){a, lo, hi};
            lo = hi;
        }
    }
    int block = diff_rnd(&s) % 2;
    for (int h = 0; h < p->nhandles; h++) {
        int r = (int)(diff_rnd(&s) % (unsigned)nranks);
        if (block && h >= p->narrays) /* the views of one array over the ranks, in blocks */
            r = pg_rank_block_owner(p->hs[h].lo * 3 / N, 3, nranks);
        p->owner0[h] = r;
        set_owner(own, &p->hs[h], r);
    }
    while (p->nops < NOPS) {
        op o = {.kind = (int)(diff_rnd(&s) % 10)};
        o.kind = o.kind < 4 ? OP_LAUNCH : o.kind - 3 < OP_KINDS ? o.kind - 3 : OP_LAUNCH;
        o.value = (float)(diff_rnd(&s) % 100) / 8.0f;
        o.h[0] = (int)(diff_rnd(&s) % (unsigned)p->nhandles);
        const handle *h0 = &p->hs[o.h[0]];
        int len = h0->hi - h0->lo;
        o.first = (int)(diff_rnd(&s) % (unsigned)len);
        o.count = 1 + (int)(diff_rnd(&s) % (unsigned)(len - o.first));
        o.rank = (int)(diff_rnd(&s) % (unsigned)nranks);
        if (o.kind == OP_OWNER) {
            set_owner(own, h0, o.rank);
        } else if (o.kind == OP_LAUNCH) {
            o.kernel = (int)(diff_rnd(&s) % DIFF_NKERNELS);
            int na = DIFF_KERNELS[o.kernel].narrays, ok = 1, w = -2;
            for (int j = 1; j < na; j++)
                o.h[j] = (int)(diff_rnd(&s) % (unsigned)p->nhandles);
            for (int j = 0; j < na && ok; j++) {
                for (int i = 0; i < j; i++) /* one range per array: no partly overlapping args */
                    ok &= p->hs[o.h[i]].root != p->hs[o.h[j]].root;
                if (!(DIFF_KERNELS[o.kernel].in_mask >> j & 1)) { /* written: one owner */
                    int r = owner_of(own, &p->hs[o.h[j]]);
                    ok &= r >= 0 && (w == -2 || w == r);
                    w = r;
                }
            }
            if (!ok)
                continue;
            o.count = N;
            for (int j = 0; j < na; j++) {
                int l = p->hs[o.h[j]].hi - p->hs[o.h[j]].lo;
                o.count = l < o.count ? l : o.count;
            }
            /* an `out` parameter promises every element written: the launch must cover it */
            if (diff_first_out(o.kernel) && p->hs[o.h[0]].hi - p->hs[o.h[0]].lo != o.count)
                continue;
        }
        p->ops[p->nops++] = o;
    }
}

static void open_env(diff_env *e, const char *devices, const char *ranks, const char *policy) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.policy = policy;
    REQUIRE_OK(pg_options_set(&o, "ranks", ranks));
    REQUIRE_OK(pg_runtime_new(&o, &e->rt));
    for (int i = 0; i < DIFF_NKERNELS; i++)
        REQUIRE_OK(pg_kernel_new(e->rt, DIFF_SRC, DIFF_KERNELS[i].name, DIFF_KERNELS[i].sig, NULL,
                                 &e->k[i]));
}

static void close_env(diff_env *e) {
    for (int i = 0; i < DIFF_NKERNELS; i++)
        CHECK_OK(pg_kernel_free(e->k[i]));
    CHECK_OK(pg_runtime_free(e->rt));
}

/* Run p on e; distributed: owners are set. The digest of everything read, or 0 on an error. */
static uint64_t run(diff_env *e, const program *p, int distributed, unsigned seed) {
    pg_array *h[MAX_HANDLES];
    uint64_t d = DIFF_DIGEST0;
    int64_t n = N;
    for (int a = 0; a < p->narrays; a++)
        REQUIRE_OK(pg_array_new(e->rt, PG_FLOAT32, 1, &n, &h[a]));
    for (int i = p->narrays; i < p->nhandles; i++) {
        const handle *v = &p->hs[i];
        REQUIRE_OK(pg_array_slice(h[v->root], v->lo, v->hi, &h[i]));
    }
    if (distributed)
        for (int i = 0; i < p->nhandles; i++)
            REQUIRE_OK(pg_array_owner_set(h[i], p->owner0[i]));
    float buf[N];
    pg_status st = PG_OK;
    for (int i = 0; i < p->nops && !st; i++) {
        const op *o = &p->ops[i];
        pg_array *a = h[o->h[0]];
        void *m;
        switch (o->kind) {
        case OP_LAUNCH: {
            pg_array *args[3];
            int idx[3] = {0, 1, 2};
            for (int j = 0; j < DIFF_KERNELS[o->kernel].narrays; j++)
                args[j] = h[o->h[j]];
            st = diff_launch_n(e, o->kernel, args, idx, o->value, o->count);
            break;
        }
        case OP_READ:
            st = pg_array_read(a, (uint64_t)o->first, (uint64_t)o->count, buf);
            if (!st)
                d = diff_mix_in(d, buf, (size_t)o->count * sizeof(float));
            break;
        case OP_WRITE:
            for (int j = 0; j < o->count; j++)
                buf[j] = o->value + (float)j;
            st = pg_array_write(a, (uint64_t)o->first, (uint64_t)o->count, buf);
            break;
        case OP_MAP_IN:
        case OP_MAP_INOUT: {
            int len = p->hs[o->h[0]].hi - p->hs[o->h[0]].lo;
            st = pg_array_map(a, o->kind == OP_MAP_IN ? PG_ACCESS_IN : PG_ACCESS_INOUT, &m);
            if (st)
                break;
            float *f = m;
            if (o->kind == OP_MAP_IN)
                d = diff_mix_in(d, f, (size_t)len * sizeof(float));
            else
                for (int j = 0; j < len; j++)
                    f[j] = f[j] * 0.5f + o->value;
            st = pg_array_unmap(a);
            break;
        }
        case OP_OWNER:
            if (distributed)
                st = pg_array_owner_set(a, o->rank);
            break;
        }
        if (st)
            fprintf(stderr, "rank %d: seed %u op %d (kind %d): %s\n", rank, seed, i, o->kind,
                    pg_last_error());
    }
    for (int a = 0; a < p->narrays && !st; a++) {
        if (!(st = pg_array_read(h[a], 0, N, buf)))
            d = diff_mix_in(d, buf, sizeof buf);
    }
    for (int i = 0; i < p->nhandles; i++)
        CHECK_OK(pg_array_free(h[i]));
    return st ? 0 : d;
}

int main(void) {
    int programs = diff_env_int("PG_DIFF_PROGRAMS", 200);
    unsigned seed0 = (unsigned)diff_env_int("PG_DIFF_SEED", 1);
    diff_env dist, serial;
    unsigned ps = seed0;
    open_env(&dist, "host:2", "mpi", DIFF_POLICIES[diff_rnd(&ps) % 5]);
    REQUIRE_OK(pg_runtime_ranks(dist.rt, &rank, &nranks));
    REQUIRE_OK(nranks >= 2 ? PG_OK : PG_ERROR_STATE);
    open_env(&serial, "host:1", "off", "round-robin");
    int bad = 0;
    program p;
    for (int i = 0; i < programs; i++) {
        unsigned seed = seed0 + (unsigned)i;
        generate(&p, seed);
        uint64_t want = run(&serial, &p, 0, seed);
        uint64_t got = run(&dist, &p, 1, seed);
        if (!want || got != want) {
            fprintf(stderr, "rank %d of %d: seed %u: the distributed run read other values%s\n",
                    rank, nranks, seed, want ? "" : " (the serial run failed)");
            bad++;
        }
    }
    pg_stats s;
    CHECK_OK(pg_runtime_stats(dist.rt, &s));
    /* It moved data: every rank sent and received (each owns some written array in ~all). */
    CHECK(s.rank_messages_sent > 0 && s.rank_messages_received > 0);
    printf("rank %d of %d: %d programs, %d mismatched; %llu messages sent, %llu received, %llu "
           "cache hits\n",
           rank, nranks, programs, bad, (unsigned long long)s.rank_messages_sent,
           (unsigned long long)s.rank_messages_received, (unsigned long long)s.rank_cache_hits);
    close_env(&dist);
    close_env(&serial);
    CHECK(bad == 0);
    CHECK_DONE();
}

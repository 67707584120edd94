/* mpi_differential.c: random programs over owned arrays, run on N ranks (mpirun) and, on each
 * rank, serially in a single-process runtime (option ranks=off, one CPU device); every value
 * the program reads on the host must be equal to the bit on every rank. A program makes 2-5
 * arrays as it goes (default owner or owner=, most written whole from the host at once, as
 * asarray does) and runs 40 operations: launches of the differential kernels (whose written
 * data has one owner: the generator tracks owners per element, as the ranks do per piece),
 * host reads of whole arrays, views and ranges, host writes of ranges and of whole views (every
 * rank writes; each passes its own data where it does not own the elements, and the serial run
 * the owners' data), maps for reading and for read-modify-write, owner changes (skipped by the
 * serial run: one process has rank 0 only), and views cut at any point, of arrays and of views:
 * one with the owners its rows have or with owner=, or a split over the ranks in blocks.
 * Seeded from the program number: a mismatch prints the seed. PG_DIFF_PROGRAMS sets the number
 * of programs (default 200), PG_DIFF_SEED the first. Host reads run on every rank (a read on
 * some ranks only is a divergence, tests/c/mpi_failures.c); the data read is current on some
 * ranks or on all. */
#include "differential.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N DIFF_N
#define MAX_ARRAYS 5
#define MAX_HANDLES 28
#define NOPS 40

/* OP_NEW: a new array (h[1]: its handle), owned by `rank` (-1: the default, rank 0), written
 * whole on the host right after when `count` (an asarray); OP_SLICE: rows [first, first+count)
 * of handle h[0] as handle h[1] (a view, or a view of a view), owned by `rank` (-1: the owners
 * its rows have); OP_SPLIT: handle h[0] in `count` consecutive views h[1].., spread over the
 * ranks in blocks (pg_rank_block_owner, as the bindings' split does). */
enum {
    OP_LAUNCH,
    OP_READ,
    OP_WRITE,
    OP_MAP_IN,
    OP_MAP_INOUT,
    OP_OWNER,
    OP_SLICE,
    OP_SPLIT,
    OP_NEW,
    OP_KINDS
};

typedef struct handle {
    int root, lo, hi; /* elements [lo, hi) of array root */
} handle;

typedef struct op {
    int kind, kernel, h[3], first, count, rank;
    float value;
    signed char own[N]; /* a host write: the owner of each element of its range then */
} op;

typedef struct program {
    int narrays, nhandles, nops;
    handle hs[MAX_HANDLES];
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

/* What a rank passes for element j of a host write of value v: the right data where it owns
 * the element, else data of its own (a host write runs on every rank; the owner's counts). */
static float written(const op *o, int j, int as_rank) {
    float v = o->value + (float)j;
    return o->own[j] == as_rank ? v : v + 1000.0f * (float)(as_rank + 1);
}

static void snapshot(op *o, int own[][N], const handle *h, int first, int count) {
    for (int j = 0; j < count; j++)
        o->own[j] = (signed char)own[h->root][h->lo + first + j];
}

static void generate(program *p, unsigned seed) {
    unsigned s = seed;
    static int own[MAX_ARRAYS][N];
    memset(p, 0, sizeof *p);
    int want = 2 + (int)(diff_rnd(&s) % 3);
    while (p->nops < NOPS) {
        op *o = &p->ops[p->nops];
        memset(o, 0, sizeof *o);
        int k = (int)(diff_rnd(&s) % 16);
        o->kind = p->narrays < want                   ? OP_NEW
                  : k < 5                             ? OP_LAUNCH
                  : k < 11                            ? k - 4
                  : k < 13                            ? OP_SLICE
                  : k < 14                            ? OP_SPLIT
                  : k < 15 && p->narrays < MAX_ARRAYS ? OP_NEW
                                                      : OP_WRITE;
        o->value = (float)(diff_rnd(&s) % 100) / 8.0f;
        o->rank = (int)(diff_rnd(&s) % (unsigned)nranks);
        if (o->kind == OP_NEW) {
            if (p->nhandles == MAX_HANDLES)
                continue;
            int a = p->narrays++;
            o->h[1] = p->nhandles;
            p->hs[p->nhandles++] = (handle){a, 0, N};
            if (diff_rnd(&s) % 2)
                o->rank = -1;
            set_owner(own, &p->hs[o->h[1]], o->rank < 0 ? 0 : o->rank);
            o->count = (int)(diff_rnd(&s) % 3) != 0; /* mostly written from the host at once */
            if (o->count)
                snapshot(o, own, &p->hs[o->h[1]], 0, N);
            p->nops++;
            continue;
        }
        o->h[0] = (int)(diff_rnd(&s) % (unsigned)p->nhandles);
        const handle *h0 = &p->hs[o->h[0]];
        int len = h0->hi - h0->lo;
        o->first = (int)(diff_rnd(&s) % (unsigned)len);
        o->count = 1 + (int)(diff_rnd(&s) % (unsigned)(len - o->first));
        if (o->kind == OP_WRITE && diff_rnd(&s) % 3 == 0)
            o->first = 0, o->count = len; /* a whole array or view (copy_from) */
        if (o->kind == OP_OWNER) {
            set_owner(own, h0, o->rank);
        } else if (o->kind == OP_WRITE) {
            snapshot(o, own, h0, o->first, o->count);
        } else if (o->kind == OP_SLICE) {
            if (p->nhandles == MAX_HANDLES)
                continue;
            o->h[1] = p->nhandles;
            p->hs[p->nhandles++] =
                (handle){h0->root, h0->lo + o->first, h0->lo + o->first + o->count};
            if (diff_rnd(&s) % 2)
                o->rank = -1;
            else
                set_owner(own, &p->hs[o->h[1]], o->rank);
        } else if (o->kind == OP_SPLIT) {
            int parts = 2 + (int)(diff_rnd(&s) % 3), lo = 0;
            if (len < parts || p->nhandles + parts > MAX_HANDLES)
                continue;
            o->count = parts;
            o->h[1] = p->nhandles;
            for (int i = 0; i < parts; i++) { /* numpy.array_split's rows */
                int rows = len / parts + (i < len % parts);
                handle v = {h0->root, h0->lo + lo, h0->lo + lo + rows};
                p->hs[p->nhandles++] = v;
                set_owner(own, &v, pg_rank_block_owner(i, parts, nranks));
                lo += rows;
            }
        } else if (o->kind == OP_LAUNCH) {
            o->kernel = (int)(diff_rnd(&s) % DIFF_NKERNELS);
            int na = DIFF_KERNELS[o->kernel].narrays, ok = 1, w = -2;
            for (int j = 1; j < na; j++)
                o->h[j] = (int)(diff_rnd(&s) % (unsigned)p->nhandles);
            for (int j = 0; j < na && ok; j++) {
                for (int i = 0; i < j; i++) /* one range per array: no partly overlapping args */
                    ok &= p->hs[o->h[i]].root != p->hs[o->h[j]].root;
                if (!(DIFF_KERNELS[o->kernel].in_mask >> j & 1)) { /* written: one owner */
                    int r = owner_of(own, &p->hs[o->h[j]]);
                    ok &= r >= 0 && (w == -2 || w == r);
                    w = r;
                }
            }
            if (!ok)
                continue;
            o->count = N;
            for (int j = 0; j < na; j++) {
                int l = p->hs[o->h[j]].hi - p->hs[o->h[j]].lo;
                o->count = l < o->count ? l : o->count;
            }
            /* an `out` parameter promises every element written: the launch must cover it */
            if (diff_first_out(o->kernel) && p->hs[o->h[0]].hi - p->hs[o->h[0]].lo != o->count)
                continue;
        }
        p->nops++;
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

/* Run p on e; distributed: owners are set, and each rank writes its own data where it does
 * not own the elements. The digest of everything read, or 0 on an error. */
static uint64_t run(diff_env *e, const program *p, int distributed, unsigned seed) {
    pg_array *h[MAX_HANDLES] = {0};
    uint64_t d = DIFF_DIGEST0;
    int64_t n = N;
    float buf[N];
    pg_status st = PG_OK;
    for (int i = 0; i < p->nops && !st; i++) {
        const op *o = &p->ops[i];
        pg_array *a = h[o->h[0]];
        void *m;
        switch (o->kind) {
        case OP_NEW:
            st = pg_array_new(e->rt, PG_FLOAT32, 1, &n, &h[o->h[1]]);
            if (!st && distributed && o->rank >= 0)
                st = pg_array_owner_set(h[o->h[1]], o->rank);
            for (int j = 0; j < N && o->count; j++)
                buf[j] = written(o, j, distributed ? rank : o->own[j]);
            if (!st && o->count)
                st = pg_array_write(h[o->h[1]], 0, N, buf);
            break;
        case OP_SLICE:
            st = pg_array_slice(a, o->first, o->first + o->count, &h[o->h[1]]);
            if (!st && distributed && o->rank >= 0)
                st = pg_array_owner_set(h[o->h[1]], o->rank);
            break;
        case OP_SPLIT: {
            int len = p->hs[o->h[0]].hi - p->hs[o->h[0]].lo, lo = 0;
            for (int v = 0; v < o->count && !st; v++) {
                int rows = len / o->count + (v < len % o->count);
                st = pg_array_slice(a, lo, lo + rows, &h[o->h[1] + v]);
                if (!st && distributed)
                    st = pg_array_owner_set(h[o->h[1] + v],
                                            pg_rank_block_owner(v, o->count, nranks));
                lo += rows;
            }
            break;
        }
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
                buf[j] = written(o, j, distributed ? rank : o->own[j]);
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
    for (int a = 0; a < p->nhandles && !st; a++) { /* the roots in full (a root's handle is
                                                    * made before any of its views) */
        if (p->hs[a].lo == 0 && p->hs[a].hi == N && h[a] && !(st = pg_array_read(h[a], 0, N, buf)))
            d = diff_mix_in(d, buf, sizeof buf);
    }
    for (int i = 0; i < p->nhandles; i++)
        if (h[i])
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

/* test_differential.c: random programs (launches with random access modes over 2-6 arrays, host
 * reads and writes, maps, frees) run once serially on one device and then asynchronously on
 * four CPU devices under every device, stream and parent-stream policy. Every value the program
 * reads must be equal to the bit. Seeded: a failure prints the seed and the program.
 * PG_DIFF_PROGRAMS sets the number of programs (default 500), PG_DIFF_SEED the first seed;
 * PG_DIFF_MEMORY_LIMIT (e.g. "6K": arrays are 2068 bytes) runs the asynchronous side under that
 * device_memory_limit, so that evictions and write-backs interleave with everything else. */
#include "kernels_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 517 /* not a multiple of the block size: ragged last block */
#define MAX_ARRAYS 6
#define MAX_OPS 40

static const char *SRC =
    "__device__ int idx() { return blockIdx.x * blockDim.x + threadIdx.x; }\n"
    "extern \"C\" __global__ void axpy(float *y, const float *x, float a, int n) {\n"
    "  int i = idx(); if (i < n) y[i] = y[i] + a * x[i]; }\n"
    "extern \"C\" __global__ void half1(float *y, const float *x, int n) {\n"
    "  int i = idx(); if (i < n) y[i] = x[i] * 0.5f + 1.0f; }\n"
    "extern \"C\" __global__ void add(float *z, const float *x, const float *y, int n) {\n"
    "  int i = idx(); if (i < n) z[i] = x[i] + y[i]; }\n"
    "extern \"C\" __global__ void inc(float *y, int n) {\n"
    "  int i = idx(); if (i < n) y[i] += 1.0f; }\n"
    "extern \"C\" __global__ void mix(float *a, float *b, int n) {\n"
    "  int i = idx(); if (i < n) { a[i] = a[i] + b[i]; b[i] = a[i] - 3.0f; } }\n";

/* name, signature (NULL: inferred), array params, has float scalar */
static const struct {
    const char *name, *sig;
    int narrays, fscalar;
} KERNELS[] = {
    {"axpy", "inout float *y, in const float *x, float a, int n", 2, 1},
    {"half1", "out float *y, in const float *x, int n", 2, 0},
    {"add", "out float *z, in const float *x, in const float *y, int n", 3, 0},
    {"inc", NULL, 1, 0},
    {"mix", NULL, 2, 0},
};
#define NKERNELS 5

enum { OP_LAUNCH, OP_READ, OP_WRITE, OP_FREE, OP_MAP_READ, OP_MAP_WRITE };

typedef struct op {
    int kind, kernel, arr[3], first, count;
    float value;
} op;

typedef struct program {
    unsigned seed;
    int narrays, nops;
    op ops[MAX_OPS];
} program;

static unsigned rnd(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

static void generate(unsigned seed, program *p) {
    unsigned s = seed;
    p->seed = seed;
    p->narrays = 2 + (int)(rnd(&s) % (MAX_ARRAYS - 1));
    p->nops = 5 + (int)(rnd(&s) % (MAX_OPS - 5));
    for (int i = 0; i < p->nops; i++) {
        op *o = &p->ops[i];
        unsigned r = rnd(&s) % 100;
        o->kind = r < 55   ? OP_LAUNCH
                  : r < 70 ? OP_READ
                  : r < 82 ? OP_WRITE
                  : r < 88 ? OP_FREE
                  : r < 94 ? OP_MAP_READ
                           : OP_MAP_WRITE;
        o->kernel = (int)(rnd(&s) % NKERNELS);
        for (int j = 0; j < 3; j++)
            o->arr[j] = (int)(rnd(&s) % (unsigned)p->narrays);
        o->first = (int)(rnd(&s) % N);
        o->count = 1 + (int)(rnd(&s) % (unsigned)(N - o->first));
        if (rnd(&s) % 4 == 0) { /* whole-array writes are "out" host accesses */
            o->first = 0;
            o->count = N;
        }
        o->value = (float)(rnd(&s) % 1000) / 8.0f - 60.0f;
    }
}

static void print_program(const program *p) {
    fprintf(stderr, "program seed %u: %d arrays\n", p->seed, p->narrays);
    static const char *kinds[] = {"launch", "read", "write", "free", "map-read", "map-write"};
    for (int i = 0; i < p->nops; i++) {
        const op *o = &p->ops[i];
        fprintf(stderr, "  %2d %-9s", i, kinds[o->kind]);
        if (o->kind == OP_LAUNCH) {
            fprintf(stderr, " %s(", KERNELS[o->kernel].name);
            for (int j = 0; j < KERNELS[o->kernel].narrays; j++)
                fprintf(stderr, "%sa%d", j ? ", " : "", o->arr[j]);
            fprintf(stderr, ") value %g\n", o->value);
        } else {
            fprintf(stderr, " a%d [%d, %d) value %g\n", o->arr[0], o->first, o->first + o->count,
                    o->value);
        }
    }
}

/* FNV-1a over everything the program observes. */
static uint64_t mix_in(uint64_t h, const void *data, size_t n) {
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211u;
    return h;
}

typedef struct env {
    pg_runtime *rt;
    pg_kernel *k[NKERNELS];
} env;

static char run_error[2048]; /* the message of run's failing call */

static pg_status run(env *e, const program *p, uint64_t *digest) {
    pg_array *arr[MAX_ARRAYS];
    int64_t n = N;
    uint64_t h = 1469598103934665603u;
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
            pg_arg args[5];
            int na = KERNELS[o->kernel].narrays, k = 0;
            for (int j = 0; j < na; j++)
                args[k++] = pg_arg_array(arr[o->arr[j]]);
            if (KERNELS[o->kernel].fscalar)
                args[k++] = pg_arg_float(o->value);
            args[k++] = pg_arg_int(N);
            st = pg_kernel_launch(e->k[o->kernel], dim1((N + 127) / 128), dim1(128), 0, args, k);
            break;
        }
        case OP_READ:
            st = pg_array_read(a, (uint64_t)o->first, (uint64_t)o->count, buf);
            h = mix_in(h, buf, (size_t)o->count * 4);
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
            h = mix_in(h, m + o->first, (size_t)o->count * 4);
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
            h = mix_in(h, buf, sizeof buf);
    }
    if (st) /* the frees below clear it */
        snprintf(run_error, sizeof run_error, "%s: %s", pg_status_name(st), pg_last_error());
    for (int i = 0; i < p->narrays; i++)
        pg_array_free(arr[i]);
    *digest = h;
    return st;
}

static void open_env(env *e, const char *devices, const char *execution, const char *policy,
                     const char *stream_policy, const char *parent) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.execution = execution;
    o.policy = policy;
    o.stream_policy = stream_policy;
    o.parent_stream_policy = parent;
    const char *limit = getenv("PG_DIFF_MEMORY_LIMIT");
    if (limit && *limit && strcmp(execution, "sync"))
        REQUIRE_OK(pg_options_set(&o, "device_memory_limit", limit));
    REQUIRE_OK(pg_runtime_new(&o, &e->rt));
    for (int i = 0; i < NKERNELS; i++)
        REQUIRE_OK(pg_kernel_new(e->rt, SRC, KERNELS[i].name, KERNELS[i].sig, NULL, &e->k[i]));
}

static uint64_t evictions, writebacks; /* over the asynchronous runs */

static void close_env(env *e) {
    pg_stats s;
    if (pg_runtime_stats(e->rt, &s) == PG_OK) {
        evictions += s.evictions;
        writebacks += s.writebacks;
    }
    for (int i = 0; i < NKERNELS; i++)
        CHECK_OK(pg_kernel_free(e->k[i]));
    CHECK_OK(pg_runtime_free(e->rt));
}

int main(void) {
    int nprog = getenv("PG_DIFF_PROGRAMS") ? atoi(getenv("PG_DIFF_PROGRAMS")) : 500;
    unsigned seed0 = getenv("PG_DIFF_SEED") ? (unsigned)atoi(getenv("PG_DIFF_SEED")) : 1;
    const char *async_devices = test_devices("host:4");
    program *progs = malloc(sizeof(program) * (size_t)nprog);
    uint64_t *expect = malloc(sizeof(uint64_t) * (size_t)nprog);

    env serial;
    /* The reference: one device, every call finished before the next. */
    open_env(&serial, strncmp(async_devices, "cuda", 4) ? "host:1" : "cuda:0", "sync",
             "round-robin", "fifo", "disjoint");
    for (int i = 0; i < nprog; i++) {
        generate(seed0 + (unsigned)i, &progs[i]);
        pg_status st = run(&serial, &progs[i], &expect[i]);
        if (st) {
            fprintf(stderr, "serial run failed: %s\n", run_error);
            print_program(&progs[i]);
            return 1;
        }
    }
    close_env(&serial);

    static const char *policies[] = {"round-robin", "stream-aware", "min-transfer-size",
                                     "minmax-transfer-time", "min-transfer-time"};
    static const char *streams[] = {"fifo", "always-new"};
    static const char *parents[] = {"same-as-parent", "disjoint", "multigpu-disjoint",
                                    "multigpu-early-disjoint"};
    int configs = 0, failures = 0;
    for (int pi = 0; pi < 5; pi++)
        for (int si = 0; si < 2; si++)
            for (int qi = 0; qi < 4; qi++) {
                env e;
                open_env(&e, async_devices, "async", policies[pi], streams[si], parents[qi]);
                configs++;
                for (int i = 0; i < nprog; i++) {
                    uint64_t got;
                    pg_status st = run(&e, &progs[i], &got);
                    if (st || got != expect[i]) {
                        fprintf(stderr, "MISMATCH under %s / %s / %s: %s\n", policies[pi],
                                streams[si], parents[qi], st ? run_error : "different values");
                        print_program(&progs[i]);
                        if (++failures > 3)
                            return 1;
                    }
                }
                close_env(&e);
            }
    printf("%d programs x %d configurations on %s: %d mismatches\n", nprog, configs, async_devices,
           failures);
    if (getenv("PG_DIFF_MEMORY_LIMIT"))
        printf("device_memory_limit %s: %llu evictions, %llu of them write-backs\n",
               getenv("PG_DIFF_MEMORY_LIMIT"), (unsigned long long)evictions,
               (unsigned long long)writebacks);
    free(progs);
    free(expect);
    CHECK(failures == 0);
    CHECK_DONE();
}

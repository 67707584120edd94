/* fake_cuda.c: a test double of the CUDA driver (libcuda.so.1) for tests/cudadouble, so that
 * devices/cuda/cu_backend.c runs without a GPU. It exports every entry point devices/cuda/
 * cu_driver.h lists, backed by host memory:
 * - FAKE_CUDA_DEVICES GPUs (default 2), compute capability 9.0, with peer access between all;
 *   one primary context each, destroyed (with everything in it) when its last retain goes.
 * - Device and pinned host memory are malloc'd; fresh device memory holds a pattern (0xA5), not
 *   zeros, so a buffer used before its zeroing reads wrong values.
 * - Streams are in-order queues run as late as possible: work runs only when something waits
 *   for it (an event query or synchronize, a stream synchronize, another stream's wait on it,
 *   the context's end). A missing wait in the backend or the core then shows as a wrong value
 *   or as a use of memory already freed, deterministically, not by luck of timing.
 * - Kernels: the fake NVRTC (fake_nvrtc.c) makes an image naming the kernel; cuLaunchKernel
 *   runs a C version of the kernels it knows (fill, add1, sum2, scale of tests/c/
 *   kernels_common.h), and the chunked-output wrapper's epilogue (nvrtc/chunk_wrap.c) of each.
 * - Every byte range a copy, memset or kernel touches must lie in memory this driver handed
 *   out and has not freed; otherwise it counts a violation (fake_cuda_violations) and says so.
 * - Fault injection (fake_cuda_arm): the N-th call from the arm fails, SQLite style: with
 *   CUDA_ERROR_OUT_OF_MEMORY for allocations, CUDA_ERROR_UNKNOWN for other calls; or, sticky,
 *   with CUDA_ERROR_ILLEGAL_ADDRESS, which then stays with that call's context as CUDA's kept
 *   faults do (its pending work never runs, and every later call in it fails the same way;
 *   retaining that GPU's context again fails with it until fake_cuda_restart, a new process as
 *   far as the GPUs can tell). Calls outside any context fail once in either case.
 *   fake_cuda_arm_run fails several calls in a row.
 * - Time on the GPUs is virtual (a microsecond per operation run), so runs repeat.
 * - For the tests' checks: fake_cuda_reclaimed (objects a context still held at its end),
 *   fake_cuda_graphs_reclaim, fake_cuda_release_all (retains a failed release left).
 * FAKE_CUDA_VERBOSE=1 says which call failed, 2 every call, 3 every operation run.
 * One lock serializes the whole driver: its queues run under it, on the caller's thread. */
#include "devices/cuda/cu_driver.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum {
    E_INVALID_VALUE = 1,
    E_NOT_INITIALIZED = 3,
    E_NO_DEVICE = 100,
    E_INVALID_DEVICE = 101,
    E_INVALID_IMAGE = 200,
    E_INVALID_CONTEXT = 201,
    E_INVALID_HANDLE = 400,
    E_NOT_FOUND = 500,
    E_UNKNOWN = 999,
    MAX_DEV = 8,
    MAX_PARAMS = 40,
};

/* ---- state */

typedef struct op op;
typedef struct node node;

struct CUctx_st {
    int dev, refs;
    CUresult fault; /* a kept fault: every call in the context fails with it */
    int peer[MAX_DEV];
};

struct CUstream_st {
    struct CUctx_st *ctx;
    op *head, *tail;
    uint64_t enq, done;
    int busy, destroyed;
    struct CUstream_st *next;
};

struct CUevent_st {
    struct CUctx_st *ctx;
    struct CUstream_st *s; /* the last record's stream, NULL: never recorded */
    uint64_t seq;          /* complete once s->done >= seq */
    uint64_t gen;
    unsigned flags;
    double ms; /* host time of the record's execution */
    int destroyed;
    struct CUevent_st *next;
};

typedef struct kdef {
    const char *name;
    const char *params; /* p: pointer, f: float, i: int */
    void (*run)(const uint64_t *a, uint64_t i);
    const char *sizes; /* per p parameter: elements touched = the int parameter (n) */
} kdef;

struct CUfunc_st {
    const kdef *k;
    int chunked; /* the chunk wrapper: four extra parameters */
    struct CUmod_st *mod;
};

struct CUmod_st {
    struct CUctx_st *ctx;
    struct CUfunc_st fn;
    int destroyed;
    struct CUmod_st *next;
};

typedef struct launch {
    struct CUfunc_st *fn;
    unsigned grid[3], block[3];
    uint64_t a[MAX_PARAMS];
} launch;

struct node {
    int kind; /* 0 kernel, 1 copy, 2 empty */
    launch l;
    void *dst;
    const void *src;
    size_t bytes;
};

struct CUgraph_st {
    node *n;
    size_t count, cap;
    struct CUgraph_st *next;
};

struct CUgraphNode_st {
    int unused;
};

struct CUgraphExec_st {
    node *n;
    size_t count;
    int refs, destroyed;
    struct CUgraphExec_st *next;
};

enum { OP_COPY, OP_MEMSET, OP_KERNEL, OP_FREE, OP_WAIT_EVENT, OP_WAIT_VALUE, OP_RECORD, OP_GRAPH };
struct op {
    int kind;
    op *next;
    void *dst;
    const void *src;
    size_t bytes;
    unsigned char value;
    launch l;
    struct CUstream_st *s; /* wait event: that stream up to seq */
    uint64_t seq;
    struct CUevent_st *e; /* record */
    uint64_t gen;
    struct CUgraphExec_st *g;
    uint32_t corr; /* the tracer's correlation id of the call that enqueued it */
};

typedef struct alloc {
    char *p;
    size_t n;
    int dev; /* -1: pinned host memory */
    struct CUctx_st *ctx;
    struct alloc *next;
} alloc;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int ndev = -1, inited;
static struct CUctx_st ctxs[MAX_DEV];
/* A kept fault outlives its context: CUDA keeps it until the process ends, and retaining the
 * GPU's context again fails with it (until fake_cuda_restart, a new process as far as the GPUs
 * can tell). */
static CUresult dead[MAX_DEV];
static struct CUstream_st *streams;
static struct CUevent_st *events;
static struct CUmod_st *modules;
static alloc *allocs;
static struct CUgraph_st *graphs;
static struct CUgraphExec_st *execs;
static _Thread_local struct CUctx_st *current;

/* injection and checks */
static int armed, sticky;
static uint64_t fail_at, fail_run = 1, counted;
static const char *failed_call = "";
static char failed_calls[256]; /* every call failed since the arm, space-separated */
static uint64_t violations, reclaimed;
static int verbose;

static void violation(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fake CUDA: VIOLATION: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    violations++;
}

/* GPU time: a microsecond per operation run, so that timings (and what the runtime decides from
 * them: which launches its models time) are the same in every run, and each N fails the same
 * call. */
static double gpu_ms;

/* ---- memory */

static alloc *find_alloc(const void *p, size_t n) {
    const char *c = p;
    for (alloc *a = allocs; a; a = a->next)
        if (c >= a->p && c + n <= a->p + a->n)
            return a;
    return NULL;
}

static int check_range(const void *p, size_t n, const char *what) {
    if (!n)
        return 1;
    if (find_alloc(p, n))
        return 1;
    violation("%s touches %zu bytes at %p, which is not memory this driver handed out (freed, "
              "never allocated, or past an allocation's end)",
              what, n, p);
    return 0;
}

static CUresult new_alloc(size_t n, int dev, struct CUctx_st *ctx, void **out) {
    alloc *a = calloc(1, sizeof *a);
    char *p = a ? malloc(n ? n : 1) : NULL;
    if (!p) {
        free(a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memset(p, dev >= 0 ? 0xA5 : 0x5A, n);
    a->p = p;
    a->n = n;
    a->dev = dev;
    a->ctx = ctx;
    a->next = allocs;
    allocs = a;
    *out = p;
    return CUDA_SUCCESS;
}

static int drop_alloc(const void *p, int dev) {
    for (alloc **pp = &allocs; *pp; pp = &(*pp)->next)
        if ((*pp)->p == p && (dev == -2 || (*pp)->dev == dev)) {
            alloc *a = *pp;
            *pp = a->next;
            free(a->p);
            free(a);
            return 1;
        }
    return 0;
}

/* ---- kernels (tests/c/kernels_common.h) */

static float f32(uint64_t v) {
    float f;
    uint32_t u = (uint32_t)v;
    memcpy(&f, &u, sizeof f);
    return f;
}
#define PF(x) ((float *)(uintptr_t)(x))

static void k_fill(const uint64_t *a, uint64_t i) {
    PF(a[0])[i] = f32(a[1]);
}
static void k_add1(const uint64_t *a, uint64_t i) {
    PF(a[0])[i] = PF(a[1])[i] + 1.0f;
}
static void k_sum2(const uint64_t *a, uint64_t i) {
    PF(a[0])[i] = PF(a[1])[i] + PF(a[2])[i];
}
static void k_scale(const uint64_t *a, uint64_t i) {
    PF(a[0])[i] = PF(a[0])[i] * f32(a[1]);
}

static const kdef kernels[] = {
    {"fill", "pfi", k_fill, NULL},
    {"add1", "ppi", k_add1, NULL},
    {"sum2", "pppi", k_sum2, NULL},
    {"scale", "pfi", k_scale, NULL},
};

static const kdef *kernel_named(const char *name, int *chunked) {
    size_t n = strlen(name);
    const char *suffix = "__pg_chunked";
    *chunked = n > strlen(suffix) && !strcmp(name + n - strlen(suffix), suffix);
    if (*chunked)
        n -= strlen(suffix);
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++)
        if (strlen(kernels[i].name) == n && !strncmp(kernels[i].name, name, n))
            return &kernels[i];
    return NULL;
}

static int nparams_of(const struct CUfunc_st *f) {
    return (int)strlen(f->k->params) + (f->chunked ? 8 : 0); /* nvrtc/chunk_wrap.h */
}

/* The arguments' values now, as the driver copies them at the launch. */
static void take_params(launch *l, struct CUfunc_st *f, void **params) {
    const char *kinds = f->k->params;
    int n = nparams_of(f);
    for (int i = 0; i < n; i++) {
        /* the wrapper's extra parameters: counters, flags (pointers), blocks per chunk, blocks
         * (32-bit), the first block (64-bit), the whole grid's x, y, z (32-bit) */
        int extra = i - (int)strlen(kinds);
        int size = extra < 0 ? (kinds[i] == 'p' ? 8 : 4) : (extra < 2 || extra == 4 ? 8 : 4);
        l->a[i] = 0;
        memcpy(&l->a[i], params[i], (size_t)size);
    }
}

static void run_kernel(const launch *l) {
    const kdef *k = l->fn->k;
    int np = (int)strlen(k->params);
    uint64_t nblocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
    uint64_t per_block = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    /* the wrapper runs blocks [first, first + nblocks) of the whole grid (a split launch) */
    uint64_t from = l->fn->chunked ? l->a[np + 4] * per_block : 0;
    uint64_t end = from + nblocks * per_block;
    int32_t n = (int32_t)(uint32_t)l->a[np - 1];
    uint64_t stop = n > 0 ? ((uint64_t)n < end ? (uint64_t)n : end) : 0;
    for (int i = 0; i < np; i++)
        if (k->params[i] == 'p' && !check_range(PF(l->a[i]), stop * 4, k->name))
            return;
    for (uint64_t i = from; i < stop; i++)
        k->run(l->a, i);
    if (l->fn->chunked && l->a[np]) {
        uint32_t *cnt = (uint32_t *)(uintptr_t)l->a[np],
                 *flag = (uint32_t *)(uintptr_t)l->a[np + 1];
        uint32_t bpc = (uint32_t)l->a[np + 2], nb = (uint32_t)l->a[np + 3];
        uint32_t nchunks = bpc ? (nb + bpc - 1) / bpc : 0;
        if (!check_range(cnt, nchunks * 4u, "chunk counters") ||
            !check_range(flag, nchunks * 4u, "chunk flags"))
            return;
        for (uint32_t c = 0; c < nchunks; c++) {
            uint32_t first = c * bpc;
            cnt[c] += nb - first < bpc ? nb - first : bpc;
            flag[c] = 1;
        }
    }
}

/* ---- queues */

static int run_to(struct CUstream_st *s, uint64_t target);

/* A tracer (the fake CUPTI, fake_cupti.c) hears of each call that enqueues work, giving it a
 * correlation id, and of each kernel, copy and memset as it runs (kind 0, 1, 2; copy_kind as
 * CUPTI's: 1 HtoD, 2 DtoH, 8 DtoD, 9 HtoH, 10 PtoP; src_dev/dst_dev -1 for the host). Both are
 * called with the driver's lock held: they must not call the driver. */
typedef struct fake_tracer {
    uint32_t (*call)(const char *name);
    void (*ran)(int kind, int dev, const void *stream, uint32_t corr, uint64_t bytes, int copy_kind,
                int src_dev, int dst_dev, const char *name);
} fake_tracer;
static const fake_tracer *tracer;

static uint32_t traced_call(const char *name) {
    return tracer ? tracer->call(name) : 0;
}

static void traced_copy(struct CUstream_st *s, uint32_t corr, void *dst, const void *src,
                        size_t n) {
    if (!tracer)
        return;
    const alloc *a = find_alloc(src, n ? n : 1), *b = find_alloc(dst, n ? n : 1);
    int sd = a ? a->dev : -1, dd = b ? b->dev : -1;
    int kind = sd < 0 && dd < 0 ? 9 : sd < 0 ? 1 : dd < 0 ? 2 : sd == dd ? 8 : 10;
    tracer->ran(1, s->ctx->dev, s, corr, n, kind, sd, dd, "");
}

static void deadlock(const char *why) {
    fprintf(stderr, "fake CUDA: DEADLOCK: %s (on a GPU this would hang)\n", why);
    abort();
}

static void exec_node(struct CUstream_st *s, uint32_t corr, const node *n) {
    if (tracer && n->kind == 0)
        tracer->ran(0, s->ctx->dev, s, corr, 0, 0, -1, -1, n->l.fn->k->name);
    if (n->kind == 1)
        traced_copy(s, corr, n->dst, n->src, n->bytes);
    if (n->kind == 0)
        run_kernel(&n->l);
    else if (n->kind == 1 && check_range(n->src, n->bytes, "graph memcpy node (source)") &&
             check_range(n->dst, n->bytes, "graph memcpy node (destination)"))
        memmove(n->dst, n->src, n->bytes);
}

static void graph_exec_unref(struct CUgraphExec_st *g) {
    if (--g->refs == 0) {
        for (struct CUgraphExec_st **pp = &execs; *pp; pp = &(*pp)->next)
            if (*pp == g) {
                *pp = g->next;
                break;
            }
        free(g->n);
        free(g);
    }
}

static void graph_free(CUgraph g) {
    for (CUgraph *pp = &graphs; *pp; pp = &(*pp)->next)
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    free(g->n);
    free(g);
}

/* Run o, the head of s. */
static void exec_op(struct CUstream_st *s, op *o) {
    gpu_ms += 0.001;
    if (verbose > 2)
        fprintf(stderr, "fake CUDA: GPU %d stream %p runs op %d (%p <- %p, %zu bytes%s%s)\n",
                s->ctx->dev, (void *)s, o->kind,
                o->kind == OP_KERNEL ? (void *)(uintptr_t)o->l.a[0] : o->dst,
                o->kind == OP_KERNEL ? (void *)(uintptr_t)o->l.a[1] : o->src, o->bytes,
                o->kind == OP_KERNEL ? ", kernel " : "",
                o->kind == OP_KERNEL ? o->l.fn->k->name : "");
    switch (o->kind) {
    case OP_COPY:
        traced_copy(s, o->corr, o->dst, o->src, o->bytes);
        if (check_range(o->src, o->bytes, "cuMemcpyAsync (source)") &&
            check_range(o->dst, o->bytes, "cuMemcpyAsync (destination)"))
            memmove(o->dst, o->src, o->bytes);
        break;
    case OP_MEMSET:
        if (tracer)
            tracer->ran(2, s->ctx->dev, s, o->corr, o->bytes, 0, -1, -1, "");
        if (check_range(o->dst, o->bytes, "cuMemsetD8Async"))
            memset(o->dst, o->value, o->bytes);
        break;
    case OP_KERNEL:
        if (tracer)
            tracer->ran(0, s->ctx->dev, s, o->corr, 0, 0, -1, -1, o->l.fn->k->name);
        run_kernel(&o->l);
        break;
    case OP_FREE:
        if (!drop_alloc(o->dst, s->ctx->dev))
            violation("cuMemFreeAsync of %p, not device memory of GPU %d (freed twice?)", o->dst,
                      s->ctx->dev);
        break;
    case OP_WAIT_EVENT:
        if (run_to(o->s, o->seq))
            deadlock("a stream waits for an event of a stream that waits for it");
        break;
    case OP_WAIT_VALUE: {
        if (!check_range(o->dst, 4, "cuStreamWaitValue32"))
            break;
        volatile uint32_t *p = o->dst;
        while (*p < (uint32_t)o->bytes) {
            /* run any other stream's next step: some kernel will raise the flag */
            struct CUstream_st *t = streams;
            while (t && (t == s || t->busy || !t->head))
                t = t->next;
            if (!t)
                deadlock("cuStreamWaitValue32 waits for a flag no queued work raises");
            run_to(t, t->done + 1);
        }
        break;
    }
    case OP_RECORD:
        if (o->e->gen == o->gen)
            o->e->ms = gpu_ms;
        break;
    case OP_GRAPH:
        for (size_t i = 0; i < o->g->count; i++)
            exec_node(s, o->corr, &o->g->n[i]);
        graph_exec_unref(o->g);
        break;
    }
}

/* Run s's queue until `target` operations are done. Work of a faulted context never runs. */
static int run_to(struct CUstream_st *s, uint64_t target) {
    while (s->done < target) {
        if (s->busy)
            return -1;
        op *o = s->head;
        s->busy = 1;
        if (!s->ctx->fault)
            exec_op(s, o);
        else if (o->kind == OP_GRAPH)
            graph_exec_unref(o->g);
        else if (o->kind == OP_FREE)
            drop_alloc(o->dst, s->ctx->dev);
        s->busy = 0;
        s->head = o->next;
        if (!s->head)
            s->tail = NULL;
        free(o);
        s->done++;
    }
    return 0;
}

static CUresult enqueue(struct CUstream_st *s, op *o) {
    if (!o)
        return CUDA_ERROR_OUT_OF_MEMORY;
    o->next = NULL;
    if (s->tail)
        s->tail->next = o;
    else
        s->head = o;
    s->tail = o;
    s->enq++;
    return CUDA_SUCCESS;
}

static op *new_op(int kind) {
    op *o = calloc(1, sizeof *o);
    if (o)
        o->kind = kind;
    return o;
}

static int event_complete(struct CUevent_st *e) {
    return !e->s || e->s->done >= e->seq;
}

/* ---- contexts */

static void ctx_destroy(struct CUctx_st *c) {
    /* Everything still queued anywhere runs first (other GPUs' queues may wait on this one's). */
    for (struct CUstream_st *s = streams; s; s = s->next)
        run_to(s, s->enq);
    for (struct CUstream_st **pp = &streams; *pp;) {
        struct CUstream_st *s = *pp;
        if (s->ctx != c) {
            pp = &s->next;
            continue;
        }
        if (!s->destroyed)
            reclaimed++;
        *pp = s->next;
        /* events recorded on it are complete now */
        for (struct CUevent_st *e = events; e; e = e->next)
            if (e->s == s)
                e->s = NULL;
        free(s);
    }
    for (struct CUevent_st **pp = &events; *pp;) {
        struct CUevent_st *e = *pp;
        if (e->ctx != c) {
            pp = &e->next;
            continue;
        }
        if (!e->destroyed)
            reclaimed++;
        *pp = e->next;
        free(e);
    }
    for (struct CUmod_st **pp = &modules; *pp;) {
        struct CUmod_st *m = *pp;
        if (m->ctx != c) {
            pp = &m->next;
            continue;
        }
        if (!m->destroyed)
            reclaimed++;
        *pp = m->next;
        free(m);
    }
    for (alloc **pp = &allocs; *pp;) {
        alloc *a = *pp;
        if (a->ctx != c) {
            pp = &a->next;
            continue;
        }
        reclaimed++;
        if (verbose)
            fprintf(stderr, "fake CUDA: context %d ends holding %zu bytes at %p (%s)\n", c->dev,
                    a->n, (void *)a->p, a->dev < 0 ? "pinned host" : "device");
        *pp = a->next;
        free(a->p);
        free(a);
    }
    if (c->fault)
        dead[c->dev] = c->fault;
    c->fault = 0;
    memset(c->peer, 0, sizeof c->peer);
    if (current == c)
        current = NULL;
}

/* ---- injection */

enum { K_OTHER, K_ALLOC };

/* Count this call; 1 when it is the one to fail, with *r its error (and, sticky, the fault
 * kept by ctx). */
static int inject(const char *name, int kind, struct CUctx_st *ctx, CUresult *r) {
    if (!armed)
        return 0;
    counted++;
    if (verbose > 1)
        fprintf(stderr, "fake CUDA: call %llu: %s\n", (unsigned long long)counted, name);
    if (counted < fail_at || counted - fail_at >= fail_run)
        return 0;
    if (counted == fail_at)
        failed_call = name;
    size_t used = strlen(failed_calls);
    snprintf(failed_calls + used, sizeof failed_calls - used, " %s", name);
    if (sticky && ctx && ctx->refs) {
        /* A kept fault is a context's: from now on every call in it fails the same way. Calls
         * outside any context (device queries, retaining, releasing, making one current) fail
         * once, as in the other walk. */
        *r = CUDA_ERROR_ILLEGAL_ADDRESS;
        ctx->fault = *r;
    } else {
        *r = kind == K_ALLOC ? CUDA_ERROR_OUT_OF_MEMORY : E_UNKNOWN;
    }
    if (verbose)
        fprintf(stderr, "fake CUDA: call %llu, %s, fails with %d\n", (unsigned long long)counted,
                name, *r);
    return 1;
}

#define LOCK() pthread_mutex_lock(&mu)
#define RETURN(v)                                                                                  \
    do {                                                                                           \
        CUresult rv_ = (v);                                                                        \
        pthread_mutex_unlock(&mu);                                                                 \
        return rv_;                                                                                \
    } while (0)
/* Lock; fail as injected; fail with ctx's kept fault. */
#define ENTER(name, kind, ctx)                                                                     \
    struct CUctx_st *ctx_ = (ctx);                                                                 \
    CUresult ir_;                                                                                  \
    LOCK();                                                                                        \
    if (!inited)                                                                                   \
        RETURN(E_NOT_INITIALIZED);                                                                 \
    if (inject(name, kind, ctx_, &ir_))                                                            \
        RETURN(ir_);                                                                               \
    if (ctx_ && ctx_->fault)                                                                       \
        RETURN(ctx_->fault);

static struct CUctx_st *need_current(void) {
    return current && current->refs ? current : NULL;
}

/* ---- control, for the tests (found with dlsym) */

EXPORT void fake_cuda_set_tracer(const fake_tracer *t) {
    pthread_mutex_lock(&mu);
    tracer = t;
    pthread_mutex_unlock(&mu);
}

/* The GPU a context belongs to (the fake CUPTI's cuptiGetDeviceId); -1: not a context. */
EXPORT int fake_cuda_context_device(CUcontext c) {
    for (int d = 0; d < MAX_DEV; d++)
        if (c == &ctxs[d])
            return d;
    return -1;
}

EXPORT void fake_cuda_arm(uint64_t n, int keep_fault) {
    LOCK();
    armed = 1;
    fail_at = n;
    fail_run = 1;
    counted = 0;
    sticky = keep_fault;
    failed_call = "";
    failed_calls[0] = 0;
    pthread_mutex_unlock(&mu);
}

/* fake_cuda_arm, with the `run` calls from the n-th on failing (a failure, then the calls
 * that clean up after it). */
EXPORT void fake_cuda_arm_run(uint64_t n, uint64_t run) {
    fake_cuda_arm(n, 0);
    LOCK();
    fail_run = run ? run : 1;
    pthread_mutex_unlock(&mu);
}

EXPORT uint64_t fake_cuda_disarm(void) {
    LOCK();
    armed = 0;
    uint64_t n = counted;
    pthread_mutex_unlock(&mu);
    return n;
}

EXPORT const char *fake_cuda_failed_call(void) {
    return failed_call;
}

EXPORT const char *fake_cuda_failed_calls(void) {
    return failed_calls;
}

EXPORT uint64_t fake_cuda_violations(void) {
    return violations;
}

/* Objects a context still held when it ended (freed by its end, as CUDA does): none in a run
 * where nothing failed. */
EXPORT uint64_t fake_cuda_reclaimed(void) {
    return reclaimed;
}

/* Graphs and executable graphs still alive (their destroy failed, or was never called) are
 * freed; returns how many. */
EXPORT uint64_t fake_cuda_graphs_reclaim(void) {
    LOCK();
    uint64_t n = 0;
    for (struct CUstream_st *s = streams; s; s = s->next)
        run_to(s, s->enq); /* queued launches hold theirs */
    while (graphs) {
        graph_free(graphs);
        n++;
    }
    while (execs) {
        execs->refs = 1;
        graph_exec_unref(execs);
        n++;
    }
    pthread_mutex_unlock(&mu);
    return n;
}

/* A new process, as far as the GPUs can tell: kept faults of ended contexts are forgotten.
 * Returns how many GPUs had one. */
EXPORT int fake_cuda_restart(void) {
    LOCK();
    int n = 0;
    for (int d = 0; d < MAX_DEV; d++) {
        n += dead[d] != 0;
        dead[d] = 0;
    }
    pthread_mutex_unlock(&mu);
    return n;
}

/* Contexts still retained (a release failed): released now, as the end of the process would;
 * returns how many retains that dropped. Only while no runtime holds them. */
EXPORT int fake_cuda_release_all(void) {
    LOCK();
    int n = 0;
    for (int d = 0; d < MAX_DEV; d++)
        if (ctxs[d].refs) {
            n += ctxs[d].refs;
            ctxs[d].refs = 0;
            ctx_destroy(&ctxs[d]);
        }
    pthread_mutex_unlock(&mu);
    return n;
}

/* Live objects now: device allocations, pinned host allocations, streams, events. */
EXPORT void fake_cuda_live(uint64_t out[4]) {
    LOCK();
    memset(out, 0, 4 * sizeof *out);
    for (alloc *a = allocs; a; a = a->next)
        out[a->dev < 0 ? 1 : 0]++;
    for (struct CUstream_st *s = streams; s; s = s->next)
        out[2] += !s->destroyed;
    for (struct CUevent_st *e = events; e; e = e->next)
        out[3] += !e->destroyed;
    pthread_mutex_unlock(&mu);
}

/* ---- the driver API */

EXPORT CUresult cuInit(unsigned flags) {
    LOCK();
    CUresult r;
    if (inject("cuInit", K_OTHER, NULL, &r))
        RETURN(r);
    if (ndev < 0) {
        const char *e = getenv("FAKE_CUDA_DEVICES");
        ndev = e ? atoi(e) : 2;
        if (ndev < 0 || ndev > MAX_DEV)
            ndev = 2;
        for (int i = 0; i < MAX_DEV; i++)
            ctxs[i].dev = i;
        verbose = getenv("FAKE_CUDA_VERBOSE") ? atoi(getenv("FAKE_CUDA_VERBOSE")) : 0;
    }
    inited = 1;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuGetErrorName(CUresult e, const char **s) {
    switch (e) {
    case CUDA_SUCCESS:
        *s = "CUDA_SUCCESS";
        break;
    case CUDA_ERROR_OUT_OF_MEMORY:
        *s = "CUDA_ERROR_OUT_OF_MEMORY";
        break;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
        *s = "CUDA_ERROR_ILLEGAL_ADDRESS";
        break;
    case CUDA_ERROR_NOT_READY:
        *s = "CUDA_ERROR_NOT_READY";
        break;
    case E_UNKNOWN:
        *s = "CUDA_ERROR_UNKNOWN";
        break;
    case E_INVALID_VALUE:
        *s = "CUDA_ERROR_INVALID_VALUE";
        break;
    case E_NOT_INITIALIZED:
        *s = "CUDA_ERROR_NOT_INITIALIZED";
        break;
    case E_INVALID_CONTEXT:
        *s = "CUDA_ERROR_INVALID_CONTEXT";
        break;
    case E_INVALID_HANDLE:
        *s = "CUDA_ERROR_INVALID_HANDLE";
        break;
    case E_NOT_FOUND:
        *s = "CUDA_ERROR_NOT_FOUND";
        break;
    case E_INVALID_IMAGE:
        *s = "CUDA_ERROR_INVALID_IMAGE";
        break;
    default:
        *s = NULL;
        return E_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGetErrorString(CUresult e, const char **s) {
    switch (e) {
    case CUDA_ERROR_OUT_OF_MEMORY:
        *s = "out of memory (fake CUDA)";
        break;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
        *s = "an illegal memory access was encountered (fake CUDA)";
        break;
    case E_UNKNOWN:
        *s = "unknown error (injected by fake CUDA)";
        break;
    default:
        *s = "fake CUDA error";
        break;
    }
    return CUDA_SUCCESS;
}

#define DEV_OK(d) ((d) >= 0 && (d) < ndev)

EXPORT CUresult cuDeviceGetCount(int *n) {
    ENTER("cuDeviceGetCount", K_OTHER, NULL);
    *n = ndev;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    ENTER("cuDeviceGet", K_OTHER, NULL);
    if (!DEV_OK(ordinal))
        RETURN(E_INVALID_DEVICE);
    *d = ordinal;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    ENTER("cuDeviceGetName", K_OTHER, NULL);
    if (!DEV_OK(d))
        RETURN(E_INVALID_DEVICE);
    snprintf(name, (size_t)len, "Fake GPU %d (tests/cudadouble)", d);
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
    ENTER("cuDeviceTotalMem", K_OTHER, NULL);
    if (!DEV_OK(d))
        RETURN(E_INVALID_DEVICE);
    *bytes = (size_t)1 << 30;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
    ENTER("cuDeviceGetAttribute", K_OTHER, NULL);
    if (!DEV_OK(d))
        RETURN(E_INVALID_DEVICE);
    switch (attr) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
        *v = 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
        *v = 64;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
        *v = 2147483647;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
        *v = 65535;
        break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
        *v = 1980000;
        break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *v = 132;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *v = 9;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *v = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
        *v = 232448;
        break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
        *v = 1;
        break;
    default:
        RETURN(E_INVALID_VALUE);
    }
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d) {
    ENTER("cuDeviceGetUuid", K_OTHER, NULL);
    if (!DEV_OK(d))
        RETURN(E_INVALID_DEVICE);
    for (int i = 0; i < 16; i++)
        u->bytes[i] = (char)(0xf0 + d + i);
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice d) {
    ENTER("cuDeviceGetPCIBusId", K_OTHER, NULL);
    if (!DEV_OK(d))
        RETURN(E_INVALID_DEVICE);
    snprintf(bus, (size_t)len, "0000:%02x:00.0", 0xf0 + d);
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer) {
    ENTER("cuDeviceCanAccessPeer", K_OTHER, NULL);
    if (!DEV_OK(d) || !DEV_OK(peer))
        RETURN(E_INVALID_DEVICE);
    *can = d != peer;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    ENTER("cuDevicePrimaryCtxRetain", K_OTHER, NULL);
    if (!DEV_OK(d))
        RETURN(E_INVALID_DEVICE);
    if (dead[d])
        RETURN(dead[d]);
    ctxs[d].refs++;
    *c = &ctxs[d];
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
    ENTER("cuDevicePrimaryCtxRelease", K_OTHER, NULL);
    if (!DEV_OK(d) || ctxs[d].refs == 0)
        RETURN(E_INVALID_CONTEXT);
    if (--ctxs[d].refs == 0)
        ctx_destroy(&ctxs[d]);
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *p, CUdevice d) {
    ENTER("cuDeviceGetDefaultMemPool", K_OTHER, NULL);
    if (!DEV_OK(d))
        RETURN(E_INVALID_DEVICE);
    *p = (CUmemoryPool)(uintptr_t)(0x1000 + d);
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuCtxSetCurrent(CUcontext c) {
    ENTER("cuCtxSetCurrent", K_OTHER, NULL);
    if (c && !c->refs)
        RETURN(E_INVALID_CONTEXT);
    current = c;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags) {
    ENTER("cuCtxEnablePeerAccess", K_OTHER, need_current());
    if (!ctx_ || !peer || !peer->refs)
        RETURN(E_INVALID_CONTEXT);
    if (ctx_->peer[peer->dev])
        RETURN(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    ctx_->peer[peer->dev] = 1;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool p, int attr, void *v) {
    ENTER("cuMemPoolSetAttribute", K_OTHER, need_current());
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool p, const CUmemAccessDesc *map, size_t count) {
    ENTER("cuMemPoolSetAccess", K_OTHER, need_current());
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuStreamCreate(CUstream *s, unsigned flags) {
    ENTER("cuStreamCreate", K_ALLOC, need_current());
    if (!ctx_)
        RETURN(E_INVALID_CONTEXT);
    struct CUstream_st *n = calloc(1, sizeof *n);
    if (!n)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    n->ctx = ctx_;
    n->next = streams;
    streams = n;
    *s = n;
    RETURN(CUDA_SUCCESS);
}

static int stream_ok(CUstream s) {
    return s && !s->destroyed && s->ctx->refs;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s) {
    ENTER("cuStreamDestroy", K_OTHER, s ? s->ctx : NULL);
    if (!stream_ok(s))
        RETURN(E_INVALID_HANDLE);
    s->destroyed = 1; /* its queued work still runs (when waited for, or at the context's end) */
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuStreamSynchronize(CUstream s) {
    ENTER("cuStreamSynchronize", K_OTHER, s ? s->ctx : NULL);
    if (!stream_ok(s))
        RETURN(E_INVALID_HANDLE);
    run_to(s, s->enq);
    RETURN(s->ctx->fault);
}

EXPORT CUresult cuPointerGetAttributes(unsigned n, int *attrs, void **data, CUdeviceptr p) {
    ENTER("cuPointerGetAttributes", K_OTHER, need_current());
    alloc *a = find_alloc((void *)(uintptr_t)p, 1);
    for (unsigned i = 0; i < n; i++) {
        if (attrs[i] == CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
            *(unsigned *)data[i] = !a ? 0 : a->dev < 0 ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        else if (attrs[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
            *(int *)data[i] = !a ? -2 : a->dev < 0 ? -1 : a->dev;
        else
            RETURN(E_INVALID_VALUE);
    }
    RETURN(CUDA_SUCCESS);
}

static int event_ok(CUevent e) {
    return e && !e->destroyed && e->ctx->refs;
}

EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
    ENTER("cuStreamWaitEvent", K_OTHER, s ? s->ctx : NULL);
    if (!stream_ok(s) || !event_ok(e))
        RETURN(E_INVALID_HANDLE);
    if (event_complete(e))
        RETURN(CUDA_SUCCESS);
    op *o = new_op(OP_WAIT_EVENT);
    if (o) {
        o->s = e->s;
        o->seq = e->seq;
    }
    RETURN(enqueue(s, o));
}

EXPORT CUresult cuStreamWaitValue32_v2(CUstream s, CUdeviceptr addr, unsigned value,
                                       unsigned flags) {
    ENTER("cuStreamWaitValue32", K_OTHER, s ? s->ctx : NULL);
    if (!stream_ok(s) || flags != CU_STREAM_WAIT_VALUE_GEQ)
        RETURN(E_INVALID_VALUE);
    op *o = new_op(OP_WAIT_VALUE);
    if (o) {
        o->dst = (void *)(uintptr_t)addr;
        o->bytes = value;
    }
    RETURN(enqueue(s, o));
}

EXPORT CUresult cuEventCreate(CUevent *e, unsigned flags) {
    ENTER("cuEventCreate", K_ALLOC, need_current());
    if (!ctx_)
        RETURN(E_INVALID_CONTEXT);
    struct CUevent_st *n = calloc(1, sizeof *n);
    if (!n)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    n->ctx = ctx_;
    n->flags = flags;
    n->next = events;
    events = n;
    *e = n;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuEventDestroy_v2(CUevent e) {
    ENTER("cuEventDestroy", K_OTHER, e ? e->ctx : NULL);
    if (!event_ok(e))
        RETURN(E_INVALID_HANDLE);
    e->destroyed = 1; /* kept until its context ends: queued records may name it */
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s) {
    ENTER("cuEventRecord", K_OTHER, s ? s->ctx : NULL);
    if (!stream_ok(s) || !event_ok(e))
        RETURN(E_INVALID_HANDLE);
    if (e->ctx != s->ctx)
        RETURN(E_INVALID_HANDLE); /* an event records only on a stream of its context */
    op *o = new_op(OP_RECORD);
    if (!o)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    o->e = e;
    o->gen = ++e->gen;
    enqueue(s, o);
    e->s = s;
    e->seq = s->enq;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuEventQuery(CUevent e) {
    ENTER("cuEventQuery", K_OTHER, e ? e->ctx : NULL);
    if (!event_ok(e))
        RETURN(E_INVALID_HANDLE);
    /* As late as possible, but no later than asked: a query runs the work before the event. */
    if (e->s && run_to(e->s, e->seq))
        deadlock("an event query needs a stream that is running");
    RETURN(e->ctx->fault);
}

EXPORT CUresult cuEventSynchronize(CUevent e) {
    ENTER("cuEventSynchronize", K_OTHER, e ? e->ctx : NULL);
    if (!event_ok(e))
        RETURN(E_INVALID_HANDLE);
    if (e->s && run_to(e->s, e->seq))
        deadlock("an event wait needs a stream that is running");
    RETURN(e->ctx->fault);
}

EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
    ENTER("cuEventElapsedTime", K_OTHER, a ? a->ctx : NULL);
    if (!event_ok(a) || !event_ok(b) || (a->flags & CU_EVENT_DISABLE_TIMING) ||
        (b->flags & CU_EVENT_DISABLE_TIMING) || !a->s || !b->s)
        RETURN(E_INVALID_HANDLE);
    if (!event_complete(a) || !event_complete(b))
        RETURN(CUDA_ERROR_NOT_READY);
    *ms = (float)(b->ms - a->ms);
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s) {
    ENTER("cuMemAllocAsync", K_ALLOC, s ? s->ctx : NULL);
    if (!stream_ok(s))
        RETURN(E_INVALID_HANDLE);
    void *q = NULL;
    CUresult r = new_alloc(n, s->ctx->dev, s->ctx, &q);
    *p = (CUdeviceptr)(uintptr_t)q;
    RETURN(r);
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) {
    ENTER("cuMemFreeAsync", K_OTHER, s ? s->ctx : NULL);
    if (!stream_ok(s))
        RETURN(E_INVALID_HANDLE);
    op *o = new_op(OP_FREE);
    if (o)
        o->dst = (void *)(uintptr_t)p;
    RETURN(enqueue(s, o));
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
    ENTER("cuMemAlloc", K_ALLOC, need_current());
    if (!ctx_)
        RETURN(E_INVALID_CONTEXT);
    void *q = NULL;
    CUresult r = new_alloc(n, ctx_->dev, ctx_, &q);
    *p = (CUdeviceptr)(uintptr_t)q;
    RETURN(r);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
    ENTER("cuMemFree", K_OTHER, need_current());
    if (!ctx_)
        RETURN(E_INVALID_CONTEXT);
    /* cuMemFree synchronizes: work still queued that uses p runs first */
    for (struct CUstream_st *s = streams; s; s = s->next)
        run_to(s, s->enq);
    if (!drop_alloc((void *)(uintptr_t)p, -2))
        RETURN(E_INVALID_VALUE);
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) {
    ENTER("cuMemHostAlloc", K_ALLOC, need_current());
    if (!ctx_)
        RETURN(E_INVALID_CONTEXT);
    RETURN(new_alloc(n, -1, ctx_, p));
}

EXPORT CUresult cuMemFreeHost(void *p) {
    ENTER("cuMemFreeHost", K_OTHER, need_current());
    if (!ctx_)
        RETURN(E_INVALID_CONTEXT);
    if (!drop_alloc(p, -1))
        RETURN(E_INVALID_VALUE);
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    ENTER("cuMemcpyAsync", K_OTHER, s ? s->ctx : NULL);
    if (!stream_ok(s))
        RETURN(E_INVALID_HANDLE);
    op *o = new_op(OP_COPY);
    if (o) {
        o->corr = traced_call("cuMemcpyAsync");
        o->dst = (void *)(uintptr_t)dst;
        o->src = (const void *)(uintptr_t)src;
        o->bytes = n;
    }
    RETURN(enqueue(s, o));
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) {
    ENTER("cuMemsetD8Async", K_OTHER, s ? s->ctx : NULL);
    if (!stream_ok(s))
        RETURN(E_INVALID_HANDLE);
    op *o = new_op(OP_MEMSET);
    if (o) {
        o->corr = traced_call("cuMemsetD8Async");
        o->dst = (void *)(uintptr_t)p;
        o->value = v;
        o->bytes = n;
    }
    RETURN(enqueue(s, o));
}

EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image) {
    ENTER("cuModuleLoadData", K_ALLOC, need_current());
    if (!ctx_)
        RETURN(E_INVALID_CONTEXT);
    const char *tag = "fake-cubin:";
    if (!image || strncmp(image, tag, strlen(tag)))
        RETURN(E_INVALID_IMAGE);
    int chunked = 0;
    const kdef *k = kernel_named((const char *)image + strlen(tag), &chunked);
    struct CUmod_st *n = calloc(1, sizeof *n);
    if (!n)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    n->ctx = ctx_;
    n->fn.k = k;
    n->fn.chunked = chunked;
    n->fn.mod = n;
    n->next = modules;
    modules = n;
    *m = n;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuModuleUnload(CUmodule m) {
    ENTER("cuModuleUnload", K_OTHER, m ? m->ctx : NULL);
    if (!m || m->destroyed || !m->ctx->refs)
        RETURN(E_INVALID_HANDLE);
    m->destroyed = 1; /* kept until its context ends: queued launches name its function */
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    ENTER("cuModuleGetFunction", K_OTHER, m ? m->ctx : NULL);
    if (!m || m->destroyed)
        RETURN(E_INVALID_HANDLE);
    int chunked = 0;
    if (!m->fn.k || kernel_named(name, &chunked) != m->fn.k || chunked != m->fn.chunked)
        RETURN(E_NOT_FOUND);
    *f = &m->fn;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuFuncSetAttribute(CUfunction f, int attr, int v) {
    ENTER("cuFuncSetAttribute", K_OTHER, f ? f->mod->ctx : NULL);
    RETURN(f ? CUDA_SUCCESS : E_INVALID_HANDLE);
}

static CUresult check_launch(struct CUfunc_st *f, struct CUctx_st *ctx, unsigned gx, unsigned gy,
                             unsigned gz, unsigned bx, unsigned by, unsigned bz) {
    if (!f || f->mod->destroyed)
        return E_INVALID_HANDLE;
    if (f->mod->ctx != ctx)
        return E_INVALID_CONTEXT; /* a function runs only in the context that loaded it */
    if (!gx || !gy || !gz || !bx || !by || !bz || (uint64_t)bx * by * bz > 1024)
        return E_INVALID_VALUE;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
                               void **extra) {
    ENTER("cuLaunchKernel", K_OTHER, s ? s->ctx : NULL);
    if (!stream_ok(s))
        RETURN(E_INVALID_HANDLE);
    CUresult r = check_launch(f, s->ctx, gx, gy, gz, bx, by, bz);
    if (r || !params)
        RETURN(r ? r : E_INVALID_VALUE);
    op *o = new_op(OP_KERNEL);
    if (o) {
        o->corr = traced_call("cuLaunchKernel");
        o->l.fn = f;
        o->l.grid[0] = gx, o->l.grid[1] = gy, o->l.grid[2] = gz;
        o->l.block[0] = bx, o->l.block[1] = by, o->l.block[2] = bz;
        take_params(&o->l, f, params);
    }
    RETURN(enqueue(s, o));
}

EXPORT CUresult cuGraphCreate(CUgraph *g, unsigned flags) {
    ENTER("cuGraphCreate", K_ALLOC, need_current());
    *g = calloc(1, sizeof **g);
    if (!*g)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    (*g)->next = graphs;
    graphs = *g;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuGraphDestroy(CUgraph g) {
    ENTER("cuGraphDestroy", K_OTHER, need_current());
    if (!g)
        RETURN(E_INVALID_HANDLE);
    graph_free(g);
    RETURN(CUDA_SUCCESS);
}

static node *graph_add(CUgraph g, CUgraphNode *out) {
    if (g->count == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        node *n = realloc(g->n, cap * sizeof *n);
        if (!n)
            return NULL;
        g->n = n;
        g->cap = cap;
    }
    node *n = &g->n[g->count++];
    memset(n, 0, sizeof *n);
    *out = (CUgraphNode)(uintptr_t)g->count; /* 1-based index: nodes run in the order made */
    return n;
}

static int deps_ok(CUgraph g, const CUgraphNode *deps, size_t ndeps) {
    for (size_t i = 0; i < ndeps; i++)
        if ((uintptr_t)deps[i] < 1 || (uintptr_t)deps[i] > g->count)
            return 0;
    return 1;
}

EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                        size_t ndeps, const CUDA_KERNEL_NODE_PARAMS_v2 *p) {
    ENTER("cuGraphAddKernelNode", K_ALLOC, p ? p->ctx : NULL);
    if (!g || !deps_ok(g, deps, ndeps) || !p || !p->kernelParams)
        RETURN(E_INVALID_VALUE);
    CUresult r = check_launch(p->func, p->ctx, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX,
                              p->blockDimY, p->blockDimZ);
    if (r)
        RETURN(r);
    node *n = graph_add(g, out);
    if (!n)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    n->kind = 0;
    n->l.fn = p->func;
    n->l.grid[0] = p->gridDimX, n->l.grid[1] = p->gridDimY, n->l.grid[2] = p->gridDimZ;
    n->l.block[0] = p->blockDimX, n->l.block[1] = p->blockDimY, n->l.block[2] = p->blockDimZ;
    take_params(&n->l, p->func, p->kernelParams);
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                     size_t ndeps, const CUDA_MEMCPY3D *p, CUcontext ctx) {
    ENTER("cuGraphAddMemcpyNode", K_ALLOC, ctx);
    if (!g || !deps_ok(g, deps, ndeps) || !p || p->Height != 1 || p->Depth != 1)
        RETURN(E_INVALID_VALUE);
    node *n = graph_add(g, out);
    if (!n)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    n->kind = 1;
    n->src =
        p->srcMemoryType == CU_MEMORYTYPE_HOST ? p->srcHost : (const void *)(uintptr_t)p->srcDevice;
    n->dst = p->dstMemoryType == CU_MEMORYTYPE_HOST ? p->dstHost : (void *)(uintptr_t)p->dstDevice;
    n->bytes = p->WidthInBytes;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                                    size_t ndeps) {
    ENTER("cuGraphAddEmptyNode", K_ALLOC, need_current());
    if (!g || !deps_ok(g, deps, ndeps))
        RETURN(E_INVALID_VALUE);
    node *n = graph_add(g, out);
    if (!n)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    n->kind = 2;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags) {
    ENTER("cuGraphInstantiate", K_ALLOC, need_current());
    if (!g)
        RETURN(E_INVALID_VALUE);
    struct CUgraphExec_st *x = calloc(1, sizeof *x);
    if (x && g->count && !(x->n = malloc(g->count * sizeof *x->n))) {
        free(x);
        x = NULL;
    }
    if (!x)
        RETURN(CUDA_ERROR_OUT_OF_MEMORY);
    if (g->count)
        memcpy(x->n, g->n, g->count * sizeof *x->n);
    x->count = g->count;
    x->refs = 1;
    x->next = execs;
    execs = x;
    *e = x;
    RETURN(CUDA_SUCCESS);
}

EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s) {
    ENTER("cuGraphLaunch", K_OTHER, s ? s->ctx : NULL);
    if (!e || !stream_ok(s))
        RETURN(E_INVALID_HANDLE);
    op *o = new_op(OP_GRAPH);
    if (o) {
        o->corr = traced_call("cuGraphLaunch");
        o->g = e;
        e->refs++;
    }
    RETURN(enqueue(s, o));
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec e) {
    ENTER("cuGraphExecDestroy", K_OTHER, need_current());
    if (!e || e->destroyed)
        RETURN(E_INVALID_HANDLE);
    e->destroyed = 1;
    graph_exec_unref(e); /* a launch still queued keeps it */
    RETURN(CUDA_SUCCESS);
}

/* What is left at exit (contexts never released: the test failed) is freed, so that LSan
 * reports the library's leaks, not this driver's. */
__attribute__((destructor)) static void fake_cuda_end(void) {
    for (int d = 0; d < MAX_DEV; d++)
        if (ctxs[d].refs) {
            ctxs[d].refs = 0;
            ctx_destroy(&ctxs[d]);
        }
    fake_cuda_graphs_reclaim();
}

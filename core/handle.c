/* handle.c: generation-checked handles, and the one door every public call on a handle goes
 * through (pg__enter / pg__leave). A handle is (generation << 24 | slot + 1), so a freed or
 * doubly freed handle is reported instead of touching freed memory; each slot also names the
 * runtime that owns the object, which an entering call pins so that a concurrent close waits
 * for it instead of freeing the runtime under it. */
#include "core/handle.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define CHUNK_BITS 12
#define CHUNK (1u << CHUNK_BITS)
#define MAX_CHUNKS 4096 /* 16M live handles */

typedef struct slot {
    uint64_t gen; /* bumped on release, so stale handles never match */
    int kind;
    void *obj;
    pg__runtime *owner; /* the runtime the object belongs to (itself, for a runtime) */
    uint32_t next_free;
} slot;

/* The table's lock is a leaf: it is taken with or without a runtime's lock, and nothing else
 * is taken while it is held. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t unpinned = PTHREAD_COND_INITIALIZER; /* a closing runtime lost a pin */
static slot *chunks[MAX_CHUNKS];
static uint32_t nslots;
static uint32_t free_head; /* slot index + 1; 0 = empty */
static uint64_t fork_gen;  /* bumped in the child of every fork() */

/* A child of fork() has the runtimes' memory but none of their threads, and their locks may
 * be held by threads that do not exist there: every runtime made before the fork refuses
 * calls in the child (pg__enter), and the table's own lock is held across the fork so the
 * child gets it unlocked and consistent. */
static void before_fork(void) {
    pthread_mutex_lock(&mu);
}
static void after_fork_parent(void) {
    pthread_mutex_unlock(&mu);
}
static void after_fork_child(void) {
    fork_gen++;
    pthread_mutex_unlock(&mu);
}
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void install_fork_handlers(void) {
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

uint64_t pg__fork_generation(void) {
    pthread_once(&fork_once, install_fork_handlers);
    pthread_mutex_lock(&mu);
    uint64_t g = fork_gen;
    pthread_mutex_unlock(&mu);
    return g;
}

static slot *at(uint32_t i) {
    return &chunks[i >> CHUNK_BITS][i & (CHUNK - 1)];
}

uint64_t pg__handle_new(int kind, void *obj, pg__runtime *owner) {
    pthread_mutex_lock(&mu);
    uint32_t i;
    if (free_head) {
        i = free_head - 1;
        free_head = at(i)->next_free;
    } else {
        if ((nslots >> CHUNK_BITS) >= MAX_CHUNKS) {
            pthread_mutex_unlock(&mu);
            return 0;
        }
        if (!chunks[nslots >> CHUNK_BITS]) {
            chunks[nslots >> CHUNK_BITS] = pg__calloc(CHUNK, sizeof(slot));
            if (!chunks[nslots >> CHUNK_BITS]) {
                pthread_mutex_unlock(&mu);
                return 0;
            }
        }
        i = nslots++;
        at(i)->gen = 1;
    }
    slot *s = at(i);
    s->kind = kind;
    s->obj = obj;
    s->owner = owner;
    uint64_t h = (s->gen << 24) | (uint64_t)(i + 1);
    pthread_mutex_unlock(&mu);
    return h;
}

static slot *find(uint64_t h) {
    uint32_t i = (uint32_t)(h & 0xffffff);
    if (i == 0 || i > nslots)
        return NULL;
    slot *s = at(i - 1);
    return s->gen == (h >> 24) && s->obj ? s : NULL;
}

void *pg__handle_get(uint64_t h, int kind) {
    pthread_mutex_lock(&mu);
    slot *s = find(h);
    void *obj = s && s->kind == kind ? s->obj : NULL;
    pthread_mutex_unlock(&mu);
    return obj;
}

void *pg__handle_get_owned(uint64_t h, int kind, pg__runtime *rt, int *foreign) {
    pthread_mutex_lock(&mu);
    slot *s = find(h);
    void *obj = s && s->kind == kind ? s->obj : NULL;
    *foreign = obj && s->owner != rt;
    pthread_mutex_unlock(&mu);
    return *foreign ? NULL : obj;
}

void pg__handle_release(uint64_t h) {
    pthread_mutex_lock(&mu);
    slot *s = find(h);
    if (s) {
        s->gen++;
        s->obj = NULL;
        s->owner = NULL;
        s->kind = 0;
        s->next_free = free_head;
        free_head = (uint32_t)(h & 0xffffff);
    }
    pthread_mutex_unlock(&mu);
}

static const char *kind_name(int kind) {
    return kind == PG__H_RUNTIME ? "runtime"
           : kind == PG__H_ARRAY ? "array"
           : kind == PG__H_GRAPH ? "graph"
                                 : "kernel";
}

/* The recording this thread began (its graph's handle), 0 when none: a call on any other
 * runtime is refused while it lasts. A handle, not a pointer, so that a recording whose runtime
 * another thread freed simply stops counting. */
static _Thread_local uint64_t recording;

void pg__handle_set_recording(uint64_t graph) {
    recording = graph;
}

void *pg__enter(uint64_t h, int kind, const char *fn, pg__runtime **out) {
    pthread_mutex_lock(&mu);
    slot *s = find(h);
    pg__runtime *rt = s && s->kind == kind ? s->owner : NULL;
    const char *why = NULL;
    if (!rt)
        why = "is invalid or was already freed";
    else if (rt->fork_gen != fork_gen)
        why = "belongs to a runtime created before fork(): a child process must create its own "
              "runtime";
    else if (atomic_load(&rt->closing))
        why = "belongs to a runtime that is closed or closing";
    else if (recording) {
        slot *r = find(recording);
        if (!r || r->kind != PG__H_GRAPH)
            recording = 0; /* its runtime was freed: the recording is over */
        else if (r->owner != rt)
            why = "belongs to another runtime than the one this thread is recording on "
                  "(pg_graph_begin): end the recording (pg_graph_end) first";
    }
    if (why) {
        pthread_mutex_unlock(&mu);
        pg__error(PG_ERROR_STATE, "%s: the %s handle %s", fn, kind_name(kind), why);
        return NULL;
    }
    rt->pins++;
    pthread_mutex_unlock(&mu);
    pthread_mutex_lock(&rt->mu);
    /* Objects of rt are freed only under rt->mu: found now, it stays alive until pg__leave. */
    void *obj = pg__handle_get(h, kind);
    if (!obj) {
        pg__leave(rt);
        pg__error(PG_ERROR_STATE, "%s: the %s handle was freed by another thread", fn,
                  kind_name(kind));
        return NULL;
    }
    *out = rt;
    return obj;
}

pg__array *pg__enter_array(pg_array *h, const char *fn) {
    pg__runtime *rt;
    return pg__enter((uint64_t)(uintptr_t)h, PG__H_ARRAY, fn, &rt);
}

pg__kernel *pg__enter_kernel(pg_kernel *h, const char *fn) {
    pg__runtime *rt;
    return pg__enter((uint64_t)(uintptr_t)h, PG__H_KERNEL, fn, &rt);
}

pg__runtime *pg__enter_runtime(pg_runtime *h, const char *fn) {
    pg__runtime *rt;
    return pg__enter((uint64_t)(uintptr_t)h, PG__H_RUNTIME, fn, &rt) ? rt : NULL;
}

pg__runtime *pg__enter_device(pg_runtime *h, int device, const char *fn, pg_status *st) {
    pg__runtime *rt = pg__enter_runtime(h, fn);
    if (!rt) {
        *st = PG_ERROR_STATE;
        return NULL;
    }
    if (device < 0 || device >= rt->ndev) {
        *st = pg__error(PG_ERROR_ARGUMENT, "%s: no device %d (the runtime has 0..%d)", fn, device,
                        rt->ndev - 1);
        pg__leave(rt);
        return NULL;
    }
    *st = PG_OK;
    return rt;
}

void pg__lock(pg__runtime *rt) {
    pthread_mutex_lock(&rt->mu);
}

void pg__unlock(pg__runtime *rt) {
    pthread_mutex_unlock(&rt->mu);
}

void pg__cond_wait(pg__runtime *rt) {
    pthread_cond_wait(&rt->cond, &rt->mu);
}

int pg__cond_wait_until(pg__runtime *rt, const struct timespec *until) {
    return pthread_cond_timedwait(&rt->cond, &rt->mu, until) == ETIMEDOUT;
}

void pg__leave(pg__runtime *rt) {
    pthread_mutex_unlock(&rt->mu);
    pg__unpin(rt);
}

void pg__unpin(pg__runtime *rt) {
    pthread_mutex_lock(&mu);
    if (--rt->pins == 0 && atomic_load(&rt->closing))
        pthread_cond_broadcast(&unpinned);
    pthread_mutex_unlock(&mu);
}

pg__runtime *pg__close_begin(uint64_t h, const char *fn, int *forked) {
    pthread_mutex_lock(&mu);
    slot *s = find(h);
    pg__runtime *rt = s && s->kind == PG__H_RUNTIME ? s->owner : NULL;
    if (!rt || atomic_load(&rt->closing)) {
        pthread_mutex_unlock(&mu);
        pg__error(PG_ERROR_STATE, "%s: the runtime handle is invalid or was already freed", fn);
        return NULL;
    }
    *forked = rt->fork_gen != fork_gen;
    rt->closer = pthread_self(); /* published by the store below */
    atomic_store(&rt->closing, 1);
    pthread_mutex_unlock(&mu);
    pg__handle_release(h);
    return rt;
}

int pg__close_wait_unpinned(pg__runtime *rt, uint64_t timeout_ns) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int limited = timeout_ns < UINT64_C(1) << 62;
    if (limited) {
        uint64_t ns = (uint64_t)ts.tv_nsec + timeout_ns;
        ts.tv_sec += (time_t)(ns / 1000000000u);
        ts.tv_nsec = (long)(ns % 1000000000u);
    }
    pthread_mutex_lock(&mu);
    int timed_out = 0;
    while (rt->pins > 0 && !timed_out) {
        if (limited)
            timed_out = pthread_cond_timedwait(&unpinned, &mu, &ts) == ETIMEDOUT;
        else
            pthread_cond_wait(&unpinned, &mu);
    }
    timed_out = rt->pins > 0;
    pthread_mutex_unlock(&mu);
    return timed_out;
}

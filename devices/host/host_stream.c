/* host_stream.c: CPU-device streams and events. A stream is a FIFO of operations with no thread
 * of its own: each device has a scheduler whose few worker threads take ready streams in turn
 * and run their operations (issue "CPU devices at StarPU's pace": a thread per stream cost a
 * wake-up and ~1.6 context switches per independent task). A worker that runs out of work spins
 * briefly before it sleeps, so a submission to an idle stream usually finds an awake worker and
 * wakes nobody (the CPU backend gives all its devices one scheduler with a worker per device, so
 * an awake worker takes any device's work). A stream whose next operation waits for another
 * stream's event is set aside,
 * not waited on, so a fixed set of workers cannot deadlock on cross-stream order. Kernels may
 * block (a kernel spinning on a host flag, a fault handler): when every worker of a device has
 * been busy for GROW_NS with ready work waiting, a waiting thread adds a worker, up to
 * MAX_WORKERS; with short tasks a device never has more than its first worker. Events are
 * completion counts. */
#include "devices/host/host_stream.h"
#include "devices/host/host_guard.h"
#include "base/alloc.h"
#include "base/error.h"
#include "devices/host/host_fibers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef enum op_kind { OP_LAUNCH, OP_COPY, OP_MEMSET, OP_WAIT, OP_CALL, OP_WAIT_FLAGS } op_kind;

typedef struct op {
    struct op *next;
    op_kind kind;
    int cap; /* slots allocated */
    uint64_t seq;
    pg__timing *t;
    union {
        struct {
            pg__cpu_entry fn;
            pg__cpu_launch l;
            uint64_t first, nblocks; /* blocks [first, first + nblocks) of the grid */
            int nparams;
            uint32_t *sync; /* chunked outputs: counters then flags (NULL: none) */
            uint32_t bpc;
        } launch;
        struct {
            const uint32_t *flags;
            uint32_t count;
        } flags;
        struct {
            void *dst;
            const void *src;
            size_t bytes;
            int dst_dev, src_dev; /* PG_HOST or a device */
        } copy;
        struct {
            pg_status (*fn)(void *arg); /* arg: the op's slots */
        } call;
        struct {
            pg__bstream *s; /* referenced until the op is freed */
            uint64_t seq;
        } wait;
    } u;
    uint64_t slots[]; /* launch: the parameters' values, copied at enqueue */
} op;

/* An operation that failed: events recorded right after it report msg. */
typedef struct failure {
    uint64_t seq;
    int dev; /* the device that failed */
    char *msg;
} failure;

/* Workers and the streams with work (the CPU backend has one for all its devices). mu guards
 * everything here and every stream's queue, state and failure list (one lock: a submission and
 * the worker that takes it meet on it once). */
enum { MAX_WORKERS = 32, SPIN_NS = 30000, GROW_NS = 20000000 };
enum { IDLE, READY, RUNNING, BLOCKED }; /* a stream's state */

struct pg__host_sched {
    pthread_mutex_t mu;
    pthread_cond_t wake;                  /* ready work, or stop */
    pthread_cond_t done;                  /* some stream's `completed` moved */
    pg__bstream *ready_head, *ready_tail; /* READY streams, oldest first */
    pg__bstream *blocked;                 /* BLOCKED streams (their head waits on an event) */
    atomic_int ready_hint;                /* ready_head != NULL, read by spinning workers */
    int workers, sleeping, spinning, busy;
    uint64_t busy_since; /* when the longest-running operation in progress began (0: none) */
    int stop;
    pthread_t threads[MAX_WORKERS];
};

struct pg__bstream {
    atomic_int refs; /* the owner, each event, each queued wait on this stream */
    pg__host_sched *sched;
    pthread_mutex_t *mu; /* &sched->mu */
    int state;
    pg__bstream *next_ready; /* in the ready or blocked list */
    op *head, *tail;
    op *spare; /* finished ops of SPARE_SLOTS slots, reused: no malloc/free per launch */
    int nspare;
    uint64_t enqueued;              /* seq of the last op queued (mu) */
    atomic_uint_fast64_t completed; /* seq of the last op finished; stored under mu, release */
    pg__host_dev *devs;
    int dev;
    uint64_t epoch_ns;
    failure *fails; /* failed operations, by seq (mu); few: a failed device gets no new work */
    int nfails, capfails;
    uint64_t unrecorded; /* first failed seq there was no memory to record (0: none) */
    /* An event's memory, allocated with each op before it is queued: recording the event that
     * tracks queued work cannot then fail (untracked work would have to fail the device). */
    struct pg__bevent *event_spare;
    atomic_int any_failed; /* set (under mu) before a failed op completes: a lock-free "none" */
};

struct pg__bevent {
    pg__bstream *s;
    uint64_t seq;
};

uint64_t pg__host_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void stream_ref(pg__bstream *s) {
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

/* Ops with this many slots or fewer are recycled through the stream's spare list; at most
 * SPARE_MAX are kept (a queue that ran far ahead of its worker gives the rest back). */
enum { SPARE_SLOTS = 8, SPARE_MAX = 1024 };

static void stream_unref(pg__bstream *s) {
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    while (s->spare) {
        op *o = s->spare;
        s->spare = o->next;
        pg__free(o);
    }
    for (int i = 0; i < s->nfails; i++)
        pg__free(s->fails[i].msg);
    pg__free(s->fails);
    pg__free(s->event_spare);
    pg__free(s);
}

static int reached(pg__bstream *s, uint64_t seq) {
    return atomic_load_explicit(&s->completed, memory_order_acquire) >= seq;
}

static void grow_if_stuck(pg__host_sched *h);

/* Block until s has finished op seq. */
static void wait_seq(pg__bstream *s, uint64_t seq) {
    if (reached(s, seq))
        return;
    pg__host_sched *h = s->sched;
    pthread_mutex_lock(&h->mu);
    while (!reached(s, seq)) {
        grow_if_stuck(h);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += GROW_NS;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&h->done, &h->mu, &ts);
    }
    pthread_mutex_unlock(&h->mu);
}

static int failed(pg__bstream *s, int dev) {
    return dev >= 0 && atomic_load_explicit(&s->devs[dev].failed, memory_order_acquire);
}

/* Work of a failed device is not run: what it reads or writes there is lost. */
static int not_run(pg__bstream *s, int dev, const char *what, int *fdev, char *msg, size_t cap) {
    pg__host_dev *d = &s->devs[dev];
    pthread_mutex_lock(&d->mu);
    snprintf(msg, cap, "%s: CPU device %d had failed (%s)", what, dev, d->why);
    pthread_mutex_unlock(&d->mu);
    *fdev = dev;
    return -1;
}

static void device_failed(pg__bstream *s, const char *why) {
    pg__host_dev *d = &s->devs[s->dev];
    pthread_mutex_lock(&d->mu);
    if (!atomic_load_explicit(&d->failed, memory_order_relaxed)) {
        snprintf(d->why, sizeof d->why, "%s", why);
        atomic_store_explicit(&d->failed, 1, memory_order_release);
    }
    pthread_mutex_unlock(&d->mu);
}

/* 0, or -1 with msg and *fdev set when the operation failed or was not run. */
static void chunk_ready(void *sched);

static pg__host_chunks launch_chunks(pg__bstream *s, const op *o) {
    pg__host_chunks ch = {o->u.launch.sync, o->u.launch.bpc, 0, chunk_ready, s->sched};
    if (ch.sync)
        ch.nchunks = (o->u.launch.nblocks + ch.bpc - 1) / ch.bpc;
    return ch;
}

/* Every flag of a chunked launch, raised: a launch that failed or did not run. */
static void flags_release(const pg__host_chunks *ch) {
    if (!ch->sync)
        return;
    for (uint64_t c = 0; c < ch->nchunks; c++)
        atomic_store_explicit((_Atomic uint32_t *)&ch->sync[ch->nchunks + c], 1,
                              memory_order_release);
    chunk_ready(ch->ctx);
}

static int flags_raised(const op *o) {
    for (uint32_t i = 0; i < o->u.flags.count; i++)
        if (!atomic_load_explicit((_Atomic uint32_t *)&o->u.flags.flags[i], memory_order_acquire))
            return 0;
    return 1;
}

/* The head operation waits for something not there yet: the stream is set aside. */
static int head_waits(const op *o) {
    return o && ((o->kind == OP_WAIT && !reached(o->u.wait.s, o->u.wait.seq)) ||
                 (o->kind == OP_WAIT_FLAGS && !flags_raised(o)));
}

static int run(pg__bstream *s, op *o, int *fdev, char *msg, size_t cap) {
    uint64_t t0 = o->t ? pg__host_now_ns() : 0;
    int st = 0;
    switch (o->kind) {
    case OP_LAUNCH: {
        if (failed(s, s->dev)) {
            pg__host_chunks ch = launch_chunks(s, o);
            flags_release(&ch);
            st = not_run(s, s->dev, "not run", fdev, msg, cap);
            break;
        }
        void *params[PG__MAX_PARAMS];
        for (int i = 0; i < o->u.launch.nparams; i++)
            params[i] = &o->slots[i];
        pg__host_fault f;
        pg__host_chunks ch = launch_chunks(s, o);
        if (pg__host_pool_run(s->devs[s->dev].pool, o->u.launch.fn, &o->u.launch.l, params,
                              o->u.launch.first, o->u.launch.nblocks, ch.sync ? &ch : NULL, &f)) {
            flags_release(&ch); /* its waiters go on; what they copy comes from a failed value */
            device_failed(s, f.what);
            snprintf(msg, cap, "%s", f.what);
            *fdev = s->dev;
            st = -1;
        } else if (pg__host_guard_check(o->slots, o->u.launch.nparams, f.what, sizeof f.what)) {
            device_failed(s, f.what); /* check=bounds: it wrote before an argument's start */
            snprintf(msg, cap, "%s", f.what);
            *fdev = s->dev;
            st = -1;
        }
        break;
    }
    case OP_COPY:
        if (failed(s, o->u.copy.src_dev))
            st = not_run(s, o->u.copy.src_dev, "copy not done", fdev, msg, cap);
        else if (failed(s, o->u.copy.dst_dev))
            st = not_run(s, o->u.copy.dst_dev, "copy not done", fdev, msg, cap);
        else if (o->u.copy.bytes && o->u.copy.dst != o->u.copy.src)
            memmove(o->u.copy.dst, o->u.copy.src, o->u.copy.bytes);
        break;
    case OP_MEMSET:
        if (failed(s, s->dev))
            st = not_run(s, s->dev, "not run", fdev, msg, cap);
        else
            memset(o->u.copy.dst, 0, o->u.copy.bytes);
        break;
    case OP_WAIT:
        wait_seq(o->u.wait.s, o->u.wait.seq);
        break;
    case OP_WAIT_FLAGS: /* set aside until the flags were raised: nothing left to do */
        break;
    case OP_CALL:
        if (failed(s, s->dev)) {
            st = not_run(s, s->dev, "not run", fdev, msg, cap);
            break;
        }
        pg__error_clear();
        if (o->u.call.fn(o->slots) != PG_OK) { /* the call failed; the device did not */
            const char *why = pg_last_error();
            snprintf(msg, cap, "%s", why && *why ? why : "the task's function failed");
            *fdev = -1;
            st = -1;
        }
        break;
    }
    if (o->t) {
        o->t->start_ns = t0 - s->epoch_ns;
        o->t->end_ns = pg__host_now_ns() - s->epoch_ns;
    }
    return st;
}

/* With s->mu held, before the op counts as completed. Without memory for the record, every
 * later operation of the stream counts as failed: too many failures beat a missed one. */
static void note_failure(pg__bstream *s, uint64_t seq, int dev, const char *msg) {
    atomic_store_explicit(&s->any_failed, 1, memory_order_relaxed);
    if (s->nfails == s->capfails) {
        int cap = s->capfails ? 2 * s->capfails : 4;
        failure *f = pg__realloc(s->fails, (size_t)cap * sizeof *f);
        if (!f) {
            if (!s->unrecorded)
                s->unrecorded = seq;
            return;
        }
        s->fails = f;
        s->capfails = cap;
    }
    s->fails[s->nfails++] = (failure){seq, dev, pg__strdup(msg)};
}

/* ---- the scheduler (h->mu held unless said otherwise) */

static void push_ready(pg__host_sched *h, pg__bstream *s) {
    s->state = READY;
    s->next_ready = NULL;
    if (h->ready_tail)
        h->ready_tail->next_ready = s;
    else
        h->ready_head = s;
    h->ready_tail = s;
    atomic_store_explicit(&h->ready_hint, 1, memory_order_relaxed);
}

/* Blocked streams whose awaited event completed go back to the ready list. */
static void unblock(pg__host_sched *h) {
    pg__bstream **pp = &h->blocked;
    while (*pp) {
        pg__bstream *s = *pp;
        if (head_waits(s->head)) {
            pp = &s->next_ready;
            continue;
        }
        *pp = s->next_ready;
        push_ready(h, s);
    }
}

static pg__bstream *pop_ready(pg__host_sched *h) {
    if (h->blocked)
        unblock(h);
    pg__bstream *s = h->ready_head;
    if (s) {
        h->ready_head = s->next_ready;
        if (!h->ready_head) {
            h->ready_tail = NULL;
            atomic_store_explicit(&h->ready_hint, 0, memory_order_relaxed);
        }
        s->next_ready = NULL;
    }
    return s;
}

/* A chunk's flag was raised (by a pool thread or a worker, without mu): streams set aside on
 * flags may go on. */
static void chunk_ready(void *sched) {
    pg__host_sched *h = sched;
    pthread_mutex_lock(&h->mu);
    if (h->blocked) {
        unblock(h);
        if (h->ready_head && h->sleeping && !h->spinning)
            pthread_cond_signal(&h->wake);
    }
    pthread_mutex_unlock(&h->mu);
}

static int worker_start(pg__host_sched *h);

/* Spinning workers of every CPU device of the process, and how many may spin at once. */
static atomic_int spinners;
static atomic_int spin_limit = -1;

static int spin_slot_take(void) {
    int limit = atomic_load_explicit(&spin_limit, memory_order_relaxed);
    if (limit < 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        limit = cores > 1 ? (int)cores - 1 : 0;
        atomic_store_explicit(&spin_limit, limit, memory_order_relaxed);
    }
    if (atomic_fetch_add_explicit(&spinners, 1, memory_order_relaxed) < limit)
        return 1;
    atomic_fetch_sub_explicit(&spinners, 1, memory_order_relaxed);
    return 0;
}

static void spin_slot_give(void) {
    atomic_fetch_sub_explicit(&spinners, 1, memory_order_relaxed);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Ready work waits while every worker has been busy for GROW_NS (a kernel that blocks, say):
 * add a worker, so that other streams go on as they would on a GPU. */
static void grow_if_stuck(pg__host_sched *h) {
    if (!h->ready_head || h->sleeping || h->spinning || h->busy < h->workers || !h->busy_since ||
        h->workers >= MAX_WORKERS || h->stop)
        return;
    if (pg__host_now_ns() - h->busy_since >= GROW_NS)
        worker_start(h);
}

static void *worker_main(void *arg) {
    pg__host_sched *h = arg;
    pg__host_fault_thread_begin();
    pthread_mutex_lock(&h->mu);
    for (;;) {
        pg__bstream *s = pop_ready(h);
        if (!s) {
            if (h->stop && !h->blocked)
                break;
            /* Spin a little before sleeping: the next submission usually comes within a few
             * microseconds and then costs no wake-up. Spinners take cores, so all devices
             * together spin on at most cores - 1 threads: the submitting thread keeps one. */
            if (spin_slot_take()) {
                h->spinning++;
                pthread_mutex_unlock(&h->mu);
                uint64_t until = pg__host_now_ns() + SPIN_NS;
                for (unsigned i = 1; !atomic_load_explicit(&h->ready_hint, memory_order_relaxed);
                     i++) {
                    cpu_relax();
                    if (!(i & 63) && pg__host_now_ns() >= until)
                        break;
                }
                pthread_mutex_lock(&h->mu);
                h->spinning--;
                spin_slot_give();
                if (h->ready_head || h->stop)
                    continue;
            }
            /* A blocked stream needs no polling: the completion it waits for happens in this
             * scheduler, under mu, and unblocks it there. */
            h->sleeping++;
            pthread_cond_wait(&h->wake, &h->mu);
            h->sleeping--;
            continue;
        }
        op *o = s->head;
        if (head_waits(o)) {
            s->state = BLOCKED; /* set aside: a worker never waits for another stream */
            s->next_ready = h->blocked;
            h->blocked = s;
            continue;
        }
        s->head = o->next;
        if (!s->head)
            s->tail = NULL;
        s->state = RUNNING;
        uint64_t t0 = pg__host_now_ns();
        if (!h->busy++)
            h->busy_since = t0;
        pthread_mutex_unlock(&h->mu);
        int fdev = -1;
        char msg[512];
        int st = run(s, o, &fdev, msg, sizeof msg);
        if (o->kind == OP_WAIT)
            stream_unref(o->u.wait.s);
        pthread_mutex_lock(&h->mu);
        if (!--h->busy)
            h->busy_since = 0;
        else if (h->busy_since == t0)
            h->busy_since = pg__host_now_ns(); /* the others started later: a lower bound */
        if (st)
            note_failure(s, o->seq, fdev, msg);
        atomic_store_explicit(&s->completed, o->seq, memory_order_release);
        pthread_cond_broadcast(&h->done);
        if (o->cap == SPARE_SLOTS && s->nspare < SPARE_MAX) {
            o->next = s->spare;
            s->spare = o;
            s->nspare++;
        } else {
            pg__free(o);
        }
        if (s->head) {
            push_ready(h, s); /* to the back, with its reference: streams take turns */
        } else {
            s->state = IDLE;
            stream_unref(s); /* the reference the ready list held */
        }
        if (h->blocked) /* every event is of a stream of this scheduler: recheck them here */
            unblock(h);
    }
    pthread_mutex_unlock(&h->mu);
    pg__host_fault_thread_end();
    return NULL;
}

static int worker_start(pg__host_sched *h) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* The worker runs kernel blocks too: a main thread's stack whatever RLIMIT_STACK says. */
    pthread_attr_setstacksize(&attr, (size_t)8 << 20);
    int err = pthread_create(&h->threads[h->workers], &attr, worker_main, h);
    pthread_attr_destroy(&attr);
    if (!err)
        h->workers++;
    return err;
}

pg_status pg__host_sched_new(int workers, pg__host_sched **out) {
    pg__host_sched *h = pg__calloc(1, sizeof *h);
    if (!h)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for a CPU device scheduler");
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->wake, NULL);
    pthread_cond_init(&h->done, NULL);
    atomic_init(&h->ready_hint, 0);
    pthread_mutex_lock(&h->mu);
    int err = 0;
    for (int i = 0; i < workers && i < MAX_WORKERS && !err; i++)
        err = worker_start(h);
    pthread_mutex_unlock(&h->mu);
    if (err) {
        pg__host_sched_free(h);
        return pg__error(PG_ERROR_DEVICE,
                         "could not start a CPU device worker thread (error %d): too many threads "
                         "in this process",
                         err);
    }
    *out = h;
    return PG_OK;
}

void pg__host_sched_free(pg__host_sched *h) {
    if (!h)
        return;
    pthread_mutex_lock(&h->mu);
    h->stop = 1;
    pthread_cond_broadcast(&h->wake);
    int n = h->workers;
    pthread_mutex_unlock(&h->mu);
    for (int i = 0; i < n; i++)
        pthread_join(h->threads[i], NULL);
    pthread_cond_destroy(&h->done);
    pthread_cond_destroy(&h->wake);
    pthread_mutex_destroy(&h->mu);
    pg__free(h);
}

/* A cleared op with room for nslots parameters, returned with s->mu held (NULL, unlocked, when
 * out of memory): fill it and pass it to enqueue. */
static op *op_new(pg__bstream *s, op_kind kind, int nslots, pg__timing *t) {
    int cap = nslots <= SPARE_SLOTS ? SPARE_SLOTS : nslots;
    pthread_mutex_lock(s->mu);
    op *o = cap == SPARE_SLOTS ? s->spare : NULL;
    if (o) {
        s->spare = o->next;
        s->nspare--;
        memset(o, 0, sizeof *o);
    } else if (!(o = pg__calloc(1, sizeof *o + (size_t)cap * sizeof(uint64_t)))) {
        pthread_mutex_unlock(s->mu);
        return NULL;
    }
    if (!s->event_spare && !(s->event_spare = pg__malloc(sizeof *s->event_spare))) {
        pg__free(o);
        pthread_mutex_unlock(s->mu);
        return NULL;
    }
    o->kind = kind;
    o->cap = cap;
    o->t = t;
    return o;
}

static pg_status no_memory(void) {
    return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for a CPU device operation");
}

/* Queues o, made by op_new (s->mu held), and releases s->mu. An idle stream becomes ready; a
 * worker is woken only when none is awake to find it. */
static void enqueue(pg__bstream *s, op *o) {
    pg__host_sched *h = s->sched;
    o->seq = ++s->enqueued;
    if (s->tail)
        s->tail->next = o;
    else
        s->head = o;
    s->tail = o;
    if (s->state == IDLE) {
        stream_ref(s); /* held by the ready list and the running worker */
        push_ready(h, s);
        if (!h->spinning && h->sleeping)
            pthread_cond_signal(&h->wake);
    }
    pthread_mutex_unlock(s->mu);
}

pg_status pg__host_stream_new(pg__host_dev *devs, int dev, uint64_t epoch_ns, pg__bstream **out) {
    if (!devs[dev].sched)
        return pg__error(PG_ERROR_INTERNAL, "CPU device %d has no scheduler", dev);
    pg__bstream *s = pg__calloc(1, sizeof *s);
    if (!s)
        return no_memory();
    atomic_init(&s->refs, 1);
    atomic_init(&s->completed, 0);
    atomic_init(&s->any_failed, 0);
    s->devs = devs;
    s->dev = dev;
    s->epoch_ns = epoch_ns;
    s->sched = devs[dev].sched;
    s->mu = &s->sched->mu;
    s->state = IDLE;
    *out = s;
    return PG_OK;
}

void pg__host_stream_free(pg__bstream *s) {
    if (!s)
        return;
    /* The queued work finishes first, as before, when the stream had its own thread. */
    pthread_mutex_lock(s->mu);
    uint64_t last = s->enqueued;
    pthread_mutex_unlock(s->mu);
    wait_seq(s, last);
    stream_unref(s);
}

pg_status pg__host_stream_launch(pg__bstream *s, pg__cpu_entry fn, pg_dim3 grid, pg_dim3 block,
                                 size_t shared_mem, const uint64_t *params, int nparams,
                                 pg__timing *t) {
    return pg__host_stream_launch_chunks(s, fn, grid, block, shared_mem, params, nparams, NULL, 0,
                                         t);
}

/* Blocks [first, first + count) of the grid; chunk counting (sync) only for whole grids. */
static pg_status launch_op(pg__bstream *s, pg__cpu_entry fn, pg_dim3 grid, pg_dim3 block,
                           size_t shared_mem, const uint64_t *params, int nparams, uint64_t first,
                           uint64_t count, uint32_t *sync, uint32_t bpc, pg__timing *t) {
    if (nparams < 0 || nparams > PG__MAX_PARAMS || (nparams && !params) || !fn)
        return pg__error(PG_ERROR_INTERNAL,
                         "CPU launch with %d parameters (at most %d) or no function", nparams,
                         PG__MAX_PARAMS);
    op *o = op_new(s, OP_LAUNCH, nparams, t);
    if (!o)
        return no_memory();
    o->u.launch.fn = fn;
    o->u.launch.l.grid = grid;
    o->u.launch.l.block = block;
    o->u.launch.l.shared_mem = shared_mem;
    o->u.launch.l.fiber_memory = pg__host_fiber_memory;
    o->u.launch.l.fault = pg__host_fault_raise;
    o->u.launch.first = first;
    o->u.launch.nblocks = count;
    o->u.launch.nparams = nparams;
    o->u.launch.sync = sync;
    o->u.launch.bpc = bpc ? bpc : 1;
    if (nparams)
        memcpy(o->slots, params, (size_t)nparams * sizeof(uint64_t));
    enqueue(s, o);
    return PG_OK;
}

pg_status pg__host_stream_launch_chunks(pg__bstream *s, pg__cpu_entry fn, pg_dim3 grid,
                                        pg_dim3 block, size_t shared_mem, const uint64_t *params,
                                        int nparams, uint32_t *sync, uint32_t bpc, pg__timing *t) {
    return launch_op(s, fn, grid, block, shared_mem, params, nparams, 0,
                     (uint64_t)grid.x * grid.y * grid.z, sync, bpc, t);
}

pg_status pg__host_stream_launch_range(pg__bstream *s, pg__cpu_entry fn, pg_dim3 grid,
                                       pg_dim3 block, size_t shared_mem, const uint64_t *params,
                                       int nparams, uint64_t first, uint64_t count, pg__timing *t) {
    uint64_t total = (uint64_t)grid.x * grid.y * grid.z;
    if (first > total || count > total - first)
        return pg__error(PG_ERROR_INTERNAL, "CPU launch of blocks [%llu, %llu) of a grid of %llu",
                         (unsigned long long)first, (unsigned long long)(first + count),
                         (unsigned long long)total);
    return launch_op(s, fn, grid, block, shared_mem, params, nparams, first, count, NULL, 0, t);
}

pg_status pg__host_stream_wait_flags(pg__bstream *s, const uint32_t *flags, uint32_t count) {
    op *o = op_new(s, OP_WAIT_FLAGS, 0, NULL);
    if (!o)
        return no_memory();
    o->u.flags.flags = flags;
    o->u.flags.count = count;
    enqueue(s, o);
    return PG_OK;
}

pg_status pg__host_stream_copy(pg__bstream *s, int dst_dev, void *dst, int src_dev, const void *src,
                               size_t bytes, pg__timing *t) {
    op *o = op_new(s, OP_COPY, 0, t);
    if (!o)
        return no_memory();
    o->u.copy.dst = dst;
    o->u.copy.src = src;
    o->u.copy.bytes = bytes;
    o->u.copy.dst_dev = dst_dev;
    o->u.copy.src_dev = src_dev;
    enqueue(s, o);
    return PG_OK;
}

pg_status pg__host_stream_call(pg__bstream *s, pg_status (*fn)(void *arg), const void *arg,
                               size_t arg_bytes, pg__timing *t) {
    int nslots = (int)((arg_bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    if (!fn || (arg_bytes && !arg) || arg_bytes > (size_t)1 << 20)
        return pg__error(PG_ERROR_INTERNAL, "CPU call with no function or %zu bytes of arguments",
                         arg_bytes);
    op *o = op_new(s, OP_CALL, nslots, t);
    if (!o)
        return no_memory();
    o->u.call.fn = fn;
    if (arg_bytes)
        memcpy(o->slots, arg, arg_bytes);
    enqueue(s, o);
    return PG_OK;
}

pg_status pg__host_stream_memset_zero(pg__bstream *s, void *p, size_t bytes) {
    op *o = op_new(s, OP_MEMSET, 0, NULL);
    if (!o)
        return no_memory();
    o->u.copy.dst = p;
    o->u.copy.bytes = bytes;
    o->u.copy.dst_dev = s->dev;
    o->u.copy.src_dev = PG_HOST;
    enqueue(s, o);
    return PG_OK;
}

pg_status pg__host_stream_wait(pg__bstream *s, pg__bevent *e) {
    /* Same stream: order is already given. Finished: nothing to wait for. */
    if (e->s == s || reached(e->s, e->seq))
        return PG_OK;
    stream_ref(e->s);
    op *o = op_new(s, OP_WAIT, 0, NULL);
    if (!o) {
        stream_unref(e->s);
        return no_memory();
    }
    o->u.wait.s = e->s;
    o->u.wait.seq = e->seq;
    enqueue(s, o);
    return PG_OK;
}

pg_status pg__host_event_record(pg__bstream *s, pg__bevent **out) {
    pthread_mutex_lock(s->mu);
    pg__bevent *e = s->event_spare;
    s->event_spare = NULL;
    uint64_t seq = s->enqueued;
    pthread_mutex_unlock(s->mu);
    if (!e && !(e = pg__malloc(sizeof *e))) /* no op queued since the last event */
        return no_memory();
    stream_ref(s);
    e->s = s;
    e->seq = seq;
    *out = e;
    return PG_OK;
}

int pg__host_event_done(pg__bevent *e) {
    return reached(e->s, e->seq);
}

int pg__host_event_failure(pg__bevent *e, int *dev, char *msg, size_t cap) {
    pg__bstream *s = e->s;
    /* Asked about every finished computation: no lock when the stream never failed. The flag
     * was set before `completed` was released, which the caller acquired (the event is done). */
    if (!atomic_load_explicit(&s->any_failed, memory_order_relaxed))
        return 0;
    int found = 0;
    pthread_mutex_lock(s->mu);
    for (int i = 0; i < s->nfails && !found; i++) {
        if (s->fails[i].seq == e->seq) {
            *dev = s->fails[i].dev;
            snprintf(msg, cap, "%s", s->fails[i].msg ? s->fails[i].msg : "it failed");
            found = 1;
        }
    }
    if (!found && s->unrecorded && e->seq >= s->unrecorded) {
        *dev = s->dev;
        snprintf(msg, cap, "CPU device %d had failed (out of memory for the details)", s->dev);
        found = 1;
    }
    pthread_mutex_unlock(s->mu);
    return found;
}

void pg__host_event_wait(pg__bevent *e) {
    wait_seq(e->s, e->seq);
}

int pg__host_event_wait_for(pg__bevent *e, uint64_t timeout_ns) {
    pg__bstream *s = e->s;
    if (reached(s, e->seq))
        return 1;
    pg__host_sched *h = s->sched;
    uint64_t end = pg__host_now_ns() + timeout_ns;
    if (end < timeout_ns)
        end = UINT64_MAX;
    pthread_mutex_lock(&h->mu);
    while (!reached(s, e->seq)) {
        uint64_t now = pg__host_now_ns();
        if (now >= end)
            break;
        grow_if_stuck(h);
        uint64_t step = end - now < GROW_NS ? end - now : GROW_NS;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + step;
        ts.tv_sec += (time_t)(ns / 1000000000u);
        ts.tv_nsec = (long)(ns % 1000000000u);
        pthread_cond_timedwait(&h->done, &h->mu, &ts);
    }
    int done = reached(s, e->seq);
    pthread_mutex_unlock(&h->mu);
    return done;
}

void pg__host_event_free(pg__bevent *e) {
    if (!e)
        return;
    stream_unref(e->s);
    pg__free(e);
}

/* host_pool.c: a CPU device's helper threads sharing out the chunks of concurrent launches. */
#include "devices/host/host_pool.h"
#include "base/alloc.h"
#include "base/error.h"
#include "devices/host/host_fault.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Several chunks per thread, so a thread that gets slow blocks does not hold up the launch. */
#define CHUNKS_PER_THREAD 4

/* One launch being run. It lives on the caller's stack: the caller leaves only once it is
 * unlinked and no helper is inside it, both decided under the pool's mutex. */
typedef struct job {
    pg__cpu_entry fn;
    const pg__cpu_launch *l;
    void **params;
    const pg__host_chunks *ch;
    uint64_t first, nblocks, chunk, nchunks; /* blocks [first, first + nblocks) */
    atomic_uint_fast64_t next;               /* next chunk to take */
    int helpers;                             /* helper threads working on it (pool mutex) */
    int linked;                              /* still in the pool's list (pool mutex) */
    int faulted; /* a block faulted: the first fault is in `fault` (pool mutex) */
    pg__host_fault fault;
    struct job *prev, *next_job;
} job;

struct pg__host_pool {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a job was added, or stop */
    pthread_cond_t done; /* a helper left a job */
    job *head, *tail;
    int stop;
    int nthreads;
    pthread_t *threads;
};

/* Blocks [begin, end) finished: count them in the chunks they belong to. */
static void count_blocks(const pg__host_chunks *ch, uint64_t nblocks, uint64_t begin,
                         uint64_t end) {
    while (begin < end) {
        uint64_t c = begin / ch->bpc, first = c * ch->bpc;
        uint64_t last = first + ch->bpc < nblocks ? first + ch->bpc : nblocks;
        uint64_t upto = end < last ? end : last;
        uint32_t add = (uint32_t)(upto - begin);
        _Atomic uint32_t *cnt = (_Atomic uint32_t *)&ch->sync[c];
        if (atomic_fetch_add_explicit(cnt, add, memory_order_acq_rel) + add == last - first) {
            atomic_store_explicit((_Atomic uint32_t *)&ch->sync[ch->nchunks + c], 1,
                                  memory_order_release);
            if (ch->ready)
                ch->ready(ch->ctx);
        }
        begin = upto;
    }
}

static void run_chunks_body(void *arg) {
    job *j = arg;
    for (;;) {
        uint64_t c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (c >= j->nchunks)
            return;
        uint64_t begin = c * j->chunk;
        uint64_t end = begin + j->chunk < j->nblocks ? begin + j->chunk : j->nblocks;
        j->fn(j->l, j->first + begin, j->first + end, j->params);
        if (j->ch)
            count_blocks(j->ch, j->nblocks, begin, end);
    }
}

/* Run chunks until none is left, with faults caught: a fault ends the launch (no chunk is
 * started after it, as a GPU stops a faulting grid) and the first one is kept for the caller. */
static void run_chunks(pg__host_pool *p, job *j) {
    pg__host_fault f;
    if (pg__host_fault_catch(run_chunks_body, j, &f) == 0)
        return;
    atomic_store_explicit(&j->next, j->nchunks, memory_order_relaxed);
    if (p)
        pthread_mutex_lock(&p->mu);
    if (!j->faulted) {
        j->faulted = 1;
        j->fault = f;
    }
    if (p)
        pthread_mutex_unlock(&p->mu);
}

static void unlink_job(pg__host_pool *p, job *j) {
    if (!j->linked)
        return;
    if (j->prev)
        j->prev->next_job = j->next_job;
    else
        p->head = j->next_job;
    if (j->next_job)
        j->next_job->prev = j->prev;
    else
        p->tail = j->prev;
    j->prev = j->next_job = NULL;
    j->linked = 0;
}

/* With the mutex held: the first job with chunks left; exhausted ones are dropped. */
static job *take_job(pg__host_pool *p) {
    while (p->head) {
        job *j = p->head;
        if (atomic_load_explicit(&j->next, memory_order_relaxed) < j->nchunks)
            return j;
        unlink_job(p, j);
    }
    return NULL;
}

static void *helper_main(void *arg) {
    pg__host_pool *p = arg;
    pg__host_fault_thread_begin();
    pthread_mutex_lock(&p->mu);
    for (;;) {
        job *j = take_job(p);
        if (!j) {
            if (p->stop)
                break;
            pthread_cond_wait(&p->work, &p->mu);
            continue;
        }
        j->helpers++;
        pthread_mutex_unlock(&p->mu);
        run_chunks(p, j);
        pthread_mutex_lock(&p->mu);
        unlink_job(p, j);
        if (--j->helpers == 0)
            pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    pg__host_fault_thread_end();
    return NULL;
}

int pg__host_pool_run(pg__host_pool *p, pg__cpu_entry fn, const pg__cpu_launch *l, void **params,
                      uint64_t first, uint64_t nblocks, const pg__host_chunks *ch,
                      pg__host_fault *fault) {
    if (nblocks == 0)
        return 0;
    job j = {.fn = fn, .l = l, .params = params, .ch = ch, .first = first, .nblocks = nblocks};
    if (!p || p->nthreads == 0 || nblocks == 1) {
        j.chunk = nblocks; /* one chunk: every block on the caller */
        j.nchunks = 1;
        atomic_init(&j.next, 0);
        run_chunks(NULL, &j);
        if (j.faulted)
            *fault = j.fault;
        return j.faulted ? -1 : 0;
    }
    uint64_t want = (uint64_t)(p->nthreads + 1) * CHUNKS_PER_THREAD;
    j.chunk = nblocks / want ? nblocks / want : 1;
    j.nchunks = (nblocks + j.chunk - 1) / j.chunk;
    atomic_init(&j.next, 0);
    pthread_mutex_lock(&p->mu);
    j.linked = 1;
    j.prev = p->tail;
    if (p->tail)
        p->tail->next_job = &j;
    else
        p->head = &j;
    p->tail = &j;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);

    run_chunks(p, &j);

    pthread_mutex_lock(&p->mu);
    unlink_job(p, &j);
    while (j.helpers > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    if (j.faulted)
        *fault = j.fault;
    return j.faulted ? -1 : 0;
}

static void stop_and_join(pg__host_pool *p, int started) {
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < started; i++)
        pthread_join(p->threads[i], NULL);
}

static void destroy(pg__host_pool *p) {
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    pg__free(p->threads);
    pg__free(p);
}

pg_status pg__host_pool_new(int nthreads, pg__host_pool **out) {
    pg__host_pool *p = pg__calloc(1, sizeof *p);
    if (!p || (nthreads > 0 && !(p->threads = pg__calloc((size_t)nthreads, sizeof *p->threads)))) {
        pg__free(p);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for a CPU device's threads");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* Kernel code runs here: give it a main thread's stack whatever RLIMIT_STACK says. */
    pthread_attr_setstacksize(&attr, (size_t)8 << 20);
    int started = 0, err = 0;
    for (; started < nthreads; started++) {
        if ((err = pthread_create(&p->threads[started], &attr, helper_main, p)))
            break;
        p->nthreads++;
    }
    pthread_attr_destroy(&attr);
    if (err) {
        stop_and_join(p, started);
        destroy(p);
        return pg__error(PG_ERROR_DEVICE,
                         "could not start CPU device thread %d of %d (error %d): lower "
                         "PG_HOST_THREADS or the number of host devices",
                         started + 1, nthreads, err);
    }
    *out = p;
    return PG_OK;
}

void pg__host_pool_free(pg__host_pool *p) {
    if (!p)
        return;
    stop_and_join(p, p->nthreads);
    destroy(p);
}

/* wait.c: waits that end. A thread's waits observe its deadline (pg_runtime_sync_timeout, a
 * close with a time limit) and the binding's interrupt check (Ctrl-C, Thread.interrupt()),
 * polled between slices of the wait; with neither, a wait blocks plainly and costs nothing
 * more. Every function here is entered with rt->mu held and drops it while waiting. */
#include "core/waits.h"
#include "core/comp.h"
#include "core/handle.h"
#include "core/util.h"

#include <errno.h>
#include <sched.h>
#include <time.h>

#define SLICE_NS UINT64_C(50000000) /* how often the interrupt check is asked */

static pthread_mutex_t check_mu = PTHREAD_MUTEX_INITIALIZER;
static pg_interrupt_check check_fn;
static void *check_ctx;
static _Thread_local uint64_t deadline_ns; /* pg__now_ns() time; 0 = none */

void pg_set_interrupt_check(pg_interrupt_check check, void *ctx) {
    pthread_mutex_lock(&check_mu);
    check_fn = check;
    check_ctx = ctx;
    pthread_mutex_unlock(&check_mu);
}

uint64_t pg__wait_deadline_push(uint64_t timeout_ns) {
    uint64_t old = deadline_ns, now = pg__now_ns();
    if (timeout_ns < UINT64_MAX - now && (!old || now + timeout_ns < old))
        deadline_ns = now + timeout_ns;
    return old;
}

void pg__wait_deadline_pop(uint64_t old) {
    deadline_ns = old;
}

/* 1: interrupted; 0: go on; -1: this thread cannot be interrupted. */
static int ask(void) {
    pthread_mutex_lock(&check_mu);
    pg_interrupt_check fn = check_fn;
    void *ctx = check_ctx;
    pthread_mutex_unlock(&check_mu);
    return fn ? fn(ctx) : -1;
}

/* One wait's view of its limits: how long the next slice may be (UINT64_MAX: no limit at all,
 * block plainly), or an error status when the wait must end now. */
typedef struct limits {
    int interruptible;
} limits;

static pg_status start(limits *l) {
    int r = ask();
    if (r == 1)
        return pg__error(PG_ERROR_INTERRUPTED, "interrupted while waiting (the work goes on)");
    l->interruptible = r == 0;
    return PG_OK;
}

static pg_status next_slice(limits *l, uint64_t *slice) {
    uint64_t d = deadline_ns;
    if (!d && !l->interruptible) {
        *slice = UINT64_MAX;
        return PG_OK;
    }
    uint64_t now = pg__now_ns();
    if (d && now >= d)
        return pg__error(PG_ERROR_TIMEOUT,
                         "the wait ran past its time limit; the work goes on (nothing was "
                         "cancelled)");
    *slice = l->interruptible ? SLICE_NS : UINT64_MAX;
    if (d && d - now < *slice)
        *slice = d - now;
    return PG_OK;
}

static pg_status after_slice(limits *l) {
    if (l->interruptible) {
        int r = ask();
        if (r == 1)
            return pg__error(PG_ERROR_INTERRUPTED, "interrupted while waiting (the work goes on)");
        l->interruptible = r == 0;
    }
    return PG_OK;
}

pg_status pg__wait_event(pg__runtime *rt, pg__bevent *e) {
    uint64_t t0 = pg__now_ns();
    pg__unlock(rt);
    limits l = {0};
    pg_status st = start(&l);
    while (!st) {
        uint64_t slice = UINT64_MAX;
        if ((st = next_slice(&l, &slice)))
            break;
        if (slice == UINT64_MAX || !rt->ops->event_wait_for) {
            st = rt->ops->event_wait(rt->b, e);
            break;
        }
        st = rt->ops->event_wait_for(rt->b, e, slice);
        if (st != PG_ERROR_TIMEOUT)
            break;
        pg__error_clear(); /* a slice ran out, as expected: wait again, or end in after_slice */
        st = after_slice(&l);
    }
    pg__lock(rt);
    rt->stats.host_wait_ns += pg__now_ns() - t0;
    return st;
}

pg_status pg__wait_cond(pg__runtime *rt) {
    /* The check is asked only after a slice timed out, with the lock dropped (it may take a
     * binding's own lock, the GIL); the caller re-tests its condition after every return, so
     * a wake-up in between is never lost. */
    uint64_t t0 = pg__now_ns(), d = deadline_ns;
    pthread_mutex_lock(&check_mu);
    int may_interrupt = check_fn != NULL;
    pthread_mutex_unlock(&check_mu);
    pg_status st = PG_OK;
    if (!d && !may_interrupt) {
        pg__cond_wait(rt);
    } else if (d && t0 >= d) {
        st = pg__error(PG_ERROR_TIMEOUT, "the wait ran past its time limit; the work goes on "
                                         "(nothing was cancelled)");
    } else {
        uint64_t slice = may_interrupt ? SLICE_NS : UINT64_MAX;
        if (d && d - t0 < slice)
            slice = d - t0;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + slice;
        ts.tv_sec += (time_t)(ns / 1000000000u);
        ts.tv_nsec = (long)(ns % 1000000000u);
        if (pg__cond_wait_until(rt, &ts) && may_interrupt) {
            pg__unlock(rt);
            if (ask() == 1)
                st =
                    pg__error(PG_ERROR_INTERRUPTED, "interrupted while waiting (the work goes on)");
            pg__lock(rt);
        }
    }
    rt->stats.host_wait_ns += pg__now_ns() - t0;
    return st;
}

pg_status pg__wait_poll(pg__runtime *rt, pg_status (*poll)(void *ctx, int *done), void *ctx) {
    uint64_t t0 = pg__now_ns();
    pg__unlock(rt);
    limits l = {0};
    pg_status st = start(&l);
    uint64_t checked = t0;
    for (unsigned spins = 0; !st; spins++) {
        int done = 0;
        if ((st = poll(ctx, &done)) || done)
            break;
        uint64_t now = pg__now_ns(), slice = UINT64_MAX;
        if ((deadline_ns || l.interruptible) && now - checked >= SLICE_NS / 5) {
            checked = now;
            if ((st = next_slice(&l, &slice)) || (st = after_slice(&l)))
                break;
        }
        /* A message is usually microseconds away: yield first, then sleep briefly, so a long
         * wait (a sender still computing) does not take a core from the workers. */
        if (spins < 2000)
            sched_yield();
        else
            nanosleep(&(struct timespec){0, 50000}, NULL);
    }
    pg__lock(rt);
    rt->stats.host_wait_ns += pg__now_ns() - t0;
    return st;
}

/* ---- waiting for computations (moved from core/exec.c so that every module below the
 * execution context can wait without calling up into it) */

/* A host access may be held by several threads (one's access shares another's mapping that
 * covers it), and outlive the thread that opened it: waiting for it is a deadlock when this
 * thread is one of its holders, whoever opened it. */
void pg__wait_hold(pg__comp *c) {
    for (int i = 0; i < c->nholders; i++)
        if (pthread_equal(c->holder[i].thread, pthread_self())) {
            c->holder[i].holds++;
            return;
        }
    if (c->nholders == PG__HOLDERS)
        c->holders_lost = 1;
    else
        c->holder[c->nholders++] = (pg__holder){pthread_self(), 1};
}

void pg__wait_unhold(pg__comp *c) {
    for (int i = 0; i < c->nholders; i++)
        if (pthread_equal(c->holder[i].thread, pthread_self())) {
            if (--c->holder[i].holds == 0)
                c->holder[i] = c->holder[--c->nholders];
            return;
        }
    c->holders_lost = 1; /* ended by a thread that did not open it: holders unknown */
}

int pg__wait_held_by_self(const pg__comp *c) {
    for (int i = 0; !c->holders_lost && i < c->nholders; i++)
        if (pthread_equal(c->holder[i].thread, pthread_self()))
            return 1;
    return 0;
}

/* Would waiting for c wait for a host access this thread itself holds open? */
pg__comp *pg__wait_self_blocker(pg__comp *c) {
    pg__comp *b = c->state == PG__OPEN ? c : c->state == PG__PENDING ? c->blocker : NULL;
    return b && b->state == PG__OPEN && pg__wait_held_by_self(b) ? b : NULL;
}

pg_status pg__wait_deadlock_error(pg__comp *b) {
    return pg__error(PG_ERROR_STATE,
                     "this would wait for array %llu, which this thread has mapped or is "
                     "accessing: unmap it (release the view) first",
                     b->nargs ? (unsigned long long)b->args[0].array->id : 0ULL);
}

static pg_status closing_error(void) {
    return pg__error(PG_ERROR_STATE, "the runtime was closed by another thread during this call");
}

/* Wait for another thread's host access to end or held-back work to be issued (rt->cond);
 * gives up when another thread closes the runtime. */
pg_status pg__wait_host(pg__runtime *rt) {
    if (pg__closing_other(rt))
        return closing_error();
    if (__builtin_expect(rt->ranks != NULL, 0)) /* transfers of ranks end by progress here */
        return rt->hooks->ranks_wait(rt);
    return pg__wait_cond(rt);
}

pg_status pg__wait_comp(pg__runtime *rt, pg__comp *c) {
    pg_status st = PG_OK;
    pg__comp_ref(c);
    while (!st && !pg__comp_done(rt, c)) {
        pg__comp *b = pg__wait_self_blocker(c);
        if (b)
            st = pg__wait_deadlock_error(b);
        else if (c->state == PG__ISSUED)
            st = pg__wait_event(rt, c->event);
        else
            st = pg__wait_host(rt);
    }
    pg__comp_unref(rt, c);
    return st;
}

/* Wait until c, held back behind a host access, is issued: only then does the coherence
 * state show where c leaves its results. */
pg_status pg__wait_issued(pg__runtime *rt, pg__comp *c) {
    pg_status st = PG_OK;
    pg__comp_ref(c);
    while (!st && c->state == PG__PENDING) {
        pg__comp *b = pg__wait_self_blocker(c);
        st = b ? pg__wait_deadlock_error(b) : pg__wait_host(rt);
    }
    pg__comp_unref(rt, c);
    return st;
}

/* sim_engine.c: queues, resources, engines and the clock of the simulated devices (rules in
 * sim_engine.h). A small discrete-event loop: the next event is the earliest end of a latency or
 * of a transfer at the current rates, or the not-before time of a waiting operation; at each
 * event operations end, waiting ones start (those waiting for an engine in the order they became
 * ready), and the rates of everything running are recomputed. */
#include "devices/sim/sim_engine.h"
#include "base/alloc.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { WAITING, DELAY, FLOW, DONE };

struct pg__sim_op {
    int refs;
    int state;
    double start, end;
    double delay;     /* the latency to spend first (ns) */
    double delay_end; /* when it ends (DELAY) */
    double work;      /* units left (FLOW) */
    double rate;      /* units per ns, from the last recompute */
    double proj_end;  /* when it ends at that rate */
    double max_rate;  /* 0: none */
    double not_before;
    uint64_t ready_seq; /* when it first could have started but for an engine (0: not yet) */
    int nres, res[PG__SIM_OP_RES];
    double use[PG__SIM_OP_RES];
    int nengines, engine[PG__SIM_OP_ENGINES];
    int ndeps;
    pg__sim_op **deps; /* references, dropped when it starts */
    pg__sim_op *next;  /* in its queue while unfinished */
    pg__sim_queue *q;  /* NULL once done or dropped */
    int frozen;        /* scratch of recompute */
    int failed_dev;
    char *failure;
    pg__sim_engine *eng;
    pg__sim_op *lprev, *lnext; /* every live operation, freed at the latest with the engine */
};

struct pg__sim_queue {
    pg__sim_op *head, *tail; /* unfinished operations in order, a reference each */
    pg__sim_op *last;        /* a reference: what an event recorded now marks */
};

struct pg__sim_engine {
    double now;
    int nres;
    double *cap, *left; /* capacities; scratch of recompute */
    double *wsum;       /* scratch of recompute: weights of the unfixed users */
    int *users;         /* scratch of recompute */
    int nengines;
    pg__sim_op **held; /* per engine: the operation holding it, or NULL */
    uint64_t ready_counter;
    pg__sim_queue **queues;
    int nqueues, qcap;
    pg__sim_op **running; /* in DELAY or FLOW, in the order they started (no references) */
    int nrunning, rcap;
    int nunfinished; /* operations in queues: running never holds more */
    /* Live operations: a reference the core never gave back (a timing it dropped on a failed
     * issue) is freed with the engine, at close, when nothing can use it any more. */
    pg__sim_op *live;
};

static int grow(void **arr, int *cap, int need, size_t elem) {
    if (need <= *cap)
        return 0;
    int n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = pg__realloc(*arr, (size_t)n * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

pg__sim_engine *pg__sim_engine_new(int nres, const double *capacity, int nengines) {
    pg__sim_engine *e = pg__calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->nres = nres;
    e->nengines = nengines > 0 ? nengines : 0;
    size_t n = nres > 0 ? (size_t)nres : 1;
    e->cap = pg__calloc(n, sizeof *e->cap);
    e->left = pg__calloc(n, sizeof *e->left);
    e->wsum = pg__calloc(n, sizeof *e->wsum);
    e->users = pg__calloc(n, sizeof *e->users);
    e->held = pg__calloc(e->nengines ? (size_t)e->nengines : 1, sizeof *e->held);
    if (!e->cap || !e->left || !e->wsum || !e->users || !e->held) {
        pg__sim_engine_free(e);
        return NULL;
    }
    for (int r = 0; r < nres; r++)
        e->cap[r] = capacity[r];
    return e;
}

void pg__sim_engine_free(pg__sim_engine *e) {
    if (!e)
        return;
    while (e->nqueues)
        pg__sim_queue_free(e, e->queues[e->nqueues - 1]);
    while (e->live) {
        pg__sim_op *op = e->live;
        e->live = op->lnext;
        pg__free(op->deps); /* the operations they name are in this list too */
        pg__free(op->failure);
        pg__free(op);
    }
    pg__free(e->queues);
    pg__free(e->running);
    pg__free(e->cap);
    pg__free(e->left);
    pg__free(e->wsum);
    pg__free(e->users);
    pg__free(e->held);
    pg__free(e);
}

double pg__sim_now(const pg__sim_engine *e) {
    return e->now;
}

void pg__sim_op_ref(pg__sim_op *op) {
    op->refs++;
}

static void drop_deps(pg__sim_op *op) {
    for (int i = 0; i < op->ndeps; i++)
        pg__sim_op_unref(op->deps[i]);
    pg__free(op->deps);
    op->deps = NULL;
    op->ndeps = 0;
}

void pg__sim_op_unref(pg__sim_op *op) {
    if (!op || --op->refs > 0)
        return;
    if (op->lprev)
        op->lprev->lnext = op->lnext;
    else
        op->eng->live = op->lnext;
    if (op->lnext)
        op->lnext->lprev = op->lprev;
    drop_deps(op);
    pg__free(op->failure);
    pg__free(op);
}

int pg__sim_op_done(const pg__sim_op *op) {
    return op->state == DONE;
}

void pg__sim_op_times(const pg__sim_op *op, double *start, double *end) {
    *start = op->start;
    *end = op->end;
}

void pg__sim_op_fail(pg__sim_op *op, int dev, const char *why) {
    if (op->failure)
        return; /* the first cause stays */
    op->failure = pg__strdup(why && why[0] ? why : "failed");
    op->failed_dev = dev;
}

const char *pg__sim_op_failure(const pg__sim_op *op, int *dev) {
    if (op->failure && dev)
        *dev = op->failed_dev;
    return op->failure;
}

static void running_remove(pg__sim_engine *e, pg__sim_op *op) {
    for (int i = 0; i < e->nrunning; i++) {
        if (e->running[i] == op) {
            /* Order kept: it decides nothing, but keeps runs identical step by step. */
            memmove(&e->running[i], &e->running[i + 1],
                    (size_t)(e->nrunning - i - 1) * sizeof e->running[0]);
            e->nrunning--;
            return;
        }
    }
}

/* Always fits: running was grown when the operation was enqueued. */
static void running_add(pg__sim_engine *e, pg__sim_op *op) {
    e->running[e->nrunning++] = op;
}

static void release_engines(pg__sim_engine *e, pg__sim_op *op) {
    for (int k = 0; k < op->nengines; k++)
        if (e->held[op->engine[k]] == op)
            e->held[op->engine[k]] = NULL;
}

/* op (its queue's head) ends now: off the queue, whose reference goes. */
static void complete(pg__sim_engine *e, pg__sim_op *op) {
    running_remove(e, op);
    release_engines(e, op);
    op->state = DONE;
    op->end = e->now;
    pg__sim_queue *q = op->q;
    q->head = op->next;
    if (!q->head)
        q->tail = NULL;
    op->next = NULL;
    op->q = NULL;
    e->nunfinished--;
    pg__sim_op_unref(op);
}

static void begin_flow(pg__sim_engine *e, pg__sim_op *op) {
    if (op->nres == 0 || !(op->work > 0)) {
        complete(e, op);
        return;
    }
    if (op->state != DELAY)
        running_add(e, op);
    op->state = FLOW;
    op->proj_end = INFINITY; /* until recompute gives it a rate */
}

static void start(pg__sim_engine *e, pg__sim_op *op) {
    drop_deps(op); /* all done: nothing more to learn from them */
    for (int k = 0; k < op->nengines; k++)
        e->held[op->engine[k]] = op;
    op->start = e->now;
    if (op->delay > 0) {
        op->state = DELAY;
        op->delay_end = e->now + op->delay;
        running_add(e, op);
        return;
    }
    begin_flow(e, op);
}

static int deps_done(const pg__sim_op *op) {
    for (int i = 0; i < op->ndeps; i++)
        if (op->deps[i]->state != DONE)
            return 0;
    return 1;
}

static double eps_at(double now) {
    return 1e-12 * fabs(now) + 1e-6; /* well below a nanosecond */
}

static int engines_free(const pg__sim_engine *e, const pg__sim_op *op) {
    for (int k = 0; k < op->nengines; k++)
        if (e->held[op->engine[k]])
            return 0;
    return 1;
}

/* Start every queue head that may start, one at a time: among the heads whose dependencies are
 * done and whose not-before time has come, the one that became ready first (engines are served
 * in that order); an operation that ends at once may free the next of its queue. */
static void start_ready(pg__sim_engine *e) {
    double eps = eps_at(e->now);
    for (;;) {
        pg__sim_op *best = NULL;
        for (int i = 0; i < e->nqueues; i++) {
            pg__sim_op *h = e->queues[i]->head;
            if (!h || h->state != WAITING || h->not_before > e->now + eps || !deps_done(h))
                continue;
            if (!h->ready_seq)
                h->ready_seq = ++e->ready_counter;
            if (engines_free(e, h) && (!best || h->ready_seq < best->ready_seq))
                best = h;
        }
        if (!best)
            return;
        start(e, best);
    }
}

/* Max-min fair rates by weighted progressive filling: the level (a rate) at which the capacity
 * left of a resource is used up by the operations still unfixed on it, each taking use * level,
 * is smallest for the bottleneck resource, whose unfixed operations are fixed at that level
 * (or an operation's own max_rate, when lower); repeat. */
static void recompute(pg__sim_engine *e) {
    for (int r = 0; r < e->nres; r++) {
        e->left[r] = e->cap[r];
        e->wsum[r] = 0;
        e->users[r] = 0;
    }
    int unfixed = 0;
    for (int i = 0; i < e->nrunning; i++) {
        pg__sim_op *f = e->running[i];
        if (f->state != FLOW)
            continue;
        f->frozen = 0;
        unfixed++;
        for (int k = 0; k < f->nres; k++) {
            e->users[f->res[k]]++;
            e->wsum[f->res[k]] += f->use[k];
        }
    }
    while (unfixed > 0) {
        int best = -1;
        double level = INFINITY;
        for (int r = 0; r < e->nres; r++) {
            if (e->users[r] > 0 && e->wsum[r] > 0 && e->left[r] / e->wsum[r] < level) {
                level = e->left[r] / e->wsum[r];
                best = r;
            }
        }
        for (int i = 0; i < e->nrunning; i++) {
            const pg__sim_op *f = e->running[i];
            if (f->state == FLOW && !f->frozen && f->max_rate > 0 && f->max_rate < level) {
                level = f->max_rate;
                best = -1;
            }
        }
        if (level == INFINITY)
            break; /* not reached: every operation that works has a resource or a limit */
        /* Rounding may leave a hair below zero: never a rate that stops a transfer. */
        if (best >= 0 && level < e->cap[best] * 1e-12 / e->wsum[best])
            level = e->cap[best] * 1e-12 / e->wsum[best];
        for (int i = 0; i < e->nrunning; i++) {
            pg__sim_op *f = e->running[i];
            if (f->state != FLOW || f->frozen)
                continue;
            int fix = best < 0 && f->max_rate > 0 && f->max_rate <= level;
            for (int k = 0; k < f->nres && !fix; k++)
                fix = f->res[k] == best;
            if (!fix)
                continue;
            f->rate = level;
            f->frozen = 1;
            unfixed--;
            for (int k = 0; k < f->nres; k++) {
                e->left[f->res[k]] -= f->use[k] * level;
                e->wsum[f->res[k]] -= f->use[k];
                e->users[f->res[k]]--;
            }
        }
    }
    for (int i = 0; i < e->nrunning; i++) {
        pg__sim_op *f = e->running[i];
        if (f->state == FLOW)
            f->proj_end = e->now + f->work / f->rate;
    }
}

static double next_event(const pg__sim_engine *e) {
    double t = INFINITY;
    for (int i = 0; i < e->nrunning; i++) {
        const pg__sim_op *r = e->running[i];
        double x = r->state == DELAY ? r->delay_end : r->proj_end;
        t = x < t ? x : t;
    }
    /* A head held back by its not-before time starts then (if nothing else holds it). */
    for (int i = 0; i < e->nqueues; i++) {
        const pg__sim_op *h = e->queues[i]->head;
        if (h && h->state == WAITING && h->not_before > e->now && h->not_before < t && deps_done(h))
            t = h->not_before;
    }
    return t;
}

static void progress(pg__sim_engine *e, double t) {
    if (!(t > e->now))
        return;
    double dt = t - e->now;
    for (int i = 0; i < e->nrunning; i++) {
        pg__sim_op *f = e->running[i];
        if (f->state == FLOW) {
            f->work -= f->rate * dt;
            if (f->work < 0)
                f->work = 0;
        }
    }
    e->now = t;
}

/* What is due at the clock's time happens: latencies end, transfers end, waiting work starts. */
static void transitions(pg__sim_engine *e) {
    double eps = eps_at(e->now);
    for (;;) {
        pg__sim_op *due = NULL;
        for (int i = 0; i < e->nrunning && !due; i++) {
            pg__sim_op *r = e->running[i];
            if ((r->state == DELAY ? r->delay_end : r->proj_end) <= e->now + eps)
                due = r;
        }
        if (!due)
            break;
        if (due->state == DELAY) {
            begin_flow(e, due);
        } else {
            due->work = 0;
            complete(e, due);
        }
    }
    start_ready(e);
    recompute(e);
}

void pg__sim_advance_to(pg__sim_engine *e, double t) {
    for (;;) {
        double tn = next_event(e);
        if (tn > t)
            break;
        progress(e, tn);
        transitions(e);
    }
    progress(e, t);
}

int pg__sim_run_until(pg__sim_engine *e, pg__sim_op *op, double limit) {
    while (op->state != DONE) {
        double tn = next_event(e);
        if (tn == INFINITY || tn > limit) {
            /* Nothing left to run that could finish it (it waits on dropped work), or not
             * before the limit. */
            if (limit != INFINITY)
                progress(e, limit);
            return op->state == DONE;
        }
        progress(e, tn);
        transitions(e);
    }
    return 1;
}

pg__sim_queue *pg__sim_queue_new(pg__sim_engine *e) {
    if (grow((void **)&e->queues, &e->qcap, e->nqueues + 1, sizeof e->queues[0]))
        return NULL;
    pg__sim_queue *q = pg__calloc(1, sizeof *q);
    if (!q)
        return NULL;
    e->queues[e->nqueues++] = q;
    return q;
}

void pg__sim_queue_free(pg__sim_engine *e, pg__sim_queue *q) {
    if (!q)
        return;
    for (int i = 0; i < e->nqueues; i++) {
        if (e->queues[i] == q) {
            memmove(&e->queues[i], &e->queues[i + 1],
                    (size_t)(e->nqueues - i - 1) * sizeof e->queues[0]);
            e->nqueues--;
            break;
        }
    }
    int had_running = 0;
    while (q->head) {
        pg__sim_op *op = q->head;
        q->head = op->next;
        if (op->state == DELAY || op->state == FLOW) {
            running_remove(e, op);
            release_engines(e, op);
            had_running = 1;
        }
        op->next = NULL;
        op->q = NULL;
        e->nunfinished--;
        pg__sim_op_unref(op);
    }
    pg__sim_op_unref(q->last);
    pg__free(q);
    if (had_running) {
        start_ready(e); /* an engine it held may serve another */
        recompute(e);
    }
}

pg__sim_op *pg__sim_queue_last(const pg__sim_queue *q) {
    return q->last;
}

pg__sim_op *pg__sim_enqueue(pg__sim_engine *e, pg__sim_queue *q, const pg__sim_work *w,
                            pg__sim_op *const *deps, int ndeps) {
    static const pg__sim_work marker;
    if (!w)
        w = &marker;
    int nres = w->nres < PG__SIM_OP_RES ? w->nres : PG__SIM_OP_RES;
    /* Room to run it: every unfinished operation may be running at once at worst. */
    if (grow((void **)&e->running, &e->rcap, e->nunfinished + 1, sizeof e->running[0]))
        return NULL;
    pg__sim_op *op = pg__calloc(1, sizeof *op);
    if (!op)
        return NULL;
    int pending = 0;
    for (int i = 0; i < ndeps; i++)
        pending += deps[i] && deps[i]->state != DONE;
    if (pending && !(op->deps = pg__calloc((size_t)pending, sizeof *op->deps))) {
        pg__free(op);
        return NULL;
    }
    for (int i = 0; i < ndeps; i++) {
        if (deps[i] && deps[i]->state != DONE) {
            pg__sim_op_ref(deps[i]);
            op->deps[op->ndeps++] = deps[i];
        }
    }
    op->refs = 3; /* the caller's, the queue's, q->last's */
    op->eng = e;
    op->lnext = e->live;
    if (e->live)
        e->live->lprev = op;
    e->live = op;
    op->state = WAITING;
    op->delay = w->delay > 0 ? w->delay : 0;
    op->work = w->work > 0 ? w->work : 0;
    op->max_rate = w->max_rate > 0 ? w->max_rate : 0;
    op->not_before = w->not_before;
    op->nres = nres;
    for (int i = 0; i < nres; i++) {
        op->res[i] = w->res[i];
        op->use[i] = w->use[i] > 0 ? w->use[i] : 1.0;
    }
    for (int i = 0; i < w->nengines && i < PG__SIM_OP_ENGINES; i++)
        if (w->engine[i] >= 0 && w->engine[i] < e->nengines)
            op->engine[op->nengines++] = w->engine[i];
    op->q = q;
    e->nunfinished++;
    if (q->tail)
        q->tail->next = op;
    else
        q->head = op;
    q->tail = op;
    pg__sim_op_unref(q->last);
    q->last = op;
    if (q->head == op && deps_done(op)) {
        start_ready(e);
        recompute(e);
    }
    return op;
}

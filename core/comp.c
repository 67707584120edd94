/* comp.c: computation objects — creation, reference counting, observing completion, and
 * failure: a computation fails when its own work failed (the backend says so once it is done)
 * or when one of its inputs came from a failed computation; failures travel with the data, not
 * along every edge, so a writer that only had to wait for a failed reader is unaffected. */
#include "core/comp.h"
#include "core/array.h"
#include "core/phases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failure whose message could not be allocated still counts. */
static char no_memory_msg[] = "a computation failed (out of host memory for the details)";

static void free_err(pg__comp *c) {
    if (c->err != no_memory_msg)
        pg__free(c->err);
    c->err = NULL;
}

void pg__comp_fail(pg__comp *c, const char *msg) {
    if (c->err)
        return;
    c->err = pg__strdup(msg);
    if (!c->err)
        c->err = no_memory_msg;
}

/* Enough to cover the computations in flight in a steady stream of launches. */
#define POOL_MAX 1024

pg__comp *pg__comp_new(pg__runtime *rt, pg__comp_kind kind) {
    pg__comp *c = rt->comp_pool;
    if (c) {
        rt->comp_pool = c->next;
        rt->comp_pool_n--;
        memset(c, 0, sizeof *c);
    } else if (!(c = pg__calloc(1, sizeof *c))) {
        return NULL;
    }
    c->id = ++rt->next_comp_id;
    c->refs = 1;
    c->kind = kind;
    c->state = PG__PENDING;
    c->device = PG_HOST;
    return c;
}

void pg__comp_list_push(pg__comp **head, pg__comp **tail, pg__comp *c) {
    pg__comp_ref(c);
    c->next = NULL;
    if (*tail)
        (*tail)->next = c;
    else
        *head = c;
    *tail = c;
}

/* Drop what only unfinished work needs: arrays, kernel, parents, launch data. */
static void release_work(pg__runtime *rt, pg__comp *c) {
    for (int i = 0; i < c->nargs; i++)
        rt->hooks->array_unref(c->args[i].array);
    if (c->args != c->args_in)
        pg__free(c->args);
    c->args = NULL;
    c->nargs = 0;
    for (int i = 0; i < c->nparents; i++)
        pg__comp_unref(rt, c->parents[i]);
    pg__comp_parents_clear(c);
    for (int i = 0; i < c->ninputs; i++)
        pg__comp_unref(rt, c->inputs[i]);
    if (c->inputs != c->inputs_in)
        pg__free(c->inputs);
    c->inputs = NULL;
    c->ninputs = c->capinputs = 0;
    if (c->kernel)
        rt->hooks->kernel_unref(c->kernel);
    c->kernel = NULL;
    if (c->slots != c->slots_in)
        pg__free(c->slots);
    if (c->slot_arg != c->slot_arg_in)
        pg__free(c->slot_arg);
    pg__free(c->slot_shift);
    c->slot_shift = NULL;
    c->block_first = c->block_count = 0;
    c->slots = NULL;
    c->slot_arg = NULL;
}

void pg__comp_unref(pg__runtime *rt, pg__comp *c) {
    if (!c || --c->refs > 0)
        return;
    release_work(rt, c);
    rt->hooks->chunks_free(rt, c); /* the copies waiting on its flags held references: all done */
    free_err(c);
    if (c->timed)
        rt->ops->timing_release(rt->b, &c->timing);
    if (c->event)
        rt->ops->event_free(rt->b, c->event);
    if (rt->comp_pool_n < POOL_MAX) {
        c->next = rt->comp_pool;
        rt->comp_pool = c;
        rt->comp_pool_n++;
    } else {
        pg__free(c);
    }
}

/* Room in c for the arguments, slots and slot map of a launch with n parameters: inside the
 * computation up to PG__INLINE (no allocation on the hot path), else on the heap. */
pg_status pg__comp_storage(pg__comp *c, int n) {
    if (n + 1 <= PG__INLINE) { /* zeroed with the computation */
        c->slots = c->slots_in;
        c->slot_arg = c->slot_arg_in;
        c->args = c->args_in;
    } else {
        c->slots = pg__calloc((size_t)n + 1, sizeof *c->slots);
        c->slot_arg = pg__calloc((size_t)n + 1, sizeof *c->slot_arg);
        c->args = pg__calloc((size_t)n + 1, sizeof *c->args);
    }
    if (!c->slots || !c->slot_arg || !c->args)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    return PG_OK;
}

pg__comp *pg__comp_clone(pg__runtime *rt, const pg__comp *rec) {
    pg__comp *c = pg__comp_new(rt, PG__KERNEL);
    if (!c)
        return NULL;
    int n = rec->nslots;
    int nv = rec->kernel->is_task ? 2 * n : n; /* a task's element counts follow its slots */
    if (pg__comp_storage(c, nv)) {
        pg__comp_unref(rt, c);
        return NULL;
    }
    c->nslots = n;
    memcpy(c->slots, rec->slots, (size_t)nv * sizeof *c->slots);
    memcpy(c->slot_arg, rec->slot_arg, (size_t)n * sizeof *c->slot_arg);
    c->nargs = rec->nargs;
    for (int i = 0; i < rec->nargs; i++) {
        c->args[i] = rec->args[i];
        pg__array_ref(c->args[i].array);
    }
    c->kernel = rec->kernel;
    c->kernel->refs++;
    c->grid = rec->grid;
    c->block = rec->block;
    c->shared_mem = rec->shared_mem;
    c->fits = rec->fits;
    c->copy_inputs = rec->copy_inputs;
    c->block_first = rec->block_first;
    c->block_count = rec->block_count;
    if (rec->slot_shift) {
        c->slot_shift = pg__malloc((size_t)n * sizeof *c->slot_shift);
        if (!c->slot_shift) {
            pg__comp_unref(rt, c);
            return NULL;
        }
        memcpy(c->slot_shift, rec->slot_shift, (size_t)n * sizeof *c->slot_shift);
    }
    return c;
}

void pg__comp_parents_clear(pg__comp *c) {
    if (c->parents != c->parents_in)
        pg__free(c->parents);
    c->parents = NULL;
    c->nparents = 0;
}

void pg__comp_pool_free(pg__runtime *rt) {
    while (rt->comp_pool) {
        pg__comp *c = rt->comp_pool;
        rt->comp_pool = c->next;
        pg__free(c);
    }
    rt->comp_pool_n = 0;
}

void pg__comp_set(pg__runtime *rt, pg__comp **slot, pg__comp *c) {
    if (c)
        pg__comp_ref(c);
    pg__comp *old = *slot;
    *slot = c;
    pg__comp_unref(rt, old);
}

static void describe(pg__runtime *rt, const pg__comp *c, const char *what, char *out, size_t cap) {
    char where[48] = "the host";
    if (c->device >= 0 && c->device < rt->ndev)
        snprintf(where, sizeof where, "%s %d",
                 rt->dev[c->device].info.device_class == PG_CLASS_CPU ? "CPU device" : "GPU",
                 c->device);
    unsigned long long id = (unsigned long long)c->id;
    if (c->kind == PG__KERNEL)
        snprintf(out, cap, "%s '%s' (computation #%llu) failed on %s: %s",
                 c->kernel && c->kernel->is_task ? "task" : "kernel",
                 c->kernel ? c->kernel->name : "?", id, where, what);
    else if (c->kind == PG__REPLAY)
        snprintf(out, cap, "a graph replay (computation #%llu) failed on %s: %s", id, where, what);
    else if (c->kind == PG__COPY && c->nargs)
        snprintf(out, cap, "copy of array %llu (computation #%llu) failed: %s",
                 (unsigned long long)c->args[0].array->id, id, what);
    else
        snprintf(out, cap, "computation #%llu on %s failed: %s", id, where, what);
}

/* Issued work is done: did it fail? Its inputs are settled already (observe). */
static void settle(pg__runtime *rt, pg__comp *c) {
    char what[512], full[1024];
    int fdev = -1;
    int own = c->event && rt->ops->event_error &&
              rt->ops->event_error(rt->b, c->event, &fdev, what, sizeof what) != PG_OK;
    if (own)
        describe(rt, c, what, full, sizeof full);
    /* The first cause is the one to report: what this computation read was bad already. */
    for (int i = 0; i < c->ninputs && !c->err; i++)
        if (c->inputs[i]->err)
            pg__comp_fail(c, c->inputs[i]->err);
    if (own && !c->err) {
        pg__comp_fail(c, full);
        if (!rt->failures++)
            rt->first_failure = pg__strdup(full);
    }
    if (own && fdev >= 0 && fdev < rt->ndev)
        rt->hooks->device_failed(rt, fdev, full);
}

pg_status pg__comp_failures_take(pg__runtime *rt) {
    if (!rt->failures)
        return PG_OK;
    pg_status st =
        pg__error(PG_ERROR_DEVICE, "%llu computation%s failed since the last sync; the first: %s",
                  (unsigned long long)rt->failures, rt->failures == 1 ? "" : "s",
                  rt->first_failure ? rt->first_failure : "(out of memory for it)");
    pg__free(rt->first_failure);
    rt->first_failure = NULL;
    rt->failures = 0;
    return st;
}

static void finish(pg__runtime *rt, pg__comp *c) {
    if (c->state == PG__ISSUED)
        settle(rt, c);
    c->state = PG__DONE;
    if (c->timed)
        rt->ops->timing_resolve(rt->b, &c->timing);
    rt->hooks->finished(rt, c); /* the record, the profile, the models, power */
    if (c->timed) {
        rt->ops->timing_release(rt->b, &c->timing);
        c->timed = 0;
    }
    if (c->device >= 0 && rt->dev[c->device].inflight > 0)
        rt->dev[c->device].inflight--;
    rt->hooks->left_device(rt, c); /* its device's queue and load, as the node sees them */
    release_work(rt, c);
}

int pg__comp_known_done(const pg__comp *c) {
    return c->state == PG__DONE ||
           (c->state == PG__ISSUED && c->stream && c->seq <= c->stream->done_seq);
}

/* Issued work that has completed on its device (not yet observed, maybe). */
static int completed(pg__runtime *rt, pg__comp *c) {
    if (c->stream && c->seq <= c->stream->done_seq)
        return 1;
    if (c->event && PG__PHASE_QUERY(rt->ops->event_done(rt->b, c->event))) {
        if (c->stream && c->seq > c->stream->done_seq)
            c->stream->done_seq = c->seq;
        return 1;
    }
    return 0;
}

/* Finish c, which has completed, and first every input of it not yet finished (they completed
 * before it), so that each learns whether its inputs failed. A chain of unobserved work can be
 * long: the walk keeps its path in the computations (fin_next), not on the C stack. */
static void observe(pg__runtime *rt, pg__comp *c) {
    c->visiting = 1;
    c->fin_next = NULL;
    pg__comp *top = c;
    while (top) {
        pg__comp *t = top, *in = NULL;
        for (int i = 0; i < t->ninputs && !in; i++) {
            pg__comp *p = t->inputs[i];
            if (p->state == PG__ISSUED && !p->visiting && completed(rt, p))
                in = p;
        }
        if (in) {
            in->visiting = 1;
            in->fin_next = top;
            top = in;
            continue;
        }
        top = t->fin_next;
        t->visiting = 0;
        finish(rt, t);
    }
}

int pg__comp_done(pg__runtime *rt, pg__comp *c) {
    switch (c->state) {
    case PG__DONE:
        return 1;
    case PG__ISSUED:
        if (!completed(rt, c))
            return 0;
        observe(rt, c);
        return 1;
    case PG__PENDING:
    case PG__OPEN:
        return 0;
    }
    return 0;
}

/* Host accesses end by the core's own hand, not by an event. */
void pg__comp_finish_host(pg__runtime *rt, pg__comp *c) {
    finish(rt, c);
}

/* ---- what finished: the in-flight list, oldest first (moved from core/exec.c: observing
 * completion is this module's job, and every module may ask for it) */

enum { SWEEP_PROBE = 64 };

/* Whether head (issued, on a stream, not known done) has completed, learning with one or two
 * event queries how far its stream has got: a stream runs in order, so one finished event
 * proves every earlier one finished. It asks about the middle one of the next SWEEP_PROBE
 * computations on head's stream (done: the older half with it), else about head. An event
 * query costs a third of a launch on a GPU (1.2-1.6 us on an H100 or H200): one query per
 * finished computation made the sweep a fifth of every launch, and bisecting to the exact
 * point cost eight queries every 16 launches back to back on an H200 (the newest is never done
 * then). Releasing the older half is enough: a sweep comes every 16 submissions, and the
 * computations in flight settle at about twice that. */
static int stream_progress(pg__runtime *rt, pg__comp *head) {
    pg__stream *s = head->stream;
    pg__comp *cand[SWEEP_PROBE];
    int n = 0;
    /* The walk is bounded too: other streams' work may fill the in-flight list. */
    int seen = 0;
    for (pg__comp *c = head; c && n < SWEEP_PROBE && seen < 4 * SWEEP_PROBE; c = c->next, seen++)
        if (c->stream == s && c->state == PG__ISSUED && c->event)
            cand[n++] = c;
    if (!n)
        return 0;
    int k = n / 2;
    if (!PG__PHASE_QUERY(rt->ops->event_done(rt->b, cand[k]->event)) &&
        (k == 0 || !PG__PHASE_QUERY(rt->ops->event_done(rt->b, cand[k = 0]->event))))
        return 0;
    if (cand[k]->seq > s->done_seq)
        s->done_seq = cand[k]->seq;
    return 1;
}

void pg__comp_sweep(pg__runtime *rt, int max) {
    /* A stream is asked about once per sweep: past what that answer settled, its next
     * computation was issued after the one found unfinished, or very recently. */
    pg__stream *asked[8];
    int nasked = 0;
    while (rt->inflight_head && max-- > 0) {
        pg__comp *c = rt->inflight_head;
        if (c->state == PG__ISSUED && c->stream && c->event && c->seq > c->stream->done_seq) {
            int again = 0;
            for (int i = 0; i < nasked && !again; i++)
                again = asked[i] == c->stream;
            if (again || !stream_progress(rt, c))
                break;
            if (nasked < (int)(sizeof asked / sizeof *asked))
                asked[nasked++] = c->stream;
        }
        if (!pg__comp_done(rt, c))
            break;
        rt->inflight_head = c->next;
        if (!rt->inflight_head)
            rt->inflight_tail = NULL;
        c->next = NULL;
        pg__comp_unref(rt, c);
    }
}

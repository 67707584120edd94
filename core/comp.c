/* comp.c: computation objects — creation, reference counting, and observing completion. */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

/* Enough to cover the computations in flight in a steady stream of launches. */
#define POOL_MAX 1024

pg__comp *pg__comp_new(pg__runtime *rt, pg__comp_kind kind) {
    pg__comp *c = rt->comp_pool;
    if (c) {
        rt->comp_pool = c->next;
        rt->comp_pool_n--;
        memset(c, 0, sizeof *c);
    } else if (!(c = calloc(1, sizeof *c))) {
        return NULL;
    }
    c->id = ++rt->next_comp_id;
    c->refs = 1;
    c->kind = kind;
    c->state = PG__PENDING;
    c->device = PG_HOST;
    return c;
}

void pg__comp_ref(pg__comp *c) {
    c->refs++;
}

/* Drop what only unfinished work needs: arrays, kernel, parents, launch data. */
static void release_work(pg__runtime *rt, pg__comp *c) {
    for (int i = 0; i < c->nargs; i++)
        pg__array_unref(c->args[i].array);
    if (c->args != c->args_in)
        free(c->args);
    c->args = NULL;
    c->nargs = 0;
    for (int i = 0; i < c->nparents; i++)
        pg__comp_unref(rt, c->parents[i]);
    pg__comp_parents_clear(c);
    if (c->kernel)
        pg__kernel_unref(c->kernel);
    c->kernel = NULL;
    if (c->slots != c->slots_in)
        free(c->slots);
    if (c->slot_arg != c->slot_arg_in)
        free(c->slot_arg);
    c->slots = NULL;
    c->slot_arg = NULL;
}

void pg__comp_unref(pg__runtime *rt, pg__comp *c) {
    if (!c || --c->refs > 0)
        return;
    release_work(rt, c);
    if (c->timed)
        rt->ops->timing_release(rt->b, &c->timing);
    if (c->event)
        rt->ops->event_free(rt->b, c->event);
    if (rt->comp_pool_n < POOL_MAX) {
        c->next = rt->comp_pool;
        rt->comp_pool = c;
        rt->comp_pool_n++;
    } else {
        free(c);
    }
}

void pg__comp_parents_clear(pg__comp *c) {
    if (c->parents != c->parents_in)
        free(c->parents);
    c->parents = NULL;
    c->nparents = 0;
}

void pg__comp_pool_free(pg__runtime *rt) {
    while (rt->comp_pool) {
        pg__comp *c = rt->comp_pool;
        rt->comp_pool = c->next;
        free(c);
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

static void finish(pg__runtime *rt, pg__comp *c) {
    c->state = PG__DONE;
    if (c->timed) {
        rt->ops->timing_resolve(rt->b, &c->timing);
        pg__dag_record_timing(rt, c);
        rt->ops->timing_release(rt->b, &c->timing);
        c->timed = 0;
    }
    if (c->device >= 0 && rt->dev[c->device].inflight > 0)
        rt->dev[c->device].inflight--;
    release_work(rt, c);
}

int pg__comp_known_done(const pg__comp *c) {
    return c->state == PG__DONE ||
           (c->state == PG__ISSUED && c->stream && c->seq <= c->stream->done_seq);
}

int pg__comp_done(pg__runtime *rt, pg__comp *c) {
    switch (c->state) {
    case PG__DONE:
        return 1;
    case PG__ISSUED:
        if (c->stream && c->seq <= c->stream->done_seq) {
            finish(rt, c);
            return 1;
        }
        if (c->event && rt->ops->event_done(rt->b, c->event)) {
            if (c->stream && c->seq > c->stream->done_seq)
                c->stream->done_seq = c->seq;
            finish(rt, c);
            return 1;
        }
        return 0;
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

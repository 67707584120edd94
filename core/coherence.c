/* coherence.c: which locations hold each array's current value, and the copies that keep it
 * so. State changes when work is scheduled, not when it finishes, so later computations plan
 * against the future state (DESIGN decision 2). */
#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has_buffer(const pg__array *a, int loc) {
    return loc == 0 ? a->host != NULL : a->dev[loc - 1] != NULL;
}

/* The valid location with the fastest link to dst. */
static int best_source(pg__runtime *rt, const pg__array *a, int dst) {
    int best = -1;
    double bw = -1;
    for (int l = 0; l <= rt->ndev; l++) {
        if (l == dst || !(a->valid & PG__LOC_BIT(l)) || !has_buffer(a, l))
            continue;
        double b = pg__interconnect_bw(&rt->ic, l, dst);
        if (b > bw) {
            bw = b;
            best = l;
        }
    }
    return best;
}

/* Room for one more input of c (coherence records what each computation reads from). */
static pg_status reserve_input(pg__comp *c) {
    if (!c->inputs) {
        c->inputs = c->inputs_in;
        c->capinputs = PG__INLINE;
    }
    if (c->ninputs < c->capinputs)
        return PG_OK;
    int cap = 2 * c->capinputs;
    pg__comp **n = pg__malloc((size_t)cap * sizeof *n);
    if (!n)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    memcpy(n, c->inputs, (size_t)c->ninputs * sizeof *n);
    if (c->inputs != c->inputs_in)
        pg__free(c->inputs);
    c->inputs = n;
    c->capinputs = cap;
    return PG_OK;
}

/* c reads what p made (room reserved): a failure of p is one of c. */
static void add_input(pg__comp *c, pg__comp *p) {
    if (!p || p == c)
        return;
    for (int i = 0; i < c->ninputs; i++)
        if (c->inputs[i] == p)
            return;
    pg__comp_ref(p);
    c->inputs[c->ninputs++] = p;
}

static void loc_name(int loc, char *out, size_t cap) {
    if (loc == 0)
        snprintf(out, cap, "host");
    else
        snprintf(out, cap, "%d", loc - 1);
}

/* Issue a copy of a from location src to dst on stream s, as a computation of its own.
 * *out is borrowed. */
static pg_status issue_copy(pg__runtime *rt, pg__array *a, int src, int dst, pg__stream *s,
                            pg__comp **out) {
    void *dbuf, *sbuf;
    pg_status st = pg__array_buffer(a, dst, s, &dbuf);
    if (!st)
        st = pg__array_buffer(a, src, s, &sbuf);
    pg__comp *cc = st ? NULL : pg__comp_new(rt, PG__COPY);
    if (!st && !cc)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (!st)
        cc->args = cc->args_in;
    pg__comp *producer = a->ready[src];
    if (!st && producer)
        cc->parents = cc->parents_in;
    if (st) {
        if (cc)
            pg__comp_unref(rt, cc);
        return st;
    }
    cc->args[0].array = a;
    cc->args[0].access = PG_ACCESS_IN;
    cc->nargs = 1;
    pg__array_ref(a);
    if (producer) {
        pg__comp_ref(producer);
        cc->parents[0] = producer;
        cc->nparents = 1;
        reserve_input(cc); /* inline room: cannot fail */
        add_input(cc, producer);
    }
    cc->copy_src = src;
    cc->copy_dst = dst;
    cc->copy_bytes = a->nbytes;
    cc->device = s->device;
    cc->stream = s;
    char sn[16], dn[16], name[64];
    loc_name(src, sn, sizeof sn);
    loc_name(dst, dn, sizeof dn);
    snprintf(name, sizeof name, "copy a%llu %s->%s", (unsigned long long)a->id, sn, dn);
    if ((st = pg__dag_record(rt, cc, name))) {
        pg__comp_unref(rt, cc);
        return st;
    }
    pg__dag_record_device(rt, cc);
    if (rt->timing)
        cc->timed = 1;
    st = pg__exec_order_after(rt, s, producer);
    if (!st)
        st = rt->ops->copy(rt->b, s->b, dst - 1, dbuf, src - 1, sbuf, a->nbytes,
                           cc->timed ? &cc->timing : NULL);
    int enqueued = !st;
    if (!st)
        st = rt->ops->event_record(rt->b, s->b, &cc->event);
    if (st) {
        if (enqueued) /* a copy with no event to track it: the device is no longer trusted */
            pg__coh_device_failed(rt, s->device, pg_last_error());
        pg__dag_record_drop(rt, cc); /* no copy: the DAG does not show one */
        cc->timed = 0;
        pg__comp_unref(rt, cc);
        return st;
    }
    pg__exec_issued(rt, cc, s);
    rt->stats.computations++;
    rt->stats.copies++;
    rt->stats.link_bytes[src][dst] += a->nbytes;
    rt->stats.bytes_moved += a->nbytes;
    a->valid |= PG__LOC_BIT(dst);
    pg__comp_set(rt, &a->ready[dst], cc);
    pg__log(rt, 2, "%s (%llu bytes)", name, (unsigned long long)a->nbytes);
    *out = cc; /* borrowed: a->ready[dst] and the in-flight list hold it */
    pg__comp_unref(rt, cc);
    return PG_OK;
}

static pg_status copy_stream(pg__runtime *rt, int dev, pg__stream **out) {
    pg__device *d = &rt->dev[dev];
    if (!d->copy_stream) {
        pg__stream *s = pg__calloc(1, sizeof *s);
        if (!s)
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        pg_status st = rt->ops->stream_new(rt->b, dev, &s->b);
        if (st) {
            pg__free(s);
            return st;
        }
        s->device = dev;
        s->index = PG__MAX_STREAMS; /* shown as the device's copy stream */
        d->copy_stream = s;
    }
    *out = d->copy_stream;
    return PG_OK;
}

pg_status pg__coh_acquire(pg__runtime *rt, pg__comp *c, pg__array *a, int dev, pg__stream *s) {
    int loc = PG__LOC(dev);
    pg_status rst = reserve_input(c);
    if (rst)
        return rst;
    if (a->lost)
        return pg__error(PG_ERROR_DEVICE, "%s", a->lost);
    if (a->valid & PG__LOC_BIT(loc)) {
        add_input(c, a->ready[loc]);
        return pg__exec_order_after(rt, s, a->ready[loc]);
    }
    int src = best_source(rt, a, loc);
    if (src < 0)
        return pg__error(PG_ERROR_INTERNAL, "array %llu has no valid copy anywhere",
                         (unsigned long long)a->id);
    pg__stream *cs = s;
    pg_status st = rt->opt.prefetch ? copy_stream(rt, dev, &cs) : PG_OK;
    pg__comp *cc;
    if (!st)
        st = issue_copy(rt, a, src, loc, cs, &cc);
    if (st)
        return st;
    add_input(c, cc);
    st = pg__dag_record_add_parent(rt, c, cc->id);
    if (!st && cs != s)
        st = rt->ops->stream_wait(rt->b, s->b, cc->event);
    return st;
}

static void clear_lost(pg__array *a);

void pg__coh_write(pg__runtime *rt, pg__comp *c, pg__array *a, int loc) {
    clear_lost(a); /* a new value */
    a->fresh = 0;
    a->valid = PG__LOC_BIT(loc);
    for (int l = 0; l <= rt->ndev; l++)
        pg__comp_set(rt, &a->ready[l], l == loc ? c : NULL);
}

/* The stream for a copy of a from src to dst. The copy waits for the work that made src's copy
 * current (a->ready[src], by an event when on another stream) and for nothing else: host reads,
 * host writes and prefetches never wait for unrelated work queued after that producer. So: the
 * producer's stream while the producer is still the last work there (no cross-stream wait), else
 * an idle stream of the device that does the copy (the GPU end of a host copy, the destination of
 * a peer copy), else a new one. */
static pg_status copy_stream_for(pg__runtime *rt, pg__array *a, int src, int dst,
                                 pg__stream **out) {
    int dev = dst == 0 ? src - 1 : dst - 1;
    pg__comp *r = a->ready[src];
    if (r && r->stream && r->stream->device == dev && r->stream->last == r) {
        *out = r->stream;
        return PG_OK;
    }
    *out = pg__stream_idle(rt, dev);
    return *out ? PG_OK : pg__stream_get_new(rt, dev, out);
}

pg_status pg__coh_to_host(pg__runtime *rt, pg__comp *c, pg__array *a, pg__comp **wait) {
    *wait = NULL;
    if (a->lost)
        return pg__error(PG_ERROR_DEVICE, "%s", a->lost);
    if (a->valid & PG__LOC_BIT(0)) {
        if (a->ready[0]) {
            pg__comp_ref(a->ready[0]);
            *wait = a->ready[0];
        }
        return PG_OK;
    }
    int src = best_source(rt, a, 0);
    if (src < 1)
        return pg__error(PG_ERROR_INTERNAL, "array %llu has no valid copy anywhere",
                         (unsigned long long)a->id);
    pg__stream *s;
    pg__comp *cc;
    pg_status st = copy_stream_for(rt, a, src, 0, &s);
    if (!st)
        st = issue_copy(rt, a, src, 0, s, &cc);
    if (!st)
        st = pg__dag_record_add_parent(rt, c, cc->id);
    if (st)
        return st; /* a copy issued stays: the host copy is current once it is done */
    pg__comp_ref(cc);
    *wait = cc;
    return PG_OK;
}

pg_status pg__coh_prefetch(pg__runtime *rt, pg__array *a, int loc) {
    if (loc > 0 && rt->dev[loc - 1].failed)
        return pg__error(PG_ERROR_DEVICE, "device %d has failed (%s): prefetch elsewhere", loc - 1,
                         rt->dev[loc - 1].failure ? rt->dev[loc - 1].failure : "");
    if (a->lost)
        return pg__error(PG_ERROR_DEVICE, "%s", a->lost);
    if (a->valid & PG__LOC_BIT(loc))
        return PG_OK;
    int src = best_source(rt, a, loc);
    if (src < 0)
        return pg__error(PG_ERROR_INTERNAL, "array %llu has no valid copy anywhere",
                         (unsigned long long)a->id);
    pg__stream *s;
    pg__comp *cc;
    pg_status st = copy_stream_for(rt, a, src, loc, &s);
    if (!st)
        st = issue_copy(rt, a, src, loc, s, &cc);
    if (st)
        return st;
    /* No consumer orders this copy, so it joins the array's readers itself: a later writer of
     * the array, on any device or the host, then waits until the copy has read its source
     * and filled its destination. */
    st = pg__dag_commit(rt, cc);
    if (st) {
        pg_status wst = pg__exec_wait(rt, cc); /* untracked: finish it before going on */
        return wst ? wst : st;
    }
    return PG_OK;
}

/* ---- failures: a value is bad when the computation that made it failed (comp.c), or lost
 * when every copy of it was on failed devices. */

static char *value_message(const pg__array *a, const char *why) {
    char m[1536];
    snprintf(m, sizeof m, "array %llu has no valid value: %s", (unsigned long long)a->id, why);
    return pg__strdup(m);
}

/* Without memory for its message an array must still read as lost. */
static char lost_no_memory[] = "the array was lost (out of host memory for the details)";

static void clear_lost(pg__array *a) {
    if (a->lost != lost_no_memory)
        pg__free(a->lost);
    a->lost = NULL;
}

static void set_lost(pg__array *a, char *msg) {
    clear_lost(a);
    a->lost = msg ? msg : lost_no_memory;
}

void pg__coh_array_free(pg__array *a) {
    clear_lost(a);
}

/* The error of a's current value when one is known: lost, or made by a failed computation. */
static pg_status value_error(pg__runtime *rt, pg__array *a) {
    for (int l = 0; l <= rt->ndev; l++) {
        pg__comp *r = a->ready[l];
        if ((a->valid & PG__LOC_BIT(l)) && r && r->state == PG__ISSUED)
            pg__comp_done(rt, r); /* finished already? then we learn whether it failed */
    }
    if (a->lost)
        return pg__error(PG_ERROR_DEVICE, "%s", a->lost);
    for (int l = 0; l <= rt->ndev; l++) {
        pg__comp *r = a->ready[l];
        if ((a->valid & PG__LOC_BIT(l)) && r && r->err)
            return pg__error(PG_ERROR_DEVICE, "array %llu has no valid value: %s",
                             (unsigned long long)a->id, r->err);
    }
    return PG_OK;
}

pg_status pg__coh_check_inputs(pg__runtime *rt, pg__comp *c, int dev) {
    for (int i = 0; i < c->nargs; i++) {
        if (!(c->args[i].access & PG_ACCESS_IN))
            continue;
        pg_status st = value_error(rt, c->args[i].array);
        if (st)
            return st;
    }
    /* Failures seen just now may include this device's. */
    if (rt->dev[dev].failed)
        return pg__error(PG_ERROR_DEVICE, "device %d has failed (%s)", dev,
                         rt->dev[dev].failure ? rt->dev[dev].failure : "");
    return PG_OK;
}

pg_status pg__coh_value_failed(pg__runtime *rt, pg__comp *c, pg__array *a, pg__comp *producer) {
    if (c->kind == PG__HOST_WRITE)
        pg__comp_fail(c, producer->err); /* a partial write over a failed value is no value */
    return pg__error(PG_ERROR_DEVICE, "array %llu has no valid value: %s",
                     (unsigned long long)a->id, producer->err);
}

/* A copy to another location from dev that has not happened yet: it never will. */
static int pending_copy_from(const pg__comp *r, int loc) {
    return r && r->kind == PG__COPY && r->copy_src == loc && r->state != PG__DONE;
}

void pg__coh_device_failed(pg__runtime *rt, int dev, const char *why) {
    pg__device *d = &rt->dev[dev];
    if (d->failed)
        return;
    d->failed = 1;
    d->failure = pg__strdup(why);
    pg__log(rt, 1, "device %d failed: %s", dev, why);
    int loc = PG__LOC(dev);
    for (int i = 0; i < rt->narrays; i++) {
        pg__array *a = rt->arrays[i];
        if (!(a->valid & PG__LOC_BIT(loc)))
            continue;
        a->valid &= ~PG__LOC_BIT(loc);
        for (int l = 0; l <= rt->ndev; l++)
            if ((a->valid & PG__LOC_BIT(l)) && pending_copy_from(a->ready[l], loc))
                a->valid &= ~PG__LOC_BIT(l);
        if (a->valid || a->lost)
            continue;
        pg__comp *r = a->ready[loc];
        char m[1536];
        if (r && r->err) {
            set_lost(a, value_message(a, r->err));
            continue;
        }
        snprintf(m, sizeof m,
                 "array %llu was lost with device %d: its only current copy was there (%s)",
                 (unsigned long long)a->id, dev, why);
        set_lost(a, pg__strdup(m));
    }
}

void pg__coh_outputs_failed(pg__runtime *rt, pg__comp *c, const char *msg) {
    char m[1280];
    snprintf(m, sizeof m, "kernel '%s' (computation #%llu) did not run: %s",
             c->kernel ? c->kernel->name : "?", (unsigned long long)c->id, msg);
    pg__comp_fail(c, m);
    for (int i = 0; i < c->nargs; i++)
        if (c->args[i].access & PG_ACCESS_OUT)
            set_lost(c->args[i].array, value_message(c->args[i].array, c->err));
}

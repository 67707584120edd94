/* issue.c: the one path from a placed computation to a backend stream. A kernel launch, a copy
 * and a device access all go through pg__issue: it orders the computation after its parents,
 * brings its inputs to its device (each copy is a computation issued the same way), lets the
 * caller's work enqueue the backend operation, records the event that marks completion, and
 * marks the computation issued (last on its stream, in flight). Coherence says which copies
 * are needed and from where; only this file hands work to a stream. Lock held throughout. */
#include "core/internal.h"
#include "core/phases.h"

#include <stdio.h>

static void issued(pg__runtime *rt, pg__comp *c, pg__stream *s) {
    c->state = PG__ISSUED;
    c->seq = ++s->issued_seq;
    pg__comp_set(rt, &s->last, c);
    s->last_use = ++rt->submissions;
    rt->dev[s->device].inflight++;
    if (rt->opt.models && c->kind == PG__KERNEL && c->kernel) {
        int64_t p = pg__models_predict(rt, c->kernel->name, s->device, pg__models_args_bytes(c));
        c->pred_ns = p > 0 ? (uint64_t)p : 0;
        rt->dev[s->device].queued_ns += c->pred_ns;
    }
    pg__comp_list_push(&rt->inflight_head, &rt->inflight_tail, c);
}

/* Make s wait for p unless p is finished or already ordered before s's next work. */
static pg_status order_after(pg__runtime *rt, pg__stream *s, pg__comp *p) {
    /* A parent that finished unseen costs a no-op wait on the device, cheaper than asking. */
    if (!p || p->stream == s || pg__comp_known_done(p) || p->state != PG__ISSUED)
        return PG_OK;
    return rt->ops->stream_wait(rt->b, s->b, p->event);
}

pg_status pg__issue(pg__runtime *rt, pg__comp *c, pg__stream *s, pg__issue_work work, void *ctx) {
    c->device = s->device;
    c->stream = s;
    pg__dag_record_device(rt, c);
    pg_status st = PG_OK;
    for (int i = 0; !st && i < c->nparents; i++)
        st = order_after(rt, s, c->parents[i]);
    /* A copy has no inputs to bring; a plan's replay brought its own (core/replay.c). */
    for (int i = 0; !st && c->kind != PG__COPY && c->kind != PG__REPLAY && i < c->nargs; i++)
        if (c->args[i].access & PG_ACCESS_IN)
            st = pg__issue_input(rt, c, c->args[i].array, s);
    if (!st && rt->timing && (c->kind == PG__KERNEL || c->kind == PG__COPY))
        c->timed = 1;
    int enqueued = 0;
    /* Phases are counted for kernels; a copy issued inside counts as the kernel's waits. */
    if (c->kind == PG__KERNEL)
        PG__PHASE_SHARED(PG__PH_WAITS);
    if (!st)
        enqueued = (st = work(rt, c, s, ctx)) == PG_OK;
    if (c->kind == PG__KERNEL)
        PG__PHASE_SHARED(PG__PH_LAUNCH);
    if (!st)
        st = rt->ops->event_record(rt->b, s->b, &c->event);
    if (c->kind == PG__KERNEL)
        PG__PHASE_SHARED(PG__PH_MARK);
    if (st) {
        if (c->timed) /* its timing events were made: they go with it */
            rt->ops->timing_release(rt->b, &c->timing);
        c->timed = 0;
        /* Work on the stream with no event to track it: the device is no longer trusted. */
        if (enqueued)
            pg__coh_device_failed(rt, s->device, pg_last_error());
        pg__coh_faults_check(rt); /* the device may have faulted under earlier work */
        return st;
    }
    issued(rt, c, s);
    /* Parents were needed only to order this work. */
    for (int i = 0; i < c->nparents; i++)
        pg__comp_unref(rt, c->parents[i]);
    pg__comp_parents_clear(c);
    if (c->kind == PG__COPY) {
        rt->stats.computations++;
        rt->stats.copies++;
        rt->stats.link_bytes[c->copy_src][c->copy_dst] += c->copy_bytes;
        rt->stats.bytes_moved += c->copy_bytes;
    }
    return PG_OK;
}

/* ---- copies */

typedef struct copy_bufs {
    void *dst, *src;
} copy_bufs;

static pg_status copy_work(pg__runtime *rt, pg__comp *c, pg__stream *s, void *ctx) {
    copy_bufs *b = ctx;
    if (rt->cap) /* an elided copy stays in a plan as the edges it orders */
        pg__plan_note_copy(rt, c, s, b->dst, rt->opt.elide_copies ? NULL : b->src);
    if (rt->opt.elide_copies) { /* the infinite-bandwidth bound: the value does not move */
        rt->stats.copies_elided++;
        rt->stats.bytes_elided += c->copy_bytes;
        return PG_OK;
    }
    return rt->ops->copy(rt->b, s->b, c->copy_dst - 1, b->dst, c->copy_src - 1, b->src,
                         c->copy_bytes, c->timed ? &c->timing : NULL);
}

static void loc_name(int loc, char *out, size_t cap) {
    if (loc == 0)
        snprintf(out, cap, "host");
    else
        snprintf(out, cap, "%d", loc - 1);
}

/* Issue a copy of a from location src to dst on stream s, as a computation of its own, after
 * the work that made src's copy current. *out is borrowed (a->ready[dst] and the in-flight
 * list hold it). */
static pg_status issue_copy(pg__runtime *rt, pg__array *a, int src, int dst, pg__stream *s,
                            pg__comp **out) {
    copy_bufs b;
    pg_status st = pg__array_buffer(a, dst, s, &b.dst);
    if (!st)
        st = pg__array_buffer(a, src, s, &b.src);
    pg__comp *cc = st ? NULL : pg__comp_new(rt, PG__COPY);
    if (!st && !cc)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (st)
        return st;
    cc->args = cc->args_in;
    cc->args[0].array = a;
    cc->args[0].access = PG_ACCESS_IN;
    cc->nargs = 1;
    pg__array_ref(a);
    if (rt->cap)
        pg__plan_note_read(rt, a, src);
    pg__comp *producer = a->ready[src];
    if (producer) {
        pg__comp_ref(producer);
        cc->parents = cc->parents_in;
        cc->parents[0] = producer;
        cc->nparents = 1;
        pg__coh_input_reserve(cc); /* inline room: cannot fail */
        pg__coh_input_add(cc, producer);
    }
    cc->copy_src = src;
    cc->copy_dst = dst;
    cc->copy_bytes = a->nbytes;
    char sn[16], dn[16], name[64];
    loc_name(src, sn, sizeof sn);
    loc_name(dst, dn, sizeof dn);
    snprintf(name, sizeof name, "copy a%llu %s->%s", (unsigned long long)a->id, sn, dn);
    st = pg__dag_record(rt, cc, name);
    if (!st)
        st = pg__issue(rt, cc, s, copy_work, &b);
    if (st) {
        pg__dag_record_drop(rt, cc); /* no copy: the DAG does not show one */
        pg__comp_unref(rt, cc);
        return st;
    }
    pg__coh_copied(rt, a, dst, cc);
    pg__log(rt, 2, "%s (%llu bytes)", name, (unsigned long long)a->nbytes);
    *out = cc;
    pg__comp_unref(rt, cc);
    return PG_OK;
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

pg_status pg__issue_input(pg__runtime *rt, pg__comp *c, pg__array *a, pg__stream *s) {
    int loc = PG__LOC(s->device), src;
    pg_status st = pg__coh_input_reserve(c);
    if (!st)
        st = pg__coh_source(rt, a, loc, &src);
    if (st)
        return st;
    if (src < 0) {
        if (rt->cap)
            pg__plan_note_read(rt, a, loc);
        pg__coh_input_add(c, a->ready[loc]);
        return order_after(rt, s, a->ready[loc]);
    }
    /* With prefetch, input copies go to the device's copy stream, so they overlap the work
     * queued before c on s. */
    pg__stream *cs = s;
    pg__comp *cc;
    st = rt->opt.prefetch || c->copy_inputs ? pg__stream_copy(rt, s->device, &cs) : PG_OK;
    if (!st)
        st = issue_copy(rt, a, src, loc, cs, &cc);
    if (st)
        return st;
    pg__coh_input_add(c, cc);
    st = pg__dag_record_add_parent(rt, c, cc->id);
    return st ? st : order_after(rt, s, cc);
}

pg_status pg__issue_to_host(pg__runtime *rt, pg__comp *c, pg__array *a, pg__comp **wait) {
    *wait = NULL;
    int src;
    pg_status st = pg__coh_source(rt, a, 0, &src);
    if (st)
        return st;
    if (src < 0) {
        if (a->ready[0]) {
            pg__comp_ref(a->ready[0]);
            *wait = a->ready[0];
        }
        return PG_OK;
    }
    pg__stream *s;
    pg__comp *cc;
    st = copy_stream_for(rt, a, src, 0, &s);
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

pg_status pg__issue_prefetch(pg__runtime *rt, pg__array *a, int loc) {
    if (loc > 0 && rt->dev[loc - 1].failed)
        return pg__error(PG_ERROR_DEVICE, "device %d has failed (%s): prefetch elsewhere", loc - 1,
                         rt->dev[loc - 1].failure ? rt->dev[loc - 1].failure : "");
    int src;
    pg_status st = pg__coh_source(rt, a, loc, &src);
    if (st || src < 0)
        return st;
    pg__stream *s;
    pg__comp *cc;
    st = copy_stream_for(rt, a, src, loc, &s);
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

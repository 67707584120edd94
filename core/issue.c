/* issue.c: the one path from a placed computation to a backend stream. A kernel launch, a copy
 * and a device access all go through pg__issue: it orders the computation after its parents,
 * brings its inputs to its device (each copy is a computation issued the same way), lets the
 * caller's work enqueue the backend operation, records the event that marks completion, and
 * marks the computation issued (last on its stream, in flight). Coherence says which copies
 * are needed and from where; only this file hands work to a stream. Lock held throughout. */
#include "core/issue.h"
#include "core/array.h"
#include "core/capture.h"
#include "core/chunks.h"
#include "core/coherence.h"
#include "core/comp.h"
#include "core/deps.h"
#include "core/models.h"
#include "core/observe.h"
#include "core/streams.h"
#include "core/util.h"
#include "core/waits.h"
#include "core/phases.h"
#include "core/share.h"

#include <stdio.h>
#include <string.h>

static void issued(pg__runtime *rt, pg__comp *c, pg__stream *s) {
    c->state = PG__ISSUED;
    c->seq = ++s->issued_seq;
    pg__comp_set(rt, &s->last, c);
    s->last_use = ++rt->submissions;
    rt->dev[s->device].inflight++;
    pg__models_queue_add(rt, c, s->device);
    pg__share_load(rt, s->device);
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
    if (!st && rt->timing_all && (c->kind == PG__KERNEL || c->kind == PG__COPY))
        c->timed = 1;
    else if (!st && rt->timing && c->kind == PG__KERNEL && c->kernel) /* models only */
        c->timed = pg__models_want_timing(rt, c, s->device);
    int enqueued = 0;
    /* Phases are counted for kernels; a copy issued inside counts as the kernel's waits. */
    if (c->kind == PG__KERNEL)
        PG__PHASE_SHARED(PG__PH_WAITS);
    /* The GPU's timeline ties what the work enqueues to this computation (trace option). */
    int traced = !st && rt->ops->trace_enter && rt->opt.trace[0];
    if (traced)
        rt->ops->trace_enter(rt->b, c->id);
    if (!st)
        enqueued = (st = work(rt, c, s, ctx)) == PG_OK;
    if (traced)
        rt->ops->trace_leave(rt->b);
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

/* What one copy computation moves: all of an array, or (a chunked copy) a part of it after a
 * stream wait on the flags of the chunks its producer's blocks write there (core/chunks.c). */
typedef struct copy_bufs {
    void *dst, *src; /* the array's buffers at the two locations */
    uint64_t off, bytes;
    const uint32_t *flags;
    uint32_t nflags;
} copy_bufs;

static pg_status copy_work(pg__runtime *rt, pg__comp *c, pg__stream *s, void *ctx) {
    copy_bufs *b = ctx;
    if (rt->cap) /* an elided copy stays in a plan as the edges it orders */
        pg__plan_note_copy(rt, c, s, b->dst, rt->opt.elide_copies ? NULL : b->src);
    pg_status st = b->nflags ? rt->ops->wait_flags(rt->b, s->b, b->flags, b->nflags) : PG_OK;
    if (st)
        return st;
    if (rt->opt.elide_copies) { /* the infinite-bandwidth bound: the value does not move */
        rt->stats.copies_elided++;
        rt->stats.bytes_elided += c->copy_bytes;
        return PG_OK;
    }
    return rt->ops->copy(rt->b, s->b, c->copy_dst - 1, (char *)b->dst + b->off, c->copy_src - 1,
                         (const char *)b->src + b->off, b->bytes, c->timed ? &c->timing : NULL);
}

static void loc_name(int loc, char *out, size_t cap) {
    if (loc == 0)
        snprintf(out, cap, "host");
    else
        snprintf(out, cap, "%d", loc - 1);
}

/* Issue the part of a copy of a from location src to dst that b says, on stream s, as a
 * computation of its own: after the work that made src's copy current (a chunked part: after
 * its flags instead, with the producer an input only). part/nparts name it in the DAG (nparts 0:
 * the whole array). *out is borrowed (the in-flight list holds it). */
static pg_status issue_part(pg__runtime *rt, pg__array *const *run, int nrun, int src, int dst,
                            pg__stream *s, copy_bufs *b, int part, int nparts, pg__comp **out) {
    pg__array *a = run[0];
    pg__comp *cc = pg__comp_new(rt, PG__COPY);
    if (!cc)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    /* A run longer than a computation's inline room is cut short by the caller. */
    cc->args = cc->args_in;
    cc->nargs = nrun;
    for (int i = 0; i < nrun; i++) {
        cc->args[i] = (pg__carg){run[i], PG_ACCESS_IN};
        pg__array_ref(run[i]);
        if (rt->cap)
            pg__plan_note_read(rt, run[i], src);
    }
    /* Each piece's producer: the copy reads what each made (inputs, for failures) and waits for
     * them all (parents; a chunked part waits for flags instead). Inline room: cannot fail. */
    pg__comp *producer = a->ready[src];
    pg__coh_input_reserve(cc);
    cc->parents = cc->parents_in;
    for (int i = 0; i < nrun; i++) {
        pg__comp *p = run[i]->ready[src];
        int before = cc->ninputs;
        pg__coh_input_add(cc, p); /* no-op for NULL or one already there */
        if (cc->ninputs == before)
            continue;
        if (!b->nflags) {
            pg__comp_ref(p);
            cc->parents[cc->nparents++] = p;
        }
    }
    cc->copy_src = src;
    cc->copy_dst = dst;
    cc->copy_bytes = b->bytes;
    char sn[16], dn[16], name[64];
    loc_name(src, sn, sizeof sn);
    loc_name(dst, dn, sizeof dn);
    if (nparts)
        snprintf(name, sizeof name, "copy a%llu %s->%s chunk %d/%d", (unsigned long long)a->id, sn,
                 dn, part + 1, nparts);
    else
        snprintf(name, sizeof name, "copy a%llu %s->%s", (unsigned long long)a->id, sn, dn);
    pg_status st = pg__dag_record(rt, cc, name);
    if (!st && producer && b->nflags) /* ordered by flags, but it reads what the producer made */
        st = pg__dag_record_add_parent(rt, cc, producer->id);
    if (!st)
        st = pg__issue(rt, cc, s, copy_work, b);
    if (st) {
        pg__dag_record_drop(rt, cc); /* no copy: the DAG does not show one */
        pg__comp_unref(rt, cc);
        return st;
    }
    pg__log(rt, 2, "%s (%llu bytes)", name, (unsigned long long)b->bytes);
    *out = cc;
    pg__comp_unref(rt, cc);
    return PG_OK;
}

/* A copy of the output of a kernel that may still run, chunk by chunk (core/chunks.c): on the
 * source device's copy stream (its stream waits read that device's flags), groups of the flags'
 * chunks sized for the link, each copied once its blocks are done. The last part is the copy's
 * completion: the parts run in order on one stream. */
static pg_status issue_chunked(pg__runtime *rt, pg__array *a, int src, int dst, pg__stream *s,
                               copy_bufs *whole, uint64_t block_bytes, pg__comp **out) {
    pg__comp *p = a->ready[src];
    const pg__chunks *ch = p->chunks;
    /* The flags' memory may hold an earlier launch's raised flags until the producer's stream
     * zeroes it. */
    pg_status st = rt->ops->stream_wait(rt->b, s->b, ch->zeroed);
    if (st)
        return st;
    uint64_t fb = (uint64_t)ch->bpc * block_bytes;      /* bytes per flag */
    uint64_t used = fb ? (a->nbytes + fb - 1) / fb : 1; /* flags over a's bytes */
    if (used > ch->nflags || !fb)
        used = ch->nflags;
    uint64_t group = pg__chunks_copy_bytes(rt, src, dst, a->nbytes);
    uint64_t k = fb ? (group + fb / 2) / fb : used;
    if (k < 1)
        k = 1;
    int nparts = (int)((used + k - 1) / k);
    for (int i = 0; i < nparts; i++) {
        uint64_t f0 = (uint64_t)i * k, f1 = f0 + k < used ? f0 + k : used;
        copy_bufs b = *whole;
        b.off = f0 * fb;
        /* The last part takes any bytes past the grid's blocks too (not written by them). */
        b.bytes = (i == nparts - 1 ? a->nbytes : f1 * fb) - b.off;
        b.flags = ch->sync + ch->nflags + f0;
        b.nflags = (uint32_t)(f1 - f0);
        if ((st = issue_part(rt, &a, 1, src, dst, s, &b, i, nparts, out)))
            return st; /* the parts issued stay: they are tracked and finish on their own */
    }
    return PG_OK;
}

/* Issue a copy of a from location src to dst on stream s (or, for a chunked copy, the source
 * device's copy stream), then mark dst current after it. *out is borrowed (a->ready[dst] and
 * the in-flight list hold it). */
static pg_status issue_copy(pg__runtime *rt, pg__array *const *run, int nrun, int src, int dst,
                            pg__stream *s, pg__comp **out) {
    pg__array *a = run[0];
    copy_bufs b = {0};
    uint64_t block_bytes = 0;
    int chunked = nrun == 1 && !rt->opt.elide_copies && rt->ops->wait_flags &&
                  pg__chunks_copyable(rt, a->ready[src], a, src, &block_bytes);
    /* A destination buffer made now is ordered on s (its device's stream); the parts of a
     * chunked copy run on the source device's copy stream, which then waits for it. */
    int fresh = dst > 0 && !pg__array_buf(a, dst);
    pg_status st = pg__array_buffer(a, dst, s, &b.dst);
    if (!st)
        st = pg__array_buffer(a, src, s, &b.src);
    if (st)
        return st;
    for (int i = 0; i < nrun; i++)
        b.bytes += run[i]->nbytes;
    pg__stream *cs = s;
    if (chunked && (st = pg__stream_copy(rt, a->ready[src]->device, &cs)))
        return st;
    if (chunked && fresh && cs != s) {
        pg__bevent *e = NULL;
        st = rt->ops->event_record(rt->b, s->b, &e);
        if (!st)
            st = rt->ops->stream_wait(rt->b, cs->b, e);
        if (e)
            rt->ops->event_free(rt->b, e);
        if (st)
            return st;
    }
    if (chunked)
        st = issue_chunked(rt, a, src, dst, cs, &b, block_bytes, out);
    else
        st = issue_part(rt, run, nrun, src, dst, s, &b, 0, 0, out);
    if (st)
        return st;
    for (int i = 0; i < nrun; i++)
        pg__coh_copied(rt, run[i], dst, *out);
    return PG_OK;
}

static uint64_t byte_off(const pg__array *a) {
    return a->off * pg_dtype_size(a->dtype);
}

/* a, and the pieces of a's array next to it that c reads too and that need the same copy (from
 * src to dst, none chunked): one copy moves them all, in offset order (run[0] lowest). A kernel
 * reading a whole array whose partitions were made on another device needed one copy per
 * partition; in a recorded iteration each copy is a graph node on the critical path (CG on views,
 * 2 GPUs: eight 64 KB copies in a row per iteration). Returns the run's length, at most cap. */
static int copy_run(pg__runtime *rt, const pg__comp *c, pg__array *a, int src, int dst,
                    pg__array **run, int cap) {
    run[0] = a;
    int n = 1;
    uint64_t bb;
    /* The limit study (elide_copies) keeps one elided copy per piece, as its bounds were
     * measured; a chunked copy goes alone. */
    if (a->kind != PG__A_PIECE || c->kind != PG__KERNEL || rt->opt.elide_copies ||
        (rt->ops->wait_flags && pg__chunks_copyable(rt, a->ready[src], a, src, &bb)))
        return 1;
    uint64_t lo = byte_off(a), hi = lo + a->nbytes;
    for (int grew = 1; grew && n < cap;) {
        grew = 0;
        for (int i = 0; i < c->nargs && n < cap; i++) {
            pg__array *p = c->args[i].array;
            if (p->kind != PG__A_PIECE || p->store != a->store ||
                !(c->args[i].access & PG_ACCESS_IN))
                continue;
            /* Pieces are never empty: one in the run lies inside [lo, hi), next to neither end. */
            uint64_t o = byte_off(p);
            int right = o == hi, left = o + p->nbytes == lo;
            int psrc = -1;
            if (!(right || left) || p->lost || (p->valid & PG__LOC_BIT(dst)) ||
                pg__coh_source(rt, p, dst, &psrc) != PG_OK || psrc != src ||
                (rt->ops->wait_flags && pg__chunks_copyable(rt, p->ready[src], p, src, &bb)))
                continue;
            if (right) {
                run[n++] = p;
                hi = o + p->nbytes;
            } else {
                memmove(run + 1, run, (size_t)n * sizeof *run);
                run[0] = p;
                n++;
                lo = o;
            }
            grew = 1;
        }
    }
    return n;
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
    pg__array *run[PG__INLINE];
    int nrun = st ? 0 : copy_run(rt, c, a, src, loc, run, PG__INLINE);
    if (!st)
        st = issue_copy(rt, run, nrun, src, loc, cs, &cc);
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
        st = issue_copy(rt, &a, 1, src, 0, s, &cc);
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
        st = issue_copy(rt, &a, 1, src, loc, s, &cc);
    if (st)
        return st;
    /* No consumer orders this copy, so it joins the array's readers itself: a later writer of
     * the array, on any device or the host, then waits until the copy has read its source
     * and filled its destination. */
    st = pg__dag_commit(rt, cc);
    if (st) {
        pg_status wst = pg__wait_comp(rt, cc); /* untracked: finish it before going on */
        return wst ? wst : st;
    }
    return PG_OK;
}

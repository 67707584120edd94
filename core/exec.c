/* exec.c: the execution context — submit, schedule onto a device stream, host accesses, work
 * held back behind mapped arrays, waiting and syncing. Every function runs with rt->mu held;
 * the only waits drop it. */
#include "core/exec.h"
#include "core/array.h"
#include "core/bounds.h"
#include "core/capture.h"
#include "core/chunks.h"
#include "core/coherence.h"
#include "core/comp.h"
#include "core/deps.h"
#include "core/evict.h"
#include "core/issue.h"
#include "core/observe.h"
#include "core/pieces.h"
#include "core/place.h"
#include "core/streams.h"
#include "core/task.h"
#include "core/util.h"
#include "core/waits.h"
#include "core/phases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Record c in the DAG and in its arrays' histories, once. */
static pg_status accept(pg__runtime *rt, pg__comp *c, const char *name) {
    if (c->recorded)
        return PG_OK;
    pg_status st = pg__dag_record(rt, c, name);
    if (!st && (st = pg__dag_commit(rt, c)) != PG_OK)
        pg__dag_record_drop(rt, c); /* not accepted: the DAG does not show it */
    if (st)
        return st;
    c->recorded = 1;
    if (c->kind == PG__REPLAY)
        return PG_OK; /* counted as the calls and copies it stands for (core/replay.c) */
    rt->stats.computations++;
    if (c->kind == PG__KERNEL)
        rt->stats.kernels++;
    else
        rt->stats.host_accesses++;
    return PG_OK;
}

static pg_status kernel_function(pg__runtime *rt, pg__kernel *k, int dev, void **fn) {
    if (!k->fn[dev]) {
        pg_status st = rt->ops->kernel_function(rt->b, k->image, dev, &k->fn[dev]);
        if (st)
            return st;
    }
    *fn = k->fn[dev];
    return PG_OK;
}

/* c was accepted (it is in the DAG and its arrays' histories) but will never run: it counts as
 * finished, so that nothing waits for it forever, and it changed no value (the call failed). */
static void accepted_not_issued(pg__runtime *rt, pg__comp *c) {
    c->device = PG_HOST; /* never counted in flight anywhere */
    c->stream = NULL;
    pg__comp_finish_host(rt, c);
}

typedef struct launch_ctx {
    void *fn;
    void **buf; /* per argument: its buffer on the device */
} launch_ctx;

static pg_status launch_work(pg__runtime *rt, pg__comp *c, pg__stream *s, void *ctx) {
    launch_ctx *l = ctx;
    if (__builtin_expect(rt->opt.check_bounds, 0) && !c->kernel->is_task &&
        (!c->kernel->chunked || c->block_count))           /* a split part counts no chunks */
        return pg__bounds_launch(rt, c, s, l->fn, l->buf); /* views in buffers of their own */
    for (int i = 0; i < c->nslots; i++)
        if (c->slot_arg[i] >= 0)
            c->slots[i] = (uint64_t)(uintptr_t)l->buf[c->slot_arg[i]];
    if (__builtin_expect(c->block_count != 0, 0)) {
        /* A part of a split launch (core/split.c): each pointer back to its argument's first
         * element, only the part's blocks run, and a replay of it stays eager (a plan node
         * would run the whole grid). */
        for (int i = 0; i < c->nslots; i++)
            if (c->slot_arg[i] >= 0)
                c->slots[i] -=
                    c->slot_shift[i] * pg_dtype_size(c->args[c->slot_arg[i]].array->dtype);
        if (rt->cap)
            pg__plan_note_broken(rt);
        return rt->ops->launch_range(rt->b, s->b, l->fn, c->grid, c->block, c->shared_mem, c->slots,
                                     c->nslots, c->block_first, c->block_count,
                                     c->timed ? &c->timing : NULL);
    }
    if (c->kernel->is_task) {
        if (rt->cap) /* a C function is no backend graph node: the replay stays eager */
            pg__plan_note_broken(rt);
        return pg__task_issue(rt, c, s);
    }
    if (rt->cap && c->kernel->wrapped) /* a graph node would lack the wrapper's parameters */
        pg__plan_note_broken(rt);
    else if (rt->cap)
        pg__plan_note_launch(rt, c, s, l->fn);
    if (c->kernel->wrapped && !c->kernel->chunked) /* wrapped to be split: the whole grid */
        return rt->ops->launch_chunks(rt->b, s->b, l->fn, c->grid, c->block, c->shared_mem,
                                      c->slots, c->nslots, NULL, 0, c->timed ? &c->timing : NULL);
    if (c->kernel->chunked && rt->ops->launch_chunks)
        return pg__chunks_launch(rt, c, s, l->fn);
    return rt->ops->launch(rt->b, s->b, l->fn, c->grid, c->block, c->shared_mem, c->slots,
                           c->nslots, c->timed ? &c->timing : NULL);
}

/* Buffers a launch made for arrays never written are zeroed by work queued on its stream. When
 * the launch does not go ahead, nothing tracks that work, and a later user of the buffer on
 * another stream (or the runtime's close freeing it) would race with it: finish it first. The
 * error being reported is kept. */
static pg_status finish_zeroing(pg__runtime *rt, pg__comp *c, uint64_t zeroed, int dev,
                                pg__stream *s, pg_status st) {
    int made = 0;
    for (int i = 0; i < c->nargs && !made; i++)
        made = (zeroed >> i & 1) && pg__array_buf(c->args[i].array, PG__LOC(dev)) != NULL;
    if (!made)
        return st;
    char why[1024];
    snprintf(why, sizeof why, "%s", pg_last_error());
    pg__bevent *e = NULL;
    if (rt->ops->event_record(rt->b, s->b, &e) == PG_OK) {
        (void)pg__wait_event(rt, e);
        rt->ops->event_free(rt->b, e);
    }
    pg__error_clear();
    return st ? pg__error(st, "%s", why) : PG_OK;
}

/* Place c on a device and stream, move its inputs there, launch it, update coherence. Sets
 * *again, having changed nothing, when making room on the device waited with the lock dropped:
 * then c must be placed anew. */
static pg_status schedule(pg__runtime *rt, pg__comp *c, int *again) {
    int dev;
    pg__stream *s;
    pg__comp *sp = NULL;
    *again = 0;
    pg__coh_faults_check(rt);
    pg_status st = pg__policy_place(rt, c, &dev, &s, &sp);
    if (!st && !s)
        st = pg__stream_get_new(rt, dev, &s);
    PG__PHASE_SHARED(PG__PH_PLACE);
    void *buf[PG__MAX_PARAMS];
    uint64_t zeroed = 0; /* args whose buffer this launch creates as zeros on s */
    for (int i = 0; !st && i < c->nargs; i++)
        if (c->args[i].array->fresh && !pg__array_buf(c->args[i].array, PG__LOC(dev)))
            zeroed |= UINT64_C(1) << i;
    if (!st && (st = pg__evict_reserve(rt, c, dev, s, again)) == PG_OK && *again) {
        pg__plan_note_broken(rt); /* the lock was dropped: other threads' work came between */
        return finish_zeroing(rt, c, zeroed, dev, s, PG_OK);
    }
    for (int i = 0; !st && i < c->nargs; i++)
        st = pg__array_buffer(c->args[i].array, PG__LOC(dev), s, &buf[i]);
    void *fn = NULL;
    if (!st && !c->kernel->is_task)
        st = kernel_function(rt, c->kernel, dev, &fn);
    if (!st)
        st = pg__coh_check_inputs(rt, c, dev); /* reading a failed or lost value fails here */
    PG__PHASE_SHARED(PG__PH_BUFFERS);
    if (!st)
        st = accept(rt, c, c->kernel->name);
    PG__PHASE_SHARED(PG__PH_RECORD);
    if (st)
        return zeroed && s ? finish_zeroing(rt, c, zeroed, dev, s, st) : st;
    /* From here on the computation is part of the program: failures are device failures. */
    if (sp)
        sp->stream_taken = 1;
    launch_ctx l = {fn, buf};
    if ((st = pg__issue(rt, c, s, launch_work, &l))) {
        /* Copies already issued for c's inputs read and write buffers that no one waits for
         * once c failed (a later host write of the source raced with them): finish them. */
        char why[1024];
        snprintf(why, sizeof why, "%s", pg_last_error());
        for (int i = 0; i < c->ninputs; i++)
            if (c->inputs[i]->kind == PG__COPY && c->inputs[i]->state == PG__ISSUED)
                (void)pg__wait_comp(rt, c->inputs[i]);
        pg__error(st, "%s", why);
        if (zeroed)
            (void)finish_zeroing(rt, c, zeroed, dev, s, st);
        accepted_not_issued(rt, c);
        return pg__error(st, "%s", why); /* the issue's own error, not a wait's */
    }
    for (int i = 0; i < c->nargs; i++) {
        pg__array *a = c->args[i].array;
        if (c->args[i].access & PG_ACCESS_OUT)
            pg__coh_write(rt, c, a, PG__LOC(dev));
        else if (zeroed & (UINT64_C(1) << i))
            pg__comp_set(rt, &a->ready[PG__LOC(dev)], c); /* zeros are there after c starts */
    }
    pg__log(rt, 2, "kernel %s #%llu -> device %d stream %d", c->kernel->name,
            (unsigned long long)c->id, dev, s->index);
    return PG_OK;
}

/* The open host access that a parent holds c back for, or NULL if c can run now. */
static pg__comp *find_blocker(pg__comp *c) {
    for (int i = 0; i < c->nparents; i++) {
        pg__comp *p = c->parents[i];
        if (p->state == PG__OPEN)
            return p;
        if (p->state == PG__PENDING)
            return p->blocker;
    }
    return NULL;
}

/* Release finished work now and then, at every 16th submission: each look at the oldest
 * computation may ask the device, which costs more than the rest of a launch. */
static void sweep_now_and_then(pg__runtime *rt) {
    if ((++rt->submits & 15) == 0)
        pg__comp_sweep(rt, 64);
}

pg_status pg__exec_submit(pg__runtime *rt, pg__comp *c) {
    sweep_now_and_then(rt);
    PG__PHASE_SHARED(PG__PH_SWEEP);
    pg_status xst = pg__comp_expand_pieces(rt, c); /* roots and views to the pieces they cover */
    if (xst)
        return xst;
    for (;;) {
        pg_status st = pg__dag_parents(rt, c->args, c->nargs, &c->parents, &c->nparents,
                                       c->parents_in, PG__INLINE);
        PG__PHASE_SHARED(PG__PH_DEPS);
        if (st)
            return st;
        c->blocker = find_blocker(c);
        if (c->blocker) {
            st = accept(rt, c, c->kernel->name);
            if (st)
                return st;
            c->state = PG__PENDING;
            pg__comp_list_push(&rt->pending_head, &rt->pending_tail, c);
            rt->stats.pending++;
            return PG_OK;
        }
        int again;
        st = schedule(rt, c, &again);
        if (!again)
            return st;
        /* Room was made with the lock dropped: other threads' work may be c's parents now. */
        for (int i = 0; i < c->nparents; i++)
            pg__comp_unref(rt, c->parents[i]);
        pg__comp_parents_clear(c);
    }
}

pg_status pg__exec_issue_on(pg__runtime *rt, pg__comp *c, pg__stream *s, const char *name,
                            pg__comp *const *extra, int nextra, pg__issue_work work, void *ctx,
                            int *blocked) {
    *blocked = 0;
    sweep_now_and_then(rt);
    pg__comp **ps = NULL;
    int n = 0;
    pg_status st = pg__dag_parents(rt, c->args, c->nargs, &ps, &n, NULL, 0);
    if (st)
        return st;
    pg__comp **all = n + nextra ? pg__malloc((size_t)(n + nextra) * sizeof *all) : NULL;
    if (n + nextra && !all) {
        for (int i = 0; i < n; i++)
            pg__comp_unref(rt, ps[i]);
        pg__free(ps);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    if (n)
        memcpy(all, ps, (size_t)n * sizeof *all);
    pg__free(ps);
    for (int i = 0; i < nextra; i++) {
        int dup = 0;
        for (int j = 0; j < n && !dup; j++)
            dup = all[j] == extra[i];
        if (!dup) {
            pg__comp_ref(extra[i]);
            all[n++] = extra[i];
        }
    }
    c->parents = all;
    c->nparents = n;
    if (find_blocker(c)) {
        *blocked = 1; /* the caller goes the eager way, which holds work back */
        for (int i = 0; i < c->nparents; i++)
            pg__comp_unref(rt, c->parents[i]);
        pg__comp_parents_clear(c);
        return PG_OK;
    }
    st = pg__coh_check_inputs(rt, c, s->device);
    if (!st)
        st = accept(rt, c, name);
    if (st)
        return st;
    if ((st = pg__issue(rt, c, s, work, ctx)) != PG_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", pg_last_error());
        accepted_not_issued(rt, c);
        return pg__error(st, "%s", why);
    }
    return PG_OK;
}

/* Issue, in submission order, the held-back computations nothing holds back any more. */
static pg_status issue_pending(pg__runtime *rt) {
    pg_status first = PG_OK;
    pg__comp **link = &rt->pending_head, *prev = NULL;
    while (*link) {
        pg__comp *c = *link;
        c->blocker = find_blocker(c);
        if (c->blocker) {
            prev = c;
            link = &c->next;
            continue;
        }
        /* While schedule waits for device memory with the lock dropped, c stays listed and
         * marked as its own blocker, so that work submitted meanwhile that depends on it is
         * held back too; then the list is walked again from its head. */
        int again;
        pg__comp *next = c->next; /* scheduling puts c on the in-flight list, which links it */
        c->blocker = c;
        pg__comp_ref(c);
        pg_status st = schedule(rt, c, &again);
        pg__comp_unref(rt, c);
        if (again) {
            link = &rt->pending_head;
            prev = NULL;
            continue;
        }
        c->blocker = NULL;
        *link = next;
        if (rt->pending_tail == c)
            rt->pending_tail = prev;
        if (c->state != PG__ISSUED)
            c->next = NULL;
        rt->stats.pending--;
        if (st) {
            /* Nobody waits on a failed computation forever: it counts as finished. */
            pg__log(rt, 1, "held-back kernel %s #%llu failed: %s", c->kernel->name,
                    (unsigned long long)c->id, pg_last_error());
            if (!first)
                first = st;
            pg__coh_outputs_failed(rt, c, pg_last_error()); /* never a stale value */
            pg__comp_finish_host(rt, c);
        }
        pg__comp_unref(rt, c);
    }
    pthread_cond_broadcast(&rt->cond);
    return first;
}

/* May a new access to a, mapped by `old`, share that mapping? Only while nothing submitted
 * after the mapping conflicts with the access: otherwise the access must see that later
 * work, which itself waits for the mapping to end. A write is shared only by its holders'
 * nested accesses: another thread's access comes after the write, and waits for it as a
 * kernel would (holders unknown: shared, as it always was). */
static int map_covers(const pg__array *a, const pg__comp *old, int write) {
    if (old->kind == PG__HOST_WRITE)
        return a->hist.writer == old && (!write || a->hist.nreaders == 0) &&
               (old->holders_lost || pg__wait_held_by_self(old));
    if (write)
        return 0; /* a read mapping upgraded to a write: handled by the caller */
    for (int r = 0; r < a->hist.nreaders; r++)
        if (a->hist.readers[r] == old)
            return 1;
    return 0;
}

pg_status pg__exec_host_begin(pg__runtime *rt, pg__array *a, pg_access access) {
    int write = (access & PG_ACCESS_OUT) != 0;
    pg__comp *old = a->map_comp;
    while (old && !map_covers(a, old, write) &&
           (old->kind == PG__HOST_WRITE || !write || !pg__wait_held_by_self(old))) {
        /* Later work conflicts with this access and waits for the mapping to end: so must we. */
        if (pg__wait_held_by_self(old))
            return pg__wait_deadlock_error(old);
        pg_status st = pg__wait_host(rt);
        if (st)
            return st;
        old = a->map_comp;
    }
    if (old && map_covers(a, old, write)) {
        a->map_count++; /* nested access within what is already granted */
        pg__wait_hold(old);
        return PG_OK;
    }
    pg__carg arg = {a, access};
    pg__comp **ps = NULL;
    int n = 0;
    pg_status st = pg__dag_parents(rt, &arg, 1, &ps, &n, NULL, 0);
    for (int i = 0; !st && i < n; i++) {
        pg__comp *b = ps[i] == old ? NULL : pg__wait_self_blocker(ps[i]);
        if (b)
            st = pg__wait_deadlock_error(b);
    }
    pg__comp *c = st ? NULL : pg__comp_new(rt, write ? PG__HOST_WRITE : PG__HOST_READ);
    if (!st && !c)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (!st)
        c->args = c->args_in;
    void *host = NULL;
    if (!st)
        st = pg__array_buffer(a, 0, NULL, &host);
    if (st) {
        for (int i = 0; i < n; i++)
            pg__comp_unref(rt, ps[i]);
        pg__free(ps);
        if (c)
            pg__comp_unref(rt, c);
        return st;
    }
    c->args[0] = arg;
    c->nargs = 1;
    pg__array_ref(a);
    c->parents = ps;
    c->nparents = n;
    if (old) { /* an upgrade: the read part's holders hold the write part */
        memcpy(c->holder, old->holder, sizeof c->holder);
        c->nholders = old->nholders;
        c->holders_lost = old->holders_lost;
    }
    pg__wait_hold(c);
    st = accept(rt, c, write ? "host_write" : "host_read");
    if (st) {
        pg__comp_unref(rt, c);
        return st;
    }
    c->state = PG__OPEN;
    c->timing.start_ns = pg__now_ns() - rt->epoch_ns;
    a->map_comp = c; /* the reference from comp_new */
    a->map_count++;
    if (old) {
        /* A read access upgraded to a write: the read part ends here. */
        old->timing.end_ns = c->timing.start_ns;
        pg__dag_record_timing(rt, old);
        pg__comp_finish_host(rt, old);
        pg__comp_unref(rt, old);
        /* Work held back behind the read part (submitted between the two) may go now; this
         * access is ordered after it. */
        st = issue_pending(rt);
    }
    /* A writer of a held back behind another array's mapping has not placed its result yet:
     * locating the current copy before it is issued would read a stale one. */
    for (int i = 0; !st && i < c->nparents; i++)
        if (c->parents[i] != old)
            st = pg__wait_issued(rt, c->parents[i]);
    pg__comp *wait = NULL;
    if (!st && (access & PG_ACCESS_IN))
        st = pg__issue_to_host(rt, c, a, &wait);
    if (!st && write)
        pg__coh_write(rt, c, a, 0);
    for (int i = 0; !st && i < c->nparents; i++)
        if (c->parents[i] != old)
            st = pg__wait_comp(rt, c->parents[i]);
    if (!st && wait)
        st = pg__wait_comp(rt, wait);
    if (!st && wait && wait->err)
        st = pg__coh_value_failed(rt, c, a, wait);
    if (wait)
        pg__comp_unref(rt, wait);
    if (st) {
        pg__exec_host_end(rt, a); /* the caller gets no access, so nothing will end it */
        return st;
    }
    c->timing.start_ns = pg__now_ns() - rt->epoch_ns;
    return PG_OK;
}

pg_status pg__exec_release(pg__runtime *rt) {
    return issue_pending(rt);
}

pg_status pg__exec_host_end(pg__runtime *rt, pg__array *a) {
    if (!a->map_count)
        return pg__error(PG_ERROR_STATE, "array %llu is not mapped", (unsigned long long)a->id);
    pg__comp *c = a->map_comp;
    pg__wait_unhold(c);
    if (--a->map_count)
        return PG_OK;
    a->map_comp = NULL;
    c->timing.end_ns = pg__now_ns() - rt->epoch_ns;
    pg__dag_record_timing(rt, c);
    pg__comp_finish_host(rt, c);
    pg__comp_unref(rt, c);
    return issue_pending(rt);
}

pg_status pg__exec_sync(pg__runtime *rt) {
    for (;;) {
        pg__comp_sweep(rt, 1 << 30);
        if (rt->pending_head) {
            pg__comp *b = pg__wait_self_blocker(rt->pending_head);
            if (b)
                return pg__wait_deadlock_error(b);
            pg_status st = pg__wait_host(rt);
            if (st)
                return st;
            continue;
        }
        if (!rt->inflight_head && rt->ranks && rt->hooks->ranks_busy(rt)) { /* ranks' messages */
            pg_status st = pg__wait_host(rt);
            if (st)
                return st;
            continue;
        }
        if (!rt->inflight_head)
            return PG_OK;
        /* The newest work on the oldest one's stream: waiting for it settles the whole stream,
         * and the next sweep releases all of it without asking the device again. */
        pg__comp *w = rt->inflight_head;
        if (w->state == PG__ISSUED && w->stream && w->stream->last &&
            w->stream->last->state == PG__ISSUED)
            w = w->stream->last;
        pg_status st = pg__wait_comp(rt, w);
        if (st)
            return st;
    }
}

/* A device access's own work: after the foreign stream's work, the copy in from a foreign
 * address (none when src is 0). */
typedef struct foreign_ctx {
    uint64_t src;
    size_t bytes;
    uint64_t stream;
    void *buf;
} foreign_ctx;

static pg_status foreign_work(pg__runtime *rt, pg__comp *c, pg__stream *s, void *ctx) {
    foreign_ctx *f = ctx;
    (void)c;
    pg_status st = PG_OK;
    if (f->stream) /* a copy in, or an adoption (pg_array_adopt_device): after their work */
        st = rt->ops->stream_wait_foreign(rt->b, s->b, f->stream);
    if (!st && f->src)
        st = rt->ops->copy(rt->b, s->b, s->device, f->buf, s->device,
                           (const void *)(uintptr_t)f->src, f->bytes, NULL);
    return st;
}

/* A device access for another CUDA library: a computation on a stream of `dev` that makes the
 * array current there (copies, zero fill), optionally copies `bytes` in from a foreign address
 * after the foreign stream's work, and completes on that stream. The caller gets the address
 * and the native stream after which it is ready, and nothing waits on the host. */
pg_status pg__exec_device_access(pg__runtime *rt, pg__array *a, int dev, pg_access access,
                                 uint64_t src, size_t bytes, uint64_t foreign, void **ptr,
                                 uint64_t *stream) {
    if (a->kind != PG__A_ROOT || a->pieces)
        return pg__error(PG_ERROR_ARGUMENT,
                         "array %llu is %s: device addresses for other libraries are given for "
                         "whole arrays that no view cuts (copy the rows into an array of their "
                         "own with a kernel)",
                         (unsigned long long)a->id,
                         a->kind == PG__A_VIEW ? "a view (pg_array_slice)" : "cut by views");
    if (a->map_count)
        return pg__error(PG_ERROR_STATE,
                         "array %llu is mapped on the host (a view is open): release it first",
                         (unsigned long long)a->id);
    int write = (access & PG_ACCESS_OUT) != 0;
    pg__carg arg = {a, access};
    pg__comp **ps = NULL;
    int n = 0;
    pg_status st = pg__dag_parents(rt, &arg, 1, &ps, &n, NULL, 0);
    if (st)
        return st;
    /* Parents held back behind another array's mapping: wait for them to be issued. */
    for (int i = 0; !st && i < n; i++)
        if (ps[i]->state == PG__PENDING || ps[i]->state == PG__OPEN)
            st = pg__wait_comp(rt, ps[i]);
    pg__comp *c = st ? NULL : pg__comp_new(rt, write ? PG__HOST_WRITE : PG__HOST_READ);
    if (!st && !c)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (!st)
        c->args = c->args_in;
    pg__stream *s = NULL;
    void *buf = NULL;
    if (!st)
        st = pg__stream_get_new(rt, dev, &s);
    int zeroed = !st && a->fresh && !a->dev[dev];
    if (!st)
        st = pg__array_buffer(a, PG__LOC(dev), s, &buf);
    if (!st) {
        c->args[0] = arg;
        c->nargs = 1;
        pg__array_ref(a);
        c->parents = ps;
        c->nparents = n;
        ps = NULL;
        st = accept(rt, c, src ? "device_write (foreign)" : "device_access");
    }
    if (st) {
        for (int i = 0; ps && i < n; i++)
            pg__comp_unref(rt, ps[i]);
        pg__free(ps);
        if (c)
            pg__comp_unref(rt, c);
        return st;
    }
    foreign_ctx f = {src, bytes, foreign, buf};
    st = pg__issue(rt, c, s, foreign_work, &f);
    if (st) {
        accepted_not_issued(rt, c);
        pg__comp_unref(rt, c);
        return st;
    }
    c->timing.start_ns = c->timing.end_ns = pg__now_ns() - rt->epoch_ns;
    pg__dag_record_timing(rt, c);
    if (write)
        pg__coh_write(rt, c, a, PG__LOC(dev));
    else if (zeroed)
        pg__comp_set(rt, &a->ready[PG__LOC(dev)], c);
    a->dev_pinned |= 1u << dev; /* the address is the other library's now: never evicted */
    *ptr = buf;
    *stream = rt->ops->stream_handle(rt->b, s->b);
    pg__comp_unref(rt, c); /* the in-flight list and the array's history keep it */
    return PG_OK;
}

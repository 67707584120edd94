/* bounds.c: check=bounds for kernels given views, on CPU devices. A view is a pointer into its
 * root's buffer, so the guards around that buffer (devices/host/host_guard.c) are the array's
 * ends, not the view's: a kernel writing past a view's rows would change the rows next to it
 * unnoticed, and whether the write shows depends on where the pieces live. In checked mode each
 * view parameter gets a buffer of its own between guards, on the launch's stream: the view's
 * rows are copied in, the kernel runs on that buffer, and the rows are copied back when the
 * parameter may be written. An access outside the rows faults in a guard (or writes the redzone
 * before them) and fails the kernel with a message naming the parameter and the rows; the copy
 * back is then not made (a failed device runs nothing more), so the array's other rows keep
 * their values. The buffers are freed once their launch is seen done (reap), or at close. */
#include "core/bounds.h"
#include "core/capture.h"
#include "core/comp.h"

#include "base/alloc.h"
#include "devices/registry.h"

#include <stdio.h>

typedef struct staged {
    pg__comp *c; /* referenced: its event follows the copies back */
    int dev;
    void *buf;
} staged;

struct pg__staging {
    staged *e;
    int n, cap;
};

/* Free the buffers of launches known to be done; with `all`, ask the device too (close). */
static void reap(pg__runtime *rt, int all) {
    pg__staging *g = rt->staging;
    if (!g)
        return;
    int k = 0;
    for (int i = 0; i < g->n; i++) {
        staged *e = &g->e[i];
        int done = pg__comp_known_done(e->c) || (all && pg__comp_done(rt, e->c));
        if (!done) {
            g->e[k++] = *e;
            continue;
        }
        rt->ops->dev_free(rt->b, e->dev, e->buf);
        pg__comp_unref(rt, e->c);
    }
    g->n = k;
}

void pg__bounds_free(pg__runtime *rt) {
    pg__staging *g = rt->staging;
    if (!g)
        return;
    reap(rt, 1);
    /* A launch never seen done (a close that gave up on a kernel) may still use its buffers,
     * and its computation what it holds: both are left, as the close leaves them. */
    pg__free(g->e);
    pg__free(g);
    rt->staging = NULL;
}

static pg_status keep(pg__runtime *rt, pg__comp *c, int dev, void *buf) {
    pg__staging *g = rt->staging;
    if (!g && !(g = rt->staging = pg__calloc(1, sizeof *g)))
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 16;
        staged *e = pg__realloc(g->e, (size_t)cap * sizeof *e);
        if (!e)
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        g->e = e;
        g->cap = cap;
    }
    pg__comp_ref(c);
    g->e[g->n++] = (staged){c, dev, buf};
    return PG_OK;
}

/* "parameter 1 (y) of kernel 'fill': a view, rows [0, 8) of array 3, 32 bytes"; a part of a
 * split launch: "the range its blocks declare, rows [...)" */
static void label(const pg__comp *c, int i, const pg__array *p, uint64_t elems, char *out,
                  size_t cap) {
    const pg__array *r = p->store;
    uint64_t row = r->shape[0] > 0 ? r->size / (uint64_t)r->shape[0] : 1;
    const char *name = c->kernel->params[i].name;
    snprintf(out, cap,
             "parameter %d (%s) of kernel '%s': %s, rows [%llu, %llu) of array %llu, %llu bytes",
             i + 1, name[0] ? name : "?", c->kernel->name,
             c->block_count ? "the range its blocks declare (split launch)" : "a view",
             (unsigned long long)(p->off / row), (unsigned long long)((p->off + elems) / row),
             (unsigned long long)p->id, (unsigned long long)(elems * pg_dtype_size(p->dtype)));
}

/* The launch itself: a part of a split launch (core/split.c) runs its range of blocks, each
 * array pointer moved back from its range's first element to the argument's (shift). */
static pg_status run(pg__runtime *rt, pg__comp *c, pg__stream *s, void *fn, const uint64_t *shift) {
    int n = c->nslots;
    if (!c->block_count)
        return rt->ops->launch(rt->b, s->b, fn, c->grid, c->block, c->shared_mem, c->slots, n,
                               c->timed ? &c->timing : NULL);
    uint64_t slots[PG__MAX_PARAMS];
    for (int i = 0; i < n; i++)
        slots[i] = c->slots[i] - (c->slot_arg[i] >= 0 ? shift[i] : 0);
    return rt->ops->launch_range(rt->b, s->b, fn, c->grid, c->block, c->shared_mem, slots, n,
                                 c->block_first, c->block_count, c->timed ? &c->timing : NULL);
}

pg_status pg__bounds_launch(pg__runtime *rt, pg__comp *c, pg__stream *s, void *fn, void **buf) {
    int dev = s->device, n = c->nslots, any = 0;
    uint64_t elems[PG__MAX_PARAMS], shift[PG__MAX_PARAMS];
    void *orig[PG__MAX_PARAMS], *own[PG__MAX_PARAMS];
    reap(rt, 0);
    /* The slots hold each view parameter's elements until now; a part of a split launch, each
     * array parameter's range (its declared block range: what the part may touch). */
    for (int i = 0; i < n; i++) {
        elems[i] = c->slot_arg[i] >= 0 ? c->slots[i] : 0;
        orig[i] = c->slot_arg[i] >= 0 ? buf[c->slot_arg[i]] : NULL;
        shift[i] = c->slot_shift && c->slot_arg[i] >= 0
                       ? c->slot_shift[i] * pg_dtype_size(c->args[c->slot_arg[i]].array->dtype)
                       : 0;
        own[i] = NULL;
        if (c->slot_arg[i] >= 0)
            c->slots[i] = (uint64_t)(uintptr_t)orig[i];
    }
    /* A view sharing rows with another parameter (a different view, or the whole array) stays
     * in the array's buffer, unchecked: in a buffer of its own, its copy back would undo the
     * other's writes to the rows they share. */
    uint64_t ext[PG__MAX_PARAMS];
    for (int i = 0; i < n; i++) {
        const pg__array *a = c->slot_arg[i] >= 0 ? c->args[c->slot_arg[i]].array : NULL;
        ext[i] = elems[i] ? elems[i] : a ? a->store->size - a->off : 0;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n && elems[i]; j++) {
            const pg__array *a = c->args[c->slot_arg[i]].array;
            const pg__array *b = j != i && ext[j] ? c->args[c->slot_arg[j]].array : NULL;
            if (b && a->store == b->store && (a != b || ext[i] != ext[j]) &&
                a->off < b->off + ext[j] && b->off < a->off + ext[i])
                elems[i] = elems[j] = 0;
        }
    any = 0;
    for (int i = 0; i < n; i++)
        any |= elems[i] != 0;
    if (!any || !rt->dev[dev].entry->label_buffer) {
        if (rt->cap && !c->block_count)
            pg__plan_note_launch(rt, c, s, fn);
        else if (rt->cap)
            pg__plan_note_broken(rt);
        return run(rt, c, s, fn, shift);
    }
    if (rt->cap) /* a plan would keep buffers freed after this launch */
        pg__plan_note_broken(rt);
    pg_status st = PG_OK;
    int queued = 0;
    for (int i = 0; !st && i < n; i++) {
        if (!elems[i])
            continue;
        for (int j = 0; j < i && !own[i]; j++) /* the same view twice: one buffer */
            if (elems[j] == elems[i] && c->slot_arg[j] == c->slot_arg[i])
                own[i] = own[j];
        size_t bytes = elems[i] * pg_dtype_size(c->args[c->slot_arg[i]].array->dtype);
        if (!own[i]) {
            if ((st = rt->ops->dev_alloc(rt->b, dev, bytes, s->b, &own[i])) != PG_OK)
                break;
            if ((st = keep(rt, c, dev, own[i])) != PG_OK) {
                rt->ops->dev_free(rt->b, dev, own[i]);
                own[i] = NULL;
                break;
            }
            char what[384];
            label(c, i, c->args[c->slot_arg[i]].array, elems[i], what, sizeof what);
            rt->dev[dev].entry->label_buffer(own[i], what);
            st = rt->ops->copy(rt->b, s->b, dev, own[i], dev, orig[i], bytes, NULL);
            queued |= !st;
        }
        c->slots[i] = (uint64_t)(uintptr_t)own[i];
    }
    if (!st)
        st = run(rt, c, s, fn, shift);
    for (int i = 0; !st && i < n; i++) {
        int first = elems[i] != 0, out = 0;
        for (int j = 0; j < i && first; j++)
            first = own[j] != own[i];
        for (int j = i; j < n && first; j++) /* any parameter given this view writes it */
            out |= own[j] == own[i] && (c->kernel->params[j].access & PG_ACCESS_OUT);
        if (first && out)
            st =
                rt->ops->copy(rt->b, s->b, dev, orig[i], dev, own[i],
                              elems[i] * pg_dtype_size(c->args[c->slot_arg[i]].array->dtype), NULL);
    }
    for (int i = 0; i < n; i++)
        if (c->slot_arg[i] >= 0)
            c->slots[i] = (uint64_t)(uintptr_t)orig[i];
    if (st && queued) {
        /* The launch does not go ahead, and the computation counts as finished at once: the
         * copies already queued must be done before their buffers can go. */
        char why[1024];
        snprintf(why, sizeof why, "%s", pg_last_error());
        pg__bevent *e = NULL;
        if (rt->ops->event_record(rt->b, s->b, &e) == PG_OK) {
            (void)rt->ops->event_wait(rt->b, e);
            rt->ops->event_free(rt->b, e);
        }
        pg__error(st, "%s", why);
    }
    return st;
}

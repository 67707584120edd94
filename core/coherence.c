/* coherence.c: which locations hold each array's current value, where a copy must come from,
 * which computations each one reads from, and which values are lost or failed. State changes
 * when work is issued, not when it finishes, so later computations plan against the future
 * state (docs/ARCHITECTURE.md). It decides; core/issue.c hands the copies to streams. */
#include "core/coherence.h"
#include "core/check.h"
#include "core/array.h"
#include "core/comp.h"
#include "core/pieces.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has_buffer(const pg__array *a, int loc) {
    return pg__array_buf(a, loc) != NULL;
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

pg_status pg__coh_input_reserve(pg__comp *c) {
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

void pg__coh_input_add(pg__comp *c, pg__comp *p) {
    if (!p || p == c)
        return;
    for (int i = 0; i < c->ninputs; i++)
        if (c->inputs[i] == p)
            return;
    pg__comp_ref(p);
    c->inputs[c->ninputs++] = p;
}

pg_status pg__coh_source(pg__runtime *rt, const pg__array *a, int loc, int *src) {
    *src = -1;
    if (a->lost)
        return pg__error(PG_ERROR_DEVICE, "%s", a->lost);
    if (a->valid & PG__LOC_BIT(loc))
        return PG_OK;
    *src = best_source(rt, a, loc);
    if (*src < 0)
        return pg__error(PG_ERROR_INTERNAL, "array %llu has no valid copy anywhere",
                         (unsigned long long)a->id);
    return PG_OK;
}

void pg__coh_copied(pg__runtime *rt, pg__array *a, int dst, pg__comp *cc) {
    a->valid |= PG__LOC_BIT(dst);
    pg__comp_set(rt, &a->ready[dst], cc);
    PG__CHECK(pg__coh_invariant, rt, a);
}

static void clear_lost(pg__array *a);
static void value_lost_with(pg__runtime *rt, pg__array *a, int dev, int loc, const char *why);

void pg__coh_write(pg__runtime *rt, pg__comp *c, pg__array *a, int loc) {
    clear_lost(a); /* a new value */
    a->fresh = 0;
    /* Made by devices that compute nothing: no read may return it (core/array.c). A host
     * write keeps what it did not overwrite (its access reads the old value too). */
    a->uncomputed =
        rt->uncomputed && (c->kind != PG__HOST_WRITE || loc != 0 ||
                           (a->uncomputed && c->nargs > 0 && (c->args[0].access & PG_ACCESS_IN)));
    a->valid = PG__LOC_BIT(loc);
    for (int l = 0; l <= rt->ndev; l++)
        pg__comp_set(rt, &a->ready[l], l == loc ? c : NULL);
    PG__CHECK(pg__coh_invariant, rt, a);
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

/* The error of a's current value when one is known: lost, or made by a failed computation.
 * A producer known to have finished (its stream got past it) is finished here, so that its
 * failure is known; one still in flight is not asked about: that cost an event query per input
 * on every launch (1.3 us on an H200, as much as a third of the launch: a chain of kernels each
 * reading the last one's output paid it every time), and a failure found later still reaches
 * this computation, which settles as failed with the cause of what it read (core/comp.c). */
static pg_status value_error(pg__runtime *rt, pg__array *a) {
    for (int l = 0; l <= rt->ndev; l++) {
        pg__comp *r = a->ready[l];
        if ((a->valid & PG__LOC_BIT(l)) && r && r->state == PG__ISSUED && pg__comp_known_done(r))
            pg__comp_done(rt, r); /* then we learn whether it failed, without asking a device */
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

pg_status pg__coh_value_at(pg__runtime *rt, pg__array *a, int loc) {
    pg__array **ps;
    int n;
    pg__array_parts(a, &ps, &n);
    for (int i = 0; i < n; i++) {
        pg_status st = value_error(rt, ps[i]);
        if (!st && !(ps[i]->valid & PG__LOC_BIT(loc)) && !ps[i]->fresh)
            st = pg__error(PG_ERROR_DEVICE,
                           "array %llu: its value is no longer at location %d (its device failed "
                           "while it was being made there)",
                           (unsigned long long)a->id, loc);
        if (st)
            return st;
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
    for (int i = 0; i < rt->narrays; i++) { /* a view: its root's pieces (again: no change) */
        pg__array **ps;
        int np;
        pg__array_parts(rt->arrays[i]->store, &ps, &np);
        for (int k = 0; k < np; k++)
            value_lost_with(rt, ps[k], dev, loc, why);
    }
}

/* Device dev failed: a's copy there is gone; a is lost when it was the only current one. */
static void value_lost_with(pg__runtime *rt, pg__array *a, int dev, int loc, const char *why) {
    if (!(a->valid & PG__LOC_BIT(loc)))
        return;
    a->valid &= ~PG__LOC_BIT(loc);
    for (int l = 0; l <= rt->ndev; l++)
        if ((a->valid & PG__LOC_BIT(l)) && pending_copy_from(a->ready[l], loc))
            a->valid &= ~PG__LOC_BIT(l);
    if (a->valid || a->lost)
        return;
    pg__comp *r = a->ready[loc];
    char m[1536];
    if (r && r->err) {
        set_lost(a, value_message(a, r->err));
        return;
    }
    snprintf(m, sizeof m,
             "array %llu was lost with device %d: its only current copy was there (%s)",
             (unsigned long long)a->id, dev, why);
    set_lost(a, pg__strdup(m));
}

void pg__coh_faults_check(pg__runtime *rt) {
    if (!rt->ops->device_fault)
        return;
    char why[512];
    for (int d = 0; d < rt->ndev; d++)
        if (!rt->dev[d].failed && rt->ops->device_fault(rt->b, d, why, sizeof why))
            pg__coh_device_failed(rt, d, why);
}

pg_status pg__coh_fault_cause(pg__runtime *rt, pg_status st) {
    if (st != PG_ERROR_DEVICE)
        return st;
    char msg[2048], seen[512];
    snprintf(msg, sizeof msg, "%s", pg_last_error());
    for (int d = 0; d < rt->ndev; d++) {
        /* Known failed, or a fault the backend saw that no computation reported yet (asked
         * only: marking the device failed here would lose the values' own causes, which the
         * faulted kernel's settling gives). */
        const char *why = rt->dev[d].failed && rt->dev[d].failure ? rt->dev[d].failure : NULL;
        if (!why && !rt->dev[d].failed && rt->ops->device_fault &&
            rt->ops->device_fault(rt->b, d, seen, sizeof seen))
            why = seen;
        if (!why)
            continue;
        /* Not from a computation's failure: name the kernels that were running there. */
        char running[600] = "";
        size_t len = 0;
        int n = 0;
        for (pg__comp *c = rt->inflight_head; c && n < 4 && !strstr(why, "computation #");
             c = c->next) {
            if (c->kind != PG__KERNEL || c->device != d || !c->kernel)
                continue;
            int w = snprintf(running + len, sizeof running - len, "%s'%s' (computation #%llu)",
                             n++ ? ", " : "; unfinished there when it was found: kernel ",
                             c->kernel->name, (unsigned long long)c->id);
            if (w < 0 || (size_t)w >= sizeof running - len)
                break;
            len += (size_t)w;
        }
        return pg__error(st, "%s (%s %d failed earlier: %s%s)", msg,
                         rt->dev[d].info.device_class == PG_CLASS_CPU ? "CPU device" : "GPU", d,
                         why, running);
    }
    return pg__error(st, "%s", msg);
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

int pg__coh_invariant(const pg__runtime *rt, const pg__array *a, char *why, size_t cap) {
    unsigned long long id = (unsigned long long)a->id;
    uint32_t all = (1u << (rt->ndev + 1)) - 1;
    if (a->valid & ~all) {
        snprintf(why, cap, "array %llu is valid at locations %#x; the runtime has %d", id,
                 (unsigned)a->valid, rt->ndev + 1);
        return 1;
    }
    if (!a->valid && !a->lost) {
        snprintf(why, cap, "array %llu is valid nowhere, and not lost", id);
        return 1;
    }
    for (int l = 0; l <= rt->ndev; l++) {
        if (!(a->valid & PG__LOC_BIT(l)))
            continue;
        if (l > 0 && !a->fresh && !pg__array_buf(a, l)) {
            snprintf(why, cap, "array %llu is current on device %d, which has no buffer of it", id,
                     l - 1);
            return 1;
        }
        if (a->ready[l] && a->ready[l]->refs <= 0) {
            snprintf(why, cap,
                     "array %llu is current at location %d after computation #%llu, "
                     "which was freed",
                     id, l, (unsigned long long)a->ready[l]->id);
            return 1;
        }
    }
    return 0;
}

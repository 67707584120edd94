/* deps.c: what core tells dag/history about each computation, and the references it holds for
 * the nodes a history stores. Core decides which readers are done (dag never does): asking a
 * GPU costs about a microsecond, so a prune asks at most once per stream, about the newest
 * reader there (streams run in order: its completion settles all older ones). */
#include "core/deps.h"
#include "core/check.h"
#include "core/comp.h"

#include <stdio.h>
#include <stdlib.h>

static void drop(void *rt, void *c) {
    pg__comp_unref(rt, c);
}

pg_status pg__dag_parents(pg__runtime *rt, const pg__carg *args, int nargs, pg__comp ***out, int *n,
                          pg__comp **inline_buf, int inline_cap) {
    (void)rt;
    /* A kernel has at most PG__MAX_PARAMS arguments; a plan's replay has every piece its calls
     * touch, which may be more. */
    pg__history *h_in[PG__MAX_PARAMS], **h = h_in;
    pg_access acc_in[PG__MAX_PARAMS], *acc = acc_in;
    if (nargs > PG__MAX_PARAMS) {
        h = pg__malloc((size_t)nargs * sizeof *h);
        acc = pg__malloc((size_t)nargs * sizeof *acc);
        if (!h || !acc) {
            pg__free(h);
            pg__free(acc);
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        }
    }
    for (int i = 0; i < nargs; i++) {
        h[i] = &args[i].array->hist;
        acc[i] = args[i].access;
    }
    int cap = pg__history_parents_max(h, acc, nargs);
    pg__comp **list = cap <= inline_cap ? inline_buf : pg__malloc((size_t)cap * sizeof *list);
    if (cap > inline_cap && !list) {
        if (h != h_in) {
            pg__free(h);
            pg__free(acc);
        }
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    int k = pg__history_parents(h, acc, nargs, (void **)list);
    for (int i = 0; i < k; i++)
        pg__comp_ref(list[i]);
    *out = list;
    *n = k;
    if (h != h_in) {
        pg__free(h);
        pg__free(acc);
    }
    return PG_OK;
}

/* Known done, or a host access (settled without asking a device): then a reader orders
 * nothing any more. */
static int keep_reader(void *rt, void *node) {
    pg__comp *c = node;
    return !((pg__comp_known_done(c) || !c->stream) && pg__comp_done(rt, c));
}

static void prune(pg__runtime *rt, pg__history *h) {
    pg__stream *asked[32];
    int nasked = 0;
    for (int r = h->nreaders - 1; r >= 0; r--) {
        pg__comp *c = h->readers[r];
        if (pg__comp_known_done(c) || !c->stream)
            continue;
        int seen = 0;
        for (int i = 0; i < nasked && !seen; i++)
            seen = asked[i] == c->stream;
        if (!seen && nasked < (int)(sizeof asked / sizeof *asked)) {
            asked[nasked++] = c->stream;
            (void)pg__comp_done(rt, c);
        }
    }
    pg__history_prune(h, keep_reader, drop, rt);
}

static int not_known_done(void *rt, void *node) {
    (void)rt;
    return !pg__comp_known_done(node);
}

void pg__dag_drop_done(pg__runtime *rt, pg__array *a) {
    pg__history_prune(&a->hist, not_known_done, drop, rt);
}

pg_status pg__dag_commit(pg__runtime *rt, pg__comp *c) {
    /* Reserve first, so a failure leaves every history as it was. */
    for (int i = 0; i < c->nargs; i++) {
        pg__history *h = &c->args[i].array->hist;
        if (c->args[i].access & PG_ACCESS_OUT)
            continue;
        if (pg__history_prune_due(h))
            prune(rt, h);
        pg_status st = pg__history_reserve(h);
        if (st)
            return st;
    }
    for (int i = 0; i < c->nargs; i++) {
        pg__history *h = &c->args[i].array->hist;
        pg__comp_ref(c);
        if (c->args[i].access & PG_ACCESS_OUT)
            pg__history_set_writer(h, c, drop, rt);
        else
            pg__history_add_reader(h, c);
    }
    for (int i = 0; PG__CHECKS && i < c->nargs; i++)
        PG__CHECK(pg__deps_invariant, rt, c->args[i].array, c);
    return PG_OK;
}

void pg__dag_forget(pg__runtime *rt, pg__array *a) {
    pg__history_clear(&a->hist, drop, rt);
}

static int freed(const pg__comp *p, const char *what, const pg__array *a, char *why, size_t cap) {
    if (p && p->refs > 0)
        return 0;
    snprintf(why, cap, "%s of array %llu is %s", what, (unsigned long long)a->id,
             p ? "a freed computation" : "missing");
    return 1;
}

int pg__deps_invariant(const pg__runtime *rt, const pg__array *a, const pg__comp *c, char *why,
                       size_t cap) {
    (void)rt;
    if (a->hist.writer && freed(a->hist.writer, "the last writer", a, why, cap))
        return 1;
    for (int r = 0; r < a->hist.nreaders; r++)
        if (freed(a->hist.readers[r], "a reader", a, why, cap))
            return 1;
    for (int i = 0; c && i < c->nparents; i++)
        if (freed(c->parents[i], "a parent of the computation committed", a, why, cap))
            return 1;
    return 0;
}

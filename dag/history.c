/* history.c: dependency inference from each array's history (DESIGN decision 3): a read
 * depends on the array's last writer; a write on the last writer and every reader since.
 * Two readers are never ordered. */
#include "core/internal.h"

#include <stdlib.h>

/* Readers lists grow with every read between two writes; past this many, finished readers
 * are dropped (they order nothing any more). */
#define PRUNE_AT 32

static int add_unique(pg__comp **list, int n, pg__comp *c) {
    for (int i = 0; i < n; i++)
        if (list[i] == c)
            return n;
    list[n] = c;
    return n + 1;
}

pg_status pg__dag_parents(pg__runtime *rt, const pg__carg *args, int nargs, pg__comp ***out, int *n,
                          pg__comp **inline_buf, int inline_cap) {
    (void)rt;
    int cap = 0;
    for (int i = 0; i < nargs; i++)
        cap += 1 + ((args[i].access & PG_ACCESS_OUT) ? args[i].array->nreaders : 0);
    pg__comp **list = cap <= inline_cap ? inline_buf : pg__malloc((size_t)cap * sizeof *list);
    if (cap > inline_cap && !list)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    int k = 0;
    for (int i = 0; i < nargs; i++) {
        pg__array *a = args[i].array;
        if (a->last_writer)
            k = add_unique(list, k, a->last_writer);
        if (args[i].access & PG_ACCESS_OUT)
            for (int r = 0; r < a->nreaders; r++)
                k = add_unique(list, k, a->readers[r]);
    }
    for (int i = 0; i < k; i++)
        pg__comp_ref(list[i]);
    *out = list;
    *n = k;
    return PG_OK;
}

/* Drop finished readers. Asking a GPU whether work finished costs about a microsecond, so
 * this asks at most once per stream (about the newest reader there: streams run in order, so
 * its completion settles all older ones), and the next prune waits until the list has doubled:
 * amortized, a read costs O(1) questions however long the device lags. */
static void prune(pg__runtime *rt, pg__array *a) {
    pg__stream *asked[PRUNE_AT];
    int nasked = 0;
    for (int r = a->nreaders - 1; r >= 0; r--) {
        pg__comp *c = a->readers[r];
        if (pg__comp_known_done(c) || !c->stream)
            continue;
        int seen = 0;
        for (int i = 0; i < nasked && !seen; i++)
            seen = asked[i] == c->stream;
        if (!seen && nasked < PRUNE_AT) {
            asked[nasked++] = c->stream;
            (void)pg__comp_done(rt, c);
        }
    }
    int k = 0;
    for (int r = 0; r < a->nreaders; r++) {
        pg__comp *c = a->readers[r];
        /* Known done or a host access: comp_done settles it without asking the device. */
        if ((pg__comp_known_done(c) || !c->stream) && pg__comp_done(rt, c))
            pg__comp_unref(rt, c);
        else
            a->readers[k++] = c;
    }
    a->nreaders = k;
    a->prune_at = 2 * k > PRUNE_AT ? 2 * k : PRUNE_AT;
}

pg_status pg__dag_commit(pg__runtime *rt, pg__comp *c) {
    /* Reserve first, so a failure leaves every history as it was. */
    for (int i = 0; i < c->nargs; i++) {
        pg__array *a = c->args[i].array;
        if (c->args[i].access & PG_ACCESS_OUT)
            continue;
        if (a->nreaders >= (a->prune_at ? a->prune_at : PRUNE_AT))
            prune(rt, a);
        if (a->nreaders == a->capreaders) {
            int capn = a->capreaders ? a->capreaders * 2 : 4;
            pg__comp **r = pg__realloc(a->readers, (size_t)capn * sizeof *r);
            if (!r)
                return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
            a->readers = r;
            a->capreaders = capn;
        }
    }
    for (int i = 0; i < c->nargs; i++) {
        pg__array *a = c->args[i].array;
        if (c->args[i].access & PG_ACCESS_OUT) {
            pg__comp_set(rt, &a->last_writer, c);
            for (int r = 0; r < a->nreaders; r++)
                pg__comp_unref(rt, a->readers[r]);
            a->nreaders = 0;
            a->prune_at = 0;
        } else {
            pg__comp_ref(c);
            a->readers[a->nreaders++] = c;
        }
    }
    return PG_OK;
}

void pg__dag_forget(pg__runtime *rt, pg__array *a) {
    pg__comp_set(rt, &a->last_writer, NULL);
    for (int r = 0; r < a->nreaders; r++)
        pg__comp_unref(rt, a->readers[r]);
    pg__free(a->readers);
    a->readers = NULL;
    a->nreaders = a->capreaders = 0;
}

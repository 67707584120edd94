/* history.c: each array's last writer and readers since, and the parents they give a new
 * computation (history.h). Bookkeeping only: no references, no notion of "done". */
#include "dag/history.h"

#include "base/alloc.h"
#include "base/error.h"

#include <stdlib.h>

/* Readers lists grow with every read between two writes; past this many, finished readers
 * are dropped (they order nothing any more). */
#define PRUNE_AT 32

int pg__history_parents_max(pg__history *const *h, const pg_access *access, int n) {
    int cap = 0;
    for (int i = 0; i < n; i++)
        cap += 1 + ((access[i] & PG_ACCESS_OUT) ? h[i]->nreaders : 0);
    return cap;
}

static int add_unique(void **list, int n, void *c) {
    for (int i = 0; i < n; i++)
        if (list[i] == c)
            return n;
    list[n] = c;
    return n + 1;
}

int pg__history_parents(pg__history *const *h, const pg_access *access, int n, void **out) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (h[i]->writer)
            k = add_unique(out, k, h[i]->writer);
        if (access[i] & PG_ACCESS_OUT)
            for (int r = 0; r < h[i]->nreaders; r++)
                k = add_unique(out, k, h[i]->readers[r]);
    }
    return k;
}

int pg__history_prune_due(const pg__history *h) {
    return h->nreaders >= (h->prune_at ? h->prune_at : PRUNE_AT);
}

void pg__history_prune(pg__history *h, int (*keep)(void *ctx, void *node), pg__history_drop drop,
                       void *ctx) {
    int k = 0;
    for (int r = 0; r < h->nreaders; r++) {
        void *c = h->readers[r];
        if (keep(ctx, c))
            h->readers[k++] = c;
        else
            drop(ctx, c);
    }
    h->nreaders = k;
    h->prune_at = 2 * k > PRUNE_AT ? 2 * k : PRUNE_AT;
}

pg_status pg__history_reserve(pg__history *h) {
    if (h->nreaders < h->cap)
        return PG_OK;
    int cap = h->cap ? h->cap * 2 : 4;
    void **r = pg__realloc(h->readers, (size_t)cap * sizeof *r);
    if (!r)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    h->readers = r;
    h->cap = cap;
    return PG_OK;
}

void pg__history_add_reader(pg__history *h, void *node) {
    h->readers[h->nreaders++] = node;
}

void pg__history_set_writer(pg__history *h, void *node, pg__history_drop drop, void *ctx) {
    void *old = h->writer;
    h->writer = node;
    if (old)
        drop(ctx, old);
    for (int r = 0; r < h->nreaders; r++)
        drop(ctx, h->readers[r]);
    h->nreaders = 0;
    h->prune_at = 0;
}

void pg__history_clear(pg__history *h, pg__history_drop drop, void *ctx) {
    pg__history_set_writer(h, NULL, drop, ctx);
    pg__free(h->readers);
    h->readers = NULL;
    h->cap = 0;
}

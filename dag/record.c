/* record.c: the most recent PG__DAG_HISTORY computations as plain records (a ring indexed by
 * id), kept after the computations themselves are freed, for the DAG export and the trace. */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

static pg__record *slot_of(pg__runtime *rt, uint64_t id) {
    pg__record *r = &rt->records[id % PG__DAG_HISTORY];
    return r->id == id ? r : NULL;
}

static void clear(pg__record *r) {
    pg__free(r->arg_ids);
    pg__free(r->arg_access);
    pg__free(r->parent_ids);
    memset(r, 0, sizeof *r);
}

pg_status pg__dag_record(pg__runtime *rt, pg__comp *c, const char *name) {
    uint64_t *ids = pg__malloc(((size_t)c->nargs + 1) * sizeof *ids);
    pg_access *acc = pg__malloc(((size_t)c->nargs + 1) * sizeof *acc);
    uint64_t *parents = pg__malloc(((size_t)c->nparents + 1) * sizeof *parents);
    if (!ids || !acc || !parents) {
        pg__free(ids);
        pg__free(acc);
        pg__free(parents);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    pg__record *r = &rt->records[c->id % PG__DAG_HISTORY];
    clear(r);
    r->id = c->id;
    r->kind = c->kind;
    r->submit_ns = pg__now_ns() - rt->epoch_ns;
    strncpy(r->name, name, sizeof r->name - 1);
    r->device = PG_HOST;
    r->stream = -1;
    r->nargs = c->nargs;
    r->arg_ids = ids;
    r->arg_access = acc;
    for (int i = 0; i < c->nargs; i++) {
        ids[i] = c->args[i].array->id;
        acc[i] = c->args[i].access;
    }
    r->nparents = c->nparents;
    r->parent_ids = parents;
    for (int i = 0; i < c->nparents; i++)
        parents[i] = c->parents[i]->id;
    r->bytes = c->copy_bytes;
    r->src = c->copy_src;
    r->dst = c->copy_dst;
    return PG_OK;
}

void pg__dag_record_drop(pg__runtime *rt, pg__comp *c) {
    pg__record *r = slot_of(rt, c->id);
    if (r)
        clear(r);
}

void pg__dag_record_device(pg__runtime *rt, pg__comp *c) {
    pg__record *r = slot_of(rt, c->id);
    if (r) {
        r->device = c->device;
        r->stream = c->stream ? c->stream->index : -1;
    }
}

pg_status pg__dag_record_add_parent(pg__runtime *rt, pg__comp *c, uint64_t parent) {
    pg__record *r = slot_of(rt, c->id);
    if (!r)
        return PG_OK; /* out of the history already */
    /* Grown one at a time: a list with room to spare would change the size of these small,
     * long-lived blocks, which then pin the holes freed arrays leave in the heap. */
    uint64_t *p = pg__realloc(r->parent_ids, ((size_t)r->nparents + 1) * sizeof *p);
    if (!p)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    p[r->nparents++] = parent;
    r->parent_ids = p;
    return PG_OK;
}

void pg__dag_record_timing(pg__runtime *rt, pg__comp *c) {
    pg__record *r = slot_of(rt, c->id);
    if (r) {
        r->start_ns = c->timing.start_ns;
        r->end_ns = c->timing.end_ns;
    }
}

void pg__dag_records_free(pg__runtime *rt) {
    if (!rt->records)
        return;
    for (int i = 0; i < PG__DAG_HISTORY; i++)
        clear(&rt->records[i]);
    pg__free(rt->records);
    rt->records = NULL;
}

/* record.c: the ring of the most recent computations' records (record.h). */
#include "dag/record.h"

#include "base/alloc.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

static pg__record *slot_of(pg__record *ring, uint64_t id) {
    pg__record *r = &ring[id % PG_DAG_HISTORY];
    return r->id == id ? r : NULL;
}

static void clear(pg__record *r) {
    pg__free(r->arg_ids);
    pg__free(r->arg_access);
    pg__free(r->parent_ids);
    memset(r, 0, sizeof *r);
}

pg__record *pg__records_new(void) {
    return pg__calloc(PG_DAG_HISTORY, sizeof(pg__record));
}

void pg__records_free(pg__record *ring) {
    if (!ring)
        return;
    for (int i = 0; i < PG_DAG_HISTORY; i++)
        clear(&ring[i]);
    pg__free(ring);
}

pg_status pg__records_add(pg__record *ring, const pg__record_new *n) {
    uint64_t *ids = pg__malloc(((size_t)n->nargs + 1) * sizeof *ids);
    pg_access *acc = pg__malloc(((size_t)n->nargs + 1) * sizeof *acc);
    uint64_t *parents = pg__malloc(((size_t)n->nparents + 1) * sizeof *parents);
    if (!ids || !acc || !parents) {
        pg__free(ids);
        pg__free(acc);
        pg__free(parents);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    pg__record *r = &ring[n->id % PG_DAG_HISTORY];
    clear(r);
    r->id = n->id;
    r->kind = n->kind;
    r->submit_ns = n->submit_ns;
    strncpy(r->name, n->name, sizeof r->name - 1);
    r->device = PG_HOST;
    r->stream = -1;
    r->nargs = n->nargs;
    r->arg_ids = ids;
    r->arg_access = acc;
    if (n->nargs) {
        memcpy(ids, n->arg_ids, (size_t)n->nargs * sizeof *ids);
        memcpy(acc, n->arg_access, (size_t)n->nargs * sizeof *acc);
    }
    r->nparents = n->nparents;
    r->parent_ids = parents;
    if (n->nparents)
        memcpy(parents, n->parent_ids, (size_t)n->nparents * sizeof *parents);
    r->bytes = n->bytes;
    r->src = n->src;
    r->dst = n->dst;
    return PG_OK;
}

void pg__records_place(pg__record *ring, uint64_t id, int device, int stream) {
    pg__record *r = slot_of(ring, id);
    if (r) {
        r->device = device;
        r->stream = stream;
    }
}

pg_status pg__records_add_parent(pg__record *ring, uint64_t id, uint64_t parent) {
    pg__record *r = slot_of(ring, id);
    if (!r)
        return PG_OK; /* overwritten already: nothing to show it in */
    uint64_t *p = pg__realloc(r->parent_ids, ((size_t)r->nparents + 1) * sizeof *p);
    if (!p)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for a DAG edge");
    p[r->nparents++] = parent;
    r->parent_ids = p;
    return PG_OK;
}

void pg__records_drop(pg__record *ring, uint64_t id) {
    pg__record *r = slot_of(ring, id);
    if (r)
        clear(r);
}

void pg__records_timing(pg__record *ring, uint64_t id, uint64_t start_ns, uint64_t end_ns) {
    pg__record *r = slot_of(ring, id);
    if (r) {
        r->start_ns = start_ns;
        r->end_ns = end_ns;
    }
}

/* record.c: the ring of the most recent computations' records (record.h). */
#include "dag/record.h"

#include "base/alloc.h"
#include "base/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static pg__record *slot_of(pg__record *ring, uint64_t id) {
    pg__record *r = &ring[id % PG_DAG_HISTORY];
    return r->id == id ? r : NULL;
}

static void clear(pg__record *r) {
    if (r->arg_ids != r->ids_in)
        pg__free(r->arg_ids);
    if (r->arg_access != r->access_in)
        pg__free(r->arg_access);
    if (r->parent_ids != r->parents_in)
        pg__free(r->parent_ids);
    memset(r, 0, sizeof *r);
}

/* The ring is large (PG_DAG_HISTORY records, ~15 MB) and each launch writes the next slot: on
 * small pages the first pass faults a fresh page in every ~17 launches, which cost 0.3-0.45 us a
 * launch on the VMs we measure (issue "The scheduler must not be the bottleneck"). Huge pages
 * fault 512 times less often. The memory stays calloc's (fresh mappings come zeroed, untouched);
 * only its 2 MiB-aligned interior can be huge, and the advice is only advice. */
static void advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

pg__record *pg__records_new(void) {
    pg__record *ring = pg__calloc(PG_DAG_HISTORY, sizeof(pg__record));
    if (ring)
        advise_huge(ring, PG_DAG_HISTORY * sizeof(pg__record));
    return ring;
}

void pg__records_free(pg__record *ring) {
    if (!ring)
        return;
    for (int i = 0; i < PG_DAG_HISTORY; i++)
        clear(&ring[i]);
    pg__free(ring);
}

pg__record *pg__records_add(pg__record *ring, uint64_t id, int nargs, int nparents) {
    pg__record *r = &ring[id % PG_DAG_HISTORY];
    clear(r);
    int big_args = nargs > PG__RECORD_INLINE, big_parents = nparents > PG__RECORD_INLINE;
    r->arg_ids = big_args ? pg__malloc((size_t)nargs * sizeof *r->arg_ids) : r->ids_in;
    r->arg_access = big_args ? pg__malloc((size_t)nargs * sizeof *r->arg_access) : r->access_in;
    r->parent_ids =
        big_parents ? pg__malloc((size_t)nparents * sizeof *r->parent_ids) : r->parents_in;
    if (!r->arg_ids || !r->arg_access || !r->parent_ids) {
        clear(r); /* frees what was allocated; the slot is empty */
        pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        return NULL;
    }
    r->id = id;
    r->device = PG_HOST;
    r->stream = -1;
    r->src = r->dst = PG_HOST;
    r->nargs = nargs;
    r->nparents = nparents;
    return r;
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
    if (r->parent_ids == r->parents_in && r->nparents < PG__RECORD_INLINE) {
        r->parents_in[r->nparents++] = parent;
        return PG_OK;
    }
    uint64_t *old = r->parent_ids == r->parents_in ? NULL : r->parent_ids;
    uint64_t *p = pg__realloc(old, ((size_t)r->nparents + 1) * sizeof *p);
    if (!p)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for a DAG edge");
    if (!old)
        memcpy(p, r->parents_in, (size_t)r->nparents * sizeof *p);
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

const char *pg__dag_kind_str(pg_dag_kind kind) {
    switch (kind) {
    case PG_DAG_KERNEL:
        return "kernel";
    case PG_DAG_HOST_READ:
        return "host_read";
    case PG_DAG_HOST_WRITE:
        return "host_write";
    case PG_DAG_COPY:
        return "copy";
    }
    return "?";
}

const char *pg__access_str(pg_access access) {
    switch (access) {
    case PG_ACCESS_IN:
        return "in";
    case PG_ACCESS_OUT:
        return "out";
    case PG_ACCESS_INOUT:
        return "inout";
    }
    return "?";
}

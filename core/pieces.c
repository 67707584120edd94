/* pieces.c: arrays in pieces. pg_array_slice makes a view: a handle on rows [lo, hi) of an
 * array, usable wherever an array is (kernel argument, read, write, map, prefetch, free,
 * slice). Views cut their root at their ends; between cuts the root's value state lives in
 * pieces (internal arrays, see pg__array in internal.h), each with its own valid locations,
 * ready computations, history and lost value, and the root's buffers at an offset. A
 * computation on a root or a view works on the pieces it covers, so two computations depend on
 * each other only where the pieces they touch overlap (and one writes), a copy moves only the
 * stale pieces, and a write invalidates only its pieces elsewhere. Cutting a piece gives both
 * halves its state (references to the same computations); the old piece is superseded: work
 * already issued keeps it, new work and plans use the halves. Pieces never merge: an array has
 * at most 2 × (views made) + 1 of them. Lock held throughout. */
#include "core/internal.h"

#include "base/alloc.h"

#include <string.h>

static size_t esize(const pg__array *a) {
    return pg_dtype_size(a->dtype);
}

void pg__array_parts(pg__array *a, pg__array ***parts, int *n) {
    pg__array *r = a->store;
    if (a->kind == PG__A_PIECE || !r->pieces) {
        *parts = a->kind == PG__A_PIECE ? &a->one : &r->one;
        *n = 1;
        return;
    }
    int lo = 0, hi = r->npieces - 1; /* the first piece at or after a's start: a cut is there */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (r->pieces[mid]->off < a->off)
            lo = mid + 1;
        else
            hi = mid;
    }
    int end = lo;
    while (end < r->npieces && r->pieces[end]->off < a->off + a->size)
        end++;
    *parts = &r->pieces[lo];
    *n = end - lo;
}

pg__array *pg__array_piece_at(pg__array *r, uint64_t e) {
    if (!r->pieces)
        return r;
    int lo = 0, hi = r->npieces - 1; /* the last piece starting at or before e */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (r->pieces[mid]->off <= e)
            lo = mid;
        else
            hi = mid - 1;
    }
    return r->pieces[lo];
}

static void drop_comp(void *rt, void *c) {
    pg__comp_unref(rt, c);
}

static pg__array *piece_new(pg__array *r, uint64_t off, uint64_t size) {
    pg__array *p = pg__calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->rt = r->rt;
    p->id = r->id;
    p->refs = 1; /* the root's list */
    p->kind = PG__A_PIECE;
    p->store = r;
    p->off = off;
    p->dtype = r->dtype;
    p->ndim = 1;
    p->shape[0] = (int64_t)size;
    p->size = size;
    p->nbytes = size * esize(r);
    p->one = p;
    p->live_index = -1;
    pg__array_ref(r); /* the elements stay while a piece is used */
    return p;
}

/* p gets q's value state: the same valid locations, computations and lost value. */
static pg_status copy_state(pg__runtime *rt, pg__array *p, const pg__array *q) {
    p->owner = q->owner; /* ranks (core/ranks.c) */
    p->rank_stale = q->rank_stale;
    p->rank_version = q->rank_version;
    p->valid = q->valid;
    p->fresh = q->fresh;
    for (int l = 0; l < PG__NLOC; l++)
        if (q->ready[l])
            pg__comp_set(rt, &p->ready[l], q->ready[l]);
    if (q->hist.writer) {
        pg__comp_ref(q->hist.writer);
        pg__history_set_writer(&p->hist, q->hist.writer, drop_comp, rt);
    }
    for (int i = 0; i < q->hist.nreaders; i++) {
        if (pg__history_reserve(&p->hist))
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        pg__comp_ref(q->hist.readers[i]);
        pg__history_add_reader(&p->hist, q->hist.readers[i]);
    }
    if (q->lost && !(p->lost = pg__strdup(q->lost)))
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    return PG_OK;
}

/* Work held back behind a mapped array keeps the arrays it was submitted with: cutting one of
 * them now would leave that work on state no longer kept. */
static int held_back_uses(const pg__runtime *rt, const pg__array *a) {
    for (const pg__comp *c = rt->pending_head; c; c = c->next)
        for (int i = 0; i < c->nargs; i++)
            if (c->args[i].array == a)
                return 1;
    return 0;
}

static pg_status refuse(const pg__array *a, const char *why) {
    return pg__error(PG_ERROR_STATE, "pg_array_slice: array %llu %s", (unsigned long long)a->id,
                     why);
}

static pg_status cut_check(const pg__runtime *rt, const pg__array *a) {
    if (a->map_count)
        return refuse(a, "is mapped on the host (pg_array_map): unmap it before cutting it into "
                         "views");
    if (held_back_uses(rt, a))
        return refuse(a, "is used by work held back behind a mapped array: slice it once that "
                         "array is unmapped");
    return PG_OK;
}

static pg_status room(pg__array *r, int n) {
    if (n <= r->cappieces)
        return PG_OK;
    int cap = r->cappieces ? 2 * r->cappieces : 8;
    while (cap < n)
        cap *= 2;
    pg__array **np = pg__realloc(r->pieces, (size_t)cap * sizeof *np);
    if (!np)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    r->pieces = np;
    r->cappieces = cap;
    return PG_OK;
}

/* The root's state moves into its first piece, covering it all. A never-written root becomes
 * zeros on the host (its host copy is zero-filled when made) and wherever it has buffers: a
 * buffer made later for one piece would be zero-filled over the others' values. */
static pg_status first_piece(pg__runtime *rt, pg__array *r) {
    pg_status st = cut_check(rt, r);
    void *host = NULL;
    if (!st && r->fresh)
        st = pg__array_buffer(r, 0, NULL, &host);
    if (!st)
        st = room(r, 1);
    pg__array *p = st ? NULL : piece_new(r, 0, r->size);
    if (!st && !p)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (st) {
        if (r->pieces && !r->npieces) {
            pg__free(r->pieces);
            r->pieces = NULL;
            r->cappieces = 0;
        }
        return st;
    }
    if (r->fresh) {
        r->valid = PG__LOC_BIT(0);
        for (int d = 0; d < rt->ndev; d++)
            if (r->dev[d])
                r->valid |= PG__LOC_BIT(PG__LOC(d));
        r->fresh = 0;
    }
    p->valid = r->valid;
    /* and its ranks' state (core/ranks.c): a root written from the host on every rank is
     * current on its owner only, and owner= was given to the root */
    p->owner = r->owner;
    p->rank_stale = r->rank_stale;
    p->rank_version = r->rank_version;
    memcpy(p->ready, r->ready, sizeof p->ready);
    memset(r->ready, 0, sizeof r->ready);
    p->hist = r->hist;
    memset(&r->hist, 0, sizeof r->hist);
    p->lost = r->lost;
    r->lost = NULL;
    r->pieces[0] = p;
    r->npieces = 1;
    return PG_OK;
}

/* Make element `at` of root r the start of a piece. */
static pg_status cut(pg__runtime *rt, pg__array *r, uint64_t at) {
    if (at == 0 || at >= r->size)
        return PG_OK;
    pg_status st = r->pieces ? PG_OK : first_piece(rt, r);
    if (st)
        return st;
    pg__array *q = pg__array_piece_at(r, at);
    if (q->off == at)
        return PG_OK;
    if ((st = cut_check(rt, q)) || (st = room(r, r->npieces + 1)))
        return st;
    pg__array *a = piece_new(r, q->off, at - q->off);
    pg__array *b = a ? piece_new(r, at, q->off + q->size - at) : NULL;
    st = a && b ? PG_OK : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (!st)
        st = copy_state(rt, a, q);
    if (!st)
        st = copy_state(rt, b, q);
    if (st) {
        if (a)
            pg__array_unref(a);
        if (b)
            pg__array_unref(b);
        return st;
    }
    int i = 0;
    while (r->pieces[i] != q)
        i++;
    memmove(&r->pieces[i + 2], &r->pieces[i + 1], (size_t)(r->npieces - i - 1) * sizeof *r->pieces);
    r->pieces[i] = a;
    r->pieces[i + 1] = b;
    r->npieces++;
    q->superseded = 1;
    pg__array_unref(q);
    return PG_OK;
}

void pg__array_user_gone(pg__array *a) {
    pg__array *r = a->store;
    if (--r->users > 0 || !r->pieces)
        return;
    pg__array **ps = r->pieces;
    int n = r->npieces;
    r->pieces = NULL;
    r->npieces = r->cappieces = 0;
    for (int i = 0; i < n; i++)
        pg__array_unref(ps[i]); /* each goes once no computation uses it */
    pg__free(ps);
}

pg_status pg__comp_expand_pieces(pg__runtime *rt, pg__comp *c) {
    int any = 0;
    for (int i = 0; i < c->nargs && !any; i++)
        any = c->args[i].array->kind == PG__A_VIEW || c->args[i].array->pieces;
    if (!any)
        return PG_OK;
    pg__carg part[PG__MAX_PARAMS];
    int first[PG__MAX_PARAMS], n = 0;
    for (int i = 0; i < c->nargs; i++) {
        pg__array **ps;
        int np;
        pg__array_parts(c->args[i].array, &ps, &np);
        for (int k = 0; k < np; k++) {
            int j = 0;
            while (j < n && part[j].array != ps[k])
                j++;
            if (j == n && n == PG__MAX_PARAMS)
                return pg__error(PG_ERROR_ARGUMENT,
                                 "kernel '%s': its arrays are cut by views into more than %d "
                                 "pieces; make fewer views of the arrays it takes whole",
                                 c->kernel ? c->kernel->name : "?", PG__MAX_PARAMS);
            if (j == n)
                part[n++] = (pg__carg){ps[k], 0};
            part[j].access |= c->args[i].access;
            if (k == 0)
                first[i] = j;
        }
    }
    pg__carg *dst = n <= PG__INLINE ? c->args_in : pg__malloc((size_t)n * sizeof *dst);
    if (!dst)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    (void)rt;
    for (int j = 0; j < n; j++)
        pg__array_ref(part[j].array);
    for (int i = 0; i < c->nargs; i++)
        pg__array_unref(c->args[i].array);
    if (c->args != c->args_in)
        pg__free(c->args);
    memcpy(dst, part, (size_t)n * sizeof *dst);
    c->args = dst;
    for (int s = 0; s < c->nslots; s++)
        if (c->slot_arg[s] >= 0)
            c->slot_arg[s] = (int8_t)first[c->slot_arg[s]];
    c->nargs = n;
    return PG_OK;
}

/* ---- the public door */

static pg_status add_view(pg__runtime *rt, pg__array *a, int64_t lo, int64_t hi, uint64_t row,
                          pg_array **out) {
    pg__array *v = pg__calloc(1, sizeof *v);
    if (!v)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pg__array *r = a->store;
    v->rt = rt;
    v->refs = 1;
    v->kind = PG__A_VIEW;
    v->store = r;
    v->off = a->off + (uint64_t)lo * row;
    v->dtype = a->dtype;
    v->ndim = a->ndim;
    memcpy(v->shape, a->shape, sizeof v->shape);
    v->shape[0] = hi - lo;
    v->size = (uint64_t)(hi - lo) * row;
    v->nbytes = v->size * esize(a);
    v->one = v;
    pg_status st = pg__array_add_live(rt, v);
    if (st) {
        pg__free(v);
        return st;
    }
    if (!(v->handle = pg__handle_new(PG__H_ARRAY, v, rt))) {
        pg__array_remove_live(rt, v);
        pg__free(v);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of handles");
    }
    v->id = r->id; /* the DAG shows the array's id for work on its views */
    r->users++;
    pg__array_ref(r);
    *out = (pg_array *)(uintptr_t)v->handle;
    return PG_OK;
}

pg_status pg_array_slice(pg_array *h, int64_t lo, int64_t hi, pg_array **out) {
    pg__error_clear();
    if (!out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_array_slice: out must not be NULL");
    pg__array *a = pg__enter_array(h, "pg_array_slice");
    if (!a)
        return PG_ERROR_STATE;
    pg__runtime *rt = a->rt;
    int64_t rows = a->shape[0];
    pg_status st = PG_OK;
    if (lo < 0 || hi > rows || lo >= hi)
        st = pg__error(PG_ERROR_ARGUMENT,
                       "pg_array_slice: rows [%lld, %lld) of array %llu: expected 0 <= lo < hi "
                       "<= %lld (its rows along the first axis)",
                       (long long)lo, (long long)hi, (unsigned long long)a->id, (long long)rows);
    uint64_t row = a->size / (uint64_t)rows;
    if (!st)
        st = cut(rt, a->store, a->off + (uint64_t)lo * row);
    if (!st)
        st = cut(rt, a->store, a->off + (uint64_t)hi * row);
    if (!st)
        st = add_view(rt, a, lo, hi, row, out);
    pg__leave(rt);
    return st;
}

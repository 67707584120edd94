/* pieces.c: arrays in pieces. pg_array_slice makes a view: a handle on rows [lo, hi) of an
 * array, usable wherever an array is (kernel argument, read, write, map, prefetch, free,
 * slice). Views cut their root at their ends; between cuts the root's value state lives in
 * pieces (internal arrays, see pg__array in core/objects.h), each with its own valid locations,
 * ready computations, history and lost value, and the root's buffers at an offset. A
 * computation on a root or a view works on the pieces it covers, so two computations depend on
 * each other only where the pieces they touch overlap (and one writes), a copy moves only the
 * stale pieces, and a write invalidates only its pieces elsewhere. Cutting a piece gives both
 * halves its state (references to the same computations); the old piece is superseded: work
 * already issued keeps it, new work and plans use the halves. Pieces merge back when no live
 * view has an end between them and their states agree (merge_free below): an array has at most
 * 2 × (live views) + 1 pieces, plus those whose work is unfinished. Lock held throughout (a
 * merge that must wait drops it, as every wait does). */
#include "core/pieces.h"
#include "core/array.h"
#include "core/comp.h"
#include "core/handle.h"
#include "core/issue.h"
#include "core/waits.h"

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
    p->uncomputed = q->uncomputed;
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
    p->uncomputed = r->uncomputed;
    r->uncomputed = 0;
    r->pieces[0] = p;
    r->npieces = 1;
    return PG_OK;
}

/* Make element `at` of root r the start of a piece. */
static pg_status cut(pg__runtime *rt, pg__array *r, uint64_t at) {
    if (at == 0 || at >= r->size)
        return PG_OK;
    pg_status st = PG_OK;
    /* Transfers of ranks in flight keep the pieces they move (core/ranks.c): they end first. */
    if (rt->ranks && rt->hooks->ranks_busy(rt) &&
        (!r->pieces || pg__array_piece_at(r, at)->off != at))
        st = rt->hooks->ranks_quiesce(rt);
    if (!st && !r->pieces)
        st = first_piece(rt, r);
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
    if (!st)
        a->view_ends = q->view_ends; /* a starts where q did */
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

pg_status pg__array_cut(pg__runtime *rt, pg__array *r, uint64_t at) {
    return cut(rt, r, at);
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

/* ---- merging back. A cut no live view has an end at is kept only while the pieces on either
 * side disagree: 100 throw-away windows a[i:i+8] would otherwise leave an array in 108 pieces for
 * good, and a kernel on all of it over the 64 a launch may cover. */

void pg__pieces_view_gone(pg__array *v) {
    pg__array *r = v->store;
    uint64_t ends[2] = {v->off, v->off + v->size};
    for (int k = 0; k < 2 && r->pieces; k++) {
        if (ends[k] == 0 || ends[k] >= r->size)
            continue; /* the array's own ends are no cuts */
        pg__array *p = pg__array_piece_at(r, ends[k]);
        if (p->off == ends[k] && p->view_ends > 0 && --p->view_ends == 0)
            r->merge_due = 1;
    }
}

/* Finished without error, or none: it orders nothing and says nothing about the value any
 * more. One known to have finished (its stream got past it) is finished here, as coherence
 * does before a read: no device is asked. */
static int settled(pg__runtime *rt, pg__comp *c) {
    if (!c)
        return 1;
    if (c->state == PG__ISSUED && pg__comp_known_done(c))
        pg__comp_done(rt, c);
    return c->state == PG__DONE && !c->err;
}

static int failed(const pg__comp *c) {
    return c && c->state == PG__DONE && c->err;
}

/* An open host access, or work held back behind one: its coherence comes later, on the piece
 * it was given, so that piece must stay. */
static int held(const pg__comp *c) {
    return c && (c->state == PG__OPEN || c->state == PG__PENDING);
}

enum { MERGE_NO = -1, MERGE_WAIT = 0, MERGE_OK = 1, MERGE_COPY = 2 };

/* The computation standing for x (of one piece) and y (of the next) in their merge: the same
 * one, or (not strict) the unfinished one when the other has settled. MERGE_WAIT with *wait the
 * one to wait for first; MERGE_NO when a failure would spread to the other piece, or a host
 * access (or work held back behind one) has either. Strict, a merge adds no computation to
 * either piece's rows: cut again later, they would depend on work that never touched them. */
static int pick(pg__runtime *rt, pg__comp *x, pg__comp *y, int strict, pg__comp **out,
                pg__comp **wait) {
    if (held(x) || held(y))
        return MERGE_NO; /* a launch does not wait for a host access (it holds work back) */
    if (x == y) {
        *out = x;
        return MERGE_OK;
    }
    int sx = settled(rt, x), sy = settled(rt, y);
    if (failed(x) || failed(y))
        return MERGE_NO;
    if (sx && sy) {
        *out = NULL;
        return MERGE_OK;
    }
    if (!strict && (sx || sy)) {
        *out = sx ? y : x;
        return MERGE_OK;
    }
    *wait = sx ? y : x; /* issued, not known to be done */
    return MERGE_WAIT;
}

typedef struct merged {
    int strict;
    uint32_t valid;
    pg__comp *ready[PG__NLOC], *writer;
    pg__comp **readers;
    int nreaders;
} merged;

/* A reader of either piece, unless it finished (it orders nothing); strict, only one reading
 * the other piece (of) too. */
static int add_reader(pg__runtime *rt, merged *m, pg__comp *c, const pg__history *of,
                      pg__comp **wait) {
    if (held(c))
        return MERGE_NO;
    if (settled(rt, c) || c->state == PG__DONE)
        return MERGE_OK;
    int both = !m->strict;
    for (int i = 0; i < of->nreaders && !both; i++)
        both = of->readers[i] == c;
    if (!both) {
        *wait = c;
        return MERGE_WAIT;
    }
    for (int i = 0; i < m->nreaders; i++)
        if (m->readers[i] == c)
            return MERGE_OK;
    m->readers[m->nreaders++] = c;
    return MERGE_OK;
}

/* The state of p and q (next to each other) as one piece, if they agree: a location holds
 * the value where both hold theirs (strict: the same locations), and each computation of the
 * two is the same, or settled (not strict: in one of them). */
static int agree(pg__runtime *rt, const pg__array *p, const pg__array *q, merged *m,
                 pg__comp **wait) {
    if (p->lost || q->lost || p->fresh != q->fresh || p->map_count || q->map_count || p->map_comp ||
        q->map_comp || p->owner != q->owner || p->rank_stale != q->rank_stale ||
        p->rank_version != q->rank_version)
        return MERGE_NO;
    m->valid = p->valid & q->valid;
    if (!m->valid)
        return MERGE_COPY; /* no location holds both: a copy is needed first */
    if (m->strict && p->valid != q->valid)
        return MERGE_NO; /* a location would lose a current copy */
    int k;
    for (int l = 0; l < PG__NLOC; l++) {
        m->ready[l] = NULL;
        if ((m->valid & PG__LOC_BIT(l)) &&
            (k = pick(rt, p->ready[l], q->ready[l], m->strict, &m->ready[l], wait)) != MERGE_OK)
            return k;
    }
    if ((k = pick(rt, p->hist.writer, q->hist.writer, m->strict, &m->writer, wait)) != MERGE_OK)
        return k;
    for (int i = 0; i < p->hist.nreaders; i++)
        if ((k = add_reader(rt, m, p->hist.readers[i], &q->hist, wait)) != MERGE_OK)
            return k;
    for (int i = 0; i < q->hist.nreaders; i++)
        if ((k = add_reader(rt, m, q->hist.readers[i], &p->hist, wait)) != MERGE_OK)
            return k;
    return MERGE_OK;
}

/* Pieces i and i + 1 of root r as one, if their states agree. */
static int merge_pair(pg__runtime *rt, pg__array *r, int i, int strict, pg__comp **wait,
                      pg_status *st) {
    pg__array *p = r->pieces[i], *q = r->pieces[i + 1];
    merged m = {0};
    m.strict = strict;
    int nr = p->hist.nreaders + q->hist.nreaders;
    if (nr && !(m.readers = pg__malloc((size_t)nr * sizeof *m.readers))) {
        *st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        return MERGE_NO;
    }
    int k = agree(rt, p, q, &m, wait);
    if (k == MERGE_OK && (held_back_uses(rt, p) || held_back_uses(rt, q)))
        k = MERGE_NO;
    pg__array *a = k == MERGE_OK ? piece_new(r, p->off, p->size + q->size) : NULL;
    if (k == MERGE_OK && !a) {
        *st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        k = MERGE_NO;
    }
    for (int j = 0; a && j < m.nreaders && !*st; j++) {
        if (!(*st = pg__history_reserve(&a->hist))) {
            pg__comp_ref(m.readers[j]);
            pg__history_add_reader(&a->hist, m.readers[j]);
        }
    }
    if (*st) {
        if (a)
            pg__array_unref(a);
        pg__free(m.readers);
        return MERGE_NO;
    }
    if (k != MERGE_OK) {
        pg__free(m.readers);
        return k;
    }
    a->view_ends = p->view_ends;
    a->valid = m.valid;
    a->uncomputed = p->uncomputed | q->uncomputed; /* simulated values nobody computed */
    a->owner = p->owner;
    a->rank_stale = p->rank_stale;
    a->rank_version = p->rank_version;
    for (int l = 0; l < PG__NLOC; l++)
        if (m.ready[l])
            pg__comp_set(rt, &a->ready[l], m.ready[l]);
    if (m.writer) {
        pg__comp_ref(m.writer);
        pg__history_set_writer(&a->hist, m.writer, drop_comp, rt);
    }
    pg__free(m.readers);
    for (int d = 0; d < PG_MAX_DEVICES; d++) {
        a->dev_use[d] = p->dev_use[d] > q->dev_use[d] ? p->dev_use[d] : q->dev_use[d];
        a->dev_evicted[d] =
            p->dev_evicted[d] > q->dev_evicted[d] ? p->dev_evicted[d] : q->dev_evicted[d];
    }
    a->dev_pinned = p->dev_pinned | q->dev_pinned;
    r->pieces[i] = a;
    memmove(&r->pieces[i + 1], &r->pieces[i + 2], (size_t)(r->npieces - i - 2) * sizeof *r->pieces);
    r->npieces--;
    p->superseded = q->superseded = 1; /* work already issued keeps them, as after a cut */
    pg__array_unref(p);
    pg__array_unref(q);
    return MERGE_OK;
}

/* One piece left: the root holds its state again, as before its first cut (a plain array:
 * pg_array_device_pointer takes it again). Not while a host access or held-back work has the
 * piece: it ends on the piece it began on. */
static int unpiece(pg__runtime *rt, pg__array *r) {
    pg__array *p = r->pieces[0];
    int busy = p->map_count || p->map_comp || held(p->hist.writer) || held_back_uses(rt, p);
    for (int l = 0; l < PG__NLOC; l++)
        busy |= held(p->ready[l]);
    for (int i = 0; i < p->hist.nreaders; i++)
        busy |= held(p->hist.readers[i]);
    if (busy)
        return 0;
    r->valid = p->valid;
    r->fresh = 0;
    memcpy(r->ready, p->ready, sizeof r->ready);
    memset(p->ready, 0, sizeof p->ready);
    r->hist = p->hist;
    memset(&p->hist, 0, sizeof p->hist);
    r->lost = p->lost;
    p->lost = NULL;
    r->uncomputed = p->uncomputed;
    r->owner = p->owner;
    r->rank_stale = p->rank_stale;
    r->rank_version = p->rank_version;
    pg__free(r->pieces);
    r->pieces = NULL;
    r->npieces = r->cappieces = 0;
    p->superseded = 1;
    pg__array_unref(p);
    return 1;
}

/* Merge the pieces of root r that no live view keeps apart and whose states agree (strictly:
 * the same locations and computations, so no piece gains a dependency or loses a copy). With
 * `wait` (a launch would cover too many pieces), first wait for the issued work that keeps them
 * apart (the lock is dropped: the pieces are looked at afresh after each wait), and copy a
 * piece to where its neighbour's value is when no location holds both. */
static pg_status merge_free(pg__runtime *rt, pg__array *r, int wait) {
    int left = 0; /* a cut no view needs stays */
    for (int i = 0; r->pieces && i + 1 < r->npieces;) {
        if (r->pieces[i + 1]->view_ends) {
            i++;
            continue;
        }
        pg__comp *w = NULL;
        pg_status st = PG_OK;
        int k = merge_pair(rt, r, i, !wait, &w, &st);
        if (st)
            return st;
        if (k == MERGE_OK)
            continue; /* the merged piece with the next */
        if (k == MERGE_WAIT && wait) {
            if ((st = pg__wait_comp(rt, w)) != PG_OK)
                return st;
            i = 0;
            left = 0;
            continue;
        }
        pg__array *p = r->pieces[i];
        if (k == MERGE_COPY && wait && p->valid) {
            /* The next piece's value to where this one's is (its lowest location: the host,
             * else its device), then they agree. */
            int loc = __builtin_ctz(p->valid);
            if (pg__issue_prefetch(rt, r->pieces[i + 1], loc) == PG_OK &&
                (r->pieces[i + 1]->valid & PG__LOC_BIT(loc)))
                continue;
            pg__error_clear(); /* no room there: the pieces stay apart */
        }
        left = 1;
        i++;
    }
    if (r->pieces && r->npieces == 1 && !unpiece(rt, r))
        left = 1;
    r->merge_due = left;
    return PG_OK;
}

/* The roots c takes with cuts no view needs: merged where they can be. Not on several ranks
 * (each rank's state differs; the pieces must stay the same on all) nor while a plan is
 * captured (its arguments are the pieces of then). */
static pg_status merge_args(pg__runtime *rt, pg__comp *c, int wait) {
    if (rt->ranks || rt->cap)
        return PG_OK;
    for (int i = 0; i < c->nargs; i++) {
        pg__array *r = c->args[i].array->store;
        int skip = !r->merge_due || !r->pieces;
        for (int j = 0; j < c->nargs && !skip; j++) /* a piece given as such stays */
            skip = (j < i && c->args[j].array->store == r) ||
                   (c->args[j].array->kind == PG__A_PIECE && c->args[j].array->store == r);
        pg_status st = skip ? PG_OK : merge_free(rt, r, wait);
        if (st)
            return st;
    }
    return PG_OK;
}

pg_status pg__comp_expand_pieces(pg__runtime *rt, pg__comp *c) {
    /* check=bounds: each view parameter's elements, for a buffer of its own (core/bounds.c);
     * pieces are given by a caller that expanded already */
    if (__builtin_expect(rt->opt.check_bounds, 0) && c->kernel && !c->kernel->is_task)
        for (int s = 0; s < c->nslots; s++) {
            const pg__array *a = c->slot_arg[s] >= 0 ? c->args[c->slot_arg[s]].array : NULL;
            if (a && a->kind != PG__A_PIECE)
                c->slots[s] = a->kind == PG__A_VIEW && a->size < a->store->size ? a->size : 0;
        }
    int any = 0;
    for (int i = 0; i < c->nargs && !any; i++)
        any = c->args[i].array->kind == PG__A_VIEW || c->args[i].array->pieces;
    if (!any)
        return PG_OK;
    pg_status st = merge_args(rt, c, 0);
    if (st)
        return st;
    pg__carg part[PG__MAX_PARAMS];
    int first[PG__MAX_PARAMS], n = 0, waited = 0;
again:
    n = 0;
    for (int i = 0; i < c->nargs; i++) {
        pg__array **ps;
        int np;
        pg__array_parts(c->args[i].array, &ps, &np);
        for (int k = 0; k < np; k++) {
            int j = 0;
            while (j < n && part[j].array != ps[k])
                j++;
            if (j == n && n == PG__MAX_PARAMS && !waited) {
                /* Pieces kept apart only by unfinished work: wait for it and merge them. */
                waited = 1;
                if ((st = merge_args(rt, c, 1)) != PG_OK)
                    return st;
                goto again;
            }
            if (j == n && n == PG__MAX_PARAMS)
                return pg__error(PG_ERROR_ARGUMENT,
                                 "kernel '%s': its arrays are cut into more than %d pieces, "
                                 "the most one launch may cover; live views keep an array cut "
                                 "at their ends (pieces whose views are gone merge back once "
                                 "their values are in the same place): keep fewer views of "
                                 "the arrays it takes whole alive, or launch it on views",
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
    uint64_t ends[2] = {v->off, v->off + v->size};
    for (int k = 0; k < 2; k++) { /* its cuts stay while it lives */
        pg__array *p = pg__array_piece_at(r, ends[k]);
        if (ends[k] > 0 && ends[k] < r->size && p->off == ends[k])
            p->view_ends++;
    }
    r->users++;
    pg__array_ref(r);
    *out = (pg_array *)(uintptr_t)v->handle;
    return PG_OK;
}

pg_status pg_array_slice(pg_array *h, int64_t lo, int64_t hi, pg_array **out) {
    pg__error_clear();
    /* The handle first: a freed array is the error to report, whatever else is wrong. */
    pg__array *a = pg__enter_array(h, "pg_array_slice");
    if (!a)
        return PG_ERROR_STATE;
    pg__runtime *rt = a->rt;
    if (!out) {
        pg__leave(rt);
        return pg__error(PG_ERROR_ARGUMENT, "pg_array_slice: out must not be NULL");
    }
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
    if (st && a->store->pieces)
        a->store->merge_due = 1; /* a cut made for a view that failed */
    pg__leave(rt);
    return st;
}

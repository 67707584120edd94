/* evict.c: device memory under pressure — counts the bytes of device buffers per device, keeps
 * them under device_memory_limit (and under what the device can give) by evicting least
 * recently used copies, and stops a device that ping-pongs instead of thrashing forever.
 *
 * Eviction. A copy on a device may go when no unfinished work uses it (its array's last
 * writer, readers and the producers of its copies are all finished) and it is not an argument
 * of the computation being placed. Clean copies (the value is current elsewhere, or the array
 * was never written) are freed at once; dirty ones (the device holds the only current value)
 * are copied to the host first: the copy is issued, the placement waits for it with the lock
 * dropped, and starts over, when the copy is clean and goes. A placement's buffers are all
 * allocated before its kernel is issued, with no unlock in between, so what is loaded for a
 * kernel is used by it before anything can evict it: eviction cannot livelock the way
 * StarPU's per-buffer allocation can (a task's two buffers evicting each other).
 *
 * Ping-pong. Consecutive kernels on one device whose data cannot be resident together still
 * make progress, but each one evicts what the next needs, and the device moves its whole
 * memory for every kernel. The rule: a load (a placement that allocates buffers on a device)
 * is a ping-pong load when at least half of the device's capacity (the limit, else the
 * device's memory) is bytes that the device's previous load evicted; PINGPONG_LOADS ping-pong
 * loads in a row on one device fail the last with PG_ERROR_OUT_OF_MEMORY naming the device,
 * the limit and the two working sets. Streaming never trips it: over a working set several
 * times the limit, what a kernel loads was evicted by earlier loads than the previous one
 * (three or more alternating sets of nearly the limit each reload what the load before the
 * previous one evicted), and a chain that loads less than half the capacity per kernel never
 * counts. As a backstop for what the structure above rules out, a thread whose placement
 * starts over MAX_RESTARTS times in a row (each time after waiting for other work to finish)
 * without getting its room fails the same way. */
#include "core/evict.h"
#include "core/check.h"
#include "core/array.h"
#include "core/capture.h"
#include "core/comp.h"
#include "core/issue.h"
#include "core/observe.h"
#include "core/pieces.h"
#include "core/util.h"
#include "core/waits.h"
#include "core/share.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PINGPONG_LOADS 8
#define MAX_RESTARTS 256
#define USER_DEPTH 8 /* held-back work followed to its parents this deep */

/* Consecutive placements of this thread that waited for room and started over. */
static _Thread_local int restarts;

typedef struct cand {
    pg__array *a;
    uint64_t use;
} cand;

static int by_use(const void *x, const void *y) {
    uint64_t u = ((const cand *)x)->use, v = ((const cand *)y)->use;
    return u < v ? -1 : u > v;
}

/* The bytes the device may hold: the limit, or 0 (none). */
static uint64_t limit_of(const pg__runtime *rt) {
    return rt->opt.device_memory_limit;
}

/* For the ping-pong rule: the limit, else the device's memory. */
static uint64_t capacity_of(const pg__runtime *rt, int dev) {
    uint64_t lim = limit_of(rt);
    return lim ? lim : rt->dev[dev].info.memory_bytes;
}

static void count_alloc(pg__runtime *rt, int dev, uint64_t bytes) {
    uint64_t used = rt->stats.device_bytes[dev] += bytes;
    if (used > rt->stats.device_bytes_peak[dev])
        rt->stats.device_bytes_peak[dev] = used;
    pg__share_bytes(rt, dev);
}

void pg__evict_forget(pg__runtime *rt, pg__array *a, int dev) {
    rt->stats.device_bytes[dev] -= a->nbytes;
    pg__share_bytes(rt, dev);
}

typedef struct waitlist {
    pg__comp **c;
    int n, cap;
    int failed;
} waitlist;

static void wait_add(waitlist *w, pg__comp *c) {
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 8;
        pg__comp **n = pg__realloc(w->c, (size_t)cap * sizeof *n);
        if (!n) {
            w->failed = 1;
            return;
        }
        w->c = n;
        w->cap = cap;
    }
    pg__comp_ref(c);
    w->c[w->n++] = c;
}

/* Add to w (if not NULL) the unfinished work that may use a buffer for p: p itself once issued;
 * for work not issued yet (held back behind a mapping, or a host access in progress), which
 * uses no device buffer itself, the parents it stands for in the arrays' histories (a writer
 * replaces the readers before it there). Returns how many there are, -1 if the chain of
 * such work is too long to follow. */
static int users_of(pg__runtime *rt, pg__comp *p, waitlist *w, int depth) {
    if (!p || pg__comp_done(rt, p))
        return 0;
    if (p->state == PG__ISSUED) {
        if (w)
            wait_add(w, p);
        return 1;
    }
    if (!depth)
        return -1;
    int n = 0;
    for (int i = 0; i < p->nparents; i++) {
        int k = users_of(rt, p->parents[i], w, depth - 1);
        if (k < 0)
            return -1;
        n += k;
    }
    return n;
}

/* The unfinished work that may still use a's buffers, added to w if not NULL: its history
 * and the producers of its copies. Asked for the array as a whole: a copy between two devices
 * reads one device's buffer from the other's stream. 0: idle; -1: unknown (busy). */
static int piece_users(pg__runtime *rt, pg__array *a, waitlist *w) {
    int n = 0, k;
    for (int l = 0; l <= rt->ndev; l++) {
        if ((k = users_of(rt, a->ready[l], w, USER_DEPTH)) < 0)
            return -1;
        n += k;
    }
    if ((k = users_of(rt, a->hist.writer, w, USER_DEPTH)) < 0)
        return -1;
    n += k;
    for (int r = 0; r < a->hist.nreaders; r++) {
        if ((k = users_of(rt, a->hist.readers[r], w, USER_DEPTH)) < 0)
            return -1;
        n += k;
    }
    return n;
}

/* The same for every piece of a root (its buffers hold them all). */
static int users(pg__runtime *rt, pg__array *a, waitlist *w) {
    pg__array **ps;
    int np, n = 0;
    pg__array_parts(a, &ps, &np);
    for (int i = 0; i < np; i++) {
        int k = piece_users(rt, ps[i], w);
        if (k < 0)
            return -1;
        n += k;
    }
    return n;
}

static int busy(pg__runtime *rt, pg__array *a) {
    return users(rt, a, NULL) != 0;
}

static int has_buffer(const pg__array *a, int loc) {
    return pg__array_buf(a, loc) != NULL;
}

/* Can a piece's copy on dev go without losing its current value? */
static int piece_clean(const pg__runtime *rt, const pg__array *a, int dev) {
    int loc = PG__LOC(dev);
    if (a->fresh || !(a->valid & PG__LOC_BIT(loc)))
        return 1;
    for (int l = 0; l <= rt->ndev; l++)
        if (l != loc && (a->valid & PG__LOC_BIT(l)) && has_buffer(a, l))
            return 1;
    return 0;
}

/* Can root a's buffer on dev go: is every piece's copy there clean? */
static int clean(const pg__runtime *rt, pg__array *a, int dev) {
    pg__array **ps;
    int np;
    pg__array_parts(a, &ps, &np);
    for (int i = 0; i < np; i++)
        if (!piece_clean(rt, ps[i], dev))
            return 0;
    return 1;
}

static void drop(pg__runtime *rt, pg__array *a, int dev) {
    int loc = PG__LOC(dev);
    pg__plan_note_broken(rt); /* a plan being captured may have used this address */
    rt->ops->dev_free(rt->b, dev, a->dev[dev]);
    a->dev[dev] = NULL;
    rt->stats.device_bytes[dev] -= a->nbytes;
    pg__share_bytes(rt, dev);
    pg__array **ps;
    int np;
    pg__array_parts(a, &ps, &np);
    for (int i = 0; i < np; i++) {
        if (!ps[i]->fresh) /* a never-written array is zeros wherever it gets a buffer */
            ps[i]->valid &= ~PG__LOC_BIT(loc);
        pg__comp_set(rt, &ps[i]->ready[loc], NULL);
    }
    a->dev_evicted[dev] = rt->dev[dev].loads + 1;
    rt->stats.evictions++;
    rt->stats.bytes_evicted += a->nbytes;
    pg__log(rt, 2, "evicted array %llu from device %d (%llu bytes)", (unsigned long long)a->id, dev,
            (unsigned long long)a->nbytes);
}

/* The copies on dev that could be evicted, least recently used first: not an argument of the
 * computation being placed (marked), not `keep`, not handed out to another library. */
static pg_status candidates(pg__runtime *rt, int dev, const pg__array *keep, uint64_t mark,
                            cand **out, int *n) {
    cand *cs = pg__malloc(((size_t)rt->narrays + 1) * sizeof *cs);
    if (!cs)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    int k = 0;
    for (int i = 0; i < rt->narrays; i++) {
        pg__array *a = rt->arrays[i];
        if (a->dev[dev] && a != keep && !(mark && a->evict_mark == mark) &&
            !(a->dev_pinned & (1u << dev)))
            cs[k++] = (cand){a, a->dev_use[dev]};
    }
    qsort(cs, (size_t)k, sizeof *cs, by_use);
    *out = cs;
    *n = k;
    return PG_OK;
}

/* Free clean copies no work uses, least recently used first, until the device holds at most
 * `target` bytes (asking whether work finished may release arrays the script freed, too);
 * returns the bytes freed. */
static uint64_t free_clean(pg__runtime *rt, int dev, cand *cs, int n, uint64_t target) {
    uint64_t freed = 0;
    for (int i = 0; i < n && rt->stats.device_bytes[dev] > target; i++) {
        pg__array *a = cs[i].a;
        if (!a->dev[dev] || !clean(rt, a, dev) || busy(rt, a))
            continue;
        freed += a->nbytes;
        drop(rt, a, dev);
    }
    return freed;
}

static pg_status no_room(pg__runtime *rt, int dev, uint64_t bytes, const char *what) {
    uint64_t lim = limit_of(rt);
    char cap[96];
    if (lim)
        snprintf(cap, sizeof cap, "under device_memory_limit %llu bytes", (unsigned long long)lim);
    else
        snprintf(cap, sizeof cap, "(the device is out of memory)");
    return pg__error(PG_ERROR_OUT_OF_MEMORY,
                     "device %d: no room for %llu more bytes %s%s: the %llu bytes held there are "
                     "in use by work that cannot finish first (held back behind a mapped array), "
                     "by an open mapping or by another library (pg_array_device_pointer); release "
                     "them or raise device_memory_limit",
                     dev, (unsigned long long)bytes, cap, what,
                     (unsigned long long)rt->stats.device_bytes[dev]);
}

/* Make w, a writer not issued yet (held back behind a mapping, or a host access still in its
 * waits), wait for p too. */
static pg_status add_parent(pg__runtime *rt, pg__comp *w, pg__comp *p) {
    pg__comp **ps = w->parents;
    if (ps && ps != w->parents_in) {
        ps = pg__realloc(ps, ((size_t)w->nparents + 1) * sizeof *ps);
    } else if (w->nparents < PG__INLINE) {
        ps = w->parents_in;
    } else {
        ps = pg__malloc(((size_t)w->nparents + 1) * sizeof *ps);
        if (ps)
            memcpy(ps, w->parents_in, (size_t)w->nparents * sizeof *ps);
    }
    if (!ps)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pg__comp_ref(p);
    ps[w->nparents++] = p;
    w->parents = ps;
    return pg__dag_record_add_parent(rt, w, p->id);
}

/* Copy a piece's only current value (on a device, which no unfinished work uses) to the host;
 * then a->ready[0] is the copy. The copy joins a's readers. Its last writer may be held back
 * (or a host access may be waiting for its parents): it has not written yet, and the copy
 * reads the value before it, so it becomes one of that writer's parents as well. */
static pg_status write_back(pg__runtime *rt, pg__array *a) {
    pg__comp *lw = a->hist.writer;
    pg_status st = pg__issue_prefetch(rt, a, 0);
    if (!st && !a->ready[0])
        st = pg__error(PG_ERROR_INTERNAL, "array %llu: write-back issued no copy",
                       (unsigned long long)a->id);
    if (!st && lw && (lw->state == PG__PENDING || lw->state == PG__OPEN))
        st = add_parent(rt, lw, a->ready[0]);
    if (!st)
        rt->stats.writebacks++;
    return st;
}

/* The oldest unfinished work on dev, else anywhere: memory can be held by arrays the script
 * freed while work still uses them, which go when it finishes. */
static pg__comp *oldest_inflight(pg__runtime *rt, int dev) {
    pg__comp *any = NULL;
    for (pg__comp *c = rt->inflight_head; c; c = c->next) {
        if (c->state != PG__ISSUED || pg__comp_done(rt, c))
            continue;
        if (c->device == dev)
            return c;
        if (!any)
            any = c;
    }
    return any;
}

/* Bring what dev holds down to `target` bytes. Clean copies no work uses go at once; if that
 * is not enough, dirty ones no work uses are written back to the host, and the work that uses
 * the others is waited for, with the lock dropped; then *again is set (the caller starts
 * over). mark: the arguments of the computation being placed, never evicted. */
static pg_status make_room(pg__runtime *rt, int dev, uint64_t target, uint64_t mark, int *again) {
    pg__comp_sweep(rt, 1 << 30); /* finished work releases arrays the script freed */
    if (rt->stats.device_bytes[dev] <= target)
        return PG_OK;
    cand *cs;
    int n;
    pg_status st = candidates(rt, dev, NULL, mark, &cs, &n);
    if (st)
        return st;
    free_clean(rt, dev, cs, n, target);
    if (rt->stats.device_bytes[dev] <= target) {
        pg__free(cs);
        return PG_OK;
    }
    waitlist w = {0};
    uint64_t planned = 0; /* bytes that the waits below make evictable */
    for (int i = 0; !st && i < n && rt->stats.device_bytes[dev] > target + planned; i++) {
        pg__array *a = cs[i].a;
        if (!a->dev[dev])
            continue;
        /* Asking whether work finished changes the answers as it goes: decide on one look. */
        int nu = users(rt, a, &w);
        if (nu > 0)
            planned += a->nbytes;
        else if (nu == 0 && clean(rt, a, dev))
            drop(rt, a, dev); /* its work finished since free_clean looked */
        else if (nu == 0) {   /* the dirty pieces go home first */
            pg__array **ps;
            int np;
            pg__array_parts(a, &ps, &np);
            for (int k = 0; !st && k < np; k++)
                if (!piece_clean(rt, ps[k], dev) && !(st = write_back(rt, ps[k])))
                    wait_add(&w, ps[k]->ready[0]);
            if (!st)
                planned += a->nbytes;
        }
    }
    pg__free(cs);
    pg__comp *o = NULL;
    if (!st && !w.n && rt->stats.device_bytes[dev] > target && !(o = oldest_inflight(rt, dev)) &&
        rt->stats.device_bytes[dev] > target)
        st = no_room(rt, dev, rt->stats.device_bytes[dev] - target, "");
    if (o && rt->stats.device_bytes[dev] > target)
        wait_add(&w, o);
    if (!st && !w.n && !w.failed) {
        pg__free(w.c);
        return PG_OK;
    }
    if (!st && w.failed)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int i = 0; i < w.n; i++) {
        if (!st)
            st = pg__wait_comp(rt, w.c[i]);
        pg__comp_unref(rt, w.c[i]);
    }
    pg__free(w.c);
    if (!st)
        *again = 1;
    return st;
}

/* The roots whose buffers c's arguments (pieces, views or roots) live in, each once: what a
 * placement allocates and counts. */
static int stores_of(const pg__comp *c, pg__array **out) {
    int n = 0;
    for (int i = 0; i < c->nargs; i++) {
        pg__array *r = c->args[i].array->store;
        int j = 0;
        while (j < n && out[j] != r)
            j++;
        if (j == n)
            out[n++] = r;
    }
    return n;
}

static pg_status too_big(pg__runtime *rt, const pg__comp *c, int dev, uint64_t total,
                         pg__array *const *st, int ns) {
    char list[1024];
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; i < ns && len < sizeof list - 64; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%sarray %llu: %llu bytes",
                                i ? ", " : "", (unsigned long long)st[i]->id,
                                (unsigned long long)st[i]->nbytes);
    return pg__error(PG_ERROR_OUT_OF_MEMORY,
                     "kernel %s on device %d: its arguments need %llu bytes together (%s), more "
                     "than device_memory_limit %llu bytes of device %d; split the work into "
                     "launches over smaller arrays, or raise device_memory_limit",
                     c->kernel ? c->kernel->name : "?", dev, (unsigned long long)total, list,
                     (unsigned long long)limit_of(rt), dev);
}

/* Is placing c on dev a ping-pong load (see the top of this file)? Fails if it would be the
 * PINGPONG_LOADS-th in a row. */
static pg_status check_pingpong(pg__runtime *rt, const pg__comp *c, int dev, uint64_t total,
                                pg__array *const *st, int ns, int *step) {
    pg__device *d = &rt->dev[dev];
    uint64_t cap = capacity_of(rt, dev), reloaded = 0;
    for (int i = 0; d->loads && i < ns; i++)
        if (!st[i]->dev[dev] && st[i]->dev_evicted[dev] == d->loads)
            reloaded += st[i]->nbytes;
    *step = cap && reloaded * 2 >= cap;
    if (!*step || d->pingpong + 1 < PINGPONG_LOADS)
        return PG_OK;
    d->pingpong = 0;
    return pg__error(PG_ERROR_OUT_OF_MEMORY,
                     "device %d is thrashing %s %llu bytes: the last %d kernels placed there "
                     "each loaded again what the kernel before had just evicted (kernel %s needs "
                     "%llu bytes, the one before %llu: a working set of %llu bytes that does not "
                     "fit); raise device_memory_limit, spread the work over more devices, or "
                     "reorder it so that consecutive kernels share their data",
                     dev, limit_of(rt) ? "under device_memory_limit" : "in its memory of",
                     (unsigned long long)cap, PINGPONG_LOADS, c->kernel ? c->kernel->name : "?",
                     (unsigned long long)total, (unsigned long long)d->last_ws,
                     (unsigned long long)(total + d->last_ws));
}

/* Allocate the buffers the roots st lack on dev. The device itself running out makes room like
 * the limit does; needing to wait, the buffers allocated here are freed first (nothing uses
 * them yet, and a never-written array's buffer is not zeroed until all are there). */
static pg_status alloc_all(pg__runtime *rt, pg__array *const *sts, int ns, int dev, pg__stream *s,
                           uint64_t mark, int *again) {
    uint64_t made = 0;
    pg_status st = PG_OK;
    for (int i = 0; !st && i < ns; i++) {
        pg__array *a = sts[i];
        if (a->dev[dev])
            continue;
        while ((st = rt->ops->dev_alloc(rt->b, dev, a->nbytes, s->b, &a->dev[dev])) ==
               PG_ERROR_OUT_OF_MEMORY) {
            a->dev[dev] = NULL;
            cand *cs;
            int n;
            if ((st = candidates(rt, dev, NULL, mark, &cs, &n)))
                break;
            uint64_t used = rt->stats.device_bytes[dev];
            uint64_t freed = free_clean(rt, dev, cs, n, used > a->nbytes ? used - a->nbytes : 0);
            pg__free(cs);
            if (freed)
                continue;
            for (int j = 0; j < ns; j++)
                if (made >> j & 1) {
                    pg__array *m = sts[j];
                    rt->ops->dev_free(rt->b, dev, m->dev[dev]);
                    m->dev[dev] = NULL;
                    rt->stats.device_bytes[dev] -= m->nbytes;
                }
            pg__share_bytes(rt, dev);
            uint64_t now = rt->stats.device_bytes[dev];
            st = make_room(rt, dev, now > a->nbytes ? now - a->nbytes : 0, mark, again);
            if (!st)
                *again = 1; /* start over even if room appeared without a wait */
            return st;
        }
        if (st) {
            a->dev[dev] = NULL;
            break;
        }
        count_alloc(rt, dev, a->nbytes);
        made |= UINT64_C(1) << i;
    }
    for (int i = 0; !st && i < ns; i++) {
        pg__array *a = sts[i];
        if ((made >> i & 1) && a->fresh &&
            (st = rt->ops->memset_zero(rt->b, s->b, a->dev[dev], a->nbytes))) {
            rt->ops->dev_free(rt->b, dev, a->dev[dev]);
            a->dev[dev] = NULL;
            rt->stats.device_bytes[dev] -= a->nbytes;
            pg__share_bytes(rt, dev);
        }
    }
    return st;
}

pg_status pg__evict_reserve(pg__runtime *rt, pg__comp *c, int dev, pg__stream *s, int *again) {
    *again = 0;
    pg__array *sts[PG__MAX_PARAMS];
    int ns = stores_of(c, sts);
    uint64_t total = 0, need = 0, stamp = ++rt->use_clock;
    for (int i = 0; i < ns; i++) {
        pg__array *a = sts[i];
        total += a->nbytes;
        if (a->dev[dev])
            a->dev_use[dev] = stamp;
        else
            need += a->nbytes;
    }
    if (!need)
        return PG_OK; /* the common case: everything is there */
    pg__device *d = &rt->dev[dev];
    uint64_t lim = limit_of(rt);
    if (lim && total > lim)
        return too_big(rt, c, dev, total, sts, ns);
    uint64_t mark = ++rt->evict_mark;
    for (int i = 0; i < ns; i++)
        sts[i]->evict_mark = mark;
    int step = 0;
    pg_status st = check_pingpong(rt, c, dev, total, sts, ns, &step);
    /* The bytes it may hold before allocating: under the limit, and beside the memory of the
     * node's other processes (admission may wait for them instead: then *again). */
    uint64_t target = lim ? lim - need : UINT64_MAX;
    if (!st && rt->node)
        st = pg__share_admit(rt, c->kernel ? c->kernel->name : "a call", dev, total, need, &target,
                             again);
    if (!st && !*again && rt->stats.device_bytes[dev] > target)
        st = make_room(rt, dev, target, mark, again);
    if (!st && !*again)
        st = alloc_all(rt, sts, ns, dev, s, mark, again);
    rt->evict_mark++; /* the marks end with this attempt */
    if (!st && *again && ++restarts > MAX_RESTARTS) {
        *again = 0;
        st = pg__error(PG_ERROR_OUT_OF_MEMORY,
                       "device %d is thrashing: kernel %s (%llu bytes of arguments) waited for "
                       "room %d times while other work kept taking it (device_memory_limit %llu "
                       "bytes, %llu held); raise device_memory_limit or run less at once",
                       dev, c->kernel ? c->kernel->name : "?", (unsigned long long)total,
                       MAX_RESTARTS, (unsigned long long)lim,
                       (unsigned long long)rt->stats.device_bytes[dev]);
    }
    if (st || *again) {
        if (st)
            restarts = 0;
        return st;
    }
    restarts = 0;
    d->loads++;
    d->pingpong = step ? d->pingpong + 1 : 0;
    d->last_ws = total;
    for (int i = 0; i < ns; i++)
        sts[i]->dev_use[dev] = stamp;
    PG__CHECK(pg__evict_invariant, rt, dev, c);
    return PG_OK;
}

pg_status pg__evict_alloc(pg__runtime *rt, pg__array *a, int dev, pg__stream *s, void **out) {
    uint64_t lim = limit_of(rt), used = rt->stats.device_bytes[dev];
    if (lim && a->nbytes > lim)
        return pg__error(PG_ERROR_OUT_OF_MEMORY,
                         "array %llu (%llu bytes) is larger than device_memory_limit %llu bytes "
                         "of device %d",
                         (unsigned long long)a->id, (unsigned long long)a->nbytes,
                         (unsigned long long)lim, dev);
    cand *cs = NULL;
    int n = 0;
    pg_status st = PG_OK;
    if (lim && used + a->nbytes > lim) {
        if ((st = candidates(rt, dev, a, 0, &cs, &n)))
            return st;
        free_clean(rt, dev, cs, n, lim - a->nbytes);
        if (rt->stats.device_bytes[dev] > lim - a->nbytes) {
            pg__free(cs);
            return no_room(rt, dev, a->nbytes,
                           " without waiting (a copy or a device access cannot wait for room)");
        }
    }
    while ((st = rt->ops->dev_alloc(rt->b, dev, a->nbytes, s ? s->b : NULL, out)) ==
           PG_ERROR_OUT_OF_MEMORY) {
        if (!cs && (st = candidates(rt, dev, a, 0, &cs, &n)))
            break;
        uint64_t now = rt->stats.device_bytes[dev];
        if (!free_clean(rt, dev, cs, n, now > a->nbytes ? now - a->nbytes : 0)) {
            st = PG_ERROR_OUT_OF_MEMORY; /* the backend's message stands */
            break;
        }
    }
    pg__free(cs);
    if (st)
        return st;
    count_alloc(rt, dev, a->nbytes);
    a->dev_use[dev] = ++rt->use_clock;
    PG__CHECK(pg__evict_invariant, rt, dev, NULL);
    return PG_OK;
}

/* Whether kernel c's arguments all have their buffer on dev; else which one lacks it. */
static const pg__array *missing_buffer(const pg__comp *c, int dev) {
    for (int i = 0; i < c->nargs; i++)
        if (!c->args[i].array->store->dev[dev])
            return c->args[i].array;
    return NULL;
}

int pg__evict_invariant(const pg__runtime *rt, int dev, const pg__comp *c, char *why, size_t cap) {
    uint64_t lim = limit_of(rt), used = rt->stats.device_bytes[dev];
    if (lim && used > lim) {
        snprintf(why, cap, "device %d holds %llu bytes, over device_memory_limit %llu", dev,
                 (unsigned long long)used, (unsigned long long)lim);
        return 1;
    }
    const pg__array *a = c ? missing_buffer(c, dev) : NULL;
    if (a) {
        snprintf(why, cap, "computation #%llu placed on device %d lacks array %llu's buffer there",
                 (unsigned long long)c->id, dev, (unsigned long long)a->id);
        return 1;
    }
    int seen = 0; /* bounded: a check, not a second scheduler */
    for (const pg__comp *k = rt->inflight_head; k && seen < 256; k = k->next, seen++) {
        if (k->kind != PG__KERNEL || k->device != dev || k->state != PG__ISSUED ||
            pg__comp_known_done(k))
            continue;
        if ((a = missing_buffer(k, dev))) {
            snprintf(why, cap,
                     "array %llu's buffer on device %d is gone while kernel #%llu, "
                     "still running there, uses it",
                     (unsigned long long)a->id, dev, (unsigned long long)k->id);
            return 1;
        }
    }
    return 0;
}

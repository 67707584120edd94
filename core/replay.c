/* replay.c: plans — devices, streams and copies decided once and issued again.
 *
 * A replay of a recording that has no usable plan goes through the eager path (core/graph.c)
 * while capturing: every launch and copy it hands to a stream becomes a node, with an edge
 * from each computation it was ordered after (its parents and the producers of its inputs)
 * that this capture issued too. The capture also notes, per array, the coherence state it
 * began with, where it read values it had not made itself (`need`), and where its results
 * are at the end (`made`). A later replay that finds every array in the captured state (or,
 * after a few captures, one the plan can be brought to by copies) issues the nodes again as
 * one computation: a backend graph (a CUDA graph, on every GPU the plan uses) launched on one
 * stream, or, where the backend has none (CPU devices), the same operations re-issued on the
 * same streams with event waits for the edges between streams. Nothing is placed, bound or
 * analysed per call; dependencies with work before and after, coherence and the DAG (one
 * vertex per replay) come from that one computation, which reads and writes what the calls
 * did. Lock held throughout. */
#include "core/replay.h"
#include "core/array.h"
#include "core/capture.h"
#include "core/coherence.h"
#include "core/comp.h"
#include "core/exec.h"
#include "core/issue.h"
#include "core/pieces.h"
#include "core/util.h"
#include "core/waits.h"

#include "base/alloc.h"

#include <string.h>

typedef struct plan_node {
    pg__bnode b;
    pg__stream *stream;
    uint64_t *params; /* launch: the slots as launched (owned) */
    int *deps;        /* owned */
    int ndeps, capdeps;
    int cross;            /* a node on another stream waits for it */
    int src_loc, dst_loc; /* copy: locations, for the statistics */
} plan_node;

typedef struct plan_array {
    pg__array *a; /* referenced */
    pg_access access;
    int written;         /* capturing: a captured launch wrote it already */
    uint32_t copied_in;  /* where the plan copies the value it found (before writing it) */
    uint32_t need;       /* read by the plan where it had neither written nor copied */
    uint32_t made;       /* valid at the end because the plan wrote or copied there */
    uint32_t used;       /* where the plan's operations touch it */
    void *buf[PG__NLOC]; /* the buffers there, whose addresses the operations hold */
} plan_array;

struct pg__plan {
    uint64_t gen;
    int broken;
    plan_node *nodes;
    int n, cap;
    pg__comp **comps; /* the captured computations, referenced until the capture ends */
    plan_array *arr;
    int narr;
    pg__stream *primary; /* the replay computation's stream (where a graph is launched) */
    void *graph;         /* the backend's graph, or NULL: nodes re-issued */
    uint64_t kernels, copies;
    pg__comp *last; /* the latest replay: freeing the plan waits for it */
};

void pg__plan_free(pg__runtime *rt, pg__plan *p) {
    if (!p)
        return;
    if (p->last) {
        if (p->graph)
            (void)pg__wait_comp(rt, p->last); /* the graph may not be freed while it runs */
        pg__comp_unref(rt, p->last);
    }
    if (p->graph)
        rt->ops->graph_free(rt->b, p->graph);
    for (int i = 0; i < p->n; i++) {
        pg__free(p->nodes[i].params);
        pg__free(p->nodes[i].deps);
    }
    pg__free(p->nodes);
    pg__free(p->comps);
    for (int i = 0; i < p->narr; i++)
        pg__array_unref(p->arr[i].a);
    pg__free(p->arr);
    pg__free(p);
}

/* The notes the issue path takes while a plan is captured (rt->cap_notes). */
static void note_launch(pg__runtime *rt, pg__comp *c, pg__stream *s, void *fn);
static void note_copy(pg__runtime *rt, pg__comp *c, pg__stream *s, void *dst, const void *src);
static void note_read(pg__runtime *rt, pg__array *a, int loc);
static void note_broken(pg__runtime *rt);
static const pg__capture_notes capture_notes = {note_launch, note_copy, note_read, note_broken};

pg__plan *pg__plan_capture_begin(pg__runtime *rt, pg__comp *const *calls, int ncalls) {
    pg__plan *p = pg__calloc(1, sizeof *p);
    int cap = 0; /* the recorded calls name roots and views; the plan keeps their pieces */
    for (int i = 0; i < ncalls; i++)
        for (int j = 0; j < calls[i]->nargs; j++) {
            pg__array **ps;
            int np;
            pg__array_parts(calls[i]->args[j].array, &ps, &np);
            cap += np;
        }
    if (p && !(p->arr = pg__calloc((size_t)(cap ? cap : 1), sizeof *p->arr))) {
        pg__free(p);
        p = NULL;
    }
    if (!p)
        return NULL;
    p->gen = ++rt->cap_gens;
    for (int i = 0; i < ncalls; i++)
        for (int j = 0; j < calls[i]->nargs; j++) {
            pg__array **ps;
            int np;
            pg__array_parts(calls[i]->args[j].array, &ps, &np);
            for (int k = 0; k < np; k++) {
                pg__array *a = ps[k];
                if (a->cap_gen != p->gen) {
                    a->cap_gen = p->gen;
                    a->cap_idx = p->narr++;
                    plan_array *pa = &p->arr[a->cap_idx];
                    pa->a = a;
                    pg__array_ref(a);
                }
                p->arr[a->cap_idx].access |= calls[i]->args[j].access;
            }
        }
    rt->cap = p;
    rt->cap_notes = &capture_notes;
    return p;
}

static void note_broken(pg__runtime *rt) {
    if (rt->cap)
        rt->cap->broken = 1;
}

static int add_dep(plan_node *nd, int j) {
    for (int i = 0; i < nd->ndeps; i++)
        if (nd->deps[i] == j)
            return 0;
    if (nd->ndeps == nd->capdeps) {
        int cap = nd->capdeps ? 2 * nd->capdeps : 4;
        int *n = pg__realloc(nd->deps, (size_t)cap * sizeof *n);
        if (!n)
            return -1;
        nd->deps = n;
        nd->capdeps = cap;
    }
    nd->deps[nd->ndeps++] = j;
    return 0;
}

/* A node for c, issued on s, after every captured computation c was ordered after. */
static plan_node *add_node(pg__plan *p, pg__comp *c, pg__stream *s) {
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        plan_node *n = pg__realloc(p->nodes, (size_t)cap * sizeof *n);
        pg__comp **cs = n ? pg__realloc(p->comps, (size_t)cap * sizeof *cs) : NULL;
        if (n)
            p->nodes = n;
        if (!cs) {
            p->broken = 1;
            return NULL;
        }
        p->comps = cs;
        p->cap = cap;
    }
    int idx = p->n++;
    plan_node *nd = &p->nodes[idx];
    memset(nd, 0, sizeof *nd);
    nd->stream = s;
    nd->b.dev = s->device;
    pg__comp_ref(c);
    p->comps[idx] = c;
    c->cap_gen = p->gen;
    c->cap_node = idx;
    for (int k = 0; k < 2; k++) {
        pg__comp **list = k ? c->inputs : c->parents;
        int m = k ? c->ninputs : c->nparents;
        for (int i = 0; i < m; i++) {
            pg__comp *q = list[i];
            if (q == c || q->cap_gen != p->gen)
                continue; /* issued before the capture: the replay's own parents cover it */
            if (add_dep(nd, q->cap_node)) {
                p->broken = 1;
                return NULL;
            }
            if (p->nodes[q->cap_node].stream != s)
                p->nodes[q->cap_node].cross = 1;
        }
    }
    return nd;
}

static void note_launch(pg__runtime *rt, pg__comp *c, pg__stream *s, void *fn) {
    pg__plan *p = rt->cap;
    if (!p || p->broken)
        return;
    plan_node *nd = add_node(p, c, s);
    if (!nd)
        return;
    nd->b.kind = PG__BNODE_LAUNCH;
    nd->b.fn = fn;
    nd->b.grid = c->grid;
    nd->b.block = c->block;
    nd->b.shared_mem = c->shared_mem;
    nd->b.nparams = c->nslots;
    if (c->nslots && !(nd->params = pg__malloc((size_t)c->nslots * sizeof *nd->params))) {
        p->broken = 1;
        return;
    }
    if (c->nslots)
        memcpy(nd->params, c->slots, (size_t)c->nslots * sizeof *nd->params);
    for (int i = 0; i < c->nargs; i++) {
        plan_array *pa = &p->arr[c->args[i].array->cap_idx];
        pa->used |= PG__LOC_BIT(PG__LOC(s->device));
        if (c->args[i].access & PG_ACCESS_OUT)
            pa->written = 1;
    }
    p->kernels++;
}

static void note_copy(pg__runtime *rt, pg__comp *c, pg__stream *s, void *dst, const void *src) {
    pg__plan *p = rt->cap;
    if (!p || p->broken)
        return;
    /* A copy of an array the calls do not use (a write-back making room): not the calls'. */
    int ours = c->nargs > 0;
    for (int i = 0; i < c->nargs; i++)
        ours &= c->args[i].array->cap_gen == p->gen;
    if (!ours) {
        p->broken = 1;
        return;
    }
    plan_node *nd = add_node(p, c, s);
    if (!nd)
        return;
    nd->b.kind = src ? PG__BNODE_COPY : PG__BNODE_EMPTY; /* no source: an elided copy */
    nd->b.dst_dev = c->copy_dst - 1;                     /* location 0, the host, is PG_HOST */
    nd->b.src_dev = c->copy_src - 1;
    nd->b.dst = dst;
    nd->b.src = src;
    nd->b.bytes = c->copy_bytes;
    nd->src_loc = c->copy_src;
    nd->dst_loc = c->copy_dst;
    for (int i = 0; i < c->nargs; i++) { /* one copy may move several pieces (core/issue.c) */
        plan_array *pa = &p->arr[c->args[i].array->cap_idx];
        pa->used |= PG__LOC_BIT(c->copy_src) | PG__LOC_BIT(c->copy_dst);
        if (!pa->written)
            pa->copied_in |= PG__LOC_BIT(c->copy_dst);
    }
    p->copies++;
}

static void note_read(pg__runtime *rt, pg__array *a, int loc) {
    pg__plan *p = rt->cap;
    if (!p || p->broken)
        return;
    if (a->cap_gen != p->gen) {
        p->broken = 1;
        return;
    }
    pg__comp *r = a->ready[loc];
    if (!r || r->cap_gen != p->gen)
        p->arr[a->cap_idx].need |= PG__LOC_BIT(loc);
}

static void *loc_buffer(const pg__array *a, int loc) {
    return pg__array_buf(a, loc);
}

static int plan_complete(pg__runtime *rt, pg__plan *p) {
    if (p->broken || !p->n)
        return 0;
    for (int i = 0; i < p->narr; i++) {
        plan_array *pa = &p->arr[i];
        pg__array *a = pa->a;
        if (a->lost)
            return 0;
        for (int l = 0; l <= rt->ndev; l++) {
            pg__comp *r = a->ready[l];
            if ((a->valid & PG__LOC_BIT(l)) && r && r->cap_gen == p->gen)
                pa->made |= PG__LOC_BIT(l);
        }
        for (int l = 0; l <= rt->ndev; l++)
            if ((pa->used & PG__LOC_BIT(l)) && !(pa->buf[l] = loc_buffer(a, l)))
                return 0;
    }
    p->primary = p->nodes[p->n - 1].stream;
    return 1;
}

static void build_graph(pg__runtime *rt, pg__plan *p) {
    if (!rt->ops->graph_build)
        return;
    pg__bnode *bn = pg__malloc((size_t)p->n * sizeof *bn);
    if (!bn)
        return; /* the operations are re-issued instead */
    for (int i = 0; i < p->n; i++) {
        bn[i] = p->nodes[i].b;
        bn[i].params = p->nodes[i].params;
        bn[i].deps = p->nodes[i].deps;
        bn[i].ndeps = p->nodes[i].ndeps;
    }
    pg_status st = rt->ops->graph_build(rt->b, bn, p->n, &p->graph);
    pg__free(bn);
    if (st) {
        p->graph = NULL;
        pg__log(rt, 1, "replay: no %s graph (%s); its operations are re-issued instead",
                rt->ops->name, pg_last_error());
        pg__error_clear();
    }
}

pg__plan *pg__plan_capture_end(pg__runtime *rt, pg__plan *p, int ok) {
    rt->cap = NULL;
    int complete = ok && plan_complete(rt, p);
    for (int i = 0; i < p->n; i++)
        pg__comp_unref(rt, p->comps[i]);
    pg__free(p->comps);
    p->comps = NULL;
    if (!complete) {
        pg__log(rt, 2, "replay: no plan captured (%s)",
                !ok         ? "a call was held back or failed"
                : p->broken ? "the lock was dropped or a buffer evicted meanwhile"
                            : "an array has no value or buffer where the plan left it");
        pg__plan_free(rt, p);
        return NULL;
    }
    build_graph(rt, p);
    pg__log(rt, 2, "replay: plan captured: %d operations (%llu kernels, %llu copies), %s", p->n,
            (unsigned long long)p->kernels, (unsigned long long)p->copies,
            p->graph ? "one graph launch" : "re-issued on their streams");
    return p;
}

int pg__plan_fit(pg__runtime *rt, const pg__plan *p) {
    int as_eager = 1;
    for (int i = 0; i < p->n; i++)
        if (rt->dev[p->nodes[i].b.dev].failed)
            return 0;
    for (int i = 0; i < p->narr; i++) {
        const plan_array *pa = &p->arr[i];
        const pg__array *a = pa->a;
        /* lost, or no longer one of its root's pieces (a view cut it since) */
        if (a->lost || a->superseded || (a->kind == PG__A_ROOT && a->pieces))
            return 0;
        for (int l = 0; l <= rt->ndev; l++)
            if ((pa->used & PG__LOC_BIT(l)) && loc_buffer(a, l) != pa->buf[l])
                return 0; /* evicted or moved: the plan's addresses are stale */
        /* A value the plan reads where it is not now needs copies first; a copy of the value
         * it found to where that value is now is one eager calls would not make (the plan was
         * captured from a colder state: inputs on the host, say). */
        if ((pa->need & ~a->valid) || (pa->copied_in & a->valid))
            as_eager = 0;
    }
    return as_eager ? 2 : 1;
}

/* ---- issuing a plan */

/* Re-issue the nodes on their streams (a backend without graphs). s, the replay's stream, has
 * been ordered after the replay's parents; the other streams wait for that point first, and s
 * waits for each of them at the end, so the replay's event on s marks all of it. */
static pg_status reissue(pg__runtime *rt, pg__plan *p, pg__stream *s) {
    const pg__backend_ops *o = rt->ops;
    pg__bevent **ev = pg__calloc((size_t)p->n, sizeof *ev);
    pg__stream *seen[PG_MAX_DEVICES * (PG__MAX_STREAMS + 1)];
    int nseen = 0;
    pg__bevent *gate = NULL;
    pg_status st = ev ? o->event_record(rt->b, s->b, &gate)
                      : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int i = 0; !st && i < p->n; i++) {
        plan_node *nd = &p->nodes[i];
        pg__stream *t = nd->stream;
        if (t != s) {
            int k = 0;
            while (k < nseen && seen[k] != t)
                k++;
            if (k == nseen) {
                seen[nseen++] = t;
                st = o->stream_wait(rt->b, t->b, gate);
            }
        }
        for (int j = 0; !st && j < nd->ndeps; j++)
            if (p->nodes[nd->deps[j]].stream != t)
                st = o->stream_wait(rt->b, t->b, ev[nd->deps[j]]);
        if (!st && nd->b.kind == PG__BNODE_LAUNCH)
            st = o->launch(rt->b, t->b, nd->b.fn, nd->b.grid, nd->b.block, nd->b.shared_mem,
                           nd->params, nd->b.nparams, NULL);
        else if (!st && nd->b.kind == PG__BNODE_COPY)
            st = o->copy(rt->b, t->b, nd->b.dst_dev, nd->b.dst, nd->b.src_dev, nd->b.src,
                         nd->b.bytes, NULL);
        if (!st && nd->cross)
            st = o->event_record(rt->b, t->b, &ev[i]);
    }
    for (int k = 0; !st && k < nseen; k++) {
        pg__bevent *e;
        st = o->event_record(rt->b, seen[k]->b, &e);
        if (!st) {
            st = o->stream_wait(rt->b, s->b, e);
            o->event_free(rt->b, e);
        }
    }
    /* A wait takes the event's state when it is enqueued: the events can go now. */
    for (int i = 0; ev && i < p->n; i++)
        if (ev[i])
            o->event_free(rt->b, ev[i]);
    pg__free(ev);
    if (gate)
        o->event_free(rt->b, gate);
    return st;
}

static pg_status plan_work(pg__runtime *rt, pg__comp *c, pg__stream *s, void *ctx) {
    (void)c;
    pg__plan *p = ctx;
    if (p->graph)
        return rt->ops->graph_launch(rt->b, s->b, p->graph);
    return reissue(rt, p, s);
}

/* Bring a's value to every location the plan reads it from without making it there. */
static pg_status bring(pg__runtime *rt, const plan_array *pa) {
    for (int l = 0; l <= rt->ndev; l++)
        if ((pa->need & PG__LOC_BIT(l)) && !(pa->a->valid & PG__LOC_BIT(l))) {
            pg_status st = pg__issue_prefetch(rt, pa->a, l);
            if (st)
                return st;
        }
    return PG_OK;
}

/* The replay issued: each array is where the plan left it, current after c. */
static void replayed(pg__runtime *rt, pg__plan *p, pg__comp *c) {
    uint64_t stamp = ++rt->use_clock;
    for (int i = 0; i < p->narr; i++) {
        plan_array *pa = &p->arr[i];
        pg__array *a = pa->a;
        if (pa->access & PG_ACCESS_OUT) {
            pg__coh_write(rt, c, a, 0); /* a new value: clears lost and fresh, sets ready */
            a->valid = pa->made;
        } else {
            a->valid |= pa->made;
        }
        for (int l = 0; l <= rt->ndev; l++) {
            if (pa->made & PG__LOC_BIT(l))
                pg__comp_set(rt, &a->ready[l], c);
            else if (pa->access & PG_ACCESS_OUT)
                pg__comp_set(rt, &a->ready[l], NULL);
            if (l > 0 && (pa->used & PG__LOC_BIT(l)))
                a->dev_use[l - 1] = stamp;
        }
    }
    rt->stats.kernels += p->kernels;
    rt->stats.copies += p->copies;
    rt->stats.computations += p->kernels + p->copies;
    for (int i = 0; i < p->n; i++)
        if (p->nodes[i].b.kind != PG__BNODE_LAUNCH) { /* copies, elided ones as if made */
            rt->stats.link_bytes[p->nodes[i].src_loc][p->nodes[i].dst_loc] += p->nodes[i].b.bytes;
            rt->stats.bytes_moved += p->nodes[i].b.bytes;
            if (p->nodes[i].b.kind == PG__BNODE_EMPTY) {
                rt->stats.copies_elided++;
                rt->stats.bytes_elided += p->nodes[i].b.bytes;
            }
        }
    pg__comp_set(rt, &p->last, c);
}

pg_status pg__plan_replay(pg__runtime *rt, pg__plan *p, const char *name, int *used) {
    *used = 0;
    pg_status st = PG_OK;
    for (int i = 0; !st && i < p->narr; i++)
        st = bring(rt, &p->arr[i]);
    if (st || !pg__plan_fit(rt, p)) /* making room for a copy may have evicted a buffer */
        return st;
    pg__comp *c = pg__comp_new(rt, PG__REPLAY);
    if (!c)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    c->args = p->narr <= PG__INLINE ? c->args_in : pg__malloc((size_t)p->narr * sizeof *c->args);
    pg__comp **extra = pg__malloc((size_t)(p->narr * PG__NLOC) * sizeof *extra);
    if (!c->args || !extra) {
        pg__free(extra);
        pg__comp_unref(rt, c);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    int nextra = 0;
    for (int i = 0; i < p->narr; i++) {
        c->args[i].array = p->arr[i].a;
        c->args[i].access = p->arr[i].access;
        pg__array_ref(p->arr[i].a);
        c->nargs++;
        /* What the plan reads where it is: made current by earlier work, maybe a copy that is
         * not in the array's history (a prefetch, an earlier input copy). */
        for (int l = 0; l <= rt->ndev; l++) {
            pg__comp *r = p->arr[i].a->ready[l];
            if ((p->arr[i].need & PG__LOC_BIT(l)) && r && !st && !(st = pg__coh_input_reserve(c))) {
                pg__coh_input_add(c, r);
                extra[nextra++] = r;
            }
        }
    }
    int blocked = 0;
    if (!st)
        st = pg__exec_issue_on(rt, c, p->primary, name, extra, nextra, plan_work, p, &blocked);
    pg__free(extra);
    if (!st && !blocked) {
        replayed(rt, p, c);
        *used = 1;
    }
    pg__comp_unref(rt, c);
    return st;
}

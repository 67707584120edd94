/* graph.c: recordings (pg_graph_*): kernel launches recorded once, bound once, replayed many
 * times. A recorded call is the launch's computation as binding made it (kernel, dimensions,
 * arrays with their merged access, scalar slots), never submitted. A replay without a usable
 * plan clones each into a fresh computation and submits it as pg_kernel_launch would, so
 * dependencies, placement, coherence and the DAG are exactly those of eager calls, and captures
 * what it issued as the graph's plan (core/replay.c); later replays that find the arrays as
 * the plan needs them issue the plan instead, as one computation. */
#include "core/graph.h"
#include "core/comp.h"
#include "core/exec.h"
#include "core/handle.h"
#include "core/replay.h"
#include "core/split.h"
#include "core/waits.h"

#include "base/alloc.h"

#include <stdio.h>
#include <string.h>

struct pg__graph {
    uint64_t handle;
    pg__runtime *rt;
    pg__comp **calls; /* recorded launches, one reference each */
    int ncalls, cap;
    int live_index; /* position in rt->graphs, -1 while recording */
    pg__plan *plan; /* what a replay issued, to issue again (NULL: none yet) */
    int captures;   /* replays that captured a plan */
};

/* Captures before a plan that fits only after copies is used anyway: the first replay often
 * starts from a cold state (inputs on the host) that the loop never returns to. */
enum { PLAN_RECAPTURES = 3, PLAN_CAPTURES_MAX = 16 };

static void graph_destroy(pg__runtime *rt, pg__graph *g) {
    pg__plan_free(rt, g->plan);
    for (int i = 0; i < g->ncalls; i++)
        pg__comp_unref(rt, g->calls[i]);
    pg__free(g->calls);
    pg__free(g);
}

static int recording_here(const pg__runtime *rt) {
    return rt->rec && pthread_equal(rt->rec_thread, pthread_self());
}

int pg__graph_take(pg__runtime *rt, pg__comp *c, pg_status *st) {
    if (!rt->rec)
        return 0;
    *st = PG_OK;
    if (!recording_here(rt)) {
        *st = pg__error(PG_ERROR_STATE,
                        "pg_kernel_launch: kernel '%s': the runtime is recording a graph on "
                        "another thread (pg_graph_begin); launch after pg_graph_end",
                        c->kernel->name);
        return 1;
    }
    pg__graph *g = rt->rec;
    if (g->ncalls == g->cap) {
        int cap = g->cap ? 2 * g->cap : 16;
        pg__comp **n = pg__realloc(g->calls, (size_t)cap * sizeof *n);
        if (!n) {
            *st = pg__error(PG_ERROR_OUT_OF_MEMORY,
                            "pg_kernel_launch: out of host memory recording kernel '%s'",
                            c->kernel->name);
            return 1;
        }
        g->calls = n;
        g->cap = cap;
    }
    pg__comp_ref(c);
    g->calls[g->ncalls++] = c;
    return 1;
}

pg_status pg__graph_refuse(pg__runtime *rt, const char *fn, const pg__array *a) {
    if (!recording_here(rt))
        return PG_OK;
    if (a)
        return pg__error(PG_ERROR_STATE,
                         "%s: array %llu cannot be accessed from the host while this thread "
                         "records a graph (pg_graph_begin): the recorded calls have not run; "
                         "end the recording (pg_graph_end) and replay it first",
                         fn, (unsigned long long)a->id);
    return pg__error(PG_ERROR_STATE,
                     "%s: not allowed while this thread records a graph (pg_graph_begin): the "
                     "recorded calls have not run; end the recording (pg_graph_end) first",
                     fn);
}

int pg__graph_uses(const pg__runtime *rt, const pg__array *a) {
    if (!rt->rec)
        return 0;
    for (int i = 0; i < rt->rec->ncalls; i++)
        for (int j = 0; j < rt->rec->calls[i]->nargs; j++)
            if (rt->rec->calls[i]->args[j].array == a)
                return 1;
    return 0;
}

void pg__graph_free_all(pg__runtime *rt) {
    if (rt->rec) {
        pg__handle_release(rt->rec->handle);
        if (recording_here(rt))
            pg__handle_set_recording(0);
        graph_destroy(rt, rt->rec);
        rt->rec = NULL;
    }
    while (rt->ngraphs) {
        pg__graph *g = rt->graphs[--rt->ngraphs];
        pg__handle_release(g->handle);
        graph_destroy(rt, g);
    }
    pg__free(rt->graphs);
    rt->graphs = NULL;
    rt->capgraphs = 0;
}

void pg__graph_forget_handles(pg__runtime *rt) {
    if (rt->rec)
        pg__handle_release(rt->rec->handle);
    for (int i = 0; i < rt->ngraphs; i++)
        pg__handle_release(rt->graphs[i]->handle);
}

pg_status pg_graph_begin(pg_runtime *h) {
    pg__error_clear();
    pg__runtime *rt = pg__enter_runtime(h, "pg_graph_begin");
    if (!rt)
        return PG_ERROR_STATE;
    pg_status st = PG_OK;
    pg__graph *g = NULL;
    if (rt->rec)
        st = pg__error(PG_ERROR_STATE,
                       "pg_graph_begin: the runtime is already recording a graph%s; recordings do "
                       "not nest (end it with pg_graph_end first)",
                       recording_here(rt) ? "" : " on another thread");
    else if (rt->ranks) /* a replay would skip the hooks that keep the ranks in step */
        st = pg__error(PG_ERROR_UNSUPPORTED,
                       "pg_graph_begin: recordings are not available with several ranks yet "
                       "(this run has %d); launch the calls one by one",
                       rt->nranks);
    else if (!(g = pg__calloc(1, sizeof *g)))
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "pg_graph_begin: out of host memory");
    else if (!(g->handle = pg__handle_new(PG__H_GRAPH, g, rt)))
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "pg_graph_begin: out of handles");
    if (st) {
        pg__free(g);
        pg__leave(rt);
        return st;
    }
    g->rt = rt;
    g->live_index = -1;
    rt->rec = g;
    rt->rec_thread = pthread_self();
    pg__handle_set_recording(g->handle);
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_graph_end(pg_runtime *h, pg_graph **out) {
    pg__error_clear();
    if (!out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_graph_end: out must not be NULL");
    pg__runtime *rt = pg__enter_runtime(h, "pg_graph_end");
    if (!rt)
        return PG_ERROR_STATE;
    pg_status st = PG_OK;
    if (!rt->rec)
        st = pg__error(PG_ERROR_STATE, "pg_graph_end: the runtime is not recording (call "
                                       "pg_graph_begin first)");
    else if (!recording_here(rt))
        st = pg__error(PG_ERROR_STATE, "pg_graph_end: the recording was begun on another thread; "
                                       "end it there");
    else if (rt->ngraphs == rt->capgraphs) {
        int cap = rt->capgraphs ? 2 * rt->capgraphs : 8;
        pg__graph **n = pg__realloc(rt->graphs, (size_t)cap * sizeof *n);
        if (!n)
            st = pg__error(PG_ERROR_OUT_OF_MEMORY, "pg_graph_end: out of host memory (the "
                                                   "recording goes on; try again)");
        else {
            rt->graphs = n;
            rt->capgraphs = cap;
        }
    }
    if (st) {
        pg__leave(rt);
        return st;
    }
    pg__graph *g = rt->rec;
    rt->rec = NULL;
    pg__handle_set_recording(0);
    g->live_index = rt->ngraphs;
    rt->graphs[rt->ngraphs++] = g;
    *out = (pg_graph *)(uintptr_t)g->handle;
    pg__leave(rt);
    return PG_OK;
}

static pg__graph *enter_graph(pg_graph *h, const char *fn) {
    pg__runtime *rt;
    pg__graph *g = pg__enter((uint64_t)(uintptr_t)h, PG__H_GRAPH, fn, &rt);
    if (g && g->live_index < 0) { /* the recording in progress: not a graph yet */
        pg__leave(rt);
        pg__error(PG_ERROR_STATE, "%s: the graph is still being recorded (call pg_graph_end)", fn);
        return NULL;
    }
    return g;
}

pg_status pg_graph_launch(pg_graph *h) {
    pg__error_clear();
    pg__graph *g = enter_graph(h, "pg_graph_launch");
    if (!g)
        return PG_ERROR_STATE;
    pg__runtime *rt = g->rt;
    pg_status st = PG_OK;
    if (rt->rec)
        st = pg__error(PG_ERROR_STATE, "pg_graph_launch: the runtime is recording a graph; "
                                       "replays do not nest in recordings (end it first)");
    /* Every array must still be the script's before anything is issued. */
    for (int i = 0; !st && i < g->ncalls; i++)
        for (int j = 0; !st && j < g->calls[i]->nargs; j++) {
            const pg__array *a = g->calls[i]->args[j].array;
            if (!pg__handle_get(a->handle, PG__H_ARRAY))
                st = pg__error(PG_ERROR_STATE,
                               "pg_graph_launch: array %llu, used by recorded call %d (kernel "
                               "'%s'), was freed after it was recorded; nothing was replayed",
                               (unsigned long long)a->id, i + 1, g->calls[i]->kernel->name);
        }
    if (!st && g->plan && !rt->opt.sync && !rt->opt.trace[0]) {
        int fit = pg__plan_fit(rt, g->plan), used = 0;
        if (fit == 2 || (fit == 1 && g->captures >= PLAN_RECAPTURES)) {
            char name[64];
            snprintf(name, sizeof name, "graph replay (%d calls)", g->ncalls);
            st = pg__plan_replay(rt, g->plan, name, &used);
            if (st || used) {
                pg__leave(rt);
                return st;
            }
        }
    }
    /* Eager, capturing a plan: not while each call waits (sync) or is timed (trace). */
    pg__plan *cap = !st && !rt->opt.sync && !rt->opt.trace[0] && g->captures < PLAN_CAPTURES_MAX
                        ? pg__plan_capture_begin(rt, g->calls, g->ncalls)
                        : NULL;
    int whole = 1; /* every call issued now, none held back behind a host access */
    for (int i = 0; !st && i < g->ncalls; i++) {
        pg__comp *c = pg__comp_clone(rt, g->calls[i]);
        if (!c) {
            st = pg__error(PG_ERROR_OUT_OF_MEMORY,
                           "pg_graph_launch: out of host memory at recorded call %d of %d (the "
                           "calls before it were issued)",
                           i + 1, g->ncalls);
            break;
        }
        int split = 0; /* as pg_kernel_launch does (core/split.c) */
        if (c->kernel->splittable)
            st = pg__split_submit(rt, c, &split);
        if (!st && !split)
            st = pg__exec_submit(rt, c);
        if (c->state == PG__PENDING && !split)
            whole = 0;
        if (!st && !split && rt->opt.sync)
            st = pg__wait_comp(rt, c);
        pg__comp_unref(rt, c);
    }
    if (cap) {
        g->captures++;
        pg__plan *p = pg__plan_capture_end(rt, cap, !st && whole);
        if (p) {
            pg__plan_free(rt, g->plan);
            g->plan = p;
        }
    }
    pg__leave(rt);
    return st;
}

pg_status pg_graph_calls(pg_graph *h, int64_t *ncalls) {
    pg__error_clear();
    if (!ncalls)
        return pg__error(PG_ERROR_ARGUMENT, "pg_graph_calls: ncalls must not be NULL");
    pg__graph *g = enter_graph(h, "pg_graph_calls");
    if (!g)
        return PG_ERROR_STATE;
    *ncalls = g->ncalls;
    pg__leave(g->rt);
    return PG_OK;
}

pg_status pg_graph_call(pg_graph *h, int64_t index, pg_graph_call_info *out) {
    pg__error_clear();
    if (!out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_graph_call: out must not be NULL");
    pg__graph *g = enter_graph(h, "pg_graph_call");
    if (!g)
        return PG_ERROR_STATE;
    pg_status st = PG_OK;
    if (index < 0 || index >= g->ncalls)
        st = pg__error(PG_ERROR_ARGUMENT, "pg_graph_call: call %lld of a recording of %d calls",
                       (long long)index, g->ncalls);
    if (!st) {
        const pg__comp *c = g->calls[index];
        memset(out, 0, sizeof *out);
        snprintf(out->kernel, sizeof out->kernel, "%s", c->kernel->name);
        out->grid = c->grid;
        out->block = c->block;
        for (int i = 0; i < c->nargs && out->nargs < PG_GRAPH_CALL_ARGS; i++) {
            const pg__array *a = c->args[i].array;
            out->args[out->nargs].array = a->id;
            out->args[out->nargs].access = c->args[i].access;
            out->args[out->nargs].first = a->off;
            out->args[out->nargs].count = a->size;
            out->nargs++;
        }
    }
    pg__leave(g->rt);
    return st;
}

pg_status pg_graph_free(pg_graph *h) {
    pg__error_clear();
    pg__graph *g = enter_graph(h, "pg_graph_free");
    if (!g)
        return PG_ERROR_STATE;
    pg__runtime *rt = g->rt;
    pg__handle_release(g->handle);
    pg__graph *last = rt->graphs[--rt->ngraphs];
    rt->graphs[g->live_index] = last;
    last->live_index = g->live_index;
    graph_destroy(rt, g);
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_graph_recording(pg_runtime *h, int *recording) {
    pg__error_clear();
    if (!recording)
        return pg__error(PG_ERROR_ARGUMENT, "pg_graph_recording: recording must not be NULL");
    pg__runtime *rt = pg__enter_runtime(h, "pg_graph_recording");
    if (!rt)
        return PG_ERROR_STATE;
    *recording = recording_here(rt);
    pg__leave(rt);
    return PG_OK;
}

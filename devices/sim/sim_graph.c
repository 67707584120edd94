/* sim_graph.c: backend graphs of the simulated devices — a recording's replay (core/replay.c)
 * launched as one operation, as a CUDA graph is on real GPUs.
 *
 * A graph launch on stream s costs the host the topology's graph_us plus graph_node_ns per node
 * (one driver call; NVIDIA gives ~2.5 us + ~1 ns per node for cuGraphLaunch on Hopper), instead
 * of launch_us / copy_us per operation. Its nodes then run in virtual time with their dependency
 * edges: those without dependencies after everything enqueued on s before the launch, and no
 * sooner than launch_latency_us after the call (the device side of a launch); each kernel node
 * for its duration as a launch of the same kernel takes (sim_work.c: the profile's, less what a
 * recorded sample holds beyond the kernel, or the default), copies over their routes and copy
 * engines, empty nodes at once. A graph adds no device-side time per node of its own: the gap
 * between dependent graph nodes (~1 us) is in the kernels' durations, since a profile sample
 * less profile_us is the kernel's time as a node of a CUDA graph chain (measured on H200s,
 * benchmarks/results/2026-11-26-h200x2-3e50c80-sim-validation-2: seven CG kernels within
 * 0.5 us; a chain of trivial kernels ran at 0.96-1.16 us per node). Work enqueued on s after the
 * launch starts once every node has finished. Nodes may run on several GPUs; an edge between
 * nodes on two GPUs (the stream's earlier work and the work after the launch counting as on the
 * stream's GPU) costs the topology's graph_edge_us: a cross-device signal, which kept a CUDA
 * graph of CG over 2 H200s ~27 us an iteration slower than its kernels and copies (calibration in
 * benchmarks/results/2026-11-26-sim-validation-3).
 *
 * Each node runs on an engine queue of the graph's own (one per chain of nodes, each after the
 * previous one of its chain), so launches of one graph run one after another, as launches of a
 * CUDA graph do. With compute=cpu the nodes' kernels and copies are also done for real, in node
 * order (a topological order), when the graph is launched. */
#include "base/alloc.h"
#include "base/error.h"
#include "devices/sim/sim_internal.h"

#include <stdio.h>
#include <string.h>

typedef struct gnode {
    pg__bnode_kind kind;
    int dev;
    pg__sim_work w; /* launch, copy: what it does in the engine (empty: nothing) */
    int queue;      /* index in the graph's queues */
    /* launch (compute=cpu runs it) */
    const pg__sim_fn *fn;
    pg_dim3 grid, block;
    size_t shared_mem;
    uint64_t *params;
    int nparams;
    /* copy (compute=cpu, or host to host, moves the bytes) */
    int dst_loc, src_loc;
    void *dst;
    const void *src;
    size_t bytes;
    int *deps;
    int ndeps;
} gnode;

typedef struct sim_graph {
    int n;
    gnode *nodes;
    int *sink;        /* 1: no node depends on it */
    pg__sim_op **ops; /* scratch of a launch: each node's operation */
    int nq;
    pg__sim_queue **q;
    /* Edges between GPUs (graph_edge_us > 0): per node, and [n] for the work before the launch,
     * a queue of the signals it gives nodes on other GPUs, and a launch's signal (scratch). */
    pg__sim_queue **eq;
    pg__sim_op **eop;
} sim_graph;

static int loc_of(int dev) {
    return dev == PG_HOST ? 0 : dev + 1;
}

static void graph_free(pg__backend *b, sim_graph *g) {
    if (!g)
        return;
    pthread_mutex_lock(&b->mu);
    for (int i = 0; i < g->nq; i++)
        pg__sim_queue_free(b->eng, g->q[i]);
    for (int i = 0; g->eq && i <= g->n; i++)
        if (g->eq[i])
            pg__sim_queue_free(b->eng, g->eq[i]);
    pthread_mutex_unlock(&b->mu);
    for (int i = 0; i < g->n; i++) {
        pg__free(g->nodes[i].params);
        pg__free(g->nodes[i].deps);
    }
    pg__free(g->nodes);
    pg__free(g->sink);
    pg__free(g->ops);
    pg__free(g->q);
    pg__free(g->eq);
    pg__free(g->eop);
    pg__free(g);
}

void pg__sim_graph_free(pg__backend *b, void *graph) {
    graph_free(b, graph);
}

static pg_status node_copy(pg__backend *b, const pg__bnode *in, int i, gnode *o) {
    o->kind = in->kind;
    o->dev = in->dev;
    if (in->dev < 0 || in->dev >= b->topo->ngpu)
        return pg__error(PG_ERROR_INTERNAL,
                         "sim graph: node %d is on device %d, which does not exist", i, in->dev);
    if (in->ndeps && !(o->deps = pg__malloc((size_t)in->ndeps * sizeof *o->deps)))
        return PG_ERROR_OUT_OF_MEMORY;
    for (int j = 0; j < in->ndeps; j++) {
        if (in->deps[j] < 0 || in->deps[j] >= i)
            return pg__error(PG_ERROR_INTERNAL,
                             "sim graph: node %d depends on node %d, which is not an earlier one",
                             i, in->deps[j]);
        o->deps[o->ndeps++] = in->deps[j];
    }
    if (in->kind == PG__BNODE_LAUNCH) {
        o->fn = in->fn;
        if (!o->fn || o->fn->dev != in->dev)
            return pg__error(PG_ERROR_INTERNAL,
                             "sim graph: node %d launches a kernel loaded for another device", i);
        o->grid = in->grid;
        o->block = in->block;
        o->shared_mem = in->shared_mem;
        o->nparams = in->nparams;
        if (in->nparams && !(o->params = pg__malloc((size_t)in->nparams * sizeof *o->params)))
            return PG_ERROR_OUT_OF_MEMORY;
        if (in->nparams)
            memcpy(o->params, in->params, (size_t)in->nparams * sizeof *o->params);
    } else if (in->kind == PG__BNODE_COPY) {
        o->dst_loc = loc_of(in->dst_dev);
        o->src_loc = loc_of(in->src_dev);
        o->dst = in->dst;
        o->src = in->src;
        o->bytes = in->bytes;
        if (pg__sim_copy_work(b, in->dev, o->dst_loc, o->src_loc, (double)in->bytes, &o->w))
            return pg__error(PG_ERROR_INTERNAL,
                             "sim graph: node %d copies between devices %d and %d: no such device",
                             i, in->src_dev, in->dst_dev);
    }
    return PG_OK;
}

pg_status pg__sim_graph_build(pg__backend *b, const pg__bnode *nodes, int n, void **out) {
    sim_graph *g = pg__calloc(1, sizeof *g);
    pg_status st = g ? PG_OK : PG_ERROR_OUT_OF_MEMORY;
    if (!st && n > 0) {
        g->nodes = pg__calloc((size_t)n, sizeof *g->nodes);
        g->sink = pg__calloc((size_t)n, sizeof *g->sink);
        g->ops = pg__calloc((size_t)n, sizeof *g->ops);
        g->q = pg__calloc((size_t)n, sizeof *g->q);
        g->eq = pg__calloc((size_t)n + 1, sizeof *g->eq);
        g->eop = pg__calloc((size_t)n + 1, sizeof *g->eop);
        if (!g->nodes || !g->sink || !g->ops || !g->q || !g->eq || !g->eop)
            st = PG_ERROR_OUT_OF_MEMORY;
    }
    for (int i = 0; !st && i < n; i++) {
        st = node_copy(b, &nodes[i], i, &g->nodes[i]);
        g->n = i + 1; /* what graph_free frees */
    }
    /* Chains: a node goes on the queue of its first dependency that no other node continues
     * yet, else on a queue of its own. */
    int *continued = !st && n ? pg__calloc((size_t)n, sizeof *continued) : NULL;
    if (!st && n && !continued)
        st = PG_ERROR_OUT_OF_MEMORY;
    for (int i = 0; !st && i < n; i++) {
        gnode *o = &g->nodes[i];
        o->queue = -1;
        g->sink[i] = 1;
        for (int j = 0; j < o->ndeps; j++) {
            g->sink[o->deps[j]] = 0;
            if (o->queue < 0 && !continued[o->deps[j]]) {
                continued[o->deps[j]] = 1;
                o->queue = g->nodes[o->deps[j]].queue;
            }
        }
        if (o->queue < 0)
            o->queue = g->nq++;
    }
    pg__free(continued);
    if (!st) {
        pthread_mutex_lock(&b->mu);
        /* Kernel durations from the buffers the parameters lie in now (the plan's own, which
         * stay while it can be launched). */
        for (int i = 0; i < n; i++) {
            gnode *o = &g->nodes[i];
            if (o->kind == PG__BNODE_LAUNCH)
                pg__sim_kernel_work(b, o->fn, o->grid, o->block, o->params, o->nparams, &o->w);
        }
        int made = 0;
        while (made < g->nq && (g->q[made] = pg__sim_queue_new(b->eng)))
            made++;
        pthread_mutex_unlock(&b->mu);
        if (made < g->nq) {
            g->nq = made;
            st = PG_ERROR_OUT_OF_MEMORY;
        }
    }
    if (st) {
        graph_free(b, g);
        return st == PG_ERROR_OUT_OF_MEMORY
                   ? pg__error(st, "out of host memory for a sim graph of %d nodes", n)
                   : st;
    }
    *out = g;
    return PG_OK;
}

/* compute=cpu (or host-to-host copies): the nodes' work done for real, in node order. The first
 * kernel that faults is told in why. Called locked; unlocks while kernels run. */
static pg_status run_for_real(pg__backend *b, sim_graph *g, int *failed, char *why, size_t cap) {
    /* *failed: 1 + the device of the first kernel that faulted */
    for (int i = 0; i < g->n; i++) {
        gnode *o = &g->nodes[i];
        if (o->kind == PG__BNODE_COPY && o->bytes && (b->mem.real || (!o->src_loc && !o->dst_loc)))
            memmove(o->dst, o->src, o->bytes);
        if (o->kind != PG__BNODE_LAUNCH || !o->fn->cpu_fn || *failed)
            continue;
        char msg[400] = "";
        int bad = 0;
        pthread_mutex_unlock(&b->mu);
        pg_status st = pg__sim_cpu_run(b, o->fn->cpu_fn, o->grid, o->block, o->shared_mem,
                                       o->params, o->nparams, &bad, msg, sizeof msg);
        pthread_mutex_lock(&b->mu);
        if (st)
            return pg__error_wrap(st, "sim compute=cpu: running kernel '%s' (graph node %d)",
                                  o->fn->k->name, i);
        if (bad) {
            *failed = 1 + o->dev;
            snprintf(why, cap, "kernel '%s' failed on simulated GPU %d (run on the CPU): %s",
                     o->fn->k->name, o->dev, msg);
        }
    }
    return PG_OK;
}

/* What a node on GPU `dev` waits for to follow `src` (node `slot`'s operation on GPU
 * `src_dev`; slot n: the stream's work before the launch): src itself on its own GPU; on another
 * GPU, a signal that ends graph_edge_us after src — one per source and launch, on a queue of its
 * own. NULL with *oom set: out of memory. */
static pg__sim_op *follow(pg__backend *b, sim_graph *g, int slot, pg__sim_op *src, int src_dev,
                          int dev, double not_before, int *oom) {
    double edge_ns = b->topo->graph_edge_us * 1e3;
    if (!src || src_dev == dev || !(edge_ns > 0))
        return src;
    if (!g->eop[slot]) {
        if (!g->eq[slot] && !(g->eq[slot] = pg__sim_queue_new(b->eng))) {
            *oom = 1;
            return NULL;
        }
        pg__sim_work w = {.delay = edge_ns, .not_before = not_before};
        if (!(g->eop[slot] = pg__sim_enqueue(b->eng, g->eq[slot], &w, &src, 1)))
            *oom = 1;
    }
    return g->eop[slot];
}

pg_status pg__sim_graph_launch(pg__backend *b, pg__bstream *s, void *graph) {
    sim_graph *g = graph;
    char why[480] = "";
    int failed = 0;
    pg__sim_enter(b);
    pg_status st = run_for_real(b, g, &failed, why, sizeof why);
    if (st) {
        pg__sim_leave(b);
        return st;
    }
    if (b->cpu_b) { /* the kernels' real time is the simulator's: the host's clock restarts */
        pg__sim_leave(b);
        pg__sim_enter(b);
    }
    pg__sim_host_spends(b, b->topo->graph_api_us + g->n * b->topo->graph_node_ns * 1e-3);
    double not_before = pg__sim_now(b->eng) + b->topo->launch_latency_us * 1e3;
    pg__sim_op *before = pg__sim_queue_last(s->q); /* borrowed: s holds it */
    int nsinks = 0, oom = 0;
    for (int i = 0; i < g->n && !st; i++) {
        gnode *o = &g->nodes[i];
        pg__sim_op *deps[64], **dp = deps;
        int nd = o->ndeps ? o->ndeps : 1;
        if (nd > 64 && !(dp = pg__malloc((size_t)nd * sizeof *dp))) {
            st = PG_ERROR_OUT_OF_MEMORY;
            break;
        }
        if (!o->ndeps)
            dp[0] = follow(b, g, g->n, before, s->dev, o->dev, not_before, &oom);
        for (int j = 0; j < o->ndeps; j++)
            dp[j] = follow(b, g, o->deps[j], g->ops[o->deps[j]], g->nodes[o->deps[j]].dev, o->dev,
                           not_before, &oom);
        pg__sim_work w = o->w; /* empty nodes: all zero, a marker */
        w.not_before = not_before;
        if (oom || !(g->ops[i] = pg__sim_enqueue(b->eng, g->q[o->queue], &w, dp, nd)))
            st = PG_ERROR_OUT_OF_MEMORY;
        if (dp != deps)
            pg__free(dp);
        nsinks += g->sink[i];
    }
    pg__sim_op *join = NULL;
    if (!st) {
        /* The graph as one operation of s: a marker after every node without dependents. */
        pg__sim_op **sinks = pg__malloc((size_t)(nsinks ? nsinks : 1) * sizeof *sinks);
        int k = 0;
        for (int i = 0; sinks && i < g->n; i++)
            if (g->sink[i])
                sinks[k++] = follow(b, g, i, g->ops[i], g->nodes[i].dev, s->dev, not_before, &oom);
        if (oom) {
            pg__free(sinks);
            sinks = NULL;
        }
        join = sinks ? pg__sim_submit(b, s, NULL, sinks, k) : NULL;
        pg__free(sinks);
        if (!join)
            st = PG_ERROR_OUT_OF_MEMORY;
    }
    if (join && failed)
        pg__sim_op_fail(join, failed - 1, why);
    pg__sim_op_unref(join);
    for (int i = 0; i < g->n; i++) {
        pg__sim_op_unref(g->ops[i]);
        g->ops[i] = NULL;
    }
    for (int i = 0; g->eop && i <= g->n; i++) {
        pg__sim_op_unref(g->eop[i]);
        g->eop[i] = NULL;
    }
    pg__sim_leave(b);
    return st ? pg__error(st, "out of host memory launching a sim graph of %d nodes", g->n) : PG_OK;
}

/* dag_view.h: the runtime's DAG (pg_dag_snapshot) in fixed arrays, for assertions in tests. */
#ifndef PG_TEST_DAG_VIEW_H
#define PG_TEST_DAG_VIEW_H

#include "polygpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tvertex {
    long id;
    char kind[16];
    char name[64];
    int device, stream;
    long long submit_ns, start_ns, end_ns; /* start/end 0 when not timed */
} tvertex;

typedef struct tdag {
    int nv, ne;
    tvertex v[4096];
    long e[8192][2];
} tdag;

/* Load the runtime's current DAG; exits the test if the snapshot fails. */
static inline void tdag_load(pg_runtime *rt, tdag *d) {
    static const char *kinds[] = {"kernel", "host_read", "host_write", "copy"};
    pg_dag *g;
    size_t nv = 0, ne = 0;
    if (pg_dag_snapshot(rt, &g) != PG_OK || pg_dag_vertex_count(g, &nv) != PG_OK ||
        pg_dag_edge_count(g, &ne) != PG_OK) {
        fprintf(stderr, "DAG snapshot failed: %s\n", pg_last_error());
        exit(1);
    }
    memset(d, 0, sizeof *d);
    for (size_t i = 0; i < nv && d->nv < 4096; i++) {
        pg_dag_vertex_info x;
        if (pg_dag_vertex(g, i, &x) != PG_OK)
            break;
        tvertex *v = &d->v[d->nv++];
        v->id = (long)x.id;
        snprintf(v->kind, sizeof v->kind, "%s", kinds[x.kind]);
        snprintf(v->name, sizeof v->name, "%s", x.name);
        v->device = x.device;
        v->stream = x.stream;
        v->submit_ns = (long long)x.submit_ns;
        v->start_ns = (long long)x.start_ns;
        v->end_ns = (long long)x.end_ns;
    }
    for (size_t i = 0; i < ne && d->ne < 8192; i++) {
        uint64_t from, to;
        if (pg_dag_edge(g, i, &from, &to) != PG_OK)
            break;
        d->e[d->ne][0] = (long)from;
        d->e[d->ne][1] = (long)to;
        d->ne++;
    }
    pg_dag_free(g);
}

/* The id of the n-th (0-based) vertex of a kind ("kernel", "host_read", ...), or -1. */
static inline long tdag_nth(const tdag *d, const char *kind, int n) {
    for (int i = 0; i < d->nv; i++)
        if (!strcmp(d->v[i].kind, kind) && n-- == 0)
            return d->v[i].id;
    return -1;
}

static inline const tvertex *tdag_vertex(const tdag *d, long id) {
    for (int i = 0; i < d->nv; i++)
        if (d->v[i].id == id)
            return &d->v[i];
    return NULL;
}

static inline int tdag_edge(const tdag *d, long from, long to) {
    for (int i = 0; i < d->ne; i++)
        if (d->e[i][0] == from && d->e[i][1] == to)
            return 1;
    return 0;
}

/* Edges between two non-copy vertices (copies add edges of their own). */
static inline int tdag_direct_edges(const tdag *d) {
    int n = 0;
    for (int i = 0; i < d->ne; i++) {
        const tvertex *a = tdag_vertex(d, d->e[i][0]), *b = tdag_vertex(d, d->e[i][1]);
        n += a && b && strcmp(a->kind, "copy") && strcmp(b->kind, "copy");
    }
    return n;
}

#endif

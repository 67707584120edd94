/* dag_json.h: reads the runtime's DAG JSON (our own fixed schema) for assertions in tests. */
#ifndef PG_TEST_DAG_JSON_H
#define PG_TEST_DAG_JSON_H

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

static inline const char *tdag_field(const char *p, const char *end, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *q = strstr(p, pat);
    return q && q < end ? q + strlen(pat) : NULL;
}

static inline void tdag_str(const char *q, char *out, size_t cap) {
    size_t n = 0;
    if (q && *q == '"')
        for (q++; *q && *q != '"' && n + 1 < cap; q++)
            out[n++] = *q == '\\' ? *++q : *q;
    out[n] = '\0';
}

/* Parse the runtime's current DAG; exits the test if the export fails. */
static inline void tdag_load(pg_runtime *rt, tdag *d) {
    char *s;
    if (pg_dag_export_string(rt, PG_DAG_JSON, &s) != PG_OK) {
        fprintf(stderr, "DAG export failed: %s\n", pg_last_error());
        exit(1);
    }
    memset(d, 0, sizeof *d);
    const char *edges = strstr(s, "\"edges\":[");
    const char *p = s;
    while ((p = strstr(p, "{\"id\":")) && p < edges && d->nv < 4096) {
        const char *end = strstr(p + 1, "{\"id\":");
        if (!end || end > edges)
            end = edges;
        tvertex *v = &d->v[d->nv++];
        v->id = strtol(p + 6, NULL, 10);
        tdag_str(tdag_field(p, end, "kind"), v->kind, sizeof v->kind);
        tdag_str(tdag_field(p, end, "name"), v->name, sizeof v->name);
        v->device = (int)strtol(tdag_field(p, end, "device"), NULL, 10);
        v->stream = (int)strtol(tdag_field(p, end, "stream"), NULL, 10);
        v->submit_ns = strtoll(tdag_field(p, end, "submit_ns"), NULL, 10);
        v->start_ns = strtoll(tdag_field(p, end, "start_ns"), NULL, 10);
        v->end_ns = strtoll(tdag_field(p, end, "end_ns"), NULL, 10);
        p = end;
    }
    p = edges + 9;
    while (*p == '[' && d->ne < 8192) {
        char *q;
        d->e[d->ne][0] = strtol(p + 1, &q, 10);
        d->e[d->ne][1] = strtol(q + 1, &q, 10);
        d->ne++;
        p = q + 1;
        if (*p == ',')
            p++;
    }
    pg_string_free(s);
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

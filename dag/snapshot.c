/* snapshot.c: the records of the most recent computations copied into a pg_dag, the one source
 * of the public iteration API, the DOT and JSON exports and the trace. */
#include "dag/record.h"

#include "base/alloc.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

static const pg__record *find(const pg__record *ring, uint64_t id) {
    const pg__record *r = &ring[id % PG_DAG_HISTORY];
    return r->id == id ? r : NULL;
}

pg_status pg__records_snapshot(const pg__record *ring, uint64_t last_id,
                               const pg__dag_track *tracks, int ndev, const pg__dag_power *power,
                               size_t npower, pg_dag **out) {
    /* The ring holds ids [lo, hi] at most; a slot whose id differs was overwritten or never
     * filled (a computation whose recording failed). */
    uint64_t hi = last_id;
    uint64_t lo = hi >= PG_DAG_HISTORY ? hi - PG_DAG_HISTORY + 1 : 1;
    size_t nv = 0, na = 0, ne = 0;
    for (uint64_t id = lo; id <= hi && id; id++) {
        const pg__record *r = find(ring, id);
        if (!r)
            continue;
        nv++;
        na += (size_t)r->nargs;
        for (int i = 0; i < r->nparents; i++)
            ne += find(ring, r->parent_ids[i]) != NULL;
    }
    /* One block: the header, then vertices, args, edges and power samples (each a multiple of
     * 8 bytes). */
    size_t size = sizeof(pg_dag) + nv * sizeof(pg_dag_vertex_info) + na * sizeof(pg_dag_arg) +
                  ne * 16 + npower * sizeof(pg__dag_power);
    pg_dag *dag = pg__malloc(size);
    if (!dag)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory for a DAG snapshot");
    memset(dag, 0, sizeof *dag);
    dag->nvertices = nv;
    dag->nedges = ne;
    dag->vertices = (pg_dag_vertex_info *)(dag + 1);
    dag->args = (pg_dag_arg *)(dag->vertices + nv);
    dag->edges = (uint64_t(*)[2])(dag->args + na);
    dag->npower = npower;
    dag->power = (pg__dag_power *)(dag->edges + ne);
    if (npower)
        memcpy(dag->power, power, npower * sizeof *power);
    size_t v = 0, a = 0, e = 0;
    for (uint64_t id = lo; id <= hi && id; id++) {
        const pg__record *r = find(ring, id);
        if (!r)
            continue;
        pg_dag_vertex_info *x = &dag->vertices[v++];
        memset(x, 0, sizeof *x);
        x->id = r->id;
        x->kind = r->kind;
        memcpy(x->name, r->name, sizeof x->name);
        x->name[sizeof x->name - 1] = '\0';
        x->device = r->device;
        x->stream = r->stream;
        x->nargs = r->nargs;
        x->args = &dag->args[a];
        for (int i = 0; i < r->nargs; i++, a++) {
            dag->args[a].array = r->arg_ids[i];
            dag->args[a].access = r->arg_access[i];
        }
        x->submit_ns = r->submit_ns;
        x->start_ns = r->start_ns;
        x->end_ns = r->end_ns;
        x->src = x->dst = PG_HOST;
        x->part = r->part;
        x->parts = r->parts;
        if (r->kind == PG_DAG_COPY) {
            x->bytes = r->bytes;
            x->src = r->src;
            x->dst = r->dst;
        }
        for (int i = 0; i < r->nparents; i++)
            if (find(ring, r->parent_ids[i])) {
                dag->edges[e][0] = r->parent_ids[i];
                dag->edges[e][1] = id;
                e++;
            }
    }
    dag->ndev = ndev;
    memcpy(dag->dev, tracks, (size_t)ndev * sizeof *tracks);
    *out = dag;
    return PG_OK;
}

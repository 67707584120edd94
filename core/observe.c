/* observe.c: what core tells the record of recent computations (dag/record.h), and the public
 * doors to it: DAG snapshots and their accessors, the DAG export and the trace. dag/ keeps the
 * records, makes the snapshot and writes it out; core's part is describing its computations,
 * the lock, and folding in what has finished. */
#include "core/observe.h"
#include "core/comp.h"
#include "core/handle.h"
#include "core/util.h"
#include "core/power.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pg_dag_kind kind_of(pg__comp_kind k) {
    switch (k) {
    case PG__KERNEL:
    case PG__REPLAY: /* a replay stands for the kernels it launches */
        return PG_DAG_KERNEL;
    case PG__HOST_READ:
        return PG_DAG_HOST_READ;
    case PG__HOST_WRITE:
        return PG_DAG_HOST_WRITE;
    case PG__COPY:
        break;
    }
    return PG_DAG_COPY;
}

pg_status pg__dag_record(pg__runtime *rt, pg__comp *c, const char *name) {
    /* Pieces carry their array's id: one entry per array, accesses merged. */
    int pieces = 0;
    for (int i = 0; i < c->nargs && !pieces; i++)
        pieces = c->args[i].array->kind == PG__A_PIECE;
    int n = c->nargs;
    uint64_t ids[PG__MAX_PARAMS];
    pg_access acc[PG__MAX_PARAMS];
    if (pieces) {
        n = 0;
        for (int i = 0; i < c->nargs && n < PG__MAX_PARAMS; i++) {
            int j = 0;
            while (j < n && ids[j] != c->args[i].array->id)
                j++;
            if (j == n) {
                ids[n] = c->args[i].array->id;
                acc[n++] = 0;
            }
            acc[j] |= c->args[i].access;
        }
    }
    pg__record *r = pg__records_add(rt->records, c->id, n, c->nparents);
    if (!r)
        return PG_ERROR_OUT_OF_MEMORY;
    r->kind = kind_of(c->kind);
    strncpy(r->name, name, sizeof r->name - 1); /* the slot was cleared: NUL-terminated */
    r->part = c->part;                          /* a part of a split launch (core/split.c) */
    r->parts = c->parts;
    r->submit_ns = pg__now_ns() - rt->epoch_ns;
    for (int i = 0; i < n; i++) {
        r->arg_ids[i] = pieces ? ids[i] : c->args[i].array->id;
        r->arg_access[i] = pieces ? acc[i] : c->args[i].access;
    }
    for (int i = 0; i < c->nparents; i++)
        r->parent_ids[i] = c->parents[i]->id;
    if (c->kind == PG__COPY) {
        r->bytes = c->copy_bytes;
        r->src = c->copy_src - 1; /* locations to device ids */
        r->dst = c->copy_dst - 1;
    }
    return PG_OK;
}

void pg__dag_record_device(pg__runtime *rt, pg__comp *c) {
    pg__records_place(rt->records, c->id, c->device,
                      !c->stream        ? -1
                      : c->stream->copy ? PG_DAG_COPY_STREAM
                                        : c->stream->index);
}

pg_status pg__dag_record_add_parent(pg__runtime *rt, pg__comp *c, uint64_t parent) {
    return pg__records_add_parent(rt->records, c->id, parent);
}

void pg__dag_record_drop(pg__runtime *rt, pg__comp *c) {
    pg__records_drop(rt->records, c->id);
}

void pg__dag_record_timing(pg__runtime *rt, pg__comp *c) {
    pg__records_timing(rt->records, c->id, c->timing.start_ns, c->timing.end_ns);
}

/* The GPU's own timeline, where the backend records one (trace option, CUPTI); else why not.
 * Its absence is no error: the snapshot and the trace go on without it. */
static void gpu_timeline_add(pg__runtime *rt, pg_dag *dag) {
    char why[sizeof dag->gpu_timeline - 64] = "";
    if (!rt->opt.trace[0])
        snprintf(why, sizeof why, "the trace option is off");
    else if (!rt->ops->gpu_timeline)
        snprintf(why, sizeof why, "no GPU: %s devices have no GPU timeline of their own%s",
                 rt->ops->name, rt->ops->clock_ns ? " (their trace is their timeline)" : "");
    else if (rt->ops->gpu_timeline(rt->b, rt->epoch_ns, rt->inflight_head == NULL, &dag->gpu,
                                   &dag->ngpu, why, sizeof why)) {
        snprintf(dag->gpu_timeline, sizeof dag->gpu_timeline, "available (%zu spans%s%s)",
                 dag->ngpu, why[0] ? "; " : "", why);
        return;
    }
    snprintf(dag->gpu_timeline, sizeof dag->gpu_timeline, "unavailable (%s)", why);
}

pg_status pg__dag_snapshot(pg__runtime *rt, pg_dag **out) {
    pg__dag_track tracks[PG_MAX_DEVICES];
    memset(tracks, 0, sizeof tracks);
    for (int d = 0; d < rt->ndev; d++) {
        snprintf(tracks[d].name, sizeof tracks[d].name, "%s", rt->dev[d].info.name);
        tracks[d].nstreams = rt->dev[d].nstreams;
        tracks[d].copy_stream = rt->dev[d].copy_stream != NULL;
    }
    pg__dag_power *power = NULL;
    size_t npower = 0;
    pg_status st = pg__power_samples(rt, &power, &npower);
    if (!st)
        st = pg__records_snapshot(rt->records, rt->next_comp_id, tracks, rt->ndev, power, npower,
                                  out);
    pg__free(power);
    for (size_t i = 0; !st && i < (*out)->nvertices; i++)
        (*out)->vertices[i].rank = rt->rank; /* a rank records only the work it ran */
    if (!st) {
        (*out)->rank = rt->rank;
        (*out)->nranks = rt->nranks;
        gpu_timeline_add(rt, *out);
    }
    return st;
}

/* Lock held: a snapshot with the timings of what has finished by now. */
static pg_status snapshot_locked(pg__runtime *rt, pg_dag **out) {
    pg__comp_sweep(rt, 1 << 30);
    return pg__dag_snapshot(rt, out);
}

static pg_status snapshot(pg_runtime *h, const char *fn, pg_dag **out) {
    pg__runtime *rt = pg__enter_runtime(h, fn);
    if (!rt)
        return PG_ERROR_STATE;
    pg_status st = snapshot_locked(rt, out);
    pg__leave(rt);
    return st;
}

pg_status pg_dag_snapshot(pg_runtime *h, pg_dag **out) {
    pg__error_clear();
    if (!out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dag_snapshot: out must not be NULL");
    return snapshot(h, "pg_dag_snapshot", out);
}

void pg_dag_free(pg_dag *dag) {
    if (dag)
        pg__free(dag->gpu);
    pg__free(dag); /* one block (dag/snapshot.c), and the GPU's spans */
}

pg_status pg_dag_gpu_span_count(const pg_dag *dag, size_t *count) {
    pg__error_clear();
    if (!dag || !count)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dag_gpu_span_count: %s must not be NULL",
                         dag ? "count" : "dag");
    *count = dag->ngpu;
    return PG_OK;
}

pg_status pg_dag_gpu_span(const pg_dag *dag, size_t index, pg_gpu_span *out) {
    pg__error_clear();
    if (!dag || !out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dag_gpu_span: %s must not be NULL",
                         dag ? "out" : "dag");
    if (index >= dag->ngpu)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_dag_gpu_span: index %zu is out of range: the snapshot has %zu GPU "
                         "spans (pg_dag_gpu_span_count; %s)",
                         index, dag->ngpu, dag->gpu_timeline);
    *out = dag->gpu[index];
    return PG_OK;
}

const char *pg_dag_gpu_timeline(const pg_dag *dag) {
    return dag ? dag->gpu_timeline : NULL;
}

pg_status pg_dag_vertex_count(const pg_dag *dag, size_t *count) {
    pg__error_clear();
    if (!dag || !count)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dag_vertex_count: %s must not be NULL",
                         dag ? "count" : "dag");
    *count = dag->nvertices;
    return PG_OK;
}

pg_status pg_dag_vertex(const pg_dag *dag, size_t index, pg_dag_vertex_info *out) {
    pg__error_clear();
    if (!dag || !out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dag_vertex: %s must not be NULL",
                         dag ? "out" : "dag");
    if (index >= dag->nvertices)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_dag_vertex: index %zu is out of range: the snapshot has %zu "
                         "vertices (pg_dag_vertex_count)",
                         index, dag->nvertices);
    *out = dag->vertices[index];
    return PG_OK;
}

pg_status pg_dag_edge_count(const pg_dag *dag, size_t *count) {
    pg__error_clear();
    if (!dag || !count)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dag_edge_count: %s must not be NULL",
                         dag ? "count" : "dag");
    *count = dag->nedges;
    return PG_OK;
}

pg_status pg_dag_edge(const pg_dag *dag, size_t index, uint64_t *from, uint64_t *to) {
    pg__error_clear();
    if (!dag || !from || !to)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dag_edge: %s must not be NULL",
                         !dag    ? "dag"
                         : !from ? "from"
                                 : "to");
    if (index >= dag->nedges)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_dag_edge: index %zu is out of range: the snapshot has %zu edges "
                         "(pg_dag_edge_count)",
                         index, dag->nedges);
    *from = dag->edges[index][0];
    *to = dag->edges[index][1];
    return PG_OK;
}

static pg_status check_format(const char *fn, pg_dag_format format) {
    if (format != PG_DAG_DOT && format != PG_DAG_JSON)
        return pg__error(PG_ERROR_ARGUMENT,
                         "%s: unknown DAG format %d: use PG_DAG_DOT or PG_DAG_JSON", fn,
                         (int)format);
    return PG_OK;
}

static pg_status to_string(const pg_dag *dag, pg_dag_format format, char **out) {
    return format == PG_DAG_JSON ? pg__dag_to_json(dag, out) : pg__dag_to_dot(dag, out);
}

pg_status pg_dag_to_string(const pg_dag *dag, pg_dag_format format, char **out) {
    pg__error_clear();
    if (!dag || !out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dag_to_string: %s must not be NULL",
                         dag ? "out" : "dag");
    pg_status st = check_format("pg_dag_to_string", format);
    return st ? st : to_string(dag, format, out);
}

pg_status pg_dag_export_string(pg_runtime *h, pg_dag_format format, char **out) {
    pg__error_clear();
    if (!out)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dag_export_string: out must not be NULL");
    pg_status st = check_format("pg_dag_export_string", format);
    pg_dag *dag = NULL;
    if (!st)
        st = snapshot(h, "pg_dag_export_string", &dag);
    if (!st)
        st = to_string(dag, format, out); /* outside the lock */
    pg_dag_free(dag);
    return st;
}

static pg_status write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f)
        return pg__error(PG_ERROR_IO, "cannot open '%s' for writing: %s", path, strerror(errno));
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    return ok ? PG_OK : pg__error(PG_ERROR_IO, "writing '%s' failed (disk full?)", path);
}

pg_status pg_dag_export(pg_runtime *h, pg_dag_format format, const char *path) {
    pg__error_clear();
    if (!path)
        return pg__error(PG_ERROR_ARGUMENT, "pg_dag_export: path must not be NULL");
    char *s;
    pg_status st = check_format("pg_dag_export", format);
    pg_dag *dag = NULL;
    if (!st)
        st = snapshot(h, "pg_dag_export", &dag);
    if (!st && !(st = to_string(dag, format, &s))) {
        st = write_file(path, s);
        pg__free(s);
    }
    pg_dag_free(dag);
    return st;
}

static pg_status write_trace(pg_dag *dag, const char *path) {
    char *s;
    pg_status st = pg__trace_to_json(dag, &s);
    if (!st) {
        st = write_file(path, s);
        pg__free(s);
    }
    return st;
}

pg_status pg__trace_write_file(pg__runtime *rt, const char *path) {
    /* Several ranks write one file each: "t.json" becomes "t.rank1.json" (tools/trace_merge.py
     * makes them one timeline). */
    char mine[1100];
    if (rt->nranks > 1) {
        const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
        int stem = dot && (!slash || dot > slash) ? (int)(dot - path) : (int)strlen(path);
        snprintf(mine, sizeof mine, "%.*s.rank%d%s", stem, path, rt->rank, path + stem);
        path = mine;
    }
    pg_dag *dag = NULL;
    pg__lock(rt);
    pg_status st = snapshot_locked(rt, &dag);
    pg__unlock(rt);
    if (!st)
        st = write_trace(dag, path);
    pg_dag_free(dag);
    return st;
}

pg_status pg_trace_write(pg_runtime *h, const char *path) {
    pg__error_clear();
    if (!path)
        return pg__error(PG_ERROR_ARGUMENT, "pg_trace_write: path must not be NULL");
    pg_dag *dag = NULL;
    pg_status st = snapshot(h, "pg_trace_write", &dag);
    if (!st)
        st = write_trace(dag, path);
    pg_dag_free(dag);
    return st;
}

/* The names live in dag/record.c, where the export that prints them is (a call from dag up into
   core would break the layer order, which tests/layers checks on the objects' symbols). */
const char *pg_dag_kind_name(pg_dag_kind kind) {
    return pg__dag_kind_str(kind);
}

const char *pg_access_name(pg_access access) {
    return pg__access_str(access);
}

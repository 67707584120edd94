/* dag.c: a DAG snapshot (pg_dag) as the Python values rt.dag() returns: a dict of vertex dicts
 * and [from, to] edge lists, the JSON export's schema. */
#include "pgpy.h"

#include <string.h>

static PyObject *vertex_dict(const pg_dag_vertex_info *v) {
    PyObject *args = PyList_New(v->nargs);
    for (int i = 0; args && i < v->nargs; i++) {
        PyObject *a = Py_BuildValue("{s:K,s:s}", "array", (unsigned long long)v->args[i].array,
                                    "access", pg_access_name(v->args[i].access));
        if (!a)
            Py_CLEAR(args);
        else
            PyList_SET_ITEM(args, i, a);
    }
    PyObject *name = PyUnicode_DecodeUTF8(v->name, (Py_ssize_t)strlen(v->name), "replace");
    if (!args || !name) {
        Py_XDECREF(args);
        Py_XDECREF(name);
        return NULL;
    }
    PyObject *d = Py_BuildValue(
        "{s:K,s:s,s:N,s:i,s:i,s:i,s:N,s:K,s:K,s:K}", "id", (unsigned long long)v->id, "kind",
        pg_dag_kind_name(v->kind), "name", name, "device", v->device, "stream", v->stream, "rank",
        v->rank, "args", args, "submit_ns", (unsigned long long)v->submit_ns, "start_ns",
        (unsigned long long)v->start_ns, "end_ns", (unsigned long long)v->end_ns);
    if (d && v->parts) { /* a part of one launch split over devices */
        PyObject *c = Py_BuildValue("{s:i,s:i}", "part", v->part, "parts", v->parts);
        if (!c || PyDict_Update(d, c) < 0)
            Py_CLEAR(d);
        Py_XDECREF(c);
    }
    if (d && v->kind == PG_DAG_COPY) {
        PyObject *c = Py_BuildValue("{s:K,s:i,s:i}", "bytes", (unsigned long long)v->bytes, "src",
                                    v->src, "dst", v->dst);
        if (!c || PyDict_Update(d, c) < 0)
            Py_CLEAR(d);
        Py_XDECREF(c);
    }
    return d;
}

/* The GPU's own timeline: a list of span dicts (pg_gpu_span), the JSON export's "gpu_spans". */
static PyObject *gpu_spans(const pg_dag *g) {
    size_t n = 0;
    pg_status st = pg_dag_gpu_span_count(g, &n);
    if (st)
        return pgpy_raise(st);
    static const char *const kinds[] = {"kernel", "copy", "memset"};
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        pg_gpu_span x;
        if ((st = pg_dag_gpu_span(g, i, &x))) {
            pgpy_raise(st);
            Py_CLEAR(list);
            break;
        }
        PyObject *name = PyUnicode_DecodeUTF8(x.name, (Py_ssize_t)strlen(x.name), "replace");
        PyObject *d =
            name ? Py_BuildValue(
                       "{s:K,s:s,s:i,s:I,s:K,s:K,s:K,s:K,s:s,s:N}", "id", (unsigned long long)x.id,
                       "kind", (unsigned)x.kind < 3 ? kinds[x.kind] : "?", "device", x.device,
                       "gpu_stream", (unsigned)x.gpu_stream, "start_ns",
                       (unsigned long long)x.start_ns, "end_ns", (unsigned long long)x.end_ns,
                       "api_ns", (unsigned long long)x.api_ns, "bytes", (unsigned long long)x.bytes,
                       "copy_kind", x.copy_kind, "name", name)
                 : NULL;
        if (!d)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, d);
    }
    return list;
}

/* The snapshot as {"vertices": [...], "edges": [[from, to], ...], "gpu_timeline": "...",
 * "gpu_spans": [...]}. */
static PyObject *dag_to_py(const pg_dag *g) {
    size_t nv = 0, ne = 0;
    pg_status st = pg_dag_vertex_count(g, &nv);
    if (!st)
        st = pg_dag_edge_count(g, &ne);
    if (st)
        return pgpy_raise(st);
    PyObject *vertices = PyList_New((Py_ssize_t)nv), *edges = PyList_New((Py_ssize_t)ne);
    for (size_t i = 0; vertices && edges && i < nv; i++) {
        pg_dag_vertex_info v;
        if ((st = pg_dag_vertex(g, i, &v))) {
            pgpy_raise(st);
            Py_CLEAR(vertices);
            break;
        }
        PyObject *d = vertex_dict(&v);
        if (!d)
            Py_CLEAR(vertices);
        else
            PyList_SET_ITEM(vertices, (Py_ssize_t)i, d);
    }
    for (size_t i = 0; vertices && edges && i < ne; i++) {
        uint64_t from, to;
        if ((st = pg_dag_edge(g, i, &from, &to))) {
            pgpy_raise(st);
            Py_CLEAR(edges);
            break;
        }
        PyObject *e = Py_BuildValue("[KK]", (unsigned long long)from, (unsigned long long)to);
        if (!e)
            Py_CLEAR(edges);
        else
            PyList_SET_ITEM(edges, (Py_ssize_t)i, e);
    }
    if (!vertices || !edges) {
        Py_XDECREF(vertices);
        Py_XDECREF(edges);
        return NULL;
    }
    PyObject *spans = gpu_spans(g);
    if (!spans) {
        Py_DECREF(vertices);
        Py_DECREF(edges);
        return NULL;
    }
    const char *why = pg_dag_gpu_timeline(g);
    return Py_BuildValue("{s:N,s:N,s:s,s:N}", "vertices", vertices, "edges", edges, "gpu_timeline",
                         why ? why : "", "gpu_spans", spans);
}

PyObject *pgpy_dag(pg_runtime *h) {
    pg_dag *g = NULL;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_dag_snapshot(h, &g);
    Py_END_ALLOW_THREADS
    if (st != PG_OK)
        return pgpy_raise(st);
    PyObject *r = dag_to_py(g);
    pg_dag_free(g);
    return r;
}

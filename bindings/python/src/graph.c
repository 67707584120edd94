/* graph.c: Runtime.record() and the Graph it returns: a context manager whose block's kernel
 * calls are recorded (nothing runs), then a callable that replays them (pg_graph_*). */
#include "pgpy.h"

typedef struct pgpy_graph {
    PyObject_HEAD pg_graph *h; /* NULL until the recording ended, and after close() */
    pgpy_runtime *rt;
    int state; /* NEW, RECORDING, READY, CLOSED */
} pgpy_graph;

enum { NEW, RECORDING, READY, CLOSED };

PyObject *pgpy_runtime_record(PyObject *self, PyObject *unused) {
    (void)unused;
    pgpy_runtime *rt = (pgpy_runtime *)self;
    if (!rt->h)
        return PyErr_Format(pgpy_errors[PG_ERROR_STATE], "the Runtime was not initialized");
    pgpy_graph *g = PyObject_New(pgpy_graph, &pgpy_graph_type);
    if (!g)
        return NULL;
    g->h = NULL;
    g->state = NEW;
    Py_INCREF(self);
    g->rt = rt;
    return (PyObject *)g;
}

static PyObject *graph_enter(PyObject *self, PyObject *unused) {
    (void)unused;
    pgpy_graph *g = (pgpy_graph *)self;
    if (g->state != NEW)
        return PyErr_Format(pgpy_errors[PG_ERROR_STATE],
                            "this Graph was already recorded; call rt.record() for a new one");
    pg_status st = pg_graph_begin(g->rt->h);
    if (st != PG_OK)
        return pgpy_raise(st);
    g->state = RECORDING;
    Py_INCREF(self);
    return self;
}

static PyObject *graph_exit(PyObject *self, PyObject *args) {
    pgpy_graph *g = (pgpy_graph *)self;
    PyObject *type = Py_None, *value = Py_None, *tb = Py_None;
    if (!PyArg_UnpackTuple(args, "__exit__", 3, 3, &type, &value, &tb))
        return NULL;
    if (g->state != RECORDING)
        Py_RETURN_FALSE;
    pg_graph *h = NULL;
    pg_status st = pg_graph_end(g->rt->h, &h);
    g->state = READY;
    if (st != PG_OK) {
        g->state = CLOSED;
        if (type != Py_None)
            Py_RETURN_FALSE; /* the block's own exception is the one to see */
        return pgpy_raise(st);
    }
    g->h = h;
    if (type != Py_None) { /* the block failed: its recording is not one to replay */
        pg_graph_free(h);
        g->h = NULL;
        g->state = CLOSED;
    }
    Py_RETURN_FALSE;
}

static PyObject *graph_launch(PyObject *self, PyObject *unused) {
    (void)unused;
    pgpy_graph *g = (pgpy_graph *)self;
    if (g->state != READY)
        return PyErr_Format(pgpy_errors[PG_ERROR_STATE], "%s",
                            g->state == NEW         ? "nothing was recorded: use the Graph as "
                                                      "'with rt.record() as g: ...' first"
                            : g->state == RECORDING ? "the Graph is still being recorded: replay "
                                                      "it after the 'with' block"
                                                    : "the Graph was closed");
    pg_graph *h = g->h;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_graph_launch(h);
    Py_END_ALLOW_THREADS
    if (st != PG_OK)
        return pgpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *graph_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    if (PyTuple_GET_SIZE(args) || (kwargs && PyDict_GET_SIZE(kwargs)))
        return pgpy_argument_error("a Graph is called with no arguments: g()");
    return graph_launch(self, NULL);
}

static PyObject *graph_close(PyObject *self, PyObject *unused) {
    (void)unused;
    pgpy_graph *g = (pgpy_graph *)self;
    if (g->state == READY && g->h) {
        pg_status st = pg_graph_free(g->h);
        g->h = NULL;
        g->state = CLOSED;
        /* Its runtime closed first: the graph went with it. */
        if (st != PG_OK && !g->rt->closed)
            return pgpy_raise(st);
    }
    g->state = g->state == RECORDING ? RECORDING : CLOSED;
    Py_RETURN_NONE;
}

static PyObject *graph_get_calls(PyObject *self, void *unused) {
    (void)unused;
    pgpy_graph *g = (pgpy_graph *)self;
    if (g->state != READY)
        return PyLong_FromLong(0);
    int64_t n = 0;
    pg_status st = pg_graph_calls(g->h, &n);
    if (st != PG_OK)
        return pgpy_raise(st);
    return PyLong_FromLongLong(n);
}

static void graph_dealloc(PyObject *self) {
    pgpy_graph *g = (pgpy_graph *)self;
    if (g->state == READY && g->h && !g->rt->closed)
        (void)pg_graph_free(g->h); /* a closed runtime freed it already */
    Py_XDECREF(g->rt);
    PyObject_Free(self);
}

static PyObject *graph_repr(PyObject *self) {
    pgpy_graph *g = (pgpy_graph *)self;
    static const char *names[] = {"not recorded", "recording", "ready", "closed"};
    if (g->state == READY) {
        int64_t n = 0;
        if (pg_graph_calls(g->h, &n) == PG_OK)
            return PyUnicode_FromFormat("<polygpu.Graph of %lld call%s>", (long long)n,
                                        n == 1 ? "" : "s");
    }
    return PyUnicode_FromFormat("<polygpu.Graph, %s>", names[g->state]);
}

/* g.recorded(): the recorded calls, in order, as dicts. */
static PyObject *graph_recorded(PyObject *self, PyObject *unused) {
    (void)unused;
    pgpy_graph *g = (pgpy_graph *)self;
    if (g->state != READY)
        return PyErr_Format(pgpy_errors[PG_ERROR_STATE], "the Graph is %s: nothing to show",
                            g->state == RECORDING ? "still being recorded" : "not recorded");
    int64_t n = 0;
    pg_status st = pg_graph_calls(g->h, &n);
    if (st != PG_OK)
        return pgpy_raise(st);
    PyObject *list = PyList_New(0);
    pg_graph_call_info *info = PyMem_Malloc(sizeof *info);
    if (!list || !info) {
        Py_XDECREF(list);
        PyMem_Free(info);
        return PyErr_NoMemory();
    }
    for (int64_t i = 0; i < n; i++) {
        if ((st = pg_graph_call(g->h, i, info)) != PG_OK) {
            pgpy_raise(st);
            Py_CLEAR(list);
            break;
        }
        PyObject *args = PyList_New(info->nargs);
        for (int k = 0; args && k < info->nargs; k++) {
            PyObject *a =
                Py_BuildValue("{s:K,s:s,s:K,s:K}", "array", (unsigned long long)info->args[k].array,
                              "access", pg_access_name(info->args[k].access), "first",
                              (unsigned long long)info->args[k].first, "count",
                              (unsigned long long)info->args[k].count);
            if (!a)
                Py_CLEAR(args);
            else
                PyList_SET_ITEM(args, k, a);
        }
        PyObject *d = args
                          ? Py_BuildValue("{s:s,s:(III),s:(III),s:N}", "kernel", info->kernel,
                                          "grid", info->grid.x, info->grid.y, info->grid.z, "block",
                                          info->block.x, info->block.y, info->block.z, "args", args)
                          : NULL;
        if (!d || PyList_Append(list, d) < 0) {
            Py_XDECREF(d);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(d);
    }
    PyMem_Free(info);
    return list;
}

/* The recording's forms for print and Jupyter, drawn by polygpu._display (Python). */
static PyObject *display_call(PyObject *self, const char *what) {
    PyObject *mod = PyImport_ImportModule("polygpu._display");
    PyObject *dag = mod ? PyObject_CallMethod(mod, "recording_dag", "O", self) : NULL;
    Py_XDECREF(mod);
    if (!dag)
        return NULL;
    PyObject *r = what ? PyObject_CallMethod(dag, what, NULL) : dag;
    if (what)
        Py_DECREF(dag);
    return r;
}

static PyObject *graph_to_dag(PyObject *self, PyObject *unused) {
    (void)unused;
    return display_call(self, NULL);
}

static PyObject *graph_repr_svg(PyObject *self, PyObject *unused) {
    (void)unused;
    return display_call(self, "_repr_svg_");
}

static PyObject *graph_repr_html(PyObject *self, PyObject *unused) {
    (void)unused;
    return display_call(self, "_repr_html_");
}

static PyMethodDef graph_methods[] = {
    {"recorded", graph_recorded, METH_NOARGS,
     "recorded()\n--\n\nThe recorded calls in order: dicts with 'kernel', 'grid', 'block' and "
     "'args'\n([{'array': id, 'access', 'first', 'count'}]: the elements of the array each call "
     "covers;\na view's range)."},
    {"to_dag", graph_to_dag, METH_NOARGS,
     "to_dag()\n--\n\nThe recording as a polygpu.DAG: a vertex per recorded call, an edge "
     "where a call\nwaits for an earlier one (overlapping elements, one of them written). "
     "print() it, or\nlet Jupyter draw it (the Graph itself shows this drawing)."},
    {"_repr_svg_", graph_repr_svg, METH_NOARGS, "Jupyter: the recording drawn by Graphviz."},
    {"_repr_html_", graph_repr_html, METH_NOARGS, "Jupyter: the drawing, or a table."},
    {"__enter__", graph_enter, METH_NOARGS, "Begin recording: kernel calls now record."},
    {"__exit__", graph_exit, METH_VARARGS,
     "End recording (if the block raised, the recording is dropped)."},
    {"launch", graph_launch, METH_NOARGS, "Replay the recorded calls once (as g())."},
    {"close", graph_close, METH_NOARGS, "Free the recording (the runtime's close frees it too)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef graph_getset[] = {
    {"calls", graph_get_calls, NULL, "Number of recorded kernel calls.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject pgpy_graph_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "polygpu.Graph",
    .tp_basicsize = sizeof(pgpy_graph),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Kernel calls recorded once and replayed many times: from Runtime.record().\n\n"
              "    with rt.record() as g:\n"
              "        k(grid, block)(y, x, n)   # recorded, nothing runs\n"
              "    for _ in range(100):\n"
              "        g()                       # each replay = the same calls made now\n\n"
              "Inside the block, reading or writing an array from the host, rt.sync() and any\n"
              "call on another runtime raise StateError, as does freeing an array the block\n"
              "used; a replay after such an array was freed raises StateError naming it.\n"
              "Arguments are bound once, at recording: scalars keep their recorded values.\n"
              "The first replay makes the calls and keeps what they did (devices, streams,\n"
              "copies) as the graph's plan; later replays that find the arrays where the plan\n"
              "reads them issue it as one operation (on GPUs one CUDA graph), one DAG vertex\n"
              "named 'graph replay (N calls)'.",
    .tp_dealloc = graph_dealloc,
    .tp_repr = graph_repr,
    .tp_call = graph_call,
    .tp_methods = graph_methods,
    .tp_getset = graph_getset,
};

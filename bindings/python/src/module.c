/* module.c: the _polygpu extension module — types, exceptions and constants. */
#include "pgpy.h"

#include <stdlib.h>

static PyObject *mod_dtype_size(PyObject *self, PyObject *arg) {
    pg_dtype t;
    if (pgpy_dtype_from_object(arg, &t) < 0)
        return NULL;
    return PyLong_FromSize_t(pg_dtype_size(t));
}

static PyObject *mod_dtype_name(PyObject *self, PyObject *arg) {
    pg_dtype t;
    if (pgpy_dtype_from_object(arg, &t) < 0)
        return NULL;
    return PyUnicode_FromString(pg_dtype_name(t));
}

/* _ranks_active(), _ranks_abort(code, why): the hooks that end every rank when this one fails
 * (polygpu/_runtime.py: an uncaught exception, one leaving a runtime's `with`). */
static PyObject *mod_ranks_active(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    return PyBool_FromLong(pg_ranks_active());
}

static PyObject *mod_ranks_abort(PyObject *self, PyObject *args) {
    (void)self;
    int code;
    const char *why;
    if (!PyArg_ParseTuple(args, "is:_ranks_abort", &code, &why))
        return NULL;
    pg_ranks_abort(code, why);
    Py_RETURN_NONE;
}

/* _node_status(): pg_node_status's JSON (polygpu.node_status parses it). */
static PyObject *mod_node_status(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    char *json = NULL;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_node_status(&json);
    Py_END_ALLOW_THREADS
    if (st)
        return pgpy_raise(st);
    PyObject *r = PyUnicode_FromString(json);
    pg_string_free(json);
    return r;
}

static PyMethodDef module_methods[] = {
    {"_node_status", mod_node_status, METH_NOARGS, NULL},
    {"_ranks_active", mod_ranks_active, METH_NOARGS, NULL},
    {"_ranks_abort", mod_ranks_abort, METH_VARARGS, NULL},
    {"dtype_size", mod_dtype_size, METH_O,
     "dtype_size(dtype)\n--\n\nBytes per element of a dtype (a name, NumPy dtype, int or "
     "float)."},
    {"dtype_name", mod_dtype_name, METH_O,
     "dtype_name(dtype)\n--\n\nThe polygpu name of a dtype, e.g. dtype_name(float) == "
     "'float64'."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "polygpu._polygpu",
    "The C extension behind the polygpu package: use `import polygpu`.",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

static int add_type(PyObject *m, PyTypeObject *t, const char *name) {
    if (PyType_Ready(t) < 0)
        return -1;
    Py_INCREF(t);
    if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}

/* Ctrl-C while a call waits: Python runs signal handlers only on the main thread, between
 * bytecodes, so a wait on the main thread asks (every few tens of milliseconds) whether one is
 * pending and ends with its exception (KeyboardInterrupt) left set. Other threads are not
 * interruptible this way. */
static unsigned long main_thread;

static int interrupt_check(void *ctx) {
    (void)ctx;
    if (PyThread_get_thread_ident() != main_thread || !Py_IsInitialized())
        return -1;
    PyGILState_STATE g = PyGILState_Ensure();
    int raised = PyErr_CheckSignals() < 0;
    PyGILState_Release(g);
    return raised;
}

uint64_t pgpy_implicit_close_ns(void) {
    const char *e = getenv("PG_CLOSE_TIMEOUT");
    double s = e && *e ? atof(e) : 10.0;
    return s > 0 && s < 1e9 ? (uint64_t)(s * 1e9) : UINT64_MAX;
}

PyMODINIT_FUNC PyInit__polygpu(void) {
    main_thread = PyThread_get_thread_ident(); /* unless imported from another thread: */
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *mt = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
    PyObject *ident = mt ? PyObject_GetAttrString(mt, "ident") : NULL;
    if (ident && PyLong_Check(ident))
        main_thread = PyLong_AsUnsignedLong(ident);
    Py_XDECREF(ident);
    Py_XDECREF(mt);
    Py_XDECREF(threading);
    PyErr_Clear();
    pg_set_interrupt_check(interrupt_check, NULL);
    pg_node_language_set("python"); /* what pg_node_status says of this process's runtimes */
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    PyObject *dtypes = PyTuple_New(PG_DTYPE_COUNT);
    for (int i = 0; dtypes && i < PG_DTYPE_COUNT; i++) {
        PyObject *s = PyUnicode_FromString(pg_dtype_name((pg_dtype)i));
        if (!s)
            Py_CLEAR(dtypes);
        else
            PyTuple_SET_ITEM(dtypes, i, s);
    }
    if (!dtypes || PyModule_AddObject(m, "dtypes", dtypes) < 0) {
        Py_XDECREF(dtypes);
        Py_DECREF(m);
        return NULL;
    }
    if (pgpy_errors_init(m) < 0 || add_type(m, &pgpy_runtime_type, "Runtime") < 0 ||
        add_type(m, &pgpy_array_type, "DeviceArray") < 0 ||
        add_type(m, &pgpy_kernel_type, "Kernel") < 0 ||
        add_type(m, &pgpy_launch_type, "Launch") < 0 ||
        add_type(m, &pgpy_graph_type, "Graph") < 0 ||
        add_type(m, &pgpy_hostview_type, "HostView") < 0 ||
        PyModule_AddIntConstant(m, "DAG_DOT", PG_DAG_DOT) < 0 ||
        PyModule_AddIntConstant(m, "DAG_JSON", PG_DAG_JSON) < 0 ||
        PyModule_AddIntConstant(m, "MAX_DEVICES", PG_MAX_DEVICES) < 0 ||
        PyModule_AddIntConstant(m, "MAX_DIMS", PG_MAX_DIMS) < 0 ||
        PyModule_AddObject(
            m, "version",
            Py_BuildValue("(iii)", PG_VERSION_MAJOR, PG_VERSION_MINOR, PG_VERSION_PATCH)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

/* errors.c: the exception classes and the mapping from a pg_status to one of them. */
#include "pgpy.h"

#include <stdarg.h>

PyObject *pgpy_errors[PG_ERROR_INTERRUPTED + 1];

typedef struct error_class {
    pg_status status;
    const char *name;
    const char *builtin; /* a second base from builtins, or NULL */
    const char *doc;
} error_class;

static const error_class classes[] = {
    {PG_OK, "Error", NULL,
     "Base class of every polygpu error. ``status`` holds the C status name (for example\n"
     "'PG_ERROR_ARGUMENT') and the message says what was wrong and what to do."},
    {PG_ERROR_ARGUMENT, "ArgumentError", "TypeError",
     "A bad value was passed: unknown dtype or option, bad shape, wrong number or type of\n"
     "kernel arguments, a scalar that does not fit the parameter. Also a TypeError."},
    {PG_ERROR_STATE, "StateError", NULL,
     "The object was freed (array, kernel or runtime), or the call would deadlock."},
    {PG_ERROR_COMPILE, "CompileError", NULL,
     "The kernel source did not compile. ``log`` holds the compiler's output."},
    {PG_ERROR_DEVICE, "DeviceError", NULL,
     "A device, driver or library failed or is missing (for example devices='cuda' on a\n"
     "machine without a GPU)."},
    {PG_ERROR_OUT_OF_MEMORY, "OutOfMemoryError", "MemoryError",
     "Host or device memory is exhausted. Also a MemoryError."},
    {PG_ERROR_NOT_FOUND, "NotFoundError", "LookupError",
     "A named thing does not exist: a policy, a kernel in its source, a file. Also a\n"
     "LookupError."},
    {PG_ERROR_UNSUPPORTED, "UnsupportedError", NULL,
     "A valid request that the chosen devices cannot do."},
    {PG_ERROR_IO, "FileError", "OSError", "Reading or writing a file failed. Also an OSError."},
    {PG_ERROR_INTERNAL, "InternalError", NULL, "A bug in polygpu: please report it."},
    {PG_ERROR_TIMEOUT, "TimeoutError", "TimeoutError",
     "A wait with a time limit (sync(timeout=...), close(timeout=...)) ran out; the work goes\n"
     "on. Also the builtin TimeoutError."},
    {PG_ERROR_INTERRUPTED, "InterruptedError", NULL,
     "A wait was interrupted (the work goes on). Ctrl-C raises KeyboardInterrupt instead."},
};

int pgpy_errors_init(PyObject *module) {
    PyObject *builtins = PyEval_GetBuiltins(); /* borrowed */
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        const error_class *c = &classes[i];
        PyObject *bases;
        PyObject *first = c->status == PG_OK ? PyExc_Exception : pgpy_errors[PG_OK];
        if (c->builtin) {
            PyObject *second = PyDict_GetItemString(builtins, c->builtin);
            if (!second) {
                PyErr_Format(PyExc_RuntimeError, "builtins.%s is missing", c->builtin);
                return -1;
            }
            bases = PyTuple_Pack(2, first, second);
        } else {
            bases = PyTuple_Pack(1, first);
        }
        PyObject *dict = PyDict_New();
        if (!bases || !dict || PyDict_SetItemString(dict, "status", Py_None) < 0 ||
            (c->status == PG_ERROR_COMPILE && PyDict_SetItemString(dict, "log", Py_None) < 0)) {
            Py_XDECREF(bases);
            Py_XDECREF(dict);
            return -1;
        }
        char qualified[64];
        PyOS_snprintf(qualified, sizeof qualified, "polygpu.%s", c->name);
        PyObject *cls = PyErr_NewExceptionWithDoc(qualified, c->doc, bases, dict);
        Py_DECREF(bases);
        Py_DECREF(dict);
        if (!cls)
            return -1;
        pgpy_errors[c->status] = cls;
        Py_INCREF(cls);
        if (PyModule_AddObject(module, c->name, cls) < 0) {
            Py_DECREF(cls);
            return -1;
        }
    }
    return 0;
}

/* Raise cls(msg) with .status and, if log is given, .log. Steals msg and log. */
static PyObject *raise_with(PyObject *cls, const char *status, PyObject *msg, PyObject *log) {
    PyObject *exc = msg ? PyObject_CallFunctionObjArgs(cls, msg, NULL) : NULL;
    PyObject *st = exc ? PyUnicode_FromString(status) : NULL;
    if (st && PyObject_SetAttrString(exc, "status", st) == 0 &&
        (!log || PyObject_SetAttrString(exc, "log", log) == 0))
        PyErr_SetObject(cls, exc);
    Py_XDECREF(st);
    Py_XDECREF(exc);
    Py_XDECREF(msg);
    Py_XDECREF(log);
    return NULL;
}

static PyObject *decode(const char *s) {
    /* Compiler output may hold any bytes: never fail the error path on decoding. */
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

PyObject *pgpy_raise(pg_status st) {
    /* The interrupt check raised (KeyboardInterrupt from a signal handler): that one stands. */
    if (st == PG_ERROR_INTERRUPTED && PyErr_Occurred())
        return NULL;
    /* Copy the thread-local strings before anything that may run a collection: a DeviceArray
     * freed by it would call polygpu and clear them. Strings are not collected objects. */
    const char *m = pg_last_error();
    const char *l = pg_last_error_log();
    PyObject *msg = m && *m
                        ? decode(m)
                        : PyUnicode_FromFormat("polygpu call failed with %s", pg_status_name(st));
    /* The core's message already quotes the start of a compiler log; .log has all of it. */
    PyObject *log = st == PG_ERROR_COMPILE || (l && *l) ? decode(l ? l : "") : NULL;
    PyObject *cls =
        (unsigned)st <= PG_ERROR_INTERRUPTED && st != PG_OK ? pgpy_errors[st] : pgpy_errors[PG_OK];
    return raise_with(cls, pg_status_name(st), msg, log);
}

PyObject *pgpy_argument_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (!msg)
        return NULL;
    return raise_with(pgpy_errors[PG_ERROR_ARGUMENT], "PG_ERROR_ARGUMENT", msg, NULL);
}

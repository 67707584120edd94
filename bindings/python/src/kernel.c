/* kernel.c: the Kernel and Launch types — k(grid, block, shared_mem)(*args) turns Python
 * values into pg_arg and submits; the core checks and converts them to the parameter types. */
#include "pgpy.h"

#include <string.h>

/* Arguments converted on the stack up to this many; more go to the heap. */
#define STACK_ARGS 16

static PyObject *kernel_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames);
static PyObject *launch_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames);

PyObject *pgpy_kernel_wrap(pgpy_runtime *rt, pg_kernel *h, PyObject *name) {
    int n = 0;
    pg_status st = pg_kernel_params(h, NULL, 0, &n);
    if (st != PG_OK) {
        pgpy_raise(st);
        pg_kernel_free(h);
        return NULL;
    }
    pgpy_kernel *k = PyObject_GC_New(pgpy_kernel, &pgpy_kernel_type);
    if (!k) {
        pg_kernel_free(h);
        return NULL;
    }
    k->vectorcall = kernel_vectorcall;
    k->h = h;
    k->rt = rt;
    Py_INCREF(rt);
    k->freed = 0;
    k->name = name;
    Py_INCREF(name);
    k->nparams = n;
    k->weakrefs = NULL;
    PyObject_GC_Track(k);
    return (PyObject *)k;
}

static int kernel_traverse(pgpy_kernel *k, visitproc visit, void *arg) {
    Py_VISIT(k->rt);
    return 0;
}

static void kernel_dealloc(pgpy_kernel *k) {
    PyObject_GC_UnTrack(k);
    if (k->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)k);
    if (!k->freed) {
        /* Launches already submitted keep the compiled kernel alive in the core. */
        pg_kernel *h = k->h;
        Py_BEGIN_ALLOW_THREADS
        pg_kernel_free(h);
        Py_END_ALLOW_THREADS
    }
    Py_XDECREF(k->name);
    Py_XDECREF(k->rt);
    PyObject_GC_Del(k);
}

static int parse_dim3(PyObject *obj, pg_dim3 *out, const char *what) {
    uint32_t v[3] = {1, 1, 1};
    Py_ssize_t n;
    PyObject *items = NULL;
    if (PyLong_Check(obj) || (PyIndex_Check(obj) && !PyFloat_Check(obj))) {
        n = 1;
    } else if (PyTuple_Check(obj) || PyList_Check(obj)) {
        n = PySequence_Size(obj);
        if (n < 1 || n > 3) {
            pgpy_argument_error("%s must be an int or a tuple of 1 to 3 ints, got %R", what, obj);
            return -1;
        }
        items = obj;
    } else {
        pgpy_argument_error("%s must be an int or a tuple of 1 to 3 ints, got %R", what, obj);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = items ? PySequence_GetItem(items, i) : (Py_INCREF(obj), obj);
        if (!item)
            return -1;
        if (!PyIndex_Check(item) || PyFloat_Check(item)) {
            pgpy_argument_error("%s %R: %R is not an int", what, obj, item);
            Py_DECREF(item);
            return -1;
        }
        int overflow = 0;
        PyObject *idx = PyNumber_Index(item);
        Py_DECREF(item);
        if (!idx)
            return -1;
        long long x = PyLong_AsLongLongAndOverflow(idx, &overflow);
        Py_DECREF(idx);
        if (x == -1 && PyErr_Occurred())
            return -1;
        if (overflow || x < 0 || x > UINT32_MAX) {
            pgpy_argument_error("%s %R: every dimension must be in [1, 2^32)", what, obj);
            return -1;
        }
        v[i] = (uint32_t)x;
    }
    out->x = v[0];
    out->y = v[1];
    out->z = v[2];
    return 0;
}

static int int_arg(PyObject *obj, pg_arg *out, const char *kname, Py_ssize_t i) {
    int r = pgpy_int_to_arg(obj, out);
    if (r <= 0)
        return r;
    pgpy_argument_error("kernel '%s' argument %zd: %R does not fit a 64-bit integer", kname, i + 1,
                        obj);
    return -1;
}

/* NumPy scalars keep their own type: the core converts from it to the parameter's type. */
static int numpy_scalar_arg(PyObject *obj, pg_arg *out, const char *kname, Py_ssize_t i) {
    PyObject *np = pgpy_numpy();
    if (!np)
        return 0;
    PyObject *generic = PyObject_GetAttrString(np, "generic");
    if (!generic)
        return -1;
    int is = PyObject_IsInstance(obj, generic);
    Py_DECREF(generic);
    if (is <= 0)
        return is;
    PyObject *dt = PyObject_GetAttrString(obj, "dtype");
    PyObject *name = dt ? PyObject_GetAttrString(dt, "name") : NULL;
    Py_XDECREF(dt);
    if (!name)
        return -1;
    const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    pg_dtype t;
    int known = s && pg_dtype_parse(s, &t) == PG_OK;
    if (!known) {
        pgpy_argument_error("kernel '%s' argument %zd: NumPy scalars of type %U are not supported",
                            kname, i + 1, name);
        Py_DECREF(name);
        return -1;
    }
    Py_DECREF(name);
    if (pgpy_dtype_is_float(t)) {
        double d = PyFloat_AsDouble(obj);
        if (d == -1.0 && PyErr_Occurred())
            return -1;
        *out = t == PG_FLOAT32 ? pg_arg_float((float)d) : pg_arg_double(d);
        return 1;
    }
    PyObject *n = PyNumber_Index(obj);
    if (!n)
        return -1;
    int r = int_arg(n, out, kname, i);
    Py_DECREF(n);
    if (r < 0)
        return -1;
    /* A NumPy value is within its type's range, so i (signed) or u (unsigned) holds it. */
    out->dtype = t;
    return 1;
}

static int convert_arg(PyObject *obj, pg_arg *out, const char *kname, Py_ssize_t i) {
    if (Py_TYPE(obj) == &pgpy_array_type) {
        *out = pg_arg_array(((pgpy_array *)obj)->h);
        return 0;
    }
    if (PyLong_CheckExact(obj))
        return int_arg(obj, out, kname, i);
    if (PyFloat_CheckExact(obj)) {
        *out = pg_arg_double(PyFloat_AS_DOUBLE(obj));
        return 0;
    }
    int r = numpy_scalar_arg(obj, out, kname, i);
    if (r != 0)
        return r < 0 ? -1 : 0;
    /* Before the number checks: a NumPy array also has __index__ and __float__. */
    if (PyObject_CheckBuffer(obj) || PySequence_Check(obj)) {
        pgpy_argument_error("kernel '%s' argument %zd: got a %s; kernels take DeviceArrays and "
                            "numbers: copy host data first with rt.asarray(x)",
                            kname, i + 1, Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyLong_Check(obj) || (PyIndex_Check(obj) && !PyFloat_Check(obj))) {
        PyObject *n = PyNumber_Index(obj);
        if (!n)
            return -1;
        r = int_arg(n, out, kname, i);
        Py_DECREF(n);
        return r;
    }
    if (PyFloat_Check(obj)) {
        *out = pg_arg_double(PyFloat_AS_DOUBLE(obj));
        return 0;
    }
    pgpy_argument_error("kernel '%s' argument %zd: expected a DeviceArray or a number, got %R "
                        "(%s)",
                        kname, i + 1, obj, Py_TYPE(obj)->tp_name);
    return -1;
}

static PyObject *launch(pgpy_kernel *k, pg_dim3 grid, pg_dim3 block, size_t shared,
                        PyObject *const *args, Py_ssize_t nargs) {
    pg_arg stack[STACK_ARGS];
    pg_arg *argv = stack;
    const char *kname = PyUnicode_AsUTF8(k->name);
    if (!kname)
        return NULL;
    if (nargs > STACK_ARGS && !(argv = PyMem_Malloc((size_t)nargs * sizeof *argv)))
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < nargs; i++)
        if (convert_arg(args[i], &argv[i], kname, i) < 0) {
            if (argv != stack)
                PyMem_Free(argv);
            return NULL;
        }
    pg_kernel *h = k->h;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_kernel_launch(h, grid, block, shared, argv, (int)nargs);
    Py_END_ALLOW_THREADS
    if (argv != stack)
        PyMem_Free(argv);
    if (st != PG_OK)
        return pgpy_raise(st);
    Py_RETURN_NONE;
}

static int parse_shared(PyObject *obj, size_t *out) {
    if (!obj) {
        *out = 0;
        return 0;
    }
    if (!PyIndex_Check(obj) || PyFloat_Check(obj)) {
        pgpy_argument_error("shared_mem must be an int (bytes), got %R", obj);
        return -1;
    }
    Py_ssize_t v = PyNumber_AsSsize_t(obj, NULL);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < 0) {
        pgpy_argument_error("shared_mem must be >= 0, got %zd", v);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

/* k(grid, block, shared_mem=0), parsed by hand: this is on every launch's path. */
static PyObject *kernel_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames) {
    pgpy_kernel *k = (pgpy_kernel *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *grid = n > 0 ? args[0] : NULL, *block = n > 1 ? args[1] : NULL;
    PyObject *shared = n > 2 ? args[2] : NULL;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        PyObject **slot = PyUnicode_CompareWithASCIIString(name, "grid") == 0         ? &grid
                          : PyUnicode_CompareWithASCIIString(name, "block") == 0      ? &block
                          : PyUnicode_CompareWithASCIIString(name, "shared_mem") == 0 ? &shared
                                                                                      : NULL;
        if (!slot || *slot)
            return pgpy_argument_error("Kernel(grid, block, shared_mem=0): unexpected or repeated "
                                       "keyword %R",
                                       name);
        *slot = args[n + i];
    }
    if (n > 3 || !grid || !block)
        return pgpy_argument_error("Kernel(grid, block, shared_mem=0) takes grid and block, then "
                                   "the arguments in the returned launcher: k(grid, block)(*args)");
    pgpy_launch *l = PyObject_GC_New(pgpy_launch, &pgpy_launch_type);
    if (!l)
        return NULL;
    l->vectorcall = launch_vectorcall;
    l->k = k;
    Py_INCREF(k);
    PyObject_GC_Track(l);
    if (parse_dim3(grid, &l->grid, "grid") < 0 || parse_dim3(block, &l->block, "block") < 0 ||
        parse_shared(shared, &l->shared_mem) < 0) {
        Py_DECREF(l);
        return NULL;
    }
    return (PyObject *)l;
}

static PyObject *kernel_launch(pgpy_kernel *k, PyObject *args, PyObject *kwargs) {
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n < 2) {
        pgpy_argument_error("launch(grid, block, *args, shared_mem=0): grid and block are needed");
        return NULL;
    }
    PyObject *shared = NULL;
    if (kwargs && PyDict_GET_SIZE(kwargs)) {
        shared = PyDict_GetItemString(kwargs, "shared_mem");
        if (!shared || PyDict_GET_SIZE(kwargs) != 1) {
            pgpy_argument_error("launch() takes only shared_mem as a keyword, got %R", kwargs);
            return NULL;
        }
    }
    pg_dim3 grid, block;
    size_t sm;
    if (parse_dim3(PyTuple_GET_ITEM(args, 0), &grid, "grid") < 0 ||
        parse_dim3(PyTuple_GET_ITEM(args, 1), &block, "block") < 0 || parse_shared(shared, &sm) < 0)
        return NULL;
    return launch(k, grid, block, sm, &PyTuple_GET_ITEM(args, 2), n - 2);
}

static PyObject *kernel_free(pgpy_kernel *k, PyObject *unused) {
    if (k->freed)
        Py_RETURN_NONE;
    if (k->rt->closed) { /* closing the runtime freed it */
        k->freed = 1;
        Py_RETURN_NONE;
    }
    pg_kernel *h = k->h;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_kernel_free(h);
    Py_END_ALLOW_THREADS
    if (st != PG_OK)
        return pgpy_raise(st);
    k->freed = 1;
    Py_RETURN_NONE;
}

static const char *access_name(pg_access a) {
    return a == PG_ACCESS_IN ? "in" : a == PG_ACCESS_OUT ? "out" : "inout";
}

static PyObject *get_params(pgpy_kernel *k, void *closure) {
    int n = 0;
    pg_param_info *p = PyMem_Calloc((size_t)(k->nparams ? k->nparams : 1), sizeof *p);
    if (!p)
        return PyErr_NoMemory();
    pg_status st = pg_kernel_params(k->h, p, k->nparams, &n);
    if (st != PG_OK) {
        PyMem_Free(p);
        return pgpy_raise(st);
    }
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < n && i < k->nparams; i++) {
        PyObject *d = Py_BuildValue("{s:s,s:s,s:O,s:s,s:z,s:i}", "name", p[i].name, "type",
                                    p[i].type, "is_array", p[i].is_array ? Py_True : Py_False,
                                    "dtype", pg_dtype_name(p[i].dtype), "access",
                                    p[i].is_array ? access_name(p[i].access) : NULL,
                                    "chunk_per_thread", p[i].chunk_per_thread);
        if (!d || PyList_Append(list, d) < 0) {
            Py_XDECREF(d);
            Py_CLEAR(list);
        }
        Py_XDECREF(d);
    }
    PyMem_Free(p);
    return list;
}

static PyObject *get_name(pgpy_kernel *k, void *closure) {
    Py_INCREF(k->name);
    return k->name;
}

static PyObject *get_runtime(pgpy_kernel *k, void *closure) {
    Py_INCREF(k->rt);
    return (PyObject *)k->rt;
}

static PyObject *kernel_repr(pgpy_kernel *k) {
    return PyUnicode_FromFormat("<polygpu.Kernel %U, %d parameter%s%s>", k->name, k->nparams,
                                k->nparams == 1 ? "" : "s", k->freed ? ", freed" : "");
}

static PyMethodDef kernel_methods[] = {
    {"launch", (PyCFunction)(void (*)(void))kernel_launch, METH_VARARGS | METH_KEYWORDS,
     "launch(grid, block, *args, shared_mem=0)\n--\n\nThe same as k(grid, block, "
     "shared_mem)(*args)."},
    {"free", (PyCFunction)kernel_free, METH_NOARGS,
     "free()\n--\n\nRelease the kernel now; launches already submitted still run."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef kernel_getset[] = {
    {"name", (getter)get_name, NULL, "The __global__ function's name.", NULL},
    {"params", (getter)get_params, NULL,
     "The parameters as dicts: name, type (C type as written), is_array, dtype and access\n"
     "('in', 'out', 'inout'; None for scalars).",
     NULL},
    {"runtime", (getter)get_runtime, NULL, "The Runtime the kernel was compiled for.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject pgpy_kernel_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "polygpu.Kernel",
    .tp_basicsize = sizeof(pgpy_kernel),
    .tp_dealloc = (destructor)kernel_dealloc,
    .tp_repr = (reprfunc)kernel_repr,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(pgpy_kernel, vectorcall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_traverse = (traverseproc)kernel_traverse,
    .tp_doc = "A compiled CUDA kernel. Create one with Runtime.kernel().\n\n"
              "k(grid, block, shared_mem=0) returns a launcher; calling it with the kernel's\n"
              "arguments submits the launch and returns at once:\n\n"
              "    k((n + 255) // 256, 256)(y, x, n)\n\n"
              "grid and block are an int or a tuple of 1 to 3 ints. Arguments are DeviceArrays\n"
              "(for pointer parameters) and numbers: Python int and float, NumPy scalars. The\n"
              "runtime converts numbers to the parameter's type and raises ArgumentError if a\n"
              "value does not fit. The runtime orders launches by what they read and write.",
    .tp_weaklistoffset = offsetof(pgpy_kernel, weakrefs),
    .tp_methods = kernel_methods,
    .tp_getset = kernel_getset,
};

/* ------------------------------------------------------------------ Launch */

static int launch_traverse(pgpy_launch *l, visitproc visit, void *arg) {
    Py_VISIT(l->k);
    return 0;
}

static void launch_dealloc(pgpy_launch *l) {
    PyObject_GC_UnTrack(l);
    Py_XDECREF(l->k);
    PyObject_GC_Del(l);
}

static PyObject *launch_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames) {
    pgpy_launch *l = (pgpy_launch *)self;
    if (kwnames && PyTuple_GET_SIZE(kwnames))
        return pgpy_argument_error("kernel arguments are positional, got keywords %R", kwnames);
    return launch(l->k, l->grid, l->block, l->shared_mem, args, PyVectorcall_NARGS(nargsf));
}

static PyObject *launch_repr(pgpy_launch *l) {
    return PyUnicode_FromFormat("<polygpu.Launch %U grid=(%u, %u, %u) block=(%u, %u, %u) "
                                "shared_mem=%zu>",
                                l->k->name, l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y,
                                l->block.z, l->shared_mem);
}

PyTypeObject pgpy_launch_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "polygpu.Launch",
    .tp_basicsize = sizeof(pgpy_launch),
    .tp_dealloc = (destructor)launch_dealloc,
    .tp_repr = (reprfunc)launch_repr,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(pgpy_launch, vectorcall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_traverse = (traverseproc)launch_traverse,
    .tp_doc = "A kernel with its grid, block and shared memory: call it with the kernel's\n"
              "arguments to submit a launch. Made by Kernel.__call__; reusable.",
};

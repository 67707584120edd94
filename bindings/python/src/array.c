/* array.c: the DeviceArray type — creation from a handle, attributes, whole-array copies. */
#include "pgpy.h"

#include <string.h>

int pgpy_parse_shape(PyObject *obj, int *ndim, int64_t *shape) {
    if (PyIndex_Check(obj) && !PyFloat_Check(obj)) {
        Py_ssize_t n = PyNumber_AsSsize_t(obj, PyExc_OverflowError);
        if (n == -1 && PyErr_Occurred())
            return -1;
        *ndim = 1;
        shape[0] = n;
        return 0;
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        pgpy_argument_error("shape must be an int or a tuple of ints, got %R", obj);
        return -1;
    }
    Py_ssize_t n = PySequence_Size(obj);
    if (n < 1 || n > PG_MAX_DIMS) {
        pgpy_argument_error("shape %R has %zd dimensions; arrays have 1 to %d", obj, n,
                            PG_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PySequence_GetItem(obj, i);
        if (!d)
            return -1;
        if (!PyIndex_Check(d) || PyFloat_Check(d)) {
            pgpy_argument_error("shape %R: dimension %zd is not an int", obj, i);
            Py_DECREF(d);
            return -1;
        }
        Py_ssize_t v = PyNumber_AsSsize_t(d, PyExc_OverflowError);
        Py_DECREF(d);
        if (v == -1 && PyErr_Occurred())
            return -1;
        shape[i] = v;
    }
    *ndim = (int)n;
    return 0;
}

PyObject *pgpy_array_wrap(pgpy_runtime *rt, pg_array *h) {
    pg_array_desc d;
    pg_status st = pg_array_describe(h, &d);
    if (st != PG_OK) {
        pgpy_raise(st);
        pg_array_free(h);
        return NULL;
    }
    pgpy_array *a = PyObject_GC_New(pgpy_array, &pgpy_array_type);
    if (!a) {
        pg_array_free(h);
        return NULL;
    }
    a->h = h;
    a->rt = rt;
    Py_INCREF(rt);
    a->freed = 0;
    a->dtype = d.dtype;
    a->ndim = d.ndim;
    a->size = d.size;
    a->nbytes = d.nbytes;
    a->id = d.id;
    a->exports = 0;
    a->weakrefs = NULL;
    Py_ssize_t stride = (Py_ssize_t)pg_dtype_size(d.dtype);
    for (int i = d.ndim - 1; i >= 0; i--) {
        a->shape[i] = d.shape[i];
        a->view_shape[i] = (Py_ssize_t)d.shape[i];
        a->view_strides[i] = stride;
        stride *= (Py_ssize_t)d.shape[i];
    }
    PyObject_GC_Track(a);
    return (PyObject *)a;
}

/* Only the runtime is referenced: enough for the collector to see a cycle through a runtime
 * subclass's __dict__ and break it there. */
static int array_traverse(pgpy_array *a, visitproc visit, void *arg) {
    Py_VISIT(a->rt);
    return 0;
}

static void array_dealloc(pgpy_array *a) {
    PyObject_GC_UnTrack(a);
    if (a->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)a);
    if (!a->freed) {
        /* The core keeps the memory while computations still use it; a runtime closed
         * earlier has already freed the array, which the core reports and we ignore. */
        pg_array *h = a->h;
        Py_BEGIN_ALLOW_THREADS
        pg_array_free(h);
        Py_END_ALLOW_THREADS
    }
    Py_XDECREF(a->rt);
    PyObject_GC_Del(a);
}

static PyObject *shape_of(pgpy_array *a) {
    PyObject *t = PyTuple_New(a->ndim);
    for (int i = 0; t && i < a->ndim; i++) {
        PyObject *d = PyLong_FromLongLong(a->shape[i]);
        if (!d) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, d);
    }
    return t;
}

static PyObject *array_repr(pgpy_array *a) {
    PyObject *shape = shape_of(a);
    if (!shape)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("<polygpu.DeviceArray id=%llu dtype=%s shape=%R%s>",
                                       (unsigned long long)a->id, pg_dtype_name(a->dtype), shape,
                                       a->freed ? " freed" : "");
    Py_DECREF(shape);
    return r;
}

static Py_ssize_t array_len(pgpy_array *a) {
    return (Py_ssize_t)a->shape[0];
}

static PyObject *get_shape(pgpy_array *a, void *closure) {
    return shape_of(a);
}

static PyObject *get_dtype(pgpy_array *a, void *closure) {
    PyObject *np = pgpy_numpy();
    if (np)
        return PyObject_CallMethod(np, "dtype", "s", pg_dtype_name(a->dtype));
    return PyUnicode_FromString(pg_dtype_name(a->dtype));
}

static PyObject *get_dtype_name(pgpy_array *a, void *closure) {
    return PyUnicode_FromString(pg_dtype_name(a->dtype));
}

static PyObject *get_itemsize(pgpy_array *a, void *closure) {
    return PyLong_FromSize_t(pg_dtype_size(a->dtype));
}

static PyObject *get_ndim(pgpy_array *a, void *closure) {
    return PyLong_FromLong(a->ndim);
}

static PyObject *get_size(pgpy_array *a, void *closure) {
    return PyLong_FromUnsignedLongLong(a->size);
}

static PyObject *get_nbytes(pgpy_array *a, void *closure) {
    return PyLong_FromUnsignedLongLong(a->nbytes);
}

static PyObject *get_id(pgpy_array *a, void *closure) {
    return PyLong_FromUnsignedLongLong(a->id);
}

static PyObject *get_runtime(pgpy_array *a, void *closure) {
    Py_INCREF(a->rt);
    return (PyObject *)a->rt;
}

/* a.owner: the rank owning a's rows (-1: several); a.owner = r moves the ownership on every
 * rank (no data moves). */
static PyObject *get_owner(pgpy_array *a, void *closure) {
    int owner = 0;
    pg_status st = pg_array_owner(a->h, &owner);
    if (st != PG_OK)
        return pgpy_raise(st);
    return PyLong_FromLong(owner);
}

static int set_owner(pgpy_array *a, PyObject *value, void *closure) {
    if (!value) {
        PyErr_SetString(PyExc_AttributeError, "an array always has an owner: set a rank instead");
        return -1;
    }
    long r = PyIndex_Check(value) && !PyBool_Check(value) ? PyLong_AsLong(value) : -2;
    if (r == -1 && PyErr_Occurred())
        return -1;
    if (r < INT32_MIN || r > INT32_MAX || r == -2) {
        pgpy_argument_error("owner must be a rank (an int), not %R", value);
        return -1;
    }
    pg_status st = pg_array_owner_set(a->h, (int)r);
    if (st != PG_OK) {
        pgpy_raise(st);
        return -1;
    }
    return 0;
}

static PyObject *get_freed(pgpy_array *a, void *closure) {
    return PyBool_FromLong(a->freed);
}

static PyObject *get_locations(pgpy_array *a, void *closure) {
    pg_array_desc d;
    pg_status st = pg_array_describe(a->h, &d);
    if (st != PG_OK)
        return pgpy_raise(st);
    PyObject *list = PyList_New(0);
    for (int l = 0; list && l <= PG_MAX_DEVICES; l++) {
        if (!(d.valid & (1u << l)))
            continue;
        PyObject *name = l == 0 ? PyUnicode_FromString("host") : PyUnicode_FromFormat("%d", l - 1);
        if (!name || PyList_Append(list, name) < 0) {
            Py_XDECREF(name);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(name);
    }
    return list;
}

static PyObject *array_free(pgpy_array *a, PyObject *unused) {
    if (a->freed)
        Py_RETURN_NONE;
    if (a->rt->closed) { /* closing the runtime freed it */
        a->freed = 1;
        Py_RETURN_NONE;
    }
    if (a->exports)
        return PyErr_Format(pgpy_errors[PG_ERROR_STATE],
                            "cannot free the array: %zd buffer view%s of it (memoryview, NumPy "
                            "array from np.asarray, DLPack tensor) %s still open or being "
                            "taken; release them first",
                            a->exports, a->exports == 1 ? "" : "s", a->exports == 1 ? "is" : "are");
    pg_array *h = a->h;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_array_free(h);
    Py_END_ALLOW_THREADS
    if (st != PG_OK)
        return pgpy_raise(st);
    a->freed = 1;
    Py_RETURN_NONE;
}

static PyObject *array_tolist(pgpy_array *a, PyObject *unused) {
    return pgpy_array_read_all(a, PGPY_LIST);
}

static PyObject *array_to_numpy(pgpy_array *a, PyObject *unused) {
    if (!pgpy_numpy())
        return pgpy_values_to_numpy(a->dtype, a->ndim, a->shape, NULL); /* raises ImportError */
    return pgpy_array_read_all(a, PGPY_AUTO);
}

/* np.asarray(a) reads the buffer protocol first, and NumPy drops that error silently and
 * falls back to making an object array holding `a`. So __array__, NumPy's next try, asks for
 * the buffer again and lets its error (a freed array, a closed runtime, inside a recording)
 * through; when the buffer works it is the same zero-copy read-only view. */
static PyObject *array_array(pgpy_array *a, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:__array__", kw, &dtype, &copy))
        return NULL;
    PyObject *mv = PyMemoryView_FromObject((PyObject *)a);
    if (!mv)
        return NULL;
    PyObject *np = pgpy_numpy();
    PyObject *r = NULL;
    if (!np) {
        r = pgpy_values_to_numpy(a->dtype, a->ndim, a->shape, NULL); /* raises ImportError */
    } else {
        PyObject *fargs = PyTuple_Pack(1, mv);
        PyObject *fkw = fargs ? Py_BuildValue("{s:O}", "dtype", dtype) : NULL;
        if (fkw && copy != Py_None && PyDict_SetItemString(fkw, "copy", copy) < 0)
            Py_CLEAR(fkw);
        PyObject *f =
            fkw ? PyObject_GetAttrString(np, copy != Py_None ? "array" : "asarray") : NULL;
        r = f ? PyObject_Call(f, fargs, fkw) : NULL;
        Py_XDECREF(f);
        Py_XDECREF(fkw);
        Py_XDECREF(fargs);
    }
    Py_DECREF(mv);
    return r;
}

/* str(a), print(a): the values, as NumPy prints them (a host read, as CuPy's print is); a
 * freed array, or one whose runtime is closed, prints its repr. */
static PyObject *array_str(pgpy_array *a) {
    if (a->freed || a->rt->closed)
        return array_repr(a);
    PyObject *v = pgpy_array_read_all(a, PGPY_AUTO);
    if (!v)
        return NULL;
    PyObject *s = PyObject_Str(v);
    Py_DECREF(v);
    return s;
}

static PyObject *array_to_bytes(pgpy_array *a, PyObject *unused) {
    PyObject *ba = pgpy_array_read_all(a, PGPY_BYTES);
    if (!ba)
        return NULL;
    PyObject *b = PyBytes_FromStringAndSize(PyByteArray_AS_STRING(ba), PyByteArray_GET_SIZE(ba));
    Py_DECREF(ba);
    return b;
}

static PyObject *array_copy_from(pgpy_array *a, PyObject *obj) {
    if (pgpy_array_write_all(a, obj) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *array_host_view(pgpy_array *a, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"writable", NULL};
    int writable = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p:host_view", kw, &writable))
        return NULL;
    return pgpy_hostview_new(a, writable);
}

static PyObject *array_prefetch(pgpy_array *a, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"device", NULL};
    PyObject *dev = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:prefetch", kw, &dev))
        return NULL;
    int loc;
    if (dev == Py_None ||
        (PyUnicode_Check(dev) && PyUnicode_CompareWithASCIIString(dev, "host") == 0))
        loc = PG_HOST;
    else if (PyLong_Check(dev) && !PyBool_Check(dev)) {
        long d = PyLong_AsLong(dev);
        if (d == -1 && PyErr_Occurred())
            return NULL;
        if (d < 0 || d > PG_MAX_DEVICES) {
            PyErr_Format(PyExc_ValueError, "prefetch: device %ld is not a device index", d);
            return NULL;
        }
        loc = (int)d;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "prefetch: device must be None or 'host' (the host) or a device index, not %s",
                     Py_TYPE(dev)->tp_name);
        return NULL;
    }
    pg_array *h = a->h;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_array_prefetch(h, loc);
    Py_END_ALLOW_THREADS
    if (st != PG_OK)
        return pgpy_raise(st);
    Py_RETURN_NONE;
}

/* a.split(n): n views of nearly equal rows (the first rows %% n one row longer, as NumPy's
 * array_split); a.split([r0, r1, ...]): views of those many rows, which must add up to a's. */
static PyObject *array_split(pgpy_array *a, PyObject *arg) {
    int64_t rows = a->shape[0], sizes_n = 0;
    int64_t *sizes = NULL;
    if (PyIndex_Check(arg) && !PyBool_Check(arg)) {
        Py_ssize_t n = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
        if (n == -1 && PyErr_Occurred())
            return NULL;
        if (n < 1 || n > rows)
            return pgpy_argument_error("split(%zd): an array of %lld rows splits into 1 to %lld "
                                       "views of at least one row",
                                       n, (long long)rows, (long long)rows);
        sizes = PyMem_Malloc((size_t)n * sizeof *sizes);
        if (!sizes)
            return PyErr_NoMemory();
        for (Py_ssize_t i = 0; i < n; i++)
            sizes[i] = rows / n + (i < rows % n);
        sizes_n = n;
    } else {
        PyObject *seq = PySequence_Fast(arg, "split() takes a number of views or a sequence of "
                                             "row counts");
        if (!seq)
            return NULL;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        sizes = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *sizes);
        if (!sizes) {
            Py_DECREF(seq);
            return PyErr_NoMemory();
        }
        int64_t total = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
            long long v = PyIndex_Check(it) ? PyLong_AsLongLong(it) : -1;
            if (v == -1 && PyErr_Occurred())
                PyErr_Clear();
            if (v < 1) {
                Py_DECREF(seq);
                PyMem_Free(sizes);
                return pgpy_argument_error("split(): row count %zd is %R; each view needs a "
                                           "positive number of rows",
                                           i, it);
            }
            sizes[i] = v;
            total += v;
        }
        Py_DECREF(seq);
        if (!n || total != rows) {
            PyMem_Free(sizes);
            return pgpy_argument_error("split(): the row counts add up to %lld; the array has "
                                       "%lld rows",
                                       (long long)total, (long long)rows);
        }
        sizes_n = n;
    }
    PyObject *list = PyList_New(sizes_n);
    int64_t lo = 0;
    for (Py_ssize_t i = 0; list && i < sizes_n; i++) {
        PyObject *v = pgpy_array_slice(a, (Py_ssize_t)lo, (Py_ssize_t)(lo + sizes[i]));
        if (!v) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, v);
        lo += sizes[i];
    }
    PyMem_Free(sizes);
    /* On several ranks the views spread over them in blocks (pg_rank_block_owner). */
    int rank = 0, nranks = 1;
    pg_status st = list ? pg_runtime_ranks(a->rt->h, &rank, &nranks) : PG_OK;
    for (Py_ssize_t i = 0; list && !st && nranks > 1 && i < sizes_n; i++)
        st = pg_array_owner_set(((pgpy_array *)PyList_GET_ITEM(list, i))->h,
                                pg_rank_block_owner((int)i, (int)sizes_n, nranks));
    if (st != PG_OK) {
        Py_CLEAR(list);
        return pgpy_raise(st);
    }
    return list;
}

static PyObject *array_iter(pgpy_array *a) {
    PyObject *all = pgpy_array_read_all(a, PGPY_AUTO);
    if (!all)
        return NULL;
    PyObject *it = PyObject_GetIter(all);
    Py_DECREF(all);
    return it;
}

static PyObject *array_enter(PyObject *self, PyObject *unused) {
    Py_INCREF(self);
    return self;
}

static PyObject *array_exit(pgpy_array *a, PyObject *args) {
    return array_free(a, NULL);
}

static PyMethodDef array_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))pgpy_array_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\nThe "
     "array's host copy as a DLPack capsule (kDLCPU), without copying: np.from_dlpack(a),\n"
     "torch.from_dlpack(a). The consumer holds a read view of the array until it drops\n"
     "the tensor: kernels that write the array wait until then."},
    {"__dlpack_device__", pgpy_array_dlpack_device, METH_NOARGS,
     "__dlpack_device__()\n--\n\n(1, 0): DLPack's kDLCPU, the array's host copy."},
    {"split", (PyCFunction)array_split, METH_O,
     "split(n_or_rows, /)\n--\n\n"
     "Views of consecutive rows that cover the array: split(n) gives n views of nearly equal "
     "rows\n(the first rows % n one row longer, as numpy.array_split); split([r0, r1, ...]) "
     "gives views of\nr0, r1, ... rows, which must add up to the array's rows. Like a[lo:hi], "
     "each view shares\nthe array's elements: kernels on disjoint views run on different "
     "devices at once with no\ndependency, and only the rows a kernel uses move."},
    {"free", (PyCFunction)array_free, METH_NOARGS,
     "free()\n--\n\nRelease the array now instead of when Python collects it. Kernels still "
     "using it\nfinish first (the memory goes when they end). Later use raises StateError. "
     "After\nthe runtime was closed (which freed it) it does nothing."},
    {"tolist", (PyCFunction)array_tolist, METH_NOARGS,
     "tolist()\n--\n\nThe contents as (nested) Python lists of int or float: one host read."},
    {"to_numpy", (PyCFunction)array_to_numpy, METH_NOARGS,
     "to_numpy()\n--\n\nA NumPy copy of the contents (one host read). Raises ImportError when "
     "NumPy is\nnot installed."},
    {"__array__", (PyCFunction)(void (*)(void))array_array, METH_VARARGS | METH_KEYWORDS,
     "__array__(dtype=None, copy=None)\n--\n\nThe array as NumPy reads it (np.asarray(a)): "
     "its zero-copy read-only buffer,\nor the error that makes the buffer unavailable (freed "
     "array, closed runtime,\nrecording)."},
    {"to_bytes", (PyCFunction)array_to_bytes, METH_NOARGS,
     "to_bytes()\n--\n\nThe contents as bytes in row-major order (one host read)."},
    {"copy_from", (PyCFunction)array_copy_from, METH_O,
     "copy_from(obj)\n--\n\nOverwrite the whole array from obj: a scalar (broadcast), any "
     "object with the buffer\nprotocol (NumPy array, array.array, bytes, memoryview), another "
     "DeviceArray or\nnested sequences, with the same number of elements (row-major). One host "
     "write;\nvalues are converted to the array's dtype and must fit it."},
    {"host_view", (PyCFunction)(void (*)(void))array_host_view, METH_VARARGS | METH_KEYWORDS,
     "host_view(writable=False)\n--\n\nA HostView: the array's buffer protocol with a fixed "
     "writability. memoryview(a)\nand np.asarray(a) are read-only because they never ask for a "
     "writable buffer;\nnp.asarray(a.host_view(True)) is a writable zero-copy NumPy view. Each "
     "view maps\nthe array while it lives: kernels that use the array wait for its release."},
    {"prefetch", (PyCFunction)(void (*)(void))array_prefetch, METH_VARARGS | METH_KEYWORDS,
     "prefetch(device=None)\n--\n\nStart copying the current value to the host (device=None "
     "or 'host') or to device\nindex `device` and return at once: a later read there finds it "
     "ready. Call it on\nresults you will read, right after the launches that make them, so "
     "their copies\noverlap the rest of the work. Ordered after the array's last writer and "
     "before its\nnext; a hint that does nothing where the value already is or is not known "
     "yet\n(an open writable host view)."},
    {"__enter__", array_enter, METH_NOARGS, "Return the array."},
    {"__exit__", (PyCFunction)array_exit, METH_VARARGS, "Free the array."},
    {NULL, NULL, 0, NULL}};

static PyObject *get_cuda_interface(pgpy_array *a, void *closure) {
    (void)closure;
    return pgpy_array_cuda_interface(a);
}

static PyGetSetDef array_getset[] = {
    {"__cuda_array_interface__", (getter)get_cuda_interface, NULL,
     "The CUDA Array Interface (version 3) on GPU devices, for CuPy, PyTorch and Numba:\n"
     "cupy.asarray(a) uses the array in place on the GPU that holds it, after the stream\n"
     "given here. Taking it counts as a write (the other library may write), so the GPU\n"
     "copy becomes the only valid one. Absent (AttributeError) on CPU devices.",
     NULL},
    {"shape", (getter)get_shape, NULL, "The shape as a tuple of ints (row-major).", NULL},
    {"dtype", (getter)get_dtype, NULL,
     "The element type: a numpy.dtype when NumPy is installed, else its name.", NULL},
    {"dtype_name", (getter)get_dtype_name, NULL, "The element type's name, e.g. 'float32'.", NULL},
    {"itemsize", (getter)get_itemsize, NULL, "Bytes per element.", NULL},
    {"ndim", (getter)get_ndim, NULL, "Number of dimensions (1 to 4).", NULL},
    {"size", (getter)get_size, NULL, "Number of elements.", NULL},
    {"nbytes", (getter)get_nbytes, NULL, "Size in bytes.", NULL},
    {"id", (getter)get_id, NULL, "The array's id in rt.dag() (vertex 'args').", NULL},
    {"runtime", (getter)get_runtime, NULL, "The Runtime that owns the array.", NULL},
    {"freed", (getter)get_freed, NULL, "True once free() was called.", NULL},
    {"owner", (getter)get_owner, (setter)set_owner,
     "The rank owning the array's rows (-1 when a view's rows have several owners; 0\n"
     "single-process). A kernel runs on the rank that owns what it writes. Setting it (on\n"
     "every rank, as every statement runs on every rank) moves the ownership, not the data.",
     NULL},
    {"locations", (getter)get_locations, NULL,
     "Where the current value is held now (as scheduled): 'host' and/or device ids as\n"
     "strings ('0', '1', ...). A kernel that writes the array leaves only its device.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PySequenceMethods array_as_sequence = {
    .sq_length = (lenfunc)array_len,
};

static PyMappingMethods array_as_mapping = {
    .mp_length = (lenfunc)array_len,
    .mp_subscript = pgpy_array_getitem,
    .mp_ass_subscript = pgpy_array_setitem,
};

PyTypeObject pgpy_array_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "polygpu.DeviceArray",
    .tp_basicsize = sizeof(pgpy_array),
    .tp_dealloc = (destructor)array_dealloc,
    .tp_repr = (reprfunc)array_repr,
    .tp_str = (reprfunc)array_str,
    .tp_as_sequence = &array_as_sequence,
    .tp_as_mapping = &array_as_mapping,
    .tp_as_buffer = &pgpy_array_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)array_traverse,
    .tp_doc = "An array in polygpu's memory: on the host and/or any device, kept coherent by the\n"
              "runtime. Create one with Runtime.array() or Runtime.asarray().\n\n"
              "A range of rows is a view: a[lo:hi] (and a.split(n)) is a DeviceArray sharing\n"
              "a's elements, usable wherever an array is (kernel argument, read, write,\n"
              "free); kernels on disjoint views run on different devices at once with no\n"
              "dependency, and only the rows a kernel uses move. A view has its array's id.\n\n"
              "Other indexing reads and writes host values, each indexing operation being one\n"
              "host access (it waits only for the kernels the array depends on):\n\n"
              "    a[0], a[-1], a[2:10:3], m[1, ::2], m[..., 0]    # read (a copy)\n"
              "    a[3] = 1.5; a[10:20] = range(10); m[0] = row     # write\n\n"
              "A single element reads as a Python int or float; a selection as a NumPy array\n"
              "when NumPy is installed, else as nested lists. memoryview(a) and np.asarray(a)\n"
              "are zero-copy read-only views that hold the array on the host while they live\n"
              "(kernels that write it wait for their release).",
    .tp_weaklistoffset = offsetof(pgpy_array, weakrefs),
    .tp_iter = (getiterfunc)array_iter,
    .tp_methods = array_methods,
    .tp_getset = array_getset,
};

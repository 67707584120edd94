/* cuda_interface.c: __cuda_array_interface__ (version 3) both ways, so CuPy, PyTorch and Numba
 * take polygpu arrays on the GPU, and rt.asarray() takes theirs, device to device. */
#include "pgpy.h"

/* NumPy's array-interface type strings, in pg_dtype order. */
static const char *typestrs[PG_DTYPE_COUNT] = {"|i1", "<i2", "<i4", "<i8", "|u1",
                                               "<u2", "<u4", "<u8", "<f4", "<f8"};
static const int itemsizes[PG_DTYPE_COUNT] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8};

static int dtype_from_typestr(const char *s) {
    for (int t = 0; t < PG_DTYPE_COUNT; t++) {
        /* '=' (native) and '<' are the same on the little-endian machines CUDA runs on. */
        if (!strcmp(s + 1, typestrs[t] + 1) &&
            (s[0] == typestrs[t][0] || s[0] == '=' || (s[0] == '<' && typestrs[t][0] == '|')))
            return t;
    }
    return -1;
}

PyObject *pgpy_array_cuda_interface(pgpy_array *a) {
    pg_array_desc d; /* fails (StateError) once the array is freed */
    pg_status st = pg_array_describe(a->h, &d);
    if (st != PG_OK)
        return pgpy_raise(st);
    /* Where the value already is, so handing it over moves nothing. */
    int dev = 0;
    for (int l = 1; l <= PG_MAX_DEVICES; l++)
        if (d.valid & (1u << l)) {
            dev = l - 1;
            break;
        }
    void *ptr = NULL;
    uint64_t stream = 0;
    pg_array *h = a->h;
    Py_BEGIN_ALLOW_THREADS
    /* The consumer may write: its copy becomes the only valid one. */
    st = pg_array_device_pointer(h, dev, PG_ACCESS_INOUT, &ptr, &stream);
    Py_END_ALLOW_THREADS
    if (st == PG_ERROR_UNSUPPORTED) {
        /* hasattr() must say False on CPU devices, so other libraries fall back to buffers. */
        PyErr_SetString(PyExc_AttributeError,
                        "__cuda_array_interface__: the array's runtime has CPU devices, not GPUs");
        return NULL;
    }
    if (st != PG_OK)
        return pgpy_raise(st);
    PyObject *shape = PyTuple_New(a->ndim);
    for (int i = 0; shape && i < a->ndim; i++)
        PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(a->shape[i]));
    if (!shape)
        return NULL;
    return Py_BuildValue("{s:N,s:s,s:(K,O),s:i,s:O,s:K}", "shape", shape, "typestr",
                         typestrs[a->dtype], "data", (unsigned long long)(uintptr_t)ptr, Py_False,
                         "version", 3, "strides", Py_None, "stream", (unsigned long long)stream);
}

/* Shape, dtype, address and stream of an object's __cuda_array_interface__. */
static int parse_interface(PyObject *cai, pg_dtype *t, int *ndim, int64_t *shape, uint64_t *ptr,
                           uint64_t *stream, uint64_t *count) {
    if (!PyDict_Check(cai)) {
        pgpy_argument_error("__cuda_array_interface__ is not a dict");
        return -1;
    }
    PyObject *sh = PyDict_GetItemString(cai, "shape"), *ts = PyDict_GetItemString(cai, "typestr");
    PyObject *data = PyDict_GetItemString(cai, "data");
    PyObject *strides = PyDict_GetItemString(cai, "strides");
    PyObject *st = PyDict_GetItemString(cai, "stream");
    if (!sh || !PyTuple_Check(sh) || !ts || !PyUnicode_Check(ts) || !data || !PyTuple_Check(data) ||
        PyTuple_GET_SIZE(data) != 2) {
        pgpy_argument_error("__cuda_array_interface__ lacks a shape tuple, typestr or data pair");
        return -1;
    }
    int dt = dtype_from_typestr(PyUnicode_AsUTF8(ts));
    if (dt < 0) {
        pgpy_argument_error("__cuda_array_interface__ typestr %R: polygpu has no such element "
                            "type (int8..uint64, float32, float64)",
                            ts);
        return -1;
    }
    *t = (pg_dtype)dt;
    Py_ssize_t nd = PyTuple_GET_SIZE(sh);
    if (nd < 1 || nd > PG_MAX_DIMS) {
        pgpy_argument_error("a CUDA array of %zd dimensions: polygpu arrays have 1 to %d", nd,
                            PG_MAX_DIMS);
        return -1;
    }
    *ndim = (int)nd;
    *count = 1;
    for (Py_ssize_t i = 0; i < nd; i++) {
        shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(sh, i));
        if (shape[i] < 0 && PyErr_Occurred())
            return -1;
        *count *= (uint64_t)shape[i];
    }
    if (strides && strides != Py_None) {
        /* Accept explicit strides only when they describe the C-contiguous layout. */
        int64_t want = itemsizes[dt];
        for (Py_ssize_t i = nd - 1; i >= 0; i--) {
            PyObject *si = PyTuple_Check(strides) && PyTuple_GET_SIZE(strides) == nd
                               ? PyTuple_GET_ITEM(strides, i)
                               : NULL;
            if (!si || (shape[i] > 1 && PyLong_AsLongLong(si) != want)) {
                pgpy_argument_error("a non-contiguous CUDA array (strides %R): make it contiguous "
                                    "first (e.g. cupy.ascontiguousarray)",
                                    strides);
                return -1;
            }
            want *= shape[i];
        }
    }
    *ptr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
    if (PyErr_Occurred())
        return -1;
    *stream = 0;
    if (st && st != Py_None) {
        *stream = PyLong_AsUnsignedLongLong(st);
        if (PyErr_Occurred())
            return -1;
    }
    return 0;
}

int pgpy_asarray_cuda(pgpy_runtime *rt, PyObject *obj, PyObject *dtype, PyObject **out) {
    *out = NULL;
    if (PyObject_TypeCheck(obj, &pgpy_array_type))
        return 0; /* our own arrays: the generic path reads them (a host view) */
    PyObject *cai = PyObject_GetAttrString(obj, "__cuda_array_interface__");
    if (!cai) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear(); /* not a CUDA array: the host path */
        return 0;
    }
    pg_dtype t;
    int ndim;
    int64_t shape[PG_MAX_DIMS];
    uint64_t ptr, stream, count;
    int rc = parse_interface(cai, &t, &ndim, shape, &ptr, &stream, &count);
    Py_DECREF(cai);
    if (rc < 0)
        return -1;
    if (dtype != Py_None) {
        pg_dtype want;
        if (pgpy_dtype_from_object(dtype, &want) < 0)
            return -1;
        if (want != t) {
            pgpy_argument_error("asarray of a CUDA array copies on the GPU and keeps its dtype "
                                "(%s); convert it there first (e.g. x.astype(...))",
                                typestrs[t]);
            return -1;
        }
    }
    pg_array *h = NULL;
    pg_runtime *rth = rt->h;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_array_new(rth, t, ndim, shape, &h);
    if (st == PG_OK && count)
        st = pg_array_copy_from_device(h, ptr, (size_t)(count * (uint64_t)itemsizes[t]), stream);
    Py_END_ALLOW_THREADS
    if (st != PG_OK) {
        PyObject *err = pgpy_raise(st);
        (void)err;
        if (h)
            pg_array_free(h);
        return -1;
    }
    *out = pgpy_array_wrap(rt, h);
    return *out ? 1 : -1;
}

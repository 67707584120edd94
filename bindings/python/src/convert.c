/* convert.c: Python values <-> packed element buffers (scalars, buffers, nested sequences). */
#include "pgpy.h"

#include <math.h>
#include <string.h>

/* Range checks and their messages are the core's (pg_element_store), as in every binding. */
static int store(pg_dtype t, pg_arg v, void *p) {
    pg_status st = pg_element_store(t, v, p);
    if (st != PG_OK) {
        pgpy_raise(st);
        return -1;
    }
    return 0;
}

int pgpy_int_to_arg(PyObject *n, pg_arg *out) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (!overflow) {
        *out = pg_arg_int(v);
        return 0;
    }
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(n);
        if (!(u == (unsigned long long)-1 && PyErr_Occurred())) {
            *out = pg_arg_uint(u);
            return 0;
        }
        PyErr_Clear();
    }
    return 1;
}

PyObject *pgpy_scalar_to_py(pg_dtype t, const void *p) {
    pg_arg v;
    pg_status st = pg_element_load(t, p, &v);
    if (st != PG_OK)
        return pgpy_raise(st);
    return v.dtype == PG_FLOAT64  ? PyFloat_FromDouble(v.v.f)
           : v.dtype == PG_UINT64 ? PyLong_FromUnsignedLongLong(v.v.u)
                                  : PyLong_FromLongLong(v.v.i);
}

int pgpy_scalar_from_py(pg_dtype t, PyObject *obj, void *p) {
    /* An integer-like object (int, bool, NumPy integer) exactly; anything else that is a
     * number goes through its float value, which an integer element takes only when integral
     * (the core's rule, as for NumPy arrays and in every binding: 2.0 is stored, 2.5 and NaN
     * are refused, never truncated). */
    if (!pgpy_dtype_is_float(t) && !PyFloat_Check(obj) && PyIndex_Check(obj)) {
        PyObject *n = PyNumber_Index(obj);
        if (!n)
            return -1;
        pg_arg v;
        int r = pgpy_int_to_arg(n, &v);
        if (r > 0)
            pgpy_argument_error("value %R does not fit %s", n, pg_dtype_name(t));
        Py_DECREF(n);
        return r ? -1 : store(t, v, p);
    }
    if (!PyFloat_Check(obj) && !PyLong_Check(obj) && !PyIndex_Check(obj) &&
        !(Py_TYPE(obj)->tp_as_number && Py_TYPE(obj)->tp_as_number->nb_float)) {
        pgpy_argument_error("expected a number for a %s element, got %R (%s)", pg_dtype_name(t),
                            obj, Py_TYPE(obj)->tp_name);
        return -1;
    }
    double f = PyFloat_AsDouble(obj);
    if (f == -1.0 && PyErr_Occurred())
        return -1;
    return store(t, pg_arg_double(f), p);
}

/* A buffer of no dimensions: a NumPy scalar (np.float32(1.5)), which is a number. */
static int is_0d_buffer(PyObject *obj) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_FULL_RO) < 0) {
        PyErr_Clear();
        return 0;
    }
    int r = view.ndim == 0;
    PyBuffer_Release(&view);
    return r;
}

static int is_scalar(PyObject *obj) {
    if (PyLong_Check(obj) || PyFloat_Check(obj))
        return 1;
    if (PyUnicode_Check(obj) || PyBytes_Check(obj) || PySequence_Check(obj) ||
        PyObject_TypeCheck(obj, &pgpy_array_type)) /* its buffer would be a host access */
        return 0;
    if (PyObject_CheckBuffer(obj))
        return is_0d_buffer(obj);
    return PyIndex_Check(obj) ||
           (Py_TYPE(obj)->tp_as_number && Py_TYPE(obj)->tp_as_number->nb_float);
}

/* Element-wise conversion of `count` packed elements, each by the core's rule
 * (pg_element_store): a float goes into an integer type only when integral and in range, never
 * truncated as NumPy's astype would (which would store 1.5 as 1 without a word), so a NumPy
 * array, a buffer or another array follows the rule a Python number or list does. */
static int cast_elements(pg_dtype from, const char *src, pg_dtype t, char *dst, uint64_t count) {
    pg_status st = pg_elements_convert(from, src, t, dst, count, 0);
    if (st != PG_OK) {
        pgpy_raise(st);
        return -1;
    }
    return 0;
}

static int broadcast(pg_dtype t, const void *one, char *dst, uint64_t count) {
    size_t es = pg_dtype_size(t);
    for (uint64_t i = 0; i < count; i++)
        memcpy(dst + i * es, one, es);
    return 0;
}

static PyObject *shape_tuple(int ndim, const int64_t *shape) {
    PyObject *t = PyTuple_New(ndim);
    for (int i = 0; t && i < ndim; i++) {
        PyObject *d = PyLong_FromLongLong(shape[i]);
        if (!d) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, d);
    }
    return t;
}

static int count_mismatch(uint64_t have, int ndim, const int64_t *shape, uint64_t count) {
    PyObject *s = shape_tuple(ndim, shape);
    if (s) {
        pgpy_argument_error("cannot assign %llu element%s to a selection of shape %R (%llu "
                            "element%s)",
                            (unsigned long long)have, have == 1 ? "" : "s", s,
                            (unsigned long long)count, count == 1 ? "" : "s");
        Py_DECREF(s);
    }
    return -1;
}

static int fill_from_buffer(PyObject *obj, pg_dtype t, int ndim, const int64_t *shape, char *dst,
                            uint64_t count) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_FULL_RO) < 0)
        return -1;
    int from = pgpy_dtype_from_format(view.format, view.itemsize);
    int r = -1;
    if (from < 0) {
        pgpy_argument_error("buffer format '%s' (item size %zd) has no polygpu dtype",
                            view.format ? view.format : "B", view.itemsize);
        goto done;
    }
    uint64_t have = (uint64_t)(view.len / view.itemsize);
    if (have != count && !(view.ndim == 0 && have == 1)) {
        count_mismatch(have, ndim, shape, count);
        goto done;
    }
    if (from == (int)t && PyBuffer_IsContiguous(&view, 'C') && have == count) {
        memcpy(dst, view.buf, (size_t)view.len);
        r = 0;
        goto done;
    }
    char *tmp = PyMem_Malloc(view.len ? (size_t)view.len : 1);
    if (!tmp) {
        PyErr_NoMemory();
        goto done;
    }
    if (PyBuffer_ToContiguous(tmp, &view, view.len, 'C') == 0) {
        if (have == count) {
            r = cast_elements((pg_dtype)from, tmp, t, dst, count);
        } else { /* a 0-d buffer, such as a NumPy scalar: broadcast */
            char one[8];
            r = cast_elements((pg_dtype)from, tmp, t, one, 1);
            if (r == 0)
                broadcast(t, one, dst, count);
        }
    }
    PyMem_Free(tmp);
done:
    PyBuffer_Release(&view);
    return r;
}

/* Nested sequences: shape by walking the first element of each level. */
static int sequence_shape(PyObject *obj, int *ndim, int64_t *shape) {
    int n = 0;
    PyObject *cur = obj;
    Py_INCREF(cur);
    while (!is_scalar(cur)) {
        if (!PySequence_Check(cur) || PyUnicode_Check(cur) || PyBytes_Check(cur)) {
            pgpy_argument_error("expected numbers or (nested) sequences of numbers, got %R (%s)",
                                cur, Py_TYPE(cur)->tp_name);
            Py_DECREF(cur);
            return -1;
        }
        if (n == PG_MAX_DIMS) {
            pgpy_argument_error("sequences nested more than %d deep: arrays have at most %d "
                                "dimensions",
                                PG_MAX_DIMS, PG_MAX_DIMS);
            Py_DECREF(cur);
            return -1;
        }
        Py_ssize_t len = PySequence_Size(cur);
        if (len < 0) {
            Py_DECREF(cur);
            return -1;
        }
        shape[n++] = len;
        if (len == 0)
            break;
        PyObject *next = PySequence_GetItem(cur, 0);
        Py_DECREF(cur);
        if (!next)
            return -1;
        cur = next;
    }
    Py_DECREF(cur);
    *ndim = n;
    return 0;
}

/* Walk `obj` (which must have `shape` from `level` on) storing leaves at *pos. */
static int sequence_fill(PyObject *obj, pg_dtype t, int level, int ndim, const int64_t *shape,
                         char **pos) {
    if (level == ndim) {
        if (!is_scalar(obj)) {
            pgpy_argument_error("ragged sequence: expected a number at depth %d, got %R", level,
                                obj);
            return -1;
        }
        /* A NumPy scalar by its own type, as a NumPy array's elements are converted. */
        int r = PyObject_CheckBuffer(obj) && !PyLong_Check(obj) && !PyFloat_Check(obj)
                    ? fill_from_buffer(obj, t, 0, NULL, *pos, 1)
                    : pgpy_scalar_from_py(t, obj, *pos);
        if (r < 0)
            return -1;
        *pos += pg_dtype_size(t);
        return 0;
    }
    if (is_scalar(obj) || !PySequence_Check(obj) || PyUnicode_Check(obj) || PyBytes_Check(obj)) {
        pgpy_argument_error("ragged sequence: expected a sequence of length %lld at depth %d, "
                            "got %R",
                            (long long)shape[level], level, obj);
        return -1;
    }
    PyObject *fast = PySequence_Fast(obj, "expected a sequence");
    if (!fast)
        return -1;
    int r = 0;
    if (PySequence_Fast_GET_SIZE(fast) != shape[level]) {
        pgpy_argument_error("ragged sequence: length %zd at depth %d, expected %lld",
                            PySequence_Fast_GET_SIZE(fast), level, (long long)shape[level]);
        r = -1;
    }
    for (Py_ssize_t i = 0; r == 0 && i < PySequence_Fast_GET_SIZE(fast); i++)
        r = sequence_fill(PySequence_Fast_GET_ITEM(fast, i), t, level + 1, ndim, shape, pos);
    Py_DECREF(fast);
    return r;
}

static uint64_t product(int ndim, const int64_t *shape) {
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (uint64_t)shape[i];
    return n;
}

int pgpy_fill_from_object(PyObject *obj, pg_dtype t, int ndim, const int64_t *shape, void *dst,
                          uint64_t count) {
    if (PyObject_TypeCheck(obj, &pgpy_array_type)) {
        /* Another device array: one host read of it, then the same rules as a buffer. */
        pgpy_array *src = (pgpy_array *)obj;
        if (src->size != count)
            return count_mismatch(src->size, ndim, shape, count);
        PyObject *ba = pgpy_array_read_all(src, PGPY_BYTES);
        if (!ba)
            return -1;
        int r = cast_elements(src->dtype, PyByteArray_AS_STRING(ba), t, dst, count);
        Py_DECREF(ba);
        return r;
    }
    if (PyObject_CheckBuffer(obj) && !PyUnicode_Check(obj))
        return fill_from_buffer(obj, t, ndim, shape, dst, count);
    if (is_scalar(obj)) {
        char one[8];
        if (pgpy_scalar_from_py(t, obj, one) < 0)
            return -1;
        return broadcast(t, one, dst, count);
    }
    PyObject *np = pgpy_numpy();
    if (np && !PySequence_Check(obj) && PyObject_HasAttrString(obj, "__array__")) {
        PyObject *arr = PyObject_CallMethod(np, "ascontiguousarray", "O", obj);
        if (!arr)
            return -1;
        int r = fill_from_buffer(arr, t, ndim, shape, dst, count);
        Py_DECREF(arr);
        return r;
    }
    int sndim;
    int64_t sshape[PG_MAX_DIMS];
    if (sequence_shape(obj, &sndim, sshape) < 0)
        return -1;
    uint64_t have = product(sndim, sshape);
    if (have != count)
        return count_mismatch(have, ndim, shape, count);
    char *pos = dst;
    return sequence_fill(obj, t, 0, sndim, sshape, &pos);
}

/* ------------------------------------------------------------------ strings */

const char *pgpy_cstr(PyObject *str, const char *what, PyObject *name) {
    Py_ssize_t n = 0;
    const char *s = PyUnicode_AsUTF8AndSize(str, &n);
    if (s && (size_t)n != strlen(s)) {
        if (name)
            PyErr_Format(PyExc_ValueError,
                         "%s %U: %R contains a NUL character, which C strings cannot carry "
                         "(everything after it would be dropped)",
                         what, name, str);
        else
            PyErr_Format(PyExc_ValueError,
                         "%s %R contains a NUL character, which C strings cannot carry "
                         "(everything after it would be dropped)",
                         what, str);
        return NULL;
    }
    return s;
}

/* ------------------------------------------------------------------ to Python */

static PyObject *to_list(pg_dtype t, int ndim, const int64_t *shape, const char **pos) {
    if (ndim == 0) {
        PyObject *v = pgpy_scalar_to_py(t, *pos);
        *pos += pg_dtype_size(t);
        return v;
    }
    PyObject *list = PyList_New((Py_ssize_t)shape[0]);
    for (int64_t i = 0; list && i < shape[0]; i++) {
        PyObject *item = to_list(t, ndim - 1, shape + 1, pos);
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

PyObject *pgpy_values_to_numpy(pg_dtype t, int ndim, const int64_t *shape, PyObject *bytearray) {
    PyObject *np = pgpy_numpy();
    if (!np) {
        PyErr_SetString(PyExc_ImportError,
                        "NumPy is not installed, so polygpu cannot return a NumPy array: "
                        "install numpy (pip install numpy), or use tolist() or memoryview(array)");
        return NULL;
    }
    PyObject *shp = shape_tuple(ndim, shape);
    if (!shp)
        return NULL;
    PyObject *flat = PyByteArray_GET_SIZE(bytearray)
                         ? PyObject_CallMethod(np, "frombuffer", "Os", bytearray, pg_dtype_name(t))
                         : PyObject_CallMethod(np, "empty", "is", 0, pg_dtype_name(t));
    PyObject *r = flat ? PyObject_CallMethod(flat, "reshape", "O", shp) : NULL;
    Py_XDECREF(flat);
    Py_DECREF(shp);
    return r;
}

PyObject *pgpy_values_to_py(pg_dtype t, int ndim, const int64_t *shape, PyObject *bytearray,
                            int want_numpy) {
    if (want_numpy && pgpy_numpy())
        return pgpy_values_to_numpy(t, ndim, shape, bytearray);
    const char *pos = PyByteArray_AS_STRING(bytearray);
    return to_list(t, ndim, shape, &pos);
}

/* ------------------------------------------------------------------ asarray */

static int leaves_kind(PyObject *obj, int *has_float) {
    if (is_scalar(obj)) {
        if (!PyLong_Check(obj) && !PyIndex_Check(obj))
            *has_float = 1;
        return 0;
    }
    PyObject *fast = PySequence_Fast(obj, "expected a sequence");
    if (!fast)
        return -1;
    int r = 0;
    for (Py_ssize_t i = 0; r == 0 && i < PySequence_Fast_GET_SIZE(fast) && !*has_float; i++)
        r = leaves_kind(PySequence_Fast_GET_ITEM(fast, i), has_float);
    Py_DECREF(fast);
    return r;
}

int pgpy_infer_layout(PyObject *obj, PyObject *dtype_or_none, pg_dtype *t, int *ndim,
                      int64_t *shape) {
    int have_dtype = dtype_or_none && dtype_or_none != Py_None;
    if (have_dtype && pgpy_dtype_from_object(dtype_or_none, t) < 0)
        return -1;
    if (PyObject_TypeCheck(obj, &pgpy_array_type)) {
        pgpy_array *a = (pgpy_array *)obj;
        if (!have_dtype)
            *t = a->dtype;
        *ndim = a->ndim;
        memcpy(shape, a->shape, sizeof a->shape);
        return 0;
    }
    if (is_scalar(obj) && !PyObject_CheckBuffer(obj)) {
        pgpy_argument_error("asarray needs a buffer or a sequence, got the scalar %R: use "
                            "array(dtype, 1) and assign a[0] = value",
                            obj);
        return -1;
    }
    if (PyObject_CheckBuffer(obj) && !PyUnicode_Check(obj)) {
        Py_buffer view;
        if (PyObject_GetBuffer(obj, &view, PyBUF_FULL_RO) < 0)
            return -1;
        int from = pgpy_dtype_from_format(view.format, view.itemsize);
        int r = 0;
        if (from < 0 && !have_dtype) {
            pgpy_argument_error("buffer format '%s' (item size %zd) has no polygpu dtype: pass "
                                "dtype=",
                                view.format ? view.format : "B", view.itemsize);
            r = -1;
        } else if (view.ndim > PG_MAX_DIMS) {
            pgpy_argument_error("%d dimensions: arrays have at most %d", view.ndim, PG_MAX_DIMS);
            r = -1;
        } else {
            if (!have_dtype)
                *t = (pg_dtype)from;
            *ndim = view.ndim ? view.ndim : 1;
            shape[0] = 1;
            for (int i = 0; i < view.ndim; i++)
                shape[i] = view.shape ? view.shape[i] : view.len / view.itemsize;
        }
        PyBuffer_Release(&view);
        return r;
    }
    PyObject *np = pgpy_numpy();
    if (np && !PySequence_Check(obj) && PyObject_HasAttrString(obj, "__array__")) {
        PyObject *arr = PyObject_CallMethod(np, "ascontiguousarray", "O", obj);
        if (!arr)
            return -1;
        int r = pgpy_infer_layout(arr, dtype_or_none, t, ndim, shape);
        Py_DECREF(arr);
        return r;
    }
    if (sequence_shape(obj, ndim, shape) < 0)
        return -1;
    if (!have_dtype) {
        int has_float = 0;
        if (leaves_kind(obj, &has_float) < 0)
            return -1;
        *t = has_float ? PG_FLOAT64 : PG_INT64;
    }
    return 0;
}

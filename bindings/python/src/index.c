/* index.c: a[key] and a[key] = value — one host access per indexing operation, whatever the
 * selection (contiguous ranges by read/write, strided ones by map + gather/scatter). */
#include "pgpy.h"

#include <string.h>

/* A selection: per array dimension, start, step and count; `dropped` for integer indices. */
typedef struct selection {
    int ndim;
    int64_t start[PG_MAX_DIMS], step[PG_MAX_DIMS], count[PG_MAX_DIMS];
    int dropped[PG_MAX_DIMS];
    int out_ndim;
    int64_t out_shape[PG_MAX_DIMS];
    uint64_t total;
    int contiguous; /* the elements are one ascending run of flat indices */
    uint64_t first; /* flat index of the first selected element */
} selection;

static int parse_item(pgpy_array *a, PyObject *item, int dim, selection *s) {
    int64_t len = a->shape[dim];
    if (PySlice_Check(item)) {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(item, &start, &stop, &step) < 0)
            return -1;
        Py_ssize_t n = PySlice_AdjustIndices((Py_ssize_t)len, &start, &stop, step);
        s->start[dim] = start;
        s->step[dim] = step;
        s->count[dim] = n;
        s->dropped[dim] = 0;
        return 0;
    }
    if (PyIndex_Check(item) && !PyFloat_Check(item)) {
        Py_ssize_t i = PyNumber_AsSsize_t(item, PyExc_IndexError);
        if (i == -1 && PyErr_Occurred())
            return -1;
        if (i < -len || i >= len) {
            PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for axis %d with size %lld",
                         i, dim, (long long)len);
            return -1;
        }
        s->start[dim] = i < 0 ? i + len : i;
        s->step[dim] = 1;
        s->count[dim] = 1;
        s->dropped[dim] = 1;
        return 0;
    }
    pgpy_argument_error("only integers, slices (:) and ellipsis (...) are valid indices, got %R "
                        "(%s)",
                        item, Py_TYPE(item)->tp_name);
    return -1;
}

static void full_dim(pgpy_array *a, int dim, selection *s) {
    s->start[dim] = 0;
    s->step[dim] = 1;
    s->count[dim] = a->shape[dim];
    s->dropped[dim] = 0;
}

static int parse_key(pgpy_array *a, PyObject *key, selection *s) {
    PyObject *items = PyTuple_Check(key) ? key : PyTuple_Pack(1, key);
    if (!items)
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(items), ellipsis = -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (PyTuple_GET_ITEM(items, i) == Py_Ellipsis) {
            if (ellipsis >= 0) {
                PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis (...)");
                goto fail;
            }
            ellipsis = i;
        }
    Py_ssize_t given = n - (ellipsis >= 0);
    if (given > a->ndim) {
        PyErr_Format(PyExc_IndexError,
                     "too many indices for array: array is %d-dimensional, but %zd were indexed",
                     a->ndim, given);
        goto fail;
    }
    s->ndim = a->ndim;
    int dim = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(items, i);
        if (item == Py_Ellipsis) {
            for (Py_ssize_t k = 0; k < a->ndim - given; k++)
                full_dim(a, dim++, s);
            continue;
        }
        if (parse_item(a, item, dim++, s) < 0)
            goto fail;
    }
    while (dim < a->ndim)
        full_dim(a, dim++, s);
    if (items != key)
        Py_DECREF(items);

    s->out_ndim = 0;
    s->total = 1;
    s->first = 0;
    for (int d = 0; d < s->ndim; d++) {
        s->total *= (uint64_t)s->count[d];
        s->first = s->first * (uint64_t)a->shape[d] + (uint64_t)s->start[d];
        if (!s->dropped[d])
            s->out_shape[s->out_ndim++] = s->count[d];
    }
    /* Ascending run: trailing dimensions whole, then one with step 1 (or a single element),
     * then single elements only. */
    int d = s->ndim - 1;
    while (d >= 0 && s->step[d] == 1 && s->count[d] == a->shape[d])
        d--;
    if (d >= 0 && (s->step[d] == 1 || s->count[d] <= 1))
        d--;
    while (d >= 0 && s->count[d] == 1)
        d--;
    s->contiguous = d < 0;
    return 0;
fail:
    if (items != key)
        Py_DECREF(items);
    return -1;
}

/* Copy between the packed buffer and the selected elements of the array's host memory;
 * gather = 1 reads the array. Runs without the GIL. */
static void move(const pgpy_array *a, const selection *s, char *host, char *packed, int gather) {
    size_t es = pg_dtype_size(a->dtype);
    int64_t stride[PG_MAX_DIMS];
    int64_t st = (int64_t)es;
    for (int d = s->ndim - 1; d >= 0; d--) {
        stride[d] = st;
        st *= a->shape[d];
    }
    int last = s->ndim - 1;
    int64_t idx[PG_MAX_DIMS] = {0};
    size_t run = (size_t)s->count[last] * es;
    int unit = s->step[last] == 1;
    for (;;) {
        char *p = host;
        for (int d = 0; d < last; d++)
            p += (s->start[d] + idx[d] * s->step[d]) * stride[d];
        p += s->start[last] * stride[last];
        if (unit) {
            memcpy(gather ? packed : p, gather ? p : packed, run);
            packed += run;
        } else {
            for (int64_t k = 0; k < s->count[last]; k++) {
                char *e = p + k * s->step[last] * stride[last];
                memcpy(gather ? packed : e, gather ? e : packed, es);
                packed += es;
            }
        }
        int d = last - 1;
        while (d >= 0 && ++idx[d] == s->count[d])
            idx[d--] = 0;
        if (d < 0)
            return;
    }
}

/* One host access that moves the selection; packed holds s->total elements. */
static pg_status host_access(pgpy_array *a, const selection *s, char *packed, int gather) {
    pg_array *h = a->h;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    if (s->contiguous) {
        st = gather ? pg_array_read(h, s->first, s->total, packed)
                    : pg_array_write(h, s->first, s->total, packed);
    } else {
        void *host = NULL;
        st = pg_array_map(h, gather ? PG_ACCESS_IN : PG_ACCESS_INOUT, &host);
        if (st == PG_OK) {
            move(a, s, host, packed, gather);
            st = pg_array_unmap(h);
        }
    }
    Py_END_ALLOW_THREADS
    return st;
}

/* a[lo:hi] (step 1, along the first axis, at least one row): the rows as a view — a
 * DeviceArray sharing a's elements (pg_array_slice). 0: not such a key. */
static int view_key(pgpy_array *a, PyObject *key, Py_ssize_t *lo, Py_ssize_t *hi) {
    if (PyTuple_Check(key) && PyTuple_GET_SIZE(key) == 1)
        key = PyTuple_GET_ITEM(key, 0);
    if (!PySlice_Check(key))
        return 0;
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0) {
        PyErr_Clear(); /* the copying path reports it */
        return 0;
    }
    Py_ssize_t n = PySlice_AdjustIndices((Py_ssize_t)a->shape[0], &start, &stop, step);
    if (step != 1 || n <= 0)
        return 0;
    *lo = start;
    *hi = stop;
    return 1;
}

PyObject *pgpy_array_slice(pgpy_array *a, Py_ssize_t lo, Py_ssize_t hi) {
    if (a->freed)
        return pgpy_raise(pg_array_slice(NULL, 0, 0, NULL)); /* "invalid or freed" */
    pg_array *v = NULL;
    pg_status st = pg_array_slice(a->h, (int64_t)lo, (int64_t)hi, &v);
    if (st != PG_OK)
        return pgpy_raise(st);
    return pgpy_array_wrap(a->rt, v);
}

PyObject *pgpy_array_getitem(PyObject *self, PyObject *key) {
    pgpy_array *a = (pgpy_array *)self;
    Py_ssize_t lo, hi;
    if (view_key(a, key, &lo, &hi))
        return pgpy_array_slice(a, lo, hi);
    selection s;
    if (parse_key(a, key, &s) < 0)
        return NULL;
    size_t es = pg_dtype_size(a->dtype);
    if (s.out_ndim == 0) {
        char one[8];
        pg_status st = host_access(a, &s, one, 1);
        if (st != PG_OK)
            return pgpy_raise(st);
        return pgpy_scalar_to_py(a->dtype, one);
    }
    PyObject *ba = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(s.total * es));
    if (!ba)
        return NULL;
    if (s.total) {
        pg_status st = host_access(a, &s, PyByteArray_AS_STRING(ba), 1);
        if (st != PG_OK) {
            Py_DECREF(ba);
            return pgpy_raise(st);
        }
    }
    PyObject *r = pgpy_values_to_py(a->dtype, s.out_ndim, s.out_shape, ba, 1);
    Py_DECREF(ba);
    return r;
}

int pgpy_array_setitem(PyObject *self, PyObject *key, PyObject *value) {
    pgpy_array *a = (pgpy_array *)self;
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "DeviceArray elements cannot be deleted");
        return -1;
    }
    selection s;
    if (parse_key(a, key, &s) < 0)
        return -1;
    size_t es = pg_dtype_size(a->dtype);
    char *packed = PyMem_Malloc(s.total ? (size_t)s.total * es : 1);
    if (!packed) {
        PyErr_NoMemory();
        return -1;
    }
    int r = pgpy_fill_from_object(value, a->dtype, s.out_ndim, s.out_shape, packed, s.total);
    if (r == 0 && s.total) {
        pg_status st = host_access(a, &s, packed, 0);
        if (st != PG_OK) {
            pgpy_raise(st);
            r = -1;
        }
    }
    PyMem_Free(packed);
    return r;
}

PyObject *pgpy_array_read_all(pgpy_array *a, int mode) {
    PyObject *ba = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)a->nbytes);
    if (!ba)
        return NULL;
    pg_array *h = a->h;
    uint64_t n = a->size;
    char *dst = PyByteArray_AS_STRING(ba);
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_array_read(h, 0, n, dst);
    Py_END_ALLOW_THREADS
    if (st != PG_OK) {
        Py_DECREF(ba);
        return pgpy_raise(st);
    }
    if (mode == PGPY_BYTES)
        return ba;
    PyObject *r = pgpy_values_to_py(a->dtype, a->ndim, a->shape, ba, mode == PGPY_AUTO);
    Py_DECREF(ba);
    return r;
}

static pg_status write_whole(pgpy_array *a, const void *src) {
    pg_array *h = a->h;
    uint64_t n = a->size;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_array_write(h, 0, n, src);
    Py_END_ALLOW_THREADS
    return st;
}

int pgpy_array_write_all(pgpy_array *a, PyObject *value) {
    if (PyObject_CheckBuffer(value) && !PyObject_TypeCheck(value, &pgpy_array_type)) {
        /* Same element type and C order: straight from the caller's memory, no staging copy. */
        Py_buffer view;
        if (PyObject_GetBuffer(value, &view, PyBUF_FULL_RO) < 0)
            return -1;
        int same = pgpy_dtype_from_format(view.format, view.itemsize) == (int)a->dtype &&
                   PyBuffer_IsContiguous(&view, 'C') && (uint64_t)view.len == a->nbytes;
        pg_status st = same ? write_whole(a, view.buf) : PG_OK;
        if (st != PG_OK)
            pgpy_raise(st); /* before the release: it may call polygpu (a view of an array) */
        PyBuffer_Release(&view);
        if (same)
            return st == PG_OK ? 0 : -1;
    }
    char *packed = PyMem_Malloc((size_t)a->nbytes);
    if (!packed) {
        PyErr_NoMemory();
        return -1;
    }
    int r = pgpy_fill_from_object(value, a->dtype, a->ndim, a->shape, packed, a->size);
    if (r == 0) {
        pg_status st = write_whole(a, packed);
        if (st != PG_OK) {
            pgpy_raise(st);
            r = -1;
        }
    }
    PyMem_Free(packed);
    return r;
}

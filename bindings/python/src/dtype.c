/* dtype.c: element types as Python spells them (names, NumPy dtypes, buffer formats). */
#include "pgpy.h"

#include <string.h>

static const char *formats[PG_DTYPE_COUNT] = {"b", "h", "i", "q", "B", "H", "I", "Q", "f", "d"};

const char *pgpy_dtype_format(pg_dtype t) {
    return (unsigned)t < PG_DTYPE_COUNT ? formats[t] : "B";
}

int pgpy_dtype_is_float(pg_dtype t) {
    return t == PG_FLOAT32 || t == PG_FLOAT64;
}

static int parse_name(const char *name, pg_dtype *out) {
    pg_status st = pg_dtype_parse(name, out);
    if (st != PG_OK) {
        pgpy_raise(st);
        return -1;
    }
    return 0;
}

/* A dtype name as C text. The C side sees only up to a NUL, so "float32\0junk" would pass as
 * "float32": refuse a name with a NUL in it, as Python refuses such a str for a C string. */
static const char *name_text(PyObject *str) {
    Py_ssize_t n = 0;
    const char *s = PyUnicode_AsUTF8AndSize(str, &n);
    if (s && (size_t)n != strlen(s)) {
        PyErr_Format(PyExc_ValueError,
                     "dtype %R contains a NUL character: expected a name such as "
                     "'float32'",
                     str);
        return NULL;
    }
    return s;
}

int pgpy_dtype_from_object(PyObject *obj, pg_dtype *out) {
    if (PyUnicode_Check(obj)) {
        const char *s = name_text(obj);
        return s ? parse_name(s, out) : -1;
    }
    if (obj == (PyObject *)&PyFloat_Type) {
        *out = PG_FLOAT64;
        return 0;
    }
    if (obj == (PyObject *)&PyLong_Type) {
        *out = PG_INT64;
        return 0;
    }
    /* numpy.dtype('float32').name, or numpy.float32.__name__: no NumPy import needed. */
    const char *attr = PyType_Check(obj) ? "__name__" : "name";
    PyObject *name = PyObject_GetAttrString(obj, attr);
    if (!name || !PyUnicode_Check(name)) {
        Py_XDECREF(name);
        PyErr_Clear();
        pgpy_argument_error("dtype must be a name such as 'float32', a NumPy dtype, int or "
                            "float; got %R",
                            obj);
        return -1;
    }
    const char *s = name_text(name);
    int r = s ? parse_name(s, out) : -1;
    Py_DECREF(name);
    return r;
}

int pgpy_dtype_from_format(const char *fmt, Py_ssize_t itemsize) {
    if (!fmt)
        fmt = "B";
    /* Byte order: native and little-endian are the same on every machine polygpu runs on. */
    if (*fmt == '@' || *fmt == '=' || *fmt == '<')
        fmt++;
    if (strlen(fmt) != 1)
        return -1;
    int is_float = 0, is_signed = 0;
    switch (*fmt) {
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
        is_signed = 1;
        break;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N':
    case '?':
    case 'c':
        break;
    case 'f':
    case 'd':
        is_float = 1;
        break;
    default:
        return -1;
    }
    if (is_float)
        return itemsize == 4 ? PG_FLOAT32 : itemsize == 8 ? PG_FLOAT64 : -1;
    switch (itemsize) {
    case 1:
        return is_signed ? PG_INT8 : PG_UINT8;
    case 2:
        return is_signed ? PG_INT16 : PG_UINT16;
    case 4:
        return is_signed ? PG_INT32 : PG_UINT32;
    case 8:
        return is_signed ? PG_INT64 : PG_UINT64;
    default:
        return -1;
    }
}

static PyObject *numpy_module;
static int numpy_checked;

PyObject *pgpy_numpy(void) {
    if (!numpy_checked) {
        numpy_checked = 1;
        numpy_module = PyImport_ImportModule("numpy");
        if (!numpy_module && !PyErr_ExceptionMatches(PyExc_ImportError))
            numpy_checked =
                0; /* interrupted (Ctrl-C during the import): not "missing", ask again */
        if (!numpy_module)
            PyErr_Clear(); /* NumPy is optional */
    }
    return numpy_module;
}

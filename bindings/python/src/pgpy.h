/* pgpy.h: what the files of the _polygpu extension share (types, conversions, errors). */
#ifndef PGPY_H
#define PGPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "polygpu.h"

/* A runtime. Arrays and kernels hold a strong reference to it, so it is freed last. */
typedef struct pgpy_runtime {
    PyObject_HEAD pg_runtime *h;
    int closed;
    Py_ssize_t exports; /* buffer views of its arrays that are still open */
    PyObject *weakrefs;
} pgpy_runtime;

/* A device array. Shape and dtype are fixed at creation, so they are cached here. */
typedef struct pgpy_array {
    PyObject_HEAD pg_array *h;
    pgpy_runtime *rt;
    int freed;
    pg_dtype dtype;
    int ndim;
    int64_t shape[PG_MAX_DIMS];
    Py_ssize_t view_shape[PG_MAX_DIMS]; /* for Py_buffer: lives as long as the array */
    Py_ssize_t view_strides[PG_MAX_DIMS];
    uint64_t size;
    uint64_t nbytes;
    uint64_t id;
    Py_ssize_t exports;
    PyObject *weakrefs;
} pgpy_array;

typedef struct pgpy_kernel {
    PyObject_HEAD vectorcallfunc vectorcall;
    pg_kernel *h;
    pgpy_runtime *rt;
    int freed;
    PyObject *name;
    int nparams;
    PyObject *weakrefs;
} pgpy_kernel;

/* A kernel bound to a launch configuration: k(grid, block)(*args). */
typedef struct pgpy_launch {
    PyObject_HEAD vectorcallfunc vectorcall; /* the launch path: no argument tuple built */
    pgpy_kernel *k;
    pg_dim3 grid, block;
    size_t shared_mem;
} pgpy_launch;

extern PyTypeObject pgpy_runtime_type;
extern PyTypeObject pgpy_array_type;
extern PyTypeObject pgpy_kernel_type;
extern PyTypeObject pgpy_launch_type;
extern PyTypeObject pgpy_graph_type;
/* dlpack.c: DeviceArray.__dlpack__ and __dlpack_device__ */
PyObject *pgpy_array_dlpack(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *pgpy_array_dlpack_device(PyObject *self, PyObject *unused);
/* A new DeviceArray copying a CUDA DLPack producer device to device (dlpack.c). */
PyObject *pgpy_from_dlpack_cuda(pgpy_runtime *rt, PyObject *obj);
/* A DeviceArray adopting obj's memory (zero-copy; cuda: a kDLCUDA producer, else host memory),
 * or BufferError where it cannot. */
PyObject *pgpy_adopt_dlpack(pgpy_runtime *rt, PyObject *obj, int cuda);
/* graph.c: Runtime.record() */
PyObject *pgpy_runtime_record(PyObject *self, PyObject *unused);

/* Exceptions, indexed by pg_status (PG_OK's slot holds the base class). */
extern PyObject *pgpy_errors[PG_ERROR_INTERRUPTED + 1];

/* errors.c: raise the exception for a failed call; must run on the thread that made the call,
 * before any other polygpu call there (the message is thread-local). Returns NULL. */
PyObject *pgpy_raise(pg_status st);
/* How long an implicit close (garbage, exit) waits for work: PG_CLOSE_TIMEOUT seconds, 10. */
uint64_t pgpy_implicit_close_ns(void);
/* Raise pg.ArgumentError with a formatted message. Returns NULL. */
PyObject *pgpy_argument_error(const char *fmt, ...);
int pgpy_errors_init(PyObject *module);

/* dtype.c */
/* A dtype from a name ("float32"), a NumPy dtype or scalar type, or Python's int / float. */
int pgpy_dtype_from_object(PyObject *obj, pg_dtype *out);
/* The struct-module format character of a dtype ("f", "q", ...). */
const char *pgpy_dtype_format(pg_dtype t);
/* The dtype of a buffer format string, or -1 if polygpu has no such element type. */
int pgpy_dtype_from_format(const char *fmt, Py_ssize_t itemsize);
int pgpy_dtype_is_float(pg_dtype t);
/* NumPy if it can be imported (borrowed), else NULL without an exception. */
PyObject *pgpy_numpy(void);

/* convert.c: Python values <-> packed element buffers. */
/* One element at p as a Python int or float. */
PyObject *pgpy_scalar_to_py(pg_dtype t, const void *p);
/* Store a Python number at p as dtype t; ArgumentError if it is not a number of that kind or
 * does not fit. */
int pgpy_scalar_from_py(pg_dtype t, PyObject *v, void *p);
/* A str's UTF-8 text for C (borrowed from str), or NULL with an exception: ValueError naming
 * `what` (and `name` when not NULL) if it holds a NUL, which C would silently cut at. */
const char *pgpy_cstr(PyObject *str, const char *what, PyObject *name);
/* A Python int (an exact int, after PyNumber_Index) as a scalar pg_arg: int64, or uint64 above
 * INT64_MAX. 0, or 1 with no exception if it needs more than 64 bits, or -1 on an exception. */
int pgpy_int_to_arg(PyObject *n, pg_arg *out);
/* Fill `count` packed elements of dtype t at dst from obj: a scalar (broadcast), an object with
 * the buffer protocol, or nested sequences, with the same number of elements in row-major
 * order. `shape` (ndim dims) is only used in messages. */
int pgpy_fill_from_object(PyObject *obj, pg_dtype t, int ndim, const int64_t *shape, void *dst,
                          uint64_t count);
/* Packed elements (a bytearray) as a NumPy array if NumPy is there and want_numpy, else as
 * nested lists. */
PyObject *pgpy_values_to_py(pg_dtype t, int ndim, const int64_t *shape, PyObject *bytearray,
                            int want_numpy);
/* Packed elements as a NumPy array; ImportError if NumPy is missing. */
PyObject *pgpy_values_to_numpy(pg_dtype t, int ndim, const int64_t *shape, PyObject *bytearray);
/* Shape and dtype of a host object that asarray accepts (buffer or nested sequences). */
int pgpy_infer_layout(PyObject *obj, PyObject *dtype_or_none, pg_dtype *t, int *ndim,
                      int64_t *shape);

/* array.c */
PyObject *pgpy_array_wrap(pgpy_runtime *rt, pg_array *h);
/* Parse an int or a tuple of ints as a shape. */
int pgpy_parse_shape(PyObject *obj, int *ndim, int64_t *shape);

/* index.c */
PyObject *pgpy_array_getitem(PyObject *self, PyObject *key);
int pgpy_array_setitem(PyObject *self, PyObject *key, PyObject *value);
/* Rows [lo, hi) of a as a new DeviceArray viewing them (pg_array_slice). */
PyObject *pgpy_array_slice(pgpy_array *a, Py_ssize_t lo, Py_ssize_t hi);
/* What a whole-array read returns. */
enum { PGPY_BYTES, PGPY_AUTO, PGPY_LIST };
/* Whole-array read (as PGPY_BYTES: a bytearray, PGPY_AUTO: NumPy or lists, PGPY_LIST: lists)
 * and write, one host access each. */
PyObject *pgpy_array_read_all(pgpy_array *a, int mode);
int pgpy_array_write_all(pgpy_array *a, PyObject *value);

/* buffer.c */
extern PyBufferProcs pgpy_array_as_buffer;
extern PyTypeObject pgpy_hostview_type;
PyObject *pgpy_hostview_new(pgpy_array *a, int writable);

/* cuda_interface.c: __cuda_array_interface__ of an array (AttributeError on CPU devices), and
 * rt.asarray() of an object that has one: 1 and *out set if it did, 0 if obj has none, -1 on
 * error. */
PyObject *pgpy_array_cuda_interface(pgpy_array *a);
int pgpy_asarray_cuda(pgpy_runtime *rt, PyObject *obj, PyObject *dtype, PyObject **out);

/* dag.c: a snapshot of the runtime's DAG as {"vertices": [dict], "edges": [[from, to]]}. */
PyObject *pgpy_dag(pg_runtime *h);

/* kernel.c */
PyObject *pgpy_kernel_wrap(pgpy_runtime *rt, pg_kernel *h, PyObject *name);

#endif

/* dlpack.c: DeviceArray.__dlpack__ / __dlpack_device__: the array's host copy exported as a
 * DLPack tensor (kDLCPU), zero-copy, for np.from_dlpack, torch.from_dlpack and the rest of the
 * array ecosystem. The export is a read-only buffer view of the array (buffer.c): a host read
 * access held until the consumer drops the tensor, so kernels that write the array wait for
 * that, as for any view. Structures as in DLPack's dlpack.h (v0.8 ABI, unversioned capsule). */
#include "pgpy.h"

typedef struct {
    int32_t device_type; /* kDLCPU = 1 */
    int32_t device_id;
} pgdl_device;

typedef struct {
    uint8_t code; /* kDLInt 0, kDLUInt 1, kDLFloat 2 */
    uint8_t bits;
    uint16_t lanes;
} pgdl_dtype;

typedef struct {
    void *data;
    pgdl_device device;
    int32_t ndim;
    pgdl_dtype dtype;
    int64_t *shape;
    int64_t *strides; /* in elements */
    uint64_t byte_offset;
} pgdl_tensor;

typedef struct pgdl_managed {
    pgdl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct pgdl_managed *self);
} pgdl_managed;

/* What a tensor keeps: the view (the host access) and its shape and strides. */
typedef struct {
    pgdl_managed m;
    Py_buffer view;
    int64_t shape[PG_MAX_DIMS], strides[PG_MAX_DIMS];
} pgdl_export;

/* Called by the consumer, on any thread, when it is done with the tensor. */
static void export_deleter(pgdl_managed *m) {
    pgdl_export *e = (pgdl_export *)m;
    PyGILState_STATE g = PyGILState_Ensure();
    PyBuffer_Release(&e->view);
    PyMem_Free(e);
    PyGILState_Release(g);
}

/* A capsule no consumer took still owns its tensor. */
static void capsule_destructor(PyObject *cap) {
    if (!PyCapsule_IsValid(cap, "dltensor"))
        return; /* renamed "used_dltensor": the consumer owns it */
    pgdl_managed *m = PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter)
        m->deleter(m);
}

static pgdl_dtype dl_dtype(pg_dtype t) {
    pgdl_dtype d = {0, (uint8_t)(pg_dtype_size(t) * 8), 1};
    if (t == PG_FLOAT32 || t == PG_FLOAT64)
        d.code = 2;
    else if (t >= PG_UINT8 && t <= PG_UINT64)
        d.code = 1;
    return d;
}

PyObject *pgpy_array_dlpack(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", kw, &stream, &max_version,
                                     &dl_device, &copy))
        return NULL;
    (void)max_version; /* an unversioned capsule is what a producer of the 0.8 ABI returns */
    if (stream != Py_None && !(PyLong_Check(stream) && PyLong_AsLong(stream) == -1))
        return pgpy_argument_error("__dlpack__: the host copy has no stream; stream must be None "
                                   "(or -1), got %R",
                                   stream);
    if (dl_device != Py_None) {
        int type = -1, id = -1;
        if (!PyArg_ParseTuple(dl_device, "ii", &type, &id))
            return NULL;
        if (type != 1)
            return PyErr_Format(PyExc_BufferError,
                                "__dlpack__: polygpu exports an array's host copy (kDLCPU, 1); "
                                "device type %d asked for",
                                type);
    }
    if (copy == Py_True)
        return PyErr_Format(PyExc_BufferError,
                            "__dlpack__: copy=True is not supported; export, then copy");
    pgpy_array *a = (pgpy_array *)self;
    pgdl_export *e = PyMem_Calloc(1, sizeof *e);
    if (!e)
        return PyErr_NoMemory();
    if (PyObject_GetBuffer(self, &e->view, PyBUF_RECORDS_RO) < 0) {
        PyMem_Free(e);
        return NULL;
    }
    int64_t step = 1;
    for (int i = a->ndim - 1; i >= 0; i--) {
        e->shape[i] = a->shape[i];
        e->strides[i] = step;
        step *= a->shape[i];
    }
    e->m.dl_tensor.data = e->view.buf;
    e->m.dl_tensor.device = (pgdl_device){1, 0};
    e->m.dl_tensor.ndim = a->ndim;
    e->m.dl_tensor.dtype = dl_dtype(a->dtype);
    e->m.dl_tensor.shape = e->shape;
    e->m.dl_tensor.strides = e->strides;
    e->m.dl_tensor.byte_offset = 0;
    e->m.manager_ctx = e;
    e->m.deleter = export_deleter;
    PyObject *cap = PyCapsule_New(&e->m, "dltensor", capsule_destructor);
    if (!cap) {
        PyBuffer_Release(&e->view);
        PyMem_Free(e);
    }
    return cap;
}

PyObject *pgpy_array_dlpack_device(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return Py_BuildValue("(ii)", 1, 0); /* kDLCPU, device 0: the host copy */
}

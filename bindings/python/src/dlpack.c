/* dlpack.c: DeviceArray.__dlpack__ / __dlpack_device__ and the import of CUDA DLPack
 * producers. On CPU devices the array's host copy is exported (kDLCPU), zero-copy, as a
 * read-only buffer view of the array (buffer.c): a host read access held until the consumer
 * drops the tensor, so kernels that write the array wait for that, as for any view. On GPUs
 * the device copy is exported (kDLCUDA) on the GPU that holds the current value (else GPU 0),
 * with DLPack's stream semantics: the consumer's stream waits on the GPU for polygpu's work
 * (pg_array_device_pointer_synced); the consumer may write it. A CUDA producer is imported
 * device to device (Runtime._from_dlpack_cuda). Structures as in DLPack's dlpack.h (v0.8 ABI,
 * unversioned capsule). */
#include "pgpy.h"

#include <pthread.h>

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

/* What a tensor keeps: the view (the host access; a CPU export) or the array (a GPU export:
 * its device address lives as long as the array), and its shape and strides. */
typedef struct {
    pgdl_managed m;
    Py_buffer view;
    PyObject *owner;
    int64_t shape[PG_MAX_DIMS], strides[PG_MAX_DIMS];
} pgdl_export;

enum { DL_CPU = 1, DL_CUDA = 2 };

/* Called by the consumer, on any thread, when it is done with the tensor. */
static void export_deleter(pgdl_managed *m) {
    pgdl_export *e = (pgdl_export *)m;
    PyGILState_STATE g = PyGILState_Ensure();
    if (e->owner)
        Py_DECREF(e->owner);
    else
        PyBuffer_Release(&e->view);
    PyMem_Free(e);
    PyGILState_Release(g);
}

/* The GPU an export comes from: the one holding the current value, else the first GPU; -1 when
 * the runtime has no GPU (the host copy is exported). -2 with an exception set. */
static int export_gpu(pgpy_array *a) {
    pg_device_info info[PG_MAX_DEVICES];
    int n = 0;
    pg_array_desc d;
    pg_status st = pg_runtime_devices(a->rt->h, info, PG_MAX_DEVICES, &n);
    if (st == PG_OK)
        st = pg_array_describe(a->h, &d);
    if (st != PG_OK) {
        pgpy_raise(st);
        return -2;
    }
    /* By device class, not the first device's: a runtime may hold GPUs and CPU devices. */
    int gpu = -1;
    for (int l = 1; l <= n; l++) {
        if (info[l - 1].device_class != PG_CLASS_GPU)
            continue;
        if (gpu < 0)
            gpu = l - 1;
        if (d.valid & (1u << l))
            return l - 1;
    }
    return gpu;
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

static void fill_tensor(pgdl_export *e, pgpy_array *a, void *data, int type, int id) {
    int64_t step = 1;
    for (int i = a->ndim - 1; i >= 0; i--) {
        e->shape[i] = a->shape[i];
        e->strides[i] = step;
        step *= a->shape[i];
    }
    e->m.dl_tensor.data = data;
    e->m.dl_tensor.device = (pgdl_device){type, id};
    e->m.dl_tensor.ndim = a->ndim;
    e->m.dl_tensor.dtype = dl_dtype(a->dtype);
    e->m.dl_tensor.shape = e->shape;
    e->m.dl_tensor.strides = e->strides;
    e->m.dl_tensor.byte_offset = 0;
    e->m.manager_ctx = e;
    e->m.deleter = export_deleter;
}

/* The device copy on GPU `gpu`, after which the consumer's stream waits (DLPack: None means
 * CUDA's legacy default stream, -1 that the consumer orders nothing: then this thread waits). */
static PyObject *export_cuda(pgpy_array *a, int gpu, PyObject *stream) {
    uint64_t consumer = 1;
    if (stream != Py_None) {
        long long v = PyLong_Check(stream) ? PyLong_AsLongLong(stream) : -2;
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (v == 0 || v < -1)
            return pgpy_argument_error("__dlpack__: stream %R is not a CUDA stream for DLPack "
                                       "(None or 1: the legacy default stream, 2: the per-thread "
                                       "one, -1: no ordering, or a cudaStream_t)",
                                       stream);
        consumer = v == -1 ? 0 : (uint64_t)v;
    }
    void *ptr = NULL;
    pg_array *h = a->h;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    /* The consumer may write (PyTorch and CuPy share the memory): its copy becomes current. */
    st = pg_array_device_pointer_synced(h, gpu, PG_ACCESS_INOUT, consumer, &ptr);
    Py_END_ALLOW_THREADS
    if (st != PG_OK)
        return pgpy_raise(st);
    pgdl_export *e = PyMem_Calloc(1, sizeof *e);
    if (!e)
        return PyErr_NoMemory();
    Py_INCREF(a);
    e->owner = (PyObject *)a;
    fill_tensor(e, a, ptr, DL_CUDA, gpu);
    PyObject *cap = PyCapsule_New(&e->m, "dltensor", capsule_destructor);
    if (!cap) {
        Py_DECREF(a);
        PyMem_Free(e);
    }
    return cap;
}

PyObject *pgpy_array_dlpack(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", kw, &stream, &max_version,
                                     &dl_device, &copy))
        return NULL;
    (void)max_version; /* an unversioned capsule is what a producer of the 0.8 ABI returns */
    if (copy == Py_True)
        return PyErr_Format(PyExc_BufferError,
                            "__dlpack__: copy=True is not supported; export, then copy");
    pgpy_array *a = (pgpy_array *)self;
    int gpu = export_gpu(a);
    if (gpu == -2)
        return NULL;
    if (dl_device != Py_None) {
        int type = -1, id = -1;
        /* A tuple of two ints, as __dlpack_device__ returns; anything else is the caller's
         * mistake (PyArg_ParseTuple would raise SystemError for a non-tuple). */
        if (!PyTuple_Check(dl_device) || PyTuple_GET_SIZE(dl_device) != 2 ||
            !PyLong_Check(PyTuple_GET_ITEM(dl_device, 0)) ||
            !PyLong_Check(PyTuple_GET_ITEM(dl_device, 1)))
            return PyErr_Format(PyExc_TypeError,
                                "__dlpack__: dl_device must be a (device_type, device_id) tuple "
                                "of ints such as (1, 0) for the CPU, got %R",
                                dl_device);
        if (!PyArg_ParseTuple(dl_device, "ii", &type, &id))
            return NULL;
        if (type == DL_CUDA && gpu >= 0) {
            int n = 0;
            if (pg_runtime_devices(a->rt->h, NULL, 0, &n) != PG_OK)
                return pgpy_raise(PG_ERROR_STATE);
            if (id < 0 || id >= n)
                return PyErr_Format(PyExc_BufferError,
                                    "__dlpack__: CUDA device %d asked for; the runtime has GPUs "
                                    "0..%d",
                                    id, n - 1);
            gpu = id;
        } else if (type == DL_CPU) {
            gpu = -1;
        } else {
            return PyErr_Format(PyExc_BufferError,
                                "__dlpack__: device type %d asked for; polygpu exports the host "
                                "copy (kDLCPU, 1)%s",
                                type, gpu >= 0 ? " or a GPU copy (kDLCUDA, 2)" : "");
        }
    }
    if (gpu >= 0)
        return export_cuda(a, gpu, stream);
    if (stream != Py_None && !(PyLong_Check(stream) && PyLong_AsLong(stream) == -1))
        return pgpy_argument_error("__dlpack__: the host copy has no stream; stream must be None "
                                   "(or -1), got %R",
                                   stream);
    pgdl_export *e = PyMem_Calloc(1, sizeof *e);
    if (!e)
        return PyErr_NoMemory();
    if (PyObject_GetBuffer(self, &e->view, PyBUF_RECORDS_RO) < 0) {
        PyMem_Free(e);
        return NULL;
    }
    fill_tensor(e, a, e->view.buf, DL_CPU, 0);
    PyObject *cap = PyCapsule_New(&e->m, "dltensor", capsule_destructor);
    if (!cap) {
        PyBuffer_Release(&e->view);
        PyMem_Free(e);
    }
    return cap;
}

PyObject *pgpy_array_dlpack_device(PyObject *self, PyObject *unused) {
    (void)unused;
    int gpu = export_gpu((pgpy_array *)self);
    if (gpu == -2)
        return NULL;
    return gpu >= 0 ? Py_BuildValue("(ii)", DL_CUDA, gpu) : Py_BuildValue("(ii)", DL_CPU, 0);
}

/* What polygpu makes of a DLPack tensor: its element type (PG_DTYPE_COUNT: none of polygpu's),
 * shape and element count, and whether it is C-contiguous (shape is set only for 1 to
 * PG_MAX_DIMS dimensions). */
typedef struct {
    pg_dtype dt;
    int64_t shape[PG_MAX_DIMS];
    uint64_t count;
    int contiguous;
} tensor_desc;

static tensor_desc describe_tensor(const pgdl_tensor *t) {
    tensor_desc d = {PG_DTYPE_COUNT, {0}, 1, 1};
    for (int k = 0; k < PG_DTYPE_COUNT; k++) {
        pgdl_dtype x = dl_dtype((pg_dtype)k);
        if (x.code == t->dtype.code && x.bits == t->dtype.bits && t->dtype.lanes == 1)
            d.dt = (pg_dtype)k;
    }
    if (t->ndim >= 1 && t->ndim <= PG_MAX_DIMS) {
        int64_t want = 1;
        for (int i = t->ndim - 1; i >= 0; i--) {
            d.shape[i] = t->shape[i];
            d.count *= (uint64_t)d.shape[i];
            if (t->strides && d.shape[i] > 1 && t->strides[i] != want)
                d.contiguous = 0;
            want *= d.shape[i];
        }
    }
    return d;
}

/* The capsule of obj.__dlpack__(stream=...) (CUDA: the legacy default stream, after which
 * the producer's work is ordered; the host: no stream). */
static PyObject *dlpack_capsule(PyObject *obj, int cuda) {
    PyObject *meth = PyObject_GetAttrString(obj, "__dlpack__");
    if (!meth)
        return NULL;
    PyObject *noargs = PyTuple_New(0);
    PyObject *kw = cuda ? Py_BuildValue("{s:i}", "stream", 1) : NULL;
    PyObject *cap = noargs && (kw || !cuda) ? PyObject_Call(meth, noargs, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(noargs);
    Py_DECREF(meth);
    return cap;
}

/* The unused DLPack tensor a capsule holds, or NULL. */
static pgdl_managed *capsule_tensor(PyObject *cap) {
    return PyCapsule_IsValid(cap, "dltensor") ? PyCapsule_GetPointer(cap, "dltensor") : NULL;
}

/* A new DeviceArray holding a copy of obj, a CUDA DLPack producer, device to device: obj's
 * work is ordered before CUDA's legacy default stream (stream=1), polygpu's copy after it, and
 * the tensor is released once the copy has read it (pg_array_wait). */
PyObject *pgpy_from_dlpack_cuda(pgpy_runtime *rt, PyObject *obj) {
    PyObject *cap = dlpack_capsule(obj, 1);
    if (!cap)
        return NULL;
    pgdl_managed *m = capsule_tensor(cap);
    if (!m) {
        Py_DECREF(cap);
        return pgpy_argument_error("from_dlpack: __dlpack__ returned no unused 'dltensor' "
                                   "capsule");
    }
    pgdl_tensor *t = &m->dl_tensor;
    int ndim = t->ndim;
    tensor_desc td = describe_tensor(t);
    pg_dtype dt = td.dt;
    int64_t *shape = td.shape;
    uint64_t count = td.count;
    int contiguous = td.contiguous;
    const char *why = t->device.device_type != DL_CUDA ? "is not on a CUDA device"
                      : dt == PG_DTYPE_COUNT           ? "has an element type polygpu lacks"
                      : ndim < 1 || ndim > PG_MAX_DIMS ? "has a number of dimensions polygpu lacks"
                      : !contiguous                    ? "is not contiguous (copy it first)"
                                                       : NULL;
    if (why) {
        Py_DECREF(cap); /* unused: its destructor lets the producer's tensor go */
        return pgpy_argument_error("from_dlpack: the DLPack tensor %s", why);
    }
    uint64_t src = (uint64_t)(uintptr_t)t->data + t->byte_offset;
    pg_array *h = NULL;
    pg_runtime *rth = rt->h;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_array_new(rth, dt, ndim, shape, &h);
    if (st == PG_OK && count)
        st = pg_array_copy_from_device(h, src, (size_t)(count * pg_dtype_size(dt)), 1);
    if (st == PG_OK && count)
        st = pg_array_wait(h); /* the copy has read the tensor: it may go */
    Py_END_ALLOW_THREADS
    Py_DECREF(cap);
    if (st != PG_OK) {
        pgpy_raise(st);
        if (h)
            pg_array_free(h);
        return NULL;
    }
    return pgpy_array_wrap(rt, h);
}

/* ---- zero-copy import (Runtime._adopt_dlpack): the runtime adopts the producer's memory
 * (pg_array_adopt_host / _device) and gives the tensor back when its last use is gone. The
 * runtime calls release with its lock held, from any thread, perhaps while another thread
 * holding the GIL waits for that lock: so release only queues the tensor, and the deleter runs
 * later with the GIL, as a pending call of the main thread (Py_AddPendingCall needs no GIL). */
typedef struct adopted_node {
    pgdl_managed *m;
    struct adopted_node *next;
} adopted_node;

static pthread_mutex_t adopted_mu = PTHREAD_MUTEX_INITIALIZER;
static adopted_node *adopted_done;

static int adopted_drain(void *unused) {
    (void)unused;
    pthread_mutex_lock(&adopted_mu);
    adopted_node *n = adopted_done;
    adopted_done = NULL;
    pthread_mutex_unlock(&adopted_mu);
    while (n) {
        adopted_node *next = n->next;
        if (n->m->deleter)
            n->m->deleter(n->m);
        PyMem_RawFree(n);
        n = next;
    }
    return 0;
}

static void adopted_release(void *ctx) {
    adopted_node *n = ctx;
    pthread_mutex_lock(&adopted_mu);
    int first = adopted_done == NULL;
    n->next = adopted_done;
    adopted_done = n;
    pthread_mutex_unlock(&adopted_mu);
    if (first) /* if the queue of pending calls is full, the next release or import drains */
        (void)Py_AddPendingCall(adopted_drain, NULL);
}

/* Runtime._adopt_dlpack(obj, cuda): a DeviceArray whose value is obj's memory, or BufferError
 * (naming why) where that cannot be: the caller copies instead unless copy=False. */
PyObject *pgpy_adopt_dlpack(pgpy_runtime *rt, PyObject *obj, int cuda) {
    adopted_drain(NULL);
    PyObject *cap = dlpack_capsule(obj, cuda);
    if (!cap)
        return NULL;
    pgdl_managed *m = capsule_tensor(cap);
    if (!m) {
        Py_DECREF(cap);
        return PyErr_Format(PyExc_BufferError,
                            "from_dlpack: __dlpack__ returned no unused 'dltensor' capsule");
    }
    pgdl_tensor *t = &m->dl_tensor;
    int ndim = t->ndim;
    tensor_desc td = describe_tensor(t);
    pg_dtype dt = td.dt;
    int64_t *shape = td.shape;
    int contiguous = td.contiguous, empty = td.count == 0;
    int type = t->device.device_type;
    const char *why = (cuda ? type != DL_CUDA : (type != DL_CPU && type != 3))
                          ? "is not where its __dlpack_device__ said"
                      : dt == PG_DTYPE_COUNT           ? "has an element type polygpu lacks"
                      : ndim < 1 || ndim > PG_MAX_DIMS ? "has a number of dimensions polygpu lacks"
                      : !contiguous                    ? "is not C-contiguous"
                      : empty                          ? "has no elements"
                                                       : NULL;
    if (why) {
        Py_DECREF(cap); /* unused: its destructor lets the producer's tensor go */
        return PyErr_Format(PyExc_BufferError, "from_dlpack: the DLPack tensor %s", why);
    }
    adopted_node *node = PyMem_RawCalloc(1, sizeof *node);
    if (!node) {
        Py_DECREF(cap);
        return PyErr_NoMemory();
    }
    node->m = m;
    void *data = (char *)t->data + t->byte_offset;
    pg_array *h = NULL;
    pg_runtime *rth = rt->h;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = cuda ? pg_array_adopt_device(rth, dt, ndim, shape, data, 1, adopted_release, node, &h)
              : pg_array_adopt_host(rth, dt, ndim, shape, data, adopted_release, node, &h);
    Py_END_ALLOW_THREADS
    if (st != PG_OK) {
        PyMem_RawFree(node);
        Py_DECREF(cap);
        return pgpy_raise(st);
    }
    /* The runtime owns the tensor now: the capsule must not delete it. */
    PyCapsule_SetName(cap, "used_dltensor");
    Py_DECREF(cap);
    return pgpy_array_wrap(rt, h);
}

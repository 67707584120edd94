/* buffer.c: the buffer protocol on DeviceArray and on its writable HostView — an exported view
 * is a host access (a map) for as long as it lives. */
#include "pgpy.h"

/* Map the array and describe it in *view, whose owner is `owner` (the array or a HostView). */
static int export_array(pgpy_array *a, PyObject *owner, Py_buffer *view, int flags, int writable) {
    /* A read-only view leaves the device copies valid; a writable one makes the host copy the
     * only valid one, so kernels see what the view wrote. */
    pg_access access = writable ? PG_ACCESS_INOUT : PG_ACCESS_IN;
    if (a->rt->closed) {
        /* Closing frees the memory without waiting for views: a view taken meanwhile by
         * another thread would dangle. */
        view->obj = NULL;
        PyErr_SetString(pgpy_errors[PG_ERROR_STATE], "the array's runtime is closed");
        return -1;
    }
    pg_array *h = a->h;
    void *ptr = NULL;
    pg_status st;
    /* Counted before the GIL goes, as the map may wait: a close or free by another thread
     * meanwhile must see the view being taken, not free the memory under it. */
    a->exports++;
    a->rt->exports++;
    Py_BEGIN_ALLOW_THREADS
    st = pg_array_map(h, access, &ptr);
    Py_END_ALLOW_THREADS
    if (st != PG_OK) {
        a->exports--;
        a->rt->exports--;
        view->obj = NULL;
        pgpy_raise(st);
        return -1;
    }
    view->buf = ptr;
    view->obj = owner;
    Py_INCREF(owner);
    view->len = (Py_ssize_t)a->nbytes;
    view->readonly = !writable;
    view->itemsize = (Py_ssize_t)pg_dtype_size(a->dtype);
    view->format = (flags & PyBUF_FORMAT) ? (char *)pgpy_dtype_format(a->dtype) : NULL;
    if ((flags & PyBUF_ND) == PyBUF_ND) {
        view->ndim = a->ndim;
        view->shape = a->view_shape;
    } else {
        view->ndim = 1;
        view->shape = NULL;
    }
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? a->view_strides : NULL;
    view->suboffsets = NULL;
    view->internal = NULL;
    return 0;
}

static void release_array(pgpy_array *a) {
    pg_array *h = a->h;
    /* Cannot fail for a mapped array of a live runtime, and the runtime cannot be closed
     * while a view is open (Runtime.close checks the export count). */
    Py_BEGIN_ALLOW_THREADS
    pg_array_unmap(h);
    Py_END_ALLOW_THREADS
    a->exports--;
    a->rt->exports--;
}

static int array_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    return export_array((pgpy_array *)self, self, view, flags,
                        (flags & PyBUF_WRITABLE) == PyBUF_WRITABLE);
}

static void array_releasebuffer(PyObject *self, Py_buffer *view) {
    release_array((pgpy_array *)self);
}

PyBufferProcs pgpy_array_as_buffer = {
    .bf_getbuffer = array_getbuffer,
    .bf_releasebuffer = array_releasebuffer,
};

/* ------------------------------------------------------------------ HostView */

/* Consumers such as memoryview and NumPy never ask for a writable buffer, so a DeviceArray
 * exports read-only views to them; a HostView grants its writability whatever they ask. */
typedef struct pgpy_hostview {
    PyObject_HEAD pgpy_array *a;
    int writable;
} pgpy_hostview;

static int hostview_traverse(pgpy_hostview *v, visitproc visit, void *arg) {
    Py_VISIT(v->a);
    return 0;
}

static void hostview_dealloc(pgpy_hostview *v) {
    PyObject_GC_UnTrack(v);
    Py_XDECREF(v->a);
    PyObject_GC_Del(v);
}

static int hostview_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    pgpy_hostview *v = (pgpy_hostview *)self;
    if (!v->writable && (flags & PyBUF_WRITABLE) == PyBUF_WRITABLE) {
        view->obj = NULL;
        PyErr_SetString(PyExc_BufferError, "this HostView is read-only: use host_view(True)");
        return -1;
    }
    return export_array(v->a, self, view, flags, v->writable);
}

static void hostview_releasebuffer(PyObject *self, Py_buffer *view) {
    release_array(((pgpy_hostview *)self)->a);
}

static PyBufferProcs hostview_as_buffer = {
    .bf_getbuffer = hostview_getbuffer,
    .bf_releasebuffer = hostview_releasebuffer,
};

static PyObject *hostview_repr(pgpy_hostview *v) {
    return PyUnicode_FromFormat("<polygpu.HostView of array %llu, %s>",
                                (unsigned long long)v->a->id,
                                v->writable ? "writable" : "read-only");
}

static PyObject *hostview_get_array(pgpy_hostview *v, void *closure) {
    Py_INCREF(v->a);
    return (PyObject *)v->a;
}

static PyObject *hostview_get_writable(pgpy_hostview *v, void *closure) {
    return PyBool_FromLong(v->writable);
}

static PyGetSetDef hostview_getset[] = {
    {"array", (getter)hostview_get_array, NULL, "The DeviceArray this view exports.", NULL},
    {"writable", (getter)hostview_get_writable, NULL, "Whether exported buffers are writable.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject pgpy_hostview_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "polygpu.HostView",
    .tp_basicsize = sizeof(pgpy_hostview),
    .tp_dealloc = (destructor)hostview_dealloc,
    .tp_repr = (reprfunc)hostview_repr,
    .tp_as_buffer = &hostview_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)hostview_traverse,
    .tp_doc = "The buffer protocol of a DeviceArray with a fixed writability, made by\n"
              "DeviceArray.host_view(writable). Each buffer taken from it (np.asarray(v),\n"
              "memoryview(v)) maps the array for as long as it lives; writable ones make the\n"
              "host copy the only valid one, so kernels launched later see what was written.",
    .tp_getset = hostview_getset,
};

PyObject *pgpy_hostview_new(pgpy_array *a, int writable) {
    pgpy_hostview *v = PyObject_GC_New(pgpy_hostview, &pgpy_hostview_type);
    if (!v)
        return NULL;
    v->a = a;
    Py_INCREF(a);
    v->writable = writable;
    PyObject_GC_Track(v);
    return (PyObject *)v;
}

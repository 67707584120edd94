/* runtime.c: the Runtime type — options, arrays and kernels, sync, counters, devices, DAG. */
#include "pgpy.h"

#include <string.h>

static pgpy_runtime *live(PyObject *self) {
    return (pgpy_runtime *)self;
}

/* Options whose value is a path: True or False there would name a file "on" or "off". */
static int is_path_option(const char *k) {
    static const char *const paths[] = {"trace", "profile", "cache_dir", "interconnect"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if (!strcmp(k, paths[i]))
            return 1;
    return 0;
}

/* One keyword value as the string pg_options_set parses; a new reference, or NULL. A bool is
 * "on" or "off", which every on/off option takes (models as well as prefetch), as do check
 * and ranks for False. */
static PyObject *option_string(PyObject *key, PyObject *value) {
    if (PyBool_Check(value)) {
        const char *k = PyUnicode_AsUTF8(key);
        if (!k)
            return NULL;
        if (is_path_option(k))
            return pgpy_argument_error("option %U takes a path, got %R", key, value);
        return PyUnicode_FromString(value == Py_True ? "on" : "off");
    }
    if (PyUnicode_Check(value)) {
        Py_INCREF(value);
        return value;
    }
    if (PyLong_Check(value) || PyFloat_Check(value))
        return PyObject_Str(value);
    PyObject *path = PyOS_FSPath(value); /* cache_dir, trace, interconnect may be paths */
    if (path && PyUnicode_Check(path))
        return path;
    Py_XDECREF(path);
    PyErr_Clear();
    return pgpy_argument_error("option %U: expected a string, number or bool, got %R", key, value);
}

static int runtime_init(PyObject *self, PyObject *args, PyObject *kwargs) {
    pgpy_runtime *rt = live(self);
    if (rt->h) {
        PyErr_SetString(pgpy_errors[PG_ERROR_STATE], "Runtime.__init__ called twice");
        return -1;
    }
    if (PyTuple_GET_SIZE(args)) {
        pgpy_argument_error("Runtime() takes options as keywords only, e.g. "
                            "Runtime(devices='host:4', policy='round-robin')");
        return -1;
    }
    pg_options o;
    pg_options_init(&o);
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (kwargs && PyDict_Next(kwargs, &pos, &key, &value)) {
        if (value == Py_None)
            continue; /* the default, or the PG_<NAME> variable */
        PyObject *s = option_string(key, value);
        if (!s)
            return -1;
        const char *k = pgpy_cstr(key, "option name", NULL);
        const char *v = k ? pgpy_cstr(s, "option", key) : NULL;
        pg_status st = k && v ? pg_options_set(&o, k, v) : PG_OK; /* copies v */
        Py_DECREF(s);
        if (!k || !v)
            return -1;
        if (st != PG_OK) {
            pgpy_raise(st);
            return -1;
        }
    }
    pg_runtime *h = NULL;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_runtime_new(&o, &h);
    Py_END_ALLOW_THREADS
    if (st != PG_OK) {
        pgpy_raise(st);
        return -1;
    }
    rt->h = h;
    rt->closed = 0;
    return 0;
}

static PyObject *runtime_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    pgpy_runtime *rt = (pgpy_runtime *)type->tp_alloc(type, 0);
    if (rt) {
        rt->h = NULL;
        rt->closed = 1; /* until __init__ succeeds */
        rt->exports = 0;
        rt->weakrefs = NULL;
    }
    return (PyObject *)rt;
}

static void runtime_dealloc(pgpy_runtime *rt) {
    if (rt->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)rt);
    if (!rt->closed && rt->h) {
        /* Nobody can wait for an implicit close (garbage collection, interpreter exit): a kernel
         * that never ends must not hang the interpreter, so it waits a bounded time. */
        pg_runtime *h = rt->h;
        pg_status st;
        uint64_t limit = pgpy_implicit_close_ns();
        Py_BEGIN_ALLOW_THREADS
        st = pg_runtime_free_timeout(h, limit);
        Py_END_ALLOW_THREADS
        if (st == PG_ERROR_TIMEOUT)
            fprintf(stderr, "polygpu: %s\n", pg_last_error());
    }
    Py_TYPE(rt)->tp_free((PyObject *)rt);
}

static int check_open(pgpy_runtime *rt) {
    if (!rt->h) {
        PyErr_SetString(pgpy_errors[PG_ERROR_STATE],
                        "the Runtime was not initialized (Runtime.__init__ failed or was skipped)");
        return -1;
    }
    return 0;
}

/* timeout=None: no limit; else seconds (>= 0). Infinity is no limit too, and so is anything
 * past 1e9 s (31 years; the nanoseconds must fit the core's uint64). */
static int parse_timeout(PyObject *t, uint64_t *ns) {
    *ns = UINT64_MAX;
    if (!t || t == Py_None)
        return 0;
    double s = PyFloat_AsDouble(t);
    if (s == -1.0 && PyErr_Occurred())
        return -1;
    if (!(s >= 0)) {
        pgpy_argument_error("timeout must be None or a number of seconds >= 0 (inf: no limit), "
                            "not %R",
                            t);
        return -1;
    }
    if (s <= 1e9)
        *ns = (uint64_t)(s * 1e9);
    return 0;
}

static PyObject *runtime_close(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"timeout", NULL};
    PyObject *timeout = Py_None;
    uint64_t limit;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:close", kw, &timeout) ||
        parse_timeout(timeout, &limit) < 0)
        return NULL;
    pgpy_runtime *rt = live(self);
    if (rt->closed)
        Py_RETURN_NONE;
    if (rt->exports) {
        /* Freeing would pull the memory from under those views. */
        return PyErr_Format(
            pgpy_errors[PG_ERROR_STATE],
            "cannot close the runtime: %zd buffer view%s of its arrays (memoryview, "
            "NumPy array from np.asarray, DLPack tensor) %s still open or being taken; release "
            "them first",
            rt->exports, rt->exports == 1 ? "" : "s", rt->exports == 1 ? "is" : "are");
    }
    pg_runtime *h = rt->h;
    pg_status st;
    /* Before the GIL goes: no thread may export a view while the core frees the arrays. The
     * core frees everything even when writing the trace fails. */
    rt->closed = 1;
    Py_BEGIN_ALLOW_THREADS
    st = pg_runtime_free_timeout(h, limit);
    Py_END_ALLOW_THREADS
    if (st != PG_OK)
        return pgpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *runtime_sync(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"timeout", NULL};
    PyObject *timeout = Py_None;
    uint64_t limit;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:sync", kw, &timeout) ||
        parse_timeout(timeout, &limit) < 0)
        return NULL;
    pgpy_runtime *rt = live(self);
    if (check_open(rt) < 0)
        return NULL;
    pg_runtime *h = rt->h;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = limit == UINT64_MAX ? pg_runtime_sync(h) : pg_runtime_sync_timeout(h, limit);
    Py_END_ALLOW_THREADS
    if (st != PG_OK)
        return pgpy_raise(st);
    Py_RETURN_NONE;
}

/* owner: None (rank 0) or a rank. */
static PyObject *new_array(pgpy_runtime *rt, pg_dtype t, int ndim, const int64_t *shape,
                           PyObject *owner) {
    long r = 0;
    if (owner != Py_None) {
        r = PyIndex_Check(owner) && !PyBool_Check(owner) ? PyLong_AsLong(owner) : -2;
        if (r == -1 && PyErr_Occurred())
            return NULL;
        if (r < INT32_MIN || r > INT32_MAX || r == -2)
            return pgpy_argument_error("owner must be a rank (an int) or None, not %R", owner);
    }
    pg_runtime *h = rt->h;
    pg_array *a = NULL;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_array_new(h, t, ndim, shape, &a);
    Py_END_ALLOW_THREADS
    if (st != PG_OK)
        return pgpy_raise(st);
    if (r != 0 && (st = pg_array_owner_set(a, (int)r)) != PG_OK) {
        PyObject *err = pgpy_raise(st); /* the message, before the free clears it */
        pg_array_free(a);
        return err;
    }
    return pgpy_array_wrap(rt, a);
}

static PyObject *runtime_array(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"dtype", "shape", "owner", NULL};
    PyObject *dtype, *shape, *owner = Py_None;
    pgpy_runtime *rt = live(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$O:array", kw, &dtype, &shape, &owner))
        return NULL;
    if (check_open(rt) < 0)
        return NULL;
    pg_dtype t;
    int ndim;
    int64_t dims[PG_MAX_DIMS];
    if (pgpy_dtype_from_object(dtype, &t) < 0 || pgpy_parse_shape(shape, &ndim, dims) < 0)
        return NULL;
    return new_array(rt, t, ndim, dims, owner);
}

static PyObject *runtime_asarray(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"obj", "dtype", "owner", NULL};
    PyObject *obj, *dtype = Py_None, *owner = Py_None;
    pgpy_runtime *rt = live(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O$O:asarray", kw, &obj, &dtype, &owner))
        return NULL;
    if (check_open(rt) < 0)
        return NULL;
    PyObject *gpu = NULL;
    int rc = pgpy_asarray_cuda(rt, obj, dtype, &gpu); /* CuPy, PyTorch...: device to device */
    if (rc != 0)
        return rc > 0 ? gpu : NULL;
    pg_dtype t;
    int ndim;
    int64_t dims[PG_MAX_DIMS];
    if (pgpy_infer_layout(obj, dtype, &t, &ndim, dims) < 0)
        return NULL;
    PyObject *a = new_array(rt, t, ndim, dims, owner); /* owned first: the owner's data counts */
    if (a && pgpy_array_write_all((pgpy_array *)a, obj) < 0)
        Py_CLEAR(a);
    return a;
}

static PyObject *runtime_kernel(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"source", "name", "signature", "options", "split", "where", NULL};
    const char *source, *name, *signature = NULL, *split = NULL, *where = NULL;
    PyObject *options = Py_None;
    pgpy_runtime *rt = live(self);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ss|zO$zz:kernel", kw, &source, &name,
                                     &signature, &options, &split, &where))
        return NULL;
    if (check_open(rt) < 0)
        return NULL;
    PyObject *opt = NULL;
    if (PyUnicode_Check(options)) {
        opt = options;
        Py_INCREF(opt);
    } else if (options != Py_None) {
        PyObject *sep = PyUnicode_FromString(" ");
        opt = sep ? PyUnicode_Join(sep, options) : NULL;
        Py_XDECREF(sep);
        if (!opt) {
            PyErr_Clear();
            return pgpy_argument_error("options must be a string or a sequence of strings, got %R",
                                       options);
        }
    }
    const char *o = opt ? pgpy_cstr(opt, "kernel options", NULL) : NULL;
    if (opt && !o) {
        Py_DECREF(opt);
        return NULL;
    }
    PyObject *pyname = PyUnicode_FromString(name);
    if (!pyname) {
        Py_XDECREF(opt);
        return NULL;
    }
    pg_runtime *h = rt->h;
    pg_kernel *k = NULL;
    pg_status st;
    /* Compiles (or loads from the cache): may take seconds. */
    Py_BEGIN_ALLOW_THREADS
    st = pg_kernel_new_where(h, source, name, signature, o, where, &k);
    Py_END_ALLOW_THREADS
    Py_XDECREF(opt);
    if (st == PG_OK && split && (st = pg_kernel_split(k, split)) != PG_OK) {
        pgpy_raise(st); /* the kernel goes: the caller gets only the error */
        pg_kernel_free(k);
        Py_DECREF(pyname);
        return NULL;
    }
    PyObject *r = st == PG_OK ? pgpy_kernel_wrap(rt, k, pyname) : pgpy_raise(st);
    Py_DECREF(pyname);
    return r;
}

/* rt._task(name): a built-in task (pg_task_builtin: "gemm_f32", "dot_f64", ...) as a Kernel;
 * launched like one (grid and block are ignored). polygpu.linalg wraps it. */
static PyObject *runtime_task(PyObject *self, PyObject *arg) {
    pgpy_runtime *rt = live(self);
    const char *name = PyUnicode_Check(arg) ? pgpy_cstr(arg, "task name", NULL) : NULL;
    if (!name) {
        if (!PyErr_Occurred())
            pgpy_argument_error("_task(name): name must be a str, got %R", arg);
        return NULL;
    }
    if (check_open(rt) < 0)
        return NULL;
    pg_kernel *k = NULL;
    pg_status st;
    pg_runtime *h = rt->h;
    Py_BEGIN_ALLOW_THREADS
    st = pg_task_builtin(h, name, &k);
    Py_END_ALLOW_THREADS
    return st == PG_OK ? pgpy_kernel_wrap(rt, k, arg) : pgpy_raise(st);
}

/* rt._gemm(a, b, c, alpha, beta, trans_a, trans_b, devices, tile, metric): the tiled GEMM
 * (pg_linalg_gemm); devices a bit mask (0: all), tile 0 for the model's, metric 0 perf, 1 edp.
 * Returns the report as a dict. polygpu.linalg.gemm wraps it. */
static PyObject *runtime_gemm(PyObject *self, PyObject *args) {
    pgpy_runtime *rt = live(self);
    PyObject *arr[3];
    double alpha, beta;
    int ta, tb, metric;
    unsigned int devices;
    long long tile;
    if (!rt || !PyArg_ParseTuple(args, "O!O!O!ddppILi:_gemm", &pgpy_array_type, &arr[0],
                                 &pgpy_array_type, &arr[1], &pgpy_array_type, &arr[2], &alpha,
                                 &beta, &ta, &tb, &devices, &tile, &metric))
        return NULL;
    if (check_open(rt) < 0)
        return NULL;
    pg_gemm_options o;
    pg_gemm_options_init(&o);
    o.alpha = alpha;
    o.beta = beta;
    o.trans_a = ta;
    o.trans_b = tb;
    o.devices = devices;
    o.tile = tile;
    o.metric = (pg_gemm_metric)metric;
    pg_gemm_report r;
    pg_status st;
    pg_runtime *h = rt->h;
    pg_array *a = ((pgpy_array *)arr[0])->h, *b = ((pgpy_array *)arr[1])->h,
             *c = ((pgpy_array *)arr[2])->h;
    Py_BEGIN_ALLOW_THREADS
    st = pg_linalg_gemm(h, a, b, c, &o, &r);
    Py_END_ALLOW_THREADS
    if (st != PG_OK)
        return pgpy_raise(st);
    PyObject *devs = PyList_New(0), *rows = PyList_New(0), *rates = PyList_New(0);
    for (int d = 0; devs && rows && rates && d < PG_MAX_DEVICES; d++) {
        if (!(r.devices >> d & 1))
            continue;
        PyObject *i = PyLong_FromLong(d), *n = PyLong_FromLongLong(r.rows[d]),
                 *g = PyFloat_FromDouble(r.gflops[d]);
        int bad = !i || !n || !g || PyList_Append(devs, i) || PyList_Append(rows, n) ||
                  PyList_Append(rates, g);
        Py_XDECREF(i);
        Py_XDECREF(n);
        Py_XDECREF(g);
        if (bad) {
            Py_CLEAR(devs);
            break;
        }
    }
    PyObject *out = NULL;
    if (devs && rows && rates) {
        PyObject *j = r.predicted_j < 0 ? Py_None : PyFloat_FromDouble(r.predicted_j);
        if (j == Py_None)
            Py_INCREF(j);
        if (j)
            out = Py_BuildValue("{sOsLsLsOsdsOsOsO}", "devices", devs, "tile", (long long)r.tile,
                                "tiles", (long long)r.tiles, "rows", rows, "predicted_s",
                                r.predicted_s, "predicted_j", j, "gflops", rates, "from_models",
                                r.from_models ? Py_True : Py_False);
        Py_XDECREF(j);
    }
    Py_XDECREF(devs);
    Py_XDECREF(rows);
    Py_XDECREF(rates);
    return out;
}

static PyObject *location_name(int loc) {
    return loc == 0 ? PyUnicode_FromString("host") : PyUnicode_FromFormat("%d", loc - 1);
}

static int set_u64(PyObject *d, const char *k, uint64_t v) {
    PyObject *o = PyLong_FromUnsignedLongLong(v);
    int r = o ? PyDict_SetItemString(d, k, o) : -1;
    Py_XDECREF(o);
    return r;
}

static PyObject *runtime_from_dlpack_cuda(PyObject *self, PyObject *obj) {
    pgpy_runtime *rt = live(self);
    if (check_open(rt) < 0)
        return NULL;
    return pgpy_from_dlpack_cuda(rt, obj);
}

static PyObject *runtime_adopt_dlpack(PyObject *self, PyObject *args) {
    PyObject *obj;
    int cuda = 0;
    if (!PyArg_ParseTuple(args, "Op:_adopt_dlpack", &obj, &cuda))
        return NULL;
    pgpy_runtime *rt = live(self);
    if (check_open(rt) < 0)
        return NULL;
    return pgpy_adopt_dlpack(rt, obj, cuda);
}

static PyObject *runtime_clock(PyObject *self, PyObject *unused) {
    (void)unused;
    pgpy_runtime *rt = live(self);
    if (check_open(rt) < 0)
        return NULL;
    uint64_t ns = 0;
    pg_status st = pg_runtime_clock(rt->h, &ns);
    if (st != PG_OK)
        return pgpy_raise(st);
    return PyFloat_FromDouble((double)ns * 1e-9);
}

static PyObject *runtime_stats(PyObject *self, PyObject *unused) {
    pgpy_runtime *rt = live(self);
    if (check_open(rt) < 0)
        return NULL;
    pg_stats s;
    pg_status st = pg_runtime_stats(rt->h, &s);
    if (st != PG_OK)
        return pgpy_raise(st);
    PyObject *d = PyDict_New();
    PyObject *links = PyDict_New();
    if (!d || !links || set_u64(d, "ndevices", (uint64_t)s.ndevices) < 0 ||
        set_u64(d, "computations", s.computations) < 0 || set_u64(d, "kernels", s.kernels) < 0 ||
        set_u64(d, "host_accesses", s.host_accesses) < 0 || set_u64(d, "copies", s.copies) < 0 ||
        set_u64(d, "bytes_moved", s.bytes_moved) < 0 ||
        set_u64(d, "host_wait_ns", s.host_wait_ns) < 0 || set_u64(d, "pending", s.pending) < 0 ||
        set_u64(d, "evictions", s.evictions) < 0 ||
        set_u64(d, "bytes_evicted", s.bytes_evicted) < 0 ||
        set_u64(d, "writebacks", s.writebacks) < 0 ||
        set_u64(d, "copies_elided", s.copies_elided) < 0 ||
        set_u64(d, "bytes_elided", s.bytes_elided) < 0 ||
        set_u64(d, "rank", (uint64_t)s.rank) < 0 || set_u64(d, "nranks", (uint64_t)s.nranks) < 0 ||
        set_u64(d, "rank_messages_sent", s.rank_messages_sent) < 0 ||
        set_u64(d, "rank_messages_received", s.rank_messages_received) < 0 ||
        set_u64(d, "rank_bytes_sent", s.rank_bytes_sent) < 0 ||
        set_u64(d, "rank_bytes_received", s.rank_bytes_received) < 0 ||
        set_u64(d, "rank_cache_hits", s.rank_cache_hits) < 0)
        goto fail;
    for (int k = 0; k < 2; k++) { /* per device: bytes of buffers held now, and the most */
        PyObject *list = PyList_New(s.ndevices);
        for (int i = 0; list && i < s.ndevices; i++) {
            PyObject *v =
                PyLong_FromUnsignedLongLong(k ? s.device_bytes_peak[i] : s.device_bytes[i]);
            if (!v)
                Py_CLEAR(list);
            else
                PyList_SET_ITEM(list, i, v);
        }
        int r = list ? PyDict_SetItemString(d, k ? "device_bytes_peak" : "device_bytes", list) : -1;
        Py_XDECREF(list);
        if (r < 0)
            goto fail;
    }
    for (int src = 0; src <= s.ndevices && src <= PG_MAX_DEVICES; src++)
        for (int dst = 0; dst <= s.ndevices && dst <= PG_MAX_DEVICES; dst++) {
            if (src == dst)
                continue;
            PyObject *key = Py_BuildValue("(NN)", location_name(src), location_name(dst));
            PyObject *v = PyLong_FromUnsignedLongLong(s.link_bytes[src][dst]);
            int r = key && v ? PyDict_SetItem(links, key, v) : -1;
            Py_XDECREF(key);
            Py_XDECREF(v);
            if (r < 0)
                goto fail;
        }
    if (PyDict_SetItemString(d, "link_bytes", links) < 0)
        goto fail;
    /* per device: joules since the start and watts under load, None where unknown */
    for (int k = 0; k < 2; k++) {
        PyObject *list = PyList_New(s.ndevices);
        for (int i = 0; list && i < s.ndevices; i++) {
            double v = k ? s.power_watts[i] : s.energy_joules[i];
            int known = k ? v > 0 : v >= 0;
            PyObject *o = known ? PyFloat_FromDouble(v) : (Py_INCREF(Py_None), Py_None);
            if (!o)
                Py_CLEAR(list);
            else
                PyList_SET_ITEM(list, i, o);
        }
        int r = list ? PyDict_SetItemString(d, k ? "power_watts" : "energy_joules", list) : -1;
        Py_XDECREF(list);
        if (r < 0)
            goto fail;
    }
    Py_DECREF(links);
    return d;
fail:
    Py_XDECREF(d);
    Py_XDECREF(links);
    return NULL;
}

/* A list of n doubles as floats (None where `unknown` is 0 or less, when asked). */
static PyObject *float_list(const double *v, int n, int none_if_zero) {
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        PyObject *o =
            none_if_zero && !(v[i] > 0) ? (Py_INCREF(Py_None), Py_None) : PyFloat_FromDouble(v[i]);
        if (!o)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, o);
    }
    return list;
}

static PyObject *runtime_power_choice(PyObject *self, PyObject *unused) {
    (void)unused;
    pgpy_runtime *rt = live(self);
    if (check_open(rt) < 0)
        return NULL;
    pg_power_choice c;
    pg_status st = pg_runtime_power_choice(rt->h, &c);
    if (st != PG_OK)
        return pgpy_raise(st);
    PyObject *chosen = PyList_New(c.nchosen);
    for (int i = 0; chosen && i < c.nchosen; i++) {
        PyObject *o = PyLong_FromLong(c.chosen[i]);
        if (!o)
            Py_CLEAR(chosen);
        else
            PyList_SET_ITEM(chosen, i, o);
    }
    PyObject *limit =
        c.limit_watts > 0 ? PyFloat_FromDouble(c.limit_watts) : (Py_INCREF(Py_None), Py_None);
    PyObject *watts = float_list(c.watts, c.ndevices, 1);
    PyObject *perf = float_list(c.performance, c.ndevices, 0);
    if (!chosen || !limit || !watts || !perf) {
        Py_XDECREF(chosen);
        Py_XDECREF(limit);
        Py_XDECREF(watts);
        Py_XDECREF(perf);
        return NULL;
    }
    return Py_BuildValue("{s:N,s:N,s:d,s:s,s:N,s:N}", "devices", chosen, "limit_watts", limit,
                         "used_watts", c.used_watts, "performance_from",
                         c.from_models ? "models" : "nominal", "watts", watts, "performance", perf);
}

static PyObject *runtime_devices(PyObject *self, void *closure) {
    pgpy_runtime *rt = live(self);
    if (check_open(rt) < 0)
        return NULL;
    pg_device_info info[PG_MAX_DEVICES];
    int n = 0;
    pg_status st = pg_runtime_devices(rt->h, info, PG_MAX_DEVICES, &n);
    if (st != PG_OK)
        return pgpy_raise(st);
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < n && i < PG_MAX_DEVICES; i++) {
        int cuda = info[i].device_class == PG_CLASS_GPU; /* what the registry says */
        PyObject *cc = cuda ? Py_BuildValue("(ii)", info[i].compute_major, info[i].compute_minor)
                            : (Py_INCREF(Py_None), Py_None);
        const pg_device_info *f = &info[i];
        PyObject *d =
            cc ? Py_BuildValue("{s:i,s:s,s:s,s:s,s:s,s:K,s:N,s:i,s:I,s:(III),s:(III),s:K}", "id",
                               f->id, "kind", cuda ? "cuda" : "cpu", "class", cuda ? "gpu" : "cpu",
                               "backend", f->backend, "name", f->name, "memory_bytes",
                               (unsigned long long)f->memory_bytes, "compute_capability", cc,
                               "multiprocessors", f->multiprocessors, "max_threads_per_block",
                               (unsigned)f->max_threads_per_block, "max_block",
                               (unsigned)f->max_block.x, (unsigned)f->max_block.y,
                               (unsigned)f->max_block.z, "max_grid", (unsigned)f->max_grid.x,
                               (unsigned)f->max_grid.y, (unsigned)f->max_grid.z,
                               "max_shared_memory_per_block",
                               (unsigned long long)f->max_shared_memory_per_block)
               : NULL;
        if (!d || PyList_Append(list, d) < 0)
            Py_CLEAR(list);
        Py_XDECREF(d);
    }
    return list;
}

static PyObject *runtime_dag_string(PyObject *self, PyObject *arg) {
    pgpy_runtime *rt = live(self);
    long fmt = PyLong_AsLong(arg);
    if (fmt == -1 && PyErr_Occurred())
        return NULL;
    if (check_open(rt) < 0)
        return NULL;
    char *s = NULL;
    pg_status st = pg_dag_export_string(rt->h, (pg_dag_format)fmt, &s);
    if (st != PG_OK)
        return pgpy_raise(st);
    PyObject *r = PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
    pg_string_free(s);
    return r;
}

static PyObject *runtime_dag(PyObject *self, PyObject *unused) {
    pgpy_runtime *rt = live(self);
    if (check_open(rt) < 0)
        return NULL;
    return pgpy_dag(rt->h);
}

static PyObject *runtime_dag_file(PyObject *self, PyObject *args) {
    pgpy_runtime *rt = live(self);
    int fmt;
    PyObject *path;
    if (!PyArg_ParseTuple(args, "iO&:_export_dag", &fmt, PyUnicode_FSConverter, &path))
        return NULL;
    if (check_open(rt) < 0) {
        Py_DECREF(path);
        return NULL;
    }
    pg_runtime *h = rt->h;
    const char *p = PyBytes_AS_STRING(path);
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_dag_export(h, (pg_dag_format)fmt, p);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st != PG_OK)
        return pgpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *runtime_write_trace(PyObject *self, PyObject *arg) {
    pgpy_runtime *rt = live(self);
    PyObject *path;
    if (!PyUnicode_FSConverter(arg, &path))
        return NULL;
    if (check_open(rt) < 0) {
        Py_DECREF(path);
        return NULL;
    }
    pg_runtime *h = rt->h;
    const char *p = PyBytes_AS_STRING(path);
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_trace_write(h, p);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st != PG_OK)
        return pgpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *runtime_enter(PyObject *self, PyObject *unused) {
    if (check_open(live(self)) < 0)
        return NULL;
    Py_INCREF(self);
    return self;
}

static PyObject *runtime_exit(PyObject *self, PyObject *args) {
    PyObject *none = PyTuple_New(0);
    PyObject *r = none ? runtime_close(self, none, NULL) : NULL;
    Py_XDECREF(none);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *runtime_models(PyObject *self, PyObject *unused) {
    (void)unused;
    pgpy_runtime *rt = live(self);
    if (check_open(rt) < 0)
        return NULL;
    int n = 0;
    pg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pg_runtime_models(rt->h, &n);
    Py_END_ALLOW_THREADS
    if (st != PG_OK)
        return pgpy_raise(st);
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < n; i++) {
        pg_model_info m;
        if ((st = pg_runtime_model(rt->h, i, &m)) != PG_OK) {
            Py_DECREF(list);
            return pgpy_raise(st);
        }
        PyObject *d =
            Py_BuildValue("{s:s,s:s,s:K,s:K,s:i}", "kernel", m.kernel, "device_class",
                          m.device_class, "bytes", (unsigned long long)m.bytes, "median_ns",
                          (unsigned long long)m.median_ns, "samples", m.samples);
        if (!d || PyList_Append(list, d) < 0)
            Py_CLEAR(list);
        Py_XDECREF(d);
    }
    return list;
}

static PyObject *get_closed(PyObject *self, void *closure) {
    return PyBool_FromLong(live(self)->closed);
}

/* rt.rank, rt.nranks: this process's rank and how many (0 and 1 single-process). */
static PyObject *get_ranks(PyObject *self, void *which) {
    pgpy_runtime *rt = live(self);
    if (check_open(rt) < 0)
        return NULL;
    int rank = 0, nranks = 1;
    pg_status st = pg_runtime_ranks(rt->h, &rank, &nranks);
    if (st != PG_OK)
        return pgpy_raise(st);
    return PyLong_FromLong(which ? nranks : rank);
}

static PyMethodDef runtime_methods[] = {
    {"close", (PyCFunction)(void (*)(void))runtime_close, METH_VARARGS | METH_KEYWORDS,
     "close(timeout=None)\n--\n\nWait for all work, write the trace if one was asked for, and "
     "free every array and\nkernel of this runtime (later use of them raises StateError). "
     "Closing twice is a\nno-op. Raises StateError while buffer views of its arrays are open.\n"
     "timeout: at most this many seconds of waiting; if work is still running then (a kernel\n"
     "that never ends), the runtime is closed all the same, its devices are abandoned, and\n"
     "TimeoutError names what was left running (None or float('inf'): no limit). Ctrl-C\n"
     "interrupts the wait the same way.\n"
     "A runtime closed implicitly (garbage, interpreter exit) waits at most PG_CLOSE_TIMEOUT\n"
     "seconds (default 10)."},
    {"sync", (PyCFunction)(void (*)(void))runtime_sync, METH_VARARGS | METH_KEYWORDS,
     "sync(timeout=None)\n--\n\nBlock until every computation submitted so far has finished. "
     "Other Python threads\nrun meanwhile; Ctrl-C interrupts the wait (KeyboardInterrupt, the "
     "work goes on).\ntimeout: at most this many seconds, then TimeoutError (the work goes "
     "on);\nNone or "
     "float('inf'): no limit."},
    {"array", (PyCFunction)(void (*)(void))runtime_array, METH_VARARGS | METH_KEYWORDS,
     "array(dtype, shape, *, owner=None)\n--\n\nA new zero-filled DeviceArray. dtype: "
     "'int8'..'int64', 'uint8'..'uint64', 'float32',\n'float64', a NumPy dtype, int or float. "
     "shape: an int or a tuple of 1 to 4 ints.\nowner: the rank owning it with several ranks "
     "(option ranks; default 0)."},
    {"_from_dlpack_cuda", (PyCFunction)runtime_from_dlpack_cuda, METH_O,
     "_from_dlpack_cuda(obj, /)\n--\n\nA new DeviceArray copying obj, a CUDA DLPack producer, "
     "device to device\n(from_dlpack uses it for producers without __cuda_array_interface__)."},
    {"_adopt_dlpack", runtime_adopt_dlpack, METH_VARARGS,
     "_adopt_dlpack(obj, cuda, /)\n--\n\nA new DeviceArray whose value is obj's memory, a DLPack "
     "producer\n(zero-copy: from_dlpack uses it), or BufferError where that cannot be."},
    {"asarray", (PyCFunction)(void (*)(void))runtime_asarray, METH_VARARGS | METH_KEYWORDS,
     "asarray(obj, dtype=None, *, owner=None)\n--\n\nA new DeviceArray holding a copy of obj: "
     "any object with "
     "the buffer protocol\n(NumPy array, array.array, memoryview; dtype and shape from it), "
     "another DeviceArray,\nor nested sequences of numbers (int64 if all are integers, else "
     "float64). dtype=\nconverts. owner: the rank owning it (several ranks), set before the data "
     "is\nwritten, so the owner's data is the value."},
    {"kernel", (PyCFunction)(void (*)(void))runtime_kernel, METH_VARARGS | METH_KEYWORDS,
     "kernel(source, name, signature=None, options=None, *, split=None, where=None)\n--\n\n"
     "Compile the "
     "__global__ function "
     "`name` of the CUDA source (cached on disk). The\nsignature is inferred from the source "
     "(const T* is 'in', T* 'inout', scalars by\nvalue) unless given, e.g. 'out float *y, in "
     "const float *x, int n'. options: compiler\noptions as a string or a list of strings "
     "('-O3 -DN=4'). split: 'auto', 'on', 'off' or None (the runtime's option split):\none "
     "launch over every device, each on a range of the blocks, for kernels whose\nsignature "
     "says what each block writes, e.g. 'out(chunks=blocks) float *y, in(chunks=blocks)\nconst "
     "float *x, int n'. where: 'any' (None), 'gpu' or 'cpu': the class of device it may\nrun on, "
     "in a runtime of both (devices='cuda,host:2'); a class the runtime lacks\nraises "
     "ArgumentError naming its devices. Raises CompileError (with .log),\nNotFoundError when "
     "`name` is not in the source, ArgumentError for a bad signature."},
    {"_gemm", runtime_gemm, METH_VARARGS,
     "_gemm(a, b, c, alpha, beta, trans_a, trans_b, devices, tile, metric) -> dict: the tiled "
     "GEMM (pg_linalg_gemm); see polygpu.linalg.gemm."},
    {"_task", runtime_task, METH_O,
     "A built-in task (gemm_f32, gemm_f64, axpy_f32, axpy_f64, dot_f32, dot_f64) as a Kernel; "
     "see polygpu.linalg."},
    {"clock", runtime_clock, METH_NOARGS,
     "clock()\n--\n\nSeconds since the runtime was created: real time, or on simulated devices "
     "(devices=\"sim:...\")\nthe simulated machine's virtual time, so a script timing itself "
     "between two readings\n(after a sync or a host read) measures what that machine would "
     "take."},
    {"stats", runtime_stats, METH_NOARGS,
     "stats()\n--\n\nCounters as a dict: ndevices, computations, kernels, host_accesses, "
     "copies,\nbytes_moved, host_wait_ns, pending, evictions, bytes_evicted, writebacks,\n"
     "copies_elided and bytes_elided (elide_copies: non-zero means the values are wrong),\n"
     "device_bytes and device_bytes_peak (lists, per device), link_bytes, a dict\n"
     "{(src, dst): bytes} over locations 'host', '0', '1', ..., and per device\n"
     "energy_joules (since the runtime started: NVML's counter on GPUs, power_watts x busy\n"
     "time on CPU devices) and power_watts (drawn under load), None where unknown."},
    {"power_choice", runtime_power_choice, METH_NOARGS,
     "power_choice()\n--\n\nThe devices the power budget (option power_limit) lets the "
     "runtime use, chosen\nwhen it was created by Czarnul's greedy rule (the best performance "
     "per watt that\nstill fits, again and again), as a dict: devices (the chosen ids, in the "
     "order\ntaken), limit_watts (None: no budget, every device), used_watts, "
     "performance_from\n('models' or 'nominal': SMs x clock, CPU workers), and per device "
     "watts (None:\nunknown) and performance."},
    {"models", runtime_models, METH_NOARGS,
     "models()\n--\n\nThe performance models (option models=\"on\", on by default with\n"
     "policy=\"min-finish-time\") as dicts: kernel, device_class (the device's name),\n"
     "bytes (the size bucket: bytes of the array arguments rounded down to a power of\n"
     "two), median_ns and samples (kept: the last 32; the first of each bucket in a\n"
     "process and spikes over 10x the median are dropped). Loaded from and saved to\n"
     "<cache_dir>/models/. Empty when models are off."},
    {"write_trace", runtime_write_trace, METH_O,
     "write_trace(path)\n--\n\nWrite a Chrome-trace JSON timeline (open it in Perfetto): one "
     "track per device\nstream."},
    {"record", pgpy_runtime_record, METH_NOARGS,
     "record() -> Graph: 'with rt.record() as g:' records the block's kernel calls (nothing "
     "runs); g() replays them, each replay equal to making the same calls then. See "
     "polygpu.Graph."},
    {"_dag", runtime_dag, METH_NOARGS, "The DAG as a dict (see polygpu.Runtime.dag)."},
    {"_dag_string", runtime_dag_string, METH_O, "The DAG as text (0: DOT, 1: JSON)."},
    {"_export_dag", runtime_dag_file, METH_VARARGS,
     "_export_dag(format, path): the DAG to a file."},
    {"__enter__", runtime_enter, METH_NOARGS, "Return the runtime."},
    {"__exit__", runtime_exit, METH_VARARGS, "close() the runtime."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef runtime_getset[] = {
    {"devices", runtime_devices, NULL,
     "The devices as dicts: id, kind ('cpu' or 'cuda'), name, memory_bytes,\n"
     "compute_capability ((major, minor), None on CPU devices), multiprocessors,\n"
     "and the launch limits: max_threads_per_block, max_block and max_grid ((x, y, z))\n"
     "and max_shared_memory_per_block (bytes). A launch goes only to devices whose limits\n"
     "it fits; CPU devices allow 8192 threads per block in any shape and 64 MiB.",
     NULL},
    {"closed", get_closed, NULL, "True once close() ran.", NULL},
    {"rank", get_ranks, NULL,
     "This process's rank (0 single-process): under mpirun every rank runs the same script\n"
     "(option ranks).",
     NULL},
    {"nranks", get_ranks, NULL, "The number of ranks (1 single-process).", (void *)1},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject pgpy_runtime_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "polygpu._polygpu.Runtime",
    .tp_basicsize = sizeof(pgpy_runtime),
    .tp_dealloc = (destructor)runtime_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C runtime; polygpu.Runtime adds the DAG helpers.",
    .tp_weaklistoffset = offsetof(pgpy_runtime, weakrefs),
    .tp_methods = runtime_methods,
    .tp_getset = runtime_getset,
    .tp_init = runtime_init,
    .tp_new = runtime_new,
};

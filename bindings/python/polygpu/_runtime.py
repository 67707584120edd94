"""The Runtime class: the C runtime plus the DAG helpers and documentation."""

import os
import sys
import traceback

from . import _polygpu
from ._display import DAG, Timeline

#: The built-in device policies (Runtime(policy=...)).
POLICIES = ("round-robin", "stream-aware", "min-transfer-size", "minmax-transfer-time",
            "min-transfer-time", "min-finish-time", "earliest-finish")

_DAG_FORMATS = {"dot": _polygpu.DAG_DOT, "gv": _polygpu.DAG_DOT, "json": _polygpu.DAG_JSON}


def _has_buffer(obj):
    try:
        memoryview(obj).release()
        return True
    except TypeError:
        return False


class Runtime(_polygpu.Runtime):
    """A polygpu runtime: a set of devices, the scheduler, and the arrays and kernels on them.

    ``Runtime(**options)`` takes the options of the C ``pg_options`` as keywords; an option
    left out (or None) comes from the ``PG_<NAME>`` environment variable, else its default:

    * ``devices``: ``"auto"`` (every GPU, else one CPU device), ``"cuda"``, ``"cuda:0,2"``,
      ``"host:4"`` (four CPU devices with separate memories).
    * ``policy``: the device policy, one of :data:`POLICIES` (default
      ``"earliest-finish"``) or a name registered from C.
    * ``stream_policy``: ``"fifo"`` (default) or ``"always-new"``.
    * ``parent_stream_policy``: ``"same-as-parent"``, ``"disjoint"``,
      ``"multigpu-disjoint"`` (default) or ``"multigpu-early-disjoint"``.
    * ``execution``: ``"async"`` (default) or ``"sync"`` (each call waits; for debugging).
    * ``prefetch``: True to copy inputs on a separate copy stream.
    * ``interconnect``: path of a bandwidth matrix CSV, or ``"default"`` for uniform default
      bandwidths (by default, GPU links are measured once per set of GPUs and cached).
    * ``exploration_threshold``: float in [0, 1], default 0.1.
    * ``log``: ``"off"``, ``"info"`` or ``"debug"``.
    * ``trace``: path of a Chrome trace written when the runtime is closed.
    * ``cache_dir``: the compiled-kernel cache (default ``~/.cache/polygpu``).
    * ``check``: ``"off"`` (default) or ``"bounds"``: CPU device buffers sit between guard
      pages, so a kernel writing past an array's end raises :class:`DeviceError` ("out of
      bounds") instead of changing another array.
    * ``device_memory_limit``: bytes of device buffers per device, an int or a size such as
      ``"64M"`` / ``"1.5G"`` (default none, 0: none). Past it, least recently used copies are
      evicted; a launch whose own arrays exceed it raises :class:`OutOfMemoryError`.
    * ``elide_copies``: ``True`` for a limit study: every copy between locations is skipped,
      so values are WRONG and only timings mean something (the infinite-bandwidth bound);
      ``stats()["copies_elided"]`` counts them. Default ``PG_ELIDE_COPIES``, else off.
    * ``profile``: path of a kernel timing profile to record: each kernel's measured duration,
      launch shape and argument bytes, appended when the runtime is closed; simulated devices
      (``devices="sim:MACHINE,profile=PATH"``) predict kernel times from it.
    * ``models``: ``"on"`` (or True) to learn performance models (each kernel's and task's median
      duration per device class and size bucket, see :meth:`models`), kept under
      ``cache_dir/models`` across processes; ``"off"``. Default ``PG_MODELS``, else on with
      ``policy="min-finish-time"`` (which places by predicted finish time) and off otherwise.
    * ``chunk_bytes``: for kernels with chunked outputs (a signature such as
      ``"out(chunks=blocks) float *y"``: thread block b writes the b-th run of threads
      elements, so copies of y start chunk by chunk while the kernel runs), the bytes each such
      copy moves, an int or a size such as ``"4M"``; default ``PG_CHUNK_BYTES``, else chosen
      per link from its bandwidth and latency. For measuring (a sweep).
    * ``power_limit``: watts per node the runtime's devices may draw (default none, 0: none).
      The runtime uses only the devices chosen by Czarnul's greedy rule — again and again the
      one with the best performance per watt whose power still fits in what is left — with
      performance from the performance models when they can compare every device, else the
      nominal throughput (GPUs: SMs x clock; CPU devices: worker threads), and power measured
      through NVML on GPUs. :meth:`power_choice` says which; kernels run only there. A budget
      no device fits raises :class:`ArgumentError` naming the smallest device power.
    * ``power_watts``: watts each device draws, for tests and for machines without NVML:
      ``"120"`` (every device) or ``"0:120,1:80"`` (per device). Used where NVML gives no
      figure; such a device's energy in :meth:`stats` is these watts x its busy time.
    * ``ranks``: ``"auto"`` (default: the ranks of an MPI job when started by ``mpirun`` with
      more than one, else single-process), ``"mpi"`` (required) or ``"off"``. With ranks every
      rank runs the same script; each array has an owner rank (``owner=`` at creation,
      :attr:`DeviceArray.owner`; ``split(n)`` spreads the views over the ranks in blocks), a
      kernel runs on the rank owning what it writes, values move between ranks as needed, a
      host read returns the current value on every rank, and a host write counts on the
      owner (every rank runs it; the others' data is not used). :attr:`rank`,
      :attr:`nranks`; ``stats()["rank_messages_sent"]`` and the like count the messages.
    * ``share``: ``"node"`` (default; ``PG_SHARE``) shares this machine's devices with the
      user's other polygpu processes: placement sees their work in flight, and a call whose
      arrays do not fit beside their memory waits for it (:func:`polygpu.node_status`);
      ``"off"`` schedules alone.

    The on/off options (``prefetch``, ``elide_copies``, ``models``) take True and False as
    well as ``"on"``/``"off"``; a path option refuses a bool, and a str with a NUL character in
    it raises ValueError (C would cut it short). Bad values raise :class:`ArgumentError` (or :class:`NotFoundError` for an unknown policy,
    :class:`DeviceError` when the devices are missing). A runtime is a context manager:
    leaving the ``with`` block waits for all work and frees it (:meth:`close`).

    Methods: :meth:`array`, :meth:`asarray`, :meth:`from_dlpack`, :meth:`kernel`,
    :meth:`record` (kernel calls recorded once and replayed: :class:`polygpu.Graph`),
    :meth:`sync`, :meth:`stats` (counters, energy per device), :meth:`power_choice`,
    :meth:`models`, :meth:`dag` (shown as a graph in Jupyter), :meth:`timeline`
    (``.plot()`` draws it), :meth:`dag_dot`, :meth:`export_dag`, :meth:`write_trace`,
    :meth:`close`; attributes :attr:`devices`, :attr:`closed`.
    """

    def asarray(self, obj, dtype=None, *, owner=None):
        """A new :class:`DeviceArray` holding a copy of ``obj``: any object with the buffer
        protocol (NumPy array, array.array, memoryview; dtype and shape from it), a CUDA array
        (``__cuda_array_interface__``: CuPy, PyTorch, Numba; copied on the GPU), any other
        DLPack producer (JAX, PyTorch CPU tensors: see :meth:`from_dlpack`), another
        DeviceArray, or nested sequences of numbers (int64 if all are integers, else float64).
        ``dtype`` converts (host data only; into an integer dtype only integral values in
        range, never truncated). ``owner``: the rank owning it (option ``ranks``;
        default 0), set before the data is written, so the owner's data is the value."""
        if (hasattr(obj, "__dlpack_device__") and not hasattr(obj, "__cuda_array_interface__")
                and not isinstance(obj, _polygpu.DeviceArray) and not _has_buffer(obj)):
            if owner is not None:
                raise _polygpu.ArgumentError("asarray: owner= is for host data; set .owner on "
                                             "the array from_dlpack returns")
            return self.from_dlpack(obj, dtype)
        return super().asarray(obj, dtype, owner=owner)

    def from_dlpack(self, obj, dtype=None, copy=None):
        """A new :class:`DeviceArray` from ``obj``, any DLPack producer (NumPy, PyTorch, CuPy,
        JAX, another polygpu array), as the array API's ``from_dlpack``: by default it **shares
        obj's memory** (zero-copy) — the runtime adopts the producer's buffer as its copy on
        that GPU (a CUDA tensor) or on the host (a CPU producer), ordered after the producer's
        work on CUDA's legacy default stream (DLPack's stream rule), and kernels read and write
        it in place. Writes made elsewhere (another device, the host) are copied back into it
        at :meth:`sync`, at ``free()`` of the array and at :meth:`close`: after a sync the
        producer sees every write. The producer's tensor is kept alive until the array and
        its work are gone.

        ``copy=True`` always copies (the array then owns its memory; the producer is not
        written); ``copy=False`` never copies and raises BufferError where sharing cannot be (a
        non-contiguous or read-only tensor, a dtype conversion, several ranks); ``copy=None``
        (default) shares where it can, else copies. ``dtype`` converts, which needs a copy.

        Raises :class:`ArgumentError` for an object that is not a DLPack producer or lives on
        another kind of device, ImportError when a CPU producer must be copied and NumPy is
        missing.
        """
        if copy not in (None, True, False):
            raise TypeError("from_dlpack: copy must be None, True or False, not %r" % (copy,))
        if not hasattr(obj, "__dlpack_device__"):
            raise _polygpu.ArgumentError(
                "from_dlpack: %s is not a DLPack producer (it has no __dlpack_device__)"
                % type(obj).__name__)
        dev = obj.__dlpack_device__()
        if (not isinstance(dev, tuple) or len(dev) != 2
                or not all(isinstance(x, int) for x in dev)):
            raise _polygpu.ArgumentError(
                "from_dlpack: %s.__dlpack_device__() returned %r, not a (device_type, "
                "device_id) tuple of ints" % (type(obj).__name__, dev))
        kind = dev[0]
        if kind not in (1, 2, 3):
            raise _polygpu.ArgumentError(
                "from_dlpack: %s lives on DLPack device type %d; polygpu reads CPU (1) and "
                "CUDA (2) producers" % (type(obj).__name__, kind))
        if copy is not True:
            why = None
            if isinstance(obj, _polygpu.DeviceArray):
                why = "a polygpu array exports a read-only view of its host copy; use the " \
                      "array itself, or a view of it (a[lo:hi])"
            elif dtype is not None and _polygpu.dtype_name(dtype) != _dlpack_dtype_name(obj):
                why = "a conversion to %s needs a copy" % _polygpu.dtype_name(dtype)
            else:
                try:
                    return self._adopt_dlpack(obj, kind == 2)
                except (BufferError, _polygpu.UnsupportedError) as e:
                    why = str(e)
            if copy is False:
                raise BufferError("from_dlpack(copy=False): cannot share %s's memory: %s"
                                  % (type(obj).__name__, why))
        if kind in (1, 3):  # kDLCPU, kDLCUDAHost: host memory
            try:
                import numpy
            except ImportError:
                raise ImportError("from_dlpack: reading a CPU DLPack producer needs NumPy "
                                  "(pip install numpy)") from None
            return self.asarray(numpy.from_dlpack(obj), dtype)
        if hasattr(obj, "__cuda_array_interface__"):
            return self.asarray(obj, dtype)
        a = self._from_dlpack_cuda(obj)  # a CUDA producer that speaks only DLPack (JAX)
        if dtype is not None and a.dtype_name != _polygpu.dtype_name(dtype):
            a.free()
            raise _polygpu.ArgumentError(
                "from_dlpack of a CUDA tensor copies on the GPU and keeps its dtype (%s); "
                "convert it there first" % a.dtype_name)
        return a

    def dag(self):
        """The DAG of the most recent computations as a :class:`polygpu.DAG` (a dict), a
        snapshot taken now.

        ``{"vertices": [{"id", "kind" ("kernel", "host_read", "host_write", "copy"), "name",
        "device" (-1 for the host), "stream", "rank" (the rank that ran it: each rank records
        its own work), "args": [{"array", "access"}], "submit_ns",
        "start_ns", "end_ns"} (copies also "bytes", "src", "dst"; parts of one launch split
        over devices also "part" and "parts"), ...], "edges": [[from_id,
        to_id], ...], "gpu_timeline": "available (...)" or "unavailable (why)", "gpu_spans":
        [{"id" (the vertex, 0: none), "kind" ("kernel", "copy", "memset"), "device",
        "gpu_stream", "start_ns", "end_ns", "api_ns", "bytes", "copy_kind", "name"}, ...]}``,
        oldest vertex first: the same data and schema as the JSON export. The GPU spans are the
        GPU's own timeline (with ``trace=...`` on GPUs, where CUPTI is installed).
        ``args[i]["array"]`` is :attr:`DeviceArray.id`; an edge is an inferred dependency (a
        copy vertex sits between a producer and a consumer on another device).

        ``print(rt.dag())`` lists the vertices and their dependencies; in Jupyter the DAG is
        drawn with Graphviz when its ``dot`` program is installed (see :class:`polygpu.DAG`).
        """
        return DAG(self._dag())

    def timeline(self):
        """What ran where and when, as a :class:`polygpu.Timeline`: a list of
        :class:`polygpu.TimelineEntry` (id, kind, name, device, stream, start, end, submit in
        seconds since the runtime was created, timed, bytes), one per vertex of a DAG
        snapshot taken now, oldest first; ``.plot()`` draws it as a Gantt chart with
        matplotlib, a row per device stream.

        It holds the data :meth:`write_trace` writes as a Chrome trace. Work still running is
        not timed yet (call :meth:`sync` first for a complete timeline); CPU devices time every
        computation, GPUs only when the runtime was made with ``trace=...``.
        """
        names = [d["name"] for d in self.devices]
        return Timeline._from_dag(self._dag(), names)

    def dag_dot(self):
        """The DAG of the most recent computations in Graphviz DOT, as a string."""
        return self._dag_string(_polygpu.DAG_DOT)

    def export_dag(self, path, format=None):
        """Write the DAG to ``path``: ``format`` is ``"dot"`` or ``"json"``, by default taken
        from the file's extension (``.dot``, ``.gv``, ``.json``).

        Render a DOT file with ``dot -Tpng dag.dot -o dag.png``.
        """
        if format is None:
            ext = os.path.splitext(os.fspath(path))[1].lstrip(".").lower()
            if ext not in _DAG_FORMATS:
                raise _polygpu.ArgumentError(
                    "export_dag: cannot tell the format from %r: use a .dot or .json file "
                    "name, or format='dot' / format='json'" % (os.fspath(path),))
            format = ext
        if not isinstance(format, str) or format.lower() not in _DAG_FORMATS:
            raise _polygpu.ArgumentError(
                "export_dag: unknown format %r: expected 'dot' or 'json'" % (format,))
        self._export_dag(_DAG_FORMATS[format.lower()], path)

    def __exit__(self, exc_type, exc, tb):
        # On several ranks an exception leaving the runtime ends every rank (the others would
        # wait for this one): MPI's contract for an uncaught error (ARCHITECTURE.md decision 28).
        if exc_type is not None:
            _rank_failed(exc_type, exc, tb, printed=False)
        return super().__exit__(exc_type, exc, tb)

    def __repr__(self):
        if self.closed:
            return "<polygpu.Runtime closed>"
        names = ", ".join(d["name"] for d in self.devices)
        return "<polygpu.Runtime devices=[%s]>" % names


def _dlpack_dtype_name(obj):
    """The polygpu name of obj's element type (None when unknown), without exporting it."""
    dt = getattr(obj, "dtype", None)
    try:
        return _polygpu.dtype_name(dt) if dt is not None else None
    except Exception:  # a dtype polygpu lacks, or a framework's own dtype object
        name = str(dt).rsplit(".", 1)[-1]
        try:
            return _polygpu.dtype_name(name)
        except Exception:
            return None


def _rank_failed(exc_type, exc, tb, printed):
    """This rank failed with an exception: on several ranks, say so and end every rank (after
    the traceback, unless already printed); single-process, do nothing."""
    if not _polygpu._ranks_active():
        return
    code = 1
    if issubclass(exc_type, SystemExit):
        if exc is None or exc.code in (None, 0):
            return  # a clean exit: the other ranks close too, or learn this one closed
        code = exc.code if isinstance(exc.code, int) else 1
        why = "sys.exit(%r)" % (exc.code,)
    else:
        why = "uncaught %s: %s" % (exc_type.__name__, exc)
    if not printed:
        traceback.print_exception(exc_type, exc, tb)
    sys.stderr.flush()
    _polygpu._ranks_abort(code, why)


def _excepthook(exc_type, exc, tb, _previous=sys.excepthook):
    _previous(exc_type, exc, tb)
    _rank_failed(exc_type, exc, tb, printed=True)


sys.excepthook = _excepthook

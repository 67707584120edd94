"""polygpu: run CUDA kernels written as source strings on every GPU of the machine.

The runtime works out which launch depends on which from the way each kernel uses
its arguments (``const T*`` is read-only, ``T*`` read-write), runs independent
launches at the same time on different streams and devices, moves data only when a
device needs it, and blocks Python only when it reads a result that is not ready.
Without a GPU, ``devices="host:4"`` gives four CPU devices with separate memories
that run the same kernel source.

Example::

    import polygpu as pg
    rt = pg.Runtime(devices="host:4")
    k = rt.kernel('''extern "C" __global__ void square(float *y, const float *x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * x[i]; }''',
        "square")
    x = rt.asarray(range(1000), dtype="float32")
    y = rt.array("float32", 1000)
    k(4, 256)(y, x, 1000)        # returns at once
    print(y[3])                  # 9.0: waits only for the launch that wrote y
    print(rt.dag())              # the inferred DAG, with each launch's device and stream

Main names:

* :class:`Runtime` -- devices, policies and options; makes arrays and kernels.
* :class:`DeviceArray` -- an array kept coherent across host and devices; indexing,
  ``to_numpy()``, ``copy_from()``, the buffer protocol (``memoryview(a)``, ``np.asarray(a)``:
  read-only views; ``np.asarray(a.host_view(True))``: a writable one), ``prefetch()`` (start
  the copy of a result to the host, or to a device, without waiting).
* :class:`Kernel` -- ``k(grid, block, shared_mem=0)(*args)`` submits a launch.
* :class:`DAG` -- ``rt.dag()``, the dependency graph as data (a dict) that prints as a table
  and shows as a Graphviz drawing in Jupyter; :class:`Timeline` -- ``rt.timeline()``, a list
  of :class:`TimelineEntry` (what ran on which device stream, when) with ``.plot()``
  (matplotlib).
* :func:`array`, :func:`asarray`, :func:`kernel`, :func:`sync` -- the same on a default
  runtime created on first use from the ``PG_*`` environment variables.
* Exceptions: :class:`Error` and its subclasses :class:`ArgumentError` (a TypeError),
  :class:`StateError`, :class:`CompileError` (``.log``), :class:`DeviceError`,
  :class:`OutOfMemoryError` (a MemoryError), :class:`NotFoundError` (a LookupError),
  :class:`UnsupportedError`, :class:`FileError` (an OSError), :class:`InternalError`, :class:`TimeoutError`
  (also the builtin TimeoutError), :class:`InterruptedError`.

NumPy is optional: without it, selections read as nested lists, ``dtype`` is a string and
``to_numpy()`` raises ImportError.
"""

try:
    from . import _polygpu
except ImportError as _e:
    # This folder has no compiled extension: it is the source folder bindings/python/polygpu,
    # found first because Python runs in bindings/python (or it is on the path), and it shadows
    # the package that was built or installed. Say so, rather than "circular import".
    import os as _os
    import sys as _sys

    _here = _os.path.dirname(_os.path.abspath(__file__))
    if any(f.startswith("_polygpu.") and f.endswith((".so", ".pyd")) for f in _os.listdir(_here)):
        raise
    _others = [
        _os.path.join(p or _os.getcwd(), "polygpu")
        for p in _sys.path
        if _os.path.isdir(_os.path.join(p or _os.getcwd(), "polygpu"))
        and _os.path.realpath(_os.path.join(p or _os.getcwd(), "polygpu")) != _os.path.realpath(_here)
    ]
    raise ImportError(
        "polygpu was imported from %s, which has no compiled extension (_polygpu): this is the "
        "source folder, and it shadows the built or installed package%s. Run Python from another "
        "folder than bindings/python (or take that folder off sys.path / PYTHONPATH); after "
        "`make build`, PYTHONPATH=build/bindings/python finds the built package."
        % (_here, " (another copy is in %s)" % _others[0] if _others else ""),
        name="polygpu",
    ) from None
from ._polygpu import (
    ArgumentError,
    CompileError,
    DeviceArray,
    DeviceError,
    Error,
    FileError,
    Graph,
    HostView,
    InternalError,
    InterruptedError,
    TimeoutError,
    Kernel,
    Launch,
    NotFoundError,
    OutOfMemoryError,
    StateError,
    UnsupportedError,
    dtype_name,
    dtype_size,
    dtypes,
)
from ._display import DAG, Timeline, TimelineEntry
from ._default import array, asarray, default_runtime, from_dlpack, kernel, sync
from ._runtime import POLICIES, Runtime
from . import linalg


def node_status():
    """The machine's devices as shared by this user's polygpu processes (option ``share``,
    default ``"node"``): ``{"clients": [{"pid", "language", "devices", "inflight", "bytes"}],
    "devices": [{"device", "inflight", "bytes", "clients"}]}`` — per client (a runtime) the
    devices it uses (``"host:0"``, a GPU's UUID), its unfinished computations and the device
    bytes it holds; per device the same summed, and the pids of the clients using it. Clients
    that died are left out (their memory is reclaimed). Needs no runtime."""
    import json as _json

    return _json.loads(_polygpu._node_status())

for _cls in (Runtime, DAG, Timeline, TimelineEntry):
    _cls.__module__ = __name__  # documented as polygpu.Runtime, polygpu.DAG, ...
del _cls
__version__ = "%d.%d.%d" % _polygpu.version
MAX_DEVICES = _polygpu.MAX_DEVICES
MAX_DIMS = _polygpu.MAX_DIMS

__all__ = [
    "ArgumentError",
    "CompileError",
    "DAG",
    "DeviceArray",
    "DeviceError",
    "Error",
    "FileError",
    "Graph",
    "HostView",
    "InternalError",
    "InterruptedError",
    "TimeoutError",
    "Kernel",
    "Launch",
    "MAX_DEVICES",
    "MAX_DIMS",
    "NotFoundError",
    "OutOfMemoryError",
    "POLICIES",
    "Runtime",
    "StateError",
    "Timeline",
    "TimelineEntry",
    "UnsupportedError",
    "array",
    "asarray",
    "default_runtime",
    "dtype_name",
    "dtype_size",
    "dtypes",
    "from_dlpack",
    "kernel",
    "linalg",
    "node_status",
    "sync",
]

"""polygpu.linalg: BLAS calls as tasks of the runtime (the built-in tasks of pg_task_builtin).

Each call is scheduled like a kernel launch: it runs once the arrays it reads are current on
the device chosen for it, later launches that read what it writes wait for it, and it returns
at once. CPU devices run OpenBLAS (Debian: ``apt-get install libopenblas0-pthread``; the
environment variable ``PG_BLAS_LIB`` names another CBLAS library), GPUs cuBLAS (the CUDA
toolkit's, or ``pip install nvidia-cublas-cu12`` with ``PG_CUBLAS_LIB`` naming it). Arrays
are row-major, as NumPy's::

    import polygpu as pg
    rt = pg.Runtime(devices="host:4")
    a = rt.asarray(np.ones((64, 32), np.float32)); b = rt.asarray(np.ones((32, 16), np.float32))
    c = rt.array("float32", (64, 16))
    pg.linalg.gemm(rt, a, b, c)          # c = a @ b
"""

import weakref
from typing import List, NamedTuple, Optional

from . import _polygpu

__all__ = ["gemm", "axpy", "dot", "GemmReport"]


class GemmReport(NamedTuple):
    """What gemm's model chose and predicted (``gemm(..., report=True)``).

    devices: the devices that compute tiles; tile: rows of C per tile (the last may have
    fewer); tiles: tile tasks issued; rows: rows of C per device in ``devices``;
    predicted_s: predicted time; predicted_j: predicted energy in joules, None without power
    readings; gflops: the GEMM rate used per device in ``devices`` (0 where the performance
    models gave tile durations instead); from_models: the performance models gave them."""

    devices: List[int]
    tile: int
    tiles: int
    rows: List[int]
    predicted_s: float
    predicted_j: Optional[float]
    gflops: List[float]
    from_models: bool

_SUFFIX = {"float32": "_f32", "float64": "_f64"}
_tasks: "weakref.WeakKeyDictionary[object, dict[str, object]]" = weakref.WeakKeyDictionary()


def _task(rt, op, dtype_name, what):
    suffix = _SUFFIX.get(dtype_name)
    if suffix is None:
        raise _polygpu.ArgumentError(
            "%s: arrays of float32 or float64 are supported, got %s" % (what, dtype_name))
    per_rt = _tasks.setdefault(rt, {})
    name = op + suffix
    k = per_rt.get(name)
    if k is None:
        k = per_rt[name] = rt._task(name)
    return k


def _arrays(what, **arrays):
    """Each argument must be a DeviceArray: a NumPy array or a list has no place on devices."""
    for name, a in arrays.items():
        if not isinstance(a, _polygpu.DeviceArray):
            raise _polygpu.ArgumentError(
                "%s: %s must be a polygpu DeviceArray, got %s (copy host data in with "
                "rt.asarray)" % (what, name, type(a).__module__ + "." + type(a).__qualname__))


def _same_dtype(what, *arrays):
    names = {a.dtype_name for a in arrays}
    if len(names) != 1:
        raise _polygpu.ArgumentError(
            "%s: the arrays must have one dtype, got %s" % (what, ", ".join(sorted(names))))
    return names.pop()


def _matrix(what, name, a):
    if a.ndim != 2:
        raise _polygpu.ArgumentError(
            "%s: %s must be a 2-D array, got shape %s" % (what, name, tuple(a.shape)))
    return a.shape


def gemm(rt, a, b, c, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, *, devices=None,
         tile=None, metric="perf", report=False):
    """c = alpha * op(a) @ op(b) + beta * c, op transposing when trans_a / trans_b is true.

    a, b and c are 2-D float32 or float64 arrays of one dtype: op(a) is m x k, op(b) k x n,
    c m x n, of any size and wherever their values are (host or any device). C is cut into
    tiles of rows, each a task on the device a model of the links and of each device's GEMM
    rate assigns it (pg_linalg_gemm): B goes once to each device used, a tile's rows of A come
    while the tile before computes, and each tile of C goes back to where C was while the next
    computes. Returns at once; c is current once the tiles ran.

    devices: the device ids that may compute tiles (default: all; the model may use fewer).
    tile: rows of C per tile (default: the model's choice; at most 32 tiles).
    metric: "perf" (least predicted time) or "edp" (least energy x time; needs the devices'
    power, from NVML). report: True returns a GemmReport of the plan, else None."""
    _arrays("gemm", a=a, b=b, c=c)
    dt = _same_dtype("gemm", a, b, c)
    ar, ac = _matrix("gemm", "a", a)
    br, bc = _matrix("gemm", "b", b)
    m, n = _matrix("gemm", "c", c)
    m_a, k = (ac, ar) if trans_a else (ar, ac)
    k_b, n_b = (bc, br) if trans_b else (br, bc)
    if m_a != m or n_b != n or k_b != k:
        raise _polygpu.ArgumentError(
            "gemm: shapes do not fit: op(a) is %d x %d, op(b) %d x %d, c %d x %d"
            % (m_a, k, k_b, n_b, m, n))
    if dt not in _SUFFIX:
        raise _polygpu.ArgumentError(
            "gemm: arrays of float32 or float64 are supported, got %s" % dt)
    mask = 0
    if devices is not None:
        try:
            ids = [int(d) for d in devices]
        except TypeError:
            raise _polygpu.ArgumentError(
                "gemm: devices must be a list of device ids, got %r" % (devices,)) from None
        ndev = len(rt.devices)
        for d in ids:
            if not 0 <= d < ndev:
                raise _polygpu.ArgumentError(
                    "gemm: device %d does not exist (this runtime has devices 0 to %d)"
                    % (d, ndev - 1))
            mask |= 1 << d
        if not mask:
            raise _polygpu.ArgumentError("gemm: devices is empty: name at least one device")
    if tile is None:
        tile = 0
    elif isinstance(tile, bool) or not isinstance(tile, int) or tile < 1:
        raise _polygpu.ArgumentError(
            "gemm: tile must be a positive number of rows (or None), got %r" % (tile,))
    metrics = {"perf": 0, "edp": 1}
    if metric not in metrics:
        raise _polygpu.ArgumentError(
            "gemm: metric must be 'perf' or 'edp', got %r" % (metric,))
    r = rt._gemm(a, b, c, float(alpha), float(beta), bool(trans_a), bool(trans_b), mask, tile,
                 metrics[metric])
    return GemmReport(**r) if report else None


def axpy(rt, alpha, x, y):
    """y = alpha * x + y over the x.size elements (y at least as many)."""
    _arrays("axpy", x=x, y=y)
    dt = _same_dtype("axpy", x, y)
    if y.size < x.size:
        raise _polygpu.ArgumentError(
            "axpy: y has %d elements, fewer than x's %d" % (y.size, x.size))
    _task(rt, "axpy", dt, "axpy").launch(1, 1, x, y, x.size, float(alpha))


def dot(rt, x, y, out):
    """out[0] = x . y (x and y of one size; out an array of at least one element)."""
    _arrays("dot", x=x, y=y, out=out)
    dt = _same_dtype("dot", x, y, out)
    if x.size != y.size:
        raise _polygpu.ArgumentError(
            "dot: x has %d elements and y %d: they must be equal" % (x.size, y.size))
    if out.size < 1:
        raise _polygpu.ArgumentError("dot: out must have at least one element")
    _task(rt, "dot", dt, "dot").launch(1, 1, x, y, out, x.size)

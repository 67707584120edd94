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

from . import _polygpu

__all__ = ["gemm", "axpy", "dot"]

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


def gemm(rt, a, b, c, alpha=1.0, beta=0.0, trans_a=False, trans_b=False):
    """c = alpha * op(a) @ op(b) + beta * c, op transposing when trans_a / trans_b is true.

    a, b and c are 2-D float32 or float64 arrays of one dtype: op(a) is m x k, op(b) k x n,
    c m x n. Returns at once; c is current once the call ran."""
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
    t = _task(rt, "gemm", dt, "gemm")
    t.launch(1, 1, a, b, c, m, n, k, int(bool(trans_a)), int(bool(trans_b)), float(alpha),
             float(beta))


def axpy(rt, alpha, x, y):
    """y = alpha * x + y over the x.size elements (y at least as many)."""
    dt = _same_dtype("axpy", x, y)
    if y.size < x.size:
        raise _polygpu.ArgumentError(
            "axpy: y has %d elements, fewer than x's %d" % (y.size, x.size))
    _task(rt, "axpy", dt, "axpy").launch(1, 1, x, y, x.size, float(alpha))


def dot(rt, x, y, out):
    """out[0] = x . y (x and y of one size; out an array of at least one element)."""
    dt = _same_dtype("dot", x, y, out)
    if x.size != y.size:
        raise _polygpu.ArgumentError(
            "dot: x has %d elements and y %d: they must be equal" % (x.size, y.size))
    if out.size < 1:
        raise _polygpu.ArgumentError("dot: out must have at least one element")
    _task(rt, "dot", dt, "dot").launch(1, 1, x, y, out, x.size)

"""The default runtime behind polygpu.array / asarray / kernel / sync."""

import atexit
import threading

from ._polygpu import StateError
from ._runtime import Runtime

_lock = threading.Lock()
_runtime = None
_atexit_registered = False


def default_runtime():
    """The default :class:`Runtime`, created on first use from the ``PG_*`` environment
    variables (``PG_DEVICES``, ``PG_POLICY``, ...) and closed when Python exits. A new one is
    created if it was closed."""
    global _runtime, _atexit_registered
    with _lock:
        if _runtime is None or _runtime.closed:
            _runtime = Runtime()
            if not _atexit_registered:
                atexit.register(_close_at_exit)
                _atexit_registered = True
        return _runtime


def _close_at_exit():
    global _runtime
    rt, _runtime = _runtime, None
    if rt is not None and not rt.closed:
        try:
            rt.close()  # waits for the work and writes PG_TRACE if set
        except StateError:
            pass  # views still open at exit (module-level NumPy views): the OS frees it all


def array(dtype, shape, *, owner=None):
    """``default_runtime().array(dtype, shape, owner=owner)``: a new zero-filled
    :class:`DeviceArray` (``owner``: its rank, with several ranks)."""
    return default_runtime().array(dtype, shape, owner=owner)


def from_dlpack(obj, dtype=None, copy=None):
    """``default_runtime().from_dlpack(obj, dtype, copy)``: a :class:`DeviceArray` sharing
    ``obj``'s memory (any DLPack producer; a copy with ``copy=True`` or where sharing cannot be,
    see :meth:`Runtime.from_dlpack`)."""
    return default_runtime().from_dlpack(obj, dtype, copy)


def asarray(obj, dtype=None, *, owner=None):
    """``default_runtime().asarray(obj, dtype, owner=owner)``: a :class:`DeviceArray` holding a
    copy of ``obj`` (a buffer such as a NumPy array, or nested sequences)."""
    return default_runtime().asarray(obj, dtype, owner=owner)


def kernel(source, name, signature=None, options=None, *, where=None):
    """``default_runtime().kernel(...)``: compile the ``__global__`` function ``name`` of the
    CUDA ``source`` into a :class:`Kernel` (``where``: "any", "gpu" or "cpu")."""
    return default_runtime().kernel(source, name, signature, options, where=where)


def sync():
    """``default_runtime().sync()``: wait for every computation submitted so far."""
    default_runtime().sync()

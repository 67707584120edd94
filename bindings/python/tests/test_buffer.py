"""The buffer protocol (with NumPy, with plain memoryview) and running without NumPy."""

import io
import os
import struct
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import polygpu as pg
from conftest import SRC


def test_memoryview_is_a_read_only_typed_view(rt):
    a = rt.asarray(np.arange(12, dtype=np.float64).reshape(3, 4))
    with memoryview(a) as m:
        assert m.readonly
        assert m.format == "d" and m.itemsize == 8
        assert m.shape == (3, 4) and m.strides == (32, 8)
        assert m.tolist() == a.tolist()
        assert m[2, 3] == 11.0
        with pytest.raises(TypeError):
            m[0, 0] = 1.0


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64", "float32", "float64"])
def test_numpy_views_every_dtype(rt, dtype):
    h = (np.arange(10) % 7).astype(dtype)
    a = rt.asarray(h)
    v = np.asarray(a)
    assert v.dtype == np.dtype(dtype)
    assert np.array_equal(v, h)
    assert not v.flags.writeable
    del v


def test_view_sees_kernel_results_and_blocks_writers(rt):
    fill = rt.kernel(SRC, "fill")
    a = rt.array("float32", 100)
    fill(1, 128)(a, 2.0, 100)
    view = np.asarray(a)  # waits for the fill: a host access while the view lives
    assert (view == 2.0).all()
    fill(1, 128)(a, 5.0, 100)  # held back until the view is released
    time.sleep(0.05)
    assert (view == 2.0).all()
    assert rt.stats()["pending"] >= 1
    del view
    assert a[0] == 5.0


def test_writable_export_makes_host_the_only_copy(rt):
    add1 = rt.kernel(SRC, "add1")
    x = rt.asarray(np.zeros(16, dtype=np.float32))
    y = rt.array("float32", 16)
    add1(1, 32)(y, x, 16)
    rt.sync()
    assert len(x.locations) == 2
    # pack_into and readinto ask for a writable buffer: the export maps the array for writing.
    struct.pack_into("<f", x, 3 * 4, 41.0)
    assert x.locations == ["host"]
    add1(1, 32)(y, x, 16)
    assert y[3] == 42.0 and y[4] == 1.0
    assert io.BytesIO(struct.pack("<2f", 7.0, 8.0)).readinto(x) == 8
    assert x.locations == ["host"]
    add1(1, 32)(y, x, 16)
    assert y.tolist()[:5] == [8.0, 9.0, 1.0, 42.0, 1.0]


def test_free_while_exported_is_refused(rt):
    a = rt.array("int32", 4)
    m = memoryview(a)
    with pytest.raises(pg.StateError):
        a.free()
    with pytest.raises(pg.StateError, match="view"):
        rt.close()
    assert not rt.closed
    m.release()
    a.free()
    assert a.freed


def test_views_nest_and_release_in_any_order(rt):
    a = rt.asarray([1, 2, 3])
    m1 = memoryview(a)
    m2 = memoryview(a)
    n = np.asarray(a)
    m1.release()
    assert n.tolist() == [1, 2, 3]
    del n
    assert m2.tolist() == [1, 2, 3]
    m2.release()
    a[0] = 9  # nothing holds the array any more
    assert a.tolist() == [9, 2, 3]


def test_view_from_another_thread_does_not_block_python(rt):
    fill = rt.kernel(SRC, "fill")
    a = rt.array("float32", 8)
    m = memoryview(a)
    done = threading.Event()

    def writer():
        fill(1, 32)(a, 1.0, 8)  # submitted, held until the view goes
        a[0]  # waits for the fill, which waits for the view
        done.set()

    t = threading.Thread(target=writer)
    t.start()
    try:
        time.sleep(0.1)
        assert not done.is_set()  # and this thread still runs Python
    finally:
        m.release()
        t.join(30)
    assert done.is_set() and a.tolist() == [1.0] * 8


NO_NUMPY = textwrap.dedent(r"""
    import sys
    sys.modules["numpy"] = None  # any `import numpy` now raises ImportError
    import polygpu as pg
    SRC = %r
    rt = pg.Runtime()
    a = rt.asarray([[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]], dtype="float32")
    assert a.dtype == "float32", a.dtype
    assert a.tolist() == [[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]]
    assert a[1] == [4.5, 5.5, 6.5], a[1]
    assert a[:, ::2] == [[1.5, 3.5], [4.5, 6.5]]
    assert a[1, -1] == 6.5
    a[0, 1:] = [20, 30]
    with memoryview(a) as m:
        assert m.format == "f" and m.shape == (2, 3) and m.readonly
        assert m.tolist() == [[1.5, 20.0, 30.0], [4.5, 5.5, 6.5]]
    k = rt.kernel(SRC, "scale")
    k(1, 32)(a, 2.0, 6)
    assert a.tolist() == [[3.0, 40.0, 60.0], [9.0, 11.0, 13.0]]
    try:
        a.to_numpy()
    except ImportError as e:
        assert "NumPy" in str(e) and "tolist" in str(e), e
    else:
        raise AssertionError("to_numpy() without NumPy must raise ImportError")
    import array
    b = rt.asarray(array.array("i", [1, 2, 3]))
    assert b.dtype == "int32" and b[::-1] == [3, 2, 1]
    rt.close()
    print("ok")
""")


def test_everything_works_without_numpy():
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-c", NO_NUMPY % SRC], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "ok"


def test_waiting_on_own_view_is_state_error(rt):
    fill = rt.kernel(SRC, "fill")
    a = rt.array("float32", 8)
    m = memoryview(a)
    fill(1, 32)(a, 3.0, 8)  # held back by the view
    try:
        with pytest.raises(pg.StateError, match="unmap|release"):
            a[0]  # would wait for the fill, which waits for this thread's view
        with pytest.raises(pg.StateError):
            rt.sync()
    finally:
        m.release()
    assert a[0] == 3.0


def test_host_view_gives_writable_numpy_views(rt):
    add1 = rt.kernel(SRC, "add1")
    x = rt.asarray(np.zeros(8, dtype=np.float32))
    y = rt.array("float32", 8)
    add1(1, 32)(y, x, 8)
    rt.sync()
    v = np.asarray(x.host_view(True))
    assert v.flags.writeable
    v[:] = np.arange(8)
    assert x.locations == ["host"]
    add1(1, 32)(y, x, 8)  # held back until v is released
    del v
    assert y.tolist() == [float(i + 1) for i in range(8)]
    ro = x.host_view()
    assert not ro.writable and ro.array is x
    assert memoryview(ro).readonly
    with pytest.raises(TypeError, match="read-write"):  # pack_into's word for BufferError
        struct.pack_into("<f", ro, 0, 1.0)
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(ro)[0] = 1.0

"""Arrays: creation, attributes, whole-array copies in and out, kernels on them."""

import array as pyarray
import struct

import numpy as np
import pytest

import polygpu as pg
from conftest import N, SRC, grid_for


def test_array_attributes(rt):
    a = rt.array("float32", (3, 4))
    assert a.shape == (3, 4)
    assert a.ndim == 2
    assert a.size == 12
    assert a.nbytes == 48
    assert a.itemsize == 4
    assert len(a) == 3
    assert a.dtype == np.float32
    assert a.dtype_name == "float32"
    assert a.runtime is rt
    assert isinstance(a.id, int) and a.id > 0
    assert "float32" in repr(a) and "(3, 4)" in repr(a)


def test_new_arrays_are_zero(rt):
    for dt in pg.dtypes:
        a = rt.array(dt, 5)
        assert a.tolist() == [0] * 5
        assert a.dtype_name == dt


@pytest.mark.parametrize("dtype", [np.float64, np.dtype("int16"), "uint32", float, int])
def test_dtype_spellings(rt, dtype):
    a = rt.array(dtype, 2)
    expected = {float: "float64", int: "int64"}.get(dtype, np.dtype(dtype).name)
    assert a.dtype_name == expected
    assert pg.dtype_name(dtype) == expected
    assert pg.dtype_size(dtype) == np.dtype(expected).itemsize


def test_asarray_from_numpy_keeps_dtype_and_shape(rt):
    h = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    a = rt.asarray(h)
    assert a.shape == (2, 3, 4) and a.dtype == np.int32
    assert np.array_equal(a.to_numpy(), h)
    assert a.tolist() == h.tolist()


def test_asarray_from_non_contiguous_numpy(rt):
    h = np.arange(40, dtype=np.float64).reshape(5, 8)[::2, 1::3]
    a = rt.asarray(h)
    assert a.shape == h.shape
    assert np.array_equal(a.to_numpy(), h)


def test_asarray_from_sequences_and_buffers(rt):
    assert rt.asarray([1, 2, 3]).dtype_name == "int64"
    assert rt.asarray([1, 2.5]).dtype_name == "float64"
    assert rt.asarray([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert rt.asarray(range(5), dtype="float32").tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    b = rt.asarray(pyarray.array("h", [5, -6, 7]))
    assert b.dtype_name == "int16" and b.tolist() == [5, -6, 7]
    c = rt.asarray(bytes([1, 2, 255]))
    assert c.dtype_name == "uint8" and c.tolist() == [1, 2, 255]
    d = rt.asarray(memoryview(struct.pack("<3d", 1.5, 2.5, 3.5)).cast("d"))
    assert d.tolist() == [1.5, 2.5, 3.5]


def test_asarray_from_objects_with_array_method(rt):
    class Table:  # no buffer protocol, only NumPy's __array__ (as pandas or PyTorch CPU tensors)
        def __array__(self, dtype=None, copy=None):
            return np.array([[1.5, 2.5], [3.5, 4.5]], dtype=np.float32)

    a = rt.asarray(Table())
    assert a.shape == (2, 2) and a.dtype == np.float32
    a[0] = np.asarray(Table())[1]
    assert a.tolist() == [[3.5, 4.5], [3.5, 4.5]]
    a.copy_from(Table())
    assert a.tolist() == [[1.5, 2.5], [3.5, 4.5]]


def test_asarray_with_dtype_converts(rt):
    a = rt.asarray(np.array([1.0, -2.0, 3.0]), dtype="int32")
    assert a.tolist() == [1, -2, 3]  # integral floats only: 1.9 is refused, never truncated
    with pytest.raises(pg.ArgumentError, match="integer elements take integral values"):
        rt.asarray(np.array([1.9, -2.9, 3.0]), dtype="int32")
    b = rt.asarray([1, 2, 3], dtype=np.float32)
    assert b.to_numpy().dtype == np.float32


def test_asarray_of_device_array_is_a_copy(rt):
    a = rt.asarray(np.arange(6, dtype=np.float32))
    b = rt.asarray(a)
    b[0] = 100
    assert a[0] == 0 and b[0] == 100
    c = rt.asarray(a, dtype="float64")
    assert c.dtype_name == "float64" and c.tolist() == list(range(6))


def test_copy_from_and_to_bytes(rt):
    a = rt.array("float32", 4)
    a.copy_from([1, 2, 3, 4])
    assert a.tolist() == [1.0, 2.0, 3.0, 4.0]
    a.copy_from(np.full(4, 0.5, dtype=np.float64))  # converted
    assert a.tolist() == [0.5] * 4
    a.copy_from(7)  # broadcast
    assert a.tolist() == [7.0] * 4
    assert a.to_bytes() == struct.pack("<4f", 7, 7, 7, 7)
    other = rt.asarray(np.arange(4, dtype=np.float32))
    a.copy_from(other)
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_iteration_and_numpy_results(rt):
    a = rt.asarray(np.arange(6, dtype=np.int64).reshape(2, 3))
    rows = list(a)
    assert [r.tolist() for r in rows] == [[0, 1, 2], [3, 4, 5]]
    assert isinstance(a[0], np.ndarray)
    assert isinstance(a[0, 1], int)


def test_kernel_end_to_end(rt):
    k = rt.kernel(SRC, "axpy")
    x = rt.asarray(np.arange(N, dtype=np.float32))
    y = rt.asarray(np.ones(N, dtype=np.float32))
    k(grid_for(N), 256)(y, x, 2.0, N)
    assert np.array_equal(y.to_numpy(), 2 * np.arange(N, dtype=np.float32) + 1)


def test_kernel_params_and_signature(rt):
    k = rt.kernel(SRC, "add1")
    assert k.name == "add1"
    p = k.params
    assert [q["name"] for q in p] == ["y", "x", "n"]
    assert [q["access"] for q in p] == ["inout", "in", None]
    assert p[0]["is_array"] and not p[2]["is_array"]
    assert p[2]["dtype"] == "int32"
    ks = rt.kernel(SRC, "add1", signature="out float *y, in const float *x, int n")
    assert [q["access"] for q in ks.params] == ["out", "in", None]


def test_grid_block_forms_and_launch_method(rt):
    k = rt.kernel(SRC, "grid2d")
    y = rt.array("float32", (6, 10))
    k((1, 2), (16, 4))(y, 6, 10)
    assert y[5, 9] == 509.0 and y[0, 0] == 0.0 and y[3, 2] == 302.0
    y2 = rt.array("float32", (6, 10))
    k.launch([1, 1, 1], (16, 8, 1), y2, 6, 10, shared_mem=0)
    assert y2.tolist() == y.tolist()
    launcher = k(1, (16, 8), shared_mem=16)
    assert "grid2d" in repr(launcher)


def test_scalar_argument_types(rt):
    k64 = rt.kernel(SRC, "iota64")
    y = rt.array("int64", 8)
    k64(1, 32)(y, np.int16(-3), np.uint8(8))
    assert y.tolist() == list(range(-3, 5))
    k64(1, 32)(y, 2**40, True)  # bool is an int: n = 1
    assert y[0] == 2**40 and y[1] == -2  # only y[0] written
    u8 = rt.kernel(SRC, "add_u8")
    b = rt.asarray(np.array([250, 1], dtype=np.uint8))
    u8(1, 32)(b, 5, 2)
    assert b.tolist() == [255, 6]
    f = rt.kernel(SRC, "fill")
    z = rt.array("float32", 3)
    f(1, 32)(z, np.float32(1.25), 3)
    assert z.tolist() == [1.25] * 3
    f(1, 32)(z, 2, 3)  # an int for a float parameter is converted
    assert z.tolist() == [2.0] * 3


def test_module_level_default_runtime():
    rt = pg.default_runtime()
    assert rt is pg.default_runtime()
    k = pg.kernel(SRC, "add1")
    x = pg.asarray(np.arange(10, dtype=np.float32))
    y = pg.array("float32", 10)
    k(1, 32)(y, x, 10)
    pg.sync()
    assert y.tolist() == [float(i + 1) for i in range(10)]
    assert x.runtime is rt


def test_runtime_options_and_context_manager(tmp_path):
    trace = tmp_path / "trace.json"
    with pg.Runtime(policy="round-robin", stream_policy="always-new", execution="sync",
                    prefetch=True, exploration_threshold=0.2, log="off", trace=trace,
                    parent_stream_policy="disjoint", cache_dir=None) as rt:
        assert not rt.closed
        k = rt.kernel(SRC, "fill")
        y = rt.array("float32", 10)
        k(1, 32)(y, 3.0, 10)
        assert y[9] == 3.0
    assert rt.closed
    assert trace.exists() and "traceEvents" in trace.read_text()
    rt.close()  # closing twice is a no-op


def test_devices_and_stats_shape(rt):
    devs = rt.devices
    assert len(devs) >= 1
    for i, d in enumerate(devs):
        assert d["id"] == i and d["kind"] in ("cpu", "cuda") and d["name"]
        assert d["memory_bytes"] > 0 and d["multiprocessors"] >= 1
    s = rt.stats()
    for key in ("ndevices", "computations", "kernels", "host_accesses", "copies",
                "bytes_moved", "host_wait_ns", "pending", "link_bytes"):
        assert key in s
    assert s["ndevices"] == len(devs)
    assert ("host", "0") in s["link_bytes"] and ("0", "host") in s["link_bytes"]


def test_help_is_useful():
    for obj in (pg, pg.Runtime, pg.DeviceArray, pg.Kernel, pg.array, pg.asarray, pg.kernel,
                pg.sync, pg.Error, pg.CompileError, pg.Runtime.kernel, pg.Runtime.dag,
                pg.DeviceArray.to_numpy, pg.DeviceArray.copy_from):
        assert obj.__doc__ and len(obj.__doc__) > 20, obj

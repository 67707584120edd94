"""Each bad input raises the documented exception with a message that names the problem."""

import numpy as np
import pytest

import polygpu as pg
from conftest import SRC


def test_exception_hierarchy():
    assert issubclass(pg.ArgumentError, pg.Error) and issubclass(pg.ArgumentError, TypeError)
    assert issubclass(pg.OutOfMemoryError, pg.Error)
    assert issubclass(pg.OutOfMemoryError, MemoryError)
    assert issubclass(pg.NotFoundError, LookupError)
    assert issubclass(pg.FileError, OSError)
    for cls in (pg.StateError, pg.CompileError, pg.DeviceError, pg.UnsupportedError,
                pg.InternalError):
        assert issubclass(cls, pg.Error) and cls.__module__ == "polygpu"
    assert issubclass(pg.Error, Exception)


@pytest.mark.parametrize("options, match", [
    ({"policy": "fastest"}, "policy"),
    ({"devices": "tpu"}, "devices"),
    ({"stream_policy": "lifo"}, "stream_policy"),
    ({"parent_stream_policy": "x"}, "parent_stream_policy"),
    ({"execution": "eager"}, "execution"),
    ({"exploration_threshold": "high"}, "exploration_threshold"),
    ({"exploration_threshold": 2.0}, "exploration_threshold"),
    ({"prefetch": "maybe"}, "prefetch"),
    ({"log": "loud"}, "log"),
    ({"colour": "blue"}, "unknown option"),
    ({"devices": ["host:4"]}, "devices"),
])
def test_bad_runtime_options(options, match):
    with pytest.raises(pg.ArgumentError, match=match) as e:
        pg.Runtime(**options)
    assert e.value.status == "PG_ERROR_ARGUMENT"


def test_positional_runtime_arguments():
    with pytest.raises(TypeError):
        pg.Runtime("host:4")


@pytest.mark.parametrize("dtype, shape, match", [
    ("float16", 4, "dtype"),
    ("complex64", 4, "dtype"),
    (np.complex64, 4, "dtype"),
    (object(), 4, "dtype"),
    ("float32", 0, "size"),
    ("float32", -3, "size"),
    ("float32", (2, 0), "size"),
    ("float32", (1, 1, 1, 1, 1), "dimensions"),
    ("float32", (), "dimensions"),
    ("float32", 2.5, "shape"),
    ("float32", (2, "3"), "not an int"),
    ("float32", 2 ** 50, "too large"),
])
def test_bad_arrays(rt, dtype, shape, match):
    with pytest.raises(pg.ArgumentError, match=match):
        rt.array(dtype, shape)


def test_bad_asarray(rt):
    with pytest.raises(pg.ArgumentError):
        rt.asarray(3.5)
    with pytest.raises(pg.ArgumentError, match="ragged"):
        rt.asarray([[1, 2], [3]])
    with pytest.raises(pg.ArgumentError):
        rt.asarray(["a", "b"])
    with pytest.raises(pg.ArgumentError, match="format"):
        rt.asarray(np.zeros(3, dtype=np.complex64))
    with pytest.raises(pg.ArgumentError, match="size"):
        rt.asarray([])
    with pytest.raises(pg.ArgumentError, match="does not fit"):
        rt.asarray([1, 300], dtype="uint8")
    with pytest.raises(pg.ArgumentError, match="does not fit"):
        rt.asarray([-1], dtype="uint32")
    with pytest.raises(pg.ArgumentError, match="integer"):
        rt.asarray([1.5], dtype="int32")


def test_compile_error_has_the_log(rt):
    with pytest.raises(pg.CompileError) as e:
        rt.kernel('extern "C" __global__ void broken(float *y) { y[0] = undefined_name; }',
                  "broken")
    assert e.value.status == "PG_ERROR_COMPILE"
    assert "undefined_name" in e.value.log
    # The chain: what was being done (the kernel, the devices), then the compiler's message.
    assert str(e.value).startswith("compiling kernel 'broken' for ")
    assert "undefined_name" in str(e.value)


def test_bad_interconnect_file_names_file_and_cause(tmp_path):
    path = tmp_path / "links.csv"
    path.write_text("src,dst,bandwidth_gbps,latency_us\nhost,0,-3,1\n")
    with pytest.raises(pg.ArgumentError) as e:
        pg.Runtime(devices="host:1", interconnect=path)
    assert str(e.value).startswith(
        f"pg_runtime_new: reading the interconnect matrix '{path}' (option interconnect): "
        f"{path}:2: ")


def test_kernel_not_in_source(rt):
    with pytest.raises(pg.NotFoundError, match="square"):
        rt.kernel(SRC, "square")


def test_bad_signature(rt):
    with pytest.raises(pg.ArgumentError, match="widget"):
        rt.kernel(SRC, "fill", signature="float *y, widget v, int n")
    with pytest.raises(pg.ArgumentError):
        rt.kernel(SRC, "fill", options=42)
    with pytest.raises(pg.ArgumentError):
        rt.kernel("", "fill")


@pytest.fixture
def add1(rt):
    return rt.kernel(SRC, "add1")


def test_wrong_argument_count(rt, add1):
    y, x = rt.array("float32", 4), rt.array("float32", 4)
    with pytest.raises(pg.ArgumentError, match="takes 3 arguments"):
        add1(1, 32)(y, x)
    with pytest.raises(pg.ArgumentError, match="takes 3 arguments"):
        add1(1, 32)(y, x, 4, 5)


def test_wrong_argument_types(rt, add1):
    y, x = rt.array("float32", 4), rt.array("float32", 4)
    with pytest.raises(pg.ArgumentError, match="array"):
        add1(1, 32)(y, 1.0, 4)  # a scalar for a pointer
    with pytest.raises(pg.ArgumentError, match="scalar"):
        add1(1, 32)(y, x, x)  # an array for a scalar
    with pytest.raises(pg.ArgumentError, match="float64"):
        add1(1, 32)(y, rt.array("float64", 4), 4)  # wrong element type
    with pytest.raises(pg.ArgumentError, match="asarray"):
        add1(1, 32)(y, np.zeros(4, dtype=np.float32), 4)  # host data
    with pytest.raises(pg.ArgumentError):
        add1(1, 32)(y, x, "4")
    with pytest.raises(pg.ArgumentError, match="integer"):
        add1(1, 32)(y, x, 4.0)  # a float for an int parameter
    with pytest.raises(pg.ArgumentError, match="positional"):
        add1(1, 32)(y, x, n=4)
    with pytest.raises(TypeError):
        add1(1, 32)(y, x, None)


def test_scalar_out_of_range(rt, add1):
    y, x = rt.array("float32", 4), rt.array("float32", 4)
    with pytest.raises(pg.ArgumentError, match="does not fit int32"):
        add1(1, 32)(y, x, 2 ** 31)
    with pytest.raises(pg.ArgumentError, match="64-bit"):
        add1(1, 32)(y, x, 2 ** 70)
    u8 = rt.kernel(SRC, "add_u8")
    b = rt.array("uint8", 4)
    with pytest.raises(pg.ArgumentError, match="uint8"):
        u8(1, 32)(b, -1, 4)
    with pytest.raises(pg.ArgumentError, match="uint8"):
        u8(1, 32)(b, np.int64(256), 4)
    fill = rt.kernel(SRC, "fill")
    with pytest.raises(pg.ArgumentError, match="float32"):
        fill(1, 32)(y, 1e300, 4)
    assert y.tolist() == [0.0] * 4 and b.tolist() == [0] * 4  # nothing ran


# One range check, in the core, for every binding and for kernel scalars: the message names the
# value, the dtype and its range, word for word as the Lua and C suites expect
# (bindings/lua/tests/test_array.lua, tests/c/test_element.c).
ELEMENT_RANGE_CASES = [
    ("uint8", 300, "value 300 does not fit uint8 (out of range 0 to 255)"),
    ("int8", -129, "value -129 does not fit int8 (out of range -128 to 127)"),
    ("uint32", -1, "value -1 does not fit uint32 (out of range 0 to 4294967295)"),
    ("int64", 2 ** 63, "value 9223372036854775808 does not fit int64 "
                       "(out of range -9223372036854775808 to 9223372036854775807)"),
    ("float32", 1e39, "value 1e+39 does not fit in float32 "
                      "(out of range -3.4028235e+38 to 3.4028235e+38)"),
]


@pytest.mark.parametrize("dtype,value,message", ELEMENT_RANGE_CASES)
def test_element_out_of_range_names_value_dtype_and_range(rt, dtype, value, message):
    a = rt.array(dtype, 2)
    for store in (lambda: a.__setitem__(0, value), lambda: a.__setitem__(slice(None), value),
                  lambda: rt.asarray([1, value], dtype=dtype)):
        with pytest.raises(pg.ArgumentError) as e:
            store()
        assert message in str(e.value)
    assert a.tolist() == [0, 0]  # nothing was written


def test_buffer_casts_take_integral_values_in_range(rt):
    """NumPy floats go into integer elements by the rule a Python number follows: integral and
    in range, never truncated (as astype would: 1.9 -> 1 without a word)."""
    a = rt.array("uint8", 3)
    a[:] = np.array([1.0, 254.0, 0.0])
    assert a.tolist() == [1, 254, 0]
    with pytest.raises(pg.ArgumentError, match="value 1.9 has no exact uint8 representation"):
        a[:] = np.array([1.9, 254.0, 0.0])
    with pytest.raises(pg.ArgumentError, match=r"value 256.5 does not fit uint8 \(out of range"):
        a[:] = np.array([1.0, 256.5, 0.0])
    with pytest.raises(pg.ArgumentError, match=r"value -0.5 does not fit uint8"):
        a[:] = np.array([1.0, -0.5, 0.0])
    with pytest.raises(pg.ArgumentError, match="nan"):
        a[:] = np.array([1.0, np.nan, 0.0])
    assert a.tolist() == [1, 254, 0]


def test_bad_launch_configuration(rt, add1):
    y, x = rt.array("float32", 4), rt.array("float32", 4)
    # Past every device's limits: 16384 threads per block (CPU devices allow 8192, GPUs 1024).
    for grid, block in ((0, 32), (1, 0), (1, 16384), (1, (128, 64, 2)), ((1, 1, 1, 1), 32),
                        (-1, 32), (1.5, 32), ("1", 32), (2 ** 40, 32)):
        with pytest.raises(pg.ArgumentError):
            add1(grid, block)(y, x, 4)
    with pytest.raises(pg.ArgumentError):
        add1(1, 32, shared_mem=-1)
    with pytest.raises(pg.ArgumentError, match="shared"):
        add1(1, 32, shared_mem=1 << 30)(y, x, 4)


BLOCK_SRC = r"""
extern "C" __global__ void count(int *y, unsigned long long last) {
  extern __shared__ unsigned char dyn[];
  __shared__ int n;
  bool first = threadIdx.x + threadIdx.y + threadIdx.z == 0;
  if (first) { n = 0; if (last) dyn[last - 1] = 7; }
  __syncthreads();
  atomicAdd(&n, 1);
  __syncthreads();
  if (first) y[blockIdx.x] = n + (last ? dyn[last - 1] : 0);
}
"""


def test_cpu_device_limits():
    """CPU devices report their own launch limits, beyond a GPU's, and launches are checked
    against them: at the limits they run, past them they fail naming each device's limit."""
    with pg.Runtime(devices="host:2") as r:
        for d in r.devices:
            assert d["max_threads_per_block"] == 8192
            assert d["max_block"] == (8192, 8192, 8192)
            assert d["max_grid"] == (2 ** 31 - 1, 65535, 65535)
            assert d["max_shared_memory_per_block"] == 64 << 20
        count = r.kernel(BLOCK_SRC, "count")
        y = r.array("int32", 2)
        count(2, 8192)(y, 0)
        assert y.tolist() == [8192, 8192]
        count(2, (2, 2, 2048))(y, 0)  # z past a GPU's 64
        assert y.tolist() == [8192, 8192]
        count(2, 32, shared_mem=64 << 20)(y, 64 << 20)
        assert y.tolist() == [39, 39]
        with pytest.raises(pg.ArgumentError,
                           match=r"devices 0-1 \(CPU devices\) each allows 8192 threads per block"):
            count(1, 8193)(y, 0)
        with pytest.raises(pg.ArgumentError, match=r"allows 67108864 bytes \(64 MiB\) of shared"):
            count(1, 32, shared_mem=(64 << 20) + 1)(y, 0)
        with pytest.raises(pg.ArgumentError, match="grids up to"):
            count((1, 65536), 32)(y, 0)
        assert y.tolist() == [39, 39]  # nothing ran


def test_use_after_free(rt, add1):
    y, x = rt.array("float32", 4), rt.array("float32", 4)
    x.free()
    x.free()  # a second free is a no-op
    assert x.freed
    for op in (lambda: x[0], lambda: x.__setitem__(0, 1.0), lambda: x.tolist(),
               lambda: x.copy_from([1, 2, 3, 4]), lambda: memoryview(x), lambda: x.locations,
               lambda: add1(1, 32)(y, x, 4)):
        with pytest.raises(pg.StateError):
            op()
    add1.free()
    with pytest.raises(pg.StateError):
        add1(1, 32)(y, y, 4)
    with pytest.raises(pg.StateError):
        add1.params


def test_use_after_runtime_close():
    rt = pg.Runtime()
    k = rt.kernel(SRC, "add1")
    y = rt.array("float32", 4)
    rt.close()
    for op in (lambda: y[0], lambda: k(1, 32)(y, y, 4), lambda: rt.array("float32", 4),
               lambda: rt.kernel(SRC, "add1"), rt.sync, rt.stats, lambda: rt.devices,
               rt.dag):
        with pytest.raises(pg.StateError):
            op()
    del y, k  # freeing handles of a closed runtime is harmless


def test_arrays_of_another_runtime(rt, add1):
    with pg.Runtime() as other:
        z = other.array("float32", 4)
        with pytest.raises(pg.ArgumentError, match="another runtime"):
            add1(1, 32)(rt.array("float32", 4), z, 4)


def test_errors_leave_no_state(rt, add1):
    y = rt.asarray(np.arange(4, dtype=np.float32))
    before = rt.stats()
    with pytest.raises(pg.ArgumentError):
        add1(1, 32)(y, y, 2 ** 40)
    with pytest.raises(IndexError):
        y[10] = 1
    with pytest.raises(pg.ArgumentError):
        y[0:2] = [1, 2, 3]
    after = rt.stats()
    assert after["computations"] == before["computations"]
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0]

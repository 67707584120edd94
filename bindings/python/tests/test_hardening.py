"""Issue 36's binding probes: silent wrong values and misleading errors found by new-user
probes. Each test names the probe it stands for."""

import math

import numpy as np
import pytest

import polygpu as pg

INTEGRAL = "integer elements take integral values"


# ---------------------------------------------------------------- 1. one rule into arrays

def _paths(rt, dtype, n):
    """Every way a value gets into an array of `dtype` and `n` elements, as (name, store)."""
    a = rt.array(dtype, n)

    def asarray(v):
        b = rt.asarray(v, dtype=dtype)
        a.copy_from(b)  # only reached when asarray accepted it

    return a, [
        ("setitem scalar", lambda v: a.__setitem__(0, v[0] if hasattr(v, "__len__") else v)),
        ("slice assignment", lambda v: a.__setitem__(slice(0, len(v)), v)),
        ("copy_from", lambda v: a.copy_from(v)),
        ("asarray", asarray),
        ("memoryview source", lambda v: a.copy_from(memoryview(np.ascontiguousarray(v)))),
        ("device array source", lambda v: a.copy_from(rt.asarray(v))),
    ]


@pytest.mark.parametrize("values", [
    np.array([1.5, 2.5]),
    np.array([2.7, -2.7]),
    np.array([1.5, 2.0], dtype=np.float32),
    np.array([np.nan, 1.0]),
])
def test_fractions_are_refused_on_every_path_into_an_integer_array(rt, values):
    """a[0:2] = np.array([1.5, 2.5]) stored [1, 2]; copy_from, asarray(dtype=int32) and
    a[0] = np.float64(1.5) truncated the same way. Now every path refuses, as a Python float
    and a list already did, with the same message, and writes nothing."""
    a, paths = _paths(rt, "int32", len(values))
    for name, store in paths:
        with pytest.raises(pg.ArgumentError, match=INTEGRAL) as e:
            store(values)
        assert "int32" in str(e.value), name
        assert a.tolist() == [0] * len(values), name
    for scalar in (np.float64(1.5), np.float32(-0.5), 1.5, float("nan")):
        with pytest.raises(pg.ArgumentError, match=INTEGRAL):
            a[0] = scalar
        with pytest.raises(pg.ArgumentError, match=INTEGRAL):
            a[0:2] = [scalar, 1]
    assert a.tolist() == [0] * len(values)


def test_integral_floats_are_stored_on_every_path(rt):
    """The rule is the core's (pg_element_store): an integral float is its integer value, from
    a Python float as from NumPy, so no path is stricter or looser than another."""
    values = np.array([2.0, -3.0])
    a, paths = _paths(rt, "int32", 2)
    for name, store in paths:
        a.copy_from([0, 0])
        store(values)
        got = a.tolist()
        assert got[0] == 2 and (name == "setitem scalar" or got == [2, -3]), (name, got)
    a[1] = 7.0
    assert a.tolist() == [2, 7]


@pytest.mark.parametrize("dtype,values,message", [
    ("uint8", np.array([-0.5, 1.0]), "does not fit uint8"),
    ("uint8", np.array([255.5, 1.0]), INTEGRAL),
    ("uint8", np.array([256.0, 1.0]), "does not fit uint8"),
    ("uint8", np.array([-1, 1]), "does not fit uint8"),
    ("int8", np.array([300, 1], dtype=np.int64), "does not fit int8"),
    ("int16", np.array([1e10, 1.0]), "does not fit int16"),
])
def test_out_of_range_is_refused_on_every_path(rt, dtype, values, message):
    """uint8 -0.5 became 0. Out-of-range values are refused the same way on every path."""
    a, paths = _paths(rt, dtype, 2)
    for name, store in paths:
        with pytest.raises(pg.ArgumentError, match=message):
            store(values)
        assert a.tolist() == [0, 0], name


def test_numpy_scalars_inside_lists_follow_the_rule(rt):
    """A list of NumPy scalars was refused outright ("expected numbers or (nested) sequences
    of numbers, got np.float32(...)"): each is now a number converted by the same rule."""
    f = rt.array("float32", 2)
    f[0:2] = [np.float32(1.5), np.float64(-2.25)]
    assert f.tolist() == [1.5, -2.25]
    i = rt.array("int32", 3)
    i.copy_from([np.int16(3), np.uint8(4), np.float32(5.0)])
    assert i.tolist() == [3, 4, 5]
    with pytest.raises(pg.ArgumentError, match=INTEGRAL):
        i.copy_from([np.int16(3), np.float32(4.5), 0])
    with pytest.raises(pg.ArgumentError, match="has no polygpu dtype"):
        i.copy_from([np.complex64(1), 0, 0])
    assert i.tolist() == [3, 4, 5]
    assert rt.asarray([np.float32(1.5), 2]).tolist() == [1.5, 2.0]


def test_float_arrays_still_take_any_float(rt):
    a = rt.array("float32", 2)
    a[0:2] = np.array([1.5, -2.25])
    a.copy_from(np.array([1.5, np.nan], dtype=np.float64))
    assert a[0] == 1.5 and math.isnan(a[1])


# ---------------------------------------------------------------- 2. np.asarray must raise

def test_numpy_asarray_of_a_freed_array_raises(rt):
    """np.asarray(a) of a freed array gave an object array holding a."""
    a = rt.array("float32", 4)
    a.free()
    with pytest.raises(pg.StateError):
        memoryview(a)
    with pytest.raises(pg.StateError, match="freed"):
        np.asarray(a)
    with pytest.raises(pg.StateError, match="freed"):
        np.array(a)


def test_numpy_asarray_after_close_raises():
    rt = pg.Runtime()
    a = rt.asarray(np.arange(4, dtype=np.float32))
    rt.close()
    with pytest.raises(pg.StateError, match="closed"):
        np.asarray(a)


def test_numpy_asarray_inside_a_recording_raises(rt):
    a = rt.asarray(np.arange(4, dtype=np.float32))
    with rt.record():
        with pytest.raises(pg.StateError):
            memoryview(a)
        with pytest.raises(pg.StateError):
            np.asarray(a)


def test_array_protocol_on_a_live_array(rt):
    a = rt.asarray(np.arange(4, dtype=np.float32))
    assert np.asarray(a).tolist() == [0, 1, 2, 3]
    v = a.__array__()
    assert v.dtype == np.float32 and v.tolist() == [0, 1, 2, 3]
    del v
    w = a.__array__(np.float64, copy=True)
    assert w.dtype == np.float64 and w.flags.writeable and w.tolist() == [0, 1, 2, 3]


# ---------------------------------------------------------------- 3. NUL in string options

@pytest.mark.parametrize("option,value", [
    ("cache_dir", "/tmp/x\x00y"),
    ("policy", "round-robin\x00junk"),
    ("devices", "host:1\x00junk"),
    ("devices", "sim:dgx1-v100\x00junk"),
    ("check", "off\x00junk"),
    ("trace", "/tmp/t.json\x00x"),
])
def test_nul_in_a_string_option_is_refused(option, value):
    """Runtime(cache_dir="/tmp/x\\x00y") used /tmp/x: C saw the text up to the NUL."""
    with pytest.raises(ValueError, match="option %s: .* contains a NUL character" % option):
        pg.Runtime(**{option: value})


def test_nul_in_kernel_options_and_option_names_is_refused(rt):
    src = 'extern "C" __global__ void k(float *y) { }'
    with pytest.raises(ValueError, match="NUL"):
        rt.kernel(src, "k", options="-DX=1\x00junk")
    with pytest.raises(ValueError, match="NUL"):
        rt.kernel(src, "k", options=["-DX=1", "-DY\x00"])
    with pytest.raises(ValueError, match="NUL"):
        pg.Runtime(**{"log\x00junk": "off"})
    rt.kernel(src, "k", options="-DX=1")  # the runtime stays usable


# ---------------------------------------------------------------- 11. slice of a freed array

def test_slice_of_a_freed_array_says_it_was_freed(rt):
    """a.free(); a[0:4] said "pg_array_slice: out must not be NULL"."""
    a = rt.array("float32", 8)
    a.free()
    with pytest.raises(pg.StateError, match="freed") as e:
        a[0:4]
    assert "NULL" not in str(e.value)
    with pytest.raises(pg.StateError, match="freed"):
        a.split(2)


# ---------------------------------------------------------------- 12. infinite timeouts

def test_infinite_timeout_means_no_limit(kernels, rt):
    """sync/close(timeout=float("inf")) was refused (">= 0, not inf")."""
    y = rt.array("float32", 16)
    kernels.fill(1, 16)(y, 2.0, 16)
    rt.sync(timeout=float("inf"))
    rt.sync(timeout=1e12)  # past any uint64 of nanoseconds: no limit as well
    assert y[3] == 2.0
    for bad in (-1.0, float("nan"), float("-inf")):
        with pytest.raises(pg.ArgumentError, match="inf: no limit"):
            rt.sync(timeout=bad)
    rt.close(timeout=float("inf"))
    assert rt.closed


# ---------------------------------------------------------------- 13. exception types

def test_dlpack_with_a_bad_dl_device_is_a_type_error(rt):
    """a.__dlpack__(dl_device="cpu") raised SystemError."""
    a = rt.array("float32", 4)
    for bad in ("cpu", (1,), (1, 0, 0), ("1", 0), None.__class__):
        with pytest.raises(TypeError, match="dl_device must be a .device_type, device_id. "
                                            "tuple"):
            a.__dlpack__(dl_device=bad)
    a.__dlpack__(dl_device=(1, 0))  # the CPU, as before


def test_linalg_with_a_numpy_array_names_the_argument(rt):
    """pg.linalg.gemm(rt, <numpy array>, ...) raised AttributeError 'dtype_name'."""
    b, c = rt.array("float32", (2, 2)), rt.array("float32", (2, 2))
    host = np.ones((2, 2), np.float32)
    with pytest.raises(pg.ArgumentError, match="gemm: a must be a polygpu DeviceArray, got "
                                               "numpy.ndarray"):
        pg.linalg.gemm(rt, host, b, c)
    with pytest.raises(pg.ArgumentError, match="gemm: c must be"):
        pg.linalg.gemm(rt, b, b, [[0, 0], [0, 0]])
    with pytest.raises(pg.ArgumentError, match="axpy: x must be"):
        pg.linalg.axpy(rt, 1.0, host.ravel(), rt.array("float32", 4))
    with pytest.raises(pg.ArgumentError, match="dot: out must be"):
        pg.linalg.dot(rt, b, c, None)


def test_dlpack_producer_with_a_bad_device_names_it(rt):
    """A producer whose __dlpack_device__ returns None gave "'NoneType' object is not
    subscriptable"."""

    class Producer:
        def __init__(self, dev):
            self.dev = dev

        def __dlpack_device__(self):
            return self.dev

        def __dlpack__(self, **kw):
            raise AssertionError("not reached")

    for dev in (None, (1,), "cpu", (1.0, 0)):
        with pytest.raises(pg.ArgumentError, match="__dlpack_device__.. returned"):
            rt.asarray(Producer(dev))
        with pytest.raises(pg.ArgumentError, match="__dlpack_device__.. returned"):
            rt.from_dlpack(Producer(dev))


# ---------------------------------------------------------------- 14. booleans for on/off

@pytest.mark.parametrize("option", ["models", "prefetch", "elide_copies"])
def test_on_off_options_take_booleans(option, tmp_path):
    """models=True was refused ("unknown models '1': expected off or on")."""
    for value in (True, False):
        rt = pg.Runtime(cache_dir=str(tmp_path), **{option: value})
        rt.close()


def test_booleans_for_models_mean_on_and_off(tmp_path):
    rt = pg.Runtime(cache_dir=str(tmp_path), models=True)
    src = 'extern "C" __global__ void k(float *y) { }'
    y = rt.array("float32", 4)
    rt.kernel(src, "k")(1, 4)(y)
    rt.sync()
    assert rt.models()  # learning: the launch is measured
    rt.close()
    rt = pg.Runtime(cache_dir=str(tmp_path), models=False, policy="min-finish-time")
    assert rt.models() == []
    rt.close()


def test_booleans_for_path_options_are_refused():
    """trace=True wrote a trace to a file named "1": a bool is not a path."""
    for option in ("trace", "profile", "cache_dir", "interconnect"):
        with pytest.raises(pg.ArgumentError, match="option %s takes a path, got True" % option):
            pg.Runtime(**{option: True})

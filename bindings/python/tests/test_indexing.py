"""Indexing: every key form, reading and writing, checked against NumPy; one host access each."""

import numpy as np
import pytest

import polygpu as pg
from conftest import SRC

KEYS_1D = [0, 5, -1, -20, slice(None), slice(3, 9), slice(None, None, 3), slice(2, 17, 4),
           slice(None, None, -1), slice(15, 2, -3), slice(-5, None), slice(50, 60),
           slice(7, 7), Ellipsis, np.int64(4)]

KEYS_ND = [(1,), (1, 2), (-1, -1, -1), (slice(None), 2), (0, slice(1, 4)), (Ellipsis, 1),
           (slice(None, None, 2), slice(None, None, -1), 0), (1, Ellipsis),
           (slice(1, 2), slice(0, 4, 3), slice(None)), (0, 0), (slice(None), slice(None), 4),
           (slice(2, 0, -1), 1, slice(1, 4, 2))]


@pytest.fixture
def v1(rt):
    h = np.arange(20, dtype=np.float32) * 1.5
    return rt.asarray(h), h


@pytest.fixture
def v3(rt):
    h = np.arange(3 * 4 * 5, dtype=np.int32).reshape(3, 4, 5)
    return rt.asarray(h), h


def is_rows(key, rows):
    """A non-empty range of rows with step 1: a view (a DeviceArray), not a copy."""
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    return isinstance(key, slice) and key.indices(rows)[2] == 1 and len(range(*key.indices(rows)))


def check_read(dev, host, key):
    got = dev[key]
    want = host[key]
    if is_rows(key, host.shape[0]):
        assert isinstance(got, pg.DeviceArray), key
        got = got.to_numpy()
        assert got.shape == want.shape and got.dtype == want.dtype, key
        assert np.array_equal(got, want), key
    elif np.ndim(want) == 0:
        assert isinstance(got, (int, float)) and got == want, key
    else:
        assert isinstance(got, np.ndarray), key
        assert got.shape == want.shape and got.dtype == want.dtype, key
        assert np.array_equal(got, want), key


@pytest.mark.parametrize("key", KEYS_1D, ids=repr)
def test_read_1d(v1, key):
    check_read(*v1, key)


@pytest.mark.parametrize("key", KEYS_ND, ids=repr)
def test_read_nd(v3, key):
    check_read(*v3, key)


@pytest.mark.parametrize("key", KEYS_1D, ids=repr)
def test_write_1d(v1, key):
    dev, host = v1
    shape = np.shape(host[key])
    value = np.arange(np.prod(shape, dtype=int), dtype=np.float32).reshape(shape) + 100
    dev[key] = value
    host[key] = value
    assert np.array_equal(dev.to_numpy(), host)


@pytest.mark.parametrize("key", KEYS_ND, ids=repr)
def test_write_nd(v3, key):
    dev, host = v3
    shape = np.shape(host[key])
    value = -np.arange(np.prod(shape, dtype=int), dtype=np.int32).reshape(shape) - 1
    dev[key] = value
    host[key] = value
    assert np.array_equal(dev.to_numpy(), host)


def test_write_scalars_sequences_and_buffers(v3):
    dev, host = v3
    dev[0] = 7  # broadcast over a 4x5 block
    host[0] = 7
    dev[1, 2] = [1, 2, 3, 4, 5]
    host[1, 2] = [1, 2, 3, 4, 5]
    dev[2, :, 0] = (9, 8, 7, 6)
    host[2, :, 0] = (9, 8, 7, 6)
    dev[2, 1:3, 1:3] = [[10, 11], [12, 13]]
    host[2, 1:3, 1:3] = [[10, 11], [12, 13]]
    dev[-1, -1, -1] = np.int8(-4)
    host[-1, -1, -1] = -4
    dev[0, 0, ::2] = memoryview(np.array([21, 22, 23], dtype=np.int32))
    host[0, 0, ::2] = [21, 22, 23]
    dev[1, 0] = np.arange(5, dtype=np.float64)  # converted to int32
    host[1, 0] = np.arange(5)
    assert np.array_equal(dev.to_numpy(), host)


def test_tolist_and_int_scalars(rt):
    a = rt.asarray([[1, 2, 3], [4, 5, 6]])
    assert a.tolist()[1] == [4, 5, 6]
    assert a[1, 1] == 5 and isinstance(a[1, 1], int)


def test_float_element_types(rt):
    a = rt.asarray(np.array([0.1, 0.2], dtype=np.float64))
    assert a[0] == 0.1 and isinstance(a[0], float)
    b = rt.array("float32", 2)
    b[0] = 0.1
    assert b[0] == float(np.float32(0.1))


@pytest.mark.parametrize("key", [20, -21, 100, (0, 4), (3,), (0, 0, 5), (0, -5, 0),
                                 (-4, 0, 0)], ids=repr)
def test_out_of_range_is_index_error(rt, key):
    a = rt.array("float32", 20)
    m = rt.array("float32", (3, 4, 5))
    target = a if not isinstance(key, tuple) else m
    with pytest.raises(IndexError):
        target[key]
    with pytest.raises(IndexError):
        target[key] = 1


def test_bad_keys(rt):
    a = rt.array("float32", (3, 4))
    with pytest.raises(IndexError):
        a[0, 0, 0]  # too many indices
    with pytest.raises(IndexError):
        a[..., 0, ...]
    with pytest.raises(TypeError):
        a[1.5]
    with pytest.raises(TypeError):
        a["x"]
    with pytest.raises(TypeError):
        a[[0, 1]]
    with pytest.raises(TypeError):
        del a[0]
    with pytest.raises(TypeError):
        a[0] = [1, 2, 3]  # 3 values for 4 elements
    with pytest.raises(TypeError):
        a[0, 0] = "text"


def test_each_indexing_operation_is_one_host_access(rt):
    a = rt.asarray(np.arange(60, dtype=np.float32).reshape(3, 4, 5))
    k = rt.kernel(SRC, "scale")
    ops = [lambda: a[1:, ::2, 1::3], lambda: a[..., 2], lambda: a[2, 3, 4],
           lambda: a[0], lambda: a.__setitem__((slice(None), 1, slice(None, None, 2)), 5),
           lambda: a.__setitem__(0, 1.0), lambda: a.__setitem__((1, 1, 1), 2)]
    for op in ops:
        k(1, 64)(a, 1.0, 60)  # the host copy is stale before each access
        before = rt.stats()["host_accesses"]
        op()
        assert rt.stats()["host_accesses"] == before + 1


def test_empty_selection_needs_no_access(rt):
    a = rt.array("int32", 10)
    before = rt.stats()["host_accesses"]
    assert a[5:5].shape == (0,)
    a[3:3] = []
    assert rt.stats()["host_accesses"] == before

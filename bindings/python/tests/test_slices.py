"""Views: a[lo:hi] and a.split() are DeviceArrays sharing a's rows. Kernels on disjoint views
have no dependency and run on two devices at once; overlapping ones are ordered; only stale
rows move; views of views, rows of 2-D arrays, the parent freed first, recordings, misuse."""

import numpy as np
import pytest

import polygpu as pg
from conftest import SRC, grid_for, two_devices

N = 1024
H = N // 2


@pytest.fixture
def rt2():
    with pg.Runtime(devices=two_devices(), policy="round-robin") as r:
        yield r


def kernel_vertices(rt):
    return [v for v in rt.dag()["vertices"] if v["kind"] == "kernel"]


def test_a_range_of_rows_is_a_view(rt):
    a = rt.asarray(np.arange(N, dtype=np.float32))
    v = a[10:20]
    assert isinstance(v, pg.DeviceArray)
    assert v.shape == (10,) and v.dtype_name == "float32" and v.id == a.id
    assert np.array_equal(np.asarray(v), np.arange(10, 20, dtype=np.float32))
    v[0] = -1.0  # writes through to the array
    assert a[10] == -1.0
    a[11] = -2.0  # and the other way round
    assert v[1] == -2.0
    assert isinstance(a[-5:], pg.DeviceArray) and a[-5:].shape == (5,)
    assert isinstance(a[:], pg.DeviceArray) and a[:].shape == (N,)
    # Not a range of rows: a copy, as before.
    assert isinstance(a[::2], np.ndarray) and isinstance(a[5:5], np.ndarray)


def test_disjoint_writes_run_apart_overlap_is_ordered(rt2):
    fill = rt2.kernel(SRC, "fill", signature="out float *y, float v, int n")
    x = rt2.array("float32", N)
    lo, hi = x.split(2)
    mid = x[H // 2:H + H // 2]
    fill(grid_for(H), 256)(lo, 1.0, H)
    fill(grid_for(H), 256)(hi, 2.0, H)
    fill(grid_for(H), 256)(mid, 3.0, H)
    want = np.full(N, 3.0, dtype=np.float32)
    want[:H // 2], want[H + H // 2:] = 1.0, 2.0
    assert np.array_equal(x.to_numpy(), want)
    dag = rt2.dag()
    a, b, c = [v["id"] for v in kernel_vertices(rt2)]
    edges = {tuple(e) for e in dag["edges"]}
    assert (a, b) not in edges and (b, a) not in edges  # disjoint: no dependency
    assert (a, c) in edges and (b, c) in edges  # overlapping: ordered
    devices = {v["id"]: v["device"] for v in kernel_vertices(rt2)}
    assert devices[a] != devices[b]  # round-robin put the two halves on two devices


def test_only_the_stale_rows_move(rt2):
    fill = rt2.kernel(SRC, "fill", signature="out float *y, float v, int n")
    add1 = rt2.kernel(SRC, "add1")
    x, y = rt2.array("float32", N), rt2.array("float32", N)
    lo, hi = x.split(2)
    fill(grid_for(H), 256)(lo, 1.0, H)
    fill(grid_for(H), 256)(hi, 2.0, H)
    add1(grid_for(N), 256)(y, x, N)  # on one device: the other half comes over
    assert np.array_equal(y.to_numpy()[:H], np.full(H, 2.0)) and y[H] == 3.0
    lb = rt2.stats()["link_bytes"]
    assert lb[("0", "1")] + lb[("1", "0")] == H * 4
    assert lb[("host", "0")] + lb[("host", "1")] == 0


def test_split_sizes_and_misuse(rt):
    a = rt.asarray(np.arange(10, dtype=np.int32))
    assert [v.shape[0] for v in a.split(3)] == [4, 3, 3]  # as numpy.array_split
    parts = a.split([2, 5, 3])
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3, 4, 5, 6], [7, 8, 9]]
    assert [p.shape[0] for p in parts[1].split(2)] == [3, 2]  # views of views
    with pytest.raises(pg.ArgumentError, match="1 to 10"):
        a.split(0)
    with pytest.raises(pg.ArgumentError, match="1 to 10"):
        a.split(11)
    with pytest.raises(pg.ArgumentError, match="add up to 9"):
        a.split([4, 5])
    with pytest.raises(pg.ArgumentError, match="positive"):
        a.split([10, 0])
    with pytest.raises(TypeError):
        a.split("two")
    assert a.tolist() == list(range(10))  # the runtime and the array are fine


def test_rows_of_2d_arrays(rt, kernels):
    m = rt.asarray(np.zeros((8, 16), dtype=np.float32))
    v = m[2:6]
    w = v[1:3]  # rows 3 and 4 of m
    assert v.shape == (4, 16) and w.shape == (2, 16)
    kernels.fill(1, 64)(w, 7.0, 32)
    want = np.zeros((8, 16), dtype=np.float32)
    want[3:5] = 7.0
    assert np.array_equal(m.to_numpy(), want)
    assert np.array_equal(np.asarray(v), want[2:6])


def test_parent_freed_first(rt, kernels):
    x = rt.asarray(np.full(N, 4.0, dtype=np.float32))
    lo, hi = x.split(2)
    x.free()
    y = rt.array("float32", H)
    kernels.add1(grid_for(H), 256)(y, hi, H)
    assert np.array_equal(y.to_numpy(), np.full(H, 5.0)) and lo[0] == 4.0
    hi.free()
    assert lo[H - 1] == 4.0


def test_views_in_recordings(rt, kernels):
    x = rt.asarray(np.zeros(N, dtype=np.float32))
    lo, hi = x.split(2)
    with rt.record() as g:
        kernels.scale(grid_for(H), 256)(lo, 2.0, H)
        kernels.add1(grid_for(H), 256)(hi, lo, H)
    lo[0:H] = np.ones(H, dtype=np.float32)
    for _ in range(4):
        g()
    assert lo[0] == 16.0 and hi[0] == 17.0


def test_mapped_array_is_not_cut(rt):
    a = rt.asarray(np.arange(N, dtype=np.float32))
    h = np.asarray(a.host_view(True))  # maps a while it lives
    h[100] = -1.0
    with pytest.raises(pg.StateError, match="mapped"):
        a[100:200]
    del h
    assert a[100:200][0] == -1.0


@pytest.mark.parametrize("keep", [False, True])
def test_throw_away_windows_merge_back(rt, kernels, keep):
    # 100 windows, each used by a kernel and dropped, cut the array into 108 pieces; a kernel
    # may cover at most 64, yet one on the whole array runs once the windows are gone (their
    # pieces merge back), also with a view alive on another range.
    a = rt.asarray(np.arange(800, dtype=np.float32) % 13)
    want = np.arange(800, dtype=np.float32) % 13
    kept = a[700:750] if keep else None
    for i in range(100):
        kernels.scale(1, 32)(a[i:i + 8], 2.0, 8)
        want[i:i + 8] *= 2
    kernels.scale(grid_for(800), 256)(a, 0.5, 800)
    want *= 0.5
    assert np.array_equal(a.to_numpy(), want)
    if keep:
        assert np.array_equal(np.asarray(kept), want[700:750])


BOUNDS_SRC = r"""
extern "C" __global__ void fill(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
extern "C" __global__ void poke(float *y, long at) {
  if (blockIdx.x == 0 && threadIdx.x == 0) ((volatile float *)y)[at] = 1.0f; }
"""


def test_checked_write_past_a_view_fails_naming_it():
    # check="bounds": a view's bounds are its rows. fill(1, 16)(z[0:8], 3.0, 16) writes z[8:]
    # through an 8-row view: the kernel fails naming the parameter and the rows, and z[8:]
    # keeps its value.
    with pg.Runtime(devices="host:1", check="bounds") as rt:
        z = rt.asarray(np.full(16, 5.0, dtype=np.float32))
        fill = rt.kernel(BOUNDS_SRC, "fill")
        fill(1, 16)(z[0:8], 3.0, 16)
        with pytest.raises(pg.DeviceError,
                           match=r"'fill'.*out of bounds.*parameter 1 \(y\).*rows \[0, 8\)"):
            rt.sync()
        assert np.array_equal(np.asarray(z[8:]), np.full(8, 5.0, dtype=np.float32))
    # Inside its rows, a view computes what it computes unchecked.
    with pg.Runtime(devices="host:1", check="bounds") as rt:
        z = rt.asarray(np.zeros(16, dtype=np.float32))
        rt.kernel(BOUNDS_SRC, "fill")(1, 16)(z[4:12], 3.0, 8)
        want = np.zeros(16, dtype=np.float32)
        want[4:12] = 3.0
        assert np.array_equal(z.to_numpy(), want)


@pytest.mark.parametrize("at, where", [(-1, "before its start"),
                                       (1000 + 2 ** 20, "past its end"),
                                       (-(2 ** 20), "before its start")])
def test_checked_writes_far_or_just_before_an_array(at, where):
    # y[-1] lands between the guard page and the start (1000 floats are no whole page), and
    # 2^20 elements away lands past one guard page: both are caught.
    with pg.Runtime(devices="host:1", check="bounds") as rt:
        y = rt.array("float32", 1000)
        rt.kernel(BOUNDS_SRC, "poke")(1, 1)(y, at)
        with pytest.raises(pg.DeviceError, match=f"'poke'.*out of bounds.*{where}"):
            y.to_numpy()

"""polygpu.linalg: gemm, axpy and dot as tasks (OpenBLAS on CPU devices, cuBLAS on GPUs),
against NumPy, ordered with kernels before and after them."""

import numpy as np
import pytest

import polygpu as pg

from conftest import grid_for


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (5, 3, 7), (40, 17, 23)])
def test_gemm_matches_numpy(rt, dtype, trans_a, trans_b, m, n, k):
    rng = np.random.default_rng(m * 100 + n * 10 + k)
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(dtype)
    c = rng.standard_normal((m, n)).astype(dtype)
    A, B, C = rt.asarray(a), rt.asarray(b), rt.asarray(c)
    pg.linalg.gemm(rt, A, B, C, alpha=1.5, beta=-0.5, trans_a=trans_a, trans_b=trans_b)
    want = 1.5 * (a.T if trans_a else a) @ (b.T if trans_b else b) - 0.5 * c
    np.testing.assert_allclose(C.to_numpy(), want, **_tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_axpy_then_dot_match_numpy(rt, dtype):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(3001).astype(dtype), rng.standard_normal(3001).astype(dtype)
    X, Y, R = rt.asarray(x), rt.asarray(y), rt.array(np.dtype(dtype).name, 1)
    pg.linalg.axpy(rt, 0.75, X, Y)
    pg.linalg.dot(rt, X, Y, R)  # reads what axpy wrote
    y2 = y + dtype(0.75) * x
    np.testing.assert_allclose(Y.to_numpy(), y2, **_tol(dtype))
    np.testing.assert_allclose(R.to_numpy()[0], np.dot(x.astype(np.float64), y2), rtol=1e-3)


def test_kernels_before_and_after(rt, kernels):
    m, k, n = 30, 20, 10
    for v in (1.0, 2.0, 3.0):
        a, b = rt.array("float32", (m, k)), rt.array("float32", (k, n))
        c, d = rt.array("float32", (m, n)), rt.array("float32", (m, n))
        kernels.fill(grid_for(m * k), 256)(a, v, m * k)
        kernels.fill(grid_for(k * n), 256)(b, 2.0, k * n)
        pg.linalg.gemm(rt, a, b, c)
        kernels.add1(grid_for(m * n), 256)(d, c, m * n)
        np.testing.assert_allclose(d.to_numpy(), np.full((m, n), k * v * 2.0 + 1.0))


def test_bad_arguments(rt):
    a = rt.array("float32", (4, 3))
    b = rt.array("float32", (2, 5))
    c = rt.array("float32", (4, 5))
    with pytest.raises(pg.ArgumentError, match="shapes do not fit"):
        pg.linalg.gemm(rt, a, b, c)
    with pytest.raises(pg.ArgumentError, match="one dtype"):
        pg.linalg.gemm(rt, a, rt.array("float64", (3, 5)), c)
    with pytest.raises(pg.ArgumentError, match="float32 or float64"):
        x = rt.array("int32", 4)
        pg.linalg.axpy(rt, 1.0, x, x)
    with pytest.raises(pg.ArgumentError, match="must be equal"):
        pg.linalg.dot(rt, rt.array("float32", 3), rt.array("float32", 4), rt.array("float32", 1))


# ---- the tiled GEMM (pg_linalg_gemm): placements, shape classes, keywords, report, DAG

_KEEP = r"""
extern "C" __global__ void keep_f(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] * 1.0f; }
extern "C" __global__ void keep_d(double *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] * 1.0; }
"""


def _place(rt, arr, where):
    """Leave arr's current value on device `where` only (None: on the host); the device ids
    name devices of a 4-device runtime, folded onto fewer (2 GPUs) so the placements still
    differ where they can."""
    if where is None:
        return
    where %= len(rt.devices)
    arr.prefetch(where)
    name = "keep_d" if arr.dtype_name == "float64" else "keep_f"
    rt.kernel(_KEEP, name)(grid_for(arr.size), 256)(arr, arr.size)
    assert arr.locations == [str(where)], arr.locations


_SHAPES = {"square": (24, 24, 24), "fat-thin": (48, 40, 4), "thin-fat": (8, 6, 80)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", sorted(_SHAPES))
@pytest.mark.parametrize("where", [(None, None, None), (0, 0, 0), (None, 1, 2), (2, None, 0),
                                   (1, 2, None), (0, 0, None), (None, None, 3)])
def test_tiled_gemm_placements(rt, dtype, shape, where):
    m, n, k = _SHAPES[shape]
    rng = np.random.default_rng(m + n + k)
    for case, (ta, tb) in enumerate([(False, False), (True, False), (False, True), (True, True)]):
        a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
        b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
        c = rng.standard_normal((m, n)).astype(dtype)
        A, B, C = rt.asarray(a), rt.asarray(b), rt.asarray(c)
        for arr, w in zip((A, B, C), where):
            _place(rt, arr, w)
        alpha, beta = (1.0, 0.0) if case % 2 else (-0.5, 2.0)
        r = pg.linalg.gemm(rt, A, B, C, alpha, beta, ta, tb, tile=[None, 4, 3, 16][case],
                           report=True)
        want = alpha * (a.T if ta else a) @ (b.T if tb else b) + beta * c
        np.testing.assert_allclose(C.to_numpy(), want, **_tol(dtype))
        assert sum(r.rows) == m and r.tiles == -(-m // r.tile) and r.predicted_s > 0
        assert len(r.devices) == len(r.rows) == len(r.gflops) >= 1


def test_tiled_gemm_keywords_and_dag(rt):
    m, n, k = 64, 16, 32
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    A, B, C = rt.asarray(a), rt.asarray(b), rt.array("float64", (m, n))
    nd = len(rt.devices)
    ids = sorted({1 % nd, nd - 1})  # devices 1 and 3 of four; what there is of them on fewer
    pg.linalg.gemm(rt, A, B, C, devices=ids, tile=8)  # the rate measurement, if not cached
    rt.sync()
    first = max(v["id"] for v in rt.dag()["vertices"])
    r = pg.linalg.gemm(rt, A, B, C, devices=ids, tile=8, report=True)
    assert isinstance(r, pg.linalg.GemmReport)
    assert r.tile == 8 and r.tiles == 8 and set(r.devices) <= set(ids)
    rt.sync()
    tiles = [v for v in rt.dag()["vertices"]
             if v["id"] > first and v["kind"] == "kernel" and v["name"] == "gemm_tile_out_f64"]
    assert len(tiles) == 8
    assert {v["device"] for v in tiles} == set(r.devices)
    np.testing.assert_allclose(C.to_numpy(), a @ b, rtol=1e-10, atol=1e-10)
    assert pg.linalg.gemm(rt, A, B, C, beta=1.0) is None
    np.testing.assert_allclose(C.to_numpy(), 2 * a @ b, rtol=1e-10, atol=1e-10)


def test_tiled_gemm_bad_keywords(rt):
    a, b, c = rt.array("float32", (4, 3)), rt.array("float32", (3, 5)), rt.array("float32", (4, 5))
    with pytest.raises(pg.ArgumentError, match="does not exist"):
        pg.linalg.gemm(rt, a, b, c, devices=[9])
    with pytest.raises(pg.ArgumentError, match="list of device ids"):
        pg.linalg.gemm(rt, a, b, c, devices=3)
    with pytest.raises(pg.ArgumentError, match="is empty"):
        pg.linalg.gemm(rt, a, b, c, devices=[])
    with pytest.raises(pg.ArgumentError, match="positive number of rows"):
        pg.linalg.gemm(rt, a, b, c, tile=0)
    with pytest.raises(pg.ArgumentError, match="'perf' or 'edp'"):
        pg.linalg.gemm(rt, a, b, c, metric="fast")
    if None in rt.stats()["power_watts"]:  # CPU devices report no power: EDP cannot be judged
        with pytest.raises(pg.ArgumentError, match="power"):
            pg.linalg.gemm(rt, a, b, c, metric="edp")
    else:  # GPUs with NVML readings
        assert pg.linalg.gemm(rt, a, b, c, metric="edp") is None
    big, bc = rt.array("float32", (100, 3)), rt.array("float32", (100, 5))
    with pytest.raises(pg.ArgumentError, match="at least 4 rows"):
        pg.linalg.gemm(rt, big, b, bc, tile=2)
    r = pg.linalg.gemm(rt, big, b, bc, tile=4, report=True)  # still usable
    assert r.tiles == 25
    np.testing.assert_array_equal(bc.to_numpy(), np.zeros((100, 5), np.float32))


@pytest.mark.parametrize("trans_a", [False, True])
def test_tiled_gemm_under_memory_limit(trans_a):
    """A, B and C whole (224 KiB) exceed a 200 KiB device_memory_limit: each tile takes a copy
    of its own rows of op(A) (a view of A would take all of A's buffer on the device), and the
    result is right; a tile that cannot fit, or B and C alone over the limit, say what did not
    fit."""
    rng = np.random.default_rng(5)
    a_np = rng.standard_normal((256, 128)).astype(np.float32)
    b_np = rng.standard_normal((128, 64)).astype(np.float32)
    with pg.Runtime(device_memory_limit="200K") as rt:
        a = rt.asarray(a_np.T.copy() if trans_a else a_np)
        b = rt.asarray(b_np)
        c = rt.array("float32", (256, 64))
        for tile in (None, 8):
            r = pg.linalg.gemm(rt, a, b, c, trans_a=trans_a, tile=tile, report=True)
            assert r.tiles > 1
            np.testing.assert_allclose(c.to_numpy(), a_np @ b_np, rtol=1e-4, atol=1e-4)
        with pytest.raises(pg.OutOfMemoryError, match="a tile of 256 rows .* needs 229376 bytes"):
            pg.linalg.gemm(rt, a, b, c, trans_a=trans_a, tile=256)
    with pg.Runtime(device_memory_limit="90K") as rt:
        a, b, c = rt.asarray(a_np), rt.asarray(b_np), rt.array("float32", (256, 64))
        with pytest.raises(pg.OutOfMemoryError, match=r"B \(128 x 64\) and C \(256 x 64\) whole"):
            pg.linalg.gemm(rt, a, b, c)
        assert rt.array("float32", 4).to_numpy().tolist() == [0, 0, 0, 0]  # still usable

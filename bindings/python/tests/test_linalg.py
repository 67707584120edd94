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

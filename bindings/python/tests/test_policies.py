"""Every device policy and stream policy gives the same, correct results."""

import numpy as np
import pytest

import polygpu as pg
from conftest import N, SRC, grid_for

G = grid_for(N)


def program(rt):
    """Chains, a diamond, host reads and writes in the middle; returns NumPy results."""
    k = {name: rt.kernel(SRC, name) for name in ("fill", "add1", "sum2", "scale", "axpy")}
    h = np.linspace(-1, 1, N, dtype=np.float32)
    x = rt.asarray(h)
    a, b, c, d = (rt.array("float32", N) for _ in range(4))
    k["add1"](G, 256)(a, x, N)
    k["scale"](G, 256)(a, 3.0, N)
    k["add1"](G, 256)(b, x, N)
    k["axpy"](G, 256)(b, a, 0.5, N)
    k["sum2"](G, 256)(c, a, b, N)
    first = c[::100].copy()
    c[0:10] = 7.0
    k["fill"](G, 256)(x, 2.0, N)  # write after the reads above
    k["sum2"](G, 256)(d, c, x, N)
    k["scale"](G, 256)(d, -1.0, N)
    return first, d.to_numpy(), x.to_numpy()


def expected():
    h = np.linspace(-1, 1, N, dtype=np.float32)
    a = (h + 1) * np.float32(3.0)
    b = np.float32(0.5) * a + (h + 1)
    c = a + b
    first = c[::100].copy()
    c[0:10] = 7.0
    d = -(c + np.float32(2.0))
    return first, d, np.full(N, 2.0, dtype=np.float32)


@pytest.mark.parametrize("policy", pg.POLICIES)
def test_device_policy_results(policy):
    with pg.Runtime(policy=policy) as rt:
        got = program(rt)
    for g, w in zip(got, expected()):
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("stream_policy", ["fifo", "always-new"])
@pytest.mark.parametrize("parent", ["same-as-parent", "disjoint", "multigpu-disjoint",
                                    "multigpu-early-disjoint"])
def test_stream_policy_results(stream_policy, parent):
    with pg.Runtime(stream_policy=stream_policy, parent_stream_policy=parent) as rt:
        got = program(rt)
    for g, w in zip(got, expected()):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_sync_execution_and_prefetch():
    for opts in ({"execution": "sync"}, {"prefetch": True}):
        with pg.Runtime(**opts) as rt:
            got = program(rt)
        for g, w in zip(got, expected()):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_round_robin_spreads_independent_kernels(multi_device):
    with pg.Runtime(policy="round-robin") as rt:
        fill = rt.kernel(SRC, "fill")
        ys = [rt.array("float32", N) for _ in range(multi_device)]
        for y in ys:
            fill(G, 256)(y, 1.0, N)
        rt.sync()
        devices = {v["device"] for v in rt.dag()["vertices"] if v["kind"] == "kernel"}
        assert len(devices) == multi_device

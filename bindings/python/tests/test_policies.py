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


# ---------------------------------------------------------------- placement that sees load
# Issue 38: the default policy (earliest-finish) weighs each device's queued work with the data
# it would copy. Kernels held on a flag in host memory (CPU devices read it through its address)
# keep every call unfinished while the next is placed, so the queues the policy sees do not
# depend on timing.

HOLD_SRC = r"""
__device__ void hold(unsigned long long flag) {
  while (*(volatile const int *)flag == 0) { struct timespec t = {0, 200000}; nanosleep(&t, 0); }
}
extern "C" __global__ void sweep(float *y, const float *x, int n, unsigned long long f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) hold(f);
  if (i < n) { float s = 0; for (int k = 0; k < 200; k++) s += x[i] * (float)k; y[i] = s; }
}
extern "C" __global__ void add1(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }
extern "C" __global__ void relax(float *d, const float *s, int lo, int rows, int slo, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  int g = lo + i;
  const float *c = s + (g - slo);
  d[i] = (g == 0 || g == n - 1) ? c[0] : (c[-1] + c[0] + c[1]) * 0.25f + c[0] * 0.25f; }
"""
SWEEP_SIG = "out float *y, in const float *x, int n, uint64_t f"
M = 1 << 16


def kernel_devices(rt):
    return [v["device"] for v in rt.dag()["vertices"] if v["kind"] == "kernel"]


def sweep_input():
    return (1 + np.arange(M) % 7).astype(np.float32)  # every partial sum exact in float32


@pytest.mark.parametrize("policy", [None, "earliest-finish"])
def test_independent_calls_spread_by_default(policy):
    """The issue's case: eight calls reading one shared input, each writing its own array, go
    to at least 3 of the 4 CPU devices (the data-aware policies put all eight where x is)."""
    opts = {"policy": policy} if policy else {}
    flag = np.zeros(1, np.int32)
    with pg.Runtime(devices="host:4", **opts) as rt:
        k = rt.kernel(HOLD_SRC, "sweep", SWEEP_SIG)
        hx = sweep_input()
        x = rt.asarray(hx)
        ys = [rt.array("float32", M) for _ in range(8)]
        for y in ys:
            k(M // 256, 256)(y, x, M, flag.ctypes.data)
        devices = kernel_devices(rt)
        flag[0] = 1
        for y in ys:
            np.testing.assert_array_equal(y.to_numpy(), np.float32(19900) * hx)
    assert len(set(devices)) >= 3, devices


def test_data_aware_policy_keeps_the_calls_with_x():
    """GrCUDA's minmax-transfer-time is unchanged: it still puts all eight where x is."""
    flag = np.zeros(1, np.int32)
    with pg.Runtime(devices="host:4", policy="minmax-transfer-time") as rt:
        k = rt.kernel(HOLD_SRC, "sweep", SWEEP_SIG)
        x = rt.asarray(sweep_input())
        ys = [rt.array("float32", M) for _ in range(8)]
        for y in ys:
            k(M // 256, 256)(y, x, M, flag.ctypes.data)
        devices = kernel_devices(rt)
        flag[0] = 1
        rt.sync()
    assert devices == [0] * 8


def test_chains_stay_on_their_device():
    """Four chains of dependent calls, issued step by step across the chains: each chain on one
    device, the chains on different devices, values checked."""
    flag = np.zeros(1, np.int32)
    chains, steps = 4, 6
    with pg.Runtime(devices="host:4") as rt:
        k = rt.kernel(HOLD_SRC, "sweep", SWEEP_SIG)
        add1 = rt.kernel(HOLD_SRC, "add1", "out float *y, in const float *x, int n")
        hx = sweep_input()
        ys = [[rt.array("float32", M)] for _ in range(chains)]
        for c in range(chains):
            k(M // 256, 256)(ys[c][0], rt.asarray(hx), M, flag.ctypes.data)
        for _ in range(steps):
            for c in range(chains):
                ys[c].append(rt.array("float32", M))
                add1(M // 256, 256)(ys[c][-1], ys[c][-2], M)
        devices = kernel_devices(rt)
        flag[0] = 1
        for c in range(chains):
            np.testing.assert_array_equal(ys[c][-1].to_numpy(), np.float32(19900) * hx + steps)
    per_chain = [{devices[s * chains + c] for s in range(steps + 1)} for c in range(chains)]
    assert all(len(d) == 1 for d in per_chain), devices
    assert len(set().union(*per_chain)) >= 3, devices


def test_partitions_keep_their_device():
    """Sixteen partitions of two arrays (views), a sweep per round from one to the other reading
    a halo row on each side (Jacobi on views, in 1-D), run for real: each partition's calls on
    one device round after round, all four devices used, values as NumPy's."""
    parts, rounds = 16, 8
    pn = M // parts
    with pg.Runtime(devices="host:4") as rt:
        relax = rt.kernel(HOLD_SRC, "relax",
                          "out float *d, in const float *s, int lo, int rows, int slo, int n")
        ref = (np.arange(M) % 13).astype(np.float32)
        g = [rt.asarray(ref), rt.array("float32", M)]
        own = [[a[p * pn:(p + 1) * pn] for p in range(parts)] for a in g]
        halo = [[a[max(p * pn - 1, 0):min((p + 1) * pn + 1, M)] for p in range(parts)] for a in g]
        for r in range(rounds):
            for p in range(parts):
                lo = p * pn
                relax(pn // 256, 256)(own[(r + 1) % 2][p], halo[r % 2][p], lo, pn, max(lo - 1, 0),
                                      M)
        got = g[rounds % 2].to_numpy()
        devices = kernel_devices(rt)
    q = np.float32(0.25)
    for _ in range(rounds):
        nxt = ref.copy()
        nxt[1:-1] = (ref[:-2] + ref[1:-1] + ref[2:]) * q + ref[1:-1] * q
        ref = nxt
    np.testing.assert_array_equal(got, ref)
    per_part = [{devices[r * parts + p] for r in range(rounds)} for p in range(parts)]
    assert all(len(d) == 1 for d in per_part), devices
    assert len(set().union(*per_part)) == 4, devices

"""B&S: Black & Scholes call prices on many independent vectors (the paper's streaming
benchmark): each partition's stock prices come from the host at every run, are priced by one
kernel and go back to the host; nothing moves between GPUs."""

import numpy as np

from . import common
from .common import (BLOCK, fmt_bytes, Workload, grid_1d, host_only, load_kernels, np_uniform,
                     partitions, sample_partitioned, to_host)

NAME, TITLE = "bs", "B&S"
#: total stock prices (float64) over all partitions
SIZES = {"tiny": 1 << 15, "small": 1 << 24, "medium": 1 << 27, "large": 1 << 29,
         # the GrCUDA paper's shape: 24 independent vectors of 10M to 35M prices each
         "paper-min": 24 * 10_000_000, "paper-mid": 24 * 22_500_000, "paper-max": 24 * 35_000_000}
PARTITIONS = 16
#: at the paper's sizes a partition is one of its 24 vectors
PARTITIONS_BY_SIZE = {"paper-min": 24, "paper-mid": 24, "paper-max": 24}
SAMPLE_LIMIT = 1 << 20
#: rate, volatility, years, strike (as in GrCUDA's B&S)
R, V, T, K = 0.08, 0.3, 1.0, 60.0


def describe(n):
    """The size in words."""
    return "%d float64 prices (%s in and out per run)" % (n, fmt_bytes(8 * n))


def device_bytes(n):
    """Device memory over all GPUs: prices and call values."""
    return 16 * n


def sample_total(n):
    """Number of output elements."""
    return n


def extra_args(n):
    """Arguments of the other versions besides --n."""
    return []


class Polygpu(Workload):
    """B&S through polygpu: one kernel per partition, each result prefetched to the host as
    soon as its kernel is launched, then the host reads every result."""

    def __init__(self, rt, n, nparts):
        self.rt, self.n = rt, n
        self.ks = load_kernels(rt, "bs")
        self.parts = partitions(n, nparts)

    def setup(self):
        rt, ks = self.rt, self.ks
        self.s = [rt.array("float64", c) for _, c in self.parts]
        self.call = [rt.array("float64", c) for _, c in self.parts]
        for (offset, c), s in zip(self.parts, self.s):
            ks.bs_init(grid_1d(c), BLOCK)(s, offset, c)
        to_host(self.s)

    def prepare(self):
        host_only(self.s)  # new prices from the host at every run

    def run(self):
        ks = self.ks
        for (_, c), s, call in zip(self.parts, self.s, self.call):
            ks.bs(grid_1d(c), BLOCK)(call, s, c, R, V, T, K)
            call.prefetch()  # its copy to the host follows the kernel without waiting for us
        self.fetch(self.call)

    def sample(self):
        return sample_partitioned(self.call, self.parts, self.n, SAMPLE_LIMIT)


class PolygpuSplit(Workload):
    """B&S written the natural way (version polygpu-split): one launch over the whole arrays,
    split over the devices by the kernel's signature; the result prefetched to the host as its
    parts finish."""

    def __init__(self, rt, n, nparts):
        self.rt, self.n = rt, n
        self.ks = load_kernels(rt, "bs")
        self.parts = [(0, n)]

    def setup(self):
        rt, ks, n = self.rt, self.ks, self.n
        self.s, self.call = rt.array("float64", n), rt.array("float64", n)
        self.grid = common.cdiv(n, BLOCK)
        ks.bs_init_split(self.grid, BLOCK)(self.s, n)
        to_host([self.s])

    def prepare(self):
        host_only([self.s])  # new prices from the host at every run

    def run(self):
        self.ks.bs_split(self.grid, BLOCK)(self.call, self.s, self.n, R, V, T, K)
        self.call.prefetch()  # each part's range follows its part to the host
        self.fetch([self.call])

    def sample(self):
        return sample_partitioned([self.call], self.parts, self.n, SAMPLE_LIMIT)


def black_scholes(s):
    """The kernel's formula in NumPy (float64)."""
    def cnd(d):
        a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
        q = 1.0 / (1.0 + 0.2316419 * np.abs(d))
        c = 0.39894228040143267794 * np.exp(-0.5 * d * d) * (
            q * (a1 + q * (a2 + q * (a3 + q * (a4 + q * a5)))))
        return np.where(d > 0, 1.0 - c, c)

    sqrt_t = np.sqrt(T)
    d1 = (np.log(s / K) + (R + 0.5 * V * V) * T) / (V * sqrt_t)
    d2 = d1 - V * sqrt_t
    return s * cnd(d1) - K * np.exp(-R * T) * cnd(d2)


def reference(n):
    """Call prices at the sampled indices."""
    from .common import sample_indices
    idx = sample_indices(n, SAMPLE_LIMIT)
    s = 16.0 + 64.0 * np_uniform(idx, 3).astype(np.float64)
    return {"call": black_scholes(s)}


def check(sample, ref, n):
    """``(ok, message)``: every sampled price within 1e-9 relative (plus 1e-9 absolute)."""
    want = ref["call"]
    if sample.shape != want.shape:
        return False, "got %d values, expected %d" % (sample.size, want.size)
    err = np.abs(sample - want) / (np.abs(want) + 1e-9)
    worst = float(err.max()) if err.size else 0.0
    return worst <= 1e-9 and bool(np.isfinite(sample).all()), (
        "%d prices checked, worst relative error %.2g" % (want.size, worst))

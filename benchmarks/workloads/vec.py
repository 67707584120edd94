"""VEC: the vector squares of the GrCUDA paper. Two partitioned vectors come from the host at
every run; per partition, square each (two independent kernels) and reduce the sum of the
differences of the squares; the host adds the partitions' sums. Bound by host-to-device copies;
the reduction joins the two squares of a partition (interdependent)."""

import numpy as np

from . import common
from .common import (BLOCK, fmt_bytes, Workload, chunked_sum, grid_1d, grid_reduce, host_only,
                     load_kernels, np_uniform, partitions, to_host)

NAME, TITLE = "vec", "VEC"
#: elements per vector
SIZES = {"tiny": 1 << 16, "small": 1 << 24, "medium": 1 << 27, "large": 1 << 30,
         # the GrCUDA paper's range: 160M to 950M elements per vector
         "paper-min": 160_000_000, "paper-mid": 550_000_000, "paper-max": 950_000_000}
PARTITIONS = 16
SAMPLE_LIMIT = 1  # one output: the sum


def describe(n):
    """The size in words."""
    return "2 vectors of %d float32 (%s from the host per run)" % (n, fmt_bytes(8 * n))


def device_bytes(n):
    """Device memory over all GPUs: x, y and their squares."""
    return 16 * n


def sample_total(n):
    """Number of output elements."""
    return 1


def extra_args(n):
    """Arguments of the other versions besides --n."""
    return []


class Polygpu(Workload):
    """VEC through polygpu: three kernels per partition, the host reads each partition's sum."""

    def __init__(self, rt, n, nparts):
        self.rt, self.n = rt, n
        self.ks = load_kernels(rt, "vec")
        self.parts = partitions(n, nparts)

    def setup(self):
        rt, ks = self.rt, self.ks
        self.x = [rt.array("float32", c) for _, c in self.parts]
        self.y = [rt.array("float32", c) for _, c in self.parts]
        self.x2 = [rt.array("float32", c) for _, c in self.parts]
        self.y2 = [rt.array("float32", c) for _, c in self.parts]
        self.res = [rt.array("float64", 1) for _ in self.parts]
        for (offset, c), x, y in zip(self.parts, self.x, self.y):
            ks.vec_init(grid_1d(c), BLOCK)(x, y, offset, c)
        to_host(self.x + self.y)

    def prepare(self):
        host_only(self.x + self.y)  # the paper rewrites x and y on the host before each run
        for r in self.res:
            r[0] = 0.0

    def run(self):
        ks = self.ks
        for (_, c), x, y, x2, y2, r in zip(self.parts, self.x, self.y, self.x2, self.y2,
                                           self.res):
            ks.vec_square(grid_1d(c), BLOCK)(x2, x, c)
            ks.vec_square(grid_1d(c), BLOCK)(y2, y, c)
            ks.vec_reduce(grid_reduce(c), BLOCK)(r, x2, y2, c)
        self.fetch(self.res)
        if not common.TIMING_ONLY:  # simulated devices that compute nothing made no sums
            self.value = sum(r[0] for r in self.res)

    def sample(self):
        return np.array([self.value])


class PolygpuSplit(Workload):
    """VEC written the natural way (version polygpu-split): one launch per kernel over the
    whole vectors, which the runtime splits over the devices by the kernels' signatures (each
    block touches its own run of elements), and per-block partial sums the host adds — no
    partitions in the script."""

    def __init__(self, rt, n, nparts):
        self.rt, self.n = rt, n
        self.ks = load_kernels(rt, "vec")
        self.parts = [(0, n)]

    def setup(self):
        rt, ks, n = self.rt, self.ks, self.n
        self.x, self.y, self.x2, self.y2 = (rt.array("float32", n) for _ in range(4))
        self.grid, self.grid_sum = common.cdiv(n, BLOCK), common.cdiv(n, BLOCK * 16)
        self.partial = rt.array("float64", self.grid_sum)
        ks.vec_init_split(self.grid, BLOCK)(self.x, self.y, n)
        to_host([self.x, self.y])

    def prepare(self):
        host_only([self.x, self.y])  # the paper rewrites x and y on the host before each run

    def run(self):
        ks, n = self.ks, self.n
        ks.vec_square_split(self.grid, BLOCK)(self.x2, self.x, n)
        ks.vec_square_split(self.grid, BLOCK)(self.y2, self.y, n)
        ks.vec_reduce_split(self.grid_sum, BLOCK)(self.partial, self.x2, self.y2, n)
        self.fetch([self.partial])
        if not common.TIMING_ONLY:
            view = np.asarray(self.partial)
            self.value = float(view.sum())
            del view

    def sample(self):
        return np.array([self.value])


def reference(n):
    """The exact sum (float64) of x^2 - y^2 with the squares rounded to float32 as on the
    devices."""
    def part(start, stop):
        idx = np.arange(start, stop, dtype=np.int64)
        x = np_uniform(idx, 1)
        y = np.float32(0.5) * np_uniform(idx, 2)
        return float(np.sum(x * x, dtype=np.float64) - np.sum(y * y, dtype=np.float64))

    return {"value": np.array([chunked_sum(part, n, 1 << 22)])}


def check(sample, ref, n):
    """``(ok, message)``: the sum within 1e-7 relative."""
    got, want = float(sample[0]), float(ref["value"][0])
    err = abs(got - want) / max(abs(want), 1e-30)
    return err <= 1e-7, "sum %.10g, reference %.10g, relative error %.2g" % (got, want, err)

"""MUL: dense matrix times vector with the matrix partitioned by rows (the GrCUDA paper's
20000 x 20000 case is the medium size). Matrix and vector come from the host at every run, so
with more partitions the copy of one partition overlaps the product of another; the harness
sweeps the number of partitions (1 to 32) on 1 and N GPUs."""

import numpy as np

from .common import (BLOCK, fmt_bytes, Workload, grid_1d, host_only, load_kernels, matvec_geometry,
                     np_uniform, partitions, sample_indices, sample_partitioned, to_host)

NAME, TITLE = "mul", "MUL"
#: matrix order n (n x n float32)
SIZES = {"tiny": 512, "small": 5000, "medium": 20000, "large": 50000,
         # the GrCUDA paper's range: matrices of order 20k to 60k
         "paper-min": 20000, "paper-mid": 40000, "paper-max": 60000}
PARTITIONS = 16
SWEEP = (1, 2, 4, 8, 16, 32)
SAMPLE_LIMIT = 4096  # rows of z checked


def describe(n):
    """The size in words."""
    return "%d x %d float32 matrix (%s from the host per run)" % (n, n, fmt_bytes(4 * n * n))


def device_bytes(n):
    """Device memory over all GPUs: matrix, vector, result."""
    return 4 * n * n + 8 * n


def sample_total(n):
    """Number of output elements: z."""
    return n


def extra_args(n):
    """Arguments of the other versions besides --n."""
    return []


class Polygpu(Workload):
    """MUL through polygpu: zero and matvec per partition, the host reads every part of z."""

    def __init__(self, rt, n, nparts):
        self.rt, self.n = rt, n
        self.ks = load_kernels(rt, "mul")
        self.parts = partitions(n, nparts)

    def setup(self):
        rt, ks, n = self.rt, self.ks, self.n
        self.a = [rt.array("float32", r * n) for _, r in self.parts]
        for (row0, r), a in zip(self.parts, self.a):
            ks.mul_init_matrix(grid_1d(r * n), BLOCK)(a, row0, r, n)
        self.v = rt.array("float32", n)
        ks.mul_init_vector(grid_1d(n), BLOCK)(self.v, n)
        self.z = [rt.array("float32", r) for _, r in self.parts]
        to_host(self.a + [self.v])

    def prepare(self):
        host_only(self.a + [self.v])  # the paper rewrites the matrix and vector on the host

    def run(self):
        ks, n = self.ks, self.n
        for (_, r), a, z in zip(self.parts, self.a, self.z):
            grid, chunk = matvec_geometry(r, n)
            ks.linalg_zero(grid_1d(r), BLOCK)(z, r)
            ks.linalg_matvec(grid, BLOCK)(z, a, self.v, r, n, chunk)
        self.fetch(self.z)

    def sample(self):
        return sample_partitioned(self.z, self.parts, self.n, SAMPLE_LIMIT)


class PolygpuSplit(Workload):
    """MUL written the natural way (version polygpu-split): the whole matrix, one launch of the
    product, which the runtime splits over the devices by rows (the signature: a block reads its
    row of the matrix and all of the vector, and writes its element of z)."""

    def __init__(self, rt, n, nparts):
        self.rt, self.n = rt, n
        self.ks = load_kernels(rt, "mul")
        self.parts = [(0, n)]

    def setup(self):
        rt, ks, n = self.rt, self.ks, self.n
        self.a = rt.array("float32", (n, n))
        ks.mul_init_matrix_split(n, BLOCK)(self.a, n)
        self.v = rt.array("float32", n)
        ks.mul_init_vector(grid_1d(n), BLOCK)(self.v, n)
        self.z = rt.array("float32", n)
        to_host([self.a, self.v])

    def prepare(self):
        host_only([self.a, self.v])  # the paper rewrites the matrix and vector on the host

    def run(self):
        self.ks.mul_matvec_split(self.n, BLOCK)(self.z, self.a, self.v, self.n)
        self.fetch([self.z])

    def sample(self):
        return sample_partitioned([self.z], self.parts, self.n, SAMPLE_LIMIT)


def reference(n):
    """z at the sampled rows, in float64."""
    rows = sample_indices(n, SAMPLE_LIMIT)
    v = np_uniform(np.arange(n, dtype=np.int64), 8).astype(np.float64)
    z = np.empty(rows.size)
    cols = np.arange(n, dtype=np.int64)[None, :]
    for s0 in range(0, rows.size, 256):
        r = rows[s0:s0 + 256, None]
        z[s0:s0 + r.shape[0]] = np_uniform(r * n + cols, 7).astype(np.float64) @ v
    return {"z": z}


def check(sample, ref, n):
    """``(ok, message)``: every sampled element within 1e-4 relative (float32 sums of n
    positive products)."""
    want = ref["z"]
    if sample.shape != want.shape:
        return False, "got %d values, expected %d" % (sample.size, want.size)
    err = float((np.abs(sample - want) / np.abs(want)).max())
    return err <= 1e-4, "%d rows checked, worst relative error %.2g" % (want.size, err)

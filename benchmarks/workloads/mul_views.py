"""MUL-VIEWS: MUL (see MUL) with ONE matrix array and ONE result array: every partition's
product takes a view of the matrix (its rows, copied from the host on their own) and writes a
view of z, and the host reads z view by view. Same kernels, sizes, reference and check as MUL;
compare with MUL's one-array-per-partition version."""

import numpy as np

from . import mul
from .common import BLOCK, grid_1d, host_only, sample_indices, to_host
from .mul import (PARTITIONS, SAMPLE_LIMIT, SIZES, check, describe, device_bytes,  # noqa: F401
                  extra_args, reference, sample_total)

NAME, TITLE = "mul-views", "MUL (views)"
#: the workload it varies: its references are shared, its CUDA C baseline is the same program
BASE = "mul"
#: only the polygpu versions exist
ONLY_VERSIONS = ("polygpu", "polygpu-elided")


class Polygpu(mul.Polygpu):
    """MUL through polygpu on views: zero and matvec per partition on its views of the matrix
    and of z; the host reads every view of z."""

    def setup(self):
        rt, ks, n = self.rt, self.ks, self.n
        # Partition i's rows are elements [row0 n, (row0 + r) n) of one array, column-major
        # inside the partition as mul_init_matrix and linalg_matvec have them.
        self.matrix = rt.array("float32", n * n)
        self.a = [self.matrix[row0 * n:(row0 + r) * n] for row0, r in self.parts]
        for (row0, r), a in zip(self.parts, self.a):
            ks.mul_init_matrix(grid_1d(r * n), BLOCK)(a, row0, r, n)
        self.v = rt.array("float32", n)
        ks.mul_init_vector(grid_1d(n), BLOCK)(self.v, n)
        self.result = rt.array("float32", n)
        self.z = [self.result[row0:row0 + r] for row0, r in self.parts]
        to_host([self.matrix, self.v])

    def prepare(self):
        host_only([self.matrix, self.v])  # the paper rewrites the matrix and vector on the host

    def sample(self):
        return np.asarray(self.result)[sample_indices(self.n, SAMPLE_LIMIT)].astype(np.float64)

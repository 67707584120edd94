"""CG-VIEWS: CG (see CG) with ONE matrix array and ONE result array: every partition's product
takes a view of the matrix (its rows) and writes a view of y (its rows of A p), so the partial
products need no gather kernels: the dot product and the updates read y whole, which brings
only the rows made on other devices. Same kernels, sizes, reference and check as CG; compare
with CG's one-array-per-partition version."""

from . import cg
from .cg import (PARTITIONS, SAMPLE_LIMIT, SIZES, check, describe,  # noqa: F401
                 device_bytes, diagonal, extra_args, reference, sample_total)
from .common import BLOCK, grid_1d, grid_reduce, matvec_geometry

NAME, TITLE = "cg-views", "CG (views)"
#: the workload it varies: its references are shared, its CUDA C baseline is the same program
BASE = "cg"
#: only the polygpu versions exist
ONLY_VERSIONS = ("polygpu", "polygpu-elided")


class Polygpu(cg.Polygpu):
    """CG through polygpu on views: per iteration, zero and product per partition on its view of
    the matrix and of y, then the four vector/scalar kernels on the gathering device."""

    def setup(self):
        rt, ks, n = self.rt, self.ks, self.n
        # Partition i's rows are elements [row0 n, (row0 + r) n) of one array, column-major
        # inside the partition as cg_init_matrix and linalg_matvec have them.
        self.matrix = rt.array("float32", n * n)
        self.a = [self.matrix[row0 * n:(row0 + r) * n] for row0, r in self.parts]
        for (row0, r), a in zip(self.parts, self.a):
            ks.cg_init_matrix(grid_1d(r * n), BLOCK)(a, row0, r, n, diagonal(n))
        self.b = rt.array("float32", n)
        ks.cg_init_b(grid_1d(n), BLOCK)(self.b, n)
        self.x, self.r, self.p, self.y = (rt.array("float32", n) for _ in range(4))
        self.scalars = rt.array("float32", 4)  # rr, p.Ap, rr_new
        self.yp = [self.y[row0:row0 + r] for row0, r in self.parts]
        self.record()

    def iteration(self):
        ks, n = self.ks, self.n
        g1, gr = grid_1d(n), grid_reduce(n)
        for (_, r), a, yp in zip(self.parts, self.a, self.yp):
            grid, chunk = matvec_geometry(r, n)
            ks.linalg_zero(grid_1d(r), BLOCK)(yp, r)
            ks.linalg_matvec(grid, BLOCK)(yp, a, self.p, r, n, chunk)
        ks.cg_dot(gr, BLOCK)(self.scalars, self.p, self.y, n, 1)
        ks.cg_update_xr(gr, BLOCK)(self.x, self.r, self.scalars, self.p, self.y, n)
        ks.cg_update_p(g1, BLOCK)(self.p, self.r, self.scalars, n)
        ks.cg_rotate(1, 32)(self.scalars)


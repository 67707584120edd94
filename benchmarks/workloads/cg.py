"""CG: conjugate gradient on a dense symmetric positive definite matrix partitioned by rows.
Each iteration multiplies every partition by the whole direction vector p (p goes to every
GPU), gathers the partial products into one vector on one device, and updates the vectors and
scalars there (alpha and beta never leave the device). The matrix stays on the devices between
runs; a run is the reset plus the size's iterations plus the host read of x. A size is (matrix
order n, iterations): 25 iterations up to `large`, the paper's 50 at its sizes."""

import math
import os

import numpy as np

from .common import (BLOCK, fmt_bytes, Workload, grid_1d, grid_reduce, load_kernels,
                     matvec_geometry, np_uniform, partitions, sample_indices)

NAME, TITLE = "cg", "CG"
#: (matrix order n (n x n float32), iterations)
SIZES = {"tiny": (256, 25), "small": (4096, 25), "medium": (16384, 25), "large": (49152, 25),
         # the GrCUDA paper's range: order 20k to 60k, 50 iterations
         "paper-min": (20000, 50), "paper-mid": (40000, 50), "paper-max": (60000, 50)}
PARTITIONS = 16
#: PGB_CG_RECORD: "1" (default) the iteration is recorded once (Runtime.record) and replayed
#: each iteration; "run": a whole run's calls (reset and every iteration) are recorded once and
#: replayed once per run, as the CUDA C baseline captures its run as one CUDA graph; "0": eager
RECORD_MODE = os.environ.get("PGB_CG_RECORD", "1")
if RECORD_MODE not in ("0", "1", "run"):
    raise ValueError("PGB_CG_RECORD must be 0, 1 or run, not %r" % RECORD_MODE)
RECORD = RECORD_MODE != "0"
SAMPLE_LIMIT = 1 << 20  # x is checked whole
CHECK_ROWS = 1024  # rows of the residual b - A x checked


def describe(size):
    """The size in words."""
    n, iterations = size
    return "%d x %d float32 matrix (%s), %d iterations" % (n, n, fmt_bytes(4 * n * n), iterations)


def device_bytes(size):
    """Device memory over all GPUs: the matrix and a few vectors."""
    n = size[0]
    return 4 * n * n + 40 * n


def sample_total(size):
    """Number of output elements: x."""
    return size[0]


def extra_args(size):
    """Arguments of the other versions besides --n."""
    return ["--iterations", str(size[1])]


def diagonal(n):
    """The diagonal shift of cg_init_matrix, a float32 computed the same way in C."""
    return float(np.float32(0.8 * math.sqrt(n)))


class Polygpu(Workload):
    """CG through polygpu: per iteration, 2 kernels per partition for the product, one
    gather per partition, and four vector/scalar kernels on the gathering device."""

    def __init__(self, rt, size, nparts):
        (n, self.iterations), self.rt = size, rt
        self.n = n
        self.ks = load_kernels(rt, "cg")
        self.parts = partitions(n, nparts)

    def setup(self):
        rt, ks, n = self.rt, self.ks, self.n
        self.a = [rt.array("float32", r * n) for _, r in self.parts]
        for (row0, r), a in zip(self.parts, self.a):
            ks.cg_init_matrix(grid_1d(r * n), BLOCK)(a, row0, r, n, diagonal(n))
        self.b = rt.array("float32", n)
        ks.cg_init_b(grid_1d(n), BLOCK)(self.b, n)
        self.x, self.r, self.p, self.y = (rt.array("float32", n) for _ in range(4))
        self.scalars = rt.array("float32", 4)  # rr, p.Ap, rr_new
        self.yp = [rt.array("float32", r) for _, r in self.parts]
        self.record()

    def record(self):
        """Record one iteration, or a whole run (PGB_CG_RECORD)."""
        self.graph = self.run_graph = None
        if RECORD_MODE == "run":
            with self.rt.record() as g:
                self.calls()
            self.run_graph = g
        elif RECORD:
            with self.rt.record() as g:
                self.iteration()
            self.graph = g

    def run(self):
        if self.run_graph:
            self.run_graph()
        else:
            self.calls()
        self.fetch([self.x])

    def calls(self):
        """A run's calls: the reset, then the iterations (replayed when one was recorded)."""
        ks, n = self.ks, self.n
        g1, gr = grid_1d(n), grid_reduce(n)
        ks.cg_reset(g1, BLOCK)(self.x, self.r, self.p, self.scalars, self.b, n)
        ks.cg_dot(gr, BLOCK)(self.scalars, self.r, self.r, n, 0)
        for _ in range(self.iterations):
            if self.graph:
                self.graph()
            else:
                self.iteration()

    def iteration(self):
        """One CG iteration's calls (recorded once when RECORD)."""
        ks, n = self.ks, self.n
        g1, gr = grid_1d(n), grid_reduce(n)
        for (_, r), a, yp in zip(self.parts, self.a, self.yp):
            grid, chunk = matvec_geometry(r, n)
            ks.linalg_zero(grid_1d(r), BLOCK)(yp, r)
            ks.linalg_matvec(grid, BLOCK)(yp, a, self.p, r, n, chunk)
        for (row0, r), yp in zip(self.parts, self.yp):
            ks.cg_gather(grid_1d(r), BLOCK)(self.y, yp, row0, r)
        ks.cg_dot(gr, BLOCK)(self.scalars, self.p, self.y, n, 1)
        ks.cg_update_xr(gr, BLOCK)(self.x, self.r, self.scalars, self.p, self.y, n)
        ks.cg_update_p(g1, BLOCK)(self.p, self.r, self.scalars, n)
        ks.cg_rotate(1, 32)(self.scalars)

    def sample(self):
        return np.asarray(self.x).copy()


def matrix_rows(rows, n):
    """Rows of the CG matrix (float64), as cg_init_matrix makes them."""
    rows = np.asarray(rows, dtype=np.int64)[:, None]
    cols = np.arange(n, dtype=np.int64)[None, :]
    lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
    v = np_uniform(lo * n + hi, 5) - np.float32(0.5)
    v = np.where(rows == cols, v + np.float32(diagonal(n)), v)
    return v.astype(np.float64)


def reference(size):
    """b and CHECK_ROWS rows of A (the residual of x is checked on them)."""
    n = size[0]
    rows = sample_indices(n, CHECK_ROWS)
    b = np_uniform(np.arange(n, dtype=np.int64), 6).astype(np.float64)
    return {"rows": rows, "a_rows": matrix_rows(rows, n), "b": b}


def check(sample, ref, size):
    """``(ok, message)``: x has n finite values and the relative residual
    ``|b - A x| / |b|`` over the checked rows is below 1e-4."""
    n = size[0]
    if sample.shape != (n,) or not np.isfinite(sample).all():
        return False, "x has %d values (expected %d) or non-finite ones" % (sample.size, n)
    x = sample.astype(np.float64)
    rows, b = ref["rows"], ref["b"]
    res = np.linalg.norm(b[rows] - ref["a_rows"] @ x) / np.linalg.norm(b[rows])
    return res <= 1e-4, "relative residual %.2e on %d rows" % (res, rows.size)

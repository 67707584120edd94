"""JACOBI: 5-point Jacobi sweeps on an n x n float32 grid with fixed boundary values, the rows
split over the devices by views of ONE array per grid (two grids, swapped every sweep). A
partition's sweep reads its rows of one grid plus a halo row above and below (the view
[lo - 1, hi + 1), clipped at the edges) and writes its rows of the other (the view [lo, hi)), so
between devices only the halo rows move. A run resets the first grid, makes the size's sweeps
(an even number: the result is back in the first grid) and ends with the host reading the
residual of the last sweep, summed per partition on the devices. A size is (grid order n,
sweeps)."""

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import common
from .common import (BLOCK, fmt_bytes, Workload, grid_reduce, load_kernels, np_uniform,
                     partitions, stencil_geometry)

NAME, TITLE = "jacobi", "JACOBI"
#: (grid order n (two n x n float32 grids), sweeps per run; n a multiple of 16, sweeps even)
SIZES = {"tiny": (256, 20), "small": (2048, 100), "medium": (8192, 100), "large": (12288, 100)}
PARTITIONS = 16
#: the sweeps are recorded once (two of them, Runtime.record) and replayed; PGB_JACOBI_RECORD=0:
#: issued eagerly
RECORD = os.environ.get("PGB_JACOBI_RECORD", "1") != "0"
#: partitions per recording (PGB_JACOBI_RECORD_PARTITIONS). The views cut each grid in three
#: pieces per partition (its first row, the middle, its last row) and a plan replay is one
#: computation of every piece its calls touch: 50 for a sweep of 8 partitions, 92 for 16. A
#: replay once took at most 64 pieces, hence 8; it takes any number now (test_slices
#: many_pieces_replayed), and 16 (one recording per sweep) also becomes a plan, but every
#: figure of the suite so far was measured with 8, which stays the default until 16 is.
RECORD_PARTITIONS = int(os.environ.get("PGB_JACOBI_RECORD_PARTITIONS", "8"))
SAMPLE_LIMIT = 1 << 20  # the checked rows are validated whole
#: run.py measures the copies of one run of the polygpu version (a traced run) for the report
COPY_TIME = True
#: the reference simulates the whole grid up to this order (and then checks the residual too);
#: above, bands of rows around the checked rows
FULL_REFERENCE = 2048


def describe(size):
    """The size in words."""
    n, sweeps = size
    return "two %d x %d float32 grids (%s each), %d sweeps" % (n, n, fmt_bytes(4 * n * n), sweeps)


def device_bytes(size):
    """Device memory over all GPUs: the two grids (halo rows are counted once)."""
    n = size[0]
    return 8 * n * n + 8 * 256 * 64


def check_rows(n):
    """The validated rows of the result grid: the two first and the two last, and the rows on
    each side of every boundary between 16 equal blocks of rows (the partition boundaries for
    2, 4, 8 and 16 partitions, where the halos are). The same list in every version."""
    s = n // 16
    rows = [0, 1]
    for k in range(1, 16):
        rows += [k * s - 1, k * s]
    return rows + [n - 2, n - 1]


def sample_total(size):
    """Number of output elements: the checked rows one after the other, then the residual."""
    n = size[0]
    return len(check_rows(n)) * n + 1


def extra_args(size):
    """Arguments of the other versions besides --n."""
    return ["--iterations", str(size[1])]


def halo_bytes(size, gpus, nparts):
    """Bytes between devices per run when the partitions sit contiguously on the devices: each
    sweep, every boundary between two devices sends one row each way."""
    n, sweeps = size
    return sweeps * 2 * max(0, gpus - 1) * 4 * n


def whole_array_bytes(size, gpus, nparts):
    """Whole-array coherence, the issue's model: every sweep each partition needs the whole grid
    it reads, P x 4 n^2 bytes per sweep on more than one device (0 on one)."""
    n, sweeps = size
    if gpus < 2:
        return 0
    return sweeps * len(partitions(n, nparts)) * 4 * n * n


def whole_array_min_bytes(size, gpus, nparts):
    """The least whole-array coherence could move with one array per grid and the partitions
    placed contiguously: each sweep, the grid read goes whole to the G - 1 devices that did not
    write it last, and the grid written (partitions write it in place, so whole) changes device
    G - 1 times: 2 (G - 1) x 4 n^2 bytes per sweep."""
    n, sweeps = size
    return sweeps * 2 * max(0, gpus - 1) * 4 * n * n


class Polygpu(Workload):
    """JACOBI through polygpu: per sweep one kernel per partition on views (its rows of the grid
    written, its rows and halo of the grid read); per run an init and a residual kernel per
    partition, and one host read of the partial sums."""

    def __init__(self, rt, size, nparts):
        (self.n, self.iterations), self.rt = size, rt
        if self.n % 16 or self.iterations % 2:
            raise ValueError("JACOBI needs n a multiple of 16 and an even number of sweeps")
        self.ks = load_kernels(rt, "jacobi")
        self.parts = partitions(self.n, nparts)
        self.record = RECORD
        self.residual = None

    def setup(self):
        rt, n = self.rt, self.n
        self.u = rt.array("float32", (n, n))
        self.v = rt.array("float32", (n, n))
        # Views: each partition's own rows, and its rows with the halo.
        self.u_own = [self.u[lo:lo + r] for lo, r in self.parts]
        self.v_own = [self.v[lo:lo + r] for lo, r in self.parts]
        self.u_halo = [self.u[max(lo - 1, 0):min(lo + r + 1, n)] for lo, r in self.parts]
        self.v_halo = [self.v[max(lo - 1, 0):min(lo + r + 1, n)] for lo, r in self.parts]
        # One row of 256 block sums per partition, each row a view.
        self.partial = rt.array("float64", (len(self.parts), 256))
        self.partial_rows = self.partial.split(len(self.parts))
        self.graphs = []
        if self.record:
            # One recording per sweep and group of RECORD_PARTITIONS partitions.
            for src, dst in ((self.u_halo, self.v_own), (self.v_halo, self.u_own)):
                for p0 in range(0, len(self.parts), RECORD_PARTITIONS):
                    with rt.record() as g:
                        self.sweep(src, dst, p0, p0 + RECORD_PARTITIONS)
                    self.graphs.append(g)

    def sweep(self, src, dst, p0=0, p1=None):
        """One sweep of partitions p0..p1-1: views src (rows and halo) to dst (rows)."""
        ks, n = self.ks, self.n
        for (lo, r), s, d in list(zip(self.parts, src, dst))[p0:p1]:
            ks.jacobi_sweep(*stencil_geometry(r, n))(d, s, lo, r, max(lo - 1, 0), n)

    def sweep_pair(self):
        """Two sweeps: u to v, then v to u."""
        if self.graphs:
            for g in self.graphs:
                g()
        else:
            self.sweep(self.u_halo, self.v_own)
            self.sweep(self.v_halo, self.u_own)

    def run(self):
        ks, n = self.ks, self.n
        for (lo, r), u in zip(self.parts, self.u_own):
            ks.jacobi_init(*stencil_geometry(r, n))(u, lo, r, n)
        for _ in range(self.iterations // 2):
            self.sweep_pair()
        for (lo, r), p, u, v in zip(self.parts, self.partial_rows, self.u_own, self.v_own):
            ks.jacobi_residual(grid_reduce(r * n), BLOCK)(p, u, v, r * n)
        self.fetch(self.partial_rows)  # each waits for its own partition
        if not common.TIMING_ONLY:  # simulated devices that compute nothing have no residual
            self.residual = float(np.asarray(self.partial).sum())  # current on the host now

    def sample(self):
        rows = [np.asarray(self.u[r:r + 1]).astype(np.float64).reshape(-1)
                for r in check_rows(self.n)]
        return np.concatenate(rows + [np.array([self.residual], dtype=np.float64)])


class PolygpuSplit(Workload):
    """JACOBI written the natural way (version polygpu-split): per sweep one launch over the
    whole grids, which the runtime splits over the devices by rows (the signature: a block
    writes its row and reads it with one halo row on each side), so only halo rows move; the
    sweeps recorded (one recording of two sweeps, replayed) as the hand-partitioned version
    does; per-row residuals the host adds. No views, no partitions in the script."""

    def __init__(self, rt, size, nparts):
        (self.n, self.iterations), self.rt = size, rt
        if self.n % 16 or self.iterations % 2:
            raise ValueError("JACOBI needs n a multiple of 16 and an even number of sweeps")
        self.ks = load_kernels(rt, "jacobi")
        self.record = RECORD
        self.residual = None

    def setup(self):
        rt, n, ks = self.rt, self.n, self.ks
        self.u = rt.array("float32", (n, n))
        self.v = rt.array("float32", (n, n))
        self.partial = rt.array("float64", n)
        self.graph = None
        if self.record:
            with rt.record() as g:
                self.sweep_pair()
            self.graph = g

    def sweep_pair(self):
        """Two sweeps: u to v, then v to u."""
        ks, n = self.ks, self.n
        ks.jacobi_sweep_split(n, BLOCK)(self.v, self.u, n)
        ks.jacobi_sweep_split(n, BLOCK)(self.u, self.v, n)

    def run(self):
        ks, n = self.ks, self.n
        ks.jacobi_init_split(n, BLOCK)(self.u, n)
        for _ in range(self.iterations // 2):
            if self.graph:
                self.graph()
            else:
                self.sweep_pair()
        ks.jacobi_residual_split(n, BLOCK)(self.partial, self.u, self.v, n)
        self.fetch([self.partial])
        if not common.TIMING_ONLY:
            view = np.asarray(self.partial)
            self.residual = float(view.sum())
            del view

    def sample(self):
        rows = [np.asarray(self.u[r:r + 1]).astype(np.float64).reshape(-1)
                for r in check_rows(self.n)]
        return np.concatenate(rows + [np.array([self.residual], dtype=np.float64)])


# ---------------------------------------------------------------- the NumPy reference

def start_rows(lo, hi, n):
    """Rows [lo, hi) of the start grid (float32), as jacobi_init makes them."""
    r = np.arange(lo, hi, dtype=np.int64)[:, None]
    c = np.arange(n, dtype=np.int64)[None, :]
    return np_uniform(r * n + c, 9)


def simulate(block, sweeps):
    """``sweeps`` sweeps on a block of whole rows whose first and last rows are held (the grid's
    boundary rows, or cuts whose error moves inward one row per sweep), in float32 with the
    kernel's order of additions. Returns (after the last sweep, before it)."""
    a = block.copy()
    b = block.copy()  # the boundary columns and the held rows never change
    q = np.float32(0.25)
    for _ in range(sweeps):
        b[1:-1, 1:-1] = q * (((a[:-2, 1:-1] + a[2:, 1:-1]) + a[1:-1, :-2]) + a[1:-1, 2:])
        a, b = b, a
    return a, b


def bands(rows, n, sweeps):
    """Merged row ranges [lo, hi) around the checked rows, wide enough that a row's value after
    `sweeps` sweeps does not see the cuts: [r - sweeps - 1, r + sweeps + 2) clipped."""
    out = []
    for r in sorted(set(rows)):
        lo, hi = max(0, r - sweeps - 1), min(n, r + sweeps + 2)
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def reference(size):
    """The checked rows of the result (float64 of the float32 values) and, up to
    FULL_REFERENCE, the residual of the last sweep (NaN above: not checked)."""
    n, sweeps = size
    rows = check_rows(n)
    values = np.empty((len(rows), n), dtype=np.float64)
    if n <= FULL_REFERENCE:
        final, before = simulate(start_rows(0, n, n), sweeps)
        values[:] = final[rows]
        d = final.astype(np.float64) - before.astype(np.float64)
        residual = float(np.sum(d * d))
    else:
        def band(lh):
            lo, hi = lh
            final, _ = simulate(start_rows(lo, hi, n), sweeps)
            return lo, hi, final

        workers = max(1, min(os.cpu_count() or 1, 16))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for lo, hi, final in pool.map(band, bands(rows, n, sweeps)):
                for i, r in enumerate(rows):
                    if lo <= r < hi:
                        values[i] = final[r - lo]
        residual = math.nan
    return {"rows": np.array(rows, dtype=np.int64), "values": values,
            "residual": np.array([residual])}


def check(sample, ref, size):
    """``(ok, message)``: every value of the checked rows within 1e-5 of the reference (values
    lie in [0, 1)), and the residual within 1e-4 relative where the reference has it."""
    n = size[0]
    want = ref["values"]
    if sample.shape != (want.size + 1,):
        return False, "got %d values, expected %d" % (sample.size, want.size + 1)
    got = sample[:-1].reshape(want.shape)
    if not np.isfinite(sample).all():
        return False, "non-finite values"
    err = float(np.abs(got - want).max())
    bad_rows = sorted({int(ref["rows"][i]) for i in np.nonzero(
        np.abs(got - want).max(axis=1) > 1e-5)[0]})
    msg = "%d rows of %d checked, worst error %.2g" % (len(ref["rows"]), n, err)
    ok = err <= 1e-5
    if not ok:
        msg += " (rows %s)" % ", ".join(str(r) for r in bad_rows[:8])
    want_res, got_res = float(ref["residual"][0]), float(sample[-1])
    if math.isnan(want_res):
        msg += "; residual %.6g (not checked at this size)" % got_res
    else:
        rel = abs(got_res - want_res) / max(abs(want_res), 1e-30)
        ok = ok and rel <= 1e-4
        msg += "; residual %.6g, relative error %.2g" % (got_res, rel)
    return ok, msg

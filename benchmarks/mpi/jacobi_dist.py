"""jacobi_dist.py: the 5-point Jacobi stencil with the rows of the grid distributed over MPI
ranks, the same script on every rank (polygpu's views with ``.owner`` and ``split``), checked
against NumPy.

    PYTHONPATH=build/bindings/python python3 benchmarks/mpi/jacobi_dist.py --size small
    PYTHONPATH=build/bindings/python mpirun -np 2 python3 benchmarks/mpi/jacobi_dist.py --size small

The problem, kernels and sizes are benchmarks/workloads/jacobi.py's: two n x n float32 grids,
the rows cut in --parts partitions (8 by default, whatever the ranks); partition i's rows of
both grids are views owned by rank ``i * nranks // parts``, so its sweeps run there; a sweep
reads the partition's rows plus one halo row above and below (a view of the other grid), and
polygpu moves only those halo rows between ranks. A run: jacobi_init on every partition, the
sweeps (an even number), jacobi_residual per partition into one row of a (parts x 256) array
split over the ranks, and the host read of that array (every rank gets it). Seconds per
iteration = median run / sweeps. Rank 0 prints one JSON line (see _dist.report) and checks the
rows on each side of every 1/16 boundary against NumPy (jacobi.check: 1e-5, and the residual to
1e-4 up to n = 2048). Recordings are not used (not across ranks)."""

import sys

import numpy as np

import _dist
from workloads import jacobi
from workloads.common import BLOCK, grid_reduce, load_kernels, partitions, stencil_geometry


def main():
    args = _dist.parse(__doc__.splitlines()[0], jacobi.SIZES, "small", 8)
    n, sweeps = args.n, args.iterations
    if n % 16 or sweeps % 2:
        raise SystemExit("jacobi_dist: n must be a multiple of 16 and the sweeps even")
    rt = _dist.runtime(args)
    ks = load_kernels(rt, "jacobi")
    parts = partitions(n, args.parts)
    P = len(parts)
    owners = [_dist.owner(i, P, rt.nranks) for i in range(P)]
    u = rt.array("float32", (n, n))
    v = rt.array("float32", (n, n))
    u_own = [u[lo:lo + r] for lo, r in parts]
    v_own = [v[lo:lo + r] for lo, r in parts]
    for views in (u_own, v_own):
        for view, o in zip(views, owners):
            view.owner = o
    # Read-only views (rows and halo): their owner does not matter, the kernels run where the
    # rows they write live.
    u_halo = [u[max(lo - 1, 0):min(lo + r + 1, n)] for lo, r in parts]
    v_halo = [v[max(lo - 1, 0):min(lo + r + 1, n)] for lo, r in parts]
    partial = rt.array("float64", (P, 256))
    partial_rows = partial.split(P)
    assert [p.owner for p in partial_rows] == owners, ([p.owner for p in partial_rows], owners)
    geo = [stencil_geometry(r, n) for _, r in parts]

    def sweep(src, dst):
        for (lo, r), s, d, g in zip(parts, src, dst, geo):
            ks.jacobi_sweep(*g)(d, s, lo, r, max(lo - 1, 0), n)

    def run():
        for (lo, r), w, g in zip(parts, u_own, geo):
            ks.jacobi_init(*g)(w, lo, r, n)
        for _ in range(sweeps // 2):
            sweep(u_halo, v_own)
            sweep(v_halo, u_own)
        for (lo, r), pr, a, b in zip(parts, partial_rows, u_own, v_own):
            ks.jacobi_residual(grid_reduce(r * n), BLOCK)(pr, a, b, r * n)
        memoryview(partial).release()  # the host read of the partial sums on every rank

    runs = _dist.timed(rt, run, args.warmup, args.repeats)
    residual = float(np.asarray(partial).sum())
    rows = [np.asarray(u[r:r + 1]).astype(np.float64).reshape(-1) for r in jacobi.check_rows(n)]
    sample = np.concatenate(rows + [np.array([residual])])
    checksum = "%.9e/%.6e" % (float(np.sum(sample[:-1])), residual)
    ok, msg = True, "not checked"
    if rt.rank == 0 and not args.no_check:
        ok, msg = jacobi.check(sample, _dist.reference(jacobi, (n, sweeps)), (n, sweeps))
    _dist.report(rt, "jacobi", args, runs, sweeps, checksum, bool(ok), msg)
    rt.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

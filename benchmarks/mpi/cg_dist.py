"""cg_dist.py: CG with the rows of the matrix and of every vector distributed over MPI ranks,
the same script on every rank (polygpu's ``owner=`` and views), checked against NumPy.

    PYTHONPATH=build/bindings/python python3 benchmarks/mpi/cg_dist.py --size small
    PYTHONPATH=build/bindings/python mpirun -np 2 python3 benchmarks/mpi/cg_dist.py --size small

The problem is benchmarks/workloads/cg.py's (the same dense SPD matrix made by cg_init_matrix,
the same b, sizes and iterations), but nothing is gathered on one device: the rows are cut in
--parts partitions (8 by default, whatever the ranks), partition i's matrix rows are an array
owned by rank ``i * nranks // parts`` (``owner=``), and x, r, p, y are whole arrays whose
partition views carry the same owners (``.owner``). Each iteration, per partition: the product
of its rows by the whole p (polygpu brings every rank the pieces of p it lacks), its partial
dot product p.Ap, the x/r update with alpha from the sum of all partials, its partial r.r, then
the p update with beta (kernels/cg_dist.cu; the partials are arrays of one element per
partition, split over the ranks, read whole by every partition). A run is the reset plus the
iterations plus the host read of x (every rank gets it); seconds per iteration = median run /
iterations. Rank 0 prints one JSON line (see _dist.report) and checks x: the relative residual
|b - A x| / |b| on 1024 rows below 1e-4 (cg.check). Recordings are not used (not across ranks)."""

import sys

import numpy as np

import _dist
from workloads import cg
from workloads.common import BLOCK, grid_1d, load_kernels, matvec_geometry, partitions


def main():
    args = _dist.parse(__doc__.splitlines()[0], cg.SIZES, "small", 8)
    n, iters = args.n, args.iterations
    rt = _dist.runtime(args)
    nranks = rt.nranks
    kc, kd = load_kernels(rt, "cg"), load_kernels(rt, "cg_dist")
    parts = partitions(n, args.parts)
    P = len(parts)
    owners = [_dist.owner(i, P, nranks) for i in range(P)]

    mats = [rt.array("float32", r * n, owner=o) for (_, r), o in zip(parts, owners)]
    x, res, p, y = (rt.array("float32", n) for _ in range(4))

    def views(v):
        out = [v[row0:row0 + r] for row0, r in parts]
        for view, o in zip(out, owners):
            view.owner = o
        return out

    xs, rs, ps, ys = views(x), views(res), views(p), views(y)
    # The partials: one element per partition, in blocks of partitions per rank (split).
    pap, rr_a, rr_b = (rt.array("float32", P) for _ in range(3))
    pap_s, rr_a_s, rr_b_s = pap.split(P), rr_a.split(P), rr_b.split(P)
    assert [v.owner for v in pap_s] == owners, ([v.owner for v in pap_s], owners)
    for (row0, r), a in zip(parts, mats):
        kc.cg_init_matrix(grid_1d(r * n), BLOCK)(a, row0, r, n, cg.diagonal(n))
    geo = [matvec_geometry(r, n) for _, r in parts]

    def run():
        for i, (row0, r) in enumerate(parts):
            kd.cg_dist_reset(1, BLOCK)(xs[i], rs[i], ps[i], rr_a_s[i], row0, r)
        for k in range(iters):
            rr, rr_s, rrn, rrn_s = ((rr_a, rr_a_s, rr_b, rr_b_s) if k % 2 == 0 else
                                    (rr_b, rr_b_s, rr_a, rr_a_s))
            for i, (_, r) in enumerate(parts):
                grid, chunk = geo[i]
                kc.linalg_zero(grid_1d(r), BLOCK)(ys[i], r)
                kc.linalg_matvec(grid, BLOCK)(ys[i], mats[i], p, r, n, chunk)
                kd.cg_dist_dot(1, BLOCK)(pap_s[i], ps[i], ys[i], r)
            for i, (_, r) in enumerate(parts):
                kd.cg_dist_update_xr(1, BLOCK)(xs[i], rs[i], rrn_s[i], ps[i], ys[i], pap, rr, P, r)
            for i, (_, r) in enumerate(parts):
                kd.cg_dist_update_p(grid_1d(r), BLOCK)(ps[i], rs[i], rrn, rr, P, r)
        memoryview(x).release()  # the host read of x on every rank

    runs = _dist.timed(rt, run, args.warmup, args.repeats)
    xv = np.asarray(x).astype(np.float64).copy()
    checksum = "%.5e" % float(np.sum(xv))
    ok, msg = True, "not checked"
    if rt.rank == 0 and not args.no_check:
        ok, msg = cg.check(xv.astype(np.float32), _dist.reference(cg, (n, iters)), (n, iters))
    _dist.report(rt, "cg", args, runs, iters, checksum, bool(ok), msg)
    rt.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

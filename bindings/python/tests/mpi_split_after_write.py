"""mpi_split_after_write.py: issue 35's script, run by mpirun on 1 to 4 ranks (not a pytest
module: every rank runs it whole). An array written from the host on every rank (asarray: the
owner's data is the value) and then split over the ranks must give every rank the right value:
it printed 8394752.0 on two ranks when a piece cut after the write forgot that only its owner
held the written value."""
import numpy as np

import polygpu as pg

SRC = r'''extern "C" __global__ void add1(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }'''
with pg.Runtime(devices="host:1") as rt:
    k = rt.kernel(SRC, "add1"); n = 1 << 12
    x = rt.asarray(np.arange(2 * n, dtype=np.float32))
    y = rt.array("float32", 2 * n)
    for a, b in zip(y.split(2), x.split(2)):
        k(n // 256, 256)(a, b, n)
    total = float(y.to_numpy().sum())
    print(rt.rank, total)
    assert total == 33558528.0, (rt.rank, total)
    # the same read right after the write, and through views of views
    x2 = rt.asarray(np.arange(2 * n, dtype=np.float32))
    assert x2[5000] == 5000.0, (rt.rank, x2[5000])
    v = x2[1000:7000][3000:5000]
    assert v[1000] == 5000.0 and float(v.to_numpy().sum()) == float(np.arange(4000, 6000).sum())
    print("rank %d of %d: ok" % (rt.rank, rt.nranks))

# Every kind of host write, on every rank with data of its own where it does not own the
# elements (the owner's data is the value), then views split over the ranks and views of views
# read on every rank; the expected values are one process's.
with pg.Runtime(devices="host:1") as rt:
    n = 1000
    mine = float(rt.rank * 1000)  # what a non-owner passes: it must not count
    z = rt.array("float32", n, owner=rt.nranks - 1)
    z.copy_from(np.arange(n, dtype=np.float32) + (0 if rt.rank == rt.nranks - 1 else mine))
    want = np.arange(n, dtype=np.float32)
    z[7] = 70.0 if rt.rank == rt.nranks - 1 else -1.0
    want[7] = 70.0
    parts = z.split(rt.nranks + 1)  # the views over the ranks in blocks, cut after the writes
    owner = np.zeros(n, dtype=int)
    lo = 0
    for i, p in enumerate(parts):
        owner[lo:lo + len(p)] = p.owner
        vals = np.full(len(p), 5.0 + i, dtype=np.float32)
        p.copy_from(vals if rt.rank == p.owner else vals + mine + 1)
        want[lo:lo + len(p)] = vals
        lo += len(p)
    w = z[100:900][50:600]  # a view of a view, over several owners: slice assignment
    seg = np.linspace(0, 1, 100, dtype=np.float32)
    w[10:110] = np.where(owner[160:260] == rt.rank, seg, seg + 3.0 + mine)
    want[160:260] = seg
    got = z.to_numpy()
    assert np.array_equal(got, want), (rt.rank, np.nonzero(got != want)[0][:10])
    assert float(w[10]) == float(want[160]) and float(z[7]) == float(want[7])
    print("rank %d of %d: every host write ok" % (rt.rank, rt.nranks))

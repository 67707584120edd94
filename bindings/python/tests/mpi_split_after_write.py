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

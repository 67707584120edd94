"""cluster_prog.py: a small owner-computes program for the simulated-cluster test
(test_sim_cluster.py): a 2-D 5-point stencil whose row blocks belong to ranks, the grid written
from the host on every rank, row sums per block, then every rank reads both whole. Prints one
JSON line per rank: the SHA-256 of the grid's and the sums' bytes, and the virtual time
(rt.clock()) the sweeps and reads took.

    python3 cluster_prog.py [n] [sweeps] [parts]     (devices from PG_DEVICES)"""
import hashlib
import json
import os
import sys

import numpy as np

import polygpu as pg

SRC = r'''
extern "C" __global__ void sweep(float *dst, const float *src, int lo, int rows, int src_lo,
                                 int n) {
  int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
  if (j >= n || i >= rows) return;
  int g = lo + i;
  const float *s = src + (size_t)(g - src_lo) * n;
  float *d = dst + (size_t)i * n;
  if (g == 0 || g == n - 1 || j == 0 || j == n - 1) { d[j] = s[j]; return; }
  d[j] = 0.25f * (s[j - 1] + s[j + 1] + s[j - n] + s[j + n]);
}
extern "C" __global__ void rowsum(double *out, const float *a, int rows, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  double t = 0;
  for (int j = 0; j < n; j++) t += a[(size_t)i * n + j];
  out[i] = t;
}
'''


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    sweeps = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    parts = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    with pg.Runtime(devices=os.environ.get("PG_DEVICES", "host:1")) as rt:
        ks, kr = rt.kernel(SRC, "sweep"), rt.kernel(SRC, "rowsum")
        rows = n // parts
        owners = [i * rt.nranks // parts for i in range(parts)]
        init = np.random.default_rng(7).random((n, n), dtype=np.float32)
        u = rt.asarray(init)  # a host write on every rank: the owners' data counts
        v = rt.array("float32", (n, n))
        sums = rt.array("float64", n)
        own = {}
        for g in (u, v):
            own[id(g)] = [g[i * rows:(i + 1) * rows] for i in range(parts)]
            for view, o in zip(own[id(g)], owners):
                view.owner = o
        halo = {id(g): [g[max(i * rows - 1, 0):min((i + 1) * rows + 1, n)] for i in range(parts)]
                for g in (u, v)}
        sum_views = sums.split(parts)
        t0 = rt.clock()
        src, dst = u, v
        for _ in range(sweeps):
            for i in range(parts):
                ks(((n + 63) // 64, rows, 1), 64)(own[id(dst)][i], halo[id(src)][i], i * rows,
                                                  rows, max(i * rows - 1, 0), n)
            src, dst = dst, src
        for i in range(parts):
            kr((rows + 63) // 64, 64)(sum_views[i], own[id(src)][i], rows, n)
        grid = np.asarray(src).copy()  # host reads on every rank
        total = np.asarray(sums).copy()
        t = rt.clock() - t0
        line = json.dumps({"rank": rt.rank, "nranks": rt.nranks, "t": t,
                           "grid": hashlib.sha256(grid.tobytes()).hexdigest(),
                           "sums": hashlib.sha256(total.tobytes()).hexdigest()}) + "\n"
        os.write(1, line.encode())  # one write: the ranks share the launcher's stdout


if __name__ == "__main__":
    main()

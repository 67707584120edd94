"""ranks.py: the same script on one process or on several (MPI ranks), same results.

    PYTHONPATH=build/bindings/python python3 examples/python/ranks.py
    mpirun --oversubscribe -np 3 -x PYTHONPATH=build/bindings/python python3 examples/python/ranks.py

(--oversubscribe: more ranks than cores; as root Open MPI also wants --allow-run-as-root.)

Every rank runs the whole script. ``split`` spreads the views of ``x`` over the ranks in blocks
(``owner=`` at creation and ``.owner`` set it by hand); each launch runs on the rank owning what
it writes, so each rank fills its own rows; the second kernel reads all of ``x``, and polygpu
sends each rank the rows it lacks, inferred as copies between devices are; reading ``y`` on the
host gives every rank the whole result. Devices come from PG_DEVICES (default: this rank's
GPUs, else one CPU device).
"""
import os

import polygpu as pg

SRC = r"""
extern "C" __global__ void ramp(float *x, int lo, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = (float)((lo + i) % 97); }
extern "C" __global__ void neighbours(float *y, const float *x, int lo, int n, int total) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[lo + i] + 2.0f * x[(lo + i + 1) % total]; }
"""

rt = pg.Runtime(devices=os.environ.get("PG_DEVICES", "auto"))
n, parts = 1 << 14, 6
ramp, neighbours = rt.kernel(SRC, "ramp"), rt.kernel(SRC, "neighbours")
x = rt.array("float32", n)
y = rt.array("float32", n)
xs, ys = x.split(parts), y.split(parts)  # on N ranks: blocks of views per rank
los = [sum(len(v) for v in xs[:p]) for p in range(parts)]
for xp, lo in zip(xs, los):
    ramp((len(xp) + 255) // 256, 256)(xp, lo, len(xp))  # runs on xp's owner only
for yp, lo in zip(ys, los):
    neighbours((len(yp) + 255) // 256, 256)(yp, x, lo, len(yp), n)  # needs x's next row too

values = y.tolist()  # a host read: every rank gets the whole result
want = [(i % 97) + 2.0 * ((i + 1) % n % 97) for i in range(n)]
if values != want:
    raise SystemExit(f"rank {rt.rank}: wrong result")
if rt.rank == 0:
    stats = rt.stats()
    print(f"{rt.nranks} rank(s): checksum {sum(values):.1f}; rank 0 sent "
          f"{stats['rank_messages_sent']} and received {stats['rank_messages_received']} "
          "messages")
rt.close()

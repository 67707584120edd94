"""mpi_ranks_check.py: the Python binding on several ranks (run by mpirun with 2 ranks; not a
pytest module: every rank runs it whole). owner= and .owner pass through to the core, split()
spreads views over the ranks, the counters come back in stats(), and the core's errors map to
ArgumentError / UnsupportedError with the runtime still usable."""
import os
import sys

import polygpu as pg

rt = pg.Runtime(devices=os.environ.get("PG_DEVICES", "host:2"), ranks="mpi")
assert rt.nranks == int(os.environ["OMPI_COMM_WORLD_SIZE"]) and 0 <= rt.rank < rt.nranks
last = rt.nranks - 1
SRC = r"""
extern "C" __global__ void fill(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
extern "C" __global__ void both(float *a, float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { a[i] = 1; b[i] = 2; } }
"""
fill, both = rt.kernel(SRC, "fill"), rt.kernel(SRC, "both")

a = rt.array("float32", 64, owner=last)
b = rt.asarray([float(rt.rank)] * 64, dtype="float32", owner=last)  # the owner's data counts
assert a.owner == last and b.owner == last
assert b.tolist() == [float(last)] * 64, b.tolist()
fill(1, 64)(a, 3.0, 64)
assert a[5] == 3.0  # a host read on every rank
s = rt.stats()
assert s["nranks"] == rt.nranks and s["rank"] == rt.rank
assert s["rank_messages_sent"] == (rt.nranks - 1 + rt.nranks - 1 if rt.rank == last else 0), s

parts = rt.array("float32", 40).split(4)
assert [p.owner for p in parts] == [i * rt.nranks // 4 for i in range(4)]
a.owner = 0
fill(1, 64)(a, 5.0, 64)
assert a.tolist() == [5.0] * 64

c = rt.array("float32", 64, owner=0)
try:
    both(1, 64)(c, b, 64)  # c on rank 0, b on the last: several owners
    raise SystemExit("no error for a kernel writing data of several owners")
except pg.ArgumentError as e:
    assert "several owners" in str(e), e
for bad in (rt.nranks, -1):
    try:
        rt.array("float32", 4, owner=bad)
        raise SystemExit("no error for owner=%d" % bad)
    except pg.ArgumentError as e:
        assert "rank" in str(e), e
try:
    with rt.record():
        pass
    raise SystemExit("recording allowed on several ranks")
except pg.UnsupportedError as e:
    assert "several ranks" in str(e), e
fill(1, 64)(c, 7.0, 64)  # still usable
assert c[63] == 7.0
rank, nranks = rt.rank, rt.nranks
rt.close()
print("rank %d of %d: ok" % (rank, nranks))
sys.exit(0)

"""mpi_failures.py CASE: a rank that fails ends the job (run by mpirun with 2 ranks through
tests/c/ranks_fail_check.sh, which wants a nonzero status and the messages; CTest's TIMEOUT
fails a hang). Not a pytest module: every rank runs it whole.
  raise    rank 1 raises inside the runtime's `with` while rank 0 waits for its value
  exit     rank 1 calls sys.exit(3) there
  toplevel rank 1 raises outside any `with` (the default runtime: sys.excepthook)
  close    rank 1 closes its runtime early while rank 0 waits for its value
  extra    rank 1 makes one more array, then both read an array of rank 0
  readone  only rank 0 reads an array of rank 1, then both read an array of rank 0"""
import sys

import polygpu as pg

case = sys.argv[1]
if case == "toplevel":
    a = pg.asarray([1.0] * 16, dtype="float32", owner=1)
    if pg.default_runtime().rank == 1:
        raise RuntimeError("rank 1 fails outside any with")
    print(a[3])
    sys.exit(0)

with pg.Runtime(devices="host:1") as rt:
    a = rt.asarray([1.0] * 16, dtype="float32", owner=1)
    if case == "extra" and rt.rank == 1:
        x = rt.array("float32", 16)
    b = rt.asarray([2.0] * 16, dtype="float32", owner=0)
    if rt.rank == 1:
        if case == "raise":
            raise RuntimeError("rank 1 fails on purpose")
        if case == "exit":
            sys.exit(3)
        if case == "close":
            rt.close()
            sys.exit(0)
    if case != "readone" or rt.rank == 0:
        print(rt.rank, a[3])
    print(rt.rank, b[3])

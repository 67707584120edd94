"""same_result.py: a distributed benchmark script run on 1 rank (plain ``python3``, no mpirun)
and on 2 ranks (``mpirun -np 2``) at a given size on CPU devices must pass its NumPy check and
print the same checksum both times (the ctest ``mpi_bench_<name>``, label mpi).

    python3 benchmarks/mpi/same_result.py MPIEXEC SCRIPT [script arguments...]
"""
import json
import os
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=120, check=False)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or len(lines) != 1:
        sys.exit("FAILED (%d): %s\n%s\n%s" % (p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return json.loads(lines[0])


def main():
    mpiexec, script, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    py = sys.executable
    one = run([py, script] + rest)
    two = run([mpiexec, "--oversubscribe", "-np", "2", "-x", "PYTHONPATH", py, script] + rest)
    for r in (one, two):
        print("%s: %d rank(s): checksum %s, %s" % (r["bench"], r["ranks"], r["checksum"],
                                                    r["check"]))
    if one["ranks"] != 1 or two["ranks"] != 2:
        sys.exit("wrong rank counts: %d and %d" % (one["ranks"], two["ranks"]))
    if not (one["ok"] and two["ok"]):
        sys.exit("the NumPy check failed")
    if one["checksum"] != two["checksum"]:
        sys.exit("checksums differ: %s vs %s" % (one["checksum"], two["checksum"]))
    print("same result on 1 and 2 ranks")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()

"""test_sim_cluster.py: a simulated 4-rank cluster (tools/sim_cluster.py over
net/sim_transport.c): 2 nodes x 2 ranks, each rank with one simulated H200 computing for real
(compute=cpu) and host time frozen (host_time=0: virtual times are deterministic).

- values: cluster_prog.py (a stencil over row blocks owned by the ranks, a host write on every
  rank, row sums, host reads on every rank) gives every rank the same bytes, SHA-256 for
  SHA-256, as one process without ranks; benchmarks/mpi/jacobi_dist.py, unchanged, passes its
  NumPy check on 4 simulated ranks;
- times: a second run gives the same virtual times; a slower network between the nodes is never faster, a faster one never slower, and
  with 1 ms of latency between the nodes the 6 sweeps (each needs a row from the other node,
  made by the sweep before) take at least 6 ms of virtual time;
- bad input: unknown host_clock= / reads= values and a bad PG_SIMNET are refused, naming them;
  compute=none refuses reading what devices made unless reads=any.

    PYTHONPATH=build/bindings/python python3 tests/simcluster/test_sim_cluster.py"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROG = os.path.join(HERE, "cluster_prog.py")
PY = sys.executable
CLUSTER = """name test-2x2
nodes 2
ranks_per_node 2
node h200x1 1
network intra_us=0.5 intra_gbps=8 inter_us=1.5 inter_gbps=48 nic_ranks=1 overhead_us=0.5 eager_bytes=4096
"""
SWEEPS = 6
failures = []


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAILED", what), flush=True)
    if not ok:
        failures.append(what)


def lines_of(p, what):
    out = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode:
        sys.stderr.write(p.stderr[-3000:])
        raise SystemExit("FAILED: %s ended with status %d" % (what, p.returncode))
    return out


def cluster_run(path, net, prog_args, ranks=4):
    cmd = [PY, os.path.join(ROOT, "tools", "sim_cluster.py"), "--cluster", path, "--ranks",
           str(ranks), "--host-time", "0", "--timeout", "90"]
    if net:
        cmd += ["--net", net]
    p = subprocess.run(cmd + ["--"] + prog_args, capture_output=True, text=True, timeout=120)
    return lines_of(p, " ".join(cmd[2:]) + " -- " + " ".join(prog_args[1:]))


BAD_INPUT = r"""
import os, sys
import numpy as np
import polygpu as pg
def refused(devices, words):
    try:
        pg.Runtime(devices=devices).close()
    except pg.ArgumentError as e:
        assert all(w in str(e) for w in words), str(e)
        return
    raise AssertionError("accepted: " + devices)
refused("sim:h200x1,host_clock=sundial", ["host_clock", "sundial"])
refused("sim:h200x1,reads=maybe", ["reads", "maybe"])
SRC = 'extern "C" __global__ void one(float *y, int n) { int i = threadIdx.x; if (i < n) y[i] = 1.0f; }'
for reads, ok in (("checked", False), ("any", True)):
    with pg.Runtime(devices="sim:h200x1,compute=none,host_time=0,reads=" + reads) as rt:
        y = rt.array("float32", 32)
        rt.kernel(SRC, "one")(1, 32)(y, 32)
        try:
            np.asarray(y)
            got = True
        except pg.UnsupportedError:
            got = False
        assert got == ok, (reads, got)
print("bad input refused")
"""


def bad_input():
    """Options and the network description: bad values are refused with a message naming them
    (and the runtime is not opened); reads=any lets compute=none read what it did not compute."""
    p = subprocess.run([PY, "-c", BAD_INPUT], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and "bad input refused" in p.stdout,
          "bad sim options refused by name; reads=any reads, reads=checked refuses%s" %
          ("" if not p.returncode else ": " + p.stderr[-800:]))
    env = dict(os.environ, PG_SIMNET_DIR=tempfile.gettempdir(), PG_SIMNET_SIZE="2",
               PG_SIMNET_RANK="0", PG_SIMNET_NODE_RANKS="2",
               PG_SIMNET="intra_us=fast,intra_gbps=8,inter_us=1,inter_gbps=1,nic_ranks=1,"
                         "overhead_us=0")
    code = ("import polygpu as pg\ntry:\n    pg.Runtime(devices='sim:h200x1')\nexcept pg.Error as e:\n"
            "    print('refused:', e)\n")
    p = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    check("refused:" in p.stdout and "PG_SIMNET" in p.stdout and "intra_us=fast" in p.stdout,
          "a bad PG_SIMNET is refused naming it (%s)" % (p.stdout.strip() or p.stderr[-300:]))


def main():
    bad_input()
    args = [PY, PROG, "64", str(SWEEPS), "8"]
    env = dict(os.environ, PG_DEVICES="sim:h200x1,host_time=0")
    one = lines_of(subprocess.run(args, capture_output=True, text=True, env=env, timeout=120),
                   "one process")[0]
    with tempfile.NamedTemporaryFile("w", suffix=".cluster", delete=False) as f:
        f.write(CLUSTER)
    try:
        base = cluster_run(f.name, "", args)
        check(len(base) == 4 and {r["rank"] for r in base} == {0, 1, 2, 3},
              "4 ranks each print their result")
        check(all(r["grid"] == one["grid"] and r["sums"] == one["sums"] for r in base),
              "every rank's grid and sums are bit-exact against one process")
        t = {"base": max(r["t"] for r in base)}
        # host_time=0: each rank's virtual time depends on the program and the network only,
        # not on the order this machine runs the processes in (messages complete when a rank
        # is blocked on them, oldest first), so a second run predicts the same times exactly.
        again = cluster_run(f.name, "", args)
        check(sorted((r["rank"], r["t"]) for r in again) == sorted((r["rank"], r["t"]) for r in base),
              "virtual times are the same on a second run (%s)" % sorted(r["t"] for r in again))
        for name, net in (("slow", "inter_gbps=0.05"), ("fast", "inter_gbps=1000"),
                          ("far", "inter_us=1000")):
            res = cluster_run(f.name, net, args)
            check(all(r["grid"] == one["grid"] for r in res), "%s network: values unchanged" % name)
            t[name] = max(r["t"] for r in res)
        print("virtual seconds: %s" % t)
        check(0 < t["fast"] <= t["base"] <= t["slow"], "more bandwidth is never slower "
              "(1000, 48, 0.05 GB/s: %.6f <= %.6f <= %.6f s)" % (t["fast"], t["base"], t["slow"]))
        check(t["slow"] > t["base"], "20 x less bandwidth than 1 GB/s costs time (%.6f > %.6f s)" %
              (t["slow"], t["base"]))
        check(t["far"] >= SWEEPS * 1e-3 and t["far"] > t["base"],
              "1 ms between nodes: %d dependent sweeps take at least %d ms (%.6f s)" %
              (SWEEPS, SWEEPS, t["far"]))
        jac = cluster_run(f.name, "", [PY, os.path.join(ROOT, "benchmarks", "mpi", "jacobi_dist.py"),
                                       "--n", "64", "--iterations", "4", "--warmup", "0",
                                       "--repeats", "1"])
        check(len(jac) == 1 and jac[0]["ranks"] == 4 and jac[0]["ok"],
              "jacobi_dist.py, unchanged, on 4 simulated ranks passes its NumPy check (%s)" %
              (jac[0]["check"] if jac else "no output"))
    finally:
        os.unlink(f.name)
    if failures:
        raise SystemExit("FAILED: %d check(s): %s" % (len(failures), "; ".join(failures)))
    print("all simulated-cluster checks passed")


if __name__ == "__main__":
    main()

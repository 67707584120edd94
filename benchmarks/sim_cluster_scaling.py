#!/usr/bin/env python3
"""SIMULATED scaling of the distributed CG and Jacobi (benchmarks/mpi/cg_dist.py,
jacobi_dist.py, unchanged) on simulated clusters, 1 to 64 ranks, and the 1 -> 2 rank
validation against the 2 x H200 measurement.

    python3 benchmarks/sim_cluster_scaling.py --out-dir DIR [--clusters a,b] [--ranks 1,2,4]
        [--bench cg,jacobi] [--profile P] [--build-dir build] [--validate]

Each run is `tools/sim_cluster.py --cluster C --ranks N --compute none --profile P --
python3 benchmarks/mpi/B_dist.py SIZE --parts P --no-check` (P = max(8, N), for CG at most
16: its update kernels take both partial-sum arrays whole, 2P + 5 pieces in one launch, and a
launch covers at most 64; from 32 ranks on, 16 of them hold CG's rows): N processes of this
machine, each rank with one simulated GPU of its node, messages costing the cluster's network
in virtual time (net/sim_transport.c); kernels are timed, not run (compute=none), so nothing is
checked. Every JSON line the scripts print gets `"simulated": true`, the cluster and the
command, and goes to DIR/SIMULATED-scaling.jsonl (appended: a rerun of some points adds lines;
the table takes the last line of each point); DIR/SIMULATED-scaling.md is the table.

--validate runs h200x8-ndr at 1 and 2 ranks with the measured runs' exact arguments (8 parts,
CG --size large, Jacobi --n 16384 --iterations 100, 1 warm-up, --repeats) and writes
DIR/SIMULATED-validation.md beside the measured figures
(benchmarks/results/2026-11-26-h200x2-f9dbe9c-mpi/results.jsonl)."""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MEASURED = os.path.join(HERE, "results", "2026-11-26-h200x2-f9dbe9c-mpi", "results.jsonl")
SIZES = {"cg": ["--size", "large"], "jacobi": ["--n", "16384", "--iterations", "100"]}


# The host's speed. A rank's host time is this machine's CPU time (host_clock=cpu), which the
# shared machine's load changes by tens of percent; it is scaled (host_time) to the H200
# machines' host by one figure measured there: a Python launch through polygpu, 6.19 us median
# (benchmarks/results/2026-11-26-h200x2-ee562dd-run/python_launch.txt), of which the simulated
# driver call is launch_us = 2.9 us (devices/sim/presets/h200x1.topo). The probe times the same
# launch here, in virtual time with host_time=1, right before each run.
H200_PYTHON_LAUNCH_US, LAUNCH_US = 6.19, 2.9
PROBE = r"""
import statistics, polygpu as pg
SRC = 'extern "C" __global__ void empty(float *a, const float *b, int n, float s) { if (n < 0) a[0] = b[0] * s; }'
rt = pg.Runtime(devices="sim:h200x1,compute=none,host_clock=cpu")
k = rt.kernel(SRC, "empty"); a, b = rt.array("float32", 256), rt.array("float32", 256)
call = k(1, 32)
for _ in range(1000): call(a, b, 256, 2.0)
rt.sync(); t = []
for i in range(20000):
    t0 = rt.clock(); call(a, b, 256, 2.0); t.append((rt.clock() - t0) * 1e6)
    if i % 64 == 63: rt.sync()
print(statistics.median(t))
"""


def host_time(a, env):
    if a.host_time != "auto":
        return a.host_time, None
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                         check=True).stdout
    us = float(out.split()[-1])
    return "%.3f" % ((H200_PYTHON_LAUNCH_US - LAUNCH_US) / max(us - LAUNCH_US, 0.05)), us


def run_one(a, cluster, bench, ranks, extra, env):
    script = os.path.join("benchmarks", "mpi", "%s_dist.py" % bench)
    ht, probe_us = host_time(a, env)
    cmd = [sys.executable, os.path.join("tools", "sim_cluster.py"), "--cluster", cluster,
           "--ranks", str(ranks), "--compute", "none", "--profile", a.profile,
           "--host-time", ht, "--timeout", str(a.timeout), "--", sys.executable, script] + extra
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode or not lines:
        print("FAILED (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]),
              file=sys.stderr)
        return None
    d = json.loads(lines[-1])
    shown = ["python3" if x == sys.executable else
             os.path.relpath(x, ROOT) if x == a.profile else x for x in cmd]
    d.update(simulated=True, label="SIMULATED", cluster=cluster,
             command=" ".join(shlex.quote(x) for x in shown), real_s=round(time.monotonic() - t0, 1),
             host_time=float(ht), probe_launch_us=probe_us)
    print("SIMULATED %s %s ranks=%d: %.3f ms/iter (host_time %s, %.0f s real)" %
          (cluster, bench, ranks, d["s_per_iter"] * 1e3, ht, d["real_s"]), flush=True)
    return d


def capacity(cluster):
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import sim_cluster  # noqa: E402  (tools/sim_cluster.py)
    c = sim_cluster.read_cluster(cluster)
    return c["nodes"] * c["ranks_per_node"]


def last_points(path):
    pts = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                pts[(d["cluster"], d["bench"], d["ranks"])] = d
    return pts


def table(path, out):
    pts = last_points(path)
    clusters = sorted({k[0] for k in pts})
    ranks = sorted({k[2] for k in pts})
    with open(out, "w", encoding="utf-8") as f:
        f.write("# SIMULATED: CG and Jacobi on simulated clusters (predictions, not measurements)\n\n")
        f.write("ms per iteration (CG) or sweep (Jacobi), virtual time; (xS) the speedup over the "
                "same cluster's 1 rank. Made by benchmarks/sim_cluster_scaling.py from "
                "SIMULATED-scaling.jsonl (each line has its command).\n\n")
        for bench in ("cg", "jacobi"):
            f.write("## %s (SIMULATED)\n\n| cluster | %s |\n| --- |%s\n" %
                    (bench, " | ".join("%d rank%s" % (r, "s" if r > 1 else "") for r in ranks),
                     " --- |" * len(ranks)))
            for c in clusters:
                one = pts.get((c, bench, 1))
                cells = []
                for r in ranks:
                    d = pts.get((c, bench, r))
                    if not d:
                        cells.append("-")
                        continue
                    ms = d["s_per_iter"] * 1e3
                    sp = " (x%.2f)" % (one["s_per_iter"] / d["s_per_iter"]) if one and r > 1 else ""
                    cells.append("%.3f%s" % (ms, sp))
                f.write("| %s | %s |\n" % (c, " | ".join(cells)))
            f.write("\n")


def validate(a, env):
    meas = {}
    with open(MEASURED, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["version"] == "polygpu" and d["label"] in ("gpu-1rank-1gpu", "gpu-2ranks-x1gpu"):
                meas[(d["bench"], d["ranks"])] = d["s_per_iter"]
    rows, path = [], os.path.join(a.out_dir, "SIMULATED-validation.jsonl")
    for bench in ("cg", "jacobi"):
        for ranks in (1, 2):
            extra = SIZES[bench] + ["--parts", "8", "--no-check", "--warmup", "1",
                                    "--repeats", str(a.repeats)]
            got = []
            for _ in range(a.launches):  # separate launches, each with its own probe
                d = run_one(a, "h200x8-ndr", bench, ranks, extra, env)
                if not d:
                    return 1
                with open(path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(d) + "\n")
                got.append(d["s_per_iter"])
            rows.append((bench, ranks, sorted(got)[len(got) // 2], meas[(bench, ranks)],
                         re.sub(r"--host-time \S+", "--host-time H", d["command"]), got))
    with open(os.path.join(a.out_dir, "SIMULATED-validation.md"), "w", encoding="utf-8") as f:
        f.write("# SIMULATED vs measured: 1 and 2 ranks x 1 H200 (cluster h200x8-ndr, node 0)\n\n")
        f.write("Median of %d launches (each: 1 warm-up, %d timed runs; host_time from the probe "
                "before it, H in the commands).\n\n" % (a.launches, a.repeats))
        f.write("| bench | ranks | SIMULATED ms/iter | launches | measured ms/iter (f9dbe9c) | error |\n")
        f.write("| --- | --- | --- | --- | --- | --- |\n")
        for bench, ranks, sim, m, _, got in rows:
            f.write("| %s | %d | %.3f | %s | %.3f | %+.1f%% |\n" %
                    (bench, ranks, sim * 1e3, ", ".join("%.3f" % (g * 1e3) for g in got), m * 1e3,
                     (sim / m - 1) * 100))
        f.write("\n| bench | SIMULATED 2/1 rank | measured 2/1 rank |\n| --- | --- | --- |\n")
        for bench in ("cg", "jacobi"):
            s = {r: x for b, r, x, _, _, _ in rows if b == bench}
            m = {r: y for b, r, _, y, _, _ in rows if b == bench}
            f.write("| %s | %.3f | %.3f |\n" % (bench, s[2] / s[1], m[2] / m[1]))
        f.write("\nCommands:\n\n" + "".join("    %s\n" % r[4] for r in rows))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--clusters", default="h200x8-ndr,dgx-a100x4,pcie4x16")
    ap.add_argument("--ranks", default="1,2,4,8,16,32,64")
    ap.add_argument("--bench", default="cg,jacobi")
    ap.add_argument("--cg-iterations", default="25", help="CG iterations in the scaling runs "
                    "(default: the measured runs')")
    ap.add_argument("--jacobi-sweeps", default="100", help="Jacobi sweeps in the scaling runs "
                    "(default: the measured runs')")
    ap.add_argument("--repeats", type=int, default=1, help="timed runs (after 1 warm-up)")
    ap.add_argument("--profile", default=os.path.join(
        HERE, "results", "2026-11-28-sim-cluster-scaling", "profile.csv"))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--timeout", type=float, default=1800, help="per run, real seconds")
    ap.add_argument("--validate", action="store_true", help="only the 1 -> 2 rank validation")
    ap.add_argument("--launches", type=int, default=3, help="--validate: launches per point")
    ap.add_argument("--host-time", default="auto", help="the simulator's host_time, or auto: "
                    "scaled to the H200 host by the launch probe (default)")
    a = ap.parse_args(argv)
    os.makedirs(a.out_dir, exist_ok=True)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.path.join(os.path.abspath(a.build_dir), "bindings", "python"))
    if a.validate:
        return validate(a, env)
    path = os.path.join(a.out_dir, "SIMULATED-scaling.jsonl")
    for cluster in a.clusters.split(","):
        for bench in a.bench.split(","):
            for ranks in (int(x) for x in a.ranks.split(",")):
                if ranks > capacity(cluster):
                    print("%s has %d GPUs: no %d-rank point" % (cluster, capacity(cluster), ranks))
                    continue
                size = (["--size", "large", "--iterations", a.cg_iterations] if bench == "cg" else
                        ["--n", "16384", "--iterations", a.jacobi_sweeps])
                # cg_dist.py's update kernels take the partial sums whole: 2 x parts + 5 pieces
                # in one launch, at most 64 (core's limit), so CG stops at 16 partitions.
                parts = max(8, min(ranks, 16)) if bench == "cg" else max(8, ranks)
                extra = size + ["--parts", str(parts), "--no-check", "--warmup", "1",
                                "--repeats", str(a.repeats)]
                d = run_one(a, cluster, bench, ranks, extra, env)
                if d:
                    with open(path, "a", encoding="utf-8") as f:
                        f.write(json.dumps(d) + "\n")
    table(path, os.path.join(a.out_dir, "SIMULATED-scaling.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

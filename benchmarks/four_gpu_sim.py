#!/usr/bin/env python3
"""four_gpu_sim.py: SIMULATED predictions for issue 42's four-GPU configurations -- CG, CG on
views and JACOBI at medium and large on 1, 2 and 4 GPUs of a simulated 4 x H200 NV18
(devices/sim/presets/h200x4-nv18.topo) -- and where the 4-GPU time goes (issue 40 item 5):
the same 4-GPU configurations with the host, the graph edges, the copy set-up, the links and
the launch costs taken away one at a time. Computed on a CPU (virtual time); every figure it
writes is a prediction, labelled SIMULATED.

    PYTHONPATH=build/bindings/python python3 benchmarks/four_gpu_sim.py --out-dir DIR \\
        [--profile P] [--cuda-measured JSON] [--invocations 3] [--skip-predictions] [--skip-ablations]

The profile (default: the one recorded one kernel at a time on 2 x H200,
results/2026-11-26-h200x2-da6d2fa-sim-validation/measured/profile-sync.csv.gz) holds samples
of these kernels at medium size only, and none of JACOBI's. Two kernels therefore get `model`
lines (graph-node durations, devices/sim/README.md), in one profile per size
(DIR/profile-SIZE[-views].prof, each size simulated with its own; DIR/profile-*.models hold the
lines added, the rest is the base profile):

* ``linalg_matvec``: a constant per size, a + b x CG's partition bytes at that size, the line
  through the profile's two sizes (CG's and MUL's medium partitions, each less profile_us).
  Not a model by bytes: a view's argument bytes run to its buffer's end (devices/sim/README.md),
  so CG on views' first partition would count the whole matrix; not the simulator's own fit by
  threads, since both sizes launch ~2^17 threads. (The memory bandwidth concurrent kernels
  share is reckoned from argument bytes too, so CG on views' products would take turns at
  2.3 TB/s each where the GPU's memory serves ~4.17 TB/s to several at once: for CG on views,
  profile-SIZE-views.prof gives linalg_matvec its bytes over the GPU's memory bandwidth
  (memory_gbps), the rate products that take turns at full bandwidth share it at -- right
  while a GPU has two or more to run, optimistic for a product alone.)
* ``jacobi_sweep`` (and ``jacobi_init`` at half its cost, ``jacobi_residual`` at its mean
  cost): a + b x threads through the hand-written CUDA C's 1-GPU times at medium and large
  (--cuda-measured, default the 2026-11-26 four-GPU run's four.json; the same kernel in every
  version): a run is 16 partitions x (sweeps + 1.5 sweeps' worth of init and residual) of
  kernels that each fill the GPU, so one kernel takes T / (16 (sweeps + 1.5)). So JACOBI's
  1-GPU predictions are calibrated on CUDA C's 1-GPU measurement, not independent of it.

A profile that already has jacobi_sweep samples (a fresh one, four_gpu.sh part1's
profile-sync.csv.gz, which has every kernel at both sizes) gets no model lines.

Predictions (DIR/predicted-h1-I.json, I = 1..invocations, and DIR/predicted-h0.json):
benchmarks/sim_scaling.py on h200x4-nv18's first 1, 2 and 4 GPUs, polygpu under
minmax-transfer-time (and earliest-finish on 2 and 4), --warmup 1 --runs 3, with the host's
real time counted (host_time=1: this machine's Python and runtime, whose placement of CG
varies between invocations) and frozen (host_time=0: deterministic).

Ablations (DIR/ablation-NAME.json), 4 GPUs, minmax-transfer-time, host_time=0 unless named:
  host1          the prediction (host_time=1)
  base           host_time=0: the host issues in no time
  no-edges       and graph_edge_us=0: a CUDA graph edge between GPUs costs nothing
  no-setup       and every link's latency 0: a copy costs only its bytes
  inf-links      and every link 10^6 GB/s with no latency and no duplex limit
  no-launch      and launch_us, copy_us, graph_us, graph_node_ns, launch_latency_us 0
  kernels-only   all of the above: what the GPUs' kernels take with every fixed cost gone
"""
import argparse
import gzip
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import sim_topo  # noqa: E402

DEFAULT_PROFILE = os.path.join(HERE, "results", "2026-11-26-h200x2-da6d2fa-sim-validation",
                               "measured", "profile-sync.csv.gz")
DEFAULT_CUDA = os.path.join(HERE, "results", "2026-11-26-h200x4-a13d08a-four", "four.json")
MACHINE = "h200x4-nv18"
DEVICE = "NVIDIA H200"
BENCH = "cg,cg-views,jacobi"
#: benchmarks by profile: one array per partition, or views
GROUPS = (("cg,jacobi", False), ("cg-views", True))
SIZES = {"medium": 8192, "large": 12288}  # JACOBI's orders
CG_ORDER = {"medium": 16384, "large": 49152}
PARTS = 16
MEMORY_GBPS = 4170  # h200x4-nv18's memory_gbps
PROFILE_US = 5.5  # h200x4-nv18's profile_us: what a sample holds beyond the graph node


def read_profile(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read()


def samples(text, kernel):
    """{arg_bytes: [ns, ...]} of a kernel's sample lines."""
    out = {}
    for line in text.splitlines():
        f = line.split(",")
        if len(f) == 7 and f[0] == "sample" and f[1] == kernel:
            out.setdefault(int(f[5]), []).append(float(f[6]))
    return out


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def matvec_model(text):
    """a, b (ns, ns per byte) of linalg_matvec through its two largest sizes' medians."""
    s = samples(text, "linalg_matvec")
    if len(s) < 2:
        return None
    (x0, y0), (x1, y1) = sorted((x, median(v) - PROFILE_US * 1e3) for x, v in s.items())[-2:]
    b = (y1 - y0) / (x1 - x0)
    return y0 - b * x0, b


def jacobi_model(cuda_json):
    """a, b (ns, ns per thread) of jacobi_sweep from the CUDA C 1-GPU times, and the mean."""
    with open(cuda_json) as f:
        res = json.load(f)["results"]
    pts = []
    for size, n in SIZES.items():
        t = [r for r in res if r["bench"] == "jacobi" and r["size"] == size and
             r["version"] == "cuda" and r["gpus"] == 1 and r.get("median_s")]
        if not t:
            sys.exit("four_gpu_sim: %s has no JACOBI %s cuda 1-GPU time" % (cuda_json, size))
        sweeps = 100
        rows = math.ceil(n / PARTS)
        d = t[0]["median_s"] * 1e9 / (PARTS * (sweeps + 1.5))
        pts.append((rows * n, d))
    (x0, y0), (x1, y1) = pts
    b = (y1 - y0) / (x1 - x0)
    return y0 - b * x0, b, (y0 + y1) / 2


def write_profile(src, cuda_json, size, out, views=False):
    text = read_profile(src)
    lines = ["# four_gpu_sim.py (size %s): %s" % (size, os.path.relpath(src, ROOT))]
    notes = []
    mv = matvec_model(text) if not samples(text, "jacobi_sweep") else None
    if mv:
        n = CG_ORDER[size]
        r = -(-n // PARTS)
        x = 4 * r * n + 4 * n + 4 * r
        d = mv[0] + mv[1] * x
        if views:
            d = x / MEMORY_GBPS
        lines.append("model,linalg_matvec,%s,threads,%.0f,0" % (DEVICE, d))
        notes.append("%s%s: linalg_matvec %.1f us (%s)" % (
            size, " (CG on views)" if views else "", d / 1e3,
            "%d bytes at memory_gbps %d" % (x, MEMORY_GBPS) if views else
            "%.0f ns + %.4g ns/byte x %d bytes, %.2f TB/s alone" % (mv[0], mv[1], x, x / d / 1e3)))
    if not samples(text, "jacobi_sweep") and not views:
        a, b, mean = jacobi_model(cuda_json)
        lines += ["model,jacobi_sweep,%s,threads,%.0f,%.6g" % (DEVICE, a, b),
                  "model,jacobi_init,%s,threads,%.0f,%.6g" % (DEVICE, a / 2, b / 2),
                  "model,jacobi_residual,%s,threads,%.0f,0" % (DEVICE, mean)]
        n = SIZES[size]
        notes.append("%s: jacobi_sweep %.1f us (%.0f ns + %.4g ns/thread x %d threads, through "
                     "the CUDA C 1-GPU times of %s); jacobi_init half, jacobi_residual %.1f us"
                     % (size, (a + b * n * -(-n // PARTS)) / 1e3, a, b, n * -(-n // PARTS),
                        os.path.basename(os.path.dirname(cuda_json)), mean / 1e3))
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n" + text)
    # The lines added, alone (the profile itself is the base profile under them: not committed).
    with open(out[:-len(".prof")] + ".models", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return notes


#: the ablations: (name, what is taken away); host1 is the prediction itself
ABLATIONS = [("host1", "nothing (host_time=1)"), ("base", "the host's time (host_time=0)"),
             ("no-edges", "and graph edges between GPUs"), ("no-setup", "and copy set-up"),
             ("inf-links", "and link bandwidth"), ("no-launch", "and launch costs"),
             ("kernels-only", "all fixed costs")]


def topo_variant(name, out):
    """h200x4-nv18 with the ablation NAME applied."""
    res = []
    for line in sim_topo.read_lines(MACHINE):
        w = sim_topo.words(line)
        if not w:
            continue
        if w[0] == "name":
            w = ["name", "h200x4-nv18-" + name]
        if w[0] == "host" and name in ("no-edges", "kernels-only"):
            sim_topo.set_key(w, "graph_edge_us", 0)
        if w[0] == "host" and name in ("no-launch", "kernels-only"):
            for k in ("launch_us", "copy_us", "graph_us", "graph_node_ns", "launch_latency_us"):
                sim_topo.set_key(w, k, 0)
        if w[0] == "link" and name in ("no-setup", "inf-links", "kernels-only"):
            w[4] = "0"
        if w[0] == "link" and name in ("inf-links", "kernels-only"):
            w[3] = "1000000"
            w = [x for x in w if not x.startswith("duplex=")]
        res.append(" ".join(sim_topo.quote(x) for x in w))
    with open(out, "w", encoding="utf-8") as f:
        f.write("# SIMULATED ablation '%s' of %s (benchmarks/four_gpu_sim.py)\n" % (name, MACHINE)
                + "\n".join(res) + "\n")


def run(cmd, log):
    print(" ".join(cmd), flush=True)
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        return subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--profile", default=DEFAULT_PROFILE)
    ap.add_argument("--cuda-measured", default=DEFAULT_CUDA)
    ap.add_argument("--invocations", type=int, default=3)
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--sizes", default="medium,large")
    ap.add_argument("--skip-predictions", action="store_true")
    ap.add_argument("--skip-ablations", action="store_true")
    a = ap.parse_args(argv)
    out = os.path.abspath(a.out_dir)
    os.makedirs(os.path.join(out, "topo"), exist_ok=True)
    sizes = a.sizes.split(",")
    notes, prof = [], {}
    for size in sizes:
        for _, views in GROUPS:
            prof[size, views] = os.path.join(out, "profile-%s%s.prof" % (
                size, "-views" if views else ""))
            notes += write_profile(a.profile, a.cuda_measured, size, prof[size, views], views)
    with open(os.path.join(out, "profile-models.txt"), "w") as f:
        f.write("\n".join(notes) + "\n")
    print("\n".join(notes))
    log = os.path.join(out, "sim.log")
    status = 0
    if not a.skip_predictions:
        for h, name in [("0", "predicted-h0")] + [
                ("1", "predicted-h1-%d" % i) for i in range(1, a.invocations + 1)]:
            for size, (bench, views) in ((s, g) for s in sizes for g in GROUPS):
                status |= run([sys.executable, os.path.join(HERE, "sim_scaling.py"), "--machine",
                               MACHINE, "--profile", prof[size, views], "--gpus", "1,2,4",
                               "--bench", bench, "--sizes", size, "--policies",
                               "minmax-transfer-time,earliest-finish", "--warmup", "1", "--runs",
                               "3", "--out-dir", out, "--build-dir", a.build_dir,
                               "--host-time", h, "--name", name], log)
    if not a.skip_ablations:
        for name, _ in ABLATIONS:
            variant = "base" if name == "host1" else name
            topo = os.path.join(out, "topo", "h200x4-nv18-%s.topo" % variant)
            topo_variant(variant, topo)
            spec = "sim:%s,host_time=%d" % (topo, 1 if name == "host1" else 0)
            for size, (bench, views) in ((s, g) for s in sizes for g in GROUPS):
                env = dict(os.environ, PG_SIM_PROFILE=prof[size, views])
                cmd = [sys.executable, os.path.join(HERE, "run.py"), "--devices", spec, "--gpus",
                       "4", "--bench", bench, "--sizes", size, "--versions", "polygpu",
                       "--policies", "minmax-transfer-time", "--mul-sweep", "none",
                       "--warmup", "1", "--runs", "3", "--no-plots", "--build", "never",
                       "--build-dir", a.build_dir, "--out-dir", out, "--name", "ablation-" + name]
                print(" ".join(cmd), flush=True)
                with open(log, "a") as f:
                    f.write("$ PG_SIM_PROFILE=%s %s\n" % (prof[size, views], " ".join(cmd)))
                    f.flush()
                    status |= subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
    return status


if __name__ == "__main__":
    sys.exit(main())

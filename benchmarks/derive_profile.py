#!/usr/bin/env python3
"""Derive a timing profile for GPUs we do not have (V100, A100) from one recorded on H200s.

    python3 benchmarks/derive_profile.py --target v100 --in profile-sync.csv.gz --out v100.prof

A profile recorded by the option `profile` (devices/sim/README.md, "Timing profile") holds one
`sample` line per kernel run: kernel, device, launch shape, argument bytes, nanoseconds. We have
no V100 to record one, so this script rewrites each sample for the target GPU, deterministically
(same input, same output), by the resource that bounds the kernel on the H200:

1. A sample's kernel time is its ns less `--profile-us` (5.5 us on H200s: the launch's host call
   and device latency that a recorded sample holds, devices/sim/presets/h200x2-nv18.topo), not
   below 0.5 us, exactly as the simulator reads it.
2. Per kernel, at its largest argument bytes, the median kernel time t and the bandwidth it
   reached, bytes / t:
   - t < --launch-us (2 us): **launch-bound** — the launch and block scheduling, not the
     memory or the arithmetic; kept as measured;
   - bytes / t >= --memory-share (0.5) of the H200's reachable memory bandwidth (4,170 GB/s,
     measured: the h200 presets' memory_gbps): **memory-bound** — scaled by the datasheets'
     memory bandwidth ratio;
   - else, a launch of fewer threads than the target GPU holds at once (SMs x 2048; V100 80
     SMs, A100 108): **latency-bound** — a reduction's few blocks, a small grid: it fills
     neither the memory system nor the arithmetic units of either GPU, its time goes with the
     clock; scaled by the boost clock ratio;
   - otherwise **compute-bound** — scaled by the datasheets' FP32 ratio, or FP64 where the
     kernel's parameters are double (read from its source under --kernels).
3. Each sample keeps a fixed part of min(t, 1 us) as measured (a trivial kernel as a node of a
   CUDA graph chain ran at 0.96-1.16 us on H200s, benchmarks/results/
   2026-11-26-h200x2-3e50c80-sim-validation-2/measured/calibration.txt: the per-kernel floor, not
   a resource), and the rest is multiplied by the ratio; `--profile-us` is added back, so the
   launch overheads stay as measured (the presets of the target machines take the same
   launch_us, launch_latency_us and profile_us, unmeasured there).
4. The device name becomes the target's (`Tesla V100-SXM2-32GB`, as the dgx1-v100 preset
   names it; `*` with --device-name '*' for any device, e.g. dgx2-v100's SXM3).

Datasheet figures (peak, dense; boost clocks):
- H200 SXM: 4.8 TB/s HBM3e, 67 TFLOPS FP32, 34 TFLOPS FP64 — NVIDIA H200 Tensor Core GPU
  datasheet (2024); boost 1,980 MHz (the H100 SXM5's, same GH100 chip: H100 whitepaper).
- V100 SXM2: 900 GB/s HBM2, 15.7 TFLOPS FP32, 7.8 TFLOPS FP64, boost 1,530 MHz — NVIDIA Tesla
  V100 GPU datasheet (2018) and the Volta architecture whitepaper (WP-08608-001).
- A100 SXM4 40 GB: 1,555 GB/s HBM2, 19.5 TFLOPS FP32, 9.7 TFLOPS FP64, boost 1,410 MHz —
  NVIDIA A100 Tensor Core GPU datasheet (2020) and the Ampere architecture whitepaper.
- H100 SXM5: 3.35 TB/s HBM3, 67 TFLOPS FP32, 34 TFLOPS FP64 — NVIDIA H100 datasheet (2023).

Ratios are of datasheet peaks (both GPUs reach a similar share of them: the H200 reached 87% of
its memory peak here); what this cannot know: caches (V100 6 MB L2, A100 40 MB, H200 50 MB —
a working set that fits the H200's L2 but not the V100's is slower than scaled), occupancy
(80 / 108 / 132 SMs: a launch of few blocks is latency-bound on all), clocks under load.
Everything simulated with a derived profile is labelled "SIMULATED, derived <GPU> profile".
Plain Python (gzip and csv only)."""
import argparse
import collections
import csv
import glob
import gzip
import io
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

#: peak memory GB/s, FP32 TFLOPS, FP64 TFLOPS, boost MHz, SMs, the device name the presets give
GPUS = {
    "h200": (4800.0, 67.0, 34.0, 1980.0, 132, "NVIDIA H200"),
    "h100": (3350.0, 67.0, 34.0, 1980.0, 132, "NVIDIA H100 80GB HBM3"),
    "a100": (1555.0, 19.5, 9.7, 1410.0, 108, "NVIDIA A100-SXM4-40GB"),
    "v100": (900.0, 15.7, 7.8, 1530.0, 80, "Tesla V100-SXM2-32GB"),
}
SM_THREADS = 2048  # threads a multiprocessor holds (compute capability 7.0 to 9.0)
H200_REACHED_GBPS = 4170.0  # measured on H200s (h200 presets' memory_gbps)
FIXED_US = 1.0  # a trivial kernel as a graph node on H200s (0.96-1.16 us)


def open_text(path):
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return open(path, encoding="utf-8")


def fp64_kernels(kernels_dir):
    """Names of the kernels whose parameter list has a double."""
    out = set()
    for path in sorted(glob.glob(os.path.join(kernels_dir, "*.cu*"))):
        with open(path, encoding="utf-8") as f:
            src = f.read()
        for m in re.finditer(r"__global__\s+void\s+(\w+)\s*\(([^)]*)\)", src):
            if re.search(r"\bdouble\b", m.group(2)):
                out.add(m.group(1))
    return out


def threads(grid, block):
    n = 1
    for part in (grid, block):
        for x in part.split("x"):
            n *= int(x)
    return n


def classify(samples, profile_us, launch_us, memory_share, target_threads):
    """(class, bytes, median kernel us, GB/s reached) of one kernel's samples."""
    top = max(s[3] for s in samples)
    at_top = [s for s in samples if s[3] == top]
    t = statistics.median(max(s[4] / 1e3 - profile_us, 0.5) for s in at_top)
    gbps = top / (t * 1e3) if t > 0 else 0.0
    if t < launch_us:
        return "launch", top, t, gbps
    if gbps >= memory_share * H200_REACHED_GBPS:
        return "memory", top, t, gbps
    if max(threads(s[1], s[2]) for s in at_top) < target_threads:
        return "latency", top, t, gbps
    return "compute", top, t, gbps


def derive(rows, source, target, device_name, fp64, profile_us, launch_us, memory_share):
    """The derived sample rows and, per kernel, (class, precision, ratio, bytes, t, GB/s)."""
    src, dst = GPUS[source], GPUS[target]
    per_kernel = collections.defaultdict(list)
    for r in rows:
        per_kernel[r[1]].append((r[1], r[3], r[4], int(r[5]), float(r[6])))
    decisions = {}
    for k in sorted(per_kernel):
        cls, top, t, gbps = classify(per_kernel[k], profile_us, launch_us, memory_share,
                                     dst[4] * SM_THREADS)
        prec = "fp64" if k in fp64 else "fp32"
        ratio = {"launch": 1.0, "latency": src[3] / dst[3], "memory": src[0] / dst[0],
                 "compute": src[1] / dst[1] if prec == "fp32" else src[2] / dst[2]}[cls]
        decisions[k] = (cls, prec, ratio, top, t, gbps)
    out = []
    for r in rows:
        ratio = decisions[r[1]][2]
        t = max(float(r[6]) / 1e3 - profile_us, 0.5)
        fixed = min(t, FIXED_US)
        ns = (profile_us + fixed + (t - fixed) * ratio) * 1e3
        out.append(["sample", r[1], device_name, r[3], r[4], r[5], "%d" % round(ns)])
    return out, decisions


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--in", dest="inp", required=True, help="recorded profile (.csv or .csv.gz)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--source", default="h200", choices=sorted(GPUS))
    ap.add_argument("--target", required=True, choices=sorted(GPUS))
    ap.add_argument("--device-name", help="device field of the output (default: the target's "
                    "name in the presets; '*' for any device)")
    ap.add_argument("--source-device", default="NVIDIA H200",
                    help="use the samples of this device (default NVIDIA H200)")
    ap.add_argument("--kernels", default=os.path.join(HERE, "workloads", "kernels"),
                    help="kernel sources, for which kernels take double parameters")
    ap.add_argument("--profile-us", type=float, default=5.5)
    ap.add_argument("--launch-us", type=float, default=2.0)
    ap.add_argument("--memory-share", type=float, default=0.5)
    a = ap.parse_args(argv)
    rows = []
    with open_text(a.inp) as f:
        for r in csv.reader(line for line in f if not line.startswith("#")):
            if r and r[0] == "sample" and len(r) == 7 and r[2] == a.source_device:
                rows.append(r)
    if not rows:
        sys.exit("derive_profile: no samples of device '%s' in %s" % (a.source_device, a.inp))
    name = a.device_name or GPUS[a.target][5]
    out, decisions = derive(rows, a.source, a.target, name, fp64_kernels(a.kernels),
                            a.profile_us, a.launch_us, a.memory_share)
    label = "SIMULATED, derived %s profile" % a.target.upper()
    with open(a.out, "w", newline="") as f:
        f.write("# polygpu sim profile (format: devices/sim/README.md)\n")
        f.write("# %s: not measured on a %s. Derived by benchmarks/derive_profile.py from %s\n"
                % (label, a.target.upper(), os.path.basename(a.inp)))
        f.write("# (%s samples), scaling each kernel's time beyond 1 us by the datasheet ratio of\n"
                "# the resource that bounds it on the %s; launch overheads kept as measured.\n"
                % (a.source.upper(), a.source.upper()))
        f.write("# kernel,class,precision,ratio,bytes at the largest size,median us there,GB/s\n")
        for k, (cls, prec, ratio, top, t, gbps) in sorted(decisions.items()):
            f.write("# %s,%s,%s,%.3f,%d,%.2f,%.0f\n" % (k, cls, prec, ratio, top, t, gbps))
        w = csv.writer(f, lineterminator="\n")
        w.writerows(out)
    for k, (cls, prec, ratio, top, t, gbps) in sorted(decisions.items()):
        print("%-18s %-8s %s x%.2f  (%d bytes: %.1f us, %.0f GB/s on the %s)"
              % (k, cls, prec, ratio, top, t, gbps, a.source.upper()))
    print("%s: %d samples -> %s" % (label, len(out), a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

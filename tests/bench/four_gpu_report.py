#!/usr/bin/env python3
"""tests/bench/four_gpu_report.py: benchmarks/four_gpu_report.py on a fixture whose answers are
known (the ctest bench_four_gpu_report): a fake $OUT of benchmarks/four_gpu.sh's two parts and a
fake predictions folder, written here, read as folders and as the .tgz files the device returns.

- CG medium: polygpu 8 / 5 / 3.85 ms, CUDA C graph 7 / 4.5 / 3.6, streams 7.2 / 4.4 / 3.5: at 4
  GPUs 3.85 / 3.5 (the faster, streams) = 1.10 <= 1.15, speedup 8 / 3.85 = 2.08 >= 7 / 3.5 = 2.00:
  both targets met; CG large: 1.20 > 1.05, missed;
- the timeline: GPU 0 idle 2500 us in a run of 25 iterations, half of it host submission: 100.0
  us an iteration, host 50.0 (50%);
- METG 4 GPUs independent: eager 9.0 / streams 6.0 = 1.50;
- paper-max VEC: polygpu 150 / 40, CUDA C 145 / 38: 1.05 at 4, speedups 3.75 / 3.82;
- spread, 4 GPUs: 13.3 against 28.1 ms, 2.12x;
- predictions: CG medium 4 GPUs host_time=1 invocations 4.0 and 4.4 (median 4.2) against 3.85
  measured: 1.09, within 10%; CG large 4 GPUs 30 against 20: 1.50, flagged;
- earliest-finish CG medium 4 GPUs 3.5 ms: 0.91 of minmax's, predicted 3.6 (1.03);
- parts or steps missing (variants) say so; a CUT step is quoted.
Also checks benchmarks/four_gpu.sh's syntax (bash -n)."""
import json
import os
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "benchmarks", "four_gpu_report.py")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)


def result(bench, size, version, gpus, ms, policy="minmax-transfer-time"):
    return {"bench": bench, "size": size, "version": version, "gpus": gpus, "partitions": 16,
            "policy": None if version.startswith("cuda") else policy, "sweep": False,
            "median_s": ms / 1e3, "times_s": [ms / 1e3] * 3, "valid": True}


def write_json(path, results, date="2026-11-29"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"invocations": [{"date": date, "commit": "stale"}], "results": results}, f)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def fixture(d):
    p1, p2, pred = (os.path.join(d, "out", "part1"), os.path.join(d, "out", "part2"),
                    os.path.join(d, "pred"))
    rs = []
    for g, p, c, s in ((1, 8, 7, 7.2), (2, 5, 4.5, 4.4), (4, 3.85, 3.6, 3.5)):
        rs += [result("cg", "medium", "polygpu", g, p), result("cg", "medium", "cuda", g, c),
               result("cg", "medium", "cuda-streams", g, s)]
    for g, p, c in ((1, 60, 55), (4, 18, 15)):
        rs += [result("cg", "large", "polygpu", g, p), result("cg", "large", "cuda", g, c)]
    bad = result("jacobi", "medium", "polygpu", 4, 1.0)
    bad["valid"] = False  # an invalid result is left out, never shown
    write_json(os.path.join(p1, "four.json"), rs + [bad])
    write_json(os.path.join(p1, "four-ef.json"),
               [result("cg", "medium", "polygpu", 4, 3.5, policy="earliest-finish")])
    write(os.path.join(p1, "commit.txt"), "PGB_COMMIT abc1234\ngit_head 0000\ntree 1111\n")
    write(os.path.join(p1, "env.txt"), "GPU 0: NVIDIA H200 (UUID: x)\nGPU 1: NVIDIA H200 (UUID: y)\n"
          "GPU 2: NVIDIA H200 (UUID: z)\nGPU 3: NVIDIA H200 (UUID: w)\n")
    write(os.path.join(p1, "steps.log"), "[0 s] part1: GPUs, commit\n[480 s] CUT for time (20 s "
          "left, needs ~40 s): profile\n")
    attr = {"t.json": {"gpu_timeline": "cupti", "gpu": {"gpu 0": {
        "device": "gpu 0", "kernels": 650, "kernel_busy_us": 5000.0, "gaps": 600,
        "gap_us": 2500.0, "host_us": 1250.0, "copy_engine_us": 500.0, "other_gpu_us": 500.0,
        "latency_us": 250.0, "start_minus_call_us_median": 7.5}}}}
    write(os.path.join(p1, "attribution-cg-medium-4gpu-minmax-transfer-time-P16.json"),
          json.dumps(attr))
    write(os.path.join(p1, "attribution-cg-medium-4gpu-minmax-transfer-time-P16.txt"),
          "run: 4.100 ms from the first submission to the last end\n")
    write(os.path.join(p1, "gran-polygpu-4.csv"),
          "# METG(50%) polygpu-c eager independent on cuda:0,1,2,3: 9.00 us\n"
          "# METG(50%) polygpu-c replay independent on cuda:0,1,2,3: 3.00 us\n")
    write(os.path.join(p1, "gran-cuda-4.csv"),
          "# METG(50%) cuda-c streams independent on 4 gpus: 6.00 us\n"
          "# METG(50%) cuda-c graph independent on 4 gpus: 1.50 us\n")
    write_json(os.path.join(p2, "paper.json"), [
        result("vec", "paper-max", "polygpu", 1, 150), result("vec", "paper-max", "polygpu", 4, 40),
        result("vec", "paper-max", "cuda", 1, 145), result("vec", "paper-max", "cuda", 4, 38)])
    write(os.path.join(p2, "spread.txt"),
          "spread.py: 8 calls of 16777216 threads x 2000 steps, 5 repetitions; devices cuda (4: "
          "NVIDIA H200); 64 CPU cores; commit x\n| policy | devices | median ms | min ms | max ms |\n"
          "| --- | --- | --- | --- | --- |\n| earliest-finish | 2 3 0 1 2 3 0 1 | 13.3 | 11.7 | "
          "23.0 |\n| minmax-transfer-time | 0 0 0 0 0 0 0 0 | 28.1 | 28.0 | 28.3 |\n"
          "minmax-transfer-time / earliest-finish (medians): 2.12x\n")
    write_json(os.path.join(pred, "predicted-h1-1.json"), [
        result("cg", "medium", "polygpu", 4, 4.0), result("cg", "large", "polygpu", 4, 30),
        result("cg", "medium", "polygpu", 4, 3.6, policy="earliest-finish")])
    write_json(os.path.join(pred, "predicted-h1-2.json"), [result("cg", "medium", "polygpu", 4, 4.4)])
    write_json(os.path.join(pred, "predicted-h0.json"), [result("cg", "medium", "polygpu", 4, 3.9)])
    write_json(os.path.join(pred, "ablation-kernels-only.json"), [
        result("cg", "medium", "polygpu", 4, 3.08)])
    write(os.path.join(pred, "profile-models.txt"), "medium: linalg_matvec 21.9 us\n")
    return os.path.join(d, "out"), pred


def report(args):
    r = subprocess.run([sys.executable, REPORT] + args, capture_output=True, text=True)
    check(r.returncode == 0, "four_gpu_report.py exits 0 (%d: %s)" % (r.returncode, r.stderr[-800:]))
    return r.stdout


def main():
    with tempfile.TemporaryDirectory() as d:
        out, pred = fixture(d)
        text = report([out, "--predicted", pred, "--before", os.path.join(d, "none")])
        print(text)
        row = [l for l in text.splitlines() if l.startswith("| CG | medium |") and "≤" in l]
        check(len(row) == 1, "one CG medium row")
        if row:
            check("1.10 (≤ 1.15)" in row[0], "CG medium at 4 GPUs: 1.10 against the faster CUDA C")
            check("2.08 / 2.00" in row[0], "CG medium speedups 2.08 / 2.00")
            check("ratio met, speedup met" in row[0], "CG medium meets both targets")
            check("8 / 5 / 3.85" in row[0], "CG medium polygpu times")
        large = [l for l in text.splitlines() if l.startswith("| CG | large |")]
        check(large and "1.20 (≤ 1.05)" in large[0] and "ratio **missed**" in large[0],
              "CG large misses the ratio target")
        check("1 of 2 configurations meet both targets; missed: CG large" in text,
              "the summary counts 1 of 2")
        check("| Jacobi | medium |" not in text, "an invalid result is not shown")
        check("commit **abc1234**" in text, "the commit from PGB_COMMIT")
        check("CUT for time (20 s left, needs ~40 s): profile" in text, "the cut step is quoted")
        check("| CG | medium | 4 | 3.85 | 3.5 | 0.91 |" in text, "earliest-finish against minmax")
        p = [l for l in text.splitlines() if l.startswith("| CG | medium | earliest-finish | 4 |")]
        check(p and "| 3.5 | 3.6 | 1.03 |" in p[0], "earliest-finish's prediction: %s" % p)
        check("Not measured (part1's `variant-*.json` missing)" in text, "variants missing")
        tl = [l for l in text.splitlines() if l.startswith("| CG | gpu 0 |")]
        check(tl and "| 650 | 200.0 | 100.0 | 50.0 (50%) | 20.0 (20%) | 20.0 (20%) | 10.0 (10%) | 7.5 |"
              in tl[0], "the timeline per iteration: %s" % tl)
        check("run: 4.100 ms" in text, "the host view of the traced run")
        m = [l for l in text.splitlines() if l.startswith("| independent | 4 |")]
        check(m and "| 9.00 | 6.00 | 1.50 | 3.00 | 1.50 | 2.00 |" in m[0], "METG row: %s" % m)
        v = [l for l in text.splitlines() if l.startswith("| VEC |")]
        check(v and "150 / 40 | – / – | 145 / 38 | 1.05 | – | 3.75 / – / 3.82 |" in v[0],
              "paper-max VEC row: %s" % v)
        check("| 4 × NVIDIA H200 (cuda) | 13.3, 2 3 0 1 2 3 0 1 | 28.1, 0 0 0 0 0 0 0 0 | 2.12× |"
              in text, "the spread row")
        p = [l for l in text.splitlines() if l.startswith("| CG | medium | minmax-transfer-time | 4 |")]
        check(p and "| 3.85 | 4.2 (4–4.4) | 1.09 | 3.9 | 1.01 |" in p[0], "prediction row: %s" % p)
        p = [l for l in text.splitlines() if l.startswith("| CG | large | minmax-transfer-time | 4 |")]
        check(p and "1.67 ✗" in p[0], "a prediction off by more than 10%% is flagged: %s" % p)
        check("2 of 3 measured configurations predicted within 10%" in text, "prediction count")
        check("| all of those at once: the kernels alone | 3.08 (80%) |" in text,
              "the ablation row with its share of the measured time")
        # The same from the .tgz files the device returns.
        tgz = []
        for part in ("part1", "part2"):
            t = os.path.join(d, "four-%s.tgz" % part)
            with tarfile.open(t, "w:gz") as tf:
                tf.add(os.path.join(out, part), arcname=part)
            tgz.append(t)
        text2 = report(tgz + ["--predicted", pred, "--before", os.path.join(d, "none")])
        check(text2 == text, "the .tgz files give the same report")
        # --sim-only: the predictions folder's README, against a before run.
        before = os.path.join(d, "before")
        write_json(os.path.join(before, "four.json"), [result("cg", "medium", "polygpu", 4, 4.0)])
        sim = report(["--sim-only", "--predicted", pred, "--before", before])
        check("SIMULATED" in sim.splitlines()[0], "the predictions README says SIMULATED first")
        p = [l for l in sim.splitlines() if l.startswith("| CG | medium | minmax-transfer-time | 4 |")]
        check(p and "| 4 | 4.2 (4–4.4) | 1.05 |" in p[0], "sim-only prediction row: %s" % p)
    r = subprocess.run(["bash", "-n", os.path.join(ROOT, "benchmarks", "four_gpu.sh")],
                       capture_output=True, text=True)
    check(r.returncode == 0, "benchmarks/four_gpu.sh parses: " + r.stderr)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("four_gpu_report: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

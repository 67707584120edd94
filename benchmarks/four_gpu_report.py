#!/usr/bin/env python3
"""four_gpu_report.py: the Markdown README of issue 42's four-GPU run, from what
benchmarks/four_gpu.sh part1 and part2 left in $OUT (unpacked, or the .tgz files themselves).

    python3 benchmarks/four_gpu_report.py OUT_OR_TGZ... [--out README.md]
        [--predicted benchmarks/results/2026-11-28-sim-h200x4-predictions]
        [--before benchmarks/results/2026-11-26-h200x4-a13d08a-four]
    python3 benchmarks/four_gpu_report.py --sim-only --predicted DIR [--out DIR/README.md]

Tables: CG, CG on views and JACOBI at medium and large on 1, 2, 4 GPUs against the hand-written
CUDA C (graph and streams), with issue 42's targets (polygpu / CUDA C <= 1.15 at medium and
<= 1.05 at large on 4 GPUs; speedup 1->4 at least the hand-written one's); earliest-finish and
the recording variants; the five workloads at paper-max on 4 GPUs with their speedups; METG on
1 and 4 GPUs; the spread case; the GPU timeline's attribution of each GPU's idle time (per
iteration or sweep); the SIMULATED predictions beside the measurements (target: within 10%)
and the SIMULATED ablations (where the 4-GPU time goes). A part or step that did not run is
said to be missing, never filled in. --sim-only writes the predictions folder's README alone
(predictions against the --before measurement)."""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
DEFAULT_PREDICTED = os.path.join(RESULTS, "2026-11-28-sim-h200x4-predictions")
DEFAULT_BEFORE = os.path.join(RESULTS, "2026-11-26-h200x4-a13d08a-four")
POLICY = "minmax-transfer-time"
TARGET = {"medium": 1.15, "large": 1.05}
TITLES = {"cg": "CG", "cg-views": "CG on views", "jacobi": "Jacobi", "vec": "VEC", "bs": "B&S",
          "ml": "ML", "mul": "MUL"}
#: iterations (CG) or sweeps (JACOBI) per run, for the per-iteration timeline
STEPS = {"cg": 25, "cg-views": 25, "jacobi": 100}
ABLATIONS = [("host1", "as predicted (host_time=1)"),
             ("base", "host issues in no time (host_time=0)"),
             ("no-edges", "host_time=0, no cost for a graph edge between GPUs (graph_edge_us 0)"),
             ("no-setup", "host_time=0, no copy set-up (every link's latency 0)"),
             ("inf-links", "host_time=0, infinite links (10^6 GB/s, no latency)"),
             ("no-launch", "host_time=0, no launch, copy-call or graph-launch cost"),
             ("kernels-only", "all of those at once: the kernels alone")]


# ================================================================ reading

def gather(paths):
    """Every file under the paths (directories, or .tgz files unpacked to a temporary folder),
    by base name; later paths win."""
    files = {}
    for p in paths:
        if os.path.isfile(p) and (p.endswith(".tgz") or p.endswith(".tar.gz")):
            d = tempfile.mkdtemp(prefix="four-report-")
            with tarfile.open(p) as t:
                t.extractall(d)
            p = d
        for dirpath, _, names in os.walk(p):
            for n in names:
                files.setdefault(n, []).append(os.path.join(dirpath, n))
    return files


def load_results(paths):
    """{(bench, size, version, policy, gpus): result} of valid run.py results."""
    out = {}
    for p in paths:
        with open(p) as f:
            for r in json.load(f).get("results", []):
                if r.get("valid") and r.get("median_s") and not r.get("sweep"):
                    out[(r["bench"], r["size"], r["version"], r.get("policy") or "",
                         r["gpus"])] = r
    return out


def invocation(paths):
    for p in paths:
        with open(p) as f:
            inv = json.load(f).get("invocations", [])
        if inv:
            return inv[-1]
    return {}


def ms(res, key):
    r = res.get(key)
    return r["median_s"] * 1e3 if r else None


def fmt(v, nd=None):
    if v is None:
        return "–"
    if nd is not None:
        return "%.*f" % (nd, v)
    return "%.3g" % v if v < 100 else "%.0f" % v


def ratio(a, b):
    return a / b if a is not None and b else None


def read_text(files, name):
    return open(files[name][0]).read() if name in files else ""


def metg(files, names):
    """{(runtime, issue, pattern, gpus): us} from granularity CSVs' METG lines."""
    out = {}
    pat = re.compile(r"# METG\(50%\) (\S+) (\S+) (\S+) on (\S+)(?: gpus)?: ([<>]?) ?([\d.]+) us")
    for name in names:
        for path in files.get(name, []):
            for line in open(path):
                m = pat.match(line.strip())
                if m:
                    runtime, issue, pattern, dev, sign, v = m.groups()
                    gpus = len(dev.split(",")) if ":" in dev else int(dev)
                    if dev.startswith("host:"):
                        gpus = int(dev.split(":")[1])
                    out[(runtime, issue, pattern, gpus)] = (sign, float(v))
    return out


# ================================================================ sections

def section_head(files, commit_arg):
    lines = []
    env = read_text(files, "env.txt")
    gpus = [l for l in env.splitlines() if l.startswith("GPU ")]
    com = read_text(files, "commit.txt")
    commit = commit_arg
    tree = re.search(r"^tree (\w+)", com, re.M)
    head = re.search(r"^git_head (\w+)", com, re.M)
    given = re.search(r"^PGB_COMMIT (\w+)", com, re.M)
    if not commit and given:
        commit = given.group(1)
    if not commit and tree:  # the commit of this repository with that tree, if any
        r = subprocess.run(["git", "-C", ROOT, "log", "--all", "--format=%h %T"],
                           capture_output=True, text=True)
        for line in r.stdout.splitlines():
            h, t = line.split()
            if t == tree.group(1):
                commit = h
                break
    inv = invocation(files.get("four.json", []) + files.get("paper.json", []))
    lines.append("# Four GPUs: CG, CG on views, Jacobi, the paper's sizes, METG, spread and the "
                 "GPU timeline on 4 × H200 (issue 42)")
    lines.append("")
    lines.append("Device: %s; date %s; commit **%s**%s." % (
        "nvidia-h200-x4 (%d × %s; `env.txt`)" % (
            len(gpus), gpus[0].split(":", 1)[1].split("(")[0].strip()) if gpus else "(no env.txt)",
        inv.get("date", "?"), commit or "unknown (pass --commit)",
        " (tree %s; git HEAD of the device's copy %s)" % (
            tree.group(1)[:12], head.group(1)[:12]) if tree and head else ""))
    lines.append("")
    lines.append("Commands (repository root, `nvidia-h200-x4`, one device command each, nothing "
                 "carried): `bash benchmarks/four_gpu.sh part1`, `bash benchmarks/four_gpu.sh "
                 "part2`; this file: `python3 benchmarks/four_gpu_report.py <unpacked $OUT of "
                 "both>`. Medians of 3 timed runs after 1 warm-up, every value validated "
                 "(the suite's usual sample is 10 after 3).")
    steps = []
    for p in files.get("steps.log", []):
        part = os.path.basename(os.path.dirname(p))
        for l in open(p):
            steps.append("%s %s" % (part, l.strip()))
    if steps:
        lines += ["", "Steps and their start times (`steps.log`):", "", "```"] + steps + ["```"]
        cut = [s for s in steps if "CUT for time" in s]
        lines.append("")
        lines.append("Cut for time: %s." % ("; ".join(cut) if cut else "nothing"))
    return lines


def section_suite(res, before):
    lines = ["", "## CG, CG on views and Jacobi at medium and large, 1 / 2 / 4 GPUs", ""]
    if not res:
        return lines + ["Not measured (part1's `four.json` missing)."]
    lines += ["polygpu under minmax-transfer-time (as on 2026-11-26); CUDA C: the hand-written "
              "multi-GPU code as one CUDA graph (`cuda`) and issued on streams every run "
              "(`cuda-streams`); CG on views is compared with CG's CUDA C. Targets (issue 42): "
              "polygpu / CUDA C ≤ 1.15 at medium and ≤ 1.05 at large, judged on 4 GPUs against "
              "the faster hand-written version; speedup 1→4 at least the hand-written one's.", "",
              "| workload | size | polygpu 1 / 2 / 4 (ms) | CUDA C graph 1 / 2 / 4 | CUDA C streams "
              "1 / 2 / 4 | polygpu / CUDA C graph 1 / 2 / 4 | at 4: / best CUDA C (target) | "
              "2026-11-26 at 4 | speedup 1→4 polygpu / best CUDA C | met |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    verdicts = []
    sizes = [s for s in ("tiny", "small", "medium", "large") if any(k[1] == s for k in res)]
    for bench in ("cg", "cg-views", "jacobi"):
        for size in sizes:
            base = "cg" if bench == "cg-views" else bench
            p = [ms(res, (bench, size, "polygpu", POLICY, g)) for g in (1, 2, 4)]
            c = [ms(res, (base, size, "cuda", "", g)) for g in (1, 2, 4)]
            s = [ms(res, (base, size, "cuda-streams", "", g)) for g in (1, 2, 4)]
            if not any(p):
                continue
            best = [min([x for x in (a, b) if x is not None], default=None) for a, b in zip(c, s)]
            r4 = ratio(p[2], best[2])
            sp_p = ratio(p[0], p[2])
            sp_c = ratio(best[0], best[2])
            b4 = None
            if before:
                b4 = ratio(ms(before, (bench, size, "polygpu", POLICY, 4)),
                           ms(before, (base, size, "cuda", "", 4)))
            ok_r = r4 is not None and r4 <= TARGET.get(size, 0)
            ok_s = sp_p is not None and sp_c is not None and sp_p >= sp_c
            met = "–" if r4 is None else ("ratio %s, speedup %s" % (
                "met" if ok_r else "**missed**", "met" if ok_s else "**missed**"))
            verdicts.append((bench, size, r4, ok_r, sp_p, sp_c, ok_s))
            lines.append("| %s | %s | %s | %s | %s | %s | %s (≤ %s) | %s | %s / %s | %s |" % (
                TITLES[bench], size, " / ".join(fmt(x) for x in p),
                " / ".join(fmt(x) for x in c), " / ".join(fmt(x) for x in s),
                " / ".join(fmt(ratio(a, b), 2) for a, b in zip(p, c)), fmt(r4, 2),
                fmt(TARGET.get(size), 2),
                fmt(b4, 2), fmt(sp_p, 2), fmt(sp_c, 2), met))
    missed = [v for v in verdicts if not (v[3] and v[6])]
    lines += ["", "%d of %d configurations meet both targets%s." % (
        len(verdicts) - len(missed), len(verdicts),
        "; missed: " + ", ".join("%s %s" % (TITLES[b], s) for b, s, *_ in missed)
        if missed else "")]
    return lines


def section_policy(res, ef):
    lines = ["", "## earliest-finish (the library's default policy) against minmax-transfer-time",
             ""]
    if not ef:
        return lines + ["Not measured (part1's `four-ef.json` missing: cut for time or failed)."]
    lines += ["| workload | size | GPUs | minmax-transfer-time ms | earliest-finish ms | ratio |",
              "| --- | --- | --- | --- | --- | --- |"]
    for (bench, size, version, policy, g), r in sorted(ef.items()):
        if policy != "earliest-finish":
            continue
        m = ms(res, (bench, size, "polygpu", POLICY, g))
        e = r["median_s"] * 1e3
        lines.append("| %s | %s | %d | %s | %s | %s |" % (TITLES[bench], size, g, fmt(m), fmt(e),
                                                           fmt(ratio(e, m), 2)))
    return lines


def section_variants(res, files):
    lines = ["", "## How CG and Jacobi are recorded, medium, 4 GPUs", ""]
    names = sorted(n for n in files if n.startswith("variant-") and n.endswith(".json"))
    if not names:
        return lines + ["Not measured (part1's `variant-*.json` missing)."]
    what = {"cg-eager": "no recording (PGB_CG_RECORD=0): every launch issued eagerly",
            "cg-run": "one recording per run (PGB_CG_RECORD=run), replayed once a run",
            "jacobi-eager": "no recording (PGB_JACOBI_RECORD=0)",
            "jacobi-rp16": "one recording per sweep (PGB_JACOBI_RECORD_PARTITIONS=16)"}
    lines += ["Default: CG's iteration recorded once and replayed every iteration; Jacobi one "
              "recording per sweep and group of 8 partitions.", "",
              "| variant | workload | ms | default ms | variant / default | variant / CUDA C graph |",
              "| --- | --- | --- | --- | --- | --- |"]
    for n in names:
        v = n[len("variant-"):-len(".json")]
        for (bench, size, _, _, g), r in sorted(load_results(files[n]).items()):
            t = r["median_s"] * 1e3
            d = ms(res, (bench, size, "polygpu", POLICY, g))
            c = ms(res, ("cg" if bench == "cg-views" else bench, size, "cuda", "", g))
            lines.append("| %s | %s %s | %s | %s | %s | %s |" % (
                what.get(v, v), TITLES[bench], size, fmt(t), fmt(d), fmt(ratio(t, d), 2),
                fmt(ratio(t, c), 2)))
    return lines


def section_paper(res):
    lines = ["", "## The five workloads at the paper's largest size (paper-max)", ""]
    if not res:
        return lines + ["Not measured (part2's `paper.json` missing)."]
    lines += ["polygpu (the suite's partitions), polygpu-split (one launch over whole arrays, "
              "split over the GPUs; VEC, B&S, MUL) and the hand-written CUDA C, minmax-transfer-"
              "time. Speedup: 1-GPU time over 4-GPU time of the same version.", "",
              "| workload | polygpu 1 / 4 (ms) | polygpu-split 1 / 4 | CUDA C 1 / 4 | at 4: polygpu / "
              "CUDA C | split / CUDA C | speedup 1→4 polygpu / split / CUDA C |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    ratios = []
    size = "paper-max" if any(k[1] == "paper-max" for k in res) else sorted(res)[0][1]
    for bench in ("vec", "bs", "ml", "cg", "mul"):
        p = [ms(res, (bench, size, "polygpu", POLICY, g)) for g in (1, 4)]
        s = [ms(res, (bench, size, "polygpu-split", POLICY, g)) for g in (1, 4)]
        c = [ms(res, (bench, size, "cuda", "", g)) for g in (1, 4)]
        if not any(p + s + c):
            continue
        r = ratio(p[1], c[1])
        if r:
            ratios.append(r)
        lines.append("| %s | %s | %s | %s | %s | %s | %s / %s / %s |" % (
            TITLES[bench], " / ".join(fmt(x) for x in p), " / ".join(fmt(x) for x in s),
            " / ".join(fmt(x) for x in c), fmt(r, 2), fmt(ratio(s[1], c[1]), 2),
            fmt(ratio(p[0], p[1]), 2), fmt(ratio(s[0], s[1]), 2), fmt(ratio(c[0], c[1]), 2)))
    if ratios:
        g = 1.0
        for r in ratios:
            g *= r
        lines += ["", "Geometric mean of polygpu / CUDA C at 4 GPUs over %d workloads: %.2f "
                  "(the suite's target ≤ 1.05)." % (len(ratios), g ** (1 / len(ratios)))]
    return lines


def section_metg(files, before_dir):
    lines = ["", "## Granularity (METG(50%), µs), 1 and 4 GPUs", ""]
    now = metg(files, ["gran-polygpu-1.csv", "gran-polygpu-4.csv", "gran-cuda-1.csv",
                       "gran-cuda-4.csv"])
    if not now:
        return lines + ["Not measured (part1's `gran-*.csv` missing)."]
    old = metg({"c": [os.path.join(before_dir, "c-4.csv")],
                "u": [os.path.join(before_dir, "cuda-4.csv")]}, ["c", "u"]) \
        if before_dir and os.path.exists(os.path.join(before_dir, "c-4.csv")) else {}
    lines += ["Spin-kernel tasks, 2000 a configuration (`benchmarks/granularity`, polygpu from C; "
              "`granularity_cuda`, hand-written streams and CUDA graph). chain: one chain of "
              "dependent tasks; independent: one chain per GPU. Smaller is better.", "",
              "| pattern | GPUs | polygpu eager | CUDA C streams | eager / streams | polygpu "
              "replayed | CUDA C graph | replayed / graph | 2026-11-26 (eager, replayed, streams, "
              "graph) |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]

    def get(d, *k):
        v = d.get(k)
        return None if v is None else v[1]

    def show(d, *k):
        v = d.get(k)
        return "–" if v is None else "%s%.2f" % (v[0], v[1])
    for pattern in ("chain", "independent"):
        for g in (1, 4):
            e, s = get(now, "polygpu-c", "eager", pattern, g), get(now, "cuda-c", "streams", pattern, g)
            r, gr = get(now, "polygpu-c", "replay", pattern, g), get(now, "cuda-c", "graph", pattern, g)
            if e is None and s is None:
                continue
            b = " / ".join(show(old, *k) for k in (("polygpu-c", "eager", pattern, g),
                                                   ("polygpu-c", "replay", pattern, g),
                                                   ("cuda-c", "streams", pattern, g),
                                                   ("cuda-c", "graph", pattern, g))) \
                if g == 4 and old else "–"
            lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                pattern, g, show(now, "polygpu-c", "eager", pattern, g),
                show(now, "cuda-c", "streams", pattern, g), fmt(ratio(e, s), 2),
                show(now, "polygpu-c", "replay", pattern, g), show(now, "cuda-c", "graph", pattern, g),
                fmt(ratio(r, gr), 2), b))
    return lines


def section_spread(files):
    lines = ["", "## The spread case (eight independent calls reading one input)", ""]
    text = read_text(files, "spread.txt")
    if not text.strip():
        return lines + ["Not measured (part2's `spread.txt` missing)."]
    lines += ["| devices | earliest-finish (default) ms, devices of the calls | "
              "minmax-transfer-time ms, devices | ratio |", "| --- | --- | --- | --- |"]
    for block in text.split("spread.py: ")[1:]:
        dev = re.search(r"devices (\S+) \((\d+): (.*?)\);", block)
        rows = dict((m.group(1), (m.group(2), m.group(3))) for m in re.finditer(
            r"^\| (\S+) \| ([\d ]+) \| ([\d.]+) \|", block, re.M))
        rat = re.search(r"\(medians\): ([\d.]+)x", block)
        ef, mm = rows.get("earliest-finish"), rows.get("minmax-transfer-time")
        lines.append("| %s | %s | %s | %s× |" % (
            "%s × %s (%s)" % (dev.group(2), dev.group(3), dev.group(1)) if dev else "?",
            "%s, %s" % (ef[1], ef[0].strip()) if ef else "–",
            "%s, %s" % (mm[1], mm[0].strip()) if mm else "–", rat.group(1) if rat else "–"))
    return lines


def section_timeline(files):
    lines = ["", "## The GPU timeline (CUPTI) of CG, CG on views and Jacobi, medium, 4 GPUs", ""]
    names = sorted(n for n in files if n.startswith("attribution-") and n.endswith(".json"))
    if not names:
        return lines + ["Not recorded (part1's `attribution-*.json` missing)."]
    lines += ["One traced run (trace on, `PG_TRACE_EVENTS=0`, CUPTI's GPU timestamps; under the "
              "trace a replay runs eagerly, so this is the eager issue's timeline). Each GPU's "
              "idle time between its kernels, attributed by `trace_summary.py`: *host* — the "
              "kernel's driver call had not begun; *copy* — a copy or memset of this GPU ran; "
              "*other GPU* — work ran on another GPU (a dependency); *latency/waits* — nothing "
              "ran although the kernel was submitted. Per iteration (CG, 25 a run) or sweep "
              "(Jacobi, 100), µs.", "",
              "| workload | GPU | kernels | kernel busy / iter | idle gaps / iter | host | copy | "
              "other GPU | latency / waits | start − driver call (median) |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for n in names:
        with open(files[n][0]) as f:
            doc = json.load(f)
        bench = n[len("attribution-"):].split("-medium")[0].split("-tiny")[0]
        steps = STEPS.get(bench, 1)
        for path, rep in doc.items():
            for dev, r in sorted(rep.get("gpu", {}).items()):
                g = r.get("gap_us", 0) or 0

                def share(k):
                    return "%.1f (%.0f%%)" % (r.get(k, 0) / steps, 100 * r.get(k, 0) / g) \
                        if g else "–"
                lines.append("| %s | %s | %d | %.1f | %.1f | %s | %s | %s | %s | %s |" % (
                    TITLES.get(bench, bench), dev, r.get("kernels", 0),
                    r.get("kernel_busy_us", 0) / steps, g / steps, share("host_us"),
                    share("copy_engine_us"), share("other_gpu_us"), share("latency_us"),
                    fmt(r.get("start_minus_call_us_median"), 1)))
            if not rep.get("gpu"):
                lines.append("| %s | – | gpu timeline: %s | | | | | | | |" % (
                    TITLES.get(bench, bench), rep.get("gpu_timeline") or "absent"))
    runs = [l for n in sorted(files) if n.startswith("attribution-") and n.endswith(".txt")
            for l in open(files[n][0]) if l.startswith("run:") or l.startswith("gpu timeline")]
    if runs:
        lines += ["", "Host view of the same runs (`attribution-*.txt`):", "", "```"] + \
            [l.rstrip() for l in runs] + ["```"]
    return lines


def predictions(pred_dir):
    """{(bench, size, policy, gpus): {"h1": [ms...], "h0": ms}} from four_gpu_sim.py's files."""
    out = {}
    for p in sorted(glob.glob(os.path.join(pred_dir, "predicted-h*.json"))):
        kind = "h0" if os.path.basename(p).startswith("predicted-h0") else "h1"
        for (bench, size, _, policy, g), r in load_results([p]).items():
            d = out.setdefault((bench, size, policy, g), {"h1": []})
            if kind == "h0":
                d["h0"] = r["median_s"] * 1e3
            else:
                d["h1"].append(r["median_s"] * 1e3)
    return out


def section_predictions(pred_dir, measured, label):
    lines = ["", "## SIMULATED predictions beside the measurements (%s)" % label, ""]
    pred = predictions(pred_dir) if pred_dir else {}
    if not pred:
        return lines + ["No predictions (%s has no predicted-*.json)." % pred_dir]
    models = os.path.join(pred_dir, "profile-models.txt")
    lines += ["SIMULATED: `benchmarks/four_gpu_sim.py` on simulated 4 × H200 NV18 "
              "(`h200x4-nv18`, its first 1 and 2 GPUs), virtual time, computed on a CPU; "
              "host_time=1: the median (and range) of the invocations, this CPU's host time "
              "counted; host_time=0: the host issues in no time. Target: within 10%% of the "
              "measurement (✗ where not). Kernel models: %s." % (
                  "; ".join(l.strip() for l in open(models)) if os.path.exists(models) else "?"),
              "", "| workload | size | policy | GPUs | measured ms | SIMULATED host_time=1 ms "
              "(range) | ratio | SIMULATED host_time=0 ms | ratio |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    n = within = 0
    for key in sorted(pred, key=lambda k: (k[0], k[1] != "medium", k[2] != POLICY, k[3])):
        bench, size, policy, g = key
        d = pred[key]
        m = ms(measured, (bench, size, "polygpu", policy, g)) if measured else None
        h1 = statistics.median(d["h1"]) if d["h1"] else None
        r1, r0 = ratio(h1, m), ratio(d.get("h0"), m)
        flag = ""
        if r1 is not None:
            n += 1
            if abs(r1 - 1) <= 0.10:
                within += 1
            else:
                flag = " ✗"
        lines.append("| %s | %s | %s | %d | %s | %s%s | %s%s | %s | %s |" % (
            TITLES[bench], size, policy, g, fmt(m), fmt(h1),
            " (%s–%s)" % (fmt(min(d["h1"])), fmt(max(d["h1"]))) if len(d["h1"]) > 1 else "",
            fmt(r1, 2), flag, fmt(d.get("h0")), fmt(r0, 2)))
    if n:
        lines += ["", "%d of %d measured configurations predicted within 10%% (host_time=1)."
                  % (within, n)]
    return lines


def section_ablations(pred_dir, measured, label):
    lines = ["", "## SIMULATED: where the 4-GPU time goes (ablations, %s)" % label, ""]
    abl = {}
    for name, _ in ABLATIONS:
        p = os.path.join(pred_dir or "", "ablation-%s.json" % name)
        if os.path.exists(p):
            abl[name] = load_results([p])
    if not abl:
        return lines + ["No ablations (ablation-*.json missing)."]
    lines += ["SIMULATED, 4 × H200 NV18, minmax-transfer-time. From the third row on each row "
              "takes one fixed cost away from the second (host_time=0), the last all of them. "
              "ms, and in brackets the share of the measured polygpu time.", ""]
    keys = [(b, s) for b in ("cg", "cg-views", "jacobi") for s in ("medium", "large")
            if any((b, s, "polygpu", POLICY, 4) in r for r in abl.values())]
    lines.append("| SIMULATED | " + " | ".join("%s %s" % (TITLES[b], s) for b, s in keys) + " |")
    lines.append("| --- |" + " --- |" * len(keys))
    if measured:
        lines.append("| measured polygpu | " + " | ".join(
            fmt(ms(measured, (b, s, "polygpu", POLICY, 4))) for b, s in keys) + " |")
        lines.append("| measured CUDA C (graph) | " + " | ".join(
            fmt(ms(measured, ("cg" if b == "cg-views" else b, s, "cuda", "", 4)))
            for b, s in keys) + " |")
    for name, what in ABLATIONS:
        if name not in abl:
            continue
        cells = []
        for b, s in keys:
            v = ms(abl[name], (b, s, "polygpu", POLICY, 4))
            m = ms(measured, (b, s, "polygpu", POLICY, 4)) if measured else None
            cells.append("%s%s" % (fmt(v), " (%.0f%%)" % (100 * v / m) if v and m else ""))
        lines.append("| %s | %s |" % (what, " | ".join(cells)))
    return lines


# ================================================================ main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="*", help="the unpacked $OUT of part1 and part2, or the .tgz")
    ap.add_argument("--out", help="write the Markdown here (default: stdout)")
    ap.add_argument("--predicted", default=DEFAULT_PREDICTED)
    ap.add_argument("--before", default=DEFAULT_BEFORE,
                    help="the previous 4-GPU results folder (its four.json, c-4.csv, cuda-4.csv)")
    ap.add_argument("--commit", help="the commit measured (default: from commit.txt)")
    ap.add_argument("--sim-only", action="store_true",
                    help="the predictions folder's README: predictions against --before")
    a = ap.parse_args(argv)
    before_json = os.path.join(a.before, "four.json") if a.before else None
    before = load_results([before_json]) if before_json and os.path.exists(before_json) else {}
    if a.sim_only:
        lines = ["# SIMULATED: CG, CG on views and Jacobi on 1, 2 and 4 simulated H200s "
                 "(predictions, not measurements)", "",
                 "Every figure in this folder is the simulator's virtual time, computed on a CPU "
                 "with no GPU involved: **SIMULATED**. Command: `PYTHONPATH=build/bindings/python "
                 "python3 benchmarks/four_gpu_sim.py --out-dir %s --invocations 3`; tables: "
                 "`python3 benchmarks/four_gpu_report.py --sim-only --predicted %s`." % (
                     os.path.relpath(a.predicted, ROOT), os.path.relpath(a.predicted, ROOT))]
        label = "measured: %s" % os.path.basename(a.before)
        lines += section_predictions(a.predicted, before, label)
        lines += section_ablations(a.predicted, before, label)
    else:
        if not a.inputs:
            ap.error("give the unpacked $OUT of four_gpu.sh (or its .tgz files)")
        files = gather(a.inputs)
        res = load_results(files.get("four.json", []))
        lines = section_head(files, a.commit)
        lines += section_suite(res, before)
        ef = load_results(files.get("four-ef.json", []))
        lines += section_policy(res, ef)
        lines += section_variants(res, files)
        lines += section_timeline(files)
        lines += section_paper(load_results(files.get("paper.json", [])))
        lines += section_metg(files, a.before)
        lines += section_spread(files)
        label = "measured: this run"
        lines += section_predictions(a.predicted, {**res, **ef}, label)
        if "profile-sync.csv.gz" in files:
            lines += ["", "This run recorded a timing profile of these kernels at both sizes, one "
                      "at a time (`part1/profile-sync.csv.gz`): `PYTHONPATH=build/bindings/python "
                      "python3 benchmarks/four_gpu_sim.py --profile part1/profile-sync.csv.gz "
                      "--out-dir DIR` predicts again from it (no model lines needed), and "
                      "`--predicted DIR` here puts those predictions beside."]
        lines += section_ablations(a.predicted, res, label)
    text = "\n".join(lines) + "\n"
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

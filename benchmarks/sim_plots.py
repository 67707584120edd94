#!/usr/bin/env python3
"""Plots and tables of SIMULATED results (benchmarks/run.py JSON from simulated devices).

    python3 benchmarks/sim_plots.py scaling --label "dgx1-v100, derived V100 profile" \\
        --out DIR/dgx1-v100-scaling RESULTS.json
        speedup over 1 GPU against GPUs, one panel per workload, a line per policy
        (PNG and a markdown table of times and speedups)
    python3 benchmarks/sim_plots.py ablation --gpus 8 --label "..." --out DIR/ablation RESULTS.json
        time of each policy over minmax-transfer-time's, per workload at one GPU count, beside
        the GrCUDA paper's published averages on 8 V100s (PNG and markdown)
    python3 benchmarks/sim_plots.py links --machine dgx1-v100 --gpus 8 --out DIR/links RESULTS.json
        which copies crossed which links in each run's last timed run (stats link_bytes): bytes
        between GPUs with a direct link (NVLink), between GPUs without one (through PCIe
        switches, the host and QPI), and between the host and the GPUs (markdown)

Every figure says SIMULATED in its title: these are predictions of the simulated devices, never
to be mixed with measurements."""
import argparse
import collections
import json
import math
import os
import statistics
import sys

POLICIES = ("round-robin", "stream-aware", "min-transfer-size", "minmax-transfer-time",
            "min-transfer-time")
#: The GrCUDA paper ("Taming Multi-GPU Greedy Scheduling Through a Polyglot Runtime"), 8 V100s
#: (DGX-1): time relative to minmax-transfer-time, averaged over its benchmarks, as the issue
#: quotes it: round-robin ~33% slower, stream-aware ~18% slower.
PAPER = {"round-robin": 1.33, "stream-aware": 1.18, "minmax-transfer-time": 1.0}


def load(paths, spread=None):
    """(bench, size) -> (gpus, policy) -> ms: the median over the files that have it (several
    invocations of the same configurations: with host_time=1 placement can differ between them).
    spread, when given, gets (bench, size) -> (gpus, policy) -> (min, max, count)."""
    runs = collections.defaultdict(lambda: collections.defaultdict(list))
    for p in paths:
        with open(p) as f:
            for r in json.load(f)["results"]:
                if r.get("median_s") and not r.get("error"):
                    runs[(r["bench"], r["size"])][(int(r["gpus"]), r["policy"])].append(
                        r["median_s"] * 1e3)
    t = collections.defaultdict(dict)
    for k, v in runs.items():
        for c, xs in v.items():
            t[k][c] = statistics.median(xs)
            if spread is not None:
                spread.setdefault(k, {})[c] = (min(xs), max(xs), len(xs))
    return t


def plt_module():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def scaling(a):
    t = load(a.results)
    keys = sorted(t)
    counts = sorted({g for v in t.values() for g, _ in v})
    pols = [p for p in POLICIES if any(p == q for v in t.values() for _, q in v)]
    md = ["| workload | size | policy | " + " | ".join("%d GPU%s" % (g, "s" if g > 1 else "")
                                                      for g in counts) + " |",
          "|" + " --- |" * (3 + len(counts))]
    plt = plt_module()
    cols = min(4, len(keys))
    rows = math.ceil(len(keys) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.3 * rows), squeeze=False)
    for i, k in enumerate(keys):
        ax = axes[i // cols][i % cols]
        v = t[k]
        one = v.get((1, "minmax-transfer-time"))
        for p in pols:
            xs = [g for g in counts if (g, p) in v or (g == 1 and one)]
            ys = [v.get((g, p), one if g == 1 else None) for g in xs]
            if len(xs) < 2 or not one:
                continue
            ax.plot(xs, [one / y for y in ys], marker="o", label=p)
            md.append("| %s | %s | %s | " % (k[0], k[1], p) + " | ".join(
                ("%.1f (×%.2f)" % (v[(g, p)], one / v[(g, p)]) if (g, p) in v else
                 ("%.1f" % one if g == 1 else "–")) for g in counts) + " |")
        ax.plot(counts, counts, color="grey", linestyle=":", label="linear")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xticks(counts)
        ax.set_xticklabels([str(g) for g in counts])
        ax.set_title("%s %s (1 GPU: %.1f ms)" % (k[0], k[1], one or float("nan")), fontsize=9)
        ax.set_xlabel("GPUs")
        ax.set_ylabel("speedup over 1 GPU")
        ax.grid(alpha=0.3)
    for j in range(len(keys), rows * cols):
        axes[j // cols][j % cols].axis("off")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("SIMULATED (predictions, not measurements): %s" % a.label, fontsize=11)
    fig.tight_layout()
    fig.savefig(a.out + ".png", dpi=110)
    with open(a.out + ".md", "w") as f:
        f.write("SIMULATED: %s. Times in ms (virtual), (×k) speedup over 1 GPU.\n\n" % a.label)
        f.write("\n".join(md) + "\n")
    print("wrote %s.png, %s.md" % (a.out, a.out))


def range_text(sp):
    lo, hi, n = sp
    return "; %d runs %.1f–%.1f" % (n, lo, hi) if n > 1 else ""


def ablation(a):
    spread = {}
    t = load(a.results, spread)
    keys = [k for k in sorted(t) if (a.gpus, "minmax-transfer-time") in t[k]]
    pols = [p for p in POLICIES if any((a.gpus, p) in t[k] for k in keys)]
    rel = {k: {p: t[k][(a.gpus, p)] / t[k][(a.gpus, "minmax-transfer-time")]
               for p in pols if (a.gpus, p) in t[k]} for k in keys}
    geo = {p: math.exp(sum(math.log(rel[k][p]) for k in keys if p in rel[k]) /
                       max(1, sum(1 for k in keys if p in rel[k]))) for p in pols}
    md = ["| workload | size | " + " | ".join(pols) + " |", "|" + " --- |" * (2 + len(pols))]
    for k in keys:
        md.append("| %s | %s | " % k + " | ".join(
            "%.2f (%.1f ms%s)" % (rel[k][p], t[k][(a.gpus, p)], range_text(spread[k][(a.gpus, p)]))
            if p in rel[k] else "–" for p in pols) + " |")
    md.append("| **geomean** | | " + " | ".join("**%.2f**" % geo[p] for p in pols) + " |")
    md.append("| GrCUDA paper (8 V100, measured, average) | | " + " | ".join(
        ("%.2f" % PAPER[p]) if p in PAPER else "–" for p in pols) + " |")
    plt = plt_module()
    groups = ["%s\n%s" % k for k in keys] + ["geomean", "GrCUDA paper\n(measured)"]
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(groups)), 4.2))
    w = 0.8 / len(pols)
    for i, p in enumerate(pols):
        ys = [rel[k].get(p, float("nan")) for k in keys] + [geo[p], PAPER.get(p, float("nan"))]
        xs = [j + (i - (len(pols) - 1) / 2) * w for j in range(len(groups))]
        ax.bar(xs, [min(y, a.clip) for y in ys], width=w, label=p)
        for x, y in zip(xs, ys):
            if y == y and y > a.clip:
                ax.text(x, a.clip, "%.1f" % y, ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=8)
    ax.set_ylabel("time / minmax-transfer-time's")
    ax.set_ylim(0, a.clip * 1.08)
    ax.legend(fontsize=7, ncol=3)
    ax.set_title("SIMULATED (predictions): %s, %d GPUs; last group: the paper's measurements"
                 % (a.label, a.gpus), fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out + ".png", dpi=110)
    with open(a.out + ".md", "w") as f:
        f.write("SIMULATED: %s, %d GPUs. Time over minmax-transfer-time's (>1: slower), the "
                "time (virtual ms, the median over invocations) in brackets, with the "
                "invocations' range where there are several.\n\n" % (a.label, a.gpus))
        f.write("\n".join(md) + "\n")
    print("wrote %s.png, %s.md" % (a.out, a.out))


def links(a):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sim_topo
    direct = set()
    for line in sim_topo.read_lines(a.machine):
        w = sim_topo.words(line)
        if w and w[0] in ("link", "dlink"):
            ends = [sim_topo.gpu_index(x) for x in w[1:3]]
            if None not in ends:
                direct |= {tuple(ends), tuple(reversed(ends))} if w[0] == "link" else {tuple(ends)}
    md = ["| workload | size | policy | runs | ms | GPU-GPU over NVLink (direct) | GPU-GPU without a "
          "direct link (PCIe, host, QPI) | host <-> GPU |", "|" + " --- |" * 8]
    rows = collections.defaultdict(list)
    for p in a.results:
        with open(p) as f:
            for r in json.load(f)["results"]:
                if int(r["gpus"]) != a.gpus or not r.get("median_s"):
                    continue
                lb = (r.get("stats_last_run") or {}).get("link_bytes") or {}
                nv = pc = host = 0
                for k, v in lb.items():
                    s, d = k.split("->")
                    if "host" in (s, d):
                        host += v
                    elif (int(s), int(d)) in direct:
                        nv += v
                    else:
                        pc += v
                rows[(r["bench"], r["size"], r["policy"])].append((r["median_s"] * 1e3, nv, pc, host))
    for k in sorted(rows, key=lambda k: (k[0], k[1], POLICIES.index(k[2]) if k[2] in POLICIES else 9)):
        v = rows[k]
        md.append("| %s | %s | %s | %d | %s | %s | %s | %s |" % (
            k[0], k[1], k[2], len(v), " / ".join("%.1f" % x[0] for x in v),
            " / ".join("%.3g MB" % (x[1] / 1e6) for x in v),
            " / ".join("%.3g MB" % (x[2] / 1e6) for x in v),
            " / ".join("%.3g MB" % (x[3] / 1e6) for x in v)))
    with open(a.out + ".md", "w") as f:
        f.write("SIMULATED: bytes moved in the last timed run of each invocation on %s, %d GPUs "
                "(one value per invocation, ' / ' between them).\n\n" % (a.machine, a.gpus))
        f.write("\n".join(md) + "\n")
    print("wrote %s.md" % a.out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("scaling")
    s.add_argument("results", nargs="+")
    s.add_argument("--label", required=True)
    s.add_argument("--out", required=True)
    b = sub.add_parser("ablation")
    b.add_argument("results", nargs="+")
    b.add_argument("--gpus", type=int, default=8)
    b.add_argument("--label", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--clip", type=float, default=3.0, help="bars above this are cut, labelled")
    lk = sub.add_parser("links")
    lk.add_argument("results", nargs="+")
    lk.add_argument("--machine", required=True)
    lk.add_argument("--gpus", type=int, default=8)
    lk.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    {"scaling": scaling, "ablation": ablation, "links": links}[a.cmd](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())

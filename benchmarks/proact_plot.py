#!/usr/bin/env python3
"""proact_plot.py: the chunk-size sweep of PROACT's microbenchmark (tests/gpu/chunks.sh's
output folder): speedup over copy-after-kernel against the chunk size, polygpu
(benchmarks/proact_runtime.c) and the hand-written mechanism (benchmarks/proact_micro.cu), for
1 GPU (consumer: the host) and 2 GPUs (consumer: the other GPU), the runtime's own choice
marked. Usage: proact_plot.py DIR [--png FILE]"""
import argparse
import csv
import json
import os

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_of(s):
    return int(s[:-1]) * UNITS[s[-1]] if s[-1] in UNITS else int(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--png", default=None)
    a = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, g in zip(axes, (1, 2)):
        rows = [json.loads(l) for l in open(os.path.join(a.dir, "proact-runtime-%dgpu.jsonl" % g))]
        sweep = [(size_of(r["chunk_bytes"]), r["speedup"]) for r in rows
                 if r.get("config") == "chunked" and r["chunk_bytes"] != "auto"]
        auto = [r for r in rows if r.get("config") == "chunked" and r["chunk_bytes"] == "auto"][0]
        ax.plot(*zip(*sorted(sweep)), "o-", label="polygpu, chunk_bytes swept")
        ax.axhline(auto["speedup"], color="C0", ls="--",
                   label="polygpu, its own size: %.2fx" % auto["speedup"])
        hand = [(int(r["chunk_bytes"]), float(r["speedup_vs_bulk"]))
                for r in csv.DictReader(l for l in open(os.path.join(a.dir, "proact-micro-%dgpu.csv" % g))
                                        if not l.startswith("#"))]
        ax.plot(*zip(*sorted(hand)), "s-", color="C1", label="hand-written CUDA C")
        ax.axhline(2.0, color="grey", lw=0.8, label="ideal (compute = copy)")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("chunk size (bytes)")
        ax.set_title("%d GPU%s: 256 MiB to %s" % (g, "s" if g > 1 else "", "the other GPU" if g > 1 else "the host"))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("speedup over copy-after-kernel")
    axes[0].legend(fontsize=8)
    fig.suptitle("Transfers that start before the producer ends (measured, 2 x H200)")
    fig.tight_layout()
    fig.savefig(a.png or os.path.join(a.dir, "sweep.png"), dpi=110)


if __name__ == "__main__":
    main()

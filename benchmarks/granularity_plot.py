#!/usr/bin/env python3
"""granularity_plot.py: efficiency against task duration from the CSV of granularity.c,
granularity.py and granularity_cuda.cu (any number of files), one line per runtime / issue /
pattern / devices, with the 50% line that defines METG.

    python3 benchmarks/granularity_plot.py OUT.png a.csv b.csv ...
"""

import csv
import sys
from collections import defaultdict


def main():
    out, files = sys.argv[1], sys.argv[2:]
    series = defaultdict(list)
    for f in files:
        with open(f) as fh:
            rows = [line for line in fh if line.strip() and not line.startswith("#")]
        for r in csv.DictReader(rows):
            key = "%s %s %s (%s)" % (r["runtime"], r["issue"], r["pattern"], r["devices"])
            series[key].append((float(r["duration_us"]), float(r["efficiency"])))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 6))
    for key in sorted(series):
        pts = sorted(series[key])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=key)
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("task duration (µs)")
    ax.set_ylabel("efficiency (ideal / measured)")
    ax.set_ylim(0, 1.05)
    ax.set_title("Task granularity: METG(50%) is where a line crosses 0.5")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print("wrote", out)


if __name__ == "__main__":
    main()

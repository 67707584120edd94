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
            key = (r["runtime"], r["issue"], r["pattern"], r["devices"])
            series[key].append((float(r["duration_us"]), float(r["efficiency"])))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    # One colour per way of issuing, one line style per runtime, one marker per device count:
    # eighteen lines stay apart.
    colours = {}
    styles = {"cuda-c": "-", "polygpu-c": "--", "polygpu-python": ":"}
    fig, ax = plt.subplots(figsize=(10, 6.5))
    for key in sorted(series):
        runtime, issue, pattern, devices = key
        pts = sorted(series[key])
        colour = colours.setdefault((issue, pattern), "C%d" % len(colours))
        two = "+" in devices or devices.startswith("2")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colour,
                linestyle=styles.get(runtime, "-."), marker="s" if two else "o", markersize=4,
                label="%s %s %s (%s)" % key)
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("task duration (µs)")
    ax.set_ylabel("efficiency (ideal / measured)")
    ax.set_ylim(0, 1.05)
    ax.set_title("Task granularity: METG(50%) is where a line crosses 0.5")
    ax.legend(fontsize=7, loc="lower right", ncol=2)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print("wrote", out)


if __name__ == "__main__":
    main()

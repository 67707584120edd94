#!/usr/bin/env python3
"""Predicted (simulated devices) against measured (real GPUs): the validation table.

    python3 benchmarks/sim_compare.py --measured M.json [M2.json ...] \\
        --predicted P.json [P2.json ...] [--extra "host_time=0" P0.json ...] [--tolerance 0.10]

Each JSON is a results file of benchmarks/run.py. Rows are matched on (workload, size, version,
policy, GPUs); the ratio is predicted / measured of the medians. A row is within the tolerance
when |ratio - 1| <= tolerance. `--extra LABEL FILE...` adds columns from other predictions (for
example with host time frozen). `--links` adds the link bytes of the last measured and predicted
run (placement: compare those before reading a time). Prints markdown; --out writes it too.
Plain Python (no numpy), so it runs on a GPU machine with nothing installed."""
import argparse
import json
import sys


def key(r):
    return (r["bench"], r["size"], r.get("version", "polygpu"), r.get("policy") or "",
            int(r["gpus"]))


def load(paths):
    """(key -> result) over the files, the later file winning; failed results are left out."""
    out = {}
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        for r in d.get("results", []):
            if r.get("median_s") and not r.get("error"):
                out[key(r)] = r
    return out


def links(r):
    lb = (r.get("stats_last_run") or {}).get("link_bytes") or {}
    return " ".join("%s:%s" % (k, fmt_bytes(v)) for k, v in sorted(lb.items())) or "–"


def fmt_bytes(v):
    for unit, n in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if v >= n:
            return "%.3g%s" % (v / n, unit)
    return "%dB" % v


def table(measured, predicted, extras, tol, with_links):
    head = ["workload", "size", "GPUs", "policy", "measured ms", "predicted ms", "ratio"]
    for label, _ in extras:
        head += ["predicted, %s" % label, "ratio"]
    if with_links:
        head += ["measured link bytes", "predicted link bytes"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    n = ok = 0
    missing = []
    for k in sorted(measured, key=lambda k: (k[0], k[1], k[4], k[3])):
        m = measured[k]
        p = predicted.get(k)
        if p is None:
            missing.append(k)
            continue
        ratio = p["median_s"] / m["median_s"]
        good = abs(ratio - 1) <= tol
        n += 1
        ok += good
        row = [k[0], k[1], str(k[4]), k[3] or k[2], "%.2f" % (m["median_s"] * 1e3),
               "%.2f" % (p["median_s"] * 1e3), "%.2f%s" % (ratio, "" if good else " ✗")]
        for _, ex in extras:
            e = ex.get(k)
            row += (["%.2f" % (e["median_s"] * 1e3), "%.2f" % (e["median_s"] / m["median_s"])]
                    if e else ["–", "–"])
        if with_links:
            row += [links(m), links(p)]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Within %d%%: %d of %d configurations." % (round(tol * 100), ok, n))
    if missing:
        lines.append("Measured without a prediction: " +
                     ", ".join("%s %s %s %d GPUs" % (k[0], k[1], k[3], k[4]) for k in missing))
    return "\n".join(lines) + "\n", ok, n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--measured", nargs="+", required=True)
    ap.add_argument("--predicted", nargs="+", required=True)
    ap.add_argument("--extra", nargs="+", action="append", default=[], metavar="LABEL FILE",
                    help="a label, then prediction files for an extra column")
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--links", action="store_true", help="add the runs' link bytes")
    ap.add_argument("--out", help="also write the table here")
    a = ap.parse_args(argv)
    extras = []
    for ex in a.extra:
        if len(ex) < 2:
            ap.error("--extra needs a label and at least one file")
        extras.append((ex[0], load(ex[1:])))
    text, ok, n = table(load(a.measured), load(a.predicted), extras, a.tolerance, a.links)
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""gemm_plot.py: gemm_bench's CSV (one or more files: 1-GPU and 2-GPU runs) as a summary against
issue 22's targets and a plot (time and energy: polygpu, cuBLASXt, cuBLAS, the bound).

Usage: gemm_plot.py RESULT.csv [RESULT2.csv ...] [--png FILE] [--summary FILE]

Targets (1 GPU unless said): polygpu >= 1.3x cuBLASXt geomean over the set and never slower;
>= 0.85 of the roofline bound on host-resident problems (A, B, C on the host) from 8k up;
within 5% of plain cuBLAS on device-resident operands; on 2 GPUs >= 1.8x the 1-GPU time on
large problems (square from 16k) and >= 1.8x cuBLASXt geomean. Each line says PASS or FAIL
with the numbers; the plot needs matplotlib (only the summary without it)."""

import argparse
import csv
import math
import sys


def load(paths):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                for k in ("pg_s", "pg_pred_s", "pg_J", "xt_s", "xt_J", "cublas_s", "cublas_J",
                          "bound_s", "max_rel_err"):
                    try:
                        r[k] = float(r[k])
                    except (TypeError, ValueError):
                        r[k] = float("nan")
                for k in ("gpus", "m", "n", "k", "ratio", "pg_tile", "pg_tiles", "xt_block"):
                    r[k] = int(r[k])
                rows.append(r)
    return rows


def geomean(v):
    v = [x for x in v if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def key(r):
    return (r["dtype"], r["shape"], r["m"], r["n"], r["k"], r["place"])


def summary(rows):
    out = []

    def line(ok, text):
        out.append("%s  %s" % ("PASS" if ok else "FAIL", text))

    one = [r for r in rows if r["gpus"] == 1]
    if one:
        dev = one[0]["device"]
        out.append("1 GPU (%s): %d problems" % (dev, len(one)))
        ratios = [(r["xt_s"] / r["pg_s"], r) for r in one if r["pg_s"] > 0]
        g = geomean([x for x, _ in ratios])
        worst = min(ratios, key=lambda t: t[0]) if ratios else (float("nan"), None)
        line(g >= 1.3, "vs cuBLASXt: geomean %.2fx (target >= 1.3x)" % g)
        if worst[1] is not None:
            w = worst[1]
            line(worst[0] >= 1.0, "vs cuBLASXt: slowest %.2fx on %s %s %dx%dx%d %s (target never "
                 "slower)" % (worst[0], w["dtype"], w["shape"], w["m"], w["n"], w["k"], w["place"]))
        host = [r for r in one if r["place"] == "hhh" and max(r["m"], r["n"], r["k"]) >= 8192]
        fr = [(r["bound_s"] / r["pg_s"], r) for r in host if r["pg_s"] > 0]
        if fr:
            lo = min(fr, key=lambda t: t[0])
            line(lo[0] >= 0.85, "host-resident from 8k: %.2f to %.2f of the roofline bound "
                 "(lowest on %s %s %dx%dx%d; target >= 0.85)"
                 % (lo[0], max(x for x, _ in fr), lo[1]["dtype"], lo[1]["shape"], lo[1]["m"],
                    lo[1]["n"], lo[1]["k"]))
        dev_res = [(r["pg_s"] / r["cublas_s"], r) for r in one if r["place"] == "ddd"]
        if dev_res:
            hi = max(dev_res, key=lambda t: t[0])
            line(hi[0] <= 1.05, "device-resident: at most %.3fx plain cuBLAS's time (on %s %s "
                 "%dx%dx%d; target <= 1.05)" % (hi[0], hi[1]["dtype"], hi[1]["shape"], hi[1]["m"],
                                               hi[1]["n"], hi[1]["k"]))
        wrong = [r for r in one if not (r["max_rel_err"] <= (1e-11 if r["dtype"] == "d" else 1e-4))]
        line(not wrong, "results against the reference: %d wrong" % len(wrong))
        e = [(r["xt_J"] / r["pg_J"]) for r in one if r["pg_J"] > 0 and r["xt_J"] > 0]
        if e:
            out.append("      energy: cuBLASXt uses %.2fx polygpu's (geomean over %d problems)"
                       % (geomean(e), len(e)))
    two = [r for r in rows if r["gpus"] == 2]
    if two:
        out.append("2 GPUs: %d problems" % len(two))
        by1 = {key(r): r for r in one}
        sp = [(by1[key(r)]["pg_s"] / r["pg_s"], r) for r in two
              if key(r) in by1 and r["shape"] == "square" and r["m"] >= 16384 and r["pg_s"] > 0]
        if sp:
            lo = min(sp, key=lambda t: t[0])
            line(lo[0] >= 1.8, "2 GPUs vs 1 on square from 16k: %.2fx to %.2fx (target >= 1.8x)"
                 % (lo[0], max(x for x, _ in sp)))
        g2 = geomean([r["xt_s"] / r["pg_s"] for r in two if r["pg_s"] > 0])
        line(g2 >= 1.8, "2 GPUs vs cuBLASXt on 2 GPUs: geomean %.2fx (target >= 1.8x)" % g2)
    return "\n".join(out)


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("gemm_plot: matplotlib is not installed: no plot", file=sys.stderr)
        return
    panels = [(g, dt, pl) for g in sorted({r["gpus"] for r in rows})
              for dt in ("s", "d") for pl in ("hhh", "ddd")]
    panels = [p for p in panels if any(r["gpus"] == p[0] and r["dtype"] == p[1] and
                                       r["place"] == p[2] and r["shape"] == "square" for r in rows)]
    if not panels:
        return
    fig, axes = plt.subplots(2, len(panels), figsize=(4.2 * len(panels), 7), squeeze=False)
    for i, (g, dt, pl) in enumerate(panels):
        sel = sorted((r for r in rows if r["gpus"] == g and r["dtype"] == dt and
                      r["place"] == pl and r["shape"] == "square"), key=lambda r: r["m"])
        x = [r["m"] for r in sel]
        ax = axes[0][i]
        for col, label, style in (("pg_s", "polygpu", "o-"), ("xt_s", "cuBLASXt", "s--"),
                                  ("cublas_s", "cuBLAS (device-resident)", "^:"),
                                  ("bound_s", "roofline bound", "k-")):
            flops = [2.0 * r["m"] * r["n"] * r["k"] / r[col] / 1e12 if r[col] > 0 else float("nan")
                     for r in sel]
            ax.plot(x, flops, style, label=label, markersize=4)
        ax.set_title("%s %sGEMM, A/B/C %s, %d GPU%s" % (sel[0]["device"], dt.upper(), pl, g,
                                                       "s" if g > 1 else ""), fontsize=8)
        ax.set_xlabel("M = N = K")
        ax.set_ylabel("TFLOP/s")
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7)
        ax = axes[1][i]
        for col, label, style in (("pg_J", "polygpu", "o-"), ("xt_J", "cuBLASXt", "s--"),
                                  ("cublas_J", "cuBLAS", "^:")):
            ax.plot(x, [r[col] for r in sel], style, label=label, markersize=4)
        ax.set_xlabel("M = N = K")
        ax.set_ylabel("energy per GEMM (J, NVML)")
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print("gemm_plot: wrote %s" % path, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--png", default=None)
    ap.add_argument("--summary", default=None)
    a = ap.parse_args()
    rows = load(a.csv)
    s = summary(rows)
    print(s)
    if a.summary:
        with open(a.summary, "w") as f:
            f.write(s + "\n")
    if a.png:
        plot(rows, a.png)


if __name__ == "__main__":
    main()

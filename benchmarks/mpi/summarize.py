"""summarize.py: the markdown table of mpi_bench.sh's JSON lines.

    python3 benchmarks/mpi/summarize.py results.jsonl > summary.md

One row per run: benchmark, configuration (the label), version, ranks, devices of rank 0,
order n, iterations, milliseconds per iteration (median of the timed runs), and a ratio:
CPU configurations against the same benchmark's 1-rank CPU run (speedup), GPU ones against the
hand-written MPI + CUDA C on 2 ranks x 1 GPU at the same size (on one GPU: 2 ranks sharing it),
as time / baseline time (< 1: faster than the baseline)."""
import json
import sys


def main():
    rows = []
    with open(sys.argv[1], encoding="utf-8") as f:
        for ln in f:
            ln = ln.strip()
            if ln.startswith("{"):
                rows.append(json.loads(ln))
    out = ["| bench | configuration | version | ranks | devices (rank 0) | n | iters | "
           "ms / iter | ratio | check | checksum |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        label = r.get("label", "")
        ratio = ""
        if label.startswith("cpu"):
            one = [o for o in rows if o["bench"] == r["bench"] and o.get("label") == "cpu-1rank"
                   and o["n"] == r["n"]]
            if one:
                ratio = "speedup %.2fx vs 1 rank" % (one[0]["s_per_iter"] / r["s_per_iter"])
        else:
            base = [o for o in rows if o["bench"] == r["bench"] and o["version"] == "mpi-cuda"
                    and o["ranks"] == 2 and o["n"] == r["n"] and o is not r]
            # 2 ranks x 1 GPU when it ran (two GPUs), else the 2 ranks sharing one GPU
            base.sort(key=lambda o: o.get("label") != "mpicuda-2ranks-x1gpu")
            if base:
                ratio = "%.2f x %s" % (r["s_per_iter"] / base[0]["s_per_iter"],
                                       base[0].get("label") or "MPI+CUDA 2 ranks")
        devs = ", ".join(r.get("devices", []))
        ok = {True: "ok", False: "FAILED", None: "unchecked"}[r.get("ok")]
        out.append("| %s | %s | %s | %d | %s | %d | %d | %.3f | %s | %s: %s | %s |" % (
            r["bench"], label, r["version"], r["ranks"], devs, r["n"], r["iterations"],
            1e3 * r["s_per_iter"], ratio, ok, r.get("check", ""), r.get("checksum", "")))
    print("\n".join(out))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""trace_summary.py: where the time of one polygpu run went, from its Chrome trace.

    python3 benchmarks/trace_summary.py TRACE.json [--first-id N]

The harness (``run.py --trace DIR``) writes, per polygpu configuration, a trace of setup, one
warm-up and one run, and ``-meta.json`` beside it with the first computation id of the last
run; only that run is summarised (``--first-id`` overrides). For each device it prints the
busy time (union of its kernels and copies, and of each kind alone) and splits its idle time
inside the run into

* *script*: the device had nothing to do because the next operation was not yet submitted
  (the script, binding or runtime issued work slower than the device ran it), and
* *dependency*: the next operation was submitted but waited for other work (another device,
  a copy, a host access).

Copies are summed per direction with their mean bandwidth. Timestamps are the runtime's host
clock (GPU event times are mapped onto it), in microseconds.

When the trace carries the GPU's own timeline (the trace option on GPUs with CUPTI: rows "gpu N
stream S", events of category gpu_kernel / gpu_copy / gpu_memset), each GPU's idle time between
kernels, as the GPU itself timed them, is attributed too. For each gap, before the kernel that
ends it:

* *host submission*: the kernel's driver call had not begun yet (its ``api_us``, else the
  script's submission): the host was slower than the GPU;
* *copy engine*: after that, a copy or memset of this GPU was running;
* *other GPU*: else work was running on another GPU (a dependency being produced there);
* *launch latency / waits*: else nothing ran anywhere although the kernel was submitted: the
  driver's time to start it, or a wait on the host (an event, a host access).

``--json PATH`` writes the same figures as JSON."""

import argparse
import json
import os
import statistics
import sys


def load(path, first_id=None):
    """The timed events of the last run: a list of dicts (ts, end, submit, pid, cat, ...)."""
    with open(path) as f:
        doc = json.load(f)
    if first_id is None:
        meta = path[:-len("-trace.json")] + "-meta.json" if path.endswith("-trace.json") else None
        if meta and os.path.exists(meta):
            with open(meta) as f:
                first_id = json.load(f).get("first_id")
    names, events, gpu = {}, [], []
    for e in doc["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e["args"]["name"]
        if e.get("ph") != "X":
            continue
        args = e.get("args", {})
        cat = e.get("cat", "")
        ts = float(e["ts"])
        if cat.startswith("gpu_"):  # the GPU's own timeline (CUPTI)
            gpu.append({"ts": ts, "end": ts + float(e.get("dur", 0)), "pid": e["pid"],
                        "tid": e.get("tid", 0), "cat": cat[4:], "name": e.get("name", ""),
                        "id": int(args.get("id", 0)), "submit": args.get("submit_us"),
                        "api": args.get("api_us"), "bytes": int(args.get("bytes", 0)),
                        "copy_kind": args.get("copy_kind", "")})
            continue
        if first_id is not None and args.get("id", 0) < first_id:
            continue
        events.append({"ts": ts, "end": ts + float(e.get("dur", 0)), "pid": e["pid"],
                       "tid": e.get("tid", 0), "cat": cat, "name": e.get("name", ""),
                       "submit": float(args.get("submit_us", ts)),
                       "bytes": int(args.get("bytes", 0))})
    if first_id is not None:
        # The run's GPU spans: its computations', and work of none (zero fills) from its start.
        t0 = min((e["submit"] for e in events), default=0.0)
        gpu = [g for g in gpu if g["id"] >= first_id or (g["id"] == 0 and g["ts"] >= t0)]
    status = doc.get("otherData", {}).get("gpu_timeline")
    return names, events, gpu, status


def union(intervals):
    """Merged, sorted (start, end) intervals."""
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(intervals):
    return sum(e - s for s, e in intervals)


def copy_direction(name):
    """'h2d', 'd2h' or 'd2d' from a copy's name ('copy aN SRC->DST')."""
    try:
        src, dst = name.split()[-1].split("->")
    except ValueError:
        return "copy"
    if src == "host":
        return "h2d"
    return "d2h" if dst == "host" else "d2d"


def summarize(names, events):
    """Lines of text."""
    if not events:
        return ["no timed events (was the runtime made with trace=...?)"]
    t0 = min(min(e["submit"], e["ts"]) for e in events)
    t1 = max(e["end"] for e in events)
    span = t1 - t0
    dev_events = [e for e in events if e["pid"] > 0]
    host_reads = [e for e in events if e["pid"] == 0]
    last_submit = max(e["submit"] for e in events)
    lines = ["run: %.3f ms from the first submission to the last end; the script submitted its "
             "last operation at %.3f ms" % (span / 1e3, (last_submit - t0) / 1e3)]
    if host_reads:
        lines.append("host accesses: %d, %.3f ms waiting in all" % (
            len(host_reads), length(union((e["ts"], e["end"]) for e in host_reads)) / 1e3))
    for pid in sorted({e["pid"] for e in dev_events}):
        evs = sorted((e for e in dev_events if e["pid"] == pid), key=lambda e: e["ts"])
        busy = union((e["ts"], e["end"]) for e in evs)
        kinds = {}
        for e in evs:
            k = "kernel" if e["cat"] == "kernel" else copy_direction(e["name"])
            kinds.setdefault(k, []).append(e)
        parts = []
        for k in ("kernel", "h2d", "d2h", "d2d", "copy"):
            if k in kinds:
                u = length(union((e["ts"], e["end"]) for e in kinds[k]))
                nbytes = sum(e["bytes"] for e in kinds[k])
                bw = " %.1f GB/s" % (nbytes / (u * 1e3)) if nbytes and u > 0 else ""
                parts.append("%s %d: %.3f ms%s" % (k, len(kinds[k]), u / 1e3, bw))
        # Idle time inside [first start, last end] on this device, split by why.
        script = dependency = 0.0
        starts = sorted(evs, key=lambda e: e["ts"])
        j = 0
        for (s0, e0), (s1, _) in zip(busy, busy[1:]):
            while j < len(starts) and starts[j]["ts"] < s1:
                j += 1
            nxt = starts[j] if j < len(starts) else None
            gap = s1 - e0
            if nxt is not None and nxt["submit"] > e0:
                late = min(gap, nxt["submit"] - e0)
                script += late
                dependency += gap - late
            else:
                dependency += gap
        lead = busy[0][0] - t0
        tail = t1 - busy[-1][1]
        streams = len({e["tid"] for e in evs})
        lines.append("%s: busy %.3f ms (%.0f%% of the run) on %d stream(s); %s" % (
            names.get(pid, "device %d" % (pid - 1)), length(busy) / 1e3, 100 * length(busy) / span,
            streams, "; ".join(parts)))
        lines.append("    idle inside its work: %.3f ms waiting for the script, %.3f ms for "
                     "dependencies; before its first start %.3f ms, after its last end %.3f ms"
                     % (script / 1e3, dependency / 1e3, lead / 1e3, tail / 1e3))
        lag = [e["ts"] - e["submit"] for e in evs if e["cat"] == "kernel"]
        if lag:
            lines.append("    kernel start - submission: median %.1f us, min %.1f us" % (
                statistics.median(lag), min(lag)))
    return lines


def intersect(a, b):
    """Length of the overlap of two merged interval lists."""
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def clip(intervals, lo, hi):
    return [[max(s, lo), min(e, hi)] for s, e in intervals if e > lo and s < hi]


def parse_range(text):
    """'A:B' as a slice (Python's: negative from the end, either side may be empty)."""
    if not text:
        return None
    a, _, b = text.partition(":")
    return slice(int(a) if a.strip() else None, int(b) if b.strip() else None)


def gpu_attribution(names, gpu, only="all", rng=None):
    """Per GPU (pid): its kernels' busy time on the GPU's clock and its idle gaps between
    kernels, split into host submission, copy engine, other GPU and launch latency / waits (the
    module's docstring). only: "polygpu" takes the gaps between kernels of polygpu's
    computations alone, "other" between kernels of none (a raw launch loop beside the runtime,
    another library), "all" between any; rng (a slice) keeps those of each GPU's kernels, in
    start order (slice(-1000, None): the last 1000). A dict per pid."""
    out = {}
    keep = {"all": lambda g: True, "polygpu": lambda g: g["id"] > 0,
            "other": lambda g: g["id"] == 0}[only]
    for pid in sorted({g["pid"] for g in gpu}):
        mine = [g for g in gpu if g["pid"] == pid]
        kernels = sorted((g for g in mine if g["cat"] == "kernel" and keep(g)),
                         key=lambda g: g["ts"])
        if rng is not None:
            kernels = kernels[rng]
        if not kernels:
            continue
        movers = union((g["ts"], g["end"]) for g in mine if g["cat"] in ("copy", "memset"))
        others = union((g["ts"], g["end"]) for g in gpu if g["pid"] != pid)
        busy = union((g["ts"], g["end"]) for g in kernels)
        r = {"device": names.get(pid, "device %d" % (pid - 1)), "kernels": len(kernels),
             "copies": sum(g["cat"] == "copy" for g in mine),
             "kernel_busy_us": length(busy), "copy_busy_us": length(movers), "gaps": 0,
             "gap_us": 0.0, "host_us": 0.0, "copy_engine_us": 0.0, "other_gpu_us": 0.0,
             "latency_us": 0.0, "streams": len({g["tid"] for g in mine})}
        if busy:
            r["window_us"] = busy[-1][1] - busy[0][0]
        j = 0
        for (_, e0), (s1, _) in zip(busy, busy[1:]):
            while j < len(kernels) and kernels[j]["ts"] < s1:
                j += 1
            nxt = kernels[j] if j < len(kernels) else None
            sub = None
            if nxt is not None:
                sub = nxt["api"] if nxt["api"] is not None else nxt["submit"]
            gap = s1 - e0
            host = min(gap, max(0.0, sub - e0)) if sub is not None else 0.0
            lo = e0 + host
            cp = clip(movers, lo, s1)
            copy = length(cp)
            other = length(clip(others, lo, s1)) - intersect(clip(others, lo, s1), cp)
            r["gaps"] += 1
            r["gap_us"] += gap
            r["host_us"] += host
            r["copy_engine_us"] += copy
            r["other_gpu_us"] += other
            r["latency_us"] += max(0.0, gap - host - copy - other)
        lag = [g["ts"] - g["api"] for g in kernels if g["api"] is not None]
        if lag:
            r["start_minus_call_us_median"] = statistics.median(lag)
            r["start_minus_call_us_min"] = min(lag)
        out[pid] = r
    return out


def gpu_lines(attr, status):
    lines = ["gpu timeline: %s" % status] if status else []
    for r in attr.values():
        lines.append("%s, as the GPU timed it: %d kernels busy %.3f ms, %d copies/memsets busy "
                     "%.3f ms, on %d GPU stream(s)" % (
                         r["device"], r["kernels"], r["kernel_busy_us"] / 1e3, r["copies"],
                         r["copy_busy_us"] / 1e3, r["streams"]))
        if r["gaps"]:
            g = r["gap_us"]
            lines.append("    idle between kernels: %.3f ms in %d gaps (%.1f us each): host "
                         "submission %.3f ms (%.0f%%), copy engine %.3f ms (%.0f%%), other GPU "
                         "%.3f ms (%.0f%%), launch latency / waits %.3f ms (%.0f%%)" % (
                             g / 1e3, r["gaps"], g / r["gaps"], r["host_us"] / 1e3,
                             100 * r["host_us"] / g, r["copy_engine_us"] / 1e3,
                             100 * r["copy_engine_us"] / g, r["other_gpu_us"] / 1e3,
                             100 * r["other_gpu_us"] / g, r["latency_us"] / 1e3,
                             100 * r["latency_us"] / g))
        if "start_minus_call_us_median" in r:
            lines.append("    kernel start on the GPU - its driver call: median %.1f us, min "
                         "%.1f us" % (r["start_minus_call_us_median"],
                                      r["start_minus_call_us_min"]))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", nargs="+")
    ap.add_argument("--first-id", type=int, help="summarise computations from this id on")
    ap.add_argument("--json", help="write the figures (host view and GPU attribution) here")
    ap.add_argument("--kernels", choices=("all", "polygpu", "other"), default="all",
                    help="attribute the gaps between these kernels: polygpu's computations, "
                    "others' (id 0: a raw launch loop), or all (default)")
    ap.add_argument("--range", metavar="A:B",
                    help="only kernels A..B-1 of each GPU's selection, in start order, as a "
                    "Python slice: '-20000:' the last 20000, '-20001:-1' all but the very last")
    args = ap.parse_args(argv)
    report = {}
    for path in args.trace:
        print("== %s" % path)
        names, events, gpu, status = load(path, args.first_id)
        for line in summarize(names, events):
            print(line)
        attr = gpu_attribution(names, gpu, args.kernels, parse_range(args.range))
        for line in gpu_lines(attr, status):
            print(line)
        report[path] = {"gpu_timeline": status,
                        "gpu": {r["device"]: r for r in attr.values()}}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

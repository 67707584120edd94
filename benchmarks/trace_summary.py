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
clock (GPU event times are mapped onto it), in microseconds."""

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
    names, events = {}, []
    for e in doc["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e["args"]["name"]
        if e.get("ph") != "X":
            continue
        args = e.get("args", {})
        if first_id is not None and args.get("id", 0) < first_id:
            continue
        ts = float(e["ts"])
        events.append({"ts": ts, "end": ts + float(e.get("dur", 0)), "pid": e["pid"],
                       "tid": e.get("tid", 0), "cat": e.get("cat", ""), "name": e.get("name", ""),
                       "submit": float(args.get("submit_us", ts)),
                       "bytes": int(args.get("bytes", 0))})
    return names, events


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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", nargs="+")
    ap.add_argument("--first-id", type=int, help="summarise computations from this id on")
    args = ap.parse_args(argv)
    for path in args.trace:
        print("== %s" % path)
        names, events = load(path, args.first_id)
        for line in summarize(names, events):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

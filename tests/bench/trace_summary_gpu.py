#!/usr/bin/env python3
"""tests/bench/trace_summary_gpu.py: benchmarks/trace_summary.py's attribution of each GPU's idle
time between kernels (the GPU's own timeline, CUPTI), on a trace written by hand whose answer is
known: a gap of 20 us on GPU 0 before a kernel whose driver call began 10 us into it (host
submission 10), then a copy on GPU 0 for 4 us (copy engine 4), work on GPU 1 for 3 us of which 1
overlaps the copy (other GPU 2), and nothing for the rest (launch latency / waits 4). A trace
without the GPU's rows says why, and is summarised as before. (The ctest bench_trace_summary_gpu.)

    python3 tests/bench/trace_summary_gpu.py"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import trace_summary  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)


def span(cat, name, pid, tid, ts, dur, id_, api=None, submit=None, **extra):
    args = {"id": id_, "gpu_name": name}
    if api is not None:
        args["api_us"] = api
    if submit is not None:
        args["submit_us"] = submit
    args.update(extra)
    return {"ph": "X", "cat": "gpu_" + cat, "name": name, "pid": pid, "tid": tid, "ts": ts,
            "dur": dur, "args": args}


def host(cat, name, pid, tid, ts, dur, id_, submit):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": {"id": id_, "submit_us": submit}}


doc = {"traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "host"}},
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "device 0: GPU"}},
    {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "device 1: GPU"}},
    host("kernel", "a", 1, 0, 0, 10, 1, -8),
    host("kernel", "b", 1, 0, 30, 10, 3, 18),
    span("kernel", "a", 1, 1007, 0, 10, 1, api=-5, submit=-8),
    span("copy", "copy a1 host->0", 1, 1008, 22, 4, 2, api=21, bytes=64, copy_kind="HtoD"),
    span("kernel", "c", 2, 1009, 25, 3, 4, api=24),
    span("kernel", "b", 1, 1007, 30, 10, 3, api=20, submit=18),
    span("memset", "memset", 1, 1007, 45, 1, 0, api=44, bytes=64),
], "otherData": {"gpu_timeline": "available (5 spans)"}}

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "t-trace.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    names, events, gpu, status = trace_summary.load(path)
    check(status == "available (5 spans)", "status read from otherData: %r" % status)
    check(len(events) == 2 and len(gpu) == 5, "host view and GPU spans kept apart: %d, %d"
          % (len(events), len(gpu)))
    attr = trace_summary.gpu_attribution(names, gpu)
    g0 = attr[1]
    expect = {"gaps": 1, "gap_us": 20, "host_us": 10, "copy_engine_us": 4, "other_gpu_us": 2,
              "latency_us": 4, "kernels": 2, "copies": 1}
    for k, v in expect.items():
        check(abs(g0[k] - v) < 1e-9, "GPU 0 %s: %r, expected %r" % (k, g0[k], v))
    check(abs(g0["start_minus_call_us_median"] - 7.5) < 1e-9, "median start - call: %r"
          % g0["start_minus_call_us_median"])
    check(attr[2]["gaps"] == 0, "GPU 1 has one kernel, no gap")
    # Selections: polygpu's kernels only (GPU 0 keeps both), the last one alone (no gap).
    sel = trace_summary.gpu_attribution(names, gpu, "polygpu")
    check(sel[1]["gaps"] == 1 and sel[1]["host_us"] == 10, "polygpu's kernels: %r" % sel[1])
    check(trace_summary.gpu_attribution(names, gpu, "other") == {}, "no kernels of none")
    last = trace_summary.gpu_attribution(names, gpu, "all", trace_summary.parse_range("-1:"))
    check(last[1]["kernels"] == 1 and last[1]["gaps"] == 0, "the last kernel: %r" % last[1])
    # --first-id: the run from computation 3 on keeps its spans and the zero fill after it.
    _, _, later, _ = trace_summary.load(path, first_id=3)
    check(sorted(g["id"] for g in later) == [0, 3, 4], "first-id filter: %r"
          % sorted(g["id"] for g in later))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "trace_summary.py"),
                          path, "--json", os.path.join(tmp, "a.json")], capture_output=True,
                         text=True)
    check(out.returncode == 0, "the script runs: " + out.stderr)
    check("host submission 0.010 ms (50%)" in out.stdout, "the text says it:\n" + out.stdout)
    with open(os.path.join(tmp, "a.json")) as f:
        rep = json.load(f)[path]
    check(rep["gpu"]["device 0: GPU"]["copy_engine_us"] == 4, "the JSON says it")
    # No GPU rows: the reason, and the host's view as before.
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not e["cat" if "cat" in e else "ph"]
                          .startswith("gpu_")]
    doc["otherData"] = {"gpu_timeline": "unavailable (CUPTI not found)"}
    with open(path, "w") as f:
        json.dump(doc, f)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "trace_summary.py"),
                          path], capture_output=True, text=True)
    check(out.returncode == 0 and "gpu timeline: unavailable (CUPTI not found)" in out.stdout
          and "device 0: GPU: busy" in out.stdout, "without the GPU's rows:\n" + out.stdout)

print("%d failure(s)" % len(failures) if failures else "trace_summary GPU attribution: ok")
sys.exit(1 if failures else 0)

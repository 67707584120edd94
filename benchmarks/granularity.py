#!/usr/bin/env python3
"""granularity.py: METG from Python, as benchmarks/granularity.c does from C (same kernels,
patterns and CSV): each task a spin kernel of fixed duration, issued call by call from Python
("eager") or replayed from a recording of 100 tasks ("replay").

    python3 benchmarks/granularity.py [devices] [max_tasks]
"""

import math
import os
import sys
import time

import polygpu as pg

GPU_SRC = r"""extern "C" __global__ void spin(float *a, long long ticks) {
  long long t0 = clock64(); while (clock64() - t0 < ticks) { }
  if (threadIdx.x == 0 && blockIdx.x == 0) a[0] += 1.0f; }"""
CPU_SRC = r"""extern "C" __global__ void spin(float *a, long long ticks) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  long long t0 = t.tv_sec * 1000000000LL + t.tv_nsec, now;
  do { clock_gettime(CLOCK_MONOTONIC, &t); now = t.tv_sec * 1000000000LL + t.tv_nsec; }
  while (now - t0 < ticks);
  if (threadIdx.x == 0 && blockIdx.x == 0) a[0] += 1.0f; }"""
DURATIONS_US = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
BLOCK = 100


def metg(effs):
    """Smallest duration with efficiency >= 0.5, log-interpolated; None if never."""
    for i, e in enumerate(effs):
        if e >= 0.5:
            if i == 0:
                return DURATIONS_US[0]
            lo, hi, e0 = math.log(DURATIONS_US[i - 1]), math.log(DURATIONS_US[i]), effs[i - 1]
            return math.exp(lo + (0.5 - e0) / (e - e0) * (hi - lo))
    return None


def main():
    devices = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PG_DEVICES", "host:1")
    max_tasks = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    rt = pg.Runtime(devices=devices)
    gpu = rt.devices[0]["kind"] != "cpu"
    spin = rt.kernel(GPU_SRC if gpu else CPU_SRC, "spin")
    ndev = len(rt.devices)
    arrs = [rt.array("float32", 1) for _ in range(ndev)]

    def run(replay, w, tasks, ticks):
        per = BLOCK - BLOCK % w
        g = None
        if replay:
            with rt.record() as g:
                for i in range(per):
                    spin(1, 1)(arrs[i % w], ticks)
        rt.sync()
        t0 = time.perf_counter()
        if replay:
            for _ in range(0, tasks, per):
                g()
        else:
            launch = spin(1, 1)
            for i in range(tasks):
                launch(arrs[i % w], ticks)
        rt.sync()
        t = time.perf_counter() - t0
        if g is not None:
            g.close()
        return t

    per_us = 1000.0
    if gpu:
        probe = 200_000_000
        run(False, 1, 1, 1000)
        per_us = probe / (run(False, 1, 1, probe) * 1e6)
    print("runtime,issue,pattern,devices,duration_us,tasks,seconds,efficiency,us_per_task")
    for issue in ("eager", "replay"):
        for pattern in ("chain", "independent"):
            w = ndev if pattern == "independent" else 1
            if pattern == "independent" and ndev == 1:
                continue
            per = BLOCK - BLOCK % w
            effs = []
            for dur in DURATIONS_US:
                tasks = int(min(max_tasks, max(20 * w, 0.2e6 / dur * w)))
                tasks = max(per, tasks - tasks % per)
                ticks = int(dur * per_us)
                run(issue == "replay", w, per, ticks)
                t = run(issue == "replay", w, tasks, ticks)
                eff = tasks / w * dur * 1e-6 / t
                effs.append(eff)
                print("polygpu-python,%s,%s,%s,%g,%d,%.6f,%.4f,%.3f" % (
                    issue, pattern, devices.replace(",", "+"), dur, tasks, t, eff, t / tasks * 1e6),
                    flush=True)
            m = metg(effs)
            print("# METG(50%%) polygpu-python %s %s on %s: %s" % (
                issue, pattern, devices, "%.2f us" % m if m else "> %g us" % DURATIONS_US[-1]))
    rt.close()


if __name__ == "__main__":
    main()

"""spread.py: issue 38's case, timed under two device policies side by side in one process.
Eight independent calls read one shared input x and each write their own array (y[i] = the sum
over `steps` steps of x[i] * k); under GrCUDA's data-aware policies they all run where x is,
under earliest-finish (the default since issue 38) they spread over the devices.

    PYTHONPATH=build/bindings/python python3 benchmarks/spread.py \\
        [--devices host:4] [--policies earliest-finish,minmax-transfer-time] [--reps 5]

Each repetition times, for each policy in turn (interleaved, so that a machine busy with other
work slows both alike), the eight launches and the wait for all of them, on fresh output
arrays; the first call of each runtime (compilation, first copies) is a warm-up, untimed. It
checks every value and prints the devices of the last repetition's calls, the median, minimum
and maximum wall time per policy, and the ratio of the medians. On CPU devices the ratio is
bounded by the cores the machine has (each CPU device runs its blocks on cores / devices
worker threads), not by the number of devices.
"""
import argparse
import os
import statistics
import subprocess
import time

import numpy as np

import polygpu as pg

SRC = r"""
extern "C" __global__ void sweep(float *y, const float *x, int n, int steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float s = 0; for (int k = 0; k < steps; k++) s += x[i] * (float)k; y[i] = s; }
}"""


def run_once(rt, k, x, n, calls, steps):
    ys = [rt.array("float32", n) for _ in range(calls)]
    t0 = time.perf_counter()
    for y in ys:
        k((n + 255) // 256, 256)(y, x, n, steps)
    rt.sync()
    return time.perf_counter() - t0, ys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--devices", default="host:4")
    ap.add_argument("--policies", default="earliest-finish,minmax-transfer-time")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--n", type=int, default=1 << 16)
    ap.add_argument("--steps", type=int, default=200)
    a = ap.parse_args()
    policies = a.policies.split(",")
    hx = (1 + np.arange(a.n) % 7).astype(np.float32)
    want = hx * np.float32(sum(range(a.steps)))
    state = {}
    for p in policies:
        rt = pg.Runtime(devices=a.devices, policy=p)
        k = rt.kernel(SRC, "sweep", "out float *y, in const float *x, int n, int steps")
        x = rt.asarray(hx)
        run_once(rt, k, x, a.n, 1, a.steps)  # warm-up: compile, first copy
        state[p] = (rt, k, x, [])
    devices = {}
    for _ in range(a.reps):
        for p in policies:
            rt, k, x, times = state[p]
            before = sum(1 for v in rt.dag()["vertices"] if v["kind"] == "kernel")
            t, ys = run_once(rt, k, x, a.n, a.calls, a.steps)
            times.append(t)
            for y in ys:
                np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-6)
            devices[p] = [v["device"] for v in rt.dag()["vertices"] if v["kind"] == "kernel"][before:]
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=os.path.dirname(__file__)).stdout.strip()
    except OSError:
        commit = "?"
    info = state[policies[0]][0].devices
    print("spread.py: %d calls of %d threads x %d steps, %d repetitions; devices %s (%d: %s); "
          "%d CPU cores; commit %s" % (a.calls, a.n, a.steps, a.reps, a.devices, len(info),
                                        info[0]["name"], os.cpu_count(), commit))
    print("| policy | devices of the calls (last repetition) | median ms | min ms | max ms |")
    print("| --- | --- | --- | --- | --- |")
    med = {}
    for p in policies:
        times = state[p][3]
        med[p] = statistics.median(times)
        print("| %s | %s | %.1f | %.1f | %.1f |" % (p, " ".join(map(str, devices[p])),
                                                    med[p] * 1e3, min(times) * 1e3,
                                                    max(times) * 1e3))
    for p in policies[1:]:
        print("%s / %s (medians): %.2fx" % (p, policies[0], med[p] / med[policies[0]]))
    for p in policies:
        state[p][0].close()


if __name__ == "__main__":
    main()

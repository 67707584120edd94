#!/usr/bin/env python3
"""MCL's small-task experiment (issue 38 item 4): 2,000 independent 64x64 DGEMMs, each with
fresh inputs (new arrays from the host), on 1 GPU + host:N with where="any" against the GPU alone.

Configurations (the default policy, earliest-finish; the same kernel source everywhere):
  gpu-only    devices="cuda:0"                  where="any"
  mixed-gpu   devices="cuda:0,host:N"           where="gpu"  (the mixed runtime, GPU only)
  mixed-any   devices="cuda:0,host:N"           where="any"  (GPU and CPU devices)
and the same with models="on" (measured durations instead of the cold estimate). Each is run
REPS times alternated; the script prints and writes (JSON, to $OUT or .) the wall time of the
whole batch (submit + sync), tasks per second, and the split: how many tasks ran on the GPU and
on the CPU devices. Every result is checked against NumPy for a sample of the tasks.

    PYTHONPATH=build/bindings/python python3 benchmarks/mcl_small_dgemm.py [--tasks 2000]
        [--host 4,8] [--reps 3] [--devices-gpu cuda:0]
Without a GPU, --devices-gpu sim:h200x1 runs it on a simulated H200 (times are then mixed
virtual and real: a smoke test, not a figure)."""
import argparse
import json
import os
import time

import numpy as np

import polygpu as pg

SRC = r'''
extern "C" __global__ void dgemm64(double *c, const double *a, const double *b, int n) {
  __shared__ double ta[16][16], tb[16][16];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  double acc = 0.0;
  for (int k0 = 0; k0 < n; k0 += 16) {
    ta[ty][tx] = a[row * n + k0 + tx];
    tb[ty][tx] = b[(k0 + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < 16; k++) acc += ta[ty][k] * tb[k][tx];
    __syncthreads();
  }
  c[row * n + col] = acc;
}'''
N = 64


def run(devices, where, tasks, models, seed):
    rng = np.random.default_rng(seed)
    inputs = [(rng.standard_normal((N, N)), rng.standard_normal((N, N))) for _ in range(tasks)]
    opts = {"devices": devices}
    if models:
        opts["models"] = "on"
    with pg.Runtime(**opts) as rt:
        k = rt.kernel(SRC, "dgemm64", where=where)
        classes = [d["class"] for d in rt.devices]
        # Warm-up: compile/load on every device class, outside the timing.
        a0, b0 = inputs[0]
        warm = [rt.array("float64", (N, N)) for _ in range(len(classes))]
        for c in warm:
            k((N // 16, N // 16), (16, 16))(c, rt.asarray(a0), rt.asarray(b0), N)
        rt.sync()
        mark = len(rt.dag()["vertices"])
        outs = []
        t0 = time.perf_counter()
        for a, b in inputs:
            c = rt.array("float64", (N, N))
            k((N // 16, N // 16), (16, 16))(c, rt.asarray(a), rt.asarray(b), N)
            outs.append(c)
        rt.sync()
        wall = time.perf_counter() - t0
        split = {"gpu": 0, "cpu": 0}
        per_dev = {}
        for v in rt.dag()["vertices"][mark:]:
            if v["kind"] == "kernel" and v["name"] == "dgemm64":
                split[classes[v["device"]]] += 1
                per_dev[v["device"]] = per_dev.get(v["device"], 0) + 1
        for i in range(0, tasks, max(1, tasks // 20)):
            a, b = inputs[i]
            got = outs[i].to_numpy()
            if not np.allclose(got, a @ b, rtol=1e-10, atol=1e-10):
                raise SystemExit(f"task {i} on {devices} where={where}: wrong result")
    return {"devices": devices, "where": where, "models": models, "tasks": tasks,
            "wall_s": wall, "tasks_per_s": tasks / wall, "split": split,
            "per_device": {str(d): n for d, n in sorted(per_dev.items())}}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", type=int, default=2000)
    p.add_argument("--host", default="4,8")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--devices-gpu", default="cuda:0")
    args = p.parse_args()
    g = args.devices_gpu
    configs = [(g, "any")]
    for h in args.host.split(","):
        configs += [(f"{g},host:{h}", "gpu"), (f"{g},host:{h}", "any")]
    results = []
    for rep in range(args.reps):
        for models in (False, True):
            for devices, where in configs:
                r = run(devices, where, args.tasks, models, seed=rep)
                r["rep"] = rep
                results.append(r)
                print(f"{devices:22s} where={where:3s} models={'on ' if models else 'off'} "
                      f"{r['wall_s'] * 1e3:8.1f} ms  {r['tasks_per_s']:8.0f} tasks/s  "
                      f"split gpu {r['split']['gpu']:5d} cpu {r['split']['cpu']:5d}  "
                      f"{r['per_device']}", flush=True)
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "mcl_small_dgemm.json"), "w") as f:
        json.dump({"results": results, "tasks": args.tasks}, f, indent=1)
    # Medians per configuration, the figure.
    print("\nmedian wall time per configuration:")
    keys = sorted({(r["devices"], r["where"], r["models"]) for r in results})
    for key in keys:
        rs = sorted((r for r in results if (r["devices"], r["where"], r["models"]) == key),
                    key=lambda r: r["wall_s"])
        m = rs[len(rs) // 2]
        print(f"  {key[0]:22s} where={key[1]:3s} models={'on ' if key[2] else 'off'} "
              f"{m['wall_s'] * 1e3:8.1f} ms  split gpu {m['split']['gpu']} cpu {m['split']['cpu']}")


if __name__ == "__main__":
    main()

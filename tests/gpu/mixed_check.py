#!/usr/bin/env python3
"""tests/gpu/mixed_check.py: GPUs and CPU devices in one runtime on a real GPU machine
(devices "cuda,host:2" and "auto,host:2"): classes and backends, values carried between the
classes both ways (NVRTC and the host compiler building one source), where= under every policy,
GPU-shaped calls kept on the GPUs by the default policy, a DLPack export from a GPU of a mixed
runtime. Writes mixed_check.json to $OUT (or .); exits 1 on any failure.

    PYTHONPATH=build-gpu/bindings/python python3 tests/gpu/mixed_check.py"""
import json
import os
import sys
import traceback

import numpy as np

import polygpu as pg

SRC = r'''extern "C" __global__ void fill(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
extern "C" __global__ void add1(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }'''
POLICIES = ["earliest-finish", "round-robin", "stream-aware", "min-transfer-size",
            "minmax-transfer-time", "min-transfer-time", "min-finish-time"]
N = 1 << 12
results = {}


def kdevs(rt, name, since=0):
    return [v["device"] for v in rt.dag()["vertices"][since:]
            if v["kind"] == "kernel" and v["name"] == name]


def check(name, f):
    try:
        results[name] = {"ok": True, "info": f()}
    except Exception:  # noqa: BLE001 - every failure is reported, then the next check runs
        results[name] = {"ok": False, "error": traceback.format_exc()}
    print(("ok   " if results[name]["ok"] else "FAIL ") + name, flush=True)


def devices_of(spec):
    with pg.Runtime(devices=spec) as rt:
        d = rt.devices
        gpus = [x["id"] for x in d if x["class"] == "gpu"]
        cpus = [x["id"] for x in d if x["class"] == "cpu"]
        assert gpus and len(cpus) == 2, d
        assert all(d[i]["backend"] == "cuda" for i in gpus), d
        assert all(d[i]["backend"] == "host" for i in cpus), d
        assert max(gpus) < min(cpus)
        return {"gpus": len(gpus), "names": [x["name"] for x in d]}


def across(spec):
    with pg.Runtime(devices=spec, policy="round-robin") as rt:
        ngpu = sum(x["class"] == "gpu" for x in rt.devices)
        fill = rt.kernel(SRC, "fill", where="cpu")
        g = rt.kernel(SRC, "add1", where="gpu")
        c = rt.kernel(SRC, "add1", where="cpu")
        a, b, cc, e = (rt.array("float32", N) for _ in range(4))
        fill(N // 256, 256)(a, 3.0, N)
        g(N // 256, 256)(b, a, N)
        c(N // 256, 256)(cc, b, N)
        g(N // 256, 256)(e, cc, N)
        assert (e.to_numpy() == 6.0).all() and (cc.to_numpy() == 5.0).all()
        adds = kdevs(rt, "add1")
        assert adds[0] < ngpu <= adds[1] and adds[2] < ngpu, adds
        return {"add1 devices": adds}


def where_every_policy(spec):
    out = {}
    for p in POLICIES:
        with pg.Runtime(devices=spec, policy=p) as rt:
            ngpu = sum(x["class"] == "gpu" for x in rt.devices)
            x = rt.asarray(np.full(N, 1.5, np.float32))
            seen = {}
            for where in ("gpu", "cpu", "any"):
                k = rt.kernel(SRC, "add1", where=where)
                mark = len(rt.dag()["vertices"])
                ys = [rt.array("float32", N) for _ in range(8)]
                for y in ys:
                    k(N // 256, 256)(y, x, N)
                assert all((y.to_numpy() == 2.5).all() for y in ys)
                d = kdevs(rt, "add1", mark)
                if where == "gpu":
                    assert all(v < ngpu for v in d), (p, where, d)
                if where == "cpu":
                    assert all(v >= ngpu for v in d), (p, where, d)
                seen[where] = d
            out[p] = seen
    return out


def gpu_shaped(spec):
    n = 1 << 22
    with pg.Runtime(devices=spec) as rt:
        ngpu = sum(x["class"] == "gpu" for x in rt.devices)
        x = rt.asarray(np.full(n, 0.5, np.float32))
        k = rt.kernel(SRC, "add1")
        ys = [rt.array("float32", n) for _ in range(8)]
        for y in ys:
            k(n // 256, 256)(y, x, n)
        assert all(float(y[n - 1]) == 1.5 for y in ys)
        d = kdevs(rt, "add1")
        assert all(v < ngpu for v in d), d
        return {"devices": d}


def dlpack_from_mixed(spec):
    try:
        import cupy
    except ImportError:
        return "cupy absent: skipped"
    with pg.Runtime(devices=spec) as rt:
        y = rt.array("float32", N)
        rt.kernel(SRC, "fill", where="gpu")(N // 256, 256)(y, 4.0, N)
        c = cupy.from_dlpack(y)
        assert float(c.sum()) == 4.0 * N
        return "ok"


for spec in ("cuda,host:2", "auto,host:2"):
    check(f"{spec}: devices", lambda: devices_of(spec))
    check(f"{spec}: values across classes", lambda: across(spec))
    check(f"{spec}: where under every policy", lambda: where_every_policy(spec))
    check(f"{spec}: GPU-shaped calls on GPUs", lambda: gpu_shaped(spec))
    check(f"{spec}: DLPack export", lambda: dlpack_from_mixed(spec))
out = os.environ.get("OUT", ".")
with open(os.path.join(out, "mixed_check.json"), "w") as f:
    json.dump(results, f, indent=1)
bad = [k for k, v in results.items() if not v["ok"]]
print(f"{len(results) - len(bad)} passed, {len(bad)} failed")
sys.exit(1 if bad else 0)

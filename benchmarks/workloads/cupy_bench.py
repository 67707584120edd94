"""CuPy versions of VEC and B&S: what a Python user would write without polygpu. The same
kernels (kernels/vec.cu, kernels/bs.cu) as cupy.RawModule, one module per GPU; partition p on
GPU p % N, each with its own non-blocking streams, pinned host buffers, events between streams;
on one GPU it is the same program with every partition on GPU 0.

    python3 -m workloads.cupy_bench vec --n N [--partitions P] [--gpus G] [--warmup W]
        [--runs R] [--sample-stride S] [--sample-out FILE]

(run from benchmarks/). Prints one JSON line like the CUDA C baselines; when CuPy is missing it
prints {"skipped": "..."} and exits with status 0.
"""

import argparse
import json
import sys
import time

import numpy as np

from .common import BLOCK, grid_1d, grid_reduce, kernel_source, partitions

BS_PARAMS = (0.08, 0.3, 1.0, 60.0)  # as workloads/bs.py: R, V, T, K


def _modules(cp, name, gpus):
    """One RawModule of kernels/<name>.cu per GPU."""
    src = kernel_source(name)
    mods = []
    for g in range(gpus):
        with cp.cuda.Device(g):
            mods.append(cp.RawModule(code=src, options=("--std=c++17",)))
    return mods


def _enable_peers(cp, gpus):
    for i in range(gpus):
        with cp.cuda.Device(i):
            for j in range(gpus):
                if i != j and cp.cuda.runtime.deviceCanAccessPeer(i, j):
                    try:
                        cp.cuda.runtime.deviceEnablePeerAccess(j)
                    except cp.cuda.runtime.CUDARuntimeError:
                        pass  # already enabled


class _Vec:
    """VEC: per partition two streams (x and y), an event, the reduction on the first."""

    def __init__(self, cp, n, nparts, gpus):
        self.cp, self.parts = cp, partitions(n, nparts)
        mods = _modules(cp, "vec", gpus)
        self.p = []
        for i, (offset, c) in enumerate(self.parts):
            g = i % gpus
            with cp.cuda.Device(g):
                d = {"gpu": g, "c": c, "init": mods[g].get_function("vec_init"),
                     "square": mods[g].get_function("vec_square"),
                     "reduce": mods[g].get_function("vec_reduce"),
                     "x": cp.empty(c, cp.float32), "y": cp.empty(c, cp.float32),
                     "x2": cp.empty(c, cp.float32), "y2": cp.empty(c, cp.float32),
                     "res": cp.zeros(1, cp.float64),
                     "hx": cp.cuda.alloc_pinned_memory(4 * c),
                     "hy": cp.cuda.alloc_pinned_memory(4 * c),
                     "hres": cp.cuda.alloc_pinned_memory(8),
                     "sa": cp.cuda.Stream(non_blocking=True),
                     "sb": cp.cuda.Stream(non_blocking=True)}
                d["hx"] = np.frombuffer(d["hx"], np.float32, c)
                d["hy"] = np.frombuffer(d["hy"], np.float32, c)
                d["hres"] = np.frombuffer(d["hres"], np.float64, 1)
                d["init"]((grid_1d(c),), (BLOCK,), (d["x"], d["y"], np.int64(offset), np.int32(c)))
                d["x"].get(out=d["hx"])
                d["y"].get(out=d["hy"])
                self.p.append(d)

    def run(self):
        cp = self.cp
        for d in self.p:
            c = np.int32(d["c"])
            with cp.cuda.Device(d["gpu"]):
                sa, sb = d["sa"], d["sb"]
                d["x"].set(d["hx"], stream=sa)
                with sa:
                    d["square"]((grid_1d(d["c"]),), (BLOCK,), (d["x2"], d["x"], c))
                d["y"].set(d["hy"], stream=sb)
                with sb:
                    d["square"]((grid_1d(d["c"]),), (BLOCK,), (d["y2"], d["y"], c))
                sa.wait_event(sb.record())
                cp.cuda.runtime.memsetAsync(d["res"].data.ptr, 0, 8, sa.ptr)
                with sa:
                    d["reduce"]((grid_reduce(d["c"]),), (BLOCK,), (d["res"], d["x2"], d["y2"], c))
                d["res"].get(stream=sa, out=d["hres"], blocking=False)
        total = 0.0
        for d in self.p:
            d["sa"].synchronize()
            total += float(d["hres"][0])
        self.total = total

    def sample(self, stride):
        return np.array([self.total])


class _Bs:
    """B&S: per partition one stream: copy in, price, copy out."""

    def __init__(self, cp, n, nparts, gpus):
        self.cp, self.parts, self.n = cp, partitions(n, nparts), n
        mods = _modules(cp, "bs", gpus)
        self.p = []
        for i, (offset, c) in enumerate(self.parts):
            g = i % gpus
            with cp.cuda.Device(g):
                d = {"gpu": g, "c": c, "bs": mods[g].get_function("bs"),
                     "s": cp.empty(c, cp.float64), "call": cp.empty(c, cp.float64),
                     "hs": np.frombuffer(cp.cuda.alloc_pinned_memory(8 * c), np.float64, c),
                     "hcall": np.frombuffer(cp.cuda.alloc_pinned_memory(8 * c), np.float64, c),
                     "stream": cp.cuda.Stream(non_blocking=True)}
                mods[g].get_function("bs_init")((grid_1d(c),), (BLOCK,),
                                                (d["s"], np.int64(offset), np.int32(c)))
                d["s"].get(out=d["hs"])
                self.p.append(d)

    def run(self):
        cp = self.cp
        r, v, t, k = (np.float64(x) for x in BS_PARAMS)
        for d in self.p:
            with cp.cuda.Device(d["gpu"]):
                s = d["stream"]
                d["s"].set(d["hs"], stream=s)
                with s:
                    d["bs"]((grid_1d(d["c"]),), (BLOCK,),
                            (d["call"], d["s"], np.int32(d["c"]), r, v, t, k))
                d["call"].get(stream=s, out=d["hcall"], blocking=False)
        for d in self.p:
            d["stream"].synchronize()

    def sample(self, stride):
        return np.concatenate([d["hcall"] for d in self.p])[::stride].copy()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", choices=("vec", "bs"))
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--sample-stride", type=int, default=1)
    ap.add_argument("--sample-out")
    a = ap.parse_args(argv)
    try:
        import cupy as cp
    except ImportError as e:
        print(json.dumps({"skipped": "cupy is not installed (%s)" % e}))
        return 0
    have = cp.cuda.runtime.getDeviceCount()
    if a.gpus > have:
        print("cupy_bench: %d GPUs asked for, %d present" % (a.gpus, have), file=sys.stderr)
        return 1
    _enable_peers(cp, a.gpus)
    w = (_Vec if a.bench == "vec" else _Bs)(cp, a.n, a.partitions, a.gpus)

    def sync_all():
        for g in range(a.gpus):
            with cp.cuda.Device(g):
                cp.cuda.runtime.deviceSynchronize()

    times = []
    for i in range(a.warmup + a.runs):
        sync_all()
        t0 = time.perf_counter()
        w.run()
        t1 = time.perf_counter()
        if i >= a.warmup:
            times.append(t1 - t0)
    if a.sample_out:
        w.sample(a.sample_stride).astype("<f8").tofile(a.sample_out)
    name = cp.cuda.runtime.getDeviceProperties(0)["name"]
    print(json.dumps({"bench": a.bench, "version": "cupy", "gpus": a.gpus,
                      "partitions": a.partitions, "n": a.n,
                      "device": name.decode() if isinstance(name, bytes) else name,
                      "times_s": times}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

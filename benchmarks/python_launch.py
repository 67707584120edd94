"""python_launch.py: Python-level launch of an empty 4-argument kernel through polygpu and
through CuPy's RawKernel, side by side in one process on the same GPU: microseconds per launch,
median of many, each timed alone in bursts short enough that the GPU's launch queue never fills.

    PYTHONPATH=build/bindings/python python3 benchmarks/python_launch.py [launches] [devices]
"""
import statistics
import sys
import time

import numpy as np

import polygpu as pg

SRC = r"""extern "C" __global__ void empty(float *a, const float *b, int n, float s) {
  if (n < 0) a[0] = b[0] * s; }"""
BURST = 64


def per_launch(launch, sync, n):
    """Median and mean microseconds of `launch()`, synchronising (untimed) every BURST calls."""
    for _ in range(1000):  # warm-up
        launch()
    sync()
    t = []
    clock = time.perf_counter_ns
    for i in range(n):
        t0 = clock()
        launch()
        t.append((clock() - t0) / 1e3)
        if i % BURST == BURST - 1:
            sync()
    sync()
    return statistics.median(t), statistics.fmean(t)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    devices = sys.argv[2] if len(sys.argv) > 2 else "cuda:0"
    rt = pg.Runtime(devices=devices)
    k = rt.kernel(SRC, "empty")
    a, b = rt.array("float32", 256), rt.array("float32", 256)
    call = k(1, 32)
    med, mean = per_launch(lambda: call(a, b, 256, 2.0), rt.sync, n)
    print("polygpu  devices=%s launches=%d: median %.2f us, mean %.2f us" % (devices, n, med, mean))
    try:
        import cupy as cp
    except ImportError:
        print("cupy not installed: no baseline")
        return
    ck = cp.RawKernel(SRC, "empty")
    ca, cb = cp.zeros(256, dtype=cp.float32), cp.zeros(256, dtype=cp.float32)
    n32, s32 = np.int32(256), np.float32(2.0)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        cmed, cmean = per_launch(lambda: ck((1,), (32,), (ca, cb, n32, s32)), stream.synchronize,
                                 n)
    print("cupy     RawKernel launches=%d: median %.2f us, mean %.2f us" % (n, cmed, cmean))
    print("ratio polygpu/cupy: median %.2f, mean %.2f" % (med / cmed, mean / cmean))


if __name__ == "__main__":
    main()

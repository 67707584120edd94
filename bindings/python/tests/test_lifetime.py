"""Lifetime: objects dropped while in use stay alive in the core; no leaks over many cycles."""

import gc
import os
import tracemalloc
import weakref

import numpy as np
import pytest

import polygpu as pg
from conftest import SRC, grid_for

SLOW = r"""
extern "C" __global__ void slow(float *y, const float *x, int reps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float acc = 0.0f; for (int j = 0; j < reps; j++) acc = acc * 0.5f + x[i];
               y[i] = acc; } }
"""


def test_drop_arrays_and_kernel_while_running(rt):
    n = 1 << 16
    slow = rt.kernel(SLOW, "slow")
    add1 = rt.kernel(SRC, "add1")
    x = rt.asarray(np.full(n, 1.0, dtype=np.float32))
    y = rt.array("float32", n)
    z = rt.array("float32", n)
    slow(grid_for(n), 256)(y, x, 400, n)
    add1(grid_for(n), 256)(z, y, n)
    wx, wk = weakref.ref(x), weakref.ref(slow)
    del x, slow  # while the slow kernel may still run
    gc.collect()
    assert wx() is None and wk() is None  # Python let go; the core keeps them
    y.free()  # an explicit free while a kernel reads it
    assert np.allclose(z.to_numpy(), 3.0)  # acc converges to 2.0, plus one


def test_drop_array_with_pending_host_view(rt):
    a = rt.asarray([1.0, 2.0])
    m = memoryview(a)
    del a  # the view keeps the array
    gc.collect()
    assert m.tolist() == [1.0, 2.0]
    m.release()


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def cycle(rt, src, n):
    k = rt.kernel(src, "add1")  # from the runtime's cache after the first time
    x = rt.asarray(np.ones(n, dtype=np.float32))
    y = rt.array("float32", n)
    k(grid_for(n), 256)(y, x, n)
    assert y[n - 1] == 2.0
    m = memoryview(y)
    m.release()


@pytest.mark.skipif(os.environ.get("PG_TEST_ASAN") == "1",
                    reason="under ASan (python_tests_asan) resident memory also holds ASan's "
                    "quarantine of freed blocks and its shadow memory (300 MB more here)")
def test_no_leak_over_thousands_of_cycles():
    n = 4096  # 16 KiB per array: a leaked array per cycle would be plain to see
    with pg.Runtime() as rt:
        for _ in range(300):
            cycle(rt, SRC, n)
        rt.sync()
        gc.collect()
        tracemalloc.start()
        rss0 = resident_bytes()
        py0 = tracemalloc.get_traced_memory()[0]
        for _ in range(3000):
            cycle(rt, SRC, n)
        rt.sync()
        gc.collect()
        py1 = tracemalloc.get_traced_memory()[0]
        rss1 = resident_bytes()
        tracemalloc.stop()
        assert py1 - py0 < 64 * 1024, "Python memory grew by %d bytes" % (py1 - py0)
        # 3000 cycles x 2 arrays x 16 KiB = 96 MiB if arrays leaked; the DAG history's records
        # (bounded) account for a few MiB.
        assert rss1 - rss0 < 24 << 20, "resident memory grew by %d bytes" % (rss1 - rss0)
        s = rt.stats()
        assert s["kernels"] >= 3300 and s["pending"] == 0


def test_many_runtimes_open_and_close():
    for _ in range(20):
        with pg.Runtime() as rt:
            a = rt.asarray([1, 2, 3])
            assert a[2] == 3
        del a

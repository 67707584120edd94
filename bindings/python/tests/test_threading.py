"""Several Python threads launching and reading at once; the GIL is released while waiting."""

import threading
import time

import numpy as np

from conftest import SRC, grid_for
from test_lifetime import SLOW


def run_threads(target, n):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]


def test_threads_launch_and_read_their_own_arrays(rt, kernels):
    n = 2000

    def work(i):
        x = rt.asarray(np.full(n, float(i), dtype=np.float32))
        y = rt.array("float32", n)
        for r in range(30):
            kernels.add1(grid_for(n), 256)(y, x, n)
            kernels.scale(grid_for(n), 256)(y, 2.0, n)
            assert y[r] == 2.0 * (i + 1)
            x[r] = float(i)  # a host write between launches
        assert np.array_equal(y.to_numpy(), np.full(n, 2.0 * (i + 1), dtype=np.float32))

    run_threads(work, 6)


def test_threads_share_arrays(rt, kernels):
    n, parts = 4096, 8
    src = rt.asarray(np.arange(n, dtype=np.float32))
    dst = rt.array("float32", n)
    part = n // parts

    def work(i):
        lo, hi = i * part, (i + 1) * part
        tmp = rt.array("float32", n)
        kernels.add1(grid_for(n), 256)(tmp, src, n)  # every thread reads the shared input
        dst[lo:hi] = tmp[lo:hi]  # and writes its own slice of the shared output
        assert src[lo] == lo

    run_threads(work, parts)
    assert np.array_equal(dst.to_numpy(), np.arange(n, dtype=np.float32) + 1)


def wait_while_spinning(rt, slow, reps):
    """Block a second thread on a host read of a slow kernel's output while this thread spins;
    return (wait seconds, seconds between this thread's first and last spin in the wait)."""
    n = 1 << 16
    x = rt.asarray(np.ones(n, dtype=np.float32))
    y = rt.array("float32", n)
    waiting, done = threading.Event(), threading.Event()
    span = {}

    def waiter():
        slow(grid_for(n), 256)(y, x, reps, n)
        waiting.set()
        t0 = time.monotonic()
        y[0]  # blocks until the slow kernel ends
        span["wait"] = time.monotonic() - t0
        waiting.clear()
        done.set()

    t = threading.Thread(target=waiter)
    t.start()
    first = last = None
    deadline = time.monotonic() + 120
    while not done.is_set() and time.monotonic() < deadline:
        if waiting.is_set():  # pure Python: runs during the wait only if the GIL is free
            last = time.monotonic()
            first = first or last
    t.join()
    assert done.is_set()
    return span["wait"], (last - first if first else 0.0)


def test_waiting_releases_the_gil(rt):
    slow = rt.kernel(SLOW, "slow")
    reps = 3000
    wait, spun = wait_while_spinning(rt, slow, reps)
    while wait < 0.1 and reps < 3000 * 8 ** 5:  # GPUs need more work to take that long
        reps *= 8
        wait, spun = wait_while_spinning(rt, slow, reps)
    assert wait >= 0.1, "the kernel was too fast to tell"
    # Holding the GIL would let this thread run only for one switch interval (5 ms).
    assert spun > 0.5 * wait


def test_concurrent_compiles_and_syncs(rt):
    def work(i):
        k = rt.kernel(SRC.replace("fill(", "fill%d(" % i), "fill%d" % i)
        y = rt.array("float32", 100)
        k(1, 128)(y, float(i), 100)
        rt.sync()
        assert y.tolist() == [float(i)] * 100

    run_threads(work, 4)

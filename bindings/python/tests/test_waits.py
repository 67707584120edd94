"""Every wait can end (issue 15, "Nothing waits forever"): sync(timeout=), Ctrl-C during a
read, close(timeout=) with a kernel that never ends. The spinning kernel runs on a CPU device
until the test sets a flag in host memory, whose address it gets as a 64-bit scalar."""

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

import numpy  # noqa: F401  (imported before any Ctrl-C: to_numpy imports it lazily)
import pytest

import polygpu as pg

SPIN = r"""
extern "C" __global__ void spin(float *y, long long flag) {
  volatile int *f = (volatile int *)flag;
  while (!*f) { }
  y[threadIdx.x] = 5.0f; }
"""


@pytest.fixture
def spinning():
    rt = pg.Runtime(devices="host:2")
    flag = ctypes.c_int(0)
    k = rt.kernel(SPIN, "spin")
    y = rt.array("float32", 4)
    k(1, 1)(y, ctypes.addressof(flag))
    yield rt, y, flag
    flag.value = 1
    if not rt.closed:
        rt.close()


def test_sync_timeout(spinning):
    rt, y, flag = spinning
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        rt.sync(timeout=0.05)
    assert time.monotonic() - t0 < 20
    flag.value = 1  # nothing was cancelled: the kernel ends once released
    rt.sync(timeout=60)
    assert y[0] == 5.0


def test_ctrl_c_interrupts_a_read(spinning):
    rt, y, flag = spinning
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        y.to_numpy()
    timer.join()
    flag.value = 1  # the runtime is still usable
    assert y[0] == 5.0


def test_bad_timeouts_are_refused(spinning):
    rt, y, flag = spinning
    for bad in (-1, float("nan"), "soon"):
        with pytest.raises((pg.ArgumentError, TypeError)):
            rt.sync(timeout=bad)


def test_close_with_a_runaway_kernel(spinning):
    rt, y, flag = spinning
    with pytest.raises(TimeoutError, match="spin"):
        rt.close(timeout=0.2)
    assert rt.closed
    with pytest.raises(pg.StateError):
        y[0]


def test_interpreter_exit_does_not_hang_on_a_runaway_kernel():
    code = (
        "import polygpu as pg\n"
        "rt = pg.Runtime(devices='host:1')\n"
        "k = rt.kernel('extern \"C\" __global__ void forever(float *y) { while (1) { } }',"
        " 'forever')\n"
        "y = rt.array('float32', 4)\n"
        "k(1, 1)(y)\n"
    )
    env = dict(os.environ, PG_CLOSE_TIMEOUT="0.5")
    r = subprocess.run([sys.executable, "-c", code], env=env, timeout=60, capture_output=True)
    assert r.returncode == 0, r.stderr
    assert b"forever" in r.stderr  # the close says what it abandoned

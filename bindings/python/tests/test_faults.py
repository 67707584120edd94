"""A kernel that faults on a CPU device raises DeviceError where its result is used; the
interpreter, the runtime and the other device go on. Faults elsewhere in the process still reach
the handler that was there before polygpu's."""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import polygpu as pg

N = 4096

SRC = r"""
extern "C" __global__ void fill(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
extern "C" __global__ void wild(float *y, const float *x, long addr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  y[i] = x[i]; if (i == n / 2) *(volatile float *)addr = 1.0f; }
extern "C" __global__ void div0(float *y, const float *x, long d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + (float)(i / (int)d); }
extern "C" __global__ void trap(float *y, const float *x, long unused, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; if (i == 3) __trap(); }
extern "C" __global__ void aborts(float *y, const float *x, long unused, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; if (i == 3) abort(); }
extern "C" __global__ void write_off(float *y, int off, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i + off] = 9.0f; }
"""


@pytest.mark.parametrize("kernel, arg, what", [
    ("wild", 16, "SIGSEGV"),
    ("div0", 0, "divide by zero"),
    ("trap", 0, "__trap"),
    ("aborts", 0, "abort"),
])
def test_fault_raises_and_everything_else_goes_on(kernel, arg, what):
    with pg.Runtime(devices="host:2", policy="round-robin") as rt:
        fill = rt.kernel(SRC, "fill", "out float *y, float v, int n")
        x = rt.asarray(np.full(N, 2.0, dtype=np.float32))
        y = rt.array("float32", N)
        rt.kernel(SRC, kernel)(N // 256, 256)(y, x, arg, N)
        with pytest.raises(pg.DeviceError, match=f"kernel '{kernel}'.*CPU device.*{what}"):
            y.to_numpy()
        with pytest.raises(pg.DeviceError):
            rt.sync()  # reported once
        rt.sync()
        assert (x.to_numpy() == 2.0).all()  # the host copy is intact
        for _ in range(3):  # new work runs on the device that is left
            v = rt.array("float32", N)
            fill(N // 256, 256)(v, 5.0, N)
            assert (v.to_numpy() == 5.0).all()
        y.copy_from(np.ones(N, dtype=np.float32))  # a failed array written whole is fine again
        assert (y.to_numpy() == 1.0).all()


def test_checked_mode_catches_out_of_bounds_write():
    with pg.Runtime(devices="host:1", check="bounds") as rt:
        a = rt.array("float32", N)
        rt.kernel(SRC, "write_off")(N // 256, 256)(a, 1, N)
        with pytest.raises(pg.DeviceError, match="'write_off'.*out of bounds"):
            a.to_numpy()
    with pytest.raises(pg.ArgumentError, match="check"):
        pg.Runtime(devices="host:1", check="everything")


def run_python(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.skipif(os.environ.get("PG_TEST_ASAN") == "1",
                    reason="under ASan (python_tests_asan) a fault ends the process with ASan's "
                    "exit status 1, not death by SIGSEGV, which is what this test checks")
def test_other_faults_still_reach_the_previous_handler():
    # faulthandler installs its handler first; polygpu's, installed by the runtime, passes a
    # fault of the main thread on to it, so the interpreter still reports (and dies of) it.
    code = ("import ctypes, faulthandler, polygpu as pg\n"
            "faulthandler.enable()\n"
            "rt = pg.Runtime(devices='host:1')\n"
            "a = rt.array('float32', 8); a.to_numpy()\n"
            "ctypes.string_at(16)\n")
    r = run_python(code)
    assert r.returncode == -signal.SIGSEGV, r.stderr
    assert "Fatal Python error: Segmentation fault" in r.stderr
    # Without a previous handler the default action (death by the signal) is kept.
    r = run_python(code.replace("faulthandler.enable()\n", ""))
    assert r.returncode == -signal.SIGSEGV, r.stderr

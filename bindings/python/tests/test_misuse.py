"""Misuse gets a clear exception, never a crash or a silent default: numbers out of range,
handles used after close or free, views that would outlive their memory."""

import math

import numpy as np
import pytest

import polygpu as pg
from conftest import SRC


@pytest.mark.parametrize("value", [math.nan, -0.5, -1, 1.5, math.inf, -math.inf, "nan", "-0.5"])
def test_exploration_threshold_outside_zero_to_one(value):
    # A negative or NaN threshold used to mean "unset": silently the default 0.1.
    with pytest.raises(pg.ArgumentError, match=r"exploration_threshold.*\[0, 1\]"):
        pg.Runtime(exploration_threshold=value)


@pytest.mark.parametrize("value", [0, 1, 0.25])
def test_exploration_threshold_in_range(value):
    with pg.Runtime(exploration_threshold=value) as rt:
        assert rt.array("float32", 4)[0] == 0.0


def test_free_after_the_runtime_closed_does_nothing():
    rt = pg.Runtime()
    a = rt.array("float32", 8)
    k = rt.kernel(SRC, "fill")
    rt.close()
    a.free()  # the runtime freed both already, as in Java and Lua
    k.free()
    assert a.freed
    with pytest.raises(pg.StateError):
        a[0]
    with pytest.raises(pg.StateError):
        k(1, 8)(a, 1.0, 8)


def test_every_use_after_close_is_a_state_error():
    rt = pg.Runtime()
    k = rt.kernel(SRC, "fill")
    a = rt.array("float32", 1 << 20)
    launch = k(1, 32)
    hv = a.host_view(True)
    m = memoryview(hv)
    with pytest.raises(pg.StateError, match="still open"):
        rt.close()  # the memoryview would dangle
    with pytest.raises(pg.StateError, match="still open"):
        a.free()
    m.release()
    rt.close()
    uses = [
        lambda: a[0],
        lambda: a.__setitem__(0, 1.0),
        lambda: a.to_numpy(),
        lambda: a.tolist(),
        lambda: a.copy_from(np.zeros(1 << 20, np.float32)),
        lambda: a.prefetch(),
        lambda: a.locations,
        lambda: memoryview(a),
        lambda: memoryview(hv),
        lambda: launch(a, 1.0, 32),
        lambda: k(1, 32)(a, 1.0, 32),
        lambda: k.params,
        lambda: rt.array("float32", 4),
        lambda: rt.kernel(SRC, "fill"),
        lambda: rt.sync(),
        lambda: rt.stats(),
        lambda: rt.dag(),
    ]
    for use in uses:
        with pytest.raises(pg.StateError):
            use()


def test_every_use_after_free_is_a_state_error(rt):
    k = rt.kernel(SRC, "fill")
    a = rt.array("float32", 64)
    hv = a.host_view()
    a.free()
    k2 = rt.kernel(SRC, "fill")
    launch = k2(1, 64)
    k2.free()
    for use in (lambda: a[0], lambda: memoryview(hv), lambda: k(1, 64)(a, 1.0, 64),
                lambda: launch(rt.array("float32", 64), 1.0, 64), lambda: a.prefetch()):
        with pytest.raises(pg.StateError):
            use()
    b = rt.array("float32", 64)
    k(1, 64)(b, 2.0, 64)
    assert b[63] == 2.0  # the runtime goes on


SPIN = r"""
extern "C" __global__ void spin(float *y, int reps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  float acc = 0.0f; for (int r = 0; r < reps; r++) acc = acc * 0.999f + 1.0f;
  y[i] = acc; }
"""

# A view being taken in one thread (its map waits for a kernel, the GIL released) while another
# closes the runtime or frees the array: the close must count that view, not free the memory
# under it. Run in a child interpreter: before the fix this crashed or read freed memory.
VIEW_WHILE_CLOSING = r"""
import sys, threading, time
import polygpu as pg
rt = pg.Runtime(devices="host:1")
a = rt.array("float32", 32)
rt.kernel(sys.argv[1], "spin")(1, 32)(a, 6000000, 32)  # a second or two
got = {}
def take():
    try:
        got["view"] = memoryview(a)
    except Exception as e:
        got["error"] = e
t = threading.Thread(target=take)
t.start()
time.sleep(0.2)
assert t.is_alive(), "the view waits for the kernel that writes the array"
for close in (rt.close, a.free):
    try:
        close()
        raise SystemExit("%s went ahead while a view was being taken" % close.__name__)
    except pg.StateError as e:
        assert "being taken" in str(e), e
t.join()
m = got["view"]
assert m.tolist()[31] > 999.0, m.tolist()[31]  # the kernel's value, from live memory
m.release()
rt.close()
print("ok")
"""


def test_close_while_a_view_is_being_taken_is_refused():
    import os
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", VIEW_WHILE_CLOSING, SPIN], capture_output=True,
                       text=True, timeout=300, env=dict(os.environ))
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr)

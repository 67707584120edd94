"""Simulated GPUs from Python: devices="sim:PRESET" is an ordinary devices string, so a script
runs unchanged on a simulated DGX-1 and its timeline is in virtual time."""

import numpy as np
import pytest

import polygpu as pg
from conftest import SRC


def test_sim_dgx1_runs_a_script():
    n = 1 << 16
    with pg.Runtime(devices="sim:dgx1-v100,host_time=0", policy="round-robin") as rt:
        devs = rt.devices
        assert len(devs) == 8
        assert all(d["kind"] == "cuda" and d["name"] == "Tesla V100-SXM2-32GB" for d in devs)
        assert devs[0]["compute_capability"] == (7, 0)
        add1 = rt.kernel(SRC, "add1")
        x = rt.asarray(np.arange(n, dtype=np.float32))
        ys = [rt.array("float32", n) for _ in range(8)]
        for y in ys:
            add1((n + 255) // 256, 256)(y, x, n)
        rt.sync()
        kernels = [e for e in rt.timeline() if e.kind == "kernel"]
        assert len(kernels) == 8 and all(e.timed and e.end > e.start for e in kernels)
        assert {e.device for e in kernels} == set(range(8))  # one per simulated GPU
        assert rt.stats()["kernels"] == 8
        # The values are computed by default (on the CPU, in the simulator's own time).
        np.testing.assert_array_equal(ys[5].to_numpy(), np.arange(n, dtype=np.float32) + 1)


def test_sim_timing_only_refuses_reads():
    """compute=none times the work without doing it: reading what devices made raises, naming
    the option, and the runtime goes on; what the host wrote reads back."""
    n = 1000
    with pg.Runtime(devices="sim:h200x4-nv18,compute=none,host_time=0") as rt:
        add1 = rt.kernel(SRC, "add1")
        x = rt.asarray(np.arange(n, dtype=np.float32))
        y = rt.array("float32", n)
        add1((n + 255) // 256, 256)(y, x, n)
        for read in (lambda: y[3], y.to_numpy, y.tolist, lambda: memoryview(y)):
            with pytest.raises(pg.UnsupportedError, match="compute=none.*compute=cpu"):
                read()
        assert x[3] == 3.0
        y.copy_from(np.ones(n, dtype=np.float32))  # the host's value now
        assert y[3] == 1.0


def test_sim_compute_cpu_gives_values():
    n = 1000
    with pg.Runtime(devices="sim:h200x4-nv18,compute=cpu,host_time=0") as rt:
        add1 = rt.kernel(SRC, "add1")
        x = rt.asarray(np.arange(n, dtype=np.float32))
        y = rt.array("float32", n)
        add1((n + 255) // 256, 256)(y, x, n)
        np.testing.assert_array_equal(y.to_numpy(), np.arange(n, dtype=np.float32) + 1)


def test_sim_unknown_preset_names_the_presets():
    with pytest.raises(pg.NotFoundError, match="dgx1-v100"):
        pg.Runtime(devices="sim:no-such-machine")

"""Power and energy: the power budget's device set (power_limit, with watts injected through
power_watts on CPU devices), its errors, and energy per device in rt.stats()."""

import time

import numpy as np
import pytest

import polygpu as pg
from conftest import N, SRC, grid_for

SPIN = r"""
extern "C" __global__ void spin(float *a, long long ns) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  long long t0 = t.tv_sec * 1000000000LL + t.tv_nsec, now;
  do { clock_gettime(CLOCK_MONOTONIC, &t); now = t.tv_sec * 1000000000LL + t.tv_nsec; }
  while (now - t0 < ns);
  if (threadIdx.x == 0 && blockIdx.x == 0) a[0] += 1.0f; }
"""


def test_no_budget_uses_every_device():
    with pg.Runtime(devices="host:3", power_watts="0:120,2:40") as rt:
        c = rt.power_choice()
        assert c["devices"] == [0, 1, 2] and c["limit_watts"] is None
        assert c["watts"] == [120.0, None, 40.0]
        assert c["performance_from"] == "nominal" and len(c["performance"]) == 3
        s = rt.stats()
        assert s["power_watts"] == [120.0, None, 40.0]
        assert s["energy_joules"] == [0.0, None, 0.0]  # nothing ran; unknown without a figure


@pytest.mark.parametrize("limit, chosen, used", [
    (200, [3, 1], 120), (220, [3, 1, 2], 220), (40, [3], 40), (1000, [3, 1, 2, 0], 340)])
def test_budget_chooses_greedily(limit, chosen, used):
    with pg.Runtime(devices="host:4", power_watts="0:120,1:80,2:100,3:40",
                    power_limit=limit) as rt:
        c = rt.power_choice()
        assert c["devices"] == chosen and c["used_watts"] == used and c["limit_watts"] == limit


def test_kernels_run_only_on_chosen_devices():
    with pg.Runtime(devices="host:4", policy="round-robin", power_watts="0:120,1:80,2:100,3:40",
                    power_limit="200") as rt:
        k = rt.kernel(SRC, "add1")
        x = rt.asarray(np.ones(N, dtype=np.float32))
        ys = [rt.array("float32", N) for _ in range(8)]
        for y in ys:
            k(grid_for(N), 256)(y, x, N)
        assert np.all(ys[-1].to_numpy() == 2.0)
        used = {v["device"] for v in rt.dag()["vertices"] if v["kind"] == "kernel"}
        assert used == {1, 3}


def test_budget_errors_then_a_runtime_works():
    with pytest.raises(pg.ArgumentError, match=r"fits no device.*smallest draws 40 W \(device 3"):
        pg.Runtime(devices="host:4", power_watts="0:120,1:80,2:100,3:40", power_limit=39)
    with pytest.raises(pg.ArgumentError, match="device 1 is unknown"):
        pg.Runtime(devices="host:2", power_watts="0:50", power_limit=100)
    with pytest.raises(pg.ArgumentError, match="power_watts"):
        pg.Runtime(devices="host:2", power_watts="0:fifty")
    with pytest.raises(pg.ArgumentError, match="names device 5"):
        pg.Runtime(devices="host:2", power_watts="5:50")
    with pytest.raises(pg.ArgumentError, match="power_limit"):
        pg.Runtime(devices="host:2", power_limit=-1)
    with pg.Runtime(devices="host:2", power_watts=75, power_limit=80) as rt:
        assert rt.power_choice()["devices"] == [0]


def test_cpu_energy_is_watts_times_busy_time():
    with pg.Runtime(devices="host:2", power_watts="0:100,1:50", power_limit=120) as rt:
        k = rt.kernel(SPIN, "spin")
        a = rt.array("float32", 4)
        e0 = rt.stats()["energy_joules"]
        t0 = time.monotonic()
        k(1, 1)(a, 30_000_000)  # 30 ms on device 1, the only one chosen
        rt.sync()
        wall = time.monotonic() - t0
        e1 = rt.stats()["energy_joules"]
        assert e0 == [0.0, 0.0]
        assert e1[0] == 0.0  # never busy
        assert 50 * 0.030 <= e1[1] <= 50 * wall
        k(1, 1)(a, 30_000_000)
        rt.sync()
        assert rt.stats()["energy_joules"][1] >= e1[1] + 50 * 0.030

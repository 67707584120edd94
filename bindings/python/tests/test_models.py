"""Performance models: rt.models() lists what measured kernels taught, they persist in cache_dir,
and policy="min-finish-time" turns them on."""

import numpy as np

import polygpu as pg
from conftest import N, SRC, grid_for

G = grid_for(N)


def run_add1(rt, times):
    k = rt.kernel(SRC, "add1")
    x = rt.asarray(np.ones(N, dtype=np.float32))
    y = rt.array("float32", N)
    for _ in range(times):
        k(G, 256)(y, x, N)
    rt.sync()


def add1_model(rt):
    found = [m for m in rt.models() if m["kernel"] == "add1"]
    assert len(found) == 1, rt.models()
    return found[0]


def test_models_learn_and_persist(tmp_path):
    with pg.Runtime(devices="host:1", models="on", cache_dir=str(tmp_path)) as rt:
        run_add1(rt, 5)
        m = add1_model(rt)
        assert set(m) == {"kernel", "device_class", "bytes", "median_ns", "samples"}
        # the first (warm-up) is dropped; a spike (over 10x the median) would be too
        assert 2 <= m["samples"] <= 4
        kept = m["samples"]
        assert m["median_ns"] > 0
        assert m["device_class"].startswith("CPU device (")
        # both arrays' bytes, rounded down to a power of two
        b = 2 * N * 4
        assert m["bytes"] <= b < 2 * m["bytes"]
        assert m["bytes"] & (m["bytes"] - 1) == 0
    assert list((tmp_path / "models").glob("*.csv"))
    with pg.Runtime(devices="host:1", models="on", cache_dir=str(tmp_path)) as rt:
        m = add1_model(rt)
        assert m["samples"] == kept
        run_add1(rt, 3)  # a warm-up again, then two more (unless spikes)
        assert kept < add1_model(rt)["samples"] <= kept + 2


def test_models_off_and_default(tmp_path):
    with pg.Runtime(devices="host:1", models="off", cache_dir=str(tmp_path)) as rt:
        run_add1(rt, 3)
        assert rt.models() == []
    with pg.Runtime(devices="host:2", policy="min-finish-time", cache_dir=str(tmp_path)) as rt:
        run_add1(rt, 3)
        assert add1_model(rt)["samples"] >= 1
    assert "min-finish-time" in pg.POLICIES

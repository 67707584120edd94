"""Coherence seen through rt.stats() and DeviceArray.locations: data moves only when needed."""

import numpy as np
import pytest

import polygpu as pg
from conftest import N, SRC, grid_for, kernel_vertices, two_devices

G = grid_for(N)
NB = N * 4  # bytes of a float32 array of N elements


def moved(stats, src=None, dst=None):
    """Bytes moved on links matching src / dst ('host', 'dev' for any device, or None)."""

    def match(loc, want):
        return want is None or (want == "dev" and loc != "host") or loc == want

    return sum(b for (s, d), b in stats["link_bytes"].items() if match(s, src) and match(d, dst))


def test_upload_once_read_back_once():
    with pg.Runtime(policy="min-transfer-size") as rt:
        add1 = rt.kernel(SRC, "add1")
        x = rt.asarray(np.arange(N, dtype=np.float32))
        assert x.locations == ["host"]
        y1, y2 = rt.array("float32", N), rt.array("float32", N)
        s0 = rt.stats()
        add1(G, 256)(y1, x, N)
        add1(G, 256)(y2, x, N)  # x is already on that device: no second upload
        rt.sync()
        s1 = rt.stats()
        assert moved(s1, "host", "dev") - moved(s0, "host", "dev") == NB
        assert s1["bytes_moved"] == sum(s1["link_bytes"].values())
        dev = str(kernel_vertices(rt.dag())[0]["device"])
        assert sorted(x.locations) == sorted(["host", dev])
        assert y1.locations == [dev]  # a write leaves only the writer's copy valid
        assert y1[7] == 8.0
        s2 = rt.stats()
        assert moved(s2, "dev", "host") - moved(s1, "dev", "host") == NB
        assert y1[8] == 9.0 and y1.to_numpy()[9] == 10.0  # the host copy is current now
        assert rt.stats()["bytes_moved"] == s2["bytes_moved"]


def test_host_write_invalidates_devices(rt, kernels):
    x = rt.asarray(np.zeros(N, dtype=np.float32))
    y = rt.array("float32", N)
    kernels.add1(G, 256)(y, x, N)
    rt.sync()
    assert len(x.locations) == 2
    x.copy_from(np.ones(N, dtype=np.float32))
    assert x.locations == ["host"]
    x[0] = 5.0  # a partial write keeps the host as the only copy
    assert x.locations == ["host"]
    s0 = rt.stats()
    kernels.add1(G, 256)(y, x, N)
    assert y[0] == 6.0 and y[1] == 2.0
    assert moved(rt.stats(), "host", "dev") - moved(s0, "host", "dev") == NB


def test_device_to_device_copy(multi_device):
    # Two devices, so that the third call lands on one of the fills' devices whatever the
    # placement policy allows.
    with pg.Runtime(devices=two_devices(), policy="round-robin") as rt:
        fill = rt.kernel(SRC, "fill")
        sum2 = rt.kernel(SRC, "sum2")
        a, b, c = (rt.array("float32", N) for _ in range(3))
        fill(G, 256)(a, 1.0, N)  # round-robin: two devices
        fill(G, 256)(b, 2.0, N)
        sum2(G, 256)(c, a, b, N)  # on one of them: the other input crosses between devices
        rt.sync()
        dag = rt.dag()
        fa, fb = kernel_vertices(dag, "fill")
        assert fa["device"] != fb["device"]
        s = rt.stats()
        assert moved(s, "dev", "dev") == NB
        assert moved(s, "host", "dev") == 0  # fresh arrays need no upload
        copies = [v for v in dag["vertices"] if v["kind"] == "copy"]
        assert len(copies) == 1 and copies[0]["device"] in (fa["device"], fb["device"])
        assert c[N - 1] == 3.0
        assert moved(rt.stats(), "dev", "host") == NB


def test_stats_count_computations(rt, kernels):
    s0 = rt.stats()
    y = rt.array("float32", N)
    kernels.fill(G, 256)(y, 1.0, N)
    kernels.scale(G, 256)(y, 2.0, N)
    assert y[0] == 2.0
    s = rt.stats()
    assert s["kernels"] - s0["kernels"] == 2
    assert s["host_accesses"] - s0["host_accesses"] == 1
    assert s["computations"] == s["kernels"] + s["host_accesses"] + s["copies"]
    assert s["pending"] == 0


def test_prefetch_to_host_then_read_moves_once(rt, kernels):
    y = rt.array("float32", N)
    kernels.fill(G, 256)(y, 4.0, N)
    s0 = rt.stats()
    y.prefetch()  # returns at once; the copy is ordered after fill
    assert "host" in y.locations
    rt.sync()
    s1 = rt.stats()
    assert moved(s1, "dev", "host") - moved(s0, "dev", "host") == NB
    assert (y.to_numpy() == 4.0).all()
    assert rt.stats()["bytes_moved"] == s1["bytes_moved"]
    y.prefetch("host")  # already there: nothing moves
    assert rt.stats()["bytes_moved"] == s1["bytes_moved"]


def test_prefetch_to_a_device(rt):
    x = rt.asarray(np.arange(N, dtype=np.float32))
    last = len(rt.devices) - 1
    x.prefetch(device=last)
    rt.sync()
    assert sorted(x.locations) == sorted(["host", str(last)])
    assert x[5] == 5.0


def test_prefetch_is_ordered_before_the_next_writer(rt, kernels):
    y = rt.array("float32", N)
    for v in range(1, 6):
        kernels.fill(G, 256)(y, float(v), N)
        y.prefetch()
        kernels.fill(G, 256)(y, float(10 * v), N)
        assert (y.to_numpy() == 10.0 * v).all()


def test_prefetch_bad_device(rt):
    x = rt.asarray(np.ones(N, dtype=np.float32))
    with pytest.raises(pg.ArgumentError, match="location"):
        x.prefetch(len(rt.devices))
    with pytest.raises(TypeError, match="device"):
        x.prefetch("gpu")
    with pytest.raises(ValueError, match="device"):
        x.prefetch(-3)
    assert x[0] == 1.0  # the array and runtime are as they were


def test_elide_copies_is_a_limit_study():
    """elide_copies=True skips every copy: the values are wrong and stats() says so."""
    import polygpu as pg
    from conftest import SRC
    with pg.Runtime(devices="host:2", elide_copies=True) as rt:
        x = rt.asarray([1.0] * 100, dtype="float32")
        y = rt.array("float32", 100)
        rt.kernel(SRC, "add1")(1, 128)(y, x, 100)
        assert y[5] == 0.0  # x never reached the device, y never came back
        s = rt.stats()
        assert s["copies_elided"] == 2 and s["bytes_elided"] == 800 and s["copies"] == 2
    with pg.Runtime(devices="host:2") as rt:
        assert rt.stats()["copies_elided"] == 0

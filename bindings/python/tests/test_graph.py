"""Runtime.record(): kernel calls recorded once (nothing runs) and replayed with g()."""

import threading

import pytest

import polygpu as pg

SRC = r"""
extern "C" __global__ void add1(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }
extern "C" __global__ void scale(float *y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] * s; }
"""
N = 1000


@pytest.fixture(params=["host:1", "host:4"])
def rt(request):
    with pg.Runtime(devices=request.param) as r:
        yield r


def test_record_runs_nothing_then_each_replay_equals_the_calls(rt):
    add1, scale = rt.kernel(SRC, "add1"), rt.kernel(SRC, "scale")
    x = rt.asarray([float(i) for i in range(N)], dtype="float32")
    y = rt.array("float32", N)
    with rt.record() as g:
        add1(4, 256)(y, x, N)
        scale(4, 256)(y, 2.0, N)
    assert g.calls == 2
    assert y[5] == 0.0  # nothing ran
    for r in range(3):
        x[5] = 10.0 * r  # work before the replay: it sees this value
        g()
        assert y[5] == (10.0 * r + 1) * 2  # work after waits for it
    kernels = [v["name"] for v in rt.dag()["vertices"] if v["kind"] == "kernel"]
    # The first replay makes the calls (and keeps them as the graph's plan); the later ones,
    # finding x where the plan reads it, issue the plan: one vertex each.
    assert kernels == ["add1", "scale", "graph replay (2 calls)", "graph replay (2 calls)"]
    g.close()
    with pytest.raises(pg.StateError):
        g()


def test_host_access_sync_and_other_runtimes_refused_inside(rt):
    add1 = rt.kernel(SRC, "add1")
    x, y = rt.array("float32", N), rt.array("float32", N)
    with pg.Runtime(devices="host:1") as other:
        o = other.array("float32", 4)
        with rt.record() as g:
            add1(4, 256)(y, x, N)
            with pytest.raises(pg.StateError, match="array %d" % y.id):
                y[0]
            with pytest.raises(pg.StateError, match="records a graph"):
                x[0] = 1.0
            with pytest.raises(pg.StateError):
                rt.sync()
            with pytest.raises(pg.StateError, match="another runtime"):
                o[0]
            with pytest.raises(pg.StateError, match="still being recorded"):
                g()
        assert o[0] == 0.0  # the recording is over
    g()
    assert y[0] == 1.0


def test_exception_in_block_drops_the_recording(rt):
    add1 = rt.kernel(SRC, "add1")
    x, y = rt.array("float32", N), rt.array("float32", N)
    with pytest.raises(ZeroDivisionError):
        with rt.record() as g:
            add1(4, 256)(y, x, N)
            1 / 0
    with pytest.raises(pg.StateError, match="closed"):
        g()
    add1(4, 256)(y, x, N)  # the runtime records no more
    assert y[1] == 1.0


def test_freed_array_refused(rt):
    add1 = rt.kernel(SRC, "add1")
    x, y = rt.array("float32", N), rt.array("float32", N)
    with rt.record() as g:
        add1(4, 256)(y, x, N)
    y.free()
    with pytest.raises(pg.StateError, match="freed after it was recorded"):
        g()


def test_other_thread_launch_refused_while_recording(rt):
    add1 = rt.kernel(SRC, "add1")
    x, y = rt.array("float32", N), rt.array("float32", N)
    seen = []

    def launch():
        try:
            add1(4, 256)(y, x, N)
        except pg.StateError as e:
            seen.append(str(e))

    with rt.record():
        t = threading.Thread(target=launch)
        t.start()
        t.join()
    assert seen and "another thread" in seen[0]


def test_graph_outlives_its_runtime():
    rt = pg.Runtime(devices="host:1")
    add1 = rt.kernel(SRC, "add1")
    x, y = rt.array("float32", N), rt.array("float32", N)
    with rt.record() as g:
        add1(4, 256)(y, x, N)
    rt.close()
    with pytest.raises(pg.StateError):
        g()
    g.close()  # nothing left to free: no error
    del g


def test_a_recording_shows_its_calls_and_their_order(rt):
    add1, scale = rt.kernel(SRC, "add1"), rt.kernel(SRC, "scale")
    x, y = rt.array("float32", N), rt.array("float32", N)
    lo, hi = y.split(2)
    with rt.record() as g:
        add1(4, 256)(y, x, N)
        scale(4, 256)(y, 2.0, N)
        scale(2, 256)(lo, 3.0, N // 2)
        scale(2, 256)(hi, 3.0, N // 2)
    calls = g.recorded()
    assert [c["kernel"] for c in calls] == ["add1", "scale", "scale", "scale"]
    assert calls[0]["grid"] == (4, 1, 1) and calls[0]["block"] == (256, 1, 1)
    assert {a["access"] for a in calls[0]["args"]} == {"in", "inout"}
    assert calls[3]["args"][0] == {"array": y.id, "access": "inout", "first": N // 2,
                                   "count": N // 2}
    d = g.to_dag()
    assert isinstance(d, pg.DAG) and len(d.vertices) == 4
    # each call after the one before on y; the two halves do not wait for each other
    assert sorted(map(tuple, d.edges)) == [(1, 2), (2, 3), (2, 4)]
    html = g._repr_html_()
    assert "add1" in html and "scale" in html
    assert "4 vertices, 3 edges" in str(d)
    g.close()
    with pytest.raises(pg.StateError):
        g.recorded()

"""Dependencies inferred from access modes, seen through rt.dag()."""

import json
import os

import numpy as np
import pytest

import polygpu as pg
from conftest import N, grid_for, kernel_vertices, reachable

G = grid_for(N)


def arrays(rt, n):
    return [rt.asarray(np.full(N, i, dtype=np.float32)) for i in range(n)]


def test_independent_kernels_have_no_edge(rt, kernels):
    x1, x2, y1, y2 = arrays(rt, 4)
    kernels.add1(G, 256)(y1, x1, N)
    kernels.add1(G, 256)(y2, x2, N)
    dag = rt.dag()
    k1, k2 = kernel_vertices(dag, "add1")
    assert not reachable(dag, k1["id"], k2["id"])
    assert not reachable(dag, k2["id"], k1["id"])
    assert y1[0] == 1.0 and y2[0] == 2.0


def test_chain(rt, kernels):
    x, y, z = arrays(rt, 3)
    kernels.add1(G, 256)(y, x, N)
    kernels.add1(G, 256)(z, y, N)
    kernels.scale(G, 256)(z, 3.0, N)
    dag = rt.dag()
    a, b = kernel_vertices(dag, "add1")
    (c,) = kernel_vertices(dag, "scale")
    assert reachable(dag, a["id"], b["id"]) and reachable(dag, b["id"], c["id"])
    assert z[5] == 6.0


def test_diamond(rt, kernels):
    a, b, c, d = arrays(rt, 4)
    kernels.fill(G, 256)(a, 1.0, N)
    kernels.add1(G, 256)(b, a, N)
    kernels.add1(G, 256)(c, a, N)
    kernels.sum2(G, 256)(d, b, c, N)
    dag = rt.dag()
    (top,) = kernel_vertices(dag, "fill")
    left, right = kernel_vertices(dag, "add1")
    (bottom,) = kernel_vertices(dag, "sum2")
    for u, v in ((top, left), (top, right), (left, bottom), (right, bottom)):
        assert reachable(dag, u["id"], v["id"])
    assert not reachable(dag, left["id"], right["id"])
    assert not reachable(dag, right["id"], left["id"])
    assert d[N - 1] == 4.0


def test_two_readers_of_a_const_array_are_not_ordered(rt, kernels):
    x, y1, y2 = arrays(rt, 3)
    kernels.add1(G, 256)(y1, x, N)
    kernels.add1(G, 256)(y2, x, N)
    dag = rt.dag()
    r1, r2 = kernel_vertices(dag, "add1")
    assert not reachable(dag, r1["id"], r2["id"]) and not reachable(dag, r2["id"], r1["id"])
    assert {"array": x.id, "access": "in"} in r1["args"]
    assert {"array": y1.id, "access": "inout"} in r1["args"]


def test_write_after_read(rt, kernels):
    x, y = arrays(rt, 2)
    kernels.add1(G, 256)(y, x, N)  # reads x
    kernels.fill(G, 256)(x, 9.0, N)  # then overwrites it: must wait for the reader
    dag = rt.dag()
    (reader,) = kernel_vertices(dag, "add1")
    (writer,) = kernel_vertices(dag, "fill")
    assert reachable(dag, reader["id"], writer["id"])
    assert y[0] == 1.0 and x[0] == 9.0


def test_explicit_out_signature_drops_the_read(rt):
    from conftest import SRC
    fill_out = rt.kernel(SRC, "fill", signature="out float *y, float v, int n")
    (y,) = arrays(rt, 1)
    fill_out(G, 256)(y, 2.0, N)
    dag = rt.dag()
    (k,) = kernel_vertices(dag, "fill")
    assert k["args"] == [{"array": y.id, "access": "out"}]
    assert y[0] == 2.0


def test_host_accesses_are_vertices(rt, kernels):
    x, y = arrays(rt, 2)
    kernels.add1(G, 256)(y, x, N)
    assert y[0] == 1.0
    dag = rt.dag()
    (k,) = kernel_vertices(dag)
    reads = [v for v in dag["vertices"] if v["kind"] == "host_read" and
             v["args"][0]["array"] == y.id]
    assert reads and all(v["device"] == -1 for v in reads)
    assert any(reachable(dag, k["id"], r["id"]) for r in reads)
    for v in dag["vertices"]:
        assert {"id", "kind", "name", "device", "stream", "args", "submit_ns", "start_ns",
                "end_ns"} <= set(v)


def test_export_dag_files(rt, kernels, tmp_path):
    x, y = arrays(rt, 2)
    kernels.add1(G, 256)(y, x, N)
    rt.sync()
    rt.export_dag(tmp_path / "dag.dot")
    rt.export_dag(str(tmp_path / "dag.json"))
    rt.export_dag(tmp_path / "dag.txt", format="json")
    assert (tmp_path / "dag.dot").read_text().startswith("digraph")
    assert json.loads((tmp_path / "dag.json").read_text()) == rt.dag()
    assert "vertices" in json.loads((tmp_path / "dag.txt").read_text())
    assert "digraph" in rt.dag_dot()
    with pytest.raises(pg.ArgumentError):
        rt.export_dag(tmp_path / "dag.png")
    with pytest.raises(pg.ArgumentError):
        rt.export_dag(tmp_path / "dag.x", format="svg")
    with pytest.raises(pg.FileError):
        rt.export_dag(tmp_path / "missing-dir" / "dag.dot")
    rt.write_trace(tmp_path / "trace.json")
    trace = json.loads((tmp_path / "trace.json").read_text())
    assert any(e.get("name") == "add1" for e in trace["traceEvents"])


def one_device():
    """A devices= value naming one device of the kind PG_DEVICES selects."""
    return "cuda:0" if os.environ.get("PG_DEVICES", "host:4").startswith("cuda") else "host:1"


def test_dag_of_a_known_program_field_by_field():
    from conftest import SRC
    with pg.Runtime(devices=one_device(), policy="round-robin") as rt:
        fill_out = rt.kernel(SRC, "fill", signature="out float *y, float v, int n")
        add1 = rt.kernel(SRC, "add1")
        a, b = rt.array("float32", N), rt.array("float32", N)
        fill_out(G, 256)(a, 1.0, N)  # k1 writes a
        add1(G, 256)(b, a, N)  # k2 reads a: one edge k1 -> k2
        dag = rt.dag()
        k1, k2 = dag["vertices"]
        assert (k1["kind"], k1["name"], k2["kind"], k2["name"]) == ("kernel", "fill", "kernel",
                                                                    "add1")
        assert 0 < k1["id"] < k2["id"]
        assert k1["device"] == k2["device"] == 0
        assert k1["stream"] >= 0 and k2["stream"] >= 0
        assert k1["args"] == [{"array": a.id, "access": "out"}]
        assert k2["args"] == [{"array": b.id, "access": "inout"}, {"array": a.id, "access": "in"}]
        assert k1["rank"] == k2["rank"] == 0  # single-process
        assert set(k1) == {"id", "kind", "name", "device", "stream", "rank", "args", "submit_ns",
                           "start_ns", "end_ns"}
        assert dag["edges"] == [[k1["id"], k2["id"]]]
        assert b[0] == 2.0  # a host read: the read and b's copy to the host join the DAG
        later = rt.dag()
        read, copy = later["vertices"][2:]
        assert read["kind"] == "host_read" and read["device"] == -1 and read["stream"] == -1
        assert read["args"] == [{"array": b.id, "access": "in"}]
        assert copy["kind"] == "copy" and copy["bytes"] == 4 * N
        assert (copy["src"], copy["dst"]) == (0, -1)
        assert sorted(later["edges"]) == sorted([[k1["id"], k2["id"]], [k2["id"], read["id"]],
                                                 [k2["id"], copy["id"]], [copy["id"], read["id"]]])
        assert len(dag["vertices"]) == 2  # the earlier snapshot is unchanged
        rt.sync()
        assert rt.dag() == json.loads(rt._dag_string(pg._polygpu.DAG_JSON))  # one producer


def test_dag_is_built_from_the_c_data_not_from_json(rt, kernels, monkeypatch):
    x, y = arrays(rt, 2)
    kernels.add1(G, 256)(y, x, N)

    def no_text(*args):
        raise AssertionError("rt.dag() must not go through the JSON text")

    monkeypatch.setattr(pg.Runtime, "_dag_string", no_text)
    monkeypatch.setattr(json, "loads", no_text)
    (k,) = kernel_vertices(rt.dag(), "add1")
    assert k["args"] == [{"array": y.id, "access": "inout"}, {"array": x.id, "access": "in"}]


def test_gpu_timeline_says_why_it_is_missing(tmp_path):
    """The GPU's own timeline (CUPTI) is there only with the trace option on GPUs; elsewhere the
    snapshot, its JSON and the trace say why, and the rest is as before."""
    from conftest import SRC
    with pg.Runtime(devices="host:1") as rt:
        dag = rt.dag()
        assert dag["gpu_timeline"] == "unavailable (the trace option is off)"
        assert dag["gpu_spans"] == []
    trace = tmp_path / "t.json"
    with pg.Runtime(devices="host:1", trace=str(trace)) as rt:
        add1 = rt.kernel(SRC, "add1")
        a, b = rt.array("float32", N), rt.array("float32", N)
        add1(G, 256)(b, a, N)
        rt.sync()
        dag = rt.dag()
        assert dag["gpu_timeline"].startswith("unavailable (no GPU: host devices")
        assert dag["gpu_spans"] == []
        assert dag == json.loads(rt._dag_string(pg._polygpu.DAG_JSON))
    doc = json.loads(trace.read_text())
    assert doc["otherData"]["gpu_timeline"].startswith("unavailable (no GPU")
    assert any(e.get("name") == "add1" and e["ph"] == "X" for e in doc["traceEvents"])
    assert not any(e.get("cat", "").startswith("gpu_") for e in doc["traceEvents"])

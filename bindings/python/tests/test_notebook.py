"""What notebooks show: rt.dag() as text, HTML and Graphviz SVG; a recording's repr;
rt.timeline() as data and as a matplotlib Gantt chart."""

import io
import json
import re
import shutil
import sys
import xml.etree.ElementTree as ET

import pytest

import polygpu as pg
from conftest import SRC, N, grid_for, kernel_vertices

G = grid_for(N)
SVG = "{http://www.w3.org/2000/svg}"


def diamond(rt, kernels):
    """fill a; b = a + 1; c = a + 1; d = b + c; read d: kernels, copies and host accesses."""
    a, b, c, d = (rt.array("float32", N) for _ in range(4))
    kernels.fill(G, 256)(a, 1.0, N)
    kernels.add1(G, 256)(b, a, N)
    kernels.add1(G, 256)(c, a, N)
    kernels.sum2(G, 256)(d, b, c, N)
    assert d[0] == 4.0
    rt.sync()
    return rt.dag()


def vertex_lines(text):
    """The table rows of a DAG's text form, by vertex id."""
    rows = {}
    for line in text.splitlines()[2:]:
        m = re.match(r"\s+#(\d+)\s", line)
        if m:
            rows[int(m.group(1))] = line
    return rows


def where(v):
    if v["device"] < 0:
        return "host"
    return "device %d, stream %d" % (v["device"], v["stream"])


def test_dag_is_still_the_dict_of_the_json_export(rt, kernels):
    dag = diamond(rt, kernels)
    assert isinstance(dag, pg.DAG) and isinstance(dag, dict)
    assert dag == json.loads(rt._dag_string(pg._polygpu.DAG_JSON))
    assert dag.vertices is dag["vertices"] and dag.edges is dag["edges"]
    assert json.loads(json.dumps(dag)) == dag


def test_text_form_lists_each_vertex_and_edge(rt, kernels):
    dag = diamond(rt, kernels)
    text = repr(dag)
    assert str(dag) == text
    assert text.startswith("polygpu DAG: %d vertices, %d edges" % (len(dag.vertices),
                                                                  len(dag.edges)))
    rows = vertex_lines(text)
    assert sorted(rows) == sorted(v["id"] for v in dag.vertices)
    kinds = {v["kind"] for v in dag.vertices}
    assert {"kernel", "host_read", "copy"} <= kinds
    for v in dag.vertices:
        line = rows[v["id"]]
        assert v["kind"] in line and v["name"] in line and where(v) in line, line
    parents = {}
    for a, b in dag.edges:
        parents.setdefault(b, set()).add(a)
    for v in dag.vertices:  # the "after" column: exactly the vertex's incoming edges
        after = rows[v["id"]].split(where(v), 1)[1]
        assert set(int(i) for i in re.findall(r"#(\d+)", after)) == parents.get(v["id"], set())


def test_svg_parses_and_names_every_vertex(rt, kernels):
    dag = diamond(rt, kernels)
    if shutil.which("dot") is None:
        assert dag._repr_svg_() is None
        html = dag._repr_html_()
        assert "<table>" in html and "<svg" not in html
        cells = [[td.text for td in tr.iter("td")] for tr in ET.fromstring(html).iter("tr")]
        assert [c[:3] for c in cells[1:]] == [["#%d" % v["id"], v["kind"], v["name"]]
                                             for v in dag.vertices]
        assert vertex_lines(repr(dag)).keys() == {v["id"] for v in dag.vertices}
        pytest.skip("Graphviz's dot is not installed (apt-get install graphviz): the text form "
                    "was checked instead of the SVG")
    svg = dag._repr_svg_()
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag == SVG + "svg"
    texts = [t.text or "" for t in root.iter(SVG + "text")]
    for v in dag.vertices:
        assert "#%d %s" % (v["id"], v["name"]) in texts, (v, texts)
    nodes = [g for g in root.iter(SVG + "g") if g.get("class") == "node"]
    edges = [g for g in root.iter(SVG + "g") if g.get("class") == "edge"]
    assert len(nodes) == len(dag.vertices) and len(edges) == len(dag.edges)
    html = dag._repr_html_()
    assert "<svg" in html and ET.fromstring(html)  # the drawing, inline
    assert dag.to_svg() == svg


def test_without_dot_the_html_is_a_table(rt, kernels, monkeypatch):
    dag = diamond(rt, kernels)
    monkeypatch.setattr(pg._display, "dot_program", lambda: None)
    assert dag._repr_svg_() is None
    html = dag._repr_html_()
    root = ET.fromstring(html)  # well-formed too
    cells = [[td.text for td in tr.iter("td")] for tr in root.iter("tr")][1:]
    assert [c[0] for c in cells] == ["#%d" % v["id"] for v in dag.vertices]
    assert [c[2] for c in cells] == [v["name"] for v in dag.vertices]
    with pytest.raises(FileNotFoundError, match="graphviz"):
        dag.to_svg()


def test_dot_source_is_the_c_export(rt, kernels):
    diamond(rt, kernels)
    rt.sync()
    dag = rt.dag()
    assert dag.to_dot() == rt.dag_dot()  # same snapshot content: the same text


def test_ipython_shows_svg_html_and_text(rt, kernels):
    formatters = pytest.importorskip("IPython.core.formatters")
    dag = diamond(rt, kernels)
    bundle, _ = formatters.DisplayFormatter().format(dag)
    assert bundle["text/plain"] == repr(dag)
    assert "<table>" in bundle["text/html"] or "<svg" in bundle["text/html"]
    assert ("image/svg+xml" in bundle) == (shutil.which("dot") is not None)


def test_empty_and_large_dags(rt, kernels):
    empty = rt.dag()
    assert repr(empty) == "polygpu DAG: 0 vertices, 0 edges (nothing submitted yet)"
    assert empty._repr_svg_() is None and "nothing submitted" in empty._repr_html_()
    y = rt.array("float32", N)
    for _ in range(260):
        kernels.nothing(1, 1)(y, N)
    rt.sync()
    dag = rt.dag()
    short, full = repr(dag), dag.to_text()
    assert len(vertex_lines(full)) == len(dag.vertices) >= 260
    assert len(vertex_lines(short)) == 200 and "vertices not shown" in short
    assert dag._repr_svg_() is None  # too many for an inline drawing
    assert "<table>" in dag._repr_html_()


def test_graph_repr_shows_its_calls(rt, kernels):
    x, y = rt.array("float32", N), rt.array("float32", N)
    g = rt.record()
    assert repr(g) == "<polygpu.Graph, not recorded>"
    with g:
        assert repr(g) == "<polygpu.Graph, recording>"
        kernels.add1(G, 256)(y, x, N)
        kernels.scale(G, 256)(y, 2.0, N)
        kernels.add1(G, 256)(x, y, N)
    assert g.calls == 3 and repr(g) == "<polygpu.Graph of 3 calls>"
    g()
    assert x[0] == 3.0
    g.close()
    assert repr(g) == "<polygpu.Graph, closed>"


def launch_spread(rt, kernels, n=8):
    """n independent fills (spread over the devices), then a host read of each."""
    ys = [rt.array("float32", N) for _ in range(n)]
    for i, y in enumerate(ys):
        kernels.fill(G, 256)(y, float(i), N)
    assert [y[1] for y in ys] == [float(i) for i in range(n)]
    rt.sync()
    return ys


def test_timeline_covers_every_kernel_with_its_device_and_stream():
    with pg.Runtime(policy="round-robin") as rt:
        check_timeline(rt, rt.kernel(SRC, "fill"))


def check_timeline(rt, fill):
    ys = [rt.array("float32", N) for _ in range(8)]
    for i, y in enumerate(ys):
        fill(G, 256)(y, float(i), N)
    assert [y[1] for y in ys] == [float(i) for i in range(8)]
    rt.sync()
    tl = rt.timeline()
    dag = rt.dag()
    assert isinstance(tl, pg.Timeline) and all(isinstance(e, pg.TimelineEntry) for e in tl)
    assert [e.id for e in tl] == [v["id"] for v in dag.vertices]
    launched = kernel_vertices(dag, "fill")
    assert len(launched) == 8
    by_id = {e.id: e for e in tl}
    cpu = all(d["kind"] == "cpu" for d in rt.devices)
    for v in launched:
        e = by_id[v["id"]]
        assert (e.kind, e.name, e.device, e.stream) == ("kernel", "fill", v["device"], v["stream"])
        assert 0 <= e.device < len(rt.devices) and e.stream >= 0
        assert e.track == (e.device, e.stream)
        if cpu:  # CPU devices time every computation
            assert e.timed and e.end > e.start > 0 and e.start >= e.submit
            assert e.start == v["start_ns"] / 1e9 and e.end == v["end_ns"] / 1e9
    for e in tl:
        assert e.end >= e.start and e.duration == e.end - e.start
        assert (e.device < 0) == (e.kind.startswith("host")) == (e.stream < 0)
    assert tl.tracks() == sorted({(v["device"], v["stream"]) for v in dag.vertices})
    assert tl.device_names == [d["name"] for d in rt.devices]
    # round-robin: the launches went to every device, each its own rows
    assert {e.device for e in tl if e.kind == "kernel"} == set(range(min(8, len(rt.devices))))
    text = repr(tl)
    assert text.startswith("polygpu Timeline: %d operations" % len(tl))
    assert text.count("fill") == 8


def test_timeline_is_the_chrome_trace(rt, kernels, tmp_path):
    launch_spread(rt, kernels, 4)
    tl = rt.timeline()
    rt.write_trace(tmp_path / "trace.json")
    events = [e for e in json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
              if e["ph"] in ("X", "i")]
    by_id = {e.id: e for e in tl}
    assert sorted(ev["args"]["id"] for ev in events) == sorted(by_id)
    for ev in events:
        e = by_id[ev["args"]["id"]]
        assert ev["name"] == e.name and ev["cat"] == e.kind
        assert ev["pid"] == e.device + 1 and ev["tid"] == max(e.stream, 0)
        assert (ev["ph"] == "X") == e.timed
        assert ev["ts"] == pytest.approx((e.start if e.timed else e.submit) * 1e6, abs=1e-3)
        if e.timed:
            assert ev["dur"] == pytest.approx(e.duration * 1e6, abs=2e-3)


def test_untimed_work_starts_and_ends_at_its_submission():
    dag = {"vertices": [
        {"id": 1, "kind": "kernel", "name": "k", "device": 0, "stream": 0, "args": [],
         "submit_ns": 1000, "start_ns": 0, "end_ns": 0},
        {"id": 2, "kind": "copy", "name": "copy a1 0->host", "device": 0, "stream": 32,
         "args": [], "submit_ns": 2000, "start_ns": 3000, "end_ns": 5000, "bytes": 64, "src": 0,
         "dst": -1}], "edges": [[1, 2]]}
    tl = pg.Timeline._from_dag(dag, ["gpu"])
    k, c = tl
    assert not k.timed and k.start == k.end == k.submit == 1e-6
    assert c.timed and (c.start, c.end, c.submit, c.bytes) == (3e-6, 5e-6, 2e-6, 64)
    assert "not timed" in repr(tl) and "device 0, copy stream" in repr(tl)
    text = repr(pg.DAG(dag))
    assert "device 0, copy stream" in text and "#1" in vertex_lines(text)[2]


def test_plot_draws_a_gantt_chart_with_agg(rt, kernels):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    launch_spread(rt, kernels)
    tl = rt.timeline()
    ax = tl.plot()
    try:
        assert isinstance(ax, matplotlib.axes.Axes)
        bars = [p for p in ax.patches if isinstance(p, matplotlib.patches.Rectangle)]
        assert len(bars) == sum(e.timed for e in tl)
        marks = [ln for ln in ax.lines if ln.get_marker() == "|"]
        assert len(marks) == sum(not e.timed for e in tl)
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert len(labels) == len(tl.tracks()) and labels[0] == "host"
        assert all(lb.startswith("device ") for lb in labels[1:])
        rows = {round(p.get_y() + p.get_height() / 2) for p in bars}
        assert rows <= set(range(len(labels)))
        png = io.BytesIO()
        ax.figure.savefig(png, format="png")
        assert png.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
        fig, given = plt.subplots()
        assert tl.plot(ax=given, color_by="kind") is given
        with pytest.raises(ValueError):
            tl.plot(ax=given, color_by="color")
        plt.close(fig)
    finally:
        plt.close(ax.figure)


def test_plot_without_matplotlib_names_it(rt, kernels, monkeypatch):
    launch_spread(rt, kernels, 2)
    tl = rt.timeline()
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    with pytest.raises(ImportError, match="needs matplotlib: pip install matplotlib"):
        tl.plot()

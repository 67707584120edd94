"""What the runtime recorded, shown to people: the DAG snapshot :class:`DAG` (``rt.dag()``),
which renders itself in Jupyter (Graphviz SVG when the ``dot`` program is installed, else a
text table), and the timeline :class:`Timeline` (``rt.timeline()``), a list of
:class:`TimelineEntry` that draws a Gantt chart with matplotlib.

Both are built from one DAG snapshot, the data the Chrome trace (``Runtime.write_trace``) is
written from: each vertex's submission, start and end times in nanoseconds since the runtime
was created. CPU devices time every computation; GPUs time work only when the runtime was made
with the ``trace`` option (otherwise their work is known only by its submission time).
"""

import html
import shutil
import subprocess
from dataclasses import dataclass

#: The stream number of a device's copy stream (the ``prefetch`` option); C's PG_DAG_COPY_STREAM.
COPY_STREAM = 32

# The DOT export's style (dag/export.c), so a rendered snapshot looks like `dot -Tsvg dag.dot`.
_COLORS = ("lightblue", "palegreen", "lightsalmon", "khaki", "plum", "lightcyan", "wheat",
           "lightpink")
_SHAPES = {"kernel": "box", "copy": "ellipse"}

# The Jupyter forms stay readable and quick: a larger DAG is drawn only by an explicit
# to_svg(), and its text form shows its first and last vertices.
_SVG_MAX_VERTICES = 200
_TEXT_MAX_VERTICES = 200


def _where(device, stream):
    if device < 0:
        return "host"
    if stream >= COPY_STREAM:
        return "device %d, copy stream" % device
    return "device %d, stream %d" % (device, stream)


def _duration(seconds):
    if seconds < 1e-3:
        return "%.1f us" % (seconds * 1e6)
    if seconds < 1.0:
        return "%.3f ms" % (seconds * 1e3)
    return "%.3f s" % seconds


def _dot_string(s):
    out = []
    for ch in s:
        if ch == "\n":
            out.append("\\n")
        elif ch in "\"\\":
            out.append("\\" + ch)
        elif ord(ch) >= 0x20:
            out.append(ch)
    return '"%s"' % "".join(out)


def dot_program():
    """The path of Graphviz's ``dot``, or None when it is not installed."""
    return shutil.which("dot")


class DAG(dict):
    """A snapshot of the runtime's DAG, as :meth:`Runtime.dag` returns it.

    It is the dict of the JSON export's schema (``dag["vertices"]``, ``dag["edges"]``; equal to
    ``json.loads`` of that export) and it shows itself: ``print(dag)`` and ``repr(dag)`` list
    each vertex (id, kind, name, device and stream, duration, the vertices it waited for), and
    in Jupyter it is drawn with Graphviz when the ``dot`` program is installed (Debian:
    ``apt-get install graphviz``), else shown as a table. :meth:`to_dot`, :meth:`to_svg` and
    :meth:`to_text` give those forms as strings.
    """

    @property
    def vertices(self):
        """The vertex dicts, oldest first (``self["vertices"]``)."""
        return self.get("vertices", [])

    @property
    def edges(self):
        """The ``[from_id, to_id]`` dependencies (``self["edges"]``)."""
        return self.get("edges", [])

    def _parents(self):
        parents = {}
        for a, b in self.edges:
            parents.setdefault(b, []).append(a)
        return parents

    def _rows(self):
        """One row of text cells per vertex: id, kind, name, where, time, after."""
        parents = self._parents()
        rows = []
        for v in self.vertices:
            ran = "-"
            if v.get("end_ns"):
                ran = _duration(max(0, v["end_ns"] - v["start_ns"]) / 1e9)
            after = ", ".join("#%d" % p for p in parents.get(v["id"], []))
            rows.append(("#%d" % v["id"], v["kind"], v["name"],
                         _where(v["device"], v["stream"]), ran, after))
        return rows

    def _shown(self, rows, limit):
        """rows, or its first and last limit/2 with None standing for the rest."""
        if limit is None or len(rows) <= limit:
            return rows
        half = max(1, limit // 2)
        return rows[:half] + [None] + rows[-half:]

    def to_text(self, limit=None):
        """The DAG as a table: a line per vertex, oldest first, with the ids of the vertices it
        depends on ("after"); ``limit``: show only the first and last limit/2 vertices."""
        nv, ne = len(self.vertices), len(self.edges)
        head = "polygpu DAG: %d vertices, %d edges" % (nv, ne)
        if not nv:
            return head + " (nothing submitted yet)"
        rows = self._rows()
        titles = ("id", "kind", "name", "where", "ran", "after")
        widths = [max(len(t), *(len(r[i]) for r in rows)) for i, t in enumerate(titles)]

        def line(cells):
            return "  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

        lines = [head, line(titles)]
        for r in self._shown(rows, limit):
            if r is None:
                lines.append("  ... %d vertices not shown (dag.to_text() shows all) ..."
                             % (nv - 2 * max(1, limit // 2)))
            else:
                lines.append(line(r))
        return "\n".join(lines)

    def __repr__(self):
        return self.to_text(limit=_TEXT_MAX_VERTICES)

    __str__ = __repr__

    def to_dot(self):
        """The DAG in Graphviz DOT, drawn as ``Runtime.dag_dot()`` draws it: a box per kernel, an
        ellipse per copy, a note per host access, filled by device; an arrow per dependency."""
        out = ['digraph polygpu {', '  rankdir=TB;',
               '  node [style=filled, fontname="Helvetica"];']
        for v in self.vertices:
            fill = "white" if v["device"] < 0 else _COLORS[v["device"] % len(_COLORS)]
            shape = _SHAPES.get(v["kind"], "note")
            label = "#%d %s\n%s" % (v["id"], v["name"], _where(v["device"], v["stream"]))
            extra = ', style="filled,dashed"' if v["kind"] == "copy" else ""
            out.append("  n%d [shape=%s, fillcolor=%s, label=%s%s];"
                       % (v["id"], shape, fill, _dot_string(label), extra))
        for a, b in self.edges:
            out.append("  n%d -> n%d;" % (a, b))
        out.append("}")
        return "\n".join(out) + "\n"

    def to_svg(self, timeout=60):
        """The DAG drawn by Graphviz's ``dot`` as an SVG document (the ``<svg>`` element).

        Raises FileNotFoundError when ``dot`` is not installed (Debian: ``apt-get install
        graphviz``), RuntimeError when it fails, subprocess.TimeoutExpired past ``timeout``
        seconds."""
        dot = dot_program()
        if dot is None:
            raise FileNotFoundError("DAG.to_svg needs Graphviz's dot program: apt-get install "
                                    "graphviz (or your system's graphviz package)")
        r = subprocess.run([dot, "-Tsvg"], input=self.to_dot().encode(), capture_output=True,
                           timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError("dot -Tsvg failed (exit %d): %s"
                               % (r.returncode, r.stderr.decode(errors="replace").strip()))
        svg = r.stdout.decode("utf-8", errors="replace")
        start = svg.find("<svg")
        return svg[start:] if start >= 0 else svg

    def _repr_svg_(self):
        """Jupyter's SVG form: None (so Jupyter uses another) without ``dot``, for an empty DAG
        and past 200 vertices."""
        if not self.vertices or len(self.vertices) > _SVG_MAX_VERTICES or not dot_program():
            return None
        try:
            return self.to_svg()
        except (OSError, RuntimeError, subprocess.TimeoutExpired):
            return None

    def _repr_html_(self):
        """Jupyter's HTML form: the Graphviz drawing when there is one, else the table."""
        svg = self._repr_svg_()
        head = html.escape(self.to_text().split("\n", 1)[0])
        if svg is not None:
            return '<div class="polygpu-dag"><div>%s</div>%s</div>' % (head, svg)
        if not self.vertices:
            return "<div>%s</div>" % html.escape(self.to_text())
        rows = self._shown(self._rows(), _TEXT_MAX_VERTICES)
        cells = []
        for r in rows:
            if r is None:
                cells.append('<tr><td colspan="6">...</td></tr>')
            else:
                cells.append("<tr>%s</tr>" % "".join("<td>%s</td>" % html.escape(c) for c in r))
        return ('<div class="polygpu-dag"><div>%s</div><table><thead><tr><th>id</th>'
                '<th>kind</th><th>name</th><th>where</th><th>ran</th><th>after</th></tr>'
                '</thead><tbody>%s</tbody></table></div>' % (head, "".join(cells)))


def recording_dag(graph):
    """A recording (:class:`polygpu.Graph`) as a :class:`DAG`: a vertex per recorded call
    (named "#i kernel", no device: placement happens at replay) and an edge from each earlier
    call it waits for — the calls touching overlapping elements of an array where one of them
    writes — without the edges that follow from others (a transitive reduction)."""
    calls = graph.recorded()
    vertices, conflicts = [], []
    for j, c in enumerate(calls):
        vertices.append({"id": j + 1, "kind": "kernel", "name": c["kernel"], "device": -1,
                         "stream": -1, "rank": 0,
                         "args": [{"array": a["array"], "access": a["access"]}
                                                for a in c["args"]],
                         "submit_ns": 0, "start_ns": 0, "end_ns": 0})
        mine = set()
        for i in range(j):
            for a in c["args"]:
                for b in calls[i]["args"]:
                    if (a["array"] == b["array"] and a["first"] < b["first"] + b["count"]
                            and b["first"] < a["first"] + a["count"]
                            and "out" in a["access"] + b["access"]):
                        mine.add(i)
        conflicts.append(mine)
    # ancestors as bit sets, then keep an edge i -> j only if no other parent of j descends
    # from i
    anc = []
    for j, ps in enumerate(conflicts):
        bits = 0
        for i in ps:
            bits |= anc[i] | (1 << i)
        anc.append(bits)
    edges = []
    for j, ps in enumerate(conflicts):
        for i in sorted(ps):
            if not any(k != i and (anc[k] >> i) & 1 for k in ps):
                edges.append([i + 1, j + 1])
    return DAG({"vertices": vertices, "edges": edges})


@dataclass(frozen=True)
class TimelineEntry:
    """One operation of a :class:`Timeline`: a kernel, a copy or a host access.

    Times are seconds since the runtime was created (host clock). ``timed`` is False for work
    not timed (GPU work without the ``trace`` option, recordings replayed as one computation,
    work not finished when the timeline was taken): then ``start`` and ``end`` are its
    submission time.
    """

    id: int
    kind: str  # "kernel", "copy", "host_read", "host_write"
    name: str
    device: int  # -1: the host
    stream: int  # -1 on the host; COPY_STREAM (32): the device's copy stream
    start: float
    end: float
    submit: float
    timed: bool
    bytes: int = 0  # copies: bytes moved

    @property
    def duration(self):
        """``end - start`` in seconds."""
        return self.end - self.start

    @property
    def track(self):
        """``(device, stream)``: the row of the Gantt chart, one per device stream."""
        return (self.device, self.stream)


def _track_label(track, device_names=()):
    device, stream = track
    if device < 0:
        return "host"
    name = device_names[device] if device < len(device_names) else ""
    where = "copy stream" if stream >= COPY_STREAM else "stream %d" % stream
    return "device %d%s, %s" % (device, " (%s)" % name if name else "", where)


class Timeline(list):
    """The runtime's operations in time, as :meth:`Runtime.timeline` returns them: a list of
    :class:`TimelineEntry`, oldest submission first, with :meth:`plot` drawing a Gantt chart
    (one row per device stream) with matplotlib.

    :attr:`device_names` holds the runtime's device names, by device id.
    """

    def __init__(self, entries=(), device_names=()):
        super().__init__(entries)
        self._device_names = list(device_names)

    @property
    def device_names(self):
        """The runtime's device names, by device id."""
        return self._device_names

    @classmethod
    def _from_dag(cls, dag, device_names):
        entries = []
        for v in dag["vertices"]:
            timed = bool(v["end_ns"])
            start_ns = v["start_ns"] if timed else v["submit_ns"]
            end_ns = max(v["end_ns"], start_ns) if timed else v["submit_ns"]
            entries.append(TimelineEntry(
                id=v["id"], kind=v["kind"], name=v["name"], device=v["device"],
                stream=v["stream"], start=start_ns / 1e9, end=end_ns / 1e9,
                submit=v["submit_ns"] / 1e9, timed=timed, bytes=v.get("bytes", 0)))
        return cls(entries, device_names)

    def tracks(self):
        """The ``(device, stream)`` rows that hold an entry: the host first, then by device and
        stream."""
        return sorted({e.track for e in self})

    def __repr__(self):
        n = len(self)
        if not n:
            return "polygpu Timeline: no operations"
        timed = [e for e in self if e.timed]
        span = (max(e.end for e in timed) - min(e.start for e in timed)) if timed else 0.0
        lines = ["polygpu Timeline: %d operations (%d timed) on %d tracks over %.6f s"
                 % (n, len(timed), len(self.tracks()), span)]
        shown = list(self) if n <= 40 else list(self[:20]) + [None] + list(self[-20:])
        for e in shown:
            if e is None:
                lines.append("  ... %d more ..." % (n - 40))
                continue
            when = ("%.6f s + %s" % (e.start, _duration(e.duration)) if e.timed
                    else "submitted %.6f s, not timed" % e.submit)
            lines.append("  #%-5d %-10s %-24s %-24s %s" % (
                e.id, e.kind, e.name, _track_label(e.track), when))
        return "\n".join(lines)

    def plot(self, ax=None, color_by="name", legend=True):
        """Draw the timeline as a Gantt chart: a row per device stream (and one for the host), a
        bar from start to end per timed operation, a tick at its submission per untimed one;
        time runs from the first operation. Operations shorter than 0.3% of the whole are drawn
        that wide, so that each shows. ``color_by``: ``"name"`` (a color per kernel name;
        copies and host accesses by kind) or ``"kind"``. Returns the matplotlib Axes
        (``ax.figure`` is its Figure); draws on ``ax`` when given.

        Needs matplotlib: raises ImportError naming it when it is not installed.
        """
        try:
            import matplotlib
            if ax is None:
                import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("Timeline.plot() needs matplotlib: pip install matplotlib "
                              "(Debian: apt-get install python3-matplotlib)") from None
        if color_by not in ("name", "kind"):
            raise ValueError("color_by must be 'name' or 'kind', not %r" % (color_by,))
        tracks = self.tracks()
        row = {t: i for i, t in enumerate(tracks)}
        if ax is None:
            _, ax = plt.subplots(figsize=(10, 1.2 + 0.45 * max(1, len(tracks))))
        cmap = matplotlib.colormaps["tab20"]

        def key_of(e):
            return e.name if color_by == "name" and e.kind == "kernel" else e.kind

        keys = sorted({key_of(e) for e in self})
        colors = {k: cmap(i % 20) for i, k in enumerate(keys)}
        t0 = min((e.start for e in self), default=0.0)
        t1 = max((e.end for e in self), default=0.0)
        scale, unit = (1e3, "ms") if t1 - t0 < 1.0 else (1.0, "s")
        least = (t1 - t0) * 0.003
        labelled = set()
        for e in self:
            key = key_of(e)
            label = None if key in labelled else key
            labelled.add(key)
            if e.timed:
                ax.barh(row[e.track], max(e.duration, least) * scale,
                        left=(e.start - t0) * scale, height=0.6, color=colors[key],
                        edgecolor="black", linewidth=0.3, label=label)
            else:
                ax.plot([(e.submit - t0) * scale], [row[e.track]], marker="|", markersize=14,
                        linestyle="none", color=colors[key], label=label)
        ax.set_yticks(range(len(tracks)))
        ax.set_yticklabels([_track_label(t) for t in tracks])
        ax.set_ylim(len(tracks) - 0.5, -0.5)
        ax.set_xlabel("%s from the first operation (%.6f s after the runtime was created)"
                      % (unit, t0))
        ax.set_title("polygpu timeline: %d operations" % len(self))
        if legend and labelled and len(labelled) <= 20:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
        try:
            ax.figure.tight_layout()
        except (ValueError, RuntimeError):
            pass
        return ax

"""Typed use of the whole public API: run by pytest, and checked by `mypy --strict` with the
examples (check_types.py, the CTest test python_types). Each annotation below is what the
stubs promise; mypy fails if they promise otherwise, pytest if the run time does."""

import pathlib
from typing import Any, List, Optional, Tuple

import numpy as np
import numpy.typing as npt
import pytest

import polygpu as pg

SRC = r"""
extern "C" __global__ void add1(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }
extern "C" __global__ void scale(float *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] * s; }
"""


def test_runtime_arrays_and_kernels(tmp_path: pathlib.Path) -> None:
    with pg.Runtime(devices="host:2", policy="round-robin", execution="async",
                    check="bounds", device_memory_limit="64M") as rt:
        closed: bool = rt.closed
        assert not closed
        for d in rt.devices:
            cc: Optional[Tuple[int, int]] = d["compute_capability"]
            assert d["kind"] in ("cpu", "cuda") and (cc is None) == (d["kind"] == "cpu")
            block: Tuple[int, int, int] = d["max_block"]
            assert min(block) >= 1
        add1: pg.Kernel = rt.kernel(SRC, "add1", options=["-DUNUSED=1"])
        scale = rt.kernel(SRC, "scale", signature="inout float *y, float s, int n")
        assert [p["access"] for p in add1.params] == ["inout", "in", None]
        assert add1.name == "add1" and add1.runtime is rt
        x = rt.asarray([1.0, 2.0, 3.0, 4.0], dtype="float32")
        y = rt.array(np.float32, x.shape)
        launch: pg.Launch = add1(1, (32,))
        launch(y, x, 4)
        add1.launch((1, 1), 32, y, x, np.int32(4), shared_mem=0)
        scale(grid=1, block=32)(y, np.float32(2.0), 4)
        first: float = y[0]
        assert first == 4.0
        y[1:3] = [0.0, 0.0]
        assert y.tolist() == [4.0, 0.0, 0.0, 10.0]
        values: npt.NDArray[Any] = y.to_numpy()
        assert values.shape == (4,)
        raw: bytes = y.to_bytes()
        assert len(raw) == y.nbytes == y.size * y.itemsize
        assert y.dtype_name == "float32" and y.ndim == 1 and len(y) == 4
        y.prefetch(0)
        y.prefetch("host")
        where: List[str] = y.locations
        assert "host" in where
        view = y.host_view(writable=True)
        assert view.writable and view.array is y
        writable = np.asarray(view)
        writable[0] = 5.0
        del writable
        with memoryview(y) as m:
            assert m.readonly and m.shape == (4,)
        assert y[0] == 5.0
        y.copy_from(np.zeros(4, dtype=np.float32))
        with rt.record() as g:
            add1(1, 32)(y, x, 4)
        g()
        g.launch()
        assert g.calls == 1
        g.close()
        rt.sync(timeout=30)
        counters = rt.stats()
        moved: int = counters["bytes_moved"]
        assert moved >= 0 and all(isinstance(k, tuple) for k in counters["link_bytes"])
        dag = rt.dag()
        ids = {v["id"] for v in dag["vertices"]}
        assert all(a in ids and b in ids for a, b in dag["edges"])
        rt.export_dag(tmp_path / "dag.json")
        dot: str = rt.dag_dot()
        assert dot.startswith("digraph")
        names: List[str] = [v["name"] for v in dag.vertices]
        table: str = dag.to_text(limit=50)
        assert all(n in table for n in names) and dag.to_dot().startswith("digraph")
        svg: Optional[str] = dag._repr_svg_()
        assert svg is None or svg.startswith("<svg")
        timeline: pg.Timeline = rt.timeline()
        entries: List[pg.TimelineEntry] = list(timeline)
        spans: List[float] = [e.end - e.start for e in entries if e.kind == "kernel"]
        rows: List[Tuple[int, int]] = timeline.tracks()
        assert spans and all(s >= 0 for s in spans) and entries[0].track in rows
        rt.write_trace(tmp_path / "trace.json")
        copied = rt.from_dlpack(np.arange(3, dtype=np.int32))
        assert copied.dtype_name == "int32" and copied.__dlpack_device__() == (1, 0)
        with copied:
            assert np.from_dlpack(copied).tolist() == [0, 1, 2]
        assert copied.freed
    assert rt.closed


def test_errors_and_module_functions() -> None:
    with pg.Runtime(devices="host:1") as rt:
        with pytest.raises(pg.CompileError) as info:
            rt.kernel('extern "C" __global__ void broken(float *y) { y[0] = ; }', "broken")
        log: str = info.value.log
        assert log and info.value.status == "PG_ERROR_COMPILE"
        with pytest.raises(TypeError):  # an ArgumentError is a TypeError
            rt.array("float32", 2.5)  # type: ignore[arg-type]
    size: int = pg.dtype_size(float)
    assert size == 8 and pg.dtype_name(np.dtype("uint8")) == "uint8"
    assert "float32" in pg.dtypes and pg.MAX_DIMS >= 4 and pg.MAX_DEVICES >= 1
    assert "round-robin" in pg.POLICIES and isinstance(pg.__version__, str)
    assert issubclass(pg.TimeoutError, TimeoutError) and issubclass(pg.FileError, OSError)
    default: pg.Runtime = pg.default_runtime()
    assert not default.closed
    a = pg.asarray(np.ones(3))
    assert a.runtime is default and pg.array("int64", (2, 2)).shape == (2, 2)
    pg.sync()

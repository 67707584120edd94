from typing import Iterable, List, Literal, NamedTuple, Optional, overload

from . import _polygpu

__all__ = ["gemm", "axpy", "dot", "GemmReport"]

class GemmReport(NamedTuple):
    devices: List[int]
    tile: int
    tiles: int
    rows: List[int]
    predicted_s: float
    predicted_j: Optional[float]
    gflops: List[float]
    from_models: bool

@overload
def gemm(
    rt: _polygpu.Runtime,
    a: _polygpu.DeviceArray,
    b: _polygpu.DeviceArray,
    c: _polygpu.DeviceArray,
    alpha: float = 1.0,
    beta: float = 0.0,
    trans_a: bool = False,
    trans_b: bool = False,
    *,
    devices: Optional[Iterable[int]] = None,
    tile: Optional[int] = None,
    metric: Literal["perf", "edp"] = "perf",
    report: Literal[False] = False,
) -> None: ...
@overload
def gemm(
    rt: _polygpu.Runtime,
    a: _polygpu.DeviceArray,
    b: _polygpu.DeviceArray,
    c: _polygpu.DeviceArray,
    alpha: float = 1.0,
    beta: float = 0.0,
    trans_a: bool = False,
    trans_b: bool = False,
    *,
    devices: Optional[Iterable[int]] = None,
    tile: Optional[int] = None,
    metric: Literal["perf", "edp"] = "perf",
    report: Literal[True],
) -> GemmReport: ...
def axpy(rt: _polygpu.Runtime, alpha: float, x: _polygpu.DeviceArray, y: _polygpu.DeviceArray) -> None: ...
def dot(
    rt: _polygpu.Runtime, x: _polygpu.DeviceArray, y: _polygpu.DeviceArray, out: _polygpu.DeviceArray
) -> None: ...

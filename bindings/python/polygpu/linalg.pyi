from . import _polygpu

__all__ = ["gemm", "axpy", "dot"]

def gemm(
    rt: _polygpu.Runtime,
    a: _polygpu.DeviceArray,
    b: _polygpu.DeviceArray,
    c: _polygpu.DeviceArray,
    alpha: float = 1.0,
    beta: float = 0.0,
    trans_a: bool = False,
    trans_b: bool = False,
) -> None: ...
def axpy(rt: _polygpu.Runtime, alpha: float, x: _polygpu.DeviceArray, y: _polygpu.DeviceArray) -> None: ...
def dot(
    rt: _polygpu.Runtime, x: _polygpu.DeviceArray, y: _polygpu.DeviceArray, out: _polygpu.DeviceArray
) -> None: ...

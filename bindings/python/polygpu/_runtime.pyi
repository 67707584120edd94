# Stubs for polygpu._runtime: the Runtime class (the C runtime plus the DAG helpers).
from os import PathLike
from typing import Literal, Protocol, Union

from typing_extensions import TypeAlias

from . import _polygpu
from ._display import DAG, Timeline

POLICIES: tuple[
    Literal["round-robin"],
    Literal["stream-aware"],
    Literal["min-transfer-size"],
    Literal["minmax-transfer-time"],
    Literal["min-transfer-time"],
    Literal["min-finish-time"],
    Literal["earliest-finish"],
]

class _DLPackProducer(Protocol):  # NumPy, PyTorch, JAX, CuPy arrays, DeviceArray...
    def __dlpack_device__(self) -> tuple[int, int]: ...

_StrPath: TypeAlias = Union[str, PathLike[str]]

class Runtime(_polygpu.Runtime):
    def from_dlpack(
        self,
        obj: _DLPackProducer,
        dtype: _polygpu._DTypeLike | None = None,
        copy: bool | None = None,
    ) -> _polygpu.DeviceArray: ...
    def dag(self) -> DAG: ...
    def timeline(self) -> Timeline: ...
    def dag_dot(self) -> str: ...
    def export_dag(
        self, path: _StrPath, format: Literal["dot", "gv", "json"] | None = None
    ) -> None: ...

# Stubs for polygpu._default: the default runtime behind polygpu.array / asarray / kernel / sync.
from typing import Iterable, Literal

from . import _polygpu, _runtime

def default_runtime() -> _runtime.Runtime: ...
def array(
    dtype: _polygpu._DTypeLike, shape: _polygpu._ShapeLike, *, owner: int | None = None
) -> _polygpu.DeviceArray: ...
def from_dlpack(
    obj: _runtime._DLPackProducer,
    dtype: _polygpu._DTypeLike | None = None,
    copy: bool | None = None,
) -> _polygpu.DeviceArray: ...
def asarray(
    obj: object, dtype: _polygpu._DTypeLike | None = None, *, owner: int | None = None
) -> _polygpu.DeviceArray: ...
def kernel(
    source: str,
    name: str,
    signature: str | None = None,
    options: str | Iterable[str] | None = None,
    *,
    where: Literal["any", "gpu", "cpu"] | None = None,
) -> _polygpu.Kernel: ...
def sync() -> None: ...

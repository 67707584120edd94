# Stubs for the C extension polygpu._polygpu (bindings/python/src/*.c). Parameter names,
# positional-only (METH_O, METH_VARARGS) and keyword-only parameters are those the C code
# parses. The _Name TypedDicts describe dicts returned at run time: they exist only here.
import builtins
import sys
from os import PathLike
from types import TracebackType
from typing import (
    Any,
    Iterable,
    Iterator,
    Literal,
    Protocol,
    Sequence,
    SupportsIndex,
    TypedDict,
    Union,
    final,
)

import numpy
import numpy.typing
from typing_extensions import Self, TypeAlias

from . import _display, _runtime

if sys.version_info >= (3, 10):
    from types import EllipsisType as _Ellipsis
else:
    from builtins import ellipsis as _Ellipsis

# ---------------------------------------------------------------- argument types

_DTypeName: TypeAlias = Literal[
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"
]

class _NamedDType(Protocol):  # numpy.dtype("float32"): anything whose .name is a dtype name
    @property
    def name(self) -> str: ...

# A dtype name, the types int (int64) and float (float64), a NumPy scalar type (numpy.float32)
# or a NumPy dtype.
_DTypeLike: TypeAlias = Union[str, type, numpy.dtype[Any], _NamedDType]
# An int, or a tuple or list of 1 to MAX_DIMS ints.
_ShapeLike: TypeAlias = Union[SupportsIndex, tuple[SupportsIndex, ...], list[SupportsIndex]]
# A launch's grid or block: an int, or a tuple or list of 1 to 3 ints.
_Dim3: TypeAlias = Union[
    SupportsIndex,
    tuple[SupportsIndex],
    tuple[SupportsIndex, SupportsIndex],
    tuple[SupportsIndex, SupportsIndex, SupportsIndex],
    list[SupportsIndex],
]
# A kernel argument: an array for a pointer parameter, a number for a scalar one.
_KernelArg: TypeAlias = Union[
    DeviceArray, int, float, numpy.integer[Any], numpy.floating[Any]
]
_IndexItem: TypeAlias = Union[SupportsIndex, slice, _Ellipsis]
# a[i], a[2:10:3], m[1, ::2], m[..., 0]
_Index: TypeAlias = Union[_IndexItem, tuple[_IndexItem, ...]]
_StrPath: TypeAlias = Union[str, PathLike[str]]
_FSPath: TypeAlias = Union[str, bytes, PathLike[str], PathLike[bytes]]

# ---------------------------------------------------------------- returned dicts

# A functional TypedDict: "class" (the device's class, from the backend registry) is a keyword.
_DeviceInfo = TypedDict(
    "_DeviceInfo",
    {
        "id": int,
        "kind": Literal["cpu", "cuda"],
        "class": Literal["cpu", "gpu"],
        "backend": str,
        "name": str,
        "memory_bytes": int,
        "compute_capability": tuple[int, int] | None,
        "multiprocessors": int,
        "max_threads_per_block": int,
        "max_block": tuple[int, int, int],
        "max_grid": tuple[int, int, int],
        "max_shared_memory_per_block": int,
    },
)

class _ModelInfo(TypedDict):
    kernel: str
    device_class: str
    bytes: int
    median_ns: int
    samples: int

class _Stats(TypedDict):
    ndevices: int
    computations: int
    kernels: int
    host_accesses: int
    copies: int
    bytes_moved: int
    host_wait_ns: int
    pending: int
    evictions: int
    bytes_evicted: int
    writebacks: int
    copies_elided: int
    bytes_elided: int
    rank: int
    nranks: int
    rank_messages_sent: int
    rank_messages_received: int
    rank_bytes_sent: int
    rank_bytes_received: int
    rank_cache_hits: int
    device_bytes: list[int]
    device_bytes_peak: list[int]
    link_bytes: dict[tuple[str, str], int]
    energy_joules: list[float | None]
    power_watts: list[float | None]

class _PowerChoice(TypedDict):
    devices: list[int]
    limit_watts: float | None
    used_watts: float
    performance_from: Literal["models", "nominal"]
    watts: list[float | None]
    performance: list[float]

class _ParamInfo(TypedDict):
    name: str
    type: str
    is_array: bool
    dtype: _DTypeName
    access: Literal["in", "out", "inout"] | None
    chunk_per_thread: int

class _DagArg(TypedDict):
    array: int
    access: Literal["in", "out", "inout"]

class _DagCopyFields(TypedDict, total=False):
    bytes: int  # copy vertices only
    src: int
    dst: int

class _DagVertex(_DagCopyFields):
    id: int
    kind: Literal["kernel", "host_read", "host_write", "copy"]
    name: str
    device: int
    stream: int
    rank: int
    args: list[_DagArg]
    submit_ns: int
    start_ns: int
    end_ns: int

class _Dag(TypedDict):
    vertices: list[_DagVertex]
    edges: list[list[int]]

# ---------------------------------------------------------------- module constants

DAG_DOT: int
DAG_JSON: int
MAX_DEVICES: int
MAX_DIMS: int
version: tuple[int, int, int]
dtypes: tuple[_DTypeName, ...]

def dtype_size(dtype: _DTypeLike, /) -> int: ...
def dtype_name(dtype: _DTypeLike, /) -> _DTypeName: ...

# ---------------------------------------------------------------- exceptions

class Error(Exception):
    status: str | None  # the C status name, e.g. "PG_ERROR_ARGUMENT"

class ArgumentError(Error, TypeError): ...
class StateError(Error): ...

class CompileError(Error):
    log: str  # the compiler's output (None only on an instance polygpu did not raise)

class DeviceError(Error): ...
class OutOfMemoryError(Error, MemoryError): ...
class NotFoundError(Error, LookupError): ...
class UnsupportedError(Error): ...
class FileError(Error, OSError): ...
class InternalError(Error): ...
class TimeoutError(Error, builtins.TimeoutError): ...
class InterruptedError(Error): ...

# ---------------------------------------------------------------- types

class Runtime:
    """The C runtime; polygpu.Runtime adds the DAG helpers and documents the options."""

    def __init__(
        self,
        *,
        devices: str | None = None,
        policy: str | None = None,
        stream_policy: Literal["fifo", "always-new"] | None = None,
        parent_stream_policy: Literal[
            "same-as-parent", "disjoint", "multigpu-disjoint", "multigpu-early-disjoint"
        ]
        | None = None,
        execution: Literal["async", "sync"] | None = None,
        prefetch: bool | int | str | None = None,
        interconnect: _StrPath | None = None,
        exploration_threshold: float | str | None = None,
        log: Literal["off", "info", "debug"] | None = None,
        trace: _StrPath | None = None,
        cache_dir: _StrPath | None = None,
        check: Literal["off", "bounds"] | None = None,
        device_memory_limit: int | str | None = None,
        elide_copies: bool | int | str | None = None,
        profile: _StrPath | None = None,
        models: Literal["off", "on"] | None = None,
        chunk_bytes: int | str | None = None,
        power_limit: float | str | None = None,
        power_watts: float | str | None = None,
        ranks: Literal["auto", "mpi", "off"] | None = None,
    ) -> None: ...
    def close(self, timeout: float | None = None) -> None: ...
    def sync(self, timeout: float | None = None) -> None: ...
    def clock(self) -> float: ...
    def _task(self, name: str, /) -> Kernel: ...
    def _gemm(
        self,
        a: DeviceArray,
        b: DeviceArray,
        c: DeviceArray,
        alpha: float,
        beta: float,
        trans_a: bool,
        trans_b: bool,
        devices: int,
        tile: int,
        metric: int,
        /,
    ) -> dict[str, Any]: ...
    def array(
        self, dtype: _DTypeLike, shape: _ShapeLike, *, owner: int | None = None
    ) -> DeviceArray: ...
    def asarray(
        self, obj: object, dtype: _DTypeLike | None = None, *, owner: int | None = None
    ) -> DeviceArray: ...
    def kernel(
        self,
        source: str,
        name: str,
        signature: str | None = None,
        options: str | Iterable[str] | None = None,
        *,
        split: Literal["auto", "on", "off", "default"] | None = None,
        where: Literal["any", "gpu", "cpu"] | None = None,
    ) -> Kernel: ...
    def stats(self) -> _Stats: ...
    def models(self) -> list[_ModelInfo]: ...
    def power_choice(self) -> _PowerChoice: ...
    def write_trace(self, path: _FSPath, /) -> None: ...
    def record(self) -> Graph: ...
    def _dag(self) -> _Dag: ...
    def _dag_string(self, format: int, /) -> str: ...
    def _export_dag(self, format: int, path: _FSPath, /) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> Literal[False]: ...
    @property
    def devices(self) -> list[_DeviceInfo]: ...
    @property
    def closed(self) -> bool: ...
    @property
    def rank(self) -> int: ...
    @property
    def nranks(self) -> int: ...

@final
class DeviceArray:
    """An array kept coherent across the host and the devices (Runtime.array, .asarray)."""

    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Any]: ...
    # One element: an int or a float; a selection: a NumPy array (nested lists without NumPy).
    # a non-empty range of rows with step 1 is a DeviceArray view; other keys read values
    def __getitem__(self, key: _Index, /) -> Any: ...
    def __setitem__(self, key: _Index, value: object, /) -> None: ...
    # The buffer protocol: memoryview(a), numpy.asarray(a) (read-only views).
    def __buffer__(self, flags: int, /) -> memoryview: ...
    def __release_buffer__(self, buffer: memoryview, /) -> None: ...
    # numpy.asarray(a) when the buffer is unavailable: raises what memoryview(a) raises.
    def __array__(
        self, dtype: numpy.typing.DTypeLike | None = None, copy: bool | None = None
    ) -> numpy.typing.NDArray[Any]: ...
    def __dlpack__(
        self,
        *,
        stream: int | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any: ...  # a "dltensor" PyCapsule
    def __dlpack_device__(self) -> tuple[Literal[1], Literal[0]]: ...
    def split(self, n_or_rows: int | Sequence[int], /) -> list[DeviceArray]: ...
    def free(self) -> None: ...
    def tolist(self) -> list[Any]: ...
    def to_numpy(self) -> numpy.typing.NDArray[Any]: ...
    def to_bytes(self) -> bytes: ...
    def copy_from(self, obj: object, /) -> None: ...
    def host_view(self, writable: bool = False) -> HostView: ...
    def prefetch(self, device: int | Literal["host"] | None = None) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> None: ...
    # On GPU devices only (AttributeError on CPU devices): version 3 of the interface.
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    # A numpy.dtype when NumPy is installed, else the dtype's name.
    @property
    def dtype(self) -> numpy.dtype[Any] | _DTypeName: ...
    @property
    def dtype_name(self) -> _DTypeName: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def ndim(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def id(self) -> int: ...
    @property
    def runtime(self) -> _runtime.Runtime: ...
    @property
    def freed(self) -> bool: ...
    @property
    def owner(self) -> int: ...
    @owner.setter
    def owner(self, value: int, /) -> None: ...
    @property
    def locations(self) -> list[str]: ...

@final
class HostView:
    """DeviceArray.host_view(writable): the array's buffer protocol with a fixed writability."""

    def __buffer__(self, flags: int, /) -> memoryview: ...
    def __release_buffer__(self, buffer: memoryview, /) -> None: ...
    @property
    def array(self) -> DeviceArray: ...
    @property
    def writable(self) -> bool: ...

@final
class Kernel:
    """A compiled kernel (Runtime.kernel): k(grid, block, shared_mem=0)(*args) launches it."""

    def __call__(self, grid: _Dim3, block: _Dim3, shared_mem: SupportsIndex = 0) -> Launch: ...
    def launch(
        self, grid: _Dim3, block: _Dim3, /, *args: _KernelArg, shared_mem: SupportsIndex = 0
    ) -> None: ...
    def free(self) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def params(self) -> list[_ParamInfo]: ...
    @property
    def runtime(self) -> _runtime.Runtime: ...

@final
class Launch:
    """A kernel with its grid, block and shared memory: call it with the kernel's arguments."""

    def __call__(self, *args: _KernelArg) -> None: ...

@final
class Graph:
    """Kernel calls recorded once (with rt.record() as g: ...) and replayed (g())."""

    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> Literal[False]: ...
    def __call__(self) -> None: ...
    def launch(self) -> None: ...
    def close(self) -> None: ...
    def recorded(self) -> list[dict[str, Any]]: ...
    def to_dag(self) -> _display.DAG: ...
    def _repr_svg_(self) -> str | None: ...
    def _repr_html_(self) -> str: ...
    @property
    def calls(self) -> int: ...

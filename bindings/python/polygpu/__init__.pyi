# Stubs for the polygpu package (PEP 561: py.typed marks it typed). polygpu/_polygpu.pyi holds
# the C extension's classes, functions and exceptions; this file re-exports the public names.
from . import _polygpu as _polygpu
from ._default import array as array
from ._default import asarray as asarray
from ._default import default_runtime as default_runtime
from ._default import from_dlpack as from_dlpack
from ._default import kernel as kernel
from ._default import sync as sync
from ._display import DAG as DAG
from ._display import Timeline as Timeline
from ._display import TimelineEntry as TimelineEntry
from . import linalg as linalg
from typing import Any
from ._polygpu import ArgumentError as ArgumentError
from ._polygpu import CompileError as CompileError
from ._polygpu import DeviceArray as DeviceArray
from ._polygpu import DeviceError as DeviceError
from ._polygpu import Error as Error
from ._polygpu import FileError as FileError
from ._polygpu import Graph as Graph
from ._polygpu import HostView as HostView
from ._polygpu import InternalError as InternalError
from ._polygpu import InterruptedError as InterruptedError
from ._polygpu import Kernel as Kernel
from ._polygpu import Launch as Launch
from ._polygpu import NotFoundError as NotFoundError
from ._polygpu import OutOfMemoryError as OutOfMemoryError
from ._polygpu import StateError as StateError
from ._polygpu import TimeoutError as TimeoutError
from ._polygpu import UnsupportedError as UnsupportedError
from ._polygpu import dtype_name as dtype_name
from ._polygpu import dtype_size as dtype_size
from ._polygpu import dtypes as dtypes
from ._runtime import POLICIES as POLICIES
from ._runtime import Runtime as Runtime

__version__: str
MAX_DEVICES: int
MAX_DIMS: int

__all__ = [
    "ArgumentError",
    "CompileError",
    "DAG",
    "DeviceArray",
    "DeviceError",
    "Error",
    "FileError",
    "Graph",
    "HostView",
    "InternalError",
    "InterruptedError",
    "TimeoutError",
    "Kernel",
    "Launch",
    "MAX_DEVICES",
    "MAX_DIMS",
    "NotFoundError",
    "OutOfMemoryError",
    "POLICIES",
    "Runtime",
    "StateError",
    "Timeline",
    "TimelineEntry",
    "UnsupportedError",
    "array",
    "asarray",
    "default_runtime",
    "dtype_name",
    "dtype_size",
    "dtypes",
    "from_dlpack",
    "kernel",
    "linalg",
    "node_status",
    "sync",
]

def node_status() -> dict[str, list[dict[str, Any]]]: ...

"""Shared pieces of the benchmark workloads.

* Kernel sources: :func:`kernel_source` reads ``kernels/<name>.cu`` with its local includes
  pasted in (what polygpu compiles; nvcc includes the same files), :func:`kernel_signatures`
  reads the ``/* polygpu: <signature> */`` comment before each kernel, and :func:`load_kernels`
  compiles every kernel of a file on a polygpu runtime.
* Launch geometry shared by every version (the CUDA C baselines compute the same numbers in
  ``cuda/common.h``, Lua and Java in their own files): :func:`grid_1d`, :func:`grid_reduce`,
  :func:`matvec_geometry`, :func:`stats_geometry`, :func:`stencil_geometry`.
* :func:`partitions`: the paper's partitioning, ``ceil(n / p)`` elements per partition.
* The NumPy twin of ``kernels/common.cuh``'s generator: :func:`np_hash`, :func:`np_uniform`.
* :func:`sample_indices`: which output elements are validated (all of them up to 2^20).
* :func:`fetch`: the host reads that end a timed run.
"""

import os
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np

KERNEL_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")
BLOCK = 256  # threads per block, every kernel
SAMPLE_LIMIT = 1 << 20  # outputs up to this many elements are validated whole

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[ \t]*$', re.M)
_SIGNATURE = re.compile(
    r'/\*\s*polygpu:\s*(.*?)\s*\*/\s*extern\s+"C"\s+__global__\s+void\s+(\w+)', re.S)


def kernel_source(name, _seen=None):
    """The text of ``kernels/<name>`` (``.cu`` added when missing) with every local
    ``#include "file"`` replaced by that file's text, each file pasted once."""
    seen = set() if _seen is None else _seen
    fname = name if os.path.splitext(name)[1] else name + ".cu"
    path = os.path.join(KERNEL_DIR, fname)
    seen.add(fname)
    with open(path, encoding="utf-8") as f:
        text = f.read()

    def paste(m):
        inc = m.group(1)
        if inc in seen:
            return "/* %s: already included */" % inc
        return kernel_source(inc, seen)

    return _INCLUDE.sub(paste, text)


def kernel_signatures(source):
    """``{kernel name: polygpu signature}`` from the ``/* polygpu: ... */`` comments (a comment
    wrapped over lines has a ``*`` at the start of each continuation line)."""
    out = {}
    for m in _SIGNATURE.finditer(source):
        body = re.sub(r"\s*\n\s*\*[ \t]?", " ", m.group(1))
        out[m.group(2)] = " ".join(body.split())
    return out


class Kernels:
    """Every kernel of one kernel file compiled on a runtime, as attributes (``ks.vec_square``)."""

    def __init__(self, rt, name):
        self.source = kernel_source(name)
        for kname, sig in kernel_signatures(self.source).items():
            setattr(self, kname, rt.kernel(self.source, kname, signature=sig))


def load_kernels(rt, name):
    """Compile the kernels of ``kernels/<name>.cu`` on ``rt`` (cached on disk by polygpu)."""
    return Kernels(rt, name)


def fmt_bytes(n):
    """'1.07 GB', '262 kB': a size for the tables."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return "%.3g %s" % (n / scale, unit)
    return "%d B" % n


def cdiv(a, b):
    """Ceiling of a / b for positive integers."""
    return -(-a // b)


def grid_1d(n):
    """Blocks for an element-wise, grid-stride kernel over n elements."""
    return max(1, min(cdiv(n, BLOCK), 65535))


def grid_reduce(n):
    """Blocks for a reduction that ends in one atomicAdd per thread: every thread sums at
    least 16 elements and there are at most 256 blocks, so a reduction costs at most 65536
    atomics."""
    return max(1, min(cdiv(n, BLOCK * 16), 256))


def matvec_geometry(rows, n):
    """``(grid, chunk)`` for ``linalg_matvec`` on a partition of ``rows`` rows and ``n``
    columns: enough column chunks for about 2^17 threads, chunks of at least 128 columns."""
    ksplit = max(1, min(cdiv(1 << 17, rows), cdiv(n, 128)))
    chunk = cdiv(n, ksplit)
    return (cdiv(rows, BLOCK), cdiv(n, chunk), 1), chunk


def stats_geometry(rows, f):
    """``(grid, chunk)`` for ``ml_rr_stats``: row chunks of at least 64 rows, at most 256."""
    rsplit = max(1, min(cdiv(rows, 64), 256))
    chunk = cdiv(rows, rsplit)
    return (cdiv(f, BLOCK), cdiv(rows, chunk), 1), chunk


def stencil_geometry(rows, n):
    """``(grid, block)`` for JACOBI's row kernels on ``rows`` rows of ``n`` columns: blocks of
    BLOCK threads along the columns, one block row per grid row up to 65535 (the kernels loop
    over the rest)."""
    return (cdiv(n, BLOCK), max(1, min(rows, 65535)), 1), BLOCK


def partitions(n, p):
    """``[(offset, count), ...]``: n elements (or rows) in p partitions of ``ceil(n / p)``, the
    last one shorter; fewer than p partitions when n is too small to give each one an element."""
    s = cdiv(n, p)
    return [(i * s, min(s, n - i * s)) for i in range(p) if i * s < n]


# ---------------------------------------------------------------- the input generator in NumPy

def np_hash(index, seed):
    """``pgb_hash`` of kernels/common.cuh on an integer array (taken modulo 2^32)."""
    h = np.asarray(index).astype(np.uint32)  # wraps modulo 2^32, like the kernels' cast
    with np.errstate(over="ignore"):
        h = h ^ np.uint32((seed * 0x9E3779B9) & 0xFFFFFFFF)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x7FEB352D)
        h ^= h >> np.uint32(15)
        h *= np.uint32(0x846CA68B)
        h ^= h >> np.uint32(16)
    return h


def np_uniform(index, seed):
    """``pgb_uniform``: float32 in [0, 1) with 24 random bits, bit-identical to the kernels."""
    return (np_hash(index, seed) >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)


def chunked_sum(fn, total, step):
    """``sum(fn(start, stop))`` over ``[0, total)`` in chunks of ``step``, on a thread pool
    (NumPy releases the GIL in its loops): the references of the large sizes."""
    starts = range(0, total, step)
    workers = max(1, min(len(starts), os.cpu_count() or 1, 32))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return sum(pool.map(lambda s: fn(s, min(total, s + step)), starts))


def sample_indices(total, limit=SAMPLE_LIMIT):
    """The output elements that are validated: all when ``total <= limit``, else every
    ``ceil(total / limit)``-th element from 0. The baselines write exactly these."""
    stride = 1 if total <= limit else cdiv(total, limit)
    return np.arange(0, total, stride, dtype=np.int64)


def sample_stride(total, limit=SAMPLE_LIMIT):
    """The stride of :func:`sample_indices`."""
    return 1 if total <= limit else cdiv(total, limit)


# ---------------------------------------------------------------- host reads

#: Simulated devices that time the work without doing it (``sim:...,compute=none``, which
#: benchmarks/run.py uses): a host read of what they made raises, so a run's reads become copies
#: to the host that are waited for (the same transfers, in virtual time), and no value is read.
TIMING_ONLY = False


def _read(a):
    # A read-only buffer view is one host access: it waits for the array's last writer and
    # copies it to the host if the host copy is stale; releasing it at once frees the array.
    memoryview(a).release()


def fetch(arrays, threads=False):
    """Bring every array's current value to the host (the end of a timed run).

    One host read per array, in order: each waits only for its own producer. With
    ``threads=True`` the reads run from a thread pool so that device-to-host copies from
    different GPUs overlap (polygpu has no asynchronous host prefetch)."""
    arrays = list(arrays)
    if TIMING_ONLY:  # copies only: Workload.fetch and host_only wait for them
        for a in arrays:
            a.prefetch("host")
        return
    if threads and len(arrays) > 1:
        with ThreadPoolExecutor(max_workers=min(len(arrays), 16)) as pool:
            list(pool.map(_read, arrays))
    else:
        for a in arrays:
            _read(a)


def host_only(arrays):
    """Make the host copy of each array the only valid one, as after a host write, without
    moving data when the host copy is current (a writable view, released at once). Inputs that
    the paper rewrites on the host before every run get this before every run, so each run
    copies them to the devices again."""
    if TIMING_ONLY:  # a writable view would show values nobody computed: a whole write instead
        for a in arrays:
            a.copy_from(np.zeros(a.shape, dtype=a.dtype))  # calloc'ed: no memory touched
        return
    for a in arrays:
        memoryview(a.host_view(True)).release()


def to_host(arrays):
    """Copy device-made values to the host and leave the host as the only valid copy (setup
    of host-resident inputs made by init kernels)."""
    fetch(arrays)
    host_only(arrays)


class Workload:
    """A benchmark instance on a polygpu runtime. The harness calls :meth:`setup` once, then
    ``prepare(); run()`` for every warm-up and timed run (only :meth:`run` is timed), and
    :meth:`sample` after the last run.

    Subclasses set ``rt``, ``ks`` (the kernels) and ``parts`` in their constructor."""

    #: host reads from a thread pool (see :func:`fetch`); the harness sets it
    fetch_threads = False

    def setup(self):
        """Allocate and initialise (untimed)."""

    def prepare(self):
        """Before each run (untimed): what the paper's benchmark resets on the host."""

    def run(self):
        """One timed run: every launch, and the host reads of the results."""
        raise NotImplementedError

    def sample(self):
        """The validated output values (see :func:`sample_indices`) as a NumPy array."""
        raise NotImplementedError

    def fetch(self, arrays):
        """:func:`fetch` with this workload's threading choice."""
        fetch(arrays, self.fetch_threads)
        if TIMING_ONLY:
            self.rt.sync()


def sample_partitioned(arrays, parts, total, limit=SAMPLE_LIMIT):
    """The :func:`sample_indices` of the concatenation of partitioned outputs: ``arrays[i]``
    holds elements ``[offset, offset + count)`` of ``parts[i]``."""
    idx = sample_indices(total, limit)
    out = []
    for a, (offset, count) in zip(arrays, parts):
        local = idx[(idx >= offset) & (idx < offset + count)] - offset
        view = np.asarray(a).reshape(-1)  # a read-only host view while it lives
        out.append(view[local].copy())
        del view
    return np.concatenate(out)

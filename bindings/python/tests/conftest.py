"""Shared fixtures and kernels for the polygpu Python suite.

The suite runs on PG_DEVICES (four CPU devices unless set, e.g. PG_DEVICES=cuda on a GPU
machine); tests that need several devices ask for them with the ``multi_device`` fixture.
"""

import os

os.environ.setdefault("PG_DEVICES", "host:4")  # before any runtime reads it

import pytest  # noqa: E402

import polygpu as pg  # noqa: E402

N = 1000

# Element-wise kernels only: CPU devices run them without __shared__ / __syncthreads.
SRC = r"""
extern "C" __global__ void fill(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
extern "C" __global__ void add1(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }
extern "C" __global__ void sum2(float *y, const float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a[i] + b[i]; }
extern "C" __global__ void scale(float *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] * s; }
extern "C" __global__ void axpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
extern "C" __global__ void iota64(long long *y, long long start, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = start + i; }
extern "C" __global__ void add_u8(unsigned char *y, unsigned char v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = y[i] + v; }
extern "C" __global__ void grid2d(float *y, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) y[r * cols + c] = r * 100.0f + c; }
extern "C" __global__ void nothing(float *y, int n) { }
"""


def grid_for(n, block=256):
    return (n + block - 1) // block


@pytest.fixture
def rt():
    """A fresh runtime on PG_DEVICES, closed after the test."""
    r = pg.Runtime()
    yield r
    r.close()


@pytest.fixture
def kernels(rt):
    """The kernels of SRC compiled for ``rt``, by name."""

    class K:
        pass

    k = K()
    for name in ("fill", "add1", "sum2", "scale", "axpy", "iota64", "add_u8", "grid2d",
                 "nothing"):
        setattr(k, name, rt.kernel(SRC, name))
    return k


@pytest.fixture
def multi_device(rt):
    """Skip a test that is only meaningful with two or more devices."""
    if len(rt.devices) < 2:
        pytest.skip("needs at least two devices (PG_DEVICES=host:4 gives four)")
    return len(rt.devices)


def two_devices():
    """A devices= value naming exactly two devices of the kind PG_DEVICES selects."""
    spec = os.environ.get("PG_DEVICES", "host:4")
    return "cuda:0,1" if spec.startswith("cuda") else "host:2"


def reachable(dag, src, dst):
    """True if the DAG has a path of one or more edges from vertex src to vertex dst."""
    succ = {}
    for a, b in dag["edges"]:
        succ.setdefault(a, []).append(b)
    todo, seen = list(succ.get(src, [])), set()
    while todo:
        v = todo.pop()
        if v == dst:
            return True
        if v not in seen:
            seen.add(v)
            todo.extend(succ.get(v, []))
    return False


def kernel_vertices(dag, name=None):
    """The kernel vertices of a DAG in submission order, optionally only those named `name`."""
    vs = [v for v in dag["vertices"] if v["kind"] == "kernel" and (name is None or
                                                                    v["name"] == name)]
    return sorted(vs, key=lambda v: v["id"])

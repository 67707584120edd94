"""Chunked outputs from Python: a signature "out(chunks=blocks) float *y" lets a copy of y to
another device or the host start chunk by chunk while the kernel still runs; values are the
same as without, and the DAG shows the parts."""

import numpy as np
import pytest

import polygpu as pg

SRC = r"""
extern "C" __global__ void produce(float *y, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  float v = (float)i; for (int r = 0; r < reps; r++) v = v * 0.5f + (float)i * 0.5f;
  y[i] = v + 1.0f; }
"""
N, T = 64 * 1024, 128


def chunk_parts(rt):
    return [v for v in rt.dag()["vertices"] if v["kind"] == "copy" and " chunk " in v["name"]]


@pytest.mark.parametrize("chunk_bytes", [None, "16K", 1])
def test_host_read_in_chunks(chunk_bytes):
    opts = {} if chunk_bytes is None else {"chunk_bytes": chunk_bytes}
    with pg.Runtime(devices="host:1", **opts) as rt:
        k = rt.kernel(SRC, "produce", signature="out(chunks=blocks) float *y, int n, int reps")
        assert k.params[0]["chunk_per_thread"] == 1
        y = rt.array("float32", N)
        k(N // T, T)(y, N, 4000)
        y.prefetch("host")
        np.testing.assert_array_equal(y.to_numpy(), np.arange(N, dtype=np.float32) + 1)
        parts = chunk_parts(rt)
        assert len(parts) >= 1
        if chunk_bytes == "16K":
            assert len(parts) == N * 4 // (16 * 1024)
        assert sum(p["bytes"] for p in parts) == N * 4


def test_bad_chunk_declarations():
    with pg.Runtime(devices="host:1") as rt:
        with pytest.raises(pg.ArgumentError, match="chunks=blocks"):
            rt.kernel(SRC, "produce", signature="out(chunks=rows) float *y, int n, int reps")
        with pytest.raises(pg.ArgumentError, match="pointers only"):
            rt.kernel(SRC, "produce", signature="out float *y, out(chunks=blocks) int n, int reps")
        # still usable
        k = rt.kernel(SRC, "produce", signature="out(chunks=blocks*1) float *y, int n, int reps")
        y = rt.array("float32", N)
        k(N // T, T)(y, N, 0)
        assert y[5] == 6.0
    with pytest.raises(pg.ArgumentError, match="chunk_bytes"):
        pg.Runtime(devices="host:1", chunk_bytes=0)

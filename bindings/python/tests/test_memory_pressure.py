"""device_memory_limit: a working set three times the limit gives the serial result, and a
launch whose own arguments do not fit raises OutOfMemoryError naming the sizes."""

import numpy as np
import pytest

import polygpu as pg

MIB = 1 << 20

MIX = r"""
extern "C" __global__ void mix3(unsigned *y, const unsigned *a, const unsigned *b,
                                unsigned k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] * 3u + (a[i] ^ b[i]) + k; }
"""


@pytest.mark.parametrize("limit", [4 * MIB, "4M"])
def test_working_set_three_times_the_limit(limit):
    n = MIB // 4
    ref = [np.arange(n, dtype=np.uint32) + np.uint32(j * 7919) for j in range(12)]
    with pg.Runtime(devices="host:2", device_memory_limit=limit) as rt:
        k = rt.kernel(MIX, "mix3")
        x = [rt.asarray(r) for r in ref]
        for p in range(3):
            for j in range(12):
                yi, ai, bi = (j + 1) % 12, j, (j + 5) % 12
                kv = p * 100 + j
                k((n + 255) // 256, 256)(x[yi], x[ai], x[bi], kv, n)
                ref[yi] = ref[yi] * np.uint32(3) + (ref[ai] ^ ref[bi]) + np.uint32(kv)
        for j in range(12):
            assert np.array_equal(x[j].to_numpy(), ref[j]), f"array {j}"
        # 36 launches over 12 MiB under 4 MiB per device: arrays went back and forth.
        assert rt.stats()["bytes_moved"] > 3 * 12 * MIB


def test_arguments_larger_than_the_limit():
    n = 3 * MIB // 4
    with pg.Runtime(devices="host:1", device_memory_limit="4M") as rt:
        k = rt.kernel(MIX, "mix3")
        a, b, c = (rt.array("uint32", n) for _ in range(3))
        with pytest.raises(pg.OutOfMemoryError, match="9437184 bytes together") as e:
            k((n + 255) // 256, 256)(a, b, c, 1, n)
        assert "3145728" in str(e.value) and "4194304" in str(e.value)
        small = [rt.array("uint32", MIB // 4) for _ in range(3)]
        k(MIB // 1024, 256)(*small, 5, MIB // 4)  # the runtime goes on
        assert small[0][0] == 5 and a[0] == 0


@pytest.mark.parametrize("value", ["lots", "-1", "0.5", "4X"])
def test_bad_limit(value):
    with pytest.raises(pg.ArgumentError, match="device_memory_limit"):
        pg.Runtime(devices="host:1", device_memory_limit=value)

"""numpy_interop.py: NumPy in and out — copies, zero-copy views, and in-place host edits.

    PYTHONPATH=build/bindings/python python3 examples/python/numpy_interop.py

Devices come from PG_DEVICES ("cuda", "host:4", ...); by default every GPU, or four CPU
devices with separate memories when there is no GPU.
"""
import os

import numpy as np

import polygpu as pg

SRC = r"""
extern "C" __global__ void smooth(float *y, const float *x, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  float s = x[r * cols + c]; int k = 1;
  if (c > 0) { s += x[r * cols + c - 1]; k++; }
  if (c + 1 < cols) { s += x[r * cols + c + 1]; k++; }
  y[r * cols + c] = s / k; }
"""

try:
    rt = pg.Runtime(devices=os.environ.get("PG_DEVICES", "cuda"))
except pg.DeviceError:
    rt = pg.Runtime(devices="host:4")  # no GPU: four CPU devices
with rt:
    for d in rt.devices:
        print("device %(id)d: %(name)s (%(kind)s)" % d)
    smooth = rt.kernel(SRC, "smooth")
    image = np.random.default_rng(0).random((64, 100), dtype=np.float32)
    x = rt.asarray(image)  # a copy: float32, shape (64, 100) from the NumPy array
    y = rt.array(np.float32, x.shape)
    grid, block = ((100 + 31) // 32, (64 + 7) // 8), (32, 8)
    smooth(grid, block)(y, x, 64, 100)

    print("row 0 of the result:", y[0, :5])  # one host read of five elements
    print("every 10th column of row 3:", y[3, ::10])
    with memoryview(y) as view:  # zero-copy, read-only: y stays on the host while it lives
        print("as a memoryview:", view.format, view.shape)
    result = y.to_numpy()  # a copy
    expected = image.copy()
    expected[:, 1:-1] = (image[:, :-2] + image[:, 1:-1] + image[:, 2:]) / 3
    expected[:, 0] = (image[:, 0] + image[:, 1]) / 2
    expected[:, -1] = (image[:, -2] + image[:, -1]) / 2
    print("matches NumPy:", np.allclose(result, expected, atol=1e-6))

    v = np.asarray(x.host_view(writable=True))  # a writable zero-copy view of x
    v[:, :50] = 0.0  # edits x in place; kernels that use x wait until v is released
    del v
    smooth(grid, block)(y, x, 64, 100)
    print("left half smoothed to zero:", float(np.abs(y.to_numpy()[:, :49]).max()) == 0.0)
    print("stats:", {k: v for k, v in rt.stats().items() if k != "link_bytes"})

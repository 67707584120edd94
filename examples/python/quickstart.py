"""quickstart.py: two independent launches and one that depends on both, on every GPU.

    PYTHONPATH=build/bindings/python python3 examples/python/quickstart.py

Devices come from PG_DEVICES ("cuda", "host:4", ...); by default every GPU, or four CPU
devices with separate memories when there is no GPU.
"""
import os

import polygpu as pg

SRC = r"""
extern "C" __global__ void square(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * x[i]; }
extern "C" __global__ void diff(float *z, const float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) z[i] = a[i] - b[i]; }
"""

try:
    rt = pg.Runtime(devices=os.environ.get("PG_DEVICES", "cuda"))
except pg.DeviceError:
    rt = pg.Runtime(devices="host:4")  # no GPU: four CPU devices

# --- the ten lines
n = 1 << 20
square, diff = rt.kernel(SRC, "square"), rt.kernel(SRC, "diff")
x1 = rt.asarray([i % 100 for i in range(n)], dtype="float32")
x2 = rt.asarray([i % 10 for i in range(n)], dtype="float32")
y1, y2, z = rt.array("float32", n), rt.array("float32", n), rt.array("float32", n)
square((n + 255) // 256, 256)(y1, x1, n)  # independent of ...
square((n + 255) // 256, 256)(y2, x2, n)  # ... this one: they may run at the same time
diff((n + 255) // 256, 256)(z, y1, y2, n)  # waits for both squares, nothing else
print("z[11:15] =", z[11:15], "(expected 120 140 160 180)")
# ---

for d in rt.devices:
    print("device %(id)d: %(name)s (%(kind)s)" % d)
dag = rt.dag()
parents: dict[int, list[int]] = {}
for a, b in dag["edges"]:
    parents.setdefault(b, []).append(a)
for v in dag["vertices"]:
    where = "host" if v["device"] < 0 else "device %d stream %d" % (v["device"], v["stream"])
    print("  #%-3d %-10s %-22s %-20s after %s" % (v["id"], v["kind"], v["name"], where,
                                                 parents.get(v["id"], [])))
dot = os.environ.get("PG_DEMO_DOT", "dag.dot")
rt.export_dag(dot)  # Graphviz: dot -Tsvg dag.dot > dag.svg
print("DAG written to", dot)
s = rt.stats()
print("%d kernels, %d copies, %.1f MB moved" % (s["kernels"], s["copies"], s["bytes_moved"] / 1e6))
rt.close()

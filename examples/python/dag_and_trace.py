"""dag_and_trace.py: a small pipeline on every device, its DAG as DOT and JSON, and a timeline.

    PYTHONPATH=build/bindings/python python3 examples/python/dag_and_trace.py [outdir]

Devices come from PG_DEVICES ("cuda", "host:4", ...); by default every GPU, or four CPU
devices with separate memories when there is no GPU.

Render the DAG with `dot -Tpng dag.dot -o dag.png`; open trace.json in https://ui.perfetto.dev.
"""
import os
import sys

import polygpu as pg

SRC = r"""
extern "C" __global__ void init(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v + i % 7; }
extern "C" __global__ void axpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += a * x[i]; }
"""

out = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out, exist_ok=True)
n, parts = 1 << 18, 4
try:
    rt = pg.Runtime(devices=os.environ.get("PG_DEVICES", "cuda"), policy="minmax-transfer-time")
except pg.DeviceError:
    rt = pg.Runtime(devices="host:4", policy="minmax-transfer-time")  # no GPU: four CPU devices
with rt:
    for d in rt.devices:
        print("device %(id)d: %(name)s (%(kind)s)" % d)
    init, axpy = rt.kernel(SRC, "init"), rt.kernel(SRC, "axpy")
    grid = (n + 255) // 256
    xs = [rt.array("float32", n) for _ in range(parts)]
    for i, x in enumerate(xs):  # independent: spread over the devices
        init(grid, 256)(x, float(i), n)
    acc = rt.array("float32", n)
    for x in xs:  # each step reads one x and updates acc: a chain through acc
        axpy(grid, 256)(acc, x, 0.5, n)
    print("acc[:4] =", acc[:4])
    rt.export_dag(os.path.join(out, "dag.dot"))
    rt.export_dag(os.path.join(out, "dag.json"))
    rt.write_trace(os.path.join(out, "trace.json"))
    used = sorted({v["device"] for v in rt.dag()["vertices"] if v["kind"] == "kernel"})
    print("kernels ran on devices", used, "of", len(rt.devices))
    print("wrote", ", ".join(os.path.join(out, f) for f in ("dag.dot", "dag.json", "trace.json")))

import polygpu as pg
rt = pg.Runtime(devices="host:4")          # or "cuda" / "auto": every GPU
k = rt.kernel("""extern "C" __global__ void square(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * x[i]; }""", "square")
x1, x2 = rt.asarray(range(1000), dtype="float32"), rt.asarray([2.0] * 1000, dtype="float32")
y1, y2 = rt.array("float32", 1000), rt.array("float32", 1000)
k(4, 256)(y1, x1, 1000)                    # independent of ...
k(4, 256)(y2, x2, 1000)                    # ... this one: runs at the same time, another device
print(y1[3], y2[3])                        # waits only for the kernel that wrote y1
print([(v["name"], v["device"]) for v in rt.dag()["vertices"] if v["kind"] == "kernel"])

import polygpu as pg
rt = pg.Runtime(devices="host:4")          # or "cuda" / "auto": every GPU
saxpy = rt.kernel("""extern "C" __global__ void saxpy(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }""", "saxpy",
    signature="inout(chunks=blocks) float *y, in(chunks=blocks) const float *x, float a, int n")
x = rt.asarray(range(4096), dtype="float32")
y1, y2 = rt.asarray([1.0] * 4096, dtype="float32"), rt.array("float32", 4096)
saxpy(16, 256)(y1, x, 2.0, 4096)           # one launch, split over every device: block b
saxpy(16, 256)(y2, y1, 0.5, 4096)          # touches elements [256 b, 256 b + 256), so each
print(y1[3], y2[4095])                     # part waits only for the part that wrote its range
print(sorted(v["device"] for v in rt.dag()["vertices"] if v["name"] == "saxpy"))

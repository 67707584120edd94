"""One launch over every device: a kernel whose signature says what each thread block writes
(out(chunks=blocks), rows=blocks*R) and reads (in(chunks=blocks, halo=K)) runs as one part per
device, each over a range of the blocks, with the serial result."""

import pytest

import polygpu as pg

np = pytest.importorskip("numpy")

SAXPY = r'''extern "C" __global__ void saxpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }'''
SIG = "inout(chunks=blocks) float *y, in(chunks=blocks) const float *x, float a, int n"
BLUR = r'''extern "C" __global__ void blur(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  float l = i > 0 ? x[i - 1] : 0.0f, r = i + 1 < n ? x[i + 1] : 0.0f;
  y[i] = 0.25f * l + 0.5f * x[i] + 0.25f * r; }'''


def kernel_devices(rt, name):
    return sorted({v["device"] for v in rt.dag()["vertices"]
                   if v["kind"] == "kernel" and v["name"] == name})


def test_one_launch_runs_on_every_device():
    n = 1 << 16
    with pg.Runtime(devices="host:4") as rt:
        k = rt.kernel(SAXPY, "saxpy", signature=SIG)
        x = rt.asarray(np.arange(n, dtype=np.float32))
        y = rt.asarray(np.ones(n, dtype=np.float32))
        k(n // 256, 256)(y, x, 2.0, n)
        assert (y.to_numpy() == 2.0 * np.arange(n, dtype=np.float32) + 1).all()
        assert kernel_devices(rt, "saxpy") == [0, 1, 2, 3]
        parts = sorted((v["part"], v["parts"]) for v in rt.dag()["vertices"]
                       if v["name"] == "saxpy")
        assert parts == [(1, 4), (2, 4), (3, 4), (4, 4)]  # one call, four parts


def test_a_stencil_sweep_moves_only_halos():
    n = 4096
    host = (np.arange(n) % 31).astype(np.float32)
    ref_x, ref_y = host.copy(), np.zeros(n, np.float32)
    for _ in range(4):  # the serial result
        for src, dst in ((ref_x, ref_y), (ref_y, ref_x)):
            left = np.concatenate(([0.0], src[:-1])).astype(np.float32)
            right = np.concatenate((src[1:], [0.0])).astype(np.float32)
            dst[:] = np.float32(0.25) * left + np.float32(0.5) * src + np.float32(0.25) * right
    with pg.Runtime(devices="host:4") as rt:
        k = rt.kernel(BLUR, "blur",
                      signature="out(chunks=blocks) float *y, in(chunks=blocks, halo=1) "
                                "const float *x, int n")
        x, y = rt.asarray(host), rt.array("float32", n)
        k(n // 128, 128)(y, x, n)
        k(n // 128, 128)(x, y, n)
        rt.sync()
        before = rt.stats()["bytes_moved"]
        for _ in range(3):
            k(n // 128, 128)(y, x, n)
            k(n // 128, 128)(x, y, n)
        rt.sync()
        assert rt.stats()["bytes_moved"] - before == 6 * 6 * 4  # 6 sweeps, 3 edges x 2 ways
        assert np.allclose(x.to_numpy(), ref_x, rtol=0, atol=1e-6)


def test_split_modes_and_errors():
    with pg.Runtime(devices="host:2", split="off") as rt:
        k = rt.kernel(SAXPY, "saxpy", signature=SIG)
        x, y = rt.asarray(np.ones(1024, np.float32)), rt.array("float32", 1024)
        k(4, 256)(y, x, 1.0, 1024)
        rt.sync()
        assert len(kernel_devices(rt, "saxpy")) == 1  # the runtime's option: off
        k2 = rt.kernel(SAXPY, "saxpy", signature=SIG, split="on")  # per kernel: on
        k2(4, 256)(y, x, 1.0, 1024)
        assert y[1000] == 2.0
        with pytest.raises(pg.ArgumentError, match="parameter 1"):
            rt.kernel(SAXPY, "saxpy", split="on")  # no declared ranges: cannot split
        with pytest.raises(pg.ArgumentError, match="expected auto, on, off"):
            rt.kernel(SAXPY, "saxpy", signature=SIG, split="sometimes")
        with pytest.raises(pg.ArgumentError, match="halo applies to inputs only"):
            rt.kernel(SAXPY, "saxpy",
                      signature="out(chunks=blocks, halo=1) float *y, const float *x, float a, "
                                "int n")
        assert y[0] == 2.0  # the runtime is still usable

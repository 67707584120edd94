"""GPUs and CPU devices in one runtime (simulated GPUs beside host:2; the CUDA half runs in the
C suite over the driver's test double): each device's class and backend, values carried between
the classes both ways, where= keeping each kernel to its class under every policy, and
where="gpu" without a GPU failing at creation, naming the devices there are."""

import pytest

import polygpu as pg

np = pytest.importorskip("numpy")

MIXED = "sim:h200x2-nv18,host_time=0,host:2"
SRC = r'''extern "C" __global__ void fill(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
extern "C" __global__ void add1(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }'''
N = 1024
POLICIES = ["earliest-finish", "round-robin", "stream-aware", "min-transfer-size",
            "minmax-transfer-time", "min-transfer-time", "min-finish-time"]


def kernel_devices(rt, name):
    return [v["device"] for v in rt.dag()["vertices"]
            if v["kind"] == "kernel" and v["name"] == name]


def test_devices_say_their_class_and_backend():
    with pg.Runtime(devices=MIXED) as rt:
        d = rt.devices
        assert [x["class"] for x in d] == ["gpu", "gpu", "cpu", "cpu"]
        assert [x["backend"] for x in d] == ["sim", "sim", "host", "host"]
        assert [x["kind"] for x in d] == ["cuda", "cuda", "cpu", "cpu"]


def test_values_cross_classes_both_ways():
    with pg.Runtime(devices=MIXED, policy="round-robin") as rt:
        fill = rt.kernel(SRC, "fill", where="cpu")
        on_gpu = rt.kernel(SRC, "add1", where="gpu")
        on_cpu = rt.kernel(SRC, "add1", where="cpu")
        a, b, c, e = (rt.array("float32", N) for _ in range(4))
        fill(N // 256, 256)(a, 3.0, N)
        on_gpu(N // 256, 256)(b, a, N)    # CPU device -> GPU
        on_cpu(N // 256, 256)(c, b, N)    # GPU -> CPU device
        on_gpu(N // 256, 256)(e, c, N)
        assert (e.to_numpy() == 6.0).all()
        assert (c.to_numpy() == 5.0).all()
        adds = kernel_devices(rt, "add1")
        assert adds[0] < 2 and adds[1] >= 2 and adds[2] < 2, adds


@pytest.mark.parametrize("policy", POLICIES)
def test_where_holds_under_every_policy(policy):
    with pg.Runtime(devices=MIXED, policy=policy) as rt:
        x = rt.asarray(np.full(N, 1.5, np.float32))
        for where, ok in (("gpu", {0, 1}), ("cpu", {2, 3}), ("any", {0, 1, 2, 3})):
            k = rt.kernel(SRC, "add1", where=where)
            ys = [rt.array("float32", N) for _ in range(6)]
            before = len(kernel_devices(rt, "add1"))
            for y in ys:
                k(N // 256, 256)(y, x, N)
            for y in ys:
                assert (y.to_numpy() == 2.5).all()
            got = set(kernel_devices(rt, "add1")[before:])
            assert got <= ok, (where, got)


def test_where_gpu_without_a_gpu_names_the_devices():
    with pg.Runtime(devices="host:2") as rt:
        with pytest.raises(pg.ArgumentError, match=r"no GPU; its devices are 0 \(CPU device"):
            rt.kernel(SRC, "fill", where="gpu")
        with pytest.raises(pg.ArgumentError, match="expected any, gpu or cpu"):
            rt.kernel(SRC, "fill", where="tpu")
        y = rt.array("float32", N)
        rt.kernel(SRC, "fill", where="cpu")(N // 256, 256)(y, 7.0, N)  # still usable
        assert (y.to_numpy() == 7.0).all()


def test_default_kernel_takes_where():
    assert "where" in pg.kernel.__code__.co_varnames

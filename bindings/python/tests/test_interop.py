"""__cuda_array_interface__ both ways: CuPy / PyTorch take polygpu arrays in place on the GPU,
rt.asarray takes theirs device to device. The GPU cases run under tests/gpu/run.sh
(PG_DEVICES=cuda, CuPy and PyTorch installed there); on CPU devices the interface is absent."""

import os

import numpy as np
import pytest

import polygpu as pg
from conftest import N

ON_GPU = os.environ.get("PG_DEVICES", "").startswith("cuda")


class FakeCudaArray:
    """An object that claims to be a CUDA array (never dereferenced by these tests)."""

    def __init__(self, **cai):
        base = {"shape": (4,), "typestr": "<f4", "data": (0x1000, False), "version": 3,
                "strides": None, "stream": None}
        base.update(cai)
        self.__cuda_array_interface__ = base


@pytest.mark.skipif(ON_GPU, reason="CPU-device behaviour")
def test_absent_on_cpu_devices(rt):
    a = rt.array("float32", 4)
    assert not hasattr(a, "__cuda_array_interface__")
    with pytest.raises(pg.Error, match="GPU"):
        rt.asarray(FakeCudaArray())
    a[0] = 1.5  # the runtime is still usable
    assert a[0] == 1.5


def test_bad_interfaces_are_argument_errors(rt):
    with pytest.raises(pg.ArgumentError, match="typestr"):
        rt.asarray(FakeCudaArray(typestr="<c8"))
    with pytest.raises(pg.ArgumentError, match="non-contiguous"):
        rt.asarray(FakeCudaArray(shape=(4, 4), strides=(4, 16)))
    with pytest.raises(pg.ArgumentError, match="dimensions"):
        rt.asarray(FakeCudaArray(shape=(1, 1, 1, 1, 1)))
    with pytest.raises(pg.ArgumentError, match="dtype"):
        rt.asarray(FakeCudaArray(), dtype="float64")
    with pytest.raises(pg.ArgumentError):
        rt.asarray(FakeCudaArray(data=None))


gpu = pytest.mark.skipif(not ON_GPU, reason="needs PG_DEVICES=cuda (tests/gpu/run.sh)")


def host_to_device_bytes(rt):
    return sum(b for (s, d), b in rt.stats()["link_bytes"].items() if s == "host" and d != "host")


@gpu
def test_cupy_uses_polygpu_arrays_in_place(rt):
    cp = pytest.importorskip("cupy")
    x = rt.asarray(np.arange(N, dtype=np.float32))
    k = rt.kernel(r"""extern "C" __global__ void twice(float *y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] *= 2; }""", "twice")
    k((N + 255) // 256, 256)(x, N)  # x now valid only on its GPU
    cai = x.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (N,) and cai["typestr"] == "<f4"
    assert cai["stream"] != 0
    c = cp.asarray(x)  # no copy: CuPy sees polygpu's device memory
    assert c.data.ptr == cai["data"][0]
    cp.cuda.get_current_stream().synchronize()
    assert np.array_equal(cp.asnumpy(c), 2 * np.arange(N, dtype=np.float32))
    c += 1  # CuPy writes in place ...
    cp.cuda.get_current_stream().synchronize()
    assert x[5] == 11.0  # ... and polygpu reads the GPU copy back


@gpu
def test_asarray_from_cupy_stays_on_the_gpu(rt):
    cp = pytest.importorskip("cupy")
    src = cp.arange(N, dtype=cp.float32) * 3
    before = host_to_device_bytes(rt)
    y = rt.asarray(src)  # device to device, after CuPy's stream
    assert y.shape == (N,) and y.dtype_name == "float32"
    z = rt.array("float32", N)
    k = rt.kernel(r"""extern "C" __global__ void add1(float *z, const float *y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) z[i] = y[i] + 1; }""", "add1")
    k((N + 255) // 256, 256)(z, y, N)
    assert z[10] == 31.0
    assert host_to_device_bytes(rt) == before  # nothing went through the host
    dag = rt.dag()
    assert any(v["name"].startswith("device_write") for v in dag["vertices"])


@gpu
def test_torch_round_trip(rt):
    torch = pytest.importorskip("torch")
    t = torch.arange(N, dtype=torch.float32, device="cuda:0")
    torch.cuda.synchronize()
    a = rt.asarray(t)
    assert a[N - 1] == float(N - 1)
    back = torch.as_tensor(a, device="cuda:0")  # through __cuda_array_interface__
    torch.cuda.synchronize()
    assert torch.equal(back, t)

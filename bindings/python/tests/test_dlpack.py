"""DLPack: DeviceArray.__dlpack__ / __dlpack_device__ (the host copy, zero-copy) and
Runtime.from_dlpack / polygpu.from_dlpack (any DLPack producer)."""

import gc

import pytest

import polygpu as pg

np = pytest.importorskip("numpy", reason="the DLPack tests read through NumPy")

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
          "float64"]


@pytest.fixture
def rt():
    with pg.Runtime(devices="host:2") as r:
        yield r


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_reads_a_polygpu_array(rt, dtype):
    host = (np.arange(24) % 100).astype(dtype).reshape(2, 3, 4)
    a = rt.asarray(host)
    assert a.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(a)
    assert b.dtype == np.dtype(dtype) and b.shape == (2, 3, 4)
    assert (b == host).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_polygpu_reads_a_dlpack_producer(rt, dtype):
    host = (np.arange(10) * 3 % 100).astype(dtype)
    a = rt.from_dlpack(host)
    assert a.dtype == dtype and a.shape == (10,)
    assert a.tolist() == host.tolist()
    b = pg.from_dlpack(host)  # the default runtime
    assert b.tolist() == host.tolist()


def test_round_trip_and_a_kernel_between(rt):
    k = rt.kernel('extern "C" __global__ void twice(float *y, int n) {'
                  ' int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] *= 2.0f; }',
                  "twice")
    a = rt.asarray(np.ones(100, dtype="float32"))
    view = np.from_dlpack(a)
    assert view[7] == 1.0
    del view
    gc.collect()
    k(1, 128)(a, 100)  # the view was dropped: the kernel may write
    c = rt.from_dlpack(a)  # a polygpu array is a DLPack producer too
    assert c.tolist() == [2.0] * 100


def test_a_kernel_write_waits_for_the_consumer(rt):
    k = rt.kernel('extern "C" __global__ void fill(float *y, float v, int n) {'
                  ' int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }', "fill")
    a = rt.asarray(np.zeros(8, dtype="float32"))
    view = np.from_dlpack(a)
    k(1, 32)(a, 5.0, 8)  # held back while the consumer reads
    assert view[3] == 0.0  # the consumer's data did not change under it
    del view
    gc.collect()
    assert a[3] == 5.0


def test_bad_requests(rt):
    a = rt.array("float32", 4)
    with pytest.raises(pg.ArgumentError, match="stream"):
        a.__dlpack__(stream=5)
    with pytest.raises(BufferError, match="kDLCPU"):
        a.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match="copy=True"):
        a.__dlpack__(copy=True)
    with pytest.raises(pg.ArgumentError, match="not a DLPack producer"):
        rt.from_dlpack([1, 2, 3])
    a.free()
    with pytest.raises(pg.StateError):
        a.__dlpack__()


def test_an_unconsumed_capsule_releases_its_view(rt):
    a = rt.asarray(np.arange(4, dtype="float32"))
    cap = a.__dlpack__()
    del cap  # never consumed: the capsule's destructor ends the host access
    gc.collect()
    a[0] = 9.0  # a write needs no open read view
    assert a[0] == 9.0


def test_a_held_tensor_keeps_free_and_close_from_pulling_the_memory():
    rt = pg.Runtime(devices="host:1")
    a = rt.asarray(np.arange(4, dtype="float32"))
    view = np.from_dlpack(a)
    with pytest.raises(pg.StateError, match="view"):
        a.free()
    with pytest.raises(pg.StateError, match="view"):
        rt.close()
    assert view.sum() == 6.0  # still readable: nothing was freed under it
    del view
    gc.collect()
    rt.close()


def gpu_runtime():
    """A runtime on the GPUs, or a skip where there are none (CPU devices in CI)."""
    r = pg.Runtime()
    if not r.devices or r.devices[0]["kind"] != "cuda":
        r.close()
        pytest.skip("needs GPUs (PG_DEVICES=cuda): the device copy's DLPack export")
    return r


class DLPackOnly:
    """A CUDA producer that speaks only DLPack (as JAX does): no __cuda_array_interface__."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, **kw):
        return self.x.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


def test_gpu_export_and_import_with_cupy():
    cp = pytest.importorskip("cupy")
    rt = gpu_runtime()
    try:
        a = rt.asarray(np.arange(1000, dtype=np.float32))
        assert a.__dlpack_device__() == (2, 0)  # the device copy, on GPU 0
        c = cp.from_dlpack(a)  # ordered after polygpu's copy to the GPU on CuPy's stream
        assert (cp.asnumpy(c) == np.arange(1000, dtype=np.float32)).all()
        c *= 2  # the consumer may write: its copy is the current one
        cp.cuda.Stream.null.synchronize()
        assert a[999] == 1998.0
        b = rt.from_dlpack(DLPackOnly(cp.arange(10, dtype=cp.int32) * 3))  # DLPack only
        assert b.tolist() == [3 * i for i in range(10)]
        assert (2, 0) == b.__dlpack_device__()
        class HostCopy:  # a consumer asking for the host copy (dl_device=(kDLCPU, 0))
            def __dlpack__(self, **kw):
                return a.__dlpack__(dl_device=(1, 0))

            def __dlpack_device__(self):
                return (1, 0)

        h = np.from_dlpack(HostCopy())
        assert h[999] == 1998.0
        del h  # the host view it holds
        gc.collect()
    finally:
        rt.close()


def test_gpu_export_to_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    rt = gpu_runtime()
    try:
        a = rt.asarray(np.arange(64, dtype=np.float32))
        t = torch.from_dlpack(a)
        assert t.is_cuda and float(t[63]) == 63.0
        b = rt.from_dlpack(torch.arange(8, dtype=torch.float32, device="cuda") + 1)
        assert b.tolist() == [float(i + 1) for i in range(8)]
    finally:
        rt.close()


def test_asarray_takes_a_dlpack_only_producer(rt):
    class Producer:  # no buffer protocol, no __cuda_array_interface__: DLPack only (as JAX)
        def __init__(self, x):
            self.x = x

        def __dlpack__(self, **kw):
            return self.x.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.x.__dlpack_device__()

    host = np.arange(12, dtype=np.int32).reshape(3, 4)
    a = rt.asarray(Producer(host))
    assert a.shape == (3, 4) and a.dtype == "int32" and (a.to_numpy() == host).all()
    b = pg.asarray(Producer(host))  # the default runtime
    assert b.tolist() == host.tolist()


SCALE = ('extern "C" __global__ void scale(float *y, float s, int n) {'
         ' int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] *= s; }')


def test_from_dlpack_shares_a_numpy_arrays_memory(rt):
    """Zero-copy by default, as the array API's from_dlpack: kernels (on any CPU device) write
    the producer's memory, which holds every write after a sync."""
    host = np.arange(1000, dtype=np.float32)
    a = rt.from_dlpack(host)
    k = rt.kernel(SCALE, "scale")
    for _ in range(3):
        k(4, 256)(a, 2.0, 1000)
    rt.sync()
    assert host[10] == 80.0 and host[999] == 999.0 * 8
    a[0:2] = np.array([7.0, 8.0], dtype=np.float32)  # a host write goes to the memory itself
    assert host[:2].tolist() == [7.0, 8.0]
    host[5] = -1.0  # and the producer's own writes are what the runtime reads (no copy kept)
    assert a[5] == -1.0


def test_from_dlpack_writes_back_at_free_and_keeps_the_producer_alive(rt):
    k = rt.kernel(SCALE, "scale")
    host = np.ones(256, dtype=np.float32)
    a = rt.from_dlpack(host)
    del host  # the runtime keeps the producer alive through its DLPack tensor
    gc.collect()
    k(1, 256)(a, 3.0, 256)
    b = np.from_dlpack(a)
    assert b[0] == 3.0 and b[255] == 3.0
    del b
    gc.collect()
    mem = np.zeros(64, dtype=np.float64)
    c = rt.from_dlpack(mem)
    rt.kernel('extern "C" __global__ void fill(double *y, double v, int n) {'
              ' int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }',
              "fill")(1, 64)(c, 4.5, 64)
    c.free()  # the last value is written back before the memory is let go
    rt.sync()
    assert (mem == 4.5).all()


def test_from_dlpack_copy_option(rt):
    host = np.arange(8, dtype=np.float32)
    k = rt.kernel(SCALE, "scale")
    copied = rt.from_dlpack(host, copy=True)
    k(1, 32)(copied, 2.0, 8)
    rt.sync()
    assert host[3] == 3.0 and copied[3] == 6.0  # a copy: the producer is not written
    strided = np.arange(16, dtype=np.float32)[::2]
    with pytest.raises(BufferError, match="C-contiguous"):
        rt.from_dlpack(strided, copy=False)
    assert rt.from_dlpack(strided).tolist() == strided.tolist()  # copy=None: copies instead
    with pytest.raises(BufferError, match="conversion"):
        rt.from_dlpack(host, dtype="float64", copy=False)
    assert rt.from_dlpack(host, dtype="float64").dtype == "float64"
    readonly = np.arange(4, dtype=np.int32)
    readonly.flags.writeable = False  # NumPy refuses to export it: a copy then
    assert rt.from_dlpack(readonly).tolist() == [0, 1, 2, 3]
    with pytest.raises(BufferError):
        rt.from_dlpack(readonly, copy=False)
    with pytest.raises(TypeError, match="copy"):
        rt.from_dlpack(host, copy="yes")
    a = rt.asarray(host)
    with pytest.raises(BufferError, match="read-only"):
        rt.from_dlpack(a, copy=False)  # a polygpu array's export is read-only: never shared
    assert rt.from_dlpack(a).tolist() == host.tolist()


def test_gpu_from_dlpack_shares_torch_and_cupy_memory():
    """On GPUs the runtime adopts the producer's device buffer: a kernel's writes reach the
    tensor after a sync (zero-copy); copy=True leaves the tensor as it was."""
    rt = gpu_runtime()
    try:
        k = rt.kernel(SCALE, "scale")
        tested = 0
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None and torch.cuda.is_available():
            t = torch.arange(1024, dtype=torch.float32, device="cuda")
            a = rt.from_dlpack(t)
            assert a.__dlpack_device__() == (2, t.device.index or 0)
            k(4, 256)(a, 3.0, 1024)
            rt.sync()
            torch.cuda.synchronize()
            assert float(t[1023]) == 3069.0 and float(t[1]) == 3.0
            t2 = torch.ones(16, device="cuda")
            c = rt.from_dlpack(t2, copy=True)
            k(1, 32)(c, 5.0, 16)
            rt.sync()
            assert float(t2[0]) == 1.0 and c[0] == 5.0
            tested += 1
        try:
            import cupy as cp
        except ImportError:
            cp = None
        if cp is not None:
            x = cp.full(512, 2.0, dtype=cp.float32)
            b = rt.from_dlpack(x)
            k(2, 256)(b, 4.0, 512)
            rt.sync()
            assert float(x[511]) == 8.0
            assert b[0] == 8.0  # a host read of the adopted copy
            b.free()
            x[0] = 1.0  # the producer keeps its memory after the array is gone
            assert float(x[0]) == 1.0
            tested += 1
        if not tested:
            pytest.skip("needs PyTorch with CUDA or CuPy")
    finally:
        rt.close()

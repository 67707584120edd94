"""Bad input through Python fails at the call that got it, with a message naming what is wrong:
malformed kernel sources, impossible sizes, option values that used to pass silently."""

import math
import os
import subprocess
import sys
import textwrap

import pytest

import polygpu as pg
from conftest import SRC


@pytest.mark.parametrize("name", ["float32\0junk", "float32\0", "\0float32"])
def test_dtype_with_nul_is_refused(rt, name):
    with pytest.raises(ValueError, match="NUL") as e:
        rt.array(name, 4)
    assert repr(name) in str(e.value)
    with pytest.raises(ValueError, match="NUL"):
        pg.dtype_size(name)
    with pytest.raises(ValueError, match="NUL"):
        rt.asarray([1, 2], dtype=name)


@pytest.mark.parametrize("devices", ["host:", "host:0", "host:-1", "host:abc", "host:2x",
                                     "cuda:", "cuda:0,,1"])
def test_bad_device_lists(devices):
    with pytest.raises(pg.ArgumentError, match="host:N") as e:
        pg.Runtime(devices=devices)
    assert repr(devices) in str(e.value) and "cuda:0,2" in str(e.value)


@pytest.mark.parametrize("value", [math.nan, -0.5, -1.0, 1.5, math.inf])
def test_exploration_threshold_out_of_range(value):
    with pytest.raises(pg.ArgumentError, match=r"exploration_threshold.*\[0, 1\]"):
        pg.Runtime(devices="host:1", exploration_threshold=value)


def test_impossible_shared_mem(rt):
    k = rt.kernel(SRC, "fill")
    y = rt.array("float32", 16)
    with pytest.raises(pg.ArgumentError, match="per block") as e:
        k(1, 16, 2 ** 63 - 1)(y, 1.0, 16)
    # The device's own limit is named (CPU devices: 64 MiB; an H100: 232448 bytes).
    assert str(rt.devices[0]["max_shared_memory_per_block"]) in str(e.value)
    k(1, 16, 1024)(y, 1.0, 16)
    assert y[3] == 1.0


# The scanner's findings lead the CPU compiler's message; on GPUs NVRTC's own message says the
# same ("expected a '}'", "missing closing quote"), so these run on a CPU device.
@pytest.fixture
def cpu():
    with pg.Runtime(devices="host:1") as r:
        yield r


def test_unbalanced_braces_name_the_fault(cpu):
    rt = cpu
    with pytest.raises(pg.CompileError, match="line 1, column 29") as e:
        rt.kernel("__global__ void k(float *y) {\n  if (y) {\n    y[0] = 1;\n}\n", "k")
    assert "never closed" in str(e.value) and "signature" not in str(e.value)


def test_unterminated_string_names_the_fault(cpu):
    rt = cpu
    with pytest.raises(pg.CompileError, match="line 2") as e:
        rt.kernel('__global__ void k(float *y) {\n  const char *s = "}\n', "k")
    assert "string" in str(e.value) and "signature" not in str(e.value)


def test_many_open_parentheses(rt):
    with pytest.raises(pg.CompileError, match="'\\(' is never closed"):
        rt.kernel("(" * 100000, "k")


def test_overloaded_kernel_is_ambiguous(rt):
    src = ("__global__ void k(float *y) { y[0] = 1; }\n"
           "__global__ void k(double *y, int n) { y[0] = n; }\n")
    with pytest.raises(pg.ArgumentError, match="ambiguous") as e:
        rt.kernel(src, "k")
    assert "k(float *y)" in str(e.value) and "k(double *y, int n)" in str(e.value)


def test_signature_picks_an_overload_on_cpu_devices(cpu):
    """On GPUs NVRTC cannot name one overload of a kernel: give overloads different names."""
    rt = cpu
    src = ("__global__ void k(float *y) { y[0] = 1; }\n"
           "__global__ void k(double *y, int n) { y[0] = n; }\n")
    k = rt.kernel(src, "k", signature="double *y, int n")
    y = rt.array("float64", 2)
    k(1, 1)(y, 5)
    assert y[0] == 5.0


def test_unwritable_trace_fails_at_creation(tmp_path):
    path = str(tmp_path / "missing" / "trace.json")
    with pytest.raises(pg.FileError, match="missing/trace.json") as e:
        pg.Runtime(devices="host:1", trace=path)
    assert os.strerror(2) in str(e.value)
    good = str(tmp_path / "trace.json")
    rt = pg.Runtime(devices="host:1", trace=good)
    assert not os.path.exists(good)  # the check leaves nothing behind
    rt.close()
    assert os.path.getsize(good) > 0


def test_interconnect_device_file_is_refused():
    with pytest.raises(pg.FileError, match="regular file"):
        pg.Runtime(devices="host:1", interconnect="/dev/zero")


def test_array_over_the_address_space_limit():
    # In a child: the limit must not bind this test process.
    code = textwrap.dedent("""
        import resource, polygpu as pg
        used = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status")
                    if l.startswith("VmSize:"))
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        resource.setrlimit(resource.RLIMIT_AS, (used + (2 << 30), hard))  # no room for 4 GiB
        rt = pg.Runtime(devices="host:1")
        try:
            rt.array("float32", 1 << 30)
        except pg.OutOfMemoryError as e:
            assert "4294967296" in str(e) and "address-space limit" in str(e), e
            print("refused")
        small = rt.array("float32", 1000)
        small[0] = 2.0
        assert small[0] == 2.0
        rt.close()
    """)
    # Two threads per CPU device whatever the machine: each thread's malloc arena takes address
    # space, and 2 GiB of headroom is not room for the arenas of 32 cores.
    env = dict(os.environ, PG_HOST_THREADS="2")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "refused"

"""Several processes share a node (issue 39): two Python processes see each other in
pg.node_status(), the second places its independent calls around the first's held kernels,
and a kill -9 of the first is reclaimed (gone from the status, with its memory). Each test uses
a node folder of its own (PG_NODE_DIR) and the option share="node" (the suite runs with
PG_SHARE=off so that parallel tests do not steer each other)."""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import polygpu as pg

HOLDER = textwrap.dedent(
    r'''
    import sys, numpy as np, polygpu as pg
    SRC = r"""
    extern "C" __global__ void hold(float *y, int n, unsigned long long flag) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i == 0) while (*(volatile const int *)flag == 0) {
        struct timespec t = {0, 200000}; nanosleep(&t, 0); }
      if (i < n) y[i] = 1.0f; }
    """
    flag = np.zeros(1, np.int32)
    rt = pg.Runtime(devices="host:2", share="node")
    k = rt.kernel(SRC, "hold")
    ys = [rt.array("float32", 1 << 20) for _ in range(2)]
    for y in ys:
        k(4096, 256)(y, 1 << 20, flag.ctypes.data)
    print("ready", flush=True)
    sys.stdin.readline()
    flag[0] = 1
    rt.sync()
    rt.close()
    '''
)

ADD = r"""
extern "C" __global__ void add(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }
"""


@pytest.fixture
def node_dir(tmp_path, monkeypatch):
    d = tmp_path / "node"
    d.mkdir()
    monkeypatch.setenv("PG_NODE_DIR", str(d))
    return d


def start_holder():
    p = subprocess.Popen(
        [sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert p.stdout.readline() == "ready\n"
    return p


def test_empty_node(node_dir):
    assert pg.node_status() == {"clients": [], "devices": []}


def test_two_processes_see_each_other_and_place_around(node_dir):
    holder = start_holder()
    try:
        with pg.Runtime(devices="host:4", share="node") as rt:
            s = pg.node_status()
            clients = {c["pid"]: c for c in s["clients"]}
            assert set(clients) == {holder.pid, os.getpid()}
            h = clients[holder.pid]
            assert h["language"] == "python" and h["devices"] == ["host:0", "host:1"]
            assert h["inflight"] == 2 and h["bytes"] == 2 * 4 * (1 << 20)
            assert clients[os.getpid()]["devices"] == ["host:%d" % d for d in range(4)]
            devs = {d["device"]: d for d in s["devices"]}
            assert devs["host:0"]["inflight"] == 1 and devs["host:3"]["inflight"] == 0
            assert sorted(devs["host:0"]["clients"]) == sorted([holder.pid, os.getpid()])
            assert set(s["clients"][0]) == {"pid", "language", "devices", "inflight", "bytes"}
            assert set(s["devices"][0]) == {"device", "inflight", "bytes", "clients"}

            k = rt.kernel(ADD, "add")
            n = 1 << 14
            ys = []
            for _ in range(2):
                x = rt.asarray(np.arange(n, dtype=np.float32))
                ys.append(rt.array("float32", n))
                k(n // 256, 256)(ys[-1], x, n)
            assert all(y[5] == 6.0 for y in ys)
            used = [v["device"] for v in rt.dag()["vertices"] if v["kind"] == "kernel"]
            # host:0 and host:1 hold the other process's kernels
            assert sorted(used) == [2, 3], used

            holder.send_signal(signal.SIGKILL)
            holder.wait()
            s = pg.node_status()
            assert [c["pid"] for c in s["clients"]] == [os.getpid()]
            assert all(d["clients"] == [os.getpid()] for d in s["devices"])
    finally:
        holder.kill()
        holder.wait()
    assert pg.node_status() == {"clients": [], "devices": []}


def test_share_off_and_bad_value(node_dir):
    with pg.Runtime(devices="host:1", share="off"):
        assert pg.node_status() == {"clients": [], "devices": []}
    with pytest.raises(pg.ArgumentError, match="unknown share 'nodes'"):
        pg.Runtime(devices="host:1", share="nodes")


HOG = textwrap.dedent(
    r'''
    import sys, polygpu as pg
    rt = pg.Runtime(devices="host:1", share="node", device_memory_limit="1M")
    k = rt.kernel("""
    extern "C" __global__ void fill(float *y, float v, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }""", "fill")
    a = rt.array("float32", 3 << 16)  # 768 KiB of the 1 MiB
    k(768, 256)(a, 2.0, 3 << 16)
    rt.sync()
    print("ready", flush=True)
    sys.stdin.readline()
    del a
    rt.sync()
    print("freed", flush=True)
    sys.stdin.readline()
    '''
)

FILL = r"""
extern "C" __global__ void fill(float *y, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }
"""


@pytest.mark.parametrize("how", ["free", "kill"])
def test_admission_waits_for_the_other_process(node_dir, how):
    import threading

    hog = subprocess.Popen(
        [sys.executable, "-c", HOG], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert hog.stdout.readline() == "ready\n"
        released = threading.Event()

        def release():
            # The launch below must still be waiting when the hog lets go.
            released.set()
            if how == "free":
                hog.stdin.write("go\n")
                hog.stdin.flush()
                assert hog.stdout.readline() == "freed\n"
            else:
                hog.kill()
                hog.wait()

        with pg.Runtime(devices="host:1", share="node", device_memory_limit="1M") as rt:
            k = rt.kernel(FILL, "fill")
            y = rt.array("float32", 1 << 17)  # 512 KiB: does not fit beside 768 KiB
            timer = threading.Timer(0.5, release)
            timer.start()
            k(512, 256)(y, 3.0, 1 << 17)  # waits for the hog's memory, then runs
            assert released.is_set()
            timer.join()
            assert y[(1 << 17) - 1] == 3.0
            big = rt.array("float32", 1 << 19)  # 2 MiB: could never fit under 1 MiB
            with pytest.raises(pg.OutOfMemoryError, match="2097152 bytes") as e:
                k(2048, 256)(big, 1.0, 1 << 19)
            assert "1048576" in str(e.value)
    finally:
        hog.kill()
        hog.wait()

"""Races between threads of one script (issue 15's findings): a read of a result whose writer
waits behind another thread's view of its input, close() while other threads read, compile or
launch, and fork() after the runtime was used. Before the fixes these gave stale values,
segmentation faults or hangs."""

import os
import sys
import threading
import time

import numpy as np
import pytest

import polygpu as pg
from conftest import SRC, grid_for


def test_read_waits_for_writer_held_behind_a_view(rt, kernels):
    n = 16
    x = rt.asarray(np.arange(n, dtype=np.float32))
    for _ in range(10):
        y = rt.array("float32", n)
        got = {}
        hv = memoryview(x.host_view(True))  # a writable view of the input, held by this thread

        def launch_and_read():
            kernels.add1(1, 16)(y, x, n)  # held back behind the view
            got["y"] = y.to_numpy()  # must wait for that kernel, not read zeros

        t = threading.Thread(target=launch_and_read)
        t.start()
        time.sleep(0.05)
        hv.release()
        t.join(60)
        assert not t.is_alive()
        np.testing.assert_array_equal(got["y"], np.arange(n, dtype=np.float32) + 1)


def test_threads_share_an_input_that_one_rewrites(rt, kernels):
    """The issue's racy form: threads launch k(y, x) and read y while one writes x's first
    elements with the values they already hold; every read must see x + 1."""
    n = 16
    x = rt.asarray(np.arange(n, dtype=np.float32))
    want = np.arange(n, dtype=np.float32) + 1
    wrong, errors = [], []

    def work(writer):
        try:
            for _ in range(100):
                y = rt.array("float32", n)
                kernels.add1(1, 16)(y, x, n)
                if writer:
                    x[0:4] = np.arange(4, dtype=np.float32)
                v = y.to_numpy()
                if not np.array_equal(v, want):
                    wrong.append(v)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i == 0,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[0]
    assert not wrong, f"{len(wrong)} stale reads, first {wrong[0]}"


def _close_while(target_factory):
    rt = pg.Runtime(devices="host:2")
    target, done = target_factory(rt)
    t = threading.Thread(target=target)
    t.start()
    time.sleep(0.05)
    rt.close()
    t.join(60)
    assert not t.is_alive()
    return done


def test_close_while_another_thread_reads():
    def factory(rt):
        a = rt.array("float32", 32 << 20)  # 128 MiB
        done = {}

        def target():
            try:
                while True:
                    a.to_numpy()
            except pg.Error as e:
                done["error"] = e

        return target, done

    done = _close_while(factory)
    assert "closed" in str(done["error"]) or "freed" in str(done["error"])


def test_close_while_another_thread_launches():
    def factory(rt):
        k = rt.kernel(SRC, "fill")
        y = rt.array("float32", 64)
        done = {"launches": 0}

        def target():
            try:
                while True:
                    k(1, 64)(y, 1.0, 64)
                    done["launches"] += 1
            except pg.Error as e:
                done["error"] = e

        return target, done

    done = _close_while(factory)
    assert isinstance(done["error"], pg.Error)


def test_close_while_another_thread_compiles(tmp_path):
    def factory(rt):
        done = {}

        def target():
            src = SRC.replace("fill(", "fill_%d(" % os.getpid())
            try:
                done["kernel"] = rt.kernel(src, "fill_%d" % os.getpid())
            except pg.Error as e:
                done["error"] = e

        return target, done

    done = _close_while(factory)
    assert "kernel" in done or isinstance(done["error"], pg.Error)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_fork_after_use(rt, kernels):
    y = rt.array("float32", 8)
    kernels.fill(1, 8)(y, 3.0, 8)
    pid = os.fork()
    if pid == 0:  # the child: any use of the inherited runtime is a clear error
        code = 0
        try:
            try:
                kernels.fill(1, 8)(y, 1.0, 8)
                code = 2
            except pg.Error as e:
                code = 0 if "fork" in str(e) else 3
            if not code:
                rt2 = pg.Runtime(devices="host:1")  # a runtime of its own works
                z = rt2.asarray(np.ones(4, dtype=np.float32))
                code = 0 if z[2] == 1.0 else 4
                rt2.close()
        except BaseException:
            code = 5
        sys.stdout.flush()
        os._exit(code)
    for _ in range(6000):
        wpid, status = os.waitpid(pid, os.WNOHANG)
        if wpid:
            break
        time.sleep(0.01)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the child hung")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert y[1] == 3.0  # the parent's runtime is untouched


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_fork_child_exits_normally(rt, kernels):
    """The child just exits (interpreter shutdown closes the inherited runtime)."""
    y = rt.array("float32", 8)
    kernels.fill(1, 8)(y, 3.0, 8)
    code = (
        "import os, sys, polygpu as pg\n"
        "rt = pg.Runtime(devices='host:2')\n"
        "k = rt.kernel(%r, 'fill')\n"
        "y = rt.array('float32', 8)\n"
        "k(1, 8)(y, 3.0, 8)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    sys.exit(0)\n"
        "_, st = os.waitpid(pid, 0)\n"
        "sys.exit(os.waitstatus_to_exitcode(st))\n" % SRC
    )
    import subprocess

    r = subprocess.run([sys.executable, "-c", code], timeout=60, env=os.environ)
    assert r.returncode == 0

"""The Python examples run and print what they promise."""

import glob
import json
import os
import subprocess
import sys

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "python")


def run(name, *args):
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_every_example_is_tested():
    names = {os.path.basename(p) for p in glob.glob(os.path.join(EXAMPLES, "*.py"))}
    assert names == {"quickstart.py", "numpy_interop.py", "dag_and_trace.py", "ranks.py"}


def test_notebooks_are_run_and_stored_clean():
    # ctest python_notebook (bindings/python/CMakeLists.txt) executes each with nbclient.
    paths = glob.glob(os.path.join(EXAMPLES, "*.ipynb"))
    assert {os.path.basename(p) for p in paths} == {"quickstart.ipynb"}
    for p in paths:
        with open(p) as f:
            nb = json.load(f)
        assert nb["nbformat"] == 4 and nb["metadata"]["kernelspec"]["name"] == "python3"
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)


def test_ranks_single_process():
    # On several ranks: ctest python_example_ranks_3 (mpirun), with the same checksum.
    assert "1 rank(s): checksum 2358108.0; rank 0 sent 0" in run("ranks.py")


def test_quickstart():
    out = run("quickstart.py")
    assert "z[11:15] = [120. 140. 160. 180.]" in out
    assert "device 0:" in out
    assert "kernel" in out and "square" in out and "diff" in out


def test_numpy_interop():
    out = run("numpy_interop.py")
    assert "matches NumPy: True" in out and "smoothed to zero: True" in out


def test_dag_and_trace(tmp_path):
    out = run("dag_and_trace.py", str(tmp_path))
    assert "acc[:4] = [3. 5. 7. 9.]" in out
    for f in ("dag.dot", "dag.json", "trace.json"):
        assert (tmp_path / f).stat().st_size > 0


"""run_notebook.py NOTEBOOK...: execute each notebook headless with nbclient (a Jupyter kernel
of this interpreter, in a temporary folder) and check that every cell ran without error and
showed what it should: the cell tagged "dag" a Graphviz SVG when `dot` is installed (else the
HTML table), the cell tagged "graph" the recording's call count and its drawing, and the cell tagged "plot" a
PNG chart when matplotlib is installed. The ctest `python_notebook` (label python) runs it on
examples/python/quickstart.ipynb; scripts/install-deps.sh installs nbclient and ipykernel.
"""

import importlib.util
import os
import shutil
import sys
import tempfile


def main(paths):
    try:
        import nbclient
        import nbformat
        from nbclient.exceptions import CellExecutionError
    except ImportError as e:
        print("run_notebook.py: %s; run scripts/install-deps.sh (Debian: apt-get install "
              "python3-nbclient python3-ipykernel; else pip install nbclient ipykernel)" % e)
        return 1
    if importlib.util.find_spec("ipykernel") is None:
        print("run_notebook.py: ipykernel is missing for %s; run scripts/install-deps.sh"
              % sys.executable)
        return 1
    failed = 0
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        ncode = sum(c.cell_type == "code" for c in nb.cells)
        with tempfile.TemporaryDirectory() as cwd:
            client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                             resources={"metadata": {"path": cwd}})
            try:
                client.execute()
            except CellExecutionError as e:
                print("%s: a cell failed:\n%s" % (path, e))
                failed += 1
                continue
        problems = check(nb)
        for p in problems:
            print("%s: %s" % (path, p))
        failed += bool(problems)
        if not problems:
            print("%s: %d code cells ran without error" % (path, ncode))
    print("%d passed, %d failed" % (len(paths) - failed, failed))
    return 1 if failed else 0


def outputs(nb, tag):
    cells = [c for c in nb.cells if tag in c.get("metadata", {}).get("tags", [])]
    return [o for c in cells for o in c.get("outputs", [])] if cells else None


def check(nb):
    problems = []
    for c in nb.cells:
        for o in c.get("outputs", []) if c.cell_type == "code" else []:
            if o.get("output_type") == "error":
                problems.append("cell error %s: %s" % (o.get("ename"), o.get("evalue")))
        if c.cell_type == "code" and c.get("execution_count") is None:
            problems.append("a code cell did not run: %r" % c.source[:60])
    dag = outputs(nb, "dag")
    if dag is not None:
        data = [o.get("data", {}) for o in dag if o.get("output_type") == "execute_result"]
        if not data:
            problems.append("the cell tagged 'dag' shows no result")
        elif shutil.which("dot"):
            if "<svg" not in data[0].get("image/svg+xml", ""):
                problems.append("the DAG was not drawn as SVG although dot is installed")
        elif "<table>" not in data[0].get("text/html", ""):
            problems.append("the DAG shows no HTML table (dot is not installed)")
    graph = outputs(nb, "graph")
    if graph is not None:
        text = "".join(o.get("text", "") for o in graph if o.get("output_type") == "stream")
        if "<polygpu.Graph of 3 calls>" not in text:
            problems.append("the recording's repr is not shown: %r" % text[:200])
        data = [o.get("data", {}) for o in graph if o.get("output_type") == "execute_result"]
        if not data or not ("<svg" in data[0].get("image/svg+xml", "")
                            or "<table>" in data[0].get("text/html", "")):
            problems.append("the recording was not drawn (SVG, or an HTML table without dot)")
    plot = outputs(nb, "plot")
    if plot is not None and importlib.util.find_spec("matplotlib") is not None:
        if not any("image/png" in o.get("data", {}) for o in plot):
            problems.append("matplotlib is installed but the timeline cell drew no PNG")
    return problems


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: run_notebook.py NOTEBOOK...")
    sys.exit(main([os.path.abspath(p) for p in sys.argv[1:]]))

"""check_sample.py: check a hand-written baseline's result (cg_mpi, jacobi_mpi) against NumPy
with the polygpu scripts' checks (workloads/cg.py, workloads/jacobi.py), and print its JSON line
with "ok" and "check" filled in.

    python3 benchmarks/mpi/check_sample.py LINE_FILE SAMPLE_FILE

LINE_FILE holds the baseline's output (its JSON line among other lines); SAMPLE_FILE what it
wrote with --sample (float64: x for CG; the checked rows and the residual for Jacobi)."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from workloads import cg, jacobi  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _dist  # noqa: E402


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        lines = [ln for ln in f if ln.startswith("{")]
    if not lines:
        sys.exit("check_sample: no JSON line in %s" % sys.argv[1])
    line = json.loads(lines[-1])
    size = (line["n"], line["iterations"])
    sample = np.fromfile(sys.argv[2], dtype=np.float64)
    mod = {"cg": cg, "jacobi": jacobi}[line["bench"]]
    if line["bench"] == "cg":
        sample = sample.astype(np.float32)
    ok, msg = mod.check(sample, _dist.reference(mod, size), size)
    line["ok"], line["check"] = bool(ok), msg
    print(json.dumps(line))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""The benchmark workloads of issue 8: the GrCUDA multi-GPU paper's VEC, B&S, ML, CG and MUL.

Each module (:mod:`vec`, :mod:`bs`, :mod:`ml`, :mod:`cg`, :mod:`mul`) has the sizes, the
polygpu version (class ``Polygpu``), the NumPy reference (``reference``) and the check
(``check``); the kernels are in ``kernels/``, shared by every version; ``cuda/`` holds the
hand-written CUDA C baselines, ``lua/`` and ``java/`` the VEC and B&S versions in those
languages, :mod:`cupy_bench` the CuPy versions. ``benchmarks/run.py`` runs them all.
"""

from . import bs, cg, ml, mul, vec

#: the workloads by their command-line names, in the paper's order
WORKLOADS = {"vec": vec, "bs": bs, "ml": ml, "cg": cg, "mul": mul}

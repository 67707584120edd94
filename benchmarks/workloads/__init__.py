"""The benchmark workloads of issue 8 -- the GrCUDA multi-GPU paper's VEC, B&S, ML, CG and MUL --
and of "Arrays in pieces": JACOBI (a stencil with halo exchange on views of one array per grid)
and CG-VIEWS, MUL-VIEWS (CG and MUL on views of one matrix and one result array).

Each module (:mod:`vec`, :mod:`bs`, :mod:`ml`, :mod:`cg`, :mod:`mul`, :mod:`jacobi`,
:mod:`cg_views`, :mod:`mul_views`) has the sizes, the polygpu version (class ``Polygpu``), the
NumPy reference (``reference``) and the check (``check``); the kernels are in ``kernels/``,
shared by every version; ``cuda/`` holds the hand-written CUDA C baselines, ``lua/`` and
``java/`` the VEC, B&S and JACOBI versions in those languages, :mod:`cupy_bench` the CuPy
versions. A variant names the workload it varies in ``BASE`` (shared references and CUDA C
baseline) and its versions in ``ONLY_VERSIONS``. ``benchmarks/run.py`` runs them all.
"""

from . import bs, cg, cg_views, jacobi, ml, mul, mul_views, vec

#: the workloads by their command-line names, the paper's order first
WORKLOADS = {"vec": vec, "bs": bs, "ml": ml, "cg": cg, "mul": mul, "jacobi": jacobi,
             "cg-views": cg_views, "mul-views": mul_views}

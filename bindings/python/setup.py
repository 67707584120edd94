"""Build and install the polygpu Python package with pip, without CMake:

    python3 -m pip install ./bindings/python        (from the top of a checkout; pip fetches
                                                    setuptools and wheel into its build
                                                    environment, a C compiler builds the rest)

The extension is compiled together with the C sources of the library (the same files the
CMake target `polygpu` builds), so the installed package needs no libpolygpu.so. It needs a C
compiler and the Python headers; running kernels on CPU devices needs a C++ compiler at run
time (PG_CXX, CXX, c++, g++ or clang++), and GPUs need the CUDA driver and NVRTC, both
loaded at run time.
"""

import glob
import os

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
# The library's folders, as the top-level CMakeLists.txt globs them (tests/readme's pip test
# installs into a fresh virtual environment and imports, so a missing folder fails there).
LIBRARY_DIRS = ["base", "core", "dag", "node", "policies", "devices", "devices/host", "devices/cuda",
                "devices/sim", "nvrtc", "net", "linalg"]
# The wheel is single-process: MPI's transport needs the MPI it was built against (several ranks
# from Python take the CMake build, whose library links the MPI CMake found).
# Nor the simulated cluster's transport (tools/sim_cluster.py), which takes the pg__net_* names
# only in the CMake build (it renames the real transport's functions there).
LEFT_OUT = {os.path.join("net", "mpi_transport.c"), os.path.join("net", "sim_transport.c")}


def sources():
    # Absolute paths keep the object files inside setuptools' build directory.
    library = [f for d in LIBRARY_DIRS for f in sorted(glob.glob(os.path.join(ROOT, d, "*.c")))
               if os.path.relpath(f, ROOT) not in LEFT_OUT]
    if not os.path.exists(os.path.join(ROOT, "core", "polygpu.h")) or not library:
        raise SystemExit("setup.py: the polygpu C sources were not found under %s; build from "
                         "a checkout (pip install ./bindings/python at its top)"
                         % ROOT)
    return library + sorted(glob.glob(os.path.join(HERE, "src", "*.c")))


def version():
    macros = {}
    with open(os.path.join(ROOT, "core", "polygpu.h")) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "#define" and parts[1].startswith("PG_VERSION_"):
                macros[parts[1]] = parts[2]
    return "%s.%s.%s" % (macros["PG_VERSION_MAJOR"], macros["PG_VERSION_MINOR"],
                         macros["PG_VERSION_PATCH"])


class build_py_with_presets(build_py):
    """The package plus the simulated machines' presets (devices/sim/presets/*.topo) as
    polygpu/sim-presets: the library looks for them beside its own file, here the extension, so
    devices="sim:dgx1-v100" works from an installed wheel."""

    def run(self):
        super().run()
        out = os.path.join(self.build_lib, "polygpu", "sim-presets")
        self.mkpath(out)
        for f in sorted(glob.glob(os.path.join(ROOT, "devices", "sim", "presets", "*.topo"))):
            self.copy_file(f, out)


extension = Extension(
    "polygpu._polygpu",
    sources=sources(),
    include_dirs=[ROOT, os.path.join(ROOT, "core")],
    define_macros=[("_GNU_SOURCE", None), ("PG_BUILDING_LIBRARY", None)],
    # Only PyInit__polygpu is exported: the library's symbols stay private to the extension.
    extra_compile_args=["-std=c11", "-pthread", "-fvisibility=hidden", "-Wno-unused-parameter"],
    extra_link_args=["-pthread"],
    libraries=["dl", "m"],
)

setup(
    name="polygpu",
    version=version(),
    description="Run CUDA kernels written as source strings on every GPU (or on CPU devices), "
                "with automatic multi-GPU scheduling",
    long_description=__doc__,
    packages=["polygpu"],
    # The type stubs and the PEP 561 marker: type checkers use them for the installed package.
    package_data={"polygpu": ["py.typed", "*.pyi"]},
    ext_modules=[extension],
    cmdclass={"build_py": build_py_with_presets},
    python_requires=">=3.9",
    # notebook: what examples/python/quickstart.ipynb needs beyond polygpu (JupyterLab, the chart).
    extras_require={"numpy": ["numpy"], "test": ["numpy", "pytest"],
                    "notebook": ["jupyterlab", "matplotlib", "numpy"]},
    zip_safe=False,
    # pip builds in the source folder: objects left in bindings/python/build by an earlier
    # version would be linked again (setuptools compares times, not the list of sources), so
    # every build compiles afresh.
    options={"build_ext": {"force": True}},
)

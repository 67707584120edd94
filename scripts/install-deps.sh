#!/usr/bin/env bash
# install-deps.sh: install what `make demo` and `make test` need and is missing, on Debian or
# Ubuntu as root (otherwise print the command to run). Idempotent and quiet when all is there.
set -euo pipefail

PYTHON=${PYTHON:-python3}
need_apt=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# graphviz: its `dot` draws the Python DAG in notebooks (polygpu.DAG) and is tested there.
for p in build-essential cmake g++ pkg-config lua5.4 liblua5.4-dev luarocks default-jdk-headless junit5 \
  graphviz; do
  have_pkg "$p" || need_apt+=("$p")
done
# OpenBLAS: the built-in tasks (pg_task_builtin: gemm, axpy, dot) run on CPU devices through it
# (dlopen of libopenblas.so.0; linalg/blas.c). GPUs use the CUDA toolkit's cuBLAS.
have_pkg libopenblas0-pthread || have_pkg libopenblas0 || need_apt+=(libopenblas0-pthread)
# clang and its runtimes (libFuzzer, ASan, UBSan: libclang-rt-dev): `make test` builds the fuzz
# harnesses of tests/fuzz with libFuzzer and runs each for a few seconds (fuzz_smoke).
have_pkg clang || need_apt+=(clang)
have_pkg libclang-rt-dev || have_pkg libclang-rt-14-dev || need_apt+=(libclang-rt-dev)
# OpenMPI: the distributed layer (core/ranks.c, transport/) builds when CMake finds MPI, and the
# 2- and 3-rank tests in `make test` run under its mpirun; without it polygpu is single-process.
for p in openmpi-bin libopenmpi-dev; do
  have_pkg "$p" || need_apt+=("$p")
done
# StarPU, only for the CPU-device benchmark against it (benchmarks/starpu_compare.c); `make
# test` does not need it: PG_INSTALL_STARPU=1 scripts/install-deps.sh.
if [ "${PG_INSTALL_STARPU:-0}" = 1 ]; then
  have_pkg libstarpu-dev || need_apt+=(libstarpu-dev)
fi
command -v "$PYTHON" >/dev/null 2>&1 || need_apt+=(python3 python3-dev)
# The Python headers for the interpreter the build targets.
if command -v "$PYTHON" >/dev/null 2>&1; then
  inc=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  [ -f "$inc/Python.h" ] || need_apt+=(python3-dev)
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "missing packages: ${need_apt[*]}; run as root: apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
  echo "installing: ${need_apt[*]}"
  # Debian's luarocks pulls in Lua 5.1, whose alternatives would make `lua` and `luac` 5.1;
  # keep them what they were, or make them 5.4 (the project's Lua) where there were none.
  declare -A alt_before=() alt_new
  for alt in lua-interpreter lua-compiler; do
    alt_before[$alt]=$(update-alternatives --query "$alt" 2>/dev/null | sed -n 's/^Value: //p' || true)
  done
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  alt_new=([lua-interpreter]=/usr/bin/lua5.4 [lua-compiler]=/usr/bin/luac5.4)
  for alt in "${!alt_before[@]}"; do
    want=${alt_before[$alt]:-${alt_new[$alt]}}
    if [ -x "$want" ]; then
      update-alternatives --quiet --set "$alt" "$want"
    fi
  done
fi

# Python test dependencies for the interpreter the build targets: pip where it may install,
# Debian's packages where the interpreter is the system's (externally managed) one.
if ! "$PYTHON" -c 'import numpy, pytest' >/dev/null 2>&1; then
  if ! "$PYTHON" -m pip install -q numpy pytest >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends python3-numpy python3-pytest >/dev/null
    fi
  fi
  "$PYTHON" -c 'import numpy, pytest' || { echo "numpy and pytest are needed for $PYTHON" >&2; exit 1; }
fi

# mypy, for the typed-Python test (mypy --strict on examples/python against the package's
# stubs): Debian's python3-mypy where the interpreter is the system's one (it sees Debian's
# dist-packages), pip otherwise, or where the Debian package is not to be had.
debian_python() {
  "$PYTHON" -c 'import sys; sys.exit("/usr/lib/python3/dist-packages" not in sys.path)' 2>/dev/null
}
have_mypy() { "$PYTHON" -m mypy --version >/dev/null 2>&1; }
if ! have_mypy; then
  if [ "$(id -u)" = 0 ] && debian_python; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends python3-mypy >/dev/null || true
  fi
  have_mypy || "$PYTHON" -m pip install -q mypy >/dev/null 2>&1 || true
  if ! have_mypy; then
    if debian_python && [ "$(id -u)" != 0 ]; then
      echo "mypy is missing for $PYTHON; run as root: apt-get install -y python3-mypy" >&2
    else
      echo "mypy is needed for $PYTHON (apt-get install python3-mypy, or pip install mypy)" >&2
    fi
    exit 1
  fi
fi

# The notebook tools for that interpreter: nbclient and ipykernel run
# examples/python/quickstart.ipynb headless (ctest python_notebook), matplotlib draws
# rt.timeline().plot(). Debian's packages where the interpreter is the system's; pip (PyPI) for
# another interpreter (pyenv, a virtual environment), which cannot import Debian's.
notebook_modules='import nbclient, ipykernel, matplotlib'
if ! "$PYTHON" -c "$notebook_modules" >/dev/null 2>&1; then
  if debian_python; then
    notebook_apt=(python3-nbclient python3-ipykernel python3-matplotlib)
    if [ "$(id -u)" != 0 ]; then
      echo "missing for $PYTHON: nbclient, ipykernel or matplotlib; run as root: apt-get install -y ${notebook_apt[*]}" >&2
      exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${notebook_apt[@]}" >/dev/null
  else
    "$PYTHON" -m pip install -q nbclient ipykernel matplotlib >/dev/null 2>&1 || true
  fi
  "$PYTHON" -c "$notebook_modules" || { echo "nbclient, ipykernel and matplotlib are needed for $PYTHON" >&2; exit 1; }
fi

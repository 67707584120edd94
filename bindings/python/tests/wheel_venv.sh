#!/usr/bin/env bash
# wheel_venv.sh SOURCE WORK PYTHON: build the polygpu wheel (`pip wheel`, the library and the
# extension compiled into one module by bindings/python/setup.py), install it into a fresh
# virtual environment with no C or C++ compiler reachable (PATH holds every program but the
# compilers, CC and CXX are `false`), then run a smoke test and the Python suite there.
#
# Kernels on CPU devices are compiled at run time by a C++ compiler: the runs name it as
# PG_CXX (an absolute path; it is not on PATH), so the only compiler they use is the kernel
# compiler, and nothing can build the package's own C code. Needs PyPI (pip's isolated build
# fetches setuptools and wheel; the suite needs numpy and pytest), hence the label `readme`,
# as tests/readme/pip_venv.sh.
set -euo pipefail
src=$1 work=$2 py=$3
rm -rf "$work"
mkdir -p "$work/src" "$work/dist"

# pip builds in the source folder: build from a copy, so the checkout stays clean and a
# concurrent `pip install ./bindings/python` (pip_install_venv) does not share its objects.
tar -C "$src" --exclude=./.git --exclude='./build*' --exclude=./bindings/python/build \
  --exclude='*.egg-info' --exclude=__pycache__ -cf - . | tar -C "$work/src" -xf -
"$py" -m pip wheel -q --disable-pip-version-check --no-deps -w "$work/dist" \
  "$work/src/bindings/python"

version=$(sed -n 's/^#define PG_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
  "$src/core/polygpu.h" | paste -sd.)
wheels=("$work"/dist/polygpu-*.whl)
[ ${#wheels[@]} = 1 ] || { echo "expected one wheel, found: ${wheels[*]}"; exit 1; }
wheel=${wheels[0]}
case $(basename "$wheel") in
  "polygpu-$version-"*) ;;
  *) echo "wheel $(basename "$wheel") does not carry the version $version of core/polygpu.h"
     exit 1 ;;
esac
"$py" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
ext = [n for n in names if n.startswith("polygpu/_polygpu") and n.endswith(".so")]
assert len(ext) == 1, names
for mod in ("__init__", "_runtime", "_default", "_display"):
    assert "polygpu/%s.py" % mod in names, (mod, names)
assert not [n for n in names if n.endswith((".c", ".h"))], names
print("wheel", sys.argv[1].rsplit("/", 1)[-1], "holds", ext[0])
PY

# The kernel compiler, found before the compilers leave PATH.
kernel_cxx=${PG_CXX:-$(command -v g++ || command -v c++ || command -v clang++ || true)}
[ -n "$kernel_cxx" ] || { echo "no C++ compiler for CPU-device kernels (g++)"; exit 1; }
kernel_cxx=$(readlink -f "$kernel_cxx")

# PATH without compilers: a folder of links to every program on PATH but cc, gcc, c++, g++,
# clang and their versioned and target-prefixed names.
nocc="$work/bin-without-compilers"
mkdir -p "$nocc"
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -d "$d" ] || continue
  for f in "$d"/*; do
    name=${f##*/}
    case $name in
      cc | c89* | c99* | gcc | gcc-[0-9]* | c++ | g++ | g++-[0-9]* | cpp | cpp-[0-9]* | clang* | \
        tcc | icx | icpx | *-linux-gnu-gcc* | *-linux-gnu-g++* | *-linux-gnu-c++* | \
        *-linux-gnu-cpp*) continue ;;
    esac
    [ -e "$nocc/$name" ] || [ -L "$nocc/$name" ] || ln -s "$f" "$nocc/$name"
  done
done
"$py" -m venv "$work/venv"
hidden=(env -u PYTHONPATH "PATH=$work/venv/bin:$nocc" CC=false CXX=false)
for c in cc gcc c++ g++ clang; do
  if "${hidden[@]}" bash -c "command -v $c" >/dev/null; then
    echo "the compiler $c is still reachable"; exit 1
  fi
done

# Installing the wheel compiles nothing (no index, no compiler); the suite's own needs come
# from PyPI.
"${hidden[@]}" "$work/venv/bin/python" -m pip install -q --disable-pip-version-check \
  --no-index --no-deps "$wheel"
"${hidden[@]}" "$work/venv/bin/python" -m pip install -q --disable-pip-version-check \
  numpy pytest

run=("${hidden[@]}" "PG_CXX=$kernel_cxx" "PG_CACHE_DIR=$work/kernel-cache")
cd "$(mktemp -d)"
"${run[@]}" "$work/venv/bin/python" - "$work/venv" "$version" <<'PY'
import os, sys
import polygpu as pg
venv, version = sys.argv[1:]
assert os.path.realpath(pg.__file__).startswith(os.path.realpath(venv)), pg.__file__
assert pg.__version__ == version, (pg.__version__, version)
rt = pg.Runtime(devices="host:2")
k = rt.kernel('extern "C" __global__ void add1(float *y, const float *x, int n) {'
              ' int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }',
              "add1")
x, y = rt.asarray([1.0, 2.0, 3.0], dtype="float32"), rt.array("float32", 3)
k(1, 32)(y, x, 3)
assert list(y) == [2.0, 3.0, 4.0], list(y)
assert "add1" in repr(rt.dag()) and any(e.name == "add1" for e in rt.timeline())
print("polygpu", pg.__version__, "from the wheel in", venv, "ran a kernel:", list(y))
PY
"${run[@]}" "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$src/bindings/python/tests"

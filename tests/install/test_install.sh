#!/usr/bin/env bash
# test_install.sh: `cmake --install` of a build into a temporary prefix, which is then moved (an
# installed copy must name neither the source tree, the build tree nor its first prefix), then
# examples/c built out of tree against it twice — CMake's find_package(polygpu) and plain cc with
# pkg-config — and both programs run from a scratch directory with a fresh kernel cache. Then the
# whole install (every component) under a prefix: nothing may land outside it, and once moved the
# installed tool, the Python package and the Lua module run from it with no LD_LIBRARY_PATH.
# Usage: tests/install/test_install.sh BUILD_DIR      (CTest runs it as the test `install`)
set -euo pipefail
build=$(cd "${1:?usage: test_install.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cmake=$(cache CMAKE_COMMAND)
cc=$(cache CMAKE_C_COMPILER)
libdir=$(cache CMAKE_INSTALL_LIBDIR)
incdir=$(cache CMAKE_INSTALL_INCLUDEDIR)
work=$(mktemp -d "${TMPDIR:-/tmp}/polygpu-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

step "cmake --install (components runtime and development)"
for component in runtime development; do
  "$cmake" --install "$build" --prefix "$work/first-prefix" --component "$component" >/dev/null
done
mv "$work/first-prefix" "$work/prefix"
prefix=$work/prefix
[[ $libdir = /* ]] && fail "CMAKE_INSTALL_LIBDIR is absolute ($libdir): this test needs one under the prefix"

for f in "$incdir/polygpu.h" "$libdir/libpolygpu.so" "$libdir/pkgconfig/polygpu.pc" \
         "$libdir/cmake/polygpu/polygpuConfig.cmake" \
         "$libdir/cmake/polygpu/polygpuConfigVersion.cmake" \
         "$libdir/cmake/polygpu/polygpuTargets.cmake"; do
  [ -e "$prefix/$f" ] || fail "cmake --install did not install $f"
done
soname=$(readelf -d "$prefix/$libdir/libpolygpu.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ -z "$soname" ] || [ ! -e "$prefix/$libdir/$soname" ]; then
  fail "libpolygpu.so: SONAME '$soname' not installed"
fi
if readelf -d "$prefix/$libdir/$soname" | grep -E "R(UN)?PATH" | grep -qF -e "$build" -e "$src"; then
  fail "the installed library's RUNPATH points into the build or source tree"
fi
# Text files only: the library's debug information names the sources, which is fine.
if grep -rlF -e "$build" -e "$src" -e "$work/first-prefix" "$prefix/$incdir" "$prefix/$libdir/cmake" \
     "$prefix/$libdir/pkgconfig"; then
  fail "installed files above name the build tree, the source tree or the prefix they were installed to"
fi

# Each demo: run from a scratch directory, no source tree in its environment, a fresh kernel cache
# (the installed library compiles the CPU kernels itself); it must load the installed library.
run_demo() { # name executable
  local name=$1 exe=$2 lib
  lib=$(ldd "$exe" | sed -n 's/^[[:space:]]*libpolygpu\.so[^ ]* => \([^ ]*\).*/\1/p')
  [ "$(cd "$(dirname "$lib")" && pwd)" = "$(cd "$prefix/$libdir" && pwd)" ] ||
    fail "$name: loads libpolygpu from '$lib', not from the install ($prefix/$libdir)"
  mkdir -p "$work/run-$name"
  (cd "$work/run-$name" && env -u PG_SOURCE_DIR PG_CACHE_DIR="$work/kernel-cache-$name" \
     "$exe" dag.dot) >"$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "$name: the demo failed"; }
  cat "$work/$name.out"
  grep -q "^z\[11\.\.14\] = 120 140 160 180 " "$work/$name.out" || fail "$name: wrong result"
  grep -q "digraph" "$work/run-$name/dag.dot" || fail "$name: no DAG written"
  [ -n "$(ls -A "$work/kernel-cache-$name" 2>/dev/null)" ] || fail "$name: compiled no kernel into its cache"
}

step "examples/c with CMake: find_package(polygpu)"
if ! { "$cmake" -S "$src/examples/c" -B "$work/demo-cmake" -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
         -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" &&
       "$cmake" --build "$work/demo-cmake"; } >"$work/cmake.log" 2>&1; then
  cat "$work/cmake.log"
  fail "examples/c did not build with find_package(polygpu)"
fi
found=$(sed -n 's/^polygpu_DIR:[A-Z]*=//p' "$work/demo-cmake/CMakeCache.txt")
[ "$found" = "$prefix/$libdir/cmake/polygpu" ] || fail "find_package(polygpu) found '$found', not the install"
run_demo cmake "$work/demo-cmake/polygpu-demo"

step "examples/c with pkg-config"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
version=$(pkg-config --modversion polygpu) || fail "pkg-config does not find polygpu.pc"
header_version=$(sed -n 's/^#define PG_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' \
  "$prefix/$incdir/polygpu.h" | paste -sd.)
[ "$version" = "$header_version" ] || fail "polygpu.pc says version $version, polygpu.h $header_version"
# shellcheck disable=SC2046 # the flags are words
"$cc" -std=c11 -Wall -Wextra -Werror -o "$work/demo-pc" "$src/examples/c/demo.c" \
  $(pkg-config --cflags --libs polygpu) || fail "examples/c did not build with pkg-config"
# No LD_LIBRARY_PATH: the .pc file's Libs carry an RPATH to the install's libdir.
run_demo pkg-config "$work/demo-pc"
# The same with --static flags (Libs.private) must link too.
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$work/demo-pc-static-flags" "$src/examples/c/demo.c" \
  $(pkg-config --static --cflags --libs polygpu) || fail "pkg-config --static flags do not link"

step "everything under one prefix (cmake --install with no component), then moved"
unset LD_LIBRARY_PATH
# DESTDIR shows where each file goes: all of it must be under DESTDIR/<the prefix>.
DESTDIR="$work/dest" "$cmake" --install "$build" --prefix /polygpu-prefix >"$work/full.log" ||
  { cat "$work/full.log"; fail "cmake --install (all components) failed"; }
outside=$(cd "$work/dest" && find . -mindepth 1 -maxdepth 1 ! -name polygpu-prefix)
[ -z "$outside" ] || fail "cmake --install --prefix P wrote outside P: $(cd "$work/dest" && find $outside -type f | head -5)"
mv "$work/dest/polygpu-prefix" "$work/full"
full=$work/full
for f in "$full/$libdir/$soname" "$full/bin/polygpu-bandwidth" "$full/bin/polygpu-top"; do
  [ -e "$f" ] || fail "cmake --install did not install ${f#"$full/"}"
done
for f in "$full/bin/polygpu-bandwidth" "$full/bin/polygpu-top" $(find "$full" -name '*.so' ! -name 'libpolygpu*'); do
  if readelf -d "$f" | grep -E "R(UN)?PATH" | grep -v -q '\$ORIGIN'; then
    fail "${f#"$full/"}: RUNPATH not relative to \$ORIGIN: $(readelf -d "$f" | grep -E 'R(UN)?PATH')"
  fi
done
mkdir -p "$work/run-full"
(cd "$work/run-full" && env -u PG_SOURCE_DIR PG_CACHE_DIR="$work/kernel-cache-tool" \
   "$full/bin/polygpu-bandwidth" --devices host:2 --bytes 65536 --reps 1 --output bw.csv) \
   >"$work/tool.out" 2>&1 || { cat "$work/tool.out"; fail "the installed polygpu-bandwidth does not run"; }
grep -q "saved .*bw.csv" "$work/tool.out" || { cat "$work/tool.out"; fail "polygpu-bandwidth: no CSV saved"; }
echo "polygpu-bandwidth: runs from the install"
mkdir -p "$work/node" && chmod 1777 "$work/node"
top_json=$(PG_NODE_DIR="$work/node" "$full/bin/polygpu-top" --json 2>&1) ||
  fail "the installed polygpu-top does not run: $top_json"
[ "$top_json" = '{"clients": [], "devices": []}' ] || fail "polygpu-top --json: $top_json"
echo "polygpu-top: runs from the install"

python=$(cache Python3_EXECUTABLE)
if [ -n "$python" ] && [ -d "$build/bindings/python/polygpu" ]; then
  pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  site=$full/lib/python$pyver/site-packages
  [ -f "$site/polygpu/__init__.py" ] || fail "the Python package is not in PREFIX/lib/python$pyver/site-packages"
  (cd "$work/run-full" && env -u PG_SOURCE_DIR PYTHONPATH="$site" PYTHONDONTWRITEBYTECODE=1 \
     PG_CACHE_DIR="$work/kernel-cache-python" "$python" -c '
import os, sys, polygpu as pg
here = os.path.realpath(os.path.dirname(pg.__file__))
assert here == os.path.realpath(sys.argv[1]), "imported polygpu from " + here
libs = {l.split()[-1] for l in open("/proc/self/maps") if "libpolygpu.so" in l}
assert libs and all(os.path.realpath(l).startswith(os.path.realpath(sys.argv[2])) for l in libs), libs
rt = pg.Runtime(devices="host:2")
k = rt.kernel("extern \"C\" __global__ void sq(float *y, const float *x, int n) {"
              " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * x[i]; }", "sq")
x, y = rt.asarray(range(8), dtype="float32"), rt.array("float32", 8)
k(1, 8)(y, x, 8)
print("python from the install:", y[3])
' "$site/polygpu" "$full/$libdir") >"$work/python.out" 2>&1 || { cat "$work/python.out"; fail "the installed Python package does not run"; }
  grep -q "python from the install: 9.0" "$work/python.out" || { cat "$work/python.out"; fail "python: wrong result"; }
  cat "$work/python.out"
fi
lua=$(cache PG_LUA_EXECUTABLE)
if [ -n "$lua" ] && [ -f "$full/$libdir/lua/5.4/polygpu.so" ]; then
  (cd "$work/run-full" && env -u PG_SOURCE_DIR LUA_CPATH="$full/$libdir/lua/5.4/?.so" \
     PG_CACHE_DIR="$work/kernel-cache-lua" "$lua" -e '
local pg = require "polygpu"
local rt = pg.runtime {devices = "host:2"}
print("lua from the install: " .. #rt:devices() .. " devices")
rt:close()') >"$work/lua.out" 2>&1 || { cat "$work/lua.out"; fail "the installed Lua module does not run"; }
  cat "$work/lua.out"
fi
echo "install test: passed"

#!/usr/bin/env bash
# tests/gpu/run.sh: run on a GPU machine (CUDA 13, gcc, cmake, python3 with numpy/pytest/cupy;
# no network). Builds the project, runs the C suite with its GPU-aware tests on every GPU
# (PG_TEST_DEVICES=cuda; the GPU fault tests among them), the C suite once under
# compute-sanitizer memcheck, up to 10,000 differential programs, the Python suite
# with devices=cuda, the Lua and Java suites when .carry/ holds their runtimes (see
# tests/gpu/prepare-carry.sh), then the GPU benchmarks. Logs go to $OUT when set.
# Usage: tests/gpu/run.sh [quick|differential]   (quick: no compute-sanitizer; differential:
# build and the differential programs only). PG_DIFF_TOTAL=0 skips the differential programs.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build-gpu/out}
mkdir -p "$OUT"
export PG_CACHE_DIR=$PWD/build-gpu/kernel-cache
status=0
step() { echo "== $* ($(date +%T))"; }
fail() { echo "FAILED: $*" | tee -a "$OUT/failures.txt"; status=1; }

step "GPUs"; nvidia-smi -L | tee "$OUT/gpus.txt"
if [ -n "${PG_COMMIT:-}" ]; then echo "$PG_COMMIT" >"$OUT/commit.txt"; else git rev-parse HEAD 2>/dev/null >"$OUT/commit.txt" || cp .carry/commit "$OUT/commit.txt" 2>/dev/null || true; fi

LUA_FLAGS=()
if ls .carry/lua/*.deb >/dev/null 2>&1; then
  for f in .carry/lua/*.deb; do dpkg -x "$f" /tmp/lua; done
  export LD_LIBRARY_PATH=/tmp/lua/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export CFLAGS="${CFLAGS:-} -I/tmp/lua/usr/include/x86_64-linux-gnu" # Debian's multiarch luaconf
  LUA_FLAGS=(-DLUA_INCLUDE_DIR=/tmp/lua/usr/include/lua5.4
             -DLUA_LIBRARY=/tmp/lua/usr/lib/x86_64-linux-gnu/liblua5.4.so
             -DPG_LUA_EXECUTABLE=/tmp/lua/usr/bin/lua5.4)
fi
step "build"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=ON \
  -DPython3_EXECUTABLE="$(command -v python3)" "${LUA_FLAGS[@]}" >"$OUT/cmake.log" 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" >>"$OUT/cmake.log" 2>&1 || { tail -40 "$OUT/cmake.log"; exit 1; }

if [ "${1:-}" != differential ]; then
step "C suite on GPUs"
(cd build-gpu && PG_TEST_DEVICES=cuda PG_TEST_REQUIRE_GPU=1 PG_DEVICES=cuda \
  ctest --output-on-failure -j4 -LE "python|lua|java|readme") >"$OUT/ctest-cuda.log" 2>&1
# (readme: the README's CPU-device snippets and a pip install from PyPI, which this machine
# cannot reach; both run in `make test`.)
tail -25 "$OUT/ctest-cuda.log"
grep -q "100% tests passed" "$OUT/ctest-cuda.log" || fail "C suite"

if [ "${1:-}" != quick ]; then
  step "C suite under compute-sanitizer memcheck"
  : >"$OUT/sanitizer.log"
  for t in build-gpu/tests/c/test_*; do
    [ -x "$t" ] || continue
    # Its kernels fault on purpose (illegal address, trap, assert): the sanitizer would say so.
    [ "$(basename "$t")" = test_gpu_faults ] && continue
    PG_TEST_DEVICES=cuda PG_TEST_REQUIRE_GPU=1 PG_DIFF_PROGRAMS=20 \
      compute-sanitizer --tool memcheck --error-exitcode 9 "$t" >"$OUT/one.log" 2>&1
    rc=$?; cat "$OUT/one.log" >>"$OUT/sanitizer.log"
    if [ $rc != 0 ] && grep -q "terminated before first instrumented API call" "$OUT/one.log"; then
      echo "$(basename "$t"): CPU devices only, no CUDA call to check" | tee -a "$OUT/sanitizer-summary.txt"
      continue
    fi
    echo "$(basename "$t"): compute-sanitizer exit $rc" | tee -a "$OUT/sanitizer-summary.txt"
    [ $rc = 0 ] || fail "compute-sanitizer $(basename "$t")"
  done
  rm -f "$OUT/one.log"
  grep "ERROR SUMMARY" "$OUT/sanitizer.log" | sort | uniq -c
fi
fi

if [ "${PG_DIFF_TOTAL:=10000}" -gt 0 ]; then
step "differential programs on the GPU (up to $PG_DIFF_TOTAL in 4 workers, ${PG_DIFF_SECONDS:=420} s)"
# Chunks of 250 programs with consecutive seeds, spread over 4 workers, until the total or the
# time is reached; every finished chunk prints its own summary line. Measured on an H100: one
# worker checks about 25 programs a second (x 40 configurations), four together about 31 (the
# GPU is shared), so 10,000 take about 5.5 minutes.
diff_worker() {
  local k=$1 end=$((SECONDS + PG_DIFF_SECONDS))
  while [ $((k * 250)) -lt "$PG_DIFF_TOTAL" ] && [ $SECONDS -lt $end ]; do
    PG_TEST_DEVICES=cuda PG_DIFF_PROGRAMS=250 PG_DIFF_SEED=$((1 + k * 250)) \
      timeout $((end - SECONDS + 5)) build-gpu/tests/c/test_differential >>"$OUT/diff-$1.log" 2>&1
    k=$((k + 4))
  done
}
for i in 0 1 2 3; do diff_worker $i & done
wait
cat "$OUT"/diff-*.log >"$OUT/differential.log"; rm -f "$OUT"/diff-*.log
awk '/^differential:/ { n += $2; m += $(NF-4) } END { printf "differential on the GPU: %d programs (x 40 configurations) checked, %d mismatches\n", n, m }' \
  "$OUT/differential.log" | tee "$OUT/differential-summary.txt"
grep -q "MISMATCH" "$OUT/differential.log" && fail "differential programs on the GPU"
fi
[ "${1:-}" = differential ] && { echo "run.sh: status $status" | tee "$OUT/status.txt"; tar czf /tmp/gpu-logs.tar.gz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/gpu-logs.tar.gz "$OUT/"; exit $status; }

step "Python suite (devices=cuda)"
PG_DEVICES=cuda PYTHONPATH=$PWD/build-gpu/bindings/python python3 -m pytest -q -p no:cacheprovider \
  bindings/python/tests >"$OUT/python-cuda.log" 2>&1 || fail "Python suite"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/python-cuda.log" | tail -20

if [ -x /tmp/lua/usr/bin/lua5.4 ] && [ -f build-gpu/bindings/lua/polygpu.so ]; then
  step "Lua suite (devices=cuda)"
  PG_DEVICES=cuda LUA_CPATH="$PWD/build-gpu/bindings/lua/?.so" /tmp/lua/usr/bin/lua5.4 \
    bindings/lua/tests/run.lua bindings/lua/tests/test_*.lua >"$OUT/lua-cuda.log" 2>&1 || fail "Lua suite"
  grep -v "^ok " "$OUT/lua-cuda.log" | tail -40
fi

if [ -x .carry/java/jre/bin/java ]; then
  step "Java suite (devices=cuda; jars built on Debian at commit $(cat .carry/java/commit))"
  J=.carry/java
  PG_DEVICES=cuda $J/jre/bin/java -ea -Djava.library.path=/nonexistent -jar $J/junit.jar \
    --disable-banner --disable-ansi-colors --details=summary --fail-if-no-tests \
    --class-path $J/polygpu-bundle.jar:$J/polygpu-tests.jar --scan-class-path $J/polygpu-tests.jar \
    >"$OUT/java-cuda.log" 2>&1 || fail "Java suite"
  tail -15 "$OUT/java-cuda.log"
fi

step "power and energy through NVML (tests/gpu/power_check.c)"
cc -std=c11 -O2 -Wall -Werror -Icore tests/gpu/power_check.c -Lbuild-gpu -lpolygpu \
  -Wl,-rpath,"$PWD/build-gpu" -o build-gpu/power_check &&
  build-gpu/power_check 5 | tee "$OUT/power_check.txt"
rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || fail "power_check (exit $rc; 2: no NVML)"

step "benchmarks"
build-gpu/tools/polygpu-bandwidth | tee "$OUT/bandwidth.txt" || fail "polygpu-bandwidth"
build-gpu/benchmarks/launch_overhead cuda:0 20000 | tee "$OUT/launch_overhead.txt"
build-gpu/benchmarks/copy_bandwidth cuda 256 5 | tee "$OUT/copy_bandwidth.txt"
build-gpu/benchmarks/overlap cuda:0 8 | tee "$OUT/overlap.txt"
build-gpu/benchmarks/overlap cuda 8 | tee -a "$OUT/overlap.txt"
PYTHONPATH=$PWD/build-gpu/bindings/python python3 benchmarks/python_launch.py 20000 cuda:0 \
  | tee "$OUT/python_launch.txt"
echo "run.sh: status $status" | tee "$OUT/status.txt"
# The device tool brings back a few files: one archive of every log.
tar czf /tmp/gpu-logs.tar.gz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/gpu-logs.tar.gz "$OUT/"
exit $status

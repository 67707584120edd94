#!/usr/bin/env bash
# tests/gpu/run.sh: run on a GPU machine (CUDA 13, gcc, cmake; no network). Builds the project,
# runs the C suite with its GPU-aware tests on every GPU (PG_TEST_DEVICES=cuda), runs the C suite
# once under compute-sanitizer, then the GPU benchmarks. Logs go to $OUT when set.
# Usage: tests/gpu/run.sh [quick]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build-gpu/out}
mkdir -p "$OUT"
export PG_CACHE_DIR=$PWD/build-gpu/kernel-cache
status=0
step() { echo "== $*"; }

step "GPUs"; nvidia-smi -L | tee "$OUT/gpus.txt"
step "build"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS="${PG_BINDINGS:-OFF}" \
  -DPython3_EXECUTABLE="$(command -v python3)" >"$OUT/cmake.log" 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" >>"$OUT/cmake.log" 2>&1 || { tail -40 "$OUT/cmake.log"; exit 1; }

step "C suite on GPUs"
(cd build-gpu && PG_TEST_DEVICES=cuda PG_TEST_REQUIRE_GPU=1 PG_DEVICES=cuda \
  ctest --output-on-failure -j4 -LE "python|lua|java") 2>&1 | tee "$OUT/ctest-cuda.log" | tail -25
grep -q "tests passed, 0 tests failed" "$OUT/ctest-cuda.log" || status=1

if [ "${1:-}" != quick ]; then
  step "compute-sanitizer memcheck"
  : >"$OUT/sanitizer.log"
  for t in test_cuda test_dag test_errors test_differential; do
    PG_TEST_DEVICES=cuda PG_DIFF_PROGRAMS=20 compute-sanitizer --tool memcheck --error-exitcode 9 \
      "build-gpu/tests/c/$t" >>"$OUT/sanitizer.log" 2>&1
    rc=$?; echo "$t: compute-sanitizer exit $rc" | tee -a "$OUT/sanitizer-summary.txt"
    [ $rc = 0 ] || status=1
  done
  grep "ERROR SUMMARY" "$OUT/sanitizer.log" | sort | uniq -c
fi

step "benchmarks"
build-gpu/benchmarks/launch_overhead cuda:0 20000 | tee "$OUT/launch_overhead.txt"
echo "run.sh: status $status"
exit $status

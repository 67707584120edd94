#!/usr/bin/env bash
# tests/gpu/mixed.sh: GPUs and CPU devices in one runtime on a GPU machine (issue 38 item 3 and
# the small-DGEMM figure of item 4). Builds build-gpu/, runs the C test test_mixed on
# "cuda,host:2", tests/gpu/mixed_check.py ("cuda,host:2" and "auto,host:2") and
# benchmarks/mcl_small_dgemm.py (1 GPU + host:4 / host:8, where=any against the GPU alone).
# Results and logs under $OUT. Usage: tests/gpu/mixed.sh [check]   (check: no benchmark)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build-gpu/out}
mkdir -p "$OUT"
export PG_CACHE_DIR=$PWD/build-gpu/kernel-cache
status=0
nvidia-smi -L | tee "$OUT/gpus.txt"
git rev-parse HEAD >"$OUT/commit.txt" 2>/dev/null || true
echo "== build ($(date +%T))"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=ON \
  -DPython3_EXECUTABLE="$(command -v python3)" >"$OUT/cmake.log" 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" >>"$OUT/cmake.log" 2>&1 || { tail -40 "$OUT/cmake.log"; exit 1; }
echo "== C test_mixed on cuda,host:2 ($(date +%T))"
PG_MIXED_DEVICES=cuda,host:2 build-gpu/tests/c/test_mixed >"$OUT/test_mixed.log" 2>&1 ||
  { echo "FAILED: test_mixed"; tail -20 "$OUT/test_mixed.log"; status=1; }
echo "== mixed_check.py ($(date +%T))"
OUT=$OUT PYTHONPATH=build-gpu/bindings/python python3 tests/gpu/mixed_check.py 2>&1 |
  tee "$OUT/mixed_check.log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
if [ "${1:-}" != check ]; then
  echo "== MCL small DGEMM ($(date +%T))"
  OUT=$OUT PYTHONPATH=build-gpu/bindings/python python3 benchmarks/mcl_small_dgemm.py \
    --tasks 2000 --host 4,8 --reps 3 2>&1 | tee "$OUT/mcl_small_dgemm.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
echo "== done ($(date +%T)), status $status"
exit $status

#!/usr/bin/env bash
# gemm_bench.sh: build what gemm_bench needs and run it on this machine's GPUs, results in $OUT
# (default build-gpu/out): the CSV, the log, the summary against issue 22's targets, the plot
# when matplotlib is there. One dtype per call keeps a run of --quick within 8 minutes on one
# H100 or H200. Usage: benchmarks/gemm_bench.sh [s|d|sd] [GPUS] [--full]
set -uo pipefail
cd "$(dirname "$0")/.."
DT=${1:-s}
GPUS=${2:-1}
SET=--quick
[ "${3:-}" = --full ] && SET=
OUT=${OUT:-$PWD/build-gpu/out}
mkdir -p "$OUT"
export PG_CACHE_DIR=$PWD/build-gpu/cache
if [ ! -x build-gpu/benchmarks/gemm_bench ]; then
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=OFF >"$OUT/cmake.log" 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" --target gemm_bench test_gemm_tiled test_tasks \
      >>"$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
fi
nvidia-smi -L >"$OUT/gpus.txt" 2>&1
(git rev-parse HEAD 2>/dev/null || echo "${PG_COMMIT:-unknown}") >"$OUT/commit.txt"
date -u +%FT%TZ >"$OUT/date.txt"
# the built-in tasks on the GPUs first (cuBLAS found, results right)
(cd build-gpu && PG_TEST_DEVICES=cuda ./tests/c/test_tasks) >"$OUT/test_tasks.log" 2>&1 ||
  echo "test_tasks on the GPUs FAILED (see test_tasks.log)"
csv="$OUT/gemm-${GPUS}gpu-$DT.csv"
build-gpu/benchmarks/gemm_bench $SET --gpus "$GPUS" --dtype "$DT" --out "$csv" \
  2>"$OUT/gemm-${GPUS}gpu-$DT.log"
echo "gemm_bench exit $?"
tail -3 "$OUT/gemm-${GPUS}gpu-$DT.log"
python3 benchmarks/gemm_plot.py "$OUT"/gemm-*gpu-*.csv --summary "$OUT/summary.txt" \
  --png "$OUT/gemm.png"

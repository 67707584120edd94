#!/usr/bin/env bash
# tests/gpu/linalg_check.sh: linalg/ (the tiled GEMM and the BLAS tasks on the public API,
# ARCHITECTURE.md decision 31) on GPUs. Builds, then: the task, library-API, power and GEMM C
# tests; the Python linalg and power tests with devices=cuda (cuBLAS tasks, the tiled GEMM's
# rate measured on a GPU through pg_runtime_device_throughput's size, the tile tasks kept per
# runtime through pg_runtime_attach), and the linalg tests again on cuda,host:2 (OpenBLAS and
# cuBLAS in one runtime, chosen by each device's class); gemm_bench --quick on 1 and, when there are two, 2 GPUs
# (results against cuBLAS, compared with benchmarks/results/ of before the move). Logs and the
# CSVs go to $OUT. About 10 minutes on nvidia-h200-x2 (the build ~3, the benchmark ~5).
# Usage (repository root): OUT=... tests/gpu/linalg_check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build-gpu/out}
mkdir -p "$OUT"
export PG_CACHE_DIR=$PWD/build-gpu/kernel-cache
status=0
step() { echo "== $* ($(date +%T))"; }
nvidia-smi -L | tee "$OUT/gpus.txt"
step build
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=ON \
  -DPython3_EXECUTABLE="$(command -v python3)" >"$OUT/cmake.log" 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" >>"$OUT/cmake.log" 2>&1 || { tail -40 "$OUT/cmake.log"; exit 1; }
step "C tests (CPU devices, and GPUs where they use them)"
(cd build-gpu && PG_TEST_DEVICES=cuda ctest --output-on-failure \
  -R 'test_gemm_tiled|test_tasks|test_library_api|test_power|layers|layer_calls') \
  >"$OUT/ctest.log" 2>&1 || status=1
tail -3 "$OUT/ctest.log"
step "Python linalg and power tests on GPUs"
PYTHONPATH=build-gpu/bindings/python PG_DEVICES=cuda python3 -m pytest -q -p no:cacheprovider \
  bindings/python/tests/test_linalg.py bindings/python/tests/test_power.py >"$OUT/pytest.log" 2>&1 ||
  status=1
tail -3 "$OUT/pytest.log"
step "Python linalg tests on GPUs and CPU devices in one runtime (cuda,host:2)"
PYTHONPATH=build-gpu/bindings/python PG_DEVICES=cuda,host:2 python3 -m pytest -q -p no:cacheprovider \
  bindings/python/tests/test_linalg.py >"$OUT/pytest_mixed.log" 2>&1 || status=1
tail -3 "$OUT/pytest_mixed.log"
ngpu=$(nvidia-smi -L | wc -l)
for g in 1 2; do
  [ "$g" -le "$ngpu" ] || continue
  step "gemm_bench --quick on $g GPU(s)"
  build-gpu/benchmarks/gemm_bench --quick --gpus "$g" --out "$OUT/gemm_quick_${g}gpu.csv" \
    >"$OUT/gemm_bench_${g}.log" 2>&1 || status=1
  tail -5 "$OUT/gemm_bench_${g}.log"
done
echo "status $status" | tee "$OUT/status.txt"
exit $status

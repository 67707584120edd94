#!/usr/bin/env bash
# tests/gpu/chunks.sh: chunked outputs on a GPU machine — PROACT's microbenchmark through
# polygpu (benchmarks/proact_runtime.c) on 1 GPU (consumer: the host) and 2 GPUs (consumer: the
# other GPU), the hand-written mechanism beside it (benchmarks/proact_micro.cu), and a traced run
# showing chunk copies starting before the producer ends. Results to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build-gpu/out}
mkdir -p "$OUT"
export PG_CACHE_DIR=$PWD/build-gpu/kernel-cache
nvidia-smi -L | tee "$OUT/gpus.txt"
ngpu=$(nvidia-smi -L | wc -l)
if [ ! -x build-gpu/benchmarks/proact_runtime ]; then
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=OFF >"$OUT/cmake.log" 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" --target proact_runtime >>"$OUT/cmake.log" 2>&1 ||
    { tail -30 "$OUT/cmake.log"; exit 1; }
fi
nvcc -O3 -o build-gpu/proact_micro benchmarks/proact_micro.cu -lcuda 2>"$OUT/nvcc.log" || tail "$OUT/nvcc.log"
for g in 1 2; do
  [ "$g" -le "$ngpu" ] || continue
  echo "== polygpu, $g GPU(s)"
  PG_BENCH_TRACE=$OUT/proact-trace-${g}gpu.json build-gpu/benchmarks/proact_runtime $g 256 5 1 \
    | tee "$OUT/proact-runtime-${g}gpu.jsonl"
  echo "== hand-written, $g GPU(s)"
  build-gpu/proact_micro $g 256 5 >"$OUT/proact-micro-${g}gpu.csv" 2>&1; tail -5 "$OUT/proact-micro-${g}gpu.csv"
done
if [ "$ngpu" -ge 2 ]; then
  echo "== hand-written, 2 GPUs, buffers from memory pools (PM_POOL=1)"
  PM_POOL=1 build-gpu/proact_micro 2 256 5 >"$OUT/proact-micro-2gpu-pool.csv" 2>&1; grep -v "^chunked" "$OUT/proact-micro-2gpu-pool.csv"; grep "^chunked" "$OUT/proact-micro-2gpu-pool.csv" | head -20
fi

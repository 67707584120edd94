#!/usr/bin/env bash
# tests/gpu/node_homes.sh: one device command (~4 min, 2 GPUs: nvidia-h200-x2 suffices) for the
# node's homes (ARCHITECTURE.md decision 33): rebuilds build/ from this tree (run.sh alone would
# reuse a stale build/ it finds), runs test_node, then MCL's Figs. 8 and 7 and MPS
# (benchmarks/node/run.sh gpu). Results under $OUT.
# Usage (repository root, GPU machine): OUT=/tmp/out bash tests/gpu/node_homes.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/node-homes}
mkdir -p "$OUT"
T0=$(date +%s)
{ cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
  cmake --build build -j"$(nproc)" --target mcl_fig8 mcl_fig7 launch_overhead polygpu-top test_node
} > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "build: $(($(date +%s) - T0)) s"
build/tests/c/test_node > "$OUT/test_node.txt" 2>&1 && echo "test_node: passed" ||
  { echo "test_node: FAILED"; tail -20 "$OUT/test_node.txt"; }
OUT=$OUT SECONDS_PER_JOB=${SECONDS_PER_JOB:-2} TASKS=${TASKS:-20000} \
  timeout 420 bash benchmarks/node/run.sh gpu
echo "total: $(($(date +%s) - T0)) s"

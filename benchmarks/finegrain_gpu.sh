#!/usr/bin/env bash
# finegrain_gpu.sh: the fixed costs of a launch on GPUs, this tree against a base tree, side by
# side in one command (issue "Fine grain"); everything into $OUT.
#   launch.txt       benchmarks/launch_overhead cuda:0 20000, base and head alternated, 3 each
#   gran-*.txt       benchmarks/granularity (METG, C, eager and replayed) on cuda:0 and on
#                    every GPU, base and head; granularity_cuda (streams, CUDA graph) on 1 and
#                    2 GPUs; benchmarks/granularity.py (Python) for head
# BASE_TAR=<tar of the base tree> (git archive <commit>); without it only head is measured.
# Usage (repository root, GPU machine): OUT=/tmp/out BASE_TAR=.carry/base.tar bash benchmarks/finegrain_gpu.sh
set -u
OUT=${OUT:-/tmp/finegrain}
mkdir -p "$OUT"
J=$(nproc)
NGPU=$(nvidia-smi -L | wc -l)
ALL=cuda:0$(for ((g = 1; g < NGPU; g++)); do printf ',%d' $g; done)
{ nvidia-smi -L; date -u; } > "$OUT/env.txt" 2>&1
[ -d build-gpu ] || { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$OUT/cmake-head.log" 2>&1 &&
  cmake --build build-gpu -j"$J" > "$OUT/build-head.log" 2>&1; } || { echo "head build failed"; exit 1; }
H=$PWD/build-gpu/benchmarks
B=""
if [ -n "${BASE_TAR:-}" ] && [ -f "$BASE_TAR" ]; then
  mkdir -p /tmp/pg-base && tar xf "$BASE_TAR" -C /tmp/pg-base
  (cd /tmp/pg-base && cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=OFF \
     > "$OUT/cmake-base.log" 2>&1 && cmake --build build -j"$J" --target launch_overhead granularity \
     > "$OUT/build-base.log" 2>&1) && B=/tmp/pg-base/build/benchmarks
fi
nvcc -O3 -arch=sm_90 -o /tmp/granularity_cuda benchmarks/granularity_cuda.cu > "$OUT/nvcc.log" 2>&1
for i in 1 2 3; do
  [ -n "$B" ] && { echo "== base $i"; "$B/launch_overhead" cuda:0 20000; } >> "$OUT/launch.txt" 2>&1
  { echo "== head $i"; "$H/launch_overhead" cuda:0 20000; } >> "$OUT/launch.txt" 2>&1
done
for d in cuda:0 "$ALL"; do
  tag=$(echo "$d" | tr ':,' '-_')
  [ -n "$B" ] && "$B/granularity" "$d" 2000 > "$OUT/gran-base-$tag.txt" 2>&1
  "$H/granularity" "$d" 2000 > "$OUT/gran-head-$tag.txt" 2>&1
done
for g in 1 2; do [ "$g" -le "$NGPU" ] && /tmp/granularity_cuda $g 2000 > "$OUT/gran-cuda-$g.txt" 2>&1; done
PYTHONPATH=$PWD/build-gpu/bindings/python python3 benchmarks/granularity.py cuda:0 2000 > "$OUT/gran-python-1.txt" 2>&1
{ echo "# METG lines"; grep -H "METG" "$OUT"/gran-*.txt; echo "# launch"; grep -E "^==|ratio|median" "$OUT/launch.txt"; } > "$OUT/summary.txt"
cat "$OUT/summary.txt"

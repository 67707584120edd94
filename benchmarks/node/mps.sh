#!/bin/bash
# benchmarks/node/mps.sh OUTDIR: several processes' kernels on one GPU through CUDA MPS (issue 39,
# item 7). Four processes each run a stream of 64x64 DGEMM tasks (mcl_fig7's job, one GPU,
# share=off so that only MPS differs) at the same time: the wall time without MPS (the GPU
# time-slices between the processes' contexts) and with an MPS control daemon started here for
# this user (kernels of the four run concurrently). polygpu never requires MPS: a client of an
# MPS daemon is an ordinary CUDA process to it. Skips (exit 0, says why) when
# nvidia-cuda-mps-control is missing.
set -uo pipefail
out=${1:-.}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/benchmarks/mcl_fig7
if ! command -v nvidia-cuda-mps-control >/dev/null; then
  echo "nvidia-cuda-mps-control not found: MPS not measured"
  exit 0
fi
run4() {
  local t0 t1
  t0=$(date +%s.%N)
  for i in 1 2 3 4; do
    PG_SHARE=off "$bin" --gpu --devices 1 --tasks "${TASKS:-20000}" --out "$out/mps-$1-$i.csv" > "$out/mps-$1-$i.txt" 2>&1 &
  done
  wait
  t1=$(date +%s.%N)
  echo "$1: 4 processes in $(awk "BEGIN { printf \"%.3f\", $t1 - $t0 }") s"
}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
run4 without-mps
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
if nvidia-cuda-mps-control -d; then
  sleep 1
  run4 with-mps
  echo quit | nvidia-cuda-mps-control
  cat "$CUDA_MPS_LOG_DIRECTORY"/control.log 2>/dev/null | tail -5
else
  echo "the MPS daemon did not start (exclusive-process mode or permissions): MPS not measured"
fi

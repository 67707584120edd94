#!/bin/bash
# benchmarks/node/run.sh [cpu|gpu]: MCL's Figures 8 and 7 (issue 39) and, on GPUs, the CUDA MPS
# measurement (mps.sh), from the repository root. Builds build/ if needed; results (CSV, the
# console output, the machine and commit; launch.txt: launch_overhead with share=node and off) go to $OUT, else benchmarks/results/<date>-<kind>-node-<commit>.
#   cpu (default): CPU devices (host:1 pinned / host:2 shared; 1, 2, 4 CPU devices for Fig. 7).
#   gpu: 2 GPUs (cuda:0 / cuda:1 pinned, cuda shared; Fig. 7 on 1, 2, ... GPUs).
# Environment: SECONDS_PER_JOB (Fig. 8 job length alone, default 2 on GPUs, 3 on CPU devices),
# TASKS (Fig. 7 tasks per run, default 20000 on GPUs, 4000 on CPU devices).
set -euo pipefail
kind=${1:-cpu}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
out=${OUT:-benchmarks/results/$(date -u +%Y-%m-%d)-$kind-node-$commit}
mkdir -p "$out"
if [ ! -x build/benchmarks/mcl_fig8 ] || [ ! -x build/benchmarks/mcl_fig7 ] ||
   [ ! -x build/benchmarks/launch_overhead ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$(nproc)" --target mcl_fig8 mcl_fig7 launch_overhead polygpu-top >/dev/null
fi
# A node of the benchmark's own: other polygpu processes of this user stay out of it.
export PG_NODE_DIR=$(mktemp -d)
trap 'rm -rf "$PG_NODE_DIR"' EXIT
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
{
  echo "commit $commit, $(date -u), kind $kind"
  uname -a
  nproc
  if [ "$kind" = gpu ]; then nvidia-smi -L || true; else lscpu | grep -E "Model name|^CPU\(s\)" || true; uptime; fi
} > "$out/machine.txt"
if [ "$kind" = gpu ]; then
  flag=--gpu; secs=${SECONDS_PER_JOB:-2}; tasks=${TASKS:-20000}
  ngpu=$(nvidia-smi -L | wc -l)
  devs=$ngpu
else
  flag=; secs=${SECONDS_PER_JOB:-3}; tasks=${TASKS:-4000}; devs=4
fi
echo "== the node's cost on a launch with no other client: share=node and share=off alternated"
one=$([ "$kind" = gpu ] && echo cuda:0 || echo host:1)
for i in 1 2 3; do
  for m in node off; do
    echo "share=$m: $(PG_SHARE=$m build/benchmarks/launch_overhead "$one" 20000 | grep 'polygpu submit')"
  done
done | tee "$out/launch.txt"
echo "== Fig. 8: 4 processes on 2 devices, small:large mixes, static pinning vs shared"
build/benchmarks/mcl_fig8 $flag --procs 4 --seconds "$secs" --out "$out/fig8.csv" | tee "$out/fig8.txt"
echo "== Fig. 7: one process's stream of 64x64 DGEMM tasks with fresh inputs, async vs sync"
build/benchmarks/mcl_fig7 $flag --devices "$devs" --tasks "$tasks" --out "$out/fig7.csv" | tee "$out/fig7.txt"
if [ "$kind" = gpu ]; then
  echo "== CUDA MPS: 4 processes' kernels on one GPU, without and with MPS"
  bash benchmarks/node/mps.sh "$out" | tee "$out/mps.txt" || echo "mps.sh failed (see $out/mps.txt)"
fi
echo "results in $out"

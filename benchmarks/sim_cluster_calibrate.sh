#!/usr/bin/env bash
# sim_cluster_calibrate.sh: on a GPU machine with MPI (nvidia-h200-x2), measure what the
# simulated clusters assume (benchmarks/results/2026-11-28-sim-cluster-scaling) instead of
# taking it from datasheets; everything into $OUT:
#   pingpong.txt          MPI ping-pong of host buffers between 2 ranks, 8 B to 1 MiB, with the
#                         settings benchmarks/mpi_bench.sh measures under (Open MPI vader, single
#                         copy off): intra_us, intra_gbps, eager_bytes of the presets
#   profile-dist.csv      a timing profile of cg_dist.py's and jacobi_dist.py's kernels recorded
#                         one at a time (PG_PROFILE, PG_EXECUTION=sync) on 1 rank at the measured
#                         sizes: replaces the default model and profile.csv's jacobi_sweep
#   runs.jsonl            cg_dist.py and jacobi_dist.py on 1 rank and on 2 ranks x 1 GPU at the
#                         measured sizes, the validation target measured again at this commit
#   env.txt, logs/        the machine, the commit, each step's output
# Usage (repository root): OUT=/tmp/out bash benchmarks/sim_cluster_calibrate.sh [BUILD_DIR]
# ~3-4 minutes on nvidia-h200-x2 (build ~1.5, profile runs ~1, the rest seconds).
# DEVICES (default cuda:0), CG_SIZE ("--size large"), JAC_SIZE ("--n 16384 --iterations 100")
# let it run on CPU devices at small sizes as a test of the script
# (DEVICES=host:1 CG_SIZE="--n 1024 --iterations 3" JAC_SIZE="--n 256 --iterations 4").
set -u
BUILD=${1:-build-gpu}
OUT=${OUT:-/tmp/sim-cluster-calibrate}
DEVICES=${DEVICES:-cuda:0}
CG_SIZE=${CG_SIZE:---size large}
JAC_SIZE=${JAC_SIZE:---n 16384 --iterations 100}
mkdir -p "$OUT/logs"
{
  echo "date: $(date -u +%FT%TZ)"; echo "commit: $(git rev-parse --short HEAD 2> /dev/null)"
  echo "host: $(hostname), $(nproc) cores"; mpirun --version 2>&1 | head -1
  nvidia-smi -L 2> /dev/null
} > "$OUT/env.txt"
if ! { cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=ON > "$OUT/logs/cmake.log" 2>&1 &&
       cmake --build "$BUILD" -j"$(nproc)" --target polygpu pgpy_extension > "$OUT/logs/build.log" 2>&1; }; then
  echo "build failed: $OUT/logs/build.log"; tail -20 "$OUT/logs/build.log"; exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export PYTHONPATH=$PWD/$BUILD/bindings/python PG_CACHE_DIR=$PWD/$BUILD/kernel-cache
export PYTHONDONTWRITEBYTECODE=1
MPIRUN=(mpirun --oversubscribe --bind-to none -x PYTHONPATH -x PG_CACHE_DIR)

mpicc -O2 -o "$BUILD/pingpong" benchmarks/mpi/pingpong.c > "$OUT/logs/pingpong-build.log" 2>&1 &&
  timeout 120 "${MPIRUN[@]}" -np 2 "$BUILD/pingpong" > "$OUT/pingpong.txt" 2> "$OUT/logs/pingpong.log"
echo "pingpong: rc $?"

rm -f "$OUT/profile-dist.csv"
# shellcheck disable=SC2086
PG_PROFILE=$OUT/profile-dist.csv PG_EXECUTION=sync timeout 240 python3 benchmarks/mpi/cg_dist.py \
  $CG_SIZE --devices "$DEVICES" --warmup 0 --repeats 1 --no-check > "$OUT/logs/profile-cg.log" 2>&1
echo "profile cg: rc $?"
# shellcheck disable=SC2086
PG_PROFILE=$OUT/profile-dist.csv PG_EXECUTION=sync timeout 240 python3 benchmarks/mpi/jacobi_dist.py \
  $JAC_SIZE --devices "$DEVICES" --warmup 0 --repeats 1 --no-check > "$OUT/logs/profile-jacobi.log" 2>&1
echo "profile jacobi: rc $?"

: > "$OUT/runs.jsonl"
for b in cg jacobi; do
  if [ $b = cg ]; then S=$CG_SIZE; else S=$JAC_SIZE; fi
  # shellcheck disable=SC2086
  timeout 120 python3 benchmarks/mpi/${b}_dist.py $S --devices "$DEVICES" --no-check \
    --label cal-1rank > "$OUT/logs/$b-1.log" 2>&1
  grep '^{' "$OUT/logs/$b-1.log" >> "$OUT/runs.jsonl"
  # 2 ranks x 1 GPU: devices auto gives local rank i GPU i (with DEVICES=host:1, one CPU device each)
  D2=auto; [ "$DEVICES" = cuda:0 ] || D2=$DEVICES
  # shellcheck disable=SC2086
  timeout 120 "${MPIRUN[@]}" -np 2 python3 benchmarks/mpi/${b}_dist.py $S --devices $D2 --no-check \
    --label cal-2ranks > "$OUT/logs/$b-2.log" 2>&1
  grep '^{' "$OUT/logs/$b-2.log" >> "$OUT/runs.jsonl"
done
echo "runs: $(wc -l < "$OUT/runs.jsonl") lines"
cat "$OUT/pingpong.txt"
python3 -c "
import json, sys
for l in open('$OUT/runs.jsonl'):
    d = json.loads(l); print(d['bench'], d['ranks'], 'rank(s)', '%.3f ms/iter' % (d['s_per_iter'] * 1e3))
"

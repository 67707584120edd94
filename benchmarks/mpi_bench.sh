#!/usr/bin/env bash
# mpi_bench.sh: CG and Jacobi distributed by rows over MPI ranks (benchmarks/mpi), polygpu from
# Python against the hand-written MPI + CUDA C, in one command; everything into $OUT:
#   summary.md       the table (benchmarks/mpi/summarize.py) and the environment
#   results.jsonl    one JSON line per run (ranks, devices, n, iterations, s_per_iter, check, ...)
#   mpi_bench.tar.gz all of it plus the logs (logs/: build, each run's stderr)
# Runs (the GPU ones first):
#   CPU devices (always): cg_dist.py and jacobi_dist.py on 1 (plain python3), 2 and 4 ranks,
#     devices host:1 per rank with PG_HOST_THREADS=1 (one core per rank): the CPU speedup.
#   one GPU or more: polygpu 1 rank on cuda:0, and 2 ranks sharing cuda:0 (correctness and the
#     ranks' overhead); the MPI + CUDA C on 1 rank and on 2 ranks sharing GPU 0.
#   two GPUs or more: polygpu 2 ranks x 1 GPU (devices auto: GPU i for local rank i) and 1 rank x
#     2 GPUs (devices cuda:0,1), the MPI + CUDA C on 2 ranks x 1 GPU.
# The MPI + CUDA C baselines (benchmarks/mpi/*_mpi.cu) are built and run only where nvcc and a
# GPU are; on CPU-only machines only the polygpu versions run.
# Usage (repository root): OUT=/tmp/out bash benchmarks/mpi_bench.sh [BUILD_DIR (build-gpu)]
# Sizes (arguments of the scripts): CPU_CG, CPU_JACOBI (default "--size small"), GPU_CG (default
# "--size large": n 49152, 25 iterations), GPU_JACOBI (default "--n 16384 --iterations 100");
# REPEATS (GPU timed runs, 5), CPU_REPEATS (3), BUDGET_S (270 s from the start, build included:
# runs that would start later are skipped; each run is cut at 120 s).
set -u
START=$SECONDS
BUILD=${1:-build-gpu}
OUT=${OUT:-/tmp/mpi-bench}
rm -rf "$OUT/logs"
mkdir -p "$OUT/logs"
J=$(nproc)
BUDGET_S=${BUDGET_S:-270}
REPEATS=${REPEATS:-5}
CPU_REPEATS=${CPU_REPEATS:-3}
CPU_CG=${CPU_CG:---size small}
CPU_JACOBI=${CPU_JACOBI:---size small}
GPU_CG=${GPU_CG:---size large}
GPU_JACOBI=${GPU_JACOBI:---n 16384 --iterations 100}
RES=$OUT/results.jsonl
: > "$RES"
note() { echo "$*" | tee -a "$OUT/logs/notes.txt" >&2; }

NGPU=0
if command -v nvidia-smi > /dev/null 2>&1; then
  NGPU=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')
fi
{
  echo "date: $(date -u +%FT%TZ)"; echo "commit: $(git rev-parse --short HEAD 2> /dev/null)"
  echo "host: $(hostname), $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  command -v mpirun && mpirun --version | head -1
  [ "$NGPU" -gt 0 ] && nvidia-smi -L
  command -v nvcc || ls /usr/local/cuda/bin/nvcc 2> /dev/null
} > "$OUT/logs/env.txt" 2>&1

# ---- build: polygpu with the Python binding and MPI; the baselines meanwhile
NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
BENCH_BIN=$BUILD/mpi-bench
mkdir -p "$BENCH_BIN"
NVCC_PIDS=()
if [ -n "$NVCC" ] && [ "$NGPU" -gt 0 ] && command -v mpicc > /dev/null; then
  CAP=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -1 | tr -d ' .')
  ARCH=sm_${CAP:-90}
  for b in cg jacobi; do
    # shellcheck disable=SC2046
    "$NVCC" -O3 -std=c++17 -arch="$ARCH" -Xcompiler -Wall,-Wextra $(mpicc --showme:compile) \
      -o "$BENCH_BIN/${b}_mpi" benchmarks/mpi/${b}_mpi.cu $(mpicc --showme:link) \
      > "$OUT/logs/nvcc-$b.log" 2>&1 &
    NVCC_PIDS+=($!)
  done
elif [ "$NGPU" -gt 0 ]; then
  note "no nvcc or no mpicc: the MPI + CUDA C baselines are not built"
fi
if ! { cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=ON > "$OUT/logs/cmake.log" 2>&1 &&
       cmake --build "$BUILD" -j"$J" --target polygpu pgpy_extension > "$OUT/logs/build.log" 2>&1; }; then
  note "build failed: see logs/cmake.log, logs/build.log"; tail -30 "$OUT/logs/build.log" >&2
  tar czf "$OUT/mpi_bench.tar.gz" -C "$OUT" logs results.jsonl; exit 1
fi
HAVE_BASE=0
if [ ${#NVCC_PIDS[@]} -gt 0 ]; then
  HAVE_BASE=1
  for p in "${NVCC_PIDS[@]}"; do wait "$p" || HAVE_BASE=0; done
  [ "$HAVE_BASE" = 1 ] || note "nvcc failed: see logs/nvcc-*.log (baselines skipped)"
fi
note "built in $((SECONDS - START)) s; $NGPU GPU(s); baselines: $HAVE_BASE"

# ---- running
export PYTHONPATH=$PWD/$BUILD/bindings/python PG_CACHE_DIR=$PWD/$BUILD/kernel-cache
export PGB_REF_CACHE=$PWD/$BUILD/mpi-bench/ref-cache PYTHONDONTWRITEBYTECODE=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# mpirun with this environment passed on to the ranks (the variables that are set)
mpirun_cmd() {
  MPIRUN=(mpirun --oversubscribe --bind-to none)
  local v
  for v in PYTHONPATH PG_CACHE_DIR PGB_REF_CACHE PYTHONDONTWRITEBYTECODE PG_HOST_THREADS \
           CUDA_VISIBLE_DEVICES; do
    [ -n "${!v+x}" ] && MPIRUN+=(-x "$v")
  done
}
left() { echo $((BUDGET_S - (SECONDS - START))); }
# one LABEL NP CMD...: a polygpu script (NP 1: plain python3, no mpirun) or a baseline (a file)
one() {
  local label=$1 np=$2; shift 2
  local l; l=$(left)
  if [ "$l" -lt 10 ]; then note "skipped $label $* (budget spent)"; return; fi
  [ "$l" -gt 120 ] && l=120
  local log t0=$SECONDS
  log=$OUT/logs/$label-$(basename "$1" .py)-$np.log
  if [ "$np" = 1 ] && [ "${1##*.}" = py ]; then
    timeout "$l" python3 "$@" > "$log.out" 2> "$log"
  elif [ "${1##*.}" = py ]; then
    mpirun_cmd
    timeout "$l" "${MPIRUN[@]}" -np "$np" python3 "$@" > "$log.out" 2> "$log"
  else
    mpirun_cmd
    timeout "$l" "${MPIRUN[@]}" -np "$np" "$@" > "$log.out" 2> "$log"
  fi
  local rc=$?
  if [ "${1##*.}" != py ] && [ $rc = 0 ]; then  # a baseline: check its sample
    python3 benchmarks/mpi/check_sample.py "$log.out" "$log.sample" >> "$log.out.checked" 2>> "$log"
    rc=$?
    cat "$log.out.checked" >> "$RES"
  else
    grep '^{' "$log.out" >> "$RES"
  fi
  note "$label $(basename "$1") np=$np: rc $rc, $((SECONDS - t0)) s"
  [ $rc = 0 ] || tail -5 "$log" >&2
}
CG=benchmarks/mpi/cg_dist.py JAC=benchmarks/mpi/jacobi_dist.py
R="--repeats $REPEATS --warmup 1"

# GPUs first (the CPU part is the one to lose if the budget runs out)
base_args() { # the baselines' --n/--iterations from the scripts' size arguments
  python3 - "$1" "$@" << 'PYEOF'
import sys
sys.path.insert(0, "benchmarks")
from workloads import cg, jacobi
mod = {"cg": cg, "jacobi": jacobi}[sys.argv[1]]
a, n, it = sys.argv[3:], None, None
n, it = mod.SIZES[a[a.index("--size") + 1]] if "--size" in a else (None, None)
if "--n" in a: n = int(a[a.index("--n") + 1])
if "--iterations" in a: it = int(a[a.index("--iterations") + 1])
print("--n %d --iterations %d" % (n, it))
PYEOF
}
if [ "$NGPU" -ge 1 ]; then
  for b in cg jacobi; do
    if [ $b = cg ]; then S=$GPU_CG; P=$CG; else S=$GPU_JACOBI; P=$JAC; fi
    # shellcheck disable=SC2086
    {
      one gpu-1rank-1gpu 1 $P --devices cuda:0 --label gpu-1rank-1gpu $R $S
      one gpu-2ranks-share1gpu 2 $P --devices cuda:0 --label gpu-2ranks-share1gpu $R $S
      if [ "$NGPU" -ge 2 ]; then
        one gpu-2ranks-x1gpu 2 $P --devices auto --label gpu-2ranks-x1gpu $R $S
        one gpu-1rank-x2gpu 1 $P --devices cuda:0,1 --label gpu-1rank-x2gpu $R $S
      fi
      if [ "$HAVE_BASE" = 1 ]; then
        BA=$(base_args $b $S)
        L=$OUT/logs
        one mpicuda-1rank 1 "$BENCH_BIN/${b}_mpi" $BA $R --label mpicuda-1rank \
          --sample "$L/mpicuda-1rank-${b}_mpi-1.log.sample"
        CUDA_VISIBLE_DEVICES=0 one mpicuda-2ranks-share1gpu 2 "$BENCH_BIN/${b}_mpi" $BA $R \
          --label mpicuda-2ranks-share1gpu --sample "$L/mpicuda-2ranks-share1gpu-${b}_mpi-2.log.sample"
        if [ "$NGPU" -ge 2 ]; then
          one mpicuda-2ranks-x1gpu 2 "$BENCH_BIN/${b}_mpi" $BA $R --label mpicuda-2ranks-x1gpu \
            --sample "$L/mpicuda-2ranks-x1gpu-${b}_mpi-2.log.sample"
        fi
      fi
    }
  done
fi

# CPU devices: one core per rank
export PG_HOST_THREADS=1
R="--repeats $CPU_REPEATS --warmup 1"
for np in 1 2 4; do
  # shellcheck disable=SC2086
  one cpu-${np}rank $np $CG --devices host:1 --label cpu-${np}rank $R $CPU_CG
  # shellcheck disable=SC2086
  one cpu-${np}rank $np $JAC --devices host:1 --label cpu-${np}rank $R $CPU_JACOBI
done
unset PG_HOST_THREADS
R="--repeats $REPEATS --warmup 1"

# ---- the summary and the archive
{
  echo "# mpi_bench.sh: CG and Jacobi distributed by rows over MPI ranks"
  echo
  echo '```'; cat "$OUT/logs/env.txt"; echo '```'
  echo
  echo "CPU rows: devices host:1 per rank, PG_HOST_THREADS=1 (one core per rank), sizes"
  echo "\`$CPU_CG\` (CG) and \`$CPU_JACOBI\` (Jacobi); GPU rows ($NGPU GPU(s) here): \`$GPU_CG\`"
  echo "and \`$GPU_JACOBI\`. Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "ms / iter: median of the timed runs ($CPU_REPEATS on CPU devices, $REPEATS on GPUs) after 1"
  echo "warm-up, divided by the iterations."
  echo "Versions: polygpu = benchmarks/mpi/*_dist.py; mpi-cuda = benchmarks/mpi/*_mpi.cu."
  echo
  python3 benchmarks/mpi/summarize.py "$RES"
  echo
  echo '```'; cat "$OUT/logs/notes.txt"; echo '```'
} > "$OUT/summary.md" 2> "$OUT/logs/summary-errors.txt"
rm -f "$OUT/logs/"*.sample
tar czf "$OUT/mpi_bench.tar.gz" -C "$OUT" summary.md results.jsonl logs && rm -rf "$OUT/logs"
echo "done in $((SECONDS - START)) s: $(ls "$OUT")"
cat "$OUT/summary.md"

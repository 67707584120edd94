#!/usr/bin/env bash
# mpi_ab.sh: CG and Jacobi on 2 ranks x 1 GPU, polygpu BEFORE and AFTER a change side by side
# with the hand-written MPI + CUDA C, in one command on one machine (issue 35 item 4: receives
# and sends asynchronous). Everything into $OUT:
#   summary.md      the table (benchmarks/mpi/summarize.py: ms / iter, ratio to the hand-written
#                   2 ranks x 1 GPU) and the environment
#   results.jsonl   one JSON line per run (label before-* / after-* / mpicuda-*)
#   logs.tar.gz     builds and every run's stderr
# AFTER is this tree. BEFORE is another tree: BASE_DIR=<its root>, or BASE_TAR=<a tarball of it>
# (git archive: the device machine has no git history), or BASE=<commit> when this tree is a git
# checkout holding that commit. The runs alternate (before, after, baseline; twice), each 5 timed
# runs after a warm-up, each checked against NumPy. Sizes: CG n 49152, 25 iterations (--size
# large); Jacobi n 16384, 100 sweeps, as the 2026-11-26 measurement. BUDGET_S (default 420 s,
# builds included) skips the runs that would start later.
# Usage (repository root):
#   git archive --format=tar.gz -o base.tar.gz 5b5595b     # on a machine with the history
#   OUT=/tmp/out BASE_TAR=base.tar.gz bash benchmarks/mpi_ab.sh
set -u
START=$SECONDS
OUT=${OUT:-/tmp/mpi-ab}
BUDGET_S=${BUDGET_S:-420}
REPEATS=${REPEATS:-5}
CG_ARGS=${CG_ARGS:---size large}
JAC_ARGS=${JAC_ARGS:---n 16384 --iterations 100}
mkdir -p "$OUT/logs"
J=$(nproc)
RES=$OUT/results.jsonl
: > "$RES"
note() { echo "$*" | tee -a "$OUT/logs/notes.txt" >&2; }
{
  echo "date: $(date -u +%FT%TZ)"; echo "host: $(hostname), $(nproc) cores"
  mpirun --version | head -1; nvidia-smi -L
  echo "CUDA-aware MPI (ompi_info): $(ompi_info --parsable --all 2> /dev/null |
    grep -m1 mpi_built_with_cuda_support:value || echo unknown)"
} > "$OUT/logs/env.txt" 2>&1

# ---- the BEFORE tree
BDIR=$PWD/build-ab/before-src
if [ -n "${BASE_DIR:-}" ]; then
  BDIR=$BASE_DIR
elif [ -n "${BASE_TAR:-}" ]; then
  rm -rf "$BDIR"; mkdir -p "$BDIR" && tar xzf "$BASE_TAR" -C "$BDIR"
elif [ -n "${BASE:-}" ]; then
  rm -rf "$BDIR"; mkdir -p "$BDIR" && git archive "$BASE" | tar x -C "$BDIR"
else
  note "no BASE_DIR, BASE_TAR or BASE: only AFTER and the baseline run"; BDIR=
fi
[ -n "$BDIR" ] && [ ! -f "$BDIR/core/ranks.c" ] && { note "no tree at $BDIR"; BDIR=; }

# ---- builds: both trees and the baselines at once
build() { # root dir label
  (cd "$1" && cmake -S . -B "$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=ON \
     > "$OUT/logs/cmake-$3.log" 2>&1 &&
   cmake --build "$2" -j"$J" --target polygpu pgpy_extension > "$OUT/logs/build-$3.log" 2>&1)
}
BIN=$PWD/build-ab/mpi-bench
mkdir -p "$BIN"
CAP=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -1 | tr -d ' .')
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
PIDS=()
for b in cg jacobi; do
  # shellcheck disable=SC2046
  "$NVCC" -O3 -std=c++17 -arch=sm_${CAP:-90} $(mpicc --showme:compile) -o "$BIN/${b}_mpi" \
    benchmarks/mpi/${b}_mpi.cu $(mpicc --showme:link) > "$OUT/logs/nvcc-$b.log" 2>&1 &
  PIDS+=($!)
done
build "$PWD" build-ab after & PIDS+=($!)
[ -n "$BDIR" ] && { build "$BDIR" build-ab before & PIDS+=($!); }
for p in "${PIDS[@]}"; do wait "$p" || note "a build failed (see logs/)"; done
note "built in $((SECONDS - START)) s"

# ---- runs
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONDONTWRITEBYTECODE=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none # as mpi_bench.sh
export PGB_REF_CACHE=$PWD/build-ab/ref-cache
left() { echo $((BUDGET_S - (SECONDS - START))); }
run() { # label root script args... (a .py under root, or a baseline binary)
  local label=$1 root=$2; shift 2
  local l; l=$(left)
  if [ "$l" -lt 20 ]; then note "skipped $label (budget spent)"; return; fi
  [ "$l" -gt 150 ] && l=150
  local log=$OUT/logs/$label-$(basename "$1" .py) t0=$SECONDS rc
  if [ "${1##*.}" = py ]; then
    PYTHONPATH=$root/build-ab/bindings/python PG_CACHE_DIR=$root/build-ab/kernel-cache \
      timeout "$l" mpirun --oversubscribe --bind-to none -x PYTHONPATH -x PG_CACHE_DIR \
      -x PGB_REF_CACHE -np 2 python3 "$root/$1" "${@:2}" --devices auto --label "$label" \
      --repeats "$REPEATS" --warmup 1 > "$log.out" 2> "$log.err"
    rc=$?
    grep '^{' "$log.out" >> "$RES"
  else
    timeout "$l" mpirun --oversubscribe --bind-to none -np 2 "$@" --label "$label" \
      --repeats "$REPEATS" --warmup 1 --sample "$log.sample" > "$log.out" 2> "$log.err"
    rc=$?
    [ $rc = 0 ] && python3 benchmarks/mpi/check_sample.py "$log.out" "$log.sample" >> "$RES" \
      2>> "$log.err"
    rm -f "$log.sample"
  fi
  note "$label: rc $rc, $((SECONDS - t0)) s"
  [ $rc = 0 ] || tail -5 "$log.err" >&2
}
base_args() { # the baselines' --n/--iterations from the scripts' size arguments
  python3 - "$@" << 'PYEOF'
import sys
sys.path.insert(0, "benchmarks")
from workloads import cg, jacobi
mod = {"cg": cg, "jacobi": jacobi}[sys.argv[1]]
a = sys.argv[2:]
n, it = mod.SIZES[a[a.index("--size") + 1]] if "--size" in a else (None, None)
if "--n" in a: n = int(a[a.index("--n") + 1])
if "--iterations" in a: it = int(a[a.index("--iterations") + 1])
print("--n %d --iterations %d" % (n, it))
PYEOF
}
# shellcheck disable=SC2086
for round in 1 2; do
  for b in cg jacobi; do
    if [ $b = cg ]; then S=$CG_ARGS; else S=$JAC_ARGS; fi
    [ -n "$BDIR" ] && run before-2ranks-x1gpu "$BDIR" benchmarks/mpi/${b}_dist.py $S
    run after-2ranks-x1gpu "$PWD" benchmarks/mpi/${b}_dist.py $S
    [ -x "$BIN/${b}_mpi" ] && run mpicuda-2ranks-x1gpu "$PWD" "$BIN/${b}_mpi" $(base_args $b $S)
  done
done

{
  echo "# mpi_ab.sh: CG and Jacobi, 2 ranks x 1 GPU: polygpu before / after, hand-written MPI + CUDA C"
  echo; echo '```'; cat "$OUT/logs/env.txt"; echo '```'; echo
  echo "Sizes: CG \`$CG_ARGS\`, Jacobi \`$JAC_ARGS\`; ms / iter: median of $REPEATS timed runs after"
  echo "1 warm-up, per run; two rounds (before, after, baseline alternate). ratio: time / the"
  echo "hand-written MPI + CUDA C's (the first of its runs at that size)."
  echo; python3 benchmarks/mpi/summarize.py "$RES"
  echo; echo '```'; cat "$OUT/logs/notes.txt"; echo '```'
} > "$OUT/summary.md" 2> "$OUT/logs/summary-errors.txt"
tar czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
echo "done in $((SECONDS - START)) s"
cat "$OUT/summary.md"

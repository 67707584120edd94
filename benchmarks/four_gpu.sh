#!/usr/bin/env bash
# benchmarks/four_gpu.sh: issue 42's four-GPU run on nvidia-h200-x4, in two parts that each fit
# one device command (10 minutes, ~8 files of <= 16 MiB back from $OUT), results packed in $OUT.
#
#   part1  build (build-gpu/, RelWithDebInfo, -j$(nproc); only brought up to date when there);
#          CG, CG on views, Jacobi at medium and large on 1, 2, 4 GPUs side by side: polygpu
#          (minmax-transfer-time, as on 2026-11-26), the hand-written CUDA C as one CUDA graph
#          (cuda) and issued on streams (cuda-streams); the GPU timeline (trace on, CUPTI) of
#          CG, CG on views and Jacobi at medium on 4 GPUs, with trace_summary.py's attribution;
#          METG on 1 and 4 GPUs (polygpu from C eager and replayed, CUDA C streams and graph);
#          then, as time allows: the three polygpu versions under earliest-finish (the
#          library's default) at 2 and 4 GPUs; at 4 GPUs medium the recording variants (CG
#          eager and one recording per run, Jacobi eager and one recording per sweep); a timing
#          profile one kernel at a time (1 GPU) for the simulator (benchmarks/four_gpu_sim.py).
#   part2  build if needed; the spread case (benchmarks/spread.py) on 4 and 2 GPUs; the five
#          workloads at the paper's largest size (paper-max) on 4 GPUs, then on 1 GPU for the
#          speedups: polygpu, polygpu-split (VEC, B&S, MUL), CUDA C.
#
# Every run.py step: --runs 3 --warmup 1 (medians of 3), every value validated. Each part stops
# starting steps at PART_BUDGET seconds (default 500; run.py's --time-budget is what is left
# less a reserve), so it ends inside the device's 600 s with the packing; a step cut for time
# says so in steps.log. The sample is smaller than the suite's usual 10 runs after 3 warm-ups,
# as on 2026-11-26 (3 after 1).
#
# Results: $OUT/four-PART.tgz (texts and JSON: run.py's JSON and Markdown, logs, CSVs, the
# attribution), $OUT/four-PART-traces.tgz (part1's Chrome traces, dropped largest first to stay
# under 15 MiB), $OUT/four-PART.log (this script's log). Then, here:
#   mkdir -p /tmp/four && for f in OUT/four-part*.tgz; do tar xzf $f -C /tmp/four; done
#   python3 benchmarks/four_gpu_report.py /tmp/four --out benchmarks/results/<date>-h200x4-<commit>-four/README.md
#
# Usage (repository root, nvidia-h200-x4, CUDA 13, python3 with numpy; no network needed):
#   bash benchmarks/four_gpu.sh part1
#   bash benchmarks/four_gpu.sh part2
# PGB_COMMIT=<commit> records the commit benchmarked (the device's copy of .git may be stale;
# without it git's HEAD and the tree's hash are recorded, and four_gpu_report.py finds the
# commit with that tree).
# FOUR_CPU_TEST=1: the same steps on CPU devices (host:4, tiny sizes, build/ unless
# FOUR_BUILD_DIR says otherwise; no CUDA C): a test of this script, not a measurement.
set -uo pipefail
cd "$(dirname "$0")/.."
PART=${1:-}
case "$PART" in
  part1 | part2) ;;
  *) echo "usage: bash benchmarks/four_gpu.sh part1|part2" >&2; exit 2 ;;
esac
OUT=${OUT:-$PWD/four-gpu-out}
BUDGET=${PART_BUDGET:-500}
T0=$SECONDS
ROOT=$PWD
if [ "${FOUR_CPU_TEST:-0}" = 1 ]; then
  B=${FOUR_BUILD_DIR:-build} DEVS=host:4 G4=host:4 G2=host:2 G1=host:1 S2=tiny S1=tiny SP=tiny
  SPREAD=(--n 65536 --steps 200 --reps 3)
else
  B=${FOUR_BUILD_DIR:-build-gpu} DEVS=cuda G4=cuda:0,1,2,3 G2=cuda:0,1 G1=cuda:0 S2=medium,large S1=medium
  SP=paper-max SPREAD=(--n 16777216 --steps 2000 --reps 5)
fi
export PG_CACHE_DIR=$ROOT/$B/kernel-cache
export PGB_REF_CACHE=$ROOT/$B/bench-references
export PYTHONPATH=$ROOT/$B/bindings/python${PYTHONPATH:+:$PYTHONPATH}
R=$ROOT/$B/four/$PART # raw results, packed into $OUT at the end
rm -rf "$R"
mkdir -p "$R" "$OUT"
LOG=$R/$PART.log
exec > >(tee -a "$LOG") 2>&1
left() { echo $((BUDGET - (SECONDS - T0))); }
step() { echo "[$((SECONDS - T0)) s] $*" | tee -a "$R/steps.log"; }
# enough NEED: whether NEED seconds are left; else the step is logged as cut.
enough() {
  if [ "$(left)" -lt "$1" ]; then
    step "CUT for time ($(left) s left, needs ~$1 s): $2"
    return 1
  fi
}
# run.py's budget: what is left less RESERVE, at least 20 s.
rbudget() { local b=$(($(left) - $1)); [ $b -lt 20 ] && b=20; echo $b; }

step "$PART: GPUs, commit"
{
  date -u
  nvidia-smi -L
  nvidia-smi topo -m
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  echo "cpus $(nproc)"
  ls -l /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda/lib64/libcupti.so* 2>&1
} >"$R/env.txt" 2>&1
{
  echo "PGB_COMMIT ${PGB_COMMIT:-}"
  echo "git_head $(git rev-parse HEAD 2>/dev/null || echo none)"
  # The tree's hash as git would commit it: names the sources even when .git is stale.
  # (It writes the tree's objects into .git: on the device's throwaway copy only.)
  if [ "${FOUR_CPU_TEST:-0}" != 1 ]; then
    idx=$(mktemp -u)
    GIT_INDEX_FILE=$idx git add -A . >/dev/null 2>&1 &&
      echo "tree $(GIT_INDEX_FILE=$idx git write-tree 2>/dev/null)"
    rm -f "$idx"
  fi
} >"$R/commit.txt" 2>&1
COMMIT=${PGB_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
cat "$R/commit.txt"

step "build ($B)"
if [ -f "$B/CMakeCache.txt" ] && ls "$B"/bindings/python/polygpu/_polygpu*.so >/dev/null 2>&1; then
  cmake --build "$B" -j"$(nproc)" --target pgpy_extension granularity >"$R/build.log" 2>&1
else
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=ON \
    -DPython3_EXECUTABLE="$(command -v python3)" >"$R/build.log" 2>&1 &&
    cmake --build "$B" -j"$(nproc)" --target pgpy_extension granularity >>"$R/build.log" 2>&1
fi || { tail -40 "$R/build.log"; step "build failed"; }
step "built"

RUN=(python3 benchmarks/run.py --devices "$DEVS" --build never --build-dir "$B" --no-plots --out-dir "$R"
     --commit "$COMMIT" --mul-sweep none --warmup 1 --runs 3)

if [ "$PART" = part1 ]; then
  # ~90 s: 42 configurations (2026-11-26: 30 in 53 s) and two nvcc builds.
  step "suite: cg, cg-views, jacobi; medium, large; 1, 2, 4 GPUs; polygpu, cuda, cuda-streams"
  "${RUN[@]}" --bench cg,cg-views,jacobi --sizes "$S2" --versions polygpu,cuda,cuda-streams \
    --policies minmax-transfer-time --gpus 1,2,4 --name four --time-budget "$(rbudget 200)" \
    >"$R/four.log" 2>&1
  tail -3 "$R/four.log"

  # ~35 s. Trace on, timing events off (PG_TRACE_EVENTS=0: the host does not pay two event
  # records per launch; CUPTI times the GPU). Under the trace a replay runs eagerly (ARCHITECTURE
  # decision 16), so this is the eager issue's timeline, timed beside it by the same run.py.
  if enough 40 "timeline"; then
    step "GPU timeline: cg, cg-views, jacobi medium on 4 GPUs, trace on (CUPTI)"
    PG_TRACE_EVENTS=0 "${RUN[@]}" --bench cg,cg-views,jacobi --sizes "$S1" --versions polygpu \
      --policies minmax-transfer-time --gpus 4 --trace "$R/traces" --name timeline \
      --time-budget "$(rbudget 150)" >"$R/timeline.log" 2>&1
    for t in "$R"/traces/*-trace.json; do
      [ -f "$t" ] || continue
      b=$(basename "$t" -trace.json)
      python3 benchmarks/trace_summary.py "$t" --kernels polygpu --json "$R/attribution-$b.json" \
        >"$R/attribution-$b.txt" 2>&1
    done
    grep -h "gpu timeline\|idle between" "$R"/attribution-*.txt | head -20
  fi

  # ~40 s: four METG runs and one nvcc build.
  if enough 45 "granularity"; then
    step "granularity (METG): polygpu C on cuda:0 and cuda:0,1,2,3; CUDA C on 1 and 4 GPUs"
    "$B/benchmarks/granularity" "$G4" 2000 >"$R/gran-polygpu-4.csv" 2>&1
    "$B/benchmarks/granularity" "$G1" 2000 >"$R/gran-polygpu-1.csv" 2>&1
    if command -v nvcc >/dev/null && nvcc -O3 -arch=sm_90 -o "$B/granularity_cuda" \
      benchmarks/granularity_cuda.cu >"$R/nvcc-granularity.log" 2>&1; then
      "$B/granularity_cuda" 4 2000 >"$R/gran-cuda-4.csv" 2>&1
      "$B/granularity_cuda" 1 2000 >"$R/gran-cuda-1.csv" 2>&1
    fi
    grep -h METG "$R"/gran-*.csv
  fi

  # ~30 s: 12 configurations.
  if enough 45 "earliest-finish"; then
    step "earliest-finish (the library's default policy): polygpu at 2 and 4 GPUs"
    "${RUN[@]}" --bench cg,cg-views,jacobi --sizes "$S2" --versions polygpu \
      --policies earliest-finish --gpus 2,4 --name four-ef --time-budget "$(rbudget 100)" \
      >"$R/four-ef.log" 2>&1
    tail -2 "$R/four-ef.log"
  fi

  # ~35 s: four invocations of one or two configurations.
  for v in "cg-eager PGB_CG_RECORD=0 cg,cg-views" "cg-run PGB_CG_RECORD=run cg,cg-views" \
    "jacobi-eager PGB_JACOBI_RECORD=0 jacobi" "jacobi-rp16 PGB_JACOBI_RECORD_PARTITIONS=16 jacobi"; do
    read -r name env bench <<<"$v"
    enough 40 "variant $name" || break
    step "variant $name ($env): $bench medium on 4 GPUs"
    env "$env" "${RUN[@]}" --bench "$bench" --sizes "$S1" --versions polygpu \
      --policies minmax-transfer-time --gpus 4 --name "variant-$name" \
      --time-budget "$(rbudget 60)" >"$R/variant-$name.log" 2>&1
    grep "^\[" "$R/variant-$name.log"
  done

  # ~30 s: the simulator's kernel times for these workloads at both sizes.
  if enough 40 "profile"; then
    step "timing profile one kernel at a time (PG_EXECUTION=sync), 1 GPU"
    PG_PROFILE=$R/profile-sync.csv PG_EXECUTION=sync "${RUN[@]}" --runs 2 \
      --bench cg,cg-views,jacobi --sizes "$S2" --versions polygpu \
      --policies minmax-transfer-time --gpus 1 --name profile-run --time-budget "$(rbudget 30)" \
      >"$R/profile-run.log" 2>&1
    gzip -f "$R/profile-sync.csv" 2>/dev/null
  fi
else
  # ~30 s.
  if enough 40 "spread"; then
    step "spread: eight independent calls on one input, 4 and 2 GPUs"
    python3 benchmarks/spread.py --devices "$DEVS" "${SPREAD[@]}" >"$R/spread.txt" 2>&1
    python3 benchmarks/spread.py --devices "$G2" "${SPREAD[@]}" >>"$R/spread.txt" 2>&1
    cat "$R/spread.txt"
  fi
  # ~140 s: 13 configurations (5-11 s each at this size) and up to five nvcc builds.
  if enough 60 "paper-max 4 GPUs"; then
    step "paper-max, 4 GPUs: vec, bs, ml, cg, mul; polygpu, polygpu-split, cuda"
    "${RUN[@]}" --bench vec,bs,ml,cg,mul --sizes "$SP" --versions polygpu,polygpu-split,cuda \
      --policies minmax-transfer-time --gpus 4 --name paper --time-budget "$(rbudget 140)" \
      >"$R/paper-4.log" 2>&1
    tail -3 "$R/paper-4.log"
  fi
  # ~110 s: the same on 1 GPU (the speedups), merged into paper.json; cut first.
  if enough 60 "paper-max 1 GPU"; then
    step "paper-max, 1 GPU"
    "${RUN[@]}" --bench vec,bs,ml,cg,mul --sizes "$SP" --versions polygpu,polygpu-split,cuda \
      --policies minmax-transfer-time --gpus 1 --name paper --time-budget "$(rbudget 25)" \
      >"$R/paper-1.log" 2>&1
    tail -3 "$R/paper-1.log"
  fi
fi

step "pack"
cp "$LOG" "$OUT/four-$PART.log"
tar czf "$OUT/four-$PART.tgz" -C "$ROOT/$B/four" --exclude='traces' "$PART"
if [ -d "$R/traces" ]; then
  tar czf "$OUT/four-$PART-traces.tgz" -C "$ROOT/$B/four" "$PART/traces"
  # Over 15 MiB: the DAG exports go first, then the largest traces.
  while [ "$(stat -c %s "$OUT/four-$PART-traces.tgz")" -gt 15000000 ]; do
    big=$(ls -S "$R"/traces/*-dag.json 2>/dev/null | head -1)
    [ -n "$big" ] || big=$(ls -S "$R"/traces/*.json | head -1)
    [ -n "$big" ] || break
    echo "traces over 15 MiB: left out $(basename "$big")" | tee -a "$R/steps.log"
    rm -f "$big"
    tar czf "$OUT/four-$PART-traces.tgz" -C "$ROOT/$B/four" "$PART/traces"
  done
fi
ls -l "$OUT"
step "$PART done"

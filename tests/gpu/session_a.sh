#!/usr/bin/env bash
# tests/gpu/session_a.sh: one device command (< 600 s) for the GPU checks and figures that do not
# need several ranks: builds build-gpu/ once, then each step under its own time limit, and packs
# every result into $OUT/session-a.tgz (a device command brings back a few files only).
#   cupti   tests/gpu/cupti.sh: a kernel and a copy with GPU timestamps; attribution runs
#   mixed   tests/gpu/mixed.sh: cuda,host:2 runtimes; MCL's small DGEMM (issue 38 item 4)
#   node    benchmarks/node/run.sh gpu: MCL Figs. 8 and 7, the node's launch cost, MPS (issue 39)
# Usage (repository root, GPU machine): OUT=/tmp/out bash tests/gpu/session_a.sh [steps...]
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/session-a}
W=/tmp/session-a-work
rm -rf "$W" && mkdir -p "$W" "$OUT"
T0=$(date +%s)
left() { echo $((${LIMIT:-560} - ($(date +%s) - T0))); }
steps=${*:-cupti mixed node}
{ nvidia-smi -L; date -u; git rev-parse HEAD 2>/dev/null; } > "$W/env.txt"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=ON \
  -DPython3_EXECUTABLE="$(command -v python3)" > "$W/build.log" 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" >> "$W/build.log" 2>&1 || { tail -30 "$W/build.log"; }
echo "build: $(($(date +%s) - T0)) s" | tee -a "$W/env.txt"
ln -sfn build-gpu build # benchmarks/node/run.sh builds build/ when it finds none
run_step() { # name budget command...
  local name=$1 budget=$2; shift 2
  local l; l=$(left)
  [ "$budget" -gt "$l" ] && budget=$l
  if [ "$budget" -lt 20 ]; then echo "== $name: CUT for time" | tee -a "$W/env.txt"; return; fi
  echo "== $name ($budget s) $(date +%T)"
  mkdir -p "$W/$name"
  OUT=$W/$name timeout "$budget" "$@" > "$W/$name/console.log" 2>&1
  echo "== $name: exit $? after $(($(date +%s) - T0)) s" | tee -a "$W/env.txt"
  tail -25 "$W/$name/console.log"
}
for s in $steps; do
  case $s in
    cupti) run_step cupti 150 bash tests/gpu/cupti.sh ;;
    mixed) run_step mixed 170 bash tests/gpu/mixed.sh ;;
    node) run_step node 220 env SECONDS_PER_JOB=2 TASKS=20000 bash benchmarks/node/run.sh gpu ;;
  esac
done
tar czf "$OUT/session-a.tgz" -C "$W" .
ls -l "$OUT"

#!/usr/bin/env bash
# tests/gpu/session_c.sh: one device command (< 600 s): every C test on the GPUs, the Python suite
# on the GPUs, the launch and METG figures against a base tree (benchmarks/finegrain_gpu.sh), and
# the workload suite under both default policies (benchmarks/placement_gpu.sh), each step under
# its own time limit; results packed into $OUT/session-c.tgz.
# Usage (repository root): OUT=/tmp/out BASE_TAR=<git archive of the base> bash tests/gpu/session_c.sh [steps...]
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/session-c}
W=/tmp/session-c-work
rm -rf "$W" && mkdir -p "$W" "$OUT"
T0=$(date +%s)
left() { echo $((${LIMIT:-565} - ($(date +%s) - T0))); }
steps=${*:-csuite finegrain pysuite placement}
export PG_CACHE_DIR=$PWD/build-gpu/kernel-cache PG_SHARE=off
{ nvidia-smi -L; date -u; } > "$W/env.txt"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=ON \
  -DPython3_EXECUTABLE="$(command -v python3)" > "$W/build.log" 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" >> "$W/build.log" 2>&1 || tail -30 "$W/build.log"
echo "build: $(($(date +%s) - T0)) s" | tee -a "$W/env.txt"
run_step() { # name budget command...
  local name=$1 budget=$2; shift 2
  local l; l=$(left)
  [ "$budget" -gt "$l" ] && budget=$l
  if [ "$budget" -lt 20 ]; then echo "== $name: CUT for time" | tee -a "$W/env.txt"; return; fi
  echo "== $name ($budget s) $(date +%T)"
  mkdir -p "$W/$name"
  OUT=$W/$name timeout "$budget" "$@" > "$W/$name/console.log" 2>&1
  echo "== $name: exit $? after $(($(date +%s) - T0)) s" | tee -a "$W/env.txt"
  tail -15 "$W/$name/console.log"
}
for s in $steps; do
  case $s in
    csuite) run_step csuite 200 bash -c 'cd build-gpu && PG_TEST_DEVICES=cuda PG_TEST_REQUIRE_GPU=1 PG_DEVICES=cuda ctest --output-on-failure -j8 -LE "python|lua|java|readme|mpi" -E "soak|fuzz|pip_install|install|sim_cluster" 2>&1 | tail -40' ;;
    pysuite) run_step pysuite 120 bash -c 'cd bindings/python/tests && PYTHONPATH=$PWD/../../../build-gpu/bindings/python PG_DEVICES=cuda python3 -m pytest -q -x -p no:cacheprovider 2>&1 | tail -15' ;;
    finegrain) run_step finegrain 170 bash benchmarks/finegrain_gpu.sh ;;
    placement) run_step placement 200 bash benchmarks/placement_gpu.sh ;;
  esac
done
tar czf "$OUT/session-c.tgz" -C "$W" .
ls -l "$OUT"

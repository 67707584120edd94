#!/usr/bin/env bash
# tests/gpu/cupti.sh: the GPU's own timeline (CUPTI, devices/cuda/cu_cupti.c) on a GPU machine
# with the CUDA toolkit (CUDA 13: libcupti.so in /usr/local/cuda/lib64 or extras/CUPTI/lib64).
#  1. builds (build-gpu/), checks cu_cupti_abi.h against the toolkit's CUPTI headers;
#  2. test_cupti_double gpu: a host write, three kernels, copies host->GPU (GPU->GPU with two
#     GPUs) and GPU->host: every kernel and copy vertex has its GPU span, with its id, device
#     and direction, after its submission and its driver call, before the sync returned, spans
#     of one GPU stream in order (PG_TEST_SLACK_NS of slack for the clocks' mapping: 50 us);
#  3. the attribution runs, trace on (PG_TRACE) without timing events (PG_TRACE_EVENTS=0, so
#     the host does not pay two event records per launch): benchmarks/launch_overhead on GPU 0
#     (polygpu back to back, then the raw cuLaunchKernel loop beside it in the same process),
#     benchmarks/granularity on GPU 0 and on GPUs 0,1; benchmarks/trace_summary.py attributes
#     each GPU's idle time between kernels to host submission, copy engine, other GPU, or
#     launch latency / waits.
# Results in build-gpu/cupti/, packed into $OUT as cupti-results.tgz (texts and JSON) and
# cupti-traces.tgz (the Chrome traces; the granularity ones left out if over 15 MiB: $OUT
# brings back 8 files of 16 MiB at most). About 2-4 minutes, most of it the build.
# Usage: tests/gpu/cupti.sh   (nvidia-h200; with two GPUs (nvidia-h200-x2) the 2-GPU runs too)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/build-gpu/out}
mkdir -p "$OUT"
R=$PWD/build-gpu/cupti
rm -rf "$R"
mkdir -p "$R"
export PG_CACHE_DIR=$PWD/build-gpu/kernel-cache
status=0
step() { echo "== $* ($(date +%T))"; }
fail() { echo "FAILED: $*" | tee -a "$R/failures.txt"; status=1; }

step "GPUs and CUPTI"
nvidia-smi -L | tee "$R/gpus.txt"
ngpu=$(nvidia-smi -L | wc -l)
git rev-parse HEAD >"$R/commit.txt" 2>/dev/null || true
ls -l /usr/local/cuda/extras/CUPTI/lib64/libcupti* /usr/local/cuda/lib64/libcupti* 2>&1 |
  tee "$R/cupti-libs.txt"

step "build"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=ON >"$R/cmake.log" 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" --target test_cupti_double launch_overhead granularity \
    >>"$R/cmake.log" 2>&1 || { tail -40 "$R/cmake.log"; exit 1; }
if grep -q "^PG_CUPTI_INCLUDE:PATH=/" build-gpu/CMakeCache.txt; then
  cmake --build build-gpu --target test_cupti_layout >>"$R/cmake.log" 2>&1 &&
    build-gpu/tests/cudadouble/test_cupti_layout | tee "$R/cupti-layout.txt" ||
    fail "cu_cupti_abi.h against the toolkit's CUPTI headers"
fi

step "a kernel and a copy with GPU timestamps (test_cupti_double gpu)"
PG_TEST_TRACE=$R/cupti-check-trace.json build-gpu/tests/cudadouble/test_cupti_double gpu \
  >"$R/cupti-check.txt" 2>&1
rc=$?
cat "$R/cupti-check.txt"
[ $rc = 0 ] || fail "test_cupti_double gpu (exit $rc)"
PG_TEST_VERBOSE=1 build-gpu/tests/cudadouble/test_cupti_double gpu >"$R/cupti-check-spans.txt" 2>&1
python3 benchmarks/trace_summary.py "$R/cupti-check-trace.json" >"$R/cupti-check-summary.txt" 2>&1

step "attribution: launch_overhead on GPU 0, traced"
PG_TRACE=$R/launch-trace.json PG_TRACE_EVENTS=0 build-gpu/benchmarks/launch_overhead cuda:0 20000 \
  >"$R/launch_overhead-traced.txt" 2>&1 || fail "launch_overhead traced"
build-gpu/benchmarks/launch_overhead cuda:0 20000 >"$R/launch_overhead-untraced.txt" 2>&1
grep -h "ratio\|back-to-back" "$R"/launch_overhead-*.txt
# polygpu's back-to-back phase is its last 20000 kernels; the raw loop's back to back, the
# last 20001 kernels of none but the very last (a probe launched after 20000 event records).
python3 benchmarks/trace_summary.py "$R/launch-trace.json" --kernels polygpu --range=-20000: \
  --json "$R/launch-attribution-polygpu.json" | tee "$R/launch-attribution-polygpu.txt"
python3 benchmarks/trace_summary.py "$R/launch-trace.json" --kernels other --range=-20001:-1 \
  --json "$R/launch-attribution-raw.json" | tee "$R/launch-attribution-raw.txt"

for devs in cuda:0 cuda:0,1; do
  [ "$devs" = cuda:0 ] || [ "$ngpu" -ge 2 ] || continue
  tag=${devs//[:,]/-}
  step "attribution: granularity on $devs, traced"
  PG_TRACE=$R/granularity-$tag-trace.json PG_TRACE_EVENTS=0 \
    build-gpu/benchmarks/granularity "$devs" 1000 >"$R/granularity-$tag-traced.csv" 2>&1 ||
    fail "granularity $devs traced"
  grep "METG" "$R/granularity-$tag-traced.csv"
  python3 benchmarks/trace_summary.py "$R/granularity-$tag-trace.json" --kernels polygpu \
    --json "$R/granularity-$tag-attribution.json" | tee "$R/granularity-$tag-attribution.txt" |
    grep -A3 "as the GPU timed it"
done
# Back through $OUT: two files.
tar czf "$OUT/cupti-results.tgz" -C "$R" --exclude='*-trace.json' .
tar czf "$OUT/cupti-traces.tgz" -C "$R" $(cd "$R" && ls *-trace.json)
if [ "$(stat -c %s "$OUT/cupti-traces.tgz")" -gt 15000000 ]; then
  tar czf "$OUT/cupti-traces.tgz" -C "$R" cupti-check-trace.json launch-trace.json
fi
ls -l "$OUT"
[ -f "$R/failures.txt" ] && cat "$R/failures.txt"
exit $status

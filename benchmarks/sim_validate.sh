#!/usr/bin/env bash
# benchmarks/sim_validate.sh: validate the simulated devices against the GPUs of this machine, in
# one command, results in $OUT (default ./sim-validate-out):
#   1. builds polygpu (build-gpu/, unless --build-dir names a built tree);
#   2. measures the machine: polygpu-bandwidth's matrix (bandwidth.csv), each GPU's name, memory,
#      SMs and the memory bandwidth a copy kernel reaches (device.json);
#   3. records a timing profile of the suite one kernel at a time (PG_EXECUTION=sync,
#      profile-sync.csv), on one GPU;
#   4. runs the suite measured at 1, 2, ... N GPUs, every policy (measured.json);
#   5. predicts the same configurations on simulated devices: a topology built from the measured
#      matrix (benchmarks/sim_topo.py from-bandwidth, its first 1, 2, ... GPUs), and, when the
#      GPUs are H200s and N is 4 (or 2, 1), the preset h200x4-nv18 (h200x2-nv18, h200x1) too
#      (predicted.json, predicted-preset.json);
#   6. writes the predicted-vs-measured table (table.md, benchmarks/sim_compare.py).
# Needs: cmake, a C compiler, CUDA's driver and NVRTC, python3 with numpy; no network.
#
# Usage: benchmarks/sim_validate.sh [--gpus N] [--devices SPEC] [--sizes S] [--bench LIST]
#                                   [--build-dir DIR] [--runs R] [--warmup W]
#   --gpus N      GPUs to use, counts 1, 2, 4, ... up to N (default 4); 1 on a 1-GPU H100
#   --devices     cuda (default); host:4 runs the same steps on CPU devices (a test of the
#                 script, not a validation)
#   --sizes       medium (default)
# It finishes in ~4 minutes on a 4-GPU H100/H200 machine (the measured runs ~1.5 min, stopped
# at 4 min by run.py's --time-budget; the table then names what was not measured); every step's
# start is in $OUT/steps.log. On H100s the presets' launch costs and profile_us (measured on
# H200s) are used unmeasured; the topology's memory bandwidth is the copy kernel's.
set -euo pipefail
cd "$(dirname "$0")/.."
GPUS=4 DEVICES=cuda SIZES=medium BENCH=vec,bs,ml,cg,mul BUILD= RUNS=5 WARMUP=2
while [ $# -gt 0 ]; do
  case "$1" in
    --gpus) GPUS=$2 ;;
    --devices) DEVICES=$2 ;;
    --sizes) SIZES=$2 ;;
    --bench) BENCH=$2 ;;
    --build-dir) BUILD=$2 ;;
    --runs) RUNS=$2 ;;
    --warmup) WARMUP=$2 ;;
    *) echo "sim_validate.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift 2
done
OUT=${OUT:-$PWD/sim-validate-out}
mkdir -p "$OUT/topo"
T0=$SECONDS
step() { echo "[$((SECONDS - T0)) s] $*" | tee -a "$OUT/steps.log"; }

COUNTS=1
for c in 2 4 8 16; do [ "$c" -le "$GPUS" ] && COUNTS="$COUNTS,$c"; done
case "$DEVICES" in
  cuda) IDS=$(seq -s, 0 $((GPUS - 1))); DEVSPEC="cuda:$IDS" ;;
  host:*) DEVSPEC="host:$GPUS" ;;
  *) echo "sim_validate.sh: --devices cuda or host:N" >&2; exit 2 ;;
esac

if [ -z "$BUILD" ]; then
  BUILD=build-gpu
  step "build ($BUILD)"
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=ON \
    -DPython3_EXECUTABLE="$(command -v python3)" >"$OUT/cmake.log" 2>&1
  cmake --build "$BUILD" -j"$(nproc)" >>"$OUT/cmake.log" 2>&1 || { tail -40 "$OUT/cmake.log"; exit 1; }
fi
BUILD=$(cd "$BUILD" && pwd)
export PYTHONPATH=$BUILD/bindings/python${PYTHONPATH:+:$PYTHONPATH}
export PG_CACHE_DIR=${PG_CACHE_DIR:-$BUILD/kernel-cache}
(git rev-parse HEAD 2>/dev/null || cat .carry/commit 2>/dev/null || echo unknown) >"$OUT/commit.txt"
nvidia-smi -L >"$OUT/gpus.txt" 2>&1 || true
nvidia-smi topo -m >"$OUT/nvidia-smi-topo.txt" 2>&1 || true

step "interconnect matrix ($DEVSPEC)"
if [ "$DEVICES" = cuda ]; then BW_ARGS=(); else BW_ARGS=(--bytes 16777216 --reps 3); fi
"$BUILD/tools/polygpu-bandwidth" --devices "$DEVSPEC" "${BW_ARGS[@]}" --output "$OUT/bandwidth.csv" \
  >"$OUT/bandwidth.txt" 2>&1

step "device facts and memory bandwidth"
DEV0=${DEVSPEC%%,*}
python3 - "$DEV0" "$OUT/device.json" <<'EOF'
import json, sys, time
import polygpu as pg
spec, out = sys.argv[1], sys.argv[2]
src = r'''
extern "C" __global__ void copy_kernel(float *y, const float *x, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        y[i] = x[i];
}'''
with pg.Runtime(devices=spec) as rt:
    d = rt.devices[0]
    n = (256 << 20) if d["kind"] == "cuda" else (16 << 20)  # 1 GiB of float on GPUs
    k = rt.kernel(src, "copy_kernel")
    x, y = rt.array("float32", n), rt.array("float32", n)
    grid, block = (d["multiprocessors"] or 1) * 8, 256
    k(grid, block)(y, x, n)
    rt.sync()
    reps = 20 if d["kind"] == "cuda" else 3
    t0 = time.perf_counter()
    for _ in range(reps):
        k(grid, block)(y, x, n)
    rt.sync()
    sec = time.perf_counter() - t0
    gbps = 2 * 4 * n * reps / sec / 1e9
    facts = {"name": d["name"], "memory_bytes": d["memory_bytes"],
             "multiprocessors": d["multiprocessors"],
             "compute_capability": d["compute_capability"], "kind": d["kind"],
             "copy_kernel_gbps": gbps}
json.dump(facts, open(out, "w"), indent=1)
print(facts)
EOF

step "timing profile, one kernel at a time (1 GPU)"
rm -f "$OUT/profile-sync.csv"
PG_PROFILE="$OUT/profile-sync.csv" PG_EXECUTION=sync python3 benchmarks/run.py --devices "$DEV0" \
  --gpus 1 --bench "$BENCH" --sizes "$SIZES" --versions polygpu --policies minmax-transfer-time \
  --mul-sweep none --warmup 1 --runs 2 --no-plots --build never --build-dir "$BUILD" \
  --time-budget 120 --out-dir "$OUT" --name profile-run >"$OUT/profile-run.log" 2>&1 || tail -5 "$OUT/profile-run.log"
[ -s "$OUT/profile-sync.csv" ] || { echo "no profile recorded" >&2; exit 1; }

step "measured: $BENCH $SIZES at $COUNTS GPUs, every policy"
rm -f "$OUT/measured.json"
python3 benchmarks/run.py --devices "$DEVSPEC" --gpus "$COUNTS" --bench "$BENCH" --sizes "$SIZES" \
  --versions polygpu --policies all --mul-sweep none --warmup "$WARMUP" --runs "$RUNS" --no-plots \
  --build never --build-dir "$BUILD" --time-budget 240 --out-dir "$OUT" --name measured >"$OUT/measured.log" 2>&1 ||
  tail -5 "$OUT/measured.log"

step "topology from the measured matrix"
read -r NAME MEM SMS CC MEMBW < <(python3 -c "
import json; d = json.load(open('$OUT/device.json'))
print(d['name'].replace(' ', '~'), d['memory_bytes'], d['multiprocessors'] or 1,
      '%d.%d' % tuple(d['compute_capability']) if d['compute_capability'] else '-',
      '%.0f' % max(d['copy_kernel_gbps'], 1))")
NAME=${NAME//\~/ }
# The simulated GPUs take the name the profile's samples carry (the same GPUs' name; on CPU
# devices the name holds the thread count, which differs between host:1 and host:N).
PNAME=$(python3 -c "
import collections, csv
c = collections.Counter(r[2] for r in csv.reader(open('$OUT/profile-sync.csv'))
                        if len(r) > 2 and r[0] == 'sample')
print(c.most_common(1)[0][0] if c else '')")
[ -n "$PNAME" ] && NAME=$PNAME
case "$GPUS" in 1) LIKE=h200x1 ;; 2) LIKE=h200x2-nv18 ;; *) LIKE=h200x4-nv18 ;; esac
CC_ARG=(); [ "$CC" = - ] || CC_ARG=(--cc "$CC")  # CPU devices: the preset's
python3 benchmarks/sim_topo.py from-bandwidth "$OUT/bandwidth.csv" --like "$LIKE" \
  --name "measured-$GPUS" --gpu-name "$NAME" --memory "$MEM" --sms "$SMS" "${CC_ARG[@]}" \
  --memory-gbps "$MEMBW" --out "$OUT/topo/measured-$GPUS.topo"

SIM=(--profile "$OUT/profile-sync.csv" --gpus "$COUNTS" --bench "$BENCH" --sizes "$SIZES"
     --policies all --warmup "$WARMUP" --runs "$RUNS" --build-dir "$BUILD")
step "predicted on the measured topology"
rm -f "$OUT/predicted.json" "$OUT/predicted-preset.json"
python3 benchmarks/sim_scaling.py --machine "$OUT/topo/measured-$GPUS.topo" "${SIM[@]}" \
  --out-dir "$OUT" --name predicted >"$OUT/predicted.log" 2>&1 || tail -5 "$OUT/predicted.log"
EXTRA=()
if [ "$NAME" = "NVIDIA H200" ] && [ "$GPUS" -le 4 ] && [ "$GPUS" -ne 3 ]; then
  step "predicted on the preset $LIKE"
  python3 benchmarks/sim_scaling.py --machine "$LIKE" "${SIM[@]}" --out-dir "$OUT" \
    --name predicted-preset >"$OUT/predicted-preset.log" 2>&1 || tail -5 "$OUT/predicted-preset.log"
  EXTRA=(--extra "preset $LIKE" "$OUT/predicted-preset.json")
fi

step "table"
{
  echo "# Simulator validation on $GPUS x $NAME ($(date -u +%F), commit $(cat "$OUT/commit.txt"))"
  echo
  echo "Measured: benchmarks/run.py on $DEVSPEC. Predicted: simulated devices from the profile"
  echo "recorded here (profile-sync.csv) on topo/measured-$GPUS.topo (polygpu-bandwidth's matrix,"
  echo "memory bandwidth of a copy kernel: $MEMBW GB/s). Command: benchmarks/sim_validate.sh --gpus $GPUS."
  echo
  python3 benchmarks/sim_compare.py --measured "$OUT/measured.json" --predicted "$OUT/predicted.json" \
    "${EXTRA[@]}" --links
} >"$OUT/table.md"
cat "$OUT/table.md"
step "done"

#!/usr/bin/env bash
# placement_gpu.sh: issue "Placement that sees load" on GPUs, everything into $OUT, side by side
# in one command: the workload suite (the five GrCUDA workloads and the views workloads, large)
# under the new default earliest-finish and the old default minmax-transfer-time, on 1 and 2
# GPUs; the spread case (eight independent calls reading one input) on 2 GPUs and on every GPU.
# Usage (repository root, GPU machine, after a build in build-gpu/): OUT=/tmp/out bash benchmarks/placement_gpu.sh
set -u
OUT=${OUT:-/tmp/placement}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/build-gpu/bindings/python
NGPU=$(nvidia-smi -L | wc -l)
(cd benchmarks && python3 run.py --bench vec,bs,ml,cg,mul,jacobi,cg-views,mul-views --sizes large \
   --versions polygpu --policies earliest-finish,minmax-transfer-time --gpus 1,2 --runs 3 --warmup 1 \
   --build never --build-dir ../build-gpu --mul-sweep none --no-plots --out-dir "$OUT" \
   --name suite-policies) > "$OUT/suite.log" 2>&1
python3 benchmarks/spread.py --devices cuda:0,1 --n 16777216 --steps 2000 --reps 5 > "$OUT/spread.txt" 2>&1
[ "$NGPU" -gt 2 ] && python3 benchmarks/spread.py --devices cuda --n 16777216 --steps 2000 --reps 5 >> "$OUT/spread.txt" 2>&1
tail -40 "$OUT/suite.log"; cat "$OUT/spread.txt"

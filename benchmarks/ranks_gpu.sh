#!/usr/bin/env bash
# ranks_gpu.sh: the ranks layer (core/ranks.c) on a GPU machine, everything into $OUT:
#   env.txt          mpirun, GPUs
#   launch_*.txt     benchmarks/launch_overhead on cuda:0, 3 runs each: this tree built with MPI,
#                    and built without it (-DPG_MPI=OFF); BASE=<dir of another tree> adds that
#                    tree's (the single-process "before"), in the same call on the same GPU
#   examples.txt     examples/c/ranks.c and examples/python/ranks.py on 1 rank and on 2 ranks
#                    (devices "auto": the ranks share GPU 0 when there is one GPU, one GPU each
#                    when there are two), each must print the same checksum
#   ctest.txt        the distributed tests (CPU devices) and the single-process ranks test
# Usage (repository root): OUT=/tmp/out bash benchmarks/ranks_gpu.sh
set -u
OUT=${OUT:-/tmp/ranks-gpu}
mkdir -p "$OUT"
J=$(nproc)
{ command -v mpirun && mpirun --version | head -1; nvidia-smi -L; } > "$OUT/env.txt" 2>&1
if ! command -v mpirun > /dev/null; then
  echo "no mpirun on this machine: only the single-process figures are taken" >> "$OUT/env.txt"
fi
build() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > "$OUT/cmake-$(basename "$dir").log" 2>&1 &&
    cmake --build "$dir" -j"$J" > "$OUT/build-$(basename "$dir").log" 2>&1
}
build build-ranks -DPG_BINDINGS=ON || { echo "build failed: $OUT/build-build-ranks.log"; exit 1; }
build build-nompi -DPG_MPI=OFF -DPG_BINDINGS=OFF || echo "build without MPI failed" >> "$OUT/env.txt"
if [ -n "${BASE:-}" ]; then
  (cd "$BASE" && cmake -S . -B build-base -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPG_BINDINGS=OFF \
     > "$OUT/cmake-base.log" 2>&1 && cmake --build build-base -j"$J" --target launch_overhead \
     > "$OUT/build-base.log" 2>&1)
fi
for i in 1 2 3; do
  [ -n "${BASE:-}" ] && "$BASE/build-base/benchmarks/launch_overhead" cuda:0 20000 >> "$OUT/launch_base.txt" 2>&1
  build-nompi/benchmarks/launch_overhead cuda:0 20000 >> "$OUT/launch_nompi.txt" 2>&1
  build-ranks/benchmarks/launch_overhead cuda:0 20000 >> "$OUT/launch_ranks.txt" 2>&1
done
if command -v mpirun > /dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export PYTHONPATH=$PWD/build-ranks/bindings/python
  for np in 1 2; do
    echo "== C, $np rank(s), devices auto" >> "$OUT/examples.txt"
    PG_LOG=info mpirun --oversubscribe -np $np build-ranks/examples/c/polygpu-ranks >> "$OUT/examples.txt" 2>&1
    echo "== Python, $np rank(s), devices auto" >> "$OUT/examples.txt"
    mpirun --oversubscribe -np $np -x PYTHONPATH python3 examples/python/ranks.py >> "$OUT/examples.txt" 2>&1
  done
  (cd build-ranks && ctest --output-on-failure -R "mpi_|ranks" > "$OUT/ctest.txt" 2>&1)
fi
echo "done: $(ls "$OUT")"

#!/usr/bin/env bash
# build.sh: compile PgBench.java (VEC and B&S from Java) against polygpu.jar into a jar.
#   benchmarks/workloads/java/build.sh [polygpu.jar] [out.jar]
# Defaults: build/bindings/java/polygpu.jar and .carry/java/polygpu-bench.jar, the jar that
# benchmarks/run.py uses on a GPU machine (which has no javac; carry .carry/ there, after
# tests/gpu/prepare-carry.sh has put a Java runtime and polygpu-bundle.jar in it).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
jar_in="${1:-$root/build/bindings/java/polygpu.jar}"
jar_out="${2:-$root/.carry/java/polygpu-bench.jar}"
classes="$(mktemp -d)"
trap 'rm -rf "$classes"' EXIT
javac --release 17 -encoding UTF-8 -Xlint:all -Werror -cp "$jar_in" -d "$classes" \
  "$root/benchmarks/workloads/java/PgBench.java"
mkdir -p "$(dirname "$jar_out")"
jar cf "$jar_out" -C "$classes" .
echo "built $jar_out"

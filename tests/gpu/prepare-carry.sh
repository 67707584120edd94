#!/usr/bin/env bash
# tests/gpu/prepare-carry.sh: run here (Debian, after `make build`) before a GPU run. The GPU
# machine has no Lua and no Java and no network, so this gathers, under .carry/ (git-ignored;
# name it in the device tool's `carry`): Debian's Lua 5.4 packages (interpreter, library,
# headers), a jlink'ed Java runtime, JUnit's console launcher, and this build's jars.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .carry/lua .carry/java
if ! ls .carry/lua/lua5.4_*.deb >/dev/null 2>&1; then
  (cd .carry/lua && apt-get download lua5.4 liblua5.4-0 liblua5.4-dev)
fi
if [ ! -x .carry/java/jre/bin/java ]; then
  jlink --add-modules java.base,java.logging,java.xml,java.management,jdk.unsupported,jdk.zipfs \
    --strip-debug --no-header-files --no-man-pages --compress=2 --output .carry/java/jre
fi
cp /usr/share/java/junit-platform-console-standalone.jar .carry/java/junit.jar
# The bundled jar carries libpolygpu and the JNI library built here from this same commit.
B=${BUILD:-build}  # a build of the committed tree
cp $B/bindings/java/polygpu-bundle.jar $B/bindings/java/polygpu-tests.jar \
  $B/bindings/java/polygpu-quickstart.jar .carry/java/
git rev-parse HEAD > .carry/java/commit
# The Java version of the benchmark suite (no javac on the GPU machine).
benchmarks/workloads/java/build.sh $B/bindings/java/polygpu.jar .carry/java/polygpu-bench.jar
# The committed tree alone (what others are editing stays here): run it with
#   mkdir /tmp/src && tar xf .carry/src.tar -C /tmp/src && cp -r .carry /tmp/src/ &&
#   cd /tmp/src && tests/gpu/run.sh
git archive HEAD -o .carry/src.tar
git rev-parse HEAD > .carry/commit
du -sh .carry

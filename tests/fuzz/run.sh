#!/usr/bin/env bash
# run.sh: `make fuzz`: build each harness with the fuzzer's compiler and ASan+UBSan, seed it from
# the tests, and fuzz it for FUZZ_SECONDS (default 600) with AFL++ (afl-fuzz), or with clang's
# libFuzzer where AFL++ is missing. Resumes an earlier campaign in the same FUZZ_DIR.
# Settings (environment): FUZZ_SECONDS, FUZZ_HARNESSES (default: all six), FUZZ_DIR (default
# build-fuzz), FUZZ_PARALLEL=1 (all harnesses at once, each on its own process), FUZZ_NICE
# (default 19), FUZZ_ENGINE (afl, libfuzzer, or replay: no fuzzing, each harness run once over
# its seeds and saved findings, built with cc where clang is missing; the default is AFL++ when
# installed), FUZZ_FRESH=1 (forget earlier findings and corpora: the smoke test of `make test`),
# FUZZ_TIMEOUT (default 30: seconds of wall time one input may take before it counts as a hang;
# at nice 19 on a loaded machine an input of 0.5 s of CPU took 5 s).
# Findings land in FUZZ_DIR/out/<harness>/default/{crashes,hangs} (AFL++) or
# FUZZ_DIR/out/<harness>/crash-* (libFuzzer); a summary line per harness goes to FUZZ_DIR/fuzz.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${FUZZ_SECONDS:-600}
HARNESSES=${FUZZ_HARNESSES:-"signature_parse signature_infer cpu_scan topology options profile"}
DIR=${FUZZ_DIR:-build-fuzz}
NICE=${FUZZ_NICE:-19}
TIMEOUT=${FUZZ_TIMEOUT:-30}
JOBS=${FUZZ_JOBS:-$(nproc)}
# The whole library, as CMakeLists.txt globs it (single-process: no MPI), so that no list of
# files here can fall behind the sources again: each harness links what it uses from it.
LIB_SOURCES=$(ls base/*.c core/*.c dag/*.c node/*.c policies/*.c devices/*.c devices/host/*.c \
  devices/cuda/*.c devices/sim/*.c nvrtc/*.c linalg/*.c net/launcher.c net/no_transport.c)
FLAGS="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Wno-unused-parameter -I. -Icore"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# clang's UBSan also checks float-to-int conversions (GCC's does not): those in the files of
# tests/fuzz/ubsan.supp are known and reported to their owners; recoverable so that the
# suppressions apply, and halt_on_error makes every other report a crash as before.
CLANG_SAN="$SAN -fsanitize-recover=float-cast-overflow"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$PWD/tests/fuzz/ubsan.supp"
# Presets for devices=sim:NAME (the options harness) from the source tree.
export PG_SIM_PRESETS=$PWD/devices/sim/presets
CCACHE=$(command -v ccache || true)
if [ "${FUZZ_FRESH:-0}" = 1 ]; then rm -rf "$DIR/out" "$DIR/seeds" "$DIR/fuzz.log"; fi
mkdir -p "$DIR/out" "$DIR/seeds"
LOG=$DIR/fuzz.log

if [ -n "${FUZZ_ENGINE:-}" ]; then
  ENGINE=$FUZZ_ENGINE # afl, libfuzzer or replay
elif command -v afl-fuzz >/dev/null && command -v afl-clang-fast >/dev/null; then
  ENGINE=afl
elif command -v clang >/dev/null; then
  ENGINE=libfuzzer
else
  echo "make fuzz needs AFL++ (apt-get install -y afl++) or clang (libFuzzer)" >&2
  exit 1
fi

# build_lib TAG CC FLAGS...: the library's objects built with CC and FLAGS, in one archive,
# $DIR/lib-TAG.a (ccache, where installed, makes a rebuild cheap).
build_lib() {
  local tag=$1
  shift
  BUILD_OBJ=$DIR/obj-$tag BUILD_CMD="$CCACHE $* -w -DPG_BUILDING_LIBRARY" BUILD_LOG=$DIR/build-$tag.log
  export BUILD_OBJ BUILD_CMD
  mkdir -p "$BUILD_OBJ"
  : >"$BUILD_LOG"
  printf '%s\n' $LIB_SOURCES | xargs -P "$JOBS" -n 1 bash -c \
    '$BUILD_CMD -c "$0" -o "$BUILD_OBJ/$(echo "$0" | tr / _).o"' 2>>"$BUILD_LOG" ||
    { cat "$BUILD_LOG" >&2; echo "run.sh: the library did not build ($tag)" >&2; exit 1; }
  rm -f "$DIR/lib-$tag.a"
  ar rcs "$DIR/lib-$tag.a" "$BUILD_OBJ"/*.o
}
LIBS="-lm -ldl -lpthread"

python3 tests/fuzz/corpus.py . "$DIR/seeds" >/dev/null
if [ $ENGINE = afl ]; then
  export AFL_QUIET=1 AFL_USE_ASAN=1 AFL_USE_UBSAN=1
  build_lib afl afl-clang-fast $FLAGS -fno-sanitize-recover=undefined
  build_lib cc "${CC:-cc}" $FLAGS $SAN # for the replay binaries
elif command -v clang >/dev/null; then
  # One build serves both: the replay binaries link it without libFuzzer (ASan's runtime
  # answers the coverage calls).
  build_lib clang clang $FLAGS $CLANG_SAN -fsanitize=fuzzer-no-link
else
  build_lib cc "${CC:-cc}" $FLAGS $SAN
fi
for h in $HARNESSES; do
  # Earlier findings seed the campaign too: a fix must hold against them.
  for f in tests/fuzz/regressions/$h/*; do
    if [ -f "$f" ]; then cp "$f" "$DIR/seeds/$h/"; fi
  done
  src="tests/fuzz/fuzz_main.c tests/fuzz/fuzz_$h.c"
  # A plain replay build: reproduces and minimises a finding without the fuzzer.
  if [ $ENGINE = afl ]; then
    $CCACHE ${CC:-cc} $FLAGS $SAN -DPG_FUZZ_ENTRY=pg_fuzz_$h $src "$DIR/lib-cc.a" \
      -o "$DIR/replay_$h" $LIBS
    afl-clang-fast $FLAGS -fno-sanitize-recover=undefined -DPG_FUZZ_ENTRY=pg_fuzz_$h $src \
      "$DIR/lib-afl.a" -o "$DIR/fuzz_$h" $LIBS 2>/dev/null
  elif command -v clang >/dev/null; then
    $CCACHE clang $FLAGS $CLANG_SAN -DPG_FUZZ_ENTRY=pg_fuzz_$h $src "$DIR/lib-clang.a" \
      -o "$DIR/replay_$h" $LIBS
    if [ $ENGINE = libfuzzer ]; then
      $CCACHE clang $FLAGS $CLANG_SAN -fsanitize=fuzzer -DPG_FUZZ_LIBFUZZER -DPG_FUZZ_ENTRY=pg_fuzz_$h \
        $src "$DIR/lib-clang.a" -o "$DIR/fuzz_$h" $LIBS
    fi
  else
    $CCACHE ${CC:-cc} $FLAGS $SAN -DPG_FUZZ_ENTRY=pg_fuzz_$h $src "$DIR/lib-cc.a" \
      -o "$DIR/replay_$h" $LIBS
  fi
done

fuzz_one() {
  local h=$1 out=$DIR/out/$1
  echo "start $(date -u +%FT%TZ) $h $ENGINE ${SECONDS_EACH}s" >>"$LOG"
  if [ $ENGINE = replay ]; then
    # No fuzzer: every seed and saved finding once, each in its own process so that one
    # crash names its input.
    local n=0 bad=0
    mkdir -p "$out"
    for f in "$DIR/seeds/$h"/*; do
      n=$((n + 1))
      if ! "$DIR/replay_$h" "$f" >"$out/replay.log" 2>&1; then
        bad=$((bad + 1))
        cp "$f" "$out/crash-replay-$(basename "$f")"
        cat "$out/replay.log" >&2
      fi
    done
    echo "end   $(date -u +%FT%TZ) $h replayed $n crashes $bad" >>"$LOG"
  elif [ $ENGINE = afl ]; then
    local in=$DIR/seeds/$h
    # An earlier campaign's queue is resumed rather than thrown away.
    [ -f "$out/default/fuzzer_stats" ] && in=-
    AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
      AFL_AUTORESUME=1 AFL_SKIP_CRASHES=1 nice -n "$NICE" \
      afl-fuzz -i "$in" -o "$out" -x tests/fuzz/cuda.dict -m none -t $((TIMEOUT * 1000)) -V "$SECONDS_EACH" \
      -- "$DIR/fuzz_$h" >"$DIR/afl_$h.log" 2>&1 || true
    local st=$out/default/fuzzer_stats
    local execs crashes hangs
    execs=$(awk '$1=="execs_done"{print $3}' "$st")
    crashes=$(awk '$1=="saved_crashes"||$1=="unique_crashes"{print $3}' "$st" | head -1)
    hangs=$(awk '$1=="saved_hangs"||$1=="unique_hangs"{print $3}' "$st" | head -1)
    echo "end   $(date -u +%FT%TZ) $h execs_total $execs crashes $crashes hangs $hangs" \
      "corpus $(awk '$1=="corpus_count"{print $3}' "$st") edges $(awk '$1=="bitmap_cvg"{print $3}' "$st")" >>"$LOG"
  else
    mkdir -p "$out/corpus"
    nice -n "$NICE" "$DIR/fuzz_$h" -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" -print_final_stats=1 \
      -dict=tests/fuzz/cuda.dict -artifact_prefix="$out/" "$out/corpus" "$DIR/seeds/$h" \
      >"$DIR/libfuzzer_$h.log" 2>&1 || true
    local execs
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$DIR/libfuzzer_$h.log" | awk '{print $2}' || true)
    echo "end   $(date -u +%FT%TZ) $h execs ${execs:-?} crashes $(ls "$out" | grep -c '^crash-' || true)" \
      "hangs $(ls "$out" | grep -c '^timeout-' || true)" >>"$LOG"
  fi
  tail -n 1 "$LOG"
}

if [ "${FUZZ_PARALLEL:-0}" = 1 ]; then
  for h in $HARNESSES; do fuzz_one "$h" & done
  wait
else
  for h in $HARNESSES; do fuzz_one "$h"; done
fi

found=0
for h in $HARNESSES; do
  for f in "$DIR"/out/$h/default/crashes/id:* "$DIR"/out/$h/default/hangs/id:* "$DIR"/out/$h/crash-* \
           "$DIR"/out/$h/timeout-* "$DIR"/out/$h/leak-* "$DIR"/out/$h/oom-*; do
    [ -e "$f" ] || continue
    echo "finding: $f (replay: $DIR/replay_$h '$f')"
    found=$((found + 1))
  done
done
echo "fuzz: $found finding(s); log $LOG"
[ $found = 0 ]

#!/usr/bin/env bash
# run.sh: `make fuzz`: build each harness with the fuzzer's compiler and ASan+UBSan, seed it from
# the tests, and fuzz it for FUZZ_SECONDS (default 600) with AFL++ (afl-fuzz), or with clang's
# libFuzzer where AFL++ is missing. Resumes an earlier campaign in the same FUZZ_DIR.
# Settings (environment): FUZZ_SECONDS, FUZZ_HARNESSES (default: all three), FUZZ_DIR (default
# build-fuzz), FUZZ_PARALLEL=1 (all harnesses at once, each on its own process), FUZZ_NICE
# (default 19), FUZZ_ENGINE (afl or libfuzzer: the default is AFL++ when installed). Findings land in FUZZ_DIR/out/<harness>/default/{crashes,hangs} (AFL++) or
# FUZZ_DIR/out/<harness>/crash-* (libFuzzer); a summary line per harness goes to FUZZ_DIR/fuzz.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${FUZZ_SECONDS:-600}
HARNESSES=${FUZZ_HARNESSES:-"signature_parse signature_infer cpu_scan"}
DIR=${FUZZ_DIR:-build-fuzz}
NICE=${FUZZ_NICE:-19}
LIB="nvrtc/signature.c nvrtc/signature_source.c nvrtc/cpu_source.c nvrtc/cpu_rewrite.c
     nvrtc/cpu_features.c core/error.c"
FLAGS="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Wno-unused-parameter -I. -Icore"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
mkdir -p "$DIR/out" "$DIR/seeds"
LOG=$DIR/fuzz.log

if [ -n "${FUZZ_ENGINE:-}" ]; then
  ENGINE=$FUZZ_ENGINE # afl or libfuzzer
elif command -v afl-fuzz >/dev/null && command -v afl-clang-fast >/dev/null; then
  ENGINE=afl
elif command -v clang >/dev/null; then
  ENGINE=libfuzzer
else
  echo "make fuzz needs AFL++ (apt-get install -y afl++) or clang (libFuzzer)" >&2
  exit 1
fi

python3 tests/fuzz/corpus.py . "$DIR/seeds" >/dev/null
for h in $HARNESSES; do
  # Earlier findings seed the campaign too: a fix must hold against them.
  for f in tests/fuzz/regressions/$h/*; do
    if [ -f "$f" ]; then cp "$f" "$DIR/seeds/$h/"; fi
  done
  src="tests/fuzz/fuzz_main.c tests/fuzz/fuzz_$h.c $LIB"
  # A plain replay build: reproduces and minimises a finding without the fuzzer.
  ${CC:-cc} $FLAGS $SAN -DPG_FUZZ_ENTRY=pg_fuzz_$h $src -o "$DIR/replay_$h"
  if [ $ENGINE = afl ]; then
    AFL_QUIET=1 AFL_USE_ASAN=1 AFL_USE_UBSAN=1 afl-clang-fast $FLAGS -fno-sanitize-recover=undefined \
      -DPG_FUZZ_ENTRY=pg_fuzz_$h $src -o "$DIR/fuzz_$h" 2>/dev/null
  else
    clang $FLAGS $SAN -fsanitize=fuzzer -DPG_FUZZ_LIBFUZZER -DPG_FUZZ_ENTRY=pg_fuzz_$h $src \
      -o "$DIR/fuzz_$h"
  fi
done

fuzz_one() {
  local h=$1 out=$DIR/out/$1
  echo "start $(date -u +%FT%TZ) $h $ENGINE ${SECONDS_EACH}s" >>"$LOG"
  if [ $ENGINE = afl ]; then
    local in=$DIR/seeds/$h
    # An earlier campaign's queue is resumed rather than thrown away.
    [ -f "$out/default/fuzzer_stats" ] && in=-
    AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
      AFL_AUTORESUME=1 AFL_SKIP_CRASHES=1 nice -n "$NICE" \
      afl-fuzz -i "$in" -o "$out" -x tests/fuzz/cuda.dict -m none -t 5000 -V "$SECONDS_EACH" \
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
    nice -n "$NICE" "$DIR/fuzz_$h" -max_total_time="$SECONDS_EACH" -timeout=5 -print_final_stats=1 \
      -dict=tests/fuzz/cuda.dict -artifact_prefix="$out/" "$out/corpus" "$DIR/seeds/$h" \
      >"$DIR/libfuzzer_$h.log" 2>&1 || true
    local execs
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$DIR/libfuzzer_$h.log" | awk '{print $2}' || true)
    echo "end   $(date -u +%FT%TZ) $h execs ${execs:-?} crashes $(ls "$out" | grep -c '^crash-' || true)" \
      "hangs $(ls "$out" | grep -c '^timeout-' || true)" >>"$LOG"
  fi
  tail -1 "$LOG"
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
           "$DIR"/out/$h/timeout-*; do
    [ -e "$f" ] || continue
    echo "finding: $f (replay: $DIR/replay_$h '$f')"
    found=$((found + 1))
  done
done
echo "fuzz: $found finding(s); log $LOG"
[ $found = 0 ]

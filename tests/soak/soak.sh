#!/usr/bin/env bash
# soak.sh: `make soak`: the differential test (random programs, async on host:4 under every
# device/stream/parent-stream policy vs one serial device) over SOAK_PROGRAMS seeds, and the
# threaded differential (threads sharing inputs, host writes of equal values, closes at random
# points) over SOAK_THREADED_PROGRAMS, in chunks of seeds run SOAK_JOBS at a time under
# nice -n 19. Resumable: a chunk that finished (pass or fail) keeps its log in SOAK_DIR and is
# not run again; SOAK_FRESH=1 starts over. A chunk that crashes or passes SOAK_CHUNK_TIMEOUT
# (a hang) counts all its programs as failed.
# Settings: SOAK_PROGRAMS (100000), SOAK_THREADED_PROGRAMS (100000), SOAK_CHUNK (1000),
# SOAK_THREADED_CHUNK (1000), SOAK_JOBS (2), SOAK_SEED (1), SOAK_BUILD (build),
# SOAK_DIR (SOAK_BUILD/soak), SOAK_CHUNK_TIMEOUT (seconds, 3600).
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SOAK_BUILD:-build}
PROGRAMS=${SOAK_PROGRAMS:-100000}
TPROGRAMS=${SOAK_THREADED_PROGRAMS:-100000}
CHUNK=${SOAK_CHUNK:-1000}
TCHUNK=${SOAK_THREADED_CHUNK:-1000}
JOBS=${SOAK_JOBS:-2}
SEED0=${SOAK_SEED:-1}
DIR=${SOAK_DIR:-$BUILD/soak}
LIMIT=${SOAK_CHUNK_TIMEOUT:-3600}
export PG_CACHE_DIR=${PG_CACHE_DIR:-$PWD/$BUILD/kernel-cache}
for t in test_differential:$PROGRAMS test_threaded_differential:$TPROGRAMS; do
  [ "${t#*:}" = 0 ] || [ -x "$BUILD/tests/c/${t%:*}" ] ||
    { echo "soak: $BUILD/tests/c/${t%:*} is missing: build first" >&2; exit 1; }
done
[ "${SOAK_FRESH:-0}" = 1 ] && rm -rf "$DIR"
mkdir -p "$DIR"

# One chunk: "<kind> <first seed> <count>" -> $DIR/<kind>-<seed>.log, ending in "exit N wall S".
run_chunk() {
  local kind=$1 seed=$2 count=$3 log=$DIR/$1-$2.log bin env
  if [ -f "$log" ] && grep -q '^exit ' "$log"; then return 0; fi
  if [ "$kind" = diff ]; then
    bin=test_differential env="PG_DIFF_SEED=$seed PG_DIFF_PROGRAMS=$count"
  else
    bin=test_threaded_differential env="PG_TDIFF_SEED=$seed PG_TDIFF_PROGRAMS=$count"
  fi
  local t0 t1 rc
  t0=$(date +%s.%N)
  env $env timeout -k 10 "$LIMIT" nice -n 19 "$BUILD/tests/c/$bin" >"$log.tmp" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  echo "exit $rc wall $(echo "$t1 - $t0" | bc) programs $count" >>"$log.tmp"
  mv "$log.tmp" "$log"
  echo "$kind seeds $seed..$((seed + count - 1)): $(grep -E 'programs failed' "$log" | tail -1 | sed 's/.*: //') (exit $rc)"
}
export -f run_chunk
export DIR BUILD LIMIT

chunks() { # kind total chunk
  local s=$SEED0 end=$((SEED0 + $2))
  while [ $s -lt $end ]; do
    local n=$(($3 < end - s ? $3 : end - s))
    echo "$1 $s $n"
    s=$((s + n))
  done
}

start=$(date +%s.%N)
{ chunks diff "$PROGRAMS" "$CHUNK"; chunks tdiff "$TPROGRAMS" "$TCHUNK"; } |
  xargs -P "$JOBS" -L 1 bash -c 'run_chunk "$@"' _
wall=$(echo "$(date +%s.%N) - $start" | bc)

# Totals over every chunk log of this campaign (earlier invocations included).
total=0 failed=0 mism=0 chunk_wall=0 crashed=0
summary() { # kind -> "programs failed mismatches wall crashed"
  local p=0 f=0 m=0 w=0 c=0
  for log in "$DIR"/$1-*.log; do
    [ -f "$log" ] || continue
    local n rc line
    n=$(sed -n 's/^exit .* programs \([0-9]*\)$/\1/p' "$log")
    rc=$(sed -n 's/^exit \([0-9]*\) .*/\1/p' "$log")
    w=$(echo "$w + $(sed -n 's/^exit .* wall \([0-9.]*\) .*/\1/p' "$log")" | bc)
    line=$(grep -E '[0-9]+ mismatches, [0-9]+ programs failed' "$log" | tail -1)
    p=$((p + n))
    if [ -n "$line" ]; then
      f=$((f + $(echo "$line" | sed -E 's/.* ([0-9]+) programs failed.*/\1/')))
      m=$((m + $(echo "$line" | sed -E 's/.* ([0-9]+) mismatches,.*/\1/')))
    fi
    if [ -z "$line" ] || { [ "$rc" != 0 ] && [ "$rc" != 1 ]; }; then
      f=$((f + n)) # crashed or hung: none of its programs counts as passed
      c=$((c + 1))
      echo "soak: $log ended with exit $rc (crash or hang): see the log" >&2
    fi
  done
  echo "$p $f $m $w $c"
}
read -r dp df dm dw dc < <(summary diff)
read -r tp tf tm tw tc < <(summary tdiff)
echo "differential: $dp programs (each under 40 configurations on host:4), $dm mismatches," \
  "$df programs failed, $dc chunks crashed or hung, $(printf %.0f "$dw") s in chunks"
echo "threaded differential: $tp programs, $tm mismatches, $tf programs failed," \
  "$tc chunks crashed or hung, $(printf %.0f "$tw") s in chunks"
total=$((dp + tp)) failed=$((df + tf)) mism=$((dm + tm))
echo "soak: $total programs, $mism mismatches, $(printf %.0f "$wall") s"
echo "$((total - failed)) passed, $failed failed"
[ "$failed" = 0 ]

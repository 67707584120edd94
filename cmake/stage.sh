#!/usr/bin/env bash
# cmake/stage.sh: one stage of `make demo` / `make test` (configuring, building) shown as one
# line — what it does, its progress while it runs on a terminal, how long it took — with the
# command's whole output in a log. When the command fails, the log's last 60 lines and its path
# are printed and its exit status returned, so a compiler error is still seen.
# Usage: cmake/stage.sh "WHAT" LOG COMMAND [ARG...]
set -uo pipefail
what=${1:?usage: stage.sh WHAT LOG COMMAND...} log=${2:?usage: stage.sh WHAT LOG COMMAND...}
shift 2
mkdir -p "$(dirname "$log")"
start=$SECONDS
tty=0
[ -t 1 ] && tty=1
# On a terminal the line is rewritten with the progress; elsewhere (CI logs) it is written once.
if [ $tty = 1 ]; then printf '%s ...' "$what"; else printf '%s (log: %s) ...' "$what" "$log"; fi
"$@" >"$log" 2>&1 &
pid=$!
# `cmake --build DIR` with CMake's Makefiles counts its steps in DIR/CMakeFiles/Progress (a file
# per step done, count.txt the steps of this build).
progress=
[ $# -ge 3 ] && [ "$(basename "$1")" = cmake ] && [ "$2" = --build ] && progress=$3/CMakeFiles/Progress
if [ $tty = 1 ]; then
  # Else progress from the log as it grows: CMake's Makefiles print "[ 45%]", Ninja "[12/345]".
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    p=
    if [ -n "$progress" ] && [ -f "$progress/count.txt" ]; then
      p="$(find "$progress" -type f ! -name count.txt 2>/dev/null | wc -l)/$(cat "$progress/count.txt" 2>/dev/null)"
    fi
    case $p in */ | /*) p= ;; esac
    [ -n "$p" ] || p=$(grep -aoE '^\[ *[0-9]+%\]|^\[[0-9]+/[0-9]+\]' "$log" 2>/dev/null | tail -n 1 | tr -d '[] ')
    case $p in
      */*) printf '\r\033[K%s: step %s of %s' "$what" "${p%/*}" "${p#*/}" ;;
      ?*) printf '\r\033[K%s: %s' "$what" "$p" ;;
    esac
  done
fi
wait "$pid"
status=$?
secs=$((SECONDS - start))
if [ $status = 0 ]; then
  if [ $tty = 1 ]; then printf '\r\033[K%s: done (%d s)\n' "$what" "$secs"; else printf ' done (%d s)\n' "$secs"; fi
else
  [ $tty = 1 ] && printf '\r\033[K%s' "$what"
  printf ' FAILED (exit status %d); the last lines of %s:\n' "$status" "$log"
  tail -n 60 "$log"
  printf '%s failed: all of its output is in %s\n' "$what" "$log"
fi
exit $status

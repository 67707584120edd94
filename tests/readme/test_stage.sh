#!/usr/bin/env bash
# test_stage.sh: `make demo` and `make test` show one line per stage (cmake/stage.sh), not the
# build's output or gmake's "Entering directory" lines; a failing stage still shows its error.
# Usage: tests/readme/test_stage.sh SOURCE_DIR      (CTest runs it as the test `make_stages`)
set -euo pipefail
src=$(cd "${1:?usage: test_stage.sh SOURCE_DIR}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/polygpu-stage.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A noisy stage that succeeds: one line on stdout, everything in the log.
noisy='for i in $(seq 1 40); do echo "gmake[2]: Entering directory /x"; echo "[ $((i * 2))%] Building C object o$i.o"; done; echo "warning: w" >&2'
"$src/cmake/stage.sh" "building x/" "$work/ok.log" bash -c "$noisy" >"$work/ok.out" 2>&1 ||
  fail "a stage that succeeds returned $?"
[ "$(wc -l <"$work/ok.out")" -eq 1 ] || { cat "$work/ok.out"; fail "a stage printed more than one line"; }
grep -q '^building x/ (log: .*ok.log) \.\.\. done ([0-9]* s)$' "$work/ok.out" ||
  { cat "$work/ok.out"; fail "the stage's line does not say what it did and that it is done"; }
[ "$(grep -c Entering "$work/ok.log")" -eq 40 ] && grep -q "warning: w" "$work/ok.log" ||
  fail "the log lacks the command's output (stdout and stderr)"

# A stage that fails: its exit status, the error and where the whole log is.
set +e
"$src/cmake/stage.sh" "building y/" "$work/bad.log" bash -c 'echo "[ 10%] Building"; echo "y.c:3: error: nope" >&2; exit 3' \
  >"$work/bad.out" 2>&1
status=$?
set -e
[ $status -eq 3 ] || fail "a failing stage returned $status, not the command's 3"
grep -q "y.c:3: error: nope" "$work/bad.out" || { cat "$work/bad.out"; fail "a failing stage hid the error"; }
grep -q "all of its output is in $work/bad.log" "$work/bad.out" || fail "a failing stage did not name its log"

# The Makefile builds through it: no bare `cmake --build` left in a recipe.
if grep -nE '^	@?(\{ *)?cmake --build' "$src/Makefile"; then
  fail "the Makefile lines above build without cmake/stage.sh (the build's output and gmake's Entering lines reach the screen)"
fi
grep -q 'cmake/stage.sh "building build/"' "$src/Makefile" || fail "the Makefile's build does not use cmake/stage.sh"
echo "make_stages: passed"

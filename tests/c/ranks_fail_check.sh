#!/bin/sh
# ranks_fail_check.sh PATTERN... -- COMMAND...: run COMMAND (an mpirun of tests/c/ranks_fail.c
# or a binding's script), show its output, and pass when it ended with a nonzero status and its
# output matches every PATTERN (grep -E). A hang is CTest's TIMEOUT.
pats=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  pats="$pats
$1"
  shift
done
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -eq 0 ]; then
  echo "ranks_fail_check: the job ended with status 0; a failed rank must end it with an error"
  exit 1
fi
echo "ranks_fail_check: status $rc"
fail=0
set -f
IFS='
'
for p in $pats; do
  [ -z "$p" ] && continue
  if ! printf '%s\n' "$out" | grep -Eq -- "$p"; then
    echo "ranks_fail_check: no line matches: $p"
    fail=1
  fi
done
exit $fail

#!/bin/sh
# polygpu_top_check.sh TOP BUILD_DIR: polygpu-top --json and --once on a node of its own, empty
# and then with a client: test_node's "hold" child (a runtime on host:2 with two kernels held).
set -eu
top=$1
dir=$(mktemp -d "$2/top-node-XXXXXX")
trap 'rm -rf "$dir"' EXIT
export PG_NODE_DIR="$dir"
out=$("$top" --json)
[ "$out" = '{"clients": [], "devices": []}' ] || { echo "empty node: $out"; exit 1; }
"$top" --once | grep -q "no polygpu process of this user" || { echo "--once: no empty line"; exit 1; }
hold="$2/../tests/c/test_node"
if [ -x "$hold" ]; then
  fifo="$dir/in"; mkfifo "$fifo"
  PG_SHARE=node "$hold" child hold < "$fifo" > "$dir/out" & # joins even where PG_SHARE=off is exported
  pid=$!
  exec 3> "$fifo"
  i=0; while ! grep -q ready "$dir/out" 2>/dev/null; do i=$((i+1)); [ $i -lt 600 ] || exit 1; sleep 0.1; done
  "$top" --json | grep -q "{\"pid\": $pid, \"language\": \"c\", \"devices\": \[\"host:0\", \"host:1\"\]" || { echo "json lacks the client"; "$top" --json; exit 1; }
  "$top" --once | grep -Eq "^$pid +c +2 " || { echo "--once lacks the client"; "$top" --once; exit 1; }
  echo go >&3; exec 3>&-
  wait $pid
fi
echo "polygpu-top ok"

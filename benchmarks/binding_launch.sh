#!/usr/bin/env bash
# binding_launch.sh: the launch cost from C, Python, Lua and Java side by side on the same
# devices in one command (each language's benchmark times single launches in bursts of 64, median
# of N), so each binding's own cost is its median less C's. Needs the build in build/ (or BUILD).
# Usage: benchmarks/binding_launch.sh [launches] [devices]   (default 20000 host:1)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000} DEV=${2:-host:1} B=${BUILD:-build}
c=$("$B/benchmarks/launch_overhead" "$DEV" "$N" | awk '/polygpu submit median/ {print $6}')
py=$(PYTHONPATH=$B/bindings/python python3 benchmarks/python_launch.py "$N" "$DEV" | awk '/^polygpu/ {print $5}')
lua=$(LUA_CPATH="$B/bindings/lua/?.so" ${LUA:-lua5.4} benchmarks/lua_launch.lua "$N" "$DEV" | awk '{print $6}')
tmp=$(mktemp -d)
javac -cp "$B/bindings/java/polygpu.jar" -d "$tmp" benchmarks/java/JavaLaunch.java
java=$(java -cp "$B/bindings/java/polygpu.jar:$tmp" -Djava.library.path="$B/bindings/java" JavaLaunch "$N" "$DEV" | awk '{print $6}')
rm -rf "$tmp"
printf '| language | median us per launch | binding own cost (less C) |\n| --- | --- | --- |\n'
for l in "C $c" "Python $py" "Lua $lua" "Java $java"; do
  set -- $l
  awk -v n="$1" -v v="$2" -v c="$c" 'BEGIN { printf "| %s | %.2f | %s |\n", n, v, n == "C" ? "-" : sprintf("%+.2f", v - c) }'
done

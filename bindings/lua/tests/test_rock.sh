#!/usr/bin/env bash
# test_rock.sh: the test lua_rock. `luarocks make` of the root rockspec into a fresh tree, then a
# Lua whose paths come only from `luarocks path` for that tree loads polygpu from it and runs a
# kernel on host:2.
#   test_rock.sh <checkout> <work dir> <lua5.4> <luarocks> <version>
set -euo pipefail
src=$1 work=$2 lua=$3 luarocks=$4 version=$5
tree=$work/tree
rm -rf "$work"
mkdir -p "$work"
lr() { "$luarocks" --lua-version=5.4 "$@"; }

# The build folder in the work dir, not build.luarocks in the checkout: builds of the checkout
# that run this test at once (two build folders) do not share it.
export PG_ROCK_BUILD_DIR=$work/build
(cd "$src" && lr make --tree "$tree" "polygpu-$version-1.rockspec") >"$work/make.log" 2>&1 || {
  cat "$work/make.log"
  echo "FAIL: luarocks make of polygpu-$version-1.rockspec (log above)" >&2
  exit 1
}
lr list --tree "$tree" --porcelain | grep -q "^polygpu	$version-1	installed" || {
  lr list --tree "$tree"
  echo "FAIL: polygpu $version-1 is not listed as installed in $tree" >&2
  exit 1
}
module=$tree/lib/lua/5.4/polygpu.so
[ -f "$module" ] || { echo "FAIL: no $module" >&2; exit 1; }
# One self-contained file: it must not need a libpolygpu that only a build folder has.
if readelf -d "$module" | grep -E 'NEEDED.*libpolygpu|R(UN)?PATH'; then
  echo "FAIL: $module needs libpolygpu or carries an RPATH (above)" >&2
  exit 1
fi

unset LUA_PATH_5_4 LUA_CPATH_5_4 LUA_INIT LUA_INIT_5_4
eval "$(lr path --tree "$tree")"
out=$(ROCK_TREE=$tree "$lua" -e '
local tree = os.getenv("ROCK_TREE")
local where = package.searchpath("polygpu", package.cpath)
assert(where and where:sub(1, #tree) == tree, "polygpu not found in the rock tree: " .. tostring(where))
local pg = require "polygpu"
local rt = pg.runtime {devices = "host:2"}
assert(#rt:devices() == 2, "expected 2 CPU devices")
local n = 1000
local x, y = rt:array("float32", n), rt:array("float32", n)
local tx, ty = {}, {}
for i = 1, n do tx[i], ty[i] = i, 1 end
x:from_table(tx)
y:from_table(ty)
local axpy = rt:kernel([[
extern "C" __global__ void axpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += a * x[i]; }
]], "axpy")
axpy((n + 255) // 256, 256)(y, x, 2.0, n)
local sum = 0
for _, v in ipairs(y:to_table()) do sum = sum + v end
print(("sum %d"):format(math.tointeger(sum)))
rt:close()
')
echo "$out"
# sum over i = 1..n of 2 i + 1 = n (n + 1) + n
[ "$out" = "sum 1002000" ] || { echo "FAIL: expected 'sum 1002000'" >&2; exit 1; }
echo "ok: polygpu $version-1 from luarocks make ran a kernel on host:2"

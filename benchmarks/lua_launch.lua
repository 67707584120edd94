-- lua_launch.lua: Lua-level launch of an empty 4-argument kernel through polygpu: microseconds
-- per launch, median and mean of many, each timed alone (rt:clock(): the host's clock on CPU
-- devices and GPUs) in bursts of 64 with a sync between bursts, as benchmarks/python_launch.py
-- does, so the binding's own cost reads against launch_overhead's C figure on the same devices.
--   LUA_CPATH="build/bindings/lua/?.so" lua5.4 benchmarks/lua_launch.lua [launches] [devices]
local pg = require "polygpu"

local SRC = [[extern "C" __global__ void empty(float *a, const float *b, int n, float s) {
  if (n < 0) a[0] = b[0] * s; }]]
local BURST = 64
local n = tonumber(arg[1]) or 20000
local devices = arg[2] or "cuda:0"

local rt = pg.runtime {devices = devices}
local k = rt:kernel(SRC, "empty")
local a, b = rt:array("float32", 256), rt:array("float32", 256)
local call = k(1, 32)
for _ = 1, 1000 do call(a, b, 256, 2.0) end
rt:sync()
local t, sum = {}, 0
local clock = function() return rt:clock() end
for i = 1, n do
    local t0 = clock()
    call(a, b, 256, 2.0)
    local us = (clock() - t0) * 1e6
    t[i], sum = us, sum + us
    if i % BURST == 0 then rt:sync() end
end
rt:sync()
table.sort(t)
print(("polygpu lua devices=%s launches=%d: median %.2f us, mean %.2f us"):format(devices, n,
    t[n // 2 + 1], sum / n))
rt:close()

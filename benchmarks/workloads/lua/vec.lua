-- vec.lua: VEC through polygpu from Lua: the same arrays, kernels and order of launches as the
-- Python version (benchmarks/workloads/vec.py). Run by benchmarks/run.py:
--   lua5.4 vec.lua --devices cuda:0,1 --policy minmax-transfer-time --n N --partitions 16 ...
local here = arg[0]:match("^(.*)/") or "."
package.path = here .. "/?.lua;" .. package.path
local C = require "pgb_common"
local pg = require "polygpu"
local clock = require "pgb_clock"

local a = C.parse_args(arg)
local rt = pg.runtime {devices = a.devices, policy = a.policy}
local ks = C.load_kernels(rt, a.kernels or (here .. "/../kernels"), "vec")
local parts = C.partitions(a.n, a.partitions)
local B = C.BLOCK

local x, y, x2, y2, res = {}, {}, {}, {}, {}
for i, p in ipairs(parts) do
    local offset, c = p[1], p[2]
    x[i], y[i] = rt:array("float32", c), rt:array("float32", c)
    x2[i], y2[i] = rt:array("float32", c), rt:array("float32", c)
    res[i] = rt:array("float64", 1)
    ks.vec_init(C.grid_1d(c), B)(x[i], y[i], offset, c)
end
-- The inputs live on the host: read them there (one host access copies the whole array), then
-- write one element so that the host copy is the only valid one.
for i = 1, #parts do
    x[i][1] = x[i][1]
    y[i][1] = y[i][1]
end

local total = 0.0
local function prepare()
    for i = 1, #parts do
        x[i][1] = x[i][1] -- the paper rewrites x and y on the host before each run
        y[i][1] = y[i][1]
        res[i][1] = 0.0
    end
end
local function run()
    for i, p in ipairs(parts) do
        local c = p[2]
        ks.vec_square(C.grid_1d(c), B)(x2[i], x[i], c)
        ks.vec_square(C.grid_1d(c), B)(y2[i], y[i], c)
        ks.vec_reduce(C.grid_reduce(c), B)(res[i], x2[i], y2[i], c)
    end
    total = 0.0
    for i = 1, #parts do
        total = total + res[i][1] -- waits for this partition's reduction only
    end
end

local times = C.time_runs(a, clock.now, prepare, run)
C.write_sample(a, 1, function() return total end)
C.print_json("vec", a, #rt:devices(), times)
rt:close()

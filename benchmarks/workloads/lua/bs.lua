-- bs.lua: B&S through polygpu from Lua: the same arrays, kernels and order of launches as the
-- Python version (benchmarks/workloads/bs.py). Run by benchmarks/run.py:
--   lua5.4 bs.lua --devices cuda:0,1 --policy minmax-transfer-time --n N --partitions 16 ...
local here = arg[0]:match("^(.*)/") or "."
package.path = here .. "/?.lua;" .. package.path
local C = require "pgb_common"
local pg = require "polygpu"
local clock = require "pgb_clock"

local R, V, T, K = 0.08, 0.3, 1.0, 60.0 -- as workloads/bs.py

local a = C.parse_args(arg)
local rt = pg.runtime {devices = a.devices, policy = a.policy}
local ks = C.load_kernels(rt, a.kernels or (here .. "/../kernels"), "bs")
local parts = C.partitions(a.n, a.partitions)
local B = C.BLOCK

local s, call = {}, {}
for i, p in ipairs(parts) do
    local offset, c = p[1], p[2]
    s[i], call[i] = rt:array("float64", c), rt:array("float64", c)
    ks.bs_init(C.grid_1d(c), B)(s[i], offset, c)
end
for i = 1, #parts do
    s[i][1] = s[i][1] -- to the host, then the host copy is the only valid one
end

local function prepare()
    for i = 1, #parts do
        s[i][1] = s[i][1] -- new prices from the host at every run
    end
end
local function run()
    for i, p in ipairs(parts) do
        local c = p[2]
        ks.bs(C.grid_1d(c), B)(call[i], s[i], c, R, V, T, K)
        call[i]:prefetch() -- its copy to the host follows the kernel without waiting for us
    end
    for i = 1, #parts do
        local _ = call[i][1] -- one host read brings the whole partition to the host
    end
end

local times = C.time_runs(a, clock.now, prepare, run)
local size = parts[1][2]
C.write_sample(a, a.n, function(i) return call[i // size + 1][i % size + 1] end)
C.print_json("bs", a, #rt:devices(), times)
rt:close()

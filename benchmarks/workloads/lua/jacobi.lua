-- jacobi.lua: JACOBI through polygpu from Lua: the same arrays, views, kernels and order of
-- launches as the Python version (benchmarks/workloads/jacobi.py): two n x n grids, each
-- partition's sweep on views (its rows and halo of one grid, its rows of the other), recorded
-- once per sweep and group of 8 partitions and replayed. Run by benchmarks/run.py:
--   lua5.4 jacobi.lua --devices cuda:0,1 --policy minmax-transfer-time --n N --partitions 16
--          --iterations SWEEPS ...
local here = arg[0]:match("^(.*)/") or "."
package.path = here .. "/?.lua;" .. package.path
local C = require "pgb_common"
local pg = require "polygpu"
local clock = require "pgb_clock"

local RECORD_PARTITIONS = 8 -- as workloads/jacobi.py (at most 64 pieces per replay)

local a = C.parse_args(arg)
local n, sweeps = a.n, a.iterations or 20
assert(n % 16 == 0 and sweeps % 2 == 0, "n must be a multiple of 16 and --iterations even")
local rt = pg.runtime {devices = a.devices, policy = a.policy}
local ks = C.load_kernels(rt, a.kernels or (here .. "/../kernels"), "jacobi")
local parts = C.partitions(n, a.partitions)
local np = #parts
local B = C.BLOCK

local u, v = rt:array("float32", {n, n}), rt:array("float32", {n, n})
-- Views (slice is 1-based and inclusive): each partition's rows [lo, lo + r), and with the halo
-- [max(lo - 1, 0), min(lo + r + 1, n))
local u_own, v_own, u_halo, v_halo = {}, {}, {}, {}
for i, p in ipairs(parts) do
    local lo, r = p[1], p[2]
    u_own[i], v_own[i] = u:slice(lo + 1, lo + r), v:slice(lo + 1, lo + r)
    local first, last = math.max(lo - 1, 0), math.min(lo + r + 1, n)
    u_halo[i], v_halo[i] = u:slice(first + 1, last), v:slice(first + 1, last)
end
local partial = rt:array("float64", {np, 256})
local partial_rows = partial:split(np)

local function sweep(src, dst, p0, p1)
    for i = p0, p1 do
        local lo, r = parts[i][1], parts[i][2]
        ks.jacobi_sweep(C.stencil_geometry(r, n), B)(dst[i], src[i], lo, r, math.max(lo - 1, 0), n)
    end
end

local graphs = {}
for _, pair in ipairs {{u_halo, v_own}, {v_halo, u_own}} do
    for p0 = 1, np, RECORD_PARTITIONS do
        graphs[#graphs + 1] = rt:record(function()
            sweep(pair[1], pair[2], p0, math.min(np, p0 + RECORD_PARTITIONS - 1))
        end)
    end
end

local residual = 0.0
local function run()
    for i, p in ipairs(parts) do
        ks.jacobi_init(C.stencil_geometry(p[2], n), B)(u_own[i], p[1], p[2], n)
    end
    for _ = 1, sweeps // 2 do
        for _, g in ipairs(graphs) do
            g()
        end
    end
    for i, p in ipairs(parts) do
        local count = p[2] * n
        ks.jacobi_residual(C.grid_reduce(count), B)(partial_rows[i], u_own[i], v_own[i], count)
    end
    residual = 0.0
    for i = 1, np do
        for _, x in ipairs(partial_rows[i]:to_table()) do -- waits for this partition only
            residual = residual + x
        end
    end
end

local times = C.time_runs(a, clock.now, function() end, run)
-- The checked rows (workloads/jacobi.py check_rows), one row view read each, then the residual.
local s = n // 16
local rows = {0, 1}
for k = 1, 15 do
    rows[#rows + 1] = k * s - 1
    rows[#rows + 1] = k * s
end
rows[#rows + 1], rows[#rows + 2] = n - 2, n - 1
local values = {}
for k, r in ipairs(rows) do
    values[k] = u:slice(r + 1, r + 1):to_table()
end
local total = #rows * n
C.write_sample(a, total + 1, function(i)
    if i == total then
        return residual
    end
    return values[i // n + 1][i % n + 1]
end)
C.print_json("jacobi", a, #rt:devices(), times)
rt:close()

-- pgb_common.lua: what the Lua benchmark versions share, as workloads/common.py: the command
-- line, kernel files with their includes pasted in and their "polygpu:" signatures, the launch
-- geometry, partitions, the timing loop, the sample file and the JSON line.
local M = {}

M.BLOCK = 256

-- --key value pairs: devices, policy, n, partitions, warmup, runs, sample-stride, sample-out,
-- kernels (the kernels folder), iterations (JACOBI's sweeps).
function M.parse_args(argv)
    local a = {devices = "auto", policy = "minmax-transfer-time", partitions = 16, warmup = 3,
               runs = 10, ["sample-stride"] = 1}
    local i = 1
    while i <= #argv do
        local k, v = argv[i]:match("^%-%-(.+)$"), argv[i + 1]
        if not k or v == nil then
            error("usage: lua5.4 <bench>.lua --n N [--devices D] [--policy P] [--partitions P] " ..
                  "[--warmup W] [--runs R] [--sample-stride S] [--sample-out FILE] " ..
                  "[--kernels DIR] [--iterations I]")
        end
        a[k] = tonumber(v) and math.tointeger(tonumber(v)) or v
        i = i + 2
    end
    assert(a.n, "--n is required")
    return a
end

local function read_file(path)
    local f = assert(io.open(path, "rb"))
    local s = f:read("a")
    f:close()
    return s
end

-- The kernel file with each local #include "file" replaced by that file, each pasted once.
function M.kernel_source(dir, name, seen)
    seen = seen or {}
    local fname = name:match("%.") and name or (name .. ".cu")
    seen[fname] = true
    local text = read_file(dir .. "/" .. fname)
    return (text:gsub('[ \t]*#[ \t]*include[ \t]*"([^"]+)"[ \t]*\n', function(inc)
        if seen[inc] then
            return "/* " .. inc .. ": already included */\n"
        end
        return M.kernel_source(dir, inc, seen) .. "\n"
    end))
end

-- {name = signature} from the /* polygpu: ... */ comment before each kernel.
function M.signatures(src)
    local sigs = {}
    for body, name in src:gmatch('/%*%s*polygpu:%s*(.-)%s*%*/%s*extern%s+"C"%s+__global__%s+void%s+([%w_]+)') do
        body = body:gsub("%s*\n%s*%*[ \t]?", " "):gsub("%s+", " ")
        sigs[name] = body
    end
    return sigs
end

-- Every kernel of kernels/<name>.cu compiled on rt, by name.
function M.load_kernels(rt, dir, name)
    local src = M.kernel_source(dir, name)
    local ks = {}
    for kname, sig in pairs(M.signatures(src)) do
        ks[kname] = rt:kernel(src, kname, sig)
    end
    return ks
end

local function cdiv(a, b) return (a + b - 1) // b end

function M.grid_1d(n) return math.max(1, math.min(cdiv(n, M.BLOCK), 65535)) end

function M.grid_reduce(n) return math.max(1, math.min(cdiv(n, M.BLOCK * 16), 256)) end

-- JACOBI's row kernels on rows x n (workloads/common.py stencil_geometry): {x, y} blocks.
function M.stencil_geometry(rows, n)
    return {cdiv(n, M.BLOCK), math.max(1, math.min(rows, 65535))}
end

-- {{offset, count}, ...}: ceil(n / p) per partition, the last shorter.
function M.partitions(n, p)
    local s, parts = cdiv(n, p), {}
    for i = 0, p - 1 do
        if i * s < n then
            parts[#parts + 1] = {i * s, math.min(s, n - i * s)}
        end
    end
    return parts
end

-- Warm-ups, then timed runs: prepare() untimed, run() timed (seconds, monotonic clock).
function M.time_runs(a, now, prepare, run)
    local times = {}
    for i = 1, a.warmup + a.runs do
        prepare()
        local t0 = now()
        run()
        local t1 = now()
        if i > a.warmup then
            times[#times + 1] = t1 - t0
        end
    end
    return times
end

-- The sampled outputs (value(i) for i = 0, stride, ... < total) as little-endian doubles.
function M.write_sample(a, total, value)
    if not a["sample-out"] then
        return
    end
    local f = assert(io.open(a["sample-out"], "wb"))
    local buf = {}
    for i = 0, total - 1, a["sample-stride"] do
        buf[#buf + 1] = string.pack("<d", value(i))
        if #buf == 4096 then
            f:write(table.concat(buf))
            buf = {}
        end
    end
    f:write(table.concat(buf))
    f:close()
end

function M.print_json(bench, a, ndev, times)
    local t = {}
    for i, v in ipairs(times) do
        t[i] = string.format("%.9f", v)
    end
    print(string.format('{"bench": "%s", "version": "lua", "policy": "%s", "gpus": %d, ' ..
                        '"partitions": %d, "n": %d, "times_s": [%s]}', bench, a.policy, ndev,
                        a.partitions, a.n, table.concat(t, ", ")))
end

return M

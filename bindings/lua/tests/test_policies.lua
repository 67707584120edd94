-- test_policies.lua: every device policy (and the stream policies) computes the same results.
local T = require "support"

local POLICIES = {"round-robin", "stream-aware", "min-transfer-size", "minmax-transfer-time"}
local N = 3000
local g, b = T.grid(N)

-- A small DAG: four independent fills, pairwise sums, a scale, a final sum; checks every value.
local function workload(rt)
    local k = T.kernels(rt)
    local x = {}
    for i = 1, 4 do
        x[i] = rt:array("float32", N)
        k.fill(g, b)(x[i], i * 1.0, N)
    end
    local p, q, r = rt:array("float32", N), rt:array("float32", N), rt:array("float32", N)
    k.sum2(g, b)(p, x[1], x[2], N) -- 3
    k.sum2(g, b)(q, x[3], x[4], N) -- 7
    k.scale(g, b)(q, 2.0, N) -- 14
    k.sum2(g, b)(r, p, q, N) -- 17
    k.add1(g, b)(x[1], r, N) -- 18, overwrites an input of p after p read it
    T.all(r, function() return 17.0 end, "r")
    T.all(x[1], function() return 18.0 end, "x1")
    T.all(p, function() return 3.0 end, "p")
    local y, xs = rt:array("float64", N), rt:array("float64", N)
    local t = {}
    for i = 1, N do t[i] = i * 0.5 end
    xs:from_table(t)
    y:from_table(t)
    k.axpy(g, b)(y, 3, xs, N) -- an integer scalar for a double parameter
    T.all(y, function(i) return 4 * (i * 0.5) end, "axpy")
    return rt:stats()
end

local cases = {}
for _, policy in ipairs(POLICIES) do
    cases[#cases + 1] = {"policy " .. policy, function()
        local rt <close> = T.runtime {policy = policy}
        local s = workload(rt)
        T.eq(s.kernels, 10, "kernels")
    end}
end

cases[#cases + 1] = {"round-robin spreads independent kernels over the devices", function()
    local rt <close> = T.runtime {policy = "round-robin"}
    local ndev = #rt:devices()
    local k = T.kernels(rt)
    local m = T.mark(rt)
    local arrays = {}
    for i = 1, 2 * ndev do
        arrays[i] = rt:array("float32", N)
        k.fill(g, b)(arrays[i], i * 1.0, N)
    end
    rt:sync()
    local used, count = {}, 0
    local d = T.dag(rt, m)
    for i = 1, 2 * ndev do
        local dv = d:kernel(i).device
        if not used[dv] then used[dv], count = true, count + 1 end
    end
    T.eq(count, ndev, "devices used by " .. 2 * ndev .. " independent kernels")
    for i = 1, 2 * ndev do
        T.eq(arrays[i][N], i * 1.0, "array " .. i)
    end
end}

for _, opts in ipairs {
    {stream_policy = "always-new"},
    {parent_stream_policy = "same-as-parent"},
    {parent_stream_policy = "disjoint"},
    {parent_stream_policy = "multigpu-early-disjoint"},
    {execution = "sync"},
    {prefetch = true},
    {exploration_threshold = 0.5},
} do
    local key, value = next(opts)
    cases[#cases + 1] = {("option %s=%s"):format(key, tostring(value)), function()
        opts.policy = "minmax-transfer-time"
        local rt <close> = T.runtime(opts)
        T.eq(workload(rt).kernels, 10, "kernels")
    end}
end

cases[#cases + 1] = {"a policy name is checked when the runtime is made", function()
    T.raises(function() T.runtime {policy = "fastest-please"} end, "polygpu:", "fastest-please")
    T.raises(function() T.runtime {stream_policy = "sometimes"} end, "polygpu:", "sometimes")
end}

return cases
